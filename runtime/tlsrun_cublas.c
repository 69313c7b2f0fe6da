/* tlsrun_cublas.c: the cuBLAS reference, opened with dlopen so that tlsrun
 * builds without the CUDA toolkit (TLSC_CUBLAS_LIB names the library;
 * TLSC_NO_CUBLAS=1 makes tlsrun use its host reference instead). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlsrun.h"

/* Values from cublas_api.h and library_types.h (CUDA 13.0). */
enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUDA_R_16F = 2, CUBLAS_COMPUTE_32F = 68, CUBLAS_GEMM_DEFAULT = -1 };

struct Cublas {
  void *lib;
  void *handle;
  int (*create)(void **);
  int (*destroy)(void *);
  int (*set_stream)(void *, void *);
  int (*gemm_ex)(void *, int, int, int, int, int, const void *, const void *, int, int, const void *, int, int,
                 const void *, void *, int, int, int, int);
};

static void *open_library(char *msg, size_t msglen) {
  static const char *const NAMES[] = {
      "libcublas.so.13", "libcublas.so.12", "libcublas.so", "/usr/local/cuda/lib64/libcublas.so.13",
      "/usr/local/cuda/lib64/libcublas.so.12", "/usr/local/cuda/lib64/libcublas.so"};
  const char *env = getenv("TLSC_CUBLAS_LIB");
  if (env && *env) {
    void *lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    if (!lib) snprintf(msg, msglen, "cannot open %s: %s", env, dlerror());
    return lib;
  }
  for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++) {
    void *lib = dlopen(NAMES[i], RTLD_NOW | RTLD_LOCAL);
    if (lib) return lib;
  }
  snprintf(msg, msglen, "libcublas.so.13/.12 not found");
  return NULL;
}

static bool resolve(void *lib, void *slot, const char *name) {
  void *f = dlsym(lib, name);
  memcpy(slot, &f, sizeof f);
  return f != NULL;
}

Cublas *cublas_open(void *stream, char *msg, size_t msglen) {
  const char *off = getenv("TLSC_NO_CUBLAS");
  if (off && *off && strcmp(off, "0")) {
    snprintf(msg, msglen, "disabled by TLSC_NO_CUBLAS");
    return NULL;
  }
  Cublas *cb = calloc(1, sizeof *cb);
  if (!cb || !(cb->lib = open_library(msg, msglen))) {
    free(cb);
    return NULL;
  }
  int rc = -1;
  if (!resolve(cb->lib, &cb->create, "cublasCreate_v2") || !resolve(cb->lib, &cb->destroy, "cublasDestroy_v2") ||
      !resolve(cb->lib, &cb->set_stream, "cublasSetStream_v2") || !resolve(cb->lib, &cb->gemm_ex, "cublasGemmEx"))
    snprintf(msg, msglen, "cuBLAS lacks cublasCreate_v2/cublasGemmEx");
  else if ((rc = cb->create(&cb->handle)))
    snprintf(msg, msglen, "cublasCreate_v2 failed (status %d)", rc);
  else if ((rc = cb->set_stream(cb->handle, stream)))
    snprintf(msg, msglen, "cublasSetStream_v2 failed (status %d)", rc);
  if (rc) {
    cublas_close(cb);
    return NULL;
  }
  return cb;
}

/* Row-major C[M,N] = A[M,K] . B[N,K]^T is column-major C^T = B . A^T: an
 * (N x M) product of op(B)=T (B is K x N column-major) and A^T (K x M). */
bool cublas_gemm(Cublas *cb, int m, int n, int k, uint64_t a, uint64_t b, uint64_t c, char *msg, size_t msglen) {
  float alpha = 1.0f, beta = 0.0f;
  int rc = cb->gemm_ex(cb->handle, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, (const void *)(uintptr_t)b, CUDA_R_16F,
                       k, (const void *)(uintptr_t)a, CUDA_R_16F, k, &beta, (void *)(uintptr_t)c, CUDA_R_16F, n,
                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (rc) snprintf(msg, msglen, "cublasGemmEx failed (status %d)", rc);
  return rc == 0;
}

void cublas_close(Cublas *cb) {
  if (!cb) return;
  if (cb->handle) cb->destroy(cb->handle);
  if (cb->lib) dlclose(cb->lib);
  free(cb);
}
