/* ranges.c: value ranges of integer expressions and variables.
 *
 * A range [lo, hi] bounds every value an integer expression can take,
 * with the IR's wrapping semantics: an operation whose exact result may
 * leave its type's range gets the whole range of the type (it may wrap).
 * Values are int64_t; uint64 values past INT64_MAX are not representable,
 * so a uint64 range is known only while it stays under 2^63.
 *
 * Variable ranges are flow-insensitive: one range per variable that holds
 * every value the variable is ever assigned (assignments, and the values a
 * range() loop gives its variable), computed optimistically: every
 * variable starts empty, each round joins the ranges of all its
 * assignments evaluated over the current ranges, until nothing changes; a
 * variable still growing after WIDEN_ROUNDS rounds is given its type's
 * whole range. The checker makes every read follow an assignment, so a
 * read sees one of the assigned values. One exception to flow-insensitivity:
 * inside a loop's body (one that does not assign its own variable) the
 * variable holds only the values the loop gives it, not the one it is left
 * with after the last trip (ir_loop_body_range), and the walk evaluates the
 * body's assignments with that narrower range; the backend narrows it the
 * same way while it emits the body.
 *
 * The special registers get what the launch gives them: the runtime
 * launches the grid of the entry's metadata (attrs.blocks) and the block of
 * its warps, so blockIdx.d < the largest value grid[d] can take and
 * threadIdx.x < warps * 32. The PTX backend reads these facts (a `%` by a
 * power of two of a non-negative value is an `and`; a tile that cannot
 * leave its tensor is copied without bounds tests).
 */
#include "ir/ir.h"

#include <stdint.h>

typedef __int128 i128;

#define WIDEN_ROUNDS 16

static bool is_int_type(DType t) {
  return t == DT_BOOL || t == DT_INT32 || t == DT_UINT32 || t == DT_INT64 || t == DT_UINT64;
}

/* The values of type t; false for non-integers. */
static bool type_range(DType t, IrRange *r) {
  switch (t) {
  case DT_BOOL:
    *r = (IrRange){0, 1};
    return true;
  case DT_INT32:
    *r = (IrRange){INT32_MIN, INT32_MAX};
    return true;
  case DT_UINT32:
    *r = (IrRange){0, UINT32_MAX};
    return true;
  case DT_INT64:
    *r = (IrRange){INT64_MIN, INT64_MAX};
    return true;
  case DT_UINT64:
    *r = (IrRange){0, INT64_MAX}; /* only while it stays representable */
    return true;
  default:
    return false;
  }
}

/* What is known of a value of type t with no other fact: its type's range;
 * for uint64 the marker [INT64_MIN, INT64_MAX] (values past 2^63 possible). */
static IrRange whole(DType t) {
  IrRange r;
  if (t == DT_UINT64 || !type_range(t, &r)) return (IrRange){INT64_MIN, INT64_MAX};
  return r;
}

static bool empty(IrRange r) { return r.lo > r.hi; }
static const IrRange EMPTY = {1, 0};

static IrRange join(IrRange a, IrRange b) {
  if (empty(a)) return b;
  if (empty(b)) return a;
  return (IrRange){a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi};
}

/* [lo, hi] of exact values as a range of type t: the whole type where any
 * value is outside it (the operation may wrap). */
static IrRange fit(DType t, i128 lo, i128 hi) {
  IrRange full;
  if (!type_range(t, &full)) return EMPTY;
  if (lo < full.lo || hi > full.hi) return whole(t);
  return (IrRange){(int64_t)lo, (int64_t)hi};
}

/* Whether a uint64 range lost its meaning (marked as the whole int64). */
static bool unknown_u64(DType t, IrRange r) { return t == DT_UINT64 && r.lo < 0; }

static i128 max128(i128 a, i128 b) { return a > b ? a : b; }
static i128 min128(i128 a, i128 b) { return a < b ? a : b; }
static i128 abs128(i128 a) { return a < 0 ? -a : a; }

/* C's truncating division of exact values (b != 0). */
static i128 tdiv(i128 a, i128 b) { return a / b; }

static IrRange range_of(const IrExpr *e, const IrRanges *R);

static IrRange binary_range(const IrExpr *e, const IrRanges *R) {
  DType t = e->type;
  IrRange full = whole(t);
  if (e->op >= OP_EQ && e->op <= OP_LOR) return (IrRange){0, 1};
  IrRange a = range_of(e->a, R), b = range_of(e->b, R);
  if (empty(a) || empty(b)) return EMPTY;
  if (unknown_u64(e->a->type, a) || unknown_u64(e->b->type, b)) return full;
  i128 al = a.lo, ah = a.hi, bl = b.lo, bh = b.hi;
  switch (e->op) {
  case OP_ADD:
    return fit(t, al + bl, ah + bh);
  case OP_SUB:
    return fit(t, al - bh, ah - bl);
  case OP_MUL: {
    i128 p[4] = {al * bl, al * bh, ah * bl, ah * bh};
    i128 lo = p[0], hi = p[0];
    for (int i = 1; i < 4; i++) lo = min128(lo, p[i]), hi = max128(hi, p[i]);
    return fit(t, lo, hi);
  }
  case OP_DIV:
    if (bl == bh && bl != 0) { /* monotone in a for a constant divisor */
      i128 x = tdiv(al, bl), y = tdiv(ah, bl);
      return fit(t, min128(x, y), max128(x, y));
    }
    if (al >= 0 && bl > 0) return fit(t, 0, ah);
    { /* |a / b| <= |a| for any b != 0 */
      i128 m = max128(abs128(al), abs128(ah));
      return fit(t, al >= 0 ? 0 : -m, ah <= 0 ? 0 : m);
    }
  case OP_MOD: {
    /* the dividend's sign, |r| < |b| and |r| <= |a| */
    i128 mb = max128(abs128(bl), abs128(bh));
    if (mb == 0) return full;
    i128 ma = max128(abs128(al), abs128(ah));
    if (al >= 0 && ah < min128(abs128(bl), abs128(bh)) && (bl > 0 || bh < 0))
      return fit(t, al, ah); /* a % b == a */
    i128 m = min128(ma, mb - 1);
    return fit(t, al >= 0 ? 0 : -m, ah <= 0 ? 0 : m);
  }
  case OP_AND:
    if (al >= 0 && bl >= 0) return fit(t, 0, min128(ah, bh));
    if (al >= 0) return fit(t, 0, ah);
    if (bl >= 0) return fit(t, 0, bh);
    return full;
  case OP_OR:
  case OP_XOR:
    if (al >= 0 && bl >= 0) {
      i128 m = max128(ah, bh), p = 1;
      while (p <= m) p <<= 1;
      return fit(t, e->op == OP_OR ? max128(al, bl) : 0, p - 1);
    }
    return full;
  case OP_SHL:
    if (bl == bh && bl >= 0 && bl < dtype_bytes(t) * 8)
      return fit(t, al * ((i128)1 << bl), ah * ((i128)1 << bl));
    return full;
  case OP_SHR:
    if (bl == bh && bl >= 0 && bl < dtype_bytes(t) * 8) {
      if (al < 0 && !dtype_is_signed(t)) return full; /* a logical shift of a wrapped value */
      return fit(t, al >> bl, ah >> bl);              /* floor, as the arithmetic shift */
    }
    if (al >= 0) return fit(t, 0, ah);
    return full;
  case OP_MIN:
    return fit(t, min128(al, bl), min128(ah, bh));
  case OP_MAX:
    return fit(t, max128(al, bl), max128(ah, bh));
  default:
    return full;
  }
}

/* What a special register holds with nothing known of the launch. */
static IrRange special_range(SpecialReg r) {
  switch (r) {
  case SR_TID_X:
    return (IrRange){0, 1023};
  case SR_NCTAID_X:
    return (IrRange){1, INT32_MAX};
  case SR_NCTAID_Y:
  case SR_NCTAID_Z:
    return (IrRange){1, 65535};
  case SR_CLUSTER_CTARANK:
  case SR_CLUSTER_CTAID_X:
  case SR_CLUSTER_CTAID_Y:
  case SR_CLUSTER_CTAID_Z:
    return (IrRange){0, IR_MAX_CLUSTER_CTAS * 2 - 1}; /* 16 with the non-portable opt-in */
  default:
    return (IrRange){0, INT32_MAX};
  }
}

/* The range of e (EMPTY while an operand variable has no value yet). */
static IrRange range_of(const IrExpr *e, const IrRanges *R) {
  IrRange full = whole(e->type);
  switch (e->kind) {
  case X_CONST:
    return fit(e->type, e->ival, e->ival);
  case X_VAR:
    if (!R || !R->vars || e->var->id < 0) return full;
    return R->vars[e->var->id];
  case X_PARAM:
  case X_INDEX:
  case X_LOAD:
  case X_MATH:
    return full;
  case X_SPECIAL: {
    IrRange s = R ? R->special[e->sreg] : special_range(e->sreg);
    return fit(e->type, s.lo, s.hi);
  }
  case X_CAST: {
    if (!is_int_type(e->a->type)) return full;
    IrRange a = range_of(e->a, R);
    if (empty(a)) return EMPTY;
    if (e->type == DT_BOOL) return (IrRange){0, 1};
    if (unknown_u64(e->a->type, a)) return full;
    return fit(e->type, a.lo, a.hi);
  }
  case X_UNARY: {
    if (e->op == OP_LNOT) return (IrRange){0, 1};
    IrRange a = range_of(e->a, R);
    if (empty(a)) return EMPTY;
    if (unknown_u64(e->a->type, a)) return full;
    if (e->op == OP_NEG) return fit(e->type, -(i128)a.hi, -(i128)a.lo);
    if (e->op == OP_BNOT && dtype_is_signed(e->type))
      return fit(e->type, -(i128)a.hi - 1, -(i128)a.lo - 1);
    if (e->op == OP_BNOT && e->type == DT_UINT32)
      return fit(e->type, (i128)UINT32_MAX - a.hi, (i128)UINT32_MAX - a.lo);
    return full;
  }
  case X_BINARY:
    return binary_range(e, R);
  case X_SELECT: {
    IrRange b = range_of(e->b, R), c = range_of(e->c, R);
    if (empty(b) || empty(c)) return EMPTY;
    return join(b, c);
  }
  }
  return full;
}

bool ir_expr_range(const IrExpr *e, const IrRanges *R, IrRange *out) {
  if (!e || !is_int_type(e->type)) return false;
  IrRange r = range_of(e, R);
  if (empty(r)) r = whole(e->type);
  if (unknown_u64(e->type, r)) return false;
  *out = r;
  return true;
}

/* ---------------------------------------------------------- variables */

typedef struct Walker {
  const IrKernel *k;
  IrRanges *R;
  bool changed;
  bool *grew; /* this round */
} Walker;

static void def(Walker *W, const IrVar *v, IrRange r) {
  if (empty(r)) return;
  IrRange old = W->R->vars[v->id], now = join(old, r);
  if (now.lo != old.lo || now.hi != old.hi) {
    W->R->vars[v->id] = now;
    W->changed = true;
    W->grew[v->id] = true;
  }
}

bool ir_block_assigns(const IrBlock *b, const IrVar *v) {
  for (int i = 0; i < b->len; i++) {
    const IrStmt *s = b->items[i];
    if ((s->kind == S_ASSIGN && s->assign.var == v) || (s->kind == S_FOR && s->loop.var == v) ||
        ir_block_assigns(&s->body, v) || ir_block_assigns(&s->orelse, v))
      return true;
  }
  return false;
}

bool ir_block_holds(const IrBlock *b, SKind kind) {
  for (int i = 0; i < b->len; i++) {
    const IrStmt *s = b->items[i];
    if (s->kind == kind || ir_block_holds(&s->body, kind) || ir_block_holds(&s->orelse, kind))
      return true;
  }
  return false;
}

/* The values range(start, stop, step) gives its variable, the value past
 * the last iteration included (it is what the variable holds after the
 * loop): start, and up to stop - 1 + step for a positive step, as long as
 * that cannot wrap. */
static IrRange loop_range(const IrRanges *R, const IrStmt *s) {
  const IrForStmt *l = &s->loop;
  IrRange full = whole(l->var->type);
  int64_t step;
  if (ir_block_assigns(&s->body, l->var) || !ir_is_const(l->step, &step) || step == 0) return full;
  IrRange a = range_of(l->start, R), b = range_of(l->stop, R);
  if (empty(a) || empty(b)) return EMPTY;
  if (unknown_u64(l->start->type, a) || unknown_u64(l->stop->type, b)) return full;
  if (step > 0) {
    i128 last = (i128)b.hi - 1 + step; /* the largest value past a run */
    if (last > full.hi) return full;
    return fit(l->var->type, a.lo, max128(a.hi, last));
  }
  i128 last = (i128)b.lo + 1 + step;
  if (last < full.lo) return full;
  return fit(l->var->type, min128(a.lo, last), a.hi);
}

/* Inside the body the variable is below the stop (above it for a negative
 * step) and, from a constant start, on the step's grid: range(0, 4064, 64)
 * gives 0 ... 4032. A body that never runs gets the start. */
bool ir_loop_body_range(const IrStmt *s, const IrRanges *R, IrRange *out) {
  const IrForStmt *l = &s->loop;
  int64_t step;
  if (!is_int_type(l->var->type) || ir_block_assigns(&s->body, l->var) ||
      !ir_is_const(l->step, &step) || step == 0)
    return false;
  IrRange a = range_of(l->start, R), b = range_of(l->stop, R);
  if (empty(a) || empty(b) || unknown_u64(l->start->type, a) || unknown_u64(l->stop->type, b))
    return false;
  i128 lo, hi, st = step;
  if (st > 0) {
    i128 top = (i128)b.hi - 1; /* the largest value below the stop */
    if (a.lo == a.hi && top >= a.lo) top = a.lo + (top - a.lo) / st * st;
    lo = a.lo, hi = top < a.lo ? a.lo : top;
  } else {
    i128 bottom = (i128)b.lo + 1; /* the smallest value above the stop */
    if (a.lo == a.hi && bottom <= a.hi) bottom = a.hi - (a.hi - bottom) / -st * -st;
    hi = a.hi, lo = bottom > a.hi ? a.hi : bottom;
  }
  IrRange r = fit(l->var->type, lo, hi);
  if (empty(r)) return false;
  *out = r;
  return true;
}

IrRange ir_enter_loop_body(const IrStmt *s, IrRanges *R) {
  IrRange *v = &R->vars[s->loop.var->id], saved = *v, body;
  if (!empty(saved) && ir_loop_body_range(s, R, &body)) {
    body.lo = body.lo > saved.lo ? body.lo : saved.lo;
    body.hi = body.hi < saved.hi ? body.hi : saved.hi;
    if (!empty(body)) *v = body;
  }
  return saved;
}

static void walk(Walker *W, const IrBlock *b);

/* A loop: its variable's values, then its body with the variable narrowed
 * to the values it has there (restored for what follows the loop). */
static void walk_loop(Walker *W, const IrStmt *s) {
  def(W, s->loop.var, loop_range(W->R, s));
  IrRange saved = ir_enter_loop_body(s, W->R);
  walk(W, &s->body);
  W->R->vars[s->loop.var->id] = saved;
}

static void walk(Walker *W, const IrBlock *b) {
  for (int i = 0; i < b->len; i++) {
    const IrStmt *s = b->items[i];
    if (s->kind == S_ASSIGN && is_int_type(s->assign.var->type))
      def(W, s->assign.var, range_of(s->assign.value, W->R));
    if (s->kind == S_FOR) {
      walk_loop(W, s);
    } else {
      walk(W, &s->body);
    }
    walk(W, &s->orelse);
  }
}

/* What the launch gives the special registers: blockIdx below the grid
 * (the runtime launches the grid of the entry's metadata, so an
 * attrs.blocks that is a constant bounds blockIdx), threadIdx below the
 * block's threads. */
static void launch_ranges(const IrKernel *k, IrRanges *R) {
  for (int r = 0; r < IR_NUM_SPECIAL; r++) R->special[r] = special_range((SpecialReg)r);
  R->special[SR_TID_X] = (IrRange){0, (int64_t)k->warps * 32 - 1};
  static const SpecialReg ctaid[3] = {SR_CTAID_X, SR_CTAID_Y, SR_CTAID_Z};
  static const SpecialReg nctaid[3] = {SR_NCTAID_X, SR_NCTAID_Y, SR_NCTAID_Z};
  for (int d = 0; d < 3; d++) {
    IrRange g;
    if (!k->grid[d] || !ir_expr_range(k->grid[d], R, &g) || g.hi < 1) continue;
    IrRange *n = &R->special[nctaid[d]], *c = &R->special[ctaid[d]];
    if (g.hi < n->hi) n->hi = g.hi;
    if (g.lo > n->lo) n->lo = g.lo;
    if (g.hi - 1 < c->hi) c->hi = g.hi - 1;
  }
}

IrRanges *ir_kernel_ranges(Arena *ar, const IrKernel *k) {
  int n = k->nvars;
  IrRanges *R = arena_alloc(ar, sizeof *R);
  R->vars = NULL;
  launch_ranges(k, R);
  Walker W = {.k = k, .R = R};
  R->vars = arena_alloc(ar, sizeof(IrRange) * (size_t)(n + 1));
  W.grew = arena_alloc(ar, (size_t)n + 1);
  for (int i = 0; i < n; i++) R->vars[i] = EMPTY;
  for (int round = 0;; round++) {
    W.changed = false;
    for (int i = 0; i < n; i++) W.grew[i] = false;
    walk(&W, &k->body);
    if (!W.changed) break;
    if (round >= WIDEN_ROUNDS)
      for (int i = 0; i < n; i++)
        if (W.grew[i]) R->vars[i] = whole(k->vars[i]->type);
  }
  /* never assigned (or not an integer): nothing is known */
  for (int i = 0; i < n; i++)
    if (empty(R->vars[i]) || !is_int_type(k->vars[i]->type)) R->vars[i] = whole(k->vars[i]->type);
  return R;
}
