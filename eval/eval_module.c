/* eval_module.c: the module's top level, run as Python runs a module that
 * a tool imports (so `__name__` is the module's name, never "__main__").
 * Imports bind names by Python's rules (`import a.b` binds a, `from m
 * import x as y` binds y only): tilus and its submodules give Tilus's
 * compile-time names, `math` gives its functions on compile-time numbers,
 * and any other module is an opaque host module. Class and function
 * definitions bind their names; a function body runs only when called;
 * decorators apply. The host code of a Tilus user's file (torch set-up,
 * `pd.options.display.width = 1000`, a host decorator) acts on opaque host
 * values and has no effect; a host value that reaches kernel code is an
 * error at that use, naming its module. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eval/eval_int.h"

/* ------------------------------------------------------------ tilus */

/* Tilus's dtype names and aliases (tilus exports them from
 * tilus.hidet.ir.dtypes) that tlsc has. */
static const struct {
  const char *name;
  DType dt;
} tilus_dtypes[] = {
    {"float16", DT_FLOAT16},
    {"f16", DT_FLOAT16},
    {"bfloat16", DT_BFLOAT16},
    {"bf16", DT_BFLOAT16},
    {"float32", DT_FLOAT32},
    {"f32", DT_FLOAT32},
    {"float64", DT_FLOAT64},
    {"f64", DT_FLOAT64},
    {"int32", DT_INT32},
    {"i32", DT_INT32},
    {"uint32", DT_UINT32},
    {"u32", DT_UINT32},
    {"int64", DT_INT64},
    {"i64", DT_INT64},
    {"uint64", DT_UINT64},
    {"u64", DT_UINT64},
    {"boolean", DT_BOOL},
    {"int8", DT_INT8},
    {"i8", DT_INT8},
    {"uint8", DT_UINT8},
    {"u8", DT_UINT8},
    {"int16", DT_INT16},
    {"i16", DT_INT16},
    {"uint16", DT_UINT16},
    {"u16", DT_UINT16},
    {"float8_e4m3", DT_FLOAT8_E4M3},
    {"f8e4m3", DT_FLOAT8_E4M3},
    {"float8_e5m2", DT_FLOAT8_E5M2},
    {"f8e5m2", DT_FLOAT8_E5M2},
};

/* Name lists, one space-separated string each. The dtypes tlsc does not
 * have yet (tfloat32, complex): they import, and a use is an error naming
 * them. */
static const char tilus_lowp_dtypes[] = "tfloat32 tf32 complex64 complex128";
/* Names of tilus (and tilus.lang) that are host code: tensors built from
 * torch, options, the version. */
static const char tilus_host_names[] = "empty from_torch full ones rand randint randn view_torch "
                                       "zeros option logging kernels target get_current_target "
                                       "__version__";
/* Names of tilus that are Tilus objects tlsc does not have yet. */
static const char tilus_unsup_names[] =
    "Pipeline Dim3 RegisterLayout SharedLayout InstantiatedScript Attributes ir hidet";
/* tilus.utils: the compile-time helpers, then the host ones. */
static const char tutil_names[] = "gcd lcm prod idiv floor_log2 is_power_of_two";
static const char tutil_host_names[] =
    "benchmark_func clear_cache parallel_imap parallel_map ncu_run nsys_run stats initialize "
    "nbytes_from_nbits relative_to_with_walk_up same_list to_snake_case dtype_from_torch "
    "dtype_to_torch";

/* Whether name is a word of the space-separated list. */
static bool in_list(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; (p = strstr(p, name)); p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0)) return true;
  return false;
}

static ClassDef *builtin_class(Eval *E, ClassKind ck, const char *name) {
  ClassDef *c = arena_alloc(E->ar, sizeof(ClassDef));
  c->ck = ck;
  c->name = name;
  c->is_script = ck == CK_SCRIPT_BASE;
  return c;
}

static Value *class_value(Eval *E, ClassKind ck, const char *name) {
  Value *v = v_new(E, V_CLASS);
  v->cls = builtin_class(E, ck, name);
  return v;
}

static Value *unsup(Eval *E, const char *path) {
  Value *v = v_new(E, V_UNSUP);
  v->s = path;
  return v;
}

/* A sub-byte dtype by its Tilus name or alias: int4b / i4, uint3b / u3,
 * float6_e3m2 / f6e3m2. */
static bool subbyte_named(const char *name, DType *out) {
  char full[32];
  if ((name[0] == 'i' || name[0] == 'u') && name[1] >= '1' && name[1] <= '7' && !name[2])
    snprintf(full, sizeof full, "%sint%cb", name[0] == 'u' ? "u" : "", name[1]);
  else if (name[0] == 'f' && name[1] >= '3' && name[1] <= '7' && name[2] == 'e' &&
           strlen(name) == 6)
    snprintf(full, sizeof full, "float%c_%s", name[1], name + 2);
  else
    snprintf(full, sizeof full, "%s", name);
  return dtype_from_name(full, out) && dtype_is_subbyte(*out);
}

/* A dtype, a tensor type or void_p: names that every tilus module holding
 * them gives alike (tilus, tilus.ir, tilus.hidet.ir.dtypes ...); NULL for
 * another name. */
static Value *tilus_type_name(Eval *E, const char *name) {
  static const char *type_names[] = {"RegisterTensor", "SharedTensor", "GlobalTensor", "Tensor",
                                     "DataType"};
  DType sub;
  for (size_t i = 0; i < sizeof tilus_dtypes / sizeof tilus_dtypes[0]; i++)
    if (strcmp(name, tilus_dtypes[i].name) == 0) {
      Value *v = v_new(E, V_DTYPE);
      v->dt = tilus_dtypes[i].dt;
      return v;
    }
  if (subbyte_named(name, &sub)) {
    Value *v = v_new(E, V_DTYPE);
    v->dt = sub;
    return v;
  }
  if (in_list(tilus_lowp_dtypes, name)) {
    Value *v = v_new(E, V_DTYPE);
    v->dt = DT_VOID;
    v->s = name;
    return v;
  }
  if (strcmp(name, "void_p") == 0) { /* a pointer of no element type */
    Value *v = v_new(E, V_PTRTYPE);
    v->dt = DT_VOID;
    return v;
  }
  for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
    if (strcmp(name, type_names[i]) == 0) return class_value(E, CK_CLASS_BASE, type_names[i]);
  return NULL;
}

/* A Tilus dtype by name (float16, f16, int32 ...), for -D NAME=DTYPE; NULL
 * for another name. */
Value *ev_dtype_named(Eval *E, const char *name) {
  Value *v = tilus_type_name(E, name);
  return v && v->kind == V_DTYPE ? v : NULL;
}

static Value *module_value(Eval *E, const char *path) {
  if (strcmp(path, "tilus") == 0 || strncmp(path, "tilus.", 6) == 0 || strcmp(path, "math") == 0) {
    Value *v = v_new(E, V_MODULE);
    v->s = path;
    return v;
  }
  return v_host(E, path);
}

/* tilus.NAME and tilus.lang.NAME; NULL when Tilus has no such name. */
static Value *tilus_attr(Eval *E, const char *name) {
  if (strcmp(name, "Script") == 0) return class_value(E, CK_SCRIPT_BASE, "tilus.Script");
  if (strcmp(name, "Class") == 0) return class_value(E, CK_CLASS_BASE, "tilus.Class");
  if (strcmp(name, "autotune") == 0) return v_builtin(E, B_AUTOTUNE, NULL);
  if (strcmp(name, "utils") == 0 || strcmp(name, "lang") == 0)
    return module_value(E, arena_printf(E->ar, "tilus.%s", name));
  Value *t = tilus_type_name(E, name);
  if (t) return t;
  if (in_list(tilus_host_names, name)) return v_host(E, arena_printf(E->ar, "tilus.%s", name));
  if (in_list(tilus_unsup_names, name)) return unsup(E, arena_printf(E->ar, "tilus.%s", name));
  return NULL;
}

/* tilus.utils.NAME; NULL when it has no such name. */
static Value *tutil_attr(Eval *E, const char *name) {
  if (strcmp(name, "cdiv") == 0) return v_builtin(E, B_CDIV, NULL);
  if (in_list(tutil_names, name)) {
    Value *f = v_builtin(E, B_TUTIL, NULL);
    f->s = name;
    return f;
  }
  if (in_list(tutil_host_names, name))
    return v_host(E, arena_printf(E->ar, "tilus.utils.%s", name));
  return NULL;
}

/* ------------------------------------------------------------- math */

/* math's functions of floats: one argument (domain: 0 any, 1 x >= 0,
 * 2 x > 0, 3 |x| <= 1) or two. */
static double copysign2(double x, double y) { return copysign(x, y); }
static const struct {
  const char *name;
  double (*f1)(double);
  double (*f2)(double, double);
  int domain;
} math_float_funcs[] = {
    {"sqrt", sqrt, NULL, 1},
    {"exp", exp, NULL, 0},
    {"exp2", exp2, NULL, 0},
    {"log2", log2, NULL, 2},
    {"log10", log10, NULL, 2},
    {"fabs", fabs, NULL, 0},
    {"sin", sin, NULL, 0},
    {"cos", cos, NULL, 0},
    {"tan", tan, NULL, 0},
    {"tanh", tanh, NULL, 0},
    {"atan", atan, NULL, 0},
    {"asin", asin, NULL, 3},
    {"acos", acos, NULL, 3},
    {"pow", NULL, pow, 0},
    {"atan2", NULL, atan2, 0},
    {"hypot", NULL, hypot, 0},
    {"copysign", NULL, copysign2, 0},
    {"fmod", NULL, fmod, 0},
};
/* the others, on integers or with their own rules (ev_call_math) */
static const char math_funcs[] =
    "log ceil floor trunc prod gcd lcm isqrt factorial isinf isnan isfinite";

static Value *math_attr(Eval *E, const char *name) {
  if (strcmp(name, "pi") == 0) return v_float(E, M_PI);
  if (strcmp(name, "e") == 0) return v_float(E, M_E);
  if (strcmp(name, "tau") == 0) return v_float(E, 2 * M_PI);
  if (strcmp(name, "inf") == 0) return v_float(E, INFINITY);
  if (strcmp(name, "nan") == 0) return v_float(E, NAN);
  bool known = in_list(math_funcs, name);
  for (size_t i = 0; !known && i < sizeof math_float_funcs / sizeof math_float_funcs[0]; i++)
    known = strcmp(name, math_float_funcs[i].name) == 0;
  if (!known) return NULL;
  Value *f = v_builtin(E, B_MATH, NULL);
  f->s = name;
  return f;
}

/* A compile-time number argument of math.NAME or tilus.utils.NAME. */
static double num_arg(Eval *E, const char *mod, const char *fname, Value *v, Span sp) {
  if (v->kind == V_INT || v->kind == V_BOOL) return (double)v->i;
  if (v->kind == V_FLOAT) return v->f;
  if (v->kind == V_EXPR || v->kind == V_TENSOR)
    ev_error(E, sp,
             "%s.%s() is evaluated at compile time; it needs a compile-time number, not '%s'", mod,
             fname, v_type_name(v));
  ev_error(E, sp, "%s.%s(): must be a real number, not '%s'", mod, fname, v_type_name(v));
}

static int64_t int_arg(Eval *E, const char *mod, const char *fname, Value *v, Span sp) {
  if (v->kind == V_INT || v->kind == V_BOOL) return v->i;
  num_arg(E, mod, fname, v, sp); /* reports run-time values */
  ev_error(E, sp, "%s.%s(): '%s' object cannot be interpreted as an integer", mod, fname,
           v_type_name(v));
}

static void no_kw(Eval *E, Args *a, const char *mod, const char *fname) {
  if (a->nkw)
    ev_error(E, a->kw_span[0], "%s.%s() got an unexpected keyword argument '%s'", mod, fname,
             a->kw_name[0]);
}

static void nargs(Eval *E, Args *a, Span sp, const char *mod, const char *fname, int lo, int hi) {
  no_kw(E, a, mod, fname);
  if (a->npos < lo || a->npos > hi)
    ev_error(E, sp, "%s.%s() takes %s%d argument%s (%d given)", mod, fname,
             lo == hi       ? "exactly "
             : a->npos < lo ? "at least "
                            : "at most ",
             a->npos < lo ? lo : hi, (a->npos < lo ? lo : hi) == 1 ? "" : "s", a->npos);
}

/* A float result of math: a domain error for NaN from numbers that were
 * not NaN, a range error for an infinity from finite numbers (Python's
 * ValueError and OverflowError). */
static Value *math_result(Eval *E, double r, const double *in, int n, Span sp) {
  bool nan_in = false, inf_in = false;
  for (int i = 0; i < n; i++) nan_in |= isnan(in[i]), inf_in |= isinf(in[i]);
  if (isnan(r) && !nan_in) ev_error(E, sp, "math domain error");
  if (isinf(r) && !inf_in) ev_error(E, sp, "math range error");
  return v_float(E, r);
}

static Value *to_int_value(Eval *E, double f, Span sp) {
  if (isnan(f)) ev_error(E, sp, "cannot convert float NaN to integer");
  if (isinf(f)) ev_error(E, sp, "cannot convert float infinity to integer");
  if (!(f > -9.2e18 && f < 9.2e18)) ev_error(E, sp, "integer overflow in compile-time arithmetic");
  return v_int(E, (int64_t)f);
}

static Value *lcm_of(Eval *E, int64_t a, int64_t b, Span sp) {
  if (a == 0 || b == 0) return v_int(E, 0);
  int64_t r;
  if (__builtin_mul_overflow(a / ir_gcd(a, b), b, &r))
    ev_error(E, sp, "integer overflow in compile-time arithmetic");
  return v_int(E, r < 0 ? -r : r);
}

/* The product of a compile-time sequence, with Python's * (ints stay
 * ints; a run-time item makes it run time, as functools.reduce does). */
static Value *product(Eval *E, Value *seq, Value *start, Span sp) {
  seq = ev_iterate_list(E, seq, sp);
  ev_charge(E, seq->n / 8, sp);
  Value *r = start;
  for (int i = 0; i < seq->n; i++) r = ev_eval_binop(E, '*', r, seq->items[i], sp);
  return r;
}

/* math.exp(x) of a run-time x: Tilus maps Python's math functions on
 * kernel values to the device's (float32; exp and log as ex2/lg2). */
static Value *rt_math(Eval *E, const char *f, Args *a, Span sp) {
  static const struct {
    const char *name;
    IrMathFn fn;
  } fns[] = {{"exp", FN_EXP},   {"exp2", FN_EXP2}, {"log", FN_LOG},
             {"log2", FN_LOG2}, {"sqrt", FN_SQRT}, {"sin", FN_SIN},
             {"cos", FN_COS},   {"tanh", FN_TANH}, {"fabs", FN_ABS}};
  Value *x = a->npos == 1 && !a->nkw ? a->pos[0] : NULL;
  if (!x || x->kind != V_EXPR) return NULL;
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
    if (strcmp(f, fns[i].name) == 0) return v_expr(E, ir_math(E->ar, fns[i].fn, x->x));
  ev_error(E, sp,
           "math.%s() of a run-time value is not supported (exp, exp2, log, log2, sqrt, "
           "sin, cos, tanh and fabs are)",
           f);
}

Value *ev_call_math(Eval *E, Value *fn, Args *a, Span sp) {
  const char *f = fn->s, *M = "math";
  double x[2];
  Value *rt = rt_math(E, f, a, sp);
  if (rt) return rt;
  if (strcmp(f, "prod") == 0) {
    static const char *const names[] = {"iterable", "start", NULL};
    Value *v[2];
    if (a->npos > 1) ev_error(E, sp, "math.prod() takes exactly 1 positional argument");
    ev_bind_args(E, a, sp, "math.prod", names, 1, v);
    return product(E, v[0], v[1] ? v[1] : v_int(E, 1), sp);
  }
  if (strcmp(f, "gcd") == 0 || strcmp(f, "lcm") == 0) {
    no_kw(E, a, M, f);
    bool is_gcd = f[0] == 'g';
    int64_t r = is_gcd ? 0 : 1;
    for (int i = 0; i < a->npos; i++) {
      int64_t k = int_arg(E, M, f, a->pos[i], a->pos_span[i]);
      if (is_gcd)
        r = ir_gcd(r, k);
      else
        r = lcm_of(E, r, k, sp)->i;
    }
    if (r == INT64_MIN) ev_error(E, sp, "integer overflow in compile-time arithmetic");
    return v_int(E, r);
  }
  if (strcmp(f, "isqrt") == 0 || strcmp(f, "factorial") == 0) {
    nargs(E, a, sp, M, f, 1, 1);
    int64_t n = int_arg(E, M, f, a->pos[0], a->pos_span[0]);
    if (n < 0)
      ev_error(E, sp,
               f[0] == 'i' ? "isqrt() argument must be nonnegative"
                           : "factorial() not defined for negative values");
    if (f[0] == 'i') {
      int64_t r = (int64_t)sqrt((double)n);
      while (r > 0 && r * r > n) r--;
      while ((r + 1) <= 3037000499 && (r + 1) * (r + 1) <= n) r++;
      return v_int(E, r);
    }
    int64_t r = 1;
    for (int64_t i = 2; i <= n; i++)
      if (__builtin_mul_overflow(r, i, &r))
        ev_error(E, sp, "integer overflow in compile-time arithmetic");
    return v_int(E, r);
  }
  if (!strcmp(f, "ceil") || !strcmp(f, "floor") || !strcmp(f, "trunc") || !strcmp(f, "isinf") ||
      !strcmp(f, "isnan") || !strcmp(f, "isfinite")) {
    nargs(E, a, sp, M, f, 1, 1);
    Value *v = a->pos[0];
    double x0 = num_arg(E, M, f, v, a->pos_span[0]);
    if (f[0] == 'i')
      return v_bool(E, f[2] == 'i' ? isinf(x0) : f[2] == 'n' ? isnan(x0) : isfinite(x0));
    if (v->kind != V_FLOAT) return v_int(E, v->i);
    return to_int_value(E, f[0] == 'c' ? ceil(x0) : f[0] == 'f' ? floor(x0) : trunc(x0), sp);
  }
  if (!strcmp(f, "log")) { /* log(x[, base]) */
    nargs(E, a, sp, M, f, 1, 2);
    for (int i = 0; i < a->npos; i++) x[i] = num_arg(E, M, f, a->pos[i], a->pos_span[i]);
    if (x[0] <= 0 || (a->npos == 2 && (x[1] <= 0 || x[1] == 1)))
      ev_error(E, sp, "math domain error");
    return math_result(E, a->npos == 2 ? log(x[0]) / log(x[1]) : log(x[0]), x, a->npos, sp);
  }
  size_t i = 0;
  while (strcmp(math_float_funcs[i].name, f) != 0) i++;
  int n = math_float_funcs[i].f1 ? 1 : 2;
  nargs(E, a, sp, M, f, n, n);
  for (int j = 0; j < n; j++) x[j] = num_arg(E, M, f, a->pos[j], a->pos_span[j]);
  int dom = math_float_funcs[i].domain;
  if ((dom == 1 && x[0] < 0) || (dom == 2 && x[0] <= 0) || (dom == 3 && fabs(x[0]) > 1) ||
      (!strcmp(f, "pow") && x[0] == 0 && x[1] < 0) ||
      (!strcmp(f, "fmod") && (x[1] == 0 || isinf(x[0]))))
    ev_error(E, sp, "math domain error");
  double r = n == 1 ? math_float_funcs[i].f1(x[0]) : math_float_funcs[i].f2(x[0], x[1]);
  return math_result(E, r, x, n, sp);
}

/* tilus.utils.gcd, lcm, prod, idiv, floor_log2, is_power_of_two. */
Value *ev_call_tutil(Eval *E, Value *fn, Args *a, Span sp) {
  const char *f = fn->s, *M = "tilus.utils";
  if (strcmp(f, "prod") == 0) {
    nargs(E, a, sp, M, f, 1, 1);
    return product(E, a->pos[0], v_int(E, 1), sp);
  }
  if (strcmp(f, "gcd") == 0) {
    nargs(E, a, sp, M, f, 2, EV_MAX_LIST_LEN);
    int64_t r = 0;
    for (int i = 0; i < a->npos; i++) r = ir_gcd(r, int_arg(E, M, f, a->pos[i], a->pos_span[i]));
    if (r == INT64_MIN) ev_error(E, sp, "integer overflow in compile-time arithmetic");
    return v_int(E, r);
  }
  if (strcmp(f, "lcm") == 0) {
    nargs(E, a, sp, M, f, 2, 2);
    return lcm_of(E, int_arg(E, M, f, a->pos[0], a->pos_span[0]),
                  int_arg(E, M, f, a->pos[1], a->pos_span[1]), sp);
  }
  if (strcmp(f, "idiv") == 0) {
    nargs(E, a, sp, M, f, 2, 2);
    int64_t x = int_arg(E, M, f, a->pos[0], a->pos_span[0]);
    int64_t y = int_arg(E, M, f, a->pos[1], a->pos_span[1]);
    if (y == 0) ev_error(E, sp, "division by zero");
    if (x % y != 0)
      ev_error(E, sp, "idiv(%lld, %lld): %lld is not a multiple of %lld", (long long)x,
               (long long)y, (long long)x, (long long)y);
    return ev_eval_binop(E, TOK_FLOORDIV, a->pos[0], a->pos[1], sp);
  }
  nargs(E, a, sp, M, f, 1, 1);
  int64_t n = int_arg(E, M, f, a->pos[0], a->pos_span[0]);
  if (strcmp(f, "is_power_of_two") == 0) return v_bool(E, n > 0 && (n & (n - 1)) == 0);
  if (n <= 0) ev_error(E, sp, "floor_log2(%lld): the argument must be positive", (long long)n);
  int r = 0;
  while (n >> (r + 1)) r++;
  return v_int(E, r);
}

/* ------------------------------------------------------------- host */

/* The module a host path names: its first component. */
static const char *host_module(Eval *E, const Value *v) {
  if (v->self && v->self->kind == V_STR) return v->self->s;
  size_t n = strcspn(v->s, ".([");
  return arena_strndup(E->ar, v->s, n);
}

static Value *host_in(Eval *E, const char *module, const char *path) {
  Value *v = v_new(E, V_HOST);
  v->s = path;
  v->self = v_str(E, module);
  return v;
}

Value *v_host(Eval *E, const char *path) {
  return host_in(E, arena_strndup(E->ar, path, strcspn(path, ".([")), path);
}

Value *ev_host_derived(Eval *E, Value *host, const char *suffix) {
  return host_in(E, host_module(E, host), arena_printf(E->ar, "%s%s", host->s, suffix));
}

Value *ev_host_use(Eval *E, Value *v, Span sp) {
  if (!E->k || E->in_annotation) return v;
  const char *mod = host_module(E, v);
  if (strcmp(mod, v->s) == 0)
    ev_error(E, sp,
             "module '%s' is host code: it cannot be used in kernel code (there tilus, "
             "tilus.utils and math are available)",
             mod);
  ev_error(E, sp,
           "'%s' is host code (module '%s'): it cannot be used in kernel code (there tilus, "
           "tilus.utils and math are available)",
           v->s, mod);
}

_Noreturn void ev_unsupported(Eval *E, Value *v, Span sp) {
  ev_error(E, sp, "'%s' is part of Tilus that tlsc does not support yet", v->s);
}

/* numpy's scalar functions whose value on a Python number is math's (as a
 * float: np.sqrt(128) == math.sqrt(128)): Tilus's kernels compute constants
 * with them in __init__ (`float(1.0 / np.sqrt(head_size))`). np.floor and
 * np.ceil are not among them (they return floats, math's return ints). */
static const char numpy_scalar_funcs[] = " sqrt log log2 log10 exp sin cos tan tanh pi e inf prod ";

Value *ev_module_attr(Eval *E, Value *mod, const char *name, Span sp) {
  Value *v = NULL;
  if (mod->kind == V_HOST && strcmp(host_module(E, mod), "numpy") == 0 &&
      strcmp(mod->s, "numpy") == 0 && in_list(numpy_scalar_funcs, name))
    return math_attr(E, name);
  if (mod->kind == V_HOST) {
    ev_host_use(E, mod, sp);
    return host_in(E, host_module(E, mod), arena_printf(E->ar, "%s.%s", mod->s, name));
  }
  if (mod->kind == V_UNSUP || strncmp(mod->s, "tilus.ir", 8) == 0) {
    v = ev_layout_module_attr(E, mod->s, name);
    if (v) return v;
  }
  if (mod->kind == V_UNSUP) {
    v = tilus_type_name(E, name);
    return v ? v : unsup(E, arena_printf(E->ar, "%s.%s", mod->s, name));
  }
  const char *path = mod->s;
  if (strcmp(path, "math") == 0)
    v = math_attr(E, name);
  else if (strcmp(path, "tilus") == 0 || strcmp(path, "tilus.lang") == 0)
    v = tilus_attr(E, name);
  else if (strcmp(path, "tilus.utils") == 0)
    v = tutil_attr(E, name);
  else { /* tilus.ir, tilus.hidet.ir.dtypes ...: types, and parts tlsc lacks */
    v = tilus_type_name(E, name);
    if (!v) v = unsup(E, arena_printf(E->ar, "%s.%s", path, name));
  }
  if (!v) {
    if (strcmp(path, "math") == 0)
      ev_error(E, sp, "math.%s is not one of the math functions tlsc evaluates at compile time",
               name);
    ev_error(E, sp, "module '%s' has no attribute '%s'", path, name);
  }
  return v;
}

/* ---------------------------------------------------------- imports */

/* import a.b.c [as x] / from m import a [as b], ... (Python's binding
 * rules: `import a.b` binds a, `import a.b as x` binds x to a.b, `from m
 * import a as b` binds b and not a). */
void ev_exec_import(Eval *E, Node *s) {
  Dict *scope = ev_cur_scope(E);
  if (s->kind == N_IMPORT) {
    if (s->name) {
      ev_dict_set(E, scope, s->name, module_value(E, s->str));
    } else {
      const char *top = arena_strndup(E->ar, s->str, strcspn(s->str, "."));
      ev_dict_set(E, scope, top, module_value(E, top));
    }
    return;
  }
  Value *mod = module_value(E, s->str);
  for (int i = 0; i < s->list.len; i++) {
    Node *n = s->list.items[i];
    if (n->ival == 1) {
      if (mod->kind == V_HOST) continue; /* its names are unknown: unbound */
      ev_error(E, n->span, "'from %s import *' is not supported yet; name what you import", s->str);
    }
    Value *v;
    if (mod->kind == V_HOST)
      v = host_in(E, host_module(E, mod), arena_printf(E->ar, "%s.%s", s->str, n->name));
    else if (strcmp(s->str, "math") == 0 || strcmp(s->str, "tilus") == 0 ||
             strcmp(s->str, "tilus.lang") == 0 || strcmp(s->str, "tilus.utils") == 0) {
      v = strcmp(s->str, "math") == 0     ? math_attr(E, n->name)
          : strcmp(s->str, "tilus.utils") ? tilus_attr(E, n->name)
                                          : tutil_attr(E, n->name);
      /* a submodule imports as a module: from tilus import utils */
      if (!v) ev_error(E, n->span, "cannot import name '%s' from '%s'", n->name, s->str);
    } else {
      v = ev_module_attr(E, mod, n->name, n->span);
    }
    ev_dict_set(E, scope, n->str ? n->str : n->name, v);
  }
}

/* ---------------------------------------------------------- classes */

enum { AUTOTUNE_MAX_NESTING = 8 }; /* lists in lists of one autotune value */

/* Whether a string can stand in the metadata's `config` line as it is
 * (one field, no quoting rules): letters, digits and `_ . + -`. */
static bool plain_word(const char *s) {
  return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-") ==
         strlen(s);
}

/* An autotune value is any compile-time value Tilus passes to __init__
 * that tlsc can also name an entry after and write in the metadata:
 * None, bools, ints, floats, plain strings, dtypes, and lists and tuples
 * of them (`[1, 4]`). */
static void check_tune_value(Eval *E, Value *x, const char *name, int depth, Span sp) {
  if (depth > AUTOTUNE_MAX_NESTING)
    ev_error(E, sp, "autotune value of '%s' is nested more than %d lists deep", name,
             AUTOTUNE_MAX_NESTING);
  switch (x->kind) {
  case V_NONE:
  case V_BOOL:
  case V_INT:
  case V_FLOAT:
  case V_DTYPE:
    return;
  case V_STR:
    if (!plain_word(x->s))
      ev_error(E, sp,
               "autotune value %s of '%s': a string autotune value may hold only letters, "
               "digits and '_', '.', '+', '-' (tlsc writes it in the metadata)",
               ev_repr(E, x, sp), name);
    return;
  case V_LIST:
  case V_TUPLE:
    for (int i = 0; i < x->n; i++) check_tune_value(E, x->items[i], name, depth + 1, sp);
    return;
  default:
    ev_error(E, sp,
             "autotune value of '%s' is a '%s': tlsc's autotune values are compile-time numbers, "
             "strings, dtypes, None, and lists or tuples of them",
             name, v_type_name(x));
  }
}

/* "a, b" -> names; values -> rows of compile-time values. */
static Autotune *parse_autotune(Eval *E, Value *dec, Span sp) {
  Autotune *at = arena_alloc(E->ar, sizeof(Autotune));
  const char *p = dec->s;
  at->names = arena_alloc(E->ar, sizeof(char *) * (strlen(p) / 2 + 2));
  while (*p) {
    while (*p == ' ' || *p == ',') p++;
    const char *q = p;
    while (*q && *q != ',' && *q != ' ') q++;
    if (q > p) at->names[at->nnames++] = arena_strndup(E->ar, p, (size_t)(q - p));
    p = q;
  }
  if (at->nnames == 0) ev_error(E, sp, "autotune() needs at least one name");
  Value *vals = dec->self;
  at->npoints = vals->n;
  at->points = arena_alloc(E->ar, sizeof(Value **) * (vals->n + 1));
  for (int i = 0; i < vals->n; i++) {
    Value *row = vals->items[i];
    bool seq = row->kind == V_LIST || row->kind == V_TUPLE;
    if (at->nnames > 1 && (!seq || row->n != at->nnames))
      ev_error(E, sp, "autotune() value %d must be a list of %d values", i, at->nnames);
    at->points[i] = arena_alloc(E->ar, sizeof(Value *) * at->nnames);
    for (int j = 0; j < at->nnames; j++) {
      Value *x = at->nnames > 1 ? row->items[j] : row;
      check_tune_value(E, x, at->names[j], 0, sp);
      at->points[i][j] = x;
    }
  }
  if (at->npoints == 0) ev_error(E, sp, "autotune() needs at least one value");
  return at;
}

bool ev_class_has_tune(const ClassDef *c, const char *name) {
  for (int t = 0; t < c->ntunes; t++)
    for (int j = 0; j < c->tunes[t]->nnames; j++)
      if (strcmp(c->tunes[t]->names[j], name) == 0) return true;
  return false;
}

/* A function value for a def; decorators applied innermost first: a host
 * decorator (triton.jit, torch.no_grad()) makes it an opaque host object,
 * a user function is called with it. */
Value *ev_def_value(Eval *E, Node *s, ClassDef *cls) {
  Value *f = ev_func_here(E, s, cls);
  for (int i = s->list3.len - 1; i >= 0; i--) {
    Node *dn = s->list3.items[i];
    Value *dec = ev_eval_expr(E, dn);
    if (dec->kind == V_HOST) {
      f = host_in(E, host_module(E, dec), s->name);
      continue;
    }
    if (f->kind == V_HOST) continue; /* a host function stays host code */
    if (dec->kind != V_FUNC)
      ev_error(E, dn->span, "decorator '%s' is not supported on %s", v_type_name(dec),
               cls ? "methods" : "functions");
    Args a = {0};
    a.npos = 1;
    a.pos = &f;
    a.pos_span = &dn->span;
    f = ev_call_value(E, dec, &a, dn->span);
  }
  return f;
}

/* class Name(base): methods and compile-time class attributes. A class
 * deriving a host class (torch.nn.Module) is host code: its name is bound
 * to an opaque host object and its body is not run. */
static void exec_class(Eval *E, Node *s) {
  ClassDef *c = arena_alloc(E->ar, sizeof(ClassDef));
  c->ck = CK_USER;
  c->name = s->name;
  c->node = s;
  if (s->list.len > 1)
    ev_error(E, s->list.items[1]->span,
             "multiple base classes are not "
             "supported yet");
  if (s->list.len == 1) {
    Value *b = ev_eval_expr(E, s->list.items[0]);
    if (b->kind == V_HOST) {
      ev_dict_set(E, ev_cur_scope(E), s->name, host_in(E, host_module(E, b), s->name));
      return;
    }
    if (b->kind != V_CLASS)
      ev_error(E, s->list.items[0]->span,
               "base class must be a class, not "
               "'%s'",
               v_type_name(b));
    c->base = b->cls;
    c->is_script = b->cls->is_script;
  }
  for (int i = 0; i < s->list2.len; i++) {
    Node *m = s->list2.items[i];
    if (m->kind == N_DEF) {
      ev_dict_set(E, &c->members, m->name, ev_def_value(E, m, c));
    } else if (m->kind == N_ASSIGN && m->list.len == 1 && m->list.items[0]->kind == N_NAME) {
      ev_dict_set(E, &c->members, m->list.items[0]->name, ev_eval_expr(E, m->a));
    } else if (m->kind != N_PASS && m->kind != N_EXPR_STMT && m->kind != N_ANNDECL) {
      ev_error(E, m->span,
               "only methods and constant attributes may appear "
               "in a class body");
    }
  }
  c->tunes = arena_alloc(E->ar, sizeof(Autotune *) * (s->list3.len + 1));
  for (int i = 0; i < s->list3.len; i++) {
    Node *dn = s->list3.items[i];
    Value *dec = ev_eval_expr(E, dn);
    if (dec->kind != V_NS || dec->bi != B_AUTOTUNE)
      ev_error(E, dn->span, "only @tilus.autotune(...) can decorate a class");
    if (!c->is_script)
      ev_error(E, dn->span,
               "@tilus.autotune decorates tilus.Script classes "
               "only");
    Autotune *at = parse_autotune(E, dec, dn->span);
    for (int j = 0; j < at->nnames; j++)
      if (ev_class_has_tune(c, at->names[j]))
        ev_error(E, dn->span, "autotune name '%s' appears twice", at->names[j]);
    c->tunes[c->ntunes++] = at;
  }
  ClassDef **all = arena_alloc(E->ar, sizeof(ClassDef *) * (E->nclasses + 1));
  if (E->nclasses) memcpy(all, E->classes, sizeof(ClassDef *) * E->nclasses);
  all[E->nclasses++] = c;
  E->classes = all;
  Value *cv = v_new(E, V_CLASS);
  cv->cls = c;
  ev_dict_set(E, ev_cur_scope(E), s->name, cv);
}

/* The module's name as Python gives it to an imported file: its base name
 * without the extension (`__name__` is "__main__" only for the program
 * Python runs, never for a module a tool imports). */
static const char *module_name(Eval *E) {
  const char *p = E->src && E->src->path ? E->src->path : "<stdin>";
  const char *base = strrchr(p, '/');
  base = base ? base + 1 : p;
  const char *dot = strrchr(base, '.');
  return arena_strndup(E->ar, base, dot && dot != base ? (size_t)(dot - base) : strlen(base));
}

void ev_exec_module(Eval *E, const Node *module) {
  ev_dict_set(E, &E->globals, "__name__", v_str(E, module_name(E)));
  for (int i = 0; i < module->list.len; i++) {
    Node *s = module->list.items[i];
    switch (s->kind) {
    case N_IMPORT:
    case N_FROM_IMPORT:
      ev_exec_import(E, s);
      break;
    case N_CLASS:
      exec_class(E, s);
      break;
    case N_DEF:
      ev_dict_set(E, &E->globals, s->name, ev_def_value(E, s, NULL));
      break;
    default:
      if (ev_exec_stmt(E, s) == C_RETURN) ev_error(E, s->span, "'return' outside function");
    }
  }
}

/* ------------------------------------------------------ annotations */

Value *ev_eval_annotation(Eval *E, Node *ann) {
  E->in_annotation++;
  Value *v = ev_eval_expr(E, ann);
  E->in_annotation--;
  return v;
}

DType ev_annotation_rt_type(const Value *ann) {
  if (ann->kind == V_DTYPE) return ann->dt;
  if (ann->kind == V_BUILTIN && ann->bi == B_BOOL) return DT_BOOL;
  return DT_VOID;
}
