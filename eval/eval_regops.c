/* eval_regops.c: Tilus's operations on register tensors: element-wise
 * functions (self.exp(x) ...), self.maximum / self.minimum, the
 * reductions self.sum / self.max / self.min (dim=, keepdim=) and
 * x.to(dtype). Each appends IR statements into new register tensors; the
 * layouts are inferred later (ir/reginfer.c). */
#include <string.h>

#include "eval/eval_int.h"

static const struct {
  const char *name;
  IrMathFn fn;
} unary_fns[] = {
    {"exp", FN_EXP},   {"exp2", FN_EXP2},   {"log", FN_LOG},   {"log2", FN_LOG2},
    {"sqrt", FN_SQRT}, {"rsqrt", FN_RSQRT}, {"abs", FN_ABS},   {"square", FN_SQUARE},
    {"sin", FN_SIN},   {"cos", FN_COS},     {"tanh", FN_TANH}, {"round", FN_ROUND},
};

static const struct {
  const char *name;
  IrOp op;
  bool reduce; /* self.sum(x, dim=): else self.maximum(a, b) */
} binary_ops[] = {
    {"maximum", OP_MAX, false}, {"minimum", OP_MIN, false}, {"sum", OP_ADD, true},
    {"max", OP_MAX, true},      {"min", OP_MIN, true},      {"add", OP_ADD, false},
};

/* The register operations of the Tilus instance besides the unary and
 * binary tables above (ev_call_regop). */
static const char regop_names[] = " where dot assign squeeze unsqueeze reshape clip any all repeat"
                                  " repeat_interleave scan cumsum cumprod transpose rand randn"
                                  " randint randint4x ";

bool ev_is_regop(const char *name) {
  if (ev_word_in(regop_names, name)) return true;
  for (size_t i = 0; i < sizeof unary_fns / sizeof unary_fns[0]; i++)
    if (strcmp(unary_fns[i].name, name) == 0) return true;
  for (size_t i = 0; i < sizeof binary_ops / sizeof binary_ops[0]; i++)
    if (strcmp(binary_ops[i].name, name) == 0) return true;
  return false;
}

static IrTensor *new_reg(Eval *E, DType dt, int rank, const int64_t *shape, int nthreads, Span sp) {
  IrTensor *t = ir_new_tensor(E->ar, E->k, ev_hint(E, "r"), MS_REGISTER, dt, rank, shape, sp);
  t->nthreads = nthreads;
  return t;
}

static IrTensor *reg_arg(Eval *E, Value *v, Span sp, const char *fname) {
  IrTensor *t = v_to_tensor(E, v, sp, MS_REGISTER, arena_printf(E->ar, "%s() argument", fname));
  ev_reg_use(E, t, sp);
  return t;
}

/* x as dt (S_CAST). */
static Value *cast_reg(Eval *E, Value *x, DType dt, Span sp) {
  IrStmt *s = ir_stmt_new(E->ar, S_CAST, sp);
  s->cast.src = x->t;
  s->cast.dst = new_reg(E, dt, x->t->rank, x->t->shape, x->t->nthreads, sp);
  ev_emit(E, s);
  return v_tensor(E, s->cast.dst);
}

/* A tensor of dtype dt and shape (over nthreads) filled with value. */
static IrTensor *filled(Eval *E, DType dt, int rank, const int64_t *shape, int nthreads,
                        IrExpr *value, Span sp) {
  IrStmt *f = ir_stmt_new(E->ar, S_FILL, sp);
  f->fill.dst = new_reg(E, dt, rank, shape, nthreads, sp);
  f->fill.value = value;
  ev_emit(E, f);
  return f->fill.dst;
}

/* out=: the result copied into the tensor the user gave (same shape). */
static Value *to_out(Eval *E, IrTensor *r, Value *out, Span sp) {
  if (!out || out->kind == V_NONE) return v_tensor(E, r);
  IrTensor *o = reg_arg(E, out, sp, "out");
  if (o->rank != r->rank || memcmp(o->shape, r->shape, sizeof(int64_t) * (size_t)r->rank) != 0)
    ev_error(E, sp, "out= has another shape than the result");
  IrStmt *s = ir_stmt_new(E->ar, S_CAST, sp);
  s->cast.dst = o;
  s->cast.src = r;
  ev_emit(E, s);
  return out;
}

/* self.exp(x, out=None) ... */
static Value *unary(Eval *E, const char *name, IrMathFn fn, Args *a, Span sp) {
  static const char *const names[] = {"x", "out", NULL};
  Value *v[2] = {NULL, NULL};
  ev_bind_args(E, a, sp, name, names, 1, v);
  IrTensor *x = reg_arg(E, v[0], sp, name);
  ev_check_compute_dtype(E, x->dtype, sp, arena_printf(E->ar, "%s() of", name));
  if (!dtype_is_float(x->dtype) && fn != FN_ABS && fn != FN_SQUARE && fn != FN_ROUND)
    ev_error(E, sp, "%s() needs a floating-point tensor, not %s", name, dtype_name(x->dtype));
  IrStmt *s = ir_stmt_new(E->ar, S_UNARY, sp);
  s->unary.fn = fn;
  s->unary.src = x;
  s->unary.dst = new_reg(E, x->dtype, x->rank, x->shape, x->nthreads, sp);
  ev_emit(E, s);
  return to_out(E, s->unary.dst, v[1], sp);
}

/* A reduction of x over one dimension. */
static IrTensor *reduce_dim(Eval *E, IrTensor *x, int dim, bool keepdim, IrOp op, Span sp) {
  int64_t shape[IR_MAX_RANK];
  int rank = 0;
  for (int d = 0; d < x->rank; d++)
    if (d != dim)
      shape[rank++] = x->shape[d];
    else if (keepdim)
      shape[rank++] = 1;
  IrStmt *s = ir_stmt_new(E->ar, S_REDUCE, sp);
  s->reduce.src = x;
  s->reduce.dim = dim;
  s->reduce.keepdim = keepdim;
  s->reduce.op = op;
  s->reduce.dst = new_reg(E, x->dtype, rank, shape, x->nthreads, sp);
  ev_emit(E, s);
  return s->reduce.dst;
}

/* The dimensions dim= names, as a bit set (None: all of them); negative
 * ones count from the end, as in Python. */
static unsigned reduce_dims(Eval *E, Value *dim, int rank, Span sp) {
  if (!dim || dim->kind == V_NONE) return (1u << rank) - 1;
  int n = dim->kind == V_LIST || dim->kind == V_TUPLE ? dim->n : 1;
  unsigned set = 0;
  for (int i = 0; i < n; i++) {
    Value *d = dim->kind == V_LIST || dim->kind == V_TUPLE ? dim->items[i] : dim;
    int64_t k = v_to_int(E, d, sp, "dim");
    if (k < -rank || k >= rank)
      ev_error(E, sp, "dim %lld is out of range for a rank-%d tensor", (long long)k, rank);
    set |= 1u << (k < 0 ? k + rank : k);
  }
  return set;
}

/* self.sum(x, dim=None, keepdim=False, out=None), max, min: one
 * reduction per dimension, the innermost first. */
static Value *reduce(Eval *E, const char *name, IrOp op, Args *a, Span sp) {
  static const char *const names[] = {"x", "dim", "keepdim", "out", NULL};
  Value *v[4] = {NULL, NULL, NULL, NULL};
  ev_bind_args(E, a, sp, name, names, 1, v);
  IrTensor *x = reg_arg(E, v[0], sp, name);
  ev_check_compute_dtype(E, x->dtype, sp, arena_printf(E->ar, "%s() of", name));
  bool keepdim = v[2] && v_truthy(E, v[2], sp);
  unsigned dims = reduce_dims(E, v[1], x->rank, sp);
  for (int d = x->rank - 1; d >= 0; d--)
    if (dims & (1u << d)) x = reduce_dim(E, x, d, keepdim, op, sp);
  return to_out(E, x, v[3], sp);
}

/* self.any(x, dim=None, keepdim=False, out=None), all: whether some
 * (every) element along the dimensions is non-zero, as a bool tensor: x
 * != 0 as int32, reduced by max (min), then != 0. */
static Value *any_all(Eval *E, bool all, Args *a, Span sp) {
  static const char *const names[] = {"x", "dim", "keepdim", "out", NULL};
  Value *v[4] = {NULL, NULL, NULL, NULL};
  const char *name = all ? "all" : "any";
  ev_bind_args(E, a, sp, name, names, 1, v);
  IrTensor *x = reg_arg(E, v[0], sp, name);
  Value *nz = x->dtype == DT_BOOL ? v[0] : ev_tensor_elemwise(E, OP_NE, v[0], v_int(E, 0), sp);
  IrTensor *r = cast_reg(E, nz, DT_INT32, sp)->t;
  bool keepdim = v[2] && v_truthy(E, v[2], sp);
  unsigned dims = reduce_dims(E, v[1], x->rank, sp);
  for (int d = x->rank - 1; d >= 0; d--)
    if (dims & (1u << d)) r = reduce_dim(E, r, d, keepdim, all ? OP_MIN : OP_MAX, sp);
  Value *b = ev_tensor_elemwise(E, OP_NE, v_tensor(E, r), v_int(E, 0), sp);
  return to_out(E, b->t, v[3], sp);
}

/* self.clip(x, min, max, out=None): max(min(x, max), min) element by
 * element, as Tilus computes it (so min wins where min > max), the bounds
 * converted to x's dtype first. */
static Value *clip(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"x", "min", "max", "out", NULL};
  Value *v[4] = {NULL, NULL, NULL, NULL};
  ev_bind_args(E, a, sp, "clip", names, 3, v);
  IrTensor *x = reg_arg(E, v[0], sp, "clip");
  ev_check_compute_dtype(E, x->dtype, sp, "clip() of");
  Value *bound[2];
  for (int i = 0; i < 2; i++) {
    if (v[i + 1]->kind == V_TENSOR)
      ev_error(E, sp, "clip() takes scalar bounds (use minimum() and maximum() for tensors)");
    Value *b = v[i + 1];
    if (b->kind == V_FLOAT && !dtype_is_float(x->dtype)) { /* int32(2.7) is 2 */
      /* in int64 range, so that the conversion is defined (NaN fails) */
      if (!(b->f >= -9223372036854775808.0 && b->f < 9223372036854775808.0))
        ev_error(E, sp, "clip(): bound %g does not fit in %s", b->f, dtype_name(x->dtype));
      b = v_int(E, (int64_t)b->f);
    }
    bound[i] = v_expr(E, ev_scalar_as(E, b, x->dtype, sp));
  }
  Value *below = ev_tensor_elemwise(E, OP_MIN, v[0], bound[1], sp);
  Value *r = ev_tensor_elemwise(E, OP_MAX, below, bound[0], sp);
  return to_out(E, r->t, v[3], sp);
}

/* self.maximum(lhs, rhs, out=None), minimum, add: element-wise,
 * broadcasting. */
static Value *binary(Eval *E, const char *name, IrOp op, Args *a, Span sp) {
  static const char *const names[] = {"lhs", "rhs", "out", NULL};
  Value *v[3] = {NULL, NULL, NULL};
  ev_bind_args(E, a, sp, name, names, 2, v);
  Value *r = ev_tensor_elemwise(E, op, v[0], v[1], sp);
  return to_out(E, r->t, v[2], sp);
}

/* The shape tensors of these shapes broadcast to (numpy's rules). */
static int broadcast_all(Eval *E, IrTensor **ts, int n, int64_t *shape, Span sp) {
  int rank = 0;
  for (int i = 0; i < n; i++)
    if (ts[i] && ts[i]->rank > rank) rank = ts[i]->rank;
  for (int d = 0; d < rank; d++) shape[d] = 1;
  for (int i = 0; i < n; i++)
    for (int j = 1; ts[i] && j <= ts[i]->rank; j++) {
      int64_t x = ts[i]->shape[ts[i]->rank - j], *y = &shape[rank - j];
      if (x != *y && x != 1 && *y != 1)
        ev_error(E, sp, "tensor shapes do not broadcast: dimension %d is %lld and %lld", rank - j,
                 (long long)x, (long long)*y);
      if (x != 1) *y = x;
    }
  return rank;
}

/* self.where(condition, x, y, out=None): x where condition, else y;
 * x and y tensors or scalars, broadcasting. */
static Value *where(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"condition", "x", "y", "out", NULL};
  Value *v[4] = {NULL, NULL, NULL, NULL};
  ev_bind_args(E, a, sp, "where", names, 3, v);
  IrTensor *t[3] = {reg_arg(E, v[0], sp, "where"), NULL, NULL};
  if (t[0]->dtype != DT_BOOL)
    ev_error(E, sp, "where() needs a bool condition, not a %s tensor", dtype_name(t[0]->dtype));
  DType dt = DT_VOID;
  for (int i = 1; i <= 2; i++)
    if (v[i]->kind == V_TENSOR) {
      t[i] = reg_arg(E, v[i], sp, "where");
      if (dt != DT_VOID && dt != t[i]->dtype)
        ev_error(E, sp, "where(): x and y are %s and %s tensors; cast one first", dtype_name(dt),
                 dtype_name(t[i]->dtype));
      dt = t[i]->dtype;
    } else if (!v_is_scalar(v[i])) {
      ev_error(E, sp, "where(): '%s' is not a tensor or a scalar", v_type_name(v[i]));
    }
  for (int i = 1; i <= 2 && dt == DT_VOID; i++) /* two scalars: their type */
    if (v[i]->kind == V_FLOAT) dt = DT_FLOAT32;
  for (int i = 1; i <= 2 && dt == DT_VOID; i++)
    dt = v[i]->kind == V_EXPR ? v[i]->x->type : v[i]->kind == V_BOOL ? DT_BOOL : DT_INT32;
  int64_t shape[IR_MAX_RANK];
  int rank = broadcast_all(E, t, 3, shape, sp);
  IrStmt *s = ir_stmt_new(E->ar, S_WHERE, sp);
  s->where.cond = t[0];
  s->where.a = t[1];
  s->where.b = t[2];
  if (!t[1]) s->where.sa = ev_scalar_as(E, v[1], dt, sp);
  if (!t[2]) s->where.sb = ev_scalar_as(E, v[2], dt, sp);
  s->where.dst = new_reg(E, dt, rank, shape, t[0]->nthreads, sp);
  ev_emit(E, s);
  return to_out(E, s->where.dst, v[3], sp);
}

/* The warps of a dot: warps_m x warps_n tiles of the [m, n] result, the
 * squarest per-warp tile the mma.sync sizes allow (16 rows, 8 columns). */
static bool dot_warps(int64_t warps, int64_t m, int64_t n, int64_t *wm, int64_t *wn) {
  int64_t best = -1;
  for (int64_t i = 1; i <= warps; i++) {
    if (warps % i || m % (16 * i) || n % (8 * (warps / i))) continue;
    int64_t rows = m / i, cols = n / (warps / i), skew = rows > cols ? rows - cols : cols - rows;
    if (best < 0 || skew < best) best = skew, *wm = i, *wn = warps / i;
  }
  return best >= 0;
}

/* self.dot(a, b, c=None, acc_dtype=None, out=None): a @ b + c. */
static Value *dot(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"a", "b", "c", "acc_dtype", "out", NULL};
  Value *v[5] = {NULL, NULL, NULL, NULL, NULL};
  ev_bind_args(E, a, sp, "dot", names, 2, v);
  IrTensor *x = reg_arg(E, v[0], sp, "dot"), *y = reg_arg(E, v[1], sp, "dot");
  IrTensor *c = v[2] && v[2]->kind != V_NONE ? reg_arg(E, v[2], sp, "dot") : NULL;
  if (x->rank != 2 || y->rank != 2 || x->shape[1] != y->shape[0])
    ev_error(E, sp, "dot() needs a [m, k] and a [k, n] tensor");
  bool ints = (x->dtype == DT_INT8 || x->dtype == DT_UINT8) &&
              (y->dtype == DT_INT8 || y->dtype == DT_UINT8); /* s8 x u8 mixes */
  if ((x->dtype != y->dtype && !ints) ||
      (x->dtype != DT_FLOAT16 && x->dtype != DT_BFLOAT16 && !ints))
    ev_error(E, sp,
             "dot(): tlsc multiplies float16, bfloat16, int8 or uint8 tensors (mma.sync), not %s "
             "and %s",
             dtype_name(x->dtype), dtype_name(y->dtype));
  DType acc = v[3] && v[3]->kind != V_NONE ? v_to_dtype(E, v[3], sp, "acc_dtype")
              : c                          ? c->dtype
                                           : DT_VOID;
  if (acc == DT_VOID) ev_error(E, sp, "dot() needs c or acc_dtype");
  if (c && c->dtype != acc)
    ev_error(E, sp, "dot(): c is %s but acc_dtype is %s", dtype_name(c->dtype), dtype_name(acc));
  if (!ir_mma_operand_ok(x->dtype, acc))
    ev_error(E, sp,
             "dot(): accumulating %s into %s is not supported (float32, or float16 for "
             "float16 operands; int32 for int8 and uint8)",
             dtype_name(x->dtype), dtype_name(acc));
  int64_t kstep = 8 * ir_mma_epr(x->dtype);
  int64_t m = x->shape[0], k = x->shape[1], n = y->shape[1], wm = 0, wn = 0;
  if (c && (c->rank != 2 || c->shape[0] != m || c->shape[1] != n))
    ev_error(E, sp, "dot(): c must be [%lld, %lld]", (long long)m, (long long)n);
  if (x->nthreads % 32 || k % kstep || !dot_warps(x->nthreads / 32, m, n, &wm, &wn))
    ev_error(E, sp,
             "dot() of [%lld, %lld] x [%lld, %lld] over %d threads: mma.sync needs k a multiple "
             "of %lld and the [m, n] result in tiles of 16 x 8 spread over whole warps",
             (long long)m, (long long)k, (long long)k, (long long)n, x->nthreads, (long long)kstep);
  IrStmt *s = ir_stmt_new(E->ar, S_DOT, sp);
  s->dot.a = x;
  s->dot.b = y;
  s->dot.c = c;
  s->dot.warps_m = wm;
  s->dot.warps_n = wn;
  int64_t shape[2] = {m, n};
  s->dot.dst = new_reg(E, acc, 2, shape, x->nthreads, sp);
  ev_emit(E, s);
  return to_out(E, s->dot.dst, v[4], sp);
}

/* self.cuda.resolve_dot_config(operand_dtype, acc_dtype, m=, n=, k=,
 * num_warps=None, warp_m=None, warp_n=None): the mma.sync tiling of an
 * [m, k] x [k, n] product over warps (warp_m x warp_n when given, else
 * the squarest per-warp tile), as a value whose la, lb and lc are the
 * operand layouts for annotate_layout. */
Value *ev_resolve_dot_config(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"operand_dtype", "acc_dtype", "m",      "n", "k",
                                      "num_warps",     "warp_m",    "warp_n", NULL};
  Value *v[8] = {NULL};
  ev_bind_args(E, a, sp, "resolve_dot_config", names, 5, v);
  DType op = v_to_dtype(E, v[0], sp, "operand_dtype"), acc = v_to_dtype(E, v[1], sp, "acc_dtype");
  if (!ir_mma_operand_ok(op, acc))
    ev_error(E, sp,
             "resolve_dot_config: tlsc's mma.sync takes float16 or bfloat16 operands into "
             "float32 (or float16 into float16), int8 or uint8 into int32, not %s into %s",
             dtype_name(op), dtype_name(acc));
  int64_t kstep = 8 * ir_mma_epr(op);
  int64_t m = v_to_int(E, v[2], sp, "m"), n = v_to_int(E, v[3], sp, "n"),
          k = v_to_int(E, v[4], sp, "k");
  int64_t wm_want = v[6] && v[6]->kind != V_NONE ? v_to_int(E, v[6], sp, "warp_m") : 0;
  int64_t wn_want = v[7] && v[7]->kind != V_NONE ? v_to_int(E, v[7], sp, "warp_n") : 0;
  int64_t warps = v[5] && v[5]->kind != V_NONE ? v_to_int(E, v[5], sp, "num_warps")
                  : wm_want > 0 && wn_want > 0 ? wm_want * wn_want
                                               : 0;
  if (warps <= 0) ev_error(E, sp, "resolve_dot_config needs num_warps, or warp_m and warp_n");
  int64_t wm = 0, wn = 0, best = -1;
  for (int64_t i = 1; i <= warps && k % kstep == 0; i++) {
    int64_t j = warps / i;
    if (warps % i || m % (16 * i) || n % (8 * j) || (wm_want && i != wm_want) ||
        (wn_want && j != wn_want))
      continue;
    int64_t skew = m / i > n / j ? m / i - n / j : n / j - m / i;
    if (best < 0 || skew < best) best = skew, wm = i, wn = j;
  }
  if (best < 0)
    ev_error(E, sp,
             "resolve_dot_config: no tiling of [%lld, %lld] x [%lld, %lld] in 16 x 8 x %lld "
             "mma.sync tiles over %lld warps fits",
             (long long)m, (long long)k, (long long)k, (long long)n, (long long)kstep,
             (long long)warps);
  Value *cfg = v_new(E, V_NS);
  cfg->bi = NS_DOTCFG;
  cfg->n = 3;
  cfg->items = arena_alloc(E->ar, sizeof(Value *) * 3);
  IrRegLayout *ls[3] = {ir_reglayout_mma(E->ar, MMA_A, m, k, wm, wn, ir_mma_epr(op)),
                        ir_reglayout_mma(E->ar, MMA_B, k, n, wm, wn, ir_mma_epr(op)),
                        ir_reglayout_mma(E->ar, MMA_C, m, n, wm, wn, 2)};
  for (int i = 0; i < 3; i++) {
    cfg->items[i] = v_new(E, V_LAYOUT);
    cfg->items[i]->layout = ls[i];
  }
  return cfg;
}

/* self.cuda.default_register_layout(num_warps, dtype, shape,
 * vector_size=None): the layout tlsc gives a loaded tensor by default
 * (vectors of vector_size elements of the last dimension per thread, then
 * the threads along the innermost dimensions), as Tilus builds it: the
 * elements must spread evenly over the threads, and the vector is by
 * default gcd(elements per thread, 16 bytes of dtype, last dimension). */
Value *ev_default_register_layout(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"num_warps", "dtype", "shape", "vector_size", NULL};
  Value *v[4] = {NULL};
  ev_bind_args(E, a, sp, "default_register_layout", names, 3, v);
  int64_t warps = v_to_int(E, v[0], sp, "num_warps");
  DType dt = v_to_dtype(E, v[1], sp, "dtype");
  Value *sv = v[2];
  if ((sv->kind != V_LIST && sv->kind != V_TUPLE) || sv->n < 1 || sv->n > IR_MAX_RANK)
    ev_error(E, sp, "default_register_layout: shape must be a list of 1 to %d sizes", IR_MAX_RANK);
  int64_t shape[IR_MAX_RANK], numel = 1;
  for (int i = 0; i < sv->n; i++) {
    shape[i] = v_to_int(E, sv->items[i], sp, "shape");
    if (shape[i] < 1 || shape[i] > ((int64_t)1 << 24))
      ev_error(E, sp, "default_register_layout: size %lld out of range", (long long)shape[i]);
    numel *= shape[i];
  }
  if (warps < 1 || warps > 32) ev_error(E, sp, "default_register_layout: num_warps out of range");
  int64_t threads = 32 * warps;
  if (numel % threads)
    ev_error(E, sp, "default_register_layout: %lld elements do not spread evenly over %lld threads",
             (long long)numel, (long long)threads);
  int64_t vec = v[3] && v[3]->kind != V_NONE
                    ? v_to_int(E, v[3], sp, "vector_size")
                    : ir_gcd(ir_gcd(numel / threads, 16 / dtype_bytes(dt)), shape[sv->n - 1]);
  if (vec < 1 || (numel / threads) % vec || shape[sv->n - 1] % vec || (vec & (vec - 1)))
    ev_error(E, sp, "default_register_layout: vector_size %lld does not fit", (long long)vec);
  Value *l = v_new(E, V_LAYOUT);
  l->layout = ir_reglayout_default(E->ar, sv->n, shape, threads, vec);
  return l;
}

/* self.annotate_layout(tensor, layout): the register tensor must have
 * that layout (layout inference starts from it and checks it). */
Value *ev_annotate_layout(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"tensor", "layout", NULL};
  Value *v[2] = {NULL, NULL};
  ev_bind_args(E, a, sp, "annotate_layout", names, 2, v);
  bool shared = v[0]->kind == V_REF || (v[0]->kind == V_TENSOR && v[0]->t->space == MS_SHARED);
  if (shared && v[1]->kind == V_LAYOUT && !v[1]->layout)
    return v_none(E); /* tlsc plans shared layouts itself (same values) */
  IrTensor *t = reg_arg(E, v[0], sp, "annotate_layout");
  if (v[1]->kind != V_LAYOUT)
    ev_error(E, sp,
             "annotate_layout() takes a register layout (resolve_dot_config().lc ...), "
             "not '%s'",
             v_type_name(v[1]));
  const IrRegLayout *L = v[1]->layout;
  bool fits = L->rank == t->rank && L->nthreads == t->nthreads;
  for (int d = 0; fits && d < t->rank; d++) fits = L->shape[d] == t->shape[d];
  if (!fits)
    ev_error(E, sp,
             "annotate_layout(): the layout is for a [%lld, %lld] tensor over %lld threads, "
             "'%s' is another shape or owner",
             (long long)L->shape[0], (long long)L->shape[1], (long long)L->nthreads, t->name);
  if (t->want && !ir_reglayout_equal(t->want, L))
    ev_error(E, sp, "'%s' is annotated with two different layouts", t->name);
  t->want = v[1]->layout;
  t->want_span = sp;
  return v_none(E);
}

/* The dimensions of squeeze / unsqueeze (an int or a list of them),
 * negative ones counted from the end of a shape of `rank` dimensions,
 * sorted; each at most once. */
static int squeeze_dims(Eval *E, Value *dim, int rank, int *dims, Span sp) {
  int n = dim->kind == V_LIST || dim->kind == V_TUPLE ? dim->n : 1;
  if (n < 1 || n > IR_MAX_RANK) ev_error(E, sp, "dim= names %d dimensions", n);
  for (int i = 0; i < n; i++) {
    Value *x = dim->kind == V_LIST || dim->kind == V_TUPLE ? dim->items[i] : dim;
    int64_t d = v_to_int(E, x, sp, "dim");
    if (d < -rank || d >= rank)
      ev_error(E, sp, "dim %lld is out of range for %d dimensions", (long long)d, rank);
    d = d < 0 ? d + rank : d;
    int j = i;
    for (; j > 0 && dims[j - 1] > d; j--) dims[j] = dims[j - 1];
    if (j > 0 && dims[j - 1] == d) ev_error(E, sp, "dim %lld is named twice", (long long)d);
    dims[j] = (int)d;
  }
  return n;
}

/* x.squeeze(dim) / x.unsqueeze(dim): the same registers seen with
 * dimensions of size 1 removed or added (S_RESHAPE). For unsqueeze, dim
 * counts in the result's dimensions, as in torch and Tilus. */
static Value *squeeze_of(Eval *E, IrTensor *x, bool unsqueeze, Value *dim, Value *out, Span sp) {
  const char *what = unsqueeze ? "unsqueeze" : "squeeze";
  int dims[IR_MAX_RANK], n;
  int64_t shape[IR_MAX_RANK];
  int rank = 0;
  if (unsqueeze) {
    int full = x->rank + (dim->kind == V_LIST || dim->kind == V_TUPLE ? dim->n : 1);
    if (full > IR_MAX_RANK)
      ev_error(E, sp, "%s() gives more than %d dimensions", what, IR_MAX_RANK);
    n = squeeze_dims(E, dim, full, dims, sp);
    for (int d = 0, k = 0, j = 0; d < full; d++)
      shape[rank++] = k < n && dims[k] == d ? (k++, 1) : x->shape[j++];
  } else {
    n = squeeze_dims(E, dim, x->rank, dims, sp);
    for (int d = 0, k = 0; d < x->rank; d++) {
      if (k < n && dims[k] == d) {
        if (x->shape[d] != 1)
          ev_error(E, sp, "squeeze(): dimension %d has size %lld, not 1", d,
                   (long long)x->shape[d]);
        k++;
        continue;
      }
      shape[rank++] = x->shape[d];
    }
  }
  IrTensor *d = new_reg(E, x->dtype, rank, shape, x->nthreads, sp);
  IrStmt *s = ir_stmt_new(E->ar, S_RESHAPE, sp);
  s->cast.dst = d;
  s->cast.src = x;
  ev_emit(E, s);
  return to_out(E, d, out, sp);
}

/* self.squeeze(x, dim=, out=None), self.unsqueeze(x, dim=, out=None) */
static Value *squeeze_call(Eval *E, bool unsqueeze, Args *a, Span sp) {
  static const char *const names[] = {"x", "dim", "out", NULL};
  const char *what = unsqueeze ? "unsqueeze" : "squeeze";
  Value *v[3] = {NULL, NULL, NULL};
  ev_bind_args(E, a, sp, what, names, 2, v);
  return squeeze_of(E, reg_arg(E, v[0], sp, what), unsqueeze, v[1], v[2], sp);
}

Value *ev_tensor_squeeze(Eval *E, Value *self, bool unsqueeze, Args *a, Span sp) {
  static const char *const names[] = {"dim", NULL};
  const char *what = unsqueeze ? "unsqueeze" : "squeeze";
  Value *v[1] = {NULL};
  ev_bind_args(E, a, sp, what, names, 1, v);
  return squeeze_of(E, reg_arg(E, self, sp, what), unsqueeze, v[0], NULL, sp);
}

/* "[64, 128]" */
static const char *shape_text(Eval *E, int rank, const int64_t *shape) {
  const char *t = "[";
  for (int d = 0; d < rank; d++)
    t = arena_printf(E->ar, "%s%s%lld", t, d ? ", " : "", (long long)shape[d]);
  return arena_printf(E->ar, "%s]", t);
}

/* self.reshape(tensor, shape): the same registers seen with another shape
 * of the same size (S_RESHAPE), row-major order kept; the sizes are
 * explicit, as in Tilus (no -1). */
static Value *reshape_call(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"tensor", "shape", NULL};
  Value *v[2] = {NULL, NULL};
  ev_bind_args(E, a, sp, "reshape", names, 2, v);
  IrTensor *x = reg_arg(E, v[0], sp, "reshape");
  if (v[1]->kind != V_LIST && v[1]->kind != V_TUPLE)
    ev_error(E, sp, "reshape(): shape= takes a list of sizes, not '%s'", v_type_name(v[1]));
  int rank = v[1]->n;
  if (rank < 1 || rank > IR_MAX_RANK)
    ev_error(E, sp, "reshape(): shape= has %d dimensions; tlsc takes 1 to %d", rank, IR_MAX_RANK);
  int64_t shape[IR_MAX_RANK], numel = 1;
  for (int d = 0; d < rank; d++) {
    shape[d] = v_to_int(E, v[1]->items[d], sp, "shape");
    if (shape[d] < 1)
      ev_error(E, sp, "reshape(): size %lld of dimension %d is not positive", (long long)shape[d],
               d);
    numel *= shape[d];
  }
  if (numel != ir_tensor_numel(x))
    ev_error(E, sp, "reshape(): '%s' of shape %s has %lld elements, shape %s has %lld", x->name,
             shape_text(E, x->rank, x->shape), (long long)ir_tensor_numel(x),
             shape_text(E, rank, shape), (long long)numel);
  if (!ir_shapes_reshapable(x->rank, x->shape, rank, shape))
    ev_error(E, sp,
             "reshape(): %s to %s moves elements between registers: tlsc keeps each element "
             "where it is, so each dimension must split into or merge from whole dimensions "
             "of the other shape",
             shape_text(E, x->rank, x->shape), shape_text(E, rank, shape));
  IrTensor *d = new_reg(E, x->dtype, rank, shape, x->nthreads, sp);
  IrStmt *s = ir_stmt_new(E->ar, S_RESHAPE, sp);
  s->cast.dst = d;
  s->cast.src = x;
  ev_emit(E, s);
  return v_tensor(E, d);
}

/* x reshaped to shape (the same elements in the same registers). */
static IrTensor *reshaped(Eval *E, IrTensor *x, int rank, const int64_t *shape, Span sp) {
  IrTensor *d = new_reg(E, x->dtype, rank, shape, x->nthreads, sp);
  IrStmt *s = ir_stmt_new(E->ar, S_RESHAPE, sp);
  s->cast.dst = d;
  s->cast.src = x;
  ev_emit(E, s);
  return d;
}

/* x (of the rank of shape, dimensions of 1 where it repeats) broadcast to
 * shape: a select of x under an all-true condition (0 otherwise), which
 * copies the values exactly (-0.0 and NaN too, where x + 0 would not). */
static IrTensor *broadcast_to(Eval *E, IrTensor *x, int rank, const int64_t *shape, Span sp) {
  IrTensor *cond = filled(E, DT_BOOL, rank, shape, x->nthreads, ir_const(E->ar, DT_BOOL, 1), sp);
  IrStmt *s = ir_stmt_new(E->ar, S_WHERE, sp);
  s->where.cond = cond;
  s->where.a = x;
  /* never taken: no second copy of x */
  s->where.sb =
      dtype_is_float(x->dtype) ? ir_const_f(E->ar, x->dtype, 0.0) : ir_const(E->ar, x->dtype, 0);
  s->where.dst = new_reg(E, x->dtype, rank, shape, x->nthreads, sp);
  ev_emit(E, s);
  return s->where.dst;
}

/* self.repeat(x, repeats, out=None) and repeat_interleave: the tensor
 * tiled (repeat: [1, 2, 3] -> [1, 2, 3, 1, 2, 3]) or each element
 * repeated in place ([1, 1, 2, 2, 3, 3]) along each dimension; repeats
 * and x's shape aligned on the right, the shorter padded with 1s in
 * front, as in Tilus. Each repeated dimension of size s becomes [r, s]
 * (repeat) or [s, r] (interleave): x reshaped with a 1 there, broadcast,
 * and reshaped to [r * s], so one more dimension per repeated one must
 * fit tlsc's rank limit. */
static Value *repeat_call(Eval *E, bool interleave, Args *a, Span sp) {
  static const char *const names[] = {"x", "repeats", "out", NULL};
  Value *v[3] = {NULL, NULL, NULL};
  const char *name = interleave ? "repeat_interleave" : "repeat";
  ev_bind_args(E, a, sp, name, names, 2, v);
  IrTensor *x = reg_arg(E, v[0], sp, name);
  if (v[1]->kind != V_LIST && v[1]->kind != V_TUPLE)
    ev_error(E, sp, "%s(): repeats takes a list of counts, not '%s'", name, v_type_name(v[1]));
  int n = v[1]->n, rank = n > x->rank ? n : x->rank;
  if (rank > IR_MAX_RANK)
    ev_error(E, sp, "%s(): %d dimensions; tlsc takes at most %d", name, rank, IR_MAX_RANK);
  int64_t size[IR_MAX_RANK], times[IR_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    int xd = d - (rank - x->rank), rd = d - (rank - n);
    size[d] = xd >= 0 ? x->shape[xd] : 1;
    times[d] = rd >= 0 ? v_to_int(E, v[1]->items[rd], sp, "repeats") : 1;
    if (times[d] < 1)
      ev_error(E, sp, "%s(): count %lld is not positive", name, (long long)times[d]);
    if (times[d] > (1 << 24) / size[d]) /* far past any register file */
      ev_error(E, sp, "%s(): %lld x %lld elements along dimension %d is too many", name,
               (long long)size[d], (long long)times[d], d);
  }
  int64_t split[2 * IR_MAX_RANK], unit[2 * IR_MAX_RANK], out[IR_MAX_RANK];
  int ns = 0, repeated = 0;
  for (int d = 0; d < rank; d++) repeated += times[d] > 1;
  for (int d = 0; d < rank; d++) {
    out[d] = size[d] * times[d];
    if (times[d] == 1) {
      split[ns] = unit[ns] = size[d], ns++;
      continue;
    }
    if (ns + 2 > IR_MAX_RANK)
      ev_error(E, sp,
               "%s(): repeating %d dimensions of a rank-%d tensor needs more than %d dimensions "
               "on the way (tlsc's limit); repeat fewer at once",
               name, repeated, x->rank, IR_MAX_RANK);
    int64_t first = interleave ? size[d] : times[d], second = interleave ? times[d] : size[d];
    split[ns] = first, split[ns + 1] = second;
    unit[ns] = interleave ? size[d] : 1, unit[ns + 1] = interleave ? 1 : size[d];
    ns += 2;
  }
  IrTensor *u = reshaped(E, x, ns, unit, sp);
  IrTensor *b = broadcast_to(E, u, ns, split, sp);
  return to_out(E, reshaped(E, b, rank, out, sp), v[2], sp);
}

/* ------------------------------------------------ random numbers */

/* The high 32 bits of the 64-bit product m * x (CUDA's __umulhi). */
static Value *mul_hi(Eval *E, uint32_t m, Value *x, Span sp) {
  Value *p = ev_tensor_elemwise(E, OP_MUL, cast_reg(E, x, DT_UINT64, sp), v_int(E, m), sp);
  return cast_reg(E, ev_tensor_elemwise(E, OP_SHR, p, v_int(E, 32), sp), DT_UINT32, sp);
}

/* Philox-4x32 (Salmon et al. 2011), as Tilus's randint4x: counter
 * (offset, 0, 0, 0), key (seed's low and high 32 bits), `rounds` rounds;
 * the four uint32 words of each element into c[0..3]. */
static void philox(Eval *E, Value *seed, IrTensor *offset, int64_t rounds, Value **c, Span sp) {
  const uint32_t key_a = 0x9E3779B9u, key_b = 0xBB67AE85u;
  const uint32_t round_a = 0xD2511F53u, round_b = 0xCD9E8D57u;
  IrExpr *s64 = ev_scalar_as(E, seed, DT_UINT64, sp);
  IrExpr *k0 = ir_cast(E->ar, DT_UINT32, s64);
  IrExpr *k1 =
      ir_cast(E->ar, DT_UINT32, ir_binary(E->ar, OP_SHR, s64, ir_const(E->ar, DT_UINT64, 32)));
  Value *off = v_tensor(E, offset);
  c[0] = offset->dtype == DT_UINT32 ? off : cast_reg(E, off, DT_UINT32, sp);
  c[1] = c[2] = c[3] = v_tensor(E, filled(E, DT_UINT32, offset->rank, offset->shape,
                                          offset->nthreads, ir_const(E->ar, DT_UINT32, 0), sp));
  for (int64_t r = 0; r < rounds; r++) {
    Value *c0 = c[0], *c2 = c[2];
    Value *hb = mul_hi(E, round_b, c2, sp), *ha = mul_hi(E, round_a, c0, sp);
    c[0] = ev_tensor_elemwise(E, OP_XOR, ev_tensor_elemwise(E, OP_XOR, hb, c[1], sp), v_expr(E, k0),
                              sp);
    c[2] = ev_tensor_elemwise(E, OP_XOR, ev_tensor_elemwise(E, OP_XOR, ha, c[3], sp), v_expr(E, k1),
                              sp);
    c[1] = ev_tensor_elemwise(E, OP_MUL, c2, v_int(E, round_b), sp);
    c[3] = ev_tensor_elemwise(E, OP_MUL, c0, v_int(E, round_a), sp);
    k0 = ir_binary(E->ar, OP_ADD, k0, ir_const(E->ar, DT_UINT32, key_a));
    k1 = ir_binary(E->ar, OP_ADD, k1, ir_const(E->ar, DT_UINT32, key_b));
  }
}

/* A uint32 tensor as a float32 in [0, 1), as Tilus converts it: seen as
 * int32, a negative x folded to -x - 1, times 2^-31. */
static Value *uniform(Eval *E, Value *x, Span sp) {
  Value *i = cast_reg(E, x, DT_INT32, sp);
  Value *neg = ev_tensor_elemwise(E, OP_LT, i, v_int(E, 0), sp);
  Value *folded = ev_tensor_elemwise(E, OP_SUB, v_int(E, -1), i, sp);
  IrStmt *s = ir_stmt_new(E->ar, S_WHERE, sp);
  s->where.cond = neg->t;
  s->where.a = folded->t;
  s->where.b = i->t;
  s->where.dst = new_reg(E, DT_INT32, i->t->rank, i->t->shape, i->t->nthreads, sp);
  ev_emit(E, s);
  Value *f = cast_reg(E, v_tensor(E, s->where.dst), DT_FLOAT32, sp);
  return ev_tensor_elemwise(E, OP_MUL, f, v_float(E, 4.6566127342e-10), sp);
}

static Value *math1(Eval *E, const char *fn, Value *x, Span sp) {
  Args a = {.npos = 1, .pos = &x, .pos_span = &sp};
  return ev_call_regop(E, fn, &a, sp);
}

/* self.randint4x(seed, offset, n_rounds=10), randint, rand, randn. */
static Value *random_call(Eval *E, const char *name, Args *a, Span sp) {
  static const char *const names[] = {"seed", "offset", "n_rounds", NULL};
  Value *v[3] = {NULL, NULL, NULL};
  ev_bind_args(E, a, sp, name, names, 2, v);
  if (!v_is_int_scalar(v[0]))
    ev_error(E, sp, "%s(): seed must be an integer scalar, not '%s'", name, v_type_name(v[0]));
  IrTensor *off = reg_arg(E, v[1], sp, name);
  if (off->dtype != DT_UINT32 && off->dtype != DT_INT32)
    ev_error(E, sp, "%s(): offset must be a uint32 (or int32) tensor, not %s", name,
             dtype_name(off->dtype));
  int64_t rounds = v[2] && v[2]->kind != V_NONE ? v_to_int(E, v[2], sp, "n_rounds") : 10;
  if (rounds < 1 || rounds > 64)
    ev_error(E, sp, "%s(): n_rounds must be in 1..64, not %lld", name, (long long)rounds);
  Value *c[4];
  philox(E, v[0], off, rounds, c, sp);
  if (strcmp(name, "randint4x") == 0) {
    Value *t = v_seq(E, V_TUPLE, 4);
    for (int i = 0; i < 4; i++) t->items[i] = c[i];
    return t;
  }
  if (strcmp(name, "randint") == 0) return c[0];
  if (strcmp(name, "rand") == 0) return uniform(E, c[0], sp);
  /* randn: Box-Muller on the first two words, u1 kept above 0 */
  Value *u1 = ev_tensor_elemwise(E, OP_MAX, uniform(E, c[0], sp), v_float(E, 1.0e-7), sp);
  Value *theta =
      ev_tensor_elemwise(E, OP_MUL, uniform(E, c[1], sp), v_float(E, 6.283185307179586), sp);
  Value *r = math1(
      E, "sqrt", ev_tensor_elemwise(E, OP_MUL, math1(E, "log", u1, sp), v_float(E, -2.0), sp), sp);
  return ev_tensor_elemwise(E, OP_MUL, r, math1(E, "cos", theta, sp), sp);
}

/* The scan ops Tilus names, with their IR op. */
static const struct {
  const char *name;
  IrOp op;
} scan_ops[] = {{"add", OP_ADD}, {"mul", OP_MUL}, {"max", OP_MAX}, {"min", OP_MIN},
                {"and", OP_AND}, {"or", OP_OR},   {"xor", OP_XOR}};

/* self.scan(x, *, dim, op, exclusive=False, out=None); cumsum and cumprod
 * (name) are scan with op 'add' and 'mul' and no op argument. */
static Value *scan_call(Eval *E, const char *name, Args *a, Span sp) {
  static const char *const scan_names[] = {"x", "dim", "op", "exclusive", "out", NULL};
  static const char *const cum_names[] = {"x", "dim", "exclusive", "out", NULL};
  bool cum = name[0] == 'c';
  const char *const *names = cum ? cum_names : scan_names;
  Value *v[5] = {NULL, NULL, NULL, NULL, NULL};
  if (a->npos > 1)
    ev_error(E, sp, "%s() takes 1 positional argument; %s are keyword-only", name,
             cum ? "dim, exclusive and out" : "dim, op, exclusive and out");
  ev_bind_args(E, a, sp, name, names, cum ? 2 : 3, v);
  Value *excl = v[cum ? 2 : 3], *out = v[cum ? 3 : 4];
  IrTensor *x = reg_arg(E, v[0], sp, name);
  ev_check_compute_dtype(E, x->dtype, sp, arena_printf(E->ar, "%s() of", name));
  if (x->dtype == DT_BOOL)
    ev_error(E, sp, "%s() of a bool tensor: convert it first (x.to(int32))", name);
  int64_t dim = v_to_int(E, v[1], sp, "dim");
  if (dim < -x->rank || dim >= x->rank)
    ev_error(E, sp, "dim %lld is out of range for a rank-%d tensor", (long long)dim, x->rank);
  IrOp op = name[3] == 'p' ? OP_MUL : OP_ADD; /* cumprod, cumsum */
  if (!cum) {
    if (v[2]->kind != V_STR)
      ev_error(E, sp, "scan(): op must be a string, not '%s'", v_type_name(v[2]));
    size_t i = 0;
    while (i < sizeof scan_ops / sizeof scan_ops[0] && strcmp(scan_ops[i].name, v[2]->s) != 0) i++;
    if (i == sizeof scan_ops / sizeof scan_ops[0])
      ev_error(E, sp, "scan(): op '%s' is not one of add, mul, max, min, and, or, xor", v[2]->s);
    op = scan_ops[i].op;
    if ((op == OP_AND || op == OP_OR || op == OP_XOR) &&
        (dtype_is_float(x->dtype) || x->dtype == DT_BOOL))
      ev_error(E, sp, "scan(): op '%s' needs an integer tensor, not %s", v[2]->s,
               dtype_name(x->dtype));
  }
  IrStmt *s = ir_stmt_new(E->ar, S_REDUCE, sp);
  s->reduce.src = x;
  s->reduce.dim = (int)(dim < 0 ? dim + x->rank : dim);
  s->reduce.scan = true;
  s->reduce.exclusive = excl && v_truthy(E, excl, sp);
  s->reduce.op = op;
  s->reduce.dst = new_reg(E, x->dtype, x->rank, x->shape, x->nthreads, sp);
  ev_emit(E, s);
  return to_out(E, s->reduce.dst, out, sp);
}

Value *ev_call_regop(Eval *E, const char *name, Args *a, Span sp) {
  if (strcmp(name, "where") == 0) return where(E, a, sp);
  if (strcmp(name, "assign") == 0) { /* self.assign(dst, src): dst's values = src's */
    static const char *const names[] = {"dst", "src", NULL};
    Value *v[2];
    ev_bind_args(E, a, sp, "assign", names, 2, v);
    IrTensor *src = reg_arg(E, v[1], sp, "assign");
    if (reg_arg(E, v[0], sp, "assign")->dtype != src->dtype)
      ev_error(E, sp, "assign(): dst and src differ in dtype; convert src with .to() first");
    to_out(E, src, v[0], sp);
    return v_none(E);
  }
  if (strcmp(name, "dot") == 0) return dot(E, a, sp);
  if (strcmp(name, "squeeze") == 0 || strcmp(name, "unsqueeze") == 0)
    return squeeze_call(E, name[0] == 'u', a, sp);
  if (strcmp(name, "reshape") == 0) return reshape_call(E, a, sp);
  if (strcmp(name, "clip") == 0) return clip(E, a, sp);
  if (strcmp(name, "repeat") == 0 || strcmp(name, "repeat_interleave") == 0)
    return repeat_call(E, name[6] == '_', a, sp);
  if (strcmp(name, "any") == 0 || strcmp(name, "all") == 0)
    return any_all(E, name[1] == 'l', a, sp);
  if (strcmp(name, "scan") == 0 || strcmp(name, "cumsum") == 0 || strcmp(name, "cumprod") == 0)
    return scan_call(E, name, a, sp);
  if (strcmp(name, "rand") == 0 || strcmp(name, "randn") == 0 || strcmp(name, "randint") == 0 ||
      strcmp(name, "randint4x") == 0)
    return random_call(E, name, a, sp);
  if (strcmp(name, "transpose") == 0) { /* self.transpose(x): a register tensor's */
    static const char *const names[] = {"x", NULL};
    Value *v[1];
    ev_bind_args(E, a, sp, "transpose", names, 1, v);
    return ev_tensor_transpose(E, v_tensor(E, reg_arg(E, v[0], sp, "transpose")), sp);
  }
  for (size_t i = 0; i < sizeof unary_fns / sizeof unary_fns[0]; i++)
    if (strcmp(unary_fns[i].name, name) == 0) return unary(E, name, unary_fns[i].fn, a, sp);
  for (size_t i = 0; i < sizeof binary_ops / sizeof binary_ops[0]; i++)
    if (strcmp(binary_ops[i].name, name) == 0)
      return binary_ops[i].reduce ? reduce(E, name, binary_ops[i].op, a, sp)
                                  : binary(E, name, binary_ops[i].op, a, sp);
  ev_error(E, sp, "internal error: no register operation '%s'", name);
}

/* init=lambda i, j: ...: the function called once with the element
 * indices as run-time int32 values (X_INDEX), giving the value of every
 * element as one expression. */
Value *ev_index_init(Eval *E, Value *fn, int rank, Span sp) {
  Args a = {0};
  a.npos = rank;
  a.pos = arena_alloc(E->ar, sizeof(Value *) * (size_t)(rank > 0 ? rank : 1));
  a.pos_span = arena_alloc(E->ar, sizeof(Span) * (size_t)(rank > 0 ? rank : 1));
  for (int d = 0; d < rank; d++) {
    a.pos[d] = v_expr(E, ir_index(E->ar, d));
    a.pos_span[d] = sp;
  }
  Value *v = ev_call_value(E, fn, &a, sp);
  if (!v_is_scalar(v))
    ev_error(E, sp, "the initializer must give a scalar for each element, not '%s'",
             v_type_name(v));
  return v;
}

/* x.to(dtype): a converted copy (x itself for its own dtype). */
Value *ev_tensor_to(Eval *E, Value *self, Args *a, Span sp) {
  static const char *const names[] = {"dtype", NULL};
  Value *v[1] = {NULL};
  ev_bind_args(E, a, sp, "to", names, 1, v);
  DType dt = v_to_dtype(E, v[0], sp, "dtype");
  IrTensor *x = reg_arg(E, self, sp, "to");
  if (dt == x->dtype) return self;
  ev_check_cast_to(E, x->dtype, dt, sp);
  return cast_reg(E, self, dt, sp);
}
