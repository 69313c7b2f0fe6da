/* test_specialize.c: specialised entries in libtlsrt, on the CPU (an offline
 * context): the `fixed` metadata line and its refusals, which entry a launch
 * of each entry runs (tls_kernel_resolve, tls_prepare_launch, tls_launch),
 * the refusal of a specialised entry launched with other values, and the
 * lookups that skip specialised entries. Usage: test_specialize DATA_DIR
 * (data/specialized.ptx; its comment lists the entries); and the lookups
 * and launches of tlsc's register-allocation variants (NAME__occupancy). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/tlsrt.h"
#include "tests/unit.h"

static const char *V = "MatmulWGMMAV5";

/* A matmul argument array: sizes, then three 256-byte-aligned pointers. */
static void matmul_args(tls_arg *a, int32_t m, int32_t n, int32_t k) {
  a[0] = tls_i32(m), a[1] = tls_i32(n), a[2] = tls_i32(k);
  a[3] = tls_ptr(0x100000), a[4] = tls_ptr(0x200000), a[5] = tls_ptr(0x300000);
}

static const char *name_or_null(const tls_kernel *k) { return k ? tls_kernel_name(k) : "(null)"; }

/* Which entry a launch of `launched` runs for these sizes: `want`. */
static void expect_resolve(const tls_module *mod, const char *launched, int32_t m, int32_t n,
                           int32_t k, const char *want) {
  tls_arg a[6];
  matmul_args(a, m, n, k);
  const tls_kernel *from = tls_kernel_find(mod, launched);
  const tls_kernel *ran = from ? tls_kernel_resolve(from, a, 6) : NULL;
  CHECK(ran && !strcmp(tls_kernel_name(ran), want), "%s at %dx%dx%d runs %s, want %s", launched, m,
        n, k, name_or_null(ran), want);
}

/* A launch of `launched` with these sizes is refused, naming `needle`. */
static void expect_refused(tls_context *ctx, const tls_module *mod, const char *launched, int32_t m,
                           int32_t n, int32_t k, const char *needle) {
  tls_arg a[6];
  matmul_args(a, m, n, k);
  const tls_kernel *from = tls_kernel_find(mod, launched);
  CHECK(from && !tls_kernel_resolve(from, a, 6) && strstr(tls_last_error(ctx), needle),
        "resolve %s at %dx%dx%d: want a refusal with '%s', got '%s'", launched, m, n, k, needle,
        tls_last_error(ctx));
  tls_launch_plan plan;
  tls_status st = from ? tls_prepare_launch(from, a, 6, &plan) : TLS_ERR_INVALID;
  CHECK(st == TLS_ERR_ARG_VALUE && strstr(tls_last_error(ctx), needle),
        "prepare %s at %dx%dx%d: want TLS_ERR_ARG_VALUE with '%s', got %s '%s'", launched, m, n, k,
        needle, tls_error_string(st), tls_last_error(ctx));
}

static void test_lookup(const tls_module *mod) {
  CHECK(tls_module_num_kernels(mod) == 7, "seven entries, got %d", tls_module_num_kernels(mod));
  const tls_kernel *g = tls_kernel_find(mod, V);
  CHECK(g && !strcmp(tls_kernel_fixed(g), ""), "the generic entry fixes nothing");
  const tls_kernel *nk = tls_kernel_find(mod, "MatmulWGMMAV5__n_size_8192__k_size_8192");
  CHECK(nk && !strcmp(tls_kernel_fixed(nk), "n_size=8192 k_size=8192"), "fixed text: '%s'",
        nk ? tls_kernel_fixed(nk) : "");
  CHECK(tls_kernel_find_config(mod, V, "num_stages=4") == g,
        "find_config picks the generic entry, not a specialised one");
  CHECK(tls_kernel_find_config(mod, V, "") == g, "the first entry of the script is the generic");
  const tls_kernel *s3 = tls_kernel_find_config(mod, V, "num_stages=3");
  CHECK(s3 && !strcmp(tls_kernel_name(s3), "MatmulWGMMAV5_s3"), "3 stages: %s", name_or_null(s3));
  const tls_kernel *fixed = tls_kernel_find_config(mod, "Fixed", "");
  CHECK(fixed && !strcmp(tls_kernel_name(fixed), "Fixed"),
        "an entry with no generic sibling (-D) is found by its script");
}

/* The entry fixing the most parameters whose values the arguments have;
 * the first in the file among equals; only siblings of one autotune point. */
static void test_selection(const tls_module *mod) {
  expect_resolve(mod, V, 8192, 8192, 8192, "MatmulWGMMAV5__n_size_8192__k_size_8192");
  expect_resolve(mod, V, 1000, 8192, 8192, "MatmulWGMMAV5__n_size_8192__k_size_8192");
  /* n_size=8192 and k_size=4096 each fix one: the first in the file. */
  expect_resolve(mod, V, 8192, 8192, 4096, "MatmulWGMMAV5__n_size_8192");
  expect_resolve(mod, V, 8192, 8192, 1032, "MatmulWGMMAV5__n_size_8192");
  expect_resolve(mod, V, 1000, 1016, 4096, "MatmulWGMMAV5__k_size_4096");
  expect_resolve(mod, V, 1000, 1016, 1032, V);
  expect_resolve(mod, V, 8192, 1016, 8192, V);
  /* The 3-stage point has its own specialised entry. */
  expect_resolve(mod, "MatmulWGMMAV5_s3", 8192, 8192, 8192,
                 "MatmulWGMMAV5_s3__n_size_8192__k_size_8192");
  expect_resolve(mod, "MatmulWGMMAV5_s3", 8192, 8192, 4096, "MatmulWGMMAV5_s3");
  /* A specialised entry launched directly runs itself, or a sibling that
   * fixes its values and more. */
  expect_resolve(mod, "MatmulWGMMAV5__n_size_8192", 8192, 8192, 1032, "MatmulWGMMAV5__n_size_8192");
  expect_resolve(mod, "MatmulWGMMAV5__n_size_8192", 8192, 8192, 8192,
                 "MatmulWGMMAV5__n_size_8192__k_size_8192");
  expect_resolve(mod, "MatmulWGMMAV5__k_size_4096", 8192, 8192, 4096, "MatmulWGMMAV5__k_size_4096");
  expect_resolve(mod, "Fixed", 1000, 8192, 8192, "Fixed");
}

static void test_refusals(tls_context *ctx, const tls_module *mod) {
  expect_refused(ctx, mod, "MatmulWGMMAV5__n_size_8192__k_size_8192", 1000, 1016, 1032,
                 "launch of 'MatmulWGMMAV5__n_size_8192__k_size_8192' refused: argument 1 "
                 "(n_size) is 1016 but the entry is compiled for n_size=8192 (fixed n_size=8192 "
                 "k_size=8192); launch 'MatmulWGMMAV5', the generic entry, for other values");
  expect_refused(ctx, mod, "MatmulWGMMAV5__n_size_8192__k_size_8192", 1000, 8192, 4096,
                 "argument 2 (k_size) is 4096 but the entry is compiled for k_size=8192");
  expect_refused(ctx, mod, "Fixed", 8192, 8192, 1032,
                 "argument 2 (k_size) is 1032 but the entry is compiled for k_size=8192 (fixed "
                 "n_size=8192 k_size=8192); the file has no entry for other values");
  /* Wrong count or types: refused as a launch would be. */
  const tls_kernel *g = tls_kernel_find(mod, V);
  tls_arg a[6];
  matmul_args(a, 8192, 8192, 8192);
  CHECK(!tls_kernel_resolve(g, a, 5) && strstr(tls_last_error(ctx), "it takes 6 arguments"),
        "resolve with 5 arguments: %s", tls_last_error(ctx));
  a[1] = tls_i64(8192);
  CHECK(!tls_kernel_resolve(g, a, 6) && strstr(tls_last_error(ctx), "must be i32, got i64"),
        "resolve with an i64 size: %s", tls_last_error(ctx));
  /* Pointers are not read: a caller may ask before allocating. */
  matmul_args(a, 8192, 8192, 8192);
  a[3] = a[4] = a[5] = tls_ptr(0);
  const tls_kernel *ran = tls_kernel_resolve(g, a, 6);
  CHECK(ran && !strcmp(tls_kernel_name(ran), "MatmulWGMMAV5__n_size_8192__k_size_8192"),
        "resolve with null pointers: %s", name_or_null(ran));
  CHECK(!tls_kernel_resolve(NULL, a, 6), "resolve(NULL)");
}

/* The plan is the specialised entry's (its constant grid and maps), and an
 * offline launch names the entry it would have run. */
static void test_plan(tls_context *ctx, const tls_module *mod) {
  const tls_kernel *g = tls_kernel_find(mod, V);
  tls_arg a[6];
  tls_launch_plan plan;
  matmul_args(a, 4096, 8192, 8192);
  CHECK(tls_prepare_launch(g, a, 6, &plan) == TLS_OK, "prepare: %s", tls_last_error(ctx));
  CHECK(plan.grid[0] == 32 * 32 && plan.tmaps[1].dims[0] == 8192 && plan.tmaps[1].dims[1] == 8192,
        "plan of the specialised entry: grid %u, b dims %llu x %llu", plan.grid[0],
        (unsigned long long)plan.tmaps[1].dims[0], (unsigned long long)plan.tmaps[1].dims[1]);
  CHECK(tls_launch(g, a, 6, NULL) == TLS_ERR_NO_DEVICE &&
            strstr(tls_last_error(ctx),
                   "launch of 'MatmulWGMMAV5__n_size_8192__k_size_8192' refused: the context "
                   "has no GPU"),
        "offline launch: %s", tls_last_error(ctx));
  matmul_args(a, 1000, 1016, 1032);
  CHECK(tls_prepare_launch(g, a, 6, &plan) == TLS_OK && plan.grid[0] == 8 * 4,
        "generic plan: grid %u (%s)", plan.grid[0], tls_last_error(ctx));
  CHECK(tls_launch(g, a, 6, NULL) == TLS_ERR_NO_DEVICE &&
            strstr(tls_last_error(ctx), "launch of 'MatmulWGMMAV5' refused"),
        "offline generic launch: %s", tls_last_error(ctx));
}

/* One metadata block (entries with empty bodies appended) refused with
 * `needle` in the message. */
static void expect_format_error(tls_context *ctx, const char *meta, const char *needle,
                                const char *what) {
  char text[4096];
  snprintf(text, sizeof text,
           "%s.version 8.0\n.target sm_90a\n.entry K(\n.param .u32 K_param_n,\n"
           ".param .u64 K_param_p\n)\n{\nret;\n}\n",
           meta);
  tls_module *mod = NULL;
  tls_status st = tls_module_load_string(ctx, text, "fixed", &mod);
  CHECK(st == TLS_ERR_FORMAT && strstr(tls_last_error(ctx), needle), "%s: got %s '%s'", what,
        tls_error_string(st), tls_last_error(ctx));
  tls_module_free(mod);
}

static void test_format(tls_context *ctx) {
  const char *head = "//@tls version 1\n//@tls entry K script=K block=32 smem=0\n";
  const char *params = "//@tls param n i32\n//@tls param p ptr f32\n//@tls grid n 1 1\n";
  char meta[1024];
  struct {
    const char *fixed, *needle;
  } cases[] = {
      {"//@tls fixed n=5\n//@tls fixed n=5\n", "fixed:4: error: second 'fixed' line in entry 'K' "
                                               "(line 3 has the first)"},
      {"//@tls fixed\n", "fixed:3: error: 'fixed' needs NAME=VALUE fields"},
      {"//@tls fixed n\n", "fixed field 'n' is not NAME=VALUE"},
      {"//@tls fixed n=\n", "fixed field 'n=' is not NAME=VALUE"},
      {"//@tls fixed 9=1\n", "fixed field '9=1' is not NAME=VALUE"},
      {"//@tls fixed q=1\n", "fixed:3: error: 'fixed' names 'q', which is not a parameter of "
                             "entry 'K'"},
      {"//@tls fixed p=1\n", "'fixed' names 'p', a ptr f32 parameter (only integer parameters "
                             "can be fixed)"},
      {"//@tls fixed n=2147483648\n", "'fixed' value of 'n' must be an integer of its type i32, "
                                      "not '2147483648'"},
      {"//@tls fixed n=0x10\n", "'fixed' value of 'n' must be an integer of its type i32"},
      {"//@tls fixed n=1 n=1\n", "'fixed' names 'n' twice"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(meta, sizeof meta, "%s%s%s//@tls end\n", head, cases[i].fixed, params);
    expect_format_error(ctx, meta, cases[i].needle, cases[i].fixed);
  }
  expect_format_error(ctx, "//@tls version 1\n//@tls fixed n=1\n", "'fixed' outside an entry",
                      "fixed before any entry");
  /* Accepted: after the parameters too, and at the type's limits. */
  snprintf(meta, sizeof meta, "%s%s//@tls fixed n=-2147483648\n//@tls end\n", head, params);
  char text[2048];
  snprintf(text, sizeof text,
           "%s.version 8.0\n.target sm_90a\n.entry K(\n.param .u32 K_param_n,\n"
           ".param .u64 K_param_p\n)\n{\nret;\n}\n",
           meta);
  tls_module *mod = NULL;
  CHECK(tls_module_load_string(ctx, text, "fixed", &mod) == TLS_OK, "fixed after params: %s",
        tls_last_error(ctx));
  const tls_kernel *k = mod ? tls_kernel_find(mod, "K") : NULL;
  CHECK(k && !strcmp(tls_kernel_fixed(k), "n=-2147483648"), "fixed text at INT32_MIN");
  tls_module_free(mod);
}

/* Siblings must share the parameter list: an entry of the same script and
 * config with other parameters is not a specialisation of it. */
static void test_signature(tls_context *ctx) {
  const char *text = "//@tls version 1\n"
                     "//@tls entry A script=S block=32 smem=0\n//@tls config w=1\n"
                     "//@tls param n i32\n//@tls grid n 1 1\n"
                     "//@tls entry B script=S block=32 smem=0\n//@tls config w=1\n"
                     "//@tls fixed m=4\n//@tls param m i32\n//@tls grid 4 1 1\n"
                     "//@tls entry C script=S block=32 smem=0\n//@tls config w=2\n"
                     "//@tls fixed n=4\n//@tls param n i32\n//@tls grid 4 1 1\n"
                     "//@tls entry D script=S block=32 smem=0\n//@tls config w=1\n"
                     "//@tls fixed n=4\n//@tls param n i32\n//@tls grid 4 1 1\n"
                     "//@tls end\n.version 8.0\n.target sm_90a\n"
                     ".entry A(.param .u32 A_param_n)\n{\nret;\n}\n"
                     ".entry B(.param .u32 B_param_m)\n{\nret;\n}\n"
                     ".entry C(.param .u32 C_param_n)\n{\nret;\n}\n"
                     ".entry D(.param .u32 D_param_n)\n{\nret;\n}\n";
  tls_module *mod = NULL;
  CHECK(tls_module_load_string(ctx, text, "siblings", &mod) == TLS_OK, "siblings: %s",
        tls_last_error(ctx));
  if (!mod) return;
  tls_arg n4 = tls_i32(4);
  const tls_kernel *ran = tls_kernel_resolve(tls_kernel_find(mod, "A"), &n4, 1);
  CHECK(ran && !strcmp(tls_kernel_name(ran), "D"),
        "A with n=4 runs D (not B: other parameters; "
        "not C: another config), got %s",
        name_or_null(ran));
  tls_module_free(mod);
}

/* tlsc's register-allocation variants (NAME__occupancy, config
 * registers=occupancy, `occupancy NAME`: backend_ptx/emit.c), read without
 * a GPU: a lookup without the key finds the entry, with it the variant,
 * and each launches its own specialised sibling. */
static void test_occupancy_variants(tls_context *ctx) {
  static const char *const names[4] = {"A", "A__occupancy", "A__n_4", "A__n_4__occupancy"};
  char text[4096] = "//@tls version 1\n", *p = text + strlen(text);
  for (int i = 0; i < 4; i++)
    p += sprintf(p,
                 "//@tls entry %s script=S block=32 smem=0\n//@tls config w=1%s\n%s%s%s%s"
                 "//@tls param n i32\n//@tls grid n 1 1\n",
                 names[i], i % 2 ? " registers=occupancy" : "", i >= 2 ? "//@tls fixed n=4\n" : "",
                 i % 2 ? "//@tls occupancy " : "", i % 2 ? names[i - 1] : "", i % 2 ? "\n" : "");
  p += sprintf(p, "//@tls end\n.version 8.0\n.target sm_90a\n");
  for (int i = 0; i < 4; i += 2) /* the variants' code is built from these at load */
    p += sprintf(p,
                 ".visible .entry %s(\n.param .u32 %s_param_n\n)\n.maxntid 32, 1, 1\n"
                 ".minnctapersm 1\n{\nret;\n}\n",
                 names[i], names[i]);
  tls_module *mod = NULL;
  CHECK(tls_module_load_string(ctx, text, "occupancy", &mod) == TLS_OK, "occupancy: %s",
        tls_last_error(ctx));
  if (!mod) return;
  const tls_kernel *a = tls_kernel_find_config(mod, "S", "w=1");
  const tls_kernel *v = tls_kernel_find_config(mod, "S", "w=1,registers=occupancy");
  CHECK(a && !strcmp(tls_kernel_name(a), "A"), "w=1 finds A, got %s", name_or_null(a));
  CHECK(v && !strcmp(tls_kernel_name(v), "A__occupancy"), "the variant, got %s", name_or_null(v));
  tls_arg n4 = tls_i32(4), n5 = tls_i32(5);
  const tls_kernel *ran = a ? tls_kernel_resolve(a, &n4, 1) : NULL;
  CHECK(ran && !strcmp(tls_kernel_name(ran), "A__n_4"), "A with n=4 runs A__n_4, got %s",
        name_or_null(ran));
  ran = v ? tls_kernel_resolve(v, &n4, 1) : NULL;
  CHECK(ran && !strcmp(tls_kernel_name(ran), "A__n_4__occupancy"),
        "the variant with n=4 runs its own sibling, got %s", name_or_null(ran));
  ran = v ? tls_kernel_resolve(v, &n5, 1) : NULL;
  CHECK(ran && !strcmp(tls_kernel_name(ran), "A__occupancy"), "the variant with n=5, got %s",
        name_or_null(ran));
  tls_module_free(mod);
}

int main(int argc, char **argv) {
  if (argc != 2) return fprintf(stderr, "usage: test_specialize DATA_DIR\n"), 2;
  char path[1024];
  snprintf(path, sizeof path, "%s/specialized.ptx", argv[1]);
  tls_context *ctx;
  tls_init_offline(&ctx);
  tls_module *mod = NULL;
  tls_status st = tls_module_load_file(ctx, path, &mod);
  CHECK(st == TLS_OK, "loading %s: %s", path, tls_last_error(ctx));
  if (mod) {
    test_lookup(mod);
    test_selection(mod);
    test_refusals(ctx, mod);
    test_plan(ctx, mod);
  }
  tls_module_free(mod);
  test_format(ctx);
  test_signature(ctx);
  test_occupancy_variants(ctx);
  tls_context_free(ctx);
  printf("%d checks, %d failures\n", checks, failures);
  return failures != 0;
}
