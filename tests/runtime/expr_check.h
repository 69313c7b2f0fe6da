/* expr_check.h: the runtime tests' checks of a metadata expression
 * (runtime/expr.c) compiled over parameters m (i32), n (i64) and p (a
 * pointer, which an integer expression may not read) and evaluated with
 * values for m and n. Included by one test file each (static helpers). */
#ifndef TESTS_RUNTIME_EXPR_CHECK_H
#define TESTS_RUNTIME_EXPR_CHECK_H

#include <string.h>

#include "runtime/rt_internal.h"
#include "tests/unit.h"

static Param expr_params[3] = {
    {.name = "m", .type = PT_I32}, {.name = "n", .type = PT_I64}, {.name = "p", .type = PT_PTR}};

/* Compiles and evaluates with m and n; returns ok (why: the error). */
static bool eval(const char *text, int64_t m, int64_t n, int64_t *out, char *why) {
  Expr e;
  int64_t values[3] = {m, n, 0};
  if (!expr_compile(text, expr_params, 3, &e, why, 128)) return false;
  return expr_eval(&e, values, out, why, 128);
}

static void expect_value(const char *text, int64_t m, int64_t n, int64_t want) {
  int64_t got = 0;
  char why[128] = "";
  bool ok = eval(text, m, n, &got, why);
  CHECK(ok && got == want, "%s with m=%lld n=%lld: got %lld (%s), want %lld", text, (long long)m,
        (long long)n, (long long)got, ok ? "ok" : why, (long long)want);
}

static void expect_error(const char *text, int64_t m, int64_t n, const char *msg) {
  int64_t got = 0;
  char why[128] = "";
  bool ok = eval(text, m, n, &got, why);
  CHECK(!ok && strstr(why, msg), "%s: want error '%s', got %s '%s'", text, msg,
        ok ? "success" : "error", why);
}

#endif
