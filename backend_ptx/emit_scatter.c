/* emit_scatter.c: store_global_scatter and store_shared_scatter (a store
 * with its scatter indices set; ir.h IrGlobalCopyStmt).
 *
 * Element k of the values goes to the destination at k's coordinates with
 * the one along the scatter dimension replaced by indices[k]: each slot is
 * one plain store at the thread's address for the other dimensions (once
 * per statement) plus the slot's constant part plus the index times its
 * pitch. An index outside the dimension (a negative one included, compared
 * unsigned) skips its store, and of replicated threads the first stores.
 */
#include <inttypes.h>

#include "backend_ptx/emit_int.h"

static Val and_pred(Emitter *e, Val a, Val b) {
  if (!a.s[0]) return b;
  Val p = new_reg(e, DT_BOOL);
  emit(e, "and.pred %s, %s, %s;", p.s, a.s, b.s);
  return p;
}

static void store_under(Emitter *e, Val p, const char *space, const IrTensor *x, Val addr,
                        int64_t off, int64_t slot) {
  emit(e, "@%s st.%s%s [%s+%" PRId64 "], %s;", p.s, space, spread_mem_type(x->dtype), addr.s, off,
       tensor_slot_reg(x, slot).s);
}

/* Index i in the unsigned type of width w and whether it is below n. */
static Val index_in(Emitter *e, Val i, DType w, Val n, Val *inside) {
  Val u = val_to_reg(e, val_convert(e, i, w));
  *inside = new_reg(e, DT_BOOL);
  emit(e, "setp.lt%s %s, %s, %s;", ptx_type(w), inside->s, u.s, val_to_reg(e, n).s);
  return u;
}

static void scatter_global(Emitter *e, const IrStmt *s) {
  const IrGlobalCopyStmt *c = &s->gmem;
  const IrTensor *g = c->global, *x = c->reg, *idx = c->scatter;
  const IrRegLayout *L = x->reg;
  int rank = g->rank, dim = c->scatter_dim;
  int64_t eb = dtype_bytes(x->dtype);
  /* row-major pitches (elements) over the run-time shape */
  Val pitch[IR_MAX_RANK];
  pitch[rank - 1] = val_imm(DT_UINT64, 1);
  for (int d = rank - 2; d >= 0; d--)
    pitch[d] = val_to_reg(e, emit_binop(e, OP_MUL, pitch[d + 1],
                                        val_convert(e, emit_expr(e, g->gshape[d + 1]), DT_UINT64),
                                        DT_UINT64));
  Val extent = val_convert(e, emit_expr(e, g->gshape[dim]), DT_UINT64);
  Val tid = emit_group_tid(e), tc[IR_MAX_RANK];
  spread_thread_coords(e, L, tid, tc);
  Val writer = spread_first_replica(e, L, tid);
  Val base = val_to_reg(e, val_convert(e, emit_expr(e, g->gptr), DT_UINT64));
  Val elem = new_reg(e, DT_UINT64); /* the thread's element, off the scatter dimension */
  emit(e, "mov.u64 %s, 0;", elem.s);
  for (int d = 0; d < rank; d++) {
    if (d == dim) continue;
    Val t = val_to_reg(e, val_convert(e, tc[d], DT_UINT64));
    emit(e, "mad.lo.u64 %s, %s, %s, %s;", elem.s, t.s, val_to_reg(e, pitch[d]).s, elem.s);
  }
  for (int64_t i = 0; i < L->nslots; i++) {
    int64_t lc[IR_MAX_RANK];
    ir_reglayout_coords(L, 0, i, lc);
    Val inside, at = new_reg(e, DT_UINT64), addr = new_reg(e, DT_UINT64);
    Val v = index_in(e, tensor_slot_reg(idx, i), DT_UINT64, extent, &inside);
    emit(e, "mad.lo.u64 %s, %s, %s, %s;", at.s, v.s, val_to_reg(e, pitch[dim]).s, elem.s);
    for (int d = 0; d < rank; d++)
      if (d != dim && lc[d])
        emit(e, "mad.lo.u64 %s, %s, %" PRId64 ", %s;", at.s, val_to_reg(e, pitch[d]).s, lc[d],
             at.s);
    emit(e, "mad.lo.u64 %s, %s, %" PRId64 ", %s;", addr.s, at.s, eb, base.s);
    store_under(e, and_pred(e, writer, inside), "global", x, addr, 0, i);
  }
}

static void scatter_shared(Emitter *e, const IrStmt *s) {
  const IrRef *ref = &s->smem.shared;
  const IrTensor *sh = ref->t, *x = s->smem.reg, *idx = s->smem.scatter;
  const IrRegLayout *L = x->reg;
  int rank = ir_ref_rank(ref), dim = s->smem.scatter_dim;
  int64_t eb = dtype_bytes(x->dtype);
  /* element strides of the view's dimensions in the tile under it (a
   * transposed view's tile has its last two dimensions swapped) */
  int64_t tile[IR_MAX_RANK], tstride[IR_MAX_RANK], stride[IR_MAX_RANK];
  bool swap = ref->transposed && rank >= 2;
  for (int d = 0; d < rank; d++) tile[d] = ir_ref_dim(ref, d);
  if (swap) tile[rank - 1] = ir_ref_dim(ref, rank - 2), tile[rank - 2] = ir_ref_dim(ref, rank - 1);
  spread_row_major(tile, rank, tstride);
  for (int d = 0; d < rank; d++) stride[d] = tstride[d];
  if (swap) stride[rank - 1] = tstride[rank - 2], stride[rank - 2] = tstride[rank - 1];
  Val tid = emit_group_tid(e), tc[IR_MAX_RANK];
  spread_thread_coords(e, L, tid, tc);
  Val writer = spread_first_replica(e, L, tid);
  IrExpr *voff = ir_ref_byte_offset(e->m->ar, ref);
  Val base = new_reg(e, DT_UINT32);
  emit(e, "mov.b32 %s, %s;", base.s,
       val_to_reg(e, val_convert(e, emit_expr(e, voff), DT_UINT32)).s);
  for (int d = 0; d < rank; d++)
    if (d != dim)
      emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %s;", base.s, val_to_reg(e, tc[d]).s, stride[d] * eb,
           base.s);
  Swizzle sw = tensor_swizzle(sh);
  Val extent = val_imm(DT_UINT64, ir_ref_dim(ref, dim));
  for (int64_t i = 0; i < L->nslots; i++) {
    int64_t lc[IR_MAX_RANK], off = 0;
    ir_reglayout_coords(L, 0, i, lc);
    for (int d = 0; d < rank; d++)
      if (d != dim) off += lc[d] * stride[d] * eb;
    Val inside, o = new_reg(e, DT_UINT32), addr = new_reg(e, DT_UINT32);
    Val v = index_in(e, tensor_slot_reg(idx, i), DT_UINT64, extent, &inside);
    Val v32 = val_to_reg(e, val_convert(e, v, DT_UINT32));
    emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %s;", o.s, v32.s, stride[dim] * eb, base.s);
    emit(e, "add.u32 %s, %s, %" PRId64 ";", o.s, o.s, off);
    Val phys = smem_swizzle(e, o, sw);
    emit(e, "add.u32 %s, %s, %%smem;", addr.s, phys.s);
    store_under(e, and_pred(e, writer, inside), "shared", x, addr, sh->smem_offset, i);
  }
}

void emit_scatter(Emitter *e, const IrStmt *s) {
  bool shared = s->kind == S_STORE_SHARED;
  const IrTensor *x = shared ? s->smem.reg : s->gmem.reg;
  const IrTensor *idx = shared ? s->smem.scatter : s->gmem.scatter;
  if (!spread_owned(e, x) || !spread_owned(e, idx)) return;
  if (!ir_reglayout_equal(x->reg, idx->reg) || x->dtype == DT_BOOL) {
    unsupported(e, "a scatter of bool values or with indices in another layout");
    return;
  }
  if (shared)
    scatter_shared(e, s);
  else
    scatter_global(e, s);
}
