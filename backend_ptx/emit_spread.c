/* emit_spread.c: register tensors with spread layouts (IrRegLayout, ir.h):
 * loads and stores from global and shared memory, element-wise arithmetic
 * with broadcasting, unary functions and reductions.
 *
 * Slot i of a thread is register %t<id>_<i>. The coordinates of a slot are
 * a thread part (computed once per statement from the thread id) plus a
 * constant slot part (ir_reglayout_coords at thread 0), so every access is
 * registers computed once plus immediates.
 *
 * Float arithmetic is Tilus's (nvcc -ftz=true -prec-div=false): exp is
 * ex2.approx.ftz of x log2(e), division div.full.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "backend_ptx/emit_int.h"

static const IrRegLayout *layout_of(const IrTensor *t) { return t->reg; }

/* The owner group must be the group running the statement: a thread's
 * registers are only its own. */
bool spread_owned(Emitter *e, const IrTensor *t) {
  if (!tensor_check_regs(e, t)) return false;
  if (!e->group.single && e->group.size == layout_of(t)->nthreads) return true;
  unsupported(
      e, "register tensor '%s' (over %" PRId64 " threads) used in a group of %" PRId64 " threads",
      t->name, layout_of(t)->nthreads, e->group.single ? 1 : e->group.size);
  return false;
}

/* (tid / div) % mod as a u32 register (by constants: shifts and masks for
 * powers of two, multiplications otherwise). */
Val spread_tid_digit(Emitter *e, Val tid, int64_t div, int64_t mod) {
  Val u = tid;
  u.type = DT_UINT32;
  if (div > 1) u = emit_int_divmod(e, OP_DIV, u, val_imm(DT_UINT32, div), DT_UINT32, NULL, NULL);
  if (div * mod < e->group.size)
    u = emit_int_divmod(e, OP_MOD, u, val_imm(DT_UINT32, mod), DT_UINT32, NULL, NULL);
  return val_to_reg(e, u);
}

/* The thread part of each coordinate (s32 registers). */
void spread_thread_coords(Emitter *e, const IrRegLayout *L, Val tid, Val *tc) {
  for (int d = 0; d < L->rank; d++) tc[d] = val_imm(DT_INT32, 0);
  for (int i = 0; i < L->nthread; i++) {
    int m = L->thread_mode[i];
    if (m < 0) continue;
    Val digit = spread_tid_digit(e, tid, ir_reglayout_thread_stride(L, i), L->thread_size[i]);
    int d = L->mode_dim[m];
    Val r = new_reg(e, DT_INT32);
    emit(e, "mad.lo.s32 %s, %s, %" PRId64 ", %s;", r.s, digit.s, ir_reglayout_mode_stride(L, m),
         val_to_reg(e, tc[d]).s);
    tc[d] = r;
  }
}

/* Whether this thread is the first of its replicas (it writes for them). */
Val spread_first_replica(Emitter *e, const IrRegLayout *L, Val tid) {
  Val p = {.s = "", .type = DT_BOOL};
  for (int i = 0; i < L->nthread; i++) {
    if (L->thread_mode[i] >= 0) continue;
    Val digit = spread_tid_digit(e, tid, ir_reglayout_thread_stride(L, i), L->thread_size[i]);
    Val q = new_reg(e, DT_BOOL);
    emit(e, "setp.eq.u32 %s, %s, 0;", q.s, digit.s);
    if (p.s[0]) emit(e, "and.pred %s, %s, %s;", q.s, q.s, p.s);
    p = q;
  }
  return p;
}

/* Row-major element strides of a shape. */
void spread_row_major(const int64_t *shape, int rank, int64_t *stride) {
  int64_t acc = 1;
  for (int d = rank - 1; d >= 0; d--) {
    stride[d] = acc;
    acc *= shape[d];
  }
}

/* A float register's zero must be a float literal for ptxas. */
static const char *zero_of(DType t) {
  return t == DT_FLOAT32 ? "0f00000000" : t == DT_FLOAT64 ? "0d0000000000000000" : "0";
}

/* The type of one element's ld/st: storage types (ir.h) in their 32-bit
 * registers sign- or zero-extend (fp8: bits, zero-extended). */
const char *spread_mem_type(DType t) {
  if (dtype_is_fp8(t)) return ".u8";
  if (dtype_is_storage(t)) return ptx_type(t);
  return dtype_bytes(t) == 2 ? ".b16" : dtype_bytes(t) == 1 ? ".b8" : ptx_btype(t);
}

/* Packs the elements of slots [slot, slot + per) of a tensor whose
 * elements narrower than 32 bits each sit in a 32-bit register (storage
 * types) into the 32-bit word w, the first in the low bits. */
static void pack_word(Emitter *e, const IrTensor *t, int64_t slot, int per, Val w) {
  Val r0 = tensor_slot_reg(t, slot), r1 = tensor_slot_reg(t, slot + 1);
  if (per == 2) {
    emit(e, "prmt.b32 %s, %s, %s, 0x5410;", w.s, r0.s, r1.s);
    return;
  }
  Val a = new_reg(e, DT_UINT32), b = new_reg(e, DT_UINT32);
  emit(e, "prmt.b32 %s, %s, %s, 0x0040;", a.s, r0.s, r1.s);
  emit(e, "prmt.b32 %s, %s, %s, 0x0040;", b.s, tensor_slot_reg(t, slot + 2).s,
       tensor_slot_reg(t, slot + 3).s);
  emit(e, "prmt.b32 %s, %s, %s, 0x5410;", w.s, a.s, b.s);
}

/* Remembers that slot `slot` of the 8-bit tensor t is byte `byte` of
 * register w, loaded by the statement being emitted (Emitter.words). */
static void note_byte_word(Emitter *e, const IrTensor *t, int64_t slot, Val w, int byte) {
  struct ByteWords *bw = &e->words;
  const IrStmt *c = e->cur;
  bool load = c && ((c->kind == S_LOAD_SHARED && c->smem.reg == t) ||
                    (c->kind == S_LOAD_GLOBAL && c->gmem.reg == t));
  if (!load) return; /* only a load statement's words: a cast two statements on reads them */
  if (bw->stmt != c || bw->t != t) {
    int64_t n = t->reg->nslots;
    *bw = (struct ByteWords){.stmt = c, .t = t};
    bw->word = arena_alloc(e->m->ar, sizeof(Val) * (size_t)(n + 1));
    bw->byte = arena_alloc(e->m->ar, sizeof(int) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) bw->byte[i] = -1;
  }
  bw->word[slot] = w;
  bw->byte[slot] = byte;
}

/* The inverse of pack_word: each element sign- or zero-extended. */
static void unpack_word(Emitter *e, const IrTensor *t, int64_t slot, int per, Val w) {
  int bits = 32 / per;
  const char *ext = dtype_is_signed(t->dtype) ? "s32" : "u32";
  for (int j = 0; j < per; j++) {
    emit(e, "bfe.%s %s, %s, %d, %d;", ext, tensor_slot_reg(t, slot + j).s, w.s, j * bits, bits);
    if (bits == 8) note_byte_word(e, t, slot + j, w, j);
  }
}

/* ------------------------------------------------------------ global memory */

/* The most row addresses one access keeps (GAccess.row_addr). */
enum { ROW_CACHE = 16 };

/* One global load or store: the tile at the statement's offsets (a tile of
 * lower rank fills the innermost dimensions). */
typedef struct GAccess {
  const IrStmt *s;
  const IrTensor *t;
  const IrRegLayout *L;
  GView g;
  Val origin[IR_MAX_RANK]; /* offset + thread part, per global dimension */
  Val off[IR_MAX_RANK];    /* the offset part alone (s32) */
  Val tc[IR_MAX_RANK];     /* the thread part, per tile dimension (s32) */
  Val store_ok;            /* stores: the first replica (empty: all) */
  bool load;
  const char *nc;        /* loads: ".nc" from a buffer the kernel never writes */
  int tdim[IR_MAX_RANK]; /* per global dimension: the tile's over it, or -1 */
  /* Once per statement (plan_origin): every slot's coordinates are the
   * origin's plus constants of the layout, so its address is the
   * origin's plus a constant number of pitches of each dimension. */
  bool planned;
  Val addr;             /* u64: the origin's address (not tested) */
  Val ok0[IR_MAX_RANK]; /* origin[d] inside dimension d ("": not made yet, on
                             this path of the code: reset_ok0) */
  /* stores: whether origin[d] is known non-negative (its offset's range),
   * and dims[d] - origin[d] (s32; "" as ok0), which store_inside tests */
  bool nonneg[IR_MAX_RANK];
  Val rem[IR_MAX_RANK];
  Val pitch[IR_MAX_RANK]; /* s64 bytes per step along d (an immediate when known) */
  /* The addresses of the rows made so far on this path of the code (the
   * origin's plus lc rows of a run-time pitch along dimension 0), which
   * the row's other slots reach by immediate offsets (row_planned). */
  int64_t row_lc[ROW_CACHE];
  Val row_addr[ROW_CACHE];
  int nrows;
} GAccess;

static void access_coords(Emitter *e, const GAccess *a, int64_t slot, Val *coords) {
  int64_t lc[IR_MAX_RANK];
  ir_reglayout_coords(a->L, 0, slot, lc);
  for (int d = 0; d < a->g.rank; d++) {
    int td = a->tdim[d];
    if (td < 0 || lc[td] == 0) {
      coords[d] = a->origin[d];
      continue;
    }
    coords[d] = new_reg(e, DT_INT32);
    emit(e, "add.s32 %s, %s, %" PRId64 ";", coords[d].s, a->origin[d].s, lc[td]);
  }
}

/* Slots [slot, slot + n), n consecutive elements, as one vector access of
 * 32-bit words (16-bit elements in pairs) in `space` at `at`, under the
 * predicate guard ("" for none). */
static void vector_access(Emitter *e, const IrTensor *t, int64_t slot, int64_t n, const char *space,
                          const char *at, bool load, const char *guard) {
  int64_t words = n * dtype_bytes(t->dtype) / 4, per = 4 / dtype_bytes(t->dtype);
  Val w[4];
  char list[4 * 52] = "", vec[24] = "";
  for (int64_t i = 0; i < words; i++) {
    w[i] = new_reg(e, DT_UINT32);
    strcat(list, i ? ", " : "");
    strcat(list, w[i].s);
  }
  if (words > 1) snprintf(vec, sizeof vec, ".v%" PRId64, words);
  const char *g = guard[0] ? "@" : "", *sp = guard[0] ? " " : "";
  if (load) {
    if (guard[0]) /* a load that does not happen reads zeros */
      for (int64_t i = 0; i < words; i++) emit(e, "mov.b32 %s, 0;", w[i].s);
    emit(e, "%s%s%sld.%s%s.b32 {%s}, %s;", g, guard, sp, space, vec, list, at);
    for (int64_t i = 0; i < words; i++) {
      if (dtype_is_storage(t->dtype))
        unpack_word(e, t, slot + per * i, (int)per, w[i]);
      else if (per == 2)
        emit(e, "mov.b32 {%s, %s}, %s;", tensor_slot_reg(t, slot + 2 * i).s,
             tensor_slot_reg(t, slot + 2 * i + 1).s, w[i].s);
      else
        emit(e, "mov.b32 %s, %s;", tensor_slot_reg(t, slot + i).s, w[i].s);
    }
    return;
  }
  for (int64_t i = 0; i < words; i++) {
    if (dtype_is_storage(t->dtype))
      pack_word(e, t, slot + per * i, (int)per, w[i]);
    else if (per == 2)
      emit(e, "mov.b32 %s, {%s, %s};", w[i].s, tensor_slot_reg(t, slot + 2 * i).s,
           tensor_slot_reg(t, slot + 2 * i + 1).s);
    else
      emit(e, "mov.b32 %s, %s;", w[i].s, tensor_slot_reg(t, slot + i).s);
  }
  emit(e, "%s%s%sst.%s%s.b32 %s, {%s};", g, guard, sp, space, vec, at, list);
}

/* One sub-byte element loaded from global memory (ir.h: element i is bits
 * [i*n, i*n+n), low bits first): the byte under its first bit and, when
 * the field runs past it, the next one; the field sign- or zero-extended.
 * Out of bounds reads 0. Stores are refused: threads would share bytes. */
static void subbyte_access(Emitter *e, const GAccess *a, const Val *coords, int64_t slot) {
  if (!a->load) {
    unsupported(e, "store_global of a sub-byte dtype (view it as uint8 first)");
    return;
  }
  int n = dtype_bits(a->t->dtype);
  Val inb, lin = global_index(e, &a->g, coords, &inb);
  Val bit = new_reg(e, DT_INT64), addr = new_reg(e, DT_UINT64), sh = new_reg(e, DT_UINT32);
  Val lo = new_reg(e, DT_UINT32), hi = new_reg(e, DT_UINT32), cross = new_reg(e, DT_BOOL);
  emit(e, "mul.lo.s64 %s, %s, %d;", bit.s, lin.s, n);
  emit(e, "shr.u64 %s, %s, 3;", addr.s, bit.s);
  emit(e, "add.s64 %s, %s, %s;", addr.s, addr.s, a->g.base.s);
  emit(e, "cvt.u32.u64 %s, %s;", sh.s, bit.s);
  emit(e, "and.b32 %s, %s, 7;", sh.s, sh.s);
  emit(e, "mov.b32 %s, 0;", lo.s);
  emit(e, "mov.b32 %s, 0;", hi.s);
  emit(e, "@%s ld.global%s.u8 %s, [%s];", inb.s, a->nc, lo.s, addr.s);
  emit(e, "setp.gt.and.u32 %s, %s, %d, %s;", cross.s, sh.s, 8 - n, inb.s);
  emit(e, "@%s ld.global%s.u8 %s, [%s+1];", cross.s, a->nc, hi.s, addr.s);
  emit(e, "shl.b32 %s, %s, 8;", hi.s, hi.s);
  emit(e, "or.b32 %s, %s, %s;", lo.s, lo.s, hi.s);
  emit(e, "bfe.%s %s, %s, %s, %d;", dtype_is_signed(a->t->dtype) ? "s32" : "u32",
       tensor_slot_reg(a->t, slot).s, lo.s, sh.s, n);
}

/* Unplanned accesses (plan_origin's rule): the address and every test
 * from the slot's coordinates. Slots [slot, slot + n) as one access of n
 * consecutive elements (n == 1: a scalar), under the bounds of its first
 * element. */
static void access_run_coords(Emitter *e, const GAccess *a, int64_t slot, int64_t n) {
  Val coords[IR_MAX_RANK], inb;
  access_coords(e, a, slot, coords);
  if (dtype_is_subbyte(a->t->dtype)) {
    subbyte_access(e, a, coords, slot);
    return;
  }
  Val addr = global_elem(e, &a->g, coords, &inb);
  if (!a->load && a->store_ok.s[0]) emit(e, "and.pred %s, %s, %s;", inb.s, inb.s, a->store_ok.s);
  if (n == 1) {
    Val r = tensor_slot_reg(a->t, slot);
    if (a->load) {
      emit(e, "mov%s %s, %s;", ptx_btype(a->t->dtype), r.s, zero_of(a->t->dtype));
      emit(e, "@%s ld.global%s%s %s, [%s];", inb.s, a->nc, spread_mem_type(a->t->dtype), r.s,
           addr.s);
    } else {
      emit(e, "@%s st.global%s [%s], %s;", inb.s, spread_mem_type(a->t->dtype), addr.s, r.s);
    }
    return;
  }
  char at[64];
  snprintf(at, sizeof at, "[%s]", addr.s);
  vector_access(e, a->t, slot, n, a->nc[0] ? "global.nc" : "global", at, a->load, inb.s);
}

/* Slots [slot, slot + n), consecutive along the innermost global
 * dimension, one element at a time: one address and one test of the outer
 * dimensions for the run, then per element a test of its column and an
 * immediate offset (rather than an address and every dimension's test per
 * element: fewer instructions and registers in the unaligned copy). */
static void access_elems_coords(Emitter *e, const GAccess *a, int64_t slot, int64_t n) {
  if (n == 1 || dtype_is_subbyte(a->t->dtype)) {
    for (int64_t i = 0; i < n; i++) access_run_coords(e, a, slot + i, 1);
    return;
  }
  Val coords[IR_MAX_RANK];
  access_coords(e, a, slot, coords);
  const GView *g = &a->g;
  int last = g->rank - 1;
  Val rows = global_inside(e, g, coords, last); /* the outer dimensions, once for the run */
  Val lin = global_linear(e, g, coords);
  Val addr = new_reg(e, DT_UINT64);
  emit(e, "mad.lo.s64 %s, %s, %d, %s;", addr.s, lin.s, g->bytes, g->base.s);
  if (!a->load && a->store_ok.s[0]) {
    if (rows.s[0]) {
      Val p = new_reg(e, DT_BOOL);
      emit(e, "and.pred %s, %s, %s;", p.s, rows.s, a->store_ok.s);
      rows = p;
    } else {
      rows = a->store_ok;
    }
  }
  for (int64_t j = 0; j < n; j++) {
    Val c = coords[last], p = new_reg(e, DT_BOOL);
    if (j) {
      c = new_reg(e, DT_INT32);
      emit(e, "add.s32 %s, %s, %" PRId64 ";", c.s, coords[last].s, j);
    }
    if (g->inside[last] && rows.s[0]) /* only the rows to test */
      p = rows;
    else if (g->inside[last])
      emit(e, "mov.pred %s, 1;", p.s);
    else if (rows.s[0])
      emit(e, "setp.lt.and.u32 %s, %s, %s, %s;", p.s, c.s, g->dims[last].s, rows.s);
    else
      emit(e, "setp.lt.u32 %s, %s, %s;", p.s, c.s, g->dims[last].s);
    Val r = tensor_slot_reg(a->t, slot + j);
    int64_t off = j * g->bytes;
    if (a->load) {
      emit(e, "mov%s %s, %s;", ptx_btype(a->t->dtype), r.s, zero_of(a->t->dtype));
      emit(e, "@%s ld.global%s%s %s, [%s+%" PRId64 "];", p.s, a->nc, spread_mem_type(a->t->dtype),
           r.s, addr.s, off);
    } else {
      emit(e, "@%s st.global%s [%s+%" PRId64 "], %s;", p.s, spread_mem_type(a->t->dtype), addr.s,
           off, r.s);
    }
  }
}

/* Forgets the origin's tests: each path of the code (vectors, or element
 * by element) makes its own where it needs them. */
static void reset_ok0(GAccess *a) {
  for (int d = 0; d < a->g.rank; d++) a->ok0[d] = a->rem[d] = (Val){.s = ""};
  a->nrows = 0;
}

/* Whether v is an immediate (not a register), and its value. */
static bool imm_value(Val v, int64_t *x) {
  if (v.s[0] == '%') return false;
  *x = strtoll(v.s, NULL, 0);
  return true;
}

/* Whether global dimension d's extent is a constant, and its value: from
 * the IR, as the view holds every extent in a register (a specialised
 * n_size too). */
static bool dim_value(const GAccess *a, int d, int64_t *x) {
  return ir_is_const(a->s->gmem.global->gshape[d], x);
}

/* Whether a rank-2 load whose rows are a run-time pitch apart is planned
 * by rows: one 64-bit address per row of the thread's slots, made once,
 * the row's other accesses at immediate offsets from it, where each row
 * holds ROW_PLAN_MIN accesses (of per_access elements) or more. Tilus's
 * Ampere v0 (one warp, a [64, 64] float32 accumulator, A and B loaded
 * straight into mma operands with run-time pitches) spilled 28 bytes with
 * an address per access and none with this. Not for stores (an Ampere
 * matmul's C store planned so put its occupancy entries 2 registers over
 * 4 blocks per SM), nor 8-bit elements (the unaligned copy of an int8
 * dot's loads, one byte at a time, spilled when planned). */
enum { ROW_PLAN_MIN = 2 };
static bool row_planned(const GAccess *a, int64_t per_access) {
  if (!a->load || a->g.rank != 2 || dtype_bytes(a->t->dtype) < 2 || a->tdim[0] < 0) return false;
  int64_t lc[IR_MAX_RANK], rows[ROW_CACHE];
  int nrows = 0;
  for (int64_t slot = 0; slot < a->L->nslots; slot += per_access) {
    ir_reglayout_coords(a->L, 0, slot, lc);
    int r = 0;
    while (r < nrows && rows[r] != lc[a->tdim[0]]) r++;
    if (r == nrows) {
      if (nrows == ROW_CACHE) return false;
      rows[nrows++] = lc[a->tdim[0]];
    }
  }
  return a->L->nslots / per_access >= ROW_PLAN_MIN * (int64_t)nrows;
}

/* Whether an access is planned from its origin: a tensor of rank 3 or
 * more (an address there is a chain of 64-bit multiply-adds, which the
 * plan makes once), or one whose pitches are all constants (every slot an
 * immediate offset), or a load planned by rows (row_planned). Otherwise
 * each access computes its own address, as ptxas keeps fewer registers
 * live for it (a matmul's operand loads near the register limit). */
static bool plan_worth(const GAccess *a, int64_t per_access) {
  if (dtype_is_subbyte(a->t->dtype)) return false;
  if (a->g.rank >= 3) return true;
  int64_t x;
  for (int d = 1; d < a->g.rank; d++)
    if (!dim_value(a, d, &x)) return row_planned(a, per_access);
  return true;
}

/* The largest thread part of tile coordinate d under layout L (the
 * thread digits over d at their largest). */
static int64_t thread_coord_max(const IrRegLayout *L, int d) {
  int64_t max = 0;
  for (int i = 0; i < L->nthread; i++) {
    int m = L->thread_mode[i];
    if (m >= 0 && L->mode_dim[m] == d)
      max += (L->thread_size[i] - 1) * ir_reglayout_mode_stride(L, m);
  }
  return max;
}

/* Whether the thread part of the origin's address (thread_part) fits a
 * u32: every pitch it takes an immediate, the largest sum below 2^31. */
static bool thread_part_narrow(const GAccess *a) {
  int64_t max = 0;
  for (int d = 0; d < a->g.rank; d++) {
    int td = a->tdim[d];
    int64_t pc, tm;
    if (td < 0 || (tm = thread_coord_max(a->L, td)) == 0) continue;
    if (!imm_value(a->pitch[d], &pc) || pc > INT32_MAX / tm) return false;
    max += tm * pc;
    if (max > INT32_MAX) return false;
  }
  return true;
}

/* The thread part of the origin's address, the sum of tc[td] * pitch[d]
 * bytes: a u32 register where it fits one (thread_part_narrow), else an
 * s64 one. The origin's address is the offsets' address, the same for
 * every thread (ptxas keeps it in uniform registers), plus this part: a
 * register or two per thread and no 64-bit sum shared by a kernel's first
 * load and its last store, which ptxas would keep alive across the loop
 * between them (flash attention's Q load and O store spilled it). */
static Val thread_part(Emitter *e, const GAccess *a) {
  bool narrow = thread_part_narrow(a);
  Val sum = val_imm(narrow ? DT_UINT32 : DT_INT64, 0);
  for (int d = 0; d < a->g.rank; d++) {
    int td = a->tdim[d];
    if (td < 0 || !thread_coord_max(a->L, td)) continue;
    Val next = new_reg(e, sum.type), tc = val_to_reg(e, a->tc[td]);
    tc.type = DT_UINT32; /* never negative: zero-extended, no sign word */
    if (narrow)
      emit(e, "mad.lo.u32 %s, %s, %s, %s;", next.s, tc.s, a->pitch[d].s, val_to_reg(e, sum).s);
    else
      emit(e, "mad.lo.s64 %s, %s, %s, %s;", next.s, val_convert(e, tc, DT_UINT64).s,
           val_to_reg(e, a->pitch[d]).s, val_to_reg(e, sum).s);
    sum = next;
  }
  return val_to_reg(e, sum);
}

/* The offsets' address: the base plus each offset times its pitch (a
 * widening multiply-add where the pitch is a 32-bit immediate). */
static Val offsets_addr(Emitter *e, const GAccess *a) {
  Val addr = a->g.base;
  for (int d = 0; d < a->g.rank; d++) {
    int64_t v, pc;
    if (imm_value(a->off[d], &v) && v == 0) continue;
    Val next = new_reg(e, DT_UINT64);
    if (imm_value(a->pitch[d], &pc) && pc <= INT32_MAX)
      emit(e, "mad.wide.s32 %s, %s, %" PRId64 ", %s;", next.s, val_to_reg(e, a->off[d]).s, pc,
           addr.s);
    else
      emit(e, "mad.lo.s64 %s, %s, %s, %s;", next.s, val_convert(e, a->off[d], DT_INT64).s,
           val_to_reg(e, a->pitch[d]).s, addr.s);
    addr = next;
  }
  return addr;
}

/* Once per statement: the dimensions' pitches, the origin's address and
 * its test per dimension (rather than a whole address and every
 * dimension's test per element: a thread of a decode kernel holding 64
 * elements of a 4-D tensor computed 64 of each). */
static void plan_origin(Emitter *e, GAccess *a) {
  const GView *g = &a->g;
  /* pitch[d] = bytes * dims[d+1] * ... (inner first, an immediate while
   * every factor is, up to 2^40 bytes: past that a register) */
  Val pitch = val_imm(DT_INT64, g->bytes);
  for (int d = g->rank - 1; d >= 0; d--) {
    a->pitch[d] = pitch;
    if (d == 0) break;
    int64_t pc, dc;
    if (imm_value(pitch, &pc) && dim_value(a, d, &dc) && dc >= 0 &&
        pc <= ((int64_t)1 << 40) / (dc ? dc : 1)) {
      pitch = val_imm(DT_INT64, pc * dc);
    } else {
      Val dim = val_convert(e, g->dims[d], DT_INT64), next = new_reg(e, DT_INT64);
      emit(e, "mul.lo.s64 %s, %s, %s;", next.s, val_to_reg(e, pitch).s, val_to_reg(e, dim).s);
      pitch = next;
    }
  }
  /* the address is linear in the coordinates: the offsets' plus the
   * thread's part */
  Val part = thread_part(e, a), block = offsets_addr(e, a);
  a->addr = new_reg(e, DT_UINT64);
  if (part.type == DT_UINT32)
    emit(e, "mad.wide.u32 %s, %s, 1, %s;", a->addr.s, part.s, block.s);
  else
    emit(e, "add.s64 %s, %s, %s;", a->addr.s, part.s, block.s);
}

/* addr plus n run-time pitches of dimension d. Dimension 0 is the first
 * step from the origin (slot_addr), so its result is the row's address:
 * made once on this path of the code. */
static Val pitch_step(Emitter *e, GAccess *a, int d, int64_t n, Val addr) {
  bool row = d == 0;
  for (int r = 0; row && r < a->nrows; r++)
    if (a->row_lc[r] == n) return a->row_addr[r];
  Val next = new_reg(e, DT_UINT64);
  emit(e, "mad.lo.s64 %s, %s, %" PRId64 ", %s;", next.s, val_to_reg(e, a->pitch[d]).s, n, addr.s);
  if (row && a->nrows < ROW_CACHE) {
    a->row_lc[a->nrows] = n;
    a->row_addr[a->nrows++] = next;
  }
  return next;
}

/* The address of slot `slot` (its layout offsets lc) plus `extra` bytes,
 * as "[reg+imm]": the origin's address and the offsets' pitches. */
static void slot_addr(Emitter *e, GAccess *a, const int64_t *lc, int64_t extra, char *at,
                      size_t size) {
  Val addr = a->addr;
  int64_t imm = extra;
  for (int d = 0; d < a->g.rank; d++) {
    int td = a->tdim[d];
    int64_t pc;
    if (td < 0 || !lc[td]) continue;
    int64_t step, sum;
    if (imm_value(a->pitch[d], &pc) && !__builtin_mul_overflow(lc[td], pc, &step)) {
      /* an address's immediate offset is 32-bit; a larger step is added */
      if (!__builtin_add_overflow(imm, step, &sum) && sum >= INT32_MIN && sum <= INT32_MAX) {
        imm = sum;
        continue;
      }
      Val next = new_reg(e, DT_UINT64);
      emit(e, "add.s64 %s, %s, %" PRId64 ";", next.s, addr.s, step);
      addr = next;
      continue;
    }
    addr = pitch_step(e, a, d, lc[td], addr);
  }
  snprintf(at, size, "[%s+%" PRId64 "]", addr.s, imm);
}

/* A store's test that coordinate origin[d] + off is inside dimension d,
 * where origin[d] >= 0: off < dims[d] - origin[d] (signed; the difference
 * made once on the path). A load tests origin[d] + off < dims[d] instead.
 * The two forms differ on purpose: a kernel that loads and stores the
 * same rows (attention's Q and O tiles) would otherwise test the same
 * predicates twice, and ptxas, finding them equal, keeps the load's
 * through the main loop between them, in registers the loop needs
 * (flash_attention_v2's 64x32 point: 5, which cost its build for three
 * blocks per SM a spill). */
static Val store_inside(Emitter *e, GAccess *a, int d, int64_t off) {
  if (!off && a->ok0[d].s[0]) return a->ok0[d];
  if (!a->rem[d].s[0]) {
    a->rem[d] = new_reg(e, DT_INT32);
    emit(e, "sub.s32 %s, %s, %s;", a->rem[d].s, val_to_reg(e, a->g.dims[d]).s, a->origin[d].s);
  }
  Val p = new_reg(e, DT_BOOL);
  emit(e, "setp.gt.s32 %s, %s, %" PRId64 ";", p.s, a->rem[d].s, off);
  if (!off) a->ok0[d] = p;
  return p;
}

/* Whether coordinate origin[d] + off is inside dimension d: the origin's
 * own test made once on this path, an offset one's each time (unsigned:
 * a negative coordinate is outside). */
static Val coord_inside(Emitter *e, GAccess *a, int d, int64_t off) {
  if (!off && a->ok0[d].s[0]) return a->ok0[d];
  Val p = new_reg(e, DT_BOOL), c = a->origin[d];
  if (off) {
    c = new_reg(e, DT_INT32);
    emit(e, "add.s32 %s, %s, %" PRId64 ";", c.s, a->origin[d].s, off);
  }
  emit(e, "setp.lt.u32 %s, %s, %s;", p.s, c.s, a->g.dims[d].s);
  if (!off) a->ok0[d] = p;
  return p;
}

/* Whether slot `slot` (layout offsets lc, plus `plus` along the innermost
 * global dimension) is inside the tensor: the origin's tests where the
 * slot does not move it, a test of the moved coordinate where it does;
 * and the store's replica test. A predicate that may hold always. */
static Val slot_ok(Emitter *e, GAccess *a, const int64_t *lc, int64_t plus) {
  Val ok = {.s = ""};
  int last = a->g.rank - 1;
  for (int d = 0; d < a->g.rank; d++) {
    if (a->g.inside[d]) continue;
    int td = a->tdim[d];
    int64_t off = (td >= 0 ? lc[td] : 0) + (d == last ? plus : 0);
    Val p = !a->load && a->nonneg[d] && off >= 0 ? store_inside(e, a, d, off)
                                                 : coord_inside(e, a, d, off);
    if (!ok.s[0]) {
      ok = p;
      continue;
    }
    Val both = new_reg(e, DT_BOOL);
    emit(e, "and.pred %s, %s, %s;", both.s, ok.s, p.s);
    ok = both;
  }
  if (!a->load && a->store_ok.s[0]) {
    if (!ok.s[0]) return a->store_ok;
    Val both = new_reg(e, DT_BOOL);
    emit(e, "and.pred %s, %s, %s;", both.s, ok.s, a->store_ok.s);
    ok = both;
  }
  if (!ok.s[0]) {
    ok = new_reg(e, DT_BOOL);
    emit(e, "mov.pred %s, 1;", ok.s);
  }
  return ok;
}

/* One element (slot), at `at`, under p. */
static void access_one(Emitter *e, const GAccess *a, int64_t slot, const char *at, Val p) {
  Val r = tensor_slot_reg(a->t, slot);
  if (a->load) {
    emit(e, "mov%s %s, %s;", ptx_btype(a->t->dtype), r.s, zero_of(a->t->dtype));
    emit(e, "@%s ld.global%s%s %s, %s;", p.s, a->nc, spread_mem_type(a->t->dtype), r.s, at);
  } else {
    emit(e, "@%s st.global%s %s, %s;", p.s, spread_mem_type(a->t->dtype), at, r.s);
  }
}

/* Slots [slot, slot + n) as one access of n consecutive elements (n == 1:
 * a scalar), under the bounds of its first element. */
static void access_run(Emitter *e, GAccess *a, int64_t slot, int64_t n) {
  if (!a->planned) {
    access_run_coords(e, a, slot, n);
    return;
  }
  int64_t lc[IR_MAX_RANK];
  ir_reglayout_coords(a->L, 0, slot, lc);
  char at[80];
  slot_addr(e, a, lc, 0, at, sizeof at);
  Val p = slot_ok(e, a, lc, 0);
  if (n == 1) {
    access_one(e, a, slot, at, p);
    return;
  }
  vector_access(e, a->t, slot, n, a->nc[0] ? "global.nc" : "global", at, a->load, p.s);
}

/* Slots [slot, slot + n), consecutive along the innermost global
 * dimension, one element at a time (the copy for unaligned rows): each at
 * an immediate offset from the run's address, under its own bounds. */
static void access_elems(Emitter *e, GAccess *a, int64_t slot, int64_t n) {
  if (!a->planned) {
    access_elems_coords(e, a, slot, n);
    return;
  }
  int64_t lc[IR_MAX_RANK];
  ir_reglayout_coords(a->L, 0, slot, lc);
  for (int64_t j = 0; j < n; j++) {
    char at[80];
    slot_addr(e, a, lc, j * a->g.bytes, at, sizeof at);
    access_one(e, a, slot + j, at, slot_ok(e, a, lc, j));
  }
}

/* The most elements of `bytes` each, out of a run of `run` consecutive
 * ones, that one vector access moves: a power of two (PTX has .v2 and .v4
 * of 32-bit words, no .v3) dividing the run, at most 16 bytes. */
static int64_t vector_run(int64_t run, int bytes) {
  int64_t n = 16 / bytes;
  while (n > 1 && run % n) n /= 2;
  return n;
}

/* Elements per vector access: the innermost slot digit when it runs along
 * the innermost tile dimension with stride 1, cut to 16 bytes; 1 when the
 * elements are not 8-, 16- or 32-bit. */
static int64_t vector_elems(const GAccess *a) {
  const IrRegLayout *L = a->L;
  int bytes = dtype_bytes(a->t->dtype);
  if (L->nlocal == 0 || bytes > 4 || a->t->dtype == DT_BOOL || dtype_is_subbyte(a->t->dtype))
    return 1;
  int m = L->local_mode[L->nlocal - 1];
  if (L->mode_dim[m] != L->rank - 1 || ir_reglayout_mode_stride(L, m) != 1) return 1;
  if (ir_gcopy_tile_dim(&a->s->gmem, a->s->gmem.global->rank - 1) != L->rank - 1) return 1;
  int64_t n = vector_run(L->mode_size[m], bytes);
  return n * bytes >= 4 ? n : 1;
}

/* Whether vector accesses of n elements are aligned and never straddle the
 * end of a row: the base, the row length and the innermost offset are
 * multiples of n elements (known only at run time). */
static Val vector_ok(Emitter *e, const GAccess *a, int64_t n) {
  int bytes = dtype_bytes(a->t->dtype);
  Val p = new_reg(e, DT_BOOL), q = new_reg(e, DT_BOOL), t = new_reg(e, DT_UINT64);
  emit(e, "and.b64 %s, %s, %" PRId64 ";", t.s, a->g.base.s, n * bytes - 1);
  emit(e, "setp.eq.u64 %s, %s, 0;", p.s, t.s);
  int last = a->g.rank - 1;
  Val u = new_reg(e, DT_UINT32);
  emit(e, "or.b32 %s, %s, %s;", u.s, a->origin[last].s, a->g.dims[last].s);
  emit(e, "and.b32 %s, %s, %" PRId64 ";", u.s, u.s, n - 1);
  emit(e, "setp.eq.u32 %s, %s, 0;", q.s, u.s);
  emit(e, "and.pred %s, %s, %s;", p.s, p.s, q.s);
  return p;
}

/* Whether x is the same in every thread for the whole kernel: parameters,
 * constants and block indices. */
static bool invariant(const IrExpr *x) {
  if (!x) return true;
  switch (x->kind) {
  case X_CONST:
  case X_PARAM:
    return true;
  case X_SPECIAL:
    return x->sreg != SR_TID_X;
  case X_VAR:
    return false;
  default:
    return invariant(x->a) && invariant(x->b) && invariant(x->c);
  }
}

bool emit_invariant(const IrExpr *x) { return invariant(x); }

/* The access's vectors of n elements are aligned whenever the kernel-wide
 * predicate of emit_spread_alignment holds: its tensor's base and row
 * length are kernel-invariant, and its innermost offset is a multiple of n
 * (the thread and slot parts are, by the layout). */
static bool versionable(const Emitter *e, const IrStmt *s, int64_t n) {
  const IrTensor *g = s->gmem.global;
  int last = g->rank - 1;
  if (!invariant(g->gptr) || !invariant(g->gshape[last])) return false;
  if (last >= s->gmem.noffsets) return true;
  int64_t m = ir_expr_multiple(s->gmem.offsets[last], e->multiples);
  return m % n == 0;
}

static bool spread_access(const IrStmt *s) {
  return (s->kind == S_LOAD_GLOBAL || s->kind == S_STORE_GLOBAL) && !s->gmem.scatter &&
         !s->gmem.atomic && s->gmem.reg && s->gmem.reg->layout == LAYOUT_SPATIAL &&
         s->gmem.reg->reg && s->gmem.global && s->gmem.reg->dtype != DT_BOOL;
}

/* Adds the alignment of statement s's access to *pred (kept out of the
 * recursion below: run-time nesting goes thousands deep). */
static __attribute__((noinline)) void access_alignment(Emitter *e, const IrStmt *s, Val *pred) {
  if (s->kind == S_CP_ASYNC) emit_cpasync_alignment(e, s, pred);
  if (!spread_access(s)) return;
  GAccess a = {.s = s, .t = s->gmem.reg, .L = s->gmem.reg->reg};
  int64_t n = vector_elems(&a);
  if (n == 1 || !versionable(e, s, n)) return;
  const IrTensor *g = s->gmem.global;
  int64_t vb = n * dtype_bytes(a.t->dtype);
  Val base = val_to_reg(e, val_convert(e, emit_expr(e, g->gptr), DT_UINT64));
  Val low = new_reg(e, DT_UINT64), p = new_reg(e, DT_BOOL);
  emit(e, "and.b64 %s, %s, %" PRId64 ";", low.s, base.s, vb - 1);
  emit(e, "setp.eq.u64 %s, %s, 0;", p.s, low.s);
  /* the innermost length too (a rank-1 tensor's whole length): a vector
   * whose first element is in bounds then ends in bounds */
  Val row = val_to_reg(e, val_convert(e, emit_expr(e, g->gshape[g->rank - 1]), DT_UINT32));
  Val r = new_reg(e, DT_UINT32), q = new_reg(e, DT_BOOL);
  emit(e, "and.b32 %s, %s, %" PRId64 ";", r.s, row.s, n - 1);
  emit(e, "setp.eq.u32 %s, %s, 0;", q.s, r.s);
  emit(e, "and.pred %s, %s, %s;", p.s, p.s, q.s);
  if (pred->s[0]) emit(e, "and.pred %s, %s, %s;", p.s, p.s, pred->s);
  *pred = p;
}

static void alignment_of(Emitter *e, const IrBlock *b, Val *pred) {
  for (int i = 0; i < b->len; i++) {
    const IrStmt *s = b->items[i];
    alignment_of(e, &s->body, pred);
    alignment_of(e, &s->orelse, pred);
    access_alignment(e, s, pred);
  }
}

/* Whether b (inside `loops` run-time loops) has an access that the body's
 * versioning is for: a copy or a load, or a store in a loop. A store
 * outside loops (an epilogue's) tests its own alignment at no cost worth
 * a second copy of the kernel's main loop. */
static bool versioning_pays(const IrBlock *b, int loops) {
  for (int i = 0; i < b->len; i++) {
    const IrStmt *s = b->items[i];
    if (s->kind == S_CP_ASYNC || (spread_access(s) && (loops || s->kind == S_LOAD_GLOBAL)))
      return true;
    int inner = loops + (s->kind == S_FOR);
    if (versioning_pays(&s->body, inner) || versioning_pays(&s->orelse, inner)) return true;
  }
  return false;
}

Val emit_spread_alignment(Emitter *e) {
  Val p = {.s = "", .type = DT_BOOL};
  if (versioning_pays(&e->k->body, 0)) alignment_of(e, &e->k->body, &p);
  return p;
}

static void spread_global(Emitter *e, const IrStmt *s, bool load) {
  const IrTensor *t = s->gmem.reg, *g = s->gmem.global;
  if (!spread_owned(e, t)) return;
  if (g->rank < t->rank || t->dtype == DT_BOOL) {
    unsupported(e, "this global load/store shape or dtype");
    return;
  }
  GAccess a = {.s = s, .t = t, .L = layout_of(t), .load = load};
  a.nc = load ? emit_nc(e, g->gptr) : "";
  for (int d = 0; d < g->rank; d++) a.tdim[d] = ir_gcopy_tile_dim(&s->gmem, d);
  a.g = global_view(e, g);
  global_view_inside(e, &a.g, s);
  Val tid = emit_group_tid(e);
  spread_thread_coords(e, a.L, tid, a.tc);
  for (int d = 0; d < g->rank; d++) {
    Val off = d < s->gmem.noffsets ? val_convert(e, emit_expr(e, s->gmem.offsets[d]), DT_INT32)
                                   : val_imm(DT_INT32, 0);
    int td = a.tdim[d];
    IrRange r = {0, 0};
    a.nonneg[d] =
        d >= s->gmem.noffsets || (ir_expr_range(s->gmem.offsets[d], e->ranges, &r) && r.lo >= 0);
    a.off[d] = off;
    a.origin[d] = new_reg(e, DT_INT32);
    if (td >= 0)
      emit(e, "add.s32 %s, %s, %s;", a.origin[d].s, val_to_reg(e, a.tc[td]).s, off.s);
    else
      emit(e, "mov.b32 %s, %s;", a.origin[d].s, off.s);
  }
  a.store_ok = load ? (Val){.s = ""} : spread_first_replica(e, a.L, tid);
  int64_t n = vector_elems(&a), slots = a.L->nslots;
  a.planned = plan_worth(&a, n);
  if (a.planned) plan_origin(e, &a);
  reset_ok0(&a);
  if (n > 1 && e->aligned_copy && versionable(e, s, n)) { /* the body's copy decides */
    for (int64_t i = 0; i < slots; i += n)
      if (e->aligned_copy == 1)
        access_run(e, &a, i, n);
      else
        access_elems(e, &a, i, n);
    return;
  }
  if (n == 1) {
    for (int64_t i = 0; i < slots; i++) access_run(e, &a, i, 1);
    return;
  }
  /* vectors where the run-time alignment allows, else element by element */
  int scalar = new_label(e), done = new_label(e);
  Val ok = vector_ok(e, &a, n);
  emit(e, "@!%s bra $L%d;", ok.s, scalar);
  for (int64_t i = 0; i < slots; i += n) access_run(e, &a, i, n);
  emit(e, "bra.uni $L%d;", done);
  emit_label(e, scalar);
  reset_ok0(&a);
  for (int64_t i = 0; i < slots; i += n) access_elems(e, &a, i, n);
  emit_label(e, done);
}

/* ------------------------------------------------------------ shared memory */

/* ------------------------------------------------ ldmatrix for mma operands */

/* Whether a shared view can feed ldmatrix into mma.sync operand t: 16-bit
 * elements, a rank-2 view of whole 16-byte rows of 8 elements each at a
 * 16-byte aligned start. */
bool spread_ldmatrix_fits(const Emitter *e, const IrRef *ref, const IrTensor *t) {
  const IrRegLayout *L = layout_of(t);
  if ((L->mma != MMA_A && L->mma != MMA_B) || dtype_bytes(t->dtype) != 2 || ir_ref_rank(ref) != 2 ||
      (L->mma == MMA_A && L->mma_transposed))
    return false;
  int64_t inner = ref->transposed ? ir_ref_dim(ref, 0) : ir_ref_dim(ref, 1);
  IrExpr *off = ir_ref_byte_offset(e->m->ar, ref);
  return inner % 8 == 0 && ir_expr_multiple(off, e->multiples) % 16 == 0;
}

/* The b32 register holding slots (i, i + 1) of a 16-bit tensor that
 * ldmatrix alone writes (else a fresh one). */
static Val pair_reg(Emitter *e, const IrTensor *t, int64_t i) {
  if (!e->ldm_pairs || !e->ldm_pairs[t->id]) return new_reg(e, DT_UINT32);
  Val r = {.type = DT_UINT32};
  snprintf(r.s, sizeof r.s, "%%tp%d_%" PRId64, t->id, i / 2);
  return r;
}

/* Where ldmatrix reads: the view, its stored row length, its swizzle, and
 * where the warp's part of the operand starts.
 *
 * Addresses. The address of a lane's row is swizzle(T + C + view) + %smem:
 * T the lane's and warp's part (rows l % 8 of matrix l / 8, the warp's
 * first row or column), C a constant (the atom), view the view's offset.
 * The swizzle reads and writes only the bits below its period P (8 rows,
 * swizzle_period), so swizzle(y + kP) = swizzle(y) + kP: with
 * C + view = lo + hi, lo below P and hi a multiple of it, the address is a
 * register swizzle(T + lo) + %smem computed once per kernel (Emitter
 * hoist), plus hi in the instruction; a view that is a run-time multiple of
 * P adds one register per distinct lo to it. Any other view computes the
 * swizzle per ldmatrix from T (computed once). */
typedef struct LdTile {
  const IrTensor *sh, *t;
  const IrExpr *voff; /* the view's byte offset */
  int64_t vconst;     /* its value, when constant (vimm) */
  bool vimm;
  Val view;            /* its register, when not constant */
  int64_t vmult;       /* what it is a multiple of */
  int64_t cols;        /* elements per stored row */
  Swizzle swz;         /* the tensor's swizzle */
  int64_t period;      /* of the swizzle, bytes (1: none) */
  bool trans;          /* ldmatrix .trans */
  bool warp_div;       /* the warp's index: (warp / wdiv) (A), else warp % wdiv (B) */
  int64_t wdiv, wsize; /* ... times wsize elements */
  bool warp_row;       /* the warp's part is a row (else a column) */
  /* a run-time view that is a multiple of the period: the lane bases
   * plus the view, by base */
  int nview;
  Val view_base[16], view_reg[16];
} LdTile;

/* The offsets of matrix mat (0..3) from the first: bit 0 of mat adds
 * (ra rows, ca columns), bit 1 adds (rb, cb). */
typedef struct LdSteps {
  int64_t ra, ca, rb, cb;
} LdSteps;

static Val mat_offset(Emitter *e, Val mat, int64_t a, int64_t b) {
  Val lo = new_reg(e, DT_UINT32), hi = new_reg(e, DT_UINT32), r = new_reg(e, DT_UINT32);
  emit(e, "and.b32 %s, %s, 1;", lo.s, mat.s);
  emit(e, "shr.u32 %s, %s, 1;", hi.s, mat.s);
  emit(e, "mul.lo.u32 %s, %s, %" PRId64 ";", r.s, lo.s, a);
  emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %s;", r.s, hi.s, b, r.s);
  return r;
}

/* The kernel-invariant register of the lane's address for steps st:
 * swizzle(T + lo) + %smem (swizzled), or T (not). */
static Val ldm_lane_base(Emitter *e, const LdTile *lt, LdSteps st, int64_t lo, bool swizzled) {
  char key[256];
  snprintf(key, sizeof key,
           "ldm %" PRId64 " %" PRId64 " %d %d %" PRId64 " %" PRId64 " %d %" PRId64 " %" PRId64
           " %" PRId64 " %" PRId64 " %" PRId64 " %d %d",
           e->group.begin, lt->cols, lt->warp_div, lt->warp_row, lt->wdiv, lt->wsize, swizzled,
           st.ra, st.ca, st.rb, st.cb, lo, swizzled ? lt->swz.bits : 0,
           swizzled ? lt->swz.shift : 0);
  Val r;
  if (hoist_find(e, key, &r, 1)) return r;
  FILE *saved = hoist_begin(e);
  Val tid = emit_group_tid(e), lane = new_reg(e, DT_UINT32), warp = new_reg(e, DT_UINT32);
  Val lane8 = new_reg(e, DT_UINT32), mat = new_reg(e, DT_UINT32), w = new_reg(e, DT_UINT32);
  emit(e, "and.b32 %s, %s, 31;", lane.s, tid.s);
  emit(e, "shr.u32 %s, %s, 5;", warp.s, tid.s);
  emit(e, "and.b32 %s, %s, 7;", lane8.s, lane.s);
  emit(e, "shr.u32 %s, %s, 3;", mat.s, lane.s);
  Val q = emit_int_divmod(e, lt->warp_div ? OP_DIV : OP_MOD, warp, val_imm(DT_UINT32, lt->wdiv),
                          DT_UINT32, NULL, NULL);
  emit(e, "mul.lo.u32 %s, %s, %" PRId64 ";", w.s, val_to_reg(e, q).s, lt->wsize);
  Val row = new_reg(e, DT_UINT32), col = new_reg(e, DT_UINT32), off = new_reg(e, DT_UINT32);
  emit(e, "add.u32 %s, %s, %s;", row.s, mat_offset(e, mat, st.ra, st.rb).s, lane8.s);
  emit(e, "add.u32 %s, %s, %s;", col.s, mat_offset(e, mat, st.ca, st.cb).s,
       lt->warp_row ? "0" : w.s);
  if (lt->warp_row) emit(e, "add.u32 %s, %s, %s;", row.s, row.s, w.s);
  emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %s;", off.s, row.s, lt->cols, col.s);
  emit(e, "mad.lo.u32 %s, %s, 2, %" PRId64 ";", off.s, off.s, lo);
  r = off;
  if (swizzled) { /* %smem: a multiple of 1024, added where it commutes */
    bool early = swizzle_commutes(lt->swz);
    if (early) emit(e, "add.u32 %s, %s, %%smem;", off.s, off.s);
    r = smem_swizzle(e, off, lt->swz);
    if (!early) {
      Val a = new_reg(e, DT_UINT32);
      emit(e, "add.u32 %s, %s, %%smem;", a.s, r.s);
      r = a;
    }
  }
  hoist_end(e, saved, key, &r, 1);
  return r;
}

/* swizzle(x) as smem_swizzle computes it. */
static uint32_t swizzled(uint32_t x, Swizzle z) {
  return z.bits ? x ^ (((x >> z.shift) & ((1u << z.bits) - 1)) << 4) : x;
}

/* Whether, for every thread of the group, swizzle(T + lo) is
 * swizzle(T) ^ lo, T the lane's part as ldm_lane_base makes it: lo sets
 * only bits that no lane's part sets and the swizzle does not read (the
 * 16-byte chunks of one stored row, as the k steps of an operand are), and
 * is below 1024 (%smem, a multiple of 1024, is added before or after the
 * swizzle: either way it leaves those bits alone). Decided by computing
 * both for each thread. */
static bool xor_exact(const Emitter *e, const LdTile *lt, LdSteps st, int64_t lo) {
  if (lo <= 0 || lo >= SMEM_BASE_ALIGN) return false;
  for (int64_t tid = 0; tid < e->group.size; tid++) {
    int64_t lane = tid & 31, warp = tid >> 5, mat = lane >> 3;
    int64_t w = (lt->warp_div ? warp / lt->wdiv : warp % lt->wdiv) * lt->wsize;
    int64_t row = (mat & 1) * st.ra + (mat >> 1) * st.rb + (lane & 7) + (lt->warp_row ? w : 0);
    int64_t col = (mat & 1) * st.ca + (mat >> 1) * st.cb + (lt->warp_row ? 0 : w);
    uint32_t t = (uint32_t)((row * lt->cols + col) * 2);
    if (swizzled(t + (uint32_t)lo, lt->swz) != (swizzled(t, lt->swz) ^ (uint32_t)lo)) return false;
  }
  return true;
}

/* The lane's address for steps st at offset lo below the period: the
 * address at offset 0 xor lo where that is exact (xor_exact), made at the
 * ldmatrix from the one register the k steps of an operand share, which
 * ptxas may repeat in a loop rather than hold a register for each
 * (flash_attention_v3: eight, which its build for three blocks per SM
 * spilled; now 3.3-4.5% faster); else a kernel-long register of its own.
 * Not in a loop that only copies and multiplies (a matmul's K loop):
 * registers are not short there, and given the xor ptxas chose another
 * occupancy (Ampere v3's 64x128 point: 5 blocks per SM where it had 4,
 * 3.8% slower). */
static Val lane_addr(Emitter *e, const LdTile *lt, LdSteps st, int64_t lo) {
  if ((e->loop && ir_copy_multiply_loop(e->loop)) || !xor_exact(e, lt, st, lo))
    return ldm_lane_base(e, lt, st, lo, true);
  Val base = ldm_lane_base(e, lt, st, 0, true), r = new_reg(e, DT_UINT32);
  emit(e, "xor.b32 %s, %s, %" PRId64 ";", r.s, base.s, lo);
  return r;
}

/* One ldmatrix.x4: lane l gives the address of row l % 8 of matrix l / 8,
 * whose first element is the warp's, plus (r0, c0) and its LdSteps offset,
 * in the tile as stored; register i lands in the pair of slots dst[i]. */
static void ldmatrix_x4(Emitter *e, LdTile *lt, int64_t r0, int64_t c0, LdSteps st,
                        const int64_t *dst) {
  int64_t c = (r0 * lt->cols + c0) * 2 + (lt->vimm ? lt->vconst : 0);
  int64_t lo = c % lt->period, imm = lt->sh->smem_offset + c - lo;
  Val addr;
  if (lt->vimm) {
    addr = lane_addr(e, lt, st, lo);
  } else if (lt->vmult % lt->period == 0) {
    Val base = ldm_lane_base(e, lt, st, lo, true);
    int i = 0;
    while (i < lt->nview && strcmp(lt->view_base[i].s, base.s)) i++;
    if (i < lt->nview) {
      addr = lt->view_reg[i];
    } else {
      addr = new_reg(e, DT_UINT32);
      emit(e, "add.u32 %s, %s, %s;", addr.s, base.s, lt->view.s);
      if (lt->nview < 16) lt->view_base[lt->nview] = base, lt->view_reg[lt->nview++] = addr;
    }
  } else {
    Val off = new_reg(e, DT_UINT32);
    emit(e, "add.u32 %s, %s, %s;", off.s, ldm_lane_base(e, lt, st, 0, false).s, lt->view.s);
    emit(e, "add.u32 %s, %s, %" PRId64 ";", off.s, off.s, c);
    Val phys = smem_swizzle(e, off, lt->swz);
    addr = new_reg(e, DT_UINT32);
    emit(e, "add.u32 %s, %s, %%smem;", addr.s, phys.s);
    imm = lt->sh->smem_offset;
  }
  Val r[4];
  for (int i = 0; i < 4; i++) r[i] = pair_reg(e, lt->t, dst[i]);
  emit(e, "ldmatrix.sync.aligned.m8n8.x4%s.shared.b16 {%s, %s, %s, %s}, [%s+%" PRId64 "];",
       lt->trans ? ".trans" : "", r[0].s, r[1].s, r[2].s, r[3].s, addr.s, imm);
  for (int i = 0; i < 4; i++)
    emit(e, "mov.b32 {%s, %s}, %s;", tensor_slot_reg(lt->t, dst[i]).s,
         tensor_slot_reg(lt->t, dst[i] + 1).s, r[i].s);
}

/* Where ldmatrix reads an mma.sync operand (the register tensor of
 * load_shared statement s) from. */
static void ldm_tile_init(Emitter *e, LdTile *lt, const IrStmt *s) {
  const IrRef *ref = &s->smem.shared;
  const IrTensor *t = s->smem.reg;
  *lt = (LdTile){.sh = ref->t, .t = t};
  lt->swz = tensor_swizzle(ref->t);
  lt->period = swizzle_period(lt->swz);
  lt->voff = ir_ref_byte_offset(e->m->ar, ref);
  lt->vimm = ir_is_const(lt->voff, &lt->vconst) && lt->vconst >= 0;
  if (!lt->vimm) {
    lt->view = val_to_reg(e, val_convert(e, emit_expr(e, lt->voff), DT_UINT32));
    lt->vmult = ir_expr_multiple(lt->voff, e->multiples);
  }
  lt->cols = ref->transposed ? ir_ref_dim(ref, 0) : ir_ref_dim(ref, 1);
  const IrRegLayout *L = layout_of(t);
  lt->wdiv = L->mma_warps_n;
  if (L->mma == MMA_A) { /* the warp's first row: (warp / wn) * m / wm */
    lt->warp_div = true, lt->wsize = L->shape[0] / L->mma_warps_m, lt->warp_row = true;
    return;
  }
  /* the warp's first column: (warp % wn) * n / wn */
  int64_t n = L->shape[!L->mma_transposed];
  lt->warp_div = false, lt->wsize = n / L->mma_warps_n;
  lt->trans = ref->transposed == L->mma_transposed; /* stored [K, N] */
  lt->warp_row = !lt->trans;
}

/* The k16 steps [k0, k1) of an mma.sync operand from shared memory with
 * ldmatrix (slot orders of ir_reglayout_mma). A [M, K] stored row-major:
 * per 16 x 16 atom the matrices (rows 0-7 | 8-15) x (k 0-7 | 8-15) are
 * a0a1, a2a3, a4a5, a6a7. B [K, N] stored row-major needs pairs along k:
 * .trans, two n-tiles of 8 per ldmatrix; B stored [N, K] (a transposed
 * view) needs no .trans. b.transpose() of a register tensor loaded
 * [N, K]: its layout is B's transposed, the tile as the register tensor
 * sees it is [N, K]. */
static void ldm_steps(Emitter *e, LdTile *lt, int64_t k0, int64_t k1) {
  const IrRegLayout *L = layout_of(lt->t);
  int64_t wm = L->mma_warps_m, wn = L->mma_warps_n;
  if (L->mma == MMA_A) {
    int64_t rm = L->shape[0] / (16 * wm), rk = L->shape[1] / 16;
    for (int64_t im = 0; im < rm; im++)
      for (int64_t ik = k0; ik < k1; ik++) {
        int64_t b = (im * rk + ik) * 8, dst[4] = {b, b + 2, b + 4, b + 6};
        ldmatrix_x4(e, lt, im * 16, ik * 16, (LdSteps){8, 0, 0, 8}, dst);
      }
    return;
  }
  int64_t n = L->shape[!L->mma_transposed], rn = n / (8 * wn);
  for (int64_t in = 0; in < rn; in += 2) {
    bool two = in + 1 < rn; /* an odd last n-tile is loaded twice */
    for (int64_t ik = k0; ik < k1; ik++) {
      int64_t b0 = (ik * rn + in) * 4, b1 = (ik * rn + in + two) * 4;
      int64_t dst[4] = {b0, b0 + 2, b1, b1 + 2};
      if (lt->trans) /* stored [K, N]: rows k, columns n */
        ldmatrix_x4(e, lt, ik * 16, in * 8, (LdSteps){8, 0, 0, two ? 8 : 0}, dst);
      else /* stored [N, K]: rows n, columns k */
        ldmatrix_x4(e, lt, in * 8, ik * 16, (LdSteps){0, 8, two ? 8 : 0, 0}, dst);
    }
  }
}

/* The k16 steps of an operand tensor's layout. */
static int64_t operand_ksteps(const IrTensor *t) {
  const IrRegLayout *L = layout_of(t);
  return (L->mma == MMA_A ? L->shape[1] : L->shape[L->mma_transposed]) / 16;
}

static void ldmatrix_load(Emitter *e, const IrStmt *s) {
  LdTile lt;
  ldm_tile_init(e, &lt, s);
  ldm_steps(e, &lt, 0, operand_ksteps(s->smem.reg));
}

/* Elements per vector access of a shared view (1: element by element):
 * the innermost slot digit when it runs along the view's innermost
 * dimension with stride 1, cut to 16 bytes, when the view's start and row
 * length keep such vectors aligned (a swizzle moves whole 16-byte chunks). */
static int64_t shared_vector(const Emitter *e, const IrRef *ref, const IrTensor *t) {
  const IrRegLayout *L = layout_of(t);
  int bytes = dtype_bytes(t->dtype), rank = ir_ref_rank(ref);
  if (ref->transposed || L->nlocal == 0 || bytes > 4 || t->dtype == DT_BOOL) return 1;
  int m = L->local_mode[L->nlocal - 1];
  if (L->mode_dim[m] != L->rank - 1 || ir_reglayout_mode_stride(L, m) != 1) return 1;
  int64_t n = vector_run(L->mode_size[m], bytes);
  int64_t row = ir_ref_dim(ref, rank - 1) * bytes;
  IrExpr *off = ir_ref_byte_offset(e->m->ar, ref);
  while (n > 1 &&
         (n * bytes < 4 || row % (n * bytes) || ir_expr_multiple(off, e->multiples) % (n * bytes)))
    n /= 2;
  return n * bytes >= 4 ? n : 1;
}

void spread_view_strides(const IrRef *ref, int64_t *stride) {
  int rank = ir_ref_rank(ref);
  int64_t tile[IR_MAX_RANK], tstride[IR_MAX_RANK];
  bool swap = ref->transposed && rank >= 2;
  for (int d = 0; d < rank; d++) tile[d] = ir_ref_dim(ref, d);
  if (swap) tile[rank - 1] = ir_ref_dim(ref, rank - 2), tile[rank - 2] = ir_ref_dim(ref, rank - 1);
  spread_row_major(tile, rank, tstride);
  for (int d = 0; d < rank; d++) stride[d] = tstride[d];
  if (swap) stride[rank - 1] = tstride[rank - 2], stride[rank - 2] = tstride[rank - 1];
}

/* Addresses in a swizzled tile (a staging tile, layout.c) for a spread
 * access: thread t's element of slot i is at T(t) + off(i), swizzled.
 * Where the view starts on a period P of the swizzle and, for the part lo
 * of off(i) below P, swizzle(T(t) + lo) is swizzle(T(t)) ^ delta with one
 * delta for every thread (checked by computing both for each thread: the
 * columns of a fragment stay inside the 16-byte chunk that the thread's
 * first one starts), the address is the one register swizzle(T) + %smem
 * xor delta, at the immediate off(i) - lo: one xor per distinct delta
 * instead of a swizzle per access, which held a register per access
 * (flash_attention_v2's O stores: 207 -> 243 registers). %smem is only a
 * multiple of 1024, so the xor may follow its addition for the delta's
 * bits below 1024 alone; the bits above (a period of 2048 bytes: 256-byte
 * rows, rows 4 apart) are clear in every thread's swizzle(T) (checked),
 * and xoring them is adding them: they go to the immediate. Xoring them
 * after %smem was wrong where %smem had them set (flash_attention_v2's
 * 2-warp entries on the GPU). */
typedef struct SwizzledAccess {
  Swizzle sw;
  int64_t period;
  uint32_t *part; /* T(t) for each thread of the layout */
  int64_t nparts;
  Val base;          /* swizzle(T) + %smem, made at first use */
  int64_t delta[16]; /* deltas met so far and their registers */
  Val delta_reg[16];
  int ndelta;
} SwizzledAccess;

/* The xor of lo's delta, or -1 where it is not the same for every
 * thread or where its bits above %smem's alignment (1024) are set in some
 * thread's swizzle(T) (so that xoring them is not adding them). */
static int64_t swizzle_delta(const SwizzledAccess *a, int64_t lo) {
  uint32_t d = swizzled(a->part[0] + (uint32_t)lo, a->sw) ^ swizzled(a->part[0], a->sw);
  for (int64_t t = 0; t < a->nparts; t++) {
    uint32_t at = swizzled(a->part[t], a->sw);
    if ((swizzled(a->part[t] + (uint32_t)lo, a->sw) ^ at) != d ||
        (at & d & ~(uint32_t)(SMEM_BASE_ALIGN - 1)))
      return -1;
  }
  return d;
}

/* The address register for an access at byte offset off (below the
 * view's period-aligned start), *imm the immediate to add; NULL where the
 * xor form does not hold for it. */
static const char *swizzled_address(Emitter *e, SwizzledAccess *a, Val base, int64_t off,
                                    int64_t *imm) {
  int64_t lo = off % a->period, d = swizzle_delta(a, lo);
  if (d < 0) return NULL;
  if (!a->base.s[0]) {
    Val phys = smem_swizzle(e, base, a->sw);
    a->base = new_reg(e, DT_UINT32);
    emit(e, "add.u32 %s, %s, %%smem;", a->base.s, phys.s);
  }
  *imm = off - lo + (d & ~(int64_t)(SMEM_BASE_ALIGN - 1));
  d &= SMEM_BASE_ALIGN - 1;
  if (d == 0) return a->base.s;
  for (int i = 0; i < a->ndelta; i++)
    if (a->delta[i] == d) return a->delta_reg[i].s;
  if (a->ndelta == 16) return NULL;
  Val *r = &a->delta_reg[a->ndelta];
  a->delta[a->ndelta++] = d;
  *r = new_reg(e, DT_UINT32);
  emit(e, "xor.b32 %s, %s, %" PRId64 ";", r->s, a->base.s, d);
  return r->s;
}

/* Sets up a for a spread access of t through ref (its tensor's swizzle
 * sw), or returns false (no staging swizzle, or a view not on a period;
 * the tiles that TMA, WGMMA or ldmatrix swizzle keep a swizzle per
 * access, as measured with it). */
static bool swizzled_access_init(Emitter *e, SwizzledAccess *a, const IrRef *ref, const IrTensor *t,
                                 Swizzle sw, const int64_t *stride) {
  const IrRegLayout *L = layout_of(t);
  a->sw = sw;
  a->period = swizzle_period(sw);
  if (!a->sw.bits || !ref->t->fragment_swizzle ||
      ir_expr_multiple(ir_ref_byte_offset(e->m->ar, ref), e->multiples) % a->period)
    return false;
  a->nparts = L->nthreads < e->group.size ? L->nthreads : e->group.size;
  a->part = arena_alloc(e->m->ar, sizeof(uint32_t) * (size_t)(a->nparts + 1));
  int64_t bytes = dtype_bytes(t->dtype), c[IR_MAX_RANK];
  for (int64_t tid = 0; tid < a->nparts; tid++) {
    ir_reglayout_coords(L, tid, 0, c);
    int64_t off = 0;
    for (int d = 0; d < L->rank; d++) off += c[d] * stride[d] * bytes;
    a->part[tid] = (uint32_t)off;
  }
  a->base = (Val){.s = ""};
  a->ndelta = 0;
  return true;
}

/* Load or store of a spread register tensor from/to a shared view of its
 * shape (row-major or swizzled; transposed views swap the last two
 * coordinates), element by element. */
static void spread_shared(Emitter *e, const IrStmt *s, bool load) {
  const IrRef *ref = &s->smem.shared;
  const IrTensor *sh = ref->t, *t = s->smem.reg;
  if (!spread_owned(e, t)) return;
  int rank = ir_ref_rank(ref);
  bool ok = sh && sh->space == MS_SHARED && rank == t->rank && t->dtype == sh->dtype &&
            t->dtype != DT_BOOL;
  for (int i = 0; ok && i < rank; i++) ok = ir_ref_dim(ref, i) == t->shape[i];
  if (!ok) {
    unsupported(e, "shared load/store between tensors of different shapes or dtypes");
    return;
  }
  if (load && spread_ldmatrix_fits(e, ref, t)) {
    ldmatrix_load(e, s);
    return;
  }
  const IrRegLayout *L = layout_of(t);
  IrExpr *voff = ir_ref_byte_offset(e->m->ar, ref);
  Val view = val_to_reg(e, val_convert(e, emit_expr(e, voff), DT_UINT32));
  Val tid = emit_group_tid(e), tc[IR_MAX_RANK];
  spread_thread_coords(e, L, tid, tc);
  Val writer = load ? (Val){.s = ""} : spread_first_replica(e, L, tid);
  int64_t stride[IR_MAX_RANK], bytes = dtype_bytes(t->dtype);
  spread_view_strides(ref, stride);
  Val base = new_reg(e, DT_UINT32);
  emit(e, "mov.b32 %s, %s;", base.s, view.s);
  for (int d = 0; d < rank; d++)
    emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %s;", base.s, val_to_reg(e, tc[d]).s,
         stride[d] * bytes, base.s);
  Swizzle sw = tensor_swizzle(sh);
  SwizzledAccess xa;
  bool by_xor = swizzled_access_init(e, &xa, ref, t, sw, stride);
  int64_t n = shared_vector(e, ref, t);
  for (int64_t i = 0; i < L->nslots; i += n) {
    int64_t lc[IR_MAX_RANK], off = 0, imm = 0;
    ir_reglayout_coords(L, 0, i, lc);
    for (int d = 0; d < rank; d++) off += lc[d] * stride[d] * bytes;
    const char *reg = by_xor ? swizzled_address(e, &xa, base, off, &imm) : NULL;
    Val addr = {.s = ""};
    if (!reg) {
      Val o = new_reg(e, DT_UINT32);
      addr = new_reg(e, DT_UINT32);
      emit(e, "add.u32 %s, %s, %" PRId64 ";", o.s, base.s, off);
      Val phys = smem_swizzle(e, o, sw);
      emit(e, "add.u32 %s, %s, %%smem;", addr.s, phys.s);
      reg = addr.s;
    }
    char at[96];
    snprintf(at, sizeof at, "[%s+%" PRId64 "]", reg, sh->smem_offset + imm);
    if (n > 1) {
      vector_access(e, t, i, n, "shared", at, load, writer.s);
      continue;
    }
    Val r = tensor_slot_reg(t, i);
    if (load)
      emit(e, "ld.shared%s %s, %s;", spread_mem_type(t->dtype), r.s, at);
    else
      emit(e, "%s%s%sst.shared%s %s, %s;", writer.s[0] ? "@" : "", writer.s, writer.s[0] ? " " : "",
           spread_mem_type(t->dtype), at, r.s);
  }
}

/* ------------------------------------------------------------ element-wise */

/* The slot of x holding the element that slot `slot` of dst (layout D)
 * combines with, x broadcast to dst's shape. */
static int64_t operand_slot(const IrRegLayout *D, const IrTensor *x, int64_t slot) {
  int64_t c[IR_MAX_RANK], xc[IR_MAX_RANK], xs = 0;
  ir_reglayout_coords(D, 0, slot, c);
  int lead = D->rank - x->rank;
  for (int d = 0; d < x->rank; d++) xc[d] = x->shape[d] == 1 ? 0 : c[d + lead];
  ir_reglayout_slot_of(x->reg, 0, xc, &xs);
  return xs;
}

static bool operand_ok(Emitter *e, const IrTensor *dst, const IrTensor *x) {
  if (!tensor_check_regs(e, x)) return false;
  if (x->layout == LAYOUT_SPATIAL &&
      ir_reglayout_equal(x->reg, ir_reglayout_broadcast(e->m->ar, dst->reg, x->rank, x->shape)))
    return true;
  unsupported(e, "register tensors '%s' and '%s' with layouts that do not match", dst->name,
              x->name);
  return false;
}

/* a op b for one element. Float division is div.full (2 ulp), as Tilus
 * compiles its tensor arithmetic (nvcc -prec-div=false). */
static Val tensor_binop(Emitter *e, IrOp op, Val a, Val b, DType t) {
  if (op != OP_DIV || t != DT_FLOAT32) return emit_binop(e, op, a, b, t);
  Val r = new_reg(e, t);
  emit(e, "div.full.f32 %s, %s, %s;", r.s, val_to_reg(e, val_convert(e, a, t)).s,
       val_to_reg(e, val_convert(e, b, t)).s);
  return r;
}

/* Whether an element-wise op on 16-bit floats runs two elements per
 * instruction (add/sub/mul/min/max.{f16,bf16}x2 round each half as the
 * scalar instruction does). */
static bool paired_half_op(const IrElemwiseStmt *w) {
  DType t = w->dst->dtype;
  if ((t != DT_FLOAT16 && t != DT_BFLOAT16) || w->a->dtype != t || (w->b && w->b->dtype != t))
    return false;
  return w->op == OP_ADD || w->op == OP_SUB || w->op == OP_MUL || w->op == OP_MIN ||
         w->op == OP_MAX;
}

/* Two 16-bit registers as one pair register {lo, hi}. */
static Val half_pair(Emitter *e, Val lo, Val hi) {
  Val p = new_reg(e, DT_UINT32);
  emit(e, "mov.b32 %s, {%s, %s};", p.s, lo.s, hi.s);
  return p;
}

static const char *const pair_ops[] = {
    [OP_ADD] = "add", [OP_SUB] = "sub", [OP_MUL] = "mul", [OP_MIN] = "min", [OP_MAX] = "max"};

/* paired_half_op's statements: slots i and i + 1 in one instruction (the
 * dequantising multiply of a weight tile by its scales, softmax's f16
 * arithmetic). Returns the slot where the pairs end (an odd last slot is
 * left to the scalar loop). */
static int64_t elemwise_pairs(Emitter *e, const IrElemwiseStmt *w, Val scalar) {
  const IrTensor *d = w->dst, *a = w->a, *b = w->b;
  const char *ty = d->dtype == DT_FLOAT16 ? "f16x2" : "bf16x2";
  Val both = b ? scalar : half_pair(e, scalar, scalar);
  int64_t i = 0;
  for (; i + 1 < d->reg->nslots; i += 2) {
    Val x = half_pair(e, tensor_slot_reg(a, operand_slot(d->reg, a, i)),
                      tensor_slot_reg(a, operand_slot(d->reg, a, i + 1)));
    Val y = b ? half_pair(e, tensor_slot_reg(b, operand_slot(d->reg, b, i)),
                          tensor_slot_reg(b, operand_slot(d->reg, b, i + 1)))
              : both;
    if (w->scalar_first) {
      Val z = x;
      x = y, y = z;
    }
    Val r = new_reg(e, DT_UINT32);
    emit(e, "%s.%s %s, %s, %s;", pair_ops[w->op], ty, r.s, x.s, y.s);
    emit(e, "mov.b32 {%s, %s}, %s;", tensor_slot_reg(d, i).s, tensor_slot_reg(d, i + 1).s, r.s);
  }
  return i;
}

static void spread_elemwise(Emitter *e, const IrStmt *s) {
  const IrElemwiseStmt *w = &s->elemwise;
  const IrTensor *d = w->dst, *a = w->a, *b = w->b;
  if (!spread_owned(e, d) || !operand_ok(e, d, a) || (b && !operand_ok(e, d, b))) return;
  DType t = a->dtype;
  Val scalar = {.s = ""};
  if (!b) scalar = val_to_reg(e, val_convert(e, emit_expr(e, w->scalar), t));
  int64_t first = paired_half_op(w) ? elemwise_pairs(e, w, scalar) : 0;
  for (int64_t i = first; i < d->reg->nslots; i++) {
    Val x = tensor_slot_reg(a, operand_slot(d->reg, a, i));
    Val y = b ? tensor_slot_reg(b, operand_slot(d->reg, b, i)) : scalar;
    Val r = w->scalar_first ? tensor_binop(e, w->op, y, x, t) : tensor_binop(e, w->op, x, y, t);
    r = val_convert(e, r, d->dtype);
    emit(e, "mov%s %s, %s;", ptx_btype(d->dtype), tensor_slot_reg(d, i).s, r.s);
  }
}

/* dst = cond ? a : b, with broadcasting. */
static void spread_where(Emitter *e, const IrStmt *s) {
  const IrWhereStmt *w = &s->where;
  const IrTensor *d = w->dst;
  if (!spread_owned(e, d) || !operand_ok(e, d, w->cond) || (w->a && !operand_ok(e, d, w->a)) ||
      (w->b && !operand_ok(e, d, w->b)))
    return;
  Val sa = {.s = ""}, sb = {.s = ""};
  if (!w->a) sa = val_to_reg(e, val_convert(e, emit_expr(e, w->sa), d->dtype));
  if (!w->b) sb = val_to_reg(e, val_convert(e, emit_expr(e, w->sb), d->dtype));
  for (int64_t i = 0; i < d->reg->nslots; i++) {
    Val c = tensor_slot_reg(w->cond, operand_slot(d->reg, w->cond, i));
    Val x = w->a ? tensor_slot_reg(w->a, operand_slot(d->reg, w->a, i)) : sa;
    Val y = w->b ? tensor_slot_reg(w->b, operand_slot(d->reg, w->b, i)) : sb;
    if (d->dtype == DT_BOOL) { /* selp has no predicate form */
      Val t = new_reg(e, DT_BOOL), f = new_reg(e, DT_BOOL);
      emit(e, "and.pred %s, %s, %s;", t.s, c.s, x.s);
      emit(e, "and.pred %s, %s, !%s;", f.s, y.s, c.s);
      emit(e, "or.pred %s, %s, %s;", tensor_slot_reg(d, i).s, t.s, f.s);
      continue;
    }
    emit(e, "selp%s %s, %s, %s, %s;", ptx_btype(d->dtype), tensor_slot_reg(d, i).s, x.s, y.s, c.s);
  }
}

/* ------------------------------------------------------------ unary */

/* fn(x) of an f32 (or f64 for the exact ones) register. */
Val emit_math_fn(Emitter *e, IrMathFn fn, Val x) {
  DType t = x.type;
  const char *ty = ptx_type(t);
  Val r = new_reg(e, t);
  switch (fn) {
  case FN_EXP: /* e^x = 2^(x log2 e) */
    emit(e, "mul.ftz.f32 %s, %s, 0f3FB8AA3B;", r.s, x.s);
    emit(e, "ex2.approx.ftz.f32 %s, %s;", r.s, r.s);
    return r;
  case FN_EXP2:
    emit(e, "ex2.approx.f32 %s, %s;", r.s, x.s);
    return r;
  case FN_LOG: /* ln x = log2(x) ln 2 */
    emit(e, "lg2.approx.f32 %s, %s;", r.s, x.s);
    emit(e, "mul.f32 %s, %s, 0f3F317218;", r.s, r.s);
    return r;
  case FN_LOG2:
    emit(e, "lg2.approx.f32 %s, %s;", r.s, x.s);
    return r;
  case FN_SQRT:
    emit(e, "sqrt.rn%s %s, %s;", ty, r.s, x.s);
    return r;
  case FN_RSQRT:
    emit(e, "rsqrt.approx%s %s, %s;", ty, r.s, x.s);
    return r;
  case FN_ABS:
    emit(e, "abs%s %s, %s;", ty, r.s, x.s);
    return r;
  case FN_NEG:
    emit(e, "neg%s %s, %s;", ty, r.s, x.s);
    return r;
  case FN_SQUARE:
    emit(e, "mul%s %s, %s, %s;",
         dtype_is_float(t) ? ty
         : t == DT_INT32   ? ".lo.s32"
                           : ".lo.u32",
         r.s, x.s, x.s);
    return r;
  case FN_SIN:
    emit(e, "sin.approx.f32 %s, %s;", r.s, x.s);
    return r;
  case FN_COS:
    emit(e, "cos.approx.f32 %s, %s;", r.s, x.s);
    return r;
  case FN_TANH:
    emit(e, "tanh.approx.f32 %s, %s;", r.s, x.s);
    return r;
  case FN_RECIP:
    emit(e, "rcp.rn%s %s, %s;", ty, r.s, x.s);
    return r;
  case FN_ROUND: /* integers are integral already */
    if (dtype_is_float(t))
      emit(e, "cvt.rni%s%s %s, %s;", ty, ty, r.s, x.s);
    else
      emit(e, "mov%s %s, %s;", ptx_btype(t), r.s, x.s);
    return r;
  }
  return r;
}

/* The type a function computes in: f32 for 16-bit floats; the
 * approximations exist in f32 only. */
static bool fn_type(IrMathFn fn, DType t, DType *work) {
  bool approx = fn == FN_EXP || fn == FN_EXP2 || fn == FN_LOG || fn == FN_LOG2 || fn == FN_SIN ||
                fn == FN_COS || fn == FN_TANH;
  if (t == DT_FLOAT16 || t == DT_BFLOAT16) t = DT_FLOAT32;
  *work = t;
  if (t == DT_FLOAT32) return true;
  if (t == DT_FLOAT64) return !approx;
  return fn == FN_ABS || fn == FN_NEG || fn == FN_SQUARE || fn == FN_ROUND;
}

static void spread_unary(Emitter *e, const IrStmt *s) {
  const IrTensor *d = s->unary.dst, *x = s->unary.src;
  if (!spread_owned(e, d) || !operand_ok(e, d, x)) return;
  DType work;
  if (!fn_type(s->unary.fn, x->dtype, &work)) {
    unsupported(e, "%s of a %s tensor", ir_fn_name(s->unary.fn), dtype_name(x->dtype));
    return;
  }
  for (int64_t i = 0; i < d->reg->nslots; i++) {
    Val v = val_to_reg(e, val_convert(e, tensor_slot_reg(x, i), work));
    Val r = val_convert(e, emit_math_fn(e, s->unary.fn, v), d->dtype);
    emit(e, "mov%s %s, %s;", ptx_btype(d->dtype), tensor_slot_reg(d, i).s, r.s);
  }
}

/* ------------------------------------------------------------ reductions */

static Val combine(Emitter *e, IrOp op, Val a, Val b) {
  return val_to_reg(e, emit_binop(e, op, a, b, a.type));
}

/* The butterfly over the lanes of lane_mask: every lane ends with the
 * combination of its group's values (in one order per pair of lanes, so
 * all of them hold the same bits). */
static Val butterfly(Emitter *e, IrOp op, Val v, unsigned lane_mask) {
  unsigned members = 0xffffffffu;
  if (e->group.size < 32)
    members = (unsigned)(((uint64_t)1 << e->group.size) - 1) << (e->group.begin % 32);
  for (int bit = 0; bit < 5; bit++) {
    if (!(lane_mask & (1u << bit))) continue;
    Val other = new_reg(e, v.type);
    if (dtype_bytes(v.type) == 8) {
      Val lo = new_reg(e, DT_UINT32), hi = new_reg(e, DT_UINT32);
      emit(e, "mov.b64 {%s, %s}, %s;", lo.s, hi.s, v.s);
      emit(e, "shfl.sync.bfly.b32 %s, %s, %d, 31, 0x%08x;", lo.s, lo.s, 1 << bit, members);
      emit(e, "shfl.sync.bfly.b32 %s, %s, %d, 31, 0x%08x;", hi.s, hi.s, 1 << bit, members);
      emit(e, "mov.b64 %s, {%s, %s};", other.s, lo.s, hi.s);
    } else {
      emit(e, "shfl.sync.bfly.b32 %s, %s, %d, 31, 0x%08x;", other.s, v.s, 1 << bit, members);
    }
    v = combine(e, op, v, other);
  }
  return v;
}

/* Partials of the warps exchanged through the reduction scratch: writers
 * store, everyone reads the parts of its elements in order. */
static void exchange(Emitter *e, const IrStmt *s, const IrReducePlan *p, Val tid, Val *part,
                     DType work) {
  const IrTensor *d = s->reduce.dst;
  const IrRegLayout *D = d->reg;
  int64_t numel = ir_tensor_numel(d), wb = dtype_bytes(work) > 4 ? 8 : 4;
  /* k: this thread's part; writer: one thread per (k, element) */
  Val k = val_imm(DT_UINT32, 0);
  for (int i = 0; i < p->nparts_terms; i++) {
    Val digit = spread_tid_digit(e, tid, p->part_div[i], p->part_mod[i]);
    Val r = new_reg(e, DT_UINT32);
    emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %s;", r.s, val_to_reg(e, k).s, p->part_mod[i],
         digit.s);
    k = r;
  }
  Val writer = new_reg(e, DT_BOOL), lanes = new_reg(e, DT_UINT32);
  emit(e, "and.b32 %s, %s, %u;", lanes.s, tid.s, p->lane_mask);
  emit(e, "setp.eq.u32 %s, %s, 0;", writer.s, lanes.s);
  for (int i = 0; i < p->nzero; i++) {
    Val digit = spread_tid_digit(e, tid, p->zero_div[i], p->zero_mod[i]), q = new_reg(e, DT_BOOL);
    emit(e, "setp.eq.u32 %s, %s, 0;", q.s, digit.s);
    emit(e, "and.pred %s, %s, %s;", writer.s, writer.s, q.s);
  }
  /* element index: thread part once, slot part constant */
  int64_t stride[IR_MAX_RANK];
  spread_row_major(d->shape, d->rank, stride);
  Val tc[IR_MAX_RANK], eidx = new_reg(e, DT_UINT32);
  spread_thread_coords(e, D, tid, tc);
  emit(e, "mov.b32 %s, 0;", eidx.s);
  for (int i = 0; i < d->rank; i++)
    emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %s;", eidx.s, val_to_reg(e, tc[i]).s, stride[i],
         eidx.s);
  Val base = new_reg(e, DT_UINT32), mine = new_reg(e, DT_UINT32);
  emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %%smem;", base.s, eidx.s, wb);
  emit(e, "add.u32 %s, %s, %" PRId64 ";", base.s, base.s, e->k->reduce_scratch_offset);
  emit(e, "mul.lo.u32 %s, %s, %" PRId64 ";", mine.s, val_to_reg(e, k).s, numel * wb);
  emit(e, "add.u32 %s, %s, %s;", mine.s, mine.s, base.s);
  const char *mt = ptx_btype(work);
  for (int64_t i = 0; i < D->nslots; i++) {
    int64_t c[IR_MAX_RANK], off = 0;
    ir_reglayout_coords(D, 0, i, c);
    for (int j = 0; j < d->rank; j++) off += c[j] * stride[j] * wb;
    emit(e, "@%s st.shared%s [%s+%" PRId64 "], %s;", writer.s, mt, mine.s, off, part[i].s);
  }
  if (!emit_barrier(e, s->reduce.barrier_id, "a reduction across warps")) return;
  for (int64_t i = 0; i < D->nslots; i++) {
    int64_t c[IR_MAX_RANK], off = 0;
    ir_reglayout_coords(D, 0, i, c);
    for (int j = 0; j < d->rank; j++) off += c[j] * stride[j] * wb;
    Val acc = {.s = ""};
    for (int64_t q = 0; q < p->parts; q++) {
      Val v = new_reg(e, work);
      emit(e, "ld.shared%s %s, [%s+%" PRId64 "];", mt, v.s, base.s, off + q * numel * wb);
      acc = q ? combine(e, s->reduce.op, acc, v) : v;
    }
    part[i] = acc;
  }
  emit_barrier(e, s->reduce.barrier_id, "a reduction across warps"); /* scratch free again */
}

/* ------------------------------------------------------------ convert */

/* The scratch address of this thread's element of slot 0 under layout L
 * (row-major element index, eb bytes each): the thread part of the
 * coordinates; each slot adds a constant. */
static Val scratch_base(Emitter *e, const IrRegLayout *L, Val tid, const int64_t *stride,
                        int64_t eb) {
  Val tc[IR_MAX_RANK], idx = new_reg(e, DT_UINT32), base = new_reg(e, DT_UINT32);
  spread_thread_coords(e, L, tid, tc);
  emit(e, "mov.b32 %s, 0;", idx.s);
  for (int i = 0; i < L->rank; i++)
    emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %s;", idx.s, val_to_reg(e, tc[i]).s, stride[i], idx.s);
  emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %%smem;", base.s, idx.s, eb);
  emit(e, "add.u32 %s, %s, %" PRId64 ";", base.s, base.s, e->k->reduce_scratch_offset);
  return base;
}

/* Bytes from a thread's element of slot 0 to that of slot i under L. */
static int64_t slot_offset(const IrRegLayout *L, int64_t i, const int64_t *stride, int64_t eb) {
  int64_t c[IR_MAX_RANK], off = 0;
  ir_reglayout_coords(L, 0, i, c);
  for (int j = 0; j < L->rank; j++) off += c[j] * stride[j];
  return off * eb;
}

/* dst = src in another layout: every thread stores its elements of src at
 * their row-major places in the scratch, a barrier, every thread loads its
 * elements of dst, a barrier (the scratch is free again). Replicas store
 * the same values. A bool travels as a 32-bit 0 or 1. */
static void spread_convert(Emitter *e, const IrStmt *s) {
  const IrTensor *d = s->cast.dst, *x = s->cast.src;
  if (!spread_owned(e, d) || !spread_owned(e, x)) return;
  bool pred = d->dtype == DT_BOOL;
  int64_t eb = pred ? 4 : dtype_bytes(d->dtype), stride[IR_MAX_RANK];
  const char *bt = dtype_is_storage(d->dtype) ? spread_mem_type(d->dtype)
                   : eb == 2                  ? ".b16"
                   : eb == 8                  ? ".b64"
                                              : ".b32";
  spread_row_major(d->shape, d->rank, stride);
  Val tid = emit_group_tid(e);
  Val wbase = scratch_base(e, x->reg, tid, stride, eb);
  for (int64_t i = 0; i < x->reg->nslots; i++) {
    Val v = tensor_slot_reg(x, i);
    if (pred) {
      Val u = new_reg(e, DT_UINT32);
      emit(e, "selp.u32 %s, 1, 0, %s;", u.s, v.s);
      v = u;
    }
    emit(e, "st.shared%s [%s+%" PRId64 "], %s;", bt, wbase.s, slot_offset(x->reg, i, stride, eb),
         v.s);
  }
  if (!emit_barrier(e, s->cast.barrier_id, "a register layout conversion")) return;
  Val rbase = scratch_base(e, d->reg, tid, stride, eb);
  for (int64_t i = 0; i < d->reg->nslots; i++) {
    int64_t off = slot_offset(d->reg, i, stride, eb);
    if (pred) {
      Val u = new_reg(e, DT_UINT32);
      emit(e, "ld.shared.b32 %s, [%s+%" PRId64 "];", u.s, rbase.s, off);
      emit(e, "setp.ne.u32 %s, %s, 0;", tensor_slot_reg(d, i).s, u.s);
    } else {
      emit(e, "ld.shared%s %s, [%s+%" PRId64 "];", bt, tensor_slot_reg(d, i).s, rbase.s, off);
    }
  }
  emit_barrier(e, s->cast.barrier_id, "a register layout conversion");
}

static void spread_reduce(Emitter *e, const IrStmt *s) {
  const IrTensor *d = s->reduce.dst, *x = s->reduce.src;
  if (!spread_owned(e, d) || !spread_owned(e, x)) return;
  const IrRegLayout *D = d->reg;
  if (!ir_reglayout_equal(
          D, ir_reglayout_reduce(e->m->ar, x->reg, s->reduce.dim, s->reduce.keepdim))) {
    unsupported(e, "a reduction into a tensor of another layout");
    return;
  }
  DType work = x->dtype == DT_FLOAT16 || x->dtype == DT_BFLOAT16 ? DT_FLOAT32 : x->dtype;
  if (dtype_bytes(work) < 4) {
    unsupported(e, "a reduction of a %s tensor", dtype_name(x->dtype));
    return;
  }
  Val *part = xmalloc(sizeof(Val) * (size_t)D->nslots);
  for (int64_t j = 0; j < D->nslots; j++) part[j].s[0] = 0;
  /* 1. the thread's own elements, in slot order */
  for (int64_t i = 0; i < x->reg->nslots; i++) {
    int64_t c[IR_MAX_RANK], j = 0;
    ir_reglayout_coords(x->reg, 0, i, c);
    c[s->reduce.dim] = 0;
    if (!s->reduce.keepdim) /* the dimension is gone from dst */
      memmove(c + s->reduce.dim, c + s->reduce.dim + 1,
              sizeof(int64_t) * (size_t)(x->rank - 1 - s->reduce.dim));
    ir_reglayout_slot_of(D, 0, c, &j);
    Val v = val_to_reg(e, val_convert(e, tensor_slot_reg(x, i), work));
    part[j] = part[j].s[0] ? combine(e, s->reduce.op, part[j], v) : v;
  }
  /* 2. the lanes of the warp; 3. the warps */
  IrReducePlan p;
  ir_reduce_plan(x->reg, s->reduce.dim, &p);
  for (int64_t j = 0; j < D->nslots; j++)
    part[j] = butterfly(e, s->reduce.op, part[j], p.lane_mask);
  if (p.parts > 1) exchange(e, s, &p, emit_group_tid(e), part, work);
  for (int64_t j = 0; j < D->nslots; j++) {
    Val r = val_convert(e, part[j], d->dtype);
    emit(e, "mov%s %s, %s;", ptx_btype(d->dtype), tensor_slot_reg(d, j).s, r.s);
  }
  free(part);
}

/* ------------------------------------------------------------ fill */

/* register_tensor(init=lambda i, j: ...): the value for each slot, with
 * the indices its thread and slot parts. */
static void spread_fill(Emitter *e, const IrStmt *s) {
  const IrTensor *t = s->fill.dst;
  if (!spread_owned(e, t)) return;
  const IrRegLayout *L = layout_of(t);
  Val tc[IR_MAX_RANK];
  spread_thread_coords(e, L, emit_group_tid(e), tc);
  for (int64_t i = 0; i < L->nslots; i++) {
    int64_t lc[IR_MAX_RANK];
    ir_reglayout_coords(L, 0, i, lc);
    for (int d = 0; d < L->rank; d++) {
      e->index[d] = new_reg(e, DT_INT32);
      emit(e, "add.s32 %s, %s, %" PRId64 ";", e->index[d].s, val_to_reg(e, tc[d]).s, lc[d]);
    }
    Val v = val_convert(e, emit_expr(e, s->fill.value), t->dtype);
    emit(e, "mov%s %s, %s;", ptx_btype(t->dtype), tensor_slot_reg(t, i).s, v.s);
  }
  for (int d = 0; d < IR_MAX_RANK; d++) e->index[d].s[0] = 0;
}

/* ------------------------------------------------------------ dot */

/* The 32-bit register pairing slots i and i + 1 of a 16-bit tensor (the
 * lower index in the low half, as mma.sync's f16x2 operands want): the
 * pair ldmatrix wrote, or one packed now (once per statement: cache[i / 2]
 * remembers it). */
static Val pair(Emitter *e, const IrTensor *t, int64_t i, Val *cache) {
  if (e->ldm_pairs && e->ldm_pairs[t->id]) return pair_reg(e, t, i);
  if (cache && cache[i / 2].s[0]) return cache[i / 2];
  Val r = new_reg(e, DT_UINT32);
  emit(e, "mov.b32 %s, {%s, %s};", r.s, tensor_slot_reg(t, i).s, tensor_slot_reg(t, i + 1).s);
  if (cache) cache[i / 2] = r;
  return r;
}

/* The 32-bit register of an 8-bit tensor's slots i .. i + 3 (slot i in
 * the lowest byte, as mma.sync's .s8/.u8 operands want), packed once per
 * statement (cache[i / 4]); each slot is a 32-bit register whose lowest
 * byte is the element. */
static Val quad(Emitter *e, const IrTensor *t, int64_t i, Val *cache) {
  if (cache[i / 4].s[0]) return cache[i / 4];
  Val lo = new_reg(e, DT_UINT32), hi = new_reg(e, DT_UINT32), r = new_reg(e, DT_UINT32);
  emit(e, "prmt.b32 %s, %s, %s, 0x0040;", lo.s, tensor_slot_reg(t, i).s,
       tensor_slot_reg(t, i + 1).s);
  emit(e, "prmt.b32 %s, %s, %s, 0x0040;", hi.s, tensor_slot_reg(t, i + 2).s,
       tensor_slot_reg(t, i + 3).s);
  emit(e, "prmt.b32 %s, %s, %s, 0x5410;", r.s, lo.s, hi.s);
  cache[i / 4] = r;
  return r;
}

/* The 32-bit operand register of slots i .. of t (its elements per
 * register: 2 or 4). */
static Val operand_reg(Emitter *e, const IrTensor *t, int64_t i, Val *cache) {
  return ir_mma_epr(t->dtype) == 4 ? quad(e, t, i, cache) : pair(e, t, i, cache);
}

/* One mma.sync: tile (im, in) of dst, k16 step ik, operands' pairs from
 * A and B (d->a and d->b, or the tensors their streamed loads write: a
 * transpose keeps slot numbers), caches ca and cb. */
static void mma_step(Emitter *e, const IrDotStmt *d, const IrTensor *A, const IrTensor *B,
                     int64_t im, int64_t in, int64_t ik, Val *ca, Val *cb) {
  const IrTensor *o = d->dst;
  int epr = ir_mma_epr(d->a->dtype); /* operand elements per register */
  int64_t rn = d->b->shape[1] / (8 * d->warps_n), rk = d->a->shape[1] / (8 * epr);
  int64_t cs = (im * rn + in) * 4; /* c0..c3 of this tile */
  int64_t as = (im * rk + ik) * 4 * epr, bs = (ik * rn + in) * 2 * epr;
  Val a[4], b[2];
  for (int j = 0; j < 4; j++) a[j] = operand_reg(e, A, as + epr * j, ca);
  for (int j = 0; j < 2; j++) b[j] = operand_reg(e, B, bs + epr * j, cb);
  const IrTensor *acc = ik == 0 && d->c ? d->c : o;
  if (epr == 4) { /* m16n8k32 on 8-bit integers into int32 */
    emit(e,
         "mma.sync.aligned.m16n8k32.row.col.s32.%s.%s.s32 {%s, %s, %s, %s}, {%s, %s, %s, %s}, "
         "{%s, %s}, {%s, %s, %s, %s};",
         d->a->dtype == DT_UINT8 ? "u8" : "s8", d->b->dtype == DT_UINT8 ? "u8" : "s8",
         tensor_slot_reg(o, cs).s, tensor_slot_reg(o, cs + 1).s, tensor_slot_reg(o, cs + 2).s,
         tensor_slot_reg(o, cs + 3).s, a[0].s, a[1].s, a[2].s, a[3].s, b[0].s, b[1].s,
         tensor_slot_reg(acc, cs).s, tensor_slot_reg(acc, cs + 1).s, tensor_slot_reg(acc, cs + 2).s,
         tensor_slot_reg(acc, cs + 3).s);
    return;
  }
  const char *ab = d->a->dtype == DT_BFLOAT16 ? "bf16" : "f16";
  if (o->dtype == DT_FLOAT16) {
    Val c0 = pair(e, acc, cs, NULL), c1 = pair(e, acc, cs + 2, NULL);
    Val d0 = new_reg(e, DT_UINT32), d1 = new_reg(e, DT_UINT32);
    emit(e,
         "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%s, %s}, {%s, %s, %s, %s}, "
         "{%s, %s}, {%s, %s};",
         d0.s, d1.s, a[0].s, a[1].s, a[2].s, a[3].s, b[0].s, b[1].s, c0.s, c1.s);
    emit(e, "mov.b32 {%s, %s}, %s;", tensor_slot_reg(o, cs).s, tensor_slot_reg(o, cs + 1).s, d0.s);
    emit(e, "mov.b32 {%s, %s}, %s;", tensor_slot_reg(o, cs + 2).s, tensor_slot_reg(o, cs + 3).s,
         d1.s);
    return;
  }
  emit(e,
       "mma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32 {%s, %s, %s, %s}, {%s, %s, %s, %s}, "
       "{%s, %s}, {%s, %s, %s, %s};",
       ab, ab, tensor_slot_reg(o, cs).s, tensor_slot_reg(o, cs + 1).s, tensor_slot_reg(o, cs + 2).s,
       tensor_slot_reg(o, cs + 3).s, a[0].s, a[1].s, a[2].s, a[3].s, b[0].s, b[1].s,
       tensor_slot_reg(acc, cs).s, tensor_slot_reg(acc, cs + 1).s, tensor_slot_reg(acc, cs + 2).s,
       tensor_slot_reg(acc, cs + 3).s);
}

/* dst = a @ b + c (slot orders of ir_reglayout_mma). With operands in
 * registers: for each m16n8 tile of a warp, the k16 steps chained on the
 * destination's registers. With an operand streamed from shared memory
 * (emit_stream.c): k16 step by step, its ldmatrix then every tile's
 * mma.sync, so that only one step of it is live. */
static void spread_dot(Emitter *e, const IrStmt *s) {
  const IrDotStmt *d = &s->dot;
  const IrTensor *o = d->dst;
  const StreamedDot *sd = stream_of_dot(e, s);
  const IrStmt *la = sd ? sd->load[0] : NULL, *lb = sd ? sd->load[1] : NULL;
  const IrTensor *A = la ? la->smem.reg : d->a, *B = lb ? lb->smem.reg : d->b;
  if (!spread_owned(e, o) || !spread_owned(e, A) || !spread_owned(e, B) ||
      (d->c && !spread_owned(e, d->c)))
    return;
  int64_t rm = d->a->shape[0] / (16 * d->warps_m), rn = d->b->shape[1] / (8 * d->warps_n);
  int64_t rk = d->a->shape[1] / (8 * ir_mma_epr(d->a->dtype));
  if (!d->c) emit_spread_zero(e, o);
  Val *ca = xmalloc(sizeof(Val) * (size_t)(A->reg->nslots / 2 + 1));
  Val *cb = xmalloc(sizeof(Val) * (size_t)(B->reg->nslots / 2 + 1));
  for (int64_t i = 0; i <= A->reg->nslots / 2; i++) ca[i].s[0] = 0;
  for (int64_t i = 0; i <= B->reg->nslots / 2; i++) cb[i].s[0] = 0;
  if (sd) {
    emit(e, "// dot of line %d: %s%s%s read from shared memory k step by k step", s->span.line,
         la ? "a" : "", la && lb ? " and " : "", lb ? "b" : "");
    LdTile ta, tb;
    if (la) ldm_tile_init(e, &ta, la);
    if (lb) ldm_tile_init(e, &tb, lb);
    for (int64_t ik = 0; ik < rk; ik++) {
      if (la) ldm_steps(e, &ta, ik, ik + 1);
      if (lb) ldm_steps(e, &tb, ik, ik + 1);
      for (int64_t im = 0; im < rm; im++)
        for (int64_t in = 0; in < rn; in++) mma_step(e, d, A, B, im, in, ik, ca, cb);
    }
  } else {
    for (int64_t im = 0; im < rm; im++)
      for (int64_t in = 0; in < rn; in++)
        for (int64_t ik = 0; ik < rk; ik++) mma_step(e, d, A, B, im, in, ik, ca, cb);
  }
  free(ca);
  free(cb);
}

/* ------------------------------------------------------------ view */

/* Bits [lo, lo + n) of a thread's source slots (each `bits` wide, slot 0
 * lowest) into r: the pieces of the one or more slots under them. */
static void gather_bits(Emitter *e, const IrTensor *src, int64_t lo, int n, Val r) {
  int bits = dtype_bits(src->dtype);
  bool first = true;
  for (int64_t i = lo / bits; i * bits < lo + n; i++) {
    Val piece = new_reg(e, DT_UINT32);
    int64_t shift = i * bits - lo; /* where slot i's bit 0 lands in r */
    if (bits < 32)
      emit(e, "and.b32 %s, %s, %d;", piece.s, tensor_slot_reg(src, i).s, (1 << bits) - 1);
    else
      emit(e, "mov.b32 %s, %s;", piece.s, tensor_slot_reg(src, i).s);
    if (shift > 0) emit(e, "shl.b32 %s, %s, %" PRId64 ";", piece.s, piece.s, shift);
    if (shift < 0) emit(e, "shr.u32 %s, %s, %" PRId64 ";", piece.s, piece.s, -shift);
    if (first)
      emit(e, "mov.b32 %s, %s;", r.s, piece.s);
    else
      emit(e, "or.b32 %s, %s, %s;", r.s, r.s, piece.s);
    first = false;
  }
}

/* dst = src's bits seen as another dtype and layout (S_VIEW): dst slot j
 * is bits [j*n, j*n+n) of the thread's source slots, sign-extended for a
 * signed integer dtype, zero-extended otherwise (the registers' forms of
 * ir.h). */
static void spread_view(Emitter *e, const IrStmt *s) {
  const IrTensor *d = s->cast.dst, *x = s->cast.src;
  if (!spread_owned(e, d) || !spread_owned(e, x)) return;
  const IrRegLayout *ld = layout_of(d), *lx = layout_of(x);
  int nd = dtype_bits(d->dtype);
  if (ld->nthreads != lx->nthreads || ld->nslots * nd != lx->nslots * dtype_bits(x->dtype) ||
      dtype_class(d->dtype) != RC_B32 || dtype_class(x->dtype) != RC_B32) {
    unsupported(e, "view() between layouts with different bits per thread");
    return;
  }
  int nx = dtype_bits(x->dtype);
  const char *ext = dtype_is_signed(d->dtype) ? "s32" : "u32";
  for (int64_t j = 0; j < ld->nslots; j++) {
    Val r = tensor_slot_reg(d, j);
    int64_t lo = j * nd;
    if (nd < nx && lo / nx == (lo + nd - 1) / nx) { /* inside one source slot */
      emit(e, "bfe.%s %s, %s, %" PRId64 ", %d;", ext, r.s, tensor_slot_reg(x, lo / nx).s, lo % nx,
           nd);
      continue;
    }
    Val w = new_reg(e, DT_UINT32);
    gather_bits(e, x, lo, nd, w);
    if (nd < 32) {
      emit(e, "bfe.%s %s, %s, 0, %d;", ext, r.s, w.s, nd);
    } else {
      emit(e, "mov.b32 %s, %s;", r.s, w.s);
    }
  }
}

/* ------------------------------------------------------------ planning */

/* writers[id]: 1 while every writer seen is an ldmatrix load, 2 after any
 * other writer. */
static void scan_writers(Emitter *e, const IrBlock *b, char *writers) {
  for (int i = 0; i < b->len; i++) {
    const IrStmt *s = b->items[i];
    scan_writers(e, &s->body, writers);
    scan_writers(e, &s->orelse, writers);
    const IrTensor *ops[IR_STMT_MAX_TENSORS];
    const IrTensor *t = ir_stmt_tensors(s, ops) > 0 ? ops[0] : NULL; /* the one written */
    if (!t) continue;
    bool ldm = s->kind == S_LOAD_SHARED && t->layout == LAYOUT_SPATIAL && t->reg &&
               spread_ldmatrix_fits(e, &s->smem.shared, t);
    if (!ldm)
      writers[t->id] = 2;
    else if (writers[t->id] == 0)
      writers[t->id] = 1;
  }
}

/* Read-only buffers. The provenance of a 64-bit address is the parameters
 * it is computed from, through the variables it reads (every value each
 * is assigned); 32-bit parts (indices) are offsets, not provenance, and a
 * 64-bit value loaded from memory is of unknown provenance (slot np). */
#define PROV_MAX_PARAMS 64
typedef struct Prov {
  int np, nv;
  unsigned char *row; /* nv rows of np + 1 */
  bool changed;
} Prov;

static bool wide(DType t) { return t == DT_UINT64 || t == DT_INT64; }

static void expr_prov(const Prov *p, const IrExpr *x, unsigned char *out) {
  if (!x || !wide(x->type)) return;
  switch (x->kind) {
  case X_PARAM:
    out[x->param->index < p->np ? x->param->index : p->np] = 1;
    return;
  case X_VAR:
    for (int i = 0; i <= p->np; i++) out[i] |= p->row[(size_t)x->var->id * (p->np + 1) + i];
    return;
  case X_LOAD:
    out[p->np] = 1;
    return;
  default:
    expr_prov(p, x->a, out);
    expr_prov(p, x->b, out);
    expr_prov(p, x->c, out);
  }
}

static void assign_prov(Prov *p, const IrBlock *b) {
  for (int i = 0; i < b->len; i++) {
    const IrStmt *s = b->items[i];
    assign_prov(p, &s->body);
    assign_prov(p, &s->orelse);
    if (s->kind != S_ASSIGN || !wide(s->assign.var->type) || s->assign.var->id >= p->nv) continue;
    unsigned char *row = p->row + (size_t)s->assign.var->id * (p->np + 1);
    unsigned char add[PROV_MAX_PARAMS + 1] = {0};
    expr_prov(p, s->assign.value, add);
    for (int j = 0; j <= p->np; j++)
      if (add[j] && !row[j]) row[j] = 1, p->changed = true;
  }
}

/* Marks in written[] the provenance of every global write. */
static void write_prov(const Prov *p, const IrBlock *b, unsigned char *written) {
  for (int i = 0; i < b->len; i++) {
    const IrStmt *s = b->items[i];
    write_prov(p, &s->body, written);
    write_prov(p, &s->orelse, written);
    const IrExpr *addr = NULL;
    if (s->kind == S_STORE_GLOBAL && s->gmem.global)
      addr = s->gmem.global->gptr;
    else if (s->kind == S_TMA_STORE && s->tma.global)
      addr = s->tma.global->gptr;
    else if (s->kind == S_SEM_RELEASE)
      addr = s->sem.addr;
    else
      continue;
    unsigned char w[PROV_MAX_PARAMS + 1] = {0};
    expr_prov(p, addr, w);
    bool any = false;
    for (int j = 0; j < p->np; j++) any |= w[j];
    if (!any) w[p->np] = 1; /* written through an address of no known buffer */
    for (int j = 0; j <= p->np; j++) written[j] |= w[j];
  }
}

static void plan_readonly(Emitter *e) {
  const IrKernel *k = e->k;
  e->ro_params = arena_alloc(e->m->ar, sizeof(bool) * ((size_t)k->nparams + 1));
  if (k->nparams > PROV_MAX_PARAMS) return; /* none: every load coherent */
  int nv = 0;
  for (int i = 0; i < k->nvars; i++)
    if (k->vars[i]->id + 1 > nv) nv = k->vars[i]->id + 1;
  Prov p = {.np = k->nparams, .nv = nv};
  p.row = arena_alloc(e->m->ar, (size_t)nv * (size_t)(p.np + 1) + 1);
  do {
    p.changed = false;
    assign_prov(&p, &k->body);
  } while (p.changed);
  unsigned char written[PROV_MAX_PARAMS + 1] = {0};
  write_prov(&p, &k->body, written);
  if (written[p.np]) return;
  for (int i = 0; i < k->nparams; i++) e->ro_params[i] = k->params[i]->is_ptr && !written[i];
  e->prov = arena_alloc(e->m->ar, sizeof p);
  *e->prov = p;
}

const char *emit_nc(const Emitter *e, const IrExpr *addr) {
  if (!e->prov || !addr) return "";
  const Prov *p = e->prov;
  unsigned char w[PROV_MAX_PARAMS + 1] = {0};
  expr_prov(p, addr, w);
  bool any = false;
  for (int j = 0; j < p->np; j++) {
    if (w[j] && !e->ro_params[j]) return "";
    any |= w[j];
  }
  return any && !w[p->np] ? ".nc" : "";
}

void spread_plan(Emitter *e) {
  plan_readonly(e);
  stream_plan(e);
  int n = e->k->ntensors;
  char *writers = arena_alloc(e->m->ar, (size_t)n + 1);
  e->ldm_pairs = arena_alloc(e->m->ar, sizeof(bool) * ((size_t)n + 1));
  scan_writers(e, &e->k->body, writers);
  for (int i = 0; i < n; i++)
    e->ldm_pairs[e->k->tensors[i]->id] = writers[e->k->tensors[i]->id] == 1;
}

void spread_pair_decls(Emitter *e, FILE *out) {
  for (int i = 0; e->ldm_pairs && i < e->k->ntensors; i++) {
    const IrTensor *t = e->k->tensors[i];
    if (e->ldm_pairs[t->id] && t->reg)
      fprintf(out, "\t.reg .b32 %%tp%d_<%" PRId64 ">; // %s in pairs\n", t->id, t->reg->nslots / 2,
              t->name);
  }
}

void emit_spread_zero(Emitter *e, const IrTensor *t) {
  for (int64_t i = 0; i < t->reg->nslots; i++)
    emit(e, "mov%s %s, %s;", ptx_btype(t->dtype), tensor_slot_reg(t, i).s, zero_of(t->dtype));
}

/* ------------------------------------------------------------ dispatch */

void emit_spread_stmt(Emitter *e, const IrStmt *s) {
  if (stream_skips(e, s)) return; /* the dot reading it emits the reads */
  switch (s->kind) {
  case S_LOAD_GLOBAL:
    spread_global(e, s, true);
    break;
  case S_STORE_GLOBAL:
    if (s->gmem.scatter || s->gmem.atomic)
      emit_scatter(e, s);
    else
      spread_global(e, s, false);
    break;
  case S_LOAD_SHARED:
    spread_shared(e, s, true);
    break;
  case S_STORE_SHARED:
    if (s->smem.scatter || s->smem.atomic)
      emit_scatter(e, s);
    else
      spread_shared(e, s, false);
    break;
  case S_ELEMWISE:
    spread_elemwise(e, s);
    break;
  case S_UNARY:
    spread_unary(e, s);
    break;
  case S_REDUCE:
    if (s->reduce.scan)
      emit_scan(e, s);
    else
      spread_reduce(e, s);
    break;
  case S_FILL:
    spread_fill(e, s);
    break;
  case S_WHERE:
    spread_where(e, s);
    break;
  case S_DOT:
    spread_dot(e, s);
    break;
  case S_CONVERT:
    spread_convert(e, s);
    break;
  case S_VIEW:
    spread_view(e, s);
    break;
  case S_TRANSPOSE: /* the same registers under swapped coordinates */
  case S_RESHAPE:   /* or seen with another shape of the same size */
    if (!spread_owned(e, s->cast.dst) || !spread_owned(e, s->cast.src)) break;
    for (int64_t i = 0; i < s->cast.dst->reg->nslots; i++)
      emit(e, "mov%s %s, %s;", ptx_btype(s->cast.dst->dtype), tensor_slot_reg(s->cast.dst, i).s,
           tensor_slot_reg(s->cast.src, i).s);
    break;
  default:
    unsupported(e, "this statement on a register tensor with a spread layout");
    break;
  }
}
