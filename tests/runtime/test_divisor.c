/* test_divisor.c: launch-invariant divisors in libtlsrt, on the CPU (an
 * offline context).
 *
 * 1. rt_divisor_param against plain division: the kernel's computation
 *    (backend_ptx/emit_divmod.c: l = 32 - clz(d - 1), q = (a + mulhi(a, m))
 *    >> l for 0 <= a <= 2^31, the sign of a negative int32 put back, the
 *    remainder a - q d) for every d = 1..2^16, the powers of two, the
 *    values around them, 2^31 - 1 and random d, each at the dividends'
 *    boundaries (0, 1, around the multiples of d near 0 and near 2^31,
 *    INT32_MAX, INT32_MIN and their neighbours) and random ones.
 * 2. The hidden `param NAME u64 divisor` and its `divisor` line: the
 *    launch's arguments are the user's only; the value the plan's
 *    preparation computes (rt_prepare's divs); a divisor that is 0 or
 *    negative, above 2^31-1 or that cannot be evaluated refuses the launch
 *    with a message naming it; each refusal of a broken file.
 * Usage: test_divisor [PTX]: with PTX (tlsc's build of
 * examples/matmul_persistent.tls), the values for its two divisors. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"
#include "runtime/tlsrt.h"
#include "tests/unit.h"

/* ------------------------------------------------------ the arithmetic */

/* What the kernel computes from the hidden parameter p (int32 a, C's
 * truncating division and remainder). */
static void kernel_divmod(uint64_t p, int32_t a, int32_t *q, int32_t *r) {
  uint32_t m = (uint32_t)p, d = (uint32_t)(p >> 32);
  uint32_t dm1 = d - 1;
  int l = dm1 ? 32 - __builtin_clz(dm1) : 0;            /* clz.b32 of 0 is 32 */
  uint32_t ua = a < 0 ? 0u - (uint32_t)a : (uint32_t)a; /* abs.s32: INT_MIN as 2^31 */
  uint32_t hi = (uint32_t)(((uint64_t)ua * m) >> 32);
  uint32_t t = hi + ua; /* never wraps: checked below */
  uint32_t uq = l == 32 ? 0 : t >> l;
  uint32_t sign = a < 0 ? 0xFFFFFFFFu : 0;
  *q = (int32_t)((uq ^ sign) - sign);
  *r = (int32_t)((uint32_t)a - (uint32_t)*q * d);
  CHECK((uint64_t)hi + ua < ((uint64_t)1 << 32), "a + mulhi wraps: a=%d d=%u", a, d);
}

static uint64_t rng = 0x9E3779B97F4A7C15u;
static uint32_t next32(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}

static int bad_pairs;

static void check_pair(uint64_t p, uint32_t d, int32_t a) {
  int32_t q, r;
  kernel_divmod(p, a, &q, &r);
  int32_t wq = (a == INT32_MIN && d == 1) ? INT32_MIN : a / (int32_t)d;
  int32_t wr = (a == INT32_MIN && d == 1) ? 0 : a % (int32_t)d;
  if (q != wq || r != wr) {
    if (bad_pairs++ < 10)
      printf("FAIL %d / %u: got %d rem %d, want %d rem %d\n", a, d, q, r, wq, wr);
    failures++;
  }
  checks++;
}

static void check_divisor(uint32_t d, int nrandom) {
  uint64_t p = rt_divisor_param(d);
  CHECK((uint32_t)(p >> 32) == d, "the divisor in the high half: %u", d);
  static const int32_t fixed[] = {0,  1, 2, 3, INT32_MAX, INT32_MAX - 1, INT32_MIN, INT32_MIN + 1,
                                  -1, -2};
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) check_pair(p, d, fixed[i]);
  /* around the first and the last multiples of d */
  for (int64_t k = 0; k < 3; k++)
    for (int64_t e = -1; e <= 1; e++) {
      int64_t lo = k * d + e, hi = (INT32_MAX / d - k) * (int64_t)d + e;
      if (lo >= INT32_MIN && lo <= INT32_MAX) check_pair(p, d, (int32_t)lo);
      if (hi >= 0 && hi <= INT32_MAX) check_pair(p, d, (int32_t)hi);
      if (-hi >= INT32_MIN && -hi <= INT32_MAX) check_pair(p, d, (int32_t)-hi);
    }
  for (int i = 0; i < nrandom; i++) {
    uint32_t x = next32();
    check_pair(p, d, (int32_t)(x >> 1));           /* non-negative */
    check_pair(p, d, (int32_t)x);                  /* any sign */
    check_pair(p, d, (int32_t)(x % (4u * d + 1))); /* small quotients */
  }
}

static void test_arithmetic(void) {
  for (uint32_t d = 1; d <= 65536; d++) check_divisor(d, 24);
  for (int k = 0; k < 31; k++) {
    uint32_t p = (uint32_t)1 << k;
    check_divisor(p, 2000);
    if (p > 1) check_divisor(p - 1, 2000);
    if (p + 1 <= INT32_MAX) check_divisor(p + 1, 2000);
  }
  check_divisor(INT32_MAX, 100000);
  check_divisor(INT32_MAX - 1, 10000);
  check_divisor(46341, 10000); /* about 2^15.5 */
  for (int i = 0; i < 20000; i++) {
    uint32_t d = next32() >> (1 + next32() % 31);
    if (d) check_divisor(d, 64);
  }
  /* d = 1 and powers of two: no multiplier */
  CHECK(rt_divisor_param(1) == (uint64_t)1 << 32, "d = 1: m = 0");
  CHECK(rt_divisor_param(64) == (uint64_t)64 << 32, "d = 64: m = 0");
  /* d = 3: l = 2, m = ceil(2^34 / 3) - 2^32 = 0x55555556 */
  CHECK(rt_divisor_param(3) == ((uint64_t)3 << 32 | 0x55555556u), "d = 3: %016" PRIx64,
        rt_divisor_param(3));
}

/* ------------------------------------------------------ the metadata */

/* Entry K: n i32, p ptr f32, then the divisor __div0 ((n+3)/4 unless
 * `lines` replaces its two lines: the param line first, then the rest
 * after the grid) and the workspace __ws0; `ptx` the PTX parameter list. */
static char *file_with(const char *param, const char *lines, const char *ptx) {
  static const char head[] = "//@tls version 1\n//@tls entry K script=K block=32 smem=0\n"
                             "//@tls config\n//@tls param n i32\n//@tls param p ptr f32\n";
  static const char params[] = ".param .u32 K_param_n, .param .u64 K_param_p, .param .u64 "
                               "K_param___div0, .param .u64 K_param___ws0";
  const char *pl = param ? param
                         : "//@tls param __div0 u64 divisor\n"
                           "//@tls param __ws0 ptr i32 workspace\n";
  const char *l = lines ? lines
                        : "//@tls workspace __ws0 dtype=i32 dims=n clean=0\n"
                          "//@tls divisor __div0 (n+3)/4\n";
  const char *p = ptx ? ptx : params;
  size_t len = strlen(head) + strlen(pl) + strlen(l) + strlen(p) + 160;
  char *text = malloc(len);
  if (!text) abort();
  snprintf(text, len,
           "%s%s//@tls grid n 1 1\n%s//@tls end\n.version 8.0\n.target sm_90a\n"
           ".visible .entry K(%s)\n{\nret;\n}\n",
           head, pl, l, p);
  return text;
}

static tls_module *load(tls_context *ctx, const char *text, tls_status *st) {
  tls_module *mod = NULL;
  *st = tls_module_load_string(ctx, text, "dv", &mod);
  return mod;
}

static void expect_error(tls_context *ctx, const char *param, const char *lines, const char *ptx,
                         const char *msg) {
  char *text = file_with(param, lines, ptx);
  tls_status st;
  tls_module *mod = load(ctx, text, &st);
  free(text);
  CHECK(st == TLS_ERR_FORMAT && !mod && strstr(tls_last_error(ctx), msg),
        "want TLS_ERR_FORMAT / '%s', got %s / '%s'", msg, tls_error_string(st),
        tls_last_error(ctx));
  tls_module_free(mod);
}

enum { PTR = 0x10000 };

static tls_status prepare(const tls_kernel *k, int32_t n, uint64_t *divs) {
  tls_arg args[2] = {tls_i32(n), tls_ptr(PTR)};
  tls_launch_plan plan;
  return rt_prepare(k, args, 2, &plan, NULL, divs);
}

static void test_metadata(tls_context *ctx) {
  char *text = file_with(NULL, NULL, NULL);
  tls_status st;
  tls_module *mod = load(ctx, text, &st);
  free(text);
  CHECK(st == TLS_OK, "load: %s", tls_last_error(ctx));
  const tls_kernel *k = mod ? tls_kernel_find(mod, "K") : NULL;
  if (!k) return;
  /* hidden: the user's parameters only */
  CHECK(tls_kernel_num_params(k) == 2 && !tls_kernel_param_name(k, 2), "2 user parameters");
  CHECK(k->ndivs == 1 && !strcmp(k->divs[0].name, "__div0") && k->nws == 1, "one divisor");
  /* n = 1000: the divisor is 250 */
  uint64_t divs[KERNEL_MAX_DIVISORS] = {0};
  st = prepare(k, 1000, divs);
  CHECK(st == TLS_OK && divs[0] == rt_divisor_param(250) && divs[0] >> 32 == 250,
        "n=1000: %s, %016" PRIx64, tls_last_error(ctx), divs[0]);
  /* 250: l = 8, m = ceil(2^40 / 250) - 2^32 = 4398046512 - 2^32 = 0x0624dd30 */
  CHECK(divs[0] == ((uint64_t)250 << 32 | 0x0624DD30u), "the value for 250: %016" PRIx64, divs[0]);
  tls_launch_plan plan;
  tls_arg args[2] = {tls_i32(1000), tls_ptr(PTR)};
  CHECK(tls_prepare_launch(k, args, 2, &plan) == TLS_OK && plan.grid[0] == 1000,
        "tls_prepare_launch: %s", tls_last_error(ctx));
  /* n = -3: the divisor is 0: refused, not a division by zero on the GPU */
  st = tls_prepare_launch(k, (tls_arg[]){tls_i32(-3), tls_ptr(PTR)}, 2, &plan);
  CHECK(st == TLS_ERR_ARG_VALUE &&
            !strcmp(tls_last_error(ctx),
                    "launch of 'K' refused: the kernel divides by (n+3)/4, which is 0 for these "
                    "arguments (n=-3); it must be 1 to 2147483647"),
        "n=-3: %s / '%s'", tls_error_string(st), tls_last_error(ctx));
  st = prepare(k, -100, divs);
  CHECK(st == TLS_ERR_ARG_VALUE && strstr(tls_last_error(ctx), "which is -24 for these"),
        "n=-100: %s / '%s'", tls_error_string(st), tls_last_error(ctx));
  /* offline: refused after the checks */
  st = tls_launch(k, args, 2, NULL);
  CHECK(st == TLS_ERR_NO_DEVICE, "offline launch: %s", tls_error_string(st));
  tls_module_free(mod);

  /* a divisor above 2^31-1, and one that cannot be evaluated */
  text = file_with(NULL,
                   "//@tls workspace __ws0 dtype=i32 dims=n clean=0\n"
                   "//@tls divisor __div0 n*n\n",
                   NULL);
  mod = load(ctx, text, &st);
  free(text);
  k = mod ? tls_kernel_find(mod, "K") : NULL;
  CHECK(k && prepare(k, 46341, divs) == TLS_ERR_ARG_VALUE &&
            strstr(tls_last_error(ctx), "which is 2147488281 for these arguments (n=46341)"),
        "n*n: '%s'", tls_last_error(ctx));
  CHECK(k && prepare(k, 46340, divs) == TLS_OK && divs[0] >> 32 == 46340u * 46340u, "46340^2");
  tls_module_free(mod);
  text = file_with(NULL,
                   "//@tls workspace __ws0 dtype=i32 dims=n clean=0\n"
                   "//@tls divisor __div0 100/n\n",
                   NULL);
  mod = load(ctx, text, &st);
  free(text);
  k = mod ? tls_kernel_find(mod, "K") : NULL;
  CHECK(k && prepare(k, 0, divs) == TLS_ERR_EXPR &&
            strstr(tls_last_error(ctx), "the kernel divides by 100/n, which cannot be evaluated "
                                        "for these arguments (n=0): division by zero"),
        "100/0: '%s'", tls_last_error(ctx));
  tls_module_free(mod);
}

static void test_refusals(tls_context *ctx) {
  expect_error(ctx, NULL, "//@tls workspace __ws0 dtype=i32 dims=n clean=0\n", NULL,
               "dv:6: error: divisor parameter '__div0' has no 'divisor' line");
  expect_error(ctx, NULL,
               "//@tls workspace __ws0 dtype=i32 dims=n clean=0\n"
               "//@tls divisor __div0 n\n//@tls divisor __div0 n\n",
               NULL, "dv:11: error: second 'divisor' line for '__div0' (line 10 has the first)");
  expect_error(ctx, NULL, "//@tls workspace __ws0 dtype=i32 dims=n clean=0\n//@tls divisor n n\n",
               NULL, "divisor 'n' is not a divisor parameter declared before it");
  expect_error(ctx, NULL,
               "//@tls workspace __ws0 dtype=i32 dims=n clean=0\n//@tls divisor __div0\n", NULL,
               "'divisor' needs a parameter name and an expression");
  expect_error(ctx, NULL,
               "//@tls workspace __ws0 dtype=i32 dims=n clean=0\n//@tls divisor __div0 n+q\n", NULL,
               "dv:10: error: bad divisor expression 'n+q'");
  expect_error(ctx, "//@tls param __ws0 ptr i32 workspace\n//@tls param __div0 u64 divisor\n", NULL,
               NULL, "divisor parameter '__div0' follows workspace parameter '__ws0'");
  expect_error(ctx,
               "//@tls param __div0 u64 divisor\n//@tls param q i32\n"
               "//@tls param __ws0 ptr i32 workspace\n",
               NULL, NULL, "parameter 'q' follows divisor parameter '__div0'");
  expect_error(ctx,
               "//@tls param __div0 u64 divisor\n//@tls param __div0 u64 divisor\n"
               "//@tls param __ws0 ptr i32 workspace\n",
               NULL, NULL, "parameter '__div0' appears twice");
  /* the PTX must take it, 8 bytes, named for it, before the workspace */
  expect_error(ctx, NULL, NULL,
               ".param .u32 K_param_n, .param .u64 K_param_p, .param .u64 K_param___ws0",
               "'K' takes 3 PTX parameters but the metadata declares 4 (2 params + 1 divisors "
               "+ 1 workspaces + 0 tensor maps)");
  expect_error(ctx, NULL, NULL,
               ".param .u32 K_param_n, .param .u64 K_param_p, .param .u64 K_param___ws0, "
               ".param .u64 K_param___div0",
               "PTX parameter 2 of 'K' is named 'K_param___ws0' but the metadata declares "
               "divisor parameter '__div0' there");
  expect_error(ctx, NULL, NULL,
               ".param .u32 K_param_n, .param .u64 K_param_p, .param .u32 K_param___div0, "
               ".param .u64 K_param___ws0",
               "PTX parameter 2 of 'K' is not the 8-byte value the metadata declares");
}

/* tlsc's matmul_persistent: __div0 = cdiv(m, 128) * 4, __div1 = the last
 * group's width (cdiv(n, 256) % 4, or 4 when that is 0). */
static void test_compiled(tls_context *ctx, const char *path) {
  tls_module *mod = NULL;
  tls_status st = tls_module_load_file(ctx, path, &mod);
  CHECK(st == TLS_OK, "load %s: %s", path, tls_last_error(ctx));
  const tls_kernel *k = mod ? tls_kernel_find(mod, "MatmulPersistentV5") : NULL;
  if (!k) return;
  CHECK(tls_kernel_num_params(k) == 6 && k->ndivs == 2, "6 user parameters, 2 divisors");
  static const struct {
    int32_t m, n;
    uint32_t d0, d1;
  } cases[] = {{1000, 1300, 32, 2}, {4096, 4096, 128, 4}, {8192, 8192, 256, 4}, {1, 257, 4, 2}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    tls_arg args[6] = {tls_i32(cases[i].m), tls_i32(cases[i].n), tls_i32(64),
                       tls_ptr(PTR),        tls_ptr(PTR),        tls_ptr(PTR)};
    tls_launch_plan plan;
    uint64_t divs[KERNEL_MAX_DIVISORS] = {0};
    st = rt_prepare(k, args, 6, &plan, NULL, divs);
    CHECK(st == TLS_OK && divs[0] == rt_divisor_param(cases[i].d0) &&
              divs[1] == rt_divisor_param(cases[i].d1),
          "m=%d n=%d: %s; %016" PRIx64 " %016" PRIx64, cases[i].m, cases[i].n, tls_last_error(ctx),
          divs[0], divs[1]);
  }
  tls_module_free(mod);
}

int main(int argc, char **argv) {
  if (argc > 2) return fprintf(stderr, "usage: test_divisor [PTX]\n"), 2;
  test_arithmetic();
  tls_context *ctx;
  tls_init_offline(&ctx);
  test_metadata(ctx);
  test_refusals(ctx);
  if (argc == 2) test_compiled(ctx, argv[1]);
  tls_context_free(ctx);
  printf("%d checks, %d failures\n", checks, failures);
  return failures != 0;
}
