/* add_demo: runs the Add kernel of add.tls (compiled to PTX at build time by
 * tlsc_add_kernel) through libtlsrt: c = a + b over n float16 values.
 *
 *   add_demo [FILE.ptx]     (default: the PTX this project built)
 *
 * The entry is looked up by script name: its name carries the autotune
 * point (Add__256). With a GPU it launches the entry and checks every element. Without one it
 * shows what a user sees: tls_init's "no GPU/driver" error; then it loads
 * the module offline, lists its entries and checks that the launch is
 * validated but refused with TLS_ERR_NO_DEVICE. Exit 0 when all is as
 * expected, 1 otherwise. */
#include <stdio.h>
#include <stdlib.h>

#include "tlsrt.h"

enum { N = 100003 };

/* IEEE half bits of an integer 0..2047 (all exact in float16). */
static uint16_t half_of_int(int v) {
  if (v == 0) return 0;
  int e = 0;
  while ((2 << e) <= v) e++;
  return (uint16_t)(((e + 15) << 10) | ((v - (1 << e)) << (10 - e)));
}

/* Prints the entries of a module: name, block size, parameters. */
static void list_entries(const tls_module *mod) {
  for (int i = 0; i < tls_module_num_kernels(mod); i++) {
    const tls_kernel *k = tls_module_kernel(mod, i);
    printf("entry %s block=%d params:", tls_kernel_name(k), tls_kernel_block(k));
    for (int p = 0; p < tls_kernel_num_params(k); p++)
      printf(" %s(%s)", tls_kernel_param_name(k, p), tls_kernel_param_type(k, p));
    printf("\n");
  }
}

/* No GPU: the module still loads and the launch is validated, but
 * tls_launch refuses with TLS_ERR_NO_DEVICE. */
static int run_offline(const char *path) {
  tls_context *ctx;
  tls_module *mod;
  int ok = tls_init_offline(&ctx) == TLS_OK && tls_module_load_file(ctx, path, &mod) == TLS_OK;
  if (!ok) {
    fprintf(stderr, "add_demo: %s\n", tls_last_error(ctx));
    tls_context_free(ctx);
    return 1;
  }
  list_entries(mod);
  const tls_kernel *k = tls_kernel_find_config(mod, "Add", "");
  tls_arg args[] = {tls_i32(N), tls_ptr(1 << 20), tls_ptr(2 << 20), tls_ptr(3 << 20)};
  tls_launch_plan plan = {0};
  ok = k && tls_prepare_launch(k, args, 4, &plan) == TLS_OK && plan.grid[0] == (N + 255) / 256 &&
       tls_launch(k, args, 4, NULL) == TLS_ERR_NO_DEVICE;
  printf("offline: grid %u, launch refused: %s\n", k ? plan.grid[0] : 0, tls_last_error(ctx));
  tls_module_free(mod);
  tls_context_free(ctx);
  return ok ? 0 : 1;
}

/* A GPU: c = a + b on the device, every element checked. */
static int run_online(tls_context *ctx, const char *path) {
  tls_module *mod;
  if (tls_module_load_file(ctx, path, &mod) != TLS_OK) {
    fprintf(stderr, "add_demo: %s\n", tls_last_error(ctx));
    return 1;
  }
  list_entries(mod);
  static uint16_t a[N], b[N], c[N];
  for (int i = 0; i < N; i++) a[i] = half_of_int(i % 1000), b[i] = half_of_int(i * 7 % 1000);
  uint64_t da = 0, db = 0, dc = 0;
  const tls_kernel *k = tls_kernel_find_config(mod, "Add", "");
  int failed = !k || tls_mem_alloc(ctx, &da, sizeof a) || tls_mem_alloc(ctx, &db, sizeof b) ||
               tls_mem_alloc(ctx, &dc, sizeof c) || tls_mem_upload(ctx, da, a, sizeof a) ||
               tls_mem_upload(ctx, db, b, sizeof b);
  tls_arg args[] = {tls_i32(N), tls_ptr(da), tls_ptr(db), tls_ptr(dc)};
  failed = failed || tls_launch(k, args, 4, NULL) || tls_synchronize(ctx) ||
           tls_mem_download(ctx, c, dc, sizeof c);
  if (failed) fprintf(stderr, "add_demo: %s\n", tls_last_error(ctx));
  int wrong = 0;
  for (int i = 0; !failed && i < N; i++) wrong += c[i] != half_of_int(i % 1000 + i * 7 % 1000);
  if (!failed)
    printf("%s on %s: %d of %d elements wrong\n", tls_kernel_name(k), tls_context_device_name(ctx),
           wrong, N);
  if (da) tls_mem_free(ctx, da);
  if (db) tls_mem_free(ctx, db);
  if (dc) tls_mem_free(ctx, dc);
  tls_module_free(mod);
  return failed || wrong ? 1 : 0;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : ADD_PTX;
  tls_context *ctx;
  tls_status st = tls_init(0, &ctx);
  if (st == TLS_ERR_NO_DRIVER || st == TLS_ERR_NO_DEVICE) {
    printf("no GPU: %s\n", tls_last_error(ctx));
    tls_context_free(ctx);
    return run_offline(path);
  }
  int rc = st == TLS_OK ? run_online(ctx, path) : 1;
  if (st != TLS_OK) fprintf(stderr, "add_demo: %s\n", tls_last_error(ctx));
  tls_context_free(ctx);
  return rc;
}
