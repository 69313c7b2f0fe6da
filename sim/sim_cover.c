/* sim_cover.c: when the whole grid runs in one schedule (a kernel with
 * semaphores: split-K, a split last wave), every output is written in
 * full. An output is a global view of a pointer parameter that the kernel
 * only stores to (TMA stores, store_global) and that no other view, load,
 * copy or semaphore of the kernel touches; it gets a byte per element, set
 * by each store's box clipped to the view's shape, and an element no block
 * wrote is reported at the end: the schedule lost part of the result (a
 * tile whose owner never ran, a split whose runs do not add up). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

/* The largest output checked, in elements (a byte each). */
enum { COVER_MAX_ELEMS = 1 << 26 };

/* How parameter p's views are used, over the whole body. */
typedef struct ParamUse {
  const IrTensor *view; /* the one view stored to, NULL for none */
  bool other;           /* another view, a load, a copy or a semaphore */
} ParamUse;

static int param_of(const IrTensor *t) {
  const IrExpr *p = t ? t->gptr : NULL;
  return p && p->kind == X_PARAM && p->param->is_ptr && !p->param->workspace ? p->param->index : -1;
}

static void note_store(ParamUse *u, const IrTensor *t) {
  int p = param_of(t);
  if (p < 0) return;
  if (u[p].view && u[p].view != t) u[p].other = true;
  u[p].view = t;
}

static void note_other(ParamUse *u, const IrTensor *t) {
  int p = param_of(t);
  if (p >= 0) u[p].other = true;
}

/* Over the body: each parameter's stores and other uses; in_sem[p]: a
 * semaphore's address names parameter p. */
static void scan(const IrBlock *b, ParamUse *u, bool *in_sem) {
  for (int i = 0; i < b->len; i++) {
    const IrStmt *s = b->items[i];
    scan(&s->body, u, in_sem);
    scan(&s->orelse, u, in_sem);
    bool stores;
    const IrTensor *g = ir_stmt_global(s, &stores);
    /* where a scatter writes is data; an atomic combines with what is there */
    if (s->kind == S_STORE_GLOBAL && (s->gmem.scatter || s->gmem.atomic)) stores = false;
    if (g && stores)
      note_store(u, g);
    else if (g)
      note_other(u, g);
    if (s->kind == S_SEM_WAIT || s->kind == S_SEM_RELEASE) ir_expr_mark_params(s->sem.addr, in_sem);
  }
}

/* The outputs to check; none unless the whole grid runs together. */
void sim_cover_start(Sim *S) {
  const IrKernel *k = S->k;
  if (!S->grid || k->nparams == 0) return;
  ParamUse *u = sim_zalloc((size_t)k->nparams, sizeof *u);
  bool *in_sem = sim_zalloc((size_t)k->nparams, sizeof *in_sem);
  scan(&k->body, u, in_sem);
  S->covers = sim_zalloc((size_t)k->nparams, sizeof *S->covers);
  for (int p = 0; p < k->nparams; p++) {
    const IrTensor *t = u[p].view;
    if (!t || u[p].other || in_sem[p] || t->rank < 1 || t->rank > IR_MAX_RANK) continue;
    SimCover *c = &S->covers[S->ncovers];
    int64_t n = 1;
    for (int d = 0; d < t->rank && n > 0; d++) {
      c->dims[d] = sim_eval_int(S, &S->warps[0], t->gshape[d], t->span);
      n = c->dims[d] > 0 && n <= COVER_MAX_ELEMS / c->dims[d] ? n * c->dims[d] : 0;
    }
    if (S->failed || n <= 0) continue; /* not evaluable, empty or too large */
    c->t = t;
    c->n = n;
    c->written = sim_zalloc((size_t)n, 1);
    S->ncovers++;
  }
  free(u);
  free(in_sem);
}

static SimCover *cover_of(Sim *S, const IrTensor *t) {
  for (int i = 0; i < S->ncovers; i++)
    if (S->covers[i].t == t) return &S->covers[i];
  return NULL;
}

/* Marks the elements from lo (inclusive) to lo + ext, dimension by
 * dimension, clipped to the view's shape (stores drop what is outside). */
static void mark_box(SimCover *c, const int64_t *lo, const int64_t *ext) {
  int rank = c->t->rank;
  int64_t from[IR_MAX_RANK], to[IR_MAX_RANK], at[IR_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    from[d] = lo[d] < 0 ? 0 : lo[d];
    to[d] = lo[d] + ext[d] < c->dims[d] ? lo[d] + ext[d] : c->dims[d];
    if (from[d] >= to[d]) return;
    at[d] = from[d];
  }
  for (;;) {
    int64_t flat = 0;
    for (int d = 0; d < rank; d++) flat = flat * c->dims[d] + at[d];
    int64_t run = to[rank - 1] - from[rank - 1];
    memset(c->written + flat, 1, (size_t)run);
    int d = rank - 2;
    while (d >= 0 && ++at[d] == to[d]) at[d] = from[d], d--;
    if (d < 0) return;
  }
}

/* A TMA store (its box the shared view's shape, innermost dimensions
 * aligned) or a store_global (the register tile along its dims=) by w. */
void sim_cover_store(Sim *S, SimWarp *w, const IrStmt *s) {
  bool tma = s->kind == S_TMA_STORE;
  const IrTensor *g = tma ? s->tma.global : s->gmem.global;
  SimCover *c = cover_of(S, g);
  if (!c) return;
  int rank = g->rank;
  int64_t lo[IR_MAX_RANK], ext[IR_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    lo[d] = sim_eval_int(S, w, tma ? s->tma.offsets[d] : s->gmem.offsets[d], s->span);
    ext[d] = 1;
  }
  if (tma) {
    int srank = ir_ref_rank(&s->tma.shared);
    for (int i = 0; i < srank && i < rank; i++)
      ext[rank - 1 - i] = ir_ref_dim(&s->tma.shared, srank - 1 - i);
  } else {
    for (int d = 0; d < rank; d++) {
      int td = ir_gcopy_tile_dim(&s->gmem, d);
      if (td >= 0) ext[d] = s->gmem.reg->shape[td];
    }
  }
  if (!S->failed) mark_box(c, lo, ext);
}

/* At the end of a whole-grid run: the first element no block wrote. */
bool sim_cover_check(Sim *S) {
  for (int i = 0; i < S->ncovers; i++) {
    const SimCover *c = &S->covers[i];
    const unsigned char *hole = memchr(c->written, 0, (size_t)c->n);
    if (!hole) continue;
    int64_t missing = 0, flat = hole - c->written, at[IR_MAX_RANK];
    for (int64_t j = flat; j < c->n; j++) missing += !c->written[j];
    for (int d = c->t->rank - 1; d >= 0; d--) at[d] = flat % c->dims[d], flat /= c->dims[d];
    char where[160];
    int len = 0;
    for (int d = 0; d < c->t->rank; d++)
      len += snprintf(where + len, sizeof where - (size_t)len, "%s%" PRId64, d ? ", " : "", at[d]);
    diag_error(S->d, c->t->span,
               "%" PRId64 " of the %" PRId64 " elements of '%s' are written by no block of "
               "the grid (the first: [%s]); every block ran, so the output keeps what was "
               "there before the launch",
               missing, c->n, c->t->name, where);
    S->failed = true;
    return false;
  }
  return true;
}

void sim_cover_free(Sim *S) {
  for (int i = 0; i < S->ncovers; i++) free(S->covers[i].written);
  free(S->covers);
  S->covers = NULL;
  S->ncovers = 0;
}
