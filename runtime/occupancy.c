/* occupancy.c: the code of the `occupancy BASE` entries (docs/format.md),
 * built at load time from BASE's. tlsc gives each kernel that multiplies
 * with mma.sync such a second entry: the same code with registers for more
 * blocks per SM, which runs faster or spills, as only ptxas can tell. So
 * the file holds BASE's code alone, assembles with no spill, and the
 * runtime tries, in order:
 *
 *   1. ptxas's own choice (no `.minnctapersm`), kept where it gives more
 *      blocks per SM than BASE and no more local memory;
 *   2. one block per SM more than BASE, asked of ptxas
 *      (`.minnctapersm N+1`) where the SM's threads, blocks and shared
 *      memory allow it, kept where ptxas fits it with no more local
 *      memory than BASE;
 *   3. ptxas's own choice with BASE's blocks per SM (another schedule of
 *      the same code), kept where it has no more local memory than BASE.
 *
 * An entry that none of these gives is dropped from the module: no
 * spilling code is ever launched, and the autotuner times what is left.
 * A build that ptxas (or the driver's JIT) refuses counts as none: the
 * file's own entries load all the same. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"

/* ------------------------------------------------------------ the text */

static bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c == '%';
}

/* Whether the line at p opens an entry (tlsc writes `.visible .entry`). */
static bool opens_entry(const char *p) {
  return !strncmp(p, ".visible .entry ", 16) || !strncmp(p, ".entry ", 7);
}

/* The module-level lines of ptx: no comment line (the metadata) and no
 * entry, from its opening line to its closing "}" line. */
static void module_lines(FILE *out, const char *ptx) {
  bool in_entry = false;
  for (const char *p = ptx; *p;) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) + 1 : strlen(p);
    if (opens_entry(p))
      in_entry = true;
    else if (in_entry && len >= 1 && p[0] == '}' && (len == 1 || p[1] == '\n' || p[1] == '\r'))
      in_entry = false;
    else if (!in_entry && strncmp(p, "//", 2))
      fwrite(p, 1, len, out);
    p += len;
  }
}

/* Entry `base`'s text: from its `.visible .entry BASE(` line through its
 * closing "}" line; NULL when the text has none. */
static const char *find_entry_text(const char *ptx, const char *base, size_t *len) {
  size_t n = strlen(base);
  for (const char *p = strstr(ptx, ".visible .entry "); p; p = strstr(p + 1, ".visible .entry ")) {
    if ((p != ptx && p[-1] != '\n') || strncmp(p + 16, base, n) || p[16 + n] != '(') continue;
    const char *end = strstr(p, "\n}\n");
    if (!end) return NULL;
    *len = (size_t)(end + 3 - p);
    return p;
  }
  return NULL;
}

/* Writes entry text e (e_len bytes) named `name`: BASE where it names the
 * entry or starts one of its parameters' names (BASE_param_..., BASE_tmapI)
 * becomes NAME, and the header's `.minnctapersm 1` line asks for ncta
 * blocks (no line for 0). False when the header has no such line. */
static bool write_renamed(FILE *out, const char *e, size_t e_len, const char *base,
                          const char *name, int ncta) {
  const char *body = strstr(e, "\n{\n");
  const char *hint = strstr(e, "\n.minnctapersm 1\n");
  if (!body || body >= e + e_len || !hint || hint > body) return false;
  size_t n = strlen(base);
  for (const char *p = e, *end = e + e_len; p < end;) {
    if (p == hint + 1) {
      if (ncta) fprintf(out, ".minnctapersm %d\n", ncta);
      p += strlen(".minnctapersm 1\n");
      continue;
    }
    bool starts = p == e || !is_ident_char(p[-1]);
    if (starts && (size_t)(end - p) > n && !strncmp(p, base, n) &&
        (p[n] == '(' || !strncmp(p + n, "_param_", 7) || !strncmp(p + n, "_tmap", 5))) {
      fputs(name, out);
      p += n;
      continue;
    }
    fputc(*p++, out);
  }
  return true;
}

char *rt_occupancy_text(const char *ptx, const char *const *bases, const char *const *names,
                        const int *ncta, int n, size_t *len, char *msg, size_t msglen) {
  char *text = NULL;
  FILE *out = open_memstream(&text, len);
  if (!out) return snprintf(msg, msglen, "out of memory"), NULL;
  module_lines(out, ptx);
  bool ok = true;
  for (int i = 0; ok && i < n; i++) {
    size_t e_len = 0;
    const char *e = find_entry_text(ptx, bases[i], &e_len);
    if (!e)
      snprintf(msg, msglen, "entry '%s' is not in the PTX text", bases[i]);
    else if (!write_renamed(out, e, e_len, bases[i], names[i], ncta[i]))
      snprintf(msg, msglen, "entry '%s' has no '.minnctapersm 1' line before its body", bases[i]);
    ok = e && !msg[0];
    fputc('\n', out);
  }
  fclose(out);
  if (!ok) {
    free(text);
    return NULL;
  }
  return text;
}

/* ------------------------------------------------------------ building */

/* What a build gives: blocks per SM, local memory bytes, registers. */
typedef struct Build {
  int blocks, local, regs;
} Build;

/* One occupancy entry, its base, and the builds tried. */
typedef struct Twin {
  tls_kernel *k;
  const tls_kernel *base;
  Build of_base, own, more; /* the base's; steps 1 and 2 */
  CUfunction own_fn, more_fn;
  int target; /* step 2's blocks per SM, 0: not tried */
} Twin;

/* What fn gives, launched as k is. */
static tls_status measure(tls_module *mod, const tls_kernel *k, CUfunction fn, Build *b) {
  CudaApi *cu = &mod->ctx->api;
  tls_status st = rt_opt_in_smem(mod->ctx, fn, k->smem);
  if (st) return st;
  CUresult r =
      cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&b->blocks, fn, k->block, (size_t)k->smem);
  if (!r) r = cu->cuFuncGetAttribute(&b->local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn);
  if (!r) r = cu->cuFuncGetAttribute(&b->regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn);
  return r ? rt_cuda_error(mod->ctx, r, "measuring an occupancy entry") : TLS_OK;
}

/* Step 1 (more == false) or 2 for the twins want[] marks: one text of
 * their code, compiled, each build measured into its Twin. */
static tls_status build(tls_module *mod, Twin *t, int n, const bool *want, bool more) {
  const char **bases = malloc(sizeof *bases * (size_t)n);
  const char **names = malloc(sizeof *names * (size_t)n);
  int *nctas = malloc(sizeof *nctas * (size_t)n), m = 0;
  tls_status st =
      bases && names && nctas ? TLS_OK : rt_error(mod->ctx, TLS_ERR_NOMEM, "out of memory");
  for (int i = 0; !st && i < n; i++)
    if (want[i])
      bases[m] = t[i].base->name, names[m] = t[i].k->name, nctas[m++] = more ? t[i].target : 0;
  char msg[512] = "";
  size_t len = 0;
  char *text =
      st || !m ? NULL : rt_occupancy_text(mod->text, bases, names, nctas, m, &len, msg, sizeof msg);
  if (!st && m && !text) st = rt_error(mod->ctx, TLS_ERR_FORMAT, "%s: %s", mod->name, msg);
  int first = mod->ncumods;
  if (text) st = rt_compile_unit(mod, text, len, names, m);
  free(text);
  if (st == TLS_ERR_COMPILE) { /* none of these builds: the file's own entries stand */
    if (getenv("TLSC_OCCUPANCY_LOG"))
      fprintf(stderr, "tlsrt: %s: the occupancy builds %s were not made: %.300s\n", mod->name,
              more ? "for one block more" : "by ptxas's choice", mod->ctx->err);
    st = TLS_OK;
    m = 0;
  }
  for (int i = 0; !st && m && i < n; i++) {
    if (!want[i]) continue;
    CUfunction *fn = more ? &t[i].more_fn : &t[i].own_fn;
    CUresult r = CUDA_ERROR_NOT_FOUND;
    for (int c = first; c < mod->ncumods && r == CUDA_ERROR_NOT_FOUND; c++)
      r = mod->ctx->api.cuModuleGetFunction(fn, mod->cumods[c], t[i].k->name);
    st = r ? rt_cuda_error(mod->ctx, r, "cuModuleGetFunction")
           : measure(mod, t[i].k, *fn, more ? &t[i].more : &t[i].own);
  }
  free(bases);
  free(names);
  free(nctas);
  return st;
}

/* Step 2's blocks per SM for t, or 0 where the SM's threads, blocks or
 * shared memory do not allow one more, or a thread would get fewer than
 * 32 registers. */
static int target_blocks(const tls_context *ctx, const Twin *t) {
  int b = t->of_base.blocks + 1, block = t->k->block;
  bool fits = b * block <= ctx->sm_threads && b <= ctx->sm_blocks &&
              (long long)b * (t->k->smem + ctx->block_reserved_smem) <= ctx->sm_smem &&
              ctx->sm_regs / (b * block) >= 32;
  return fits ? b : 0;
}

/* Which build an entry keeps: none, or that of step 1, 2 or 3. */
typedef enum Kept { KEPT_NONE, KEPT_OWN, KEPT_MORE, KEPT_SAME } Kept;
static const char *const KEPT_NAMES[] = {"none", "ptxas's own", "one block more", "same blocks"};

/* The build t keeps, from those made so far (steps 1, 2, 3 in turn). */
static Kept choose(const Twin *t) {
  bool own_clean = t->own_fn && t->own.local <= t->of_base.local;
  if (own_clean && t->own.blocks > t->of_base.blocks) return KEPT_OWN;
  if (t->more_fn && t->more.local <= t->of_base.local && t->more.blocks >= t->target)
    return KEPT_MORE;
  if (own_clean && t->own.blocks == t->of_base.blocks) return KEPT_SAME;
  return KEPT_NONE;
}

/* TLSC_OCCUPANCY_LOG: one line a twin on stderr, what was tried and kept. */
static void log_twin(const Twin *t, Kept kept) {
  if (!getenv("TLSC_OCCUPANCY_LOG")) return;
  fprintf(stderr,
          "tlsrt: %s: %s has %d blocks/SM (%d registers, %d B local); ptxas's own build %d "
          "(%d, %d B)",
          t->k->name, t->base->name, t->of_base.blocks, t->of_base.regs, t->of_base.local,
          t->own.blocks, t->own.regs, t->own.local);
  if (t->target)
    fprintf(stderr, "; for %d: %d (%d, %d B)", t->target, t->more.blocks, t->more.regs,
            t->more.local);
  fprintf(stderr, "; kept: %s\n", KEPT_NAMES[kept]);
}

tls_status rt_build_occupancy(tls_module *mod) {
  int n = 0;
  for (int i = 0; i < mod->nkernels; i++) n += mod->kernels[i].occupancy_of != NULL;
  if (!n) return TLS_OK;
  Twin *t = calloc((size_t)n, sizeof *t);
  bool *want = calloc((size_t)n, sizeof *want), *drop = calloc((size_t)mod->nkernels, 1);
  tls_status st = t && want && drop ? TLS_OK : rt_error(mod->ctx, TLS_ERR_NOMEM, "out of memory");
  for (int i = 0, j = 0; !st && i < mod->nkernels; i++) {
    tls_kernel *k = &mod->kernels[i];
    if (!k->occupancy_of) continue;
    t[j].k = k;
    t[j].base = rt_kernel_named(mod, k->occupancy_of);
    st = measure(mod, t[j].base, t[j].base->fn, &t[j].of_base);
    want[j++] = true;
  }
  if (!st) st = build(mod, t, n, want, false);
  for (int i = 0; !st && i < n; i++) {
    t[i].target = choose(&t[i]) == KEPT_OWN ? 0 : target_blocks(mod->ctx, &t[i]);
    want[i] = t[i].target > 0;
  }
  if (!st) st = build(mod, t, n, want, true);
  for (int i = 0, j = 0; !st && i < mod->nkernels; i++) {
    tls_kernel *k = &mod->kernels[i];
    if (!k->occupancy_of) continue;
    Kept kept = choose(&t[j]);
    k->fn = kept == KEPT_OWN || kept == KEPT_SAME ? t[j].own_fn
            : kept == KEPT_MORE                   ? t[j].more_fn
                                                  : NULL;
    log_twin(&t[j], kept);
    drop[i] = kept == KEPT_NONE;
    j++;
  }
  if (!st) st = meta_drop_kernels(mod, drop, mod->ctx->err, sizeof mod->ctx->err);
  free(t);
  free(want);
  free(drop);
  return st;
}
