/* parse.h: what the front end's own files share (lexer.l, indent.c,
 * parser.y, ast.c). Not for other layers: they use frontend.h. */
#ifndef TLSC_PARSE_H
#define TLSC_PARSE_H

#include "frontend/frontend.h"

/* The state of one parse: the flex scanner, the indentation layout that
 * turns leading whitespace into INDENT/DEDENT, the open brackets, and the
 * arena the AST is built in. */
union TLS_STYPE;

/* An open f-string or replacement field, innermost last: f"a{x:>{w}}" opens
 * the f-string, then the field {x...}, then the field {w} inside its format
 * spec. The scanner reads an f-string's literal text in state FSTR, a format
 * spec in state FSPEC, and a field's expression in state LINE, where `}`,
 * `:`, `!` and `=` end the expression when no bracket of it is open. */
typedef struct FsFrame {
  bool field;       /* a replacement field, else an f-string */
  bool triple, raw; /* f-string: quoted with three quotes; r prefix */
  char quote;       /* f-string: ' or " */
  Span at;          /* f-string: its prefix and quote; field: its '{' */
  size_t start;     /* f-string: offset of its prefix; field: offset just
                       after its '{' (the start of the text before `=`) */
  int level;        /* field: nbrackets with its '{' open */
  int back;         /* field: the scanner state after its '}' */
  int str;          /* field: index of its f-string's frame */
} FsFrame;

typedef struct Lexer {
  const Source *src;
  Diag *d;
  Arena *ar;
  void *scanner;  /* flex's yyscan_t */
  int line, col;  /* position of the next unread byte */
  size_t off;     /* its byte offset */
  size_t tok_off; /* byte offset of the token just read */
  bool failed;    /* a lexical error has been reported */

  /* Open f-strings and fields (each field is also an open bracket, so they
   * are bounded by TLS_MAX_NESTING; an f-string is either the outermost or
   * inside a field). */
  int nfs;
  FsFrame fs[2 * TLS_MAX_NESTING + 2];

  /* Open brackets, innermost last, for matching and "never closed". */
  int nbrackets;
  char bracket_char[TLS_MAX_NESTING + 1];
  Span bracket_at[TLS_MAX_NESTING + 1];

  /* Indentation stack: widths with tabs to multiples of 8 (indent) and with
   * tabs as one column (indent_alt); they must order lines the same way,
   * else tabs and spaces are used inconsistently. indent[0] is 0. */
  int nindent;
  int indent[TLS_MAX_NESTING + 2];
  int indent_alt[TLS_MAX_NESTING + 2];

  /* The indentation measured at the start of the current line, applied when
   * its first token arrives (a last line of only blanks has no token). */
  bool have_measure;
  int measure_width, measure_alt;
  bool measure_mixed;

  /* Layout tokens waiting to be handed to the parser, at pending_at, and
   * the token that follows them (already read from flex). */
  int pending_indents, pending_dedents;
  Span pending_at;
  bool has_lookahead;
  int lookahead_tok;
  union TLS_STYPE *lookahead_val;
  Span lookahead_loc;
  bool line_has_token; /* a token was returned since the last NEWLINE */
  bool at_eof;

  Node *module; /* the parse result */
} Lexer;

/* Bison's semantic value and the layout-aware token function it calls. */
int tls_lex(union TLS_STYPE *val, Span *loc, Lexer *lx);

/* The raw flex scanner (lexer.l), without INDENT/DEDENT. */
int tls_raw_lex(union TLS_STYPE *val, Span *loc, void *scanner);
int tls_yylex_init_extra(Lexer *lx, void **scanner);
int tls_yylex_destroy(void *scanner);
void *tls_scan_source(const Source *src, void *scanner);

/* The bison parser (parser.y): 0 on success, with lx->module set. */
int tls_parse(Lexer *lx);

/* AST construction helpers (ast.c). */
Node *node_new(Arena *ar, NodeKind kind, Span span);
Span span_join(Span first, Span last);

/* The child after position *next of n (a, b, c, then the items of list,
 * list2 and, for N_DEF and N_CLASS, list3), advancing *next; NULL after the
 * last. Start with *next = 0. */
const Node *ast_next_child(const Node *n, int *next);

/* Rejects ASTs deeper than TLS_MAX_NESTING (ast.c), with an explicit
 * stack, so that every later recursive walk is bounded. */
bool ast_check_depth(const Node *root, Diag *d);

/* return/break/continue/import *, yield/await/async, nonlocal where Python
 * allows them (placement.c). */
bool ast_check_context(const Node *module, Diag *d);

#endif
