/* reginfer.c: register layouts of the tensors that are not WGMMA
 * fragments (part of layout inference, layout.c).
 *
 * A statement ties the layouts of its operands: a cast, a unary function
 * and an element-wise statement keep each element in the thread that holds
 * it (operands of the destination's shape share its layout; a broadcast
 * operand gets the destination's layout with the modes of its missing
 * dimensions dropped), and a reduction's result has its source's layout
 * without the reduced dimension. Loads and stores accept any layout.
 *
 * Layouts flow along those ties in both directions where they determine
 * one (to a fixed point); a tensor still without one then gets the default
 * layout (ir_reglayout_default), tensors loaded from global memory first,
 * so that their loads are the coalesced, vectorised ones, and the ties
 * flow again. A tie the layouts then break is reported: converting between
 * register layouts is not supported.
 */
#include "ir/ir.h"

#include <string.h>

typedef struct RegCtx {
  Arena *ar;
  Diag *d;
  bool ok;
  bool changed;
  bool seed_dots; /* dots give their operands the mma.sync fragments */
} RegCtx;

typedef void (*RegFn)(IrStmt *s, RegCtx *c);

static void walk(IrBlock *b, RegFn fn, RegCtx *c) {
  for (int i = 0; i < b->len; i++) {
    IrStmt *s = b->items[i];
    fn(s, c);
    walk(&s->body, fn, c);
    walk(&s->orelse, fn, c);
  }
}

static bool open_reg(const IrTensor *t) {
  return t && t->space == MS_REGISTER && t->layout == LAYOUT_NONE;
}

static bool has_reg(const IrTensor *t) {
  return t && t->space == MS_REGISTER && t->layout == LAYOUT_SPATIAL && t->reg;
}

static bool same_shape(const IrTensor *a, const IrTensor *b) {
  return a->rank == b->rank && memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->rank) == 0;
}

static void give(IrTensor *t, IrRegLayout *L, RegCtx *c) {
  if (!open_reg(t) || L->nthreads != (t->nthreads > 0 ? t->nthreads : 1)) return;
  t->layout = LAYOUT_SPATIAL;
  t->reg = L;
  c->changed = true;
}

/* dst and an operand of an element-wise statement (or a cast, a unary
 * function): the operand is dst's shape or broadcasts to it. */
static void tie_operand(IrTensor *dst, IrTensor *x, RegCtx *c) {
  if (!x || x->space != MS_REGISTER) return;
  if (has_reg(dst) && open_reg(x)) /* the same layout (and its mma role) when no broadcast */
    give(x,
         same_shape(x, dst) ? dst->reg : ir_reglayout_broadcast(c->ar, dst->reg, x->rank, x->shape),
         c);
  if (has_reg(x) && open_reg(dst) && same_shape(x, dst)) give(dst, x->reg, c);
}

/* L's tensor seen with t's shape (squeeze / unsqueeze). */
static IrRegLayout *reshaped(Arena *ar, const IrRegLayout *L, const IrTensor *t) {
  return ir_reglayout_reshape_ones(ar, L, t->rank, t->shape);
}

static void flow(IrStmt *s, RegCtx *c) {
  switch (s->kind) {
  case S_CAST:
    tie_operand(s->cast.dst, s->cast.src, c);
    break;
  case S_UNARY:
    tie_operand(s->unary.dst, s->unary.src, c);
    break;
  case S_ELEMWISE:
    tie_operand(s->elemwise.dst, s->elemwise.a, c);
    tie_operand(s->elemwise.dst, s->elemwise.b, c);
    break;
  case S_TRANSPOSE:
    if (has_reg(s->cast.src) && open_reg(s->cast.dst))
      give(s->cast.dst, ir_reglayout_transpose(c->ar, s->cast.src->reg), c);
    if (has_reg(s->cast.dst) && open_reg(s->cast.src))
      give(s->cast.src, ir_reglayout_transpose(c->ar, s->cast.dst->reg), c);
    break;
  case S_RESHAPE:
    if (has_reg(s->cast.src) && open_reg(s->cast.dst))
      give(s->cast.dst, reshaped(c->ar, s->cast.src->reg, s->cast.dst), c);
    if (has_reg(s->cast.dst) && open_reg(s->cast.src))
      give(s->cast.src, reshaped(c->ar, s->cast.dst->reg, s->cast.src), c);
    break;
  case S_DOT: {
    const IrDotStmt *d = &s->dot;
    int64_t m = d->a->shape[0], k = d->a->shape[1], n = d->b->shape[1];
    if (!c->seed_dots) break;
    if (open_reg(d->a)) give(d->a, ir_reglayout_mma(c->ar, MMA_A, m, k, d->warps_m, d->warps_n), c);
    if (open_reg(d->b)) give(d->b, ir_reglayout_mma(c->ar, MMA_B, k, n, d->warps_m, d->warps_n), c);
    IrRegLayout *acc = ir_reglayout_mma(c->ar, MMA_C, m, n, d->warps_m, d->warps_n);
    give(d->dst, acc, c);
    if (d->c) give(d->c, acc, c);
    break;
  }
  case S_WHERE:
    tie_operand(s->where.dst, s->where.cond, c);
    tie_operand(s->where.dst, s->where.a, c);
    tie_operand(s->where.dst, s->where.b, c);
    break;
  case S_REDUCE:
    if (has_reg(s->reduce.src) && open_reg(s->reduce.dst))
      give(s->reduce.dst,
           ir_reglayout_reduce(c->ar, s->reduce.src->reg, s->reduce.dim, s->reduce.keepdim), c);
    break;
  default:
    break;
  }
}

static void propagate(IrKernel *k, RegCtx *c) {
  c->changed = true;
  /* each round fixes at least one tensor */
  for (int round = 0; c->changed && round <= k->ntensors; round++) {
    c->changed = false;
    walk(&k->body, flow, c);
  }
}

/* The default for t: as many 16-byte vectors per thread as the tile
 * allows with every thread holding some. */
static void give_default(IrTensor *t, RegCtx *c) {
  int64_t threads = t->nthreads > 0 ? t->nthreads : 1, numel = ir_tensor_numel(t);
  int64_t vec = 16 / (dtype_bytes(t->dtype) > 0 ? dtype_bytes(t->dtype) : 1);
  while (vec > 1 && numel / vec < threads) vec /= 2;
  give(t, ir_reglayout_default(c->ar, t->rank, t->shape, threads, vec), c);
}

/* ------------------------------------------------------------- checks */

static void conflict(const IrStmt *s, const IrTensor *a, const IrTensor *b, RegCtx *c) {
  diag_error(c->d, s->span,
             "register tensors '%s' and '%s' have layouts that do not match here: converting "
             "between register layouts is not supported yet",
             a->name, b->name);
  c->ok = false;
}

static void check_operand(const IrStmt *s, const IrTensor *dst, const IrTensor *x, RegCtx *c) {
  if (!has_reg(dst) || !has_reg(x)) return;
  if (!ir_reglayout_equal(x->reg, ir_reglayout_broadcast(c->ar, dst->reg, x->rank, x->shape)))
    conflict(s, dst, x, c);
}

static void check(IrStmt *s, RegCtx *c) {
  switch (s->kind) {
  case S_CAST:
    check_operand(s, s->cast.dst, s->cast.src, c);
    break;
  case S_UNARY:
    check_operand(s, s->unary.dst, s->unary.src, c);
    break;
  case S_ELEMWISE:
    check_operand(s, s->elemwise.dst, s->elemwise.a, c);
    check_operand(s, s->elemwise.dst, s->elemwise.b, c);
    break;
  case S_TRANSPOSE:
    if (has_reg(s->cast.src) && has_reg(s->cast.dst) &&
        !ir_reglayout_equal(s->cast.dst->reg, ir_reglayout_transpose(c->ar, s->cast.src->reg)))
      conflict(s, s->cast.dst, s->cast.src, c);
    break;
  case S_RESHAPE:
    if (has_reg(s->cast.src) && has_reg(s->cast.dst) &&
        !ir_reglayout_equal(s->cast.dst->reg, reshaped(c->ar, s->cast.src->reg, s->cast.dst)))
      conflict(s, s->cast.dst, s->cast.src, c);
    break;
  case S_DOT: {
    const IrDotStmt *d = &s->dot;
    int64_t m = d->a->shape[0], k = d->a->shape[1], n = d->b->shape[1];
    IrRegLayout *acc = ir_reglayout_mma(c->ar, MMA_C, m, n, d->warps_m, d->warps_n);
    if (has_reg(d->a) && !ir_reglayout_equal(d->a->reg, ir_reglayout_mma(c->ar, MMA_A, m, k,
                                                                         d->warps_m, d->warps_n)))
      conflict(s, d->a, d->dst, c);
    else if (has_reg(d->b) &&
             !ir_reglayout_equal(d->b->reg,
                                 ir_reglayout_mma(c->ar, MMA_B, k, n, d->warps_m, d->warps_n)))
      conflict(s, d->b, d->dst, c);
    else if ((has_reg(d->dst) && !ir_reglayout_equal(d->dst->reg, acc)) ||
             (d->c && has_reg(d->c) && !ir_reglayout_equal(d->c->reg, acc)))
      conflict(s, d->dst, d->c ? d->c : d->dst, c);
    break;
  }
  case S_WHERE:
    check_operand(s, s->where.dst, s->where.cond, c);
    if (s->where.a) check_operand(s, s->where.dst, s->where.a, c);
    if (s->where.b) check_operand(s, s->where.dst, s->where.b, c);
    break;
  case S_REDUCE:
    if (has_reg(s->reduce.src) && has_reg(s->reduce.dst) &&
        !ir_reglayout_equal(
            s->reduce.dst->reg,
            ir_reglayout_reduce(c->ar, s->reduce.src->reg, s->reduce.dim, s->reduce.keepdim)))
      conflict(s, s->reduce.dst, s->reduce.src, c);
    break;
  default:
    break;
  }
}

/* The first register tensor without a layout that a load_global fills. */
static IrTensor *first_loaded(IrBlock *b) {
  for (int i = 0; i < b->len; i++) {
    IrStmt *s = b->items[i];
    if (s->kind == S_LOAD_GLOBAL && open_reg(s->gmem.reg)) return s->gmem.reg;
    IrTensor *t = first_loaded(&s->body);
    if (!t) t = first_loaded(&s->orelse);
    if (t) return t;
  }
  return NULL;
}

/* A dot follows the tiling that annotations gave its result or operands,
 * directly or through the statements tied to them
 * (`score = dot(q, k) * scale; annotate_layout(score, cfg.lc)`): its warps
 * become that layout's. */
static void dot_warps_from_layouts(IrStmt *s, RegCtx *c) {
  (void)c;
  if (s->kind != S_DOT) return;
  IrTensor *ts[4] = {s->dot.dst, s->dot.c, s->dot.a, s->dot.b};
  for (int i = 0; i < 4; i++)
    if (has_reg(ts[i]) && ts[i]->reg->mma != MMA_NONE) {
      s->dot.warps_m = ts[i]->reg->mma_warps_m;
      s->dot.warps_n = ts[i]->reg->mma_warps_n;
      return;
    }
}

bool ir_infer_reg_layouts(IrKernel *k, Arena *ar, Diag *d) {
  RegCtx c = {ar, d, true, false, false};
  for (int i = 0; i < k->ntensors; i++)
    if (k->tensors[i]->want) give(k->tensors[i], k->tensors[i]->want, &c);
  propagate(k, &c); /* the annotations first, dots not yet */
  walk(&k->body, dot_warps_from_layouts, &c);
  c.seed_dots = true;
  propagate(k, &c);
  for (IrTensor *t; (t = first_loaded(&k->body));) {
    give_default(t, &c);
    propagate(k, &c);
  }
  for (int i = 0; i < k->ntensors; i++)
    if (open_reg(k->tensors[i])) {
      give_default(k->tensors[i], &c);
      propagate(k, &c);
    }
  walk(&k->body, check, &c);
  for (int i = 0; i < k->ntensors; i++) {
    IrTensor *t = k->tensors[i];
    if (t->want && !(has_reg(t) && ir_reglayout_equal(t->reg, t->want))) {
      diag_error(d, t->want_span,
                 "'%s' cannot have the annotated layout: a statement that uses it gives it "
                 "another one",
                 t->name);
      c.ok = false;
    }
  }
  return c.ok;
}
