/* emit_stream.c: dot operands read from shared memory one k step at a time.
 *
 * A script loads a whole mma operand from shared memory and then multiplies
 * with it (flash attention's `rk = load_shared(sk)` then `dot(q, rk.T)`):
 * emitted in that order, every ldmatrix of the operand comes before the
 * first mma.sync, and the whole operand is live at once (a 64 x 128 fp16
 * tile is 128 registers a thread when each warp needs all of it). Emitted
 * k step by k step instead, the ldmatrix of step k just before the
 * mma.sync of step k, only one step's fragments are live: the difference
 * between spilling and not in flash attention.
 *
 * Moving the shared-memory read from the load to the dot is exact when
 * nothing between them can change what it reads: the statements in
 * between (in the same block) only compute in registers or read memory,
 * assign no variable the view's address reads,
 * and none of them lets another thread go on to write shared memory (no
 * barrier, no mbarrier arrival, no reduction through shared scratch). The
 * loaded tensor must have no other use: the dot (or the transpose feeding
 * it) reads it, nothing else does, so its registers need not exist outside
 * the dot. This only chooses where the reads are emitted; the IR, and so
 * --verify, keep the load where the script put it.
 */
#include <stdlib.h>
#include <string.h>

#include "backend_ptx/emit_int.h"

/* ------------------------------------------------------------ planning */

/* Whether s, between an operand's load and its dot, leaves shared memory
 * as it is for that read: it computes in registers or reads memory, and
 * lets no other thread past it. */
static bool quiet(const IrStmt *s) {
  switch (s->kind) {
  case S_ASSIGN:
  case S_FILL:
  case S_CAST:
  case S_ELEMWISE:
  case S_UNARY:
  case S_WHERE:
  case S_TRANSPOSE:
  case S_RESHAPE:
  case S_VIEW:
  case S_SLICE:
  case S_DOT:
  case S_LOAD_SHARED:
  case S_LOAD_GLOBAL:
    return true;
  case S_REDUCE: /* unless it exchanges through shared memory */
    return ir_reduce_scratch_bytes(s) == 0;
  default:
    return false;
  }
}

/* The index of the last statement of b before `before` that names t, -1
 * if none. */
static int last_use(const IrBlock *b, int before, const IrTensor *t) {
  int i = before - 1;
  while (i >= 0 && !ir_stmt_names(b->items[i], t)) i--;
  return i;
}

/* For operand x of the dot at index `at` of b: the load (and transpose)
 * that last wrote it, when only quiet statements that do not name it lie
 * between them. Whether x has other uses is checked over the kernel
 * (stream_plan). */
static bool find_stream(Emitter *e, const IrBlock *b, int at, const IrTensor *x,
                        const IrStmt **load, const IrStmt **transpose) {
  *load = *transpose = NULL;
  int i = x ? last_use(b, at, x) : -1, h = i;
  if (i < 0) return false;
  if (b->items[i]->kind == S_TRANSPOSE && b->items[i]->cast.dst == x) {
    *transpose = b->items[i];
    h = last_use(b, i, b->items[i]->cast.src);
  }
  if (h < 0 || b->items[h]->kind != S_LOAD_SHARED) return false;
  const IrTensor *t = b->items[h]->smem.reg;
  if ((*transpose && (*transpose)->cast.src != t) || (!*transpose && t != x) ||
      t->layout != LAYOUT_SPATIAL || !t->reg ||
      !spread_ldmatrix_fits(e, &b->items[h]->smem.shared, t))
    return false;
  /* where the view is: the dot computes it again, so no variable it reads
   * may change in between (`a = load_shared(sa[stage])`, then `stage =
   * ...`) */
  IrExpr *where = ir_ref_byte_offset(e->m->ar, &b->items[h]->smem.shared);
  for (int j = h + 1; j < at; j++) {
    const IrStmt *s = b->items[j];
    if (j != i && (!quiet(s) || ir_stmt_names(s, x) || ir_stmt_names(s, t) ||
                   (s->kind == S_ASSIGN && ir_expr_reads(where, s->assign.var))))
      return false;
  }
  *load = b->items[h];
  return true;
}

static void add_stream(Emitter *e, StreamedDot sd) {
  if (e->nstreams == e->streams_cap) {
    e->streams_cap = e->streams_cap ? 2 * e->streams_cap : 8;
    e->streams = xrealloc(e->streams, sizeof *e->streams * (size_t)e->streams_cap);
  }
  e->streams[e->nstreams++] = sd;
}

/* Every dot of b (nested blocks included) with an operand found by
 * find_stream, as a candidate. */
static void find_block(Emitter *e, const IrBlock *b) {
  for (int i = 0; i < b->len; i++) {
    const IrStmt *s = b->items[i];
    find_block(e, &s->body);
    find_block(e, &s->orelse);
    if (s->kind != S_DOT) continue;
    StreamedDot sd = {.dot = s};
    bool a = find_stream(e, b, i, s->dot.a, &sd.load[0], &sd.transpose[0]);
    bool bb = find_stream(e, b, i, s->dot.b, &sd.load[1], &sd.transpose[1]);
    if (a || bb) add_stream(e, sd);
  }
}

/* Counts in `claimed` the uses of its tensors that candidate operand op
 * accounts for: the load's write and the transpose's read, the
 * transpose's write and the dot's read. */
static void claim(const StreamedDot *sd, int op, int *claimed) {
  if (!sd->load[op]) return;
  claimed[sd->load[op]->smem.reg->id] += 2;
  if (sd->transpose[op]) claimed[sd->transpose[op]->cast.dst->id] += 2;
}

/* Whether candidate operand op's tensors have no use but the candidates'. */
static bool all_claimed(const StreamedDot *sd, int op, const int *uses, const int *claimed) {
  const IrTensor *t = sd->load[op]->smem.reg;
  const IrTensor *x = sd->transpose[op] ? sd->transpose[op]->cast.dst : t;
  return uses[t->id] == claimed[t->id] && uses[x->id] == claimed[x->id];
}

/* Whether streaming candidate operand op pays: the operand is larger
 * than the dot's result (registers a thread holds). Streaming saves the
 * operand's registers, but the mma.sync of the last k step then waits on
 * its ldmatrix, and none is left to overlap the barrier that usually ends
 * the loop body, as the whole operand's mma.syncs do. Attention's K and V
 * tiles (256 elements a thread against a 32 or 64 element result) need
 * the registers; a matmul's operands are the smaller part: measured on
 * the H200 (2026-12-01), Tilus's Ampere matmul_v3 ran 4.8% faster and
 * matmul_a16wx 2.4% with them whole. */
static bool worth(const StreamedDot *sd, int op) {
  return tensor_nslots(sd->load[op]->smem.reg) > tensor_nslots(sd->dot->dot.dst);
}

/* The candidates whose tensors are used only by candidates: each such use
 * writes the tensor before it reads it, so its registers carry nothing
 * from one candidate to another (unrolled copies of one loop body are
 * candidates each). The others are dropped. */
void stream_plan(Emitter *e) {
  find_block(e, &e->k->body);
  size_t n = (size_t)e->k->ntensors + 1; /* tensor ids are 0 .. ntensors - 1 */
  int *uses = xmalloc(sizeof *uses * n), *claimed = xmalloc(sizeof *claimed * n);
  memset(uses, 0, sizeof *uses * n);
  memset(claimed, 0, sizeof *claimed * n);
  ir_count_tensor_uses(&e->k->body, uses);
  for (int i = 0; i < e->nstreams; i++)
    for (int op = 0; op < 2; op++) claim(&e->streams[i], op, claimed);
  int kept = 0;
  for (int i = 0; i < e->nstreams; i++) {
    StreamedDot sd = e->streams[i];
    for (int op = 0; op < 2; op++)
      if (sd.load[op] && (!all_claimed(&sd, op, uses, claimed) || !worth(&sd, op)))
        sd.load[op] = sd.transpose[op] = NULL;
    if (sd.load[0] || sd.load[1]) e->streams[kept++] = sd;
  }
  e->nstreams = kept;
  free(uses);
  free(claimed);
}

const StreamedDot *stream_of_dot(const Emitter *e, const IrStmt *dot) {
  for (int i = 0; i < e->nstreams; i++)
    if (e->streams[i].dot == dot) return &e->streams[i];
  return NULL;
}

bool stream_skips(const Emitter *e, const IrStmt *s) {
  if (s->kind != S_LOAD_SHARED && s->kind != S_TRANSPOSE) return false;
  for (int i = 0; i < e->nstreams; i++)
    for (int op = 0; op < 2; op++)
      if (e->streams[i].load[op] == s || e->streams[i].transpose[op] == s) return true;
  return false;
}
