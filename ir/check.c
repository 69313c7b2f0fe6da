/* check.c: structural checks of the IR, run between passes.
 *
 * They catch evaluator and pass bugs before the backend sees them, and user
 * programs the evaluator let through: operands in the wrong memory space,
 * shapes that do not agree, expressions of the wrong type, variables read
 * before any assignment, thread groups outside their parent, WGMMA outside
 * an aligned warp group. Errors are reported at the statement's span.
 *
 * The verifier runs before and after layout inference and after shared
 * memory planning; it sees which passes ran from the IR itself: once any
 * non-global tensor has a layout, every one must have one (and every TMA
 * statement a tensor map); once any shared tensor has an alignment, every
 * shared tensor must have one.
 */
#include "ir/ir.h"

#include <stdlib.h>
#include <string.h>

typedef struct Verifier {
  IrKernel *k;
  Diag *d;
  Arena *ar;
  bool layouts_done;
  bool planned;
  /* the thread group of each named barrier that a sync() uses, by id:
   * [begin, begin + size), size 0 while unused */
  int64_t barrier_begin[IR_MAX_NAMED_BARRIERS + 1], barrier_size[IR_MAX_NAMED_BARRIERS + 1];
  /* setmaxnreg: the largest count each warp group asks for (0: none) and
   * the first statement that asks it */
  int64_t nreg[8];
  const IrStmt *nreg_at[8];
} Verifier;

/* The threads a statement runs on: [begin, begin + size) of the block. */
typedef struct Region {
  int64_t begin, size;
  bool single; /* inside single_thread() */
} Region;

static bool is_int(DType t) {
  return t == DT_INT32 || t == DT_UINT32 || t == DT_INT64 || t == DT_UINT64 || t == DT_INT8 ||
         t == DT_UINT8 || t == DT_INT16 || t == DT_UINT16;
}

static bool is_numeric(DType t) { return is_int(t) || dtype_is_float(t); }

/* ---------------------------------------------------------- expressions */

static bool check_expr(Verifier *v, const IrExpr *e, const bool *assigned, Span sp);

/* The operand types an operator accepts, given both operand types. */
static bool binary_types_ok(const IrExpr *e) {
  DType a = e->a->type, b = e->b->type;
  switch (e->op) {
  case OP_LAND:
  case OP_LOR:
    return a == DT_BOOL && b == DT_BOOL && e->type == DT_BOOL;
  case OP_SHL:
  case OP_SHR:
    return is_int(a) && is_int(b) && e->type == a;
  case OP_AND:
  case OP_OR:
  case OP_XOR:
    return is_int(a) && a == b && e->type == a;
  case OP_MOD:
    return is_int(a) && a == b && e->type == a;
  case OP_EQ:
  case OP_NE:
  case OP_LT:
  case OP_LE:
  case OP_GT:
  case OP_GE:
    return a == b && e->type == DT_BOOL && (is_numeric(a) || a == DT_BOOL);
  case OP_ADD:
  case OP_SUB:
  case OP_MUL:
  case OP_DIV:
  case OP_MIN:
  case OP_MAX:
    return is_numeric(a) && a == b && e->type == a;
  default:
    return false;
  }
}

static bool unary_types_ok(const IrExpr *e) {
  DType a = e->a->type;
  switch (e->op) {
  case OP_LNOT:
    return a == DT_BOOL && e->type == DT_BOOL;
  case OP_NEG:
    return is_numeric(a) && e->type == a;
  case OP_BNOT:
    return is_int(a) && e->type == a;
  default:
    return false;
  }
}

static bool var_belongs(const Verifier *v, const IrVar *var) {
  return var && var->id >= 0 && var->id < v->k->nvars && v->k->vars[var->id] == var;
}

static bool param_belongs(const Verifier *v, const IrParam *p) {
  return p && p->index >= 0 && p->index < v->k->nparams && v->k->params[p->index] == p;
}

/* A variable reference: declared in this kernel and assigned on every
 * structured path that reaches it. assigned == NULL skips that check. */
static bool check_var(Verifier *v, const IrExpr *e, const bool *assigned, Span sp) {
  if (!var_belongs(v, e->var) || e->type != e->var->type) {
    diag_error(v->d, sp, "internal error: bad variable reference in the IR");
    return false;
  }
  if (assigned && !assigned[e->var->id]) {
    diag_error(v->d, sp, "'%s' may be used before it is assigned", e->var->name);
    return false;
  }
  return true;
}

/* Types of every node agree with its operator; leaves belong to the kernel.
 */
static bool check_expr(Verifier *v, const IrExpr *e, const bool *assigned, Span sp) {
  if (!e) {
    diag_error(v->d, sp, "internal error: missing expression in the IR");
    return false;
  }
  switch (e->kind) {
  case X_CONST:
    if (e->type != DT_VOID) return true;
    break;
  case X_VAR:
    return check_var(v, e, assigned, sp);
  case X_PARAM:
    if (param_belongs(v, e->param)) return true;
    break;
  case X_SPECIAL:
  case X_INDEX: /* the emitter and the checker of S_FILL give it meaning */
    return true;
  case X_UNARY:
    if (!check_expr(v, e->a, assigned, sp)) return false;
    if (unary_types_ok(e)) return true;
    break;
  case X_BINARY:
    if (!check_expr(v, e->a, assigned, sp) || !check_expr(v, e->b, assigned, sp)) return false;
    if (binary_types_ok(e)) return true;
    diag_error(v->d, sp, "operator '%s' cannot take %s and %s", ir_op_name(e->op),
               dtype_name(e->a->type), dtype_name(e->b->type));
    return false;
  case X_SELECT:
    if (!check_expr(v, e->a, assigned, sp) || !check_expr(v, e->b, assigned, sp) ||
        !check_expr(v, e->c, assigned, sp))
      return false;
    if (e->a->type == DT_BOOL && e->b->type == e->type && e->c->type == e->type) return true;
    break;
  case X_CAST:
    if (!check_expr(v, e->a, assigned, sp)) return false;
    if (e->a->type != DT_VOID && e->type != DT_VOID) return true;
    break;
  case X_LOAD:
    if (!check_expr(v, e->a, assigned, sp)) return false;
    if (e->a->type == DT_UINT64) return true;
    break;
  case X_MATH:
    if (!check_expr(v, e->a, assigned, sp)) return false;
    if (e->a->type == DT_FLOAT32 && e->type == DT_FLOAT32) return true;
    break;
  }
  diag_error(v->d, sp, "internal error: ill-typed %s expression in the IR", dtype_name(e->type));
  return false;
}

/* An expression that must have an integer type (an index, an offset). */
static bool check_int_expr(Verifier *v, const IrExpr *e, const bool *assigned, Span sp,
                           const char *what) {
  if (!check_expr(v, e, assigned, sp)) return false;
  if (is_int(e->type)) return true;
  diag_error(v->d, sp, "%s must be an integer, not %s", what, dtype_name(e->type));
  return false;
}

static bool check_cond(Verifier *v, const IrExpr *e, const bool *assigned, Span sp) {
  if (!check_expr(v, e, assigned, sp)) return false;
  if (e->type == DT_BOOL) return true;
  diag_error(v->d, sp, "condition must be bool, not %s", dtype_name(e->type));
  return false;
}

/* The launch grid: integers over parameters and constants only, since the
 * runtime evaluates it on the host. */
static bool grid_only_params(const IrExpr *e) {
  if (!e) return true;
  if (e->kind == X_VAR || e->kind == X_SPECIAL) return false;
  return grid_only_params(e->a) && grid_only_params(e->b) && grid_only_params(e->c);
}

/* -------------------------------------------------------------- tensors */

static bool tensor_belongs(const Verifier *v, const IrTensor *t) {
  return t && t->id >= 0 && t->id < v->k->ntensors && v->k->tensors[t->id] == t;
}

/* A tensor operand in the given space (mbarrier arrays are never data). */
static bool check_tensor(Verifier *v, const IrTensor *t, MemSpace space, Span sp,
                         const char *what) {
  static const char *spaces[] = {"global", "shared", "register"};
  if (!tensor_belongs(v, t)) {
    diag_error(v->d, sp, "internal error: %s is not a tensor of this kernel", what);
    return false;
  }
  if (t->space != space || t->is_mbarrier) {
    diag_error(v->d, sp, "%s must be a %s tensor, but '%s' is a %s %s", what, spaces[space],
               t->name, spaces[t->space], t->is_mbarrier ? "mbarrier array" : "tensor");
    return false;
  }
  return true;
}

/* A view: indices in range where constant, integer-typed, a transpose only
 * of a view with at least two dimensions. */
static bool check_ref(Verifier *v, const IrRef *r, const bool *assigned, Span sp) {
  if (!tensor_belongs(v, r->t) || r->nidx < 0 || r->nidx > r->t->rank) {
    diag_error(v->d, sp, "internal error: bad tensor view in the IR");
    return false;
  }
  for (int i = 0; i < r->nidx; i++) {
    int64_t c;
    if (!check_int_expr(v, r->idx[i], assigned, sp, "a tensor index")) return false;
    if (ir_is_const(r->idx[i], &c) && (c < 0 || c >= r->t->shape[i])) {
      diag_error(v->d, sp,
                 "index %lld is out of range for dimension %d of "
                 "'%s' (size %lld)",
                 (long long)c, i, r->t->name, (long long)r->t->shape[i]);
      return false;
    }
  }
  if (r->transposed && ir_ref_rank(r) < 2) {
    diag_error(v->d, sp, "transpose() needs a view of at least 2 dimensions");
    return false;
  }
  return true;
}

/* A view of data in shared memory. */
static bool check_shared_view(Verifier *v, const IrRef *r, const bool *assigned, Span sp,
                              const char *what) {
  return check_ref(v, r, assigned, sp) && check_tensor(v, r->t, MS_SHARED, sp, what);
}

/* A view that selects one mbarrier: barriers[i]. */
static bool check_barrier(Verifier *v, const IrRef *r, const bool *assigned, Span sp) {
  if (!check_ref(v, r, assigned, sp)) return false;
  if (!r->t->is_mbarrier || ir_ref_rank(r) != 0) {
    diag_error(v->d, sp,
               "expected one mbarrier (barriers[i]), got a view of "
               "'%s'",
               r->t->name);
    return false;
  }
  return true;
}

/* Offsets into a global tensor: one integer per dimension. */
static bool check_offsets(Verifier *v, Span sp, IrExpr *const *offsets, int noffsets,
                          const IrTensor *g, const bool *assigned) {
  if (noffsets != g->rank || (noffsets > 0 && !offsets)) {
    diag_error(v->d, sp, "expected %d offsets for '%s', got %d", g->rank, g->name, noffsets);
    return false;
  }
  for (int i = 0; i < noffsets; i++)
    if (!check_int_expr(v, offsets[i], assigned, sp, "an offset")) return false;
  return true;
}

/* A view and a tensor of the same shape and dtype; along dimension `free`
 * (a scatter's, -1 for none) any size. */
static bool same_shape_but(Verifier *v, Span sp, const IrRef *r, const IrTensor *t,
                           const char *what, int free) {
  bool ok = ir_ref_rank(r) == t->rank && r->t->dtype == t->dtype;
  for (int i = 0; ok && i < t->rank; i++) ok = i == free || ir_ref_dim(r, i) == t->shape[i];
  if (!ok)
    diag_error(v->d, sp,
               "%s: '%s' (%s, rank %d) and '%s' (%s, rank %d) "
               "differ in shape or dtype",
               what, r->t->name, dtype_name(r->t->dtype), ir_ref_rank(r), t->name,
               dtype_name(t->dtype), t->rank);
  return ok;
}

static bool same_tensor_shape(const IrTensor *a, const IrTensor *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->shape[i] != b->shape[i]) return false;
  return true;
}

/* A register operand used by the threads that own it. */
static bool check_owner(Verifier *v, const IrTensor *t, Region rg, Span sp) {
  if (rg.single || t->nthreads == rg.size) return true;
  diag_error(v->d, sp,
             "register tensor '%s' belongs to %d threads but is "
             "used by a group of %lld threads",
             t->name, t->nthreads, (long long)rg.size);
  return false;
}

static bool check_register(Verifier *v, const IrTensor *t, Region rg, Span sp, const char *what) {
  return check_tensor(v, t, MS_REGISTER, sp, what) && check_owner(v, t, rg, sp);
}

/* ------------------------------------------------------ tile statements */

/* The statement's tensor map describes its global tensor, with the shared
 * view's shape as the box and the shared tensor's swizzle. */
static bool tmap_matches(const Verifier *v, const IrTmaStmt *c) {
  if (c->tmap < 0 || c->tmap >= v->k->ntmaps) return false;
  const IrTmap *m = v->k->tmaps[c->tmap];
  if (m->index != c->tmap || m->global != c->global ||
      m->swizzle_bytes != c->shared.t->swizzle_bytes)
    return false;
  for (int i = 0; i < ir_ref_rank(&c->shared); i++)
    if (m->box[i] != ir_ref_dim(&c->shared, i)) return false;
  return true;
}

/* A mask of cluster ranks (multicast_mask=): an integer; where constant,
 * not 0 and no rank outside the cluster. */
static bool check_cta_mask(Verifier *v, const IrStmt *s, const IrExpr *mask, const bool *assigned) {
  int64_t c, n = ir_cluster_size(v->k);
  if (!check_int_expr(v, mask, assigned, s->span, "a multicast mask")) return false;
  if (!ir_is_const(mask, &c) || (c >= 1 && c < ((int64_t)1 << n))) return true;
  diag_error(v->d, s->span,
             "multicast_mask 0x%llx names CTAs outside the cluster of %lld (ranks 0 to %lld: "
             "the mask is 1 to 0x%llx; set self.attrs.cluster_blocks)",
             (long long)c, (long long)n, (long long)(n - 1), (long long)(((int64_t)1 << n) - 1));
  return false;
}

/* TMA copy: global view rank == shared view rank == number of offsets. */
static bool check_tma(Verifier *v, const IrStmt *s, const bool *assigned) {
  const char *dir = s->kind == S_TMA_LOAD ? "tma.global_to_shared" : "tma.shared_to_global";
  const IrTmaStmt *c = &s->tma;
  if (!check_tensor(v, c->global, MS_GLOBAL, s->span, "the global operand") ||
      !check_shared_view(v, &c->shared, assigned, s->span, "the shared operand") ||
      !check_offsets(v, s->span, c->offsets, c->noffsets, c->global, assigned))
    return false;
  if (s->kind == S_TMA_LOAD && !check_barrier(v, &c->barrier, assigned, s->span)) return false;
  if (c->mcast && (s->kind != S_TMA_LOAD || !check_cta_mask(v, s, c->mcast, assigned)))
    return false;
  const IrRef *r = &c->shared;
  if (ir_ref_rank(r) != c->global->rank || r->t->dtype != c->global->dtype) {
    diag_error(v->d, s->span,
               "%s: the shared view of '%s' (%s, rank %d) "
               "does not match the global tensor '%s' (%s, rank %d)",
               dir, r->t->name, dtype_name(r->t->dtype), ir_ref_rank(r), c->global->name,
               dtype_name(c->global->dtype), c->global->rank);
    return false;
  }
  if (r->transposed) {
    diag_error(v->d, s->span, "%s cannot copy a transposed view", dir);
    return false;
  }
  if (v->layouts_done && !tmap_matches(v, c)) {
    diag_error(v->d, s->span,
               "internal error: %s has no tensor map of its "
               "global tensor and box",
               dir);
    return false;
  }
  return true;
}

/* View dimension i of a copy_async is global dimension dims[i]:
 * increasing, inside the global rank, the last one the global tensor's
 * last (rows contiguous in both memories). */
static bool cp_async_dims_ok(const IrCpAsyncStmt *c, int rank) {
  if (rank < 1 || rank > c->global->rank || c->dims[rank - 1] != c->global->rank - 1) return false;
  for (int i = 0; i < rank; i++)
    if (c->dims[i] < 0 || (i > 0 && c->dims[i] <= c->dims[i - 1])) return false;
  return true;
}

/* copy_async: a global tensor, a shared view of its dtype (not a
 * transposed one, not bool: cp.async moves whole bytes), its offsets and
 * the map of the view's dimensions. */
static bool check_cp_async(Verifier *v, const IrStmt *s, const bool *assigned) {
  const IrCpAsyncStmt *c = &s->cpasync;
  if (!check_tensor(v, c->global, MS_GLOBAL, s->span, "the global operand") ||
      !check_shared_view(v, &c->shared, assigned, s->span, "the shared operand") ||
      !check_offsets(v, s->span, c->offsets, c->noffsets, c->global, assigned))
    return false;
  const IrRef *r = &c->shared;
  if (r->t->dtype != c->global->dtype || r->t->dtype == DT_BOOL || r->transposed ||
      !cp_async_dims_ok(c, ir_ref_rank(r))) {
    diag_error(v->d, s->span,
               "internal error: copy_async from '%s' (%s, rank %d) into a view of '%s' (%s, "
               "rank %d%s) with these dims",
               c->global->name, dtype_name(c->global->dtype), c->global->rank, r->t->name,
               dtype_name(r->t->dtype), ir_ref_rank(r), r->transposed ? ", transposed" : "");
    return false;
  }
  return true;
}

/* acc[M, N] += A[M, K] @ B[K, N]: shapes, dtypes and instruction limits. */
static bool check_wgmma_shapes(Verifier *v, const IrStmt *s) {
  const IrWgmmaStmt *w = &s->wgmma;
  const IrRef *a = &w->a, *b = &w->b;
  const IrTensor *acc = w->acc;
  int a_rank = w->ra ? w->ra->rank : ir_ref_rank(a);
  if (a_rank != 2 || ir_ref_rank(b) != 2 || acc->rank != 2) {
    diag_error(v->d, s->span,
               "wgmma.mma needs 2-D operands, got A rank %d, "
               "B rank %d, accumulator rank %d",
               a_rank, ir_ref_rank(b), acc->rank);
    return false;
  }
  DType at = ir_wgmma_a_dtype(w);
  int64_t m = ir_wgmma_a_dim(w, 0), k = ir_wgmma_a_dim(w, 1), n = ir_ref_dim(b, 1);
  if (ir_ref_dim(b, 0) != k || acc->shape[0] != m || acc->shape[1] != n) {
    diag_error(v->d, s->span,
               "wgmma.mma shapes do not agree: A is [%lld, "
               "%lld], B is [%lld, %lld], accumulator is [%lld, %lld]",
               (long long)m, (long long)k, (long long)ir_ref_dim(b, 0), (long long)n,
               (long long)acc->shape[0], (long long)acc->shape[1]);
    return false;
  }
  /* float16 and fp8 inputs may also accumulate in float16 (.f16), as the
   * evaluator allows. */
  bool fp8 = dtype_is_fp8(at);
  bool f16_acc = acc->dtype == DT_FLOAT16 && (at == DT_FLOAT16 || fp8);
  if (!dtype_wgmma_inputs_ok(at, b->t->dtype) || (acc->dtype != DT_FLOAT32 && !f16_acc)) {
    diag_error(v->d, s->span,
               "wgmma.mma supports float16/bfloat16 pairs and fp8 (e4m3/e5m2) inputs "
               "with a float32 accumulator (or float16 for float16 and fp8 inputs), "
               "got %s x %s -> %s",
               dtype_name(at), dtype_name(b->t->dtype), dtype_name(acc->dtype));
    return false;
  }
  /* the register form takes 16-bit A fragments only (fp8 ones are K-major
   * quadruples, which no tlsc register layout holds) */
  if (w->ra && (fp8 || w->ra->nthreads != 128)) {
    diag_error(v->d, s->span,
               "wgmma.mma's register operand A must be a float16 or bfloat16 tile of the "
               "warp group, not %s over %d threads",
               dtype_name(at), w->ra->nthreads);
    return false;
  }
  int64_t kstep = fp8 ? 32 : 16;
  if (m % 64 != 0 || k % kstep != 0 || n % 8 != 0 || n > 256) {
    diag_error(v->d, s->span,
               "wgmma.mma needs M a multiple of 64, K a "
               "multiple of %lld and N a multiple of 8 up to 256; got M=%lld, "
               "N=%lld, K=%lld",
               (long long)kstep, (long long)m, (long long)n, (long long)k);
    return false;
  }
  /* fp8 operands have no transpose bit: A is [M, K] and B the transposed
   * view of an [N, K] tile, K contiguous in both. */
  if (fp8 && (a->transposed || !b->transposed)) { /* fp8: A is shared (above) */
    diag_error(v->d, s->span,
               "wgmma.mma with fp8 operands needs both K-major: operand %s is not "
               "(A an [M, K] tile, B the transpose of an [N, K] tile)",
               a->transposed ? "A" : "B");
    return false;
  }
  return true;
}

/* WGMMA instructions run on a whole warp group: 128 threads starting at a
 * multiple of 128 of the block, all of them (not under single_thread). */
static bool check_warp_group(Verifier *v, const IrStmt *s, Region rg) {
  if (!rg.single && rg.size == 128 && rg.begin % 128 == 0) return true;
  if (rg.single)
    diag_error(v->d, s->span,
               "WGMMA instructions cannot run under "
               "single_thread(): they need the whole warp group");
  else
    diag_error(v->d, s->span,
               "WGMMA instructions need a warp group: a "
               "thread group of 128 threads starting at a multiple of 128, "
               "not threads [%lld, %lld)",
               (long long)rg.begin, (long long)(rg.begin + rg.size));
  return false;
}

static bool check_wgmma(Verifier *v, const IrStmt *s, const bool *assigned, Region rg) {
  if (!check_warp_group(v, s, rg)) return false;
  if (s->kind == S_WGMMA_WAIT && (s->wait.max_pending < 0 || s->wait.max_pending > 7)) {
    diag_error(v->d, s->span, "wgmma.wait_group takes 0 to 7, not %lld",
               (long long)s->wait.max_pending);
    return false;
  }
  if (s->kind != S_WGMMA_MMA) return true;
  bool a_ok = s->wgmma.ra ? check_register(v, s->wgmma.ra, rg, s->span, "operand A")
                          : check_shared_view(v, &s->wgmma.a, assigned, s->span, "operand A");
  return check_register(v, s->wgmma.acc, rg, s->span, "the accumulator") && a_ok &&
         check_shared_view(v, &s->wgmma.b, assigned, s->span, "operand B") &&
         check_wgmma_shapes(v, s);
}

/* mbarrier wait / arrive / arrive_and_expect_tx. */
static bool check_mbarrier(Verifier *v, const IrStmt *s, const bool *assigned) {
  const IrMbarStmt *b = &s->mbar;
  if (!check_barrier(v, &b->barrier, assigned, s->span)) return false;
  if (s->kind == S_MBAR_ARRIVE) return true;
  if (s->kind == S_MBAR_EXPECT_TX)
    return check_int_expr(v, b->tx_bytes, assigned, s->span, "transaction bytes");
  if (!check_expr(v, b->parity, assigned, s->span)) return false;
  if (!is_int(b->parity->type) && b->parity->type != DT_BOOL) {
    diag_error(v->d, s->span, "the phase must be an integer, not %s", dtype_name(b->parity->type));
    return false;
  }
  bool sem_ok = b->sem == MBAR_SEM_RELAXED || b->sem == MBAR_SEM_ACQUIRE;
  bool scope_ok = b->scope == MBAR_SCOPE_CTA || b->scope == MBAR_SCOPE_CLUSTER;
  if (!sem_ok || !scope_ok) {
    diag_error(v->d, s->span,
               "mbarrier.wait takes sem=\"relaxed\" or "
               "\"acquire\" and scope=\"cta\" or \"cluster\"");
    return false;
  }
  return true;
}

/* arrive_and_expect_tx_remote / _multicast: a barrier, transaction bytes,
 * a rank inside the cluster or a mask of its ranks, run by threads that
 * can hold the mask's bits (thread i arrives for rank i). */
static bool check_cluster_mbar(Verifier *v, const IrStmt *s, const bool *assigned, Region rg) {
  const IrClusterMbarStmt *b = &s->cmbar;
  bool multicast = s->kind == S_MBAR_MULTICAST;
  if (!check_barrier(v, &b->barrier, assigned, s->span) ||
      !check_int_expr(v, b->tx_bytes, assigned, s->span, "transaction bytes"))
    return false;
  if ((b->sem != MBAR_SEM_RELAXED && b->sem != MBAR_SEM_RELEASE) ||
      (b->scope != MBAR_SCOPE_CTA && b->scope != MBAR_SCOPE_CLUSTER)) {
    diag_error(v->d, s->span,
               "an arrive takes sem=\"relaxed\" or \"release\" and scope=\"cta\" or "
               "\"cluster\"");
    return false;
  }
  if (multicast) {
    if (rg.single || rg.size < 16) {
      diag_error(v->d, s->span,
                 "arrive_and_expect_tx_multicast needs a thread group of at least 16 threads "
                 "(thread i arrives on the barrier of CTA rank i), not %s",
                 rg.single ? "single_thread()" : "fewer");
      return false;
    }
    return check_cta_mask(v, s, b->ctas, assigned);
  }
  int64_t c, n = ir_cluster_size(v->k);
  if (!check_int_expr(v, b->ctas, assigned, s->span, "a target rank")) return false;
  if (ir_is_const(b->ctas, &c) && (c < 0 || c >= n)) {
    diag_error(v->d, s->span,
               "target_rank %lld is outside the cluster of %lld CTA%s (set "
               "self.attrs.cluster_blocks)",
               (long long)c, (long long)n, n == 1 ? "" : "s");
    return false;
  }
  return true;
}

/* cluster.sync(): whole warps (barrier.cluster is .aligned). */
static bool check_cluster_sync(Verifier *v, const IrStmt *s, Region rg) {
  if (!rg.single && rg.begin % 32 == 0 && rg.size % 32 == 0) return true;
  diag_error(v->d, s->span,
             "cluster.sync() needs whole warps (barrier.cluster is .aligned), not %s",
             rg.single ? "single_thread()" : "a thread group that is not made of warps");
  return false;
}

/* The register count a thread has at entry: ptxas's bound from .maxntid
 * and .minnctapersm 1 (the backend writes both): the register file over
 * the block's threads, down to a multiple of 8, at most 255. */
static int64_t entry_regs(const IrKernel *k) {
  int64_t r = IR_REGISTER_FILE / ((int64_t)k->warps * 32) / 8 * 8;
  return r > 255 ? 255 : r;
}

/* setmaxnreg: a whole warp group, a count of 24..256 in steps of 8, .inc
 * to at least and .dec to at most the count at entry; the largest count of
 * each warp group is remembered for the register-file check. */
static bool check_setmaxnreg(Verifier *v, const IrStmt *s, Region rg) {
  const IrSetmaxnregStmt *r = &s->nreg;
  if (rg.single || rg.size != 128 || rg.begin % 128 != 0) {
    diag_error(v->d, s->span,
               "setmaxnreg needs a warp group: a thread group of 128 threads starting at a "
               "multiple of 128, not %s",
               rg.single ? "single_thread()" : "this thread group");
    return false;
  }
  if (r->count < 24 || r->count > 256 || r->count % 8 != 0) {
    diag_error(v->d, s->span,
               "setmaxnreg: the register count must be a multiple of 8 from 24 to 256, not %lld",
               (long long)r->count);
    return false;
  }
  int64_t entry = entry_regs(v->k);
  if (r->inc ? r->count < entry : r->count > entry) {
    diag_error(v->d, s->span,
               "setmaxnreg.%s %lld: a thread of this %d-warp kernel starts with %lld registers "
               "(the register file over its threads), so .inc must ask for at least and .dec "
               "for at most that",
               r->inc ? "inc" : "dec", (long long)r->count, v->k->warps, (long long)entry);
    return false;
  }
  int wg = (int)(rg.begin / 128);
  if (wg < 8 && r->count > v->nreg[wg]) {
    v->nreg[wg] = r->count;
    if (!v->nreg_at[wg]) v->nreg_at[wg] = s;
  }
  return true;
}

/* The warp groups' register counts after setmaxnreg fit the register file
 * together: otherwise a setmaxnreg.inc waits forever for registers no warp
 * group gives back. */
static bool check_register_file(Verifier *v) {
  int64_t entry = entry_regs(v->k), total = 0, threads = (int64_t)v->k->warps * 32;
  const IrStmt *at = NULL;
  for (int wg = 0; wg * 128 < threads && wg < 8; wg++) {
    int64_t n = threads - 128 * wg < 128 ? threads - 128 * wg : 128;
    total += n * (v->nreg[wg] ? v->nreg[wg] : entry);
    if (v->nreg_at[wg] && v->nreg_at[wg]->nreg.inc && !at) at = v->nreg_at[wg];
  }
  if (total <= IR_REGISTER_FILE || !at) return true;
  diag_error(v->d, at->span,
             "setmaxnreg asks for more registers than the SM has: the warp groups' counts "
             "after it need %lld registers, more than %d (a warp group without setmaxnreg "
             "keeps the %lld of its entry): the .inc would wait forever",
             (long long)total, IR_REGISTER_FILE, (long long)entry);
  return false;
}

/* Whether x broadcasts to dst's shape (numpy's rules: aligned on the
 * right, each dimension equal or 1). */
static bool broadcasts_to(const IrTensor *x, const IrTensor *dst) {
  if (x->rank > dst->rank) return false;
  for (int i = 1; i <= x->rank; i++) {
    int64_t a = x->shape[x->rank - i], b = dst->shape[dst->rank - i];
    if (a != b && a != 1) return false;
  }
  return true;
}

/* dst = reduction of src over dim: src's shape with dim of size 1. */
static bool check_reduce(Verifier *v, const IrStmt *s, Region rg) {
  const IrReduceStmt *r = &s->reduce;
  if (!check_register(v, r->dst, rg, s->span, "the destination") ||
      !check_register(v, r->src, rg, s->span, "the source"))
    return false;
  bool ok = r->dim >= 0 && r->dim < r->src->rank && r->dst->dtype == r->src->dtype;
  if (r->scan) { /* src's shape; bitwise ops on integers */
    bool bitwise = r->op == OP_AND || r->op == OP_OR || r->op == OP_XOR;
    ok = ok && r->dst->rank == r->src->rank &&
         memcmp(r->dst->shape, r->src->shape, sizeof(int64_t) * (size_t)r->src->rank) == 0 &&
         (r->op == OP_ADD || r->op == OP_MUL || r->op == OP_MAX || r->op == OP_MIN ||
          (bitwise && !dtype_is_float(r->src->dtype) && r->src->dtype != DT_BOOL));
  } else {
    ok = ok && r->dst->rank == r->src->rank - (r->keepdim ? 0 : 1) &&
         (r->op == OP_ADD || r->op == OP_MAX || r->op == OP_MIN);
    if (ok && r->keepdim) ok = r->dst->shape[r->dim] == 1;
    for (int i = 0; ok && i < r->src->rank; i++)
      if (i != r->dim) ok = r->dst->shape[i - (!r->keepdim && i > r->dim)] == r->src->shape[i];
  }
  if (!ok)
    diag_error(v->d, s->span, "internal error: malformed reduction of '%s' in the IR",
               r->src->name);
  return ok;
}

/* dst = cond ? a : b: cond bool, a and b (tensors or scalars) of dst's
 * dtype, every tensor broadcasting to dst. */
static bool check_where(Verifier *v, const IrStmt *s, const bool *assigned, Region rg) {
  const IrWhereStmt *w = &s->where;
  if (!check_register(v, w->dst, rg, s->span, "the destination") ||
      !check_register(v, w->cond, rg, s->span, "the condition") ||
      (w->a && !check_register(v, w->a, rg, s->span, "the operand")) ||
      (w->b && !check_register(v, w->b, rg, s->span, "the operand")) ||
      (!w->a && !check_expr(v, w->sa, assigned, s->span)) ||
      (!w->b && !check_expr(v, w->sb, assigned, s->span)))
    return false;
  bool ok = w->cond->dtype == DT_BOOL && broadcasts_to(w->cond, w->dst) &&
            (!w->a || (w->a->dtype == w->dst->dtype && broadcasts_to(w->a, w->dst))) &&
            (!w->b || (w->b->dtype == w->dst->dtype && broadcasts_to(w->b, w->dst)));
  if (!ok)
    diag_error(v->d, s->span, "internal error: malformed where() into '%s' in the IR",
               w->dst->name);
  return ok;
}

/* dst = a @ b + c: [M, K] x [K, N] of float16 or bfloat16, the mma.sync
 * tile sizes and the warps. */
static bool check_dot(Verifier *v, const IrStmt *s, Region rg) {
  const IrDotStmt *d = &s->dot;
  if (!check_register(v, d->dst, rg, s->span, "the destination") ||
      !check_register(v, d->a, rg, s->span, "the operand a") ||
      !check_register(v, d->b, rg, s->span, "the operand b") ||
      (d->c && !check_register(v, d->c, rg, s->span, "the accumulator")))
    return false;
  const IrTensor *a = d->a, *b = d->b, *o = d->dst;
  int epr = ir_mma_epr(a->dtype);
  bool ok = a->rank == 2 && b->rank == 2 && o->rank == 2 && a->shape[1] == b->shape[0] &&
            o->shape[0] == a->shape[0] && o->shape[1] == b->shape[1] &&
            ir_mma_operand_ok(a->dtype, o->dtype) && ir_mma_operand_ok(b->dtype, o->dtype) &&
            (a->dtype == b->dtype || epr == 4) && ir_mma_epr(b->dtype) == epr &&
            (!d->c || (d->c->dtype == o->dtype && same_tensor_shape(d->c, o))) && d->warps_m > 0 &&
            d->warps_n > 0 && d->warps_m * d->warps_n * 32 == o->nthreads &&
            a->shape[0] % (16 * d->warps_m) == 0 && b->shape[1] % (8 * d->warps_n) == 0 &&
            a->shape[1] % (8 * epr) == 0;
  if (!ok) diag_error(v->d, s->span, "internal error: malformed dot into '%s' in the IR", o->name);
  return ok;
}

/* fill, cast, unary functions and element-wise: register tensors of one
 * shape (element-wise operands may broadcast). */
static bool check_register_op(Verifier *v, const IrStmt *s, const bool *assigned, Region rg) {
  if (s->kind == S_FILL)
    return check_register(v, s->fill.dst, rg, s->span, "the destination") &&
           check_expr(v, s->fill.value, assigned, s->span);
  if (s->kind == S_REDUCE) return check_reduce(v, s, rg);
  if (s->kind == S_WHERE) return check_where(v, s, assigned, rg);
  if (s->kind == S_DOT) return check_dot(v, s, rg);
  if (s->kind == S_VIEW)
    return check_register(v, s->cast.dst, rg, s->span, "the destination") &&
           check_register(v, s->cast.src, rg, s->span, "the source");
  if (s->kind == S_TRANSPOSE || s->kind == S_RESHAPE) {
    const IrTensor *d = s->cast.dst, *x = s->cast.src;
    if (!check_register(v, d, rg, s->span, "the destination") ||
        !check_register(v, x, rg, s->span, "the source"))
      return false;
    bool ok = s->kind == S_RESHAPE ? ir_shapes_reshapable(d->rank, d->shape, x->rank, x->shape)
                                   : d->rank == 2 && x->rank == 2 && d->shape[0] == x->shape[1] &&
                                         d->shape[1] == x->shape[0];
    if (!ok || d->dtype != x->dtype)
      diag_error(v->d, s->span, "internal error: malformed %s of '%s'",
                 s->kind == S_RESHAPE ? "reshape" : "transpose", x->name);
    return ok && d->dtype == x->dtype;
  }
  bool elemwise = s->kind == S_ELEMWISE;
  const IrTensor *dst = elemwise             ? s->elemwise.dst
                        : s->kind == S_UNARY ? s->unary.dst
                                             : s->cast.dst;
  const IrTensor *src = elemwise ? s->elemwise.a : s->kind == S_UNARY ? s->unary.src : s->cast.src;
  const IrTensor *other = elemwise ? s->elemwise.b : NULL;
  if (!check_register(v, dst, rg, s->span, "the destination")) return false;
  if (!check_register(v, src, rg, s->span, "the source")) return false;
  if (elemwise) {
    if (other && !check_register(v, other, rg, s->span, "the operand")) return false;
    if (!other && !check_expr(v, s->elemwise.scalar, assigned, s->span)) return false;
  }
  bool ok = elemwise ? broadcasts_to(src, dst) && (!other || broadcasts_to(other, dst))
                     : same_tensor_shape(dst, src);
  bool compare = elemwise && s->elemwise.op >= OP_EQ && s->elemwise.op <= OP_GE;
  if (elemwise && (compare ? dst->dtype != DT_BOOL : dst->dtype != src->dtype)) ok = false;
  if (other && other->dtype != src->dtype) ok = false;
  if (s->kind == S_UNARY && dst->dtype != src->dtype) ok = false;
  if (!ok)
    diag_error(v->d, s->span,
               "register tensors '%s' and '%s' differ in "
               "shape%s",
               dst->name, src->name, elemwise ? " or dtype" : "");
  return ok;
}

/* dst = src[:, begin:end]: rank-2 register tensors of one dtype and
 * owner, the destination as tall as the source and end - begin wide, the
 * bounds whole column octets inside the source. */
static bool check_slice(Verifier *v, const IrStmt *s, Region rg) {
  const IrSliceStmt *c = &s->slice;
  if (!check_register(v, c->dst, rg, s->span, "the destination") ||
      !check_register(v, c->src, rg, s->span, "the source"))
    return false;
  const IrTensor *d = c->dst, *x = c->src;
  bool ok = d->rank == 2 && x->rank == 2 && d->dtype == x->dtype && d->nthreads == x->nthreads &&
            c->begin >= 0 && c->begin < c->end && c->end <= x->shape[1] && c->begin % 8 == 0 &&
            c->end % 8 == 0 && d->shape[0] == x->shape[0] && d->shape[1] == c->end - c->begin;
  if (!ok)
    diag_error(v->d, s->span,
               "internal error: malformed column slice of "
               "'%s' in the IR",
               x->name);
  return ok;
}

/* load_global / store_global: a register tile at offsets of a global
 * tensor of the same rank and dtype. */
/* A scatter's indices: an integer register tensor of the values' shape,
 * its dimension one of the destination's. */
static bool check_scatter(Verifier *v, const IrStmt *s, const IrTensor *idx, const IrTensor *r,
                          int dim, int rank, Region rg) {
  if (!check_register(v, idx, rg, s->span, "the scatter indices")) return false;
  bool ok = same_tensor_shape(idx, r) && dim >= 0 && dim < rank &&
            (idx->dtype == DT_INT32 || idx->dtype == DT_UINT32 || idx->dtype == DT_INT64 ||
             idx->dtype == DT_UINT64);
  if (!ok)
    diag_error(v->d, s->span, "internal error: malformed scatter of '%s' in the IR", r->name);
  return ok;
}

/* An atomic store: its old values and cas operands of the values' shape
 * and dtype; the ops PTX has for the dtype. */
static bool check_atomic(Verifier *v, const IrStmt *s, const IrAtomic *a, const IrTensor *r,
                         Region rg) {
  if (!a) return true;
  if ((a->old && !check_register(v, a->old, rg, s->span, "the atomic's old values")) ||
      (a->compare && !check_register(v, a->compare, rg, s->span, "the compare values")))
    return false;
  bool ok = (!a->old || (same_tensor_shape(a->old, r) && a->old->dtype == r->dtype)) &&
            (!a->compare || (same_tensor_shape(a->compare, r) && a->compare->dtype == r->dtype)) &&
            (a->op == ATOM_CAS) == (a->compare != NULL) &&
            (a->old || (a->op != ATOM_CAS && a->op != ATOM_EXCH)) && ir_atomic_ok(a->op, r->dtype);
  if (!ok)
    diag_error(v->d, s->span, "internal error: malformed atomic store of '%s' in the IR", r->name);
  return ok;
}

static bool check_global_copy(Verifier *v, const IrStmt *s, const bool *assigned, Region rg) {
  const IrTensor *g = s->gmem.global, *r = s->gmem.reg;
  if (!check_tensor(v, g, MS_GLOBAL, s->span, "the global operand") ||
      !check_register(v, r, rg, s->span, "the register operand") ||
      !check_offsets(v, s->span, s->gmem.offsets, s->gmem.noffsets, g, assigned))
    return false;
  const IrGlobalCopyStmt *c = &s->gmem;
  bool dims_ok = c->ndims == 0 ? r->rank <= g->rank : c->ndims == r->rank;
  for (int i = 0; dims_ok && i < c->ndims; i++)
    dims_ok = c->dims[i] >= 0 && c->dims[i] < g->rank && (i == 0 || c->dims[i] > c->dims[i - 1]);
  if (!dims_ok || g->dtype != r->dtype) {
    diag_error(v->d, s->span,
               "'%s' (%s, rank %d) and '%s' (%s, rank %d) "
               "differ in dtype or do not match their dims",
               g->name, dtype_name(g->dtype), g->rank, r->name, dtype_name(r->dtype), r->rank);
    return false;
  }
  return (!c->scatter || check_scatter(v, s, c->scatter, r, c->scatter_dim, g->rank, rg)) &&
         check_atomic(v, s, c->atomic, r, rg);
}

/* load_shared / store_shared: a register tile and a shared view (of its
 * shape, but along a scatter's dimension). */
static bool check_shared_copy(Verifier *v, const IrStmt *s, const bool *assigned, Region rg) {
  const IrTensor *r = s->smem.reg, *idx = s->smem.scatter;
  int free = idx ? s->smem.scatter_dim : -1;
  return check_register(v, r, rg, s->span, "the register operand") &&
         check_shared_view(v, &s->smem.shared, assigned, s->span, "the shared operand") &&
         same_shape_but(v, s->span, &s->smem.shared, r, "shared copy", free) &&
         (!idx || check_scatter(v, s, idx, r, free, ir_ref_rank(&s->smem.shared), rg)) &&
         check_atomic(v, s, s->smem.atomic, r, rg);
}

/* ---------------------------------------------------------------- body */

static bool check_block(Verifier *v, const IrBlock *b, bool *assigned, Region rg);

static bool *copy_set(Verifier *v, const bool *set) {
  bool *c = arena_alloc(v->ar, (size_t)v->k->nvars + 1);
  memcpy(c, set, (size_t)v->k->nvars);
  return c;
}

/* for var in range(start, stop, step): the body may run zero times, so
 * what it assigns is not assigned after the loop. */
static bool check_for(Verifier *v, const IrStmt *s, bool *assigned, Region rg) {
  const IrForStmt *l = &s->loop;
  if (!var_belongs(v, l->var) || !is_int(l->var->type)) {
    diag_error(v->d, s->span,
               "internal error: loop variable is missing or "
               "not an integer");
    return false;
  }
  const IrExpr *bounds[3] = {l->start, l->stop, l->step};
  for (int i = 0; i < 3; i++)
    if (!check_int_expr(v, bounds[i], assigned, s->span, "a range bound")) return false;
  int64_t step = 1;
  if ((ir_is_const(l->step, &step) && step == 0) || l->unroll < 0) {
    diag_error(v->d, s->span,
               step == 0 ? "range() step must not be zero" : "unroll must not be negative");
    return false;
  }
  bool *inner = copy_set(v, assigned);
  inner[l->var->id] = true;
  return check_block(v, &s->body, inner, rg);
}

/* if/else: assigned after = assigned on both paths. */
static bool check_if(Verifier *v, const IrStmt *s, bool *assigned, Region rg) {
  if (!check_cond(v, s->branch.cond, assigned, s->span)) return false;
  bool *then_set = copy_set(v, assigned), *else_set = copy_set(v, assigned);
  if (!check_block(v, &s->body, then_set, rg) || !check_block(v, &s->orelse, else_set, rg))
    return false;
  for (int i = 0; i < v->k->nvars; i++) assigned[i] = then_set[i] && else_set[i];
  return true;
}

/* thread_group: inside its parent; its variables stay inside (the other
 * threads never assign them). */
static bool check_thread_group(Verifier *v, const IrStmt *s, bool *assigned, Region rg) {
  if (rg.single) {
    diag_error(v->d, s->span,
               "thread_group cannot be nested in "
               "single_thread()");
    return false;
  }
  const IrGroupStmt *g = &s->group;
  if (g->begin < 0 || g->count <= 0 || g->begin + g->count > rg.size) {
    diag_error(v->d, s->span,
               "thread group [%lld, %lld) is not inside its "
               "parent group of %lld threads",
               (long long)g->begin, (long long)(g->begin + g->count), (long long)rg.size);
    return false;
  }
  Region inner = {rg.begin + g->begin, g->count, false};
  return check_block(v, &s->body, copy_set(v, assigned), inner);
}

static bool check_assign(Verifier *v, const IrStmt *s, bool *assigned) {
  const IrAssignStmt *a = &s->assign;
  if (!var_belongs(v, a->var)) {
    diag_error(v->d, s->span,
               "internal error: assignment to an unknown "
               "variable");
    return false;
  }
  if (!check_expr(v, a->value, assigned, s->span)) return false;
  if (a->value->type != a->var->type) {
    diag_error(v->d, s->span,
               "internal error: %s value assigned to '%s' of "
               "type %s without a cast",
               dtype_name(a->value->type), a->var->name, dtype_name(a->var->type));
    return false;
  }
  assigned[a->var->id] = true;
  return true;
}

static bool check_printf(Verifier *v, const IrStmt *s, const bool *assigned, Region rg) {
  const IrPrintfStmt *p = &s->print;
  if (!p->format || p->nargs < 0 || (p->nargs > 0 && !p->args)) {
    diag_error(v->d, s->span, "internal error: malformed printf in the IR");
    return false;
  }
  for (int i = 0; i < p->nargs; i++)
    if (!check_expr(v, p->args[i], assigned, s->span)) return false;
  if (p->reg) return check_register(v, p->reg, rg, s->span, "the printed tensor");
  if (p->shared.t) return check_shared_view(v, &p->shared, assigned, s->span, "the printed tensor");
  return true;
}

/* lock_semaphore / release_semaphore: a uint64 address and an int32
 * value, run by one thread (the evaluator puts them in a single-thread
 * region: a whole group spinning would each read the semaphore). */
static bool check_semaphore(Verifier *v, const IrStmt *s, const bool *assigned, Region rg) {
  const IrSemStmt *m = &s->sem;
  if (!m->addr || !m->value || m->addr->type != DT_UINT64 || m->value->type != DT_INT32 ||
      !(rg.single || rg.size == 1)) {
    diag_error(v->d, s->span,
               "internal error: a semaphore statement needs a uint64 address and an int32 "
               "value, in a single thread");
    return false;
  }
  return check_expr(v, m->addr, assigned, s->span) && check_expr(v, m->value, assigned, s->span);
}

/* sync() is bar.sync: over the block at the top level (barrier 0), over a
 * named barrier of its own for each distinct thread group (barrier_id, from
 * ir_assign_barriers). The hardware counts whole warps, has
 * IR_MAX_NAMED_BARRIERS named barriers, and a single thread cannot complete
 * one (the rest of its warp does not run the region). */
static bool check_sync(Verifier *v, const IrStmt *s, Region rg) {
  int id = s->sync.barrier_id;
  if (rg.single) {
    diag_error(v->d, s->span,
               "sync() inside single_thread() can never "
               "complete: a barrier waits for whole warps");
    return false;
  }
  if (rg.begin == 0 && rg.size == (int64_t)v->k->warps * 32) {
    if (id == 0) return true;
    diag_error(v->d, s->span, "internal error: sync() over the whole block uses named barrier %d",
               id);
    return false;
  }
  if (rg.begin % 32 != 0 || rg.size % 32 != 0) {
    diag_error(v->d, s->span,
               "sync() inside a thread group needs whole "
               "warps: the group (threads [%lld, %lld) of the block) must "
               "begin and end at multiples of 32",
               (long long)rg.begin, (long long)(rg.begin + rg.size));
    return false;
  }
  if (id > IR_MAX_NAMED_BARRIERS) {
    diag_error(v->d, s->span,
               "sync() in more than %d distinct thread "
               "groups: each needs a named barrier and the GPU has %d "
               "beside the block's",
               IR_MAX_NAMED_BARRIERS, IR_MAX_NAMED_BARRIERS);
    return false;
  }
  if (id < 1 || (v->barrier_size[id] &&
                 (v->barrier_begin[id] != rg.begin || v->barrier_size[id] != rg.size))) {
    diag_error(v->d, s->span,
               "internal error: sync() in thread group [%lld, %lld) has named barrier %d, "
               "not a barrier of its own",
               (long long)rg.begin, (long long)(rg.begin + rg.size), id);
    return false;
  }
  v->barrier_begin[id] = rg.begin;
  v->barrier_size[id] = rg.size;
  return true;
}

static bool check_stmt(Verifier *v, const IrStmt *s, bool *assigned, Region rg) {
  switch (s->kind) {
  case S_ASSIGN:
    return check_assign(v, s, assigned);
  case S_FOR:
    return check_for(v, s, assigned, rg);
  case S_IF:
    return check_if(v, s, assigned, rg);
  case S_THREAD_GROUP:
    return check_thread_group(v, s, assigned, rg);
  case S_SINGLE_THREAD: {
    Region one = {rg.begin, rg.size, true};
    return check_block(v, &s->body, copy_set(v, assigned), one);
  }
  case S_SYNC:
    return check_sync(v, s, rg);
  case S_TMA_FENCE:
  case S_TMA_COMMIT:
    return true;
  case S_TMA_WAIT:
    if (s->wait.max_pending >= 0) return true;
    diag_error(v->d, s->span, "tma.wait_group takes a count >= 0");
    return false;
  case S_MBAR_WAIT:
  case S_MBAR_ARRIVE:
  case S_MBAR_EXPECT_TX:
    return check_mbarrier(v, s, assigned);
  case S_TMA_LOAD:
  case S_TMA_STORE:
    return check_tma(v, s, assigned);
  case S_CP_ASYNC:
    return check_cp_async(v, s, assigned);
  case S_CP_COMMIT:
  case S_CP_WAIT_ALL:
    return true;
  case S_CP_WAIT:
    if (s->wait.max_pending >= 0) return true;
    diag_error(v->d, s->span, "copy_async_wait_group takes a count >= 0");
    return false;
  case S_WGMMA_FENCE:
  case S_WGMMA_MMA:
  case S_WGMMA_COMMIT:
  case S_WGMMA_WAIT:
    return check_wgmma(v, s, assigned, rg);
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
    return check_register_op(v, s, assigned, rg);
  case S_LOAD_GLOBAL:
  case S_STORE_GLOBAL:
    return check_global_copy(v, s, assigned, rg);
  case S_LOAD_SHARED:
  case S_STORE_SHARED:
    return check_shared_copy(v, s, assigned, rg);
  case S_PRINTF:
    return check_printf(v, s, assigned, rg);
  case S_SLICE:
    return check_slice(v, s, rg);
  case S_CLUSTER_SYNC:
    return check_cluster_sync(v, s, rg);
  case S_MBAR_REMOTE:
  case S_MBAR_MULTICAST:
    return check_cluster_mbar(v, s, assigned, rg);
  case S_SETMAXNREG:
    return check_setmaxnreg(v, s, rg);
  case S_SEM_WAIT:
  case S_SEM_RELEASE:
    return check_semaphore(v, s, assigned, rg);
  }
  diag_error(v->d, s->span, "internal error: unknown statement kind %d", (int)s->kind);
  return false;
}

/* Checks every statement; stops a block at its first error so that one bug
 * is not reported many times. */
static bool check_block(Verifier *v, const IrBlock *b, bool *assigned, Region rg) {
  for (int i = 0; i < b->len; i++)
    if (!check_stmt(v, b->items[i], assigned, rg)) return false;
  return true;
}

/* ------------------------------------------------------------- kernel */

/* A register tensor fits the registers of its owning threads (sm_90:
 * 255 per thread in all), so one tensor over it can never be allocated
 * (and the emitter would write one move per element). */
static bool check_thread_registers(Verifier *v, const IrTensor *t) {
  if (t->nthreads <= 0) return true; /* reported as an internal error */
  int64_t regs = ir_tensor_thread_regs(t);
  if (regs <= IR_MAX_THREAD_REGS) return true;
  diag_error(v->d, t->span,
             "register tensor '%s' needs %lld 32-bit "
             "registers per thread (%lld elements over %d threads), over the "
             "limit of %d",
             t->name, (long long)regs, (long long)ir_tensor_numel(t), t->nthreads,
             IR_MAX_THREAD_REGS);
  return false;
}
/* A tensor's own fields, and the results of the passes that ran. */
static bool check_tensor_decl(Verifier *v, const IrTensor *t) {
  /* a register tensor may be a scalar (a reduction over every dimension) */
  bool ok =
      t->rank >= (t->space == MS_REGISTER ? 0 : 1) && t->rank <= IR_MAX_RANK && t->dtype != DT_VOID;
  for (int i = 0; ok && i < t->rank; i++) ok = t->shape[i] > 0 || t->space == MS_GLOBAL;
  if (!ok) {
    diag_error(v->d, t->span, "tensor '%s' has an invalid shape", t->name);
    return false;
  }
  if (t->space == MS_GLOBAL) {
    for (int i = 0; i < t->rank; i++)
      if (!check_int_expr(v, t->gshape[i], NULL, t->span, "a global shape")) return false;
    if (!check_expr(v, t->gptr, NULL, t->span)) return false;
  }
  if (t->is_mbarrier &&
      (t->space != MS_SHARED || t->rank != 1 || t->dtype != DT_UINT64 || !t->mbar_counts)) {
    diag_error(v->d, t->span, "internal error: malformed mbarrier array '%s'", t->name);
    return false;
  }
  for (int i = 0; t->is_mbarrier && i < t->shape[0]; i++) {
    if (t->mbar_counts[i] <= 0 || t->mbar_counts[i] >= (1 << 20)) {
      diag_error(v->d, t->span,
                 "mbarrier arrival count %lld is out of range "
                 "(1 to 1048575)",
                 (long long)t->mbar_counts[i]);
      return false;
    }
  }
  if (t->space == MS_REGISTER && t->nthreads <= 0) {
    diag_error(v->d, t->span,
               "internal error: register tensor '%s' has no "
               "owning threads",
               t->name);
    return false;
  }
  if (t->space == MS_REGISTER && !check_thread_registers(v, t)) return false;
  if (v->layouts_done && t->layout == LAYOUT_NONE) {
    diag_error(v->d, t->span, "internal error: tensor '%s' has no layout", t->name);
    return false;
  }
  if (v->planned && t->space == MS_SHARED &&
      (t->align <= 0 || t->smem_offset < 0 || t->smem_offset % t->align)) {
    diag_error(v->d, t->span,
               "internal error: shared tensor '%s' is not "
               "placed",
               t->name);
    return false;
  }
  return true;
}

/* After layout inference, an accumulator-layout tensor is a [64k, N] tile
 * of one warp group. */
static bool check_layout(Verifier *v, const IrTensor *t) {
  if (t->layout != LAYOUT_WGMMA_ACC) return true;
  if (t->space == MS_REGISTER && t->rank == 2 && t->shape[0] % 64 == 0 && t->nthreads == 128)
    return true;
  diag_error(v->d, t->span,
             "internal error: '%s' has the WGMMA accumulator "
             "layout but is not a [64k, N] tile of a warp group",
             t->name);
  return false;
}

/* The index in live (sorted by offset, disjoint) of the first tensor that
 * starts at or past `offset`. */
static int live_index(IrTensor *const *live, int n, int64_t offset) {
  int lo = 0, hi = n;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (live[mid]->smem_offset < offset)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Takes freed tensor t out of live, if it is there. */
static int live_remove(IrTensor **live, int n, const IrTensor *t) {
  int at = live_index(live, n, t->smem_offset);
  if (at == n || live[at] != t) return n;
  memmove(live + at, live + at + 1, sizeof *live * (size_t)(n - at - 1));
  return n - 1;
}

/* After planning, shared tensors lie inside the kernel's dynamic shared
 * memory, and two share a byte only when the first was freed before the
 * second was created (free_shared: their lifetimes are disjoint) or the
 * second is a reshape of the first (reshape_shared: the same bytes, in
 * the same layout). The
 * tensors live at each creation are kept in offset order: only the last
 * that starts below a new tensor's end can overlap it. */
static bool check_smem_plan(Verifier *v) {
  IrTensor **live = xmalloc(sizeof *live * ((size_t)v->k->ntensors + 1));
  int nlive = 0, nfreed, next = 0;
  IrTensor **freed = ir_freed_tensors(v->k, &nfreed);
  bool ok = true;
  for (int i = 0; i < v->k->ntensors && ok; i++) {
    for (; next < nfreed && freed[next]->freed_before <= i; next++)
      nlive = live_remove(live, nlive, freed[next]);
    IrTensor *t = v->k->tensors[i];
    int64_t end = t->smem_offset + ir_tensor_nbytes(t);
    if (t->space == MS_SHARED && t->alias_of) { /* reshape_shared: its tensor's bytes */
      const IrTensor *o = t->alias_of;
      ok = o->space == MS_SHARED && !o->alias_of && o->id < t->id &&
           o->smem_offset == t->smem_offset && ir_tensor_nbytes(o) == ir_tensor_nbytes(t) &&
           o->layout == t->layout && o->swizzle_bytes == t->swizzle_bytes;
      if (!ok)
        diag_error(v->d, t->span,
                   "internal error: shared tensor '%s' is not placed as the tensor it reshapes",
                   t->name);
      continue;
    }
    if (t->space != MS_SHARED || end == t->smem_offset) continue;
    int at = live_index(live, nlive, end);
    ok = end <= v->k->smem_bytes &&
         !(at > 0 && live[at - 1]->smem_offset + ir_tensor_nbytes(live[at - 1]) > t->smem_offset);
    if (!ok)
      diag_error(v->d, t->span,
                 "internal error: shared tensor '%s' overlaps "
                 "another or lies outside the planned shared memory",
                 t->name);
    memmove(live + at + 1, live + at, sizeof *live * (size_t)(nlive - at));
    live[at] = t;
    nlive++;
  }
  free(freed);
  free(live);
  return ok;
}

/* Launch attributes: 1..32 warps, a grid over parameters, a cluster of at
 * most IR_MAX_CLUSTER_CTAS CTAs that divides a constant grid. */
static bool check_launch(Verifier *v) {
  IrKernel *k = v->k;
  if (k->warps < 1 || k->warps > 32) {
    diag_error(v->d, k->span, "a block has 1 to 32 warps, not %d", k->warps);
    return false;
  }
  for (int i = 0; i < 3; i++)
    if (k->cluster[i] < 0 || k->cluster[i] > IR_MAX_CLUSTER_CTAS) {
      diag_error(v->d, k->span, "a cluster dimension must be between 1 and %d, not %lld",
                 IR_MAX_CLUSTER_CTAS, (long long)k->cluster[i]);
      return false;
    }
  if (ir_cluster_size(k) > IR_MAX_CLUSTER_CTAS) {
    diag_error(v->d, k->span, "a cluster of %lld CTAs: at most %d (the portable cluster size)",
               (long long)ir_cluster_size(k), IR_MAX_CLUSTER_CTAS);
    return false;
  }
  for (int i = 0; i < 3; i++) {
    int64_t g;
    if (k->cluster[i] > 1 && k->grid[i] && ir_is_const(k->grid[i], &g) && g % k->cluster[i]) {
      diag_error(v->d, k->span,
                 "the grid's %c dimension (%lld blocks) is not a multiple of the cluster's "
                 "(%lld): a cluster launch needs whole clusters",
                 "xyz"[i], (long long)g, (long long)k -> cluster[i]);
      return false;
    }
  }
  for (int i = 0; i < 3; i++) {
    if (!check_int_expr(v, k->grid[i], NULL, k->span, "the grid size")) return false;
    if (!grid_only_params(k->grid[i])) {
      diag_error(v->d, k->span,
                 "the grid size may only depend on kernel "
                 "parameters and constants");
      return false;
    }
  }
  return true;
}

/* Which passes have run: see the file comment. */
static void detect_stage(Verifier *v) {
  for (int i = 0; i < v->k->ntensors; i++) {
    const IrTensor *t = v->k->tensors[i];
    if (t->space != MS_GLOBAL && t->layout != LAYOUT_NONE) v->layouts_done = true;
    if (t->space == MS_SHARED && t->align > 0) v->planned = true;
  }
  if (v->k->ntmaps > 0) v->layouts_done = true;
}

/* Statements a kernel may have once its run-time loops are unrolled (each
 * S_FOR's body is emitted `unroll` times): nested unroll factors multiply,
 * and past this the PTX would take minutes and gigabytes to write. */
#define TLS_MAX_UNROLLED_STMTS IR_MAX_UNROLLED_STMTS

/* The statement count of a block with every loop unrolled, saturating just
 * past the limit. Reports the innermost loop whose unrolling goes over it
 * and sets *failed. */
static int64_t unrolled_size(Verifier *v, const IrBlock *b, bool *failed) {
  int64_t total = 0;
  for (int i = 0; i < b->len && !*failed; i++) {
    const IrStmt *s = b->items[i];
    int64_t body = unrolled_size(v, &s->body, failed) + unrolled_size(v, &s->orelse, failed);
    if (*failed) break;
    int64_t size = 1 + body;
    int64_t unroll = s->kind == S_FOR ? s->loop.unroll : 0;
    if (unroll > 1) {
      size =
          1 + (body > TLS_MAX_UNROLLED_STMTS / unroll ? TLS_MAX_UNROLLED_STMTS + 1 : body * unroll);
      if (size > TLS_MAX_UNROLLED_STMTS) {
        diag_error(v->d, s->span,
                   "unrolling this loop %lld times gives more "
                   "than %d statements; lower the unroll factors",
                   (long long)unroll, TLS_MAX_UNROLLED_STMTS);
        *failed = true;
      }
    }
    total += size;
    if (total > TLS_MAX_UNROLLED_STMTS) total = TLS_MAX_UNROLLED_STMTS + 1;
  }
  return total;
}

/* The whole kernel body, unrolled, stays under TLS_MAX_UNROLLED_STMTS. */
static bool check_unrolled_size(Verifier *v) {
  bool failed = false;
  int64_t size = unrolled_size(v, &v->k->body, &failed);
  if (failed) return false;
  if (size <= TLS_MAX_UNROLLED_STMTS) return true;
  diag_error(v->d, v->k->span,
             "kernel '%s' has more than %d statements once "
             "its loops are unrolled",
             v->k->name, TLS_MAX_UNROLLED_STMTS);
  return false;
}

/* The workspaces (global_tensor()) are the last parameters, hidden, each
 * the base of its global tensor, whose shape reads only parameters. */
static bool check_workspaces(Verifier *v) {
  const IrKernel *k = v->k;
  bool ok = k->nws >= 0 && k->nws <= IR_MAX_WORKSPACES && k->nws <= k->nparams;
  for (int i = 0; ok && i < k->nparams; i++)
    ok = k->params[i]->workspace == (i >= k->nparams - k->nws);
  for (int i = 0; ok && i < k->nws; i++) {
    const IrWorkspace *w = &k->ws[i];
    const IrTensor *t = w->tensor;
    ok = w->param == k->params[k->nparams - k->nws + i] && w->param->is_ptr && t &&
         t->space == MS_GLOBAL && t->gptr && t->gptr->kind == X_PARAM && t->gptr->param == w->param;
    for (int d = 0; ok && t && d < t->rank; d++) ok = grid_only_params(t->gshape[d]);
  }
  if (!ok)
    diag_error(v->d, k->span, "internal error: malformed global_tensor() workspaces in '%s'",
               k->name);
  return ok;
}

static bool verify_kernel(IrKernel *k, Arena *ar, Diag *d) {
  Verifier v = {.k = k, .d = d, .ar = ar};
  detect_stage(&v);
  if (!check_launch(&v) || !check_unrolled_size(&v) || !check_workspaces(&v)) return false;
  for (int i = 0; i < k->ntensors; i++)
    if (!check_tensor_decl(&v, k->tensors[i]) || !check_layout(&v, k->tensors[i])) return false;
  if (v.planned && !check_smem_plan(&v)) return false;
  bool *assigned = arena_alloc(ar, (size_t)k->nvars + 1);
  Region block = {0, (int64_t)k->warps * 32, false};
  return check_block(&v, &k->body, assigned, block) && check_register_file(&v);
}

bool ir_check(IrModule *m, Diag *d) {
  /* a larger file would compile and then never load */
  if (m->nkernels > TLS_MAX_ENTRIES) {
    diag_error(d, m->kernels[TLS_MAX_ENTRIES]->span,
               "more than %d kernels "
               "(autotune points) in one file: the runtime loads at most %d",
               TLS_MAX_ENTRIES, TLS_MAX_ENTRIES);
    return false;
  }
  bool ok = true;
  for (int i = 0; i < m->nkernels; i++) ok = verify_kernel(m->kernels[i], m->ar, d) && ok;
  return ok;
}
