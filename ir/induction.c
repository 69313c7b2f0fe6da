/* induction.c: integer expressions as affine functions of a loop's
 * variable, for strength reduction in the backend.
 *
 * Inside the body of `for v in range(start, stop, step)`, an expression
 * such as the copy offset `(offset_k + 64) // 16` (offset_k the loop's
 * variable, or a variable the body assigned from it earlier in the same
 * trip) is (num / den) * v + rest + k: rest loop-invariant, k a constant.
 * The backend then keeps what the expression addresses in a register that
 * advances by a constant each trip, and the copies of an unrolled body
 * differ from it by immediates (k), as LLVM's loop strength reduction
 * gives nvcc for Tilus's C++.
 *
 * A variable the body assigns is replaced by the value of its last
 * assignment among the body's statements before the one being emitted,
 * when nothing else in between (a nested block included) assigns it; its
 * value's variables are resolved at that assignment, and so on. Integer
 * arithmetic is C's (int32): a division splits only over parts that are
 * known non-negative (ranges.c) and whose loop part is a multiple of the
 * divisor for every value the variable takes (multiples.c).
 */
#include <stdlib.h>

#include "ir/ir.h"

typedef struct Ctx {
  Arena *ar;
  const IrStmt *loop;
  const IrRanges *ranges;
  const int64_t *multiples;
  int at;      /* the body statement whose values are wanted */
  int *budget; /* variable resolutions left (shared by the nested contexts) */
  bool failed;
} Ctx;

/* Resolutions one expression may take: a chain of assignments that reads
 * each earlier value twice would otherwise cost 2^n. */
enum { RESOLVE_BUDGET = 512 };

static IrExpr *resolve_leaf(void *ctx, IrExpr *x);

/* The value of v at statement `at` of the loop's body, over the loop's
 * variable and loop-invariant values; NULL when it is not known there. */
static IrExpr *value_at(Ctx *c, IrVar *v, int at) {
  const IrBlock *body = &c->loop->body;
  if (v == c->loop->loop.var || !ir_block_assigns(body, v)) return NULL; /* itself */
  if (--*c->budget < 0) {
    c->failed = true;
    return NULL;
  }
  for (int j = at - 1; j >= 0; j--) {
    const IrStmt *s = body->items[j];
    if (s->kind == S_ASSIGN && s->assign.var == v) {
      if (s->assign.value->type != v->type) break;
      Ctx inner = *c;
      inner.at = j;
      IrExpr *r = ir_expr_substitute(c->ar, s->assign.value, resolve_leaf, &inner);
      if (inner.failed) break;
      if (r->nodes > RESOLVE_BUDGET) break; /* printed as a key: keep it small */
      return r;
    }
    if (ir_block_assigns(&s->body, v) || ir_block_assigns(&s->orelse, v) ||
        (s->kind == S_FOR && s->loop.var == v))
      break;
  }
  c->failed = true;
  return NULL;
}

static IrExpr *resolve_leaf(void *ctx, IrExpr *x) {
  Ctx *c = ctx;
  if (c->failed) return x;
  const IrStmt *here = c->loop->body.items[c->at];
  if (here->kind != S_ASSIGN &&
      (ir_block_assigns(&here->body, x->var) || ir_block_assigns(&here->orelse, x->var))) {
    c->failed = true; /* the statement itself may assign it before the use */
    return x;
  }
  IrExpr *v = value_at(c, x->var, c->at);
  return v ? v : x;
}

static bool mul_ok(int64_t a, int64_t b, int64_t *r) { return !__builtin_mul_overflow(a, b, r); }
static bool add_ok(int64_t a, int64_t b, int64_t *r) { return !__builtin_add_overflow(a, b, r); }

static IrExpr *rest_add(Arena *ar, IrOp op, IrExpr *a, IrExpr *b) {
  if (!b) return a;
  if (!a) return op == OP_ADD ? b : ir_unary(ar, OP_NEG, b);
  return ir_binary(ar, op, a, b);
}

static bool affine(Ctx *c, const IrExpr *e, IrAffine *out);

/* a's coefficient num / den (den > 0) in lowest terms, 0 as 0 / 1. */
static void set_coef(IrAffine *a, int64_t num, int64_t den) {
  int64_t g = ir_gcd(num, den);
  a->num = num / g;
  a->den = num ? den / g : 1;
}

/* a / q (C's division) for a constant q > 0. */
static bool affine_div(Ctx *c, const IrAffine *a, int64_t q, IrAffine *out) {
  const IrVar *v = c->loop->loop.var;
  int64_t m = c->multiples ? c->multiples[v->id] : 1, nm, dq;
  if (!c->ranges || a->k < INT32_MIN || a->k > INT32_MAX) return false;
  IrRange vr = c->ranges->vars[v->id];
  if (a->num < 0 || (a->num > 0 && vr.lo < 0)) return false;
  if (!mul_ok(a->num, m, &nm) || !mul_ok(a->den, q, &dq) || nm % dq != 0) return false;
  IrExpr *tail = rest_add(c->ar, OP_ADD, a->rest, ir_const(c->ar, DT_INT32, a->k));
  IrRange tr;
  if (!ir_expr_range(tail, c->ranges, &tr) || tr.lo < 0) return false;
  *out = (IrAffine){0};
  set_coef(out, a->num, dq);
  if (a->k % q == 0 && (!a->rest || ir_expr_multiple(a->rest, c->multiples) % q == 0)) {
    out->rest = a->rest ? ir_binary(c->ar, OP_DIV, a->rest, ir_const(c->ar, DT_INT32, q)) : NULL;
    out->k = a->k / q;
  } else {
    out->rest = ir_binary(c->ar, OP_DIV, tail, ir_const(c->ar, DT_INT32, q));
    out->k = 0;
  }
  return true;
}

/* a * f for a constant f. */
static bool affine_scale(Ctx *c, IrAffine *a, int64_t f) {
  int64_t num;
  if (!mul_ok(a->num, f, &num) || !mul_ok(a->k, f, &a->k)) return false;
  set_coef(a, num, a->den);
  if (a->rest) a->rest = ir_binary(c->ar, OP_MUL, a->rest, ir_const(c->ar, DT_INT32, f));
  return true;
}

static bool affine_sum(Ctx *c, IrOp op, const IrAffine *a, const IrAffine *b, IrAffine *out) {
  int64_t bn = op == OP_SUB ? -b->num : b->num, bk = op == OP_SUB ? -b->k : b->k, x, y, d;
  if (!mul_ok(a->num, b->den, &x) || !mul_ok(bn, a->den, &y) || !add_ok(x, y, &x) ||
      !mul_ok(a->den, b->den, &d) || !add_ok(a->k, bk, &out->k))
    return false;
  set_coef(out, x, d);
  out->rest = rest_add(c->ar, op, a->rest, b->rest);
  return true;
}

static bool affine(Ctx *c, const IrExpr *e, IrAffine *out) {
  if (e->type != DT_INT32) return false;
  *out = (IrAffine){.num = 0, .den = 1};
  if (e->kind == X_CONST) {
    out->k = e->ival;
    return true;
  }
  if (e->kind == X_VAR && e->var == c->loop->loop.var) {
    out->num = 1;
    return true;
  }
  if (ir_expr_loop_invariant(e, c->loop)) {
    out->rest = (IrExpr *)e;
    return true;
  }
  if (e->kind != X_BINARY) return false;
  IrAffine a, b;
  int64_t f;
  switch (e->op) {
  case OP_ADD:
  case OP_SUB:
    return affine(c, e->a, &a) && affine(c, e->b, &b) && affine_sum(c, e->op, &a, &b, out);
  case OP_MUL:
    if (ir_is_const(e->b, &f)) return affine(c, e->a, out) && affine_scale(c, out, f);
    if (ir_is_const(e->a, &f)) return affine(c, e->b, out) && affine_scale(c, out, f);
    return false;
  case OP_SHL:
    if (!ir_is_const(e->b, &f) || f < 0 || f > 30) return false;
    return affine(c, e->a, out) && affine_scale(c, out, (int64_t)1 << f);
  case OP_DIV:
    if (!ir_is_const(e->b, &f) || f <= 0) return false;
    return affine(c, e->a, &a) && affine_div(c, &a, f, out);
  default:
    return false;
  }
}

bool ir_loop_affine(Arena *ar, const IrStmt *loop, int at, const IrExpr *e, const IrRanges *ranges,
                    const int64_t *multiples, IrAffine *out) {
  if (loop->kind != S_FOR || at < 0 || at >= loop->body.len ||
      ir_block_assigns(&loop->body, loop->loop.var))
    return false;
  int budget = RESOLVE_BUDGET;
  Ctx c = {.ar = ar,
           .loop = loop,
           .ranges = ranges,
           .multiples = multiples,
           .at = at,
           .budget = &budget};
  IrExpr *x = ir_expr_substitute(ar, (IrExpr *)e, resolve_leaf, &c);
  return !c.failed && affine(&c, x, out) && (!out->rest || out->rest->nodes <= RESOLVE_BUDGET);
}
