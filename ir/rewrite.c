/* rewrite.c: what the transforming passes (unroll.c, constprop.c) share:
 * the expression slots of a statement, deep copies of statements, and the
 * rebuilding of an expression with some variables replaced.
 *
 * Expressions are DAGs (the evaluator shares subtrees), so a rebuild
 * remembers what each node became: its cost is the number of distinct
 * nodes, not the size of the tree they spell. A node whose operands are
 * unchanged is kept as it is.
 */
#include "ir/ir.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ slots */

static void map_ref(IrRef *r, IrExprFn fn, void *ctx) {
  for (int i = 0; i < r->nidx && i < IR_MAX_RANK; i++)
    if (r->idx[i]) r->idx[i] = fn(ctx, r->idx[i]);
}

static void map_array(IrExpr **xs, int n, IrExprFn fn, void *ctx) {
  for (int i = 0; xs && i < n; i++)
    if (xs[i]) xs[i] = fn(ctx, xs[i]);
}

static IrExpr *map_one(IrExpr *x, IrExprFn fn, void *ctx) { return x ? fn(ctx, x) : x; }

void ir_stmt_map_exprs(IrStmt *s, IrExprFn fn, void *ctx) {
  switch (s->kind) {
  case S_ASSIGN:
    s->assign.value = map_one(s->assign.value, fn, ctx);
    break;
  case S_FOR:
    s->loop.start = map_one(s->loop.start, fn, ctx);
    s->loop.stop = map_one(s->loop.stop, fn, ctx);
    s->loop.step = map_one(s->loop.step, fn, ctx);
    break;
  case S_IF:
    s->branch.cond = map_one(s->branch.cond, fn, ctx);
    break;
  case S_MBAR_WAIT:
  case S_MBAR_ARRIVE:
  case S_MBAR_EXPECT_TX:
    map_ref(&s->mbar.barrier, fn, ctx);
    s->mbar.parity = map_one(s->mbar.parity, fn, ctx);
    s->mbar.tx_bytes = map_one(s->mbar.tx_bytes, fn, ctx);
    break;
  case S_TMA_LOAD:
  case S_TMA_STORE:
    map_ref(&s->tma.shared, fn, ctx);
    map_ref(&s->tma.barrier, fn, ctx);
    map_array(s->tma.offsets, s->tma.noffsets, fn, ctx);
    s->tma.mcast = map_one(s->tma.mcast, fn, ctx);
    break;
  case S_CP_ASYNC:
    map_ref(&s->cpasync.shared, fn, ctx);
    map_array(s->cpasync.offsets, s->cpasync.noffsets, fn, ctx);
    break;
  case S_MBAR_REMOTE:
  case S_MBAR_MULTICAST:
    map_ref(&s->cmbar.barrier, fn, ctx);
    s->cmbar.tx_bytes = map_one(s->cmbar.tx_bytes, fn, ctx);
    s->cmbar.ctas = map_one(s->cmbar.ctas, fn, ctx);
    break;
  case S_WGMMA_MMA:
    map_ref(&s->wgmma.a, fn, ctx);
    map_ref(&s->wgmma.b, fn, ctx);
    break;
  case S_FILL:
    s->fill.value = map_one(s->fill.value, fn, ctx);
    break;
  case S_ELEMWISE:
    s->elemwise.scalar = map_one(s->elemwise.scalar, fn, ctx);
    break;
  case S_WHERE:
    s->where.sa = map_one(s->where.sa, fn, ctx);
    s->where.sb = map_one(s->where.sb, fn, ctx);
    break;
  case S_LOAD_GLOBAL:
  case S_STORE_GLOBAL:
    map_array(s->gmem.offsets, s->gmem.noffsets, fn, ctx);
    break;
  case S_LOAD_SHARED:
  case S_STORE_SHARED:
    map_ref(&s->smem.shared, fn, ctx);
    break;
  case S_PRINTF:
    map_array(s->print.args, s->print.nargs, fn, ctx);
    if (s->print.shared.t) map_ref(&s->print.shared, fn, ctx);
    break;
  case S_SEM_WAIT:
  case S_SEM_RELEASE:
    s->sem.addr = map_one(s->sem.addr, fn, ctx);
    s->sem.value = map_one(s->sem.value, fn, ctx);
    break;
  case S_THREAD_GROUP:
  case S_SINGLE_THREAD:
  case S_SYNC:
  case S_TMA_FENCE:
  case S_TMA_COMMIT:
  case S_TMA_WAIT:
  case S_CP_COMMIT:
  case S_CP_WAIT:
  case S_CP_WAIT_ALL:
  case S_WGMMA_FENCE:
  case S_WGMMA_COMMIT:
  case S_WGMMA_WAIT:
  case S_CAST:
  case S_SLICE:
  case S_CLUSTER_SYNC:
  case S_SETMAXNREG:
  case S_UNARY:
  case S_REDUCE:
  case S_DOT:
  case S_TRANSPOSE:
  case S_RESHAPE:
  case S_CONVERT:
  case S_VIEW:
    break;
  }
}

/* ------------------------------------------------------------ copies */

static IrExpr **copy_array(Arena *ar, IrExpr **xs, int n) {
  if (!xs || n <= 0) return xs;
  IrExpr **c = arena_alloc(ar, sizeof *c * (size_t)n);
  memcpy(c, xs, sizeof *c * (size_t)n);
  return c;
}

static void copy_block(Arena *ar, IrBlock *dst, const IrBlock *src) {
  *dst = (IrBlock){0};
  for (int i = 0; i < src->len; i++) ir_block_push(ar, dst, ir_stmt_clone(ar, src->items[i]));
}

IrStmt *ir_stmt_clone(Arena *ar, const IrStmt *s) {
  IrStmt *c = arena_alloc(ar, sizeof *c);
  *c = *s;
  switch (s->kind) {
  case S_TMA_LOAD:
  case S_TMA_STORE:
    c->tma.offsets = copy_array(ar, s->tma.offsets, s->tma.noffsets);
    break;
  case S_CP_ASYNC:
    c->cpasync.offsets = copy_array(ar, s->cpasync.offsets, s->cpasync.noffsets);
    break;
  case S_LOAD_GLOBAL:
  case S_STORE_GLOBAL:
    c->gmem.offsets = copy_array(ar, s->gmem.offsets, s->gmem.noffsets);
    break;
  case S_PRINTF:
    c->print.args = copy_array(ar, s->print.args, s->print.nargs);
    break;
  default:
    break;
  }
  copy_block(ar, &c->body, &s->body);
  copy_block(ar, &c->orelse, &s->orelse);
  return c;
}

/* ------------------------------------------------------- substitution */

/* Pointer -> rebuilt node, open addressing. */
typedef struct Memo {
  const IrExpr **keys;
  IrExpr **vals;
  size_t cap, len;
} Memo;

static size_t slot(const Memo *m, const IrExpr *k) {
  size_t h = ((uintptr_t)k >> 4) * 0x9E3779B97F4A7C15ull;
  size_t i = h & (m->cap - 1);
  while (m->keys[i] && m->keys[i] != k) i = (i + 1) & (m->cap - 1);
  return i;
}

static void memo_put(Memo *m, const IrExpr *k, IrExpr *v) {
  if (2 * (m->len + 1) > m->cap) {
    Memo g = {.cap = m->cap ? 2 * m->cap : 64};
    g.keys = calloc(g.cap, sizeof *g.keys);
    g.vals = calloc(g.cap, sizeof *g.vals);
    if (!g.keys || !g.vals) abort();
    for (size_t i = 0; i < m->cap; i++)
      if (m->keys[i]) {
        size_t j = slot(&g, m->keys[i]);
        g.keys[j] = m->keys[i];
        g.vals[j] = m->vals[i];
        g.len++;
      }
    free(m->keys);
    free(m->vals);
    *m = g;
  }
  size_t i = slot(m, k);
  if (!m->keys[i]) m->len++;
  m->keys[i] = k;
  m->vals[i] = v;
}

typedef struct Subst {
  Arena *ar;
  IrExpr *(*leaf)(void *ctx, IrExpr *var);
  void *ctx;
  Memo memo;
} Subst;

static bool is_zero(const IrExpr *e) {
  int64_t v;
  return ir_is_const(e, &v) && v == 0 && !dtype_is_float(e->type) && e->type != DT_BOOL;
}

/* The identities the constructors leave: x ^ 0, x | 0, x << 0, x >> 0. */
static IrExpr *simplify(IrExpr *e) {
  if (e->kind != X_BINARY) return e;
  switch (e->op) {
  case OP_XOR:
  case OP_OR:
    if (is_zero(e->b)) return e->a;
    if (is_zero(e->a)) return e->b;
    return e;
  case OP_SHL:
  case OP_SHR:
    return is_zero(e->b) && e->a->type == e->type ? e->a : e;
  default:
    return e;
  }
}

static IrExpr *rebuild(Subst *S, IrExpr *e) {
  if (!e) return e;
  if (S->memo.cap) {
    size_t i = slot(&S->memo, e);
    if (S->memo.keys[i]) return S->memo.vals[i];
  }
  IrExpr *r = e;
  switch (e->kind) {
  case X_VAR:
    r = S->leaf(S->ctx, e);
    break;
  case X_CONST:
  case X_PARAM:
  case X_SPECIAL:
  case X_INDEX:
    break;
  case X_UNARY: {
    IrExpr *a = rebuild(S, e->a);
    if (a != e->a) r = ir_unary(S->ar, e->op, a);
    break;
  }
  case X_CAST: {
    IrExpr *a = rebuild(S, e->a);
    if (a != e->a) r = ir_cast(S->ar, e->type, a);
    break;
  }
  case X_LOAD: {
    IrExpr *a = rebuild(S, e->a);
    if (a != e->a) r = ir_load(S->ar, (DType)e->ival, a);
    break;
  }
  case X_MATH: {
    IrExpr *a = rebuild(S, e->a);
    if (a != e->a) r = ir_math(S->ar, (int)e->ival, a);
    break;
  }
  case X_BINARY: {
    IrExpr *a = rebuild(S, e->a), *b = rebuild(S, e->b);
    if (a != e->a || b != e->b) r = simplify(ir_binary(S->ar, e->op, a, b));
    break;
  }
  case X_SELECT: {
    IrExpr *c = rebuild(S, e->a), *a = rebuild(S, e->b), *b = rebuild(S, e->c);
    if (c != e->a || a != e->b || b != e->c) r = ir_select(S->ar, c, a, b);
    break;
  }
  }
  /* a rebuilt node keeps its type: the constructors convert the same
   * operand types the same way, but a folded identity may not */
  if (r != e && r->type != e->type) r = ir_cast(S->ar, e->type, r);
  memo_put(&S->memo, e, r);
  return r;
}

IrExpr *ir_expr_substitute(Arena *ar, IrExpr *e, IrExpr *(*leaf)(void *ctx, IrExpr *var),
                           void *ctx) {
  Subst S = {.ar = ar, .leaf = leaf, .ctx = ctx};
  IrExpr *r = rebuild(&S, e);
  free(S.memo.keys);
  free(S.memo.vals);
  return r;
}

/* ------------------------------------------------------------ reads */

static bool reads(const IrExpr *e, const IrVar *v, Memo *seen) {
  if (!e) return false;
  if (e->kind == X_VAR) return e->var == v;
  if (e->kind == X_CONST || e->kind == X_PARAM || e->kind == X_SPECIAL) return false;
  if (seen->cap) {
    size_t i = slot(seen, e);
    if (seen->keys[i]) return false; /* looked at already: it did not */
  }
  bool r = reads(e->a, v, seen) || reads(e->b, v, seen) || reads(e->c, v, seen);
  if (!r) memo_put(seen, e, NULL);
  return r;
}

bool ir_expr_reads(const IrExpr *e, const IrVar *v) {
  Memo seen = {0};
  bool r = reads(e, v, &seen);
  free(seen.keys);
  free(seen.vals);
  return r;
}

static bool varies(const IrExpr *e, const IrStmt *loop, Memo *seen) {
  if (!e) return false;
  if (e->kind == X_VAR) return e->var == loop->loop.var || ir_block_assigns(&loop->body, e->var);
  if (e->kind == X_CONST || e->kind == X_PARAM || e->kind == X_SPECIAL) return false;
  if (e->kind == X_LOAD || e->kind == X_INDEX) return true;
  if (seen->cap && seen->keys[slot(seen, e)]) return false; /* looked at: it does not */
  bool r = varies(e->a, loop, seen) || varies(e->b, loop, seen) || varies(e->c, loop, seen);
  if (!r) memo_put(seen, e, NULL);
  return r;
}

bool ir_expr_loop_invariant(const IrExpr *e, const IrStmt *loop) {
  Memo seen = {0};
  bool r = !varies(e, loop, &seen);
  free(seen.keys);
  free(seen.vals);
  return r;
}

/* Sets vars[id] for every variable and params[index] for every parameter
 * e names (either array NULL: not wanted), each node once. */
static void mark(const IrExpr *e, bool *vars, bool *params, Memo *seen) {
  if (!e) return;
  if (e->kind == X_VAR) {
    if (vars && e->var->id >= 0) vars[e->var->id] = true;
    return;
  }
  if (e->kind == X_PARAM) {
    if (params && e->param->index >= 0) params[e->param->index] = true;
    return;
  }
  if (e->kind == X_CONST || e->kind == X_SPECIAL) return;
  if (seen->cap && seen->keys[slot(seen, e)]) return;
  memo_put(seen, e, NULL);
  mark(e->a, vars, params, seen);
  mark(e->b, vars, params, seen);
  mark(e->c, vars, params, seen);
}

static void mark_all(const IrExpr *e, bool *vars, bool *params) {
  Memo seen = {0};
  mark(e, vars, params, &seen);
  free(seen.keys);
  free(seen.vals);
}

void ir_expr_mark_vars(const IrExpr *e, bool *read) { mark_all(e, read, NULL); }

void ir_expr_mark_params(const IrExpr *e, bool *named) { mark_all(e, NULL, named); }
