/* fuzz_parse.c: libFuzzer harness for the front end.
 *
 * Any byte string goes through parse_source (and ast_dump when it
 * parses); the sanitizers catch crashes, leaks, overflows and undefined
 * behaviour. Diagnostics go to /dev/null.
 */
#include "frontend/frontend.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FILE *devnull;
  if (!devnull) devnull = fopen("/dev/null", "w");
  Source src = {"fuzz.tls", xmalloc(size + 1), size};
  memcpy(src.text, data, size);
  src.text[size] = '\0';
  Arena *ar = arena_new();
  Diag d;
  diag_init(&d, &src, devnull);
  Node *module = parse_source(ar, &src, &d);
  if (module) ast_dump(devnull, module);
  arena_free(ar);
  free(src.text);
  return 0;
}
