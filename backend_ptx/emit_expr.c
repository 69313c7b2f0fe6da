/* expr.c: scalar expressions to PTX registers.
 *
 * Every expression is evaluated into a fresh virtual register of its class
 * (or folded into an immediate operand); ptxas does register allocation.
 * Integer division and remainder are C's (truncating toward zero), as
 * ir.h specifies: emit_divmod.c emits them.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "backend_ptx/emit_int.h"

/* The register class that holds a dtype. */
RegClass dtype_class(DType t) {
  switch (t) {
  case DT_BOOL:
    return RC_PRED;
  case DT_FLOAT16:
  case DT_BFLOAT16:
    return RC_B16;
  case DT_INT64:
  case DT_UINT64:
    return RC_B64;
  case DT_FLOAT32:
    return RC_F32;
  case DT_FLOAT64:
    return RC_F64;
  default:
    return RC_B32;
  }
}

/* The PTX instruction type of a dtype. */
const char *ptx_type(DType t) {
  switch (t) {
  case DT_BOOL:
    return ".pred";
  case DT_INT32:
    return ".s32";
  case DT_UINT32:
    return ".u32";
  case DT_INT64:
    return ".s64";
  case DT_UINT64:
    return ".u64";
  case DT_FLOAT16:
    return ".f16";
  case DT_BFLOAT16:
    return ".bf16";
  case DT_FLOAT32:
    return ".f32";
  case DT_FLOAT64:
    return ".f64";
  case DT_INT8:
    return ".s8";
  case DT_UINT8:
    return ".u8";
  case DT_INT16:
    return ".s16";
  case DT_UINT16:
    return ".u16";
  default: /* fp8: bits, converted by emit_fp8_from/emit_fp8_to */
    return ".b32";
  }
}

/* The untyped bit type of a dtype's register class. */
const char *ptx_btype(DType t) {
  static const char *names[RC_COUNT] = {".pred", ".b16", ".b32", ".b64", ".f32", ".f64"};
  return names[dtype_class(t)];
}

static const char *class_prefix(RegClass c) {
  static const char *names[RC_COUNT] = {"%p", "%h", "%r", "%rd", "%f", "%fd"};
  return names[c];
}

Val new_reg(Emitter *e, DType t) {
  Val v;
  RegClass c = dtype_class(t);
  snprintf(v.s, sizeof v.s, "%s%d", class_prefix(c), e->nregs[c]++);
  v.type = t;
  return v;
}

static bool is_imm(Val v) { return v.s[0] != '%'; }

/* An integer immediate printed as the type's width sees it. */
Val val_imm(DType t, int64_t x) {
  Val v;
  v.type = t;
  switch (t) {
  case DT_INT32:
    snprintf(v.s, sizeof v.s, "%" PRId32, (int32_t)x);
    break;
  case DT_UINT32:
    snprintf(v.s, sizeof v.s, "%" PRIu32, (uint32_t)x);
    break;
  case DT_UINT64:
    snprintf(v.s, sizeof v.s, "%" PRIu64, (uint64_t)x);
    break;
  default:
    snprintf(v.s, sizeof v.s, "%" PRId64, x);
    break;
  }
  return v;
}

/* A float immediate: 0fXXXXXXXX (f32) or 0dXXXXXXXXXXXXXXXX (f64). */
static Val float_imm(DType t, double x) {
  Val v;
  v.type = t;
  if (t == DT_FLOAT64) {
    uint64_t bits;
    memcpy(&bits, &x, 8);
    snprintf(v.s, sizeof v.s, "0d%016" PRIX64, bits);
  } else {
    float f = (float)x;
    uint32_t bits;
    memcpy(&bits, &f, 4);
    snprintf(v.s, sizeof v.s, "0f%08" PRIX32, bits);
  }
  return v;
}

Val val_to_reg(Emitter *e, Val v) {
  if (!is_imm(v)) return v;
  Val r = new_reg(e, v.type);
  if (v.type == DT_FLOAT16 || v.type == DT_BFLOAT16) {
    /* 16-bit float immediates: go through f32 (the imm is printed as f32). */
    Val f = new_reg(e, DT_FLOAT32);
    emit(e, "mov.f32 %s, %s;", f.s, v.s);
    emit(e, "cvt.rn%s.f32 %s, %s;", ptx_type(v.type), r.s, f.s);
  } else if (v.type == DT_BOOL) {
    emit(e, "mov.pred %s, %s;", r.s, v.s);
  } else {
    emit(e, "mov%s %s, %s;", ptx_btype(v.type), r.s, v.s);
  }
  return r;
}

Val var_reg(const IrVar *var) {
  Val v;
  snprintf(v.s, sizeof v.s, "%%v%d", var->id);
  v.type = var->type;
  return v;
}

static bool is_int(DType t) {
  return t == DT_INT32 || t == DT_UINT32 || t == DT_INT64 || t == DT_UINT64 || t == DT_INT8 ||
         t == DT_UINT8 || t == DT_INT16 || t == DT_UINT16;
}

/* The PTX name of an fp8 format, as cvt's packed pairs spell it. */
static const char *fp8_name(DType t) { return t == DT_FLOAT8_E4M3 ? "e4m3" : "e5m2"; }

/* Two fp8 values (the low bytes of 32-bit registers lo and hi) to an f16x2
 * pair (lo in the low half). */
Val emit_fp8x2_to_f16x2(Emitter *e, Val lo, Val hi, DType fp8) {
  Val w = new_reg(e, DT_UINT32), h = new_reg(e, DT_FLOAT16), r = new_reg(e, DT_UINT32);
  emit(e, "prmt.b32 %s, %s, %s, 0x0040;", w.s, lo.s, hi.s);
  emit(e, "cvt.u16.u32 %s, %s;", h.s, w.s);
  emit(e, "cvt.rn.f16x2.%sx2 %s, %s;", fp8_name(fp8), r.s, h.s);
  return r;
}

/* Two f32 values to fp8 (satfinite, as Tilus's casts saturate): a 32-bit
 * register holding lo's byte then hi's in its low 16 bits, zeros above. */
Val emit_f32x2_to_fp8x2(Emitter *e, Val lo, Val hi, DType fp8) {
  Val h = new_reg(e, DT_FLOAT16), r = new_reg(e, DT_UINT32);
  emit(e, "cvt.rn.satfinite.%sx2.f32 %s, %s, %s;", fp8_name(fp8), h.s, hi.s, lo.s);
  emit(e, "cvt.u32.u16 %s, %s;", r.s, h.s);
  return r;
}

/* An fp8 value (the low byte of v) to f16. */
static Val fp8_to_f16(Emitter *e, Val v) {
  Val p = emit_fp8x2_to_f16x2(e, v, v, v.type);
  Val lo = new_reg(e, DT_FLOAT16), hi = new_reg(e, DT_FLOAT16);
  emit(e, "mov.b32 {%s, %s}, %s;", lo.s, hi.s, p.s);
  return lo;
}

/* A sub-byte float (its bits, zero-extended in v) to f16, exactly: the
 * sign to bit 15, exponent and mantissa under f16's (bias 15), which reads
 * the value times 2^(bias - 15) for normal and subnormal values alike;
 * then times 2^(15 - bias), a power of two every such value survives. */
static Val subfloat_to_f16(Emitter *e, Val v) {
  int n = dtype_bits(v.type), eb = dtype_exp_bits(v.type), mb = n - 1 - eb;
  int bias = (1 << (eb - 1)) - 1;
  Val w = new_reg(e, DT_UINT32), s = new_reg(e, DT_UINT32), h = new_reg(e, DT_FLOAT16);
  emit(e, "and.b32 %s, %s, %d;", w.s, v.s, (1 << (n - 1)) - 1);
  emit(e, "shl.b32 %s, %s, %d;", w.s, w.s, 10 - mb);
  emit(e, "shl.b32 %s, %s, %d;", s.s, v.s, 16 - n);
  emit(e, "and.b32 %s, %s, 32768;", s.s, s.s);
  emit(e, "or.b32 %s, %s, %s;", w.s, w.s, s.s);
  emit(e, "cvt.u16.u32 %s, %s;", h.s, w.s);
  if (bias == 15) return h;
  Val k = new_reg(e, DT_FLOAT16), r = new_reg(e, DT_FLOAT16);
  emit(e, "mov.b16 %s, 0x%04x;", k.s, (30 - bias) << 10);
  emit(e, "mul.rn.f16 %s, %s, %s;", r.s, h.s, k.s);
  return r;
}

/* A sub-byte value as a 32-bit one: integers are already sign- or
 * zero-extended in their register, floats go through f16. */
static Val from_subbyte(Emitter *e, Val v) {
  if (dtype_is_float(v.type)) return subfloat_to_f16(e, val_to_reg(e, v));
  v.type = dtype_is_signed(v.type) ? DT_INT32 : DT_UINT32;
  return v;
}

/* v (any numeric type) to fp8, through f32. */
static Val to_fp8(Emitter *e, Val v, DType fp8) {
  Val f = val_to_reg(e, val_convert(e, v, DT_FLOAT32));
  Val w = emit_f32x2_to_fp8x2(e, f, f, fp8), r = new_reg(e, fp8);
  emit(e, "and.b32 %s, %s, 255;", r.s, w.s);
  return r;
}

/* Converts an integer immediate to another integer type or a float. */
static Val convert_imm(Val v, DType to) {
  int64_t x = strtoll(v.s, NULL, 0);
  if (v.type == DT_UINT64) x = (int64_t)strtoull(v.s, NULL, 0);
  if (is_int(to)) return val_imm(to, x);
  return float_imm(to, (double)x);
}

/* cvt between two numeric types (rounding modes as C casts use). */
static Val convert_numeric(Emitter *e, Val v, DType to) {
  Val r = new_reg(e, to);
  bool from_f = dtype_is_float(v.type), to_f = dtype_is_float(to);
  const char *rnd = "";
  if (from_f && !to_f)
    rnd = ".rzi";
  else if (to_f && (!from_f || dtype_bytes(to) < dtype_bytes(v.type)))
    rnd = ".rn";
  emit(e, "cvt%s%s%s %s, %s;", rnd, ptx_type(to), ptx_type(v.type), r.s, v.s);
  return r;
}

Val val_convert(Emitter *e, Val v, DType to) {
  if (v.type == to) return v;
  if (dtype_is_subbyte(v.type)) return val_convert(e, from_subbyte(e, v), to);
  if (is_int(v.type) && is_int(to) && dtype_bytes(v.type) == dtype_bytes(to)) {
    v.type = to; /* signedness only: same bits */
    return v;
  }
  if (is_imm(v) && v.type != DT_BOOL && is_int(v.type) &&
      (is_int(to) || to == DT_FLOAT32 || to == DT_FLOAT64))
    return convert_imm(v, to);
  if (to == DT_BOOL) {
    Val p = new_reg(e, DT_BOOL);
    v = val_to_reg(e, v);
    emit(e, "setp.ne%s %s, %s, %s;", ptx_type(v.type), p.s, v.s,
         dtype_is_float(v.type) ? float_imm(DT_FLOAT32, 0).s : "0");
    return p;
  }
  if (v.type == DT_BOOL) {
    Val r = new_reg(e, to);
    if (is_int(to))
      emit(e, "selp%s %s, 1, 0, %s;", ptx_btype(to), r.s, v.s);
    else
      return convert_numeric(e, val_convert(e, v, DT_INT32), to);
    return r;
  }
  if (dtype_is_fp8(to)) return to_fp8(e, v, to);
  v = val_to_reg(e, v);
  if (dtype_is_fp8(v.type)) return val_convert(e, fp8_to_f16(e, v), to);
  if (is_int(v.type) && dtype_bytes(v.type) < 4 && dtype_is_float(to))
    v.type = dtype_is_signed(v.type) ? DT_INT32 : DT_UINT32; /* extended in a 32-bit register */
  if (is_int(v.type) && is_int(to) && dtype_bytes(to) < dtype_bytes(v.type)) {
    Val r = new_reg(e, to);
    if (dtype_bytes(to) == 4)
      emit(e, "cvt.u32.u64 %s, %s;", r.s, v.s);
    else /* truncated, then sign- or zero-extended in the 32-bit register */
      emit(e, "cvt%s%s %s, %s;", ptx_type(to), ptx_type(v.type), r.s, v.s);
    return r;
  }
  return convert_numeric(e, v, to);
}

/* ------------------------------------------------------------ leaves */

static Val emit_const(Emitter *e, const IrExpr *x) {
  if (dtype_is_float(x->type)) {
    Val v = float_imm(x->type == DT_FLOAT64 ? DT_FLOAT64 : DT_FLOAT32, x->fval);
    if (dtype_is_fp8(x->type)) return to_fp8(e, v, x->type);
    if (x->type == DT_FLOAT16 || x->type == DT_BFLOAT16) {
      v.type = x->type;
      return val_to_reg(e, v);
    }
    return v;
  }
  if (x->type == DT_BOOL) {
    Val v = {.type = DT_BOOL};
    snprintf(v.s, sizeof v.s, "%d", x->ival ? 1 : 0);
    return val_to_reg(e, v);
  }
  return val_imm(x->type, x->ival);
}

static Val emit_special(Emitter *e, const IrExpr *x) {
  static const char *names[] = {"%ctaid.x",         "%ctaid.y",         "%ctaid.z",
                                "%tid.x",           "%nctaid.x",        "%cluster_ctarank",
                                "%cluster_ctaid.x", "%cluster_ctaid.y", "%cluster_ctaid.z",
                                "%nctaid.y",        "%nctaid.z"};
  Val r = new_reg(e, DT_UINT32);
  emit(e, "mov.u32 %s, %s;", r.s, names[x->sreg]);
  return val_convert(e, r, x->type);
}

/* ------------------------------------------------------------ operators */

/* Binary operators on predicates: logic, and ==/!= as xor. */
static Val emit_pred_binary(Emitter *e, IrOp op, Val a, Val b) {
  Val r = new_reg(e, DT_BOOL);
  switch (op) {
  case OP_AND:
  case OP_LAND:
    emit(e, "and.pred %s, %s, %s;", r.s, a.s, b.s);
    return r;
  case OP_OR:
  case OP_LOR:
    emit(e, "or.pred %s, %s, %s;", r.s, a.s, b.s);
    return r;
  case OP_XOR:
  case OP_NE:
    emit(e, "xor.pred %s, %s, %s;", r.s, a.s, b.s);
    return r;
  case OP_EQ:
    emit(e, "xor.pred %s, %s, %s;", r.s, a.s, b.s);
    emit(e, "not.pred %s, %s;", r.s, r.s);
    return r;
  default:
    unsupported(e, "operator '%s' on bool values", ir_op_name(op));
    return r;
  }
}

/* The setp comparison of op. Float != is the unordered neu, true when
 * either side is NaN, as in Python and C (ne is false there); the other
 * comparisons are false on NaN in both. */
static const char *cmp_name(IrOp op, DType t) {
  switch (op) {
  case OP_EQ:
    return "eq";
  case OP_NE:
    return dtype_is_float(t) ? "neu" : "ne";
  case OP_LT:
    return "lt";
  case OP_LE:
    return "le";
  case OP_GT:
    return "gt";
  default:
    return "ge";
  }
}

static Val emit_compare(Emitter *e, IrOp op, Val a, Val b) {
  if (b.type != a.type) b = val_convert(e, b, a.type);
  if (is_imm(a)) a = val_to_reg(e, a);
  Val r = new_reg(e, DT_BOOL);
  emit(e, "setp.%s%s %s, %s, %s;", cmp_name(op, a.type), ptx_type(a.type), r.s, a.s, b.s);
  return r;
}

/* Division of 16-bit floats: through f32, PTX has no div.f16. */
static Val emit_half_div(Emitter *e, Val a, Val b, DType t) {
  Val fa = val_convert(e, val_to_reg(e, a), DT_FLOAT32);
  Val fb = val_convert(e, val_to_reg(e, b), DT_FLOAT32);
  Val q = new_reg(e, DT_FLOAT32);
  emit(e, "div.rn.f32 %s, %s, %s;", q.s, fa.s, fb.s);
  return val_convert(e, q, t);
}

/* a op b in type t (both already of type t, except shift counts). */
static Val emit_arith(Emitter *e, IrOp op, Val a, Val b, DType t) {
  bool fl = dtype_is_float(t);
  const char *ty = ptx_type(t), *bt = ptx_btype(t);
  if (fl && op == OP_DIV && dtype_bytes(t) == 2) return emit_half_div(e, a, b, t);
  if (!fl && (op == OP_DIV || op == OP_MOD)) return emit_int_divmod(e, op, a, b, t, NULL, NULL);
  if (is_imm(a) && (fl || op == OP_SHL || op == OP_SHR)) a = val_to_reg(e, a);
  Val r = new_reg(e, t);
  switch (op) {
  case OP_ADD:
    emit(e, "add%s %s, %s, %s;", ty, r.s, a.s, b.s);
    break;
  case OP_SUB:
    emit(e, "sub%s %s, %s, %s;", ty, r.s, a.s, b.s);
    break;
  case OP_MUL:
    emit(e, "mul%s%s %s, %s, %s;", fl ? "" : ".lo", ty, r.s, a.s, b.s);
    break;
  case OP_DIV: /* float32 as Tilus's nvcc -prec-div=false: div.full (2 ulp, no slow path) */
    emit(e, "div%s%s %s, %s, %s;", t == DT_FLOAT32 ? ".full" : fl ? ".rn" : "", ty, r.s, a.s, b.s);
    break;
  case OP_MIN:
    emit(e, "min%s %s, %s, %s;", ty, r.s, a.s, b.s);
    break;
  case OP_MAX:
    emit(e, "max%s %s, %s, %s;", ty, r.s, a.s, b.s);
    break;
  case OP_MOD:
    if (fl) unsupported(e, "'%%' on floating-point values");
    emit(e, "rem%s %s, %s, %s;", ty, r.s, a.s, b.s);
    break;
  case OP_AND:
    emit(e, "and%s %s, %s, %s;", bt, r.s, a.s, b.s);
    break;
  case OP_OR:
    emit(e, "or%s %s, %s, %s;", bt, r.s, a.s, b.s);
    break;
  case OP_XOR:
    emit(e, "xor%s %s, %s, %s;", bt, r.s, a.s, b.s);
    break;
  case OP_SHL:
    b = val_convert(e, b, DT_UINT32);
    emit(e, "shl%s %s, %s, %s;", bt, r.s, a.s, b.s);
    break;
  case OP_SHR:
    b = val_convert(e, b, DT_UINT32);
    emit(e, "shr%s %s, %s, %s;", ty, r.s, a.s, b.s);
    break;
  default:
    unsupported(e, "operator '%s'", ir_op_name(op));
    break;
  }
  if (fl && op != OP_ADD && op != OP_SUB && op != OP_MUL && op != OP_DIV && op != OP_MIN &&
      op != OP_MAX)
    unsupported(e, "operator '%s' on floating-point values", ir_op_name(op));
  return r;
}

static bool op_is_compare(IrOp op) { return op >= OP_EQ && op <= OP_GE; }

static Val emit_binary(Emitter *e, const IrExpr *x) {
  const IrDivisor *dv = x->op == OP_DIV || x->op == OP_MOD ? ir_divisor_of(e->k, x) : NULL;
  if (dv) return emit_divisor_divmod(e, x, dv); /* by a launch-invariant value */
  Val a = emit_expr(e, x->a), b = emit_expr(e, x->b);
  bool ordering = x->op == OP_LT || x->op == OP_LE || x->op == OP_GT || x->op == OP_GE;
  if (a.type == DT_BOOL && b.type == DT_BOOL && !ordering) return emit_pred_binary(e, x->op, a, b);
  if (x->op == OP_LAND || x->op == OP_LOR)
    return emit_pred_binary(e, x->op, val_convert(e, a, DT_BOOL), val_convert(e, b, DT_BOOL));
  if (op_is_compare(x->op)) {
    if (a.type == DT_BOOL) a = val_convert(e, a, b.type == DT_BOOL ? DT_UINT32 : b.type);
    return emit_compare(e, x->op, a, b);
  }
  a = val_convert(e, a, x->type);
  if (x->op != OP_SHL && x->op != OP_SHR) b = val_convert(e, b, x->type);
  if (is_imm(a) && is_imm(b)) a = val_to_reg(e, a);
  if ((x->op == OP_DIV || x->op == OP_MOD) && !dtype_is_float(x->type)) {
    IrRange ra, rb;
    bool ka = ir_expr_range(x->a, e->ranges, &ra), kb = ir_expr_range(x->b, e->ranges, &rb);
    return emit_int_divmod(e, x->op, a, b, x->type, ka ? &ra : NULL, kb ? &rb : NULL);
  }
  return emit_arith(e, x->op, a, b, x->type);
}

static Val emit_unary_op(Emitter *e, const IrExpr *x) {
  Val a = val_to_reg(e, val_convert(e, emit_expr(e, x->a), x->type));
  Val r = new_reg(e, x->type);
  switch (x->op) {
  case OP_NEG:
    emit(e, "neg%s %s, %s;",
         dtype_is_float(x->type)     ? ptx_type(x->type)
         : dtype_bytes(x->type) == 8 ? ".s64"
                                     : ".s32",
         r.s, a.s);
    break;
  case OP_BNOT:
    emit(e, "not%s %s, %s;", ptx_btype(x->type), r.s, a.s);
    break;
  case OP_LNOT:
    emit(e, "not.pred %s, %s;", r.s, a.s);
    break;
  default:
    unsupported(e, "unary operator '%s'", ir_op_name(x->op));
    break;
  }
  return r;
}

/* c ? a : b. Predicates have no selp: (c & a) | (!c & b). */
static Val emit_select(Emitter *e, const IrExpr *x) {
  Val c = val_convert(e, emit_expr(e, x->a), DT_BOOL);
  Val a = val_convert(e, emit_expr(e, x->b), x->type);
  Val b = val_convert(e, emit_expr(e, x->c), x->type);
  Val r = new_reg(e, x->type);
  if (x->type == DT_BOOL) {
    Val t = new_reg(e, DT_BOOL);
    emit(e, "and.pred %s, %s, %s;", t.s, c.s, a.s);
    emit(e, "and.pred %s, !%s, %s;", r.s, c.s, b.s);
    emit(e, "or.pred %s, %s, %s;", r.s, r.s, t.s);
    return r;
  }
  emit(e, "selp%s %s, %s, %s, %s;", ptx_btype(x->type), r.s, a.s, b.s, c.s);
  return r;
}

/* GlobalTensor[...].item(): one ld.global; 16-bit floats widen to f32, a
 * bool is a byte compared with 0. */
static Val emit_load(Emitter *e, const IrExpr *x) {
  DType mem = (DType)x->ival;
  Val addr = val_to_reg(e, val_convert(e, emit_expr(e, x->a), DT_UINT64));
  Val r = new_reg(e, x->type);
  const char *nc = emit_nc(e, x->a);
  if (mem == DT_FLOAT16 || mem == DT_BFLOAT16) {
    Val h = new_reg(e, mem);
    emit(e, "ld.global%s.b16 %s, [%s];", nc, h.s, addr.s);
    emit(e, "cvt.f32.%s %s, %s;", mem == DT_FLOAT16 ? "f16" : "bf16", r.s, h.s);
  } else if (dtype_is_fp8(mem)) {
    Val b = new_reg(e, mem);
    emit(e, "ld.global%s.u8 %s, [%s];", nc, b.s, addr.s);
    emit(e, "cvt.f32.f16 %s, %s;", r.s, fp8_to_f16(e, b).s);
  } else if (mem == DT_BOOL) {
    Val b = new_reg(e, DT_UINT32);
    emit(e, "ld.global%s.u8 %s, [%s];", nc, b.s, addr.s);
    emit(e, "setp.ne.u32 %s, %s, 0;", r.s, b.s);
  } else {
    emit(e, "ld.global%s%s %s, [%s];", nc, ptx_type(mem), r.s, addr.s);
  }
  return r;
}

Val emit_expr(Emitter *e, const IrExpr *x) {
  switch (x->kind) {
  case X_CONST:
    return emit_const(e, x);
  case X_VAR:
    return var_reg(x->var);
  case X_PARAM: {
    Val v = {.type = x->param->type};
    snprintf(v.s, sizeof v.s, "%s", e->param_regs[x->param->index]);
    return v;
  }
  case X_SPECIAL:
    return emit_special(e, x);
  case X_INDEX:
    if (x->ival >= 0 && x->ival < IR_MAX_RANK && e->index[x->ival].s[0]) return e->index[x->ival];
    unsupported(e, "an element index outside a register tensor's initializer");
    return val_imm(DT_INT32, 0);
  case X_UNARY:
    return emit_unary_op(e, x);
  case X_BINARY:
    return emit_binary(e, x);
  case X_SELECT:
    return emit_select(e, x);
  case X_CAST:
    return val_convert(e, emit_expr(e, x->a), x->type);
  case X_LOAD:
    return emit_load(e, x);
  case X_MATH:
    return emit_math_fn(e, (IrMathFn)x->ival, val_to_reg(e, emit_expr(e, x->a)));
  }
  return val_imm(DT_INT32, 0);
}

Val emit_expr_reg(Emitter *e, const IrExpr *x) { return val_to_reg(e, emit_expr(e, x)); }

/* ------------------------------------------------------------ addresses */

Val emit_smem_addr(Emitter *e, const IrRef *r) {
  IrExpr *off = ir_ref_byte_offset(e->m->ar, r);
  int64_t c;
  Val a = new_reg(e, DT_UINT32);
  if (ir_is_const(off, &c)) {
    emit(e, "add.u32 %s, %%smem, %" PRId64 ";", a.s, c + r->t->smem_offset);
    return a;
  }
  Val o = val_convert(e, emit_expr(e, off), DT_UINT32);
  emit(e, "add.u32 %s, %%smem, %s;", a.s, o.s);
  if (r->t->smem_offset) emit(e, "add.u32 %s, %s, %" PRId64 ";", a.s, a.s, r->t->smem_offset);
  return a;
}

Val emit_group_tid(Emitter *e) {
  Val t = {.s = "%tidx", .type = DT_INT32};
  if (e->group.begin == 0) return t;
  Val r = new_reg(e, DT_INT32);
  emit(e, "sub.s32 %s, %%tidx, %" PRId64 ";", r.s, e->group.begin);
  return r;
}

/* a op b in type t, for the per-element code of register tensors. */
Val emit_binop(Emitter *e, IrOp op, Val a, Val b, DType t) {
  a = val_convert(e, a, t);
  b = val_convert(e, b, t);
  if (op_is_compare(op)) return emit_compare(e, op, a, b);
  if (t == DT_BOOL) return emit_pred_binary(e, op, a, b);
  if (is_imm(a) && is_imm(b)) a = val_to_reg(e, a);
  return emit_arith(e, op, a, b, t);
}
