/* pressure.c: register tensors that cannot fit in a thread's registers
 * together across a loop.
 *
 * A kernel whose register tensors, held across a loop, need more than the
 * 255 registers a thread has, spills whatever ptxas does: it is the
 * script's choice of tile, not the compiler's (Tilus's layer_norm point
 * block_m=8, block_n=1024 with 2 warps carries two [8, 1024] float32 sums,
 * 128 registers each, around its loop). The check reports that as an
 * error, as check.c reports one tensor over the limit, so that an
 * autotune point which must spill is skipped with a note instead of being
 * built into an entry that runs from local memory.
 *
 * The figure is a lower bound, so that no kernel that fits is refused. It
 * is taken only at loop heads, where every element of a tensor that the
 * body reads before writing (a loop-carried sum, a loop-invariant operand)
 * or that the loop carries past itself untouched is one value ptxas must
 * hold in a register on the back edge. Between two element-wise
 * statements ptxas may compute element by element, so no point inside a
 * block counts. Further:
 *  - liveness of whole tensors, backward over the structured IR, loops to
 *    their fixed point; any write kills (a partial write would keep the
 *    rest live: counting it dead only lowers the figure);
 *  - a tensor that is another's registers under a new shape (transpose,
 *    reshape, view, slice) counts only while none of its sources is live;
 *  - a tensor only ever filled with a constant counts nothing (ptxas
 *    rematerialises constants);
 *  - elements count at their width (two float16, four int8 to a
 *    register), and nothing but register tensors counts (no addresses,
 *    indices or predicates).
 *
 * Beside the bound, a heuristic: right after a dot, its whole result
 * exists (mma.sync writes every element) beside everything else live
 * there. Past IR_CROWDED_REGS registers of register tensors at that point
 * ptxas has too few left for the rest and likely spills (Tilus's
 * flash_attention_v2 points with 32 query rows a warp: 232 and 264 there,
 * 404-2256 bytes of spills; no other point of Tilus's examples passes
 * 134). It is not a bound (ptxas might interleave the work of row groups),
 * so it refuses nothing: it marks the kernel (IrKernel.crowded), and the
 * evaluator skips a marked autotune point only when another point is not
 * marked.
 *
 * It runs after unrolling and the fusion of dot accumulators (dotacc.c:
 * `x + dot(a, b)` holds one accumulator, not two) and before loads are
 * hoisted (hoist.c), which is the compiler's schedule, not the script's.
 */
#include "ir/ir.h"

#include <string.h>

typedef uint64_t Word;

/* The largest figure met so far, the tensors behind it and where. */
typedef struct Peak {
  int64_t regs;
  Word *live;
  Span span;
} Peak;

typedef struct Pressure {
  Arena *ar;
  const IrKernel *k;
  int nwords;
  int64_t *regs; /* per tensor id: registers per thread at the least; 0 if none */
  int *parent;   /* per tensor id: the tensor whose registers it is, or -1 */
  bool *varies;  /* per tensor id: written by something other than a fill */
  Peak head;     /* the largest sum at a loop head */
  bool record;   /* whether loop heads count (off while an outer loop iterates) */
  Peak dot;      /* the largest sum right after a dot */
  long visits;   /* statements visited: past PRESSURE_MAX_VISITS, no verdict */
  Word **free;   /* sets no longer in use */
  int nfree, cap;
} Pressure;

/* Nested loops revisit their bodies until each reaches its fixed point; on
 * a hostile nest that could take long, and a lower bound may give up:
 * the kernel is then accepted (ptxas alone judges it). */
#define PRESSURE_MAX_VISITS 20000000L

/* Sets come from a free list, so that the memory held stays that of the
 * deepest nest, however many times its loops iterate. */
static Word *bits_new(Pressure *p) {
  if (p->nfree) {
    Word *b = p->free[--p->nfree];
    memset(b, 0, sizeof(Word) * (size_t)p->nwords);
    return b;
  }
  return arena_alloc(p->ar, sizeof(Word) * (size_t)p->nwords);
}

static void bits_release(Pressure *p, Word *b) {
  if (p->nfree == p->cap) {
    int cap = p->cap ? 2 * p->cap : 16;
    Word **grown = arena_alloc(p->ar, sizeof(Word *) * (size_t)cap);
    if (p->nfree) memcpy(grown, p->free, sizeof(Word *) * (size_t)p->nfree);
    p->free = grown, p->cap = cap;
  }
  p->free[p->nfree++] = b;
}

static Word *bits_copy(Pressure *p, const Word *b) {
  Word *c = bits_new(p);
  memcpy(c, b, sizeof(Word) * (size_t)p->nwords);
  return c;
}

static bool bit(const Word *b, int i) { return b[i / 64] >> (i % 64) & 1; }
static void bit_set(Word *b, int i) { b[i / 64] |= (Word)1 << (i % 64); }
static void bit_clear(Word *b, int i) { b[i / 64] &= ~((Word)1 << (i % 64)); }

/* a |= b; whether a changed */
static bool bits_union(Pressure *p, Word *a, const Word *b) {
  bool changed = false;
  for (int i = 0; i < p->nwords; i++) {
    changed |= (b[i] & ~a[i]) != 0;
    a[i] |= b[i];
  }
  return changed;
}

/* Whether tensor i holds registers of its own in the set: live, of some
 * size, and none of its sources (of which it is a new shape) live. */
static bool counts(const Pressure *p, const Word *live, int i) {
  if (!p->regs[i] || !bit(live, i)) return false;
  for (int j = p->parent[i], hops = 0; j >= 0 && hops < 64; j = p->parent[j], hops++)
    if (bit(live, j)) return false;
  return true;
}

static int64_t live_regs(const Pressure *p, const Word *live) {
  int64_t sum = 0;
  for (int i = 0; i < p->k->ntensors; i++)
    if (counts(p, live, i)) sum += p->regs[i];
  return sum;
}

/* The tensors block b writes, nested blocks included, into w. */
static void written(const IrBlock *b, Word *w) {
  for (int i = 0; i < b->len; i++) {
    const IrStmt *s = b->items[i];
    written(&s->body, w);
    written(&s->orelse, w);
    const IrTensor *ops[IR_STMT_MAX_TENSORS];
    if (ir_stmt_tensors(s, ops) > 0 && ops[0]) bit_set(w, ops[0]->id);
  }
}

static void live_block(Pressure *p, const IrBlock *b, Word *live);

/* The tensors `live` at span become pk's when they need more registers. */
static void peak_offer(Pressure *p, Peak *pk, const Word *live, Span span) {
  int64_t sum = live_regs(p, live);
  if (sum <= pk->regs) return;
  if (pk->live) bits_release(p, pk->live);
  *pk = (Peak){sum, bits_copy(p, live), span};
}

/* The head of loop s: what its body reads before writing, and what is
 * live after it and the body leaves alone. */
static void count_head(Pressure *p, const IrStmt *s, const Word *body_in, const Word *after) {
  Word *w = bits_new(p);
  written(&s->body, w);
  Word *head = bits_copy(p, body_in);
  for (int i = 0; i < p->nwords; i++) head[i] |= after[i] & ~w[i];
  bits_release(p, w);
  peak_offer(p, &p->head, head, s->span);
  bits_release(p, head);
}

/* A loop runs its body zero or more times: what is live at its head is
 * what is live after it, and what the body needs given the head. */
static void live_loop(Pressure *p, const IrStmt *s, Word *live) {
  Word *after = bits_copy(p, live);
  bool record = p->record;
  p->record = false;
  for (bool changed = true; changed;) {
    Word *body = bits_copy(p, live);
    live_block(p, &s->body, body);
    changed = bits_union(p, live, body);
    bits_release(p, body);
  }
  p->record = record;
  if (record) { /* once more at the fixed point, counting inner loops */
    Word *body = bits_copy(p, live);
    live_block(p, &s->body, body);
    count_head(p, s, body, after);
    bits_release(p, body);
  }
  bits_release(p, after);
}

static bool is_new_shape(SKind k) {
  return k == S_TRANSPOSE || k == S_RESHAPE || k == S_SLICE || k == S_VIEW;
}

static void live_stmt(Pressure *p, const IrStmt *s, Word *live) {
  if (s->kind == S_FOR) {
    live_loop(p, s, live);
    return;
  }
  if (s->body.len || s->orelse.len) { /* a branch, or a group's block: run or not */
    Word *then = bits_copy(p, live);
    Word *orelse = bits_copy(p, live);
    live_block(p, &s->body, then);
    live_block(p, &s->orelse, orelse);
    bits_union(p, live, then);
    bits_union(p, live, orelse);
    bits_release(p, then);
    bits_release(p, orelse);
    return;
  }
  const IrTensor *ops[IR_STMT_MAX_TENSORS];
  int n = ir_stmt_tensors(s, ops);
  if (s->kind == S_DOT && p->record) /* right after it: its result included */
    peak_offer(p, &p->dot, live, s->span);
  if (n > 0 && ops[0]) bit_clear(live, ops[0]->id);
  for (int i = 1; i < n; i++)
    if (ops[i]) bit_set(live, ops[i]->id);
}

static void live_block(Pressure *p, const IrBlock *b, Word *live) {
  for (int i = b->len - 1; i >= 0 && p->visits <= PRESSURE_MAX_VISITS; i--, p->visits++)
    live_stmt(p, b->items[i], live);
}

/* Which tensors are other tensors' registers under a new shape, and which
 * are written by anything but a fill. */
static void scan(Pressure *p, const IrBlock *b) {
  for (int i = 0; i < b->len; i++) {
    const IrStmt *s = b->items[i];
    scan(p, &s->body);
    scan(p, &s->orelse);
    const IrTensor *ops[IR_STMT_MAX_TENSORS];
    int n = ir_stmt_tensors(s, ops);
    if (n == 0 || !ops[0]) continue;
    if (s->kind != S_FILL) p->varies[ops[0]->id] = true;
    if (is_new_shape(s->kind) && n == 2 && ops[1] && p->parent[ops[0]->id] < 0)
      p->parent[ops[0]->id] = ops[1]->id;
  }
}

/* The largest tensors of a set, largest first: "'a' (128), 'b' (64)"
 * and how many more. */
static const char *largest(Pressure *p, const Word *live) {
  char names[512] = "";
  size_t len = 0;
  int shown = 0, held = 0;
  bool *done = arena_alloc(p->ar, sizeof(bool) * (size_t)(p->k->ntensors + 1));
  for (int i = 0; i < p->k->ntensors; i++) held += counts(p, live, i);
  for (; shown < 4 && shown < held; shown++) {
    int best = -1;
    for (int i = 0; i < p->k->ntensors; i++)
      if (!done[i] && counts(p, live, i) && (best < 0 || p->regs[i] > p->regs[best])) best = i;
    done[best] = true;
    int w = snprintf(names + len, sizeof names - len, "%s'%s' (%lld)", shown ? ", " : "",
                     p->k->tensors[best]->name, (long long)p->regs[best]);
    if (w > 0 && (size_t)w < sizeof names - len) len += (size_t)w;
  }
  return arena_printf(p->ar, "%s%s", names,
                      held > shown ? arena_printf(p->ar, " and %d more", held - shown) : "");
}

static void report(Pressure *p, Diag *d) {
  diag_error(d, p->head.span,
             "register tensors held across this loop need at least %lld 32-bit registers per "
             "thread, over the limit of %d: %s",
             (long long)p->head.regs, IR_MAX_THREAD_REGS, largest(p, p->head.live));
}

/* Registers per thread tensor t needs at the least: its elements at their
 * own width. */
static int64_t least_regs(const IrTensor *t) {
  if (t->space != MS_REGISTER) return 0;
  return (ir_tensor_thread_elems(t) * dtype_bits(t->dtype) + 31) / 32;
}

/* Every set lives in a scratch arena of the kernel's own: a loop's
 * iterations copy them at each branch. */
static bool check_kernel(Arena *keep, IrKernel *k, Diag *d) {
  Arena *ar = arena_new();
  size_t n = (size_t)k->ntensors + 1;
  Pressure p = {.ar = ar, .k = k, .nwords = k->ntensors / 64 + 1, .record = true};
  p.regs = arena_alloc(ar, sizeof(int64_t) * n);
  p.parent = arena_alloc(ar, sizeof(int) * n);
  p.varies = arena_alloc(ar, sizeof(bool) * n);
  for (int i = 0; i < k->ntensors; i++) p.parent[i] = -1;
  scan(&p, &k->body);
  for (int i = 0; i < k->ntensors; i++) p.regs[i] = p.varies[i] ? least_regs(k->tensors[i]) : 0;
  live_block(&p, &k->body, bits_new(&p));
  bool fits = p.head.regs <= IR_MAX_THREAD_REGS || p.visits > PRESSURE_MAX_VISITS;
  if (!fits) report(&p, d);
  k->crowded = NULL;
  if (p.dot.regs > IR_CROWDED_REGS && p.visits <= PRESSURE_MAX_VISITS) {
    k->crowded = arena_printf(keep,
                              "the register tensors live after this dot need at least %lld "
                              "registers per thread, over the %d that leave room for addresses "
                              "and indices (ptxas would likely spill): %s",
                              (long long)p.dot.regs, IR_CROWDED_REGS, largest(&p, p.dot.live));
    k->crowded_span = p.dot.span;
  }
  arena_free(ar);
  return fits;
}

bool ir_check_pressure(IrModule *m, Diag *d) {
  bool ok = true;
  for (int i = 0; i < m->nkernels; i++) ok &= check_kernel(m->ar, m->kernels[i], d);
  return ok;
}
