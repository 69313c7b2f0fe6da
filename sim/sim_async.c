/* sim_async.c: the asynchronous state of a simulated block.
 *
 * mbarriers follow the PTX ISA: a phase completes when its pending arrival
 * count and its transaction count are both zero; then the count is reset
 * for the next phase. try_wait.parity(P) succeeds once the phase of parity
 * P has completed, i.e. while the current phase's parity differs from P.
 * The transaction count may go below zero while arrivals are missing (a
 * copy may complete before the expect_tx), but not once all arrivals of the
 * phase are in: then no later expect_tx can balance it.
 *
 * Races: every live asynchronous access is a byte range; a new access that
 * overlaps a live one of the other kind (write/read, write/write) is
 * reported with both statements. A bulk store and a store_shared of the
 * same bytes by another warp must be ordered (sim_order.c): the
 * write before the store's issue, or after the wait that retires it.
 */
#include "sim/sim_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NAME = 96 };

/* The mbarrier tensor that holds barrier number `bar` (of any CTA), and
 * its index. */
static const IrTensor *bar_tensor(Sim *S, int bar, int64_t *index) {
  bar %= S->bars_per_cta > 0 ? S->bars_per_cta : 1;
  for (int i = 0; i < S->k->ntensors; i++) {
    const IrTensor *t = S->k->tensors[i];
    if (t->is_mbarrier && bar >= S->bar_base[t->id] && bar < S->bar_base[t->id] + t->shape[0]) {
      *index = bar - S->bar_base[t->id];
      return t;
    }
  }
  return NULL;
}

/* ------------------------------------------------------------ mbarriers */

/* The index in Sim.bars of a barrier view bars[i]. */
int sim_bar_index(Sim *S, const SimView *v) {
  return v->cta * S->bars_per_cta + S->bar_base[v->t->id] + (int)v->idx[0];
}

/* "full_barriers[2]" for barrier number `bar` ("... of block N" in a
 * cluster). */
void sim_bar_name(Sim *S, int bar, char *buf, size_t size) {
  int64_t index = 0;
  const IrTensor *t = bar_tensor(S, bar, &index);
  int n = snprintf(buf, size, "%s[%" PRId64 "]", t ? t->name : "?", index);
  if (S->ncta > 1 && n >= 0 && (size_t)n < size)
    snprintf(buf + n, size - n, " of block %" PRId64, S->cta_block[bar / S->bars_per_cta]);
}

/* Completes the phase when nothing is missing, and opens the next one. */
static void phase_check(Sim *S, SimBarrier *b) {
  if (b->pending != 0 || b->tx != 0) return;
  sim_order_phase(S, b);
  b->phase++;
  b->pending = b->count;
  b->declared = 0;
  b->last_expect = NULL;
}

/* try_wait.parity: the phase of parity `parity` has completed. */
bool sim_mbar_ready(Sim *S, int bar, int64_t parity) {
  return (S->bars[bar].phase & 1) != (parity & 1);
}

/* More bytes delivered than declared, once every arrival is in. */
static bool tx_overshoot(Sim *S, const SimBarrier *b, const SimView *bv, const IrStmt *s) {
  char name[NAME];
  sim_view_name(bv, name, sizeof name);
  diag_error(S->d, s->span,
             "mbarrier misuse in block %" PRId64 " of %s: the TMA copies completing on %s in "
             "phase %" PRId64 " deliver %" PRId64 " bytes more than the %" PRId64
             " transaction bytes the phase expects",
             S->block, S->k->name, name, b->phase, -b->tx, b->declared);
  if (b->last_expect && b->last_expect != s)
    diag_note(S->d, b->last_expect->span, "the phase's transaction bytes are declared here");
  S->failed = true;
  return false;
}

/* Arrivals beyond the phase's count. */
static bool too_many_arrivals(Sim *S, const SimBarrier *b, const SimView *bv, const IrStmt *s,
                              int64_t lanes, int warp) {
  char name[NAME];
  sim_view_name(bv, name, sizeof name);
  diag_error(S->d, s->span,
             "mbarrier misuse in block %" PRId64 " of %s: %" PRId64
             " arrival%s by warp %d on %s, whose phase %" PRId64 " waits for only %" PRId64
             " more (count %" PRId64 ")",
             S->block, S->k->name, lanes, lanes == 1 ? "" : "s", warp, name, b->phase, b->pending,
             b->count);
  if (lanes > 1)
    diag_note(S->d, s->span, "every thread of the warp arrives: is single_thread() missing?");
  if (b->pending == 0 && b->last_expect)
    diag_note(S->d, b->last_expect->span,
              "the phase has all its arrivals and still waits for %" PRId64
              " transaction bytes declared here",
              b->tx);
  S->failed = true;
  return false;
}

/* lanes arrivals by warp w on the barrier bv (of any CTA), after adding
 * `bytes` per arriving thread to its transaction count when expect. */
static bool arrive_on(Sim *S, SimWarp *w, const IrStmt *s, const SimView *bv, int64_t lanes,
                      bool expect, int64_t bytes) {
  SimBarrier *b = &S->bars[sim_bar_index(S, bv)];
  if (expect) {
    b->tx += bytes * lanes;
    b->declared += bytes * lanes;
    b->last_expect = s;
  }
  if (lanes > b->pending) return too_many_arrivals(S, b, bv, s, lanes, w->lid);
  b->pending -= lanes;
  sim_order_arrive(S, w, b);
  if (b->pending == 0 && b->tx < 0) return tx_overshoot(S, b, bv, s);
  phase_check(S, b);
  return true;
}

/* arrive (lanes threads), or arrive.expect_tx: the expect comes first. */
bool sim_mbar_arrive(Sim *S, SimWarp *w, const IrStmt *s, int64_t lanes) {
  SimView bv;
  if (!sim_view(S, w, &s->mbar.barrier, s->span, &bv)) return false;
  int64_t bytes = 0;
  if (s->kind == S_MBAR_EXPECT_TX) {
    bytes = sim_eval_int(S, w, s->mbar.tx_bytes, s->span);
    if (S->failed) return false;
  }
  return arrive_on(S, w, s, &bv, lanes, s->kind == S_MBAR_EXPECT_TX, bytes);
}

/* The CTA of rank `rank` in the cluster of warp w's CTA that an access
 * reaches, or -1 after a report: the rank must be in the cluster and the
 * CTA still running (its shared memory is released when its last warp
 * exits). */
static int peer_cta(Sim *S, const SimWarp *w, const IrStmt *s, int64_t rank, const char *what) {
  int cta = sim_peer(S, w->cta, rank);
  if (cta < 0) {
    diag_error(S->d, s->span,
               "%s in block %" PRId64 " of %s targets CTA rank %" PRId64
               ", outside its cluster of %d",
               what, S->block, S->k->name, rank, S->csize);
    S->failed = true;
    return -1;
  }
  if (!sim_cta_exited(S, cta)) return cta;
  diag_error(S->d, s->span,
             "%s in block %" PRId64 " of %s reaches block %" PRId64
             " after every warp of it has exited (its shared memory is gone: keep it running, "
             "e.g. with a cluster.sync() or a wait for the peers' last arrivals)",
             what, S->block, S->k->name, S->cta_block[cta]);
  S->failed = true;
  return -1;
}

/* arrive_and_expect_tx_remote: each thread of the region in warp w
 * arrives on the barrier of CTA rank `ctas`. _multicast: thread i of the
 * region (i < 16), when bit i of the mask is set, arrives once on the
 * barrier of CTA rank i; warp w runs the threads of the region it holds. */
bool sim_mbar_arrive_cluster(Sim *S, SimWarp *w, const IrStmt *s, const SimRegion *r) {
  const IrClusterMbarStmt *c = &s->cmbar;
  SimView bv;
  if (!sim_view(S, w, &c->barrier, s->span, &bv)) return false;
  int64_t bytes = sim_eval_int(S, w, c->tx_bytes, s->span);
  int64_t ctas = sim_eval_int(S, w, c->ctas, s->span);
  if (S->failed) return false;
  int64_t lo = 32 * (int64_t)w->lid, hi = lo + 32;
  int64_t a = r->begin > lo ? r->begin : lo, b = r->end < hi ? r->end : hi;
  if (r->single) a = r->begin, b = r->begin >= lo && r->begin < hi ? r->begin + 1 : r->begin;
  if (b <= a) return true;
  if (s->kind == S_MBAR_REMOTE) {
    int cta = peer_cta(S, w, s, ctas, "this remote arrive");
    if (cta < 0) return false;
    bv.cta = cta;
    bv.block = S->cta_block[cta];
    return arrive_on(S, w, s, &bv, b - a, true, bytes);
  }
  for (int64_t t = a; t < b; t++) {
    int64_t i = t - r->begin;
    if (i >= 16 || !((ctas >> i) & 1)) continue;
    int cta = peer_cta(S, w, s, i, "this multicast arrive");
    if (cta < 0) return false;
    SimView peer = bv;
    peer.cta = cta;
    peer.block = S->cta_block[cta];
    if (!arrive_on(S, w, s, &peer, 1, true, bytes)) return false;
  }
  return true;
}

/* --------------------------------------------------------------- races */

/* Whether two byte ranges of shared memory (of one CTA) share a byte. */
static bool overlaps(const SimView *a, const SimView *b) {
  return a->cta == b->cta && a->lo < b->hi && b->lo < a->hi;
}

/* The access a statement makes, as reports name it. */
static const char *access_name(const IrStmt *s) {
  switch (s->kind) {
  case S_TMA_LOAD:
    return "TMA copy";
  case S_TMA_STORE:
    return "TMA store";
  case S_WGMMA_MMA:
    return "wgmma";
  case S_LOAD_SHARED:
    return "load_shared";
  case S_CP_ASYNC:
    return "cp.async copy";
  default:
    return "store_shared";
  }
}

/* When the two views of a race are two tensors that share bytes because
 * the older one was freed (free_shared: planning gave its bytes to the
 * newer), a note at the free says so. */
static void note_reuse(Sim *S, const SimView *v, const SimView *ov) {
  const IrTensor *a = v->t, *b = ov->t;
  if (a == b) return;
  const IrTensor *old = a->id < b->id ? a : b, *young = a->id < b->id ? b : a;
  if (!old->freed_at.line || old->freed_before > young->id) return;
  diag_note(S->d, old->freed_at,
            "'%s' was freed here and '%s' reuses its bytes: wait for the asynchronous work on "
            "a tensor, then sync(), before free_shared()",
            old->name, young->name);
}

/* Reports a race between the statement now executing and a live access:
 * the error at this statement, a note at the other one. */
bool sim_report_race(Sim *S, const IrStmt *s, const SimView *v, bool writes, const IrStmt *other,
                     const SimView *ov, int first, int last, const char *state) {
  char name[NAME], oname[NAME], who[64];
  sim_view_name(v, name, sizeof name);
  sim_view_name(ov, oname, sizeof oname);
  sim_warps_name(S, first, last, who, sizeof who);
  diag_error(S->d, s->span,
             "shared-memory race in block %" PRId64 " of %s: this %s %s %s (bytes %" PRId64
             "..%" PRId64 ") while a %s still %s %s",
             S->block, S->k->name, access_name(s), writes ? "writes" : "reads", name, v->lo,
             v->hi - 1, access_name(other),
             other->kind == S_TMA_LOAD || other->kind == S_STORE_SHARED || other->kind == S_CP_ASYNC
                 ? "writes"
                 : "reads",
             oname);
  diag_note(S->d, other->span, "the %s issued here by %s %s", access_name(other), who, state);
  note_reuse(S, v, ov);
  S->failed = true;
  return false;
}

/* Against the TMA loads in flight: any access to their bytes races. */
static bool check_copies(Sim *S, const SimView *v, const IrStmt *s, bool writes) {
  for (int i = 0; i < S->ncopies; i++) {
    const SimCopy *c = &S->copies[i];
    if (!overlaps(v, &c->dst)) continue;
    char bar[NAME], state[200];
    sim_bar_name(S, c->bar, bar, sizeof bar);
    snprintf(state, sizeof state,
             "is in flight until it completes on %s; no warp has waited for that phase", bar);
    return sim_report_race(S, s, v, writes, c->s, &c->dst, c->warp, c->warp, state);
  }
  return true;
}

/* Against live WGMMA operand reads. */
static bool check_reads(Sim *S, const SimGroups *g, const SimView *v, const IrStmt *s,
                        const char *state) {
  for (int i = 0; i < g->nreads; i++) {
    const SimRead *r = &g->reads[i];
    if (overlaps(v, &r->v))
      return sim_report_race(S, s, v, true, r->s, &r->v, r->first_warp, r->last_warp, state);
  }
  return true;
}

/* A read (wgmma operand, load_shared, TMA store source) of v now, by
 * warp w. */
bool sim_shared_read(Sim *S, SimWarp *w, const SimView *v, const IrStmt *s) {
  return check_copies(S, v, s, false) && sim_cp_async_check(S, w, v, s, false) &&
         ((s->kind != S_LOAD_SHARED && s->kind != S_WGMMA_MMA) || sim_plain_check(S, w, v, s));
}

/* Whether every warp still running is ordered after the retirement of
 * bulk read r: nobody can race with it any more. */
static bool known_to_all(const Sim *S, const SimRead *r) {
  for (int i = 0; i < S->nwarps; i++)
    if (!S->warps[i].exited && !sim_order_knows(&S->warps[i], r)) return false;
  return true;
}

/* Drops the retired accesses of g (bulk reads, cp.async writes) that
 * every running warp knows of. */
void sim_groups_prune(const Sim *S, SimGroups *g) {
  int n = 0;
  for (int i = 0; i < g->nreads; i++)
    if (!known_to_all(S, &g->reads[i])) g->reads[n++] = g->reads[i];
  g->nreads = n;
}

/* A write by warp w against the bulk stores' sources: a source is read
 * until its wait retires it, and for w until w is ordered after that
 * wait (the wait orders the issuer only; the others need a sync with it). */
static bool check_bulk(Sim *S, SimWarp *w, SimGroups *g, const SimView *v, const IrStmt *s) {
  sim_groups_prune(S, g);
  for (int i = 0; i < g->nreads; i++) {
    const SimRead *r = &g->reads[i];
    if (!overlaps(v, &r->v) || sim_order_knows(w, r)) continue;
    if (r->stamp < 0)
      return sim_report_race(S, s, v, true, r->s, &r->v, r->first_warp, r->last_warp,
                             "is live until a cp.async.bulk.wait_group.read retires its group; "
                             "none has yet");
    char state[160];
    snprintf(state, sizeof state,
             "is live for warp %d until warp %d is ordered after the wait that retires its group",
             w->lid, w->lid);
    sim_report_race(S, s, v, true, r->s, &r->v, r->first_warp, r->last_warp, state);
    int by = r->retired_by % S->wpc;
    diag_note(S->d, r->retire_at->span,
              "warp %d retires it here, but nothing orders warp %d after this wait (a sync() "
              "with warp %d, or a phase warp %d arrives on after it)",
              by, w->lid, by, by);
    return false;
  }
  return true;
}

/* A write (TMA load, store_shared) of v now, by warp w. */
bool sim_shared_write(Sim *S, SimWarp *w, const SimView *v, const IrStmt *s) {
  if (!check_copies(S, v, s, true)) return false;
  for (int i = 0; i < S->nwgs; i++)
    if (!check_reads(S, &S->wgs[i].mma, v, s,
                     "is live until a wgmma.wait_group retires its commit group; none has yet"))
      return false;
  for (int i = 0; i < S->nwarps; i++)
    if (!check_bulk(S, w, &S->warps[i].bulk, v, s)) return false;
  if (!sim_cp_async_check(S, w, v, s, true)) return false;
  return (s->kind != S_STORE_SHARED && s->kind != S_CP_ASYNC) || sim_plain_check(S, w, v, s);
}

/* ------------------------------------------------------- commit groups */

/* Adds an access to the open (uncommitted) group. */
void sim_groups_push(SimGroups *g, const SimView *v, const IrStmt *s, int first, int last) {
  if (g->nreads == g->cap) {
    g->cap = g->cap ? 2 * g->cap : 8;
    g->reads = xrealloc(g->reads, sizeof *g->reads * (size_t)g->cap);
  }
  g->reads[g->nreads++] = (SimRead){*v, s, first, last, g->committed, -1, -1, NULL, 0, 0};
}

/* Retires the oldest groups until at most `keep` are in flight. */
void sim_retire(SimGroups *g, int64_t keep) {
  if (g->committed - g->retired > keep) g->retired = g->committed - keep;
  int n = 0;
  for (int i = 0; i < g->nreads; i++)
    if (g->reads[i].group >= g->retired) g->reads[n++] = g->reads[i];
  g->nreads = n;
}

/* A wait by warp w (statement s) on its groups g (bulk stores,
 * cp.async copies) leaving at most `keep` in flight: the older groups are
 * retired. Their accesses stay listed, stamped with w's epoch: other warps
 * may still race with them until they are ordered after this wait. */
void sim_retire_stamped(Sim *S, SimWarp *w, SimGroups *g, int64_t keep, const IrStmt *s) {
  if (g->committed - g->retired > keep) g->retired = g->committed - keep;
  for (int i = 0; i < g->nreads; i++) {
    SimRead *r = &g->reads[i];
    if (r->stamp >= 0 || r->group >= g->retired) continue;
    r->stamp = w->clock[w->id];
    r->retired_by = w->id;
    r->retire_at = s;
  }
  sim_groups_prune(S, g);
}

/* cp.async.bulk.wait_group.read n by warp w (statement s). */
void sim_bulk_retire(Sim *S, SimWarp *w, const IrStmt *s) {
  sim_retire_stamped(S, w, &w->bulk, s->wait.max_pending, s);
}

/* Frees the reads of a group list and empties it. */
void sim_groups_free(SimGroups *g) {
  free(g->reads);
  *g = (SimGroups){0};
}

/* ------------------------------------------------------------------ TMA */

/* Bytes a copy through tensor map m delivers: the whole box. */
static int64_t box_bytes(const IrTmap *m) {
  int64_t n = dtype_bytes(m->global->dtype);
  for (int i = 0; i < m->global->rank; i++) n *= m->box[i];
  return n;
}

/* One copy into the shared memory of CTA `cta`, completing on the
 * barrier at bv's offset there. */
static bool issue_copy(Sim *S, SimWarp *w, const IrStmt *s, SimView dst, SimView bv, int cta) {
  dst.cta = bv.cta = cta;
  if (S->ncta > 1) dst.block = bv.block = S->cta_block[cta];
  if (!sim_shared_write(S, w, &dst, s)) return false;
  if (S->ncopies == S->capcopies) {
    S->capcopies = S->capcopies ? 2 * S->capcopies : 16;
    S->copies = xrealloc(S->copies, sizeof *S->copies * (size_t)S->capcopies);
  }
  S->copies[S->ncopies++] =
      (SimCopy){dst, sim_bar_index(S, &bv), box_bytes(S->k->tmaps[s->tma.tmap]), s, w->id};
  return true;
}

/* Issues a global -> shared copy: its write is in flight until the
 * scheduler completes it. With a multicast mask, one copy per CTA of the
 * mask, at the same offsets, each completing on its own CTA's barrier. */
bool sim_tma_load(Sim *S, SimWarp *w, const IrStmt *s) {
  SimView dst, bv;
  if (!sim_view(S, w, &s->tma.shared, s->span, &dst) ||
      !sim_view(S, w, &s->tma.barrier, s->span, &bv))
    return false;
  if (!s->tma.mcast) return issue_copy(S, w, s, dst, bv, w->cta);
  int64_t mask = sim_eval_int(S, w, s->tma.mcast, s->span);
  if (S->failed) return false;
  if (mask == 0) {
    diag_error(S->d, s->span,
               "this multicast TMA copy in block %" PRId64 " of %s has an empty mask: it "
               "copies nothing and completes on no barrier",
               S->block, S->k->name);
    S->failed = true;
    return false;
  }
  for (int64_t r = 0; r < 16; r++) {
    if (!((mask >> r) & 1)) continue;
    int cta = peer_cta(S, w, s, r, "this multicast TMA copy");
    if (cta < 0 || !issue_copy(S, w, s, dst, bv, cta)) return false;
  }
  return true;
}

/* Completes the oldest copy in flight: its bytes land, then complete_tx. */
bool sim_complete_copy(Sim *S) {
  SimCopy c = S->copies[0];
  memmove(S->copies, S->copies + 1, sizeof *S->copies * (size_t)(S->ncopies - 1));
  S->ncopies--;
  sim_enter(S, c.dst.cta);
  if (sim_cta_exited(S, c.dst.cta)) {
    diag_error(S->d, c.s->span,
               "this TMA copy lands in block %" PRId64 " of %s after every warp of it has "
               "exited (its shared memory is gone)",
               S->block, S->k->name);
    S->failed = true;
    return false;
  }
  SimBarrier *b = &S->bars[c.bar];
  b->tx -= c.bytes;
  if (b->pending == 0 && b->tx < 0) {
    int64_t index = 0;
    const IrTensor *t = bar_tensor(S, c.bar, &index);
    SimView bv = {.t = t, .nidx = 1, .idx = {index}, .cta = c.dst.cta, .block = c.dst.block};
    return tx_overshoot(S, b, &bv, c.s);
  }
  phase_check(S, b);
  return true;
}

/* Issues a shared -> global bulk store: its source stays read until the
 * issuing warp's wait_group.read retires its bulk group. */
bool sim_tma_store(Sim *S, SimWarp *w, const IrStmt *s) {
  SimView src;
  if (!sim_view(S, w, &s->tma.shared, s->span, &src) || !sim_shared_read(S, w, &src, s) ||
      !sim_plain_bulk_read(S, w, &src, s))
    return false;
  sim_groups_push(&w->bulk, &src, s, w->id, w->id);
  sim_cover_store(S, w, s);
  return !S->failed;
}

/* ---------------------------------------------------------------- WGMMA */

/* A wgmma reads what the group's warps wrote by cp.async only once each
 * of them is ordered after the waits that retire those copies. */
static bool cp_async_group_read(Sim *S, int first, int last, const SimView *v, const IrStmt *s) {
  for (int i = first; i <= last && i < S->nwarps; i++)
    if (!sim_cp_async_check(S, &S->warps[i], v, s, false)) return false;
  return true;
}

/* Notes that the wgmma s of group `group` names register tensor t. */
static void note_reg_use(SimWarpGroup *g, const IrTensor *t, const IrStmt *s, int64_t group) {
  if (!t) return;
  for (int i = 0; i < g->nregs; i++)
    if (g->regs[i].t == t) {
      g->regs[i] = (SimRegUse){t, s, group};
      return;
    }
  if (g->nregs < SIM_MAX_MMA_REGS) g->regs[g->nregs++] = (SimRegUse){t, s, group};
}

/* Drops the register tensors of retired groups. */
static void retire_reg_uses(SimWarpGroup *g) {
  int n = 0;
  for (int i = 0; i < g->nregs; i++)
    if (g->regs[i].group >= g->mma.retired) g->regs[n++] = g->regs[i];
  g->nregs = n;
}

bool sim_wgmma_regs_check(Sim *S, SimWarp *w, const IrStmt *s) {
  SimWarpGroup *g = sim_wg(S, w);
  if (g->nregs == 0) return true;
  const IrTensor *ops[IR_STMT_MAX_TENSORS];
  int n = ir_stmt_tensors(s, ops);
  for (int i = 0; i < n; i++)
    for (int j = 0; ops[i] && j < g->nregs; j++) {
      const SimRegUse *u = &g->regs[j];
      if (u->t != ops[i]) continue;
      bool acc = u->s->wgmma.acc == u->t;
      diag_error(S->d, s->span,
                 "register tensor '%s' is %s here while a wgmma that %s it is in flight in block "
                 "%" PRId64 " of %s (warp %d): a wgmma.wait_group must retire its group first",
                 u->t->name, i == 0 ? "written" : "read", acc ? "accumulates into" : "reads",
                 S->block, S->k->name, w->lid);
      diag_note(S->d, u->s->span, "the wgmma, %s",
                u->group >= g->mma.committed ? "not committed yet" : "committed, not retired");
      S->failed = true;
      return false;
    }
  return true;
}

/* One wgmma statement for the whole warp group (all its warps have met
 * here; w is the last to arrive). */
bool sim_wgmma(Sim *S, SimWarp *w, const IrStmt *s) {
  SimWarpGroup *g = sim_wg(S, w);
  int first = w->cta * S->wpc + w->lid / 4 * 4, last = first + g->meet.size - 1;
  switch (s->kind) {
  case S_WGMMA_MMA:
    for (int i = s->wgmma.ra ? 1 : 0; i < 2; i++) { /* a register A reads no shared memory */
      SimView v;
      const IrRef *operand = i == 0 ? &s->wgmma.a : &s->wgmma.b;
      if (!sim_view(S, w, operand, s->span, &v) || !sim_shared_read(S, w, &v, s) ||
          !cp_async_group_read(S, first, last, &v, s))
        return false;
      sim_groups_push(&g->mma, &v, s, first, last);
    }
    note_reg_use(g, s->wgmma.acc, s, g->mma.committed);
    note_reg_use(g, s->wgmma.ra, s, g->mma.committed);
    return true;
  case S_WGMMA_COMMIT:
    g->mma.committed++;
    return true;
  case S_WGMMA_WAIT:
    sim_retire(&g->mma, s->wait.max_pending);
    retire_reg_uses(g);
    return true;
  default:
    return true; /* wgmma.fence orders registers, not shared memory */
  }
}

/* -------------------------------------------------------------- exits */

/* A warp leaves the kernel: nothing it (or its warp group) issued may be
 * left in flight. */
bool sim_exit_checks(Sim *S, SimWarp *w) {
  const SimGroups *g = &sim_wg(S, w)->mma;
  if (g->nreads) {
    const SimRead *r = &g->reads[0];
    diag_error(S->d, r->s->span,
               "asynchronous work left behind in block %" PRId64 " of %s: warp %d exits while "
               "this wgmma is still in flight (%s)",
               S->block, S->k->name, w->lid,
               r->group >= g->committed ? "never committed" : "no wgmma.wait_group retires it");
    S->failed = true;
    return false;
  }
  const SimRead *r = w->bulk.reads;
  while (r < w->bulk.reads + w->bulk.nreads && r->stamp >= 0) r++;
  if (r < w->bulk.reads + w->bulk.nreads) {
    diag_error(S->d, r->s->span,
               "asynchronous work left behind in block %" PRId64 " of %s: warp %d exits while "
               "this TMA store still reads shared memory (%s)",
               S->block, S->k->name, w->lid,
               r->group >= w->bulk.committed ? "never committed"
                                             : "no cp.async.bulk.wait_group.read retires it");
    S->failed = true;
    return false;
  }
  return true;
}

/* Every warp has exited: copies still in flight had nobody waiting for
 * them, and declared transaction bytes must all have been delivered. */
bool sim_end_checks(Sim *S) {
  if (S->ncopies) {
    const SimCopy *c = &S->copies[0];
    char name[NAME];
    sim_view_name(&c->dst, name, sizeof name);
    diag_error(S->d, c->s->span,
               "asynchronous work left behind in block %" PRId64 " of %s: this TMA copy into "
               "%s is still in flight when every warp has exited (no warp waits on its barrier)",
               S->block, S->k->name, name);
    S->failed = true;
    return false;
  }
  for (int i = 0; i < S->nbars; i++) {
    const SimBarrier *b = &S->bars[i];
    if (b->tx <= 0) continue;
    int64_t index = 0;
    const IrTensor *t = bar_tensor(S, i, &index);
    sim_enter(S, i / S->bars_per_cta);
    diag_error(S->d, b->last_expect ? b->last_expect->span : t->span,
               "mbarrier misuse in block %" PRId64 " of %s: %s[%" PRId64 "] still expects %" PRId64
               " transaction bytes when the block ends; the copies never deliver them",
               S->block, S->k->name, t->name, index, b->tx);
    S->failed = true;
    return false;
  }
  return true;
}
