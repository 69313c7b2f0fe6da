/* emit_cpasync.c: Tilus's copy_async as cp.async, and its commit groups.
 *
 * Every thread of the current group copies part of the tile. The tile is
 * cut into chunks of `width` bytes (16 when its rows are whole multiples
 * of 16 bytes, else 8 or 4), numbered row by row, and thread t of n takes
 * chunks t, t + n, t + 2n ...: a warp copies consecutive chunks of a row
 * (coalesced). A chunk is one cp.async: .cg for 16 bytes (through L2 only,
 * the one size .cg takes), .ca for 4 and 8, with a source size: the bytes
 * of the chunk that lie inside the global tensor's run-time shape, the
 * rest zero-filled (0 for a chunk outside it in an outer dimension).
 *
 * Alignment. A chunk's global address must be a multiple of its size; the
 * base pointer, the row pitch (the global tensor's last dimension) and the
 * offset in that dimension are run-time values, so the code tests them,
 * once per copy (a warp-uniform branch): when one is not a multiple of the
 * chunk size, the tile is copied element by element with ld.global and
 * st.shared instead (zero outside the tensor). That path is synchronous;
 * every later wait trivially covers it, and the barrier the program needs
 * before other threads read the tile publishes it as it publishes a
 * cp.async. Shared addresses are always aligned: tensors start on 16 bytes
 * and the rows are whole chunks. A swizzled tile (one that TMA or WGMMA
 * uses too) gets each chunk's address through the swizzle, which moves
 * 16-byte units and so keeps every chunk whole.
 */
#include <inttypes.h>

#include "backend_ptx/emit_int.h"

/* Chunks a thread copies before the copy becomes a loop. */
enum { UNROLL_MAX = 16 };

/* One copy_async statement: its shape and the registers every chunk
 * uses. The view's dimension i is global dimension dims[i]; `row` is the
 * flat index over the view's outer dimensions. */
typedef struct Tile {
  const IrCpAsyncStmt *c;
  const IrTensor *g, *sh;
  int vrank;
  int64_t vdim[IR_MAX_RANK];
  int eb;                   /* bytes per element */
  int64_t row_elems, numel; /* the view's last dimension; all its elements */
  int width;                /* chunk bytes; 0 when no chunk size fits a row */
  int64_t nthreads;
  Val base;               /* u64: the global tensor's address */
  Val gdim[IR_MAX_RANK];  /* s32: its run-time shape */
  Val off[IR_MAX_RANK];   /* s32: the offsets */
  Val pitch[IR_MAX_RANK]; /* s64: elements between neighbours in a dimension
                             (but the last, whose pitch is 1) */
  Val view;               /* u32: the view's byte offset in its tensor */
  Val tid;                /* u32: the thread's index in the group */
  Val policy;             /* b64: the L2 evict-first policy, or "" */
} Tile;

/* The widest chunk (16, 8 or 4 bytes, at least one element) that divides
 * a row of row_bytes; 0 when none does. */
static int chunk_width(int64_t row_bytes, int eb) {
  for (int w = 16; w >= 4; w /= 2)
    if (w >= eb && row_bytes % w == 0) return w;
  return 0;
}

static Val reg_of(Emitter *e, const IrExpr *x, DType t) {
  return val_to_reg(e, val_convert(e, emit_expr(e, x), t));
}

/* The global tensor's address, shape and pitches, the offsets. */
static void global_setup(Emitter *e, Tile *t) {
  const IrTensor *g = t->g;
  Val p = reg_of(e, g->gptr, DT_UINT64);
  t->base = new_reg(e, DT_UINT64);
  emit(e, "cvta.to.global.u64 %s, %s;", t->base.s, p.s);
  for (int d = 0; d < g->rank; d++) {
    t->gdim[d] = reg_of(e, g->gshape[d], DT_INT32);
    t->off[d] = reg_of(e, t->c->offsets[d], DT_INT32);
  }
  for (int d = g->rank - 2; d >= 0; d--) {
    Val inner = val_convert(e, t->gdim[d + 1], DT_INT64);
    t->pitch[d] = inner;
    if (d == g->rank - 2) continue;
    t->pitch[d] = new_reg(e, DT_INT64);
    emit(e, "mul.lo.s64 %s, %s, %s;", t->pitch[d].s, t->pitch[d + 1].s, inner.s);
  }
}

static void tile_setup(Emitter *e, const IrStmt *s, Tile *t) {
  const IrCpAsyncStmt *c = &s->cpasync;
  *t = (Tile){.c = c, .g = c->global, .sh = c->shared.t, .vrank = ir_ref_rank(&c->shared)};
  for (int i = 0; i < t->vrank; i++) t->vdim[i] = ir_ref_dim(&c->shared, i);
  t->eb = dtype_bytes(t->g->dtype);
  t->row_elems = t->vdim[t->vrank - 1];
  t->numel = 1;
  for (int i = 0; i < t->vrank; i++) t->numel *= t->vdim[i];
  t->width = chunk_width(t->row_elems * t->eb, t->eb);
  t->nthreads = e->group.single ? 1 : e->group.size;
  global_setup(e, t);
  t->view = reg_of(e, ir_ref_byte_offset(e->m->ar, &c->shared), DT_UINT32);
  t->tid = e->group.single ? val_imm(DT_UINT32, 0) : val_convert(e, emit_group_tid(e), DT_UINT32);
  t->tid = val_to_reg(e, t->tid);
  /* evict="evict_first" is a hint and is not passed on: the hinted form
   * (createpolicy + cp.async .L2::cache_hint) assembled but raised
   * CUDA_ERROR_ILLEGAL_INSTRUCTION on the H200 (tests/gpu cp_async_tma_store) */
  snprintf(t->policy.s, sizeof t->policy.s, "%s", "");
}

/* ------------------------------------------------------------ addresses */

/* x / n and x % n of an unsigned register by a constant. */
static Val udiv(Emitter *e, Val x, int64_t n, IrOp op) {
  x.type = DT_UINT32;
  return emit_int_divmod(e, op, x, val_imm(DT_UINT32, n), DT_UINT32, NULL, NULL);
}

/* The swizzle TMA and WGMMA use, on a byte offset inside the tensor: the
 * 16-byte unit (bits 4..) XOR the row of the swizzle atom (bits 7..). */
static Val swizzle_bytes(Emitter *e, Val off, int swizzle) {
  int bits = swizzle == 128 ? 3 : swizzle == 64 ? 2 : swizzle == 32 ? 1 : 0;
  if (bits == 0) return off;
  Val row = new_reg(e, DT_UINT32), out = new_reg(e, DT_UINT32);
  emit(e, "bfe.u32 %s, %s, 7, %d;", row.s, off.s, bits);
  emit(e, "shl.b32 %s, %s, 4;", row.s, row.s);
  emit(e, "xor.b32 %s, %s, %s;", out.s, off.s, row.s);
  return out;
}

/* Where element `col` of tile row `row` goes and comes from. */
typedef struct Place {
  Val saddr; /* u32 shared address, without the tensor's offset */
  Val gaddr; /* u64 global address */
  Val outer; /* pred: inside the global shape in every dimension but the last */
  Val last;  /* s32: the global coordinate in the last dimension */
} Place;

/* The view coordinates of a flat row, outermost first (constant sizes). */
static void row_coords(Emitter *e, const Tile *t, Val row, Val *coord) {
  Val rest = row;
  for (int i = t->vrank - 2; i >= 1; i--) {
    coord[i] = udiv(e, rest, t->vdim[i], OP_MOD);
    rest = udiv(e, rest, t->vdim[i], OP_DIV);
  }
  if (t->vrank >= 2) coord[0] = rest;
}

/* Global coordinate of dimension d: its offset, plus the view's
 * coordinate when the view spans d. */
static Val global_coord(Emitter *e, const Tile *t, int d, const Val *coord) {
  for (int i = 0; i < t->vrank; i++) {
    if (t->c->dims[i] != d) continue;
    Val x = new_reg(e, DT_INT32);
    emit(e, "add.s32 %s, %s, %s;", x.s, t->off[d].s, coord[i].s);
    return x;
  }
  return t->off[d];
}

static Place place(Emitter *e, const Tile *t, Val row, Val col) {
  Val coord[IR_MAX_RANK];
  row_coords(e, t, row, coord);
  coord[t->vrank - 1] = col;
  Place p = {.outer = val_imm(DT_BOOL, 1)};
  Val lin = new_reg(e, DT_INT64);
  emit(e, "mov.b64 %s, 0;", lin.s);
  for (int d = 0; d < t->g->rank; d++) {
    Val x = global_coord(e, t, d, coord);
    Val x64 = val_convert(e, x, DT_INT64);
    if (d == t->g->rank - 1) /* pitch 1 */
      emit(e, "add.s64 %s, %s, %s;", lin.s, lin.s, x64.s);
    else
      emit(e, "mad.lo.s64 %s, %s, %s, %s;", lin.s, x64.s, t->pitch[d].s, lin.s);
    if (d == t->g->rank - 1) {
      p.last = x;
    } else if (t->c->check_bounds) {
      Val in = new_reg(e, DT_BOOL);
      emit(e, "setp.lt.u32 %s, %s, %s;", in.s, x.s, t->gdim[d].s);
      if (p.outer.s[0] == '%') emit(e, "and.pred %s, %s, %s;", in.s, in.s, p.outer.s);
      p.outer = in;
    }
  }
  p.gaddr = new_reg(e, DT_UINT64);
  emit(e, "mad.lo.s64 %s, %s, %d, %s;", p.gaddr.s, lin.s, t->eb, t->base.s);
  Val off = new_reg(e, DT_UINT32);
  emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %s;", off.s, row.s, t->row_elems * t->eb, t->view.s);
  emit(e, "mad.lo.u32 %s, %s, %d, %s;", off.s, col.s, t->eb, off.s);
  Val phys = swizzle_bytes(e, off, t->sh->layout == LAYOUT_SWIZZLED ? t->sh->swizzle_bytes : 0);
  p.saddr = new_reg(e, DT_UINT32);
  emit(e, "add.u32 %s, %s, %%smem;", p.saddr.s, phys.s);
  return p;
}

/* ------------------------------------------------------------ chunks */

/* Bytes of the chunk at p to read from global memory: the elements left
 * in the row (none below 0, at most the chunk), none outside the outer
 * dimensions; the whole chunk without bounds checks. */
static Val source_bytes(Emitter *e, const Tile *t, const Place *p) {
  if (!t->c->check_bounds) return val_imm(DT_INT32, t->width);
  Val n = new_reg(e, DT_INT32);
  emit(e, "sub.s32 %s, %s, %s;", n.s, t->gdim[t->g->rank - 1].s, p->last.s);
  emit(e, "min.s32 %s, %s, %d;", n.s, n.s, t->width / t->eb);
  emit(e, "max.s32 %s, %s, 0;", n.s, n.s);
  emit(e, "mul.lo.s32 %s, %s, %d;", n.s, n.s, t->eb);
  if (p->outer.s[0] == '%') emit(e, "selp.b32 %s, %s, 0, %s;", n.s, n.s, p->outer.s);
  return n;
}

/* One cp.async of the chunk (row, chunk q of the row), under guard
 * (a predicate register) when not every thread has this chunk. */
static void emit_chunk(Emitter *e, const Tile *t, Val row, Val q, const char *guard) {
  Val col = new_reg(e, DT_UINT32);
  emit(e, "mul.lo.u32 %s, %s, %d;", col.s, q.s, t->width / t->eb);
  Place p = place(e, t, row, col);
  Val n = source_bytes(e, t, &p);
  bool hint = t->policy.s[0] != 0;
  emit(e, "%s%s%scp.async.%s.shared.global%s.L2::256B [%s+%" PRId64 "], [%s], %d, %s%s%s;",
       guard ? "@" : "", guard ? guard : "", guard ? " " : "", t->width == 16 ? "cg" : "ca",
       hint ? ".L2::cache_hint" : "", p.saddr.s, t->sh->smem_offset, p.gaddr.s, t->width, n.s,
       hint ? ", " : "", t->policy.s);
}

/* Chunk c of the tile, c a register: its row and its place in the row. */
static void emit_chunk_at(Emitter *e, const Tile *t, Val c, int64_t per_row, const char *guard) {
  Val row = per_row > 1 ? udiv(e, c, per_row, OP_DIV) : c;
  Val q = per_row > 1 ? udiv(e, c, per_row, OP_MOD) : val_to_reg(e, val_imm(DT_UINT32, 0));
  emit_chunk(e, t, row, q, guard);
}

/* Few chunks per thread: one after the other. When the thread count is a
 * multiple of the chunks per row, a thread keeps its place in the row and
 * moves down nthreads / per_row rows per chunk. */
static void chunks_unrolled(Emitter *e, const Tile *t, int64_t nchunks, int64_t per_row) {
  bool same_col = t->nthreads % per_row == 0;
  Val row0 = t->tid, q0 = {.s = "", .type = DT_UINT32};
  if (same_col) {
    if (per_row > 1) row0 = udiv(e, t->tid, per_row, OP_DIV);
    q0 = per_row > 1 ? udiv(e, t->tid, per_row, OP_MOD) : val_to_reg(e, val_imm(DT_UINT32, 0));
  }
  for (int64_t j = 0; j * t->nthreads < nchunks; j++) {
    Val c = new_reg(e, DT_UINT32), guard = {.s = ""};
    bool partial = (j + 1) * t->nthreads > nchunks;
    if (partial || !same_col)
      emit(e, "add.u32 %s, %s, %" PRId64 ";", c.s, t->tid.s, j * t->nthreads);
    if (partial) {
      guard = new_reg(e, DT_BOOL);
      emit(e, "setp.lt.u32 %s, %s, %" PRId64 ";", guard.s, c.s, nchunks);
    }
    if (!same_col) {
      emit_chunk_at(e, t, c, per_row, partial ? guard.s : NULL);
      continue;
    }
    Val row = new_reg(e, DT_UINT32);
    emit(e, "add.u32 %s, %s, %" PRId64 ";", row.s, row0.s, j * (t->nthreads / per_row));
    emit_chunk(e, t, row, q0, partial ? guard.s : NULL);
  }
}

/* Many chunks per thread (a small group, a single thread): a loop. */
static void chunks_loop(Emitter *e, const Tile *t, int64_t nchunks, int64_t per_row) {
  int top = new_label(e), done = new_label(e);
  Val c = new_reg(e, DT_UINT32), end = new_reg(e, DT_BOOL);
  emit(e, "mov.b32 %s, %s;", c.s, t->tid.s);
  emit_label(e, top);
  emit(e, "setp.ge.u32 %s, %s, %" PRId64 ";", end.s, c.s, nchunks);
  emit(e, "@%s bra $L%d;", end.s, done);
  emit_chunk_at(e, t, c, per_row, NULL);
  emit(e, "add.u32 %s, %s, %" PRId64 ";", c.s, c.s, t->nthreads);
  emit(e, "bra $L%d;", top);
  emit_label(e, done);
}

static void copy_chunks(Emitter *e, const Tile *t) {
  int64_t per_row = t->row_elems * t->eb / t->width, nchunks = t->numel * t->eb / t->width;
  if ((nchunks + t->nthreads - 1) / t->nthreads <= UNROLL_MAX)
    chunks_unrolled(e, t, nchunks, per_row);
  else
    chunks_loop(e, t, nchunks, per_row);
}

/* ------------------------------------------------------------ elements */

/* The element path: thread t copies elements t, t + n, ... with plain
 * loads and stores, zero outside the tensor. */
static void copy_elements(Emitter *e, const Tile *t) {
  const char *bt = t->eb == 2 ? ".b16" : t->eb == 4 ? ".b32" : ".b64";
  DType vt = t->eb == 2 ? DT_FLOAT16 : t->eb == 4 ? DT_UINT32 : DT_UINT64;
  int top = new_label(e), done = new_label(e);
  Val i = new_reg(e, DT_UINT32), end = new_reg(e, DT_BOOL);
  emit(e, "mov.b32 %s, %s;", i.s, t->tid.s);
  emit_label(e, top);
  emit(e, "setp.ge.u32 %s, %s, %" PRId64 ";", end.s, i.s, t->numel);
  emit(e, "@%s bra $L%d;", end.s, done);
  Val row = i, col = i;
  if (t->row_elems > 1) {
    row = udiv(e, i, t->row_elems, OP_DIV);
    col = udiv(e, i, t->row_elems, OP_MOD);
  } else {
    col = val_to_reg(e, val_imm(DT_UINT32, 0));
  }
  Place p = place(e, t, row, col);
  Val v = new_reg(e, vt), in = new_reg(e, DT_BOOL);
  emit(e, "mov%s %s, 0;", bt, v.s);
  if (t->c->check_bounds) {
    emit(e, "setp.lt.u32 %s, %s, %s;", in.s, p.last.s, t->gdim[t->g->rank - 1].s);
    if (p.outer.s[0] == '%') emit(e, "and.pred %s, %s, %s;", in.s, in.s, p.outer.s);
    emit(e, "@%s ld.global%s %s, [%s];", in.s, bt, v.s, p.gaddr.s);
  } else {
    emit(e, "ld.global%s %s, [%s];", bt, v.s, p.gaddr.s);
  }
  emit(e, "st.shared%s [%s+%" PRId64 "], %s;", bt, p.saddr.s, t->sh->smem_offset, v.s);
  emit(e, "add.u32 %s, %s, %" PRId64 ";", i.s, i.s, t->nthreads);
  emit(e, "bra $L%d;", top);
  emit_label(e, done);
}

/* ------------------------------------------------------------ the copy */

/* Whether every chunk's global address is a multiple of the chunk: a
 * chunk is at base + (offset in the last dimension) * eb, plus multiples
 * of the row pitch and whole chunks; so the first sum and the pitch must
 * be. */
static Val chunks_aligned(Emitter *e, const Tile *t) {
  int last = t->g->rank - 1;
  Val lo = new_reg(e, DT_UINT32), bits = new_reg(e, DT_UINT32), ok = new_reg(e, DT_BOOL);
  emit(e, "cvt.u32.u64 %s, %s;", lo.s, t->base.s);
  emit(e, "mad.lo.u32 %s, %s, %d, %s;", bits.s, t->off[last].s, t->eb, lo.s);
  if (t->g->rank > 1) {
    Val pitch = new_reg(e, DT_UINT32);
    emit(e, "mul.lo.u32 %s, %s, %d;", pitch.s, t->gdim[last].s, t->eb);
    emit(e, "or.b32 %s, %s, %s;", bits.s, bits.s, pitch.s);
  }
  emit(e, "and.b32 %s, %s, %d;", bits.s, bits.s, t->width - 1);
  emit(e, "setp.eq.u32 %s, %s, 0;", ok.s, bits.s);
  return ok;
}

static void emit_copy_async(Emitter *e, const IrStmt *s) {
  if (e->guard) {
    unsupported(e, "copy_async inside a predicated single_thread() region");
    return;
  }
  Tile t;
  tile_setup(e, s, &t);
  if (t.width == 0) { /* rows of 2 bytes: element by element */
    copy_elements(e, &t);
    return;
  }
  if (t.width == t.eb) { /* one element a chunk: always aligned */
    copy_chunks(e, &t);
    return;
  }
  int slow = new_label(e), done = new_label(e);
  Val ok = chunks_aligned(e, &t);
  emit(e, "@!%s bra $L%d;", ok.s, slow);
  copy_chunks(e, &t);
  emit(e, "bra $L%d;", done);
  emit_label(e, slow);
  copy_elements(e, &t);
  emit_label(e, done);
}

void emit_cpasync_stmt(Emitter *e, const IrStmt *s) {
  switch (s->kind) {
  case S_CP_ASYNC:
    emit_copy_async(e, s);
    break;
  case S_CP_COMMIT:
    emit_effect(e, "cp.async.commit_group;");
    break;
  case S_CP_WAIT:
    emit_effect(e, "cp.async.wait_group %" PRId64 ";", s->wait.max_pending);
    break;
  case S_CP_WAIT_ALL:
    emit_effect(e, "cp.async.wait_all;");
    break;
  default:
    break;
  }
}
