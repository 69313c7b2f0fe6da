/* sim_order.c: what each warp knows of the others (happens-before).
 *
 * A bulk store's read of shared memory ends at the issuing warp's
 * cp.async.bulk.wait_group.read, but only that warp is ordered after the
 * wait: another warp may rewrite the bytes only once it has synchronised
 * with the issuer after its wait (a sync() they both meet, an mbarrier
 * phase the issuer arrived on and the other waited for). The simulation
 * runs one interleaving, so program order in it says nothing about the
 * GPU's; each warp therefore carries a vector clock:
 *   - clock[w] of warp w is its own epoch, advanced after every release
 *     (arrive, sync), so a later event has a stamp no earlier release
 *     published;
 *   - sync() joins the clocks of every warp that meets there;
 *   - an arrive joins the warp's clock into the barrier's current phase;
 *     a completed phase passes it on to whoever waits on the barrier.
 * Warp x knows an event of warp w stamped e once clock_x[w] >= e.
 */
#include "sim/sim_int.h"

#include <stdlib.h>
#include <string.h>

/* dst = max(dst, src), component by component. */
static void join(int64_t *dst, const int64_t *src, int n) {
  for (int i = 0; i < n; i++)
    if (src[i] > dst[i]) dst[i] = src[i];
}

/* A release by warp w: what it did so far is published; what it does
 * next gets a newer stamp. */
static void advance(SimWarp *w) { w->clock[w->id]++; }

/* A sync() meeting completes, w the last to arrive: every warp meeting
 * there (w and those still waiting at this generation) learns what any
 * of them knew. */
void sim_order_meet(Sim *S, const SimMeet *m, SimWarp *w) {
  int64_t *all = sim_zalloc((size_t)S->nwarps, sizeof *all);
  for (int i = 0; i < S->nwarps; i++) {
    SimWarp *x = &S->warps[i];
    if (x == w || (x->wait == WAIT_MEET && x->meet == m && x->meet_gen == m->generation))
      join(all, x->clock, S->nwarps);
  }
  for (int i = 0; i < S->nwarps; i++) {
    SimWarp *x = &S->warps[i];
    if (x == w || (x->wait == WAIT_MEET && x->meet == m && x->meet_gen == m->generation)) {
      memcpy(x->clock, all, sizeof *all * (size_t)S->nwarps);
      advance(x);
    }
  }
  free(all);
}

/* Warp w arrives on barrier b: the phase carries what w knows. */
void sim_order_arrive(Sim *S, SimWarp *w, SimBarrier *b) {
  join(b->arrived, w->clock, S->nwarps);
  advance(w);
}

/* Barrier b completes a phase: its arrivals become visible to waiters
 * (of this phase or a later one: parity cannot tell them apart, and any
 * later phase completes after this one). */
void sim_order_phase(Sim *S, SimBarrier *b) {
  join(b->completed, b->arrived, S->nwarps);
  memset(b->arrived, 0, sizeof *b->arrived * (size_t)S->nwarps);
}

/* Warp w's wait on barrier b returns: it learns the completed phases. */
void sim_order_acquire(Sim *S, SimWarp *w, const SimBarrier *b) {
  join(w->clock, b->completed, S->nwarps);
}

bool sim_order_all_know(const Sim *S, int warp, int64_t stamp) {
  for (int i = 0; i < S->nwarps; i++)
    if (!S->warps[i].exited && S->warps[i].clock[warp] < stamp) return false;
  return true;
}

/* Whether warp x is ordered after the retirement of read r (never, while
 * r is unretired). */
bool sim_order_knows(const SimWarp *x, const SimRead *r) {
  return r->stamp >= 0 && x->clock[r->retired_by] >= r->stamp;
}
