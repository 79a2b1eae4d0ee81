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
 * when neither the row nor what it folds in has a value. §9.4's AVG
 * (double sums, counts), ARG_MAX / ARG_MIN (best ordering, value bits,
 * has) and FIRST / LAST (DOWN: value bits, has) follow vm_tree.c's
 * choices on the same arrays (tree.h), with the same dummy root slot. The totals become
 * row values (cx->row) that later steps and the sink read like any column.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

typedef struct cg_treeagg {
  const ir_agg *ag;
  rt_type in;                 /* RT_I64 or RT_F64 */
  rt_type out;                /* the output's store type (FIRST, LAST, ARG_*) */
  LLVMValueRef vals, has;     /* the per-node arrays (i or f, has) */
  LLVMValueRef cnt;           /* AVG: the counts (i; vals is f, the sums) */
  LLVMValueRef bits;          /* ARG_MAX / ARG_MIN: the values' bits (v) */
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
  case RT_AGG_AVG: case RT_AGG_ARG_MAX: case RT_AGG_ARG_MIN: {
    rt_type t = rt_store_type(ag->arg_type);
    return ag->arg_col >= 0 && (t == RT_I64 || t == RT_F64) &&
           (ag->kind == RT_AGG_AVG || ag->arg2_col >= 0);
  }
  case RT_AGG_FIRST: case RT_AGG_LAST: return ag->arg_col >= 0;
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
    rt_aggkind kind = g->ag->kind;
    /* as rt_treeacc_init: counts and FIRST / LAST's bits are int64 */
    g->in = rt_store_type(g->ag->arg_type) == RT_F64 && kind != RT_AGG_COUNT &&
                    kind != RT_AGG_COUNT_STAR && kind != RT_AGG_FIRST && kind != RT_AGG_LAST
                ? RT_F64
                : RT_I64;
    g->out = rt_store_type(cx->plan->cols[g->ag->out_col].type);
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
    rt_aggkind kind = g->ag->kind;
    bool avg = kind == RT_AGG_AVG, arg = kind == RT_AGG_ARG_MAX || kind == RT_AGG_ARG_MIN;
    g->vals = cg_load_field(cx, cx->st.treeagg, gp, g->in == RT_F64 || avg ? CG_TREEAGG_F : CG_TREEAGG_I,
                            cx->t_ptr, buf);
    if (kind == RT_AGG_MIN || kind == RT_AGG_MAX || arg || kind == RT_AGG_FIRST || kind == RT_AGG_LAST) {
      snprintf(buf, sizeof buf, "tree.acc.%s.has", nm);
      g->has = cg_load_field(cx, cx->st.treeagg, gp, CG_TREEAGG_HAS, cx->t_ptr, buf);
    }
    if (avg) {
      snprintf(buf, sizeof buf, "tree.acc.%s.count", nm);
      g->cnt = cg_load_field(cx, cx->st.treeagg, gp, CG_TREEAGG_I, cx->t_ptr, buf);
    }
    if (arg) {
      snprintf(buf, sizeof buf, "tree.acc.%s.value", nm);
      g->bits = cg_load_field(cx, cx->st.treeagg, gp, CG_TREEAGG_V, cx->t_ptr, buf);
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

/* ---- §9.4's aggregates (runtime/tree/tree.h has their arrays) ---------- */

/* A value as the int64 bits the per-node arrays keep (a double's bits, a
 * string id), and back. */
static LLVMValueRef cg_tree_tobits(cg_ctx *cx, cg_val v) {
  if (v.type == RT_F64) return LLVMBuildBitCast(cx->b, v.v, cx->t_i64, "");
  if (v.type == RT_STR) return LLVMBuildZExt(cx->b, v.v, cx->t_i64, "");
  return v.v;
}

static LLVMValueRef cg_tree_frombits(cg_ctx *cx, LLVMValueRef b, rt_type t) {
  if (t == RT_F64) return LLVMBuildBitCast(cx->b, b, cx->t_f64, "");
  if (t == RT_STR) return LLVMBuildTrunc(cx->b, b, cx->t_i32, "");
  return b;
}

static LLVMValueRef cg_tree_has(cg_ctx *cx, LLVMValueRef hp, unsigned bit) {
  LLVMValueRef h = LLVMBuildLoad2(cx->b, cx->t_i8, hp, "");
  return LLVMBuildICmp(cx->b, LLVMIntNE, LLVMBuildAnd(cx->b, h, LLVMConstInt(cx->t_i8, bit, 0), ""),
                       LLVMConstNull(cx->t_i8), "");
}

/* AVG: a double sum and a count per node, added in vm_tree.c's order (the
 * same sums, bit for bit); NULL for no value, and for NaN. */
static cg_val cg_tree_avg(cg_ctx *cx, const cg_treeagg *g, bool up, cg_val x, LLVMValueRef n,
                          LLVMValueRef q, LLVMValueRef root, const char *nm) {
  LLVMValueRef s = cg_is_false(x.null) ? x.v : LLVMBuildSelect(cx->b, x.null, cg_f64(cx, 0), x.v, "");
  LLVMValueRef c = LLVMBuildZExt(cx->b, LLVMBuildNot(cx->b, x.null, ""), cx->t_i64, "");
  LLVMValueRef sn = cg_elem_ptr(cx, cx->t_f64, g->vals, n, ""), sq = cg_elem_ptr(cx, cx->t_f64, g->vals, q, "");
  LLVMValueRef cn = cg_elem_ptr(cx, cx->t_i64, g->cnt, n, ""), cq = cg_elem_ptr(cx, cx->t_i64, g->cnt, q, "");
  if (up) {
    s = LLVMBuildFAdd(cx->b, s, LLVMBuildLoad2(cx->b, cx->t_f64, sn, "tree.below"), "");
    c = LLVMBuildAdd(cx->b, c, LLVMBuildLoad2(cx->b, cx->t_i64, cn, ""), "");
    LLVMBuildStore(cx->b, LLVMBuildFAdd(cx->b, LLVMBuildLoad2(cx->b, cx->t_f64, sq, "tree.parent"), s, ""), sq);
    LLVMBuildStore(cx->b, LLVMBuildAdd(cx->b, LLVMBuildLoad2(cx->b, cx->t_i64, cq, ""), c, ""), cq);
  } else {
    LLVMValueRef as = LLVMBuildFAdd(cx->b, s, LLVMBuildLoad2(cx->b, cx->t_f64, sq, "tree.above"), "");
    LLVMValueRef ac = LLVMBuildAdd(cx->b, c, LLVMBuildLoad2(cx->b, cx->t_i64, cq, ""), "");
    s = LLVMBuildSelect(cx->b, root, s, as, "");
    c = LLVMBuildSelect(cx->b, root, c, ac, "");
    LLVMBuildStore(cx->b, s, sn);
    LLVMBuildStore(cx->b, c, cn);
  }
  LLVMValueRef none = LLVMBuildICmp(cx->b, LLVMIntEQ, c, cg_i64(cx, 0), "");
  LLVMValueRef avg = LLVMBuildFDiv(cx->b, s, LLVMBuildSIToFP(cx->b, c, cx->t_f64, ""), "");
  LLVMValueRef nul = LLVMBuildOr(cx->b, none, LLVMBuildFCmp(cx->b, LLVMRealUNO, avg, avg, ""), "");
  return (cg_val){LLVMBuildSelect(cx->b, nul, cg_f64(cx, 0), avg, nm), nul, RT_F64};
}

/* ARG_MAX / ARG_MIN: the best ordering (vals), its row's value bits and
 * has = 1 | 2 when that value is NULL; the same choices as vm_tree.c
 * (UP: the node's own row over its subtree's best unless beaten; DOWN: an
 * ancestor's best unless the row beats it). */
static cg_val cg_tree_argbest(cg_ctx *cx, const cg_treeagg *g, bool up, cg_val x, cg_val w,
                              LLVMValueRef n, LLVMValueRef q, LLVMValueRef root, const char *nm) {
  bool f = g->in == RT_F64, min = g->ag->kind == RT_AGG_ARG_MIN;
  LLVMTypeRef ty = f ? cx->t_f64 : cx->t_i64;
  LLVMValueRef own = LLVMBuildNot(cx->b, x.null, ""), ob = x.v, ov = cg_tree_tobits(cx, w);
  LLVMValueRef os = LLVMBuildSelect(cx->b, w.null, LLVMConstInt(cx->t_i8, 3, 0), LLVMConstInt(cx->t_i8, 1, 0), "");
  LLVMValueRef zero8 = LLVMConstNull(cx->t_i8);
  LLVMValueRef bn = cg_elem_ptr(cx, ty, g->vals, n, ""), bq = cg_elem_ptr(cx, ty, g->vals, q, "");
  LLVMValueRef vn = cg_elem_ptr(cx, cx->t_i64, g->bits, n, ""), vq = cg_elem_ptr(cx, cx->t_i64, g->bits, q, "");
  LLVMValueRef hn = cg_elem_ptr(cx, cx->t_i8, g->has, n, ""), hq = cg_elem_ptr(cx, cx->t_i8, g->has, q, "");
  LLVMValueRef tb, tv, ts;
  if (up) {
    LLVMValueRef sub = cg_tree_has(cx, hn, 1);
    LLVMValueRef b = LLVMBuildLoad2(cx->b, ty, bn, "tree.below"), v = LLVMBuildLoad2(cx->b, cx->t_i64, vn, "");
    LLVMValueRef h = LLVMBuildLoad2(cx->b, cx->t_i8, hn, "");
    LLVMValueRef mine = LLVMBuildAnd(cx->b, own, LLVMBuildNot(cx->b, LLVMBuildAnd(cx->b, sub, cg_better(cx, f, min, b, ob), ""), ""), "");
    tb = LLVMBuildSelect(cx->b, mine, ob, b, "");
    tv = LLVMBuildSelect(cx->b, mine, ov, v, "");
    ts = LLVMBuildSelect(cx->b, mine, os, LLVMBuildSelect(cx->b, sub, h, zero8, ""), "");
    /* the parent takes it when it has nothing yet or this beats its best
     * (a root's dummy update of its own slot is never read) */
    LLVMValueRef pb = LLVMBuildLoad2(cx->b, ty, bq, "tree.parent"), pv = LLVMBuildLoad2(cx->b, cx->t_i64, vq, "");
    LLVMValueRef ph = LLVMBuildLoad2(cx->b, cx->t_i8, hq, "");
    LLVMValueRef phas = cg_tree_has(cx, hq, 1);
    LLVMValueRef take = LLVMBuildAnd(cx->b, LLVMBuildICmp(cx->b, LLVMIntNE, ts, zero8, ""),
                                     LLVMBuildOr(cx->b, LLVMBuildNot(cx->b, phas, ""), cg_better(cx, f, min, tb, pb), ""), "");
    LLVMBuildStore(cx->b, LLVMBuildSelect(cx->b, take, tb, pb, ""), bq);
    LLVMBuildStore(cx->b, LLVMBuildSelect(cx->b, take, tv, pv, ""), vq);
    LLVMBuildStore(cx->b, LLVMBuildSelect(cx->b, take, ts, ph, ""), hq);
  } else {
    LLVMValueRef above = LLVMBuildAnd(cx->b, LLVMBuildNot(cx->b, root, ""), cg_tree_has(cx, hq, 1), "");
    LLVMValueRef b = LLVMBuildLoad2(cx->b, ty, bq, "tree.above"), v = LLVMBuildLoad2(cx->b, cx->t_i64, vq, "");
    LLVMValueRef h = LLVMBuildLoad2(cx->b, cx->t_i8, hq, "");
    LLVMValueRef theirs = LLVMBuildAnd(cx->b, above, LLVMBuildNot(cx->b, LLVMBuildAnd(cx->b, own, cg_better(cx, f, min, ob, b), ""), ""), "");
    tb = LLVMBuildSelect(cx->b, theirs, b, ob, "");
    tv = LLVMBuildSelect(cx->b, theirs, v, ov, "");
    ts = LLVMBuildSelect(cx->b, theirs, h, LLVMBuildSelect(cx->b, own, os, zero8, ""), "");
    LLVMBuildStore(cx->b, tb, bn);
    LLVMBuildStore(cx->b, tv, vn);
    LLVMBuildStore(cx->b, ts, hn);
  }
  /* NULL: no row with an ordering, or the best row's value is NULL */
  LLVMValueRef nul = LLVMBuildICmp(cx->b, LLVMIntNE, LLVMBuildAnd(cx->b, ts, LLVMConstInt(cx->t_i8, 3, 0), ""),
                                   LLVMConstInt(cx->t_i8, 1, 0), "");
  LLVMValueRef out = cg_tree_frombits(cx, tv, g->out);
  return (cg_val){LLVMBuildSelect(cx->b, nul, LLVMConstNull(cg_llty(cx, g->out)), out, nm), nul, g->out};
}

/* FIRST / LAST (DOWN): the bits of the non-NULL value nearest the root /
 * nearest the node on its path, has = 1 when there is one. */
static cg_val cg_tree_firstlast(cg_ctx *cx, const cg_treeagg *g, cg_val x, LLVMValueRef n,
                                LLVMValueRef q, LLVMValueRef root, const char *nm) {
  bool first = g->ag->kind == RT_AGG_FIRST;
  LLVMValueRef hv = LLVMBuildNot(cx->b, x.null, ""), xb = cg_tree_tobits(cx, x);
  LLVMValueRef an = cg_elem_ptr(cx, cx->t_i64, g->vals, n, ""), aq = cg_elem_ptr(cx, cx->t_i64, g->vals, q, "");
  LLVMValueRef hn = cg_elem_ptr(cx, cx->t_i8, g->has, n, ""), hq = cg_elem_ptr(cx, cx->t_i8, g->has, q, "");
  LLVMValueRef above = LLVMBuildAnd(cx->b, LLVMBuildNot(cx->b, root, ""), cg_tree_has(cx, hq, 1), "");
  LLVMValueRef mine = first ? LLVMBuildAnd(cx->b, hv, LLVMBuildNot(cx->b, above, ""), "") : hv;
  LLVMValueRef a = LLVMBuildLoad2(cx->b, cx->t_i64, aq, "tree.above");
  LLVMValueRef t = LLVMBuildSelect(cx->b, mine, xb, LLVMBuildSelect(cx->b, above, a, cg_i64(cx, 0), ""), "");
  LLVMValueRef ht = LLVMBuildOr(cx->b, mine, above, "");
  LLVMBuildStore(cx->b, t, an);
  LLVMBuildStore(cx->b, LLVMBuildZExt(cx->b, ht, cx->t_i8, ""), hn);
  LLVMValueRef out = cg_tree_frombits(cx, t, g->out);
  return (cg_val){LLVMBuildSelect(cx->b, ht, out, LLVMConstNull(cg_llty(cx, g->out)), nm),
                  LLVMBuildNot(cx->b, ht, ""), g->out};
}

static void cg_tree_accumulate(cg_ctx *cx, cg_treeop *t) {
  const ir_op *op = t->op;
  bool up = op->tree.up;
  cg_val nv = cg_column(cx, op->tree.node_col), pv = cg_column(cx, op->tree.pnode_col);
  for (int j = 0; j < t->naggs; j++) {   /* loads dominate */
    if (t->aggs[j].ag->arg_col >= 0) cg_column(cx, t->aggs[j].ag->arg_col);
    if (t->aggs[j].ag->arg2_col >= 0) cg_column(cx, t->aggs[j].ag->arg2_col);
  }
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
    case RT_AGG_AVG:
      out = cg_tree_avg(cx, g, up, cg_coerce(cx, cg_column(cx, g->ag->arg_col), RT_F64), n, q, root, nm);
      break;
    case RT_AGG_ARG_MAX:
    case RT_AGG_ARG_MIN: {
      cg_val x = cg_coerce(cx, cg_column(cx, g->ag->arg_col), g->in);
      cg_val w = cg_column(cx, g->ag->arg2_col);
      if (g->out != RT_STR) w = cg_coerce(cx, w, g->out);
      out = cg_tree_argbest(cx, g, up, x, w, n, q, root, nm);
      break;
    }
    case RT_AGG_FIRST:
    case RT_AGG_LAST: {
      cg_val x = cg_column(cx, g->ag->arg_col);
      if (g->out != RT_STR) x = cg_coerce(cx, x, g->out);
      out = cg_tree_firstlast(cx, g, x, n, q, root, nm);
      break;
    }
    case RT_AGG_MIN:
    case RT_AGG_MAX:
    case RT_AGG_ANY_VALUE: case RT_AGG_COUNT_DISTINCT:   /* not tree aggregates: */
    case RT_AGG_GROUP_CONCAT: case RT_AGG_MEDIAN: case RT_AGG_PERCENTILE: {   /* refused */
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

