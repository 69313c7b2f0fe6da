/* expr.c: the metadata's integer expressions (docs/format.md), compiled at
 * load time to postfix code and evaluated at launch in checked 64-bit
 * signed arithmetic. C's operators and precedence; a comparison is 1 or 0,
 * comparisons do not chain, && and || evaluate their right operand only
 * when the left one does not decide (as in C).
 *
 *   expr    := and ('||' and)*
 *   and     := cmp ('&&' cmp)*
 *   cmp     := sum [('==' | '!=' | '<' | '<=' | '>' | '>=') sum]
 *   sum     := term (('+' | '-') term)*
 *   term    := unary (('*' | '/' | '%') unary)*
 *   unary   := ('-' | '!') unary | primary
 *   primary := INTEGER | NAME | ('min' | 'max') '(' expr ',' expr ')'
 *            | '(' expr ')'
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "runtime/rt_internal.h"

/* Nesting: every parenthesis, min/max argument and unary operator is one
 * level. An expression of EXPR_MAX_CODE instructions nests at most one
 * level per instruction, so any such expression tlsc writes fits. */
enum { EXPR_MAX_DEPTH = 80 };

typedef struct XParser {
  const char *p;
  const Param *params;
  int nparams;
  Expr *out;
  int depth;
  char *msg;
  size_t msglen;
  bool failed;
} XParser;

static void fail(XParser *xp, const char *fmt, const char *arg) {
  if (xp->failed) return;
  xp->failed = true;
  snprintf(xp->msg, xp->msglen, fmt, arg);
}

static void emit(XParser *xp, XOp op, int param, int64_t value) {
  if (xp->out->n == EXPR_MAX_CODE) {
    fail(xp, "expression too long%s", "");
    return;
  }
  xp->out->code[xp->out->n++] = (XInstr){op, param, value};
}

static void parse_expr(XParser *xp);

/* An integer literal; refuses one that does not fit in int64. */
static void parse_integer(XParser *xp) {
  int64_t v = 0;
  while (isdigit((unsigned char)*xp->p)) {
    int d = *xp->p++ - '0';
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, d, &v)) {
      fail(xp, "integer literal too large%s", "");
      return;
    }
  }
  emit(xp, X_CONST, 0, v);
}

/* min(a,b) / max(a,b), after the name. */
static void parse_minmax(XParser *xp, XOp op) {
  if (*xp->p != '(') {
    fail(xp, "expected '(' after %s", op == X_MIN ? "min" : "max");
    return;
  }
  xp->p++;
  parse_expr(xp);
  if (*xp->p != ',') {
    fail(xp, "expected ',' in %s(a,b)", op == X_MIN ? "min" : "max");
    return;
  }
  xp->p++;
  parse_expr(xp);
  if (*xp->p != ')') {
    fail(xp, "expected ')' to close %s(", op == X_MIN ? "min" : "max");
    return;
  }
  xp->p++;
  emit(xp, op, 0, 0);
}

/* A parameter name (integer-typed) or min/max. */
static void parse_name(XParser *xp) {
  const char *start = xp->p;
  while (isalnum((unsigned char)*xp->p) || *xp->p == '_') xp->p++;
  size_t len = (size_t)(xp->p - start);
  char name[64];
  snprintf(name, sizeof name, "%.*s", (int)(len < 63 ? len : 63), start);
  if (!strcmp(name, "min")) {
    parse_minmax(xp, X_MIN);
    return;
  }
  if (!strcmp(name, "max")) {
    parse_minmax(xp, X_MAX);
    return;
  }
  for (int i = 0; i < xp->nparams; i++) {
    if (strlen(xp->params[i].name) != len || strncmp(xp->params[i].name, start, len)) continue;
    if (xp->params[i].type == PT_PTR || xp->params[i].type == PT_F32) {
      fail(xp, "parameter '%s' is not an integer", name);
      return;
    }
    emit(xp, X_PARAM, i, 0);
    return;
  }
  fail(xp, "unknown parameter '%s'", name);
}

static void parse_primary(XParser *xp) {
  char c = *xp->p;
  if (isdigit((unsigned char)c)) {
    parse_integer(xp);
    return;
  }
  if (isalpha((unsigned char)c) || c == '_') {
    parse_name(xp);
    return;
  }
  if (c == '(') {
    xp->p++;
    parse_expr(xp);
    if (*xp->p != ')') {
      fail(xp, "expected ')'%s", "");
      return;
    }
    xp->p++;
    return;
  }
  if (c == '\0') {
    fail(xp, "expression ends early%s", "");
    return;
  }
  char s[2] = {c, 0};
  fail(xp, "unexpected character '%s'", s);
}

/* One level of nesting more; false (with the error) past the limit. */
static bool enter(XParser *xp) {
  if (++xp->depth <= EXPR_MAX_DEPTH) return true;
  fail(xp, "expression nested too deeply%s", "");
  return false;
}

static void parse_unary(XParser *xp) {
  if (!enter(xp)) return;
  if (*xp->p == '-' || (*xp->p == '!' && xp->p[1] != '=')) {
    char op = *xp->p++;
    parse_unary(xp);
    emit(xp, op == '-' ? X_NEG : X_NOT, 0, 0);
  } else {
    parse_primary(xp);
  }
  xp->depth--;
}

static void parse_term(XParser *xp) {
  parse_unary(xp);
  while (!xp->failed && (*xp->p == '*' || *xp->p == '/' || *xp->p == '%')) {
    char op = *xp->p++;
    parse_unary(xp);
    emit(xp, op == '*' ? X_MUL : op == '/' ? X_DIV : X_MOD, 0, 0);
  }
}

static void parse_sum(XParser *xp) {
  parse_term(xp);
  while (!xp->failed && (*xp->p == '+' || *xp->p == '-')) {
    char op = *xp->p++;
    parse_term(xp);
    emit(xp, op == '+' ? X_ADD : X_SUB, 0, 0);
  }
}

/* The comparison operator at p (its length in *len), or X_CONST for none. */
static XOp compare_op(const char *p, int *len) {
  static const struct {
    const char *text;
    XOp op;
  } OPS[] = {{"==", X_EQ}, {"!=", X_NE}, {"<=", X_LE}, {">=", X_GE}, {"<", X_LT}, {">", X_GT}};
  for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
    if (!strncmp(p, OPS[i].text, strlen(OPS[i].text))) {
      *len = (int)strlen(OPS[i].text);
      return OPS[i].op;
    }
  return X_CONST;
}

/* One comparison at most: `a<b<c` would mean (a<b)<c in C, never what
 * was meant, so it is refused. */
static void parse_cmp(XParser *xp) {
  int len = 0;
  parse_sum(xp);
  XOp op = xp->failed ? X_CONST : compare_op(xp->p, &len);
  if (op == X_CONST) return;
  xp->p += len;
  parse_sum(xp);
  emit(xp, op, 0, 0);
  if (!xp->failed && compare_op(xp->p, &len) != X_CONST)
    fail(xp, "comparisons do not chain: parenthesise one%s", "");
}

/* left && right, left || right: the jump skips the right operand when the
 * left one decides; the right one is made 0 or 1. */
static void parse_logic(XParser *xp, const char *token, XOp jump, void (*operand)(XParser *)) {
  operand(xp);
  while (!xp->failed && !strncmp(xp->p, token, 2)) {
    xp->p += 2;
    int at = xp->out->n;
    emit(xp, jump, 0, 0);
    operand(xp);
    emit(xp, X_BOOL, 0, 0);
    if (!xp->failed) xp->out->code[at].param = xp->out->n;
  }
}

static void parse_and(XParser *xp) { parse_logic(xp, "&&", X_ANDJ, parse_cmp); }

static void parse_expr(XParser *xp) { parse_logic(xp, "||", X_ORJ, parse_and); }

/* The most values the code keeps on the stack at once. A jump of && or ||
 * leaves as many values as its right operand does when it runs, so
 * counting straight through is exact. */
static int max_stack(const Expr *e) {
  int depth = 0, most = 0;
  for (int i = 0; i < e->n; i++) {
    XOp op = e->code[i].op;
    if (op == X_CONST || op == X_PARAM)
      depth++;
    else if (op != X_NEG && op != X_NOT && op != X_BOOL)
      depth--;
    if (depth > most) most = depth;
  }
  return most;
}

bool expr_compile(const char *text, const Param *params, int nparams, Expr *out, char *msg,
                  size_t msglen) {
  XParser xp = {text, params, nparams, out, 0, msg, msglen, false};
  out->n = 0;
  if (!*text)
    fail(&xp, "empty expression%s", "");
  else
    parse_expr(&xp);
  if (!xp.failed && *xp.p) {
    char s[2] = {*xp.p, 0};
    fail(&xp, "unexpected character '%s'", s);
  }
  if (!xp.failed && max_stack(out) > EXPR_MAX_STACK) fail(&xp, "expression too complex%s", "");
  return !xp.failed;
}

/* One binary operation, checked; false with msg on overflow or / by 0. */
static bool apply(XOp op, int64_t a, int64_t b, int64_t *r, char *msg, size_t msglen) {
  switch (op) {
  case X_ADD:
    if (!__builtin_add_overflow(a, b, r)) return true;
    break;
  case X_SUB:
    if (!__builtin_sub_overflow(a, b, r)) return true;
    break;
  case X_MUL:
    if (!__builtin_mul_overflow(a, b, r)) return true;
    break;
  case X_DIV:
  case X_MOD:
    if (b == 0) {
      snprintf(msg, msglen, "division by zero (%lld %c 0)", (long long)a, op == X_DIV ? '/' : '%');
      return false;
    }
    if (a == INT64_MIN && b == -1) break;
    *r = op == X_DIV ? a / b : a % b;
    return true;
  case X_MIN:
    *r = a < b ? a : b;
    return true;
  case X_MAX:
    *r = a > b ? a : b;
    return true;
  case X_EQ:
    return *r = a == b, true;
  case X_NE:
    return *r = a != b, true;
  case X_LT:
    return *r = a < b, true;
  case X_LE:
    return *r = a <= b, true;
  case X_GT:
    return *r = a > b, true;
  case X_GE:
    return *r = a >= b, true;
  default:
    break;
  }
  snprintf(msg, msglen, "64-bit overflow");
  return false;
}

/* An operation on the top of the stack alone (- ! and the bool of && and
 * ||); false with msg on overflow. */
static bool apply_unary(XOp op, int64_t *top, char *msg, size_t msglen) {
  if (op == X_NOT || op == X_BOOL) {
    *top = op == X_NOT ? !*top : *top != 0;
    return true;
  }
  if (*top == INT64_MIN) {
    snprintf(msg, msglen, "64-bit overflow");
    return false;
  }
  *top = -*top;
  return true;
}

bool expr_eval(const Expr *e, const int64_t *values, int64_t *out, char *msg, size_t msglen) {
  int64_t stack[EXPR_MAX_STACK];
  int sp = 0;
  for (int i = 0; i < e->n; i++) {
    const XInstr *x = &e->code[i];
    switch (x->op) {
    case X_CONST:
      stack[sp++] = x->value;
      break;
    case X_PARAM:
      stack[sp++] = values[x->param];
      break;
    case X_NEG:
    case X_NOT:
    case X_BOOL:
      if (!apply_unary(x->op, &stack[sp - 1], msg, msglen)) return false;
      break;
    case X_ANDJ:
    case X_ORJ: /* the left operand decides: its value as a bool, and skip */
      if ((stack[sp - 1] != 0) == (x->op == X_ORJ)) {
        stack[sp - 1] = x->op == X_ORJ;
        i = x->param - 1;
      } else {
        sp--;
      }
      break;
    default:
      sp--;
      if (!apply(x->op, stack[sp - 1], stack[sp], &stack[sp - 1], msg, msglen)) return false;
    }
  }
  *out = stack[0];
  return true;
}
