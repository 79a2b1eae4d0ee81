/*
 * cg_size.c — what compiling a plan costs, from the plan alone (no LLVM):
 * its size in expression nodes and the compile time that size predicts.
 * Mode auto weighs these against interpreting (api/query.c), in builds
 * without the JIT too (PJ_WITH_LLVM=OFF, where it never compiles).
 */
#include "cg.h"

static int64_t expr_size(const ir_expr *e) {
  if (!e) return 0;
  int64_t n = 1;
  for (int i = 0; i < e->nargs; i++) n += expr_size(e->args[i]);
  return n;
}

int64_t cg_plan_size(const ir_plan *p) {
  int64_t n = 0;
  for (int i = 0; i < p->nops; i++) {
    const ir_op *op = p->ops[i];
    if (op->dead) continue;
    switch (op->kind) {
    case IR_FILTER: n += expr_size(op->filter.pred); break;
    case IR_COMPUTE: n += expr_size(op->compute.expr); break;
    case IR_LIMIT: n += expr_size(op->limit.count) + expr_size(op->limit.offset); break;
    case IR_SORT: n += op->sort.ncarry; break;
    case IR_TREE_ORDER: n += op->tree.ncarry; break;
    case IR_IV_BUFFER: n += op->ivbuf.ncarry; break;
    case IR_AGGREGATE: n += op->agg.naggs + op->agg.ngroup; break;
    case IR_TREE_ACC: n += op->tree.naggs; break;
    case IR_FLATTEN: n += op->iv.naggs; break;
    case IR_OUTPUT: n += op->output.nout; break;
    case IR_SCAN_TABLE: case IR_SCAN_SQL: case IR_SCAN_BUF: case IR_TREE_NUMBER: case IR_ISECT:
    case IR_IJOIN: case IR_FILLGAPS: case IR__COUNT:
      break;
    }
  }
  return n;
}

int64_t cg_compile_estimate_ns(const ir_plan *p, int opt_level) {
  int64_t n = cg_plan_size(p);
  if (n > CG_BIG_PLAN) opt_level = 0;
  /* measured on workload compile_scaling and fused (bench/): a fixed
   * ~2 ms (level 0) / ~9 ms (level 2) plus per node */
  return opt_level == 0 ? 2000000 + n * 30000 : 9000000 + n * 150000;
}
