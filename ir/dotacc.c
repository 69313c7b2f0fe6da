/* dotacc.c: `x + dot(a, b)` computed by the dot, as dot(a, b, c=x).
 *
 * Flash attention rescales its accumulator and adds the step's product:
 * `o = o * alpha + dot(p, v)`. Written that way, the product lands in a
 * tensor of its own (a second accumulator as large as o: 64 registers a
 * thread in Tilus's flash_attention_v1) before the addition reads it;
 * mma.sync can add into any accumulator it is given, so the dot takes
 * o * alpha as its c and writes the sum, and the second accumulator is
 * gone. The sum is rounded once per k step inside the tensor core instead
 * of once at the end: the same contraction as an fma, within float32
 * rounding.
 *
 * The rewrite: in one block, a dot without c into D, and later the first
 * statement naming D is the element-wise `X = T + D` (or `D + T`) with T,
 * D and X of one dtype, shape and register layout. The dot moves down to
 * the addition's place, with c = T and destination X, and the addition
 * goes. The statements it moves past are plain register statements that
 * write neither of its operands; D must have no other use anywhere (its
 * uses are all such pairs: unrolled copies of one loop body are one pair
 * each), so that nothing reads the tensor the dot no longer writes.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

static bool alike(const IrTensor *x, const IrTensor *y) {
  if (x->dtype != y->dtype || x->rank != y->rank || !x->reg || !y->reg ||
      !ir_reglayout_equal(x->reg, y->reg))
    return false;
  for (int i = 0; i < x->rank; i++)
    if (x->shape[i] != y->shape[i]) return false;
  return true;
}

/* The other operand of an addition that reads d once, NULL if s is not
 * one. */
static IrTensor *addend(const IrStmt *s, const IrTensor *d) {
  if (s->kind != S_ELEMWISE || s->elemwise.op != OP_ADD || s->elemwise.scalar || !s->elemwise.a ||
      !s->elemwise.b || (s->elemwise.a == d) == (s->elemwise.b == d))
    return NULL;
  return s->elemwise.a == d ? s->elemwise.b : s->elemwise.a;
}

/* The index of the addition the dot at index i of b can move into, -1
 * if none. */
static int fusable(const IrBlock *b, int i) {
  const IrDotStmt *d = &b->items[i]->dot;
  if (d->c) return -1;
  for (int j = i + 1; j < b->len; j++) {
    const IrStmt *s = b->items[j];
    if (ir_stmt_names(s, d->dst)) {
      IrTensor *t = addend(s, d->dst);
      if (!t) return -1;
      IrTensor *x = s->elemwise.dst;
      return alike(t, d->dst) && alike(x, d->dst) && x != d->a && x != d->b ? j : -1;
    }
    const IrTensor *ops[IR_STMT_MAX_TENSORS];
    bool plain = s->body.len == 0 && s->orelse.len == 0 && s->kind != S_FOR && s->kind != S_IF;
    if (!plain || (ir_stmt_tensors(s, ops) > 0 && (ops[0] == d->a || ops[0] == d->b))) return -1;
  }
  return -1;
}

typedef struct Pass {
  int *uses;    /* by tensor id: operands naming it in the kernel */
  int *claimed; /* of those, the ones fusable pairs account for */
  bool rewrite; /* first walk: count the claims; second: fuse */
} Pass;

/* Moves the dot at index i of b into the addition at index j. */
static void fuse_dot(IrBlock *b, int i, int j) {
  IrStmt *dot = b->items[i], *add = b->items[j];
  dot->dot.c = addend(add, dot->dot.dst);
  dot->dot.dst = add->elemwise.dst;
  for (int k = i; k < j; k++) b->items[k] = b->items[k + 1];
  b->items[j - 1] = dot;
  for (int k = j; k + 1 < b->len; k++) b->items[k] = b->items[k + 1];
  b->len--;
}

/* Each pair is looked for on the block as it is then (an earlier fusion
 * moves statements); a pair found on the rewritten block but not in the
 * first walk leaves its tensor's uses unclaimed and is not fused. */
static void walk(IrBlock *b, Pass *p) {
  for (int i = 0; i < b->len; i++) {
    walk(&b->items[i]->body, p);
    walk(&b->items[i]->orelse, p);
  }
  for (int i = 0; i < b->len;) {
    int j = b->items[i]->kind == S_DOT ? fusable(b, i) : -1;
    const IrTensor *d = j >= 0 ? b->items[i]->dot.dst : NULL;
    if (d && !p->rewrite) p->claimed[d->id] += 2;
    if (d && p->rewrite && p->uses[d->id] == p->claimed[d->id])
      fuse_dot(b, i, j); /* items[i] is now the statement after the dot */
    else
      i++;
  }
}

void ir_fuse_dot_acc(IrModule *m) {
  for (int k = 0; k < m->nkernels; k++) {
    IrKernel *kn = m->kernels[k];
    size_t n = (size_t)kn->ntensors + 1;
    Pass p = {xmalloc(sizeof(int) * n), xmalloc(sizeof(int) * n), false};
    memset(p.uses, 0, sizeof(int) * n);
    memset(p.claimed, 0, sizeof(int) * n);
    ir_count_tensor_uses(&kn->body, p.uses);
    walk(&kn->body, &p);
    p.rewrite = true;
    walk(&kn->body, &p);
    free(p.uses);
    free(p.claimed);
  }
}
