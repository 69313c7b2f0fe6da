/* wgmma.c: warpgroup MMA (wgmma.mma_async) with shared-memory descriptors.
 *
 * acc[M, N] (f32, or f16 for f16 and fp8 inputs; LAYOUT_WGMMA_ACC) +=
 * A[M, K] @ B[K, N], where A is a K-major swizzled tile and B the transposed
 * view of a K-major swizzled [N, K] tile. Each 64-row fragment and each k16
 * step is one
 *   wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16
 *       {N/2 acc regs}, descA, descB, scale-d, 1, 1, 0, 0;
 * (.bf16.bf16 likewise) or, for an f16 accumulator,
 *   wgmma.mma_async.sync.aligned.m64nNk16.f16.f16.f16
 *       {N/4 f16x2 acc regs}, descA, descB, scale-d, 1, 1, 0, 0;
 * with scale-d true (the accumulator is initialised by its fill) and both
 * operands K-major (imm-trans 0). For fp8 operands (e4m3/e5m2, the two may
 * mix) each k32 step is one
 *   wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3
 *       {N/2 acc regs}, descA, descB, scale-d, 1, 1;
 * without transpose immediates: the ISA reads fp8 operands K-major only.
 * In the register form A is a float16/bfloat16 register tensor [M, K] in
 * the fragment layout: the A fragment of a k16 step is the accumulator
 * fragment of its 16 columns, so its four f16x2 registers are the packed
 * registers 4kk .. 4kk + 3 of the 64-row fragment (emit_regtile.c), and
 *   wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16
 *       {acc regs}, {a0, a1, a2, a3}, descB, scale-d, 1, 1, 0;
 * (no transpose immediate for A).
 * A k16 step of a 2-byte type and a k32 step of fp8 are both 32 bytes of
 * K, so everything below works in bytes: a K-major fp8 tile with a 128-byte
 * swizzle is the f16 one with 128 elements per row. The f16 fragment holds
 * the same elements per thread as the f32 one, two adjacent columns packed
 * per register (lower column in the low half): exactly emit_regtile.c's
 * packed storage, so register i/2 of the tensor is the instruction's
 * register i/2.
 *
 * Descriptor (PTX ISA, "Matrix Descriptor Format"), 64 bits:
 *   bits  0-13  start address >> 4
 *   bits 16-29  leading-dimension byte offset >> 4 (unused for swizzled
 *               K-major layouts; 1 as CUTLASS sets it)
 *   bits 32-45  stride-dimension byte offset >> 4: from one 8-row group
 *               to the next = 8 rows x swizzle width (1024 for 128B)
 *   bits 49-51  base offset (0: atoms are 1024-aligned)
 *   bits 62-63  swizzle mode: 1 = 128B, 2 = 64B, 3 = 32B
 * The row of a K-major tile is exactly one swizzle width (64 f16 or 128
 * fp8 for 128B); a k16 (fp8: k32) step is +32 bytes of start address inside it (the hardware
 * applies the swizzle), i.e. +2 in the descriptor's low field. The low
 * word is built from %sdesc, the base's, with 32-bit adds (desc_lo); the
 * high word is an immediate.
 */
#include <inttypes.h>

#include "backend_ptx/emit_int.h"

static int swizzle_mode(int bytes) {
  switch (bytes) {
  case 128:
    return 1;
  case 64:
    return 2;
  case 32:
    return 3;
  default:
    return -1;
  }
}

/* Checks that a view is a swizzled operand whose rows are exactly one
 * swizzle width: K-major (K contiguous, the usual [M, K] A and transposed
 * [N, K] B), or, for 16-bit types, MN-major (M or N contiguous: A the
 * transposed view of a [K, M] tile, B a [K, N] tile, the imm-trans bit set).
 * kdim is the view dimension that is K; *mn_major says which. */
static bool operand_ok(Emitter *e, const IrRef *r, int kdim, const char *what, bool *mn_major) {
  const IrTensor *t = r->t;
  if (!t || t->space != MS_SHARED || ir_ref_rank(r) != 2) {
    unsupported(e, "wgmma operand %s that is not a rank-2 shared tile", what);
    return false;
  }
  if (swizzle_mode(t->swizzle_bytes) < 0 || t->layout != LAYOUT_SWIZZLED) {
    unsupported(e, "wgmma operand %s without a 32/64/128-byte swizzle", what);
    return false;
  }
  *mn_major = (kdim == 1) == r->transposed;                 /* K is not the contiguous dim */
  int64_t row = ir_ref_dim(r, *mn_major ? 1 - kdim : kdim); /* the contiguous dim */
  bool wide = *mn_major && dtype_bytes(t->dtype) != 2;
  if (row * dtype_bytes(t->dtype) != t->swizzle_bytes || wide) {
    unsupported(e,
                "wgmma operand %s whose contiguous dimension (%s, %" PRId64 " elements) is not "
                "one swizzle width%s",
                what, *mn_major ? "M or N" : "K", row,
                wide ? ", or MN-major and not of a 16-bit type" : "");
    return false;
  }
  return true;
}

/* The descriptor's start-address step (>> 4) of k step kk (32 bytes of K)
 * and of 64-row fragment r: along a K-major row, or, MN-major, 16 rows of
 * one swizzle width each per k16 step (the fragment then is the one row
 * width: r is 0). */
static int64_t operand_step(const IrTensor *t, bool mn_major, int64_t r, int64_t kk) {
  if (mn_major) return 16 * kk * t->swizzle_bytes >> 4;
  return (64 * r * t->swizzle_bytes + 32 * kk) >> 4;
}

/* The low word of the descriptor of the view r: the start address >> 4 in
 * bits 0-13 and LBO = 1 (bit 16). Shared addresses are below 2^18 (228 KB
 * at most on sm_90), so the 14-bit field is the address >> 4 itself and the
 * word is %sdesc (the dynamic shared memory base's, from the prologue) plus
 * the tile's byte offset >> 4: one add, or none for a constant offset
 * folded into the immediate. */
static Val desc_lo(Emitter *e, const IrRef *r) {
  IrExpr *off = ir_ref_byte_offset(e->m->ar, r);
  int64_t c;
  Val lo = new_reg(e, DT_UINT32);
  if (ir_is_const(off, &c)) {
    emit(e, "add.u32 %s, %%sdesc, %" PRId64 ";", lo.s, (c + r->t->smem_offset) >> 4);
    return lo;
  }
  Val o = val_to_reg(e, val_convert(e, emit_expr(e, off), DT_UINT32));
  if (r->t->smem_offset) {
    Val t = new_reg(e, DT_UINT32);
    emit(e, "add.u32 %s, %s, %" PRId64 ";", t.s, o.s, r->t->smem_offset);
    o = t;
  }
  Val sh = new_reg(e, DT_UINT32);
  emit(e, "shr.u32 %s, %s, 4;", sh.s, o.s);
  emit(e, "add.u32 %s, %%sdesc, %s;", lo.s, sh.s);
  return lo;
}

/* The high word: stride byte offset (8 rows of one swizzle width) and the
 * swizzle mode. */
static uint32_t desc_hi(int swizzle_bytes) {
  uint32_t sbo = (uint32_t)(8 * swizzle_bytes) >> 4;
  return sbo | ((uint32_t)swizzle_mode(swizzle_bytes) << 30);
}

/* The descriptor {lo + add, hi}: a k step or a 64-row fragment moves the
 * start address, which only the low word holds (no 64-bit add). */
static Val make_desc(Emitter *e, Val lo, int64_t add, uint32_t hi) {
  Val d = new_reg(e, DT_UINT64);
  if (add) {
    Val l = new_reg(e, DT_UINT32);
    emit(e, "add.u32 %s, %s, %" PRId64 ";", l.s, lo.s, add);
    lo = l;
  }
  emit(e, "mov.b64 %s, {%s, 0x%08" PRIX32 "};", d.s, lo.s, hi);
  return d;
}

static const char *ab_type(DType t) {
  switch (t) {
  case DT_FLOAT16:
    return ".f16";
  case DT_BFLOAT16:
    return ".bf16";
  case DT_FLOAT8_E4M3:
    return ".e4m3";
  case DT_FLOAT8_E5M2:
    return ".e5m2";
  default:
    return NULL;
  }
}

/* The accumulator register list of one fragment, "{%t3_0, ..., %t3_127}"
 * (count registers from the first), built once per fragment (every k16
 * step repeats it). */
static void acc_list(const IrTensor *acc, int64_t first, int64_t count, char *buf, size_t size) {
  size_t n = (size_t)snprintf(buf, size, "{");
  for (int64_t i = 0; i < count && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, "%s%%t%d_%" PRId64, i ? ", " : "", acc->id, first + i);
  if (n < size) snprintf(buf + n, size - n, "}");
}

/* The accumulator's PTX type for operands of dtype ab: f32 always, f16 for
 * f16 and fp8 operands (the ISA has no f16 accumulation of bf16 inputs). */
static const char *acc_type(DType acc, DType ab) {
  if (acc == DT_FLOAT32) return ".f32";
  return acc == DT_FLOAT16 && (ab == DT_FLOAT16 || dtype_is_fp8(ab)) ? ".f16" : NULL;
}

/* A in registers: a float16/bfloat16 [M, K] tensor in the fragment layout
 * of the accumulator's warp group. */
static bool register_a_ok(Emitter *e, const IrTensor *ra, const IrTensor *acc) {
  if (ra->layout == LAYOUT_WGMMA_ACC && ra->rank == 2 && dtype_bytes(ra->dtype) == 2 &&
      ra->nthreads == acc->nthreads)
    return true;
  unsupported(e,
              "wgmma register operand A '%s' that is not a float16/bfloat16 [M, K] tile in "
              "the WGMMA fragment layout",
              ra->name);
  return false;
}

/* "{%tA_i, ..., %tA_i+3}": the A fragment of k step kk of 64-row fragment r
 * of a register A with k columns (k/4 packed registers per fragment). */
static void a_regs(const IrTensor *ra, int64_t r, int64_t kk, int64_t k, char *buf, size_t size) {
  int64_t first = r * (k / 4) + 4 * kk;
  snprintf(buf, size,
           "{%%t%d_%" PRId64 ", %%t%d_%" PRId64 ", %%t%d_%" PRId64 ", %%t%d_%" PRId64 "}", ra->id,
           first, ra->id, first + 1, ra->id, first + 2, ra->id, first + 3);
}

static void emit_mma(Emitter *e, const IrStmt *s) {
  const IrWgmmaStmt *w = &s->wgmma;
  const IrTensor *acc = w->acc, *ra = w->ra;
  const IrRef *a = &w->a, *b = &w->b;
  if (!acc || acc->layout != LAYOUT_WGMMA_ACC || acc->rank != 2 ||
      (acc->dtype != DT_FLOAT32 && acc->dtype != DT_FLOAT16)) {
    unsupported(e, "a wgmma accumulator that is not a float32 or float16 [M, N] WGMMA "
                   "fragment tensor");
    return;
  }
  bool a_mn = false, b_mn = false;
  if ((ra ? !register_a_ok(e, ra, acc) : !operand_ok(e, a, 1, "A", &a_mn)) ||
      !operand_ok(e, b, 0, "B", &b_mn))
    return;
  DType at = ir_wgmma_a_dtype(w);
  int64_t m = acc->shape[0], n = acc->shape[1], k = ir_wgmma_a_dim(w, 1);
  if (!dtype_wgmma_inputs_ok(at, b->t->dtype)) {
    unsupported(e,
                "wgmma operands of dtypes %s and %s (float16 or bfloat16 pairs, or fp8 are "
                "supported)",
                dtype_name(at), dtype_name(b->t->dtype));
    return;
  }
  const char *dtype = acc_type(acc->dtype, at);
  if (!dtype) {
    unsupported(e, "a %s wgmma accumulator for %s operands (float32, or float16 for float16)",
                dtype_name(acc->dtype), dtype_name(at));
    return;
  }
  /* one instruction covers 32 bytes of K: k16 for 2-byte types, k32 for
   * fp8 */
  bool fp8 = dtype_is_fp8(at);
  int64_t kstep = fp8 ? 32 : 16;
  if (ir_wgmma_a_dim(w, 0) != m || ir_ref_dim(b, 1) != n || ir_ref_dim(b, 0) != k || m % 64 ||
      n % 8 || n < 8 || n > 256 || k % kstep) {
    unsupported(e,
                "wgmma shapes [%" PRId64 ", %" PRId64 "] x [%" PRId64 ", %" PRId64 "] -> [%" PRId64
                ", %" PRId64 "]",
                ir_wgmma_a_dim(w, 0), k, ir_ref_dim(b, 0), ir_ref_dim(b, 1), m, n);
    return;
  }
  Val alo = ra ? (Val){.s = ""} : desc_lo(e, a), blo = desc_lo(e, b);
  uint32_t ahi = ra ? 0 : desc_hi(a->t->swizzle_bytes), bhi = desc_hi(b->t->swizzle_bytes);
  /* registers per fragment: one per f32 element, one per f16 pair */
  int64_t nregs = acc->dtype == DT_FLOAT16 ? n / 4 : n / 2;
  char regs[128 * 24]; /* nregs <= 128 names of at most 22 characters */
  char op[160];
  snprintf(op, sizeof op, "wgmma.mma_async.sync.aligned.m64n%" PRId64 "k%" PRId64 "%s%s%s", n,
           kstep, dtype, ab_type(at), ab_type(b->t->dtype));
  for (int64_t r = 0; r < m / 64; r++) {
    acc_list(acc, r * nregs, nregs, regs, sizeof regs);
    for (int64_t kk = 0; kk < k / kstep; kk++) {
      char areg[128];
      if (ra)
        a_regs(ra, r, kk, k, areg, sizeof areg);
      else
        snprintf(areg, sizeof areg, "%s",
                 make_desc(e, alo, operand_step(a->t, a_mn, r, kk), ahi).s);
      Val dbk = make_desc(e, blo, operand_step(b->t, b_mn, 0, kk), bhi);
      /* the transpose immediates (1: MN-major): the register form has
       * B's, the shared form A's and B's, fp8 forms none (K-major only) */
      char trans[16] = "";
      if (ra)
        snprintf(trans, sizeof trans, ", %d", b_mn);
      else if (!fp8)
        snprintf(trans, sizeof trans, ", %d, %d", a_mn, b_mn);
      emit(e, "%s %s, %s, %s, %%ptrue, 1, 1%s;", op, regs, areg, dbk.s, trans);
    }
  }
}

/* The warpgroup instructions need the 128 threads of an aligned warp
 * group, converged. */
static bool in_warpgroup(Emitter *e) {
  if (e->group.single || e->group.size != 128 || e->group.begin % 128) {
    unsupported(e, "wgmma outside a 128-thread thread group aligned to 128 threads");
    return false;
  }
  return true;
}

void emit_wgmma_stmt(Emitter *e, const IrStmt *s) {
  if (!in_warpgroup(e)) return;
  switch (s->kind) {
  case S_WGMMA_FENCE:
    emit(e, "wgmma.fence.sync.aligned;");
    break;
  case S_WGMMA_COMMIT:
    emit(e, "wgmma.commit_group.sync.aligned;");
    break;
  case S_WGMMA_WAIT:
    emit(e, "wgmma.wait_group.sync.aligned %" PRId64 ";", s->wait.max_pending);
    break;
  case S_WGMMA_MMA:
    emit_mma(e, s);
    break;
  default:
    break;
  }
}
