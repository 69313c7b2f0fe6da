/* test_runtime.c: libtlsrt on the CPU: the expression evaluator, the
 * metadata of a two-entry file, launch preparation (grid and tensor maps),
 * each refused launch with its status and message, and the "no driver"
 * path. Usage: test_runtime DATA_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"
#include "runtime/tlsrt.h"
#include "tests/runtime/expr_check.h"
#include "tests/unit.h"

static const char *data_dir;

/* ------------------------------------------------------------ expressions */

#define PARENS_OPEN                                                                                \
  "(((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((("
#define PARENS_CLOSE                                                                               \
  "))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))"

static void test_expressions(void) {
  expect_value("1+2*3", 0, 0, 7);
  expect_value("(1+2)*3", 0, 0, 9);
  expect_value("10-4-3", 0, 0, 3);
  expect_value("-7/2", 0, 0, -3); /* truncates like C */
  expect_value("-7%3", 0, 0, -1);
  expect_value("--5", 0, 0, 5);
  expect_value("((m+127)/128)*((n+255)/256)", 4096, 4096, 512);
  expect_value("((m+127)/128)*((n+255)/256)", 1000, 1016, 32);
  expect_value("min(m,n)+max(m,n)", 3, 9, 12);
  expect_value("max(min(m,4),2)", 9, 0, 4);
  expect_value("n*2", 8192, 4000000000ll, 8000000000ll);
  expect_error("m/0", 1, 0, "division by zero");
  expect_error("m%(n-n)", 1, 5, "division by zero");
  expect_error("n*n*n", 0, 3000000, "overflow");
  expect_error("n+n", 0, INT64_MAX, "overflow");
  expect_error("-n", 0, INT64_MIN, "overflow");
  expect_error("n/-1", 0, INT64_MIN, "overflow");
  expect_error("q+1", 0, 0, "unknown parameter 'q'");
  expect_error("p+1", 0, 0, "parameter 'p' is not an integer");
  expect_error("(m+1", 0, 0, "expected ')'");
  expect_error("m+", 0, 0, "expression ends early");
  expect_error("m$2", 0, 0, "unexpected character '$'");
  expect_error("min(m)", 0, 0, "expected ','");
  expect_error("", 0, 0, "empty expression");
  expect_error("99999999999999999999", 0, 0, "too large");
  /* 80 levels of nesting parse (one per parenthesis and unary operator:
   * runtime/expr.c), 81 do not. */
  char deep[256];
  snprintf(deep, sizeof deep, "%.79s1%.79s", PARENS_OPEN, PARENS_CLOSE);
  expect_value(deep, 0, 0, 1);
  snprintf(deep, sizeof deep, "%.80s1%.80s", PARENS_OPEN, PARENS_CLOSE);
  expect_error(deep, 0, 0, "nested too deeply");
}

/* ------------------------------------------------------------ metadata */

static tls_module *load(tls_context *ctx, const char *file) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", data_dir, file);
  tls_module *mod = NULL;
  tls_status st = tls_module_load_file(ctx, path, &mod);
  CHECK(st == TLS_OK, "loading %s: %s", file, tls_last_error(ctx));
  return mod;
}

static void test_metadata(tls_context *ctx, tls_module *mod) {
  CHECK(tls_module_num_kernels(mod) == 2, "two entries");
  const tls_kernel *k = tls_kernel_find(mod, "MatmulWGMMAV5");
  CHECK(k && tls_kernel_block(k) == 288 && tls_kernel_smem(k) == 197664, "entry fields");
  CHECK(k && tls_kernel_num_params(k) == 6 && tls_kernel_num_tmaps(k) == 2, "params and tmaps");
  CHECK(k && !strcmp(tls_kernel_param_type(k, 3), "ptr f16"), "param type text");
  /* a_ptr (3) and b_ptr (4) feed tensor maps 0 and 1; c_ptr and m_size none */
  CHECK(k && tls_kernel_param_tmap(k, 3) == 0 && tls_kernel_param_tmap(k, 4) == 1 &&
            tls_kernel_param_tmap(k, 5) == -1 && tls_kernel_param_tmap(k, 0) == -1 &&
            tls_kernel_param_tmap(k, 6) == -1 && tls_kernel_param_tmap(k, -1) == -1,
        "the parameters of the tensor maps");
  const tls_kernel *s3 = tls_kernel_find_config(mod, "MatmulWGMMAV5", "num_stages=3");
  CHECK(s3 && !strcmp(tls_kernel_name(s3), "MatmulWGMMAV5_s3"), "lookup by script + config");
  CHECK(tls_kernel_find_config(mod, "MatmulWGMMAV5", "block_k=64,num_stages=4") == k,
        "config subset, any order");
  CHECK(!tls_kernel_find_config(mod, "MatmulWGMMAV5", "num_stages=5"), "no such config");
  CHECK(!tls_kernel_find(mod, "Nope") && strstr(tls_last_error(ctx), "no entry named 'Nope'"),
        "unknown name: %s", tls_last_error(ctx));
  CHECK(!tls_kernel_find_config(mod, "MatmulWGMMAV5", "num_stages=44"),
        "num_stages=44 is not num_stages=4");
}

/* The same file given as a string. */
static void test_load_string(tls_context *ctx) {
  tls_module *mod = NULL;
  CHECK(tls_module_load_string(
            ctx,
            "//@tls version 1\n//@tls entry K script=S block=64 smem=0\n//@tls grid 1 1 1\n"
            "//@tls end\n.version 8.0\n.target sm_90a\n.entry K()\n{\nret;\n}\n",
            "inline", &mod) == TLS_OK,
        "load_string: %s", tls_last_error(ctx));
  CHECK(mod && tls_module_num_kernels(mod) == 1, "one entry from a string");
  tls_module_free(mod);
  CHECK(tls_module_load_string(ctx, "//@tls version 1\n//@tls entry K script=S block=64 smem=0\n",
                               "cut", &mod) == TLS_ERR_FORMAT &&
            strstr(tls_last_error(ctx), "cut:"),
        "string cut short: %s", tls_last_error(ctx));
}

/* A file of n trivial entries K0 ... (metadata, then PTX). */
static char *many_entries(int n) {
  size_t cap = (size_t)n * 160 + 256, len = 0;
  char *text = malloc(cap);
  if (!text) return NULL;
  len += (size_t)snprintf(text + len, cap - len, "//@tls version 1\n");
  for (int i = 0; i < n; i++)
    len += (size_t)snprintf(text + len, cap - len,
                            "//@tls entry K%d script=S block=32 smem=0\n//@tls grid 1 1 1\n", i);
  len += (size_t)snprintf(text + len, cap - len, "//@tls end\n.version 8.0\n.target sm_90a\n");
  for (int i = 0; i < n; i++)
    len += (size_t)snprintf(text + len, cap - len, ".entry K%d()\n{\nret;\n}\n", i);
  return text;
}

/* At most 2048 entries a file (tlsc writes no more): Tilus's Ampere v5 as
 * shipped is 384; one more than the limit is refused at its line. */
static void test_entry_limit(tls_context *ctx) {
  char *ok = many_entries(2048), *over = many_entries(2049);
  CHECK(ok && over);
  if (!ok || !over) return;
  tls_module *mod = NULL;
  CHECK(tls_module_load_string(ctx, ok, "many", &mod) == TLS_OK, "2048 entries: %s",
        tls_last_error(ctx));
  CHECK(mod && tls_module_num_kernels(mod) == 2048, "2048 entries loaded");
  tls_module_free(mod);
  mod = NULL;
  CHECK(tls_module_load_string(ctx, over, "many", &mod) == TLS_ERR_FORMAT && !mod &&
            strstr(tls_last_error(ctx), "many:4098: error: too many entries (at most 2048)"),
        "2049 entries: %s", tls_last_error(ctx));
  free(ok);
  free(over);
}

/* Every prefix of matmul.ptx that ends before its last '}' is refused as a
 * broken file (never loaded, never a crash: the ASan build reads it too). */
static void test_every_truncation(tls_context *ctx) {
  char path[1024];
  snprintf(path, sizeof path, "%s/matmul.ptx", data_dir);
  FILE *f = fopen(path, "rb");
  CHECK(f != NULL, "open %s", path);
  if (!f) return;
  static char text[1 << 16];
  size_t len = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  size_t complete = len;
  while (complete > 0 && text[complete - 1] != '}') complete--;
  int accepted = 0;
  for (size_t cut = 0; cut < complete; cut++) {
    char saved = text[cut];
    text[cut] = 0;
    tls_module *mod = NULL;
    tls_status st = tls_module_load_string(ctx, text, "cut", &mod);
    if (st != TLS_ERR_FORMAT || mod) accepted++;
    tls_module_free(mod);
    text[cut] = saved;
  }
  CHECK(complete > 0 && accepted == 0, "%d of %zu truncations were not refused as TLS_ERR_FORMAT",
        accepted, complete);
}

/* -------------------------------------------------------------- launch */

enum { A = 0x10000, B = 0x20000, C = 0x30000 };

static void set_args(tls_arg *args, int64_t m, int64_t n, int64_t k) {
  args[0] = tls_i32((int32_t)m), args[1] = tls_i32((int32_t)n), args[2] = tls_i32((int32_t)k);
  args[3] = tls_ptr(A), args[4] = tls_ptr(B), args[5] = tls_ptr(C);
}

static void test_plan(const tls_kernel *k) {
  tls_arg args[6];
  tls_launch_plan plan;
  set_args(args, 1000, 1016, 1032);
  tls_status st = tls_prepare_launch(k, args, 6, &plan);
  CHECK(st == TLS_OK, "prepare: %s", tls_error_string(st));
  CHECK(plan.grid[0] == 8 * 4 && plan.grid[1] == 1 && plan.grid[2] == 1, "grid %u", plan.grid[0]);
  CHECK(plan.block == 288 && plan.smem == 197664 && plan.num_tmaps == 2, "block/smem");
  const tls_tmap_params *a = &plan.tmaps[0], *b = &plan.tmaps[1];
  CHECK(a->address == A && a->rank == 2 && a->dims[0] == 1032 && a->dims[1] == 1000 &&
            a->strides[0] == 2064,
        "tmap 0 shape");
  CHECK(a->box[0] == 64 && a->box[1] == 64 && a->swizzle == CU_TENSOR_MAP_SWIZZLE_128B &&
            a->dtype == CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        "tmap 0 box/swizzle/dtype");
  CHECK(b->address == B && b->dims[1] == 1016 && b->box[1] == 256, "tmap 1");
}

/* Expects a refusal with this status and a message containing `msg`. */
static void expect_refused(const tls_kernel *k, tls_context *ctx, const tls_arg *args, int nargs,
                           tls_status want, const char *msg) {
  tls_launch_plan plan;
  tls_status st = tls_prepare_launch(k, args, nargs, &plan);
  CHECK(st == want && strstr(tls_last_error(ctx), msg), "want %s / '%s', got %s / '%s'",
        tls_error_string(want), msg, tls_error_string(st), tls_last_error(ctx));
  /* tls_launch refuses the same way, before any driver call. */
  st = tls_launch(k, args, nargs, NULL);
  CHECK(st == want, "tls_launch: want %s, got %s", tls_error_string(want), tls_error_string(st));
}

static void test_refusals(tls_context *ctx, const tls_kernel *k) {
  tls_arg args[6];
  set_args(args, 256, 256, 64);
  expect_refused(k, ctx, args, 5, TLS_ERR_ARG_COUNT,
                 "takes 6 arguments (m_size i32, n_size i32, k_size i32, a_ptr ptr f16");
  args[1] = tls_i64(256);
  expect_refused(k, ctx, args, 6, TLS_ERR_ARG_TYPE, "argument 1 (n_size) must be i32, got i64");
  set_args(args, 256, 256, 64);
  args[3] = tls_i32(5);
  expect_refused(k, ctx, args, 6, TLS_ERR_ARG_TYPE, "argument 3 (a_ptr) must be ptr f16, got i32");
  set_args(args, 256, 256, 64);
  args[4] = tls_ptr(0);
  expect_refused(k, ctx, args, 6, TLS_ERR_ARG_VALUE, "argument 4 (b_ptr) is a null pointer");
  set_args(args, 256, 256, 64);
  args[3] = tls_ptr(A + 8);
  expect_refused(k, ctx, args, 6, TLS_ERR_ARG_VALUE,
                 "argument 3 (a_ptr) = 0x10008 is not 16-byte aligned");
  set_args(args, 256, 256, 64);
  args[5] = tls_ptr(C + 1); /* c_ptr is no TMA operand: f16 alignment */
  expect_refused(k, ctx, args, 6, TLS_ERR_ARG_VALUE,
                 "argument 5 (c_ptr) = 0x30001 is not 2-byte aligned");
  set_args(args, 0, 256, 64);
  expect_refused(k, ctx, args, 6, TLS_ERR_ARG_VALUE,
                 "grid x = ((m_size+127)/128)*((n_size+255)/256) is 0");
  set_args(args, -300, 256, 64);
  expect_refused(k, ctx, args, 6, TLS_ERR_ARG_VALUE, "grid x");
  set_args(args, 256, 256, 0);
  expect_refused(k, ctx, args, 6, TLS_ERR_ARG_VALUE, "tensor map 0 (a_ptr) dims[0] = k_size is 0");
  set_args(args, 256, 256, -64);
  expect_refused(k, ctx, args, 6, TLS_ERR_ARG_VALUE, "dims[0] = k_size is -64");
  set_args(args, 256, 256, 100); /* 200-byte rows */
  expect_refused(k, ctx, args, 6, TLS_ERR_TMAP,
                 "strides[0] = k_size*2 is 200 bytes, not a multiple of 16");
  tls_launch_plan plan;
  set_args(args, 256, 256, 64);
  CHECK(tls_launch(k, args, 6, NULL) == TLS_ERR_NO_DEVICE && strstr(tls_last_error(ctx), "no GPU"),
        "a valid launch offline: %s", tls_last_error(ctx));
  CHECK(tls_prepare_launch(k, args, 6, &plan) == TLS_OK, "valid after refusals");
  const tls_kernel *best = NULL;
  float ms = 0;
  CHECK(tls_autotune(k->mod, "MatmulWGMMAV5", args, 6, NULL, 5, &best, &ms, NULL) ==
                TLS_ERR_NO_DEVICE &&
            !best,
        "autotune offline: %s", tls_last_error(ctx));
}

/* Hostile arguments: unknown kinds, a missing array, a grid over the
 * limit, no kernel. */
static void test_hostile_args(tls_context *ctx, const tls_kernel *k) {
  tls_arg args[6];
  set_args(args, 256, 256, 64);
  args[2].kind = (tls_arg_kind)99;
  expect_refused(k, ctx, args, 6, TLS_ERR_ARG_TYPE,
                 "argument 2 (k_size) must be i32, got an unknown kind");
  expect_refused(k, ctx, NULL, 6, TLS_ERR_ARG_COUNT, "takes 6 arguments");
  expect_refused(k, ctx, args, -1, TLS_ERR_ARG_COUNT, "got -1");
  set_args(args, 2147483647, 2147483647, 64);
  expect_refused(k, ctx, args, 6, TLS_ERR_ARG_VALUE, "above the limit 2147483647");
  tls_launch_plan plan;
  set_args(args, 256, 256, 64);
  CHECK(tls_prepare_launch(NULL, args, 6, &plan) == TLS_ERR_INVALID, "prepare without a kernel");
  CHECK(tls_launch(NULL, args, 6, NULL) == TLS_ERR_INVALID, "launch without a kernel");
  CHECK(tls_prepare_launch(k, args, 6, NULL) == TLS_ERR_INVALID, "prepare without a plan");
}

/* Buffers of known size bound the tensor maps: a_ptr's map spans
 * m_size * k_size * 2 bytes, b_ptr's n_size * k_size * 2. */
static void test_buffer_sizes(tls_context *ctx, const tls_kernel *k) {
  tls_arg args[6];
  tls_launch_plan plan;
  set_args(args, 256, 256, 64);
  CHECK(tls_mem_register(ctx, A, 256 * 64 * 2) == TLS_OK, "register a");
  CHECK(tls_prepare_launch(k, args, 6, &plan) == TLS_OK, "a buffer of the exact size: %s",
        tls_last_error(ctx));
  CHECK(tls_mem_register(ctx, A, 256 * 64 * 2 - 16) == TLS_OK, "register a again, smaller");
  expect_refused(k, ctx, args, 6, TLS_ERR_ARG_VALUE,
                 "tensor map 0 (a_ptr) spans 32768 bytes from 0x10000, past the end of its buffer "
                 "(32752 bytes at "
                 "0x10000)");
  /* A pointer inside a larger buffer: the room left after it counts. */
  CHECK(tls_mem_register(ctx, A - 0x1000, 256 * 64 * 2 + 0x800) == TLS_OK, "register around a");
  tls_mem_unregister(ctx, A);
  expect_refused(k, ctx, args, 6, TLS_ERR_ARG_VALUE,
                 "past the end of its buffer (34816 bytes at 0xf000)");
  /* A view registered inside it wins over the enclosing buffer. */
  CHECK(tls_mem_register(ctx, A, 256 * 64 * 2) == TLS_OK, "register a view");
  CHECK(tls_prepare_launch(k, args, 6, &plan) == TLS_OK, "the view bounds a_ptr: %s",
        tls_last_error(ctx));
  tls_mem_unregister(ctx, A);
  tls_mem_unregister(ctx, A - 0x1000);
  CHECK(tls_mem_register(ctx, B, 100) == TLS_OK, "register b");
  expect_refused(k, ctx, args, 6, TLS_ERR_ARG_VALUE, "tensor map 1 (b_ptr) spans 32768 bytes");
  tls_mem_unregister(ctx, B);
  CHECK(tls_prepare_launch(k, args, 6, &plan) == TLS_OK, "unknown sizes are not checked: %s",
        tls_last_error(ctx));
  CHECK(tls_mem_register(ctx, 0, 16) == TLS_ERR_INVALID &&
            strstr(tls_last_error(ctx), "null pointer"),
        "register 0");
  CHECK(tls_mem_register(ctx, A, 0) == TLS_ERR_INVALID && strstr(tls_last_error(ctx), "zero bytes"),
        "zero bytes");
  CHECK(tls_mem_register(NULL, A, 16) == TLS_ERR_INVALID, "register without a context");
}

/* Grid expressions that divide by zero or overflow at launch time. */
static void test_expression_refusals(tls_context *ctx) {
  tls_module *dz = load(ctx, "div_zero.ptx"), *of = load(ctx, "overflow.ptx");
  tls_arg args[2] = {tls_i32(4), tls_ptr(A)};
  if (dz)
    expect_refused(tls_module_kernel(dz, 0), ctx, args, 2, TLS_ERR_EXPR,
                   "grid x = n/0+1: division by zero");
  args[0] = tls_i64(3000000);
  if (of)
    expect_refused(tls_module_kernel(of, 0), ctx, args, 2, TLS_ERR_EXPR,
                   "grid x = n*n*n: 64-bit overflow");
  args[0] = tls_i64(2);
  tls_launch_plan plan;
  if (of)
    CHECK(tls_prepare_launch(tls_module_kernel(of, 0), args, 2, &plan) == TLS_OK &&
              plan.grid[0] == 8,
          "n*n*n");
  tls_module_free(dz);
  tls_module_free(of);
}

/* ------------------------------------------------- hostile files (issue 13) */

/* Loads `text` as a module; returns its status, the module freed. */
static tls_status load_text(tls_context *ctx, const char *text) {
  tls_module *mod = NULL;
  tls_status st = tls_module_load_string(ctx, text, "hostile", &mod);
  tls_module_free(mod);
  return st;
}

static void expect_loads(tls_context *ctx, const char *text, const char *what) {
  tls_status st = load_text(ctx, text);
  CHECK(st == TLS_OK, "%s: want it loaded, got %s: %s", what, tls_error_string(st),
        tls_last_error(ctx));
}

static void expect_format_error(tls_context *ctx, const char *text, const char *msg,
                                const char *what) {
  tls_status st = load_text(ctx, text);
  CHECK(st == TLS_ERR_FORMAT && strstr(tls_last_error(ctx), msg),
        "%s: want TLS_ERR_FORMAT / '%s', got %s / '%s'", what, msg, tls_error_string(st),
        tls_last_error(ctx));
}

#define META2                                                                                      \
  "//@tls version 1\n//@tls entry K script=K block=32 smem=0\n//@tls param a i32\n"                \
  "//@tls param b i32\n//@tls param p ptr f16\n//@tls grid a 1 1\n"                                \
  "//@tls tmap 0 ptr=p dtype=f16 rank=2 dims=a,b strides=a*2 box=64,64 swizzle=128\n"              \
  "//@tls end\n.version 8.0\n.target sm_90a\n"

/* The PTX's .param names must be those the metadata declares (tlsc's
 * ENTRY_param_NAME and ENTRY_tmapI) or positional (ENTRY_param_I): sizes
 * alone would bind the grid and the tensor maps to swapped arguments. */
static void test_param_names(tls_context *ctx) {
  expect_loads(ctx,
               META2 ".visible .entry K(.param .u32 K_param_a, .param .u32 K_param_b,\n"
                     ".param .u64 K_param_p, .param .align 64 .b8 K_tmap0[128])\n{\nret;\n}\n",
               "tlsc's names");
  expect_loads(ctx,
               META2 ".visible .entry K(.param .u32 K_param_0, .param .u32 K_param_1,\n"
                     ".param .u64 .ptr .align 16 K_param_2, .param .align 64 .b8 K_param_3 "
                     "[128])\n{\nret;\n}\n",
               "positional names, a .ptr attribute, a spaced array");
  expect_format_error(ctx,
                      META2 ".visible .entry K(.param .u32 K_param_b, .param .u32 K_param_a,\n"
                            ".param .u64 K_param_p, .param .align 64 .b8 K_tmap0[128])\n{\nret;"
                            "\n}\n",
                      "PTX parameter 0 of 'K' is named 'K_param_b' but the metadata declares "
                      "parameter 'a' there (expected 'K_param_a' or 'K_param_0')",
                      "swapped parameters");
  expect_format_error(ctx,
                      META2 ".visible .entry K(.param .u32 K_param_a, .param .u32 K_param_b,\n"
                            ".param .u64 K_param_p, .param .align 64 .b8 K_tmap1[128])\n{\nret;"
                            "\n}\n",
                      "PTX parameter 3 of 'K' is named 'K_tmap1' but the metadata declares "
                      "tensor map 0 there",
                      "a tensor map of another index");
  expect_format_error(ctx,
                      META2 ".visible .entry K(.param .u32 K_param_1, .param .u32 K_param_0,\n"
                            ".param .u64 K_param_2, .param .align 64 .b8 K_param_3[128])\n{\nret;"
                            "\n}\n",
                      "is named 'K_param_1' but the metadata declares parameter 'a'",
                      "swapped positional names");
  expect_format_error(ctx,
                      META2 ".visible .entry K(.param .u32 a, .param .u32 b,\n"
                            ".param .u64 p, .param .align 64 .b8 t[128])\n{\nret;\n}\n",
                      "PTX parameter 0 of 'K' is named 'a'", "names of no known form");
}

/* `.entry NAME(` counts only as PTX, never inside a comment; comments and
 * strings hide neither braces nor directives. */
static void test_entry_in_comment(tls_context *ctx) {
  const char *meta = "//@tls version 1\n//@tls entry K script=K block=32 smem=0\n"
                     "//@tls grid 1 1 1\n//@tls end\n";
  char text[1024];
  snprintf(text, sizeof text,
           "%s.version 8.0\n.target sm_90a\n// .visible .entry K()\n// {\n// }\n"
           ".visible .entry L()\n{\nret;\n}\n",
           meta);
  expect_format_error(ctx, text, "entry 'K' is only in a comment of the PTX text (line 7)",
                      "an entry in a line comment");
  snprintf(text, sizeof text,
           "%s.version 8.0\n.target sm_90a\n/* .visible .entry K()\n{\n} */\n"
           ".visible .entry L()\n{\nret;\n}\n",
           meta);
  expect_format_error(ctx, text, "entry 'K' is only in a comment", "an entry in a block comment");
  snprintf(text, sizeof text,
           "%s.version 8.0\n.target sm_90a\n.visible .entry xK()\n{\nret;\n}\n"
           ".visible .entry K_2()\n{\nret;\n}\n",
           meta);
  expect_format_error(ctx, text, "entry 'K' is not in the PTX text", "entries whose names hold K");
  snprintf(text, sizeof text, "%s// .version 8.0\n.target sm_90a\n.entry K()\n{\nret;\n}\n", meta);
  expect_format_error(ctx, text, "no PTX '.version'", "a .version only in a comment");
  /* A path in a string may hold what would open a comment or a block. */
  snprintf(text, sizeof text,
           "%s.version 8.0\n.target sm_90a\n.file 1 \"/src/a/*{b\\\".tls\"\n"
           ".visible .entry K( // no parameters )\n)\n{\nret; // }\n}\n",
           meta);
  expect_loads(ctx, text, "a .file path with /* and {, comments in the entry");
}

/* A tensor map's extents, computed with overflow checks whether or not its
 * pointer lies in a known buffer (none is registered here). */
static void test_tmap_overflow(tls_context *ctx) {
  tls_module *mod = NULL;
  tls_status st = tls_module_load_string(
      ctx,
      "//@tls version 1\n//@tls entry K script=K block=32 smem=0\n//@tls param d0 i64\n"
      "//@tls param d1 i64\n//@tls param d2 i64\n//@tls param s0 i64\n//@tls param s1 i64\n"
      "//@tls param p ptr u8\n//@tls grid 1 1 1\n"
      "//@tls tmap 0 ptr=p dtype=u8 rank=3 dims=d0,d1,d2 strides=s0,s1 box=16,1,1 swizzle=0\n"
      "//@tls end\n.version 8.0\n.target sm_90a\n.visible .entry K(.param .u64 K_param_d0, "
      ".param .u64 K_param_d1, .param .u64 K_param_d2, .param .u64 K_param_s0, .param .u64 "
      "K_param_s1, .param .u64 K_param_p, .param .align 64 .b8 K_tmap0[128])\n{\nret;\n}\n",
      "overflow", &mod);
  CHECK(st == TLS_OK, "overflow module: %s", tls_last_error(ctx));
  if (!mod) return;
  const tls_kernel *k = tls_module_kernel(mod, 0);
  const int64_t G = (int64_t)1 << 32;
  tls_arg args[6] = {tls_i64(16), tls_i64(G), tls_i64(4), tls_i64(G), tls_i64(16), tls_ptr(A)};
  /* strides[0] * dims[1] = 2^64 wraps to 0: strides[1] = 16 would pass. */
  expect_refused(k, ctx, args, 6, TLS_ERR_TMAP,
                 "tensor map 0 (p) strides[0] = 4294967296 bytes times dims[1] = 4294967296 "
                 "overflows 64 bits");
  /* The last dimension's span: (2^32 - 1) * (2^40 - 16) bytes. */
  args[1] = tls_i64(4), args[2] = tls_i64(G), args[3] = tls_i64(16),
  args[4] = tls_i64(((int64_t)1 << 40) - 16);
  expect_refused(k, ctx, args, 6, TLS_ERR_TMAP, "strides[1] = 1099511627760 bytes times dims[2]");
  /* A shape that fits, at a base it would run past the address space from. */
  args[2] = tls_i64(4), args[4] = tls_i64(64), args[5] = tls_ptr(UINT64_MAX - 15);
  expect_refused(
      k, ctx, args, 6, TLS_ERR_ARG_VALUE,
      "tensor map 0 (p) spans 256 bytes from 0xfffffffffffffff0, past the end of the 64-bit "
      "address space");
  tls_launch_plan plan;
  args[5] = tls_ptr(A);
  CHECK(tls_prepare_launch(k, args, 6, &plan) == TLS_OK, "a shape that fits: %s",
        tls_last_error(ctx));
  tls_module_free(mod);
}

/* The tmap index: what is wrong and what is allowed. */
static void test_tmap_index_messages(tls_context *ctx) {
  char text[4096];
  int n = snprintf(text, sizeof text,
                   "//@tls version 1\n//@tls entry K script=K block=32 smem=0\n"
                   "//@tls param p ptr f16\n//@tls grid 1 1 1\n");
  for (int t = 0; t < 9; t++)
    n += snprintf(text + n, sizeof text - (size_t)n,
                  "//@tls tmap %d ptr=p dtype=f16 rank=1 dims=64 box=64 swizzle=0\n", t);
  snprintf(text + n, sizeof text - (size_t)n, "//@tls end\n.version 8.0\n.target sm_90a\n");
  expect_format_error(ctx, text,
                      "hostile:13: error: entry 'K' has too many tensor maps (at most 8: tmap 0 "
                      "to tmap 7)",
                      "a ninth map");
  CHECK(!strstr(tls_last_error(ctx), "must be 8"), "no 'must be 8': %s", tls_last_error(ctx));
  const char *head = "//@tls version 1\n//@tls entry K script=K block=32 smem=0\n"
                     "//@tls param p ptr f16\n//@tls grid 1 1 1\n";
  snprintf(text, sizeof text, "%s//@tls tmap 1 ptr=p dtype=f16 rank=1 dims=64 box=64 swizzle=0\n",
           head);
  expect_format_error(ctx, text,
                      "'tmap 1' is out of order: the next map of entry 'K' is 'tmap 0' (maps are "
                      "numbered 0, 1, ... in order, at most 8)",
                      "a map out of order");
  snprintf(text, sizeof text, "%s//@tls tmap x ptr=p dtype=f16 rank=1 dims=64 box=64 swizzle=0\n",
           head);
  expect_format_error(ctx, text, "tmap index 'x' is not an integer", "a map index not a number");
  snprintf(text, sizeof text, "%s//@tls tmap ptr=p dtype=f16 rank=1 dims=64 box=64 swizzle=0\n",
           head);
  expect_format_error(ctx, text, "'tmap' needs its index first", "a map without an index");
}

/* Autotune values that are not integers (tlsc's `config w=[1,4]`): the
 * lookup takes a list whole, with or without spaces; malformed values are
 * refused at load. */
static void test_list_config(tls_context *ctx) {
  static const char text[] =
      "//@tls version 1\n"
      "//@tls entry A script=S block=32 smem=0\n//@tls config w=[1,4] s=3 t=True m='tn'\n"
      "//@tls grid 1 1 1\n"
      "//@tls entry B script=S block=32 smem=0\n//@tls config w=[2,2] s=3 t=(1,(2,)) m='tn'\n"
      "//@tls grid 1 1 1\n//@tls end\n.version 8.0\n.target sm_90a\n"
      ".entry A()\n{\nret;\n}\n.entry B()\n{\nret;\n}\n";
  tls_module *mod = NULL;
  CHECK(tls_module_load_string(ctx, text, "lists", &mod) == TLS_OK, "list config: %s",
        tls_last_error(ctx));
  const tls_kernel *b = mod ? tls_kernel_find_config(mod, "S", "w=[2, 2],s=3") : NULL;
  CHECK(b && !strcmp(tls_kernel_name(b), "B"), "lookup by a list value with a space");
  CHECK(mod && !tls_kernel_find_config(mod, "S", "w=[2,2"), "a list cut short matches nothing");
  CHECK(mod && tls_kernel_find_config(mod, "S", "t=True m='tn'") == tls_module_kernel(mod, 0),
        "lookup by a word and a quoted word");
  tls_module_free(mod);
  const char *bad[] = {"[1,4", "[1,,4]", "(1]", "'t n'", "[1,4]]", "a;b"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char meta[256];
    snprintf(meta, sizeof meta,
             "//@tls version 1\n//@tls entry K script=K block=32 smem=0\n//@tls config w=%s\n"
             "//@tls grid 1 1 1\n//@tls end\n",
             bad[i]);
    expect_format_error(ctx, meta, "is not a number, a word, a quoted word", bad[i]);
  }
}

/* Siblings: a config spec longer than any fixed buffer still counts whole;
 * a parameter may not be called min or max (the expression functions). */
static void test_lookup_siblings(tls_context *ctx, tls_module *mod) {
  /* 4 + 45 * 11 = 499 characters, then "num_stages=44": a copy cut at 511
   * would end in "num_stages=4" and pick MatmulWGMMAV5. */
  char want[600] = ",,,,";
  for (int i = 0; i < 45; i++) strcat(want, "block_k=64,");
  strcat(want, "num_stages=44");
  CHECK(!tls_kernel_find_config(mod, "MatmulWGMMAV5", want),
        "a long config spec ending in num_stages=44 matched an entry");
  want[strlen(want) - 1] = 0; /* ... num_stages=4 */
  const tls_kernel *k = tls_kernel_find_config(mod, "MatmulWGMMAV5", want);
  CHECK(k && !strcmp(tls_kernel_name(k), "MatmulWGMMAV5"), "the long spec, num_stages=4");
  expect_format_error(ctx,
                      "//@tls version 1\n//@tls entry K script=K block=32 smem=0\n"
                      "//@tls param min i32\n//@tls grid min 1 1\n//@tls end\n",
                      "parameter name 'min' is reserved", "a parameter called min");
  expect_format_error(ctx,
                      "//@tls version 1\n//@tls entry K script=K block=99999999999999999999 "
                      "smem=0\n//@tls grid 1 1 1\n//@tls end\n",
                      "block must be 1..1024 threads", "a block that overflows");
}

/* TLSC_CUDA_LIB names a library that does not exist. */
static void test_no_driver(void) {
  setenv("TLSC_CUDA_LIB", "/nonexistent/libcuda.so.1", 1);
  tls_context *ctx = NULL;
  tls_status st = tls_init(0, &ctx);
  CHECK(st == TLS_ERR_NO_DRIVER, "no driver: %s", tls_error_string(st));
  CHECK(ctx && strstr(tls_last_error(ctx), "no CUDA driver: /nonexistent/libcuda.so.1 not found"),
        "message: %s", tls_last_error(ctx));
  CHECK(!tls_context_online(ctx), "offline after a failed init");
  uint64_t p;
  CHECK(tls_mem_alloc(ctx, &p, 16) == TLS_ERR_NO_DEVICE, "no allocation without a GPU");
  tls_timer *timer = NULL;
  CHECK(tls_timer_create(ctx, &timer) == TLS_ERR_NO_DEVICE && !timer, "no timer without a driver");
  tls_context_free(ctx);
  unsetenv("TLSC_CUDA_LIB");
}

/* The timing hook (streams, timers, the asynchronous memset) on an offline
 * context: each refuses with TLS_ERR_NO_DEVICE and names itself; NULL
 * handles are TLS_ERR_INVALID. */
static void test_timing_offline(tls_context *ctx) {
  void *stream = (void *)&stream;
  tls_status st = tls_stream_create(ctx, &stream);
  CHECK(st == TLS_ERR_NO_DEVICE &&
            strstr(tls_last_error(ctx), "tls_stream_create: the context has no GPU"),
        "stream_create offline: %s / %s", tls_error_string(st), tls_last_error(ctx));
  CHECK(stream == (void *)&stream, "stream_create offline leaves the stream alone");
  st = tls_stream_destroy(ctx, (void *)0x1000);
  CHECK(st == TLS_ERR_NO_DEVICE &&
            strstr(tls_last_error(ctx), "tls_stream_destroy: the context has no GPU"),
        "stream_destroy offline: %s / %s", tls_error_string(st), tls_last_error(ctx));
  CHECK(tls_stream_destroy(ctx, NULL) == TLS_OK, "destroying the default stream is a no-op");
  st = tls_mem_set8_async(ctx, A, 0, 256, NULL);
  CHECK(st == TLS_ERR_NO_DEVICE &&
            strstr(tls_last_error(ctx), "tls_mem_set8_async: the context has no GPU"),
        "mem_set8_async offline: %s / %s", tls_error_string(st), tls_last_error(ctx));
  tls_timer *timer = (tls_timer *)&timer;
  st = tls_timer_create(ctx, &timer);
  CHECK(st == TLS_ERR_NO_DEVICE &&
            strstr(tls_last_error(ctx), "tls_timer_create: the context has no GPU"),
        "timer_create offline: %s / %s", tls_error_string(st), tls_last_error(ctx));
  CHECK(timer == (tls_timer *)&timer, "timer_create offline leaves the timer alone");
  float ms = 0;
  CHECK(tls_timer_start(NULL, NULL) == TLS_ERR_INVALID, "timer_start without a timer");
  CHECK(tls_timer_stop(NULL, NULL, &ms) == TLS_ERR_INVALID, "timer_stop without a timer");
  tls_timer_free(NULL);
  CHECK(tls_stream_create(NULL, &stream) == TLS_ERR_INVALID, "stream_create without a context");
  CHECK(tls_stream_destroy(NULL, NULL) == TLS_ERR_INVALID, "stream_destroy without a context");
  CHECK(tls_timer_create(NULL, &timer) == TLS_ERR_INVALID, "timer_create without a context");
  CHECK(tls_mem_set8_async(NULL, A, 0, 16, NULL) == TLS_ERR_INVALID,
        "set8_async without a context");
  st = tls_stream_wait(ctx, NULL, (void *)0x1000);
  CHECK(st == TLS_ERR_NO_DEVICE &&
            strstr(tls_last_error(ctx), "tls_stream_wait: the context has no GPU"),
        "stream_wait offline: %s / %s", tls_error_string(st), tls_last_error(ctx));
  CHECK(tls_stream_wait(NULL, NULL, NULL) == TLS_ERR_INVALID, "stream_wait without a context");
  /* The synchronous helpers name themselves too. */
  CHECK(tls_mem_set8(ctx, A, 0, 16) == TLS_ERR_NO_DEVICE &&
            strstr(tls_last_error(ctx), "tls_mem_set8: the context has no GPU"),
        "mem_set8 offline: %s", tls_last_error(ctx));
}

int main(int argc, char **argv) {
  if (argc != 2) return fprintf(stderr, "usage: test_runtime DATA_DIR\n"), 2;
  data_dir = argv[1];
  test_expressions();
  tls_context *ctx;
  tls_init_offline(&ctx);
  tls_module *mod = load(ctx, "matmul.ptx");
  if (mod) {
    test_metadata(ctx, mod);
    test_plan(tls_kernel_find(mod, "MatmulWGMMAV5"));
    test_refusals(ctx, tls_kernel_find(mod, "MatmulWGMMAV5"));
    test_hostile_args(ctx, tls_kernel_find(mod, "MatmulWGMMAV5"));
    test_buffer_sizes(ctx, tls_kernel_find(mod, "MatmulWGMMAV5"));
  }
  test_load_string(ctx);
  test_entry_limit(ctx);
  test_every_truncation(ctx);
  test_expression_refusals(ctx);
  test_timing_offline(ctx);
  test_param_names(ctx);
  test_entry_in_comment(ctx);
  test_tmap_overflow(ctx);
  test_tmap_index_messages(ctx);
  test_list_config(ctx);
  if (mod) test_lookup_siblings(ctx, mod);
  tls_module_free(mod);
  tls_context_free(ctx);
  test_no_driver();
  printf("%d checks, %d failures\n", checks, failures);
  return failures != 0;
}
