/* eval.h: the staged evaluator, the one entry from the AST to the IR.
 *
 * eval_build runs the compile-time part of a script the way Tilus runs its
 * Python (classes, autotune spaces, shapes, inlined methods) and builds one
 * IR kernel per selected autotune point. Its private header is eval_int.h.
 */
#ifndef TLSC_EVAL_H
#define TLSC_EVAL_H

#include "frontend/frontend.h"
#include "ir/ir.h"

/* A -D name=value from the command line. */
typedef struct EvalDefine {
  const char *name;
  int64_t value;
  bool used;        /* set by eval_build; unused defines are an error */
  const char *word; /* -D NAME=WORD: a dtype name (value unused), else NULL */
} EvalDefine;

/* How the points of an autotune space that do not compile are reported.
 * A point whose evaluation or passes fail is skipped when other points of
 * its script compile (Tilus records it as failed and tunes over the rest);
 * the build fails when none does. */
typedef struct EvalOptions {
  bool verbose;     /* a note for each skipped point, with its values and why */
  bool quiet_skips; /* no note at all (a re-evaluation of the same module) */
} EvalOptions;

/* Builds one kernel per selected autotune point. NULL after errors. */
IrModule *eval_build(Arena *ar, const Node *module, const Source *src, EvalDefine *defs, int ndefs,
                     Diag *d);
/* The same with options (eval_build: a summary note of skipped points). */
IrModule *eval_build_with(Arena *ar, const Node *module, const Source *src, EvalDefine *defs,
                          int ndefs, const EvalOptions *opt, Diag *d);

#endif
