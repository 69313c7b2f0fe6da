/* assemble.c: PTX -> one loadable image, through ptxas. A file of many
 * entries (an autotune space, specialised siblings: Tilus's Ampere v4 with
 * --specialize is 144 entries, a minute of one ptxas) is split among
 * concurrent ptxas processes, each given the file with a share of the
 * entries (the rest of the file, its declarations and globals, in every
 * share; not the metadata; every entry named must be in the file); each
 * share's cubin holds only its own text for line information, so that the
 * parts together are the size of one cubin. The image is then a bundle of their cubins:
 *
 *   "TLSCBNDL" | u32 count | count x (u64 size | size bytes of a cubin)
 *
 * (little-endian), which rt_image_parts takes apart again. A file of one
 * entry, or one job, is one ptxas and a plain cubin. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/rt_internal.h"

extern char **environ;

static const char BUNDLE_MAGIC[8] = {'T', 'L', 'S', 'C', 'B', 'N', 'D', 'L'};

int rt_assemble_jobs(int nentries) {
  const char *env = getenv("TLSC_PTXAS_JOBS");
  long jobs = env && *env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
  if (jobs < 1) jobs = 1;
  if (jobs > RT_MAX_CUMODS) jobs = RT_MAX_CUMODS;
  return nentries < jobs ? (nentries < 1 ? 1 : nentries) : (int)jobs;
}

/* Starts `ptxas -arch=ARCH -o OUT PTX`, its output into LOG. (No `-e`:
 * a share's text holds its entries only, and a list of a thousand names
 * would pass Linux's 128 KB limit on one argument.) */
static int spawn_ptxas(const char *ptxas, const char *arch, const char *ptx, const char *out,
                       const char *log, pid_t *pid) {
  char arch_flag[32];
  snprintf(arch_flag, sizeof arch_flag, "-arch=%s", arch);
  char *argv[] = {(char *)ptxas, arch_flag, "-o", (char *)out, (char *)ptx, NULL};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  int rc = posix_spawn(pid, ptxas, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc;
}

static int wait_exit(pid_t pid) {
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

char *rt_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  long n = fseek(f, 0, SEEK_END) ? -1 : ftell(f);
  if (n >= 0 && !fseek(f, 0, SEEK_SET) && (buf = malloc((size_t)n + 1))) {
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

/* Entry e goes to process e % jobs: neighbours in the file (a point's
 * generic and specialised entries) go to different processes, so that the
 * shares take about the same time. The index of the entry `name` in share
 * i, or -1. */
static int share_index(const char *name, size_t len, const char *const *entries, int nentries,
                       int jobs, int i) {
  for (int e = i; e < nentries; e += jobs)
    if (strlen(entries[e]) == len && !memcmp(entries[e], name, len)) return e;
  return -1;
}

/* Brace depth and comment state of the PTX scanned so far: braces in
 * comments and strings do not count. */
typedef struct Scan {
  int depth;
  bool in_comment; /* inside a block comment */
} Scan;

/* Scans one line (p to end) into sc. */
static void scan_line(Scan *sc, const char *p, const char *end) {
  bool in_string = false;
  for (; p < end; p++) {
    if (sc->in_comment) {
      if (p[0] == '*' && p + 1 < end && p[1] == '/') sc->in_comment = false, p++;
    } else if (in_string) {
      if (*p == '\\' && p + 1 < end)
        p++;
      else if (*p == '"')
        in_string = false;
    } else if (p[0] == '/' && p + 1 < end && p[1] == '/') {
      return;
    } else if (p[0] == '/' && p + 1 < end && p[1] == '*') {
      sc->in_comment = true, p++;
    } else if (*p == '"') {
      in_string = true;
    } else {
      sc->depth += (*p == '{') - (*p == '}');
    }
  }
}

/* The entry a top-level line declares (its name and length), or NULL. */
static const char *entry_name(const char *p, size_t *len) {
  const char *name = !strncmp(p, ".visible .entry ", 16) ? p + 16
                     : !strncmp(p, ".entry ", 7)         ? p + 7
                                                         : NULL;
  if (name) *len = strcspn(name, "( \t\n");
  return name;
}

/* The PTX text with the entries of share i only: every other line but the
 * `//@tls` metadata is kept; an entry runs from its `.entry NAME(` line at
 * the top level to the line that closes its body's braces. Marks
 * found[e] for each entry e of the share that the text declares. */
static char *ptx_share(const char *text, size_t len, const char *const *entries, int nentries,
                       int jobs, int i, bool *found) {
  char *out = malloc(len + 1), *o = out;
  if (!out) return NULL;
  Scan sc = {0};
  bool skipping = false, opened = false;
  for (const char *p = text, *end = text + len; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *next = nl ? nl + 1 : end;
    size_t n;
    const char *name = sc.depth == 0 && !sc.in_comment ? entry_name(p, &n) : NULL;
    if (name) {
      int e = share_index(name, n, entries, nentries, jobs, i);
      if (e >= 0) found[e] = true;
      skipping = e < 0;
      opened = false;
    }
    bool keep = !skipping && strncmp(p, "//@tls", 6);
    scan_line(&sc, p, next);
    opened = opened || sc.depth > 0;
    if (skipping && opened && sc.depth == 0) skipping = false; /* its body closed on this line */
    if (keep) {
      memcpy(o, p, (size_t)(next - p));
      o += next - p;
    }
    p = next;
  }
  *o = 0;
  return out;
}

static bool write_bytes(const char *path, const char *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(data, 1, len, f) == len;
  return (fclose(f) == 0) && ok;
}

/* The first failed process's output into `log`. */
static void failure_log(const char *path, char *log, size_t loglen) {
  size_t n = 0;
  char *text = rt_read_file(path, &n);
  snprintf(log, loglen, "%.3500s", text ? text : "");
  free(text);
}

/* Names of the files of share i: its PTX, cubin and log. */
typedef struct Share {
  char ptx[4200], cubin[4200], log[4200];
  pid_t pid;
  bool started;
} Share;

/* Writes the shares' cubins as a bundle to out. */
static bool write_bundle(const char *out, const Share *shares, int jobs) {
  FILE *f = fopen(out, "wb");
  if (!f) return false;
  uint32_t count = (uint32_t)jobs;
  bool ok = fwrite(BUNDLE_MAGIC, 1, 8, f) == 8 && fwrite(&count, 4, 1, f) == 1;
  for (int i = 0; ok && i < jobs; i++) {
    size_t n = 0;
    char *cubin = rt_read_file(shares[i].cubin, &n);
    uint64_t size = n;
    ok = cubin && fwrite(&size, 8, 1, f) == 1 && fwrite(cubin, 1, n, f) == n;
    free(cubin);
  }
  return (fclose(f) == 0) && ok;
}

/* One ptxas over the whole text: a plain cubin. */
static int assemble_one(const char *ptxas, const char *arch, const char *text, size_t len,
                        const char *out, char *log, size_t loglen) {
  char ptx[4200], logpath[4200];
  snprintf(ptx, sizeof ptx, "%s.ptx", out);
  snprintf(logpath, sizeof logpath, "%s.log", out);
  int rc = -1;
  pid_t pid;
  if (!write_bytes(ptx, text, len))
    snprintf(log, loglen, "cannot write %s: %s", ptx, strerror(errno));
  else if (spawn_ptxas(ptxas, arch, ptx, out, logpath, &pid))
    snprintf(log, loglen, "cannot start %s: %s", ptxas, strerror(errno));
  else if ((rc = wait_exit(pid)))
    failure_log(logpath, log, loglen);
  unlink(ptx);
  unlink(logpath);
  return rc;
}

/* Writes share i's PTX and starts its ptxas; false with the reason. */
static bool start_share(Share *sh, const char *ptxas, const char *arch, const char *text,
                        size_t len, const char *const *entries, int nentries, int jobs, int i,
                        bool *found, const char *out, char *log, size_t loglen) {
  snprintf(sh->ptx, sizeof sh->ptx, "%s.part%d.ptx", out, i);
  snprintf(sh->cubin, sizeof sh->cubin, "%s.part%d", out, i);
  snprintf(sh->log, sizeof sh->log, "%s.part%d.log", out, i);
  char *part = ptx_share(text, len, entries, nentries, jobs, i, found);
  bool ok = part != NULL;
  if (!ok)
    snprintf(log, loglen, "out of memory");
  else if (!(ok = write_bytes(sh->ptx, part, strlen(part))))
    snprintf(log, loglen, "cannot write %s: %s", sh->ptx, strerror(errno));
  else if (!(ok = !spawn_ptxas(ptxas, arch, sh->ptx, sh->cubin, sh->log, &sh->pid)))
    snprintf(log, loglen, "cannot start %s: %s", ptxas, strerror(errno));
  sh->started = ok;
  free(part);
  return ok;
}

int rt_assemble(const char *ptxas, const char *arch, const char *text, size_t len,
                const char *const *entries, int nentries, int jobs, const char *out, char *log,
                size_t loglen) {
  log[0] = 0;
  if (jobs <= 1 || nentries <= 1) return assemble_one(ptxas, arch, text, len, out, log, loglen);
  if (jobs > nentries) jobs = nentries;
  Share *shares = calloc((size_t)jobs, sizeof *shares);
  bool *found = calloc((size_t)nentries, sizeof *found);
  if (!shares || !found) {
    free(shares);
    free(found);
    snprintf(log, loglen, "out of memory");
    return -1;
  }
  int rc = 0;
  for (int i = 0; i < jobs && !rc; i++)
    if (!start_share(&shares[i], ptxas, arch, text, len, entries, nentries, jobs, i, found, out,
                     log, loglen))
      rc = -1;
  for (int e = 0; e < nentries && !rc; e++) /* each entry named is in some share */
    if (!found[e]) {
      rc = -1;
      snprintf(log, loglen, "entry '%s' is not in the PTX text", entries[e]);
    }
  for (int i = 0; i < jobs; i++) { /* every started process is waited for */
    if (!shares[i].started) continue;
    int r = wait_exit(shares[i].pid);
    if (r && !rc) {
      rc = r;
      failure_log(shares[i].log, log, loglen);
    }
  }
  if (!rc && !write_bundle(out, shares, jobs)) {
    rc = -1;
    snprintf(log, loglen, "cannot write %s: %s", out, strerror(errno));
  }
  for (int i = 0; i < jobs; i++) {
    unlink(shares[i].ptx);
    unlink(shares[i].cubin);
    unlink(shares[i].log);
  }
  free(shares);
  free(found);
  return rc;
}

int rt_image_parts(const char *image, size_t len, const char **parts, size_t *sizes, int max) {
  if (len < 12 || memcmp(image, BUNDLE_MAGIC, 8)) {
    if (max < 1) return -1;
    parts[0] = image;
    sizes[0] = len;
    return 1;
  }
  uint32_t count;
  memcpy(&count, image + 8, 4);
  if (count < 1 || (int)count > max) return -1;
  size_t at = 12;
  for (uint32_t i = 0; i < count; i++) {
    uint64_t size;
    if (len - at < 8) return -1;
    memcpy(&size, image + at, 8);
    at += 8;
    if (size > len - at) return -1;
    parts[i] = image + at;
    sizes[i] = (size_t)size;
    at += (size_t)size;
  }
  return at == len ? (int)count : -1;
}
