/* emit_stmt.c: statements and control flow: assignments, loops, branches,
 * thread groups, single-thread regions, block and group barriers. The tile
 * statements are dispatched to emit_async.c, emit_wgmma.c and emit_regtile.c.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "backend_ptx/emit_int.h"

static void emit_stmt(Emitter *e, const IrStmt *s);

static bool groups_overlap(const IrStmt *a, const IrStmt *b) {
  return a->group.begin < b->group.begin + b->group.count &&
         b->group.begin < a->group.begin + a->group.count;
}

/* The end of the run of thread groups from b->items[i] on whose threads
 * are pairwise disjoint (a producer group and its consumer groups). */
static int disjoint_groups_end(const IrBlock *b, int i) {
  int j = i;
  while (j < b->len && b->items[j]->kind == S_THREAD_GROUP) {
    for (int k = i; k < j; k++)
      if (groups_overlap(b->items[k], b->items[j])) return j;
    j++;
  }
  return j;
}

/* A run of disjoint thread groups is emitted as an if / else-if chain:
 * each group, when done, jumps past the others, which its threads would
 * skip one test at a time. The result is the same; what changes is what
 * ptxas sees. Where one group's end flowed into the next group's tests,
 * ptxas merged the paths of warps that had run setmaxnreg.inc with warps
 * that had not, and compiled the later consumer group apart from the
 * first: its WGMMA descriptors computed in vector registers and moved to
 * uniform ones four R2UR to an instruction (V7's second consumer group:
 * 366 instructions a 4-step K loop against the first group's 243). */
void emit_block(Emitter *e, const IrBlock *b) {
  int run_end = -1, run_label = -1;
  for (int i = 0; i < b->len && !e->failed; i++) {
    e->prev = i ? b->items[i - 1] : NULL;
    e->prev2 = i > 1 ? b->items[i - 2] : NULL;
    e->cur = b->items[i];
    if (e->ivs && b == &e->ivs->loop->body) e->ivs->at = i;
    if (e->words.stmt == e->cur) e->words.stmt = NULL; /* emitted again (the body's copies) */
    if (b->items[i]->kind == S_THREAD_GROUP && i >= run_end) {
      run_end = disjoint_groups_end(b, i);
      run_label = run_end - i > 1 ? new_label(e) : -1;
    }
    e->group_exit = i + 1 < run_end ? run_label : -1;
    emit_stmt(e, b->items[i]);
    if (i + 1 == run_end && run_label >= 0) emit_label(e, run_label);
  }
  e->group_exit = -1;
  e->prev = e->prev2 = e->cur = NULL;
}

/* var = value */
static void emit_assign(Emitter *e, const IrStmt *s) {
  Val dst = var_reg(s->assign.var);
  Val v = val_convert(e, emit_expr(e, s->assign.value), dst.type);
  emit_effect(e, "mov%s %s, %s;", ptx_btype(dst.type), dst.s, v.s);
}

/* The loop's body, its variable's range narrowed to the values it takes
 * there (ir_enter_loop_body: what lets a bounds test of `offset_k + 31 <
 * k_size` fold in a loop over range(0, k_size, 32)). */
static void emit_loop_body(Emitter *e, const IrStmt *s) {
  IrRange saved = ir_enter_loop_body(s, e->ranges);
  const IrStmt *outer = e->loop;
  e->loop = s;
  emit_block(e, &s->body);
  e->loop = outer;
  e->ranges->vars[s->loop.var->id] = saved;
}

/* The body of a rotated loop, from its top label to the step of its
 * variable. The body is emitted into a buffer of its own, so that what
 * its copies ask to be computed before the loop (LoopIvs.pre: the first
 * values of strength-reduced addresses) can go in front of it; each such
 * address advances after the variable. */
static void emit_rotated_body(Emitter *e, const IrStmt *s, int top, int64_t step) {
  Val var = var_reg(s->loop.var);
  char *pre_text = NULL, *body_text = NULL;
  size_t pre_len = 0, body_len = 0;
  LoopIvs ivs = {.loop = s, .pre = open_memstream(&pre_text, &pre_len)}, *outer = e->ivs;
  FILE *out = e->out;
  e->out = open_memstream(&body_text, &body_len);
  e->ivs = &ivs;
  emit_label(e, top);
  emit_loop_body(e, s);
  emit_loc(e, s->span); /* back at the loop's line after the body */
  emit(e, "add%s %s, %s, %s;", ptx_type(var.type), var.s, var.s, val_imm(var.type, step).s);
  for (int i = 0; i < ivs.n; i++)
    emit(e, "add.s64 %s, %s, %" PRId64 ";", ivs.iv[i].reg.s, ivs.iv[i].reg.s,
         ivs.iv[i].stride * step);
  e->ivs = outer;
  fclose(e->out);
  fclose(ivs.pre);
  e->out = out;
  fputs(pre_text, out);
  fputs(body_text, out);
  free(pre_text);
  free(body_text);
  free(ivs.iv);
}

/* for var in range(start, stop, step) unroll U. stop is evaluated once
 * (Python's range); the step must be a compile-time constant so the test's
 * direction is known. A loop run once per trip (the IR's unroll pass has
 * rewritten the unrolled loops it can) is rotated: one test before it,
 * then the body and the test at its bottom, a single branch per trip. A
 * loop still marked unroll U > 1 repeats its body U times per trip, each
 * copy preceded by the exit test, so any run-time trip count is right. */
static void emit_for(Emitter *e, const IrStmt *s) {
  const IrForStmt *l = &s->loop;
  int64_t step;
  if (!ir_is_const(l->step, &step) || step == 0) {
    unsupported(e, "a range() step that is not a non-zero compile-time constant");
    return;
  }
  Val var = var_reg(l->var);
  Val start = val_convert(e, emit_expr(e, l->start), var.type);
  emit(e, "mov%s %s, %s;", ptx_btype(var.type), var.s, start.s);
  Val stop = val_to_reg(e, val_convert(e, emit_expr(e, l->stop), var.type));
  int top = new_label(e), end = new_label(e);
  const char *exit_cmp = step > 0 ? "ge" : "le", *stay_cmp = step > 0 ? "lt" : "gt";
  if (l->unroll <= 1) {
    Val done = new_reg(e, DT_BOOL);
    emit(e, "setp.%s%s %s, %s, %s;", exit_cmp, ptx_type(var.type), done.s, var.s, stop.s);
    emit(e, "@%s bra $L%d;", done.s, end);
    emit_rotated_body(e, s, top, step);
    Val more = new_reg(e, DT_BOOL);
    emit(e, "setp.%s%s %s, %s, %s;", stay_cmp, ptx_type(var.type), more.s, var.s, stop.s);
    emit(e, "@%s bra $L%d;", more.s, top);
    emit_label(e, end);
    return;
  }
  int copies = (int)l->unroll;
  emit_label(e, top);
  for (int u = 0; u < copies && !e->failed; u++) {
    emit_loc(e, s->span); /* back at the loop's line after the body */
    Val done = new_reg(e, DT_BOOL);
    emit(e, "setp.%s%s %s, %s, %s;", exit_cmp, ptx_type(var.type), done.s, var.s, stop.s);
    emit(e, "@%s bra $L%d;", done.s, end);
    emit_loop_body(e, s);
    emit_loc(e, s->span); /* back at the loop's line after the body */
    emit(e, "add%s %s, %s, %s;", ptx_type(var.type), var.s, var.s, val_imm(var.type, step).s);
  }
  emit(e, "bra $L%d;", top);
  emit_label(e, end);
}

/* if cond: body else: orelse */
static void emit_if(Emitter *e, const IrStmt *s) {
  Val c = val_convert(e, emit_expr(e, s->branch.cond), DT_BOOL);
  int other = new_label(e), end = new_label(e);
  emit(e, "@!%s bra $L%d;", c.s, other);
  emit_block(e, &s->body);
  if (s->orelse.len) {
    emit(e, "bra $L%d;", end);
    emit_label(e, other);
    emit_block(e, &s->orelse);
    emit_label(e, end);
  } else {
    emit_label(e, other);
  }
}

/* Branches to label unless begin <= index < end, testing `reg` (a thread
 * or warp index); tests that always hold are left out. uni marks a
 * warp-uniform test (bra.uni). */
static void branch_outside(Emitter *e, const char *reg, int64_t begin, int64_t end, int64_t all,
                           int label, bool uni) {
  if (begin > 0) {
    Val p = new_reg(e, DT_BOOL);
    emit(e, "setp.lt.u32 %s, %s, %" PRId64 ";", p.s, reg, begin);
    emit(e, "@%s bra%s $L%d;", p.s, uni ? ".uni" : "", label);
  }
  if (end < all) {
    Val p = new_reg(e, DT_BOOL);
    emit(e, "setp.ge.u32 %s, %s, %" PRId64 ";", p.s, reg, end);
    emit(e, "@%s bra%s $L%d;", p.s, uni ? ".uni" : "", label);
  }
}

/* Threads [begin, begin + count) of the enclosing group. Groups made of
 * whole warps test the (warp-uniform) warp index, so the branch does not
 * diverge. */
static void emit_thread_group(Emitter *e, const IrStmt *s) {
  Group outer = e->group;
  const IrGroupStmt *tg = &s->group;
  if (outer.single) {
    unsupported(e, "thread_group() inside single_thread()");
    return;
  }
  if (tg->begin < 0 || tg->count <= 0 || tg->begin + tg->count > outer.size) {
    unsupported(e, "thread group [%" PRId64 ", %" PRId64 ") outside its %" PRId64 "-thread parent",
                tg->begin, tg->begin + tg->count, outer.size);
    return;
  }
  int64_t begin = outer.begin + tg->begin, end = begin + tg->count, all = (int64_t)e->k->warps * 32;
  bool whole_warps = begin % 32 == 0 && end % 32 == 0;
  int done = e->group_exit, skip = new_label(e);
  if (whole_warps)
    branch_outside(e, "%warp", begin / 32, end / 32, all / 32, skip, true);
  else
    branch_outside(e, "%tidx", begin, end, all, skip, false);
  e->group = (Group){.begin = begin, .size = tg->count, .single = false};
  emit_block(e, &s->body);
  e->group = outer;
  if (done >= 0) emit(e, "bra%s $L%d;", whole_warps ? ".uni" : "", done);
  emit_label(e, skip);
}

/* The predicate of the one thread that runs a single-thread region: in a
 * group of whole warps, lane elect.sync picks in the group's first warp
 * (the warp test is uniform; every warp runs elect.sync, converged);
 * otherwise the group's first thread. */
static Val one_thread_pred(Emitter *e) {
  Group g = e->group;
  Val p = new_reg(e, DT_BOOL);
  if (g.begin % 32 == 0 && g.size % 32 == 0) {
    emit(e, "elect.sync _|%s, -1;", p.s);
    if (g.size > 32) {
      Val w = new_reg(e, DT_BOOL);
      emit(e, "setp.eq.u32 %s, %%warp, %" PRId64 ";", w.s, g.begin / 32);
      emit(e, "and.pred %s, %s, %s;", p.s, p.s, w.s);
    }
  } else {
    emit(e, "setp.eq.u32 %s, %%tidx, %" PRId64 ";", p.s, g.begin);
  }
  return p;
}

/* Exactly one thread of the current group runs body: groups of whole warps
 * keep their first warp (a uniform test) and elect one lane in it with
 * elect.sync; other groups keep their first thread. A predicable body is
 * emitted for every thread with its side effects under that predicate (no
 * branch: an arrive is one predicated SYNCS.ARRIVE in SASS); another is
 * branched around. Inside a single-thread region the body runs as it is. */
void emit_one_thread(Emitter *e, void (*body)(Emitter *, const void *), const void *arg,
                     bool predicable) {
  Group g = e->group;
  if (g.single) {
    body(e, arg);
    return;
  }
  if (predicable) {
    Val p = one_thread_pred(e);
    char guard[sizeof p.s];
    snprintf(guard, sizeof guard, "%s", p.s);
    e->guard = guard;
    e->group.single = true;
    body(e, arg);
    e->group = g;
    e->guard = NULL;
    return;
  }
  int skip = new_label(e);
  if (g.begin % 32 == 0 && g.size % 32 == 0) {
    if (g.size > 32)
      branch_outside(e, "%warp", g.begin / 32, g.begin / 32 + 1, (int64_t)e->k->warps, skip, true);
    Val p = new_reg(e, DT_BOOL);
    emit(e, "elect.sync _|%s, -1;", p.s);
    emit(e, "@!%s bra $L%d;", p.s, skip);
  } else {
    branch_outside(e, "%tidx", g.begin, g.begin + 1, (int64_t)e->k->warps * 32, skip, false);
  }
  e->group.single = true;
  body(e, arg);
  e->group = g;
  emit_label(e, skip);
}

/* Whether a single_thread() body can run predicated: a few statements,
 * each of which computes into fresh registers and ends in one instruction
 * with a side effect (an assignment's mov, an mbarrier arrive, a bulk-group
 * fence, commit or wait, a semaphore's release store). A TMA copy is
 * branched around instead: under a per-thread predicate ptxas computes its
 * tensor-map address and coordinates in vector registers in every warp and
 * moves them to uniform ones (R2UR) on each trip; behind the branch the one
 * thread computes them in uniform registers (V1's K loop: 63 -> 50 SASS
 * instructions, and three of its four warps skip the copy's code). */
static bool predicable(const IrBlock *b) {
  if (b->len == 0 || b->len > 4) return false;
  for (int i = 0; i < b->len; i++) {
    switch (b->items[i]->kind) {
    case S_ASSIGN:
    case S_MBAR_ARRIVE:
    case S_MBAR_EXPECT_TX:
    case S_MBAR_REMOTE:
    case S_TMA_FENCE:
    case S_TMA_COMMIT:
    case S_TMA_WAIT:
    case S_SEM_RELEASE:
      break;
    default:
      return false;
    }
  }
  return true;
}

static void block_body(Emitter *e, const void *block) { emit_block(e, block); }

/* sync(): bar.sync 0 over the whole block; inside a thread group, the
 * named barrier the statement was given (barriers.c) over the group's
 * thread count (bar.sync counts whole warps, so the group must be made of
 * them: the verifier checks it). A single thread cannot complete a
 * barrier: refused. */
bool emit_barrier(Emitter *e, int id, const char *what) {
  Group g = e->group;
  if (g.single || g.begin % 32 != 0 || g.size % 32 != 0) {
    unsupported(e, "%s inside single_thread() or a thread group that is not whole warps", what);
    return false;
  }
  bool whole = g.begin == 0 && g.size == (int64_t)e->k->warps * 32;
  if (whole ? id != 0 : id < 1 || id > IR_MAX_NAMED_BARRIERS) {
    unsupported(e,
                "%s on barrier %d, not one of its thread group (barrier assignment did not run?)",
                what, id);
    return false;
  }
  if (whole)
    emit(e, "bar.sync 0;");
  else
    emit(e, "bar.sync %d, %" PRId64 ";", id, g.size);
  return true;
}

/* lock_semaphore (run by one thread, which the evaluator makes sure of):
 * read the int32 at the address with acquire semantics at GPU scope until
 * it equals the value; the group's sync() that follows (from the
 * evaluator) passes the acquired view on to the other threads, as Tilus's
 * emitter and CUTLASS's Semaphore do. */
static void emit_sem_wait(Emitter *e, const IrStmt *s) {
  if (e->guard) {
    unsupported(e, "lock_semaphore() in a predicated single-thread region");
    return;
  }
  Val addr = val_to_reg(e, val_convert(e, emit_expr(e, s->sem.addr), DT_UINT64));
  Val want = val_to_reg(e, val_convert(e, emit_expr(e, s->sem.value), DT_INT32));
  Val got = new_reg(e, DT_INT32), differs = new_reg(e, DT_BOOL);
  int top = new_label(e);
  emit_label(e, top);
  emit(e, "ld.acquire.gpu.global.b32 %s, [%s];", got.s, addr.s);
  emit(e, "setp.ne.s32 %s, %s, %s;", differs.s, got.s, want.s);
  emit(e, "@%s bra $L%d;", differs.s, top);
}

/* release_semaphore (one thread; after the group's sync(), which the
 * script writes, as in Tilus): the value with release semantics at GPU
 * scope, so a block that acquires it sees what this block wrote before. */
static void emit_sem_release(Emitter *e, const IrStmt *s) {
  Val addr = val_to_reg(e, val_convert(e, emit_expr(e, s->sem.addr), DT_UINT64));
  Val v = val_to_reg(e, val_convert(e, emit_expr(e, s->sem.value), DT_INT32));
  emit_effect(e, "st.release.gpu.global.b32 [%s], %s;", addr.s, v.s);
}

static void emit_sync(Emitter *e, const IrStmt *s) {
  emit_barrier(e, s->sync.barrier_id, "sync()");
}

static void emit_stmt(Emitter *e, const IrStmt *s) {
  emit_loc(e, s->span);
  switch (s->kind) {
  case S_ASSIGN:
    emit_assign(e, s);
    break;
  case S_FOR:
    emit_for(e, s);
    break;
  case S_IF:
    emit_if(e, s);
    break;
  case S_THREAD_GROUP:
    emit_thread_group(e, s);
    break;
  case S_SINGLE_THREAD:
    emit_one_thread(e, block_body, &s->body, predicable(&s->body));
    break;
  case S_SYNC:
    emit_sync(e, s);
    break;
  case S_MBAR_WAIT:
  case S_MBAR_ARRIVE:
  case S_MBAR_EXPECT_TX:
  case S_MBAR_REMOTE:
  case S_MBAR_MULTICAST:
    emit_mbar_stmt(e, s);
    break;
  case S_CLUSTER_SYNC: /* every thread of the cluster; release/acquire */
    if (e->group.single || e->group.begin % 32 != 0 || e->group.size % 32 != 0) {
      unsupported(e, "cluster.sync() inside single_thread() or a group that is not whole warps");
      break;
    }
    emit(e, "barrier.cluster.arrive.release.aligned;");
    emit(e, "barrier.cluster.wait.acquire.aligned;");
    break;
  case S_SETMAXNREG: /* the whole warp group (checked by ir_check) */
    emit(e, "setmaxnreg.%s.sync.aligned.u32 %" PRId64 ";", s->nreg.inc ? "inc" : "dec",
         s->nreg.count);
    break;
  case S_TMA_LOAD:
  case S_TMA_STORE:
  case S_TMA_FENCE:
  case S_TMA_COMMIT:
  case S_TMA_WAIT:
    emit_tma_stmt(e, s);
    break;
  case S_CP_ASYNC:
  case S_CP_COMMIT:
  case S_CP_WAIT:
  case S_CP_WAIT_ALL:
    emit_cpasync_stmt(e, s);
    break;
  case S_WGMMA_FENCE:
  case S_WGMMA_MMA:
  case S_WGMMA_COMMIT:
  case S_WGMMA_WAIT:
    emit_wgmma_stmt(e, s);
    break;
  case S_FILL:
  case S_CAST:
  case S_ELEMWISE:
  case S_UNARY:
  case S_REDUCE:
  case S_WHERE:
  case S_DOT:
  case S_TRANSPOSE:
  case S_RESHAPE:
  case S_CONVERT:
  case S_VIEW:
  case S_LOAD_GLOBAL:
  case S_STORE_GLOBAL:
  case S_LOAD_SHARED:
  case S_STORE_SHARED:
  case S_SLICE:
    emit_regtile_stmt(e, s);
    break;
  case S_PRINTF:
    emit_printf(e, s);
    break;
  case S_SEM_WAIT:
    emit_sem_wait(e, s);
    break;
  case S_SEM_RELEASE:
    emit_sem_release(e, s);
    break;
  }
}
