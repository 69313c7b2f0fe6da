/* base.h: the utilities every layer uses, and nothing else.
 *
 * An arena allocator, xmalloc, source files, spans, and diagnostics in the
 * gcc/clang form `file:line:col: error: message` + source line + caret.
 * Every other folder may include this header; it includes only libc.
 */
#ifndef TLSC_BASE_H
#define TLSC_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TLSC_VERSION "0.1.0"

/* --------------------------------------------------------------- memory */

/* Arena: every AST / IR object lives in one arena freed at once. */
typedef struct Arena Arena;
Arena *arena_new(void);
void arena_free(Arena *a);
void *arena_alloc(Arena *a, size_t size); /* zeroed, 16-byte aligned */
size_t arena_bytes(const Arena *a);       /* what the arena holds from malloc */
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Out-of-memory aborts with a message: the only fatal path. */
void *xmalloc(size_t size);
void *xrealloc(void *p, size_t size);

/* ---------------------------------------------------------- source/diag */

typedef struct Source {
  const char *path; /* as given on the command line ("<stdin>" for -) */
  char *text;       /* whole file, NUL-terminated (owned) */
  size_t len;
} Source;

/* 1-based line/col of the first and one-past-last character. */
typedef struct Span {
  int line, col;
  int end_line, end_col;
} Span;

/* The largest source tlsc reads: positions are ints and flex takes an int
 * length (the parser refuses the same size, frontend/parse.c). */
#define TLSC_MAX_SOURCE_BYTES (256 << 20)

/* Reads a file (or stdin for "-"). Returns NULL and prints
 * "tlsc: error: cannot read 'path': reason" on failure, or
 * "tlsc: error: 'path': larger than the N-byte limit" past
 * TLSC_MAX_SOURCE_BYTES (found while reading: /dev/zero or an endless pipe
 * stops there). */
Source *source_read(const char *path);
Source *source_from_string(const char *path, const char *text);
void source_free(Source *src);

/* Diagnostics. Every message goes to the Diag's stream (stderr by default).
 * error/note print `path:line:col: error: msg`, then the source line and a
 * caret line (^ under col, ~ to the end of the span on that line). */
typedef struct Diag {
  FILE *out;
  const Source *src;
  int nerrors;
  int max_errors; /* stop reporting after this many (default 20) */
} Diag;

void diag_init(Diag *d, const Source *src, FILE *out);
void diag_error(Diag *d, Span sp, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_verror(Diag *d, Span sp, const char *fmt, va_list ap);
void diag_note(Diag *d, Span sp, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* An error with no source position: "tlsc: error: msg". */
void diag_plain_error(Diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A warning with no source position: "tlsc: warning: msg" (not an error). */
void diag_plain_warning(Diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
