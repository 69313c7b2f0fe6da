/* emit_meta.c: the `//@tls` metadata block at the top of the PTX file, in the
 * syntax of docs/format.md (the runtime parses it).
 *
 * Expressions (grid, tensor-map dims and strides) are printed over the
 * parameter names with no spaces; binary operands that are themselves
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
  default:
    return NULL;
  }
}

static bool is_infix(const IrExpr *x) {
  return x->kind == X_BINARY && x->op != OP_MIN && x->op != OP_MAX;
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

/* An integer expression over parameters; false when it uses anything the
 * format lacks (variables, comparisons, thread indices...). */
static bool print_expr(FILE *out, const IrExpr *x) {
  switch (x->kind) {
  case X_CONST:
    if (dtype_is_float(x->type)) return false;
    fprintf(out, "%" PRId64, x->ival);
    return true;
  case X_PARAM:
    if (x->param->is_ptr) return false;
    fputs(x->param->name, out);
    return true;
  case X_CAST:
    return !dtype_is_float(x->type) && x->type != DT_BOOL && print_expr(out, x->a);
  case X_UNARY:
    if (x->op != OP_NEG) return false;
    fputc('-', out);
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

static bool emit_params(FILE *out, const IrKernel *k, Diag *d) {
  for (int i = 0; i < k->nparams; i++) {
    const IrParam *p = k->params[i];
    /* a bool is passed as a u32 0 or 1 (emit.c) */
    const char *t = p->is_ptr            ? meta_dtype(p->elem)
                    : p->type == DT_BOOL ? "u32"
                                         : meta_dtype(p->type);
    if (!t) {
      diag_error(d, k->span, "not supported by the PTX backend yet: parameter '%s' of type %s",
                 p->name, dtype_name(p->is_ptr ? p->elem : p->type));
      return false;
    }
    fprintf(out, "//@tls param %s %s%s\n", p->name, p->is_ptr ? "ptr " : "", t);
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
  if (!emit_params(out, k, d) || !emit_grid(out, k, d)) return false;
  if (ir_cluster_size(k) > 1)
    fprintf(out, "//@tls cluster %" PRId64 " %" PRId64 " %" PRId64 "\n",
            k->cluster[0] > 0 ? k->cluster[0] : 1, k->cluster[1] > 0 ? k->cluster[1] : 1,
            k->cluster[2] > 0 ? k->cluster[2] : 1);
  for (int i = 0; i < k->ntmaps; i++)
    if (!emit_tmap(out, k, k->tmaps[i], d)) return false;
  return true;
}

bool emit_metadata(FILE *out, const IrModule *m, Diag *d) {
  fprintf(out, "//@tls version 1\n");
  fprintf(out, "//@tls source %s\n", m->src && m->src->path ? m->src->path : "<unknown>");
  for (int i = 0; i < m->nkernels; i++)
    if (!emit_entry_meta(out, m->kernels[i], d)) return false;
  fprintf(out, "//@tls end\n");
  return true;
}
