/*
 * driver.c — runs a plan's segments over batches with any backend.
 *
 * For each segment, in order: set up the sink (a rowbuf for SORT and
 * OUTPUT, an aggregation table for AGGREGATE) and the LIMIT counters, read
 * the source batch by batch (zero-copy table views, SQLite batches, or
 * views over a breaker's buffer, through its sort permutation), hand each
 * batch to the batch function the caller picks (interpreter or JIT; it may
 * change between batches), then finish the sink (sort permutation, emit
 * the groups into the buffer the next segment scans).
 *
 * WINDOW: buffered as a SORT is; when its input ends the results are
 * added to the buffer (driver_window.c), which the next segment reads in
 * input order.
 *
 * TREE ACCUMULATE: a segment's TREE_NUMBER and TREE_ACC steps get their
 * runtime state (run->treenums / treeaccs) when the segment opens; when
 * its input ends every TREE_NUMBER is finished (the missing-parent check)
 * before the sink, and a TREE_ORDER sink is finished like a SORT with the
 * permutation rt_tree_order gives (none when already in order). A tree
 * order in place (plan.h tree.in_place) buffers nothing: its segment only
 * checks the table's parent_id and the next one reads the table in order.
 * The segment that accumulates a finished order reads it in morsels of
 * whole subtrees, on the worker threads when it may (driver_treepar.c).
 *
 * The driver owns no per-row work: everything per row is in the backend.
 * Memory: small per-run structures come from run->arena; rowbufs, aggtabs
 * and permutations are malloc'd by the runtime and freed in ex_run_free
 * (a breaker's buffer as soon as the segment reading it is done).
 */
#include <stdio.h>
#include <stdlib.h>

#include "exec.h"
#include "runtime/aggmerge.h"
#include "runtime/par.h"
#include "runtime/sqlite/sqlsrc.h"

static int ex_fail(ex_run *run, int pos, const char *stage, const char *msg) {
  rt_errorf(&run->err, pos, "%s: %s", stage ? stage : "RUN", msg);
  return -1;
}

/* ---- interrupt and memory budget ------------------------------------------ */

/* The engine's interrupt flag, set from another thread or a signal
 * handler (pj_engine_interrupt): read atomically. */
static bool ex_interrupted(const ex_run *run) {
  return run->interrupt && __atomic_load_n(run->interrupt, __ATOMIC_RELAXED);
}

static int ex_fail_interrupted(ex_run *run) {
  memset(&run->err, 0, sizeof run->err);
  rt_errorf(&run->err, -1, "interrupted");
  return -1;
}

/* "19 MB", "1.5 MB", "12 KB", "100 bytes". */
static void ex_amount(char *buf, size_t n, int64_t bytes) {
  if (bytes >= (10 << 20)) snprintf(buf, n, "%lld MB", (long long)((bytes + (1 << 19)) >> 20));
  else if (bytes >= (1 << 20)) snprintf(buf, n, "%.1f MB", (double)bytes / (1 << 20));
  else if (bytes >= 1024) snprintf(buf, n, "%lld KB", (long long)((bytes + 512) >> 10));
  else snprintf(buf, n, "%lld bytes", (long long)bytes);
}

/* The budget error: named after the stage that holds the most memory
 * (counting the growth that was refused as its asker's), then what each
 * stage holding any holds, largest first, and what the refused growth
 * asked for:
 *   TREE ACCUMULATE: the query needs more than 20 MB of memory (limit set
 *   with --max-memory): TREE ACCUMULATE holds 19 MB, AGGREGATE holds
 *   12 KB; AGGREGATE asked for 1.0 MB more */
static void ex_budget_error(ex_run *run) {
  const rt_budget *b = &run->budget;
  const rt_budget_holder *h = b->at_refusal;
  int order[RT_BUDGET_HOLDERS], n = 0;
  for (int i = 0; i < b->nholders; i++)
    if (h[i].bytes > 0) order[n++] = i;
  for (int i = 1; i < n; i++)   /* largest first (few holders: insertion) */
    for (int j = i; j > 0 && h[order[j]].bytes > h[order[j - 1]].bytes; j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  int top = b->nholders ? b->refused_by : -1;
  int64_t topb = top >= 0 ? h[top].bytes + b->refused : 0;
  for (int i = 0; i < n; i++)
    if (h[order[i]].bytes > topb) top = order[i], topb = h[top].bytes;
  const char *stage = top >= 0 ? h[top].stage : "RUN";
  char amount[48];
  /* the limit as it was given: whole MB (or bytes below one) */
  if (b->limit >= ((int64_t)1 << 20)) snprintf(amount, sizeof amount, "%lld MB", (long long)(b->limit >> 20));
  else snprintf(amount, sizeof amount, "%lld bytes", (long long)b->limit);
  rt_buf m = {0};
  rt_buf_printf(&m, "%s: the query needs more than %s of memory (limit set with --max-memory)",
                stage, amount);
  for (int i = 0; i < n; i++) {
    ex_amount(amount, sizeof amount, h[order[i]].bytes);
    rt_buf_printf(&m, "%s%s holds %s", i ? ", " : ": ", h[order[i]].stage, amount);
  }
  if (b->refused > 0 && b->nholders) {
    ex_amount(amount, sizeof amount, b->refused);
    rt_buf_printf(&m, "; %s asked for %s more", h[b->refused_by].stage, amount);
  }
  memset(&run->err, 0, sizeof run->err);
  rt_errorf(&run->err, -1, "%s", m.data ? m.data : "RUN: the query needs more memory");
  rt_buf_free(&m);
}

/* After an error in segment s: a refused growth (runtime/budget.h) or an
 * interrupt is the real cause of whatever "out of memory" or SQLite
 * error the runtime reported, so it replaces that message. Returns -1. */
static int ex_budget_fail(ex_run *run, const ex_seg *s) {
  if (run->budget.exceeded) {
    ex_budget_error(run);
    return -1;
  }
  if (run->budget.oom) {   /* whatever else failed, memory did first */
    memset(&run->err, 0, sizeof run->err);
    return ex_fail(run, -1, s ? s->seg->sink->stage : "RUN", "out of memory");
  }
  if (ex_interrupted(run)) return ex_fail_interrupted(run);
  if (!run->err.set) ex_fail(run, -1, s ? s->seg->sink->stage : "RUN", "the batch failed");
  return -1;
}

static int ex_feed(ex_run *run, ex_seg *s, rt_batch *b, uint32_t n, ex_pick_fn pick, void *ctx,
                   void *down);

void ex_run_init(ex_run *run, const ir_plan *plan, rt_strpool *strings, void *db,
                 int nparams, const ex_value *params) {
  memset(run, 0, sizeof *run);
  run->plan = plan;
  run->strings = strings;
  run->db = db;
  run->nparams = nparams;
  run->params = params;
  rt_arena_init(&run->arena);
  run->feed = ex_feed;
}

/* ---- LIMIT counts ----------------------------------------------------------- */

/* A LIMIT count is a constant or a parameter (verify.c checks it). */
static int ex_const_value(ex_run *run, const ir_expr *e, ex_value *v) {
  memset(v, 0, sizeof *v);
  if (e->kind == IX_CONST) {
    if (e->is_null || e->type == RT_NULLT) v->type = RT_NULLT;
    else if (e->type == RT_F64) v->type = RT_F64, v->f = e->fval;
    else if (e->type == RT_STR) v->type = RT_STR, v->s = e->sval;
    else v->type = RT_I64, v->i = e->ival;
    return 0;
  }
  if (e->kind == IX_PARAM) {
    if (e->param >= 1 && e->param <= run->nparams && run->params) *v = run->params[e->param];
    else v->type = RT_NULLT;
    return 0;
  }
  return -1;
}

int ex_eval_count(ex_run *run, const ir_expr *e, const char *stage, int64_t *out) {
  *out = 0;
  if (!e) return 0;
  ex_value v;
  if (ex_const_value(run, e, &v) < 0)
    return ex_fail(run, e->pos, stage, "expected a count that is a constant or a parameter");
  int64_t n;
  if (v.type == RT_I64) {
    n = v.i;
  } else if (v.type == RT_F64 && v.f >= -9223372036854775808.0 && v.f < 9223372036854775808.0 &&
             v.f == (double)(int64_t)v.f) {
    n = (int64_t)v.f;
  } else if (v.type == RT_NULLT) {
    return ex_fail(run, e->pos, stage, "expected a count, but it is NULL");
  } else {
    return ex_fail(run, e->pos, stage, "expected a count that is a whole number");
  }
  if (n < 0) return ex_fail(run, e->pos, stage, "expected a count that is zero or more");
  *out = n;
  return 0;
}

/* ---- segment setup ------------------------------------------------------------ */

/* A DOWN tree order does not break the pipeline (see ex_down below). */
static bool ex_down_streams(const ir_segment *seg) {
  return seg->sink->kind == IR_TREE_ORDER && !seg->sink->tree.up && !ir_tree_in_place(seg->sink);
}

/* The rows of s's source when every one of them reaches the sink (no
 * live step drops or adds rows) and the source knows its count: a table,
 * or the buffer of a segment already run. -1 otherwise. */
static int64_t ex_all_rows(ex_run *run, const ex_seg *s) {
  const ir_op *src = s->seg->source;
  for (int k = 0; k < s->seg->nsteps; k++)
    if (!s->seg->steps[k]->dead && ir_op_has(s->seg->steps[k]->kind, OPF_ROWS)) return -1;
  if (src->kind == IR_SCAN_TABLE && src->scan.table) return src->scan.table->nrows;
  if (src->kind == IR_SCAN_BUF && !ir_tree_in_place(src->scan.buf_op)) {
    int idx = ex_op_index(run->plan, src->scan.buf_op);
    if (idx >= 0 && run->bufs[idx]) return run->bufs[idx]->nrows;
  }
  return -1;
}

/* ORDER BY's keys as buffer columns (-1: a key the buffer lacks). */
static void ex_sort_keys(const ex_seg *s, rt_sortkey *keys) {
  const ir_op *sink = s->seg->sink;
  for (int k = 0; k < sink->sort.nkeys; k++) {
    keys[k].desc = sink->sort.keys[k].desc;
    keys[k].nulls_first = sink->sort.keys[k].nulls_first;
    keys[k].col = -1;
    for (int j = 0; j < s->nbuf && keys[k].col < 0; j++)
      if (s->buf_cols[j] == sink->sort.keys[k].col) keys[k].col = j;
  }
}

/* The rows an ORDER BY must keep: its reader's LIMIT count plus offset
 * when the one segment reading its buffer starts with that LIMIT (no
 * live step before it: every row it passes is one it reads, so the rows
 * after the first count + offset in sort order are never seen, and no
 * step errs on them), and that is at most RT_TOPK_MAX; else -1, every
 * row. A count that is not valid is left for the reader to report. */
static int64_t ex_sort_topk(ex_run *run, const ex_seg *s) {
  const ir_op *sink = s->seg->sink;
  const ir_segment *rd = NULL;
  for (int i = 0; i < run->plan->nsegs; i++) {
    const ir_op *src = run->plan->segs[i].source;
    if (!src || src->kind != IR_SCAN_BUF || src->scan.buf_op != sink) continue;
    if (rd) return -1;
    rd = &run->plan->segs[i];
  }
  const ir_op *lim = NULL;
  for (int k = 0; rd && k < rd->nsteps && !lim; k++) {
    if (rd->steps[k]->dead) continue;
    if (rd->steps[k]->kind != IR_LIMIT) return -1;
    lim = rd->steps[k];
  }
  int64_t count, offset;
  if (!lim || ex_eval_count(run, lim->limit.count, lim->stage, &count) < 0 ||
      ex_eval_count(run, lim->limit.offset, lim->stage, &offset) < 0) {
    memset(&run->err, 0, sizeof run->err);
    return -1;
  }
  if (count > RT_TOPK_MAX || offset > RT_TOPK_MAX - count) return -1;
  return count + offset;
}

/* Sets up run->topks[s->index] when the ORDER BY can keep only its
 * first rows. */
static int ex_topk_open(ex_run *run, ex_seg *s) {
  const ir_op *sink = s->seg->sink;
  int64_t k = ex_sort_topk(run, s);
  if (k < 0) return 0;
  int nk = sink->sort.nkeys;
  rt_sortkey *keys = rt_arena_alloc(&run->arena, sizeof *keys * ((size_t)nk + 1));
  int *kcols = rt_arena_alloc(&run->arena, sizeof *kcols * ((size_t)nk + 1));
  ex_topk *t = rt_arena_alloc(&run->arena, sizeof *t);
  if (!keys || !kcols || !t) return ex_fail(run, sink->pos, sink->stage, "out of memory");
  ex_sort_keys(s, keys);
  for (int j = 0; j < nk; j++) {
    if (keys[j].col < 0) return 0;   /* the full sort reports it */
    kcols[j] = s->buf_cols[keys[j].col];
  }
  bool steps = false;
  for (int j = 0; j < s->seg->nsteps; j++) steps |= !s->seg->steps[j]->dead;
  t->kcols = steps ? NULL : kcols;
  if (!rt_topk_init(&t->t, k, nk, keys, s->buf->types, run->strings))
    return ex_fail(run, sink->pos, sink->stage, "out of memory");
  run->topks[s->index] = t;
  return 0;
}

static bool ex_read_later(const ex_run *run, const ex_seg *s, const ir_op *buf);

/* When this segment only copies an AGGREGATE's buffer into the result (no
 * step, the buffer's columns in its order and types, nothing later reads
 * it), the buffer becomes the result and is left empty, so the scan has
 * nothing to copy: at many groups that copy was a second pass over as
 * much fresh memory as the groups (agg_3keys 10M: ~15% of a one-thread
 * run). false: copy as usual. */
static bool ex_output_take_agg(ex_run *run, ex_seg *s) {
  const ir_op *src = s->seg->source, *sink = s->seg->sink;
  if (run->result_kept || !src || src->kind != IR_SCAN_BUF || !src->scan.buf_op ||
      src->scan.buf_op->kind != IR_AGGREGATE)
    return false;
  for (int j = 0; j < s->seg->nsteps; j++)
    if (!s->seg->steps[j]->dead) return false;
  int idx = ex_op_index(run->plan, src->scan.buf_op);
  rt_rowbuf *buf = idx >= 0 ? run->bufs[idx] : NULL;
  int nout = sink->output.nout;
  if (!buf || run->perms[idx] || buf->ncols != nout || ir_buf_layout_max(src->scan.buf_op) != nout ||
      ex_read_later(run, s, src->scan.buf_op))
    return false;
  int layout[nout > 0 ? nout : 1];
  ir_buf_layout(src->scan.buf_op, layout);
  for (int j = 0; j < nout; j++)
    if (sink->output.out[j] != layout[j] || rt_store_type(run->plan->cols[layout[j]].type) != buf->types[j])
      return false;
  rt_rowbuf empty;
  if (!rt_rowbuf_init(&empty, nout, buf->types)) return false;
  rt_rowbuf_free(&run->result);
  run->result = *buf;
  *buf = empty;
  return true;
}

static int ex_sink_open(ex_run *run, ex_seg *s) {
  const ir_plan *p = run->plan;
  const ir_op *sink = s->seg->sink;
  switch (sink->kind) {
  case IR_OUTPUT: {
    rt_type types[sink->output.nout > 0 ? sink->output.nout : 1];
    for (int j = 0; j < sink->output.nout; j++) types[j] = p->cols[sink->output.out[j]].type;
    /* A caller's emptied buffer of an earlier run (ex_run.result_kept)
     * is filled again rather than made anew. */
    if (!(run->result_kept && rt_rowbuf_refill(&run->result, sink->output.nout, types)) &&
        !rt_rowbuf_init(&run->result, sink->output.nout, types))
      return ex_fail(run, sink->pos, sink->stage, "out of memory");
    s->buf = &run->result;
    s->nbuf = sink->output.nout;
    s->buf_cols = sink->output.out;
    if (ex_output_take_agg(run, s)) return 0;
    /* sized once when the row count is known (an AGGREGATE's groups, say)
     * instead of grown, copying, a doubling at a time */
    int64_t n = ex_all_rows(run, s);
    if (n > 0) rt_rowbuf_reserve(s->buf, n);
    return 0;
  }
  case IR_SORT:
  case IR_WINDOW:
  case IR_FORK:        /* read by the SCAN_BUF after it and every SCAN_FORK */
  case IR_IV_BUFFER:   /* an interval relation (driver_interval.c reads it) */
  case IR_JOIN_BUILD:  /* a JOIN's relation, indexed when it is done */
  case IR_TREE_ORDER: {
    int idx = ex_op_index(p, sink);
    if (idx < 0) return ex_fail(run, sink->pos, sink->stage, "the sort is not in the plan");
    s->buf_cols = rt_arena_alloc(&run->arena, sizeof(int) * ((size_t)ir_buf_layout_max(sink) + 1));
    if (!s->buf_cols) return ex_fail(run, sink->pos, sink->stage, "out of memory");
    /* what the backends append (a WINDOW's results come when the input
     * ends: ex_window_finish) */
    s->nbuf = ir_buf_layout(sink, s->buf_cols);
    if (sink->kind == IR_WINDOW) s->nbuf = sink->win.ncarry;
    rt_type types[s->nbuf > 0 ? s->nbuf : 1];
    for (int j = 0; j < s->nbuf; j++) types[j] = p->cols[s->buf_cols[j]].type;
    s->buf = rt_arena_alloc(&run->arena, sizeof *s->buf);
    if (!s->buf) return ex_fail(run, sink->pos, sink->stage, "out of memory");
    if (!rt_rowbuf_init(s->buf, s->nbuf, types))
      return ex_fail(run, sink->pos, sink->stage, "out of memory");
    run->bufs[idx] = s->buf;
    if (sink->kind == IR_SORT && ex_topk_open(run, s) < 0) return -1;
    /* Every row of the source reaches the sink when no step drops rows:
     * size the buffer once instead of growing (and copying) it. A
     * streaming DOWN order's buffer only stages one batch, a top k's
     * about 2k rows. */
    int64_t n = ex_all_rows(run, s);
    if (n > 0 && !ex_down_streams(s->seg) && !run->topks[s->index]) rt_rowbuf_reserve(s->buf, n);
    return 0;
  }
  case IR_AGGREGATE: {
    int nk = sink->agg.ngroup, na = 0;
    rt_type ktypes[nk > 0 ? nk : 1];
    rt_aggkind kinds[sink->agg.naggs > 0 ? sink->agg.naggs : 1];
    rt_type in[sink->agg.naggs > 0 ? sink->agg.naggs : 1];
    for (int k = 0; k < nk; k++) ktypes[k] = p->cols[sink->agg.group_cols[k]].type;
    for (int k = 0; k < sink->agg.naggs; k++) {
      if (!sink->agg.aggs[k].live) continue;
      kinds[na] = sink->agg.aggs[k].kind;
      in[na] = sink->agg.aggs[k].kind == RT_AGG_COUNT_STAR ? RT_I64 : sink->agg.aggs[k].arg_type;
      na++;
    }
    s->agg = rt_arena_alloc(&run->arena, sizeof *s->agg);
    if (!s->agg) return ex_fail(run, sink->pos, sink->stage, "out of memory");
    rt_aggtab_init(s->agg, nk, ktypes, na, kinds, in);
    s->agg->strings = run->strings;
    for (int k = 0, j = 0; k < sink->agg.naggs; k++) {
      const ir_agg *ag = &sink->agg.aggs[k];
      if (ag->live) rt_aggtab_set_arg2(s->agg, j++, ag->arg2_col >= 0 ? ag->arg2_type : RT_NULLT, ag->param);
    }
    /* No GROUP BY: exactly one row, even for empty input. */
    if (nk == 0) rt_aggtab_ensure_one(s->agg);
    if (!s->agg->aggs || !s->agg->slots || !s->agg->keys.data || (nk == 0 && s->agg->ngroups != 1))
      return ex_fail(run, sink->pos, sink->stage, "out of memory");
    return 0;
  }
#define IR_CASE_SOURCE(name) case IR_##name:
#define IR_CASE_STEP(name) case IR_##name:
#include "ir/op_cases.h"
  case IR__COUNT:
    break;
  }
  return ex_fail(run, sink->pos, sink->stage, "a segment ends in an op that is not a sink");
}

static int ex_limits_open(ex_run *run, ex_seg *s) {
  const ir_segment *seg = s->seg;
  for (int k = 0; k < seg->nsteps; k++)
    if (!seg->steps[k]->dead && seg->steps[k]->kind == IR_LIMIT) s->nlimits++;
  s->limit_skip = rt_arena_alloc(&run->arena, sizeof(int64_t) * ((size_t)s->nlimits + 1));
  s->limit_left = rt_arena_alloc(&run->arena, sizeof(int64_t) * ((size_t)s->nlimits + 1));
  if (!s->limit_skip || !s->limit_left) return ex_fail(run, -1, seg->sink->stage, "out of memory");
  int j = 0;
  for (int k = 0; k < seg->nsteps; k++) {
    const ir_op *op = seg->steps[k];
    if (op->dead || op->kind != IR_LIMIT) continue;
    if (ex_eval_count(run, op->limit.count, op->stage, &s->limit_left[j]) < 0 ||
        ex_eval_count(run, op->limit.offset, op->stage, &s->limit_skip[j]) < 0)
      return -1;
    /* LIMIT 0: nothing can pass, so there is nothing to read. */
    if (s->limit_left[j] == 0) s->done = 1;
    j++;
  }
  return 0;
}

/* ---- TREE ACCUMULATE state ------------------------------------------------------ */

/* Sets up the runtime state of the segment's TREE_NUMBER and TREE_ACC
 * steps. A TREE_ACC's numbering always finished in an earlier segment
 * (its ordering is a breaker between them), so nnodes is final. */
static int ex_trees_open(ex_run *run, ex_seg *s) {
  const ir_plan *p = run->plan;
  const ir_segment *seg = s->seg;
  for (int k = 0; k < seg->nsteps; k++) {
    const ir_op *op = seg->steps[k];
    if (op->dead || (op->kind != IR_TREE_NUMBER && op->kind != IR_TREE_ACC)) continue;
    int idx = ex_op_index(p, op);
    if (idx < 0) return ex_fail(run, op->pos, op->stage, "the tree step is not in the plan");
    if (op->kind == IR_TREE_NUMBER) {
      rt_treenum *t = calloc(1, sizeof *t);
      if (!t) return ex_fail(run, op->pos, op->stage, "out of memory");
      run->treenums[idx] = t;
      bool tab = op->tree.tier == RT_TREE_TIER_TABLE && seg->source->kind == IR_SCAN_TABLE &&
                 seg->source->scan.table;
      uint64_t rows = tab ? (uint64_t)seg->source->scan.table->nrows : 0;
      if (!rt_treenum_init(t, tab ? RT_TREE_TIER_TABLE : RT_TREE_TIER_DENSE, rows,
                           p->cols[op->tree.id_col].type == RT_STR, &run->err, op->stage,
                           op->pos, run->strings))
        return ex_fail(run, op->pos, op->stage, "out of memory");
      /* Rows expected, when known (every row of a table or a buffer
       * reaches the numbering: no FILTER or LIMIT before it): sizes the
       * hash map once if the run moves to the HASH tier. */
      bool every = true;
      for (int j = 0; j < k; j++) every &= seg->steps[j]->dead || !ir_op_has(seg->steps[j]->kind, OPF_ROWS);
      if (every && seg->source->kind == IR_SCAN_TABLE && seg->source->scan.table)
        t->size_hint = (uint64_t)seg->source->scan.table->nrows;
      else if (every && seg->source->kind == IR_SCAN_BUF) {
        int bidx = ex_op_index(p, seg->source->scan.buf_op);
        if (bidx >= 0 && run->bufs[bidx]) t->size_hint = (uint64_t)run->bufs[bidx]->nrows;
      }
      continue;
    }
    int nidx = ex_op_index(p, op->tree.num);
    const rt_treenum *num = nidx >= 0 ? run->treenums[nidx] : NULL;
    if (!num) return ex_fail(run, op->pos, op->stage, "the tree numbering did not run");
    rt_aggkind kinds[op->tree.naggs > 0 ? op->tree.naggs : 1];
    rt_type in[op->tree.naggs > 0 ? op->tree.naggs : 1];
    int na = 0;
    for (int j = 0; j < op->tree.naggs; j++) {
      if (!op->tree.aggs[j].live) continue;
      kinds[na] = op->tree.aggs[j].kind;
      in[na] = rt_store_type(op->tree.aggs[j].arg_type);
      na++;
    }
    rt_treeacc *a = calloc(1, sizeof *a);
    if (!a) return ex_fail(run, op->pos, op->stage, "out of memory");
    run->treeaccs[idx] = a;
    if (!rt_treeacc_init(a, op->tree.up, num->nnodes, na, kinds, in))
      return ex_fail(run, op->pos, op->stage, "out of memory");
  }
  return 0;
}

/* End of a segment's input: the numbering checks that every parent named
 * arrived as a row. */
static int ex_trees_finish(ex_run *run, ex_seg *s) {
  const ir_segment *seg = s->seg;
  for (int k = 0; k < seg->nsteps; k++) {
    const ir_op *op = seg->steps[k];
    if (op->dead || op->kind != IR_TREE_NUMBER) continue;
    rt_treenum *t = run->treenums[ex_op_index(run->plan, op)];
    if (!t || rt_treenum_finish(t) < 0) return -1;
  }
  return 0;
}

/* The ordering of a TREE_ORDER sink's buffer: the node columns are int64
 * in the buffer (rowbufs widen), RT_TREE_NONE for roots. */
static int ex_tree_order_finish(ex_run *run, ex_seg *s, int idx) {
  const ir_op *sink = s->seg->sink;
  int cn = -1, cp = -1;
  for (int j = 0; j < s->nbuf; j++) {
    if (s->buf_cols[j] == sink->tree.node_col) cn = j;
    if (s->buf_cols[j] == sink->tree.pnode_col) cp = j;
  }
  int nidx = ex_op_index(run->plan, sink->tree.num);
  const rt_treenum *num = nidx >= 0 ? run->treenums[nidx] : NULL;
  if (cn < 0 || cp < 0 || !num)
    return ex_fail(run, sink->pos, sink->stage, "the tree order lacks its node numbers");
  if (!s->buf->data) return ex_fail(run, sink->pos, sink->stage, "out of memory");
  int path = RT_TREE_ORDER_KEPT;
  run->perms[idx] = rt_tree_order(s->buf->data[cn], s->buf->data[cp], s->buf->nrows, num->nnodes,
                                  sink->tree.up, &path, &run->err, sink->stage, sink->pos);
  run->tree_paths[idx] = path;
  return path < 0 ? -1 : 0;
}

/* ---- batches ------------------------------------------------------------------- */

/* ---- streaming DOWN order ------------------------------------------------------ */

/* A segment whose sink is a DOWN TREE_ORDER does not buffer its input:
 * the sink's rowbuf only stages one batch (the backends append to it as
 * to any buffer), rt_treedown sorts the staged rows, and the output goes
 * straight into the next segment's batch function — the passing rows as
 * the staged batch with an active list (or none when all pass), then the
 * released rows as batches over the side buffer. The next segment (which
 * scans this order's buffer) is opened before and finished after, by
 * ex_seg_run. Output order: the passing rows of each input batch in input
 * order, then the rows that batch released, breadth-first from the rows
 * that released them. */
typedef struct ex_down {
  rt_treedown d;
  ex_seg *next;
  rt_batch nb;         /* the next segment's batch (own column array) */
  int nc;              /* scanned columns of the next segment */
  int *bc, *ids;       /* their buffer column and plan column id */
  int cn, cp;          /* buffer columns of node and parent node */
  const rt_treenum *num;
  rt_treeacc **accs;   /* the next segment's TREE_ACC states */
  int naccs;
} ex_down;

/* Folds AGGREGATE's partial sums into their totals (at the end of a
 * morsel; last: at the end of the input, totals back into the table). */
static int ex_agg_fold(ex_run *run, ex_seg *s, bool last) {
  const ir_op *sink = s->seg->sink;
  rt_aggfold **f = &run->folds[s->index];
  if (!*f && !(*f = rt_arena_alloc(&run->arena, sizeof **f)))
    return ex_fail(run, -1, sink->stage, "out of memory");
  int rc = last ? rt_aggfold_finish(*f, s->agg) : rt_aggfold_step(*f, s->agg);
  if (last) {
    rt_aggfold_free(*f);
    *f = NULL;
  }
  if (rc == RT_AGGMERGE_OVERFLOW) return ex_fail(run, sink->pos, sink->stage, "integer overflow");
  if (rc) return ex_fail(run, -1, sink->stage, "out of memory");
  return 0;
}

/* The end of a morsel of an AGGREGATE segment on one thread: its sums so
 * far become a partial (runtime/aggmerge.h), as a parallel scan's morsel
 * tables make them. Folding every group's sums at once costs the group
 * count per morsel, sequentially; folding each group at its first row of
 * a later morsel (rt_aggfold_next) costs a call per group and morsel, at
 * random. So at once while the groups' sums are fewer than 16 morsels'
 * rows, lazily from then on (and always at once without GROUP BY). */
static int ex_agg_morsel_end(ex_run *run, ex_seg *s) {
  int64_t fold_max = 16 * ex_morsel_batches(run) * ex_batch_rows(run);   /* 16 morsels' rows */
  rt_aggtab *t = s->agg;
  if (!rt_aggfold_needed(t)) return 0;
  int nsums = 0;
  for (int a = 0; a < t->naggs; a++) nsums += t->aggs[a].kind == RT_AGG_SUM || t->aggs[a].kind == RT_AGG_AVG;
  if (t->nkeys == 0 || (!t->epoch && t->ngroups * nsums <= fold_max)) return ex_agg_fold(run, s, false);
  const ir_op *sink = s->seg->sink;
  rt_aggfold **f = &run->folds[s->index];
  if (!*f && !(*f = rt_arena_alloc(&run->arena, sizeof **f)))
    return ex_fail(run, -1, sink->stage, "out of memory");
  int rc = rt_aggfold_next(*f, t);
  if (rc == RT_AGGMERGE_OVERFLOW) return ex_fail(run, sink->pos, sink->stage, "integer overflow");
  if (rc) return ex_fail(run, -1, sink->stage, "out of memory");
  return 0;
}

/* Runs one batch through the picked backend. The batch's active list is
 * kept when keep_active (a streamed batch), else every position is
 * active. */
static int ex_run_fn(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx) {
  ex_batch_fn fn = pick(ctx, s->index);
  if (!fn) return ex_fail(run, -1, s->seg->sink->stage, "no backend runs this segment");
  if (fn(s, b) < 0 || run->err.set) {
    if (!run->err.set) rt_errorf(&run->err, -1, "%s: the batch failed", s->seg->sink->stage);
    return -1;
  }
  if (s->agg && run->own_morsels != s && ++run->seg_batches[s->index] % ex_morsel_batches(run) == 0)
    return ex_agg_morsel_end(run, s);
  return 0;
}

/* Feeds the next segment n positions of views over `buf` (rows start..,
 * or through perm), restricted to `active` when given. */
static int ex_down_feed(ex_run *run, ex_down *dn, const rt_rowbuf *buf, int64_t start,
                        const uint32_t *perm, uint32_t n, uint32_t *active, uint32_t nactive,
                        ex_pick_fn pick, void *ctx) {
  if (nactive == 0 || dn->next->done) return 0;
  /* The accumulation's per-node arrays cover every node numbered so far. */
  const rt_treenum *t = dn->num;
  uint64_t need = t->tier == RT_TREE_TIER_TABLE ? t->limit : t->nnodes > t->nrows ? t->nnodes : t->nrows;
  for (int k = 0; k < dn->naccs; k++)
    if (!rt_treeacc_reserve(dn->accs[k], (uint32_t)need))
      return ex_fail(run, dn->next->seg->sink->pos, dn->next->seg->sink->stage, "out of memory");
  for (int i = 0; i < dn->nc; i++) rt_rowbuf_view(buf, dn->bc[i], start, perm, &dn->nb.cols[dn->ids[i]]);
  dn->nb.n = n;
  dn->nb.active = active;
  dn->nb.nactive = nactive;
  return ex_run_fn(run, dn->next, &dn->nb, pick, ctx);
}

/* After a batch of the producing segment: order the staged rows and push
 * them on, then empty the stage. */
static int ex_down_push(ex_run *run, ex_seg *s, ex_down *dn, ex_pick_fn pick, void *ctx) {
  rt_rowbuf *st = s->buf;
  uint32_t m = (uint32_t)st->nrows;
  if (m == 0) return 0;
  rt_view cols[s->nbuf > 0 ? s->nbuf : 1];
  for (int j = 0; j < s->nbuf; j++) rt_rowbuf_view(st, j, 0, NULL, &cols[j]);
  const ir_op *sink = s->seg->sink;
  if (rt_treedown_batch(&dn->d, &cols[dn->cn], &cols[dn->cp], cols, NULL, m) < 0)
    return ex_fail(run, sink->pos, sink->stage, "out of memory");
  int rc = ex_down_feed(run, dn, st, 0, NULL, m, dn->d.npass == m ? NULL : dn->d.pass,
                        dn->d.npass, pick, ctx);
  for (int64_t at = 0; rc == 0 && at < dn->d.nrel; at += RT_BATCH) {
    int64_t left = dn->d.nrel - at;
    uint32_t n = left < RT_BATCH ? (uint32_t)left : RT_BATCH;
    rc = ex_down_feed(run, dn, &dn->d.side, at, dn->d.rel, n, NULL, n, pick, ctx);
  }
  /* Empty the stage: appends only set validity bits, so clear them. */
  for (int j = 0; j < st->ncols; j++)
    if (st->valid[j]) memset(st->valid[j], 0, RT_BITWORDS(m) * 8);
  st->nrows = 0;
  return rc;
}

/* Runs one batch of n rows through the picked backend (and, for a
 * streaming DOWN order, what it staged on into the next segment). */
static int ex_batch(ex_run *run, ex_seg *s, rt_batch *b, uint32_t n, ex_pick_fn pick, void *ctx,
                    ex_down *dn) {
  if (ex_interrupted(run)) return ex_fail_interrupted(run);
  if (n == 0) return 0;
  b->n = n;
  b->nactive = n;
  b->active = NULL;
  ex_topk *tk = run->topks[s->index];
  int64_t before = tk ? s->buf->nrows : 0;
  /* a top k with a bound: only the rows before it go in */
  if (tk && ex_topk_batch(tk, &tk->t, b) == 0) return 0;
  /* A growth refused by the memory budget leaves a buffer short (rows
   * dropped): stop here, whatever the backend made of it. */
  if (ex_run_fn(run, s, b, pick, ctx) < 0 || run->budget.exceeded || run->budget.oom)
    return ex_budget_fail(run, s);
  if (tk && rt_topk_add(&tk->t, s->buf, before) < 0) {
    ex_fail(run, s->seg->sink->pos, s->seg->sink->stage, "out of memory");
    return ex_budget_fail(run, s);
  }
  if (dn && ex_down_push(run, s, dn, pick, ctx) < 0) return ex_budget_fail(run, s);
  return run->budget.exceeded || run->budget.oom ? ex_budget_fail(run, s) : 0;
}

/* ex_batch for the interval sources (driver_interval.c); down is the
 * ex_down the segment streams into, or NULL. */
static int ex_feed(ex_run *run, ex_seg *s, rt_batch *b, uint32_t n, ex_pick_fn pick, void *ctx,
                   void *down) {
  /* the interval source holds its own work; what the batch grows is the
   * sink's */
  const char *prev = rt_budget_owner(s->seg->sink->stage);
  int rc = ex_batch(run, s, b, n, pick, ctx, down);
  rt_budget_owner(prev);
  return rc;
}

static int ex_scan_table(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx,
                        ex_down *dn) {
  const ir_op *src = s->seg->source;
  const rt_table *t = src->scan.table;
  if (!t) return ex_fail(run, src->pos, src->stage, "the table is gone");
  int64_t rows = ex_batch_rows(run);
  for (int64_t start = 0; start < t->nrows && !s->done; start += rows) {
    int64_t left = t->nrows - start;
    uint32_t n = left < rows ? (uint32_t)left : (uint32_t)rows;
    for (int i = 0; i < src->scan.nscan; i++)
      rt_table_view(t, src->scan.table_cols[i], start, &b->cols[src->scan.out_cols[i]]);
    run->rows_in += n;
    if (ex_batch(run, s, b, n, pick, ctx, dn) < 0) return -1;
  }
  return 0;
}

static int ex_scan_sql(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx,
                        ex_down *dn) {
  const ir_op *src = s->seg->source;
  const ir_plan *p = run->plan;
  /* SQLite's errors belong to the SQL stage that wrote the query, else to FROM */
  const char *stage = src->scan.sql_stage ? src->stage : "FROM";
  int nc = src->scan.nscan;
  rt_type *types = rt_arena_alloc(&run->arena, sizeof(rt_type) * ((size_t)nc + 1));
  const char **names = rt_arena_alloc(&run->arena, sizeof(char *) * ((size_t)nc + 1));
  rt_view *views = rt_arena_alloc(&run->arena, sizeof(rt_view) * ((size_t)nc + 1));
  if (!types || !names || !views) return ex_fail(run, src->pos, src->stage, "out of memory");
  for (int i = 0; i < nc; i++) {
    types[i] = rt_store_type(p->cols[src->scan.out_cols[i]].type);
    names[i] = p->cols[src->scan.out_cols[i]].name;
  }
  rt_sqlsrc *q = NULL;
  if (src->scan.primed) {
    /* The binder read the first rows to type the columns: go on from
     * there rather than run the query again. The plan gives it up. */
    q = src->scan.primed;
    ((ir_op *)src)->scan.primed = NULL;
    if (!rt_sqlsrc_adopt(q, nc, src->scan.table_cols, types, names, stage, &run->err)) {
      rt_sqlsrc_close(q);
      return -1;
    }
  } else {
    q = rt_sqlsrc_open(run->db, src->scan.sql, nc, types, names, run->strings, stage, &run->err);
  }
  if (!q && strstr(run->err.msg, "__pipeline_source has")) {
    /* The source has another column count than when bound, while the
     * schema is the same (query.c rebinds after a schema change): a
     * virtual table whose columns follow what it last ran, the
     * extension's pipeline() nested in this pipeline's SQL source, which
     * another pipeline() of the statement switched meanwhile. Reading
     * the source once makes it take this text's columns again. */
    rt_sqlcols sc;
    rt_err derr = {.offset = -1};
    if (rt_sql_describe(run->db, src->scan.sql_base, &run->arena, &sc, &derr) &&
        sc.ncols == src->scan.nsrc) {
      memset(&run->err, 0, sizeof run->err);
      q = rt_sqlsrc_open(run->db, src->scan.sql, nc, types, names, run->strings, stage, &run->err);
    }
  }
  if (!q) {
    if (!run->err.set) ex_fail(run, src->pos, stage, "cannot read the source");
    return -1;
  }
  int rc = 0;
  while (!s->done) {
    uint32_t n = 0;
    int got = rt_sqlsrc_next(q, views, &n, &run->err);
    if (got < 0) {
      rc = -1;
      break;
    }
    if (got == 0) break;
    for (int i = 0; i < nc; i++) b->cols[src->scan.out_cols[i]] = views[i];
    run->rows_in += n;
    if (ex_batch(run, s, b, n, pick, ctx, dn) < 0) {
      rc = -1;
      break;
    }
  }
  rt_sqlsrc_close(q);
  return rc;
}

/* ---- TREE_ORDER in place (ir/plan.h tree.in_place) ---------------------------------- */

/* The ordering segment of an in-place tree order: no backend runs. One
 * pass over the table's parent_id checks the order and writes the parent
 * node of each row (rt_tree_table_order); the numbering is then complete
 * (node = row index), so it is finished here. */
static int ex_tree_table_run(ex_run *run, ex_seg *s) {
  const ir_plan *p = run->plan;
  const ir_op *sink = s->seg->sink, *src = s->seg->source, *nop = sink->tree.num;
  const rt_table *t = src->scan.table;
  int idx = ex_op_index(p, sink), nidx = nop ? ex_op_index(p, nop) : -1;
  if (!t || idx < 0 || nidx < 0) return ex_fail(run, sink->pos, sink->stage, "the tree order lacks its table");
  if (run->interrupt && *run->interrupt) {
    rt_errorf(&run->err, -1, "interrupted");
    return -1;
  }
  if (ex_trees_open(run, s) < 0) return -1;
  rt_treenum *num = run->treenums[nidx];
  int pc = -1;
  for (int i = 0; i < src->scan.nscan; i++)
    if (src->scan.out_cols[i] == nop->tree.parent_col) pc = src->scan.table_cols[i];
  if (pc < 0 || !num || num->tier != RT_TREE_TIER_TABLE)
    return ex_fail(run, sink->pos, sink->stage, "the tree order lacks its node numbers");
  rt_view pv;
  rt_table_view(t, pc, 0, &pv);
  run->rows_in += t->nrows;
  rt_par par = {ex_par_runner, run->pool, run->threads}, *pp = ex_par_ok(run) ? &par : NULL;
  int path = rt_tree_table_order_par(num, &pv, t->nrows, sink->tree.up, &run->perms[idx], pp);
  if (path < 0) return -1;
  run->tree_paths[idx] = path;
  return rt_treenum_finish(num) < 0 ? -1 : 1;
}

/* A finished tree order's rows (ex_treescan). When the segment
 * accumulates them, in morsels of whole subtrees (driver_treepar.c): on
 * the run's threads when the segment may run there, else here, each
 * morsel's AGGREGATE sums ended where the morsel ends (run->own_morsels;
 * the last one's at the end of the input, as always), which is what the
 * parallel run's morsel tables hold. Otherwise in batches of RT_BATCH positions. */
static int ex_scan_tree(ex_run *run, ex_seg *s, const ex_treescan *src, rt_batch *b, ex_pick_fn pick,
                        void *ctx, ex_down *dn) {
  uint32_t *ramps = rt_arena_alloc(&run->arena, sizeof(uint32_t) * 2 * EX_RAMP);
  if (!ramps) return ex_fail(run, -1, s->seg->sink->stage, "out of memory");
  ex_treescan_ramps(ramps);
  ex_treescan tsr = *src, *ts = &tsr;
  tsr.ramps = ramps;
  int64_t *bounds = NULL;
  int64_t count = dn ? 0 : ex_tree_morsels(run, s, ts, &bounds);
  if (count < 0) return -1;
  int par = count > 0 ? ex_tree_par(run, s, ts, bounds, count, pick, ctx) : 0;
  int rc = par < 0 ? -1 : 0;
  if (!par && count > 0 && rc == 0) {
    run->own_morsels = s;
    ex_par_src ps = {.batch_rows = RT_BATCH, .bounds = bounds};   /* the batches of driver_par.c */
    for (int64_t m = 0; m < count && rc == 0 && !s->done; m++) {
      for (int64_t at = bounds[m], n = 0; at < bounds[m + 1] && rc == 0 && !s->done; at += n) {
        n = ex_par_batch_len(&ps, at, bounds[m + 1]);
        ex_treescan_batch(ts, at, (uint32_t)n, b);
        rc = ex_batch(run, s, b, (uint32_t)n, pick, ctx, dn);
      }
      if (rc == 0 && s->agg && m + 1 < count) rc = ex_agg_morsel_end(run, s);
    }
    run->own_morsels = NULL;
  } else if (!par && rc == 0) {
    for (int64_t at = 0; at < ts->n && rc == 0 && !s->done; at += RT_BATCH) {
      uint32_t n = ts->n - at < RT_BATCH ? (uint32_t)(ts->n - at) : RT_BATCH;
      ex_treescan_batch(ts, at, n, b);
      rc = ex_batch(run, s, b, n, pick, ctx, dn);
    }
  }
  free(bounds);
  return rc;
}

/* The segment after an in-place tree order reads the table in that order:
 * forwards (KEPT), backwards (REVERSED: row n-1-k at position k), or
 * through the walk's permutation of row indices. The node column is the
 * id column (RT_ID: row index), the parent-node column the array the
 * check wrote. */
static int ex_scan_tree_table(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx,
                              ex_down *dn) {
  const ir_plan *p = run->plan;
  const ir_op *src = s->seg->source, *ord = src->scan.buf_op;
  const rt_table *t = src->scan.table;
  int idx = ex_op_index(p, ord), nidx = ex_op_index(p, ord->tree.num);
  const rt_treenum *num = nidx >= 0 ? run->treenums[nidx] : NULL;
  if (!t || idx < 0 || !num || !src->scan.table_cols || (t->nrows > 0 && !num->table_pnode))
    return ex_fail(run, src->pos, src->stage, "the buffer to read was not written");
  int path = run->tree_paths[idx];
  ex_treescan ts = {.src = src, .t = t, .pnode = num->table_pnode, .bmin = num->table_bmin,
                    .bmax = num->table_bmax, .perm = run->perms[idx],
                    .reversed = path == RT_TREE_ORDER_REVERSED, .path = path, .n = t->nrows};
  return ex_scan_tree(run, s, &ts, b, pick, ctx, dn);
}

static int ex_scan_buf(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx,
                        ex_down *dn) {
  const ir_op *src = s->seg->source;
  const ir_plan *p = run->plan;
  if (ir_tree_in_place(src->scan.buf_op))
    return ex_scan_tree_table(run, s, b, pick, ctx, dn);
  int idx = ex_op_index(p, src->scan.buf_op);
  if (idx < 0 || !run->bufs[idx])
    return ex_fail(run, src->pos, src->stage, "the buffer to read was not written");
  const rt_rowbuf *buf = run->bufs[idx];
  const uint32_t *perm = run->perms[idx];
  int *layout =
      rt_arena_alloc(&run->arena, sizeof(int) * ((size_t)ir_buf_layout_max(src->scan.buf_op) + 1));
  if (!layout) return ex_fail(run, src->pos, src->stage, "out of memory");
  int nl = ir_buf_layout(src->scan.buf_op, layout);
  /* Buffer column of each scanned column (all of them when none listed). */
  int nc = src->scan.nscan > 0 ? src->scan.nscan : nl;
  int *bc = rt_arena_alloc(&run->arena, sizeof(int) * ((size_t)nc + 1));
  int *ids = rt_arena_alloc(&run->arena, sizeof(int) * ((size_t)nc + 1));
  if (!bc || !ids) return ex_fail(run, src->pos, src->stage, "out of memory");
  for (int i = 0; i < nc; i++) {
    ids[i] = src->scan.nscan > 0 ? src->scan.out_cols[i] : layout[i];
    bc[i] = -1;
    for (int j = 0; j < nl && bc[i] < 0; j++)
      if (layout[j] == ids[i]) bc[i] = j;
    if (bc[i] < 0 || bc[i] >= buf->ncols)
      return ex_fail(run, src->pos, src->stage, "a column to read is not in the buffer");
  }
  if (src->scan.buf_op->kind == IR_TREE_ORDER) {
    ex_treescan ts = {.src = src, .buf = buf, .nc = nc, .bc = bc, .ids = ids, .perm = perm,
                      .path = run->tree_paths[idx], .n = buf->nrows};
    return ex_scan_tree(run, s, &ts, b, pick, ctx, dn);
  }
  for (int64_t start = 0; start < buf->nrows && !s->done; start += RT_BATCH) {
    int64_t left = buf->nrows - start;
    uint32_t n = left < RT_BATCH ? (uint32_t)left : RT_BATCH;
    for (int i = 0; i < nc; i++) rt_rowbuf_view(buf, bc[i], start, perm, &b->cols[ids[i]]);
    if (ex_batch(run, s, b, n, pick, ctx, dn) < 0) return -1;
  }
  return 0;
}

/* A read of a FORK's name: the fork's buffer, each served column a copy
 * of the fork column scan.table_cols[i] under its own id. */
static int ex_scan_fork(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx,
                        ex_down *dn) {
  const ir_op *src = s->seg->source, *fork = src->scan.buf_op;
  int idx = ex_op_index(run->plan, fork);
  if (idx < 0 || !run->bufs[idx])
    return ex_fail(run, src->pos, src->stage, "the fork to read was not written");
  const rt_rowbuf *buf = run->bufs[idx];
  int nc = src->scan.nscan;
  int *bc = rt_arena_alloc(&run->arena, sizeof(int) * ((size_t)nc + 1));
  if (!bc) return ex_fail(run, src->pos, src->stage, "out of memory");
  for (int i = 0; i < nc; i++) {
    bc[i] = -1;
    for (int j = 0; j < fork->fork.ncarry && bc[i] < 0; j++)
      if (fork->fork.carry[j] == src->scan.table_cols[i]) bc[i] = j;
    if (bc[i] < 0 || bc[i] >= buf->ncols)
      return ex_fail(run, src->pos, src->stage, "a column to read is not in the fork");
  }
  for (int64_t start = 0; start < buf->nrows && !s->done; start += RT_BATCH) {
    int64_t left = buf->nrows - start;
    uint32_t n = left < RT_BATCH ? (uint32_t)left : RT_BATCH;
    for (int i = 0; i < nc; i++) rt_rowbuf_view(buf, bc[i], start, NULL, &b->cols[src->scan.out_cols[i]]);
    if (ex_batch(run, s, b, n, pick, ctx, dn) < 0) return -1;
  }
  return 0;
}

/* ---- sink finish ---------------------------------------------------------------- */

/* ORDER BY: the permutation the next segment reads the buffer through. */
static int ex_sort_finish(ex_run *run, ex_seg *s, int idx) {
  const ir_op *sink = s->seg->sink;
  rt_sortkey keys[sink->sort.nkeys > 0 ? sink->sort.nkeys : 1];
  ex_sort_keys(s, keys);
  /* a top k: its first rows only, in input order, sorted below */
  ex_topk *tk = run->topks[s->index];
  if (tk && rt_topk_finish(&tk->t, s->buf) < 0)
    return ex_fail(run, sink->pos, sink->stage, "out of memory");
  if (s->buf->nrows > 0) {
    rt_par par = {ex_par_runner, run->pool, run->threads}, *pp = ex_par_ok(run) ? &par : NULL;
    run->perms[idx] = rt_sort_perm_par(s->buf, sink->sort.nkeys, keys, run->strings, pp);
    if (!run->perms[idx]) return ex_fail(run, sink->pos, sink->stage, "out of memory");
  }
  return 0;
}

/* AGGREGATE: the groups become the buffer the next segment scans. */
static int ex_agg_finish(ex_run *run, ex_seg *s, int idx) {
  const ir_op *sink = s->seg->sink;
  if (run->folds[s->index] && ex_agg_fold(run, s, true) < 0) return -1;
  rt_aggtab *t = s->agg;
  /* The emitted rows are keys then aggregates, in the table's own types,
   * which is the layout ir_buf_layout gives the next segment. */
  int nc = t->nkeys + t->naggs;
  rt_type types[nc > 0 ? nc : 1];
  for (int k = 0; k < t->nkeys; k++) types[k] = t->keys.types[k];
  for (int a = 0; a < t->naggs; a++) types[t->nkeys + a] = t->aggs[a].out;
  rt_rowbuf *out = rt_arena_alloc(&run->arena, sizeof *out);
  if (!out) return ex_fail(run, sink->pos, sink->stage, "out of memory");
  if (!rt_rowbuf_init(out, nc, types)) return ex_fail(run, sink->pos, sink->stage, "out of memory");
  int64_t ngroups = t->ngroups;
  /* a parallel run may have left the groups in partitions (driver_par.c) */
  int rc = run->aggparts[s->index] ? ex_par_agg_emit(run, s->index, out, &ngroups) : rt_aggtab_emit_move(t, out);
  run->bufs[idx] = out;
  rt_aggtab_free(t);
  s->agg = NULL;
  if (rc == RT_AGGX_INF) return ex_fail(run, sink->pos, sink->stage, "Inf input to percentile()");
  if (rc == RT_AGGX_STRING)
    return ex_fail(run, sink->pos, sink->stage, rt_strpool_error(run->strings));
  /* emit leaves the buffer empty when it cannot grow it */
  if (rc || out->nrows != ngroups) return ex_fail(run, sink->pos, sink->stage, "out of memory");
  return 0;
}

/* JOIN: the relation's buffer becomes its hash table (runtime/jointab.h),
 * keyed by the buffer columns of the build's keys. */
static int ex_join_finish(ex_run *run, ex_seg *s, int idx) {
  const ir_op *sink = s->seg->sink;
  int nk = sink->join.nkeys;
  int keycols[nk > 0 ? nk : 1];
  for (int k = 0; k < nk; k++) {
    keycols[k] = -1;
    for (int j = 0; j < s->nbuf && keycols[k] < 0; j++)
      if (s->buf_cols[j] == sink->join.src_keys[k]) keycols[k] = j;
    if (keycols[k] < 0) return ex_fail(run, sink->pos, sink->stage, "a join key is not in the buffer");
  }
  rt_jointab *t = rt_mem_calloc(1, sizeof *t);
  if (!t) return ex_fail(run, sink->pos, sink->stage, "out of memory");
  int kind = sink->join.probe ? sink->join.probe->join.kind : RT_JOIN_INNER;
  const char *msg;
  rt_par par = {ex_par_runner, run->pool, run->threads}, *pp = ex_par_ok(run) ? &par : NULL;
  if (rt_jointab_build(t, s->buf, nk, keycols, kind == RT_JOIN_RIGHT || kind == RT_JOIN_FULL, pp, &msg) < 0) {
    rt_mem_free(t);
    return ex_fail(run, sink->pos, sink->stage, msg);
  }
  run->joins[idx] = t;
  return 0;
}

rt_jointab *ex_join_tab(const ex_run *run, const ir_op *probe) {
  int idx = probe->join.build ? ex_op_index(run->plan, probe->join.build) : -1;
  return idx >= 0 && run->joins ? run->joins[idx] : NULL;
}

static int ex_sink_finish(ex_run *run, ex_seg *s) {
  const ir_op *sink = s->seg->sink;
  int idx = ex_op_index(run->plan, sink);
  if (idx < 0 && ir_op_role(sink->kind) == IR_ROLE_BREAKER)
    return ex_fail(run, sink->pos, sink->stage, "the breaker is not in the plan");
  switch (sink->kind) {
  case IR_OUTPUT:
  case IR_FORK:
  case IR_IV_BUFFER: return 0;   /* the rows are all there is */
  case IR_SORT: return ex_sort_finish(run, s, idx);
  case IR_TREE_ORDER: return ex_tree_order_finish(run, s, idx);
  case IR_AGGREGATE: return ex_agg_finish(run, s, idx);
  case IR_WINDOW: return ex_window_finish(run, s);
  case IR_JOIN_BUILD: return ex_join_finish(run, s, idx);
#define IR_CASE_SOURCE(name) case IR_##name:
#define IR_CASE_STEP(name) case IR_##name:
#include "ir/op_cases.h"
  case IR__COUNT:
    break;
  }
  return ex_fail(run, sink->pos, sink->stage, "a segment ends in an op that is not a sink");
}

/* Whether a segment after s reads the buffer of `buf` (a FORK's, which
 * the SCAN_BUF after it and every SCAN_FORK of its name read). */
static bool ex_read_later(const ex_run *run, const ex_seg *s, const ir_op *buf) {
  for (int i = s->index + 1; i < run->nsegs; i++) {
    const ir_op *src = run->segs[i].seg->source;
    if (src && (src->kind == IR_SCAN_BUF || src->kind == IR_SCAN_FORK) && src->scan.buf_op == buf)
      return true;
  }
  return false;
}

/* Frees the buffer a finished segment read, when nobody reads it again. */
static void ex_release_source(ex_run *run, ex_seg *s) {
  const ir_op *src = s->seg->source;
  if (src->kind != IR_SCAN_BUF && src->kind != IR_SCAN_FORK) return;
  int idx = ex_op_index(run->plan, src->scan.buf_op);
  if (idx < 0) return;
  if (src->scan.buf_op->kind == IR_FORK && ex_read_later(run, s, src->scan.buf_op)) return;
  const char *prev = rt_budget_owner(src->scan.buf_op->stage);   /* the buffer was its */
  if (run->bufs[idx]) rt_rowbuf_free(run->bufs[idx]);
  run->bufs[idx] = NULL;
  rt_mem_free(run->perms[idx]);
  run->perms[idx] = NULL;
  rt_budget_owner(prev);
}

/* Sets up the streaming DOWN order of segment s, whose output goes into
 * the next segment `nx` (already opened). */
static int ex_down_open(ex_run *run, ex_seg *s, ex_seg *nx, ex_down *dn) {
  const ir_plan *p = run->plan;
  const ir_op *sink = s->seg->sink, *src = nx->seg->source;
  dn->next = nx;
  dn->cn = dn->cp = -1;
  for (int j = 0; j < s->nbuf; j++) {
    if (s->buf_cols[j] == sink->tree.node_col) dn->cn = j;
    if (s->buf_cols[j] == sink->tree.pnode_col) dn->cp = j;
  }
  int nidx = ex_op_index(p, sink->tree.num);
  dn->num = nidx >= 0 ? run->treenums[nidx] : NULL;
  if (dn->cn < 0 || dn->cp < 0 || !dn->num)
    return ex_fail(run, sink->pos, sink->stage, "the tree order lacks its node numbers");
  if (!rt_treedown_init(&dn->d, s->nbuf, s->buf->types))
    return ex_fail(run, sink->pos, sink->stage, "out of memory");
  /* The next segment's columns, as ex_scan_buf maps them. */
  dn->nc = src->scan.nscan > 0 ? src->scan.nscan : s->nbuf;
  dn->bc = rt_arena_alloc(&run->arena, sizeof(int) * ((size_t)dn->nc + 1));
  dn->ids = rt_arena_alloc(&run->arena, sizeof(int) * ((size_t)dn->nc + 1));
  if (!dn->bc || !dn->ids) return ex_fail(run, sink->pos, sink->stage, "out of memory");
  for (int i = 0; i < dn->nc; i++) {
    dn->ids[i] = src->scan.nscan > 0 ? src->scan.out_cols[i] : s->buf_cols[i];
    dn->bc[i] = -1;
    for (int j = 0; j < s->nbuf && dn->bc[i] < 0; j++)
      if (s->buf_cols[j] == dn->ids[i]) dn->bc[i] = j;
    if (dn->bc[i] < 0) return ex_fail(run, src->pos, src->stage, "a column to read is not in the buffer");
  }
  dn->nb.ncols = p->ncols;
  dn->nb.cols = rt_arena_alloc(&run->arena, sizeof(rt_view) * ((size_t)p->ncols + 1));
  dn->accs = rt_arena_alloc(&run->arena, sizeof(rt_treeacc *) * ((size_t)nx->seg->nsteps + 1));
  if (!dn->nb.cols || !dn->accs) return ex_fail(run, sink->pos, sink->stage, "out of memory");
  for (int k = 0; k < nx->seg->nsteps; k++) {
    const ir_op *op = nx->seg->steps[k];
    if (op->dead || op->kind != IR_TREE_ACC) continue;
    rt_treeacc *a = run->treeaccs[ex_op_index(p, op)];
    if (a) dn->accs[dn->naccs++] = a;
  }
  return 0;
}

/* RIGHT and FULL JOIN: after the input ended, the relation's rows no input
 * row matched go on from the step after their probe, in the relation's
 * order, with the input's columns NULL (all-NULL views), on the
 * interpreter (they enter the segment in its middle). Probes in step
 * order: an earlier probe's rows pass through the later ones. */
static int ex_join_tails(ex_run *run, ex_seg *s) {
  const ir_plan *p = run->plan;
  const ir_segment *seg = s->seg;
  for (int k = 0; k < seg->nsteps; k++) {
    const ir_op *op = seg->steps[k];
    if (op->dead || op->kind != IR_JOIN_PROBE) continue;
    if (op->join.kind != RT_JOIN_RIGHT && op->join.kind != RT_JOIN_FULL) continue;
    const rt_jointab *t = ex_join_tab(run, op);
    if (!t || !t->matched) return ex_fail(run, op->pos, op->stage, "the joined relation was not built");
    if (!run->run_from) return ex_fail(run, op->pos, op->stage, "no backend runs the unmatched rows");
    rt_batch tb = {0};
    tb.ncols = p->ncols;
    tb.cols = rt_arena_alloc(&run->arena, sizeof(rt_view) * ((size_t)p->ncols + 1));
    void *zeros = rt_arena_alloc(&run->arena, (size_t)RT_BATCH * 8);
    uint64_t *none = rt_arena_alloc(&run->arena, RT_BITWORDS(RT_BATCH) * 8);
    uint32_t *rows = rt_arena_alloc(&run->arena, sizeof(uint32_t) * RT_BATCH);
    if (!tb.cols || !zeros || !none || !rows) return ex_fail(run, op->pos, op->stage, "out of memory");
    int nlim = 0;   /* LIMITs before the probe: theirs is not the tail's end */
    for (int j = 0; j < k; j++) nlim += !seg->steps[j]->dead && seg->steps[j]->kind == IR_LIMIT;
    for (int64_t r = 0; r < t->nrows;) {
      bool stop = false;
      for (int j = nlim; j < s->nlimits; j++) stop |= s->limit_left[j] == 0;
      if (stop) break;
      uint32_t n = 0;
      for (; r < t->nrows && n < RT_BATCH; r++)
        if (!t->matched[r]) rows[n++] = (uint32_t)r;
      if (n == 0) break;
      for (int c = 0; c < p->ncols; c++)
        tb.cols[c] = (rt_view){.type = rt_store_type(p->cols[c].type), .data = zeros, .valid = none};
      const ir_op *bld = op->join.build;
      for (int j = 0; j < bld->join.ncarry; j++)
        tb.cols[bld->join.carry[j]] = (rt_view){.type = t->buf->types[j], .data = t->buf->data[j],
                                           .valid = t->buf->valid[j], .sel = rows};
      tb.n = tb.nactive = n;
      tb.active = NULL;
      if (ex_interrupted(run)) return ex_fail_interrupted(run);
      if (run->run_from(s, &tb, k + 1) < 0 || run->err.set || run->budget.exceeded)
        return ex_budget_fail(run, s);
    }
  }
  return 0;
}

/* Runs segment si; returns how many segments it ran (2 when its sink is a
 * streaming DOWN order: the next segment runs batch by batch with it), or
 * -1 on error. */
static int ex_seg_run_body(ex_run *run, int si, rt_batch *b, ex_pick_fn pick, void *ctx) {
  ex_seg *s = &run->segs[si];
  const ir_segment *seg = s->seg;
  if (!seg->source || !seg->sink) return ex_fail(run, -1, "RUN", "a segment has no source or sink");
  /* An interval operand its source reads in place (driver_interval.c). */
  if (seg->sink->kind == IR_IV_BUFFER && ex_iv_direct(run->plan, seg)) return 1;
  /* A tree order in place only checks the table (the next segment reads it). */
  if (ir_tree_in_place(seg->sink)) return ex_tree_table_run(run, s);
  if (ex_sink_open(run, s) < 0 || ex_limits_open(run, s) < 0 || ex_trees_open(run, s) < 0)
    return -1;
  ex_seg *nx = si + 1 < run->nsegs ? &run->segs[si + 1] : NULL;
  ex_down down, *dn = NULL;
  if (ex_down_streams(seg) && nx && nx->seg->source && nx->seg->sink &&
      nx->seg->source->kind == IR_SCAN_BUF && nx->seg->source->scan.buf_op == seg->sink) {
    memset(&down, 0, sizeof down);
    dn = &down;
    if (ex_sink_open(run, nx) < 0 || ex_limits_open(run, nx) < 0 || ex_trees_open(run, nx) < 0 ||
        ex_down_open(run, s, nx, dn) < 0) {
      rt_treedown_free(&down.d);
      return -1;
    }
  }
  int rc = 0;
  switch (seg->source->kind) {
  case IR_SCAN_TABLE:
    rc = !dn && ex_par_wanted(run, s) ? ex_par_scan(run, s, pick, ctx) : ex_scan_table(run, s, b, pick, ctx, dn);
    break;
  case IR_SCAN_SQL: rc = ex_scan_sql(run, s, b, pick, ctx, dn); break;
  case IR_SCAN_BUF: rc = ex_scan_buf(run, s, b, pick, ctx, dn); break;
  case IR_SCAN_FORK: rc = ex_scan_fork(run, s, b, pick, ctx, dn); break;
#define IR_CASE_IVSOURCE(name) case IR_##name:
#include "ir/op_cases.h"
    rc = ex_iv_scan(run, s, b, pick, ctx, dn);
    break;
  case IR_SETOP: rc = ex_setop_scan(run, s, b, pick, ctx, dn); break;
  case IR_GRAPH: rc = ex_graph_scan(run, s, b, pick, ctx, dn); break;
  case IR_TREE_SHAPE: rc = ex_tshape_scan(run, s, b, pick, ctx, dn); break;
#define IR_CASE_STEP(name) case IR_##name:
#define IR_CASE_SINK(name) case IR_##name:
#define IR_CASE_BREAKER(name) case IR_##name:
#include "ir/op_cases.h"
  case IR__COUNT:
    rc = ex_fail(run, seg->source->pos, seg->source->stage, "a segment starts with an op that is not a source");
    break;
  }
  if (rc == 0 && !run->err.set) rc = ex_join_tails(run, s);
  if (rc < 0 || run->err.set || ex_trees_finish(run, s) < 0) {
    if (dn) rt_treedown_free(&down.d);
    return -1;
  }
  if (!dn) {
    if (ex_sink_finish(run, s) < 0) return -1;
    ex_release_source(run, s);
    return 1;
  }
  /* Streamed: every row must have been emitted, else a cycle. */
  const ir_op *sink = seg->sink;
  rc = rt_treedown_finish(&down.d, &run->err, sink->stage, sink->pos);
  run->tree_paths[ex_op_index(run->plan, sink)] = RT_TREE_ORDER_STREAMED;
  rt_treedown_free(&down.d);
  if (rc < 0) return -1;
  ex_release_source(run, s);
  if (ex_trees_finish(run, nx) < 0 || ex_sink_finish(run, nx) < 0) return -1;
  ex_release_source(run, nx);
  return 2;
}

/* Runs segment si (ex_seg_run_body) with its sink as the holder of the
 * memory it grows (runtime/budget.h). */
static int ex_seg_run(ex_run *run, int si, rt_batch *b, ex_pick_fn pick, void *ctx) {
  const char *prev = rt_budget_owner(run->segs[si].seg->sink ? run->segs[si].seg->sink->stage : NULL);
  int rc = ex_seg_run_body(run, si, b, pick, ctx);
  rt_budget_owner(prev);
  return rc;
}

int ex_run_plan(ex_run *run, ex_pick_fn pick, void *pick_ctx) {
  const ir_plan *p = run->plan;
  run->nsegs = p->nsegs;
  run->segs = rt_arena_alloc(&run->arena, sizeof(ex_seg) * ((size_t)p->nsegs + 1));
  run->bufs = rt_arena_alloc(&run->arena, sizeof(rt_rowbuf *) * ((size_t)p->nops + 1));
  run->perms = rt_arena_alloc(&run->arena, sizeof(uint32_t *) * ((size_t)p->nops + 1));
  run->treenums = rt_arena_alloc(&run->arena, sizeof(rt_treenum *) * ((size_t)p->nops + 1));
  run->treeaccs = rt_arena_alloc(&run->arena, sizeof(rt_treeacc *) * ((size_t)p->nops + 1));
  run->tree_paths = rt_arena_alloc(&run->arena, sizeof(int) * ((size_t)p->nops + 1));
  run->joins = rt_arena_alloc(&run->arena, sizeof(rt_jointab *) * ((size_t)p->nops + 1));
  run->seg_batches = rt_arena_alloc(&run->arena, sizeof(int64_t) * ((size_t)p->nsegs + 1));
  run->folds = rt_arena_alloc(&run->arena, sizeof(rt_aggfold *) * ((size_t)p->nsegs + 1));
  run->aggparts = rt_arena_alloc(&run->arena, sizeof *run->aggparts * ((size_t)p->nsegs + 1));
  run->topks = rt_arena_alloc(&run->arena, sizeof(ex_topk *) * ((size_t)p->nsegs + 1));
  if (!run->segs || !run->bufs || !run->perms || !run->treenums || !run->treeaccs ||
      !run->tree_paths || !run->joins || !run->seg_batches || !run->folds || !run->aggparts ||
      !run->topks) {
    run->segs = NULL;   /* nothing to free per segment */
    return ex_fail(run, -1, "RUN", "out of memory");
  }
  for (int i = 0; i < p->nsegs; i++) {
    run->segs[i].run = run;
    run->segs[i].seg = &p->segs[i];
    run->segs[i].index = i;
  }
  /* One column array for all segments: they run one after the other and
   * each fills the columns it reads before its first batch. */
  rt_batch b = {0};
  b.ncols = p->ncols;
  b.cols = rt_arena_alloc(&run->arena, sizeof(rt_view) * ((size_t)p->ncols + 1));
  if (!b.cols) return ex_fail(run, -1, "RUN", "out of memory");
  /* The run's memory budget is the calling thread's while it runs. */
  rt_budget *prev = rt_budget_use(&run->budget);
  int rc = 0;
  for (int i = 0; i < p->nsegs && rc == 0;) {
    int ran = ex_seg_run(run, i, &b, pick, pick_ctx);
    /* Errors after the last batch (sorting, tree ordering, emitting
     * groups) may also come from a refused growth or an interrupt. */
    if (ran < 0 || run->budget.exceeded || run->budget.oom || ex_interrupted(run))
      rc = ex_budget_fail(run, &run->segs[i]);
    else i += ran;
  }
  rt_budget_use(prev);
  return rc < 0 || run->err.set ? -1 : 0;
}

/* Frees everything the run made, except a successful run's result: the
 * caller takes run->result with rt_rowbuf_to_table (or frees it with
 * rt_rowbuf_free). After a failed run the result is freed here and left
 * zeroed, so a second rt_rowbuf_free by the caller is harmless. */
void ex_run_free(ex_run *run) {
  for (int i = 0; run->segs && i < run->nsegs; i++) {
    ex_seg *s = &run->segs[i];
    if (run->seg_free) run->seg_free(s);
    if (s->agg) rt_aggtab_free(s->agg);
    s->agg = NULL;
    if (run->topks && run->topks[i]) rt_topk_free(&run->topks[i]->t);
    if (run->folds && run->folds[i]) rt_aggfold_free(run->folds[i]);
    if (run->aggparts) ex_par_agg_drop(run, i);
  }
  if (run->plan && run->bufs) {
    for (int i = 0; i < run->plan->nops; i++) {
      if (run->bufs[i]) rt_rowbuf_free(run->bufs[i]);
      if (run->perms) rt_mem_free(run->perms[i]);
      if (run->treenums && run->treenums[i]) {
        rt_treenum_free(run->treenums[i]);
        free(run->treenums[i]);
      }
      if (run->treeaccs && run->treeaccs[i]) {
        rt_treeacc_free(run->treeaccs[i]);
        free(run->treeaccs[i]);
      }
      if (run->joins && run->joins[i]) {
        rt_jointab_free(run->joins[i]);
        rt_mem_free(run->joins[i]);
      }
    }
  }
  if (run->err.set) rt_rowbuf_free(&run->result);
  if (run->subqs_free) run->subqs_free(run);
  run->bufs = NULL;
  run->perms = NULL;
  run->treenums = NULL;
  run->treeaccs = NULL;
  run->tree_paths = NULL;
  run->joins = NULL;
  run->segs = NULL;
  rt_arena_free(&run->arena);
}
