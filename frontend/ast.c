/* ast.c: AST nodes, lists, names, the depth check and the text dump.
 *
 * The dump (`tlsc --emit=ast`) is the form golden tests hold:
 *
 *   (assign 20:9-20:41
 *     targets:
 *       (attr 20:9-20:28 producer_stage
 *         (name 20:9-20:13 self))
 *     annotation:
 *       (name 20:30-20:35 int32)
 *     value:
 *       (int 20:38-20:39 0))
 *
 * Each node prints its kind, its span (line:col of the first character and
 * of one past the last), its scalar fields, then its children in a fixed
 * order per kind, under a label where the role is not obvious.
 */
#include "frontend/parse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

Node *node_new(Arena *ar, NodeKind kind, Span span) {
  Node *n = arena_alloc(ar, sizeof *n);
  n->kind = kind;
  n->span = span;
  return n;
}

Span span_join(Span first, Span last) {
  Span s = first;
  s.end_line = last.end_line;
  s.end_col = last.end_col;
  return s;
}

/* Lists live in the arena: growing one copies it into a bigger block. */
void nodelist_push(Arena *ar, NodeList *l, Node *n) {
  if (l->len == l->cap) {
    int cap = l->cap ? l->cap * 2 : 4;
    Node **items = arena_alloc(ar, sizeof(Node *) * (size_t)cap);
    if (l->len) memcpy(items, l->items, sizeof(Node *) * (size_t)l->len);
    l->items = items;
    l->cap = cap;
  }
  l->items[l->len++] = n;
}

/* ------------------------------------------------------------ names */

/* Where each kind keeps its children, in dump order. */
typedef enum Slot { S_NONE, S_A, S_B, S_C, S_LIST, S_LIST2, S_LIST3 } Slot;

typedef struct SlotLabel {
  Slot slot;
  const char *label; /* "" prints the children without a label line */
} SlotLabel;

typedef struct KindInfo {
  const char *name;
  SlotLabel slots[5];
} KindInfo;

static const KindInfo kinds[] = {
    [N_NAME] = {"name", {{0}}},
    [N_INT] = {"int", {{0}}},
    [N_FLOAT] = {"float", {{0}}},
    [N_STR] = {"str", {{0}}},
    [N_TRUE] = {"true", {{0}}},
    [N_FALSE] = {"false", {{0}}},
    [N_NONE] = {"none", {{0}}},
    [N_ATTR] = {"attr", {{S_A, ""}}},
    [N_SUBSCRIPT] = {"subscript", {{S_A, ""}, {S_B, ""}}},
    [N_SLICE] = {"slice", {{S_A, "lower"}, {S_B, "upper"}, {S_C, "step"}}},
    [N_TUPLE] = {"tuple", {{S_LIST, ""}}},
    [N_LIST] = {"list", {{S_LIST, ""}}},
    [N_LISTCOMP] =
        {"listcomp",
         {{S_A, "element"}, {S_B, "target"}, {S_C, "iter"}, {S_LIST, "if"}, {S_LIST2, "for"}}},
    [N_COMPFOR] = {"compfor", {{S_B, "target"}, {S_C, "iter"}, {S_LIST, "if"}}},
    [N_CALL] = {"call", {{S_A, ""}, {S_LIST, ""}, {S_LIST2, ""}}},
    [N_KEYWORD] = {"keyword", {{S_A, ""}}},
    [N_UNARY] = {"unary", {{S_A, ""}}},
    [N_BINARY] = {"binary", {{S_A, ""}, {S_B, ""}}},
    [N_COMPARE] = {"compare", {{S_LIST, ""}}},
    [N_BOOLOP] = {"boolop", {{S_A, ""}, {S_B, ""}}},
    [N_IFEXP] = {"ifexp", {{S_A, "cond"}, {S_B, "then"}, {S_C, "else"}}},
    [N_STAR] = {"star", {{S_A, ""}}},
    [N_BYTES] = {"bytes", {{0}}},
    [N_IMAG] = {"imag", {{0}}},
    [N_ELLIPSIS] = {"ellipsis", {{0}}},
    [N_FSTRING] = {"fstring", {{S_LIST, ""}}},
    [N_FORMATTED] = {"formatted", {{S_A, ""}, {S_B, "spec"}}},
    [N_DICT] = {"dict", {{S_LIST, ""}}},
    [N_KEYVALUE] = {"keyvalue", {{S_A, "key"}, {S_B, "value"}}},
    [N_DSTAR] = {"dstar", {{S_A, ""}}},
    [N_SET] = {"set", {{S_LIST, ""}}},
    [N_SETCOMP] =
        {"setcomp",
         {{S_A, "element"}, {S_B, "target"}, {S_C, "iter"}, {S_LIST, "if"}, {S_LIST2, "for"}}},
    [N_DICTCOMP] =
        {"dictcomp",
         {{S_A, "element"}, {S_B, "target"}, {S_C, "iter"}, {S_LIST, "if"}, {S_LIST2, "for"}}},
    [N_GENEXP] =
        {"genexp",
         {{S_A, "element"}, {S_B, "target"}, {S_C, "iter"}, {S_LIST, "if"}, {S_LIST2, "for"}}},
    [N_LAMBDA] = {"lambda", {{S_LIST, "params"}, {S_A, "body"}}},
    [N_NAMEDEXPR] = {"namedexpr", {{S_A, ""}, {S_B, ""}}},
    [N_AWAIT] = {"await", {{S_A, ""}}},
    [N_YIELD] = {"yield", {{S_A, ""}}},
    [N_YIELD_FROM] = {"yield_from", {{S_A, ""}}},
    [N_MODULE] = {"module", {{S_LIST, ""}}},
    [N_EXPR_STMT] = {"expr", {{S_A, ""}}},
    [N_ASSIGN] = {"assign", {{S_LIST, "targets"}, {S_B, "annotation"}, {S_A, "value"}}},
    [N_ANNDECL] = {"anndecl", {{S_A, "target"}, {S_B, "annotation"}}},
    [N_AUGASSIGN] = {"augassign", {{S_A, "target"}, {S_B, "value"}}},
    [N_RETURN] = {"return", {{S_A, ""}}},
    [N_PASS] = {"pass", {{0}}},
    [N_BREAK] = {"break", {{0}}},
    [N_CONTINUE] = {"continue", {{0}}},
    [N_ASSERT] = {"assert", {{S_A, "test"}, {S_B, "message"}}},
    [N_IF] = {"if", {{S_A, "cond"}, {S_LIST, "then"}, {S_LIST2, "else"}}},
    [N_WHILE] = {"while", {{S_A, "cond"}, {S_LIST, "body"}, {S_LIST2, "else"}}},
    [N_FOR] = {"for", {{S_A, "target"}, {S_B, "iter"}, {S_LIST, "body"}, {S_LIST2, "else"}}},
    [N_WITH] = {"with", {{S_A, "context"}, {S_B, "as"}, {S_LIST, "body"}}},
    [N_DEF] = {"def",
               {{S_LIST3, "decorators"}, {S_LIST, "params"}, {S_A, "returns"}, {S_LIST2, "body"}}},
    [N_PARAM] = {"param", {{S_A, "annotation"}, {S_B, "default"}}},
    [N_CLASS] = {"class", {{S_LIST3, "decorators"}, {S_LIST, "bases"}, {S_LIST2, "body"}}},
    [N_IMPORT] = {"import", {{0}}},
    [N_FROM_IMPORT] = {"from_import", {{S_LIST, ""}}},
    [N_TRY] = {"try", {{S_LIST, "body"}, {S_LIST2, ""}}},
    [N_EXCEPT] = {"except", {{S_A, "type"}, {S_LIST, "body"}}},
    [N_TRY_ELSE] = {"else", {{S_LIST, "body"}}},
    [N_FINALLY] = {"finally", {{S_LIST, "body"}}},
    [N_RAISE] = {"raise", {{S_A, "exc"}, {S_B, "cause"}}},
    [N_GLOBAL] = {"global", {{S_LIST, ""}}},
    [N_NONLOCAL] = {"nonlocal", {{S_LIST, ""}}},
    [N_DEL] = {"del", {{S_LIST, ""}}},
};

const char *node_kind_name(NodeKind k) {
  if ((unsigned)k < sizeof kinds / sizeof kinds[0] && kinds[k].name) return kinds[k].name;
  return "?";
}

const char *op_name(int op) {
  switch (op) {
  case '+':
    return "+";
  case '-':
    return "-";
  case '*':
    return "*";
  case '/':
    return "/";
  case '%':
    return "%";
  case '@':
    return "@";
  case '&':
    return "&";
  case '|':
    return "|";
  case '^':
    return "^";
  case '~':
    return "~";
  case TOK_LT:
    return "<";
  case TOK_GT:
    return ">";
  case TOK_FLOORDIV:
    return "//";
  case TOK_POW:
    return "**";
  case TOK_LSHIFT:
    return "<<";
  case TOK_RSHIFT:
    return ">>";
  case TOK_EQ:
    return "==";
  case TOK_NE:
    return "!=";
  case TOK_LE:
    return "<=";
  case TOK_GE:
    return ">=";
  case TOK_AND:
    return "and";
  case TOK_OR:
    return "or";
  case TOK_NOT:
    return "not";
  case TOK_IN:
    return "in";
  case TOK_NOTIN:
    return "not in";
  case TOK_IS:
    return "is";
  case TOK_ISNOT:
    return "is not";
  case TOK_ARROW:
    return "->";
  default:
    return "?";
  }
}

/* ------------------------------------------------------------ children */

static const Node *slot_node(const Node *n, Slot s) {
  return s == S_A ? n->a : s == S_B ? n->b : s == S_C ? n->c : NULL;
}

static const NodeList *slot_list(const Node *n, Slot s) {
  return s == S_LIST ? &n->list : s == S_LIST2 ? &n->list2 : s == S_LIST3 ? &n->list3 : NULL;
}

/* The elif of an if: the N_IF alone in its else list. A chain of them is
 * one statement to the user, not nesting: it sits at its if's depth, and
 * every walk here (and in eval_stmt.c) follows the chain with a loop,
 * never a recursion per arm. */
static const Node *elif_of(const Node *n) {
  if (n->kind == N_IF && n->list2.len == 1 && n->list2.items[0]->kind == N_IF)
    return n->list2.items[0];
  return NULL;
}

/* The child after position *next of n (a, b, c, then the items of list,
 * list2 and list3), advancing *next; NULL after the last. */
const Node *ast_next_child(const Node *n, int *next) {
  const Node *kids[3] = {n->a, n->b, n->c};
  while (*next < 3) {
    const Node *k = kids[(*next)++];
    if (k) return k;
  }
  int i = *next - 3;
  (*next)++;
  if (i < n->list.len) return n->list.items[i];
  i -= n->list.len;
  if (i < n->list2.len) return n->list2.items[i];
  i -= n->list2.len;
  if ((n->kind == N_DEF || n->kind == N_CLASS) && i < n->list3.len) return n->list3.items[i];
  return NULL;
}

/* ------------------------------------------------------- depth check */

static bool is_statement(NodeKind k) { return k >= N_MODULE; }

typedef struct DepthFrame {
  const Node *node;
  const Node *stmt; /* the innermost statement holding node */
  int depth;
  int next; /* next_child position */
} DepthFrame;

/* A depth-first walk in source order with one frame per level: the stack
 * never holds more than TLS_MAX_NESTING + 1 frames, whatever the width of
 * the tree (a module of a million statements costs nothing here). An elif
 * replaces its if's frame (it is the if's last child). Too deep an
 * expression is reported at its statement (the deepest leaf of
 * `a + a + ... + a` would be an odd place); too deep a statement at
 * itself. */
bool ast_check_depth(const Node *root, Diag *d) {
  DepthFrame st[TLS_MAX_NESTING + 1];
  int len = 0;
  st[len++] = (DepthFrame){root, root, 0, 0};
  while (len > 0) {
    DepthFrame *f = &st[len - 1];
    const Node *child = ast_next_child(f->node, &f->next);
    if (!child) {
      len--;
      continue;
    }
    const Node *stmt = is_statement(child->kind) ? child : f->stmt;
    if (child == elif_of(f->node)) {
      *f = (DepthFrame){child, stmt, f->depth, 0};
      continue;
    }
    if (f->depth + 1 > TLS_MAX_NESTING) {
      diag_error(d, stmt->span, "too deeply nested (more than %d levels)", TLS_MAX_NESTING);
      return false;
    }
    st[len++] = (DepthFrame){child, stmt, f->depth + 1, 0};
  }
  return true;
}

/* ------------------------------------------------------------- dump */

/* A string as a C-style literal, non-printable bytes as \xHH; len bytes
 * (a bytes literal may hold NUL), and with high set bytes past 0x7f as
 * \xHH too (a str's are UTF-8, printed as they are). */
static void dump_bytes(FILE *out, const char *s, size_t len, bool high) {
  fputc('"', out);
  for (const unsigned char *p = (const unsigned char *)s; p < (const unsigned char *)s + len; p++) {
    switch (*p) {
    case '"':
      fputs("\\\"", out);
      break;
    case '\\':
      fputs("\\\\", out);
      break;
    case '\n':
      fputs("\\n", out);
      break;
    case '\t':
      fputs("\\t", out);
      break;
    case '\r':
      fputs("\\r", out);
      break;
    default:
      if (*p < 0x20 || *p == 0x7f || (high && *p > 0x7f))
        fprintf(out, "\\x%02x", *p);
      else
        fputc(*p, out);
    }
  }
  fputc('"', out);
}

static void dump_string(FILE *out, const char *s) { dump_bytes(out, s, strlen(s), false); }

/* A double as Python's repr writes it: the fewest digits that read back
 * as the same value, fixed notation for exponents -4..15, else 1e+20. */
static void dump_float(FILE *out, double v) {
  char buf[64];
  int prec = 0;
  for (prec = 0; prec < 17; prec++) {
    snprintf(buf, sizeof buf, "%.*e", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
  int exp10 = atoi(strchr(buf, 'e') + 1);
  if (isfinite(v) && exp10 >= -4 && exp10 < 16) {
    int decimals = prec - exp10 > 1 ? prec - exp10 : 1;
    snprintf(buf, sizeof buf, "%.*f", decimals, v);
  }
  fputs(buf, out);
}

/* Kind, span and the scalar fields of a node, on one line. */
static void dump_head(FILE *out, const Node *n) {
  const Span *s = &n->span;
  fprintf(out, "(%s %d:%d-%d:%d", node_kind_name(n->kind), s->line, s->col, s->end_line,
          s->end_col);
  switch (n->kind) {
  case N_UNARY:
  case N_BINARY:
  case N_BOOLOP:
  case N_AUGASSIGN:
    fprintf(out, " %s", op_name(n->op));
    break;
  case N_PARAM:
    if (n->op) fprintf(out, " %s", op_name(n->op));
    if (n->name) fprintf(out, " %s", n->name);
    if (n->ival & PARAM_POSONLY) fputs(" posonly", out);
    if (n->ival & PARAM_KWONLY) fputs(" kwonly", out);
    return;
  case N_DEF:
  case N_FOR:
  case N_WITH:
    if (n->op == TOK_ASYNC) fputs(" async", out);
    break;
  case N_FORMATTED:
    if (n->op) fprintf(out, " !%c", n->op);
    return;
  case N_EXCEPT:
    if (n->name) fprintf(out, " as %s", n->name);
    return;
  case N_BYTES: /* b"..." */
    fputs(" b", out);
    dump_bytes(out, n->str, (size_t)n->ival, true);
    return;
  case N_IMAG:
    fputc(' ', out);
    dump_float(out, n->fval);
    fputc('j', out);
    return;
  case N_COMPARE:
    for (int i = 0; i + 1 < n->list.len; i++) fprintf(out, " %s", op_name(n->ops[i]));
    break;
  case N_IMPORT: /* import "a.b" as c */
    fputc(' ', out);
    dump_string(out, n->str);
    if (n->name) fprintf(out, " as %s", n->name);
    return;
  default:
    break;
  }
  if (n->name) fprintf(out, " %s", n->name);
  if (n->kind == N_INT) fprintf(out, " %lld", (long long)n->ival);
  if (n->kind == N_FLOAT) {
    fputc(' ', out);
    dump_float(out, n->fval);
  }
  if (n->str && n->kind == N_NAME) {
    fprintf(out, " as %s", n->str);
  } else if (n->str) {
    fputc(' ', out);
    dump_string(out, n->str);
  }
  if (n->kind == N_FROM_IMPORT && n->ival) fputs(" *", out);
}

static void dump_node(FILE *out, const Node *n, int indent);

static void dump_child(FILE *out, const Node *n, int indent) {
  fputc('\n', out);
  dump_node(out, n, indent);
}

/* The recursion follows the tree's depth (bounded by ast_check_depth). An
 * elif chain is one statement and prints flat, by a loop: each elif is a
 * line `elif SPAN` in place of `else:`, then its slots at its if's
 * indentation, all closed by the if's one parenthesis (the nested form
 * would print O(n^2) bytes of indentation for n arms). */
static void dump_node(FILE *out, const Node *n, int indent) {
  fprintf(out, "%*s", indent, "");
  if (!n) {
    fputs("(null)", out);
    return;
  }
  dump_head(out, n);
  for (;;) {
    const KindInfo *info = &kinds[n->kind];
    const Node *elif = elif_of(n);
    for (int i = 0; i < 5 && info->slots[i].slot != S_NONE; i++) {
      const SlotLabel *sl = &info->slots[i];
      if (elif && sl->slot == S_LIST2) break; /* the if's last slot */
      const Node *child = slot_node(n, sl->slot);
      const NodeList *list = slot_list(n, sl->slot);
      if (!child && (!list || list->len == 0)) continue;
      int child_indent = indent + 2;
      if (sl->label[0]) {
        fprintf(out, "\n%*s%s:", indent + 2, "", sl->label);
        child_indent += 2;
      }
      if (child) dump_child(out, child, child_indent);
      for (int j = 0; list && j < list->len; j++) dump_child(out, list->items[j], child_indent);
    }
    if (!elif) break;
    const Span *s = &elif->span;
    fprintf(out, "\n%*selif %d:%d-%d:%d", indent + 2, "", s->line, s->col, s->end_line, s->end_col);
    n = elif;
  }
  fputc(')', out);
}

void ast_dump(FILE *out, const Node *module) {
  dump_node(out, module, 0);
  fputc('\n', out);
}
