/* emit_meta.c: the `//@tls` metadata block at the top of the PTX file, in the
 * syntax of docs/format.md (the runtime parses it).
 *
 * Expressions (grid, tensor-map dims and strides, requirements) are printed
 * over the parameter names with no spaces; binary operands that are themselves
 * infix operations are parenthesised, so no precedence is left implicit.
 */
#include <inttypes.h>
#include <string.h>

#include "backend_ptx/emit_int.h"

/* Short dtype names of the format: f16, i32, ... */
static const char *meta_dtype(DType t) {
  switch (t) {
  case DT_INT32:
    return "i32";
  case DT_UINT32:
    return "u32";
  case DT_INT64:
    return "i64";
  case DT_UINT64:
    return "u64";
  case DT_FLOAT16:
    return "f16";
  case DT_BFLOAT16:
    return "bf16";
  case DT_FLOAT32:
    return "f32";
  case DT_FLOAT64:
    return "f64";
  case DT_INT8:
    return "i8";
  case DT_UINT8:
    return "u8";
  case DT_INT16:
    return "i16";
  case DT_UINT16:
    return "u16";
  case DT_FLOAT8_E4M3:
    return "f8e4m3";
  case DT_FLOAT8_E5M2:
    return "f8e5m2";
  default:
    return NULL;
  }
}

/* Whether x prints as an infix operation (operands of operators put it in
 * parentheses): a cast between integer types prints as its operand, and a
 * select as a sum of products. */
static bool is_infix(const IrExpr *x) {
  while (x->kind == X_CAST && x->type != DT_BOOL && !dtype_is_float(x->type)) x = x->a;
  return (x->kind == X_BINARY && x->op != OP_MIN && x->op != OP_MAX) || x->kind == X_SELECT;
}

static const char *infix_name(IrOp op) {
  switch (op) {
  case OP_ADD:
    return "+";
  case OP_SUB:
    return "-";
  case OP_MUL:
    return "*";
  case OP_DIV:
    return "/";
  case OP_MOD:
    return "%";
  case OP_EQ:
    return "==";
  case OP_NE:
    return "!=";
  case OP_LT:
    return "<";
  case OP_LE:
    return "<=";
  case OP_GT:
    return ">";
  case OP_GE:
    return ">=";
  case OP_LAND:
    return "&&";
  case OP_LOR:
    return "||";
  default:
    return NULL;
  }
}

static bool print_expr(FILE *out, const IrExpr *x);

static bool print_operand(FILE *out, const IrExpr *x) {
  if (!is_infix(x)) return print_expr(out, x);
  fputc('(', out);
  bool ok = print_expr(out, x);
  fputc(')', out);
  return ok;
}

/* c ? a : b as (!!c)*a+(!c)*b: the format has no select (both arms are
 * evaluated, so an error in either refuses the launch). */
static bool print_select(FILE *out, const IrExpr *x) {
  fputs("(!!", out);
  bool ok = print_operand(out, x->a);
  fputs(")*", out);
  ok = ok && print_operand(out, x->b);
  fputs("+(!", out);
  ok = ok && print_operand(out, x->a);
  fputs(")*", out);
  return ok && print_operand(out, x->c);
}

/* A cast: none between integer types and from bool (the runtime computes
 * in 64 bits); to bool, `!!` (0 or 1). */
static bool print_cast(FILE *out, const IrExpr *x) {
  if (dtype_is_float(x->type)) return false;
  if (x->type != DT_BOOL) return print_expr(out, x->a);
  fputs("!!", out);
  return print_operand(out, x->a);
}

/* An integer expression over parameters; false when it uses anything the
 * format lacks (variables, bitwise operators, thread indices...). */
static bool print_expr(FILE *out, const IrExpr *x) {
  switch (x->kind) {
  case X_CONST:
    if (dtype_is_float(x->type)) return false;
    fprintf(out, "%" PRId64, x->ival);
    return true;
  case X_PARAM:
    if (x->param->is_ptr || dtype_is_float(x->param->type)) return false;
    fputs(x->param->name, out);
    return true;
  case X_CAST:
    return print_cast(out, x);
  case X_SELECT:
    return print_select(out, x);
  case X_UNARY:
    if (x->op != OP_NEG && x->op != OP_LNOT) return false;
    fputc(x->op == OP_NEG ? '-' : '!', out);
    return print_operand(out, x->a);
  case X_BINARY:
    if (x->op == OP_MIN || x->op == OP_MAX) {
      fputs(x->op == OP_MIN ? "min(" : "max(", out);
      bool ok = print_expr(out, x->a);
      fputc(',', out);
      ok = ok && print_expr(out, x->b);
      fputc(')', out);
      return ok;
    }
    if (!infix_name(x->op)) return false;
    if (!print_operand(out, x->a)) return false;
    fputs(infix_name(x->op), out);
    return print_operand(out, x->b);
  default:
    return false;
  }
}

static const IrParam *pointer_param(const IrExpr *x) {
  while (x && x->kind == X_CAST) x = x->a;
  return x && x->kind == X_PARAM && x->param->is_ptr ? x->param : NULL;
}

/* Whether p is the hidden parameter of a launch-invariant divisor. */
static bool divisor_param(const IrKernel *k, const IrParam *p) {
  for (int i = 0; i < k->ndivs; i++)
    if (k->divs[i].param == p) return true;
  return false;
}

static bool emit_params(FILE *out, const IrKernel *k, Diag *d) {
  for (int i = 0; i < k->nparams; i++) {
    const IrParam *p = k->params[i];
    if (divisor_param(k, p)) { /* hidden: the runtime passes its magic numbers (`divisor`) */
      fprintf(out, "//@tls param %s u64 divisor\n", p->name);
      continue;
    }
    /* a bool is passed as a u32 0 or 1 (emit.c) */
    /* packed sub-byte elements: the runtime sees their bytes */
    const char *t = p->is_ptr && dtype_is_subbyte(p->elem) ? "u8"
                    : p->is_ptr                            ? meta_dtype(p->elem)
                    : p->type == DT_BOOL                   ? "u32"
                                                           : meta_dtype(p->type);
    if (!t) {
      diag_error(d, k->span, "not supported by the PTX backend yet: parameter '%s' of type %s",
                 p->name, dtype_name(p->is_ptr ? p->elem : p->type));
      return false;
    }
    /* a workspace's pointer is hidden: the runtime passes it (`workspace`) */
    fprintf(out, "//@tls param %s %s%s%s\n", p->name, p->is_ptr ? "ptr " : "", t,
            p->workspace ? " workspace" : "");
  }
  return true;
}

static bool emit_grid(FILE *out, const IrKernel *k, Diag *d) {
  fprintf(out, "//@tls grid");
  for (int i = 0; i < 3; i++) {
    fputc(' ', out);
    if (!k->grid[i])
      fputc('1', out);
    else if (!print_expr(out, k->grid[i])) {
      fputc('\n', out);
      diag_error(d, k->span,
                 "not supported by the PTX backend yet: a grid size that is not an integer "
                 "expression over the kernel parameters");
      return false;
    }
  }
  fputc('\n', out);
  return true;
}

/* `tmap I ptr=P dtype=D rank=R dims=... strides=... box=... swizzle=S`,
 * dims/strides/box innermost first. */
static bool emit_tmap(FILE *out, const IrKernel *k, const IrTmap *tm, Diag *d) {
  const IrTensor *g = tm->global;
  const IrParam *p = pointer_param(g->gptr);
  const char *dt = meta_dtype(g->dtype);
  if (!p || !dt) {
    diag_error(d, g->span,
               "not supported by the PTX backend yet: a TMA tensor whose base is not a pointer "
               "parameter of a plain dtype");
    return false;
  }
  (void)k;
  bool ok = true;
  fprintf(out, "//@tls tmap %d ptr=%s dtype=%s rank=%d dims=", tm->index, p->name, dt, g->rank);
  for (int i = g->rank - 1; i >= 0; i--) {
    ok = ok && print_expr(out, g->gshape[i]);
    fputs(i ? "," : "", out);
  }
  fputs(" strides=", out);
  for (int i = g->rank - 2; i >= 0; i--) { /* stride of dimension i (outermost-first) */
    for (int j = g->rank - 1; j > i; j--) {
      ok = ok && print_operand(out, g->gshape[j]);
      fputc('*', out);
    }
    fprintf(out, "%d%s", dtype_bytes(g->dtype), i ? "," : "");
  }
  fputs(" box=", out);
  for (int i = g->rank - 1; i >= 0; i--) fprintf(out, "%" PRId64 "%s", tm->box[i], i ? "," : "");
  fprintf(out, " swizzle=%d\n", tm->swizzle_bytes);
  if (!ok)
    diag_error(d, g->span,
               "not supported by the PTX backend yet: a TMA tensor shape that is not an integer "
               "expression over the kernel parameters");
  return ok;
}

enum { REQUIRE_MAX = 16, REQUIRE_MAX_CODE = IR_META_MAX_CODE, REQUIRE_MAX_MESSAGE = 1024 };

/* The message, on one line: control characters become spaces, and a long
 * one is cut (at a UTF-8 character boundary) to what a metadata line holds. */
static void print_message(FILE *out, const char *msg) {
  size_t n = strlen(msg);
  if (n > REQUIRE_MAX_MESSAGE) {
    n = REQUIRE_MAX_MESSAGE;
    while (n && ((unsigned char)msg[n] & 0xC0) == 0x80) n--;
  }
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)msg[i];
    fputc(c < 0x20 || c == 0x7f ? ' ' : c, out);
  }
}

/* `require EXPR MESSAGE`, one per static_assert() on `int` parameters:
 * the runtime refuses a launch whose arguments make EXPR 0. */
static bool emit_requires(FILE *out, const IrKernel *k, Diag *d) {
  if (k->nreqs > REQUIRE_MAX) {
    diag_error(d, k->reqs[REQUIRE_MAX].span,
               "kernel '%s' has %d static_assert() conditions on kernel parameters; the "
               "runtime checks at most %d at launch",
               k->name, k->nreqs, REQUIRE_MAX);
    return false;
  }
  for (int i = 0; i < k->nreqs; i++) {
    const IrRequire *r = &k->reqs[i];
    if (ir_meta_code_size(r->cond) > REQUIRE_MAX_CODE) {
      diag_error(d, r->span,
                 "this static_assert() condition is too long for the launch check (at most %d "
                 "operations): split it into several static_assert() calls",
                 REQUIRE_MAX_CODE);
      return false;
    }
    fputs("//@tls require ", out);
    if (!print_expr(out, r->cond)) {
      fputc('\n', out);
      diag_error(d, r->span,
                 "not supported by the PTX backend yet: a static_assert() condition that is not "
                 "an integer expression over the kernel parameters");
      return false;
    }
    fputc(' ', out);
    print_message(out, r->msg ? r->msg : "");
    fputc('\n', out);
  }
  return true;
}

/* `workspace PARAM dtype=D dims=E,... clean=0|1`, one per global_tensor():
 * the runtime allocates the product of the dims (outermost first) times the
 * element size for each launch, zeroed when clean=1, and passes its address
 * as the hidden parameter PARAM. */
static bool emit_workspaces(FILE *out, const IrKernel *k, Diag *d) {
  for (int i = 0; i < k->nws; i++) {
    const IrWorkspace *w = &k->ws[i];
    const IrTensor *t = w->tensor;
    fprintf(out, "//@tls workspace %s dtype=%s dims=", w->param->name, meta_dtype(t->dtype));
    for (int j = 0; j < t->rank; j++) {
      if (ir_meta_code_size(t->gshape[j]) > REQUIRE_MAX_CODE || !print_expr(out, t->gshape[j])) {
        fputc('\n', out);
        diag_error(d, t->span,
                   "not supported by the PTX backend yet: a global_tensor() shape that is not an "
                   "integer expression over the kernel parameters of at most %d operations",
                   REQUIRE_MAX_CODE);
        return false;
      }
      fputs(j + 1 < t->rank ? "," : "", out);
    }
    fprintf(out, " clean=%d\n", w->clean ? 1 : 0);
  }
  return true;
}

/* `divisor PARAM EXPR`, one per hidden parameter of a launch-invariant
 * divisor (ir/magic.c): the runtime evaluates EXPR at each launch, refuses
 * one where it is not in 1..2^31-1, and passes its magic numbers as PARAM. */
static bool emit_divisors(FILE *out, const IrKernel *k, Diag *d) {
  for (int i = 0; i < k->ndivs; i++) {
    const IrDivisor *dv = &k->divs[i];
    fprintf(out, "//@tls divisor %s ", dv->param->name);
    if (ir_meta_code_size(dv->value) > REQUIRE_MAX_CODE || !print_expr(out, dv->value)) {
      fputc('\n', out); /* ir_plan_divisors takes only what prints */
      diag_error(d, k->span,
                 "internal error: the divisor of hidden parameter '%s' is not an expression "
                 "over the kernel parameters",
                 dv->param->name);
      return false;
    }
    fputc('\n', out);
  }
  return true;
}

/* The evaluator lists an `int` parameter fixed at compile time (-D,
 * --specialize) among the config entries as "fixed NAME" (eval.c,
 * set_config): NAME, or NULL for an autotune name. */
static const char *fixed_param(const char *config_name) {
  return strncmp(config_name, "fixed ", 6) ? NULL : config_name + 6;
}

/* `config k=v ...` (the autotune point), then `fixed k=v ...` when the
 * entry has parameters fixed at compile time. */
static void emit_config(FILE *out, const IrKernel *k) {
  int nfixed = 0;
  fprintf(out, "//@tls config");
  for (int i = 0; i < k->nconfig; i++) {
    if (fixed_param(k->config_names[i]))
      nfixed++;
    else if (k->config_texts && k->config_texts[i]) /* [1,4], True, float16 */
      fprintf(out, " %s=%s", k->config_names[i], k->config_texts[i]);
    else
      fprintf(out, " %s=%" PRId64, k->config_names[i], k->config_values[i]);
  }
  fputc('\n', out);
  if (!nfixed) return;
  fprintf(out, "//@tls fixed");
  for (int i = 0; i < k->nconfig; i++) {
    const char *name = fixed_param(k->config_names[i]);
    if (name) fprintf(out, " %s=%" PRId64, name, k->config_values[i]);
  }
  fputc('\n', out);
}

static bool emit_entry_meta(FILE *out, const IrKernel *k, Diag *d) {
  fprintf(out, "//@tls entry %s script=%s block=%d smem=%" PRId64 "\n", k->name,
          k->script ? k->script : k->name, k->warps * 32, k->smem_bytes);
  emit_config(out, k);
  if (k->occupancy_of) fprintf(out, "//@tls occupancy %s\n", k->occupancy_of);
  if (!emit_params(out, k, d) || !emit_grid(out, k, d)) return false;
  if (ir_cluster_size(k) > 1)
    fprintf(out, "//@tls cluster %" PRId64 " %" PRId64 " %" PRId64 "\n",
            k->cluster[0] > 0 ? k->cluster[0] : 1, k->cluster[1] > 0 ? k->cluster[1] : 1,
            k->cluster[2] > 0 ? k->cluster[2] : 1);
  for (int i = 0; i < k->ntmaps; i++)
    if (!emit_tmap(out, k, k->tmaps[i], d)) return false;
  return emit_requires(out, k, d) && emit_workspaces(out, k, d) && emit_divisors(out, k, d);
}

bool emit_metadata(FILE *out, const IrModule *m, Diag *d) {
  fprintf(out, "//@tls version 1\n");
  fprintf(out, "//@tls source %s\n", m->src && m->src->path ? m->src->path : "<unknown>");
  for (int i = 0; i < m->nkernels; i++)
    if (!emit_entry_meta(out, m->kernels[i], d)) return false;
  fprintf(out, "//@tls end\n");
  return true;
}
