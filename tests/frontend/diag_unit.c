/* diag_unit.c: the diagnostic printer on its own, through the API other
 * layers use: spans over several lines, tabs and UTF-8 before the caret,
 * the window on long lines, notes, positionless errors and max_errors.
 * Its stderr is compared with diag_unit.err. */
#include "frontend/frontend.h"

#include <string.h>

static Span at(int line, int col, int end_line, int end_col) {
  return (Span){line, col, end_line, end_col};
}

int main(void) {
  char long_line[400];
  memset(long_line, 'x', sizeof long_line);
  memcpy(long_line + 200, "TARGET", 6);
  long_line[sizeof long_line - 1] = '\0';
  char text[1024];
  snprintf(text, sizeof text,
           "x = 1\n"
           "\tif y:\t# tab inside\n"
           "s = \"h\xc3\xa9llo\" + bad\n"
           "first line of a span\n"
           "second line\n"
           "%s\n"
           "last = 1",
           long_line);
  Source *src = source_from_string("unit.tls", text);
  Diag d;
  diag_init(&d, src, stderr);
  diag_error(&d, at(1, 5, 1, 6), "a one-character span");
  diag_error(&d, at(2, 5, 2, 9), "after a tab, %s", "caret keeps the tab");
  diag_error(&d, at(3, 16, 3, 19), "after a two-byte character");
  diag_note(&d, at(3, 5, 3, 12), "a note with a span");
  diag_error(&d, at(4, 7, 5, 3), "a span over two lines");
  diag_error(&d, at(6, 201, 6, 207), "in a long line");
  diag_error(&d, at(7, 8, 7, 9), "on the last line, without a newline");
  diag_error(&d, at(0, 0, 0, 0), "no position");
  diag_plain_error(&d, "plain %d", 42);
  d.max_errors = d.nerrors + 1;
  diag_error(&d, at(1, 1, 1, 2), "the last error shown");
  diag_error(&d, at(1, 1, 1, 2), "suppressed");
  diag_note(&d, at(1, 1, 1, 2), "suppressed note");
  diag_error(&d, at(1, 1, 1, 2), "suppressed too");
  fprintf(stderr, "nerrors=%d\n", d.nerrors);
  source_free(src);
  return 0;
}
