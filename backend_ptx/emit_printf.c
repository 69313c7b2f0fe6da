/* printf.c: self.printf(fmt, args...) through the CUDA device runtime's
 * vprintf(format, valist), as nvcc lowers printf:
 *
 *   - the format string is a `.global` byte array of the module;
 *   - the arguments are packed in a `.local` buffer with C's default
 *     argument promotions (bool and 32-bit integers as 4-byte ints, 64-bit
 *     integers as 8 bytes, every float as an 8-byte double), each aligned
 *     to its size;
 *   - `call.uni (ret), vprintf, (fmt, buf)`.
 *
 * Every thread that reaches the statement prints (wrap it in
 * single_thread() to print once). The local buffer gives the kernel a
 * stack frame, and the external call makes ptxas serialize any WGMMA in
 * the kernel: printf is for debugging.
 */
#include <inttypes.h>
#include <string.h>

#include "backend_ptx/emit_int.h"

/* The string as a global array: `.global .align 1 .b8 NAME[N] = {...};` */
static void emit_format_global(Emitter *e, const char *name, const char *fmt) {
  size_t n = strlen(fmt) + 1;
  fprintf(e->globals, ".global .align 1 .b8 %s[%zu] = {", name, n);
  for (size_t i = 0; i < n; i++)
    fprintf(e->globals, "%s%u", i ? ", " : "", (unsigned)(unsigned char)fmt[i]);
  fprintf(e->globals, "};\n");
}

/* Stores one argument at offset *off of the buffer, promoted. */
static void pack_arg(Emitter *e, Val buf, int64_t *off, const IrExpr *x) {
  Val v = emit_expr(e, x);
  if (dtype_is_float(v.type)) {
    v = val_to_reg(e, val_convert(e, v, DT_FLOAT64));
    *off = (*off + 7) / 8 * 8;
    emit(e, "st.local.f64 [%s+%" PRId64 "], %s;", buf.s, *off, v.s);
    *off += 8;
  } else if (dtype_bytes(v.type) == 8) {
    v = val_to_reg(e, v);
    *off = (*off + 7) / 8 * 8;
    emit(e, "st.local.b64 [%s+%" PRId64 "], %s;", buf.s, *off, v.s);
    *off += 8;
  } else {
    v = val_to_reg(e, val_convert(e, v, v.type == DT_BOOL ? DT_INT32 : v.type));
    *off = (*off + 3) / 4 * 4;
    emit(e, "st.local.b32 [%s+%" PRId64 "], %s;", buf.s, *off, v.s);
    *off += 4;
  }
}

void emit_printf(Emitter *e, const IrStmt *s) {
  int id = e->nprintf++;
  char fmt_name[64], buf_name[64];
  snprintf(fmt_name, sizeof fmt_name, "%s_fmt%d", e->k->name, id);
  snprintf(buf_name, sizeof buf_name, "%s_args%d", e->k->name, id);
  emit_format_global(e, fmt_name, s->print.format ? s->print.format : "");
  if (!*e->vprintf_declared) {
    fprintf(e->globals, ".extern .func (.param .b32 func_retval0) vprintf(.param .b64 "
                        "vprintf_param_0, .param .b64 vprintf_param_1);\n");
    *e->vprintf_declared = true;
  }
  /* 8 bytes per argument is the most any promoted argument takes */
  int64_t size = 8 * (int64_t)(s->print.nargs > 0 ? s->print.nargs : 1);
  emit(e, ".local .align 8 .b8 %s[%" PRId64 "];", buf_name, size);
  Val local = new_reg(e, DT_UINT64), buf = new_reg(e, DT_UINT64), fmt = new_reg(e, DT_UINT64);
  emit(e, "mov.u64 %s, %s;", local.s, buf_name);
  int64_t off = 0;
  for (int i = 0; i < s->print.nargs; i++) pack_arg(e, local, &off, s->print.args[i]);
  emit(e, "cvta.local.u64 %s, %s;", buf.s, local.s);
  emit(e, "cvta.global.u64 %s, %s;", fmt.s, fmt_name);
  emit(e, "{");
  emit(e, ".param .b64 fmt_param;");
  emit(e, "st.param.b64 [fmt_param], %s;", fmt.s);
  emit(e, ".param .b64 args_param;");
  emit(e, "st.param.b64 [args_param], %s;", buf.s);
  emit(e, ".param .b32 ret_param;");
  emit(e, "call.uni (ret_param), vprintf, (fmt_param, args_param);");
  emit(e, "}");
}
