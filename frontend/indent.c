/* indent.c: Python's indentation rules on top of flex's tokens.
 *
 * The scanner measures each line's indentation; when the line's first
 * token arrives it is compared with the stack of open indentation levels:
 * deeper pushes a level (INDENT), shallower pops levels (one DEDENT each)
 * and must land exactly on an open level. At end of file the last line gets
 * its NEWLINE and every open level is closed. An unclosed bracket at end of
 * file is reported at the bracket.
 */
#include "frontend/parse.h"
#include "frontend/parser.h"

#include <string.h>

/* The position where end-of-file tokens are reported: the end of the last
 * line (its newline character), so the message shows that line. */
static Span eof_span(Lexer *lx) {
  const char *text = lx->src->text;
  size_t len = lx->src->len;
  Span sp = {lx->line, lx->col, lx->line, lx->col};
  if (len > 0 && text[len - 1] == '\n' && lx->line > 1) {
    const char *start = text + len - 1;
    while (start > text && start[-1] != '\n') start--;
    sp.line = sp.end_line = lx->line - 1;
    sp.col = sp.end_col = (int)(text + len - 1 - start) + 1;
  }
  return sp;
}

static int layout_error(Lexer *lx, Span sp, const char *msg) {
  diag_error(lx->d, sp, "%s", msg);
  lx->failed = true;
  return TLS_error;
}

/* Compares the measured indentation of a new line with the open levels and
 * queues the INDENT or DEDENTs. Returns 0, or TLS_error after an error. */
static int apply_indent(Lexer *lx, Span first_token) {
  static const char tab_msg[] = "inconsistent use of tabs and spaces in indentation";
  int width = lx->measure_width, alt = lx->measure_alt;
  int top = lx->indent[lx->nindent - 1], top_alt = lx->indent_alt[lx->nindent - 1];
  lx->have_measure = false;
  if (lx->measure_mixed) return layout_error(lx, first_token, tab_msg);
  if (width == top) {
    if (alt != top_alt) return layout_error(lx, first_token, tab_msg);
    return 0;
  }
  if (width > top) {
    if (alt <= top_alt) return layout_error(lx, first_token, tab_msg);
    if (lx->nindent - 1 + lx->nbrackets >= TLS_MAX_NESTING)
      return layout_error(lx, first_token,
                          "too deeply nested (more than 200 "
                          "levels of brackets and blocks)");
    lx->indent[lx->nindent] = width;
    lx->indent_alt[lx->nindent] = alt;
    lx->nindent++;
    lx->pending_indents = 1;
    return 0;
  }
  while (lx->nindent > 1 && width < lx->indent[lx->nindent - 1]) {
    lx->nindent--;
    lx->pending_dedents++;
  }
  if (width != lx->indent[lx->nindent - 1])
    return layout_error(lx, first_token, "unindent does not match any outer indentation level");
  if (alt != lx->indent_alt[lx->nindent - 1]) return layout_error(lx, first_token, tab_msg);
  return 0;
}

/* End of file: a final NEWLINE, then one DEDENT per open block, then EOF. */
static int end_of_file(Lexer *lx, Span *loc) {
  *loc = eof_span(lx);
  if (lx->nbrackets > 0) {
    char c = lx->bracket_char[lx->nbrackets - 1];
    diag_error(lx->d, lx->bracket_at[lx->nbrackets - 1], "'%c' was never closed", c);
    lx->failed = true;
    return TLS_error;
  }
  if (lx->line_has_token) {
    lx->line_has_token = false;
    return NEWLINE;
  }
  if (lx->nindent > 1) {
    lx->nindent--;
    return DEDENT;
  }
  lx->at_eof = true;
  return TLS_EOF;
}

/* The token function bison calls. */
int tls_lex(YYSTYPE *val, Span *loc, Lexer *lx) {
  static const YYSTYPE no_value;
  if (lx->failed) return TLS_error;
  if (lx->at_eof) return TLS_EOF;
  if (lx->pending_dedents > 0 || lx->pending_indents > 0) {
    *loc = lx->pending_at;
    *val = no_value;
    if (lx->pending_dedents > 0) {
      lx->pending_dedents--;
      return DEDENT;
    }
    lx->pending_indents--;
    return INDENT;
  }
  if (lx->has_lookahead) {
    lx->has_lookahead = false;
    *val = *lx->lookahead_val;
    *loc = lx->lookahead_loc;
    lx->line_has_token = lx->lookahead_tok != NEWLINE;
    return lx->lookahead_tok;
  }
  int tok = tls_raw_lex(val, loc, lx->scanner);
  if (tok == TLS_EOF) return end_of_file(lx, loc);
  if (tok == TLS_error) return tok;
  if (lx->have_measure) {
    if (apply_indent(lx, *loc) != 0) return TLS_error;
    if (lx->pending_dedents > 0 || lx->pending_indents > 0) {
      /* Hand out the layout tokens first, at this token's position. */
      lx->pending_at = *loc;
      lx->pending_at.end_line = loc->line;
      lx->pending_at.end_col = loc->col + 1;
      lx->has_lookahead = true;
      lx->lookahead_tok = tok;
      if (!lx->lookahead_val) lx->lookahead_val = arena_alloc(lx->ar, sizeof *val);
      *lx->lookahead_val = *val;
      lx->lookahead_loc = *loc;
      return tls_lex(val, loc, lx);
    }
  }
  lx->line_has_token = tok != NEWLINE;
  return tok;
}
