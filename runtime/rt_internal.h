/* rt_internal.h: the structures behind libtlsrt's opaque handles, shared by
 * the runtime's source files. Private to runtime/. */
#ifndef TLSRT_INTERNAL_H
#define TLSRT_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>

#include "runtime/cuda_api.h"
#include "runtime/tlsrt.h"

/* ---------------------------------------------------------- expressions */

/* An expression compiled to postfix code at load time, so that a launch
 * evaluates it with one pass over a small array and no parsing. */
typedef enum XOp {
  X_CONST,
  X_PARAM,
  X_ADD,
  X_SUB,
  X_MUL,
  X_DIV,
  X_MOD,
  X_NEG,
  X_MIN,
  X_MAX,
  X_EQ, /* comparisons: 1 or 0 */
  X_NE,
  X_LT,
  X_LE,
  X_GT,
  X_GE,
  X_NOT,  /* !a: 1 when a is 0, else 0 */
  X_BOOL, /* a != 0: the right operand of && and || */
  X_ANDJ, /* a && ...: when a is 0, leave 0 and jump to `param`; else pop a */
  X_ORJ   /* a || ...: when a is not 0, leave 1 and jump to `param`; else pop a */
} XOp;

typedef struct XInstr {
  XOp op;
  int param;     /* X_PARAM: index into the kernel's parameters; X_ANDJ,
                    X_ORJ: the instruction after the right operand */
  int64_t value; /* X_CONST */
} XInstr;

enum { EXPR_MAX_CODE = 64, EXPR_MAX_STACK = 32 };

typedef struct Expr {
  char *text; /* as written, for messages */
  int n;
  XInstr code[EXPR_MAX_CODE];
} Expr;

typedef enum ParamType { PT_I32, PT_U32, PT_I64, PT_U64, PT_F32, PT_PTR } ParamType;

typedef struct Param {
  char *name;
  ParamType type;
  char type_text[24]; /* "i32", "ptr f16" */
  int elem_bytes;     /* PT_PTR: size of the pointee */
  bool used_by_tmap;  /* PT_PTR: must be 16-byte aligned */
} Param;

/* Compiles `text` over the parameter names; on error writes the reason
 * into msg and returns false. Parameters must be integers. */
bool expr_compile(const char *text, const Param *params, int nparams, Expr *out, char *msg,
                  size_t msglen);
/* Evaluates in checked 64-bit signed arithmetic; false (with msg) on
 * overflow or division by zero. */
bool expr_eval(const Expr *e, const int64_t *values, int64_t *out, char *msg, size_t msglen);

/* ------------------------------------------------------------- kernels */

enum { TMAP_CACHE_SLOTS = 4 };

/* One encoded tensor map, remembered with the inputs that made it. */
typedef struct TmapSlot {
  bool valid;
  tls_tmap_params key;
  CUtensorMap map;
} TmapSlot;

typedef struct TmapDesc {
  int ptr_param; /* the user parameter of its base address, or -1 */
  int ptr_ws;    /* or the workspace whose buffer it maps, or -1 */
  int dtype;     /* CUtensorMapDataType */
  int elem_bytes;
  int rank;
  Expr dims[TLS_MAX_RANK];
  Expr strides[TLS_MAX_RANK - 1];
  uint32_t box[TLS_MAX_RANK];
  int swizzle_bytes;
  int swizzle; /* CUtensorMapSwizzle */
  int line;
  TmapSlot cache[TMAP_CACHE_SLOTS];
  int next_slot;
} TmapDesc;

/* `require EXPR MESSAGE` (docs/format.md): a launch whose arguments make
 * EXPR 0, or cannot evaluate it, is refused with MESSAGE. */
typedef struct Require {
  Expr cond; /* cond.text: EXPR as written */
  char *msg; /* the rest of the line; "" when none */
  int line;
} Require;

enum { KERNEL_MAX_REQUIRES = 16 };

/* A workspace (Tilus's global_tensor(); docs/format.md): its hidden pointer
 * parameter `param NAME ptr D workspace`, which follows the user's, and
 * its `workspace NAME dtype=D dims=... clean=0|1` line. A launch allocates
 * the product of the dims times elem_bytes and passes the address. */
typedef struct Workspace {
  char *name;
  char dtype[8]; /* "i32", from the param line */
  int elem_bytes;
  int rank; /* 0 until its `workspace` line */
  Expr dims[TLS_MAX_RANK];
  bool clean;
  int param_line, line;
  char *desc; /* "__ws0 i32 dims=(m+15)/16 clean=1" (tls_kernel_workspace) */
} Workspace;

/* A launch-invariant divisor (docs/format.md, `divisor`): its hidden
 * parameter `param NAME u64 divisor`, which follows the user's and comes
 * before the workspaces', and its `divisor NAME EXPR` line. A launch
 * evaluates EXPR (refused unless 1 <= EXPR <= 2^31-1) and passes
 * rt_divisor_param of it, from which the kernel divides by multiplying. */
typedef struct Divisor {
  char *name;
  Expr value; /* value.text: EXPR as written (NULL until its line) */
  int param_line, line;
} Divisor;

enum { KERNEL_MAX_DIVISORS = 8 };

struct tls_kernel {
  struct tls_module *mod;
  char *name, *script, *config;
  int line; /* of its `entry` line */
  int block, smem;
  int nparams;
  Param params[TLS_MAX_PARAMS];
  Expr grid[3];
  int cluster[3]; /* `cluster X Y Z`, 1 1 1 without one */
  int cluster_line;
  int ntmaps;
  /* TLS_MAX_TMAPS descriptors (10 KB each, their encoded maps cached
   * inside), 64-byte aligned, allocated at the entry's first `tmap` line:
   * NULL for the entries without one (a file of many cp.async entries
   * stays small) */
  TmapDesc *tmaps;
  CUfunction fn;
  /* `fixed` (docs/format.md): parameters compiled as constants, which a
   * launch must pass with exactly these values. */
  char *fixed; /* "n_size=8192 k_size=8192" as written; "" when none */
  int fixed_line;
  int nfixed;
  int fixed_param[TLS_MAX_PARAMS]; /* parameter indices */
  int64_t fixed_value[TLS_MAX_PARAMS];
  /* Siblings (same script, config and parameters) that fix every value
   * this entry fixes and more: what a launch of it runs instead when the
   * arguments have their values, most fixed first, file order among equals
   * (meta_link_variants). */
  int nvariants;
  struct tls_kernel **variants;
  const struct tls_kernel *generic; /* the sibling fixing nothing, or NULL */
  bool is_variant;                  /* a sibling fixes a subset of its values */
  /* `occupancy BASE`: the file holds no code of this entry; libtlsrt
   * builds it from BASE's for more blocks per SM (occupancy.c), or drops
   * the entry. NULL for the others. */
  char *occupancy_of;
  int occupancy_line;
  int nreqs; /* `require` lines, in file order */
  Require *reqs;
  int ndivs; /* hidden parameters, in PTX order after the user's (nparams) */
  Divisor *divs;
  int nws; /* hidden parameters, in PTX order after the divisors' */
  Workspace *ws;
  /* launch.c: the device buffer the workspaces live in (0 = none yet),
   * and how many of its first bytes are zeros: zeroed by the runtime and
   * kept so by each launch for its clean workspaces (Tilus's contract) */
  uint64_t ws_buffer, ws_capacity, ws_zeros;
};

/* At most this many CUmodules a compilation unit (the parts of a bundle),
 * and units a module: its file, then the occupancy variants ptxas builds
 * by its own choice, then those built for one block more (occupancy.c). */
enum { RT_MAX_CUMODS = 64, RT_MAX_UNITS = 3 };

struct tls_module {
  struct tls_context *ctx;
  char *name; /* path or label, for messages */
  char *text; /* the whole PTX file, NUL-terminated */
  size_t len;
  char *source;
  int nkernels;
  struct tls_kernel *kernels;
  /* the loaded code: one CUmodule, or one per part of a bundle that
   * concurrent ptxas processes assembled (assemble.c) */
  CUmodule cumods[RT_MAX_UNITS * RT_MAX_CUMODS];
  int ncumods;
  const char *compiled_by;
};

/* A device buffer of known size (buffers.c). */
typedef struct RtBuffer {
  uint64_t base, bytes;
} RtBuffer;

struct tls_context {
  CudaApi api;
  bool online;
  CUdevice dev;
  CUcontext cuctx;
  char arch[16];
  char device_name[128];
  int smem_optin;
  /* an SM's limits, which bound the blocks an occupancy variant can add
   * (occupancy.c) */
  int sm_threads, sm_smem, sm_regs, sm_blocks, block_reserved_smem;
  tls_compile_mode mode;
  char err[4096];
  RtBuffer *buffers;   /* from tls_mem_alloc and tls_mem_register */
  CUevent order_event; /* tls_stream_wait's, made on first use */
  int nbuffers, cap_buffers;
};

/* Records the message as the context's last error; returns status. */
tls_status rt_error(tls_context *ctx, tls_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* TLS_OK on a context with a GPU; else TLS_ERR_INVALID (NULL) or
 * TLS_ERR_NO_DEVICE with "WHAT: the context has no GPU". */
tls_status rt_need_online(tls_context *ctx, const char *what);
/* rt_need_online, then the context made current in the calling thread (a
 * thread other than tls_init's has none, or another library's). */
tls_status rt_need_current(tls_context *ctx, const char *what);
/* Turns a failed driver call into TLS_ERR_CUDA with its name and string. */
tls_status rt_cuda_error(tls_context *ctx, CUresult r, const char *call);

/* buffers.c: the buffers whose size is known, for the launch checks. */
tls_status rt_buffer_add(tls_context *ctx, uint64_t base, uint64_t bytes);
void rt_buffer_remove(tls_context *ctx, uint64_t base);
const RtBuffer *rt_buffer_find(const tls_context *ctx, uint64_t address);

/* meta.c: parses the metadata block and checks the PTX against it. On error
 * writes "name:line: error: ..." into msg and returns TLS_ERR_FORMAT. */
tls_status meta_parse(tls_module *mod, char *msg, size_t msglen);
void meta_free_kernels(tls_module *mod);
/* meta.c: removes the entries drop[i] marks and links the variants of the
 * others again (at load, before any entry is handed out). */
tls_status meta_drop_kernels(tls_module *mod, const bool *drop, char *msg, size_t msglen);
/* "f16" -> CUtensorMapDataType and size; false when unknown. */
bool meta_dtype(const char *name, int *cu_dtype, int *bytes);

/* prepare.c: the checks of tls_prepare_launch, and the entry that runs:
 * `*ran` is `k` or the most specialised sibling whose fixed values the
 * arguments have (tls_kernel_resolve); the plan is that entry's. */
tls_status rt_prepare(const tls_kernel *k, const tls_arg *args, int nargs, tls_launch_plan *plan,
                      const tls_kernel **ran, uint64_t *divs);
/* prepare.c: the hidden parameter of divisor d (1 <= d <= 2^31 - 1) that
 * rt_prepare writes into divs[i] for the entry's divisor i: the multiplier
 * m = ceil(2^(32+l) / d) - 2^32, l = ceil(log2 d), in the low 32 bits and
 * d in the high 32; the kernel computes a / d as (a + mulhi(a, m)) >> l
 * for 0 <= a <= 2^31 (backend_ptx/emit_divmod.c has the proof). */
uint64_t rt_divisor_param(uint32_t d);
/* prepare.c: whether the entry a launch of `k` runs for these arguments
 * meets its `require` lines; when not, false with the refusal ("launch of
 * 'K' refused: static_assert(...) fails ...") in why. Arguments that
 * tls_prepare_launch refuses for another reason count as meeting them (the
 * launch reports that reason). No error is recorded. */
bool rt_requires_hold(const tls_kernel *k, const tls_arg *args, int nargs, char *why, size_t len);

/* launch.c: frees the entries' workspace buffers (at module unload). */
void rt_free_workspaces(tls_module *mod);

/* compile.c: turns the module's PTX into CUmodules (ptxas + cache, or
 * the driver JIT): the entries with code in the file. */
tls_status compile_module(tls_module *mod);
/* compile.c: the same for another text, whose entries are `names`: its
 * CUmodules join the module's (at most RT_MAX_UNITS texts a module). */
tls_status rt_compile_unit(tls_module *mod, const char *text, size_t len, const char *const *names,
                           int nnames);
/* occupancy.c: builds the code of the module's `occupancy` entries from
 * their base entries' (which have their functions), and drops those that
 * gain no block per SM without spilling. */
tls_status rt_build_occupancy(tls_module *mod);
/* occupancy.c: the PTX of the module-level lines of `ptx` (no metadata,
 * no entry) and, for each i, entry bases[i]'s code renamed names[i], its
 * `.minnctapersm 1` made `.minnctapersm ncta[i]` (none for 0); NULL, with
 * why in msg, when an entry is missing or not as tlsc writes them. */
char *rt_occupancy_text(const char *ptx, const char *const *bases, const char *const *names,
                        const int *ncta, int n, size_t *len, char *msg, size_t msglen);
/* module.c: unloads every CUmodule of mod (a failed load's too). */
void rt_unload_modules(tls_module *mod);
/* module.c: the entry of that name, or NULL (no error recorded). */
tls_kernel *rt_kernel_named(const tls_module *mod, const char *name);
/* module.c: above 48 KB of dynamic shared memory a function must opt in,
 * once, at load time; nothing to do below. */
tls_status rt_opt_in_smem(tls_context *ctx, CUfunction fn, int smem);

/* assemble.c: ptxas over the PTX text, its `nentries` entries shared
 * among `jobs` concurrent processes (each given the text with its share of
 * the entries); writes `out`, a cubin (one job) or a bundle of the
 * processes' cubins, through files named after it (out.ptx, out.partI...)
 * that it removes. 0, or the first failed process's exit status (-1: it
 * did not start, a file could not be written, or an entry is not in the
 * text) with its output or the reason in `log`. */
int rt_assemble(const char *ptxas, const char *arch, const char *text, size_t len,
                const char *const *entries, int nentries, int jobs, const char *out, char *log,
                size_t loglen);
/* A whole file, NUL-terminated (its length in *len), or NULL. */
char *rt_read_file(const char *path, size_t *len);
/* How many processes for nentries entries: $TLSC_PTXAS_JOBS, else the
 * CPUs online; at most nentries and 64. */
int rt_assemble_jobs(int nentries);
/* An image's cubins: a bundle's parts, or the image itself; their count,
 * or -1 for a damaged bundle or more than max parts. */
int rt_image_parts(const char *image, size_t len, const char **parts, size_t *sizes, int max);

#endif
