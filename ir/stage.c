/* stage.c: a matmul's result stored through shared memory.
 *
 * store_global of a 16-bit mma.sync accumulator (a dot's result, cast)
 * writes each thread's column pairs: 4-byte stores, a warp's covering 16
 * bytes of 8 rows. Through shared memory the same tile leaves in 16-byte
 * vectors, a warp's covering whole rows, as Tilus's Ampere matmul_v5 and
 * matmul_a16wx stage it by hand; tlsc does it for the kernels that store
 * the fragment directly (Tilus's Ampere matmul_v4: 2.3% faster at 4096^3;
 * v1-v3's stages are smaller than their tiles, so they keep theirs),
 *
 *   store_global(g, x)   ->   cp.async.wait_all     (when the kernel copies)
 *                             sync
 *                             store_shared(s, x)    s: a new [m, n] tile
 *                             sync
 *                             r = load_shared(s)    r: the default layout
 *                             store_global(g, r)
 *
 * when that costs no shared memory and nothing can see it: the store is a
 * statement of the kernel's body itself (every thread reaches it), the
 * kernel has no TMA, WGMMA or mbarrier (no asynchronous access to shared
 * memory that a wait_all and a barrier would not end), and no statement
 * after the store touches shared memory. Then every shared tensor is dead
 * at the store: they are marked freed there, s is created after them and
 * planned over their bytes, and the rewrite is kept only if the kernel's
 * shared memory does not grow (smem.c plans it again).
 *
 * Runs after layout inference (it needs the fragment's layout, and gives
 * r its own), before the barriers are assigned again and memory planned.
 */
#include "ir/ir.h"

#include <stdlib.h>

/* Statement kinds that touch shared memory asynchronously or wait on it:
 * a kernel with any keeps its stores. */
static bool async_smem(const IrBlock *b) {
  for (int i = 0; i < b->len; i++) {
    const IrStmt *s = b->items[i];
    switch (s->kind) {
    case S_MBAR_WAIT:
    case S_MBAR_ARRIVE:
    case S_MBAR_EXPECT_TX:
    case S_TMA_LOAD:
    case S_TMA_STORE:
    case S_TMA_FENCE:
    case S_TMA_COMMIT:
    case S_TMA_WAIT:
    case S_WGMMA_FENCE:
    case S_WGMMA_MMA:
    case S_WGMMA_COMMIT:
    case S_WGMMA_WAIT:
    case S_CLUSTER_SYNC:
    case S_MBAR_REMOTE:
    case S_MBAR_MULTICAST:
    case S_SETMAXNREG:
      return true;
    default:
      break;
    }
    if (async_smem(&s->body) || async_smem(&s->orelse)) return true;
  }
  return false;
}

/* Whether the statements of b use no shared tensor (registers, global
 * memory, control and barriers only; a conversion's scratch lies above
 * every tensor). */
static bool smem_free(const IrBlock *b) {
  for (int i = 0; i < b->len; i++) {
    const IrStmt *s = b->items[i];
    switch (s->kind) {
    case S_ASSIGN:
    case S_FOR:
    case S_IF:
    case S_THREAD_GROUP:
    case S_SINGLE_THREAD:
    case S_SYNC:
    case S_CP_COMMIT:
    case S_CP_WAIT:
    case S_CP_WAIT_ALL:
    case S_FILL:
    case S_CAST:
    case S_ELEMWISE:
    case S_LOAD_GLOBAL:
    case S_STORE_GLOBAL:
    case S_SLICE:
    case S_UNARY:
    case S_REDUCE:
    case S_WHERE:
    case S_DOT:
    case S_TRANSPOSE:
    case S_RESHAPE:
    case S_CONVERT:
    case S_SEM_WAIT:
    case S_SEM_RELEASE:
    case S_VIEW:
      break;
    case S_PRINTF:
      if (s->print.shared.t) return false;
      break;
    default:
      return false;
    }
    if (!smem_free(&s->body) || !smem_free(&s->orelse)) return false;
  }
  return true;
}

/* Whether s stores a 16-bit mma.sync accumulator whole to global memory. */
static bool fragment_store(const IrStmt *s) {
  const IrTensor *x = s->kind == S_STORE_GLOBAL ? s->gmem.reg : NULL;
  return x && !s->gmem.scatter && !s->gmem.atomic && x->space == MS_REGISTER &&
         x->layout == LAYOUT_SPATIAL && x->reg && x->reg->mma == MMA_C &&
         dtype_bytes(x->dtype) == 2 && x->rank == 2;
}

static IrStmt *smem_copy(Arena *ar, SKind kind, Span sp, IrTensor *shared, IrTensor *reg) {
  IrStmt *s = ir_stmt_new(ar, kind, sp);
  s->smem.shared = (IrRef){.t = shared};
  s->smem.reg = reg;
  return s;
}

/* A new register tensor of x's name, dtype and threads with shape
 * [rank], made at sp, in the default layout: 16-byte vectors a thread,
 * the rows a warp covers whole. */
static IrTensor *vector_tile(Arena *ar, IrKernel *k, const IrTensor *x, int rank,
                             const int64_t *shape, Span sp) {
  IrTensor *r = ir_new_tensor(ar, k, x->name, MS_REGISTER, x->dtype, rank, shape, sp);
  r->nthreads = x->nthreads;
  r->layout = LAYOUT_SPATIAL;
  r->reg = ir_reglayout_default(ar, rank, shape, x->nthreads > 0 ? x->nthreads : 1,
                                16 / dtype_bytes(x->dtype));
  return r;
}

/* The statements that stage store s through a new shared tile, appended
 * to out; s stores the loaded tile instead. */
static void stage(Arena *ar, IrKernel *k, IrStmt *s, bool copies, IrBlock *out) {
  IrTensor *x = s->gmem.reg;
  Span sp = s->span;
  IrTensor *tile = ir_new_tensor(ar, k, x->name, MS_SHARED, x->dtype, x->rank, x->shape, sp);
  tile->layout = LAYOUT_ROW_MAJOR;
  tile->fragment_swizzle = ir_staging_swizzle(tile); /* taken where its place allows */
  IrTensor *r = vector_tile(ar, k, x, x->rank, x->shape, sp);
  if (copies) ir_block_push(ar, out, ir_stmt_new(ar, S_CP_WAIT_ALL, sp));
  ir_block_push(ar, out, ir_stmt_new(ar, S_SYNC, sp));
  ir_block_push(ar, out, smem_copy(ar, S_STORE_SHARED, sp, tile, x));
  ir_block_push(ar, out, ir_stmt_new(ar, S_SYNC, sp));
  ir_block_push(ar, out, smem_copy(ar, S_LOAD_SHARED, sp, tile, r));
  s->gmem.reg = r;
  ir_block_push(ar, out, s);
}

/* The index of b's last statement that is_store accepts, if nothing
 * after it touches shared memory; -1 otherwise. Only the last: an earlier
 * one qualifies only when this one does not exist. */
static int last_store(const IrBlock *b, bool (*is_store)(const IrStmt *)) {
  for (int i = b->len - 1; i >= 0; i--) {
    if (is_store(b->items[i])) {
      IrBlock rest = {.items = b->items + i + 1, .len = b->len - i - 1};
      return smem_free(&rest) ? i : -1;
    }
  }
  return -1;
}

/* The statement of the body that can be staged; -1 for none. */
static int candidate(const IrKernel *k) { return last_store(&k->body, fragment_store); }

static void stage_kernel(Arena *ar, IrKernel *k) {
  if (async_smem(&k->body)) return;
  for (int i = 0; i < k->ntensors; i++)
    if (k->tensors[i]->is_mbarrier) return;
  int at = candidate(k);
  if (at < 0) return;
  int64_t before = ir_smem_high(k);
  IrStmt *s = k->body.items[at];
  IrTensor *x = s->gmem.reg;
  int ntensors = k->ntensors;
  /* every shared tensor ends at the store (remembered, to undo) */
  Span *freed_at = xmalloc(sizeof *freed_at * ((size_t)ntensors + 1));
  int *freed_before = xmalloc(sizeof *freed_before * ((size_t)ntensors + 1));
  for (int i = 0; i < ntensors; i++) {
    IrTensor *t = k->tensors[i];
    freed_at[i] = t->freed_at, freed_before[i] = t->freed_before;
    if (t->space != MS_SHARED || t->alias_of) continue;
    if (!t->freed_at.line || t->freed_before > ntensors) {
      t->freed_at = s->span;
      t->freed_before = ntensors;
    }
  }
  IrBlock out = {0};
  for (int i = 0; i < at; i++) ir_block_push(ar, &out, k->body.items[i]);
  stage(ar, k, s, ir_block_holds(&k->body, S_CP_ASYNC), &out);
  for (int i = at + 1; i < k->body.len; i++) ir_block_push(ar, &out, k->body.items[i]);
  if (ir_smem_high(k) <= before) {
    k->body = out;
  } else { /* the tile needs more than the kernel had: as written */
    s->gmem.reg = x;
    k->ntensors = ntensors;
    for (int i = 0; i < ntensors; i++)
      k->tensors[i]->freed_at = freed_at[i], k->tensors[i]->freed_before = freed_before[i];
  }
  free(freed_at);
  free(freed_before);
}

/* ------------------------------------- WGMMA fragments, warp group by warp group
 *
 * A warp group's store_global of a 16-bit WGMMA fragment ([64k, N], as the
 * seed's V5 stores each consumer's half) has the same 4-byte pairs. Its
 * stage buffers are not dead at the store (the other groups, or a TMA the
 * group issued ahead, may still use them), so each group gets a [64k, c]
 * tile of its own in new shared memory and stages the fragment c columns
 * at a time:
 *
 *   store_global(g, x, [o0, o1])  ->  for j in 0 .. N/c - 1:
 *                                       store_shared(t[gi], x[:, cj:cj+c])
 *                                       sync                (the group's)
 *                                       r = load_shared(t[gi])
 *                                       store_global(g, r, [o0, o1 + cj])
 *                                       sync                (but the last)
 *
 * for the 128-thread groups at the kernel's top level (or the body of a
 * kernel of one warp group) whose last statement of that kind is followed
 * by nothing that touches shared memory; or, where the body ends with a
 * run-time loop (a persistent kernel's tile loop), that of the loop's
 * body, with the barrier after the last chunk too: the next trip writes t
 * again (the persistent V5 and V6 1.04-1.16x faster). t is swizzled (c
 * 16-bit columns: 2c-byte rows; stmatrix and the 16-byte loads then meet
 * no bank twice) and lives the whole kernel. c is 64, or 32 where 64 would cost a block
 * per SM; the rewrite is kept only when the blocks an SM holds stay as
 * many (blocks_per_sm) and no shared tensor is freed (its bytes could go
 * to t while another group still runs over them), but in a kernel of one
 * warp group whose frees all come before the fragment is made: there t
 * may lie over the freed bytes, after a barrier (frees_allow). H200: the
 * seed's V5 1.03-1.10x of Tilus on the same file, V1 and V3 1.10x and
 * 1.15x at 4096^3. */

/* Columns staged at a time: 128-byte rows, or 64-byte ones where a
 * 128-byte tile would cost the kernel a block per SM. */
static const int64_t chunk_widths[] = {64, 32};

static bool wgmma_fragment_store(const IrStmt *s) {
  const IrTensor *x = s->kind == S_STORE_GLOBAL ? s->gmem.reg : NULL;
  return x && !s->gmem.scatter && !s->gmem.atomic && x->space == MS_REGISTER &&
         x->layout == LAYOUT_WGMMA_ACC && dtype_bytes(x->dtype) == 2 && x->rank == 2 &&
         x->shape[0] % 64 == 0 && x->shape[1] % 32 == 0 && x->nthreads == 128 &&
         s->gmem.global->rank == 2 && s->gmem.noffsets == 2;
}

/* A block of 128 threads that stages its fragment store: a top-level
 * warp group's body, or the body of a kernel of one warp group. */
typedef struct Stager {
  IrBlock *body;
  int at;         /* the store's index in body */
  bool looped;    /* body is a loop's (the group's last statement) */
  IrBlock staged; /* body with the store staged (while trying) */
} Stager;

/* The stager of a warp group's body b: its last fragment store, or that
 * of the body of a run-time loop that ends b (a persistent kernel's tile
 * loop, whose next trip writes the tile again). */
static bool stager_of(IrBlock *b, Stager *st) {
  int at = last_store(b, wgmma_fragment_store);
  if (at >= 0) {
    *st = (Stager){b, at, false, {0}};
    return true;
  }
  IrStmt *loop = b->len ? b->items[b->len - 1] : NULL;
  if (!loop || loop->kind != S_FOR || (at = last_store(&loop->body, wgmma_fragment_store)) < 0)
    return false;
  *st = (Stager){&loop->body, at, true, {0}};
  return true;
}

/* The stagers of k into st (at most IR_MAX_NAMED_BARRIERS + 1); their count. */
static int stagers(IrKernel *k, Stager *st) {
  int n = 0;
  IrBlock *b = &k->body;
  for (int i = 0; i < b->len && n <= IR_MAX_NAMED_BARRIERS; i++) {
    IrStmt *g = b->items[i];
    if (g->kind == S_THREAD_GROUP && g->group.count == 128 && stager_of(&g->body, &st[n])) n++;
  }
  if (n == 0 && k->warps == 4 && stager_of(b, &st[n])) n++;
  return n;
}

static IrStmt *tile_copy(Arena *ar, SKind kind, Span sp, IrTensor *tile, int gi, IrTensor *reg) {
  IrStmt *s = smem_copy(ar, kind, sp, tile, reg);
  s->smem.shared.nidx = 1;
  s->smem.shared.idx[0] = ir_const(ar, DT_INT32, gi);
  return s;
}

/* body with store `at` staged through tile[gi], `chunk` columns at a time;
 * over_freed: the tile may lie over freed tensors, whose last readers a
 * barrier first waits for. */
static IrBlock stage_group(Arena *ar, IrKernel *k, const Stager *g, IrTensor *tile, int gi,
                           int64_t chunk, bool over_freed) {
  const IrBlock *body = g->body;
  int at = g->at;
  const IrStmt *s = body->items[at];
  IrTensor *x = s->gmem.reg;
  Span sp = s->span;
  int64_t shape[2] = {x->shape[0], chunk}, chunks = x->shape[1] / chunk;
  IrBlock out = {0};
  for (int i = 0; i < at; i++) ir_block_push(ar, &out, body->items[i]);
  if (over_freed) ir_block_push(ar, &out, ir_stmt_new(ar, S_SYNC, sp));
  for (int64_t j = 0; j < chunks; j++) {
    IrStmt *cut = ir_stmt_new(ar, S_SLICE, sp);
    cut->slice.src = x;
    cut->slice.dst = ir_new_tensor(ar, k, x->name, MS_REGISTER, x->dtype, 2, shape, sp);
    cut->slice.dst->nthreads = x->nthreads;
    cut->slice.dst->layout = LAYOUT_WGMMA_ACC;
    cut->slice.begin = j * chunk, cut->slice.end = (j + 1) * chunk;
    ir_block_push(ar, &out, cut);
    ir_block_push(ar, &out, tile_copy(ar, S_STORE_SHARED, sp, tile, gi, cut->slice.dst));
    ir_block_push(ar, &out, ir_stmt_new(ar, S_SYNC, sp));
    IrTensor *r = vector_tile(ar, k, x, 2, shape, sp);
    ir_block_push(ar, &out, tile_copy(ar, S_LOAD_SHARED, sp, tile, gi, r));
    IrStmt *st = ir_stmt_new(ar, S_STORE_GLOBAL, sp);
    st->gmem = s->gmem;
    st->gmem.reg = r;
    st->gmem.offsets = arena_alloc(ar, 2 * sizeof *st->gmem.offsets);
    st->gmem.offsets[0] = s->gmem.offsets[0];
    st->gmem.offsets[1] =
        ir_binary(ar, OP_ADD, s->gmem.offsets[1], ir_const(ar, DT_INT32, j * chunk));
    ir_block_push(ar, &out, st);
    if (j + 1 < chunks || g->looped) ir_block_push(ar, &out, ir_stmt_new(ar, S_SYNC, sp));
  }
  for (int i = at + 1; i < body->len; i++) ir_block_push(ar, &out, body->items[i]);
  return out;
}

enum {
  SM_SMEM = 228 * 1024,  /* shared memory of an SM (sm_90) */
  BLOCK_RESERVED = 1024, /* and what each block takes of it beside its own */
  BASE_SLACK = 1024,     /* the planner's room to align a swizzled base (smem.c) */
  SM_REGS = 65536,       /* 32-bit registers of an SM */
  SM_THREADS = 2048,
};

/* An upper bound on the blocks of k an SM holds, were its shared tensors
 * to end at byte `high`: by shared memory (the planner's base slack
 * included), by threads, and by registers, whose count is at least the
 * largest WGMMA accumulator's per thread. */
static int64_t blocks_per_sm(const IrKernel *k, int64_t high) {
  int64_t threads = (int64_t)k->warps * 32, acc = 1;
  for (int i = 0; i < k->ntensors; i++) {
    const IrTensor *t = k->tensors[i];
    if (t->space == MS_REGISTER && t->layout == LAYOUT_WGMMA_ACC && t->nthreads > 0) {
      int64_t regs = ir_tensor_nbytes(t) / 4 / t->nthreads;
      if (regs > acc) acc = regs;
    }
  }
  int64_t by_smem = SM_SMEM / (high + BASE_SLACK + BLOCK_RESERVED);
  int64_t by_regs = SM_REGS / (threads * acc), by_threads = SM_THREADS / threads;
  int64_t n = by_smem < by_regs ? by_smem : by_regs;
  return n < by_threads ? n : by_threads;
}

/* Whether k's stagers, staged `chunk` columns at a time, keep the blocks
 * an SM holds (blocks_per_sm); if so they are (their bodies replaced). */
static bool stage_by(Arena *ar, IrKernel *k, Stager *st, int n, int64_t chunk, bool freed) {
  int64_t rows = st[0].body->items[st[0].at]->gmem.reg->shape[0];
  DType dt = st[0].body->items[st[0].at]->gmem.reg->dtype;
  for (int i = 0; i < n; i++) {
    const IrTensor *x = st[i].body->items[st[i].at]->gmem.reg;
    if (x->shape[1] % chunk || x->shape[0] != rows || x->dtype != dt) return false;
  }
  int64_t before = ir_smem_high(k);
  int ntensors = k->ntensors;
  int64_t shape[3] = {n, rows, chunk};
  IrTensor *tile = ir_new_tensor(ar, k, "stage", MS_SHARED, dt, 3, shape, k->span);
  tile->layout = LAYOUT_SWIZZLED;
  tile->swizzle_bytes = tile->own_swizzle = (int)(chunk * dtype_bytes(dt));
  for (int i = 0; i < n; i++) st[i].staged = stage_group(ar, k, &st[i], tile, i, chunk, freed);
  int64_t after = ir_smem_high(k);
  if (after + BASE_SLACK > TLS_SMEM_LIMIT || blocks_per_sm(k, after) != blocks_per_sm(k, before)) {
    k->ntensors = ntensors; /* as written */
    return false;
  }
  for (int i = 0; i < n; i++) *st[i].body = st[i].staged;
  return true;
}

/* Whether the stagers may take bytes that free_shared() gave back: none
 * is freed, or the one stager is the kernel's body and every free came
 * before the stored fragment was made. Its threads have then all passed
 * the frees when they reach the store (a barrier there ends the freed
 * tensors' last reads); in a kernel of several groups another group may
 * still be short of them. *freed: whether any tensor is freed. */
static bool frees_allow(const IrKernel *k, const Stager *st, int n, bool *freed) {
  const IrTensor *x = st[0].body->items[st[0].at]->gmem.reg;
  *freed = false;
  for (int i = 0; i < k->ntensors; i++) {
    const IrTensor *t = k->tensors[i];
    if (t->space != MS_SHARED || !t->freed_at.line) continue;
    *freed = true;
    if (n != 1 || st[0].body != &k->body || t->freed_before > x->id) return false;
  }
  return true;
}

static void stage_groups(Arena *ar, IrKernel *k) {
  Stager st[IR_MAX_NAMED_BARRIERS + 1];
  int n = stagers(k, st);
  bool freed;
  if (!n || !frees_allow(k, st, n, &freed)) return;
  for (size_t c = 0; c < sizeof chunk_widths / sizeof *chunk_widths; c++)
    if (stage_by(ar, k, st, n, chunk_widths[c], freed)) return;
}

void ir_stage_stores(IrModule *m) {
  for (int i = 0; i < m->nkernels; i++) {
    stage_kernel(m->ar, m->kernels[i]);
    stage_groups(m->ar, m->kernels[i]);
  }
}
