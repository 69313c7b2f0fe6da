/* tlsrun_cublas.c: the cuBLAS reference, opened with dlopen so that tlsrun
 * builds without the CUDA toolkit (TLSC_CUBLAS_LIB names the library;
 * TLSC_NO_CUBLAS=1 makes tlsrun use its host reference instead).
 *
 * Two ways into cuBLAS, both with a 32 MiB workspace: cublasGemmEx (the
 * classic API) and cublasLtMatmul with the heuristic's first algorithm (what
 * frameworks call; often faster on Hopper). The benchmark times both and
 * compares against the faster, so the baseline is the best cuBLAS offers.
 *
 * Operand types: f16 and bf16 through both (CUDA_R_16F / CUDA_R_16BF);
 * fp8 (e4m3, e5m2, mixed but not e5m2 x e5m2, as cuBLASLt allows) through
 * cuBLASLt only, in its "TN" form (both operands K-major, as tlsc's fp8
 * kernels), with the per-tensor scales folded into alpha: the same
 * product torch._scaled_mm asks cuBLASLt for with scale pointers. The fp8
 * GEMM runs with and without CUBLASLT_MATMUL_DESC_FAST_ACCUM (without:
 * cuBLAS promotes the tensor cores' partial sums to fp32 every few K
 * steps, torch._scaled_mm's default; with: plain WGMMA accumulation, as
 * tlsc's kernels do). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/tlsrun/tlsrun.h"

/* Values from cublas_api.h and library_types.h (CUDA 13.0). */
enum {
  CUBLAS_OP_N = 0,
  CUBLAS_OP_T = 1,
  CUDA_R_32F = 0,
  CUDA_R_16F = 2,
  CUDA_R_16BF = 14,
  CUDA_R_8F_E4M3 = 28,
  CUDA_R_8F_E5M2 = 29,
  CUBLAS_COMPUTE_32F = 68,
  CUBLAS_GEMM_DEFAULT = -1
};
/* Values from cublasLt.h (CUDA 13.0). */
enum {
  LT_DESC_TRANSA = 3,
  LT_DESC_TRANSB = 4,
  LT_DESC_FAST_ACCUM = 25,
  LT_PREF_MAX_WORKSPACE_BYTES = 1
};

/* The CUDA data type of an element type. */
static int cuda_type(ElemType t) {
  switch (t) {
  case ET_F16:
    return CUDA_R_16F;
  case ET_BF16:
    return CUDA_R_16BF;
  case ET_E4M3:
    return CUDA_R_8F_E4M3;
  case ET_E5M2:
    return CUDA_R_8F_E5M2;
  default:
    return -1;
  }
}

#define WORKSPACE_BYTES ((size_t)32 << 20)

/* cublasLtMatmulHeuristicResult_t: a 64-byte algorithm, then its needs. */
typedef struct LtHeuristic {
  uint64_t algo[8];
  size_t workspace_size;
  int state;
  float waves;
  int reserved[4];
} LtHeuristic;

/* The cuBLASLt pieces: descriptors are made per shape and kept. */
typedef struct Lt {
  void *lib, *handle, *desc, *pref, *la, *lb, *lc;
  int m, n, k; /* shape the descriptors and algo are for; 0 = none */
  GemmTypes types;
  bool fast;
  LtHeuristic heur;
  int (*create)(void **);
  int (*destroy)(void *);
  int (*desc_create)(void **, int, int);
  int (*desc_destroy)(void *);
  int (*desc_set)(void *, int, const void *, size_t);
  int (*layout_create)(void **, int, uint64_t, uint64_t, int64_t);
  int (*layout_destroy)(void *);
  int (*pref_create)(void **);
  int (*pref_destroy)(void *);
  int (*pref_set)(void *, int, const void *, size_t);
  int (*heuristic)(void *, void *, void *, void *, void *, void *, void *, int, LtHeuristic *,
                   int *);
  int (*matmul)(void *, void *, const void *, const void *, void *, const void *, void *,
                const void *, const void *, void *, void *, void *, const void *, void *, size_t,
                void *);
} Lt;

struct Cublas {
  void *lib;
  void *handle;
  void *stream;
  tls_context *ctx;
  uint64_t workspace; /* device memory, WORKSPACE_BYTES */
  Lt lt;
  bool have_lt;
  int (*create)(void **);
  int (*destroy)(void *);
  int (*set_stream)(void *, void *);
  int (*set_workspace)(void *, void *, size_t);
  int (*gemm_ex)(void *, int, int, int, int, int, const void *, const void *, int, int,
                 const void *, int, int, const void *, void *, int, int, int, int);
};

static void *open_library(char *msg, size_t msglen) {
  static const char *const NAMES[] = {"libcublas.so.13",
                                      "libcublas.so.12",
                                      "libcublas.so",
                                      "/usr/local/cuda/lib64/libcublas.so.13",
                                      "/usr/local/cuda/lib64/libcublas.so.12",
                                      "/usr/local/cuda/lib64/libcublas.so"};
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

/* cuBLASLt, when its library is there: the handle and the preference with
 * the workspace limit. False leaves the classic path alone in use. */
static bool lt_open(Lt *lt) {
  static const char *const NAMES[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so",
                                      "/usr/local/cuda/lib64/libcublasLt.so.13"};
  for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0] && !lt->lib; i++)
    lt->lib = dlopen(NAMES[i], RTLD_NOW | RTLD_LOCAL);
  if (!lt->lib) return false;
  uint64_t ws = WORKSPACE_BYTES;
  return resolve(lt->lib, &lt->create, "cublasLtCreate") &&
         resolve(lt->lib, &lt->destroy, "cublasLtDestroy") &&
         resolve(lt->lib, &lt->desc_create, "cublasLtMatmulDescCreate") &&
         resolve(lt->lib, &lt->desc_destroy, "cublasLtMatmulDescDestroy") &&
         resolve(lt->lib, &lt->desc_set, "cublasLtMatmulDescSetAttribute") &&
         resolve(lt->lib, &lt->layout_create, "cublasLtMatrixLayoutCreate") &&
         resolve(lt->lib, &lt->layout_destroy, "cublasLtMatrixLayoutDestroy") &&
         resolve(lt->lib, &lt->pref_create, "cublasLtMatmulPreferenceCreate") &&
         resolve(lt->lib, &lt->pref_destroy, "cublasLtMatmulPreferenceDestroy") &&
         resolve(lt->lib, &lt->pref_set, "cublasLtMatmulPreferenceSetAttribute") &&
         resolve(lt->lib, &lt->heuristic, "cublasLtMatmulAlgoGetHeuristic") &&
         resolve(lt->lib, &lt->matmul, "cublasLtMatmul") && !lt->create(&lt->handle) &&
         !lt->pref_create(&lt->pref) &&
         !lt->pref_set(lt->pref, LT_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
}

static void lt_drop_shape(Lt *lt) {
  if (lt->desc) lt->desc_destroy(lt->desc);
  if (lt->la) lt->layout_destroy(lt->la);
  if (lt->lb) lt->layout_destroy(lt->lb);
  if (lt->lc) lt->layout_destroy(lt->lc);
  lt->desc = lt->la = lt->lb = lt->lc = NULL;
  lt->m = lt->n = lt->k = 0;
}

static void lt_close(Lt *lt) {
  if (!lt->lib) return;
  if (lt->handle) lt_drop_shape(lt);
  if (lt->pref) lt->pref_destroy(lt->pref);
  if (lt->handle) lt->destroy(lt->handle);
  dlclose(lt->lib);
}

/* Descriptors and the heuristic's first algorithm for one shape, in the
 * column-major terms of cublas_gemm below (D^T[N,M] = B . A^T). */
static bool lt_prepare(Lt *lt, GemmTypes t, bool fast, int m, int n, int k, char *msg,
                       size_t msglen) {
  if (lt->m == m && lt->n == n && lt->k == k && lt->fast == fast &&
      !memcmp(&lt->types, &t, sizeof t))
    return true;
  lt_drop_shape(lt);
  int op_t = CUBLAS_OP_T, op_n = CUBLAS_OP_N, found = 0;
  int8_t fast_accum = fast;
  int rc = lt->desc_create(&lt->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  if (!rc) rc = lt->desc_set(lt->desc, LT_DESC_TRANSA, &op_t, sizeof op_t);
  if (!rc) rc = lt->desc_set(lt->desc, LT_DESC_TRANSB, &op_n, sizeof op_n);
  if (!rc && fast) rc = lt->desc_set(lt->desc, LT_DESC_FAST_ACCUM, &fast_accum, sizeof fast_accum);
  if (!rc) rc = lt->layout_create(&lt->la, cuda_type(t.b), (uint64_t)k, (uint64_t)n, k);
  if (!rc) rc = lt->layout_create(&lt->lb, cuda_type(t.a), (uint64_t)k, (uint64_t)m, k);
  if (!rc) rc = lt->layout_create(&lt->lc, cuda_type(t.c), (uint64_t)n, (uint64_t)m, n);
  if (!rc)
    rc = lt->heuristic(lt->handle, lt->desc, lt->la, lt->lb, lt->lc, lt->lc, lt->pref, 1, &lt->heur,
                       &found);
  if (rc || found < 1) {
    snprintf(msg, msglen, "cuBLASLt has no algorithm for %dx%dx%d %s x %s -> %s (status %d)", m, n,
             k, elem_name(t.a), elem_name(t.b), elem_name(t.c), rc);
    lt_drop_shape(lt);
    return false;
  }
  lt->m = m, lt->n = n, lt->k = k, lt->types = t, lt->fast = fast;
  return true;
}

Cublas *cublas_open(tls_context *ctx, void *stream, char *msg, size_t msglen) {
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
  cb->ctx = ctx, cb->stream = stream;
  int rc = -1;
  if (!resolve(cb->lib, &cb->create, "cublasCreate_v2") ||
      !resolve(cb->lib, &cb->destroy, "cublasDestroy_v2") ||
      !resolve(cb->lib, &cb->set_stream, "cublasSetStream_v2") ||
      !resolve(cb->lib, &cb->set_workspace, "cublasSetWorkspace_v2") ||
      !resolve(cb->lib, &cb->gemm_ex, "cublasGemmEx"))
    snprintf(msg, msglen, "cuBLAS lacks cublasCreate_v2/cublasSetWorkspace_v2/cublasGemmEx");
  else if ((rc = cb->create(&cb->handle)))
    snprintf(msg, msglen, "cublasCreate_v2 failed (status %d)", rc);
  else if ((rc = cb->set_stream(cb->handle, stream)))
    snprintf(msg, msglen, "cublasSetStream_v2 failed (status %d)", rc);
  else if ((rc = tls_mem_alloc(ctx, &cb->workspace, WORKSPACE_BYTES)))
    snprintf(msg, msglen, "no device memory for the cuBLAS workspace: %s", tls_last_error(ctx));
  else if ((rc = cb->set_workspace(cb->handle, (void *)(uintptr_t)cb->workspace, WORKSPACE_BYTES)))
    snprintf(msg, msglen, "cublasSetWorkspace_v2 failed (status %d)", rc);
  if (rc) {
    cublas_close(cb);
    return NULL;
  }
  cb->have_lt = lt_open(&cb->lt);
  return cb;
}

bool cublas_has_lt(const Cublas *cb) { return cb->have_lt; }

const char *cublas_path_name(CublasPath path) {
  return path == CUBLAS_PATH_GEMMEX ? "cublasGemmEx"
         : path == CUBLAS_PATH_LT   ? "cublasLt"
                                    : "cublasLt fast-accum";
}

/* Row-major C[M,N] = A[M,K] . B[N,K]^T is column-major C^T = B . A^T: an
 * (N x M) product of op(B)=T (B is K x N column-major) and A^T (K x M). */
bool cublas_gemm(Cublas *cb, CublasPath path, GemmTypes t, int m, int n, int k, float alpha,
                 uint64_t a, uint64_t b, uint64_t c, char *msg, size_t msglen) {
  float beta = 0.0f;
  const void *pa = (const void *)(uintptr_t)a, *pb = (const void *)(uintptr_t)b;
  void *pc = (void *)(uintptr_t)c;
  if (path != CUBLAS_PATH_GEMMEX) {
    Lt *lt = &cb->lt;
    if (!cb->have_lt) return snprintf(msg, msglen, "cuBLASLt is not available"), false;
    if (!lt_prepare(lt, t, path == CUBLAS_PATH_LT_FAST, m, n, k, msg, msglen)) return false;
    int rc = lt->matmul(lt->handle, lt->desc, &alpha, pb, lt->la, pa, lt->lb, &beta, pc, lt->lc, pc,
                        lt->lc, lt->heur.algo, (void *)(uintptr_t)cb->workspace, WORKSPACE_BYTES,
                        cb->stream);
    if (rc) snprintf(msg, msglen, "cublasLtMatmul failed (status %d)", rc);
    return rc == 0;
  }
  if (elem_is_fp8(t.a) || elem_is_fp8(t.b))
    return snprintf(msg, msglen, "cublasGemmEx takes no fp8 operands (cuBLASLt does)"), false;
  int rc = cb->gemm_ex(cb->handle, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, pb, cuda_type(t.b), k,
                       pa, cuda_type(t.a), k, &beta, pc, cuda_type(t.c), n, CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT);
  if (rc) snprintf(msg, msglen, "cublasGemmEx failed (status %d)", rc);
  return rc == 0;
}

void cublas_close(Cublas *cb) {
  if (!cb) return;
  lt_close(&cb->lt);
  if (cb->handle) cb->destroy(cb->handle);
  if (cb->workspace) tls_mem_free(cb->ctx, cb->workspace);
  if (cb->lib) dlclose(cb->lib);
  free(cb);
}
