/* sim_cpasync.c: cp.async copies (Tilus's copy_async) in a simulated block.
 *
 * Every thread of the group copies part of the tile (the backend spreads
 * the chunks over them), so every warp holding a thread of the group has
 * a copy of the whole view in flight: values are uniform per warp and the
 * chunks of one warp are not followed. A copy belongs to the warp's open
 * cp.async group until cp.async.commit_group closes it; the copy writes
 * its bytes until a cp.async.wait_group of that warp retires the group
 * (wait_all commits first, then retires everything). The wait makes the
 * bytes visible to the waiting warp only: any other warp must also be
 * ordered after it (a sync() with the issuer, or an mbarrier phase the
 * issuer arrived on after the wait; sim_order.c), so a retired copy stays
 * listed, stamped with the issuer's epoch, until every running warp is.
 *
 * Any access to the bytes of a live copy is a race: a read (load_shared,
 * a wgmma operand, a TMA store source) would see stale or partial data,
 * a write (store_shared, a TMA copy, another copy_async) may land before
 * the copy does. A copy pending when its warp exits is not reported: the
 * hardware finishes it, and the block's shared memory is not reused.
 */
#include "sim/sim_int.h"

#include <inttypes.h>
#include <stdio.h>

enum { STATE = 240 };

/* Whether two byte ranges of shared memory (of one CTA) share a byte. */
static bool overlaps(const SimView *a, const SimView *b) {
  return a->cta == b->cta && a->lo < b->hi && b->lo < a->hi;
}

/* A live copy that no wait of its warp has retired yet. */
static bool unretired(Sim *S, const SimView *v, bool writes, const IrStmt *s, const SimGroups *g,
                      const SimRead *r) {
  char state[STATE];
  if (r->group >= g->committed)
    snprintf(state, sizeof state,
             "is in flight until a cp.async.wait_group retires its group, and no "
             "cp.async.commit_group has closed that group yet");
  else
    snprintf(state, sizeof state,
             "is in flight until a cp.async.wait_group of that warp retires its group; none "
             "has yet");
  return sim_report_race(S, s, v, writes, r->s, &r->v, r->first_warp, r->last_warp, state);
}

/* A copy retired by its warp's wait, but warp w is not ordered after that
 * wait. */
static bool unordered(Sim *S, SimWarp *w, const SimView *v, bool writes, const IrStmt *s,
                      const SimRead *r) {
  char state[STATE];
  int by = r->retired_by % S->wpc;
  snprintf(state, sizeof state,
           "is in flight for warp %d until warp %d is ordered after the wait that retires its "
           "group",
           w->lid, w->lid);
  sim_report_race(S, s, v, writes, r->s, &r->v, r->first_warp, r->last_warp, state);
  diag_note(S->d, r->retire_at->span,
            "warp %d retires it here, but nothing orders warp %d after this wait (a sync() "
            "with warp %d, or a phase warp %d arrives on after it)",
            by, w->lid, by, by);
  return false;
}

/* Whether copy s of v by warp w and the live copy r are parts of one
 * copy: the same tile by the same threads, from the same line. Each thread
 * always takes the same chunks of it, so the warps write disjoint bytes
 * whatever their order. */
static bool same_copy(const SimWarp *w, const SimView *v, const IrStmt *s, const SimRead *r) {
  return s->kind == S_CP_ASYNC && r->s->span.line == s->span.line &&
         r->s->span.col == s->span.col && r->coop_begin == w->region.begin &&
         r->coop_end == w->region.end && r->v.lo == v->lo && r->v.hi == v->hi;
}

/* An access of v by warp w against the copies of warp x. */
static bool check_warp(Sim *S, SimWarp *w, SimWarp *x, const SimView *v, const IrStmt *s,
                       bool writes) {
  SimGroups *g = &x->cpasync;
  sim_groups_prune(S, g);
  for (int i = 0; i < g->nreads; i++) {
    const SimRead *r = &g->reads[i];
    if (!overlaps(v, &r->v) || (x != w && same_copy(w, v, s, r))) continue;
    if (r->stamp < 0) return unretired(S, v, writes, s, g, r);
    if (x != w && !sim_order_knows(w, r)) return unordered(S, w, v, writes, s, r);
  }
  return true;
}

bool sim_cp_async_check(Sim *S, SimWarp *w, const SimView *v, const IrStmt *s, bool writes) {
  for (int i = 0; i < S->nwarps; i++)
    if (!check_warp(S, w, &S->warps[i], v, s, writes)) return false;
  return true;
}

/* copy_async by warp w: its write of the view joins w's open group, once
 * nothing else still reads or writes those bytes. */
bool sim_cp_async(Sim *S, SimWarp *w, const IrStmt *s) {
  SimView dst;
  if (!sim_view(S, w, &s->cpasync.shared, s->span, &dst) || !sim_shared_write(S, w, &dst, s))
    return false;
  SimGroups *g = &w->cpasync;
  sim_groups_push(g, &dst, s, w->id, w->id);
  g->reads[g->nreads - 1].coop_begin = w->region.begin;
  g->reads[g->nreads - 1].coop_end = w->region.end;
  return true;
}

/* cp.async.wait_group n (wait_all: commit, then n = 0) by warp w. */
void sim_cp_async_wait(Sim *S, SimWarp *w, const IrStmt *s) {
  int64_t keep = 0;
  if (s->kind == S_CP_WAIT_ALL)
    w->cpasync.committed++;
  else
    keep = s->wait.max_pending;
  sim_retire_stamped(S, w, &w->cpasync, keep, s);
}
