/* sim.h: the synchronisation simulator behind `tlsc --verify`.
 *
 * sim_run runs each planned kernel's warps on the CPU for the given
 * run-time parameter values, with mbarrier phases, TMA copies, WGMMA commit
 * groups and bulk stores, and reports deadlocks, shared-memory races,
 * mbarrier misuse and asynchronous work left in flight at the .tls lines
 * involved. docs/verify.md describes the model; sim_int.h is the private
 * header of the simulator's files.
 */
#ifndef TLSC_SIM_H
#define TLSC_SIM_H

#include "ir/ir.h"

typedef struct SimParam {
  const char *name;
  int64_t value;
} SimParam;

typedef struct SimOptions {
  const SimParam *params; /* a value for every run-time scalar parameter */
  int nparams;
  const int64_t *blocks; /* linear block indices to run; NULL: the first,
                             the middle and the last of the grid */
  int nblocks;
  FILE *summary; /* one line per kernel found sound; NULL: none */
} SimOptions;

typedef enum SimStatus {
  SIM_OK,      /* no problem found */
  SIM_PROBLEM, /* a problem was reported through the Diag */
  SIM_USAGE    /* a missing or unknown parameter, a bad block, an empty
                  grid: reported with diag_plain_error */
} SimStatus;

SimStatus sim_run(const IrModule *m, const SimOptions *opt, Diag *d);

#endif
