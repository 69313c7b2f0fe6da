/* compile.c: PTX -> loaded CUmodule. With ptxas available (TLSC_PTXAS, PATH,
 * /usr/local/cuda/bin) the PTX is assembled for the device's arch (a cubin,
 * or for a file of many entries a bundle of cubins that concurrent ptxas
 * processes made: assemble.c) and kept in an on-disk cache keyed by a hash
 * of the PTX text and the arch
 * ($TLSC_CACHE_DIR, else $XDG_CACHE_HOME/tlsc, else ~/.cache/tlsc); a cache
 * entry is written to a temporary name and renamed, so readers never see a
 * partial file. Otherwise the driver JIT compiles the PTX.
 * TLSC_COMPILE=jit|ptxas forces one path. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/rt_internal.h"

/* ------------------------------------------------------------ helpers */

/* Two FNV-1a 64 hashes with different seeds: a 128-bit content key. */
static void content_key(const char *text, size_t len, const char *arch, char out[40]) {
  uint64_t h1 = 0xcbf29ce484222325ull, h2 = 0x84222325cbf29ce4ull;
  for (size_t i = 0; i < len; i++) {
    h1 = (h1 ^ (unsigned char)text[i]) * 0x100000001b3ull;
    h2 = (h2 ^ (unsigned char)text[i]) * 0x100000001b3ull;
    h2 ^= h2 >> 29;
  }
  for (const char *p = arch; *p; p++) h1 = (h1 ^ (unsigned char)*p) * 0x100000001b3ull;
  snprintf(out, 40, "%016llx%016llx", (unsigned long long)h1, (unsigned long long)h2);
}

static bool is_executable(const char *path) { return access(path, X_OK) == 0; }

/* ptxas: $TLSC_PTXAS, then PATH, then /usr/local/cuda/bin. */
static bool find_ptxas(char *out, size_t len) {
  const char *env = getenv("TLSC_PTXAS");
  if (env && *env) {
    snprintf(out, len, "%s", env);
    return is_executable(out);
  }
  const char *path = getenv("PATH");
  char dirs[4096];
  snprintf(dirs, sizeof dirs, "%s", path ? path : "");
  char *save;
  for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
    snprintf(out, len, "%s/ptxas", d);
    if (is_executable(out)) return true;
  }
  snprintf(out, len, "/usr/local/cuda/bin/ptxas");
  return is_executable(out);
}

/* mkdir -p; false when it cannot be made. */
static bool make_dirs(char *path) {
  for (char *p = path + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    int bad = mkdir(path, 0755) && errno != EEXIST;
    *p = '/';
    if (bad) return false;
  }
  return !mkdir(path, 0755) || errno == EEXIST;
}

static bool cache_dir(char *out, size_t len) {
  const char *env = getenv("TLSC_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"),
             *home = getenv("HOME");
  if (env && *env)
    snprintf(out, len, "%s", env);
  else if (xdg && *xdg)
    snprintf(out, len, "%s/tlsc", xdg);
  else if (home && *home)
    snprintf(out, len, "%s/.cache/tlsc", home);
  else
    return false;
  return make_dirs(out);
}

/* ------------------------------------------------------------- ptxas */

/* Whether the module holds n more CUmodules (RT_MAX_UNITS units of at
 * most RT_MAX_CUMODS each). */
static tls_status room_for(tls_module *mod, int n) {
  if (mod->ncumods + n <= RT_MAX_UNITS * RT_MAX_CUMODS) return TLS_OK;
  return rt_error(mod->ctx, TLS_ERR_COMPILE, "%s: more than %d CUmodules", mod->name,
                  RT_MAX_UNITS * RT_MAX_CUMODS);
}

/* Loads an image: a cubin, or a bundle of them (assemble.c), one CUmodule
 * a part. */
static tls_status load_image(tls_module *mod, const char *image, size_t len) {
  const char *parts[RT_MAX_CUMODS];
  size_t sizes[RT_MAX_CUMODS];
  int n = rt_image_parts(image, len, parts, sizes, RT_MAX_CUMODS);
  if (n < 1) return rt_error(mod->ctx, TLS_ERR_COMPILE, "%s: not a cubin or a bundle", mod->name);
  tls_status st = room_for(mod, n);
  if (st) return st;
  for (int i = 0; i < n; i++) {
    CUresult r = mod->ctx->api.cuModuleLoadData(&mod->cumods[mod->ncumods], parts[i]);
    if (r) return rt_cuda_error(mod->ctx, r, "cuModuleLoadData");
    mod->ncumods++;
  }
  return TLS_OK;
}

/* One text to compile and the entries it holds. */
typedef struct Unit {
  const char *text;
  size_t len;
  const char *const *names;
  int nnames;
} Unit;

/* Assembles into dir/key.cubin (through temporary names), the entries
 * shared among concurrent ptxas processes, and loads it. */
static tls_status compile_ptxas(tls_module *mod, const Unit *u, const char *ptxas, const char *dir,
                                const char *key) {
  tls_context *ctx = mod->ctx;
  char tmp[4200], final[4200], log[4000];
  snprintf(tmp, sizeof tmp, "%s/%s.%d.tmp", dir, key, (int)getpid());
  snprintf(final, sizeof final, "%s/%s.cubin", dir, key);
  int jobs = rt_assemble_jobs(u->nnames); /* at most RT_MAX_CUMODS */
  int rc = rt_assemble(ptxas, ctx->arch, u->text, u->len, u->names, u->nnames, jobs, tmp, log,
                       sizeof log);
  /* A failure of the shares is confirmed (and reported) by one ptxas over
   * the whole file as written: splitting never makes a file fail. */
  if (rc && jobs > 1)
    rc = rt_assemble(ptxas, ctx->arch, u->text, u->len, u->names, u->nnames, 1, tmp, log,
                     sizeof log);
  if (rc) {
    unlink(tmp);
    return rt_error(ctx, TLS_ERR_COMPILE, "%s: ptxas -arch=%s failed (exit %d):\n%s", mod->name,
                    ctx->arch, rc, log);
  }
  if (rename(tmp, final)) {
    unlink(tmp);
    return rt_error(ctx, TLS_ERR_IO, "cannot rename into %s: %s", final, strerror(errno));
  }
  size_t n = 0;
  char *image = rt_read_file(final, &n);
  if (!image) return rt_error(ctx, TLS_ERR_IO, "cannot read %s", final);
  tls_status st = load_image(mod, image, n);
  free(image);
  if (!mod->compiled_by) mod->compiled_by = "ptxas";
  return st;
}

/* The cache hit path; false (and the stale file removed) on any failure. */
static bool load_cached(tls_module *mod, const char *dir, const char *key) {
  char path[4200];
  size_t n;
  snprintf(path, sizeof path, "%s/%s.cubin", dir, key);
  char *image = rt_read_file(path, &n);
  if (!image) return false;
  int before = mod->ncumods;
  tls_status st = load_image(mod, image, n);
  free(image);
  if (st) {
    while (mod->ncumods > before) mod->ctx->api.cuModuleUnload(mod->cumods[--mod->ncumods]);
    unlink(path);
    return false;
  }
  if (!mod->compiled_by) mod->compiled_by = "cache";
  return true;
}

/* --------------------------------------------------------------- JIT */

static tls_status compile_jit(tls_module *mod, const Unit *u) {
  tls_context *ctx = mod->ctx;
  tls_status room = room_for(mod, 1);
  if (room) return room;
  char log[16384];
  log[0] = 0;
  int opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[] = {log, (void *)(uintptr_t)sizeof log};
  CUresult r = ctx->api.cuModuleLoadDataEx(&mod->cumods[mod->ncumods], u->text, 2, opts, vals);
  if (!mod->compiled_by) mod->compiled_by = "jit";
  if (!r) {
    mod->ncumods++;
    return TLS_OK;
  }
  const char *name = "?";
  ctx->api.cuGetErrorName(r, &name);
  return rt_error(ctx, TLS_ERR_COMPILE, "%s: the driver JIT refused the PTX: %s\n%.3500s",
                  mod->name, name ? name : "?", log);
}

static tls_status compile(tls_module *mod, const Unit *u) {
  const char *force = getenv("TLSC_COMPILE");
  tls_compile_mode mode = mod->ctx->mode;
  if (mode == TLS_COMPILE_AUTO && force && !strcmp(force, "jit")) mode = TLS_COMPILE_JIT;
  if (mode == TLS_COMPILE_AUTO && force && !strcmp(force, "ptxas")) mode = TLS_COMPILE_PTXAS;
  char ptxas[4096];
  bool have_ptxas = mode != TLS_COMPILE_JIT && find_ptxas(ptxas, sizeof ptxas);
  if (!have_ptxas) {
    if (mode == TLS_COMPILE_PTXAS)
      return rt_error(mod->ctx, TLS_ERR_COMPILE,
                      "ptxas not found (TLSC_PTXAS, PATH, /usr/local/cuda/bin)");
    return compile_jit(mod, u);
  }
  char key[40], dir[4096];
  content_key(u->text, u->len, mod->ctx->arch, key);
  if (cache_dir(dir, sizeof dir)) {
    if (load_cached(mod, dir, key)) return TLS_OK;
    return compile_ptxas(mod, u, ptxas, dir, key);
  }
  /* No cache directory: assemble in a private temporary one. */
  char tmpdir[] = "/tmp/tlsc-XXXXXX";
  if (!mkdtemp(tmpdir)) return compile_jit(mod, u);
  tls_status st = compile_ptxas(mod, u, ptxas, tmpdir, key);
  char cubin[4200];
  snprintf(cubin, sizeof cubin, "%s/%s.cubin", tmpdir, key);
  unlink(cubin);
  rmdir(tmpdir);
  return st;
}

tls_status rt_compile_unit(tls_module *mod, const char *text, size_t len, const char *const *names,
                           int nnames) {
  Unit u = {text, len, names, nnames};
  return compile(mod, &u);
}

tls_status compile_module(tls_module *mod) {
  const char **names = malloc(sizeof *names * (size_t)(mod->nkernels ? mod->nkernels : 1));
  if (!names) return rt_error(mod->ctx, TLS_ERR_NOMEM, "out of memory");
  int n = 0;
  for (int i = 0; i < mod->nkernels; i++)
    if (!mod->kernels[i].occupancy_of) names[n++] = mod->kernels[i].name;
  tls_status st = rt_compile_unit(mod, mod->text, mod->len, names, n);
  free(names);
  return st;
}
