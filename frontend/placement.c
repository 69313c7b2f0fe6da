/* placement.c: the placement rules Python checks at compile time.
 *
 * `return` only inside a def, `break` and `continue` only inside a loop
 * (a def or class body starts afresh; a loop's `else` is outside it),
 * `from x import *` only at module level (in no def or class: an `if` or
 * `try` at module level is fine), `nonlocal` only in a function;
 * `yield` only in a function or lambda (not in a comprehension's element or
 * conditions), `await`, `async for` and `async with` only in an `async
 * def` (or a generator expression); no `:=` in a comprehension's iterable.
 * Runs after ast_check_depth, so its recursion over nested blocks and
 * expressions is bounded (an elif chain, which is not nesting, is followed
 * by a loop).
 */
#include "frontend/parse.h"

typedef struct Context {
  bool in_def, in_loop, at_module, in_async;
  bool in_comp;      /* in a comprehension's element or conditions */
  bool in_comp_iter; /* in a comprehension's iterable */
} Context;

static bool check_body(const NodeList *body, Context cx, Diag *d);

static bool is_statement(NodeKind k) { return k >= N_MODULE; }

static bool is_comprehension(NodeKind k) {
  return k == N_LISTCOMP || k == N_SETCOMP || k == N_DICTCOMP || k == N_GENEXP;
}

/* yield and await in an expression, in context cx. A lambda's body is a
 * function of its own (not async); a comprehension's first iterable is
 * evaluated outside it, the rest inside. */
static bool check_expr(const Node *e, Context cx, Diag *d) {
  if (!e) return true;
  switch (e->kind) {
  case N_YIELD:
  case N_YIELD_FROM:
    if (!cx.in_def) {
      diag_error(d, e->span, "'yield' outside a function");
      return false;
    }
    if (cx.in_comp) {
      diag_error(d, e->span, "'yield' inside a comprehension");
      return false;
    }
    break;
  case N_AWAIT:
    if (!cx.in_async) {
      diag_error(d, e->span, "'await' outside an async function");
      return false;
    }
    break;
  case N_NAMEDEXPR:
    if (cx.in_comp_iter) {
      diag_error(d, e->span,
                 "assignment expression cannot be used in a comprehension "
                 "iterable expression");
      return false;
    }
    break;
  case N_LAMBDA: {
    for (int i = 0; i < e->list.len; i++) /* defaults: evaluated outside */
      if (!check_expr(e->list.items[i]->b, cx, d)) return false;
    Context inner = {.in_def = true, .in_comp_iter = cx.in_comp_iter};
    return check_expr(e->a, inner, d);
  }
  case N_COMPFOR: { /* an inner clause: its iterable is one */
    Context iter = cx;
    iter.in_comp_iter = true;
    if (!check_expr(e->b, cx, d) || !check_expr(e->c, iter, d)) return false;
    for (int i = 0; i < e->list.len; i++)
      if (!check_expr(e->list.items[i], cx, d)) return false;
    return true;
  }
  default:
    if (is_comprehension(e->kind)) {
      /* the first iterable is evaluated outside; the rest inside, where a
       * generator expression may await (it is then an async one) */
      Context iter = cx;
      iter.in_comp_iter = true;
      if (!check_expr(e->c, iter, d)) return false;
      Context inner = cx;
      inner.in_comp = true;
      inner.in_comp_iter = false;
      inner.in_async |= e->kind == N_GENEXP;
      int next = 0;
      for (const Node *k; (k = ast_next_child(e, &next));)
        if (k != e->c && !check_expr(k, inner, d)) return false;
      return true;
    }
    break;
  }
  int next = 0;
  for (const Node *k; (k = ast_next_child(e, &next));)
    if (!check_expr(k, cx, d)) return false;
  return true;
}

/* The expressions of statement s (its children that are not statements:
 * the statement kinds hold their blocks in lists of statements). */
static bool check_own_exprs(const Node *s, Context cx, Diag *d) {
  int next = 0;
  for (const Node *k; (k = ast_next_child(s, &next));)
    if (!is_statement(k->kind) && !check_expr(k, cx, d)) return false;
  return true;
}

static bool async_ok(const Node *s, Context cx, const char *what, Diag *d) {
  if (s->op != TOK_ASYNC || cx.in_async) return true;
  diag_error(d, s->span, "'%s' outside an async function", what);
  return false;
}

/* One statement, and the blocks inside it with their own context. */
static bool check_stmt(const Node *s, Context cx, Diag *d) {
  Context inner = cx; /* blocks of if, for, while, with, try: still at
                         module level when their statement is */
  switch (s->kind) {
  case N_RETURN:
    if (!cx.in_def) diag_error(d, s->span, "'return' outside a function");
    return cx.in_def && check_expr(s->a, cx, d);
  case N_BREAK:
  case N_CONTINUE:
    if (!cx.in_loop)
      diag_error(d, s->span, "'%s' outside a loop", s->kind == N_BREAK ? "break" : "continue");
    return cx.in_loop;
  case N_FROM_IMPORT:
    if (s->ival && !cx.at_module)
      diag_error(d, s->span, "'import *' is only allowed at module level");
    return !s->ival || cx.at_module;
  case N_NONLOCAL:
    if (!cx.in_def) diag_error(d, s->span, "nonlocal declaration not allowed at module level");
    return cx.in_def;
  case N_IF: /* an elif chain by a loop, not a recursion per arm */
    for (;;) {
      if (!check_expr(s->a, cx, d) || !check_body(&s->list, inner, d)) return false;
      if (s->list2.len != 1 || s->list2.items[0]->kind != N_IF)
        return check_body(&s->list2, inner, d);
      s = s->list2.items[0];
    }
  case N_WITH:
    return async_ok(s, cx, "async with", d) && check_own_exprs(s, cx, d) &&
           check_body(&s->list, inner, d);
  case N_FOR:
  case N_WHILE: {
    if (!async_ok(s, cx, "async for", d) || !check_own_exprs(s, cx, d)) return false;
    Context loop = inner;
    loop.in_loop = true;
    return check_body(&s->list, loop, d) && check_body(&s->list2, inner, d);
  }
  case N_TRY:
    if (!check_body(&s->list, inner, d)) return false;
    for (int i = 0; i < s->list2.len; i++) {
      const Node *c = s->list2.items[i];
      if (!check_expr(c->a, cx, d) || !check_body(&c->list, inner, d)) return false;
    }
    return true;
  case N_DEF:
    if (!check_own_exprs(s, cx, d)) return false; /* defaults, annotations, decorators */
    inner = (Context){.in_def = true, .in_async = s->op == TOK_ASYNC};
    return check_body(&s->list2, inner, d);
  case N_CLASS:
    if (!check_own_exprs(s, cx, d)) return false; /* bases, decorators */
    inner = (Context){0};
    return check_body(&s->list2, inner, d);
  default:
    return check_own_exprs(s, cx, d);
  }
}

static bool check_body(const NodeList *body, Context cx, Diag *d) {
  for (int i = 0; i < body->len; i++)
    if (!check_stmt(body->items[i], cx, d)) return false;
  return true;
}

bool ast_check_context(const Node *module, Diag *d) {
  Context cx = {.at_module = true};
  return check_body(&module->list, cx, d);
}
