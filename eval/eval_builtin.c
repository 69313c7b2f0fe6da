/* eval_builtin.c: Python builtins available to scripts (range, len, min,
 * max, int, float, bool, abs, list, tuple, enumerate, zip, str, dict,
 * isinstance, super), tilus.utils.cdiv, compile-time dicts, and the
 * dispatch of every builtin call. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eval/eval_int.h"

static void no_keywords(Eval *E, Args *a, const char *fname) {
  if (a->nkw)
    ev_error(E, a->kw_span[0], "%s() got an unexpected keyword argument '%s'", fname,
             a->kw_name[0]);
}

static void arg_count_kw(Eval *E, Args *a, Span sp, const char *fname, int lo, int hi) {
  if (a->npos < lo || a->npos > hi) {
    if (lo == hi)
      ev_error(E, sp, "%s() takes %d argument%s but %d %s given", fname, lo, lo == 1 ? "" : "s",
               a->npos, a->npos == 1 ? "was" : "were");
    ev_error(E, sp, "%s() takes %d to %d arguments but %d %s given", fname, lo, hi, a->npos,
             a->npos == 1 ? "was" : "were");
  }
}

static void arg_count(Eval *E, Args *a, Span sp, const char *fname, int lo, int hi) {
  no_keywords(E, a, fname);
  arg_count_kw(E, a, sp, fname, lo, hi);
}

void ev_arg_count(Eval *E, Args *a, Span sp, const char *fname, int lo, int hi) {
  arg_count(E, a, sp, fname, lo, hi);
}

/* range() over a run-time bound: a run-time loop, as in Tilus (the
 * description self.range() gives, without unrolling); the step must be a
 * compile-time integer, not 0. */
static Value *rt_range(Eval *E, Args *a, Span sp) {
  Value *r = v_seq(E, V_TUPLE, 3);
  r->kind = V_NS;
  r->bi = P_RANGE;
  r->items[0] = a->npos > 1 ? a->pos[0] : v_int(E, 0);
  r->items[1] = a->npos > 1 ? a->pos[1] : a->pos[0];
  r->items[2] = a->npos > 2 ? a->pos[2] : v_int(E, 1);
  for (int i = 0; i < a->npos; i++)
    if (!v_is_int_scalar(a->pos[i]))
      ev_error(E, a->pos_span[i], "'%s' object cannot be interpreted as an integer",
               v_type_name(a->pos[i]));
  Span step_sp = a->npos > 2 ? a->pos_span[2] : sp;
  if (v_to_int(E, r->items[2], step_sp, "the step of a range() over run-time bounds") == 0)
    ev_error(E, step_sp, "range() arg 3 must not be zero");
  r->i = 0;
  return r;
}

/* range(stop) / range(start, stop[, step]): a list at compile time, a
 * run-time loop when a bound is a run-time value or computed from an
 * `int` kernel parameter fixed by -D or --specialize (Value.from_param). */
static Value *b_range(Eval *E, Args *a, Span sp) {
  arg_count(E, a, sp, "range", 1, 3);
  int64_t v[3] = {0, 0, 1}, c;
  for (int i = 0; i < a->npos; i++)
    if ((a->pos[i]->kind == V_EXPR && !ir_is_const(a->pos[i]->x, &c)) || a->pos[i]->from_param)
      return rt_range(E, a, sp);
  for (int i = 0; i < a->npos; i++)
    v[a->npos == 1 ? 1 : i] = v_to_int(E, a->pos[i], a->pos_span[i], "range() argument");
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
    if (!v_is_number(x) || !v_is_number(y)) /* strings, tuples: Python's order */
      return (is_min ? ev_less(E, y, x, sp) : ev_less(E, x, y, sp)) ? y : x;
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

/* key(x) for min/max/sorted(key=...): x itself without a key (or None). */
static Value *key_of(Eval *E, Value *key, Value *x, Span sp) {
  if (!key || key->kind == V_NONE) return x;
  Args k = {.pos = &x, .pos_span = &sp, .npos = 1};
  return ev_call_value(E, key, &k, sp);
}

/* The keyword argument `name` of a call that takes no other keyword, or
 * NULL. */
static Value *only_keyword(Eval *E, Args *a, const char *fname, const char *name) {
  Value *v = NULL;
  for (int i = 0; i < a->nkw; i++) {
    if (strcmp(a->kw_name[i], name))
      ev_error(E, a->kw_span[i], "%s() got an unexpected keyword argument '%s'", fname,
               a->kw_name[i]);
    v = a->kw[i];
  }
  return v;
}

/* min(a, b, ...), min(iterable) and max, with key=: the first item whose
 * key is smallest (largest), as Python picks it. */
static Value *b_minmax(Eval *E, Args *a, Span sp, bool is_min) {
  const char *fname = is_min ? "min" : "max";
  Value *key = only_keyword(E, a, fname, "key");
  Value **items = a->pos;
  int n = a->npos;
  if (n == 0) ev_error(E, sp, "%s expected at least 1 argument, got 0", fname);
  if (n == 1) {
    Value *seq = ev_iterate_list(E, a->pos[0], a->pos_span[0]);
    items = seq->items;
    n = seq->n;
  }
  if (n == 0) ev_error(E, sp, "%s() arg is an empty sequence", fname);
  ev_charge(E, n / 8, sp); /* a scan: max() of 2**20 items in a loop */
  if (!key || key->kind == V_NONE) {
    Value *r = items[0];
    for (int i = 1; i < n; i++) r = minmax2(E, is_min, r, items[i], sp);
    return r;
  }
  int best = 0;
  Value *bk = key_of(E, key, items[0], sp);
  for (int i = 1; i < n; i++) {
    Value *k = key_of(E, key, items[i], sp);
    if (is_min ? ev_less(E, k, bk, sp) : ev_less(E, bk, k, sp)) best = i, bk = k;
  }
  return items[best];
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

/* int("12"), float("1.5"), float("-inf"), float("nan"), as Python reads
 * them (blanks around, underscores between digits, inf/infinity/nan in any
 * case). */
static Value *str_to_number(Eval *E, Builtin bi, const char *text, Span sp) {
  size_t n = strlen(text);
  ev_charge(E, (int64_t)n / 64, sp);
  char *buf = arena_alloc(E->ar, n + 1), *q = buf;
  const char *p = text;
  while (*p == ' ' || *p == '\t' || *p == '\n') p++;
  for (; *p; p++) {
    if (*p == '_' && q > buf && p[1] >= '0' && p[1] <= '9' && q[-1] >= '0' && q[-1] <= '9')
      continue;
    *q++ = *p;
  }
  while (q > buf && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\n')) q--;
  *q = 0;
  char *end = NULL;
  if (bi == B_INT) {
    errno = 0;
    long long v = buf[0] ? strtoll(buf, &end, 10) : 0;
    if (!buf[0] || *end || errno || strchr(buf, ' '))
      ev_error(E, sp, "invalid literal for int() with base 10: '%s'", text);
    return v_int(E, v);
  }
  const char *w = buf + (buf[0] == '+' || buf[0] == '-');
  bool neg = buf[0] == '-';
  if (!strcasecmp(w, "inf") || !strcasecmp(w, "infinity"))
    return v_float(E, neg ? -INFINITY : INFINITY);
  if (!strcasecmp(w, "nan")) return v_float(E, NAN);
  double f = buf[0] ? strtod(buf, &end) : 0;
  bool hex = strchr(buf, 'x') || strchr(buf, 'X');
  if (!buf[0] || *end || hex) ev_error(E, sp, "could not convert string to float: '%s'", text);
  return v_float(E, f);
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
  if (x->kind == V_STR && (bi == B_FLOAT || bi == B_INT)) return str_to_number(E, bi, x->s, sp);
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
  if (x->kind == V_LIST || x->kind == V_TUPLE || x->kind == V_DICT) return v_int(E, x->n);
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
  if (bi == B_ENUMERATE) { /* enumerate(iterable, start=0) */
    static const char *const names[] = {"iterable", "start", NULL};
    Value *v[2];
    ev_bind_args(E, a, sp, "enumerate", names, 1, v);
    int64_t start = 0;
    if (v[1] && v[1]->kind != V_INT && v[1]->kind != V_BOOL)
      ev_error(E, ev_arg_span(a, names, 1, sp), "'%s' object cannot be interpreted as an integer",
               v_type_name(v[1]));
    if (v[1]) start = v[1]->i;
    Value *src = ev_iterate_list(E, v[0], ev_arg_span(a, names, 0, sp));
    if (start > INT64_MAX - src->n) ev_error(E, sp, "integer overflow in compile-time arithmetic");
    ev_charge(E, 2 * (int64_t)src->n, sp); /* two new values per item */
    Value *r = v_seq(E, V_LIST, src->n);
    for (int i = 0; i < src->n; i++) {
      Value *pair = v_seq(E, V_TUPLE, 2);
      pair->items[0] = v_int(E, start + i);
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
  arg_count(E, a, sp, "str", 0, 1);
  if (a->npos == 0) return v_str(E, "");
  Value *x = a->pos[0];
  if (x->kind == V_EXPR || x->kind == V_TENSOR || x->kind == V_REF)
    ev_error(E, sp, "str() of a run-time value is not supported; use self.printf()");
  return x->kind == V_STR ? x : v_str(E, ev_str(E, x, sp));
}

/* ------------------------------------------------------------ dicts */

Value *v_dict(Eval *E) {
  Value *d = v_new(E, V_DICT);
  d->items = arena_alloc(E->ar, sizeof(Value *) * 8);
  d->i = 4; /* capacity in pairs */
  return d;
}

/* Whether v can be a dict key: a compile-time value that cannot change. */
static void check_key(Eval *E, const Value *v, Span sp, int depth) {
  switch (v->kind) {
  case V_NONE:
  case V_BOOL:
  case V_INT:
  case V_FLOAT:
  case V_STR:
  case V_DTYPE:
  case V_PTRTYPE:
  case V_CLASS:
  case V_FUNC:
    return;
  case V_TUPLE:
    if (depth >= EV_MAX_VALUE_DEPTH) ev_error(E, sp, "dict key nested too deeply");
    for (int i = 0; i < v->n; i++) check_key(E, v->items[i], sp, depth + 1);
    return;
  case V_EXPR:
  case V_TENSOR:
  case V_REF:
    ev_error(E, sp, "a dict key must be a compile-time value, not a run-time '%s'", v_type_name(v));
  default:
    ev_error(E, sp, "unhashable type: '%s'", v_type_name(v));
  }
}

/* Python's key equality: numbers by value (1 == 1.0 == True). */
static bool key_eq(Eval *E, const Value *a, const Value *b, Span sp) {
  if (v_is_number(a) && v_is_number(b)) {
    if (a->kind != V_FLOAT && b->kind != V_FLOAT) return a->i == b->i;
    double x = a->kind == V_FLOAT ? a->f : (double)a->i,
           y = b->kind == V_FLOAT ? b->f : (double)b->i;
    return x == y;
  }
  return v_same(E, a, b, sp);
}

static int dict_index(Eval *E, Value *d, Value *key, Span sp) {
  check_key(E, key, sp, 0);
  ev_charge(E, d->n / 8, sp); /* a scan */
  for (int i = 0; i < d->n; i++)
    if (key_eq(E, d->items[2 * i], key, sp)) return i;
  return -1;
}

Value *ev_dict_get(Eval *E, Value *d, Value *key, Span sp) {
  int i = dict_index(E, d, key, sp);
  return i < 0 ? NULL : d->items[2 * i + 1];
}

void ev_dict_put(Eval *E, Value *d, Value *key, Value *val, Span sp) {
  int i = dict_index(E, d, key, sp);
  if (i >= 0) {
    d->items[2 * i + 1] = val;
    return;
  }
  if (d->n >= EV_MAX_LIST_LEN) ev_error(E, sp, "compile-time dict is too long");
  if (d->n == d->i) {
    int cap = (int)d->i * 2;
    Value **items = arena_alloc(E->ar, sizeof(Value *) * 2 * cap);
    memcpy(items, d->items, sizeof(Value *) * 2 * d->n);
    d->items = items;
    d->i = cap;
  }
  d->items[2 * d->n] = key;
  d->items[2 * d->n + 1] = val;
  d->n++;
}

static Value *dict_copy(Eval *E, Value *src, Span sp) {
  Value *d = v_dict(E);
  ev_charge(E, src->n, sp);
  for (int i = 0; i < src->n; i++) ev_dict_put(E, d, src->items[2 * i], src->items[2 * i + 1], sp);
  return d;
}

/* Adds a mapping (a dict, or pairs) and keywords to d. */
static void dict_update(Eval *E, Value *d, Value *src, Args *a, Span sp) {
  if (src && src->kind == V_DICT) {
    for (int i = 0; i < src->n; i++)
      ev_dict_put(E, d, src->items[2 * i], src->items[2 * i + 1], sp);
  } else if (src) {
    Value *seq = ev_iterate_list(E, src, sp);
    for (int i = 0; i < seq->n; i++) {
      Value *p = seq->items[i];
      if ((p->kind != V_TUPLE && p->kind != V_LIST) || p->n != 2)
        ev_error(E, sp,
                 "dictionary update sequence element #%d has the wrong length (a pair is needed)",
                 i);
      ev_dict_put(E, d, p->items[0], p->items[1], sp);
    }
  }
  for (int k = 0; k < a->nkw; k++)
    ev_dict_put(E, d, v_str(E, a->kw_name[k]), a->kw[k], a->kw_span[k]);
}

/* dict(), dict(mapping or pairs), dict(k=v, ...). */
static Value *b_dict(Eval *E, Args *a, Span sp) {
  if (a->npos > 1) ev_error(E, sp, "dict expected at most 1 argument, got %d", a->npos);
  Value *d = v_dict(E);
  dict_update(E, d, a->npos ? a->pos[0] : NULL, a, sp);
  return d;
}

Value *ev_dict_attr(Eval *E, Value *d, const char *name, Span sp) {
  static const char *const methods[] = {"items", "keys",       "values", "get", "update",
                                        "pop",   "setdefault", "copy",   NULL};
  for (int i = 0; methods[i]; i++)
    if (strcmp(name, methods[i]) == 0) {
      Value *m = v_builtin(E, B_DICT_METHOD, d);
      m->s = methods[i];
      return m;
    }
  ev_error(E, sp, "'dict' object has no attribute '%s'", name);
}

static Value *dict_method(Eval *E, Value *fn, Args *a, Span sp) {
  Value *d = fn->self;
  const char *m = fn->s;
  if (!strcmp(m, "update")) {
    arg_count_kw(E, a, sp, "update", 0, 1);
    dict_update(E, d, a->npos ? a->pos[0] : NULL, a, sp);
    return v_none(E);
  }
  if (!strcmp(m, "get") || !strcmp(m, "pop") || !strcmp(m, "setdefault")) {
    arg_count(E, a, sp, m, 1, 2);
    Value *v = ev_dict_get(E, d, a->pos[0], a->pos_span[0]);
    Value *dflt = a->npos == 2 ? a->pos[1] : v_none(E);
    if (!strcmp(m, "get")) return v ? v : dflt;
    if (!strcmp(m, "setdefault")) {
      if (!v) ev_dict_put(E, d, a->pos[0], v = dflt, sp);
      return v;
    }
    if (!v && a->npos == 1) ev_error(E, a->pos_span[0], "KeyError: the dict has no such key");
    if (v) { /* remove the pair, keeping the order of the others */
      int i = dict_index(E, d, a->pos[0], sp);
      memmove(&d->items[2 * i], &d->items[2 * i + 2], sizeof(Value *) * 2 * (d->n - i - 1));
      d->n--;
    }
    return v ? v : dflt;
  }
  arg_count(E, a, sp, m, 0, 0);
  if (!strcmp(m, "copy")) return dict_copy(E, d, sp);
  ev_charge(E, d->n, sp);
  Value *r = v_seq(E, V_LIST, d->n);
  for (int i = 0; i < d->n; i++) {
    if (m[0] == 'k' || m[0] == 'v') {
      r->items[i] = d->items[2 * i + (m[0] == 'v')];
      continue;
    }
    Value *pair = v_seq(E, V_TUPLE, 2);
    pair->items[0] = d->items[2 * i];
    pair->items[1] = d->items[2 * i + 1];
    r->items[i] = pair;
  }
  return r;
}

/* sum(xs[, start]), any(xs), all(xs), reversed(xs), sorted(xs): over a
 * compile-time sequence (sum may add run-time scalars). */
static Value *b_fold(Eval *E, Builtin bi, Args *a, Span sp) {
  static const char *const fnames[] = {[B_SUM] = "sum",
                                       [B_ANY] = "any",
                                       [B_ALL] = "all",
                                       [B_REVERSED] = "reversed",
                                       [B_SORTED] = "sorted"};
  const char *fname = fnames[bi];
  Value *v[2] = {NULL, NULL};
  Value *key = NULL;
  if (bi == B_SORTED) {
    static const char *const names[] = {"iterable", "key", "reverse", NULL};
    Value *w[3];
    ev_bind_args(E, a, sp, "sorted", names, 1, w);
    v[0] = w[0], key = w[1], v[1] = w[2];
  } else {
    arg_count(E, a, sp, fname, 1, bi == B_SUM ? 2 : 1);
    v[0] = a->pos[0];
  }
  Value *seq = ev_iterate_list(E, v[0], sp);
  ev_charge(E, seq->n, sp);
  if (bi == B_SUM) {
    Value *r = a->npos > 1 ? a->pos[1] : v_int(E, 0);
    for (int i = 0; i < seq->n; i++) r = ev_eval_binop(E, '+', r, seq->items[i], sp);
    return r;
  }
  if (bi == B_ANY || bi == B_ALL) {
    for (int i = 0; i < seq->n; i++)
      if (v_truthy(E, seq->items[i], sp) == (bi == B_ANY)) return v_bool(E, bi == B_ANY);
    return v_bool(E, bi == B_ALL);
  }
  Value *r = v_seq(E, V_LIST, seq->n);
  for (int i = 0; i < seq->n; i++) r->items[i] = seq->items[bi == B_REVERSED ? seq->n - 1 - i : i];
  if (bi == B_SORTED) ev_sort_items(E, r->items, r->n, key, v[1] && v_truthy(E, v[1], sp), sp);
  return r;
}

void ev_sort_items(Eval *E, Value **items, int n, Value *key, bool reverse, Span sp) {
  /* a stable insertion sort on the keys (lists are short) */
  Value **keys = arena_alloc(E->ar, sizeof(Value *) * (size_t)(n + 1));
  for (int i = 0; i < n; i++) keys[i] = key_of(E, key, items[i], sp);
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0; j--) {
      /* reverse=True keeps equal items in order too, as Python does */
      if (!(reverse ? ev_less(E, keys[j - 1], keys[j], sp) : ev_less(E, keys[j], keys[j - 1], sp)))
        break;
      Value *t = items[j], *tk = keys[j];
      items[j] = items[j - 1], keys[j] = keys[j - 1];
      items[j - 1] = t, keys[j - 1] = tk;
    }
}

/* round(x[, n]) and divmod(a, b) on compile-time numbers. */
static Value *b_round_divmod(Eval *E, Builtin bi, Args *a, Span sp) {
  if (bi == B_DIVMOD) {
    arg_count(E, a, sp, "divmod", 2, 2);
    Value *r = v_seq(E, V_TUPLE, 2);
    r->items[0] = ev_eval_binop(E, TOK_FLOORDIV, a->pos[0], a->pos[1], sp);
    r->items[1] = ev_eval_binop(E, '%', a->pos[0], a->pos[1], sp);
    return r;
  }
  arg_count(E, a, sp, "round", 1, 2);
  Value *x = a->pos[0];
  if (!v_is_number(x))
    ev_error(E, sp, "round() needs a compile-time number, not '%s'", v_type_name(x));
  if (x->kind != V_FLOAT) return a->npos == 1 ? v_int(E, x->i) : x;
  if (a->npos == 2 && a->pos[1]->kind != V_NONE) { /* round half to even at n digits */
    int64_t nd = v_to_int(E, a->pos[1], a->pos_span[1], "round() digits");
    if (nd >= 0 && isfinite(x->f)) {
      /* as CPython: the decimal value of the binary float, correctly
       * rounded (printf's %.Nf), so round(2.675, 2) is 2.67 (2.675 is
       * 2.67499999...); past 330 digits nothing is left to round */
      if (nd > 330) return x;
      char buf[720];
      snprintf(buf, sizeof buf, "%.*f", (int)nd, x->f);
      return v_float(E, strtod(buf, NULL));
    }
    double p = pow(10.0, (double)nd);
    return v_float(E, nearbyint(x->f * p) / p);
  }
  double r = nearbyint(x->f); /* half to even, as Python */
  if (!(r > -9.2e18 && r < 9.2e18)) ev_error(E, sp, "cannot convert float %g to an integer", x->f);
  return v_int(E, (int64_t)r);
}

/* getattr(obj, name[, default]), hasattr(obj, name). */
static Value *b_getattr(Eval *E, Builtin bi, Args *a, Span sp) {
  bool get = bi == B_GETATTR;
  arg_count(E, a, sp, get ? "getattr" : "hasattr", 2, get ? 3 : 2);
  if (a->pos[1]->kind != V_STR) ev_error(E, a->pos_span[1], "attribute name must be a string");
  Value *obj = a->pos[0];
  const char *name = a->pos[1]->s;
  bool has = true;
  if (obj->kind == V_INST)
    has = ev_dict_find(&obj->inst->attrs, name) || ev_find_member(obj->inst->cls, name) ||
          ev_ns_attr(E, obj, name, sp);
  else if (obj->kind == V_CLASS)
    has = ev_find_member(obj->cls, name) != NULL;
  else if (obj->kind == V_DICT)
    has = false;
  if (!get) return v_bool(E, has);
  if (!has && a->npos == 3) return a->pos[2];
  return ev_get_attr(E, obj, name, sp);
}

/* ------------------------------------------------------- classes */

/* super() in a method: a proxy that looks attributes up in the bases of
 * the class defining the method, bound to its first argument; super(C,
 * obj) names both. */
static Value *b_super(Eval *E, Args *a, Span sp) {
  no_keywords(E, a, "super");
  Value *r = v_new(E, V_SUPER);
  if (a->npos == 0) {
    if (!E->frame || !E->frame->cls || !E->frame->self)
      ev_error(E, sp, "super(): no arguments (it needs a method of a class)");
    r->cls = E->frame->cls;
    r->self = E->frame->self;
    return r;
  }
  if (a->npos != 2) ev_error(E, sp, "super() takes 0 or 2 arguments, not %d", a->npos);
  if (a->pos[0]->kind != V_CLASS)
    ev_error(E, a->pos_span[0], "super() argument 1 must be a type, not '%s'",
             v_type_name(a->pos[0]));
  Value *obj = a->pos[1];
  ClassDef *c = obj->kind == V_INST ? obj->inst->cls : NULL;
  while (c && c != a->pos[0]->cls) c = c->base;
  if (!c) ev_error(E, sp, "super(type, obj): obj must be an instance of type");
  r->cls = c;
  r->self = obj;
  return r;
}

/* isinstance(x, C or (C, ...)): user classes, int, float, bool, str,
 * list, tuple, dict. */
static Value *b_isinstance(Eval *E, Args *a, Span sp) {
  arg_count(E, a, sp, "isinstance", 2, 2);
  Value *x = a->pos[0], *t = a->pos[1];
  if (t->kind == V_TUPLE) {
    for (int i = 0; i < t->n; i++) {
      Args one = *a;
      Value *pair[2] = {x, t->items[i]};
      one.pos = pair;
      if (b_isinstance(E, &one, sp)->i) return v_bool(E, true);
    }
    return v_bool(E, false);
  }
  if (t->kind == V_CLASS) {
    ClassDef *c = x->kind == V_INST ? x->inst->cls : NULL;
    while (c && c != t->cls) c = c->base;
    return v_bool(E, c != NULL);
  }
  if (t->kind == V_BUILTIN) {
    switch (t->bi) {
    case B_INT:
      return v_bool(E, x->kind == V_INT || x->kind == V_BOOL);
    case B_FLOAT:
      return v_bool(E, x->kind == V_FLOAT);
    case B_BOOL:
      return v_bool(E, x->kind == V_BOOL);
    case B_STR:
      return v_bool(E, x->kind == V_STR);
    case B_LIST:
      return v_bool(E, x->kind == V_LIST);
    case B_TUPLE:
      return v_bool(E, x->kind == V_TUPLE);
    case B_DICT:
      return v_bool(E, x->kind == V_DICT);
    default:
      break;
    }
  }
  ev_error(E, a->pos_span[1], "isinstance() arg 2 must be a type or tuple of types, not '%s'",
           v_type_name(t));
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
    return b_super(E, a, sp);
  case B_DICT:
    return b_dict(E, a, sp);
  case B_DICT_METHOD:
    return dict_method(E, fn, a, sp);
  case B_SEQ_METHOD:
    return ev_call_seq_method(E, fn, a, sp);
  case B_POW:
  case B_CHR:
  case B_ORD:
  case B_HEX:
  case B_BIN:
  case B_OCT:
  case B_MAP:
  case B_FILTER:
    return ev_call_seq_builtin(E, fn->bi, a, sp);
  case B_ISINSTANCE:
    return b_isinstance(E, a, sp);
  case B_MATH:
    return ev_call_math(E, fn, a, sp);
  case B_EXCEPTION: { /* ValueError("msg"): an exception value to raise */
    Value *x = v_str(E, fn->s);
    if (a->npos == 1) x->s = arena_printf(E->ar, "%s: %s", fn->s, ev_str(E, a->pos[0], sp));
    if (a->npos > 1) {
      Value *t = v_seq(E, V_TUPLE, a->npos);
      for (int i = 0; i < a->npos; i++) t->items[i] = a->pos[i];
      x->s = arena_printf(E->ar, "%s: %s", fn->s, ev_repr(E, t, sp));
    }
    x->i = 1; /* an exception, for raise */
    return x;
  }
  case B_SUM:
  case B_ANY:
  case B_ALL:
  case B_REVERSED:
  case B_SORTED:
    return b_fold(E, fn->bi, a, sp);
  case B_ROUND:
  case B_DIVMOD:
    return b_round_divmod(E, fn->bi, a, sp);
  case B_GETATTR:
  case B_HASATTR:
    return b_getattr(E, fn->bi, a, sp);
  case B_TUTIL:
    return ev_call_tutil(E, fn, a, sp);
  case B_NOOP_INIT:
    arg_count(E, a, sp, "__init__", 0, 0);
    return v_none(E);
  case B_PRINT:
    ev_error(E, sp,
             "print() is not supported; use self.printf() for a "
             "run-time print");
  case B_AUTOTUNE:
    return b_autotune(E, a, sp);
  case B_LAYOUT_FN:
    return ev_call_layout_fn(E, fn, a, sp);
  case B_DTYPE_METHOD:
    return ev_call_dtype_method(E, fn, a, sp);
  default:
    return ev_call_prim(E, fn, a, sp);
  }
}
