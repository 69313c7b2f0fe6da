/* parser.y: the grammar of .tls scripts (a subset of Python 3) -> AST.
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
 * Hostile input costs memory and time linear in its size: every list grows
 * by doubling (statements go straight into their block's list), adjacent
 * strings and dotted names grow a buffer, comparison chains grow their
 * operator array with their operand list, and repeated names are found by
 * sorting (check_call_args, check_params), never by pairwise scans.
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
}

%code provides {
#define YYSTYPE TLS_STYPE
#define YYLTYPE TLS_LTYPE
}

%code {
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
static Node *push(Lexer *lx, Node *n, Node *item);
static NodeList list1(Lexer *lx, Node *item);
static bool check_target(Lexer *lx, Node *target);
static bool check_single_target(Lexer *lx, Node *target, const char *what);
static bool check_call_args(Lexer *lx, NodeList args);
static bool check_params(Lexer *lx, NodeList params);
static Node *mk_with(Lexer *lx, NodeList items, NodeList body, Span sp);
static Node *last_stmt(NodeList body);
static Node *mk_compound(Lexer *lx, NodeKind kind, Span head, NodeList body);
static Node *mk_listcomp(Lexer *lx, Node *elt, NodeList clauses, Span sp);
static NodeList prepend(Lexer *lx, Node *first, NodeList rest);
static void push_compare(Lexer *lx, Node *cmp, int op, Node *operand);
static Node *end_if_chain(Node *first, Node *last);
static Node *mk_str(Lexer *lx, char *text, Span sp);
static void buf_start(TextBuf *b, char *text);
static void buf_append(Lexer *lx, TextBuf *b, const char *sep, const char *text);
static bool unsupported(Lexer *lx, Span sp, const char *what);
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
}

%token <str> NAME "name"
%token <str> STRING "string"
%token <ival> INT "integer"
%token <fval> FLOAT "number"
%token <str> UNSUPPORTED "unsupported keyword"
%token NEWLINE "end of line"
%token INDENT "indent"
%token DEDENT "dedent"
%token DEF "def" CLASS "class" IF "if" ELIF "elif" ELSE "else" FOR "for"
%token IN "in" WHILE "while" WITH "with" AS "as" RETURN "return"
%token PASS "pass" BREAK "break" CONTINUE "continue" ASSERT "assert"
%token IMPORT "import" FROM "from" AND "and" OR "or" NOT "not" IS "is"
%token NONE "None" TRUE "True" FALSE "False"
%token POW "**" FLOORDIV "//" LSHIFT "<<" RSHIFT ">>" LE "<=" GE ">="
%token EQ "==" NE "!=" ARROW "->"
%token <op> AUGASSIGN "augmented assignment"

%type <node> stmt_compound small_stmt expr_stmt assign_chain import_stmt
%type <node> if_stmt while_stmt for_stmt with_stmt funcdef classdef
%type <node> decorated param with_item dotted_as_name import_as_name
%type <node> test or_test and_test not_test comparison comp_chain expr
%type <node> xor_expr and_expr shift_expr arith_expr term factor power
%type <node> primary atom testlist tuple_items exprlist expr_items
%type <node> subscripts subscript opt_test arg call comp_for ret_opt
%type <node> default_opt ann_opt
%type <list> module module_line stmts stmts_line simple_stmt small_stmts suite
%type <list> decorators params params_opt args test_seq expr_seq
%type <list> with_items comp_clauses comp_ifs subscript_seq
%type <list> dotted_as_names import_as_names import_targets
%type <buf> dotted_name strings
%type <chain> if_chain
%type <op> comp_op

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
    module small_stmt { $$ = $1; nodelist_push(AR, &$$, $2); }
  | module_line ';' small_stmt { $$ = $1; nodelist_push(AR, &$$, $3); }
  ;

stmts:
    stmt_compound { $$ = list1(lx, $1); }
  | stmts stmt_compound { $$ = $1; nodelist_push(AR, &$$, $2); }
  | stmts_line NEWLINE { $$ = $1; }
  | stmts_line ';' NEWLINE { $$ = $1; }
  ;

stmts_line:
    small_stmt { $$ = list1(lx, $1); }
  | stmts small_stmt { $$ = $1; nodelist_push(AR, &$$, $2); }
  | stmts_line ';' small_stmt { $$ = $1; nodelist_push(AR, &$$, $3); }
  ;

/* The simple statements after a compound statement's colon. */
simple_stmt:
    small_stmts NEWLINE { $$ = $1; }
  | small_stmts ';' NEWLINE { $$ = $1; }
  ;

small_stmts:
    small_stmt { $$ = list1(lx, $1); }
  | small_stmts ';' small_stmt { $$ = $1; nodelist_push(AR, &$$, $3); }
  ;

small_stmt:
    expr_stmt
  | PASS { $$ = mk(lx, N_PASS, @$); }
  | BREAK { $$ = mk(lx, N_BREAK, @$); }
  | CONTINUE { $$ = mk(lx, N_CONTINUE, @$); }
  | RETURN { $$ = mk(lx, N_RETURN, @$); }
  | RETURN testlist { $$ = mk(lx, N_RETURN, @$); $$->a = $2; }
  | ASSERT test { $$ = mk(lx, N_ASSERT, @$); $$->a = $2; }
  | ASSERT test ',' test { $$ = mk(lx, N_ASSERT, @$); $$->a = $2; $$->b = $4; }
  | import_stmt
  ;

/* Expression statements and the assignment forms:
 *   f(x)            x = y = 1        a, b = t
 *   x += 1          x: int32         x: int32 = 0 */
expr_stmt:
    testlist { $$ = mk(lx, N_EXPR_STMT, @$); $$->a = $1; }
  | assign_chain
  | testlist AUGASSIGN testlist {
      if (!check_single_target(lx, $1, "augmented assignment")) YYABORT;
      $$ = mk(lx, N_AUGASSIGN, @$); $$->op = $2; $$->a = $1; $$->b = $3;
    }
  | test ':' test {
      if (!check_single_target(lx, $1, "annotation")) YYABORT;
      $$ = mk(lx, N_ANNDECL, @$); $$->a = $1; $$->b = $3;
    }
  | test ':' test '=' testlist {
      if (!check_single_target(lx, $1, "annotation")) YYABORT;
      $$ = mk(lx, N_ASSIGN, @$); $$->list = list1(lx, $1);
      $$->a = $5; $$->b = $3;
    }
  ;

/* a = b = value: every expression but the last is a target. */
assign_chain:
    testlist '=' testlist {
      if (!check_target(lx, $1)) YYABORT;
      $$ = mk(lx, N_ASSIGN, @$); $$->list = list1(lx, $1); $$->a = $3;
    }
  | assign_chain '=' testlist {
      if (!check_target(lx, $1->a)) YYABORT;
      $$ = $1; $$->span = @$;
      nodelist_push(AR, &$$->list, $1->a); $$->a = $3;
    }
  ;

/* import a.b [as c], ...   from a.b import x [as y], ... | (x, y) | * */
import_stmt:
    IMPORT dotted_as_names {
      if ($2.len > 1) { unsupported(lx, @2, "importing several modules in one statement"); YYABORT; }
      $$ = $2.items[0]; $$->span = @$;
    }
  | FROM dotted_name IMPORT import_targets {
      $$ = mk(lx, N_FROM_IMPORT, @$); $$->str = $2.text; $$->list = $4;
    }
  | FROM dotted_name IMPORT '*' {
      $$ = mk(lx, N_FROM_IMPORT, @$); $$->str = $2.text; $$->ival = 1;
    }
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
    NAME { $$ = mk(lx, N_NAME, @$); $$->name = $1; }
  | NAME AS NAME { $$ = mk(lx, N_NAME, @$); $$->name = $1; $$->str = $3; }
  ;

stmt_compound:
    if_stmt | while_stmt | for_stmt | with_stmt | funcdef | classdef
  | decorated
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
    IF test ':' suite {
      Node *n = mk_compound(lx, N_IF, @1, $4); n->a = $2; n->list = $4;
      $$.first = $$.last = n;
    }
  | if_chain ELIF test ':' suite {
      Node *n = mk_compound(lx, N_IF, @2, $5); n->a = $3; n->list = $5;
      $1.last->list2 = list1(lx, n);
      $$.first = $1.first; $$.last = n;
    }
  ;

while_stmt:
    WHILE test ':' suite { $$ = mk_compound(lx, N_WHILE, @1, $4); $$->a = $2; $$->list = $4; }
  | WHILE test ':' suite ELSE {
      unsupported(lx, @5, "'else' after a 'while' loop"); YYABORT;
    }
  ;

for_stmt:
    FOR exprlist IN testlist ':' suite {
      if (!check_target(lx, $2)) YYABORT;
      $$ = mk_compound(lx, N_FOR, @1, $6); $$->a = $2; $$->b = $4;
      $$->list = $6;
    }
  | FOR exprlist IN testlist ':' suite ELSE {
      unsupported(lx, @7, "'else' after a 'for' loop"); YYABORT;
    }
  ;

/* with a as x, b: body  ==  with a as x: with b: body */
with_stmt:
    WITH with_items ':' suite { $$ = mk_with(lx, $2, $4, @1); }
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
      if (!check_params(lx, $4)) YYABORT;
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

/* name[: annotation][= default], *args, **kwargs */
param:
    NAME ann_opt default_opt {
      $$ = mk(lx, N_PARAM, @$); $$->name = $1; $$->a = $2; $$->b = $3;
    }
  | '*' NAME ann_opt {
      $$ = mk(lx, N_PARAM, @$); $$->name = $2; $$->a = $3; $$->op = '*';
    }
  | POW NAME ann_opt {
      $$ = mk(lx, N_PARAM, @$); $$->name = $2; $$->a = $3; $$->op = TOK_POW;
    }
  ;

ann_opt:
    %empty { $$ = NULL; }
  | ':' test { $$ = $2; }
  ;

default_opt:
    %empty { $$ = NULL; }
  | '=' test { $$ = $2; }
  ;

/* class Name[(bases)]: body */
classdef:
    CLASS NAME ':' suite {
      $$ = mk_compound(lx, N_CLASS, @1, $4); $$->name = $2; $$->list2 = $4;
    }
  | CLASS NAME '(' ')' ':' suite {
      $$ = mk_compound(lx, N_CLASS, @1, $6); $$->name = $2; $$->list2 = $6;
    }
  | CLASS NAME '(' args opt_comma ')' ':' suite {
      for (int i = 0; i < $4.len; i++)
        if ($4.items[i]->kind != N_NAME && $4.items[i]->kind != N_ATTR
            && $4.items[i]->kind != N_SUBSCRIPT && $4.items[i]->kind != N_CALL) {
          unsupported(lx, $4.items[i]->span, "this kind of base class");
          YYABORT;
        }
      $$ = mk_compound(lx, N_CLASS, @1, $8); $$->name = $2;
      $$->list = $4; $$->list2 = $8;
    }
  ;

/* @decorator lines before a def or class; outermost first. */
decorated:
    decorators funcdef { $$ = $2; $$->list3 = $1; $$->span = span_join(@1, $2->span); }
  | decorators classdef { $$ = $2; $$->list3 = $1; $$->span = span_join(@1, $2->span); }
  ;

decorators:
    '@' test NEWLINE { $$ = list1(lx, $2); }
  | decorators '@' test NEWLINE { $$ = $1; nodelist_push(AR, &$$, $3); }
  ;

/* The body of a compound statement: on the same line, or indented. */
suite:
    simple_stmt { $$ = $1; }
  | NEWLINE INDENT stmts DEDENT { $$ = $3; }
  ;

/* ------------------------------------------------------------ expressions */

/* test [, test]* [,]: a bare tuple when there is a comma. */
testlist:
    test
  | tuple_items
  ;

tuple_items:
    test ',' { $$ = mk_list(lx, N_TUPLE, $1, @$); }
  | test ',' test_seq opt_comma { $$ = mk(lx, N_TUPLE, @$); $$->list = prepend(lx, $1, $3); }
  ;

test_seq:
    test { $$ = list1(lx, $1); }
  | test_seq ',' test { $$ = $1; nodelist_push(AR, &$$, $3); }
  ;

opt_comma: %empty | ',' ;

/* Targets of for and comprehensions: bitwise-or level, so `in` ends them. */
exprlist:
    expr
  | expr_items
  ;

expr_items:
    expr ',' { $$ = mk_list(lx, N_TUPLE, $1, @$); }
  | expr ',' expr_seq opt_comma { $$ = mk(lx, N_TUPLE, @$); $$->list = prepend(lx, $1, $3); }
  ;

expr_seq:
    expr { $$ = list1(lx, $1); }
  | expr_seq ',' expr { $$ = $1; nodelist_push(AR, &$$, $3); }
  ;

/* b if a else c */
test:
    or_test
  | or_test IF or_test ELSE test {
      $$ = mk(lx, N_IFEXP, @$); $$->a = $3; $$->b = $1; $$->c = $5;
    }
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
    primary
  | primary POW factor { $$ = mk_binary(lx, TOK_POW, $1, $3, @$); }
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
  | primary '(' args opt_comma ')' {
      $$ = mk(lx, N_CALL, @$); $$->a = $1;
      if (!check_call_args(lx, $3)) YYABORT;
      for (int i = 0; i < $3.len; i++)
        nodelist_push(AR, $3.items[i]->kind == N_KEYWORD ? &$$->list2 : &$$->list,
                      $3.items[i]);
    }
  ;

args:
    arg { $$ = list1(lx, $1); }
  | args ',' arg { $$ = $1; nodelist_push(AR, &$$, $3); }
  ;

/* f(x), f(name=x), f(*xs); f(**kw) and generator arguments are refused. */
arg:
    test
  | NAME '=' test { $$ = mk(lx, N_KEYWORD, @$); $$->name = $1; $$->a = $3; }
  | '*' test { $$ = mk(lx, N_STAR, @$); $$->op = '*'; $$->a = $2; }
  | POW test { unsupported(lx, @$, "'**' arguments"); YYABORT; }
  | test comp_for { unsupported(lx, @$, "generator expressions"); YYABORT; }
  ;

/* a[i], a[i, j], a[1:2], a[:, 3], a[::2] */
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
      $$ = mk(lx, N_SLICE, @$); $$->a = $1; $$->b = $3;
    }
  | opt_test ':' opt_test ':' opt_test {
      $$ = mk(lx, N_SLICE, @$); $$->a = $1; $$->b = $3; $$->c = $5;
    }
  ;

opt_test:
    %empty { $$ = NULL; }
  | test
  ;

atom:
    NAME { $$ = mk(lx, N_NAME, @$); $$->name = $1; }
  | INT { $$ = mk(lx, N_INT, @$); $$->ival = $1; }
  | FLOAT { $$ = mk(lx, N_FLOAT, @$); $$->fval = $1; }
  | strings { $$ = mk_str(lx, $1.text, @$); }
  | NONE { $$ = mk(lx, N_NONE, @$); }
  | TRUE { $$ = mk(lx, N_TRUE, @$); }
  | FALSE { $$ = mk(lx, N_FALSE, @$); }
  | '(' ')' { $$ = mk(lx, N_TUPLE, @$); }
  | '(' test ')' { $$ = $2; }
  | '(' tuple_items ')' { $$ = $2; $$->span = @$; }
  | '(' test comp_for ')' { unsupported(lx, @$, "generator expressions"); YYABORT; }
  | '[' ']' { $$ = mk(lx, N_LIST, @$); }
  | '[' test_seq opt_comma ']' { $$ = mk(lx, N_LIST, @$); $$->list = $2; }
  | '[' test comp_clauses ']' { $$ = mk_listcomp(lx, $2, $3, @$); }
  ;

/* Adjacent string literals are one string, as in Python. */
strings:
    STRING { buf_start(&$$, $1); }
  | strings STRING { $$ = $1; buf_append(lx, &$$, "", $2); }
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

/* Several with-items nest: each item's body is the next item. */
static Node *mk_with(Lexer *lx, NodeList items, NodeList body, Span sp) {
  Span whole = span_join(sp, last_stmt(body)->span);
  for (int i = items.len - 1; i >= 0; i--) {
    Node *w = items.items[i];
    w->list = body;
    w->span = span_join(i == 0 ? sp : w->span, whole);
    body = list1(lx, w);
  }
  return items.items[0];
}

/* [elt for b in c if ... for ...]: the first clause lives in the node. */
static Node *mk_listcomp(Lexer *lx, Node *elt, NodeList clauses, Span sp) {
  Node *n = mk(lx, N_LISTCOMP, sp);
  Node *first = clauses.items[0];
  n->a = elt;
  n->b = first->b;
  n->c = first->c;
  n->list = first->list;
  for (int i = 1; i < clauses.len; i++)
    nodelist_push(lx->ar, &n->list2, clauses.items[i]);
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

/* What an expression is called in "cannot assign to ..." messages. */
static const char *describe(const Node *n) {
  switch (n->kind) {
  case N_CALL: return "a function call";
  case N_INT: case N_FLOAT: case N_STR: return "a literal";
  case N_TRUE: return "True";
  case N_FALSE: return "False";
  case N_NONE: return "None";
  case N_COMPARE: return "a comparison";
  case N_BOOLOP: case N_BINARY: case N_UNARY: return "an expression";
  case N_IFEXP: return "a conditional expression";
  case N_LISTCOMP: return "a list comprehension";
  case N_STAR: return "a starred expression";
  default: return "this expression";
  }
}

/* Assignment, for and with targets: names, attributes, subscripts, and
 * tuples/lists of those (nesting bounded by the bracket limit). */
static bool check_target(Lexer *lx, Node *t) {
  switch (t->kind) {
  case N_NAME: case N_ATTR: case N_SUBSCRIPT:
    return true;
  case N_TUPLE: case N_LIST:
    if (t->list.len == 0) {
      diag_error(lx->d, t->span, "cannot assign to an empty %s",
                 t->kind == N_TUPLE ? "tuple" : "list");
      return false;
    }
    for (int i = 0; i < t->list.len; i++)
      if (!check_target(lx, t->list.items[i]))
        return false;
    return true;
  default:
    diag_error(lx->d, t->span, "cannot assign to %s", describe(t));
    return false;
  }
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

/* Python's rules for the arguments of a call, in source order: no
 * positional argument after a keyword argument (a *xs may follow one), and
 * no keyword given twice. */
static bool check_call_args(Lexer *lx, NodeList args) {
  bool seen_keyword = false;
  int nkw = 0;
  for (int i = 0; i < args.len; i++) {
    Node *arg = args.items[i];
    if (arg->kind == N_KEYWORD) {
      seen_keyword = true;
      nkw++;
    } else if (seen_keyword && arg->kind != N_STAR) {
      diag_error(lx->d, arg->span, "positional argument follows keyword argument");
      return false;
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

/* Python's rules for parameters: no name twice; after a parameter with a
 * default, every plain parameter has one too; at most one *args and one
 * **kwargs, **kwargs last. The first broken rule in order is reported. */
static bool check_params(Lexer *lx, NodeList params) {
  bool seen_default = false, seen_star = false, seen_kwargs = false;
  int dup = first_repeat(params.items, params.len);
  for (int i = 0; i < params.len; i++) {
    Node *p = params.items[i];
    if (i == dup) {
      diag_error(lx->d, p->span, "duplicate parameter '%s'", p->name);
      return false;
    }
    if (seen_kwargs) {
      diag_error(lx->d, p->span, "parameter after **%s",
                 params.items[i - 1]->name);
      return false;
    }
    if (p->op == '*' && seen_star) {
      diag_error(lx->d, p->span, "more than one *parameter");
      return false;
    }
    seen_star |= p->op == '*';
    seen_kwargs |= p->op == TOK_POW;
    if (p->op == 0 && p->b)
      seen_default = true;
    else if (p->op == 0 && seen_default && !seen_star) {
      diag_error(lx->d, p->span, "parameter without a default follows a "
                 "parameter with a default");
      return false;
    }
  }
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

/* Can an expression start with this token? */
static bool starts_expression(yysymbol_kind_t t) {
  switch (t) {
  case YYSYMBOL_NAME: case YYSYMBOL_INT: case YYSYMBOL_FLOAT:
  case YYSYMBOL_STRING: case YYSYMBOL_NONE: case YYSYMBOL_TRUE:
  case YYSYMBOL_FALSE: case YYSYMBOL_NOT:
    return true;
  default: {
    const char *name = yysymbol_name(t);
    return strcmp(name, "'('") == 0 || strcmp(name, "'['") == 0
           || strcmp(name, "'-'") == 0 || strcmp(name, "'+'") == 0
           || strcmp(name, "'~'") == 0;
  }
  }
}

/* The name of an expected token: 'x' for punctuation and keywords. */
static const char *expected_name(yysymbol_kind_t t, char *buf, size_t cap) {
  const char *name = yysymbol_name(t);
  switch (t) {
  case YYSYMBOL_NAME: return "a name";
  case YYSYMBOL_STRING: return "a string";
  case YYSYMBOL_INT: case YYSYMBOL_FLOAT: return "a number";
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

/* invalid syntax: unexpected X, expected A, B or C */
static int yyreport_syntax_error(const yypcontext_t *ctx, Lexer *lx) {
  yysymbol_kind_t tok = yypcontext_token(ctx);
  Span sp = *yypcontext_location(ctx);
  if (tok == YYSYMBOL_INDENT) {
    diag_error(lx->d, sp, "unexpected indent");
    return 0;
  }
  if (tok == YYSYMBOL_UNSUPPORTED) {
    char text[48];
    token_text(lx, sp, text, sizeof text);
    diag_error(lx->d, sp, "'%s' is not supported in tls scripts", text);
    return 0;
  }
  char unexpected[64];
  describe_unexpected(lx, tok, sp, unexpected, sizeof unexpected);
  if (strcmp(unexpected, "'{'") == 0) {
    diag_error(lx->d, sp, "dict and set displays ('{') are not supported");
    return 0;
  }
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
