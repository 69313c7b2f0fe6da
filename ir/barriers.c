/* barriers.c: the barrier of every sync().
 *
 * sync() is bar.sync over the threads running where it stands: barrier 0
 * when they are the whole block, else a named barrier of their thread
 * group, one per distinct group [begin, begin + size) of the block (two
 * thread_group() statements over the same threads share it). Groups are
 * numbered 1, 2, ... in the text order of their first sync(); the GPU has
 * IR_MAX_NAMED_BARRIERS of them, and a group past that gets the next
 * number anyway: the checker reports it, at that group's first sync().
 *
 * The pass reads only the nesting of thread groups, so it runs before the
 * first check. A sync() the checker refuses for another reason (inside
 * single_thread(), in a group that is not whole warps) gets barrier 0 and
 * takes no number. The simulator and the backend read barrier_id and number
 * nothing themselves.
 */
#include "ir/ir.h"

typedef struct Barriers {
  int64_t all;                          /* threads of the block */
  int64_t begin[IR_MAX_NAMED_BARRIERS]; /* group of barrier i + 1 */
  int64_t size[IR_MAX_NAMED_BARRIERS];
  int n; /* barriers given so far */
} Barriers;

/* The threads a statement runs on: [begin, begin + size) of the block. */
typedef struct Region {
  int64_t begin, size;
  bool single; /* inside single_thread() */
} Region;

/* The named barrier of the group rg: its own, or the next number. */
static int group_barrier(Barriers *b, Region rg) {
  for (int i = 0; i < b->n; i++)
    if (b->begin[i] == rg.begin && b->size[i] == rg.size) return i + 1;
  if (b->n == IR_MAX_NAMED_BARRIERS) return IR_MAX_NAMED_BARRIERS + 1;
  b->begin[b->n] = rg.begin;
  b->size[b->n] = rg.size;
  return ++b->n;
}

/* The barrier_id of a sync() that runs on rg. */
static int sync_barrier(Barriers *b, Region rg) {
  if (rg.single) return 0;
  if (rg.begin == 0 && rg.size == b->all) return 0;
  if (rg.begin % 32 != 0 || rg.size % 32 != 0) return 0;
  return group_barrier(b, rg);
}

/* A thread group the checker accepts: inside its parent, not under
 * single_thread(). */
static bool group_ok(const IrStmt *s, Region rg) {
  return !rg.single && s->group.begin >= 0 && s->group.count > 0 &&
         s->group.begin + s->group.count <= rg.size;
}

/* Every statement of blk in text order, as the checker walks them. */
static void assign_block(Barriers *b, IrBlock *blk, Region rg) {
  for (int i = 0; i < blk->len; i++) {
    IrStmt *s = blk->items[i];
    Region inner = rg;
    switch (s->kind) {
    case S_SYNC:
      s->sync.barrier_id = sync_barrier(b, rg);
      break;
    case S_REDUCE: /* may exchange through shared memory: a barrier then */
      s->reduce.barrier_id = sync_barrier(b, rg);
      break;
    case S_CONVERT: /* through shared memory between barriers */
      s->cast.barrier_id = sync_barrier(b, rg);
      break;
    case S_PRINTF: /* print_tensor: between barriers */
      if (ir_is_print_tensor(s)) s->print.barrier_id = sync_barrier(b, rg);
      break;
    case S_THREAD_GROUP:
      if (!group_ok(s, rg)) continue; /* the checker stops there */
      inner = (Region){rg.begin + s->group.begin, s->group.count, false};
      break;
    case S_SINGLE_THREAD:
      inner.single = true;
      break;
    default:
      break;
    }
    assign_block(b, &s->body, inner);
    assign_block(b, &s->orelse, inner);
  }
}

void ir_assign_barriers(IrModule *m) {
  for (int i = 0; i < m->nkernels; i++) {
    IrKernel *k = m->kernels[i];
    Barriers b = {.all = (int64_t)k->warps * 32};
    Region block = {0, b.all, false};
    assign_block(&b, &k->body, block);
  }
}
