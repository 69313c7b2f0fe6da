/* tlsc.c: the compiler command.
 *
 *   read -> lex+parse -> [evaluate -> passes -> emit PTX]
 *
 * --emit picks where the pipeline stops: the AST dump, the IR text or PTX.
 * --verify stops after the passes and simulates the kernel's warps on the
 * CPU for the -p parameter values (sim_run, docs/verify.md).
 * The output is built in memory and written only when every stage
 * succeeded: to a temporary file beside the target, renamed into place, so
 * an error never leaves a partial file (nor partial text on stdout).
 *
 * Exit status: 0 success, 1 after a diagnostic (--verify: a problem
 * found), 2 for bad usage (--verify: a parameter value missing).
 */
#include "backend_ptx/ptx.h"
#include "eval/eval.h"
#include "frontend/frontend.h"
#include "ir/ir.h"
#include "sim/sim.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_DIAG = 1, EXIT_USAGE = 2, MAX_DEFINES = 64 };

typedef enum Emit { EMIT_AST, EMIT_IR, EMIT_PTX } Emit;

typedef struct Define {
  const char *name;
  long long value;
} Define;

typedef struct Options {
  const char *input;  /* path, or "-" for stdin */
  const char *output; /* NULL or "-": stdout */
  Emit emit;
  Define defines[MAX_DEFINES];
  int ndefines;
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

static int usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "tlsc: error: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\ntry 'tlsc --help' for more information\n");
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

/* -D NAME=VALUE with an integer VALUE (decimal, 0x hex, optional sign). */
static int parse_define(Options *o, const char *arg) {
  const char *eq = strchr(arg, '=');
  if (!eq || !is_identifier(arg, (size_t)(eq - arg)))
    return usage_error("bad -D '%s': expected -D NAME=INTEGER", arg);
  char *end;
  errno = 0;
  long long v = strtoll(eq + 1, &end, 0);
  if (eq[1] == '\0' || *end != '\0' || errno == ERANGE)
    return usage_error("bad -D '%s': the value must be an integer", arg);
  if (o->ndefines == MAX_DEFINES)
    return usage_error("too many -D options (the limit is 64): '%s'", arg);
  size_t n = (size_t)(eq - arg);
  for (int i = 0; i < o->ndefines; i++)
    if (strlen(o->defines[i].name) == n && strncmp(o->defines[i].name, arg, n) == 0)
      return usage_error("-D '%s' given twice", o->defines[i].name);
  char *name = xmalloc(n + 1);
  memcpy(name, arg, n);
  name[n] = '\0';
  o->defines[o->ndefines++] = (Define){name, v};
  return 0;
}

/* -p NAME=VALUE (--verify's run-time parameter values): an integer VALUE
 * as -D takes it; a name given twice is refused. */
static int parse_param(Options *o, const char *arg) {
  const char *eq = strchr(arg, '=');
  if (!eq || !is_identifier(arg, (size_t)(eq - arg)))
    return usage_error("bad -p '%s': expected -p NAME=INTEGER", arg);
  char *end;
  errno = 0;
  long long v = strtoll(eq + 1, &end, 0);
  if (eq[1] == '\0' || *end != '\0' || errno == ERANGE)
    return usage_error("bad -p '%s': the value must be an integer", arg);
  if (o->nparams == MAX_DEFINES)
    return usage_error("too many -p options (the limit is 64): '%s'", arg);
  size_t n = (size_t)(eq - arg);
  for (int i = 0; i < o->nparams; i++)
    if (strlen(o->params[i].name) == n && strncmp(o->params[i].name, arg, n) == 0)
      return usage_error("-p '%s' given twice", o->params[i].name);
  char *name = xmalloc(n + 1);
  memcpy(name, arg, n);
  name[n] = '\0';
  o->params[o->nparams++] = (Define){name, v};
  return 0;
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
  if (*arg == '\0' || *end != '\0' || v < 1 || v > 1000000)
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
      if (!next) return usage_error("%s needs a file name", a);
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
      rc = parse_define(o, argv[++i]);
    } else if (strncmp(a, "-D", 2) == 0) {
      rc = parse_define(o, a + 2);
    } else if (strcmp(a, "--verify") == 0) {
      o->verify = true;
    } else if (strcmp(a, "-p") == 0 || strcmp(a, "--param") == 0) {
      if (!next) return usage_error("%s needs NAME=INTEGER", a);
      rc = parse_param(o, argv[++i]);
    } else if (strncmp(a, "--param=", 8) == 0) {
      rc = parse_param(o, a + 8);
    } else if (strncmp(a, "-p", 2) == 0) {
      rc = parse_param(o, a + 2);
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
  return -1;
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

/* Writes `len` bytes to `path` through a temporary file in the same folder,
 * renamed into place once complete. */
static bool write_file(const char *path, const char *data, size_t len) {
  size_t n = strlen(path);
  char *tmp = xmalloc(n + 16);
  snprintf(tmp, n + 16, "%s.tmp.XXXXXX", path);
  int fd = mkstemp(tmp);
  FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
  bool ok = f && fwrite(data, 1, len, f) == len;
  if (f)
    ok = fclose(f) == 0 && ok;
  else if (fd >= 0)
    close(fd);
  if (ok) ok = rename(tmp, path) == 0;
  if (!ok) {
    fprintf(stderr, "tlsc: error: cannot write '%s': %s\n", path, strerror(errno));
    if (fd >= 0) unlink(tmp);
  }
  free(tmp);
  return ok;
}

/* Writes straight into a stream (stdout, or a device such as /dev/null
 * that must not be replaced by a rename). */
static bool write_stream(FILE *f, const char *name, const char *data, size_t len) {
  bool ok = fwrite(data, 1, len, f) == len && fflush(f) == 0;
  if (!ok) fprintf(stderr, "tlsc: error: cannot write '%s': %s\n", name, strerror(errno));
  return ok;
}

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
  return write_file(o->output, data, len);
}

/* ------------------------------------------------------------ pipeline */

/* --verify: simulates the planned module with the -p values; the summary
 * goes to `out`. Sets *usage when a value is missing or unknown. */
static bool verify_module(const Options *o, const IrModule *m, Diag *d, FILE *out, bool *usage) {
  SimParam params[MAX_DEFINES];
  for (int i = 0; i < o->nparams; i++)
    params[i] = (SimParam){o->params[i].name, o->params[i].value};
  SimOptions sopt = {.params = params, .nparams = o->nparams, .summary = out};
  SimStatus st = sim_run(m, &sopt, d);
  *usage = st == SIM_USAGE;
  return st == SIM_OK;
}

/* Everything after parsing: evaluate, run the passes, print IR or PTX (or
 * simulate, --verify). False after a diagnostic; *usage is set after a
 * --verify usage error. */
static bool compile_module(const Options *o, Arena *ar, const Source *src, const Node *module,
                           Diag *d, FILE *out, Timer *timer, bool *usage) {
  EvalDefine defs[MAX_DEFINES];
  for (int i = 0; i < o->ndefines; i++)
    defs[i] = (EvalDefine){o->defines[i].name, o->defines[i].value, false};
  IrModule *m = eval_build(ar, module, src, defs, o->ndefines, d);
  timer_mark(timer, "evaluate");
  if (!m) return false;
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
  for (int i = 0; i < opts.ndefines; i++) free((char *)opts.defines[i].name);
  for (int i = 0; i < opts.nparams; i++) free((char *)opts.params[i].name);
  return rc;
}
