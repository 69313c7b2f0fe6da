/* tlsrun: runs an entry of a tlsc PTX file on the GPU with random inputs,
 * checks it against cuBLAS (or a host reference) and times it beside cuBLAS.
 *
 *   tlsrun FILE.ptx --list
 *   tlsrun --probe            (exit 0 and the GPU's name, or 3: no GPU)
 *   tlsrun FILE.ptx [--kernel NAME] [--config k=v,...]
 *          [-m M -n N -k K | --sizes MxNxK,...] [--check] [--bench]
 *          [--reps R] [--seed S]
 *   tlsrun --help             (the options and the environment, exit 0)
 *
 * --config picks an autotune point: the entry of script NAME (--kernel, else
 * the first entry's script) whose config holds every k=v given. --autotune
 * times every point of that script (tls_autotune_ex, each run after an L2
 * flush as --bench times) and names the fastest.
 * A launch runs a specialised entry (tlsc --specialize) when the sizes are
 * its fixed values: each result line names the entry that ran, as
 * "SPECIALISED (for GENERIC)" then (tls_kernel_resolve).
 *
 * Known entry shapes: matmul (m_size n_size k_size a_ptr b_ptr c_ptr,
 * C[M,N] = A[M,K] . B[N,K]^T row-major; A and B f16, bf16 (the same) or fp8
 * (e4m3/e5m2), C f16 or bf16, the types read from the entry's metadata;
 * an fp8 entry may take per-tensor scales a_scale b_scale (f32) after c_ptr,
 * C = a_scale * b_scale * A . B^T, run with 0.75 and 1.5), vector add (n a_ptr b_ptr c_ptr
 * over f32 or f16) and copy (m_size n_size src_ptr dst_ptr over f32 or f16,
 * dst = src, an [m, n] matrix from -m and -n). Exit: 0 ok, 1 check failed, 2 usage or bad file, 3 no
 * GPU/driver, 4 launch refused. The options, the file, the entry and every
 * size are checked first, on an offline context; the driver is opened last,
 * so that without a GPU a bad option or file is still named as such. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/tlsrun/tlsrun.h"

enum { MAX_SIZES = 16, HOST_SAMPLE_ROWS = 16 };

typedef struct Size {
  int64_t m, n, k;
} Size;

typedef struct Options {
  const char *file, *kernel, *config;
  Size sizes[MAX_SIZES];
  int nsizes;
  Size one; /* from -m/-n/-k */
  bool check, bench, list, probe, autotune, help;
  int reps;
  uint64_t seed;
} Options;

/* One benchmarked size, for the final table. */
typedef struct Row {
  Size s;
  Timing mine, ref;
  bool have_ref;
  const char *ref_name; /* the fastest cuBLAS path */
} Row;

/* Everything a run of one entry needs. */
typedef struct Run {
  tls_context *ctx;
  const tls_module *mod;
  const tls_kernel *k;
  void *stream;
  Cublas *cb;
  tls_arg args[TLS_MAX_PARAMS];
  int nargs;
  Size s;
  uint64_t a, b, c, cref;
  GemmTypes types; /* a matmul's element types */
  bool scaled;     /* a matmul with a_scale and b_scale */
  float scales[2]; /* the f32 arguments, in order */
  int reps;
  tls_status launch_status; /* of the entry's last launch */
  Row rows[MAX_SIZES];
  int nrows;
} Run;

static void usage(FILE *out) {
  fprintf(out, "usage: tlsrun FILE.ptx --list\n"
               "       tlsrun --probe\n"
               "       tlsrun FILE.ptx [--kernel NAME] [--config k=v,...] [-m M -n N -k K | "
               "--sizes MxNxK,...]\n"
               "              [--check] [--bench] [--autotune] [--reps R] [--seed S]\n");
}

/* --help: the usage, each option and the environment the runtime reads. */
static void help(void) {
  printf("tlsrun: runs an entry of a tlsc PTX file on the GPU with random inputs, checks it\n"
         "against cuBLAS or a reference and times it beside cuBLAS.\n\n");
  usage(stdout);
  printf("\n"
         "  --list            the file's entries, their parameters and launches (no GPU)\n"
         "  --probe           print the GPU's name (exit 0), or exit 3 without one\n"
         "  --kernel NAME     the entry (or script) to run; --config k=v,... picks an\n"
         "                    autotune point by its values\n"
         "  -m M -n N -k K    one size (default 4096 each); --sizes MxNxK,... several\n"
         "  --check           compare with cuBLAS or a reference by relative error\n"
         "  --bench           time the entry and cuBLAS, interleaved, L2 flushed\n"
         "  --autotune        time every autotune point of the script, name the fastest\n"
         "  --reps R          timed runs per size (default 30); --seed S the inputs' seed\n"
         "  -h, --help        print this help\n\n"
         "environment: TLSC_CACHE_DIR (assembled code, default ~/.cache/tlsc), TLSC_PTXAS\n"
         "(the ptxas to use), TLSC_PTXAS_JOBS (ptxas processes for a file of many entries,\n"
         "default one per CPU), TLSC_COMPILE=jit|ptxas, TLSC_CUDA_LIB (the driver library).\n"
         "exit: 0 ok, 1 check failed, 2 usage or bad file, 3 no GPU or driver, 4 launch refused\n");
}

/* ------------------------------------------------------------ options */

/* Why parse_options refused the command line. */
static char option_error[512];

static bool option_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static bool option_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(option_error, sizeof option_error, fmt, ap);
  va_end(ap);
  return false;
}

/* A decimal integer in [lo, hi], the whole string: digits after an
 * optional '-', nothing that overflows. */
static bool parse_int_in(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  if (!isdigit((unsigned char)s[s[0] == '-'])) return false;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (*end || errno || v < lo || v > hi) return false;
  *out = v;
  return true;
}

/* -m, -n, -k: a positive integer of 64 bits; false with the reason. */
static bool parse_extent(const char *option, const char *value, int64_t *out) {
  if (parse_int_in(value, 1, INT64_MAX, out)) return true;
  bool digits = *value && strspn(value, "0123456789") == strlen(value);
  if (digits && !parse_int_in(value, 0, INT64_MAX, out)) /* digits only, yet no int64 */
    return option_fail("'%s' = %s is too large (at most %" PRId64 ")", option, value, INT64_MAX);
  return option_fail("'%s' needs a positive integer, got '%s'", option, value);
}

/* --sizes MxNxK[,MxNxK...]: each extent a positive integer. */
static bool parse_sizes(Options *o, const char *list) {
  char buf[1024];
  if (strlen(list) >= sizeof buf)
    return option_fail("'--sizes' is longer than %zu characters", sizeof buf - 1);
  strcpy(buf, list);
  o->nsizes = 0;
  for (char *item = buf, *next; item; item = next) {
    next = strchr(item, ',');
    if (next) *next++ = 0;
    if (o->nsizes == MAX_SIZES) return option_fail("'--sizes' takes at most %d sizes", MAX_SIZES);
    char shown[64];
    snprintf(shown, sizeof shown, "%.63s", item);
    char *x1 = strchr(item, 'x'), *x2 = x1 ? strchr(x1 + 1, 'x') : NULL;
    bool ok = x2 != NULL;
    if (ok) *x1 = *x2 = 0;
    const char *dims[3] = {item, ok ? x1 + 1 : "", ok ? x2 + 1 : ""};
    int64_t v[3];
    for (int d = 0; ok && d < 3; d++) ok = parse_int_in(dims[d], 1, INT64_MAX, &v[d]);
    if (!ok)
      return option_fail("'--sizes' needs MxNxK[,MxNxK...] with positive integers, got '%s'",
                         shown);
    o->sizes[o->nsizes++] = (Size){v[0], v[1], v[2]};
  }
  return true;
}

/* Reads the command line; false with the reason in option_error. */
static bool parse_options(int argc, char **argv, Options *o) {
  *o = (Options){.one = {4096, 4096, 4096}, .reps = 30, .seed = 1};
  int64_t v;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    bool takes_value = !strcmp(a, "--kernel") || !strcmp(a, "--config") || !strcmp(a, "--sizes") ||
                       !strcmp(a, "-m") || !strcmp(a, "-n") || !strcmp(a, "-k") ||
                       !strcmp(a, "--reps") || !strcmp(a, "--seed");
    if (takes_value && !value) return option_fail("'%s' needs a value", a);
    if (takes_value) i++;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      o->help = true;
      return true;
    }
    if (!strcmp(a, "--list"))
      o->list = true;
    else if (!strcmp(a, "--probe"))
      o->probe = true;
    else if (!strcmp(a, "--autotune"))
      o->autotune = true;
    else if (!strcmp(a, "--check"))
      o->check = true;
    else if (!strcmp(a, "--bench"))
      o->bench = true;
    else if (!strcmp(a, "--kernel"))
      o->kernel = value;
    else if (!strcmp(a, "--config"))
      o->config = value;
    else if (!strcmp(a, "--sizes")) {
      if (!parse_sizes(o, value)) return false;
    } else if (!strcmp(a, "-m") || !strcmp(a, "-n") || !strcmp(a, "-k")) {
      if (!parse_extent(a, value, &v)) return false;
      *(a[1] == 'm' ? &o->one.m : a[1] == 'n' ? &o->one.n : &o->one.k) = v;
    } else if (!strcmp(a, "--reps")) {
      if (!parse_int_in(value, 1, 100000, &v))
        return option_fail("'--reps' needs an integer in 1..100000, got '%s'", value);
      o->reps = (int)v;
    } else if (!strcmp(a, "--seed")) {
      if (!parse_int_in(value, 0, INT64_MAX, &v))
        return option_fail("'--seed' needs a non-negative integer, got '%s'", value);
      o->seed = (uint64_t)v;
    } else if (a[0] == '-')
      return option_fail("unknown option '%s'", a);
    else if (o->file)
      return option_fail("more than one file: '%s' and '%s'", o->file, a);
    else
      o->file = a;
  }
  if (!o->nsizes) o->sizes[o->nsizes++] = o->one;
  if (!o->file && !o->probe) return option_fail("no FILE.ptx given");
  return true;
}

/* --probe: is there a GPU tlsrun can use? */
static int probe(void) {
  tls_context *ctx;
  tls_status st = tls_init(0, &ctx);
  if (st)
    fprintf(stderr, "tlsrun: %s\n", tls_last_error(ctx));
  else
    printf("%s (%s)\n", tls_context_device_name(ctx), tls_context_arch(ctx));
  tls_context_free(ctx);
  return st ? EXIT_NO_GPU : EXIT_OK;
}

/* --------------------------------------------------------------- list */

static int list_entries(const Options *o) {
  tls_context *ctx;
  tls_module *mod;
  tls_init_offline(&ctx);
  if (tls_module_load_file(ctx, o->file, &mod)) {
    fprintf(stderr, "tlsrun: %s\n", tls_last_error(ctx));
    tls_context_free(ctx);
    return EXIT_USAGE;
  }
  for (int i = 0; i < tls_module_num_kernels(mod); i++) {
    const tls_kernel *k = tls_module_kernel(mod, i);
    printf("%s script=%s block=%d smem=%d tmaps=%d config=[%s]", tls_kernel_name(k),
           tls_kernel_script(k), tls_kernel_block(k), tls_kernel_smem(k), tls_kernel_num_tmaps(k),
           tls_kernel_config(k));
    if (*tls_kernel_fixed(k)) printf(" fixed=[%s]", tls_kernel_fixed(k));
    putchar('\n');
    for (int p = 0; p < tls_kernel_num_params(k); p++)
      printf("  param %s %s\n", tls_kernel_param_name(k, p), tls_kernel_param_type(k, p));
    for (int w = 0; w < tls_kernel_num_workspaces(k); w++)
      printf("  workspace %s\n", tls_kernel_workspace(k, w));
  }
  tls_module_free(mod);
  tls_context_free(ctx);
  return EXIT_OK;
}

/* -------------------------------------------------------- arguments */

static int param_index(const tls_kernel *k, const char *name) {
  for (int i = 0; i < tls_kernel_num_params(k); i++)
    if (!strcmp(tls_kernel_param_name(k, i), name)) return i;
  return -1;
}

/* An integer argument of the parameter's own type. */
static tls_arg int_arg(const char *type, int64_t v) {
  if (!strcmp(type, "i64")) return tls_i64(v);
  if (!strcmp(type, "u64")) return tls_u64((uint64_t)v);
  if (!strcmp(type, "u32")) return tls_u32((uint32_t)v);
  return tls_i32((int32_t)v);
}

/* Fills r->args by parameter name: names[0..nints-1] take ints, the
 * pointers ptrs in order, the f32 parameters r->scales in order; false when
 * the entry has another shape. */
static bool bind_args(Run *r, const char *const *names, const int64_t *ints, int nints,
                      const uint64_t *ptrs) {
  const tls_kernel *k = r->k;
  int n = tls_kernel_num_params(k);
  for (int i = 0; names[i]; i++)
    if (param_index(k, names[i]) < 0) return false;
  int count = 0;
  while (names[count]) count++;
  if (n != count) return false;
  int nptrs = 0, nfloats = 0;
  for (int i = 0; names[i]; i++) {
    int p = param_index(k, names[i]);
    const char *type = tls_kernel_param_type(k, p);
    bool is_ptr = !strncmp(type, "ptr", 3), is_f32 = !strcmp(type, "f32");
    if (i < nints ? is_ptr || is_f32 : !is_ptr && !is_f32) return false;
    if (is_f32 && nfloats == 2) return false;
    r->args[p] = i < nints ? int_arg(type, ints[i])
                 : is_ptr  ? tls_ptr(ptrs[nptrs++])
                           : tls_f32(r->scales[nfloats++]);
  }
  r->nargs = n;
  return true;
}

/* Whether v is a value of the integer parameter type. */
static bool fits(const char *type, int64_t v) {
  if (!strcmp(type, "i64")) return true;
  if (!strcmp(type, "u64")) return v >= 0;
  if (!strcmp(type, "u32")) return v >= 0 && v <= UINT32_MAX;
  if (!strcmp(type, "i32")) return v >= INT32_MIN && v <= INT32_MAX;
  return false; /* f32 or a pointer: no size goes there */
}

/* Binds the integer arguments (names[0..nints-1]) and placeholder pointers
 * and prepares the launch: a size the entry cannot take is refused (exit 4,
 * the size and the reason printed) before anything is allocated, and, as
 * tlsrun checks every size on an offline context first, before the driver
 * is opened. */
static int prepare_size(Run *r, const char *const *names, const int64_t *ints, int nints,
                        tls_launch_plan *plan) {
  static const uint64_t FAKE[3] = {1 << 20, 1 << 20, 1 << 20};
  char size[160] = "";
  for (int i = 0, n = 0; i < nints && n >= 0 && (size_t)n < sizeof size; i++)
    n += snprintf(size + n, sizeof size - (size_t)n, "%s%s=%" PRId64, i ? " " : "", names[i],
                  ints[i]);
  for (int i = 0; i < nints; i++) {
    const char *type = tls_kernel_param_type(r->k, param_index(r->k, names[i]));
    if (!fits(type, ints[i])) {
      fprintf(stderr, "tlsrun: %s: %s is not a value of its type %s\n", size, names[i], type);
      return EXIT_REFUSED;
    }
  }
  bind_args(r, names, ints, nints, FAKE);
  if (tls_prepare_launch(r->k, r->args, r->nargs, plan)) {
    fprintf(stderr, "tlsrun: %s: %s\n", size, tls_last_error(r->ctx));
    return EXIT_REFUSED;
  }
  return EXIT_OK;
}

static const char *const MATMUL_NAMES[] = {"m_size", "n_size", "k_size", "a_ptr",
                                           "b_ptr",  "c_ptr",  NULL};
static const char *const MATMUL_SCALED_NAMES[] = {"m_size", "n_size",  "k_size",  "a_ptr", "b_ptr",
                                                  "c_ptr",  "a_scale", "b_scale", NULL};
static const char *const VADD_NAMES[] = {"n", "a_ptr", "b_ptr", "c_ptr", NULL};

/* The element type of pointer parameter `name` ("ptr T"), ET_NONE when
 * absent or of another type. */
static ElemType ptr_elem(const tls_kernel *k, const char *name) {
  int p = param_index(k, name);
  const char *t = p < 0 ? "" : tls_kernel_param_type(k, p);
  return strncmp(t, "ptr ", 4) ? ET_NONE : elem_type(t + 4);
}

/* A matmul entry: m_size n_size k_size a_ptr b_ptr c_ptr [a_scale b_scale],
 * A and B f16 or bf16 (the same) or both fp8, C f16 or bf16; its types and
 * whether it takes scales. */
static bool matmul_shape(const tls_kernel *k, GemmTypes *t, bool *scaled) {
  int n = tls_kernel_num_params(k);
  int as = param_index(k, "a_scale"), bs = param_index(k, "b_scale");
  *scaled = n == 8 && as >= 0 && bs >= 0 && !strcmp(tls_kernel_param_type(k, as), "f32") &&
            !strcmp(tls_kernel_param_type(k, bs), "f32");
  if ((n != 6 && !*scaled) || param_index(k, "m_size") < 0 || param_index(k, "n_size") < 0 ||
      param_index(k, "k_size") < 0)
    return false;
  *t = (GemmTypes){ptr_elem(k, "a_ptr"), ptr_elem(k, "b_ptr"), ptr_elem(k, "c_ptr")};
  bool fp8 = elem_is_fp8(t->a) && elem_is_fp8(t->b);
  bool half = (t->a == ET_F16 || t->a == ET_BF16) && t->a == t->b;
  return (fp8 || half) && (t->c == ET_F16 || t->c == ET_BF16);
}

static const char *const *matmul_names(const Run *r) {
  return r->scaled ? MATMUL_SCALED_NAMES : MATMUL_NAMES;
}

/* "f32" / "f16" for a vector-add entry, NULL otherwise. */
static const char *vadd_dtype(const tls_kernel *k) {
  if (tls_kernel_num_params(k) != 4 || param_index(k, "n") < 0) return NULL;
  const char *t = NULL;
  for (int i = 1; i < 4; i++) {
    int p = param_index(k, VADD_NAMES[i]);
    if (p < 0) return NULL;
    const char *pt = tls_kernel_param_type(k, p);
    if (strcmp(pt, "ptr f32") && strcmp(pt, "ptr f16")) return NULL;
    if (t && strcmp(t, pt)) return NULL;
    t = pt;
  }
  return t + 4;
}

/* The entry that a launch with r->args runs: "NAME", or "RAN (for NAME)"
 * when the chosen entry runs a specialised sibling (tls_kernel_resolve).
 * Valid until the next call. */
static const char *entry_label(const Run *r) {
  static char label[1024];
  const tls_kernel *ran = tls_kernel_resolve(r->k, r->args, r->nargs);
  if (!ran || ran == r->k) return tls_kernel_name(r->k);
  snprintf(label, sizeof label, "%s (for %s)", tls_kernel_name(ran), tls_kernel_name(r->k));
  return label;
}

/* ------------------------------------------------------------ matmul */

static bool launch_entry(void *arg) {
  Run *r = arg;
  r->launch_status = tls_launch(r->k, r->args, r->nargs, r->stream);
  return r->launch_status == TLS_OK;
}

/* Exit 4 when the runtime refused the launch, else 1 (a GPU failure). */
static int failure_code(const Run *r) {
  tls_status st = r->launch_status;
  return st >= TLS_ERR_ARG_COUNT && st <= TLS_ERR_TMAP ? EXIT_REFUSED : EXIT_CHECK;
}

/* C = alpha A . B^T with alpha the product of the scales (1 without). */
static float matmul_alpha(const Run *r) { return r->scaled ? r->scales[0] * r->scales[1] : 1.0f; }

static bool launch_cublas_path(Run *r, CublasPath path) {
  char msg[256];
  if (cublas_gemm(r->cb, path, r->types, (int)r->s.m, (int)r->s.n, (int)r->s.k, matmul_alpha(r),
                  r->a, r->b, r->cref, msg, sizeof msg))
    return true;
  fprintf(stderr, "tlsrun: %s\n", msg);
  return false;
}

static bool launch_cublas(void *arg) { return launch_cublas_path(arg, CUBLAS_PATH_GEMMEX); }
static bool launch_cublas_lt(void *arg) { return launch_cublas_path(arg, CUBLAS_PATH_LT); }
static bool launch_cublas_lt_fast(void *arg) {
  return launch_cublas_path(arg, CUBLAS_PATH_LT_FAST);
}

/* The cuBLAS paths for the entry's types: GemmEx and Lt for f16/bf16, Lt
 * without and with fast accumulation for fp8. The first is the check's
 * reference. */
static int cublas_paths(const Run *r, CublasPath *paths) {
  int n = 0;
  bool fp8 = elem_is_fp8(r->types.a);
  if (!fp8) paths[n++] = CUBLAS_PATH_GEMMEX;
  if (cublas_has_lt(r->cb)) paths[n++] = CUBLAS_PATH_LT;
  if (fp8 && cublas_has_lt(r->cb)) paths[n++] = CUBLAS_PATH_LT_FAST;
  return n;
}

static RunFn cublas_launcher(CublasPath p) {
  return p == CUBLAS_PATH_GEMMEX ? launch_cublas
         : p == CUBLAS_PATH_LT   ? launch_cublas_lt
                                 : launch_cublas_lt_fast;
}

/* Relative error over the given rows of C (all when rows == NULL); C and
 * the cuBLAS reference are of type tc. */
static Compare compare_rows(ElemType tc, const uint16_t *c, const uint16_t *cref16,
                            const double *cref64, int64_t n, const int64_t *rows, int64_t nrows) {
  Compare cmp = {0, 0, 0};
  double diff2 = 0, ref2 = 0;
  for (int64_t r = 0; r < nrows; r++) {
    int64_t row = rows ? rows[r] : r;
    for (int64_t j = 0; j < n; j++) {
      double got = elem_to_float(tc, c[row * n + j]);
      double want = cref64 ? cref64[r * n + j] : elem_to_float(tc, cref16[row * n + j]);
      if (!isfinite(want)) cmp.bad_ref++;
      if (!isfinite(got)) cmp.bad_values++;
      if (!isfinite(got) || !isfinite(want)) continue;
      diff2 += (got - want) * (got - want);
      ref2 += want * want;
    }
  }
  cmp.rel_err = ref2 > 0 ? sqrt(diff2 / ref2) : (diff2 > 0 ? INFINITY : 0);
  return cmp;
}

/* Runs `launch` once into a buffer poisoned with 0xFF (NaN) and downloads
 * it; false with the message printed. */
static bool run_poisoned(Run *r, RunFn launch, uint64_t dst, uint16_t *host, size_t bytes,
                         const char *what) {
  if (tls_mem_set8(r->ctx, dst, 0xFF, bytes) || !launch(r) || tls_synchronize(r->ctx) ||
      tls_mem_download(r->ctx, host, dst, bytes)) {
    fprintf(stderr, "tlsrun: %s failed: %s\n", what, tls_last_error(r->ctx));
    return false;
  }
  return true;
}

/* The float64 host reference (the scales times the product of the decoded
 * inputs) on `nrows` rows spread over M (first and last included),
 * compared with C; the NaN scan covers all of C. */
static Compare host_check(const Run *r, const void *a, const void *b, const uint16_t *c,
                          int64_t nrows) {
  Size s = r->s;
  int64_t rows[HOST_SAMPLE_ROWS];
  if (nrows > s.m) nrows = s.m;
  for (int64_t i = 0; i < nrows; i++) rows[i] = nrows > 1 ? i * (s.m - 1) / (nrows - 1) : 0;
  double *ref64 = malloc((size_t)(nrows * s.n) * sizeof *ref64);
  Compare cmp = {INFINITY, 0, 0};
  if (ref64) {
    host_matmul_rows(a, r->types.a, b, r->types.b, matmul_alpha(r), ref64, s.n, s.k, rows,
                     (int)nrows);
    cmp = compare_rows(r->types.c, c, NULL, ref64, s.n, rows, nrows);
  }
  cmp.bad_values = compare_rows(r->types.c, c, c, NULL, s.n, NULL, s.m).bad_values;
  free(ref64);
  return cmp;
}

/* Runs the entry once and checks C against cuBLAS over all of it (when
 * present: GemmEx for f16/bf16, cuBLASLt for fp8, which GemmEx lacks) and
 * against float64 on the host over sampled rows (always: a cross-check that
 * cuBLAS and the entry are not wrong alike; for fp8 the reference the
 * check is about, the product of the dequantized inputs, on 16 rows). */
static int check_matmul(Run *r, const void *a, const void *b) {
  Size s = r->s;
  size_t c_bytes = (size_t)(s.m * s.n) * 2;
  CublasPath paths[3];
  bool blas_ok = r->cb && cublas_paths(r, paths) > 0;
  uint16_t *c = malloc(c_bytes), *cref = blas_ok ? malloc(c_bytes) : NULL;
  bool ok = c && (cref || !blas_ok);
  if (!ok) fprintf(stderr, "tlsrun: out of host memory\n");
  ok = ok && run_poisoned(r, launch_entry, r->c, c, c_bytes, tls_kernel_name(r->k));
  if (!ok) return free(c), free(cref), failure_code(r);
  if (blas_ok &&
      !run_poisoned(r, cublas_launcher(paths[0]), r->cref, cref, c_bytes, "the cuBLAS reference")) {
    fprintf(stderr, "tlsrun: checking against the host reference alone\n");
    blas_ok = false;
  }
  bool fp8 = elem_is_fp8(r->types.a);
  int64_t sample = blas_ok && !fp8 ? 4 : HOST_SAMPLE_ROWS;
  Compare host = host_check(r, a, b, c, sample), blas = {0, 0, 0};
  printf("check %s M=%" PRId64 " N=%" PRId64 " K=%" PRId64 ":", entry_label(r), s.m, s.n, s.k);
  if (r->types.a != ET_F16 || r->types.c != ET_F16 || r->scaled)
    printf(" %s x %s -> %s, scale %g:", elem_name(r->types.a), elem_name(r->types.b),
           elem_name(r->types.c), (double)matmul_alpha(r));
  printf(" rel_err");
  if (blas_ok) {
    blas = compare_rows(r->types.c, c, cref, NULL, s.n, NULL, s.m);
    printf(" %.3e vs %s,", blas.rel_err, fp8 ? "cuBLASLt fp8" : "cuBLAS");
  }
  printf(" %.3e vs float64 host (%" PRId64 " rows)", host.rel_err, sample < s.m ? sample : s.m);
  bool pass =
      host.bad_values == 0 && blas.bad_ref == 0 && host.rel_err < 1e-2 && blas.rel_err < 1e-2;
  if (host.bad_values) printf(", %" PRId64 " NaN/Inf (unwritten) values", host.bad_values);
  if (blas.bad_ref) printf(", cuBLAS result has %" PRId64 " NaN/Inf", blas.bad_ref);
  printf(": %s\n", pass ? "PASS" : "FAIL");
  free(c), free(cref);
  return pass ? EXIT_OK : EXIT_CHECK;
}

static double tflops(Size s, double ms) {
  return 2.0 * (double)s.m * (double)s.n * (double)s.k / (ms * 1e-3) / 1e12;
}

/* Times the entry and cuBLAS on the same buffers; one line per size. */
static int bench_matmul(Run *r) {
  Row *row = &r->rows[r->nrows++];
  row->s = r->s;
  /* The entry and every cuBLAS path that takes these types (cublasGemmEx
   * and cublasLt for f16/bf16; cublasLt without and with fast
   * accumulation for fp8), interleaved; the fastest cuBLAS path is the
   * baseline. A path that fails once (no algorithm) is left out. */
  CublasPath all[3], paths[3];
  int nall = r->cb ? cublas_paths(r, all) : 0, npaths = 0;
  for (int i = 0; i < nall; i++)
    if (launch_cublas_path(r, all[i]) && !tls_synchronize(r->ctx)) paths[npaths++] = all[i];
  RunFn runs[4] = {launch_entry, NULL, NULL, NULL};
  void *args[4] = {r, r, r, r};
  for (int i = 0; i < npaths; i++) runs[i + 1] = cublas_launcher(paths[i]);
  int nruns = 1 + npaths;
  Timing t[4];
  if (!bench_time_many(r->ctx, r->stream, runs, args, nruns, r->reps, t)) {
    fprintf(stderr, "tlsrun: %s\n", tls_last_error(r->ctx));
    return EXIT_CHECK;
  }
  row->mine = t[0];
  row->have_ref = nruns > 1;
  int best = 1;
  for (int i = 2; i < nruns; i++)
    if (t[i].median_ms < t[best].median_ms) best = i;
  if (row->have_ref) row->ref = t[best], row->ref_name = cublas_path_name(paths[best - 1]);
  printf("bench %s M=%" PRId64 " N=%" PRId64 " K=%" PRId64
         ": tlsc %.3f ms (min %.3f max %.3f) %.1f TFLOPS",
         entry_label(r), r->s.m, r->s.n, r->s.k, row->mine.median_ms, row->mine.min_ms,
         row->mine.max_ms, tflops(r->s, row->mine.median_ms));
  if (row->have_ref)
    printf(" | cuBLAS (%s) %.3f ms (min %.3f max %.3f) %.1f TFLOPS | tlsc/cuBLAS %.3f\n",
           row->ref_name, row->ref.median_ms, row->ref.min_ms, row->ref.max_ms,
           tflops(r->s, row->ref.median_ms), row->ref.median_ms / row->mine.median_ms);
  else
    printf(" | cuBLAS unavailable\n");
  if (r->types.a != ET_F16 && nruns > 1) {
    printf("  cuBLAS paths (%s x %s -> %s):", elem_name(r->types.a), elem_name(r->types.b),
           elem_name(r->types.c));
    for (int i = 1; i < nruns; i++)
      printf(" %s %.3f ms (tlsc/it %.3f)%s", cublas_path_name(paths[i - 1]), t[i].median_ms,
             t[i].median_ms / row->mine.median_ms, i + 1 < nruns ? "," : "\n");
  }
  return EXIT_OK;
}

/* Times every autotune point of the entry's script on these buffers. */
static int autotune_matmul(Run *r) {
  const tls_module *mod = r->mod;
  float ms[256], best_ms = 0;
  const tls_kernel *best = NULL;
  /* tuned as timed: each run after an L2 flush (tlsrun_bench.c) */
  tls_autotune_options opts = {.reps = r->reps, .flush_bytes = BENCH_FLUSH_BYTES};
  if (tls_autotune_ex(mod, tls_kernel_script(r->k), r->args, r->nargs, r->stream, &opts, &best,
                      &best_ms, ms)) {
    fprintf(stderr, "tlsrun: %s\n", tls_last_error(r->ctx));
    return EXIT_CHECK;
  }
  for (int i = 0; i < tls_module_num_kernels(mod) && i < 256; i++) {
    const tls_kernel *k = tls_module_kernel(mod, i);
    const tls_kernel *ran = tls_kernel_resolve(k, r->args, r->nargs);
    char label[1024];
    if (ran && ran != k)
      snprintf(label, sizeof label, "%s (for %s)", tls_kernel_name(ran), tls_kernel_name(k));
    else
      snprintf(label, sizeof label, "%s", tls_kernel_name(k));
    if (ms[i] >= 0)
      printf("autotune %s [%s] M=%" PRId64 " N=%" PRId64 " K=%" PRId64 ": %.3f ms %.1f TFLOPS%s\n",
             label, tls_kernel_config(k), r->s.m, r->s.n, r->s.k, ms[i], tflops(r->s, ms[i]),
             k == best ? "  <- fastest" : "");
  }
  return EXIT_OK;
}

/* count random elements of t, from uniform [-1, 1] rounded to t. */
static void fill_elems(ElemType t, void *h, int64_t count, Rng *rng) {
  for (int64_t i = 0; i < count; i++) elem_store(t, h, i, elem_from_float(t, rng_uniform(rng)));
}

static void free_buffers(Run *r) {
  tls_mem_free(r->ctx, r->a), tls_mem_free(r->ctx, r->b);
  tls_mem_free(r->ctx, r->c), tls_mem_free(r->ctx, r->cref);
  r->a = r->b = r->c = r->cref = 0;
}

/* One size: inputs, then --check and/or --bench (or a single run). */
static int run_matmul(Run *r, const Options *o, Size s) {
  r->s = s;
  int64_t ints[3] = {s.m, s.n, s.k};
  tls_launch_plan plan;
  int rc = prepare_size(r, matmul_names(r), ints, 3, &plan);
  if (rc) return rc;
  size_t a_n = (size_t)(s.m * s.k), b_n = (size_t)(s.n * s.k), c_n = (size_t)(s.m * s.n);
  size_t a_bytes = a_n * (size_t)elem_bytes(r->types.a);
  size_t b_bytes = b_n * (size_t)elem_bytes(r->types.b);
  void *a = malloc(a_bytes), *b = malloc(b_bytes);
  Rng rng;
  rng_seed(&rng, o->seed);
  if (!a || !b) rc = (fprintf(stderr, "tlsrun: out of host memory\n"), EXIT_CHECK);
  if (!rc) {
    fill_elems(r->types.a, a, (int64_t)a_n, &rng);
    fill_elems(r->types.b, b, (int64_t)b_n, &rng);
    if (tls_mem_alloc(r->ctx, &r->a, a_bytes) || tls_mem_alloc(r->ctx, &r->b, b_bytes) ||
        tls_mem_alloc(r->ctx, &r->c, c_n * 2) ||
        (r->cb && tls_mem_alloc(r->ctx, &r->cref, c_n * 2)) ||
        tls_mem_upload(r->ctx, r->a, a, a_bytes) || tls_mem_upload(r->ctx, r->b, b, b_bytes))
      rc = (fprintf(stderr, "tlsrun: %s\n", tls_last_error(r->ctx)), EXIT_CHECK);
  }
  uint64_t real[3] = {r->a, r->b, r->c};
  bind_args(r, matmul_names(r), ints, 3, real);
  if (!rc && o->check) rc = check_matmul(r, a, b);
  if (!rc && o->bench) rc = bench_matmul(r);
  if (!rc && o->autotune) rc = autotune_matmul(r);
  if (!rc && !o->check && !o->bench && !o->autotune) {
    if (!launch_entry(r) || tls_synchronize(r->ctx))
      rc = (fprintf(stderr, "tlsrun: %s\n", tls_last_error(r->ctx)), failure_code(r));
    else
      printf("ran %s M=%" PRId64 " N=%" PRId64 " K=%" PRId64 " grid=%u\n", entry_label(r), s.m, s.n,
             s.k, plan.grid[0]);
  }
  free(a), free(b);
  free_buffers(r);
  return rc;
}

static void print_table(const Run *r) {
  if (r->nrows < 1) return;
  printf("\n| M | N | K | tlsc ms | tlsc TFLOPS | cuBLAS ms | cuBLAS TFLOPS | tlsc/cuBLAS |\n");
  printf("|---|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < r->nrows; i++) {
    const Row *w = &r->rows[i];
    printf("| %" PRId64 " | %" PRId64 " | %" PRId64 " | %.3f | %.1f |", w->s.m, w->s.n, w->s.k,
           w->mine.median_ms, tflops(w->s, w->mine.median_ms));
    if (w->have_ref)
      printf(" %.3f | %.1f | %.3f |\n", w->ref.median_ms, tflops(w->s, w->ref.median_ms),
             w->ref.median_ms / w->mine.median_ms);
    else
      printf(" - | - | - |\n");
  }
}

/* -------------------------------------------------------- vector add */

/* c = a + b over n elements of f32 or f16, checked element by element. */
static int run_vadd(Run *r, const Options *o, const char *dtype, int64_t n) {
  int64_t ints[1] = {n};
  tls_launch_plan plan;
  int rc = prepare_size(r, VADD_NAMES, ints, 1, &plan);
  if (rc) return rc;
  bool half = !strcmp(dtype, "f16");
  size_t esz = half ? 2 : 4, bytes = (size_t)n * esz;
  char *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
  Rng rng;
  rng_seed(&rng, o->seed);
  if (!a || !b || !c) rc = EXIT_CHECK;
  for (int64_t i = 0; !rc && i < n; i++) {
    float x = rng_uniform(&rng), y = rng_uniform(&rng);
    if (half)
      ((uint16_t *)a)[i] = float_to_half(x), ((uint16_t *)b)[i] = float_to_half(y);
    else
      ((float *)a)[i] = x, ((float *)b)[i] = y;
  }
  if (!rc && (tls_mem_alloc(r->ctx, &r->a, bytes) || tls_mem_alloc(r->ctx, &r->b, bytes) ||
              tls_mem_alloc(r->ctx, &r->c, bytes) || tls_mem_upload(r->ctx, r->a, a, bytes) ||
              tls_mem_upload(r->ctx, r->b, b, bytes) || tls_mem_set8(r->ctx, r->c, 0xFF, bytes)))
    rc = EXIT_CHECK;
  uint64_t real[3] = {r->a, r->b, r->c};
  bind_args(r, VADD_NAMES, ints, 1, real);
  if (!rc &&
      (!launch_entry(r) || tls_synchronize(r->ctx) || tls_mem_download(r->ctx, c, r->c, bytes)))
    rc = EXIT_CHECK;
  if (rc) fprintf(stderr, "tlsrun: %s\n", tls_last_error(r->ctx));
  int64_t wrong = 0;
  double worst = 0;
  for (int64_t i = 0; !rc && i < n; i++) {
    double want, got;
    if (half) {
      want = half_to_float(
          float_to_half(half_to_float(((uint16_t *)a)[i]) + half_to_float(((uint16_t *)b)[i])));
      got = half_to_float(((uint16_t *)c)[i]);
    } else {
      want = (double)(((float *)a)[i] + ((float *)b)[i]);
      got = ((float *)c)[i];
    }
    double err = fabs(got - want);
    if (!(err <= 1e-6 * fabs(want))) wrong++; /* also NaN (unwritten) */
    if (err > worst || isnan(err)) worst = err;
  }
  if (!rc && o->check) {
    printf("check %s n=%" PRId64 " (%s): %" PRId64 " wrong elements, max abs error %.3e: %s\n",
           entry_label(r), n, dtype, wrong, worst, wrong ? "FAIL" : "PASS");
    if (wrong) rc = EXIT_CHECK;
  }
  if (!rc && o->bench) {
    Timing t;
    if (!bench_time(r->ctx, r->stream, launch_entry, r, r->reps, &t))
      rc = EXIT_CHECK;
    else
      printf("bench %s n=%" PRId64 ": %.4f ms (min %.4f max %.4f) %.1f GB/s\n", entry_label(r), n,
             t.median_ms, t.min_ms, t.max_ms, 3.0 * (double)bytes / (t.median_ms * 1e-3) / 1e9);
  }
  if (!rc && !o->check && !o->bench) printf("ran %s n=%" PRId64 "\n", entry_label(r), n);
  free(a), free(b), free(c);
  free_buffers(r);
  return rc;
}

/* ------------------------------------------------------------- copy */

static const char *const COPY_NAMES[] = {"m_size", "n_size", "src_ptr", "dst_ptr", NULL};

/* Element size of a copy entry (m_size n_size src_ptr dst_ptr, both
 * pointers f16 or both f32), 0 for any other shape. */
static size_t copy_elem_size(const tls_kernel *k) {
  if (tls_kernel_num_params(k) != 4 || param_index(k, "m_size") < 0 || param_index(k, "n_size") < 0)
    return 0;
  int src = param_index(k, "src_ptr"), dst = param_index(k, "dst_ptr");
  if (src < 0 || dst < 0) return 0;
  const char *st = tls_kernel_param_type(k, src), *dt = tls_kernel_param_type(k, dst);
  if (strcmp(st, dt)) return 0;
  return !strcmp(st, "ptr f16") ? 2 : !strcmp(st, "ptr f32") ? 4 : 0;
}

/* dst = src over an [m, n] matrix (-m, -n), checked byte for byte; dst
 * starts as 0xFF so an unwritten element counts as wrong. */
static int run_copy(Run *r, const Options *o, size_t esz, Size s) {
  int64_t ints[2] = {s.m, s.n};
  tls_launch_plan plan;
  int rc = prepare_size(r, COPY_NAMES, ints, 2, &plan);
  if (rc) return rc;
  size_t count, bytes;
  if (__builtin_mul_overflow((size_t)s.m, (size_t)s.n, &count) ||
      __builtin_mul_overflow(count, esz, &bytes)) {
    fprintf(stderr, "tlsrun: a %" PRId64 " x %" PRId64 " matrix is too large\n", s.m, s.n);
    return EXIT_REFUSED;
  }
  unsigned char *src = malloc(bytes), *dst = malloc(bytes);
  Rng rng;
  rng_seed(&rng, o->seed);
  rc = src && dst ? EXIT_OK : EXIT_CHECK;
  for (size_t i = 0; !rc && i < count; i++) {
    float x = rng_uniform(&rng);
    if (esz == 2)
      ((uint16_t *)src)[i] = float_to_half(x);
    else
      ((float *)src)[i] = x;
  }
  if (!rc && (tls_mem_alloc(r->ctx, &r->a, bytes) || tls_mem_alloc(r->ctx, &r->c, bytes) ||
              tls_mem_upload(r->ctx, r->a, src, bytes) || tls_mem_set8(r->ctx, r->c, 0xFF, bytes)))
    rc = EXIT_CHECK;
  uint64_t real[2] = {r->a, r->c};
  bind_args(r, COPY_NAMES, ints, 2, real);
  if (!rc &&
      (!launch_entry(r) || tls_synchronize(r->ctx) || tls_mem_download(r->ctx, dst, r->c, bytes)))
    rc = failure_code(r);
  if (rc) fprintf(stderr, "tlsrun: %s\n", tls_last_error(r->ctx));
  int64_t wrong = 0;
  for (size_t i = 0; !rc && i < count; i++) wrong += memcmp(src + i * esz, dst + i * esz, esz) != 0;
  if (!rc && o->check) {
    printf("check %s M=%" PRId64 " N=%" PRId64 ": %" PRId64 " wrong elements: %s\n", entry_label(r),
           s.m, s.n, wrong, wrong ? "FAIL" : "PASS");
    if (wrong) rc = EXIT_CHECK;
  }
  if (!rc && o->bench) {
    Timing t;
    if (!bench_time(r->ctx, r->stream, launch_entry, r, r->reps, &t))
      rc = EXIT_CHECK;
    else
      printf("bench %s M=%" PRId64 " N=%" PRId64 ": %.4f ms (min %.4f max %.4f) %.1f GB/s\n",
             entry_label(r), s.m, s.n, t.median_ms, t.min_ms, t.max_ms,
             2.0 * (double)bytes / (t.median_ms * 1e-3) / 1e9);
  }
  if (!rc && !o->check && !o->bench)
    printf("ran %s M=%" PRId64 " N=%" PRId64 "\n", entry_label(r), s.m, s.n);
  free(src), free(dst);
  free_buffers(r);
  return rc;
}

/* ---------------------------------------------------------------- main */

/* --kernel names an entry, or (with --config or --autotune) a script; an
 * entry alone in its file needs neither. */
static const tls_kernel *pick_kernel(tls_module *mod, const Options *o) {
  if (o->config) {
    const char *script = o->kernel ? o->kernel : tls_kernel_script(tls_module_kernel(mod, 0));
    return tls_kernel_find_config(mod, script, o->config);
  }
  if (o->kernel) {
    const tls_kernel *k = tls_kernel_find(mod, o->kernel);
    return k || !o->autotune ? k : tls_kernel_find_config(mod, o->kernel, "");
  }
  if (tls_module_num_kernels(mod) == 1 || o->autotune) return tls_module_kernel(mod, 0);
  fprintf(stderr, "tlsrun: the file has %d entries: name one with --kernel (see --list)\n",
          tls_module_num_kernels(mod));
  return NULL;
}

static int run_entry(Run *r, const Options *o) {
  const char *vdt = vadd_dtype(r->k);
  size_t copy_esz = copy_elem_size(r->k);
  char msg[256] = "";
  if (vdt) return run_vadd(r, o, vdt, o->sizes[0].n);
  if (copy_esz) return run_copy(r, o, copy_esz, o->sizes[0]);
  if (!matmul_shape(r->k, &r->types, &r->scaled)) return EXIT_USAGE; /* check_offline said why */
  r->scales[0] = 0.75f, r->scales[1] = 1.5f;
  r->cb = cublas_open(r->ctx, r->stream, msg, sizeof msg);
  if (!r->cb) fprintf(stderr, "tlsrun: no cuBLAS (%s): using the host reference\n", msg);
  int rc = EXIT_OK;
  for (int i = 0; i < o->nsizes && !rc; i++) rc = run_matmul(r, o, o->sizes[i]);
  if (!rc && o->bench) print_table(r);
  cublas_close(r->cb);
  return rc;
}

/* The entry's shape, and every size it will run at, against the metadata:
 * EXIT_OK, or the exit status with the reason printed. */
static int check_sizes(Run *r, const Options *o) {
  tls_launch_plan plan;
  int rc = EXIT_OK;
  if (matmul_shape(r->k, &r->types, &r->scaled)) {
    for (int i = 0; i < o->nsizes && !rc; i++) {
      int64_t ints[3] = {o->sizes[i].m, o->sizes[i].n, o->sizes[i].k};
      rc = prepare_size(r, matmul_names(r), ints, 3, &plan);
    }
    return rc;
  }
  if (vadd_dtype(r->k)) return prepare_size(r, VADD_NAMES, &o->sizes[0].n, 1, &plan);
  if (copy_elem_size(r->k)) {
    int64_t ints[2] = {o->sizes[0].m, o->sizes[0].n};
    return prepare_size(r, COPY_NAMES, ints, 2, &plan);
  }
  fprintf(stderr,
          "tlsrun: entry '%s' has no shape tlsrun knows (matmul: m_size n_size k_size a_ptr b_ptr "
          "c_ptr [a_scale b_scale], A and B f16, bf16 or fp8, C f16 or bf16; vector add: n a_ptr "
          "b_ptr c_ptr over f32/f16; copy: m_size n_size "
          "src_ptr dst_ptr over f32/f16)\n",
          tls_kernel_name(r->k));
  return EXIT_USAGE;
}

/* Everything that needs no GPU, on an offline context, before the driver
 * is opened: the file (read and parsed), the entry, its shape and every
 * size. EXIT_OK with the entry's index in the file, or the exit status
 * with the reason printed. */
static int check_offline(const Options *o, int *index) {
  static Run r; /* large: rows of timings */
  tls_module *mod;
  if (tls_init_offline(&r.ctx)) {
    fprintf(stderr, "tlsrun: out of memory\n");
    return EXIT_CHECK;
  }
  if (tls_module_load_file(r.ctx, o->file, &mod)) {
    fprintf(stderr, "tlsrun: %s\n", tls_last_error(r.ctx));
    tls_context_free(r.ctx);
    return EXIT_USAGE;
  }
  r.mod = mod;
  r.k = pick_kernel(mod, o);
  int rc = EXIT_USAGE;
  if (!r.k && (o->kernel || o->config)) fprintf(stderr, "tlsrun: %s\n", tls_last_error(r.ctx));
  if (r.k) rc = check_sizes(&r, o);
  for (int i = 0; i < tls_module_num_kernels(mod); i++)
    if (tls_module_kernel(mod, i) == r.k) *index = i;
  tls_module_free(mod);
  tls_context_free(r.ctx);
  return rc;
}

int main(int argc, char **argv) {
  Options o;
  if (!parse_options(argc, argv, &o)) {
    fprintf(stderr, "tlsrun: error: %s\n", option_error);
    usage(stderr);
    return EXIT_USAGE;
  }
  if (o.help) {
    help();
    return 0;
  }
  if (o.probe) return probe();
  if (o.list) return list_entries(&o);
  int index = -1;
  int rc = check_offline(&o, &index);
  if (rc) return rc;
  static Run r; /* large: rows of timings */
  r.reps = o.reps;
  tls_status st = tls_init(0, &r.ctx);
  if (st) {
    fprintf(stderr, "tlsrun: %s\n", tls_last_error(r.ctx));
    tls_context_free(r.ctx);
    return st == TLS_ERR_NO_DRIVER || st == TLS_ERR_NO_DEVICE ? EXIT_NO_GPU : EXIT_CHECK;
  }
  tls_module *mod;
  if (tls_module_load_file(r.ctx, o.file, &mod)) {
    fprintf(stderr, "tlsrun: %s\n", tls_last_error(r.ctx));
    tls_context_free(r.ctx);
    return EXIT_USAGE;
  }
  r.mod = mod;
  r.k = tls_module_kernel(mod, index);
  rc = EXIT_CHECK;
  if (r.k && bench_setup(r.ctx, &r.stream)) {
    fprintf(stderr, "tlsrun: %s on %s (%s), compiled by %s\n", tls_kernel_name(r.k),
            tls_context_device_name(r.ctx), tls_context_arch(r.ctx), tls_module_compiled_by(mod));
    rc = run_entry(&r, &o);
  } else {
    fprintf(stderr, "tlsrun: %s\n", r.k ? tls_last_error(r.ctx) : "the file changed under tlsrun");
  }
  bench_teardown(r.ctx, r.stream);
  tls_module_free(mod);
  tls_context_free(r.ctx);
  return rc;
}
