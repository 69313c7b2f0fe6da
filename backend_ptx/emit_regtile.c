/* emit_regtile.c: register tensors: fill, cast, elementwise arithmetic, column
 * slices of WGMMA fragments, and their loads/stores from global and shared
 * memory.
 *
 * Storage: slot i of a thread's part of tensor t is register %t<id>_<i>,
 * except 16-bit floats in the WGMMA fragment layout, which are packed in
 * pairs (the two adjacent columns of a fragment row) as %t<id>_<i/2>: the
 * lower column in the low half, as cvt.rn.f16x2.f32 and memory order want.
 *
 * Layouts (ir.h):
 *   LAYOUT_SPATIAL    element i (row-major flat) lives in thread
 *                     i % nthreads, slot i / nthreads.
 *   LAYOUT_WGMMA_ACC  m64nN fragments of one warp group (PTX ISA "wgmma
 *                     register fragment D"): thread t, warp w = t / 32,
 *                     lane l; slot 4j + 2h + e of fragment r (N/2 slots
 *                     each) holds row 64r + 16w + l/4 + 8h, column
 *                     8j + 2(l%4) + e.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend_ptx/emit_int.h"

static bool is_packed(const IrTensor *t) {
  return t->layout == LAYOUT_WGMMA_ACC && dtype_bytes(t->dtype) == 2;
}

/* Slots per thread. */
int64_t tensor_nslots(const IrTensor *t) {
  if (t->layout == LAYOUT_SPATIAL) return t->reg->nslots;
  return (ir_tensor_numel(t) + 127) / 128;
}

static int64_t nslots(const IrTensor *t) { return tensor_nslots(t); }

static bool has_regs(const IrTensor *t) {
  return t->space == MS_REGISTER &&
         (t->layout == LAYOUT_WGMMA_ACC || (t->layout == LAYOUT_SPATIAL && t->reg));
}

/* The register of slot i (for packed tensors: of the pair holding it). */
Val tensor_slot_reg(const IrTensor *t, int64_t i) {
  Val v;
  v.type = is_packed(t) ? DT_UINT32 : t->dtype;
  snprintf(v.s, sizeof v.s, "%%t%d_%" PRId64, t->id, is_packed(t) ? i / 2 : i);
  return v;
}

void tensor_reg_decls(Emitter *e, FILE *out) {
  for (int i = 0; i < e->k->ntensors; i++) {
    const IrTensor *t = e->k->tensors[i];
    if (!has_regs(t)) continue;
    int64_t n = is_packed(t) ? nslots(t) / 2 : nslots(t);
    fprintf(out, "\t.reg %s %%t%d_<%" PRId64 ">; // %s\n",
            is_packed(t) ? ".b32" : ptx_btype(t->dtype), t->id, n, t->name);
  }
}

static Val slot_reg(const IrTensor *t, int64_t i) { return tensor_slot_reg(t, i); }

bool tensor_check_regs(Emitter *e, const IrTensor *t) {
  if (!t || !has_regs(t)) {
    unsupported(e, "register tensor '%s' without a spatial or WGMMA layout", t ? t->name : "?");
    return false;
  }
  if (t->layout == LAYOUT_WGMMA_ACC && (t->rank != 2 || t->shape[0] % 64 || t->shape[1] % 8)) {
    unsupported(e, "a WGMMA fragment tensor that is not [64r, 8j]");
    return false;
  }
  return true;
}

static bool same_layout(Emitter *e, const IrTensor *a, const IrTensor *b) {
  bool same = a->layout == b->layout && a->rank == b->rank && a->nthreads == b->nthreads &&
              (a->layout != LAYOUT_SPATIAL || ir_reglayout_equal(a->reg, b->reg));
  for (int i = 0; same && i < a->rank; i++) same = a->shape[i] == b->shape[i];
  if (!same)
    unsupported(e, "register tensors '%s' and '%s' of different shapes or layouts", a->name,
                b->name);
  return same;
}

/* ------------------------------------------------------------ fill, cast, elementwise */

static void emit_fill(Emitter *e, const IrStmt *s) {
  const IrTensor *t = s->fill.dst;
  Val v = val_to_reg(e, val_convert(e, emit_expr(e, s->fill.value), t->dtype));
  for (int64_t i = 0; i < nslots(t); i += is_packed(t) ? 2 : 1) {
    Val r = slot_reg(t, i);
    if (is_packed(t))
      emit(e, "mov.b32 %s, {%s, %s};", r.s, v.s, v.s);
    else
      emit(e, "mov%s %s, %s;", ptx_btype(t->dtype), r.s, v.s);
  }
}

/* f32 -> packed 16-bit pairs: cvt.rn.f16x2.f32 d, hi, lo. */
static void cast_pack(Emitter *e, const IrTensor *d, const IrTensor *src) {
  const char *ty = d->dtype == DT_FLOAT16 ? "f16x2" : "bf16x2";
  for (int64_t i = 0; i < nslots(d); i += 2)
    emit(e, "cvt.rn.%s.f32 %s, %s, %s;", ty, slot_reg(d, i).s, slot_reg(src, i + 1).s,
         slot_reg(src, i).s);
}

/* packed 16-bit pairs -> another dtype, one element at a time. */
static void cast_unpack(Emitter *e, const IrTensor *d, const IrTensor *src) {
  for (int64_t i = 0; i < nslots(d); i += 2) {
    Val lo = new_reg(e, src->dtype), hi = new_reg(e, src->dtype);
    emit(e, "mov.b32 {%s, %s}, %s;", lo.s, hi.s, slot_reg(src, i).s);
    Val a = val_convert(e, lo, d->dtype), b = val_convert(e, hi, d->dtype);
    emit(e, "mov%s %s, %s;", ptx_btype(d->dtype), slot_reg(d, i).s, a.s);
    emit(e, "mov%s %s, %s;", ptx_btype(d->dtype), slot_reg(d, i + 1).s, b.s);
  }
}

/* packed pairs -> packed pairs of the same dtype (an f16 accumulator cast
 * to f16): a register copy. */
static void cast_copy_packed(Emitter *e, const IrTensor *d, const IrTensor *src) {
  for (int64_t i = 0; i < nslots(d); i += 2)
    emit(e, "mov.b32 %s, %s;", slot_reg(d, i).s, slot_reg(src, i).s);
}

/* To fp8 from another dtype: slot pairs through f32 and one
 * cvt.rn.satfinite.{e4m3,e5m2}x2.f32 each. */
static void cast_to_fp8(Emitter *e, const IrTensor *d, const IrTensor *src) {
  int64_t n = nslots(d), i = 0;
  for (; i + 1 < n; i += 2) {
    Val lo = val_to_reg(e, val_convert(e, slot_reg(src, i), DT_FLOAT32));
    Val hi = val_to_reg(e, val_convert(e, slot_reg(src, i + 1), DT_FLOAT32));
    Val w = emit_f32x2_to_fp8x2(e, lo, hi, d->dtype);
    emit(e, "and.b32 %s, %s, 255;", slot_reg(d, i).s, w.s);
    emit(e, "shr.u32 %s, %s, 8;", slot_reg(d, i + 1).s, w.s);
  }
  if (i < n)
    emit(e, "mov.b32 %s, %s;", slot_reg(d, i).s, val_convert(e, slot_reg(src, i), d->dtype).s);
}

/* From fp8 to another dtype: slot pairs through one cvt.rn.f16x2.{e4m3,
 * e5m2}x2 each, then from f16. */
static void cast_from_fp8(Emitter *e, const IrTensor *d, const IrTensor *src) {
  int64_t n = nslots(d), i = 0;
  for (; i + 1 < n; i += 2) {
    Val p = emit_fp8x2_to_f16x2(e, slot_reg(src, i), slot_reg(src, i + 1), src->dtype);
    Val lo = new_reg(e, DT_FLOAT16), hi = new_reg(e, DT_FLOAT16);
    emit(e, "mov.b32 {%s, %s}, %s;", lo.s, hi.s, p.s);
    Val a = val_convert(e, lo, d->dtype), b = val_convert(e, hi, d->dtype);
    emit(e, "mov%s %s, %s;", ptx_btype(d->dtype), slot_reg(d, i).s, a.s);
    emit(e, "mov%s %s, %s;", ptx_btype(d->dtype), slot_reg(d, i + 1).s, b.s);
  }
  if (i < n)
    emit(e, "mov%s %s, %s;", ptx_btype(d->dtype), slot_reg(d, i).s,
         val_convert(e, slot_reg(src, i), d->dtype).s);
}

/* Slots lo and lo + 1 of d from the two halves of the 32-bit pair p. */
static void unpack_pair(Emitter *e, const IrTensor *d, int64_t lo, Val p) {
  emit(e, "mov.b32 {%s, %s}, %s;", slot_reg(d, lo).s, slot_reg(d, lo + 1).s, p.s);
}

/* The end of every magic-halves cast: p's halves are base + v, and one
 * sub (op: f16x2 or rn.bf16x2) of base in both leaves each value exactly
 * (a small integer), into slots lo and lo + 1 of d. */
static void sub_base_pair(Emitter *e, Val p, Val base, const char *op, const IrTensor *d,
                          int64_t lo) {
  emit(e, "sub.%s %s, %s, %s;", op, p.s, p.s, base.s);
  unpack_pair(e, d, lo, p);
}

/* p's halves masked to their low bits under mask, those bits flipped
 * where base has them set (a signed integer's sign bit) and base put above
 * them ("b ? a ^ c : c" bit by bit, b the mask), then sub_base_pair. */
static void masked_base_pair(Emitter *e, Val p, Val mask, Val base, const char *op,
                             const IrTensor *d, int64_t lo) {
  emit(e, "lop3.b32 %s, %s, %s, %s, 0x6A;", p.s, p.s, mask.s, base.s);
  sub_base_pair(e, p, base, op, d, lo);
}

/* Whether small integers of type `src` become `dst` through magic halves
 * (cast_small_ints): a float16 holds every integer of [1024, 2048) with
 * the integer's low bits as its mantissa, a bfloat16 every integer of
 * [128, 256); an integer of b bits, offset by 2^(b-1) when signed, must
 * fit the 1024 (128) values above that base. */
static bool small_int_cast(DType src, DType dst) {
  if (src == DT_BOOL || dtype_is_float(src) || dtype_is_fp8(src) || dtype_exp_bits(src))
    return false; /* a bool is a predicate register */
  int bits = dtype_bits(src);
  if (dst == DT_FLOAT16) return bits <= 8;
  return dst == DT_BFLOAT16 && bits <= 7;
}

/* Small integers to float16/bfloat16 two at a time, with no cvt (I2F, a
 * quarter-rate instruction, was the bulk of a weight-dequantising loop):
 * v = x + 2^(b-1) (x + 0 unsigned) is an integer in [0, 1024), and the
 * half whose bits are 0x6400 + v is 1024 + v exactly (bfloat16: 0x4300 +
 * v is 128 + v, v < 128). A prmt packs the pair's low 16 bits; one lop3
 * keeps each half's low b bits, flips their top one when signed (x ^
 * 2^(b-1) is x + 2^(b-1) in b bits) and puts the base above them ("b ? a ^
 * c : c", b the mask); one sub of 0x6400 + 2^(b-1), the lop3's c itself,
 * in both halves leaves x: the difference is a small integer, so no
 * rounding. Returns the slots converted (an odd last one is left to
 * emit_cast's plain conversion). */
static int64_t cast_small_ints(Emitter *e, const IrTensor *d, const IrTensor *src) {
  bool bf = d->dtype == DT_BFLOAT16;
  int bits = dtype_bits(src->dtype);
  uint32_t flip = dtype_is_signed(src->dtype) ? 1u << (bits - 1) : 0;
  uint32_t base = (bf ? 0x4300u : 0x6400u) | flip, mask = (1u << bits) - 1;
  int64_t n = nslots(d), i = 0;
  Val magic = new_reg(e, DT_UINT32), low = new_reg(e, DT_UINT32); /* both halves */
  emit(e, "mov.b32 %s, 0x%08X;", magic.s, base << 16 | base);
  emit(e, "mov.b32 %s, 0x%08X;", low.s, mask << 16 | mask);
  for (; i + 1 < n; i += 2) {
    Val p = new_reg(e, DT_UINT32);
    emit(e, "prmt.b32 %s, %s, %s, 0x5410;", p.s, slot_reg(src, i).s, slot_reg(src, i + 1).s);
    masked_base_pair(e, p, low, magic, bf ? "rn.bf16x2" : "f16x2", d, i);
  }
  return i;
}

/* The register tensor of bytes (uint8 or int8) whose view, the statement
 * emitted just before, made src; else NULL. */
static const IrTensor *viewed_bytes(const Emitter *e, const IrTensor *src) {
  const IrStmt *v = e->prev;
  if (!v || v->kind != S_VIEW || v->cast.dst != src) return NULL;
  const IrTensor *x = v->cast.src;
  return (x->dtype == DT_UINT8 || x->dtype == DT_INT8) && x->reg ? x : NULL;
}

/* The view (emitted just before) that made src from bytes, when src is
 * 4-bit integers or floats cast to float16: then slots 2i and 2i + 1 of
 * src are the low and high nibbles of the view's source slot i
 * (spread_view). */
static const IrTensor *nibble_source(const Emitter *e, const IrTensor *d, const IrTensor *src) {
  if (d->dtype != DT_FLOAT16 || !dtype_is_subbyte(src->dtype) || dtype_bits(src->dtype) != 4)
    return NULL;
  const IrTensor *x = viewed_bytes(e, src);
  return x && nslots(src) == 2 * nslots(x) ? x : NULL;
}

/* Byte slot i of `bytes` as a word and a byte index in it, when the
 * statement two before the cast loaded it (load, view, cast) as part of a
 * 32-bit word (Emitter.words). */
static bool loaded_word(const Emitter *e, const IrTensor *bytes, int64_t i, Val *word, int *byte) {
  const struct ByteWords *bw = &e->words;
  if (!bw->stmt || bw->stmt != e->prev2 || bw->t != bytes || bw->byte[i] < 0) return false;
  *byte = bw->byte[i];
  *word = bw->word[i];
  return true;
}

/* Byte slot i of `bytes` as a word and a byte index in it: the word it was
 * loaded in (loaded_word), else its own register (byte 0). */
static Val byte_word(const Emitter *e, const IrTensor *bytes, int64_t i, int *byte) {
  Val w;
  if (loaded_word(e, bytes, i, &w, byte)) return w;
  *byte = 0;
  return slot_reg(bytes, i);
}

/* 4-bit integers viewed from bytes, to float16: both nibbles of a byte in
 * one pair (weight dequantisation's inner loop), with no shift. One prmt
 * puts byte k of its word in the low byte of both halves. One lop3 keeps
 * the low nibble (bits 0-3) in the low half and the high nibble, where it
 * is (bits 4-7), in the high half, flipping each nibble's top bit when
 * signed (x ^ 8 = x + 8 mod 16); its function is "b ? a ^ c : c" bit by
 * bit, b the mask, c the halves' bases outside it and the flips inside.
 * The low half's base 0x6400 is 1024 with a mantissa unit of 1, the high
 * half's 0x5400 is 64 with a unit of 1/16, so bits 4-7 count whole
 * units: the halves are 1024 + v and 64 + v' (v = x + 8 signed, x
 * unsigned). One sub.f16x2 of {1024, 64} (+ 8 signed) leaves both values
 * exactly (small integers); the constant is the lop3's c itself. */
static void cast_nibble_pairs(Emitter *e, const IrTensor *d, const IrTensor *src,
                              const IrTensor *bytes) {
  Val base = new_reg(e, DT_UINT32), mask = new_reg(e, DT_UINT32);
  emit(e, "mov.b32 %s, %s;", base.s, src->dtype == DT_INT4B ? "0x54806408" : "0x54006400");
  emit(e, "mov.b32 %s, 0x00F0000F;", mask.s);
  for (int64_t i = 0; i < nslots(bytes); i++) {
    int k;
    Val w = byte_word(e, bytes, i, &k), p = new_reg(e, DT_UINT32);
    emit(e, "prmt.b32 %s, %s, 0, 0x%X%X%X%X;", p.s, w.s, k, k, k, k);
    masked_base_pair(e, p, mask, base, "f16x2", d, 2 * i);
  }
}

/* A sub-byte float type's conversion to float16 two at a time (subfloat
 * pairs): the element's exponent and mantissa go under float16's, its
 * sign to bit 15, which reads the value times 2^(bias - 15) for normal and
 * subnormal values alike, and one multiply by 2^(15 - bias) restores it
 * exactly (as from_subbyte's scalar conversion does). */
typedef struct SubFloat {
  int bits, exp_bits, man_bits;
  Val em_mask; /* where the exponent and mantissa land, in both halves */
  Val scale;   /* 2^(15 - bias) in both halves; empty when the bias is 15 */
} SubFloat;

static SubFloat subfloat_consts(Emitter *e, DType t) {
  SubFloat f = {.bits = dtype_bits(t), .exp_bits = dtype_exp_bits(t)};
  f.man_bits = f.bits - 1 - f.exp_bits;
  uint32_t em = (uint32_t)((1 << (f.bits - 1)) - 1) << (10 - f.man_bits);
  f.em_mask = new_reg(e, DT_UINT32);
  emit(e, "mov.b32 %s, 0x%08X;", f.em_mask.s, em << 16 | em);
  int bias = (1 << (f.exp_bits - 1)) - 1;
  if (bias != 15) {
    uint32_t k = (uint32_t)(30 - bias) << 10;
    f.scale = new_reg(e, DT_UINT32);
    emit(e, "mov.b32 %s, 0x%08X;", f.scale.s, k << 16 | k);
  }
  return f;
}

/* The pair in word p (each half: an element's bits at 0 .. bits-1, any
 * bits above them) to float16 in slots lo and hi of d. A shift left puts
 * each sign at bit 15 of its half; a shift right of that puts exponent
 * and mantissa under float16's; one lop3 keeps those and the signs. Bits
 * above an element land outside both masks, so they need no clearing. */
static void subfloat_pair(Emitter *e, const SubFloat *f, Val p, const IrTensor *d, int64_t lo) {
  Val t = new_reg(e, DT_UINT32), a = new_reg(e, DT_UINT32), sign = new_reg(e, DT_UINT32),
      r = new_reg(e, DT_UINT32);
  emit(e, "shl.b32 %s, %s, %d;", t.s, p.s, 16 - f->bits);
  emit(e, "shr.b32 %s, %s, %d;", a.s, t.s, 5 - f->exp_bits);
  emit(e, "and.b32 %s, %s, 0x80008000;", sign.s, t.s);
  emit(e, "lop3.b32 %s, %s, %s, %s, 0xEA;", r.s, a.s, f->em_mask.s, sign.s); /* a & b | c */
  if (f->scale.s[0]) emit(e, "mul.rn.f16x2 %s, %s, %s;", r.s, r.s, f->scale.s);
  unpack_pair(e, d, lo, r);
}

/* The float16 bits of code c of a sub-byte type held zero-extended (an
 * unsigned integer or a float), or -1 when the value is not a normal
 * float16 or zero. */
static int code_f16_bits(DType t, int c) {
  int n = dtype_bits(t), eb = dtype_exp_bits(t), sign = 0;
  double v = c;
  if (eb) { /* Tilus's sub-byte floats: bias 2^(e-1) - 1, subnormals at exponent 0 */
    int mb = n - 1 - eb, bias = (1 << (eb - 1)) - 1, ex = (c >> mb) & ((1 << eb) - 1);
    int man = c & ((1 << mb) - 1);
    sign = (c >> (n - 1)) & 1;
    v = ex ? ldexp(1.0 + ldexp(man, -mb), ex - bias) : ldexp(man, 1 - bias - mb);
  }
  if (v == 0) return sign << 15;
  int e;
  double f = frexp(v, &e);          /* v = f 2^e, f in [0.5, 1) */
  double man = ldexp(f, 11) - 1024; /* 10 fraction bits */
  if (e - 1 < -14 || e - 1 > 15 || man != floor(man)) return -1;
  return sign << 15 | (e - 1 + 15) << 10 | (int)man;
}

/* Whether every code of the 3-bit (or narrower) type t, zero-extended in
 * its register, is a float16 whose low byte is 0, code 0 being +0: then the
 * high bytes of the eight values, in two registers, are a prmt table
 * (cast_table_pairs). */
static bool byte_table_cast(DType t, DType dst, uint32_t table[2]) {
  if (dst != DT_FLOAT16 || !dtype_is_subbyte(t) || dtype_bits(t) > 3 || dtype_is_signed(t))
    return false;
  table[0] = table[1] = 0;
  for (int c = 0; c < 8; c++) {
    int bits = c < 1 << dtype_bits(t) ? code_f16_bits(t, c) : 0;
    if (bits < 0 || (bits & 0xFF) || (c == 0 && bits)) return false;
    table[c / 4] |= (uint32_t)(bits >> 8) << (8 * (c % 4));
  }
  return true;
}

/* 3-bit codes to float16 two at a time by one prmt of a table: with codes
 * c0 and c1 as the selector's nibbles 1 and 3 and 0 (code 0, a zero byte)
 * as nibbles 0 and 2, the prmt of the table's two registers is the pair's
 * two float16s (their low bytes 0). A shift and a multiply-add make the
 * selector: three instructions a pair where subfloat_pair takes five and
 * the packing prmt. The codes must be zero-extended in their registers
 * (ir.h; sub-byte tensors are only viewed, loaded and converted): a bit
 * above a code would shift into the next nibble, and a nibble's bit 3 is
 * prmt's sign mode. Returns the slots converted. */
static int64_t cast_table_pairs(Emitter *e, const IrTensor *d, const IrTensor *src,
                                const uint32_t table[2]) {
  Val t0 = new_reg(e, DT_UINT32), t1 = new_reg(e, DT_UINT32);
  emit(e, "mov.b32 %s, 0x%08X;", t0.s, table[0]);
  emit(e, "mov.b32 %s, 0x%08X;", t1.s, table[1]);
  int64_t i = 0;
  for (; i + 1 < nslots(d); i += 2) {
    Val sel = new_reg(e, DT_UINT32), p = new_reg(e, DT_UINT32);
    emit(e, "shl.b32 %s, %s, 4;", sel.s, slot_reg(src, i).s);
    emit(e, "mad.lo.u32 %s, %s, 4096, %s;", sel.s, slot_reg(src, i + 1).s, sel.s);
    emit(e, "prmt.b32 %s, %s, %s, %s;", p.s, t0.s, t1.s, sel.s);
    unpack_pair(e, d, i, p);
  }
  return i;
}

/* Whether src's sub-byte floats go to float16 in pairs (d float16; fp8 has
 * its own cvt). */
static bool subfloat_cast(DType src, DType dst) {
  return dst == DT_FLOAT16 && dtype_is_subbyte(src) && dtype_exp_bits(src) > 0 &&
         dtype_exp_bits(src) <= 5;
}

/* Sub-byte floats to float16, two slots at a time (their registers hold
 * the bits zero-extended): one prmt packs a pair. Returns the slots
 * converted (an odd last one is left to emit_cast's plain conversion). */
static int64_t cast_subfloat_pairs(Emitter *e, const IrTensor *d, const IrTensor *src) {
  SubFloat f = subfloat_consts(e, src->dtype);
  int64_t i = 0;
  for (; i + 1 < nslots(d); i += 2) {
    Val p = new_reg(e, DT_UINT32);
    emit(e, "prmt.b32 %s, %s, %s, 0x5410;", p.s, slot_reg(src, i).s, slot_reg(src, i + 1).s);
    subfloat_pair(e, &f, p, d, i);
  }
  return i;
}

/* 4-bit floats viewed from bytes, to float16: both nibbles of a byte in
 * one pair, as cast_nibble_pairs puts them (the word shifted right by 4
 * beside it, once per word), then subfloat_pair. */
static void cast_nibble_float_pairs(Emitter *e, const IrTensor *d, const IrTensor *src,
                                    const IrTensor *bytes) {
  SubFloat f = subfloat_consts(e, src->dtype);
  Val shifted = {.s = ""}, last = {.s = ""};
  for (int64_t i = 0; i < nslots(bytes); i++) {
    int k;
    Val w = byte_word(e, bytes, i, &k), p = new_reg(e, DT_UINT32);
    if (strcmp(last.s, w.s)) { /* once per word */
      shifted = new_reg(e, DT_UINT32);
      emit(e, "shr.u32 %s, %s, 4;", shifted.s, w.s);
      last = w;
    }
    emit(e, "prmt.b32 %s, %s, %s, 0x%X%X%X%X;", p.s, w.s, shifted.s, 4 + k, 4 + k, k, k);
    subfloat_pair(e, &f, p, d, 2 * i);
  }
}

/* The bytes (emitted two statements before) that src views one to one,
 * when src is 8-bit integers cast to float16 and each pair of its slots
 * (2i, 2i + 1) lies in one loaded 32-bit word: those words are then
 * converted whole (cast_byte_pairs). */
static const IrTensor *byte_pair_source(const Emitter *e, const IrTensor *d, const IrTensor *src) {
  if (d->dtype != DT_FLOAT16 || (src->dtype != DT_INT8 && src->dtype != DT_UINT8)) return NULL;
  const IrTensor *x = viewed_bytes(e, src);
  if (!x || nslots(x) != nslots(src) || nslots(x) % 2) return NULL;
  for (int64_t i = 0; i < nslots(x); i += 2) {
    Val w0, w1;
    int k0 = 0, k1 = 0;
    if (!loaded_word(e, x, i, &w0, &k0) || !loaded_word(e, x, i + 1, &w1, &k1) ||
        strcmp(w0.s, w1.s))
      return NULL;
  }
  return x;
}

/* 8-bit integers viewed from loaded bytes, to float16, two bytes of one
 * word at a time: x ^ 0x80 is x + 128 for a signed byte (one xor per
 * word), one prmt puts the two bytes under 0x64 high bytes, making the
 * halves 1024 + u (u < 256, exact in a float16), and one sub.f16x2 of
 * 1024 (+ 128 signed) leaves both values: two instructions per pair
 * (and half an xor when signed) where the generic path (cast_small_ints)
 * sign-extends each byte, adds its bias and packs the pair. */
static void cast_byte_pairs(Emitter *e, const IrTensor *d, const IrTensor *src,
                            const IrTensor *bytes) {
  bool is_signed = src->dtype == DT_INT8;
  Val high = new_reg(e, DT_UINT32), base = new_reg(e, DT_UINT32), last = {.s = ""},
      flipped = {.s = ""};
  emit(e, "mov.b32 %s, 0x64646464;", high.s);
  emit(e, "mov.b32 %s, %s;", base.s, is_signed ? "0x64806480" : "0x64006400");
  for (int64_t i = 0; i < nslots(bytes); i += 2) {
    Val w, unused;
    int k0 = 0, k1 = 0;
    loaded_word(e, bytes, i, &w, &k0);
    loaded_word(e, bytes, i + 1, &unused, &k1);
    if (strcmp(last.s, w.s)) { /* once per word */
      last = w;
      flipped = w;
      if (is_signed) {
        flipped = new_reg(e, DT_UINT32);
        emit(e, "xor.b32 %s, %s, 0x80808080;", flipped.s, w.s);
      }
    }
    Val p = new_reg(e, DT_UINT32);
    emit(e, "prmt.b32 %s, %s, %s, 0x4%X4%X;", p.s, flipped.s, high.s, k1, k0);
    sub_base_pair(e, p, base, "f16x2", d, i);
  }
}

static void emit_cast(Emitter *e, const IrStmt *s) {
  const IrTensor *d = s->cast.dst, *src = s->cast.src;
  if (!tensor_check_regs(e, src) || !same_layout(e, d, src)) return;
  if (!is_packed(src) && !is_packed(d) && d->dtype != src->dtype) {
    if (dtype_is_fp8(d->dtype) && !dtype_is_fp8(src->dtype) && src->dtype != DT_BOOL) {
      cast_to_fp8(e, d, src);
      return;
    }
    if (dtype_is_fp8(src->dtype) && !dtype_is_fp8(d->dtype) && d->dtype != DT_BOOL) {
      cast_from_fp8(e, d, src);
      return;
    }
  }
  if (is_packed(d) && src->dtype == DT_FLOAT32) {
    cast_pack(e, d, src);
    return;
  }
  if (is_packed(d) && is_packed(src) && d->dtype == src->dtype) {
    cast_copy_packed(e, d, src);
    return;
  }
  if (is_packed(d) || is_packed(src)) {
    if (is_packed(src) && !is_packed(d)) {
      cast_unpack(e, d, src);
      return;
    }
    unsupported(e, "cast between %s and %s WGMMA fragments", dtype_name(src->dtype),
                dtype_name(d->dtype));
    return;
  }
  const IrTensor *bytes = nibble_source(e, d, src);
  if (bytes) {
    if (dtype_exp_bits(src->dtype))
      cast_nibble_float_pairs(e, d, src, bytes);
    else
      cast_nibble_pairs(e, d, src, bytes);
    return;
  }
  if ((bytes = byte_pair_source(e, d, src))) {
    cast_byte_pairs(e, d, src, bytes);
    return;
  }
  uint32_t table[2];
  int64_t done = byte_table_cast(src->dtype, d->dtype, table) ? cast_table_pairs(e, d, src, table)
                 : small_int_cast(src->dtype, d->dtype)       ? cast_small_ints(e, d, src)
                 : subfloat_cast(src->dtype, d->dtype)        ? cast_subfloat_pairs(e, d, src)
                                                              : 0;
  for (int64_t i = done; i < nslots(d); i++) {
    Val v = val_convert(e, slot_reg(src, i), d->dtype);
    emit(e, "mov%s %s, %s;", ptx_btype(d->dtype), slot_reg(d, i).s, v.s);
  }
}

/* + - * and max/min on 16-bit WGMMA fragments, a packed pair of one
 * dtype per register: one f16x2 / bf16x2 instruction per register (the
 * pair rounded as two separate operations would round it). */
static void emit_packed_elemwise(Emitter *e, const IrStmt *s) {
  const IrTensor *d = s->elemwise.dst, *a = s->elemwise.a, *b = s->elemwise.b;
  static const struct {
    IrOp op;
    const char *f16, *bf16;
  } ops[] = {{OP_ADD, "add.rn.f16x2", "add.rn.bf16x2"},
             {OP_SUB, "sub.rn.f16x2", "sub.rn.bf16x2"},
             {OP_MUL, "mul.rn.f16x2", "mul.rn.bf16x2"},
             {OP_MAX, "max.f16x2", "max.bf16x2"},
             {OP_MIN, "min.f16x2", "min.bf16x2"}};
  const char *ins = NULL;
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (ops[i].op == s->elemwise.op) ins = d->dtype == DT_FLOAT16 ? ops[i].f16 : ops[i].bf16;
  if (!ins || d->dtype != a->dtype || (b && b->dtype != a->dtype) || !is_packed(d) ||
      !is_packed(a) || (b && !is_packed(b))) {
    unsupported(e, "'%s' on 16-bit WGMMA fragments (+ - * maximum minimum of one dtype are)",
                ir_op_name(s->elemwise.op));
    return;
  }
  Val pair = {.s = ""};
  if (!b) { /* the scalar in both halves */
    Val h = val_to_reg(e, val_convert(e, emit_expr(e, s->elemwise.scalar), d->dtype));
    pair = new_reg(e, DT_UINT32);
    emit(e, "mov.b32 %s, {%s, %s};", pair.s, h.s, h.s);
  }
  for (int64_t i = 0; i < nslots(d); i += 2) {
    Val x = slot_reg(a, i), y = b ? slot_reg(b, i) : pair;
    if (s->elemwise.scalar_first) { /* 1.0 - t */
      Val t = x;
      x = y, y = t;
    }
    emit(e, "%s %s, %s, %s;", ins, slot_reg(d, i).s, x.s, y.s);
  }
}

static void emit_elemwise(Emitter *e, const IrStmt *s) {
  const IrTensor *d = s->elemwise.dst, *a = s->elemwise.a, *b = s->elemwise.b;
  if (!tensor_check_regs(e, a) || !same_layout(e, d, a) ||
      (b && (!tensor_check_regs(e, b) || !same_layout(e, d, b))))
    return;
  if (is_packed(d) || is_packed(a) || (b && is_packed(b))) {
    emit_packed_elemwise(e, s);
    return;
  }
  Val scalar = {.s = ""};
  if (!b) scalar = val_to_reg(e, val_convert(e, emit_expr(e, s->elemwise.scalar), a->dtype));
  for (int64_t i = 0; i < nslots(d); i++) {
    Val x = slot_reg(a, i), y = b ? slot_reg(b, i) : scalar;
    Val r = s->elemwise.scalar_first ? emit_binop(e, s->elemwise.op, y, x, a->dtype)
                                     : emit_binop(e, s->elemwise.op, x, y, a->dtype);
    r = val_convert(e, r, d->dtype);
    emit(e, "mov%s %s, %s;", ptx_btype(d->dtype), slot_reg(d, i).s, r.s);
  }
}

/* ------------------------------------------------------------ global memory */

GView global_view(Emitter *e, const IrTensor *g) {
  GView v = {.rank = g->rank, .bytes = dtype_bytes(g->dtype)};
  Val p = val_to_reg(e, val_convert(e, emit_expr(e, g->gptr), DT_UINT64));
  v.base = new_reg(e, DT_UINT64);
  emit(e, "cvta.to.global.u64 %s, %s;", v.base.s, p.s);
  for (int i = 0; i < g->rank; i++)
    v.dims[i] = val_to_reg(e, val_convert(e, emit_expr(e, g->gshape[i]), DT_INT32));
  return v;
}

/* Whether offset is blockIdx.d for a dimension d whose grid extent is
 * size: the runtime launches the entry's grid, so blockIdx.d < grid[d]
 * (a decode kernel's `i_t = blockIdx.x` under `blocks = (T, ...)` indexes
 * a [.., T, ..] view with no test). */
static bool below_grid(const Emitter *e, const IrExpr *size, const IrExpr *offset) {
  static const SpecialReg ctaid[3] = {SR_CTAID_X, SR_CTAID_Y, SR_CTAID_Z};
  if (!offset || offset->kind != X_SPECIAL) return false;
  for (int d = 0; d < 3; d++)
    if (offset->sreg == ctaid[d]) return e->k->grid[d] && ir_expr_same(e->k->grid[d], size);
  return false;
}

bool emit_tile_inside(const Emitter *e, const IrExpr *size, const IrExpr *offset, int64_t extent) {
  int64_t n;
  IrRange r = {0, 0};
  if (extent == 1 && below_grid(e, size, offset)) return true;
  if (!ir_is_const(size, &n)) return false;
  if (offset && !ir_expr_range(offset, e->ranges, &r)) return false;
  return r.lo >= 0 && r.hi <= n - extent;
}

bool emit_tile_uniform(const Emitter *e, const IrExpr *size, const IrExpr *offset, int64_t extent) {
  int64_t g = ir_gcd(ir_expr_multiple(size, e->multiples),
                     offset ? ir_expr_multiple(offset, e->multiples) : 0);
  return g == 0 || g >= extent; /* 0: both are 0, multiples of everything */
}

/* x when offset is x // 2^s (or x >> s, x unsigned) of an integer x that
 * is never negative, *shift set to s; else NULL. */
static const IrExpr *scaled_down(const Emitter *e, const IrExpr *offset, int *shift) {
  int64_t c;
  IrRange r;
  if (!offset || offset->kind != X_BINARY || !ir_is_const(offset->b, &c)) return NULL;
  if (offset->op == OP_DIV) {
    if (c <= 0 || (c & (c - 1)) != 0) return NULL;
    *shift = __builtin_ctzll((unsigned long long)c);
  } else if (offset->op == OP_SHR) {
    if (c < 0 || c > 30) return NULL;
    *shift = (int)c;
  } else {
    return NULL;
  }
  if (offset->a->type != DT_INT32 && offset->a->type != DT_UINT32) return NULL;
  if (!ir_expr_range(offset->a, e->ranges, &r) || r.lo < 0) return NULL;
  return offset->a;
}

Val emit_offset_below(Emitter *e, const IrExpr *offset, Val off, const IrExpr *size, Val dim) {
  int64_t n;
  int s;
  const IrExpr *x = scaled_down(e, offset, &s);
  Val in = new_reg(e, DT_BOOL);
  if (!ir_is_const(size, &n) || n < 0) {
    emit(e, "setp.lt.u32 %s, %s, %s;", in.s, off.s, dim.s);
    return in;
  }
  if (x && n <= (INT64_C(0x7fffffff) >> s)) {
    off = val_to_reg(e, val_convert(e, emit_expr(e, x), DT_INT32));
    n <<= s;
  }
  emit(e, "setp.lt.u32 %s, %s, %" PRId64 ";", in.s, off.s, n);
  return in;
}

/* Whether every coordinate t's layout gives dimension d lies in [0,
 * shape): a WGMMA fragment's do; a spread layout's modes of d must
 * multiply to the shape (one of more than the shape would place threads
 * past the tile, which only the bounds test would stop). */
static bool layout_exact(const IrTensor *t, int d) {
  if (t->layout == LAYOUT_WGMMA_ACC) return true;
  const IrRegLayout *L = t->reg;
  if (t->layout != LAYOUT_SPATIAL || !L) return false;
  int64_t n = 1;
  for (int m = 0; m < L->nmodes; m++)
    if (L->mode_dim[m] == d) n *= L->mode_size[m];
  return n == L->shape[d];
}

void global_view_inside(const Emitter *e, GView *g, const IrStmt *s) {
  const IrGlobalCopyStmt *m = &s->gmem;
  for (int d = 0; d < g->rank; d++) {
    int td = ir_gcopy_tile_dim(m, d);
    if (td >= 0 && !layout_exact(m->reg, td)) {
      g->inside[d] = false;
      continue;
    }
    int64_t extent = td >= 0 ? m->reg->shape[td] : 1;
    g->inside[d] =
        emit_tile_inside(e, m->global->gshape[d], d < m->noffsets ? m->offsets[d] : NULL, extent);
  }
}

/* Address and in-bounds predicate of the element at coords (s32 registers,
 * outermost first). Negative coordinates are out of bounds too (unsigned
 * compare). */
Val global_elem(Emitter *e, const GView *g, const Val *coords, Val *inb) {
  Val lin = global_index(e, g, coords, inb);
  Val a = new_reg(e, DT_UINT64);
  emit(e, "mad.lo.s64 %s, %s, %d, %s;", a.s, lin.s, g->bytes, g->base.s);
  return a;
}

/* The row-major element index of coords in g, and *inb whether they are
 * inside g's dimensions. */
Val global_linear(Emitter *e, const GView *g, const Val *coords) {
  Val c0 = val_to_reg(e, val_convert(e, coords[0], DT_INT32));
  if (g->rank == 1) return val_convert(e, c0, DT_INT64);
  /* row * pitch + column in one widening multiply-add, then the rest */
  Val lin = new_reg(e, DT_INT64);
  emit(e, "mad.wide.s32 %s, %s, %s, %s;", lin.s, c0.s, g->dims[1].s,
       val_convert(e, coords[1], DT_INT64).s);
  for (int d = 2; d < g->rank; d++) {
    Val dim = val_convert(e, g->dims[d], DT_INT64), c = val_convert(e, coords[d], DT_INT64);
    Val next = new_reg(e, DT_INT64);
    emit(e, "mad.lo.s64 %s, %s, %s, %s;", next.s, lin.s, dim.s, c.s);
    lin = next;
  }
  return lin;
}

Val global_inside(Emitter *e, const GView *g, const Val *coords, int ndims) {
  Val in = {.s = ""};
  for (int d = 0; d < ndims; d++) {
    if (g->inside[d]) continue;
    Val p = new_reg(e, DT_BOOL);
    emit(e, "setp.lt.u32 %s, %s, %s;", p.s, coords[d].s, g->dims[d].s);
    if (in.s[0])
      emit(e, "and.pred %s, %s, %s;", in.s, in.s, p.s);
    else
      in = p;
  }
  return in;
}

Val global_index(Emitter *e, const GView *g, const Val *coords, Val *inb) {
  *inb = global_inside(e, g, coords, g->rank);
  if (!inb->s[0]) { /* inside in every dimension: a predicate that holds */
    *inb = new_reg(e, DT_BOOL);
    emit(e, "mov.pred %s, 1;", inb->s);
  }
  return global_linear(e, g, coords);
}

/* Where one thread's part of a WGMMA fragment store starts: its first
 * row and column in the global tensor, their address, and whether pairs of
 * adjacent columns are aligned for one 2-element store (the row length and
 * the column offset are even): a predicate, or always (even_pairs, known
 * from multiples.c, a specialised n_size: then a pair is stored whole or
 * not at all, its first column inside only when its second is, and no
 * element store is emitted beside it). */
typedef struct FragStore {
  GView g;
  Val row0, col0, base, aligned;
  bool even_pairs;
} FragStore;

static bool even_multiple(const Emitter *e, const IrExpr *x) {
  int64_t m = x ? ir_expr_multiple(x, e->multiples) : 0;
  return m % 2 == 0;
}

static FragStore frag_store_origin(Emitter *e, const IrStmt *s, const IrTensor *g) {
  FragStore f = {.g = global_view(e, g),
                 .even_pairs =
                     even_multiple(e, g->gshape[1]) && even_multiple(e, s->gmem.offsets[1])};
  global_view_inside(e, &f.g, s);
  Val tid = emit_group_tid(e);
  Val orow = val_to_reg(e, val_convert(e, emit_expr(e, s->gmem.offsets[0]), DT_INT32));
  Val ocol = val_to_reg(e, val_convert(e, emit_expr(e, s->gmem.offsets[1]), DT_INT32));
  Val warp = new_reg(e, DT_INT32), quad = new_reg(e, DT_INT32), lane4 = new_reg(e, DT_INT32);
  f.row0 = new_reg(e, DT_INT32), f.col0 = new_reg(e, DT_INT32);
  /* row0 = orow + 16 * (tid / 32) + (tid % 32) / 4; col0 = ocol + 2 * (tid % 4) */
  emit(e, "shr.u32 %s, %s, 5;", warp.s, tid.s);
  emit(e, "bfe.u32 %s, %s, 2, 3;", quad.s, tid.s);
  emit(e, "mad.lo.s32 %s, %s, 16, %s;", f.row0.s, warp.s, quad.s);
  emit(e, "add.s32 %s, %s, %s;", f.row0.s, f.row0.s, orow.s);
  emit(e, "and.b32 %s, %s, 3;", lane4.s, tid.s);
  emit(e, "mad.lo.s32 %s, %s, 2, %s;", f.col0.s, lane4.s, ocol.s);
  Val coords[2] = {f.row0, f.col0}, unused;
  f.base = global_elem(e, &f.g, coords, &unused);
  if (f.even_pairs) return f;
  Val odd = new_reg(e, DT_INT32);
  f.aligned = new_reg(e, DT_BOOL);
  emit(e, "or.b32 %s, %s, %s;", odd.s, f.g.dims[1].s, ocol.s);
  emit(e, "and.b32 %s, %s, 1;", odd.s, odd.s);
  emit(e, "setp.eq.s32 %s, %s, 0;", f.aligned.s, odd.s);
  return f;
}

/* One row a thread stores of a fragment tensor: its address and whether it
 * is inside the global tensor. */
typedef struct FragRow {
  Val addr, in;
} FragRow;

/* The address of each row a thread holds of a fragment tensor and whether
 * it is inside the global tensor: rows row0 + 64 (i / 2) + 8 (i % 2). */
static void frag_rows(Emitter *e, const FragStore *f, const IrTensor *t, FragRow *rows,
                      int64_t nrows) {
  for (int64_t i = 0; i < nrows; i++) {
    int64_t rr = 64 * (i / 2) + 8 * (i % 2);
    Val row = new_reg(e, DT_INT32), step = new_reg(e, DT_INT64);
    rows[i].in = new_reg(e, DT_BOOL), rows[i].addr = new_reg(e, DT_UINT64);
    emit(e, "add.s32 %s, %s, %" PRId64 ";", row.s, f->row0.s, rr);
    if (f->g.inside[0])
      emit(e, "mov.pred %s, 1;", rows[i].in.s);
    else
      emit(e, "setp.lt.s32 %s, %s, %s;", rows[i].in.s, row.s, f->g.dims[0].s);
    emit(e, "mul.wide.s32 %s, %s, %" PRId64 ";", step.s, f->g.dims[1].s,
         rr * dtype_bytes(t->dtype));
    emit(e, "add.s64 %s, %s, %s;", rows[i].addr.s, f->base.s, step.s);
  }
}

/* The columns col0 + col (+1) of one column pair: each in bounds (p0, p1),
 * and both in and aligned for one 2-element store (full). Computed once per
 * pair and shared by every row, so that no per-column value has to stay
 * live from one row to the next (ptxas keeps such common subexpressions in
 * registers, which spilled next to a 64-register f16 accumulator). */
typedef struct FragCols {
  Val p0, p1, full;
  bool whole; /* the pair is stored whole or not at all (aligned pairs) */
} FragCols;

static FragCols frag_cols(Emitter *e, const FragStore *f, int64_t col, bool whole) {
  FragCols c = {.full = new_reg(e, DT_BOOL), .whole = whole};
  if (c.whole) { /* full: the second column inside (then the first is); no p0, p1 */
    if (f->g.inside[1]) {
      emit(e, "mov.pred %s, 1;", c.full.s);
      return c;
    }
    Val lim = new_reg(e, DT_INT32);
    emit(e, "sub.s32 %s, %s, %" PRId64 ";", lim.s, f->g.dims[1].s, col + 1);
    emit(e, "setp.lt.s32 %s, %s, %s;", c.full.s, f->col0.s, lim.s);
    return c;
  }
  c.p0 = new_reg(e, DT_BOOL), c.p1 = new_reg(e, DT_BOOL);
  if (f->g.inside[1]) {
    emit(e, "mov.pred %s, 1;", c.p0.s);
    emit(e, "mov.pred %s, 1;", c.p1.s);
    emit(e, "mov.pred %s, %s;", c.full.s, f->aligned.s);
    return c;
  }
  Val lim0 = new_reg(e, DT_INT32), lim1 = new_reg(e, DT_INT32);
  /* column col0 + col (+1) < N  <=>  col0 < N - col (- 1) */
  emit(e, "sub.s32 %s, %s, %" PRId64 ";", lim0.s, f->g.dims[1].s, col);
  emit(e, "sub.s32 %s, %s, %" PRId64 ";", lim1.s, f->g.dims[1].s, col + 1);
  emit(e, "setp.lt.s32 %s, %s, %s;", c.p0.s, f->col0.s, lim0.s);
  emit(e, "setp.lt.s32 %s, %s, %s;", c.p1.s, f->col0.s, lim1.s);
  emit(e, "and.pred %s, %s, %s;", c.full.s, c.p1.s, f->aligned.s);
  return c;
}

/* The element accesses of a pair that is not accessed whole (full): each
 * element's, in the row with its column in (p0, p1). */
static void element_preds(Emitter *e, const FragCols *c, const FragRow *row, Val full, Val *p0,
                          Val *p1) {
  *p0 = new_reg(e, DT_BOOL), *p1 = new_reg(e, DT_BOOL);
  emit(e, "and.pred %s, %s, %s;", p0->s, c->p0.s, row->in.s);
  emit(e, "and.pred %s, %s, %s;", p1->s, c->p1.s, row->in.s);
  emit(e, "and.pred %s, %s, !%s;", p0->s, p0->s, full.s);
  emit(e, "and.pred %s, %s, !%s;", p1->s, p1->s, full.s);
}

/* Stores the pair of slots (slot, slot + 1) = columns col0 + col (+1) of
 * row `row`: one 2-element store (f32) or one 4-byte store of the packed
 * pair (f16/bf16) when both columns are in and aligned, else predicated
 * element stores. */
static void store_pair(Emitter *e, const IrTensor *t, int64_t slot, const FragRow *row,
                       const FragCols *c, int64_t col) {
  int64_t cb = col * dtype_bytes(t->dtype);
  Val full = new_reg(e, DT_BOOL), p0, p1;
  emit(e, "and.pred %s, %s, %s;", full.s, c->full.s, row->in.s);
  Val x = slot_reg(t, slot), y = slot_reg(t, slot + 1);
  if (is_packed(t))
    emit(e, "@%s st.global.b32 [%s+%" PRId64 "], %s;", full.s, row->addr.s, cb, x.s);
  else
    emit(e, "@%s st.global.v2.f32 [%s+%" PRId64 "], {%s, %s};", full.s, row->addr.s, cb, x.s, y.s);
  if (c->whole) return;
  if (is_packed(t)) {
    x = new_reg(e, DT_FLOAT16), y = new_reg(e, DT_FLOAT16);
    emit(e, "mov.b32 {%s, %s}, %s;", x.s, y.s, slot_reg(t, slot).s);
  }
  const char *bt = is_packed(t) ? ".b16" : ".f32";
  element_preds(e, c, row, full, &p0, &p1);
  emit(e, "@%s st.global%s [%s+%" PRId64 "], %s;", p0.s, bt, row->addr.s, cb, x.s);
  emit(e, "@%s st.global%s [%s+%" PRId64 "], %s;", p1.s, bt, row->addr.s,
       cb + dtype_bytes(t->dtype), y.s);
}

/* Loads the pair of slots (slot, slot + 1) = columns col0 + col (+1) of
 * row `row`, the mirror of store_pair: out-of-bounds elements read 0. */
static void load_pair(Emitter *e, const IrTensor *t, int64_t slot, const FragRow *row,
                      const FragCols *c, int64_t col) {
  int64_t cb = col * dtype_bytes(t->dtype), eb = dtype_bytes(t->dtype);
  Val full = new_reg(e, DT_BOOL), p0, p1;
  emit(e, "and.pred %s, %s, %s;", full.s, c->full.s, row->in.s);
  if (c->whole) { /* the pair, or zeros */
    Val x = slot_reg(t, slot), y = slot_reg(t, slot + 1);
    emit(e, "mov.b32 %s, 0;", x.s);
    if (is_packed(t)) {
      emit(e, "@%s ld.global.b32 %s, [%s+%" PRId64 "];", full.s, x.s, row->addr.s, cb);
      return;
    }
    emit(e, "mov.b32 %s, 0;", y.s);
    emit(e, "@%s ld.global.v2.f32 {%s, %s}, [%s+%" PRId64 "];", full.s, x.s, y.s, row->addr.s, cb);
    return;
  }
  element_preds(e, c, row, full, &p0, &p1);
  if (is_packed(t)) {
    Val x = new_reg(e, DT_FLOAT16), y = new_reg(e, DT_FLOAT16), pair = slot_reg(t, slot);
    emit(e, "mov.b16 %s, 0;", x.s);
    emit(e, "mov.b16 %s, 0;", y.s);
    emit(e, "@%s ld.global.b16 %s, [%s+%" PRId64 "];", p0.s, x.s, row->addr.s, cb);
    emit(e, "@%s ld.global.b16 %s, [%s+%" PRId64 "];", p1.s, y.s, row->addr.s, cb + eb);
    emit(e, "mov.b32 %s, {%s, %s};", pair.s, x.s, y.s);
    emit(e, "@%s ld.global.b32 %s, [%s+%" PRId64 "];", full.s, pair.s, row->addr.s, cb);
    return;
  }
  Val x = slot_reg(t, slot), y = slot_reg(t, slot + 1);
  emit(e, "mov.b32 %s, 0;", x.s);
  emit(e, "mov.b32 %s, 0;", y.s);
  emit(e, "@%s ld.global.v2.f32 {%s, %s}, [%s+%" PRId64 "];", full.s, x.s, y.s, row->addr.s, cb);
  emit(e, "@%s ld.global.f32 %s, [%s+%" PRId64 "];", p0.s, x.s, row->addr.s, cb);
  emit(e, "@%s ld.global.f32 %s, [%s+%" PRId64 "];", p1.s, y.s, row->addr.s, cb + eb);
}

/* ------------------------------------------------ private workspaces */

/* A global_tensor() workspace is the kernel's own: nothing outside sees its
 * layout. One that only WGMMA fragments of one shape [M, N] are stored to
 * and loaded from (store_global, load_global), N its whole row and the row
 * offset a multiple of M, is laid out in the fragment's order instead of
 * row-major: the block of M rows at row r holds, at vector (i / 4) * 128 +
 * t, thread t's registers i .. i + 3. A thread then moves its fragment in
 * coalesced 16-byte accesses (row-major, a warp's 4-byte pairs fall in 8
 * rows: a split wave's owner read a partial sum at a sixth of a K step's
 * rate), and reads back exactly what the same thread of another block's
 * group wrote, which is all a partial sum needs. */
typedef struct WsScan {
  bool *bad;      /* by tensor id: some use the fragment order cannot serve */
  int64_t *m, *n; /* by tensor id: the fragment shape, 0 before the first */
  bool *escaped;  /* by parameter index: named by an expression */
  const int64_t *multiples;
} WsScan;

static bool is_workspace(const IrTensor *t) {
  return t && t->space == MS_GLOBAL && t->gptr && t->gptr->kind == X_PARAM &&
         t->gptr->param->workspace;
}

static IrExpr *note_params(void *ctx, IrExpr *x) {
  ir_expr_mark_params(x, ((WsScan *)ctx)->escaped);
  return x;
}

/* Whether a fragment store or load at these offsets fits the order. */
static bool fits_fragment_order(const WsScan *w, const IrStmt *s) {
  const IrTensor *g = s->gmem.global, *t = s->gmem.reg;
  int64_t c0, n;
  if (t->layout != LAYOUT_WGMMA_ACC || g->dtype != t->dtype || g->rank != 2 || t->rank != 2 ||
      s->gmem.ndims != 0 || s->gmem.noffsets != 2 || (t->dtype != DT_FLOAT32 && !is_packed(t)))
    return false;
  if (!ir_is_const(s->gmem.offsets[1], &c0) || c0 != 0 || !ir_is_const(g->gshape[1], &n) ||
      n != t->shape[1] || (n * dtype_bytes(t->dtype)) % 16 || nslots(t) % 8)
    return false;
  int64_t mult = ir_expr_multiple(s->gmem.offsets[0], w->multiples);
  return mult != 0 && mult % t->shape[0] == 0;
}

static void scan_ws(WsScan *w, const IrBlock *b) {
  for (int i = 0; i < b->len; i++) {
    IrStmt *s = b->items[i];
    scan_ws(w, &s->body);
    scan_ws(w, &s->orelse);
    ir_stmt_map_exprs(s, note_params, w);
    bool stores;
    const IrTensor *g = ir_stmt_global(s, &stores);
    if (!is_workspace(g)) continue;
    if (s->kind != S_LOAD_GLOBAL && s->kind != S_STORE_GLOBAL) { /* TMA, cp.async */
      w->bad[g->id] = true;
      continue;
    }
    const IrTensor *t = s->gmem.reg;
    if (!fits_fragment_order(w, s) ||
        (w->m[g->id] && (w->m[g->id] != t->shape[0] || w->n[g->id] != t->shape[1])))
      w->bad[g->id] = true;
    w->m[g->id] = t->shape[0], w->n[g->id] = t->shape[1];
  }
}

void regtile_plan(Emitter *e) {
  const IrKernel *k = e->k;
  size_t nt = (size_t)k->ntensors + 1, np = (size_t)k->nparams + 1;
  Arena *ar = e->m->ar;
  WsScan w = {.bad = arena_alloc(ar, nt), /* zeroed */
              .m = arena_alloc(ar, sizeof(int64_t) * nt),
              .n = arena_alloc(ar, sizeof(int64_t) * nt),
              .escaped = arena_alloc(ar, np),
              .multiples = e->multiples};
  scan_ws(&w, &k->body);
  e->native_ws = arena_alloc(ar, sizeof(bool) * nt);
  for (int i = 0; i < k->ntensors; i++) {
    const IrTensor *g = k->tensors[i];
    int64_t rows = is_workspace(g) ? ir_expr_multiple(g->gshape[0], NULL) : 1;
    e->native_ws[i] = is_workspace(g) && w.m[i] && !w.bad[i] && !w.escaped[g->gptr->param->index] &&
                      rows % w.m[i] == 0;
  }
}

/* A fragment store or load of a workspace in the fragment order: the
 * block's first row row0 (a multiple of M) starts at the row-major
 * address of that row, so the block is found without a division; a block
 * outside the workspace is not stored (and loads as 0), as the row-major
 * form drops rows outside. */
static void wgmma_global_native(Emitter *e, const IrStmt *s, bool load) {
  const IrTensor *g = s->gmem.global, *t = s->gmem.reg;
  int64_t m = t->shape[0], rowbytes = t->shape[1] * dtype_bytes(t->dtype);
  GView v = global_view(e, g);
  Val row = val_to_reg(e, val_convert(e, emit_expr(e, s->gmem.offsets[0]), DT_INT32));
  Val in = new_reg(e, DT_BOOL), fits = new_reg(e, DT_BOOL), last = new_reg(e, DT_INT32);
  emit(e, "sub.s32 %s, %s, %" PRId64 ";", last.s, v.dims[0].s, m);
  emit(e, "setp.ge.s32 %s, %s, 0;", in.s, row.s);
  emit(e, "setp.le.s32 %s, %s, %s;", fits.s, row.s, last.s);
  emit(e, "and.pred %s, %s, %s;", in.s, in.s, fits.s);
  Val tid = emit_group_tid(e), at = new_reg(e, DT_INT64), lane = new_reg(e, DT_UINT64);
  Val addr = new_reg(e, DT_UINT64);
  emit(e, "mul.wide.s32 %s, %s, %" PRId64 ";", at.s, row.s, rowbytes);
  emit(e, "add.s64 %s, %s, %s;", addr.s, v.base.s, at.s);
  emit(e, "mul.wide.u32 %s, %s, 16;", lane.s, tid.s);
  emit(e, "add.s64 %s, %s, %s;", addr.s, addr.s, lane.s);
  bool packed = is_packed(t);
  int64_t nregs = packed ? nslots(t) / 2 : nslots(t);
  const char *vt = packed ? ".b32" : ".f32";
  for (int64_t i = 0; i < nregs; i += 4) {
    Val r[4];
    for (int j = 0; j < 4; j++) r[j] = slot_reg(t, packed ? 2 * (i + j) : i + j);
    int64_t off = i / 4 * 128 * 16;
    if (load) {
      for (int j = 0; j < 4; j++) emit(e, "mov.b32 %s, 0;", r[j].s);
      emit(e, "@%s ld.global.v4%s {%s, %s, %s, %s}, [%s+%" PRId64 "];", in.s, vt, r[0].s, r[1].s,
           r[2].s, r[3].s, addr.s, off);
    } else {
      emit(e, "@%s st.global.v4%s [%s+%" PRId64 "], {%s, %s, %s, %s};", in.s, vt, addr.s, off,
           r[0].s, r[1].s, r[2].s, r[3].s);
    }
  }
}

/* Every pair of slots of a fragment, column pair by column pair, every
 * row's store or load; whole: the pairs are aligned (known, or tested
 * before), so each is accessed whole or not at all. */
static void frag_pairs(Emitter *e, const FragStore *f, const IrTensor *t, const FragRow *rows,
                       int64_t nrows, bool load, bool whole) {
  int64_t n = t->shape[1];
  for (int64_t j = 0; j < n / 8; j++) {
    FragCols c = frag_cols(e, f, 8 * j, whole);
    for (int64_t i = 0; i < nrows; i++) {
      int64_t slot = (i / 2) * (n / 2) + 4 * j + 2 * (i % 2);
      if (load)
        load_pair(e, t, slot, &rows[i], &c, 8 * j);
      else
        store_pair(e, t, slot, &rows[i], &c, 8 * j);
    }
  }
}

/* Stores a WGMMA fragment tensor to a rank-2 global tensor at offsets
 * (row, col), or loads one from it (to add into an accumulator: a split
 * wave's owner summing the partial tiles of other blocks), bounds-checked
 * against the global shape (out-of-bounds elements dropped, or read as 0):
 * thread t holds, in fragment r, rows row0 + 64r + 8h (h = 0, 1) and column
 * pairs col0 + 8j (see the layout at the top of this file). The rows'
 * addresses come first; then, column pair by column pair, every row's
 * store or load, in one copy when the pairs are known aligned, else in
 * two behind a branch on the alignment. */
static void wgmma_global(Emitter *e, const IrStmt *s, bool load) {
  const IrTensor *g = s->gmem.global, *t = s->gmem.reg;
  const char *verb = load ? "loading" : "storing";
  if (g->rank != 2 || s->gmem.noffsets != 2 || g->dtype != t->dtype ||
      (t->dtype != DT_FLOAT32 && !is_packed(t))) {
    unsupported(e, "%s a %s WGMMA fragment %s a rank-%d %s global tensor", verb,
                dtype_name(t->dtype), load ? "from" : "to", g->rank, dtype_name(g->dtype));
    return;
  }
  if (e->group.single || e->group.size != 128) {
    unsupported(e, "%s a WGMMA fragment outside its 128-thread warp group", verb);
    return;
  }
  if (e->native_ws && e->native_ws[g->id]) {
    wgmma_global_native(e, s, load);
    return;
  }
  FragStore f = frag_store_origin(e, s, g);
  int64_t m = t->shape[0], nrows = m / 64 * 2;
  FragRow *rows = calloc((size_t)nrows, sizeof *rows);
  if (!rows) {
    unsupported(e, "a WGMMA fragment %s of %" PRId64 " rows (out of memory)",
                load ? "load" : "store", m);
    return;
  }
  frag_rows(e, &f, t, rows, nrows);
  if (f.even_pairs) {
    frag_pairs(e, &f, t, rows, nrows, load, true);
  } else {
    /* one alignment for the whole fragment: a branch to the copy of the
     * accesses that has only pairs, rather than every pair's alternative
     * element accesses issued under predicates */
    int odd = new_label(e), done = new_label(e);
    emit(e, "@!%s bra $L%d;", f.aligned.s, odd);
    frag_pairs(e, &f, t, rows, nrows, load, true);
    emit(e, "bra $L%d;", done);
    emit_label(e, odd);
    frag_pairs(e, &f, t, rows, nrows, load, false);
    emit_label(e, done);
  }
  free(rows);
}

/* ------------------------------------------------------------ shared memory */

/* The swizzle of a shared tensor: TMA and WGMMA's (rows of the swizzle's
 * bytes: the 16-byte chunk index, bits 4-6, XORs the row of the atom, bits
 * 7-9, fewer for narrower swizzles); the 128-byte one over longer rows of a
 * power of two bytes (only ldmatrix tiles have them, ir/layout.c) XORs the
 * row's low 3 bits, so that 8 consecutive rows at one column still land in
 * 8 distinct chunks of a 128-byte bank line. */
Swizzle tensor_swizzle(const IrTensor *t) {
  if (!t || t->layout != LAYOUT_SWIZZLED || t->swizzle_bytes < 32) return (Swizzle){0, 0};
  Swizzle z = {t->swizzle_bytes == 128 ? 3 : t->swizzle_bytes == 64 ? 2 : 1, 7};
  int64_t row = t->rank > 0 ? t->shape[t->rank - 1] * dtype_bytes(t->dtype) : 0;
  if (t->swizzle_bytes == 128 && row > 128 && (row & (row - 1)) == 0 && row <= (1 << 20))
    while (((int64_t)1 << z.shift) < row) z.shift++;
  return z;
}

int64_t swizzle_period(Swizzle z) { return z.bits ? (int64_t)1 << (z.shift + z.bits) : 1; }

bool swizzle_commutes(Swizzle z) { return swizzle_period(z) <= SMEM_BASE_ALIGN; }

/* Byte offset of an element inside its shared tensor after the swizzle. */
Val smem_swizzle(Emitter *e, Val off, Swizzle z) {
  if (!z.bits) return off;
  Val x = new_reg(e, DT_UINT32), r = new_reg(e, DT_UINT32);
  emit(e, "bfe.u32 %s, %s, %d, %d;", x.s, off.s, z.shift, z.bits);
  emit(e, "shl.b32 %s, %s, 4;", x.s, x.s);
  emit(e, "xor.b32 %s, %s, %s;", r.s, off.s, x.s);
  return r;
}

/* A 16-bit fragment through stmatrix (sm_90): four 8x8 matrices per
 * instruction, a quarter of the pair stores. Warp w, fragment r, column
 * octets 2p and 2p + 1: matrix q holds rows 64r + 16w + 8(q % 2) + [0, 8)
 * of octet 2p + q / 2, and thread t's register of it is the pair it holds
 * there (row t / 4, columns 2(t % 4) + [0, 2): stmatrix's fragment, as it
 * is ldmatrix's); lane l gives the address of row l % 8 of matrix l / 8.
 * A matrix row is one 16-byte chunk, which no swizzle splits. */
static void wgmma_stmatrix(Emitter *e, const IrTensor *t, const IrTensor *sh, Val view, Val tid,
                           Swizzle sw) {
  int64_t m = t->shape[0], n = t->shape[1], pitch = 2 * n;
  Val warp = new_reg(e, DT_UINT32), q = new_reg(e, DT_UINT32), row = new_reg(e, DT_UINT32);
  Val half = new_reg(e, DT_UINT32), origin = new_reg(e, DT_UINT32);
  /* origin = view + (16w + 8(q % 2) + l % 8) * pitch + 16 (q / 2) */
  emit(e, "shr.u32 %s, %s, 5;", warp.s, tid.s);
  emit(e, "bfe.u32 %s, %s, 3, 2;", q.s, tid.s);
  emit(e, "and.b32 %s, %s, 7;", row.s, tid.s);
  emit(e, "mad.lo.u32 %s, %s, 16, %s;", row.s, warp.s, row.s);
  emit(e, "and.b32 %s, %s, 1;", half.s, q.s);
  emit(e, "mad.lo.u32 %s, %s, 8, %s;", row.s, half.s, row.s);
  emit(e, "shr.u32 %s, %s, 1;", half.s, q.s);
  emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %s;", origin.s, row.s, pitch, view.s);
  emit(e, "mad.lo.u32 %s, %s, 16, %s;", origin.s, half.s, origin.s);
  for (int64_t r = 0; r < m / 64; r++) {
    for (int64_t p = 0; p < n / 16; p++) {
      Val off = new_reg(e, DT_UINT32), addr = new_reg(e, DT_UINT32);
      emit(e, "add.u32 %s, %s, %" PRId64 ";", off.s, origin.s, 64 * r * pitch + 32 * p);
      Val phys = smem_swizzle(e, off, sw);
      emit(e, "add.u32 %s, %s, %%smem;", addr.s, phys.s);
      Val reg[4];
      for (int k = 0; k < 4; k++)
        reg[k] = slot_reg(t, r * (n / 2) + 4 * (2 * p + k / 2) + 2 * (k % 2));
      emit(e, "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%s+%" PRId64 "], {%s, %s, %s, %s};",
           addr.s, sh->smem_offset, reg[0].s, reg[1].s, reg[2].s, reg[3].s);
    }
  }
}

/* Stores a WGMMA fragment tensor [64r, N] into a shared view of the same
 * shape: thread t writes, for each fragment, row and column pair it holds
 * (see the layout at the top of this file), the pair as one 4-byte store
 * (16-bit types: the packed register) or one 8-byte store (f32), at the
 * element's address after the shared tensor's swizzle. Pairs never straddle
 * a 16-byte chunk, so the swizzle keeps them contiguous. With the 128-byte
 * swizzle a warp's 32 stores of one column octet hit 8 rows in 8 distinct
 * chunks: no bank conflict. */
static void wgmma_store_shared(Emitter *e, const IrStmt *s, const IrTensor *t) {
  const IrRef *ref = &s->smem.shared;
  const IrTensor *sh = ref->t;
  if (!sh || sh->space != MS_SHARED || ref->transposed || ir_ref_rank(ref) != 2 ||
      ir_ref_dim(ref, 0) != t->shape[0] || ir_ref_dim(ref, 1) != t->shape[1] ||
      sh->dtype != t->dtype || (t->dtype != DT_FLOAT32 && !is_packed(t))) {
    unsupported(e, "store_shared of a %s WGMMA fragment into this shared view",
                dtype_name(t->dtype));
    return;
  }
  if (e->group.single || e->group.size != 128) {
    unsupported(e, "storing a WGMMA fragment outside its 128-thread warp group");
    return;
  }
  int64_t m = t->shape[0], n = t->shape[1], bytes = dtype_bytes(t->dtype);
  Swizzle sw = tensor_swizzle(sh);
  IrExpr *voff = ir_ref_byte_offset(e->m->ar, ref);
  Val view = val_to_reg(e, val_convert(e, emit_expr(e, voff), DT_UINT32));
  Val tid = emit_group_tid(e);
  if (is_packed(t) && n % 16 == 0 && sh->smem_offset % 16 == 0 &&
      ir_expr_multiple(voff, e->multiples) % 16 == 0) {
    wgmma_stmatrix(e, t, sh, view, tid, sw);
    return;
  }
  /* origin = view + (16 * (tid / 32) + (tid % 32) / 4) * n * bytes
   *               + 2 * (tid % 4) * bytes: row0, col0 of this thread */
  Val warp = new_reg(e, DT_UINT32), quad = new_reg(e, DT_UINT32), lane4 = new_reg(e, DT_UINT32);
  Val row0 = new_reg(e, DT_UINT32), origin = new_reg(e, DT_UINT32);
  emit(e, "shr.u32 %s, %s, 5;", warp.s, tid.s);
  emit(e, "bfe.u32 %s, %s, 2, 3;", quad.s, tid.s);
  emit(e, "mad.lo.u32 %s, %s, 16, %s;", row0.s, warp.s, quad.s);
  emit(e, "and.b32 %s, %s, 3;", lane4.s, tid.s);
  emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %s;", origin.s, row0.s, n * bytes, view.s);
  emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %s;", origin.s, lane4.s, 2 * bytes, origin.s);
  for (int64_t i = 0; i < m / 64 * 2; i++) {
    int64_t rr = 64 * (i / 2) + 8 * (i % 2);
    for (int64_t j = 0; j < n / 8; j++) {
      Val off = new_reg(e, DT_UINT32), addr = new_reg(e, DT_UINT32);
      emit(e, "add.u32 %s, %s, %" PRId64 ";", off.s, origin.s, (rr * n + 8 * j) * bytes);
      Val phys = smem_swizzle(e, off, sw);
      emit(e, "add.u32 %s, %s, %%smem;", addr.s, phys.s);
      int64_t slot = (i / 2) * (n / 2) + 4 * j + 2 * (i % 2);
      if (is_packed(t))
        emit(e, "st.shared.b32 [%s+%" PRId64 "], %s;", addr.s, sh->smem_offset,
             slot_reg(t, slot).s);
      else
        emit(e, "st.shared.v2.f32 [%s+%" PRId64 "], {%s, %s};", addr.s, sh->smem_offset,
             slot_reg(t, slot).s, slot_reg(t, slot + 1).s);
    }
  }
}

/* ------------------------------------------------------------ slices */

/* dst = src[:, begin:end] of a fragment: column octet j of a fragment is
 * slots 4j .. 4j+3 (two packed registers for 16-bit types), so the slice
 * is a copy of whole registers, which ptxas folds into renaming. */
static void emit_slice(Emitter *e, const IrStmt *s) {
  const IrSliceStmt *c = &s->slice;
  const IrTensor *d = c->dst, *x = c->src;
  if (!tensor_check_regs(e, x)) return;
  if (x->layout != LAYOUT_WGMMA_ACC || d->layout != LAYOUT_WGMMA_ACC || d->dtype != x->dtype ||
      c->begin % 8 || c->end % 8 || d->shape[1] != c->end - c->begin ||
      d->shape[0] != x->shape[0]) {
    unsupported(e, "a column slice that is not whole octets of a WGMMA fragment");
    return;
  }
  int64_t nx = x->shape[1], nd = d->shape[1], step = is_packed(x) ? 2 : 1;
  for (int64_t r = 0; r < x->shape[0] / 64; r++)
    for (int64_t k = 0; k < nd / 2; k += step) {
      Val dst = slot_reg(d, r * (nd / 2) + k), src = slot_reg(x, r * (nx / 2) + c->begin / 2 + k);
      emit(e, "mov%s %s, %s;", is_packed(x) ? ".b32" : ptx_btype(x->dtype), dst.s, src.s);
    }
}

/* ------------------------------------------------------------ dispatch */

void emit_regtile_stmt(Emitter *e, const IrStmt *s) {
  const IrTensor *reg = s->kind == S_LOAD_GLOBAL || s->kind == S_STORE_GLOBAL   ? s->gmem.reg
                        : s->kind == S_LOAD_SHARED || s->kind == S_STORE_SHARED ? s->smem.reg
                        : s->kind == S_ELEMWISE                                 ? s->elemwise.dst
                        : s->kind == S_FILL && ir_expr_has_index(s->fill.value) ? s->fill.dst
                                                                                : NULL;
  if (reg && reg->layout == LAYOUT_SPATIAL && reg->reg) {
    emit_spread_stmt(e, s);
    return;
  }
  if ((s->kind == S_STORE_GLOBAL && (s->gmem.scatter || s->gmem.atomic)) ||
      (s->kind == S_STORE_SHARED && (s->smem.scatter || s->smem.atomic))) {
    unsupported(e, "a scatter or atomic of a WGMMA fragment tensor (convert it to a plain tile "
                   "first: .to() of it, or a store and load through shared memory)");
    return;
  }
  switch (s->kind) {
  case S_FILL:
    if (tensor_check_regs(e, s->fill.dst)) emit_fill(e, s);
    break;
  case S_CAST:
    if (tensor_check_regs(e, s->cast.dst)) emit_cast(e, s);
    break;
  case S_ELEMWISE:
    if (tensor_check_regs(e, s->elemwise.dst)) emit_elemwise(e, s);
    break;
  case S_UNARY:
  case S_REDUCE:
  case S_WHERE:
  case S_DOT:
  case S_TRANSPOSE:
  case S_RESHAPE:
  case S_CONVERT:
  case S_VIEW:
    emit_spread_stmt(e, s);
    break;
  case S_LOAD_GLOBAL:
    if (tensor_check_regs(e, s->gmem.reg)) wgmma_global(e, s, true);
    break;
  case S_STORE_GLOBAL:
    if (tensor_check_regs(e, s->gmem.reg)) wgmma_global(e, s, false);
    break;
  case S_LOAD_SHARED:
    if (tensor_check_regs(e, s->smem.reg))
      unsupported(e, "load_shared into a WGMMA fragment tensor");
    break;
  case S_STORE_SHARED:
    if (tensor_check_regs(e, s->smem.reg)) wgmma_store_shared(e, s, s->smem.reg);
    break;
  case S_SLICE:
    if (tensor_check_regs(e, s->slice.dst)) emit_slice(e, s);
    break;
  default:
    break;
  }
}
