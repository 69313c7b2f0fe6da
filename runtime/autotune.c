/* autotune.c: tls_autotune: time each autotune point of a script on the
 * caller's arguments and keep the fastest (an autotune space gives one entry
 * per point, docs/format.md; the runtime, not the compiler, picks one).
 * Points whose `require` lines the arguments break are skipped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"

static int by_value(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* What one tuning run times with: the stream, the events, and the buffer
 * zeroed before each timed launch (0: none). */
typedef struct Timing {
  CUstream s;
  CUevent ev[2];
  uint64_t flush;
  size_t flush_bytes;
} Timing;

/* One event-timed launch of k, in *ms; the L2 flushed first, outside the
 * events, when the tuning asks for it (the value varies by run, so that
 * no memset is a no-op). */
static tls_status time_once(const tls_kernel *k, const tls_arg *args, int nargs, const Timing *tm,
                            int rep, float *ms) {
  tls_context *ctx = k->mod->ctx;
  CudaApi *cu = &ctx->api;
  tls_status st = TLS_OK;
  if (tm->flush && (st = tls_mem_set8_async(ctx, tm->flush, (uint8_t)rep, tm->flush_bytes, tm->s)))
    return st;
  CUstream s = tm->s;
  const CUevent *ev = tm->ev;
  CUresult r = cu->cuEventRecord(ev[0], s);
  if (!r && (st = tls_launch(k, args, nargs, s))) return st;
  if (!r) r = cu->cuEventRecord(ev[1], s);
  if (!r) r = cu->cuEventSynchronize(ev[1]);
  if (!r) r = cu->cuEventElapsedTime(ms, ev[0], ev[1]);
  return r ? rt_cuda_error(ctx, r, "timing an autotune point") : TLS_OK;
}

/* Times the entries run[] marks, `reps` launches each after one warm-up
 * each, in rounds (every entry once per round), so that a clock that
 * ramps up or drifts while the tuner runs weighs on every entry alike;
 * median[i] gets entry i's median. */
static tls_status time_entries(const tls_module *mod, const bool *run, const tls_arg *args,
                               int nargs, const Timing *tm, int reps, float *median) {
  int n = mod->nkernels;
  float *ms = malloc((size_t)n * (size_t)reps * sizeof *ms);
  if (!ms) return rt_error(mod->ctx, TLS_ERR_NOMEM, "out of memory");
  tls_status st = TLS_OK;
  for (int i = 0; !st && i < n; i++)
    if (run[i]) st = tls_launch(&mod->kernels[i], args, nargs, tm->s);
  for (int rep = 0; !st && rep < reps; rep++)
    for (int i = 0; !st && i < n; i++)
      if (run[i]) st = time_once(&mod->kernels[i], args, nargs, tm, rep, &ms[i * reps + rep]);
  for (int i = 0; !st && i < n; i++) {
    median[i] = -1;
    if (!run[i]) continue;
    qsort(&ms[i * reps], (size_t)reps, sizeof *ms, by_value);
    median[i] = ms[i * reps + reps / 2];
  }
  free(ms);
  return st;
}

/* Whether tls_autotune times entry k of `script`: a specialised entry
 * runs through its generic sibling, when the arguments have its values; an
 * entry whose `require` lines the arguments break is skipped, as Tilus
 * skips a point that fails to build. The first such refusal goes to why. */
static bool timed(const tls_kernel *k, const char *script, const tls_arg *args, int nargs,
                  char *why, size_t len, int *skipped) {
  if (strcmp(k->script, script) || k->is_variant) return false;
  char msg[1024];
  if (rt_requires_hold(k, args, nargs, msg, sizeof msg)) return true;
  if (!(*skipped)++) snprintf(why, len, "%s", msg);
  return false;
}

/* The error when no entry was timed: every entry refused the arguments
 * (the first refusal says why), or the script has none. */
static tls_status none_timed(const tls_module *mod, const char *script, int skipped,
                             const char *why) {
  if (skipped)
    return rt_error(mod->ctx, TLS_ERR_ARG_VALUE,
                    "tls_autotune: every entry of script '%s' refuses these arguments (%d "
                    "skipped); the first: %s",
                    script, skipped, why);
  return rt_error(mod->ctx, TLS_ERR_NOT_FOUND, "%s: no entry of script '%s'", mod->name, script);
}

tls_status tls_autotune(const tls_module *mod, const char *script, const tls_arg *args, int nargs,
                        void *stream, int reps, const tls_kernel **best, float *best_ms,
                        float *ms_each) {
  tls_autotune_options opts = {.reps = reps, .flush_bytes = 0};
  return tls_autotune_ex(mod, script, args, nargs, stream, &opts, best, best_ms, ms_each);
}

tls_status tls_autotune_ex(const tls_module *mod, const char *script, const tls_arg *args,
                           int nargs, void *stream, const tls_autotune_options *opts,
                           const tls_kernel **best, float *best_ms, float *ms_each) {
  if (!mod || !script || !best || !opts || opts->reps < 1)
    return rt_error(mod ? mod->ctx : NULL, TLS_ERR_INVALID, "tls_autotune: bad argument");
  int reps = opts->reps;
  tls_context *ctx = mod->ctx;
  char why[2048] = "";
  int skipped = 0, candidates = 0;
  /* Decided before any GPU work: arguments that every entry refuses are
   * an error on a machine without a GPU too. */
  bool *run = calloc((size_t)mod->nkernels + 1, sizeof *run);
  if (!run) return rt_error(ctx, TLS_ERR_NOMEM, "out of memory");
  for (int i = 0; i < mod->nkernels; i++)
    candidates += run[i] = timed(&mod->kernels[i], script, args, nargs, why, sizeof why, &skipped);
  tls_status st = TLS_OK;
  if (!candidates && skipped)
    st = none_timed(mod, script, skipped, why);
  else if (!ctx->online)
    st = rt_error(ctx, TLS_ERR_NO_DEVICE, "tls_autotune: the context has no GPU");
  Timing tm = {.s = (CUstream)stream, .flush_bytes = opts->flush_bytes};
  CUevent *ev = tm.ev;
  CUresult r = st ? CUDA_SUCCESS : ctx->api.cuEventCreate(&ev[0], CU_EVENT_DEFAULT);
  if (!st && !r) r = ctx->api.cuEventCreate(&ev[1], CU_EVENT_DEFAULT);
  if (!st && r) st = rt_cuda_error(ctx, r, "cuEventCreate");
  if (!st && tm.flush_bytes) st = tls_mem_alloc(ctx, &tm.flush, tm.flush_bytes);
  *best = NULL;
  float *median = calloc((size_t)mod->nkernels + 1, sizeof *median);
  if (!st && !median) st = rt_error(ctx, TLS_ERR_NOMEM, "out of memory");
  if (!st) st = time_entries(mod, run, args, nargs, &tm, reps, median);
  for (int i = 0; !st && i < mod->nkernels; i++) {
    if (ms_each) ms_each[i] = median[i];
    if (median[i] >= 0 && (!*best || median[i] < *best_ms))
      *best = &mod->kernels[i], *best_ms = median[i];
  }
  free(median);
  if (tm.flush) { /* after the timed work: the memsets are on the stream */
    CUresult sr = ctx->api.cuStreamSynchronize(tm.s);
    tls_status fs = tls_mem_free(ctx, tm.flush);
    if (!st && sr) st = rt_cuda_error(ctx, sr, "tls_autotune");
    if (!st) st = fs;
  }
  for (int i = 0; i < 2; i++)
    if (ev[i]) ctx->api.cuEventDestroy(ev[i]);
  free(run);
  if (!st && !*best) st = none_timed(mod, script, skipped, why);
  return st;
}
