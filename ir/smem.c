/* smem.c: shared memory planning.
 *
 * Every shared tensor gets a byte offset in the block's dynamic shared
 * memory, in creation order (deterministic, and the order the user wrote).
 * Alignments:
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

static bool plan_kernel(IrKernel *k, Diag *d) {
  int64_t offset = 0, max_align = 16;
  for (int i = 0; i < k->ntensors; i++) {
    IrTensor *t = k->tensors[i];
    if (t->space != MS_SHARED) continue;
    t->align = tensor_align(t);
    t->smem_offset = align_up(offset, t->align);
    offset = sat_add(t->smem_offset, ir_tensor_nbytes(t));
    if (t->align > max_align) max_align = t->align;
  }
  /* reductions across warps exchange partial results after the tensors
   * (never overlapping one: a reduction may run while any is in use) */
  k->reduce_scratch_bytes = max_reduce_scratch(&k->body);
  k->reduce_scratch_offset = align_up(offset, 16);
  if (k->reduce_scratch_bytes > 0)
    offset = sat_add(k->reduce_scratch_offset, k->reduce_scratch_bytes);
  int64_t slack = max_align > 16 ? BASE_ROUNDING : 0;
  k->smem_bytes = offset > 0 ? align_up(offset, 16) + slack : 0;
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
