/* sim_int.h: private to the simulator's files (`tlsc --verify`).
 *
 * The simulator runs one block of a planned kernel at a time (one cluster
 * of blocks, for a kernel with attrs.cluster_blocks: the CTAs of a cluster
 * share barriers and shared memory through remote arrivals and multicast
 * copies, so they run together, each with its own barriers, shared memory,
 * warp groups and named barriers): every warp of the block walks the IR
 * body with its own copy of the scalar variables (values are uniform per
 * warp), and the asynchronous machinery is modelled as state of the block:
 *   - mbarriers: arrival count, pending arrivals, transaction bytes, phase;
 *   - TMA loads: in flight from issue until the scheduler completes them
 *     (lazily: only when no warp can move), then complete_tx on their
 *     barrier;
 *   - WGMMA: state of the warp group (the instructions are .sync.aligned,
 *     so the four warps meet at each one); an mma's shared reads stay live
 *     until a wait_group retires its commit group;
 *   - cp.async copies: each warp of the group writes the tile until its
 *     cp.async.wait_group retires the copy's group, and for any other warp
 *     until that warp is ordered after the wait (vector clocks);
 *   - bulk (TMA) stores: their shared reads stay live until the issuing
 *     warp's cp.async.bulk.wait_group.read retires their group, and for
 *     any other warp until it has synchronised with the issuer since
 *     (vector clocks, sim_order.c); store_shared writes are kept
 *     (sim_plain.c) until every warp is ordered after them, for the
 *     bulk stores that read their bytes.
 * Every shared access is a byte range [lo, hi) of dynamic shared memory.
 */
#ifndef TLSC_SIM_INT_H
#define TLSC_SIM_INT_H

#include "sim/sim.h"

/* A view of a shared tensor with its indices evaluated: its name for
 * messages and the bytes it covers. */
typedef struct SimView {
  const IrTensor *t;
  int nidx;
  int64_t idx[IR_MAX_RANK];
  int64_t lo, hi;
  int cta;       /* whose shared memory: the CTA's rank in the cluster */
  int64_t block; /* that CTA's linear block index, for messages; -1 when
                    the kernel has no cluster */
} SimView;

typedef struct SimBarrier {
  int64_t count;             /* arrivals per phase (mbarrier.init) */
  int64_t pending;           /* arrivals still missing in this phase */
  int64_t tx;                /* transaction bytes still expected */
  int64_t phase;             /* phases completed so far */
  int64_t declared;          /* expect-tx bytes declared in this phase */
  const IrStmt *last_expect; /* last arrive_and_expect_tx of the phase */
  int64_t *arrived;          /* clocks joined by this phase's arrivals */
  int64_t *completed;        /* clocks of its completed phases */
} SimBarrier;

/* A TMA load in flight. */
typedef struct SimCopy {
  SimView dst;
  int bar;       /* index into Sim.bars */
  int64_t bytes; /* the full box: TMA fills out-of-bounds with zeros */
  const IrStmt *s;
  int warp;
} SimCopy;

/* An asynchronous access of shared memory (a WGMMA operand or bulk-store
 * source read, a cp.async write) that stays live until its commit group
 * is retired. */
typedef struct SimRead {
  SimView v;
  const IrStmt *s;
  int first_warp, last_warp;    /* who issued it */
  int64_t group;                /* commit sequence number; uncommitted: the next one */
  int64_t stamp;                /* bulk store: the issuer's epoch at its retiring wait; -1 before */
  int retired_by;               /* the warp whose wait retired it */
  const IrStmt *retire_at;      /* that wait */
  int64_t coop_begin, coop_end; /* cp.async: the threads copying the tile */
} SimRead;

/* A run of bytes [lo, hi) of dynamic shared memory. */
typedef struct SimSpan {
  int64_t lo, hi;
} SimSpan;

/* A plain load_shared or store_shared by one warp, remembered until every
 * running warp is ordered after it (sim_plain.c): the bytes its threads
 * touch, as sorted runs. A store_shared of a WGMMA fragment has no
 * footprint: it is kept whole, for the TMA stores that read its bytes,
 * and not checked against other plain accesses. */
typedef struct SimPlain {
  SimView v;
  const IrStmt *s;
  int warp;
  int64_t stamp; /* the warp's epoch at the access */
  bool writes;
  bool whole; /* no footprint: spans is the whole view */
  SimSpan *spans;
  int nspans;
} SimPlain;

/* Commit groups of reads: WGMMA groups of a warp group, bulk groups of a
 * warp. Groups [retired, committed) are in flight. */
typedef struct SimGroups {
  SimRead *reads;
  int nreads, cap;
  int64_t committed, retired;
} SimGroups;

/* A meeting point: the warps of a warp group at a wgmma statement, all
 * warps of the block at sync(), or the warps of a thread group at its
 * sync() (a named barrier: bar.sync ID, N). */
typedef struct SimMeet {
  bool cluster; /* cluster.sync(): any such statement meets (the hardware
                   counts threads, not statements) */
  int size;     /* warps that must arrive */
  int arrived;
  int64_t generation; /* bumped when everyone has arrived */
  const IrStmt *at;   /* the statement of the current meeting */
  int64_t begin, end; /* a thread group's barrier: its threads; else 0, 0 */
} SimMeet;

/* A register tensor that an in-flight wgmma reads or writes (its
 * accumulator, its A in registers), until a wait retires `group`. */
typedef struct SimRegUse {
  const IrTensor *t;
  const IrStmt *s; /* the newest wgmma.mma that names it */
  int64_t group;
} SimRegUse;

/* At most this many register tensors are followed per warp group (more go
 * unchecked, never falsely reported). */
#define SIM_MAX_MMA_REGS 16

typedef struct SimWarpGroup {
  SimMeet meet;
  SimGroups mma;
  SimRegUse regs[SIM_MAX_MMA_REGS];
  int nregs;
} SimWarpGroup;

/* The threads a statement runs on: [begin, end) of the block. */
typedef struct SimRegion {
  int64_t begin, end;
  bool single;
} SimRegion;

typedef struct SimFrame {
  const IrBlock *blk;
  int pc;
  const IrStmt *owner; /* the S_FOR / region statement, NULL at top */
  int64_t stop, step;  /* S_FOR */
  SimRegion saved;     /* the region to restore on leaving */
} SimFrame;

typedef enum SimWaitKind { WAIT_NONE, WAIT_MBAR, WAIT_MEET, WAIT_SEM } SimWaitKind;

typedef struct SimWarp {
  int id;       /* in the cluster's warps: cta * warps per CTA + lid */
  int cta, lid; /* its CTA's rank in the cluster; its warp index in the CTA */
  SimFrame *frames;
  int nframes, cap;
  SimRegion region;
  int64_t *ivals; /* variable values, by IrVar id */
  double *fvals;
  bool exited;
  SimWaitKind wait; /* why it is blocked */
  const IrStmt *wait_at;
  int wait_bar; /* WAIT_MBAR: barrier index */
  int64_t wait_parity;
  int64_t wait_since;         /* WAIT_MBAR: the barrier's phase when it began */
  int64_t meet_gen;           /* WAIT_MEET: generation it joined, -1 none */
  int64_t sem_addr, sem_want; /* WAIT_SEM: the semaphore and the value awaited */
  const SimMeet *meet;        /* WAIT_MEET: where it waits */
  SimGroups bulk;             /* bulk stores it issued; retired ones stay
                              until every warp is ordered after the wait */
  SimGroups cpasync;          /* its cp.async copies (writes), likewise */
  int64_t *clock;             /* what it knows of each warp (sim_order.c) */
} SimWarp;

/* An output of a whole-grid run: a byte per element of global view t,
 * set where a store wrote it (sim_cover.c). */
typedef struct SimCover {
  const IrTensor *t;
  int64_t dims[IR_MAX_RANK];
  int64_t n;
  unsigned char *written;
} SimCover;

typedef struct Sim {
  const IrKernel *k;
  Diag *d;
  const int64_t *params;       /* by IrParam index */
  int64_t ctaid[3], nctaid[3]; /* of the CTA whose warp runs (sim_enter) */
  int64_t block, nblocks;      /* its linear block index; the grid size */
  int ncta;                    /* CTAs run together: the cluster's, or (grid) the grid's */
  int csize;                   /* CTAs of one cluster (1 without attrs.cluster_blocks) */
  int wpc;                     /* warps per CTA */
  int cur;                     /* the CTA whose warp runs */
  int64_t cdim[3];             /* cluster dimensions */
  int64_t *cta_block;          /* linear block index of each CTA */
  int64_t (*cta_coord)[3];     /* its coordinates in the grid */
  SimWarp *warps;              /* every warp of every CTA: ncta * wpc */
  int nwarps;
  SimWarpGroup *wgs; /* per CTA: (wpc + 3) / 4 of them */
  int nwgs, wgs_per_cta;
  SimMeet *cta; /* sync() over the whole block, one per CTA */
  /* sync() in a thread group: named barrier id of CTA c is named[c][id - 1]
   * (size 0 until the block first syncs on it) */
  SimMeet (*named)[IR_MAX_NAMED_BARRIERS];
  SimMeet *clusters; /* cluster.sync() over every warp of a cluster: that
                        of the cluster whose rank-0 CTA is c at [c] */
  SimBarrier *bars;  /* per CTA: bars_per_cta of them */
  int nbars, bars_per_cta;
  int *bar_base;   /* first barrier of each tensor, by tensor id */
  SimCopy *copies; /* TMA loads in flight, oldest first */
  int ncopies, capcopies;
  SimPlain *plain; /* load/store_shared footprints not yet ordered before everyone */
  int nplain, capplain;
  /* Semaphores (lock_semaphore, release_semaphore): with `grid` set, the
   * whole grid runs in one schedule (ncta = nblocks) and each semaphore
   * word's value is kept here, by address (a pointer parameter's base is
   * (index + 1) << 32, sim_expr.c), 0 until released (the workspaces they
   * live in are clean); without it, waits pass at once. */
  bool grid;
  int64_t *sem_addr, *sem_val;
  int nsems, capsems;
  /* With `grid` set, the outputs whose every element some block must
   * write (sim_cover.c) */
  SimCover *covers;
  int ncovers;
  int64_t steps; /* statements executed (a runaway guard) */
  bool failed;   /* a problem was reported: stop */
} Sim;

/* sim.c */
void *sim_zalloc(size_t n, size_t size); /* zeroed; aborts when out of memory */
/* Makes CTA `cta` the current one: blockIdx, the block in messages. */
void sim_enter(Sim *S, int cta);
/* The rank of CTA `cta` in its cluster (x-fastest, as %cluster_ctarank),
 * and the CTA of rank `rank` in the cluster of CTA `cta` (-1 when rank is
 * outside the cluster). */
int64_t sim_cluster_rank(const Sim *S, int cta);
int sim_peer(const Sim *S, int cta, int64_t rank);
/* Whether every warp of CTA `cta` has exited (its shared memory is gone). */
bool sim_cta_exited(const Sim *S, int cta);
/* The warp group of warp w. */
SimWarpGroup *sim_wg(Sim *S, const SimWarp *w);

/* sim_cover.c */
void sim_cover_start(Sim *S);
void sim_cover_store(Sim *S, SimWarp *w, const IrStmt *s);
bool sim_cover_check(Sim *S);
void sim_cover_free(Sim *S);

/* sim_expr.c */
int64_t sim_eval_int(Sim *S, SimWarp *w, const IrExpr *e, Span sp);
double sim_eval_float(Sim *S, SimWarp *w, const IrExpr *e, Span sp);
bool sim_view(Sim *S, SimWarp *w, const IrRef *r, Span sp, SimView *out);
void sim_view_name(const SimView *v, char *buf, size_t size);
/* "warp 8", "warps 0-3"; in a cluster "warps 0-3 of block 5" (warps by
 * their index in the cluster: cta * wpc + lid). */
void sim_warps_name(const Sim *S, int first, int last, char *buf, size_t size);

/* sim_async.c */
bool sim_mbar_arrive(Sim *S, SimWarp *w, const IrStmt *s, int64_t lanes);
/* arrive_and_expect_tx_remote / _multicast by warp w over region r. */
bool sim_mbar_arrive_cluster(Sim *S, SimWarp *w, const IrStmt *s, const SimRegion *r);
bool sim_mbar_ready(Sim *S, int bar, int64_t parity);
bool sim_tma_load(Sim *S, SimWarp *w, const IrStmt *s);
bool sim_tma_store(Sim *S, SimWarp *w, const IrStmt *s);
bool sim_complete_copy(Sim *S);
bool sim_shared_read(Sim *S, SimWarp *w, const SimView *v, const IrStmt *s);
bool sim_shared_write(Sim *S, SimWarp *w, const SimView *v, const IrStmt *s);
bool sim_wgmma(Sim *S, SimWarp *w, const IrStmt *s);
/* A statement of warp w other than the wgmma ones may not name a register
 * tensor that a wgmma of w's warp group still reads or writes. */
bool sim_wgmma_regs_check(Sim *S, SimWarp *w, const IrStmt *s);
void sim_retire(SimGroups *g, int64_t keep);
void sim_bulk_retire(Sim *S, SimWarp *w, const IrStmt *s);
void sim_retire_stamped(Sim *S, SimWarp *w, SimGroups *g, int64_t keep, const IrStmt *s);
void sim_groups_push(SimGroups *g, const SimView *v, const IrStmt *s, int first, int last);
void sim_groups_prune(const Sim *S, SimGroups *g);
/* Reports a race of statement s (accessing v) with the live access of
 * `other` (its view ov, by warps first..last, in that state): the error at
 * s, a note at other. Returns false. */
bool sim_report_race(Sim *S, const IrStmt *s, const SimView *v, bool writes, const IrStmt *other,
                     const SimView *ov, int first, int last, const char *state);
bool sim_exit_checks(Sim *S, SimWarp *w);
bool sim_end_checks(Sim *S);
void sim_groups_free(SimGroups *g);
int sim_bar_index(Sim *S, const SimView *v);
void sim_bar_name(Sim *S, int bar, char *buf, size_t size);

/* sim_cpasync.c: cp.async copies, per warp */
bool sim_cp_async(Sim *S, SimWarp *w, const IrStmt *s);
void sim_cp_async_wait(Sim *S, SimWarp *w, const IrStmt *s);
/* An access of v by warp w (statement s) against the live cp.async
 * copies of every warp; false after a report. */
bool sim_cp_async_check(Sim *S, SimWarp *w, const SimView *v, const IrStmt *s, bool writes);

/* The value of the semaphore word at addr (0 before any release). */
int64_t sim_sem_value(const Sim *S, int64_t addr);
/* "workspace 'sems' at byte 4" for a semaphore address. */
void sim_sem_name(const Sim *S, int64_t addr, char *buf, size_t size);

/* sim_plain.c: a plain load_shared / store_shared s of v by warp w against
 * the other warps' plain accesses not ordered before it; false after a
 * report. Then remembers it. */
bool sim_plain_check(Sim *S, SimWarp *w, const SimView *v, const IrStmt *s);
/* A TMA store s by warp w reads v: another warp's store_shared of those
 * bytes must be ordered before it; false after a report. */
bool sim_plain_bulk_read(Sim *S, SimWarp *w, const SimView *v, const IrStmt *s);
void sim_plain_free(Sim *S);

/* sim_order.c */
void sim_order_meet(Sim *S, const SimMeet *m, SimWarp *w);
void sim_order_arrive(Sim *S, SimWarp *w, SimBarrier *b);
void sim_order_phase(Sim *S, SimBarrier *b);
void sim_order_acquire(Sim *S, SimWarp *w, const SimBarrier *b);
bool sim_order_knows(const SimWarp *x, const SimRead *r);
/* Whether every running warp knows what warp `warp` did at epoch stamp. */
bool sim_order_all_know(const Sim *S, int warp, int64_t stamp);

/* sim_warp.c */
typedef enum SimStep { STEP_RAN, STEP_BLOCKED, STEP_EXITED, STEP_FAILED } SimStep;
void sim_warp_start(Sim *S, SimWarp *w, int id);
void sim_warp_free(SimWarp *w);
SimStep sim_warp_step(Sim *S, SimWarp *w);
void sim_describe_wait(Sim *S, const SimWarp *w, char *buf, size_t size);

#endif
