/* cuda_load.c: opens the CUDA driver with dlopen at run time, so that
 * libtlsrt links only libc/libdl/libm and runs its CPU paths anywhere. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda_api.h"

/* Looks up `name`; when `fallback` is given and `name` is missing, that
 * one (older drivers export cuEventElapsedTime only). */
static int resolve(CudaApi *api, void *slot, const char *name, const char *fallback, char *msg,
                   size_t msglen) {
  void *f = dlsym(api->lib, name);
  if (!f && fallback) f = dlsym(api->lib, fallback);
  if (!f) {
    snprintf(msg, msglen, "CUDA driver lacks %s (driver too old?)", name);
    return -1;
  }
  memcpy(slot, &f, sizeof f); /* object pointer -> function pointer */
  return 0;
}

#define R(field, name, fallback)                                                                   \
  if (resolve(api, &api->field, name, fallback, msg, msglen)) goto fail

int cuda_api_open(CudaApi *api, char *msg, size_t msglen) {
  memset(api, 0, sizeof *api);
  const char *path = getenv("TLSC_CUDA_LIB");
  if (!path || !*path) path = "libcuda.so.1";
  api->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!api->lib) {
    snprintf(msg, msglen, "no CUDA driver: %s not found (%s)", path, dlerror());
    return -1;
  }
  R(cuInit, "cuInit", NULL);
  R(cuDeviceGetCount, "cuDeviceGetCount", NULL);
  R(cuDeviceGet, "cuDeviceGet", NULL);
  R(cuDeviceGetAttribute, "cuDeviceGetAttribute", NULL);
  R(cuDeviceGetName, "cuDeviceGetName", NULL);
  R(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL);
  R(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease");
  R(cuCtxSetCurrent, "cuCtxSetCurrent", NULL);
  R(cuCtxGetCurrent, "cuCtxGetCurrent", NULL);
  R(cuCtxSynchronize, "cuCtxSynchronize", NULL);
  R(cuModuleLoadData, "cuModuleLoadData", NULL);
  R(cuModuleLoadDataEx, "cuModuleLoadDataEx", NULL);
  R(cuModuleUnload, "cuModuleUnload", NULL);
  R(cuModuleGetFunction, "cuModuleGetFunction", NULL);
  R(cuFuncSetAttribute, "cuFuncSetAttribute", NULL);
  R(cuFuncGetAttribute, "cuFuncGetAttribute", NULL);
  R(cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor",
    NULL);
  R(cuLaunchKernel, "cuLaunchKernel", NULL);
  R(cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled", NULL);
  void *ex = dlsym(api->lib, "cuLaunchKernelEx"); /* optional: cluster launches */
  memcpy(&api->cuLaunchKernelEx, &ex, sizeof ex);
  R(cuMemAlloc, "cuMemAlloc_v2", NULL);
  R(cuMemFree, "cuMemFree_v2", NULL);
  R(cuMemcpyHtoD, "cuMemcpyHtoD_v2", NULL);
  R(cuMemcpyDtoH, "cuMemcpyDtoH_v2", NULL);
  R(cuMemsetD8, "cuMemsetD8_v2", NULL);
  R(cuMemsetD8Async, "cuMemsetD8Async", NULL);
  R(cuStreamCreate, "cuStreamCreate", NULL);
  R(cuStreamDestroy, "cuStreamDestroy_v2", "cuStreamDestroy");
  R(cuStreamSynchronize, "cuStreamSynchronize", NULL);
  R(cuEventCreate, "cuEventCreate", NULL);
  R(cuEventDestroy, "cuEventDestroy_v2", "cuEventDestroy");
  R(cuEventRecord, "cuEventRecord", NULL);
  R(cuEventSynchronize, "cuEventSynchronize", NULL);
  R(cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime");
  R(cuStreamWaitEvent, "cuStreamWaitEvent", NULL);
  R(cuGetErrorName, "cuGetErrorName", NULL);
  R(cuGetErrorString, "cuGetErrorString", NULL);
  return 0;
fail:
  dlclose(api->lib);
  memset(api, 0, sizeof *api); /* no pointer into the closed library */
  return -1;
}

void cuda_api_close(CudaApi *api) {
  if (api->lib) dlclose(api->lib);
  memset(api, 0, sizeof *api);
}
