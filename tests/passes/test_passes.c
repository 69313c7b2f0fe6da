/* test_passes.c: the IR core without the front end.
 *
 * Builds IR by hand with the ir.h constructors and checks constant folding,
 * expression typing and printing, layout inference, tensor maps, shared
 * memory planning and the diagnostics of the passes.
 *
 *   test_passes unit        run the unit checks; non-zero exit on failure
 *   test_passes print-v5    print the hand-built V5 kernel after the passes
 *   test_passes diag NAME   run the passes on a broken variant NAME; the
 *                           diagnostics go to stderr, exit 1 on error
 *   test_passes mutate N    run the passes on N random corruptions of the
 *                           kernel: no crash, no failure without an error
 *
 * The kernel mirrors examples/matmul_v5.tls (one consumer warp group); its
 * spans point into FAKE_SCRIPT below, so diagnostics print real lines.
 */
#include "eval/eval.h"
#include "tests/unit.h"

#include <stdlib.h>
#include <string.h>

/* The "script" the spans point at: one line per construct. */
static const char *FAKE_SCRIPT =
    "class MatmulWGMMAV5(tilus.Script):\n"                               /* 1 */
    "    ga = self.global_view(a_ptr, shape=[m_size, k_size])\n"         /* 2 */
    "    gb = self.global_view(b_ptr, shape=[n_size, k_size])\n"         /* 3 */
    "    gc = self.global_view(c_ptr, shape=[m_size, n_size])\n"         /* 4 */
    "    sa = self.shared_tensor(dtype=float16, shape=SA)\n"             /* 5 */
    "    sb = self.shared_tensor(dtype=float16, shape=SB)\n"             /* 6 */
    "    empty = self.mbarrier.alloc([2, 2, 2, 2])\n"                    /* 7 */
    "    full = self.mbarrier.alloc([1, 1, 1, 1])\n"                     /* 8 */
    "    stage: int32 = 0\n"                                             /* 9 */
    "    with self.thread_group(thread_begin=256, num_threads=32):\n"    /* 10 */
    "        for offset_k in self.range(0, k_size, 64, unroll=4):\n"     /* 11 */
    "            self.mbarrier.wait(empty[stage], phase=phase)\n"        /* 12 */
    "            self.mbarrier.arrive_and_expect_tx(full[stage], n)\n"   /* 13 */
    "            self.tma.global_to_shared(src=ga, dst=sa[stage, 0])\n"  /* 14 */
    "            self.tma.global_to_shared(src=ga, dst=sa[stage, 1])\n"  /* 15 */
    "            self.tma.global_to_shared(src=gb, dst=sb[stage])\n"     /* 16 */
    "            stage = (stage + 1) % 4\n"                              /* 17 */
    "    with self.thread_group(thread_begin=0, num_threads=128):\n"     /* 18 */
    "        acc = self.register_tensor(dtype=float32, init=0.0)\n"      /* 19 */
    "        self.wgmma.mma(sa[stage, 0], sb[stage].transpose(), acc)\n" /* 20 */
    "        casted = self.cast(acc, dtype=float16)\n"                   /* 21 */
    "        self.store_global(gc, casted, offsets=[om, on])\n";         /* 22 */

/* The span of line n of FAKE_SCRIPT, from its first non-blank character. */
static Span line_span(int n) {
  const char *p = FAKE_SCRIPT;
  for (int i = 1; i < n && strchr(p, '\n'); i++) p = strchr(p, '\n') + 1;
  int col = 1;
  while (p[col - 1] == ' ') col++;
  int len = (int)(strchr(p, '\n') - p);
  return (Span){n, col, n, len + 1};
}

/* ------------------------------------------------------------ folding */

static void test_folding(Arena *ar) {
  int64_t v;
  IrExpr *seven = ir_const(ar, DT_INT32, -7), *two = ir_const(ar, DT_INT32, 2);
  CHECK(ir_is_const(ir_binary(ar, OP_DIV, seven, two), &v) && v == -3);
  CHECK(ir_is_const(ir_binary(ar, OP_MOD, seven, two), &v) && v == -1);
  CHECK(ir_is_const(ir_binary(ar, OP_ADD, seven, two), &v) && v == -5);
  CHECK(ir_is_const(ir_binary(ar, OP_MIN, seven, two), &v) && v == -7);
  /* division by zero stays for run time */
  IrExpr *zero = ir_const(ar, DT_INT32, 0);
  IrExpr *dz = ir_binary(ar, OP_DIV, seven, zero);
  CHECK(dz->kind == X_BINARY && dz->op == OP_DIV);
  CHECK(ir_binary(ar, OP_MOD, seven, zero)->kind == X_BINARY);
  /* INT_MIN / -1 overflows in C: not folded */
  IrExpr *imin = ir_const(ar, DT_INT32, INT32_MIN);
  CHECK(ir_binary(ar, OP_DIV, imin, ir_const(ar, DT_INT32, -1))->kind == X_BINARY);
  /* int32 wraps; uint32 wraps */
  IrExpr *imax = ir_const(ar, DT_INT32, INT32_MAX);
  CHECK(ir_is_const(ir_binary(ar, OP_ADD, imax, ir_const(ar, DT_INT32, 1)), &v) && v == INT32_MIN);
  IrExpr *u0 = ir_const(ar, DT_UINT32, 0);
  IrExpr *wrapped = ir_binary(ar, OP_SUB, u0, ir_const(ar, DT_INT32, 1));
  CHECK(wrapped->type == DT_UINT32 && ir_is_const(wrapped, &v) && v == 4294967295LL);
  /* unsigned comparison: (uint32)-1 > 0 */
  IrExpr *gt = ir_binary(ar, OP_GT, wrapped, ir_const(ar, DT_INT32, 0));
  CHECK(gt->type == DT_BOOL && ir_is_const(gt, &v) && v == 1);
  /* unsigned division: 4294967295u / 2 */
  CHECK(ir_is_const(ir_binary(ar, OP_DIV, wrapped, two), &v) && v == 2147483647);
  /* shifts out of range stay */
  CHECK(ir_binary(ar, OP_SHL, two, ir_const(ar, DT_INT32, 32))->kind == X_BINARY);
  CHECK(ir_is_const(ir_binary(ar, OP_SHL, two, two), &v) && v == 8);
  CHECK(ir_is_const(ir_binary(ar, OP_SHR, seven, ir_const(ar, DT_INT32, 1)), &v) && v == -4);
  /* logical and unary */
  IrExpr *t = ir_const(ar, DT_BOOL, 1), *f = ir_const(ar, DT_BOOL, 0);
  CHECK(ir_is_const(ir_binary(ar, OP_LAND, t, f), &v) && v == 0);
  CHECK(ir_is_const(ir_binary(ar, OP_LOR, t, f), &v) && v == 1);
  CHECK(ir_is_const(ir_unary(ar, OP_LNOT, two), &v) && v == 0);
  CHECK(ir_is_const(ir_unary(ar, OP_NEG, imin), &v) && v == INT32_MIN);
  CHECK(ir_is_const(ir_unary(ar, OP_BNOT, u0), &v) && v == 4294967295LL);
  /* floats */
  IrExpr *half = ir_const_f(ar, DT_FLOAT32, 0.5);
  IrExpr *fsum = ir_binary(ar, OP_ADD, half, ir_const(ar, DT_INT32, 1));
  CHECK(fsum->kind == X_CONST && fsum->type == DT_FLOAT32 && fsum->fval == 1.5);
  CHECK(ir_binary(ar, OP_DIV, half, ir_const_f(ar, DT_FLOAT32, 0))->kind == X_BINARY);
  CHECK(ir_is_const(ir_cast(ar, DT_INT32, ir_const_f(ar, DT_FLOAT64, -2.7)), &v) && v == -2);
  CHECK(ir_cast(ar, DT_INT32, ir_const_f(ar, DT_FLOAT64, 1e20))->kind == X_CAST);
  CHECK(ir_is_const(ir_cast(ar, DT_BOOL, ir_const(ar, DT_INT32, 5)), &v) && v == 1);
  /* select on a constant condition */
  CHECK(ir_select(ar, t, two, seven) == two);
}

/* ---------------------------------------------------------- ranges */

/* for i in range(start, stop, step): <assign x = i + 32> (and `moved` also
 * assigns i in the body) */
static IrStmt *range_loop(Arena *ar, IrKernel *k, IrVar *i, IrVar *x, IrExpr *start, IrExpr *stop,
                          int64_t step, bool moved) {
  IrStmt *loop = ir_stmt_new(ar, S_FOR, (Span){0});
  loop->loop = (IrForStmt){i, start, stop, ir_const(ar, DT_INT32, step), 1};
  IrStmt *a = ir_stmt_new(ar, S_ASSIGN, (Span){0});
  a->assign.var = x;
  a->assign.value = ir_binary(ar, OP_ADD, ir_var_ref(ar, i), ir_const(ar, DT_INT32, 32));
  ir_block_push(ar, &loop->body, a);
  if (moved) {
    IrStmt *m = ir_stmt_new(ar, S_ASSIGN, (Span){0});
    m->assign.var = i;
    m->assign.value = ir_binary(ar, OP_ADD, ir_var_ref(ar, i), ir_const(ar, DT_INT32, 64));
    ir_block_push(ar, &loop->body, m);
  }
  ir_block_push(ar, &k->body, loop);
  return loop;
}

/* ir/ranges.c: a loop variable inside its body (on the step's grid from a
 * constant start), blockIdx below a constant grid, threadIdx below the
 * block; what the body assigns from the loop variable. */
static void test_ranges(Arena *ar) {
  IrKernel k = {0};
  k.warps = 4;
  k.grid[0] = ir_const(ar, DT_INT32, 1);
  k.grid[1] = ir_const(ar, DT_INT32, 32);
  IrVar *i = ir_new_var(ar, &k, "i", DT_INT32), *x = ir_new_var(ar, &k, "x", DT_INT32);
  IrVar *j = ir_new_var(ar, &k, "j", DT_INT32), *y = ir_new_var(ar, &k, "y", DT_INT32);
  IrVar *d = ir_new_var(ar, &k, "d", DT_INT32), *z = ir_new_var(ar, &k, "z", DT_INT32);
  IrStmt *up =
      range_loop(ar, &k, i, x, ir_const(ar, DT_INT32, 0), ir_const(ar, DT_INT32, 4064), 64, false);
  IrStmt *down =
      range_loop(ar, &k, d, z, ir_const(ar, DT_INT32, 100), ir_const(ar, DT_INT32, 3), -8, false);
  IrStmt *moved =
      range_loop(ar, &k, j, y, ir_const(ar, DT_INT32, 0), ir_const(ar, DT_INT32, 4096), 32, true);
  IrRanges *R = ir_kernel_ranges(ar, &k);
  IrRange r;
  /* after the loop i may hold 4096 (past the last trip); inside, 0 ... 4032 */
  CHECK(R->vars[i->id].lo == 0 && R->vars[i->id].hi >= 4096);
  CHECK(ir_loop_body_range(up, R, &r) && r.lo == 0 && r.hi == 4032);
  CHECK(R->vars[x->id].lo == 32 && R->vars[x->id].hi == 4064); /* assigned in the body */
  /* 100, 92, ... 4: the last above 3 on the grid */
  CHECK(ir_loop_body_range(down, R, &r) && r.lo == 4 && r.hi == 100);
  CHECK(R->vars[z->id].lo == 36 && R->vars[z->id].hi == 132);
  /* a body that moves its variable: nothing known */
  CHECK(!ir_loop_body_range(moved, R, &r));
  CHECK(R->vars[y->id].hi > 4096 + 32);
  /* the launch: blockIdx.y < 32, blockIdx.x < 1, threadIdx.x < 128 */
  CHECK(R->special[SR_CTAID_Y].lo == 0 && R->special[SR_CTAID_Y].hi == 31);
  CHECK(R->special[SR_CTAID_X].hi == 0);
  CHECK(R->special[SR_TID_X].hi == 127);
  CHECK(R->special[SR_NCTAID_Y].lo == 32 && R->special[SR_NCTAID_Y].hi == 32);
  IrExpr *col = ir_binary(ar, OP_MUL, ir_const(ar, DT_INT32, 128), ir_special(ar, SR_CTAID_Y));
  CHECK(ir_expr_range(col, R, &r) && r.lo == 0 && r.hi == 3968);
  /* no grid: blockIdx.z is any non-negative int32 */
  CHECK(R->special[SR_CTAID_Z].hi == INT32_MAX);
}

/* ------------------------------------------------------- induction */

static IrStmt *assign(Arena *ar, IrVar *v, IrExpr *value) {
  IrStmt *a = ir_stmt_new(ar, S_ASSIGN, (Span){0});
  a->assign.var = v;
  a->assign.value = value;
  return a;
}

/* ir/induction.c: for i in range(0, n, 32) (n a run-time value, o
 * assigned before the loop): [0] x = i + 64; [1] if x < n: y = x;
 * [2] w = x * 2 + o; [3] (a use). */
static void test_induction(Arena *ar) {
  IrKernel k = {0};
  k.warps = 4;
  IrVar *i = ir_new_var(ar, &k, "i", DT_INT32), *x = ir_new_var(ar, &k, "x", DT_INT32);
  IrVar *y = ir_new_var(ar, &k, "y", DT_INT32), *w = ir_new_var(ar, &k, "w", DT_INT32);
  IrVar *o = ir_new_var(ar, &k, "o", DT_INT32), *n = ir_new_var(ar, &k, "n", DT_INT32);
  IrExpr *c32 = ir_const(ar, DT_INT32, 32), *xr = ir_var_ref(ar, x), *ir = ir_var_ref(ar, i);
  ir_block_push(ar, &k.body, assign(ar, o, ir_binary(ar, OP_MUL, ir_special(ar, SR_CTAID_X), c32)));
  ir_block_push(ar, &k.body, assign(ar, n, ir_special(ar, SR_NCTAID_X)));
  IrStmt *loop = ir_stmt_new(ar, S_FOR, (Span){0});
  loop->loop = (IrForStmt){i, ir_const(ar, DT_INT32, 0), ir_var_ref(ar, n), c32, 1};
  ir_block_push(ar, &loop->body,
                assign(ar, x, ir_binary(ar, OP_ADD, ir, ir_const(ar, DT_INT32, 64))));
  IrStmt *branch = ir_stmt_new(ar, S_IF, (Span){0});
  branch->branch.cond = ir_binary(ar, OP_LT, xr, ir_var_ref(ar, n));
  ir_block_push(ar, &branch->body, assign(ar, y, xr));
  ir_block_push(ar, &loop->body, branch);
  IrExpr *twice = ir_binary(ar, OP_MUL, xr, ir_const(ar, DT_INT32, 2));
  ir_block_push(ar, &loop->body, assign(ar, w, ir_binary(ar, OP_ADD, twice, ir_var_ref(ar, o))));
  ir_block_push(ar, &loop->body, assign(ar, y, ir_var_ref(ar, w)));
  ir_block_push(ar, &k.body, loop);
  /* a second loop (not in the kernel): x_k = x_{k-1} + x_{k-1}, 40 times */
  IrStmt *chain = ir_stmt_new(ar, S_FOR, (Span){0});
  chain->loop = (IrForStmt){i, ir_const(ar, DT_INT32, 0), ir_var_ref(ar, n), c32, 1};
  IrVar *prev = i;
  for (int c = 0; c < 40; c++) {
    IrVar *v = ir_new_var(ar, &k, "c", DT_INT32);
    IrExpr *twice_prev = ir_binary(ar, OP_ADD, ir_var_ref(ar, prev), ir_var_ref(ar, prev));
    ir_block_push(ar, &chain->body, assign(ar, v, twice_prev));
    prev = v;
  }
  ir_block_push(ar, &chain->body, assign(ar, y, ir_var_ref(ar, prev)));
  IrRanges *R = ir_kernel_ranges(ar, &k);
  int64_t *M = ir_var_multiples(ar, &k);
  IrRange saved = ir_enter_loop_body(loop, R);
  IrAffine a;
  /* (i + 64) // 16 = i/16 + 4: i is a non-negative multiple of 32 */
  IrExpr *x16 = ir_binary(ar, OP_DIV, xr, ir_const(ar, DT_INT32, 16));
  CHECK(ir_loop_affine(ar, loop, 3, x16, R, M, &a) && a.num == 1 && a.den == 16 && !a.rest &&
        a.k == 4);
  /* // 128: i / 128 is not i's part divided (i is a multiple of 32 only) */
  CHECK(!ir_loop_affine(ar, loop, 3, ir_binary(ar, OP_DIV, xr, ir_const(ar, DT_INT32, 128)), R, M,
                        &a));
  /* w = (i + 64) * 2 + o at [3]: 2 i + o + 128 */
  CHECK(ir_loop_affine(ar, loop, 3, ir_var_ref(ar, w), R, M, &a) && a.num == 2 && a.den == 1 &&
        a.rest && a.rest->kind == X_VAR && a.rest->var == o && a.k == 128);
  /* x before its assignment holds the last trip's value: unknown */
  CHECK(!ir_loop_affine(ar, loop, 0, xr, R, M, &a));
  /* y at [2]: assigned inside the `if` */
  CHECK(!ir_loop_affine(ar, loop, 2, ir_var_ref(ar, y), R, M, &a));
  /* (i - 8) // 16: a negative part, which C's division rounds up */
  IrExpr *neg = ir_binary(ar, OP_SUB, ir, ir_const(ar, DT_INT32, 8));
  CHECK(!ir_loop_affine(ar, loop, 3, ir_binary(ar, OP_DIV, neg, ir_const(ar, DT_INT32, 16)), R, M,
                        &a));
  /* the chain (each x_k read twice) gives up in bounded time instead of
   * resolving 2^40 times */
  CHECK(!ir_loop_affine(ar, chain, 40, ir_var_ref(ar, prev), R, M, &a));
  /* n (not assigned in the body) is loop-invariant; x is not */
  CHECK(ir_expr_loop_invariant(ir_var_ref(ar, n), loop) && !ir_expr_loop_invariant(xr, loop));
  R->vars[i->id] = saved;
}

/* ---------------------------------------------- identities and types */

static void test_identities(Arena *ar) {
  IrKernel k = {0};
  IrVar *x = ir_new_var(ar, &k, "x", DT_INT32);
  IrVar *u = ir_new_var(ar, &k, "u", DT_UINT32);
  IrVar *b = ir_new_var(ar, &k, "b", DT_BOOL);
  IrExpr *xr = ir_var_ref(ar, x), *ur = ir_var_ref(ar, u);
  IrExpr *br = ir_var_ref(ar, b);
  IrExpr *z = ir_const(ar, DT_INT32, 0), *one = ir_const(ar, DT_INT32, 1);
  int64_t v;
  CHECK(ir_binary(ar, OP_ADD, xr, z) == xr);
  CHECK(ir_binary(ar, OP_ADD, z, xr) == xr);
  CHECK(ir_binary(ar, OP_SUB, xr, z) == xr);
  CHECK(ir_binary(ar, OP_MUL, one, xr) == xr);
  CHECK(ir_binary(ar, OP_DIV, xr, one) == xr);
  CHECK(ir_is_const(ir_binary(ar, OP_MUL, xr, z), &v) && v == 0);
  /* 0 - x is not an identity */
  CHECK(ir_binary(ar, OP_SUB, z, xr)->kind == X_BINARY);
  /* int32 op uint32 -> uint32, with an explicit cast of the int32 side */
  IrExpr *mixed = ir_binary(ar, OP_ADD, xr, ur);
  CHECK(mixed->type == DT_UINT32 && mixed->a->kind == X_CAST && mixed->a->type == DT_UINT32 &&
        mixed->b == ur);
  /* uint32 ^ bool -> uint32 (the pipeline's phase flip) */
  IrExpr *flip = ir_binary(ar, OP_XOR, ur, ir_binary(ar, OP_EQ, xr, z));
  CHECK(flip->type == DT_UINT32 && flip->b->kind == X_CAST);
  /* bool + bool -> int32; comparisons -> bool */
  CHECK(ir_binary(ar, OP_ADD, br, br)->type == DT_INT32);
  CHECK(ir_binary(ar, OP_LT, xr, ur)->type == DT_BOOL);
  /* int32 with int64 -> int64 */
  CHECK(ir_binary(ar, OP_MUL, xr, ir_const(ar, DT_INT64, 3))->type == DT_INT64);
  /* dtypes */
  DType t;
  CHECK(dtype_from_name("bfloat16", &t) && t == DT_BFLOAT16);
  CHECK(dtype_from_name("uint64", &t) && t == DT_UINT64);
  CHECK(!dtype_from_name("void", &t) && !dtype_from_name("float8", &t));
  CHECK(dtype_bytes(DT_FLOAT16) == 2 && dtype_bytes(DT_BOOL) == 1);
  CHECK(dtype_is_signed(DT_INT64) && !dtype_is_signed(DT_UINT32));
  CHECK(strcmp(ir_op_name(OP_MOD), "%") == 0);
}

/* The printed form of an expression. */
static char *expr_text(const IrExpr *e) {
  static char buf[512];
  FILE *f = fmemopen(buf, sizeof buf, "w");
  ir_print_expr(f, e);
  fclose(f);
  return buf;
}

static void test_print_expr(Arena *ar) {
  IrParam m = {.index = 0, .name = "m_size", .type = DT_INT32, .elem = DT_VOID};
  IrParam n = {.index = 1, .name = "n_size", .type = DT_INT32, .elem = DT_VOID};
  IrExpr *c = ir_const(ar, DT_INT32, 127), *d = ir_const(ar, DT_INT32, 128);
  IrExpr *mb = ir_binary(ar, OP_DIV, ir_binary(ar, OP_ADD, ir_param_ref(ar, &m), c), d);
  IrExpr *nb = ir_binary(ar, OP_DIV,
                         ir_binary(ar, OP_ADD, ir_param_ref(ar, &n), ir_const(ar, DT_INT32, 255)),
                         ir_const(ar, DT_INT32, 256));
  CHECK(!strcmp(expr_text(ir_binary(ar, OP_MUL, mb, nb)),
                "((m_size + 127) / 128) * ((n_size + 255) / 256)"));
  CHECK(!strcmp(expr_text(ir_binary(ar, OP_MIN, ir_param_ref(ar, &m), c)), "min(m_size, 127)"));
  CHECK(
      !strcmp(expr_text(ir_cast(ar, DT_UINT32, ir_special(ar, SR_CTAID_X))), "uint32(blockIdx.x)"));
  CHECK(!strcmp(expr_text(ir_const_f(ar, DT_FLOAT32, 0.1)), "0.1"));
  CHECK(!strcmp(expr_text(ir_const_f(ar, DT_FLOAT32, 2)), "2.0"));
  CHECK(!strcmp(expr_text(ir_const(ar, DT_BOOL, 1)), "true"));
}

/* ir_expr_same: trees built apart compare equal node by node (what lets
 * the backend see that a view's extent T is the grid's T); another
 * parameter, special register, operator or constant tells them apart. */
static void test_expr_same(Arena *ar) {
  IrParam t = {.index = 0, .name = "T", .type = DT_INT32, .elem = DT_VOID};
  IrParam u = {.index = 1, .name = "U", .type = DT_INT32, .elem = DT_VOID};
  IrExpr *a = ir_binary(ar, OP_ADD, ir_param_ref(ar, &t), ir_special(ar, SR_CTAID_X));
  IrExpr *b = ir_binary(ar, OP_ADD, ir_param_ref(ar, &t), ir_special(ar, SR_CTAID_X));
  CHECK(a != b && ir_expr_same(a, b));
  CHECK(ir_expr_same(ir_param_ref(ar, &t), ir_param_ref(ar, &t)));
  CHECK(!ir_expr_same(ir_param_ref(ar, &t), ir_param_ref(ar, &u)));
  CHECK(!ir_expr_same(ir_special(ar, SR_CTAID_X), ir_special(ar, SR_CTAID_Y)));
  CHECK(!ir_expr_same(a, ir_binary(ar, OP_SUB, ir_param_ref(ar, &t), ir_special(ar, SR_CTAID_X))));
  CHECK(!ir_expr_same(ir_const(ar, DT_INT32, 4), ir_const(ar, DT_INT32, 5)));
  CHECK(!ir_expr_same(ir_const_f(ar, DT_FLOAT32, 0.5), ir_const_f(ar, DT_FLOAT32, 0.25)));
  CHECK(!ir_expr_same(ir_const(ar, DT_INT32, 4), ir_const(ar, DT_INT64, 4)));
  CHECK(!ir_expr_same(a, NULL) && ir_expr_same(NULL, NULL));
}

/* A parameter assume()d a multiple of 128 (IrParam.multiple) makes the
 * gcd analysis see offsets over it as multiples: hidden * 2 + 2048 is a
 * multiple of 256; hidden + 8 only of 8; an unknown parameter of 1; and
 * quotients by constants that divide the multiple. */
static void test_param_multiples(Arena *ar) {
  IrParam h = {.index = 0, .name = "hidden", .type = DT_INT32, .elem = DT_VOID, .multiple = 128};
  IrParam u = {.index = 1, .name = "n", .type = DT_INT32, .elem = DT_VOID};
  IrExpr *hp = ir_param_ref(ar, &h);
  IrExpr *twice = ir_binary(ar, OP_MUL, hp, ir_const(ar, DT_INT32, 2));
  CHECK(ir_expr_multiple(ir_binary(ar, OP_ADD, twice, ir_const(ar, DT_INT32, 2048)), NULL) == 256);
  CHECK(ir_expr_multiple(ir_binary(ar, OP_ADD, hp, ir_const(ar, DT_INT32, 8)), NULL) == 8);
  CHECK(ir_expr_multiple(ir_param_ref(ar, &u), NULL) == 1);
  /* an exact quotient keeps the rest: hidden // 16 is a multiple of 8,
   * hidden // 256 of nothing known; a division by a variable neither */
  CHECK(ir_expr_multiple(ir_binary(ar, OP_DIV, hp, ir_const(ar, DT_INT32, 16)), NULL) == 8);
  CHECK(ir_expr_multiple(ir_binary(ar, OP_DIV, hp, ir_const(ar, DT_INT32, 256)), NULL) == 1);
  CHECK(ir_expr_multiple(ir_binary(ar, OP_DIV, hp, ir_param_ref(ar, &u)), NULL) == 1);
}

/* ------------------------------------------------------ the V5 kernel */

/* What the variants change (tests of the diagnostics). */
typedef struct Variant {
  int64_t stages;         /* pipeline depth (4) */
  int64_t sa_rows;        /* rows of one A slab (64) */
  int64_t sa_cols;        /* K extent of A and B tiles (64) */
  int64_t sb_rows;        /* rows of one B tile (256) */
  int64_t consumer_begin; /* first thread of the consumer group (0) */
  bool consumer;          /* build the consumer warp group */
  bool assign_stage;      /* assign `stage` before the loops */
  int64_t producer_begin; /* first thread of the producer warp (256) */
  int64_t acc_cols;       /* N of the accumulator (256) */
} Variant;

static const Variant V5 = {4, 64, 64, 256, 0, true, true, 256, 256};

typedef struct Builder {
  Arena *ar;
  IrKernel *k;
} Builder;

static IrParam *add_param(Builder *b, const char *name, bool ptr) {
  IrKernel *k = b->k;
  IrParam *p = arena_alloc(b->ar, sizeof *p);
  p->index = k->nparams;
  p->name = arena_strdup(b->ar, name);
  p->type = ptr ? DT_UINT64 : DT_INT32;
  p->is_ptr = ptr;
  p->elem = ptr ? DT_FLOAT16 : DT_VOID;
  IrParam **ps = arena_alloc(b->ar, (size_t)(k->nparams + 1) * sizeof *ps);
  if (k->nparams) memcpy(ps, k->params, (size_t)k->nparams * sizeof *ps);
  ps[k->nparams++] = p;
  k->params = ps;
  return p;
}

static IrTensor *global_view(Builder *b, const char *name, IrParam *ptr, IrParam *rows,
                             IrParam *cols, int line) {
  int64_t shape[2] = {0, 0};
  IrTensor *t = ir_new_tensor(b->ar, b->k, name, MS_GLOBAL, DT_FLOAT16, 2, shape, line_span(line));
  t->gptr = ir_param_ref(b->ar, ptr);
  t->gshape[0] = ir_param_ref(b->ar, rows);
  t->gshape[1] = ir_param_ref(b->ar, cols);
  return t;
}

static IrTensor *mbarriers(Builder *b, const char *name, int64_t n, int64_t count, int line) {
  IrTensor *t = ir_new_tensor(b->ar, b->k, name, MS_SHARED, DT_UINT64, 1, &n, line_span(line));
  t->is_mbarrier = true;
  t->mbar_counts = arena_alloc(b->ar, (size_t)n * sizeof *t->mbar_counts);
  for (int i = 0; i < n; i++) t->mbar_counts[i] = count;
  return t;
}

static IrStmt *stmt(Builder *b, IrBlock *blk, SKind kind, int line) {
  IrStmt *s = ir_stmt_new(b->ar, kind, line_span(line));
  ir_block_push(b->ar, blk, s);
  return s;
}

static IrExpr *cint(Builder *b, int64_t v) { return ir_const(b->ar, DT_INT32, v); }
static IrExpr *var(Builder *b, IrVar *v) { return ir_var_ref(b->ar, v); }

static IrRef ref1(IrTensor *t, IrExpr *i0) { return (IrRef){.t = t, .nidx = 1, .idx = {i0}}; }

static IrRef ref2(IrTensor *t, IrExpr *i0, IrExpr *i1) {
  return (IrRef){.t = t, .nidx = 2, .idx = {i0, i1}};
}

/* stage = (stage + 1) % stages */
static void advance(Builder *b, IrBlock *blk, IrVar *stage, int64_t stages, int line) {
  IrStmt *s = stmt(b, blk, S_ASSIGN, line);
  s->assign.var = stage;
  s->assign.value = ir_binary(b->ar, OP_MOD, ir_binary(b->ar, OP_ADD, var(b, stage), cint(b, 1)),
                              cint(b, stages));
}

static IrExpr **offsets2(Builder *b, IrExpr *o0, IrExpr *o1) {
  IrExpr **o = arena_alloc(b->ar, 2 * sizeof *o);
  o[0] = o0;
  o[1] = o1;
  return o;
}

static void tma_load(Builder *b, IrBlock *blk, IrTensor *g, IrRef dst, IrExpr *o0, IrExpr *o1,
                     IrRef bar, int line) {
  IrStmt *s = stmt(b, blk, S_TMA_LOAD, line);
  s->tma.global = g;
  s->tma.shared = dst;
  s->tma.barrier = bar;
  s->tma.offsets = offsets2(b, o0, o1);
  s->tma.noffsets = 2;
}

typedef struct V5Tensors {
  IrTensor *ga, *gb, *gc, *sa, *sb, *empty, *full;
  IrVar *stage, *phase, *om, *on;
} V5Tensors;

/* The TMA producer warp: threads [256, 288). */
static void build_producer(Builder *b, const Variant *v, V5Tensors *x) {
  IrStmt *tg = stmt(b, &b->k->body, S_THREAD_GROUP, 10);
  tg->group.begin = v->producer_begin;
  tg->group.count = 32;
  IrStmt *loop = stmt(b, &tg->body, S_FOR, 11);
  loop->loop.var = ir_new_var(b->ar, b->k, "offset_k", DT_INT32);
  loop->loop.start = cint(b, 0);
  loop->loop.stop = ir_param_ref(b->ar, b->k->params[2]);
  loop->loop.step = cint(b, v->sa_cols);
  loop->loop.unroll = v->stages;
  IrExpr *ok = var(b, loop->loop.var), *st = var(b, x->stage);
  IrStmt *w = stmt(b, &loop->body, S_MBAR_WAIT, 12);
  w->mbar.barrier = ref1(x->empty, st);
  w->mbar.parity = var(b, x->phase);
  w->mbar.sem = MBAR_SEM_RELAXED;
  w->mbar.scope = MBAR_SCOPE_CTA;
  IrStmt *one = stmt(b, &loop->body, S_SINGLE_THREAD, 13);
  IrStmt *tx = stmt(b, &one->body, S_MBAR_EXPECT_TX, 13);
  tx->mbar.barrier = ref1(x->full, st);
  IrRef a0 = ref2(x->sa, st, cint(b, 0)), a1 = ref2(x->sa, st, cint(b, 1));
  IrRef bt = ref1(x->sb, st);
  tx->mbar.tx_bytes = cint(b, ir_ref_nbytes(&a0) + ir_ref_nbytes(&a1) + ir_ref_nbytes(&bt));
  tma_load(b, &loop->body, x->ga, a0, var(b, x->om), ok, ref1(x->full, st), 14);
  tma_load(b, &loop->body, x->ga, a1, ir_binary(b->ar, OP_ADD, var(b, x->om), cint(b, v->sa_rows)),
           ok, ref1(x->full, st), 15);
  tma_load(b, &loop->body, x->gb, bt, var(b, x->on), ok, ref1(x->full, st), 16);
  advance(b, &loop->body, x->stage, v->stages, 17);
  IrStmt *flip = stmt(b, &loop->body, S_ASSIGN, 17);
  flip->assign.var = x->phase;
  flip->assign.value = ir_binary(b->ar, OP_XOR, var(b, x->phase),
                                 ir_binary(b->ar, OP_EQ, var(b, x->stage), cint(b, 0)));
}

/* One consumer warp group: one MMA per stage, cast, store. */
static void build_consumer(Builder *b, const Variant *v, V5Tensors *x) {
  IrStmt *tg = stmt(b, &b->k->body, S_THREAD_GROUP, 18);
  tg->group.begin = v->consumer_begin;
  tg->group.count = 128;
  int64_t acc_shape[2] = {v->sa_rows, v->acc_cols};
  IrTensor *acc =
      ir_new_tensor(b->ar, b->k, "acc", MS_REGISTER, DT_FLOAT32, 2, acc_shape, line_span(19));
  acc->nthreads = 128;
  acc->has_init = true;
  IrStmt *fill = stmt(b, &tg->body, S_FILL, 19);
  fill->fill.dst = acc;
  fill->fill.value = ir_const_f(b->ar, DT_FLOAT32, 0.0);
  IrExpr *st = var(b, x->stage);
  stmt(b, &tg->body, S_WGMMA_FENCE, 20);
  IrStmt *mma = stmt(b, &tg->body, S_WGMMA_MMA, 20);
  mma->wgmma.acc = acc;
  mma->wgmma.a = ref2(x->sa, st, cint(b, 0));
  mma->wgmma.b = ref1(x->sb, st);
  mma->wgmma.b.transposed = true;
  stmt(b, &tg->body, S_WGMMA_COMMIT, 20);
  IrStmt *wait = stmt(b, &tg->body, S_WGMMA_WAIT, 20);
  wait->wait.max_pending = 0;
  IrTensor *casted =
      ir_new_tensor(b->ar, b->k, "casted", MS_REGISTER, DT_FLOAT16, 2, acc_shape, line_span(21));
  casted->nthreads = 128;
  IrStmt *cast = stmt(b, &tg->body, S_CAST, 21);
  cast->cast.dst = casted;
  cast->cast.src = acc;
  IrStmt *store = stmt(b, &tg->body, S_STORE_GLOBAL, 22);
  store->gmem.global = x->gc;
  store->gmem.reg = casted;
  store->gmem.offsets = offsets2(b, var(b, x->om), var(b, x->on));
  store->gmem.noffsets = 2;
}

/* The header: parameters, grid, tensors, and the variables set up front. */
static void build_header(Builder *b, const Variant *v, V5Tensors *x) {
  IrKernel *k = b->k;
  k->name = "MatmulWGMMAV5";
  k->script = "MatmulWGMMAV5";
  k->span = line_span(1);
  static char *names[] = {"num_stages", "block_k"};
  k->nconfig = 2;
  k->config_names = names;
  k->config_values = arena_alloc(b->ar, 2 * sizeof(int64_t));
  k->config_values[0] = v->stages;
  k->config_values[1] = v->sa_cols;
  IrParam *m = add_param(b, "m_size", false), *n = add_param(b, "n_size", false);
  IrParam *kk = add_param(b, "k_size", false);
  IrParam *ap = add_param(b, "a_ptr", true), *bp = add_param(b, "b_ptr", true);
  IrParam *cp = add_param(b, "c_ptr", true);
  Arena *ar = b->ar;
  k->grid[0] = ir_binary(
      ar, OP_MUL,
      ir_binary(ar, OP_DIV, ir_binary(ar, OP_ADD, ir_param_ref(ar, m), cint(b, 127)), cint(b, 128)),
      ir_binary(ar, OP_DIV, ir_binary(ar, OP_ADD, ir_param_ref(ar, n), cint(b, 255)),
                cint(b, 256)));
  k->grid[1] = k->grid[2] = cint(b, 1);
  k->warps = 9;
  x->ga = global_view(b, "ga", ap, m, kk, 2);
  x->gb = global_view(b, "gb", bp, n, kk, 3);
  x->gc = global_view(b, "gc", cp, m, n, 4);
  int64_t sa_shape[4] = {v->stages, 2, v->sa_rows, v->sa_cols};
  int64_t sb_shape[3] = {v->stages, v->sb_rows, v->sa_cols};
  x->sa = ir_new_tensor(ar, k, "sa", MS_SHARED, DT_FLOAT16, 4, sa_shape, line_span(5));
  x->sb = ir_new_tensor(ar, k, "sb", MS_SHARED, DT_FLOAT16, 3, sb_shape, line_span(6));
  x->empty = mbarriers(b, "empty", v->stages, 2, 7);
  x->full = mbarriers(b, "full", v->stages, 1, 8);
  x->stage = ir_new_var(ar, k, "stage", DT_INT32);
  x->phase = ir_new_var(ar, k, "phase", DT_UINT32);
  x->om = ir_new_var(ar, k, "offset_m", DT_INT32);
  x->on = ir_new_var(ar, k, "offset_n", DT_INT32);
  IrVar *init[4] = {x->stage, x->phase, x->om, x->on};
  IrExpr *bid = ir_special(ar, SR_CTAID_X);
  IrExpr *nblk =
      ir_binary(ar, OP_DIV, ir_binary(ar, OP_ADD, ir_param_ref(ar, n), cint(b, 255)), cint(b, 256));
  IrExpr *vals[4] = {cint(b, 0), ir_const(ar, DT_UINT32, 1),
                     ir_binary(ar, OP_MUL, ir_binary(ar, OP_DIV, bid, nblk), cint(b, 128)),
                     ir_binary(ar, OP_MUL, ir_binary(ar, OP_MOD, bid, nblk), cint(b, 256))};
  for (int i = v->assign_stage ? 0 : 1; i < 4; i++) {
    IrStmt *s = stmt(b, &k->body, S_ASSIGN, 9);
    s->assign.var = init[i];
    s->assign.value = vals[i];
  }
}

static IrModule *build_v5(Arena *ar, const Source *src, const Variant *v) {
  IrModule *m = arena_alloc(ar, sizeof *m);
  m->ar = ar;
  m->src = src;
  m->nkernels = 1;
  m->kernels = arena_alloc(ar, sizeof *m->kernels);
  m->kernels[0] = arena_alloc(ar, sizeof(IrKernel));
  Builder b = {ar, m->kernels[0]};
  V5Tensors x;
  build_header(&b, v, &x);
  build_producer(&b, v, &x);
  if (v->consumer) build_consumer(&b, v, &x);
  return m;
}

/* Finds the idx-th statement of a kind, depth first. */
static IrStmt *find_stmt(IrBlock *blk, SKind kind, int *idx) {
  for (int i = 0; i < blk->len; i++) {
    IrStmt *s = blk->items[i];
    if (s->kind == kind && (*idx)-- == 0) return s;
    IrStmt *inner = find_stmt(&s->body, kind, idx);
    if (inner) return inner;
  }
  return NULL;
}

static IrStmt *nth_stmt(IrKernel *k, SKind kind, int n) { return find_stmt(&k->body, kind, &n); }

/* The passes on the real V5 shapes: swizzles, maps, offsets, layouts. */
static void test_v5_passes(Arena *ar, const Source *src) {
  IrModule *m = build_v5(ar, src, &V5);
  Diag d;
  diag_init(&d, src, stderr);
  CHECK(ir_run_passes(m, &d));
  IrKernel *k = m->kernels[0];
  IrTensor **t = k->tensors;
  CHECK(t[3]->layout == LAYOUT_SWIZZLED && t[3]->swizzle_bytes == 128);
  CHECK(t[4]->layout == LAYOUT_SWIZZLED && t[4]->swizzle_bytes == 128);
  CHECK(t[3]->smem_offset == 0 && t[3]->align == 1024);
  CHECK(t[4]->smem_offset == 65536 && t[4]->align == 1024);
  CHECK(t[5]->smem_offset == 196608 && t[5]->align == 8);
  CHECK(t[6]->smem_offset == 196640);
  /* + the consumer's [1, 64, 64] staging tile (stage.c) at the next
   * 1024-byte boundary, + base rounding slack */
  CHECK(k->smem_bytes == 197632 + 8192 + 1024);
  CHECK(t[0]->layout == LAYOUT_ROW_MAJOR);
  CHECK(t[7]->layout == LAYOUT_WGMMA_ACC && t[8]->layout == LAYOUT_WGMMA_ACC);
  CHECK(k->ntmaps == 2);
  if (k->ntmaps == 2) {
    CHECK(k->tmaps[0]->global == t[0] && k->tmaps[0]->box[0] == 64 && k->tmaps[0]->box[1] == 64 &&
          k->tmaps[0]->swizzle_bytes == 128);
    CHECK(k->tmaps[1]->global == t[1] && k->tmaps[1]->box[0] == 256 && k->tmaps[1]->box[1] == 64);
  }
  CHECK(nth_stmt(k, S_TMA_LOAD, 0)->tma.tmap == 0);
  CHECK(nth_stmt(k, S_TMA_LOAD, 1)->tma.tmap == 0);
  CHECK(nth_stmt(k, S_TMA_LOAD, 2)->tma.tmap == 1);
  /* the passes are repeatable: a second run gives the same plan */
  CHECK(ir_run_passes(m, &d) && k->ntmaps == 2 && k->smem_bytes == 197632 + 8192 + 1024);
  /* a register tensor with no WGMMA link is spatial */
  int64_t shape[1] = {256};
  IrTensor *lone = ir_new_tensor(ar, k, "lone", MS_REGISTER, DT_FLOAT32, 1, shape, line_span(19));
  lone->nthreads = 128;
  CHECK(ir_infer_layouts(m, &d) && lone->layout == LAYOUT_SPATIAL && lone->reg &&
        lone->reg->nthreads == 128 && lone->reg->nslots == 2);
  CHECK(d.nerrors == 0);
}

/* An untouched shared tensor is row-major and 16-byte aligned; the
 * accumulator layout flows through element-wise statements. */
static void test_side_tensors(Arena *ar, const Source *src) {
  IrModule *m = build_v5(ar, src, &V5);
  IrKernel *k = m->kernels[0];
  int64_t n = 16;
  IrTensor *scratch = ir_new_tensor(ar, k, "scratch", MS_SHARED, DT_FLOAT32, 1, &n, line_span(6));
  IrTensor *casted = k->tensors[8];
  IrTensor *scaled =
      ir_new_tensor(ar, k, "scaled", MS_REGISTER, DT_FLOAT16, 2, casted->shape, line_span(21));
  scaled->nthreads = 128;
  IrTensor *sum =
      ir_new_tensor(ar, k, "sum", MS_REGISTER, DT_FLOAT16, 2, casted->shape, line_span(21));
  sum->nthreads = 128;
  IrBlock *consumer = &k->body.items[k->body.len - 1]->body;
  /* appended after the store: sum = scaled + scaled, then scaled = casted
   * * 2; sum learns the layout only after scaled does (a second round) */
  IrStmt *add = ir_stmt_new(ar, S_ELEMWISE, line_span(21));
  add->elemwise = (IrElemwiseStmt){.dst = sum, .a = scaled, .b = scaled, .op = OP_ADD};
  IrStmt *mul = ir_stmt_new(ar, S_ELEMWISE, line_span(21));
  mul->elemwise = (IrElemwiseStmt){
      .dst = scaled, .a = casted, .scalar = ir_const_f(ar, DT_FLOAT16, 2.0), .op = OP_MUL};
  ir_block_push(ar, consumer, add);
  ir_block_push(ar, consumer, mul);
  Diag d;
  diag_init(&d, src, stderr);
  CHECK(ir_run_passes(m, &d));
  CHECK(scratch->layout == LAYOUT_ROW_MAJOR && scratch->swizzle_bytes == 0);
  CHECK(scratch->align == 16 && scratch->smem_offset == 196672);
  CHECK(k->smem_bytes == 197632 + 8192 + 1024); /* the staging tile above scratch */
  CHECK(scaled->layout == LAYOUT_WGMMA_ACC && sum->layout == LAYOUT_WGMMA_ACC);
}

/* A shared tensor of n bytes (float16, n even) created now. */
static IrTensor *smem_tensor(Arena *ar, IrKernel *k, const char *name, int64_t n, int swizzle) {
  int64_t elems = n / 2;
  IrTensor *t = ir_new_tensor(ar, k, name, MS_SHARED, DT_FLOAT16, 1, &elems, line_span(5));
  t->layout = swizzle ? LAYOUT_SWIZZLED : LAYOUT_ROW_MAJOR;
  t->swizzle_bytes = swizzle;
  return t;
}

/* free_shared(t) when the kernel has its tensors so far. */
static void free_at(IrKernel *k, IrTensor *t) {
  t->freed_at = line_span(24);
  t->freed_before = k->ntensors;
}

/* Planning with frees (ir/smem.c): first fit in what was freed, out of
 * order frees merged, the top lowered by what ends there, alignment in a
 * hole, mbarriers above every byte used before (they are initialised at
 * entry); the verifier accepts the overlaps of disjoint lifetimes and
 * refuses one of overlapping lifetimes. */
static void test_smem_reuse(Arena *ar, const Source *src) {
  IrKernel *k = arena_alloc(ar, sizeof *k);
  k->name = "K";
  k->span = line_span(1);
  k->grid[0] = k->grid[1] = k->grid[2] = ir_const(ar, DT_INT32, 1);
  k->warps = 4;
  IrModule m = {ar, src, &k, 1};
  IrTensor *a = smem_tensor(ar, k, "a", 1024, 0), *b = smem_tensor(ar, k, "b", 2048, 0);
  IrTensor *c = smem_tensor(ar, k, "c", 512, 0);
  free_at(k, a); /* out of order: c is freed with a, b stays */
  free_at(k, c);
  IrTensor *d = smem_tensor(ar, k, "d", 1000, 0); /* a's hole: first fit */
  IrTensor *e = smem_tensor(ar, k, "e", 256, 0);  /* c ended at the top: lowered there */
  free_at(k, b);
  free_at(k, d); /* d and b merge into [0, 3072) */
  IrTensor *f = smem_tensor(ar, k, "f", 1000, 0);
  IrTensor *g = smem_tensor(ar, k, "g", 1024, 128); /* 1024-aligned in the hole */
  IrTensor *bar =
      ir_new_tensor(ar, k, "bar", MS_SHARED, DT_UINT64, 1, (int64_t[]){2}, line_span(7));
  bar->is_mbarrier = true;
  bar->mbar_counts = (int64_t[]){1, 1};
  bar->layout = LAYOUT_ROW_MAJOR;
  Diag dg;
  diag_init(&dg, src, stderr);
  CHECK(ir_plan_smem(&m, &dg));
  CHECK(a->smem_offset == 0 && b->smem_offset == 1024 && c->smem_offset == 3072);
  CHECK(d->smem_offset == 0 && e->smem_offset == 3072);
  CHECK(f->smem_offset == 0 && g->smem_offset == 1024 && g->align == 1024);
  CHECK(bar->smem_offset == 3584); /* above c's old bytes, not in [2048, 3072) */
  CHECK(k->smem_bytes == 3600 + 1024);
  CHECK(ir_check(&m, &dg));
  FILE *sink = tmpfile();
  Diag quiet;
  diag_init(&quiet, src, sink ? sink : stderr);
  e->smem_offset = 1536; /* over g, which is live with it */
  CHECK(!ir_check(&m, &quiet));
  e->smem_offset = 3072;
  if (sink) fclose(sink);
}

/* The verifier catches pass bugs: a wrong tensor map, overlapping shared
 * tensors, an accumulator layout on a tensor that cannot hold it. */
static void test_verifier_catches(Arena *ar, const Source *src) {
  FILE *sink = tmpfile();
  Diag d;
  diag_init(&d, src, sink ? sink : stderr);
  IrModule *m = build_v5(ar, src, &V5);
  IrKernel *k = m->kernels[0];
  CHECK(ir_run_passes(m, &d) && ir_check(m, &d));
  IrStmt *load = nth_stmt(k, S_TMA_LOAD, 0);
  load->tma.tmap = 1; /* gb's map for a load from ga */
  CHECK(!ir_check(m, &d));
  load->tma.tmap = 0;
  k->tensors[4]->smem_offset = 1024; /* sb over sa */
  CHECK(!ir_check(m, &d));
  k->tensors[4]->smem_offset = 65536;
  k->tensors[0]->layout = LAYOUT_NONE; /* layouts half done */
  k->tensors[7]->layout = LAYOUT_NONE;
  CHECK(!ir_check(m, &d));
  k->tensors[7]->layout = LAYOUT_WGMMA_ACC;
  k->tensors[7]->nthreads = 32;
  CHECK(!ir_check(m, &d));
  k->tensors[7]->nthreads = 128;
  k->tensors[0]->layout = LAYOUT_ROW_MAJOR;
  int errors = d.nerrors;
  CHECK(ir_check(m, &d) && d.nerrors == errors);
  if (sink) fclose(sink);
}

/* ------------------------------------------------------- mutation */

/* ir_assign_barriers: barrier 0 over the whole block, one named barrier
 * per distinct thread group that syncs (numbered in text order, shared by
 * two groups over the same threads), none under single_thread(); a 16th
 * group gets 16 and the checker refuses it. */
static IrStmt *add_stmt(Arena *ar, IrBlock *b, SKind kind) {
  IrStmt *s = ir_stmt_new(ar, kind, line_span(1));
  ir_block_push(ar, b, s);
  return s;
}

static IrStmt *add_group(Arena *ar, IrBlock *b, int64_t begin, int64_t count) {
  IrStmt *g = add_stmt(ar, b, S_THREAD_GROUP);
  g->group = (IrGroupStmt){.begin = begin, .count = count};
  return g;
}

static void test_barriers(Arena *ar, const Source *src) {
  IrKernel *k = arena_alloc(ar, sizeof *k);
  k->name = k->script = "Barriers";
  k->warps = 16;
  k->span = line_span(1);
  for (int i = 0; i < 3; i++) k->grid[i] = ir_const(ar, DT_INT32, 1);
  IrModule m = {.ar = ar, .src = src, .kernels = &k, .nkernels = 1};
  IrStmt *whole = add_stmt(ar, &k->body, S_SYNC);
  IrBlock *g1 = &add_group(ar, &k->body, 64, 64)->body;
  IrStmt *a = add_stmt(ar, g1, S_SYNC);
  IrBlock *g2 = &add_group(ar, g1, 32, 32)->body; /* threads [96, 128) */
  IrStmt *nested = add_stmt(ar, g2, S_SYNC);
  IrStmt *again = add_stmt(ar, &add_group(ar, &k->body, 64, 64)->body, S_SYNC);
  IrStmt *one = add_stmt(ar, &add_stmt(ar, g1, S_SINGLE_THREAD)->body, S_SYNC);
  IrStmt *all = add_stmt(ar, &add_group(ar, &k->body, 0, 512)->body, S_SYNC);
  ir_assign_barriers(&m);
  CHECK(whole->sync.barrier_id == 0 && a->sync.barrier_id == 1);
  CHECK(nested->sync.barrier_id == 2 && again->sync.barrier_id == 1);
  CHECK(one->sync.barrier_id == 0 && all->sync.barrier_id == 0);
  g1->len--; /* the checker refuses the sync() under single_thread() */
  FILE *sink = tmpfile();
  Diag d;
  diag_init(&d, src, sink ? sink : stderr);
  CHECK(ir_check(&m, &d));
  IrStmt *last = NULL;
  /* 14 more groups of one warp each (barriers 3 .. 16); warp 3, threads
   * [96, 128), already has barrier 2 */
  for (int64_t warp = 0, n = 0; n < 14; warp++) {
    if (warp == 3) continue;
    last = add_stmt(ar, &add_group(ar, &k->body, 32 * warp, 32)->body, S_SYNC);
    n++;
  }
  ir_assign_barriers(&m);
  CHECK(last->sync.barrier_id == IR_MAX_NAMED_BARRIERS + 1);
  CHECK(!ir_check(&m, &d) && d.nerrors == 1);
  if (sink) fclose(sink);
}

/* Random corruptions of the V5 IR (xorshift, fixed seed: reproducible).
 * The passes must never crash on them, and never fail without saying
 * why. */
static uint64_t rng_state = 88172645463325252ULL;

static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static int64_t any_size(void) {
  static const int64_t sizes[] = {-1, 0,  1,   2,   3,   8,       16,
                                  63, 64, 128, 256, 512, 1 << 20, INT64_MAX / 2};
  return sizes[rng() % (sizeof sizes / sizeof sizes[0])];
}

/* The statement's first and second size fields (a loop's unroll, a
 * group's bounds, a wait's count, a slice's columns), or NULL. */
static int64_t *size_field(IrStmt *s, int i) {
  switch (s->kind) {
  case S_FOR:
    return i == 0 ? &s->loop.unroll : NULL;
  case S_THREAD_GROUP:
    return i == 0 ? &s->group.begin : &s->group.count;
  case S_TMA_WAIT:
  case S_WGMMA_WAIT:
    return i == 0 ? &s->wait.max_pending : NULL;
  case S_SLICE:
    return i == 0 ? &s->slice.begin : &s->slice.end;
  default:
    return NULL;
  }
}

/* The statement's view operand i (0 or 1), or NULL. */
static IrRef *view_field(IrStmt *s, int i) {
  switch (s->kind) {
  case S_MBAR_WAIT:
  case S_MBAR_ARRIVE:
  case S_MBAR_EXPECT_TX:
    return i == 0 ? &s->mbar.barrier : NULL;
  case S_TMA_LOAD:
  case S_TMA_STORE:
    return i == 0 ? &s->tma.shared : &s->tma.barrier;
  case S_WGMMA_MMA:
    return i == 0 ? &s->wgmma.a : &s->wgmma.b;
  case S_LOAD_SHARED:
  case S_STORE_SHARED:
    return i == 0 ? &s->smem.shared : NULL;
  default:
    return NULL;
  }
}

/* The statement's tensor operand i (0 to 2), or NULL. */
static IrTensor **tensor_field(IrStmt *s, int i) {
  IrTensor **t[3] = {NULL, NULL, NULL};
  switch (s->kind) {
  case S_TMA_LOAD:
  case S_TMA_STORE:
    t[0] = &s->tma.global;
    break;
  case S_WGMMA_MMA:
    t[0] = &s->wgmma.acc;
    break;
  case S_FILL:
    t[0] = &s->fill.dst;
    break;
  case S_CAST:
    t[0] = &s->cast.dst, t[1] = &s->cast.src;
    break;
  case S_ELEMWISE:
    t[0] = &s->elemwise.dst, t[1] = &s->elemwise.a, t[2] = &s->elemwise.b;
    break;
  case S_LOAD_GLOBAL:
  case S_STORE_GLOBAL:
    t[0] = &s->gmem.global, t[1] = &s->gmem.reg;
    break;
  case S_LOAD_SHARED:
  case S_STORE_SHARED:
    t[0] = &s->smem.reg;
    break;
  case S_SLICE:
    t[0] = &s->slice.dst, t[1] = &s->slice.src;
    break;
  default:
    break;
  }
  return t[i];
}

static void mutate_stmts(IrKernel *k, IrBlock *b) {
  for (int i = 0; i < b->len; i++) {
    IrStmt *s = b->items[i];
    int c = (int)(rng() % 12);
    switch (c) {
    case 0:
    case 1: {
      int64_t size = any_size(), *f = size_field(s, c);
      if (f) *f = size;
      break;
    }
    case 2: {
      int nidx = (int)(rng() % 6) - 1;
      IrRef *r = view_field(s, 0);
      if (r) r->nidx = nidx;
      break;
    }
    case 3: {
      IrRef *r = view_field(s, 1);
      if (r) r->transposed = !r->transposed;
      break;
    }
    case 4: {
      int n = (int)(rng() % 4);
      if (s->kind == S_TMA_LOAD || s->kind == S_TMA_STORE) s->tma.noffsets = n;
      if (s->kind == S_LOAD_GLOBAL || s->kind == S_STORE_GLOBAL) s->gmem.noffsets = n;
      break;
    }
    case 5: {
      IrTensor **f = tensor_field(s, (int)(rng() % 3));
      IrTensor *t = k->tensors[rng() % k->ntensors];
      if (f) *f = t;
      break;
    }
    case 6: {
      IrRef *r = view_field(s, (int)(rng() % 2));
      IrTensor *t = k->tensors[rng() % k->ntensors];
      if (r) r->t = t;
      break;
    }
    case 7: {
      int tmap = (int)any_size();
      if (s->kind == S_TMA_LOAD || s->kind == S_TMA_STORE) s->tma.tmap = tmap;
      break;
    }
    default:
      break;
    }
    mutate_stmts(k, &s->body);
  }
}

static void mutate_tensors(IrKernel *k) {
  for (int i = 0; i < k->ntensors; i++) {
    IrTensor *t = k->tensors[i];
    switch (rng() % 8) {
    case 0:
      t->shape[rng() % IR_MAX_RANK] = any_size();
      break;
    case 1:
      t->rank = (int)(rng() % (IR_MAX_RANK + 1)) - 1;
      break;
    case 2:
      t->nthreads = (int)any_size();
      break;
    case 3:
      t->dtype = (DType)(rng() % (DT_FLOAT64 + 1));
      break;
    case 4:
      t->space = (MemSpace)(rng() % 3);
      break;
    default:
      break;
    }
  }
}

static int run_mutate(const Source *src, int count) {
  FILE *sink = fopen("/dev/null", "w");
  int silent = 0, accepted = 0;
  for (int i = 0; i < count && sink; i++) {
    Arena *ar = arena_new();
    IrModule *m = build_v5(ar, src, &V5);
    if (rng() % 2) mutate_tensors(m->kernels[0]);
    mutate_stmts(m->kernels[0], &m->kernels[0]->body);
    Diag d;
    diag_init(&d, src, sink);
    if (ir_run_passes(m, &d)) {
      accepted++;
      ir_print(sink, m);
    } else if (d.nerrors == 0) {
      silent++;
    }
    arena_free(ar);
  }
  if (sink) fclose(sink);
  printf("%d mutants: %d accepted, %d failed silently\n", count, accepted, silent);
  return !sink || silent ? 1 : 0;
}

/* ------------------------------------------------------------ driver */

/* ir_reglayout_reshape keeps every element in its thread and slot: for
 * each (thread, slot), the coordinates in L and in the reshaped layout
 * are the same row-major linear index. */
static int64_t linear(int rank, const int64_t *shape, const int64_t *c) {
  int64_t x = 0;
  for (int d = 0; d < rank; d++) x = x * shape[d] + c[d];
  return x;
}

static void check_reshape(Arena *ar, const IrRegLayout *L, int rank, const int64_t *shape) {
  IrRegLayout *R = ir_reglayout_reshape(ar, L, rank, shape);
  CHECK(R != NULL, "reshape to rank %d", rank);
  if (!R) return;
  CHECK(R->nthreads == L->nthreads && R->nslots == L->nslots);
  for (int64_t t = 0; t < L->nthreads; t++)
    for (int64_t sl = 0; sl < L->nslots; sl++) {
      int64_t a[IR_MAX_RANK], b[IR_MAX_RANK], back;
      ir_reglayout_coords(L, t, sl, a);
      ir_reglayout_coords(R, t, sl, b);
      if (linear(L->rank, L->shape, a) != linear(rank, shape, b) ||
          !ir_reglayout_slot_of(R, t, b, &back) || back != sl) {
        CHECK(false, "thread %lld slot %lld moves", (long long)t, (long long)sl);
        return;
      }
    }
}

static void test_reglayout_reshape(Arena *ar) {
  int64_t tile[2] = {64, 128}, groups[3] = {64, 4, 32}, flat[1] = {8192};
  int64_t cols[3] = {64, 128, 1}, rows[3] = {2, 32, 128}, rows2[2] = {128, 64};
  IrRegLayout *L = ir_reglayout_default(ar, 2, tile, 128, 8);
  check_reshape(ar, L, 3, groups); /* splits a thread mode of columns */
  check_reshape(ar, L, 1, flat);
  check_reshape(ar, L, 3, cols);
  check_reshape(ar, L, 3, rows);
  check_reshape(ar, L, 2, rows2);
  IrRegLayout *G = ir_reglayout_reshape(ar, L, 3, groups);
  if (G) check_reshape(ar, G, 2, tile); /* and merges back */
  int64_t a16[2] = {16, 16}, a256[2] = {4, 64}, a3[3] = {2, 8, 16};
  IrRegLayout *A = ir_reglayout_mma(ar, MMA_A, 16, 16, 1, 1, 2);
  check_reshape(ar, A, 2, a256);
  check_reshape(ar, A, 3, a3);
  check_reshape(ar, A, 2, a16);
  /* [12] as modes 3 (threads) and 4 (slots) does not split at 6 */
  int64_t twelve[1] = {12}, two6[2] = {2, 6}, three4[2] = {3, 4}, six4[2] = {6, 4},
          four6[2] = {4, 6};
  int mdim[2] = {0, 0}, tmode[1] = {0}, lmode[1] = {1};
  int64_t msize[2] = {3, 4}, tsize[1] = {3};
  IrRegLayout *T = ir_reglayout_make(ar, 1, twelve, 2, mdim, msize, 1, tmode, tsize, 1, lmode);
  CHECK(ir_reglayout_reshape(ar, T, 2, two6) == NULL);
  check_reshape(ar, T, 2, three4);
  CHECK(ir_shapes_reshapable(1, twelve, 2, two6));
  CHECK(!ir_shapes_reshapable(2, six4, 2, four6));
  CHECK(!ir_shapes_reshapable(2, six4, 1, twelve));
}

/* The m16n8k32 fragments of 8-bit operands (PTX ISA, mma.m16n8k32 .s8):
 * A's register r of lane t holds row t/4 (+8 for odd r), columns
 * 4 (t%4) .. +3 (+16 for r >= 2); B's holds rows (k) 4 (t%4) .. +3 (+16
 * for r = 1), column t/4. Four consecutive slots are one register. */
static void test_reglayout_mma_int8(Arena *ar) {
  IrRegLayout *A = ir_reglayout_mma(ar, MMA_A, 16, 32, 1, 1, 4);
  IrRegLayout *B = ir_reglayout_mma(ar, MMA_B, 32, 8, 1, 1, 4);
  CHECK(A->nslots == 16 && B->nslots == 8 && A->nthreads == 32 && B->nthreads == 32);
  for (int64_t t = 0; t < 32; t++) {
    for (int64_t j = 0; j < 16; j++) {
      int64_t c[2], r = j / 4;
      ir_reglayout_coords(A, t, j, c);
      CHECK(c[0] == t / 4 + 8 * (r % 2) && c[1] == 4 * (t % 4) + j % 4 + 16 * (r / 2));
    }
    for (int64_t j = 0; j < 8; j++) {
      int64_t c[2], r = j / 4;
      ir_reglayout_coords(B, t, j, c);
      CHECK(c[0] == 4 * (t % 4) + j % 4 + 16 * r && c[1] == t / 4);
    }
  }
}

static int run_unit(const Source *src) {
  Arena *ar = arena_new();
  test_folding(ar);
  test_reglayout_mma_int8(ar);
  test_identities(ar);
  test_ranges(ar);
  test_induction(ar);
  test_print_expr(ar);
  test_param_multiples(ar);
  test_expr_same(ar);
  test_v5_passes(ar, src);
  test_side_tensors(ar, src);
  test_verifier_catches(ar, src);
  test_smem_reuse(ar, src);
  test_barriers(ar, src);
  test_reglayout_reshape(ar);
  arena_free(ar);
  if (failures)
    fprintf(stderr, "%d check(s) failed\n", failures);
  else
    printf("ok\n");
  return failures ? 1 : 0;
}

static int run_print(const Source *src) {
  Arena *ar = arena_new();
  IrModule *m = build_v5(ar, src, &V5);
  Diag d;
  diag_init(&d, src, stderr);
  bool ok = ir_run_passes(m, &d);
  ir_print(stdout, m);
  arena_free(ar);
  return ok ? 0 : 1;
}

/* Broken variants of V5, each caught by one pass. */
static bool variant_named(const char *name, Variant *v) {
  *v = V5;
  if (!strcmp(name, "smem-limit"))
    v->stages = 5; /* 5 x 48 KB of tiles */
  else if (!strcmp(name, "tma-box"))
    v->sb_rows = 512, v->consumer = false; /* box of 512 rows */
  else if (!strcmp(name, "swizzle-rows"))
    v->sa_cols = 48; /* 96-byte rows */
  else if (!strcmp(name, "view-align"))
    v->sa_rows = 4, v->consumer = false; /* 512-byte A slabs */
  else if (!strcmp(name, "warp-group"))
    v->consumer_begin = 64; /* threads [64, 192) */
  else if (!strcmp(name, "unassigned"))
    v->assign_stage = false;
  else if (!strcmp(name, "group-outside"))
    v->producer_begin = 272; /* [272, 304) of 288 threads */
  else if (!strcmp(name, "mma-shape"))
    v->acc_cols = 128; /* B gives N = 256 */
  else
    return false;
  return true;
}

static int run_diag(const Source *src, const char *name) {
  Variant v;
  if (!variant_named(name, &v)) {
    fprintf(stderr, "test_passes: unknown variant '%s'\n", name);
    return 2;
  }
  Arena *ar = arena_new();
  IrModule *m = build_v5(ar, src, &v);
  Diag d;
  diag_init(&d, src, stderr);
  bool ok = ir_run_passes(m, &d);
  arena_free(ar);
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  Source *src = source_from_string("v5.tls", FAKE_SCRIPT);
  int rc = 2;
  if (argc == 2 && !strcmp(argv[1], "unit"))
    rc = run_unit(src);
  else if (argc == 2 && !strcmp(argv[1], "print-v5"))
    rc = run_print(src);
  else if (argc == 3 && !strcmp(argv[1], "diag"))
    rc = run_diag(src, argv[2]);
  else if (argc == 3 && !strcmp(argv[1], "mutate"))
    rc = run_mutate(src, atoi(argv[2]));
  else
    fprintf(stderr, "usage: test_passes unit | print-v5 | diag NAME | mutate N\n");
  source_free(src);
  return rc;
}
