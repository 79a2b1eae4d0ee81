/*
 * driver_tshape.c — runs the TREE_SHAPE source, the §9.4 tree operators
 * (plan.h struct ir_tshape; runtime/tree/tshape.h).
 *
 * Its relations are the IV_BUFFERs before it: the input, then the node
 * set and the OVER tree when the stage has them. The runtime answers with
 * row indexes; this file turns them into the output:
 *   carried input columns  views of the input's buffer through the output
 *                          rows (no copy)
 *   parent_id              a new column: the id of each output row's new
 *                          parent (read from the tree's id column), or
 *                          MERGE SIBLINGS' parent group number; NULL for
 *                          roots
 *   id (MERGE SIBLINGS)    the group number 0..k-1
 *   aggregates             an rt_aggtab without keys, one group per output
 *                          row, every input row folded into its group in
 *                          input order (rt_aggtab_fold: AGGREGATE's rules),
 *                          emitted into a rowbuf
 * and serves them in batches to the rest of the segment, which either
 * backend runs (the JIT fuses it like any segment after a source).
 */
#include <stdlib.h>

#include "runtime/budget.h"
#include "runtime/tree/tshape.h"
#include "exec.h"

static int tsfail(ex_run *run, const ir_op *op, const char *msg) {
  rt_errorf(&run->err, op->pos, "%s: %s", op->stage, msg);
  return -1;
}

static const rt_rowbuf *ts_buf(ex_run *run, const ir_op *bop) {
  for (int i = 0; i < run->plan->nops; i++)
    if (run->plan->ops[i] == bop) return run->bufs[i];
  return NULL;
}

/* Position of plan column c in IV_BUFFER bop, or -1. */
static int ts_col(const ir_op *bop, int c) {
  for (int k = 0; bop && c >= 0 && k < bop->ivbuf.ncarry; k++)
    if (bop->ivbuf.carry[k] == c) return k;
  return -1;
}

static rt_tcol ts_tcol(const rt_rowbuf *b, int k) {
  rt_type t = b->types[k];
  return (rt_tcol){.type = t == RT_F64 || t == RT_STR ? t : RT_I64, .data = b->data[k], .valid = b->valid[k]};
}

static void ts_release(ex_run *run, const ir_op *op) {
  const ir_op *bufs[3] = {op->tshape.in_buf, op->tshape.set_buf, op->tshape.over_buf};
  for (int j = 0; j < 3; j++)
    for (int i = 0; bufs[j] && i < run->plan->nops; i++)
      if (run->plan->ops[i] == bufs[j] && run->bufs[i]) {
        const char *prev = rt_budget_owner(bufs[j]->stage);
        rt_rowbuf_free(run->bufs[i]);
        rt_budget_owner(prev);
        run->bufs[i] = NULL;
      }
}

/* The live aggregates over the output rows into res (one column each). */
static int ts_aggregate(ex_run *run, const ir_op *op, const rt_rowbuf *in, const rt_tshape_out *out,
                        uint32_t nin, rt_rowbuf *res, int *outc) {
  const struct ir_tshape *ts = &op->tshape;
  const ir_plan *p = run->plan;
  int na = 0, max = ts->naggs > 0 ? ts->naggs : 1;
  rt_aggkind kinds[max];
  rt_type intypes[max], otypes[max];
  rt_tcol v[max], w[max];
  bool has_w[max];
  for (int a = 0; a < ts->naggs; a++) {
    const ir_agg *ag = &ts->aggs[a];
    if (!ag->live) continue;
    int c = ts_col(ts->in_buf, ag->arg_col), c2 = ts_col(ts->in_buf, ag->arg2_col);
    if ((ag->arg_col >= 0 && c < 0) || (ag->arg2_col >= 0 && c2 < 0))
      return tsfail(run, op, "an aggregate input was not buffered");
    kinds[na] = ag->kind;
    v[na] = c >= 0 ? ts_tcol(in, c) : (rt_tcol){0};
    intypes[na] = c >= 0 ? v[na].type : RT_I64;
    has_w[na] = c2 >= 0;
    w[na] = c2 >= 0 ? ts_tcol(in, c2) : (rt_tcol){0};
    otypes[na] = rt_store_type(p->cols[ag->out_col].type);
    outc[na] = ag->out_col;
    na++;
  }
  if (na == 0) return 0;
  rt_aggtab t;
  rt_aggtab_init(&t, 0, NULL, na, kinds, intypes);
  t.strings = run->strings;
  for (int a = 0, j = 0; a < ts->naggs; a++) {
    const ir_agg *ag = &ts->aggs[a];
    if (!ag->live) continue;
    rt_aggtab_set_arg2(&t, j, has_w[j] ? w[j].type : RT_NULLT, ag->param);
    j++;
  }
  int rc = 0;
  if (!t.aggs || !t.slots || rt_aggtab_add_groups(&t, out->n) != (int64_t)out->n)
    rc = tsfail(run, op, "out of memory");
  for (int a = 0; rc == 0 && a < na; a++)
    if (t.aggs[a].out != otypes[a]) rc = tsfail(run, op, "internal error: an aggregate has another type than planned");
  /* Rows fold in input order (the floating sums and the overflow checks
   * depend on it), so each fold lands on a random group: the groups of the
   * rows further on are fetched ahead. */
  enum { AHEAD = 16 };
  for (uint32_t r = 0; rc == 0 && r < nin; r++) {
    if (r + AHEAD < nin && out->group[r + AHEAD] != RT_TREE_NONE) {
      uint32_t ga = out->group[r + AHEAD];
      for (int a = 0; a < na; a++) {
        const rt_agg *ag = &t.aggs[a];
        if (ag->i) __builtin_prefetch(&ag->i[ga], 1);
        if (ag->f) __builtin_prefetch(&ag->f[ga], 1);
        if (ag->has) __builtin_prefetch(&ag->has[ga], 1);
      }
    }
    uint32_t g = out->group[r];
    if (g == RT_TREE_NONE) continue;
    for (int a = 0; a < na && rc == 0; a++) {
      bool vn = kinds[a] == RT_AGG_COUNT_STAR || rt_tcol_null(&v[a], r);
      int64_t vb = kinds[a] == RT_AGG_COUNT_STAR || vn ? 0 : rt_tcol_bits(&v[a], r);
      bool wn = !has_w[a] || rt_tcol_null(&w[a], r);
      int64_t wb = wn ? 0 : rt_tcol_bits(&w[a], r);
      int e = rt_aggtab_fold(&t, a, g, vb, vn, wb, wn);
      if (e == RT_AGGX_OVERFLOW) rc = tsfail(run, op, "integer overflow");
      else if (e) rc = tsfail(run, op, "out of memory");
    }
  }
  if (rc == 0) {
    if (!rt_rowbuf_init(res, na, otypes)) {
      rc = tsfail(run, op, "out of memory");
    } else {
      int e = rt_aggtab_emit(&t, res);
      if (e == RT_AGGX_STRING) rc = tsfail(run, op, rt_strpool_error(run->strings));
      else if (e) rc = tsfail(run, op, "out of memory");
    }
  }
  rt_aggtab_free(&t);
  return rc < 0 ? -1 : na;
}

static int ts_run(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *dn) {
  const ir_op *op = s->seg->source;
  const struct ir_tshape *ts = &op->tshape;
  const ir_plan *p = run->plan;
  const rt_rowbuf *in = ts_buf(run, ts->in_buf), *set = NULL, *over = NULL;
  if (!in || (ts->set_buf && !(set = ts_buf(run, ts->set_buf))) ||
      (ts->over_buf && !(over = ts_buf(run, ts->over_buf))))
    return tsfail(run, op, "a relation was not buffered");
  if (in->nrows >= (int64_t)RT_TREE_NONE || (set && set->nrows >= (int64_t)RT_TREE_NONE) ||
      (over && over->nrows >= (int64_t)RT_TREE_NONE))
    return tsfail(run, op, "too many rows");
  int cid = ts_col(ts->in_buf, ts->id_col), cpar = ts_col(ts->in_buf, ts->parent_col);
  if (cid < 0 || (!over && cpar < 0)) return tsfail(run, op, "the tree's ids were not buffered");
  rt_tcol by[ts->nby > 0 ? ts->nby : 1];
  for (int q = 0; q < ts->nby; q++) {
    int c = ts_col(ts->in_buf, ts->by[q]);
    if (c < 0) return tsfail(run, op, "a BY column was not buffered");
    by[q] = ts_tcol(in, c);
  }
  rt_tshape_in ti = {.kind = (rt_tshape_kind)ts->kind, .ordered = ts->ordered,
                     .str_ids = in->types[cid] == RT_STR, .n = (uint32_t)in->nrows,
                     .id = ts_tcol(in, cid), .nby = ts->nby, .by = by};
  if (cpar >= 0) ti.parent = ts_tcol(in, cpar);
  if (over) {
    ti.has_over = true;
    ti.over_n = (uint32_t)over->nrows;
    ti.over_id = ts_tcol(over, ts_col(ts->over_buf, ts->over_id));
    ti.over_parent = ts_tcol(over, ts_col(ts->over_buf, ts->over_parent));
  }
  if (set) {
    ti.has_set = true;
    ti.set_n = (uint32_t)set->nrows;
    ti.set_id = ts_tcol(set, ts_col(ts->set_buf, ts->set_col));
  }
  rt_tshape_out out;
  if (rt_tshape_run(&ti, &out, &run->err, op->stage, op->pos, run->strings) < 0) return -1;

  /* parent_id (and MERGE SIBLINGS' id) */
  bool siblings = ts->kind == RT_TS_MERGE_SIBLINGS;
  const rt_tcol *tid = over ? &ti.over_id : &ti.id;
  rt_type pt = rt_store_type(p->cols[ts->parent_out].type);
  size_t sz = pt == RT_STR ? 4 : 8, nb = RT_BITWORDS(out.n + 1) * 8;
  void *pv = rt_mem_big(sz * ((size_t)out.n + 1));
  uint64_t *pvalid = rt_mem_calloc(1, nb);
  int64_t *idv = siblings ? rt_mem_big(sizeof(int64_t) * ((size_t)out.n + 1)) : NULL;
  rt_rowbuf res = {0};
  int outc[ts->naggs > 0 ? ts->naggs : 1];
  int rc = 0, na = 0;
  if (!pv || !pvalid || (siblings && !idv)) rc = tsfail(run, op, "out of memory");
  for (uint32_t i = 0; rc == 0 && i < out.n; i++) {
    uint32_t pr = out.prow[i];
    if (siblings) idv[i] = i;
    if (pr == RT_TREE_NONE) {
      if (pt == RT_STR) ((uint32_t *)pv)[i] = 0;
      else ((int64_t *)pv)[i] = 0;
      continue;
    }
    rt_bit_set(pvalid, i);
    int64_t v = siblings ? (int64_t)pr : rt_tcol_bits(tid, pr);
    if (pt == RT_STR) ((uint32_t *)pv)[i] = (uint32_t)v;
    else ((int64_t *)pv)[i] = v;
  }
  if (rc == 0 && out.group) {
    na = ts_aggregate(run, op, in, &out, ti.n, &res, outc);
    if (na < 0) rc = -1;
  }
  const struct ir_ivbuf *ib = &ts->in_buf->ivbuf;
  for (uint32_t start = 0; rc == 0 && start < out.n && !s->done; start += RT_BATCH) {
    uint32_t n = out.n - start < RT_BATCH ? out.n - start : RT_BATCH;
    for (int k = 0; k < ib->ncarry; k++) rt_rowbuf_view(in, k, start, out.rows, &b->cols[ib->carry[k]]);
    b->cols[ts->parent_out] = (rt_view){.type = pt, .data = (const char *)pv + (size_t)start * sz,
                                        .valid = pvalid + start / 64};
    if (siblings) b->cols[ts->id_out] = (rt_view){.type = RT_I64, .data = idv + start};
    for (int a = 0; a < na; a++) rt_rowbuf_view(&res, a, start, NULL, &b->cols[outc[a]]);
    rc = run->feed(run, s, b, n, pick, ctx, dn);
  }
  rt_rowbuf_free(&res);   /* also when ts_aggregate failed after making it */
  rt_mem_free(pv);
  rt_mem_free(pvalid);
  rt_mem_free(idv);
  rt_tshape_free(&out);
  return rc;
}

int ex_tshape_scan(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *dn) {
  const char *prev = rt_budget_owner(s->seg->source->stage);
  int rc = ts_run(run, s, b, pick, ctx, dn);
  rt_budget_owner(prev);
  ts_release(run, s->seg->source);
  return rc;
}
