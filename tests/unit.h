/* unit.h: the check macro the C unit tests share.
 *
 * CHECK(cond) or CHECK(cond, "format", ...) counts a check and, when cond is
 * false, a failure, printed as `FAIL file:line: cond: message`. A test's
 * main returns failures != 0.
 */
#ifndef TLSC_TESTS_UNIT_H
#define TLSC_TESTS_UNIT_H

#include <stdio.h>

static int failures, checks;

#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    checks++;                                                                                      \
    if (!(cond)) {                                                                                 \
      failures++;                                                                                  \
      printf("FAIL %s:%d: %s:", __FILE__, __LINE__, #cond);                                        \
      printf(" " __VA_ARGS__);                                                                     \
      printf("\n");                                                                                \
    }                                                                                              \
  } while (0)

#endif
