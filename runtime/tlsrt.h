/* tlsrt.h: the public C API of libtlsrt, the tlsc runtime.
 *
 * It loads a PTX file written by tlsc (docs/format.md: a `//@tls` metadata
 * block, then PTX for sm_90a), compiles it for the GPU (ptxas with an on-disk
 * cache, or the driver's JIT), and launches its entries from an argument
 * array: it evaluates the grid, builds the TMA tensor maps and sets the shared
 * memory limit. It needs nothing from the compiler, and nothing from CUDA at
 * build time: the driver is opened with dlopen("libcuda.so.1") at tls_init.
 *
 *   tls_context *ctx;
 *   if (tls_init(0, &ctx) != TLS_OK) { puts(tls_last_error(ctx)); ... }
 *   tls_module *mod;
 *   tls_module_load_file(ctx, "matmul.ptx", &mod);
 *   const tls_kernel *k = tls_kernel_find(mod, "MatmulWGMMAV5");
 *   tls_arg args[] = {tls_i32(m), tls_i32(n), tls_i32(k),
 *                     tls_ptr(a), tls_ptr(b), tls_ptr(c)};
 *   tls_launch(k, args, 6, NULL);
 *
 * Every call returns a tls_status; the context keeps the last error's
 * message with details (file:line for metadata, the argument for a refused
 * launch). A context is not thread-safe: calls on one context must not
 * overlap (use one per thread, or a lock, as the Python package does); any
 * thread may make them, each makes the context's CUDA context current.
 */
#ifndef TLSRT_H
#define TLSRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tls_status {
  TLS_OK = 0,
  TLS_ERR_INVALID,   /* API misuse: NULL handle, bad option */
  TLS_ERR_NO_DRIVER, /* libcuda.so.1 not found or incomplete */
  TLS_ERR_NO_DEVICE, /* no such GPU, or the context is offline */
  TLS_ERR_CUDA,      /* a driver call failed */
  TLS_ERR_IO,        /* a file could not be read */
  TLS_ERR_FORMAT,    /* the PTX file or its metadata is broken */
  TLS_ERR_COMPILE,   /* ptxas or the driver JIT refused the PTX */
  TLS_ERR_NOT_FOUND, /* no entry of that name / config */
  TLS_ERR_ARG_COUNT, /* launch: wrong number of arguments */
  TLS_ERR_ARG_TYPE,  /* launch: an argument of the wrong type */
  TLS_ERR_ARG_VALUE, /* launch: null/misaligned pointer, bad size */
  TLS_ERR_EXPR,      /* launch: overflow or division by zero */
  TLS_ERR_TMAP,      /* launch: a tensor map breaks the TMA rules */
  TLS_ERR_NOMEM
} tls_status;

const char *tls_error_string(tls_status status);

/* ------------------------------------------------------------ context */

typedef struct tls_context tls_context;

/* Opens the driver (TLSC_CUDA_LIB overrides "libcuda.so.1"), retains the
 * primary context of GPU `device` and makes it current. On failure *out is
 * still a context (offline) so that tls_last_error can explain; free it. */
tls_status tls_init(int device, tls_context **out);
/* A context with no GPU: modules load and launches are validated
 * (tls_prepare_launch), but tls_launch answers TLS_ERR_NO_DEVICE. */
tls_status tls_init_offline(tls_context **out);
void tls_context_free(tls_context *ctx);
const char *tls_last_error(const tls_context *ctx);
int tls_context_online(const tls_context *ctx);
/* "sm_90a" for a 9.0 device; "" offline. */
const char *tls_context_arch(const tls_context *ctx);
const char *tls_context_device_name(const tls_context *ctx);

/* Device memory, for C users and tlsrun (CUdeviceptr values). */
tls_status tls_mem_alloc(tls_context *ctx, uint64_t *dptr, size_t bytes);
tls_status tls_mem_free(tls_context *ctx, uint64_t dptr);
tls_status tls_mem_upload(tls_context *ctx, uint64_t dst, const void *src, size_t bytes);
tls_status tls_mem_download(tls_context *ctx, void *dst, uint64_t src, size_t bytes);
tls_status tls_mem_set8(tls_context *ctx, uint64_t dst, uint8_t value, size_t bytes);
tls_status tls_synchronize(tls_context *ctx);
/* Makes the work queued on `stream` from now on wait until the work
 * queued so far on `on` is done, without blocking the host (an event
 * recorded on `on`, waited for on `stream`): how a caller honours the
 * stream a producer names (__cuda_array_interface__'s "stream"). NULL is
 * the default stream; the same stream twice does nothing. */
tls_status tls_stream_wait(tls_context *ctx, void *stream, void *on);
/* Buffers of known size: tls_mem_alloc records each, and a caller may
 * declare others (from cudaMalloc, or any address offline). A launch whose
 * tensor map would read or write past the end of a known buffer is refused
 * with TLS_ERR_ARG_VALUE; pointers outside every known buffer are not
 * checked. Registering the same base again replaces its size; where known
 * buffers nest, the one starting closest below a pointer bounds it. */
tls_status tls_mem_register(tls_context *ctx, uint64_t dptr, size_t bytes);
void tls_mem_unregister(tls_context *ctx, uint64_t dptr);

/* ------------------------------------------------------------- timing */

/* Streams, event timers and an asynchronous memset: what a benchmark needs
 * (tlsrun --bench, docs/performance.md "Protocol") without the driver API.
 * A stream is a CUstream passed as void * (NULL = the legacy default
 * stream). Offline, each refuses with TLS_ERR_NO_DEVICE. */

/* A blocking stream: it waits for work on the legacy default stream (the
 * synchronous tls_mem_* calls) and that work waits for it. */
tls_status tls_stream_create(tls_context *ctx, void **stream);
/* NULL is the default stream: nothing to destroy (TLS_OK). */
tls_status tls_stream_destroy(tls_context *ctx, void *stream);
/* Like tls_mem_set8, queued on `stream` (an L2 flush between timed runs). */
tls_status tls_mem_set8_async(tls_context *ctx, uint64_t dst, uint8_t value, size_t bytes,
                              void *stream);

/* A pair of CUDA events: start records the first on `stream`, stop records
 * the second, waits for it and gives the milliseconds between them. Free
 * timers before their context. */
typedef struct tls_timer tls_timer;
tls_status tls_timer_create(tls_context *ctx, tls_timer **out);
tls_status tls_timer_start(tls_timer *timer, void *stream);
tls_status tls_timer_stop(tls_timer *timer, void *stream, float *ms);
void tls_timer_free(tls_timer *timer);

/* ------------------------------------------------------------- module */

typedef struct tls_module tls_module;
typedef struct tls_kernel tls_kernel;

/* How a module is compiled: TLS_COMPILE_AUTO uses ptxas when it is on PATH
 * or in /usr/local/cuda/bin (TLSC_PTXAS names another), with the cubin
 * cache, and the driver JIT otherwise. TLSC_COMPILE=jit|ptxas forces one. */
typedef enum tls_compile_mode {
  TLS_COMPILE_AUTO,
  TLS_COMPILE_JIT,
  TLS_COMPILE_PTXAS
} tls_compile_mode;

/* Parses the metadata block fully, checks the PTX against it, and (online)
 * compiles it. A file that is truncated or has broken metadata is refused
 * with the line number in the message. `name` labels messages. Online, an
 * entry whose code the file leaves to the runtime (`occupancy BASE`,
 * docs/format.md) is built from BASE's for more blocks per SM, or left
 * out of the module where that would spill: the module's entries are
 * those it can launch. */
tls_status tls_module_load_file(tls_context *ctx, const char *path, tls_module **out);
tls_status tls_module_load_string(tls_context *ctx, const char *ptx, const char *name,
                                  tls_module **out);
void tls_module_set_compile_mode(tls_context *ctx, tls_compile_mode mode);
void tls_module_free(tls_module *mod);
/* How the last online load got the file's code: "jit", "ptxas", "cache". */
const char *tls_module_compiled_by(const tls_module *mod);

int tls_module_num_kernels(const tls_module *mod);
const tls_kernel *tls_module_kernel(const tls_module *mod, int index);
/* NULL (and the context's last error set) when there is none. */
const tls_kernel *tls_kernel_find(const tls_module *mod, const char *name);
/* By script name and a config subset "num_stages=4,block_k=64" ("" = the
 * first entry of that script); a value may be a list, taken whole and
 * spaces aside: "warp_spatial=[1, 4],num_stages=3". Specialised entries (below) are not
 * returned: their generic sibling is, which launches them. */
const tls_kernel *tls_kernel_find_config(const tls_module *mod, const char *script,
                                         const char *config);

const char *tls_kernel_name(const tls_kernel *k);
const char *tls_kernel_script(const tls_kernel *k);
const char *tls_kernel_config(const tls_kernel *k); /* "k=v k=v" */
/* Parameters the entry was compiled with as constants (tlsc --specialize
 * or -D): "n_size=8192 k_size=8192", "" when none. A launch of it with
 * other values is refused (TLS_ERR_ARG_VALUE). */
const char *tls_kernel_fixed(const tls_kernel *k);
int tls_kernel_block(const tls_kernel *k);
int tls_kernel_smem(const tls_kernel *k);
/* The parameters a launch passes, in order: the user's. The hidden
 * pointers to an entry's workspaces (its global_tensor()s) are not among
 * them: tls_launch allocates and passes those. */
int tls_kernel_num_params(const tls_kernel *k);
const char *tls_kernel_param_name(const tls_kernel *k, int i);
const char *tls_kernel_param_type(const tls_kernel *k, int i); /* "ptr f16" */
int tls_kernel_num_tmaps(const tls_kernel *k);
/* Whether user parameter i is the pointer of one of the entry's tensor
 * maps (so its tensor must be contiguous and as large as the map reads):
 * that map's index, or -1 (also for i out of range). */
int tls_kernel_param_tmap(const tls_kernel *k, int i);
/* Its global_tensor() workspaces (docs/format.md, `workspace`), which
 * tls_launch allocates: "__ws0 i32 dims=(m+15)/16 clean=1" (the hidden
 * parameter, the element type, the dims over the parameters, whether it is
 * zeros at each launch: clean); NULL out of range. */
int tls_kernel_num_workspaces(const tls_kernel *k);
const char *tls_kernel_workspace(const tls_kernel *k, int i);

/* ------------------------------------------------------------- launch */

typedef enum tls_arg_kind {
  TLS_ARG_I32,
  TLS_ARG_U32,
  TLS_ARG_I64,
  TLS_ARG_U64,
  TLS_ARG_F32,
  TLS_ARG_PTR
} tls_arg_kind;

typedef struct tls_arg {
  tls_arg_kind kind;
  union {
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f32;
    uint64_t ptr; /* a CUdeviceptr */
  } v;
} tls_arg;

static inline tls_arg tls_i32(int32_t x) {
  tls_arg a = {TLS_ARG_I32, {.i32 = x}};
  return a;
}
static inline tls_arg tls_u32(uint32_t x) {
  tls_arg a = {TLS_ARG_U32, {.u32 = x}};
  return a;
}
static inline tls_arg tls_i64(int64_t x) {
  tls_arg a = {TLS_ARG_I64, {.i64 = x}};
  return a;
}
static inline tls_arg tls_u64(uint64_t x) {
  tls_arg a = {TLS_ARG_U64, {.u64 = x}};
  return a;
}
static inline tls_arg tls_f32(float x) {
  tls_arg a = {TLS_ARG_F32, {.f32 = x}};
  return a;
}
static inline tls_arg tls_ptr(uint64_t x) {
  tls_arg a = {TLS_ARG_PTR, {.ptr = x}};
  return a;
}

enum { TLS_MAX_RANK = 5, TLS_MAX_TMAPS = 8, TLS_MAX_PARAMS = 32, TLS_MAX_WORKSPACES = 8 };

/* What cuTensorMapEncodeTiled receives for one tensor map. */
typedef struct tls_tmap_params {
  int dtype; /* CUtensorMapDataType value */
  int elem_bytes;
  int rank;
  uint64_t address;                   /* global base */
  uint64_t dims[TLS_MAX_RANK];        /* innermost first */
  uint64_t strides[TLS_MAX_RANK - 1]; /* bytes, dims 1..rank-1 */
  uint32_t box[TLS_MAX_RANK];
  int swizzle; /* CUtensorMapSwizzle value */
} tls_tmap_params;

/* One global-memory workspace of a launch (a `workspace` metadata line:
 * Tilus's self.global_tensor()). */
typedef struct tls_workspace_plan {
  uint64_t bytes;  /* the product of its dims times the element size */
  uint64_t offset; /* in the entry's workspace buffer, a multiple of 256 */
  int clean;       /* 1: zeros at the launch (the kernel leaves them so) */
} tls_workspace_plan;

/* A validated launch: everything but the driver calls. */
typedef struct tls_launch_plan {
  uint32_t grid[3];
  uint32_t block;
  uint32_t smem;
  int num_tmaps;
  tls_tmap_params tmaps[TLS_MAX_TMAPS]; /* the address of a map over a
                                           workspace is 0 until tls_launch
                                           allocates it */
  uint32_t cluster[3];                  /* blocks per cluster (1 1 1: no cluster); the grid
                          is a multiple of it */
  int num_workspaces;
  tls_workspace_plan workspaces[TLS_MAX_WORKSPACES];
  uint64_t workspace_bytes;       /* the buffer holding all of them */
  uint64_t workspace_clean_bytes; /* its first bytes: the clean ones */
} tls_launch_plan;

/* Specialised entries. A file from `tlsc --specialize` holds, beside each
 * generic entry, entries of the same script, autotune point and parameters
 * that fix some `int` parameters (tls_kernel_fixed). Launching an entry
 * (tls_prepare_launch, tls_launch) runs, among it and its siblings fixing
 * every value it fixes and more, the one fixing the most parameters whose
 * fixed values all equal the arguments (the first in the file among
 * equals); an entry whose own fixed values differ from the arguments is
 * refused. tls_kernel_resolve says which entry a launch with these
 * arguments runs (only their count, types and integer values are read);
 * NULL, with the last error set, when the launch would be refused for
 * them. */
const tls_kernel *tls_kernel_resolve(const tls_kernel *k, const tls_arg *args, int nargs);

/* Checks the arguments (count, types, pointers, sizes), picks the entry
 * that runs (tls_kernel_resolve), evaluates its grid and tensor-map
 * shapes, and checks them against the TMA rules. Makes no driver call:
 * runs on a machine without a GPU. */
tls_status tls_prepare_launch(const tls_kernel *k, const tls_arg *args, int nargs,
                              tls_launch_plan *plan);
/* Prepares, encodes the tensor maps (cached by their inputs), and launches
 * the entry that tls_kernel_resolve names on `stream` (a CUstream; NULL =
 * the default stream). Asynchronous.
 *
 * An entry with workspaces (docs/format.md, `workspace`) gets them in one
 * device buffer that the entry keeps from launch to launch, grown (after
 * cuCtxSynchronize, the old one freed) when a launch needs more, and freed
 * with the module. Its clean workspaces are zeros at each launch: zeroed
 * with cuMemsetD8Async on `stream` when their bytes are not known to be
 * zeros (a new buffer, or bytes an unclean workspace used before), and
 * left zeros by the kernel, as Tilus asks of its kernels. Launches of one entry share the buffer: two
 * of them running at once on different streams race on it, as Tilus's
 * per-device workspace does. A buffer that cannot be allocated refuses the
 * launch (TLS_ERR_NOMEM) before any kernel runs. */
tls_status tls_launch(const tls_kernel *k, const tls_arg *args, int nargs, void *stream);

/* Autotuning: times every entry of `script` (its autotune points, which
 * share one signature) on these arguments, `reps` runs each after one
 * warm-up, in rounds that run every entry once (so that clock drift while
 * tuning weighs on all alike), with CUDA events on `stream`, and returns
 * the fastest with its median time. Specialised entries are not timed on their own: each
 * generic entry runs its specialised sibling when the arguments match.
 * ms_each (may be NULL) receives each entry's median, in module order, -1
 * for entries of other scripts and for specialised entries. */
tls_status tls_autotune(const tls_module *mod, const char *script, const tls_arg *args, int nargs,
                        void *stream, int reps, const tls_kernel **best, float *best_ms,
                        float *ms_each);

/* How tls_autotune_ex times: `reps` runs per entry (at least 1) and, when
 * flush_bytes is not 0, a device buffer of that many bytes zeroed before
 * each timed run, outside the timing, so that every run starts with a
 * cold L2 as under the benchmark protocol (docs/performance.md: 256 MB on
 * an H200, whose L2 is 60 MB). Kernels of a few microseconds rank
 * differently with a warm L2 than with a cold one. */
typedef struct tls_autotune_options {
  int reps;
  size_t flush_bytes;
} tls_autotune_options;

/* tls_autotune with options; tls_autotune(..., reps, ...) is this with
 * {reps, 0}. The flush buffer is allocated for the call and freed before
 * it returns (when cuMemAlloc refuses it: TLS_ERR_CUDA, nothing timed). */
tls_status tls_autotune_ex(const tls_module *mod, const char *script, const tls_arg *args,
                           int nargs, void *stream, const tls_autotune_options *opts,
                           const tls_kernel **best, float *best_ms, float *ms_each);

#ifdef __cplusplus
}
#endif
#endif
