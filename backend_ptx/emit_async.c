/* async.c: mbarriers and TMA (cp.async.bulk.tensor).
 *
 * A barrier is 8 bytes of shared memory; a reference bars[i] is at the
 * barrier tensor's base + 8 * i. TMA copies are issued by one elected
 * thread of the group (Tilus elects one lane of the issuing warp), unless
 * already inside single_thread(). The tensor-map operand is the generic
 * address of the `.param .align 64 .b8 NAME_tmapI[128]` kernel parameter
 * (cvta.param, once in the prologue into %tmapI), as the ISA allows for
 * cp.async.bulk.tensor.
 */
#include <inttypes.h>

#include "backend_ptx/emit_int.h"

/* Kernel start: thread 0 initialises every barrier with its arrival count
 * and makes the initialisation visible to the async proxy (TMA) before the
 * block barrier that precedes any other statement. In a cluster kernel that
 * barrier is the cluster's (barrier.cluster, release/acquire): a peer CTA
 * may arrive on these barriers, or multicast into this CTA, only once they
 * are initialised. */
void emit_mbar_init(Emitter *e) {
  const IrKernel *k = e->k;
  bool any = false;
  for (int i = 0; i < k->ntensors; i++) any = any || k->tensors[i]->is_mbarrier;
  if (!any) return;
  int skip = new_label(e);
  Val p = new_reg(e, DT_BOOL);
  emit(e, "setp.ne.u32 %s, %%tidx, 0;", p.s);
  emit(e, "@%s bra $L%d;", p.s, skip);
  for (int i = 0; i < k->ntensors; i++) {
    const IrTensor *t = k->tensors[i];
    if (!t->is_mbarrier) continue;
    for (int64_t j = 0; j < t->shape[0]; j++)
      emit(e, "mbarrier.init.shared::cta.b64 [%%smem+%" PRId64 "], %" PRId64 ";",
           t->smem_offset + 8 * j, t->mbar_counts ? t->mbar_counts[j] : 1);
  }
  emit(e, "fence.mbarrier_init.release.cluster;");
  emit(e, "fence.proxy.async.shared::cta;");
  emit_label(e, skip);
  if (ir_cluster_size(k) > 1) {
    emit(e, "barrier.cluster.arrive.release.aligned;");
    emit(e, "barrier.cluster.wait.acquire.aligned;");
  } else {
    emit(e, "bar.sync 0;");
  }
}

/* The .sem and .scope qualifiers of mbarrier.try_wait; NULL for a value
 * outside the enums. */
static const char *ptx_sem(MbarSem sem) {
  switch (sem) {
  case MBAR_SEM_RELAXED:
    return "relaxed";
  case MBAR_SEM_ACQUIRE:
    return "acquire";
  case MBAR_SEM_RELEASE:
    return "release";
  }
  return NULL;
}

static const char *ptx_scope(MbarScope scope) {
  switch (scope) {
  case MBAR_SCOPE_CTA:
    return "cta";
  case MBAR_SCOPE_CLUSTER:
    return "cluster";
  }
  return NULL;
}

/* try_wait.parity in a loop; sem and scope from the statement. */
static void emit_mbar_wait(Emitter *e, const IrStmt *s) {
  const char *sem = ptx_sem(s->mbar.sem), *scope = ptx_scope(s->mbar.scope);
  if (!sem || !scope) {
    unsupported(e, "mbarrier.wait with sem %d scope %d", (int)s->mbar.sem, (int)s->mbar.scope);
    return;
  }
  Val addr = emit_smem_addr(e, &s->mbar.barrier);
  Val phase = val_convert(e, emit_expr(e, s->mbar.parity), DT_UINT32);
  int top = new_label(e);
  Val done = new_reg(e, DT_BOOL);
  emit_label(e, top);
  emit(e, "mbarrier.try_wait.parity.%s.%s.shared::cta.b64 %s, [%s], %s;", sem, scope, done.s,
       addr.s, phase.s);
  emit(e, "@!%s bra $L%d;", done.s, top);
}

/* The address of `bar` in the shared memory of CTA rank `rank` of the
 * cluster (a shared::cluster address). */
static Val mapa(Emitter *e, Val bar, Val rank) {
  Val r = new_reg(e, DT_UINT32);
  emit_effect(e, "mapa.shared::cluster.u32 %s, %s, %s;", r.s, bar.s, rank.s);
  return r;
}

/* mbarrier.arrive[.expect_tx].SEM.SCOPE.shared::cluster on a mapped
 * address; a constant 0 bytes arrives without expect_tx. */
static void arrive_cluster(Emitter *e, const IrClusterMbarStmt *c, const char *sem,
                           const char *scope, Val addr, Val bytes) {
  int64_t tx;
  if (ir_is_const(c->tx_bytes, &tx) && tx == 0)
    emit_effect(e, "mbarrier.arrive.%s.%s.shared::cluster.b64 _, [%s];", sem, scope, addr.s);
  else
    emit_effect(e, "mbarrier.arrive.expect_tx.%s.%s.shared::cluster.b64 _, [%s], %s;", sem, scope,
                addr.s, bytes.s);
}

/* arrive_and_expect_tx_remote: every thread here arrives on the barrier of
 * CTA rank `ctas`. arrive_and_expect_tx_multicast: thread i of the group
 * (i < 16) arrives on the barrier of CTA rank i when bit i of the mask is
 * set (Tilus's lowering), the others do nothing. */
static void emit_cluster_arrive(Emitter *e, const IrStmt *s) {
  const IrClusterMbarStmt *c = &s->cmbar;
  const char *sem = ptx_sem(c->sem), *scope = ptx_scope(c->scope);
  if (!sem || !scope || c->sem == MBAR_SEM_ACQUIRE) {
    unsupported(e, "an arrive with sem %d scope %d", (int)c->sem, (int)c->scope);
    return;
  }
  Val addr = emit_smem_addr(e, &c->barrier);
  Val bytes = val_convert(e, emit_expr(e, c->tx_bytes), DT_UINT32);
  Val ctas = val_to_reg(e, val_convert(e, emit_expr(e, c->ctas), DT_UINT32));
  if (s->kind == S_MBAR_REMOTE) {
    arrive_cluster(e, c, sem, scope, mapa(e, addr, ctas), bytes);
    return;
  }
  if (e->guard || e->group.single) {
    unsupported(e, "arrive_and_expect_tx_multicast inside single_thread()");
    return;
  }
  Val tid = val_convert(e, emit_group_tid(e), DT_UINT32);
  Val bit = new_reg(e, DT_UINT32), p = new_reg(e, DT_BOOL), q = new_reg(e, DT_BOOL);
  emit(e, "shr.u32 %s, %s, %s;", bit.s, ctas.s, tid.s);
  emit(e, "and.b32 %s, %s, 1;", bit.s, bit.s);
  emit(e, "setp.ne.u32 %s, %s, 0;", p.s, bit.s);
  emit(e, "setp.lt.u32 %s, %s, 16;", q.s, tid.s);
  emit(e, "and.pred %s, %s, %s;", p.s, p.s, q.s);
  char guard[sizeof p.s];
  snprintf(guard, sizeof guard, "%s", p.s);
  e->guard = guard;
  arrive_cluster(e, c, sem, scope, mapa(e, addr, tid), bytes);
  e->guard = NULL;
}

void emit_mbar_stmt(Emitter *e, const IrStmt *s) {
  if (s->kind == S_MBAR_REMOTE || s->kind == S_MBAR_MULTICAST) {
    if (!s->cmbar.barrier.t || !s->cmbar.barrier.t->is_mbarrier)
      unsupported(e, "an mbarrier operation on a tensor that is not an mbarrier array");
    else
      emit_cluster_arrive(e, s);
    return;
  }
  if (!s->mbar.barrier.t || !s->mbar.barrier.t->is_mbarrier) {
    unsupported(e, "an mbarrier operation on a tensor that is not an mbarrier array");
    return;
  }
  if (s->kind == S_MBAR_WAIT) {
    emit_mbar_wait(e, s);
    return;
  }
  Val addr = emit_smem_addr(e, &s->mbar.barrier);
  if (s->kind == S_MBAR_ARRIVE) {
    emit_effect(e, "mbarrier.arrive.shared::cta.b64 _, [%s];", addr.s);
  } else {
    Val bytes = val_convert(e, emit_expr(e, s->mbar.tx_bytes), DT_UINT32);
    emit_effect(e, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%s], %s;", addr.s, bytes.s);
  }
}

/* "{c_inner, ..., c_outer}": the offsets reversed (the IR lists them
 * outermost first, the instruction innermost first), as .s32 registers. */
static void tma_coords(Emitter *e, const IrTmaStmt *t, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = 0;
  for (int i = t->noffsets - 1; i >= 0; i--) {
    Val c = val_to_reg(e, val_convert(e, emit_expr(e, t->offsets[i]), DT_INT32));
    n += (size_t)snprintf(buf + n, size - n, "%s%s", c.s, i ? ", " : "");
  }
}

/* The generic address of tensor map `index` (the prologue's cvta.param). */
static Val tmap_addr(int index) {
  Val t = {.type = DT_UINT64};
  snprintf(t.s, sizeof t.s, "%%tmap%d", index);
  return t;
}

/* global -> shared, completing on the mbarrier (runs in one thread). */
static void tma_load_body(Emitter *e, const void *arg) {
  const IrTmaStmt *c = &((const IrStmt *)arg)->tma;
  char coords[512];
  Val dst = emit_smem_addr(e, &c->shared);
  Val bar = emit_smem_addr(e, &c->barrier);
  Val map = tmap_addr(c->tmap);
  tma_coords(e, c, coords, sizeof coords);
  if (c->mcast) { /* the same offsets in every CTA of the 16-bit ctaMask */
    Val mask = val_convert(e, emit_expr(e, c->mcast), DT_UINT32);
    Val m16 = new_reg(e, DT_FLOAT16); /* a .b16 register */
    emit(e, "cvt.u16.u32 %s, %s;", m16.s, val_to_reg(e, mask).s);
    emit_effect(e,
                "cp.async.bulk.tensor.%dd.shared::cluster.global.mbarrier::complete_tx::bytes"
                ".multicast::cluster [%s], [%s, {%s}], [%s], %s;",
                c->noffsets, dst.s, map.s, coords, bar.s, m16.s);
    return;
  }
  emit_effect(e,
              "cp.async.bulk.tensor.%dd.shared::cluster.global.mbarrier::complete_tx::bytes "
              "[%s], [%s, {%s}], [%s];",
              c->noffsets, dst.s, map.s, coords, bar.s);
}

/* shared -> global in a bulk async-group (runs in one thread). */
static void tma_store_body(Emitter *e, const void *arg) {
  const IrTmaStmt *c = &((const IrStmt *)arg)->tma;
  char coords[512];
  Val src = emit_smem_addr(e, &c->shared);
  Val map = tmap_addr(c->tmap);
  tma_coords(e, c, coords, sizeof coords);
  emit_effect(e, "cp.async.bulk.tensor.%dd.global.shared::cta.bulk_group [%s, {%s}], [%s];",
              c->noffsets, map.s, coords, src.s);
}

static bool tma_checks(Emitter *e, const IrStmt *s) {
  const IrTmaStmt *c = &s->tma;
  if (c->tmap < 0 || c->tmap >= e->k->ntmaps) {
    unsupported(e, "a TMA copy without a tensor map (layout inference did not run?)");
    return false;
  }
  if (c->noffsets < 1 || c->noffsets > 5) {
    unsupported(e, "a TMA copy of rank %d (1 to 5 are possible)", c->noffsets);
    return false;
  }
  if (s->kind == S_TMA_LOAD && (!c->barrier.t || !c->barrier.t->is_mbarrier)) {
    unsupported(e, "a TMA load that completes on something other than an mbarrier");
    return false;
  }
  return true;
}

void emit_tma_stmt(Emitter *e, const IrStmt *s) {
  switch (s->kind) {
  case S_TMA_LOAD:
  case S_TMA_STORE:
    if (tma_checks(e, s))
      emit_one_thread(e, s->kind == S_TMA_LOAD ? tma_load_body : tma_store_body, s, true);
    break;
  case S_TMA_FENCE:
    if (s->fence.release) /* PTX ISA 8.6 (the .version emitted) */
      emit_effect(e, "fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster;");
    else
      emit_effect(e, "fence.proxy.async.shared::cta;");
    break;
  case S_TMA_COMMIT:
    emit_effect(e, "cp.async.bulk.commit_group;");
    break;
  case S_TMA_WAIT:
    emit_effect(e, "cp.async.bulk.wait_group%s %" PRId64 ";", s->wait.read ? ".read" : "",
                s->wait.max_pending);
    break;
  default:
    break;
  }
}
