/* emit_divmod.c: integer division and remainder (C's: OP_DIV truncates,
 * OP_MOD takes the dividend's sign), strength-reduced where the divisor is
 * a constant, because ptxas does not: it expands div/rem by an immediate
 * into the generic sequence (I2F, MUFU.RCP, F2I, IMAD.HI and fix-ups, about
 * 20 instructions; a call for 64-bit types). Here:
 *
 *   d = 1, -1             a, -a (wrapping) / 0
 *   d = +-2^k, a >= 0     shr / and
 *   d = +-2^k             a bias of 2^k - 1 for negative a, then shr / and
 *   d > max(a) / 2        q = a >= d (unsigned or a >= 0)
 *   other d, a >= 0 or unsigned
 *                         q = mul.hi(a, m) >> s, or with a 33/65-bit m
 *                         q = (t + ((a - t) >> 1)) >> (s - 1), t = mul.hi
 *                         (Granlund and Montgomery, PLDI 1994, 4.1-4.2)
 *   other d, signed       q = (mul.hi.s(a, M) [+-a]) >> s, plus one for a
 *                         negative quotient (Hacker's Delight, 10-1 to 10-6)
 *   remainder             a - q * d
 *
 * "a >= 0" comes from ir_expr_range (ranges.c): a signed value known to be
 * non-negative divides as an unsigned one, and a known maximum can shorten
 * the multiplier. A launch-invariant int32 divisor (ir/magic.c) divides
 * through the multiplier the runtime passes (emit_divisor_divmod, at the
 * end of this file); other non-constant divisors stay div/rem, unsigned
 * when both operands are known non-negative (no sign fix-ups). INT_MIN / -1 wraps to
 * INT_MIN (and INT_MIN % -1 is 0), as the PTX div does in practice.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "backend_ptx/emit_int.h"

typedef unsigned __int128 u128;

/* The constants of a division by multiplication: q = mul.hi(a, m) >> shift,
 * or, with add, the N+1-bit multiplier 2^N + m. */
typedef struct DivMagic {
  uint64_t m;
  int shift;
  bool add;
} DivMagic;

/* The magic of an unsigned N-bit division by d (d >= 3, not a power of
 * two) valid for dividends 0..amax: the smallest shift whose multiplier
 * fits in N bits, else the N+1-bit multiplier (add = true, its low N bits
 * in m). */
static DivMagic magic_unsigned(int bits, uint64_t d, uint64_t amax) {
  int l = 0;
  while (((u128)1 << l) < d) l++; /* ceil(log2(d)) */
  for (int s = 0; s <= l; s++) {
    u128 p = (u128)1 << (bits + s);
    u128 m = (p + d - 1) / d;
    if (m >> bits) continue; /* does not fit in N bits */
    u128 err = m * d - p;    /* floor(m a / 2^(N+s)) = floor(a / d) if amax err < 2^(N+s) */
    if ((u128)amax * err < p) return (DivMagic){(uint64_t)m, s, false};
  }
  u128 p = (u128)1 << (bits + l);
  u128 m = p / d - ((u128)1 << bits) + 1;
  return (DivMagic){(uint64_t)m, l, true};
}

/* The magic of a signed N-bit division by d (|d| >= 3, not a power of two):
 * Hacker's Delight's magic(), over exact 128-bit arithmetic. m holds the
 * N-bit pattern of M. */
static DivMagic magic_signed(int bits, int64_t d) {
  u128 two = (u128)1 << (bits - 1);
  u128 ad = d < 0 ? (u128)(-(__int128)d) : (u128)d;
  u128 t = two + (d < 0 ? 1 : 0);
  u128 anc = t - 1 - t % ad; /* |nc| */
  int p = bits - 1;
  u128 q1 = two / anc, r1 = two - q1 * anc, q2 = two / ad, r2 = two - q2 * ad, delta;
  do {
    p++;
    q1 *= 2, r1 *= 2;
    if (r1 >= anc) q1++, r1 -= anc;
    q2 *= 2, r2 *= 2;
    if (r2 >= ad) q2++, r2 -= ad;
    delta = ad - r2;
  } while (q1 < delta || (q1 == delta && r1 == 0));
  u128 mask = bits == 64 ? ~(u128)0 >> 64 : ((u128)1 << bits) - 1;
  u128 m = (q2 + 1) & mask;
  if (d < 0) m = (0 - m) & mask;
  return (DivMagic){(uint64_t)m, p - bits, false};
}

/* ------------------------------------------------------------ emission */

static const char *sfx(DType t, bool sgn) {
  if (dtype_bytes(t) == 8) return sgn ? ".s64" : ".u64";
  return sgn ? ".s32" : ".u32";
}

/* The N-bit pattern x as a signed immediate of width N. */
static int64_t as_signed(int bits, uint64_t x) {
  return bits == 64 ? (int64_t)x : (int64_t)(int32_t)(uint32_t)x;
}

/* q = a / d for an unsigned (or non-negative) a, d >= 1. */
static Val udiv_const(Emitter *e, Val a, uint64_t d, DType t, uint64_t amax) {
  int bits = dtype_bytes(t) * 8;
  const char *u = sfx(t, false), *b = ptx_btype(t);
  Val q = new_reg(e, t);
  if (d == 1) return a;
  if ((d & (d - 1)) == 0) {
    int k = 0;
    while (((uint64_t)1 << k) < d) k++;
    emit(e, "shr%s %s, %s, %d;", u, q.s, a.s, k);
    return q;
  }
  if (d > amax) { /* every dividend is below d */
    emit(e, "mov%s %s, 0;", b, q.s);
    return q;
  }
  if (d > amax / 2) { /* the quotient is 0 or 1 */
    Val ge = new_reg(e, DT_BOOL);
    emit(e, "setp.ge%s %s, %s, %" PRIu64 ";", u, ge.s, a.s, d);
    emit(e, "selp%s %s, 1, 0, %s;", b, q.s, ge.s);
    return q;
  }
  DivMagic mg = magic_unsigned(bits, d, amax);
  if (!mg.add) {
    emit(e, "mul.hi%s %s, %s, %" PRIu64 ";", u, q.s, a.s, mg.m);
    if (mg.shift) emit(e, "shr%s %s, %s, %d;", u, q.s, q.s, mg.shift);
    return q;
  }
  Val th = new_reg(e, t);
  emit(e, "mul.hi%s %s, %s, %" PRIu64 ";", u, th.s, a.s, mg.m);
  emit(e, "sub%s %s, %s, %s;", u, q.s, a.s, th.s);
  emit(e, "shr%s %s, %s, 1;", u, q.s, q.s);
  emit(e, "add%s %s, %s, %s;", u, q.s, q.s, th.s);
  if (mg.shift > 1) emit(e, "shr%s %s, %s, %d;", u, q.s, q.s, mg.shift - 1);
  return q;
}

/* q = a / d for a signed a of any sign, |d| >= 2. */
static Val sdiv_const(Emitter *e, Val a, int64_t d, DType t, Val *biased) {
  int bits = dtype_bytes(t) * 8;
  const char *s = sfx(t, true), *u = sfx(t, false);
  uint64_t ad = d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d;
  Val q = new_reg(e, t);
  if ((ad & (ad - 1)) == 0) { /* +-2^k: round toward zero with a bias */
    int k = 0;
    while (((uint64_t)1 << k) < ad) k++;
    Val bias = new_reg(e, t), tb = new_reg(e, t);
    if (k == 1) {
      emit(e, "shr%s %s, %s, %d;", u, bias.s, a.s, bits - 1);
    } else {
      emit(e, "shr%s %s, %s, %d;", s, bias.s, a.s, bits - 1);
      emit(e, "shr%s %s, %s, %d;", u, bias.s, bias.s, bits - k);
    }
    emit(e, "add%s %s, %s, %s;", s, tb.s, a.s, bias.s);
    *biased = tb;
    emit(e, "shr%s %s, %s, %d;", s, q.s, tb.s, k);
    if (d < 0) emit(e, "neg%s %s, %s;", s, q.s, q.s);
    return q;
  }
  biased->s[0] = 0;
  DivMagic mg = magic_signed(bits, d);
  int64_t m = as_signed(bits, mg.m);
  emit(e, "mul.hi%s %s, %s, %" PRId64 ";", s, q.s, a.s, m);
  if (d > 0 && m < 0) emit(e, "add%s %s, %s, %s;", s, q.s, q.s, a.s);
  if (d < 0 && m > 0) emit(e, "sub%s %s, %s, %s;", s, q.s, q.s, a.s);
  if (mg.shift) emit(e, "shr%s %s, %s, %d;", s, q.s, q.s, mg.shift);
  Val sign = new_reg(e, t); /* + 1 for a negative dividend (d > 0) or quotient (d < 0) */
  emit(e, "shr%s %s, %s, %d;", u, sign.s, d > 0 ? a.s : q.s, bits - 1);
  emit(e, "add%s %s, %s, %s;", s, q.s, q.s, sign.s);
  return q;
}

/* The value of an integer immediate operand. */
static int64_t imm_value(Val v) {
  if (v.type == DT_UINT64 || v.type == DT_UINT32) return (int64_t)strtoull(v.s, NULL, 0);
  return strtoll(v.s, NULL, 0);
}

static bool is_pow2(uint64_t x) { return x && (x & (x - 1)) == 0; }

/* a op d, d a non-zero constant; a a register of type t. */
static Val divmod_const(Emitter *e, IrOp op, Val a, int64_t d, DType t, const IrRange *ra) {
  int bits = dtype_bytes(t) * 8;
  bool sgn = dtype_is_signed(t);
  const char *s = sfx(t, sgn), *b = ptx_btype(t);
  uint64_t mask = bits == 64 ? ~(uint64_t)0 : 0xFFFFFFFFu;
  uint64_t ud = (uint64_t)d & mask;
  /* the dividend's known maximum, when it is known to be non-negative */
  bool nonneg = !sgn || (ra && ra->lo >= 0);
  uint64_t amax = !sgn ? mask : (uint64_t)(mask >> 1);
  if (ra && ra->lo >= 0 && (uint64_t)ra->hi < amax) amax = (uint64_t)ra->hi;
  Val r = new_reg(e, t);
  if (sgn && d == -1) {
    if (op == OP_MOD) {
      emit(e, "mov%s %s, 0;", b, r.s);
      return r;
    }
    emit(e, "neg%s %s, %s;", s, r.s, a.s);
    return r;
  }
  if (nonneg && (!sgn || d > 0)) {
    if (op == OP_MOD && is_pow2(ud)) {
      emit(e, "and%s %s, %s, %" PRIu64 ";", b, r.s, a.s, ud - 1);
      return r;
    }
    if (op == OP_MOD && ud > amax) return a; /* a < d */
    Val q = udiv_const(e, a, ud, t, amax);
    if (op == OP_DIV) return q;
    Val p = new_reg(e, t);
    emit(e, "mul.lo%s %s, %s, %" PRIu64 ";", sfx(t, false), p.s, q.s, ud);
    emit(e, "sub%s %s, %s, %s;", sfx(t, false), r.s, a.s, p.s);
    return r;
  }
  if (!sgn) return a; /* unreachable: unsigned is non-negative */
  if (d == 1) {
    if (op == OP_DIV) return a;
    emit(e, "mov%s %s, 0;", b, r.s);
    return r;
  }
  Val biased;
  Val q = sdiv_const(e, a, d, t, &biased);
  if (op == OP_DIV) return q;
  if (biased.s[0]) { /* a - (biased & -2^k) */
    uint64_t ad = d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d;
    Val p = new_reg(e, t);
    emit(e, "and%s %s, %s, %" PRId64 ";", b, p.s, biased.s, as_signed(bits, (0 - ad) & mask));
    emit(e, "sub%s %s, %s, %s;", s, r.s, a.s, p.s);
    return r;
  }
  Val p = new_reg(e, t);
  emit(e, "mul.lo%s %s, %s, %" PRId64 ";", s, p.s, q.s, d);
  emit(e, "sub%s %s, %s, %s;", s, r.s, a.s, p.s);
  return r;
}

Val emit_int_divmod(Emitter *e, IrOp op, Val a, Val b, DType t, const IrRange *ra,
                    const IrRange *rb) {
  bool sgn = dtype_is_signed(t);
  if (b.s[0] != '%') {
    int64_t d = imm_value(b);
    if (dtype_bytes(t) == 4) d = sgn ? (int32_t)(uint32_t)d : (int64_t)(uint32_t)d;
    if (d != 0) return divmod_const(e, op, val_to_reg(e, a), d, t, ra);
  }
  a = val_to_reg(e, a);
  /* both operands non-negative: the unsigned instruction, without the
   * signs' fix-ups */
  bool uns = !sgn || (ra && rb && ra->lo >= 0 && rb->lo >= 0);
  Val r = new_reg(e, t);
  emit(e, "%s%s %s, %s, %s;", op == OP_DIV ? "div" : "rem", sfx(t, !uns), r.s, a.s, b.s);
  return r;
}

/* ------------------------------------------------- launch-invariant divisors
 *
 * A division whose divisor d is fixed for a launch (ir/magic.c) reads the
 * hidden .u64 parameter the runtime fills in (runtime/prepare.c,
 * rt_divisor_param): m = ceil(2^(32+l) / d) - 2^32 in its low 32 bits and d
 * in its high 32, where l = ceil(log2 d), 1 <= d <= 2^31 - 1 (the runtime
 * refuses a launch with any other d). At the kernel's start (hoisted, once)
 * l = 32 - clz(d - 1); then, for 0 <= a <= 2^31,
 *
 *   a / d = (a + mul.hi.u32(a, m)) >> l
 *
 * Proof. Let M = 2^32 + m = ceil(2^(32+l) / d) and e = M d - 2^(32+l), so
 * 0 <= e <= d - 1 < 2^l (as d <= 2^l). m fits in 32 bits: M >= 2^32 as
 * d <= 2^l; for l = 0 (d = 1) M = 2^32; for l >= 1, d >= 2^(l-1) + 1 gives
 * 2^(32+l) / d <= 2^33 / (1 + 2^(1-l)) <= 2^33 - 2 for l <= 31, so
 * M < 2^33. Write a = q d + r, 0 <= r < d. Then
 *   a M / 2^(32+l) = a / d + a e / (d 2^(32+l)) = q + (r + a e / 2^(32+l)) / d
 * and a e / 2^(32+l) < 2^32 2^l / 2^(32+l) = 1 (a <= 2^31 < 2^32), so
 * r + a e / 2^(32+l) < r + 1 <= d: floor(a M / 2^(32+l)) = q. Since
 * floor(x / 2^l) = floor(floor(x) / 2^l),
 *   q = floor((a + a m / 2^32) / 2^l) = (a + floor(a m / 2^32)) >> l
 *     = (a + mul.hi(a, m)) >> l,
 * and the sum does not wrap in 32 bits: mul.hi(a, m) < a (m < 2^32), so
 * a + mul.hi(a, m) <= 2^31 + 2^31 - 1. (d = 1: m = 0, l = 0, q = a; d = 2^k:
 * m = 0, q = a >> k.) runtime/test_divisor checks it against division for
 * d = 1..2^16, the powers of two, 2^31 - 1 and random d, at the dividends'
 * boundaries and random ones.
 *
 * A dividend that ir_expr_range proves non-negative (an int32 is then at
 * most 2^31 - 1) uses that alone; any other int32 a divides |a| (abs.s32
 * leaves INT_MIN as 2^31, unsigned, within the bound) and gives the
 * quotient a's sign, which is C's truncating division for d > 0. The
 * remainder is a - q d (C's: the dividend's sign) with the d of the
 * parameter, so that q and r agree with each other. */

/* The multiplier, the divisor and the shift of divisor dv, computed once
 * at the kernel's start from its hidden parameter. */
static void divisor_regs(Emitter *e, const IrDivisor *dv, Val *m, Val *d, Val *l) {
  char key[96];
  Val v[3];
  snprintf(key, sizeof key, "divisor %s", dv->param->name);
  if (!hoist_find(e, key, v, 3)) {
    FILE *saved = hoist_begin(e);
    v[0] = new_reg(e, DT_UINT32);
    v[1] = new_reg(e, DT_INT32);
    v[2] = new_reg(e, DT_UINT32);
    Val t = new_reg(e, DT_UINT32);
    emit(e, "mov.b64 {%s, %s}, %s;", v[0].s, v[1].s, e->param_regs[dv->param->index]);
    emit(e, "sub.u32 %s, %s, 1;", t.s, v[1].s);
    emit(e, "clz.b32 %s, %s;", t.s, t.s);
    emit(e, "sub.u32 %s, 32, %s;", v[2].s, t.s);
    hoist_end(e, saved, key, v, 3);
  }
  *m = v[0], *d = v[1], *l = v[2];
}

Val emit_divisor_divmod(Emitter *e, const IrExpr *x, const IrDivisor *dv) {
  Val a = val_to_reg(e, val_convert(e, emit_expr(e, x->a), DT_INT32));
  IrRange ra;
  bool nonneg = ir_expr_range(x->a, e->ranges, &ra) && ra.lo >= 0;
  Val m, d, l;
  divisor_regs(e, dv, &m, &d, &l);
  Val ua = a, t = new_reg(e, DT_UINT32), q = new_reg(e, DT_INT32);
  if (!nonneg) {
    ua = new_reg(e, DT_UINT32);
    emit(e, "abs.s32 %s, %s;", ua.s, a.s);
  }
  emit(e, "mul.hi.u32 %s, %s, %s;", t.s, ua.s, m.s);
  emit(e, "add.u32 %s, %s, %s;", t.s, t.s, ua.s);
  emit(e, "shr.u32 %s, %s, %s;", q.s, t.s, l.s);
  if (!nonneg) { /* a < 0: -q, as (q ^ -1) + 1 */
    Val sign = new_reg(e, DT_INT32);
    emit(e, "shr.s32 %s, %s, 31;", sign.s, a.s);
    emit(e, "xor.b32 %s, %s, %s;", q.s, q.s, sign.s);
    emit(e, "sub.s32 %s, %s, %s;", q.s, q.s, sign.s);
  }
  if (x->op == OP_DIV) return q;
  Val p = new_reg(e, DT_INT32), r = new_reg(e, DT_INT32);
  emit(e, "mul.lo.s32 %s, %s, %s;", p.s, q.s, d.s);
  emit(e, "sub.s32 %s, %s, %s;", r.s, a.s, p.s);
  return r;
}
