/* hand_ir.c: kernels built directly with the ir.h constructors and emitted
 * by the PTX backend, independent of the front end and the evaluator:
 *
 *   hand_ir vecadd OUT.ptx   f16 vector add through f32 (spatial layout,
 *                            bounds-checked global loads/stores, casts)
 *   hand_ir wgmma OUT.ptx    one consumer warp group of V5 plus a TMA
 *                            producer warp: mbarrier pipeline, TMA loads,
 *                            m64n256k16 WGMMA with wait_group(1), and the
 *                            f16 epilogue store
 *   hand_ir serial OUT.ptx   the wgmma kernel with the accumulator refilled
 *                            between an mma and its wait: ptxas must
 *                            serialize it, and the suite must notice
 *   hand_ir bad OUT.ptx      a kernel the backend cannot emit (a
 *                            non-constant range step): must fail with a
 *                            diagnostic and leave OUT.ptx unwritten
 *
 * The ptxas suite assembles the first two with ptxas -arch=sm_90a -v.
 */
#include <stdlib.h>
#include <string.h>

#include "backend_ptx/ptx.h"

static Arena *ar;
static IrKernel *kern;

static Span at(int line) { return (Span){line, 5, line, 40}; }
static IrExpr *i32(int64_t v) { return ir_const(ar, DT_INT32, v); }
static IrExpr *bin(IrOp op, IrExpr *a, IrExpr *b) { return ir_binary(ar, op, a, b); }
static IrExpr *var(IrVar *v) { return ir_var_ref(ar, v); }
static IrExpr *prm(int i) { return ir_param_ref(ar, kern->params[i]); }

static IrParam *add_param(const char *name, DType t, bool is_ptr, DType elem) {
  IrParam *p = arena_alloc(ar, sizeof *p);
  p->index = kern->nparams;
  p->name = arena_strdup(ar, name);
  p->type = is_ptr ? DT_UINT64 : t;
  p->is_ptr = is_ptr;
  p->elem = elem;
  IrParam **ps = arena_alloc(ar, sizeof *ps * (size_t)(kern->nparams + 1));
  if (kern->nparams) memcpy(ps, kern->params, sizeof *ps * (size_t)kern->nparams);
  ps[kern->nparams++] = p;
  kern->params = ps;
  return p;
}

static IrStmt *stmt(IrBlock *b, SKind kind, int line) {
  IrStmt *s = ir_stmt_new(ar, kind, at(line));
  ir_block_push(ar, b, s);
  return s;
}

static void assign(IrBlock *b, int line, IrVar *v, IrExpr *e) {
  IrStmt *s = stmt(b, S_ASSIGN, line);
  s->assign.var = v;
  s->assign.value = e;
}

static IrExpr *cdiv(IrExpr *a, int64_t b) {
  return bin(OP_DIV, bin(OP_ADD, a, i32(b - 1)), i32(b));
}

static IrTensor *global(const char *name, int pptr, DType dt, int rank, IrExpr **dims) {
  int64_t shape[IR_MAX_RANK] = {0};
  IrTensor *t = ir_new_tensor(ar, kern, name, MS_GLOBAL, dt, rank, shape, at(3));
  t->gptr = prm(pptr);
  for (int i = 0; i < rank; i++) t->gshape[i] = dims[i];
  return t;
}

static IrTensor *regs(const char *name, DType dt, int rank, const int64_t *shape, int nthreads,
                      LayoutKind layout) {
  IrTensor *t = ir_new_tensor(ar, kern, name, MS_REGISTER, dt, rank, shape, at(4));
  t->nthreads = nthreads;
  t->layout = layout;
  /* the spread layout of one element per thread and slot, threads
   * innermost (what layout inference gives a tile loaded as a whole) */
  if (layout == LAYOUT_SPATIAL) t->reg = ir_reglayout_default(ar, rank, shape, nthreads, 1);
  return t;
}

static IrKernel *new_kernel(IrModule *m, const char *name, int warps) {
  kern = arena_alloc(ar, sizeof *kern);
  kern->name = arena_strdup(ar, name);
  kern->script = kern->name;
  kern->warps = warps;
  kern->span = at(1);
  m->kernels = arena_alloc(ar, sizeof(IrKernel *));
  m->kernels[0] = kern;
  m->nkernels = 1;
  return kern;
}

/* c[i] = (f16)((f32)a[i] + (f32)b[i]) over 512-element tiles. */
static void build_vecadd(IrModule *m) {
  new_kernel(m, "VecAdd", 4);
  add_param("n", DT_INT32, false, DT_VOID);
  add_param("a_ptr", DT_UINT64, true, DT_FLOAT16);
  add_param("b_ptr", DT_UINT64, true, DT_FLOAT16);
  add_param("c_ptr", DT_UINT64, true, DT_FLOAT16);
  kern->grid[0] = cdiv(prm(0), 512);
  kern->grid[1] = i32(1);
  kern->grid[2] = i32(1);
  IrExpr *n[1] = {prm(0)};
  IrTensor *ga = global("ga", 1, DT_FLOAT16, 1, n), *gb = global("gb", 2, DT_FLOAT16, 1, n),
           *gc = global("gc", 3, DT_FLOAT16, 1, n);
  int64_t shape[1] = {512};
  IrTensor *a16 = regs("a16", DT_FLOAT16, 1, shape, 128, LAYOUT_SPATIAL);
  IrTensor *b16 = regs("b16", DT_FLOAT16, 1, shape, 128, LAYOUT_SPATIAL);
  IrTensor *a = regs("a", DT_FLOAT32, 1, shape, 128, LAYOUT_SPATIAL);
  IrTensor *b = regs("b", DT_FLOAT32, 1, shape, 128, LAYOUT_SPATIAL);
  IrTensor *c = regs("c", DT_FLOAT32, 1, shape, 128, LAYOUT_SPATIAL);
  IrTensor *c16 = regs("c16", DT_FLOAT16, 1, shape, 128, LAYOUT_SPATIAL);
  IrVar *off = ir_new_var(ar, kern, "offset", DT_INT32);
  IrBlock *body = &kern->body;
  assign(body, 10, off, bin(OP_MUL, ir_special(ar, SR_CTAID_X), i32(512)));
  IrExpr **offs = arena_alloc(ar, sizeof(IrExpr *));
  offs[0] = var(off);
  IrStmt *s = stmt(body, S_LOAD_GLOBAL, 11);
  s->gmem = (IrGlobalCopyStmt){.global = ga, .reg = a16, .offsets = offs, .noffsets = 1};
  s = stmt(body, S_LOAD_GLOBAL, 12);
  s->gmem = (IrGlobalCopyStmt){.global = gb, .reg = b16, .offsets = offs, .noffsets = 1};
  s = stmt(body, S_CAST, 13);
  s->cast = (IrCastStmt){.dst = a, .src = a16};
  s = stmt(body, S_CAST, 13);
  s->cast = (IrCastStmt){.dst = b, .src = b16};
  s = stmt(body, S_ELEMWISE, 14);
  s->elemwise = (IrElemwiseStmt){.dst = c, .a = a, .b = b, .op = OP_ADD};
  s = stmt(body, S_CAST, 15);
  s->cast = (IrCastStmt){.dst = c16, .src = c};
  s = stmt(body, S_STORE_GLOBAL, 16);
  s->gmem = (IrGlobalCopyStmt){.global = gc, .reg = c16, .offsets = offs, .noffsets = 1};
}

/* The V5 pipeline state of one side (stage, phase) and its advance. */
typedef struct Pipe {
  IrVar *stage, *phase;
} Pipe;

static void advance(IrBlock *b, int line, Pipe p) {
  assign(b, line, p.stage, bin(OP_MOD, bin(OP_ADD, var(p.stage), i32(1)), i32(4)));
  assign(b, line + 1, p.phase,
         bin(OP_XOR, var(p.phase), ir_cast(ar, DT_UINT32, bin(OP_EQ, var(p.stage), i32(0)))));
}

static IrRef ref1(IrTensor *t, IrExpr *i) { return (IrRef){.t = t, .nidx = 1, .idx = {i}}; }

static void wait_on(IrBlock *b, int line, IrTensor *bars, Pipe p) {
  IrStmt *s = stmt(b, S_MBAR_WAIT, line);
  s->mbar.barrier = ref1(bars, var(p.stage));
  s->mbar.parity = var(p.phase);
  s->mbar.sem = MBAR_SEM_RELAXED, s->mbar.scope = MBAR_SCOPE_CTA;
}

static IrTensor *sa, *sb, *acc, *empty, *full, *ga, *gb;

static void mma(IrBlock *b, int line, IrExpr *stage) {
  stmt(b, S_WGMMA_FENCE, line);
  IrStmt *s = stmt(b, S_WGMMA_MMA, line + 1);
  s->wgmma.acc = acc;
  s->wgmma.a = ref1(sa, stage);
  s->wgmma.b = ref1(sb, stage);
  s->wgmma.b.transposed = true;
  stmt(b, S_WGMMA_COMMIT, line + 2);
}

static void arrive_prev(IrBlock *b, int line, Pipe p) {
  IrStmt *one = stmt(b, S_SINGLE_THREAD, line);
  IrStmt *s = stmt(&one->body, S_MBAR_ARRIVE, line + 1);
  s->mbar.barrier = ref1(empty, bin(OP_MOD, bin(OP_ADD, var(p.stage), i32(3)), i32(4)));
}

static IrExpr **offsets2(IrExpr *a, IrExpr *b) {
  IrExpr **o = arena_alloc(ar, 2 * sizeof *o);
  o[0] = a, o[1] = b;
  return o;
}

static void tma(IrBlock *b, int line, IrTensor *g, IrTensor *dst, int map, Pipe p, IrExpr *row,
                IrVar *k) {
  IrStmt *s = stmt(b, S_TMA_LOAD, line);
  s->tma.global = g;
  s->tma.shared = ref1(dst, var(p.stage));
  s->tma.barrier = ref1(full, var(p.stage));
  s->tma.offsets = offsets2(row, var(k));
  s->tma.noffsets = 2;
  s->tma.tmap = map;
}

static void producer(IrBlock *b, Pipe p, IrVar *om, IrVar *on, IrVar *k) {
  IrStmt *loop = stmt(b, S_FOR, 30);
  loop->loop = (IrForStmt){.var = k, .start = i32(0), .stop = prm(2), .step = i32(64), .unroll = 4};
  IrBlock *lb = &loop->body;
  wait_on(lb, 31, empty, p);
  IrStmt *one = stmt(lb, S_SINGLE_THREAD, 32);
  IrStmt *s = stmt(&one->body, S_MBAR_EXPECT_TX, 33);
  s->mbar.barrier = ref1(full, var(p.stage));
  s->mbar.tx_bytes = i32(64 * 64 * 2 + 256 * 64 * 2);
  tma(lb, 34, ga, sa, 0, p, var(om), k);
  tma(lb, 35, gb, sb, 1, p, var(on), k);
  advance(lb, 36, p);
}

static bool serialize; /* hand_ir serial */

static void consumer(IrBlock *b, Pipe p, IrVar *om, IrVar *on, IrVar *k) {
  IrStmt *s = stmt(b, S_FILL, 40);
  s->fill = (IrFillStmt){.dst = acc, .value = ir_const_f(ar, DT_FLOAT32, 0.0)};
  wait_on(b, 41, full, p);
  mma(b, 42, var(p.stage));
  advance(b, 45, p);
  IrStmt *loop = stmt(b, S_FOR, 47);
  loop->loop =
      (IrForStmt){.var = k, .start = i32(64), .stop = prm(2), .step = i32(64), .unroll = 4};
  IrBlock *lb = &loop->body;
  wait_on(lb, 48, full, p);
  mma(lb, 49, var(p.stage));
  if (serialize) { /* touches the accumulator while an mma is in flight */
    IrStmt *f = stmt(lb, S_FILL, 51);
    f->fill = (IrFillStmt){.dst = acc, .value = ir_const_f(ar, DT_FLOAT32, 1.0)};
  }
  stmt(lb, S_WGMMA_WAIT, 52)->wait.max_pending = 1;
  arrive_prev(lb, 53, p);
  advance(lb, 55, p);
  stmt(b, S_WGMMA_WAIT, 57)->wait.max_pending = 0;
  arrive_prev(b, 58, p);
  int64_t shape[2] = {64, 256};
  IrTensor *c16 = regs("c16", DT_FLOAT16, 2, shape, 128, LAYOUT_WGMMA_ACC);
  s = stmt(b, S_CAST, 60);
  s->cast = (IrCastStmt){.dst = c16, .src = acc};
  IrExpr *mn[2] = {prm(0), prm(1)};
  IrTensor *gc = global("gc", 5, DT_FLOAT16, 2, mn);
  s = stmt(b, S_STORE_GLOBAL, 61);
  s->gmem = (IrGlobalCopyStmt){
      .global = gc, .reg = c16, .offsets = offsets2(var(om), var(on)), .noffsets = 2};
}

static IrTensor *shared(const char *name, DType dt, int rank, const int64_t *shape, int64_t off,
                        int swz) {
  IrTensor *t = ir_new_tensor(ar, kern, name, MS_SHARED, dt, rank, shape, at(5));
  t->smem_offset = off;
  t->swizzle_bytes = swz;
  t->layout = swz ? LAYOUT_SWIZZLED : LAYOUT_ROW_MAJOR;
  t->align = swz ? 1024 : 8;
  return t;
}

static IrTmap *tmap(int index, IrTensor *g, int64_t rows) {
  IrTmap *t = arena_alloc(ar, sizeof *t);
  t->index = index, t->global = g, t->box[0] = rows, t->box[1] = 64, t->swizzle_bytes = 128;
  return t;
}

static void build_wgmma(IrModule *m) {
  new_kernel(m, "WgmmaPipe", 5);
  add_param("m_size", DT_INT32, false, DT_VOID);
  add_param("n_size", DT_INT32, false, DT_VOID);
  add_param("k_size", DT_INT32, false, DT_VOID);
  add_param("a_ptr", DT_UINT64, true, DT_FLOAT16);
  add_param("b_ptr", DT_UINT64, true, DT_FLOAT16);
  add_param("c_ptr", DT_UINT64, true, DT_FLOAT16);
  kern->grid[0] = bin(OP_MUL, cdiv(prm(0), 64), cdiv(prm(1), 256));
  kern->grid[1] = i32(1), kern->grid[2] = i32(1);
  IrExpr *ak[2] = {prm(0), prm(2)}, *bk[2] = {prm(1), prm(2)};
  ga = global("ga", 3, DT_FLOAT16, 2, ak);
  gb = global("gb", 4, DT_FLOAT16, 2, bk);
  int64_t sa_shape[3] = {4, 64, 64}, sb_shape[3] = {4, 256, 64}, nb[1] = {4};
  sa = shared("sa", DT_FLOAT16, 3, sa_shape, 0, 128);
  sb = shared("sb", DT_FLOAT16, 3, sb_shape, 32768, 128);
  empty = shared("empty", DT_UINT64, 1, nb, 163840, 0);
  full = shared("full", DT_UINT64, 1, nb, 163872, 0);
  empty->is_mbarrier = full->is_mbarrier = true;
  empty->mbar_counts = arena_alloc(ar, 4 * sizeof(int64_t));
  full->mbar_counts = arena_alloc(ar, 4 * sizeof(int64_t));
  for (int i = 0; i < 4; i++) empty->mbar_counts[i] = full->mbar_counts[i] = 1;
  kern->smem_bytes = 163904 + 1024;
  kern->tmaps = arena_alloc(ar, 2 * sizeof(IrTmap *));
  kern->tmaps[0] = tmap(0, ga, 64);
  kern->tmaps[1] = tmap(1, gb, 256);
  kern->ntmaps = 2;
  int64_t acc_shape[2] = {64, 256};
  acc = regs("acc", DT_FLOAT32, 2, acc_shape, 128, LAYOUT_WGMMA_ACC);

  IrBlock *body = &kern->body;
  IrVar *om = ir_new_var(ar, kern, "offset_m", DT_INT32);
  IrVar *on = ir_new_var(ar, kern, "offset_n", DT_INT32);
  Pipe prod = {ir_new_var(ar, kern, "producer_stage", DT_INT32),
               ir_new_var(ar, kern, "producer_phase", DT_UINT32)};
  Pipe cons = {ir_new_var(ar, kern, "consumer_stage", DT_INT32),
               ir_new_var(ar, kern, "consumer_phase", DT_UINT32)};
  IrExpr *mblocks = cdiv(prm(0), 64), *bid = ir_special(ar, SR_CTAID_X);
  assign(body, 20, om, bin(OP_MUL, bin(OP_MOD, bid, mblocks), i32(64)));
  assign(body, 21, on, bin(OP_MUL, bin(OP_DIV, bid, mblocks), i32(256)));
  assign(body, 22, prod.stage, i32(0));
  assign(body, 22, prod.phase, ir_const(ar, DT_UINT32, 1));
  assign(body, 23, cons.stage, i32(0));
  assign(body, 23, cons.phase, ir_const(ar, DT_UINT32, 0));
  IrStmt *pg = stmt(body, S_THREAD_GROUP, 29);
  pg->group = (IrGroupStmt){.begin = 128, .count = 32};
  producer(&pg->body, prod, om, on, ir_new_var(ar, kern, "offset_k", DT_INT32));
  IrStmt *cg = stmt(body, S_THREAD_GROUP, 39);
  cg->group = (IrGroupStmt){.begin = 0, .count = 128};
  consumer(&cg->body, cons, om, on, ir_new_var(ar, kern, "offset_k", DT_INT32));
}

/* A loop whose step is a run-time value: not supported, reported at its
 * line. */
static void build_bad(IrModule *m) {
  new_kernel(m, "Bad", 1);
  add_param("n", DT_INT32, false, DT_VOID);
  kern->grid[0] = i32(1), kern->grid[1] = i32(1), kern->grid[2] = i32(1);
  IrVar *i = ir_new_var(ar, kern, "i", DT_INT32);
  IrStmt *loop = stmt(&kern->body, S_FOR, 3);
  loop->loop = (IrForStmt){.var = i, .start = i32(0), .stop = prm(0), .step = prm(0)};
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: hand_ir vecadd|wgmma|serial|bad OUT.ptx\n");
    return 2;
  }
  ar = arena_new();
  static const char text[] = "line 1\nline 2\n    for i in self.range(0, n, n):\nline 4\nline 5\n";
  Source *src = source_from_string("hand_ir.tls", text);
  IrModule m = {.ar = ar, .src = src};
  if (!strcmp(argv[1], "vecadd"))
    build_vecadd(&m);
  else if (!strcmp(argv[1], "wgmma") || !strcmp(argv[1], "serial")) {
    serialize = !strcmp(argv[1], "serial");
    build_wgmma(&m);
  } else
    build_bad(&m);
  Diag d;
  diag_init(&d, src, stderr);
  char *text_out = NULL;
  size_t len = 0;
  FILE *buf = open_memstream(&text_out, &len);
  PtxOptions opt = {.line_info = true};
  bool ok = ptx_emit(buf, &m, &opt, &d);
  fclose(buf);
  if (ok) {
    FILE *out = fopen(argv[2], "w");
    if (!out || fwrite(text_out, 1, len, out) != len || fclose(out) != 0) {
      fprintf(stderr, "hand_ir: cannot write %s\n", argv[2]);
      ok = false;
    }
  }
  free(text_out);
  source_free(src);
  arena_free(ar);
  return ok ? 0 : 1;
}
