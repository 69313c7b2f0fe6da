/* test_fake_launch.c: libtlsrt's launch path against tests/runtime/
 * fake_cuda.c, a driver that records what it is asked to do: clean
 * workspaces are zeroed once, as Tilus keeps them, not before every
 * launch. The bytes zeroed are those not known to be zeros: all the clean
 * part of a new buffer, none on a launch that finds them zeros, and again
 * those that an unclean workspace of an earlier launch used. Tensor maps
 * are encoded once for the same inputs; a cluster entry launches with its
 * cluster dimensions. Usage:
 * test_fake_launch FAKE_LIB (the fake driver's path). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/tlsrt.h"
#include "tests/runtime/fake_driver.h"
#include "tests/unit.h"

/* Entry K: a i32, b i64, p ptr f32, then __ws0 (int32 [cdiv(a, 64), b],
 * clean) and __ws1 (float32 [2a], not clean): __ws1 follows __ws0. */
static const char file[] =
    "//@tls version 1\n//@tls entry K script=K block=32 smem=0\n//@tls config\n"
    "//@tls param a i32\n//@tls param b i64\n//@tls param p ptr f32\n"
    "//@tls param __ws0 ptr i32 workspace\n//@tls param __ws1 ptr f32 workspace\n"
    "//@tls grid a 1 1\n//@tls workspace __ws0 dtype=i32 dims=(a+63)/64,b clean=1\n"
    "//@tls workspace __ws1 dtype=f32 dims=a*2 clean=0\n//@tls end\n"
    ".version 8.0\n.target sm_90a\n.visible .entry K(.param .u32 K_param_a, .param .u64 "
    "K_param_b, .param .u64 K_param_p, .param .u64 K_param___ws0, .param .u64 "
    "K_param___ws1)\n{\nret;\n}\n";

static unsigned long long base; /* the workspace buffer's address */

/* Launches K with (a, b) and checks what the driver was asked: an
 * allocation of at least the plan's bytes when `grows`, then a memset of
 * bytes [from, to) of the buffer (none when from == to), then the launch. */
static void launch(const tls_kernel *k, int a, long long b, int grows, unsigned long long from,
                   unsigned long long to) {
  tls_arg args[3] = {tls_i32(a), tls_i64(b), tls_ptr(0x10000)};
  tls_launch_plan plan;
  fake_log_clear();
  CHECK(tls_prepare_launch(k, args, 3, &plan) == TLS_OK, "plan (%d, %lld)", a, b);
  tls_status st = tls_launch(k, args, 3, NULL);
  CHECK(st == TLS_OK, "launch (%d, %lld): %s", a, b, tls_error_string(st));
  const char *log = fake_log, *at = strstr(log, "alloc ");
  unsigned long long bytes = 0;
  CHECK(!at == !grows, "(%d, %lld): %s buffer expected, the driver saw:\n%s", a, b,
        grows ? "a new" : "no new", log);
  if (at && sscanf(at, "alloc %llu -> %llu", &bytes, &base) == 2)
    CHECK(bytes >= plan.workspace_bytes, "buffer of %llu bytes for %llu", bytes,
          (unsigned long long)plan.workspace_bytes);
  char want[128];
  if (from < to) {
    snprintf(want, sizeof want, "memset %llu %llu\nlaunch", base + from, to - from);
    CHECK(strstr(log, want) != NULL, "(%d, %lld): want '%s', the driver saw:\n%s", a, b, want, log);
  } else {
    CHECK(!strstr(log, "memset"), "(%d, %lld): no memset wanted, the driver saw:\n%s", a, b, log);
  }
  CHECK(strstr(log, "launch ") != NULL, "(%d, %lld): no launch", a, b);
}

/* Loads `text` into *mod and finds its entry `name`; NULL (a failed
 * check) when either fails. */
static const tls_kernel *load_entry(tls_context *ctx, const char *text, const char *name,
                                    tls_module **mod) {
  *mod = NULL;
  tls_status st = tls_module_load_string(ctx, text, name, mod);
  CHECK(st == TLS_OK, "load %s: %s", name, tls_last_error(ctx));
  return *mod ? tls_kernel_find(*mod, name) : NULL;
}

static unsigned long long clean_bytes(const tls_kernel *k, int a, long long b) {
  tls_arg args[3] = {tls_i32(a), tls_i64(b), tls_ptr(0x10000)};
  tls_launch_plan plan;
  if (tls_prepare_launch(k, args, 3, &plan) != TLS_OK) return 0;
  return plan.workspace_clean_bytes;
}

/* The clean workspace zeroed on a new buffer, not on a launch that finds
 * it zeros, again where __ws1 dirtied its bytes, and on a grown buffer. */
static void test_workspaces(tls_context *ctx) {
  tls_module *mod;
  const tls_kernel *k = load_entry(ctx, file, "K", &mod);
  if (k) {
    unsigned long long big = clean_bytes(k, 4096, 64), small = clean_bytes(k, 64, 1);
    CHECK(big == 16384 && small > 0 && small < big, "clean bytes %llu and %llu", big, small);
    launch(k, 4096, 64, 1, 0, big);     /* a new buffer: its clean part zeroed */
    launch(k, 4096, 64, 0, 0, 0);       /* the kernel left it zeros: nothing */
    launch(k, 64, 1, 0, 0, 0);          /* fewer clean bytes, all zeros; __ws1 follows them */
    launch(k, 4096, 64, 0, small, big); /* the bytes __ws1 dirtied, again */
    launch(k, 8192, 64, 1, 0, clean_bytes(k, 8192, 64)); /* grown: a new buffer */
  }
  tls_module_free(mod);
}

/* Entry M: m i32, p ptr f16 and a tensor map over p, [m, 64]. */
static const char mapped[] =
    "//@tls version 1\n//@tls entry M script=M block=128 smem=0\n//@tls config\n"
    "//@tls param m i32\n//@tls param p ptr f16\n//@tls grid 1 1 1\n"
    "//@tls tmap 0 ptr=p dtype=f16 rank=2 dims=64,m strides=128 box=64,64 swizzle=128\n"
    "//@tls end\n.version 8.0\n.target sm_90a\n"
    ".visible .entry M(.param .u32 M_param_m, .param .u64 M_param_p,\n"
    "  .param .align 64 .b8 M_tmap0[128])\n{\nret;\n}\n";

/* Launches M with (m, p); whether the driver encoded the map, and with
 * the dims `dims` ("64x256"). */
static void launch_mapped(const tls_kernel *k, int m, unsigned long long p, const char *dims) {
  tls_arg args[2] = {tls_i32(m), tls_ptr(p)};
  fake_log_clear();
  tls_status st = tls_launch(k, args, 2, NULL);
  CHECK(st == TLS_OK, "launch (%d, %llu): %s", m, p, tls_error_string(st));
  char want[96];
  snprintf(want, sizeof want, "encode %llu %s\nlaunch", p, dims ? dims : "");
  if (dims)
    CHECK(strstr(fake_log, want) != NULL, "(%d, %llu): want '%s', the driver saw:\n%s", m, p, want,
          fake_log);
  else
    CHECK(!strstr(fake_log, "encode"), "(%d, %llu): the map encoded again:\n%s", m, p, fake_log);
}

/* Tensor maps are encoded once for the same inputs: again for another
 * pointer or shape, and back from the cache for inputs seen before. */
static void test_maps(tls_context *ctx) {
  tls_module *mod;
  const tls_kernel *k = load_entry(ctx, mapped, "M", &mod);
  if (k) {
    launch_mapped(k, 256, 0x100000, "64x256");
    launch_mapped(k, 256, 0x100000, NULL);
    launch_mapped(k, 256, 0x200000, "64x256");
    launch_mapped(k, 512, 0x200000, "64x512");
  }
  tls_module_free(mod);
}

/* A cluster entry (grid 2m x 3, clusters of 2 x 1 x 1) launches through
 * cuLaunchKernelEx with its cluster dimensions; a plain one through
 * cuLaunchKernel. */
static void test_cluster(tls_context *ctx) {
  static const char text[] =
      "//@tls version 1\n//@tls entry C script=C block=128 smem=0\n//@tls param m i32\n"
      "//@tls grid 2*m 3 1\n//@tls cluster 2 1 1\n//@tls end\n.version 8.6\n.target sm_90a\n"
      ".address_size 64\n.visible .entry C(\n\t.param .u32 C_param_m\n)\n.maxntid 128, 1, 1\n"
      ".reqnctapercluster 2, 1, 1\n.explicitcluster\n{\n\tret;\n}\n";
  tls_module *mod;
  const tls_kernel *k = load_entry(ctx, text, "C", &mod);
  if (k) {
    tls_arg m = tls_i32(5);
    fake_log_clear();
    tls_status st = tls_launch(k, &m, 1, NULL);
    CHECK(st == TLS_OK && !strcmp(fake_log, "launch 10x3x1x128 cluster 2x1x1\n"),
          "cluster launch: %s, the driver saw:\n%s", tls_error_string(st), fake_log);
  }
  tls_module_free(mod);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_fake_launch FAKE_LIB\n");
    return 2;
  }
  tls_context *ctx = fake_context(argv[1]);
  if (!ctx) {
    printf("%d checks, %d failures\n", checks, failures);
    return 1;
  }
  test_workspaces(ctx);
  test_maps(ctx);
  test_cluster(ctx);
  tls_context_free(ctx);
  printf("%d checks, %d failures\n", checks, failures);
  return failures != 0;
}
