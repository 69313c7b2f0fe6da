/* run_kernels.c: runs the ptxas suite's small kernels on the GPU through
 * libtlsrt and checks every output element exactly (the paths V5 does not
 * take: spatial register tensors, shared loads/stores with the 128-byte
 * swizzle, TMA stores). Exits 77 (skipped) where there is no GPU.
 *
 *   run_kernels VECADD.ptx STAGED.ptx [DIVMOD.ptx]
 *
 * vecadd: c = f16((f32(a) + f32(b)) * 2) over n = 100003 elements (not a
 *   multiple of the tile), for every autotune entry; the elements past n
 *   must stay untouched.
 * staged: y = x + x (f16) over a 100 x 136 matrix (not multiples of the
 *   64 x 64 tile), through TMA load, load_shared, store_shared, TMA store;
 *   Staged fences the shared writes with fence.proxy_async, StagedRelease
 *   with fence.proxy_async_release.
 * divmod: run-time x // d and x % d by constants d (kernels/divmod.tls),
 *   for int32, uint32 and int64 dividends of both signs and the extremes,
 *   against C's / and % on the host (INT_MIN / -1 wraps, INT_MIN % -1 is 0).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/tlsrt.h"

typedef _Float16 half;

static uint16_t bits(half h) {
  uint16_t b;
  memcpy(&b, &h, 2);
  return b;
}

static half random_half(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (half)((double)((*s >> 33) % 2001) / 250.0 - 4.0);
}

static int fail(tls_context *ctx, const char *what) {
  fprintf(stderr, "run_kernels: %s: %s\n", what, tls_last_error(ctx));
  return 1;
}

/* Uploads n halves to a fresh buffer of n + pad elements (pad poisoned). */
static uint64_t upload(tls_context *ctx, const half *h, size_t n, size_t pad) {
  uint64_t d = 0;
  if (tls_mem_alloc(ctx, &d, (n + pad) * 2) || tls_mem_set8(ctx, d, 0xFF, (n + pad) * 2) ||
      (h && tls_mem_upload(ctx, d, h, n * 2)))
    return 0;
  return d;
}

static int run_vecadd(tls_context *ctx, const char *path) {
  enum { N = 100003, PAD = 4096 };
  tls_module *mod;
  if (tls_module_load_file(ctx, path, &mod)) return fail(ctx, path);
  half *a = malloc(N * 2), *b = malloc(N * 2), *c = malloc((N + PAD) * 2);
  uint64_t seed = 1;
  for (int i = 0; i < N; i++) a[i] = random_half(&seed), b[i] = random_half(&seed);
  uint64_t da = upload(ctx, a, N, 0), db = upload(ctx, b, N, 0), dc = upload(ctx, NULL, N, PAD);
  if (!da || !db || !dc) return fail(ctx, "buffers");
  int bad = 0;
  for (int e = 0; e < tls_module_num_kernels(mod); e++) {
    const tls_kernel *k = tls_module_kernel(mod, e);
    tls_arg args[] = {tls_i32(N), tls_ptr(da), tls_ptr(db), tls_ptr(dc)};
    if (tls_mem_set8(ctx, dc, 0xFF, (N + PAD) * 2) || tls_launch(k, args, 4, NULL) ||
        tls_synchronize(ctx) || tls_mem_download(ctx, c, dc, (N + PAD) * 2))
      return fail(ctx, tls_kernel_name(k));
    int wrong = 0;
    for (int i = 0; i < N + PAD; i++) {
      uint16_t want = i < N ? bits((half)(((float)a[i] + (float)b[i]) * 2.0f)) : 0xFFFF;
      if (bits(c[i]) != want && wrong++ < 5)
        fprintf(stderr, "%s: c[%d] = 0x%04x, want 0x%04x\n", tls_kernel_name(k), i, bits(c[i]),
                want);
    }
    printf("%s n=%d: %s (%d wrong)\n", tls_kernel_name(k), N, wrong ? "FAIL" : "ok", wrong);
    bad += wrong != 0;
  }
  tls_module_free(mod);
  free(a), free(b), free(c);
  return bad != 0;
}

static int run_staged(tls_context *ctx, const char *path, const char *name) {
  enum { M = 100, N = 136 };
  tls_module *mod;
  if (tls_module_load_file(ctx, path, &mod)) return fail(ctx, path);
  const tls_kernel *k = tls_kernel_find(mod, name);
  half *x = malloc(M * N * 2), *y = malloc(M * N * 2);
  uint64_t seed = 2;
  for (int i = 0; i < M * N; i++) x[i] = random_half(&seed);
  uint64_t dx = upload(ctx, x, M * N, 0), dy = upload(ctx, NULL, M * N, 0);
  tls_arg args[] = {tls_i32(M), tls_i32(N), tls_ptr(dx), tls_ptr(dy)};
  if (!k || !dx || !dy || tls_launch(k, args, 4, NULL) || tls_synchronize(ctx) ||
      tls_mem_download(ctx, y, dy, M * N * 2))
    return fail(ctx, name);
  int wrong = 0;
  for (int i = 0; i < M * N; i++) {
    uint16_t want = bits((half)(x[i] + x[i]));
    if (bits(y[i]) != want && wrong++ < 5)
      fprintf(stderr, "%s: y[%d][%d] = 0x%04x, want 0x%04x\n", name, i / N, i % N, bits(y[i]),
              want);
  }
  printf("%s %dx%d: %s (%d wrong)\n", name, M, N, wrong ? "FAIL" : "ok", wrong);
  tls_module_free(mod);
  free(x), free(y);
  return wrong != 0;
}

/* The divisors of kernels/divmod.tls, in its order. */
static const int64_t div_signed[] = {
    1,     -1,    2,       -2,       3,          -3,         4,           5,
    6,     7,     -7,      8,        10,         12,         16,          -16,
    25,    60,    64,      100,      125,        641,        1000,        1024,
    65535, 65537, 1000003, -1000003, 1073741824, 2147483647, -2147483647, -2147483648LL};
static const uint64_t div_unsigned[] = {
    1, 2, 3, 7, 10, 641, 65536, 65537, 1000003, 2147483647, 2147483648, 2147483649, 4294967295};
static const int64_t div_wide[] = {
    1, -1, 3, 7, -7, 64, 641, 1000003, 10000000019LL, 4294967296LL, -4294967297LL};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int64_t c_div(int64_t x, int64_t d, int64_t min, int rem) {
  if (x == min && d == -1) return rem ? 0 : min; /* wraps, as the GPU does */
  return rem ? x % d : x / d;
}

static int run_divmod(tls_context *ctx, const char *path) {
  enum { ROWS = 4096 };
  int ns = 2 * COUNT(div_signed), nu = 2 * COUNT(div_unsigned), nw = 2 * COUNT(div_wide);
  tls_module *mod;
  if (tls_module_load_file(ctx, path, &mod)) return fail(ctx, path);
  const tls_kernel *k = tls_kernel_find(mod, "DivMod");
  int32_t *s = malloc(sizeof *s * ROWS * (size_t)ns);
  uint32_t *u = malloc(sizeof *u * ROWS * (size_t)nu);
  int64_t *w = malloc(sizeof *w * ROWS * (size_t)nw);
  uint64_t ds = 0, du = 0, dw = 0;
  if (!k || tls_mem_alloc(ctx, &ds, sizeof *s * ROWS * (size_t)ns) ||
      tls_mem_alloc(ctx, &du, sizeof *u * ROWS * (size_t)nu) ||
      tls_mem_alloc(ctx, &dw, sizeof *w * ROWS * (size_t)nw))
    return fail(ctx, "DivMod");
  /* x = a + row * step (int32, wrapping): small values of both signs, the
   * two extremes, and strides that spread over the whole range */
  static const int32_t runs[][2] = {{-2048, 1},         {INT32_MIN, 1},     {INT32_MAX - 4095, 1},
                                    {12345, 1048573},   {-7, 196611},       {0, 524287},
                                    {INT32_MIN, 65537}, {-1000003, 1000003}};
  int wrong = 0;
  long checked = 0;
  for (int run = 0; run < COUNT(runs); run++) {
    int32_t a = runs[run][0], step = runs[run][1];
    tls_arg args[] = {tls_i32(ROWS), tls_i32(a),  tls_i32(step),
                      tls_ptr(ds),   tls_ptr(du), tls_ptr(dw)};
    if (tls_launch(k, args, 6, NULL) || tls_synchronize(ctx) ||
        tls_mem_download(ctx, s, ds, sizeof *s * ROWS * (size_t)ns) ||
        tls_mem_download(ctx, u, du, sizeof *u * ROWS * (size_t)nu) ||
        tls_mem_download(ctx, w, dw, sizeof *w * ROWS * (size_t)nw))
      return fail(ctx, "DivMod");
    for (int r = 0; r < ROWS; r++) {
      int32_t x = (int32_t)((uint32_t)a + (uint32_t)r * (uint32_t)step);
      uint32_t xu = (uint32_t)x;
      int64_t xw = (int64_t)((uint64_t)(int64_t)x * 4294967311ull);
      for (int j = 0; j < ns; j++) {
        int64_t want = c_div(x, div_signed[j / 2], INT32_MIN, j % 2);
        int64_t got = s[(size_t)r * ns + j];
        checked++;
        if (got != want && wrong++ < 10)
          fprintf(stderr, "DivMod: int32 %d %s %lld = %lld, want %lld\n", x, j % 2 ? "%" : "//",
                  (long long)div_signed[j / 2], (long long)got, (long long)want);
      }
      for (int j = 0; j < nu; j++) {
        uint64_t d = div_unsigned[j / 2], want = j % 2 ? xu % d : xu / d;
        uint64_t got = u[(size_t)r * nu + j];
        checked++;
        if (got != want && wrong++ < 10)
          fprintf(stderr, "DivMod: uint32 %u %s %llu = %llu, want %llu\n", xu, j % 2 ? "%" : "//",
                  (unsigned long long)d, (unsigned long long)got, (unsigned long long)want);
      }
      for (int j = 0; j < nw; j++) {
        int64_t want = c_div(xw, div_wide[j / 2], INT64_MIN, j % 2);
        int64_t got = w[(size_t)r * nw + j];
        checked++;
        if (got != want && wrong++ < 10)
          fprintf(stderr, "DivMod: int64 %lld %s %lld = %lld, want %lld\n", (long long)xw,
                  j % 2 ? "%" : "//", (long long)div_wide[j / 2], (long long)got, (long long)want);
      }
    }
  }
  printf("DivMod: %ld quotients and remainders: %s (%d wrong)\n", checked, wrong ? "FAIL" : "ok",
         wrong);
  tls_module_free(mod);
  free(s), free(u), free(w);
  return wrong != 0;
}

int main(int argc, char **argv) {
  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: run_kernels VECADD.ptx STAGED.ptx [DIVMOD.ptx]\n");
    return 2;
  }
  tls_context *ctx = NULL;
  if (tls_init(0, &ctx) != TLS_OK) {
    printf("no GPU (%s): skipped\n", ctx ? tls_last_error(ctx) : "no context");
    tls_context_free(ctx);
    return 77;
  }
  int bad = run_vecadd(ctx, argv[1]) + run_staged(ctx, argv[2], "Staged") +
            run_staged(ctx, argv[2], "StagedRelease");
  if (argc == 4) bad += run_divmod(ctx, argv[3]);
  tls_context_free(ctx);
  return bad ? 1 : 0;
}
