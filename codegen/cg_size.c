/*
 * cg_size.c — what compiling a plan costs, from the plan alone (no LLVM):
 * its size in expression nodes and the compile time that size predicts.
 * Mode auto weighs these against interpreting (api/query.c), in builds
 * without the JIT too (PJ_WITH_LLVM=OFF, where it never compiles).
 */
#include "cg.h"

int64_t cg_plan_size(const ir_plan *p) {
  int64_t n = 0;
  for (int i = 0; i < p->nops; i++)
    if (!p->ops[i]->dead) n += ir_op_size(p->ops[i]);
  return n;
}

int64_t cg_compile_estimate_ns(const ir_plan *p, int opt_level) {
  int64_t n = cg_plan_size(p);
  if (n > CG_BIG_PLAN) opt_level = 0;
  /* measured on workload compile_scaling and fused (bench/): a fixed
   * ~2 ms (level 0) / ~9 ms (level 2) plus per node */
  return opt_level == 0 ? 2000000 + n * 30000 : 9000000 + n * 150000;
}
