/* sim_expr.c: scalar expressions and tensor views for the simulator.
 *
 * A warp's values are uniform (one per warp, not per thread): the language
 * has no thread index, so every scalar a statement reads is the same in
 * all threads of a warp. Integer arithmetic is C's on the expression's
 * type, as the PTX backend emits it; it runs on unsigned 64-bit values and
 * wraps to the type, so no overflow is undefined here.
 */
#include "sim/sim_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

static bool is_unsigned(DType t) { return t == DT_UINT32 || t == DT_UINT64 || t == DT_BOOL; }

static int type_bits(DType t) { return t == DT_INT64 || t == DT_UINT64 ? 64 : 32; }

/* A problem of the simulated program (not of the kernel's pipeline). */
static int64_t eval_failure(Sim *S, Span sp, const char *what) {
  if (!S->failed)
    diag_error(S->d, sp, "%s in the simulation of block %" PRId64 " of %s", what, S->block,
               S->k->name);
  S->failed = true;
  return 0;
}

/* Shifts with PTX's clamping: amounts past the width give 0 (or the sign
 * for an arithmetic right shift). */
static int64_t eval_shift(IrOp op, DType t, int64_t a, int64_t b) {
  int bits = type_bits(t);
  bool clamp = b < 0 || b >= bits;
  if (op == OP_SHL) return clamp ? 0 : (int64_t)((uint64_t)a << b);
  if (is_unsigned(t)) {
    uint64_t ua = t == DT_UINT32 ? (uint32_t)a : (uint64_t)a;
    return clamp ? 0 : (int64_t)(ua >> b);
  }
  if (clamp) return a < 0 ? -1 : 0;
  return a < 0 ? ~(int64_t)(~(uint64_t)a >> b) : (int64_t)((uint64_t)a >> b);
}

/* Truncating division and the dividend-signed remainder, as in C. */
static int64_t eval_divmod(Sim *S, IrOp op, DType t, int64_t a, int64_t b, Span sp) {
  if (b == 0) return eval_failure(S, sp, "division by zero");
  if (is_unsigned(t)) {
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    return (int64_t)(op == OP_DIV ? ua / ub : ua % ub);
  }
  if (a == INT64_MIN && b == -1) return op == OP_DIV ? INT64_MIN : 0;
  return op == OP_DIV ? a / b : a % b;
}

/* Orders two values of type t: -1, 0 or 1. */
static int compare(DType t, int64_t a, int64_t b) {
  if (is_unsigned(t)) return ((uint64_t)a > (uint64_t)b) - ((uint64_t)a < (uint64_t)b);
  return (a > b) - (a < b);
}

static int64_t eval_binary_int(Sim *S, SimWarp *w, const IrExpr *e, Span sp) {
  DType t = e->a->type;
  if (dtype_is_float(t)) {
    double x = sim_eval_float(S, w, e->a, sp), y = sim_eval_float(S, w, e->b, sp);
    int c = (x > y) - (x < y);
    switch (e->op) {
    case OP_EQ:
      return x == y;
    case OP_NE:
      return x != y;
    case OP_LT:
      return c < 0;
    case OP_LE:
      return x <= y;
    case OP_GT:
      return c > 0;
    case OP_GE:
      return x >= y;
    default:
      return eval_failure(S, sp, "a float operand of an integer operator");
    }
  }
  int64_t a = sim_eval_int(S, w, e->a, sp), b = sim_eval_int(S, w, e->b, sp);
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  switch (e->op) {
  case OP_ADD:
    return (int64_t)(ua + ub);
  case OP_SUB:
    return (int64_t)(ua - ub);
  case OP_MUL:
    return (int64_t)(ua * ub);
  case OP_DIV:
  case OP_MOD:
    return eval_divmod(S, e->op, t, a, b, sp);
  case OP_AND:
    return (int64_t)(ua & ub);
  case OP_OR:
    return (int64_t)(ua | ub);
  case OP_XOR:
    return (int64_t)(ua ^ ub);
  case OP_SHL:
  case OP_SHR:
    return eval_shift(e->op, t, a, b);
  case OP_EQ:
    return a == b;
  case OP_NE:
    return a != b;
  case OP_LT:
    return compare(t, a, b) < 0;
  case OP_LE:
    return compare(t, a, b) <= 0;
  case OP_GT:
    return compare(t, a, b) > 0;
  case OP_GE:
    return compare(t, a, b) >= 0;
  case OP_LAND:
    return a && b;
  case OP_LOR:
    return a || b;
  case OP_MIN:
    return compare(t, a, b) <= 0 ? a : b;
  case OP_MAX:
    return compare(t, a, b) >= 0 ? a : b;
  default:
    return eval_failure(S, sp, "an unknown operator");
  }
}

static int64_t eval_unary_int(Sim *S, SimWarp *w, const IrExpr *e, Span sp) {
  int64_t a = sim_eval_int(S, w, e->a, sp);
  switch (e->op) {
  case OP_NEG:
    return (int64_t)(0 - (uint64_t)a);
  case OP_BNOT:
    return ~a;
  case OP_LNOT:
    return !a;
  default:
    return eval_failure(S, sp, "an unknown operator");
  }
}

/* A float converted to an integer type: truncation, saturated (cvt.rzi). */
static int64_t float_to_int(double x) {
  if (isnan(x)) return 0;
  if (x >= 9.2e18) return INT64_MAX;
  if (x <= -9.2e18) return INT64_MIN;
  return (int64_t)x;
}

static int64_t eval_special(Sim *S, const IrExpr *e, Span sp) {
  switch (e->sreg) {
  case SR_CTAID_X:
    return S->ctaid[0];
  case SR_CTAID_Y:
    return S->ctaid[1];
  case SR_CTAID_Z:
    return S->ctaid[2];
  case SR_NCTAID_X:
    return S->nctaid[0];
  case SR_NCTAID_Y:
    return S->nctaid[1];
  case SR_NCTAID_Z:
    return S->nctaid[2];
  case SR_CLUSTER_CTARANK:
    return sim_cluster_rank(S, S->cur);
  case SR_CLUSTER_CTAID_X:
    return S->ctaid[0] % S->cdim[0];
  case SR_CLUSTER_CTAID_Y:
    return S->ctaid[1] % S->cdim[1];
  case SR_CLUSTER_CTAID_Z:
    return S->ctaid[2] % S->cdim[2];
  default:
    return eval_failure(S, sp, "threadIdx.x (not uniform per warp)");
  }
}

/* Pointer parameters get distinct fake addresses: no statement the
 * simulator follows reads global memory. */
static int64_t eval_param(Sim *S, const IrParam *p) {
  if (p->is_ptr) return (int64_t)(p->index + 1) << 32;
  return S->params[p->index];
}

/* The value of an integer or bool expression, wrapped to its type. */
int64_t sim_eval_int(Sim *S, SimWarp *w, const IrExpr *e, Span sp) {
  if (dtype_is_float(e->type)) return float_to_int(sim_eval_float(S, w, e, sp));
  int64_t v;
  switch (e->kind) {
  case X_CONST:
    v = e->ival;
    break;
  case X_VAR:
    v = w->ivals[e->var->id];
    break;
  case X_PARAM:
    v = eval_param(S, e->param);
    break;
  case X_SPECIAL:
    v = eval_special(S, e, sp);
    break;
  case X_UNARY:
    v = eval_unary_int(S, w, e, sp);
    break;
  case X_BINARY:
    v = eval_binary_int(S, w, e, sp);
    break;
  case X_SELECT:
    v = sim_eval_int(S, w, e->a, sp) ? sim_eval_int(S, w, e->b, sp) : sim_eval_int(S, w, e->c, sp);
    break;
  case X_CAST:
    v = sim_eval_int(S, w, e->a, sp);
    break;
  case X_LOAD:
    v = eval_failure(S, sp, "a value read from global memory (.item())");
    break;
  default:
    v = eval_failure(S, sp, "an unknown expression");
  }
  return ir_int_wrap(e->type, v);
}

static double eval_binary_float(Sim *S, SimWarp *w, const IrExpr *e, Span sp) {
  double a = sim_eval_float(S, w, e->a, sp), b = sim_eval_float(S, w, e->b, sp);
  switch (e->op) {
  case OP_ADD:
    return a + b;
  case OP_SUB:
    return a - b;
  case OP_MUL:
    return a * b;
  case OP_DIV:
    return a / b;
  case OP_MIN:
    return a < b ? a : b;
  case OP_MAX:
    return a > b ? a : b;
  default:
    return (double)eval_failure(S, sp, "an integer operator on floats");
  }
}

/* The value of any expression as a double (floats are carried only so
 * that float variables have values; no decision here depends on them). */
double sim_eval_float(Sim *S, SimWarp *w, const IrExpr *e, Span sp) {
  if (!dtype_is_float(e->type)) {
    int64_t v = sim_eval_int(S, w, e, sp);
    return is_unsigned(e->type) ? (double)(uint64_t)v : (double)v;
  }
  switch (e->kind) {
  case X_CONST:
    return e->fval;
  case X_VAR:
    return w->fvals[e->var->id];
  case X_UNARY:
    return e->op == OP_NEG ? -sim_eval_float(S, w, e->a, sp) : 0.0;
  case X_BINARY:
    return eval_binary_float(S, w, e, sp);
  case X_SELECT:
    return sim_eval_int(S, w, e->a, sp) ? sim_eval_float(S, w, e->b, sp)
                                        : sim_eval_float(S, w, e->c, sp);
  case X_CAST:
    return sim_eval_float(S, w, e->a, sp);
  case X_LOAD: /* a float decides nothing the simulation checks */
  case X_MATH:
    return 0.0;
  default:
    return (double)eval_failure(S, sp, "an unknown float expression");
  }
}

/* Evaluates the indices of a shared view and the bytes it covers; an index
 * outside its dimension is reported (it would address another buffer). */
bool sim_view(Sim *S, SimWarp *w, const IrRef *r, Span sp, SimView *out) {
  const IrTensor *t = r->t;
  *out = (SimView){.t = t, .nidx = r->nidx, .cta = w->cta, .block = S->ncta > 1 ? S->block : -1};
  int64_t stride = dtype_bytes(t->dtype), off = 0;
  for (int i = t->rank - 1; i >= r->nidx; i--) stride *= t->shape[i];
  for (int i = r->nidx - 1; i >= 0; i--) {
    int64_t x = sim_eval_int(S, w, r->idx[i], sp);
    if (S->failed) return false;
    out->idx[i] = x;
    if (x < 0 || x >= t->shape[i]) {
      diag_error(S->d, sp,
                 "index %" PRId64 " of '%s' is outside its dimension of %" PRId64 " (block %" PRId64
                 ", warp %d)",
                 x, t->name, t->shape[i], S->block, w->lid);
      S->failed = true;
      return false;
    }
    off += x * stride;
    stride *= t->shape[i];
  }
  out->lo = t->smem_offset + off;
  out->hi = out->lo + ir_ref_nbytes(r);
  return true;
}

/* "sa[2, 0]", "sb", "empty_barriers[1]". */
void sim_view_name(const SimView *v, char *buf, size_t size) {
  size_t n = (size_t)snprintf(buf, size, "%s", v->t->name);
  for (int i = 0; i < v->nidx && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, "%s%" PRId64 "%s", i ? ", " : "[", v->idx[i],
                          i + 1 == v->nidx ? "]" : "");
  if (v->block >= 0 && n < size) snprintf(buf + n, size - n, " of block %" PRId64, v->block);
}

/* "warp 8" or "warps 0-3" (and "of block N" in a cluster). */
void sim_warps_name(const Sim *S, int first, int last, char *buf, size_t size) {
  int cta = first / S->wpc, a = first - cta * S->wpc, b = last - cta * S->wpc;
  int n =
      first == last ? snprintf(buf, size, "warp %d", a) : snprintf(buf, size, "warps %d-%d", a, b);
  if (S->ncta > 1 && n >= 0 && (size_t)n < size)
    snprintf(buf + n, size - n, " of block %" PRId64, S->cta_block[cta]);
}
