/* passes.c: the pass pipeline between the evaluator and the backend.
 *
 * The verifier runs around each pass, so that a bug is caught by the pass
 * that made it rather than by ptxas; each step stops the pipeline on error
 * because later passes assume the IR is well formed. Barrier assignment
 * comes before the first check: it cannot fail and reads only the nesting
 * of thread groups, so the first check already sees every barrier_id and
 * reports a sync() in one thread group too many at that group's first
 * sync(), before any other pass runs. Layout inference may add register
 * layout conversions (collective, between barriers of their thread
 * group): the barriers are assigned again after it, over every statement.
 *
 * Unrolling and constant propagation come last, on checked and planned
 * IR: they only copy and simplify statements (the copies keep their
 * barrier IDs, tensor maps and layouts), and the check after them holds
 * them to the same rules. Then a dot whose product is only added to
 * another tensor accumulates into it (dotacc.c), and global loads move above the reductions,
 * conversions and branches before them that they do not depend on
 * (hoist.c), which also only moves statements. The simulator (--verify)
 * and the backend both see their result.
 */
#include "ir/ir.h"

/* hoist.c: global loads moved above the collectives and branches before
 * them in their block (after unrolling: the copies' loads move too). */
void ir_hoist_loads(IrModule *m);
/* stage.c: a 16-bit mma.sync accumulator stored to global memory through
 * shared memory, in 16-byte vectors, where the kernel's dead shared
 * memory holds it. */
void ir_stage_stores(IrModule *m);
/* dotacc.c: `x + dot(a, b)` as dot(a, b, c=x), one accumulator fewer. */
void ir_fuse_dot_acc(IrModule *m);

bool ir_run_passes(IrModule *m, Diag *d) {
  ir_assign_barriers(m); /* first: the checker reads what it assigns */
  if (!(ir_check(m, d) && ir_infer_layouts(m, d))) return false;
  ir_stage_stores(m);
  ir_assign_barriers(m); /* again: the conversions layout inference (and staging) added */
  if (!(ir_check(m, d) && ir_plan_smem(m, d) && ir_check(m, d))) return false;
  ir_unroll_loops(m);
  ir_propagate_constants(m);
  ir_fuse_dot_acc(m);
  if (!ir_check_pressure(m, d)) return false; /* the script's order, before hoisting */
  ir_hoist_loads(m);
  ir_plan_divisors(m); /* magic.c: hidden parameters for launch-invariant divisors */
  return ir_check(m, d);
}
