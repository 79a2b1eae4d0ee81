/*
 * cg_tree.c — TREE ACCUMULATE's streaming steps inside the fused loop
 * (runtime/tree/tree.h has the contract; interp/vm_tree.c is the same thing
 * vectorized). The ordering between them is a breaker (TREE_ORDER sink)
 * the driver finishes; this file only does per-row work.
 *
 * TREE_NUMBER: the TABLE and DENSE tiers are inlined. Per row, with the
 * tier and the row counter in registers:
 *
 *   tree.fast = tier == TABLE && (pnull || parent <u limit && parent != id)
 *            || tier == DENSE && !idnull && id == nrows
 *                             && (pnull || parent <u nrows)
 *   fast: node = id, pnode = pnull ? NONE : parent, nrows++
 *   slow: cg_rt_treenum_row (the hash tier, the switch to it, and every
 *         error: the runtime writes the message), then reload tier/nrows
 *
 * String ids always take the slow path (the runtime hashes them).
 *
 * The hash tier row by row is slower than the interpreter, whose
 * rt_treenum_batch prefetches the map a few rows ahead. So when the
 * state is in the HASH tier at the start of a batch (always, for string
 * ids), the prologue numbers the whole batch with that same function and
 * the rows read node / parent node from t->node_out / t->pnode_out (the
 * state's RT_BATCH scratch arrays). That is only the interpreter's order
 * of work when TREE_NUMBER is the segment's first live step: its inputs
 * are then batch columns and every active row reaches it; otherwise the
 * per-row path stays. A batch that starts in a fast tier keeps the inline
 * path, and rows after a mid-batch switch to HASH call rt_treenum_row. A
 * numbering error of the batch call returns at once: no earlier step
 * exists whose error would win, and rt_treenum_batch stops at the same
 * row (the first failing active one) with the same message.
 *
 * TREE_ACC: per live aggregate, on the per-node arrays of
 * run->treeaccs[op] (n = node, p = parent node):
 *
 *   UP:   total = v ⊕ acc[n];  if (p != NONE) acc[p] ⊕= total
 *   DOWN: total = p != NONE ? v ⊕ acc[p] : v;  acc[n] = total
 *
 * Branch-free: a root uses its own node as the parent slot (q = root ? n :
 * p) and the result of that update is ignored. That is safe because each
 * node's row comes exactly once: UP reads acc[n] only for n's own row,
 * before writing acc[n] through q, and DOWN reads acc[n] only through its
 * children's rows, which come after n's row stored the real value. Integer
 * adds are checked (`TREE ACCUMULATE: integer overflow`), with the
 * overflow of a root's dummy add masked. MIN/MAX keep has[] and give NULL
 * when neither the row nor what it folds in has a value. The totals become
 * row values (cx->row) that later steps and the sink read like any column.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

typedef struct cg_treeagg {
  const ir_agg *ag;
  rt_type in;                 /* RT_I64 or RT_F64 */
  LLVMValueRef vals, has;     /* the per-node arrays (i or f, has) */
} cg_treeagg;

typedef struct cg_treeop {
  const ir_op *op;
  LLVMValueRef state;         /* rt_treenum * or rt_treeacc * */
  /* TREE_NUMBER */
  LLVMValueRef tier, nrows;   /* allocas: i32 */
  LLVMValueRef limit;         /* i64 */
  LLVMValueRef node_slot, pnode_slot;  /* allocas: i32, out-params of the call */
  bool batchable;             /* first live step: may number the batch up front */
  LLVMValueRef use_batch;     /* i1: this batch was numbered up front */
  LLVMValueRef node_out, pnode_out;    /* its results, by position */
  /* TREE_ACC */
  LLVMValueRef nnodes;        /* i64 */
  int naggs;
  cg_treeagg *aggs;
} cg_treeop;

struct cg_treestate {
  int nops;
  cg_treeop *ops;
};

static bool cg_tree_agg_ok(const ir_agg *ag) {
  if (!ag->live) return true;
  switch (ag->kind) {
  case RT_AGG_COUNT_STAR: return true;
  case RT_AGG_COUNT: return ag->arg_col >= 0;
  case RT_AGG_SUM: case RT_AGG_MIN: case RT_AGG_MAX: {
    rt_type t = rt_store_type(ag->arg_type);
    return ag->arg_col >= 0 && (t == RT_I64 || t == RT_F64);
  }
  case RT_AGG_AVG: case RT_AGG_ARG_MAX: case RT_AGG_ARG_MIN: case RT_AGG_FIRST: case RT_AGG_LAST:
    return false;   /* §9.4's: the interpreter computes them (vm_tree.c) */
  case RT_AGG_ANY_VALUE: case RT_AGG_COUNT_DISTINCT: case RT_AGG_GROUP_CONCAT: case RT_AGG_MEDIAN:
  case RT_AGG_PERCENTILE:
    return false;   /* not tree aggregates */
  }
  return false;
}

bool cg_tree_supported(const ir_op *op) {
  if (op->kind == IR_TREE_NUMBER) return true;   /* id types are checked in the prologue */
  if (op->kind != IR_TREE_ACC) return false;
  for (int k = 0; k < op->tree.naggs; k++)
    if (!cg_tree_agg_ok(&op->tree.aggs[k])) return false;
  return true;
}

static int cg_op_index(const ir_plan *p, const ir_op *op) {
  for (int i = 0; i < p->nops; i++)
    if (p->ops[i] == op) return i;
  return -1;
}

/* An id column type the inlined numbering reads: any integer or a string. */
static bool cg_tree_idtype_ok(rt_type t) {
  return t == RT_ID || t == RT_U32 || t == RT_I32 || t == RT_I64 || t == RT_BOOL || t == RT_STR;
}

/* Continues in a fresh block when cond holds, else goes to fallback. */
static void cg_require(cg_ctx *cx, LLVMValueRef cond, LLVMBasicBlockRef fallback, const char *nm) {
  LLVMBasicBlockRef ok = cg_block(cx, nm);
  LLVMBuildCondBr(cx->b, cond, ok, fallback);
  cg_at(cx, ok);
}

static void cg_tree_num_prologue(cg_ctx *cx, cg_treeop *t, LLVMValueRef st,
                                 LLVMBasicBlockRef fallback) {
  const ir_op *op = t->op;
  const ir_plan *p = cx->plan;
  if (!cg_tree_idtype_ok(p->cols[op->tree.id_col].type) ||
      !cg_tree_idtype_ok(p->cols[op->tree.parent_col].type) ||
      (p->cols[op->tree.id_col].type == RT_STR) != (p->cols[op->tree.parent_col].type == RT_STR)) {
    /* float or NULL-typed ids: the interpreter reports them */
    LLVMBuildBr(cx->b, fallback);
    cg_at(cx, cg_block(cx, "tree.unreached"));
    return;
  }
  t->tier = cg_slot(cx, cx->t_i32, "tree.tier.slot");
  t->nrows = cg_slot(cx, cx->t_i32, "tree.nrows.slot");
  t->node_slot = cg_slot(cx, cx->t_i32, "tree.node.slot");
  t->pnode_slot = cg_slot(cx, cx->t_i32, "tree.pnode.slot");
  LLVMBuildStore(cx->b, cg_load_field(cx, cx->st.treenum, st, CG_TREENUM_TIER, cx->t_i32, "tree.tier"), t->tier);
  LLVMBuildStore(cx->b, cg_load_field(cx, cx->st.treenum, st, CG_TREENUM_NROWS, cx->t_i32, "tree.nrows"), t->nrows);
  t->limit = cg_load_field(cx, cx->st.treenum, st, CG_TREENUM_LIMIT, cx->t_i64, "tree.limit");
}

static void cg_tree_acc_prologue(cg_ctx *cx, cg_treeop *t, LLVMValueRef st,
                                 LLVMBasicBlockRef fallback) {
  const ir_op *op = t->op;
  t->aggs = cg_alloc(cx, ((size_t)op->tree.naggs + 1) * sizeof *t->aggs);
  if (!t->aggs) return;   /* error set: cg_tree_prologue gives up */
  for (int k = 0; k < op->tree.naggs; k++) {
    if (!op->tree.aggs[k].live) continue;
    cg_treeagg *g = &t->aggs[t->naggs++];
    g->ag = &op->tree.aggs[k];
    g->in = rt_store_type(op->tree.aggs[k].arg_type) == RT_F64 && op->tree.aggs[k].kind != RT_AGG_COUNT &&
                    op->tree.aggs[k].kind != RT_AGG_COUNT_STAR
                ? RT_F64
                : RT_I64;
  }
  /* the state must hold exactly the live aggregates, in op order */
  LLVMValueRef na = cg_load_field(cx, cx->st.treeacc, st, CG_TREEACC_NAGGS, cx->t_i32, "");
  cg_require(cx, LLVMBuildICmp(cx->b, LLVMIntEQ, na, cg_i32(cx, t->naggs), ""), fallback, "tree.acc.ready");
  t->nnodes = LLVMBuildZExt(cx->b, cg_load_field(cx, cx->st.treeacc, st, CG_TREEACC_NNODES, cx->t_i32, ""),
                            cx->t_i64, "tree.nnodes");
  LLVMValueRef aggs = cg_load_field(cx, cx->st.treeacc, st, CG_TREEACC_AGGS, cx->t_ptr, "tree.aggs");
  for (int j = 0; j < t->naggs; j++) {
    cg_treeagg *g = &t->aggs[j];
    char nm[96], buf[128];
    cg_colname(cx, g->ag->out_col, nm, sizeof nm);
    LLVMValueRef gp = cg_elem_ptr(cx, cx->st.treeagg, aggs, cg_i64(cx, j), "");
    snprintf(buf, sizeof buf, "tree.acc.%s", nm);
    g->vals = cg_load_field(cx, cx->st.treeagg, gp, g->in == RT_F64 ? CG_TREEAGG_F : CG_TREEAGG_I,
                            cx->t_ptr, buf);
    if (g->ag->kind == RT_AGG_MIN || g->ag->kind == RT_AGG_MAX) {
      snprintf(buf, sizeof buf, "tree.acc.%s.has", nm);
      g->has = cg_load_field(cx, cx->st.treeagg, gp, CG_TREEAGG_HAS, cx->t_ptr, buf);
    }
  }
}

/* The step index of op in the segment, and whether it is the first live
 * step. */
static int cg_step_index(const ir_segment *seg, const ir_op *op, bool *first) {
  *first = true;
  for (int k = 0; k < seg->nsteps; k++) {
    if (seg->steps[k] == op) return k;
    if (!seg->steps[k]->dead) *first = false;
  }
  *first = false;
  return -1;
}

/* In the HASH tier, numbers the whole batch with the interpreter's
 * rt_treenum_batch (see the banner). */
static void cg_tree_num_batch(cg_ctx *cx, cg_treeop *t) {
  const ir_op *op = t->op;
  bool first;
  int step = cg_step_index(cx->seg, op, &first);
  if (step < 0 || !first) return;
  t->batchable = true;
  LLVMValueRef tier = LLVMBuildLoad2(cx->b, cx->t_i32, t->tier, "");
  t->use_batch = LLVMBuildICmp(cx->b, LLVMIntEQ, tier, cg_i32(cx, RT_TREE_TIER_HASH), "tree.batch");
  LLVMBasicBlockRef call = cg_block(cx, "tree.batch.call"), done = cg_block(cx, "tree.batch.done");
  LLVMBasicBlockRef failbb = cg_block(cx, "tree.batch.fail");
  LLVMBuildCondBr(cx->b, t->use_batch, call, done);
  cg_at(cx, call);
  /* the runtime reads and advances the counters in memory */
  LLVMBuildStore(cx->b, LLVMBuildLoad2(cx->b, cx->t_i32, t->nrows, ""),
                 cg_field_ptr(cx, cx->st.treenum, t->state, CG_TREENUM_NROWS, ""));
  LLVMValueRef args[4] = {t->state, cx->batch, cg_i32(cx, op->tree.id_col), cg_i32(cx, op->tree.parent_col)};
  LLVMValueRef rc = cg_call(cx, "cg_rt_treenum_batch", args, 4, "tree.batch.rc");
  LLVMBuildStore(cx->b, cg_load_field(cx, cx->st.treenum, t->state, CG_TREENUM_TIER, cx->t_i32, ""), t->tier);
  LLVMBuildStore(cx->b, cg_load_field(cx, cx->st.treenum, t->state, CG_TREENUM_NROWS, cx->t_i32, ""), t->nrows);
  LLVMBasicBlockRef ok = cg_block(cx, "tree.batch.ok");
  LLVMBuildCondBr(cx->b, LLVMBuildICmp(cx->b, LLVMIntSLT, rc, cg_i32(cx, 0), ""), failbb, ok);
  cg_at(cx, failbb);
  {
    LLVMValueRef fa[2] = {cx->s, cg_i32(cx, step * CG_ERR_KINDS + CG_ERR_RUNTIME)};
    LLVMBuildRet(cx->b, cg_call(cx, "cg_rt_fail", fa, 2, ""));
  }
  cg_at(cx, ok);
  LLVMBuildBr(cx->b, done);
  cg_at(cx, done);
  /* fixed for the state's life; loaded either way (never read unless the
   * batch was numbered here) */
  t->node_out = cg_load_field(cx, cx->st.treenum, t->state, CG_TREENUM_NODE_OUT, cx->t_ptr, "tree.node.out");
  t->pnode_out = cg_load_field(cx, cx->st.treenum, t->state, CG_TREENUM_PNODE_OUT, cx->t_ptr, "tree.pnode.out");
}

cg_treestate *cg_tree_prologue(cg_ctx *cx, LLVMBasicBlockRef fallback) {
  const ir_segment *seg = cx->seg;
  cg_treestate *ts = cg_alloc(cx, sizeof *ts);
  if (!ts || !(ts->ops = cg_alloc(cx, ((size_t)seg->nsteps + 1) * sizeof *ts->ops))) return NULL;
  LLVMValueRef nums = NULL, accs = NULL;
  for (int k = 0; k < seg->nsteps; k++) {
    const ir_op *op = seg->steps[k];
    if (op->dead || (op->kind != IR_TREE_NUMBER && op->kind != IR_TREE_ACC)) continue;
    cg_treeop *t = &ts->ops[ts->nops++];
    t->op = op;
    int idx = cg_op_index(cx->plan, op);
    bool num = op->kind == IR_TREE_NUMBER;
    LLVMValueRef *arr = num ? &nums : &accs;
    if (!*arr)
      *arr = cg_load_field(cx, cx->st.run, cx->run, num ? CG_RUN_TREENUMS : CG_RUN_TREEACCS, cx->t_ptr,
                           num ? "treenums" : "treeaccs");
    LLVMValueRef st = cg_load_elem(cx, cx->t_ptr, *arr, cg_i64(cx, idx < 0 ? 0 : idx),
                                   num ? "tree.num" : "tree.acc");
    /* no state: let the interpreter report it */
    cg_require(cx, LLVMBuildIsNotNull(cx->b, st, ""), fallback, num ? "tree.num.ready" : "tree.acc.state");
    t->state = st;
    if (num) cg_tree_num_prologue(cx, t, st, fallback);
    else cg_tree_acc_prologue(cx, t, st, fallback);
    if (cx->err->set) return NULL;
  }
  /* After every fallback branch: a batch numbered here must not be
   * numbered again by the interpreter. */
  for (int i = 0; i < ts->nops; i++)
    if (ts->ops[i].op->kind == IR_TREE_NUMBER && ts->ops[i].tier) cg_tree_num_batch(cx, &ts->ops[i]);
  return ts;
}

static cg_treeop *cg_tree_find(cg_treestate *ts, const ir_op *op) {
  for (int i = 0; i < ts->nops; i++)
    if (ts->ops[i].op == op) return &ts->ops[i];
  return NULL;
}

/* ---- numbering ------------------------------------------------------------- */

static void cg_tree_number(cg_ctx *cx, cg_treeop *t) {
  const ir_op *op = t->op;
  cg_val id = cg_column(cx, op->tree.id_col);
  cg_val par = cg_column(cx, op->tree.parent_col);
  bool str = id.type == RT_STR;
  LLVMValueRef idv = str ? LLVMBuildZExt(cx->b, id.v, cx->t_i64, "") : id.v;
  LLVMValueRef pv = par.type == RT_STR ? LLVMBuildZExt(cx->b, par.v, cx->t_i64, "") : par.v;
  LLVMValueRef none = cg_i32(cx, (int64_t)RT_TREE_NONE);
  LLVMValueRef tier = LLVMBuildLoad2(cx->b, cx->t_i32, t->tier, "tree.tier");
  LLVMValueRef nrows = LLVMBuildLoad2(cx->b, cx->t_i32, t->nrows, "tree.nrows");

  LLVMBasicBlockRef from = NULL, fast = NULL, bfrom = NULL;
  LLVMValueRef fnode = NULL, fpnode = NULL, bnode = NULL, bpnode = NULL;
  LLVMBasicBlockRef slow = cg_block(cx, "tree.slow"), join = cg_block(cx, "tree.numbered");
  if (t->batchable) {
    /* numbered up front: read this position's results */
    LLVMBasicBlockRef rd = cg_block(cx, "tree.batched"), rows = cg_block(cx, "tree.rowwise");
    LLVMBuildCondBr(cx->b, t->use_batch, rd, rows);
    cg_at(cx, rd);
    LLVMValueRef i = LLVMBuildZExt(cx->b, cx->pos, cx->t_i64, "");
    bnode = cg_load_elem(cx, cx->t_i32, t->node_out, i, "");
    bpnode = cg_load_elem(cx, cx->t_i32, t->pnode_out, i, "");
    bfrom = cg_here(cx);
    LLVMBuildBr(cx->b, join);
    cg_at(cx, rows);
  }
  if (str) {
    LLVMBuildBr(cx->b, slow);
  } else {
    LLVMValueRef n64 = LLVMBuildZExt(cx->b, nrows, cx->t_i64, "");
    LLVMValueRef pnull = par.null, idnull = id.null;
    /* TABLE: the parent is a row index other than the row's own */
    LLVMValueRef pin = LLVMBuildAnd(cx->b, LLVMBuildICmp(cx->b, LLVMIntULT, pv, t->limit, ""),
                                    LLVMBuildICmp(cx->b, LLVMIntNE, pv, idv, ""), "");
    LLVMValueRef okt = LLVMBuildAnd(cx->b, LLVMBuildICmp(cx->b, LLVMIntEQ, tier, cg_i32(cx, RT_TREE_TIER_TABLE), ""),
                                    LLVMBuildOr(cx->b, pnull, pin, ""), "tree.table");
    /* DENSE: the id is the next row number and the parent came before */
    LLVMValueRef seen = LLVMBuildICmp(cx->b, LLVMIntULT, pv, n64, "");
    LLVMValueRef okd = LLVMBuildICmp(cx->b, LLVMIntEQ, tier, cg_i32(cx, RT_TREE_TIER_DENSE), "");
    okd = LLVMBuildAnd(cx->b, okd, LLVMBuildICmp(cx->b, LLVMIntEQ, idv, n64, ""), "");
    if (!cg_is_false(idnull)) okd = LLVMBuildAnd(cx->b, okd, LLVMBuildNot(cx->b, idnull, ""), "");
    okd = LLVMBuildAnd(cx->b, okd, LLVMBuildOr(cx->b, pnull, seen, ""), "tree.dense");
    LLVMValueRef ok = LLVMBuildOr(cx->b, okt, okd, "tree.fast");
    fast = cg_block(cx, "tree.inline");
    LLVMBuildCondBr(cx->b, ok, fast, slow);
    cg_at(cx, fast);
    fnode = LLVMBuildTrunc(cx->b, idv, cx->t_i32, "");
    fpnode = LLVMBuildSelect(cx->b, pnull, none, LLVMBuildTrunc(cx->b, pv, cx->t_i32, ""), "");
    LLVMBuildStore(cx->b, LLVMBuildAdd(cx->b, nrows, cg_i32(cx, 1), ""), t->nrows);
    from = cg_here(cx);
    LLVMBuildBr(cx->b, join);
  }

  /* out of line: the runtime reads and advances the counters in memory */
  cg_at(cx, slow);
  LLVMBuildStore(cx->b, nrows, cg_field_ptr(cx, cx->st.treenum, t->state, CG_TREENUM_NROWS, ""));
  LLVMValueRef args[7] = {t->state, idv, LLVMBuildZExt(cx->b, id.null, cx->t_i32, ""), pv,
                          LLVMBuildZExt(cx->b, par.null, cx->t_i32, ""), t->node_slot, t->pnode_slot};
  LLVMValueRef rc = cg_call(cx, "cg_rt_treenum_row", args, 7, "tree.rc");
  LLVMBuildStore(cx->b, cg_load_field(cx, cx->st.treenum, t->state, CG_TREENUM_TIER, cx->t_i32, ""), t->tier);
  LLVMBuildStore(cx->b, cg_load_field(cx, cx->st.treenum, t->state, CG_TREENUM_NROWS, cx->t_i32, ""), t->nrows);
  cg_fail_if(cx, LLVMBuildICmp(cx->b, LLVMIntSLT, rc, cg_i32(cx, 0), ""), CG_ERR_RUNTIME, "tree.called");
  LLVMValueRef snode = LLVMBuildLoad2(cx->b, cx->t_i32, t->node_slot, "");
  LLVMValueRef spnode = LLVMBuildLoad2(cx->b, cx->t_i32, t->pnode_slot, "");
  LLVMBasicBlockRef sfrom = cg_here(cx);
  LLVMBuildBr(cx->b, join);

  cg_at(cx, join);
  char nm[96];
  LLVMValueRef node = LLVMBuildPhi(cx->b, cx->t_i32, "");
  LLVMValueRef pnode = LLVMBuildPhi(cx->b, cx->t_i32, "");
  LLVMAddIncoming(node, &snode, &sfrom, 1);
  LLVMAddIncoming(pnode, &spnode, &sfrom, 1);
  if (from) {
    LLVMAddIncoming(node, &fnode, &from, 1);
    LLVMAddIncoming(pnode, &fpnode, &from, 1);
  }
  if (bfrom) {
    LLVMAddIncoming(node, &bnode, &bfrom, 1);
    LLVMAddIncoming(pnode, &bpnode, &bfrom, 1);
  }
  cx->row[op->tree.node_col] =
      cg_notnull(LLVMBuildZExt(cx->b, node, cx->t_i64, cg_colname(cx, op->tree.node_col, nm, sizeof nm)), RT_I64);
  cx->row[op->tree.pnode_col] =
      cg_notnull(LLVMBuildZExt(cx->b, pnode, cx->t_i64, cg_colname(cx, op->tree.pnode_col, nm, sizeof nm)), RT_I64);
  cx->have[op->tree.node_col] = cx->have[op->tree.pnode_col] = true;
}

/* ---- accumulation ---------------------------------------------------------- */

/* SUM / COUNT(*) / COUNT over int64, or SUM over doubles. */
static cg_val cg_tree_sum(cg_ctx *cx, const cg_treeagg *g, bool up, LLVMValueRef v, LLVMValueRef n,
                          LLVMValueRef q, LLVMValueRef root, const char *nm) {
  bool f = g->in == RT_F64;
  LLVMTypeRef ty = f ? cx->t_f64 : cx->t_i64;
  LLVMValueRef np = cg_elem_ptr(cx, ty, g->vals, n, "");
  LLVMValueRef qp = cg_elem_ptr(cx, ty, g->vals, q, "");
  char buf[128];
  LLVMValueRef total;
  if (up) {
    LLVMValueRef below = LLVMBuildLoad2(cx->b, ty, np, "tree.below");
    total = f ? LLVMBuildFAdd(cx->b, v, below, nm) : cg_checked(cx, 'a', v, below, cg_i1(cx, 0), nm);
    LLVMValueRef accp = LLVMBuildLoad2(cx->b, ty, qp, "tree.parent");
    snprintf(buf, sizeof buf, "tree.acc.%s.up", nm);
    LLVMValueRef sum = f ? LLVMBuildFAdd(cx->b, accp, total, buf) : cg_checked(cx, 'a', accp, total, root, buf);
    LLVMBuildStore(cx->b, sum, qp);
  } else {
    LLVMValueRef accp = LLVMBuildLoad2(cx->b, ty, qp, "tree.above");
    snprintf(buf, sizeof buf, "tree.acc.%s.down", nm);
    LLVMValueRef sum = f ? LLVMBuildFAdd(cx->b, v, accp, buf) : cg_checked(cx, 'a', v, accp, root, buf);
    total = LLVMBuildSelect(cx->b, root, v, sum, nm);
    LLVMBuildStore(cx->b, total, np);
  }
  if (f) {
    /* +inf and -inf make NaN, which is NULL (the stored running value
     * keeps the NaN for the nodes it reaches). */
    LLVMValueRef nan = LLVMBuildFCmp(cx->b, LLVMRealUNO, total, total, "");
    return (cg_val){LLVMBuildSelect(cx->b, nan, cg_f64(cx, 0), total, ""), nan, RT_F64};
  }
  return cg_notnull(total, RT_I64);
}

static LLVMValueRef cg_better(cg_ctx *cx, bool f, bool min, LLVMValueRef a, LLVMValueRef b) {
  if (f) return LLVMBuildFCmp(cx->b, min ? LLVMRealOLT : LLVMRealOGT, a, b, "");
  return LLVMBuildICmp(cx->b, min ? LLVMIntSLT : LLVMIntSGT, a, b, "");
}

/* MIN / MAX: hv = the row has a value, hc = what it folds in has one. */
static cg_val cg_tree_minmax(cg_ctx *cx, const cg_treeagg *g, bool up, cg_val x, LLVMValueRef n,
                             LLVMValueRef q, LLVMValueRef root, const char *nm) {
  bool f = g->in == RT_F64, min = g->ag->kind == RT_AGG_MIN;
  LLVMTypeRef ty = f ? cx->t_f64 : cx->t_i64;
  LLVMValueRef zero = LLVMConstNull(ty), one8 = LLVMConstInt(cx->t_i8, 1, 0);
  LLVMValueRef hv = LLVMBuildNot(cx->b, x.null, "");
  LLVMValueRef v = x.v;
  LLVMValueRef np = cg_elem_ptr(cx, ty, g->vals, n, ""), nh = cg_elem_ptr(cx, cx->t_i8, g->has, n, "");
  LLVMValueRef qp = cg_elem_ptr(cx, ty, g->vals, q, ""), qh = cg_elem_ptr(cx, cx->t_i8, g->has, q, "");
  LLVMValueRef hc, c;
  if (up) {
    hc = LLVMBuildICmp(cx->b, LLVMIntNE, LLVMBuildLoad2(cx->b, cx->t_i8, nh, ""), LLVMConstNull(cx->t_i8), "");
    c = LLVMBuildLoad2(cx->b, ty, np, "tree.below");
  } else {
    LLVMValueRef h = LLVMBuildICmp(cx->b, LLVMIntNE, LLVMBuildLoad2(cx->b, cx->t_i8, qh, ""), LLVMConstNull(cx->t_i8), "");
    hc = LLVMBuildAnd(cx->b, h, LLVMBuildNot(cx->b, root, ""), "");
    c = LLVMBuildSelect(cx->b, hc, LLVMBuildLoad2(cx->b, ty, qp, "tree.above"), zero, "");
  }
  LLVMValueRef keepc = LLVMBuildAnd(cx->b, hc, cg_better(cx, f, min, c, v), "");
  LLVMValueRef t = LLVMBuildSelect(cx->b, hv, LLVMBuildSelect(cx->b, keepc, c, v, ""), c, "");
  LLVMValueRef ht = LLVMBuildOr(cx->b, hv, hc, "");
  if (up) {
    /* acc[q] takes t when the row has a value and t beats what q holds */
    LLVMValueRef hp = LLVMBuildICmp(cx->b, LLVMIntNE, LLVMBuildLoad2(cx->b, cx->t_i8, qh, ""), LLVMConstNull(cx->t_i8), "");
    LLVMValueRef ap = LLVMBuildLoad2(cx->b, ty, qp, "tree.parent");
    LLVMValueRef take = LLVMBuildAnd(cx->b, ht, LLVMBuildOr(cx->b, LLVMBuildNot(cx->b, hp, ""), cg_better(cx, f, min, t, ap), ""), "");
    char buf[128];
    snprintf(buf, sizeof buf, "tree.acc.%s.up", nm);
    LLVMBuildStore(cx->b, LLVMBuildSelect(cx->b, take, t, ap, buf), qp);
    LLVMBuildStore(cx->b, LLVMBuildZExt(cx->b, LLVMBuildOr(cx->b, hp, ht, ""), cx->t_i8, ""), qh);
  } else {
    LLVMBuildStore(cx->b, t, np);
    LLVMBuildStore(cx->b, LLVMBuildSelect(cx->b, ht, one8, LLVMConstNull(cx->t_i8), ""), nh);
  }
  return (cg_val){LLVMBuildSelect(cx->b, ht, t, zero, nm), LLVMBuildNot(cx->b, ht, ""), f ? RT_F64 : RT_I64};
}

static void cg_tree_accumulate(cg_ctx *cx, cg_treeop *t) {
  const ir_op *op = t->op;
  bool up = op->tree.up;
  cg_val nv = cg_column(cx, op->tree.node_col), pv = cg_column(cx, op->tree.pnode_col);
  for (int j = 0; j < t->naggs; j++)
    if (t->aggs[j].ag->arg_col >= 0) cg_column(cx, t->aggs[j].ag->arg_col);   /* loads dominate */
  LLVMValueRef n = nv.v;
  LLVMValueRef root = LLVMBuildICmp(cx->b, LLVMIntEQ, pv.v, cg_i64(cx, (int64_t)RT_TREE_NONE), "tree.root");
  LLVMValueRef q = LLVMBuildSelect(cx->b, root, n, pv.v, "tree.q");
  /* node numbers index the arrays: never outside them */
  LLVMValueRef bad = LLVMBuildOr(cx->b, LLVMBuildICmp(cx->b, LLVMIntUGE, n, t->nnodes, ""),
                                 LLVMBuildICmp(cx->b, LLVMIntUGE, q, t->nnodes, ""), "");
  cg_fail_if(cx, bad, CG_ERR_TREE_NODE, "tree.inrange");
  for (int j = 0; j < t->naggs; j++) {
    const cg_treeagg *g = &t->aggs[j];
    char nm[96];
    cg_colname(cx, g->ag->out_col, nm, sizeof nm);
    cg_val out;
    switch (g->ag->kind) {
    case RT_AGG_COUNT_STAR:
      out = cg_tree_sum(cx, g, up, cg_i64(cx, 1), n, q, root, nm);
      break;
    case RT_AGG_COUNT: {
      cg_val x = cg_column(cx, g->ag->arg_col);
      LLVMValueRef v = LLVMBuildZExt(cx->b, LLVMBuildNot(cx->b, x.null, ""), cx->t_i64, "");
      out = cg_tree_sum(cx, g, up, v, n, q, root, nm);
      break;
    }
    case RT_AGG_SUM: {
      cg_val x = cg_coerce(cx, cg_column(cx, g->ag->arg_col), g->in);
      LLVMValueRef v = x.v;
      if (!cg_is_false(x.null)) v = LLVMBuildSelect(cx->b, x.null, LLVMConstNull(LLVMTypeOf(v)), v, "");
      out = cg_tree_sum(cx, g, up, v, n, q, root, nm);
      break;
    }
    case RT_AGG_MIN:
    case RT_AGG_MAX:
    case RT_AGG_AVG:        /* not tree aggregates: cg_tree_supported refuses them */
    case RT_AGG_ANY_VALUE: case RT_AGG_COUNT_DISTINCT: case RT_AGG_ARG_MAX: case RT_AGG_ARG_MIN:
    case RT_AGG_GROUP_CONCAT: case RT_AGG_MEDIAN: case RT_AGG_PERCENTILE: case RT_AGG_FIRST:
    case RT_AGG_LAST: {
      cg_val x = cg_coerce(cx, cg_column(cx, g->ag->arg_col), g->in);
      out = cg_tree_minmax(cx, g, up, x, n, q, root, nm);
      break;
    }
    }
    cx->row[g->ag->out_col] = out;
    cx->have[g->ag->out_col] = true;
  }
}

void cg_tree_step(cg_ctx *cx, cg_treestate *ts, const ir_op *op) {
  cg_treeop *t = cg_tree_find(ts, op);
  if (!t) {
    rt_errorf(cx->err, op->pos, "JIT: the tree step has no state");
    return;
  }
  if (op->kind == IR_TREE_NUMBER) {
    if (t->tier) {
      cg_tree_number(cx, t);
    } else {
      /* unreachable: the prologue left every batch to the interpreter */
      cx->row[op->tree.node_col] = cx->row[op->tree.pnode_col] = cg_notnull(cg_i64(cx, 0), RT_I64);
      cx->have[op->tree.node_col] = cx->have[op->tree.pnode_col] = true;
    }
  } else {
    cg_tree_accumulate(cx, t);
  }
}

void cg_tree_epilogue(cg_ctx *cx, cg_treestate *ts) {
  for (int i = 0; i < ts->nops; i++) {
    cg_treeop *t = &ts->ops[i];
    if (t->op->kind != IR_TREE_NUMBER || !t->nrows) continue;
    LLVMBuildStore(cx->b, LLVMBuildLoad2(cx->b, cx->t_i32, t->nrows, ""),
                   cg_field_ptr(cx, cx->st.treenum, t->state, CG_TREENUM_NROWS, ""));
  }
}

