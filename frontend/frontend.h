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
  N_STR,   /* str (decoded, NUL-terminated; escapes processed; r"" raw) */
  N_TRUE,
  N_FALSE,
  N_NONE,
  N_ATTR,       /* a.name */
  N_SUBSCRIPT,  /* a[b]; b is an N_TUPLE for a[i, j] */
  N_SLICE,      /* a:b:c inside a subscript; any of a/b/c may be NULL */
  N_TUPLE,      /* list = items (from `x, y` or `(x, y)`); N_STAR items */
  N_LIST,       /* list = items; N_STAR items */
  N_LISTCOMP,   /* [a for b in c if list...]: a=element, b=target, c=iterable,
                   list = conditions; nested `for` clauses: list2 = further
                   N_COMPFOR nodes */
  N_COMPFOR,    /* inner `for b in c if list...` clause of a comprehension */
  N_CALL,       /* a(list..., list2...): list = positional arguments, N_STAR
                   (*a) and N_DSTAR (**a) in source order, list2 = N_KEYWORD
                   nodes */
  N_KEYWORD,    /* name=a (inside N_CALL.list2 and N_CLASS.list) */
  N_UNARY,      /* op a; op is one of '-', '+', '~', TOK_NOT */
  N_BINARY,     /* a op b; op: '+','-','*','/','%','&','|','^', TOK_FLOORDIV,
                   TOK_POW, TOK_LSHIFT, TOK_RSHIFT, '@' */
  N_COMPARE,    /* chain: list = operands (n+1), ops = comparison ops (n) */
  N_BOOLOP,     /* a and/or b; op is TOK_AND or TOK_OR */
  N_IFEXP,      /* b if a else c: a=cond, b=then, c=else */
  N_STAR,       /* *a: a call argument, an item of a tuple, list or set
                   display, a starred assignment or for target */
  N_BYTES,      /* b"...": str = the bytes (may hold NUL), ival = length */
  N_IMAG,       /* imaginary literal 1.5j: fval = its imaginary part */
  N_ELLIPSIS,   /* ... */
  N_FSTRING,    /* f"...": list = parts in order, N_STR (literal text, escapes
                   and {{ }} decoded) and N_FORMATTED; adjacent literals are
                   one N_FSTRING when any of them is an f-string */
  N_FORMATTED,  /* {a!op:b} in an f-string: a = expression, op = conversion
                   'r', 's', 'a' or 0, b = format spec (an N_FSTRING) or NULL;
                   {x=} adds "x=" to the literal text before it and, without
                   a conversion or spec, op = 'r' (Python's rule) */
  N_DICT,       /* {k: v, **m}: list = N_KEYVALUE and N_DSTAR items */
  N_KEYVALUE,   /* a: b, an item of N_DICT and the element of N_DICTCOMP */
  N_DSTAR,      /* **a: in N_CALL.list, N_CLASS.list and N_DICT.list */
  N_SET,        /* {a, b}: list = items; N_STAR items */
  N_SETCOMP,    /* {a for ...}: as N_LISTCOMP */
  N_DICTCOMP,   /* {k: v for ...}: as N_LISTCOMP, a = an N_KEYVALUE */
  N_GENEXP,     /* (a for ...): as N_LISTCOMP; the sole argument of a call
                   (sum(x for x in y)) spans the call's parentheses */
  N_LAMBDA,     /* lambda list: a; list = N_PARAM nodes (no annotations) */
  N_NAMEDEXPR,  /* a := b; a is an N_NAME */
  N_AWAIT,      /* await a */
  N_YIELD,      /* yield a (a may be NULL) */
  N_YIELD_FROM, /* yield from a */
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
  N_ASSERT,      /* assert a, b */
  N_IF,          /* if a: list  else: list2 (elif = an N_IF alone in list2: not
                    nesting, a chain has any length; walks follow it by a loop) */
  N_WHILE,       /* while a: list  else: list2 */
  N_FOR,         /* for a in b: list  else: list2; op = TOK_ASYNC for
                    `async for` */
  N_WITH,        /* with a as b: list (b may be NULL); several items are nested
                    N_WITH nodes; op = TOK_ASYNC for `async with` */
  N_DEF,         /* def name(list = N_PARAM...) -> a: list2 = body;
                    list3 = decorators (expressions, outermost first);
                    op = TOK_ASYNC for `async def` */
  N_PARAM,       /* name: a = b  (a = annotation or NULL, b = default or NULL);
                    op = '*' for *args, TOK_POW for **kwargs, 0 otherwise;
                    ival = PARAM_KWONLY (after `*` or *args) or PARAM_POSONLY
                    (before `/`) or 0: the markers `*` and `/` are no nodes */
  N_CLASS,       /* class name(list = bases, then N_KEYWORD (metaclass=M),
                    N_STAR, N_DSTAR in source order): list2 = body;
                    list3 = decorators */
  N_IMPORT,      /* import str (dotted name); name = `as` alias or NULL;
                    `import a, b` is two N_IMPORT statements */
  N_FROM_IMPORT, /* from str import list (N_NAME nodes, an `as` alias in the
                    N_NAME's str; ival=1 for `*`); a relative import keeps
                    its dots in str (".m", ".."), op = their number */
  N_TRY,         /* try: list; list2 = clauses in source order: N_EXCEPT...,
                    then N_TRY_ELSE and/or N_FINALLY */
  N_EXCEPT,      /* except a as name: list (a, name may be NULL) */
  N_TRY_ELSE,    /* else: list (of a try) */
  N_FINALLY,     /* finally: list */
  N_RAISE,       /* raise a from b (a, b may be NULL) */
  N_GLOBAL,      /* global list (N_NAME nodes) */
  N_NONLOCAL,    /* nonlocal list (N_NAME nodes) */
  N_DEL          /* del list (targets) */
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
  TOK_ARROW,
  TOK_ASYNC /* N_DEF, N_FOR, N_WITH: op of the async forms */
};

/* N_PARAM.ival */
enum { PARAM_KWONLY = 1, PARAM_POSONLY = 2 };

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
    int64_t ival;   /* N_INT; N_BYTES: length; N_PARAM: flags;
                       N_FROM_IMPORT: 1 for `*` */
    double fval;    /* N_FLOAT, N_IMAG */
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
