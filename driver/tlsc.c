/* tlsc.c: the compiler command.
 *
 *   read -> lex+parse -> [evaluate -> passes -> emit PTX]
 *
 * --emit picks where the pipeline stops: the AST dump, the IR text or PTX.
 * --verify stops after the passes and simulates the kernel's warps on the
 * CPU for the -p parameter values (sim_run, docs/verify.md).
 * The output is built in memory and written only when every stage
 * succeeded: to a temporary file beside the target (through a symbolic
 * link, beside the file it points to), renamed into place, so an error
 * never leaves a partial file (nor partial text on stdout). An output that
 * is the input file is refused before anything is read.
 *
 * Exit status: 0 success, 1 after a diagnostic (--verify: a problem
 * found), 2 for bad usage (the output is the input; --verify: a parameter
 * value missing or out of its type's range).
 */
#include "backend_ptx/ptx.h"
#include "eval/eval.h"
#include "frontend/frontend.h"
#include "ir/ir.h"
#include "sim/sim.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_DIAG = 1, EXIT_USAGE = 2, MAX_DEFINES = 64 };

/* --specialize: at most this many names, values per name, combinations of
 * values, and entries in the file (what libtlsrt reads). */
enum { MAX_SPECS = 8, MAX_SPEC_VALUES = 16, MAX_COMBINATIONS = 64 };

typedef enum Emit { EMIT_AST, EMIT_IR, EMIT_PTX } Emit;

typedef struct Define {
  const char *name;
  long long value;
  const char *word; /* -D NAME=WORD (a dtype name for __init__), else NULL */
} Define;

/* --specialize NAME=V1,V2,...: the values of an `int` parameter to build
 * specialised entries for. */
typedef struct Spec {
  const char *name;
  int nvalues;
  int64_t values[MAX_SPEC_VALUES];
} Spec;

typedef struct Options {
  const char *input;  /* path, or "-" for stdin */
  const char *output; /* NULL or "-": stdout */
  Emit emit;
  Define defines[MAX_DEFINES];
  int ndefines;
  Spec specs[MAX_SPECS]; /* --specialize */
  int nspecs;
  bool verify;                /* --verify: simulate instead of emitting */
  Define params[MAX_DEFINES]; /* -p NAME=VALUE for --verify */
  int nparams;
  bool line_info; /* .loc/.file in the PTX */
  bool time;      /* per-stage wall times on stderr */
  bool verbose;
  int bench_parse; /* hidden: time N parses of the input and exit */
} Options;

static const char usage_text[] =
    "usage: tlsc [options] FILE.tls\n"
    "Compiles a Tilus-like kernel script to PTX for sm_90a.\n"
    "\n"
    "  -o OUT            write the output to OUT (default: stdout)\n"
    "  --emit=KIND       ast, ir or ptx (default: ptx)\n"
    "  -D NAME=VALUE     fix an integer parameter or autotune name\n"
    "                    (repeatable)\n"
    "  --specialize NAME=V1[,V2,...]\n"
    "                    beside each generic entry, one entry per value (per\n"
    "                    combination, when repeated) of the `int` parameter\n"
    "                    NAME compiled as a constant; libtlsrt launches it\n"
    "                    when the arguments match (docs/language.md)\n"
    "  --verify          simulate the kernel's warps on the CPU and report\n"
    "                    deadlocks, shared-memory races and mbarrier misuse\n"
    "                    (docs/verify.md); emits nothing else\n"
    "  -p, --param NAME=VALUE\n"
    "                    a run-time parameter value for --verify (repeatable)\n"
    "  --no-line-info    no .file/.loc directives in the PTX\n"
    "  --time            print the time of each stage on stderr\n"
    "  -v, --verbose     say what is being done on stderr\n"
    "  --help            print this help\n"
    "  --version         print the version\n"
    "\n"
    "FILE '-' reads the script from stdin.\n";

/* ------------------------------------------------------------ usage */

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "tlsc: error: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\ntry 'tlsc --help' for more information\n");
  va_end(ap);
  return EXIT_USAGE;
}

static bool is_identifier(const char *s, size_t n) {
  if (n == 0 || (s[0] >= '0' && s[0] <= '9')) return false;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    bool ok =
        c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!ok) return false;
  }
  return true;
}

static char *strdup_or_die(const char *s) {
  size_t n = strlen(s) + 1;
  return memcpy(xmalloc(n), s, n);
}

/* A -D value that is not an integer but that the evaluator reads: a name
 * (a dtype, True) or a Python literal ([1, 4], (16, 16), 1.5, 'tn') for an
 * autotune name or an __init__ parameter. */
static bool define_word(const char *s) {
  if (is_identifier(s, strlen(s)) || (*s && strchr("[('\"", *s))) return true;
  char *end;
  (void)strtod(s, &end);
  return end != s && *end == '\0' && !isspace((unsigned char)*s) && strpbrk(s, ".eE");
}

/* NAME=VALUE of -D (compile-time values) and -p (--verify's run-time
 * parameter values), appended to list[*n] for the option `opt`: VALUE an
 * int64 (decimal, 0x hex, 0 octal, optional sign), a name at most once. */
static int parse_name_value(const char *opt, Define *list, int *n, const char *arg) {
  const char *eq = strchr(arg, '=');
  if (!eq || !is_identifier(arg, (size_t)(eq - arg)))
    return usage_error("bad %s '%s': expected %s NAME=INTEGER", opt, arg, opt);
  const char *digits = eq + 1;
  char *end;
  errno = 0;
  long long v = strtoll(digits, &end, 0);
  /* strtoll skips leading blanks; a value is only the number. -D also
   * takes names and literals (define_word). */
  bool blank = isspace((unsigned char)digits[0]);
  bool integer = *digits != '\0' && !blank && *end == '\0' && errno != ERANGE;
  bool word = !integer && strcmp(opt, "-D") == 0 && define_word(digits);
  if (!word && !integer) return usage_error("bad %s '%s': the value must be an integer", opt, arg);
  if (*n == MAX_DEFINES)
    return usage_error("too many %s options (the limit is %d): '%s'", opt, MAX_DEFINES, arg);
  size_t len = (size_t)(eq - arg);
  for (int i = 0; i < *n; i++)
    if (strlen(list[i].name) == len && strncmp(list[i].name, arg, len) == 0)
      return usage_error("%s '%s' given twice", opt, list[i].name);
  char *name = xmalloc(len + 1);
  memcpy(name, arg, len);
  name[len] = '\0';
  list[(*n)++] = (Define){name, word ? 0 : v, word ? strdup_or_die(digits) : NULL};
  return 0;
}

/* --specialize NAME=V1[,V2,...]: each value an int32 (as -D reads it),
 * none twice, a name at most once. */
static int parse_specialize(Options *o, const char *arg) {
  const char *eq = strchr(arg, '=');
  if (!eq || !is_identifier(arg, (size_t)(eq - arg)))
    return usage_error("bad --specialize '%s': expected --specialize NAME=V1[,V2,...]", arg);
  size_t len = (size_t)(eq - arg);
  for (int i = 0; i < o->nspecs; i++)
    if (strlen(o->specs[i].name) == len && strncmp(o->specs[i].name, arg, len) == 0)
      return usage_error("--specialize '%s' given twice (list every value in one option)",
                         o->specs[i].name);
  if (o->nspecs == MAX_SPECS)
    return usage_error("too many --specialize options (the limit is %d): '%s'", MAX_SPECS, arg);
  Spec *sp = &o->specs[o->nspecs];
  sp->nvalues = 0;
  for (const char *p = eq + 1;; p++) {
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 0);
    if (end == p || isspace((unsigned char)*p) || (*end != ',' && *end != '\0') || errno == ERANGE)
      return usage_error("bad --specialize '%s': the values must be integers separated by commas",
                         arg);
    if (v < INT32_MIN || v > INT32_MAX)
      return usage_error("bad --specialize '%s': %lld does not fit in int32 (an `int` parameter "
                         "is an int32 argument of the entry)",
                         arg, v);
    for (int i = 0; i < sp->nvalues; i++)
      if (sp->values[i] == v)
        return usage_error("bad --specialize '%s': the value %lld is listed twice", arg, v);
    if (sp->nvalues == MAX_SPEC_VALUES)
      return usage_error("bad --specialize '%s': more than %d values", arg, MAX_SPEC_VALUES);
    sp->values[sp->nvalues++] = v;
    p = end;
    if (*p == '\0') break;
  }
  char *name = xmalloc(len + 1);
  memcpy(name, arg, len);
  name[len] = '\0';
  sp->name = name;
  o->nspecs++;
  return 0;
}

/* The number of value combinations of the --specialize options (1 when
 * there are none). */
static int spec_combinations(const Options *o) {
  int n = 1;
  for (int i = 0; i < o->nspecs && n <= MAX_COMBINATIONS; i++) n *= o->specs[i].nvalues;
  return n;
}

/* What --specialize asks beyond each option's own syntax. */
static int check_specs(const Options *o) {
  for (int i = 0; i < o->nspecs; i++)
    for (int j = 0; j < o->ndefines; j++)
      if (strcmp(o->specs[i].name, o->defines[j].name) == 0)
        return usage_error("'%s' is fixed by -D and listed by --specialize: give one of them",
                           o->specs[i].name);
  if (spec_combinations(o) > MAX_COMBINATIONS)
    return usage_error("--specialize lists more than %d combinations of values", MAX_COMBINATIONS);
  return -1;
}

static int parse_emit(Options *o, const char *kind) {
  if (strcmp(kind, "ast") == 0)
    o->emit = EMIT_AST;
  else if (strcmp(kind, "ir") == 0)
    o->emit = EMIT_IR;
  else if (strcmp(kind, "ptx") == 0)
    o->emit = EMIT_PTX;
  else
    return usage_error("unknown --emit kind '%s' (expected ast, ir or ptx)", kind);
  return 0;
}

static int parse_count(int *out, const char *arg) {
  char *end;
  long v = strtol(arg, &end, 10);
  if (*arg == '\0' || isspace((unsigned char)*arg) || *end != '\0' || v < 1 || v > 1000000)
    return usage_error("bad count '%s'", arg);
  *out = (int)v;
  return 0;
}

/* Returns -1 to go on, or the exit status (0 after --help/--version). */
static int parse_args(Options *o, int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
    int rc = 0;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage_text, stdout);
      return 0;
    } else if (strcmp(a, "--version") == 0) {
      printf("tlsc %s\n", TLSC_VERSION);
      return 0;
    } else if (strcmp(a, "-o") == 0) {
      if (!next || !*next) return usage_error("%s needs a file name", a);
      o->output = argv[++i];
    } else if (strncmp(a, "-o", 2) == 0) {
      o->output = a + 2;
    } else if (strncmp(a, "--emit=", 7) == 0) {
      rc = parse_emit(o, a + 7);
    } else if (strcmp(a, "--emit") == 0) {
      if (!next) return usage_error("%s needs ast, ir or ptx", a);
      rc = parse_emit(o, argv[++i]);
    } else if (strcmp(a, "-D") == 0) {
      if (!next) return usage_error("%s needs NAME=INTEGER", a);
      rc = parse_name_value("-D", o->defines, &o->ndefines, argv[++i]);
    } else if (strncmp(a, "-D", 2) == 0) {
      rc = parse_name_value("-D", o->defines, &o->ndefines, a + 2);
    } else if (strcmp(a, "--specialize") == 0) {
      if (!next) return usage_error("%s needs NAME=V1[,V2,...]", a);
      rc = parse_specialize(o, argv[++i]);
    } else if (strncmp(a, "--specialize=", 13) == 0) {
      rc = parse_specialize(o, a + 13);
    } else if (strcmp(a, "--verify") == 0) {
      o->verify = true;
    } else if (strcmp(a, "-p") == 0 || strcmp(a, "--param") == 0) {
      if (!next) return usage_error("%s needs NAME=INTEGER", a);
      rc = parse_name_value("-p", o->params, &o->nparams, argv[++i]);
    } else if (strncmp(a, "--param=", 8) == 0) {
      rc = parse_name_value("-p", o->params, &o->nparams, a + 8);
    } else if (strncmp(a, "-p", 2) == 0) {
      rc = parse_name_value("-p", o->params, &o->nparams, a + 2);
    } else if (strcmp(a, "--no-line-info") == 0) {
      o->line_info = false;
    } else if (strcmp(a, "--time") == 0) {
      o->time = true;
    } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
      o->verbose = true;
    } else if (strncmp(a, "--bench-parse=", 14) == 0) {
      rc = parse_count(&o->bench_parse, a + 14);
    } else if (a[0] == '-' && a[1] != '\0') {
      return usage_error("unknown option '%s'", a);
    } else if (o->input) {
      return usage_error("more than one input file ('%s')", a);
    } else {
      o->input = a;
    }
    if (rc) return rc;
  }
  if (!o->input) return usage_error("%s", "no input file");
  return check_specs(o);
}

/* ------------------------------------------------------------ timing */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Stage timer for --time: prints the time since the last mark. */
typedef struct Timer {
  bool on;
  double last;
} Timer;

static void timer_mark(Timer *t, const char *stage) {
  double now = now_ms();
  if (t->on) fprintf(stderr, "tlsc: time: %-10s %9.3f ms\n", stage, now - t->last);
  t->last = now;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* --bench-parse=N: lex+parse the script N times; print the median. */
static int bench_parse(const Source *src, int runs) {
  double *times = xmalloc(sizeof(double) * (size_t)runs);
  for (int i = 0; i < runs; i++) {
    Arena *ar = arena_new();
    Diag d;
    diag_init(&d, src, stderr);
    double t0 = now_ms();
    Node *module = parse_source(ar, src, &d);
    times[i] = now_ms() - t0;
    arena_free(ar);
    if (!module) {
      free(times);
      return EXIT_DIAG;
    }
  }
  qsort(times, (size_t)runs, sizeof *times, compare_doubles);
  printf("lex+parse %s: median %.4f ms, min %.4f ms over %d runs\n", src->path, times[runs / 2],
         times[0], runs);
  free(times);
  return 0;
}

/* ------------------------------------------------------------ output */

/* The output must not be the input: -o naming the source file by any path
 * (a hard link, a symbolic link), or stdout redirected onto it. Character
 * devices (/dev/null) are exempt. Returns -1 to go on, or EXIT_USAGE. */
static int check_output_not_input(const Options *o) {
  struct stat in, out;
  bool from_stdin = strcmp(o->input, "-") == 0;
  bool to_stdout = !o->output || strcmp(o->output, "-") == 0;
  if ((from_stdin ? fstat(STDIN_FILENO, &in) : stat(o->input, &in)) != 0) return -1;
  if ((to_stdout ? fstat(STDOUT_FILENO, &out) : stat(o->output, &out)) != 0) return -1;
  if (in.st_dev != out.st_dev || in.st_ino != out.st_ino || S_ISCHR(in.st_mode)) return -1;
  const char *input = from_stdin ? "<stdin>" : o->input;
  if (to_stdout)
    return usage_error("stdout is the input file '%s'; refusing to overwrite it", input);
  return usage_error("the output '%s' is the input file '%s'; refusing to overwrite it", o->output,
                     input);
}

static char *xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  return memcpy(xmalloc(n), s, n);
}

/* The file that writing `path` should replace: `path` itself, or what its
 * symbolic link (chain) points to, which may not exist yet (a dangling
 * link: the target is created, as cc does). NULL with errno on failure. */
static char *resolve_links(const char *path) {
  char *cur = xstrdup(path);
  for (int hops = 0;; hops++) {
    struct stat st;
    if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) return cur;
    size_t cap = (st.st_size > 0 ? (size_t)st.st_size : 0) + PATH_MAX;
    char *target = xmalloc(cap);
    ssize_t n = hops < 40 ? readlink(cur, target, cap) : -1;
    if (n < 0 || (size_t)n >= cap) {
      if (hops >= 40)
        errno = ELOOP;
      else if (n >= 0)
        errno = ENAMETOOLONG;
      free(target);
      free(cur);
      return NULL;
    }
    /* A relative target is relative to the link's folder. */
    const char *slash = strrchr(cur, '/');
    size_t dir = target[0] == '/' || !slash ? 0 : (size_t)(slash - cur) + 1;
    char *next = xmalloc(dir + (size_t)n + 1);
    memcpy(next, cur, dir);
    memcpy(next + dir, target, (size_t)n);
    next[dir + (size_t)n] = '\0';
    free(target);
    free(cur);
    cur = next;
  }
}

/* The mode of a new output file: what a compiler gives, 0666 less the
 * umask. */
static mode_t new_file_mode(void) {
  mode_t mask = umask(0);
  umask(mask);
  return 0666 & ~mask;
}

/* Writes `len` bytes to `path` through a temporary file in the same folder,
 * given `mode`, renamed into place once complete; `name` is what messages
 * call the output. */
static bool write_file(const char *name, const char *path, mode_t mode, const char *data,
                       size_t len) {
  /* PATH.tmp.XXXXXX, with the file name part shortened to stay within
   * NAME_MAX (255) for a long output name. */
  const char *slash = strrchr(path, '/');
  size_t dir = slash ? (size_t)(slash - path) + 1 : 0, base = strlen(path + dir);
  if (base > 200) base = 200;
  char *tmp = xmalloc(dir + base + 16);
  memcpy(tmp, path, dir + base);
  memcpy(tmp + dir + base, ".tmp.XXXXXX", 12);
  int err = 0;
  int fd = mkstemp(tmp);
  FILE *f = NULL;
  if (fd < 0 || fchmod(fd, mode) != 0 || !(f = fdopen(fd, "wb"))) err = errno;
  errno = 0;
  if (!err && fwrite(data, 1, len, f) != len) err = errno ? errno : EIO;
  if (f) {
    if (fclose(f) != 0 && !err) err = errno;
  } else if (fd >= 0)
    close(fd);
  if (!err && rename(tmp, path) != 0) err = errno;
  if (err) {
    fprintf(stderr, "tlsc: error: cannot write '%s': %s\n", name, strerror(err));
    if (fd >= 0) unlink(tmp);
  }
  free(tmp);
  return !err;
}

/* Writes straight into a stream (stdout, or a device such as /dev/null
 * that must not be replaced by a rename). */
static bool write_stream(FILE *f, const char *name, const char *data, size_t len) {
  bool ok = fwrite(data, 1, len, f) == len && fflush(f) == 0;
  if (!ok) fprintf(stderr, "tlsc: error: cannot write '%s': %s\n", name, strerror(errno));
  return ok;
}

/* stdout; a special file (a FIFO, a terminal, /dev/stdout onto a pipe)
 * written in place; or a regular file replaced as a whole, through a
 * symbolic link its target (the link stays). An existing file keeps its
 * permission bits, a new one gets 0666 less the umask. */
static bool write_output(const Options *o, const char *data, size_t len) {
  if (!o->output || strcmp(o->output, "-") == 0) return write_stream(stdout, "<stdout>", data, len);
  struct stat st;
  if (stat(o->output, &st) == 0 && !S_ISREG(st.st_mode)) {
    FILE *f = fopen(o->output, "wb");
    if (!f) {
      fprintf(stderr, "tlsc: error: cannot write '%s': %s\n", o->output, strerror(errno));
      return false;
    }
    bool ok = write_stream(f, o->output, data, len);
    return fclose(f) == 0 && ok;
  }
  char *path = resolve_links(o->output);
  if (!path) {
    fprintf(stderr, "tlsc: error: cannot write '%s': %s\n", o->output, strerror(errno));
    return false;
  }
  mode_t mode = stat(path, &st) == 0 ? st.st_mode & 0777 : new_file_mode();
  bool ok = write_file(o->output, path, mode, data, len);
  free(path);
  return ok;
}

/* ------------------------------------------------------------ pipeline */

/* The evaluator lists the `int` parameters it fixed (-D, --specialize)
 * among a kernel's config entries as "fixed NAME" (eval.c): true with the
 * value when `k` fixes `name`. */
static bool kernel_fixes(const IrKernel *k, const char *name, int64_t *value) {
  for (int i = 0; i < k->nconfig; i++)
    if (strncmp(k->config_names[i], "fixed ", 6) == 0 &&
        strcmp(k->config_names[i] + 6, name) == 0) {
      *value = k->config_values[i];
      return true;
    }
  return false;
}

static bool kernel_has_param(const IrKernel *k, const char *name) {
  for (int p = 0; p < k->nparams; p++)
    if (!k->params[p]->is_ptr && strcmp(k->params[p]->name, name) == 0) return true;
  return false;
}

/* --verify simulates the entries that a launch with the -p values could
 * run: every entry whose fixed parameters (-D, --specialize) all have
 * those values; a fixed parameter with no -p takes its fixed value. The
 * summary goes to `out`. Sets *usage when a value is missing or unknown,
 * or when the -p values contradict every entry. */
static bool verify_module(const Options *o, const IrModule *m, Diag *d, FILE *out, bool *usage) {
  for (int i = 0; i < o->nparams; i++) {
    bool known = false;
    for (int j = 0; j < m->nkernels && !known; j++)
      known = kernel_has_param(m->kernels[j], o->params[i].name);
    if (!known) {
      diag_plain_error(d, "--verify: no kernel has a run-time parameter '%s'", o->params[i].name);
      *usage = true;
      return false;
    }
  }
  SimStatus worst = SIM_OK;
  int verified = 0;
  const IrKernel *first_skip = NULL; /* for the message when none runs */
  const char *first_name = NULL;
  int64_t first_value = 0;
  for (int j = 0; j < m->nkernels; j++) {
    IrKernel *k = m->kernels[j];
    SimParam params[MAX_DEFINES + MAX_DEFINES];
    int n = 0;
    bool skip = false;
    const char *skip_name = NULL;
    int64_t skip_value = 0;
    for (int i = 0; i < o->nparams; i++)
      if (kernel_has_param(k, o->params[i].name))
        params[n++] = (SimParam){o->params[i].name, o->params[i].value};
    for (int c = 0; c < k->nconfig && !skip && n < MAX_DEFINES + MAX_DEFINES; c++) {
      const char *name = k->config_names[c];
      if (strncmp(name, "fixed ", 6) != 0) continue;
      name += 6;
      int i = 0;
      while (i < o->nparams && strcmp(o->params[i].name, name) != 0) i++;
      if (i == o->nparams)
        params[n++] = (SimParam){name, k->config_values[c]};
      else if (o->params[i].value != k->config_values[c]) {
        skip = true;
        skip_name = name;
        skip_value = k->config_values[c];
      }
    }
    if (skip && !first_skip) {
      first_skip = k;
      first_name = skip_name;
      first_value = skip_value;
    }
    if (skip) {
      fprintf(out, "verify: %s: not run (compiled for %s=%" PRId64 ")\n", k->name, skip_name,
              skip_value);
      continue;
    }
    IrModule one = *m;
    one.kernels = &m->kernels[j];
    one.nkernels = 1;
    SimOptions sopt = {.params = params, .nparams = n, .summary = out};
    SimStatus st = sim_run(&one, &sopt, d);
    verified++;
    if (st == SIM_USAGE) {
      *usage = true;
      return false;
    }
    if (st == SIM_PROBLEM) worst = st;
  }
  if (m->nkernels == 0) return true; /* host code only: nothing to run */
  if (!verified) {
    diag_plain_error(d,
                     "--verify: no entry takes these -p values (%s, for one, is compiled for "
                     "%s=%" PRId64 ")",
                     first_skip->name, first_name, first_value);
    *usage = true;
    return false;
  }
  return worst == SIM_OK;
}

/* ------------------------------------------------------------ specialise */

/* Evaluates the module with the -D values and, for one --specialize
 * combination (`combo`, one value per option; NULL for the generic
 * entries), those values too. The driver checks the --specialize names
 * itself, so they are passed as already used. */
static IrModule *evaluate(const Options *o, Arena *ar, const Source *src, const Node *module,
                          Diag *d, const int64_t *combo) {
  EvalDefine defs[MAX_DEFINES + MAX_SPECS];
  int n = 0;
  for (int i = 0; i < o->ndefines; i++)
    defs[n++] = (EvalDefine){o->defines[i].name, o->defines[i].value, false, o->defines[i].word};
  for (int i = 0; combo && i < o->nspecs; i++)
    defs[n++] = (EvalDefine){o->specs[i].name, combo[i], true, NULL};
  /* points that do not compile: noted once, for the generic entries */
  EvalOptions eo = {.verbose = o->verbose, .quiet_skips = combo != NULL};
  return eval_build_with(ar, module, src, defs, n, &eo, d);
}

/* Combination `c` of the --specialize values, the first option varying
 * slowest; "n_size=8192 k_size=4096" into text when it is not NULL. */
static void spec_combination(const Options *o, int c, int64_t *combo, char *text, size_t len) {
  for (int i = o->nspecs - 1; i >= 0; i--) {
    combo[i] = o->specs[i].values[c % o->specs[i].nvalues];
    c /= o->specs[i].nvalues;
  }
  size_t used = 0;
  for (int i = 0; text && i < o->nspecs && used < len; i++)
    used += (size_t)snprintf(text + used, len - used, "%s%s=%" PRId64, i ? " " : "",
                             o->specs[i].name, combo[i]);
}

/* A --specialize name is not an autotune name (-D selects those): checked
 * on the generic build, before a build with the name fixed. Returns -1, or
 * EXIT_USAGE after the message. */
static int check_spec_not_autotune(const Options *o, const IrModule *generic) {
  for (int i = 0; i < o->nspecs; i++)
    for (int j = 0; j < generic->nkernels; j++) {
      const IrKernel *k = generic->kernels[j];
      for (int c = 0; c < k->nconfig; c++)
        if (strcmp(k->config_names[c], o->specs[i].name) == 0)
          return usage_error("--specialize '%s': '%s' is an autotune name, not an `int` kernel "
                             "parameter (-D %s=VALUE selects autotune points)",
                             o->specs[i].name, o->specs[i].name, o->specs[i].name);
    }
  return -1;
}

/* A --specialize name is an `int` parameter: some kernel of the first
 * combination's build fixes it. Returns -1, or EXIT_USAGE after the
 * message. */
static int check_spec_fixed(const Options *o, const IrModule *generic, const IrModule *first) {
  for (int i = 0; i < o->nspecs; i++) {
    const char *name = o->specs[i].name;
    bool fixed = false, param = false;
    int64_t v;
    for (int j = 0; j < first->nkernels && !fixed; j++)
      fixed = kernel_fixes(first->kernels[j], name, &v);
    for (int j = 0; j < generic->nkernels && !param; j++)
      param = kernel_has_param(generic->kernels[j], name);
    if (!fixed && param)
      return usage_error("--specialize '%s': the kernel parameter '%s' is not annotated `int` "
                         "(int32 and the other typed parameters are run-time values only)",
                         name, name);
    if (!fixed)
      return usage_error("--specialize '%s': no script has a kernel parameter named '%s'", name,
                         name);
  }
  return -1;
}

/* The name of the entry that kernel `k` of a --specialize build is: the
 * generic entry's name, then `__NAME_VALUE` for each parameter it fixes
 * through --specialize, in parameter order (a negative VALUE is written
 * `m` and its magnitude); NULL when it fixes none (it is the generic
 * entry again). */
static char *variant_name(Arena *ar, const Options *o, const IrKernel *generic, const IrKernel *k) {
  char *name = NULL;
  for (int p = 0; p < k->nparams; p++) {
    const char *pn = k->params[p]->name;
    int64_t v;
    bool listed = false;
    for (int i = 0; i < o->nspecs && !listed; i++) listed = strcmp(o->specs[i].name, pn) == 0;
    if (!listed || !kernel_fixes(k, pn, &v)) continue;
    name = arena_printf(ar, "%s__%s_%s%" PRId64, name ? name : generic->name, pn, v < 0 ? "m" : "",
                        v < 0 ? -v : v);
  }
  return name;
}

/* Refuses two entries of one name (a script named like another's
 * specialised entry): libtlsrt could not tell them apart. */
static bool names_distinct(const IrModule *m, Diag *d) {
  for (int i = 0; i < m->nkernels; i++)
    for (int j = 0; j < i; j++)
      if (strcmp(m->kernels[i]->name, m->kernels[j]->name) == 0) {
        diag_plain_error(d, "two entries would be named '%s' (rename a script)",
                         m->kernels[i]->name);
        return false;
      }
  return true;
}

/* The generic module (-D applied) and, with --specialize, after each
 * generic entry its specialised entries, one per combination of values
 * that fixes at least one of its parameters (docs/language.md). NULL after
 * a diagnostic, or after a usage error (*usage set). */
static IrModule *build_module(const Options *o, Arena *ar, const Source *src, const Node *module,
                              Diag *d, bool *usage) {
  IrModule *m = evaluate(o, ar, src, module, d, NULL);
  if (!m || !o->nspecs) return m;
  if (check_spec_not_autotune(o, m) >= 0) {
    *usage = true;
    return NULL;
  }
  int ncomb = spec_combinations(o);
  IrModule **built = arena_alloc(ar, sizeof(IrModule *) * (size_t)ncomb);
  for (int c = 0; c < ncomb; c++) {
    int64_t combo[MAX_SPECS];
    char text[512];
    spec_combination(o, c, combo, text, sizeof text);
    built[c] = evaluate(o, ar, src, module, d, combo);
    if (!built[c]) {
      fprintf(d->out, "tlsc: note: in the entries specialised on %s\n", text);
      return NULL;
    }
    if (c == 0 && check_spec_fixed(o, m, built[0]) >= 0) {
      *usage = true;
      return NULL;
    }
    if (built[c]->nkernels != m->nkernels) {
      diag_plain_error(d,
                       "--specialize: the entries specialised on %s are not those of the "
                       "generic build",
                       text);
      return NULL;
    }
  }
  IrKernel **all = arena_alloc(ar, sizeof(IrKernel *) * (size_t)m->nkernels * (size_t)(ncomb + 1));
  int n = 0;
  for (int j = 0; j < m->nkernels; j++) {
    int first = n;
    all[n++] = m->kernels[j];
    for (int c = 0; c < ncomb; c++) {
      IrKernel *k = built[c]->kernels[j];
      char *name = variant_name(ar, o, m->kernels[j], k);
      bool seen = !name;
      for (int i = first; i < n && !seen; i++) seen = strcmp(all[i]->name, name) == 0;
      if (seen) continue; /* fixes none of this script's parameters, or the same ones again */
      k->name = name;
      all[n++] = k;
    }
  }
  if (n > TLS_MAX_ENTRIES) {
    *usage = true;
    usage_error("--specialize would write %d entries (libtlsrt reads at most %d)", n,
                TLS_MAX_ENTRIES);
    return NULL;
  }
  m->kernels = all;
  m->nkernels = n;
  return m;
}

/* Everything after parsing: evaluate, run the passes, print IR or PTX (or
 * simulate, --verify). False after a diagnostic; *usage is set after a
 * usage error found here (--specialize names, --verify values). */
static bool compile_module(const Options *o, Arena *ar, const Source *src, const Node *module,
                           Diag *d, FILE *out, Timer *timer, bool *usage) {
  IrModule *m = build_module(o, ar, src, module, d, usage);
  timer_mark(timer, "evaluate");
  if (!m || !names_distinct(m, d)) return false;
  if (!ir_run_passes(m, d)) return false;
  timer_mark(timer, "passes");
  if (o->verify) {
    bool ok = verify_module(o, m, d, out, usage);
    timer_mark(timer, "verify");
    return ok;
  }
  if (o->emit == EMIT_IR) {
    ir_print(out, m);
    timer_mark(timer, "print-ir");
    return true;
  }
  PtxOptions popt = {.line_info = o->line_info};
  bool ok = ptx_emit(out, m, &popt, d);
  timer_mark(timer, "emit-ptx");
  return ok;
}

static int run(const Options *o) {
  Timer timer = {o->time, now_ms()};
  int rc = check_output_not_input(o);
  if (rc >= 0) return rc;
  Source *src = source_read(o->input);
  if (!src) return EXIT_DIAG;
  timer_mark(&timer, "read");
  if (o->bench_parse) {
    int rc = bench_parse(src, o->bench_parse);
    source_free(src);
    return rc;
  }
  if (o->verbose) fprintf(stderr, "tlsc: compiling %s (%zu bytes)\n", src->path, src->len);
  Arena *ar = arena_new();
  Diag d;
  diag_init(&d, src, stderr);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  if (!out) {
    fprintf(stderr, "tlsc: error: out of memory\n");
    abort();
  }
  bool usage = false;
  Node *module = parse_source(ar, src, &d);
  timer_mark(&timer, "lex+parse");
  bool ok = module != NULL;
  if (ok && o->emit == EMIT_AST) {
    ast_dump(out, module);
    timer_mark(&timer, "dump-ast");
  } else if (ok)
    ok = compile_module(o, ar, src, module, &d, out, &timer, &usage);
  fclose(out);
  if (ok) ok = write_output(o, text, len);
  timer_mark(&timer, "write");
  free(text);
  arena_free(ar);
  source_free(src);
  if (usage) return EXIT_USAGE;
  return ok ? 0 : EXIT_DIAG;
}

int main(int argc, char **argv) {
  static Options opts = {.emit = EMIT_PTX, .line_info = true};
  int rc = parse_args(&opts, argc, argv);
  if (rc >= 0) return rc;
  rc = run(&opts);
  for (int i = 0; i < opts.ndefines; i++) {
    free((char *)opts.defines[i].name);
    free((char *)opts.defines[i].word);
  }
  for (int i = 0; i < opts.nparams; i++) free((char *)opts.params[i].name);
  for (int i = 0; i < opts.nspecs; i++) free((char *)opts.specs[i].name);
  return rc;
}
