/* print.c: the stable text form of the IR (`tlsc --emit=ir`).
 *
 * One line per declaration or statement, two spaces of indentation per
 * nesting level, every field a golden test should hold, no pointers. Each
 * statement ends with `# line N`, the user's line it came from. Variables
 * print as %vN and tensors as %tN (their ids); names appear where they are
 * declared: tensors in the header, variables where they are assigned or
 * bound by a loop.
 */
#include "ir/ir.h"

static void indent(FILE *out, int depth) {
  for (int i = 0; i < depth; i++) fputs("  ", out);
}

static const char *space_name(MemSpace s) {
  switch (s) {
  case MS_GLOBAL:
    return "global";
  case MS_SHARED:
    return "shared";
  case MS_REGISTER:
    return "register";
  }
  return "?";
}

static const char *layout_name(LayoutKind k) {
  switch (k) {
  case LAYOUT_NONE:
    return "none";
  case LAYOUT_ROW_MAJOR:
    return "row_major";
  case LAYOUT_SWIZZLED:
    return "swizzled";
  case LAYOUT_SPATIAL:
    return "spatial";
  case LAYOUT_WGMMA_ACC:
    return "wgmma_acc";
  }
  return "?";
}

/* A C string literal with the escapes printf formats need. */
static void print_string(FILE *out, const char *s) {
  fputc('"', out);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(out, "\\%c", c);
    else if (c == '\n')
      fputs("\\n", out);
    else if (c == '\t')
      fputs("\\t", out);
    else if (c < 32 || c >= 127)
      fprintf(out, "\\x%02x", c);
    else
      fputc(c, out);
  }
  fputc('"', out);
}

static void print_exprs(FILE *out, IrExpr *const *es, int n) {
  for (int i = 0; i < n; i++) {
    if (i) fputs(", ", out);
    ir_print_expr(out, es[i]);
  }
}

static void print_ints(FILE *out, const int64_t *v, int n) {
  fputc('[', out);
  for (int i = 0; i < n; i++) fprintf(out, i ? ", %lld" : "%lld", (long long)v[i]);
  fputc(']', out);
}

static void print_tensor_ref(FILE *out, const IrTensor *t) {
  if (t)
    fprintf(out, "%%t%d", t->id);
  else
    fputs("<null>", out);
}

/* A view: %t3[%v0, 0], with .T when transposed. */
static void print_ref(FILE *out, const IrRef *r) {
  print_tensor_ref(out, r->t);
  if (r->nidx > 0) {
    fputc('[', out);
    print_exprs(out, r->idx, r->nidx);
    fputc(']', out);
  }
  if (r->transposed) fputs(".T", out);
}

/* An operand that is a register tensor when t is set, else the view r. */
static void print_tensor_or_ref(FILE *out, const IrTensor *t, const IrRef *r) {
  if (t)
    print_tensor_ref(out, t);
  else
    print_ref(out, r);
}

/* An operand that is a register tensor when t is set, else the scalar x. */
static void print_tensor_or_expr(FILE *out, const IrTensor *t, const IrExpr *x) {
  if (t)
    print_tensor_ref(out, t);
  else
    ir_print_expr(out, x);
}

static void print_offsets(FILE *out, IrExpr *const *offsets, int noffsets) {
  fputs("offsets=[", out);
  print_exprs(out, offsets, noffsets);
  fputc(']', out);
}

/* ------------------------------------------------------------ header */

/* tensor %t0 ga: global float16[m_size, k_size] ptr=a_ptr layout=row_major */
static void print_tensor(FILE *out, const IrTensor *t) {
  fprintf(out, "  tensor %%t%d %s: %s %s", t->id, t->name, space_name(t->space),
          t->is_mbarrier ? "mbarrier" : dtype_name(t->dtype));
  if (t->space == MS_GLOBAL && t->rank > 0 && t->gshape[0]) {
    fputc('[', out);
    print_exprs(out, t->gshape, t->rank);
    fputs("] ptr=", out);
    ir_print_expr(out, t->gptr);
  } else {
    print_ints(out, t->shape, t->rank);
  }
  if (t->is_mbarrier && t->mbar_counts) {
    fputs(" counts=", out);
    print_ints(out, t->mbar_counts, t->rank > 0 ? (int)t->shape[0] : 0);
  }
  if (t->space == MS_REGISTER) {
    fprintf(out, " threads=%d", t->nthreads);
    if (t->has_init) {
      IrExpr init = {.kind = X_CONST, .type = DT_FLOAT64, .fval = t->init};
      fputs(" init=", out);
      ir_print_expr(out, &init);
    }
  }
  fprintf(out, " layout=%s", layout_name(t->layout));
  if (t->layout == LAYOUT_SPATIAL && t->reg) {
    fputc('(', out);
    ir_reglayout_print(out, t->reg);
    fputc(')', out);
  }
  if (t->space == MS_SHARED && t->alias_of) fprintf(out, " alias=%%t%d", t->alias_of->id);
  if (t->space == MS_SHARED && !t->is_mbarrier) fprintf(out, " swizzle=%d", t->swizzle_bytes);
  if (t->space == MS_SHARED && t->align > 0)
    fprintf(out, " offset=%lld align=%lld", (long long)t->smem_offset, (long long)t->align);
  if (t->space == MS_SHARED && t->freed_at.line) /* free_shared() */
    fprintf(out, " freed(line %d)", t->freed_at.line);
  fprintf(out, "  # line %d\n", t->span.line);
}

static void print_param(FILE *out, const IrParam *p) {
  if (p->is_ptr)
    fprintf(out, "  param %s: ~%s%s\n", p->name, dtype_name(p->elem),
            p->workspace ? " workspace" : "");
  else
    fprintf(out, "  param %s: %s\n", p->name, dtype_name(p->type));
}

static void print_tmap(FILE *out, const IrTmap *m) {
  if (m->global)
    fprintf(out, "  tmap %d: %%t%d %s box=", m->index, m->global->id, m->global->name);
  else
    fputs("  tmap ?: <null> box=", out);
  print_ints(out, m->box, m->global ? m->global->rank : 0);
  fprintf(out, " swizzle=%d\n", m->swizzle_bytes);
}

/* --------------------------------------------------------------- body */

static void print_block(FILE *out, const IrBlock *b, int depth);

/* cp_async %t0 -> %t2[%v1], offsets=[...], then dims where the view has
 * fewer dimensions than the global tensor and the options not at their
 * defaults. */
static void print_cp_async(FILE *out, const IrCpAsyncStmt *c) {
  fputs("cp_async ", out);
  print_tensor_ref(out, c->global);
  fputs(" -> ", out);
  print_ref(out, &c->shared);
  fputs(", ", out);
  print_offsets(out, c->offsets, c->noffsets);
  int rank = c->shared.t ? ir_ref_rank(&c->shared) : 0;
  if (c->global && rank < c->global->rank) {
    int64_t dims[IR_MAX_RANK];
    for (int i = 0; i < rank && i < IR_MAX_RANK; i++) dims[i] = c->dims[i];
    fputs(", dims=", out);
    print_ints(out, dims, rank);
  }
  if (!c->check_bounds) fputs(", check_bounds=false", out);
  if (c->evict_first) fputs(", evict=evict_first", out);
}

/* `, dims=[1, 3]` when the tile runs along chosen global dimensions. */
static void print_dims(FILE *out, const IrGlobalCopyStmt *c) {
  if (c->ndims == 0) return;
  fputs(", dims=[", out);
  for (int i = 0; i < c->ndims; i++) fprintf(out, "%s%d", i ? ", " : "", c->dims[i]);
  fputc(']', out);
}

static const char *const atomic_names[] = {"add", "sub", "min", "max", "exch", "cas"};

/* ", atomic_add(relaxed, gpu) -> %old [compare %c]" of an atomic store. */
static void print_atomic(FILE *out, const IrAtomic *a) {
  if (!a) return;
  fprintf(out, ", atomic_%s(%s, %s)", atomic_names[a->op], a->sem, a->scope);
  if (a->compare) {
    fputs(" compare ", out);
    print_tensor_ref(out, a->compare);
  }
  if (a->old) {
    fputs(" -> ", out);
    print_tensor_ref(out, a->old);
  }
}

/* A scan's op as Tilus names it. */
static const char *scan_op_name(IrOp op) {
  switch (op) {
  case OP_ADD:
    return "add";
  case OP_MUL:
    return "mul";
  case OP_AND:
    return "and";
  case OP_OR:
    return "or";
  case OP_XOR:
    return "xor";
  default:
    return ir_op_name(op);
  }
}

/* The text of a statement with no nested block, without indentation. */
static void print_simple(FILE *out, const IrStmt *s) {
  switch (s->kind) {
  case S_SYNC:
    fputs("sync", out);
    break;
  case S_MBAR_WAIT:
    fputs("mbarrier.wait ", out);
    print_ref(out, &s->mbar.barrier);
    fputs(", phase=", out);
    ir_print_expr(out, s->mbar.parity);
    fprintf(out, ", sem=%s, scope=%s", mbar_sem_name(s->mbar.sem), mbar_scope_name(s->mbar.scope));
    break;
  case S_MBAR_ARRIVE:
    fputs("mbarrier.arrive ", out);
    print_ref(out, &s->mbar.barrier);
    break;
  case S_MBAR_EXPECT_TX:
    fputs("mbarrier.arrive_expect_tx ", out);
    print_ref(out, &s->mbar.barrier);
    fputs(", bytes=", out);
    ir_print_expr(out, s->mbar.tx_bytes);
    break;
  case S_TMA_LOAD:
    fputs("tma.global_to_shared ", out);
    print_tensor_ref(out, s->tma.global);
    fputs(" -> ", out);
    print_ref(out, &s->tma.shared);
    fputs(", ", out);
    print_offsets(out, s->tma.offsets, s->tma.noffsets);
    fputs(", mbarrier=", out);
    print_ref(out, &s->tma.barrier);
    if (s->tma.mcast) {
      fputs(", multicast_mask=", out);
      ir_print_expr(out, s->tma.mcast);
    }
    fprintf(out, ", tmap=%d", s->tma.tmap);
    break;
  case S_MBAR_REMOTE:
  case S_MBAR_MULTICAST:
    fputs(s->kind == S_MBAR_REMOTE ? "mbarrier.arrive_expect_tx_remote "
                                   : "mbarrier.arrive_expect_tx_multicast ",
          out);
    print_ref(out, &s->cmbar.barrier);
    fputs(", bytes=", out);
    ir_print_expr(out, s->cmbar.tx_bytes);
    fputs(s->kind == S_MBAR_REMOTE ? ", target_rank=" : ", multicast_mask=", out);
    ir_print_expr(out, s->cmbar.ctas);
    fprintf(out, ", sem=%s, scope=%s", mbar_sem_name(s->cmbar.sem),
            mbar_scope_name(s->cmbar.scope));
    break;
  case S_CLUSTER_SYNC:
    fputs("cluster.sync", out);
    break;
  case S_SETMAXNREG:
    fprintf(out, "setmaxnreg.%s %lld", s->nreg.inc ? "inc" : "dec", (long long)s->nreg.count);
    break;
  case S_TMA_STORE:
    fputs("tma.shared_to_global ", out);
    print_ref(out, &s->tma.shared);
    fputs(" -> ", out);
    print_tensor_ref(out, s->tma.global);
    fputs(", ", out);
    print_offsets(out, s->tma.offsets, s->tma.noffsets);
    fprintf(out, ", tmap=%d", s->tma.tmap);
    break;
  case S_TMA_FENCE:
    fputs(s->fence.release ? "fence.proxy_async_release" : "tma.fence_proxy_async", out);
    break;
  case S_TMA_COMMIT:
    fputs("tma.commit_group", out);
    break;
  case S_TMA_WAIT:
    fprintf(out, "tma.wait_group %lld%s", (long long)s->wait.max_pending,
            s->wait.read ? " read" : "");
    break;
  case S_CP_ASYNC:
    print_cp_async(out, &s->cpasync);
    break;
  case S_CP_COMMIT:
    fputs("cp_async.commit_group", out);
    break;
  case S_CP_WAIT:
    fprintf(out, "cp_async.wait_group %lld", (long long)s->wait.max_pending);
    break;
  case S_CP_WAIT_ALL:
    fputs("cp_async.wait_all", out);
    break;
  case S_WGMMA_FENCE:
    fputs("wgmma.fence", out);
    break;
  case S_WGMMA_MMA:
    fputs("wgmma.mma ", out);
    print_tensor_ref(out, s->wgmma.acc);
    fputs(" += ", out);
    print_tensor_or_ref(out, s->wgmma.ra, &s->wgmma.a);
    fputs(" @ ", out);
    print_ref(out, &s->wgmma.b);
    break;
  case S_WGMMA_COMMIT:
    fputs("wgmma.commit_group", out);
    break;
  case S_WGMMA_WAIT:
    fprintf(out, "wgmma.wait_group %lld", (long long)s->wait.max_pending);
    break;
  case S_FILL:
    fputs("fill ", out);
    print_tensor_ref(out, s->fill.dst);
    fputs(", ", out);
    ir_print_expr(out, s->fill.value);
    break;
  case S_CAST:
    print_tensor_ref(out, s->cast.dst);
    fprintf(out, " = cast<%s> ", s->cast.dst ? dtype_name(s->cast.dst->dtype) : "?");
    print_tensor_ref(out, s->cast.src);
    break;
  case S_SLICE:
    print_tensor_ref(out, s->slice.dst);
    fputs(" = ", out);
    print_tensor_ref(out, s->slice.src);
    fprintf(out, "[:, %lld:%lld]", (long long)s->slice.begin, (long long)s->slice.end);
    break;
  case S_ELEMWISE:
    print_tensor_ref(out, s->elemwise.dst);
    fputs(" = ", out);
    if (s->elemwise.scalar_first) {
      ir_print_expr(out, s->elemwise.scalar);
      fprintf(out, " %s ", ir_op_name(s->elemwise.op));
      print_tensor_ref(out, s->elemwise.a);
      break;
    }
    print_tensor_ref(out, s->elemwise.a);
    fprintf(out, " %s ", ir_op_name(s->elemwise.op));
    print_tensor_or_expr(out, s->elemwise.b, s->elemwise.scalar);
    break;
  case S_SEM_WAIT:
  case S_SEM_RELEASE:
    fputs(s->kind == S_SEM_WAIT ? "semaphore.wait " : "semaphore.release ", out);
    ir_print_expr(out, s->sem.addr);
    fputs(s->kind == S_SEM_WAIT ? " == " : " = ", out);
    ir_print_expr(out, s->sem.value);
    break;
  case S_CONVERT:
    print_tensor_ref(out, s->cast.dst);
    fputs(" = convert(", out);
    print_tensor_ref(out, s->cast.src);
    fputs(")", out);
    break;
  case S_VIEW:
    print_tensor_ref(out, s->cast.dst);
    fputs(" = view(", out);
    print_tensor_ref(out, s->cast.src);
    fputs(")", out);
    break;
  case S_RESHAPE:
    print_tensor_ref(out, s->cast.dst);
    fputs(" = reshape(", out);
    print_tensor_ref(out, s->cast.src);
    fputs(")", out);
    break;
  case S_TRANSPOSE:
    print_tensor_ref(out, s->cast.dst);
    fputs(" = transpose(", out);
    print_tensor_ref(out, s->cast.src);
    fputs(")", out);
    break;
  case S_DOT:
    print_tensor_ref(out, s->dot.dst);
    fputs(" = dot(", out);
    print_tensor_ref(out, s->dot.a);
    fputs(", ", out);
    print_tensor_ref(out, s->dot.b);
    if (s->dot.c) {
      fputs(", ", out);
      print_tensor_ref(out, s->dot.c);
    }
    fprintf(out, ", warps=%lldx%lld)", (long long)s->dot.warps_m, (long long)s->dot.warps_n);
    break;
  case S_WHERE:
    print_tensor_ref(out, s->where.dst);
    fputs(" = where(", out);
    print_tensor_ref(out, s->where.cond);
    fputs(", ", out);
    print_tensor_or_expr(out, s->where.a, s->where.sa);
    fputs(", ", out);
    print_tensor_or_expr(out, s->where.b, s->where.sb);
    fputs(")", out);
    break;
  case S_UNARY:
    print_tensor_ref(out, s->unary.dst);
    fprintf(out, " = %s(", ir_fn_name(s->unary.fn));
    print_tensor_ref(out, s->unary.src);
    fputs(")", out);
    break;
  case S_REDUCE:
    print_tensor_ref(out, s->reduce.dst);
    if (s->reduce.scan) {
      fprintf(out, " = scan_%s(", scan_op_name(s->reduce.op));
      print_tensor_ref(out, s->reduce.src);
      fprintf(out, ", dim=%d%s)", s->reduce.dim, s->reduce.exclusive ? ", exclusive" : "");
      break;
    }
    fprintf(out, " = reduce_%s(", s->reduce.op == OP_ADD ? "sum" : ir_op_name(s->reduce.op));
    print_tensor_ref(out, s->reduce.src);
    fprintf(out, ", dim=%d%s)", s->reduce.dim, s->reduce.keepdim ? ", keepdim" : "");
    break;
  case S_LOAD_GLOBAL:
    print_tensor_ref(out, s->gmem.reg);
    fputs(" = load_global ", out);
    print_tensor_ref(out, s->gmem.global);
    fputs(", ", out);
    print_offsets(out, s->gmem.offsets, s->gmem.noffsets);
    print_dims(out, &s->gmem);
    break;
  case S_STORE_GLOBAL:
    fputs("store_global ", out);
    print_tensor_ref(out, s->gmem.global);
    fputs(" <- ", out);
    print_tensor_ref(out, s->gmem.reg);
    print_atomic(out, s->gmem.atomic);
    if (s->gmem.scatter) {
      fputs(", scatter=", out);
      print_tensor_ref(out, s->gmem.scatter);
      fprintf(out, " dim=%d", s->gmem.scatter_dim);
      break;
    }
    fputs(", ", out);
    print_offsets(out, s->gmem.offsets, s->gmem.noffsets);
    print_dims(out, &s->gmem);
    break;
  case S_LOAD_SHARED:
    print_tensor_ref(out, s->smem.reg);
    fputs(" = load_shared ", out);
    print_ref(out, &s->smem.shared);
    break;
  case S_STORE_SHARED:
    fputs("store_shared ", out);
    print_ref(out, &s->smem.shared);
    fputs(" <- ", out);
    print_tensor_ref(out, s->smem.reg);
    print_atomic(out, s->smem.atomic);
    if (s->smem.scatter) {
      fputs(", scatter=", out);
      print_tensor_ref(out, s->smem.scatter);
      fprintf(out, " dim=%d", s->smem.scatter_dim);
    }
    break;
  case S_PRINTF:
    if (ir_is_print_tensor(s)) {
      fputs("print_tensor ", out);
      print_string(out, s->print.format);
      fputs(", ", out);
      print_tensor_or_ref(out, s->print.reg, &s->print.shared);
      if (s->print.elem) {
        fputs(", fmt=", out);
        print_string(out, s->print.elem);
      }
      break;
    }
    fputs("printf ", out);
    print_string(out, s->print.format);
    for (int i = 0; i < s->print.nargs; i++) {
      fputs(", ", out);
      ir_print_expr(out, s->print.args[i]);
    }
    break;
  default:
    fputs("<structured>", out);
    break;
  }
}

static void print_line(FILE *out, const IrStmt *s) { fprintf(out, "  # line %d\n", s->span.line); }

/* A statement, and the blocks nested in it one level deeper. */
static void print_stmt(FILE *out, const IrStmt *s, int depth) {
  indent(out, depth);
  switch (s->kind) {
  case S_ASSIGN: {
    const IrVar *v = s->assign.var;
    fprintf(out, "%%v%d %s: %s = ", v->id, v->name, dtype_name(v->type));
    ir_print_expr(out, s->assign.value);
    print_line(out, s);
    return;
  }
  case S_FOR: {
    const IrForStmt *l = &s->loop;
    IrExpr *const range[3] = {l->start, l->stop, l->step};
    fprintf(out, "for %%v%d %s: %s in range(", l->var->id, l->var->name, dtype_name(l->var->type));
    print_exprs(out, range, 3);
    fputc(')', out);
    if (l->unroll) fprintf(out, " unroll %lld", (long long)l->unroll);
    fputc(':', out);
    print_line(out, s);
    print_block(out, &s->body, depth + 1);
    return;
  }
  case S_IF:
    fputs("if ", out);
    ir_print_expr(out, s->branch.cond);
    fputc(':', out);
    print_line(out, s);
    print_block(out, &s->body, depth + 1);
    if (s->orelse.len) {
      indent(out, depth);
      fputs("else:\n", out);
      print_block(out, &s->orelse, depth + 1);
    }
    return;
  case S_THREAD_GROUP:
    fprintf(out, "thread_group [%lld, %lld):", (long long)s->group.begin,
            (long long)(s->group.begin + s->group.count));
    print_line(out, s);
    print_block(out, &s->body, depth + 1);
    return;
  case S_SINGLE_THREAD:
    fputs("single_thread:", out);
    print_line(out, s);
    print_block(out, &s->body, depth + 1);
    return;
  default:
    print_simple(out, s);
    print_line(out, s);
    return;
  }
}

static void print_block(FILE *out, const IrBlock *b, int depth) {
  if (b->len == 0) {
    indent(out, depth);
    fputs("pass\n", out);
  }
  for (int i = 0; i < b->len; i++) print_stmt(out, b->items[i], depth);
}

/* A message in double quotes, with \" \\ and control characters escaped,
 * so that a requirement stays on one line. */
static void print_quoted(FILE *out, const char *s) {
  fputc('"', out);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(out, "\\%c", c);
    else if (c < 0x20 || c == 0x7f)
      fprintf(out, "\\x%02x", c);
    else
      fputc(c, out);
  }
  fputc('"', out);
}

/* require COND "MESSAGE"  # line N: a static_assert() on `int` parameters
 * that the runtime checks at launch. */
static void print_require(FILE *out, const IrRequire *r) {
  fputs("  require ", out);
  ir_print_expr(out, r->cond);
  fputc(' ', out);
  print_quoted(out, r->msg ? r->msg : "");
  fprintf(out, "  # line %d\n", r->span.line);
}

/* workspace %t3 __ws0: int32[(m + 127) / 128, 4] clean  # line N: a
 * global_tensor() that the runtime allocates for each launch. */
static void print_workspace(FILE *out, const IrWorkspace *w) {
  const IrTensor *t = w->tensor;
  fprintf(out, "  workspace %s: %%t%d %s %s[", w->param->name, t->id, t->name,
          dtype_name(t->dtype));
  print_exprs(out, t->gshape, t->rank);
  fprintf(out, "]%s  # line %d\n", w->clean ? " clean" : "", t->span.line);
}

static void print_kernel(FILE *out, const IrKernel *k) {
  fprintf(out, "kernel %s script=%s config(", k->name, k->script ? k->script : k->name);
  for (int i = 0; i < k->nconfig; i++) {
    fprintf(out, "%s%s=", i ? ", " : "", k->config_names[i]);
    if (k->config_texts && k->config_texts[i])
      fputs(k->config_texts[i], out);
    else
      fprintf(out, "%lld", (long long)k->config_values[i]);
  }
  fputs(")\n", out);
  for (int i = 0; i < k->nparams; i++) print_param(out, k->params[i]);
  fputs("  grid = ", out);
  print_exprs(out, k->grid, 3);
  fprintf(out, "\n  warps = %d\n", k->warps);
  if (ir_cluster_size(k) > 1)
    fprintf(out, "  cluster_blocks = %lld, %lld, %lld\n", (long long)k->cluster[0],
            (long long)k->cluster[1], (long long)k->cluster[2]);
  for (int i = 0; i < k->nreqs; i++) print_require(out, &k->reqs[i]);
  for (int i = 0; i < k->nws; i++) print_workspace(out, &k->ws[i]);
  for (int i = 0; i < k->ntensors; i++) print_tensor(out, k->tensors[i]);
  for (int i = 0; i < k->ntmaps; i++) print_tmap(out, k->tmaps[i]);
  fprintf(out, "  smem = %lld\n", (long long)k->smem_bytes);
  fputs("  body:\n", out);
  print_block(out, &k->body, 2);
}

void ir_print(FILE *out, const IrModule *m) {
  for (int i = 0; i < m->nkernels; i++) {
    if (i) fputc('\n', out);
    print_kernel(out, m->kernels[i]);
  }
}
