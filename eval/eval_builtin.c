/* eval_builtin.c: Python builtins available to scripts (range, len, min,
 * max, cdiv, int, float, bool, abs, list, tuple, enumerate, zip, str,
 * super) and the dispatch of every builtin call. */
#include <string.h>

#include "eval/eval_int.h"

static void no_keywords(Eval *E, Args *a, const char *fname) {
  if (a->nkw)
    ev_error(E, a->kw_span[0], "%s() got an unexpected keyword argument '%s'", fname,
             a->kw_name[0]);
}

static void arg_count(Eval *E, Args *a, Span sp, const char *fname, int lo, int hi) {
  no_keywords(E, a, fname);
  if (a->npos < lo || a->npos > hi) {
    if (lo == hi)
      ev_error(E, sp, "%s() takes %d argument%s but %d %s given", fname, lo, lo == 1 ? "" : "s",
               a->npos, a->npos == 1 ? "was" : "were");
    ev_error(E, sp, "%s() takes %d to %d arguments but %d %s given", fname, lo, hi, a->npos,
             a->npos == 1 ? "was" : "were");
  }
}

/* range(stop) / range(start, stop[, step]) at compile time: a list. */
static Value *b_range(Eval *E, Args *a, Span sp) {
  arg_count(E, a, sp, "range", 1, 3);
  int64_t v[3] = {0, 0, 1};
  for (int i = 0; i < a->npos; i++) {
    if (a->pos[i]->kind == V_EXPR)
      ev_error(E, a->pos_span[i],
               "range() needs compile-time bounds; use "
               "self.range() for a run-time loop");
    v[a->npos == 1 ? 1 : i] = v_to_int(E, a->pos[i], a->pos_span[i], "range() argument");
  }
  if (v[2] == 0) ev_error(E, sp, "range() arg 3 must not be zero");
  /* The length in unsigned arithmetic: range(-2**63, 2**63 - 1, ...) spans
   * more than int64 holds. */
  uint64_t n = 0, span = 0, step = 0;
  if (v[2] > 0 && v[1] > v[0])
    span = (uint64_t)v[1] - (uint64_t)v[0], step = (uint64_t)v[2];
  else if (v[2] < 0 && v[1] < v[0])
    span = (uint64_t)v[0] - (uint64_t)v[1], step = -(uint64_t)v[2];
  if (step) n = span / step + (span % step != 0);
  if (n > EV_MAX_LIST_LEN)
    ev_error(E, sp, "range() of %llu elements is too long for compile time", (unsigned long long)n);
  ev_charge(E, (int64_t)n, sp);
  Value *r = v_seq(E, V_LIST, (int)n);
  for (uint64_t i = 0; i < n; i++) /* each element is in range; the
                                       product i * step may not be */
    r->items[i] = v_int(E, (int64_t)((uint64_t)v[0] + i * (uint64_t)v[2]));
  return r;
}

/* A compile-time number as a double. */
static double num_of(const Value *v) { return v->kind == V_FLOAT ? v->f : (double)v->i; }

/* min/max of two values: compile time, or OP_MIN/OP_MAX. */
static Value *minmax2(Eval *E, bool is_min, Value *x, Value *y, Span sp) {
  if (x->kind != V_EXPR && y->kind != V_EXPR) {
    if (!v_is_number(x) || !v_is_number(y))
      ev_eval_binop(E, '-', x, y, sp); /* reports the operand types */
    /* compared, not subtracted: min(-2**63, 1) must not overflow */
    bool x_first = x->kind != V_FLOAT && y->kind != V_FLOAT
                       ? (is_min ? x->i <= y->i : x->i >= y->i)
                       : (is_min ? num_of(x) <= num_of(y) : num_of(x) >= num_of(y));
    return x_first ? x : y;
  }
  if (!v_is_scalar(x) || !v_is_scalar(y))
    ev_error(E, sp, "%s() of '%s' and '%s'", is_min ? "min" : "max", v_type_name(x),
             v_type_name(y));
  /* a float constant makes it a float comparison: min(n, 2.5) */
  DType tx = x->kind == V_EXPR ? x->x->type : x->kind == V_FLOAT ? DT_FLOAT32 : DT_VOID;
  DType ty = y->kind == V_EXPR ? y->x->type : y->kind == V_FLOAT ? DT_FLOAT32 : DT_VOID;
  DType t = tx == DT_VOID ? ty : ty == DT_VOID ? tx : ev_promote(tx, ty);
  if (t == DT_BOOL) t = DT_INT32;
  /* min(n, 2**32) for an int32 n is n, as in Python: a constant outside
   * the run-time operand's type is above or below all its values */
  Value *c = x->kind == V_INT ? x : y->kind == V_INT ? y : NULL;
  if (c && !dtype_is_float(t) && !ev_int_fits(c->i, t)) {
    Value *rt = c == x ? y : x;
    return (c->i > 0) == is_min ? rt : c;
  }
  IrExpr *a = ev_scalar_as(E, x, t, sp);
  IrExpr *b = ev_scalar_as(E, y, t, sp);
  return ev_rt_value(E, ir_binary(E->ar, is_min ? OP_MIN : OP_MAX, a, b), sp);
}

static Value *b_minmax(Eval *E, Args *a, Span sp, bool is_min) {
  const char *fname = is_min ? "min" : "max";
  no_keywords(E, a, fname);
  Value **items = a->pos;
  int n = a->npos;
  if (n == 1) {
    Value *seq = ev_iterate_list(E, a->pos[0], a->pos_span[0]);
    items = seq->items;
    n = seq->n;
  }
  if (n == 0) ev_error(E, sp, "%s() arg is an empty sequence", fname);
  ev_charge(E, n / 8, sp); /* a scan: max() of 2**20 items in a loop */
  Value *r = items[0];
  for (int i = 1; i < n; i++) r = minmax2(E, is_min, r, items[i], sp);
  return r;
}

/* cdiv(a, b) = (a + b - 1) // b; on run-time values (a + b - 1) / b. */
static Value *b_cdiv(Eval *E, Args *a, Span sp) {
  arg_count(E, a, sp, "cdiv", 2, 2);
  Value *num;
  if (a->pos[1]->kind == V_INT) /* fold b - 1 now: m_size + 127 */
    num = ev_eval_binop(E, '+', a->pos[0], v_int(E, a->pos[1]->i - 1), sp);
  else
    num = ev_eval_binop(E, '-', ev_eval_binop(E, '+', a->pos[0], a->pos[1], sp), v_int(E, 1), sp);
  return ev_eval_binop(E, TOK_FLOORDIV, num, a->pos[1], sp);
}

/* int(x), float(x), bool(x), abs(x). */
static Value *b_convert(Eval *E, Builtin bi, Args *a, Span sp) {
  static const char *names[] = {
      [B_INT] = "int", [B_FLOAT] = "float", [B_BOOL] = "bool", [B_ABS] = "abs"};
  arg_count(E, a, sp, names[bi], 1, 1);
  Value *x = a->pos[0];
  if (x->kind == V_EXPR) {
    DType t = bi == B_INT ? DT_INT32 : bi == B_FLOAT ? DT_FLOAT32 : DT_BOOL;
    if (bi == B_BOOL) return v_expr(E, ev_to_bool_expr(E, x, sp));
    if (bi == B_ABS) {
      IrExpr *neg = ir_unary(E->ar, OP_NEG, x->x);
      return ev_rt_value(E, ir_binary(E->ar, OP_MAX, x->x, neg), sp);
    }
    return v_expr(E, ev_expr_convert(E, x->x, t));
  }
  if (bi == B_BOOL) return v_bool(E, v_truthy(E, x, sp));
  if (!v_is_number(x))
    ev_error(E, sp, "%s() argument must be a number, not '%s'", names[bi], v_type_name(x));
  double f = x->kind == V_FLOAT ? x->f : (double)x->i;
  if (bi == B_FLOAT) return v_float(E, f);
  if (bi == B_ABS && x->kind != V_FLOAT && x->i == INT64_MIN)
    ev_error(E, sp, "integer overflow in compile-time arithmetic");
  if (bi == B_ABS)
    return x->kind == V_FLOAT ? v_float(E, f < 0 ? -f : f) : v_int(E, x->i < 0 ? -x->i : x->i);
  if (x->kind == V_FLOAT && !(f > -9.2e18 && f < 9.2e18))
    ev_error(E, sp, "cannot convert float %g to an integer", f);
  return v_int(E, x->kind == V_FLOAT ? (int64_t)f : x->i);
}

static Value *b_len(Eval *E, Args *a, Span sp) {
  arg_count(E, a, sp, "len", 1, 1);
  Value *x = a->pos[0];
  if (x->kind == V_LIST || x->kind == V_TUPLE) return v_int(E, x->n);
  if (x->kind == V_STR) {
    int64_t n = (int64_t)strlen(x->s);
    ev_charge(E, n / 64, sp);
    return v_int(E, n);
  }
  ev_error(E, sp, "object of type '%s' has no len()", v_type_name(x));
}

/* list(x), tuple(x), enumerate(x), zip(x, y, ...). */
static Value *b_seq(Eval *E, Builtin bi, Args *a, Span sp) {
  if (bi == B_LIST || bi == B_TUPLE) {
    const char *fname = bi == B_LIST ? "list" : "tuple";
    arg_count(E, a, sp, fname, 0, 1);
    Value *src = a->npos ? ev_iterate_list(E, a->pos[0], a->pos_span[0]) : NULL;
    ev_charge(E, src ? src->n / 8 : 0, sp); /* a copy: list(l) in a loop */
    Value *r = v_seq(E, bi == B_LIST ? V_LIST : V_TUPLE, src ? src->n : 0);
    for (int i = 0; src && i < src->n; i++) r->items[i] = src->items[i];
    return r;
  }
  if (bi == B_ENUMERATE) {
    arg_count(E, a, sp, "enumerate", 1, 1);
    Value *src = ev_iterate_list(E, a->pos[0], a->pos_span[0]);
    ev_charge(E, 2 * (int64_t)src->n, sp); /* two new values per item */
    Value *r = v_seq(E, V_LIST, src->n);
    for (int i = 0; i < src->n; i++) {
      Value *pair = v_seq(E, V_TUPLE, 2);
      pair->items[0] = v_int(E, i);
      pair->items[1] = src->items[i];
      r->items[i] = pair;
    }
    return r;
  }
  no_keywords(E, a, "zip");
  int n = a->npos ? EV_MAX_LIST_LEN : 0;
  Value **srcs = arena_alloc(E->ar, sizeof(Value *) * (a->npos + 1));
  for (int j = 0; j < a->npos; j++) {
    srcs[j] = ev_iterate_list(E, a->pos[j], a->pos_span[j]);
    if (srcs[j]->n < n) n = srcs[j]->n;
  }
  ev_charge(E, (int64_t)n + (int64_t)n * a->npos / 8, sp); /* a tuple per item */
  Value *r = v_seq(E, V_LIST, n);
  for (int i = 0; i < n; i++) {
    Value *t = v_seq(E, V_TUPLE, a->npos);
    for (int j = 0; j < a->npos; j++) t->items[j] = srcs[j]->items[i];
    r->items[i] = t;
  }
  return r;
}

static Value *b_str(Eval *E, Args *a, Span sp) {
  arg_count(E, a, sp, "str", 1, 1);
  Value *x = a->pos[0];
  switch (x->kind) {
  case V_STR:
    return x;
  case V_INT:
    return v_str(E, arena_printf(E->ar, "%lld", (long long)x->i));
  case V_BOOL:
    return v_str(E, x->i ? "True" : "False");
  case V_FLOAT:
    return v_str(E, arena_printf(E->ar, "%g", x->f));
  case V_DTYPE:
    return v_str(E, dtype_name(x->dt));
  default:
    ev_error(E, sp, "str() of '%s' is not supported yet", v_type_name(x));
  }
}

/* @tilus.autotune("a, b", [[1, 2], [3, 4]]): a decorator value that the
 * class definition reads (eval.c). */
static Value *b_autotune(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"arg_names", "arg_values", NULL};
  Value *v[2];
  ev_bind_args(E, a, sp, "autotune", names, 2, v);
  if (v[0]->kind != V_STR) ev_error(E, sp, "autotune() names must be a string like \"a, b\"");
  ev_iterate_list(E, v[1], sp);
  Value *d = v_new(E, V_NS);
  d->bi = B_AUTOTUNE;
  d->s = v[0]->s;
  d->self = v[1];
  return d;
}

Value *ev_call_builtin(Eval *E, Value *fn, Args *a, Span sp) {
  switch (fn->bi) {
  case B_RANGE:
    return b_range(E, a, sp);
  case B_LEN:
    return b_len(E, a, sp);
  case B_MIN:
    return b_minmax(E, a, sp, true);
  case B_MAX:
    return b_minmax(E, a, sp, false);
  case B_CDIV:
    return b_cdiv(E, a, sp);
  case B_INT:
  case B_FLOAT:
  case B_BOOL:
  case B_ABS:
    return b_convert(E, fn->bi, a, sp);
  case B_LIST:
  case B_TUPLE:
  case B_ENUMERATE:
  case B_ZIP:
    return b_seq(E, fn->bi, a, sp);
  case B_STR:
    return b_str(E, a, sp);
  case B_SUPER:
    arg_count(E, a, sp, "super", 0, 0);
    if (!E->frame) ev_error(E, sp, "super() outside a method");
    return fn;
  case B_NOOP_INIT:
    arg_count(E, a, sp, "__init__", 0, 0);
    return v_none(E);
  case B_PRINT:
    ev_error(E, sp,
             "print() is not supported; use self.printf() for a "
             "run-time print");
  case B_AUTOTUNE:
    return b_autotune(E, a, sp);
  default:
    return ev_call_prim(E, fn, a, sp);
  }
}
