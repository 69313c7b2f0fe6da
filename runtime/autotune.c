/* autotune.c: tls_autotune: time each autotune point of a script on the
 * caller's arguments and keep the fastest (an autotune space gives one entry
 * per point, docs/format.md; the runtime, not the compiler, picks one). */
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"

static int by_value(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* Median of `reps` event-timed launches after one warm-up. */
static tls_status time_entry(const tls_kernel *k, const tls_arg *args, int nargs, CUstream s,
                             CUevent ev[2], int reps, float *median) {
  tls_context *ctx = k->mod->ctx;
  CudaApi *cu = &ctx->api;
  float *ms = malloc((size_t)reps * sizeof *ms);
  if (!ms) return rt_error(ctx, TLS_ERR_NOMEM, "out of memory");
  tls_status st = tls_launch(k, args, nargs, s);
  for (int i = 0; !st && i < reps; i++) {
    CUresult r = cu->cuEventRecord(ev[0], s);
    if (!r && (st = tls_launch(k, args, nargs, s))) break;
    if (!r) r = cu->cuEventRecord(ev[1], s);
    if (!r) r = cu->cuEventSynchronize(ev[1]);
    if (!r) r = cu->cuEventElapsedTime(&ms[i], ev[0], ev[1]);
    if (r) st = rt_cuda_error(ctx, r, "timing an autotune point");
  }
  if (!st) {
    qsort(ms, (size_t)reps, sizeof *ms, by_value);
    *median = ms[reps / 2];
  }
  free(ms);
  return st;
}

tls_status tls_autotune(const tls_module *mod, const char *script, const tls_arg *args, int nargs,
                        void *stream, int reps, const tls_kernel **best, float *best_ms,
                        float *ms_each) {
  if (!mod || !script || !best || reps < 1)
    return rt_error(mod ? mod->ctx : NULL, TLS_ERR_INVALID, "tls_autotune: bad argument");
  tls_context *ctx = mod->ctx;
  if (!ctx->online) return rt_error(ctx, TLS_ERR_NO_DEVICE, "tls_autotune: the context has no GPU");
  CUevent ev[2] = {NULL, NULL};
  CUresult r = ctx->api.cuEventCreate(&ev[0], CU_EVENT_DEFAULT);
  if (!r) r = ctx->api.cuEventCreate(&ev[1], CU_EVENT_DEFAULT);
  tls_status st = r ? rt_cuda_error(ctx, r, "cuEventCreate") : TLS_OK;
  *best = NULL;
  for (int i = 0; !st && i < mod->nkernels; i++) {
    const tls_kernel *k = &mod->kernels[i];
    float ms = -1;
    /* A specialised entry runs through its generic sibling, when the
     * arguments have its values. */
    if (!strcmp(k->script, script) && !k->is_variant)
      st = time_entry(k, args, nargs, (CUstream)stream, ev, reps, &ms);
    if (ms_each) ms_each[i] = ms;
    if (!st && ms >= 0 && (!*best || ms < *best_ms)) *best = k, *best_ms = ms;
  }
  for (int i = 0; i < 2; i++)
    if (ev[i]) ctx->api.cuEventDestroy(ev[i]);
  if (!st && !*best)
    st = rt_error(ctx, TLS_ERR_NOT_FOUND, "%s: no entry of script '%s'", mod->name, script);
  return st;
}
