/* parser.y: the grammar of .tls scripts (Python 3's grammar) -> AST.
 *
 * Tokens come from tls_lex (indent.c), which adds NEWLINE/INDENT/DEDENT to
 * flex's tokens. Expression levels follow Python's grammar one nonterminal
 * per precedence level, lowest first, so the precedence is Python's exactly.
 * Lists are left-recursive, so the parser stack grows only with nesting
 * (brackets and blocks, bounded by the lexer; prefix operators, bounded by
 * bison's YYMAXDEPTH), and ast_check_depth bounds the tree for every later
 * recursive walk. An if/elif chain is left-recursive too: it is not
 * nesting to the user, and ast_check_depth does not count it as such.
 *
 * The whole grammar of Python 3.12 that scripts beside kernels use is
 * parsed (host code: main(), benchmarks, lambdas, f-strings, dicts,
 * try/except...), so that a file compiles as written: the evaluator gives
 * meaning to what kernels use and reports the rest where it is run.
 * Python's rules that its grammar leaves to the compiler (starred targets,
 * parameter order, argument order, bare generator arguments, `except:`
 * last...) are checked here, in the actions.
 *
 * Hostile input costs memory and time linear in its size: every list grows
 * by doubling (statements go straight into their block's list), adjacent
 * strings, f-string pieces and dotted names grow a buffer, comparison
 * chains grow their operator array with their operand list, and repeated
 * names are found by sorting (check_call_args, check_params), never by
 * pairwise scans.
 *
 * Syntax errors are reported once, by yyreport_syntax_error below, naming
 * the unexpected token and what was expected; there are no error-recovery
 * rules, so the first error ends the parse (no cascades).
 */
%code requires {
#include "frontend/parse.h"

/* An if and its elifs so far; text that grows (see buf_append). */
typedef struct IfChain {
  Node *first, *last;
} IfChain;

typedef struct TextBuf {
  char *text;
  size_t len, cap;
} TextBuf;

/* A bytes literal's value (it may hold NUL bytes). */
typedef struct Bytes {
  char *text;
  size_t len;
} Bytes;

/* Adjacent string literals so far, or an f-string's pieces: the parts
 * finished (N_STR text and N_FORMATTED fields, for an f-string) and the
 * literal text not yet in a part. */
typedef struct StrAcc {
  NodeList parts;
  TextBuf text;
  Span text_span;
  bool has_text;
  bool is_f;     /* an f-string among the pieces */
  bool is_bytes; /* bytes pieces */
} StrAcc;

/* A replacement field, and the text of its `=` if any. */
typedef struct FieldVal {
  Node *node;
  char *debug;
  Span debug_span;
} FieldVal;
}

%code provides {
#define YYSTYPE TLS_STYPE
#define YYLTYPE TLS_LTYPE
}

%code {
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define AR (lx->ar)

/* Spans: first token's start to last token's end; empty rules sit at the
 * end of the previous symbol. */
#define YYLLOC_DEFAULT(Cur, Rhs, N)                                          \
  do {                                                                       \
    if (N) {                                                                 \
      (Cur).line = YYRHSLOC(Rhs, 1).line;                                    \
      (Cur).col = YYRHSLOC(Rhs, 1).col;                                      \
      (Cur).end_line = YYRHSLOC(Rhs, N).end_line;                            \
      (Cur).end_col = YYRHSLOC(Rhs, N).end_col;                              \
    } else {                                                                 \
      (Cur).line = (Cur).end_line = YYRHSLOC(Rhs, 0).end_line;               \
      (Cur).col = (Cur).end_col = YYRHSLOC(Rhs, 0).end_col;                  \
    }                                                                        \
  } while (0)

static void tls_error(Span *loc, Lexer *lx, const char *msg);
static Node *mk(Lexer *lx, NodeKind kind, Span sp);
static Node *mk_binary(Lexer *lx, int op, Node *a, Node *b, Span sp);
static Node *mk_unary(Lexer *lx, int op, Node *a, Span sp);
static Node *mk_list(Lexer *lx, NodeKind kind, Node *first, Span sp);
static Node *mk_name(Lexer *lx, char *name, Span sp);
static NodeList list1(Lexer *lx, Node *item);
static void push_small(Lexer *lx, NodeList *l, Node *s);
static bool check_target(Lexer *lx, Node *target);
static bool check_single_target(Lexer *lx, Node *target, const char *what);
static bool check_del(Lexer *lx, Node *target);
static bool no_star(Lexer *lx, Node *n);
static bool check_call_args(Lexer *lx, NodeList args);
static bool check_params(Lexer *lx, NodeList *params);
static Node *mk_with(Lexer *lx, NodeList items, NodeList body, Span sp, int op);
static Node *last_stmt(NodeList body);
static Node *mk_compound(Lexer *lx, NodeKind kind, Span head, NodeList body);
static Node *mk_comp(Lexer *lx, NodeKind kind, Node *elt, NodeList clauses, Span sp);
static Node *mk_call(Lexer *lx, Node *fn, NodeList args, bool comma, Span sp);
static Node *mk_param(Lexer *lx, int op, char *name, Node *ann, Node *def, Span sp);
static NodeList prepend(Lexer *lx, Node *first, NodeList rest);
static void push_compare(Lexer *lx, Node *cmp, int op, Node *operand);
static Node *end_if_chain(Node *first, Node *last);
static Node *mk_str(Lexer *lx, char *text, Span sp);
static void buf_start(TextBuf *b, char *text);
static void buf_append(Lexer *lx, TextBuf *b, const char *sep, const char *text);
static void acc_init(StrAcc *a);
static void acc_text(Lexer *lx, StrAcc *a, char *text, size_t len, Span sp);
static bool acc_piece(Lexer *lx, StrAcc *a, bool bytes, Span sp);
static void acc_field(Lexer *lx, StrAcc *a, FieldVal f);
static void acc_merge(Lexer *lx, StrAcc *dst, StrAcc *src);
static Node *acc_finish(Lexer *lx, StrAcc *a, Span sp);
static bool syntax(Lexer *lx, Span sp, const char *what);
}

%define api.prefix {tls_}
%define api.pure full
%define api.location.type {Span}
%define parse.error custom
%define parse.lac full
%locations
%param {Lexer *lx}

%union {
  Node *node;
  NodeList list;
  char *str;
  int64_t ival;
  double fval;
  int op;
  IfChain chain;
  TextBuf buf;
  Bytes bytes;
  StrAcc acc;
  FieldVal field;
}

%token <str> NAME "name"
%token <str> STRING "string"
%token <bytes> BYTES "bytes"
%token <ival> INT "integer"
%token <fval> FLOAT "number"
%token <fval> IMAG "imaginary number"
%token FSTRING_START "f-string"
%token FSTRING_END "end of the f-string"
%token <str> FSTRING_MIDDLE "f-string text"
%token <str> FDEBUG "'=' of a replacement field"
%token <op> FCONV "conversion"
%token NEWLINE "end of line"
%token INDENT "indent"
%token DEDENT "dedent"
%token DEF "def" CLASS "class" IF "if" ELIF "elif" ELSE "else" FOR "for"
%token IN "in" WHILE "while" WITH "with" AS "as" RETURN "return"
%token PASS "pass" BREAK "break" CONTINUE "continue" ASSERT "assert"
%token IMPORT "import" FROM "from" AND "and" OR "or" NOT "not" IS "is"
%token NONE "None" TRUE "True" FALSE "False"
%token LAMBDA "lambda" TRY "try" EXCEPT "except" FINALLY "finally"
%token RAISE "raise" GLOBAL "global" NONLOCAL "nonlocal" DEL "del"
%token YIELD "yield" ASYNC "async" AWAIT "await"
%token POW "**" FLOORDIV "//" LSHIFT "<<" RSHIFT ">>" LE "<=" GE ">="
%token EQ "==" NE "!=" ARROW "->" ELLIPSIS "..." COLONEQ ":="
%token <op> AUGASSIGN "augmented assignment"

%type <node> stmt_compound small_stmt expr_stmt assign_chain import_stmt
%type <node> if_stmt while_stmt for_stmt with_stmt try_stmt funcdef classdef
%type <node> decorated param with_item dotted_as_name import_as_name
%type <node> except_clause else_clause finally_clause
%type <node> test or_test and_test not_test comparison comp_chain expr
%type <node> xor_expr and_expr shift_expr arith_expr term factor power
%type <node> await_primary primary atom testlist tuple_items exprlist expr_items
%type <node> subscripts subscript opt_test arg call comp_for ret_opt
%type <node> default_opt ann_opt rhs yield_expr test_star star_expr
%type <node> named_star paren_tuple namedexpr expr_or_star
%type <node> lambdef lparam dict_item fspec
%type <list> module module_line stmts stmts_line simple_stmt small_stmts suite
%type <list> decorators params params_opt args test_star_seq expr_seq
%type <list> with_items comp_clauses comp_ifs subscript_seq named_seq
%type <list> dotted_as_names import_as_names import_targets names
%type <list> except_clauses try_tail lparams lparams_opt dict_items del_targets
%type <buf> dotted_name from_module dots
%type <acc> strings fstring fparts fspec_parts
%type <field> ffield
%type <str> fdebug
%type <op> comp_op fconv
%type <chain> if_chain

%start file

%%

/* A module: statements until end of file (an empty file is an empty
 * module). */
file:
    module {
      Span start = {1, 1, 1, 1};
      lx->module = mk(lx, N_MODULE, $1.len ? span_join(start, last_stmt($1)->span) : start);
      lx->module->list = $1;
    }
  ;

/* Each statement goes straight into its block's list: a line of simple
 * statements (a; b) is pushed one by one (module_line, stmts_line), with no
 * list of its own. */
module:
    %empty { $$ = (NodeList){0}; }
  | module stmt_compound { $$ = $1; nodelist_push(AR, &$$, $2); }
  | module_line NEWLINE { $$ = $1; }
  | module_line ';' NEWLINE { $$ = $1; }
  ;

module_line:
    module small_stmt { $$ = $1; push_small(lx, &$$, $2); }
  | module_line ';' small_stmt { $$ = $1; push_small(lx, &$$, $3); }
  ;

stmts:
    stmt_compound { $$ = list1(lx, $1); }
  | stmts stmt_compound { $$ = $1; nodelist_push(AR, &$$, $2); }
  | stmts_line NEWLINE { $$ = $1; }
  | stmts_line ';' NEWLINE { $$ = $1; }
  ;

stmts_line:
    small_stmt { $$ = (NodeList){0}; push_small(lx, &$$, $1); }
  | stmts small_stmt { $$ = $1; push_small(lx, &$$, $2); }
  | stmts_line ';' small_stmt { $$ = $1; push_small(lx, &$$, $3); }
  ;

/* The simple statements after a compound statement's colon. */
simple_stmt:
    small_stmts NEWLINE { $$ = $1; }
  | small_stmts ';' NEWLINE { $$ = $1; }
  ;

small_stmts:
    small_stmt { $$ = (NodeList){0}; push_small(lx, &$$, $1); }
  | small_stmts ';' small_stmt { $$ = $1; push_small(lx, &$$, $3); }
  ;

small_stmt:
    expr_stmt
  | PASS { $$ = mk(lx, N_PASS, @$); }
  | BREAK { $$ = mk(lx, N_BREAK, @$); }
  | CONTINUE { $$ = mk(lx, N_CONTINUE, @$); }
  | RETURN { $$ = mk(lx, N_RETURN, @$); }
  | RETURN testlist {
      if (!no_star(lx, $2)) YYABORT;
      $$ = mk(lx, N_RETURN, @$); $$->a = $2;
    }
  | ASSERT test { $$ = mk(lx, N_ASSERT, @$); $$->a = $2; }
  | ASSERT test ',' test { $$ = mk(lx, N_ASSERT, @$); $$->a = $2; $$->b = $4; }
  | import_stmt
  | RAISE { $$ = mk(lx, N_RAISE, @$); }
  | RAISE test { $$ = mk(lx, N_RAISE, @$); $$->a = $2; }
  | RAISE test FROM test { $$ = mk(lx, N_RAISE, @$); $$->a = $2; $$->b = $4; }
  | GLOBAL names { $$ = mk(lx, N_GLOBAL, @$); $$->list = $2; }
  | NONLOCAL names { $$ = mk(lx, N_NONLOCAL, @$); $$->list = $2; }
  | DEL del_targets {
      for (int i = 0; i < $2.len; i++)
        if (!check_del(lx, $2.items[i])) YYABORT;
      $$ = mk(lx, N_DEL, @$); $$->list = $2;
    }
  ;

names:
    NAME { $$ = list1(lx, mk_name(lx, $1, @1)); }
  | names ',' NAME { $$ = $1; nodelist_push(AR, &$$, mk_name(lx, $3, @3)); }
  ;

/* del a, b: two targets; del (a, b): one, a tuple. */
del_targets:
    expr_or_star { $$ = list1(lx, $1); }
  | expr_items { $$ = $1->list; }
  ;

/* Expression statements and the assignment forms:
 *   f(x)            x = y = 1        a, *b = t
 *   x += 1          x: int32         x: int32 = 0      yield x */
expr_stmt:
    testlist {
      if (!no_star(lx, $1)) YYABORT;
      $$ = mk(lx, N_EXPR_STMT, @$); $$->a = $1;
    }
  | yield_expr { $$ = mk(lx, N_EXPR_STMT, @$); $$->a = $1; }
  | assign_chain {
      if (!no_star(lx, $1->a)) YYABORT;
      $$ = $1;
    }
  | testlist AUGASSIGN rhs {
      if (!check_single_target(lx, $1, "augmented assignment") || !no_star(lx, $3)) YYABORT;
      $$ = mk(lx, N_AUGASSIGN, @$); $$->op = $2; $$->a = $1; $$->b = $3;
    }
  | test ':' test {
      if (!check_single_target(lx, $1, "annotation")) YYABORT;
      $$ = mk(lx, N_ANNDECL, @$); $$->a = $1; $$->b = $3;
    }
  | test ':' test '=' rhs {
      if (!check_single_target(lx, $1, "annotation") || !no_star(lx, $5)) YYABORT;
      $$ = mk(lx, N_ASSIGN, @$); $$->list = list1(lx, $1);
      $$->a = $5; $$->b = $3;
    }
  ;

rhs: testlist | yield_expr ;

/* a = b = value: every expression but the last is a target. */
assign_chain:
    testlist '=' rhs {
      if (!check_target(lx, $1)) YYABORT;
      $$ = mk(lx, N_ASSIGN, @$); $$->list = list1(lx, $1); $$->a = $3;
    }
  | assign_chain '=' rhs {
      if (!check_target(lx, $1->a)) YYABORT;
      $$ = $1; $$->span = @$;
      nodelist_push(AR, &$$->list, $1->a); $$->a = $3;
    }
  ;

/* import a.b [as c], ...   from [.]a.b import x [as y], ... | (x, y) | *
 * `import a, b` gives one N_IMPORT statement per module (push_small). */
import_stmt:
    IMPORT dotted_as_names {
      $$ = $2.items[0]; $$->span = span_join(@1, $$->span);
      for (int i = 1; i < $2.len; i++) nodelist_push(AR, &$$->list, $2.items[i]);
    }
  | FROM from_module IMPORT import_targets {
      $$ = mk(lx, N_FROM_IMPORT, @$); $$->str = $2.text; $$->list = $4;
      $$->op = (int)strspn($2.text, ".");
    }
  | FROM from_module IMPORT '*' {
      $$ = mk(lx, N_FROM_IMPORT, @$); $$->str = $2.text; $$->ival = 1;
      $$->op = (int)strspn($2.text, ".");
    }
  ;

/* m.n, .m, .., ...m: a relative import keeps its dots. */
from_module:
    dotted_name
  | dots
  | dots dotted_name { $$ = $1; buf_append(lx, &$$, "", $2.text); }
  ;

dots:
    '.' { buf_start(&$$, "."); }
  | ELLIPSIS { buf_start(&$$, "..."); }
  | dots '.' { $$ = $1; buf_append(lx, &$$, "", "."); }
  | dots ELLIPSIS { $$ = $1; buf_append(lx, &$$, "", "..."); }
  ;

dotted_as_names:
    dotted_as_name { $$ = list1(lx, $1); }
  | dotted_as_names ',' dotted_as_name { $$ = $1; nodelist_push(AR, &$$, $3); }
  ;

dotted_as_name:
    dotted_name { $$ = mk(lx, N_IMPORT, @$); $$->str = $1.text; }
  | dotted_name AS NAME { $$ = mk(lx, N_IMPORT, @$); $$->str = $1.text; $$->name = $3; }
  ;

dotted_name:
    NAME { buf_start(&$$, $1); }
  | dotted_name '.' NAME { $$ = $1; buf_append(lx, &$$, ".", $3); }
  ;

import_targets:
    import_as_names { $$ = $1; }
  | '(' import_as_names ')' { $$ = $2; }
  | '(' import_as_names ',' ')' { $$ = $2; }
  ;

import_as_names:
    import_as_name { $$ = list1(lx, $1); }
  | import_as_names ',' import_as_name { $$ = $1; nodelist_push(AR, &$$, $3); }
  ;

/* An imported name is an N_NAME; its `as` alias, if any, is in str. */
import_as_name:
    NAME { $$ = mk_name(lx, $1, @$); }
  | NAME AS NAME { $$ = mk_name(lx, $1, @$); $$->str = $3; }
  ;

stmt_compound:
    if_stmt | while_stmt | for_stmt | with_stmt | try_stmt | funcdef | classdef
  | decorated
  | ASYNC funcdef { $$ = $2; $$->op = TOK_ASYNC; $$->span = span_join(@1, $2->span); }
  | ASYNC for_stmt { $$ = $2; $$->op = TOK_ASYNC; $$->span = span_join(@1, $2->span); }
  | ASYNC WITH with_items ':' suite { $$ = mk_with(lx, $3, $5, @1, TOK_ASYNC); }
  ;

/* if/elif/else: an elif is an N_IF alone in the else list. The chain is
 * built left to right (the parser stack does not grow with it), each arm
 * hung under the last; every N_IF of it spans to the end of the chain. */
if_stmt:
    if_chain { $$ = end_if_chain($1.first, $1.last); }
  | if_chain ELSE ':' suite {
      $1.last->list2 = $4;
      $$ = end_if_chain($1.first, $1.last);
    }
  ;

if_chain:
    IF namedexpr ':' suite {
      Node *n = mk_compound(lx, N_IF, @1, $4); n->a = $2; n->list = $4;
      $$.first = $$.last = n;
    }
  | if_chain ELIF namedexpr ':' suite {
      Node *n = mk_compound(lx, N_IF, @2, $5); n->a = $3; n->list = $5;
      $1.last->list2 = list1(lx, n);
      $$.first = $1.first; $$.last = n;
    }
  ;

while_stmt:
    WHILE namedexpr ':' suite { $$ = mk_compound(lx, N_WHILE, @1, $4); $$->a = $2; $$->list = $4; }
  | WHILE namedexpr ':' suite ELSE ':' suite {
      $$ = mk_compound(lx, N_WHILE, @1, $7); $$->a = $2; $$->list = $4; $$->list2 = $7;
    }
  ;

for_stmt:
    FOR exprlist IN testlist ':' suite {
      if (!check_target(lx, $2) || !no_star(lx, $4)) YYABORT;
      $$ = mk_compound(lx, N_FOR, @1, $6); $$->a = $2; $$->b = $4;
      $$->list = $6;
    }
  | FOR exprlist IN testlist ':' suite ELSE ':' suite {
      if (!check_target(lx, $2) || !no_star(lx, $4)) YYABORT;
      $$ = mk_compound(lx, N_FOR, @1, $9); $$->a = $2; $$->b = $4;
      $$->list = $6; $$->list2 = $9;
    }
  ;

/* try: body, then except clauses [else] [finally], or finally alone. */
try_stmt:
    TRY ':' suite except_clauses try_tail {
      NodeList clauses = $4;
      for (int i = 0; i < $5.len; i++) nodelist_push(AR, &clauses, $5.items[i]);
      $$ = mk_compound(lx, N_TRY, @1, clauses); $$->list = $3; $$->list2 = clauses;
    }
  | TRY ':' suite finally_clause {
      $$ = mk(lx, N_TRY, span_join(@1, $4->span)); $$->list = $3; $$->list2 = list1(lx, $4);
    }
  ;

except_clauses:
    except_clause { $$ = list1(lx, $1); }
  | except_clauses except_clause {
      Node *prev = last_stmt($1);
      if (!prev->a) {
        diag_error(lx->d, (Span){prev->span.line, prev->span.col, prev->span.line,
                                 prev->span.col + 6}, "default 'except:' must be last");
        YYABORT;
      }
      $$ = $1; nodelist_push(AR, &$$, $2);
    }
  ;

except_clause:
    EXCEPT ':' suite { $$ = mk_compound(lx, N_EXCEPT, @1, $3); $$->list = $3; }
  | EXCEPT test ':' suite {
      $$ = mk_compound(lx, N_EXCEPT, @1, $4); $$->a = $2; $$->list = $4;
    }
  | EXCEPT test AS NAME ':' suite {
      $$ = mk_compound(lx, N_EXCEPT, @1, $6); $$->a = $2; $$->name = $4; $$->list = $6;
    }
  ;

try_tail:
    %empty { $$ = (NodeList){0}; }
  | else_clause { $$ = list1(lx, $1); }
  | finally_clause { $$ = list1(lx, $1); }
  | else_clause finally_clause { $$ = list1(lx, $1); nodelist_push(AR, &$$, $2); }
  ;

else_clause:
    ELSE ':' suite { $$ = mk_compound(lx, N_TRY_ELSE, @1, $3); $$->list = $3; }
  ;

finally_clause:
    FINALLY ':' suite { $$ = mk_compound(lx, N_FINALLY, @1, $3); $$->list = $3; }
  ;

/* with a as x, b: body  ==  with a as x: with b: body */
with_stmt:
    WITH with_items ':' suite { $$ = mk_with(lx, $2, $4, @1, 0); }
  ;

with_items:
    with_item { $$ = list1(lx, $1); }
  | with_items ',' with_item { $$ = $1; nodelist_push(AR, &$$, $3); }
  ;

with_item:
    test { $$ = mk(lx, N_WITH, @$); $$->a = $1; }
  | test AS expr {
      if (!check_target(lx, $3)) YYABORT;
      $$ = mk(lx, N_WITH, @$); $$->a = $1; $$->b = $3;
    }
  ;

/* def name(params) -> ret: body */
funcdef:
    DEF NAME '(' params_opt ')' ret_opt ':' suite {
      if (!check_params(lx, &$4)) YYABORT;
      $$ = mk_compound(lx, N_DEF, @1, $8); $$->name = $2;
      $$->list = $4; $$->a = $6; $$->list2 = $8;
    }
  ;

ret_opt:
    %empty { $$ = NULL; }
  | ARROW test { $$ = $2; }
  ;

params_opt:
    %empty { $$ = (NodeList){0}; }
  | params { $$ = $1; }
  | params ',' { $$ = $1; }
  ;

params:
    param { $$ = list1(lx, $1); }
  | params ',' param { $$ = $1; nodelist_push(AR, &$$, $3); }
  ;

/* name[: annotation][= default], *args, **kwargs, and the markers `*`
 * (keyword-only parameters follow) and `/` (positional-only ones precede),
 * which check_params turns into flags. */
param:
    NAME ann_opt default_opt { $$ = mk_param(lx, 0, $1, $2, $3, @$); }
  | '*' NAME ann_opt { $$ = mk_param(lx, '*', $2, $3, NULL, @$); }
  | '*' { $$ = mk_param(lx, '*', NULL, NULL, NULL, @$); }
  | POW NAME ann_opt { $$ = mk_param(lx, TOK_POW, $2, $3, NULL, @$); }
  | '/' { $$ = mk_param(lx, '/', NULL, NULL, NULL, @$); }
  ;

ann_opt:
    %empty { $$ = NULL; }
  | ':' test { $$ = $2; }
  ;

default_opt:
    %empty { $$ = NULL; }
  | '=' test { $$ = $2; }
  ;

/* class Name[(bases, keyword=value, *a, **k)]: body */
classdef:
    CLASS NAME ':' suite {
      $$ = mk_compound(lx, N_CLASS, @1, $4); $$->name = $2; $$->list2 = $4;
    }
  | CLASS NAME '(' ')' ':' suite {
      $$ = mk_compound(lx, N_CLASS, @1, $6); $$->name = $2; $$->list2 = $6;
    }
  | CLASS NAME '(' args opt_comma ')' ':' suite {
      if (!check_call_args(lx, $4)) YYABORT;
      for (int i = 0; i < $4.len; i++)
        if ($4.items[i]->kind == N_GENEXP && $4.items[i]->op) {
          syntax(lx, $4.items[i]->span, "a generator expression cannot be a base class");
          YYABORT;
        }
      $$ = mk_compound(lx, N_CLASS, @1, $8); $$->name = $2;
      $$->list = $4; $$->list2 = $8;
    }
  ;

/* @decorator lines before a def or class; outermost first. */
decorated:
    decorators funcdef { $$ = $2; $$->list3 = $1; $$->span = span_join(@1, $2->span); }
  | decorators ASYNC funcdef {
      $$ = $3; $$->op = TOK_ASYNC; $$->list3 = $1; $$->span = span_join(@1, $3->span);
    }
  | decorators classdef { $$ = $2; $$->list3 = $1; $$->span = span_join(@1, $2->span); }
  ;

decorators:
    '@' namedexpr NEWLINE { $$ = list1(lx, $2); }
  | decorators '@' namedexpr NEWLINE { $$ = $1; nodelist_push(AR, &$$, $3); }
  ;

/* The body of a compound statement: on the same line, or indented. */
suite:
    simple_stmt { $$ = $1; }
  | NEWLINE INDENT stmts DEDENT { $$ = $3; }
  ;

/* ------------------------------------------------------------ expressions */

/* test [, test]* [,]: a bare tuple when there is a comma; *a items
 * (no_star refuses a lone one where Python does). */
testlist:
    test_star
  | tuple_items
  ;

test_star: test | star_expr ;

star_expr:
    '*' expr { $$ = mk(lx, N_STAR, @$); $$->op = '*'; $$->a = $2; }
  ;

tuple_items:
    test_star ',' { $$ = mk_list(lx, N_TUPLE, $1, @$); }
  | test_star ',' test_star_seq opt_comma { $$ = mk(lx, N_TUPLE, @$); $$->list = prepend(lx, $1, $3); }
  ;

test_star_seq:
    test_star { $$ = list1(lx, $1); }
  | test_star_seq ',' test_star { $$ = $1; nodelist_push(AR, &$$, $3); }
  ;

opt_comma: %empty | ',' ;

/* Items of parenthesised tuples, lists and sets: name := value too. */
named_star:
    test_star
  | NAME COLONEQ test {
      $$ = mk(lx, N_NAMEDEXPR, @$); $$->a = mk_name(lx, $1, @1); $$->b = $3;
    }
  ;

named_seq:
    named_star { $$ = list1(lx, $1); }
  | named_seq ',' named_star { $$ = $1; nodelist_push(AR, &$$, $3); }
  ;

paren_tuple:
    named_star ',' { $$ = mk_list(lx, N_TUPLE, $1, @$); }
  | named_star ',' named_seq opt_comma { $$ = mk(lx, N_TUPLE, @$); $$->list = prepend(lx, $1, $3); }
  ;

/* Conditions of if, elif, while and decorators: name := value too. */
namedexpr:
    test
  | NAME COLONEQ test {
      $$ = mk(lx, N_NAMEDEXPR, @$); $$->a = mk_name(lx, $1, @1); $$->b = $3;
    }
  ;

/* Targets of for and comprehensions: bitwise-or level, so `in` ends them. */
exprlist:
    expr_or_star
  | expr_items
  ;

expr_or_star: expr | star_expr ;

expr_items:
    expr_or_star ',' { $$ = mk_list(lx, N_TUPLE, $1, @$); }
  | expr_or_star ',' expr_seq opt_comma { $$ = mk(lx, N_TUPLE, @$); $$->list = prepend(lx, $1, $3); }
  ;

expr_seq:
    expr_or_star { $$ = list1(lx, $1); }
  | expr_seq ',' expr_or_star { $$ = $1; nodelist_push(AR, &$$, $3); }
  ;

/* b if a else c; lambda */
test:
    or_test
  | or_test IF or_test ELSE test {
      $$ = mk(lx, N_IFEXP, @$); $$->a = $3; $$->b = $1; $$->c = $5;
    }
  | lambdef
  ;

lambdef:
    LAMBDA lparams_opt ':' test {
      if (!check_params(lx, &$2)) YYABORT;
      $$ = mk(lx, N_LAMBDA, @$); $$->list = $2; $$->a = $4;
    }
  ;

lparams_opt:
    %empty { $$ = (NodeList){0}; }
  | lparams { $$ = $1; }
  | lparams ',' { $$ = $1; }
  ;

lparams:
    lparam { $$ = list1(lx, $1); }
  | lparams ',' lparam { $$ = $1; nodelist_push(AR, &$$, $3); }
  ;

/* A lambda's parameters: a def's without annotations. */
lparam:
    NAME default_opt { $$ = mk_param(lx, 0, $1, NULL, $2, @$); }
  | '*' NAME { $$ = mk_param(lx, '*', $2, NULL, NULL, @$); }
  | '*' { $$ = mk_param(lx, '*', NULL, NULL, NULL, @$); }
  | POW NAME { $$ = mk_param(lx, TOK_POW, $2, NULL, NULL, @$); }
  | '/' { $$ = mk_param(lx, '/', NULL, NULL, NULL, @$); }
  ;

or_test:
    and_test
  | or_test OR and_test { $$ = mk_binary(lx, TOK_OR, $1, $3, @$); $$->kind = N_BOOLOP; }
  ;

and_test:
    not_test
  | and_test AND not_test { $$ = mk_binary(lx, TOK_AND, $1, $3, @$); $$->kind = N_BOOLOP; }
  ;

not_test:
    comparison
  | NOT not_test { $$ = mk_unary(lx, TOK_NOT, $2, @$); }
  ;

/* a < b <= c is one N_COMPARE with three operands and two operators. */
comparison:
    expr
  | comp_chain
  ;

comp_chain:
    expr comp_op expr {
      $$ = mk_list(lx, N_COMPARE, $1, @$); push_compare(lx, $$, $2, $3);
    }
  | comp_chain comp_op expr { $$ = $1; $$->span = @$; push_compare(lx, $$, $2, $3); }
  ;

comp_op:
    '<' { $$ = TOK_LT; } | '>' { $$ = TOK_GT; } | EQ { $$ = TOK_EQ; }
  | NE { $$ = TOK_NE; } | LE { $$ = TOK_LE; } | GE { $$ = TOK_GE; }
  | IN { $$ = TOK_IN; } | NOT IN { $$ = TOK_NOTIN; }
  | IS { $$ = TOK_IS; } | IS NOT { $$ = TOK_ISNOT; }
  ;

expr:
    xor_expr
  | expr '|' xor_expr { $$ = mk_binary(lx, '|', $1, $3, @$); }
  ;

xor_expr:
    and_expr
  | xor_expr '^' and_expr { $$ = mk_binary(lx, '^', $1, $3, @$); }
  ;

and_expr:
    shift_expr
  | and_expr '&' shift_expr { $$ = mk_binary(lx, '&', $1, $3, @$); }
  ;

shift_expr:
    arith_expr
  | shift_expr LSHIFT arith_expr { $$ = mk_binary(lx, TOK_LSHIFT, $1, $3, @$); }
  | shift_expr RSHIFT arith_expr { $$ = mk_binary(lx, TOK_RSHIFT, $1, $3, @$); }
  ;

arith_expr:
    term
  | arith_expr '+' term { $$ = mk_binary(lx, '+', $1, $3, @$); }
  | arith_expr '-' term { $$ = mk_binary(lx, '-', $1, $3, @$); }
  ;

term:
    factor
  | term '*' factor { $$ = mk_binary(lx, '*', $1, $3, @$); }
  | term '/' factor { $$ = mk_binary(lx, '/', $1, $3, @$); }
  | term FLOORDIV factor { $$ = mk_binary(lx, TOK_FLOORDIV, $1, $3, @$); }
  | term '%' factor { $$ = mk_binary(lx, '%', $1, $3, @$); }
  | term '@' factor { $$ = mk_binary(lx, '@', $1, $3, @$); }
  ;

/* Unary operators bind looser than ** on their right: -x**2 = -(x**2). */
factor:
    power
  | '+' factor { $$ = mk_unary(lx, '+', $2, @$); }
  | '-' factor { $$ = mk_unary(lx, '-', $2, @$); }
  | '~' factor { $$ = mk_unary(lx, '~', $2, @$); }
  ;

/* a ** b ** c = a ** (b ** c); the exponent may be signed: 2 ** -1. */
power:
    await_primary
  | await_primary POW factor { $$ = mk_binary(lx, TOK_POW, $1, $3, @$); }
  ;

await_primary:
    primary
  | AWAIT primary { $$ = mk(lx, N_AWAIT, @$); $$->a = $2; }
  ;

/* Calls, attributes and subscripts, left to right. */
primary:
    atom
  | primary '.' NAME { $$ = mk(lx, N_ATTR, @$); $$->a = $1; $$->name = $3; }
  | call
  | primary '[' subscripts ']' { $$ = mk(lx, N_SUBSCRIPT, @$); $$->a = $1; $$->b = $3; }
  ;

call:
    primary '(' ')' { $$ = mk(lx, N_CALL, @$); $$->a = $1; }
  | primary '(' args ')' {
      $$ = mk_call(lx, $1, $3, false, @$);
      if (!$$) YYABORT;
    }
  | primary '(' args ',' ')' {
      $$ = mk_call(lx, $1, $3, true, @$);
      if (!$$) YYABORT;
    }
  ;

args:
    arg { $$ = list1(lx, $1); }
  | args ',' arg { $$ = $1; nodelist_push(AR, &$$, $3); }
  ;

/* f(x), f(name=x), f(*xs), f(**kw), f(n := x), sum(x for x in xs): a bare
 * generator argument is marked (op = 1) for mk_call's checks. */
arg:
    test
  | NAME '=' test { $$ = mk(lx, N_KEYWORD, @$); $$->name = $1; $$->a = $3; }
  | NAME COLONEQ test {
      $$ = mk(lx, N_NAMEDEXPR, @$); $$->a = mk_name(lx, $1, @1); $$->b = $3;
    }
  | '*' test { $$ = mk(lx, N_STAR, @$); $$->op = '*'; $$->a = $2; }
  | POW test { $$ = mk(lx, N_DSTAR, @$); $$->a = $2; }
  | test comp_clauses { $$ = mk_comp(lx, N_GENEXP, $1, $2, @$); $$->op = 1; }
  ;

/* a[i], a[i, j], a[1:2], a[:, 3], a[::2], a[..., 0] */
subscripts:
    subscript
  | subscript ',' { $$ = mk_list(lx, N_TUPLE, $1, @$); }
  | subscript ',' subscript_seq opt_comma {
      $$ = mk(lx, N_TUPLE, @$); $$->list = prepend(lx, $1, $3);
    }
  ;

subscript_seq:
    subscript { $$ = list1(lx, $1); }
  | subscript_seq ',' subscript { $$ = $1; nodelist_push(AR, &$$, $3); }
  ;

subscript:
    test
  | opt_test ':' opt_test {
      $$ = mk(lx, N_SLICE, $1 ? @$ : span_join(@2, @$)); $$->a = $1; $$->b = $3;
    }
  | opt_test ':' opt_test ':' opt_test {
      $$ = mk(lx, N_SLICE, $1 ? @$ : span_join(@2, @$)); $$->a = $1; $$->b = $3; $$->c = $5;
    }
  ;

opt_test:
    %empty { $$ = NULL; }
  | test
  ;

atom:
    NAME { $$ = mk_name(lx, $1, @$); }
  | INT { $$ = mk(lx, N_INT, @$); $$->ival = $1; }
  | FLOAT { $$ = mk(lx, N_FLOAT, @$); $$->fval = $1; }
  | IMAG { $$ = mk(lx, N_IMAG, @$); $$->fval = $1; }
  | strings { $$ = acc_finish(lx, &$1, @$); }
  | NONE { $$ = mk(lx, N_NONE, @$); }
  | TRUE { $$ = mk(lx, N_TRUE, @$); }
  | FALSE { $$ = mk(lx, N_FALSE, @$); }
  | ELLIPSIS { $$ = mk(lx, N_ELLIPSIS, @$); }
  | '(' ')' { $$ = mk(lx, N_TUPLE, @$); }
  | '(' named_star ')' {
      if (!no_star(lx, $2)) YYABORT;
      $$ = $2;
    }
  | '(' paren_tuple ')' { $$ = $2; $$->span = @$; }
  | '(' yield_expr ')' { $$ = $2; }
  | '(' test comp_clauses ')' { $$ = mk_comp(lx, N_GENEXP, $2, $3, @$); }
  | '(' star_expr comp_clauses ')' {
      syntax(lx, $2->span, "iterable unpacking cannot be used in a comprehension"); YYABORT;
    }
  | '[' ']' { $$ = mk(lx, N_LIST, @$); }
  | '[' named_seq opt_comma ']' { $$ = mk(lx, N_LIST, @$); $$->list = $2; }
  | '[' test comp_clauses ']' { $$ = mk_comp(lx, N_LISTCOMP, $2, $3, @$); }
  | '[' star_expr comp_clauses ']' {
      syntax(lx, $2->span, "iterable unpacking cannot be used in a comprehension"); YYABORT;
    }
  | '{' '}' { $$ = mk(lx, N_DICT, @$); }
  | '{' dict_items opt_comma '}' { $$ = mk(lx, N_DICT, @$); $$->list = $2; }
  | '{' test ':' test comp_clauses '}' {
      Node *kv = mk(lx, N_KEYVALUE, span_join(@2, @4)); kv->a = $2; kv->b = $4;
      $$ = mk_comp(lx, N_DICTCOMP, kv, $5, @$);
    }
  | '{' POW expr comp_clauses '}' {
      syntax(lx, span_join(@2, @3), "dict unpacking cannot be used in a dict comprehension");
      YYABORT;
    }
  | '{' named_seq opt_comma '}' { $$ = mk(lx, N_SET, @$); $$->list = $2; }
  | '{' test comp_clauses '}' { $$ = mk_comp(lx, N_SETCOMP, $2, $3, @$); }
  | '{' star_expr comp_clauses '}' {
      syntax(lx, $2->span, "iterable unpacking cannot be used in a comprehension"); YYABORT;
    }
  ;

dict_items:
    dict_item { $$ = list1(lx, $1); }
  | dict_items ',' dict_item { $$ = $1; nodelist_push(AR, &$$, $3); }
  ;

dict_item:
    test ':' test { $$ = mk(lx, N_KEYVALUE, @$); $$->a = $1; $$->b = $3; }
  | POW expr { $$ = mk(lx, N_DSTAR, @$); $$->a = $2; }
  ;

/* yield, yield x, yield a, *b, yield from x */
yield_expr:
    YIELD { $$ = mk(lx, N_YIELD, @$); }
  | YIELD testlist {
      if (!no_star(lx, $2)) YYABORT;
      $$ = mk(lx, N_YIELD, @$); $$->a = $2;
    }
  | YIELD FROM test { $$ = mk(lx, N_YIELD_FROM, @$); $$->a = $3; }
  ;

/* Adjacent literals are one value: "a" 'b' is "ab", "a" f"{x}" an
 * f-string; bytes join bytes only. */
strings:
    STRING { acc_init(&$$); acc_text(lx, &$$, $1, strlen($1), @1); }
  | BYTES {
      acc_init(&$$); $$.is_bytes = true; acc_text(lx, &$$, $1.text, $1.len, @1);
    }
  | fstring
  | strings STRING {
      $$ = $1;
      if (!acc_piece(lx, &$$, false, @2)) YYABORT;
      acc_text(lx, &$$, $2, strlen($2), @2);
    }
  | strings BYTES {
      $$ = $1;
      if (!acc_piece(lx, &$$, true, @2)) YYABORT;
      acc_text(lx, &$$, $2.text, $2.len, @2);
    }
  | strings fstring {
      $$ = $1;
      if (!acc_piece(lx, &$$, false, @2)) YYABORT;
      acc_merge(lx, &$$, &$2);
    }
  ;

/* f"text {expr=!r:spec} text" */
fstring:
    FSTRING_START fparts FSTRING_END { $$ = $2; $$.is_f = true; }
  ;

fparts:
    %empty { acc_init(&$$); }
  | fparts FSTRING_MIDDLE { $$ = $1; acc_text(lx, &$$, $2, strlen($2), @2); }
  | fparts ffield { $$ = $1; acc_field(lx, &$$, $2); }
  ;

ffield:
    '{' testlist fdebug fconv fspec '}' {
      if (!no_star(lx, $2)) YYABORT;
      Node *n = mk(lx, N_FORMATTED, @$); n->a = $2; n->op = $4; n->b = $5;
      if ($3 && !$4 && !$5) n->op = 'r';
      $$.node = n; $$.debug = $3; /* the text after '{' */
      $$.debug_span = (Span){@1.end_line, @1.end_col, @3.end_line, @3.end_col};
    }
  | '{' yield_expr fdebug fconv fspec '}' {
      Node *n = mk(lx, N_FORMATTED, @$); n->a = $2; n->op = $4; n->b = $5;
      if ($3 && !$4 && !$5) n->op = 'r';
      $$.node = n; $$.debug = $3; /* the text after '{' */
      $$.debug_span = (Span){@1.end_line, @1.end_col, @3.end_line, @3.end_col};
    }
  ;

fdebug:
    %empty { $$ = NULL; }
  | FDEBUG
  ;

fconv:
    %empty { $$ = 0; }
  | FCONV
  ;

fspec:
    %empty { $$ = NULL; }
  | ':' fspec_parts { $2.is_f = true; $$ = acc_finish(lx, &$2, @$); }
  ;

fspec_parts:
    %empty { acc_init(&$$); }
  | fspec_parts FSTRING_MIDDLE { $$ = $1; acc_text(lx, &$$, $2, strlen($2), @2); }
  | fspec_parts ffield { $$ = $1; acc_field(lx, &$$, $2); }
  ;

/* for x in xs if cond ... [for y in ys if ...] */
comp_clauses:
    comp_for { $$ = list1(lx, $1); }
  | comp_clauses comp_for { $$ = $1; nodelist_push(AR, &$$, $2); }
  ;

comp_for:
    FOR exprlist IN or_test comp_ifs {
      if (!check_target(lx, $2)) YYABORT;
      $$ = mk(lx, N_COMPFOR, @$); $$->b = $2; $$->c = $4; $$->list = $5;
    }
  ;

comp_ifs:
    %empty { $$ = (NodeList){0}; }
  | comp_ifs IF or_test { $$ = $1; nodelist_push(AR, &$$, $3); }
  ;

%%

static Node *mk(Lexer *lx, NodeKind kind, Span sp) {
  return node_new(lx->ar, kind, sp);
}

static Node *mk_binary(Lexer *lx, int op, Node *a, Node *b, Span sp) {
  Node *n = mk(lx, N_BINARY, sp);
  n->op = op;
  n->a = a;
  n->b = b;
  return n;
}

static Node *mk_unary(Lexer *lx, int op, Node *a, Span sp) {
  Node *n = mk(lx, N_UNARY, sp);
  n->op = op;
  n->a = a;
  return n;
}

/* A node whose list starts with `first` (tuples, comparisons). */
static Node *mk_list(Lexer *lx, NodeKind kind, Node *first, Span sp) {
  Node *n = mk(lx, kind, sp);
  nodelist_push(lx->ar, &n->list, first);
  return n;
}

/* A list of one item, with room for two: most lists of one stay so (the
 * targets of an assignment, a block of one statement). */
static NodeList list1(Lexer *lx, Node *item) {
  NodeList l = {arena_alloc(lx->ar, 2 * sizeof(Node *)), 1, 2};
  l.items[0] = item;
  return l;
}

/* first, then the items of rest: rest grows by one and shifts (no copy
 * into a new list). */
static NodeList prepend(Lexer *lx, Node *first, NodeList rest) {
  nodelist_push(lx->ar, &rest, first);
  memmove(rest.items + 1, rest.items, sizeof(Node *) * (size_t)(rest.len - 1));
  rest.items[0] = first;
  return rest;
}

/* One more `op operand` of a comparison chain. The operator array has the
 * operand list's capacity and grows with it, so a chain of n links costs
 * O(n), not a fresh copy per link. */
static void push_compare(Lexer *lx, Node *cmp, int op, Node *operand) {
  int cap = cmp->list.cap;
  nodelist_push(lx->ar, &cmp->list, operand);
  int n = cmp->list.len - 1; /* operators, this one included */
  if (cmp->list.cap != cap || !cmp->ops) {
    int *ops = arena_alloc(lx->ar, sizeof(int) * (size_t)cmp->list.cap);
    if (n > 1) memcpy(ops, cmp->ops, sizeof(int) * (size_t)(n - 1));
    cmp->ops = ops;
  }
  cmp->ops[n - 1] = op;
}

/* Every N_IF of a chain spans from its keyword to the end of the chain
 * (the last statement of the last arm or of the else): one pass. */
static Node *end_if_chain(Node *first, Node *last) {
  Span end = last->list2.len ? last_stmt(last->list2)->span : last->span;
  for (Node *n = first;; n = n->list2.items[0]) {
    n->span = span_join(n->span, end);
    if (n == last) break;
  }
  return first;
}

static Node *last_stmt(NodeList body) { return body.items[body.len - 1]; }

/* A compound statement spans its keyword to the end of its body (the
 * caller stores the body where its kind keeps it). */
static Node *mk_compound(Lexer *lx, NodeKind kind, Span head, NodeList body) {
  return mk(lx, kind, span_join(head, last_stmt(body)->span));
}

/* Several with-items nest: each item's body is the next item; op is
 * TOK_ASYNC on every item of `async with`. */
static Node *mk_with(Lexer *lx, NodeList items, NodeList body, Span sp, int op) {
  Span whole = span_join(sp, last_stmt(body)->span);
  for (int i = items.len - 1; i >= 0; i--) {
    Node *w = items.items[i];
    w->list = body;
    w->op = op;
    w->span = span_join(i == 0 ? sp : w->span, whole);
    body = list1(lx, w);
  }
  return items.items[0];
}

/* [elt for b in c if ... for ...] and its set, dict and generator forms:
 * the first clause lives in the node. */
static Node *mk_comp(Lexer *lx, NodeKind kind, Node *elt, NodeList clauses, Span sp) {
  Node *n = mk(lx, kind, sp);
  Node *first = clauses.items[0];
  n->a = elt;
  n->b = first->b;
  n->c = first->c;
  n->list = first->list;
  for (int i = 1; i < clauses.len; i++)
    nodelist_push(lx->ar, &n->list2, clauses.items[i]);
  return n;
}

static Node *mk_name(Lexer *lx, char *name, Span sp) {
  Node *n = mk(lx, N_NAME, sp);
  n->name = name;
  return n;
}

/* A parameter; `*` and `/` alone are markers (no name) until
 * check_params. */
static Node *mk_param(Lexer *lx, int op, char *name, Node *ann, Node *def, Span sp) {
  Node *n = mk(lx, N_PARAM, sp);
  n->op = op;
  n->name = name;
  n->a = ann;
  n->b = def;
  return n;
}

/* A simple statement into its block; `import a, b` is one N_IMPORT per
 * module (the first holds the others in its list until here). */
static void push_small(Lexer *lx, NodeList *l, Node *s) {
  if (l->len == 0)
    *l = list1(lx, s);
  else
    nodelist_push(lx->ar, l, s);
  if (s->kind == N_IMPORT && s->list.len) {
    for (int i = 0; i < s->list.len; i++)
      nodelist_push(lx->ar, l, s->list.items[i]);
    s->list = (NodeList){0};
  }
}

/* f(args): positional arguments, *a and **a in list, keywords in list2.
 * A bare generator argument must be the only argument (it then spans the
 * call's parentheses, as Python's does). NULL after an error. */
static Node *mk_call(Lexer *lx, Node *fn, NodeList args, bool comma, Span sp) {
  if (!check_call_args(lx, args))
    return NULL;
  Node *n = mk(lx, N_CALL, sp);
  n->a = fn;
  for (int i = 0; i < args.len; i++) {
    Node *arg = args.items[i];
    if (arg->kind == N_GENEXP && arg->op) {
      if (args.len > 1 || comma) {
        syntax(lx, arg->span, "a generator expression must be parenthesized "
               "when it is not the only argument");
        return NULL;
      }
      arg->op = 0;
      arg->span = (Span){fn->span.end_line, fn->span.end_col, sp.end_line, sp.end_col};
    }
    nodelist_push(lx->ar, arg->kind == N_KEYWORD ? &n->list2 : &n->list, arg);
  }
  return n;
}

static Node *mk_str(Lexer *lx, char *text, Span sp) {
  Node *n = mk(lx, N_STR, sp);
  n->str = text;
  return n;
}

/* Text that grows (adjacent strings, dotted names): it starts as the
 * token's own string and moves to a buffer that doubles when an append
 * does not fit, so n pieces cost O(total length), not O(n^2). */
static void buf_start(TextBuf *b, char *text) {
  b->text = text;
  b->len = strlen(text);
  b->cap = 0; /* the token's string: not ours to grow */
}

static void buf_append(Lexer *lx, TextBuf *b, const char *sep, const char *text) {
  size_t nsep = strlen(sep), ntext = strlen(text);
  size_t need = b->len + nsep + ntext + 1;
  if (need > b->cap) {
    size_t cap = b->cap * 2 > need ? b->cap * 2 : need < 64 ? 64 : need;
    char *p = arena_alloc(lx->ar, cap);
    memcpy(p, b->text, b->len);
    b->text = p;
    b->cap = cap;
  }
  memcpy(b->text + b->len, sep, nsep);
  memcpy(b->text + b->len + nsep, text, ntext + 1);
  b->len += nsep + ntext;
}

static bool unsupported(Lexer *lx, Span sp, const char *what) {
  diag_error(lx->d, sp, "%s: not supported yet", what);
  return false;
}

/* buf_append for text that may hold NUL bytes (bytes literals). */
static void buf_append_n(Lexer *lx, TextBuf *b, const char *text, size_t ntext) {
  size_t need = b->len + ntext + 1;
  if (need > b->cap) {
    size_t cap = b->cap * 2 > need ? b->cap * 2 : need < 64 ? 64 : need;
    char *p = arena_alloc(lx->ar, cap);
    memcpy(p, b->text, b->len);
    b->text = p;
    b->cap = cap;
  }
  memcpy(b->text + b->len, text, ntext);
  b->text[b->len + ntext] = '\0';
  b->len += ntext;
}

/* ------------------------------------------------ strings and f-strings */

static void acc_init(StrAcc *a) { *a = (StrAcc){0}; }

/* More literal text (a string token, an f-string's text, the `x=` of a
 * field): it joins the pending text, which becomes a part only when a
 * field follows, so "a" "b" f"c{x}d" is the parts "abc", {x}, "d". */
static void acc_text(Lexer *lx, StrAcc *a, char *text, size_t len, Span sp) {
  if (!a->has_text) {
    a->text = (TextBuf){text, len, 0}; /* the token's own: copied on growth */
    a->text_span = sp;
    a->has_text = true;
    return;
  }
  buf_append_n(lx, &a->text, text, len);
  a->text_span = span_join(a->text_span, sp);
}

/* The next adjacent literal may join: bytes with bytes only. */
static bool acc_piece(Lexer *lx, StrAcc *a, bool bytes, Span sp) {
  if (a->is_bytes == bytes)
    return true;
  diag_error(lx->d, sp, "cannot mix bytes and nonbytes literals");
  return false;
}

/* The pending text becomes a part (none when empty, as in Python). */
static void acc_flush(Lexer *lx, StrAcc *a) {
  if (!a->has_text)
    return;
  if (a->text.len)
    nodelist_push(lx->ar, &a->parts, mk_str(lx, a->text.text, a->text_span));
  a->has_text = false;
}

static void acc_field(Lexer *lx, StrAcc *a, FieldVal f) {
  if (f.debug)
    acc_text(lx, a, f.debug, strlen(f.debug), f.debug_span);
  acc_flush(lx, a);
  nodelist_push(lx->ar, &a->parts, f.node);
}

/* dst followed by the f-string src: src's leading text joins dst's
 * pending text; each part moves once (linear in the parts). */
static void acc_merge(Lexer *lx, StrAcc *dst, StrAcc *src) {
  for (int i = 0; i < src->parts.len; i++) {
    Node *p = src->parts.items[i];
    if (i == 0 && p->kind == N_STR) {
      acc_text(lx, dst, p->str, strlen(p->str), p->span);
      continue;
    }
    acc_flush(lx, dst);
    nodelist_push(lx->ar, &dst->parts, p);
  }
  if (src->has_text)
    acc_text(lx, dst, src->text.text, src->text.len, src->text_span);
  dst->is_f = true;
}

/* The value: N_STR, N_BYTES, or N_FSTRING when an f-string is among the
 * pieces. */
static Node *acc_finish(Lexer *lx, StrAcc *a, Span sp) {
  if (!a->is_f) {
    Node *n = mk(lx, a->is_bytes ? N_BYTES : N_STR, sp);
    n->str = a->has_text ? a->text.text : arena_strndup(lx->ar, "", 0);
    if (a->is_bytes)
      n->ival = (int64_t)a->text.len;
    return n;
  }
  acc_flush(lx, a);
  Node *n = mk(lx, N_FSTRING, sp);
  n->list = a->parts;
  return n;
}

/* A rule of Python's that its grammar leaves to the compiler. */
static bool syntax(Lexer *lx, Span sp, const char *what) {
  diag_error(lx->d, sp, "%s", what);
  return false;
}

/* What an expression is called in "cannot assign to ..." messages. */
static const char *describe(const Node *n) {
  switch (n->kind) {
  case N_CALL: return "a function call";
  case N_INT: case N_FLOAT: case N_STR: case N_BYTES: case N_IMAG:
    return "a literal";
  case N_FSTRING: return "an f-string";
  case N_TRUE: return "True";
  case N_FALSE: return "False";
  case N_NONE: return "None";
  case N_ELLIPSIS: return "Ellipsis";
  case N_COMPARE: return "a comparison";
  case N_BOOLOP: case N_BINARY: case N_UNARY: return "an expression";
  case N_IFEXP: return "a conditional expression";
  case N_LISTCOMP: return "a list comprehension";
  case N_SETCOMP: return "a set comprehension";
  case N_DICTCOMP: return "a dict comprehension";
  case N_GENEXP: return "a generator expression";
  case N_DICT: return "a dict display";
  case N_SET: return "a set display";
  case N_LAMBDA: return "a lambda";
  case N_NAMEDEXPR: return "a named expression";
  case N_AWAIT: return "an await expression";
  case N_YIELD: case N_YIELD_FROM: return "a yield expression";
  case N_STAR: return "a starred expression";
  default: return "this expression";
  }
}

/* Assignment, for and with targets: names, attributes, subscripts, and
 * tuples/lists of those with at most one *target each (nesting bounded by
 * the bracket limit). */
static bool check_target_in(Lexer *lx, Node *t, bool in_seq) {
  switch (t->kind) {
  case N_NAME: case N_ATTR: case N_SUBSCRIPT:
    return true;
  case N_TUPLE: case N_LIST: {
    if (t->list.len == 0) {
      diag_error(lx->d, t->span, "cannot assign to an empty %s",
                 t->kind == N_TUPLE ? "tuple" : "list");
      return false;
    }
    int stars = 0;
    for (int i = 0; i < t->list.len; i++) {
      Node *item = t->list.items[i];
      if (item->kind == N_STAR && ++stars > 1)
        return syntax(lx, item->span, "multiple starred expressions in assignment");
      if (!check_target_in(lx, item, true))
        return false;
    }
    return true;
  }
  case N_STAR:
    if (!in_seq)
      return syntax(lx, t->span, "starred assignment target must be in a list or tuple");
    return check_target_in(lx, t->a, false);
  default:
    diag_error(lx->d, t->span, "cannot assign to %s", describe(t));
    return false;
  }
}

static bool check_target(Lexer *lx, Node *t) { return check_target_in(lx, t, false); }

/* del targets: names, attributes, subscripts, tuples and lists of them. */
static bool check_del(Lexer *lx, Node *t) {
  switch (t->kind) {
  case N_NAME: case N_ATTR: case N_SUBSCRIPT:
    return true;
  case N_TUPLE: case N_LIST:
    for (int i = 0; i < t->list.len; i++)
      if (!check_del(lx, t->list.items[i]))
        return false;
    return true;
  case N_STAR:
    return syntax(lx, t->span, "cannot delete a starred expression");
  default:
    diag_error(lx->d, t->span, "cannot delete %s", describe(t));
    return false;
  }
}

/* A lone *a is no value (x = *a, return *a, (*a)); in a tuple it is. */
static bool no_star(Lexer *lx, Node *n) {
  if (n->kind != N_STAR)
    return true;
  return syntax(lx, n->span, "cannot use starred expression here");
}

/* Augmented assignment and annotation take exactly one simple target. */
static bool check_single_target(Lexer *lx, Node *t, const char *what) {
  if (t->kind == N_NAME || t->kind == N_ATTR || t->kind == N_SUBSCRIPT)
    return true;
  if (t->kind == N_TUPLE)
    diag_error(lx->d, t->span, "only a single target (not a tuple) can be "
               "the target of an %s", what);
  else
    diag_error(lx->d, t->span, "cannot use %s as the target of an %s",
               describe(t), what);
  return false;
}

/* The first item (in order) whose name an earlier item has, or -1: by
 * sorting (name, position), O(n log n) where a pairwise scan of 30000
 * keyword arguments took seconds. */
typedef struct NamePos {
  const char *name;
  int pos;
} NamePos;

static int cmp_name_pos(const void *x, const void *y) {
  const NamePos *a = x, *b = y;
  int c = strcmp(a->name, b->name);
  return c ? c : (a->pos > b->pos) - (a->pos < b->pos);
}

static int first_repeat(Node *const *items, int n) {
  if (n < 2) return -1;
  NamePos *v = xmalloc(sizeof *v * (size_t)n);
  for (int i = 0; i < n; i++) v[i] = (NamePos){items[i]->name, i};
  qsort(v, (size_t)n, sizeof *v, cmp_name_pos);
  int first = -1;
  for (int i = 1; i < n; i++) /* the second of each run of one name */
    if (strcmp(v[i].name, v[i - 1].name) == 0
        && (i == 1 || strcmp(v[i - 1].name, v[i - 2].name) != 0)
        && (first < 0 || v[i].pos < first))
      first = v[i].pos;
  free(v);
  return first;
}


/* Python's rules for the arguments of a call (and a class's), in source
 * order: no positional argument after a keyword argument (a *xs may follow
 * one) or after a **kw, no *xs after a **kw, and no keyword given twice. */
static bool check_call_args(Lexer *lx, NodeList args) {
  bool seen_keyword = false, seen_dstar = false;
  int nkw = 0;
  for (int i = 0; i < args.len; i++) {
    Node *arg = args.items[i];
    if (arg->kind == N_KEYWORD) {
      seen_keyword = true;
      nkw++;
    } else if (arg->kind == N_DSTAR) {
      seen_dstar = true;
    } else if (arg->kind == N_STAR) {
      if (seen_dstar)
        return syntax(lx, arg->span, "iterable argument unpacking follows keyword "
                      "argument unpacking");
    } else if (seen_dstar) {
      return syntax(lx, arg->span, "positional argument follows keyword argument unpacking");
    } else if (seen_keyword) {
      return syntax(lx, arg->span, "positional argument follows keyword argument");
    }
  }
  if (nkw < 2) return true;
  Node **kws = xmalloc(sizeof *kws * (size_t)nkw);
  nkw = 0;
  for (int i = 0; i < args.len; i++)
    if (args.items[i]->kind == N_KEYWORD) kws[nkw++] = args.items[i];
  int k = first_repeat(kws, nkw);
  Node *dup = k >= 0 ? kws[k] : NULL;
  free(kws);
  if (dup) {
    diag_error(lx->d, dup->span, "keyword argument repeated: %s", dup->name);
    return false;
  }
  return true;
}

static bool is_marker(const Node *p) { return !p->name; }

/* Python's rules for the parameters of a def or lambda: no name twice;
 * after a parameter with a default, every plain parameter before `*` has
 * one too; at most one *args or `*`, and a named parameter after a bare
 * `*`; at most one `/`, not first, before any `*`; **kwargs last. The
 * first broken rule in order is reported. Then the markers leave the list:
 * parameters before `/` are PARAM_POSONLY, plain ones after `*` or *args
 * PARAM_KWONLY. */
static bool check_params(Lexer *lx, NodeList *params) {
  int n = params->len, nnamed = 0;
  Node **named = xmalloc(sizeof *named * (size_t)(n + 1));
  for (int i = 0; i < n; i++)
    if (!is_marker(params->items[i])) named[nnamed++] = params->items[i];
  int k = first_repeat(named, nnamed);
  Node *dup = k >= 0 ? named[k] : NULL;
  free(named);
  bool seen_default = false, seen_star = false, seen_slash = false;
  Node *kwargs = NULL, *bare_star = NULL;
  for (int i = 0; i < n; i++) {
    Node *p = params->items[i];
    if (p == dup) {
      diag_error(lx->d, p->span, "duplicate parameter '%s'", p->name);
      return false;
    }
    if (kwargs) {
      diag_error(lx->d, p->span, "parameter after **%s", kwargs->name);
      return false;
    }
    if (bare_star && (p->op == TOK_POW || p->op == '/'))
      return syntax(lx, bare_star->span, "named parameters must follow bare *");
    bare_star = NULL;
    if (p->op == '/') {
      if (seen_slash) return syntax(lx, p->span, "/ may appear only once");
      if (seen_star) return syntax(lx, p->span, "/ must be ahead of *");
      if (i == 0) return syntax(lx, p->span, "at least one parameter must precede /");
      seen_slash = true;
      continue;
    }
    if (p->op == '*' && seen_star) {
      diag_error(lx->d, p->span, "more than one *parameter");
      return false;
    }
    if (p->op == '*' && is_marker(p)) bare_star = p;
    seen_star |= p->op == '*';
    if (p->op == TOK_POW) kwargs = p;
    if (p->op == 0 && p->b)
      seen_default = true;
    else if (p->op == 0 && seen_default && !seen_star) {
      diag_error(lx->d, p->span, "parameter without a default follows a "
                 "parameter with a default");
      return false;
    }
  }
  if (bare_star)
    return syntax(lx, bare_star->span, "named parameters must follow bare *");
  /* Flags, and the markers out. */
  int slash = -1;
  for (int i = 0; i < n; i++)
    if (params->items[i]->op == '/') slash = i;
  int out = 0;
  seen_star = false;
  for (int i = 0; i < n; i++) {
    Node *p = params->items[i];
    if (i < slash) p->ival = PARAM_POSONLY;
    if (p->op == 0 && seen_star) p->ival = PARAM_KWONLY;
    seen_star |= p->op == '*';
    if (!is_marker(p)) params->items[out++] = p;
  }
  params->len = out;
  return true;
}

/* ------------------------------------------------------- syntax errors */

/* Text of the token at `sp` (one line), for "unexpected 'foo'". */
static void token_text(Lexer *lx, Span sp, char *buf, size_t cap) {
  buf[0] = '\0';
  const char *p = lx->src->text;
  const char *end = p + lx->src->len;
  for (int line = 1; line < sp.line && p < end; p++)
    if (*p == '\n')
      line++;
  p += sp.col - 1;
  size_t n = 0;
  size_t want = sp.end_line == sp.line && sp.end_col > sp.col
                    ? (size_t)(sp.end_col - sp.col) : 1;
  while (n < want && n + 4 < cap && p + n < end && p[n] != '\n')
    n++;
  memcpy(buf, p, n);
  buf[n] = '\0';
  if (n < want)
    strcpy(buf + (n > cap - 4 ? cap - 4 : n), "...");
}

/* How the unexpected token is named in the message. */
static void describe_unexpected(Lexer *lx, yysymbol_kind_t tok, Span sp,
                                char *buf, size_t cap) {
  char text[48];
  switch (tok) {
  case YYSYMBOL_YYEOF: snprintf(buf, cap, "end of file"); return;
  case YYSYMBOL_NEWLINE: snprintf(buf, cap, "end of line"); return;
  case YYSYMBOL_INDENT: snprintf(buf, cap, "indent"); return;
  case YYSYMBOL_DEDENT: snprintf(buf, cap, "end of block"); return;
  default:
    token_text(lx, sp, text, sizeof text);
    snprintf(buf, cap, "'%s'", text);
    return;
  }
}

/* Can an expression start with this token? (Where an expression may
 * start, `*`, `**` and `yield` start its starred, unpacking and yield
 * forms.) */
static bool starts_expression(yysymbol_kind_t t) {
  switch (t) {
  case YYSYMBOL_NAME: case YYSYMBOL_INT: case YYSYMBOL_FLOAT:
  case YYSYMBOL_IMAG: case YYSYMBOL_STRING: case YYSYMBOL_BYTES:
  case YYSYMBOL_FSTRING_START: case YYSYMBOL_NONE: case YYSYMBOL_TRUE:
  case YYSYMBOL_FALSE: case YYSYMBOL_NOT: case YYSYMBOL_ELLIPSIS:
  case YYSYMBOL_LAMBDA: case YYSYMBOL_AWAIT: case YYSYMBOL_YIELD:
  case YYSYMBOL_POW:
    return true;
  default: {
    const char *name = yysymbol_name(t);
    return strcmp(name, "'('") == 0 || strcmp(name, "'['") == 0
           || strcmp(name, "'{'") == 0 || strcmp(name, "'-'") == 0
           || strcmp(name, "'+'") == 0 || strcmp(name, "'~'") == 0
           || strcmp(name, "'*'") == 0;
  }
  }
}

/* The name of an expected token: 'x' for punctuation and keywords. */
static const char *expected_name(yysymbol_kind_t t, char *buf, size_t cap) {
  const char *name = yysymbol_name(t);
  switch (t) {
  case YYSYMBOL_NAME: return "a name";
  case YYSYMBOL_STRING: case YYSYMBOL_BYTES: return "a string";
  case YYSYMBOL_FSTRING_START: return "an f-string";
  case YYSYMBOL_FSTRING_MIDDLE: return "f-string text";
  case YYSYMBOL_FSTRING_END: return "the end of the f-string";
  case YYSYMBOL_FDEBUG: return "'='";
  case YYSYMBOL_FCONV: return "a conversion ('!r', '!s', '!a')";
  case YYSYMBOL_INT: case YYSYMBOL_FLOAT: case YYSYMBOL_IMAG: return "a number";
  case YYSYMBOL_NEWLINE: return "end of line";
  case YYSYMBOL_INDENT: return "an indented block";
  case YYSYMBOL_DEDENT: return "end of block";
  case YYSYMBOL_YYEOF: return "end of file";
  case YYSYMBOL_AUGASSIGN: return "an augmented assignment";
  default: break;
  }
  size_t n = strlen(name);
  if (name[0] == '\'') /* a character token: already quoted */
    snprintf(buf, cap, "%s", name);
  else if (n >= 2 && name[0] == '"') /* "def" -> 'def' */
    snprintf(buf, cap, "'%.*s'", (int)(n - 2), name + 1);
  else
    snprintf(buf, cap, "'%s'", name);
  return buf;
}

enum { MAX_EXPECTED_SHOWN = 5 };

/* Tokens that would continue the expression before the error: when the
 * full list is too long, it is shown without them (after `for x in y`
 * the useful word is ':', not the twenty binary operators). */
static bool continues_expression(yysymbol_kind_t t) {
  static const char *const ops[] = {
      "'+'", "'-'", "'*'", "'/'", "'%'", "'@'", "'&'", "'|'", "'^'", "'<'",
      "'>'", "'.'", "'('", "'['", "\"**\"", "\"//\"", "\"<<\"", "\">>\"",
      "\"<=\"", "\">=\"", "\"==\"", "\"!=\"", "\"in\"", "\"not\"",
      "\"is\"", "\"if\"", "\"and\"", "\"or\"", "**", "//", "<<", ">>",
      "<=", ">=", "==", "!=", "in", "not", "is", "if", "and", "or"};
  const char *name = yysymbol_name(t);
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(name, ops[i]) == 0)
      return true;
  return false;
}

/* The word at p (letters, digits, '_') is w. */
static bool word_is(const char *p, const char *end, const char *w) {
  size_t n = strlen(w);
  if ((size_t)(end - p) < n || memcmp(p, w, n) != 0) return false;
  if (p + n == end) return true;
  char c = p[n];
  return !(c == '_' || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'));
}

/* A syntax error on a line that starts a statement Python has and tls
 * scripts do not yet (match, type aliases, type parameters, except*): says
 * so, at the keyword. */
static bool unsupported_statement(Lexer *lx, Span sp) {
  const char *text = lx->src->text, *end = text + lx->src->len, *p = text;
  for (int line = 1; line < sp.line && p < end; p++)
    if (*p == '\n') line++;
  const char *line_start = p;
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\f')) p++;
  const char *eol = memchr(p, '\n', (size_t)(end - p));
  if (!eol) eol = end;
  int col = (int)(p - line_start) + 1;
  Span at = {sp.line, col, sp.line, col};
  /* what follows the first word: a subject or pattern, not an operator */
  const char *next = p;
  while (next < eol && (*next == '_' || isalnum((unsigned char)*next))) next++;
  bool blank = next < eol && (*next == ' ' || *next == '\t');
  while (next < eol && (*next == ' ' || *next == '\t')) next++;
  bool operand = next < eol && !strchr("=.:,;)]}+/%<>!&|^@#", *next);
  bool name = next < eol && (*next == '_' || isalpha((unsigned char)*next));
  if ((word_is(p, eol, "match") || word_is(p, eol, "case")) && operand && sp.col > col + 4) {
    at.end_col = col + (*p == 'm' ? 5 : 4);
    diag_error(lx->d, at, "the 'match' statement is not supported yet");
    return true;
  }
  if (word_is(p, eol, "type") && blank && name && sp.col > col + 4) {
    at.end_col = col + 4;
    diag_error(lx->d, at, "'type' aliases are not supported yet");
    return true;
  }
  if (word_is(p, eol, "except")) {
    const char *q = p + 6;
    while (q < eol && (*q == ' ' || *q == '\t')) q++;
    if (q < eol && *q == '*') {
      at.end_col = col + 6;
      diag_error(lx->d, at, "'except*' is not supported yet");
      return true;
    }
  }
  if ((word_is(p, eol, "def") || word_is(p, eol, "class") || word_is(p, eol, "async"))
      && sp.col - 1 < (int)(eol - line_start) && line_start[sp.col - 1] == '[') {
    diag_error(lx->d, sp, "type parameters ('[' after the name of a def or class) are not "
               "supported yet");
    return true;
  }
  return false;
}

/* invalid syntax: unexpected X, expected A, B or C */
static int yyreport_syntax_error(const yypcontext_t *ctx, Lexer *lx) {
  yysymbol_kind_t tok = yypcontext_token(ctx);
  Span sp = *yypcontext_location(ctx);
  if (tok == YYSYMBOL_INDENT) {
    diag_error(lx->d, sp, "unexpected indent");
    return 0;
  }
  if (sp.line > 0 && unsupported_statement(lx, sp))
    return 0;
  char unexpected[64];
  describe_unexpected(lx, tok, sp, unexpected, sizeof unexpected);
  yysymbol_kind_t exp[YYNTOKENS];
  int n = yypcontext_expected_tokens(ctx, exp, YYNTOKENS);
  /* Collapse the tokens that start an expression into one phrase. */
  const char *shown[YYNTOKENS];
  char bufs[YYNTOKENS][32];
  int nshown = 0;
  bool expr = false;
  for (int i = 0; i < n; i++)
    if (exp[i] == YYSYMBOL_INT)
      expr = true;
  if (expr)
    shown[nshown++] = "an expression";
  for (int i = 0; i < n; i++)
    if (!(expr && starts_expression(exp[i])))
      shown[nshown++] = expected_name(exp[i], bufs[i], sizeof bufs[i]);
  if (nshown > MAX_EXPECTED_SHOWN) {
    nshown = 0;
    if (expr)
      shown[nshown++] = "an expression";
    for (int i = 0; i < n; i++)
      if (!(expr && starts_expression(exp[i])) && !continues_expression(exp[i]))
        shown[nshown++] = expected_name(exp[i], bufs[i], sizeof bufs[i]);
  }
  if (n <= 0 || nshown > MAX_EXPECTED_SHOWN) {
    diag_error(lx->d, sp, "invalid syntax: unexpected %s", unexpected);
    return 0;
  }
  char list[512] = "";
  for (int i = 0; i < nshown; i++) {
    const char *sep = i == 0 ? "" : i == nshown - 1 ? " or " : ", ";
    strncat(list, sep, sizeof list - strlen(list) - 1);
    strncat(list, shown[i], sizeof list - strlen(list) - 1);
  }
  diag_error(lx->d, sp, "invalid syntax: unexpected %s, expected %s",
             unexpected, list);
  return 0;
}

/* Bison calls this only when its stack is exhausted: too deep nesting. */
static void tls_error(Span *loc, Lexer *lx, const char *msg) {
  if (strcmp(msg, "memory exhausted") == 0)
    diag_error(lx->d, *loc, "too deeply nested (more than %d levels on the "
               "parser's stack)", YYMAXDEPTH);
  else
    diag_error(lx->d, *loc, "%s", msg);
}
