/* layout.c: layout inference and tensor maps.
 *
 * Shared tensors: a tile that TMA writes (or reads) and WGMMA reads must
 * sit in one swizzled layout both accept. The swizzle follows the tile's
 * inner (contiguous) extent: 128 bytes (64 fp16) -> the 128-byte swizzle,
 * 64 -> 64, 32 -> 32. Shared tensors no TMA or WGMMA touches are row-major.
 *
 * Tensor maps: one per distinct (global tensor, box, swizzle) that a TMA
 * statement uses; the box is the shared view's shape. The hardware's rules
 * for cuTensorMapEncodeTiled are checked here, at the user's statement,
 * so the runtime never meets a map it cannot build.
 *
 * Register tensors: WGMMA accumulators get the WGMMA fragment layout, and so
 * does every register tensor cast from or combined element-wise with one
 * (to a fixed point), and every column slice of one (acc[:, c0:c1], the
 * fragment layout with N = c1 - c0); the rest get spread layouts
 * (reginfer.c). Only fragments can be sliced.
 */
#include "ir/ir.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- traversal */

typedef void (*StmtFn)(IrStmt *s, void *ctx);

/* Calls fn on every statement of b, nested ones included, in text order. */
static void walk(IrBlock *b, StmtFn fn, void *ctx) {
  for (int i = 0; i < b->len; i++) {
    IrStmt *s = b->items[i];
    fn(s, ctx);
    walk(&s->body, fn, ctx);
    walk(&s->orelse, fn, ctx);
  }
}

/* ----------------------------------------------------- shared swizzle */

typedef struct SwizzleCtx {
  Diag *d;
  bool ok;
  bool *aliased; /* by tensor id: shares its bytes (reshape_shared) */
} SwizzleCtx;

/* The swizzle (bytes) for a tile whose inner extent is inner_bytes, or -1
 * when TMA and WGMMA share no layout for it. */
static int swizzle_for(int64_t inner_bytes) {
  switch (inner_bytes) {
  case 128:
    return 128;
  case 64:
    return 64;
  case 32:
    return 32;
  default:
    return -1;
  }
}

/* Gives a shared tensor touched by TMA or WGMMA its swizzle; the first
 * statement that meets an unsupported shape reports it. */
static void swizzle_tensor(IrTensor *t, const IrStmt *s, SwizzleCtx *c) {
  if (!t || t->space != MS_SHARED || t->is_mbarrier || t->rank < 1 || t->layout != LAYOUT_NONE)
    return;
  int64_t inner = t->shape[t->rank - 1] * dtype_bytes(t->dtype);
  int sw = swizzle_for(inner);
  if (sw < 0) {
    diag_error(c->d, s->span,
               "shared tensor '%s' has rows of %lld bytes; "
               "TMA and WGMMA tiles need rows of 32, 64 or 128 bytes (other "
               "row sizes are not supported yet)",
               t->name, (long long)inner);
    c->ok = false;
    t->layout = LAYOUT_ROW_MAJOR; /* reported once */
    return;
  }
  t->layout = LAYOUT_SWIZZLED;
  t->swizzle_bytes = sw;
}

static void swizzle_stmt(IrStmt *s, void *ctx) {
  switch (s->kind) {
  case S_TMA_LOAD:
  case S_TMA_STORE:
    swizzle_tensor(s->tma.shared.t, s, ctx);
    break;
  case S_WGMMA_MMA:
    swizzle_tensor(s->wgmma.a.t, s, ctx);
    swizzle_tensor(s->wgmma.b.t, s, ctx);
    break;
  default:
    break;
  }
}

/* A tile that ldmatrix reads into mma.sync operands (and that no TMA or
 * WGMMA fixed) gets the swizzle of its row size too: row-major, the 8 rows
 * of an 8 x 8 matrix share banks (rows of 128 bytes: an 8-way conflict);
 * swizzled, each lands in its own 16-byte chunk (rows longer than 128
 * bytes, a power of two: the 128-byte pattern over their row index, see
 * tensor_swizzle in backend_ptx/emit_regtile.c). Skipped where a view of
 * the tile (one pipeline stage) would not start on a swizzle atom. */
static void ldmatrix_swizzle(IrStmt *s, void *ctx) {
  const SwizzleCtx *c = ctx;
  if (s->kind != S_LOAD_SHARED || !s->smem.reg || !s->smem.reg->reg) return;
  IrTensor *t = s->smem.shared.t;
  IrMmaRole role = s->smem.reg->reg->mma;
  if ((role != MMA_A && role != MMA_B) || !t || t->space != MS_SHARED || t->is_mbarrier ||
      t->layout != LAYOUT_NONE || t->rank < 2 || c->aliased[t->id])
    return;
  int64_t inner = t->shape[t->rank - 1] * dtype_bytes(t->dtype);
  int sw = inner == 32 || inner == 64 ? (int)inner : inner % 128 == 0 ? 128 : 0;
  int64_t tile = inner * t->shape[t->rank - 2];
  if (sw == 0 || tile % (8 * sw) != 0) return;
  t->layout = LAYOUT_SWIZZLED;
  t->swizzle_bytes = sw;
}

/* A staging tile: one that store_shared fills from an mma.sync
 * accumulator fragment (Tilus's examples annotate theirs with
 * shared_row_major_swizzle; tlsc picks shared layouts itself). A warp's
 * store of a fragment writes a 4-byte pair per lane into 8 rows at one
 * quad of columns: rows of 128 bytes put all 8 on the same 4 banks (an
 * 8-way conflict for each store); the row size's swizzle puts them in 8
 * chunks. Offered only to tiles that nothing but plain load_shared and
 * store_shared touches (the spread and ldmatrix paths swizzle every
 * address), with views that start on a swizzle atom; smem.c takes the
 * offer where the planned place already meets the atom's alignment, so
 * that it never costs shared memory. */
int ir_staging_swizzle(const IrTensor *t) {
  int64_t inner = t->shape[t->rank - 1] * dtype_bytes(t->dtype);
  int sw = inner == 32 || inner == 64 ? (int)inner : inner % 128 == 0 ? 128 : 0;
  return sw && t->rank >= 2 && inner * t->shape[t->rank - 2] % (8 * sw) == 0 ? sw : 0;
}

typedef struct StagingCtx {
  bool *touched_otherwise; /* by tensor id: a shared view of another kind */
  bool *fragment_stored;   /* by tensor id: store_shared of an accumulator */
} StagingCtx;

static void note_view(StagingCtx *c, const IrRef *r) {
  if (r->t) c->touched_otherwise[r->t->id] = true;
}

static void staging_uses(IrStmt *s, void *ctx) {
  StagingCtx *c = ctx;
  switch (s->kind) {
  case S_LOAD_SHARED:
  case S_STORE_SHARED: {
    const IrTensor *reg = s->smem.reg, *t = s->smem.shared.t;
    if (!t) break;
    bool spread = reg && reg->layout == LAYOUT_SPATIAL && reg->reg;
    if (!spread || s->smem.scatter || s->smem.atomic)
      c->touched_otherwise[t->id] = true;
    else if (s->kind == S_STORE_SHARED && reg->reg->mma == MMA_C)
      c->fragment_stored[t->id] = true;
    break;
  }
  case S_TMA_LOAD:
  case S_TMA_STORE:
    note_view(c, &s->tma.shared);
    break;
  case S_CP_ASYNC:
    note_view(c, &s->cpasync.shared);
    break;
  case S_WGMMA_MMA:
    note_view(c, &s->wgmma.a);
    note_view(c, &s->wgmma.b);
    break;
  case S_PRINTF:
    note_view(c, &s->print.shared);
    break;
  default:
    break;
  }
}

static void offer_staging_swizzle(IrKernel *k, const bool *aliased) {
  size_t n = (size_t)k->ntensors + 1;
  StagingCtx c = {xmalloc(n), xmalloc(n)};
  memset(c.touched_otherwise, 0, n);
  memset(c.fragment_stored, 0, n);
  walk(&k->body, staging_uses, &c);
  for (int i = 0; i < k->ntensors; i++) {
    IrTensor *t = k->tensors[i];
    t->fragment_swizzle = 0;
    if (t->space != MS_SHARED || t->is_mbarrier || t->layout != LAYOUT_NONE || t->rank < 2 ||
        aliased[t->id] || c.touched_otherwise[t->id] || !c.fragment_stored[t->id])
      continue;
    t->fragment_swizzle = ir_staging_swizzle(t);
  }
  free(c.touched_otherwise);
  free(c.fragment_stored);
}

/* Tensors that share bytes (reshape_shared) share one layout: a swizzle
 * that TMA or WGMMA gives one is the other's too. A swizzle permutes
 * 16-byte chunks within rows of the tensor's inner extent, so it means
 * the same for both only when their rows have the same bytes; the
 * swizzle of an ldmatrix operand, an option rather than a need, is not
 * given to tensors that share bytes. Pulls each alias's swizzle into the
 * tensor it aliases, then gives every alias the result; false (reported
 * at the reshape) when two disagree. */
static bool shared_alias_layout(IrTensor *t, IrTensor *from, SwizzleCtx *c) {
  if (from->layout != LAYOUT_SWIZZLED) return true;
  int64_t rows = t->shape[t->rank - 1] * dtype_bytes(t->dtype);
  int64_t from_rows = from->shape[from->rank - 1] * dtype_bytes(from->dtype);
  if (rows == from_rows &&
      (t->layout == LAYOUT_NONE ||
       (t->layout == LAYOUT_SWIZZLED && t->swizzle_bytes == from->swizzle_bytes))) {
    t->layout = LAYOUT_SWIZZLED;
    t->swizzle_bytes = from->swizzle_bytes;
    return true;
  }
  IrTensor *alias = t->alias_of ? t : from;
  if (rows != from_rows)
    diag_error(c->d, alias->span,
               "'%s' is a reshape of '%s' and shares its bytes, so both need one swizzle: TMA "
               "or WGMMA gives '%s' the %d-byte swizzle of rows of %lld bytes, and '%s' has "
               "rows of %lld bytes",
               alias->name, alias->alias_of->name, from->name, from->swizzle_bytes,
               (long long)from_rows, t->name, (long long)rows);
  else
    diag_error(c->d, alias->span,
               "'%s' is a reshape of '%s' and shares its bytes, so both need one swizzle: TMA "
               "or WGMMA gives '%s' the %d-byte swizzle and '%s' the %d-byte one",
               alias->name, alias->alias_of->name, from->name, from->swizzle_bytes, t->name,
               t->swizzle_bytes);
  c->ok = false;
  return false;
}

static bool unify_aliases(IrKernel *k, SwizzleCtx *c) {
  bool ok = true;
  for (int i = 0; i < k->ntensors; i++) {
    IrTensor *t = k->tensors[i];
    if (t->space == MS_SHARED && t->alias_of) ok = shared_alias_layout(t->alias_of, t, c) && ok;
  }
  for (int i = 0; i < k->ntensors && ok; i++) {
    IrTensor *t = k->tensors[i];
    if (t->space == MS_SHARED && t->alias_of) ok = shared_alias_layout(t, t->alias_of, c);
  }
  return ok;
}

static bool infer_shared(IrKernel *k, Diag *d) {
  bool *aliased = xmalloc((size_t)k->ntensors + 1);
  memset(aliased, 0, (size_t)k->ntensors + 1);
  for (int i = 0; i < k->ntensors; i++) {
    IrTensor *t = k->tensors[i];
    if (t->space == MS_SHARED) {
      t->layout = t->own_swizzle ? LAYOUT_SWIZZLED : LAYOUT_NONE;
      t->swizzle_bytes = t->own_swizzle;
    }
    if (t->space == MS_SHARED && t->alias_of) aliased[t->id] = aliased[t->alias_of->id] = true;
  }
  SwizzleCtx c = {d, true, aliased};
  walk(&k->body, swizzle_stmt, &c);
  if (c.ok) unify_aliases(k, &c);
  walk(&k->body, ldmatrix_swizzle, &c);
  offer_staging_swizzle(k, aliased);
  for (int i = 0; i < k->ntensors; i++) {
    IrTensor *t = k->tensors[i];
    if (t->space == MS_SHARED && t->layout == LAYOUT_NONE) t->layout = LAYOUT_ROW_MAJOR;
  }
  free(aliased);
  return c.ok;
}

/* ------------------------------------------------------- tensor maps */

typedef struct TmapCtx {
  IrKernel *k;
  Arena *ar;
  Diag *d;
  bool ok;
} TmapCtx;

/* cuTensorMapEncodeTiled element types. */
static bool tma_dtype_ok(DType t) { return t != DT_BOOL && t != DT_VOID; }

/* The rules of cuTensorMapEncodeTiled for one box; reports at s. */
static bool check_box(TmapCtx *c, const IrStmt *s, const IrTensor *g, const int64_t *box,
                      int swizzle) {
  if (g->rank < 1 || g->rank > 5 || !tma_dtype_ok(g->dtype)) {
    diag_error(c->d, s->span,
               "TMA cannot copy a %d-D %s tensor (1 to 5 "
               "dimensions of a numeric dtype)",
               g->rank, dtype_name(g->dtype));
    return false;
  }
  for (int i = 0; i < g->rank; i++) {
    if (box[i] < 1 || box[i] > 256) {
      diag_error(c->d, s->span,
                 "TMA box dimension %d is %lld; the hardware "
                 "allows 1 to 256",
                 i, (long long)box[i]);
      return false;
    }
  }
  int64_t inner = box[g->rank - 1] * dtype_bytes(g->dtype);
  if (inner % 16 != 0) {
    diag_error(c->d, s->span,
               "TMA box rows are %lld bytes; the hardware "
               "needs a multiple of 16",
               (long long)inner);
    return false;
  }
  if (swizzle > 0 && inner > swizzle) {
    diag_error(c->d, s->span,
               "TMA box rows are %lld bytes, more than the "
               "%d-byte swizzle span",
               (long long)inner, swizzle);
    return false;
  }
  return true;
}

static bool same_box(const IrTmap *m, const IrTensor *g, const int64_t *box, int swizzle) {
  return m->global == g && m->swizzle_bytes == swizzle && memcmp(m->box, box, sizeof m->box) == 0;
}

/* Finds or creates the map of (g, box, swizzle) and returns its index. */
static int tmap_index(TmapCtx *c, IrTensor *g, const int64_t *box, int swizzle) {
  IrKernel *k = c->k;
  for (int i = 0; i < k->ntmaps; i++)
    if (same_box(k->tmaps[i], g, box, swizzle)) return i;
  IrTmap *m = arena_alloc(c->ar, sizeof *m);
  m->index = k->ntmaps;
  m->global = g;
  memcpy(m->box, box, sizeof m->box);
  m->swizzle_bytes = swizzle;
  IrTmap **maps = arena_alloc(c->ar, (size_t)(k->ntmaps + 1) * sizeof *maps);
  if (k->ntmaps) memcpy(maps, k->tmaps, (size_t)k->ntmaps * sizeof *maps);
  maps[k->ntmaps] = m;
  k->tmaps = maps;
  return k->ntmaps++;
}

static void tmap_stmt(IrStmt *s, void *ctx) {
  TmapCtx *c = ctx;
  if (s->kind != S_TMA_LOAD && s->kind != S_TMA_STORE) return;
  IrTensor *g = s->tma.global;
  const IrRef *view = &s->tma.shared;
  if (!g || !view->t) /* malformed: the verifier reports it */
    return;
  int64_t box[IR_MAX_RANK] = {0};
  for (int i = 0; i < ir_ref_rank(view) && i < IR_MAX_RANK; i++) box[i] = ir_ref_dim(view, i);
  int swizzle = view->t->swizzle_bytes;
  if (!check_box(c, s, g, box, swizzle)) {
    c->ok = false;
    return;
  }
  s->tma.tmap = tmap_index(c, g, box, swizzle);
}

static bool make_tmaps(IrKernel *k, Arena *ar, Diag *d) {
  k->ntmaps = 0; /* rebuilt from scratch if the pass runs again */
  k->tmaps = NULL;
  TmapCtx c = {k, ar, d, true};
  walk(&k->body, tmap_stmt, &c);
  return c.ok;
}

/* --------------------------------------------------- register layouts */

typedef struct AccCtx {
  Diag *d;
  bool ok;
  bool changed;
} AccCtx;

/* Whether t can hold WGMMA accumulator fragments: [M, N], M a multiple of
 * 64, owned by one 128-thread warp group. */
static bool acc_shape_ok(const IrTensor *t) {
  return t->rank == 2 && t->shape[0] % 64 == 0 && t->nthreads == 128;
}

/* Gives t the accumulator layout because of statement s. */
static void make_acc(IrTensor *t, const IrStmt *s, const IrTensor *from, AccCtx *c) {
  if (!t || t->space != MS_REGISTER || t->layout == LAYOUT_WGMMA_ACC) return;
  if (t->layout == LAYOUT_SPATIAL) /* already reported */
    return;
  if (!acc_shape_ok(t)) {
    if (from)
      diag_error(c->d, s->span,
                 "conflicting layouts: '%s' takes the WGMMA "
                 "accumulator layout from '%s', but it is not a [64k, N] "
                 "tile of one 128-thread warp group",
                 t->name, from->name);
    else
      diag_error(c->d, s->span,
                 "the WGMMA accumulator '%s' must be a [64k, "
                 "N] tile owned by one 128-thread warp group",
                 t->name);
    t->layout = LAYOUT_SPATIAL;
    c->ok = false;
    return;
  }
  t->layout = LAYOUT_WGMMA_ACC;
  c->changed = true;
}

/* The accumulator layout flows through casts and element-wise statements
 * in both directions: their operands share one element-to-thread map. */
static void acc_stmt(IrStmt *s, void *ctx) {
  AccCtx *c = ctx;
  if (s->kind == S_WGMMA_MMA) { /* the register A holds fragments too */
    make_acc(s->wgmma.acc, s, NULL, c);
    make_acc(s->wgmma.ra, s, s->wgmma.acc, c);
    return;
  }
  if (s->kind == S_SLICE) { /* columns of a fragment are a fragment */
    IrTensor *src = s->slice.src;
    if (src && src->layout == LAYOUT_WGMMA_ACC) make_acc(s->slice.dst, s, src, c);
    return;
  }
  IrTensor *t[3]; /* the destination, then the operands */
  if (s->kind == S_CAST) {
    t[0] = s->cast.dst, t[1] = s->cast.src, t[2] = NULL;
  } else if (s->kind == S_ELEMWISE) {
    t[0] = s->elemwise.dst, t[1] = s->elemwise.a, t[2] = s->elemwise.b;
  } else {
    return;
  }
  for (int i = 0; i < 3; i++) {
    IrTensor *src = t[i];
    if (!src || src->layout != LAYOUT_WGMMA_ACC) continue;
    for (int j = 0; j < 3; j++)
      if (j != i) make_acc(t[j], s, src, c);
  }
}

/* A column slice needs its source in the WGMMA fragment layout: there the
 * columns [c0, c1) of a row are whole registers of the thread that owns the
 * row; in the spatial layout they are spread over other threads. */
static void check_slice_source(IrStmt *s, void *ctx) {
  AccCtx *c = ctx;
  if (s->kind != S_SLICE || !s->slice.src || s->slice.src->layout == LAYOUT_WGMMA_ACC) return;
  diag_error(c->d, s->span,
             "column slices are only supported on WGMMA "
             "accumulators: '%s' does not have the WGMMA fragment layout",
             s->slice.src->name);
  c->ok = false;
}

static bool infer_registers(IrKernel *k, Arena *ar, Diag *d) {
  for (int i = 0; i < k->ntensors; i++)
    if (k->tensors[i]->space == MS_REGISTER) {
      k->tensors[i]->layout = LAYOUT_NONE;
      k->tensors[i]->reg = NULL;
    }
  AccCtx c = {d, true, true};
  /* each round fixes at least one tensor, so ntensors + 1 rounds suffice */
  for (int round = 0; c.changed && round <= k->ntensors; round++) {
    c.changed = false;
    walk(&k->body, acc_stmt, &c);
  }
  bool spatial_ok = ir_infer_reg_layouts(k, ar, d);
  walk(&k->body, check_slice_source, &c);
  return c.ok && spatial_ok;
}

/* ------------------------------------------------------------- entry */

bool ir_infer_layouts(IrModule *m, Diag *d) {
  bool ok = true;
  for (int i = 0; i < m->nkernels; i++) {
    IrKernel *k = m->kernels[i];
    for (int j = 0; j < k->ntensors; j++)
      if (k->tensors[j]->space == MS_GLOBAL) k->tensors[j]->layout = LAYOUT_ROW_MAJOR;
    /* registers first: the shared swizzles read the mma operand layouts */
    bool regs_ok = infer_registers(k, m->ar, d);
    bool shared_ok = infer_shared(k, d);
    /* tensor maps need the swizzles: skip them after a swizzle error */
    bool maps_ok = shared_ok && make_tmaps(k, m->ar, d);
    ok = ok && shared_ok && maps_ok && regs_ok;
  }
  return ok;
}
