/* tlsrun.h: the pieces of the tlsrun tool (private to tools/tlsrun/; a
 * client of libtlsrt through runtime/tlsrt.h alone). */
#ifndef TLSRUN_H
#define TLSRUN_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/tlsrt.h"

enum { EXIT_OK = 0, EXIT_CHECK = 1, EXIT_USAGE = 2, EXIT_NO_GPU = 3, EXIT_REFUSED = 4 };

/* tlsrun_data.c: inputs and host-side references. */
typedef struct Rng {
  uint64_t s;
} Rng;
void rng_seed(Rng *r, uint64_t seed);
float rng_uniform(Rng *r); /* in [-1, 1] */
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);

/* The element types of matmul operands and results, with their metadata
 * names ("f16", "bf16", "f8e4m3", "f8e5m2"). */
typedef enum ElemType { ET_F16, ET_BF16, ET_E4M3, ET_E5M2, ET_NONE } ElemType;
ElemType elem_type(const char *meta_name); /* ET_NONE for another */
const char *elem_name(ElemType t);
int elem_bytes(ElemType t);
bool elem_is_fp8(ElemType t);
/* Round to nearest even into t (fp8 saturates at its largest finite). */
uint32_t elem_from_float(ElemType t, float f);
float elem_to_float(ElemType t, uint32_t code);
/* The element at index i of a buffer of t. */
float elem_load(ElemType t, const void *buf, int64_t i);
void elem_store(ElemType t, void *buf, int64_t i, uint32_t code);

/* C[rows] = scale * A[M,K] . B[N,K]^T in double over the given rows, the
 * inputs decoded from their element types. */
void host_matmul_rows(const void *a, ElemType ta, const void *b, ElemType tb, double scale,
                      double *out, int64_t n, int64_t k, const int64_t *rows, int nrows);

/* Relative error ||c - ref||_2 / ||ref||_2 with NaN/Inf counting. */
typedef struct Compare {
  double rel_err;
  int64_t bad_values; /* NaN or Inf in the result (unwritten: 0xFFFF) */
  int64_t bad_ref;
} Compare;

/* tlsrun_cublas.c: cuBLAS opened with dlopen; row-major GEMM
 * C[M,N] = alpha * A[M,K] . B[N,K]^T with fp32 accumulation, A and B f16,
 * bf16 (the same) or fp8 (cuBLASLt only), C f16 or bf16. CUBLAS_PATH_LT_FAST
 * is cuBLASLt with CUBLASLT_MATMUL_DESC_FAST_ACCUM (fp8 only: the WGMMA
 * accumulator without cuBLAS's periodic promotion to fp32). */
typedef struct Cublas Cublas;
typedef enum CublasPath { CUBLAS_PATH_GEMMEX, CUBLAS_PATH_LT, CUBLAS_PATH_LT_FAST } CublasPath;
typedef struct GemmTypes {
  ElemType a, b, c;
} GemmTypes;
Cublas *cublas_open(tls_context *ctx, void *stream, char *msg, size_t msglen);
bool cublas_has_lt(const Cublas *cb);
const char *cublas_path_name(CublasPath path);
bool cublas_gemm(Cublas *cb, CublasPath path, GemmTypes t, int m, int n, int k, float alpha,
                 uint64_t a, uint64_t b, uint64_t c, char *msg, size_t msglen);
void cublas_close(Cublas *cb);

/* tlsrun_bench.c: timings under the protocol of docs/performance.md
 * ("Protocol"). */
typedef struct Timing {
  double median_ms, min_ms, max_ms;
} Timing;
typedef bool (*RunFn)(void *arg);
/* The L2 flush before each timed run: a memset of this many bytes (the
 * H200's L2 is 60 MB); the autotuner flushes the same way. */
enum { BENCH_FLUSH_BYTES = 256 << 20 };
/* Warm-up, then reps runs each after an L2 flush, timed with events. */
bool bench_time(tls_context *ctx, void *stream, RunFn run, void *arg, int reps, Timing *out);
/* The same for several candidates, interleaved run by run. */
bool bench_time_many(tls_context *ctx, void *stream, const RunFn *runs, void *const *args,
                     int nruns, int reps, Timing *outs);
/* The stream (tls_stream_create) and the timer bench_time needs; false
 * with the error in ctx. */
bool bench_setup(tls_context *ctx, void **stream);
void bench_teardown(tls_context *ctx, void *stream);

#endif
