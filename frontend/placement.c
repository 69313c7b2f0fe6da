/* placement.c: the placement rules Python checks at compile time.
 *
 * `return` only inside a def, `break` and `continue` only inside a loop
 * (a def or class body starts afresh), `from x import *` only at module
 * level. Runs after ast_check_depth, so its recursion over nested blocks
 * is bounded (an elif chain, which is not nesting, is followed by a loop).
 */
#include "frontend/parse.h"

typedef struct Context {
  bool in_def, in_loop, at_module;
} Context;

static bool check_body(const NodeList *body, Context cx, Diag *d);

/* One statement, and the blocks inside it with their own context. */
static bool check_stmt(const Node *s, Context cx, Diag *d) {
  Context inner = cx;
  inner.at_module = false;
  switch (s->kind) {
  case N_RETURN:
    if (!cx.in_def) diag_error(d, s->span, "'return' outside a function");
    return cx.in_def;
  case N_BREAK:
  case N_CONTINUE:
    if (!cx.in_loop)
      diag_error(d, s->span, "'%s' outside a loop", s->kind == N_BREAK ? "break" : "continue");
    return cx.in_loop;
  case N_FROM_IMPORT:
    if (s->ival && !cx.at_module)
      diag_error(d, s->span, "'import *' is only allowed at module level");
    return !s->ival || cx.at_module;
  case N_IF: /* an elif chain by a loop, not a recursion per arm */
    for (;;) {
      if (!check_body(&s->list, inner, d)) return false;
      if (s->list2.len != 1 || s->list2.items[0]->kind != N_IF)
        return check_body(&s->list2, inner, d);
      s = s->list2.items[0];
    }
  case N_WITH:
    return check_body(&s->list, inner, d);
  case N_FOR:
  case N_WHILE:
    inner.in_loop = true;
    return check_body(&s->list, inner, d);
  case N_DEF:
    inner = (Context){.in_def = true};
    return check_body(&s->list2, inner, d);
  case N_CLASS:
    inner = (Context){0};
    return check_body(&s->list2, inner, d);
  default:
    return true;
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
