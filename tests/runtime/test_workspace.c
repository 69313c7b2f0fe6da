/* test_workspace.c: global_tensor() workspaces in libtlsrt, on the CPU (an
 * offline context): the hidden `param NAME ptr D workspace` and the
 * `workspace` line, each refusal of a broken one; the launch's arguments
 * are the user's only (tls_kernel_num_params, tls_prepare_launch's count);
 * the sizes and offsets computed from the arguments, refused when
 * negative or too large; a tensor map over a workspace; files without
 * workspaces as before. Usage: test_workspace [PTX]: with PTX (tlsc's
 * build of tests/workspace/scripts/split_rows.tls), the checks on it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"
#include "runtime/tlsrt.h"
#include "tests/unit.h"

/* Entry K: a i32, b i64, p ptr f32, then the workspaces __ws0 (int32
 * [cdiv(a, 64), b], clean) and __ws1 (float32 [2a]); `lines` replaces
 * the two `workspace` lines when not NULL, `ptx` the PTX parameter list. */
static char *file_with(const char *lines, const char *ptx) {
  static const char head[] = "//@tls version 1\n//@tls entry K script=K block=32 smem=0\n"
                             "//@tls config\n//@tls param a i32\n//@tls param b i64\n"
                             "//@tls param p ptr f32\n//@tls param __ws0 ptr i32 workspace\n"
                             "//@tls param __ws1 ptr f32 workspace\n//@tls grid a 1 1\n";
  static const char ws[] = "//@tls workspace __ws0 dtype=i32 dims=(a+63)/64,b clean=1\n"
                           "//@tls workspace __ws1 dtype=f32 dims=a*2 clean=0\n";
  static const char params[] = ".param .u32 K_param_a, .param .u64 K_param_b, .param .u64 "
                               "K_param_p, .param .u64 K_param___ws0, .param .u64 K_param___ws1";
  const char *l = lines ? lines : ws, *p = ptx ? ptx : params;
  size_t len = strlen(head) + strlen(l) + strlen(p) + 128;
  char *text = malloc(len);
  if (!text) abort();
  snprintf(text, len,
           "%s%s//@tls end\n.version 8.0\n.target sm_90a\n.visible .entry K(%s)\n{\nret;\n}\n",
           head, l, p);
  return text;
}

static tls_module *load(tls_context *ctx, const char *text, tls_status *st) {
  tls_module *mod = NULL;
  *st = tls_module_load_string(ctx, text, "ws", &mod);
  return mod;
}

static void expect_format_error(tls_context *ctx, const char *text, const char *msg) {
  tls_status st;
  tls_module *mod = load(ctx, text, &st);
  CHECK(st == TLS_ERR_FORMAT && !mod && strstr(tls_last_error(ctx), msg),
        "want TLS_ERR_FORMAT / '%s', got %s / '%s'", msg, tls_error_string(st),
        tls_last_error(ctx));
  tls_module_free(mod);
}

static void expect_lines_error(tls_context *ctx, const char *lines, const char *msg) {
  char *text = file_with(lines, NULL);
  expect_format_error(ctx, text, msg);
  free(text);
}

enum { PTR = 0x10000 };

/* ------------------------------------------------------------ parsing */

static void test_parse(tls_context *ctx) {
  char *text = file_with(NULL, NULL);
  tls_status st;
  tls_module *mod = load(ctx, text, &st);
  free(text);
  CHECK(st == TLS_OK, "load: %s", tls_last_error(ctx));
  const tls_kernel *k = mod ? tls_kernel_find(mod, "K") : NULL;
  if (!k) return;
  /* the user's parameters only: what a launch passes */
  CHECK(tls_kernel_num_params(k) == 3, "3 user parameters, got %d", tls_kernel_num_params(k));
  CHECK(!strcmp(tls_kernel_param_name(k, 2), "p") && !tls_kernel_param_name(k, 3),
        "p last, no hidden parameter among them");
  CHECK(tls_kernel_num_workspaces(k) == 2, "2 workspaces, got %d", tls_kernel_num_workspaces(k));
  CHECK(!strcmp(tls_kernel_workspace(k, 0), "__ws0 i32 dims=(a+63)/64,b clean=1"), "'%s'",
        tls_kernel_workspace(k, 0));
  CHECK(!strcmp(tls_kernel_workspace(k, 1), "__ws1 f32 dims=a*2 clean=0"), "'%s'",
        tls_kernel_workspace(k, 1));
  CHECK(!tls_kernel_workspace(k, 2) && !tls_kernel_workspace(k, -1), "out of range: NULL");
  CHECK(k->ws[0].rank == 2 && k->ws[0].elem_bytes == 4 && k->ws[0].clean && !k->ws[1].clean,
        "ws fields");
  tls_module_free(mod);
}

static void test_refusals(tls_context *ctx) {
  expect_lines_error(ctx, "//@tls workspace __ws0 dtype=i32 dims=a clean=1\n",
                     "ws:8: error: workspace parameter '__ws1' has no 'workspace' line");
  expect_lines_error(ctx,
                     "//@tls workspace __ws0 dtype=i32 dims=a clean=1\n"
                     "//@tls workspace __ws0 dtype=i32 dims=a clean=1\n",
                     "ws:11: error: second 'workspace' line for '__ws0' (line 10 has the first)");
  expect_lines_error(ctx, "//@tls workspace __ws2 dtype=i32 dims=a clean=1\n",
                     "workspace '__ws2' is not a workspace parameter declared before it");
  expect_lines_error(ctx, "//@tls workspace a dtype=i32 dims=a clean=1\n",
                     "workspace 'a' is not a workspace parameter");
  expect_lines_error(ctx, "//@tls workspace __ws0 dtype=f32 dims=a clean=1\n",
                     "workspace __ws0: dtype=f32 but its parameter points to i32");
  expect_lines_error(ctx, "//@tls workspace __ws0 dtype=i32 dims=a clean=2\n",
                     "workspace __ws0: clean must be 0 or 1, not '2'");
  expect_lines_error(ctx, "//@tls workspace __ws0 dtype=i32 dims=a\n",
                     "workspace __ws0 needs dtype=, dims= and clean=");
  expect_lines_error(ctx, "//@tls workspace __ws0 dtype=i32 dims=a clean=1 align=16\n",
                     "unknown key 'align=16' in 'workspace'");
  expect_lines_error(ctx, "//@tls workspace __ws0 dtype=i32 dims=a,,b clean=1\n",
                     "workspace __ws0: dims needs 1 to 5 expressions");
  expect_lines_error(ctx, "//@tls workspace __ws0 dtype=i32 dims=1,2,3,4,5,6 clean=1\n",
                     "workspace __ws0: dims needs 1 to 5 expressions");
  expect_lines_error(ctx,
                     "//@tls workspace __ws0 dtype=i32 dims=p clean=1\n"
                     "//@tls workspace __ws1 dtype=f32 dims=a clean=0\n",
                     "ws:10: error: bad workspace expression 'p': parameter 'p' is not an integer");
  expect_lines_error(ctx, "//@tls workspace\n", "'workspace' needs a parameter name");
  /* the hidden parameters come after the user's, and are declared once */
  expect_format_error(ctx,
                      "//@tls version 1\n//@tls entry K script=K block=32 smem=0\n"
                      "//@tls param __ws0 ptr i32 workspace\n//@tls param a i32\n",
                      "ws:4: error: parameter 'a' follows workspace parameter '__ws0' (a "
                      "workspace's hidden parameter comes after every user parameter)");
  expect_format_error(ctx,
                      "//@tls version 1\n//@tls entry K script=K block=32 smem=0\n"
                      "//@tls param a i32\n//@tls param a ptr i32 workspace\n",
                      "ws:4: error: parameter 'a' appears twice");
  expect_format_error(ctx,
                      "//@tls version 1\n//@tls entry K script=K block=32 smem=0\n"
                      "//@tls param w ptr i32 hidden\n",
                      "ws:3: error: unknown word 'hidden' after 'param w ptr i32' (only "
                      "'workspace')");
  expect_format_error(ctx,
                      "//@tls version 1\n//@tls entry K script=K block=32 smem=0\n"
                      "//@tls param w ptr q8 workspace\n",
                      "ws:3: error: unknown element type 'q8'");
  expect_format_error(ctx,
                      "//@tls version 1\n//@tls workspace w dtype=i32 dims=1 clean=0\n"
                      "//@tls end\n",
                      "ws:2: error: 'workspace' outside an entry");
  /* the PTX entry takes the hidden parameters after the user's */
  char *text =
      file_with(NULL, ".param .u32 K_param_a, .param .u64 K_param_b, .param .u64 K_param_p");
  expect_format_error(ctx, text,
                      "'K' takes 3 PTX parameters but the metadata declares 5 (3 params + 2 "
                      "workspaces + 0 tensor maps)");
  free(text);
  text = file_with(NULL, ".param .u32 K_param_a, .param .u64 K_param_b, .param .u64 K_param_p, "
                         ".param .u64 K_param___ws1, .param .u64 K_param___ws0");
  expect_format_error(ctx, text,
                      "PTX parameter 3 of 'K' is named 'K_param___ws1' but the metadata declares "
                      "workspace parameter '__ws0' there (expected 'K_param___ws0' or "
                      "'K_param_3')");
  free(text);
  text = file_with(NULL, ".param .u32 K_param_a, .param .u64 K_param_b, .param .u64 K_param_p, "
                         ".param .u32 K_param___ws0, .param .u64 K_param___ws1");
  expect_format_error(ctx, text,
                      "PTX parameter 3 of 'K' is not the 8-byte value the metadata declares");
  free(text);
}

/* ------------------------------------------------------------- launch */

static tls_status prepare(const tls_kernel *k, int32_t a, int64_t b, int nargs,
                          tls_launch_plan *plan) {
  tls_arg args[5] = {tls_i32(a), tls_i64(b), tls_ptr(PTR), tls_ptr(PTR), tls_ptr(PTR)};
  return tls_prepare_launch(k, args, nargs, plan);
}

static void test_plan(tls_context *ctx) {
  char *text = file_with(NULL, NULL);
  tls_status st;
  tls_module *mod = load(ctx, text, &st);
  free(text);
  const tls_kernel *k = mod ? tls_kernel_find(mod, "K") : NULL;
  if (!k) return;
  tls_launch_plan plan;
  /* __ws0: cdiv(100, 64) * 3 int32 = 24 bytes, clean, first; __ws1: 200
   * float32 = 800 bytes at the next multiple of 256 */
  st = prepare(k, 100, 3, 3, &plan);
  CHECK(st == TLS_OK, "a=100 b=3: %s", tls_last_error(ctx));
  CHECK(plan.num_workspaces == 2, "2 workspaces in the plan, got %d", plan.num_workspaces);
  CHECK(plan.workspaces[0].bytes == 24 && plan.workspaces[0].offset == 0 &&
            plan.workspaces[0].clean == 1,
        "__ws0: %llu bytes at %llu", (unsigned long long)plan.workspaces[0].bytes,
        (unsigned long long)plan.workspaces[0].offset);
  CHECK(plan.workspaces[1].bytes == 800 && plan.workspaces[1].offset == 256 &&
            plan.workspaces[1].clean == 0,
        "__ws1: %llu bytes at %llu", (unsigned long long)plan.workspaces[1].bytes,
        (unsigned long long)plan.workspaces[1].offset);
  CHECK(plan.workspace_bytes == 256 + 1024 && plan.workspace_clean_bytes == 256,
        "buffer %llu bytes, %llu clean", (unsigned long long)plan.workspace_bytes,
        (unsigned long long)plan.workspace_clean_bytes);
  /* the sizes follow the arguments */
  st = prepare(k, 6400, 1000, 3, &plan);
  CHECK(st == TLS_OK && plan.workspaces[0].bytes == 100 * 1000 * 4 &&
            plan.workspaces[1].offset == 400128 && plan.workspace_bytes == 400128 + 51200,
        "a=6400 b=1000: %s, %llu at %llu, total %llu", tls_last_error(ctx),
        (unsigned long long)plan.workspaces[0].bytes, (unsigned long long)plan.workspaces[1].offset,
        (unsigned long long)plan.workspace_bytes);
  /* a dimension of 0 is an empty workspace */
  st = prepare(k, 100, 0, 3, &plan);
  CHECK(st == TLS_OK && plan.workspaces[0].bytes == 0 && plan.workspaces[1].offset == 0, "b=0: %s",
        tls_last_error(ctx));
  /* the user's arguments, not the hidden ones */
  st = prepare(k, 100, 3, 5, &plan);
  CHECK(st == TLS_ERR_ARG_COUNT &&
            !strcmp(tls_last_error(ctx), "launch of 'K' refused: it takes 3 arguments (a i32, b "
                                         "i64, p ptr f32), got 5"),
        "5 arguments: %s / '%s'", tls_error_string(st), tls_last_error(ctx));
  st = prepare(k, 100, -1, 3, &plan);
  CHECK(st == TLS_ERR_ARG_VALUE &&
            !strcmp(tls_last_error(ctx), "launch of 'K' refused: workspace 0 (__ws0) dims[1] = b "
                                         "is -1 (sizes must not be negative)"),
        "b=-1: %s / '%s'", tls_error_string(st), tls_last_error(ctx));
  st = prepare(k, 100, (int64_t)1 << 61, 3, &plan);
  CHECK(st == TLS_ERR_ARG_VALUE &&
            strstr(tls_last_error(ctx), "workspace 0 (__ws0): the workspaces' bytes (the dims "
                                        "times the element size) exceed 2^62"),
        "b=2^61: %s / '%s'", tls_error_string(st), tls_last_error(ctx));
  st = prepare(k, 100, (int64_t)1 << 59, 3, &plan); /* 2^62 + 800 bytes in all */
  CHECK(st == TLS_ERR_ARG_VALUE && strstr(tls_last_error(ctx), "workspace 1 (__ws1)"),
        "2^62 + 800 bytes: %s / '%s'", tls_error_string(st), tls_last_error(ctx));
  /* offline: refused before any allocation */
  tls_arg args[3] = {tls_i32(100), tls_i64(3), tls_ptr(PTR)};
  st = tls_launch(k, args, 3, NULL);
  CHECK(st == TLS_ERR_NO_DEVICE && !k->ws_buffer, "offline launch: %s", tls_error_string(st));
  tls_module_free(mod);
}

/* A tensor map over a workspace: its base is the workspace's buffer, known
 * at the launch (0 in the plan). */
static void test_tmap(tls_context *ctx) {
  static const char file[] =
      "//@tls version 1\n//@tls entry T script=T block=128 smem=0\n//@tls config\n"
      "//@tls param m i32\n//@tls param __ws0 ptr f16 workspace\n//@tls grid 1 1 1\n"
      "//@tls tmap 0 ptr=__ws0 dtype=f16 rank=2 dims=64,m strides=128 box=64,64 swizzle=128\n"
      "//@tls workspace __ws0 dtype=f16 dims=m,64 clean=0\n//@tls end\n"
      ".version 8.0\n.target sm_90a\n"
      ".visible .entry T(.param .u32 T_param_m, .param .u64 T_param___ws0,\n"
      "  .param .align 64 .b8 T_tmap0[128])\n{\nret;\n}\n";
  tls_status st;
  tls_module *mod = load(ctx, file, &st);
  CHECK(st == TLS_OK, "tmap over a workspace: %s", tls_last_error(ctx));
  const tls_kernel *k = mod ? tls_kernel_find(mod, "T") : NULL;
  if (!k) return;
  CHECK(k->tmaps[0].ptr_ws == 0 && k->tmaps[0].ptr_param == -1, "the map's base is __ws0");
  tls_arg m = tls_i32(256);
  tls_launch_plan plan;
  st = tls_prepare_launch(k, &m, 1, &plan);
  CHECK(st == TLS_OK && plan.tmaps[0].address == 0 && plan.tmaps[0].dims[1] == 256 &&
            plan.workspaces[0].bytes == 256 * 64 * 2,
        "plan: %s", tls_last_error(ctx));
  tls_module_free(mod);
}

/* A file without workspaces loads and plans as before. */
static void test_none(tls_context *ctx) {
  static const char file[] = "//@tls version 1\n//@tls entry V script=V block=32 smem=0\n"
                             "//@tls param n i32\n//@tls grid n 1 1\n//@tls end\n"
                             ".version 8.0\n.target sm_90a\n"
                             ".visible .entry V(.param .u32 V_param_n)\n{\nret;\n}\n";
  tls_status st;
  tls_module *mod = load(ctx, file, &st);
  const tls_kernel *k = mod ? tls_kernel_find(mod, "V") : NULL;
  CHECK(k && tls_kernel_num_workspaces(k) == 0 && tls_kernel_num_params(k) == 1, "load: %s",
        tls_last_error(ctx));
  tls_arg n = tls_i32(4);
  tls_launch_plan plan;
  memset(&plan, 0x5a, sizeof plan);
  CHECK(k && tls_prepare_launch(k, &n, 1, &plan) == TLS_OK && plan.num_workspaces == 0 &&
            plan.workspace_bytes == 0 && plan.workspace_clean_bytes == 0,
        "no workspace in the plan");
  tls_module_free(mod);
}

/* tlsc's build of tests/workspace/scripts/split_rows.tls. */
static void test_compiled(tls_context *ctx, const char *path) {
  tls_module *mod = NULL;
  tls_status st = tls_module_load_file(ctx, path, &mod);
  CHECK(st == TLS_OK, "loading %s: %s", path, tls_last_error(ctx));
  const tls_kernel *k = mod ? tls_kernel_find(mod, "SplitRowSum__128") : NULL;
  if (!k) return;
  CHECK(tls_kernel_num_params(k) == 4 && tls_kernel_num_workspaces(k) == 2,
        "4 parameters and 2 workspaces, got %d and %d", tls_kernel_num_params(k),
        tls_kernel_num_workspaces(k));
  /* m=1000: 63 row blocks; sems 63 int32 (clean), partial 63 * 16 float32 */
  tls_arg args[4] = {tls_i32(1000), tls_i32(781), tls_ptr(PTR), tls_ptr(PTR)};
  tls_launch_plan plan;
  st = tls_prepare_launch(k, args, 4, &plan);
  CHECK(st == TLS_OK && plan.grid[0] == 63 && plan.grid[1] == 7, "prepare: %s",
        tls_last_error(ctx));
  CHECK(plan.workspaces[0].bytes == 252 && plan.workspaces[0].clean &&
            plan.workspaces[1].bytes == 4032 && plan.workspaces[1].offset == 256 &&
            plan.workspace_clean_bytes == 256 && plan.workspace_bytes == 256 + 4096,
        "sizes: %llu %llu, total %llu", (unsigned long long)plan.workspaces[0].bytes,
        (unsigned long long)plan.workspaces[1].bytes, (unsigned long long)plan.workspace_bytes);
  tls_module_free(mod);
}

int main(int argc, char **argv) {
  if (argc > 2) return fprintf(stderr, "usage: test_workspace [PTX]\n"), 2;
  tls_context *ctx;
  tls_init_offline(&ctx);
  test_parse(ctx);
  test_refusals(ctx);
  test_plan(ctx);
  test_tmap(ctx);
  test_none(ctx);
  if (argc == 2) test_compiled(ctx, argv[1]);
  tls_context_free(ctx);
  printf("%d checks, %d failures\n", checks, failures);
  return failures != 0;
}
