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
/* C[rows of m] = A[M,K] . B[N,K]^T in double over rows r0, r0+step, ... */
void host_matmul_rows(const uint16_t *a, const uint16_t *b, double *out, int64_t n, int64_t k,
                      const int64_t *rows, int nrows);

/* Relative error ||c - ref||_2 / ||ref||_2 with NaN/Inf counting. */
typedef struct Compare {
  double rel_err;
  int64_t bad_values; /* NaN or Inf in the result (unwritten: 0xFFFF) */
  int64_t bad_ref;
} Compare;

/* tlsrun_cublas.c: cuBLAS opened with dlopen; row-major fp16 GEMM
 * C[M,N] = A[M,K] . B[N,K]^T with fp32 accumulation. */
typedef struct Cublas Cublas;
typedef enum CublasPath { CUBLAS_PATH_GEMMEX, CUBLAS_PATH_LT } CublasPath;
Cublas *cublas_open(tls_context *ctx, void *stream, char *msg, size_t msglen);
bool cublas_has_lt(const Cublas *cb);
bool cublas_gemm(Cublas *cb, CublasPath path, int m, int n, int k, uint64_t a, uint64_t b,
                 uint64_t c, char *msg, size_t msglen);
void cublas_close(Cublas *cb);

/* tlsrun_bench.c: timings under the protocol of docs/performance.md
 * ("Protocol"). */
typedef struct Timing {
  double median_ms, min_ms, max_ms;
} Timing;
typedef bool (*RunFn)(void *arg);
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
