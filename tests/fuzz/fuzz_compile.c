/* fuzz_compile.c: libFuzzer harness for the whole compiler, in process.
 *
 * Any byte string is a source file: parse -> eval_build -> ir_run_passes ->
 * ptx_emit (into a memory stream), exactly the stages `tlsc -o` runs.
 * Diagnostics go to /dev/null. The sanitizers catch crashes, leaks,
 * overflows and undefined behaviour; the harness itself checks the
 * contract every stage states: a stage that fails has reported an error
 * (a silent failure would make tlsc exit 1 with no message).
 */
#include "backend_ptx/ptx.h"
#include "eval/eval.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Stops the run when a stage failed without a diagnostic. */
static void require_diagnostic(const Diag *d, const char *stage) {
  if (d->nerrors > 0) return;
  fprintf(stderr, "fuzz_compile: %s failed without a diagnostic\n", stage);
  abort();
}

/* Evaluates, runs the passes and emits PTX into `out`. */
static void compile_module(Arena *ar, const Source *src, const Node *module, Diag *d, FILE *out) {
  IrModule *m = eval_build(ar, module, src, NULL, 0, d);
  if (!m) {
    require_diagnostic(d, "eval_build");
    return;
  }
  if (!ir_run_passes(m, d)) {
    require_diagnostic(d, "ir_run_passes");
    return;
  }
  PtxOptions popt = {.line_info = true};
  if (!ptx_emit(out, m, &popt, d)) require_diagnostic(d, "ptx_emit");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FILE *devnull;
  if (!devnull) devnull = fopen("/dev/null", "w");
  Source src = {"fuzz.tls", xmalloc(size + 1), size};
  memcpy(src.text, data, size);
  src.text[size] = '\0';
  Arena *ar = arena_new();
  Diag d;
  diag_init(&d, &src, devnull);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  if (!out) abort();
  Node *module = parse_source(ar, &src, &d);
  if (module)
    compile_module(ar, &src, module, &d, out);
  else
    require_diagnostic(&d, "parse_source");
  fclose(out);
  free(text);
  arena_free(ar);
  free(src.text);
  return 0;
}
