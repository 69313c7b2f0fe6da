/* source.c: loading a script into memory, from a file, stdin or a string. */
#include "base/base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Reads all of `f` into a NUL-terminated buffer; false on a read error. */
static bool read_all(FILE *f, char **text, size_t *len) {
  size_t cap = 1 << 16, n = 0;
  char *buf = xmalloc(cap);
  for (;;) {
    if (cap - n < 2) {
      cap *= 2;
      buf = xrealloc(buf, cap);
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) break;
  }
  if (ferror(f)) {
    free(buf);
    return false;
  }
  buf[n] = '\0';
  *text = buf;
  *len = n;
  return true;
}

Source *source_read(const char *path) {
  bool is_stdin = strcmp(path, "-") == 0;
  FILE *f = is_stdin ? stdin : fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "tlsc: error: cannot read '%s': %s\n", path, strerror(errno));
    return NULL;
  }
  Source *src = xmalloc(sizeof *src);
  errno = 0;
  bool ok = read_all(f, &src->text, &src->len);
  int err = errno ? errno : EIO;
  if (!is_stdin) fclose(f);
  if (!ok) {
    fprintf(stderr, "tlsc: error: cannot read '%s': %s\n", path, strerror(err));
    free(src);
    return NULL;
  }
  src->path = is_stdin ? "<stdin>" : path;
  return src;
}

Source *source_from_string(const char *path, const char *text) {
  Source *src = xmalloc(sizeof *src);
  src->path = path;
  src->len = strlen(text);
  src->text = xmalloc(src->len + 1);
  memcpy(src->text, text, src->len + 1);
  return src;
}

void source_free(Source *src) {
  if (!src) return;
  free(src->text);
  free(src);
}
