/*
 * live.c — backward liveness over the op list (ARCHITECTURE.md, "liveness").
 *
 * Walks from OUTPUT to the sources keeping `need`, the set of columns read
 * downstream of the current point. Column ids are defined once (a COMPUTE,
 * an aggregate or a scan defines its column), so the walk is one pass:
 *   COMPUTE    dead when its column is not needed (op->dead), else its
 *              inputs become needed
 *   FILTER     its inputs become needed (the filter always runs)
 *   SORT       carry trimmed to the needed columns plus the keys
 *   AGGREGATE  aggregates whose output is not needed are dropped
 *              (ir_agg.live = false); the op stays, since it still
 *              decides the number of rows; keys are always read
 *   TREE_ACC   aggregates whose output is not needed are dropped; with
 *              none left the op is dead (the stage is gone), else it
 *              needs the node columns and marks its TREE_ORDER used
 *   TREE_ORDER dead unless a live TREE_ACC reads it (tree.used); carry
 *              trimmed to the needed columns plus the node columns
 *   TREE_NUMBER dead unless its node columns are needed; else it needs
 *              id and parent_id. A removed stage checks nothing: its
 *              tree errors (cycles, missing parents) do not fire.
 *   WINDOW     calls whose output is not needed are dropped (live =
 *              false); with none left the op is dead; carry trimmed to
 *              the needed columns plus the live calls' keys and arguments
 *   IV_BUFFER  carry trimmed to the needed columns (an interval operand
 *              buffers only what is read later)
 *   ISECT, FLATTEN, IJOIN, FILLGAPS  need each relation's ts, dur and PER
 *              columns; FLATTEN drops dead aggregates like AGGREGATE
 *   JOIN_PROBE its keys and residual become needed; the relation's
 *              columns it serves stay needed, for the build to carry
 *   JOIN_BUILD carry trimmed to the needed columns (unread columns of the
 *              joined relation are never buffered, nor read by its scan)
 *   SETOP      needs every column of its relations (rows compare whole)
 *   GRAPH      needs the keys of its relations (NODES.id, EDGES.src and
 *              dst, the seeds' id); defines parent_id and depth
 *   TREE_SHAPE defines its parent_id (and id); drops dead aggregates like
 *              AGGREGATE; needs the ids, BY columns and live arguments
 *   SCAN_FORK  reads only needed columns, which the fork then needs
 *   FORK       dead when no live SCAN_FORK reads it (the stream goes on
 *              unbuffered); else carry trimmed to the needed columns,
 *              its readers' included (one kept so that rows count)
 *   SCAN_*     read only needed columns; a SQLite scan is rewritten to
 *              project just those (see wrap_sql)
 * ir_col.live ends up true for every column some op reads or some scan
 * produces. Running ir_live twice gives the same plan. Out of memory it
 * jumps to p->oom_jmp (ir_plan_oom), like the passes after it.
 */
#include "plan.h"

static void need_expr(const ir_expr *e, bool *need) {
  if (!e) return;
  if (e->kind == IX_COL) need[e->col] = true;
  for (int i = 0; i < e->nargs; i++) need_expr(e->args[i], need);
}

/* WITH __pipeline_source(c0, c1, …) AS (SELECT * FROM (<base>))
 * SELECT c0 AS "a", c2 AS "b" FROM __pipeline_source
 * Positional names c0… let SQLite's planner drop unread source columns
 * when it flattens the subquery, whatever the source names are. */
static void wrap_sql(ir_plan *p, ir_op *op) {
  rt_buf q = {0};
  rt_buf_printf(&q, "WITH __pipeline_source(");
  for (int i = 0; i < op->scan.nsrc; i++) rt_buf_printf(&q, "%sc%d", i ? ", " : "", i);
  rt_buf_printf(&q, ") AS (SELECT * FROM (%s)) SELECT ", op->scan.sql_base);
  for (int i = 0; i < op->scan.nscan; i++) {
    rt_buf_printf(&q, "%sc%d AS ", i ? ", " : "", op->scan.table_cols[i]);
    ir_sql_quote(&q, p->cols[op->scan.out_cols[i]].name);
  }
  rt_buf_printf(&q, " FROM __pipeline_source");
  /* Out of memory the statement fails: the unwrapped base would return
   * every column, not the nscan the scan now reads. */
  char *sql = q.failed || !q.data ? NULL : rt_arena_strndup(&p->arena, q.data, q.len);
  rt_buf_free(&q);
  if (!sql) ir_plan_oom(p);
  op->scan.sql = sql;
}

static void trim_scan(ir_plan *p, ir_op *op, bool *need) {
  int n = 0;
  for (int i = 0; i < op->scan.nscan; i++) {
    if (!need[op->scan.out_cols[i]]) continue;
    op->scan.table_cols[n] = op->scan.table_cols[i];
    op->scan.out_cols[n] = op->scan.out_cols[i];
    n++;
  }
  /* SQLite must still produce every row when nothing is read (COUNT(*)):
   * keep the first column. A table scan knows its row count without. */
  if (n == 0 && op->kind == IR_SCAN_SQL && op->scan.nscan > 0) n = 1;
  op->scan.nscan = n;
  for (int i = 0; i < n; i++) p->cols[op->scan.out_cols[i]].live = true;
  if (op->kind == IR_SCAN_SQL) wrap_sql(p, op);
}

/* Aggregates whose output is needed are live; they define their outputs
 * and read their arguments. Returns whether any is live. */
static bool live_aggs(ir_plan *p, int n, ir_agg *aggs, bool *need) {
  bool any = false;
  for (int k = 0; k < n; k++) {
    ir_agg *a = &aggs[k];
    a->live = need[a->out_col];
    need[a->out_col] = false;
    if (a->live) p->cols[a->out_col].live = any = true;
  }
  for (int k = 0; k < n; k++) {
    if (aggs[k].live && aggs[k].arg_col >= 0) need[aggs[k].arg_col] = true;
    if (aggs[k].live && aggs[k].arg2_col >= 0) need[aggs[k].arg2_col] = true;
  }
  return any;
}

/* WINDOW: see the banner. */
static void live_window(ir_plan *p, ir_op *op, bool *need) {
  bool any = false;
  for (int k = 0; k < op->win.ncalls; k++) {
    ir_wincall *c = &op->win.calls[k];
    c->live = need[c->out_col];
    need[c->out_col] = false;
    if (c->live) p->cols[c->out_col].live = any = true;
  }
  if (!any) {
    op->dead = true;
    return;
  }
  /* what the live calls read is needed before, and so carried */
  for (int k = 0; k < op->win.ncalls; k++) {
    const ir_wincall *c = &op->win.calls[k];
    if (!c->live) continue;
    int in[3] = {c->arg_col, c->n_col, c->dflt_col};
    for (int j = 0; j < 3; j++)
      if (in[j] >= 0) need[in[j]] = true;
    const ir_winspec *sp = &op->win.specs[c->spec];
    for (int j = 0; j < sp->npart; j++) need[sp->part[j]] = true;
    for (int j = 0; j < sp->norder; j++) need[sp->order[j].col] = true;
  }
  int n = 0;
  for (int k = 0; k < op->win.ncarry; k++)
    if (need[op->win.carry[k]]) op->win.carry[n++] = op->win.carry[k];
  op->win.ncarry = n;
  for (int k = 0; k < n; k++) p->cols[op->win.carry[k]].live = true;
}

/* An interval source: its own outputs are defined here; it reads every
 * relation's bounds and PER keys (and the sources of FLATTEN's live
 * aggregates and FILL GAPS' columns); the carried columns it serves stay
 * needed as they were. */
static void live_interval(ir_plan *p, ir_op *op, bool *need) {
  /* the bounds it defines (ISECT, FLATTEN, IV_EVENTS, IV_UNION, §9.2's), and
   * QUANTIZE's bucket and MERGE's merged interval */
  int defs[4] = {op->iv.ts_out, op->iv.dur_out, op->iv.gid_out, op->iv.bucket_out};
  for (int k = 0; k < 4 && op->kind != IR_FILLGAPS; k++)
    if (defs[k] >= 0) {
      need[defs[k]] = false;
      p->cols[defs[k]].live = true;
    }
  for (int k = 0; k < op->iv.nby; k++) need[op->iv.by[k]] = true;   /* MERGE CONSECUTIVE BY */
  if (op->iv.origin >= 0) need[op->iv.origin] = true;                /* QUANTIZE's origin */
  if (op->kind == IR_FLATTEN) live_aggs(p, op->iv.naggs, op->iv.aggs, need);
  if (op->kind == IR_IV_EVENTS && op->iv.close_col >= 0) need[op->iv.close_col] = true;
  for (int k = 0; op->kind == IR_IV_UNION && k < op->iv.nper; k++) {
    need[op->iv.per_out[k]] = false;
    p->cols[op->iv.per_out[k]].live = true;
  }
  if (op->kind == IR_IV_FIND && op->iv.within_col >= 0) need[op->iv.within_col] = true;
  if (op->kind == IR_FILLGAPS) {
    /* Every output column is produced (the buffer is rebuilt anyway). */
    for (int k = 0; k < op->iv.nscan; k++) {
      need[op->iv.out_cols[k]] = false;
      p->cols[op->iv.out_cols[k]].live = true;
    }
    for (int k = 0; k < op->iv.nscan; k++) {
      if (op->iv.from_in[k] >= 0) need[op->iv.from_in[k]] = true;
      if (op->iv.from_bg[k] >= 0) need[op->iv.from_bg[k]] = true;
    }
  }
  for (int j = 0; j < op->iv.nrel; j++) {
    need[op->iv.ts[j]] = need[op->iv.dur[j]] = true;
    if (op->iv.id && op->iv.id[j] >= 0) need[op->iv.id[j]] = true;   /* names a bad row */
    for (int k = 0; op->iv.per[j] && k < op->iv.nper; k++) need[op->iv.per[j][k]] = true;
  }
}

/* A §9.4 tree operator: its new parent_id (and MERGE SIBLINGS' id) are
 * always made (they are the forest); aggregates no one reads are
 * dropped; it reads the tree's ids, the node set's, the BY columns and
 * the live aggregates' arguments; the input columns it serves stay
 * needed as they were, for its buffer to carry. */
static void live_tshape(ir_plan *p, ir_op *op, bool *need) {
  struct ir_tshape *ts = &op->tshape;
  int made[2] = {ts->parent_out, ts->id_out};
  for (int k = 0; k < 2; k++)
    if (made[k] >= 0) {
      need[made[k]] = false;
      p->cols[made[k]].live = true;
    }
  live_aggs(p, ts->naggs, ts->aggs, need);
  int reads[5] = {ts->id_col, ts->parent_col, ts->set_col, ts->over_id, ts->over_parent};
  for (int k = 0; k < 5; k++)
    if (reads[k] >= 0) need[reads[k]] = true;
  for (int k = 0; k < ts->nby; k++) need[ts->by[k]] = true;
}

void ir_live(ir_plan *p) {
  /* Out of memory the statement fails: pruning is part of the answer (a
   * stage that is gone neither orders rows nor checks its tree), so the
   * unpruned plan is not an answer to run instead. */
  /* In the arena, so that wrap_sql's jump leaves nothing to free. */
  bool *need = rt_arena_alloc(&p->arena, (size_t)p->ncols + 1);
  if (!need) ir_plan_oom(p);
  for (int c = 0; c < p->ncols; c++) p->cols[c].live = false;
  for (int i = 0; i < p->nops; i++)
    if (p->ops[i]->kind == IR_TREE_ORDER) p->ops[i]->tree.used = false;
    else if (p->ops[i]->kind == IR_FORK) p->ops[i]->fork.used = false;
  for (int i = p->nops - 1; i >= 0; i--) {
    ir_op *op = p->ops[i];
    if (op->dead) continue;
    switch (op->kind) {
    case IR_OUTPUT:
      for (int k = 0; k < op->output.nout; k++) need[op->output.out[k]] = true;
      break;
    case IR_COMPUTE:
      if (!need[op->compute.out_col]) {
        op->dead = true;
        break;
      }
      need[op->compute.out_col] = false;
      p->cols[op->compute.out_col].live = true;
      need_expr(op->compute.expr, need);
      break;
    case IR_FILTER: need_expr(op->filter.pred, need); break;
    case IR_LIMIT: break;
    case IR_SORT: {
      int n = 0;
      for (int k = 0; k < op->sort.ncarry; k++) {
        bool key = false;
        for (int j = 0; j < op->sort.nkeys; j++) key |= op->sort.keys[j].col == op->sort.carry[k];
        if (need[op->sort.carry[k]] || key) op->sort.carry[n++] = op->sort.carry[k];
      }
      op->sort.ncarry = n;
      for (int k = 0; k < n; k++) {
        need[op->sort.carry[k]] = true;
        p->cols[op->sort.carry[k]].live = true;
      }
      break;
    }
    case IR_AGGREGATE:
      for (int k = 0; k < op->agg.ngroup; k++) {
        /* Keys define the groups even when no one reads them later; the
         * buffer holds them, so they stay live on both sides. */
        need[op->agg.group_out[k]] = false;
        p->cols[op->agg.group_out[k]].live = true;
      }
      live_aggs(p, op->agg.naggs, op->agg.aggs, need);
      for (int k = 0; k < op->agg.ngroup; k++) need[op->agg.group_cols[k]] = true;
      break;
    case IR_TREE_ACC:
      if (!live_aggs(p, op->tree.naggs, op->tree.aggs, need)) {
        op->dead = true;
        break;
      }
      need[op->tree.node_col] = need[op->tree.pnode_col] = true;
      op->tree.order->tree.used = true;
      break;
    case IR_TREE_ORDER: {
      if (!op->tree.used) {
        op->dead = true;
        break;
      }
      int n = 0;
      for (int k = 0; k < op->tree.ncarry; k++) {
        int c = op->tree.carry[k];
        if (need[c] || c == op->tree.node_col || c == op->tree.pnode_col) op->tree.carry[n++] = c;
      }
      op->tree.ncarry = n;
      for (int k = 0; k < n; k++) {
        need[op->tree.carry[k]] = true;
        p->cols[op->tree.carry[k]].live = true;
      }
      break;
    }
    case IR_TREE_NUMBER:
      if (!need[op->tree.node_col] && !need[op->tree.pnode_col]) {
        op->dead = true;
        break;
      }
      need[op->tree.node_col] = need[op->tree.pnode_col] = false;
      p->cols[op->tree.node_col].live = p->cols[op->tree.pnode_col].live = true;
      need[op->tree.id_col] = need[op->tree.parent_col] = true;
      break;
    case IR_WINDOW: live_window(p, op, need); break;
    case IR_SCAN_TABLE:
    case IR_SCAN_SQL: trim_scan(p, op, need); break;
    case IR_JOIN_PROBE:
      for (int k = 0; k < op->join.nkeys; k++)
        need[op->join.in_keys[k]] = need[op->join.src_keys[k]] = true;
      need_expr(op->join.residual, need);
      break;
    case IR_JOIN_BUILD:
    case IR_IV_BUFFER: {
      /* Only what the interval operator (or the join) and later ops read
       * is buffered: this is where an operand's unread columns are
       * pruned. */
      int *carry = op->kind == IR_JOIN_BUILD ? op->join.carry : op->ivbuf.carry;
      int *ncarry = op->kind == IR_JOIN_BUILD ? &op->join.ncarry : &op->ivbuf.ncarry;
      int n = 0;
      for (int k = 0; k < *ncarry; k++)
        if (need[carry[k]]) carry[n++] = carry[k];
      *ncarry = n;
      for (int k = 0; k < n; k++) p->cols[carry[k]].live = true;
      break;
    }
#define IR_CASE_IVSOURCE(name) case IR_##name:
#include "ir/op_cases.h"
      live_interval(p, op, need);
      break;
    case IR_SCAN_BUF: break; /* made by segment.c from the breaker's outputs */
    case IR_SCAN_FORK: {
      int n = 0;
      for (int k = 0; k < op->scan.nscan; k++) {
        if (!need[op->scan.out_cols[k]]) continue;
        op->scan.out_cols[n] = op->scan.out_cols[k];
        op->scan.table_cols[n] = op->scan.table_cols[k];
        n++;
      }
      op->scan.nscan = n;
      for (int k = 0; k < n; k++) {
        need[op->scan.out_cols[k]] = false;
        p->cols[op->scan.out_cols[k]].live = true;
        need[op->scan.table_cols[k]] = true;
      }
      op->scan.buf_op->fork.used = true;
      break;
    }
    case IR_FORK: {
      if (!op->fork.used) {
        op->dead = true;
        break;
      }
      int n = 0;
      for (int k = 0; k < op->fork.ncarry; k++)
        if (need[op->fork.carry[k]] || (k == op->fork.ncarry - 1 && n == 0))
          op->fork.carry[n++] = op->fork.carry[k];
      op->fork.ncarry = n;
      for (int k = 0; k < n; k++) {
        need[op->fork.carry[k]] = true;
        p->cols[op->fork.carry[k]].live = true;
      }
      break;
    }
    case IR_SETOP:
      /* every column of every relation makes its rows what they are */
      for (int k = 0; k < op->setop.ncols; k++) {
        need[op->setop.out[k]] = false;
        p->cols[op->setop.out[k]].live = true;
      }
      for (int j = 0; j < op->setop.nrel; j++)
        for (int k = 0; k < op->setop.ncols; k++) need[op->setop.cols[j][k]] = true;
      break;
    case IR_GRAPH:
      /* §9.5: parent_id and depth are made anyway; the keys are read;
       * NODES' carried columns stay needed as they were (a payload
       * nobody reads is not buffered) */
      need[op->graph.parent_out] = need[op->graph.depth_out] = false;
      p->cols[op->graph.parent_out].live = p->cols[op->graph.depth_out].live = true;
      need[op->graph.id_col] = need[op->graph.src_col] = need[op->graph.dst_col] = true;
      need[op->graph.seed_col] = true;
      break;
    case IR_TREE_SHAPE: live_tshape(p, op, need); break;
    case IR__COUNT: break;
    }
  }
}
