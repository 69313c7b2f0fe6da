/* test_gpu_runtime.c: libtlsrt on a GPU, with fixtures built by nvcc
 * (fixtures/fixtures.ptx), independent of tlsc: ptxas + cache + JIT paths,
 * vector add, a TMA tile copy through a runtime-built tensor map (128-byte
 * swizzle, partial tiles read as zeros, >48 KB dynamic shared memory), a
 * refusal on the GPU that launches nothing, and the host cost of a launch.
 * Exits 77 (ctest skip) where there is no GPU or driver.
 * Usage: test_gpu_runtime FIXTURES.ptx */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/tlsrt.h"
#include "tests/unit.h"

#define OK(call) CHECK((call) == TLS_OK, "%s: %s", #call, tls_last_error(ctx))

static tls_context *ctx;

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static uint64_t rng = 88172645463325252ull;
static uint32_t next_u32(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (uint32_t)rng;
}

/* Loads once with ptxas (into a fresh cache), again from the cache, and
 * once through the JIT; returns the ptxas-loaded module. */
static tls_module *load_all_ways(const char *path) {
  char dir[] = "/tmp/tlsrt-cache-XXXXXX";
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  setenv("TLSC_CACHE_DIR", dir, 1);
  tls_module *mod = NULL, *again = NULL, *jit = NULL;
  OK(tls_module_load_file(ctx, path, &mod));
  if (!mod) return NULL;
  printf("first load compiled by %s\n", tls_module_compiled_by(mod));
  OK(tls_module_load_file(ctx, path, &again));
  if (!strcmp(tls_module_compiled_by(mod), "ptxas"))
    CHECK(again && !strcmp(tls_module_compiled_by(again), "cache"), "second load from the cache");
  tls_module_set_compile_mode(ctx, TLS_COMPILE_JIT);
  OK(tls_module_load_file(ctx, path, &jit));
  CHECK(jit && !strcmp(tls_module_compiled_by(jit), "jit"), "JIT load");
  tls_module_set_compile_mode(ctx, TLS_COMPILE_AUTO);
  tls_module_free(again);
  tls_module_free(jit);
  return mod;
}

static void test_vadd(tls_module *mod) {
  const int n = 1000003;
  const tls_kernel *k = tls_kernel_find(mod, "vadd_f32");
  float *a = malloc(n * 4), *b = malloc(n * 4), *c = malloc(n * 4);
  for (int i = 0; i < n; i++)
    a[i] = (float)(next_u32() % 1000) / 7, b[i] = (float)(next_u32() % 1000) / 3;
  uint64_t da, db, dc;
  OK(tls_mem_alloc(ctx, &da, n * 4));
  OK(tls_mem_alloc(ctx, &db, n * 4));
  OK(tls_mem_alloc(ctx, &dc, n * 4));
  OK(tls_mem_upload(ctx, da, a, n * 4));
  OK(tls_mem_upload(ctx, db, b, n * 4));
  OK(tls_mem_set8(ctx, dc, 0xFF, n * 4));
  tls_arg args[4] = {tls_i32(n), tls_ptr(da), tls_ptr(db), tls_ptr(dc)};
  OK(tls_launch(k, args, 4, NULL));
  OK(tls_synchronize(ctx));
  OK(tls_mem_download(ctx, c, dc, n * 4));
  int wrong = 0;
  for (int i = 0; i < n; i++) wrong += c[i] != a[i] + b[i];
  CHECK(wrong == 0, "vadd_f32: %d wrong of %d", wrong, n);
  /* Host cost of a launch once loaded (asynchronous launches, then sync). */
  tls_arg small[4] = {tls_i32(256), tls_ptr(da), tls_ptr(db), tls_ptr(dc)};
  const int reps = 20000;
  double t0 = now_us();
  for (int i = 0; i < reps; i++) tls_launch(k, small, 4, NULL);
  double per = (now_us() - t0) / reps;
  OK(tls_synchronize(ctx));
  printf("host time per tls_launch (vadd_f32, no tensor map): %.2f us\n", per);
  CHECK(per < 20, "launch overhead %.2f us", per);
  tls_mem_free(ctx, da), tls_mem_free(ctx, db), tls_mem_free(ctx, dc);
  free(a), free(b), free(c);
}

/* Copies an m x n f16 matrix tile by tile through TMA; exact. */
static void tile_copy(const tls_kernel *k, int m, int n, bool time_it) {
  size_t bytes = (size_t)m * n * 2;
  uint16_t *src = malloc(bytes), *dst = malloc(bytes);
  for (size_t i = 0; i < (size_t)m * n; i++)
    src[i] = (uint16_t)(0x3C00 | (next_u32() & 0x3FF)); /* [1,2) */
  uint64_t ds, dd, dbad;
  int bad = -1;
  OK(tls_mem_alloc(ctx, &ds, bytes));
  OK(tls_mem_alloc(ctx, &dd, bytes));
  OK(tls_mem_alloc(ctx, &dbad, 4));
  OK(tls_mem_upload(ctx, ds, src, bytes));
  OK(tls_mem_set8(ctx, dd, 0xFF, bytes));
  OK(tls_mem_set8(ctx, dbad, 0, 4));
  tls_arg args[5] = {tls_i32(m), tls_i32(n), tls_ptr(ds), tls_ptr(dd), tls_ptr(dbad)};
  OK(tls_launch(k, args, 5, NULL));
  OK(tls_synchronize(ctx));
  OK(tls_mem_download(ctx, dst, dd, bytes));
  OK(tls_mem_download(ctx, &bad, dbad, 4));
  size_t wrong = 0;
  for (size_t i = 0; i < (size_t)m * n; i++) wrong += dst[i] != src[i];
  CHECK(wrong == 0, "tile_copy %dx%d: %zu wrong elements", m, n, wrong);
  CHECK(bad == 0, "tile_copy %dx%d: %d out-of-bounds elements not zero-filled", m, n, bad);
  printf("tile_copy %dx%d through a swizzled tensor map: %s\n", m, n, wrong || bad ? "FAIL" : "ok");
  if (time_it) {
    const int reps = 20000;
    double t0 = now_us();
    for (int i = 0; i < reps; i++) tls_launch(k, args, 5, NULL);
    double per = (now_us() - t0) / reps;
    OK(tls_synchronize(ctx));
    printf("host time per tls_launch (tile_copy, cached tensor map): %.2f us\n", per);
    CHECK(per < 20, "launch overhead %.2f us", per);
  }
  /* A row stride that is not a multiple of 16 bytes: refused, nothing runs. */
  if (n > 8) {
    OK(tls_mem_set8(ctx, dd, 0xFF, bytes));
    args[1] = tls_i32(n - 1);
    tls_status st = tls_launch(k, args, 5, NULL);
    CHECK(st == TLS_ERR_TMAP && strstr(tls_last_error(ctx), "not a multiple of 16"), "refusal: %s",
          tls_last_error(ctx));
    OK(tls_synchronize(ctx));
    OK(tls_mem_download(ctx, dst, dd, bytes));
    size_t touched = 0;
    for (size_t i = 0; i < (size_t)m * n; i++) touched += dst[i] != 0xFFFF;
    CHECK(touched == 0, "a refused launch wrote %zu elements", touched);
  }
  tls_mem_free(ctx, ds), tls_mem_free(ctx, dd), tls_mem_free(ctx, dbad);
  free(src), free(dst);
}

int main(int argc, char **argv) {
  if (argc != 2) return fprintf(stderr, "usage: test_gpu_runtime FIXTURES.ptx\n"), 2;
  tls_status st = tls_init(0, &ctx);
  if (st == TLS_ERR_NO_DRIVER || st == TLS_ERR_NO_DEVICE) {
    printf("SKIP: %s\n", tls_last_error(ctx));
    tls_context_free(ctx);
    return 77;
  }
  if (st) return printf("FAIL: %s\n", tls_last_error(ctx)), 1;
  printf("device %s (%s)\n", tls_context_device_name(ctx), tls_context_arch(ctx));
  tls_module *mod = load_all_ways(argv[1]);
  if (mod) {
    test_vadd(mod);
    const tls_kernel *tc = tls_kernel_find_config(mod, "TileCopy", "swizzle=128");
    CHECK(tc != NULL, "TileCopy by config");
    if (tc) {
      tile_copy(tc, 128, 256, false);
      tile_copy(tc, 1000, 1016, true);
      tile_copy(tc, 4096, 4096, false);
    }
  }
  tls_module_free(mod);
  tls_context_free(ctx);
  printf("%s\n", failures ? "FAILED" : "all passed");
  return failures != 0;
}
