/* test_require.c: launch-time requirements in libtlsrt, on the CPU (an
 * offline context): the expression grammar's comparisons, logic and their
 * precedence; the `require` metadata line and its refusals; launches that
 * break a requirement refused (tls_prepare_launch, tls_launch), and ones
 * that meet it accepted; tls_autotune skipping entries the arguments break.
 * Usage: test_require [PTX]: with PTX (tlsc's build of
 * tests/require/scripts/multiple.tls), the launch checks on that file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"
#include "runtime/tlsrt.h"
#include "tests/runtime/expr_check.h"
#include "tests/unit.h"

/* ------------------------------------------------------------ expressions */

/* Comparisons are 1 or 0, below + and -: 1+2==3 is (1+2)==3. */
static void test_comparisons(void) {
  expect_value("m==n", 3, 3, 1);
  expect_value("m==n", 3, 4, 0);
  expect_value("m!=n", 3, 4, 1);
  expect_value("m<n", 3, 4, 1);
  expect_value("m<n", 4, 4, 0);
  expect_value("m<=n", 4, 4, 1);
  expect_value("m>n", 5, 4, 1);
  expect_value("m>=n", 3, 4, 0);
  expect_value("1+2==3", 0, 0, 1);
  expect_value("2*3>=6", 0, 0, 1);
  expect_value("m<-n", -5, 4, 1);
  expect_value("(m%64)==0", 128, 0, 1);
  expect_value("m%64==0", 100, 0, 0);
  expect_value("(m<n)+(n<m)*10", 9, 4, 10);
  expect_value("n>=4000000000", 0, 4000000000ll, 1);
}

/* ! binds like unary -; && above ||; both give 0 or 1; the right operand
 * runs only when the left one does not decide (n==0||m%n==0 at n=0). */
static void test_logic(void) {
  expect_value("!0", 0, 0, 1);
  expect_value("!7", 0, 0, 0);
  expect_value("!!7", 0, 0, 1);
  expect_value("-!0", 0, 0, -1);
  expect_value("!m+1", 5, 0, 1); /* (!m)+1, not !(m+1) */
  expect_value("2&&3", 0, 0, 1);
  expect_value("0||5", 0, 0, 1);
  expect_value("0&&1", 0, 0, 0);
  expect_value("0||0", 0, 0, 0);
  expect_value("1||0&&0", 0, 0, 1); /* 1||(0&&0), not (1||0)&&0 */
  expect_value("0&&0||1", 0, 0, 1);
  expect_value("m>0&&!(m>4096)", 64, 0, 1);
  expect_value("m>0&&!(m>4096)", 5000, 0, 0);
  expect_value("n==0||m%n==0", 7, 0, 1);
  expect_value("n!=0&&m/n>1", 7, 0, 0);
  expect_value("n==0||m%n==0", 7, 2, 0);
  expect_value("1&&1&&1&&0||1&&1", 0, 0, 1);
  expect_value("(!!(m>1))*n+(!(m>1))*64", 2, 100, 100); /* tlsc's select */
  expect_value("(!!(m>1))*n+(!(m>1))*64", 1, 100, 64);
  expect_value("min(m>n,5)+max(m&&n,0)", 3, 1, 2);
  expect_error("n==0&&m%n==0", 7, 0, "division by zero");
  expect_error("m<n<3", 0, 0, "comparisons do not chain");
  expect_error("m==n!=1", 0, 0, "comparisons do not chain");
  expect_error("m=n", 0, 0, "unexpected character '='");
  expect_error("m&n", 0, 0, "unexpected character '&'");
  expect_error("m|n", 0, 0, "unexpected character '|'");
  expect_error("m==", 0, 0, "expression ends early");
  expect_error("m&&", 0, 0, "expression ends early");
  expect_error("!=m", 0, 0, "unexpected character '!'");
  expect_error("!", 0, 0, "expression ends early");
}

/* 64 instructions compile (&& and || take two each), 65 do not; the stack
 * bound holds through the jumps. */
static void test_code_limits(void) {
  char text[512] = "m";
  for (int i = 0; i < 21; i++) strcat(text, "&&m"); /* 1 + 21 * 3 = 64 */
  expect_value(text, 1, 0, 1);
  strcat(text, "+0"); /* 66 */
  expect_error(text, 1, 0, "expression too long");
  char right[512] = "";
  for (int i = 0; i < 20; i++) strcat(right, "m||(");
  strcat(right, "m");
  for (int i = 0; i < 20; i++) strcat(right, ")");
  expect_value(right, 0, 0, 0);
}

/* ------------------------------------------------------------ metadata */

/* Entry K (a, b i32; p ptr f32) with the given `require` lines (each
 * starting "//@tls require "), then E, whose arguments are the same. */
static char *file_with(const char *requires) {
  static const char head[] = "//@tls version 1\n//@tls entry K script=K block=32 smem=0\n";
  static const char params[] =
      "//@tls param a i32\n//@tls param b i32\n//@tls param p ptr f32\n//@tls grid a 1 1\n";
  static const char tail[] =
      "//@tls entry E script=K block=32 smem=0\n//@tls config\n//@tls fixed a=64\n"
      "//@tls param a i32\n//@tls param b i32\n//@tls param p ptr f32\n//@tls grid 64 1 1\n"
      "//@tls end\n.version 8.0\n.target sm_90a\n"
      ".visible .entry K(.param .u32 K_param_a, .param .u32 K_param_b, .param .u64 K_param_p)\n"
      "{\nret;\n}\n"
      ".visible .entry E(.param .u32 E_param_a, .param .u32 E_param_b, .param .u64 E_param_p)\n"
      "{\nret;\n}\n";
  size_t len = strlen(head) + strlen(params) + strlen(requires) + strlen(tail) + 1;
  char *text = malloc(len);
  if (!text) abort();
  snprintf(text, len, "%s%s%s%s", head, params, requires, tail);
  return text;
}

static tls_module *load_with(tls_context *ctx, const char *requires, tls_status *st) {
  char *text = file_with(requires);
  tls_module *mod = NULL;
  *st = tls_module_load_string(ctx, text, "req", &mod);
  free(text);
  return mod;
}

static void expect_format_error(tls_context *ctx, const char *requires, const char *msg) {
  tls_status st;
  tls_module *mod = load_with(ctx, requires, &st);
  CHECK(st == TLS_ERR_FORMAT && !mod && strstr(tls_last_error(ctx), msg),
        "%s: want TLS_ERR_FORMAT / '%s', got %s / '%s'", requires, msg, tls_error_string(st),
        tls_last_error(ctx));
  tls_module_free(mod);
}

/* The expression may name parameters declared after it; the message is the
 * rest of the line, inner spaces kept. */
static void test_require_lines(tls_context *ctx) {
  static const char file[] = "//@tls version 1\n//@tls entry K script=K block=32 smem=0\n"
                             "//@tls require (a%64)==0 a  must be a multiple of 64\n"
                             "//@tls require b>0\n"
                             "//@tls param a i32\n//@tls param b i32\n//@tls grid a 1 1\n"
                             "//@tls end\n.version 8.0\n.target sm_90a\n"
                             ".visible .entry K(.param .u32 K_param_a, .param .u32 K_param_b)\n"
                             "{\nret;\n}\n";
  tls_module *mod = NULL;
  tls_status st = tls_module_load_string(ctx, file, "req", &mod);
  CHECK(st == TLS_OK, "require before its parameters: %s", tls_last_error(ctx));
  const tls_kernel *k = mod ? tls_kernel_find(mod, "K") : NULL;
  CHECK(k && k->nreqs == 2, "two requirements, got %d", k ? k->nreqs : -1);
  if (k && k->nreqs == 2) {
    CHECK(!strcmp(k->reqs[0].cond.text, "(a%64)==0") && k->reqs[0].line == 3, "text '%s' line %d",
          k->reqs[0].cond.text, k->reqs[0].line);
    CHECK(!strcmp(k->reqs[0].msg, "a  must be a multiple of 64"), "message '%s'", k->reqs[0].msg);
    CHECK(!strcmp(k->reqs[1].msg, ""), "no message: '%s'", k->reqs[1].msg);
  }
  tls_module_free(mod);
  expect_format_error(ctx, "//@tls require\n", "req:7: error: 'require' needs an expression");
  expect_format_error(ctx, "//@tls require c>0 c\n",
                      "req:7: error: bad require expression 'c>0': unknown parameter 'c'");
  expect_format_error(ctx, "//@tls require p>0 p\n",
                      "bad require expression 'p>0': parameter 'p' is not an integer");
  expect_format_error(ctx, "//@tls require a<b<3 x\n", "comparisons do not chain");
  char many[1024] = "";
  for (int i = 0; i < 17; i++) strcat(many, "//@tls require a>0 a is positive\n");
  expect_format_error(ctx, many,
                      "req:23: error: entry 'K' has too many 'require' lines (at most 16)");
  mod = NULL;
  st = tls_module_load_string(ctx, "//@tls version 1\n//@tls require a>0 x\n//@tls end\n", "req",
                              &mod);
  CHECK(st == TLS_ERR_FORMAT &&
            strstr(tls_last_error(ctx), "req:2: error: 'require' outside an entry"),
        "outside an entry: %s", tls_last_error(ctx));
  tls_module_free(mod);
}

/* -------------------------------------------------------------- launch */

enum { PTR = 0x10000 };

static void set_args(tls_arg *args, int32_t a, int32_t b) {
  args[0] = tls_i32(a), args[1] = tls_i32(b), args[2] = tls_ptr(PTR);
}

/* A launch of `name` with a and b: refused with `want` and exactly `msg`,
 * by tls_prepare_launch and by tls_launch before any driver call. */
static void expect_refused(tls_context *ctx, const tls_module *mod, const char *name, int32_t a,
                           int32_t b, tls_status want, const char *msg) {
  const tls_kernel *k = tls_kernel_find(mod, name);
  tls_arg args[3];
  tls_launch_plan plan;
  set_args(args, a, b);
  tls_status st = k ? tls_prepare_launch(k, args, 3, &plan) : TLS_ERR_INVALID;
  CHECK(st == want && !strcmp(tls_last_error(ctx), msg),
        "%s(%d, %d): want %s / '%s', got %s / '%s'", name, a, b, tls_error_string(want), msg,
        tls_error_string(st), tls_last_error(ctx));
  st = k ? tls_launch(k, args, 3, NULL) : TLS_ERR_INVALID;
  CHECK(st == want, "tls_launch: want %s, got %s", tls_error_string(want), tls_error_string(st));
}

static void expect_accepted(tls_context *ctx, const tls_module *mod, const char *name, int32_t a,
                            int32_t b) {
  const tls_kernel *k = tls_kernel_find(mod, name);
  tls_arg args[3];
  tls_launch_plan plan;
  set_args(args, a, b);
  tls_status st = k ? tls_prepare_launch(k, args, 3, &plan) : TLS_ERR_INVALID;
  CHECK(st == TLS_OK, "%s(%d, %d): want it accepted, got %s / '%s'", name, a, b,
        tls_error_string(st), tls_last_error(ctx));
}

/* K requires a%64==0 and b!=0&&a%b==0 (b divides a); E fixes a=64 and
 * has none: a launch of K with a=64 runs E, so only E's lines apply. */
static void test_launch(tls_context *ctx) {
  tls_status st;
  tls_module *mod = load_with(ctx,
                              "//@tls require (a%64)==0 a must be a multiple of 64\n"
                              "//@tls require b==0||(a%b)==0\n//@tls require a/b>=1 a at least b\n",
                              &st);
  CHECK(st == TLS_OK, "load: %s", tls_last_error(ctx));
  if (!mod) return;
  expect_accepted(ctx, mod, "K", 128, 64);
  expect_accepted(ctx, mod, "K", 128, 128);
  expect_refused(ctx, mod, "K", 100, 4, TLS_ERR_ARG_VALUE,
                 "launch of 'K' refused: static_assert((a%64)==0) fails for these arguments "
                 "(a=100): a must be a multiple of 64");
  expect_refused(ctx, mod, "K", 128, 48, TLS_ERR_ARG_VALUE,
                 "launch of 'K' refused: static_assert(b==0||(a%b)==0) fails for these "
                 "arguments (b=48, a=128)");
  /* b==0 passes the second line (|| skips a%0), the third divides by 0. */
  expect_refused(ctx, mod, "K", 128, 0, TLS_ERR_EXPR,
                 "launch of 'K' refused: static_assert(a/b>=1) cannot be evaluated for these "
                 "arguments (a=128, b=0): division by zero (128 / 0); a at least b");
  /* a=64 runs E, which has no requirement: b=0 is accepted. */
  expect_accepted(ctx, mod, "K", 64, 0);
  const tls_kernel *k = tls_kernel_find(mod, "K");
  tls_arg args[3];
  set_args(args, 100, 4);
  char why[512] = "";
  CHECK(k && !rt_requires_hold(k, args, 3, why, sizeof why) &&
            strstr(why, "launch of 'K' refused: static_assert((a%64)==0) fails"),
        "rt_requires_hold: '%s'", why);
  set_args(args, 128, 64);
  CHECK(k && rt_requires_hold(k, args, 3, why, sizeof why), "holds for 128, 64");
  CHECK(k && rt_requires_hold(k, args, 2, why, sizeof why), "a wrong count is the launch's to say");
  tls_module_free(mod);
}

/* Two autotune points of script K: the arguments break both (an error
 * that says why, before the offline check) or one (offline: no GPU). */
static void test_autotune(tls_context *ctx) {
  static const char file[] =
      "//@tls version 1\n"
      "//@tls entry K1 script=K block=32 smem=0\n//@tls config s=1\n"
      "//@tls param a i32\n//@tls grid a 1 1\n//@tls require a%64==0 a must be a multiple of 64\n"
      "//@tls entry K2 script=K block=32 smem=0\n//@tls config s=2\n"
      "//@tls param a i32\n//@tls grid a 1 1\n//@tls require a%32==0 a must be a multiple of 32\n"
      "//@tls end\n.version 8.0\n.target sm_90a\n"
      ".visible .entry K1(.param .u32 K1_param_a)\n{\nret;\n}\n"
      ".visible .entry K2(.param .u32 K2_param_a)\n{\nret;\n}\n";
  tls_module *mod = NULL;
  CHECK(tls_module_load_string(ctx, file, "tune", &mod) == TLS_OK, "load: %s", tls_last_error(ctx));
  if (!mod) return;
  tls_arg a = tls_i32(48);
  const tls_kernel *best = NULL;
  float ms = 0, each[2] = {0, 0};
  tls_status st = tls_autotune(mod, "K", &a, 1, NULL, 3, &best, &ms, each);
  CHECK(st == TLS_ERR_ARG_VALUE && !best &&
            !strcmp(tls_last_error(ctx),
                    "tls_autotune: every entry of script 'K' refuses these arguments (2 skipped); "
                    "the first: launch of 'K1' refused: static_assert(a%64==0) fails for these "
                    "arguments (a=48): a must be a multiple of 64"),
        "every entry skipped: %s / '%s'", tls_error_string(st), tls_last_error(ctx));
  a = tls_i32(96); /* K1 skipped, K2 would be timed */
  st = tls_autotune(mod, "K", &a, 1, NULL, 3, &best, &ms, each);
  CHECK(st == TLS_ERR_NO_DEVICE && !best, "one entry left, offline: %s / '%s'",
        tls_error_string(st), tls_last_error(ctx));
  /* with options: the same answers, the flush buffer never allocated
   * offline; no options or no runs are refused */
  tls_autotune_options opts = {.reps = 3, .flush_bytes = 256 << 20};
  st = tls_autotune_ex(mod, "K", &a, 1, NULL, &opts, &best, &ms, each);
  CHECK(st == TLS_ERR_NO_DEVICE && !best, "tls_autotune_ex offline: %s / '%s'",
        tls_error_string(st), tls_last_error(ctx));
  a = tls_i32(48);
  st = tls_autotune_ex(mod, "K", &a, 1, NULL, &opts, &best, &ms, each);
  CHECK(st == TLS_ERR_ARG_VALUE && !best, "tls_autotune_ex, every entry skipped: %s",
        tls_error_string(st));
  CHECK(tls_autotune_ex(mod, "K", &a, 1, NULL, NULL, &best, &ms, each) == TLS_ERR_INVALID &&
            !strcmp(tls_last_error(ctx), "tls_autotune: bad argument"),
        "no options: '%s'", tls_last_error(ctx));
  opts.reps = 0;
  CHECK(tls_autotune_ex(mod, "K", &a, 1, NULL, &opts, &best, &ms, each) == TLS_ERR_INVALID,
        "no runs: '%s'", tls_last_error(ctx));
  tls_module_free(mod);
}

/* tlsc's build of tests/require/scripts/multiple.tls: n % 64 == 0. */
static void test_compiled(tls_context *ctx, const char *path) {
  tls_module *mod = NULL;
  tls_status st = tls_module_load_file(ctx, path, &mod);
  CHECK(st == TLS_OK, "loading %s: %s", path, tls_last_error(ctx));
  const tls_kernel *k = mod ? tls_kernel_find(mod, "Rows") : NULL;
  CHECK(k && k->nreqs == 1, "one requirement in %s", path);
  tls_arg args[3] = {tls_i32(4), tls_i32(128), tls_ptr(PTR)};
  tls_launch_plan plan;
  CHECK(k && tls_prepare_launch(k, args, 3, &plan) == TLS_OK, "n=128: %s", tls_last_error(ctx));
  args[1] = tls_i32(100);
  CHECK(k && tls_prepare_launch(k, args, 3, &plan) == TLS_ERR_ARG_VALUE &&
            !strcmp(tls_last_error(ctx),
                    "launch of 'Rows' refused: static_assert((n%64)==0) fails for these arguments "
                    "(n=100): n must be a multiple of 64"),
        "n=100: %s", tls_last_error(ctx));
  tls_module_free(mod);
}

int main(int argc, char **argv) {
  if (argc > 2) return fprintf(stderr, "usage: test_require [PTX]\n"), 2;
  test_comparisons();
  test_logic();
  test_code_limits();
  tls_context *ctx;
  tls_init_offline(&ctx);
  test_require_lines(ctx);
  test_launch(ctx);
  test_autotune(ctx);
  if (argc == 2) test_compiled(ctx, argv[1]);
  tls_context_free(ctx);
  printf("%d checks, %d failures\n", checks, failures);
  return failures != 0;
}
