/* sim.c: sim_run, the entry of `tlsc --verify`.
 *
 * For each kernel: bind the run-time parameters, evaluate the grid, pick
 * the blocks (first, middle, last unless told), and run each block's warps
 * with the schedule below until every warp has exited, a problem is
 * reported, or nothing can move (a deadlock).
 *
 * The schedule is one interleaving, chosen to open the windows in which
 * races show: warps run in index order, each until it blocks; a TMA copy
 * completes only when no warp can move without it (oldest first, one at a
 * time); a WGMMA's reads end only when a wait_group retires its group.
 * A kernel whose correctness depends on copies being slow, or on WGMMA
 * finishing early, is therefore caught; the values a warp computes are
 * the same in every interleaving, since they are uniform per warp.
 */
#include "sim/sim_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Statements one block may execute before the simulation gives up: a
 * safeguard against loops with absurd trip counts (about a minute). */
#define SIM_MAX_STEPS 2000000000LL

enum { MAX_SAMPLES = 64 };

/* The largest grid a kernel with semaphores is run whole in (blocks wait
 * for each other through global memory, so one block alone cannot be
 * run); larger ones run block by block, their waits passing at once. */
enum { MAX_GRID_TOGETHER = 64 };

/* Notes a deadlock report gives, past its error. */
enum { MAX_DEADLOCK_NOTES = 12 };

/* ------------------------------------------------------------- set-up */

/* Zeroed memory for n objects of `size` bytes. */
void *sim_zalloc(size_t n, size_t size) {
  void *p = xmalloc(n * size);
  memset(p, 0, n * size);
  return p;
}

/* Numbers every barrier of every mbarrier array (each CTA has its own
 * copy: barrier b of CTA c is bars[c * bars_per_cta + b]) and initialises
 * it with its count (mbarrier.init at kernel entry) and empty clocks. */
static void setup_barriers(Sim *S) {
  const IrKernel *k = S->k;
  S->bar_base = sim_zalloc((size_t)k->ntensors + 1, sizeof *S->bar_base);
  S->bars_per_cta = 0;
  for (int i = 0; i < k->ntensors; i++) {
    const IrTensor *t = k->tensors[i];
    if (t->is_mbarrier && t->id >= 0 && t->id < k->ntensors) {
      S->bar_base[t->id] = S->bars_per_cta;
      S->bars_per_cta += (int)t->shape[0];
    }
  }
  S->nbars = S->bars_per_cta * S->ncta;
  S->bars = sim_zalloc((size_t)S->nbars + 1, sizeof *S->bars);
  for (int c = 0; c < S->ncta; c++)
    for (int i = 0; i < k->ntensors; i++) {
      const IrTensor *t = k->tensors[i];
      if (!t->is_mbarrier || t->id < 0 || t->id >= k->ntensors) continue;
      for (int64_t j = 0; j < t->shape[0]; j++) {
        int64_t count = t->mbar_counts ? t->mbar_counts[j] : 1;
        S->bars[c * S->bars_per_cta + S->bar_base[t->id] + j] = (SimBarrier){
            .count = count,
            .pending = count,
            .arrived = sim_zalloc((size_t)S->nwarps, sizeof(int64_t)),
            .completed = sim_zalloc((size_t)S->nwarps, sizeof(int64_t)),
        };
      }
    }
}

void sim_enter(Sim *S, int cta) {
  S->cur = cta;
  S->block = S->cta_block[cta];
  for (int i = 0; i < 3; i++) S->ctaid[i] = S->cta_coord[cta][i];
}

/* Index i of a box of dimensions dim as coordinates, x fastest (a linear
 * block index in the grid, a rank in a cluster), and back. */
static void unflatten(int64_t i, const int64_t dim[3], int64_t at[3]) {
  at[0] = i % dim[0], at[1] = i / dim[0] % dim[1], at[2] = i / (dim[0] * dim[1]);
}

static int64_t flatten(const int64_t at[3], const int64_t dim[3]) {
  return at[0] + dim[0] * (at[1] + dim[1] * at[2]);
}

int64_t sim_cluster_rank(const Sim *S, int cta) {
  int64_t in[3];
  for (int i = 0; i < 3; i++) in[i] = S->cta_coord[cta][i] % S->cdim[i];
  return flatten(in, S->cdim);
}

/* CTA c runs block cta_block[c]: the CTAs of one cluster are c's own
 * (single-cluster runs, rank r at index r) or, with the whole grid run,
 * the blocks of its cluster (index = linear block index). */
int sim_peer(const Sim *S, int cta, int64_t rank) {
  if (rank < 0 || rank >= S->csize) return -1;
  if (!S->grid) return (int)rank;
  int64_t in[3], at[3];
  unflatten(rank, S->cdim, in);
  for (int i = 0; i < 3; i++)
    at[i] = S->cta_coord[cta][i] - S->cta_coord[cta][i] % S->cdim[i] + in[i];
  return (int)flatten(at, S->nctaid);
}

bool sim_cta_exited(const Sim *S, int cta) {
  for (int i = 0; i < S->wpc; i++)
    if (!S->warps[cta * S->wpc + i].exited) return false;
  return true;
}

SimWarpGroup *sim_wg(Sim *S, const SimWarp *w) {
  return &S->wgs[w->cta * S->wgs_per_cta + w->lid / 4];
}

/* The state at launch of the cluster that holds block `block` (the block
 * alone without attrs.cluster_blocks), or of the whole grid: each CTA's
 * coordinates (rank r is x-fastest in the cluster, as %cluster_ctarank),
 * warps at the start, warp groups, barriers. */
static void setup_block(Sim *S, int64_t block) {
  int64_t at[3];
  unflatten(block, S->nctaid, at);
  S->cta_block = sim_zalloc((size_t)S->ncta, sizeof *S->cta_block);
  S->cta_coord = sim_zalloc((size_t)S->ncta, sizeof *S->cta_coord);
  for (int r = 0; r < S->ncta; r++) {
    /* the grid run whole: CTA r is block r; else rank r of block's cluster */
    const int64_t *dim = S->grid ? S->nctaid : S->cdim;
    int64_t in[3];
    unflatten(r, dim, in);
    for (int i = 0; i < 3; i++)
      S->cta_coord[r][i] = S->grid ? in[i] : at[i] - at[i] % dim[i] + in[i];
    S->cta_block[r] = flatten(S->cta_coord[r], S->nctaid);
  }
  S->wpc = S->k->warps;
  S->nwarps = S->wpc * S->ncta;
  S->wgs_per_cta = (S->wpc + 3) / 4;
  S->nwgs = S->wgs_per_cta * S->ncta;
  S->warps = sim_zalloc((size_t)S->nwarps, sizeof *S->warps);
  S->wgs = sim_zalloc((size_t)S->nwgs, sizeof *S->wgs);
  for (int i = 0; i < S->nwgs; i++) {
    int g = i % S->wgs_per_cta;
    S->wgs[i].meet.size = S->wpc - 4 * g < 4 ? S->wpc - 4 * g : 4;
  }
  S->cta = sim_zalloc((size_t)S->ncta, sizeof *S->cta);
  for (int c = 0; c < S->ncta; c++) S->cta[c] = (SimMeet){.size = S->wpc};
  S->named = sim_zalloc((size_t)S->ncta, sizeof *S->named);
  /* a cluster's meeting is that of its rank-0 CTA */
  S->clusters = sim_zalloc((size_t)S->ncta, sizeof *S->clusters);
  for (int c = 0; c < S->ncta; c++)
    S->clusters[c] = (SimMeet){.cluster = true, .size = S->wpc * S->csize};
  for (int i = 0; i < S->nwarps; i++) sim_warp_start(S, &S->warps[i], i);
  setup_barriers(S);
  sim_enter(S, 0);
}

/* Frees a block's state (the Sim keeps its kernel and parameters). */
static void free_block(Sim *S) {
  for (int i = 0; i < S->nwarps; i++) sim_warp_free(&S->warps[i]);
  for (int i = 0; i < S->nwgs; i++) sim_groups_free(&S->wgs[i].mma);
  for (int i = 0; i < S->nbars; i++) {
    free(S->bars[i].arrived);
    free(S->bars[i].completed);
  }
  free(S->warps);
  free(S->wgs);
  free(S->bars);
  free(S->bar_base);
  free(S->copies);
  free(S->cta);
  free(S->clusters);
  free(S->named);
  free(S->cta_block);
  free(S->cta_coord);
  S->warps = NULL, S->wgs = NULL, S->bars = NULL, S->bar_base = NULL, S->copies = NULL;
  S->cta = NULL, S->named = NULL, S->cta_block = NULL, S->cta_coord = NULL;
  S->nbars = S->ncopies = S->capcopies = 0;
  sim_plain_free(S);
  free(S->sem_addr);
  free(S->sem_val);
  S->sem_addr = S->sem_val = NULL;
  S->nsems = S->capsems = 0;
}

/* ------------------------------------------------------------ semaphores */

int64_t sim_sem_value(const Sim *S, int64_t addr) {
  for (int i = 0; i < S->nsems; i++)
    if (S->sem_addr[i] == addr) return S->sem_val[i];
  return 0;
}

/* The workspace a semaphore address lies in (its pointer parameter's
 * index, sim_expr.c), -1 for a user parameter's. */
static int sem_workspace(const IrKernel *k, int64_t addr) {
  int64_t index = (addr >> 32) - 1;
  if (index < 0 || index >= k->nparams) return -1;
  int w = (int)index - (k->nparams - k->nws);
  return w >= 0 && w < k->nws ? w : -1;
}

void sim_sem_name(const Sim *S, int64_t addr, char *buf, size_t size) {
  int64_t index = (addr >> 32) - 1, off = addr & 0xffffffffLL;
  const IrKernel *k = S->k;
  const char *what = "parameter", *name = "?";
  int w = sem_workspace(k, addr);
  if (w >= 0)
    what = "workspace", name = k->ws[w].tensor->name;
  else if (index >= 0 && index < k->nparams)
    name = k->params[index]->name;
  snprintf(buf, size, "%s '%s' + %" PRId64 " bytes", what, name, off);
}

/* A clean workspace is zeros at a launch because the launch before left
 * it so (Tilus's contract, on which libtlsrt zeroes it only once): with the
 * whole grid run, every semaphore in one must end at 0. False after a
 * report. */
static bool clean_check(Sim *S) {
  const IrKernel *k = S->k;
  for (int i = 0; S->grid && i < S->nsems; i++) {
    int w = sem_workspace(k, S->sem_addr[i]);
    if (S->sem_val[i] == 0 || w < 0 || !k->ws[w].clean) continue;
    char name[160];
    sim_sem_name(S, S->sem_addr[i], name, sizeof name);
    diag_error(S->d, k->ws[w].tensor->span,
               "the kernel ends with the semaphore at %s holding %" PRId64
               ": a requires_clean=True workspace must be all zeros when the kernel ends "
               "(the next launch finds it as this one leaves it): release it back to 0",
               name, S->sem_val[i]);
    S->failed = true;
    return false;
  }
  return true;
}

/* Whether the kernel waits on semaphores (anywhere in its body). */
static bool uses_semaphores(const IrBlock *b) {
  for (int i = 0; i < b->len; i++) {
    const IrStmt *s = b->items[i];
    if (s->kind == S_SEM_WAIT || uses_semaphores(&s->body) || uses_semaphores(&s->orelse))
      return true;
  }
  return false;
}

/* ------------------------------------------------------------ reports */

/* Whether two warps wait at the same statement for the same thing. */
static bool same_wait(const SimWarp *a, const SimWarp *b) {
  return a->wait == b->wait && a->wait_at == b->wait_at &&
         (a->wait != WAIT_MBAR ||
          (a->wait_bar == b->wait_bar && a->wait_parity == b->wait_parity)) &&
         (a->wait != WAIT_SEM || (a->sem_addr == b->sem_addr && a->sem_want == b->sem_want));
}

/* In a deadlock no copy is in flight: a waited-on barrier that still
 * expects transaction bytes was promised more than its copies deliver. */
static void note_missing_bytes(Sim *S) {
  for (int i = 0; i < S->nwarps; i++) {
    const SimWarp *w = &S->warps[i];
    if (w->exited || w->wait != WAIT_MBAR) continue;
    SimBarrier *b = &S->bars[w->wait_bar];
    if (b->tx <= 0 || !b->last_expect) continue;
    char name[96];
    sim_bar_name(S, w->wait_bar, name, sizeof name);
    diag_note(S->d, b->last_expect->span,
              "%s expects %" PRId64 " more transaction bytes than the copies completing on it "
              "deliver; they are declared here",
              name, b->tx);
    b->last_expect = NULL; /* one note per barrier */
  }
}

/* A warp that waits for a phase that completed, and the next one too,
 * before it looked again: parity cannot tell them apart, so it waits for
 * a third. The barrier completes phases faster than its waiters expect
 * (an arrival count too low, a release too many). */
static void note_skipped_phases(Sim *S) {
  for (int i = 0; i < S->nwarps; i++) {
    const SimWarp *w = &S->warps[i];
    if (w->exited || w->wait != WAIT_MBAR || S->bars[w->wait_bar].phase - w->wait_since < 2)
      continue;
    char name[96];
    sim_bar_name(S, w->wait_bar, name, sizeof name);
    diag_note(S->d, w->wait_at->span,
              "while warp %d waited here, %s completed phases %" PRId64 " to %" PRId64
              ": the phase it waits for completed and so did the next; are the barrier's "
              "arrivals more than its count?",
              w->lid, name, w->wait_since, S->bars[w->wait_bar].phase - 1);
    return;
  }
}

/* Nothing can move: an error at the first waiting warp, a note for each
 * other run of warps waiting alike. */
static void report_deadlock(Sim *S) {
  bool first = true;
  int notes = 0, unshown = 0; /* a grid of blocks: at most MAX_DEADLOCK_NOTES */
  for (int i = 0; i < S->nwarps;) {
    const SimWarp *w = &S->warps[i];
    if (w->exited) {
      i++;
      continue;
    }
    int j = i;
    while (j + 1 < S->nwarps && !S->warps[j + 1].exited && S->warps[j + 1].cta == w->cta &&
           same_wait(w, &S->warps[j + 1]))
      j++;
    if (!first && ++notes > MAX_DEADLOCK_NOTES) {
      unshown++;
      i = j + 1;
      continue;
    }
    char who[64], what[320];
    if (first) sim_enter(S, w->cta);
    sim_warps_name(S, i, j, who, sizeof who);
    sim_describe_wait(S, w, what, sizeof what);
    if (first)
      diag_error(S->d, w->wait_at->span,
                 "deadlock in block %" PRId64 " of %s: no warp can move; %s wait%s here %s",
                 S->block, S->k->name, who, i == j ? "s" : "", what);
    else
      diag_note(S->d, w->wait_at->span, "%s wait%s here %s", who, i == j ? "s" : "", what);
    first = false;
    i = j + 1;
  }
  if (unshown)
    diag_note(S->d, S->k->span, "and %d more group%s of waiting warps in other blocks", unshown,
              unshown == 1 ? "" : "s");
  note_missing_bytes(S);
  note_skipped_phases(S);
  S->failed = true;
}

/* A block ran more statements than SIM_MAX_STEPS. */
static void report_runaway(Sim *S) {
  diag_error(S->d, S->k->span,
             "the simulation of block %" PRId64 " of %s stopped after %lld statements", S->block,
             S->k->name, SIM_MAX_STEPS);
  S->failed = true;
}

/* ----------------------------------------------------------- schedule */

/* Runs warp w until it blocks or exits; true when it moved. */
static bool run_warp(Sim *S, SimWarp *w) {
  bool moved = false;
  while (!w->exited && !S->failed) {
    SimStep r = sim_warp_step(S, w);
    if (r == STEP_BLOCKED || r == STEP_FAILED) break;
    moved = true;
    if (S->steps > SIM_MAX_STEPS) {
      report_runaway(S);
      break;
    }
  }
  return moved;
}

/* One block from start to end; false after a report. */
static bool run_block(Sim *S, int64_t block) {
  setup_block(S, block);
  sim_cover_start(S);
  while (!S->failed) {
    bool moved = false, all_exited = true;
    for (int i = 0; i < S->nwarps && !S->failed; i++) {
      if (S->ncta > 1) sim_enter(S, S->warps[i].cta);
      moved = run_warp(S, &S->warps[i]) || moved;
      all_exited = all_exited && S->warps[i].exited;
    }
    if (S->failed) break;
    if (all_exited) {
      if (sim_end_checks(S) && sim_cover_check(S)) clean_check(S);
      break;
    }
    if (!moved) {
      if (S->ncopies)
        sim_complete_copy(S);
      else
        report_deadlock(S);
    }
  }
  sim_cover_free(S);
  free_block(S);
  return !S->failed;
}

/* ------------------------------------------------------------ entry */

/* The -p value given for `name`, or NULL. */
static const SimParam *find_param(const SimOptions *opt, const char *name) {
  for (int i = 0; i < opt->nparams; i++)
    if (strcmp(opt->params[i].name, name) == 0) return &opt->params[i];
  return NULL;
}

/* Every -p names a run-time parameter of some kernel. */
static bool params_known(const IrModule *m, const SimOptions *opt, Diag *d) {
  for (int i = 0; i < opt->nparams; i++) {
    bool known = false;
    for (int j = 0; j < m->nkernels && !known; j++)
      for (int p = 0; p < m->kernels[j]->nparams && !known; p++)
        known = !m->kernels[j]->params[p]->is_ptr &&
                strcmp(m->kernels[j]->params[p]->name, opt->params[i].name) == 0;
    if (!known) {
      diag_plain_error(d, "--verify: no kernel has a run-time parameter '%s'", opt->params[i].name);
      return false;
    }
  }
  return true;
}

/* The values a -p VALUE may take for a parameter of type t (the type's
 * range; for uint64, what an int64 VALUE can say); false for types not
 * checked (int64, floats). */
static bool param_range(DType t, int64_t *lo, int64_t *hi) {
  switch (t) {
  case DT_BOOL:
    *lo = 0, *hi = 1;
    return true;
  case DT_INT32:
    *lo = INT32_MIN, *hi = INT32_MAX;
    return true;
  case DT_UINT32:
    *lo = 0, *hi = UINT32_MAX;
    return true;
  case DT_UINT64:
    *lo = 0, *hi = INT64_MAX;
    return true;
  default:
    return false;
  }
}

/* The value of each scalar parameter, by index; false when one is missing
 * or out of its type's range (never wrapped into it). */
static bool bind_params(const IrKernel *k, const SimOptions *opt, int64_t *values, Diag *d) {
  for (int i = 0; i < k->nparams; i++) {
    const IrParam *p = k->params[i];
    values[i] = 0;
    if (p->is_ptr) continue;
    const SimParam *given = find_param(opt, p->name);
    if (!given) {
      diag_plain_error(d, "--verify needs a value for the parameter '%s' of %s: -p %s=VALUE",
                       p->name, k->name, p->name);
      return false;
    }
    int64_t lo, hi;
    if (param_range(p->type, &lo, &hi) && (given->value < lo || given->value > hi)) {
      diag_plain_error(d,
                       "--verify: the value %" PRId64 " is out of range for the %s parameter "
                       "'%s' of %s (%" PRId64 " to %" PRId64 ")",
                       given->value, dtype_name(p->type), p->name, k->name, lo, hi);
      return false;
    }
    values[i] = ir_int_wrap(p->type, given->value);
  }
  return true;
}

/* Evaluates the grid; false (with a message) when it is empty. */
static bool eval_grid(Sim *S) {
  SimWarp none = {0};
  for (int i = 0; i < 3; i++) {
    S->nctaid[i] = S->k->grid[i] ? sim_eval_int(S, &none, S->k->grid[i], S->k->span) : 1;
    if (S->failed) return false;
  }
  S->nblocks = S->nctaid[0] * S->nctaid[1] * S->nctaid[2];
  if (S->nctaid[0] <= 0 || S->nctaid[1] <= 0 || S->nctaid[2] <= 0) {
    diag_plain_error(S->d,
                     "--verify: the grid of %s is %" PRId64 " x %" PRId64 " x %" PRId64
                     " with these parameters (nothing to run)",
                     S->k->name, S->nctaid[0], S->nctaid[1], S->nctaid[2]);
    return false;
  }
  return true;
}

/* The blocks to run: the caller's, or the first, middle and last. */
static int pick_blocks(const Sim *S, const SimOptions *opt, int64_t *out, Diag *d) {
  if (opt->nblocks > 0) {
    int n = opt->nblocks < MAX_SAMPLES ? opt->nblocks : MAX_SAMPLES;
    for (int i = 0; i < n; i++) {
      if (opt->blocks[i] < 0 || opt->blocks[i] >= S->nblocks) {
        diag_plain_error(
            d, "--verify: block %" PRId64 " is outside the grid of %s (%" PRId64 " blocks)",
            opt->blocks[i], S->k->name, S->nblocks);
        return -1;
      }
      out[i] = opt->blocks[i];
    }
    return n;
  }
  int n = 0;
  int64_t picks[3] = {0, S->nblocks / 2, S->nblocks - 1};
  for (int i = 0; i < 3; i++)
    if (n == 0 || out[n - 1] != picks[i]) out[n++] = picks[i];
  return n;
}

/* In a cluster kernel, the first block (rank 0) of the cluster of each
 * block picked, each cluster once. */
static int pick_clusters(const Sim *S, int64_t *blocks, int n) {
  int m = 0;
  for (int i = 0; i < n; i++) {
    int64_t at[3];
    unflatten(blocks[i], S->nctaid, at);
    for (int d = 0; d < 3; d++) at[d] -= at[d] % S->cdim[d];
    int64_t first = flatten(at, S->nctaid);
    bool seen = false;
    for (int j = 0; j < m; j++) seen = seen || blocks[j] == first;
    if (!seen) blocks[m++] = first;
  }
  return m;
}

/* A cluster launch needs whole clusters: the grid a multiple of the
 * cluster in each dimension (libtlsrt refuses the launch otherwise). */
static bool grid_fits_cluster(const Sim *S) {
  for (int i = 0; i < 3; i++)
    if (S->nctaid[i] % S->cdim[i]) {
      diag_plain_error(S->d,
                       "--verify: the grid of %s is %" PRId64 " x %" PRId64 " x %" PRId64
                       " with these parameters, not a multiple of its cluster (%" PRId64
                       " x %" PRId64 " x %" PRId64 "): the launch would be refused",
                       S->k->name, S->nctaid[0], S->nctaid[1], S->nctaid[2], S->cdim[0], S->cdim[1],
                       S->cdim[2]);
      return false;
    }
  return true;
}

/* "verify: NAME: no problem in blocks ..." for a sound kernel. */
static void print_summary(const Sim *S, const SimOptions *opt, const int64_t *blocks, int n) {
  if (!opt->summary) return;
  if (S->grid) {
    char clusters[48] = "";
    if (S->csize > 1) snprintf(clusters, sizeof clusters, " in clusters of %d", S->csize);
    fprintf(opt->summary,
            "verify: %s: no problem in the whole grid of %" PRId64
            " blocks%s, run together for its semaphores (%d warps per block, %" PRId64
            " statements)\n",
            S->k->name, S->nblocks, clusters, S->k->warps, S->steps);
    return;
  }
  if (S->ncta > 1) {
    fprintf(opt->summary, "verify: %s: no problem in the cluster%s at block%s", S->k->name,
            n == 1 ? "" : "s", n == 1 ? "" : "s");
    for (int i = 0; i < n; i++) fprintf(opt->summary, "%s %" PRId64, i ? "," : "", blocks[i]);
    fprintf(opt->summary,
            " (%d blocks each) of %" PRId64 " (%d warps per block, %" PRId64 " statements)\n",
            S->ncta, S->nblocks, S->k->warps, S->steps);
    return;
  }
  fprintf(opt->summary, "verify: %s: no problem in block%s", S->k->name, n == 1 ? "" : "s");
  for (int i = 0; i < n; i++) fprintf(opt->summary, "%s %" PRId64, i ? "," : "", blocks[i]);
  fprintf(opt->summary, " of %" PRId64 " (%d warps, %" PRId64 " statements)\n", S->nblocks,
          S->k->warps, S->steps);
}

/* One kernel: parameters, grid, blocks; stops at its first report. */
static SimStatus simulate_kernel(const IrKernel *k, const SimOptions *opt, Diag *d) {
  int64_t *values = sim_zalloc((size_t)k->nparams + 1, sizeof *values);
  Sim S = {.k = k, .d = d, .params = values, .block = -1, .ncta = (int)ir_cluster_size(k)};
  S.csize = S.ncta;
  for (int i = 0; i < 3; i++) S.cdim[i] = k->cluster[i] > 0 ? k->cluster[i] : 1;
  int64_t blocks[MAX_SAMPLES];
  int n = -1;
  if (bind_params(k, opt, values, d) && eval_grid(&S) && grid_fits_cluster(&S))
    n = pick_blocks(&S, opt, blocks, d);
  if (n > 0 && uses_semaphores(&k->body)) {
    if (S.nblocks <= MAX_GRID_TOGETHER) { /* every block in one schedule */
      S.grid = true, S.ncta = (int)S.nblocks, n = 1, blocks[0] = 0;
    } else if (opt->summary) {
      fprintf(opt->summary,
              "verify: %s: %" PRId64 " blocks are too many to run together (at most %d): "
              "blocks run one at a time, semaphore waits passing at once\n",
              k->name, S.nblocks, (int)MAX_GRID_TOGETHER);
    }
  }
  if (n > 0 && S.ncta > 1 && !S.grid) n = pick_clusters(&S, blocks, n);
  SimStatus status = n < 0 ? (S.failed ? SIM_PROBLEM : SIM_USAGE) : SIM_OK;
  for (int i = 0; i < n && status == SIM_OK; i++)
    if (!run_block(&S, blocks[i])) status = SIM_PROBLEM;
  if (status == SIM_OK) print_summary(&S, opt, blocks, n);
  free(values);
  return status;
}

/* Every kernel of the module; the worst status wins (usage over problem). */
SimStatus sim_run(const IrModule *m, const SimOptions *opt, Diag *d) {
  if (!params_known(m, opt, d)) return SIM_USAGE;
  SimStatus worst = SIM_OK;
  for (int i = 0; i < m->nkernels; i++) {
    SimStatus s = simulate_kernel(m->kernels[i], opt, d);
    if (s == SIM_USAGE) return s;
    if (s == SIM_PROBLEM) worst = s;
  }
  return worst;
}
