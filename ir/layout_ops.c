/* layout_ops.c: Tilus's register layout algebra over IrRegLayout, for the
 * layouts a script writes itself (tilus.ir.layout.ops: local, spatial,
 * their products, reduce, concat). The model is the one in ir.h: a
 * dimension's modes outer to inner, thread digits and slot digits outer to
 * inner. Modes of size 1 are dropped, as every layout of reglayout.c drops
 * them, so equal maps compare equal through ir_reglayout_equal. Each
 * function returns NULL when the result would need more than IR_MAX_RANK
 * dimensions or IR_MAX_MODES modes. */
#include <string.h>

#include "ir/ir.h"

/* A layout under construction, in the arrays ir_reglayout_make takes. */
typedef struct Build {
  int rank;
  int64_t shape[IR_MAX_RANK];
  int nmodes, nthread, nlocal;
  int mode_dim[IR_MAX_MODES], thread_mode[IR_MAX_MODES], local_mode[IR_MAX_MODES];
  int64_t mode_size[IR_MAX_MODES], thread_size[IR_MAX_MODES];
  bool overflow;
} Build;

static int add_mode(Build *b, int dim, int64_t size) {
  if (size <= 1) return -1;
  if (b->nmodes >= IR_MAX_MODES) {
    b->overflow = true;
    return -1;
  }
  b->mode_dim[b->nmodes] = dim;
  b->mode_size[b->nmodes] = size;
  return b->nmodes++;
}

/* A thread digit: mode m (or a replication of `size` threads for m < 0). */
static void add_thread(Build *b, int m, int64_t size) {
  if (size <= 1) return;
  if (b->nthread >= IR_MAX_MODES) {
    b->overflow = true;
    return;
  }
  b->thread_mode[b->nthread] = m;
  b->thread_size[b->nthread++] = size;
}

static void add_local(Build *b, int m) {
  if (m < 0) return;
  if (b->nlocal >= IR_MAX_MODES) {
    b->overflow = true;
    return;
  }
  b->local_mode[b->nlocal++] = m;
}

static IrRegLayout *finish(Arena *ar, const Build *b) {
  if (b->overflow) return NULL;
  return ir_reglayout_make(ar, b->rank, b->shape, b->nmodes, b->mode_dim, b->mode_size, b->nthread,
                           b->thread_mode, b->thread_size, b->nlocal, b->local_mode);
}

/* spatial(*shape, ranks=) or local(*shape, ranks=): one mode per
 * dimension; the digit of the dimension whose rank is 0 is the outermost
 * (ranks NULL: row-major, dimension 0 outermost). */
IrRegLayout *ir_rl_atom(Arena *ar, int rank, const int64_t *shape, const int *ranks, bool spatial) {
  if (rank < 1 || rank > IR_MAX_RANK) return NULL;
  Build b = {.rank = rank};
  int mode[IR_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    b.shape[d] = shape[d];
    mode[d] = add_mode(&b, d, shape[d]);
  }
  for (int r = 0; r < rank; r++)
    for (int d = 0; d < rank; d++) {
      if ((ranks ? ranks[d] : d) != r || mode[d] < 0) continue;
      if (spatial)
        add_thread(&b, mode[d], shape[d]);
      else
        add_local(&b, mode[d]);
    }
  return finish(ar, &b);
}

/* Copies L's thread and slot digits into b, its modes renumbered by map. */
static void copy_digits(Build *b, const IrRegLayout *L, const int *map, bool threads) {
  if (threads) {
    for (int i = 0; i < L->nthread; i++) {
      int m = L->thread_mode[i];
      add_thread(b, m < 0 ? -1 : map[m], L->thread_size[i]);
    }
    return;
  }
  for (int i = 0; i < L->nlocal; i++) add_local(b, map[L->local_mode[i]]);
}

/* outer * inner (Tilus's compose): shapes multiplied dimension by
 * dimension (the lower rank padded with leading 1s), each dimension's
 * modes the outer's then the inner's, the thread and slot digits the
 * outer's then the inner's. */
IrRegLayout *ir_rl_compose(Arena *ar, const IrRegLayout *outer, const IrRegLayout *inner) {
  int rank = outer->rank > inner->rank ? outer->rank : inner->rank;
  int po = rank - outer->rank, pi = rank - inner->rank;
  Build b = {.rank = rank};
  int omap[IR_MAX_MODES], imap[IR_MAX_MODES];
  for (int d = 0; d < rank; d++) {
    b.shape[d] = (d >= po ? outer->shape[d - po] : 1) * (d >= pi ? inner->shape[d - pi] : 1);
    for (int m = 0; m < outer->nmodes; m++)
      if (outer->mode_dim[m] + po == d) omap[m] = add_mode(&b, d, outer->mode_size[m]);
    for (int m = 0; m < inner->nmodes; m++)
      if (inner->mode_dim[m] + pi == d) imap[m] = add_mode(&b, d, inner->mode_size[m]);
  }
  copy_digits(&b, outer, omap, true);
  copy_digits(&b, inner, imap, true);
  copy_digits(&b, outer, omap, false);
  copy_digits(&b, inner, imap, false);
  return finish(ar, &b);
}

/* reduce(L, dims, keepdims=): the dimensions in `reduced` (a bit each)
 * become 1 (or go): their thread digits replicate, their slot digits go. */
IrRegLayout *ir_rl_reduce(Arena *ar, const IrRegLayout *L, unsigned reduced, bool keepdims) {
  Build b = {0};
  int newdim[IR_MAX_RANK], map[IR_MAX_MODES];
  for (int d = 0; d < L->rank; d++) {
    bool gone = reduced >> d & 1;
    newdim[d] = gone && !keepdims ? -1 : b.rank;
    if (newdim[d] >= 0) b.shape[b.rank++] = gone ? 1 : L->shape[d];
  }
  for (int m = 0; m < L->nmodes; m++)
    map[m] =
        reduced >> L->mode_dim[m] & 1 ? -1 : add_mode(&b, newdim[L->mode_dim[m]], L->mode_size[m]);
  for (int i = 0; i < L->nthread; i++) {
    int m = L->thread_mode[i];
    add_thread(&b, m < 0 ? -1 : map[m], L->thread_size[i]);
  }
  copy_digits(&b, L, map, false);
  if (b.rank == 0) return NULL;
  return finish(ar, &b);
}

/* concat(a, b): a's dimensions then b's, a's digits then b's. */
IrRegLayout *ir_rl_concat(Arena *ar, const IrRegLayout *a, const IrRegLayout *c) {
  if (a->rank + c->rank > IR_MAX_RANK) return NULL;
  Build b = {.rank = a->rank + c->rank};
  int amap[IR_MAX_MODES], cmap[IR_MAX_MODES];
  memcpy(b.shape, a->shape, sizeof(int64_t) * (size_t)a->rank);
  memcpy(b.shape + a->rank, c->shape, sizeof(int64_t) * (size_t)c->rank);
  for (int m = 0; m < a->nmodes; m++) amap[m] = add_mode(&b, a->mode_dim[m], a->mode_size[m]);
  for (int m = 0; m < c->nmodes; m++)
    cmap[m] = add_mode(&b, c->mode_dim[m] + a->rank, c->mode_size[m]);
  copy_digits(&b, a, amap, true);
  copy_digits(&b, c, cmap, true);
  copy_digits(&b, a, amap, false);
  copy_digits(&b, c, cmap, false);
  return finish(ar, &b);
}
