/* hoist.c: global loads issued ahead of the collectives before them.
 *
 * ptxas schedules loads early only inside a basic block, and never moves
 * one above a bar.sync or a branch. A load that comes after a reduction
 * across warps, a layout conversion or a run-time `if` therefore waits for
 * them, although its address does not depend on them: in Tilus's decode
 * kernels the loads of g, beta and v come after the cross-warp reduction
 * of k * h, and the load of the state index after the L2 norms' two
 * reductions, so at T=1 their memory latencies add up instead of
 * overlapping. This pass moves such a load up, inside its block, above the
 * collectives and branches it can cross, as nvcc does with Tilus's
 * __restrict__ pointers.
 *
 * What moves: an assignment that reads global memory (`.item()`), a
 * load_global of a register tile, and an `if` whose arms hold only such
 * loads and register arithmetic (the `if USE_INITIAL_STATE:` around the
 * state index and the state tile), never out of its block (a load under a
 * condition stays under it). What it crosses: register arithmetic,
 * reductions, conversions, fills, other loads and `if`s of those, nothing
 * that writes memory or synchronises otherwise (a global store, sync(),
 * mbarriers, shared memory, loops, thread groups), and nothing that writes
 * what the load reads or reads or writes what it writes. A global load
 * crossing no store cannot see another value: no thread of the block
 * writes global memory between the two places. Loads keep their order
 * among themselves (a plain load may pass an `if` of loads, not the
 * reverse), and a load moves only when it passes a collective or a branch
 * and then no higher than above the first it passes, so that live ranges
 * grow no more than needed. A scalar assignment of register arithmetic
 * that computes a load's address (`state_idx = idx`, all that a decode
 * kernel's `if USE_INITIAL_STATE:` leaves once specialised) moves up
 * first, by the same rules, and takes the load with it: at T=1 the state
 * tile's load then overlaps the L2 norms instead of following them.
 */
#include "ir/ir.h"

#include <stdlib.h>
#include <string.h>

/* Statements a load is not moved past, at most: a bound on compile time. */
enum { HOIST_MAX_CROSS = 256 };

typedef enum Role { R_FENCE, R_PLAIN, R_LOAD, R_IF_LOADS } Role;

/* What one candidate reads and writes: stamps per variable and tensor id
 * (stamp == cur: in the set), so that a crossed statement is tested in
 * the time of its own operands. */
typedef struct Foot {
  int *rv, *wv, *rt, *wt;
  int cur;
} Foot;

static bool has_load(const IrExpr *x) {
  if (!x) return false;
  if (x->kind == X_LOAD) return true;
  return has_load(x->a) || has_load(x->b) || has_load(x->c);
}

static Role block_role(const IrBlock *b, bool *loads);

/* How s takes part: a movable load, an `if` of loads and arithmetic,
 * arithmetic that loads may cross, or a fence. */
static Role stmt_role(const IrStmt *s) {
  switch (s->kind) {
  case S_ASSIGN:
    return has_load(s->assign.value) ? R_LOAD : R_PLAIN;
  case S_LOAD_GLOBAL:
    return R_LOAD;
  case S_FILL:
  case S_CAST:
  case S_ELEMWISE:
  case S_UNARY:
  case S_REDUCE:
  case S_WHERE:
  case S_TRANSPOSE:
  case S_RESHAPE:
  case S_CONVERT:
    return R_PLAIN;
  case S_IF: {
    bool loads = false;
    if (block_role(&s->body, &loads) == R_FENCE || block_role(&s->orelse, &loads) == R_FENCE)
      return R_FENCE;
    return loads ? R_IF_LOADS : R_PLAIN;
  }
  default:
    return R_FENCE;
  }
}

/* R_FENCE when any statement of b is one; *loads set when one loads. */
static Role block_role(const IrBlock *b, bool *loads) {
  for (int i = 0; i < b->len; i++) {
    Role r = stmt_role(b->items[i]);
    if (r == R_FENCE) return R_FENCE;
    if (r != R_PLAIN) *loads = true;
  }
  return R_PLAIN;
}

/* An IEEE square root or reciprocal (sqrt.rn, rcp.rn): ptxas gives it a
 * slow path for special inputs, called from a test after MUFU.RSQ. */
static bool branchy_fn(int fn) { return fn == FN_SQRT || fn == FN_RECIP; }

/* A scalar expression with such a slow path: a square root or reciprocal
 * (X_MATH), or a float division other than float32's div.full (div.rn of
 * float64 and of 16-bit floats through float32). */
static bool expr_branches(const IrExpr *x) {
  if (!x) return false;
  if ((x->kind == X_MATH && branchy_fn((int)x->ival)) ||
      (x->kind == X_BINARY && x->op == OP_DIV && dtype_is_float(x->type) && x->type != DT_FLOAT32))
    return true;
  return expr_branches(x->a) || expr_branches(x->b) || expr_branches(x->c);
}

/* Whether ptxas would keep a load below s: a barrier or a branch, slow
 * paths included (a one-warp decode kernel's state index waited for the
 * L2 norms' square roots). */
static bool is_barrier(const IrStmt *s) {
  if (s->kind == S_UNARY && branchy_fn(s->unary.fn)) return true;
  if (s->kind == S_ASSIGN && expr_branches(s->assign.value)) return true;
  return s->kind == S_IF || s->kind == S_CONVERT || ir_is_print_tensor(s) ||
         (s->kind == S_REDUCE && ir_reduce_scratch_bytes(s) > 0);
}

/* ------------------------------------------------------------ operands */

typedef void (*OpFn)(void *ctx, bool tensor, bool write, int id);

static void expr_ops(const IrExpr *x, OpFn fn, void *ctx) {
  if (!x) return;
  if (x->kind == X_VAR) fn(ctx, false, false, x->var->id);
  expr_ops(x->a, fn, ctx);
  expr_ops(x->b, fn, ctx);
  expr_ops(x->c, fn, ctx);
}

/* A reshape (reshape_shared) counts as the tensor whose bytes it is. */
static void tensor_op(const IrTensor *t, bool write, OpFn fn, void *ctx) {
  if (t) fn(ctx, true, write, t->alias_of ? t->alias_of->id : t->id);
}

static void block_ops(const IrBlock *b, OpFn fn, void *ctx);

/* Every variable and tensor s (of a kind stmt_role does not call a fence)
 * reads or writes, nested blocks included. */
static void stmt_ops(const IrStmt *s, OpFn fn, void *ctx) {
  switch (s->kind) {
  case S_ASSIGN:
    fn(ctx, false, true, s->assign.var->id);
    expr_ops(s->assign.value, fn, ctx);
    break;
  case S_LOAD_GLOBAL:
    tensor_op(s->gmem.reg, true, fn, ctx);
    for (int i = 0; i < s->gmem.noffsets; i++) expr_ops(s->gmem.offsets[i], fn, ctx);
    break;
  case S_FILL:
    tensor_op(s->fill.dst, true, fn, ctx);
    expr_ops(s->fill.value, fn, ctx);
    break;
  case S_CAST:
  case S_TRANSPOSE:
  case S_RESHAPE:
  case S_CONVERT:
    tensor_op(s->cast.dst, true, fn, ctx);
    tensor_op(s->cast.src, false, fn, ctx);
    break;
  case S_ELEMWISE:
    tensor_op(s->elemwise.dst, true, fn, ctx);
    tensor_op(s->elemwise.a, false, fn, ctx);
    tensor_op(s->elemwise.b, false, fn, ctx);
    expr_ops(s->elemwise.scalar, fn, ctx);
    break;
  case S_UNARY:
    tensor_op(s->unary.dst, true, fn, ctx);
    tensor_op(s->unary.src, false, fn, ctx);
    break;
  case S_REDUCE:
    tensor_op(s->reduce.dst, true, fn, ctx);
    tensor_op(s->reduce.src, false, fn, ctx);
    break;
  case S_WHERE:
    tensor_op(s->where.dst, true, fn, ctx);
    tensor_op(s->where.cond, false, fn, ctx);
    tensor_op(s->where.a, false, fn, ctx);
    tensor_op(s->where.b, false, fn, ctx);
    expr_ops(s->where.sa, fn, ctx);
    expr_ops(s->where.sb, fn, ctx);
    break;
  case S_IF:
    expr_ops(s->branch.cond, fn, ctx);
    block_ops(&s->body, fn, ctx);
    block_ops(&s->orelse, fn, ctx);
    break;
  default:
    break;
  }
}

static void block_ops(const IrBlock *b, OpFn fn, void *ctx) {
  for (int i = 0; i < b->len; i++) stmt_ops(b->items[i], fn, ctx);
}

/* Records one operand of the candidate. */
static void mark_op(void *ctx, bool tensor, bool write, int id) {
  Foot *f = ctx;
  int *set = tensor ? (write ? f->wt : f->rt) : (write ? f->wv : f->rv);
  set[id] = f->cur;
}

typedef struct Probe {
  const Foot *f;
  bool conflict;
} Probe;

/* A crossed statement's operand against the candidate's: a write meets
 * any use, a read meets a write. */
static void probe_op(void *ctx, bool tensor, bool write, int id) {
  Probe *p = ctx;
  const Foot *f = p->f;
  const int *w = tensor ? f->wt : f->wv, *r = tensor ? f->rt : f->rv;
  if (w[id] == f->cur || (write && r[id] == f->cur)) p->conflict = true;
}

/* ------------------------------------------------------------ moving */

/* The place candidate i of b moves to (i itself: it stays); *stop the
 * statement that kept it from going higher (-1: none did). */
static int hoist_target(const IrBlock *b, int i, Role role, Foot *f, int *stop) {
  f->cur++;
  stmt_ops(b->items[i], mark_op, f);
  int target = i;
  *stop = -1;
  for (int j = i - 1; j >= 0 && i - j <= HOIST_MAX_CROSS; j--) {
    const IrStmt *x = b->items[j];
    Role r = stmt_role(x);
    Probe p = {f, r == R_FENCE || r == R_LOAD || (r == R_IF_LOADS && role == R_IF_LOADS)};
    if (!p.conflict) stmt_ops(x, probe_op, &p);
    if (p.conflict) {
      *stop = j;
      break;
    }
    if (is_barrier(x)) target = j;
  }
  return target;
}

/* Moves statement i of b to index t <= i. */
static void move_up(IrBlock *b, int i, int t) {
  IrStmt *s = b->items[i];
  for (int j = i; j > t; j--) b->items[j] = b->items[j - 1];
  b->items[t] = s;
}

/* A scalar assignment of register arithmetic (no load): what a load's
 * address may be computed by, `state_idx = idx` after a specialised
 * `if USE_INITIAL_STATE:` folded away. */
static bool is_feeder(const IrStmt *s) { return s->kind == S_ASSIGN && stmt_role(s) == R_PLAIN; }

/* Hoists candidate i of b; returns where it went. When a feeder stops it,
 * the feeder moves up first (by the same rules) and the candidate tries
 * again, so that the load's address is computed above the collectives
 * too. */
static int hoist_one(IrBlock *b, int i, Role role, Foot *f) {
  for (int tries = 0; tries < HOIST_MAX_CROSS; tries++) {
    int stop, t = hoist_target(b, i, role, f, &stop);
    int fstop, ft = stop >= 0 && is_feeder(b->items[stop])
                        ? hoist_target(b, stop, R_LOAD, f, &fstop)
                        : stop;
    if (ft == stop) {
      move_up(b, i, t);
      return t;
    }
    move_up(b, stop, ft); /* then retry: the feeder no longer stops it there */
  }
  return i;
}

static void hoist_block(IrBlock *b, Foot *f) {
  for (int i = 0; i < b->len; i++) {
    IrStmt *s = b->items[i];
    hoist_block(&s->body, f);
    hoist_block(&s->orelse, f);
    Role role = stmt_role(s);
    if (role != R_LOAD && role != R_IF_LOADS) continue;
    hoist_one(b, i, role, f);
  }
}

static int *zeroed(size_t n) {
  int *p = xmalloc(n * sizeof(int));
  memset(p, 0, n * sizeof(int));
  return p;
}

void ir_hoist_loads(IrModule *m) {
  for (int k = 0; k < m->nkernels; k++) {
    IrKernel *kn = m->kernels[k];
    size_t nv = (size_t)kn->nvars + 1, nt = (size_t)kn->ntensors + 1;
    Foot f = {zeroed(nv), zeroed(nv), zeroed(nt), zeroed(nt), 0};
    hoist_block(&kn->body, &f);
    free(f.rv);
    free(f.wv);
    free(f.rt);
    free(f.wt);
  }
}
