/* eval_call.c: calls. User functions and methods are inlined: each call runs
 * the body in a fresh local scope with the parameters bound, and the call
 * site is pushed on the frame stack so that errors inside print
 * "note: in call from here" for each call, innermost first. */
#include <string.h>

#include "eval/eval_int.h"

/* A member of a class or of one of its user base classes. */
Value *ev_find_member(ClassDef *c, const char *name) {
  for (; c && c->ck == CK_USER; c = c->base) {
    Slot *s = ev_dict_find(&c->members, name);
    if (s) return s->val;
  }
  return NULL;
}

/* Matches arguments to the parameter names of a builtin or primitive:
 * out[i] is the value for names[i] or NULL; the first nreq are required. */
bool ev_bind_args(Eval *E, Args *a, Span sp, const char *fname, const char *const *names, int nreq,
                  Value **out) {
  int n = 0;
  while (names[n]) n++;
  if (a->npos > n)
    ev_error(E, sp, "%s() takes %d positional argument%s but %d %s given", fname, n,
             n == 1 ? "" : "s", a->npos, a->npos == 1 ? "was" : "were");
  for (int i = 0; i < n; i++) out[i] = i < a->npos ? a->pos[i] : NULL;
  for (int k = 0; k < a->nkw; k++) {
    int i = 0;
    while (i < n && strcmp(names[i], a->kw_name[k]) != 0) i++;
    if (i == n)
      ev_error(E, a->kw_span[k],
               "%s() got an unexpected keyword argument "
               "'%s'",
               fname, a->kw_name[k]);
    if (out[i])
      ev_error(E, a->kw_span[k],
               "%s() got multiple values for argument "
               "'%s'",
               fname, names[i]);
    out[i] = a->kw[k];
  }
  for (int i = 0; i < nreq; i++)
    if (!out[i]) ev_error(E, sp, "%s() missing argument '%s'", fname, names[i]);
  return true;
}

Span ev_arg_span(const Args *a, const char *const *names, int i, Span sp) {
  if (i < a->npos) return a->pos_span[i];
  for (int k = 0; k < a->nkw; k++)
    if (strcmp(a->kw_name[k], names[i]) == 0) return a->kw_span[k];
  return sp;
}

/* The value a parameter receives: the argument converted to the run-time
 * type its annotation names (linear_idx: int32), or as it is. */
static Value *param_value(Eval *E, Node *p, Value *v, Span sp) {
  if (!p->a) return v;
  DType t = ev_annotation_rt_type(ev_eval_annotation(E, p->a));
  if (t == DT_VOID) return v;
  ev_check_compute_dtype(E, t, sp, "a scalar of");
  if (!v_is_scalar(v))
    ev_error(E, sp, "argument '%s' must be %s, not '%s'", p->name, dtype_name(t), v_type_name(v));
  return v_expr(E, ev_scalar_as(E, v, t, sp));
}

static void bind_param(Eval *E, Node *p, Value *v, Span sp) {
  v = param_value(E, p, v, sp);
  Slot *s = ev_dict_set(E, E->frame->locals, p->name, NULL);
  ev_bind_slot(E, s, v, DT_VOID, sp);
}

/* Binds self and the arguments of a call to the parameters of def, Python's
 * rules: positional, then keywords, then defaults; *args collects extra
 * positional arguments, **kwargs extra keywords; keyword-only parameters
 * (after * or *args) take keywords only, positional-only ones (before /)
 * positions only. */
static void bind_params(Eval *E, Node *def, Value *self, Args *a, Span sp) {
  NodeList *ps = &def->list;
  const char *fname = def->kind == N_LAMBDA ? "<lambda>" : def->name;
  int npos = 0, first = 0;
  Node *star = NULL, *dstar = NULL;
  for (int i = 0; i < ps->len; i++) {
    Node *p = ps->items[i];
    if (p->op == '*')
      star = p;
    else if (p->op == TOK_POW)
      dstar = p;
    else if (!(p->ival & PARAM_KWONLY))
      npos++;
  }
  Value **vals = arena_alloc(E->ar, sizeof(Value *) * (ps->len + 1));
  Span *spans = arena_alloc(E->ar, sizeof(Span) * (ps->len + 1));
  Value *kwargs = dstar ? v_dict(E) : NULL;
  if (self) {
    if (npos == 0) ev_error(E, sp, "%s() takes 0 positional arguments but 1 was given", fname);
    vals[0] = self;
    spans[0] = sp;
    first = 1;
  }
  int given = a->npos + first;
  if (given > npos && !star)
    ev_error(E, sp, "%s() takes %d positional argument%s but %d %s given", fname, npos,
             npos == 1 ? "" : "s", given, given == 1 ? "was" : "were");
  for (int i = 0; i < a->npos && first + i < npos; i++) {
    vals[first + i] = a->pos[i];
    spans[first + i] = a->pos_span[i];
  }
  for (int k = 0; k < a->nkw; k++) {
    int i = 0;
    while (i < ps->len && (ps->items[i]->op || (ps->items[i]->ival & PARAM_POSONLY) ||
                           strcmp(ps->items[i]->name, a->kw_name[k]) != 0))
      i++;
    if (i == ps->len && kwargs) {
      ev_dict_put(E, kwargs, v_str(E, a->kw_name[k]), a->kw[k], a->kw_span[k]);
      continue;
    }
    if (i == ps->len)
      ev_error(E, a->kw_span[k],
               "%s() got an unexpected keyword argument "
               "'%s'",
               fname, a->kw_name[k]);
    if (vals[i])
      ev_error(E, a->kw_span[k], "%s() got multiple values for argument '%s'", fname,
               a->kw_name[k]);
    vals[i] = a->kw[k];
    spans[i] = a->kw_span[k];
  }
  for (int i = 0; i < ps->len; i++) {
    Node *p = ps->items[i];
    if (p->op == '*') {
      int extra = given > npos ? given - npos : 0;
      ev_charge(E, extra / 8, sp);
      Value *t = v_seq(E, V_TUPLE, extra);
      for (int j = 0; j < extra; j++) t->items[j] = a->pos[a->npos - extra + j];
      ev_dict_set(E, E->frame->locals, p->name, t);
      continue;
    }
    if (p->op == TOK_POW) {
      ev_dict_set(E, E->frame->locals, p->name, kwargs);
      continue;
    }
    if (i == 0 && self) {
      ev_dict_set(E, E->frame->locals, p->name, self);
      continue;
    }
    if (!vals[i] && p->b) {
      vals[i] = ev_eval_expr(E, p->b);
      spans[i] = p->b->span;
    }
    if (!vals[i]) ev_error(E, sp, "%s() missing argument '%s'", fname, p->name);
    bind_param(E, p, vals[i], spans[i]);
  }
}

/* A returned value whose variables were locals of the finished call: no
 * other slot can change them any more, so the caller's binding may adopt
 * them instead of copying (m_block, n_block = self.coord(...)). */
static Value *mark_owned(Eval *E, Value *v, Dict *locals, int depth) {
  /* a few levels are enough (a, (b, c)); deeper tuples are returned as they
   * are (their variables get copied): a 300000-deep tuple must not recurse,
   * nor a 2**20-item one be copied at every return */
  if (v->kind == V_TUPLE && depth < 4 && v->n <= 64) {
    Value *t = v_seq(E, V_TUPLE, v->n);
    for (int i = 0; i < v->n; i++) t->items[i] = mark_owned(E, v->items[i], locals, depth + 1);
    return t;
  }
  if (v->kind != V_EXPR || v->x->kind != X_VAR) return v;
  for (int i = 0; i < locals->len; i++)
    if (locals->items[i].var == v->x->var) {
      Value *o = v_expr(E, v->x);
      o->owned = true;
      return o;
    }
  return v;
}

/* The class of a method: self's class or the base whose body defines def
 * (for super(), which searches the bases after it). */
static ClassDef *defining_class(Value *self, Node *def) {
  if (!self || self->kind != V_INST) return NULL;
  for (ClassDef *c = self->inst->cls; c && c->ck == CK_USER; c = c->base) {
    Slot *s = ev_dict_find(&c->members, def->name);
    if (s && s->val && s->val->kind == V_FUNC && s->val->fn == def) return c;
  }
  return NULL;
}

Value *ev_func_here(Eval *E, Node *def, ClassDef *cls) {
  Value *f = v_new(E, V_FUNC);
  f->fn = def;
  f->cls = cls;
  if (E->frame) {
    f->env = arena_alloc(E->ar, sizeof(Env));
    f->env->d = E->frame->locals;
    f->env->up = E->frame->env;
  }
  return f;
}

static Value *call_def(Eval *E, Node *def, Env *env, Value *self, Args *a, Span sp);

/* Inlines def at the call site sp. */
Value *ev_call_user(Eval *E, Node *def, Value *self, Args *a, Span sp) {
  return call_def(E, def, NULL, self, a, sp);
}

/* Inlines def (a def or a lambda) at the call site sp, inside the scopes
 * env. */
static Value *call_def(Eval *E, Node *def, Env *env, Value *self, Args *a, Span sp) {
  if (E->depth >= EV_MAX_CALL_DEPTH)
    ev_error(E, sp,
             "calls nested more than %d deep (recursion is not "
             "supported)",
             EV_MAX_CALL_DEPTH);
  /* Python would return a coroutine object, which nothing in a kernel
   * can await: refused rather than run as a plain function. */
  if (def->kind == N_DEF && def->op == TOK_ASYNC)
    ev_error(E, sp,
             "'%s' is an async def: calling it makes a coroutine, which tlsc does not support",
             def->name);
  Frame f = {0};
  f.up = E->frame;
  f.call_site = sp;
  f.has_site = sp.line > 0; /* calls the compiler makes have no site */
  f.locals = arena_alloc(E->ar, sizeof(Dict));
  f.rt_base = E->rt_depth;
  f.nest_base = E->nest;
  f.loops_base = E->rt_loops;
  f.entry = E->cur; /* guards after a run-time return end with the call */
  f.entry_len = E->cur ? E->cur->len : 0;
  f.cls = defining_class(self, def);
  f.self = self;
  f.env = env;
  int saved_kind = E->loop_kind;
  const char *saved_hint = E->hint;
  E->frame = &f;
  E->depth++;
  E->loop_kind = 0;
  E->hint = NULL;
  f.has_site = false; /* argument errors point at the call itself */
  bind_params(E, def, self, a, sp);
  f.has_site = sp.line > 0;
  if (def->kind == N_LAMBDA) {
    f.ret = ev_eval_expr(E, def->a);
    f.returned = true;
  } else {
    ev_exec_block(E, &def->list2);
  }
  E->cur = f.entry;
  E->frame = f.up;
  E->depth--;
  E->loop_kind = saved_kind;
  E->hint = saved_hint;
  return f.returned ? mark_owned(E, f.ret, f.locals, 0) : v_none(E);
}

/* ClassName(args): a new instance, __init__ inlined. */
Value *ev_instantiate(Eval *E, ClassDef *c, Args *a, Span sp) {
  if (c->ck != CK_USER)
    ev_error(E, sp, "cannot instantiate %s directly; derive a class from it", c->name);
  if (c->is_script)
    ev_error(E, sp,
             "a tilus.Script is instantiated by the compiler; '%s' "
             "cannot be called here",
             c->name);
  Value *v = v_new(E, V_INST);
  v->inst = arena_alloc(E->ar, sizeof(Instance));
  v->inst->cls = c;
  Value *init = ev_find_member(c, "__init__");
  if (init && init->kind == V_FUNC) {
    Value *r = ev_call_user(E, init->fn, v, a, sp);
    if (r->kind != V_NONE)
      ev_error(E, sp, "__init__() should return None, not '%s'", v_type_name(r));
  } else if (a->npos || a->nkw) {
    ev_error(E, sp, "%s() takes no arguments", c->name);
  }
  return v;
}

Value *ev_call_value(Eval *E, Value *fn, Args *a, Span sp) {
  switch (fn->kind) {
  case V_FUNC:
    return call_def(E, fn->fn, fn->env, NULL, a, sp);
  case V_BOUND:
    return ev_call_user(E, fn->fn, fn->self, a, sp);
  case V_CLASS:
    return ev_instantiate(E, fn->cls, a, sp);
  case V_BUILTIN:
    return ev_call_builtin(E, fn, a, sp);
  case V_HOST: /* host code at module level: no effect */
    return ev_host_derived(E, ev_host_use(E, fn, sp), "(...)");
  case V_UNSUP:
    ev_unsupported(E, fn, sp);
  case V_DTYPE: {
    ev_check_dtype(E, fn, sp);
    ev_check_compute_dtype(E, fn->dt, sp, "a scalar of");
    if (a->npos != 1 || a->nkw)
      ev_error(E, sp, "%s() takes exactly one argument", dtype_name(fn->dt));
    return v_expr(E, ev_scalar_as(E, a->pos[0], fn->dt, a->pos_span[0]));
  }
  default:
    ev_error(E, sp, "'%s' object is not callable", v_type_name(fn));
  }
}
