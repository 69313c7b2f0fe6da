/* meta.c: the `//@tls` metadata block of a tlsc PTX file (docs/format.md,
 * version 1), parsed in full at load time, and the checks that the PTX after
 * it matches (each entry exists with the right parameter list, and the text
 * is not cut short). Every error names the line. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"

/* MAX_FIELDS: a `fixed` line may name every parameter of an entry.
 * MAX_KERNELS: entries in one file (tlsc writes no more: TLS_MAX_ENTRIES,
 * ir/ir.h); Tilus's Ampere v5 as shipped is 384, its 192 autotune points
 * with their occupancy variants. */
enum { MAX_FIELDS = TLS_MAX_PARAMS + 8, MAX_KERNELS = 2048 };

/* Where the parser stands; `msg` receives the first error. */
typedef struct MetaParser {
  tls_module *mod;
  int line;
  bool have_version, closed;
  tls_kernel *cur;
  int max_kernels;
  int grid_line; /* of the current entry's `grid` line, 0 = none yet */
  char *grid_text[3];
  char *tmap_text[TLS_MAX_TMAPS][2 * TLS_MAX_RANK]; /* dims, then strides */
  char *ws_text[TLS_MAX_WORKSPACES][TLS_MAX_RANK];  /* workspace dims */
  char *msg;
  size_t msglen;
  /* The PTX after the block, and a copy of it with comments and string
   * literals blanked (blank_comments): the PTX checks search the copy. */
  const char *ptx;
  char *clean;
} MetaParser;

static tls_status perr(MetaParser *mp, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static tls_status perr(MetaParser *mp, int line, const char *fmt, ...) {
  int n = snprintf(mp->msg, mp->msglen, "%s:%d: error: ", mp->mod->name, line);
  va_list ap;
  va_start(ap, fmt);
  if (n >= 0 && (size_t)n < mp->msglen) vsnprintf(mp->msg + n, mp->msglen - (size_t)n, fmt, ap);
  va_end(ap);
  return TLS_ERR_FORMAT;
}

static char *xstrdup(const char *s) {
  char *d = strdup(s ? s : "");
  if (!d) abort(); /* out of memory: the only fatal path */
  return d;
}

/* ------------------------------------------------------------ dtypes */

static const struct {
  const char *name;
  int cu, bytes;
} DTYPES[] = {
    {"f16", CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2},  {"bf16", CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2},
    {"f32", CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4},  {"f64", CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 8},
    {"i32", CU_TENSOR_MAP_DATA_TYPE_INT32, 4},    {"u32", CU_TENSOR_MAP_DATA_TYPE_UINT32, 4},
    {"i64", CU_TENSOR_MAP_DATA_TYPE_INT64, 8},    {"u64", CU_TENSOR_MAP_DATA_TYPE_UINT64, 8},
    {"i8", CU_TENSOR_MAP_DATA_TYPE_UINT8, 1}, /* TMA copies bits */
    {"u8", CU_TENSOR_MAP_DATA_TYPE_UINT8, 1},     {"i16", CU_TENSOR_MAP_DATA_TYPE_UINT16, 2},
    {"u16", CU_TENSOR_MAP_DATA_TYPE_UINT16, 2},   {"f8e4m3", CU_TENSOR_MAP_DATA_TYPE_UINT8, 1},
    {"f8e5m2", CU_TENSOR_MAP_DATA_TYPE_UINT8, 1},
};

bool meta_dtype(const char *name, int *cu_dtype, int *bytes) {
  for (size_t i = 0; i < sizeof DTYPES / sizeof DTYPES[0]; i++) {
    if (strcmp(DTYPES[i].name, name)) continue;
    *cu_dtype = DTYPES[i].cu;
    *bytes = DTYPES[i].bytes;
    return true;
  }
  return false;
}

/* ----------------------------------------------------------- fields */

/* Splits a metadata line in place at spaces; returns the field count or -1
 * when there are too many. */
static int split_fields(char *s, char **fields) {
  int n = 0;
  for (;;) {
    while (*s == ' ' || *s == '\t') *s++ = 0;
    if (!*s) return n;
    if (n == MAX_FIELDS) return -1;
    fields[n++] = s;
    while (*s && *s != ' ' && *s != '\t') s++;
  }
}

/* Reads a decimal integer in [lo, hi] (the whole string; no sign but '-',
 * no spaces, nothing that overflows). */
static bool parse_int(const char *s, long long lo, long long hi, long long *out) {
  if (!*s || !isdigit((unsigned char)s[s[0] == '-'])) return false;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (*end || errno || v < lo || v > hi) return false;
  *out = v;
  return true;
}

/* For `key=value` fields: the value when the key matches, else NULL. */
static const char *key_value(const char *field, const char *key) {
  size_t n = strlen(key);
  return strncmp(field, key, n) || field[n] != '=' ? NULL : field + n + 1;
}

static bool is_ident(const char *s) {
  if (!isalpha((unsigned char)*s) && *s != '_') return false;
  while (*++s)
    if (!isalnum((unsigned char)*s) && *s != '_') return false;
  return true;
}

/* Splits "a,b,c" in place into at most max items; -1 on too many or on an
 * empty item. */
static int split_commas(char *s, char **items, int max) {
  int n = 0;
  for (;;) {
    if (n == max) return -1;
    items[n++] = s;
    char *comma = strchr(s, ',');
    if (comma) *comma = 0;
    if (!*s) return -1;
    if (!comma) return n;
    s = comma + 1;
  }
}

/* ------------------------------------------------------- directives */

/* The range of values of an integer parameter type; false for f32 and
 * pointers. u64 values stop at 2^63-1, as launches do. */
static bool int_range(ParamType t, long long *lo, long long *hi) {
  switch (t) {
  case PT_I32:
    return *lo = INT32_MIN, *hi = INT32_MAX, true;
  case PT_U32:
    return *lo = 0, *hi = UINT32_MAX, true;
  case PT_I64:
    return *lo = LLONG_MIN, *hi = LLONG_MAX, true;
  case PT_U64:
    return *lo = 0, *hi = LLONG_MAX, true;
  default:
    return false;
  }
}

/* The entry's `fixed` pairs against its parameters, now all declared: each
 * names an integer parameter once, with a value of its type. */
static tls_status check_fixed(MetaParser *mp, tls_kernel *k) {
  char *copy = xstrdup(k->fixed), *save = NULL;
  tls_status st = TLS_OK;
  for (char *kv = strtok_r(copy, " ", &save); kv && !st; kv = strtok_r(NULL, " ", &save)) {
    char *eq = strchr(kv, '=');
    *eq = 0;
    int p = 0;
    while (p < k->nparams && strcmp(k->params[p].name, kv)) p++;
    long long lo, hi, v = 0;
    if (p == k->nparams)
      st = perr(mp, k->fixed_line, "'fixed' names '%s', which is not a parameter of entry '%s'", kv,
                k->name);
    else if (!int_range(k->params[p].type, &lo, &hi))
      st = perr(mp, k->fixed_line,
                "'fixed' names '%s', a %s parameter (only integer parameters can be fixed)", kv,
                k->params[p].type_text);
    else if (!parse_int(eq + 1, lo, hi, &v))
      st = perr(mp, k->fixed_line,
                "'fixed' value of '%s' must be an integer of its type %s, not '%s'", kv,
                k->params[p].type_text, eq + 1);
    for (int i = 0; !st && i < k->nfixed; i++)
      if (k->fixed_param[i] == p) st = perr(mp, k->fixed_line, "'fixed' names '%s' twice", kv);
    if (!st) {
      k->fixed_param[k->nfixed] = p;
      k->fixed_value[k->nfixed++] = v;
    }
  }
  free(copy);
  return st;
}

/* Compiles the current entry's deferred expressions (they may name
 * parameters declared after them) and checks that it is complete. */
static tls_status close_entry(MetaParser *mp) {
  tls_kernel *k = mp->cur;
  char why[256];
  if (!k) return TLS_OK;
  mp->cur = NULL;
  if (!mp->grid_line) return perr(mp, k->line, "entry '%s' has no 'grid' line", k->name);
  tls_status st = check_fixed(mp, k);
  if (st) return st;
  for (int d = 0; d < 3; d++) {
    if (!expr_compile(mp->grid_text[d], k->params, k->nparams, &k->grid[d], why, sizeof why))
      return perr(mp, mp->grid_line, "bad grid expression '%s': %s", mp->grid_text[d], why);
    k->grid[d].text = mp->grid_text[d];
    mp->grid_text[d] = NULL;
  }
  for (int t = 0; t < k->ntmaps; t++) {
    TmapDesc *tm = &k->tmaps[t];
    for (int i = 0; i < 2 * tm->rank - 1; i++) {
      Expr *e = i < tm->rank ? &tm->dims[i] : &tm->strides[i - tm->rank];
      char *text = mp->tmap_text[t][i];
      if (!expr_compile(text, k->params, k->nparams, e, why, sizeof why))
        return perr(mp, tm->line, "bad tensor-map expression '%s': %s", text, why);
      e->text = text;
      mp->tmap_text[t][i] = NULL;
    }
  }
  for (int w = 0; w < k->nws; w++) {
    Workspace *ws = &k->ws[w];
    if (!ws->line)
      return perr(mp, ws->param_line, "workspace parameter '%s' has no 'workspace' line", ws->name);
    for (int i = 0; i < ws->rank; i++) {
      char *text = mp->ws_text[w][i];
      if (!expr_compile(text, k->params, k->nparams, &ws->dims[i], why, sizeof why))
        return perr(mp, ws->line, "bad workspace expression '%s': %s", text, why);
      ws->dims[i].text = text;
      mp->ws_text[w][i] = NULL;
    }
  }
  for (int i = 0; i < k->ndivs; i++) { /* expr_compile keeps value.text */
    Divisor *dv = &k->divs[i];
    if (!dv->line)
      return perr(mp, dv->param_line, "divisor parameter '%s' has no 'divisor' line", dv->name);
    if (!expr_compile(dv->value.text, k->params, k->nparams, &dv->value, why, sizeof why))
      return perr(mp, dv->line, "bad divisor expression '%s': %s", dv->value.text, why);
  }
  for (int i = 0; i < k->nreqs; i++) { /* expr_compile keeps cond.text */
    Require *r = &k->reqs[i];
    if (!expr_compile(r->cond.text, k->params, k->nparams, &r->cond, why, sizeof why))
      return perr(mp, r->line, "bad require expression '%s': %s", r->cond.text, why);
  }
  mp->grid_line = 0;
  return TLS_OK;
}

/* entry NAME script=S block=T smem=B */
static tls_status dir_entry(MetaParser *mp, char **f, int n) {
  tls_status st = close_entry(mp);
  if (st) return st;
  tls_module *mod = mp->mod;
  if (n < 2 || !is_ident(f[1])) return perr(mp, mp->line, "'entry' needs a kernel name");
  if (mod->nkernels == mp->max_kernels)
    return perr(mp, mp->line, "too many entries (at most %d)", MAX_KERNELS);
  for (int i = 0; i < mod->nkernels; i++)
    if (!strcmp(mod->kernels[i].name, f[1]))
      return perr(mp, mp->line, "entry '%s' appears twice", f[1]);
  tls_kernel *k = &mod->kernels[mod->nkernels++];
  memset(k, 0, sizeof *k);
  k->mod = mod;
  k->line = mp->line;
  k->name = xstrdup(f[1]);
  k->block = k->smem = -1;
  k->cluster[0] = k->cluster[1] = k->cluster[2] = 1;
  mp->cur = k;
  for (int i = 2; i < n; i++) {
    const char *v;
    long long x;
    if ((v = key_value(f[i], "script"))) {
      if (!is_ident(v)) return perr(mp, mp->line, "bad script name '%s'", v);
      free(k->script);
      k->script = xstrdup(v);
    } else if ((v = key_value(f[i], "block"))) {
      if (!parse_int(v, 1, 1024, &x))
        return perr(mp, mp->line, "block must be 1..1024 threads, not '%s'", v);
      k->block = (int)x;
    } else if ((v = key_value(f[i], "smem"))) {
      if (!parse_int(v, 0, 1 << 30, &x)) return perr(mp, mp->line, "bad smem byte count '%s'", v);
      k->smem = (int)x;
    } else {
      return perr(mp, mp->line, "unknown key '%s' in 'entry'", f[i]);
    }
  }
  if (!k->script || k->block < 0 || k->smem < 0)
    return perr(mp, mp->line, "'entry' needs script=, block= and smem=");
  k->config = xstrdup("");
  k->fixed = xstrdup("");
  return TLS_OK;
}

enum { CONFIG_MAX_NESTING = 16 }; /* lists in lists of one config value */

/* One config value at s (docs/format.md): a word of letters, digits and
 * `_ . + -` (an integer, a float, True, None, a dtype name), a word in
 * single quotes (a string), or a list [..] or tuple (..) of values
 * separated by commas. Its end, or NULL when it is none. */
static const char *config_value(const char *s, int depth) {
  static const char word[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-";
  if (depth > CONFIG_MAX_NESTING) return NULL;
  if (*s == '[' || *s == '(') {
    char close = *s == '[' ? ']' : ')';
    for (s++; *s != close;) {
      if (!(s = config_value(s, depth + 1))) return NULL;
      if (*s == ',')
        s++;
      else if (*s != close)
        return NULL;
    }
    return s + 1;
  }
  if (*s == '\'') {
    size_t n = strspn(s + 1, word);
    return s[1 + n] == '\'' ? s + n + 2 : NULL;
  }
  size_t n = strspn(s, word);
  return n ? s + n : NULL;
}

/* config k=v ... (the autotune point, kept as "k=v k=v") */
static tls_status dir_config(MetaParser *mp, char **f, int n) {
  size_t len = 1;
  for (int i = 1; i < n; i++) {
    char *eq = strchr(f[i], '=');
    if (!eq || eq == f[i] || !eq[1])
      return perr(mp, mp->line, "config field '%s' is not key=value", f[i]);
    const char *end = config_value(eq + 1, 0);
    if (!end || *end)
      return perr(mp, mp->line,
                  "config value '%s' of '%.*s' is not a number, a word, a quoted word, or a "
                  "list or tuple of them",
                  eq + 1, (int)(eq - f[i]), f[i]);
    len += strlen(f[i]) + 1;
  }
  char *s = malloc(len);
  if (!s) return snprintf(mp->msg, mp->msglen, "out of memory"), TLS_ERR_NOMEM;
  s[0] = 0;
  for (int i = 1; i < n; i++) {
    if (i > 1) strcat(s, " ");
    strcat(s, f[i]);
  }
  free(mp->cur->config);
  mp->cur->config = s;
  return TLS_OK;
}

/* fixed NAME=VALUE ... (checked when the entry closes, against its
 * parameters) */
static tls_status dir_fixed(MetaParser *mp, char **f, int n) {
  tls_kernel *k = mp->cur;
  if (k->fixed_line)
    return perr(mp, mp->line, "second 'fixed' line in entry '%s' (line %d has the first)", k->name,
                k->fixed_line);
  if (n < 2) return perr(mp, mp->line, "'fixed' needs NAME=VALUE fields");
  size_t len = 1;
  for (int i = 1; i < n; i++) {
    char *eq = strchr(f[i], '=');
    char save = eq ? *eq : 0;
    if (eq) *eq = 0;
    bool ok = eq && is_ident(f[i]) && eq[1];
    if (eq) *eq = save;
    if (!ok) return perr(mp, mp->line, "fixed field '%s' is not NAME=VALUE", f[i]);
    len += strlen(f[i]) + 1;
  }
  char *s = malloc(len);
  if (!s) return snprintf(mp->msg, mp->msglen, "out of memory"), TLS_ERR_NOMEM;
  s[0] = 0;
  for (int i = 1; i < n; i++) {
    if (i > 1) strcat(s, " ");
    strcat(s, f[i]);
  }
  free(k->fixed);
  k->fixed = s;
  k->fixed_line = mp->line;
  return TLS_OK;
}

/* The workspace whose hidden parameter is `name`, or -1. */
static int workspace_index(const tls_kernel *k, const char *name) {
  for (int i = 0; i < k->nws; i++)
    if (!strcmp(k->ws[i].name, name)) return i;
  return -1;
}

/* param NAME ptr DTYPE workspace: the hidden pointer of a workspace, after
 * every user parameter (its `workspace` line gives its size). */
static tls_status workspace_param(MetaParser *mp, char **f) {
  tls_kernel *k = mp->cur;
  int cu, bytes;
  if (k->nws == TLS_MAX_WORKSPACES)
    return perr(mp, mp->line, "entry '%s' has too many workspaces (at most %d)", k->name,
                TLS_MAX_WORKSPACES);
  if (!meta_dtype(f[3], &cu, &bytes) || strlen(f[3]) >= sizeof k->ws[0].dtype)
    return perr(mp, mp->line, "unknown element type '%s'", f[3]);
  Workspace *ws = realloc(k->ws, sizeof *ws * (size_t)(k->nws + 1));
  if (!ws) return snprintf(mp->msg, mp->msglen, "out of memory"), TLS_ERR_NOMEM;
  k->ws = ws;
  Workspace *w = &ws[k->nws++];
  memset(w, 0, sizeof *w);
  w->name = xstrdup(f[1]);
  snprintf(w->dtype, sizeof w->dtype, "%s", f[3]);
  w->elem_bytes = bytes;
  w->param_line = mp->line;
  return TLS_OK;
}

/* The divisor whose hidden parameter is `name`, or -1. */
static int divisor_index(const tls_kernel *k, const char *name) {
  for (int i = 0; i < k->ndivs; i++)
    if (!strcmp(k->divs[i].name, name)) return i;
  return -1;
}

/* param NAME u64 divisor: the hidden magic numbers of a launch-invariant
 * divisor, after every user parameter and before the workspaces' (its
 * `divisor` line gives its expression). */
static tls_status divisor_param(MetaParser *mp, char **f) {
  tls_kernel *k = mp->cur;
  if (k->nws)
    return perr(mp, mp->line,
                "divisor parameter '%s' follows workspace parameter '%s' (the divisors' come "
                "first)",
                f[1], k->ws[k->nws - 1].name);
  if (k->ndivs == KERNEL_MAX_DIVISORS)
    return perr(mp, mp->line, "entry '%s' has too many divisor parameters (at most %d)", k->name,
                KERNEL_MAX_DIVISORS);
  Divisor *dv = realloc(k->divs, sizeof *dv * (size_t)(k->ndivs + 1));
  if (!dv) return snprintf(mp->msg, mp->msglen, "out of memory"), TLS_ERR_NOMEM;
  k->divs = dv;
  Divisor *d = &dv[k->ndivs++];
  memset(d, 0, sizeof *d);
  d->name = xstrdup(f[1]);
  d->param_line = mp->line;
  return TLS_OK;
}

/* divisor NAME EXPR: NAME a divisor parameter declared before it, once;
 * EXPR is compiled when the entry closes. */
static tls_status dir_divisor(MetaParser *mp, char **f, int n) {
  tls_kernel *k = mp->cur;
  if (n != 3) return perr(mp, mp->line, "'divisor' needs a parameter name and an expression");
  int i = divisor_index(k, f[1]);
  if (i < 0)
    return perr(mp, mp->line,
                "divisor '%s' is not a divisor parameter declared before it ('param %s u64 "
                "divisor')",
                f[1], f[1]);
  Divisor *d = &k->divs[i];
  if (d->line)
    return perr(mp, mp->line, "second 'divisor' line for '%s' (line %d has the first)", f[1],
                d->line);
  d->value.text = xstrdup(f[2]);
  d->line = mp->line;
  return TLS_OK;
}

/* param NAME TYPE | param NAME ptr DTYPE | param NAME ptr DTYPE workspace |
 * param NAME u64 divisor */
static tls_status dir_param(MetaParser *mp, char **f, int n) {
  static const char *const SCALARS[] = {"i32", "u32", "i64", "u64", "f32"};
  tls_kernel *k = mp->cur;
  if (n < 3 || !is_ident(f[1])) return perr(mp, mp->line, "'param' needs a name and a type");
  bool hidden = n == 5 && !strcmp(f[2], "ptr") && !strcmp(f[4], "workspace");
  bool divisor = n == 4 && !strcmp(f[2], "u64") && !strcmp(f[3], "divisor");
  if (!hidden && !divisor && k->nparams == TLS_MAX_PARAMS)
    return perr(mp, mp->line, "entry '%s' has too many parameters (at most %d)", k->name,
                TLS_MAX_PARAMS);
  /* An expression reads `min(` and `max(` as the functions. */
  if (!strcmp(f[1], "min") || !strcmp(f[1], "max"))
    return perr(mp, mp->line,
                "parameter name '%s' is reserved (expressions use min(a,b) and max(a,b))", f[1]);
  for (int i = 0; i < k->nparams; i++)
    if (!strcmp(k->params[i].name, f[1]))
      return perr(mp, mp->line, "parameter '%s' appears twice", f[1]);
  if (workspace_index(k, f[1]) >= 0 || divisor_index(k, f[1]) >= 0)
    return perr(mp, mp->line, "parameter '%s' appears twice", f[1]);
  if (hidden) return workspace_param(mp, f);
  if (divisor) return divisor_param(mp, f);
  if (k->ndivs)
    return perr(mp, mp->line,
                "parameter '%s' follows divisor parameter '%s' (a divisor's hidden parameter "
                "comes after every user parameter)",
                f[1], k->divs[k->ndivs - 1].name);
  /* the launch's arguments are the user's: hidden ones come after them */
  if (k->nws)
    return perr(mp, mp->line,
                "parameter '%s' follows workspace parameter '%s' (a workspace's hidden "
                "parameter comes after every user parameter)",
                f[1], k->ws[k->nws - 1].name);
  Param *p = &k->params[k->nparams];
  memset(p, 0, sizeof *p);
  if (!strcmp(f[2], "ptr")) {
    int cu;
    if (n == 5)
      return perr(mp, mp->line, "unknown word '%s' after 'param %s ptr %s' (only 'workspace')",
                  f[4], f[1], f[3]);
    if (n != 4) return perr(mp, mp->line, "'param %s ptr' needs one element type", f[1]);
    if (!meta_dtype(f[3], &cu, &p->elem_bytes))
      return perr(mp, mp->line, "unknown element type '%s'", f[3]);
    p->type = PT_PTR;
    snprintf(p->type_text, sizeof p->type_text, "ptr %s", f[3]);
  } else {
    int t = 0;
    while (t < 5 && strcmp(f[2], SCALARS[t])) t++;
    if (t == 5 || n != 3) return perr(mp, mp->line, "unknown parameter type '%s'", f[2]);
    p->type = (ParamType)t; /* PT_I32..PT_F32 follow SCALARS' order */
    snprintf(p->type_text, sizeof p->type_text, "%s", f[2]);
  }
  p->name = xstrdup(f[1]);
  k->nparams++;
  return TLS_OK;
}

/* workspace NAME dtype=D dims=E,... clean=0|1: NAME a workspace parameter
 * declared before it, once; the dims (outermost first) are compiled when
 * the entry closes. */
static tls_status dir_workspace(MetaParser *mp, char **f, int n) {
  tls_kernel *k = mp->cur;
  if (n < 2 || strchr(f[1], '=')) return perr(mp, mp->line, "'workspace' needs a parameter name");
  int w = workspace_index(k, f[1]);
  if (w < 0)
    return perr(mp, mp->line,
                "workspace '%s' is not a workspace parameter declared before it ('param %s ptr "
                "DTYPE workspace')",
                f[1], f[1]);
  Workspace *ws = &k->ws[w];
  if (ws->line)
    return perr(mp, mp->line, "second 'workspace' line for '%s' (line %d has the first)", f[1],
                ws->line);
  char *dtype = NULL, *dims = NULL, *clean = NULL;
  for (int i = 2; i < n; i++) {
    char *v;
    if ((v = (char *)key_value(f[i], "dtype")))
      dtype = v;
    else if ((v = (char *)key_value(f[i], "dims")))
      dims = v;
    else if ((v = (char *)key_value(f[i], "clean")))
      clean = v;
    else
      return perr(mp, mp->line, "unknown key '%s' in 'workspace'", f[i]);
  }
  if (!dtype || !dims || !clean)
    return perr(mp, mp->line, "workspace %s needs dtype=, dims= and clean=", f[1]);
  if (strcmp(dtype, ws->dtype))
    return perr(mp, mp->line, "workspace %s: dtype=%s but its parameter points to %s", f[1], dtype,
                ws->dtype);
  if (strcmp(clean, "0") && strcmp(clean, "1"))
    return perr(mp, mp->line, "workspace %s: clean must be 0 or 1, not '%s'", f[1], clean);
  size_t len = strlen(f[1]) + strlen(ws->dtype) + strlen(dims) + 16;
  free(ws->desc);
  if (!(ws->desc = malloc(len)))
    return snprintf(mp->msg, mp->msglen, "out of memory"), TLS_ERR_NOMEM;
  snprintf(ws->desc, len, "%s %s dims=%s clean=%s", f[1], ws->dtype, dims, clean);
  char *items[TLS_MAX_RANK];
  int rank = split_commas(dims, items, TLS_MAX_RANK);
  if (rank < 1)
    return perr(mp, mp->line, "workspace %s: dims needs 1 to %d expressions", f[1], TLS_MAX_RANK);
  for (int i = 0; i < rank; i++) mp->ws_text[w][i] = xstrdup(items[i]);
  ws->rank = rank;
  ws->clean = clean[0] == '1';
  ws->line = mp->line;
  return TLS_OK;
}

/* grid X Y Z (compiled when the entry closes) */
static tls_status dir_grid(MetaParser *mp, char **f, int n) {
  if (n != 4) return perr(mp, mp->line, "'grid' needs three expressions");
  if (mp->grid_line) return perr(mp, mp->line, "second 'grid' line in entry '%s'", mp->cur->name);
  mp->grid_line = mp->line;
  for (int d = 0; d < 3; d++) mp->grid_text[d] = xstrdup(f[d + 1]);
  return TLS_OK;
}

/* cluster X Y Z: blocks per cluster, positive integers, at most 8 in all
 * (the portable cluster size) */
static tls_status dir_cluster(MetaParser *mp, char **f, int n) {
  tls_kernel *k = mp->cur;
  if (k->cluster_line)
    return perr(mp, mp->line, "second 'cluster' line in entry '%s' (line %d has the first)",
                k->name, k->cluster_line);
  if (n != 4) return perr(mp, mp->line, "'cluster' needs three integers");
  long long total = 1;
  for (int d = 0; d < 3; d++) {
    long long x;
    if (!parse_int(f[d + 1], 1, 8, &x))
      return perr(mp, mp->line, "bad cluster dimension '%s' (1 to 8)", f[d + 1]);
    k->cluster[d] = (int)x;
    total *= x;
  }
  if (total > 8)
    return perr(mp, mp->line, "a cluster of %lld blocks: at most 8 (the portable cluster size)",
                total);
  k->cluster_line = mp->line;
  return TLS_OK;
}

/* occupancy BASE: the entry's code is BASE's, which libtlsrt builds for
 * more blocks per SM (occupancy.c); BASE is an earlier entry with code. */
static tls_status dir_occupancy(MetaParser *mp, char **f, int n) {
  tls_kernel *k = mp->cur;
  if (k->occupancy_line)
    return perr(mp, mp->line, "second 'occupancy' line in entry '%s' (line %d has the first)",
                k->name, k->occupancy_line);
  if (n != 2 || !is_ident(f[1])) return perr(mp, mp->line, "'occupancy' needs an entry name");
  const tls_kernel *base = rt_kernel_named(mp->mod, f[1]); /* k's own name: not earlier */
  if (!base || base == k)
    return perr(mp, mp->line, "'occupancy %s': no earlier entry of that name", f[1]);
  if (base->occupancy_of)
    return perr(mp, mp->line, "'occupancy %s': that entry has no code of its own either", f[1]);
  k->occupancy_of = xstrdup(f[1]);
  k->occupancy_line = mp->line;
  return TLS_OK;
}

/* require EXPR MESSAGE: the expression is compiled when the entry closes
 * (it may name parameters declared after it); the message is the rest of
 * the line, spaces and all (require_message). */
static tls_status dir_require(MetaParser *mp, char **f, int n, const char *message) {
  tls_kernel *k = mp->cur;
  if (n != 2) return perr(mp, mp->line, "'require' needs an expression, then its message");
  if (k->nreqs == KERNEL_MAX_REQUIRES)
    return perr(mp, mp->line, "entry '%s' has too many 'require' lines (at most %d)", k->name,
                KERNEL_MAX_REQUIRES);
  Require *reqs = realloc(k->reqs, sizeof *reqs * (size_t)(k->nreqs + 1));
  if (!reqs) return snprintf(mp->msg, mp->msglen, "out of memory"), TLS_ERR_NOMEM;
  k->reqs = reqs;
  Require *r = &reqs[k->nreqs++];
  memset(r, 0, sizeof *r);
  r->cond.text = xstrdup(f[1]);
  r->msg = xstrdup(message);
  r->line = mp->line;
  return TLS_OK;
}

/* The tmap fields that are lists: dims, strides, box. */
static tls_status tmap_lists(MetaParser *mp, TmapDesc *tm, int t, char *dims, char *strides,
                             char *box) {
  char *items[TLS_MAX_RANK];
  int r = tm->rank;
  if (split_commas(dims, items, TLS_MAX_RANK) != r)
    return perr(mp, mp->line, "tmap %d: dims needs %d expressions", t, r);
  for (int i = 0; i < r; i++) mp->tmap_text[t][i] = xstrdup(items[i]);
  if (r > 1 && split_commas(strides, items, TLS_MAX_RANK) != r - 1)
    return perr(mp, mp->line, "tmap %d: strides needs %d expressions", t, r - 1);
  if (r == 1 && strides && *strides)
    return perr(mp, mp->line, "tmap %d: a rank-1 map has no strides", t);
  for (int i = 0; i < r - 1; i++) mp->tmap_text[t][r + i] = xstrdup(items[i]);
  if (split_commas(box, items, TLS_MAX_RANK) != r)
    return perr(mp, mp->line, "tmap %d: box needs %d integers", t, r);
  for (int i = 0; i < r; i++) {
    long long x;
    if (!parse_int(items[i], 1, 256, &x))
      return perr(mp, mp->line, "tmap %d: box extent '%s' is not in 1..256", t, items[i]);
    tm->box[i] = (uint32_t)x;
  }
  return TLS_OK;
}

/* The TMA rules that the constant part of a map (box, swizzle) must meet. */
static tls_status tmap_static_rules(MetaParser *mp, TmapDesc *tm, int t) {
  int inner = (int)tm->box[0] * tm->elem_bytes;
  if (inner % 16)
    return perr(mp, mp->line, "tmap %d: inner box extent %d bytes is not a multiple of 16", t,
                inner);
  if (tm->swizzle_bytes && inner > tm->swizzle_bytes)
    return perr(mp, mp->line, "tmap %d: inner box extent %d bytes exceeds the %d-byte swizzle", t,
                inner, tm->swizzle_bytes);
  return TLS_OK;
}

/* tmap I ptr=P dtype=D rank=R dims=... strides=... box=... swizzle=S */
static tls_status dir_tmap(MetaParser *mp, char **f, int n) {
  tls_kernel *k = mp->cur;
  long long x;
  if (k->ntmaps == TLS_MAX_TMAPS)
    return perr(mp, mp->line, "entry '%s' has too many tensor maps (at most %d: tmap 0 to tmap %d)",
                k->name, TLS_MAX_TMAPS, TLS_MAX_TMAPS - 1);
  if (n < 2 || strchr(f[1], '='))
    return perr(mp, mp->line,
                "'tmap' needs its index first: the next map of entry '%s' is 'tmap %d' (maps are "
                "numbered 0, 1, ... in order, at most %d)",
                k->name, k->ntmaps, TLS_MAX_TMAPS);
  if (!parse_int(f[1], LLONG_MIN, LLONG_MAX, &x))
    return perr(mp, mp->line,
                "tmap index '%s' is not an integer: the next map of entry '%s' is 'tmap %d' (maps "
                "are numbered 0, 1, ... in order, at most %d)",
                f[1], k->name, k->ntmaps, TLS_MAX_TMAPS);
  if (x != k->ntmaps)
    return perr(mp, mp->line,
                "'tmap %s' is out of order: the next map of entry '%s' is 'tmap %d' (maps are "
                "numbered 0, 1, ... in order, at most %d)",
                f[1], k->name, k->ntmaps, TLS_MAX_TMAPS);
  int t = (int)x;
  if (!k->tmaps) {
    size_t bytes = sizeof *k->tmaps * TLS_MAX_TMAPS;
    k->tmaps = aligned_alloc(64, bytes);
    if (!k->tmaps) return perr(mp, mp->line, "out of memory for the tensor maps of '%s'", k->name);
  }
  TmapDesc *tm = &k->tmaps[t];
  memset(tm, 0, sizeof *tm);
  tm->line = mp->line;
  tm->ptr_param = tm->ptr_ws = tm->swizzle_bytes = -1;
  char *ptr = NULL, *dtype = NULL, *dims = NULL, *strides = NULL, *box = NULL;
  for (int i = 2; i < n; i++) {
    char *v;
    if ((v = (char *)key_value(f[i], "ptr")))
      ptr = v;
    else if ((v = (char *)key_value(f[i], "dtype")))
      dtype = v;
    else if ((v = (char *)key_value(f[i], "rank"))) {
      if (!parse_int(v, 1, TLS_MAX_RANK, &x))
        return perr(mp, mp->line, "tmap %d: rank must be 1..%d", t, TLS_MAX_RANK);
      tm->rank = (int)x;
    } else if ((v = (char *)key_value(f[i], "dims")))
      dims = v;
    else if ((v = (char *)key_value(f[i], "strides")))
      strides = v;
    else if ((v = (char *)key_value(f[i], "box")))
      box = v;
    else if ((v = (char *)key_value(f[i], "swizzle"))) {
      if (!parse_int(v, 0, 128, &x) || (x != 0 && x != 32 && x != 64 && x != 128))
        return perr(mp, mp->line, "tmap %d: swizzle must be 0, 32, 64 or 128, not '%s'", t, v);
      tm->swizzle_bytes = (int)x;
      tm->swizzle = x == 0    ? CU_TENSOR_MAP_SWIZZLE_NONE
                    : x == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                    : x == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                              : CU_TENSOR_MAP_SWIZZLE_128B;
    } else
      return perr(mp, mp->line, "unknown key '%s' in 'tmap'", f[i]);
  }
  if (!ptr || !dtype || !tm->rank || !dims || !box || tm->swizzle_bytes < 0 ||
      (tm->rank > 1 && !strides))
    return perr(mp, mp->line,
                "tmap %d needs ptr=, dtype=, rank=, dims=, strides=, box= and swizzle=", t);
  for (int i = 0; i < k->nparams && tm->ptr_param < 0; i++)
    if (!strcmp(k->params[i].name, ptr)) tm->ptr_param = i;
  if (tm->ptr_param < 0) tm->ptr_ws = workspace_index(k, ptr); /* 256-byte aligned */
  if (tm->ptr_ws < 0 && (tm->ptr_param < 0 || k->params[tm->ptr_param].type != PT_PTR))
    return perr(mp, mp->line, "tmap %d: ptr=%s is not a pointer parameter declared before it", t,
                ptr);
  if (tm->ptr_param >= 0) k->params[tm->ptr_param].used_by_tmap = true;
  if (!meta_dtype(dtype, &tm->dtype, &tm->elem_bytes))
    return perr(mp, mp->line, "tmap %d: unknown dtype '%s'", t, dtype);
  k->ntmaps++;
  tls_status st = tmap_lists(mp, tm, t, dims, strides, box);
  return st ? st : tmap_static_rules(mp, tm, t);
}

/* For a `require` line, its message: the text after the expression,
 * whose start is cut off from the fields (so the fields are `require
 * EXPR`); NULL for any other line. */
static const char *require_message(char *text) {
  char *p = text + strspn(text, " \t");
  if (strncmp(p, "require", 7) || (p[7] && p[7] != ' ' && p[7] != '\t')) return NULL;
  p += 7;
  p += strspn(p, " \t");
  p += strcspn(p, " \t");
  if (!*p) return "";
  *p++ = 0;
  return p + strspn(p, " \t");
}

/* One `//@tls` line (its text after the prefix, modifiable). */
static tls_status meta_line(MetaParser *mp, char *text) {
  char *f[MAX_FIELDS];
  const char *message = require_message(text);
  int n = split_fields(text, f);
  if (n < 0) return perr(mp, mp->line, "too many fields (at most %d)", MAX_FIELDS);
  if (n == 0) return perr(mp, mp->line, "empty metadata line");
  if (mp->closed) return perr(mp, mp->line, "metadata after 'end'");
  if (!mp->have_version) {
    long long v;
    if (strcmp(f[0], "version") || n != 2)
      return perr(mp, mp->line, "the metadata block must start with 'version 1'");
    if (!parse_int(f[1], 0, 1 << 30, &v) || v != 1)
      return perr(mp, mp->line, "unsupported metadata version '%s' (this runtime reads version 1)",
                  f[1]);
    mp->have_version = true;
    return TLS_OK;
  }
  if (!strcmp(f[0], "source")) {
    free(mp->mod->source);
    mp->mod->source = xstrdup(n > 1 ? f[1] : "");
    return TLS_OK;
  }
  if (!strcmp(f[0], "entry")) return dir_entry(mp, f, n);
  if (!strcmp(f[0], "end")) {
    mp->closed = true;
    return n == 1 ? close_entry(mp) : perr(mp, mp->line, "'end' takes nothing");
  }
  static const char *const IN_ENTRY[] = {"config",  "param",     "grid",    "tmap",      "fixed",
                                         "cluster", "workspace", "divisor", "occupancy", "require"};
  for (int i = 0; i < 10; i++) {
    if (strcmp(f[0], IN_ENTRY[i])) continue;
    if (!mp->cur) return perr(mp, mp->line, "'%s' outside an entry", f[0]);
    switch (i) {
    case 0:
      return dir_config(mp, f, n);
    case 1:
      return dir_param(mp, f, n);
    case 2:
      return dir_grid(mp, f, n);
    case 3:
      return dir_tmap(mp, f, n);
    case 4:
      return dir_fixed(mp, f, n);
    case 5:
      return dir_cluster(mp, f, n);
    case 6:
      return dir_workspace(mp, f, n);
    case 7:
      return dir_divisor(mp, f, n);
    case 8:
      return dir_occupancy(mp, f, n);
    default:
      return dir_require(mp, f, n, message);
    }
  }
  return perr(mp, mp->line, "unknown metadata directive '%s'", f[0]);
}

/* --------------------------------------------------------- PTX checks */

/* Line number of a position in the text. */
static int line_of(const char *text, const char *pos) {
  int line = 1;
  for (const char *p = text; p < pos; p++) line += *p == '\n';
  return line;
}

/* Line number of a position in the blanked copy (same offsets as mp->ptx). */
static int clean_line(const MetaParser *mp, const char *pos) {
  return line_of(mp->mod->text, mp->ptx + (pos - mp->clean));
}

/* A copy of the PTX with every comment (// to the end of the line, and
 * block comments) and the inside of every string literal (a `.file`
 * path may hold a slash and a star) turned into spaces, newlines kept: offsets and lines stay
 * those of the original, and what a search of the copy finds is PTX, not a
 * comment that mentions it. NULL when out of memory; *open is the start of
 * a block comment that is never closed, or NULL. */
static char *blank_comments(const char *ptx, const char **open) {
  size_t len = strlen(ptx);
  char *c = malloc(len + 1);
  *open = NULL;
  if (!c) return NULL;
  memcpy(c, ptx, len + 1);
  for (size_t i = 0; i < len; i++) {
    if (c[i] == '/' && c[i + 1] == '/') {
      for (; i < len && c[i] != '\n'; i++) c[i] = ' ';
    } else if (c[i] == '/' && c[i + 1] == '*') {
      const char *end = strstr(ptx + i + 2, "*/");
      size_t stop = end ? (size_t)(end - ptx) + 2 : len;
      if (!end && !*open) *open = ptx + i;
      for (; i < stop; i++)
        if (c[i] != '\n') c[i] = ' ';
      i--;
    } else if (c[i] == '"') { /* to the closing quote or the end of the line */
      for (i++; i < len && c[i] != '"' && c[i] != '\n'; i++) {
        if (c[i] == '\\' && i + 1 < len && c[i + 1] != '\n') c[i++] = ' ';
        c[i] = ' ';
      }
    }
  }
  return c;
}

/* Finds `.entry NAME (` as PTX tokens in the blanked copy; returns the '('
 * or NULL. */
static const char *find_entry(const char *clean, const char *name) {
  size_t n = strlen(name);
  for (const char *p = strstr(clean, ".entry"); p; p = strstr(p + 6, ".entry")) {
    if (p > clean && !isspace((unsigned char)p[-1])) continue; /* x.entry */
    const char *q = p + 6;
    if (!isspace((unsigned char)*q)) continue; /* .entryfoo */
    while (isspace((unsigned char)*q)) q++;
    if (strncmp(q, name, n)) continue;
    q += n;
    while (isspace((unsigned char)*q)) q++;
    if (*q == '(') return q;
  }
  return NULL;
}

/* A token of a `.param` declaration: separated by spaces and commas. */
typedef struct Token {
  const char *s;
  size_t n;
} Token;

static bool token_is(Token t, const char *word) {
  return t.n == strlen(word) && !strncmp(t.s, word, t.n);
}

/* One `.param` declaration in [decl, end): its byte size from its type
 * token (the one after `.param` and any `.align N`: 4 or 8 for scalars, 128
 * for `.b8 NAME[128]`, 0 when unrecognized), and its name (the last token,
 * without an array suffix). */
static int param_decl(const char *decl, const char *end, Token *name) {
  Token first[4] = {{0}}, last = {0}, before_last = {0};
  int count = 0;
  for (const char *p = decl; p < end;) {
    while (p < end && (isspace((unsigned char)*p) || *p == ',')) p++;
    if (p == end) break;
    Token t = {p, 0};
    while (p < end && !isspace((unsigned char)*p) && *p != ',') p++;
    t.n = (size_t)(p - t.s);
    if (count < 4) first[count] = t;
    count++;
    before_last = last;
    last = t;
  }
  /* NAME[128] or NAME [128] */
  Token array = {0};
  if (last.n && last.s[0] == '[' && count >= 2)
    array = last, *name = before_last;
  else
    *name = last;
  const char *bracket = name->n ? memchr(name->s, '[', name->n) : NULL;
  if (bracket) {
    array = (Token){bracket, name->n - (size_t)(bracket - name->s)};
    name->n = (size_t)(bracket - name->s);
  }
  int at = count > 1 && token_is(first[1], ".align") ? 3 : 1;
  if (at >= count || at >= 4) return 0;
  Token type = first[at];
  if (type.n < 3 || type.s[0] != '.') return 0;
  if (token_is(type, ".b8")) return token_is(array, "[128]") ? 128 : 0;
  if (array.n) return 0;
  if (type.n == 4 && !strncmp(type.s + 2, "32", 2)) return 4;
  if (type.n == 4 && !strncmp(type.s + 2, "64", 2)) return 8;
  return 0;
}

static int param_bytes(ParamType t) { return t == PT_I32 || t == PT_U32 || t == PT_F32 ? 4 : 8; }

/* Whether PTX parameter `pos` of entry `entry` may bear `name`: tlsc calls
 * user parameter NAME `ENTRY_param_NAME` and tensor map T `ENTRY_tmapT`;
 * nvcc calls each `ENTRY_param_POS` by position, which says nothing either
 * way. `meta` is the user parameter's name, NULL for tensor map `tmap`. */
static bool param_name_ok(Token name, const char *entry, int pos, const char *meta, int tmap) {
  size_t n = strlen(entry);
  if (name.n <= n || strncmp(name.s, entry, n) || name.s[n] != '_') return false;
  Token rest = {name.s + n + 1, name.n - n - 1};
  char num[32];
  if (rest.n > 6 && !strncmp(rest.s, "param_", 6)) {
    Token tail = {rest.s + 6, rest.n - 6};
    snprintf(num, sizeof num, "%d", pos);
    return token_is(tail, num) || (meta && token_is(tail, meta));
  }
  snprintf(num, sizeof num, "tmap%d", tmap);
  return !meta && token_is(rest, num);
}

/* The entry's `.param` list must be the user params, the workspaces'
 * hidden pointers, then one 128-byte tensor map per tmap, each named for
 * what the metadata declares there. */
static tls_status check_entry_params(MetaParser *mp, tls_kernel *k) {
  const char *open = find_entry(mp->clean, k->name);
  const char *commented = open ? NULL : find_entry(mp->ptx, k->name);
  if (commented)
    return perr(mp, k->line, "entry '%s' is only in a comment of the PTX text (line %d)", k->name,
                line_of(mp->mod->text, commented));
  if (!open)
    return perr(mp, k->line, "entry '%s' is not in the PTX text (truncated file?)", k->name);
  const char *close = strchr(open, ')');
  if (!close)
    return perr(mp, clean_line(mp, open), "parameter list of '%s' is not closed (truncated file?)",
                k->name);
  int nvalues = k->nparams + k->ndivs + k->nws, want = nvalues + k->ntmaps, i = 0;
  Token names[TLS_MAX_PARAMS + KERNEL_MAX_DIVISORS + TLS_MAX_WORKSPACES + TLS_MAX_TMAPS];
  const char *where[TLS_MAX_PARAMS + KERNEL_MAX_DIVISORS + TLS_MAX_WORKSPACES + TLS_MAX_TMAPS];
  for (const char *p = strstr(open, ".param"); p && p < close; i++) {
    const char *next = strstr(p + 6, ".param");
    const char *end = next && next < close ? next : close;
    Token name;
    int size = param_decl(p, end, &name);
    int expect = i < k->nparams ? param_bytes(k->params[i].type) : i < nvalues ? 8 : 128;
    if (i < want && size != expect)
      return perr(mp, clean_line(mp, p),
                  "PTX parameter %d of '%s' is not the %d-byte value the metadata declares", i,
                  k->name, expect);
    if (i < want) names[i] = name, where[i] = p;
    p = next;
  }
  if (i != want && k->ndivs)
    return perr(mp, clean_line(mp, open),
                "'%s' takes %d PTX parameters but the metadata declares %d (%d params + %d "
                "divisors + %d workspaces + %d tensor maps)",
                k->name, i, want, k->nparams, k->ndivs, k->nws, k->ntmaps);
  if (i != want && k->nws)
    return perr(mp, clean_line(mp, open),
                "'%s' takes %d PTX parameters but the metadata declares %d (%d params + %d "
                "workspaces + %d tensor maps)",
                k->name, i, want, k->nparams, k->nws, k->ntmaps);
  if (i != want)
    return perr(
        mp, clean_line(mp, open),
        "'%s' takes %d PTX parameters but the metadata declares %d (%d params + %d tensor maps)",
        k->name, i, want, k->nparams, k->ntmaps);
  /* Sizes alone would let swapped parameters through, binding the grid and
   * the tensor maps to the wrong arguments. */
  for (i = 0; i < want; i++) {
    bool value = i < nvalues;
    int hidden = i - k->nparams; /* divisors, then workspaces */
    const char *meta = i < k->nparams      ? k->params[i].name
                       : hidden < k->ndivs ? k->divs[hidden].name
                       : value             ? k->ws[hidden - k->ndivs].name
                                           : NULL;
    int t = i - nvalues;
    if (param_name_ok(names[i], k->name, i, meta, t)) continue;
    if (value)
      return perr(mp, clean_line(mp, where[i]),
                  "PTX parameter %d of '%s' is named '%.*s' but the metadata declares %s "
                  "'%s' there (expected '%s_param_%s' or '%s_param_%d')",
                  i, k->name, (int)names[i].n, names[i].s,
                  i < k->nparams      ? "parameter"
                  : hidden < k->ndivs ? "divisor parameter"
                                      : "workspace parameter",
                  meta, k->name, meta, k->name, i);
    return perr(mp, clean_line(mp, where[i]),
                "PTX parameter %d of '%s' is named '%.*s' but the metadata declares tensor map %d "
                "there (expected '%s_tmap%d' or '%s_param_%d')",
                i, k->name, (int)names[i].n, names[i].s, t, k->name, t, k->name, i);
  }
  /* The body follows (after directives such as .maxntid, which have no ';'):
   * a file cut right after the parameter list has none. */
  size_t gap = strcspn(close, "{;");
  if (close[gap] != '{')
    return perr(mp, clean_line(mp, close), "entry '%s' has no body (truncated file?)", k->name);
  return TLS_OK;
}

/* Braces must balance (outside comments and strings): a file cut short
 * does not. */
static tls_status check_braces(MetaParser *mp) {
  int depth = 0;
  for (const char *p = mp->clean; *p; p++) {
    if (*p == '{')
      depth++;
    else if (*p == '}' && --depth < 0)
      return perr(mp, clean_line(mp, p), "unbalanced '}'");
  }
  if (depth) {
    size_t len = mp->mod->len;
    if (len && mp->mod->text[len - 1] == '\n') len--; /* name the last line, not the one after it */
    return perr(mp, line_of(mp->mod->text, mp->mod->text + len),
                "PTX text ends inside a block (truncated file?)");
  }
  return TLS_OK;
}

/* A PTX directive as a token of the blanked copy (not in a comment). */
static bool has_directive(const char *clean, const char *directive) {
  size_t n = strlen(directive);
  for (const char *p = strstr(clean, directive); p; p = strstr(p + 1, directive))
    if ((p == clean || isspace((unsigned char)p[-1])) && (!p[n] || isspace((unsigned char)p[n])))
      return true;
  return false;
}

/* An `occupancy BASE` entry has no code in the text, and the parameters
 * of BASE, whose code it takes (checked with BASE's entry). */
static tls_status check_occupancy_entry(MetaParser *mp, tls_kernel *k) {
  const char *open = find_entry(mp->clean, k->name);
  if (open)
    return perr(mp, clean_line(mp, open),
                "entry '%s' has code here, though line %d says it takes the code of '%s'", k->name,
                k->occupancy_line, k->occupancy_of);
  const tls_kernel *base = rt_kernel_named(mp->mod, k->occupancy_of);
  bool same = base && base->nparams == k->nparams && base->ndivs == k->ndivs &&
              base->nws == k->nws && base->ntmaps == k->ntmaps && base->block == k->block &&
              base->smem == k->smem;
  for (int i = 0; same && i < k->nparams; i++)
    same = !strcmp(base->params[i].name, k->params[i].name) &&
           !strcmp(base->params[i].type_text, k->params[i].type_text);
  if (!same)
    return perr(mp, k->occupancy_line,
                "entry '%s' takes the code of '%s' but not its parameters, block or shared memory",
                k->name, k->occupancy_of);
  return TLS_OK;
}

static tls_status check_ptx(MetaParser *mp, const char *ptx) {
  const char *open = NULL;
  mp->ptx = ptx;
  mp->clean = blank_comments(ptx, &open);
  if (!mp->clean)
    return snprintf(mp->msg, mp->msglen, "out of memory checking the PTX text"), TLS_ERR_NOMEM;
  if (open) return perr(mp, line_of(mp->mod->text, open), "comment not closed (truncated file?)");
  if (!has_directive(mp->clean, ".version"))
    return perr(mp, mp->line, "no PTX '.version' after the metadata block (truncated file?)");
  if (!has_directive(mp->clean, ".target"))
    return perr(mp, mp->line, "no PTX '.target' directive (truncated file?)");
  tls_status st = check_braces(mp);
  for (int i = 0; !st && i < mp->mod->nkernels; i++) {
    tls_kernel *k = &mp->mod->kernels[i];
    st = k->occupancy_of ? check_occupancy_entry(mp, k) : check_entry_params(mp, k);
  }
  return st;
}

/* --------------------------------------------------------- variants */

/* Same script, autotune point and parameters (names and types, in order):
 * one argument array launches either. */
static bool same_signature(const tls_kernel *a, const tls_kernel *b) {
  if (strcmp(a->script, b->script) || strcmp(a->config, b->config) || a->nparams != b->nparams)
    return false;
  for (int i = 0; i < a->nparams; i++)
    if (strcmp(a->params[i].name, b->params[i].name) ||
        strcmp(a->params[i].type_text, b->params[i].type_text))
      return false;
  return true;
}

/* Whether `b` fixes every parameter `a` fixes, to the same value. */
static bool fixes_all_of(const tls_kernel *b, const tls_kernel *a) {
  for (int i = 0; i < a->nfixed; i++) {
    bool found = false;
    for (int j = 0; j < b->nfixed && !found; j++)
      found = b->fixed_param[j] == a->fixed_param[i] && b->fixed_value[j] == a->fixed_value[i];
    if (!found) return false;
  }
  return true;
}

/* Each entry's variants: the siblings that fix more (each a superset of
 * its fixed values), most fixed first, then in file order. */
static tls_status link_variants(tls_module *mod, char *msg, size_t msglen) {
  for (int i = 0; i < mod->nkernels; i++) {
    tls_kernel *k = &mod->kernels[i];
    for (int j = 0; j < mod->nkernels; j++) {
      tls_kernel *e = &mod->kernels[j];
      if (e == k || !same_signature(k, e)) continue;
      if (e->nfixed < k->nfixed && fixes_all_of(k, e)) {
        k->is_variant = true;
        if (!e->nfixed && !k->generic) k->generic = e;
      }
      if (e->nfixed <= k->nfixed || !fixes_all_of(e, k)) continue;
      if (!k->variants && !(k->variants = calloc((size_t)mod->nkernels, sizeof *k->variants)))
        return snprintf(msg, msglen, "out of memory"), TLS_ERR_NOMEM;
      int at = k->nvariants++;
      while (at > 0 && k->variants[at - 1]->nfixed < e->nfixed) {
        k->variants[at] = k->variants[at - 1];
        at--;
      }
      k->variants[at] = e;
    }
  }
  return TLS_OK;
}

/* ---------------------------------------------------------------- main */

static void free_pending(MetaParser *mp) {
  free(mp->clean);
  for (int d = 0; d < 3; d++) free(mp->grid_text[d]);
  for (int t = 0; t < TLS_MAX_TMAPS; t++)
    for (int i = 0; i < 2 * TLS_MAX_RANK; i++) free(mp->tmap_text[t][i]);
  for (int w = 0; w < TLS_MAX_WORKSPACES; w++)
    for (int i = 0; i < TLS_MAX_RANK; i++) free(mp->ws_text[w][i]);
}

/* Walks the lines up to `.version`: `//@tls` lines are metadata, other
 * comments and blank lines are allowed, anything else ends the block. */
static tls_status parse_block(MetaParser *mp, const char **ptx_start) {
  const char *text = mp->mod->text, *p = text;
  char buf[4096];
  for (mp->line = 1; *p; mp->line++) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    while (len && (p[len - 1] == '\r' || p[len - 1] == ' ')) len--;
    if (len >= 6 && !strncmp(p, "//@tls", 6) && (len == 6 || p[6] == ' ')) {
      if (len >= sizeof buf) return perr(mp, mp->line, "metadata line too long");
      memcpy(buf, p + 6, len - 6);
      buf[len - 6] = 0;
      tls_status st = meta_line(mp, buf);
      if (st) return st;
    } else if (len && strncmp(p, "//", 2)) {
      break; /* the PTX proper */
    }
    if (!eol) break;
    p = eol + 1;
  }
  if (!mp->have_version)
    return perr(mp, 1, "no '//@tls version 1' metadata block (is this a tlsc PTX file?)");
  if (!mp->closed) return perr(mp, mp->line, "metadata block has no 'end' line (truncated file?)");
  if (!mp->mod->nkernels) return perr(mp, mp->line, "metadata declares no entry");
  *ptx_start = p;
  return TLS_OK;
}

tls_status meta_parse(tls_module *mod, char *msg, size_t msglen) {
  MetaParser mp = {0};
  mp.mod = mod;
  mp.msg = msg;
  mp.msglen = msglen;
  /* Sized by counting `entry` lines first (a bound on the entries), so kernels never move. */
  int entries = 1;
  for (const char *p = strstr(mod->text, "//@tls"); p && entries <= MAX_KERNELS;
       p = strstr(p + 1, "//@tls")) {
    const char *word = p + 6 + strspn(p + 6, " \t");
    entries += !strncmp(word, "entry", 5);
  }
  /* (The cached CUtensorMaps, which cuTensorMapEncodeTiled wants 64-byte
   * aligned, live in each kernel's own `tmaps` allocation: dir_tmap.) */
  mp.max_kernels = entries < MAX_KERNELS ? entries : MAX_KERNELS;
  size_t bytes = (size_t)mp.max_kernels * sizeof *mod->kernels;
  mod->kernels = calloc((size_t)mp.max_kernels, sizeof *mod->kernels);
  if (!mod->kernels)
    return snprintf(msg, msglen, "out of memory for %zu bytes of entries", bytes), TLS_ERR_NOMEM;
  const char *ptx = NULL;
  tls_status st = parse_block(&mp, &ptx);
  if (!st) st = check_ptx(&mp, ptx);
  if (!st) st = link_variants(mod, msg, msglen);
  free_pending(&mp);
  return st;
}

/* Frees what one entry owns. */
static void free_kernel(tls_kernel *k) {
  free(k->name);
  free(k->script);
  free(k->config);
  free(k->fixed);
  free(k->occupancy_of);
  free(k->variants);
  for (int j = 0; j < k->nparams; j++) free(k->params[j].name);
  for (int d = 0; d < 3; d++) free(k->grid[d].text);
  for (int j = 0; j < k->nreqs; j++) {
    free(k->reqs[j].cond.text);
    free(k->reqs[j].msg);
  }
  free(k->reqs);
  for (int w = 0; w < k->nws; w++) {
    free(k->ws[w].name);
    free(k->ws[w].desc);
    for (int j = 0; j < k->ws[w].rank; j++) free(k->ws[w].dims[j].text);
  }
  free(k->ws);
  for (int j = 0; j < k->ndivs; j++) {
    free(k->divs[j].name);
    free(k->divs[j].value.text);
  }
  free(k->divs);
  for (int t = 0; t < k->ntmaps; t++)
    for (int j = 0; j < k->tmaps[t].rank; j++) {
      free(k->tmaps[t].dims[j].text);
      if (j) free(k->tmaps[t].strides[j - 1].text);
    }
  free(k->tmaps);
}

void meta_free_kernels(tls_module *mod) {
  for (int i = 0; i < mod->nkernels; i++) free_kernel(&mod->kernels[i]);
  free(mod->kernels);
  mod->kernels = NULL;
  mod->nkernels = 0;
}

tls_status meta_drop_kernels(tls_module *mod, const bool *drop, char *msg, size_t msglen) {
  int n = 0;
  for (int i = 0; i < mod->nkernels; i++) {
    if (drop[i]) {
      free_kernel(&mod->kernels[i]);
      continue;
    }
    if (n != i) mod->kernels[n] = mod->kernels[i];
    n++;
  }
  mod->nkernels = n;
  for (int i = 0; i < n; i++) { /* the links point into the array: made again */
    tls_kernel *k = &mod->kernels[i];
    free(k->variants);
    k->variants = NULL;
    k->nvariants = 0;
    k->generic = NULL;
    k->is_variant = false;
  }
  return link_variants(mod, msg, msglen);
}
