/* tlsrun_bench.c: timing under DESIGN.md §8: warm-up, then each timed run
 * preceded by an L2 flush (a 256 MB cuMemsetD8), CUDA events around the
 * kernel alone, median / min / max. */
#include <stdlib.h>

#include "runtime/rt_internal.h"
#include "tools/tlsrun/tlsrun.h"

enum { FLUSH_BYTES = 256 << 20, WARMUP_RUNS = 3 };

static CUdeviceptr flush_buf;
static CUevent ev_start, ev_stop;

bool bench_setup(tls_context *ctx, void **stream) {
  CudaApi *cu = &ctx->api;
  CUstream s = NULL;
  /* A blocking stream: it waits for the synchronous memsets and copies on
   * the legacy default stream (poisoning C, uploads) and they for it. */
  CUresult r = cu->cuStreamCreate(&s, 0);
  if (!r) r = cu->cuEventCreate(&ev_start, CU_EVENT_DEFAULT);
  if (!r) r = cu->cuEventCreate(&ev_stop, CU_EVENT_DEFAULT);
  if (r) {
    rt_cuda_error(ctx, r, "stream/event creation");
    return false;
  }
  *stream = s;
  return true;
}

void bench_teardown(tls_context *ctx, void *stream) {
  CudaApi *cu = &ctx->api;
  if (flush_buf) cu->cuMemFree(flush_buf);
  if (ev_start) cu->cuEventDestroy(ev_start);
  if (ev_stop) cu->cuEventDestroy(ev_stop);
  if (stream) cu->cuStreamDestroy((CUstream)stream);
  flush_buf = 0;
  ev_start = ev_stop = NULL;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One timed run: flush, start event, the work, stop event, wait. */
static bool timed_run(tls_context *ctx, CUstream s, RunFn run, void *arg, int rep, double *ms) {
  CudaApi *cu = &ctx->api;
  float t = 0;
  CUresult r = cu->cuMemsetD8Async(flush_buf, (unsigned char)rep, FLUSH_BYTES, s);
  if (r) return rt_cuda_error(ctx, r, "cuMemsetD8Async (L2 flush)"), false;
  if ((r = cu->cuEventRecord(ev_start, s))) return rt_cuda_error(ctx, r, "cuEventRecord"), false;
  if (!run(arg)) return false;
  if ((r = cu->cuEventRecord(ev_stop, s))) return rt_cuda_error(ctx, r, "cuEventRecord"), false;
  if ((r = cu->cuEventSynchronize(ev_stop)))
    return rt_cuda_error(ctx, r, "cuEventSynchronize"), false;
  if ((r = cu->cuEventElapsedTime(&t, ev_start, ev_stop)))
    return rt_cuda_error(ctx, r, "cuEventElapsedTime"), false;
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
  CudaApi *cu = &ctx->api;
  if (!flush_buf) {
    CUresult r = cu->cuMemAlloc(&flush_buf, FLUSH_BYTES);
    if (r) return rt_cuda_error(ctx, r, "cuMemAlloc (L2 flush buffer)"), false;
  }
  double *ms = calloc((size_t)(reps * nruns), sizeof *ms), scratch;
  bool ok = ms != NULL;
  for (int i = 0; ok && i < WARMUP_RUNS; i++)
    for (int j = 0; ok && j < nruns; j++)
      ok = timed_run(ctx, (CUstream)stream, runs[j], args[j], i, &scratch);
  for (int i = 0; ok && i < reps; i++)
    for (int j = 0; ok && j < nruns; j++)
      ok = timed_run(ctx, (CUstream)stream, runs[j], args[j], i, &ms[j * reps + i]);
  for (int j = 0; ok && j < nruns; j++) summarize(ms + j * reps, reps, &outs[j]);
  free(ms);
  return ok;
}

bool bench_time(tls_context *ctx, void *stream, RunFn run, void *arg, int reps, Timing *out) {
  return bench_time_many(ctx, stream, &run, &arg, 1, reps, out);
}
