/* smem.c: shared memory planning.
 *
 * Every shared tensor gets a byte offset in the block's dynamic shared
 * memory, in creation order (deterministic, and the order the user wrote),
 * as Tilus's allocator does: first fit in the space that free_shared()
 * gave back (IrTensor.freed_before: the tensors created after the free),
 * else on top of everything placed so far. Without frees, every tensor
 * goes on top: one after the other. Frees need not be in any order (Tilus
 * asks none); freed space merges with its free neighbours. A freed
 * tensor's bytes are plain memory for the next tensor: what was in flight
 * on it must be waited for, and every thread done with it (a sync()),
 * before the free (docs/language.md; `tlsc --verify` reports the races).
 * A reshape (reshape_shared) takes the offset of the tensor whose bytes
 * it shares. Alignments:
 *   swizzled tiles   8 rows of the swizzle span (1024 bytes for the 128-byte
 *                    swizzle): the swizzle pattern is a function of address
 *                    bits, so TMA and WGMMA agree only when a tile starts on
 *                    a pattern boundary;
 *   mbarriers        8 bytes (their natural alignment);
 *   everything else  16 bytes (vector loads and stores).
 *
 * The dynamic shared memory window itself is only guaranteed 16-byte
 * aligned. When any tensor needs more, the backend rounds the window's base
 * address up to 1024 at run time, and smem_bytes includes 1024 bytes of
 * slack for that rounding. Offsets here are relative to the rounded base.
 *
 * Every view that TMA or WGMMA touches must start on its tensor's
 * alignment; a view of a tensor indexed in its leading dimensions starts at
 * a multiple of its own byte size, so that size must be a multiple of the
 * alignment.
 */
#include "ir/ir.h"

#include <stdlib.h>
#include <string.h>

#define BASE_ROUNDING 1024 /* the backend's run-time base alignment */

static int64_t align_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

/* Sizes saturate (ir_tensor_nbytes does too): past the limit the exact
 * total no longer matters, only that it stays past it. */
static int64_t sat_add(int64_t a, int64_t b) {
  return a > INT64_MAX / 4 - b ? INT64_MAX / 4 : a + b;
}

static int64_t tensor_align(const IrTensor *t) {
  if (t->is_mbarrier) return 8;
  if (t->layout == LAYOUT_SWIZZLED && t->swizzle_bytes > 0) return 8 * (int64_t)t->swizzle_bytes;
  return 16;
}

/* ------------------------------------------------------- view checks */

/* A TMA or WGMMA view must start on its tensor's alignment. Reported once
 * per tensor (an unrolled loop repeats the same view). */
static bool check_view(const IrRef *r, const IrStmt *s, bool *reported, Diag *d) {
  if (!r->t || r->nidx == 0 || r->t->align <= 16) return true;
  int64_t bytes = ir_ref_nbytes(r);
  if (bytes % r->t->align == 0) return true;
  if (!reported[r->t->id])
    diag_error(d, s->span,
               "a view of '%s' is %lld bytes, so it does not "
               "always start on the %lld-byte boundary its %d-byte swizzle "
               "needs",
               r->t->name, (long long)bytes, (long long)r->t->align, r->t->swizzle_bytes);
  reported[r->t->id] = true;
  return false;
}

static bool check_views(const IrBlock *b, bool *reported, Diag *d) {
  bool ok = true;
  for (int i = 0; i < b->len; i++) {
    const IrStmt *s = b->items[i];
    if (s->kind == S_TMA_LOAD || s->kind == S_TMA_STORE)
      ok = check_view(&s->tma.shared, s, reported, d) && ok;
    if (s->kind == S_WGMMA_MMA) {
      ok = check_view(&s->wgmma.a, s, reported, d) && ok;
      ok = check_view(&s->wgmma.b, s, reported, d) && ok;
    }
    ok = check_views(&s->body, reported, d) && ok;
    ok = check_views(&s->orelse, reported, d) && ok;
  }
  return ok;
}

/* ------------------------------------------------------------ limit */

/* Reports the tensor at which the plan first passes the limit, with a note
 * for each shared tensor of 1 KB or more. */
static void report_overflow(const IrKernel *k, int64_t needed, int64_t slack, Diag *d) {
  const IrTensor *culprit = NULL;
  for (int i = 0; i < k->ntensors && !culprit; i++) {
    const IrTensor *t = k->tensors[i];
    if (t->space == MS_SHARED &&
        sat_add(t->smem_offset, ir_tensor_nbytes(t)) + slack > TLS_SMEM_LIMIT)
      culprit = t;
  }
  Span at = culprit ? culprit->span : k->span;
  diag_error(d, at,
             "shared memory of '%s' exceeds the limit: %lld bytes "
             "needed%s, %d available",
             culprit ? culprit->name : k->name, (long long)needed,
             slack ? " (with 1024 bytes to align the base)" : "", TLS_SMEM_LIMIT);
  for (int i = 0; i < k->ntensors; i++) {
    const IrTensor *t = k->tensors[i];
    if (t->space == MS_SHARED && ir_tensor_nbytes(t) >= 1024)
      diag_note(d, t->span, "'%s' takes %lld bytes", t->name, (long long)ir_tensor_nbytes(t));
  }
}

/* ------------------------------------------------------------- plan */

/* The largest reduction scratch any S_REDUCE of blk needs. */
static int64_t max_reduce_scratch(const IrBlock *blk) {
  int64_t most = 0;
  for (int i = 0; i < blk->len; i++) {
    const IrStmt *s = blk->items[i];
    int64_t n = ir_reduce_scratch_bytes(s);
    int64_t inner = max_reduce_scratch(&s->body), other = max_reduce_scratch(&s->orelse);
    if (inner > n) n = inner;
    if (other > n) n = other;
    if (n > most) most = n;
  }
  return most;
}

/* The free space of a plan: holes that frees gave back, disjoint, in
 * address order, each [start, end); everything from `top` on. `high` is
 * the most the plan ever used; no hole is larger than `widest`, so that a
 * request larger goes on top without a walk over the holes. */
typedef struct Space {
  int64_t (*holes)[2];
  int nholes, cap;
  int64_t top, high, widest;
} Space;

static void hole_insert(Space *s, int at, int64_t start, int64_t end) {
  if (s->nholes == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 8;
    s->holes = xrealloc(s->holes, sizeof *s->holes * (size_t)s->cap);
  }
  memmove(s->holes + at + 1, s->holes + at, sizeof *s->holes * (size_t)(s->nholes - at));
  s->holes[at][0] = start;
  s->holes[at][1] = end;
  s->nholes++;
  if (end - start > s->widest) s->widest = end - start;
}

static void hole_remove(Space *s, int at) {
  memmove(s->holes + at, s->holes + at + 1, sizeof *s->holes * (size_t)(s->nholes - at - 1));
  s->nholes--;
}

/* n bytes at alignment a above every byte used so far: the gap between
 * the top and there stays free. */
static int64_t space_take_fresh(Space *s, int64_t n, int64_t a) {
  int64_t at = align_up(s->high, a);
  if (s->top < s->high) hole_insert(s, s->nholes, s->top, s->high);
  s->top = s->high = sat_add(at, n);
  return at;
}

/* n bytes at alignment a: the lowest hole that holds them (what is left of
 * it on either side stays free), else the top (the alignment padding
 * below is lost, as it always was). */
static int64_t space_take(Space *s, int64_t n, int64_t a) {
  int64_t widest = 0;
  for (int i = 0; i < s->nholes && n <= s->widest; i++) {
    int64_t lo = s->holes[i][0], hi = s->holes[i][1], at = align_up(lo, a);
    if (hi - lo > widest) widest = hi - lo;
    if (at > hi - n) continue;
    hole_remove(s, i);
    if (at + n < hi) hole_insert(s, i, at + n, hi);
    if (lo < at) hole_insert(s, i, lo, at);
    return at;
  }
  if (n <= s->widest) s->widest = widest; /* walked them all: now exact */
  int64_t at = align_up(s->top, a);
  s->top = sat_add(at, n);
  if (s->top > s->high) s->high = s->top;
  return at;
}

/* Gives [at, at + n) back: merged with the holes that touch it; what
 * touches the top lowers it. */
static void space_give(Space *s, int64_t at, int64_t n) {
  int64_t end = sat_add(at, n);
  int i = 0, hi = s->nholes; /* the first hole past `at` */
  while (i < hi) {
    int mid = (i + hi) / 2;
    if (s->holes[mid][0] < at)
      i = mid + 1;
    else
      hi = mid;
  }
  if (i > 0 && s->holes[i - 1][1] == at) { /* the hole before ends here */
    at = s->holes[--i][0];
    hole_remove(s, i);
  }
  if (i < s->nholes && s->holes[i][0] == end) { /* the hole after starts at the end */
    end = s->holes[i][1];
    hole_remove(s, i);
  }
  if (end >= s->top)
    s->top = at;
  else
    hole_insert(s, i, at, end);
}

/* Freed shared tensors by the point of their free (then by id). */
static int by_free(const void *a, const void *b) {
  const IrTensor *x = *(IrTensor *const *)a, *y = *(IrTensor *const *)b;
  if (x->freed_before != y->freed_before) return x->freed_before < y->freed_before ? -1 : 1;
  return x->id - y->id;
}

IrTensor **ir_freed_tensors(const IrKernel *k, int *n) {
  IrTensor **f = xmalloc(sizeof(IrTensor *) * ((size_t)k->ntensors + 1));
  *n = 0;
  for (int i = 0; i < k->ntensors; i++)
    if (k->tensors[i]->space == MS_SHARED && k->tensors[i]->freed_at.line)
      f[(*n)++] = k->tensors[i];
  qsort(f, (size_t)*n, sizeof *f, by_free);
  return f;
}

/* Places every shared tensor (in creation order, after giving back what
 * was freed before it was created); the bytes used at most. mbarriers are
 * initialised at the kernel's entry, so they take bytes no tensor has
 * used before them (without frees, the same place). */
static int64_t place_tensors(IrKernel *k, int64_t *max_align) {
  Space s = {0};
  int nfreed, next = 0;
  IrTensor **freed = ir_freed_tensors(k, &nfreed);
  for (int i = 0; i < k->ntensors; i++) {
    for (; next < nfreed && freed[next]->freed_before <= i; next++)
      space_give(&s, freed[next]->smem_offset, ir_tensor_nbytes(freed[next]));
    IrTensor *t = k->tensors[i];
    if (t->space != MS_SHARED) continue;
    if (t->alias_of) { /* reshape_shared: the bytes of a tensor placed before it */
      t->align = t->alias_of->align;
      t->smem_offset = t->alias_of->smem_offset;
      continue;
    }
    t->align = tensor_align(t);
    t->smem_offset = t->is_mbarrier ? space_take_fresh(&s, ir_tensor_nbytes(t), t->align)
                                    : space_take(&s, ir_tensor_nbytes(t), t->align);
    if (t->align > *max_align) *max_align = t->align;
  }
  free(freed);
  free(s.holes);
  return s.high;
}

int64_t ir_smem_high(IrKernel *k) {
  int64_t max_align = 16, *was = xmalloc(sizeof *was * 2 * ((size_t)k->ntensors + 1));
  for (int i = 0; i < k->ntensors; i++)
    was[2 * i] = k->tensors[i]->smem_offset, was[2 * i + 1] = k->tensors[i]->align;
  int64_t high = place_tensors(k, &max_align);
  for (int i = 0; i < k->ntensors; i++) /* a query: the plan is made later */
    k->tensors[i]->smem_offset = was[2 * i], k->tensors[i]->align = was[2 * i + 1];
  free(was);
  return high;
}

/* The swizzle offered a staging tile (layout.c, stage.c), where its
 * place is a multiple of the swizzle's 8-row atom and the base is rounded
 * (some tensor already needs more than 16 bytes; the atom, at most 1024
 * bytes, divides the rounding): the same bytes, no conflicts in its
 * stores. */
static void take_staging_swizzles(IrKernel *k, int64_t max_align) {
  for (int i = 0; i < k->ntensors; i++) {
    IrTensor *t = k->tensors[i];
    int sw = t->fragment_swizzle;
    if (!sw || t->layout != LAYOUT_ROW_MAJOR || max_align <= 16 || t->smem_offset % (8 * sw))
      continue;
    t->layout = LAYOUT_SWIZZLED;
    t->swizzle_bytes = sw;
  }
}

static bool plan_kernel(IrKernel *k, Diag *d) {
  int64_t max_align = 16;
  int64_t offset = place_tensors(k, &max_align);
  /* reductions across warps exchange partial results after the tensors
   * (never overlapping one: a reduction may run while any is in use) */
  k->reduce_scratch_bytes = max_reduce_scratch(&k->body);
  k->reduce_scratch_offset = align_up(offset, 16);
  if (k->reduce_scratch_bytes > 0)
    offset = sat_add(k->reduce_scratch_offset, k->reduce_scratch_bytes);
  int64_t slack = max_align > 16 ? BASE_ROUNDING : 0;
  k->smem_bytes = offset > 0 ? align_up(offset, 16) + slack : 0;
  take_staging_swizzles(k, max_align);
  if (k->smem_bytes > TLS_SMEM_LIMIT) {
    report_overflow(k, k->smem_bytes, slack, d);
    return false;
  }
  bool *reported = xmalloc((size_t)k->ntensors + 1);
  memset(reported, 0, (size_t)k->ntensors + 1);
  bool ok = check_views(&k->body, reported, d);
  free(reported);
  return ok;
}

bool ir_plan_smem(IrModule *m, Diag *d) {
  bool ok = true;
  for (int i = 0; i < m->nkernels; i++) ok = plan_kernel(m->kernels[i], d) && ok;
  return ok;
}
