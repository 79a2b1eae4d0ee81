/*
 * cg_segment.c — one LLVM function per segment: the fused batch loop.
 *
 *   int seg(ex_seg *s, rt_batch *b)
 *   entry:      load the views of the columns the segment reads; if a view
 *               is not what the code was compiled for (type, selection,
 *               validity) → fallback: return vm_run_batch(s, b)
 *   sink.init:  reserve output rows / load the aggregation table; load
 *               the TREE ACCUMULATE state (cg_tree.c)
 *   loop:       for each active position i of the batch:
 *                 WHERE      three-valued; a row that is not true → next
 *                 EXTEND …   computed values stay in registers
 *                 LIMIT      counters; drop skipped and surplus rows
 *                 TREE …     node numbers, running per-node aggregates
 *                 sink       append to s->buf, or update s->agg
 *   exit:       write counters back; report the smallest failed step
 *
 * cg_seg_prologue emits entry, fallback and sink.init; cg_seg_loop the
 * loop; cg_seg_epilogue the exit.
 *
 * Errors. The interpreter runs each step over the whole batch, so the
 * error it reports is that of the first step (in step order) at which any
 * row fails. To report the same one, a failing row here only records its
 * step (the smallest wins) and the loop goes on; after the loop the error
 * of that step is set. Rows after a failure still reach the sink, which is
 * harmless: the query stops and its buffers are thrown away.
 *
 * LIMIT mirrors interp/vm.c: skipped rows first, then taken ones; rows
 * before the LIMIT step are still evaluated for the whole batch (so the
 * same errors surface), and s->done is set once a LIMIT that saw rows in
 * this batch has nothing left.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/DebugInfo.h>

#include "emit.h"

void cg_ctx_init(cg_ctx *cx, LLVMContextRef c, LLVMModuleRef m, const ir_plan *p, rt_err *err) {
  memset(cx, 0, sizeof *cx);
  cx->c = c;
  cx->m = m;
  cx->b = LLVMCreateBuilderInContext(c);
  cx->plan = p;
  cx->err = err;
  cx->t_i1 = LLVMInt1TypeInContext(c);
  cx->t_i8 = LLVMInt8TypeInContext(c);
  cx->t_i32 = LLVMInt32TypeInContext(c);
  cx->t_i64 = LLVMInt64TypeInContext(c);
  cx->t_f64 = LLVMDoubleTypeInContext(c);
  cx->t_ptr = LLVMPointerTypeInContext(c, 0);
  cx->t_void = LLVMVoidTypeInContext(c);
  cg_types_init(&cx->st, c);
  size_t n = (size_t)p->ncols + 1;
  cx->src = calloc(n, sizeof *cx->src);
  cx->row = calloc(n, sizeof *cx->row);
  cx->have = calloc(n, sizeof *cx->have);
  cx->params = calloc((size_t)p->nparams + 1, sizeof *cx->params);
}

void cg_ctx_dispose(cg_ctx *cx) {
  if (cx->b) LLVMDisposeBuilder(cx->b);
  free(cx->src);
  free(cx->row);
  free(cx->have);
  free(cx->params);
  cx->b = NULL;
}

/* ---- what a segment reads ------------------------------------------------ */

typedef struct cg_uses {
  bool *computed;   /* by column: defined by a COMPUTE of this segment */
  bool *params;     /* by parameter number */
} cg_uses;

static void cg_use_col(cg_ctx *cx, cg_uses *u, int c) {
  if (c >= 0 && c < cx->plan->ncols && !u->computed[c]) cx->src[c].used = true;
}

static void cg_use_expr(cg_ctx *cx, cg_uses *u, const ir_expr *e) {
  if (!e) return;
  if (e->kind == IX_COL) cg_use_col(cx, u, e->col);
  if (e->kind == IX_PARAM && e->param >= 1 && e->param <= cx->plan->nparams) u->params[e->param] = true;
  for (int i = 0; i < e->nargs; i++) cg_use_expr(cx, u, e->args[i]);
}

static void cg_collect(cg_ctx *cx, const ir_segment *seg, cg_uses *u) {
  for (int k = 0; k < seg->nsteps; k++) {
    const ir_op *op = seg->steps[k];
    if (op->dead) continue;
    if (op->kind == IR_FILTER) cg_use_expr(cx, u, op->filter.pred);
    if (op->kind == IR_COMPUTE) {
      cg_use_expr(cx, u, op->compute.expr);
      u->computed[op->compute.out_col] = true;
    }
    if (op->kind == IR_TREE_NUMBER) {
      cg_use_col(cx, u, op->tree.id_col);
      cg_use_col(cx, u, op->tree.parent_col);
      u->computed[op->tree.node_col] = u->computed[op->tree.pnode_col] = true;
    }
    if (op->kind == IR_JOIN_PROBE) {
      /* the relation's columns come from its buffer (cg_join.c) */
      for (int i = 0; i < op->join.build->join.ncarry; i++) u->computed[op->join.build->join.carry[i]] = true;
      for (int i = 0; i < op->join.nkeys; i++) cg_use_col(cx, u, op->join.in_keys[i]);
      cg_use_expr(cx, u, op->join.residual);
    }
    if (op->kind == IR_TREE_ACC) {
      cg_use_col(cx, u, op->tree.node_col);
      cg_use_col(cx, u, op->tree.pnode_col);
      for (int i = 0; i < op->tree.naggs; i++)
        if (op->tree.aggs[i].live) {
          cg_use_col(cx, u, op->tree.aggs[i].arg_col);
          cg_use_col(cx, u, op->tree.aggs[i].arg2_col);   /* ARG_MAX / ARG_MIN's value */
        }
      for (int i = 0; i < op->tree.naggs; i++)
        if (op->tree.aggs[i].live) u->computed[op->tree.aggs[i].out_col] = true;
    }
  }
  const ir_op *sink = seg->sink;
  if (sink->kind == IR_AGGREGATE) {
    const struct ir_aggregate *ag = &sink->agg;
    for (int i = 0; i < ag->ngroup; i++) cg_use_col(cx, u, ag->group_cols[i]);
    for (int i = 0; i < ag->naggs; i++) {
      if (ag->aggs[i].live && ag->aggs[i].arg_col >= 0) cg_use_col(cx, u, ag->aggs[i].arg_col);
      if (ag->aggs[i].live && ag->aggs[i].arg2_col >= 0) cg_use_col(cx, u, ag->aggs[i].arg2_col);
    }
  } else {
    const int *cols;
    int n = cg_buf_cols(sink, &cols);
    for (int i = 0; i < n; i++) cg_use_col(cx, u, cols[i]);
  }
}

/* The view type a source hands out for column c. */
static rt_type cg_view_type(cg_ctx *cx, const ir_op *src, int c) {
  rt_type t = cx->plan->cols[c].type;
  if (src->kind == IR_SCAN_TABLE) {
    for (int i = 0; i < src->scan.nscan; i++)
      if (src->scan.out_cols[i] == c && src->scan.table && src->scan.table_cols)
        return src->scan.table->cols[src->scan.table_cols[i]].type;
    return t;
  }
  /* After a tree order in place the table itself is read (ir/plan.h
   * tree.in_place): table types, the parent node as the check's uint32 array. */
  if (src->kind == IR_SCAN_BUF && ir_tree_in_place(src->scan.buf_op) && src->scan.table &&
      src->scan.table_cols) {
    for (int i = 0; i < src->scan.nscan; i++)
      if (src->scan.out_cols[i] == c)
        return src->scan.table_cols[i] >= 0 ? src->scan.table->cols[src->scan.table_cols[i]].type : RT_U32;
    return t;
  }
  return rt_store_type(t);   /* SQLite batches and breaker buffers store widened */
}

/* ---- prologue ------------------------------------------------------------ */

static LLVMValueRef cg_and(cg_ctx *cx, LLVMValueRef a, LLVMValueRef b) {
  return a ? LLVMBuildAnd(cx->b, a, b, "") : b;
}

/* Loads the views of every source column; returns "the batch fits". */
static LLVMValueRef cg_load_views(cg_ctx *cx, LLVMValueRef ones) {
  LLVMValueRef cols = cg_load_field(cx, cx->st.batch, cx->batch, CG_BATCH_COLS, cx->t_ptr, "cols");
  LLVMValueRef ok = NULL;
  for (int c = 0; c < cx->plan->ncols; c++) {
    cg_colsrc *cs = &cx->src[c];
    if (!cs->used) continue;
    char nm[96], buf[128];
    cg_colname(cx, c, nm, sizeof nm);
    LLVMValueRef vp = cg_elem_ptr(cx, cx->st.view, cols, cg_i64(cx, c), "");
    LLVMValueRef ty = cg_load_field(cx, cx->st.view, vp, CG_VIEW_TYPE, cx->t_i32, "");
    ok = cg_and(cx, ok, LLVMBuildICmp(cx->b, LLVMIntEQ, ty, cg_i32(cx, cs->vtype), ""));
    snprintf(buf, sizeof buf, "%s.data", nm);
    if (cs->vtype != RT_ID) cs->data = cg_load_field(cx, cx->st.view, vp, CG_VIEW_DATA, cx->t_ptr, buf);
    else cs->base = cg_load_field(cx, cx->st.view, vp, CG_VIEW_BASE, cx->t_i64, "");
    LLVMValueRef valid = cg_load_field(cx, cx->st.view, vp, CG_VIEW_VALID, cx->t_ptr, "");
    LLVMValueRef hasvalid = LLVMBuildIsNotNull(cx->b, valid, "");
    if (cs->nullable) {
      snprintf(buf, sizeof buf, "%s.valid", nm);
      cs->valid = LLVMBuildSelect(cx->b, hasvalid, valid, ones, buf);
      cs->wmask = LLVMBuildSelect(cx->b, hasvalid, cg_i64(cx, -1), cg_i64(cx, 0), "");
    } else if (cx->seg->source->kind == IR_SCAN_TABLE) {
      /* A table column without NULLs has no bits; one with bits is not the
       * table the plan was bound to. Buffers and SQLite batches always
       * carry bits: there the plan's word that the column has no NULLs
       * holds (their writers set a bit for every value). */
      ok = cg_and(cx, ok, LLVMBuildNot(cx->b, hasvalid, ""));
    }
    LLVMValueRef sel = cg_load_field(cx, cx->st.view, vp, CG_VIEW_SEL, cx->t_ptr, "");
    if (cx->general_sel) cs->sel = sel;
    else ok = cg_and(cx, ok, LLVMBuildIsNull(cx->b, sel, ""));
  }
  return ok ? ok : cg_i1(cx, 1);
}

static void cg_load_params(cg_ctx *cx, const cg_uses *u) {
  const ir_plan *p = cx->plan;
  if (!p->nparams) return;
  LLVMValueRef params = NULL;
  for (int i = 1; i <= p->nparams; i++) {
    if (!u->params[i]) continue;
    if (!params) params = cg_load_field(cx, cx->st.run, cx->run, CG_RUN_PARAMS, cx->t_ptr, "params");
    char nm[96];
    snprintf(nm, sizeof nm, "%s", p->params[i - 1].name ? p->params[i - 1].name : "");
    if (!nm[0]) snprintf(nm, sizeof nm, "p%d", i);
    LLVMValueRef pp = cg_elem_ptr(cx, cx->st.value, params, cg_i64(cx, i), "");
    LLVMValueRef ty = cg_load_field(cx, cx->st.value, pp, CG_VALUE_TYPE, cx->t_i32, "");
    LLVMValueRef null = LLVMBuildICmp(cx->b, LLVMIntEQ, ty, cg_i32(cx, RT_NULLT), "");
    rt_type t = p->params[i - 1].type;
    LLVMValueRef v;
    if (t == RT_F64) {
      /* an integer bound where a double was planned still reads right */
      LLVMValueRef iv = cg_load_field(cx, cx->st.value, pp, CG_VALUE_I, cx->t_i64, "");
      LLVMValueRef fv = cg_load_field(cx, cx->st.value, pp, CG_VALUE_F, cx->t_f64, "");
      LLVMValueRef isint = LLVMBuildICmp(cx->b, LLVMIntEQ, ty, cg_i32(cx, RT_I64), "");
      v = LLVMBuildSelect(cx->b, isint, LLVMBuildSIToFP(cx->b, iv, cx->t_f64, ""), fv, nm);
    } else if (t == RT_STR) {
      v = cg_load_field(cx, cx->st.value, pp, CG_VALUE_S, cx->t_i32, "");
      v = LLVMBuildSelect(cx->b, null, cg_i32(cx, 0), v, nm);
    } else {
      v = cg_load_field(cx, cx->st.value, pp, CG_VALUE_I, cx->t_i64, nm);
      t = RT_I64;
    }
    cx->params[i] = (cg_val){v, null, t};
  }
}

/* ---- steps ---------------------------------------------------------------- */

/* "WHERE" → "where", for block names. */
static void cg_stage_name(const ir_op *op, const char *what, char *buf, size_t n) {
  const char *st = op->stage ? op->stage : "step";
  size_t k = 0;
  for (; st[k] && k + 1 < n; k++) buf[k] = st[k] == ' ' ? '_' : (char)(st[k] | 0x20);
  buf[k] = 0;
  if (what) snprintf(buf + k, n - k, ".%s", what);
}

/* After a WHERE passed, some columns cannot be NULL in this row: every
 * operand of a comparison that had to be true. Telling the rest of the row
 * (its cached value's null flag becomes the constant false) removes NULL
 * tests downstream: `WHERE a > 5 |> AGGREGATE SUM(a)` adds without a
 * select and marks `has` unconditionally. */
static void cg_refine_notnull(cg_ctx *cx, const ir_expr *e) {
  if (e->kind == IX_AND) {
    cg_refine_notnull(cx, e->args[0]);
    cg_refine_notnull(cx, e->args[1]);
    return;
  }
  /* A STRICT node (exprs.def) that is true had no NULL argument. */
  if (e->kind != IX_NOTNULL && ir_ex_nullss[e->kind] != IR_NULLS_STRICT) return;
  for (int i = 0; i < e->nargs; i++) {
    const ir_expr *a = e->args[i];
    if (a->kind == IX_TOF64) a = a->args[0];   /* int → double keeps NULLs */
    if (a->kind == IX_COL && cx->have[a->col]) cx->row[a->col].null = cg_i1(cx, 0);
  }
}

typedef struct cg_limit {
  LLVMValueRef skip, left, reached;   /* allocas */
} cg_limit;

static void cg_emit_limit(cg_ctx *cx, cg_limit *l) {
  LLVMValueRef skip = LLVMBuildLoad2(cx->b, cx->t_i64, l->skip, "limit.skip");
  LLVMValueRef skipping = LLVMBuildICmp(cx->b, LLVMIntSGT, skip, cg_i64(cx, 0), "");
  LLVMBasicBlockRef drop = cg_block(cx, "limit.skipped"), take = cg_block(cx, "limit.take");
  LLVMBuildCondBr(cx->b, skipping, drop, take);
  cg_at(cx, drop);
  LLVMBuildStore(cx->b, LLVMBuildSub(cx->b, skip, cg_i64(cx, 1), ""), l->skip);
  LLVMBuildBr(cx->b, cx->next_row);
  cg_at(cx, take);
  LLVMBuildStore(cx->b, cg_i1(cx, 1), l->reached);
  LLVMValueRef left = LLVMBuildLoad2(cx->b, cx->t_i64, l->left, "limit.left");
  LLVMValueRef none = LLVMBuildICmp(cx->b, LLVMIntSLE, left, cg_i64(cx, 0), "");
  if (cx->joined) {
    /* after a JOIN a batch may make any number of rows: stop at once */
    LLVMBasicBlockRef pass = cg_block(cx, "limit.pass");
    LLVMBuildCondBr(cx->b, none, cx->loop_exit, pass);
    cg_at(cx, pass);
  } else {
    cg_drop_row_if(cx, none, "limit.pass");
  }
  LLVMBuildStore(cx->b, LLVMBuildSub(cx->b, left, cg_i64(cx, 1), ""), l->left);
}

static void cg_emit_step(cg_ctx *cx, const ir_op *op, cg_limit *lim, cg_treestate *ts,
                         cg_joinstate *js) {
  char nm[128];
  switch (op->kind) {
  case IR_FILTER: {
    cg_preload(cx, op->filter.pred);
    cg_stage_name(op, NULL, nm, sizeof nm);
    cg_val v = cg_expr(cx, op->filter.pred, nm);
    LLVMValueRef pass = cg_truth(cx, v, "");
    cg_stage_name(op, "pass", nm, sizeof nm);
    cg_drop_row_if(cx, LLVMBuildNot(cx->b, pass, ""), nm);
    cg_refine_notnull(cx, op->filter.pred);
    break;
  }
  case IR_COMPUTE: {
    cg_preload(cx, op->compute.expr);
    cg_colname(cx, op->compute.out_col, nm, sizeof nm);
    const ir_col *col = &cx->plan->cols[op->compute.out_col];
    cg_val v = cg_expr(cx, op->compute.expr, nm);
    rt_type t = col->type;
    if (t != RT_I64 && t != RT_F64 && t != RT_STR && t != RT_BOOL)
      t = v.type == RT_F64 ? RT_F64 : v.type == RT_STR ? RT_STR : RT_I64;
    v = cg_coerce(cx, v, t);
    cx->row[op->compute.out_col] = v;
    cx->have[op->compute.out_col] = true;
    break;
  }
  case IR_LIMIT: cg_emit_limit(cx, lim); break;
  case IR_TREE_NUMBER: case IR_TREE_ACC: cg_tree_step(cx, ts, op); break;
  case IR_JOIN_PROBE: cg_join_step(cx, js, op); break;
#define IR_CASE_SOURCE(name) case IR_##name:
#define IR_CASE_SINK(name) case IR_##name:
#define IR_CASE_BREAKER(name) case IR_##name:
#include "ir/op_cases.h"
  case IR__COUNT:
    rt_errorf(cx->err, op->pos, "JIT: unexpected step '%s' in a segment", ir_op_names[op->kind]);
    break;
  }
}

/* ---- the function --------------------------------------------------------- */

/* What the three parts of a segment's function hand each other. */
typedef struct cg_segfn {
  cg_uses u;
  LLVMValueRef count, active, hasactive;   /* positions to visit, and how */
  LLVMBasicBlockRef fallback;              /* return vm_run_batch(s, b) */
  cg_bufstate *bs;                         /* sink: rows appended … */
  cg_aggstate *as;                         /* … or groups updated */
  cg_treestate *ts;
  cg_joinstate *js;
  int nlim;
  cg_limit *lims;                          /* one per live LIMIT step */
  LLVMValueRef skips, lefts;               /* s->limit_skip, s->limit_left */
} cg_segfn;

/* Prologue: the function `int seg(ex_seg *s, rt_batch *b)`, its entry
 * (views of the columns read, parameters; a batch that is not what the
 * code was compiled for falls back to the interpreter), then the sink,
 * tree and LIMIT state. Leaves the builder at the end of sink.init. */
static void cg_seg_prologue(cg_ctx *cx, int si, const char *prefix, cg_segfn *f) {
  const ir_plan *p = cx->plan;
  const ir_segment *seg = &p->segs[si];
  cx->seg = seg;
  cx->segidx = si;
  cx->err_block = NULL;
  cx->err_phi = NULL;
  memset(cx->src, 0, sizeof *cx->src * ((size_t)p->ncols + 1));
  memset(cx->have, 0, sizeof *cx->have * ((size_t)p->ncols + 1));
  f->u = (cg_uses){cg_alloc(cx, ((size_t)p->ncols + 1) * sizeof(bool)),
                   cg_alloc(cx, ((size_t)p->nparams + 1) * sizeof(bool))};
  if (!f->u.computed || !f->u.params) return;   /* out of memory: error set */
  cg_collect(cx, seg, &f->u);
  const ir_op *src = seg->source;
  /* Rows come through selections (ops.def SEL): a breaker's buffer read
   * back through a permutation (ORDER BY, tree order), the operand
   * columns an interval source serves. */
  cx->general_sel = ir_op_has(src->kind, OPF_SEL) ||
                    (src->kind == IR_SCAN_BUF && src->scan.buf_op &&
                     ir_op_has(src->scan.buf_op->kind, OPF_SEL));
  for (int c = 0; c < p->ncols; c++) {
    if (!cx->src[c].used) continue;
    cx->src[c].vtype = cg_view_type(cx, src, c);
    cx->src[c].nullable = p->cols[c].nullable;
  }

  char fname[128];
  snprintf(fname, sizeof fname, "%sseg%d", prefix, si);
  LLVMTypeRef params[2] = {cx->t_ptr, cx->t_ptr};
  LLVMTypeRef fty = LLVMFunctionType(cx->t_i32, params, 2, 0);
  cx->fn = LLVMAddFunction(cx->m, fname, fty);
  cx->s = LLVMGetParam(cx->fn, 0);
  cx->batch = LLVMGetParam(cx->fn, 1);
  LLVMSetValueName2(cx->s, "s", 1);
  LLVMSetValueName2(cx->batch, "b", 1);
  unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
  LLVMAddAttributeAtIndex(cx->fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(cx->c, nounwind, 0));
  unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
  for (unsigned i = 1; i <= 2; i++)
    LLVMAddAttributeAtIndex(cx->fn, i, LLVMCreateEnumAttribute(cx->c, noalias, 0));

  LLVMBasicBlockRef entry = cg_block(cx, "entry");
  cg_at(cx, entry);
  cx->err_slot = cg_slot(cx, cx->t_i32, "fail.slot");
  LLVMBuildStore(cx->b, cg_i32(cx, -1), cx->err_slot);
  cx->run = cg_load_field(cx, cx->st.seg, cx->s, CG_SEG_RUN, cx->t_ptr, "run");
  cx->strings = cg_load_field(cx, cx->st.run, cx->run, CG_RUN_STRINGS, cx->t_ptr, "strings");
  cg_load_params(cx, &f->u);
  LLVMValueRef n = cg_load_field(cx, cx->st.batch, cx->batch, CG_BATCH_N, cx->t_i32, "n");
  LLVMValueRef nactive = cg_load_field(cx, cx->st.batch, cx->batch, CG_BATCH_NACTIVE, cx->t_i32, "nactive");
  f->active = cg_load_field(cx, cx->st.batch, cx->batch, CG_BATCH_ACTIVE, cx->t_ptr, "active");
  f->hasactive = LLVMBuildIsNotNull(cx->b, f->active, "has.active");
  f->count = LLVMBuildSelect(cx->b, f->hasactive, nactive, n, "count");

  /* A word of ones stands in for absent validity bits. */
  LLVMValueRef ones = LLVMGetNamedGlobal(cx->m, "valid.ones");
  if (!ones) {
    ones = LLVMAddGlobal(cx->m, cx->t_i64, "valid.ones");
    LLVMSetInitializer(ones, cg_i64(cx, -1));
    LLVMSetGlobalConstant(ones, 1);
    LLVMSetLinkage(ones, LLVMPrivateLinkage);
    LLVMSetUnnamedAddress(ones, LLVMGlobalUnnamedAddr);
  }
  LLVMValueRef fits = cg_load_views(cx, ones);

  f->fallback = cg_block(cx, "fallback");
  LLVMBasicBlockRef init = cg_block(cx, "sink.init");
  LLVMBuildCondBr(cx->b, fits, init, f->fallback);
  cg_at(cx, f->fallback);
  {
    LLVMValueRef args[2] = {cx->s, cx->batch};
    LLVMBuildRet(cx->b, cg_call(cx, "vm_run_batch", args, 2, "interp"));
  }

  /* sink and LIMIT state */
  cg_at(cx, init);
  const ir_op *sink = seg->sink;
  if (sink->kind == IR_AGGREGATE) f->as = cg_agg_prologue(cx, sink, f->fallback);
  else f->bs = cg_buf_prologue(cx, sink, f->count, f->fallback);
  if (cx->err->set) return;   /* out of memory */
  f->ts = cg_tree_prologue(cx, f->fallback);
  f->js = f->ts ? cg_join_prologue(cx, f->fallback) : NULL;
  for (int k = 0; k < seg->nsteps; k++)
    if (!seg->steps[k]->dead && seg->steps[k]->kind == IR_LIMIT) f->nlim++;
  f->lims = f->ts && f->js ? cg_alloc(cx, ((size_t)f->nlim + 1) * sizeof *f->lims) : NULL;
  if (!f->lims) return;   /* out of memory: error set */
  if (f->nlim) {
    f->skips = cg_load_field(cx, cx->st.seg, cx->s, CG_SEG_LIMIT_SKIP, cx->t_ptr, "");
    f->lefts = cg_load_field(cx, cx->st.seg, cx->s, CG_SEG_LIMIT_LEFT, cx->t_ptr, "");
  }
  for (int m = 0; m < f->nlim; m++) {
    cg_limit *l = &f->lims[m];
    l->skip = cg_slot(cx, cx->t_i64, "skip.slot");
    l->left = cg_slot(cx, cx->t_i64, "left.slot");
    l->reached = cg_slot(cx, cx->t_i1, "reached.slot");
    LLVMBuildStore(cx->b, cg_load_elem(cx, cx->t_i64, f->skips, cg_i64(cx, m), ""), l->skip);
    LLVMBuildStore(cx->b, cg_load_elem(cx, cx->t_i64, f->lefts, cg_i64(cx, m), ""), l->left);
    LLVMBuildStore(cx->b, cg_i1(cx, 0), l->reached);
  }
}

/* The loop: for each position k < count (through the active list when
 * there is one) every step of the segment, then the sink. Leaves the
 * builder in the block after the loop. */
static void cg_seg_loop(cg_ctx *cx, cg_segfn *f) {
  const ir_segment *seg = cx->seg;
  LLVMBasicBlockRef pre = cg_here(cx);
  LLVMBasicBlockRef head = cg_block(cx, "loop");
  LLVMBasicBlockRef rowbb = cg_block(cx, "row");
  LLVMBasicBlockRef next = cg_block(cx, "row.next");
  LLVMBasicBlockRef exit = cg_block(cx, "exit");
  LLVMBuildBr(cx->b, head);
  cg_at(cx, head);
  LLVMValueRef k = LLVMBuildPhi(cx->b, cx->t_i32, "k");
  LLVMBuildCondBr(cx->b, LLVMBuildICmp(cx->b, LLVMIntULT, k, f->count, ""), rowbb, exit);
  cg_at(cx, rowbb);
  {
    LLVMBasicBlockRef via = cg_block(cx, "row.active"), join = cg_block(cx, "row.pos");
    LLVMBuildCondBr(cx->b, f->hasactive, via, join);
    cg_at(cx, via);
    LLVMValueRef ai = cg_load_elem(cx, cx->t_i32, f->active, LLVMBuildZExt(cx->b, k, cx->t_i64, ""), "");
    LLVMBuildBr(cx->b, join);
    cg_at(cx, join);
    cx->pos = LLVMBuildPhi(cx->b, cx->t_i32, "i");
    LLVMValueRef vs[2] = {k, ai};
    LLVMBasicBlockRef bbs[2] = {rowbb, via};
    LLVMAddIncoming(cx->pos, vs, bbs, 2);
  }
  cx->next_row = next;
  cx->loop_exit = exit;
  cx->joined = false;
  int m = 0;
  for (int s = 0; s < seg->nsteps; s++) {
    const ir_op *op = seg->steps[s];
    if (op->dead) continue;
    cx->step = s;
    cg_emit_step(cx, op, op->kind == IR_LIMIT ? &f->lims[m++] : NULL, f->ts, f->js);
  }
  cx->step = seg->nsteps;
  if (f->as) cg_agg_update(cx, f->as, seg->sink);
  else cg_buf_append(cx, f->bs);
  LLVMBuildBr(cx->b, cx->next_row);   /* the next row, or the next match of a JOIN */
  cx->next_row = next;
  cg_at(cx, next);
  LLVMValueRef k1 = LLVMBuildAdd(cx->b, k, cg_i32(cx, 1), "k.next");
  LLVMBuildBr(cx->b, head);
  {
    LLVMValueRef vs[2] = {cg_i32(cx, 0), k1};
    LLVMBasicBlockRef bbs[2] = {pre, next};
    LLVMAddIncoming(k, vs, bbs, 2);
  }
  cg_at(cx, exit);
}

/* Loop metadata on the straight-line loop's back edge: vectorize, but do
 * not interleave (unroll) the vector body on top: the vector loop alone
 * is what a batch needs, and each copy costs compile time. */
static void cg_loop_hint(cg_ctx *cx, LLVMValueRef br) {
  LLVMMetadataRef self = LLVMTemporaryMDNode(cx->c, NULL, 0);
  LLVMMetadataRef ic[2] = {LLVMMDStringInContext2(cx->c, "llvm.loop.interleave.count", 26),
                           LLVMValueAsMetadata(cg_i32(cx, 1))};
  LLVMMetadataRef ops[2] = {self, LLVMMDNodeInContext2(cx->c, ic, 2)};
  LLVMMetadataRef loop = LLVMMDNodeInContext2(cx->c, ops, 2);
  LLVMMetadataReplaceAllUsesWith(self, loop);
  LLVMSetMetadata(br, LLVMGetMDKindIDInContext(cx->c, "llvm.loop", 9), LLVMMetadataAsValue(cx->c, loop));
}

/* The straight-line loop of an AGGREGATE without GROUP BY (cg_vagg.c), in
 * front of the row loop: a batch without an active list runs through it
 * and, committed, continues after the row loop; otherwise (an active list,
 * a failed row, a sum that may have overflowed) the row loop runs the
 * batch. Returns the block after the commit (unterminated) or NULL when
 * the segment has no such loop; leaves the builder where the row loop
 * starts. */
static LLVMBasicBlockRef cg_seg_vloop(cg_ctx *cx, cg_segfn *f) {
  const ir_segment *seg = cx->seg;
  if (!f->as || !cg_vagg_wanted(cx, seg)) return NULL;
  cg_vagg *v = cg_vagg_begin(cx, f->as);
  if (!v) return NULL;   /* out of memory: error set */
  size_t nc = (size_t)cx->plan->ncols + 1;
  LLVMBasicBlockRef pre = cg_here(cx);
  LLVMBasicBlockRef rows = cg_block(cx, "rows"), head = cg_block(cx, "vec.loop"), end = cg_block(cx, "vec.end");
  cx->vfail = cg_slot(cx, cx->t_i1, "v.fail.slot");
  LLVMBuildStore(cx->b, cg_i1(cx, 0), cx->vfail);
  LLVMValueRef empty = LLVMBuildICmp(cx->b, LLVMIntEQ, f->count, cg_i32(cx, 0), "");
  LLVMBuildCondBr(cx->b, LLVMBuildOr(cx->b, f->hasactive, empty, ""), rows, head);
  cg_at(cx, head);
  LLVMValueRef k = LLVMBuildPhi(cx->b, cx->t_i32, "vk");
  cx->pos = k;
  cx->vmode = true;
  cx->vpass = cg_i1(cx, 1);
  memset(cx->have, 0, sizeof *cx->have * nc);
  for (int s = 0; s < seg->nsteps; s++) {
    const ir_op *op = seg->steps[s];
    if (op->dead) continue;
    cx->step = s;
    cg_emit_step(cx, op, NULL, f->ts, f->js);   /* FILTER and COMPUTE only (cg_vagg_wanted) */
  }
  cx->step = seg->nsteps;
  cg_vagg_row(cx, v);
  cx->vmode = false;
  memset(cx->have, 0, sizeof *cx->have * nc);
  LLVMValueRef k1 = LLVMBuildNUWAdd(cx->b, k, cg_i32(cx, 1), "vk.next");
  LLVMBasicBlockRef latch = cg_here(cx);
  LLVMValueRef br = LLVMBuildCondBr(cx->b, LLVMBuildICmp(cx->b, LLVMIntULT, k1, f->count, ""), head, end);
  cg_loop_hint(cx, br);
  LLVMAddIncoming(k, (LLVMValueRef[]){cg_i32(cx, 0), k1}, (LLVMBasicBlockRef[]){pre, latch}, 2);
  cg_at(cx, end);
  cg_vagg_end(cx, v, rows);
  LLVMBasicBlockRef done = cg_here(cx);
  cx->vector_loops = true;
  cg_at(cx, rows);
  return done;
}

/* Epilogue, after the loop: the sink's and the trees' state, the LIMIT
 * counters written back (and s->done once a LIMIT that saw rows is used
 * up), then the error of the smallest failed step or 0. Frees f. */
static void cg_seg_epilogue(cg_ctx *cx, cg_segfn *f) {
  if (f->bs) cg_buf_epilogue(cx, f->bs);
  cg_tree_epilogue(cx, f->ts);
  LLVMValueRef done = NULL;
  for (int j = 0; j < f->nlim; j++) {
    cg_limit *l = &f->lims[j];
    LLVMValueRef left = LLVMBuildLoad2(cx->b, cx->t_i64, l->left, "");
    LLVMBuildStore(cx->b, LLVMBuildLoad2(cx->b, cx->t_i64, l->skip, ""),
                   cg_elem_ptr(cx, cx->t_i64, f->skips, cg_i64(cx, j), ""));
    LLVMBuildStore(cx->b, left, cg_elem_ptr(cx, cx->t_i64, f->lefts, cg_i64(cx, j), ""));
    LLVMValueRef reached = LLVMBuildLoad2(cx->b, cx->t_i1, l->reached, "");
    LLVMValueRef fin = LLVMBuildAnd(cx->b, reached, LLVMBuildICmp(cx->b, LLVMIntEQ, left, cg_i64(cx, 0), ""), "");
    done = done ? LLVMBuildOr(cx->b, done, fin, "") : fin;
  }
  if (done) {
    LLVMValueRef dp = cg_field_ptr(cx, cx->st.seg, cx->s, CG_SEG_DONE, "");
    LLVMValueRef old = LLVMBuildLoad2(cx->b, cx->t_i32, dp, "");
    LLVMBuildStore(cx->b, LLVMBuildSelect(cx->b, done, cg_i32(cx, 1), old, ""), dp);
  }
  LLVMValueRef code = LLVMBuildLoad2(cx->b, cx->t_i32, cx->err_slot, "fail.code");
  LLVMBasicBlockRef failbb = cg_block(cx, "fail"), okbb = cg_block(cx, "ok");
  LLVMBuildCondBr(cx->b, LLVMBuildICmp(cx->b, LLVMIntNE, code, cg_i32(cx, -1), ""), failbb, okbb);
  cg_at(cx, failbb);
  {
    LLVMValueRef args[2] = {cx->s, code};
    LLVMBuildRet(cx->b, cg_call(cx, "cg_rt_fail", args, 2, ""));
  }
  cg_at(cx, okbb);
  LLVMBuildRet(cx->b, cg_i32(cx, 0));

}

/* The segment's state (f's arrays, the sink's and trees') comes from
 * cx->arena, freed once the function is emitted; out of memory in the
 * prologue sets the error, and the module is given up. */
static void cg_emit_segment(cg_ctx *cx, int si, const char *prefix) {
  cg_segfn f = {0};
  rt_arena_init(&cx->arena);
  cg_seg_prologue(cx, si, prefix, &f);
  if (!cx->err->set) {
    LLVMBasicBlockRef vdone = cg_seg_vloop(cx, &f);
    cg_seg_loop(cx, &f);
    if (vdone) {
      /* a committed batch goes where the row loop ends */
      LLVMBasicBlockRef here = cg_here(cx);
      cg_at(cx, vdone);
      LLVMBuildBr(cx->b, cx->loop_exit);
      cg_at(cx, here);
    }
    cg_seg_epilogue(cx, &f);
  }
  rt_arena_free(&cx->arena);
}

bool cg_segment_wanted(const ir_segment *seg) {
  int live = 0;
  for (int k = 0; k < seg->nsteps; k++) {
    const ir_op *op = seg->steps[k];
    if (op->dead) continue;
    /* a step this backend does not compile leaves the whole segment to
     * the interpreter (ops.def JIT; of the tree aggregates, those
     * cg_tree_supported takes) */
    if (!ir_op_has(op->kind, OPF_JIT)) return false;
    if ((op->kind == IR_TREE_NUMBER || op->kind == IR_TREE_ACC) && !cg_tree_supported(op)) return false;
    live++;
  }
  if (!ir_op_has(seg->sink->kind, OPF_JIT)) return false;
  /* A sink that only appends rows is not worth a compile by itself; the
   * aggregate update is per-row work. */
  switch (seg->sink->kind) {
  case IR_AGGREGATE: return true;
  case IR_OUTPUT: case IR_SORT: case IR_WINDOW: case IR_TREE_ORDER: case IR_IV_BUFFER: case IR_JOIN_BUILD:
  case IR_FORK:
    return live > 0;
#define IR_CASE_SOURCE(name) case IR_##name:
#define IR_CASE_STEP(name) case IR_##name:
#include "ir/op_cases.h"
  case IR__COUNT:
    break;
  }
  return false;
}

int cg_emit_plan(cg_ctx *cx, const char *prefix) {
  for (int si = 0; si < cx->plan->nsegs && !cx->err->set; si++)
    if (cg_segment_wanted(&cx->plan->segs[si])) cg_emit_segment(cx, si, prefix);
  return !cx->err->set;
}
