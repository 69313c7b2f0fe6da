/* emit_stmt.c: statements and control flow: assignments, loops, branches,
 * thread groups, single-thread regions, block and group barriers. The tile
 * statements are dispatched to emit_async.c, emit_wgmma.c and emit_regtile.c.
 */
#include <inttypes.h>

#include "backend_ptx/emit_int.h"

static void emit_stmt(Emitter *e, const IrStmt *s);

void emit_block(Emitter *e, const IrBlock *b) {
  for (int i = 0; i < b->len && !e->failed; i++) emit_stmt(e, b->items[i]);
}

/* var = e[0] */
static void emit_assign(Emitter *e, const IrStmt *s) {
  Val dst = var_reg(s->var);
  Val v = val_convert(e, emit_expr(e, s->e[0]), dst.type);
  emit(e, "mov%s %s, %s;", ptx_btype(dst.type), dst.s, v.s);
}

/* for var in range(start, stop, step) unroll U: the body is repeated U
 * times per trip, each copy preceded by the exit test, so any run-time trip
 * count is right. stop is evaluated once (Python's range); the step must be
 * a compile-time constant so the test's direction is known. */
static void emit_for(Emitter *e, const IrStmt *s) {
  int64_t step;
  if (!ir_is_const(s->e[2], &step) || step == 0) {
    unsupported(e, "a range() step that is not a non-zero compile-time constant");
    return;
  }
  Val var = var_reg(s->var);
  Val start = val_convert(e, emit_expr(e, s->e[0]), var.type);
  emit(e, "mov%s %s, %s;", ptx_btype(var.type), var.s, start.s);
  Val stop = val_to_reg(e, val_convert(e, emit_expr(e, s->e[1]), var.type));
  int top = new_label(e), end = new_label(e);
  int copies = s->n > 1 ? (int)s->n : 1;
  emit_label(e, top);
  for (int u = 0; u < copies && !e->failed; u++) {
    emit_loc(e, s->span); /* back at the loop's line after the body */
    Val done = new_reg(e, DT_BOOL);
    emit(e, "setp.%s%s %s, %s, %s;", step > 0 ? "ge" : "le", ptx_type(var.type), done.s, var.s,
         stop.s);
    emit(e, "@%s bra $L%d;", done.s, end);
    emit_block(e, &s->body);
    emit_loc(e, s->span); /* back at the loop's line after the body */
    emit(e, "add%s %s, %s, %s;", ptx_type(var.type), var.s, var.s, val_imm(var.type, step).s);
  }
  emit(e, "bra $L%d;", top);
  emit_label(e, end);
}

/* if e[0]: body else: orelse */
static void emit_if(Emitter *e, const IrStmt *s) {
  Val c = val_convert(e, emit_expr(e, s->e[0]), DT_BOOL);
  int other = new_label(e), end = new_label(e);
  emit(e, "@!%s bra $L%d;", c.s, other);
  emit_block(e, &s->body);
  if (s->orelse.len) {
    emit(e, "bra $L%d;", end);
    emit_label(e, other);
    emit_block(e, &s->orelse);
    emit_label(e, end);
  } else {
    emit_label(e, other);
  }
}

/* Branches to label unless begin <= index < end, testing `reg` (a thread
 * or warp index); tests that always hold are left out. uni marks a
 * warp-uniform test (bra.uni). */
static void branch_outside(Emitter *e, const char *reg, int64_t begin, int64_t end, int64_t all,
                           int label, bool uni) {
  if (begin > 0) {
    Val p = new_reg(e, DT_BOOL);
    emit(e, "setp.lt.u32 %s, %s, %" PRId64 ";", p.s, reg, begin);
    emit(e, "@%s bra%s $L%d;", p.s, uni ? ".uni" : "", label);
  }
  if (end < all) {
    Val p = new_reg(e, DT_BOOL);
    emit(e, "setp.ge.u32 %s, %s, %" PRId64 ";", p.s, reg, end);
    emit(e, "@%s bra%s $L%d;", p.s, uni ? ".uni" : "", label);
  }
}

/* Threads [n, n + n2) of the enclosing group. Groups made of whole warps
 * test the (warp-uniform) warp index, so the branch does not diverge. */
static void emit_thread_group(Emitter *e, const IrStmt *s) {
  Group outer = e->group;
  if (outer.single) {
    unsupported(e, "thread_group() inside single_thread()");
    return;
  }
  if (s->n < 0 || s->n2 <= 0 || s->n + s->n2 > outer.size) {
    unsupported(e, "thread group [%" PRId64 ", %" PRId64 ") outside its %" PRId64 "-thread parent",
                s->n, s->n + s->n2, outer.size);
    return;
  }
  int64_t begin = outer.begin + s->n, end = begin + s->n2, all = (int64_t)e->k->warps * 32;
  int skip = new_label(e);
  if (begin % 32 == 0 && end % 32 == 0)
    branch_outside(e, "%warp", begin / 32, end / 32, all / 32, skip, true);
  else
    branch_outside(e, "%tidx", begin, end, all, skip, false);
  e->group = (Group){.begin = begin, .size = s->n2, .single = false};
  emit_block(e, &s->body);
  e->group = outer;
  emit_label(e, skip);
}

/* Exactly one thread of the current group runs body: groups of whole warps
 * keep their first warp (a uniform test) and elect one lane in it with
 * elect.sync; other groups keep their first thread. Inside a single-thread
 * region the body runs as it is. */
void emit_one_thread(Emitter *e, void (*body)(Emitter *, const void *), const void *arg) {
  Group g = e->group;
  if (g.single) {
    body(e, arg);
    return;
  }
  int skip = new_label(e);
  if (g.begin % 32 == 0 && g.size % 32 == 0) {
    if (g.size > 32)
      branch_outside(e, "%warp", g.begin / 32, g.begin / 32 + 1, (int64_t)e->k->warps, skip, true);
    Val p = new_reg(e, DT_BOOL);
    emit(e, "elect.sync _|%s, -1;", p.s);
    emit(e, "@!%s bra $L%d;", p.s, skip);
  } else {
    branch_outside(e, "%tidx", g.begin, g.begin + 1, (int64_t)e->k->warps * 32, skip, false);
  }
  e->group.single = true;
  body(e, arg);
  e->group = g;
  emit_label(e, skip);
}

static void block_body(Emitter *e, const void *block) { emit_block(e, block); }

/* The named barrier of the current group: the one it already has, or the
 * next free one; 0 when all 15 are taken (the verifier refuses that). */
static int group_barrier(Emitter *e) {
  for (int i = 0; i < e->nbarrier_groups; i++)
    if (e->barrier_groups[i].begin == e->group.begin && e->barrier_groups[i].size == e->group.size)
      return i + 1;
  if (e->nbarrier_groups == PTX_NAMED_BARRIERS) return 0;
  e->barrier_groups[e->nbarrier_groups++] = e->group;
  return e->nbarrier_groups;
}

/* sync(): bar.sync 0 over the whole block; inside a thread group, a named
 * barrier of that group over its thread count (bar.sync counts whole
 * warps, so the group must be made of them: the verifier checks it). A
 * single thread cannot complete a barrier: refused. */
static void emit_sync(Emitter *e) {
  Group g = e->group;
  if (g.single || g.begin % 32 != 0 || g.size % 32 != 0) {
    unsupported(e, "sync() inside single_thread() or a thread group that is not whole warps");
    return;
  }
  if (g.begin == 0 && g.size == (int64_t)e->k->warps * 32) {
    emit(e, "bar.sync 0;");
    return;
  }
  int id = group_barrier(e);
  if (id == 0) {
    unsupported(e, "sync() in more than %d distinct thread groups", PTX_NAMED_BARRIERS);
    return;
  }
  emit(e, "bar.sync %d, %" PRId64 ";", id, g.size);
}

static void emit_stmt(Emitter *e, const IrStmt *s) {
  emit_loc(e, s->span);
  switch (s->kind) {
  case S_ASSIGN:
    emit_assign(e, s);
    break;
  case S_FOR:
    emit_for(e, s);
    break;
  case S_IF:
    emit_if(e, s);
    break;
  case S_THREAD_GROUP:
    emit_thread_group(e, s);
    break;
  case S_SINGLE_THREAD:
    emit_one_thread(e, block_body, &s->body);
    break;
  case S_SYNC:
    emit_sync(e);
    break;
  case S_MBAR_WAIT:
  case S_MBAR_ARRIVE:
  case S_MBAR_EXPECT_TX:
    emit_mbar_stmt(e, s);
    break;
  case S_TMA_LOAD:
  case S_TMA_STORE:
  case S_TMA_FENCE:
  case S_TMA_COMMIT:
  case S_TMA_WAIT:
    emit_tma_stmt(e, s);
    break;
  case S_WGMMA_FENCE:
  case S_WGMMA_MMA:
  case S_WGMMA_COMMIT:
  case S_WGMMA_WAIT:
    emit_wgmma_stmt(e, s);
    break;
  case S_FILL:
  case S_CAST:
  case S_ELEMWISE:
  case S_LOAD_GLOBAL:
  case S_STORE_GLOBAL:
  case S_LOAD_SHARED:
  case S_STORE_SHARED:
  case S_SLICE:
    emit_regtile_stmt(e, s);
    break;
  case S_PRINTF:
    emit_printf(e, s);
    break;
  }
}
