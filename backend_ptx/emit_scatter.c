/* emit_scatter.c: stores of a register tile into a whole destination, one
 * instruction per element: store_global_scatter and store_shared_scatter
 * (a store with scatter indices) and the self.atomic group (a store with
 * an IrAtomic, with or without indices; ir.h IrGlobalCopyStmt).
 *
 * Element k of the values goes to the destination at k's coordinates, the
 * one along the scatter dimension replaced by indices[k]: each slot is one
 * instruction at the thread's address for the other dimensions (once per
 * statement) plus the slot's constant part plus the index times its pitch.
 * An index outside the dimension (a negative one included, compared
 * unsigned) skips its element, and of replicated threads the first acts.
 * An atomic is `red` when nothing reads its old values (Tilus's dead-code
 * pass does the same), else `atom` into the old tensor's register.
 */
#include <inttypes.h>
#include <string.h>

#include "backend_ptx/emit_int.h"

static Val and_pred(Emitter *e, Val a, Val b) {
  if (!a.s[0]) return b;
  if (!b.s[0]) return a;
  Val p = new_reg(e, DT_BOOL);
  emit(e, "and.pred %s, %s, %s;", p.s, a.s, b.s);
  return p;
}

/* Whether some statement of b reads register tensor t. */
static bool reads(const IrBlock *b, const IrTensor *t) {
  for (int i = 0; i < b->len; i++) {
    const IrStmt *s = b->items[i];
    const IrTensor *ops[IR_STMT_MAX_TENSORS];
    int n = ir_stmt_tensors(s, ops);
    for (int j = 1; j < n; j++)
      if (ops[j] == t) return true;
    if (reads(&s->body, t) || reads(&s->orelse, t)) return true;
  }
  return false;
}

/* The PTX type of an atomic on dt. */
static const char *atomic_type(IrAtomicOp op, DType dt) {
  bool wide = dtype_bytes(dt) == 8;
  if (op == ATOM_EXCH || op == ATOM_CAS) return wide ? ".b64" : ".b32";
  if (dt == DT_FLOAT32 || dt == DT_FLOAT64) return ptx_type(dt);
  if (op == ATOM_ADD || op == ATOM_SUB) return wide ? ".u64" : dt == DT_INT32 ? ".s32" : ".u32";
  return ptx_type(dt); /* min, max: the signedness counts */
}

/* What one element does: a plain store, or the atomic. */
typedef struct Elem {
  const IrTensor *x;
  const IrAtomic *atomic;
  bool keep_old; /* atom (old values read, exch, cas, an acquire) rather than red */
  const char *space;
} Elem;

static void element_op(Emitter *e, const Elem *el, Val p, Val addr, int64_t off, int64_t slot) {
  Val v = tensor_slot_reg(el->x, slot);
  char at[96];
  snprintf(at, sizeof at, "[%s+%" PRId64 "]", addr.s, off);
  const char *guard = p.s[0] ? "@" : "", *pred = p.s;
  const IrAtomic *a = el->atomic;
  if (!a) {
    emit(e, "%s%s%sst.%s%s %s, %s;", guard, pred, p.s[0] ? " " : "", el->space,
         spread_mem_type(el->x->dtype), at, v.s);
    return;
  }
  static const char *const ops[] = {"add", "add", "min", "max", "exch", "cas"};
  if (a->op == ATOM_SUB) { /* PTX has no atom.sub */
    Val n = new_reg(e, v.type);
    emit(e, "neg%s %s, %s;",
         ptx_type(v.type == DT_UINT32   ? DT_INT32
                  : v.type == DT_UINT64 ? DT_INT64
                                        : v.type),
         n.s, v.s);
    v = n;
  }
  const char *type = atomic_type(a->op, el->x->dtype);
  if (!el->keep_old) {
    emit(e, "%s%s%sred.%s.%s.%s.%s%s %s, %s;", guard, pred, p.s[0] ? " " : "", a->sem, a->scope,
         el->space, ops[a->op], type, at, v.s);
    return;
  }
  Val old = tensor_slot_reg(a->old, slot);
  if (a->op == ATOM_CAS)
    emit(e, "%s%s%satom.%s.%s.%s.cas%s %s, %s, %s, %s;", guard, pred, p.s[0] ? " " : "", a->sem,
         a->scope, el->space, type, old.s, at, tensor_slot_reg(a->compare, slot).s, v.s);
  else
    emit(e, "%s%s%satom.%s.%s.%s.%s%s %s, %s, %s;", guard, pred, p.s[0] ? " " : "", a->sem,
         a->scope, el->space, ops[a->op], type, old.s, at, v.s);
}

/* Index i in the unsigned type of width w and whether it is below n. */
static Val index_in(Emitter *e, Val i, DType w, Val n, Val *inside) {
  Val u = val_to_reg(e, val_convert(e, i, w));
  *inside = new_reg(e, DT_BOOL);
  emit(e, "setp.lt%s %s, %s, %s;", ptx_type(w), inside->s, u.s, val_to_reg(e, n).s);
  return u;
}

static void scatter_global(Emitter *e, const IrStmt *s, const Elem *el, Val writer, Val *tc) {
  const IrGlobalCopyStmt *c = &s->gmem;
  const IrTensor *g = c->global, *x = c->reg, *idx = c->scatter;
  const IrRegLayout *L = x->reg;
  int rank = g->rank, dim = idx ? c->scatter_dim : -1;
  int64_t eb = dtype_bytes(x->dtype);
  /* row-major pitches (elements) over the run-time shape */
  Val pitch[IR_MAX_RANK];
  pitch[rank - 1] = val_imm(DT_UINT64, 1);
  for (int d = rank - 2; d >= 0; d--)
    pitch[d] = val_to_reg(e, emit_binop(e, OP_MUL, pitch[d + 1],
                                        val_convert(e, emit_expr(e, g->gshape[d + 1]), DT_UINT64),
                                        DT_UINT64));
  Val base = val_to_reg(e, val_convert(e, emit_expr(e, g->gptr), DT_UINT64));
  Val elem = new_reg(e, DT_UINT64); /* the thread's element, off the scatter dimension */
  emit(e, "mov.u64 %s, 0;", elem.s);
  for (int d = 0; d < rank; d++) {
    if (d == dim) continue;
    Val t = val_to_reg(e, val_convert(e, tc[d], DT_UINT64));
    emit(e, "mad.lo.u64 %s, %s, %s, %s;", elem.s, t.s, val_to_reg(e, pitch[d]).s, elem.s);
  }
  Val extent = dim >= 0 ? val_convert(e, emit_expr(e, g->gshape[dim]), DT_UINT64) : elem;
  for (int64_t i = 0; i < L->nslots; i++) {
    int64_t lc[IR_MAX_RANK];
    ir_reglayout_coords(L, 0, i, lc);
    Val inside = {.s = ""}, at = new_reg(e, DT_UINT64), addr = new_reg(e, DT_UINT64);
    emit(e, "mov.u64 %s, %s;", at.s, elem.s);
    if (dim >= 0) {
      Val v = index_in(e, tensor_slot_reg(idx, i), DT_UINT64, extent, &inside);
      emit(e, "mad.lo.u64 %s, %s, %s, %s;", at.s, v.s, val_to_reg(e, pitch[dim]).s, at.s);
    }
    for (int d = 0; d < rank; d++)
      if (d != dim && lc[d])
        emit(e, "mad.lo.u64 %s, %s, %" PRId64 ", %s;", at.s, val_to_reg(e, pitch[d]).s, lc[d],
             at.s);
    emit(e, "mad.lo.u64 %s, %s, %" PRId64 ", %s;", addr.s, at.s, eb, base.s);
    element_op(e, el, and_pred(e, writer, inside), addr, 0, i);
  }
}

static void scatter_shared(Emitter *e, const IrStmt *s, const Elem *el, Val writer, Val *tc) {
  const IrRef *ref = &s->smem.shared;
  const IrTensor *sh = ref->t, *x = s->smem.reg, *idx = s->smem.scatter;
  const IrRegLayout *L = x->reg;
  int rank = ir_ref_rank(ref), dim = idx ? s->smem.scatter_dim : -1;
  int64_t eb = dtype_bytes(x->dtype);
  int64_t stride[IR_MAX_RANK];
  spread_view_strides(ref, stride);
  IrExpr *voff = ir_ref_byte_offset(e->m->ar, ref);
  Val base = new_reg(e, DT_UINT32);
  emit(e, "mov.b32 %s, %s;", base.s,
       val_to_reg(e, val_convert(e, emit_expr(e, voff), DT_UINT32)).s);
  for (int d = 0; d < rank; d++)
    if (d != dim)
      emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %s;", base.s, val_to_reg(e, tc[d]).s, stride[d] * eb,
           base.s);
  Swizzle sw = tensor_swizzle(sh);
  Val extent = val_imm(DT_UINT64, dim >= 0 ? ir_ref_dim(ref, dim) : 0);
  for (int64_t i = 0; i < L->nslots; i++) {
    int64_t lc[IR_MAX_RANK], off = 0;
    ir_reglayout_coords(L, 0, i, lc);
    for (int d = 0; d < rank; d++)
      if (d != dim) off += lc[d] * stride[d] * eb;
    Val inside = {.s = ""}, o = new_reg(e, DT_UINT32), addr = new_reg(e, DT_UINT32);
    emit(e, "add.u32 %s, %s, %" PRId64 ";", o.s, base.s, off);
    if (dim >= 0) {
      Val v = index_in(e, tensor_slot_reg(idx, i), DT_UINT64, extent, &inside);
      Val v32 = val_to_reg(e, val_convert(e, v, DT_UINT32));
      emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %s;", o.s, v32.s, stride[dim] * eb, o.s);
    }
    Val phys = smem_swizzle(e, o, sw);
    emit(e, "add.u32 %s, %s, %%smem;", addr.s, phys.s);
    element_op(e, el, and_pred(e, writer, inside), addr, sh->smem_offset, i);
  }
}

void emit_scatter(Emitter *e, const IrStmt *s) {
  bool shared = s->kind == S_STORE_SHARED;
  const IrTensor *x = shared ? s->smem.reg : s->gmem.reg;
  const IrTensor *idx = shared ? s->smem.scatter : s->gmem.scatter;
  const IrAtomic *a = shared ? s->smem.atomic : s->gmem.atomic;
  if (!spread_owned(e, x) || (idx && !spread_owned(e, idx))) return;
  bool same = (!idx || ir_reglayout_equal(x->reg, idx->reg)) &&
              (!a || !a->compare || ir_reglayout_equal(x->reg, a->compare->reg)) &&
              (!a || !a->old || ir_reglayout_equal(x->reg, a->old->reg));
  if (!same || x->dtype == DT_BOOL) {
    unsupported(e, "a scatter or atomic of bool values or with operands in another layout");
    return;
  }
  Elem el = {.x = x, .atomic = a, .space = shared ? "shared" : "global"};
  if (a)
    el.keep_old = a->op == ATOM_EXCH || a->op == ATOM_CAS || strcmp(a->sem, "acquire") == 0 ||
                  strcmp(a->sem, "acq_rel") == 0 || reads(&e->k->body, a->old);
  Val tid = emit_group_tid(e), tc[IR_MAX_RANK];
  spread_thread_coords(e, x->reg, tid, tc);
  Val writer = spread_first_replica(e, x->reg, tid);
  if (el.keep_old) {
    if (writer.s[0]) { /* a replica would not know its value */
      unsupported(e, "the old values of an atomic on a tile whose threads replicate elements");
      return;
    }
    const char *zero = x->dtype == DT_FLOAT64   ? "0d0000000000000000"
                       : x->dtype == DT_FLOAT32 ? "0f00000000"
                                                : "0";
    for (int64_t i = 0; i < x->reg->nslots; i++) /* where no element is done: 0 */
      emit(e, "mov%s %s, %s;", dtype_is_float(x->dtype) ? ptx_type(x->dtype) : ptx_btype(x->dtype),
           tensor_slot_reg(a->old, i).s, zero);
  }
  if (shared)
    scatter_shared(e, s, &el, writer, tc);
  else
    scatter_global(e, s, &el, writer, tc);
}
