/* eval_value.c: the evaluator's values, scopes and conversions, and the
 * error path (diagnostic + "in call from here" notes + unwind). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval_int.h"

/* Prints the error at sp, then one note per inlined call (innermost first),
 * then unwinds to eval_build. */
void ev_error(Eval *E, Span sp, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_verror(E->d, sp, fmt, ap);
  va_end(ap);
  enum { SHOWN = 9 }; /* deep recursion: the innermost calls + the first */
  int nsites = 0, i = 0;
  for (Frame *f = E->frame; f; f = f->up) nsites += f->has_site;
  for (Frame *f = E->frame; f; f = f->up) {
    if (!f->has_site) continue;
    i++;
    if (i <= SHOWN || nsites <= SHOWN + 1)
      diag_note(E->d, f->call_site, "in call from here");
    else if (i == nsites)
      diag_note(E->d, f->call_site,
                "in call from here (%d calls in between "
                "not shown)",
                nsites - SHOWN - 1);
  }
  longjmp(E->fail, 1);
}

void ev_error_quiet(Eval *E) { longjmp(E->fail, 1); }

Value *v_new(Eval *E, VKind k) {
  Value *v = arena_alloc(E->ar, sizeof(Value));
  v->kind = k;
  return v;
}

Value *v_int(Eval *E, int64_t i) {
  Value *v = v_new(E, V_INT);
  v->i = i;
  return v;
}

Value *v_bool(Eval *E, bool b) {
  Value *v = v_new(E, V_BOOL);
  v->i = b;
  return v;
}

Value *v_float(Eval *E, double f) {
  Value *v = v_new(E, V_FLOAT);
  v->f = f;
  return v;
}

Value *v_str(Eval *E, const char *s) {
  Value *v = v_new(E, V_STR);
  v->s = s;
  return v;
}

Value *v_none(Eval *E) { return v_new(E, V_NONE); }

/* A run-time scalar; a constant bool/int expression stays an IrExpr (its
 * type matters), callers test ir_is_const where they can fold. */
Value *v_expr(Eval *E, IrExpr *x) {
  Value *v = v_new(E, V_EXPR);
  v->x = x;
  return v;
}

Value *v_tensor(Eval *E, IrTensor *t) {
  Value *v = v_new(E, V_TENSOR);
  v->t = t;
  return v;
}

Value *v_seq(Eval *E, VKind k, int n) {
  Value *v = v_new(E, k);
  v->n = n;
  v->items = arena_alloc(E->ar, sizeof(Value *) * (n ? n : 1));
  return v;
}

Value *v_builtin(Eval *E, Builtin bi, Value *self) {
  Value *v = v_new(E, V_BUILTIN);
  v->bi = bi;
  v->self = self;
  return v;
}

/* The Python-like type name used in messages. */
const char *v_type_name(const Value *v) {
  switch (v->kind) {
  case V_UNDEF:
    return "undefined";
  case V_NONE:
    return "NoneType";
  case V_BOOL:
    return "bool";
  case V_INT:
    return "int";
  case V_FLOAT:
    return "float";
  case V_STR:
    return "str";
  case V_LIST:
    return "list";
  case V_TUPLE:
    return "tuple";
  case V_DTYPE:
    return "dtype";
  case V_PTRTYPE:
    return "pointer type";
  case V_MODULE:
    return "module";
  case V_HOST:
  case V_UNSUP:
    return v->s;
  case V_SUPER:
    return "super";
  case V_DICT:
    return "dict";
  case V_ELLIPSIS:
    return "ellipsis";
  case V_CLASS:
    return "type";
  case V_INST:
    return v->inst->cls->name;
  case V_FUNC:
  case V_BOUND:
    return "function";
  case V_BUILTIN:
    return "builtin_function";
  case V_NS:
    return "namespace";
  case V_EXPR:
    return dtype_name(v->x->type);
  case V_TENSOR:
    return v->t->space == MS_GLOBAL   ? "GlobalTensor"
           : v->t->space == MS_SHARED ? "SharedTensor"
                                      : "RegisterTensor";
  case V_REF:
    return "SharedTensor";
  case V_LAYOUT:
    return v->layout ? "RegisterLayout" : "SharedLayout";
  }
  return "value";
}

/* FNV-1a: the hash of a name in a Dict's index. */
static unsigned name_hash(const char *name) {
  unsigned h = 2166136261u;
  for (; *name; name++) h = (h ^ (unsigned char)*name) * 16777619u;
  return h;
}

/* The index slot where `name` is, or the empty slot where it would go. */
static int *index_slot(const Dict *dct, const char *name) {
  unsigned mask = (unsigned)dct->index_cap - 1;
  for (unsigned i = name_hash(name) & mask;; i = (i + 1) & mask) {
    int *slot = &dct->index[i];
    if (*slot == 0 || strcmp(dct->items[*slot - 1].name, name) == 0) return slot;
  }
}

/* Rebuilds the index at a power of two at least twice the item capacity
 * (load at most 1/2; copied scopes have any capacity). */
static void index_rebuild(Eval *E, Dict *dct) {
  dct->index_cap = 16;
  while (dct->index_cap < 2 * dct->cap) dct->index_cap *= 2;
  dct->index = arena_alloc(E->ar, sizeof(int) * (size_t)dct->index_cap);
  for (int i = 0; i < dct->len; i++) *index_slot(dct, dct->items[i].name) = i + 1;
}

Slot *ev_dict_find(Dict *dct, const char *name) {
  if (dct->index) {
    int at = *index_slot(dct, name);
    return at ? &dct->items[at - 1] : NULL;
  }
  for (int i = dct->len - 1; i >= 0; i--)
    if (strcmp(dct->items[i].name, name) == 0) return &dct->items[i];
  return NULL;
}

/* Binds name to v (a plain compile-time binding; run-time rules are in
 * bind_slot). Returns the slot. */
Slot *ev_dict_set(Eval *E, Dict *dct, const char *name, Value *v) {
  Slot *s = ev_dict_find(dct, name);
  if (s) {
    s->val = v;
    return s;
  }
  if (dct->len == dct->cap) {
    int cap = dct->cap ? dct->cap * 2 : 8;
    Slot *items = arena_alloc(E->ar, sizeof(Slot) * cap);
    if (dct->len) memcpy(items, dct->items, sizeof(Slot) * dct->len);
    dct->items = items;
    dct->cap = cap;
    dct->index = NULL; /* rebuilt below at the new capacity */
  }
  s = &dct->items[dct->len++];
  s->name = name;
  s->val = v;
  s->var = NULL;
  s->depth = E->rt_depth;
  if (dct->index)
    *index_slot(dct, name) = dct->len;
  else if (dct->len > EV_DICT_HASH_MIN)
    index_rebuild(E, dct);
  return s;
}

bool v_is_number(const Value *v) {
  return v->kind == V_BOOL || v->kind == V_INT || v->kind == V_FLOAT;
}

bool v_is_scalar(const Value *v) { return v_is_number(v) || v->kind == V_EXPR; }

bool v_is_int_scalar(const Value *v) {
  return v->kind == V_INT || v->kind == V_BOOL ||
         (v->kind == V_EXPR && !dtype_is_float(v->x->type));
}

/* Compile-time truth value; a run-time value here is the caller's bug
 * (callers branch on V_EXPR first), reported as a user error anyway. */
bool v_truthy(Eval *E, Value *v, Span sp) {
  int64_t c;
  switch (v->kind) {
  case V_NONE:
    return false;
  case V_BOOL:
  case V_INT:
    return v->i != 0;
  case V_FLOAT:
    return v->f != 0.0;
  case V_STR:
    return v->s[0] != 0;
  case V_LIST:
  case V_TUPLE:
  case V_DICT:
    return v->n != 0;
  case V_EXPR:
    if (ir_is_const(v->x, &c)) return c != 0;
    ev_error(E, sp,
             "a run-time value cannot be used as a compile-time "
             "condition here");
  case V_UNDEF:
    ev_error(E, sp, "value is not defined on every path");
  default:
    return true;
  }
}

static bool same_at(Eval *E, const Value *a, const Value *b, Span sp, int depth) {
  if (a == b) return true;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case V_NONE:
    return true;
  case V_BOOL:
  case V_INT:
    return a->i == b->i;
  case V_FLOAT:
    return a->f == b->f;
  case V_STR:
    ev_charge(E, (int64_t)strlen(a->s) / 64, sp);
    return strcmp(a->s, b->s) == 0;
  case V_DTYPE:
  case V_PTRTYPE:
    return a->dt == b->dt && (a->dt != DT_VOID || !a->s || !b->s || strcmp(a->s, b->s) == 0);
  case V_EXPR:
    return a->x == b->x;
  case V_TENSOR:
    return a->t == b->t;
  case V_LAYOUT:
    return ir_reglayout_equal(a->layout, b->layout);
  case V_INST:
    return a->inst == b->inst;
  case V_CLASS:
    return a->cls == b->cls;
  case V_DICT: /* the same keys, each with the same value */
    if (a->n != b->n) return false;
    if (depth >= EV_MAX_VALUE_DEPTH)
      ev_error(E, sp, "cannot compare dicts nested more than %d levels deep", EV_MAX_VALUE_DEPTH);
    for (int i = 0; i < a->n; i++) {
      Value *bv = ev_dict_get(E, (Value *)b, a->items[2 * i], sp);
      if (!bv || !same_at(E, a->items[2 * i + 1], bv, sp, depth + 1)) return false;
    }
    return true;
  case V_LIST:
  case V_TUPLE:
    if (a->n != b->n) return false;
    if (depth >= EV_MAX_VALUE_DEPTH)
      ev_error(E, sp, "cannot compare %ss nested more than %d levels deep", v_type_name(a),
               EV_MAX_VALUE_DEPTH);
    ev_charge(E, a->n / 8, sp);
    for (int i = 0; i < a->n; i++)
      if (!same_at(E, a->items[i], b->items[i], sp, depth + 1)) return false;
    return true;
  default:
    return false;
  }
}

bool v_same(Eval *E, const Value *a, const Value *b, Span sp) { return same_at(E, a, b, sp, 0); }

/* A scalar kernel parameter the expression reads (the first found; a
 * few levels deep), or NULL. */
static const IrParam *param_in(const IrExpr *x, int depth) {
  if (!x || depth > 16) return NULL;
  if (x->kind == X_PARAM) return x->param->is_ptr ? NULL : x->param;
  const IrParam *p = param_in(x->a, depth + 1);
  if (!p) p = param_in(x->b, depth + 1);
  return p ? p : param_in(x->c, depth + 1);
}

/* A compile-time integer (bools count), or an error naming what needed it:
 * "<what> must be a compile-time constant". A value that comes from an
 * `int` parameter is a constant in Tilus, which compiles per value: the
 * message says how to give one. */
int64_t v_to_int(Eval *E, Value *v, Span sp, const char *what) {
  int64_t c;
  if (v->kind == V_INT || v->kind == V_BOOL) return v->i;
  if (v->kind == V_EXPR && ir_is_const(v->x, &c) && !dtype_is_float(v->x->type)) return c;
  const IrParam *p = v->kind == V_EXPR ? param_in(v->x, 0) : NULL;
  if (p)
    ev_error(E, sp,
             "%s must be a compile-time constant; it depends on kernel parameter '%s', which "
             "tlsc keeps a run-time value: give it with -D %s=VALUE for an entry specialised "
             "on it",
             what, p->name, p->name);
  if (v->kind == V_EXPR || v->kind == V_TENSOR || v->kind == V_REF)
    ev_error(E, sp, "%s must be a compile-time constant", what);
  ev_error(E, sp, "%s must be an integer, not '%s'", what, v_type_name(v));
}

/* C's usual arithmetic conversions over the IR scalar types. */
DType ev_promote(DType a, DType b) {
  if (a == DT_FLOAT64 || b == DT_FLOAT64) return DT_FLOAT64;
  if (dtype_is_float(a) || dtype_is_float(b)) return DT_FLOAT32;
  if (a == DT_UINT64 || b == DT_UINT64) return DT_UINT64;
  if (a == DT_INT64 || b == DT_INT64) return DT_INT64;
  if (a == DT_UINT32 || b == DT_UINT32) return DT_UINT32;
  return DT_INT32;
}

bool ev_int_fits(int64_t v, DType t) {
  switch (t) {
  case DT_INT32:
    return v >= INT32_MIN && v <= INT32_MAX;
  case DT_UINT32:
    return v >= 0 && v <= (int64_t)UINT32_MAX;
  case DT_UINT64:
    return v >= 0;
  case DT_FLOAT16: /* 65520 and above round to infinity */
    return v > -65520 && v < 65520;
  default: /* bool, int64; float32/64 and bfloat16 hold every int64 */
    return true;
  }
}

IrExpr *ev_expr_convert(Eval *E, IrExpr *x, DType t) {
  if (x->type == t) return x;
  return ir_cast(E->ar, t, x);
}

/* A scalar as an IR expression: compile-time ints become int32 constants,
 * floats float32, bools bool. */
IrExpr *v_to_expr(Eval *E, Value *v, Span sp) {
  switch (v->kind) {
  case V_EXPR:
    return v->x;
  case V_BOOL:
    return ir_const(E->ar, DT_BOOL, v->i);
  case V_INT:
    if (v->i < INT32_MIN || v->i > (int64_t)UINT32_MAX)
      ev_error(E, sp, "integer %lld does not fit in 32 bits", (long long)v->i);
    return ir_const(E->ar, v->i > INT32_MAX ? DT_UINT32 : DT_INT32, v->i);
  case V_FLOAT:
    return ir_const_f(E->ar, DT_FLOAT32, v->f);
  case V_UNDEF:
    ev_error(E, sp, "value is not defined on every path");
  default:
    ev_error(E, sp, "expected a scalar, got '%s'", v_type_name(v));
  }
}

bool ev_expr_uses_var(const IrExpr *x) {
  if (!x) return false;
  if (x->kind == X_VAR) return true;
  return ev_expr_uses_var(x->a) || ev_expr_uses_var(x->b) || ev_expr_uses_var(x->c);
}

/* True when x is computed from kernel parameters and constants only. */
bool ev_expr_only_params(const IrExpr *x) {
  if (!x) return true;
  if (x->kind == X_VAR || x->kind == X_SPECIAL) return false;
  return ev_expr_only_params(x->a) && ev_expr_only_params(x->b) && ev_expr_only_params(x->c);
}

/* A shared view: an indexed shared tensor, a whole shared tensor, or one
 * mbarrier. */
IrRef v_to_ref(Eval *E, Value *v, Span sp, const char *what) {
  if ((v->kind == V_REF || v->kind == V_TENSOR) && E->k)
    ev_check_not_freed(E, v->kind == V_REF ? v->ref.t : v->t, sp);
  if (v->kind == V_REF) return v->ref;
  if (v->kind == V_TENSOR && v->t->space == MS_SHARED) {
    IrRef r = {0};
    r.t = v->t;
    return r;
  }
  ev_error(E, sp, "%s must be a shared tensor, not '%s'", what, v_type_name(v));
}

IrTensor *v_to_tensor(Eval *E, Value *v, Span sp, MemSpace space, const char *what) {
  static const char *kind[] = {"a global tensor", "a shared tensor", "a register tensor"};
  if (v->kind != V_TENSOR || v->t->space != space)
    ev_error(E, sp, "%s must be %s, not '%s'", what, kind[space], v_type_name(v));
  if (space == MS_REGISTER) ev_reg_use(E, v->t, sp);
  return v->t;
}

DType v_to_dtype(Eval *E, Value *v, Span sp, const char *what) {
  if (v->kind != V_DTYPE)
    ev_error(E, sp, "%s must be a dtype (float16, float32, ...), not '%s'", what, v_type_name(v));
  ev_check_dtype(E, v, sp);
  return v->dt;
}

void ev_check_dtype(Eval *E, const Value *v, Span sp) {
  if (v->kind == V_DTYPE && v->dt == DT_VOID)
    ev_error(E, sp, "'%s' is a low-precision Tilus dtype that tlsc does not support yet", v->s);
}

void ev_check_compute_dtype(Eval *E, DType t, Span sp, const char *what) {
  if (dtype_is_storage(t))
    ev_error(E, sp,
             "%s %s is not supported: tlsc only loads, stores and converts %s tensors "
             "(convert with .to(float32) or .to(int32) first)",
             what, dtype_name(t), dtype_name(t));
}

/* The name the next tensor or variable gets: the assignment target being
 * evaluated, else fallback. */
const char *ev_hint(Eval *E, const char *fallback) {
  const char *h = E->hint ? E->hint : fallback;
  E->hint = NULL;
  return h;
}

void ev_charge(Eval *E, int64_t units, Span sp) {
  E->steps += (long)units;
  ev_step(E, sp);
}

/* A step of compile-time work. The step count bounds the time; the
 * arena's size bounds the memory, since a compile-time loop that grows a
 * list holds every value it made until the compile ends (about 1 KB a
 * step: 2 GB before the step limit). */
void ev_step(Eval *E, Span sp) {
  if (++E->steps > EV_MAX_STEPS)
    ev_error(E, sp,
             "compile-time evaluation does not finish (more than %d "
             "steps)",
             EV_MAX_STEPS);
  if (arena_bytes(E->ar) > (size_t)EV_MAX_ARENA_MB << 20)
    ev_error(E, sp, "compile-time evaluation needs more than %d MiB of memory", EV_MAX_ARENA_MB);
}

/* ------------------------------------------------------ text of values */

typedef struct Text {
  char *buf;
  size_t len, cap;
} Text;

static void text_add(Eval *E, Text *t, const char *s, Span sp) {
  size_t n = strlen(s);
  if (t->len + n > EV_MAX_STR_LEN)
    ev_error(E, sp, "compile-time string is too long (over %d bytes)", EV_MAX_STR_LEN);
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 32;
    while (cap < t->len + n + 1) cap *= 2;
    char *b = arena_alloc(E->ar, cap);
    if (t->len) memcpy(b, t->buf, t->len);
    t->buf = b;
    t->cap = cap;
  }
  memcpy(t->buf + t->len, s, n + 1);
  t->len += n;
}

/* Python's repr of a float: the shortest text that reads back as it, with
 * ".0" on an integral value, inf, -inf, nan. */
const char *ev_float_repr(Eval *E, double f) {
  if (isnan(f)) return "nan";
  if (isinf(f)) return f < 0 ? "-inf" : "inf";
  char buf[64];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, f);
    if (strtod(buf, NULL) == f) break;
  }
  /* Python writes 1e16 as 1e+16 and 1e-05 as 1e-05 ... %g agrees, but it
   * switches to exponents at 1e16, %g at the precision: redo those */
  char *e = strchr(buf, 'e');
  if (!e && !strchr(buf, '.') && !strchr(buf, 'n')) {
    if (fabs(f) >= 1e16) {
      snprintf(buf, sizeof buf, "%.16e", f);
      for (int prec = 0; prec <= 16; prec++) {
        char t[64];
        snprintf(t, sizeof t, "%.*e", prec, f);
        if (strtod(t, NULL) == f) {
          memcpy(buf, t, sizeof t);
          break;
        }
      }
    } else {
      strcat(buf, ".0");
    }
  } else if (e && fabs(f) >= 1e-4 && fabs(f) < 1e16) {
    /* %g chose an exponent for a number Python prints plainly */
    char t[64];
    for (int prec = 0; prec <= 17; prec++) {
      snprintf(t, sizeof t, "%.*f", prec, f);
      if (strtod(t, NULL) == f) break;
    }
    if (!strchr(t, '.')) strcat(t, ".0");
    memcpy(buf, t, sizeof t);
  }
  return arena_printf(E->ar, "%s", buf);
}

static void repr_into(Eval *E, Text *t, const Value *v, Span sp, int depth, bool top_str) {
  if (depth > EV_MAX_VALUE_DEPTH)
    ev_error(E, sp, "cannot print a value nested more than %d levels deep", EV_MAX_VALUE_DEPTH);
  ev_step(E, sp);
  switch (v->kind) {
  case V_NONE:
    text_add(E, t, "None", sp);
    return;
  case V_ELLIPSIS:
    text_add(E, t, "Ellipsis", sp);
    return;
  case V_BOOL:
    text_add(E, t, v->i ? "True" : "False", sp);
    return;
  case V_INT:
    text_add(E, t, arena_printf(E->ar, "%lld", (long long)v->i), sp);
    return;
  case V_FLOAT:
    text_add(E, t, ev_float_repr(E, v->f), sp);
    return;
  case V_STR:
    if (top_str) {
      text_add(E, t, v->s, sp);
      return;
    }
    text_add(E, t, strchr(v->s, '\'') && !strchr(v->s, '"') ? "\"" : "'", sp);
    text_add(E, t, v->s, sp);
    text_add(E, t, strchr(v->s, '\'') && !strchr(v->s, '"') ? "\"" : "'", sp);
    return;
  case V_DTYPE:
    text_add(E, t, v->dt == DT_VOID && v->s ? v->s : dtype_name(v->dt), sp);
    return;
  case V_LIST:
  case V_TUPLE:
    text_add(E, t, v->kind == V_LIST ? "[" : "(", sp);
    for (int i = 0; i < v->n; i++) {
      if (i) text_add(E, t, ", ", sp);
      repr_into(E, t, v->items[i], sp, depth + 1, false);
    }
    text_add(E, t, v->kind == V_LIST ? "]" : v->n == 1 ? ",)" : ")", sp);
    return;
  case V_DICT:
    text_add(E, t, "{", sp);
    for (int i = 0; i < v->n; i++) {
      if (i) text_add(E, t, ", ", sp);
      repr_into(E, t, v->items[2 * i], sp, depth + 1, false);
      text_add(E, t, ": ", sp);
      repr_into(E, t, v->items[2 * i + 1], sp, depth + 1, false);
    }
    text_add(E, t, "}", sp);
    return;
  case V_CLASS:
    text_add(E, t, arena_printf(E->ar, "<class '%s'>", v->cls->name), sp);
    return;
  case V_INST:
    text_add(E, t, arena_printf(E->ar, "<%s object>", v->inst->cls->name), sp);
    return;
  default:
    ev_error(E, sp, "a '%s' has no compile-time text", v_type_name(v));
  }
}

const char *ev_repr(Eval *E, const Value *v, Span sp) {
  Text t = {0};
  repr_into(E, &t, v, sp, 0, false);
  return t.buf ? t.buf : "";
}

const char *ev_str(Eval *E, const Value *v, Span sp) {
  Text t = {0};
  repr_into(E, &t, v, sp, 0, true);
  return t.buf ? t.buf : "";
}

/* Digits of |v| in base (2, 8, 10, 16), upper-case hex when asked. */
static const char *int_digits(Eval *E, int64_t v, int base, bool upper) {
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  char buf[72], *p = buf + sizeof buf;
  *--p = 0;
  const char *dig = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  do {
    *--p = dig[u % (uint64_t)base];
    u /= (uint64_t)base;
  } while (u);
  return arena_printf(E->ar, "%s", p);
}

/* ',' or '_' between groups of 3 digits of the integer part of s. */
static const char *group_digits(Eval *E, const char *s, char sep) {
  size_t n = strspn(s, "0123456789");
  if (!sep || n <= 3) return s;
  char *out = arena_alloc(E->ar, strlen(s) + n / 3 + 2), *q = out;
  for (size_t i = 0; i < n; i++) {
    if (i && (n - i) % 3 == 0) *q++ = sep;
    *q++ = s[i];
  }
  strcpy(q, s + n);
  return out;
}

/* n copies of ch, as a string. */
static char *repeat_char(Eval *E, char ch, size_t n) {
  char *r = arena_alloc(E->ar, n + 1); /* zeroed: terminated */
  memset(r, ch, n);
  return r;
}

const char *ev_format(Eval *E, const Value *v, const char *spec, Span sp) {
  if (!spec[0]) return v->kind == V_STR ? v->s : ev_str(E, v, sp);
  const char *p = spec;
  char fill = ' ', align = 0, sign = '-', type = 0, sep = 0;
  bool alt = false;
  if (p[0] && p[1] && strchr("<>=^", p[1])) {
    fill = p[0];
    align = p[1];
    p += 2;
  } else if (p[0] && strchr("<>=^", p[0])) {
    align = *p++;
  }
  if (*p && strchr("+- ", *p)) sign = *p++;
  if (*p == 'z') p++;
  if (*p == '#') alt = true, p++;
  if (*p == '0') {
    if (!align) fill = '0', align = '=';
    p++;
  }
  long width = 0, prec = -1;
  while (*p >= '0' && *p <= '9' && width < 100000) width = width * 10 + (*p++ - '0');
  if (*p == ',' || *p == '_') sep = *p++;
  if (*p == '.') {
    prec = 0;
    p++;
    while (*p >= '0' && *p <= '9' && prec < 1000) prec = prec * 10 + (*p++ - '0');
  }
  if (*p) type = *p++;
  if (*p || width >= 100000 || prec >= 1000) ev_error(E, sp, "invalid format specifier '%s'", spec);
  const char *body, *sgn = "";
  bool number = v->kind == V_INT || v->kind == V_FLOAT || (v->kind == V_BOOL && type);
  if (v->kind == V_STR || (!number && !type)) {
    if (type && type != 's') ev_error(E, sp, "unknown format code '%c' for a string", type);
    body = v->kind == V_STR ? v->s : ev_str(E, v, sp);
    if (prec >= 0 && (size_t)prec < strlen(body)) body = arena_strndup(E->ar, body, (size_t)prec);
    if (!align) align = '<';
  } else if (!number) {
    ev_error(E, sp, "a '%s' has no format '%s'", v_type_name(v), spec);
  } else if (v->kind != V_FLOAT && (!type || strchr("dbBoxXcn", type))) {
    int64_t i = v->i;
    if (type == 'c') {
      body = arena_printf(E->ar, "%c", (char)i);
    } else {
      int base = type == 'b' ? 2 : type == 'o' ? 8 : (type == 'x' || type == 'X') ? 16 : 10;
      const char *d = group_digits(E, int_digits(E, i, base, type == 'X'), base == 10 ? sep : 0);
      const char *pre = !alt         ? ""
                        : base == 2  ? "0b"
                        : base == 8  ? "0o"
                        : base == 16 ? (type == 'X' ? "0X" : "0x")
                                     : "";
      body = arena_printf(E->ar, "%s%s", pre, d);
      sgn = i < 0 ? "-" : sign == '+' ? "+" : sign == ' ' ? " " : "";
    }
  } else {
    double f = v->kind == V_FLOAT ? v->f : (double)v->i;
    if (type && !strchr("eEfFgG%n", type))
      ev_error(E, sp, "unknown format code '%c' for a float", type);
    double a = fabs(f);
    if (type == '%') a *= 100;
    if (!type && prec < 0) {
      body = v->kind == V_FLOAT ? ev_float_repr(E, a) : arena_printf(E->ar, "%lld", (long long)(a));
    } else {
      char t = !type || type == 'n' ? 'g' : type == '%' ? 'f' : type;
      int pr = (int)(prec < 0 ? 6 : prec);
      switch (t) {
      case 'e':
        body = alt ? arena_printf(E->ar, "%#.*e", pr, a) : arena_printf(E->ar, "%.*e", pr, a);
        break;
      case 'E':
        body = alt ? arena_printf(E->ar, "%#.*E", pr, a) : arena_printf(E->ar, "%.*E", pr, a);
        break;
      case 'f':
      case 'F':
        body = alt ? arena_printf(E->ar, "%#.*f", pr, a) : arena_printf(E->ar, "%.*f", pr, a);
        break;
      case 'G':
        body = alt ? arena_printf(E->ar, "%#.*G", pr, a) : arena_printf(E->ar, "%.*G", pr, a);
        break;
      default:
        body = alt ? arena_printf(E->ar, "%#.*g", pr, a) : arena_printf(E->ar, "%.*g", pr, a);
      }
      if (!type && !strpbrk(body, ".eEn")) body = arena_printf(E->ar, "%s.0", body);
      if (isinf(a)) body = t >= 'a' ? "inf" : "INF";
      if (isnan(f)) body = t >= 'a' ? "nan" : "NAN";
    }
    body = group_digits(E, body, sep);
    if (type == '%') body = arena_printf(E->ar, "%s%%", body);
    sgn = signbit(f) && !isnan(f) ? "-" : sign == '+' ? "+" : sign == ' ' ? " " : "";
  }
  if (!align) align = '>';
  size_t len = strlen(sgn) + strlen(body); /* characters, as Python counts ASCII */
  size_t pad = width > 0 && (size_t)width > len ? (size_t)width - len : 0;
  ev_charge(E, (int64_t)(len + pad) / 64, sp);
  char *padding = repeat_char(E, fill, pad);
  size_t half = align == '^' ? pad / 2 : 0;
  switch (align) {
  case '<':
    return arena_printf(E->ar, "%s%s%s", sgn, body, padding);
  case '^':
    return arena_printf(E->ar, "%.*s%s%s%s", (int)half, padding, sgn, body, padding + half);
  case '=':
    return arena_printf(E->ar, "%s%s%s", sgn, padding, body);
  default:
    return arena_printf(E->ar, "%s%s%s", padding, sgn, body);
  }
}

/* ------------------------------------------------------------ % formatting */

/* One conversion of printf-style formatting: its flags, width and
 * precision (-1: none) and type. */
typedef struct Conv {
  bool left, zero, plus, space, alt;
  long width, prec;
  char type;
} Conv;

/* The next argument of a `%` format (args: a tuple's items, or the one
 * value), an error when there is none. */
static Value *next_arg(Eval *E, Value **args, int nargs, int *used, Span sp) {
  if (*used >= nargs) ev_error(E, sp, "not enough arguments for format string");
  return args[(*used)++];
}

/* A '*' width or precision: the next argument, an int. */
static long star_arg(Eval *E, Value **args, int nargs, int *used, Span sp) {
  Value *v = next_arg(E, args, nargs, used, sp);
  if (v->kind != V_INT && v->kind != V_BOOL) ev_error(E, sp, "* wants int");
  if (v->i > 100000 || v->i < -100000) ev_error(E, sp, "width too big");
  return (long)v->i;
}

/* An integer conversion with a precision, which printf-style formatting
 * (unlike format()) reads as the least number of digits: "%5.3d" % 7 is
 * "  007". */
static const char *int_with_digits(Eval *E, const Conv *c, char type, int64_t i) {
  int base = type == 'o' ? 8 : type == 'd' ? 10 : 16;
  const char *d = int_digits(E, i, base, type == 'X');
  size_t nd = strlen(d), zeros = (size_t)c->prec > nd ? (size_t)c->prec - nd : 0;
  const char *sgn = i < 0 ? "-" : c->plus ? "+" : c->space ? " " : "";
  const char *pre = !c->alt || base == 10 ? "" : base == 8 ? "0o" : type == 'X' ? "0X" : "0x";
  size_t len = strlen(sgn) + strlen(pre) + zeros + nd;
  size_t pad = c->width > 0 && (size_t)c->width > len ? (size_t)c->width - len : 0;
  if (c->zero && !c->left) zeros += pad, pad = 0;
  const char *z = repeat_char(E, '0', zeros), *spaces = repeat_char(E, ' ', pad);
  if (c->left) return arena_printf(E->ar, "%s%s%s%s%s", sgn, pre, z, d, spaces);
  return arena_printf(E->ar, "%s%s%s%s%s", spaces, sgn, pre, z, d);
}

/* Value v under conversion c, as Python's `%` operator writes it: through
 * format()'s mini-language, right-aligned unless '-', '0' padding for
 * numbers only. */
static const char *convert_one(Eval *E, const Conv *c, Value *v, Span sp) {
  char spec[64], *q = spec;
  if (v->kind == V_EXPR || v->kind == V_TENSOR)
    ev_error(E, sp,
             "%% formatting makes a compile-time string: it cannot hold a run-time value "
             "(self.printf prints one)");
  char type = c->type;
  bool number = strchr("diuoxXeEfFgG", type) != NULL;
  if (number) {
    bool is_int = v->kind == V_INT || v->kind == V_BOOL;
    if (!is_int && v->kind != V_FLOAT)
      ev_error(E, sp, "%%%c format: a real number is required, not %s", type, v_type_name(v));
    if (strchr("oxX", type) && !is_int)
      ev_error(E, sp, "%%%c format: an integer is required, not %s", type, v_type_name(v));
    if (strchr("diu", type)) { /* int(x): a float truncates */
      v = is_int ? v : v_int(E, (int64_t)v->f);
      type = 'd';
    } else if (strchr("eEfFgG", type) && is_int) {
      v = v_float(E, (double)v->i);
    }
  } else if (type == 'c') {
    if (v->kind == V_INT || v->kind == V_BOOL) {
      if (v->i < 0 || v->i > 0x10FFFF)
        ev_error(E, sp, "OverflowError: %%c arg not in range(0x110000)");
      v = v_str(E, ev_chr(E, v->i, sp));
    } else if (v->kind != V_STR || !ev_one_char(v->s)) {
      ev_error(E, sp, "%%c requires int or char");
    }
    type = 's';
  } else { /* s, r, a */
    v = v_str(E, type == 's' ? (v->kind == V_STR ? v->s : ev_str(E, v, sp)) : ev_repr(E, v, sp));
    type = 's';
  }
  if (c->prec >= 0 && strchr("doxX", type)) return int_with_digits(E, c, type, v->i);
  if (number && c->zero && !c->left) *q++ = '0'; /* fill, then '=' */
  *q++ = c->left ? '<' : (number && c->zero) ? '=' : '>';
  if (number && (c->plus || c->space)) *q++ = c->plus ? '+' : ' ';
  if (c->alt && strchr("oxX", type)) *q++ = '#';
  if (c->width > 0) q += snprintf(q, 16, "%ld", c->width);
  if (c->prec >= 0 && type != 'd') q += snprintf(q, 16, ".%ld", c->prec);
  *q++ = type;
  *q = 0;
  return ev_format(E, v, spec, sp);
}

const char *ev_percent_format(Eval *E, const char *fmt, Value *arg, Span sp) {
  Value *one[1] = {arg}, **args = one;
  int nargs = 1, used = 0;
  bool mapping = arg->kind == V_DICT;
  if (arg->kind == V_TUPLE) args = arg->items, nargs = arg->n;
  Text t = {0};
  for (const char *p = fmt; *p;) {
    if (*p != '%') {
      const char *end = strchr(p, '%');
      size_t n = end ? (size_t)(end - p) : strlen(p);
      text_add(E, &t, arena_strndup(E->ar, p, n), sp);
      p += n;
      continue;
    }
    p++;
    Value *v = NULL;
    if (*p == '(') { /* %(name)s */
      if (!mapping) ev_error(E, sp, "format requires a mapping");
      const char *close = strchr(p, ')');
      if (!close) ev_error(E, sp, "ValueError: incomplete format key");
      Value *key = v_str(E, arena_strndup(E->ar, p + 1, (size_t)(close - p - 1)));
      v = ev_dict_get(E, arg, key, sp);
      if (!v) ev_error(E, sp, "KeyError: %s", ev_repr(E, key, sp));
      used = nargs; /* no positional conversion after a keyed one, as in CPython */
      p = close + 1;
    }
    Conv c = {.prec = -1};
    for (; *p && strchr("-0+ #", *p); p++) {
      c.left |= *p == '-', c.zero |= *p == '0', c.plus |= *p == '+', c.space |= *p == ' ';
      c.alt |= *p == '#';
    }
    if (*p == '*') {
      c.width = star_arg(E, args, nargs, &used, sp), p++;
      if (c.width < 0) c.left = true, c.width = -c.width;
    } else {
      while (*p >= '0' && *p <= '9' && c.width < 100000) c.width = c.width * 10 + (*p++ - '0');
    }
    if (*p == '.') {
      p++;
      c.prec = 0;
      if (*p == '*') {
        c.prec = star_arg(E, args, nargs, &used, sp), p++;
        if (c.prec < 0) c.prec = 0;
      } else {
        while (*p >= '0' && *p <= '9' && c.prec < 1000) c.prec = c.prec * 10 + (*p++ - '0');
      }
    }
    while (*p && strchr("hlL", *p)) p++; /* length modifiers: ignored, as Python does */
    if (!*p) ev_error(E, sp, "ValueError: incomplete format");
    c.type = *p++;
    if (c.width >= 100000 || c.prec >= 1000) ev_error(E, sp, "width or precision too big");
    if (c.type == '%') {
      text_add(E, &t, "%", sp);
      continue;
    }
    if (!strchr("diuoxXeEfFgGcsra", c.type))
      ev_error(E, sp, "ValueError: unsupported format character '%c' (0x%x) at index %d", c.type,
               (unsigned)(unsigned char)c.type, (int)(p - 1 - fmt));
    if (!v) v = next_arg(E, args, nargs, &used, sp); /* a dict: itself, once */
    text_add(E, &t, convert_one(E, &c, v, sp), sp);
  }
  if (!mapping && used < nargs)
    ev_error(E, sp, "not all arguments converted during string formatting");
  return t.buf ? t.buf : "";
}
