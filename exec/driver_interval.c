/*
 * driver_interval.c — runs the sources of the INTERVAL operators (plan.h,
 * the iv_ fields): INTERVAL INTERSECTION OF, FLATTEN, JOIN and FILL GAPS.
 *
 * By the time such a source's segment opens, every relation it reads has
 * been buffered by its IV_BUFFER sink (a rowbuf like SORT's, holding only
 * the carried columns, ints widened to int64). The source hands those
 * buffers to runtime/interval.h as rt_ivrel (ts, dur and PER keys point
 * straight into the rowbuf; only string and double keys are widened into
 * int64 copies), then serves the result in batches of up to RT_BATCH rows:
 *
 *   ISECT     ts, dur: flat int64 views of the regions; each operand's
 *             carried columns: views of its buffer selected by that
 *             operand's row array (sel = rows[j] + start), no copying;
 *   FLATTEN   ts, dur and the aggregates: flat views of the segments; PER
 *             columns: the input buffer selected by each segment's first
 *             row;
 *   IJOIN     the input's and the operand's carried columns, selected by
 *             the (input, operand) pairs; a LEFT row without match selects
 *             one all-NULL row appended to the operand's buffer;
 *   FILLGAPS  input rows then fillers copied into one new rowbuf (fillers
 *             take columns from the background row or their lane), read
 *             back like a breaker's buffer.
 *
 * Downstream the batches are ordinary: the backend the caller picks (the
 * interpreter, or the JIT, whose segment loads go through sel/validity)
 * runs the rest of the segment. All state lives in this function's frame
 * and is freed before it returns; the relation buffers are released as
 * soon as their output has been served.
 */
#include <stdlib.h>

#include "../runtime/interval.h"
#include "exec.h"

static int iv_fail(ex_run *run, const ir_op *op, const char *msg) {
  rt_errorf(&run->err, op->pos, "%s: %s", op->stage ? op->stage : "RUN", msg);
  return -1;
}

static int iv_op_index(const ir_plan *p, const ir_op *op) {
  for (int i = 0; i < p->nops; i++)
    if (p->ops[i] == op) return i;
  return -1;
}

/* Position of column `col` in an IV_BUFFER's rowbuf (its layout is its
 * carry), or -1. */
static int iv_buf_col(const ir_op *buf, int col) {
  for (int k = 0; k < buf->ncarry; k++)
    if (buf->carry[k] == col) return k;
  return -1;
}

/* One relation over its buffer. Keys of double or string type are widened
 * into `own` copies (freed by iv_rel_free). */
typedef struct iv_rel {
  rt_ivrel r;
  rt_ivkey keys[RT_LANES_MAXKEYS];
  int64_t *own[RT_LANES_MAXKEYS];
  const rt_rowbuf *buf;
} iv_rel;

static void iv_rel_free(iv_rel *r) {
  for (int k = 0; k < RT_LANES_MAXKEYS; k++) free(r->own[k]);
  memset(r->own, 0, sizeof r->own);
}

/* int64 values of buffer column c: the column itself when stored as
 * int64, else a widened copy in *own (double bits, string ids). */
static const int64_t *iv_i64_col(const rt_rowbuf *buf, int c, int64_t **own) {
  *own = NULL;
  if (buf->types[c] == RT_I64 || buf->nrows == 0) return buf->data[c];
  int64_t *v = malloc(sizeof(int64_t) * (size_t)buf->nrows);
  if (!v) return NULL;
  if (buf->types[c] == RT_F64) {
    memcpy(v, buf->data[c], sizeof(int64_t) * (size_t)buf->nrows);
  } else {
    const uint32_t *s = buf->data[c];
    for (int64_t i = 0; i < buf->nrows; i++) v[i] = s[i];
  }
  *own = v;
  return v;
}

static int iv_rel_open(ex_run *run, const ir_op *op, int j, iv_rel *r) {
  memset(r, 0, sizeof *r);
  const ir_op *bop = op->iv_bufs[j];
  int idx = iv_op_index(run->plan, bop);
  const rt_rowbuf *buf = idx >= 0 ? run->bufs[idx] : NULL;
  if (!buf) return iv_fail(run, op, "a relation was not buffered");
  if (buf->nrows >= (int64_t)RT_NO_ROW) return iv_fail(run, op, "too many rows");
  if (op->iv_nper > RT_LANES_MAXKEYS) return iv_fail(run, op, "too many PER columns");
  r->buf = buf;
  int cts = iv_buf_col(bop, op->iv_ts[j]), cdur = iv_buf_col(bop, op->iv_dur[j]);
  if (cts < 0 || cdur < 0) return iv_fail(run, op, "the bounds were not buffered");
  r->r.n = (uint32_t)buf->nrows;
  r->r.ts = buf->data[cts];
  r->r.dur = buf->data[cdur];
  r->r.ts_valid = buf->valid[cts];
  r->r.dur_valid = buf->valid[cdur];
  r->r.keys = r->keys;
  r->r.nkeys = op->iv_per[j] ? op->iv_nper : 0;
  for (int k = 0; k < r->r.nkeys; k++) {
    int c = iv_buf_col(bop, op->iv_per[j][k]);
    if (c < 0) return iv_fail(run, op, "a PER column was not buffered");
    r->keys[k].type = buf->types[c];
    r->keys[k].valid = buf->valid[c];
    r->keys[k].v = iv_i64_col(buf, c, &r->own[k]);
    if (!r->keys[k].v && buf->nrows) return iv_fail(run, op, "out of memory");
  }
  return 0;
}

/* Frees relation j's buffer: its output has been served. */
static void iv_release(ex_run *run, const ir_op *op) {
  for (int j = 0; j < op->iv_nrel; j++) {
    int idx = iv_op_index(run->plan, op->iv_bufs[j]);
    if (idx < 0 || !run->bufs[idx]) continue;
    rt_rowbuf_free(run->bufs[idx]);
    run->bufs[idx] = NULL;
  }
}

/* A flat int64 view of arr[start..]. */
static rt_view iv_flat(rt_type t, const void *arr, int64_t start, const uint64_t *valid) {
  size_t sz = t == RT_STR ? 4 : 8;
  return (rt_view){.type = t,
                   .data = arr ? (const char *)arr + (size_t)start * sz : NULL,
                   .valid = valid ? valid + start / 64 : NULL};
}

/* Views of relation j's carried columns, positions selected by sel. */
static void iv_sel_views(const ir_op *op, int j, const rt_rowbuf *buf, int64_t start,
                         const uint32_t *sel, rt_batch *b) {
  const ir_op *bop = op->iv_bufs[j];
  for (int k = 0; k < bop->ncarry; k++) rt_rowbuf_view(buf, k, start, sel, &b->cols[bop->carry[k]]);
}

/* ---- INTERVAL INTERSECTION OF ------------------------------------------ */

static int iv_isect(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *dn) {
  const ir_op *op = s->seg->source;
  int k = op->iv_nrel;
  iv_rel *rels = calloc((size_t)k, sizeof *rels);
  rt_ivrel *rv = calloc((size_t)k, sizeof *rv);
  rt_isect_out out = {0};
  int rc = 0;
  if (!rels || !rv) rc = iv_fail(run, op, "out of memory");
  for (int j = 0; j < k && rc == 0; j++) {
    rc = iv_rel_open(run, op, j, &rels[j]);
    rv[j] = rels[j].r;
  }
  rt_isect_stats st = {0};
  if (rc == 0 && !rt_isect_run(k, rv, op->stage, &out, &st, &run->err)) rc = -1;
  for (int j = 0; rels && j < k; j++) iv_rel_free(&rels[j]);
  if (rc == 0) {
    rt_isect_stats *t = &run->isect_stats;
    t->rows_in += st.rows_in;
    t->rows_null += st.rows_null;
    t->lanes_sorted += st.lanes_sorted;
    t->partitions += st.partitions;
    t->part_disjoint += st.part_disjoint;
    t->part_narrow += st.part_narrow;
    t->step_sweep += st.step_sweep;
    t->step_bsearch += st.step_bsearch;
    t->step_tree += st.step_tree;
    t->regions += st.regions;
  }
  for (size_t start = 0; rc == 0 && start < out.n && !s->done; start += RT_BATCH) {
    size_t left = out.n - start;
    uint32_t n = left < RT_BATCH ? (uint32_t)left : RT_BATCH;
    b->cols[op->iv_ts_out] = iv_flat(RT_I64, out.ts, (int64_t)start, NULL);
    b->cols[op->iv_dur_out] = iv_flat(RT_I64, out.dur, (int64_t)start, NULL);
    for (int j = 0; j < k; j++) iv_sel_views(op, j, rels[j].buf, (int64_t)start, out.rows[j], b);
    rc = ex_feed(run, s, b, n, pick, ctx, dn);
  }
  rt_isect_free(&out);
  free(rels);
  free(rv);
  iv_release(run, op);
  return rc;
}

/* ---- INTERVAL FLATTEN ----------------------------------------------------- */

static int iv_flatten(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *dn) {
  const ir_op *op = s->seg->source;
  const ir_plan *p = run->plan;
  iv_rel rel;
  rt_flat_out out = {0};
  int na = 0, rc = iv_rel_open(run, op, 0, &rel);
  rt_flat_agg *aggs = calloc((size_t)op->naggs + 1, sizeof *aggs);
  int64_t **own = calloc((size_t)op->naggs + 1, sizeof *own);
  int *outc = calloc((size_t)op->naggs + 1, sizeof *outc);
  if (rc == 0 && (!aggs || !own || !outc)) rc = iv_fail(run, op, "out of memory");
  for (int a = 0; rc == 0 && a < op->naggs; a++) {
    const ir_agg *ag = &op->aggs[a];
    if (!ag->live) continue;
    aggs[na].kind = ag->kind;
    aggs[na].in = RT_I64;
    outc[na] = ag->out_col;
    if (ag->kind != RT_AGG_COUNT_STAR) {
      int c = iv_buf_col(op->iv_bufs[0], ag->arg_col);
      if (c < 0) {
        rc = iv_fail(run, op, "an aggregate input was not buffered");
        break;
      }
      aggs[na].valid = rel.buf->valid[c];
      if (rel.buf->types[c] == RT_F64) {
        aggs[na].in = RT_F64;
        aggs[na].v = rel.buf->data[c];
      } else {
        /* COUNT of strings counts non-NULL ids as integers */
        aggs[na].v = iv_i64_col(rel.buf, c, &own[na]);
        if (!aggs[na].v && rel.buf->nrows) rc = iv_fail(run, op, "out of memory");
      }
    }
    na++;
  }
  if (rc == 0 && !rt_flatten_run(&rel.r, na, aggs, op->stage, &out, NULL, &run->err)) rc = -1;
  for (int a = 0; rc == 0 && a < na; a++)
    if (rt_store_type(p->cols[outc[a]].type) != out.type[a])
      rc = iv_fail(run, op, "internal error: an aggregate has another type than planned");
  for (size_t start = 0; rc == 0 && start < out.n && !s->done; start += RT_BATCH) {
    size_t left = out.n - start;
    uint32_t n = left < RT_BATCH ? (uint32_t)left : RT_BATCH;
    b->cols[op->iv_ts_out] = iv_flat(RT_I64, out.ts, (int64_t)start, NULL);
    b->cols[op->iv_dur_out] = iv_flat(RT_I64, out.dur, (int64_t)start, NULL);
    for (int q = 0; q < op->iv_nper; q++) {
      int c = iv_buf_col(op->iv_bufs[0], op->iv_per[0][q]);
      rt_rowbuf_view(rel.buf, c, (int64_t)start, out.rep, &b->cols[op->iv_per[0][q]]);
    }
    for (int a = 0; a < na; a++)
      b->cols[outc[a]] = iv_flat(out.type[a], out.val[a], (int64_t)start, out.valid[a]);
    rc = ex_feed(run, s, b, n, pick, ctx, dn);
  }
  iv_rel_free(&rel);
  for (int a = 0; own && a < na; a++) free(own[a]);
  free(own);
  free(aggs);
  free(outc);
  rt_flatten_free(&out);
  iv_release(run, op);
  return rc;
}

/* ---- INTERVAL JOIN ---------------------------------------------------------- */

static int iv_ijoin(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *dn) {
  const ir_op *op = s->seg->source;
  iv_rel in, opr;
  rt_ijoin j;
  rt_ijpairs pairs = {0};
  memset(&j, 0, sizeof j);
  memset(&opr, 0, sizeof opr);
  int rc = iv_rel_open(run, op, 0, &in);
  if (rc == 0) rc = iv_rel_open(run, op, 1, &opr);
  bool built = false;
  if (rc == 0) {
    built = true;
    if (!rt_ijoin_build(&j, &opr.r, (rt_ijrel)op->iv_rel, op->stage, &run->err)) rc = -1;
  }
  if (rc == 0 && !rt_ijoin_probe(&j, &in.r, op->iv_left, &pairs, &run->err)) rc = -1;
  if (rc == 0 && op->iv_left) {
    /* One all-NULL row after the operand's rows for unmatched input rows
     * to select (rows past nrows are zero and NULL in a rowbuf). */
    rt_rowbuf *ob = (rt_rowbuf *)opr.buf;
    uint32_t null_row = (uint32_t)ob->nrows;
    rt_rowbuf_reserve(ob, 1);
    if (ob->cap < ob->nrows + 1) rc = iv_fail(run, op, "out of memory");
    else ob->nrows++;
    for (size_t i = 0; rc == 0 && i < pairs.n; i++)
      if (pairs.op[i] == RT_NO_ROW) pairs.op[i] = null_row;
  }
  for (size_t start = 0; rc == 0 && start < pairs.n && !s->done; start += RT_BATCH) {
    size_t left = pairs.n - start;
    uint32_t n = left < RT_BATCH ? (uint32_t)left : RT_BATCH;
    iv_sel_views(op, 0, in.buf, (int64_t)start, pairs.in, b);
    iv_sel_views(op, 1, opr.buf, (int64_t)start, pairs.op, b);
    rc = ex_feed(run, s, b, n, pick, ctx, dn);
  }
  if (built) rt_ijoin_free(&j);
  rt_ijpairs_free(&pairs);
  iv_rel_free(&in);
  iv_rel_free(&opr);
  iv_release(run, op);
  return rc;
}

/* ---- INTERVAL FILL GAPS ---------------------------------------------------- */

/* Copies value and validity of (src column sc, row sr) to (dst column dc,
 * row dr); both columns have the same stored type. */
static void iv_copy(rt_rowbuf *dst, int dc, int64_t dr, const rt_rowbuf *src, int sc, int64_t sr) {
  if (!rt_bit(src->valid[sc], (uint32_t)sr)) return;
  size_t sz = rt_type_size(dst->types[dc]);
  memcpy((char *)dst->data[dc] + (size_t)dr * sz, (const char *)src->data[sc] + (size_t)sr * sz, sz);
  rt_bit_set(dst->valid[dc], (uint32_t)dr);
}

static void iv_put_i64(rt_rowbuf *dst, int dc, int64_t dr, int64_t v) {
  ((int64_t *)dst->data[dc])[dr] = v;
  rt_bit_set(dst->valid[dc], (uint32_t)dr);
}

static int iv_fillgaps(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *dn) {
  const ir_op *op = s->seg->source;
  const ir_plan *p = run->plan;
  iv_rel in, bg;
  memset(&bg, 0, sizeof bg);
  rt_fill_out out = {0};
  rt_rowbuf res = {0};
  int nc = op->nscan;
  int rc = iv_rel_open(run, op, 0, &in);
  if (rc == 0) rc = iv_rel_open(run, op, 1, &bg);
  if (rc == 0 && !rt_fillgaps_run(&in.r, &bg.r, op->iv_per[1] != NULL, op->stage, &out, &run->err))
    rc = -1;
  int64_t nin = in.buf ? in.buf->nrows : 0, total = nin + (int64_t)out.n;
  if (rc == 0 && total >= (int64_t)RT_NO_ROW) rc = iv_fail(run, op, "too many rows");
  if (rc == 0) {
    rt_type types[nc > 0 ? nc : 1];
    for (int k = 0; k < nc; k++) types[k] = rt_store_type(p->cols[op->out_cols[k]].type);
    rt_rowbuf_init(&res, nc, types);
    if (total > 0) {
      rt_rowbuf_reserve(&res, total);
      if (res.cap < total) rc = iv_fail(run, op, "out of memory");
    }
  }
  for (int k = 0; rc == 0 && k < nc; k++) {
    int ic = op->iv_from_in[k] >= 0 ? iv_buf_col(op->iv_bufs[0], op->iv_from_in[k]) : -1;
    int bc = op->iv_from_bg[k] >= 0 ? iv_buf_col(op->iv_bufs[1], op->iv_from_bg[k]) : -1;
    int kind = op->iv_fill_kind[k], key = op->iv_fill_key[k];
    if (ic >= 0)
      for (int64_t r = 0; r < nin; r++) iv_copy(&res, k, r, in.buf, ic, r);
    int pin = kind == 3 ? iv_buf_col(op->iv_bufs[0], op->iv_per[0][key]) : -1;
    int pbg = kind == 3 && op->iv_per[1] ? iv_buf_col(op->iv_bufs[1], op->iv_per[1][key]) : -1;
    for (size_t f = 0; f < out.n; f++) {
      int64_t r = nin + (int64_t)f;
      switch (kind) {
      case 1: iv_put_i64(&res, k, r, out.ts[f]); break;
      case 2: iv_put_i64(&res, k, r, out.dur[f]); break;
      case 3:
        /* the lane's key: from an input row of the lane, else the
         * background row that named the lane */
        if (out.rep[f] != RT_NO_ROW && pin >= 0) iv_copy(&res, k, r, in.buf, pin, out.rep[f]);
        else if (pbg >= 0) iv_copy(&res, k, r, bg.buf, pbg, out.bg[f]);
        break;
      default:
        if (bc >= 0) iv_copy(&res, k, r, bg.buf, bc, out.bg[f]);
        break;
      }
    }
  }
  if (rc == 0) res.nrows = total;
  iv_rel_free(&in);
  iv_rel_free(&bg);
  rt_fillgaps_free(&out);
  iv_release(run, op);
  for (int64_t start = 0; rc == 0 && start < res.nrows && !s->done; start += RT_BATCH) {
    int64_t left = res.nrows - start;
    uint32_t n = left < RT_BATCH ? (uint32_t)left : RT_BATCH;
    for (int k = 0; k < nc; k++) rt_rowbuf_view(&res, k, start, NULL, &b->cols[op->out_cols[k]]);
    rc = ex_feed(run, s, b, n, pick, ctx, dn);
  }
  rt_rowbuf_free(&res);
  return rc;
}

/* ---- entry points ----------------------------------------------------------- */

bool ex_iv_is_source(int kind) {
  return kind == IR_ISECT || kind == IR_FLATTEN || kind == IR_IJOIN || kind == IR_FILLGAPS;
}

int ex_iv_scan(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *dn) {
  switch (s->seg->source->kind) {
  case IR_ISECT: return iv_isect(run, s, b, pick, ctx, dn);
  case IR_FLATTEN: return iv_flatten(run, s, b, pick, ctx, dn);
  case IR_IJOIN: return iv_ijoin(run, s, b, pick, ctx, dn);
  case IR_FILLGAPS: return iv_fillgaps(run, s, b, pick, ctx, dn);
  default: return iv_fail(run, s->seg->source, "not an interval source");
  }
}
