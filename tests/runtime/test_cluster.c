/* test_cluster.c: libtlsrt's cluster launches on the CPU: the metadata's
 * `cluster X Y Z` line (docs/format.md), the plan's cluster dimensions, the
 * refusal of a grid that is not a multiple of the cluster, and the refusal
 * of malformed cluster lines. Usage: test_cluster */
#include <stdio.h>
#include <string.h>

#include "runtime/tlsrt.h"
#include "tests/unit.h"

/* A one-entry file: metadata lines `meta` between the param and the end. */
static tls_status load(tls_context *ctx, const char *meta, tls_module **mod) {
  char text[2048];
  snprintf(text, sizeof text,
           "//@tls version 1\n//@tls entry K script=S block=128 smem=0\n//@tls param m i32\n"
           "%s//@tls end\n.version 8.6\n.target sm_90a\n.address_size 64\n"
           ".visible .entry K(\n\t.param .u32 K_param_m\n)\n.maxntid 128, 1, 1\n"
           ".reqnctapercluster 2, 1, 1\n.explicitcluster\n{\n\tret;\n}\n",
           meta);
  *mod = NULL;
  return tls_module_load_string(ctx, text, "cluster", mod);
}

static void test_plan(tls_context *ctx) {
  tls_module *mod;
  tls_status st = load(ctx, "//@tls grid 2*m 3 1\n//@tls cluster 2 1 1\n", &mod);
  CHECK(st == TLS_OK, "load: %s", tls_last_error(ctx));
  if (st) return;
  const tls_kernel *k = tls_kernel_find(mod, "K");
  tls_arg args[1] = {tls_i32(5)};
  tls_launch_plan plan;
  st = tls_prepare_launch(k, args, 1, &plan);
  CHECK(st == TLS_OK, "prepare: %s", tls_last_error(ctx));
  CHECK(plan.grid[0] == 10 && plan.grid[1] == 3 && plan.cluster[0] == 2 && plan.cluster[1] == 1 &&
            plan.cluster[2] == 1,
        "grid %u %u, cluster %u %u %u", plan.grid[0], plan.grid[1], plan.cluster[0],
        plan.cluster[1], plan.cluster[2]);
  tls_module_free(mod);

  /* m = 5 gives 5 blocks in x: two and a half clusters */
  st = load(ctx, "//@tls grid m 1 1\n//@tls cluster 2 1 1\n", &mod);
  CHECK(st == TLS_OK, "load: %s", tls_last_error(ctx));
  if (st) return;
  k = tls_kernel_find(mod, "K");
  st = tls_prepare_launch(k, args, 1, &plan);
  CHECK(st == TLS_ERR_ARG_VALUE &&
            strstr(tls_last_error(ctx), "grid x = m is 5, not a multiple of the cluster's 2"),
        "odd grid: %s / %s", tls_error_string(st), tls_last_error(ctx));
  CHECK(tls_launch(k, args, 1, NULL) == TLS_ERR_ARG_VALUE, "tls_launch refuses it too");
  args[0] = tls_i32(4);
  CHECK(tls_prepare_launch(k, args, 1, &plan) == TLS_OK && plan.cluster[0] == 2, "an even grid: %s",
        tls_last_error(ctx));
  tls_module_free(mod);

  /* no cluster line: clusters of one block */
  st = load(ctx, "//@tls grid m 1 1\n", &mod);
  CHECK(st == TLS_OK, "load: %s", tls_last_error(ctx));
  if (st) return;
  args[0] = tls_i32(5);
  CHECK(tls_prepare_launch(tls_kernel_find(mod, "K"), args, 1, &plan) == TLS_OK &&
            plan.cluster[0] == 1 && plan.cluster[1] == 1 && plan.cluster[2] == 1,
        "no cluster line");
  tls_module_free(mod);
}

static void expect_bad(tls_context *ctx, const char *meta, const char *msg) {
  tls_module *mod;
  tls_status st = load(ctx, meta, &mod);
  CHECK(st == TLS_ERR_FORMAT && strstr(tls_last_error(ctx), msg), "'%s': want '%s', got %s '%s'",
        meta, msg, tls_error_string(st), tls_last_error(ctx));
  tls_module_free(mod);
}

static void test_bad_lines(tls_context *ctx) {
  expect_bad(ctx, "//@tls grid 2 1 1\n//@tls cluster 3 3 1\n",
             "a cluster of 9 blocks: at most 8 (the portable cluster size)");
  expect_bad(ctx, "//@tls grid 2 1 1\n//@tls cluster 0 1 1\n", "bad cluster dimension '0'");
  expect_bad(ctx, "//@tls grid 2 1 1\n//@tls cluster 2 1\n", "'cluster' needs three integers");
  expect_bad(ctx, "//@tls grid 2 1 1\n//@tls cluster 2 1 1\n//@tls cluster 2 1 1\n",
             "second 'cluster' line in entry 'K'");
  expect_bad(ctx, "//@tls grid 2 1 1\n//@tls cluster m 1 1\n", "bad cluster dimension 'm'");
}

int main(void) {
  tls_context *ctx;
  tls_init_offline(&ctx);
  test_plan(ctx);
  test_bad_lines(ctx);
  tls_context_free(ctx);
  printf("%d checks, %d failures\n", checks, failures);
  return failures != 0;
}
