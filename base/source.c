/* source.c: loading a script into memory, from a file, stdin or a string. */
#include "base/base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Reads all of `f` into a NUL-terminated buffer, stopping once it holds
 * more than TLSC_MAX_SOURCE_BYTES (*too_big). False on a read error or
 * when too big. */
static bool read_all(FILE *f, char **text, size_t *len, bool *too_big) {
  const size_t limit = TLSC_MAX_SOURCE_BYTES;
  size_t cap = 1 << 16, n = 0;
  char *buf = xmalloc(cap);
  *too_big = false;
  for (;;) {
    if (cap - n < 2) {
      if (n > limit) { /* cap is limit + 2: one byte past the limit read */
        *too_big = true;
        break;
      }
      cap = cap < (limit + 2) / 2 ? cap * 2 : limit + 2;
      buf = xrealloc(buf, cap);
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) break;
  }
  if (*too_big || ferror(f)) {
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
  const char *name = is_stdin ? "<stdin>" : path;
  FILE *f = is_stdin ? stdin : fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "tlsc: error: cannot read '%s': %s\n", path, strerror(errno));
    return NULL;
  }
  /* A regular file's size is known before reading it. */
  struct stat st;
  bool too_big = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
                 (uintmax_t)st.st_size > (uintmax_t)TLSC_MAX_SOURCE_BYTES;
  Source *src = xmalloc(sizeof *src);
  errno = 0;
  bool ok = !too_big && read_all(f, &src->text, &src->len, &too_big);
  int err = errno ? errno : EIO;
  if (!is_stdin) fclose(f);
  if (!ok) {
    if (too_big)
      fprintf(stderr, "tlsc: error: '%s': larger than the %d-byte limit\n", name,
              TLSC_MAX_SOURCE_BYTES);
    else
      fprintf(stderr, "tlsc: error: cannot read '%s': %s\n", path, strerror(err));
    free(src);
    return NULL;
  }
  src->path = name;
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
