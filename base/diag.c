/* diag.c: gcc/clang-style diagnostics.
 *
 *   path:line:col: error: message
 *       source line
 *       ^~~~
 *
 * The source line is printed as it is, except that bytes a terminal cannot
 * show (control bytes, invalid UTF-8) become '?'. Tabs are kept, and the
 * caret line copies them, so the caret lines up whatever the tab width.
 * A multi-byte UTF-8 character counts as one column on screen. Very long
 * lines are shown as a window around the column, with "..." at the cut.
 */
#include "base/base.h"

#include <string.h>

enum { WINDOW_BEFORE = 80, WINDOW_AFTER = 80 };

void diag_init(Diag *d, const Source *src, FILE *out) {
  d->out = out ? out : stderr;
  d->src = src;
  d->nerrors = 0;
  d->max_errors = 20;
}

/* Length of the valid UTF-8 sequence at p (at most `avail` bytes), or 0. */
static int utf8_len(const unsigned char *p, size_t avail) {
  int n;
  unsigned lead = p[0];
  if (lead < 0x80)
    return 1;
  else if (lead >= 0xc2 && lead <= 0xdf)
    n = 2;
  else if (lead >= 0xe0 && lead <= 0xef)
    n = 3;
  else if (lead >= 0xf0 && lead <= 0xf4)
    n = 4;
  else
    return 0;
  if ((size_t)n > avail) return 0;
  for (int i = 1; i < n; i++)
    if ((p[i] & 0xc0) != 0x80) return 0;
  return n;
}

/* Start of line `line` (1-based) in the source, or NULL past the end. */
static const char *line_start(const Source *src, int line) {
  const char *p = src->text, *end = src->text + src->len;
  for (int l = 1; l < line; l++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) return NULL;
    p = nl + 1;
  }
  return p;
}

/* Writes one screen column for the character at p; returns its byte size.
 * With `blank`, writes the space (or tab) that sits under it instead. */
static int put_column(FILE *out, const char *p, const char *end, bool blank) {
  const unsigned char *u = (const unsigned char *)p;
  int n = utf8_len(u, (size_t)(end - p));
  if (*u == '\t') {
    fputc('\t', out);
    return 1;
  }
  if (blank) {
    fputc(' ', out);
    return n ? n : 1;
  }
  if (n == 1 && (*u < 0x20 || *u == 0x7f)) n = 0;
  if (n == 0) {
    fputc('?', out);
    return 1;
  }
  fwrite(p, 1, (size_t)n, out);
  return n;
}

/* Moves p back to the start of a UTF-8 character. */
static const char *char_start(const char *p, const char *lo) {
  while (p > lo && ((unsigned char)*p & 0xc0) == 0x80) p--;
  return p;
}

/* Prints the source line of `sp` and the caret line under it. */
static void show_line(Diag *d, Span sp) {
  const Source *src = d->src;
  const char *lo = line_start(src, sp.line);
  if (!lo) return;
  const char *end = src->text + src->len;
  const char *hi = memchr(lo, '\n', (size_t)(end - lo));
  if (!hi) hi = end;
  if (hi > lo && hi[-1] == '\r') hi--;
  const char *caret = lo + (sp.col > 1 ? sp.col - 1 : 0);
  if (caret > hi) caret = hi;
  const char *tilde_end = hi;
  if (sp.end_line == sp.line && sp.end_col > sp.col)
    tilde_end = lo + sp.end_col - 1 < hi ? lo + sp.end_col - 1 : hi;
  else if (sp.end_line <= sp.line)
    tilde_end = caret + 1;
  /* The window of the line that is shown. */
  const char *from = lo, *to = hi;
  if (caret - lo > WINDOW_BEFORE) from = char_start(caret - WINDOW_BEFORE, lo);
  if (to - caret > WINDOW_AFTER) to = char_start(caret + WINDOW_AFTER, caret);
  if (tilde_end > to) tilde_end = to;
  fprintf(d->out, "%s", from > lo ? "..." : "");
  for (const char *p = from; p < to;) p += put_column(d->out, p, to, false);
  fprintf(d->out, "%s\n%s", to < hi ? "..." : "", from > lo ? "   " : "");
  for (const char *p = from; p < caret;) p += put_column(d->out, p, caret, true);
  fputc('^', d->out);
  const char *p = caret + (caret < to ? 1 : 0);
  for (; p < tilde_end; p++)
    if (((unsigned char)*p & 0xc0) != 0x80) fputc('~', d->out);
  fputc('\n', d->out);
}

/* The common form of errors and notes. */
static void report(Diag *d, Span sp, const char *kind, const char *fmt, va_list ap) {
  const char *path = d->src ? d->src->path : "tlsc";
  if (sp.line > 0)
    fprintf(d->out, "%s:%d:%d: %s: ", path, sp.line, sp.col, kind);
  else
    fprintf(d->out, "%s: %s: ", path, kind);
  vfprintf(d->out, fmt, ap);
  fputc('\n', d->out);
  if (d->src && sp.line > 0) show_line(d, sp);
}

void diag_verror(Diag *d, Span sp, const char *fmt, va_list ap) {
  d->nerrors++;
  if (d->nerrors > d->max_errors) {
    if (d->nerrors == d->max_errors + 1)
      fprintf(d->out, "tlsc: error: too many errors, stopping now\n");
    return;
  }
  report(d, sp, "error", fmt, ap);
}

void diag_error(Diag *d, Span sp, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_verror(d, sp, fmt, ap);
  va_end(ap);
}

/* Notes belong to the error before them: dropped when that one was. */
void diag_note(Diag *d, Span sp, const char *fmt, ...) {
  if (d->nerrors > d->max_errors) return;
  va_list ap;
  va_start(ap, fmt);
  report(d, sp, "note", fmt, ap);
  va_end(ap);
}

void diag_plain_warning(Diag *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(d->out, "tlsc: warning: ");
  vfprintf(d->out, fmt, ap);
  fputc('\n', d->out);
  va_end(ap);
}

void diag_plain_error(Diag *d, const char *fmt, ...) {
  d->nerrors++;
  va_list ap;
  va_start(ap, fmt);
  fprintf(d->out, "tlsc: error: ");
  vfprintf(d->out, fmt, ap);
  fputc('\n', d->out);
  va_end(ap);
}
