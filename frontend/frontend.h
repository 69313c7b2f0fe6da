/* frontend.h: everything the later layers may use from the front end.
 *
 * text -> tokens (lexer.l, indent.c) -> AST (parser.y): the AST, the parser's
 * entry and the AST printer. The utilities (arena, sources, diagnostics) are
 * in base/base.h.
 */
#ifndef TLSC_FRONTEND_H
#define TLSC_FRONTEND_H

#include "base/base.h"

/* Limits of the front end on hostile input (each refused with a
 * diagnostic). */
enum {
  TLS_MAX_NESTING = 200,     /* brackets + blocks + expression depth */
  TLS_MAX_IDENT_LEN = 256,   /* identifier length in bytes */
  TLS_MAX_LITERAL_LEN = 4096 /* string / number literal length in bytes */
};

/* ------------------------------------------------------------------ AST */

typedef enum NodeKind {
  /* expressions */
  N_NAME,  /* name */
  N_INT,   /* ival */
  N_FLOAT, /* fval */
  N_STR,   /* str (decoded, NUL-terminated; escapes processed) */
  N_TRUE,
  N_FALSE,
  N_NONE,
  N_ATTR,      /* a.name */
  N_SUBSCRIPT, /* a[b]; b is an N_TUPLE for a[i, j] */
  N_SLICE,     /* a:b:c inside a subscript; any of a/b/c may be NULL */
  N_TUPLE,     /* list = items (from `x, y` or `(x, y)`) */
  N_LIST,      /* list = items */
  N_LISTCOMP,  /* [a for b in c if list...]: a=element, b=target, c=iterable,
                  list = conditions; nested `for` clauses: list2 = further
                  N_COMPFOR nodes */
  N_COMPFOR,   /* inner `for b in c if list...` clause of a comprehension */
  N_CALL,      /* a(list..., list2...): list = positional args,
                  list2 = N_KEYWORD nodes */
  N_KEYWORD,   /* name=a (only inside N_CALL.list2) */
  N_UNARY,     /* op a; op is one of '-', '+', '~', TOK_NOT */
  N_BINARY,    /* a op b; op: '+','-','*','/','%','&','|','^', TOK_FLOORDIV,
                  TOK_POW, TOK_LSHIFT, TOK_RSHIFT, '@' */
  N_COMPARE,   /* chain: list = operands (n+1), ops = comparison ops (n) */
  N_BOOLOP,    /* a and/or b; op is TOK_AND or TOK_OR */
  N_IFEXP,     /* b if a else c: a=cond, b=then, c=else */
  N_STAR,      /* *a (in call arguments) */
  /* statements */
  N_MODULE,    /* list = statements */
  N_EXPR_STMT, /* a */
  N_ASSIGN,    /* list = targets (a = b = value has two), a = value,
                  b = annotation or NULL (x: int32 = 0) */
  N_ANNDECL,   /* a: b (annotation without a value) */
  N_AUGASSIGN, /* a op= b; op as in N_BINARY */
  N_RETURN,    /* a (may be NULL) */
  N_PASS,
  N_BREAK,
  N_CONTINUE,
  N_ASSERT,     /* assert a, b */
  N_IF,         /* if a: list  else: list2 (elif = an N_IF alone in list2: not
                   nesting, a chain has any length; walks follow it by a loop) */
  N_WHILE,      /* while a: list */
  N_FOR,        /* for a in b: list */
  N_WITH,       /* with a as b: list (b may be NULL); several items are nested
                  N_WITH nodes */
  N_DEF,        /* def name(list = N_PARAM...) -> a: list2 = body;
                  list3 = decorators (expressions, outermost first) */
  N_PARAM,      /* name: a = b  (a = annotation or NULL, b = default or NULL);
                  op = '*' for *args, TOK_POW for **kwargs, 0 otherwise */
  N_CLASS,      /* class name(list = bases): list2 = body; list3 = decorators */
  N_IMPORT,     /* import str (dotted name); name = `as` alias or NULL */
  N_FROM_IMPORT /* from str import list (N_NAME nodes, an `as` alias in the
                   N_NAME's str; ival=1 for `*`) */
} NodeKind;

/* Token codes shared with the parser for multi-character operators. Single
 * characters use their own ASCII code. */
enum {
  TOK_FLOORDIV = 256,
  TOK_POW,
  TOK_LSHIFT,
  TOK_RSHIFT,
  TOK_EQ,
  TOK_NE,
  TOK_LE,
  TOK_GE,
  TOK_LT = '<',
  TOK_GT = '>',
  TOK_AND = 300,
  TOK_OR,
  TOK_NOT,
  TOK_IN,
  TOK_NOTIN,
  TOK_IS,
  TOK_ISNOT,
  TOK_ARROW
};

typedef struct Node Node;

typedef struct NodeList {
  Node **items;
  int len, cap;
} NodeList;

/* 112 bytes: the fields no kind uses together share storage (a script of
 * simple statements costs about three nodes a line). */
struct Node {
  NodeKind kind;
  int op;          /* operator code (see kinds) */
  Span span;       /* whole construct */
  char *name;      /* identifier (arena) */
  char *str;       /* string literal / dotted module name (arena) */
  Node *a, *b, *c; /* children, meaning per kind */
  NodeList list, list2;
  union {
    NodeList list3; /* N_DEF, N_CLASS: decorators */
    int64_t ival;   /* N_INT; N_FROM_IMPORT: 1 for `*` */
    double fval;    /* N_FLOAT */
    int *ops;       /* N_COMPARE: list.len - 1 operators */
  };                /* list3.len reads 0 on every other kind (only list3 writes there) */
};

void nodelist_push(Arena *ar, NodeList *l, Node *n);

/* Parses a whole file. Returns the N_MODULE, or NULL after reporting at
 * least one error through d. Never crashes, hangs or overflows the stack on
 * any input. */
Node *parse_source(Arena *ar, const Source *src, Diag *d);

/* Prints the AST as an indented S-expression-like tree with spans, the form
 * that golden tests hold (`tlsc --emit=ast`). */
void ast_dump(FILE *out, const Node *module);
const char *node_kind_name(NodeKind k);
/* "+", "//", "and", "not in" ... for an operator code. */
const char *op_name(int op);

#endif
