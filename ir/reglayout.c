/* reglayout.c: register layouts, how the elements of a register tensor are
 * spread over the threads that own it (the model is in ir.h, above
 * IrRegLayout).
 *
 * Everything here is arithmetic on digits: an index of dimension d is a
 * mixed-radix number whose digits are d's modes, and a thread id and a slot
 * are mixed-radix numbers whose digits are modes too. A coordinate is the
 * sum of a thread part and a slot part with no carries between them, which
 * is what lets the backend compute the thread part once and add constants.
 */
#include <string.h>

#include "ir/ir.h"

/* Product of the sizes of the modes of m's dimension inner to m: what one
 * step of m's digit adds to the index. */
int64_t ir_reglayout_mode_stride(const IrRegLayout *L, int m) {
  int64_t s = 1;
  for (int j = m + 1; j < L->nmodes && L->mode_dim[j] == L->mode_dim[m]; j++) s *= L->mode_size[j];
  return s;
}

/* Product of the sizes of the thread digits inner to digit i. */
int64_t ir_reglayout_thread_stride(const IrRegLayout *L, int i) {
  int64_t s = 1;
  for (int j = i + 1; j < L->nthread; j++) s *= L->thread_size[j];
  return s;
}

static int64_t local_stride(const IrRegLayout *L, int i) {
  int64_t s = 1;
  for (int j = i + 1; j < L->nlocal; j++) s *= L->mode_size[L->local_mode[j]];
  return s;
}

static void finish(IrRegLayout *L) {
  L->nthreads = 1;
  for (int i = 0; i < L->nthread; i++) L->nthreads *= L->thread_size[i];
  L->nslots = 1;
  for (int i = 0; i < L->nlocal; i++) L->nslots *= L->mode_size[L->local_mode[i]];
}

/* Appends a mode of dimension d (modes must be added dimension by
 * dimension, outer to inner); returns its index, -1 for size 1. */
static int add_mode(IrRegLayout *L, int d, int64_t size) {
  if (size <= 1 || L->nmodes >= IR_MAX_MODES) return -1;
  L->mode_dim[L->nmodes] = d;
  L->mode_size[L->nmodes] = size;
  return L->nmodes++;
}

IrRegLayout *ir_reglayout_default(Arena *ar, int rank, const int64_t *shape, int64_t nthreads,
                                  int64_t vec) {
  IrRegLayout *L = arena_alloc(ar, sizeof *L);
  L->rank = rank;
  memcpy(L->shape, shape, sizeof(int64_t) * (size_t)rank);
  int64_t threads[IR_MAX_RANK], outer[IR_MAX_RANK], inner[IR_MAX_RANK];
  int64_t left = nthreads > 0 ? nthreads : 1;
  for (int d = rank - 1; d >= 0; d--) { /* innermost dimension first */
    inner[d] = 1;
    if (d == rank - 1)
      while (inner[d] * 2 <= vec && shape[d] % (inner[d] * 2) == 0) inner[d] *= 2;
    threads[d] = ir_gcd(left, shape[d] / inner[d]);
    left /= threads[d];
    outer[d] = shape[d] / inner[d] / threads[d];
  }
  int tmode[IR_MAX_RANK], omode[IR_MAX_RANK], imode[IR_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    omode[d] = add_mode(L, d, outer[d]);
    tmode[d] = add_mode(L, d, threads[d]);
    imode[d] = add_mode(L, d, inner[d]);
  }
  if (left > 1) { /* more threads than elements: the rest replicate */
    L->thread_mode[L->nthread] = -1;
    L->thread_size[L->nthread++] = left;
  }
  for (int d = 0; d < rank; d++)
    if (tmode[d] >= 0) {
      L->thread_mode[L->nthread] = tmode[d];
      L->thread_size[L->nthread++] = threads[d];
    }
  for (int d = 0; d < rank; d++) {
    if (omode[d] >= 0) L->local_mode[L->nlocal++] = omode[d];
    if (imode[d] >= 0) L->local_mode[L->nlocal++] = imode[d];
  }
  finish(L);
  return L;
}

IrRegLayout *ir_reglayout_make(Arena *ar, int rank, const int64_t *shape, int nmodes,
                               const int *mode_dim, const int64_t *mode_size, int nthread,
                               const int *thread_mode, const int64_t *thread_size, int nlocal,
                               const int *local_mode) {
  IrRegLayout *L = arena_alloc(ar, sizeof *L);
  L->rank = rank;
  memcpy(L->shape, shape, sizeof(int64_t) * (size_t)rank);
  L->nmodes = nmodes;
  memcpy(L->mode_dim, mode_dim, sizeof(int) * (size_t)nmodes);
  memcpy(L->mode_size, mode_size, sizeof(int64_t) * (size_t)nmodes);
  L->nthread = nthread;
  memcpy(L->thread_mode, thread_mode, sizeof(int) * (size_t)nthread);
  memcpy(L->thread_size, thread_size, sizeof(int64_t) * (size_t)nthread);
  L->nlocal = nlocal;
  memcpy(L->local_mode, local_mode, sizeof(int) * (size_t)nlocal);
  finish(L);
  return L;
}

void ir_reglayout_coords(const IrRegLayout *L, int64_t tid, int64_t slot, int64_t *coords) {
  int64_t digit[IR_MAX_MODES] = {0};
  for (int i = 0; i < L->nthread; i++)
    if (L->thread_mode[i] >= 0)
      digit[L->thread_mode[i]] = tid / ir_reglayout_thread_stride(L, i) % L->thread_size[i];
  for (int i = 0; i < L->nlocal; i++)
    digit[L->local_mode[i]] = slot / local_stride(L, i) % L->mode_size[L->local_mode[i]];
  for (int d = 0; d < L->rank; d++) coords[d] = 0;
  for (int m = 0; m < L->nmodes; m++)
    coords[L->mode_dim[m]] += digit[m] * ir_reglayout_mode_stride(L, m);
}

bool ir_reglayout_slot_of(const IrRegLayout *L, int64_t tid, const int64_t *coords, int64_t *slot) {
  int64_t digit[IR_MAX_MODES];
  for (int m = 0; m < L->nmodes; m++)
    digit[m] = coords[L->mode_dim[m]] / ir_reglayout_mode_stride(L, m) % L->mode_size[m];
  for (int i = 0; i < L->nthread; i++) {
    int m = L->thread_mode[i];
    if (m >= 0 && tid / ir_reglayout_thread_stride(L, i) % L->thread_size[i] != digit[m])
      return false;
  }
  *slot = 0;
  for (int i = 0; i < L->nlocal; i++)
    *slot = *slot * L->mode_size[L->local_mode[i]] + digit[L->local_mode[i]];
  return true;
}

/* The layout of a tensor of shape `shape` (rank <= full's, aligned on the
 * right as in numpy's broadcasting) whose element under each element of
 * full lives in the same thread: full's modes of a dimension the tensor
 * does not have, or has with size 1, are dropped (a thread digit over them
 * replicates instead). */
IrRegLayout *ir_reglayout_broadcast(Arena *ar, const IrRegLayout *full, int rank,
                                    const int64_t *shape) {
  int lead = full->rank - rank;
  int newidx[IR_MAX_MODES];
  IrRegLayout *L = arena_alloc(ar, sizeof *L);
  L->rank = rank;
  memcpy(L->shape, shape, sizeof(int64_t) * (size_t)rank);
  for (int m = 0; m < full->nmodes; m++) {
    int d = full->mode_dim[m] - lead;
    newidx[m] = -1;
    if (d >= 0 && shape[d] == full->shape[d + lead]) {
      L->mode_dim[L->nmodes] = d;
      L->mode_size[L->nmodes] = full->mode_size[m];
      newidx[m] = L->nmodes++;
    }
  }
  for (int i = 0; i < full->nthread; i++) {
    int m = full->thread_mode[i];
    int nm = m >= 0 ? newidx[m] : -1;
    /* neighbouring replicated digits merge into one */
    if (nm < 0 && L->nthread > 0 && L->thread_mode[L->nthread - 1] < 0) {
      L->thread_size[L->nthread - 1] *= full->thread_size[i];
      continue;
    }
    L->thread_mode[L->nthread] = nm;
    L->thread_size[L->nthread++] = full->thread_size[i];
  }
  for (int i = 0; i < full->nlocal; i++)
    if (newidx[full->local_mode[i]] >= 0) L->local_mode[L->nlocal++] = newidx[full->local_mode[i]];
  finish(L);
  return L;
}

IrRegLayout *ir_reglayout_reduce(Arena *ar, const IrRegLayout *src, int dim, bool keepdim) {
  int64_t shape[IR_MAX_RANK];
  memcpy(shape, src->shape, sizeof shape);
  shape[dim] = 1;
  IrRegLayout *L = ir_reglayout_broadcast(ar, src, src->rank, shape);
  if (keepdim) return L;
  /* the dimension has no modes left: renumber the ones after it */
  for (int m = 0; m < L->nmodes; m++)
    if (L->mode_dim[m] > dim) L->mode_dim[m]--;
  for (int d = dim; d + 1 < L->rank; d++) L->shape[d] = L->shape[d + 1];
  L->rank--;
  return L;
}

/* Whether a and b put every element in the same thread and slot, whatever
 * their modes: coordinates are a thread part plus a slot part, so it is
 * enough to compare the thread parts at slot 0 and the slot parts at
 * thread 0 (an mma.sync C fragment of two n-tiles is the A fragment of
 * the next mma this way: FlashAttention's P @ V). */
static bool same_map(const IrRegLayout *a, const IrRegLayout *b) {
  if (a->rank != b->rank || a->nthreads != b->nthreads || a->nslots != b->nslots) return false;
  for (int d = 0; d < a->rank; d++)
    if (a->shape[d] != b->shape[d]) return false;
  int64_t ca[IR_MAX_RANK], cb[IR_MAX_RANK];
  for (int64_t t = 0; t < a->nthreads; t++) {
    ir_reglayout_coords(a, t, 0, ca);
    ir_reglayout_coords(b, t, 0, cb);
    if (memcmp(ca, cb, sizeof(int64_t) * (size_t)a->rank) != 0) return false;
  }
  for (int64_t s = 0; s < a->nslots; s++) {
    ir_reglayout_coords(a, 0, s, ca);
    ir_reglayout_coords(b, 0, s, cb);
    if (memcmp(ca, cb, sizeof(int64_t) * (size_t)a->rank) != 0) return false;
  }
  return true;
}

bool ir_reglayout_equal(const IrRegLayout *a, const IrRegLayout *b) {
  if (a == b) return true;
  if (!a || !b || a->rank != b->rank) return false;
  if (a->nmodes != b->nmodes || a->nthread != b->nthread || a->nlocal != b->nlocal)
    return same_map(a, b);
  for (int d = 0; d < a->rank; d++)
    if (a->shape[d] != b->shape[d]) return same_map(a, b);
  for (int m = 0; m < a->nmodes; m++)
    if (a->mode_dim[m] != b->mode_dim[m] || a->mode_size[m] != b->mode_size[m])
      return same_map(a, b);
  for (int i = 0; i < a->nthread; i++)
    if (a->thread_mode[i] != b->thread_mode[i] || a->thread_size[i] != b->thread_size[i])
      return same_map(a, b);
  for (int i = 0; i < a->nlocal; i++)
    if (a->local_mode[i] != b->local_mode[i]) return same_map(a, b);
  return true;
}

/* `modes=[d0:8 d1:4 d1:32] threads=[r:2 m2] locals=[m0 m1]`: the modes
 * (dimension:size, outer to inner within each dimension), then the thread
 * and slot digits outer to inner, each a mode (m<index>) or, for a thread
 * digit, a replication (r:size). */
void ir_reglayout_print(FILE *out, const IrRegLayout *L) {
  fprintf(out, "modes=[");
  for (int m = 0; m < L->nmodes; m++)
    fprintf(out, "%sd%d:%lld", m ? " " : "", L->mode_dim[m], (long long)L->mode_size[m]);
  fprintf(out, "] threads=[");
  for (int i = 0; i < L->nthread; i++) {
    if (L->thread_mode[i] < 0)
      fprintf(out, "%sr:%lld", i ? " " : "", (long long)L->thread_size[i]);
    else
      fprintf(out, "%sm%d", i ? " " : "", L->thread_mode[i]);
  }
  fprintf(out, "] locals=[");
  for (int i = 0; i < L->nlocal; i++) fprintf(out, "%sm%d", i ? " " : "", L->local_mode[i]);
  fprintf(out, "]");
}

static bool pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

static int log2i(int64_t x) {
  int n = 0;
  while ((int64_t)1 << n < x) n++;
  return n;
}

/* Adds the term (tid / div % mod) to the plan's exchange index. */
static void add_part(IrReducePlan *p, int64_t div, int64_t mod) {
  p->part_div[p->nparts_terms] = div;
  p->part_mod[p->nparts_terms++] = mod;
  p->parts *= mod;
}

void ir_reduce_plan(const IrRegLayout *src, int dim, IrReducePlan *p) {
  memset(p, 0, sizeof *p);
  p->parts = 1;
  for (int i = 0; i < src->nthread; i++) {
    int m = src->thread_mode[i];
    int64_t stride = ir_reglayout_thread_stride(src, i), size = src->thread_size[i];
    if (m < 0) { /* replicas: one of them writes */
      p->zero_div[p->nzero] = stride;
      p->zero_mod[p->nzero++] = size;
      continue;
    }
    if (src->mode_dim[m] != dim) continue;
    if (!pow2(stride) || !pow2(size)) { /* no butterfly: all through memory */
      add_part(p, stride, size);
      continue;
    }
    int lo = log2i(stride), hi = log2i(stride * size);
    for (int b = lo; b < hi && b < 5; b++) p->lane_mask |= 1u << b;
    if (hi > 5) {
      int from = lo > 5 ? lo : 5;
      add_part(p, (int64_t)1 << from, (int64_t)1 << (hi - from));
    }
  }
}

/* Appends a level to a scan plan. */
static int push_level(IrScanLevel *lv, int n, IrScanKind kind, int64_t size, int64_t stride,
                      int64_t coord) {
  if (size > 1)
    lv[n++] = (IrScanLevel){.kind = kind, .size = size, .stride = stride, .coord = coord};
  return n;
}

int ir_scan_plan(const IrRegLayout *L, int dim, IrScanLevel *lv) {
  int n = 0;
  for (int m = L->nmodes - 1; m >= 0; m--) { /* a dimension's modes: outer to inner */
    if (L->mode_dim[m] != dim) continue;
    int64_t size = L->mode_size[m], coord = ir_reglayout_mode_stride(L, m);
    for (int i = 0; i < L->nlocal; i++)
      if (L->local_mode[i] == m) n = push_level(lv, n, SCAN_LOCAL, size, local_stride(L, i), coord);
    for (int i = 0; i < L->nthread; i++) {
      if (L->thread_mode[i] != m) continue;
      int64_t stride = ir_reglayout_thread_stride(L, i);
      if (!pow2(stride) || !pow2(size) || stride >= 32) {
        n = push_level(lv, n, SCAN_SHARED, size, stride, coord);
      } else if (stride * size <= 32) {
        n = push_level(lv, n, SCAN_LANE, size, stride, coord);
      } else { /* lanes, then warps */
        int64_t lanes = 32 / stride;
        n = push_level(lv, n, SCAN_LANE, lanes, stride, coord);
        n = push_level(lv, n, SCAN_SHARED, size / lanes, 32, coord * lanes);
      }
    }
  }
  return n;
}

int64_t ir_reduce_scratch_bytes(const IrStmt *s) {
  if (s->kind == S_PRINTF) /* a register tensor's elements, 32 or 64 bits each */
    return s->print.reg
               ? ir_tensor_numel(s->print.reg) * (dtype_bytes(s->print.reg->dtype) > 4 ? 8 : 4)
               : 0;
  if (s->kind == S_CONVERT) /* the whole tile, a bool as 4 bytes */
    return ir_tensor_numel(s->cast.dst) *
           (s->cast.dst->dtype == DT_BOOL ? 4 : dtype_bytes(s->cast.dst->dtype));
  const IrTensor *src = s->reduce.src, *dst = s->reduce.dst;
  if (s->kind != S_REDUCE || !src || !src->reg || !dst) return 0;
  if (s->reduce.scan) { /* each element's running total at its place */
    IrScanLevel lv[IR_MAX_SCAN_LEVELS];
    int n = ir_scan_plan(src->reg, s->reduce.dim, lv);
    for (int i = 0; i < n; i++)
      if (lv[i].kind == SCAN_SHARED)
        return ir_tensor_numel(src) * (dtype_bytes(src->dtype) > 4 ? 8 : 4);
    return 0;
  }
  IrReducePlan p;
  ir_reduce_plan(src->reg, s->reduce.dim, &p);
  if (p.parts <= 1) return 0;
  int64_t bytes = dtype_bytes(dst->dtype) > 4 ? 8 : 4;
  return p.parts * ir_tensor_numel(dst) * bytes;
}

/* Pushes thread digit `mode` (or a replication of size `size` when mode is
 * -1 and size > 1). */
static void push_thread(IrRegLayout *L, int mode, int64_t size) {
  if (mode < 0 && size <= 1) return;
  L->thread_mode[L->nthread] = mode;
  L->thread_size[L->nthread++] = mode >= 0 ? L->mode_size[mode] : size;
}

static void push_local(IrRegLayout *L, int mode) {
  if (mode >= 0) L->local_mode[L->nlocal++] = mode;
}

/* The m16n8k16 fragments of mma.sync tiled over warps_m x warps_n warps
 * (warp w = wm * warps_n + wn), each warp repeating its atom over its part
 * of the tile. In one atom, lane = 4g + q:
 *   A [16, 16]: a0 a1 (g, 2q + e), a2 a3 (g + 8, ..), a4 a5 (g, 2q + 8 + e),
 *               a6 a7 (g + 8, 2q + 8 + e);
 *   B [16, 8]:  b0 b1 (2q + e, g), b2 b3 (2q + 8 + e, g);
 *   C [16, 8]:  c0 c1 (g, 2q + e), c2 c3 (g + 8, 2q + e). */
bool ir_mma_operand_ok(DType operand, DType acc) {
  if (operand == DT_INT8 || operand == DT_UINT8) return acc == DT_INT32;
  return (operand == DT_FLOAT16 || operand == DT_BFLOAT16) &&
         (acc == DT_FLOAT32 || (acc == DT_FLOAT16 && operand == DT_FLOAT16));
}

int ir_mma_epr(DType operand) { return operand == DT_INT8 || operand == DT_UINT8 ? 4 : 2; }

IrRegLayout *ir_reglayout_mma(Arena *ar, IrMmaRole role, int64_t rows, int64_t cols,
                              int64_t warps_m, int64_t warps_n, int epr) {
  IrRegLayout *L = arena_alloc(ar, sizeof *L);
  L->rank = 2;
  L->shape[0] = rows;
  L->shape[1] = cols;
  L->mma = role;
  L->mma_warps_m = warps_m;
  L->mma_warps_n = warps_n;
  if (role == MMA_B) { /* [K, N] */
    int rk = add_mode(L, 0, rows / (8 * epr)), kh = add_mode(L, 0, 2), q = add_mode(L, 0, 4),
        e = add_mode(L, 0, epr);
    int wn = add_mode(L, 1, warps_n), rn = add_mode(L, 1, cols / (8 * warps_n)),
        g = add_mode(L, 1, 8);
    push_thread(L, -1, warps_m);
    push_thread(L, wn, 0);
    push_thread(L, g, 0);
    push_thread(L, q, 0);
    push_local(L, rk); /* Tilus's order: k repeats outer to n repeats */
    push_local(L, rn);
    push_local(L, kh);
    push_local(L, e);
    finish(L);
    return L;
  }
  /* A [M, K] and C [M, N]: rows alike */
  int wm = add_mode(L, 0, warps_m), rm = add_mode(L, 0, rows / (16 * warps_m)),
      h = add_mode(L, 0, 2), g = add_mode(L, 0, 8);
  if (role == MMA_A) {
    int rk = add_mode(L, 1, cols / (8 * epr)), kh = add_mode(L, 1, 2), q = add_mode(L, 1, 4),
        e = add_mode(L, 1, epr);
    push_thread(L, wm, 0);
    push_thread(L, -1, warps_n);
    push_thread(L, g, 0);
    push_thread(L, q, 0);
    push_local(L, rm);
    push_local(L, rk);
    push_local(L, kh);
    push_local(L, h);
    push_local(L, e);
  } else {
    int wn = add_mode(L, 1, warps_n), rn = add_mode(L, 1, cols / (8 * warps_n)),
        q = add_mode(L, 1, 4), e = add_mode(L, 1, 2);
    push_thread(L, wm, 0);
    push_thread(L, wn, 0);
    push_thread(L, g, 0);
    push_thread(L, q, 0);
    push_local(L, rm);
    push_local(L, rn);
    push_local(L, h);
    push_local(L, e);
  }
  finish(L);
  return L;
}

bool ir_shapes_reshapable(int ra, const int64_t *a, int rb, const int64_t *b) {
  int64_t cut[2 * IR_MAX_RANK + 1];
  int n = 0;
  int64_t pa = 1, pb = 1;
  for (int d = ra - 1; d >= 0; d--) cut[n++] = pa *= a[d];
  for (int d = rb - 1; d >= 0; d--) cut[n++] = pb *= b[d];
  if (pa != pb || pa <= 0) return false;
  for (int i = 1; i < n; i++) /* sorted */
    for (int j = i; j > 0 && cut[j - 1] > cut[j]; j--) {
      int64_t t = cut[j];
      cut[j] = cut[j - 1];
      cut[j - 1] = t;
    }
  for (int i = 1; i < n; i++)
    if (cut[i] % cut[i - 1] != 0) return false;
  return true;
}

/* The modes of L, outer to inner over all dimensions, are the digits of
 * the row-major linear index; so are the dimensions of `shape`. Each mode
 * covers the linear strides [lo, lo * size), lo the product of the sizes
 * inner to it; the reshape cuts it where a new dimension starts inside
 * (the cut must divide it: lo * part), into modes outer to inner that take
 * its place among the thread or slot digits, so that a thread keeps its
 * elements in the same slots. */
IrRegLayout *ir_reglayout_reshape(Arena *ar, const IrRegLayout *L, int rank, const int64_t *shape) {
  int64_t numel = 1, have[IR_MAX_RANK] = {0};
  for (int d = 0; d < rank; d++) numel *= shape[d];
  for (int d = 0; d < L->rank; d++) have[d] = 1;
  for (int m = 0; m < L->nmodes; m++) have[L->mode_dim[m]] *= L->mode_size[m];
  int64_t old = 1;
  for (int d = 0; d < L->rank; d++) {
    if (have[d] != L->shape[d]) return NULL; /* modes that do not cover it */
    old *= L->shape[d];
  }
  if (old != numel || numel <= 0) return NULL;
  /* the new dimensions' linear strides: dim d covers [inner[d], inner[d] * shape[d]) */
  int64_t inner[IR_MAX_RANK], lo[IR_MAX_MODES];
  for (int d = rank - 1, p = 1; d >= 0; d--) {
    inner[d] = p;
    p *= shape[d];
  }
  for (int m = L->nmodes - 1, p = 1; m >= 0; m--) {
    lo[m] = p;
    p *= L->mode_size[m];
  }
  int nm = 0, first[IR_MAX_MODES], count[IR_MAX_MODES], mode_dim[IR_MAX_MODES];
  int64_t mode_size[IR_MAX_MODES];
  for (int m = 0; m < L->nmodes; m++) {
    int64_t hi = lo[m] * L->mode_size[m]; /* cut [lo, hi) outer to inner */
    first[m] = nm;
    for (int d = 0; d < rank; d++) {
      int64_t a = inner[d] > lo[m] ? inner[d] : lo[m];
      int64_t b = inner[d] * shape[d] < hi ? inner[d] * shape[d] : hi;
      if (b <= a) continue; /* d and the mode do not overlap */
      if (b % a != 0 || hi % b != 0 || a % lo[m] != 0 || nm == IR_MAX_MODES) return NULL;
      mode_dim[nm] = d;
      mode_size[nm++] = b / a;
    }
    count[m] = nm - first[m];
  }
  int nthread = 0, thread_mode[IR_MAX_MODES], nlocal = 0, local_mode[IR_MAX_MODES];
  int64_t thread_size[IR_MAX_MODES];
  for (int i = 0; i < L->nthread; i++) {
    int m = L->thread_mode[i];
    if (m < 0 || count[m] == 1) {
      if (nthread == IR_MAX_MODES) return NULL;
      thread_mode[nthread] = m < 0 ? -1 : first[m];
      thread_size[nthread++] = L->thread_size[i];
      continue;
    }
    if (L->thread_size[i] != L->mode_size[m] || nthread + count[m] > IR_MAX_MODES) return NULL;
    for (int k = 0; k < count[m]; k++) {
      thread_mode[nthread] = first[m] + k;
      thread_size[nthread++] = mode_size[first[m] + k];
    }
  }
  for (int i = 0; i < L->nlocal; i++) {
    int m = L->local_mode[i];
    if (nlocal + count[m] > IR_MAX_MODES) return NULL;
    for (int k = 0; k < count[m]; k++) local_mode[nlocal++] = first[m] + k;
  }
  return ir_reglayout_make(ar, rank, shape, nm, mode_dim, mode_size, nthread, thread_mode,
                           thread_size, nlocal, local_mode);
}

IrRegLayout *ir_reglayout_transpose(Arena *ar, const IrRegLayout *L) {
  IrRegLayout *T = arena_alloc(ar, sizeof *T);
  *T = *L;
  T->shape[0] = L->shape[1];
  T->shape[1] = L->shape[0];
  /* modes stay listed dimension by dimension: old dimension 1's first */
  int newidx[IR_MAX_MODES], n = 0;
  for (int pass = 1; pass >= 0; pass--)
    for (int m = 0; m < L->nmodes; m++)
      if (L->mode_dim[m] == pass) {
        newidx[m] = n;
        T->mode_dim[n] = 1 - pass;
        T->mode_size[n++] = L->mode_size[m];
      }
  for (int i = 0; i < L->nthread; i++)
    if (L->thread_mode[i] >= 0) T->thread_mode[i] = newidx[L->thread_mode[i]];
  for (int i = 0; i < L->nlocal; i++) T->local_mode[i] = newidx[L->local_mode[i]];
  T->mma_transposed = !L->mma_transposed;
  return T;
}
