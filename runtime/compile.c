/* compile.c: PTX -> loaded CUmodule. With ptxas available (TLSC_PTXAS, PATH,
 * /usr/local/cuda/bin) the PTX is assembled to a cubin for the device's arch
 * and kept in an on-disk cache keyed by a hash of the PTX text and the arch
 * ($TLSC_CACHE_DIR, else $XDG_CACHE_HOME/tlsc, else ~/.cache/tlsc); a cache
 * entry is written to a temporary name and renamed, so readers never see a
 * partial file. Otherwise the driver JIT compiles the PTX.
 * TLSC_COMPILE=jit|ptxas forces one path. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/rt_internal.h"

extern char **environ;

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

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  long n = fseek(f, 0, SEEK_END) ? -1 : ftell(f);
  if (n > 0 && !fseek(f, 0, SEEK_SET) && (buf = malloc((size_t)n + 1))) {
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
      free(buf);
      buf = NULL;
    } else {
      buf[n] = 0;
      *len = (size_t)n;
    }
  }
  fclose(f);
  return buf;
}

static bool write_file(const char *path, const char *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(data, 1, len, f) == len;
  return (fclose(f) == 0) && ok;
}

/* ------------------------------------------------------------- ptxas */

/* Runs ptxas -arch=ARCH -o cubin ptx, its output into log. 0 = success. */
static int run_ptxas(const char *ptxas, const char *arch, const char *ptx, const char *cubin,
                     const char *log) {
  char arch_flag[32];
  snprintf(arch_flag, sizeof arch_flag, "-arch=%s", arch);
  char *argv[] = {(char *)ptxas, arch_flag, "-o", (char *)cubin, (char *)ptx, NULL};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = posix_spawn(&pid, ptxas, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc) return -1;
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static tls_status load_image(tls_module *mod, const void *image) {
  CUresult r = mod->ctx->api.cuModuleLoadData(&mod->cumod, image);
  return r ? rt_cuda_error(mod->ctx, r, "cuModuleLoadData") : TLS_OK;
}

/* Assembles into dir/key.cubin (through temporary names) and loads it. */
static tls_status compile_ptxas(tls_module *mod, const char *ptxas, const char *dir,
                                const char *key) {
  tls_context *ctx = mod->ctx;
  char ptx[4200], tmp[4200], log[4200], final[4200];
  snprintf(ptx, sizeof ptx, "%s/%s.%d.ptx", dir, key, (int)getpid());
  snprintf(tmp, sizeof tmp, "%s/%s.%d.cubin.tmp", dir, key, (int)getpid());
  snprintf(log, sizeof log, "%s/%s.%d.log", dir, key, (int)getpid());
  snprintf(final, sizeof final, "%s/%s.cubin", dir, key);
  if (!write_file(ptx, mod->text, mod->len))
    return rt_error(ctx, TLS_ERR_IO, "cannot write %s: %s", ptx, strerror(errno));
  int rc = run_ptxas(ptxas, ctx->arch, ptx, tmp, log);
  size_t n = 0;
  char *out = slurp(log, &n);
  unlink(ptx);
  unlink(log);
  if (rc) {
    unlink(tmp);
    rt_error(ctx, TLS_ERR_COMPILE, "%s: ptxas -arch=%s failed (exit %d):\n%.3500s", mod->name,
             ctx->arch, rc, out ? out : "");
    free(out);
    return TLS_ERR_COMPILE;
  }
  free(out);
  if (rename(tmp, final)) {
    unlink(tmp);
    return rt_error(ctx, TLS_ERR_IO, "cannot rename into %s: %s", final, strerror(errno));
  }
  char *cubin = slurp(final, &n);
  if (!cubin) return rt_error(ctx, TLS_ERR_IO, "cannot read %s", final);
  tls_status st = load_image(mod, cubin);
  free(cubin);
  mod->compiled_by = "ptxas";
  return st;
}

/* The cache hit path; false (and the stale file removed) on any failure. */
static bool load_cached(tls_module *mod, const char *dir, const char *key) {
  char path[4200];
  size_t n;
  snprintf(path, sizeof path, "%s/%s.cubin", dir, key);
  char *cubin = slurp(path, &n);
  if (!cubin) return false;
  CUresult r = mod->ctx->api.cuModuleLoadData(&mod->cumod, cubin);
  free(cubin);
  if (r) {
    unlink(path);
    return false;
  }
  mod->compiled_by = "cache";
  return true;
}

/* --------------------------------------------------------------- JIT */

static tls_status compile_jit(tls_module *mod) {
  tls_context *ctx = mod->ctx;
  char log[16384];
  log[0] = 0;
  int opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[] = {log, (void *)(uintptr_t)sizeof log};
  CUresult r = ctx->api.cuModuleLoadDataEx(&mod->cumod, mod->text, 2, opts, vals);
  mod->compiled_by = "jit";
  if (!r) return TLS_OK;
  const char *name = "?";
  ctx->api.cuGetErrorName(r, &name);
  return rt_error(ctx, TLS_ERR_COMPILE, "%s: the driver JIT refused the PTX: %s\n%.3500s",
                  mod->name, name ? name : "?", log);
}

tls_status compile_module(tls_module *mod) {
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
    return compile_jit(mod);
  }
  char key[40], dir[4096];
  content_key(mod->text, mod->len, mod->ctx->arch, key);
  if (cache_dir(dir, sizeof dir)) {
    if (load_cached(mod, dir, key)) return TLS_OK;
    return compile_ptxas(mod, ptxas, dir, key);
  }
  /* No cache directory: assemble in a private temporary one. */
  char tmpdir[] = "/tmp/tlsc-XXXXXX";
  if (!mkdtemp(tmpdir)) return compile_jit(mod);
  tls_status st = compile_ptxas(mod, ptxas, tmpdir, key);
  char cubin[4200];
  snprintf(cubin, sizeof cubin, "%s/%s.cubin", tmpdir, key);
  unlink(cubin);
  rmdir(tmpdir);
  return st;
}
