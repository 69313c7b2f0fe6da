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
    {"sin", FN_SIN},   {"cos", FN_COS},     {"tanh", FN_TANH},
};

static const struct {
  const char *name;
  IrOp op;
  bool reduce; /* self.sum(x, dim=): else self.maximum(a, b) */
} binary_ops[] = {
    {"maximum", OP_MAX, false}, {"minimum", OP_MIN, false}, {"sum", OP_ADD, true},
    {"max", OP_MAX, true},      {"min", OP_MIN, true},
};

bool ev_is_regop(const char *name) {
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
  if (!dtype_is_float(x->dtype) && fn != FN_ABS && fn != FN_SQUARE)
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
  bool keepdim = v[2] && v_truthy(E, v[2], sp);
  unsigned dims = reduce_dims(E, v[1], x->rank, sp);
  for (int d = x->rank - 1; d >= 0; d--)
    if (dims & (1u << d)) x = reduce_dim(E, x, d, keepdim, op, sp);
  return to_out(E, x, v[3], sp);
}

/* self.maximum(lhs, rhs, out=None), minimum: element-wise, broadcasting. */
static Value *binary(Eval *E, const char *name, IrOp op, Args *a, Span sp) {
  static const char *const names[] = {"lhs", "rhs", "out", NULL};
  Value *v[3] = {NULL, NULL, NULL};
  ev_bind_args(E, a, sp, name, names, 2, v);
  Value *r = ev_tensor_elemwise(E, op, v[0], v[1], sp);
  return to_out(E, r->t, v[2], sp);
}

Value *ev_call_regop(Eval *E, const char *name, Args *a, Span sp) {
  for (size_t i = 0; i < sizeof unary_fns / sizeof unary_fns[0]; i++)
    if (strcmp(unary_fns[i].name, name) == 0) return unary(E, name, unary_fns[i].fn, a, sp);
  for (size_t i = 0; i < sizeof binary_ops / sizeof binary_ops[0]; i++)
    if (strcmp(binary_ops[i].name, name) == 0)
      return binary_ops[i].reduce ? reduce(E, name, binary_ops[i].op, a, sp)
                                  : binary(E, name, binary_ops[i].op, a, sp);
  ev_error(E, sp, "internal error: no register operation '%s'", name);
}

/* x.to(dtype): a converted copy (x itself for its own dtype). */
Value *ev_tensor_to(Eval *E, Value *self, Args *a, Span sp) {
  static const char *const names[] = {"dtype", NULL};
  Value *v[1] = {NULL};
  ev_bind_args(E, a, sp, "to", names, 1, v);
  DType dt = v_to_dtype(E, v[0], sp, "dtype");
  IrTensor *x = reg_arg(E, self, sp, "to");
  if (dt == x->dtype) return self;
  IrStmt *s = ir_stmt_new(E->ar, S_CAST, sp);
  s->cast.src = x;
  s->cast.dst = new_reg(E, dt, x->rank, x->shape, x->nthreads, sp);
  ev_emit(E, s);
  return v_tensor(E, s->cast.dst);
}
