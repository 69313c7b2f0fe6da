/* magic.c: division by launch-invariant values through magic numbers that
 * the runtime computes at launch.
 *
 * Tilus compiles an `int` kernel parameter as a constant; tlsc keeps it a
 * run-time int32, so a division by an expression of the parameters (the
 * number of tiles of a persistent schedule, `tile // num_n_tiles`) would be
 * PTX's div/rem, a long sequence on the GPU. A divisor that is fixed for a
 * launch is instead handed to the runtime: this pass finds the int32
 * divisions and remainders whose divisor is launch-invariant, gives each
 * distinct divisor a hidden kernel parameter (IrKernel.divs, after the
 * user's parameters and before the workspaces'), and the metadata says the
 * divisor as an expression over the parameters (backend_ptx/emit_meta.c,
 * `divisor`); libtlsrt evaluates it at each launch, refuses a launch where
 * it is not in 1..2^31-1, and passes the multiplier and the divisor
 * (runtime/prepare.c); the backend divides by multiplying
 * (backend_ptx/emit_divmod.c, where the method is proved exact).
 *
 * Launch-invariant: after each variable it reads is replaced by the one
 * value the kernel ever assigns it (every assignment of the variable, in
 * any thread group, assigns the same expression once its own variables are
 * replaced likewise; not a loop variable), the divisor reads only
 * parameters and constants, in the operators the metadata's expressions
 * have (ir_require_unsupported), within the runtime's 64 operations. The
 * checker makes every read of a variable follow an assignment of it, so a
 * read sees that value. The divisor is the exact value of that expression
 * (the runtime computes in 64 bits, as Python would), which is what the
 * kernel's int32 arithmetic computes whenever that does not wrap.
 *
 * The IR's statements do not change: the division nodes stay / and % (the
 * simulator still divides), and ir_divisor_of tells the backend which of
 * them read a hidden parameter.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

enum {
  DIV_MAX_CODE = IR_META_MAX_CODE, /* the runtime's instructions per expression */
  DIV_MAX_NODES = 256,             /* beyond, not looked at */
  DIV_MAX_DEPTH = 64               /* variables resolved through variables */
};

typedef struct Writes {
  IrExpr **values; /* the values of its S_ASSIGNs */
  int n, cap;
  bool loop; /* a loop variable */
} Writes;

typedef struct Magic {
  Arena *ar;
  IrKernel *k;
  Writes *writes; /* by variable id */
  int *state;     /* by variable id: 0 not looked at, 1 being resolved, 2 done */
  IrExpr **value; /* by variable id, when done: its one value, or NULL */
  int depth;
  bool failed; /* the substitution met a variable without one value */
  /* the divisors found, by their printed text */
  char **texts;
  IrExpr **divisors;
  int ndivs;
  /* the division nodes and their divisors */
  const IrExpr **sites;
  int *site_of;
  int nsites, cap_sites;
  /* the distinct nodes looked at */
  const IrExpr **seen;
  size_t seen_cap, nseen;
} Magic;

/* ------------------------------------------------------------ writes */

static void collect(Magic *M, const IrBlock *b) {
  for (int i = 0; i < b->len; i++) {
    const IrStmt *s = b->items[i];
    if (s->kind == S_FOR && s->loop.var->id >= 0 && s->loop.var->id < M->k->nvars)
      M->writes[s->loop.var->id].loop = true;
    if (s->kind == S_ASSIGN && s->assign.var->id >= 0 && s->assign.var->id < M->k->nvars) {
      Writes *w = &M->writes[s->assign.var->id];
      if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 4;
        w->values = xrealloc(w->values, sizeof *w->values * (size_t)w->cap);
      }
      w->values[w->n++] = s->assign.value;
    }
    collect(M, &s->body);
    collect(M, &s->orelse);
  }
}

/* ------------------------------------------------------------ invariance */

/* The printed form of x (IR text), malloc'ed. */
static char *expr_text(const IrExpr *x) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  ir_print_expr(f, x);
  fclose(f);
  return buf;
}

/* Whether x reads only parameters and constants, in what the metadata's
 * expressions can say. */
static bool launch_invariant(const IrExpr *x) {
  if (x->nodes > DIV_MAX_NODES) return false;
  return ir_require_unsupported(x) == NULL;
}

static IrExpr *resolve(Magic *M, const IrVar *v);

static IrExpr *leaf(void *ctx, IrExpr *x) {
  Magic *M = ctx;
  IrExpr *r = resolve(M, x->var);
  if (!r) {
    M->failed = true;
    return x;
  }
  return r;
}

/* x with each variable replaced by its one value; NULL when a variable has
 * none or the result is not launch-invariant. */
static IrExpr *substitute(Magic *M, IrExpr *x) {
  if (x->nodes > DIV_MAX_NODES) return NULL;
  bool outer = M->failed;
  M->failed = false;
  IrExpr *r = ir_expr_substitute(M->ar, x, leaf, M);
  bool bad = M->failed;
  M->failed = outer;
  return bad || !launch_invariant(r) ? NULL : r;
}

/* The one value variable v is ever assigned, over parameters and
 * constants; NULL when it has none (a loop variable, two different values,
 * a value read from anything else, a cycle). */
static IrExpr *resolve(Magic *M, const IrVar *v) {
  int id = v->id;
  if (id < 0 || id >= M->k->nvars) return NULL;
  if (M->state[id] == 2) return M->value[id];
  if (M->state[id] == 1 || M->depth >= DIV_MAX_DEPTH) return NULL; /* a cycle */
  const Writes *w = &M->writes[id];
  IrExpr *value = NULL;
  char *text = NULL;
  M->state[id] = 1;
  M->depth++;
  bool ok = !w->loop && w->n > 0;
  for (int i = 0; ok && i < w->n; i++) {
    IrExpr *x = substitute(M, w->values[i]);
    ok = x != NULL;
    if (!ok) break;
    if (!value) {
      value = x;
      text = expr_text(x);
      ok = text != NULL;
      continue;
    }
    char *t = expr_text(x);
    ok = t && !strcmp(t, text);
    free(t);
  }
  free(text);
  M->depth--;
  M->state[id] = 2;
  M->value[id] = ok ? value : NULL;
  return M->value[id];
}

/* ------------------------------------------------------------ divisions */

static bool same_expr(const IrExpr *a, const IrExpr *b) {
  if (a == b) return true;
  char *x = expr_text(a), *y = expr_text(b);
  bool same = x && y && !strcmp(x, y) && a->type == b->type;
  free(x);
  free(y);
  return same;
}

/* x with each `a - (a / c) * c` (c a non-zero constant) written `a % c`,
 * which C's truncating division (the IR's and the runtime's) makes the same
 * value, in fewer of the runtime's operations (Python's `n - n // c * c`
 * of the scripts' tile schedules). */
static IrExpr *shorten(Arena *ar, IrExpr *x) {
  int64_t c, c2;
  switch (x->kind) {
  case X_CAST:
    return ir_cast(ar, x->type, shorten(ar, x->a));
  case X_UNARY:
    return ir_unary(ar, x->op, shorten(ar, x->a));
  case X_SELECT:
    return ir_select(ar, shorten(ar, x->a), shorten(ar, x->b), shorten(ar, x->c));
  case X_BINARY: {
    const IrExpr *m = x->b, *q = m->kind == X_BINARY && m->op == OP_MUL ? m->a : NULL;
    if (x->op == OP_SUB && q && q->kind == X_BINARY && q->op == OP_DIV && ir_is_const(q->b, &c) &&
        ir_is_const(m->b, &c2) && c == c2 && c != 0 && same_expr(q->a, x->a) && x->type == q->type)
      return ir_binary(ar, OP_MOD, shorten(ar, x->a), q->b);
    return ir_binary(ar, x->op, shorten(ar, x->a), shorten(ar, x->b));
  }
  default:
    return x;
  }
}

/* The index of divisor x (a new one when its text is new), or -1 when the
 * kernel has IR_MAX_DIVISORS already. */
static int divisor_index(Magic *M, IrExpr *x) {
  char *text = expr_text(x);
  if (!text) return -1;
  for (int i = 0; i < M->ndivs; i++)
    if (!strcmp(M->texts[i], text)) {
      free(text);
      return i;
    }
  if (M->ndivs == IR_MAX_DIVISORS) {
    free(text);
    return -1;
  }
  M->texts[M->ndivs] = text;
  M->divisors[M->ndivs] = x;
  return M->ndivs++;
}

static void add_site(Magic *M, const IrExpr *x, int div) {
  if (M->nsites == M->cap_sites) {
    M->cap_sites = M->cap_sites ? 2 * M->cap_sites : 16;
    M->sites = xrealloc(M->sites, sizeof *M->sites * (size_t)M->cap_sites);
    M->site_of = xrealloc(M->site_of, sizeof *M->site_of * (size_t)M->cap_sites);
  }
  M->sites[M->nsites] = x;
  M->site_of[M->nsites++] = div;
}

/* An int32 x / b or x % b whose divisor b is launch-invariant and not a
 * constant (those the backend strength-reduces on its own). */
static void division(Magic *M, const IrExpr *x) {
  int64_t c;
  if (x->type != DT_INT32 || x->a->type != DT_INT32 || x->b->type != DT_INT32 ||
      ir_is_const(x->b, &c))
    return;
  IrExpr *d = substitute(M, x->b);
  if (d) d = shorten(M->ar, d);
  if (!d || ir_is_const(d, &c) || ir_meta_code_size(d) > DIV_MAX_CODE) return;
  int i = divisor_index(M, d);
  if (i >= 0) add_site(M, x, i);
}

/* Whether x was looked at already (and marks it). */
static bool seen(Magic *M, const IrExpr *x) {
  if (M->nseen * 2 >= M->seen_cap) {
    size_t cap = M->seen_cap ? 2 * M->seen_cap : 256;
    const IrExpr **t = xmalloc(sizeof *t * cap);
    memset(t, 0, sizeof *t * cap);
    for (size_t i = 0; i < M->seen_cap; i++) {
      if (!M->seen[i]) continue;
      size_t h = ((uintptr_t)M->seen[i] >> 4) & (cap - 1);
      while (t[h]) h = (h + 1) & (cap - 1);
      t[h] = M->seen[i];
    }
    free(M->seen);
    M->seen = t;
    M->seen_cap = cap;
  }
  size_t h = ((uintptr_t)x >> 4) & (M->seen_cap - 1);
  while (M->seen[h]) {
    if (M->seen[h] == x) return true;
    h = (h + 1) & (M->seen_cap - 1);
  }
  M->seen[h] = x;
  M->nseen++;
  return false;
}

static void visit(Magic *M, const IrExpr *x) {
  while (x && !seen(M, x)) {
    if (x->kind == X_BINARY && (x->op == OP_DIV || x->op == OP_MOD)) division(M, x);
    visit(M, x->a);
    visit(M, x->b);
    x = x->c;
  }
}

static IrExpr *visit_slot(void *ctx, IrExpr *x) {
  visit(ctx, x);
  return x;
}

static void walk(Magic *M, IrBlock *b) {
  for (int i = 0; i < b->len; i++) {
    IrStmt *s = b->items[i];
    ir_stmt_map_exprs(s, visit_slot, M); /* returns each slot as it is */
    walk(M, &s->body);
    walk(M, &s->orelse);
  }
}

/* ------------------------------------------------------------ parameters */

static bool name_taken(const IrKernel *k, const char *name) {
  for (int i = 0; i < k->nparams; i++)
    if (!strcmp(k->params[i]->name, name)) return true;
  return false;
}

/* `__div<i>`, with `_` appended while a parameter has the name. */
static char *divisor_name(Arena *ar, const IrKernel *k, int i) {
  char *name = arena_printf(ar, "__div%d", i);
  while (name_taken(k, name)) name = arena_printf(ar, "%s_", name);
  return name;
}

/* The hidden parameters, after the user's and before the workspaces'. */
static void add_params(Magic *M) {
  IrKernel *k = M->k;
  int user = k->nparams - k->nws, n = k->nparams + M->ndivs;
  IrParam **params = arena_alloc(M->ar, sizeof *params * (size_t)n);
  IrDivisor *divs = arena_alloc(M->ar, sizeof *divs * (size_t)M->ndivs);
  for (int i = 0; i < user; i++) params[i] = k->params[i];
  for (int i = 0; i < M->ndivs; i++) {
    IrParam *p = arena_alloc(M->ar, sizeof *p);
    p->name = divisor_name(M->ar, k, i);
    p->type = DT_UINT64;
    p->is_ptr = true;
    p->elem = DT_UINT64;
    params[user + i] = p;
    divs[i] = (IrDivisor){.param = p, .value = M->divisors[i]};
  }
  for (int i = 0; i < k->nws; i++) params[user + M->ndivs + i] = k->params[user + i];
  for (int i = 0; i < n; i++) params[i]->index = i;
  k->params = params;
  k->nparams = n;
  k->divs = divs;
  k->ndivs = M->ndivs;
}

typedef struct Site {
  const IrExpr *x;
  int div;
} Site;

static int by_address(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)((const Site *)a)->x, y = (uintptr_t)((const Site *)b)->x;
  return x < y ? -1 : x > y;
}

/* The sites sorted by address (ir_divisor_of's binary search), each with
 * its divisor. */
static void add_sites(Magic *M) {
  IrKernel *k = M->k;
  int n = M->nsites;
  Site *sorted = xmalloc(sizeof *sorted * (size_t)n);
  for (int i = 0; i < n; i++) sorted[i] = (Site){M->sites[i], M->site_of[i]};
  qsort(sorted, (size_t)n, sizeof *sorted, by_address);
  const IrExpr **sites = arena_alloc(M->ar, sizeof *sites * (size_t)n);
  int *of = arena_alloc(M->ar, sizeof *of * (size_t)n);
  for (int i = 0; i < n; i++) sites[i] = sorted[i].x, of[i] = sorted[i].div;
  free(sorted);
  k->div_sites = sites;
  k->div_site_of = of;
  k->ndiv_sites = n;
}

static void plan_kernel(Arena *ar, IrKernel *k) {
  if (k->ndivs || k->ndiv_sites) return; /* planned already */
  int n = k->nvars;
  Magic M = {.ar = ar, .k = k};
  M.writes = xmalloc(sizeof *M.writes * (size_t)(n + 1));
  memset(M.writes, 0, sizeof *M.writes * (size_t)(n + 1));
  M.state = xmalloc(sizeof *M.state * (size_t)(n + 1));
  memset(M.state, 0, sizeof *M.state * (size_t)(n + 1));
  M.value = xmalloc(sizeof *M.value * (size_t)(n + 1));
  M.texts = xmalloc(sizeof *M.texts * IR_MAX_DIVISORS);
  M.divisors = xmalloc(sizeof *M.divisors * IR_MAX_DIVISORS);
  collect(&M, &k->body);
  walk(&M, &k->body);
  if (M.ndivs) {
    add_params(&M);
    add_sites(&M);
  }
  for (int i = 0; i < n; i++) free(M.writes[i].values);
  for (int i = 0; i < M.ndivs; i++) free(M.texts[i]);
  free(M.writes);
  free(M.state);
  free(M.value);
  free(M.texts);
  free(M.divisors);
  free(M.sites);
  free(M.site_of);
  free(M.seen);
}

void ir_plan_divisors(IrModule *m) {
  for (int i = 0; i < m->nkernels; i++) plan_kernel(m->ar, m->kernels[i]);
}

const IrDivisor *ir_divisor_of(const IrKernel *k, const IrExpr *x) {
  int lo = 0, hi = k->ndiv_sites - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    if (k->div_sites[mid] == x) return &k->divs[k->div_site_of[mid]];
    if ((uintptr_t)k->div_sites[mid] < (uintptr_t)x)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return NULL;
}
