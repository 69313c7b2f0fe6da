/* emit_cpasync.c: Tilus's copy_async as cp.async, and its commit groups.
 *
 * Every thread of the current group copies part of the tile. The tile is
 * cut into chunks of `width` bytes (16 when its rows are whole multiples
 * of 16 bytes, else 8 or 4), numbered row by row, and thread t of n takes
 * chunks t, t + n, t + 2n ...: a warp copies consecutive chunks of a row
 * (coalesced). A chunk is one cp.async: .cg for 16 bytes (through L2 only,
 * the one size .cg takes), .ca for 4 and 8, with a source size: the bytes
 * of the chunk that lie inside the global tensor's run-time shape, the
 * rest zero-filled (0 for a chunk outside it in an outer dimension). When
 * the row length is a multiple of the chunk (whole_chunks: tested with the
 * alignment below), a chunk lies wholly inside the shape or wholly outside
 * it: then its bounds are one predicate, cp.async's ignore-src (zero-fill),
 * and no byte count is computed.
 *
 * Addresses. When n is a multiple of the chunks per row (the usual case),
 * a thread's chunks are one column of the tile, R = n / (chunks per row)
 * rows apart: its first chunk's global and shared addresses, column and
 * source bytes are computed once, and each further chunk adds R rows' bytes
 * to both addresses (a 64-bit add of a stride computed once; a constant in
 * shared memory) and tests its row (setp, selp). The other cases (chunks
 * that change column, views of more than two dimensions, the element path)
 * compute each chunk's coordinates; the part of the address that the
 * view's coordinates do not change is computed once there too. For a 2-D
 * view of a tensor whose address and row length are the kernel's
 * parameters (walk_hoisted), the thread's parts of both addresses are
 * computed once per kernel, at its start (Emitter hoist): a copy adds the
 * offsets' part of the global address, and its shared addresses are those
 * registers plus immediates when the view's offset is a constant (a
 * pipeline stage after unrolling).
 *
 * In a loop (addr_terms), a global address sums its loop-invariant terms
 * first and each moving one last, a widening multiply-add by a constant
 * byte pitch, so that ptxas computes the invariant sum before the loop.
 * Where every offset is an affine function of the loop's variable and the
 * pitches are constants (iv_plan), the address is strength-reduced: a
 * register set before the loop and advanced by a constant each trip
 * (LoopIvs), the copies of an unrolled body at immediates from it, as
 * nvcc's loop strength reduction makes of Tilus's C++.
 *
 * Alignment. A chunk's global address must be a multiple of its size; the
 * base pointer, the row pitch (the global tensor's last dimension) and the
 * offset in that dimension are run-time values, so the code tests them:
 * once per kernel when the pointer and the row length are the kernel's
 * parameters and the offset a multiple of the chunk by construction
 * (versioned: the test joins the predicate that picks the aligned copy of
 * the body, emit_spread_alignment, whose copies then have no test, and the
 * other copy tests it per copy); else once per copy (a warp-uniform
 * branch). When one is not a multiple of the chunk size, the tile is
 * copied element by element with ld.global and st.shared instead (zero
 * outside the tensor). That path is synchronous;
 * every later wait trivially covers it, and the barrier the program needs
 * before other threads read the tile publishes it as it publishes a
 * cp.async. Shared addresses are always aligned: tensors start on 16 bytes
 * and the rows are whole chunks. A swizzled tile (one that TMA or WGMMA
 * uses too) gets each chunk's address through the swizzle, which moves
 * 16-byte units and so keeps every chunk whole.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "backend_ptx/emit_int.h"

/* Chunks a thread copies before the copy becomes a loop. */
enum { UNROLL_MAX = 16 };

/* One copy_async statement: its shape and the registers every chunk
 * uses. The view's dimension i is global dimension dims[i]; `row` is the
 * flat index over the view's outer dimensions. */
typedef struct Tile {
  const IrCpAsyncStmt *c;
  const IrTensor *g, *sh;
  int vrank, last; /* last: the global tensor's last dimension */
  int64_t vdim[IR_MAX_RANK];
  int eb;                         /* bytes per element */
  int64_t row_elems, rows, numel; /* the view's last dimension; its rows; all */
  int width;                      /* chunk bytes; 0 when no chunk size fits a row */
  Swizzle swz;                    /* the shared tensor's swizzle */
  bool late;                      /* %smem is added after the swizzle (it does not commute) */
  int64_t nthreads;
  Val base;               /* u64: the global tensor's address */
  Val gdim[IR_MAX_RANK];  /* s32: its run-time shape */
  Val off[IR_MAX_RANK];   /* s32: the offsets */
  Val pitch[IR_MAX_RANK]; /* s64: elements between neighbours in dimension d,
                             for d < last - 1 (the others: gdim[last], 1) */
  /* The dimensions the view does not span stay at their offsets: */
  Val fixed_in; /* pred: those offsets are inside the shape (or imm 1) */
  /* by global dimension: the tile lies inside the shape there for every
   * value its offset can take (tile_inside), so nothing tests it */
  bool inside[IR_MAX_RANK];
  /* by global dimension: the tile lies wholly inside or wholly outside
   * (emit_tile_uniform), so its offset is tested once, in fixed_in */
  bool uniform[IR_MAX_RANK];
  Val view; /* u32: the view's byte offset in its tensor */
  Val tid;  /* u32: the thread's index in the group */
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

static bool is_reg(Val v) { return v.s[0] == '%'; }

static Val no_val(void) { return (Val){.s = "", .type = DT_INT64}; }

/* lin + x * (the pitch of global dimension d): x an s32 coordinate,
 * sign-extended; lin an s64 register or "" (0). The 64-bit product is
 * exact. */
static Val lin_add(Emitter *e, const Tile *t, Val lin, Val x, int d) {
  bool has = lin.s[0] != 0;
  if (d == t->last && !has) return val_convert(e, x, DT_INT64);
  Val r = new_reg(e, DT_INT64);
  if (d == t->last - 1) { /* pitch gdim[last]: one widening multiply(-add) */
    if (has)
      emit(e, "mad.wide.s32 %s, %s, %s, %s;", r.s, x.s, t->gdim[t->last].s, lin.s);
    else
      emit(e, "mul.wide.s32 %s, %s, %s;", r.s, x.s, t->gdim[t->last].s);
    return r;
  }
  Val x64 = val_convert(e, x, DT_INT64);
  if (d == t->last) {
    emit(e, "add.s64 %s, %s, %s;", r.s, lin.s, x64.s);
  } else if (has) {
    emit(e, "mad.lo.s64 %s, %s, %s, %s;", r.s, x64.s, t->pitch[d].s, lin.s);
  } else {
    emit(e, "mul.lo.s64 %s, %s, %s;", r.s, x64.s, t->pitch[d].s);
  }
  return r;
}

/* The bytes between neighbours in global dimension d when the shape's
 * inner dimensions are compile-time constants and the product fits 31
 * bits; else -1. */
static int64_t const_pitch_bytes(const Tile *t, int d) {
  int64_t bytes = t->eb, n;
  for (int k = d + 1; k <= t->last; k++) {
    if (!ir_is_const(t->g->gshape[k], &n) || n < 0 || (n > 0 && bytes > INT32_MAX / n)) return -1;
    bytes *= n;
  }
  return bytes;
}

/* Address acc + x * bytes, x an s32 coordinate, bytes a constant of 32
 * bits (const_pitch_bytes): one widening multiply-add, its 64-bit product
 * exact. */
static Val addr_add(Emitter *e, Val acc, Val x, int64_t bytes) {
  Val r = new_reg(e, DT_UINT64);
  x = val_to_reg(e, x);
  emit(e, "mad.wide.s32 %s, %s, %" PRId64 ", %s;", r.s, x.s, bytes, acc.s);
  return r;
}

/* A part of a global address: coordinate x (s32) of dimension d; moves:
 * it changes from one trip of the loop around the copy to the next. */
typedef struct Term {
  Val x;
  int d;
  bool moves;
} Term;

static bool spanned(const Tile *t, int d) {
  for (int i = 0; i < t->vrank; i++)
    if (t->c->dims[i] == d) return true;
  return false;
}

/* Whether the copy's offset in global dimension d changes from one trip
 * of the loop around the copy to the next. */
static bool offset_moves(const Emitter *e, const Tile *t, int d) {
  return e->loop && !ir_expr_loop_invariant(t->c->offsets[d], e->loop);
}

/* The offsets' terms of the copy's address (those not constant 0) into
 * ts, from n on, all of them (all) or those of the dimensions the view
 * does not span but the last (whose offset the caller's column holds);
 * returns the new count. */
static int offset_terms(const Emitter *e, const Tile *t, Term *ts, int n, bool all) {
  for (int d = 0; d <= t->last; d++) {
    int64_t v;
    if ((ir_is_const(t->c->offsets[d], &v) && v == 0) || (!all && (spanned(t, d) || d == t->last)))
      continue;
    ts[n++] = (Term){t->off[d], d, offset_moves(e, t, d)};
  }
  return n;
}

/* acc + the terms. Those over constant byte pitches are one widening
 * multiply-add each, those that stay the same across the loop's trips
 * first: their sum is then loop-invariant and ptxas computes it once
 * before the loop, leaving a multiply-add per moving term. The others
 * (run-time pitches) make one element index, times the element's bytes
 * once, between the two. */
static Val addr_terms(Emitter *e, const Tile *t, Val acc, const Term *ts, int n) {
  Val lin = no_val();
  for (int i = 0; i < n; i++)
    if (!ts[i].moves && const_pitch_bytes(t, ts[i].d) >= 0)
      acc = addr_add(e, acc, ts[i].x, const_pitch_bytes(t, ts[i].d));
  for (int moving = 0; moving < 2; moving++)
    for (int i = 0; i < n; i++)
      if (ts[i].moves == moving && const_pitch_bytes(t, ts[i].d) < 0)
        lin = lin_add(e, t, lin, val_to_reg(e, ts[i].x), ts[i].d);
  if (lin.s[0]) {
    Val r = new_reg(e, DT_UINT64);
    emit(e, "mad.lo.s64 %s, %s, %d, %s;", r.s, lin.s, t->eb, acc.s);
    acc = r;
  }
  for (int i = 0; i < n; i++)
    if (ts[i].moves && const_pitch_bytes(t, ts[i].d) >= 0)
      acc = addr_add(e, acc, ts[i].x, const_pitch_bytes(t, ts[i].d));
  return acc;
}

/* The bytes between elements k apart in global dimension d (d < last). */
static Val pitch_bytes(Emitter *e, const Tile *t, int d, int64_t k) {
  Val r = new_reg(e, DT_INT64);
  if (d == t->last - 1)
    emit(e, "mul.wide.s32 %s, %s, %" PRId64 ";", r.s, t->gdim[t->last].s, k);
  else
    emit(e, "mul.lo.s64 %s, %s, %" PRId64 ";", r.s, t->pitch[d].s, k);
  return r;
}

/* Whether the copy tests the bounds of global dimension d at all. */
static bool tested(const Tile *t, int d) { return t->c->check_bounds && !t->inside[d]; }

/* Whether it tests them per element or chunk (else once, in fixed_in). */
static bool checks(const Tile *t, int d) { return tested(t, d) && !t->uniform[d]; }

/* Marks the dimensions where the tile cannot leave the global shape
 * (emit_tile_inside), and those where it is wholly inside or wholly
 * outside (emit_tile_uniform). A Tilus kernel specialised on n_size and
 * k_size then copies B's tiles and A's columns with no test, as nvcc
 * compiles Tilus's own code, and a K loop's preload beyond k tests its
 * offset once per copy instead of once per chunk. */
static void tile_inside(Emitter *e, Tile *t) {
  for (int d = 0; d < t->g->rank; d++) {
    int64_t extent = 1;
    for (int i = 0; i < t->vrank; i++)
      if (t->c->dims[i] == d) extent = t->vdim[i];
    t->inside[d] = emit_tile_inside(e, t->g->gshape[d], t->c->offsets[d], extent);
    t->uniform[d] = emit_tile_uniform(e, t->g->gshape[d], t->c->offsets[d], extent);
  }
}

/* The global tensor's address, in the global state space. */
static Val global_base(Emitter *e, const Tile *t) {
  Val p = reg_of(e, t->g->gptr, DT_UINT64), base = new_reg(e, DT_UINT64);
  emit(e, "cvta.to.global.u64 %s, %s;", base.s, p.s);
  return base;
}

/* The global tensor's address, shape and pitches, the offsets, and
 * whether those of the dimensions the view does not span are inside. */
static void global_setup(Emitter *e, Tile *t) {
  const IrTensor *g = t->g;
  t->base = global_base(e, t);
  for (int d = 0; d < g->rank; d++) {
    t->gdim[d] = reg_of(e, g->gshape[d], DT_INT32);
    t->off[d] = reg_of(e, t->c->offsets[d], DT_INT32);
  }
  for (int d = t->last - 2; d >= 0; d--) {
    t->pitch[d] = new_reg(e, DT_INT64);
    if (d == t->last - 2) {
      emit(e, "mul.wide.s32 %s, %s, %s;", t->pitch[d].s, t->gdim[d + 1].s, t->gdim[t->last].s);
      continue;
    }
    Val inner = val_convert(e, t->gdim[d + 1], DT_INT64);
    emit(e, "mul.lo.s64 %s, %s, %s;", t->pitch[d].s, t->pitch[d + 1].s, inner.s);
  }
  t->fixed_in = val_imm(DT_BOOL, 1);
  for (int d = 0; d < g->rank; d++) {
    bool once = t->uniform[d] || (d < t->last && !spanned(t, d));
    if (!once || !tested(t, d)) continue;
    Val in = emit_offset_below(e, t->c->offsets[d], t->off[d], g->gshape[d], t->gdim[d]);
    if (is_reg(t->fixed_in)) emit(e, "and.pred %s, %s, %s;", in.s, in.s, t->fixed_in.s);
    t->fixed_in = in;
  }
}

static void tile_setup(Emitter *e, const IrStmt *s, Tile *t) {
  const IrCpAsyncStmt *c = &s->cpasync;
  *t = (Tile){.c = c, .g = c->global, .sh = c->shared.t, .vrank = ir_ref_rank(&c->shared)};
  t->last = t->g->rank - 1;
  for (int i = 0; i < t->vrank; i++) t->vdim[i] = ir_ref_dim(&c->shared, i);
  t->eb = dtype_bytes(t->g->dtype);
  t->row_elems = t->vdim[t->vrank - 1];
  t->numel = 1;
  for (int i = 0; i < t->vrank; i++) t->numel *= t->vdim[i];
  t->rows = t->numel / t->row_elems;
  t->width = chunk_width(t->row_elems * t->eb, t->eb);
  t->swz = tensor_swizzle(t->sh);
  t->late = !swizzle_commutes(t->swz);
  t->nthreads = e->group.single ? 1 : e->group.size;
  tile_inside(e, t);
  global_setup(e, t);
  t->view = reg_of(e, ir_ref_byte_offset(e->m->ar, &c->shared), DT_UINT32);
  t->tid = e->group.single ? val_imm(DT_UINT32, 0) : val_convert(e, emit_group_tid(e), DT_UINT32);
  t->tid = val_to_reg(e, t->tid);
  /* evict="evict_first" is a hint and is not passed on: the hinted form
   * (createpolicy + cp.async .L2::cache_hint) assembled but raised
   * CUDA_ERROR_ILLEGAL_INSTRUCTION on the H200 (tests/gpu cp_async_tma_store) */
}

/* v + imm bytes, as an address operand. */
static Val plus_imm(Val v, int64_t imm) {
  if (imm) snprintf(v.s + strlen(v.s), sizeof v.s - strlen(v.s), "+%" PRId64, imm);
  return v;
}

/* Strength reduction (LoopIvs). A copy in the body of a rotated loop
 * whose global tensor has constant pitches and whose offsets are affine
 * functions of the loop's variable (ir_loop_affine) takes its address from
 * a register that holds the thread's address (from the kernel's start)
 * plus the offsets' loop-invariant parts, plus the bytes they move per unit
 * of the variable times the variable, and advances by those bytes times
 * the step each trip. The copies of an unrolled body share it and differ
 * by immediates (the offsets' constants): the code nvcc makes of Tilus's
 * C++ (LLVM's loop strength reduction), where a copy recomputed its
 * address from the offsets (a few 64-bit instructions each). */
typedef struct IvPlan {
  IrAffine a[IR_MAX_RANK];
  int64_t stride; /* bytes per unit of the loop's variable */
  int64_t imm;    /* the constant bytes */
  bool in_reg;    /* a negative or large constant goes in the register (an
                     address's immediate is a 32-bit offset, and chunks add
                     to it) */
} IvPlan;

static bool iv_plan(Emitter *e, const Tile *t, IvPlan *p) {
  LoopIvs *L = e->ivs;
  if (!L || L->loop != e->loop || L->loop->loop.var->type != DT_INT32) return false;
  *p = (IvPlan){0};
  for (int d = 0; d <= t->last; d++) {
    int64_t bytes = const_pitch_bytes(t, d), c;
    IrAffine *a = &p->a[d];
    if (bytes < 0 ||
        !ir_loop_affine(e->m->ar, L->loop, L->at, t->c->offsets[d], e->ranges, e->multiples, a) ||
        __builtin_mul_overflow(a->num, bytes, &c) || c % a->den != 0 ||
        __builtin_add_overflow(p->stride, c / a->den, &p->stride) ||
        __builtin_mul_overflow(a->k, bytes, &c) || __builtin_add_overflow(p->imm, c, &p->imm))
      return false;
  }
  p->in_reg = p->imm < 0 || p->imm > INT32_MAX / 2;
  return p->stride >= INT32_MIN && p->stride <= INT32_MAX;
}

/* The planned address: its register (made before the loop the first time
 * the loop's body asks for it; thread_key names the thread's address) and
 * *imm. */
static Val iv_reg(Emitter *e, const Tile *t, const IvPlan *p, const char *thread_key, Val thread,
                  int64_t *imm) {
  LoopIvs *L = e->ivs;
  char *key = NULL;
  size_t len = 0;
  FILE *k = open_memstream(&key, &len);
  fprintf(k, "%s|%d", thread_key, t->g->id);
  for (int d = 0; d <= t->last; d++) {
    fprintf(k, "|%" PRId64 "/%" PRId64 ":", p->a[d].num, p->a[d].den);
    if (p->a[d].rest) ir_print_expr(k, p->a[d].rest);
  }
  if (p->in_reg) fprintf(k, "|%" PRId64, p->imm);
  fclose(k);
  int i = 0;
  while (i < L->n && strcmp(L->iv[i].key, key) != 0) i++;
  if (i == L->n) {
    FILE *body = e->out;
    e->out = L->pre;
    Val acc = thread;
    for (int d = 0; d <= t->last; d++)
      if (p->a[d].rest)
        acc = addr_add(e, acc, reg_of(e, p->a[d].rest, DT_INT32), const_pitch_bytes(t, d));
    Val r = new_reg(e, DT_UINT64);
    emit(e, "mad.wide.s32 %s, %s, %" PRId64 ", %s;", r.s, var_reg(L->loop->loop.var).s, p->stride,
         acc.s);
    if (p->in_reg) emit(e, "add.s64 %s, %s, %" PRId64 ";", r.s, r.s, p->imm);
    e->out = body;
    if (L->n == L->cap) {
      L->cap = L->cap ? 2 * L->cap : 8;
      L->iv = realloc(L->iv, (size_t)L->cap * sizeof *L->iv);
    }
    L->iv[L->n++] = (LoopIv){arena_strdup(e->m->ar, key), r, p->stride};
  }
  free(key);
  *imm = p->in_reg ? 0 : p->imm;
  return L->iv[i].reg;
}

/* Whether x can be computed at the kernel's start: constants, parameters
 * and special registers, combined. */
static bool hoistable(const IrExpr *x) {
  if (!x) return true;
  switch (x->kind) {
  case X_CONST:
  case X_PARAM:
  case X_SPECIAL:
    return true;
  case X_CAST:
  case X_UNARY:
  case X_BINARY:
    return hoistable(x->a) && hoistable(x->b);
  default:
    return false;
  }
}

/* ------------------------------------------------------------ addresses */

/* x / n and x % n of an unsigned register below `below` by a constant. */
static Val udiv(Emitter *e, Val x, int64_t n, IrOp op, int64_t below) {
  x.type = DT_UINT32;
  IrRange r = {0, below - 1};
  return emit_int_divmod(e, op, x, val_imm(DT_UINT32, n), DT_UINT32, &r, NULL);
}

/* The thread's row (tid / per_row) and chunk in the row (tid % per_row)
 * in its group, as registers: what the hoisted addresses start from. */
static void thread_chunk(Emitter *e, const Tile *t, int64_t per_row, Val *row, Val *q) {
  Val tid = val_to_reg(e, val_convert(e, emit_group_tid(e), DT_UINT32));
  *row = tid, *q = val_to_reg(e, val_imm(DT_UINT32, 0));
  if (per_row > 1) {
    *row = val_to_reg(e, udiv(e, tid, per_row, OP_DIV, t->nthreads));
    *q = val_to_reg(e, udiv(e, tid, per_row, OP_MOD, t->nthreads));
  }
}

/* An address before the swizzle -> after it. Addresses before the swizzle
 * hold %smem already when it commutes with the swizzle: %smem is a
 * multiple of 1024 (emit.c), which leaves the bits a swizzle of rows of at
 * most 128 bytes reads and writes (4 to 9) as they are; else (t->late)
 * they are offsets in the tensor, and %smem is added after. */
static Val swizzled(Emitter *e, const Tile *t, Val a) {
  Val s = smem_swizzle(e, a, t->swz);
  if (!t->late) return s;
  Val r = new_reg(e, DT_UINT32);
  emit(e, "add.u32 %s, %s, %%smem;", r.s, s.s);
  return r;
}

/* An offset in the tile's tensor -> an address before the swizzle. */
static Val pre_swizzle(Emitter *e, const Tile *t, Val off) {
  if (t->late) return off;
  Val a = new_reg(e, DT_UINT32);
  emit(e, "add.u32 %s, %s, %%smem;", a.s, off.s);
  return a;
}

/* The shared address of byte offset `off` of the tile's tensor (without
 * the tensor's own offset, which goes in the instruction), after its
 * swizzle. */
static Val shared_addr(Emitter *e, const Tile *t, Val off) {
  return swizzled(e, t, pre_swizzle(e, t, off));
}

/* The shared byte offset of element `col` of tile row `row` (col_bytes
 * apart; col a register, or none for column 0). */
static Val shared_offset(Emitter *e, const Tile *t, Val row, Val col, int col_bytes) {
  Val off = new_reg(e, DT_UINT32);
  emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %s;", off.s, row.s, t->row_elems * t->eb, t->view.s);
  if (is_reg(col)) emit(e, "mad.lo.u32 %s, %s, %d, %s;", off.s, col.s, col_bytes, off.s);
  return off;
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
    coord[i] = udiv(e, rest, t->vdim[i], OP_MOD, t->rows);
    rest = udiv(e, rest, t->vdim[i], OP_DIV, t->rows);
  }
  if (t->vrank >= 2) coord[0] = rest;
}

/* Where a chunk's tile coordinates come from when they are the thread's
 * own (chunks_unrolled, the thread's column fixed): row = tid / per_row +
 * row_add, chunk tid % per_row of the row. */
typedef struct Spot {
  int64_t per_row, row_add;
} Spot;

/* The global address of the thread's chunk at spot s with the offsets at
 * zero, computed once at the kernel's start (Emitter hoist; the tensor's
 * address must be known there); *key names it. */
static Val spot_address(Emitter *e, const Tile *t, const Spot *s, char *key, size_t size) {
  int n = snprintf(key, size, "cpp %d %" PRId64 " %" PRId64 " %" PRId64 " %d %" PRId64, t->g->id,
                   e->group.begin, t->nthreads, s->per_row, t->width, s->row_add);
  for (int i = 0; i < t->vrank && n > 0 && (size_t)n < size; i++)
    n += snprintf(key + n, size - (size_t)n, " %d:%" PRId64, t->c->dims[i], t->vdim[i]);
  Val a;
  if (hoist_find(e, key, &a, 1)) return a;
  FILE *saved = hoist_begin(e);
  Val row, q, coord[IR_MAX_RANK];
  thread_chunk(e, t, s->per_row, &row, &q);
  if (s->row_add) {
    Val r = new_reg(e, DT_UINT32);
    emit(e, "add.u32 %s, %s, %" PRId64 ";", r.s, row.s, s->row_add);
    row = r;
  }
  row_coords(e, t, row, coord);
  coord[t->vrank - 1] = new_reg(e, DT_UINT32);
  emit(e, "mul.lo.u32 %s, %s, %d;", coord[t->vrank - 1].s, q.s, t->width / t->eb);
  a = global_base(e, t);
  for (int i = 0; i < t->vrank; i++)
    a = addr_add(e, a, coord[i], const_pitch_bytes(t, t->c->dims[i]));
  hoist_end(e, saved, key, &a, 1);
  return a;
}

/* Any element of the tile (row below t->rows): its coordinates, then its
 * addresses and bounds; spot: where the coordinates come from, when they
 * are the thread's own (else NULL). */
static Place place(Emitter *e, const Tile *t, Val row, Val col, const Spot *spot) {
  Val coord[IR_MAX_RANK];
  row_coords(e, t, row, coord);
  coord[t->vrank - 1] = col;
  Place p = {.outer = t->fixed_in};
  Term ts[2 * IR_MAX_RANK];
  int n = 0;
  for (int i = t->vrank - 1; i >= 0; i--) {
    int d = t->c->dims[i];
    Val x = new_reg(e, DT_INT32);
    emit(e, "add.s32 %s, %s, %s;", x.s, t->off[d].s, coord[i].s);
    ts[n++] = (Term){x, d, offset_moves(e, t, d)};
    if (i == t->vrank - 1) {
      p.last = x;
    } else if (checks(t, d)) {
      Val in = new_reg(e, DT_BOOL);
      emit(e, "setp.lt.u32 %s, %s, %s;", in.s, x.s, t->gdim[d].s);
      if (is_reg(p.outer)) emit(e, "and.pred %s, %s, %s;", in.s, in.s, p.outer.s);
      p.outer = in;
    }
  }
  IvPlan plan;
  if (spot && !e->group.single && hoistable(t->g->gptr) && iv_plan(e, t, &plan)) {
    char key[200];
    int64_t imm;
    Val thread = spot_address(e, t, spot, key, sizeof key);
    Val r = iv_reg(e, t, &plan, key, thread, &imm);
    p.gaddr = plus_imm(r, imm);
  } else {
    p.gaddr = addr_terms(e, t, t->base, ts, offset_terms(e, t, ts, n, false));
  }
  p.saddr = shared_addr(e, t, shared_offset(e, t, row, col, t->eb));
  return p;
}

/* ------------------------------------------------------------ chunks */

/* The predicate that the element or chunk at last coordinate x lies
 * inside the shape, x and the outer dimensions (outer: their predicate, or
 * imm 1); "" when nothing is tested (no bounds to check, or all proved). */
static Val inside_pred(Emitter *e, const Tile *t, Val x, Val outer) {
  if (!checks(t, t->last)) return is_reg(outer) ? outer : (Val){.s = "", .type = DT_BOOL};
  Val in = new_reg(e, DT_BOOL);
  if (is_reg(outer))
    emit(e, "setp.lt.and.u32 %s, %s, %s, %s;", in.s, x.s, t->gdim[t->last].s, outer.s);
  else
    emit(e, "setp.lt.u32 %s, %s, %s;", in.s, x.s, t->gdim[t->last].s);
  return in;
}

/* Bytes of a chunk to read from global memory, its last coordinate x:
 * the elements left in the row (at most the chunk) when x is inside it,
 * none when x or an outer coordinate (outer) is outside the shape; the
 * whole chunk without bounds checks. A chunk starting left of the row
 * lies wholly left of it: x is a multiple of the chunk's elements on the
 * chunk path (chunks_aligned). */
static Val source_bytes(Emitter *e, const Tile *t, Val x, Val outer) {
  Val in = inside_pred(e, t, x, outer), n = val_imm(DT_INT32, t->width);
  if (!is_reg(in)) return n;
  if (checks(t, t->last)) {
    n = new_reg(e, DT_INT32);
    emit(e, "sub.s32 %s, %s, %s;", n.s, t->gdim[t->last].s, x.s);
    emit(e, "min.s32 %s, %s, %d;", n.s, n.s, t->width / t->eb);
    emit(e, "mul.lo.s32 %s, %s, %d;", n.s, n.s, t->eb);
  }
  Val bytes = new_reg(e, DT_INT32);
  emit(e, "selp.b32 %s, %s, 0, %s;", bytes.s, n.s, in.s);
  return bytes;
}

/* Whether every chunk lies wholly inside the row or wholly outside it:
 * the row length is a multiple of the chunk (chunks_aligned tested it,
 * with the offset; or a chunk is one element). Then a chunk is copied or
 * zero-filled whole, and its bounds are one predicate (cp.async's
 * ignore-src) instead of a byte count. */
static bool whole_chunks(const Tile *t) { return t->width == t->eb || t->g->rank > 1; }

/* For whole chunks: the predicate that the chunk at last coordinate x is
 * outside the tensor (x, or an outer coordinate: not outer); "" when there
 * are no bounds to check. */
static Val chunk_out(Emitter *e, const Tile *t, Val x, Val outer) {
  Val in = inside_pred(e, t, x, outer);
  if (!is_reg(in)) return in;
  Val out = new_reg(e, DT_BOOL);
  emit(e, "not.pred %s, %s;", out.s, in.s);
  return out;
}

/* One cp.async, under guard (a predicate register) when not every thread
 * has this chunk; soff: a constant added to the shared address. */
static void emit_cp(Emitter *e, const Tile *t, Val saddr, int64_t soff, Val gaddr, Val n,
                    const char *guard) {
  emit(e, "%s%s%scp.async.%s.shared.global.L2::256B [%s+%" PRId64 "], [%s], %d, %s;",
       guard ? "@" : "", guard ? guard : "", guard ? " " : "", t->width == 16 ? "cg" : "ca",
       saddr.s, t->sh->smem_offset + soff, gaddr.s, t->width, n.s);
}

/* A whole chunk: copied, or zero-filled when out (a predicate; "": never). */
static void emit_cp_whole(Emitter *e, const Tile *t, Val saddr, int64_t soff, Val gaddr, Val out,
                          const char *guard) {
  emit(e, "%s%s%scp.async.%s.shared.global.L2::256B [%s+%" PRId64 "], [%s], %d%s%s;",
       guard ? "@" : "", guard ? guard : "", guard ? " " : "", t->width == 16 ? "cg" : "ca",
       saddr.s, t->sh->smem_offset + soff, gaddr.s, t->width, is_reg(out) ? ", " : "",
       is_reg(out) ? out.s : "");
}

/* The chunk (row, chunk q of the row). */
static void emit_chunk(Emitter *e, const Tile *t, Val row, Val q, const char *guard,
                       const Spot *spot) {
  Val col = new_reg(e, DT_UINT32);
  emit(e, "mul.lo.u32 %s, %s, %d;", col.s, q.s, t->width / t->eb);
  Place p = place(e, t, row, col, spot);
  emit_cp(e, t, p.saddr, 0, p.gaddr, source_bytes(e, t, p.last, p.outer), guard);
}

/* Chunk c of the tile (below `below`), c a register: its row and its
 * place in the row. */
static void emit_chunk_at(Emitter *e, const Tile *t, Val c, int64_t per_row, const char *guard,
                          int64_t below) {
  Val row = per_row > 1 ? udiv(e, c, per_row, OP_DIV, below) : c;
  Val q = per_row > 1 ? udiv(e, c, per_row, OP_MOD, below) : val_to_reg(e, val_imm(DT_UINT32, 0));
  emit_chunk(e, t, row, q, guard, NULL);
}

/* Few chunks per thread, not all in one column of a 2-D view: one after
 * the other, each placed from its coordinates. When the thread count is a
 * multiple of the chunks per row, a thread keeps its place in the row and
 * moves down nthreads / per_row rows per chunk. */
static void chunks_unrolled(Emitter *e, const Tile *t, int64_t nchunks, int64_t per_row) {
  bool same_col = t->nthreads % per_row == 0;
  Val row0 = t->tid, q0 = {.s = "", .type = DT_UINT32};
  if (same_col) {
    if (per_row > 1) row0 = udiv(e, t->tid, per_row, OP_DIV, t->nthreads);
    q0 = per_row > 1 ? udiv(e, t->tid, per_row, OP_MOD, t->nthreads)
                     : val_to_reg(e, val_imm(DT_UINT32, 0));
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
      emit_chunk_at(e, t, c, per_row, partial ? guard.s : NULL, (j + 1) * t->nthreads);
      continue;
    }
    Val row = new_reg(e, DT_UINT32);
    emit(e, "add.u32 %s, %s, %" PRId64 ";", row.s, row0.s, j * (t->nthreads / per_row));
    Spot spot = {per_row, j * (t->nthreads / per_row)};
    emit_chunk(e, t, row, q0, partial ? guard.s : NULL, &spot);
  }
}

/* Many chunks per thread, not in one column (a single thread): a loop. */
static void chunks_loop(Emitter *e, const Tile *t, int64_t nchunks, int64_t per_row) {
  int top = new_label(e), done = new_label(e);
  Val c = new_reg(e, DT_UINT32), end = new_reg(e, DT_BOOL);
  emit(e, "mov.b32 %s, %s;", c.s, t->tid.s);
  emit_label(e, top);
  emit(e, "setp.ge.u32 %s, %s, %" PRId64 ";", end.s, c.s, nchunks);
  emit(e, "@%s bra $L%d;", end.s, done);
  emit_chunk_at(e, t, c, per_row, NULL, nchunks);
  emit(e, "add.u32 %s, %s, %" PRId64 ";", c.s, c.s, t->nthreads);
  emit(e, "bra $L%d;", top);
  emit_label(e, done);
}

/* ------------------------------------------------------------ columns */

/* A thread's chunks when they are one column of a view of one or two
 * dimensions: rows r0, r0 + step ... of the tile, at one column. The
 * registers are the first chunk's (the loop advances them in place). */
typedef struct Walk {
  int64_t step; /* rows between the thread's chunks */
  Val row;      /* u32: r0, the chunk's row in the tile */
  Val grow;     /* s32: its global row coordinate; "" for a 1-D view */
  Val gaddr;    /* u64: its global address is gaddr + gimm */
  int64_t gimm;
  Val gstep;       /* s64: global bytes between the chunks */
  int64_t gstep_c; /* the same when constant, else -1 */
  Val nbytes;      /* s32: source bytes of a chunk whose row is inside the shape */
  bool whole;      /* whole_chunks: out instead of nbytes */
  Val out;         /* pred: a chunk is outside the shape by its column (or "") */
  Val saddr;       /* u32: its shared address before the swizzle */
  int64_t sstep;   /* shared bytes between the chunks */
  /* Adding a multiple of the swizzle's period (swizzle_period) commutes
   * with it: chunk j's address is chunk (j % srep)'s + a constant, those
   * of the first srep chunks go through the swizzle (swz, when first
   * needed). */
  int64_t srep;
  Val swz[8];
  /* Hoisted (walk_hoisted): the thread's shared address is a kernel
   * invariant; a chunk at constant offset C from it (the view's offset when
   * constant, plus the chunk's rows) is at hoisted swizzle(S + C % P) +
   * (C - C % P), P the swizzle's period (shift: the view's run-time offset,
   * a multiple of P, added to those registers once per copy). */
  bool hoisted;
  Val sthread;   /* u32: S, the thread's row and chunk before the swizzle */
  int64_t sview; /* the view's constant offset (or 0) */
  Val shift;     /* u32: the view's run-time offset, or "" */
  const char *hkey;
  int nlo;
  int64_t lo[8];
  Val lo_reg[8];
} Walk;

/* Everything that is the same for all the thread's chunks, or that
 * advances by a constant stride. */
static Walk walk_setup(Emitter *e, const Tile *t, int64_t per_row, bool many) {
  Walk w = {
      .step = t->nthreads / per_row, .row = t->tid, .grow = no_val(), .srep = 1, .gstep_c = -1};
  w.sstep = w.step * t->row_elems * t->eb;
  int64_t period = swizzle_period(t->swz);
  w.srep = period / ir_gcd(w.sstep, period);
  Val q = no_val(), x = t->off[t->last]; /* the chunk in the row; its global column */
  Term ts[IR_MAX_RANK + 2];
  int n = 0;
  if (per_row > 1) {
    w.row = udiv(e, t->tid, per_row, OP_DIV, t->nthreads);
    q = udiv(e, t->tid, per_row, OP_MOD, t->nthreads);
    x = new_reg(e, DT_INT32);
    emit(e, "mad.lo.s32 %s, %s, %d, %s;", x.s, q.s, t->width / t->eb, t->off[t->last].s);
  }
  ts[n++] = (Term){x, t->last, offset_moves(e, t, t->last)};
  /* the global address: the thread's coordinates, then the offsets */
  w.whole = whole_chunks(t);
  if (w.whole)
    w.out = chunk_out(e, t, x, t->fixed_in);
  else
    w.nbytes = source_bytes(e, t, x, t->fixed_in);
  if (t->vrank == 2) {
    int d0 = t->c->dims[0];
    w.grow = new_reg(e, DT_INT32);
    emit(e, "add.s32 %s, %s, %s;", w.grow.s, t->off[d0].s, w.row.s);
    ts[n++] = (Term){w.grow, d0, offset_moves(e, t, d0)};
    if (many) w.gstep = pitch_bytes(e, t, d0, w.step * t->eb);
  }
  w.gaddr = addr_terms(e, t, t->base, ts, offset_terms(e, t, ts, n, false));
  w.saddr = pre_swizzle(e, t, shared_offset(e, t, w.row, q, t->width));
  for (int i = 0; i < 8; i++) w.swz[i] = no_val();
  return w;
}

/* Whether walk_hoisted applies: a 2-D view whose rows are the global
 * tensor's rows (pitch: its last dimension), the tensor's address and row
 * length known at the kernel's start. */
static bool walk_hoistable(const Emitter *e, const Tile *t) {
  const IrTensor *g = t->g;
  return !e->group.single && t->vrank == 2 && t->last >= 1 && t->c->dims[0] == t->last - 1 &&
         t->c->dims[1] == t->last && hoistable(g->gptr) && hoistable(g->gshape[t->last]);
}

/* walk_setup with the thread's parts computed once per kernel (Emitter
 * hoist): its row r and column q (chunks), the global address of its chunk
 * at offsets zero, base + (r * pitch + q * chunk) bytes, the stride between
 * its chunks, and its shared address before the view's offset. A copy then
 * adds the offsets' part of the global address, (off0 * pitch + off1) *
 * bytes, and the view's (a constant after unrolling: an immediate). */
static Walk walk_hoisted(Emitter *e, const Tile *t, int64_t per_row, bool many) {
  Walk w = {
      .step = t->nthreads / per_row, .grow = no_val(), .srep = 1, .hoisted = true, .gstep_c = -1};
  w.sstep = w.step * t->row_elems * t->eb;
  char key[160];
  snprintf(key, sizeof key, "cpw %d %" PRId64 " %" PRId64 " %" PRId64 " %d %d %" PRId64 " %" PRId64,
           t->g->id, e->group.begin, t->nthreads, per_row, t->width, t->eb, t->row_elems, w.step);
  w.hkey = arena_strdup(e->m->ar, key);
  /* row, column (elements), global address at offsets zero, shared address */
  Val h[4];
  if (!hoist_find(e, key, h, 4)) {
    FILE *saved = hoist_begin(e);
    Val row, q;
    thread_chunk(e, t, per_row, &row, &q);
    Val qe = new_reg(e, DT_INT32);
    emit(e, "mul.lo.s32 %s, %s, %d;", qe.s, q.s, t->width / t->eb);
    Val pitch = reg_of(e, t->g->gshape[t->last], DT_INT32), base = global_base(e, t);
    Val lin = new_reg(e, DT_INT64), ga = new_reg(e, DT_UINT64), sa = new_reg(e, DT_UINT32);
    emit(e, "cvt.s64.s32 %s, %s;", lin.s, qe.s);
    emit(e, "mad.wide.s32 %s, %s, %s, %s;", lin.s, row.s, pitch.s, lin.s);
    emit(e, "mad.lo.s64 %s, %s, %d, %s;", ga.s, lin.s, t->eb, base.s);
    emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %s;", sa.s, row.s, t->row_elems * t->eb,
         t->late ? "0" : "%smem");
    emit(e, "mad.lo.u32 %s, %s, %d, %s;", sa.s, q.s, t->width, sa.s);
    h[0] = row, h[1] = qe, h[2] = ga, h[3] = sa;
    hoist_end(e, saved, key, h, 4);
  }
  w.row = h[0], w.sthread = h[3];
  Val x = t->off[t->last];
  if (per_row > 1) {
    x = new_reg(e, DT_INT32);
    emit(e, "add.s32 %s, %s, %s;", x.s, t->off[t->last].s, h[1].s);
  }
  w.whole = whole_chunks(t);
  if (w.whole)
    w.out = chunk_out(e, t, x, t->fixed_in);
  else
    w.nbytes = source_bytes(e, t, x, t->fixed_in);
  int d0 = t->c->dims[0];
  w.grow = new_reg(e, DT_INT32);
  emit(e, "add.s32 %s, %s, %s;", w.grow.s, t->off[d0].s, w.row.s);
  /* the offsets' part of the address */
  IvPlan plan;
  if (iv_plan(e, t, &plan)) {
    w.gaddr = iv_reg(e, t, &plan, w.hkey, h[2], &w.gimm);
  } else {
    Term ts[IR_MAX_RANK];
    w.gaddr = addr_terms(e, t, h[2], ts, offset_terms(e, t, ts, 0, true));
  }
  int64_t pitch = const_pitch_bytes(t, d0);
  if (many && pitch >= 0) w.gstep_c = pitch * w.step;
  if (many) {
    snprintf(key, sizeof key, "%s step", w.hkey);
    if (!hoist_find(e, key, &w.gstep, 1)) {
      FILE *saved = hoist_begin(e);
      Val pitch = reg_of(e, t->g->gshape[t->last], DT_INT32);
      w.gstep = new_reg(e, DT_INT64);
      emit(e, "mul.wide.s32 %s, %s, %" PRId64 ";", w.gstep.s, pitch.s, w.step * t->eb);
      hoist_end(e, saved, key, &w.gstep, 1);
    }
  }
  /* the view's offset: constant, a multiple of the swizzle's period, or
   * neither (then every chunk's address goes through the swizzle) */
  const IrExpr *voff = ir_ref_byte_offset(e->m->ar, &t->c->shared);
  int64_t period = swizzle_period(t->swz);
  w.shift = no_val();
  if (ir_is_const(voff, &w.sview) && w.sview >= 0) {
  } else if (ir_expr_multiple(voff, e->multiples) % period == 0) {
    w.sview = 0;
    w.shift = t->view;
  } else {
    w.hoisted = false;
    w.srep = period / ir_gcd(w.sstep, period);
    w.saddr = new_reg(e, DT_UINT32);
    emit(e, "add.u32 %s, %s, %s;", w.saddr.s, w.sthread.s, t->view.s);
  }
  for (int i = 0; i < 8; i++) w.swz[i] = no_val();
  return w;
}

/* The shared address of the walk's chunk j: a register (returned) plus
 * *imm bytes. */
static Val walk_shared(Emitter *e, const Tile *t, Walk *w, int64_t j, int64_t *imm) {
  if (w->hoisted) {
    int64_t period = swizzle_period(t->swz);
    int64_t c = w->sview + j * w->sstep, lo = c % period;
    *imm = c - lo;
    for (int i = 0; i < w->nlo; i++)
      if (w->lo[i] == lo) return w->lo_reg[i];
    char key[200];
    snprintf(key, sizeof key, "%s swz %d %d %" PRId64, w->hkey, t->swz.bits, t->swz.shift, lo);
    Val r;
    if (!hoist_find(e, key, &r, 1)) {
      FILE *saved = hoist_begin(e);
      Val a = new_reg(e, DT_UINT32);
      emit(e, "add.u32 %s, %s, %" PRId64 ";", a.s, w->sthread.s, lo);
      r = swizzled(e, t, a);
      hoist_end(e, saved, key, &r, 1);
    }
    if (is_reg(w->shift)) {
      Val x = new_reg(e, DT_UINT32);
      emit(e, "add.u32 %s, %s, %s;", x.s, r.s, w->shift.s);
      r = x;
    }
    if (w->nlo < 8) w->lo[w->nlo] = lo, w->lo_reg[w->nlo++] = r;
    return r;
  }
  int64_t j0 = w->srep <= 8 ? j % w->srep : j;
  *imm = (j - j0) * w->sstep;
  if (j0 < 8 && is_reg(w->swz[j0])) return w->swz[j0];
  Val s = w->saddr;
  if (j0 > 0) {
    s = new_reg(e, DT_UINT32);
    emit(e, "add.u32 %s, %s, %" PRId64 ";", s.s, w->saddr.s, j0 * w->sstep);
  }
  s = swizzled(e, t, s);
  if (j0 < 8) w->swz[j0] = s;
  return s;
}

/* The thread's chunk j steps below the walk's first: the source bytes by
 * its row, at global address gaddr and shared address s + soff. */
static void walk_chunk(Emitter *e, const Tile *t, const Walk *w, int64_t j, Val gaddr, Val s,
                       int64_t soff, const char *guard) {
  if (w->whole) {
    Val out = w->out;
    if (is_reg(w->grow) && checks(t, t->c->dims[0])) {
      Val x = w->grow;
      if (j > 0) {
        x = new_reg(e, DT_INT32);
        emit(e, "add.s32 %s, %s, %" PRId64 ";", x.s, w->grow.s, j * w->step);
      }
      Val o = new_reg(e, DT_BOOL);
      if (is_reg(out))
        emit(e, "setp.ge.or.u32 %s, %s, %s, %s;", o.s, x.s, t->gdim[t->c->dims[0]].s, out.s);
      else
        emit(e, "setp.ge.u32 %s, %s, %s;", o.s, x.s, t->gdim[t->c->dims[0]].s);
      out = o;
    }
    emit_cp_whole(e, t, s, soff, gaddr, out, guard);
    return;
  }
  Val n = w->nbytes;
  if (is_reg(w->grow) && checks(t, t->c->dims[0])) {
    Val x = w->grow, in = new_reg(e, DT_BOOL);
    if (j > 0) {
      x = new_reg(e, DT_INT32);
      emit(e, "add.s32 %s, %s, %" PRId64 ";", x.s, w->grow.s, j * w->step);
    }
    emit(e, "setp.lt.u32 %s, %s, %s;", in.s, x.s, t->gdim[t->c->dims[0]].s);
    n = new_reg(e, DT_INT32);
    emit(e, "selp.b32 %s, %s, 0, %s;", n.s, w->nbytes.s, in.s);
  }
  emit_cp(e, t, s, soff, gaddr, n, guard);
}

/* Few chunks per thread: one after the other; thread t has chunk j when
 * t + j * nthreads < nchunks. */
static void walk_unrolled(Emitter *e, const Tile *t, Walk *w, int64_t nchunks) {
  Val g = w->gaddr;
  for (int64_t j = 0; j * t->nthreads < nchunks; j++) {
    if (j > 0 && w->gstep_c < 0) {
      Val next = new_reg(e, DT_UINT64);
      emit(e, "add.s64 %s, %s, %s;", next.s, g.s, w->gstep.s);
      g = next;
    }
    Val at = plus_imm(g, w->gimm + (w->gstep_c >= 0 ? j * w->gstep_c : 0));
    Val guard = {.s = ""};
    if ((j + 1) * t->nthreads > nchunks) {
      guard = new_reg(e, DT_BOOL);
      emit(e, "setp.lt.u32 %s, %s, %" PRId64 ";", guard.s, t->tid.s, nchunks - j * t->nthreads);
    }
    int64_t soff;
    Val s = walk_shared(e, t, w, j, &soff);
    walk_chunk(e, t, w, j, at, s, soff, guard.s[0] ? guard.s : NULL);
  }
}

/* Many chunks per thread (a small group): a loop over the thread's rows,
 * which advances the walk's registers (all its own) in place. */
static void walk_loop(Emitter *e, const Tile *t, Walk *w) {
  int top = new_label(e), done = new_label(e);
  Val r = new_reg(e, DT_UINT32), end = new_reg(e, DT_BOOL);
  /* without a swizzle to recompute, the loop advances the swizzled address */
  Val s = w->saddr;
  if (w->srep == 1) { /* a register of its own: the loop advances it */
    s = new_reg(e, DT_UINT32);
    emit(e, "mov.b32 %s, %s;", s.s, swizzled(e, t, w->saddr).s);
  }
  emit(e, "mov.b32 %s, %s;", r.s, w->row.s);
  emit_label(e, top);
  emit(e, "setp.ge.u32 %s, %s, %" PRId64 ";", end.s, r.s, t->rows);
  emit(e, "@%s bra $L%d;", end.s, done);
  walk_chunk(e, t, w, 0, w->gaddr, w->srep == 1 ? s : swizzled(e, t, s), 0, NULL);
  emit(e, "add.u32 %s, %s, %" PRId64 ";", r.s, r.s, w->step);
  emit(e, "add.s64 %s, %s, %s;", w->gaddr.s, w->gaddr.s, w->gstep.s);
  if (is_reg(w->grow)) emit(e, "add.s32 %s, %s, %" PRId64 ";", w->grow.s, w->grow.s, w->step);
  emit(e, "add.u32 %s, %s, %" PRId64 ";", s.s, s.s, w->sstep);
  emit(e, "bra $L%d;", top);
  emit_label(e, done);
}

static void copy_chunks(Emitter *e, const Tile *t) {
  int64_t per_row = t->row_elems * t->eb / t->width, nchunks = t->numel * t->eb / t->width;
  int64_t per_thread = (nchunks + t->nthreads - 1) / t->nthreads;
  if (t->nthreads % per_row == 0 && per_thread <= UNROLL_MAX && walk_hoistable(e, t)) {
    Walk w = walk_hoisted(e, t, per_row, per_thread > 1);
    walk_unrolled(e, t, &w, nchunks);
  } else if (t->nthreads % per_row == 0 && t->vrank <= 2) {
    Walk w = walk_setup(e, t, per_row, per_thread > 1);
    if (per_thread <= UNROLL_MAX)
      walk_unrolled(e, t, &w, nchunks);
    else
      walk_loop(e, t, &w);
  } else if (per_thread <= UNROLL_MAX) {
    chunks_unrolled(e, t, nchunks, per_row);
  } else {
    chunks_loop(e, t, nchunks, per_row);
  }
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
    row = udiv(e, i, t->row_elems, OP_DIV, t->numel);
    col = udiv(e, i, t->row_elems, OP_MOD, t->numel);
  } else {
    col = val_to_reg(e, val_imm(DT_UINT32, 0));
  }
  Place p = place(e, t, row, col, NULL);
  Val v = new_reg(e, vt), in = inside_pred(e, t, p.last, p.outer);
  emit(e, "mov%s %s, 0;", bt, v.s);
  if (is_reg(in)) {
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
 * of the row pitch and whole chunks; so the base, the offset's bytes and
 * the pitch must be (each, not only the first sum: then the chunks'
 * columns are whole multiples of a chunk, and one that starts left of a
 * row does not reach into it, which the source size could not express). */
static Val chunks_aligned(Emitter *e, const Tile *t) {
  int last = t->g->rank - 1;
  Val lo = new_reg(e, DT_UINT32), bits = new_reg(e, DT_UINT32), ok = new_reg(e, DT_BOOL);
  emit(e, "cvt.u32.u64 %s, %s;", lo.s, t->base.s);
  emit(e, "mul.lo.u32 %s, %s, %d;", bits.s, t->off[last].s, t->eb);
  emit(e, "or.b32 %s, %s, %s;", bits.s, bits.s, lo.s);
  if (t->g->rank > 1) {
    Val pitch = new_reg(e, DT_UINT32);
    emit(e, "mul.lo.u32 %s, %s, %d;", pitch.s, t->gdim[last].s, t->eb);
    emit(e, "or.b32 %s, %s, %s;", bits.s, bits.s, pitch.s);
  }
  emit(e, "and.b32 %s, %s, %d;", bits.s, bits.s, t->width - 1);
  emit(e, "setp.eq.u32 %s, %s, 0;", ok.s, bits.s);
  return ok;
}

/* Whether the alignment chunks_aligned tests is the same for the whole
 * kernel, so that the kernel-wide predicate (emit_spread_alignment) can
 * test it once: the tensor's address and row length are kernel-invariant
 * and the offset in the last dimension a multiple of the chunk. */
static bool versioned(const Emitter *e, const IrStmt *s) {
  const IrCpAsyncStmt *c = &s->cpasync;
  const IrTensor *g = c->global;
  int vrank = ir_ref_rank(&c->shared), last = g->rank - 1, eb = dtype_bytes(g->dtype);
  if (s->kind != S_CP_ASYNC || vrank < 1 || last < 0 || last >= c->noffsets) return false;
  int width = chunk_width(ir_ref_dim(&c->shared, vrank - 1) * eb, eb);
  if (width == 0 || width == eb) return false;
  if (!emit_invariant(g->gptr) || (g->rank > 1 && !emit_invariant(g->gshape[last]))) return false;
  return ir_expr_multiple(c->offsets[last], e->multiples) * eb % width == 0;
}

void emit_cpasync_alignment(Emitter *e, const IrStmt *s, Val *pred) {
  if (s->kind != S_CP_ASYNC || !versioned(e, s)) return;
  const IrTensor *g = s->cpasync.global;
  int vrank = ir_ref_rank(&s->cpasync.shared), last = g->rank - 1, eb = dtype_bytes(g->dtype);
  int width = chunk_width(ir_ref_dim(&s->cpasync.shared, vrank - 1) * eb, eb);
  Val base = reg_of(e, g->gptr, DT_UINT64), lo = new_reg(e, DT_UINT32);
  Val bits = new_reg(e, DT_UINT32), ok = new_reg(e, DT_BOOL);
  emit(e, "cvt.u32.u64 %s, %s;", lo.s, base.s);
  if (g->rank > 1) {
    Val row = reg_of(e, g->gshape[last], DT_UINT32);
    emit(e, "mad.lo.u32 %s, %s, %d, %s;", bits.s, row.s, eb, lo.s);
    emit(e, "or.b32 %s, %s, %s;", bits.s, bits.s, lo.s);
  } else {
    emit(e, "mov.b32 %s, %s;", bits.s, lo.s);
  }
  emit(e, "and.b32 %s, %s, %d;", bits.s, bits.s, width - 1);
  emit(e, "setp.eq.u32 %s, %s, 0;", ok.s, bits.s);
  if (pred->s[0]) emit(e, "and.pred %s, %s, %s;", ok.s, ok.s, pred->s);
  *pred = ok;
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
  if (e->aligned_copy == 1 && versioned(e, s)) { /* the body's copy decides */
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
