/*
 * driver_treepar.c — a TREE ACCUMULATE segment on several threads.
 *
 * The segment after a finished tree order reads the ordered rows, and its
 * first step folds them into per-node running values: the rows depend on
 * each other only through those values, along tree edges. So the ordered
 * positions are cut into morsels of whole subtrees (runtime/tree/tree_par.c
 * rt_tree_morsels, which also says why each node's values are then one
 * thread's, bit for bit), and the morsels run as any parallel scan's
 * (driver_par.c ex_par_rows): each worker takes the next morsel, runs its
 * batches through the segment's batch function into a sink of its own, and
 * the sinks merge in morsel order.
 *
 * One thread is fed the same morsels, in the same batches (RT_BATCH
 * positions from each morsel's start, ex_treescan_batch), and ends each
 * morsel where they end (ex_run.own_morsels), so an AGGREGATE after the
 * step folds the same per-morsel partial sums on any thread count. The
 * morsels depend only on the plan and the data: whenever the segment's
 * first live step is the TREE ACCUMULATE of the order it reads and the
 * parents' positions are known. Whether they then run in parallel also
 * depends on the run (threads, no memory limit) and on the segment's other
 * steps and sink (ex_par_steps_ok's rules).
 */
#include <stdlib.h>

#include "exec.h"
#include "runtime/par.h"

void ex_treescan_ramps(uint32_t *ramps) {
  for (uint32_t j = 0; j < EX_RAMP; j++) {
    ramps[j] = j;
    ramps[EX_RAMP + j] = EX_RAMP - 1 - j;
  }
}

void ex_treescan_batch(const ex_treescan *ts, int64_t at, uint32_t n, rt_batch *b) {
  const ir_op *src = ts->src;
  /* A selection when the rows are not a run that starts on a validity
   * word: the columns viewed from the 64-row word that holds the batch's
   * first (lowest) row, the selection a slice of one of the run's ramps,
   * so no batch writes one (the per-batch loop was ~5% of a 10M tree_up
   * on one thread). Reversed, positions at..at+n-1 are rows hi..hi-n+1
   * (hi = rows - 1 - at): offsets d, d-1, … from the word, d = hi - base
   * <= n - 1 + 63 < EX_RAMP. */
  const uint32_t *sel = NULL;
  int64_t from = at;
  if (ts->perm) {
    sel = ts->perm + at;   /* row indices of the whole table or buffer */
    from = 0;
  } else if (ts->reversed) {
    int64_t hi = ts->n - 1 - at;
    from = (hi - (n - 1)) / 64 * 64;
    sel = ts->ramps + EX_RAMP + (EX_RAMP - 1 - (hi - from));
  } else if (at % 64) {
    from = at / 64 * 64;
    sel = ts->ramps + (at - from);
  }
  if (ts->buf) {
    for (int i = 0; i < ts->nc; i++) {
      rt_rowbuf_view(ts->buf, ts->bc[i], from, NULL, &b->cols[ts->ids[i]]);
      b->cols[ts->ids[i]].sel = sel;
    }
    return;
  }
  for (int i = 0; i < src->scan.nscan; i++) {
    rt_view *v = &b->cols[src->scan.out_cols[i]];
    if (src->scan.table_cols[i] >= 0) rt_table_view(ts->t, src->scan.table_cols[i], from, v);
    else *v = (rt_view){.type = RT_U32, .data = ts->pnode + from};
    v->sel = sel;
  }
}

/* The whole of plan column c as the source holds it, indexed by row. */
static bool whole_col(const ex_treescan *ts, int c, rt_view *v) {
  const ir_op *src = ts->src;
  if (ts->buf) {
    for (int i = 0; i < ts->nc; i++)
      if (ts->ids[i] == c) {
        rt_rowbuf_view(ts->buf, ts->bc[i], 0, NULL, v);
        return true;
      }
    return false;
  }
  for (int i = 0; i < src->scan.nscan; i++)
    if (src->scan.out_cols[i] == c) {
      if (src->scan.table_cols[i] >= 0) rt_table_view(ts->t, src->scan.table_cols[i], 0, v);
      else *v = (rt_view){.type = RT_U32, .data = ts->pnode};
      v->sel = NULL;
      return true;
    }
  return false;
}

/* The segment's TREE_ACC when it is the first live step and the only tree
 * step, accumulating the order ts reads. */
static const ir_op *first_tree_step(const ex_seg *s, const ex_treescan *ts) {
  const ir_segment *seg = s->seg;
  const ir_op *acc = NULL;
  for (int k = 0; k < seg->nsteps; k++) {
    const ir_op *op = seg->steps[k];
    if (op->dead) continue;
    if (!acc && op->kind != IR_TREE_ACC) return NULL;
    if (acc && (op->kind == IR_TREE_ACC || op->kind == IR_TREE_NUMBER)) return NULL;
    if (!acc) acc = op;
  }
  const ir_op *ord = ts->src->scan.buf_op;
  if (!acc || !ord || ord->kind != IR_TREE_ORDER || acc->tree.num != ord->tree.num ||
      acc->tree.up != ord->tree.up)
    return NULL;
  return acc;
}

int64_t ex_tree_morsels(ex_run *run, const ex_seg *s, const ex_treescan *ts, int64_t **bounds) {
  *bounds = NULL;
  const ir_op *acc = first_tree_step(s, ts);
  if (!acc || ts->n <= 0 || ts->path < 0 || ts->path == RT_TREE_ORDER_STREAMED) return 0;
  rt_treesrc rs = {.n = ts->n, .path = ts->path, .perm = ts->perm, .reversed = ts->reversed,
                   .node_is_row = ts->t != NULL, .bmin = ts->bmin, .bmax = ts->bmax};
  if (!whole_col(ts, acc->tree.node_col, &rs.node) || !whole_col(ts, acc->tree.pnode_col, &rs.pnode))
    return 0;
  /* one thread's morsel size, in the batches ex_treescan_batch cuts */
  rt_par par = {ex_par_runner, run->pool, run->threads}, *pp = ex_par_ok(run) ? &par : NULL;
  int64_t count = rt_tree_morsels(&rs, acc->tree.up, ex_morsel_batches(run) * RT_BATCH, bounds, pp);
  if (count < 0) rt_errorf(&run->err, acc->pos, "%s: out of memory", acc->stage);
  return count;
}

static void scan_load(void *p, int worker, int64_t at, uint32_t n, rt_batch *b) {
  (void)worker;
  ex_treescan_batch(p, at, n, b);
}

int ex_tree_par(ex_run *run, ex_seg *s, const ex_treescan *ts, const int64_t *bounds, int64_t count,
                ex_pick_fn pick, void *ctx) {
  const ir_op *acc = first_tree_step(s, ts);
  if (count < 2 || !acc || s->done || !ex_par_ok(run) || !ex_par_steps_ok_but(run, s, acc)) return 0;
  ex_par_src ps = {.nrows = ts->n, .batch_rows = RT_BATCH, .load = scan_load, .src = (void *)ts,
                   .bounds = bounds, .nbounds = count};
  return ex_par_rows(run, s, &ps, pick, ctx) < 0 ? -1 : 1;
}
