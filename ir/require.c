/* require.c: launch-time requirements of a kernel (IrRequire): the
 * static_assert() conditions over `int` kernel parameters that the runtime
 * checks at each launch, since tlsc's generic entry takes as a run-time
 * value what Tilus compiles as a constant. Which conditions qualify is what
 * the metadata's expressions can say (docs/format.md). */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

/* Whether a binary operator has a metadata form (the bitwise ones have
 * none). */
static bool require_binary_op(IrOp op) {
  switch (op) {
  case OP_ADD:
  case OP_SUB:
  case OP_MUL:
  case OP_DIV:
  case OP_MOD:
  case OP_EQ:
  case OP_NE:
  case OP_LT:
  case OP_LE:
  case OP_GT:
  case OP_GE:
  case OP_LAND:
  case OP_LOR:
  case OP_MIN:
  case OP_MAX:
    return true;
  default:
    return false;
  }
}

/* The first child of x that cannot be part of a requirement, or NULL. */
static const IrExpr *unsupported_child(const IrExpr *x) {
  const IrExpr *bad = NULL;
  if (x->a) bad = ir_require_unsupported(x->a);
  if (!bad && x->b) bad = ir_require_unsupported(x->b);
  if (!bad && x->c) bad = ir_require_unsupported(x->c);
  return bad;
}

const IrExpr *ir_require_unsupported(const IrExpr *x) {
  if (dtype_is_float(x->type)) return x;
  switch (x->kind) {
  case X_CONST:
    return NULL;
  case X_PARAM:
    return x->param->is_ptr ? x : NULL;
  case X_CAST:
  case X_SELECT:
    return unsupported_child(x);
  case X_UNARY:
    return x->op == OP_NEG || x->op == OP_LNOT ? unsupported_child(x) : x;
  case X_BINARY:
    return require_binary_op(x->op) ? unsupported_child(x) : x;
  default: /* variables, thread and block indices, element indices */
    return x;
  }
}

/* The text of an expression as the IR printer writes it (arena-owned). */
static char *expr_text(Arena *ar, const IrExpr *x) {
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  if (!mem) return arena_strdup(ar, "?");
  ir_print_expr(mem, x);
  fclose(mem);
  char *text = arena_strdup(ar, buf ? buf : "?");
  free(buf);
  return text;
}

void ir_add_require(Arena *ar, IrKernel *k, IrExpr *cond, const char *msg, Span span) {
  char *text = expr_text(ar, cond);
  for (int i = 0; i < k->nreqs; i++)
    if (!strcmp(k->reqs[i].text, text)) return; /* a helper asserting twice */
  IrRequire *reqs = arena_alloc(ar, sizeof *reqs * (size_t)(k->nreqs + 1));
  if (k->nreqs) memcpy(reqs, k->reqs, sizeof *reqs * (size_t)k->nreqs);
  reqs[k->nreqs] = (IrRequire){cond, text, arena_strdup(ar, msg), span};
  k->reqs = reqs;
  k->nreqs++;
}
