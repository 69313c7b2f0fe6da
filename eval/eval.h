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
  bool used; /* set by eval_build; unused defines are an error */
} EvalDefine;

/* Builds one kernel per selected autotune point. NULL after errors. */
IrModule *eval_build(Arena *ar, const Node *module, const Source *src, EvalDefine *defs, int ndefs,
                     Diag *d);

#endif
