/* eval.c: the evaluator's driver (eval_build). Runs the module's top level at
 * compile time (eval_module.c), then builds one
 * kernel per selected autotune point of every tilus.Script class:
 * instantiate the script (__init__ with the point's values), then inline
 * __call__ with its run-time parameters into a fresh IrKernel. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval_int.h"

enum { EV_MAX_POINTS = 4096 }; /* autotune points of one script */

/* ------------------------------------------------------------ kernels */

/* The -D of name, or NULL. Only an __init__ parameter takes a word (a
 * dtype name): every other use needs an integer. */
static EvalDefine *find_define_any(Eval *E, const char *name) {
  for (int i = 0; i < E->ndefs; i++)
    if (strcmp(E->defs[i].name, name) == 0) return &E->defs[i];
  return NULL;
}

static EvalDefine *find_define(Eval *E, const char *name) {
  EvalDefine *d = find_define_any(E, name);
  if (d && d->word) {
    diag_plain_error(E->d, "-D %s=%s: '%s' needs an integer value", name, d->word, name);
    ev_error_quiet(E);
  }
  return d;
}

/* One kernel parameter from its annotation. An `int` parameter fixed by -D
 * (or by the driver for one --specialize combination) stays a parameter of
 * the entry, so that every entry of a script takes the same arguments, but
 * the body sees *fixed, its compile-time value. */
static IrParam *make_param(Eval *E, Node *p, int index, Value **fixed) {
  if (p->op) ev_error(E, p->span, "*args in __call__ is not supported");
  if (!p->a)
    ev_error(E, p->span,
             "parameter '%s' of __call__ needs a type annotation "
             "(int32, int, ~float16 ...)",
             p->name);
  if (p->b)
    ev_error(E, p->b->span,
             "default values of kernel parameters are not "
             "supported yet");
  Value *ann = ev_eval_annotation(E, p->a);
  IrParam *prm = arena_alloc(E->ar, sizeof(IrParam));
  prm->index = index;
  prm->name = p->name;
  if (ann->kind == V_PTRTYPE) {
    prm->is_ptr = true;
    prm->type = DT_UINT64;
    prm->elem = ann->dt;
    if (ann->dt == DT_VOID) { /* void_p: its global_view gives the element type */
      IrParam **vs = arena_alloc(E->ar, sizeof(IrParam *) * (size_t)(E->nvoid + 1));
      if (E->nvoid) memcpy(vs, E->void_params, sizeof(IrParam *) * (size_t)E->nvoid);
      vs[E->nvoid++] = prm;
      E->void_params = vs;
    }
    return prm;
  }
  if (ann->kind == V_BUILTIN && ann->bi == B_INT) {
    EvalDefine *d = find_define(E, p->name);
    if (d) {
      d->used = true;
      *fixed = v_int(E, d->value);
      (*fixed)->from_param = true;
    }
    prm->type = DT_INT32;
    return prm;
  }
  ev_check_dtype(E, ann, p->a->span);
  /* `eps: float` is a float32 (Tilus passes a Python float as one) */
  DType t = ann->kind == V_BUILTIN && ann->bi == B_FLOAT ? DT_FLOAT32 : ev_annotation_rt_type(ann);
  if (t == DT_VOID || t == DT_FLOAT16 || t == DT_BFLOAT16 || dtype_is_storage(t))
    ev_error(E, p->a->span,
             "unsupported kernel parameter type for '%s' "
             "(int32, uint32, int64, uint64, float32, float64, "
             "bool, int, float or ~dtype)",
             p->name);
  EvalDefine *d = t == DT_BOOL ? find_define(E, p->name) : NULL;
  if (d) { /* -D flag=1: a compile-time True in the body, as for `int` */
    if (d->value != 0 && d->value != 1)
      ev_error(E, p->span, "-D %s=%lld: a bool parameter takes 0 or 1", p->name,
               (long long)d->value);
    d->used = true;
    *fixed = v_bool(E, d->value != 0);
  }
  prm->type = t;
  return prm;
}

bool ev_is_void_param(const Eval *E, const IrParam *p) {
  for (int i = 0; i < E->nvoid; i++)
    if (E->void_params[i] == p) return true;
  return false;
}

static char *entry_name(Eval *E, ClassDef *c, int n, Value *const *vals, bool single) {
  if (single) return (char *)c->name;
  char *s = arena_printf(E->ar, "%s_", c->name);
  for (int i = 0; i < n; i++) s = arena_printf(E->ar, "%s_%s", s, ev_tune_name(E, vals[i]));
  return s;
}

/* The fixed `int` parameters of a kernel travel in its config arrays, after
 * the autotune names, as entries named "fixed NAME" (an autotune name never
 * holds a space): `--emit=ir` prints them in the config, the PTX backend
 * writes them on the entry's `fixed` metadata line (docs/format.md), and the
 * driver names specialised entries after them. Each value must fit the
 * int32 that the entry still takes as that parameter; checked after the
 * body, so that errors the value causes inside it come first. */
static void set_config(Eval *E, IrKernel *k, int n, const char **names, Value *const *vals,
                       int nfixed, Node **fixed_nodes, const int64_t *fixed_vals) {
  k->nconfig = n + nfixed;
  k->config_names = arena_alloc(E->ar, sizeof(char *) * (size_t)(n + nfixed + 1));
  k->config_values = arena_alloc(E->ar, sizeof(int64_t) * (size_t)(n + nfixed + 1));
  k->config_texts = arena_alloc(E->ar, sizeof(char *) * (size_t)(n + nfixed + 1));
  for (int i = 0; i < n; i++) { /* an int by its value, any other by its text */
    k->config_names[i] = (char *)names[i];
    if (vals[i]->kind == V_INT)
      k->config_values[i] = vals[i]->i;
    else
      k->config_texts[i] = (char *)ev_tune_text(E, vals[i]);
  }
  for (int i = 0; i < nfixed; i++) {
    Node *p = fixed_nodes[i];
    if (fixed_vals[i] < INT32_MIN || fixed_vals[i] > INT32_MAX)
      ev_error(E, p->span,
               "-D %s=%lld does not fit in int32: an `int` parameter fixed by -D is still an "
               "int32 parameter of the entry",
               p->name, (long long)fixed_vals[i]);
    k->config_names[n + i] = arena_printf(E->ar, "fixed %s", p->name);
    k->config_values[n + i] = fixed_vals[i];
  }
}

/* A fresh copy of an autotune value's lists: each instantiation gets its
 * own, as each trial build of a point must see the same value even when
 * __init__ assigns to an item. */
static Value *copy_value(Eval *E, Value *v) {
  if (v->kind != V_LIST && v->kind != V_TUPLE) return v;
  Value *c = v_seq(E, v->kind, v->n);
  for (int i = 0; i < v->n; i++) c->items[i] = copy_value(E, v->items[i]);
  return c;
}

/* Whether __init__ of class c (or of a base) has a parameter `name`. */
static bool init_has_param(ClassDef *c, const char *name) {
  Value *f = ev_find_member(c, "__init__");
  if (!f || f->kind != V_FUNC) return false;
  for (int i = 1; i < f->fn->list.len; i++)
    if (!f->fn->list.items[i]->op && strcmp(f->fn->list.items[i]->name, name) == 0) return true;
  return false;
}

/* The value -D NAME=TEXT gives the __init__ parameter p: a dtype, or a
 * Python literal as Tilus's host code passes it (weight_tile=(16, 16),
 * scale=0.5, flag=True). */
static Value *define_init_value(Eval *E, EvalDefine *d, Node *p) {
  Value *v = ev_define_literal(E, d->word);
  if (v) return v;
  if (strspn(d->word, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
      strlen(d->word))
    ev_error(E, p->span, "-D %s=%s: '%s' is not a Tilus dtype name (float16, bfloat16, int32 ...)",
             d->name, d->word, d->word);
  ev_error(E, p->span,
           "-D %s=%s: '%s' is not a value tlsc reads (an integer, a float, True, False, None, a "
           "dtype name, a quoted string, or a list or tuple of them)",
           d->name, d->word, d->word);
}

/* The arguments of __init__: the autotune point, then its other parameters
 * from -D NAME=VALUE (Tilus passes them when the program instantiates the
 * script; tlsc compiles ahead of time): required without a default, and a
 * parameter with a default may be given too. */
static Args init_args(Eval *E, ClassDef *c, Node *init, int n, const char **names,
                      Value *const *vals) {
  int np = init ? init->list.len : 0;
  Args a = {0};
  a.kw_name = arena_alloc(E->ar, sizeof(char *) * (size_t)(n + np + 1));
  a.kw = arena_alloc(E->ar, sizeof(Value *) * (size_t)(n + np + 1));
  a.kw_span = arena_alloc(E->ar, sizeof(Span) * (size_t)(n + np + 1));
  for (int i = 0; i < n; i++) {
    a.kw_name[a.nkw] = names[i];
    a.kw_span[a.nkw] = c->node->span;
    a.kw[a.nkw++] = copy_value(E, vals[i]);
  }
  for (int i = 1; i < np; i++) {
    Node *p = init->list.items[i];
    bool tuned = false;
    for (int j = 0; j < n && !tuned; j++) tuned = strcmp(names[j], p->name) == 0;
    if (p->op || tuned) continue;
    EvalDefine *d = find_define_any(E, p->name);
    if (!d && p->b) continue;
    if (!d)
      ev_error(E, p->span,
               "__init__ parameter '%s' of '%s' is neither an autotune name nor has a default: "
               "give its value with -D %s=VALUE",
               p->name, c->name, p->name);
    d->used = true;
    a.kw_name[a.nkw] = p->name;
    a.kw_span[a.nkw] = p->span;
    a.kw[a.nkw++] = d->word ? define_init_value(E, d, p) : v_int(E, d->value);
  }
  return a;
}

/* Instantiates the script for one point and inlines __call__. */
static IrKernel *build_kernel(Eval *E, ClassDef *c, int n, const char **names, Value *const *vals,
                              bool single) {
  IrKernel *k = arena_alloc(E->ar, sizeof(IrKernel));
  Node *call = ev_find_member(c, "__call__")->fn;
  k->name = entry_name(E, c, n, vals, single);
  k->script = (char *)c->name;
  set_config(E, k, n, names, vals, 0, NULL, NULL);
  k->span = c->node->span;
  E->k = k;
  E->kernel_stmts = 0;
  E->cur = &k->body;
  E->rt_depth = 0;
  E->tg_begin = 0;
  E->tg_count = 0;
  E->tg_explicit = false;
  E->groups = NULL;
  E->rt_frames = NULL;
  E->nvoid = 0;
  Span none = {0};

  Value *self = v_new(E, V_INST);
  self->inst = arena_alloc(E->ar, sizeof(Instance));
  self->inst->cls = c;
  Value *initf = ev_find_member(c, "__init__");
  if (initf && initf->kind == V_FUNC) {
    Args init = init_args(E, c, initf->fn, n, names, vals);
    ev_call_user(E, initf->fn, self, &init, none);
  } else if (n)
    ev_error(E, c->node->span,
             "'%s' has autotune parameters but no "
             "__init__ to receive them",
             c->name);

  NodeList *ps = &call->list;
  Args args = {0};
  args.pos = arena_alloc(E->ar, sizeof(Value *) * (ps->len + 1));
  args.pos_span = arena_alloc(E->ar, sizeof(Span) * (ps->len + 1));
  k->params = arena_alloc(E->ar, sizeof(IrParam *) * (ps->len + 1));
  Node **fixed_nodes = arena_alloc(E->ar, sizeof(Node *) * (ps->len + 1));
  int64_t *fixed_vals = arena_alloc(E->ar, sizeof(int64_t) * (ps->len + 1));
  int nfixed = 0;
  if (ps->len == 0) ev_error(E, call->span, "__call__ needs a 'self' parameter");
  for (int i = 1; i < ps->len; i++) {
    Value *fixed = NULL;
    IrParam *p = make_param(E, ps->items[i], k->nparams, &fixed);
    k->params[k->nparams++] = p;
    args.pos_span[args.npos] = ps->items[i]->span;
    args.pos[args.npos++] = fixed ? fixed : v_expr(E, ir_param_ref(E->ar, p));
    if (fixed) {
      fixed_nodes[nfixed] = ps->items[i];
      fixed_vals[nfixed++] = fixed->i;
    }
  }
  Value *r = ev_call_user(E, call, self, &args, none);
  if (r->kind != V_NONE) ev_error(E, call->span, "__call__ of a kernel must not return a value");
  if (!k->grid[0]) ev_error(E, call->span, "kernel '%s' does not set self.attrs.blocks", c->name);
  if (!k->warps) ev_error(E, call->span, "kernel '%s' does not set self.attrs.warps", c->name);
  for (int i = 0; i < k->nparams; i++)
    if (k->params[i]->is_ptr && k->params[i]->elem == DT_VOID)
      ev_error(E, ps->items[i + 1]->span,
               "void_p parameter '%s' is never viewed: tlsc takes its element type from its "
               "self.global_view(...)",
               k->params[i]->name);
  set_config(E, k, n, names, vals, nfixed, fixed_nodes, fixed_vals);
  return k;
}

static void add_kernel(Eval *E, IrModule *m, IrKernel *k) {
  IrKernel **ks = arena_alloc(E->ar, sizeof(IrKernel *) * (m->nkernels + 1));
  if (m->nkernels) memcpy(ks, m->kernels, sizeof(IrKernel *) * m->nkernels);
  ks[m->nkernels++] = k;
  m->kernels = ks;
}

/* Whether every value of name j of a decorator is an int. */
static bool tune_all_ints(const Autotune *at, int j) {
  for (int p = 0; p < at->npoints; p++)
    if (at->points[p][j]->kind != V_INT) return false;
  return true;
}

/* A decorator of int values whose every name is fixed by -D to integers
 * that none of its points has is replaced by that one point: `-D
 * num_stages=2` builds the 2-stage variant of a script that lists only [4]
 * (the seed's depth table). When some point matches, -D only selects,
 * below. */
static Autotune *override_tune(Eval *E, Autotune *at) {
  Value **want = arena_alloc(E->ar, sizeof(Value *) * (at->nnames + 1));
  for (int i = 0; i < at->nnames; i++) {
    EvalDefine *d = find_define_any(E, at->names[i]);
    if (!d || d->word || !tune_all_ints(at, i)) return at;
    want[i] = v_int(E, d->value);
  }
  for (int p = 0; p < at->npoints; p++) {
    bool same = true;
    for (int i = 0; i < at->nnames; i++) same = same && at->points[p][i]->i == want[i]->i;
    if (same) return at;
  }
  Autotune *fixed = arena_alloc(E->ar, sizeof(Autotune));
  *fixed = *at;
  fixed->npoints = 1;
  fixed->points = arena_alloc(E->ar, sizeof(Value **));
  fixed->points[0] = want;
  return fixed;
}

/* "[1,4], [2,4]": the values of name j of a decorator, for messages. */
static const char *tune_values(Eval *E, const Autotune *at, int j) {
  const char *s = "";
  for (int p = 0; p < at->npoints; p++)
    s = arena_printf(E->ar, "%s%s%s", s, p ? ", " : "", ev_tune_text(E, at->points[p][j]));
  return s;
}

/* -D on an autotune name must select one of its values: a word for a name
 * of ints is refused as before; a value no point has, where the name's
 * values are not all ints, is an error that lists them (ints that no point
 * has replace the decorator's points, or match no point, as before). */
static void check_tune_defines(Eval *E, ClassDef *c) {
  for (int t = 0; t < c->ntunes; t++) {
    Autotune *at = c->tunes[t];
    for (int j = 0; j < at->nnames; j++) {
      EvalDefine *d = find_define_any(E, at->names[j]);
      if (!d) continue;
      if (d->word && tune_all_ints(at, j)) find_define(E, d->name); /* refuses the word */
      bool found = false;
      for (int p = 0; p < at->npoints && !found; p++)
        found = ev_define_selects(E, d, at->points[p][j]);
      if (found || (!d->word && tune_all_ints(at, j))) continue;
      ev_error(E, c->node->span,
               "-D %s=%s: no autotune point of '%s' has this value (its values: %s)", d->name,
               d->word ? d->word : arena_printf(E->ar, "%lld", (long long)d->value), c->name,
               tune_values(E, at, j));
    }
  }
}

/* "a=1 b=[1,4]": an autotune point's values. */
static char *point_text(Eval *E, int n, const char **names, Value *const *vals) {
  char *s = "";
  for (int i = 0; i < n; i++)
    s = arena_printf(E->ar, "%s%s%s=%s", s, i ? " " : "", names[i], ev_tune_text(E, vals[i]));
  return s;
}

/* Resets what an error in the middle of a kernel leaves behind. */
static void reset_point(Eval *E) {
  E->frame = NULL;
  E->depth = 0;
  E->k = NULL;
  E->cur = NULL;
  E->rt_depth = 0;
  E->loop_kind = 0;
  E->hint = NULL;
  E->in_annotation = 0;
  E->groups = NULL;
  E->rt_frames = NULL;
}

/* Whether one autotune point compiles: its kernel evaluated and put through
 * the passes on its own (a trial: the driver runs the passes on the module
 * once more, so the kernel kept is built again). Its diagnostics are kept in
 * *why instead of being printed, and its evaluation work is not counted. */
static bool try_point(Eval *E, ClassDef *c, int n, const char **names, Value *const *vals,
                      bool single, char **why, long *progress, const char **crowded) {
  Diag *d = E->d;
  FILE *saved_out = d->out;
  int saved_errors = d->nerrors;
  long saved_steps = E->steps;
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  if (!mem) return true; /* no memory for a trial: build it for real */
  d->out = mem;
  jmp_buf outer;
  memcpy(outer, E->fail, sizeof outer);
  volatile bool ok = false, built = false;
  if (setjmp(E->fail) == 0) {
    IrKernel *k = build_kernel(E, c, n, names, vals, single);
    built = true;
    IrModule one = {E->ar, E->src, &k, 1};
    ok = ir_run_passes(&one, d);
    *crowded = ok && k->crowded
                   ? arena_printf(E->ar, "%s:%d:%d: note: %s", E->src->path, k->crowded_span.line,
                                  k->crowded_span.col, k->crowded)
                   : NULL;
  }
  /* how far it got: the evaluation steps before its error, or past them
   * all when the evaluation finished and a pass refused the kernel */
  *progress = built ? LONG_MAX : E->steps - saved_steps;
  memcpy(E->fail, outer, sizeof outer);
  reset_point(E);
  E->steps = saved_steps;
  fclose(mem);
  d->out = saved_out;
  d->nerrors = saved_errors;
  *why = arena_strndup(E->ar, buf ? buf : "", len);
  free(buf);
  return ok;
}

/* The first line of a point's diagnostics, without a trailing newline. */
static const char *first_line(Eval *E, const char *text) {
  return arena_strndup(E->ar, text, strcspn(text, "\n"));
}

/* The values of point p of the cross product of c's decorators (outermost
 * varies slowest), n in all. */
static Value **point_values(Eval *E, ClassDef *c, int n, int64_t p) {
  Value **vals = arena_alloc(E->ar, sizeof(Value *) * (size_t)(n + 1));
  for (int t = c->ntunes - 1, j = n; t >= 0; t--) {
    Autotune *at = c->tunes[t];
    Value **row = at->points[p % at->npoints];
    p /= at->npoints;
    j -= at->nnames;
    memcpy(vals + j, row, sizeof(Value *) * (size_t)at->nnames);
  }
  return vals;
}

/* Whether the -D values select a point; *filtered when some -D names one
 * of its names. */
static bool point_selected(Eval *E, int n, const char **names, Value *const *vals, bool *filtered) {
  bool keep = true;
  for (int j = 0; j < n; j++) {
    EvalDefine *d = find_define_any(E, names[j]);
    if (d) {
      d->used = true;
      *filtered = true;
      keep = keep && ev_define_selects(E, d, vals[j]);
    }
  }
  return keep;
}

/* Tilus's `debug_schedule = dict(name=value, ...)` class attribute: when
 * set (a non-empty dict, inherited like any attribute), Tilus compiles that
 * one schedule instead of the autotune space, its values passed to
 * __init__ by name. The decorators give way to one point of those names. */
static void apply_debug_schedule(Eval *E, ClassDef *c) {
  Value *ds = ev_find_member(c, "debug_schedule");
  if (!ds || ds->kind == V_NONE || !v_truthy(E, ds, c->node->span)) return;
  if (ds->kind != V_DICT)
    ev_error(E, c->node->span,
             "debug_schedule of '%s' must be a dict of __init__ arguments, not '%s'", c->name,
             v_type_name(ds));
  Autotune *at = arena_alloc(E->ar, sizeof(Autotune));
  at->nnames = (int)ds->n;
  at->names = arena_alloc(E->ar, sizeof(char *) * (size_t)(ds->n + 1));
  at->npoints = 1;
  at->points = arena_alloc(E->ar, sizeof(Value **));
  at->points[0] = arena_alloc(E->ar, sizeof(Value *) * (size_t)(ds->n + 1));
  for (int i = 0; i < ds->n; i++) {
    Value *key = ds->items[2 * i];
    if (key->kind != V_STR)
      ev_error(E, c->node->span,
               "debug_schedule of '%s': its keys must be strings (names of "
               "__init__ parameters)",
               c->name);
    at->names[i] = key->s;
    at->points[0][i] = ds->items[2 * i + 1];
  }
  c->tunes = arena_alloc(E->ar, sizeof(Autotune *));
  c->tunes[0] = at;
  c->ntunes = 1;
}

/* The cross product of the autotune decorators (outermost varies slowest),
 * filtered by -D; one kernel per point. When several points are selected,
 * each is tried first: those that do not compile are skipped (a note says
 * how many, -v which and why), and the build fails only when none
 * compiles, with the first point's diagnostics and a note naming it. A
 * point that compiles but is crowded after a dot (IrKernel.crowded: ptxas
 * would likely spill) is skipped too, when some point is not crowded. */
static void build_script(Eval *E, IrModule *m, ClassDef *c) {
  int n = 0;
  int64_t total = 1;
  for (int t = 0; t < c->ntunes; t++) c->tunes[t] = override_tune(E, c->tunes[t]);
  for (int t = 0; t < c->ntunes; t++) {
    n += c->tunes[t]->nnames;
    total *= c->tunes[t]->npoints;
    if (total > EV_MAX_POINTS)
      ev_error(E, c->node->span,
               "the autotune space of '%s' has more than %d "
               "points",
               c->name, EV_MAX_POINTS);
  }
  const char **names = arena_alloc(E->ar, sizeof(char *) * (n + 1));
  for (int t = 0, j = 0; t < c->ntunes; t++)
    for (int i = 0; i < c->tunes[t]->nnames; i++) names[j++] = c->tunes[t]->names[i];
  check_tune_defines(E, c);
  int kept = 0, selected = 0;
  bool filtered = false;
  for (int64_t p = 0; p < total; p++) /* how many points -D selects */
    selected += point_selected(E, n, names, point_values(E, c, n, p), &filtered);
  int nskipped = 0;
  char **skip_why = arena_alloc(E->ar, sizeof(char *) * (size_t)(selected + 1));
  int furthest = 0; /* the skipped point whose error came latest */
  long most = -1;
  const char **skip_point = arena_alloc(E->ar, sizeof(char *) * (size_t)(selected + 1));
  /* per point: whether it failed its trial, and why it is crowded */
  bool *failed = arena_alloc(E->ar, sizeof(bool) * (size_t)(total + 1));
  const char **crowded = arena_alloc(E->ar, sizeof(char *) * (size_t)(total + 1));
  bool roomy = false; /* some point compiles and is not crowded */
  int ncrowded = 0;   /* points skipped as crowded */
  for (int64_t p = 0; p < total && selected > 1; p++) {
    Value **vals = point_values(E, c, n, p);
    if (!point_selected(E, n, names, vals, &filtered)) continue;
    char *why = NULL;
    long progress = 0;
    failed[p] = !try_point(E, c, n, names, vals, total == 1, &why, &progress, &crowded[p]);
    if (failed[p]) {
      if (progress > most) most = progress, furthest = nskipped;
      skip_point[nskipped] = point_text(E, n, names, vals);
      skip_why[nskipped++] = why;
    }
    roomy |= !failed[p] && !crowded[p];
  }
  for (int64_t p = 0; p < total; p++) {
    Value **vals = point_values(E, c, n, p);
    if (!point_selected(E, n, names, vals, &filtered) || failed[p]) continue;
    if (crowded[p] && roomy) {
      ncrowded++;
      skip_point[nskipped] = point_text(E, n, names, vals);
      skip_why[nskipped++] = arena_printf(E->ar, "%s\n", crowded[p]);
      continue;
    }
    kept++;
    add_kernel(E, m, build_kernel(E, c, n, names, vals, total == 1));
  }
  if (kept == 0 && filtered && nskipped == 0)
    ev_error(E, c->node->span,
             "no autotune point of '%s' matches the -D "
             "values",
             c->name);
  FILE *out = E->d->out;
  if (kept == 0 && nskipped) { /* none compiles: the errors of the one that got furthest */
    fputs(skip_why[furthest], out);
    fprintf(out, "tlsc: note: in autotune point %s of '%s'\n", skip_point[furthest], c->name);
    for (int i = 0; E->opt.verbose && i < nskipped; i++)
      if (i != furthest)
        fprintf(out, "tlsc: note: autotune point %s fails too: %s\n", skip_point[i],
                first_line(E, skip_why[i]));
    E->d->nerrors++;
    ev_error_quiet(E);
  }
  if (!nskipped || E->opt.quiet_skips) return;
  if (!E->opt.verbose && ncrowded) {
    fprintf(out,
            "tlsc: note: %d of the %d autotune points of '%s' are skipped: %d do not compile, "
            "%d would likely spill (tlsc -v lists them)\n",
            nskipped, selected, c->name, nskipped - ncrowded, ncrowded);
    return;
  }
  if (!E->opt.verbose) {
    fprintf(out,
            "tlsc: note: %d of the %d autotune points of '%s' do not compile and are skipped "
            "(tlsc -v lists them)\n",
            nskipped, selected, c->name);
    return;
  }
  for (int i = 0; i < nskipped; i++)
    fprintf(out, "tlsc: note: autotune point %s of '%s' skipped: %s\n", skip_point[i], c->name,
            first_line(E, skip_why[i]));
}

static bool has_subclass(Eval *E, ClassDef *c) {
  for (int i = 0; i < E->nclasses; i++)
    if (E->classes[i]->base == c) return true;
  return false;
}

/* Whether a function's body is a stub: `...` (after a docstring), Python's
 * idiom for a declaration without code. */
static bool is_stub(const Node *def) {
  const NodeList *b = &def->list2;
  int i = b->len > 1 && b->items[0]->kind == N_EXPR_STMT && b->items[0]->a->kind == N_STR;
  return b->len == i + 1 && b->items[i]->kind == N_EXPR_STMT && b->items[i]->a->kind == N_ELLIPSIS;
}

/* Whether c is a script to build: a tilus.Script with a __call__ (not a
 * stub: a template); a script without one that nothing derives from is an
 * error. */
static bool buildable(Eval *E, ClassDef *c) {
  if (!c->is_script) return false;
  Value *call = ev_find_member(c, "__call__");
  if (call && call->kind == V_FUNC && is_stub(call->fn)) return false; /* a template */
  if (!call || call->kind != V_FUNC) {
    if (has_subclass(E, c)) return false;
    ev_error(E, c->node->span, "'%s' derives from tilus.Script but defines no __call__", c->name);
  }
  return true;
}

/* Builds script c into m when it compiles; else keeps its diagnostics in
 * *why. A script without autotune space is tried first (evaluation and
 * passes, on a module of its own), then built; one with a space tries its
 * points itself and fails only when none compiles. */
static bool try_script(Eval *E, IrModule *m, ClassDef *c, char **why) {
  Diag *d = E->d;
  FILE *saved_out = d->out;
  int saved_errors = d->nerrors, saved_n = m->nkernels;
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  if (!mem) return build_script(E, m, c), true;
  d->out = mem;
  jmp_buf outer;
  memcpy(outer, E->fail, sizeof outer);
  volatile bool ok = false;
  if (setjmp(E->fail) == 0) {
    IrModule trial = {E->ar, E->src, NULL, 0};
    build_script(E, c->ntunes ? m : &trial, c);
    ok = c->ntunes || ir_run_passes(&trial, d);
  }
  memcpy(E->fail, outer, sizeof outer);
  reset_point(E);
  fclose(mem);
  d->out = saved_out;
  d->nerrors = saved_errors;
  *why = arena_strndup(E->ar, buf ? buf : "", len);
  free(buf);
  if (!ok) m->nkernels = saved_n;
  if (ok && !c->ntunes) build_script(E, m, c);
  return ok;
}

/* Every script of the file. Of several, those that do not compile are
 * skipped with a note, as Tilus compiles each script at its first call
 * (matmul_a16wx.py's QuantizedMatmulRestoreLayout, which its host code
 * never calls, fails in Tilus too); the build fails when none compiles. */
static void build_all(Eval *E, IrModule *m) {
  int nscripts = 0, nkept = 0;
  for (int i = 0; i < E->nclasses; i++) nscripts += buildable(E, E->classes[i]);
  char *first_why = NULL;
  for (int i = 0; i < E->nclasses; i++) {
    ClassDef *c = E->classes[i];
    if (!buildable(E, c)) continue;
    apply_debug_schedule(E, c);
    if (nscripts == 1) {
      build_script(E, m, c);
      continue;
    }
    char *why = NULL;
    if (try_script(E, m, c, &why)) {
      nkept++;
      continue;
    }
    if (!first_why) first_why = why;
    fprintf(E->d->out, "tlsc: note: script '%s' does not compile and is skipped: %s\n", c->name,
            first_line(E, why));
  }
  if (nscripts > 1 && nkept == 0) {
    fputs(first_why, E->d->out);
    E->d->nerrors++;
    ev_error_quiet(E);
  }
}

/* -D names must name an autotune parameter or an `int` kernel parameter. */
static bool check_defines(Eval *E) {
  bool ok = true;
  for (int i = 0; i < E->ndefs; i++) {
    if (E->defs[i].used) continue;
    bool known = false;
    for (int j = 0; j < E->nclasses && !known; j++)
      known = ev_class_has_tune(E->classes[j], E->defs[i].name) ||
              (E->classes[j]->is_script && init_has_param(E->classes[j], E->defs[i].name));
    if (!known) {
      diag_plain_error(E->d, "unknown -D name '%s'", E->defs[i].name);
      ok = false;
    }
  }
  return ok;
}

IrModule *eval_build(Arena *ar, const Node *module, const Source *src, EvalDefine *defs, int ndefs,
                     Diag *d) {
  return eval_build_with(ar, module, src, defs, ndefs, NULL, d);
}

IrModule *eval_build_with(Arena *ar, const Node *module, const Source *src, EvalDefine *defs,
                          int ndefs, const EvalOptions *opt, Diag *d) {
  Eval *E = xmalloc(sizeof(Eval));
  memset(E, 0, sizeof(Eval));
  if (opt) E->opt = *opt;
  E->ar = ar;
  E->d = d;
  E->src = src;
  E->defs = defs;
  E->ndefs = ndefs;
  IrModule *m = arena_alloc(ar, sizeof(IrModule));
  m->ar = ar;
  m->src = src;
  IrModule *result = NULL;
  if (setjmp(E->fail) == 0) {
    ev_exec_module(E, module);
    build_all(E, m);
    if (check_defines(E)) {
      /* Python imports a file of host code alone without complaint: so
       * does tlsc, with a warning, and an output that has no entry. */
      if (m->nkernels == 0)
        diag_plain_warning(d, "no kernel: the file defines no tilus.Script class with a "
                              "__call__; the output has no entry");
      result = m;
    }
  }
  free(E);
  return result;
}
