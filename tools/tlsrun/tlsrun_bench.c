/* tlsrun_bench.c: timing under the protocol of docs/performance.md
 * ("Protocol"): warm-up, then each timed run preceded by an L2 flush (a
 * 256 MB asynchronous memset), a libtlsrt timer (CUDA events) around the
 * kernel alone, median / min / max. */
#include <stdlib.h>

#include "tools/tlsrun/tlsrun.h"

enum { WARMUP_RUNS = 3 };

static uint64_t flush_buf;
static tls_timer *timer;

bool bench_setup(tls_context *ctx, void **stream) {
  /* A blocking stream: it waits for the synchronous memsets and copies on
   * the legacy default stream (poisoning C, uploads) and they for it. */
  *stream = NULL;
  return tls_stream_create(ctx, stream) == TLS_OK && tls_timer_create(ctx, &timer) == TLS_OK;
}

void bench_teardown(tls_context *ctx, void *stream) {
  if (flush_buf) tls_mem_free(ctx, flush_buf);
  tls_timer_free(timer);
  tls_stream_destroy(ctx, stream);
  flush_buf = 0;
  timer = NULL;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One timed run: flush, start the timer, the work, stop it (waits). */
static bool timed_run(tls_context *ctx, void *stream, RunFn run, void *arg, int rep, double *ms) {
  float t = 0;
  if (tls_mem_set8_async(ctx, flush_buf, (uint8_t)rep, BENCH_FLUSH_BYTES, stream) ||
      tls_timer_start(timer, stream))
    return false;
  if (!run(arg)) return false;
  if (tls_timer_stop(timer, stream, &t)) return false;
  *ms = t;
  return true;
}

static void summarize(double *ms, int reps, Timing *out) {
  qsort(ms, (size_t)reps, sizeof *ms, by_value);
  out->median_ms = reps % 2 ? ms[reps / 2] : (ms[reps / 2 - 1] + ms[reps / 2]) / 2;
  out->min_ms = ms[0];
  out->max_ms = ms[reps - 1];
}

/* Interleaved: each repetition runs every candidate once, in turn, so that
 * a drift of the GPU's clocks or temperature during the measurement weighs
 * on all of them alike rather than on whichever ran last. */
bool bench_time_many(tls_context *ctx, void *stream, const RunFn *runs, void *const *args,
                     int nruns, int reps, Timing *outs) {
  if (!flush_buf && tls_mem_alloc(ctx, &flush_buf, BENCH_FLUSH_BYTES)) return false;
  double *ms = calloc((size_t)(reps * nruns), sizeof *ms), scratch;
  bool ok = ms != NULL;
  for (int i = 0; ok && i < WARMUP_RUNS; i++)
    for (int j = 0; ok && j < nruns; j++)
      ok = timed_run(ctx, stream, runs[j], args[j], i, &scratch);
  for (int i = 0; ok && i < reps; i++)
    for (int j = 0; ok && j < nruns; j++)
      ok = timed_run(ctx, stream, runs[j], args[j], i, &ms[j * reps + i]);
  for (int j = 0; ok && j < nruns; j++) summarize(ms + j * reps, reps, &outs[j]);
  free(ms);
  return ok;
}

bool bench_time(tls_context *ctx, void *stream, RunFn run, void *arg, int reps, Timing *out) {
  return bench_time_many(ctx, stream, &run, &arg, 1, reps, out);
}
