/* multiples.c: what integer expressions are always multiples of, so that
 * the backend knows, for example, that a tile offset `offset_n` stepping by
 * the block size keeps 16-byte vectors aligned.
 *
 * One number per variable: the gcd of everything ever assigned to it (a
 * loop variable: its start and step), found by iterating from "a multiple
 * of everything" (0) down to a fixed point. Flow-insensitive, like the
 * value ranges of ranges.c.
 */
#include <stdlib.h>

#include "ir/ir.h"

static bool is_int(DType t) {
  return t == DT_INT32 || t == DT_UINT32 || t == DT_INT64 || t == DT_UINT64;
}

/* A product that stays a true multiple: past 2^40 the exact value stops
 * mattering (no vector is that wide), so it saturates to a power of two
 * dividing it. */
static int64_t mul_multiple(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a > ((int64_t)1 << 40) / b) {
    int64_t p = 1;
    while (p < ((int64_t)1 << 40) && a % (p * 2) == 0) p *= 2;
    return p;
  }
  return a * b;
}

int64_t ir_expr_multiple(const IrExpr *e, const int64_t *vars) {
  if (!e || !is_int(e->type)) return 1;
  switch (e->kind) {
  case X_CONST:
    return e->ival < 0 ? (e->ival == INT64_MIN ? 1 : -e->ival) : e->ival;
  case X_VAR:
    return vars ? vars[e->var->id] : 1;
  case X_PARAM:
    return e->param->multiple > 1 ? e->param->multiple : 1;
  case X_CAST:
    return is_int(e->a->type) ? ir_expr_multiple(e->a, vars) : 1;
  case X_BINARY:
    switch (e->op) {
    case OP_ADD:
    case OP_SUB:
      return ir_gcd(ir_expr_multiple(e->a, vars), ir_expr_multiple(e->b, vars));
    case OP_MUL:
      return mul_multiple(ir_expr_multiple(e->a, vars), ir_expr_multiple(e->b, vars));
    case OP_SHL: {
      int64_t c;
      if (!ir_is_const(e->b, &c) || c < 0 || c > 40) return 1;
      return mul_multiple(ir_expr_multiple(e->a, vars), (int64_t)1 << c);
    }
    case OP_DIV: {
      /* an exact quotient, whatever the rounding: m*c*q / c = m*q */
      int64_t c, m = ir_expr_multiple(e->a, vars);
      if (!ir_is_const(e->b, &c) || c <= 0) return 1;
      return m % c == 0 ? m / c : 1;
    }
    default:
      return 1;
    }
  case X_UNARY:
    return e->op == OP_NEG ? ir_expr_multiple(e->a, vars) : 1;
  case X_SELECT:
    return ir_gcd(ir_expr_multiple(e->b, vars), ir_expr_multiple(e->c, vars));
  default:
    return 1;
  }
}

typedef struct MulCtx {
  int64_t *m;
  bool *defined;
  bool changed;
} MulCtx;

static void meet(MulCtx *c, const IrVar *v, int64_t x) {
  int64_t g = ir_gcd(c->m[v->id], x);
  c->defined[v->id] = true;
  if (g != c->m[v->id]) {
    c->m[v->id] = g;
    c->changed = true;
  }
}

static void visit(const IrBlock *b, MulCtx *c) {
  for (int i = 0; i < b->len; i++) {
    const IrStmt *s = b->items[i];
    if (s->kind == S_ASSIGN && s->assign.var)
      meet(c, s->assign.var, ir_expr_multiple(s->assign.value, c->m));
    if (s->kind == S_FOR && s->loop.var)
      meet(c, s->loop.var,
           ir_gcd(ir_expr_multiple(s->loop.start, c->m), ir_expr_multiple(s->loop.step, c->m)));
    visit(&s->body, c);
    visit(&s->orelse, c);
  }
}

int64_t *ir_var_multiples(Arena *ar, const IrKernel *k) {
  int n = k->nvars > 0 ? k->nvars : 1;
  MulCtx c = {arena_alloc(ar, sizeof(int64_t) * (size_t)n), xmalloc((size_t)n), true};
  for (int i = 0; i < n; i++) c.m[i] = 0, c.defined[i] = false;
  /* each change lowers a number to a proper divisor; chains of them are
   * short in practice, and past the cap nothing is assumed */
  for (int round = 0; c.changed && round < 200; round++) {
    c.changed = false;
    visit(&k->body, &c);
  }
  for (int i = 0; i < n; i++)
    if (c.changed || !c.defined[i]) c.m[i] = 1;
  free(c.defined);
  return c.m;
}
