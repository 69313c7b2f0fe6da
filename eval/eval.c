/* eval.c: the evaluator's driver (eval_build). Runs the module's top level at
 * compile time (imports, class definitions, decorators), then builds one
 * kernel per selected autotune point of every tilus.Script class:
 * instantiate the script (__init__ with the point's values), then inline
 * __call__ with its run-time parameters into a fresh IrKernel. */
#include <stdlib.h>
#include <string.h>

#include "eval/eval_int.h"

enum { EV_MAX_POINTS = 4096 }; /* autotune points of one script */

static ClassDef *builtin_class(Eval *E, ClassKind ck, const char *name) {
  ClassDef *c = arena_alloc(E->ar, sizeof(ClassDef));
  c->ck = ck;
  c->name = name;
  c->is_script = ck == CK_SCRIPT_BASE;
  return c;
}

/* tilus.NAME: the base classes, autotune, dtypes and type names. */
Value *ev_tilus_attr(Eval *E, const char *name, Span sp) {
  static const char *type_names[] = {"RegisterTensor", "SharedTensor", "GlobalTensor", "Tensor"};
  DType dt;
  Value *v;
  if (strcmp(name, "Script") == 0 || strcmp(name, "Class") == 0) {
    v = v_new(E, V_CLASS);
    v->cls = builtin_class(E, name[0] == 'S' ? CK_SCRIPT_BASE : CK_CLASS_BASE,
                           name[0] == 'S' ? "tilus.Script" : "tilus.Class");
    return v;
  }
  if (strcmp(name, "autotune") == 0) return v_builtin(E, B_AUTOTUNE, NULL);
  if (strcmp(name, "cdiv") == 0) return v_builtin(E, B_CDIV, NULL);
  if (strcmp(name, "boolean") == 0) name = "bool";
  if (dtype_from_name(name, &dt)) {
    v = v_new(E, V_DTYPE);
    v->dt = dt;
    return v;
  }
  for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
    if (strcmp(name, type_names[i]) == 0) {
      v = v_new(E, V_CLASS);
      v->cls = builtin_class(E, CK_CLASS_BASE, type_names[i]);
      return v;
    }
  ev_error(E, sp, "module 'tilus' has no attribute '%s'", name);
}

Value *ev_eval_annotation(Eval *E, Node *ann) { return ev_eval_expr(E, ann); }

DType ev_annotation_rt_type(const Value *ann) {
  if (ann->kind == V_DTYPE) return ann->dt;
  if (ann->kind == V_BUILTIN && ann->bi == B_BOOL) return DT_BOOL;
  return DT_VOID;
}

static bool is_tilus_module(const char *name) {
  return strcmp(name, "tilus") == 0 || strncmp(name, "tilus.", 6) == 0;
}

/* import tilus [as t] / from tilus[.x] import a, b */
static void exec_import(Eval *E, Node *s) {
  if (!is_tilus_module(s->str))
    ev_error(E, s->span,
             "module '%s' is not available (tlsc knows only "
             "tilus)",
             s->str);
  if (s->kind == N_IMPORT) {
    ev_dict_set(E, &E->globals, s->name ? s->name : "tilus", v_new(E, V_MODULE));
    return;
  }
  for (int i = 0; i < s->list.len; i++) {
    Node *n = s->list.items[i];
    if (n->ival == 1)
      ev_error(E, n->span,
               "'from tilus import *' is not supported yet; "
               "name what you import");
    ev_dict_set(E, &E->globals, n->name, ev_tilus_attr(E, n->name, n->span));
  }
}

/* "a, b" -> names; values -> rows of compile-time ints. */
static Autotune *parse_autotune(Eval *E, Value *dec, Span sp) {
  Autotune *at = arena_alloc(E->ar, sizeof(Autotune));
  const char *p = dec->s;
  at->names = arena_alloc(E->ar, sizeof(char *) * (strlen(p) / 2 + 2));
  while (*p) {
    while (*p == ' ' || *p == ',') p++;
    const char *q = p;
    while (*q && *q != ',' && *q != ' ') q++;
    if (q > p) at->names[at->nnames++] = arena_strndup(E->ar, p, (size_t)(q - p));
    p = q;
  }
  if (at->nnames == 0) ev_error(E, sp, "autotune() needs at least one name");
  Value *vals = dec->self;
  at->npoints = vals->n;
  at->points = arena_alloc(E->ar, sizeof(int64_t *) * (vals->n + 1));
  for (int i = 0; i < vals->n; i++) {
    Value *row = vals->items[i];
    bool seq = row->kind == V_LIST || row->kind == V_TUPLE;
    if (at->nnames > 1 && (!seq || row->n != at->nnames))
      ev_error(E, sp, "autotune() value %d must be a list of %d values", i, at->nnames);
    at->points[i] = arena_alloc(E->ar, sizeof(int64_t) * at->nnames);
    for (int j = 0; j < at->nnames; j++) {
      Value *x = at->nnames > 1 ? row->items[j] : row;
      if (x->kind != V_INT && x->kind != V_BOOL)
        ev_error(E, sp,
                 "autotune values must be compile-time integers, not "
                 "'%s'",
                 v_type_name(x));
      at->points[i][j] = x->i;
    }
  }
  if (at->npoints == 0) ev_error(E, sp, "autotune() needs at least one value");
  return at;
}

static bool class_has_tune(const ClassDef *c, const char *name) {
  for (int t = 0; t < c->ntunes; t++)
    for (int j = 0; j < c->tunes[t]->nnames; j++)
      if (strcmp(c->tunes[t]->names[j], name) == 0) return true;
  return false;
}

/* class Name(base): methods and compile-time class attributes. */
static void exec_class(Eval *E, Node *s) {
  ClassDef *c = arena_alloc(E->ar, sizeof(ClassDef));
  c->ck = CK_USER;
  c->name = s->name;
  c->node = s;
  if (s->list.len > 1)
    ev_error(E, s->list.items[1]->span,
             "multiple base classes are not "
             "supported yet");
  if (s->list.len == 1) {
    Value *b = ev_eval_expr(E, s->list.items[0]);
    if (b->kind != V_CLASS)
      ev_error(E, s->list.items[0]->span,
               "base class must be a class, not "
               "'%s'",
               v_type_name(b));
    c->base = b->cls;
    c->is_script = b->cls->is_script;
  }
  for (int i = 0; i < s->list2.len; i++) {
    Node *m = s->list2.items[i];
    if (m->kind == N_DEF) {
      if (m->list3.len)
        ev_error(E, m->list3.items[0]->span,
                 "decorators on methods are not "
                 "supported yet");
      Value *f = v_new(E, V_FUNC);
      f->fn = m;
      f->cls = c;
      ev_dict_set(E, &c->members, m->name, f);
    } else if (m->kind == N_ASSIGN && m->list.len == 1 && m->list.items[0]->kind == N_NAME) {
      ev_dict_set(E, &c->members, m->list.items[0]->name, ev_eval_expr(E, m->a));
    } else if (m->kind != N_PASS && m->kind != N_EXPR_STMT) {
      ev_error(E, m->span,
               "only methods and constant attributes may appear "
               "in a class body");
    }
  }
  c->tunes = arena_alloc(E->ar, sizeof(Autotune *) * (s->list3.len + 1));
  for (int i = 0; i < s->list3.len; i++) {
    Node *dn = s->list3.items[i];
    Value *dec = ev_eval_expr(E, dn);
    if (dec->kind != V_NS || dec->bi != B_AUTOTUNE)
      ev_error(E, dn->span, "only @tilus.autotune(...) can decorate a class");
    if (!c->is_script)
      ev_error(E, dn->span,
               "@tilus.autotune decorates tilus.Script classes "
               "only");
    Autotune *at = parse_autotune(E, dec, dn->span);
    for (int j = 0; j < at->nnames; j++)
      if (class_has_tune(c, at->names[j]))
        ev_error(E, dn->span, "autotune name '%s' appears twice", at->names[j]);
    c->tunes[c->ntunes++] = at;
  }
  ClassDef **all = arena_alloc(E->ar, sizeof(ClassDef *) * (E->nclasses + 1));
  if (E->nclasses) memcpy(all, E->classes, sizeof(ClassDef *) * E->nclasses);
  all[E->nclasses++] = c;
  E->classes = all;
  Value *cv = v_new(E, V_CLASS);
  cv->cls = c;
  ev_dict_set(E, &E->globals, s->name, cv);
}

static void exec_module(Eval *E, const Node *module) {
  for (int i = 0; i < module->list.len; i++) {
    Node *s = module->list.items[i];
    switch (s->kind) {
    case N_IMPORT:
    case N_FROM_IMPORT:
      exec_import(E, s);
      break;
    case N_CLASS:
      exec_class(E, s);
      break;
    case N_DEF: {
      if (s->list3.len)
        ev_error(E, s->list3.items[0]->span,
                 "decorators on functions are "
                 "not supported yet");
      Value *f = v_new(E, V_FUNC);
      f->fn = s;
      ev_dict_set(E, &E->globals, s->name, f);
      break;
    }
    default:
      if (ev_exec_stmt(E, s) == C_RETURN) ev_error(E, s->span, "'return' outside function");
    }
  }
}

/* ------------------------------------------------------------ kernels */

static EvalDefine *find_define(Eval *E, const char *name) {
  for (int i = 0; i < E->ndefs; i++)
    if (strcmp(E->defs[i].name, name) == 0) return &E->defs[i];
  return NULL;
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
    return prm;
  }
  if (ann->kind == V_BUILTIN && ann->bi == B_INT) {
    EvalDefine *d = find_define(E, p->name);
    if (d) {
      d->used = true;
      *fixed = v_int(E, d->value);
    }
    prm->type = DT_INT32;
    return prm;
  }
  DType t = ev_annotation_rt_type(ann);
  if (t == DT_VOID || t == DT_FLOAT16 || t == DT_BFLOAT16)
    ev_error(E, p->a->span,
             "unsupported kernel parameter type for '%s' "
             "(int32, uint32, int64, uint64, float32, float64, "
             "bool, int or ~dtype)",
             p->name);
  prm->type = t;
  return prm;
}

static char *entry_name(Eval *E, ClassDef *c, int n, const int64_t *vals, bool single) {
  if (single) return (char *)c->name;
  char *s = arena_printf(E->ar, "%s_", c->name);
  for (int i = 0; i < n; i++)
    s = arena_printf(E->ar, "%s_%s%lld", s, vals[i] < 0 ? "m" : "",
                     (long long)(vals[i] < 0 ? -vals[i] : vals[i]));
  return s;
}

/* The fixed `int` parameters of a kernel travel in its config arrays, after
 * the autotune names, as entries named "fixed NAME" (an autotune name never
 * holds a space): `--emit=ir` prints them in the config, the PTX backend
 * writes them on the entry's `fixed` metadata line (docs/format.md), and the
 * driver names specialised entries after them. Each value must fit the
 * int32 that the entry still takes as that parameter; checked after the
 * body, so that errors the value causes inside it come first. */
static void set_config(Eval *E, IrKernel *k, int n, const char **names, const int64_t *vals,
                       int nfixed, Node **fixed_nodes, const int64_t *fixed_vals) {
  k->nconfig = n + nfixed;
  k->config_names = (char **)names;
  k->config_values = (int64_t *)vals;
  if (!nfixed) return;
  k->config_names = arena_alloc(E->ar, sizeof(char *) * (size_t)(n + nfixed + 1));
  k->config_values = arena_alloc(E->ar, sizeof(int64_t) * (size_t)(n + nfixed + 1));
  for (int i = 0; i < n; i++) {
    k->config_names[i] = (char *)names[i];
    k->config_values[i] = vals[i];
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

/* Instantiates the script for one point and inlines __call__. */
static IrKernel *build_kernel(Eval *E, ClassDef *c, int n, const char **names, const int64_t *vals,
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
  Span none = {0};

  Value *self = v_new(E, V_INST);
  self->inst = arena_alloc(E->ar, sizeof(Instance));
  self->inst->cls = c;
  Args init = {0};
  init.nkw = n;
  init.kw_name = names;
  init.kw = arena_alloc(E->ar, sizeof(Value *) * (n + 1));
  init.kw_span = arena_alloc(E->ar, sizeof(Span) * (n + 1));
  for (int i = 0; i < n; i++) {
    init.kw[i] = v_int(E, vals[i]);
    init.kw_span[i] = c->node->span;
  }
  Value *initf = ev_find_member(c, "__init__");
  if (initf && initf->kind == V_FUNC)
    ev_call_user(E, initf->fn, self, &init, none);
  else if (n)
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
  set_config(E, k, n, names, vals, nfixed, fixed_nodes, fixed_vals);
  return k;
}

static void add_kernel(Eval *E, IrModule *m, IrKernel *k) {
  IrKernel **ks = arena_alloc(E->ar, sizeof(IrKernel *) * (m->nkernels + 1));
  if (m->nkernels) memcpy(ks, m->kernels, sizeof(IrKernel *) * m->nkernels);
  ks[m->nkernels++] = k;
  m->kernels = ks;
}

/* A decorator whose every name is fixed by -D to values that none of its
 * points has is replaced by that one point: `-D num_stages=2` builds the
 * 2-stage variant of a script that lists only [4] (the seed's depth table).
 * When some point matches, -D only selects, below. */
static Autotune *override_tune(Eval *E, Autotune *at) {
  int64_t *want = arena_alloc(E->ar, sizeof(int64_t) * (at->nnames + 1));
  for (int i = 0; i < at->nnames; i++) {
    EvalDefine *d = find_define(E, at->names[i]);
    if (!d) return at;
    want[i] = d->value;
  }
  for (int p = 0; p < at->npoints; p++)
    if (!memcmp(at->points[p], want, sizeof(int64_t) * at->nnames)) return at;
  Autotune *fixed = arena_alloc(E->ar, sizeof(Autotune));
  *fixed = *at;
  fixed->npoints = 1;
  fixed->points = arena_alloc(E->ar, sizeof(int64_t *));
  fixed->points[0] = want;
  return fixed;
}

/* The cross product of the autotune decorators (outermost varies slowest),
 * filtered by -D; one kernel per point. */
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
  int kept = 0;
  bool filtered = false;
  for (int64_t p = 0; p < total; p++) {
    int64_t *vals = arena_alloc(E->ar, sizeof(int64_t) * (n + 1));
    int64_t rest = p;
    for (int t = c->ntunes - 1, j = n; t >= 0; t--) {
      Autotune *at = c->tunes[t];
      int64_t *row = at->points[rest % at->npoints];
      rest /= at->npoints;
      j -= at->nnames;
      memcpy(vals + j, row, sizeof(int64_t) * at->nnames);
    }
    bool keep = true;
    for (int j = 0; j < n; j++) {
      EvalDefine *d = find_define(E, names[j]);
      if (d) {
        d->used = true;
        filtered = true;
        keep = keep && d->value == vals[j];
      }
    }
    if (!keep) continue;
    kept++;
    add_kernel(E, m, build_kernel(E, c, n, names, vals, total == 1));
  }
  if (kept == 0 && filtered)
    ev_error(E, c->node->span,
             "no autotune point of '%s' matches the -D "
             "values",
             c->name);
}

static bool has_subclass(Eval *E, ClassDef *c) {
  for (int i = 0; i < E->nclasses; i++)
    if (E->classes[i]->base == c) return true;
  return false;
}

static void build_all(Eval *E, IrModule *m) {
  for (int i = 0; i < E->nclasses; i++) {
    ClassDef *c = E->classes[i];
    if (!c->is_script) continue;
    Value *call = ev_find_member(c, "__call__");
    if (!call || call->kind != V_FUNC) {
      if (has_subclass(E, c)) continue;
      ev_error(E, c->node->span,
               "'%s' derives from tilus.Script but defines "
               "no __call__",
               c->name);
    }
    build_script(E, m, c);
  }
}

/* -D names must name an autotune parameter or an `int` kernel parameter. */
static bool check_defines(Eval *E) {
  bool ok = true;
  for (int i = 0; i < E->ndefs; i++) {
    if (E->defs[i].used) continue;
    bool known = false;
    for (int j = 0; j < E->nclasses && !known; j++)
      known = class_has_tune(E->classes[j], E->defs[i].name);
    if (!known) {
      diag_plain_error(E->d, "unknown -D name '%s'", E->defs[i].name);
      ok = false;
    }
  }
  return ok;
}

IrModule *eval_build(Arena *ar, const Node *module, const Source *src, EvalDefine *defs, int ndefs,
                     Diag *d) {
  Eval *E = xmalloc(sizeof(Eval));
  memset(E, 0, sizeof(Eval));
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
    exec_module(E, module);
    build_all(E, m);
    if (check_defines(E)) {
      if (m->nkernels == 0)
        diag_plain_error(d, "no kernel: the file defines no tilus.Script "
                            "class");
      else
        result = m;
    }
  }
  free(E);
  return result;
}
