/* passes.c: the pass pipeline between the evaluator and the backend.
 *
 * The verifier runs around each pass, so that a bug is caught by the pass
 * that made it rather than by ptxas; each step stops the pipeline on error
 * because later passes assume the IR is well formed.
 */
#include "ir/ir.h"

bool ir_run_passes(IrModule *m, Diag *d) {
  return ir_check(m, d) && ir_infer_layouts(m, d) && ir_check(m, d) && ir_plan_smem(m, d) &&
         ir_check(m, d);
}
