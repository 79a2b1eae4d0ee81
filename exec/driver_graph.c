/*
 * driver_graph.c — runs a GRAPH source (LANGUAGE.md §9.5; bound in
 * ir/bind_graph.c, plan.h struct ir_graph): its NODES, EDGES and FROM
 * relations are the IV_BUFFERs of the segments before it.
 *
 * The keys (ints widened to int64 in the buffers) go to
 * runtime/graph/graph.h as they are stored, no copy; the tree comes back
 * as NODES rows in output order with each one's parent id and depth. The
 * source then serves it in batches: NODES' carried columns as views of
 * its buffer selected by the rows (no copying), parent_id and depth as
 * flat views. Downstream the batches are ordinary: the backend the
 * caller picks runs the rest of the segment.
 *
 * The graph's working arrays and the tree are charged to the memory
 * budget as the stage's (out of memory is the budget's error); the
 * relation buffers are released once the tree is served (ex_iv_release,
 * as an interval source's).
 */
#include "runtime/graph/graph.h"
#include "exec.h"

/* Column c of IV_BUFFER bop's rowbuf as an rt_gcol; 0 when it is not
 * there. */
static int g_key(const rt_rowbuf *buf, const ir_op *bop, int c, rt_gcol *out) {
  int k = ex_buf_col(bop, c);
  if (k < 0 || buf->types[k] != RT_I64) return 0;
  out->n = (uint32_t)buf->nrows;
  out->v = buf->data[k];
  out->valid = buf->valid[k];
  return 1;
}

static int g_scan(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *dn) {
  const ir_op *op = s->seg->source;
  const struct ir_graph *g = &op->graph;
  const rt_rowbuf *bufs[3];
  for (int j = 0; j < 3; j++) {
    int idx = ex_op_index(run->plan, g->bufs[j]);
    bufs[j] = idx >= 0 ? run->bufs[idx] : NULL;
    if (!bufs[j]) return ex_op_fail(run, op, "a relation was not buffered");
    if (bufs[j]->nrows >= (int64_t)RT_NO_ROW) return ex_op_fail(run, op, "too many rows");
  }
  rt_graph_in in;
  if (!g_key(bufs[0], g->bufs[0], g->id_col, &in.id) ||
      !g_key(bufs[1], g->bufs[1], g->src_col, &in.src) ||
      !g_key(bufs[1], g->bufs[1], g->dst_col, &in.dst) ||
      !g_key(bufs[2], g->bufs[2], g->seed_col, &in.seed))
    return ex_op_fail(run, op, "a key was not buffered");
  rt_graph_out out;
  if (!rt_graph_run((rt_graphalgo)g->algo, &in, op->stage, &out, &run->err)) {
    if (run->err.offset < 0) run->err.offset = op->pos;
    return -1;
  }
  const ir_op *nb = g->bufs[0];
  int rc = 0;
  for (uint32_t start = 0; rc == 0 && start < out.n && !s->done; start += RT_BATCH) {
    uint32_t n = out.n - start < RT_BATCH ? out.n - start : RT_BATCH;
    for (int k = 0; k < nb->ivbuf.ncarry; k++)
      rt_rowbuf_view(bufs[0], k, 0, out.row + start, &b->cols[nb->ivbuf.carry[k]]);
    b->cols[g->parent_out] = (rt_view){.type = RT_I64, .data = out.parent + start,
                                       .valid = out.parent_valid + start / 64};
    b->cols[g->depth_out] = (rt_view){.type = RT_I64, .data = out.depth + start};
    rc = run->feed(run, s, b, n, pick, ctx, dn);
  }
  rt_graph_out_free(&out);
  return rc;
}

int ex_graph_scan(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *dn) {
  const ir_op *op = s->seg->source;
  const char *prev = rt_budget_owner(op->stage);
  int rc = g_scan(run, s, b, pick, ctx, dn);
  rt_budget_owner(prev);
  ex_iv_release(run, op->graph.bufs, 3);
  return rc;
}
