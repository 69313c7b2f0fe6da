/* parse.c: parse_source, the front end's entry point.
 *
 * Checks the bytes (UTF-8, no NUL), runs the flex scanner and the bison
 * parser over the whole text, then bounds the depth of the tree so that
 * every later recursive walk is safe, and checks where return, break and
 * continue stand.
 */
#include "frontend/parse.h"
#include "frontend/parser.h"

#include <string.h>

/* Position (1-based line and byte column) of byte offset `off`. */
static Span span_at(const Source *src, size_t off) {
  Span sp = {1, 1, 1, 2};
  for (size_t i = 0; i < off; i++) {
    if (src->text[i] == '\n') {
      sp.line++;
      sp.col = 1;
    } else {
      sp.col++;
    }
  }
  sp.end_line = sp.line;
  sp.end_col = sp.col + 1;
  return sp;
}

/* Length of the valid UTF-8 character at p, or 0 (overlong forms,
 * surrogates and values past U+10FFFF are invalid). */
static size_t utf8_char_len(const unsigned char *p, size_t avail) {
  if (p[0] < 0x80) return 1;
  size_t n = p[0] >= 0xc2 && p[0] <= 0xdf   ? 2
             : p[0] >= 0xe0 && p[0] <= 0xef ? 3
             : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4
                                            : 0;
  if (n == 0 || n > avail) return 0;
  for (size_t i = 1; i < n; i++)
    if ((p[i] & 0xc0) != 0x80) return 0;
  if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) ||
      (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
    return 0;
  return n;
}

/* A script is UTF-8 text without NUL bytes; report the first bad byte. */
static bool check_bytes(const Source *src, Diag *d) {
  const unsigned char *text = (const unsigned char *)src->text;
  for (size_t i = 0; i < src->len;) {
    if (text[i] == 0) {
      diag_error(d, span_at(src, i), "source contains a NUL byte");
      return false;
    }
    size_t n = utf8_char_len(text + i, src->len - i);
    if (n == 0) {
      diag_error(d, span_at(src, i), "invalid UTF-8 byte 0x%02x", text[i]);
      return false;
    }
    i += n;
  }
  return true;
}

/* Positions are ints and flex takes an int length: a bound far above any
 * script keeps both exact. */
enum { MAX_SOURCE_BYTES = 256 << 20 };

Node *parse_source(Arena *ar, const Source *src, Diag *d) {
  int errors_before = d->nerrors;
  if (src->len > MAX_SOURCE_BYTES) {
    diag_error(d, (Span){0},
               "source file too large (%zu bytes; the limit "
               "is %d)",
               src->len, MAX_SOURCE_BYTES);
    return NULL;
  }
  if (!check_bytes(src, d)) return NULL;
  Lexer lx = {0};
  lx.src = src;
  lx.d = d;
  lx.ar = ar;
  lx.line = 1;
  lx.col = 1;
  lx.nindent = 1;
  if (tls_yylex_init_extra(&lx, &lx.scanner) != 0) {
    diag_plain_error(d, "cannot start the scanner");
    return NULL;
  }
  tls_scan_source(src, lx.scanner);
  int rc = tls_parse(&lx);
  tls_yylex_destroy(lx.scanner);
  if (rc != 0 || lx.failed || !lx.module) {
    if (d->nerrors == errors_before) /* every path reports; be sure */
      diag_plain_error(d, "%s: invalid syntax", src->path);
    return NULL;
  }
  if (!ast_check_depth(lx.module, d) || !ast_check_context(lx.module, d)) return NULL;
  return lx.module;
}
