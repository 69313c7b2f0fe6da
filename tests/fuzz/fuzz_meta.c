/* fuzz_meta.c: libFuzzer harness for the runtime's file reader.
 *
 * Any byte string is a PTX file given to tls_module_load_string on an
 * offline context (no GPU: the metadata block is parsed and the PTX checked
 * against it). When it loads, every entry is prepared for a launch with
 * arguments of the right kinds, so the grid and tensor-map expressions are
 * evaluated too. The harness checks that a refusal always comes with a
 * message.
 */
#include "runtime/tlsrt.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Arguments of the kinds an entry takes: 256 for integers, a 16-byte
 * aligned pointer, 1.0 for floats. */
static int make_args(const tls_kernel *k, tls_arg *args) {
  int n = tls_kernel_num_params(k);
  for (int i = 0; i < n && i < TLS_MAX_PARAMS; i++) {
    const char *type = tls_kernel_param_type(k, i);
    if (!strncmp(type, "ptr", 3))
      args[i] = tls_ptr(0x10000 * (uint64_t)(i + 1));
    else if (!strcmp(type, "f32"))
      args[i] = tls_f32(1.0f);
    else if (!strcmp(type, "i64"))
      args[i] = tls_i64(256);
    else if (!strcmp(type, "u64"))
      args[i] = tls_u64(256);
    else if (!strcmp(type, "u32"))
      args[i] = tls_u32(256);
    else
      args[i] = tls_i32(256);
  }
  return n < TLS_MAX_PARAMS ? n : TLS_MAX_PARAMS;
}

/* Stops the run when a refusal has no message. */
static void require_message(const tls_context *ctx, tls_status st) {
  if (st == TLS_OK || tls_last_error(ctx)[0]) return;
  fprintf(stderr, "fuzz_meta: status %d without a message\n", (int)st);
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static tls_context *ctx;
  if (!ctx) tls_init_offline(&ctx);
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  tls_module *mod = NULL;
  tls_status st = tls_module_load_string(ctx, text, "fuzz.ptx", &mod);
  require_message(ctx, st);
  for (int i = 0; mod && i < tls_module_num_kernels(mod); i++) {
    const tls_kernel *k = tls_module_kernel(mod, i);
    tls_arg args[TLS_MAX_PARAMS];
    tls_launch_plan plan;
    int n = make_args(k, args);
    require_message(ctx, tls_prepare_launch(k, args, n, &plan));
  }
  tls_module_free(mod);
  free(text);
  return 0;
}
