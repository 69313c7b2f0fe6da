/* sim_warp.c: one warp walking the structured IR body.
 *
 * A warp is a stack of frames (the block being run, its next statement,
 * the loop or region that opened it), so that it can stop at any wait and
 * resume there. It runs a statement when any of its threads is in the
 * statement's region: thread_group(begin, n) keeps threads [begin, begin+n)
 * of its parent; single_thread() and TMA issue keep the region's first
 * thread (the PTX backend elects a lane of the group's first warp, or the
 * first thread of a group that is not made of whole warps). Arrivals count
 * the warp's threads in the region: an arrive outside single_thread() by a
 * full warp is 32 arrivals, as on the GPU.
 */
#include "sim/sim_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* Threads of warp `warp` in the region. */
static int64_t lanes_in(const SimRegion *r, int warp) {
  int64_t lo = 32 * (int64_t)warp, hi = lo + 32;
  if (r->single) return r->begin >= lo && r->begin < hi;
  int64_t a = r->begin > lo ? r->begin : lo, b = r->end < hi ? r->end : hi;
  return b > a ? b - a : 0;
}

/* Whether the warp holds the region's first thread (the one that issues a
 * TMA copy or runs a single_thread() body). */
static bool is_issuer(const SimRegion *r, int warp) {
  return r->begin >= 32 * (int64_t)warp && r->begin < 32 * (int64_t)warp + 32;
}

/* Enters a block; the region in force now is restored on leaving it. */
static void push_frame(SimWarp *w, const IrBlock *blk, const IrStmt *owner, int64_t stop,
                       int64_t step) {
  if (w->nframes == w->cap) {
    w->cap = w->cap ? 2 * w->cap : 8;
    w->frames = xrealloc(w->frames, sizeof *w->frames * (size_t)w->cap);
  }
  w->frames[w->nframes++] = (SimFrame){blk, 0, owner, stop, step, w->region};
}

/* Warp `id` at the start of the kernel body, over the whole block. */
void sim_warp_start(Sim *S, SimWarp *w, int id) {
  *w = (SimWarp){.id = id, .cta = id / S->wpc, .lid = id % S->wpc, .meet_gen = -1};
  w->region = (SimRegion){0, 32 * (int64_t)S->wpc, false};
  w->ivals = sim_zalloc((size_t)S->k->nvars + 1, sizeof *w->ivals);
  w->fvals = sim_zalloc((size_t)S->k->nvars + 1, sizeof *w->fvals);
  w->clock = sim_zalloc((size_t)S->nwarps, sizeof *w->clock);
  w->clock[id] = 1; /* its first epoch: what it does before any release is
                       stamped 1, which no other warp knows (they hold 0) */
  push_frame(w, &S->k->body, NULL, 0, 0);
}

/* Frees what sim_warp_start and the run allocated. */
void sim_warp_free(SimWarp *w) {
  free(w->frames);
  free(w->ivals);
  free(w->fvals);
  free(w->clock);
  sim_groups_free(&w->bulk);
  sim_groups_free(&w->cpasync);
}

/* The loop test of range(): var < stop for a positive step. */
static bool loop_continues(DType t, int64_t var, int64_t stop, int64_t step) {
  bool uns = t == DT_UINT32 || t == DT_UINT64;
  if (uns) return step > 0 ? (uint64_t)var < (uint64_t)stop : (uint64_t)var > (uint64_t)stop;
  return step > 0 ? var < stop : var > stop;
}

/* The end of a frame's block: the next loop iteration, or back out. */
static void leave_frame(SimWarp *w) {
  SimFrame *f = &w->frames[w->nframes - 1];
  const IrStmt *s = f->owner;
  if (s && s->kind == S_FOR) {
    const IrVar *var = s->loop.var;
    int64_t *v = &w->ivals[var->id];
    *v = ir_int_wrap(var->type, (int64_t)((uint64_t)*v + (uint64_t)f->step));
    if (loop_continues(var->type, *v, f->stop, f->step)) {
      f->pc = 0;
      return;
    }
  }
  w->region = f->saved;
  w->nframes--;
}

/* A report was made: the block stops. */
static SimStep failed(Sim *S) {
  S->failed = true;
  return STEP_FAILED;
}

/* range(start, stop, step): stop is read once, as the backend does. */
static SimStep exec_for(Sim *S, SimWarp *w, const IrStmt *s) {
  const IrForStmt *l = &s->loop;
  DType t = l->var->type;
  int64_t start = ir_int_wrap(t, sim_eval_int(S, w, l->start, s->span));
  int64_t stop = ir_int_wrap(t, sim_eval_int(S, w, l->stop, s->span));
  int64_t step = sim_eval_int(S, w, l->step, s->span);
  if (S->failed) return STEP_FAILED;
  if (step == 0) {
    diag_error(S->d, s->span, "range() with a step of 0 in block %" PRId64 " of %s", S->block,
               S->k->name);
    return failed(S);
  }
  w->ivals[l->var->id] = start;
  if (loop_continues(t, start, stop, step)) push_frame(w, &s->body, s, stop, step);
  return STEP_RAN;
}

/* thread_group() and single_thread(): entered when the warp holds a
 * thread of the new region, skipped otherwise. */
static SimStep exec_region(Sim *S, SimWarp *w, const IrStmt *s) {
  SimRegion r = w->region;
  if (s->kind == S_THREAD_GROUP) {
    if (r.single) {
      diag_error(S->d, s->span, "thread_group() inside single_thread() cannot be simulated");
      return failed(S);
    }
    int64_t begin = r.begin + s->group.begin;
    r = (SimRegion){begin, begin + s->group.count, false};
  } else {
    r = (SimRegion){r.begin, r.begin + 1, true};
  }
  if (lanes_in(&r, w->lid) == 0) return STEP_RAN;
  push_frame(w, &s->body, s, 0, 0);
  w->region = r;
  return STEP_RAN;
}

/* What a meeting point gathers, for messages. */
static void meet_name(const Sim *S, const SimMeet *m, char *buf, size_t size) {
  if (m->cluster)
    snprintf(buf, size, "cluster");
  else if (m >= S->cta && m < S->cta + S->ncta)
    snprintf(buf, size, "block");
  else if (m->end > m->begin)
    snprintf(buf, size, "thread group [%" PRId64 ", %" PRId64 ")", m->begin, m->end);
  else
    snprintf(buf, size, "warp group");
}

/* The barrier sync() waits on: the statement's barrier_id (barriers.c),
 * the block's (0) when the warp's region is the whole block, else the named
 * barrier of that thread group, met by every warp holding a thread of the
 * group. NULL after a report (a single thread, a barrier that is not its
 * region's). */
static SimMeet *sync_meet(Sim *S, SimWarp *w, const IrStmt *s) {
  SimRegion r = w->region;
  if (r.single) {
    diag_error(S->d, s->span, "sync() inside single_thread() can never complete");
    return NULL;
  }
  int id = s->kind == S_REDUCE    ? s->reduce.barrier_id
           : s->kind == S_CONVERT ? s->cast.barrier_id
           : s->kind == S_PRINTF  ? s->print.barrier_id
                                  : s->sync.barrier_id;
  bool whole = r.begin == 0 && r.end == 32 * (int64_t)S->wpc;
  SimMeet *m = id >= 1 && id <= IR_MAX_NAMED_BARRIERS ? &S->named[w->cta][id - 1] : NULL;
  if (whole ? id != 0 : !m || (m->size && (m->begin != r.begin || m->end != r.end))) {
    diag_error(S->d, s->span,
               "the simulation needs planned IR: this sync() has barrier %d, not one of its "
               "thread group (run the passes first)",
               id);
    return NULL;
  }
  if (whole) return &S->cta[w->cta];
  if (m->size == 0) {
    int64_t first = r.begin / 32, last = (r.end - 1) / 32;
    *m = (SimMeet){.size = (int)(last - first + 1), .begin = r.begin, .end = r.end};
  }
  return m;
}

/* A meeting point: blocks until every warp of the meet has arrived; the
 * last one to arrive runs the statement's effect (wgmma) for all. */
static SimStep exec_meet(Sim *S, SimWarp *w, SimMeet *m, const IrStmt *s) {
  if (w->meet_gen >= 0) {
    if (m->generation == w->meet_gen) return STEP_BLOCKED;
    w->meet_gen = -1;
    w->wait = WAIT_NONE;
    return STEP_RAN;
  }
  if (m->arrived > 0 && m->at != s && !m->cluster) {
    char what[64];
    meet_name(S, m, what, sizeof what);
    diag_error(S->d, s->span,
               "warp %d reaches this statement in block %" PRId64 " of %s while other warps "
               "of its %s wait at another one",
               w->lid, S->block, S->k->name, what);
    diag_note(S->d, m->at->span, "the other warps wait here");
    return failed(S);
  }
  m->at = s;
  if (++m->arrived == m->size) {
    bool barrier = s->kind == S_SYNC || s->kind == S_CLUSTER_SYNC || s->kind == S_REDUCE ||
                   s->kind == S_CONVERT || s->kind == S_PRINTF;
    if (barrier) sim_order_meet(S, m, w);
    m->arrived = 0;
    m->generation++;
    if (!barrier && !sim_wgmma(S, w, s)) return STEP_FAILED;
    return STEP_RAN;
  }
  w->meet_gen = m->generation;
  w->meet = m;
  w->wait = WAIT_MEET;
  w->wait_at = s;
  return STEP_BLOCKED;
}

/* mbarrier.wait: goes on when the phase has completed, else blocks. */
static SimStep exec_wait(Sim *S, SimWarp *w, const IrStmt *s) {
  SimView bv;
  int64_t parity = sim_eval_int(S, w, s->mbar.parity, s->span);
  if (S->failed || !sim_view(S, w, &s->mbar.barrier, s->span, &bv)) return STEP_FAILED;
  int bar = sim_bar_index(S, &bv);
  if (sim_mbar_ready(S, bar, parity)) {
    sim_order_acquire(S, w, &S->bars[bar]);
    w->wait = WAIT_NONE;
    return STEP_RAN;
  }
  if (w->wait != WAIT_MBAR || w->wait_at != s) w->wait_since = S->bars[bar].phase;
  w->wait = WAIT_MBAR;
  w->wait_at = s;
  w->wait_bar = bar;
  w->wait_parity = parity & 1;
  return STEP_BLOCKED;
}

/* var = expression, in the variable's type. */
static SimStep exec_assign(Sim *S, SimWarp *w, const IrStmt *s) {
  const IrVar *var = s->assign.var;
  if (dtype_is_float(var->type))
    w->fvals[var->id] = sim_eval_float(S, w, s->assign.value, s->span);
  else
    w->ivals[var->id] = ir_int_wrap(var->type, sim_eval_int(S, w, s->assign.value, s->span));
  return S->failed ? STEP_FAILED : STEP_RAN;
}

/* lock_semaphore / release_semaphore by the thread of a single_thread()
 * region. Run block by block, a wait passes at once (the block it waits
 * for is not simulated); with the grid together (Sim.grid) it blocks
 * until some block releases the value. */
static SimStep exec_semaphore(Sim *S, SimWarp *w, const IrStmt *s) {
  int64_t addr = sim_eval_int(S, w, s->sem.addr, s->span);
  int64_t value = S->failed ? 0 : sim_eval_int(S, w, s->sem.value, s->span);
  if (S->failed) return STEP_FAILED;
  if (!S->grid) return STEP_RAN;
  if (s->kind == S_SEM_WAIT) {
    if (sim_sem_value(S, addr) == value) {
      w->wait = WAIT_NONE;
      return STEP_RAN;
    }
    w->wait = WAIT_SEM;
    w->wait_at = s;
    w->sem_addr = addr;
    w->sem_want = value;
    return STEP_BLOCKED;
  }
  int i = 0;
  while (i < S->nsems && S->sem_addr[i] != addr) i++;
  if (i == S->nsems) {
    if (S->nsems == S->capsems) {
      S->capsems = S->capsems ? 2 * S->capsems : 16;
      S->sem_addr = xrealloc(S->sem_addr, sizeof *S->sem_addr * (size_t)S->capsems);
      S->sem_val = xrealloc(S->sem_val, sizeof *S->sem_val * (size_t)S->capsems);
    }
    S->sem_addr[S->nsems++] = addr;
  }
  S->sem_val[i] = value;
  return STEP_RAN;
}

/* A bool result of the async layer as a step. */
static SimStep ok_or_failed(bool ok) { return ok ? STEP_RAN : STEP_FAILED; }

/* A plain shared access by the warp (load_shared, store_shared). */
static SimStep exec_plain(Sim *S, SimWarp *w, const IrStmt *s) {
  SimView v;
  if (!sim_view(S, w, &s->smem.shared, s->span, &v)) return STEP_FAILED;
  return ok_or_failed(s->kind == S_LOAD_SHARED ? sim_shared_read(S, w, &v, s)
                                               : sim_shared_write(S, w, &v, s));
}

/* One barrier of an mbarrier array: bars[i]. */
static bool is_bar(const IrRef *r) { return r->t && r->t->is_mbarrier && r->nidx == 1; }

/* A view of a data tensor in shared memory. */
static bool is_shared(const IrRef *r) {
  return r->t && r->t->space == MS_SHARED && !r->t->is_mbarrier;
}

/* The operands the simulation reads must be what planned IR holds (the
 * verifier guarantees it after ir_run_passes; a hand-built module may not). */
static bool operands_ok(const Sim *S, const IrStmt *s) {
  switch (s->kind) {
  case S_MBAR_WAIT:
  case S_MBAR_ARRIVE:
  case S_MBAR_EXPECT_TX:
    return is_bar(&s->mbar.barrier);
  case S_MBAR_REMOTE:
  case S_MBAR_MULTICAST:
    return is_bar(&s->cmbar.barrier);
  case S_TMA_LOAD:
    return is_shared(&s->tma.shared) && is_bar(&s->tma.barrier) && s->tma.tmap >= 0 &&
           s->tma.tmap < S->k->ntmaps;
  case S_WGMMA_MMA:
    return (s->wgmma.ra || is_shared(&s->wgmma.a)) && is_shared(&s->wgmma.b);
  case S_TMA_STORE:
    return is_shared(&s->tma.shared);
  case S_LOAD_SHARED:
  case S_STORE_SHARED:
    return is_shared(&s->smem.shared);
  case S_CP_ASYNC:
    return is_shared(&s->cpasync.shared);
  default:
    return true;
  }
}

/* Runs statement s; STEP_RAN means it is done and the pc moves on. */
static SimStep exec_stmt(Sim *S, SimWarp *w, const IrStmt *s) {
  if (!operands_ok(S, s)) {
    diag_error(S->d, s->span,
               "the simulation needs planned IR: this statement's operands are "
               "not (run the passes first)");
    return failed(S);
  }
  bool wgmma = s->kind == S_WGMMA_FENCE || s->kind == S_WGMMA_MMA || s->kind == S_WGMMA_COMMIT ||
               s->kind == S_WGMMA_WAIT;
  if (!wgmma && !sim_wgmma_regs_check(S, w, s)) return failed(S);
  switch (s->kind) {
  case S_ASSIGN:
    return exec_assign(S, w, s);
  case S_FOR:
    return exec_for(S, w, s);
  case S_IF: {
    int64_t c = sim_eval_int(S, w, s->branch.cond, s->span);
    if (S->failed) return STEP_FAILED;
    push_frame(w, c ? &s->body : &s->orelse, s, 0, 0);
    return STEP_RAN;
  }
  case S_THREAD_GROUP:
  case S_SINGLE_THREAD:
    return exec_region(S, w, s);
  case S_REDUCE: /* across warps: through shared memory, between barriers */
    if (ir_reduce_scratch_bytes(s) == 0) return STEP_RAN;
    /* fall through */
  case S_PRINTF: /* print_tensor: between barriers */
    if (!ir_is_print_tensor(s)) return STEP_RAN;
    /* fall through */
  case S_CONVERT:
  case S_SYNC: {
    SimMeet *m = sync_meet(S, w, s);
    return m ? exec_meet(S, w, m, s) : failed(S);
  }
  case S_MBAR_WAIT:
    return exec_wait(S, w, s);
  case S_MBAR_ARRIVE:
  case S_MBAR_EXPECT_TX:
    return ok_or_failed(sim_mbar_arrive(S, w, s, lanes_in(&w->region, w->lid)));
  case S_MBAR_REMOTE:
  case S_MBAR_MULTICAST:
    return ok_or_failed(sim_mbar_arrive_cluster(S, w, s, &w->region));
  case S_CLUSTER_SYNC:
    return exec_meet(S, w, &S->clusters[sim_peer(S, w->cta, 0)], s);
  case S_TMA_LOAD:
    return is_issuer(&w->region, w->lid) ? ok_or_failed(sim_tma_load(S, w, s)) : STEP_RAN;
  case S_TMA_STORE:
    return is_issuer(&w->region, w->lid) ? ok_or_failed(sim_tma_store(S, w, s)) : STEP_RAN;
  case S_TMA_COMMIT:
    w->bulk.committed++;
    return STEP_RAN;
  case S_TMA_WAIT:
    sim_bulk_retire(S, w, s);
    return STEP_RAN;
  case S_CP_ASYNC: /* every warp of the group copies its part */
    return ok_or_failed(sim_cp_async(S, w, s));
  case S_CP_COMMIT:
    w->cpasync.committed++;
    return STEP_RAN;
  case S_CP_WAIT:
  case S_CP_WAIT_ALL:
    sim_cp_async_wait(S, w, s);
    return STEP_RAN;
  case S_WGMMA_FENCE:
  case S_WGMMA_MMA:
  case S_WGMMA_COMMIT:
  case S_WGMMA_WAIT:
    return exec_meet(S, w, &sim_wg(S, w)->meet, s);
  case S_LOAD_SHARED:
  case S_STORE_SHARED:
    return exec_plain(S, w, s);
  case S_SEM_WAIT:
  case S_SEM_RELEASE:
    return exec_semaphore(S, w, s);
  case S_STORE_GLOBAL: /* no synchronisation; what it writes, for sim_cover.c */
    sim_cover_store(S, w, s);
    return S->failed ? STEP_FAILED : STEP_RAN;
  default:
    return STEP_RAN; /* register and global work: no synchronisation */
  }
}

/* Runs the warp's next statement (leaving finished blocks and loops
 * first); STEP_EXITED once the body is done and the exit checks pass. */
SimStep sim_warp_step(Sim *S, SimWarp *w) {
  while (w->nframes > 0 && w->frames[w->nframes - 1].pc >= w->frames[w->nframes - 1].blk->len)
    leave_frame(w);
  if (w->nframes == 0) {
    w->exited = true;
    return sim_exit_checks(S, w) ? STEP_EXITED : STEP_FAILED;
  }
  int top = w->nframes - 1;
  const IrStmt *s = w->frames[top].blk->items[w->frames[top].pc];
  S->steps++;
  SimStep r = exec_stmt(S, w, s);
  if (r == STEP_RAN) w->frames[top].pc++;
  return r;
}

/* "wait here for ..." for a deadlock report. */
void sim_describe_wait(Sim *S, const SimWarp *w, char *buf, size_t size) {
  if (w->wait == WAIT_MEET) {
    char what[64];
    meet_name(S, w->meet, what, sizeof what);
    snprintf(buf, size, "for the other warps of the %s (%d of %d arrived)", what, w->meet->arrived,
             w->meet->size);
    return;
  }
  if (w->wait == WAIT_SEM) {
    char name[160];
    sim_sem_name(S, w->sem_addr, name, sizeof name);
    snprintf(buf, size, "for the semaphore at %s to hold %" PRId64 "; it holds %" PRId64, name,
             w->sem_want, sim_sem_value(S, w->sem_addr));
    return;
  }
  const SimBarrier *b = &S->bars[w->wait_bar];
  char name[96];
  sim_bar_name(S, w->wait_bar, name, sizeof name);
  snprintf(buf, size,
           "for the phase of parity %" PRId64 " of %s to complete; it is in phase %" PRId64
           " with %" PRId64 " of %" PRId64 " arrivals and %" PRId64 " transaction bytes pending",
           w->wait_parity, name, b->phase, b->pending, b->count, b->tx);
}
