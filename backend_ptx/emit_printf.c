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
#include <stdlib.h>
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

/* Packs an element at *off as C's varargs would (floats promoted to
 * double; each argument aligned to its size). */
static void pack_value(Emitter *e, Val local, int64_t *off, Val v) {
  bool f = dtype_is_float(v.type), wide = f || dtype_bytes(v.type) == 8;
  *off = wide ? (*off + 7) / 8 * 8 : (*off + 3) / 4 * 4;
  if (f) v = val_to_reg(e, val_convert(e, v, DT_FLOAT64));
  emit(e, "st.local%s [%s+%" PRId64 "], %s;",
       f      ? ".f64"
       : wide ? ".b64"
              : ".b32",
       local.s, *off, v.s);
  *off += wide ? 8 : 4;
}

/* Stores one argument at offset *off of the buffer, promoted. */
static void pack_arg(Emitter *e, Val buf, int64_t *off, const IrExpr *x) {
  Val v = emit_expr(e, x);
  if (v.type == DT_BOOL) v = val_convert(e, v, DT_INT32);
  pack_value(e, buf, off, val_to_reg(e, v));
}

static void declare_vprintf(Emitter *e) {
  if (*e->vprintf_declared) return;
  fprintf(e->globals, ".extern .func (.param .b32 func_retval0) vprintf(.param .b64 "
                      "vprintf_param_0, .param .b64 vprintf_param_1);\n");
  *e->vprintf_declared = true;
}

/* A new global string of the module; its generic address is loaded with
 * cvta.global where it is used. */
static void global_string(Emitter *e, char *name, size_t size, const char *text) {
  snprintf(name, size, "%s_str%d", e->k->name, e->nprintf++);
  emit_format_global(e, name, text);
}

/* vprintf(format, buf): buf a .local buffer's address (u64). */
static void call_vprintf(Emitter *e, const char *fmt_name, Val local) {
  Val buf = new_reg(e, DT_UINT64), fmt = new_reg(e, DT_UINT64);
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

void emit_printf(Emitter *e, const IrStmt *s) {
  if (ir_is_print_tensor(s)) {
    emit_print_tensor(e, s);
    return;
  }
  int id = e->nprintf++;
  char fmt_name[64], buf_name[64];
  snprintf(fmt_name, sizeof fmt_name, "%s_fmt%d", e->k->name, id);
  snprintf(buf_name, sizeof buf_name, "%s_args%d", e->k->name, id);
  emit_format_global(e, fmt_name, s->print.format ? s->print.format : "");
  declare_vprintf(e);
  /* 8 bytes per argument is the most any promoted argument takes */
  int64_t size = 8 * (int64_t)(s->print.nargs > 0 ? s->print.nargs : 1);
  emit(e, ".local .align 8 .b8 %s[%" PRId64 "];", buf_name, size);
  Val local = new_reg(e, DT_UINT64);
  emit(e, "mov.u64 %s, %s;", local.s, buf_name);
  int64_t off = 0;
  for (int i = 0; i < s->print.nargs; i++) pack_arg(e, local, &off, s->print.args[i]);
  call_vprintf(e, fmt_name, local);
}

/* ------------------------------------------------------------ print_tensor */

/* The type an element is printed from: float32 (float64 stays) for the
 * float types, a 32-bit int for bool and small integers, 64-bit ints as
 * they are. */
static DType print_work(DType t) {
  if (dtype_is_float(t) || dtype_is_fp8(t)) return t == DT_FLOAT64 ? DT_FLOAT64 : DT_FLOAT32;
  if (dtype_bytes(t) == 8) return t;
  return t == DT_UINT32 || t == DT_UINT16 || t == DT_UINT8 ? DT_UINT32 : DT_INT32;
}

/* Tilus's default element formats. */
static const char *default_elem(DType t) {
  switch (t) {
  case DT_FLOAT32:
    return "%6.3f";
  case DT_FLOAT16:
  case DT_FLOAT8_E4M3:
  case DT_FLOAT8_E5M2:
    return "%5.2f";
  case DT_BFLOAT16:
    return "%5.3f";
  case DT_INT32:
    return "%5d";
  case DT_UINT32:
    return "%3u";
  case DT_INT8:
  case DT_UINT8:
    return "%3d";
  case DT_BOOL:
    return "%1d";
  case DT_INT64:
    return "%lld";
  case DT_UINT64:
    return "%llu";
  default:
    return dtype_is_float(t) ? "%f" : "%d";
  }
}

/* The printed tensor: the element source, its dtype, and its shape less
 * the dimensions of size 1 (the brackets' shape; the row-major order is
 * the tensor's). */
typedef struct PrintSrc {
  const IrTensor *reg;
  const IrRef *shared;
  DType dt, work;
  int rank;
  int64_t shape[IR_MAX_RANK];
} PrintSrc;

/* A register tensor's elements, as the work type, at their row-major
 * places in the scratch (replicas store the same values). */
static bool gather(Emitter *e, const PrintSrc *p, int64_t wb) {
  const IrTensor *x = p->reg;
  if (x->layout != LAYOUT_SPATIAL || !x->reg) {
    unsupported(e, "print_tensor of a WGMMA fragment tensor (cast or store it to a plain tile)");
    return false;
  }
  if (!spread_owned(e, x)) return false;
  const IrRegLayout *L = x->reg;
  int64_t stride[IR_MAX_RANK];
  spread_row_major(x->shape, x->rank, stride);
  Val tid = emit_group_tid(e), tc[IR_MAX_RANK], base = new_reg(e, DT_UINT32);
  spread_thread_coords(e, L, tid, tc);
  emit(e, "mov.u32 %s, 0;", base.s);
  for (int d = 0; d < x->rank; d++)
    emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %s;", base.s, val_to_reg(e, tc[d]).s, stride[d] * wb,
         base.s);
  emit(e, "add.u32 %s, %s, %%smem;", base.s, base.s);
  for (int64_t i = 0; i < L->nslots; i++) {
    int64_t c[IR_MAX_RANK], off = e->k->reduce_scratch_offset;
    ir_reglayout_coords(L, 0, i, c);
    for (int d = 0; d < x->rank; d++) off += c[d] * stride[d] * wb;
    Val v = tensor_slot_reg(x, i);
    if (x->dtype == DT_BOOL) {
      Val u = new_reg(e, DT_INT32);
      emit(e, "selp.s32 %s, 1, 0, %s;", u.s, v.s);
      v = u;
    }
    v = val_to_reg(e, val_convert(e, v, p->work));
    emit(e, "st.shared%s [%s+%" PRId64 "], %s;", ptx_btype(p->work), base.s, off, v.s);
  }
  return true;
}

/* The byte address of the view's element at flat (row-major) index f, a
 * u32 register, before the swizzle: f's digits over the view's shape. */
static Val view_offset(Emitter *e, const IrRef *ref, Val f) {
  int rank = ir_ref_rank(ref);
  int64_t eb = dtype_bytes(ref->t->dtype), stride[IR_MAX_RANK];
  spread_view_strides(ref, stride);
  Val a = new_reg(e, DT_UINT32);
  IrExpr *voff = ir_ref_byte_offset(e->m->ar, ref);
  emit(e, "mov.u32 %s, %s;", a.s, val_to_reg(e, val_convert(e, emit_expr(e, voff), DT_UINT32)).s);
  int64_t below = 1;
  for (int d = rank - 1; d >= 0; d--) {
    Val q = new_reg(e, DT_UINT32);
    emit(e, "div.u32 %s, %s, %" PRId64 ";", q.s, f.s, below);
    emit(e, "rem.u32 %s, %s, %" PRId64 ";", q.s, q.s, ir_ref_dim(ref, d));
    emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %s;", a.s, q.s, stride[d] * eb, a.s);
    below *= ir_ref_dim(ref, d);
  }
  return a;
}

/* Element c of a row, as the work type: from the scratch (row: the
 * address of the row's first element there), or from the shared view (row:
 * the flat index of its first element; the view's swizzle applied). */
static Val element(Emitter *e, const PrintSrc *p, Val row, int64_t c, int64_t wb) {
  Val v;
  if (p->reg) {
    v = new_reg(e, p->work);
    emit(e, "ld.shared%s %s, [%s+%" PRId64 "];", ptx_btype(p->work), v.s, row.s,
         e->k->reduce_scratch_offset + c * wb);
    return v;
  }
  Val f = new_reg(e, DT_UINT32), addr = new_reg(e, DT_UINT32);
  emit(e, "add.u32 %s, %s, %" PRId64 ";", f.s, row.s, c);
  Val phys = smem_swizzle(e, view_offset(e, p->shared, f), tensor_swizzle(p->shared->t));
  emit(e, "add.u32 %s, %s, %%smem;", addr.s, phys.s);
  bool narrow = dtype_is_storage(p->dt) && dtype_bytes(p->dt) < 4;
  v = new_reg(e, narrow ? DT_UINT32 : p->dt);
  emit(e, "ld.shared%s %s, [%s+%" PRId64 "];", spread_mem_type(p->dt), v.s, addr.s,
       p->shared->t->smem_offset);
  if (narrow) v.type = p->dt; /* storage types sit in 32-bit registers */
  if (p->dt == DT_BOOL) {
    Val u = new_reg(e, DT_INT32);
    emit(e, "selp.s32 %s, 1, 0, %s;", u.s, v.s);
    v = u;
  }
  return val_to_reg(e, val_convert(e, v, p->work));
}

/* The generic address of one of n strings, chosen by how many of the
 * row's leading indices, innermost first, are at `at_end` ? their last
 * value : 0 (the brackets that open or close there). */
static Val bracket_string(Emitter *e, const PrintSrc *p, Val r, char names[][64], int n,
                          bool at_end) {
  Val ptr = new_reg(e, DT_UINT64), run = {.s = ""};
  emit(e, "cvta.global.u64 %s, %s;", ptr.s, names[0]);
  int64_t below = 1;
  for (int d = p->rank - 2, k = 1; d >= 0 && k < n; d--, k++) {
    Val q = new_reg(e, DT_UINT32), hit = new_reg(e, DT_BOOL), alt = new_reg(e, DT_UINT64);
    emit(e, "div.u32 %s, %s, %" PRId64 ";", q.s, r.s, below);
    emit(e, "rem.u32 %s, %s, %" PRId64 ";", q.s, q.s, p->shape[d]);
    emit(e, "setp.eq.u32 %s, %s, %" PRId64 ";", hit.s, q.s, at_end ? p->shape[d] - 1 : 0);
    if (run.s[0]) emit(e, "and.pred %s, %s, %s;", hit.s, hit.s, run.s);
    emit(e, "cvta.global.u64 %s, %s;", alt.s, names[k]);
    emit(e, "selp.b64 %s, %s, %s, %s;", ptr.s, alt.s, ptr.s, hit.s);
    run = hit;
    below *= p->shape[d];
  }
  return ptr;
}

enum { PRINT_CHUNK = 24 }; /* elements per vprintf call (CUDA takes 32 arguments) */

/* One row of cols elements: chunks of PRINT_CHUNK, each "%s" + elements +
 * "%s", the first with the row's opening brackets, the last with its
 * closing ones (the others with "" and ", "). */
static void print_row(Emitter *e, const PrintSrc *p, Val r, int64_t cols, int64_t wb,
                      const char *elem, char open[][64], char close[][64], int nb) {
  char fmt_full[64], fmt_last[64], empty[64], sep[64];
  int64_t last_n = (cols - 1) % PRINT_CHUNK + 1;
  char *text = xmalloc((size_t)PRINT_CHUNK * (strlen(elem) + 2) + 8);
  for (int k = 0; k < 2; k++) {
    int64_t n = k ? last_n : PRINT_CHUNK;
    size_t len = 0;
    len += (size_t)sprintf(text + len, "%%s");
    for (int64_t i = 0; i < n; i++) len += (size_t)sprintf(text + len, "%s%s", i ? ", " : "", elem);
    sprintf(text + len, "%%s");
    global_string(e, k ? fmt_last : fmt_full, 64, text);
  }
  free(text);
  global_string(e, empty, sizeof empty, "");
  global_string(e, sep, sizeof sep, ", ");
  char buf_name[64];
  snprintf(buf_name, sizeof buf_name, "%s_args%d", e->k->name, e->nprintf++);
  emit(e, ".local .align 8 .b8 %s[%d];", buf_name, 8 * (PRINT_CHUNK + 2));
  Val local = new_reg(e, DT_UINT64);
  emit(e, "mov.u64 %s, %s;", local.s, buf_name);
  Val row = new_reg(e, DT_UINT32); /* the row's first element (element() says how) */
  if (p->reg)
    emit(e, "mad.lo.u32 %s, %s, %" PRId64 ", %%smem;", row.s, r.s, cols * wb);
  else
    emit(e, "mul.lo.u32 %s, %s, %" PRId64 ";", row.s, r.s, cols);
  Val first = bracket_string(e, p, r, open, nb, false);
  Val end = bracket_string(e, p, r, close, nb, true);
  for (int64_t c0 = 0; c0 < cols; c0 += PRINT_CHUNK) {
    int64_t n = cols - c0 < PRINT_CHUNK ? cols - c0 : PRINT_CHUNK;
    Val pre = first, post = end;
    if (c0 > 0) {
      pre = new_reg(e, DT_UINT64);
      emit(e, "cvta.global.u64 %s, %s;", pre.s, empty);
    }
    if (c0 + n < cols) {
      post = new_reg(e, DT_UINT64);
      emit(e, "cvta.global.u64 %s, %s;", post.s, sep);
    }
    int64_t off = 8;
    emit(e, "st.local.b64 [%s], %s;", local.s, pre.s);
    for (int64_t i = 0; i < n; i++) pack_value(e, local, &off, element(e, p, row, c0 + i, wb));
    off = (off + 7) / 8 * 8;
    emit(e, "st.local.b64 [%s+%" PRId64 "], %s;", local.s, off, post.s);
    call_vprintf(e, c0 + n < cols || n == PRINT_CHUNK ? fmt_full : fmt_last, local);
  }
}

/* The header, as Tilus prints it: the message, then what the tensor is. */
static void print_header(Emitter *e, const IrStmt *s, const PrintSrc *p) {
  size_t cap = 2 * strlen(s->print.format) + 160, len = 0;
  char *text = xmalloc(cap);
  for (const char *c = s->print.format; *c; c++) { /* the message is text: % doubled */
    if (*c == '%') text[len++] = '%';
    text[len++] = *c;
  }
  len += (size_t)snprintf(text + len, cap - len, "%s_tile(dtype=%s, shape=[",
                          p->reg ? "register" : "shared", dtype_name(p->dt));
  int rank = p->reg ? p->reg->rank : ir_ref_rank(p->shared);
  for (int d = 0; d < rank; d++)
    len += (size_t)snprintf(text + len, cap - len, "%s%" PRId64, d ? ", " : "",
                            p->reg ? p->reg->shape[d] : ir_ref_dim(p->shared, d));
  snprintf(text + len, cap - len, "])\n");
  char name[64], buf_name[64];
  global_string(e, name, sizeof name, text);
  free(text);
  snprintf(buf_name, sizeof buf_name, "%s_args%d", e->k->name, e->nprintf++);
  emit(e, ".local .align 8 .b8 %s[8];", buf_name);
  Val local = new_reg(e, DT_UINT64);
  emit(e, "mov.u64 %s, %s;", local.s, buf_name);
  call_vprintf(e, name, local);
}

void emit_print_tensor(Emitter *e, const IrStmt *s) {
  const IrPrintfStmt *pr = &s->print;
  PrintSrc p = {.reg = pr->reg, .shared = pr->reg ? NULL : &pr->shared};
  p.dt = pr->reg ? pr->reg->dtype : pr->shared.t->dtype;
  p.work = print_work(p.dt);
  int rank = pr->reg ? pr->reg->rank : ir_ref_rank(&pr->shared);
  for (int d = 0; d < rank; d++) { /* brackets over the dimensions larger than 1, as Tilus */
    int64_t n = pr->reg ? pr->reg->shape[d] : ir_ref_dim(&pr->shared, d);
    if (n > 1) p.shape[p.rank++] = n;
  }
  if (e->group.single) {
    unsupported(e, "print_tensor inside single_thread() (its group prints it together)");
    return;
  }
  int64_t wb = dtype_bytes(p.work) > 4 ? 8 : 4;
  declare_vprintf(e);
  if (!emit_barrier(e, pr->barrier_id, "print_tensor")) return;
  if (p.reg && !gather(e, &p, wb)) return;
  emit_barrier(e, pr->barrier_id, "print_tensor");
  /* the group's first thread prints */
  int skip = new_label(e), loop = new_label(e);
  Val tid = emit_group_tid(e), first = new_reg(e, DT_BOOL);
  emit(e, "setp.ne.u32 %s, %s, 0;", first.s, tid.s);
  emit(e, "@%s bra $L%d;", first.s, skip);
  print_header(e, s, &p);
  /* rows over every dimension but the last; brackets as Tilus's */
  int64_t cols = p.rank ? p.shape[p.rank - 1] : 1, rows = 1;
  for (int d = 0; d + 1 < p.rank; d++) rows *= p.shape[d];
  int nb = p.rank > 1 ? p.rank : 1;
  char open[IR_MAX_RANK][64], close[IR_MAX_RANK][64];
  for (int k = 0; k < nb; k++) {
    char o[2 * IR_MAX_RANK + 2] = {0}, c[IR_MAX_RANK + 3] = {0};
    int lead = p.rank > 0 ? p.rank - 1 : 0;
    for (int i = 0; i < lead; i++) o[i] = i < lead - k ? ' ' : '[';
    if (p.rank > 0) o[lead] = '[';
    if (p.rank > 0) c[0] = ']';
    for (int i = 0; i < k; i++) c[1 + i] = ']';
    strcat(c, "\n");
    global_string(e, open[k], sizeof open[k], o);
    global_string(e, close[k], sizeof close[k], c);
  }
  Val r = new_reg(e, DT_UINT32);
  emit(e, "mov.u32 %s, 0;", r.s);
  emit_label(e, loop);
  print_row(e, &p, r, cols, wb, pr->elem ? pr->elem : default_elem(p.dt), open, close, nb);
  Val more = new_reg(e, DT_BOOL);
  emit(e, "add.u32 %s, %s, 1;", r.s, r.s);
  emit(e, "setp.lt.u32 %s, %s, %" PRId64 ";", more.s, r.s, rows);
  emit(e, "@%s bra $L%d;", more.s, loop);
  emit_label(e, skip);
  emit_barrier(e, pr->barrier_id, "print_tensor");
}
