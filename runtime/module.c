/* module.c: loading a tlsc PTX file (parse, check, compile) and looking its
 * entries up. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"

enum { MAX_FILE_BYTES = 256 << 20 };

void rt_unload_modules(tls_module *mod) {
  for (int i = 0; i < mod->ncumods; i++)
    if (mod->ctx->online) mod->ctx->api.cuModuleUnload(mod->cumods[i]);
  mod->ncumods = 0;
}

/* The entry's function, from whichever of the module's CUmodules has it. */
static CUresult find_function(tls_module *mod, tls_kernel *k) {
  CUresult r = CUDA_ERROR_NOT_FOUND;
  for (int i = 0; i < mod->ncumods && r == CUDA_ERROR_NOT_FOUND; i++)
    r = mod->ctx->api.cuModuleGetFunction(&k->fn, mod->cumods[i], k->name);
  return r;
}

void tls_module_free(tls_module *mod) {
  if (!mod) return;
  rt_unload_modules(mod);
  if (mod->kernels) rt_free_workspaces(mod);
  meta_free_kernels(mod);
  free(mod->name);
  free(mod->text);
  free(mod->source);
  free(mod);
}

tls_status rt_opt_in_smem(tls_context *ctx, CUfunction fn, int smem) {
  if (smem <= 48 * 1024) return TLS_OK;
  CUresult r =
      ctx->api.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem);
  return r ? rt_cuda_error(ctx, r, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)") : TLS_OK;
}

/* Parses, then (online) compiles and resolves every entry's function, the
 * occupancy entries' from their bases' code (occupancy.c). */
static tls_status module_finish(tls_module *mod, tls_module **out) {
  tls_context *ctx = mod->ctx;
  tls_status st = meta_parse(mod, ctx->err, sizeof ctx->err);
  if (!st && ctx->online) st = rt_need_current(ctx, "tls_module_load");
  if (!st && ctx->online) st = compile_module(mod);
  for (int i = 0; !st && ctx->online && i < mod->nkernels; i++) {
    tls_kernel *k = &mod->kernels[i];
    if (k->occupancy_of) continue; /* built from its base's code below */
    CUresult r = find_function(mod, k);
    if (r)
      st = rt_cuda_error(ctx, r, "cuModuleGetFunction");
    else if (k->smem > 48 * 1024 && k->smem > ctx->smem_optin)
      st = rt_error(ctx, TLS_ERR_COMPILE,
                    "%s: entry '%s' needs %d bytes of shared memory; the GPU allows %d", mod->name,
                    k->name, k->smem, ctx->smem_optin);
    else
      st = rt_opt_in_smem(ctx, k->fn, k->smem);
  }
  if (!st && ctx->online) st = rt_build_occupancy(mod);
  if (st) {
    tls_module_free(mod);
    return st;
  }
  *out = mod;
  return TLS_OK;
}

static tls_module *module_new(tls_context *ctx, const char *name, char *text, size_t len) {
  tls_module *mod = calloc(1, sizeof *mod);
  char *name_copy = strdup(name);
  if (!mod || !name_copy) {
    free(mod);
    free(name_copy);
    free(text);
    return NULL;
  }
  mod->ctx = ctx;
  mod->name = name_copy;
  mod->text = text;
  mod->len = len;
  return mod;
}

tls_status tls_module_load_string(tls_context *ctx, const char *ptx, const char *name,
                                  tls_module **out) {
  if (!ctx || !ptx || !out)
    return rt_error(ctx, TLS_ERR_INVALID, "tls_module_load_string: NULL argument");
  *out = NULL;
  char *text = strdup(ptx);
  if (!text) return rt_error(ctx, TLS_ERR_NOMEM, "out of memory");
  tls_module *mod = module_new(ctx, name ? name : "<string>", text, strlen(text));
  if (!mod) return rt_error(ctx, TLS_ERR_NOMEM, "out of memory");
  return module_finish(mod, out);
}

/* Reads a whole file; refuses NUL bytes (a PTX file is text). */
static tls_status read_file(tls_context *ctx, const char *path, char **text, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return rt_error(ctx, TLS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
    n += got;
    if (n == cap && cap < MAX_FILE_BYTES) {
      char *bigger = realloc(buf, cap * 2 + 1);
      if (!bigger) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = bigger;
      cap *= 2;
    } else if (n == cap) {
      fclose(f);
      free(buf);
      return rt_error(ctx, TLS_ERR_IO, "%s: larger than %d MB", path, MAX_FILE_BYTES >> 20);
    }
  }
  int failed = ferror(f);
  fclose(f);
  if (!buf) return rt_error(ctx, TLS_ERR_NOMEM, "out of memory");
  if (failed) {
    free(buf);
    return rt_error(ctx, TLS_ERR_IO, "%s: read error", path);
  }
  buf[n] = 0;
  if (strlen(buf) != n) {
    free(buf);
    return rt_error(ctx, TLS_ERR_FORMAT, "%s: contains NUL bytes (not a PTX text file)", path);
  }
  *text = buf;
  *len = n;
  return TLS_OK;
}

tls_status tls_module_load_file(tls_context *ctx, const char *path, tls_module **out) {
  if (!ctx || !path || !out)
    return rt_error(ctx, TLS_ERR_INVALID, "tls_module_load_file: NULL argument");
  *out = NULL;
  char *text = NULL;
  size_t len = 0;
  tls_status st = read_file(ctx, path, &text, &len);
  if (st) return st;
  tls_module *mod = module_new(ctx, path, text, len);
  if (!mod) return rt_error(ctx, TLS_ERR_NOMEM, "out of memory");
  return module_finish(mod, out);
}

const char *tls_module_compiled_by(const tls_module *mod) {
  return mod && mod->compiled_by ? mod->compiled_by : "none";
}

/* ------------------------------------------------------------ lookup */

int tls_module_num_kernels(const tls_module *mod) { return mod ? mod->nkernels : 0; }

const tls_kernel *tls_module_kernel(const tls_module *mod, int index) {
  return mod && index >= 0 && index < mod->nkernels ? &mod->kernels[index] : NULL;
}

tls_kernel *rt_kernel_named(const tls_module *mod, const char *name) {
  for (int i = 0; i < mod->nkernels; i++)
    if (!strcmp(mod->kernels[i].name, name)) return &mod->kernels[i];
  return NULL;
}

const tls_kernel *tls_kernel_find(const tls_module *mod, const char *name) {
  if (!mod || !name) return NULL;
  const tls_kernel *k = rt_kernel_named(mod, name);
  if (!k) rt_error(mod->ctx, TLS_ERR_NOT_FOUND, "%s: no entry named '%s'", mod->name, name);
  return k;
}

/* The next "k=v" of a config text at *p, pairs separated by ',' or ' '
 * outside brackets ("w=[1, 4],s=3": a list value holds both): moves *p to
 * it and returns its length, 0 at the end. */
static size_t next_pair(const char **p) {
  const char *s = *p + strspn(*p, ", ");
  const char *q = s;
  for (int depth = 0; *q && (depth > 0 || (*q != ',' && *q != ' ')); q++)
    depth += (*q == '[' || *q == '(') - (*q == ']' || *q == ')');
  *p = s;
  return (size_t)(q - s);
}

/* Two pairs, spaces aside ("w=[1, 4]" is "w=[1,4]"). */
static bool same_pair(const char *a, size_t na, const char *b, size_t nb) {
  const char *ea = a + na, *eb = b + nb;
  for (;; a++, b++) {
    while (a < ea && *a == ' ') a++;
    while (b < eb && *b == ' ') b++;
    if (a == ea || b == eb) return a == ea && b == eb;
    if (*a != *b) return false;
  }
}

/* True when every "k=v" of `want` is in the entry's config. The whole of
 * `want` counts: a copy cut to a fixed size could drop or shorten its last
 * pair and match the wrong entry. */
static bool config_matches(const char *have, const char *want) {
  size_t n;
  for (const char *w = want; (n = next_pair(&w)) > 0; w += n) {
    bool found = false;
    size_t m;
    for (const char *h = have; !found && (m = next_pair(&h)) > 0; h += m)
      found = same_pair(w, n, h, m);
    if (!found) return false;
  }
  return true;
}

const tls_kernel *tls_kernel_find_config(const tls_module *mod, const char *script,
                                         const char *config) {
  if (!mod || !script) return NULL;
  for (int i = 0; i < mod->nkernels; i++) {
    const tls_kernel *k = &mod->kernels[i];
    if (k->is_variant) continue; /* reached through its generic sibling */
    if (!strcmp(k->script, script) && config_matches(k->config, config ? config : "")) return k;
  }
  rt_error(mod->ctx, TLS_ERR_NOT_FOUND, "%s: no entry of script '%s' with config '%s'", mod->name,
           script, config ? config : "");
  return NULL;
}

const char *tls_kernel_name(const tls_kernel *k) { return k->name; }
const char *tls_kernel_script(const tls_kernel *k) { return k->script; }
const char *tls_kernel_config(const tls_kernel *k) { return k->config; }
const char *tls_kernel_fixed(const tls_kernel *k) { return k->fixed; }
int tls_kernel_block(const tls_kernel *k) { return k->block; }
int tls_kernel_smem(const tls_kernel *k) { return k->smem; }
int tls_kernel_num_params(const tls_kernel *k) { return k->nparams; }
int tls_kernel_num_tmaps(const tls_kernel *k) { return k->ntmaps; }
int tls_kernel_num_workspaces(const tls_kernel *k) { return k->nws; }

int tls_kernel_param_tmap(const tls_kernel *k, int i) {
  if (!k || i < 0 || i >= k->nparams) return -1;
  for (int t = 0; t < k->ntmaps; t++)
    if (k->tmaps[t].ptr_param == i) return t;
  return -1;
}

const char *tls_kernel_workspace(const tls_kernel *k, int i) {
  return i >= 0 && i < k->nws ? k->ws[i].desc : NULL;
}

const char *tls_kernel_param_name(const tls_kernel *k, int i) {
  return i >= 0 && i < k->nparams ? k->params[i].name : NULL;
}

const char *tls_kernel_param_type(const tls_kernel *k, int i) {
  return i >= 0 && i < k->nparams ? k->params[i].type_text : NULL;
}
