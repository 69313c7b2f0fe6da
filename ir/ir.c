/* ir.c: the IR's constructors and small helpers: dtypes, operator names,
 * scalar expressions (with constant folding), tensor and view sizes,
 * statements, blocks, variables and tensors.
 *
 * Expression typing follows C, as Tilus emits C++: comparisons and && / ||
 * give bool; arithmetic converts both operands to their common type (bool
 * promotes to int32 or to the other operand's integer type, the wider type
 * wins, at equal width unsigned wins, any float makes it a float). The
 * constructors insert explicit X_CAST nodes so that both operands of every
 * X_BINARY have the operand type: the backend never converts implicitly.
 */
#include "ir/ir.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- dtypes */

static const struct {
  DType type;
  const char *name;
  int bytes;
  int bits;  /* sub-byte types: their width (0: 8 * bytes) */
  int ebits; /* sub-byte floats: exponent bits */
} dtype_table[] = {
    {DT_VOID, "void", 0, 0, 0},
    {DT_BOOL, "bool", 1, 0, 0},
    {DT_INT32, "int32", 4, 0, 0},
    {DT_UINT32, "uint32", 4, 0, 0},
    {DT_INT64, "int64", 8, 0, 0},
    {DT_UINT64, "uint64", 8, 0, 0},
    {DT_FLOAT16, "float16", 2, 0, 0},
    {DT_BFLOAT16, "bfloat16", 2, 0, 0},
    {DT_FLOAT32, "float32", 4, 0, 0},
    {DT_FLOAT64, "float64", 8, 0, 0},
    {DT_INT8, "int8", 1, 0, 0},
    {DT_UINT8, "uint8", 1, 0, 0},
    {DT_INT16, "int16", 2, 0, 0},
    {DT_UINT16, "uint16", 2, 0, 0},
    {DT_FLOAT8_E4M3, "float8_e4m3", 1, 0, 0},
    {DT_FLOAT8_E5M2, "float8_e5m2", 1, 0, 0},
    {DT_INT1B, "int1b", 1, 1, 0},
    {DT_INT2B, "int2b", 1, 2, 0},
    {DT_INT3B, "int3b", 1, 3, 0},
    {DT_INT4B, "int4b", 1, 4, 0},
    {DT_INT5B, "int5b", 1, 5, 0},
    {DT_INT6B, "int6b", 1, 6, 0},
    {DT_INT7B, "int7b", 1, 7, 0},
    {DT_UINT1B, "uint1b", 1, 1, 0},
    {DT_UINT2B, "uint2b", 1, 2, 0},
    {DT_UINT3B, "uint3b", 1, 3, 0},
    {DT_UINT4B, "uint4b", 1, 4, 0},
    {DT_UINT5B, "uint5b", 1, 5, 0},
    {DT_UINT6B, "uint6b", 1, 6, 0},
    {DT_UINT7B, "uint7b", 1, 7, 0},
    {DT_F3E1M1, "float3_e1m1", 1, 3, 1},
    {DT_F4E1M2, "float4_e1m2", 1, 4, 1},
    {DT_F4E2M1, "float4_e2m1", 1, 4, 2},
    {DT_F5E1M3, "float5_e1m3", 1, 5, 1},
    {DT_F5E2M2, "float5_e2m2", 1, 5, 2},
    {DT_F5E3M1, "float5_e3m1", 1, 5, 3},
    {DT_F6E2M3, "float6_e2m3", 1, 6, 2},
    {DT_F6E3M2, "float6_e3m2", 1, 6, 3},
    {DT_F6E4M1, "float6_e4m1", 1, 6, 4},
    {DT_F7E2M4, "float7_e2m4", 1, 7, 2},
    {DT_F7E3M3, "float7_e3m3", 1, 7, 3},
    {DT_F7E4M2, "float7_e4m2", 1, 7, 4},
    {DT_F7E5M1, "float7_e5m1", 1, 7, 5},
};
#define NDTYPES ((int)(sizeof dtype_table / sizeof dtype_table[0]))

int dtype_bytes(DType t) {
  for (int i = 0; i < NDTYPES; i++)
    if (dtype_table[i].type == t) return dtype_table[i].bytes;
  return 0;
}

const char *dtype_name(DType t) {
  for (int i = 0; i < NDTYPES; i++)
    if (dtype_table[i].type == t) return dtype_table[i].name;
  return "?";
}

int dtype_bits(DType t) {
  for (int i = 0; i < NDTYPES; i++)
    if (dtype_table[i].type == t)
      return dtype_table[i].bits ? dtype_table[i].bits : 8 * dtype_table[i].bytes;
  return 0;
}

bool dtype_is_subbyte(DType t) { return t >= DT_INT1B && t <= DT_F7E5M1; }

int dtype_exp_bits(DType t) {
  for (int i = 0; i < NDTYPES; i++)
    if (dtype_table[i].type == t) return dtype_table[i].ebits;
  return 0;
}

bool dtype_is_float(DType t) {
  return t == DT_FLOAT16 || t == DT_BFLOAT16 || t == DT_FLOAT32 || t == DT_FLOAT64 ||
         dtype_is_fp8(t) || (t >= DT_F3E1M1 && t <= DT_F7E5M1);
}

bool dtype_is_signed(DType t) {
  return t == DT_INT8 || t == DT_INT16 || t == DT_INT32 || t == DT_INT64 ||
         (t >= DT_INT1B && t <= DT_INT7B);
}

bool dtype_is_fp8(DType t) { return t == DT_FLOAT8_E4M3 || t == DT_FLOAT8_E5M2; }

bool dtype_wgmma_inputs_ok(DType a, DType b) {
  if (dtype_is_fp8(a) || dtype_is_fp8(b)) return dtype_is_fp8(a) && dtype_is_fp8(b);
  return a == b && (a == DT_FLOAT16 || a == DT_BFLOAT16);
}

bool dtype_is_storage(DType t) {
  return t == DT_INT8 || t == DT_UINT8 || t == DT_INT16 || t == DT_UINT16 || dtype_is_fp8(t) ||
         dtype_is_subbyte(t);
}

/* "void" is not a Tilus dtype name, so it is not looked up. */
bool dtype_from_name(const char *name, DType *out) {
  for (int i = 1; i < NDTYPES; i++) {
    if (strcmp(dtype_table[i].name, name) == 0) {
      *out = dtype_table[i].type;
      return true;
    }
  }
  return false;
}

static bool dtype_is_int(DType t) {
  return t == DT_INT32 || t == DT_UINT32 || t == DT_INT64 || t == DT_UINT64 || t == DT_INT8 ||
         t == DT_UINT8 || t == DT_INT16 || t == DT_UINT16 || (t >= DT_INT1B && t <= DT_UINT7B);
}

/* ---------------------------------------------------------- operators */

const char *ir_op_name(IrOp op) {
  static const char *names[] = {
      [OP_ADD] = "+", [OP_SUB] = "-",   [OP_MUL] = "*",  [OP_DIV] = "/",   [OP_MOD] = "%",
      [OP_AND] = "&", [OP_OR] = "|",    [OP_XOR] = "^",  [OP_SHL] = "<<",  [OP_SHR] = ">>",
      [OP_EQ] = "==", [OP_NE] = "!=",   [OP_LT] = "<",   [OP_LE] = "<=",   [OP_GT] = ">",
      [OP_GE] = ">=", [OP_LAND] = "&&", [OP_LOR] = "||", [OP_MIN] = "min", [OP_MAX] = "max",
      [OP_NEG] = "-", [OP_BNOT] = "~",  [OP_LNOT] = "!",
  };
  if ((int)op < 0 || (int)op >= (int)(sizeof names / sizeof names[0]) || !names[op]) return "?";
  return names[op];
}

const char *ir_fn_name(IrMathFn fn) {
  static const char *names[] = {
      [FN_EXP] = "exp",          [FN_EXP2] = "exp2",   [FN_LOG] = "log", [FN_LOG2] = "log2",
      [FN_SQRT] = "sqrt",        [FN_RSQRT] = "rsqrt", [FN_ABS] = "abs", [FN_NEG] = "neg",
      [FN_SQUARE] = "square",    [FN_SIN] = "sin",     [FN_COS] = "cos", [FN_TANH] = "tanh",
      [FN_RECIP] = "reciprocal", [FN_ROUND] = "round",
  };
  if ((int)fn < 0 || (int)fn >= (int)(sizeof names / sizeof names[0]) || !names[fn]) return "?";
  return names[fn];
}

static bool op_is_compare(IrOp op) { return op >= OP_EQ && op <= OP_GE; }
static bool op_is_logical(IrOp op) { return op == OP_LAND || op == OP_LOR; }
static bool op_is_shift(IrOp op) { return op == OP_SHL || op == OP_SHR; }

/* ---------------------------------------------------------- constants */

/* Reduces a 64-bit pattern to the value range of integer type t, so that
 * equal constants have equal ival (uint64 keeps its bit pattern). */
int64_t ir_int_wrap(DType t, int64_t v) {
  switch (t) {
  case DT_BOOL:
    return v != 0;
  case DT_INT32:
    return (int32_t)(uint32_t)(uint64_t)v;
  case DT_UINT32:
    return (int64_t)(uint32_t)(uint64_t)v;
  case DT_INT8:
    return (int8_t)(uint8_t)(uint64_t)v;
  case DT_UINT8:
    return (int64_t)(uint8_t)(uint64_t)v;
  case DT_INT16:
    return (int16_t)(uint16_t)(uint64_t)v;
  case DT_UINT16:
    return (int64_t)(uint16_t)(uint64_t)v;
  default:
    break;
  }
  if (t >= DT_INT1B && t <= DT_UINT7B) { /* sub-byte integers: their n bits */
    int n = dtype_bits(t);
    uint64_t bits = (uint64_t)v & ((1u << n) - 1);
    bool neg = t <= DT_INT7B && (bits >> (n - 1));
    return neg ? (int64_t)bits - ((int64_t)1 << n) : (int64_t)bits;
  }
  return v;
}

/* Rounds a double to what type t can hold (float16/bfloat16 are kept at
 * float precision: the backend rounds them when it emits the literal). */
static double float_round(DType t, double v) {
  if (t == DT_FLOAT32 || t == DT_FLOAT16 || t == DT_BFLOAT16 || dtype_is_fp8(t))
    return (double)(float)v;
  return v;
}

static IrExpr *new_expr(Arena *ar, XKind kind, DType t) {
  IrExpr *e = arena_alloc(ar, sizeof *e);
  e->kind = kind;
  e->type = t;
  e->nodes = 1;
  return e;
}

/* 1 + the nodes of the operands (NULL for none), saturating. */
static bool any_index(const IrExpr *a, const IrExpr *b, const IrExpr *c) {
  return (a && a->has_index) || (b && b->has_index) || (c && c->has_index);
}

static int count_nodes(const IrExpr *a, const IrExpr *b, const IrExpr *c) {
  int64_t n = 1 + (int64_t)(a ? a->nodes : 0) + (b ? b->nodes : 0) + (c ? c->nodes : 0);
  return n > IR_EXPR_NODES_MAX ? IR_EXPR_NODES_MAX : (int)n;
}

IrExpr *ir_const(Arena *ar, DType t, int64_t v) {
  if (dtype_is_float(t)) return ir_const_f(ar, t, (double)v);
  IrExpr *e = new_expr(ar, X_CONST, t);
  e->ival = ir_int_wrap(t, v);
  return e;
}

IrExpr *ir_const_f(Arena *ar, DType t, double v) {
  if (!dtype_is_float(t)) return ir_const(ar, t, (int64_t)v);
  IrExpr *e = new_expr(ar, X_CONST, t);
  e->fval = float_round(t, v);
  return e;
}

bool ir_is_const(const IrExpr *e, int64_t *value) {
  if (!e || e->kind != X_CONST || dtype_is_float(e->type)) return false;
  if (value) *value = e->ival;
  return true;
}

bool ir_expr_same(const IrExpr *a, const IrExpr *b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind || a->type != b->type || a->op != b->op ||
      a->ival != b->ival || a->var != b->var || a->param != b->param)
    return false;
  if (a->kind == X_SPECIAL && a->sreg != b->sreg) return false;
  if (a->kind == X_CONST && dtype_is_float(a->type) && a->fval != b->fval) return false;
  return ir_expr_same(a->a, b->a) && ir_expr_same(a->b, b->b) && ir_expr_same(a->c, b->c);
}

static bool is_int_const(const IrExpr *e, int64_t v) {
  int64_t got;
  return ir_is_const(e, &got) && got == v;
}

/* ------------------------------------------------------------ leaves */

IrExpr *ir_var_ref(Arena *ar, IrVar *v) {
  IrExpr *e = new_expr(ar, X_VAR, v->type);
  e->var = v;
  return e;
}

IrExpr *ir_param_ref(Arena *ar, IrParam *p) {
  IrExpr *e = new_expr(ar, X_PARAM, p->type);
  e->param = p;
  return e;
}

/* Every special register is a 32-bit unsigned value in PTX; blockIdx and
 * threadIdx are used as int32 in Tilus, so they are typed int32 here, and
 * the cluster rank (Tilus's self.cluster.blockRank) uint32, as Tilus types
 * it. */
IrExpr *ir_special(Arena *ar, SpecialReg r) {
  IrExpr *e = new_expr(ar, X_SPECIAL, r == SR_CLUSTER_CTARANK ? DT_UINT32 : DT_INT32);
  e->sreg = r;
  return e;
}

/* -------------------------------------------------------------- casts */

/* Folds a cast of a constant; false where C leaves it undefined (a float
 * out of the integer's range), so the cast stays for run time. */
static bool fold_cast(DType to, const IrExpr *a, int64_t *iv, double *fv) {
  if (dtype_is_float(to)) {
    if (dtype_is_float(a->type))
      *fv = a->fval;
    else if (a->type == DT_UINT64)
      *fv = (double)(uint64_t)a->ival;
    else
      *fv = (double)a->ival;
    return true;
  }
  if (!dtype_is_float(a->type)) {
    *iv = a->ival;
    return true;
  }
  double v = a->fval;
  if (to == DT_BOOL) {
    *iv = v != 0;
    return true;
  }
  double lo, hi; /* the open range that truncates to a value of type to */
  switch (to) {
  case DT_INT32:
    lo = -2147483649.0, hi = 2147483648.0;
    break;
  case DT_UINT32:
    lo = -1.0, hi = 4294967296.0;
    break;
  case DT_UINT64:
    lo = -1.0, hi = 18446744073709551616.0;
    break;
  case DT_INT8:
    lo = -129.0, hi = 128.0;
    break;
  case DT_UINT8:
    lo = -1.0, hi = 256.0;
    break;
  case DT_INT16:
    lo = -32769.0, hi = 32768.0;
    break;
  case DT_UINT16:
    lo = -1.0, hi = 65536.0;
    break;
  default:
    lo = -9223372036854775808.0 - 1025.0, hi = 9223372036854775808.0;
  }
  if (isnan(v) || v <= lo || v >= hi) return false;
  *iv = to == DT_UINT64 ? (int64_t)(uint64_t)v : (int64_t)v;
  return true;
}

/* (t) a; a cast to bool means a != 0 (C semantics). */
int ir_gcopy_tile_dim(const IrGlobalCopyStmt *c, int gdim) {
  if (c->ndims == 0) {
    int lead = c->global->rank - c->reg->rank;
    return gdim >= lead ? gdim - lead : -1;
  }
  for (int i = 0; i < c->ndims; i++)
    if (c->dims[i] == gdim) return i;
  return -1;
}

int64_t ir_gcd(int64_t a, int64_t b) {
  uint64_t x = a < 0 ? -(uint64_t)a : (uint64_t)a, y = b < 0 ? -(uint64_t)b : (uint64_t)b;
  while (y) {
    uint64_t t = x % y;
    x = y;
    y = t;
  }
  return (int64_t)x;
}

int ir_meta_code_size(const IrExpr *x) {
  if (x->nodes > 4 * IR_META_MAX_CODE) return IR_META_MAX_CODE + 1;
  switch (x->kind) {
  case X_CAST:
    return ir_meta_code_size(x->a) + (x->type == DT_BOOL ? 2 : 0);
  case X_UNARY:
    return ir_meta_code_size(x->a) + 1;
  case X_BINARY:
    return ir_meta_code_size(x->a) + ir_meta_code_size(x->b) +
           (x->op == OP_LAND || x->op == OP_LOR ? 2 : 1);
  case X_SELECT:
    return 2 * ir_meta_code_size(x->a) + ir_meta_code_size(x->b) + ir_meta_code_size(x->c) + 6;
  default:
    return 1;
  }
}

IrExpr *ir_load(Arena *ar, DType mem, IrExpr *addr) {
  bool half = mem == DT_FLOAT16 || mem == DT_BFLOAT16 || dtype_is_fp8(mem);
  DType t = half ? DT_FLOAT32 : dtype_is_storage(mem) ? DT_INT32 : mem;
  IrExpr *e = new_expr(ar, X_LOAD, t);
  e->ival = mem;
  e->a = addr;
  e->nodes = count_nodes(addr, NULL, NULL);
  return e;
}

/* fn(x) in double, as the host computes a folded constant. */
static double math_value(IrMathFn fn, double x) {
  switch (fn) {
  case FN_EXP:
    return exp(x);
  case FN_EXP2:
    return exp2(x);
  case FN_LOG:
    return log(x);
  case FN_LOG2:
    return log2(x);
  case FN_SQRT:
    return sqrt(x);
  case FN_RSQRT:
    return 1 / sqrt(x);
  case FN_ABS:
    return fabs(x);
  case FN_NEG:
    return -x;
  case FN_SQUARE:
    return x * x;
  case FN_SIN:
    return sin(x);
  case FN_COS:
    return cos(x);
  case FN_TANH:
    return tanh(x);
  case FN_RECIP:
    return 1 / x;
  case FN_ROUND:
    return nearbyint(x); /* the default rounding: to nearest, ties to even */
  }
  return x;
}

IrExpr *ir_math(Arena *ar, int fn, IrExpr *a) {
  a = ir_cast(ar, DT_FLOAT32, a);
  if (a->kind == X_CONST) return ir_const_f(ar, DT_FLOAT32, math_value((IrMathFn)fn, a->fval));
  IrExpr *e = new_expr(ar, X_MATH, DT_FLOAT32);
  e->ival = fn;
  e->a = a;
  e->nodes = count_nodes(a, NULL, NULL);
  e->has_index = any_index(a, NULL, NULL);
  return e;
}

IrExpr *ir_index(Arena *ar, int dim) {
  IrExpr *e = new_expr(ar, X_INDEX, DT_INT32);
  e->ival = dim;
  e->has_index = true;
  return e;
}

bool ir_expr_has_index(const IrExpr *e) { return e && e->has_index; }

IrExpr *ir_cast(Arena *ar, DType t, IrExpr *a) {
  if (a->type == t) return a;
  if (a->kind == X_CONST) {
    int64_t iv = 0;
    double fv = 0;
    if (fold_cast(t, a, &iv, &fv))
      return dtype_is_float(t) ? ir_const_f(ar, t, fv) : ir_const(ar, t, iv);
  }
  IrExpr *e = new_expr(ar, X_CAST, t);
  e->a = a;
  e->nodes = count_nodes(a, NULL, NULL);
  e->has_index = any_index(a, NULL, NULL);
  return e;
}

/* --------------------------------------------------------------- types */

static int int_rank(DType t) { return dtype_bytes(t); }

static int float_rank(DType t) {
  switch (t) {
  case DT_FLOAT16:
    return 1;
  case DT_BFLOAT16:
    return 2;
  case DT_FLOAT32:
    return 3;
  case DT_FLOAT64:
    return 4;
  default:
    return 0;
  }
}

/* C's usual arithmetic conversions over the IR dtypes. */
static DType common_type(DType a, DType b) {
  if (dtype_is_float(a) || dtype_is_float(b)) {
    /* float16 with bfloat16 has no common 16-bit type: use float32 */
    if ((a == DT_FLOAT16 && b == DT_BFLOAT16) || (a == DT_BFLOAT16 && b == DT_FLOAT16))
      return DT_FLOAT32;
    return float_rank(a) >= float_rank(b) ? a : b;
  }
  if (a == DT_BOOL && b == DT_BOOL) return DT_INT32;
  if (a == DT_BOOL) return b;
  if (b == DT_BOOL) return a;
  if (int_rank(a) != int_rank(b)) return int_rank(a) > int_rank(b) ? a : b;
  return dtype_is_signed(a) ? b : a; /* equal width: unsigned wins */
}

/* Integer promotion of one operand (bool -> int32). */
static DType promote(DType t) { return t == DT_BOOL ? DT_INT32 : t; }

/* ------------------------------------------------------------- folding */

/* The constant value of e as an unsigned 64-bit pattern. */
static uint64_t bits(const IrExpr *e) { return (uint64_t)e->ival; }

/* Folds a op b over integer operand type t into *out; false where C would
 * trap or be undefined (division by zero, INT_MIN / -1, shift counts out of
 * range): those stay for run time. */
static bool fold_int(IrOp op, DType t, const IrExpr *a, const IrExpr *b, int64_t *out) {
  bool sgn = dtype_is_signed(t);
  int width = dtype_bytes(t) * 8;
  int64_t x = a->ival, y = b->ival;
  uint64_t ux = bits(a), uy = bits(b);
  int64_t min_signed = width == 32 ? INT32_MIN : INT64_MIN;
  switch (op) {
  case OP_ADD:
    *out = (int64_t)(ux + uy);
    return true;
  case OP_SUB:
    *out = (int64_t)(ux - uy);
    return true;
  case OP_MUL:
    *out = (int64_t)(ux * uy);
    return true;
  case OP_DIV:
  case OP_MOD:
    if (y == 0 || (sgn && x == min_signed && y == -1)) return false;
    if (sgn)
      *out = op == OP_DIV ? x / y : x % y;
    else
      *out = (int64_t)(op == OP_DIV ? ux / uy : ux % uy);
    return true;
  case OP_AND:
    *out = x & y;
    return true;
  case OP_OR:
    *out = x | y;
    return true;
  case OP_XOR:
    *out = x ^ y;
    return true;
  case OP_SHL:
  case OP_SHR:
    if (y < 0 || y >= width || (b->type == DT_UINT64 && uy >= (uint64_t)width)) return false;
    if (op == OP_SHL)
      *out = (int64_t)(ux << y);
    else if (sgn)
      *out = x >> y; /* gcc: arithmetic shift, as PTX shr.s */
    else
      *out = (int64_t)(ux >> y);
    return true;
  case OP_EQ:
    *out = x == y;
    return true;
  case OP_NE:
    *out = x != y;
    return true;
  case OP_LT:
    *out = sgn ? x < y : ux < uy;
    return true;
  case OP_LE:
    *out = sgn ? x <= y : ux <= uy;
    return true;
  case OP_GT:
    *out = sgn ? x > y : ux > uy;
    return true;
  case OP_GE:
    *out = sgn ? x >= y : ux >= uy;
    return true;
  case OP_LAND:
    *out = x && y;
    return true;
  case OP_LOR:
    *out = x || y;
    return true;
  case OP_MIN:
    *out = (sgn ? x < y : ux < uy) ? x : y;
    return true;
  case OP_MAX:
    *out = (sgn ? x > y : ux > uy) ? x : y;
    return true;
  default:
    return false;
  }
}

/* Folds a op b over float operands. Division by zero and % stay. */
static bool fold_float(IrOp op, const IrExpr *a, const IrExpr *b, double *fout, int64_t *iout) {
  double x = a->fval, y = b->fval;
  switch (op) {
  case OP_ADD:
    *fout = x + y;
    return true;
  case OP_SUB:
    *fout = x - y;
    return true;
  case OP_MUL:
    *fout = x * y;
    return true;
  case OP_DIV:
    if (y == 0) return false;
    *fout = x / y;
    return true;
  case OP_MIN:
    *fout = x < y ? x : y;
    return true;
  case OP_MAX:
    *fout = x > y ? x : y;
    return true;
  case OP_EQ:
    *iout = x == y;
    return true;
  case OP_NE:
    *iout = x != y;
    return true;
  case OP_LT:
    *iout = x < y;
    return true;
  case OP_LE:
    *iout = x <= y;
    return true;
  case OP_GT:
    *iout = x > y;
    return true;
  case OP_GE:
    *iout = x >= y;
    return true;
  default:
    return false;
  }
}

/* Integer identities x+0, 0+x, x-0, x*1, 1*x, x*0, 0*x, x/1, after both
 * operands have the operand type. Floats keep x*0 (NaN, -0). NULL if none
 * applies. */
static IrExpr *identity(Arena *ar, IrOp op, IrExpr *a, IrExpr *b) {
  if (!dtype_is_int(a->type)) return NULL;
  switch (op) {
  case OP_ADD:
    if (is_int_const(b, 0)) return a;
    if (is_int_const(a, 0)) return b;
    return NULL;
  case OP_SUB:
    return is_int_const(b, 0) ? a : NULL;
  case OP_MUL:
    if (is_int_const(b, 1)) return a;
    if (is_int_const(a, 1)) return b;
    if (is_int_const(a, 0) || is_int_const(b, 0)) return ir_const(ar, a->type, 0);
    return NULL;
  case OP_DIV:
    return is_int_const(b, 1) ? a : NULL;
  default:
    return NULL;
  }
}

/* ---------------------------------------------------------- operators */

/* op a. NEG/BNOT keep the promoted type of a; LNOT gives bool. */
IrExpr *ir_unary(Arena *ar, IrOp op, IrExpr *a) {
  DType t = op == OP_LNOT ? DT_BOOL : promote(a->type);
  a = ir_cast(ar, t, a);
  if (a->kind == X_CONST) {
    if (dtype_is_float(t) && op == OP_NEG) return ir_const_f(ar, t, -a->fval);
    if (!dtype_is_float(t)) {
      if (op == OP_NEG) return ir_const(ar, t, (int64_t)(0 - bits(a)));
      if (op == OP_BNOT) return ir_const(ar, t, ~a->ival);
      if (op == OP_LNOT) return ir_const(ar, t, !a->ival);
    }
  }
  /* !!x == x and ~~x == x */
  if (a->kind == X_UNARY && a->op == op && (op == OP_LNOT || op == OP_BNOT)) return a->a;
  IrExpr *e = new_expr(ar, X_UNARY, t);
  e->op = op;
  e->a = a;
  e->nodes = count_nodes(a, NULL, NULL);
  e->has_index = any_index(a, NULL, NULL);
  return e;
}

/* The type both operands of op are converted to. */
static DType operand_type(IrOp op, DType a, DType b) {
  if (op_is_logical(op)) return DT_BOOL;
  if (op_is_shift(op)) return promote(a);
  return common_type(a, b);
}

/* a op b, converted, folded and simplified. */
IrExpr *ir_binary(Arena *ar, IrOp op, IrExpr *a, IrExpr *b) {
  DType ot = operand_type(op, a->type, b->type);
  DType rt = op_is_compare(op) || op_is_logical(op) ? DT_BOOL : ot;
  /* a shift count keeps its own (promoted) type, as in C */
  a = ir_cast(ar, ot, a);
  b = ir_cast(ar, op_is_shift(op) ? promote(b->type) : ot, b);
  if (a->kind == X_CONST && b->kind == X_CONST) {
    int64_t iv = 0;
    double fv = 0;
    if (dtype_is_float(ot)) {
      if (fold_float(op, a, b, &fv, &iv))
        return dtype_is_float(rt) ? ir_const_f(ar, rt, fv) : ir_const(ar, rt, iv);
    } else if (fold_int(op, ot, a, b, &iv)) {
      return ir_const(ar, rt, iv);
    }
  }
  IrExpr *same = identity(ar, op, a, b);
  if (same) return same;
  IrExpr *e = new_expr(ar, X_BINARY, rt);
  e->op = op;
  e->a = a;
  e->b = b;
  e->nodes = count_nodes(a, b, NULL);
  e->has_index = any_index(a, b, NULL);
  return e;
}

/* cond ? a : b, with cond converted to bool and a, b to their common type. */
IrExpr *ir_select(Arena *ar, IrExpr *cond, IrExpr *a, IrExpr *b) {
  DType t = a->type == b->type ? a->type : common_type(a->type, b->type);
  cond = ir_cast(ar, DT_BOOL, cond);
  a = ir_cast(ar, t, a);
  b = ir_cast(ar, t, b);
  int64_t c;
  if (ir_is_const(cond, &c)) return c ? a : b;
  IrExpr *e = new_expr(ar, X_SELECT, t);
  e->a = cond;
  e->b = a;
  e->c = b;
  e->nodes = count_nodes(cond, a, b);
  e->has_index = any_index(cond, a, b);
  return e;
}

/* ------------------------------------------------------------ printing */

static const char *special_name(SpecialReg r) {
  switch (r) {
  case SR_CTAID_X:
    return "blockIdx.x";
  case SR_CTAID_Y:
    return "blockIdx.y";
  case SR_CTAID_Z:
    return "blockIdx.z";
  case SR_TID_X:
    return "threadIdx.x";
  case SR_NCTAID_X:
    return "gridDim.x";
  case SR_CLUSTER_CTARANK:
    return "cluster.blockRank";
  case SR_CLUSTER_CTAID_X:
    return "cluster.blockIdx.x";
  case SR_CLUSTER_CTAID_Y:
    return "cluster.blockIdx.y";
  case SR_CLUSTER_CTAID_Z:
    return "cluster.blockIdx.z";
  case SR_NCTAID_Y:
    return "gridDim.y";
  case SR_NCTAID_Z:
    return "gridDim.z";
  }
  return "?";
}

/* The shortest decimal form that reads back as the same value of type t
 * (float precision for the 32- and 16-bit types), always with a '.' or an
 * exponent so that it reads as a float. */
static void print_float(FILE *out, DType t, double v) {
  char buf[64];
  if (isnan(v) || isinf(v)) {
    fprintf(out, "%s", isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
    return;
  }
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (float_round(t, strtod(buf, NULL)) == v) break;
  }
  fputs(buf, out);
  if (!strpbrk(buf, ".eE")) fputs(".0", out);
}

static void print_const(FILE *out, const IrExpr *e) {
  if (dtype_is_float(e->type))
    print_float(out, e->type, e->fval);
  else if (e->type == DT_BOOL)
    fputs(e->ival ? "true" : "false", out);
  else if (e->type == DT_UINT64)
    fprintf(out, "%llu", (unsigned long long)e->ival);
  else
    fprintf(out, "%lld", (long long)e->ival);
}

/* An operand of an operator: compound operands get parentheses, so the
 * text never depends on precedence rules. */
static void print_operand(FILE *out, const IrExpr *e) {
  bool wrap = e->kind == X_BINARY && e->op != OP_MIN && e->op != OP_MAX;
  wrap = wrap || e->kind == X_SELECT;
  if (wrap) fputc('(', out);
  ir_print_expr(out, e);
  if (wrap) fputc(')', out);
}

void ir_print_expr(FILE *out, const IrExpr *e) {
  if (!e) {
    fputs("<null>", out);
    return;
  }
  switch (e->kind) {
  case X_CONST:
    print_const(out, e);
    break;
  case X_VAR:
    fprintf(out, "%%v%d", e->var->id);
    break;
  case X_PARAM:
    fputs(e->param->name, out);
    break;
  case X_SPECIAL:
    fputs(special_name(e->sreg), out);
    break;
  case X_INDEX:
    fprintf(out, "index%lld", (long long)e->ival);
    break;
  case X_MATH:
    fprintf(out, "%s(", ir_fn_name((IrMathFn)e->ival));
    ir_print_expr(out, e->a);
    fputc(')', out);
    break;
  case X_LOAD:
    fprintf(out, "load<%s>(", dtype_name((DType)e->ival));
    ir_print_expr(out, e->a);
    fputc(')', out);
    break;
  case X_UNARY:
    fputs(ir_op_name(e->op), out);
    print_operand(out, e->a);
    break;
  case X_BINARY:
    if (e->op == OP_MIN || e->op == OP_MAX) {
      fprintf(out, "%s(", ir_op_name(e->op));
      ir_print_expr(out, e->a);
      fputs(", ", out);
      ir_print_expr(out, e->b);
      fputc(')', out);
      break;
    }
    print_operand(out, e->a);
    fprintf(out, " %s ", ir_op_name(e->op));
    print_operand(out, e->b);
    break;
  case X_SELECT:
    print_operand(out, e->a);
    fputs(" ? ", out);
    print_operand(out, e->b);
    fputs(" : ", out);
    print_operand(out, e->c);
    break;
  case X_CAST:
    fprintf(out, "%s(", dtype_name(e->type));
    ir_print_expr(out, e->a);
    fputc(')', out);
    break;
  }
}

/* ------------------------------------------------------------- tensors */

/* Sizes saturate at TLS_SIZE_MAX instead of overflowing, so a hostile
 * shape gives a clear "too large" error downstream, never undefined
 * behaviour. */
#define TLS_SIZE_MAX ((int64_t)1 << 48)

static int64_t sat_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a < 0 || b < 0) /* an invalid shape: the verifier reports it */
    return -1;
  if (a > TLS_SIZE_MAX / b) return TLS_SIZE_MAX;
  return a * b;
}

int64_t ir_tensor_numel(const IrTensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) n = sat_mul(n, t->shape[i]);
  return n;
}

int64_t ir_tensor_nbytes(const IrTensor *t) {
  return sat_mul(ir_tensor_numel(t), dtype_bytes(t->dtype));
}

int ir_ref_rank(const IrRef *r) { return r->t->rank - r->nidx; }

int64_t ir_ref_dim(const IrRef *r, int i) {
  int rank = ir_ref_rank(r);
  if (i < 0 || i >= rank) return 0;
  if (r->transposed && rank >= 2 && i >= rank - 2) i = (i == rank - 1) ? rank - 2 : rank - 1;
  return r->t->shape[r->nidx + i];
}

int64_t ir_ref_nbytes(const IrRef *r) {
  int64_t n = dtype_bytes(r->t->dtype);
  for (int i = 0; i < ir_ref_rank(r); i++) n = sat_mul(n, ir_ref_dim(r, i));
  return n;
}

/* sum over fixed dimensions of idx[i] * (bytes of one step in dim i). */
IrExpr *ir_ref_byte_offset(Arena *ar, const IrRef *r) {
  IrExpr *off = ir_const(ar, DT_INT32, 0);
  int64_t step = dtype_bytes(r->t->dtype);
  for (int i = r->t->rank - 1; i >= r->nidx; i--) step = sat_mul(step, r->t->shape[i]);
  for (int i = r->nidx - 1; i >= 0; i--) {
    IrExpr *term = ir_binary(ar, OP_MUL, r->idx[i], ir_const(ar, DT_INT32, step));
    off = ir_binary(ar, OP_ADD, term, off);
    step = sat_mul(step, r->t->shape[i]);
  }
  return off;
}

/* ---------------------------------------------------------- statements */

int64_t ir_wgmma_a_dim(const IrWgmmaStmt *w, int i) {
  if (!w->ra) return ir_ref_dim(&w->a, i);
  return i >= 0 && i < w->ra->rank ? w->ra->shape[i] : 0;
}

DType ir_wgmma_a_dtype(const IrWgmmaStmt *w) { return w->ra ? w->ra->dtype : w->a.t->dtype; }

bool ir_atomic_ok(IrAtomicOp op, DType dt) {
  bool ints = dt == DT_INT32 || dt == DT_UINT32 || dt == DT_INT64 || dt == DT_UINT64;
  bool floats = dt == DT_FLOAT32 || dt == DT_FLOAT64;
  return ints || (floats && op != ATOM_MIN && op != ATOM_MAX);
}

bool ir_is_print_tensor(const IrStmt *s) {
  return s->kind == S_PRINTF && (s->print.reg || s->print.shared.t);
}

/* ir_stmt_tensors: t[0] the written tensor (NULL if none), then the read
 * ones (NULL where an optional operand is absent). */
int ir_stmt_tensors(const IrStmt *s, const IrTensor **t) {
  switch (s->kind) {
  case S_FILL:
    t[0] = s->fill.dst;
    return 1;
  case S_CAST:
  case S_TRANSPOSE:
  case S_RESHAPE:
  case S_CONVERT:
  case S_VIEW:
    t[0] = s->cast.dst, t[1] = s->cast.src;
    return 2;
  case S_ELEMWISE:
    t[0] = s->elemwise.dst, t[1] = s->elemwise.a, t[2] = s->elemwise.b;
    return 3;
  case S_UNARY:
    t[0] = s->unary.dst, t[1] = s->unary.src;
    return 2;
  case S_REDUCE:
    t[0] = s->reduce.dst, t[1] = s->reduce.src;
    return 2;
  case S_WHERE:
    t[0] = s->where.dst, t[1] = s->where.cond, t[2] = s->where.a, t[3] = s->where.b;
    return 4;
  case S_DOT:
    t[0] = s->dot.dst, t[1] = s->dot.a, t[2] = s->dot.b, t[3] = s->dot.c;
    return 4;
  case S_SLICE:
    t[0] = s->slice.dst, t[1] = s->slice.src;
    return 2;
  case S_LOAD_GLOBAL:
    t[0] = s->gmem.reg;
    return 1;
  case S_STORE_GLOBAL: /* an atomic's old values are written */
    t[0] = s->gmem.atomic ? s->gmem.atomic->old : NULL, t[1] = s->gmem.reg;
    t[2] = s->gmem.scatter, t[3] = s->gmem.atomic ? s->gmem.atomic->compare : NULL;
    return 4;
  case S_LOAD_SHARED:
    t[0] = s->smem.reg;
    return 1;
  case S_STORE_SHARED:
    t[0] = s->smem.atomic ? s->smem.atomic->old : NULL, t[1] = s->smem.reg;
    t[2] = s->smem.scatter, t[3] = s->smem.atomic ? s->smem.atomic->compare : NULL;
    return 4;
  case S_PRINTF: /* print_tensor of a register tensor */
    t[0] = NULL, t[1] = s->print.reg;
    return 2;
  case S_WGMMA_MMA: /* acc += a @ b; a in registers (ra) or shared */
    t[0] = t[1] = s->wgmma.acc, t[2] = s->wgmma.ra;
    return 3;
  default:
    return 0;
  }
}

const IrTensor *ir_stmt_global(const IrStmt *s, bool *stores) {
  *stores = s->kind == S_TMA_STORE || s->kind == S_STORE_GLOBAL;
  switch (s->kind) {
  case S_TMA_LOAD:
  case S_TMA_STORE:
    return s->tma.global;
  case S_CP_ASYNC:
    return s->cpasync.global;
  case S_LOAD_GLOBAL:
  case S_STORE_GLOBAL:
    return s->gmem.global;
  default:
    return NULL;
  }
}

int64_t ir_tensor_thread_elems(const IrTensor *t) {
  if (t->nthreads <= 0) return 0;
  return t->layout == LAYOUT_SPATIAL && t->reg
             ? t->reg->nslots /* replicas hold copies */
             : (ir_tensor_numel(t) + t->nthreads - 1) / t->nthreads;
}

int64_t ir_tensor_thread_regs(const IrTensor *t) {
  /* 16-bit elements pair up in 32-bit registers (as mma.sync takes them) */
  int64_t bytes = dtype_bytes(t->dtype) < 2 ? 4 : dtype_bytes(t->dtype);
  return (ir_tensor_thread_elems(t) * bytes + 3) / 4;
}

bool ir_stmt_names(const IrStmt *s, const IrTensor *t) {
  const IrTensor *ops[IR_STMT_MAX_TENSORS];
  int n = ir_stmt_tensors(s, ops);
  for (int i = 0; i < n; i++)
    if (ops[i] == t) return true;
  return false;
}

void ir_count_tensor_uses(const IrBlock *b, int *uses) {
  for (int i = 0; i < b->len; i++) {
    const IrStmt *s = b->items[i];
    ir_count_tensor_uses(&s->body, uses);
    ir_count_tensor_uses(&s->orelse, uses);
    const IrTensor *ops[IR_STMT_MAX_TENSORS];
    int n = ir_stmt_tensors(s, ops);
    for (int j = 0; j < n; j++)
      if (ops[j]) uses[ops[j]->id]++;
  }
}

IrStmt *ir_stmt_new(Arena *ar, SKind kind, Span span) {
  IrStmt *s = arena_alloc(ar, sizeof *s);
  s->kind = kind;
  s->span = span;
  if (kind == S_TMA_LOAD || kind == S_TMA_STORE) s->tma.tmap = -1;
  return s;
}

const char *mbar_sem_name(MbarSem s) {
  switch (s) {
  case MBAR_SEM_RELAXED:
    return "relaxed";
  case MBAR_SEM_ACQUIRE:
    return "acquire";
  case MBAR_SEM_RELEASE:
    return "release";
  }
  return "?";
}

int64_t ir_cluster_size(const IrKernel *k) {
  int64_t n = 1;
  for (int i = 0; i < 3; i++)
    if (k->cluster[i] > 0) n *= k->cluster[i];
  return n;
}

const char *mbar_scope_name(MbarScope s) {
  switch (s) {
  case MBAR_SCOPE_CTA:
    return "cta";
  case MBAR_SCOPE_CLUSTER:
    return "cluster";
  }
  return "?";
}

void ir_block_push(Arena *ar, IrBlock *b, IrStmt *s) {
  if (b->len == b->cap) {
    int cap = b->cap ? b->cap * 2 : 8;
    IrStmt **items = arena_alloc(ar, (size_t)cap * sizeof *items);
    if (b->len) memcpy(items, b->items, (size_t)b->len * sizeof *items);
    b->items = items;
    b->cap = cap;
  }
  b->items[b->len++] = s;
}

/* Kernel arrays carry no capacity field: their capacity is the next power
 * of two at or above the length (at least 8), so they grow exactly when
 * the length reaches one. */
static void **grow_ptr_array(Arena *ar, void **items, int len) {
  if (len != 0 && (len < 8 || (len & (len - 1)) != 0)) return items;
  int cap = len ? len * 2 : 8;
  void **bigger = arena_alloc(ar, (size_t)cap * sizeof *bigger);
  if (len) memcpy(bigger, items, (size_t)len * sizeof *bigger);
  return bigger;
}

IrVar *ir_new_var(Arena *ar, IrKernel *k, const char *name, DType t) {
  IrVar *v = arena_alloc(ar, sizeof *v);
  v->id = k->nvars;
  v->name = arena_strdup(ar, name ? name : "");
  v->type = t;
  k->vars = (IrVar **)grow_ptr_array(ar, (void **)k->vars, k->nvars);
  k->vars[k->nvars++] = v;
  return v;
}

IrTensor *ir_new_tensor(Arena *ar, IrKernel *k, const char *name, MemSpace space, DType dt,
                        int rank, const int64_t *shape, Span span) {
  IrTensor *t = arena_alloc(ar, sizeof *t);
  t->id = k->ntensors;
  t->name = arena_strdup(ar, name ? name : "");
  t->span = span;
  t->space = space;
  t->dtype = dt;
  t->rank = rank < 0 ? 0 : rank > IR_MAX_RANK ? IR_MAX_RANK : rank;
  for (int i = 0; i < t->rank; i++) t->shape[i] = shape[i];
  t->layout = space == MS_GLOBAL ? LAYOUT_ROW_MAJOR : LAYOUT_NONE;
  k->tensors = (IrTensor **)grow_ptr_array(ar, (void **)k->tensors, k->ntensors);
  k->tensors[k->ntensors++] = t;
  return t;
}
