/* context.c: tls_init (driver, device, primary context) and the small
 * device-memory helpers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"

static tls_context *context_new(void) {
  tls_context *ctx = calloc(1, sizeof *ctx);
  if (ctx) ctx->mode = TLS_COMPILE_AUTO;
  return ctx;
}

tls_status tls_init_offline(tls_context **out) {
  if (!out) return TLS_ERR_INVALID;
  *out = context_new();
  return *out ? TLS_OK : TLS_ERR_NOMEM;
}

/* Reads what the launches need from the device: its arch, the opt-in
 * shared memory limit and an SM's limits. */
static tls_status query_device(tls_context *ctx) {
  CudaApi *cu = &ctx->api;
  int major = 0, minor = 0;
  CUresult r =
      cu->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, ctx->dev);
  if (!r)
    r = cu->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, ctx->dev);
  if (!r)
    r = cu->cuDeviceGetAttribute(&ctx->smem_optin,
                                 CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, ctx->dev);
  struct {
    int *value, attr;
  } sm[] = {{&ctx->sm_threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR},
            {&ctx->sm_smem, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR},
            {&ctx->sm_regs, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR},
            {&ctx->sm_blocks, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR},
            {&ctx->block_reserved_smem, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK}};
  for (size_t i = 0; !r && i < sizeof sm / sizeof sm[0]; i++)
    r = cu->cuDeviceGetAttribute(sm[i].value, sm[i].attr, ctx->dev);
  if (!r) r = cu->cuDeviceGetName(ctx->device_name, sizeof ctx->device_name - 1, ctx->dev);
  if (r) return rt_cuda_error(ctx, r, "cuDeviceGetAttribute");
  /* The 'a' targets (sm_90a) carry wgmma and setmaxnreg. */
  snprintf(ctx->arch, sizeof ctx->arch, "sm_%d%d%s", major, minor, major >= 9 ? "a" : "");
  return TLS_OK;
}

tls_status tls_init(int device, tls_context **out) {
  if (!out) return TLS_ERR_INVALID;
  tls_context *ctx = *out = context_new();
  if (!ctx) return TLS_ERR_NOMEM;
  if (cuda_api_open(&ctx->api, ctx->err, sizeof ctx->err)) return TLS_ERR_NO_DRIVER;
  CudaApi *cu = &ctx->api;
  int count = 0;
  CUresult r = cu->cuInit(0);
  if (r) {
    rt_cuda_error(ctx, r, "cuInit");
    return TLS_ERR_NO_DEVICE;
  }
  if ((r = cu->cuDeviceGetCount(&count))) return rt_cuda_error(ctx, r, "cuDeviceGetCount");
  if (device < 0 || device >= count)
    return rt_error(ctx, TLS_ERR_NO_DEVICE, "no GPU %d (the driver sees %d)", device, count);
  if ((r = cu->cuDeviceGet(&ctx->dev, device))) return rt_cuda_error(ctx, r, "cuDeviceGet");
  if ((r = cu->cuDevicePrimaryCtxRetain(&ctx->cuctx, ctx->dev)))
    return rt_cuda_error(ctx, r, "cuDevicePrimaryCtxRetain");
  if ((r = cu->cuCtxSetCurrent(ctx->cuctx))) return rt_cuda_error(ctx, r, "cuCtxSetCurrent");
  ctx->online = true;
  tls_status st = query_device(ctx);
  if (st) ctx->online = false;
  return st;
}

void tls_context_free(tls_context *ctx) {
  if (!ctx) return;
  if (ctx->order_event) ctx->api.cuEventDestroy(ctx->order_event);
  if (ctx->cuctx) ctx->api.cuDevicePrimaryCtxRelease(ctx->dev);
  cuda_api_close(&ctx->api);
  free(ctx->buffers);
  free(ctx);
}

int tls_context_online(const tls_context *ctx) { return ctx && ctx->online; }
const char *tls_context_arch(const tls_context *ctx) { return ctx ? ctx->arch : ""; }
const char *tls_context_device_name(const tls_context *ctx) { return ctx ? ctx->device_name : ""; }

void tls_module_set_compile_mode(tls_context *ctx, tls_compile_mode mode) {
  if (ctx) ctx->mode = mode;
}

/* ------------------------------------------------------------ memory */

tls_status rt_need_online(tls_context *ctx, const char *what) {
  if (!ctx) return TLS_ERR_INVALID;
  if (!ctx->online) return rt_error(ctx, TLS_ERR_NO_DEVICE, "%s: the context has no GPU", what);
  return TLS_OK;
}

tls_status tls_mem_alloc(tls_context *ctx, uint64_t *dptr, size_t bytes) {
  tls_status st = rt_need_current(ctx, "tls_mem_alloc");
  if (st) return st;
  CUdeviceptr p = 0;
  CUresult r = ctx->api.cuMemAlloc(&p, bytes);
  if (r) return rt_cuda_error(ctx, r, "cuMemAlloc");
  *dptr = p;
  return rt_buffer_add(ctx, p, bytes); /* its size bounds the tensor maps */
}

tls_status tls_mem_free(tls_context *ctx, uint64_t dptr) {
  tls_status st = rt_need_current(ctx, "tls_mem_free");
  if (st || !dptr) return st;
  rt_buffer_remove(ctx, dptr);
  CUresult r = ctx->api.cuMemFree(dptr);
  return r ? rt_cuda_error(ctx, r, "cuMemFree") : TLS_OK;
}

tls_status tls_mem_upload(tls_context *ctx, uint64_t dst, const void *src, size_t bytes) {
  tls_status st = rt_need_current(ctx, "tls_mem_upload");
  if (st) return st;
  CUresult r = ctx->api.cuMemcpyHtoD(dst, src, bytes);
  return r ? rt_cuda_error(ctx, r, "cuMemcpyHtoD") : TLS_OK;
}

tls_status tls_mem_download(tls_context *ctx, void *dst, uint64_t src, size_t bytes) {
  tls_status st = rt_need_current(ctx, "tls_mem_download");
  if (st) return st;
  CUresult r = ctx->api.cuMemcpyDtoH(dst, src, bytes);
  return r ? rt_cuda_error(ctx, r, "cuMemcpyDtoH") : TLS_OK;
}

tls_status tls_mem_set8(tls_context *ctx, uint64_t dst, uint8_t value, size_t bytes) {
  tls_status st = rt_need_current(ctx, "tls_mem_set8");
  if (st) return st;
  CUresult r = ctx->api.cuMemsetD8(dst, value, bytes);
  return r ? rt_cuda_error(ctx, r, "cuMemsetD8") : TLS_OK;
}

tls_status rt_need_current(tls_context *ctx, const char *what) {
  tls_status st = rt_need_online(ctx, what);
  if (st) return st;
  CUcontext cur = NULL;
  CUresult r = ctx->api.cuCtxGetCurrent(&cur);
  if (r) return rt_cuda_error(ctx, r, "cuCtxGetCurrent");
  if (cur != ctx->cuctx && (r = ctx->api.cuCtxSetCurrent(ctx->cuctx)))
    return rt_cuda_error(ctx, r, "cuCtxSetCurrent");
  return TLS_OK;
}

tls_status tls_stream_wait(tls_context *ctx, void *stream, void *on) {
  tls_status st = rt_need_current(ctx, "tls_stream_wait");
  if (st || stream == on) return st;
  CudaApi *cu = &ctx->api;
  CUresult r = 0;
  if (!ctx->order_event && (r = cu->cuEventCreate(&ctx->order_event, 0x2 /* no timing */)))
    return rt_cuda_error(ctx, r, "cuEventCreate");
  if ((r = cu->cuEventRecord(ctx->order_event, (CUstream)on)))
    return rt_cuda_error(ctx, r, "cuEventRecord");
  r = cu->cuStreamWaitEvent((CUstream)stream, ctx->order_event, 0);
  return r ? rt_cuda_error(ctx, r, "cuStreamWaitEvent") : TLS_OK;
}

tls_status tls_synchronize(tls_context *ctx) {
  tls_status st = rt_need_current(ctx, "tls_synchronize");
  if (st) return st;
  CUresult r = ctx->api.cuCtxSynchronize();
  return r ? rt_cuda_error(ctx, r, "cuCtxSynchronize (a kernel failed?)") : TLS_OK;
}
