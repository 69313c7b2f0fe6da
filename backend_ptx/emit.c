/* emit.c: the PTX module: metadata block, header, one `.visible .entry` per
 * kernel with its parameters, register declarations and prologue.
 *
 * Everything is printed into memory buffers and written to the output only
 * when the whole module succeeded: an error never leaves a partial file.
 * The text depends only on the IR (no pointers, no timestamps), so output is
 * byte-identical from run to run.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "backend_ptx/emit_int.h"

/* PTX 8.6: the lowest version with mbarrier.try_wait .relaxed (the seed's
 * sem="relaxed"); everything else used is PTX 8.0 (sm_90a). */
#define PTX_VERSION "8.6"

void emit(Emitter *e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputc('\t', e->out);
  vfprintf(e->out, fmt, ap);
  fputc('\n', e->out);
  va_end(ap);
}

void emit_effect(Emitter *e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputc('\t', e->out);
  if (e->guard) fprintf(e->out, "@%s ", e->guard);
  vfprintf(e->out, fmt, ap);
  fputc('\n', e->out);
  va_end(ap);
}

int new_label(Emitter *e) { return e->nlabels++; }

/* ------------------------------------------------------------ hoisting */

enum { HOIST_VALS = 4 };

typedef struct Hoisted {
  const char *key;
  Val v[HOIST_VALS];
} Hoisted;

bool hoist_find(Emitter *e, const char *key, Val *v, int n) {
  for (int i = 0; i < e->nhoisted; i++)
    if (!strcmp(e->hoisted[i].key, key)) {
      for (int j = 0; j < n && j < HOIST_VALS; j++) v[j] = e->hoisted[i].v[j];
      return true;
    }
  return false;
}

FILE *hoist_begin(Emitter *e) {
  FILE *saved = e->out;
  e->out = e->hoist;
  return saved;
}

void hoist_end(Emitter *e, FILE *saved, const char *key, const Val *v, int n) {
  e->out = saved;
  if (e->nhoisted == e->hoisted_cap) {
    e->hoisted_cap = e->hoisted_cap ? 2 * e->hoisted_cap : 16;
    e->hoisted = xrealloc(e->hoisted, sizeof(Hoisted) * (size_t)e->hoisted_cap);
  }
  Hoisted *h = &e->hoisted[e->nhoisted++];
  *h = (Hoisted){.key = arena_strdup(e->m->ar, key)};
  for (int j = 0; j < n && j < HOIST_VALS; j++) h->v[j] = v[j];
}

void emit_label(Emitter *e, int label) { fprintf(e->out, "$L%d:\n", label); }

/* `.loc` before the instructions of a statement, once per distinct place. */
void emit_loc(Emitter *e, Span sp) {
  e->span = sp;
  if (!e->line_info || sp.line <= 0) return;
  if (sp.line == e->last_line && sp.col == e->last_col) return;
  e->last_line = sp.line;
  e->last_col = sp.col;
  fprintf(e->out, "\t.loc 1 %d %d\n", sp.line, sp.col > 0 ? sp.col : 1);
}

void unsupported(Emitter *e, const char *fmt, ...) {
  if (e->failed) return; /* one error per kernel: the rest follows from it */
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  diag_error(e->d, e->span, "not supported by the PTX backend yet: %s", msg);
  e->failed = true;
}

/* ------------------------------------------------------------ entry */

/* PTX parameter type of a user parameter. */
static const char *param_type(const IrParam *p) {
  if (p->is_ptr) return ".u64";
  return p->type == DT_BOOL ? ".u32" : ptx_type(p->type); /* a bool is passed as 0 or 1 */
}

/* Register allocation as an autotune dimension. With `.minnctapersm 1`
 * (every entry's hint, and what setmaxnreg needs: ptxas ignores it
 * without a register count at entry) ptxas may spend the register file of
 * one block per thread; built for more blocks per SM, the same code can
 * run faster (H200, 2026-11-30, Tilus's Ampere matmuls: matmul_v3's
 * 64x128x32 entry 140 registers and 3 blocks per SM with the hint, 126
 * and 4 without, 12% faster; matmul_v1 2.7% slower) or spill. Which, only ptxas knows. So a
 * kernel that multiplies with mma.sync, and does not use setmaxnreg, gets
 * a second entry `NAME__occupancy` (config `registers=occupancy`) whose
 * file holds its metadata alone, `occupancy NAME`: libtlsrt builds its
 * code from NAME's at load time, with ptxas's own occupancy choice or one
 * block per SM more than NAME's, keeps it only where ptxas does not spill
 * (runtime/occupancy.c), and its autotuner times it beside NAME. The file
 * itself assembles with no spill. */
static bool occupancy_variant(const IrKernel *k) {
  return ir_block_holds(&k->body, S_DOT) && !ir_block_holds(&k->body, S_SETMAXNREG);
}

static IrKernel *make_occupancy_variant(Arena *ar, const IrKernel *k) {
  IrKernel *v = arena_alloc(ar, sizeof *v);
  *v = *k;
  v->name = arena_printf(ar, "%s__occupancy", k->name);
  v->nconfig = k->nconfig + 1;
  v->config_names = arena_alloc(ar, sizeof(char *) * (size_t)v->nconfig);
  v->config_values = arena_alloc(ar, sizeof(int64_t) * (size_t)v->nconfig);
  v->config_texts = arena_alloc(ar, sizeof(char *) * (size_t)v->nconfig);
  for (int i = 0; i < k->nconfig; i++) {
    v->config_names[i] = k->config_names[i];
    v->config_values[i] = k->config_values[i];
    v->config_texts[i] = k->config_texts ? k->config_texts[i] : NULL;
  }
  v->config_names[k->nconfig] = "registers";
  v->config_values[k->nconfig] = 0;
  v->config_texts[k->nconfig] = "occupancy";
  v->occupancy_of = k->name;
  return v;
}

/* The module's entries: each kernel, then its occupancy variant. */
static IrModule with_variants(const IrModule *m) {
  IrModule v = *m;
  v.kernels = arena_alloc(m->ar, sizeof(IrKernel *) * (size_t)(2 * m->nkernels + 1));
  v.nkernels = 0;
  for (int i = 0; i < m->nkernels; i++) {
    v.kernels[v.nkernels++] = m->kernels[i];
    if (occupancy_variant(m->kernels[i]))
      v.kernels[v.nkernels++] = make_occupancy_variant(m->ar, m->kernels[i]);
  }
  return v;
}

static void emit_entry_params(FILE *out, const IrKernel *k) {
  fprintf(out, ".visible .entry %s(", k->name);
  int n = 0;
  for (int i = 0; i < k->nparams; i++, n++)
    fprintf(out, "%s\n\t.param %s %s_param_%s", n ? "," : "", param_type(k->params[i]), k->name,
            k->params[i]->name);
  for (int i = 0; i < k->ntmaps; i++, n++)
    fprintf(out, "%s\n\t.param .align 64 .b8 %s_tmap%d[128]", n ? "," : "", k->name, i);
  fprintf(out, "\n)\n.maxntid %d, 1, 1\n.minnctapersm 1\n", k->warps * 32);
  /* a cluster kernel: launched only with these cluster dimensions */
  if (ir_cluster_size(k) > 1)
    fprintf(out, ".reqnctapercluster %" PRId64 ", %" PRId64 ", %" PRId64 "\n.explicitcluster\n",
            k->cluster[0] > 0 ? k->cluster[0] : 1, k->cluster[1] > 0 ? k->cluster[1] : 1,
            k->cluster[2] > 0 ? k->cluster[2] : 1);
  fprintf(out, "{\n");
}

/* Every register the body used: the numbered classes, the fixed ones, the
 * parameters, the IR variables and the register tensors. */
static void emit_reg_decls(Emitter *e, FILE *out) {
  static const char *decl[RC_COUNT][2] = {{".pred", "%p"}, {".b16", "%h"}, {".b32", "%r"},
                                          {".b64", "%rd"}, {".f32", "%f"}, {".f64", "%fd"}};
  for (int c = 0; c < RC_COUNT; c++)
    if (e->nregs[c]) fprintf(out, "\t.reg %s %s<%d>;\n", decl[c][0], decl[c][1], e->nregs[c]);
  fprintf(out, "\t.reg .b32 %%tidx, %%warp, %%smem, %%sdesc;\n\t.reg .pred %%ptrue;\n");
  if (e->k->ntmaps) fprintf(out, "\t.reg .b64 %%tmap<%d>;\n", e->k->ntmaps);
  for (int i = 0; i < e->k->nparams; i++) {
    const IrParam *p = e->k->params[i];
    fprintf(out, "\t.reg %s %%arg%d;\n", p->is_ptr ? ".b64" : ptx_btype(p->type), i);
  }
  for (int i = 0; i < e->k->nvars; i++) {
    const IrVar *v = e->k->vars[i];
    fprintf(out, "\t.reg %s %%v%d; // %s\n", ptx_btype(v->type), v->id, v->name);
  }
  tensor_reg_decls(e, out);
  spread_pair_decls(e, out);
}

/* Loads the parameters, the thread and warp index and the shared-memory
 * base, and initialises the mbarriers. */
static void emit_prologue(Emitter *e) {
  const IrKernel *k = e->k;
  emit_loc(e, k->span);
  for (int i = 0; i < k->nparams; i++) {
    const IrParam *p = k->params[i];
    if (!p->is_ptr && p->type == DT_BOOL) { /* a .u32 0 or 1 into a predicate */
      Val w = new_reg(e, DT_UINT32);
      emit(e, "ld.param.u32 %s, [%s_param_%s];", w.s, k->name, p->name);
      emit(e, "setp.ne.u32 %%arg%d, %s, 0;", i, w.s);
      continue;
    }
    emit(e, "ld.param%s %%arg%d, [%s_param_%s];", param_type(p), i, k->name, p->name);
  }
  /* The tensor maps' generic addresses, once: ptxas does not hoist the
   * cvta.param (a constant-bank load and 64-bit adds) out of a loop, where
   * it would delay each TMA copy. */
  for (int i = 0; i < k->ntmaps; i++) emit(e, "cvta.param.u64 %%tmap%d, %s_tmap%d;", i, k->name, i);
  emit(e, "mov.u32 %%tidx, %%tid.x;");
  /* The warp index through shfl from lane 0, so that ptxas knows it is
   * warp-uniform: branches on it (thread groups) are then non-divergent,
   * which WGMMA needs (CUTLASS does the same). */
  Val w = new_reg(e, DT_UINT32);
  emit(e, "shr.u32 %s, %%tidx, 5;", w.s);
  emit(e, "shfl.sync.idx.b32 %%warp, %s, 0, 31, -1;", w.s);
  emit(e, "mov.pred %%ptrue, 1;");
  if (k->smem_bytes > 0) {
    /* The dynamic smem base rounded up to 1024 (128B-swizzle atoms); the
     * planner reserved 1024 bytes of slack for this. */
    Val raw = new_reg(e, DT_UINT32);
    emit(e, "mov.u32 %s, tls_smem;", raw.s);
    emit(e, "add.u32 %s, %s, %d;", raw.s, raw.s, SMEM_BASE_ALIGN - 1);
    emit(e, "and.b32 %%smem, %s, %d;", raw.s, -SMEM_BASE_ALIGN);
    /* the low word of a WGMMA descriptor of the base (emit_wgmma.c) */
    emit(e, "shr.u32 %%sdesc, %%smem, 4;");
    emit(e, "or.b32 %%sdesc, %%sdesc, 0x10000;");
  } else {
    emit(e, "mov.u32 %%smem, 0;");
    emit(e, "mov.u32 %%sdesc, 0x10000;");
  }
  emit_mbar_init(e);
}

/* One kernel: prologue and body into a buffer, then header and
 * declarations and that buffer into out. */
static bool emit_kernel(FILE *out, const IrModule *m, const IrKernel *k, const PtxOptions *opt,
                        bool *vprintf_declared, Diag *d) {
  Emitter e = {.m = m,
               .k = k,
               .d = d,
               .line_info = opt->line_info,
               .vprintf_declared = vprintf_declared,
               .group_exit = -1};
  char *body = NULL, *globals = NULL, *hoisted = NULL;
  size_t body_len = 0, globals_len = 0, hoisted_len = 0;
  e.out = open_memstream(&body, &body_len);
  e.globals = open_memstream(&globals, &globals_len);
  e.hoist = open_memstream(&hoisted, &hoisted_len);
  if (!e.out || !e.globals || !e.hoist) {
    diag_plain_error(d, "out of memory while emitting PTX");
    if (e.out) fclose(e.out);
    if (e.globals) fclose(e.globals);
    if (e.hoist) fclose(e.hoist);
    free(body);
    free(globals);
    free(hoisted);
    return false;
  }
  char **regs = xmalloc(sizeof(char *) * (size_t)(k->nparams + 1));
  for (int i = 0; i < k->nparams; i++) regs[i] = arena_printf(m->ar, "%%arg%d", i);
  e.param_regs = (const char **)regs;
  e.group = (Group){.begin = 0, .size = (int64_t)k->warps * 32, .single = false};
  e.ranges = ir_kernel_ranges(m->ar, k);
  e.multiples = ir_var_multiples(m->ar, k);
  spread_plan(&e);
  regtile_plan(&e);
  emit_prologue(&e);
  fflush(e.out);
  size_t prologue_len = body_len; /* the hoisted code goes after it */
  Val aligned = emit_spread_alignment(&e);
  if (aligned.s[0]) {
    /* one copy of the body with vector loads and stores, one without:
     * no branch around each access (which would keep ptxas from issuing
     * the loads of a loop iteration together) */
    int other = new_label(&e);
    emit(&e, "@!%s bra $L%d;", aligned.s, other);
    e.aligned_copy = 1;
    emit_block(&e, &k->body);
    fprintf(e.out, "\tret;\n");
    emit_label(&e, other);
    e.aligned_copy = 2;
    if (!e.failed) emit_block(&e, &k->body);
  } else {
    emit_block(&e, &k->body);
  }
  fprintf(e.out, "\tret;\n");
  fclose(e.out);
  fclose(e.globals);
  fclose(e.hoist);
  if (!e.failed) {
    if (globals_len) fprintf(out, "%s\n", globals);
    emit_entry_params(out, k);
    emit_reg_decls(&e, out);
    fwrite(body, 1, prologue_len, out);
    fwrite(hoisted, 1, hoisted_len, out);
    fputs(body + prologue_len, out);
    fprintf(out, "}\n");
  }
  free(body);
  free(globals);
  free(hoisted);
  free(e.hoisted);
  free(e.streams);
  free(regs);
  return !e.failed;
}

static void print_quoted(FILE *out, const char *s) {
  fputc('"', out);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', out);
    fputc(*s, out);
  }
  fputc('"', out);
}

static bool any_smem(const IrModule *m) {
  for (int i = 0; i < m->nkernels; i++)
    if (m->kernels[i]->smem_bytes > 0) return true;
  return false;
}

bool ptx_emit(FILE *out, const IrModule *m, const PtxOptions *opt, Diag *d) {
  PtxOptions defaults = {.line_info = true};
  if (!opt) opt = &defaults;
  char *text = NULL;
  size_t len = 0;
  FILE *buf = open_memstream(&text, &len);
  if (!buf) {
    diag_plain_error(d, "out of memory while emitting PTX");
    return false;
  }
  IrModule all = with_variants(m);
  m = &all;
  bool ok = true;
  if (m->nkernels > TLS_MAX_ENTRIES) {
    diag_error(d, m->kernels[TLS_MAX_ENTRIES]->span,
               "the file would hold %d entries (its kernels and their occupancy variants): the "
               "runtime loads at most %d",
               m->nkernels, TLS_MAX_ENTRIES);
    ok = false;
  }
  ok = ok && emit_metadata(buf, m, d);
  fprintf(buf, "\n.version %s\n.target sm_90a\n.address_size 64\n\n", PTX_VERSION);
  if (opt->line_info) {
    fprintf(buf, ".file 1 ");
    print_quoted(buf, m->src && m->src->path ? m->src->path : "<unknown>");
    fprintf(buf, "\n\n");
  }
  if (any_smem(m)) fprintf(buf, ".extern .shared .align 1024 .b8 tls_smem[];\n\n");
  bool vprintf_declared = false;
  for (int i = 0; ok && i < m->nkernels; i++) {
    if (m->kernels[i]->occupancy_of) continue; /* metadata only: libtlsrt builds it */
    ok = emit_kernel(buf, m, m->kernels[i], opt, &vprintf_declared, d);
    fputc('\n', buf);
  }
  fclose(buf);
  if (ok && fwrite(text, 1, len, out) != len) {
    diag_plain_error(d, "cannot write the PTX output");
    ok = false;
  }
  free(text);
  return ok;
}
