/*
 * segment.c — cuts the op list into segments at breakers.
 *
 *   segment = source (SCAN_TABLE, SCAN_SQL, SCAN_BUF)
 *             steps  (FILTER, COMPUTE, LIMIT; dead ops skipped)
 *             sink   (SORT, AGGREGATE: a breaker; or OUTPUT)
 *
 * After each breaker a SCAN_BUF op is made and inserted into plan->ops
 * right after it, so the op list stays the whole plan in order. It reads
 * the breaker's buffer: for SORT the carried columns under their own ids,
 * for AGGREGATE the group keys then the live aggregates. Re-running
 * replaces the SCAN_BUF ops made before (after ir_live changed carries).
 */
#include "plan.h"

static ir_op *scan_buf(ir_plan *p, ir_op *brk) {
  ir_op *op = rt_arena_alloc(&p->arena, sizeof *op);
  op->kind = IR_SCAN_BUF;
  op->stage = brk->stage;
  op->pos = brk->pos;
  op->out_col = -1;
  op->buf_op = brk;
  if (brk->kind == IR_SORT) {
    op->nscan = brk->ncarry;
    op->out_cols = rt_arena_memdup(&p->arena, brk->carry, sizeof(int) * ((size_t)brk->ncarry + 1));
  } else {
    op->out_cols = rt_arena_alloc(&p->arena, sizeof(int) * ((size_t)(brk->ngroup + brk->naggs) + 1));
    for (int k = 0; k < brk->ngroup; k++) op->out_cols[op->nscan++] = brk->group_out[k];
    for (int k = 0; k < brk->naggs; k++)
      if (brk->aggs[k].live) op->out_cols[op->nscan++] = brk->aggs[k].out_col;
  }
  return op;
}

void ir_segment_plan(ir_plan *p) {
  /* Rebuild the op list with fresh SCAN_BUF ops, then segment it. */
  ir_op **ops = rt_arena_alloc(&p->arena, sizeof(ir_op *) * ((size_t)p->nops * 2 + 1));
  int nops = 0;
  for (int i = 0; i < p->nops; i++) {
    ir_op *op = p->ops[i];
    if (op->kind == IR_SCAN_BUF) continue;
    ops[nops++] = op;
    if (!op->dead && (op->kind == IR_SORT || op->kind == IR_AGGREGATE)) ops[nops++] = scan_buf(p, op);
  }
  p->ops = ops;
  p->nops = nops;

  int nsegs = 0;
  for (int i = 0; i < nops; i++)
    if (!ops[i]->dead && (ops[i]->kind == IR_SCAN_TABLE || ops[i]->kind == IR_SCAN_SQL ||
                          ops[i]->kind == IR_SCAN_BUF))
      nsegs++;
  p->segs = rt_arena_alloc(&p->arena, sizeof(ir_segment) * ((size_t)nsegs + 1));
  p->nsegs = 0;
  ir_segment *seg = NULL;
  for (int i = 0; i < nops; i++) {
    ir_op *op = ops[i];
    if (op->dead) continue;
    switch (op->kind) {
    case IR_SCAN_TABLE:
    case IR_SCAN_SQL:
    case IR_SCAN_BUF:
      seg = &p->segs[p->nsegs++];
      seg->source = op;
      seg->steps = rt_arena_alloc(&p->arena, sizeof(ir_op *) * ((size_t)nops + 1));
      break;
    case IR_FILTER:
    case IR_COMPUTE:
    case IR_LIMIT:
      if (seg) seg->steps[seg->nsteps++] = op;
      break;
    case IR_SORT:
    case IR_AGGREGATE:
    case IR_OUTPUT:
      if (seg) seg->sink = op;
      seg = NULL;
      break;
    case IR__COUNT: break;
    }
  }
}
