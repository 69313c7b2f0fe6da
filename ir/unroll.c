/* unroll.c: run-time loops with an unroll factor, unrolled in the IR.
 *
 *   for v in range(start, stop, s) unroll U: BODY
 *
 * becomes (S the stop, saved in a variable first when it reads variables,
 * since range() evaluates it once; MIN the type's least value):
 *
 *   v = start
 *   for v in range(start, max(S, MIN + (U-1)s) - (U-1)s, U*s):
 *     BODY[v]  BODY[v + s]  ...  BODY[v + (U-1)s]
 *   if v < S:
 *     BODY[v]
 *     if v < max(S, MIN + s) - s:
 *       BODY[v + s]
 *       ...                                  (U - 1 copies at most)
 *
 * The main loop tests once per trip, that all U copies are in range: its
 * bound saturates instead of wrapping below MIN (a stop that close to MIN
 * leaves every iteration to the remainder, as it must). The remainder's
 * tests are nested, so the first that fails skips the rest; after the main
 * loop v is its exit value, the first iteration it did not run. For a
 * negative step the comparisons turn and max becomes min with the type's
 * greatest value. With a constant start and stop the trip count is known:
 * the remainder is its exact number of copies, without tests, and a loop
 * of one trip (U to 2U - 1 iterations) is its copies alone. The
 * assignment v = start before the main loop only says that v has a value
 * after it (the checker's rule); the loop sets it again.
 *
 * Guards opened. A body that tests `if w < E` with w = v + c (c >= 0
 * constant; w the variable itself or one the body assigned so before the
 * if) and E loop-invariant, as a pipeline guards the copy that prefetches
 * c ahead (`if preload_offset_k < end_offset_k`), passes the test in every
 * copy of a main-loop trip once v < E - (U-1)s - c. The main loop is then
 * two: one up to that bound whose copies run the guarded statements
 * unconditionally, and one from where it stopped, as above:
 *
 *   for v in range(start, min(<main bound>, max(E, MIN + j) - j), U*s):
 *     OPEN[v] ... OPEN[v + (U-1)s]            (j = (U-1)s + c)
 *   for v in range(v, <main bound>, U*s):
 *     BODY[v] ... BODY[v + (U-1)s]
 *
 * so that the first, where nearly every trip runs, is one basic block for
 * ptxas to schedule (the copies among the mma.sync; Tilus's Ampere
 * matmul_v5), at the cost of one more copy of the unrolled body.
 *
 * A loop is left as it is (the backend then emits its copies, each with
 * its own test) when its step is not a constant, when (U-1)*|s| is large
 * for its type, or when its variable is read outside its body or written
 * by anything but the loop: the rewrite changes the value v has after the
 * loop.
 */
#include "ir/ir.h"

#include <string.h>

typedef struct Unroller {
  Arena *ar;
  IrKernel *k;
} Unroller;

/* ------------------------------------------------------------ uses */

typedef struct ReadCheck {
  const IrVar *v;
  bool hit;
} ReadCheck;

static IrExpr *check_read(void *ctx, IrExpr *e) {
  ReadCheck *c = ctx;
  if (!c->hit && ir_expr_reads(e, c->v)) c->hit = true;
  return e;
}

static bool stmt_reads(IrStmt *s, const IrVar *v) {
  ReadCheck c = {v, false};
  ir_stmt_map_exprs(s, check_read, &c);
  return c.hit;
}

/* Whether v is read, assigned or another loop's variable anywhere in b
 * outside the body of `loop`. */
static bool used_elsewhere(IrBlock *b, const IrStmt *loop, const IrVar *v) {
  for (int i = 0; i < b->len; i++) {
    IrStmt *s = b->items[i];
    if (stmt_reads(s, v)) return true;
    if (s == loop) continue;
    if ((s->kind == S_ASSIGN && s->assign.var == v) || (s->kind == S_FOR && s->loop.var == v))
      return true;
    if (used_elsewhere(&s->body, loop, v) || used_elsewhere(&s->orelse, loop, v)) return true;
  }
  return false;
}

static bool has_vars(const IrExpr *e) {
  if (!e) return false;
  if (e->kind == X_VAR) return true;
  return has_vars(e->a) || has_vars(e->b) || has_vars(e->c);
}

/* ------------------------------------------------------------ copies */

typedef struct Shift {
  Arena *ar;
  const IrVar *v;
  IrExpr *with; /* v + i*s */
} Shift;

static IrExpr *shift_leaf(void *ctx, IrExpr *x) {
  Shift *sh = ctx;
  return x->var == sh->v ? sh->with : x;
}

static IrExpr *shift_slot(void *ctx, IrExpr *e) {
  Shift *sh = ctx;
  return ir_expr_substitute(sh->ar, e, shift_leaf, sh);
}

static void shift_block(Shift *sh, IrBlock *b) {
  for (int i = 0; i < b->len; i++) {
    ir_stmt_map_exprs(b->items[i], shift_slot, sh);
    shift_block(sh, &b->items[i]->body);
    shift_block(sh, &b->items[i]->orelse);
  }
}

/* Appends a copy of body to out with v replaced by v + offset. */
static void push_copy(Unroller *U, IrBlock *out, const IrBlock *body, IrVar *v, int64_t offset) {
  IrBlock copy = {0};
  for (int i = 0; i < body->len; i++)
    ir_block_push(U->ar, &copy, ir_stmt_clone(U->ar, body->items[i]));
  if (offset) {
    Shift sh = {U->ar, v,
                ir_binary(U->ar, OP_ADD, ir_var_ref(U->ar, v), ir_const(U->ar, v->type, offset))};
    shift_block(&sh, &copy);
  }
  for (int i = 0; i < copy.len; i++) ir_block_push(U->ar, out, copy.items[i]);
}

/* ------------------------------------------------------------ bounds */

static int type_bits(DType t) { return dtype_bytes(t) * 8; }

static int64_t type_min(DType t) {
  if (!dtype_is_signed(t)) return 0;
  return type_bits(t) == 32 ? INT32_MIN : INT64_MIN;
}

static int64_t type_max(DType t) {
  if (t == DT_UINT32) return UINT32_MAX;
  if (t == DT_INT32) return INT32_MAX;
  return INT64_MAX; /* uint64 steps are kept far below it */
}

/* The bound v must be below (above, for a negative step) for v + j*s to
 * be in range: S - j*s, saturating at the type's end instead of wrapping. */
static IrExpr *bound(Unroller *U, DType t, IrExpr *stop, int64_t j, int64_t step) {
  if (j == 0) return stop;
  int64_t js = j * step;
  IrExpr *lim =
      step > 0 ? ir_const(U->ar, t, type_min(t) + js) : ir_const(U->ar, t, type_max(t) + js);
  IrExpr *sat = ir_binary(U->ar, step > 0 ? OP_MAX : OP_MIN, stop, lim);
  return ir_binary(U->ar, OP_SUB, sat, ir_const(U->ar, t, js));
}

static IrStmt *new_assign(Unroller *U, Span sp, IrVar *v, IrExpr *value) {
  IrStmt *s = ir_stmt_new(U->ar, S_ASSIGN, sp);
  s->assign.var = v;
  s->assign.value = value;
  return s;
}

/* Whether the loop can be rewritten; *step its step. */
static bool eligible(Unroller *U, IrStmt *s, int64_t *step) {
  const IrForStmt *l = &s->loop;
  DType t = l->var->type;
  if (l->unroll <= 1 || !ir_is_const(l->step, step) || *step == 0) return false;
  if (t != DT_INT32 && t != DT_UINT32 && t != DT_INT64 && t != DT_UINT64) return false;
  if (!dtype_is_signed(t) && *step < 0) return false;
  /* U * |s| far from the type's range: the bounds and offsets never wrap */
  int64_t limit = type_bits(t) == 32 ? (int64_t)1 << 29 : (int64_t)1 << 61;
  int64_t as = *step < 0 ? -*step : *step;
  if (as > limit || l->unroll > limit / as) return false;
  if (ir_block_assigns(&s->body, l->var)) return false;
  return !used_elsewhere(&U->k->body, s, l->var);
}

/* The trip count of range(start, stop, s) with constants; false when the
 * loop would wrap (its count is then not what the rewrite assumes). */
static bool const_trips(DType t, int64_t start, int64_t stop, int64_t step, int64_t *n) {
  __int128 a = start, b = stop, s = step;
  if (step > 0 ? a >= b : a <= b) {
    *n = 0;
    return true;
  }
  __int128 span = step > 0 ? b - a : a - b, as = step > 0 ? s : -s;
  __int128 trips = (span + as - 1) / as;
  __int128 past = a + trips * s; /* the value after the last iteration */
  if (past > type_max(t) || past < type_min(t) || trips > INT64_MAX) return false;
  *n = (int64_t)trips;
  return true;
}

/* ------------------------------------------------------------ guards */

/* c when x is v + c for a constant c >= 0 (v itself, a variable the table
 * says the body set to v + c, either plus a constant); else -1. */
static int64_t offset_of(const IrExpr *x, const IrVar *v, IrVar **vars, const int64_t *offs,
                         int nvars) {
  if (x->kind == X_VAR) {
    if (x->var == v) return 0;
    for (int i = 0; i < nvars; i++)
      if (vars[i] == x->var) return offs[i];
    return -1;
  }
  int64_t k;
  if (x->kind == X_BINARY && x->op == OP_ADD && x->type == v->type) {
    const IrExpr *y = ir_is_const(x->b, &k) ? x->a : ir_is_const(x->a, &k) ? x->b : NULL;
    int64_t c = y ? offset_of(y, v, vars, offs, nvars) : -1;
    if (c >= 0 && k >= 0 && k < ((int64_t)1 << 29) && c + k < ((int64_t)1 << 29)) return c + k;
  }
  return -1;
}

/* Whether e has the same value in every trip of `loop`: it reads no
 * variable the body assigns (nor the loop's), no memory, no index. */
static bool invariant(const IrExpr *e, const IrStmt *loop) {
  if (!e) return true;
  if (e->kind == X_LOAD || e->kind == X_INDEX) return false;
  if (e->kind == X_VAR && (e->var == loop->loop.var || ir_block_assigns(&loop->body, e->var)))
    return false;
  return invariant(e->a, loop) && invariant(e->b, loop) && invariant(e->c, loop);
}

/* The body of loop s with its guards opened (see the top of the file) in
 * *open, and in *clear the bound below which a trip of nu copies passes
 * them all; false when the body has no such guard. */
static bool open_guards(Unroller *U, const IrStmt *s, int64_t step, int64_t nu, IrBlock *open,
                        IrExpr **clear) {
  const IrBlock *body = &s->body;
  const IrVar *v = s->loop.var;
  DType t = v->type;
  enum { MAX_TRACKED = 32 };
  IrVar *vars[MAX_TRACKED];
  int64_t offs[MAX_TRACKED];
  int nvars = 0;
  *open = (IrBlock){0};
  *clear = NULL;
  for (int i = 0; i < body->len; i++) {
    IrStmt *st = body->items[i];
    const IrExpr *c = st->kind == S_IF ? st->branch.cond : NULL;
    const IrExpr *w = NULL, *e = NULL;
    if (c && c->kind == X_BINARY && (c->op == OP_LT || c->op == OP_GT))
      w = c->op == OP_LT ? c->a : c->b, e = c->op == OP_LT ? c->b : c->a;
    int64_t off = w && w->type == t && e->type == t ? offset_of(w, v, vars, offs, nvars) : -1;
    if (off >= 0 && invariant(e, s)) {
      IrExpr *lim = bound(U, t, (IrExpr *)e, 1, (nu - 1) * step + off);
      *clear = *clear ? ir_binary(U->ar, OP_MIN, *clear, lim) : lim;
      for (int j = 0; j < st->body.len; j++) ir_block_push(U->ar, open, st->body.items[j]);
      continue;
    }
    ir_block_push(U->ar, open, st);
    /* what the table knows after st: w = v + c from an assignment, and
     * nothing of a variable anything else assigns */
    for (int j = 0; j < nvars; j++)
      if ((st->kind == S_ASSIGN && st->assign.var == vars[j]) ||
          ir_block_assigns(&st->body, vars[j]) || ir_block_assigns(&st->orelse, vars[j]))
        vars[j--] = vars[--nvars], offs[j + 1] = offs[nvars];
    if (st->kind == S_ASSIGN && st->assign.var->type == t && nvars < MAX_TRACKED) {
      int64_t k = offset_of(st->assign.value, v, vars, offs, nvars);
      if (k >= 0) vars[nvars] = st->assign.var, offs[nvars++] = k;
    }
  }
  return *clear != NULL;
}

/* A main loop of nu copies of body from `start` below `stop`. */
static IrStmt *main_loop(Unroller *U, Span sp, IrVar *v, IrExpr *start, IrExpr *stop, int64_t step,
                         int64_t nu, const IrBlock *body) {
  IrStmt *main = ir_stmt_new(U->ar, S_FOR, sp);
  main->loop = (IrForStmt){
      .var = v, .start = start, .stop = stop, .step = ir_const(U->ar, v->type, nu * step)};
  for (int64_t u = 0; u < nu; u++) push_copy(U, &main->body, body, v, u * step);
  return main;
}

/* The statements that replace loop s. */
static void rewrite(Unroller *U, IrStmt *s, int64_t step, IrBlock *out) {
  IrForStmt *l = &s->loop;
  IrVar *v = l->var;
  DType t = v->type;
  int64_t nu = l->unroll;
  Span sp = s->span;
  IrExpr *start = ir_cast(U->ar, t, l->start), *stop = ir_cast(U->ar, t, l->stop);
  int64_t cstart, cstop, trips = -1;
  bool known = ir_is_const(start, &cstart) && ir_is_const(stop, &cstop) &&
               const_trips(t, cstart, cstop, step, &trips);
  if (has_vars(stop)) {
    char *name = arena_printf(U->ar, "%s_stop", v->name);
    IrVar *sv = ir_new_var(U->ar, U->k, name, t);
    ir_block_push(U->ar, out, new_assign(U, sp, sv, stop));
    stop = ir_var_ref(U->ar, sv);
  }
  ir_block_push(U->ar, out, new_assign(U, sp, v, start));
  if (known && trips / nu == 1) { /* one trip: its copies, without a loop */
    for (int64_t u = 0; u < trips; u++) push_copy(U, out, &s->body, v, u * step);
    return;
  }
  if (!known || trips >= nu) {
    IrExpr *last = bound(U, t, stop, nu - 1, step), *clear;
    IrBlock open;
    if (step > 0 && open_guards(U, s, step, nu, &open, &clear)) {
      IrExpr *first = ir_binary(U->ar, OP_MIN, last, clear);
      ir_block_push(U->ar, out, main_loop(U, sp, v, start, first, step, nu, &open));
      start = ir_var_ref(U->ar, v);
    }
    ir_block_push(U->ar, out, main_loop(U, sp, v, start, last, step, nu, &s->body));
  }
  if (known) { /* the remainder's size is known: its copies, untested */
    for (int64_t u = 0; u < trips % nu; u++) push_copy(U, out, &s->body, v, u * step);
    return;
  }
  IrBlock *at = out;
  for (int64_t u = 0; u < nu - 1; u++) {
    IrStmt *test = ir_stmt_new(U->ar, S_IF, sp);
    test->branch.cond = ir_binary(U->ar, step > 0 ? OP_LT : OP_GT, ir_var_ref(U->ar, v),
                                  bound(U, t, stop, u, step));
    ir_block_push(U->ar, at, test);
    push_copy(U, &test->body, &s->body, v, u * step);
    at = &test->body;
  }
}

/* Whether s belongs in a loop auto_unroll unrolls: it moves data or
 * multiplies, and computes nothing else in registers. */
static bool feeds_dots(const IrStmt *s) {
  switch (s->kind) {
  case S_ASSIGN:
  case S_SYNC:
  case S_CP_ASYNC:
  case S_CP_COMMIT:
  case S_CP_WAIT:
  case S_CP_WAIT_ALL:
  case S_LOAD_GLOBAL:
  case S_LOAD_SHARED:
  case S_STORE_SHARED:
  case S_TRANSPOSE:
  case S_DOT:
    return true;
  case S_CAST: /* dot(..., out=acc) writes acc through a copy */
    return s->cast.dst->dtype == s->cast.src->dtype;
  case S_IF:
    return true; /* its statements are checked one by one */
  default:       /* TMA and mbarriers included: Tilus's hopper matmul_v0 ran
            * 0.91x as fast unrolled */
    return false;
  }
}

static bool constant_bounds(const IrStmt *loop) {
  int64_t v;
  return ir_is_const(loop->loop.start, &v) && ir_is_const(loop->loop.stop, &v);
}

/* Statements in b, nested blocks included; *dots counts S_DOT, *other
 * the statements feeds_dots refuses (loops among them). */
static int64_t body_size(const IrBlock *b, int *dots, int *other) {
  int64_t n = 0;
  for (int i = 0; i < b->len; i++) {
    const IrStmt *s = b->items[i];
    *dots += s->kind == S_DOT;
    *other += !feeds_dots(s);
    n += 1 + body_size(&s->body, dots, other) + body_size(&s->orelse, dots, other);
  }
  return n;
}

bool ir_copy_multiply_loop(const IrStmt *loop) {
  int dots = 0, other = 0;
  if (loop->kind != S_FOR) return false;
  body_size(&loop->body, &dots, &other);
  return dots > 0 && other == 0;
}

/* A run-time loop given no unroll factor whose body only moves tiles and
 * multiplies them with mma.sync (a dot), at most AUTO_UNROLL_MAX
 * statements, is unrolled by tlsc: ptxas schedules only inside
 * a basic block, and with several iterations in one it issues the next
 * iteration's copies and barrier under the tail of this one's mma.sync
 * chain, as nvcc does with Tilus's constant bounds (Tilus's Ampere matmuls
 * v1 to v3: 1.02x to 1.20x twice unrolled). Four times when the body
 * copies with cp.async only and the trip count is a constant (a
 * specialised k: matmul_v3 a further 2.1%, eight times gains nothing
 * more); twice when it loads tiles into registers, which four copies would
 * hold at once (matmul_v2: 7 of its 48 entries spilled), or when the count
 * is known at run time only (the remainder's three nested copies cost an
 * occupancy entry of tests/ptxas/kernels/copy_inside.tls a spill).
 * Loops that also compute in registers (attention's softmax) keep one
 * iteration: more would hold more temporaries and spill. An explicit
 * unroll=1 is left alone. */
#define AUTO_UNROLL_MAX 64
static void auto_unroll(IrStmt *s) {
  int dots = 0, other = 0;
  if (s->kind != S_FOR || s->loop.unroll != 0) return;
  if (body_size(&s->body, &dots, &other) <= AUTO_UNROLL_MAX && ir_copy_multiply_loop(s))
    s->loop.unroll = ir_block_holds(&s->body, S_LOAD_GLOBAL) || !constant_bounds(s) ? 2 : 4;
}

static void unroll_block(Unroller *U, IrBlock *b) {
  IrBlock out = {0};
  bool changed = false;
  for (int i = 0; i < b->len; i++) {
    IrStmt *s = b->items[i];
    unroll_block(U, &s->body); /* inner loops first: the copies hold them unrolled */
    unroll_block(U, &s->orelse);
    int64_t step;
    auto_unroll(s);
    if (s->kind == S_FOR && eligible(U, s, &step)) {
      rewrite(U, s, step, &out);
      changed = true;
    } else {
      ir_block_push(U->ar, &out, s);
    }
  }
  if (changed) *b = out;
}

void ir_unroll_loops(IrModule *m) {
  for (int i = 0; i < m->nkernels; i++) {
    Unroller U = {m->ar, m->kernels[i]};
    unroll_block(&U, &m->kernels[i]->body);
  }
}
