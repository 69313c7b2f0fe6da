/* sim_plain.c: races between the plain shared-memory accesses of warps.
 *
 * A load_shared that reads bytes another warp stored with store_shared
 * must be ordered after that store (a sync() both meet, an mbarrier phase
 * the writer arrived on and the reader waited for); a store_shared over
 * bytes another warp still reads or writes must be ordered after that
 * access. The missing sync() between a tile's stores and its loads is the
 * commonest bug of Ampere-style kernels.
 *
 * Whole views would make every pair of warps of a tile race: each warp
 * touches only its own elements, which the register tensor's layout says.
 * So an access of a register tensor with a spread layout has a footprint:
 * the bytes its warp's threads read or write (for a store, only the
 * first replica of a replicated element: the backend stores from it
 * alone), as sorted runs. Two accesses race when they are of one tensor,
 * by different warps, their footprints overlap, at least one writes, and
 * the later warp's clock (sim_order.c) does not know the earlier access.
 * A WGMMA fragment's footprint is its warp's rows (16 of each 64, every
 * column); accesses of other layouts have none and are not checked here.
 * A copy_async (a write whose chunks per warp are not followed) is checked with the whole view against the plain accesses
 * remembered: the reads of a stage before the copy that refills it; a
 * WGMMA's operand likewise against the plain writes: a tile staged with
 * store_shared needs a sync() before the warp group multiplies it. A TMA
 * store reads its view against the plain writes remembered, a WGMMA
 * fragment's store_shared (kept whole) included: the epilogue's staging
 * tile needs a sync() (or a phase) between the consumers' stores and the
 * store of the tile. An access is forgotten once every running warp is
 * ordered after it.
 */
#include "sim/sim_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_lo(const void *a, const void *b) {
  int64_t x = ((const SimSpan *)a)->lo, y = ((const SimSpan *)b)->lo;
  return (x > y) - (x < y);
}

/* Whether thread tid of layout L is the first of the threads holding its
 * elements (every replicated thread digit 0). */
static bool first_replica(const IrRegLayout *L, int64_t tid) {
  for (int i = 0; i < L->nthread; i++)
    if (L->thread_mode[i] < 0 && tid / ir_reglayout_thread_stride(L, i) % L->thread_size[i] != 0)
      return false;
  return true;
}

/* The byte of element coords (view dimensions) in the view at v->lo:
 * row-major over the stored dimensions (a transposed view swaps them). */
static int64_t element_byte(const IrStmt *s, const SimView *v, const int64_t *coords) {
  const IrRef *r = &s->smem.shared;
  const IrTensor *t = r->t;
  int rank = t->rank - r->nidx;
  int64_t c[IR_MAX_RANK], at = 0;
  for (int d = 0; d < rank; d++) c[d] = coords[d];
  if (r->transposed && rank == 2) c[0] = coords[1], c[1] = coords[0];
  for (int d = 0; d < rank; d++) at = at * t->shape[r->nidx + d] + c[d];
  return v->lo + at * dtype_bytes(t->dtype);
}

/* The runs of warp w's rows of a WGMMA fragment t ([64k, N] over a
 * 128-thread group: warp i of the group holds rows 16i .. 16i + 15 of
 * each 64 and every column) on v, into sp; their count. */
static int fragment_runs(const SimWarp *w, const IrStmt *s, const SimView *v, SimSpan *sp) {
  const IrTensor *t = s->smem.reg;
  int64_t wi = ((int64_t)w->lid * 32 - w->region.begin) / 32, esz = dtype_bytes(t->dtype);
  int k = 0;
  if (wi < 0 || wi >= 4) return 0;
  for (int64_t blk = 0; blk < t->shape[0] / 64; blk++)
    for (int64_t r = 0; r < 16; r++)
      for (int64_t c = 0; c < t->shape[1]; c++) {
        int64_t coords[2] = {64 * blk + 16 * wi + r, c};
        int64_t b = element_byte(s, v, coords);
        sp[k++] = (SimSpan){b, b + esz};
      }
  return k;
}

/* The runs of warp w's part of a spread-layout tensor t on v, into sp
 * (a store only from the first replica of each element); their count. */
static int spread_runs(const SimWarp *w, const IrStmt *s, const SimView *v, SimSpan *sp) {
  const IrTensor *t = s->smem.reg;
  const IrRegLayout *L = t->reg;
  int64_t esz = dtype_bytes(t->dtype);
  int k = 0;
  for (int lane = 0; lane < 32; lane++) {
    int64_t thread = (int64_t)w->lid * 32 + lane, tid = thread - w->region.begin;
    if (thread < w->region.begin || thread >= w->region.end || tid >= L->nthreads) continue;
    if (s->kind == S_STORE_SHARED && !first_replica(L, tid)) continue;
    for (int64_t slot = 0; slot < L->nslots; slot++) {
      int64_t coords[IR_MAX_RANK];
      ir_reglayout_coords(L, tid, slot, coords);
      int64_t b = element_byte(s, v, coords);
      sp[k++] = (SimSpan){b, b + esz};
    }
  }
  return k;
}

/* The footprint of warp w's part of s on v, merged runs; false when the
 * register tensor's layout gives none. */
static bool footprint(const SimWarp *w, const IrStmt *s, const SimView *v, SimSpan **out, int *n) {
  const IrTensor *t = s->smem.reg;
  bool fragment = t->layout == LAYOUT_WGMMA_ACC && t->rank == 2 && t->nthreads == 128;
  if (!fragment && (t->layout != LAYOUT_SPATIAL || !t->reg)) return false;
  int64_t cap = fragment ? t->shape[0] / 4 * t->shape[1] : 32 * t->reg->nslots;
  SimSpan *sp = sim_zalloc((size_t)cap + 1, sizeof *sp);
  int k = fragment ? fragment_runs(w, s, v, sp) : spread_runs(w, s, v, sp);
  qsort(sp, (size_t)k, sizeof *sp, by_lo);
  int m = 0;
  for (int i = 0; i < k; i++)
    if (m > 0 && sp[i].lo <= sp[m - 1].hi) {
      if (sp[i].hi > sp[m - 1].hi) sp[m - 1].hi = sp[i].hi;
    } else {
      sp[m++] = sp[i];
    }
  *out = sp;
  *n = m;
  return true;
}

static bool spans_overlap(const SimSpan *a, int na, const SimSpan *b, int nb) {
  int i = 0, j = 0;
  while (i < na && j < nb) {
    if (a[i].hi <= b[j].lo)
      i++;
    else if (b[j].hi <= a[i].lo)
      j++;
    else
      return true;
  }
  return false;
}

/* Drops the accesses every running warp is ordered after. */
static void prune(Sim *S) {
  int n = 0;
  for (int i = 0; i < S->nplain; i++)
    if (sim_order_all_know(S, S->plain[i].warp, S->plain[i].stamp))
      free(S->plain[i].spans);
    else
      S->plain[n++] = S->plain[i];
  S->nplain = n;
}

/* Remembers warp w's access s of v (footprint sp, n runs; whole: none).
 * It replaces (drops, then appends) w's older access of the same kind to
 * the same bytes: ordering the newer one orders both, and a loop that
 * stores a tile again and again keeps one entry. */
static void remember(Sim *S, SimWarp *w, const IrStmt *s, const SimView *v, SimSpan *sp, int n,
                     bool whole) {
  SimPlain a = {*v, s, w->id, w->clock[w->id], s->kind == S_STORE_SHARED, whole, sp, n};
  int kept = 0;
  for (int i = 0; i < S->nplain; i++) {
    SimPlain *p = &S->plain[i];
    if (p->warp == a.warp && p->writes == a.writes && p->whole == a.whole && p->v.t == v->t &&
        p->v.cta == v->cta && p->v.lo == v->lo && p->v.hi == v->hi)
      free(p->spans);
    else
      S->plain[kept++] = *p;
  }
  S->nplain = kept;
  if (S->nplain == S->capplain) {
    S->capplain = S->capplain ? 2 * S->capplain : 16;
    S->plain = xrealloc(S->plain, sizeof *S->plain * (size_t)S->capplain);
  }
  S->plain[S->nplain++] = a;
}

static bool atomic_store(const IrStmt *s) { return s->kind == S_STORE_SHARED && s->smem.atomic; }

/* The whole view as one run. */
static SimSpan *whole_view(const SimView *v) {
  SimSpan *sp = sim_zalloc(1, sizeof *sp);
  sp[0] = (SimSpan){v->lo, v->hi};
  return sp;
}

bool sim_plain_check(Sim *S, SimWarp *w, const SimView *v, const IrStmt *s) {
  SimSpan *sp;
  int n;
  /* a cp.async copy (its warp's chunks are not followed) or a WGMMA
   * operand (the warp group reads the whole view): the whole view, checked
   * and not remembered (sim_cpasync.c and the mma groups follow them) */
  bool copy = s->kind == S_CP_ASYNC || s->kind == S_WGMMA_MMA;
  /* a scatter writes where its indices say: anywhere in the view */
  bool scatter = s->kind == S_STORE_SHARED && s->smem.scatter;
  if (copy || scatter) {
    sp = whole_view(v);
    n = 1;
  } else if (!footprint(w, s, v, &sp, &n)) {
    prune(S);
    if (s->kind == S_STORE_SHARED) remember(S, w, s, v, whole_view(v), 1, true);
    return true;
  }
  bool writes = s->kind == S_STORE_SHARED || s->kind == S_CP_ASYNC;
  prune(S);
  for (int i = 0; i < S->nplain; i++) {
    const SimPlain *p = &S->plain[i];
    if (p->whole || p->warp == w->id || p->v.t != v->t || p->v.cta != v->cta ||
        (!writes && !p->writes) || w->clock[p->warp] >= p->stamp ||
        !spans_overlap(sp, n, p->spans, p->nspans))
      continue;
    if (scatter && p->s == s) continue; /* its warps' elements: duplicates are the user's */
    if (atomic_store(s) && atomic_store(p->s)) continue; /* atomics do not race */
    free(sp);
    return sim_report_race(S, s, v, writes, p->s, &p->v, p->warp, p->warp,
                           "is not ordered before this access: no sync() (nor an mbarrier "
                           "phase) between them orders the two warps");
  }
  if (copy) {
    free(sp);
    return true;
  }
  remember(S, w, s, v, sp, n, false);
  return true;
}

bool sim_plain_bulk_read(Sim *S, SimWarp *w, const SimView *v, const IrStmt *s) {
  SimSpan all = {v->lo, v->hi};
  for (int i = 0; i < S->nplain; i++) {
    const SimPlain *p = &S->plain[i];
    if (!p->writes || p->warp == w->id || p->v.cta != v->cta || w->clock[p->warp] >= p->stamp ||
        !spans_overlap(&all, 1, p->spans, p->nspans))
      continue;
    char state[200];
    snprintf(state, sizeof state,
             "reads those bytes, and nothing orders this write by warp %d before the store or "
             "after the wait that retires it",
             p->warp % S->wpc);
    return sim_report_race(S, p->s, &p->v, true, s, v, w->id, w->id, state);
  }
  return true;
}

void sim_plain_free(Sim *S) {
  for (int i = 0; i < S->nplain; i++) free(S->plain[i].spans);
  free(S->plain);
  S->plain = NULL;
  S->nplain = S->capplain = 0;
}
