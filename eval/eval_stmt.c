/* eval_stmt.c: statements. Compile-time control flow (if on a constant,
 * for over a list or range()) is executed now; run-time control flow (if on
 * a run-time scalar, for over self.range()) becomes S_IF / S_FOR whose body
 * is evaluated once.
 *
 * Binding rules for run-time values (why: a name read inside a loop body
 * must see the value of the previous iteration, and a value captured from a
 * variable must not change when the variable does):
 *  - an annotated slot (x: int32 = 0) is an IrVar; later assignments emit
 *    S_ASSIGN to it;
 *  - a run-time value bound inside run-time control flow, one that reads a
 *    variable, or a tree of more than EV_MAX_EXPR_NODES nodes is copied
 *    into a fresh IrVar;
 *  - names assigned inside a run-time loop or branch that hold an expression
 *    tree are turned into IrVars before the loop or branch (prescan);
 *  - a compile-time slot created outside the run-time loop or branch cannot
 *    be assigned inside it (error: annotate it).
 */
#include <string.h>

#include "eval/eval_int.h"

Dict *ev_cur_scope(Eval *E) { return E->frame ? E->frame->locals : &E->globals; }

static bool names_have(const NodeList *l, const char *name) {
  for (int i = 0; l && i < l->len; i++)
    if (strcmp(l->items[i]->name, name) == 0) return true;
  return false;
}

Dict *ev_assign_scope(Eval *E, const char *name) {
  if (!E->frame) return &E->globals;
  if (names_have(E->frame->globals, name)) return &E->globals;
  if (names_have(E->frame->nonlocals, name))
    for (Env *e = E->frame->env; e; e = e->up)
      if (ev_dict_find(e->d, name)) return e->d;
  return E->frame->locals;
}

/* Appends s to the current block. A kernel whose evaluation alone emits
 * more statements than one may hold once unrolled stops here, at the user's
 * line, before building the rest (ir_check counts the unrolled total). */
void ev_emit(Eval *E, IrStmt *s) {
  if (E->k && ++E->kernel_stmts > IR_MAX_UNROLLED_STMTS)
    ev_error(E, s->span, "kernel '%s' has more than %d statements once its loops are unrolled",
             E->k->name, IR_MAX_UNROLLED_STMTS);
  ir_block_push(E->ar, E->cur, s);
}

static void emit_assign(Eval *E, IrVar *var, IrExpr *x, Span sp) {
  IrStmt *st = ir_stmt_new(E->ar, S_ASSIGN, sp);
  st->assign.var = var;
  st->assign.value = ev_expr_convert(E, x, var->type);
  ev_emit(E, st);
}

/* A fresh variable holding x now. */
static IrExpr *capture(Eval *E, const char *name, IrExpr *x, Span sp) {
  IrVar *v = ir_new_var(E->ar, E->k, name, x->type);
  emit_assign(E, v, x, sp);
  return ir_var_ref(E->ar, v);
}

Value *ev_rt_value(Eval *E, IrExpr *x, Span sp) {
  if (x->nodes > EV_MAX_EXPR_NODES && E->k && E->cur) x = capture(E, "expr", x, sp);
  return v_expr(E, x);
}

/* Copies the run-time indices of a view that read variables. */
static Value *capture_ref(Eval *E, const char *name, Value *v, Span sp) {
  Value *r = v_new(E, V_REF);
  r->ref = v->ref;
  for (int i = 0; i < r->ref.nidx; i++)
    if (ev_expr_uses_var(r->ref.idx[i]))
      r->ref.idx[i] = capture(E, arena_printf(E->ar, "%s_i%d", name, i), r->ref.idx[i], sp);
  return r;
}

/* A number known at compile time (rebinding one inside a run-time body
 * is checked by ev_rt_note_rebind). */
static bool is_ct_number(const Value *v) {
  int64_t c;
  return v_is_number(v) || (v->kind == V_EXPR && ir_is_const(v->x, &c));
}

/* Binds v to slot s (see the rules at the top of the file). ann is the
 * run-time dtype of an annotation, DT_VOID for none. */
void ev_bind_slot(Eval *E, Slot *s, Value *v, DType ann, Span sp) {
  int64_t c;
  if (v->kind == V_UNDEF) ev_error(E, sp, "value is not defined on every path");
  /* `alpha: float32 = self.exp(r)`: Python does not check annotations, and
   * Tilus binds a tensor to the name whatever its annotation says */
  if (ann != DT_VOID && v->kind == V_TENSOR) ann = DT_VOID;
  if (ann != DT_VOID && !E->k)
    ev_error(E, sp,
             "run-time variables ('%s: %s') exist only inside a "
             "kernel",
             s->name, dtype_name(ann));
  if (ann != DT_VOID) {
    ev_check_compute_dtype(E, ann, sp, "a scalar of");
    if (!v_is_scalar(v))
      ev_error(E, sp, "'%s' is annotated %s but the value is '%s'", s->name, dtype_name(ann),
               v_type_name(v));
    if (!s->var || s->var->type != ann) s->var = ir_new_var(E->ar, E->k, s->name, ann);
    emit_assign(E, s->var, ev_scalar_as(E, v, ann, sp), sp);
    s->val = v_expr(E, ir_var_ref(E->ar, s->var));
    return;
  }
  /* made outside this flow (a name without a value on every path, bound
   * in a branch of an earlier unrolled iteration, is bound afresh here) */
  bool inner = s->val && s->val->kind != V_UNDEF && s->depth < E->rt_depth;
  if (s->var && v_is_scalar(v)) {
    emit_assign(E, s->var, ev_scalar_as(E, v, s->var->type, sp), sp);
    return;
  }
  if (s->var && inner)
    ev_error(E, sp, "'%s' is a run-time %s variable and cannot hold '%s'", s->name,
             dtype_name(s->var->type), v_type_name(v));
  if (inner && s->val->kind == V_TENSOR && v->kind == V_TENSOR && s->val->t->space == MS_REGISTER &&
      v->t->space == MS_REGISTER) {
    /* acc = acc + x in a run-time loop: copy into the loop-carried tensor */
    IrTensor *dst = s->val->t, *src = v->t;
    if (dst->rank != src->rank || memcmp(dst->shape, src->shape, sizeof(int64_t) * dst->rank) != 0)
      ev_error(E, sp,
               "'%s' is a register tensor of another shape; it cannot "
               "be replaced in a run-time loop or branch",
               s->name);
    IrStmt *st = ir_stmt_new(E->ar, S_CAST, sp);
    st->cast.dst = dst;
    st->cast.src = src;
    ev_emit(E, st);
    return;
  }
  if (inner && s->val->kind == V_EXPR && !ir_is_const(s->val->x, &c))
    ev_error(E, sp,
             "'%s' holds a run-time value computed outside this loop "
             "or branch; annotate it (%s: int32 = ...)",
             s->name, s->name);
  if (inner &&
      !(is_ct_number(v) && is_ct_number(s->val) && ev_rt_note_rebind(E, s->name, s->val, sp)))
    ev_error(E, sp,
             "'%s' holds a compile-time value and cannot be assigned "
             "in a run-time loop or branch; annotate it (%s: int32 = "
             "...)",
             s->name, s->name);
  s->var = NULL;
  s->val = v;
  if (v->owned) { /* adopt the finished call's variable, once */
    v->owned = false;
    s->var = v->x->var;
  } else if (v->kind == V_EXPR && !ir_is_const(v->x, &c) && !ir_expr_has_index(v->x) &&
             (E->rt_depth > 0 || v->x->nodes > EV_MAX_EXPR_NODES || ev_expr_uses_var(v->x))) {
    /* (an element index of an initializer stays an expression: it has a
     * value only inside the initializer's element) */
    /* a big tree becomes a variable too (walks of it are then linear:
     * x = x + x repeated doubles a shared tree), and the name stays one:
     * x = x + n repeated 100000 times assigns it, never rewalks a chain */
    s->var = ir_new_var(E->ar, E->k, s->name, v->x->type);
    emit_assign(E, s->var, v->x, sp);
    s->val = v_expr(E, ir_var_ref(E->ar, s->var));
  } else if (v->kind == V_REF) {
    s->val = capture_ref(E, s->name, v, sp);
  }
}

/* The slot a name or attribute target denotes, created empty if new. */
static Slot *target_slot(Eval *E, Dict *dct, const char *name) {
  Slot *s = ev_dict_find(dct, name);
  return s ? s : ev_dict_set(E, dct, name, NULL);
}

static DType eval_ann_type(Eval *E, Node *annotation) {
  if (!annotation) return DT_VOID;
  return ev_annotation_rt_type(ev_eval_annotation(E, annotation));
}

/* x, y, z = self.blockIdx: Tilus's dim3 values unpack as (x, y, z). */
static Value *dim3_tuple(Eval *E, Value *v, Span sp) {
  if (v->kind != V_NS ||
      (v->bi != NS_BLOCKIDX && v->bi != NS_CLUSTER_BLOCKIDX && v->bi != NS_GRIDDIM))
    return v;
  Value *t = v_seq(E, V_TUPLE, 3);
  for (int i = 0; i < 3; i++)
    t->items[i] = ev_ns_attr(E, v, (const char *[]){"x", "y", "z"}[i], sp);
  return t;
}

/* target = v, with an optional annotation (x: int32 = v). */
void ev_assign_to(Eval *E, Node *target, Value *v, Node *annotation, Span sp) {
  switch (target->kind) {
  case N_NAME: {
    DType ann = eval_ann_type(E, annotation);
    Slot *slot = target_slot(E, ev_assign_scope(E, target->name), target->name);
    ev_bind_slot(E, slot, v, ann, sp);
    return;
  }
  case N_ATTR: {
    Value *obj = ev_eval_expr(E, target->a);
    DType ann = eval_ann_type(E, annotation);
    if (obj->kind == V_NS) {
      ev_ns_set_attr(E, obj, target->name, v, target->span);
      return;
    }
    if (obj->kind == V_HOST) { /* pd.options.display.width = 1000: no effect */
      ev_host_use(E, obj, target->a->span);
      return;
    }
    if (obj->kind != V_INST)
      ev_error(E, target->span, "cannot set attribute '%s' of '%s'", target->name,
               v_type_name(obj));
    Slot *slot = target_slot(E, &obj->inst->attrs, target->name);
    ev_bind_slot(E, slot, v, ann, sp);
    return;
  }
  case N_TUPLE:
  case N_LIST: {
    if (annotation) ev_error(E, target->span, "only single target can be annotated");
    v = dim3_tuple(E, v, sp);
    if (v->kind != V_TUPLE && v->kind != V_LIST)
      ev_error(E, sp, "cannot unpack '%s' into %d names", v_type_name(v), target->list.len);
    int star = -1, nt = target->list.len;
    for (int i = 0; i < nt; i++)
      if (target->list.items[i]->kind == N_STAR) star = i;
    if (star >= 0) { /* a, *rest, b = v */
      if (v->n < nt - 1)
        ev_error(E, sp, "not enough values to unpack (expected at least %d, got %d)", nt - 1, v->n);
      int mid = v->n - (nt - 1);
      for (int i = 0; i < star; i++) ev_assign_to(E, target->list.items[i], v->items[i], NULL, sp);
      Value *rest = v_seq(E, V_LIST, mid);
      ev_charge(E, mid / 8, sp);
      for (int j = 0; j < mid; j++) rest->items[j] = v->items[star + j];
      ev_assign_to(E, target->list.items[star]->a, rest, NULL, sp);
      for (int i = star + 1; i < nt; i++)
        ev_assign_to(E, target->list.items[i], v->items[mid + i - 1], NULL, sp);
      return;
    }
    if (v->n != target->list.len)
      ev_error(E, sp, "%s values to unpack (expected %d, got %d)",
               v->n > target->list.len ? "too many" : "not enough", target->list.len, v->n);
    for (int i = 0; i < v->n; i++) ev_assign_to(E, target->list.items[i], v->items[i], NULL, sp);
    return;
  }
  case N_SUBSCRIPT: {
    Value *seq = ev_eval_expr(E, target->a);
    if (seq->kind == V_DICT) {
      ev_dict_put(E, seq, ev_eval_expr(E, target->b), v, target->b->span);
      return;
    }
    if (seq->kind == V_HOST) { /* host code: no effect */
      ev_host_use(E, seq, target->a->span);
      ev_eval_expr(E, target->b);
      return;
    }
    if (seq->kind == V_TENSOR) {
      ev_tensor_elem_set(E, seq, ev_eval_expr(E, target->b), v, target->span);
      return;
    }
    if (seq->kind == V_TUPLE || seq->kind == V_STR)
      ev_error(E, target->span, "'%s' object does not support item assignment", v_type_name(seq));
    if (seq->kind != V_LIST)
      ev_error(E, target->span,
               "assignment to an element of '%s' is not "
               "supported yet",
               v_type_name(seq));
    if (target->b->kind == N_SLICE) { /* xs[a:b] = items, in place */
      int64_t start, stride;
      uint64_t count;
      ev_slice_bounds(E, target->b, seq->n, &start, &stride, &count);
      ev_list_set_slice(E, seq, start, stride, count, v, sp);
      return;
    }
    int64_t i = v_to_int(E, ev_eval_expr(E, target->b), target->b->span, "list index");
    if (i < 0) i += seq->n;
    if (i < 0 || i >= seq->n) ev_error(E, target->b->span, "list assignment index out of range");
    seq->items[i] = v;
    return;
  }
  default:
    ev_error(E, target->span, "cannot assign to this expression");
  }
}

/* The elif of an if: the N_IF alone in its else list. An elif chain is
 * followed by loops here, never by a recursion per arm, but for run-time
 * arms (RT_MAX_DEPTH). */
static Node *elif_of(Node *s) {
  return s->kind == N_IF && s->list2.len == 1 && s->list2.items[0]->kind == N_IF ? s->list2.items[0]
                                                                                 : NULL;
}

/* Names a body assigns (N_NAME targets), for the prescan. */
static void collect_target(Node *t, const char **names, int *n, int cap) {
  if (t->kind == N_NAME && *n < cap) names[(*n)++] = t->name;
  if (t->kind == N_TUPLE || t->kind == N_LIST)
    for (int i = 0; i < t->list.len; i++) collect_target(t->list.items[i], names, n, cap);
}

static void collect_assigned(NodeList *body, const char **names, int *n, int cap) {
  for (int i = 0; i < body->len; i++) {
    Node *s = body->items[i];
    switch (s->kind) {
    case N_ASSIGN:
      for (int j = 0; j < s->list.len; j++) collect_target(s->list.items[j], names, n, cap);
      break;
    case N_AUGASSIGN:
      collect_target(s->a, names, n, cap);
      break;
    case N_FOR:
      collect_target(s->a, names, n, cap);
      collect_assigned(&s->list, names, n, cap);
      break;
    case N_IF: /* an elif chain by a loop, not a recursion per arm */
      for (; s; s = elif_of(s)) {
        collect_assigned(&s->list, names, n, cap);
        if (!elif_of(s)) collect_assigned(&s->list2, names, n, cap);
      }
      break;
    case N_WHILE:
    case N_WITH:
      collect_assigned(&s->list, names, n, cap);
      collect_assigned(&s->list2, names, n, cap);
      break;
    default:
      break;
    }
  }
}

/* Before a run-time loop or branch: names it assigns that hold a run-time
 * expression tree become variables, so the body reads and writes one
 * register. */
static void prescan(Eval *E, NodeList *a, NodeList *b, Span sp) {
  enum { CAP = 256 };
  const char *names[CAP];
  int n = 0;
  int64_t c;
  collect_assigned(a, names, &n, CAP);
  if (b) collect_assigned(b, names, &n, CAP);
  Dict *scope = ev_cur_scope(E);
  for (int i = 0; i < n; i++) {
    Slot *s = ev_dict_find(scope, names[i]);
    if (!s || s->var || !s->val || s->val->kind != V_EXPR || ir_is_const(s->val->x, &c)) continue;
    s->var = ir_new_var(E->ar, E->k, s->name, s->val->x->type);
    emit_assign(E, s->var, s->val->x, sp);
    s->val = v_expr(E, ir_var_ref(E->ar, s->var));
  }
}

/* Slots made inside a run-time construct belong to the enclosing level once
 * it ends. */
static void clamp_depths(Eval *E) {
  Dict *scope = ev_cur_scope(E);
  for (int i = 0; i < scope->len; i++)
    if (scope->items[i].depth > E->rt_depth) scope->items[i].depth = E->rt_depth;
}

/* A copy of a scope, hash index included. Copying is work and memory
 * proportional to the scope: it counts against the step budget (one step
 * per name), so run-time ifs in a long loop over a huge scope can neither
 * hang the build nor fill the memory. */
static Dict dict_copy(Eval *E, const Dict *src) {
  Dict d = {0};
  d.cap = src->len ? src->len : 1;
  d.items = arena_alloc(E->ar, sizeof(Slot) * d.cap);
  if (src->len) memcpy(d.items, src->items, sizeof(Slot) * src->len);
  d.len = src->len;
  if (src->index) { /* same item order: the same index is valid */
    d.index_cap = src->index_cap;
    d.index = arena_alloc(E->ar, sizeof(int) * (size_t)d.index_cap);
    memcpy(d.index, src->index, sizeof(int) * (size_t)d.index_cap);
  }
  E->steps += src->len;
  return d;
}

static void push_assign(Eval *E, IrBlock *b, IrVar *var, Value *v, Span sp) {
  IrStmt *st = ir_stmt_new(E->ar, S_ASSIGN, sp);
  st->assign.var = var;
  st->assign.value = ev_scalar_as(E, v, var->type, sp);
  ir_block_push(E->ar, b, st);
}

static DType scalar_type(const Value *v) {
  if (v->kind == V_EXPR) return v->x->type == DT_BOOL ? DT_BOOL : v->x->type;
  if (v->kind == V_FLOAT) return DT_FLOAT32;
  return v->kind == V_BOOL ? DT_BOOL : DT_INT32;
}

/* Register tensors of one dtype, shape and thread count: the name bound
 * to either after a run-time if can be one tensor. */
static bool joinable_tensors(const Value *a, const Value *b) {
  if (a->kind != V_TENSOR || b->kind != V_TENSOR) return false;
  const IrTensor *x = a->t, *y = b->t;
  if (x->space != MS_REGISTER || y->space != MS_REGISTER || x->dtype != y->dtype ||
      x->rank != y->rank || x->nthreads != y->nthreads)
    return false;
  for (int i = 0; i < x->rank; i++)
    if (x->shape[i] != y->shape[i]) return false;
  return true;
}

/* `r = load(...)` in one branch, `r = register_tensor(...)` in the other:
 * a tensor both copy theirs into at the end of the branch (the copies tie
 * the layouts, as out= does). */
static Value *join_tensors(Eval *E, Value *thn, Value *els, IrStmt *st) {
  const IrTensor *x = thn->t;
  IrTensor *d =
      ir_new_tensor(E->ar, E->k, x->name, MS_REGISTER, x->dtype, x->rank, x->shape, st->span);
  d->nthreads = x->nthreads;
  IrBlock *arm[2] = {&st->body, &st->orelse};
  Value *src[2] = {thn, els};
  for (int i = 0; i < 2; i++) {
    IrStmt *cp = ir_stmt_new(E->ar, S_CAST, st->span);
    cp->cast.dst = d;
    cp->cast.src = src[i]->t;
    ir_block_push(E->ar, arm[i], cp);
  }
  return v_tensor(E, d);
}

/* Join after a run-time if: `els` is the scope after the else branch (the
 * live one), `thn` after the then branch, `before` the scope before. */
static void join_scopes(Eval *E, Dict *els, Dict *thn, Dict *before, IrStmt *st) {
  for (int i = 0; i < thn->len; i++) {
    Slot *ts = &thn->items[i];
    Slot *es = ev_dict_find(els, ts->name);
    if (!es) {
      es = ev_dict_set(E, els, ts->name, v_new(E, V_UNDEF));
      continue;
    }
    if ((ts->var && ts->var == es->var) || v_same(E, ts->val, es->val, st->span)) continue;
    if (joinable_tensors(ts->val, es->val)) {
      es->val = join_tensors(E, ts->val, es->val, st);
      es->var = NULL;
      continue;
    }
    if (!v_is_scalar(ts->val) || !v_is_scalar(es->val)) {
      es->val = v_new(E, V_UNDEF);
      es->var = NULL;
      continue;
    }
    DType tt = scalar_type(ts->val), et = scalar_type(es->val);
    DType t = tt == et ? tt : ev_promote(tt, et);
    Slot *bs = ev_dict_find(before, ts->name);
    IrVar *var = ts->var;
    bool fresh_in_then = var && var->type == t && (!bs || bs->var != var);
    if (!fresh_in_then) {
      var = ir_new_var(E->ar, E->k, ts->name, t);
      push_assign(E, &st->body, var, ts->val, st->span);
    }
    push_assign(E, &st->orelse, var, es->val, st->span);
    es->var = var;
    es->val = v_expr(E, ir_var_ref(E->ar, var));
  }
  /* bound in the else branch only: no value, and no variable either (a
   * later assignment, in the next pass of a compile-time loop, binds it
   * afresh rather than writing a variable whose name has no value) */
  for (int i = 0; i < els->len; i++)
    if (!ev_dict_find(thn, els->items[i].name)) {
      els->items[i].val = v_new(E, V_UNDEF);
      els->items[i].var = NULL;
    }
}

static Ctrl exec_if_chain(Eval *E, Node *s, bool in_chain);

/* Each run-time arm nests an S_IF in the one before (the IR has no elif),
 * and the passes walk S_IFs recursively (about 0.8 KB of stack a level
 * under ASan): run-time control flow is bounded where an if opens. */
enum { RT_MAX_DEPTH = 6000 };

/* if on a run-time condition: S_IF, both branches evaluated once. An elif
 * reached in a run-time else branch (in_chain) prescans its own branch
 * only: the first run-time arm's prescan walked the rest of the chain (a
 * walk of the rest per arm was quadratic). */
static void rt_if(Eval *E, Node *s, Value *cond, bool in_chain) {
  if (E->rt_depth >= RT_MAX_DEPTH)
    ev_error(E, s->span,
             "run-time control flow nested more than %d deep (each elif of a "
             "run-time if is one level more)",
             RT_MAX_DEPTH);
  Node *elif = elif_of(s);
  prescan(E, &s->list, in_chain && elif ? NULL : &s->list2, s->span);
  IrStmt *st = ir_stmt_new(E->ar, S_IF, s->span);
  st->branch.cond = ev_to_bool_expr(E, cond, s->a->span);
  ev_emit(E, st);
  Dict *scope = ev_cur_scope(E);
  Dict before = dict_copy(E, scope);
  IrBlock *saved = E->cur;
  int saved_kind = E->loop_kind;
  if (E->loop_kind) /* break/continue cannot leave a run-time branch */
    E->loop_kind = 2;
  RtFrame frame;
  ev_rt_enter(E, &frame, false);
  E->rt_depth++;
  E->nest++;
  E->cur = &st->body;
  ev_exec_block(E, &s->list);
  ev_rt_check_restored(E, &frame);
  Dict thn = dict_copy(E, scope);
  *scope = dict_copy(E, &before);
  E->cur = &st->orelse;
  if (elif) {
    ev_step(E, elif->span); /* the statement it is */
    exec_if_chain(E, elif, true);
  } else {
    ev_exec_block(E, &s->list2);
  }
  ev_rt_check_restored(E, &frame);
  E->cur = saved;
  E->rt_depth--;
  E->nest--;
  E->loop_kind = saved_kind;
  ev_rt_leave(E, &frame);
  join_scopes(E, scope, &thn, &before, st);
  clamp_depths(E);
}

/* An if and its elifs: compile-time arms by a loop (a chain of n arms is
 * no recursion n deep); a run-time arm becomes an S_IF. */
static Ctrl exec_if_chain(Eval *E, Node *s, bool in_chain) {
  for (;;) {
    Value *c = ev_eval_expr(E, s->a);
    int64_t k;
    if (c->kind == V_EXPR && !ir_is_const(c->x, &k)) {
      rt_if(E, s, c, in_chain);
      return C_NEXT;
    }
    if (v_truthy(E, c, s->a->span)) return ev_exec_block(E, &s->list);
    Node *elif = elif_of(s);
    if (!elif) return ev_exec_block(E, &s->list2);
    s = elif;
    ev_step(E, s->span); /* the statement it is */
  }
}

static Ctrl exec_if(Eval *E, Node *s) { return exec_if_chain(E, s, false); }

/* The body of a compile-time loop; returns true to stop the loop. */
static bool ct_loop_body(Eval *E, NodeList *body, Ctrl *out) {
  Ctrl c = ev_exec_block(E, body);
  if (c == C_BREAK) return true;
  if (c == C_RETURN) {
    *out = C_RETURN;
    return true;
  }
  return false;
}

/* The target slot of a compile-time loop that runs inside a run-time loop
 * or branch entered after the name was bound (the second pass of
 * `for wg in range(4): for tile in self.range(...): for j in range(4)`):
 * the run-time body is evaluated once, so a compile-time name may change
 * inside it only if it ends the body with the value it had on entry (as
 * any rebinding there, ev_rt_note_rebind). NULL when the ordinary rules
 * apply. */
static Slot *ct_target_to_restore(Eval *E, Node *target) {
  if (target->kind != N_NAME || E->rt_depth == 0) return NULL;
  Slot *slot = ev_dict_find(ev_cur_scope(E), target->name);
  if (!slot || !slot->val || slot->var || slot->depth >= E->rt_depth) return NULL;
  return slot;
}

/* for x in <list/tuple/range()>: unrolled by evaluation. */
static Ctrl ct_for(Eval *E, Node *s, Value *seq) {
  seq = ev_iterate_list(E, seq, s->b->span);
  Slot *outer = ct_target_to_restore(E, s->a);
  int entry_depth = outer ? outer->depth : 0;
  if (outer) {
    ev_rt_note_rebind(E, s->a->name, outer->val, s->a->span);
    outer->depth = E->rt_depth;
  }
  int saved = E->loop_kind;
  Ctrl out = C_NEXT;
  E->loop_kind = 1;
  int i = 0;
  for (; i < seq->n; i++) {
    ev_assign_to(E, s->a, seq->items[i], NULL, s->a->span);
    if (ct_loop_body(E, &s->list, &out)) break;
  }
  E->loop_kind = saved;
  if (i == seq->n && s->list2.len) out = ev_exec_block(E, &s->list2); /* for ... else */
  /* found again: the body may have grown the scope (a name first bound in
   * a branch), moving its slots */
  if (outer && (outer = ev_dict_find(ev_cur_scope(E), s->a->name))) outer->depth = entry_depth;
  return out;
}

/* for x in self.range(...): one S_FOR with a fresh loop variable. */
static void rt_for(Eval *E, Node *s, Value *rng) {
  if (s->a->kind != N_NAME) ev_error(E, s->a->span, "the target of a run-time loop must be a name");
  prescan(E, &s->list, NULL, s->span);
  IrStmt *st = ir_stmt_new(E->ar, S_FOR, s->span);
  DType t = DT_INT32;
  for (int i = 0; i < 3; i++)
    if (rng->items[i]->kind == V_EXPR) t = ev_promote(t, rng->items[i]->x->type);
  st->loop.start = ev_scalar_as(E, rng->items[0], t, s->b->span);
  st->loop.stop = ev_scalar_as(E, rng->items[1], t, s->b->span);
  st->loop.step = ev_scalar_as(E, rng->items[2], t, s->b->span);
  st->loop.unroll = rng->i;
  st->loop.var = ir_new_var(E->ar, E->k, s->a->name, t);
  ev_emit(E, st);
  Slot *slot = target_slot(E, ev_cur_scope(E), s->a->name);
  slot->var = st->loop.var;
  slot->val = v_expr(E, ir_var_ref(E->ar, st->loop.var));
  slot->depth = E->rt_depth;
  IrBlock *saved = E->cur;
  int saved_kind = E->loop_kind;
  RtFrame frame;
  ev_rt_enter(E, &frame, true);
  E->cur = &st->body;
  E->rt_depth++;
  E->nest++;
  E->rt_loops++;
  E->loop_kind = 2;
  ev_exec_block(E, &s->list);
  ev_rt_check_restored(E, &frame);
  E->loop_kind = saved_kind;
  E->rt_depth--;
  E->nest--;
  E->rt_loops--;
  E->cur = saved;
  ev_rt_leave(E, &frame);
  clamp_depths(E);
  /* Python leaves the last value (or the old binding, after no trip) in
   * the name; Tilus's loop variables live inside the loop, and so does
   * this one: the name has no value after it (an error where it is read,
   * never a join that reads a variable no trip may have set). */
  Slot *after = ev_dict_find(ev_cur_scope(E), s->a->name);
  if (after && after->var == st->loop.var) {
    after->val = v_new(E, V_UNDEF);
    after->val->i = UNDEF_LOOP_VAR;
    after->val->n = s->span.line;
    after->var = NULL;
  }
}

static Ctrl exec_for(Eval *E, Node *s) {
  Value *it = ev_eval_expr(E, s->b);
  if (it->kind == V_NS && it->bi == P_RANGE) {
    rt_for(E, s, it);
    /* a run-time loop has no break: its else always runs after it */
    return s->list2.len ? ev_exec_block(E, &s->list2) : C_NEXT;
  }
  return ct_for(E, s, it);
}

/* while: compile time only, with an iteration limit. */
static Ctrl exec_while(Eval *E, Node *s) {
  int saved = E->loop_kind;
  Ctrl out = C_NEXT;
  E->loop_kind = 1;
  for (long iter = 0;; iter++) {
    Value *c = ev_eval_expr(E, s->a);
    int64_t k;
    if (c->kind == V_EXPR && !ir_is_const(c->x, &k))
      ev_error(E, s->a->span, "a run-time while loop is not supported yet");
    if (!v_truthy(E, c, s->a->span)) break;
    if (iter >= EV_MAX_LOOP_ITERS)
      ev_error(E, s->span, "compile-time loop runs more than %d iterations", EV_MAX_LOOP_ITERS);
    if (ct_loop_body(E, &s->list, &out)) {
      E->loop_kind = saved;
      return out;
    }
  }
  E->loop_kind = saved;
  return s->list2.len ? ev_exec_block(E, &s->list2) : out; /* while ... else */
}

/* x[i] op= v: the container and the index are evaluated once. */
static void augassign_item(Eval *E, Node *s) {
  Node *t = s->a;
  Value *seq = ev_eval_expr(E, t->a);
  if (t->b->kind == N_SLICE)
    ev_error(E, t->span, "augmented assignment to a slice is not supported");
  Value *idx = ev_eval_expr(E, t->b);
  Value *cur;
  if (seq->kind == V_TENSOR) {
    cur = ev_tensor_index(E, seq, idx, t->span);
  } else if (seq->kind == V_DICT) {
    cur = ev_dict_get(E, seq, idx, t->b->span);
    if (!cur)
      ev_error(E, t->b->span, "KeyError: the dict has no key %s", ev_repr(E, idx, t->b->span));
  } else if (seq->kind == V_LIST) {
    int64_t i = v_to_int(E, idx, t->b->span, "list index");
    if (i < 0) i += seq->n;
    if (i < 0 || i >= seq->n) ev_error(E, t->b->span, "list index out of range");
    cur = seq->items[i];
    seq->items[i] = ev_inplace_binop(E, s->op, cur, ev_eval_expr(E, s->b), s->span);
    return;
  } else {
    ev_error(E, t->span, "augmented assignment to an element of '%s' is not supported yet",
             v_type_name(seq));
  }
  Value *v = ev_inplace_binop(E, s->op, cur, ev_eval_expr(E, s->b), s->span);
  if (seq->kind == V_DICT)
    ev_dict_put(E, seq, idx, v, t->b->span);
  else
    ev_tensor_elem_set(E, seq, idx, v, t->span);
}

/* x op= v: register tensors update in place; the rest is x = x op v. */
static void exec_augassign(Eval *E, Node *s) {
  if (s->a->kind == N_SUBSCRIPT) {
    augassign_item(E, s);
    return;
  }
  if (s->a->kind != N_NAME && s->a->kind != N_ATTR)
    ev_error(E, s->a->span,
             "augmented assignment to this target is not "
             "supported yet");
  Value *cur = ev_eval_expr(E, s->a);
  Value *rhs = ev_eval_expr(E, s->b);
  if (cur->kind == V_TENSOR && cur->t->space == MS_REGISTER) {
    ev_tensor_binop_to(E, s->op, cur, rhs, cur->t, s->span);
    return;
  }
  ev_assign_to(E, s->a, ev_inplace_binop(E, s->op, cur, rhs, s->span), NULL, s->span);
}

/* The frame's run-time return flag, made on the first run-time return
 * and set to False where the function's statements begin. */
static IrVar *ret_flag(Eval *E, Frame *f, Span sp) {
  if (f->ret_var) return f->ret_var;
  f->ret_var = ir_new_var(E->ar, E->k, "returned", DT_BOOL);
  IrStmt *init = ir_stmt_new(E->ar, S_ASSIGN, sp);
  init->assign.var = f->ret_var;
  init->assign.value = ir_const(E->ar, DT_BOOL, 0);
  IrBlock *b = f->entry;
  ir_block_push(E->ar, b, init); /* then moved to entry_len */
  memmove(b->items + f->entry_len + 1, b->items + f->entry_len,
          sizeof(IrStmt *) * (size_t)(b->len - 1 - f->entry_len));
  b->items[f->entry_len] = init;
  return f->ret_var;
}

/* return under a run-time branch: the flag is set, and every block
 * around the branch, up to the function's, guards what follows it. */
static void rt_return(Eval *E, Node *s) {
  Frame *f = E->frame;
  if (E->rt_loops > f->loops_base)
    ev_error(E, s->span, "'return' inside a run-time loop is not supported yet");
  if (s->a && ev_eval_expr(E, s->a)->kind != V_NONE)
    ev_error(E, s->span, "'return' with a value under a run-time branch is not supported yet");
  int levels = E->nest - f->nest_base;
  if (levels > 64) ev_error(E, s->span, "'return' nested more than 64 blocks deep in its function");
  emit_assign(E, ret_flag(E, f, s->span), ir_const(E->ar, DT_BOOL, 1), s->span);
  f->guards_due |= levels == 64 ? ~(uint64_t)0 : ((uint64_t)1 << levels) - 1;
}

static Ctrl exec_return(Eval *E, Node *s) {
  if (!E->frame) ev_error(E, s->span, "'return' outside function");
  if (E->rt_depth > E->frame->rt_base) {
    rt_return(E, s);
    return C_RETURN; /* the rest of the branch is not reached */
  }
  E->frame->ret = s->a ? ev_eval_expr(E, s->a) : v_none(E);
  E->frame->returned = true;
  return C_RETURN;
}

/* The first statement of a block after a run-time return that may have
 * left it: the rest of the block goes under `if not returned`. */
static void open_guard(Eval *E, Span sp) {
  Frame *f = E->frame;
  int level = E->nest - f->nest_base;
  if (level < 0 || level >= 64 || !(f->guards_due >> level & 1)) return;
  f->guards_due &= ~((uint64_t)1 << level);
  IrStmt *st = ir_stmt_new(E->ar, S_IF, sp);
  st->branch.cond = ir_unary(E->ar, OP_LNOT, ir_var_ref(E->ar, f->ret_var));
  ev_emit(E, st);
  E->cur = &st->body;
}

static Ctrl exec_jump(Eval *E, Node *s) {
  const char *what = s->kind == N_BREAK ? "break" : "continue";
  if (E->loop_kind == 0) ev_error(E, s->span, "'%s' outside loop", what);
  if (E->loop_kind == 2) ev_error(E, s->span, "'%s' in a run-time loop is not supported yet", what);
  return s->kind == N_BREAK ? C_BREAK : C_CONTINUE;
}

static void exec_assert(Eval *E, Node *s) {
  Value *c = ev_eval_expr(E, s->a);
  int64_t k;
  if (c->kind == V_EXPR && !ir_is_const(c->x, &k))
    ev_error(E, s->a->span, "assert on a run-time value is not supported yet");
  if (v_truthy(E, c, s->a->span)) return;
  Value *msg = s->b ? ev_eval_expr(E, s->b) : NULL;
  if (msg && msg->kind == V_STR) ev_error(E, s->span, "assertion failed: %s", msg->s);
  ev_error(E, s->span, "assertion failed");
}

static void exec_assign(Eval *E, Node *s) {
  Node *t0 = s->list.items[0];
  E->hint = s->list.len == 1 && (t0->kind == N_NAME || t0->kind == N_ATTR) ? t0->name : NULL;
  const char *name = E->hint;
  int first_new = E->k ? E->k->ntensors : 0;
  Value *v = ev_eval_expr(E, s->a);
  E->hint = NULL;
  /* c = a + b * 2: the tensor the statement produced takes the name, not
   * the first temporary made on the way */
  if (name && v->kind == V_TENSOR && E->k && v->t->id >= first_new) v->t->name = (char *)name;
  for (int i = 0; i < s->list.len; i++) ev_assign_to(E, s->list.items[i], v, s->b, s->span);
}

/* x: int32 (no value): declares a run-time variable. */
static void exec_anndecl(Eval *E, Node *s) {
  DType t = eval_ann_type(E, s->b);
  if (t == DT_VOID || s->a->kind != N_NAME) return;
  if (!E->k)
    ev_error(E, s->span,
             "run-time variables ('%s: %s') exist only inside a "
             "kernel",
             s->a->name, dtype_name(t));
  Slot *slot = target_slot(E, ev_cur_scope(E), s->a->name);
  if (!slot->var || slot->var->type != t) slot->var = ir_new_var(E->ar, E->k, s->a->name, t);
  slot->val = v_expr(E, ir_var_ref(E->ar, slot->var));
}

/* try: the body, then else, then finally. tlsc's errors are not Python
 * exceptions: a handler never runs (an error in the body ends the build). */
static Ctrl exec_try(Eval *E, Node *s) {
  Ctrl c = ev_exec_block(E, &s->list);
  for (int i = 0; i < s->list2.len; i++) {
    Node *cl = s->list2.items[i];
    if (cl->kind == N_TRY_ELSE && c == C_NEXT) c = ev_exec_block(E, &cl->list);
    if (cl->kind == N_FINALLY) {
      Ctrl f = ev_exec_block(E, &cl->list);
      if (f != C_NEXT) c = f;
    }
  }
  return c;
}

/* raise X(msg): an error at compile time, with Python's text. */
static _Noreturn void exec_raise(Eval *E, Node *s) {
  if (!s->a) ev_error(E, s->span, "raise: no active exception to re-raise");
  Value *x = ev_eval_expr(E, s->a);
  if (x->kind == V_BUILTIN && x->bi == B_EXCEPTION) ev_error(E, s->span, "%s", x->s);
  if (x->kind == V_STR && x->i == 1) ev_error(E, s->span, "%s", x->s); /* an exception value */
  if (x->kind == V_HOST) ev_error(E, s->span, "raise %s (host code)", x->s);
  ev_error(E, s->span, "exceptions must derive from BaseException, not '%s'", v_type_name(x));
}

/* del name, del d[k], del l[i]. */
static void exec_del(Eval *E, Node *t) {
  if (t->kind == N_NAME) {
    Slot *s = ev_dict_find(ev_assign_scope(E, t->name), t->name);
    if (!s) ev_error(E, t->span, "name '%s' is not defined", t->name);
    s->val = v_new(E, V_UNDEF);
    s->val->i = UNDEF_DELETED;
    s->var = NULL;
    return;
  }
  if (t->kind == N_TUPLE || t->kind == N_LIST) {
    for (int i = 0; i < t->list.len; i++) exec_del(E, t->list.items[i]);
    return;
  }
  if (t->kind == N_SUBSCRIPT) {
    Value *seq = ev_eval_expr(E, t->a);
    Value *k = ev_eval_expr(E, t->b);
    if (seq->kind == V_DICT) {
      Value *m = ev_dict_attr(E, seq, "pop", t->span);
      Args a = {0};
      a.npos = 1;
      a.pos = &k;
      a.pos_span = &t->b->span;
      ev_call_builtin(E, m, &a, t->span);
      return;
    }
    if (seq->kind == V_LIST) {
      int64_t i = v_to_int(E, k, t->b->span, "list index");
      if (i < 0) i += seq->n;
      if (i < 0 || i >= seq->n) ev_error(E, t->b->span, "list assignment index out of range");
      memmove(&seq->items[i], &seq->items[i + 1], sizeof(Value *) * (size_t)(seq->n - i - 1));
      seq->n--;
      return;
    }
    if (seq->kind == V_HOST) {
      ev_host_use(E, seq, t->a->span);
      return;
    }
  }
  ev_error(E, t->span, "del of this target is not supported");
}

Ctrl ev_exec_stmt(Eval *E, Node *s) {
  ev_step(E, s->span);
  if (E->frame && E->frame->guards_due) open_guard(E, s->span);
  switch (s->kind) {
  case N_EXPR_STMT:
    ev_eval_expr(E, s->a);
    return C_NEXT;
  case N_ASSIGN:
    exec_assign(E, s);
    return C_NEXT;
  case N_ANNDECL:
    exec_anndecl(E, s);
    return C_NEXT;
  case N_AUGASSIGN:
    exec_augassign(E, s);
    return C_NEXT;
  case N_RETURN:
    return exec_return(E, s);
  case N_PASS:
    return C_NEXT;
  case N_BREAK:
  case N_CONTINUE:
    return exec_jump(E, s);
  case N_ASSERT:
    exec_assert(E, s);
    return C_NEXT;
  case N_IF:
    return exec_if(E, s);
  case N_WHILE:
    return exec_while(E, s);
  case N_FOR:
    return exec_for(E, s);
  case N_WITH: {
    Value *ctx = ev_eval_expr(E, s->a);
    if (ctx->kind == V_HOST) { /* host code: the body runs, the context is opaque */
      ev_host_use(E, ctx, s->a->span);
      if (s->b) ev_assign_to(E, s->b, ev_host_derived(E, ctx, ".__enter__()"), NULL, s->b->span);
      return ev_exec_block(E, &s->list);
    }
    if (!E->k) ev_error(E, s->span, "'with' is only allowed inside a kernel");
    return ev_exec_with(E, s, ctx);
  }
  case N_DEF:
    ev_dict_set(E, ev_assign_scope(E, s->name), s->name, ev_def_value(E, s, NULL));
    return C_NEXT;
  case N_TRY:
    return exec_try(E, s);
  case N_RAISE:
    exec_raise(E, s);
  case N_GLOBAL:
  case N_NONLOCAL:
    if (E->frame) {
      if (s->kind == N_GLOBAL)
        E->frame->globals = &s->list;
      else
        E->frame->nonlocals = &s->list;
    }
    return C_NEXT;
  case N_DEL:
    for (int i = 0; i < s->list.len; i++) exec_del(E, s->list.items[i]);
    return C_NEXT;
  case N_CLASS:
    ev_error(E, s->span, "nested class definitions are not supported yet");
  case N_IMPORT:
  case N_FROM_IMPORT:
    ev_exec_import(E, s);
    return C_NEXT;
  default:
    ev_error(E, s->span, "statement (%s) not supported yet", node_kind_name(s->kind));
  }
}

Ctrl ev_exec_block(Eval *E, NodeList *body) {
  for (int i = 0; i < body->len; i++) {
    Ctrl c = ev_exec_stmt(E, body->items[i]);
    if (c != C_NEXT) return c;
  }
  return C_NEXT;
}
