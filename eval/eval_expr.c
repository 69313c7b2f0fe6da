/* eval_expr.c: expressions. Compile-time values compute with Python's
 * semantics; anything touching a run-time scalar becomes an IR expression
 * with C's semantics (OP_DIV truncates, OP_MOD takes the dividend's sign),
 * as in Tilus, which emits C++. */
#include <math.h>
#include <string.h>

#include "eval/eval_int.h"

static Value *eval_call(Eval *E, Node *n);

/* name: local scope, then module globals, then the builtins. */
Value *ev_lookup_name(Eval *E, const char *name, Span sp) {
  static const struct {
    const char *name;
    Builtin bi;
  } builtins[] = {{"range", B_RANGE},
                  {"len", B_LEN},
                  {"min", B_MIN},
                  {"max", B_MAX},
                  {"int", B_INT},
                  {"float", B_FLOAT},
                  {"bool", B_BOOL},
                  {"abs", B_ABS},
                  {"super", B_SUPER},
                  {"list", B_LIST},
                  {"tuple", B_TUPLE},
                  {"enumerate", B_ENUMERATE},
                  {"zip", B_ZIP},
                  {"str", B_STR},
                  {"print", B_PRINT},
                  {"dict", B_DICT},
                  {"isinstance", B_ISINSTANCE},
                  {"sum", B_SUM},
                  {"any", B_ANY},
                  {"all", B_ALL},
                  {"round", B_ROUND},
                  {"divmod", B_DIVMOD},
                  {"reversed", B_REVERSED},
                  {"sorted", B_SORTED},
                  {"getattr", B_GETATTR},
                  {"hasattr", B_HASATTR},
                  {"pow", B_POW},
                  {"chr", B_CHR},
                  {"ord", B_ORD},
                  {"hex", B_HEX},
                  {"bin", B_BIN},
                  {"oct", B_OCT},
                  {"map", B_MAP},
                  {"filter", B_FILTER}};
  Slot *s = NULL;
  if (E->frame) {
    s = ev_dict_find(E->frame->locals, name);
    for (Env *e = E->frame->env; !s && e; e = e->up) s = ev_dict_find(e->d, name);
  }
  if (!s) s = ev_dict_find(&E->globals, name);
  if (s && s->val->kind == V_UNDEF && s->val->i == UNDEF_DELETED) s = NULL;
  if (s) {
    if (s->val->kind == V_UNDEF && s->val->i == UNDEF_LOOP_VAR)
      ev_error(E, sp,
               "'%s' is the variable of the run-time loop at line %d and has no value after "
               "it; keep the value in a variable of its own",
               name, s->val->n);
    if (s->val->kind == V_UNDEF) ev_error(E, sp, "'%s' is not defined on every path", name);
    return s->val;
  }
  static const char exceptions[] =
      " Exception ValueError RuntimeError TypeError KeyError IndexError NotImplementedError "
      "AssertionError AttributeError ImportError ModuleNotFoundError ZeroDivisionError "
      "OverflowError ArithmeticError LookupError StopIteration ";
  const char *hit = strstr(exceptions, name);
  size_t nlen = strlen(name);
  if (hit && hit[-1] == ' ' && hit[nlen] == ' ') {
    Value *x = v_builtin(E, B_EXCEPTION, NULL);
    x->s = arena_strndup(E->ar, hit, nlen);
    return x;
  }
  for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
    if (strcmp(builtins[i].name, name) == 0) return v_builtin(E, builtins[i].bi, NULL);
  ev_error(E, sp, "name '%s' is not defined", name);
}

static Value *bind_method(Eval *E, Value *m, Value *self) {
  Value *b = v_new(E, V_BOUND);
  b->fn = m->fn;
  b->cls = m->cls;
  b->self = self;
  return b;
}

/* super().name: the first base class after obj->cls that has it (Python's
 * method resolution order; single inheritance), then tilus.Script's or
 * tilus.Class's own: __init__ (which does nothing) and the primitives. */
static Value *super_attr(Eval *E, Value *obj, const char *name, Span sp) {
  ClassDef *c = obj->cls->base;
  for (; c && c->ck == CK_USER; c = c->base) {
    Slot *s = ev_dict_find(&c->members, name);
    if (!s) continue;
    return s->val->kind == V_FUNC ? bind_method(E, s->val, obj->self) : s->val;
  }
  if (strcmp(name, "__init__") == 0) return v_builtin(E, B_NOOP_INIT, NULL);
  if (c && obj->self->kind == V_INST) {
    Value *p = ev_ns_attr(E, obj->self, name, sp);
    if (p) return p;
  }
  ev_error(E, sp, "'super' object has no attribute '%s'", name);
}

/* obj.name for every kind of value that has attributes. */
Value *ev_get_attr(Eval *E, Value *obj, const char *name, Span sp) {
  switch (obj->kind) {
  case V_MODULE:
  case V_HOST:
  case V_UNSUP:
    return ev_module_attr(E, obj, name, sp);
  case V_SUPER:
    return super_attr(E, obj, name, sp);
  case V_DICT:
    return ev_dict_attr(E, obj, name, sp);
  case V_LIST:
  case V_TUPLE:
  case V_STR:
    return ev_seq_attr(E, obj, name, sp);
  case V_NS:
    return ev_ns_attr(E, obj, name, sp);
  case V_TENSOR:
  case V_REF:
    return ev_tensor_attr(E, obj, name, sp);
  case V_INST: {
    Slot *s = ev_dict_find(&obj->inst->attrs, name);
    if (s) return s->val;
    Value *m = ev_find_member(obj->inst->cls, name);
    if (m && m->kind == V_FUNC) return bind_method(E, m, obj);
    if (m) return m;
    Value *p = ev_ns_attr(E, obj, name, sp); /* primitives; NULL if none */
    if (p) return p;
    ev_error(E, sp, "'%s' object has no attribute '%s'", obj->inst->cls->name, name);
  }
  case V_CLASS: {
    Value *m = ev_find_member(obj->cls, name);
    if (m) return m;
    ev_error(E, sp, "type object '%s' has no attribute '%s'", obj->cls->name, name);
  }
  case V_LAYOUT:
    return ev_layout_attr(E, obj, name, sp);
  case V_DTYPE:
    ev_check_dtype(E, obj, sp);
    return ev_dtype_attr(E, obj, name, sp);
  default:
    break;
  }
  ev_error(E, sp, "'%s' object has no attribute '%s'", v_type_name(obj), name);
}

static int64_t floordiv64(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

static int64_t floormod64(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

/* b ** e for e >= 0 by squaring: at most 2 * 63 multiplications, each
 * checked (1 ** (2**62) must not loop 2**62 times). */
static int64_t ipow(Eval *E, int64_t b, int64_t e, Span sp) {
  if (b == 0 || b == 1) return e == 0 ? 1 : b;
  if (b == -1) return e % 2 ? -1 : 1;
  int64_t r = 1;
  for (; e > 0; e /= 2) {
    if (e % 2 && __builtin_mul_overflow(r, b, &r))
      ev_error(E, sp, "integer overflow in compile-time arithmetic");
    /* another square is needed only while bits are left: |b| >= 2, so an
     * overflowing square means the result overflows too */
    if (e > 1 && __builtin_mul_overflow(b, b, &b))
      ev_error(E, sp, "integer overflow in compile-time arithmetic");
  }
  return r;
}

/* int op int with Python semantics and overflow checks. */
static Value *int_binop(Eval *E, int op, int64_t a, int64_t b, bool both_bool, Span sp) {
  int64_t r = 0;
  bool ovf = false;
  switch (op) {
  case '+':
    ovf = __builtin_add_overflow(a, b, &r);
    break;
  case '-':
    ovf = __builtin_sub_overflow(a, b, &r);
    break;
  case '*':
    ovf = __builtin_mul_overflow(a, b, &r);
    break;
  case '/':
    if (b == 0) ev_error(E, sp, "division by zero");
    return v_float(E, (double)a / (double)b);
  case TOK_FLOORDIV:
  case '%':
    if (b == 0) ev_error(E, sp, "division by zero");
    if (a == INT64_MIN && b == -1) ev_error(E, sp, "integer overflow in compile-time arithmetic");
    r = op == '%' ? floormod64(a, b) : floordiv64(a, b);
    break;
  case TOK_POW:
    if (b < 0 && a == 0) ev_error(E, sp, "0 cannot be raised to a negative power");
    if (b < 0) return v_float(E, pow((double)a, (double)b));
    r = ipow(E, a, b, sp);
    break;
  case '&':
    r = a & b;
    break;
  case '|':
    r = a | b;
    break;
  case '^':
    r = a ^ b;
    break;
  case TOK_LSHIFT:
    if (b < 0 || b > 62 || (a != 0 && (a > (INT64_MAX >> b) || a < (INT64_MIN >> b))))
      ev_error(E, sp, "invalid shift in compile-time arithmetic");
    r = (int64_t)((uint64_t)a << b); /* -2 << 1: C's << of a negative is UB */
    break;
  case TOK_RSHIFT:
    if (b < 0) ev_error(E, sp, "negative shift count");
    r = b > 63 ? (a < 0 ? -1 : 0) : a >> b;
    break;
  default:
    ev_error(E, sp, "unsupported operand types for %s: 'int' and 'int'", op_name(op));
  }
  if (ovf) ev_error(E, sp, "integer overflow in compile-time arithmetic");
  if (both_bool && (op == '&' || op == '|' || op == '^')) return v_bool(E, r != 0);
  return v_int(E, r);
}

static double num_f(const Value *v) { return v->kind == V_FLOAT ? v->f : (double)v->i; }

static Value *float_binop(Eval *E, int op, double a, double b, Span sp) {
  switch (op) {
  case '+':
    return v_float(E, a + b);
  case '-':
    return v_float(E, a - b);
  case '*':
    return v_float(E, a * b);
  case '/':
    if (b == 0) ev_error(E, sp, "float division by zero");
    return v_float(E, a / b);
  case TOK_FLOORDIV:
    if (b == 0) ev_error(E, sp, "float division by zero");
    return v_float(E, floor(a / b));
  case '%':
    if (b == 0) ev_error(E, sp, "float modulo by zero");
    return v_float(E, a - floor(a / b) * b);
  case TOK_POW:
    if (a == 0 && b < 0) ev_error(E, sp, "0.0 cannot be raised to a negative power");
    if (a < 0 && b != floor(b) && isfinite(b))
      ev_error(E, sp, "a negative number raised to a fractional power is complex");
    return v_float(E, pow(a, b));
  default:
    ev_error(E, sp, "unsupported operand types for %s: 'float'", op_name(op));
  }
}

const char *ev_str_concat(Eval *E, const char *a, const char *b, Span sp) {
  /* s = s + s in a loop doubles: 60 rounds would be 2**60 bytes */
  size_t len = strlen(a) + strlen(b);
  if (len > EV_MAX_STR_LEN)
    ev_error(E, sp, "compile-time string is too long (over %d bytes)", EV_MAX_STR_LEN);
  ev_charge(E, (int64_t)len / 64, sp);
  return arena_printf(E->ar, "%s%s", a, b);
}

/* list/tuple concatenation and repetition, str concatenation. */
static Value *seq_binop(Eval *E, int op, Value *a, Value *b, Span sp) {
  if (op == '+' && a->kind == b->kind && (a->kind == V_LIST || a->kind == V_TUPLE)) {
    if ((int64_t)a->n + b->n > EV_MAX_LIST_LEN) ev_error(E, sp, "compile-time list is too long");
    ev_charge(E, ((int64_t)a->n + b->n) / 8, sp);
    Value *r = v_seq(E, a->kind, a->n + b->n);
    memcpy(r->items, a->items, sizeof(Value *) * a->n);
    memcpy(r->items + a->n, b->items, sizeof(Value *) * b->n);
    return r;
  }
  if (op == '*' && (a->kind == V_INT || a->kind == V_BOOL) &&
      (b->kind == V_LIST || b->kind == V_TUPLE || b->kind == V_STR)) { /* 3 * [0] */
    Value *t = a;
    a = b, b = t;
  }
  if (op == '*' && a->kind == V_STR && (b->kind == V_INT || b->kind == V_BOOL)) { /* "ab" * 3 */
    int64_t times = b->i < 0 ? 0 : b->i, len = (int64_t)strlen(a->s);
    if (len == 0 || times == 0) return v_str(E, ""); /* "" * 10**12: no loop */
    if (times > EV_MAX_STR_LEN / len)
      ev_error(E, sp, "compile-time string is too long (over %d bytes)", EV_MAX_STR_LEN);
    ev_charge(E, len * times / 64, sp);
    char *r = arena_alloc(E->ar, (size_t)(len * times + 1));
    for (int64_t t = 0; t < times; t++) memcpy(r + t * len, a->s, (size_t)len);
    r[len * times] = 0;
    return v_str(E, r);
  }
  if (op == '*' && (a->kind == V_LIST || a->kind == V_TUPLE) &&
      (b->kind == V_INT || b->kind == V_BOOL)) {
    int64_t times = b->i < 0 ? 0 : b->i;
    if (a->n == 0) times = 0; /* [] * 10**12: no loop */
    if (a->n && times > EV_MAX_LIST_LEN / a->n) ev_error(E, sp, "compile-time list is too long");
    ev_charge(E, a->n * times / 8, sp);
    Value *r = v_seq(E, a->kind, (int)(a->n * times));
    for (int64_t t = 0; t < times; t++)
      memcpy(r->items + t * a->n, a->items, sizeof(Value *) * a->n);
    return r;
  }
  if (op == '+' && a->kind == V_STR && b->kind == V_STR)
    return v_str(E, ev_str_concat(E, a->s, b->s, sp));
  ev_error(E, sp, "unsupported operand types for %s: '%s' and '%s'", op_name(op), v_type_name(a),
           v_type_name(b));
}

/* The run-time type of an operation: a compile-time number takes the type of
 * the run-time operand (as a Python int literal does in Tilus). */
static DType rt_type(const Value *a, const Value *b) {
  DType ta = a->kind == V_EXPR ? a->x->type : DT_VOID;
  DType tb = b->kind == V_EXPR ? b->x->type : DT_VOID;
  if (ta == DT_VOID) {
    ta = a->kind == V_FLOAT ? DT_FLOAT32 : tb;
    if (a->kind != V_FLOAT && tb == DT_BOOL) ta = a->kind == V_BOOL ? DT_BOOL : DT_INT32;
  }
  if (tb == DT_VOID) {
    tb = b->kind == V_FLOAT ? DT_FLOAT32 : ta;
    if (b->kind != V_FLOAT && ta == DT_BOOL) tb = b->kind == V_BOOL ? DT_BOOL : DT_INT32;
  }
  if (ta == DT_BOOL && tb == DT_BOOL) return DT_BOOL;
  return ev_promote(ta, tb);
}

/* Whether the double f converted to type t is still finite (float types:
 * below the magnitude that rounds to infinity; NaN and infinities are
 * float values) or the same number (integer types: 3.0 is an int32, 2.5
 * and 1e10 are not). */
static bool float_fits(double f, DType t) {
  if (t == DT_BOOL) return true;
  if (dtype_is_float(t)) {
    double lim = t == DT_FLOAT16    ? 0x1.ffep15 /* 65520 */
                 : t == DT_BFLOAT16 ? 0x1.ffp127 /* 2**128 - 2**119 */
                 : t == DT_FLOAT32  ? 0x1.ffffffp127
                                    : INFINITY;
    return !isfinite(f) || fabs(f) < lim;
  }
  if (f != floor(f)) return false; /* NaN too */
  if (t == DT_UINT64) return f >= 0 && f < 0x1p64;
  return f >= -0x1p63 && f < 0x1p63 && ev_int_fits((int64_t)f, t);
}

/* A scalar as an expression of type t. This is where compile-time numbers
 * become typed IR constants: one that the type cannot hold is an error at
 * sp, never a silent wrap (Python's ints are unbounded, 2**32 is not an
 * int32 0). */
IrExpr *ev_scalar_as(Eval *E, Value *v, DType t, Span sp) {
  if (v->kind == V_INT || v->kind == V_BOOL) {
    if (!ev_int_fits(v->i, t))
      ev_error(E, sp, "%lld does not fit in %s", (long long)v->i, dtype_name(t));
    if (dtype_is_float(t)) return ir_const_f(E->ar, t, (double)v->i);
    return ir_const(E->ar, t, v->i);
  }
  if (v->kind == V_FLOAT) {
    if (!float_fits(v->f, t)) ev_error(E, sp, "%g does not fit in %s", v->f, dtype_name(t));
    if (dtype_is_float(t)) return ir_const_f(E->ar, t, v->f);
    if (t == DT_BOOL) return ir_const(E->ar, t, v->f != 0);
    return ir_const(E->ar, t, t == DT_UINT64 ? (int64_t)(uint64_t)v->f : (int64_t)v->f);
  }
  return ev_expr_convert(E, v_to_expr(E, v, sp), t);
}

/* The IR operation of Python's binary or comparison operator op. */
bool ev_binop_code(int op, IrOp *out) {
  switch (op) {
  case '+':
    *out = OP_ADD;
    return true;
  case '-':
    *out = OP_SUB;
    return true;
  case '*':
    *out = OP_MUL;
    return true;
  case '/':
  case TOK_FLOORDIV:
    *out = OP_DIV;
    return true;
  case '%':
    *out = OP_MOD;
    return true;
  case '&':
    *out = OP_AND;
    return true;
  case '|':
    *out = OP_OR;
    return true;
  case '^':
    *out = OP_XOR;
    return true;
  case TOK_LSHIFT:
    *out = OP_SHL;
    return true;
  case TOK_RSHIFT:
    *out = OP_SHR;
    return true;
  case '<':
    *out = OP_LT;
    return true;
  case '>':
    *out = OP_GT;
    return true;
  case TOK_LE:
    *out = OP_LE;
    return true;
  case TOK_GE:
    *out = OP_GE;
    return true;
  case TOK_EQ:
    *out = OP_EQ;
    return true;
  case TOK_NE:
    *out = OP_NE;
    return true;
  default:
    return false;
  }
}

/* A compile-time shift count of a run-time shift must be below the
 * operand's width: C (and so Tilus) leaves larger ones undefined, and the
 * count would otherwise be wrapped to the operand type first. */
static void check_shift_count(Eval *E, int64_t count, DType t, Span sp) {
  int bits = 8 * dtype_bytes(t);
  if (count < 0 || count >= bits)
    ev_error(E, sp, "shift count %lld is out of range for %s (0 to %d)", (long long)count,
             dtype_name(t), bits - 1);
}

/* The value of `a op b` (a comparison) when one operand is a compile-time
 * integer outside type t, the type of the other, run-time one: it is above
 * or below every value that operand can take, so the comparison is decided
 * now, as Python decides `n < 2**32` for an int32 n (True). NULL when both
 * fit (the comparison happens at run time, in t). */
static Value *compare_outside(Eval *E, IrOp iop, const Value *a, const Value *b, DType t) {
  bool out_a = a->kind == V_INT && !ev_int_fits(a->i, t);
  bool out_b = b->kind == V_INT && !ev_int_fits(b->i, t);
  if (!out_a && !out_b) return NULL;
  /* the sign of a - b */
  int sign = out_a ? (a->i > 0 ? 1 : -1) : (b->i > 0 ? -1 : 1);
  switch (iop) {
  case OP_LT:
  case OP_LE:
    return v_bool(E, sign < 0);
  case OP_GT:
  case OP_GE:
    return v_bool(E, sign > 0);
  case OP_EQ:
    return v_bool(E, false);
  default:
    return v_bool(E, true);
  }
}

/* A binary operation with at least one run-time scalar operand; asp and
 * bsp are the operands' spans (a constant that does not fit the operation's
 * type is reported there), sp the whole expression's. */
static Value *rt_binop(Eval *E, int op, Value *a, Value *b, Span sp, Span asp, Span bsp) {
  IrOp iop;
  if (!ev_binop_code(op, &iop))
    ev_error(E, sp, "operator %s on run-time values is not supported yet", op_name(op));
  DType t = rt_type(a, b);
  bool bitwise = iop == OP_AND || iop == OP_OR || iop == OP_XOR || iop == OP_SHL || iop == OP_SHR;
  if (t == DT_BOOL && !(bitwise && iop != OP_SHL && iop != OP_SHR) && iop < OP_EQ)
    t = DT_INT32; /* True + True == 2 */
  if (dtype_is_float(t) && (bitwise || iop == OP_MOD || op == TOK_FLOORDIV))
    ev_error(E, sp,
             "operator %s on float run-time values is not supported "
             "yet",
             op_name(op));
  if ((iop == OP_SHL || iop == OP_SHR) && b->kind == V_INT) check_shift_count(E, b->i, t, sp);
  if (iop >= OP_EQ && iop <= OP_GE) {
    /* a float16 cannot hold 100000, but h < 100000 is still a question */
    if (t == DT_FLOAT16 && ((a->kind == V_INT && !ev_int_fits(a->i, t)) ||
                            (b->kind == V_INT && !ev_int_fits(b->i, t))))
      t = DT_FLOAT32;
    Value *decided = dtype_is_float(t) ? NULL : compare_outside(E, iop, a, b, t);
    if (decided) return decided;
  }
  IrExpr *x = ev_scalar_as(E, a, t, asp);
  IrExpr *y = ev_scalar_as(E, b, t, bsp);
  int64_t c;
  /* as at compile time: C (and PTX) leave an integer division by zero
   * undefined */
  if ((iop == OP_DIV || iop == OP_MOD) && !dtype_is_float(t) && ir_is_const(y, &c) && c == 0)
    ev_error(E, sp, "division by zero");
  return ev_rt_value(E, ir_binary(E->ar, iop, x, y), sp);
}

/* a op b for every operand kind; asp and bsp are the operands' spans. */
static Value *binop_at(Eval *E, int op, Value *a, Value *b, Span sp, Span asp, Span bsp) {
  if (op == '%' && a->kind == V_STR) return v_str(E, ev_percent_format(E, a->s, b, sp));
  if (a->kind == V_TENSOR || b->kind == V_TENSOR) return ev_tensor_binop(E, op, a, b, sp);
  if (a->kind == V_EXPR || b->kind == V_EXPR) {
    if (!v_is_scalar(a) || !v_is_scalar(b))
      ev_error(E, sp, "unsupported operand types for %s: '%s' and '%s'", op_name(op),
               v_type_name(a), v_type_name(b));
    return rt_binop(E, op, a, b, sp, asp, bsp);
  }
  if (a->kind == V_LAYOUT && b->kind == V_LAYOUT && op == '*')
    return ev_layout_product(E, a, b, sp);
  if ((a->kind == V_INT || a->kind == V_BOOL) && (b->kind == V_INT || b->kind == V_BOOL)) {
    Value *r = int_binop(E, op, a->i, b->i, a->kind == V_BOOL && b->kind == V_BOOL, sp);
    if (a->from_param || b->from_param) r->from_param = true;
    return r;
  }
  if (v_is_number(a) && v_is_number(b)) return float_binop(E, op, num_f(a), num_f(b), sp);
  return seq_binop(E, op, a, b, sp);
}

Value *ev_eval_binop(Eval *E, int op, Value *a, Value *b, Span sp) {
  return binop_at(E, op, a, b, sp, sp, sp);
}

/* Compile-time comparison of two values (numbers, strings, None, equality of
 * anything). */
static bool ct_compare(Eval *E, int op, Value *a, Value *b, Span sp) {
  if ((op == TOK_IN || op == TOK_NOTIN) && b->kind == V_STR) { /* a substring */
    if (a->kind != V_STR)
      ev_error(E, sp, "'in <string>' requires string as left operand, not %s", v_type_name(a));
    ev_charge(E, (int64_t)strlen(b->s) / 64, sp);
    bool found = strstr(b->s, a->s) != NULL;
    return op == TOK_IN ? found : !found;
  }
  if (op == TOK_IN || op == TOK_NOTIN) {
    Value *seq = ev_iterate_list(E, b, sp);
    ev_charge(E, seq->n / 8, sp); /* a scan: `in` over 2**20 items in a loop */
    bool found = false;
    for (int i = 0; i < seq->n && !found; i++) found = ct_compare(E, TOK_EQ, a, seq->items[i], sp);
    return op == TOK_IN ? found : !found;
  }
  if (op == TOK_IS || op == TOK_ISNOT) {
    bool same = a->kind == b->kind && (a->kind == V_NONE || v_same(E, a, b, sp));
    return op == TOK_IS ? same : !same;
  }
  double c;
  if (v_is_number(a) && v_is_number(b)) {
    if (a->kind != V_FLOAT && b->kind != V_FLOAT)
      c = (a->i > b->i) - (a->i < b->i);
    else
      c = (num_f(a) > num_f(b)) - (num_f(a) < num_f(b));
  } else if (a->kind == V_STR && b->kind == V_STR) {
    ev_charge(E, (int64_t)strlen(a->s) / 64, sp);
    c = strcmp(a->s, b->s);
  } else if (op != TOK_EQ && op != TOK_NE && a->kind == b->kind &&
             (a->kind == V_LIST || a->kind == V_TUPLE)) {
    /* lexicographic: the first items that differ decide, else the lengths */
    int i = 0;
    ev_charge(E, a->n / 8, sp);
    while (i < a->n && i < b->n && ct_compare(E, TOK_EQ, a->items[i], b->items[i], sp)) i++;
    if (i < a->n && i < b->n) return ct_compare(E, op, a->items[i], b->items[i], sp);
    c = (a->n > b->n) - (a->n < b->n);
  } else if (op == TOK_EQ || op == TOK_NE) {
    bool eq = v_same(E, a, b, sp);
    return op == TOK_EQ ? eq : !eq;
  } else {
    ev_error(E, sp, "'%s' not supported between '%s' and '%s'", op_name(op), v_type_name(a),
             v_type_name(b));
  }
  switch (op) {
  case '<':
    return c < 0;
  case '>':
    return c > 0;
  case TOK_LE:
    return c <= 0;
  case TOK_GE:
    return c >= 0;
  case TOK_EQ:
    return c == 0;
  default:
    return c != 0;
  }
}

bool ev_less(Eval *E, Value *a, Value *b, Span sp) { return ct_compare(E, '<', a, b, sp); }
bool ev_equal(Eval *E, Value *a, Value *b, Span sp) { return ct_compare(E, TOK_EQ, a, b, sp); }

/* a < b <= c ...: compile time when every operand is; otherwise each link
 * becomes a bool expression, joined with && (operands are side-effect free
 * scalars, so evaluating each once is exact). */
static Value *eval_compare(Eval *E, Node *n) {
  Value *left = ev_eval_expr(E, n->list.items[0]);
  Value *acc = NULL;
  for (int i = 0; i + 1 < n->list.len; i++) {
    Value *right = ev_eval_expr(E, n->list.items[i + 1]);
    int op = n->ops[i];
    Value *link;
    bool tensors = (left->kind == V_TENSOR && left->t->space == MS_REGISTER) ||
                   (right->kind == V_TENSOR && right->t->space == MS_REGISTER);
    if (tensors && n->list.len == 2) /* element-wise: a bool tensor */
      return ev_tensor_binop(E, op, left, right, n->span);
    if (tensors)
      ev_error(E, n->span,
               "a chained comparison of register tensors asks for the truth value of a "
               "tensor, which is ambiguous (as in numpy): compare one pair at a time");
    if (left->kind == V_EXPR || right->kind == V_EXPR)
      link =
          binop_at(E, op, left, right, n->span, n->list.items[i]->span, n->list.items[i + 1]->span);
    else
      link = v_bool(E, ct_compare(E, op, left, right, n->span));
    if (!acc)
      acc = link;
    else if (acc->kind == V_BOOL && !acc->i)
      return acc;
    else if (acc->kind == V_BOOL)
      acc = link;
    else if (link->kind == V_BOOL)
      acc = link->i ? acc : link;
    else
      acc = ev_rt_value(E, ir_binary(E->ar, OP_LAND, acc->x, link->x), n->span);
    left = right;
  }
  return acc;
}

IrExpr *ev_to_bool_expr(Eval *E, Value *v, Span sp) {
  IrExpr *x = v_to_expr(E, v, sp);
  if (x->type == DT_BOOL) return x;
  if (dtype_is_float(x->type)) return ir_binary(E->ar, OP_NE, x, ir_const_f(E->ar, x->type, 0.0));
  return ir_binary(E->ar, OP_NE, x, ir_const(E->ar, x->type, 0));
}

/* and/or: short-circuit at compile time; with a run-time left operand both
 * sides become bools joined by &&/|| (Tilus does the same). */
static Value *eval_boolop(Eval *E, Node *n) {
  Value *a = ev_eval_expr(E, n->a);
  if (a->kind != V_EXPR) {
    bool t = v_truthy(E, a, n->a->span);
    if (n->op == TOK_AND ? !t : t) return a;
    return ev_eval_expr(E, n->b);
  }
  Value *b = ev_eval_expr(E, n->b);
  if (b->kind != V_EXPR && !v_is_number(b))
    ev_error(E, n->b->span, "'%s' cannot be combined with a run-time value", v_type_name(b));
  IrOp op = n->op == TOK_AND ? OP_LAND : OP_LOR;
  IrExpr *x = ev_to_bool_expr(E, a, n->a->span);
  IrExpr *y = ev_to_bool_expr(E, b, n->b->span);
  return ev_rt_value(E, ir_binary(E->ar, op, x, y), n->span);
}

static Value *eval_unary(Eval *E, Node *n) {
  Value *a = ev_eval_expr(E, n->a);
  Span sp = n->span;
  if (n->op == '~' && a->kind == V_DTYPE) {
    ev_check_dtype(E, a, sp);
    Value *p = v_new(E, V_PTRTYPE);
    p->dt = a->dt;
    return p;
  }
  if (a->kind == V_EXPR) {
    IrExpr *x = a->x;
    switch (n->op) {
    case '-':
      if (x->type == DT_BOOL) x = ir_cast(E->ar, DT_INT32, x);
      return ev_rt_value(E, ir_unary(E->ar, OP_NEG, x), sp);
    case '+':
      return a;
    case '~':
      if (dtype_is_float(x->type)) break;
      if (x->type == DT_BOOL) x = ir_cast(E->ar, DT_INT32, x);
      return ev_rt_value(E, ir_unary(E->ar, OP_BNOT, x), sp);
    case TOK_NOT:
      return ev_rt_value(E, ir_unary(E->ar, OP_LNOT, ev_to_bool_expr(E, a, sp)), sp);
    }
    ev_error(E, sp, "bad operand type for unary %s: '%s'", op_name(n->op), v_type_name(a));
  }
  if (n->op == TOK_NOT) return v_bool(E, !v_truthy(E, a, sp));
  if (a->kind == V_INT || a->kind == V_BOOL) {
    if (n->op == '-' && a->i == INT64_MIN)
      ev_error(E, sp, "integer overflow in compile-time arithmetic");
    Value *r = v_int(E, n->op == '-' ? -a->i : n->op == '~' ? ~a->i : a->i);
    r->from_param = a->from_param;
    return r;
  }
  if (a->kind == V_FLOAT && n->op != '~') return v_float(E, n->op == '-' ? -a->f : a->f);
  if (a->kind == V_TENSOR && n->op == '-') return ev_tensor_binop(E, '*', a, v_int(E, -1), sp);
  ev_error(E, sp, "bad operand type for unary %s: '%s'", op_name(n->op), v_type_name(a));
}

/* b if a else c: a run-time condition selects between two scalars. */
static Value *eval_ifexp(Eval *E, Node *n) {
  Value *c = ev_eval_expr(E, n->a);
  int64_t k;
  if (c->kind == V_EXPR && ir_is_const(c->x, &k)) c = v_bool(E, k != 0);
  if (c->kind != V_EXPR) return ev_eval_expr(E, v_truthy(E, c, n->a->span) ? n->b : n->c);
  Value *a = ev_eval_expr(E, n->b);
  Value *b = ev_eval_expr(E, n->c);
  if (!v_is_scalar(a) || !v_is_scalar(b))
    ev_error(E, n->span,
             "a run-time condition can only choose between "
             "scalars, not '%s' and '%s'",
             v_type_name(a), v_type_name(b));
  DType t = rt_type(a, b);
  IrExpr *cond = ev_to_bool_expr(E, c, n->a->span);
  IrExpr *x = ev_scalar_as(E, a, t, n->b->span);
  IrExpr *y = ev_scalar_as(E, b, t, n->c->span);
  return ev_rt_value(E, ir_select(E->ar, cond, x, y), n->span);
}

/* A string's characters (code points of its UTF-8), each a string. */
static Value *str_chars(Eval *E, const char *s, Span sp) {
  int64_t n = 0, len = (int64_t)strlen(s);
  for (int64_t i = 0; i < len; i++) n += ((unsigned char)s[i] & 0xC0) != 0x80;
  if (n > EV_MAX_LIST_LEN) ev_error(E, sp, "string too long to iterate at compile time");
  ev_charge(E, n, sp);
  Value *out = v_seq(E, V_LIST, (int)n);
  for (int64_t i = 0, k = 0; i < len; k++) {
    int64_t j = i + 1;
    while (j < len && ((unsigned char)s[j] & 0xC0) == 0x80) j++;
    out->items[k] = v_str(E, arena_strndup(E->ar, s + i, (size_t)(j - i)));
    i = j;
  }
  return out;
}

/* The items of a compile-time iterable: a list or tuple, a dict's keys, a
 * string's characters. */
Value *ev_iterate_list(Eval *E, Value *v, Span sp) {
  if (v->kind == V_LIST || v->kind == V_TUPLE) return v;
  if (v->kind == V_STR) return str_chars(E, v->s, sp);
  if (v->kind == V_DICT) { /* its keys */
    ev_charge(E, v->n / 8, sp);
    Value *keys = v_seq(E, V_LIST, v->n);
    for (int i = 0; i < v->n; i++) keys->items[i] = v->items[2 * i];
    return keys;
  }
  if (v->kind == V_HOST) ev_host_use(E, v, sp);
  if (v->kind == V_EXPR)
    ev_error(E, sp,
             "cannot iterate over a run-time value at compile time; "
             "use self.range()");
  ev_error(E, sp, "'%s' object is not iterable", v_type_name(v));
}

static void comp_clause(Eval *E, Node *n, int clause, Value *out);

/* Runs one `for target in iter if conds` clause of a comprehension, then the
 * next clause, or appends the element after the last. */
static void comp_run(Eval *E, Node *n, Node *cl, int clause, Value *out) {
  Value *seq = ev_iterate_list(E, ev_eval_expr(E, cl->c), cl->c->span);
  for (int i = 0; i < seq->n; i++) {
    ev_step(E, cl->span);
    ev_assign_to(E, cl->b, seq->items[i], NULL, cl->b->span);
    bool keep = true;
    for (int j = 0; j < cl->list.len && keep; j++)
      keep = v_truthy(E, ev_eval_expr(E, cl->list.items[j]), cl->list.items[j]->span);
    if (keep) comp_clause(E, n, clause + 1, out);
  }
}

static void comp_clause(Eval *E, Node *n, int clause, Value *out) {
  if (clause <= n->list2.len) {
    comp_run(E, n, clause == 0 ? n : n->list2.items[clause - 1], clause, out);
    return;
  }
  if (out->kind == V_DICT) { /* {k: v for ...} */
    Value *k = ev_eval_expr(E, n->a->a);
    ev_dict_put(E, out, k, ev_eval_expr(E, n->a->b), n->a->span);
    return;
  }
  if (out->n >= EV_MAX_LIST_LEN) ev_error(E, n->span, "compile-time list is too long");
  if (out->n == out->i) { /* i holds the capacity while building */
    int cap = out->i ? (int)out->i * 2 : 8;
    Value **items = arena_alloc(E->ar, sizeof(Value *) * cap);
    if (out->n) memcpy(items, out->items, sizeof(Value *) * out->n);
    out->items = items;
    out->i = cap;
  }
  out->items[out->n++] = ev_eval_expr(E, n->a);
}

/* [elt for x in xs if cond ...], {k: v for ...} and (elt for ...):
 * compile time only (a generator is its list). */
static Value *eval_listcomp(Eval *E, Node *n) {
  Value *out = n->kind == N_DICTCOMP ? v_dict(E) : v_new(E, V_LIST);
  comp_clause(E, n, 0, out);
  if (out->kind == V_LIST) out->i = 0;
  return out;
}

/* (a, *b, c) and [a, *b, c]: starred items spliced in. */
static Value *eval_seq(Eval *E, Node *n, VKind k) {
  int len = n->list.len;
  Value **vals = arena_alloc(E->ar, sizeof(Value *) * (size_t)(len + 1));
  int64_t total = 0;
  for (int i = 0; i < len; i++) {
    Node *it = n->list.items[i];
    vals[i] = ev_eval_expr(E, it->kind == N_STAR ? it->a : it);
    if (it->kind == N_STAR) vals[i] = ev_iterate_list(E, vals[i], it->span);
    total += it->kind == N_STAR ? vals[i]->n : 1;
  }
  if (total > EV_MAX_LIST_LEN) ev_error(E, n->span, "compile-time list is too long");
  ev_charge(E, total / 8, n->span);
  Value *v = v_seq(E, k, (int)total);
  for (int i = 0, j = 0; i < len; i++) {
    if (n->list.items[i]->kind != N_STAR) {
      v->items[j++] = vals[i];
      continue;
    }
    memcpy(&v->items[j], vals[i]->items, sizeof(Value *) * (size_t)vals[i]->n);
    j += vals[i]->n;
  }
  return v;
}

/* {k: v, **m}: a compile-time dict. */
static Value *eval_dict(Eval *E, Node *n) {
  Value *d = v_dict(E);
  for (int i = 0; i < n->list.len; i++) {
    Node *it = n->list.items[i];
    if (it->kind == N_DSTAR) {
      Value *m = ev_eval_expr(E, it->a);
      if (m->kind != V_DICT) ev_error(E, it->span, "'%s' object is not a mapping", v_type_name(m));
      for (int j = 0; j < m->n; j++)
        ev_dict_put(E, d, m->items[2 * j], m->items[2 * j + 1], it->span);
      continue;
    }
    Value *k = ev_eval_expr(E, it->a);
    ev_dict_put(E, d, k, ev_eval_expr(E, it->b), it->a->span);
  }
  return d;
}

/* f"...": a compile-time string; each {x!r:spec} is format(x, spec) after
 * the conversion (run-time values have no text before the kernel runs:
 * self.printf prints them). */
static Value *eval_fstring(Eval *E, Node *n) {
  const char *s = "";
  for (int i = 0; i < n->list.len; i++) {
    Node *part = n->list.items[i];
    const char *t;
    if (part->kind == N_STR) {
      t = part->str;
    } else {
      Value *v = ev_eval_expr(E, part->a);
      if (v->kind == V_EXPR || v->kind == V_TENSOR || v->kind == V_REF)
        ev_error(E, part->a->span,
                 "an f-string is a compile-time string: it cannot hold a run-time value "
                 "(self.printf prints one)");
      if (part->op == 'r' || part->op == 'a')
        v = v_str(E, ev_repr(E, v, part->span));
      else if (part->op == 's')
        v = v_str(E, ev_str(E, v, part->span));
      const char *spec = "";
      if (part->b) {
        Value *sv = ev_eval_expr(E, part->b);
        spec = sv->s;
      }
      t = ev_format(E, v, spec, part->span);
    }
    s = ev_str_concat(E, s, t, n->span);
  }
  return v_str(E, s);
}

/* x := v: binds x in the current scope, and is v. */
static Value *eval_namedexpr(Eval *E, Node *n) {
  Value *v = ev_eval_expr(E, n->b);
  ev_assign_to(E, n->a, v, NULL, n->span);
  return ev_eval_expr(E, n->a);
}

void ev_slice_bounds(Eval *E, Node *idx, int64_t n, int64_t *start, int64_t *stride,
                     uint64_t *count) {
  /* Python evaluates lower, upper, then step */
  Value *lov = idx->a ? ev_eval_expr(E, idx->a) : NULL;
  Value *hiv = idx->b ? ev_eval_expr(E, idx->b) : NULL;
  Value *stepv = idx->c ? ev_eval_expr(E, idx->c) : NULL;
  int64_t step = 1, lo, hi;
  if (stepv) step = v_to_int(E, stepv, idx->c->span, "slice step");
  if (step == 0) ev_error(E, idx->span, "slice step cannot be zero");
  lo = lov ? v_to_int(E, lov, idx->a->span, "slice") : (step > 0 ? 0 : n - 1);
  hi = hiv ? v_to_int(E, hiv, idx->b->span, "slice") : (step > 0 ? n : -n - 1);
  if (lo < 0) lo += n;
  if (hi < 0) hi += n;
  lo = lo < (step > 0 ? 0 : -1) ? (step > 0 ? 0 : -1) : lo > n ? n : lo;
  hi = hi < (step > 0 ? 0 : -1) ? (step > 0 ? 0 : -1) : hi > n ? n : hi;
  uint64_t len = 0;
  if (step > 0 && hi > lo) len = ((uint64_t)hi - (uint64_t)lo - 1) / (uint64_t)step + 1;
  if (step < 0 && lo > hi) len = ((uint64_t)lo - (uint64_t)hi - 1) / (0 - (uint64_t)step) + 1;
  *start = lo, *stride = step, *count = len;
}

/* seq[i] and seq[a:b:c] on compile-time lists and tuples (and the
 * characters of a string: str_index); `what` names seq in errors. */
static Value *seq_index(Eval *E, Value *seq, Node *idx, const char *what) {
  if (idx->kind == N_SLICE) {
    int64_t n = seq->n, lo, step;
    uint64_t len;
    ev_slice_bounds(E, idx, n, &lo, &step, &len);
    /* the items copied (a step of 2**40 copies one): charged, and the
     * copy is as long as the items, not the source */
    ev_charge(E, (int64_t)len / 8, idx->span);
    Value *r = v_seq(E, seq->kind, 0);
    r->items = arena_alloc(E->ar, sizeof(Value *) * (len ? len : 1));
    for (uint64_t k = 0; k < len; k++) { /* i += step could overflow */
      int64_t i = (int64_t)((uint64_t)lo + k * (uint64_t)step);
      if (i >= 0 && i < n) r->items[r->n++] = seq->items[i];
    }
    return r;
  }
  Value *iv = ev_eval_expr(E, idx);
  int64_t i = v_to_int(E, iv, idx->span, "list index");
  if (i < 0) i += seq->n;
  if (i < 0 || i >= seq->n) ev_error(E, idx->span, "%s index out of range", what);
  return seq->items[i];
}

/* s[i] and s[a:b:c]: over its characters (code points), as Python. */
static Value *str_index(Eval *E, Value *s, Node *idx, Span sp) {
  Value *r = seq_index(E, ev_iterate_list(E, s, sp), idx, "string");
  return r->kind == V_STR ? r : ev_str_join(E, r, "", sp, sp);
}

/* Whether a subscript holds a slice (x[a:b], x[:, a:b]). */
static bool has_slice(const Node *idx) {
  if (idx->kind == N_SLICE) return true;
  if (idx->kind != N_TUPLE) return false;
  for (int i = 0; i < idx->list.len; i++)
    if (idx->list.items[i]->kind == N_SLICE) return true;
  return false;
}

static Value *eval_subscript(Eval *E, Node *n) {
  Value *base = ev_eval_expr(E, n->a);
  if (base->kind == V_LIST || base->kind == V_TUPLE)
    return seq_index(E, base, n->b, v_type_name(base));
  if (base->kind == V_STR) return str_index(E, base, n->b, n->a->span);
  if (base->kind == V_DICT) {
    Value *k = ev_eval_expr(E, n->b);
    Value *v = ev_dict_get(E, base, k, n->b->span);
    if (!v) ev_error(E, n->b->span, "KeyError: the dict has no key %s", ev_repr(E, k, n->b->span));
    return v;
  }
  if (base->kind == V_HOST) { /* host code: no effect */
    ev_host_use(E, base, n->a->span);
    ev_eval_expr(E, n->b);
    return ev_host_derived(E, base, "[...]");
  }
  if (base->kind == V_UNSUP) ev_unsupported(E, base, n->a->span);
  if (E->in_annotation && (base->kind == V_BUILTIN || base->kind == V_CLASS))
    return base; /* list[int], tuple[int, int] */
  if (base->kind == V_TENSOR || base->kind == V_REF) {
    if (has_slice(n->b)) return ev_tensor_slice(E, base, n->b, n->span);
    return ev_tensor_index(E, base, ev_eval_expr(E, n->b), n->span);
  }
  ev_error(E, n->span, "'%s' object is not subscriptable", v_type_name(base));
}

Value *ev_eval_expr(Eval *E, Node *n) {
  switch (n->kind) {
  case N_NAME:
    return ev_lookup_name(E, n->name, n->span);
  case N_INT:
    return v_int(E, n->ival);
  case N_FLOAT:
    return v_float(E, n->fval);
  case N_STR:
    return v_str(E, n->str);
  case N_TRUE:
    return v_bool(E, true);
  case N_FALSE:
    return v_bool(E, false);
  case N_NONE:
    return v_none(E);
  case N_ATTR:
    return ev_get_attr(E, ev_eval_expr(E, n->a), n->name, n->span);
  case N_SUBSCRIPT:
    return eval_subscript(E, n);
  case N_TUPLE:
    return eval_seq(E, n, V_TUPLE);
  case N_LIST:
    return eval_seq(E, n, V_LIST);
  case N_LISTCOMP:
  case N_GENEXP:
  case N_DICTCOMP:
    return eval_listcomp(E, n);
  case N_DICT:
    return eval_dict(E, n);
  case N_FSTRING:
    return eval_fstring(E, n);
  case N_LAMBDA:
    return ev_func_here(E, n, NULL);
  case N_NAMEDEXPR:
    return eval_namedexpr(E, n);
  case N_ELLIPSIS:
    return v_new(E, V_ELLIPSIS);
  case N_SET:
  case N_SETCOMP:
    ev_error(E, n->span, "sets are not supported yet (lists, tuples and dicts are)");
  case N_BYTES:
    ev_error(E, n->span, "bytes are not supported");
  case N_IMAG:
    ev_error(E, n->span, "complex numbers are not supported");
  case N_AWAIT:
  case N_YIELD:
  case N_YIELD_FROM:
    ev_error(E, n->span, "'%s' is not supported in code tlsc evaluates",
             n->kind == N_AWAIT ? "await" : "yield");
  case N_CALL:
    return eval_call(E, n);
  case N_UNARY:
    return eval_unary(E, n);
  case N_BINARY: {
    /* left to right, as Python: not as C happens to order two arguments */
    Value *a = ev_eval_expr(E, n->a);
    Value *b = ev_eval_expr(E, n->b);
    return binop_at(E, n->op, a, b, n->span, n->a->span, n->b->span);
  }
  case N_COMPARE:
    return eval_compare(E, n);
  case N_BOOLOP:
    return eval_boolop(E, n);
  case N_IFEXP:
    return eval_ifexp(E, n);
  case N_SLICE:
    ev_error(E, n->span, "a slice is only allowed inside a subscript");
  case N_STAR:
    ev_error(E, n->span, "starred expression is only allowed in a call");
  default:
    ev_error(E, n->span, "expression (%s) not supported yet", node_kind_name(n->kind));
  }
}

/* f(args, *seq, name=value): evaluates the callee and the arguments. */
static Value *eval_call(Eval *E, Node *n) {
  Value *fn = ev_eval_expr(E, n->a);
  Args a = {0};
  int cap = n->list.len, kwcap = n->list2.len;
  Value **vals = arena_alloc(E->ar, sizeof(Value *) * (cap + 1));
  for (int i = 0; i < n->list.len; i++) {
    Node *arg = n->list.items[i];
    bool star = arg->kind == N_STAR, dstar = arg->kind == N_DSTAR;
    vals[i] = ev_eval_expr(E, star || dstar ? arg->a : arg);
    if (dstar) { /* f(**m): m's string keys are keyword arguments */
      if (vals[i]->kind != V_DICT)
        ev_error(E, arg->span, "argument after ** must be a mapping, not '%s'",
                 v_type_name(vals[i]));
      for (int j = 0; j < vals[i]->n; j++)
        if (vals[i]->items[2 * j]->kind != V_STR)
          ev_error(E, arg->span, "keywords must be strings");
      if ((int64_t)kwcap + vals[i]->n > EV_MAX_LIST_LEN)
        ev_error(E, arg->span, "too many arguments");
      kwcap += vals[i]->n;
      cap--;
    }
    if (star) {
      vals[i] = ev_iterate_list(E, vals[i], arg->span);
      int more = vals[i]->n;
      if ((int64_t)cap + more > EV_MAX_LIST_LEN) ev_error(E, arg->span, "too many arguments");
      ev_charge(E, more / 8, arg->span);
      cap += more;
    }
  }
  a.pos = arena_alloc(E->ar, sizeof(Value *) * (cap + 1));
  a.pos_span = arena_alloc(E->ar, sizeof(Span) * (cap + 1));
  for (int i = 0; i < n->list.len; i++) {
    Node *arg = n->list.items[i];
    if (arg->kind == N_DSTAR) continue;
    if (arg->kind != N_STAR) {
      a.pos_span[a.npos] = arg->span;
      a.pos[a.npos++] = vals[i];
      continue;
    }
    for (int j = 0; j < vals[i]->n; j++) {
      a.pos_span[a.npos] = arg->span;
      a.pos[a.npos++] = vals[i]->items[j];
    }
  }
  a.kw = arena_alloc(E->ar, sizeof(Value *) * (kwcap + 1));
  a.kw_name = arena_alloc(E->ar, sizeof(char *) * (kwcap + 1));
  a.kw_span = arena_alloc(E->ar, sizeof(Span) * (kwcap + 1));
  for (int i = 0; i < n->list2.len; i++) {
    Node *kw = n->list2.items[i];
    for (int j = 0; j < i; j++)
      if (strcmp(a.kw_name[j], kw->name) == 0)
        ev_error(E, kw->span, "keyword argument repeated: '%s'", kw->name);
    a.kw_name[a.nkw] = kw->name;
    a.kw_span[a.nkw] = kw->span;
    a.kw[a.nkw++] = ev_eval_expr(E, kw->a);
  }
  for (int i = 0; i < n->list.len; i++) {
    Node *arg = n->list.items[i];
    if (arg->kind != N_DSTAR) continue;
    for (int j = 0; j < vals[i]->n; j++) {
      const char *name = vals[i]->items[2 * j]->s;
      for (int k = 0; k < a.nkw; k++)
        if (strcmp(a.kw_name[k], name) == 0)
          ev_error(E, arg->span, "got multiple values for keyword argument '%s'", name);
      a.kw_name[a.nkw] = name;
      a.kw_span[a.nkw] = arg->span;
      a.kw[a.nkw++] = vals[i]->items[2 * j + 1];
    }
  }
  return ev_call_value(E, fn, &a, n->span);
}
