/* constprop.c: constant propagation over the structured body, then the
 * removal of assignments nothing reads.
 *
 * Each integer or bool variable has, at each point, a lattice value:
 * unknown yet (no assignment reaches: optimistic), a constant, or not a
 * constant. Assignments give the value of their right-hand side with the
 * constants substituted; an `if` with a constant condition takes its
 * branch, otherwise both are joined; a loop's head is the join of its
 * entry and of the end of its body, iterated until it settles (the body may
 * run zero times: after the loop is the head); the loop variable is not a
 * constant. So a variable that the copies of an unrolled loop (unroll.c)
 * bring back to its entry value, like a pipeline stage 1 -> 2 -> 3 -> 0 ->
 * 1, is a constant in every copy, and its barrier addresses, shared
 * memory offsets and `stage == 0` tests fold.
 *
 * A thread group runs only on its threads: a thread group does not see
 * the assignments of an earlier thread group of the same block whose
 * threads are disjoint from its own (they never ran it), so each warp
 * group of a warp-specialised kernel starts from the values before the
 * others. single_thread() bodies may or may not have run: joined.
 *
 * Then every expression is rewritten with the constants known at its
 * point and folded; assignments of a variable to itself go, and so do
 * assignments to variables that nothing reads any more (iterated).
 *
 * The analysis of nested loops repeats inner loops for each round of the
 * outer ones; past a budget of statement visits the kernel is left as it
 * is.
 */
#include "ir/ir.h"

#include <stdlib.h>
#include <string.h>

enum { L_TOP, L_CONST, L_NAC };

typedef struct Lat {
  int kind;
  int64_t v;
} Lat;

typedef struct Prop {
  Arena *ar;
  IrKernel *k;
  int n;       /* variables */
  long visits; /* statement transfers, against BUDGET */
  bool gave_up;
  bool rewrite; /* second walk: rewrite the statements */
} Prop;

#define BUDGET 200000L

static bool tracked(const IrVar *v) {
  DType t = v->type;
  return t == DT_BOOL || t == DT_INT32 || t == DT_UINT32 || t == DT_INT64 || t == DT_UINT64;
}

static Lat *state_new(Prop *P) { return calloc((size_t)P->n + 1, sizeof(Lat)); }

static Lat *state_copy(Prop *P, const Lat *s) {
  Lat *c = state_new(P);
  if (!c) abort();
  memcpy(c, s, sizeof(Lat) * (size_t)P->n);
  return c;
}

static Lat join1(Lat a, Lat b) {
  if (a.kind == L_TOP) return b;
  if (b.kind == L_TOP) return a;
  if (a.kind == L_CONST && b.kind == L_CONST && a.v == b.v) return a;
  return (Lat){L_NAC, 0};
}

/* into = into join from; true if into changed */
static bool join_into(Prop *P, Lat *into, const Lat *from) {
  bool changed = false;
  for (int i = 0; i < P->n; i++) {
    Lat j = join1(into[i], from[i]);
    if (j.kind != into[i].kind || j.v != into[i].v) {
      into[i] = j;
      changed = true;
    }
  }
  return changed;
}

/* ------------------------------------------------------- expressions */

typedef struct Env {
  Prop *P;
  const Lat *s;
  bool top; /* a variable without a value yet was read */
} Env;

static IrExpr *const_leaf(void *ctx, IrExpr *x) {
  Env *E = ctx;
  if (!tracked(x->var) || x->var->id < 0 || x->var->id >= E->P->n) return x;
  Lat l = E->s[x->var->id];
  if (l.kind == L_TOP) E->top = true;
  if (l.kind == L_CONST) return ir_const(E->P->ar, x->var->type, l.v);
  return x;
}

static IrExpr *fold(Prop *P, const Lat *s, IrExpr *e, bool *top) {
  Env E = {P, s, false};
  IrExpr *r = ir_expr_substitute(P->ar, e, const_leaf, &E);
  if (top) *top = E.top;
  return r;
}

static IrExpr *fold_slot(void *ctx, IrExpr *e) {
  Env *E = ctx;
  return fold(E->P, E->s, e, NULL);
}

/* The lattice value of e in state s. */
static Lat value_of(Prop *P, const Lat *s, IrExpr *e) {
  bool top;
  IrExpr *r = fold(P, s, e, &top);
  int64_t c;
  if (ir_is_const(r, &c) && !dtype_is_float(r->type)) return (Lat){L_CONST, c};
  return (Lat){top ? L_TOP : L_NAC, 0};
}

/* ------------------------------------------------------------ walk */

typedef struct Range {
  int64_t begin, end; /* absolute threads; begin < 0: single thread */
} Range;

static void walk_block(Prop *P, IrBlock *b, Lat *s, Range g);

static void set_var(Prop *P, Lat *s, const IrVar *v, Lat l) {
  if (v->id >= 0 && v->id < P->n) s[v->id] = tracked(v) ? l : (Lat){L_NAC, 0};
}

static void walk_for(Prop *P, IrStmt *st, Lat *s, Range g) {
  IrForStmt *l = &st->loop;
  if (P->rewrite) {
    Env E = {P, s, false};
    ir_stmt_map_exprs(st, fold_slot, &E);
  }
  Lat *head = state_copy(P, s);
  set_var(P, head, l->var, (Lat){L_NAC, 0});
  bool rewrite = P->rewrite;
  P->rewrite = false;
  for (;;) {
    Lat *body = state_copy(P, head);
    walk_block(P, &st->body, body, g);
    bool changed = join_into(P, head, body);
    free(body);
    if (!changed || P->gave_up) break;
  }
  P->rewrite = rewrite;
  if (rewrite) {
    Lat *body = state_copy(P, head);
    walk_block(P, &st->body, body, g);
    free(body);
  }
  memcpy(s, head, sizeof(Lat) * (size_t)P->n);
  free(head);
}

static void walk_if(Prop *P, IrStmt *st, Lat *s, Range g) {
  if (P->rewrite) {
    Env E = {P, s, false};
    ir_stmt_map_exprs(st, fold_slot, &E);
  }
  Lat c = value_of(P, s, st->branch.cond);
  if (c.kind == L_CONST) { /* only one branch runs */
    walk_block(P, c.v ? &st->body : &st->orelse, s, g);
    return;
  }
  Lat *other = state_copy(P, s);
  walk_block(P, &st->body, s, g);
  walk_block(P, &st->orelse, other, g);
  join_into(P, s, other);
  free(other);
}

/* A region some threads may skip: out = in join body(in). */
static void walk_region(Prop *P, IrStmt *st, Lat *s, Range inner) {
  Lat *body = state_copy(P, s);
  walk_block(P, &st->body, body, inner);
  join_into(P, s, body);
  free(body);
}

static Range group_range(const IrStmt *st, Range g) {
  if (g.begin < 0) return g;
  int64_t b = g.begin + st->group.begin;
  return (Range){b, b + st->group.count};
}

static bool disjoint(Range a, Range b) {
  return a.begin >= 0 && b.begin >= 0 && (a.end <= b.begin || b.end <= a.begin);
}

static void walk_stmt(Prop *P, IrStmt *st, Lat *s, Range g);

/* The state in which thread group b->items[i] starts: the block's entry
 * state through the statements before it, leaving out the thread groups
 * whose threads are disjoint from its own. */
static Lat *group_entry(Prop *P, IrBlock *b, int i, const Lat *entry, Range g) {
  Range mine = group_range(b->items[i], g);
  Lat *s = state_copy(P, entry);
  bool rewrite = P->rewrite;
  P->rewrite = false;
  for (int j = 0; j < i; j++) {
    IrStmt *o = b->items[j];
    if (o->kind == S_THREAD_GROUP && disjoint(group_range(o, g), mine)) continue;
    walk_stmt(P, o, s, g);
  }
  P->rewrite = rewrite;
  return s;
}

static void walk_stmt(Prop *P, IrStmt *st, Lat *s, Range g) {
  if (++P->visits > BUDGET) P->gave_up = true;
  if (P->gave_up) return;
  switch (st->kind) {
  case S_ASSIGN: {
    if (P->rewrite) {
      Env E = {P, s, false};
      ir_stmt_map_exprs(st, fold_slot, &E);
    }
    set_var(P, s, st->assign.var, value_of(P, s, st->assign.value));
    return;
  }
  case S_FOR:
    walk_for(P, st, s, g);
    return;
  case S_IF:
    walk_if(P, st, s, g);
    return;
  case S_THREAD_GROUP:
    walk_region(P, st, s, group_range(st, g));
    return;
  case S_SINGLE_THREAD:
    walk_region(P, st, s, (Range){-1, -1});
    return;
  default:
    if (P->rewrite) {
      Env E = {P, s, false};
      ir_stmt_map_exprs(st, fold_slot, &E);
    }
    return;
  }
}

static void walk_block(Prop *P, IrBlock *b, Lat *s, Range g) {
  int ngroups = 0;
  for (int i = 0; i < b->len; i++) ngroups += b->items[i]->kind == S_THREAD_GROUP;
  /* the block's entry state, for the thread groups after the first */
  Lat *entry = ngroups >= 2 && g.begin >= 0 ? state_copy(P, s) : NULL;
  bool seen_group = false;
  for (int i = 0; i < b->len && !P->gave_up; i++) {
    IrStmt *st = b->items[i];
    if (st->kind == S_THREAD_GROUP && entry && seen_group) {
      /* the state for its threads; what it assigns is then joined as a
       * region's */
      Lat *mine = group_entry(P, b, i, entry, g);
      walk_block(P, &st->body, mine, group_range(st, g));
      join_into(P, s, mine);
      free(mine);
      continue;
    }
    if (st->kind == S_THREAD_GROUP) seen_group = true;
    walk_stmt(P, st, s, g);
  }
  free(entry);
}

/* ------------------------------------------------------------ cleanup */

typedef struct Marker {
  bool *read;
} Marker;

static IrExpr *mark_slot(void *ctx, IrExpr *e) {
  Marker *m = ctx;
  ir_expr_mark_vars(e, m->read);
  return e;
}

static void mark_block(bool *read, IrBlock *b) {
  Marker m = {read};
  for (int i = 0; i < b->len; i++) {
    ir_stmt_map_exprs(b->items[i], mark_slot, &m);
    mark_block(read, &b->items[i]->body);
    mark_block(read, &b->items[i]->orelse);
  }
}

/* Drops assignments to variables not in read, and x = x, and puts the
 * branch an `if` with a constant condition takes in its place; true if
 * anything changed. */
static bool drop_dead(Arena *ar, IrBlock *b, const bool *read) {
  bool changed = false;
  int n = 0;
  for (int i = 0; i < b->len; i++) {
    IrStmt *s = b->items[i];
    changed = drop_dead(ar, &s->body, read) || changed;
    changed = drop_dead(ar, &s->orelse, read) || changed;
    int64_t c;
    if (s->kind == S_IF && ir_is_const(s->branch.cond, &c)) {
      IrBlock *taken = c ? &s->body : &s->orelse;
      IrBlock out = {0};
      for (int j = 0; j < n; j++) ir_block_push(ar, &out, b->items[j]);
      for (int j = 0; j < taken->len; j++) ir_block_push(ar, &out, taken->items[j]);
      for (int j = i + 1; j < b->len; j++) ir_block_push(ar, &out, b->items[j]);
      *b = out;
      return true; /* again from the start, over the new block */
    }
    if (s->kind == S_ASSIGN) {
      const IrExpr *v = s->assign.value;
      bool self = v->kind == X_VAR && v->var == s->assign.var;
      if (self || !read[s->assign.var->id]) {
        changed = true;
        continue;
      }
    }
    b->items[n++] = s;
  }
  b->len = n;
  return changed;
}

static void remove_dead(Prop *P) {
  bool *read = calloc((size_t)P->n + 1, 1);
  if (!read) abort();
  for (;;) {
    memset(read, 0, (size_t)P->n + 1);
    mark_block(read, &P->k->body);
    if (!drop_dead(P->ar, &P->k->body, read)) break;
  }
  free(read);
}

static void propagate(Arena *ar, IrKernel *k) {
  Prop P = {.ar = ar, .k = k, .n = k->nvars};
  Range all = {0, (int64_t)k->warps * 32};
  Lat *s = state_new(&P);
  if (!s) abort();
  walk_block(&P, &k->body, s, all); /* analysis only: within the budget? */
  free(s);
  if (P.gave_up) return;
  P.visits = 0;
  P.rewrite = true;
  s = state_new(&P);
  walk_block(&P, &k->body, s, all);
  free(s);
  remove_dead(&P);
}

void ir_propagate_constants(IrModule *m) {
  for (int i = 0; i < m->nkernels; i++) propagate(m->ar, m->kernels[i]);
}
