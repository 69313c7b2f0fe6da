/* eval_prims.c: the Tilus primitives. Every tilus.Class / tilus.Script
 * instance has them (self.range, self.mbarrier.alloc, self.tma..., as in
 * Tilus); each call checks its arguments and appends the IR statement of
 * ir.h to the current block. */
#include <string.h>

#include "eval/eval_int.h"

static const struct {
  const char *name;
  Builtin bi;
} inst_prims[] = {
    {"attrs", NS_ATTRS},
    {"blockIdx", NS_BLOCKIDX},
    {"mbarrier", NS_MBARRIER},
    {"tma", NS_TMA},
    {"wgmma", NS_WGMMA},
    {"range", P_RANGE},
    {"fast_divmod", P_FAST_DIVMOD},
    {"global_view", P_GLOBAL_VIEW},
    {"shared_tensor", P_SHARED_TENSOR},
    {"register_tensor", P_REGISTER_TENSOR},
    {"thread_group", P_THREAD_GROUP},
    {"single_thread", P_SINGLE_THREAD},
    {"cast", P_CAST},
    {"store_global", P_STORE_GLOBAL},
    {"load_global", P_LOAD_GLOBAL},
    {"store_shared", P_STORE_SHARED},
    {"load_shared", P_LOAD_SHARED},
    {"store_global_scatter", P_STORE_GLOBAL_SCATTER},
    {"print_tensor", P_PRINT_TENSOR},
    {"store_shared_scatter", P_STORE_SHARED_SCATTER},
    {"sync", P_SYNC},
    {"printf", P_PRINTF},
    {"cluster", NS_CLUSTER},
    {"setmaxnreg", P_SETMAXNREG},
    {"single_warp", P_SINGLE_WARP},
    {"warp_group", P_WARP_GROUP},
    {"static_assert", P_STATIC_ASSERT},
    {"assume", P_ASSUME},
    {"free_shared", P_FREE_SHARED},
    {"reshape_shared", P_RESHAPE_SHARED},
    {"fence", NS_FENCE},
    {"atomic", NS_ATOMIC},
    {"gridDim", NS_GRIDDIM},
    {"cuda", NS_CUDA},
    {"annotate_layout", P_ANNOTATE_LAYOUT},
    {"view", P_VIEW},
    {"copy_async", P_COPY_ASYNC},
    {"copy_async_commit_group", P_COPY_ASYNC_COMMIT},
    {"copy_async_wait_group", P_COPY_ASYNC_WAIT},
    {"copy_async_wait_all", P_COPY_ASYNC_WAIT_ALL},
    {"global_tensor", P_GLOBAL_TENSOR},
    {"lock_semaphore", P_LOCK_SEMAPHORE},
    {"release_semaphore", P_RELEASE_SEMAPHORE},
};

/* Tilus's primitives (tilus.lang.instructions) tlsc does not have yet: the
 * methods of a Script, then the groups whose every member is missing. */
static const char tilus_prims[] = " flatten ";
static const char tilus_prim_groups[] = " clc tcgen05 ";
/* members of the groups tlsc has that it lacks */
static const char tilus_group_prims[] = " cluster.map_shared_addr ";

bool ev_word_in(const char *list, const char *word) {
  size_t n = strlen(word);
  for (const char *p = list; n && (p = strstr(p, word)); p += n)
    if (p[-1] == ' ' && p[n] == ' ') return true;
  return false;
}

static const struct {
  Builtin ns;
  const char *name;
  Builtin bi;
} ns_prims[] = {
    {NS_CUDA, "resolve_dot_config", P_RESOLVE_DOT_CONFIG},
    {NS_CUDA, "default_register_layout", P_DEFAULT_REG_LAYOUT},
    {NS_CUDA, "mma_dot_config", P_MMA_DOT_CONFIG},
    {NS_CUDA, "shared_layout", P_SHARED_LAYOUT},
    {NS_MBARRIER, "alloc", P_MBAR_ALLOC},
    {NS_MBARRIER, "wait", P_MBAR_WAIT},
    {NS_MBARRIER, "arrive", P_MBAR_ARRIVE},
    {NS_MBARRIER, "arrive_and_expect_tx", P_MBAR_EXPECT_TX},
    {NS_TMA, "global_to_shared", P_TMA_G2S},
    {NS_TMA, "shared_to_global", P_TMA_S2G},
    {NS_TMA, "fence_proxy_async", P_TMA_FENCE},
    {NS_TMA, "commit_group", P_TMA_COMMIT},
    {NS_TMA, "wait_group", P_TMA_WAIT},
    {NS_WGMMA, "fence", P_WGMMA_FENCE},
    {NS_WGMMA, "mma", P_WGMMA_MMA},
    {NS_WGMMA, "commit_group", P_WGMMA_COMMIT},
    {NS_WGMMA, "wait_group", P_WGMMA_WAIT},
    {NS_MBARRIER, "arrive_and_expect_tx_multicast", P_MBAR_EXPECT_TX_MULTICAST},
    {NS_MBARRIER, "arrive_and_expect_tx_remote", P_MBAR_EXPECT_TX_REMOTE},
    {NS_CLUSTER, "sync", P_CLUSTER_SYNC},
    {NS_FENCE, "proxy_async", P_FENCE_PROXY_ASYNC},
    {NS_FENCE, "proxy_async_release", P_FENCE_PROXY_RELEASE},
};

static const char *ns_name(Builtin ns) {
  switch (ns) {
  case NS_ATTRS:
    return "attrs";
  case NS_BLOCKIDX:
    return "blockIdx";
  case NS_MBARRIER:
    return "mbarrier";
  case NS_TMA:
    return "tma";
  case NS_CLUSTER:
    return "cluster";
  case NS_CLUSTER_BLOCKIDX:
    return "cluster.blockIdx";
  case NS_CLUSTER_DIM:
    return "cluster.clusterDim";
  case NS_FENCE:
    return "fence";
  case NS_ATOMIC:
    return "atomic";
  case NS_GRIDDIM:
    return "gridDim";
  case NS_CUDA:
    return "cuda";
  case NS_DOTCFG:
    return "BlockMmaConfig";
  default:
    return "wgmma";
  }
}

static int threads_here(Eval *E, Span sp);
static bool is_atomic_member(const char *name);

/* Whether an instance is a tilus.Script or tilus.Class (has primitives). */
static bool is_tilus_instance(const Value *obj) {
  const ClassDef *c = obj->inst->cls;
  while (c && c->ck == CK_USER) c = c->base;
  return c != NULL;
}

/* Attributes of a namespace (self.mbarrier.alloc ...) or the primitives of
 * an instance (self.range ...); NULL for an instance without that name. */
Value *ev_ns_attr(Eval *E, Value *obj, const char *name, Span sp) {
  if (obj->kind == V_INST) {
    if (!is_tilus_instance(obj)) return NULL;
    for (size_t i = 0; i < sizeof inst_prims / sizeof inst_prims[0]; i++)
      if (strcmp(inst_prims[i].name, name) == 0) {
        Value *v = v_builtin(E, inst_prims[i].bi, obj);
        if (inst_prims[i].bi >= NS_ATTRS) v->kind = V_NS;
        return v;
      }
    /* the thread group being built: absolute thread indices */
    if (strcmp(name, "current_thread_begin") == 0) return v_int(E, E->tg_begin);
    if (strcmp(name, "current_num_threads") == 0) return v_int(E, threads_here(E, sp));
    if (strcmp(name, "current_thread_end") == 0) return v_int(E, E->tg_begin + threads_here(E, sp));
    if (ev_is_regop(name)) {
      Value *v = v_builtin(E, P_REGOP, obj);
      v->s = name;
      return v;
    }
    if (ev_word_in(tilus_prims, name))
      ev_error(E, sp, "%s is a Tilus primitive that tlsc does not support yet", name);
    if (ev_word_in(tilus_prim_groups, name)) {
      Value *g = v_new(E, V_NS);
      g->bi = NS_UNSUPPORTED;
      g->s = name;
      return g;
    }
    return NULL;
  }
  if (obj->bi == NS_UNSUPPORTED)
    ev_error(E, sp, "%s.%s is a Tilus primitive that tlsc does not support yet", obj->s, name);
  if (obj->bi == NS_ATOMIC && is_atomic_member(name)) {
    Value *v = v_builtin(E, P_ATOMIC, obj);
    v->s = name;
    return v;
  }
  for (size_t i = 0; i < sizeof ns_prims / sizeof ns_prims[0]; i++)
    if (ns_prims[i].ns == obj->bi && strcmp(ns_prims[i].name, name) == 0)
      return v_builtin(E, ns_prims[i].bi, obj);
  if (ev_word_in(tilus_group_prims, arena_printf(E->ar, "%s.%s", ns_name(obj->bi), name)))
    ev_error(E, sp, "%s.%s is a Tilus primitive that tlsc does not support yet", ns_name(obj->bi),
             name);
  if (obj->bi == NS_CUDA && strcmp(name, "atomic_mma_configs") == 0) {
    Value *v = v_new(E, V_NS);
    v->bi = NS_ATOMIC_MMAS;
    return v;
  }
  if (obj->bi == NS_ATOMIC_MMAS || obj->bi == NS_ATOMIC_MMA)
    return ev_atomic_mma_attr(E, obj, name, sp);
  if (obj->bi == NS_CUDA)
    ev_error(E, sp, "cuda.%s is a Tilus primitive that tlsc does not support yet", name);
  if (obj->bi == NS_DOTCFG) { /* la, lb, lc: the operand layouts */
    if (name[0] == 'l' && name[1] >= 'a' && name[1] <= 'c' && !name[2])
      return obj->items[name[1] - 'a'];
    ev_error(E, sp, "BlockMmaConfig.%s is not supported by tlsc yet (la, lb, lc are)", name);
  }
  if (obj->bi == NS_BLOCKIDX && name[0] >= 'x' && name[0] <= 'z' && !name[1])
    return v_expr(E, ir_special(E->ar, (SpecialReg)(SR_CTAID_X + name[0] - 'x')));
  /* Tilus's self.cluster: blockRank (uint32), blockIdx and clusterDim
   * (Dim3s); clusterDim is the compile-time attrs.cluster_blocks */
  if (obj->bi == NS_CLUSTER && strcmp(name, "blockRank") == 0)
    return v_expr(E, ir_special(E->ar, SR_CLUSTER_CTARANK));
  if (obj->bi == NS_CLUSTER && (strcmp(name, "blockIdx") == 0 || strcmp(name, "clusterDim") == 0)) {
    Value *d = v_new(E, V_NS);
    d->bi = name[0] == 'b' ? NS_CLUSTER_BLOCKIDX : NS_CLUSTER_DIM;
    return d;
  }
  if (obj->bi == NS_CLUSTER_BLOCKIDX && name[0] >= 'x' && name[0] <= 'z' && !name[1])
    return v_expr(E, ir_special(E->ar, (SpecialReg)(SR_CLUSTER_CTAID_X + name[0] - 'x')));
  if (obj->bi == NS_CLUSTER_DIM && E->k && name[0] >= 'x' && name[0] <= 'z' && !name[1]) {
    int64_t n = E->k->cluster[name[0] - 'x'];
    return v_int(E, n > 0 ? n : 1);
  }
  if (obj->bi == NS_GRIDDIM && name[0] >= 'x' && name[0] <= 'z' && !name[1])
    return v_expr(E, ir_special(E->ar, name[0] == 'x'   ? SR_NCTAID_X
                                       : name[0] == 'y' ? SR_NCTAID_Y
                                                        : SR_NCTAID_Z));
  /* Tilus: a fresh barrier is in phase 0, so the producer's first wait on
   * parity 1 passes at once and the consumer's on parity 0 blocks. */
  if (obj->bi == NS_MBARRIER && strcmp(name, "producer_initial_phase") == 0)
    return v_expr(E, ir_const(E->ar, DT_UINT32, 1));
  if (obj->bi == NS_MBARRIER && strcmp(name, "consumer_initial_phase") == 0)
    return v_expr(E, ir_const(E->ar, DT_UINT32, 0));
  if (obj->bi == NS_ATTRS && E->k && strcmp(name, "warps") == 0) return v_int(E, E->k->warps);
  if (obj->bi == NS_ATTRS && E->k && strcmp(name, "blocks") == 0 && E->k->grid[0])
    return v_expr(E, E->k->grid[0]);
  if (obj->kind == V_NS && obj->bi >= NS_ATTRS && obj->bi <= NS_GRIDDIM)
    ev_error(E, sp, "'%s' has no attribute '%s'", ns_name(obj->bi), name);
  ev_error(E, sp, "'%s' object has no attribute '%s'", v_type_name(obj), name);
}

/* Whether x can be written as a grid size of the metadata (docs/format.md;
 * emit_meta.c): integer constants and parameters, casts between integer
 * types, negation, + - * / %, min and max. */
static bool meta_int_expr(const IrExpr *x) {
  if (dtype_is_float(x->type) || x->type == DT_BOOL) return false;
  switch (x->kind) {
  case X_CONST:
    return true;
  case X_PARAM:
    return !x->param->is_ptr;
  case X_CAST:
    return meta_int_expr(x->a);
  case X_UNARY:
    return x->op == OP_NEG && meta_int_expr(x->a);
  case X_BINARY:
    return (x->op <= OP_MOD || x->op == OP_MIN || x->op == OP_MAX) && meta_int_expr(x->a) &&
           meta_int_expr(x->b);
  default:
    return false;
  }
}

static IrExpr *grid_dim(Eval *E, Value *v, Span sp) {
  if (!v_is_int_scalar(v))
    ev_error(E, sp,
             "self.attrs.blocks must be an integer or a list of up to "
             "3 integers, not '%s'",
             v_type_name(v));
  IrExpr *x = ev_scalar_as(E, v, DT_INT32, sp);
  if (!ev_expr_only_params(x))
    ev_error(E, sp,
             "self.attrs.blocks must be computed from kernel "
             "parameters and constants only");
  if (!meta_int_expr(x))
    ev_error(E, sp,
             "self.attrs.blocks must be an integer computed from integer kernel parameters "
             "and constants with +, -, *, //, %%, min and max");
  return x;
}

/* A constant grid must hold whole clusters: checked when either is set. */
static void grid_fits_cluster(Eval *E, Span sp) {
  for (int i = 0; i < 3; i++) {
    int64_t g, c = E->k->cluster[i];
    if (c > 1 && E->k->grid[i] && ir_is_const(E->k->grid[i], &g) && g % c)
      ev_error(E, sp,
               "the grid's %c dimension (%lld blocks) is not a multiple of the cluster's (%lld): "
               "a cluster launch needs whole clusters",
               "xyz"[i], (long long)g, (long long)c);
  }
}

/* self.attrs.blocks = ... / self.attrs.warps = ... */
void ev_ns_set_attr(Eval *E, Value *ns, const char *name, Value *v, Span sp) {
  if (ns->bi != NS_ATTRS || !E->k)
    ev_error(E, sp, "cannot set attribute '%s' of '%s'", name, ns_name(ns->bi));
  IrKernel *k = E->k;
  if (strcmp(name, "blocks") == 0) {
    bool seq = v->kind == V_LIST || v->kind == V_TUPLE;
    int n = seq ? v->n : 1;
    if (n < 1 || n > 3) ev_error(E, sp, "self.attrs.blocks takes 1 to 3 dimensions, not %d", n);
    for (int i = 0; i < 3; i++)
      k->grid[i] = i < n ? grid_dim(E, seq ? v->items[i] : v, sp) : ir_const(E->ar, DT_INT32, 1);
    grid_fits_cluster(E, sp);
    return;
  }
  if (strcmp(name, "warps") == 0) {
    int64_t w = v_to_int(E, v, sp, "warps");
    if (w < 1 || w > 32) ev_error(E, sp, "warps must be between 1 and 32, not %lld", (long long)w);
    if (E->tg_explicit) ev_error(E, sp, "self.attrs.warps must be set outside thread groups");
    k->warps = (int)w;
    E->tg_count = (int)w * 32;
    return;
  }
  if (strcmp(name, "cluster_blocks") == 0) {
    /* Tilus: an int, or a list of up to 3, compile-time */
    bool seq = v->kind == V_LIST || v->kind == V_TUPLE;
    int n = seq ? v->n : 1;
    if (n < 1 || n > 3)
      ev_error(E, sp, "self.attrs.cluster_blocks takes 1 to 3 dimensions, not %d", n);
    int64_t dims[3] = {1, 1, 1}, total = 1;
    for (int i = 0; i < n; i++) {
      Value *d = seq ? v->items[i] : v;
      if (d->kind != V_INT)
        ev_error(E, sp, "self.attrs.cluster_blocks must be compile-time integers, not '%s'",
                 v_type_name(d));
      if (d->i < 1 || d->i > IR_MAX_CLUSTER_CTAS)
        ev_error(E, sp, "a cluster dimension must be between 1 and %d, not %lld",
                 IR_MAX_CLUSTER_CTAS, (long long)d->i);
      dims[i] = d->i;
      total *= d->i;
    }
    if (total > IR_MAX_CLUSTER_CTAS)
      ev_error(E, sp, "a cluster of %lld CTAs: at most %d (the portable cluster size)",
               (long long)total, IR_MAX_CLUSTER_CTAS);
    for (int i = 0; i < 3; i++) k->cluster[i] = dims[i];
    grid_fits_cluster(E, sp);
    return;
  }
  ev_error(E, sp,
           "'attrs' has no attribute '%s' (blocks, warps and cluster_blocks can be "
           "set)",
           name);
}

/* ----------------------------------------------------------- helpers */

static Value *arg_list(Eval *E, Value *v, Span sp, const char *what) {
  if (v->kind != V_LIST && v->kind != V_TUPLE)
    ev_error(E, sp, "%s must be a list, not '%s'", what, v_type_name(v));
  return v;
}

/* A compile-time shape: 1..IR_MAX_RANK positive integers. */
static int const_shape(Eval *E, Value *v, Span sp, int64_t *shape) {
  arg_list(E, v, sp, "shape");
  if (v->n < 1 || v->n > IR_MAX_RANK)
    ev_error(E, sp, "shape must have 1 to %d dimensions, not %d", IR_MAX_RANK, v->n);
  for (int i = 0; i < v->n; i++) {
    shape[i] = v_to_int(E, v->items[i], sp, "shape");
    if (shape[i] <= 0)
      ev_error(E, sp, "shape dimensions must be positive, not %lld", (long long)shape[i]);
  }
  return v->n;
}

/* Offsets into a global tensor: one int32 expression per dimension. */
static IrExpr **offsets(Eval *E, Value *v, Span sp, int rank) {
  arg_list(E, v, sp, "offsets");
  if (v->n != rank)
    ev_error(E, sp, "offsets has %d entries but the global tensor has rank %d", v->n, rank);
  IrExpr **o = arena_alloc(E->ar, sizeof(IrExpr *) * rank);
  for (int i = 0; i < rank; i++) {
    if (!v_is_int_scalar(v->items[i]))
      ev_error(E, sp, "offsets must be integers, not '%s'", v_type_name(v->items[i]));
    o[i] = ev_scalar_as(E, v->items[i], DT_INT32, sp);
  }
  return o;
}

static IrStmt *stmt(Eval *E, SKind k, Span sp) {
  IrStmt *s = ir_stmt_new(E->ar, k, sp);
  ev_emit(E, s);
  return s;
}

static int threads_here(Eval *E, Span sp) {
  if (E->tg_count == 0)
    ev_error(E, sp,
             "set self.attrs.warps before this point: the number of "
             "threads is not known yet");
  return E->tg_count;
}

static IrTensor *reg_tensor(Eval *E, DType dt, int rank, const int64_t *shape, Span sp) {
  IrTensor *t = ir_new_tensor(E->ar, E->k, ev_hint(E, "r"), MS_REGISTER, dt, rank, shape, sp);
  t->nthreads = threads_here(E, sp);
  return t;
}

static IrRef barrier_ref(Eval *E, Value *v, Span sp) {
  IrRef r = v_to_ref(E, v ? v : v_none(E), sp, "barrier");
  if (r.t->is_mbarrier && r.nidx == 0 && r.t->shape[0] == 1) { /* alloc(counts=[1]) as one */
    r.idx[0] = ir_const(E->ar, DT_INT32, 0);
    r.nidx = 1;
  }
  if (!r.t->is_mbarrier || r.nidx != 1)
    ev_error(E, sp,
             "barrier must be one mbarrier (an element of "
             "self.mbarrier.alloc(...)), not a tensor view");
  return r;
}

/* A Tilus argument tlsc takes only at its default (None, or the value
 * given): an error at its span otherwise. */
static void only_default(Eval *E, Args *a, const char *const *names, int i, Value *v,
                         const Value *dflt, const char *fname, Span sp) {
  if (!v || (v->kind == V_NONE && !dflt) || (dflt && v_same(E, v, dflt, sp))) return;
  ev_error(E, ev_arg_span(a, names, i, sp), "%s(%s=...) is not supported by tlsc yet%s", fname,
           names[i], dflt ? arena_printf(E->ar, " (only %s)", ev_repr(E, dflt, sp)) : "");
}

static IrExpr *u32(Eval *E, Value *v, Span sp, const char *what) {
  if (!v_is_int_scalar(v)) ev_error(E, sp, "%s must be an integer, not '%s'", what, v_type_name(v));
  return ev_scalar_as(E, v, DT_UINT32, sp);
}

/* ----------------------------------------------------- scalars, loops */

/* self.range(end) / (start, end[, step], unroll=N): a run-time loop
 * description that `for` turns into S_FOR. */
static Value *p_range(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"start", "end", "step", "unroll", NULL};
  Value *v[4];
  ev_bind_args(E, a, sp, "range", names, 1, v);
  Value *r = v_seq(E, V_TUPLE, 3);
  r->kind = V_NS;
  r->bi = P_RANGE;
  r->items[0] = v[1] ? v[0] : v_int(E, 0);
  r->items[1] = v[1] ? v[1] : v[0];
  r->items[2] = v[2] ? v[2] : v_int(E, 1);
  for (int i = 0; i < 3; i++)
    if (!v_is_int_scalar(r->items[i]))
      ev_error(E, sp, "range() bounds must be integers, not '%s'", v_type_name(r->items[i]));
  int64_t step;
  if (r->items[2]->kind != V_EXPR || ir_is_const(r->items[2]->x, &step)) {
    step = v_to_int(E, r->items[2], sp, "step");
    if (step == 0) ev_error(E, sp, "range() step must not be zero");
  }
  r->i = v[3] ? v_to_int(E, v[3], sp, "unroll") : 0;
  if (r->i < 0 || r->i > 1024)
    ev_error(E, sp, "unroll must be between 0 and 1024, not %lld", (long long)r->i);
  return r;
}

/* self.fast_divmod(a, b) -> (a / b, a % b). */
static Value *p_fast_divmod(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"a", "b", NULL};
  Value *v[2];
  ev_bind_args(E, a, sp, "fast_divmod", names, 2, v);
  Value *r = v_seq(E, V_TUPLE, 2);
  r->items[0] = ev_eval_binop(E, TOK_FLOORDIV, v[0], v[1], sp);
  r->items[1] = ev_eval_binop(E, '%', v[0], v[1], sp);
  return r;
}

/* ------------------------------------------------------------ tensors */

/* A compile-time global dimension must be a positive int32 (dimensions
 * are int32 in the IR): a larger one would wrap silently, a negative or
 * zero one would describe no memory. */
static void check_global_dim(Eval *E, int64_t dim, Span sp) {
  if (dim < 1 || dim > INT32_MAX)
    ev_error(E, sp,
             "global shape dimension %lld is out of range (1 to "
             "2147483647)",
             (long long)dim);
}

/* The bytes of a global tensor whose dimensions are all compile-time
 * constants must fit in int64: its strides are folded at compile time. */
static void check_global_bytes(Eval *E, const int64_t *shape, int rank, DType dt, Span sp) {
  int64_t bytes = dtype_bytes(dt);
  bool overflow = false;
  for (int i = 0; i < rank; i++) {
    if (shape[i] < 0) /* a run-time dimension: checked at launch */
      return;
    overflow |= __builtin_mul_overflow(bytes, shape[i], &bytes);
  }
  if (overflow)
    ev_error(E, sp,
             "global tensor is too large: its size in bytes overflows "
             "int64");
}

/* self.global_view(ptr, dtype=, shape=[...]): a global tensor over a
 * pointer parameter, shape may be run-time. */
static Value *p_global_view(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"ptr", "dtype", "shape", "strides", NULL};
  Value *v[4];
  ev_bind_args(E, a, sp, "global_view", names, 3, v);
  only_default(E, a, names, 3, v[3], NULL, "global_view", sp);
  IrExpr *p = v[0]->kind == V_EXPR ? v[0]->x : NULL;
  if (!p || p->kind != X_PARAM || !p->param->is_ptr)
    ev_error(E, sp,
             "global_view() needs a pointer parameter (~dtype), not "
             "'%s'",
             v_type_name(v[0]));
  DType dt = v_to_dtype(E, v[1], sp, "dtype");
  if (p->param->elem == DT_VOID) /* void_p: its first view gives the element type */
    p->param->elem = dt;
  else if (p->param->elem != dt)
    ev_error(
        E, sp, "global_view() of a ~%s pointer as %s%s", dtype_name(p->param->elem), dtype_name(dt),
        ev_is_void_param(E, p->param) ? " (a void_p parameter takes the dtype of its first view)"
                                      : "");
  arg_list(E, v[2], sp, "shape");
  int rank = v[2]->n;
  if (rank < 1 || rank > IR_MAX_RANK)
    ev_error(E, sp, "shape must have 1 to %d dimensions, not %d", IR_MAX_RANK, rank);
  int64_t shape[IR_MAX_RANK];
  IrExpr *g[IR_MAX_RANK];
  for (int i = 0; i < rank; i++) {
    Value *d = v[2]->items[i];
    if (!v_is_int_scalar(d)) ev_error(E, sp, "shape must be integers, not '%s'", v_type_name(d));
    if (d->kind == V_INT) check_global_dim(E, d->i, sp);
    g[i] = ev_scalar_as(E, d, DT_INT32, sp);
    int64_t c;
    shape[i] = ir_is_const(g[i], &c) ? c : -1;
    if (!ev_expr_only_params(g[i]))
      ev_error(E, sp,
               "global shapes must be computed from kernel "
               "parameters and constants only");
  }
  check_global_bytes(E, shape, rank, dt, sp);
  IrTensor *t = ir_new_tensor(E->ar, E->k, ev_hint(E, "g"), MS_GLOBAL, dt, rank, shape, sp);
  t->gptr = p;
  for (int i = 0; i < rank; i++) t->gshape[i] = g[i];
  return v_tensor(E, t);
}

/* A name for the hidden parameter of a kernel's workspace i that no
 * parameter has: __ws0, or __ws0_ then more underscores. */
static char *workspace_name(Eval *E, int i) {
  char *name = arena_printf(E->ar, "__ws%d", i);
  for (bool taken = true; taken;) {
    taken = false;
    for (int p = 0; p < E->k->nparams && !taken; p++) taken = !strcmp(E->k->params[p]->name, name);
    if (taken) name = arena_printf(E->ar, "%s_", name);
  }
  return name;
}

/* self.global_tensor(dtype, shape, layout=None, requires_clean=False):
 * global memory that every block of the launch shares (Tilus's
 * allocate_global). tlsc compiles ahead of time, so the runtime allocates
 * it: the kernel gets a hidden pointer parameter (after the user's), the
 * tensor is a global view over it, and the metadata's `workspace` line
 * gives its dtype, its shape over the integer parameters (as the grid) and
 * whether it must be zeros at the launch. */
static Value *p_global_tensor(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"dtype", "shape", "layout", "requires_clean", NULL};
  Value *v[4] = {NULL, NULL, NULL, NULL};
  ev_bind_args(E, a, sp, "global_tensor", names, 2, v);
  only_default(E, a, names, 2, v[2], NULL, "global_tensor", sp);
  IrKernel *k = E->k;
  DType dt = v_to_dtype(E, v[0], ev_arg_span(a, names, 0, sp), "dtype");
  if (dt == DT_BOOL || dt == DT_VOID)
    ev_error(E, ev_arg_span(a, names, 0, sp),
             "global_tensor() of %s is not supported yet (int32, uint32, int64, uint64, "
             "float16, bfloat16, float32, float64)",
             dtype_name(dt));
  bool clean = false;
  if (v[3]) {
    if (v[3]->kind != V_BOOL && !(v[3]->kind == V_INT && (v[3]->i == 0 || v[3]->i == 1)))
      ev_error(E, ev_arg_span(a, names, 3, sp),
               "requires_clean must be a compile-time True or False, not %s%s%s",
               v[3]->kind == V_EXPR ? "a run-time " : "'", v_type_name(v[3]),
               v[3]->kind == V_EXPR ? "" : "'");
    clean = v[3]->i != 0;
  }
  Span ssp = ev_arg_span(a, names, 1, sp);
  arg_list(E, v[1], ssp, "shape");
  int rank = v[1]->n;
  if (rank < 1 || rank > IR_MAX_RANK)
    ev_error(E, ssp, "shape must have 1 to %d dimensions, not %d", IR_MAX_RANK, rank);
  int64_t shape[IR_MAX_RANK];
  IrExpr *g[IR_MAX_RANK];
  for (int i = 0; i < rank; i++) {
    Value *d = v[1]->items[i];
    if (!v_is_int_scalar(d)) ev_error(E, ssp, "shape must be integers, not '%s'", v_type_name(d));
    if (d->kind == V_INT) check_global_dim(E, d->i, ssp);
    g[i] = ev_scalar_as(E, d, DT_INT32, ssp);
    if (!ev_expr_only_params(g[i]))
      ev_error(E, ssp,
               "global_tensor() shape must be computed from kernel parameters and constants "
               "only: the runtime allocates the workspace from the launch's arguments");
    if (!meta_int_expr(g[i]))
      ev_error(E, ssp,
               "global_tensor() shape must be integers computed from integer kernel parameters "
               "and constants with +, -, *, //, %%, min and max");
    int64_t c;
    shape[i] = ir_is_const(g[i], &c) ? c : -1;
    if (shape[i] == -1) continue;
    check_global_dim(E, c, ssp);
  }
  check_global_bytes(E, shape, rank, dt, ssp);
  if (k->nws == IR_MAX_WORKSPACES)
    ev_error(E, sp,
             "kernel '%s' has more than %d global_tensor() workspaces (the runtime allocates at "
             "most %d per kernel)",
             k->name, IR_MAX_WORKSPACES, IR_MAX_WORKSPACES);
  IrParam *prm = arena_alloc(E->ar, sizeof(IrParam));
  prm->index = k->nparams;
  prm->name = workspace_name(E, k->nws);
  prm->type = DT_UINT64;
  prm->is_ptr = true;
  prm->elem = dt;
  prm->workspace = true;
  IrParam **ps = arena_alloc(E->ar, sizeof(IrParam *) * (size_t)(k->nparams + 1));
  if (k->nparams) memcpy(ps, k->params, sizeof(IrParam *) * (size_t)k->nparams);
  ps[k->nparams++] = prm;
  k->params = ps;
  IrTensor *t = ir_new_tensor(E->ar, k, ev_hint(E, "ws"), MS_GLOBAL, dt, rank, shape, sp);
  t->gptr = ir_param_ref(E->ar, prm);
  for (int i = 0; i < rank; i++) t->gshape[i] = g[i];
  IrWorkspace *ws = arena_alloc(E->ar, sizeof(IrWorkspace) * (size_t)(k->nws + 1));
  if (k->nws) memcpy(ws, k->ws, sizeof(IrWorkspace) * (size_t)k->nws);
  ws[k->nws++] = (IrWorkspace){.param = prm, .tensor = t, .clean = clean};
  k->ws = ws;
  return v_tensor(E, t);
}

/* The semaphore of lock_semaphore / release_semaphore: an address (a
 * 64-bit integer, as GlobalTensor[i, j].item_ptr() gives), or an element
 * of an int32 GlobalTensor itself. */
static IrExpr *semaphore_addr(Eval *E, Value *v, Span sp, const char *fname) {
  if (v->kind == V_REF && v->ref.t->space == MS_GLOBAL) {
    if (v->ref.t->dtype != DT_INT32 && v->ref.t->dtype != DT_UINT32)
      ev_error(E, sp, "%s(): a semaphore is an int32, not an element of a %s tensor", fname,
               dtype_name(v->ref.t->dtype));
    Args none = {0};
    return ev_global_item(E, v, true, &none, sp)->x;
  }
  if (v->kind == V_EXPR && (v->x->type == DT_UINT64 || v->x->type == DT_INT64))
    return ir_cast(E->ar, DT_UINT64, v->x);
  ev_error(E, sp,
           "%s() takes the address of a global int32 semaphore (GlobalTensor[i, j].item_ptr(), "
           "a 64-bit value), not '%s'",
           fname, v_type_name(v));
}

/* self.lock_semaphore(semaphore, value) / self.release_semaphore(semaphore,
 * value), as Tilus emits them: one thread of the group spins until the
 * int32 at the address equals value (acquire, GPU scope), then the group
 * syncs; one thread stores value (release, GPU scope), after the sync() the
 * script writes before it. In a single thread (single_thread()), just that
 * thread waits or stores. */
static Value *p_semaphore(Eval *E, Args *a, Span sp, bool lock) {
  static const char *const names[] = {"semaphore", "value", NULL};
  const char *fname = lock ? "lock_semaphore" : "release_semaphore";
  Value *v[2];
  ev_bind_args(E, a, sp, fname, names, 2, v);
  IrExpr *addr = semaphore_addr(E, v[0], ev_arg_span(a, names, 0, sp), fname);
  Span vsp = ev_arg_span(a, names, 1, sp);
  if (!v_is_int_scalar(v[1]))
    ev_error(E, vsp, "%s() value must be an integer, not '%s'", fname, v_type_name(v[1]));
  IrExpr *value = ev_scalar_as(E, v[1], DT_INT32, vsp);
  int count = threads_here(E, sp);
  bool single = E->tg_explicit && count == 1;
  if (lock && !single && (E->tg_begin % 32 != 0 || count % 32 != 0))
    ev_error(E, sp,
             "lock_semaphore() in a thread group needs whole warps (the group syncs after the "
             "wait): the group (threads [%d, %d) of the block) must begin and end at multiples "
             "of 32, or call it in single_thread()",
             E->tg_begin, E->tg_begin + count);
  IrStmt *op = ir_stmt_new(E->ar, lock ? S_SEM_WAIT : S_SEM_RELEASE, sp);
  op->sem.addr = addr;
  op->sem.value = value;
  if (single) {
    ev_emit(E, op);
    return v_none(E);
  }
  IrStmt *one = stmt(E, S_SINGLE_THREAD, sp);
  ir_block_push(E->ar, &one->body, op);
  if (lock) stmt(E, S_SYNC, sp);
  return v_none(E);
}

/* self.shared_tensor(dtype=, shape=[...]) */
static Value *p_shared_tensor(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"dtype", "shape", NULL};
  Value *v[2];
  ev_bind_args(E, a, sp, "shared_tensor", names, 2, v);
  DType dt = v_to_dtype(E, v[0], sp, "dtype");
  int64_t shape[IR_MAX_RANK];
  int rank = const_shape(E, v[1], sp, shape);
  return v_tensor(E, ir_new_tensor(E->ar, E->k, ev_hint(E, "s"), MS_SHARED, dt, rank, shape, sp));
}

/* self.register_tensor(dtype=, shape=, init=): owned by the threads of
 * the current group; init fills it. */
static Value *p_register_tensor(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"dtype", "shape", "init", NULL};
  Value *v[3];
  ev_bind_args(E, a, sp, "register_tensor", names, 2, v);
  DType dt = v_to_dtype(E, v[0], sp, "dtype");
  int64_t shape[IR_MAX_RANK];
  int rank = const_shape(E, v[1], sp, shape);
  IrTensor *t = reg_tensor(E, dt, rank, shape, sp);
  TensorRec *rec = ev_tensor_rec(E, t);
  rec->blk = E->cur;
  rec->rt_depth = E->rt_depth;
  rec->tg_begin = E->tg_begin;
  rec->tg_count = E->tg_count;
  if (v[2] && (v[2]->kind == V_FUNC || v[2]->kind == V_BOUND || v[2]->kind == V_BUILTIN))
    v[2] = ev_index_init(E, v[2], rank, ev_arg_span(a, names, 2, sp));
  if (v[2] && v[2]->kind != V_NONE) {
    if (!v_is_scalar(v[2])) ev_error(E, sp, "init must be a scalar, not '%s'", v_type_name(v[2]));
    if (v_is_number(v[2])) {
      t->has_init = true;
      t->init = v[2]->kind == V_FLOAT ? v[2]->f : (double)v[2]->i;
    }
    IrStmt *s = stmt(E, S_FILL, sp);
    s->fill.dst = t;
    s->fill.value = ev_scalar_as(E, v[2], dt, ev_arg_span(a, names, 2, sp));
    rec->fill = s;
  }
  return v_tensor(E, t);
}

/* self.cast(x, dtype=): a new register tensor (or a scalar conversion). */
static Value *p_cast(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"x", "dtype", NULL};
  Value *v[2];
  ev_bind_args(E, a, sp, "cast", names, 2, v);
  DType dt = v_to_dtype(E, v[1], sp, "dtype");
  if (v_is_scalar(v[0])) {
    ev_check_compute_dtype(E, dt, sp, "a scalar of");
    return v_expr(E, ev_scalar_as(E, v[0], dt, sp));
  }
  IrTensor *x = v_to_tensor(E, v[0], sp, MS_REGISTER, "cast() argument");
  ev_check_cast_to(E, x->dtype, dt, sp);
  IrTensor *t = ir_new_tensor(E->ar, E->k, ev_hint(E, "r"), MS_REGISTER, dt, x->rank, x->shape, sp);
  t->nthreads = x->nthreads;
  IrStmt *s = stmt(E, S_CAST, sp);
  s->cast.dst = t;
  s->cast.src = x;
  return v_tensor(E, t);
}

static void same_shape(Eval *E, Span sp, const char *what, int rank, const int64_t *dims,
                       const IrTensor *x) {
  bool ok = rank == x->rank;
  for (int i = 0; ok && i < rank; i++) ok = dims[i] == x->shape[i];
  if (!ok) ev_error(E, sp, "%s: the register tensor's shape does not match", what);
}

/* self.store_global(dst, src, offsets=[...]) */
/* dims= of a global copy: the global dimensions a rank-`rank` tile runs
 * along, increasing (None: all of them, rank == the global's). */
static void copy_dims(Eval *E, Value *dims, IrTensor *g, int rank, IrGlobalCopyStmt *c, Span sp) {
  if (!dims || dims->kind == V_NONE) {
    if (rank != g->rank)
      ev_error(E, sp,
               "a rank-%d tile of a rank-%d global tensor needs dims= (the global "
               "dimensions it runs along)",
               rank, g->rank);
    return;
  }
  if ((dims->kind != V_LIST && dims->kind != V_TUPLE) || dims->n != rank)
    ev_error(E, sp, "dims= must list %d global dimensions, one per tile dimension", rank);
  c->ndims = rank;
  for (int i = 0; i < rank; i++) {
    int64_t d = v_to_int(E, dims->items[i], sp, "dims");
    if (d < 0 || d >= g->rank || (i > 0 && d <= c->dims[i - 1]))
      ev_error(E, sp, "dims= must be increasing dimensions of the rank-%d global tensor", g->rank);
    c->dims[i] = (int)d;
  }
}

static Value *p_store_global(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"dst", "src", "offsets", "dims", NULL};
  Value *v[4];
  v[3] = NULL;
  ev_bind_args(E, a, sp, "store_global", names, 3, v);
  IrTensor *g = v_to_tensor(E, v[0], sp, MS_GLOBAL, "store_global() dst");
  IrTensor *x = v_to_tensor(E, v[1], sp, MS_REGISTER, "store_global() src");
  if (x->dtype != g->dtype)
    ev_error(E, sp,
             "store_global(): dtype %s does not match the global "
             "tensor's %s; cast it first",
             dtype_name(x->dtype), dtype_name(g->dtype));
  IrGlobalCopyStmt c = {0};
  copy_dims(E, v[3], g, x->rank, &c, sp);
  IrStmt *s = stmt(E, S_STORE_GLOBAL, sp);
  s->gmem = c;
  s->gmem.global = g;
  s->gmem.reg = x;
  s->gmem.offsets = offsets(E, v[2], sp, g->rank);
  s->gmem.noffsets = g->rank;
  return v_none(E);
}

/* out= of a load: the loaded tensor t copied into the user's tensor (a
 * cast to the same type: layout inference gives both one layout). */
static Value *load_into(Eval *E, Value *out, IrTensor *t, const char *what, Span sp) {
  if (!out || out->kind == V_NONE) return v_tensor(E, t);
  IrTensor *dst = v_to_tensor(E, out, sp, MS_REGISTER, what);
  same_shape(E, sp, what, t->rank, t->shape, dst);
  IrStmt *cp = stmt(E, S_CAST, sp);
  cp->cast.dst = dst;
  cp->cast.src = t;
  return out;
}

/* self.load_global(g, offsets=[...], shape=[...]) */
static Value *p_load_global(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"src", "offsets", "shape", "dims", "out", NULL};
  Value *v[5];
  v[3] = v[4] = NULL;
  ev_bind_args(E, a, sp, "load_global", names, 3, v);
  IrTensor *g = v_to_tensor(E, v[0], sp, MS_GLOBAL, "load_global() src");
  int64_t shape[IR_MAX_RANK];
  int rank = const_shape(E, v[2], sp, shape);
  IrGlobalCopyStmt c = {0};
  copy_dims(E, v[3], g, rank, &c, sp);
  IrExpr **o = offsets(E, v[1], sp, g->rank);
  IrTensor *t = reg_tensor(E, g->dtype, rank, shape, sp);
  IrStmt *s = stmt(E, S_LOAD_GLOBAL, sp);
  s->gmem = c;
  s->gmem.reg = t;
  s->gmem.global = g;
  s->gmem.offsets = o;
  s->gmem.noffsets = g->rank;
  return load_into(E, v[4], t, "load_global() out", sp);
}

/* self.store_shared(dst, src) */
static Value *p_store_shared(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"dst", "src", "offsets", "dims", NULL};
  Value *v[4];
  ev_bind_args(E, a, sp, "store_shared", names, 2, v);
  only_default(E, a, names, 2, v[2], NULL, "store_shared", sp);
  only_default(E, a, names, 3, v[3], NULL, "store_shared", sp);
  IrRef r = v_to_ref(E, v[0], sp, "store_shared() dst");
  IrTensor *x = v_to_tensor(E, v[1], sp, MS_REGISTER, "store_shared() src");
  int64_t dims[IR_MAX_RANK];
  for (int i = 0; i < ir_ref_rank(&r); i++) dims[i] = ir_ref_dim(&r, i);
  same_shape(E, sp, "store_shared()", ir_ref_rank(&r), dims, x);
  if (x->dtype != r.t->dtype)
    ev_error(E, sp,
             "store_shared(): dtype %s into a %s tensor; cast it "
             "first",
             dtype_name(x->dtype), dtype_name(r.t->dtype));
  IrStmt *s = stmt(E, S_STORE_SHARED, sp);
  s->smem.shared = r;
  s->smem.reg = x;
  return v_none(E);
}

/* A store into a whole destination (scatter stores, atomics): dst as a
 * view (a shared view, or a global tensor with its rank), the values of
 * its dtype, and indices (scatter, dim >= 0) of their shape. The tile
 * spans dst's dimensions other than dim whole (compile-time sizes). */
typedef struct WholeStore {
  const char *name;
  bool shared;
  IrRef dst;
  IrTensor *values, *indices;
  int dim; /* -1: no scatter */
} WholeStore;

static void whole_store_check(Eval *E, WholeStore *w, Span sp) {
  const char *name = w->name;
  IrTensor *x = w->values, *idx = w->indices;
  int rank = w->shared ? ir_ref_rank(&w->dst) : w->dst.t->rank;
  if (idx && (w->dim < 0 || w->dim >= rank))
    ev_error(E, sp, "%s(): dim %d out of range for a rank-%d dst", name, w->dim, rank);
  if (x->dtype != w->dst.t->dtype)
    ev_error(E, sp, "%s(): values are %s, dst is %s; cast them first", name, dtype_name(x->dtype),
             dtype_name(w->dst.t->dtype));
  if (idx && idx->dtype != DT_INT32 && idx->dtype != DT_UINT32 && idx->dtype != DT_INT64 &&
      idx->dtype != DT_UINT64)
    ev_error(E, sp, "%s(): indices must be a 32- or 64-bit integer tensor, not %s", name,
             dtype_name(idx->dtype));
  bool ok = x->rank == rank && (!idx || idx->rank == rank);
  for (int d = 0; ok && idx && d < rank; d++) ok = idx->shape[d] == x->shape[d];
  if (!ok)
    ev_error(E, sp, "%s(): %s must have one shape, of dst's rank (%d)", name,
             idx ? "indices and values" : "values", rank);
  for (int d = 0; d < rank; d++) {
    if (idx && d == w->dim) continue;
    int64_t n = w->shared || !w->dst.t->gshape[d] ? ir_ref_dim(&w->dst, d) : -1;
    if (n < 0 && !ir_is_const(w->dst.t->gshape[d], &n))
      ev_error(E, sp,
               "%s(): dst's dimension %d must be a compile-time size (the tile spans it whole)",
               name, d);
    if (n != x->shape[d])
      ev_error(E, sp, "%s(): dst's dimension %d is %lld, the tile's %lld (they must match%s)", name,
               d, (long long)n, (long long)x->shape[d], idx ? " off dim" : "");
  }
  ev_reg_use(E, x, sp);
  if (idx) ev_reg_use(E, idx, sp);
}

/* The destination of a whole store: a shared view or a global tensor. */
static IrRef whole_dst(Eval *E, bool shared, Value *v, const char *name, Span sp) {
  IrRef r = {0};
  const char *what = arena_printf(E->ar, "%s() dst", name);
  if (shared)
    r = v_to_ref(E, v, sp, what);
  else
    r.t = v_to_tensor(E, v, sp, MS_GLOBAL, what);
  if (shared && (r.t->space != MS_SHARED || r.t->is_mbarrier))
    ev_error(E, sp, "%s(): dst must be a shared tensor", name);
  return r;
}

/* The statement of a whole store (offsets 0 for a global one). */
static IrStmt *whole_store_stmt(Eval *E, const WholeStore *w, IrAtomic *atomic, Span sp) {
  IrStmt *s = stmt(E, w->shared ? S_STORE_SHARED : S_STORE_GLOBAL, sp);
  if (w->shared) {
    s->smem.shared = w->dst;
    s->smem.reg = w->values;
    s->smem.scatter = w->indices;
    s->smem.scatter_dim = w->dim;
    s->smem.atomic = atomic;
    return s;
  }
  int rank = w->dst.t->rank;
  s->gmem.global = w->dst.t;
  s->gmem.reg = w->values;
  s->gmem.scatter = w->indices;
  s->gmem.scatter_dim = w->dim;
  s->gmem.atomic = atomic;
  s->gmem.noffsets = rank;
  s->gmem.offsets = arena_alloc(E->ar, sizeof(IrExpr *) * (size_t)rank);
  for (int d = 0; d < rank; d++) s->gmem.offsets[d] = ir_const(E->ar, DT_INT32, 0);
  return s;
}

/* store_global_scatter(dst, *, dim, indices, values) and
 * store_shared_scatter: element k of values goes to dst at k's coordinates
 * with the one along dim replaced by indices[k]; the tile spans dst's other
 * dimensions whole (Tilus's rules). An index outside dst's dimension is
 * skipped, where Tilus's store would be undefined. */
static Value *p_store_scatter(Eval *E, bool shared, Args *a, Span sp) {
  static const char *const names[] = {"dst", "dim", "indices", "values", NULL};
  WholeStore w = {.name = shared ? "store_shared_scatter" : "store_global_scatter",
                  .shared = shared};
  Value *v[4];
  if (a->npos > 1)
    ev_error(E, sp, "%s() takes 1 positional argument; dim, indices and values are keyword-only",
             w.name);
  ev_bind_args(E, a, sp, w.name, names, 4, v);
  w.dst = whole_dst(E, shared, v[0], w.name, sp);
  w.dim = (int)v_to_int(E, v[1], sp, "dim");
  w.indices = v_to_tensor(E, v[2], sp, MS_REGISTER, arena_printf(E->ar, "%s() indices", w.name));
  w.values = v_to_tensor(E, v[3], sp, MS_REGISTER, arena_printf(E->ar, "%s() values", w.name));
  whole_store_check(E, &w, sp);
  whole_store_stmt(E, &w, NULL, sp);
  return v_none(E);
}

/* ------------------------------------------------------------ atomics */

static const char *const atomic_ops[] = {"add", "sub", "min", "max", "exch", "cas"};

/* The op of self.atomic.NAME ({shared,global}_OP, or
 * {shared,global}_scatter_OP for add, sub, min and max), -1 for none. */
static int atomic_member(const char *name, bool *shared, bool *scatter) {
  *shared = strncmp(name, "shared_", 7) == 0;
  if (!*shared && strncmp(name, "global_", 7) != 0) return -1;
  const char *op = name + 7;
  *scatter = strncmp(op, "scatter_", 8) == 0;
  if (*scatter) op += 8;
  for (int i = 0; i < (int)(sizeof atomic_ops / sizeof atomic_ops[0]); i++)
    if (strcmp(op, atomic_ops[i]) == 0) return *scatter && i >= ATOM_EXCH ? -1 : i;
  return -1;
}

static bool is_atomic_member(const char *name) {
  bool shared, scatter;
  return atomic_member(name, &shared, &scatter) >= 0;
}

static const char *qualifier(Eval *E, Value *v, const char *dflt, const char *list,
                             const char *what, Span sp) {
  if (!v || v->kind == V_NONE) return dflt;
  if (v->kind != V_STR || !ev_word_in(list, v->s))
    ev_error(E, sp, "%s must be one of%s", what, list);
  return v->s;
}

/* self.atomic.shared_add(dst, values, *, sem, scope, output) ... and the
 * scatter forms (dst, *, dim, indices, values, ...): each element of the
 * values combined into its destination atomically; returns the values the
 * destinations held before (into output when given). */
static Value *p_atomic(Eval *E, const char *name, Args *a, Span sp) {
  static const char *const plain[] = {"dst", "values", "sem", "scope", "output", NULL};
  static const char *const cas[] = {"dst", "compare", "values", "sem", "scope", "output", NULL};
  static const char *const scat[] = {"dst", "dim",   "indices", "values",
                                     "sem", "scope", "output",  NULL};
  WholeStore w = {.name = name, .dim = -1};
  bool scatter;
  IrAtomicOp op = (IrAtomicOp)atomic_member(name, &w.shared, &scatter);
  const char *const *names = scatter ? scat : op == ATOM_CAS ? cas : plain;
  int npos = scatter ? 1 : op == ATOM_CAS ? 3 : 2;
  Value *v[7] = {NULL};
  if (a->npos > npos)
    ev_error(E, sp, "%s() takes %d positional argument%s; the rest are keyword-only", name, npos,
             npos > 1 ? "s" : "");
  ev_bind_args(E, a, sp, name, names, scatter ? 4 : npos, v);
  int k = scatter ? 3 : op == ATOM_CAS ? 2 : 1; /* values */
  w.dst = whole_dst(E, w.shared, v[0], name, sp);
  if (scatter) {
    w.dim = (int)v_to_int(E, v[1], sp, "dim");
    w.indices = v_to_tensor(E, v[2], sp, MS_REGISTER, arena_printf(E->ar, "%s() indices", name));
  }
  w.values = v_to_tensor(E, v[k], sp, MS_REGISTER, arena_printf(E->ar, "%s() values", name));
  whole_store_check(E, &w, sp);
  if (!ir_atomic_ok(op, w.values->dtype))
    ev_error(E, sp,
             "%s(): no atomic %s on %s (add, sub, exch and cas take 32- and 64-bit integers "
             "and floats; min and max integers)",
             name, atomic_ops[op], dtype_name(w.values->dtype));
  IrAtomic *at = arena_alloc(E->ar, sizeof *at);
  at->op = op;
  at->sem = qualifier(E, v[k + 1], "relaxed", " relaxed acquire release acq_rel ", "sem", sp);
  at->scope =
      qualifier(E, v[k + 2], w.shared ? "cta" : "gpu", " cta cluster gpu sys ", "scope", sp);
  IrTensor *x = w.values;
  if (op == ATOM_CAS) {
    at->compare = v_to_tensor(E, v[1], sp, MS_REGISTER, "cas() compare");
    same_shape(E, sp, "cas() compare", x->rank, x->shape, at->compare);
    if (at->compare->dtype != x->dtype)
      ev_error(E, sp, "%s(): compare is %s, values %s", name, dtype_name(at->compare->dtype),
               dtype_name(x->dtype));
    ev_reg_use(E, at->compare, sp);
  }
  Value *out = v[k + 3];
  if (out && out->kind != V_NONE) {
    at->old = v_to_tensor(E, out, sp, MS_REGISTER, arena_printf(E->ar, "%s() output", name));
    same_shape(E, sp, arena_printf(E->ar, "%s() output", name), x->rank, x->shape, at->old);
    if (at->old->dtype != x->dtype)
      ev_error(E, sp, "%s(): output is %s, values %s", name, dtype_name(at->old->dtype),
               dtype_name(x->dtype));
    ev_reg_use(E, at->old, sp);
  } else {
    at->old = reg_tensor(E, x->dtype, x->rank, x->shape, sp);
  }
  whole_store_stmt(E, &w, at, sp);
  return v_tensor(E, at->old);
}

/* self.load_shared(src_view) */
static Value *p_load_shared(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"src", "out", NULL};
  Value *v[2];
  v[1] = NULL;
  ev_bind_args(E, a, sp, "load_shared", names, 1, v);
  IrRef r = v_to_ref(E, v[0], sp, "load_shared() src");
  if (r.t->is_mbarrier || ir_ref_rank(&r) < 1)
    ev_error(E, sp, "load_shared() needs a tensor view, not a barrier");
  int64_t dims[IR_MAX_RANK];
  for (int i = 0; i < ir_ref_rank(&r); i++) dims[i] = ir_ref_dim(&r, i);
  IrTensor *t = reg_tensor(E, r.t->dtype, ir_ref_rank(&r), dims, sp);
  IrStmt *s = stmt(E, S_LOAD_SHARED, sp);
  s->smem.reg = t;
  s->smem.shared = r;
  return load_into(E, v[1], t, "load_shared() out", sp);
}

/* The type a printf argument is packed as (emit_printf.c), DT_VOID for a
 * value that is not a scalar (reported by p_printf). */
static DType printf_arg_type(const Value *v) {
  switch (v->kind) {
  case V_EXPR:
    return v->x->type;
  case V_BOOL:
    return DT_BOOL;
  case V_INT:
    return v->i > INT32_MAX ? DT_UINT32 : DT_INT32;
  case V_FLOAT:
    return DT_FLOAT32;
  default:
    return DT_VOID;
  }
}

/* Checks the conversions of a printf format against the arguments. The
 * device's vprintf reads each argument from a buffer packed by its IR type
 * (32-bit integers as 4 bytes, 64-bit ones as 8, floats as doubles): a
 * missing argument, or one of another size, reads garbage. Supported: the
 * integer conversions d i u x X o c (l, ll, z, j, t for 64-bit values; h,
 * hh), the float ones f F e E g G a A, p (a 64-bit value) and %%; flags,
 * width and precision as digits. */
static void check_printf(Eval *E, Args *a) {
  const char *fmt = a->pos[0]->s;
  Span fsp = a->pos_span[0];
  int nconv = 0, cap = 8;
  const char **conv = arena_alloc(E->ar, sizeof(char *) * cap);
  int *kind = arena_alloc(E->ar, sizeof(int) * cap); /* 'i' 32-bit, 'l' 64-bit, 'f' float */
  for (const char *p = fmt; *p; p++) {
    if (*p != '%') continue;
    const char *start = p++;
    if (*p == '%') continue;
    while (*p && strchr("-+ #0", *p)) p++;
    while (*p >= '0' && *p <= '9') p++;
    if (*p == '.') p++;
    while (*p >= '0' && *p <= '9') p++;
    const char *len = p;
    while (*p && strchr("hlLzjt", *p)) p++;
    size_t nlen = (size_t)(p - len);
    const char *spec = arena_strndup(E->ar, start, (size_t)(p - start) + (*p != 0));
    if (!*p) ev_error(E, fsp, "printf() format ends inside the conversion '%s'", spec);
    bool wide = nlen && (*len == 'l' || *len == 'z' || *len == 'j' || *len == 't');
    bool len_ok = nlen == 0 || (nlen == 1 && *len != 'L') ||
                  (nlen == 2 && len[0] == len[1] && (*len == 'h' || *len == 'l'));
    int k = 0;
    if (len_ok && strchr("diouxXc", *p))
      k = wide ? 'l' : 'i';
    else if (len_ok && strchr("fFeEgGaA", *p) && (nlen == 0 || !strncmp(len, "l", nlen)))
      k = 'f';
    else if (*p == 'p' && nlen == 0)
      k = 'l';
    if (!k)
      ev_error(E, fsp,
               "printf() conversion '%s' is not supported (d, i, u, x, X, o, c with h, hh, "
               "l, ll, z, j, t; f, F, e, E, g, G, a, A; p; %%%%)",
               spec);
    if (nconv == cap) {
      const char **c2 = arena_alloc(E->ar, sizeof(char *) * cap * 2);
      int *k2 = arena_alloc(E->ar, sizeof(int) * cap * 2);
      memcpy(c2, conv, sizeof(char *) * cap);
      memcpy(k2, kind, sizeof(int) * cap);
      conv = c2, kind = k2, cap *= 2;
    }
    conv[nconv] = spec;
    kind[nconv++] = k;
  }
  int nargs = a->npos - 1;
  if (nconv != nargs)
    ev_error(E, fsp, "printf() format has %d conversion%s but %d argument%s %s given", nconv,
             nconv == 1 ? "" : "s", nargs, nargs == 1 ? "" : "s", nargs == 1 ? "was" : "were");
  for (int i = 0; i < nconv; i++) {
    DType t = printf_arg_type(a->pos[i + 1]);
    if (t == DT_VOID) continue;
    bool ok = kind[i] == 'f' ? dtype_is_float(t)
                             : !dtype_is_float(t) && (dtype_bytes(t) == 8) == (kind[i] == 'l');
    if (!ok)
      ev_error(E, a->pos_span[i + 1], "printf() conversion '%s' prints %s, not %s", conv[i],
               kind[i] == 'f'   ? "a float"
               : kind[i] == 'l' ? "a 64-bit integer"
                                : "a 32-bit integer or bool",
               dtype_name(t));
  }
}

/* self.printf(fmt, args...) */
static Value *p_printf(Eval *E, Args *a, Span sp) {
  if (a->nkw)
    ev_error(E, a->kw_span[0],
             "printf() got an unexpected keyword argument "
             "'%s'",
             a->kw_name[0]);
  if (a->npos < 1 || a->pos[0]->kind != V_STR)
    ev_error(E, sp, "printf() needs a format string first");
  check_printf(E, a);
  IrStmt *s = stmt(E, S_PRINTF, sp);
  s->print.format = (char *)a->pos[0]->s;
  s->print.nargs = a->npos - 1;
  s->print.args = arena_alloc(E->ar, sizeof(IrExpr *) * (a->npos));
  for (int i = 1; i < a->npos; i++) {
    if (!v_is_scalar(a->pos[i]))
      ev_error(E, a->pos_span[i], "printf() prints scalars, not '%s'", v_type_name(a->pos[i]));
    s->print.args[i - 1] = v_to_expr(E, a->pos[i], a->pos_span[i]);
  }
  return v_none(E);
}

/* self.print_tensor(msg, tensor, fmt=None): a register tensor of the
 * running group or a shared view, printed by the group's first thread
 * (emit_printf.c). */
static Value *p_print_tensor(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"msg", "tensor", "fmt", NULL};
  Value *v[3] = {NULL, NULL, NULL};
  ev_bind_args(E, a, sp, "print_tensor", names, 2, v);
  if (v[0]->kind != V_STR)
    ev_error(E, sp, "print_tensor(): msg must be a string, not '%s'", v_type_name(v[0]));
  if (v[2] && v[2]->kind != V_NONE && v[2]->kind != V_STR)
    ev_error(E, sp, "print_tensor(): fmt must be a string or None, not '%s'", v_type_name(v[2]));
  IrStmt *s = stmt(E, S_PRINTF, sp);
  s->print.format = (char *)v[0]->s;
  s->print.elem = v[2] && v[2]->kind == V_STR ? (char *)v[2]->s : NULL;
  DType dt;
  if (v[1]->kind == V_TENSOR && v[1]->t->space == MS_REGISTER) {
    s->print.reg = v[1]->t;
    ev_reg_use(E, s->print.reg, sp);
    dt = s->print.reg->dtype;
  } else if ((v[1]->kind == V_TENSOR || v[1]->kind == V_REF) &&
             (v[1]->kind == V_REF || v[1]->t->space == MS_SHARED)) {
    s->print.shared = v_to_ref(E, v[1], sp, "print_tensor() tensor");
    if (s->print.shared.t->space != MS_SHARED)
      ev_error(E, sp, "print_tensor() prints register and shared tensors, not a global view");
    if (s->print.shared.t->is_mbarrier || ir_ref_rank(&s->print.shared) < 1)
      ev_error(E, sp, "print_tensor() prints a tensor view, not a barrier");
    dt = s->print.shared.t->dtype;
  } else {
    ev_error(E, sp, "print_tensor() prints register and shared tensors, not '%s'",
             v_type_name(v[1]));
  }
  if (dtype_is_subbyte(dt))
    ev_error(E, sp, "print_tensor() of a %s tensor is not supported (view it as bytes)",
             dtype_name(dt));
  return v_none(E);
}

/* ---------------------------------------------------------- mbarriers */

/* self.mbarrier.alloc([count, ...]): one shared uint64 per barrier. */
static Value *p_mbar_alloc(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"counts", NULL};
  Value *v[1];
  ev_bind_args(E, a, sp, "alloc", names, 1, v);
  Value *l = v[0];
  if (v_is_int_scalar(l)) { /* alloc(counts=1): one barrier */
    l = v_seq(E, V_LIST, 1);
    l->items[0] = v[0];
  }
  l = arg_list(E, l, sp, "counts");
  if (l->n < 1 || l->n > 1024)
    ev_error(E, sp, "alloc() needs 1 to 1024 barrier counts, not %d", l->n);
  int64_t n = l->n;
  IrTensor *t = ir_new_tensor(E->ar, E->k, ev_hint(E, "mbar"), MS_SHARED, DT_UINT64, 1, &n, sp);
  t->is_mbarrier = true;
  t->mbar_counts = arena_alloc(E->ar, sizeof(int64_t) * n);
  for (int i = 0; i < n; i++) {
    t->mbar_counts[i] = v_to_int(E, l->items[i], sp, "barrier count");
    if (t->mbar_counts[i] < 1 || t->mbar_counts[i] > (1 << 20) - 1)
      ev_error(E, sp,
               "barrier count must be between 1 and 1048575, not "
               "%lld",
               (long long)t->mbar_counts[i]);
  }
  return v_tensor(E, t);
}

/* The index of the string v among names[0] and names[1] (dflt when the
 * argument was not given). */
/* An operand the PTX ISA bounds, when it is a compile-time constant: lo to
 * hi, or an error at sp (ptxas would reject the PTX, or the value would
 * wrap). Run-time values are not checked. */
static void const_in_range(Eval *E, Value *v, Span sp, const char *what, int64_t lo, int64_t hi) {
  int64_t c;
  if (v->kind == V_INT || v->kind == V_BOOL)
    c = v->i;
  else if (v->kind != V_EXPR || !ir_is_const(v->x, &c))
    return;
  if (c < lo || c > hi)
    ev_error(E, sp, "%s must be between %lld and %lld, not %lld", what, (long long)lo,
             (long long)hi, (long long)c);
}

static int one_of(Eval *E, Value *v, Span sp, const char *what, const char *const names[2],
                  int dflt) {
  if (!v) return dflt;
  for (int i = 0; i < 2 && v->kind == V_STR; i++)
    if (strcmp(v->s, names[i]) == 0) return i;
  ev_error(E, sp, "%s must be \"%s\" or \"%s\"", what, names[0], names[1]);
}

/* self.mbarrier.wait(barrier=, phase=, sem=, scope=) */
static Value *p_mbar_wait(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"barrier", "phase", "sem", "scope", NULL};
  Value *v[4];
  ev_bind_args(E, a, sp, "wait", names, 2, v);
  IrRef r = barrier_ref(E, v[0], sp);
  const_in_range(E, v[1], ev_arg_span(a, names, 1, sp), "phase (a parity)", 0, 1);
  IrExpr *phase = u32(E, v[1], sp, "phase");
  /* in the order of the enums: the user's string is the enum's name */
  static const char *const sems[2] = {"relaxed", "acquire"}, *const scopes[2] = {"cta", "cluster"};
  MbarSem sem = (MbarSem)one_of(E, v[2], sp, "sem", sems, MBAR_SEM_ACQUIRE);
  MbarScope scope = (MbarScope)one_of(E, v[3], sp, "scope", scopes, MBAR_SCOPE_CTA);
  IrStmt *s = stmt(E, S_MBAR_WAIT, sp);
  s->mbar.barrier = r;
  s->mbar.parity = phase;
  s->mbar.sem = sem;
  s->mbar.scope = scope;
  return v_none(E);
}

/* self.mbarrier.arrive(barrier) and arrive_and_expect_tx(barrier,
 * transaction_bytes=). */
static Value *p_mbar_arrive(Eval *E, Args *a, Span sp, bool tx) {
  static const char *const names[] = {"barrier", "transaction_bytes", "sem", "scope", NULL};
  static const char *const names1[] = {"barrier", "count", "sem", "scope", NULL};
  const char *fname = tx ? "arrive_and_expect_tx" : "arrive";
  Value *v[4];
  ev_bind_args(E, a, sp, fname, tx ? names : names1, tx ? 2 : 1, v);
  /* PTX's mbarrier.arrive is release.cta: Tilus's defaults */
  if (!tx) only_default(E, a, names1, 1, v[1], v_int(E, 1), fname, sp);
  only_default(E, a, names, 2, v[2], v_str(E, "release"), fname, sp);
  only_default(E, a, names, 3, v[3], v_str(E, "cta"), fname, sp);
  IrRef r = barrier_ref(E, v[0], sp);
  if (tx)
    const_in_range(E, v[1], ev_arg_span(a, names, 1, sp), "transaction_bytes", 0, (1 << 20) - 1);
  IrStmt *s = stmt(E, tx ? S_MBAR_EXPECT_TX : S_MBAR_ARRIVE, sp);
  s->mbar.barrier = r;
  if (tx) s->mbar.tx_bytes = u32(E, v[1], sp, "transaction_bytes");
  return v_none(E);
}

/* ---------------------------------------------------------------- TMA */

/* The box of a TMA copy is the shared view; the hardware limits it. */
static void check_tma(Eval *E, Span sp, IrTensor *g, IrRef *r) {
  if (r->t->is_mbarrier) ev_error(E, sp, "a TMA copy needs a tensor view, not a barrier");
  if (r->transposed) ev_error(E, sp, "a TMA copy of a transposed view is not supported");
  if (ir_ref_rank(r) != g->rank)
    ev_error(E, sp,
             "the shared view has rank %d but the global tensor has "
             "rank %d",
             ir_ref_rank(r), g->rank);
  if (r->t->dtype != g->dtype)
    ev_error(E, sp, "TMA copy between %s and %s tensors", dtype_name(g->dtype),
             dtype_name(r->t->dtype));
  for (int i = 0; i < ir_ref_rank(r); i++)
    if (ir_ref_dim(r, i) > 256)
      ev_error(E, sp, "TMA box dimension %lld exceeds 256", (long long)ir_ref_dim(r, i));
  int64_t inner = ir_ref_dim(r, ir_ref_rank(r) - 1) * dtype_bytes(g->dtype);
  if (inner % 16 != 0)
    ev_error(E, sp,
             "TMA box inner dimension must span a multiple of 16 "
             "bytes, not %lld",
             (long long)inner);
}

/* self.tma.global_to_shared(src=, dst=, offsets=, mbarrier=) */
static Value *p_tma_g2s(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"src",  "dst",       "offsets",        "mbarrier",
                                      "dims", "cta_group", "multicast_mask", "cache_policy",
                                      NULL};
  Value *v[8];
  ev_bind_args(E, a, sp, "global_to_shared", names, 4, v);
  only_default(E, a, names, 4, v[4], NULL, "global_to_shared", sp);
  only_default(E, a, names, 5, v[5], v_int(E, 1), "global_to_shared", sp);
  only_default(E, a, names, 7, v[7], NULL, "global_to_shared", sp);
  IrTensor *g = v_to_tensor(E, v[0], sp, MS_GLOBAL, "src");
  IrRef r = v_to_ref(E, v[1], sp, "dst");
  check_tma(E, sp, g, &r);
  IrExpr **o = offsets(E, v[2], sp, g->rank);
  IrRef bar = barrier_ref(E, v[3], sp);
  IrStmt *s = stmt(E, S_TMA_LOAD, sp);
  s->tma.global = g;
  s->tma.shared = r;
  s->tma.barrier = bar;
  s->tma.offsets = o;
  s->tma.noffsets = g->rank;
  if (v[6] && v[6]->kind != V_NONE) { /* Tilus: a uint16 mask of cluster ranks */
    const_in_range(E, v[6], ev_arg_span(a, names, 6, sp), "multicast_mask", 1, 0xFFFF);
    s->tma.mcast = u32(E, v[6], sp, "multicast_mask");
  }
  return v_none(E);
}

/* self.mbarrier.arrive_and_expect_tx_multicast(barrier, transaction_bytes,
 * multicast_mask, sem=, scope=) and arrive_and_expect_tx_remote(barrier,
 * transaction_bytes, target_rank, sem=, scope=), with Tilus's meanings:
 * the barrier at the same offset in other CTAs of the cluster. */
static Value *p_mbar_arrive_cluster(Eval *E, Args *a, Span sp, bool multicast) {
  static const char *const mnames[] = {
      "barrier", "transaction_bytes", "multicast_mask", "sem", "scope", NULL};
  static const char *const rnames[] = {
      "barrier", "transaction_bytes", "target_rank", "sem", "scope", NULL};
  static const char *const sems[2] = {"relaxed", "release"}, *const scopes[2] = {"cta", "cluster"};
  const char *const *names = multicast ? mnames : rnames;
  Value *v[5];
  ev_bind_args(E, a, sp,
               multicast ? "arrive_and_expect_tx_multicast" : "arrive_and_expect_tx_remote", names,
               3, v);
  IrRef r = barrier_ref(E, v[0], sp);
  const_in_range(E, v[1], ev_arg_span(a, names, 1, sp), "transaction_bytes", 0, (1 << 20) - 1);
  if (multicast)
    const_in_range(E, v[2], ev_arg_span(a, names, 2, sp), "multicast_mask", 1, 0xFFFF);
  else
    const_in_range(E, v[2], ev_arg_span(a, names, 2, sp), "target_rank", 0,
                   2 * IR_MAX_CLUSTER_CTAS - 1);
  MbarSem sem = one_of(E, v[3], sp, "sem", sems, 1) ? MBAR_SEM_RELEASE : MBAR_SEM_RELAXED;
  MbarScope scope = (MbarScope)one_of(E, v[4], sp, "scope", scopes, MBAR_SCOPE_CLUSTER);
  if (multicast && E->tg_count < 16)
    ev_error(E, sp,
             "arrive_and_expect_tx_multicast needs a thread group of at least 16 threads "
             "(thread i arrives on the barrier of CTA rank i), not %d",
             E->tg_count);
  IrStmt *s = stmt(E, multicast ? S_MBAR_MULTICAST : S_MBAR_REMOTE, sp);
  s->cmbar.barrier = r;
  s->cmbar.tx_bytes = u32(E, v[1], sp, "transaction_bytes");
  s->cmbar.ctas = u32(E, v[2], sp, multicast ? "multicast_mask" : "target_rank");
  s->cmbar.sem = sem;
  s->cmbar.scope = scope;
  return v_none(E);
}

/* self.cluster.sync(): barrier.cluster.arrive + wait over every thread of
 * every CTA of the cluster (.aligned: whole warps). */
static Value *p_cluster_sync(Eval *E, Args *a, Span sp) {
  static const char *const none[] = {NULL};
  ev_bind_args(E, a, sp, "sync", none, 0, NULL);
  if (E->tg_explicit && (E->tg_count == 1 || E->tg_begin % 32 != 0 || E->tg_count % 32 != 0))
    ev_error(E, sp,
             "cluster.sync() needs whole warps (barrier.cluster is .aligned): threads [%d, %d) "
             "of the block are not",
             E->tg_begin, E->tg_begin + E->tg_count);
  stmt(E, S_CLUSTER_SYNC, sp);
  return v_none(E);
}

/* self.setmaxnreg(nregs, action): Tilus's setmaxnreg(nregs, action),
 * setmaxnreg.ACTION.sync.aligned.u32 NREGS, by a whole warp group. */
static Value *p_setmaxnreg(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"nregs", "action", NULL};
  static const char *const actions[2] = {"inc", "dec"};
  Value *v[2];
  ev_bind_args(E, a, sp, "setmaxnreg", names, 2, v);
  int64_t n = v_to_int(E, v[0], ev_arg_span(a, names, 0, sp), "nregs");
  if (n < 24 || n > 256 || n % 8 != 0)
    ev_error(E, ev_arg_span(a, names, 0, sp),
             "setmaxnreg: the register count must be a multiple of 8 from 24 to 256, not %lld",
             (long long)n);
  bool inc = one_of(E, v[1], sp, "action", actions, 0) == 0;
  if (E->tg_count != 128 || E->tg_begin % 128 != 0)
    ev_error(E, sp,
             "setmaxnreg needs a warp group: a thread group of 128 threads starting at a "
             "multiple of 128, not threads [%d, %d)",
             E->tg_begin, E->tg_begin + E->tg_count);
  IrStmt *s = stmt(E, S_SETMAXNREG, sp);
  s->nreg.count = n;
  s->nreg.inc = inc;
  return v_none(E);
}

/* self.tma.shared_to_global(src=, dst=, offsets=) */
static Value *p_tma_s2g(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"src", "dst", "offsets", "dims", "cache_policy", NULL};
  Value *v[5];
  ev_bind_args(E, a, sp, "shared_to_global", names, 3, v);
  only_default(E, a, names, 3, v[3], NULL, "shared_to_global", sp);
  only_default(E, a, names, 4, v[4], NULL, "shared_to_global", sp);
  IrRef r = v_to_ref(E, v[0], sp, "src");
  IrTensor *g = v_to_tensor(E, v[1], sp, MS_GLOBAL, "dst");
  check_tma(E, sp, g, &r);
  IrStmt *s = stmt(E, S_TMA_STORE, sp);
  s->tma.global = g;
  s->tma.shared = r;
  s->tma.offsets = offsets(E, v[2], sp, g->rank);
  s->tma.noffsets = g->rank;
  return v_none(E);
}

/* fence()/commit_group() take nothing; wait_group(n) a constant. */
static Value *p_simple(Eval *E, Args *a, Span sp, SKind k, const char *fname, bool takes_n) {
  static const char *const names[] = {"n", NULL};
  /* tma.wait_group(n, read=False): read=True waits only for the reads of
   * shared memory (.read), as Tilus's */
  static const char *const tma_names[] = {"n", "read", NULL};
  static const char *const none[] = {NULL};
  Value *v[2] = {NULL, NULL};
  const char *const *ns = !takes_n ? none : k == S_TMA_WAIT ? tma_names : names;
  ev_bind_args(E, a, sp, fname, ns, takes_n ? 1 : 0, v);
  if (k == S_TMA_WAIT && v[1] && v[1]->kind != V_BOOL)
    ev_error(E, ev_arg_span(a, ns, 1, sp),
             "tma.wait_group(read=...) takes True or False (it picks the instruction), not %s",
             v[1]->kind == V_EXPR ? "a value computed at run time" : v_type_name(v[1]));
  int64_t n = 0;
  if (takes_n) {
    n = v_to_int(E, v[0], sp, "wait_group() argument");
    if (n < 0 || n > 7) ev_error(E, sp, "wait_group() takes 0 to 7, not %lld", (long long)n);
  }
  if (k == S_WGMMA_FENCE || k == S_WGMMA_COMMIT || k == S_WGMMA_WAIT) {
    if (E->tg_count != 128 || E->tg_begin % 128 != 0)
      ev_error(E, sp,
               "wgmma requires a warp group: a thread group of 128 "
               "threads starting at a multiple of 128");
  }
  IrStmt *s = stmt(E, k, sp);
  if (takes_n) s->wait.max_pending = n;
  if (k == S_TMA_WAIT) s->wait.read = v[1] && v[1]->i;
  return v_none(E);
}

/* self.sync(): a barrier over the threads running here. At the top level
 * it is the block's barrier; inside thread_group(B, N) it waits for exactly
 * those N threads (ir_assign_barriers gives the group a named barrier),
 * which the hardware counts in whole warps. A single thread can never
 * complete it: the other threads of its warp do not run the region. */
static Value *p_sync(Eval *E, Args *a, Span sp) {
  static const char *const none[] = {NULL};
  ev_bind_args(E, a, sp, "sync", none, 0, NULL);
  if (E->tg_explicit && E->tg_count == 1)
    ev_error(E, sp,
             "sync() inside single_thread() (or a thread group of one "
             "thread) can never complete: a barrier waits for whole "
             "warps; call it outside the single_thread() block");
  if (E->tg_explicit && (E->tg_begin % 32 != 0 || E->tg_count % 32 != 0))
    ev_error(E, sp,
             "sync() inside a thread group needs whole warps: the "
             "group (threads [%d, %d) of the block) must begin and "
             "end at multiples of 32",
             E->tg_begin, E->tg_begin + E->tg_count);
  stmt(E, S_SYNC, sp);
  return v_none(E);
}

/* ---------------------------------------------------------------- WGMMA */

/* self.wgmma.mma(a, b, acc): acc[M, N] += a[M, K] @ b[K, N]. */
/* A WGMMA accumulator made outside the warp group that first uses it (at
 * block scope, as Tilus's hopper matmul v3 and v4 do) and only filled so
 * far belongs to that warp group from then on: it moves there with its fill
 * (all the threads of the block filled it; only these use it). */
static void adopt_accumulator(Eval *E, Value *v) {
  if (v->kind != V_TENSOR || v->t->space != MS_REGISTER || v->t->nthreads == 128) return;
  IrTensor *t = v->t;
  TensorRec *rec = ev_tensor_rec(E, t);
  if (rec->used || !rec->blk || rec->elems || E->tg_begin < rec->tg_begin ||
      E->tg_begin + 128 > rec->tg_begin + rec->tg_count)
    return;
  /* the fill goes to the start of this warp group's region, which must stand
   * at the tensor's run-time depth: before the group's first wgmma.fence,
   * and outside the run-time loops and branches in the group */
  IrBlock *to = NULL;
  for (TgFrame *g = E->groups; !to && g; g = g->up)
    if (g->begin == E->tg_begin && g->count == 128 && g->rt_depth == rec->rt_depth)
      to = &g->st->body;
  if (!to) return;
  if (rec->fill) {
    IrBlock *b = rec->blk;
    int at = 0;
    while (at < b->len && b->items[at] != rec->fill) at++;
    if (at == b->len) return;
    memmove(&b->items[at], &b->items[at + 1], sizeof(IrStmt *) * (size_t)(b->len - at - 1));
    b->len--;
    IrStmt *f = ir_stmt_new(E->ar, S_FILL, rec->fill->span);
    f->fill = rec->fill->fill;
    rec->fill = f;
    ir_block_push(E->ar, to, f); /* room; then first */
    memmove(&to->items[1], &to->items[0], sizeof(IrStmt *) * (size_t)(to->len - 1));
    to->items[0] = f;
  }
  rec->blk = to;
  rec->tg_begin = E->tg_begin;
  rec->tg_count = 128;
  t->nthreads = 128;
}

static Value *p_wgmma_mma(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"a", "b", "d", NULL};
  Value *v[3];
  ev_bind_args(E, a, sp, "mma", names, 3, v);
  if (E->tg_count != 128 || E->tg_begin % 128 != 0)
    ev_error(E, sp,
             "wgmma requires a warp group: a thread group of 128 "
             "threads starting at a multiple of 128");
  adopt_accumulator(E, v[2]);
  IrWgmmaStmt w = {0};
  /* A in shared memory, or in registers (wgmma's register form) */
  if (v[0]->kind == V_TENSOR && v[0]->t->space == MS_REGISTER)
    w.ra = v_to_tensor(E, v[0], sp, MS_REGISTER, "wgmma a");
  else
    w.a = v_to_ref(E, v[0], sp, "wgmma a (a shared or register tensor)");
  IrRef rb = v_to_ref(E, v[1], sp, "wgmma b");
  IrTensor *acc = v_to_tensor(E, v[2], sp, MS_REGISTER, "wgmma accumulator");
  if ((w.ra ? w.ra->rank : ir_ref_rank(&w.a)) != 2 || ir_ref_rank(&rb) != 2 || acc->rank != 2)
    ev_error(E, sp, "wgmma operands must have rank 2");
  DType adt = ir_wgmma_a_dtype(&w);
  int64_t m = ir_wgmma_a_dim(&w, 0), k = ir_wgmma_a_dim(&w, 1), n = ir_ref_dim(&rb, 1);
  if (ir_ref_dim(&rb, 0) != k || acc->shape[0] != m || acc->shape[1] != n)
    ev_error(E, sp,
             "wgmma shapes do not match: a is [%lld, %lld], b is "
             "[%lld, %lld], acc is [%lld, %lld]",
             (long long)m, (long long)k, (long long)ir_ref_dim(&rb, 0), (long long)n,
             (long long)acc->shape[0], (long long)acc->shape[1]);
  if (!dtype_wgmma_inputs_ok(adt, rb.t->dtype))
    ev_error(E, sp,
             "WGMMA has no shape for %s x %s inputs (float16 or "
             "bfloat16, both the same, or float8_e4m3/float8_e5m2 in any pair)",
             dtype_name(adt), dtype_name(rb.t->dtype));
  bool fp8 = dtype_is_fp8(adt);
  if (w.ra && fp8)
    ev_error(E, sp,
             "wgmma with A in registers takes float16 or bfloat16 A (fp8 A must be a shared "
             "tile)");
  if (w.ra && w.ra->nthreads != 128)
    ev_error(E, sp,
             "wgmma's register operand A must be a register tensor of this warp group (made "
             "inside its 128-thread group), not one of %d threads",
             w.ra->nthreads);
  if (acc->dtype != DT_FLOAT32 && !(acc->dtype == DT_FLOAT16 && (adt == DT_FLOAT16 || fp8)))
    ev_error(E, sp,
             "WGMMA accumulates in float32 (or float16 for float16 or fp8 "
             "inputs), not %s",
             dtype_name(acc->dtype));
  int64_t kstep = fp8 ? 32 : 16;
  if (m % 64 != 0 || n < 8 || n > 256 || n % 8 != 0 || k % kstep != 0)
    ev_error(E, sp,
             "WGMMA has no m64n%lldk%lld shape for a [%lld, %lld] x "
             "[%lld, %lld] product (M must be a multiple of 64, N a "
             "multiple of 8 in 8..256, K a multiple of %lld)",
             (long long)n, (long long)kstep, (long long)m, (long long)k, (long long)k, (long long)n,
             (long long)kstep);
  if (fp8 && (w.a.transposed || !rb.transposed))
    ev_error(E, sp,
             "fp8 WGMMA reads K-major operands only: %s must be %s (the ISA has no "
             "transposed fp8 operands)",
             w.a.transposed ? "a" : "b",
             w.a.transposed ? "an [M, K] tile with K contiguous, not a transposed view"
                            : "the transposed view of an [N, K] tile with K contiguous "
                              "(b=sb.transpose())");
  if (acc->nthreads != 128)
    ev_error(E, sp,
             "the WGMMA accumulator must be a register tensor of a "
             "128-thread warp group");
  IrStmt *s = stmt(E, S_WGMMA_MMA, sp);
  w.acc = acc;
  w.b = rb;
  s->wgmma = w;
  return v_none(E);
}

/* static_assert(cond, msg) of a run-time cond. Tilus compiles one kernel
 * per value of an `int` parameter and checks the assertion then; tlsc's
 * generic entry takes the value at run time, so a condition over such
 * parameters becomes a requirement the runtime checks at each launch
 * (ir_add_require). One that reads anything else is refused. */
static void require_at_launch(Eval *E, Value *cond, Value *msg, Span at, Span sp) {
  if (!E->k) ev_error(E, at, "static_assert() needs a compile-time condition");
  const IrExpr *bad = ir_require_unsupported(cond->x);
  if (bad && (bad->kind == X_UNARY || bad->kind == X_BINARY) && !dtype_is_float(bad->type))
    ev_error(E, at,
             "static_assert() on kernel parameters is checked at launch, where '%s' is not "
             "available (use + - * / // %% comparisons, and, or, not, min, max)",
             ir_op_name(bad->op));
  if (bad)
    ev_error(E, at,
             "static_assert() needs a condition that is a compile-time value or depends only on "
             "integer kernel parameters (then it is checked at launch)");
  const char *text = msg && msg->kind == V_STR ? msg->s : "static assertion failed";
  ir_add_require(E->ar, E->k, ev_to_bool_expr(E, cond, at), text, sp);
}

/* The facts an assume()d condition gives the analyses: each conjunct
 * `p % c == 0` of an integer parameter p makes p a multiple of c (the
 * gcd analysis of ir/multiples.c then proves, say, that vector accesses at
 * offsets over p stay aligned). */
static void assume_facts(const IrExpr *x) {
  while (x->kind == X_CAST) x = x->a;
  if (x->kind != X_BINARY) return;
  if (x->op == OP_LAND) {
    assume_facts(x->a);
    assume_facts(x->b);
    return;
  }
  int64_t zero, c;
  const IrExpr *mod = x->a;
  if (x->op != OP_EQ || !ir_is_const(x->b, &zero) || zero != 0) return;
  while (mod->kind == X_CAST) mod = mod->a;
  if (mod->kind != X_BINARY || mod->op != OP_MOD || !ir_is_const(mod->b, &c) || c <= 1) return;
  const IrExpr *p = mod->a;
  while (p->kind == X_CAST) p = p->a;
  if (p->kind != X_PARAM || p->param->is_ptr) return;
  int64_t m = p->param->multiple > 1 ? p->param->multiple : 1;
  p->param->multiple = m / ir_gcd(m, c) * c;
}

/* static_assert(cond, msg): checked now, or at launch for a condition on
 * `int` parameters. assume(cond): a compile-time False is an error, as
 * Tilus's would be; a condition on integer kernel parameters is checked at
 * each launch (a launch that breaks it is refused, where Tilus's kernel
 * would be undefined) and gives its facts to the analyses; any other is a
 * hint tlsc does not use. */
static Value *p_assert(Eval *E, Args *a, Span sp, bool assume) {
  static const char *const names[] = {"cond", "msg", NULL};
  Value *v[2] = {NULL, NULL};
  ev_bind_args(E, a, sp, assume ? "assume" : "static_assert", names, assume ? 1 : 2, v);
  int64_t c;
  if (v[0]->kind == V_EXPR && !ir_is_const(v[0]->x, &c)) {
    if (!assume) {
      require_at_launch(E, v[0], v[1], ev_arg_span(a, names, 0, sp), sp);
    } else if (E->k && !ir_require_unsupported(v[0]->x)) {
      IrExpr *cond = ev_to_bool_expr(E, v[0], ev_arg_span(a, names, 0, sp));
      ir_add_require(E->ar, E->k, cond, "assume() does not hold", sp);
      assume_facts(cond);
    }
    return v_none(E);
  }
  if (v_truthy(E, v[0], sp)) return v_none(E);
  if (v[1] && v[1]->kind == V_STR) ev_error(E, sp, "static assertion failed: %s", v[1]->s);
  ev_error(E, sp, assume ? "assume() of a condition that is False" : "static assertion failed");
}

/* free_shared(tensor): the tensor is not used again, and shared tensors
 * made after it may reuse its bytes (ir/smem.c); a use after the free is
 * an error. mbarriers are not freed: they are initialised at entry. */
static Value *p_free_shared(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"tensor", NULL};
  Value *v[1];
  ev_bind_args(E, a, sp, "free_shared", names, 1, v);
  const IrTensor *t = v[0]->kind == V_TENSOR ? v[0]->t : v[0]->kind == V_REF ? v[0]->ref.t : NULL;
  if (t && t->is_mbarrier)
    ev_error(E, sp,
             "free_shared() frees shared tensors, not mbarriers: '%s' is initialised at the "
             "kernel's entry and lives as long as the kernel",
             t->name);
  if (v[0]->kind == V_REF && t->space == MS_SHARED)
    ev_error(E, sp, "free_shared() frees a whole shared tensor, not a view of one: free '%s'",
             t->name);
  if (v[0]->kind != V_TENSOR || v[0]->t->space != MS_SHARED)
    ev_error(E, sp, "free_shared() takes a shared tensor from self.shared_tensor(), not '%s'",
             v_type_name(v[0]));
  if (v[0]->t->alias_of)
    ev_error(E, sp,
             "free_shared() frees the tensor self.shared_tensor() made: '%s' is a reshape of "
             "'%s', whose bytes it shares; free '%s'",
             v[0]->t->name, v[0]->t->alias_of->name, v[0]->t->alias_of->name);
  ev_free_shared(E, v[0]->t, sp);
  return v_none(E);
}

/* self.reshape_shared(tensor, shape): the same shared elements, in the
 * same row-major order, under another shape (Tilus's ReshapeSharedInst).
 * No statement: the result is a tensor that aliases the bytes of the one
 * shared_tensor() made (IrTensor.alias_of); layout inference and planning
 * give both one swizzle and one offset. A view s[i] (leading dimensions
 * fixed) is a contiguous run of s, so its reshape is the same view of s
 * reshaped to [s's fixed dimensions..., shape...]. */
static Value *p_reshape_shared(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"tensor", "shape", NULL};
  Value *v[2];
  ev_bind_args(E, a, sp, "reshape_shared", names, 2, v);
  Span at = ev_arg_span(a, names, 0, sp), shape_at = ev_arg_span(a, names, 1, sp);
  bool view = v[0]->kind == V_REF && v[0]->ref.t->space == MS_SHARED;
  IrTensor *x = view ? v[0]->ref.t : v[0]->kind == V_TENSOR ? v[0]->t : NULL;
  if (!x || x->space != MS_SHARED)
    ev_error(E, at, "reshape_shared() takes a shared tensor, not '%s'", v_type_name(v[0]));
  if (x->is_mbarrier)
    ev_error(E, at, "reshape_shared() reshapes shared tensors, not the mbarriers '%s'", x->name);
  if (view && v[0]->ref.transposed)
    ev_error(E, at,
             "reshape_shared() of a transposed view of '%s': its elements are not in row-major "
             "order; reshape before transpose()",
             x->name);
  ev_check_not_freed(E, x, at);
  IrRef r = view ? v[0]->ref : (IrRef){.t = x};
  int64_t want[IR_MAX_RANK], shape[IR_MAX_RANK];
  int want_rank = const_shape(E, v[1], shape_at, want);
  if (r.nidx + want_rank > IR_MAX_RANK)
    ev_error(E, shape_at,
             "reshape_shared() of a view with %d fixed dimensions to a rank-%d shape needs rank "
             "%d, more than the %d a tensor has",
             r.nidx, want_rank, r.nidx + want_rank, IR_MAX_RANK);
  for (int i = 0; i < r.nidx; i++) shape[i] = x->shape[i]; /* the view's leading dimensions */
  for (int i = 0; i < want_rank; i++) shape[r.nidx + i] = want[i];
  IrTensor *t = ir_new_tensor(E->ar, E->k, ev_hint(E, "s"), MS_SHARED, x->dtype, r.nidx + want_rank,
                              shape, sp);
  IrRef out = r; /* the same view of the reshape */
  out.t = t;
  int64_t eb = dtype_bytes(x->dtype);
  if (ir_ref_nbytes(&out) != ir_ref_nbytes(&r))
    ev_error(E, shape_at,
             "reshape_shared() keeps the number of elements: %s'%s' has %lld, the shape given %lld",
             view ? "the view of " : "", x->name, (long long)(ir_ref_nbytes(&r) / eb),
             (long long)(ir_ref_nbytes(&out) / eb));
  t->alias_of = x->alias_of ? x->alias_of : x;
  if (!view) return v_tensor(E, t);
  Value *v_out = v_new(E, V_REF);
  v_out->ref = out;
  return v_out;
}

/* ------------------------------------------------------ thread groups */

/* single_warp(warp) and warp_group(warp_begin, num_warps): thread groups
 * of whole warps of the current group. */
static Value *p_warps(Eval *E, Args *a, Span sp, bool group) {
  static const char *const wnames[] = {"warp", NULL};
  static const char *const gnames[] = {"warp_begin", "num_warps", NULL};
  Value *v[2] = {NULL, NULL};
  ev_bind_args(E, a, sp, group ? "warp_group" : "single_warp", group ? gnames : wnames,
               group ? 2 : 0, v);
  int64_t w = v[0] ? v_to_int(E, v[0], sp, group ? "warp_begin" : "warp") : 0;
  int64_t n = group ? v_to_int(E, v[1], sp, "num_warps") : 1;
  if (w < 0 || w > INT32_MAX / 32 || n < 1 || n > INT32_MAX / 32)
    ev_error(E, sp, "%s: warps out of range", group ? "warp_group()" : "single_warp()");
  Value *c = v_new(E, V_NS);
  c->bi = CTX_THREAD_GROUP;
  c->i = w * 32;
  c->self = v_int(E, n * 32);
  return c;
}

/* single_thread(thread=-1): one elected thread; a given thread index is a
 * thread group of that one thread, as in Tilus. */
static Value *p_single_thread(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"thread", NULL};
  Value *v[1] = {NULL};
  ev_bind_args(E, a, sp, "single_thread", names, 0, v);
  int64_t t = v[0] ? v_to_int(E, v[0], sp, "thread") : -1;
  Value *c = v_new(E, V_NS);
  if (t == -1) {
    c->bi = CTX_SINGLE_THREAD;
    return c;
  }
  c->bi = CTX_THREAD_GROUP;
  c->i = t;
  c->self = v_int(E, 1);
  return c;
}

static Value *p_thread_group(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"thread_begin", "num_threads", NULL};
  Value *v[2];
  ev_bind_args(E, a, sp, "thread_group", names, 2, v);
  Value *c = v_new(E, V_NS);
  c->bi = CTX_THREAD_GROUP;
  c->i = v_to_int(E, v[0], sp, "thread_begin");
  c->self = v_int(E, v_to_int(E, v[1], sp, "num_threads")); /* int64: checked at `with` */
  return c;
}

/* with self.thread_group(...) / self.single_thread(): the body runs on a
 * subset of the threads. */
Ctrl ev_exec_with(Eval *E, Node *s, Value *ctx) {
  if (s->b) ev_error(E, s->b->span, "'with ... as' is not supported yet");
  if (ctx->kind != V_NS || (ctx->bi != CTX_THREAD_GROUP && ctx->bi != CTX_SINGLE_THREAD))
    ev_error(E, s->a->span, "'%s' object cannot be used in a with statement", v_type_name(ctx));
  int outer = threads_here(E, s->a->span);
  IrStmt *st;
  int begin = 0, count = 1;
  if (ctx->bi == CTX_THREAD_GROUP) {
    int64_t n = ctx->self->i, end; /* n > outer - i: i + n may overflow */
    if (ctx->i < 0 || n < 1 || n > outer - ctx->i)
      ev_error(E, s->a->span,
               "thread group [%lld, %lld) lies outside the "
               "enclosing group of %d threads",
               (long long)ctx->i,
               (long long)(__builtin_add_overflow(ctx->i, n, &end) ? INT64_MAX : end), outer);
    begin = (int)ctx->i;
    count = (int)n;
    st = stmt(E, S_THREAD_GROUP, s->a->span);
    st->group.begin = begin;
    st->group.count = count;
  } else {
    st = stmt(E, S_SINGLE_THREAD, s->a->span);
  }
  IrBlock *saved = E->cur;
  int sb = E->tg_begin, sc = E->tg_count;
  bool se = E->tg_explicit;
  TgFrame g = {E->groups, st, E->rt_depth, E->tg_begin + begin, count};
  E->groups = &g;
  E->cur = &st->body;
  E->tg_begin += begin;
  E->tg_count = count;
  E->tg_explicit = true;
  E->nest++;
  Ctrl c = ev_exec_block(E, &s->list);
  E->nest--;
  E->groups = g.up;
  E->cur = saved;
  E->tg_begin = sb;
  E->tg_count = sc;
  E->tg_explicit = se;
  return c;
}

/* Calls of the primitives above (fn->bi). */
Value *ev_call_prim(Eval *E, Value *fn, Args *a, Span sp) {
  if (fn->bi == P_RESOLVE_DOT_CONFIG) /* Python: runs in __init__ too */
    return ev_resolve_dot_config(E, a, sp);
  if (fn->bi == P_DEFAULT_REG_LAYOUT) return ev_default_register_layout(E, a, sp);
  if (fn->bi == P_MMA_DOT_CONFIG) return ev_mma_dot_config(E, a, sp);
  if (fn->bi == P_SHARED_LAYOUT) { /* cuda.shared_layout(shape): row-major */
    Value *l = v_new(E, V_LAYOUT);
    l->s = "shared_layout";
    return l;
  }
  if (!E->k || !E->cur) ev_error(E, sp, "primitives can only be used inside a kernel");
  switch (fn->bi) {
  case P_RANGE:
    return p_range(E, a, sp);
  case P_FAST_DIVMOD:
    return p_fast_divmod(E, a, sp);
  case P_GLOBAL_VIEW:
    return p_global_view(E, a, sp);
  case P_GLOBAL_TENSOR:
    return p_global_tensor(E, a, sp);
  case P_LOCK_SEMAPHORE:
  case P_RELEASE_SEMAPHORE:
    return p_semaphore(E, a, sp, fn->bi == P_LOCK_SEMAPHORE);
  case P_SHARED_TENSOR:
    return p_shared_tensor(E, a, sp);
  case P_REGISTER_TENSOR:
    return p_register_tensor(E, a, sp);
  case P_THREAD_GROUP:
    return p_thread_group(E, a, sp);
  case P_SINGLE_THREAD:
    return p_single_thread(E, a, sp);
  case P_SINGLE_WARP:
  case P_WARP_GROUP:
    return p_warps(E, a, sp, fn->bi == P_WARP_GROUP);
  case P_STATIC_ASSERT:
  case P_ASSUME:
    return p_assert(E, a, sp, fn->bi == P_ASSUME);
  case P_FREE_SHARED:
    return p_free_shared(E, a, sp);
  case P_RESHAPE_SHARED:
    return p_reshape_shared(E, a, sp);
  case P_FENCE_PROXY_ASYNC: {
    static const char *const names[] = {"space", NULL};
    Value *v[1] = {NULL};
    ev_bind_args(E, a, sp, "proxy_async", names, 0, v);
    only_default(E, a, names, 0, v[0], v_str(E, "shared"), "fence.proxy_async", sp);
    stmt(E, S_TMA_FENCE, sp);
    return v_none(E);
  }
  case P_FENCE_PROXY_RELEASE: {
    static const char *const names[] = {NULL};
    ev_bind_args(E, a, sp, "proxy_async_release", names, 0, NULL);
    stmt(E, S_TMA_FENCE, sp)->fence.release = true;
    return v_none(E);
  }
  case P_TOLIST:
    return ev_tensor_tolist(E, fn->self, a, sp);
  case P_TENSOR_SQUEEZE:
  case P_TENSOR_UNSQUEEZE:
    return ev_tensor_squeeze(E, fn->self, fn->bi == P_TENSOR_UNSQUEEZE, a, sp);
  case P_ITEM:
  case P_ITEM_PTR:
    return ev_global_item(E, fn->self, fn->bi == P_ITEM_PTR, a, sp);
  case P_REGOP:
    return ev_call_regop(E, fn->s, a, sp);
  case P_VIEW:
    return ev_view(E, a, sp);
  case P_ANNOTATE_LAYOUT:
    return ev_annotate_layout(E, a, sp);
  case P_TENSOR_TO:
    return ev_tensor_to(E, fn->self, a, sp);
  case P_CAST:
    return p_cast(E, a, sp);
  case P_STORE_GLOBAL:
    return p_store_global(E, a, sp);
  case P_LOAD_GLOBAL:
    return p_load_global(E, a, sp);
  case P_STORE_SHARED:
    return p_store_shared(E, a, sp);
  case P_LOAD_SHARED:
    return p_load_shared(E, a, sp);
  case P_PRINT_TENSOR:
    return p_print_tensor(E, a, sp);
  case P_ATOMIC:
    return p_atomic(E, fn->s, a, sp);
  case P_STORE_GLOBAL_SCATTER:
  case P_STORE_SHARED_SCATTER:
    return p_store_scatter(E, fn->bi == P_STORE_SHARED_SCATTER, a, sp);
  case P_SYNC:
    return p_sync(E, a, sp);
  case P_PRINTF:
    return p_printf(E, a, sp);
  case P_MBAR_ALLOC:
    return p_mbar_alloc(E, a, sp);
  case P_MBAR_WAIT:
    return p_mbar_wait(E, a, sp);
  case P_MBAR_ARRIVE:
    return p_mbar_arrive(E, a, sp, false);
  case P_MBAR_EXPECT_TX:
    return p_mbar_arrive(E, a, sp, true);
  case P_TMA_G2S:
    return p_tma_g2s(E, a, sp);
  case P_TMA_S2G:
    return p_tma_s2g(E, a, sp);
  case P_TMA_FENCE:
    return p_simple(E, a, sp, S_TMA_FENCE, "fence_proxy_async", false);
  case P_TMA_COMMIT:
    return p_simple(E, a, sp, S_TMA_COMMIT, "commit_group", false);
  case P_TMA_WAIT:
    return p_simple(E, a, sp, S_TMA_WAIT, "wait_group", true);
  case P_WGMMA_FENCE:
    return p_simple(E, a, sp, S_WGMMA_FENCE, "fence", false);
  case P_WGMMA_MMA:
    return p_wgmma_mma(E, a, sp);
  case P_WGMMA_COMMIT:
    return p_simple(E, a, sp, S_WGMMA_COMMIT, "commit_group", false);
  case P_WGMMA_WAIT:
    return p_simple(E, a, sp, S_WGMMA_WAIT, "wait_group", true);
  case P_MBAR_EXPECT_TX_MULTICAST:
    return p_mbar_arrive_cluster(E, a, sp, true);
  case P_MBAR_EXPECT_TX_REMOTE:
    return p_mbar_arrive_cluster(E, a, sp, false);
  case P_CLUSTER_SYNC:
    return p_cluster_sync(E, a, sp);
  case P_SETMAXNREG:
    return p_setmaxnreg(E, a, sp);
  case P_COPY_ASYNC:
  case P_COPY_ASYNC_COMMIT:
  case P_COPY_ASYNC_WAIT:
  case P_COPY_ASYNC_WAIT_ALL:
    return ev_call_cp_async(E, fn->bi, a, sp);
  case P_TRANSPOSE:
    if (a->npos || a->nkw) ev_error(E, sp, "transpose() takes no arguments");
    return ev_tensor_transpose(E, fn->self, sp);
  default:
    ev_error(E, sp, "this builtin cannot be called");
  }
}
