/* timing.c: streams, event timers and the asynchronous memset, so that a
 * client (tlsrun --bench) can time launches under the protocol of
 * docs/performance.md ("Protocol") through the public API alone. */
#include <stdlib.h>

#include "runtime/rt_internal.h"

struct tls_timer {
  tls_context *ctx;
  CUevent start, stop;
  bool started; /* start recorded, stop not yet */
};

tls_status tls_stream_create(tls_context *ctx, void **stream) {
  tls_status st = rt_need_current(ctx, "tls_stream_create");
  if (st) return st;
  if (!stream) return rt_error(ctx, TLS_ERR_INVALID, "tls_stream_create: NULL stream pointer");
  *stream = NULL;
  CUstream s = NULL;
  CUresult r = ctx->api.cuStreamCreate(&s, 0); /* 0: blocking, unlike CU_STREAM_NON_BLOCKING */
  if (r) return rt_cuda_error(ctx, r, "cuStreamCreate");
  *stream = s;
  return TLS_OK;
}

tls_status tls_stream_destroy(tls_context *ctx, void *stream) {
  if (!ctx) return TLS_ERR_INVALID;
  if (!stream) return TLS_OK; /* the default stream */
  tls_status st = rt_need_current(ctx, "tls_stream_destroy");
  if (st) return st;
  CUresult r = ctx->api.cuStreamDestroy((CUstream)stream);
  return r ? rt_cuda_error(ctx, r, "cuStreamDestroy") : TLS_OK;
}

tls_status tls_mem_set8_async(tls_context *ctx, uint64_t dst, uint8_t value, size_t bytes,
                              void *stream) {
  tls_status st = rt_need_current(ctx, "tls_mem_set8_async");
  if (st) return st;
  CUresult r = ctx->api.cuMemsetD8Async(dst, value, bytes, (CUstream)stream);
  return r ? rt_cuda_error(ctx, r, "cuMemsetD8Async") : TLS_OK;
}

tls_status tls_timer_create(tls_context *ctx, tls_timer **out) {
  tls_status st = rt_need_current(ctx, "tls_timer_create");
  if (st) return st;
  if (!out) return rt_error(ctx, TLS_ERR_INVALID, "tls_timer_create: NULL timer pointer");
  *out = NULL;
  tls_timer *t = calloc(1, sizeof *t);
  if (!t) return rt_error(ctx, TLS_ERR_NOMEM, "tls_timer_create: out of memory");
  t->ctx = ctx;
  CUresult r = ctx->api.cuEventCreate(&t->start, CU_EVENT_DEFAULT);
  if (!r) r = ctx->api.cuEventCreate(&t->stop, CU_EVENT_DEFAULT);
  if (r) {
    st = rt_cuda_error(ctx, r, "cuEventCreate");
    tls_timer_free(t);
    return st;
  }
  *out = t;
  return TLS_OK;
}

tls_status tls_timer_start(tls_timer *timer, void *stream) {
  if (!timer) return TLS_ERR_INVALID;
  tls_context *ctx = timer->ctx;
  tls_status st = rt_need_current(ctx, "tls_timer_start");
  if (st) return st;
  timer->started = false;
  CUresult r = ctx->api.cuEventRecord(timer->start, (CUstream)stream);
  if (r) return rt_cuda_error(ctx, r, "cuEventRecord (timer start)");
  timer->started = true;
  return TLS_OK;
}

tls_status tls_timer_stop(tls_timer *timer, void *stream, float *ms) {
  if (!timer) return TLS_ERR_INVALID;
  tls_context *ctx = timer->ctx;
  tls_status st = rt_need_current(ctx, "tls_timer_stop");
  if (st) return st;
  if (!ms) return rt_error(ctx, TLS_ERR_INVALID, "tls_timer_stop: NULL result pointer");
  if (!timer->started)
    return rt_error(ctx, TLS_ERR_INVALID, "tls_timer_stop: the timer was not started");
  timer->started = false;
  CUresult r = ctx->api.cuEventRecord(timer->stop, (CUstream)stream);
  if (r) return rt_cuda_error(ctx, r, "cuEventRecord (timer stop)");
  if ((r = ctx->api.cuEventSynchronize(timer->stop)))
    return rt_cuda_error(ctx, r, "cuEventSynchronize (a kernel failed?)");
  if ((r = ctx->api.cuEventElapsedTime(ms, timer->start, timer->stop)))
    return rt_cuda_error(ctx, r, "cuEventElapsedTime");
  return TLS_OK;
}

void tls_timer_free(tls_timer *timer) {
  if (!timer) return;
  CudaApi *cu = &timer->ctx->api;
  if (timer->start) cu->cuEventDestroy(timer->start);
  if (timer->stop) cu->cuEventDestroy(timer->stop);
  free(timer);
}
