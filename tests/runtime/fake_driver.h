/* fake_driver.h: a libtlsrt context on tests/runtime/fake_cuda.c, for the
 * tests that run the GPU paths without a GPU, and the fake's log. */
#ifndef TLSC_TESTS_FAKE_DRIVER_H
#define TLSC_TESTS_FAKE_DRIVER_H

#include <dlfcn.h>
#include <stdlib.h>

#include "runtime/tlsrt.h"
#include "tests/unit.h"

/* What the fake driver recorded (its top comment lists the lines). */
static char *fake_log;
static void (*fake_log_clear)(void);

/* A context on the fake driver at `path`, compiling through its JIT path;
 * NULL, with a failed check, when it or the log cannot be had. */
static tls_context *fake_context(const char *path) {
  setenv("TLSC_CUDA_LIB", path, 1);
  setenv("TLSC_COMPILE", "jit", 1);
  tls_context *ctx = NULL;
  tls_status st = tls_init(0, &ctx);
  CHECK(st == TLS_OK, "tls_init with the fake driver: %s", ctx ? tls_last_error(ctx) : "?");
  void *lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  fake_log = lib ? dlsym(lib, "fake_cuda_log") : NULL;
  *(void **)&fake_log_clear = lib ? dlsym(lib, "fake_cuda_log_clear") : NULL;
  CHECK(fake_log && fake_log_clear, "the fake driver's log");
  if (st == TLS_OK && fake_log && fake_log_clear) return ctx;
  tls_context_free(ctx);
  return NULL;
}

#endif
