/*
 * segment.c — cuts the op list into segments at breakers.
 *
 *   segment = source (SCAN_TABLE, SCAN_SQL, SCAN_BUF; an interval source
 *             ISECT, FLATTEN, IJOIN, FILLGAPS after its IV_BUFFERs, whose
 *             served columns iv_outputs lists in out_cols)
 *             steps  (FILTER, COMPUTE, LIMIT, TREE_NUMBER, TREE_ACC; dead
 *                     ops skipped)
 *             sink   (SORT, AGGREGATE, TREE_ORDER: a breaker; IV_BUFFER; or
 *                     OUTPUT)
 *
 * A JOIN's relation is bound inside the input's segment (bind_join.c): its
 * segment (ending in JOIN_BUILD) comes first and the input's goes on with
 * the JOIN_PROBE step after it. A FORK is a breaker like SORT; the
 * segments that read its name (SCAN_FORK) come after it.
 *
 * After each breaker a SCAN_BUF op is made and inserted into plan->ops
 * right after it, so the op list stays the whole plan in order. It reads
 * the breaker's buffer: for SORT and TREE_ORDER the carried columns under
 * their own ids, for AGGREGATE the group keys then the live aggregates.
 * Re-running replaces the SCAN_BUF ops made before (after ir_live changed
 * carries).
 *
 * Once segments exist, each TREE_NUMBER gets its tier (tree_tier_of): the
 * TABLE tier when the numbers can be the table's row indices, and each
 * TREE_ORDER over such a numbering alone is made in place (tree.in_place):
 * the next segment reads the table in tree order, nothing is buffered.
 */
#include "plan.h"

/* TABLE when every row of a columnar table reaches the numbering (the
 * segment's source is a table scan and only COMPUTEs come before it) and
 * id is the table's 0..n-1 row index column (stored type RT_ID, which is
 * how a column finishes when its values are exactly that): then the row
 * index is the node number. Otherwise DENSE, which finds out at run time. */
static int tree_tier_of(const ir_plan *p, const ir_segment *seg, int step) {
  const ir_op *src = seg->source, *op = seg->steps[step];
  if (src->kind != IR_SCAN_TABLE || !src->scan.table) return RT_TREE_TIER_DENSE;
  if (src->scan.table->nrows >= (int64_t)RT_TREE_NONE) return RT_TREE_TIER_DENSE;
  for (int k = 0; k < step; k++)
    if (seg->steps[k]->kind != IR_COMPUTE) return RT_TREE_TIER_DENSE;
  for (int i = 0; i < src->scan.nscan; i++)
    if (src->scan.out_cols[i] == op->tree.id_col)
      return src->scan.table->cols[src->scan.table_cols[i]].type == RT_ID &&
                     rt_type_is_int(p->cols[op->tree.parent_col].type)
                 ? RT_TREE_TIER_TABLE
                 : RT_TREE_TIER_DENSE;
  return RT_TREE_TIER_DENSE;
}

/* Marks segment si's TREE_ORDER as in place (plan.h tree.in_place) when the
 * segment is an unfiltered table scan whose only step is its TABLE-tier
 * numbering: the rows are then the table's rows and their node numbers
 * the row indices, so the next segment can read the table itself in tree
 * order instead of a buffer. Every column that segment reads must be a
 * table column or one of the node columns (the only other columns a
 * segment of one TREE_NUMBER can define). */
static void tree_table_order(ir_plan *p, int si) {
  ir_segment *sg = &p->segs[si];
  ir_op *ord = sg->sink, *src = sg->source;
  if (!ord || ord->kind != IR_TREE_ORDER || si + 1 >= p->nsegs || !src) return;
  ir_op *sb = p->segs[si + 1].source;
  if (src->kind != IR_SCAN_TABLE || !src->scan.table || !sb || sb->kind != IR_SCAN_BUF ||
      sb->scan.buf_op != ord)
    return;
  const ir_op *num = ord->tree.num;
  if (sg->nsteps != 1 || sg->steps[0] != num || num->tree.tier != RT_TREE_TIER_TABLE) return;
  int idtc = -1;
  for (int i = 0; i < src->scan.nscan; i++)
    if (src->scan.out_cols[i] == num->tree.id_col) idtc = src->scan.table_cols[i];
  if (idtc < 0) return;
  int *tc = ir_palloc(p, sizeof(int) * ((size_t)sb->scan.nscan + 1));
  for (int i = 0; i < sb->scan.nscan; i++) {
    int c = sb->scan.out_cols[i], found = -2;
    if (c == num->tree.node_col) found = idtc;
    else if (c == num->tree.pnode_col) found = -1;
    for (int j = 0; j < src->scan.nscan && found == -2; j++)
      if (src->scan.out_cols[j] == c) found = src->scan.table_cols[j];
    if (found == -2) return;
    tc[i] = found;
  }
  ord->tree.in_place = true;
  sb->scan.table = src->scan.table;
  sb->scan.table_name = src->scan.table_name;
  sb->scan.table_cols = tc;
}

static ir_op *scan_buf(ir_plan *p, ir_op *brk) {
  ir_op *op = ir_palloc(p, sizeof *op);
  op->kind = IR_SCAN_BUF;
  op->stage = brk->stage;
  op->pos = brk->pos;
  op->scan.buf_op = brk;
  op->scan.out_cols = ir_palloc(p, sizeof(int) * ((size_t)ir_buf_layout_max(brk) + 1));
  op->scan.nscan = ir_buf_layout(brk, op->scan.out_cols);
  return op;
}

/* The columns an interval source serves, once live.c has trimmed the
 * buffers: ISECT ts, dur, then each operand's carry; FLATTEN ts, dur, PER,
 * live aggregates; IJOIN both carries; FILL GAPS lists its own when bound. */
static void iv_outputs(ir_plan *p, ir_op *op) {
  bool bounds = false, carries = false, flat = false;
  int ncarry = op->iv.nrel;   /* relations whose carry it serves (from the first) */
  int pre = -1, post = -1;    /* a column before the bounds, after them */
  switch (op->kind) {
  case IR_ISECT: bounds = carries = true; break;
  case IR_FLATTEN: bounds = flat = true; break;
  case IR_IJOIN: carries = true; break;
  case IR_FILLGAPS: return;
  case IR_IV_EVENTS: bounds = carries = true, ncarry = 1; break;   /* the events' carry, not the STOP's */
  /* §9.2: the input's rows under new bounds (SPLIT: and the operand's) */
  case IR_SUBTRACT: bounds = carries = true, ncarry = 1; break;
  case IR_SPLIT: bounds = carries = true; break;
  case IR_QUANTIZE: bounds = carries = true, post = op->iv.bucket_out; break;
  case IR_SETBOUNDS: carries = true; break;
  case IR_IVMERGE: bounds = carries = true, pre = op->iv.gid_out; break;
  /* §9.1, §9.3 */
  case IR_IV_UNION: bounds = carries = true; break;   /* and the PER values (below) */
  case IR_IV_FIND: carries = true; break;
  case IR_IV_KEEP: carries = true, ncarry = 1; break;   /* the input's rows only */
  case IR_SCAN_TABLE: case IR_SCAN_SQL: case IR_SCAN_BUF: case IR_SETOP: case IR_SCAN_FORK:
  case IR_GRAPH:
  case IR_TREE_SHAPE:
#define IR_CASE_STEP(name) case IR_##name:
#define IR_CASE_SINK(name) case IR_##name:
#define IR_CASE_BREAKER(name) case IR_##name:
#include "ir/op_cases.h"
  case IR__COUNT:
    return;   /* not an interval source */
  }
  int max = 4 + op->iv.nper + op->iv.naggs;
  for (int j = 0; j < op->iv.nrel; j++) max += op->iv.bufs[j]->ivbuf.ncarry;
  op->iv.out_cols = ir_palloc(p, sizeof(int) * ((size_t)max + 1));
  op->iv.nscan = 0;
  if (pre >= 0) op->iv.out_cols[op->iv.nscan++] = pre;
  if (bounds) {
    op->iv.out_cols[op->iv.nscan++] = op->iv.ts_out;
    op->iv.out_cols[op->iv.nscan++] = op->iv.dur_out;
  }
  if (post >= 0) op->iv.out_cols[op->iv.nscan++] = post;
  for (int k = 0; op->kind == IR_IV_UNION && k < op->iv.nper; k++)
    op->iv.out_cols[op->iv.nscan++] = op->iv.per_out[k];
  if (flat) {
    for (int k = 0; k < op->iv.nper; k++) op->iv.out_cols[op->iv.nscan++] = op->iv.per[0][k];
    for (int k = 0; k < op->iv.naggs; k++)
      if (op->iv.aggs[k].live) op->iv.out_cols[op->iv.nscan++] = op->iv.aggs[k].out_col;
  }
  for (int j = 0; carries && j < ncarry; j++)
    for (int k = 0; k < op->iv.bufs[j]->ivbuf.ncarry; k++)
      op->iv.out_cols[op->iv.nscan++] = op->iv.bufs[j]->ivbuf.carry[k];
}

/* What a GRAPH source serves once live.c has trimmed NODES' buffer: its
 * carry, then parent_id and depth (§9.5). */
static void graph_outputs(ir_plan *p, ir_op *op) {
  const ir_op *nb = op->graph.bufs[0];
  op->graph.out_cols = ir_palloc(p, sizeof(int) * ((size_t)nb->ivbuf.ncarry + 3));
  op->graph.nscan = 0;
  for (int k = 0; k < nb->ivbuf.ncarry; k++) op->graph.out_cols[op->graph.nscan++] = nb->ivbuf.carry[k];
  op->graph.out_cols[op->graph.nscan++] = op->graph.parent_out;
  op->graph.out_cols[op->graph.nscan++] = op->graph.depth_out;
}

/* What a TREE_SHAPE serves: its own columns, the live aggregates, then
 * every column its input's buffer carries (after live.c trimmed it). */
static void tshape_outputs(ir_plan *p, ir_op *op) {
  struct ir_tshape *ts = &op->tshape;
  int max = 2 + ts->naggs + ts->in_buf->ivbuf.ncarry;
  ts->out_cols = ir_palloc(p, sizeof(int) * ((size_t)max + 1));
  ts->nscan = 0;
  ts->out_cols[ts->nscan++] = ts->parent_out;
  if (ts->id_out >= 0) ts->out_cols[ts->nscan++] = ts->id_out;
  for (int k = 0; k < ts->naggs; k++)
    if (ts->aggs[k].live) ts->out_cols[ts->nscan++] = ts->aggs[k].out_col;
  for (int k = 0; k < ts->in_buf->ivbuf.ncarry; k++) ts->out_cols[ts->nscan++] = ts->in_buf->ivbuf.carry[k];
}

void ir_segment_plan(ir_plan *p) {
  /* Rebuild the op list with fresh SCAN_BUF ops, then segment it. */
  ir_op **ops = ir_palloc(p, sizeof(ir_op *) * ((size_t)p->nops * 2 + 1));
  int nops = 0;
  for (int i = 0; i < p->nops; i++) {
    ir_op *op = p->ops[i];
    if (op->kind == IR_SCAN_BUF) continue;
    if (op->kind == IR_TREE_ORDER) op->tree.in_place = false;   /* decided again below */
    ops[nops++] = op;
    if (!op->dead && ir_op_role(op->kind) == IR_ROLE_BREAKER) ops[nops++] = scan_buf(p, op);
  }
  p->ops = ops;
  p->nops = nops;

  int nsegs = 0;
  for (int i = 0; i < nops; i++) {
    if (!ops[i]->dead && ir_op_is_source(ops[i]->kind)) nsegs++;
    if (ir_op_is_interval(ops[i]->kind)) iv_outputs(p, ops[i]);
    if (ops[i]->kind == IR_GRAPH) graph_outputs(p, ops[i]);
    if (ops[i]->kind == IR_TREE_SHAPE) tshape_outputs(p, ops[i]);
  }
  p->segs = ir_palloc(p, sizeof(ir_segment) * ((size_t)nsegs + 1));
  p->nsegs = 0;
  /* Segments are numbered (and run) in the order their sinks close them.
   * A source met while a segment is open (a JOIN's relation, bound
   * inline after the input's ops) suspends it; the step after the inner
   * segment's sink (the JOIN_PROBE) resumes it, so the build runs first. */
  ir_segment *tmp = ir_palloc(p, sizeof(ir_segment) * ((size_t)nsegs + 1));
  ir_segment **open = ir_palloc(p, sizeof(ir_segment *) * ((size_t)nsegs + 1));
  int ntmp = 0, nopen = 0;
  ir_segment *seg = NULL;
  for (int i = 0; i < nops; i++) {
    ir_op *op = ops[i];
    if (op->dead) continue;
    switch (ir_op_role(op->kind)) {
    case IR_ROLE_SOURCE:
      if (seg) open[nopen++] = seg;
      seg = &tmp[ntmp++];
      seg->source = op;
      seg->steps = ir_palloc(p, sizeof(ir_op *) * ((size_t)nops + 1));
      break;
    case IR_ROLE_STEP:
      if (!seg && nopen) seg = open[--nopen];
      if (seg) seg->steps[seg->nsteps++] = op;
      break;
    case IR_ROLE_SINK:
    case IR_ROLE_BREAKER:
      if (!seg && nopen) seg = open[--nopen];
      if (seg) {
        seg->sink = op;
        p->segs[p->nsegs++] = *seg;
      }
      seg = NULL;
      break;
    }
  }
  for (int si = 0; si < p->nsegs; si++) {
    ir_segment *sg = &p->segs[si];
    for (int k = 0; k < sg->nsteps; k++)
      if (sg->steps[k]->kind == IR_TREE_NUMBER) sg->steps[k]->tree.tier = tree_tier_of(p, sg, k);
  }
  for (int si = 0; si < p->nsegs; si++) tree_table_order(p, si);
}
