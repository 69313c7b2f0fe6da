/* emit_scan.c: prefix scans of spread register tensors (Tilus's scan,
 * cumsum, cumprod: an S_REDUCE with scan set).
 *
 * The coordinate along the scanned dimension is a mixed-radix number of
 * digits, each a digit of the slot index or of the thread index
 * (IrRegLayout). ir_scan_plan orders them innermost first. Every element
 * carries two values: R, the combination of the elements before it in the
 * part of the dimension the levels so far covered, and T, the total of that
 * part (the same in every element of it). A level with digit t of size s
 * sets R = (T of digits 0..t-1 combined) op R and T = (T of all s digits
 * combined). After the last level R is the exclusive prefix; R op x the
 * inclusive one.
 *
 * A slot digit is a loop over the thread's own registers; a lane digit a
 * Hillis-Steele scan with shuffles; any other thread digit goes through
 * the reduction scratch between two barriers: each element's T at its
 * place (the digits inside the level zeroed), then each thread reads the s
 * values of its line. 16-bit floats are scanned in float32.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "backend_ptx/emit_int.h"

/* The op's identity in the work type (the start of an exclusive scan).
 * The float sum's is -0.0, so that -0.0 + x is x for x = -0.0 too. */
static Val identity(Emitter *e, DType t, IrOp op) {
  Val v;
  v.type = t;
  bool f64 = t == DT_FLOAT64, wide = dtype_bytes(t) == 8, sgn = dtype_is_signed(t);
  if (dtype_is_float(t)) {
    static const char *const f32[] = {"0f80000000", "0f3F800000", "0fFF800000", "0f7F800000"};
    static const char *const d64[] = {"0d8000000000000000", "0d3FF0000000000000",
                                      "0dFFF0000000000000", "0d7FF0000000000000"};
    int k = op == OP_ADD ? 0 : op == OP_MUL ? 1 : op == OP_MAX ? 2 : 3;
    snprintf(v.s, sizeof v.s, "%s", f64 ? d64[k] : f32[k]);
    return val_to_reg(e, v);
  }
  int64_t x = 0; /* add, or, xor */
  if (op == OP_MUL) x = 1;
  if (op == OP_AND) x = -1;
  if (op == OP_MAX && sgn) x = wide ? INT64_MIN : INT32_MIN;
  if (op == OP_MIN) x = sgn ? (wide ? INT64_MAX : INT32_MAX) : -1;
  return val_to_reg(e, val_imm(t, x));
}

/* a op b; a absent ("") stands for the identity. */
static Val join(Emitter *e, IrOp op, Val a, Val b) {
  if (!a.s[0]) return b;
  return val_to_reg(e, emit_binop(e, op, a, b, b.type));
}

static Val pick(Emitter *e, Val p, Val a, Val b) {
  Val r = new_reg(e, a.type);
  emit(e, "selp%s %s, %s, %s, %s;", ptx_btype(a.type), r.s, a.s, b.s, p.s);
  return r;
}

/* v from lane `lane` (a u32 register, taken mod 32) of the group's warp. */
static Val shfl_from(Emitter *e, Val v, Val lane) {
  unsigned members = 0xffffffffu;
  if (e->group.size < 32)
    members = (unsigned)(((uint64_t)1 << e->group.size) - 1) << (e->group.begin % 32);
  Val r = new_reg(e, v.type);
  if (dtype_bytes(v.type) == 8) {
    Val lo = new_reg(e, DT_UINT32), hi = new_reg(e, DT_UINT32);
    emit(e, "mov.b64 {%s, %s}, %s;", lo.s, hi.s, v.s);
    emit(e, "shfl.sync.idx.b32 %s, %s, %s, 31, 0x%08x;", lo.s, lo.s, lane.s, members);
    emit(e, "shfl.sync.idx.b32 %s, %s, %s, 31, 0x%08x;", hi.s, hi.s, lane.s, members);
    emit(e, "mov.b64 %s, {%s, %s};", r.s, lo.s, hi.s);
  } else {
    emit(e, "shfl.sync.idx.b32 %s, %s, %s, 31, 0x%08x;", r.s, v.s, lane.s, members);
  }
  return r;
}

/* lane + k * stride, mod 32 as shfl reads it. */
static Val lane_plus(Emitter *e, Val lane, Val k, int64_t stride) {
  Val r = new_reg(e, DT_UINT32);
  emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %s;", r.s, k.s, stride, lane.s);
  return r;
}

static Val digit_at_least(Emitter *e, Val t, int64_t n) {
  Val p = new_reg(e, DT_BOOL);
  emit(e, "setp.ge.u32 %s, %s, %" PRId64 ";", p.s, t.s, n);
  return p;
}

/* The state of a scan: per slot R (absent: the identity) and T. */
typedef struct Scan {
  const IrReduceStmt *r;
  const IrRegLayout *L;
  DType work;
  Val *R, *T;
  Val tid;
  Val ident; /* the op's identity, made once when first needed */
} Scan;

static Val scan_identity(Emitter *e, Scan *sc) {
  if (!sc->ident.s[0]) sc->ident = identity(e, sc->work, sc->r->op);
  return sc->ident;
}

/* A digit of the thread's slots: a loop over each line of slots. */
static void level_local(Emitter *e, Scan *sc, const IrScanLevel *lv) {
  for (int64_t b = 0; b < sc->L->nslots; b++) {
    if (b / lv->stride % lv->size) continue; /* the first slot of a line */
    Val acc = {.s = ""};
    for (int64_t t = 0; t < lv->size; t++) {
      int64_t j = b + t * lv->stride;
      Val before = acc;
      acc = join(e, sc->r->op, acc, sc->T[j]);
      if (before.s[0]) sc->R[j] = join(e, sc->r->op, sc->R[j], before);
    }
    for (int64_t t = 0; t < lv->size; t++) sc->T[b + t * lv->stride] = acc;
  }
}

/* A digit of the lanes: an inclusive scan of T over it by shuffles, then
 * each lane takes the value of the lane one digit below (the exclusive
 * part) and of the last digit (the total). */
static void level_lanes(Emitter *e, Scan *sc, const IrScanLevel *lv) {
  IrOp op = sc->r->op;
  Val lane = new_reg(e, DT_UINT32), back = new_reg(e, DT_UINT32);
  emit(e, "mov.u32 %s, %%laneid;", lane.s);
  Val t = spread_tid_digit(e, sc->tid, lv->stride, lv->size);
  Val first = digit_at_least(e, t, 1);
  emit(e, "sub.u32 %s, %s, %" PRId64 ";", back.s, lane.s, lv->stride);
  Val left = new_reg(e, DT_UINT32); /* size - 1 - t digits up */
  emit(e, "sub.u32 %s, %" PRId64 ", %s;", left.s, lv->size - 1, t.s);
  Val last = lane_plus(e, lane, left, lv->stride);
  /* step k of the scan reads the lane 2^k digits down, where there is one
   * (the same for every slot) */
  Val from[6], has[6];
  int steps = 0;
  for (int64_t d = 1; d < lv->size; d *= 2, steps++) {
    from[steps] = new_reg(e, DT_UINT32);
    emit(e, "sub.u32 %s, %s, %" PRId64 ";", from[steps].s, lane.s, d * lv->stride);
    has[steps] = digit_at_least(e, t, d);
  }
  for (int64_t i = 0; i < sc->L->nslots; i++) {
    Val inc = sc->T[i];
    for (int k = 0; k < steps; k++)
      inc = pick(e, has[k], join(e, op, inc, shfl_from(e, inc, from[k])), inc);
    Val below = shfl_from(e, inc, back);
    Val R = sc->R[i];
    sc->R[i] = R.s[0] ? pick(e, first, join(e, op, R, below), R)
                      : pick(e, first, below, scan_identity(e, sc));
    sc->T[i] = shfl_from(e, inc, last);
  }
}

/* Any other thread digit: T through the scratch. Element (tid, slot) sits
 * at its row-major place with the digits of this level and the levels
 * inside it zeroed along the dimension, plus the digit times its step. */
static void level_shared(Emitter *e, Scan *sc, const IrScanLevel *lvs, int li) {
  const IrScanLevel *lv = &lvs[li];
  const IrReduceStmt *r = sc->r;
  const IrRegLayout *L = sc->L;
  int dim = r->dim;
  int64_t wb = dtype_bytes(sc->work) > 4 ? 8 : 4, rs[IR_MAX_RANK];
  spread_row_major(r->src->shape, r->src->rank, rs);
  /* the thread part: coordinates less the thread digits of levels <= li */
  Val tc[IR_MAX_RANK];
  spread_thread_coords(e, L, sc->tid, tc);
  Val t = {.s = ""};
  for (int i = 0; i <= li; i++) {
    if (lvs[i].kind == SCAN_LOCAL) continue;
    Val d = spread_tid_digit(e, sc->tid, lvs[i].stride, lvs[i].size);
    if (i == li) t = d;
    Val c = new_reg(e, DT_INT32);
    emit(e, "mul.lo.s32 %s, %s, %" PRId64 ";", c.s, d.s, lvs[i].coord);
    Val n = new_reg(e, DT_INT32);
    emit(e, "sub.s32 %s, %s, %s;", n.s, val_to_reg(e, tc[dim]).s, c.s);
    tc[dim] = n;
  }
  Val base = new_reg(e, DT_UINT32), mine = new_reg(e, DT_UINT32);
  emit(e, "mov.u32 %s, 0;", base.s);
  for (int j = 0; j < L->rank; j++)
    emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %s;", base.s, val_to_reg(e, tc[j]).s, rs[j], base.s);
  emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %%smem;", base.s, base.s, wb);
  emit(e, "add.u32 %s, %s, %" PRId64 ";", base.s, base.s, e->k->reduce_scratch_offset);
  emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %s;", mine.s, t.s, lv->coord * rs[dim] * wb, base.s);
  /* the slot part, less the slot digits of the levels inside */
  int64_t *off = xmalloc(sizeof(int64_t) * (size_t)L->nslots);
  for (int64_t i = 0; i < L->nslots; i++) {
    int64_t c[IR_MAX_RANK];
    ir_reglayout_coords(L, 0, i, c);
    for (int k = 0; k < li; k++)
      if (lvs[k].kind == SCAN_LOCAL) c[dim] -= i / lvs[k].stride % lvs[k].size * lvs[k].coord;
    off[i] = 0;
    for (int j = 0; j < L->rank; j++) off[i] += c[j] * rs[j] * wb;
  }
  const char *bt = ptx_btype(sc->work);
  for (int64_t i = 0; i < L->nslots; i++)
    emit(e, "st.shared%s [%s+%" PRId64 "], %s;", bt, mine.s, off[i], sc->T[i].s);
  if (!emit_barrier(e, r->barrier_id, "a scan across warps")) {
    free(off);
    return;
  }
  Val *under = xmalloc(sizeof(Val) * (size_t)lv->size); /* digit k below this thread's */
  for (int64_t k = 0; k < lv->size; k++) {
    under[k] = new_reg(e, DT_BOOL);
    emit(e, "setp.gt.u32 %s, %s, %" PRId64 ";", under[k].s, t.s, k);
  }
  for (int64_t i = 0; i < L->nslots; i++) {
    Val below = scan_identity(e, sc), total = {.s = ""};
    for (int64_t k = 0; k < lv->size; k++) {
      Val v = new_reg(e, sc->work);
      emit(e, "ld.shared%s %s, [%s+%" PRId64 "];", bt, v.s, base.s,
           off[i] + k * lv->coord * rs[dim] * wb);
      total = join(e, r->op, total, v);
      below = pick(e, under[k], join(e, r->op, below, v), below);
    }
    sc->R[i] = sc->R[i].s[0] ? join(e, r->op, sc->R[i], below) : below;
    sc->T[i] = total;
  }
  emit_barrier(e, r->barrier_id, "a scan across warps"); /* the scratch is free again */
  free(under);
  free(off);
}

void emit_scan(Emitter *e, const IrStmt *s) {
  const IrReduceStmt *r = &s->reduce;
  const IrTensor *d = r->dst, *x = r->src;
  if (!spread_owned(e, d) || !spread_owned(e, x)) return;
  if (!ir_reglayout_equal(d->reg, x->reg)) {
    unsupported(e, "a scan into a tensor of another layout");
    return;
  }
  Scan sc = {.r = r, .L = x->reg, .tid = emit_group_tid(e)};
  sc.work = x->dtype == DT_FLOAT16 || x->dtype == DT_BFLOAT16 ? DT_FLOAT32 : x->dtype;
  int64_t n = sc.L->nslots;
  sc.R = xmalloc(sizeof(Val) * (size_t)n);
  sc.T = xmalloc(sizeof(Val) * (size_t)n);
  Val *X = xmalloc(sizeof(Val) * (size_t)n);
  for (int64_t i = 0; i < n; i++) {
    X[i] = sc.T[i] = val_to_reg(e, val_convert(e, tensor_slot_reg(x, i), sc.work));
    sc.R[i].s[0] = 0;
  }
  IrScanLevel lv[IR_MAX_SCAN_LEVELS];
  int nlv = ir_scan_plan(sc.L, r->dim, lv);
  for (int i = 0; i < nlv; i++) {
    if (lv[i].kind == SCAN_LOCAL) level_local(e, &sc, &lv[i]);
    if (lv[i].kind == SCAN_LANE) level_lanes(e, &sc, &lv[i]);
    if (lv[i].kind == SCAN_SHARED) level_shared(e, &sc, lv, i);
  }
  for (int64_t i = 0; i < n; i++) {
    Val v = r->exclusive ? (sc.R[i].s[0] ? sc.R[i] : scan_identity(e, &sc))
                         : join(e, r->op, sc.R[i], X[i]);
    v = val_convert(e, v, d->dtype);
    emit(e, "mov%s %s, %s;", ptx_btype(d->dtype), tensor_slot_reg(d, i).s, v.s);
  }
  free(sc.R);
  free(sc.T);
  free(X);
}
