/* run_kernels.c: runs the ptxas suite's small kernels on the GPU through
 * libtlsrt and checks every output element exactly (the paths V5 does not
 * take: spatial register tensors, shared loads/stores with the 128-byte
 * swizzle, TMA stores). Exits 77 (skipped) where there is no GPU.
 *
 *   run_kernels VECADD.ptx STAGED.ptx
 *
 * vecadd: c = f16((f32(a) + f32(b)) * 2) over n = 100003 elements (not a
 *   multiple of the tile), for every autotune entry; the elements past n
 *   must stay untouched.
 * staged: y = x + x (f16) over a 100 x 136 matrix (not multiples of the
 *   64 x 64 tile), through TMA load, load_shared, store_shared, TMA store.
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

static int run_staged(tls_context *ctx, const char *path) {
  enum { M = 100, N = 136 };
  tls_module *mod;
  if (tls_module_load_file(ctx, path, &mod)) return fail(ctx, path);
  const tls_kernel *k = tls_kernel_find(mod, "Staged");
  half *x = malloc(M * N * 2), *y = malloc(M * N * 2);
  uint64_t seed = 2;
  for (int i = 0; i < M * N; i++) x[i] = random_half(&seed);
  uint64_t dx = upload(ctx, x, M * N, 0), dy = upload(ctx, NULL, M * N, 0);
  tls_arg args[] = {tls_i32(M), tls_i32(N), tls_ptr(dx), tls_ptr(dy)};
  if (!k || !dx || !dy || tls_launch(k, args, 4, NULL) || tls_synchronize(ctx) ||
      tls_mem_download(ctx, y, dy, M * N * 2))
    return fail(ctx, "Staged");
  int wrong = 0;
  for (int i = 0; i < M * N; i++) {
    uint16_t want = bits((half)(x[i] + x[i]));
    if (bits(y[i]) != want && wrong++ < 5)
      fprintf(stderr, "Staged: y[%d][%d] = 0x%04x, want 0x%04x\n", i / N, i % N, bits(y[i]), want);
  }
  printf("Staged %dx%d: %s (%d wrong)\n", M, N, wrong ? "FAIL" : "ok", wrong);
  tls_module_free(mod);
  free(x), free(y);
  return wrong != 0;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: run_kernels VECADD.ptx STAGED.ptx\n");
    return 2;
  }
  tls_context *ctx = NULL;
  if (tls_init(0, &ctx) != TLS_OK) {
    printf("no GPU (%s): skipped\n", ctx ? tls_last_error(ctx) : "no context");
    tls_context_free(ctx);
    return 77;
  }
  int bad = run_vecadd(ctx, argv[1]) + run_staged(ctx, argv[2]);
  tls_context_free(ctx);
  return bad ? 1 : 0;
}
