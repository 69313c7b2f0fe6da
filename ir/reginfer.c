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
 * flow again. Where a statement then needs an operand in another layout
 * than the operand has (or gives its result in another layout than the
 * result's), an S_CONVERT goes before it (or after it) through a tensor
 * in the layout the statement needs: the backend moves the elements
 * through shared memory.
 */
#include "ir/ir.h"

#include <string.h>

typedef struct RegCtx {
  Arena *ar;
  Diag *d;
  bool ok;
  bool changed;
  bool seed_dots; /* dots give their operands the mma.sync fragments */
  IrKernel *k;
  IrBlock *b; /* the checks: the block of the statement checked, */
  int i;      /* and its index there (conversions go before or after it) */
  /* the dots whose warps a layout decided (they seed before the others) */
  const IrStmt *fixed[64];
  int nfixed;
} RegCtx;

static bool dot_fixed(const RegCtx *c, const IrStmt *s) {
  for (int i = 0; i < c->nfixed; i++)
    if (c->fixed[i] == s) return true;
  return false;
}

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

/* L's tensor seen with t's shape (reshape, squeeze, unsqueeze); NULL when
 * L's modes do not split at t's dimensions. */
static IrRegLayout *reshaped(Arena *ar, const IrRegLayout *L, const IrTensor *t) {
  return ir_reglayout_reshape(ar, L, t->rank, t->shape);
}

/* A store's side tensors take the values' layout (same shape). */
static void tie_store(IrTensor *reg, IrTensor *scatter, IrAtomic *a, RegCtx *c) {
  if (scatter) tie_operand(reg, scatter, c);
  if (a && a->old) tie_operand(reg, a->old, c);
  if (a && a->compare) tie_operand(reg, a->compare, c);
}

static void flow(IrStmt *s, RegCtx *c) {
  switch (s->kind) {
  case S_CAST:
    tie_operand(s->cast.dst, s->cast.src, c);
    break;
  case S_STORE_GLOBAL: /* a scatter's indices, an atomic's tensors: the values' layout */
    tie_store(s->gmem.reg, s->gmem.scatter, s->gmem.atomic, c);
    break;
  case S_STORE_SHARED:
    tie_store(s->smem.reg, s->smem.scatter, s->smem.atomic, c);
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
  case S_RESHAPE: {
    IrRegLayout *L;
    if (has_reg(s->cast.src) && open_reg(s->cast.dst) &&
        (L = reshaped(c->ar, s->cast.src->reg, s->cast.dst)))
      give(s->cast.dst, L, c);
    if (has_reg(s->cast.dst) && open_reg(s->cast.src) &&
        (L = reshaped(c->ar, s->cast.dst->reg, s->cast.src)))
      give(s->cast.src, L, c);
    break;
  }
  case S_DOT: {
    const IrDotStmt *d = &s->dot;
    int64_t m = d->a->shape[0], k = d->a->shape[1], n = d->b->shape[1];
    if (!c->seed_dots && !dot_fixed(c, s)) break;
    if (open_reg(d->a))
      give(d->a,
           ir_reglayout_mma(c->ar, MMA_A, m, k, d->warps_m, d->warps_n, ir_mma_epr(d->a->dtype)),
           c);
    if (open_reg(d->b))
      give(d->b,
           ir_reglayout_mma(c->ar, MMA_B, k, n, d->warps_m, d->warps_n, ir_mma_epr(d->b->dtype)),
           c);
    IrRegLayout *acc = ir_reglayout_mma(c->ar, MMA_C, m, n, d->warps_m, d->warps_n, 2);
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
    if (s->reduce.scan) { /* a scan keeps the layout */
      tie_operand(s->reduce.dst, s->reduce.src, c);
      break;
    }
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

/* Inserts s at index i of b. */
static void insert_at(Arena *ar, IrBlock *b, int i, IrStmt *s) {
  ir_block_push(ar, b, s);
  memmove(b->items + i + 1, b->items + i, sizeof(IrStmt *) * (size_t)(b->len - 1 - i));
  b->items[i] = s;
}

/* A tensor like x in layout L, and the S_CONVERT between the two. */
static IrTensor *twin(const IrTensor *x, IrRegLayout *L, RegCtx *c) {
  IrTensor *t =
      ir_new_tensor(c->ar, c->k, x->name, MS_REGISTER, x->dtype, x->rank, x->shape, x->span);
  t->nthreads = x->nthreads;
  t->layout = LAYOUT_SPATIAL;
  t->reg = L;
  return t;
}

static IrStmt *convert_stmt(IrTensor *dst, IrTensor *src, Span sp, RegCtx *c) {
  IrStmt *cv = ir_stmt_new(c->ar, S_CONVERT, sp);
  cv->cast.dst = dst;
  cv->cast.src = src;
  return cv;
}

/* *x in layout L for the statement checked: *x itself when it has L, else
 * a copy converted just before the statement. */
static void operand_in(IrTensor **x, IrRegLayout *L, RegCtx *c) {
  if (!*x || !has_reg(*x) || ir_reglayout_equal((*x)->reg, L)) return;
  IrTensor *t = twin(*x, L, c);
  Span sp = c->b->items[c->i]->span;
  insert_at(c->ar, c->b, c->i, convert_stmt(t, *x, sp, c));
  c->i++; /* the statement checked moved down */
  *x = t;
}

/* The statement checked gives its result *dst in layout L: when *dst has
 * another, the statement writes a tensor in L, converted into *dst just
 * after it. */
static void result_in(IrTensor **dst, IrRegLayout *L, RegCtx *c) {
  if (!has_reg(*dst) || ir_reglayout_equal((*dst)->reg, L)) return;
  IrTensor *t = twin(*dst, L, c);
  insert_at(c->ar, c->b, c->i + 1, convert_stmt(*dst, t, c->b->items[c->i]->span, c));
  *dst = t;
}

/* A store's side tensors in the values' layout: indices and cas operands
 * converted before it, old values after it. */
static void store_in(IrTensor *reg, IrTensor **scatter, IrAtomic *a, RegCtx *c) {
  if (!has_reg(reg)) return;
  if (*scatter) operand_in(scatter, reg->reg, c);
  if (a && a->compare) operand_in(&a->compare, reg->reg, c);
  if (a && a->old) result_in(&a->old, reg->reg, c);
}

/* An element-wise operand: dst's layout, broadcast to the operand's shape. */
static void elem_operand(const IrTensor *dst, IrTensor **x, RegCtx *c) {
  if (!has_reg(dst) || !*x || !has_reg(*x)) return;
  operand_in(x, ir_reglayout_broadcast(c->ar, dst->reg, (*x)->rank, (*x)->shape), c);
}

static void check(IrStmt *s, RegCtx *c) {
  switch (s->kind) {
  case S_STORE_GLOBAL:
    store_in(s->gmem.reg, &s->gmem.scatter, s->gmem.atomic, c);
    break;
  case S_STORE_SHARED:
    store_in(s->smem.reg, &s->smem.scatter, s->smem.atomic, c);
    break;
  case S_CAST:
    elem_operand(s->cast.dst, &s->cast.src, c);
    break;
  case S_UNARY:
    elem_operand(s->unary.dst, &s->unary.src, c);
    break;
  case S_ELEMWISE:
    elem_operand(s->elemwise.dst, &s->elemwise.a, c);
    elem_operand(s->elemwise.dst, &s->elemwise.b, c);
    break;
  case S_WHERE:
    elem_operand(s->where.dst, &s->where.cond, c);
    elem_operand(s->where.dst, &s->where.a, c);
    elem_operand(s->where.dst, &s->where.b, c);
    break;
  case S_TRANSPOSE:
    if (has_reg(s->cast.dst))
      operand_in(&s->cast.src, ir_reglayout_transpose(c->ar, s->cast.dst->reg), c);
    break;
  case S_RESHAPE: {
    /* the source's layout when it maps onto the result's, else the
     * result's seen with the source's shape (the source converted) */
    if (!has_reg(s->cast.dst) || !has_reg(s->cast.src)) break;
    IrRegLayout *L = reshaped(c->ar, s->cast.src->reg, s->cast.dst);
    if (L && ir_reglayout_equal(L, s->cast.dst->reg)) break;
    L = reshaped(c->ar, s->cast.dst->reg, s->cast.src);
    if (L)
      operand_in(&s->cast.src, L, c);
    else {
      diag_error(c->d, s->span,
                 "reshape of '%s': the layout of the result does not split along the "
                 "source's dimensions; give one of them another layout",
                 s->cast.src->name);
      c->ok = false;
    }
    break;
  }
  case S_DOT: {
    IrDotStmt *d = &s->dot;
    int64_t m = d->a->shape[0], k = d->a->shape[1], n = d->b->shape[1];
    operand_in(
        &d->a,
        ir_reglayout_mma(c->ar, MMA_A, m, k, d->warps_m, d->warps_n, ir_mma_epr(d->a->dtype)), c);
    operand_in(
        &d->b,
        ir_reglayout_mma(c->ar, MMA_B, k, n, d->warps_m, d->warps_n, ir_mma_epr(d->b->dtype)), c);
    IrRegLayout *acc = ir_reglayout_mma(c->ar, MMA_C, m, n, d->warps_m, d->warps_n, 2);
    operand_in(&d->c, acc, c);
    result_in(&d->dst, acc, c);
    break;
  }
  case S_REDUCE:
    if (s->reduce.scan) {
      if (has_reg(s->reduce.src)) result_in(&s->reduce.dst, s->reduce.src->reg, c);
      break;
    }
    if (has_reg(s->reduce.src))
      result_in(&s->reduce.dst,
                ir_reglayout_reduce(c->ar, s->reduce.src->reg, s->reduce.dim, s->reduce.keepdim),
                c);
    break;
  default:
    break;
  }
}

/* The checks over b, statement by statement (the conversions inserted
 * around one convert between any layouts: check() passes them by). */
static void check_block(IrBlock *b, RegCtx *c) {
  for (int i = 0; i < b->len; i++) {
    IrStmt *s = b->items[i];
    c->b = b;
    c->i = i;
    check(s, c);
    i = c->i;
    check_block(&s->body, c);
    check_block(&s->orelse, c);
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
  if (s->kind != S_DOT || dot_fixed(c, s) || c->nfixed == 64) return;
  IrTensor *ts[4] = {s->dot.dst, s->dot.c, s->dot.a, s->dot.b};
  for (int i = 0; i < 4; i++)
    if (has_reg(ts[i]) && ts[i]->reg->mma != MMA_NONE) {
      s->dot.warps_m = ts[i]->reg->mma_warps_m;
      s->dot.warps_n = ts[i]->reg->mma_warps_n;
      c->fixed[c->nfixed++] = s;
      return;
    }
}

bool ir_infer_reg_layouts(IrKernel *k, Arena *ar, Diag *d) {
  RegCtx c = {.ar = ar, .d = d, .ok = true, .k = k};
  for (int i = 0; i < k->ntensors; i++)
    if (k->tensors[i]->want) give(k->tensors[i], k->tensors[i]->want, &c);
  propagate(k, &c); /* the annotations first, dots not yet */
  /* then the dots whose warps those layouts decide, one wave at a time: a
   * dot seeded from an annotation gives its operands fragments, which may
   * decide another dot's warps (attention: o's annotation decides the
   * second dot, whose operand p then decides the first, score = q k^T) */
  for (int fixed = -1; fixed != c.nfixed;) {
    fixed = c.nfixed;
    walk(&k->body, dot_warps_from_layouts, &c);
    propagate(k, &c);
  }
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
  check_block(&k->body, &c);
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
