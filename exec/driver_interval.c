/*
 * driver_interval.c — runs the sources of the INTERVAL operators (plan.h,
 * the iv_ fields): INTERVAL INTERSECTION OF, FLATTEN, JOIN and FILL GAPS.
 *
 * Each relation such a source reads is either
 *   direct    an unfiltered scan of a table (no live step between the scan
 *             and its IV_BUFFER) read by INTERSECTION, FLATTEN, JOIN, UNION
 *             OF (its regions without a row gather NULLs per batch:
 *             iv_nullable_views) and the §9 stages (not a LEFT JOIN's
 *             operand, which needs a NULL row appended): the
 *             driver skips that segment (ex_iv_direct) and the operator
 *             reads the table's own arrays — no copy, no pass over the
 *             rows; only bounds stored narrower than int64 are widened;
 *   buffered  by its IV_BUFFER sink (a rowbuf like SORT's, holding only
 *             the carried columns, ints widened to int64).
 * The source hands the relations to runtime/interval/interval.h as rt_ivrel (ts,
 * dur and PER keys point straight at the stored arrays, narrow keys read
 * in place), then serves the result in batches of up to RT_BATCH rows:
 *
 *   ISECT     streamed (rt_isect_next): ts, dur: flat int64 views of the
 *             batch's regions; each operand's carried columns: views of
 *             its rows selected by that operand's row array, no copying;
 *             so the regions never exist all at once;
 *   FLATTEN   ts, dur and the aggregates: flat views of the segments; PER
 *             columns: the input selected by each segment's first row;
 *   IJOIN     the input's and the operand's carried columns, selected by
 *             the (input, operand) pairs; a LEFT row without match selects
 *             one all-NULL row appended to the operand's buffer;
 *   FILLGAPS  input rows then fillers copied into one new rowbuf (fillers
 *             take columns from the background row or their lane), read
 *             back like a breaker's buffer.
 * A selected table column stored narrower than int64 (id, uint32, int32,
 * bool) that the segment reads is gathered into a batch-sized int64
 * array, since the segment's code expects the widened type of a
 * non-table source; columns it does not read are left as views.
 *
 * Downstream the batches are ordinary: the backend the caller picks (the
 * interpreter, or the JIT, whose segment loads go through sel/validity)
 * runs the rest of the segment. All state lives in this function's frame
 * and is freed before it returns; the relation buffers are released as
 * soon as their output has been served.
 */
#include <pthread.h>
#include <stdlib.h>

#include "runtime/interval/interval.h"
#include "runtime/par.h"
#include "runtime/interval/isect_sweep.h"
#include "exec.h"

/* After a runtime/interval/interval.h call failed: its error (offset -1) points at
 * the operator's stage, so the caret lands on the stage keyword. */
static int iv_rt_failed(ex_run *run, const ir_op *op) {
  if (run->err.offset < 0) run->err.offset = op->pos;
  return -1;
}

/* ---- direct relations ------------------------------------------------------ */

/* Table column that scan `src` reads into plan column c, or -1. */
static int iv_scan_col(const ir_op *src, int c) {
  for (int i = 0; i < src->scan.nscan; i++)
    if (src->scan.out_cols[i] == c) return src->scan.table_cols[i];
  return -1;
}

/* Whether interval source k can read an operand straight from its table
 * (iv_rel_direct) rather than from the IV_BUFFER the operand's segment
 * filled. FILL GAPS copies its input rows into the output buffer, so it
 * reads buffers. */
static bool iv_reads_tables(ir_opkind k) {
  switch (k) {
  case IR_ISECT:
  case IR_FLATTEN:
  case IR_IJOIN:
  case IR_IV_EVENTS:
  case IR_IV_FIND:
  case IR_IV_KEEP: return true;
  case IR_FILLGAPS: return false;
  case IR_IV_UNION: return true;   /* a region without a row of a table: iv_nullable_views */
  case IR_IVMERGE: case IR_SUBTRACT: case IR_SPLIT: case IR_QUANTIZE: case IR_SETBOUNDS:
    return true;   /* SPLIT's operand is buffered: ex_iv_direct */
  case IR_SCAN_TABLE: case IR_SCAN_SQL: case IR_SCAN_BUF: case IR_SETOP: case IR_SCAN_FORK:
  case IR_GRAPH:
  case IR_TREE_SHAPE:
#define IR_CASE_STEP(name) case IR_##name:
#define IR_CASE_SINK(name) case IR_##name:
#define IR_CASE_BREAKER(name) case IR_##name:
#include "ir/op_cases.h"
  case IR__COUNT:
    return false;   /* not an interval source */
  }
  return false;
}

bool ex_iv_direct(const ir_plan *p, const ir_segment *seg) {
  const ir_op *bop = seg->sink, *src = seg->source, *user = bop ? bop->ivbuf.user : NULL;
  if (!bop || bop->kind != IR_IV_BUFFER || !user || !src || src->kind != IR_SCAN_TABLE ||
      !src->scan.table)
    return false;
  if (!iv_reads_tables(user->kind)) return false;
  if ((user->kind == IR_IJOIN || user->kind == IR_IV_FIND) && user->iv.left && user->iv.nrel > 1 &&
      user->iv.bufs[1] == bop)
    return false;
  /* SPLIT's uncovered pieces select a NULL row appended to the operand's buffer */
  if (user->kind == IR_SPLIT && user->iv.bufs[1] == bop) return false;
  if (src->scan.table->nrows >= (int64_t)RT_NO_ROW) return false;
  for (int k = 0; k < seg->nsteps; k++)
    if (!seg->steps[k]->dead) return false;
  for (int k = 0; k < bop->ivbuf.ncarry; k++)
    if (iv_scan_col(src, bop->ivbuf.carry[k]) < 0) return false;
  (void)p;
  return true;
}

/* The segment that fills IV_BUFFER bop. */
static const ir_segment *iv_buf_seg(const ir_plan *p, const ir_op *bop) {
  for (int i = 0; i < p->nsegs; i++)
    if (p->segs[i].sink == bop) return &p->segs[i];
  return NULL;
}

/* Every column segment seg's steps and sink may read (a superset: it only
 * decides which narrow columns are worth widening per batch). */
static void iv_seg_reads(const ir_segment *seg, bool *need) {
  for (int k = 0; k <= seg->nsteps; k++) {
    const ir_op *op = k < seg->nsteps ? seg->steps[k] : seg->sink;
    if (!op->dead) ir_op_need(op, need);
  }
}

/* ---- relations --------------------------------------------------------------- */

/* One relation: its rt_ivrel over the buffer or (direct) the table, and
 * how to serve each carried column (bop->ivbuf.carry order). */
typedef struct iv_rel {
  rt_ivrel r;
  rt_ivkey keys[RT_LANES_MAXKEYS];
  rt_ivkey id;             /* the relation's id column, for error messages */
  int64_t *own[RT_LANES_MAXKEYS + 3];   /* widened copies: keys, ts, dur, id */
  const ir_op *bop;
  const rt_rowbuf *buf;    /* buffered, or NULL when direct */
  const rt_table *tab;     /* direct: the scanned table */
  int *tcol;               /* direct: table column of each carried column */
  bool *gather;            /* direct: narrow and read: widened per batch */
  int64_t *gv;             /* ncarry × RT_BATCH gathered values */
  uint64_t *gbits;         /* ncarry × RT_BITWORDS(RT_BATCH) their validity */
} iv_rel;

static void iv_rel_free(iv_rel *r) {
  for (int k = 0; k < RT_LANES_MAXKEYS + 3; k++) rt_mem_free(r->own[k]);
  free(r->tcol);
  free(r->gather);
  free(r->gv);
  free(r->gbits);
  memset(r, 0, sizeof *r);
}

/* int64 values of buffer column c: the column itself when stored as
 * int64, else a widened copy in *own (double bits, string ids). */
static const int64_t *iv_i64_col(const rt_rowbuf *buf, int c, int64_t **own) {
  *own = NULL;
  if (buf->types[c] == RT_I64 || buf->nrows == 0) return buf->data[c];
  int64_t *v = rt_mem_alloc(sizeof(int64_t) * (size_t)buf->nrows);
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

/* int64 values (double bits for F64) of table column c, widened into
 * *own unless stored as int64 or double. */
static const int64_t *iv_tab_i64(const rt_table *t, int c, int64_t **own) {
  const rt_column *col = &t->cols[c];
  *own = NULL;
  if ((col->type == RT_I64 || col->type == RT_F64 || col->type == RT_BOOL) && col->data)
    return col->data;
  int64_t *v = rt_mem_alloc(sizeof(int64_t) * ((size_t)t->nrows + 1));
  if (!v) return NULL;
  rt_view w;
  rt_table_view(t, c, 0, &w);
  for (int64_t i = 0; i < t->nrows; i++) v[i] = rt_view_i64(&w, (uint32_t)i);
  *own = v;
  return v;
}

/* int64 values of carried column k (aggregate inputs of FLATTEN). */
static const int64_t *iv_rel_i64(const iv_rel *r, int k, int64_t **own) {
  return r->buf ? iv_i64_col(r->buf, k, own) : iv_tab_i64(r->tab, r->tcol[k], own);
}

static rt_type iv_rel_type(const iv_rel *r, int k) {
  return r->buf ? r->buf->types[k] : rt_store_type(r->tab->cols[r->tcol[k]].type);
}

static const uint64_t *iv_rel_valid(const iv_rel *r, int k) {
  return r->buf ? r->buf->valid[k] : r->tab->cols[r->tcol[k]].valid;
}

/* A PER key over carried column k. */
static int iv_rel_key(iv_rel *r, int k, rt_ivkey *key, int64_t **own) {
  key->type = iv_rel_type(r, k);
  key->valid = iv_rel_valid(r, k);
  if (r->buf) {
    key->v = iv_i64_col(r->buf, k, own);
    return key->v || r->buf->nrows == 0;
  }
  const rt_column *col = &r->tab->cols[r->tcol[k]];
  switch (col->type) {
  case RT_U32:
  case RT_STR: key->u32 = col->data; break;
  case RT_I32: key->i32 = col->data; break;
  case RT_ID: key->rowid = true; break;
  default: key->v = col->data; break;   /* int64, bool, double bits */
  }
  return 1;
}

/* Opens relation j of interval source op. `reads` (plan columns the
 * source's segment reads) picks the narrow columns to widen per batch. */
static int iv_rel_open(ex_run *run, const ir_op *op, int j, const bool *reads, iv_rel *r) {
  memset(r, 0, sizeof *r);
  const ir_plan *p = run->plan;
  const ir_op *bop = op->iv.bufs[j];
  r->bop = bop;
  if (op->iv.nper > RT_LANES_MAXKEYS) return ex_op_fail(run, op, "too many PER columns");
  const ir_segment *seg = iv_buf_seg(p, bop);
  int64_t nrows;
  if (seg && ex_iv_direct(p, seg)) {
    r->tab = seg->source->scan.table;
    nrows = r->tab->nrows;
    run->rows_in += nrows;
    int nc = bop->ivbuf.ncarry;
    r->tcol = malloc(sizeof(int) * ((size_t)nc + 1));
    r->gather = calloc((size_t)nc + 1, sizeof(bool));
    if (!r->tcol || !r->gather) return ex_op_fail(run, op, "out of memory");
    int ng = 0;
    for (int k = 0; k < nc; k++) {
      r->tcol[k] = iv_scan_col(seg->source, bop->ivbuf.carry[k]);
      rt_type t = r->tab->cols[r->tcol[k]].type;
      r->gather[k] = reads && reads[bop->ivbuf.carry[k]] && t != RT_I64 && t != RT_F64 && t != RT_STR;
      ng += r->gather[k];
    }
    if (ng) {
      r->gv = malloc(sizeof(int64_t) * RT_BATCH * (size_t)nc);
      r->gbits = malloc(sizeof(uint64_t) * RT_BITWORDS(RT_BATCH) * (size_t)nc);
      if (!r->gv || !r->gbits) return ex_op_fail(run, op, "out of memory");
    }
  } else {
    int idx = ex_op_index(p, bop);
    r->buf = idx >= 0 ? run->bufs[idx] : NULL;
    if (!r->buf) return ex_op_fail(run, op, "a relation was not buffered");
    nrows = r->buf->nrows;
  }
  if (nrows >= (int64_t)RT_NO_ROW) return ex_op_fail(run, op, "too many rows");
  int cts = ex_buf_col(bop, op->iv.ts[j]), cdur = ex_buf_col(bop, op->iv.dur[j]);
  if (cts < 0 || cdur < 0) return ex_op_fail(run, op, "the bounds were not buffered");
  r->r.n = (uint32_t)nrows;
  r->r.ts = iv_rel_i64(r, cts, &r->own[RT_LANES_MAXKEYS]);
  r->r.dur = iv_rel_i64(r, cdur, &r->own[RT_LANES_MAXKEYS + 1]);
  if ((!r->r.ts || !r->r.dur) && nrows) return ex_op_fail(run, op, "out of memory");
  r->r.ts_valid = iv_rel_valid(r, cts);
  r->r.dur_valid = iv_rel_valid(r, cdur);
  r->r.keys = r->keys;
  r->r.nkeys = op->iv.per[j] ? op->iv.nper : 0;
  for (int k = 0; k < r->r.nkeys; k++) {
    int c = ex_buf_col(bop, op->iv.per[j][k]);
    if (c < 0) return ex_op_fail(run, op, "a PER column was not buffered");
    if (!iv_rel_key(r, c, &r->keys[k], &r->own[k])) return ex_op_fail(run, op, "out of memory");
  }
  int cid = op->iv.id && op->iv.id[j] >= 0 ? ex_buf_col(bop, op->iv.id[j]) : -1;
  if (cid >= 0 && iv_rel_key(r, cid, &r->id, &r->own[RT_LANES_MAXKEYS + 2])) r->r.id = &r->id;
  return 0;
}

void ex_iv_release(ex_run *run, ir_op *const *bufs, int n) {
  for (int j = 0; j < n; j++) {
    int idx = ex_op_index(run->plan, bufs[j]);
    if (idx < 0 || !run->bufs[idx]) continue;
    const char *prev = rt_budget_owner(bufs[j]->stage);   /* the buffer was its */
    rt_rowbuf_free(run->bufs[idx]);
    rt_budget_owner(prev);
    run->bufs[idx] = NULL;
  }
}

/* A flat view of arr[start..]. */
static rt_view iv_flat(rt_type t, const void *arr, int64_t start, const uint64_t *valid) {
  size_t sz = t == RT_STR ? 4 : 8;
  return (rt_view){.type = t,
                   .data = arr ? (const char *)arr + (size_t)start * sz : NULL,
                   .valid = valid ? valid + start / 64 : NULL};
}

/* View of carried column k at positions 0..n-1 = rows sel[0..n). */
static void iv_rel_view(iv_rel *r, int k, const uint32_t *sel, uint32_t n, rt_view *out) {
  if (r->buf) {
    rt_rowbuf_view(r->buf, k, 0, sel, out);
    return;
  }
  const rt_column *col = &r->tab->cols[r->tcol[k]];
  if (!r->gather[k]) {
    *out = (rt_view){.type = col->type, .data = col->data, .valid = col->valid, .sel = sel};
    return;
  }
  int64_t *v = r->gv + (size_t)k * RT_BATCH;
  if (col->type == RT_U32) {
    const uint32_t *d = col->data;
    for (uint32_t i = 0; i < n; i++) v[i] = d[sel[i]];
  } else {
    rt_view w = {.type = col->type, .data = col->data, .sel = sel};
    for (uint32_t i = 0; i < n; i++) v[i] = rt_view_i64(&w, i);
  }
  uint64_t *bits = NULL;
  if (col->valid) {
    bits = r->gbits + (size_t)k * RT_BITWORDS(RT_BATCH);
    memset(bits, 0, RT_BITWORDS(n) * 8);
    for (uint32_t i = 0; i < n; i++)
      if (rt_bit(col->valid, sel[i])) rt_bit_set(bits, i);
  }
  *out = (rt_view){.type = RT_I64, .data = v, .valid = bits};
}

/* Views of relation r's carried columns, positions selected by sel. */
static void iv_sel_views(iv_rel *r, const uint32_t *sel, uint32_t n, rt_batch *b) {
  const struct ir_ivbuf *ib = &r->bop->ivbuf;
  for (int k = 0; k < ib->ncarry; k++) iv_rel_view(r, k, sel, n, &b->cols[ib->carry[k]]);
}

/* The columns segment s reads, or NULL (out of memory: widen nothing). */
static bool *iv_reads(ex_run *run, ex_seg *s) {
  bool *need = calloc((size_t)run->plan->ncols + 1, sizeof *need);
  if (need) iv_seg_reads(s->seg, need);
  return need;
}

/* Opens what the segment reads of the input (relation 0) and, when opr is
 * given and the op has a second relation, of the operand; *reads is the
 * segment's column set. Whatever happens, iv_close_rels frees it all. */
static int iv_open_rels(ex_run *run, ex_seg *s, iv_rel *in, iv_rel *opr, bool **reads) {
  const ir_op *op = s->seg->source;
  if (opr) memset(opr, 0, sizeof *opr);
  *reads = iv_reads(run, s);
  int rc = iv_rel_open(run, op, 0, *reads, in);
  if (rc == 0 && opr && op->iv.nrel > 1) rc = iv_rel_open(run, op, 1, *reads, opr);
  return rc;
}

/* Frees what iv_open_rels opened and the op's buffers; returns rc. */
static int iv_close_rels(ex_run *run, const ir_op *op, iv_rel *in, iv_rel *opr, bool *reads, int rc) {
  iv_rel_free(in);
  if (opr) iv_rel_free(opr);
  free(reads);
  ex_iv_release(run, op->iv.bufs, op->iv.nrel);
  return rc;
}

/* ---- parallel serving ------------------------------------------------------- */

/* An operator whose work splits by PER partition (INTERSECTION OF,
 * FLATTEN) makes its output on the run's threads, partitions in pieces
 * claimed by whichever worker is free, each piece into an output of its
 * own; then the rows after it (the rest of the segment and its sink) run
 * on morsels of those outputs read in piece order (ex_par_rows), in the
 * batches one thread would feed, so every morsel, partial sum and row is
 * where one thread puts it. Worth it only when the segment may run in
 * parallel at all, nothing streams into a DOWN order, and there are at
 * least two partitions and two morsels' rows. */
static bool iv_par_wanted(const ex_run *run, const ex_seg *s, const void *dn, uint64_t nparts,
                          uint64_t rows) {
  return !dn && nparts >= 2 && rows > 2 * (uint64_t)(ex_morsel_batches(run) * RT_BATCH) &&
         ex_par_steps_ok(run, s);
}

/* Pieces of about an equal share of `total` rows: 4 per worker, so a
 * worker done early takes another. */
static uint64_t iv_par_share(const ex_run *run, uint64_t total) {
  return total / (4 * (uint64_t)(run->threads > 1 ? run->threads : 1)) + 1;
}

/* The piece holding output row `at` of pieces whose first rows are off[0..np]. */
static int64_t iv_par_piece(const int64_t *off, int64_t np, int64_t at) {
  int64_t lo = 0, hi = np;   /* off[lo] <= at < off[hi] */
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (off[mid] <= at) lo = mid;
    else hi = mid;
  }
  return lo;
}

/* Each worker's copies of the relations: the same arrays, with gather
 * scratch of their own (iv_rel_view widens narrow columns into gv). */
typedef struct iv_wrels {
  int nrel, nw;
  iv_rel *r;   /* worker w's relation j: r[w * nrel + j] */
} iv_wrels;

static void iv_wrels_free(iv_wrels *w) {
  for (int i = 0; w->r && i < w->nw * w->nrel; i++) {
    free(w->r[i].gv);
    free(w->r[i].gbits);
  }
  free(w->r);
  memset(w, 0, sizeof *w);
}

static bool iv_wrels_init(iv_wrels *w, const iv_rel *rels, int nrel, int nw) {
  w->nrel = nrel;
  w->nw = nw;
  w->r = calloc((size_t)nw * (size_t)nrel + 1, sizeof *w->r);
  if (!w->r) return false;
  for (int i = 0; i < nw; i++)
    for (int j = 0; j < nrel; j++) {
      iv_rel *c = &w->r[i * nrel + j];
      *c = rels[j];
      memset(c->own, 0, sizeof c->own);   /* the original frees them */
      c->gv = NULL;
      c->gbits = NULL;
      if (!rels[j].gv) continue;
      size_t nc = (size_t)rels[j].bop->ivbuf.ncarry;
      c->gv = malloc(sizeof(int64_t) * RT_BATCH * nc);
      c->gbits = malloc(sizeof(uint64_t) * RT_BITWORDS(RT_BATCH) * nc);
      if (!c->gv || !c->gbits) return false;
    }
  return true;
}

/* An operator's output in pieces, each column a flat array per piece
 * (ncols of them, of elem[c] bytes per row): rows at..at+n-1 as flat
 * pointers into the piece that holds them, or, for a batch that spans
 * pieces, copied into the worker's scratch. */
typedef struct iv_chunks {
  int64_t np;
  int64_t *off;        /* np + 1: the first output row of each piece */
  int ncols;
  size_t elem[RT_LANES_MAXKEYS + 2];
  const void **cols;   /* piece p's column c: cols[p * ncols + c] */
  char *scratch;       /* per worker: ncols columns of RT_BATCH * 8 bytes */
} iv_chunks;

static bool iv_chunks_init(iv_chunks *c, int64_t np, int ncols, int nw) {
  memset(c, 0, sizeof *c);
  c->np = np;
  c->ncols = ncols;
  c->off = calloc((size_t)np + 2, sizeof *c->off);
  c->cols = calloc((size_t)(np + 1) * (size_t)ncols + 1, sizeof *c->cols);
  c->scratch = malloc((size_t)nw * (size_t)ncols * RT_BATCH * 8 + 1);
  return c->off && c->cols && c->scratch;
}

static void iv_chunks_free(iv_chunks *c) {
  free(c->off);
  free(c->cols);
  free(c->scratch);
  memset(c, 0, sizeof *c);
}

static void iv_chunks_get(const iv_chunks *c, int worker, int64_t at, uint32_t n, const void **out) {
  int64_t q = iv_par_piece(c->off, c->np, at);
  if (at + n <= c->off[q + 1]) {
    for (int k = 0; k < c->ncols; k++)
      out[k] = (const char *)c->cols[q * c->ncols + k] + (size_t)(at - c->off[q]) * c->elem[k];
    return;
  }
  char *base = c->scratch + (size_t)worker * (size_t)c->ncols * RT_BATCH * 8;
  for (int k = 0; k < c->ncols; k++) out[k] = base + (size_t)k * RT_BATCH * 8;
  for (uint32_t got = 0; got < n; q++) {
    size_t from = (size_t)(at + got - c->off[q]), m = (size_t)(c->off[q + 1] - (at + got));
    if (m > n - got) m = n - got;
    for (int k = 0; k < c->ncols; k++)
      memcpy((char *)out[k] + got * c->elem[k], (const char *)c->cols[q * c->ncols + k] + from * c->elem[k],
             m * c->elem[k]);
    got += (uint32_t)m;
  }
}

/* ---- INTERVAL INTERSECTION OF ------------------------------------------ */

static void iv_add_stats(rt_isect_stats *t, const rt_isect_stats *st) {
  t->rows_in += st->rows_in;
  t->rows_null += st->rows_null;
  t->lanes_sorted += st->lanes_sorted;
  t->partitions += st->partitions;
  t->part_disjoint += st->part_disjoint;
  t->part_narrow += st->part_narrow;
  t->part_stream += st->part_stream;
  t->part_capped += st->part_capped;
  t->stream_events += st->stream_events;
  t->stream_skips += st->stream_skips;
  t->step_sweep += st->step_sweep;
  t->step_bsearch += st->step_bsearch;
  t->step_tree += st->step_tree;
  t->regions += st->regions;
}

/* Parallel INTERSECTION OF: the pieces are runs of consecutive
 * partitions (rt_isect_slice), so their outputs in piece order are the
 * regions one iterator serves. */
typedef struct iv_ipiece {
  uint32_t q0, q1;
  uint64_t rows;       /* of the operands in its partitions */
  rt_isect_out out;
  rt_isect_stats st;
  rt_err err;
  bool failed;
  /* streamed (iv_isect_stream): */
  rt_isect *sl;        /* its slice while it is made */
  struct iv_chunk *head, *tail;   /* its chunks made but not yet published */
  bool done;
} iv_ipiece;

typedef struct iv_pisect {
  const ir_op *op;
  const rt_isect *base;
  int k;
  int64_t np;
  iv_ipiece *pc;
  iv_chunks ch;        /* ts, dur, then each operand's rows */
  iv_wrels wr;
} iv_pisect;

static void iv_pisect_piece(void *p, int worker, int64_t i) {
  (void)worker;
  iv_pisect *x = p;
  iv_ipiece *pc = &x->pc[i];
  rt_isect *sl = rt_isect_slice(x->base, pc->q0, pc->q1, &pc->st, &pc->err);
  /* Disjoint partitions make at most a region per row (rt_isect_run's
   * reservation): room for that at once, not by doublings and copies. */
  pc->out.k = x->k;
  pc->out.rows = rt_mem_calloc((size_t)x->k, sizeof *pc->out.rows);
  if (sl && (!pc->out.rows || !rt_isect_reserve(&pc->out, (size_t)pc->rows + 1))) {
    rt_errorf(&pc->err, -1, "%s: out of memory", x->op->stage);
    pc->failed = true;
  } else {
    pc->failed = !sl || rt_isect_next(sl, &pc->out, SIZE_MAX) < 0;
  }
  rt_isect_end(sl);
}

static void iv_pisect_load(void *p, int worker, int64_t at, uint32_t n, rt_batch *b) {
  iv_pisect *x = p;
  const ir_op *op = x->op;
  int k = x->k;
  const void *col[RT_LANES_MAXKEYS + 2];
  iv_chunks_get(&x->ch, worker, at, n, col);
  b->cols[op->iv.ts_out] = iv_flat(RT_I64, col[0], 0, NULL);
  b->cols[op->iv.dur_out] = iv_flat(RT_I64, col[1], 0, NULL);
  for (int j = 0; j < k; j++) iv_sel_views(&x->wr.r[worker * k + j], col[2 + j], n, b);
}

/* ---- INTERSECTION streamed to the rows after it ---- */

/* When every partition is disjoint its regions are bounded by its rows,
 * and the pieces need not be made whole before the rows after them run
 * (iv_isect_par's way, which wrote all regions into fresh memory and
 * read them back from memory: on this kind of machine, where a first
 * touch of a page costs as much as writing it several times, that was
 * most of the difference between one thread and two). Instead the
 * pieces are made a chunk of IV_CHUNK regions at a time, by the same
 * workers that run the morsels (ex_par_src.more): a worker takes a ready
 * morsel if there is one, else makes the next chunk of its piece (or
 * starts the next piece). A piece's chunks are published, in output
 * order, once every piece before it is done; the morsels read the
 * published rows, so every batch, morsel and partial sum is still one
 * thread's. A chunk whose rows have all been run goes back to a free
 * list and is filled again: the memory in use is the chunks of pieces
 * waiting for an earlier one, and most chunks are read while still in
 * cache. The earliest failed piece ends the output there (nothing of it
 * or after it is published) and its error is reported, as before. */
enum { IV_CHUNK = 65536 };

/* Regions per chunk: IV_CHUNK (1.5 MiB of two operands' regions: a
 * chunk stays in a core's cache between its making and its morsels), or
 * under the test knob of small batches (exec.h) 700, so that tests meet
 * many chunks, reused ones, and batches across chunks. */
static size_t iv_chunk_rows(const ex_run *run) {
  return run->batch_rows > 0 && run->batch_rows < RT_BATCH ? 700 : IV_CHUNK;
}

typedef struct iv_chunk {
  rt_isect_out out;        /* its regions (arrays kept when it is reused) */
  int64_t used;            /* of its rows run (ex_par_src.done) */
  struct iv_chunk *next;   /* in its piece's list, or the free list */
  struct iv_chunk *link;   /* every chunk made, for the end */
} iv_chunk;

typedef struct iv_pstream {
  iv_pisect *x;
  size_t chunk;            /* regions per chunk (iv_chunk_rows) */
  pthread_mutex_t mu;      /* guards everything below and the pieces' lists */
  int64_t next;            /* the next piece to start */
  int64_t lead;            /* the first piece not wholly published */
  int64_t stop;            /* the earliest failed piece (np: none) */
  int64_t *held;           /* per worker: the piece it makes, or -1 */
  iv_chunk **led;          /* published chunks in output order ... */
  int64_t *ledat;          /* ... and their first output rows */
  int64_t nled, capled;
  int64_t avail;           /* rows published */
  bool complete;           /* nothing more will be */
  iv_chunk *free, *all;
  char *scratch;           /* per worker: (2 + k) columns of RT_BATCH * 8 bytes */
} iv_pstream;

/* Publishes what the pieces from the lead on may show (ps->mu held). */
static void iv_ps_publish(iv_pstream *ps) {
  iv_pisect *x = ps->x;
  while (ps->lead < x->np) {
    iv_ipiece *pc = &x->pc[ps->lead];
    if (pc->failed) break;
    for (iv_chunk *c = pc->head; c; c = c->next) {
      ps->led[ps->nled] = c;
      ps->ledat[ps->nled++] = ps->avail;
      ps->avail += (int64_t)c->out.n;
    }
    pc->head = pc->tail = NULL;
    if (!pc->done) return;
    ps->lead++;
  }
  ps->complete = true;
}

static int64_t iv_ps_avail(void *p, bool *complete) {
  iv_pstream *ps = p;
  pthread_mutex_lock(&ps->mu);
  int64_t n = ps->avail;
  *complete = ps->complete;
  pthread_mutex_unlock(&ps->mu);
  return n;
}

/* A chunk with room for IV_CHUNK regions (from the free list when it has one). */
static iv_chunk *iv_ps_chunk(iv_pstream *ps) {
  pthread_mutex_lock(&ps->mu);
  iv_chunk *c = ps->free;
  if (c) ps->free = c->next;
  pthread_mutex_unlock(&ps->mu);
  if (c) return c;
  int k = ps->x->k;
  c = rt_mem_calloc(1, sizeof *c);
  if (!c) return NULL;
  c->out.k = k;
  c->out.rows = rt_mem_calloc((size_t)k, sizeof *c->out.rows);
  if (!c->out.rows || !rt_isect_reserve(&c->out, ps->chunk)) {
    rt_isect_free(&c->out);
    rt_mem_free(c);
    return NULL;
  }
  pthread_mutex_lock(&ps->mu);
  c->link = ps->all;
  ps->all = c;
  pthread_mutex_unlock(&ps->mu);
  return c;
}

static int iv_ps_more(void *p, int worker) {
  iv_pstream *ps = p;
  iv_pisect *x = ps->x;
  pthread_mutex_lock(&ps->mu);
  int64_t i = ps->held[worker];
  if (i < 0) {
    if (ps->next >= x->np || ps->next >= ps->stop) {
      pthread_mutex_unlock(&ps->mu);
      return 0;
    }
    i = ps->held[worker] = ps->next++;
  }
  pthread_mutex_unlock(&ps->mu);
  iv_ipiece *pc = &x->pc[i];
  iv_chunk *c = iv_ps_chunk(ps);
  int64_t got = -1;
  if (c && !pc->sl) pc->sl = rt_isect_slice(x->base, pc->q0, pc->q1, &pc->st, &pc->err);
  if (c && pc->sl) {
    c->out.n = 0;
    c->used = 0;
    got = rt_isect_next(pc->sl, &c->out, ps->chunk);
  }
  if (got < 0 && !pc->err.set) rt_errorf(&pc->err, -1, "%s: out of memory", x->op->stage);
  rt_isect *ended = got < (int64_t)ps->chunk ? pc->sl : NULL;   /* rt_isect_next stops short only at the end */
  pthread_mutex_lock(&ps->mu);
  if (got > 0) {
    c->next = NULL;
    if (pc->tail) pc->tail->next = c;
    else pc->head = c;
    pc->tail = c;
  } else if (c) {
    c->next = ps->free;
    ps->free = c;
  }
  if (got < (int64_t)ps->chunk) {
    pc->done = true;
    pc->failed = got < 0;
    pc->sl = NULL;
    ps->held[worker] = -1;
    if (pc->failed && i < ps->stop) ps->stop = i;
  }
  iv_ps_publish(ps);
  pthread_mutex_unlock(&ps->mu);
  rt_isect_end(ended);
  return 1;
}

/* The published chunk holding output row at (ps->mu held). */
static int64_t iv_ps_find(const iv_pstream *ps, int64_t at) {
  return iv_par_piece(ps->ledat, ps->nled, at);
}

static void iv_ps_load(void *p, int worker, int64_t at, uint32_t n, rt_batch *b) {
  iv_pstream *ps = p;
  iv_pisect *x = ps->x;
  const ir_op *op = x->op;
  int k = x->k, nc = 2 + k;
  const void *col[RT_LANES_MAXKEYS + 2];
  pthread_mutex_lock(&ps->mu);
  int64_t q = iv_ps_find(ps, at);
  const iv_chunk *c = ps->led[q];
  int64_t from = at - ps->ledat[q];
  if (from + n <= (int64_t)c->out.n) {
    col[0] = c->out.ts + from;
    col[1] = c->out.dur + from;
    for (int j = 0; j < k; j++) col[2 + j] = c->out.rows[j] + from;
  } else {
    /* a batch across chunks: copied into the worker's scratch */
    char *base = ps->scratch + (size_t)worker * (size_t)nc * RT_BATCH * 8;
    for (int j = 0; j < nc; j++) col[j] = base + (size_t)j * RT_BATCH * 8;
    for (uint32_t got = 0; got < n; q++, from = 0) {
      c = ps->led[q];
      uint32_t m = (uint32_t)((int64_t)c->out.n - from < n - got ? (int64_t)c->out.n - from : n - got);
      memcpy((int64_t *)col[0] + got, c->out.ts + from, m * sizeof(int64_t));
      memcpy((int64_t *)col[1] + got, c->out.dur + from, m * sizeof(int64_t));
      for (int j = 0; j < k; j++) memcpy((uint32_t *)col[2 + j] + got, c->out.rows[j] + from, m * sizeof(uint32_t));
      got += m;
    }
  }
  pthread_mutex_unlock(&ps->mu);
  b->cols[op->iv.ts_out] = iv_flat(RT_I64, col[0], 0, NULL);
  b->cols[op->iv.dur_out] = iv_flat(RT_I64, col[1], 0, NULL);
  for (int j = 0; j < k; j++) iv_sel_views(&x->wr.r[worker * k + j], col[2 + j], n, b);
}

static void iv_ps_done(void *p, int64_t at, int64_t n) {
  iv_pstream *ps = p;
  pthread_mutex_lock(&ps->mu);
  for (int64_t q = n > 0 ? iv_ps_find(ps, at) : 0; n > 0; q++) {
    iv_chunk *c = ps->led[q];
    int64_t end = ps->ledat[q] + (int64_t)c->out.n, take = (end < at + n ? end : at + n) - at;
    c->used += take;
    at += take;
    n -= take;
    if (c->used == (int64_t)c->out.n) {
      c->next = ps->free;
      ps->free = c;
    }
  }
  pthread_mutex_unlock(&ps->mu);
}

static int iv_isect_stream(ex_run *run, ex_seg *s, iv_pisect *x, ex_pick_fn pick, void *ctx) {
  const ir_op *op = x->op;
  int nw = run->threads;
  iv_pstream ps = {.x = x, .chunk = iv_chunk_rows(run), .stop = x->np};
  int64_t bound = 0;
  for (int64_t i = 0; i < x->np; i++) {
    bound += (int64_t)x->pc[i].rows;
    ps.capled += (int64_t)(x->pc[i].rows / ps.chunk) + 2;
  }
  ps.held = malloc(sizeof *ps.held * (size_t)nw);
  ps.led = malloc(sizeof *ps.led * (size_t)(ps.capled + 1));
  ps.ledat = malloc(sizeof *ps.ledat * (size_t)(ps.capled + 1));
  ps.scratch = malloc((size_t)nw * (size_t)(2 + x->k) * RT_BATCH * 8 + 1);
  int rc = 0;
  if (!ps.held || !ps.led || !ps.ledat || !ps.scratch) rc = ex_op_fail(run, op, "out of memory");
  for (int i = 0; ps.held && i < nw; i++) ps.held[i] = -1;
  if (rc == 0) {
    pthread_mutex_init(&ps.mu, NULL);
    ex_par_src src = {.nrows = bound + 1, .batch_rows = RT_BATCH, .load = iv_ps_load, .src = &ps,
                      .avail = iv_ps_avail, .more = iv_ps_more, .done = iv_ps_done};
    rc = ex_par_rows(run, s, &src, pick, ctx);
    pthread_mutex_destroy(&ps.mu);
  }
  /* the earliest failed piece, once the rows before it ran */
  for (int64_t i = 0; rc == 0 && i < x->np; i++)
    if (x->pc[i].failed) {
      run->err = x->pc[i].err;
      rc = iv_rt_failed(run, op);
    }
  for (int64_t i = 0; i < x->np; i++) rt_isect_end(x->pc[i].sl);   /* left unfinished */
  for (iv_chunk *c = ps.all, *n; c; c = n) {
    n = c->link;
    rt_isect_free(&c->out);
    rt_mem_free(c);
  }
  free(ps.held);
  free(ps.led);
  free(ps.ledat);
  free(ps.scratch);
  return rc;
}

static int iv_isect_par(ex_run *run, ex_seg *s, rt_isect *it, const iv_rel *rels, rt_isect_stats *st,
                        ex_pick_fn pick, void *ctx) {
  const ir_op *op = s->seg->source;
  int k = op->iv.nrel, nw = run->threads;
  uint32_t nq = rt_isect_nparts(it);
  uint64_t total = 0;
  for (uint32_t q = 0; q < nq; q++) total += rt_isect_part_rows(it, q);
  uint64_t share = iv_par_share(run, total);
  iv_pisect x = {.op = op, .base = it, .k = k};
  x.pc = calloc((size_t)nq + 1, sizeof *x.pc);
  int rc = 0;
  if (k > RT_LANES_MAXKEYS) rc = ex_op_fail(run, op, "too many relations");
  else if (!x.pc || !iv_chunks_init(&x.ch, nq, 2 + k, nw) || !iv_wrels_init(&x.wr, rels, k, nw))
    rc = ex_op_fail(run, op, "out of memory");
  /* a piece ends before a partition that would take it past the share
   * (8 like partitions on 2 threads: 8 pieces, not 4 of two and an odd one) */
  bool disjoint = true;
  for (uint32_t q = 0; rc == 0 && q < nq;) {
    iv_ipiece *pc = &x.pc[x.np++];
    pc->q0 = q;
    for (; q < nq; q++) {
      uint64_t r = rt_isect_part_rows(it, q);
      if (pc->rows > 0 && pc->rows + r > share) break;
      pc->rows += r;
      disjoint &= rt_isect_part_disjoint(it, q);
    }
    pc->q1 = q;
  }
  if (rc == 0 && disjoint) {
    rc = iv_isect_stream(run, s, &x, pick, ctx);
    for (int64_t i = 0; i < x.np; i++) iv_add_stats(st, &x.pc[i].st);
    iv_wrels_free(&x.wr);
    iv_chunks_free(&x.ch);
    free(x.pc);
    return rc;
  }
  if (rc == 0) {
    rt_par par = {ex_par_runner, run->pool, run->threads};
    rt_par_for_w(&par, x.np, iv_pisect_piece, &x);
  }
  /* One thread would stop at the first failing partition, after serving
   * the regions before it: the same here. */
  int64_t failed = -1;
  x.ch.np = x.np;
  x.ch.elem[0] = x.ch.elem[1] = sizeof(int64_t);
  for (int j = 0; j < k; j++) x.ch.elem[2 + j] = sizeof(uint32_t);
  for (int64_t i = 0; rc == 0 && i < x.np; i++) {
    const rt_isect_out *o = &x.pc[i].out;
    iv_add_stats(st, &x.pc[i].st);
    x.ch.off[i + 1] = x.ch.off[i] + (int64_t)o->n;
    x.ch.cols[i * (2 + k)] = o->ts;
    x.ch.cols[i * (2 + k) + 1] = o->dur;
    for (int j = 0; j < k; j++) x.ch.cols[i * (2 + k) + 2 + j] = o->rows[j];
    if (x.pc[i].failed) {
      failed = i;
      break;
    }
  }
  int64_t nrows = rc ? 0 : failed >= 0 ? x.ch.off[failed] : x.ch.off[x.np];
  if (rc == 0 && nrows > 0) {
    ex_par_src src = {.nrows = nrows, .batch_rows = RT_BATCH, .load = iv_pisect_load, .src = &x};
    rc = ex_par_rows(run, s, &src, pick, ctx);
  }
  if (rc == 0 && failed >= 0) {
    run->err = x.pc[failed].err;
    rc = iv_rt_failed(run, op);
  }
  for (int64_t i = 0; x.pc && i < x.np; i++) rt_isect_free(&x.pc[i].out);
  iv_wrels_free(&x.wr);
  iv_chunks_free(&x.ch);
  free(x.pc);
  return rc;
}

static int iv_isect(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *dn) {
  const ir_op *op = s->seg->source;
  int k = op->iv.nrel;
  iv_rel *rels = calloc((size_t)k, sizeof *rels);
  rt_ivrel *rv = calloc((size_t)k, sizeof *rv);
  bool *reads = iv_reads(run, s);
  rt_isect_out out = {0};
  rt_isect *it = NULL;
  rt_isect_stats st = {0};
  int rc = 0;
  if (!rels || !rv) rc = ex_op_fail(run, op, "out of memory");
  for (int j = 0; j < k && rc == 0; j++) {
    rc = iv_rel_open(run, op, j, reads, &rels[j]);
    rels[j].r.name = op->iv.names[j];
    rv[j] = rels[j].r;
  }
  rt_par par = {ex_par_runner, run->pool, run->threads};
  const rt_par *pp = !dn && ex_par_steps_ok(run, s) ? &par : NULL;
  if (rc == 0 && !(it = rt_isect_begin_par(k, rv, op->stage, &st, pp, &run->err))) rc = iv_rt_failed(run, op);
  bool served = false;
  if (rc == 0 && iv_par_wanted(run, s, dn, rt_isect_nparts(it), st.rows_in)) {
    rc = iv_isect_par(run, s, it, rels, &st, pick, ctx);
    served = true;
  }
  while (rc == 0 && !served && !s->done) {
    out.n = 0;
    int64_t got = rt_isect_next(it, &out, RT_BATCH);
    if (got <= 0) {
      rc = got < 0 ? iv_rt_failed(run, op) : 0;
      break;
    }
    uint32_t n = (uint32_t)got;
    b->cols[op->iv.ts_out] = iv_flat(RT_I64, out.ts, 0, NULL);
    b->cols[op->iv.dur_out] = iv_flat(RT_I64, out.dur, 0, NULL);
    for (int j = 0; j < k; j++) iv_sel_views(&rels[j], out.rows[j], n, b);
    rc = run->feed(run, s, b, n, pick, ctx, dn);
  }
  if (it) iv_add_stats(&run->isect_stats, &st);
  rt_isect_end(it);
  rt_isect_free(&out);
  for (int j = 0; rels && j < k; j++) iv_rel_free(&rels[j]);
  free(rels);
  free(rv);
  free(reads);
  ex_iv_release(run, op->iv.bufs, op->iv.nrel);
  return rc;
}

/* ---- INTERVAL FLATTEN ----------------------------------------------------- */

/* Views of segments start..start+n-1 of out (start a multiple of 64). */
static void iv_flat_views(const ir_op *op, iv_rel *rel, const rt_flat_out *out, size_t start,
                          uint32_t n, const int *outc, int na, rt_batch *b) {
  b->cols[op->iv.ts_out] = iv_flat(RT_I64, out->ts, (int64_t)start, NULL);
  b->cols[op->iv.dur_out] = iv_flat(RT_I64, out->dur, (int64_t)start, NULL);
  for (int q = 0; q < op->iv.nper; q++) {
    int c = ex_buf_col(op->iv.bufs[0], op->iv.per[0][q]);
    iv_rel_view(rel, c, out->rep + start, n, &b->cols[op->iv.per[0][q]]);
  }
  for (int a = 0; a < na; a++)
    b->cols[outc[a]] = iv_flat(out->type[a], out->val[a], (int64_t)start, out->valid[a]);
}

static int iv_flat_types(ex_run *run, const ir_op *op, const rt_flat_out *out, const int *outc, int na) {
  for (int a = 0; a < na; a++)
    if (rt_store_type(run->plan->cols[outc[a]].type) != out->type[a])
      return ex_op_fail(run, op, "internal error: an aggregate has another type than planned");
  return 0;
}

/* FLATTEN's segments are made a chunk at a time and run through the rest
 * of the segment as they are made, on one thread as on several, so the
 * output never exists all at once (a first touch of a page costs here as
 * much as writing it several times: most of a whole output's cost was
 * the kernel zeroing its pages). One thread sweeps up to a chunk's
 * segments past those not yet fed, feeds the whole batches and moves
 * the rest to the front; several run iv_isect_stream's scheme: the
 * workers make the pieces' chunks when no morsel is ready, a piece's
 * chunks are published once the pieces before it are done, and a chunk
 * whose rows have run is filled again. Both feed batches of RT_BATCH
 * output positions from the first, every segment before a failing one,
 * then FLATTEN's error, so errors and sums are the same. */
static void iv_flat_set(rt_flat_out *g, int na, const rt_flat_out *like) {
  memset(g, 0, sizeof *g);
  g->naggs = na;
  g->type = calloc((size_t)na + 1, sizeof *g->type);
  g->val = calloc((size_t)na + 1, sizeof *g->val);
  g->valid = calloc((size_t)na + 1, sizeof *g->valid);
  g->ts = malloc(sizeof *g->ts * RT_BATCH);
  g->dur = malloc(sizeof *g->dur * RT_BATCH);
  g->rep = malloc(sizeof *g->rep * RT_BATCH);
  for (int a = 0; g->type && g->val && g->valid && a < na; a++) {
    g->type[a] = like->type[a];
    g->val[a] = malloc(8 * RT_BATCH);
    g->valid[a] = malloc(8 * RT_BITWORDS(RT_BATCH));
  }
}

static bool iv_flat_ok(const rt_flat_out *g) {
  if (!g->type || !g->val || !g->valid || !g->ts || !g->dur || !g->rep) return false;
  for (int a = 0; a < g->naggs; a++)
    if (!g->val[a] || !g->valid[a]) return false;
  return true;
}

static void iv_flat_unset(rt_flat_out *g) {
  /* val and valid are made apart: either may be missing (out of memory) */
  for (int a = 0; g->val && a < g->naggs; a++) free(g->val[a]);
  for (int a = 0; g->valid && a < g->naggs; a++) free(g->valid[a]);
  free(g->ts), free(g->dur), free(g->rep), free(g->type), free(g->val), free(g->valid);
  memset(g, 0, sizeof *g);
}

/* Appends segments from..from+m-1 of o to g (g->n of them so far). */
static void iv_flat_copy(rt_flat_out *g, const rt_flat_out *o, size_t from, size_t m) {
  size_t got = g->n;
  memcpy(g->ts + got, o->ts + from, m * sizeof *g->ts);
  memcpy(g->dur + got, o->dur + from, m * sizeof *g->dur);
  memcpy(g->rep + got, o->rep + from, m * sizeof *g->rep);
  for (int a = 0; a < g->naggs; a++) {
    size_t sz = o->type[a] == RT_STR ? 4 : 8;
    memcpy((char *)g->val[a] + got * sz, (const char *)o->val[a] + from * sz, m * sz);
    for (size_t i = 0; i < m; i++)
      if (rt_bit(o->valid[a], (uint32_t)(from + i))) rt_bit_set(g->valid[a], (uint32_t)(got + i));
  }
  g->n += m;
}

typedef struct iv_fchunk {
  rt_flat_out out;         /* its segments (arrays kept when it is reused) */
  int64_t used;            /* of its rows run (ex_par_src.done) */
  struct iv_fchunk *next;  /* in its piece's list, or the free list */
  struct iv_fchunk *link;  /* every chunk made, for the end */
} iv_fchunk;

typedef struct iv_fpiece {
  iv_fchunk *head, *tail;  /* its chunks made but not yet published */
  bool done, failed;
  rt_err err;
} iv_fpiece;

typedef struct iv_fstream {
  const ir_op *op;
  rt_flatten *f;
  size_t chunk;            /* segments per chunk (iv_chunk_rows) */
  const int *outc;
  int na;
  iv_wrels wr;             /* per worker: the input, for the PER columns */
  rt_flat_out *g;          /* per worker: a batch of segments */
  int64_t np;
  iv_fpiece *pc;
  pthread_mutex_t mu;      /* guards everything below and the pieces' lists */
  int64_t next, lead, stop;   /* as iv_pstream's */
  int64_t *held;
  iv_fchunk **led;
  int64_t *ledat;
  int64_t nled;
  int64_t avail;
  bool complete;
  iv_fchunk *free, *all;
} iv_fstream;

/* Publishes what the pieces from the lead on may show (mu held): a failed
 * piece's segments before its failure too, and nothing after it. */
static void iv_fs_publish(iv_fstream *fs) {
  while (fs->lead < fs->np) {
    iv_fpiece *pc = &fs->pc[fs->lead];
    for (iv_fchunk *c = pc->head; c; c = c->next) {
      fs->led[fs->nled] = c;
      fs->ledat[fs->nled++] = fs->avail;
      fs->avail += (int64_t)c->out.n;
    }
    pc->head = pc->tail = NULL;
    if (!pc->done) return;
    if (pc->failed) break;
    fs->lead++;
  }
  fs->complete = true;
}

static int64_t iv_fs_avail(void *p, bool *complete) {
  iv_fstream *fs = p;
  pthread_mutex_lock(&fs->mu);
  int64_t n = fs->avail;
  *complete = fs->complete;
  pthread_mutex_unlock(&fs->mu);
  return n;
}

/* An empty chunk (from the free list when it has one), or NULL. */
static iv_fchunk *iv_fs_chunk(iv_fstream *fs, rt_err *err) {
  pthread_mutex_lock(&fs->mu);
  iv_fchunk *c = fs->free;
  if (c) fs->free = c->next;
  pthread_mutex_unlock(&fs->mu);
  if (c) {
    rt_flatten_out_drop(&c->out, c->out.n);
    c->used = 0;
    return c;
  }
  c = rt_mem_calloc(1, sizeof *c);
  if (!c) return NULL;
  /* room for the chunk and the most one boundary adds past it */
  if (!rt_flatten_out_init(fs->f, &c->out, fs->chunk + 4, err)) {
    rt_flatten_free(&c->out);
    rt_mem_free(c);
    return NULL;
  }
  pthread_mutex_lock(&fs->mu);
  c->link = fs->all;
  fs->all = c;
  pthread_mutex_unlock(&fs->mu);
  return c;
}

static int iv_fs_more(void *p, int worker) {
  iv_fstream *fs = p;
  pthread_mutex_lock(&fs->mu);
  int64_t i = fs->held[worker];
  if (i < 0) {
    if (fs->next >= fs->np || fs->next >= fs->stop) {
      pthread_mutex_unlock(&fs->mu);
      return 0;
    }
    i = fs->held[worker] = fs->next++;
  }
  pthread_mutex_unlock(&fs->mu);
  iv_fpiece *pc = &fs->pc[i];
  iv_fchunk *c = iv_fs_chunk(fs, &pc->err);
  int r = c ? rt_flatten_next(fs->f, worker, i, &c->out, fs->chunk, &pc->err) : -1;
  if (r < 0 && !pc->err.set) rt_errorf(&pc->err, -1, "%s: out of memory", fs->op->stage);
  pthread_mutex_lock(&fs->mu);
  if (c && c->out.n > 0) {
    c->next = NULL;
    if (pc->tail) pc->tail->next = c;
    else pc->head = c;
    pc->tail = c;
  } else if (c) {
    c->next = fs->free;
    fs->free = c;
  }
  if (r <= 0) {
    pc->done = true;
    pc->failed = r < 0;
    fs->held[worker] = -1;
    if (pc->failed && i < fs->stop) fs->stop = i;
  }
  iv_fs_publish(fs);
  pthread_mutex_unlock(&fs->mu);
  return 1;
}

/* Validity bits from..from+n-1 of src (nw words in all) into dst[0..). */
static void iv_bits_from(uint64_t *dst, const uint64_t *src, size_t nw, size_t from, uint32_t n) {
  size_t w0 = from / 64, sh = from % 64, m = RT_BITWORDS(n);
  for (size_t k = 0; k < m; k++) {
    uint64_t hi = w0 + k + 1 < nw ? src[w0 + k + 1] << (64 - sh) : 0;
    dst[k] = src[w0 + k] >> sh | hi;
  }
  if (n % 64) dst[m - 1] &= (1ull << (n % 64)) - 1;
}

static void iv_fs_load(void *p, int worker, int64_t at, uint32_t n, rt_batch *b) {
  iv_fstream *fs = p;
  rt_flat_out *g = &fs->g[worker];
  int na = fs->na;
  /* published chunks are not touched again before their rows have run
   * (iv_fs_done), nor are the entries of led before nled */
  pthread_mutex_lock(&fs->mu);
  int64_t q = iv_par_piece(fs->ledat, fs->nled, at);
  pthread_mutex_unlock(&fs->mu);
  const rt_flat_out *o = &fs->led[q]->out;
  int64_t from = at - fs->ledat[q];
  if (from + n <= (int64_t)o->n) {
    /* in one chunk: views at the batch's first segment, only the
     * validity shifted onto whole words when it starts inside one */
    void *val[na + 1];
    uint64_t *valid[na + 1];
    rt_flat_out v = {.naggs = na, .n = n, .ts = o->ts + from, .dur = o->dur + from, .rep = o->rep + from,
                     .type = o->type, .val = val, .valid = valid};
    for (int a = 0; a < na; a++) {
      val[a] = (char *)o->val[a] + (size_t)from * (o->type[a] == RT_STR ? 4 : 8);
      if (from % 64 == 0) {
        valid[a] = o->valid[a] + from / 64;
      } else {
        iv_bits_from(g->valid[a], o->valid[a], RT_BITWORDS(o->cap), (size_t)from, n);
        valid[a] = g->valid[a];
      }
    }
    iv_flat_views(fs->op, &fs->wr.r[worker], &v, 0, n, fs->outc, na, b);
    return;
  }
  /* a batch across chunks: copied */
  g->n = 0;
  for (int a = 0; a < na; a++) memset(g->valid[a], 0, RT_BITWORDS(n) * 8);
  for (; g->n < n; q++, from = 0) {
    o = &fs->led[q]->out;
    size_t m = (size_t)((int64_t)o->n - from);
    if (m > n - g->n) m = n - g->n;
    iv_flat_copy(g, o, (size_t)from, m);
  }
  iv_flat_views(fs->op, &fs->wr.r[worker], g, 0, n, fs->outc, na, b);
}

static void iv_fs_done(void *p, int64_t at, int64_t n) {
  iv_fstream *fs = p;
  pthread_mutex_lock(&fs->mu);
  for (int64_t q = n > 0 ? iv_par_piece(fs->ledat, fs->nled, at) : 0; n > 0; q++) {
    iv_fchunk *c = fs->led[q];
    int64_t end = fs->ledat[q] + (int64_t)c->out.n, take = (end < at + n ? end : at + n) - at;
    c->used += take;
    at += take;
    n -= take;
    if (c->used == (int64_t)c->out.n) {
      c->next = fs->free;
      fs->free = c;
    }
  }
  pthread_mutex_unlock(&fs->mu);
}

static int iv_flatten_par(ex_run *run, ex_seg *s, iv_rel *rel, rt_flatten *f, const rt_flat_out *like,
                          const int *outc, int na, ex_pick_fn pick, void *ctx) {
  const ir_op *op = s->seg->source;
  int nw = run->threads;
  iv_fstream fs = {.op = op, .f = f, .chunk = iv_chunk_rows(run), .outc = outc, .na = na,
                   .np = rt_flatten_npieces(f)};
  fs.stop = fs.np;
  int64_t bound = 0, capled = 0;
  for (int64_t i = 0; i < fs.np; i++) {
    uint64_t r = rt_flatten_piece_rows(f, i);
    bound += 2 * (int64_t)r;   /* at most 2 segments per row */
    capled += (int64_t)(2 * r / fs.chunk) + 2;
  }
  fs.pc = calloc((size_t)fs.np + 1, sizeof *fs.pc);
  fs.held = malloc(sizeof *fs.held * (size_t)nw);
  fs.led = malloc(sizeof *fs.led * (size_t)(capled + 1));
  fs.ledat = malloc(sizeof *fs.ledat * (size_t)(capled + 1));
  fs.g = calloc((size_t)nw, sizeof *fs.g);
  int rc = 0;
  if (!fs.pc || !fs.held || !fs.led || !fs.ledat || !fs.g || !iv_wrels_init(&fs.wr, rel, 1, nw))
    rc = ex_op_fail(run, op, "out of memory");
  for (int i = 0; fs.g && i < nw; i++) {
    iv_flat_set(&fs.g[i], na, like);
    if (rc == 0 && !iv_flat_ok(&fs.g[i])) rc = ex_op_fail(run, op, "out of memory");
  }
  for (int i = 0; fs.held && i < nw; i++) fs.held[i] = -1;
  if (rc == 0) {
    pthread_mutex_init(&fs.mu, NULL);
    iv_fs_publish(&fs);   /* no pieces: complete */
    ex_par_src src = {.nrows = bound + 1, .batch_rows = RT_BATCH, .load = iv_fs_load, .src = &fs,
                      .avail = iv_fs_avail, .more = iv_fs_more, .done = iv_fs_done};
    rc = ex_par_rows(run, s, &src, pick, ctx);
    pthread_mutex_destroy(&fs.mu);
  }
  /* the earliest failed piece, once the segments before it ran */
  for (int64_t i = 0; rc == 0 && fs.pc && i < fs.np; i++)
    if (fs.pc[i].failed) {
      run->err = fs.pc[i].err;
      rc = iv_rt_failed(run, op);
    }
  for (iv_fchunk *c = fs.all, *n; c; c = n) {
    n = c->link;
    rt_flatten_free(&c->out);
    rt_mem_free(c);
  }
  for (int i = 0; fs.g && i < nw; i++) iv_flat_unset(&fs.g[i]);
  free(fs.g);
  free(fs.pc);
  free(fs.held);
  free(fs.led);
  free(fs.ledat);
  iv_wrels_free(&fs.wr);
  return rc;
}

/* One thread: a chunk of segments past those not yet fed, the whole
 * batches fed (all at the end or on an error), the rest moved to the
 * front (a whole number of batches went: validity words move whole). */
static int iv_flatten_one(ex_run *run, ex_seg *s, rt_batch *b, iv_rel *rel, rt_flatten *f, rt_flat_out *out,
                          const int *outc, int na, ex_pick_fn pick, void *ctx, void *dn) {
  const ir_op *op = s->seg->source;
  size_t chunk = iv_chunk_rows(run);
  int rc = 0;
  rt_err err = {0};   /* the run's once the segments before it have run */
  for (int64_t i = 0; rc == 0 && i < rt_flatten_npieces(f) && !s->done; i++) {
    int r = 1;
    while (rc == 0 && r > 0 && !s->done) {
      r = rt_flatten_next(f, 0, i, out, out->n + chunk, &err);
      size_t fed = 0;
      while (rc == 0 && !s->done && (out->n - fed >= RT_BATCH || (r <= 0 && out->n > fed))) {
        uint32_t n = out->n - fed < RT_BATCH ? (uint32_t)(out->n - fed) : RT_BATCH;
        iv_flat_views(op, rel, out, fed, n, outc, na, b);
        rc = run->feed(run, s, b, n, pick, ctx, dn);
        fed += n;
      }
      if (rc == 0 && r < 0) {
        run->err = err;
        rc = iv_rt_failed(run, op);
      }
      if (rc == 0 && r > 0) rt_flatten_out_drop(out, fed);
    }
  }
  return rc;
}

static int iv_flatten(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *dn) {
  const ir_op *op = s->seg->source;
  iv_rel rel;
  rt_flat_out out = {0};
  bool *reads = iv_reads(run, s);
  int na = 0, rc = iv_rel_open(run, op, 0, reads, &rel);
  rt_flat_agg *aggs = calloc((size_t)op->iv.naggs + 1, sizeof *aggs);
  int64_t **own = calloc(2 * (size_t)op->iv.naggs + 1, sizeof *own);
  int *outc = calloc((size_t)op->iv.naggs + 1, sizeof *outc);
  if (rc == 0 && (!aggs || !own || !outc)) rc = ex_op_fail(run, op, "out of memory");
  for (int a = 0; rc == 0 && a < op->iv.naggs; a++) {
    const ir_agg *ag = &op->iv.aggs[a];
    if (!ag->live) continue;
    aggs[na].kind = ag->kind;
    aggs[na].in = RT_I64;
    outc[na] = ag->out_col;
    if (ag->kind != RT_AGG_COUNT_STAR) {
      int c = ex_buf_col(op->iv.bufs[0], ag->arg_col);
      if (c < 0) {
        rc = ex_op_fail(run, op, "an aggregate input was not buffered");
        break;
      }
      aggs[na].valid = iv_rel_valid(&rel, c);
      /* double values are read as their bits; COUNT of strings counts
       * non-NULL ids as integers; GROUP_CONCAT reads the ids */
      if (iv_rel_type(&rel, c) == RT_F64) aggs[na].in = RT_F64;
      if (ag->kind == RT_AGG_GROUP_CONCAT) aggs[na].in = RT_STR;
      aggs[na].v = iv_rel_i64(&rel, c, &own[2 * na]);
      if (!aggs[na].v && rel.r.n) rc = ex_op_fail(run, op, "out of memory");
    }
    if (rc == 0 && ag->arg2_col >= 0) {
      /* ARG_MAX's value, GROUP_CONCAT's separator */
      int c = ex_buf_col(op->iv.bufs[0], ag->arg2_col);
      if (c < 0) {
        rc = ex_op_fail(run, op, "an aggregate input was not buffered");
        break;
      }
      rt_type t = iv_rel_type(&rel, c);
      aggs[na].in2 = t == RT_F64 || t == RT_STR ? t : RT_I64;
      aggs[na].valid2 = iv_rel_valid(&rel, c);
      aggs[na].v2 = iv_rel_i64(&rel, c, &own[2 * na + 1]);
      if (!aggs[na].v2 && rel.r.n) rc = ex_op_fail(run, op, "out of memory");
    } else if ((ag->kind == RT_AGG_ARG_MAX || ag->kind == RT_AGG_ARG_MIN) && rc == 0) {
      rc = ex_op_fail(run, op, "an aggregate value was not buffered");
    }
    na++;
  }
  /* GROUP_CONCAT interns strings: one thread sweeps it */
  bool concat = false;
  for (int a = 0; a < na; a++) concat |= aggs[a].kind == RT_AGG_GROUP_CONCAT;
  bool par = rc == 0 && !concat && iv_par_wanted(run, s, dn, 2, rel.r.n);
  rt_par pp = {ex_par_runner, run->pool, run->threads};
  rt_flatten *f = NULL;
  if (rc == 0 && !(f = rt_flatten_begin(&rel.r, na, aggs, run->strings, op->stage,
                                        par ? &pp : NULL,
                                        par ? run->threads : 1, &run->err)))
    rc = iv_rt_failed(run, op);
  if (rc == 0 && !rt_flatten_out_init(f, &out, par ? 0 : iv_chunk_rows(run) + RT_BATCH + 4, &run->err))
    rc = iv_rt_failed(run, op);
  if (rc == 0) rc = iv_flat_types(run, op, &out, outc, na);
  if (rc == 0 && par) rc = iv_flatten_par(run, s, &rel, f, &out, outc, na, pick, ctx);
  else if (rc == 0) rc = iv_flatten_one(run, s, b, &rel, f, &out, outc, na, pick, ctx, dn);
  rt_flatten_end(f, NULL);
  iv_rel_free(&rel);
  for (int a = 0; own && a < 2 * na; a++) rt_mem_free(own[a]);
  free(own);
  free(aggs);
  free(outc);
  free(reads);
  rt_flatten_free(&out);
  ex_iv_release(run, op->iv.bufs, op->iv.nrel);
  return rc;
}

/* ---- INTERVAL JOIN ---------------------------------------------------------- */

/* One all-NULL row after a buffered relation's rows, for output rows that
 * have no row of it to select (LEFT INTERVAL JOIN and FIND, UNION OF,
 * SPLIT's uncovered pieces) (rows past nrows are zero and NULL in a
 * rowbuf); its index, or -1 (out of memory: the error is set). */
static int64_t iv_null_row(ex_run *run, const ir_op *op, iv_rel *r) {
  rt_rowbuf *rb = (rt_rowbuf *)r->buf;
  if (!rb) return ex_op_fail(run, op, "a relation was not buffered");
  int64_t null_row = rb->nrows;
  rt_rowbuf_reserve(rb, 1);
  if (rb->cap < rb->nrows + 1) return ex_op_fail(run, op, "out of memory");
  rb->nrows++;
  return null_row;
}

/* Serves (input, operand) pairs (INTERVAL JOIN, FIND) in batches: both
 * relations' carried columns selected by the pairs; with `left`, a pair
 * without operand row (RT_NO_ROW) selects the operand's NULL row. */
static int iv_serve_pairs(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx,
                          void *dn, iv_rel *in, iv_rel *opr, rt_ijpairs *pairs, bool left) {
  int rc = 0;
  if (left) {
    int64_t null_row = iv_null_row(run, s->seg->source, opr);
    if (null_row < 0) return -1;
    for (size_t i = 0; i < pairs->n; i++)
      if (pairs->op[i] == RT_NO_ROW) pairs->op[i] = (uint32_t)null_row;
  }
  for (size_t start = 0; rc == 0 && start < pairs->n && !s->done; start += RT_BATCH) {
    size_t rest = pairs->n - start;
    uint32_t n = rest < RT_BATCH ? (uint32_t)rest : RT_BATCH;
    iv_sel_views(in, pairs->in + start, n, b);
    iv_sel_views(opr, pairs->op + start, n, b);
    rc = run->feed(run, s, b, n, pick, ctx, dn);
  }
  return rc;
}

/* Parallel INTERVAL JOIN: the operand's index is built once and only
 * read; chunks of input rows probe into pairs of their own, which in
 * chunk order are one probe's pairs (each row's matches in operand order,
 * rows in order), served in morsels as one thread serves them. */
typedef struct iv_pjoin {
  const ir_op *op;
  const rt_ijoin *j;
  const rt_ivrel *in;
  uint32_t chunk;
  rt_ijpairs *pc;      /* per chunk */
  rt_err *err;         /* per chunk */
  uint8_t *failed;     /* per chunk */
  iv_chunks ch;        /* input rows, operand rows */
  iv_wrels wr;         /* per worker: input, operand */
} iv_pjoin;

static void iv_pjoin_piece(void *p, int worker, int64_t i) {
  (void)worker;
  iv_pjoin *x = p;
  uint32_t lo = (uint32_t)i * x->chunk, hi = lo + x->chunk < x->in->n ? lo + x->chunk : x->in->n;
  x->failed[i] = !rt_ijoin_probe_range(x->j, x->in, lo, hi, x->op->iv.left, &x->pc[i], &x->err[i]);
}

static void iv_pjoin_load(void *p, int worker, int64_t at, uint32_t n, rt_batch *b) {
  iv_pjoin *x = p;
  const void *col[2];
  iv_chunks_get(&x->ch, worker, at, n, col);
  iv_sel_views(&x->wr.r[2 * worker], col[0], n, b);
  iv_sel_views(&x->wr.r[2 * worker + 1], col[1], n, b);
}

static int iv_ijoin_par(ex_run *run, ex_seg *s, iv_rel *in, iv_rel *opr, const rt_ijoin *j, ex_pick_fn pick,
                        void *ctx) {
  const ir_op *op = s->seg->source;
  int nw = run->threads;
  iv_pjoin x = {.op = op, .j = j, .in = &in->r};
  x.chunk = (uint32_t)iv_par_share(run, in->r.n);
  if (x.chunk < RT_BATCH) x.chunk = RT_BATCH;
  int64_t np = (int64_t)(((uint64_t)in->r.n + x.chunk - 1) / x.chunk);
  x.pc = calloc((size_t)np + 1, sizeof *x.pc);
  x.err = calloc((size_t)np + 1, sizeof *x.err);
  x.failed = calloc((size_t)np + 1, 1);
  iv_rel rels[2] = {*in, *opr};
  int rc = 0;
  if (!x.pc || !x.err || !x.failed || !iv_chunks_init(&x.ch, np, 2, nw) || !iv_wrels_init(&x.wr, rels, 2, nw))
    rc = ex_op_fail(run, op, "out of memory");
  if (rc == 0) {
    rt_par par = {ex_par_runner, run->pool, run->threads};
    rt_par_for_w(&par, np, iv_pjoin_piece, &x);
  }
  x.ch.elem[0] = x.ch.elem[1] = sizeof(uint32_t);
  for (int64_t i = 0; rc == 0 && i < np; i++)
    if (x.failed[i]) {
      /* one thread probes every row before serving any: the first
       * failing row's error, nothing served */
      run->err = x.err[i];
      rc = iv_rt_failed(run, op);
    }
  /* a LEFT row without a match selects the operand's NULL row, appended
   * once the probes are done (as one thread does) */
  int64_t null_row = 0;
  if (rc == 0 && op->iv.left && (null_row = iv_null_row(run, op, opr)) < 0) rc = -1;
  for (int64_t i = 0; rc == 0 && i < np; i++) {
    rt_ijpairs *pr = &x.pc[i];
    for (size_t q = 0; op->iv.left && q < pr->n; q++)
      if (pr->op[q] == RT_NO_ROW) pr->op[q] = (uint32_t)null_row;
    x.ch.off[i + 1] = x.ch.off[i] + (int64_t)pr->n;
    x.ch.cols[2 * i] = pr->in;
    x.ch.cols[2 * i + 1] = pr->op;
  }
  if (rc == 0 && x.ch.off[np] > 0) {
    ex_par_src src = {.nrows = x.ch.off[np], .batch_rows = RT_BATCH, .load = iv_pjoin_load, .src = &x};
    rc = ex_par_rows(run, s, &src, pick, ctx);
  }
  for (int64_t i = 0; x.pc && i < np; i++) rt_ijpairs_free(&x.pc[i]);
  iv_chunks_free(&x.ch);
  iv_wrels_free(&x.wr);
  free(x.pc);
  free(x.err);
  free(x.failed);
  return rc;
}

static int iv_ijoin(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *dn) {
  const ir_op *op = s->seg->source;
  iv_rel in, opr;
  rt_ijoin j;
  rt_ijpairs pairs = {0};
  memset(&j, 0, sizeof j);
  bool *reads;
  int rc = iv_open_rels(run, s, &in, &opr, &reads);
  bool built = false;
  if (rc == 0) {
    built = true;
    if (!rt_ijoin_build(&j, &opr.r, (rt_ijrel)op->iv.rel, op->stage, &run->err))
      rc = iv_rt_failed(run, op);
  }
  if (rc == 0 && iv_par_wanted(run, s, dn, 2, in.r.n)) {
    rc = iv_ijoin_par(run, s, &in, &opr, &j, pick, ctx);
  } else {
    if (rc == 0 && !rt_ijoin_probe(&j, &in.r, op->iv.left, &pairs, &run->err)) rc = iv_rt_failed(run, op);
    if (rc == 0) rc = iv_serve_pairs(run, s, b, pick, ctx, dn, &in, &opr, &pairs, op->iv.left);
  }
  if (built) rt_ijoin_free(&j);
  rt_ijpairs_free(&pairs);
  return iv_close_rels(run, op, &in, &opr, reads, rc);
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
  int nc = op->iv.nscan;
  int rc = iv_rel_open(run, op, 0, NULL, &in);
  if (rc == 0) rc = iv_rel_open(run, op, 1, NULL, &bg);
  if (rc == 0 && !rt_fillgaps_run(&in.r, &bg.r, op->iv.per[1] != NULL, op->stage, &out, &run->err))
    rc = iv_rt_failed(run, op);
  int64_t nin = in.buf ? in.buf->nrows : 0, total = nin + (int64_t)out.n;
  if (rc == 0 && total >= (int64_t)RT_NO_ROW) rc = ex_op_fail(run, op, "too many rows");
  if (rc == 0) {
    rt_type types[nc > 0 ? nc : 1];
    for (int k = 0; k < nc; k++) types[k] = rt_store_type(p->cols[op->iv.out_cols[k]].type);
    if (!rt_rowbuf_init(&res, nc, types)) rc = ex_op_fail(run, op, "out of memory");
    else if (total > 0) {
      rt_rowbuf_reserve(&res, total);
      if (res.cap < total) rc = ex_op_fail(run, op, "out of memory");
    }
  }
  for (int k = 0; rc == 0 && k < nc; k++) {
    int ic = op->iv.from_in[k] >= 0 ? ex_buf_col(op->iv.bufs[0], op->iv.from_in[k]) : -1;
    int bc = op->iv.from_bg[k] >= 0 ? ex_buf_col(op->iv.bufs[1], op->iv.from_bg[k]) : -1;
    int kind = op->iv.fill_kind[k], key = op->iv.fill_key[k];
    if (ic >= 0)
      for (int64_t r = 0; r < nin; r++) iv_copy(&res, k, r, in.buf, ic, r);
    int pin = kind == 3 ? ex_buf_col(op->iv.bufs[0], op->iv.per[0][key]) : -1;
    int pbg = kind == 3 && op->iv.per[1] ? ex_buf_col(op->iv.bufs[1], op->iv.per[1][key]) : -1;
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
  ex_iv_release(run, op->iv.bufs, op->iv.nrel);
  for (int64_t start = 0; rc == 0 && start < res.nrows && !s->done; start += RT_BATCH) {
    int64_t left = res.nrows - start;
    uint32_t n = left < RT_BATCH ? (uint32_t)left : RT_BATCH;
    for (int k = 0; k < nc; k++) rt_rowbuf_view(&res, k, start, NULL, &b->cols[op->iv.out_cols[k]]);
    rc = run->feed(run, s, b, n, pick, ctx, dn);
  }
  rt_rowbuf_free(&res);
  return rc;
}

/* ---- §9.1 INTERVALS FROM EVENTS ------------------------------------------------ */

/* INTERVALS FROM EVENTS: ts, dur flat views of the result; the events'
 * carried columns selected by each interval's event row. */
static int iv_events(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *dn) {
  const ir_op *op = s->seg->source;
  iv_rel ev, st;
  memset(&st, 0, sizeof st);
  rt_events_out out = {0};
  bool *reads = iv_reads(run, s);
  bool has_stop = op->iv.nrel > 1;
  int rc = iv_rel_open(run, op, 0, reads, &ev);
  if (rc == 0 && has_stop) rc = iv_rel_open(run, op, 1, NULL, &st);
  const int64_t *close = NULL;
  const uint64_t *close_valid = NULL;
  int64_t *own = NULL;
  if (rc == 0 && op->iv.close_col >= 0) {
    int c = ex_buf_col(op->iv.bufs[0], op->iv.close_col);
    if (c < 0) rc = ex_op_fail(run, op, "the closing end was not buffered");
    else if (!(close = iv_rel_i64(&ev, c, &own)) && ev.r.n) rc = ex_op_fail(run, op, "out of memory");
    else close_valid = iv_rel_valid(&ev, c);
  }
  /* An output row's ts is its event's: with the events' ts stored as
   * int64 it is served as that column selected by the rows (read only if
   * the segment reads it), not copied. */
  int cts = rc == 0 ? ex_buf_col(op->iv.bufs[0], op->iv.ts[0]) : -1;
  bool ts_by_row = cts >= 0 && iv_rel_type(&ev, cts) == RT_I64 &&
                   (ev.buf || (ev.tab->cols[ev.tcol[cts]].data && !ev.gather[cts]));
  if (rc == 0 && !rt_events_run(&ev.r, has_stop ? &st.r : NULL, op->iv.close_col >= 0 ? close : NULL,
                                close_valid, op->stage, !ts_by_row, &out, NULL, &run->err))
    rc = iv_rt_failed(run, op);
  const uint64_t *dvalid = op->iv.close_col >= 0 ? out.dur_valid : NULL;
  for (size_t start = 0; rc == 0 && start < out.n && !s->done; start += RT_BATCH) {
    size_t left = out.n - start;
    uint32_t n = left < RT_BATCH ? (uint32_t)left : RT_BATCH;
    iv_sel_views(&ev, out.row + start, n, b);
    if (ts_by_row) iv_rel_view(&ev, cts, out.row + start, n, &b->cols[op->iv.ts_out]);
    else b->cols[op->iv.ts_out] = iv_flat(RT_I64, out.ts, (int64_t)start, NULL);
    b->cols[op->iv.dur_out] = iv_flat(RT_I64, out.dur, (int64_t)start, dvalid);
    rc = run->feed(run, s, b, n, pick, ctx, dn);
  }
  rt_mem_free(own);
  rt_events_free(&out);
  iv_rel_free(&ev);
  iv_rel_free(&st);
  free(reads);
  ex_iv_release(run, op->iv.bufs, op->iv.nrel);
  return rc;
}

/* ---- §9.2 interval reshaping ---------------------------------------------------- */

/* Serves pieces (SUBTRACT, SPLIT, QUANTIZE; SET BOUNDS with identity
 * rows and no new bounds): the new bounds and bucket as flat views, the
 * input's carry selected by each piece's row, SPLIT's operand's by its
 * operand row. */
static int iv_serve_pieces(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx,
                           void *dn, const rt_ivpieces *pc, iv_rel *in, iv_rel *opr) {
  const ir_op *op = s->seg->source;
  int rc = 0;
  for (size_t start = 0; rc == 0 && start < pc->n && !s->done; start += RT_BATCH) {
    size_t left = pc->n - start;
    uint32_t n = left < RT_BATCH ? (uint32_t)left : RT_BATCH;
    if (op->iv.ts_out >= 0) {
      b->cols[op->iv.ts_out] = iv_flat(RT_I64, pc->ts, (int64_t)start, NULL);
      b->cols[op->iv.dur_out] = iv_flat(RT_I64, pc->dur, (int64_t)start, NULL);
    }
    if (op->iv.bucket_out >= 0) b->cols[op->iv.bucket_out] = iv_flat(RT_I64, pc->bucket, (int64_t)start, NULL);
    iv_sel_views(in, pc->row + start, n, b);
    if (opr) iv_sel_views(opr, pc->orow + start, n, b);
    rc = run->feed(run, s, b, n, pick, ctx, dn);
  }
  return rc;
}

static int iv_reshape(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *dn) {
  const ir_op *op = s->seg->source;
  iv_rel in, opr;
  rt_ivpieces pc = {0};
  int64_t *own = NULL;
  bool *reads;
  bool two = op->iv.nrel > 1;
  int rc = iv_open_rels(run, s, &in, &opr, &reads);
  opr.r.name = two ? op->iv.names[1] : NULL;   /* "a row of b" in messages */
  if (rc == 0) {
    int ok = 1;
    switch (op->kind) {
    case IR_SUBTRACT: ok = rt_ivsubtract_run(&in.r, &opr.r, op->stage, &pc, &run->err); break;
    case IR_SPLIT: ok = rt_ivsplit_run(&in.r, &opr.r, op->stage, &pc, &run->err); break;
    case IR_QUANTIZE: {
      const int64_t *origin = NULL;
      const uint64_t *ovalid = NULL;
      int c = op->iv.origin >= 0 ? ex_buf_col(op->iv.bufs[0], op->iv.origin) : -1;
      if (op->iv.origin >= 0 && c < 0) {
        rc = ex_op_fail(run, op, "the origin was not buffered");
        break;
      }
      if (c >= 0) {
        origin = iv_rel_i64(&in, c, &own);
        ovalid = iv_rel_valid(&in, c);
        if (!origin && in.r.n) {
          rc = ex_op_fail(run, op, "out of memory");
          break;
        }
      }
      ok = rt_ivquantize_run(&in.r, op->iv.width, origin, ovalid, op->iv.align != 1, op->stage,
                             &pc, &run->err);
      break;
    }
    case IR_SETBOUNDS:
      ok = rt_ivbounds_check(&in.r, op->stage, &run->err);
      for (uint32_t i = 0; ok && i < in.r.n; i++)
        if (!rt_ivpieces_push(&pc, 0, 0, i, RT_NO_ROW, 0)) ok = rt_errorf(&run->err, -1, "%s: out of memory", op->stage);
      break;
    default: rc = ex_op_fail(run, op, "not a reshaping stage"); break;
    }
    if (rc == 0 && !ok) rc = iv_rt_failed(run, op);
  }
  if (rc == 0 && op->kind == IR_SPLIT) {
    int64_t null_row = iv_null_row(run, op, &opr);
    if (null_row < 0) rc = -1;
    for (size_t i = 0; rc == 0 && i < pc.n; i++)
      if (pc.orow[i] == RT_NO_ROW) pc.orow[i] = (uint32_t)null_row;
  }
  if (rc == 0) rc = iv_serve_pieces(run, s, b, pick, ctx, dn, &pc, &in, op->kind == IR_SPLIT ? &opr : NULL);
  rt_ivpieces_free(&pc);
  rt_mem_free(own);
  return iv_close_rels(run, op, &in, &opr, reads, rc);
}

/* MERGE: the input's rows in merge order, each with its merged interval
 * (gid_out flat; ts_out, dur_out the group's bounds selected by gid),
 * for the AGGREGATE after it. */
static int iv_merge(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *dn) {
  const ir_op *op = s->seg->source;
  iv_rel in;
  rt_ivmerge_out mo = {0};
  rt_ivkey by[RT_LANES_MAXKEYS];
  int64_t *own[RT_LANES_MAXKEYS] = {0};
  bool *reads;
  int rc = iv_open_rels(run, s, &in, NULL, &reads);
  if (rc == 0 && op->iv.nby > RT_LANES_MAXKEYS) rc = ex_op_fail(run, op, "too many BY columns");
  for (int k = 0; rc == 0 && k < op->iv.nby; k++) {
    memset(&by[k], 0, sizeof by[k]);
    int c = ex_buf_col(op->iv.bufs[0], op->iv.by[k]);
    if (c < 0) rc = ex_op_fail(run, op, "a BY column was not buffered");
    else if (!iv_rel_key(&in, c, &by[k], &own[k])) rc = ex_op_fail(run, op, "out of memory");
  }
  if (rc == 0 && !rt_ivmerge_run(&in.r, op->iv.nby, by, op->stage, &mo, &run->err)) rc = iv_rt_failed(run, op);
  for (size_t start = 0; rc == 0 && start < mo.n && !s->done; start += RT_BATCH) {
    size_t left = mo.n - start;
    uint32_t n = left < RT_BATCH ? (uint32_t)left : RT_BATCH;
    b->cols[op->iv.gid_out] = iv_flat(RT_I64, mo.gid, (int64_t)start, NULL);
    b->cols[op->iv.ts_out] = (rt_view){.type = RT_I64, .data = mo.ts, .sel = mo.gid32 + start};
    b->cols[op->iv.dur_out] = (rt_view){.type = RT_I64, .data = mo.dur, .sel = mo.gid32 + start};
    iv_sel_views(&in, mo.row + start, n, b);
    rc = run->feed(run, s, b, n, pick, ctx, dn);
  }
  rt_ivmerge_free(&mo);
  for (int k = 0; k < RT_LANES_MAXKEYS; k++) rt_mem_free(own[k]);
  return iv_close_rels(run, op, &in, NULL, reads, rc);
}

/* ---- §9.1 INTERVAL UNION OF ------------------------------------------------------ */

/* Views of direct relation r's carried columns at rows[0..n), where
 * RT_NO_ROW is a row of NULLs: the columns the segment reads gathered
 * (widened like iv_rel_view's) with their validity, the others views of
 * the table through safe (rows with RT_NO_ROW as 0, never read) — instead
 * of copying the whole table into a buffer to append one NULL row. gv,
 * gb: ncarry batches of values and validity. */
static void iv_nullable_views(iv_rel *r, const bool *reads, const uint32_t *rows, uint32_t n,
                              uint32_t *safe, int64_t *gv, uint64_t *gb, rt_batch *b) {
  for (uint32_t i = 0; i < n; i++) safe[i] = rows[i] == RT_NO_ROW ? 0 : rows[i];
  const struct ir_ivbuf *ib = &r->bop->ivbuf;
  for (int k = 0; k < ib->ncarry; k++) {
    int c = ib->carry[k];
    const rt_column *col = &r->tab->cols[r->tcol[k]];
    rt_type t = col->type;
    if (reads && !reads[c]) {
      b->cols[c] = (rt_view){.type = t, .data = col->data, .valid = col->valid, .sel = safe};
      continue;
    }
    int64_t *v = gv + (size_t)k * RT_BATCH;
    uint64_t *bits = gb + (size_t)k * RT_BITWORDS(RT_BATCH);
    if (t == RT_I64 || t == RT_F64) {
      const int64_t *d = col->data;   /* a double's bits */
      for (uint32_t i = 0; i < n; i++) v[i] = d[safe[i]];
    } else if (t == RT_STR) {
      const uint32_t *d = col->data;
      for (uint32_t i = 0; i < n; i++) ((uint32_t *)v)[i] = d[safe[i]];
    } else {
      rt_view w = {.type = t, .data = col->data, .sel = safe};
      for (uint32_t i = 0; i < n; i++) v[i] = rt_view_i64(&w, i);
      t = RT_I64;
    }
    memset(bits, 0, RT_BITWORDS(n) * 8);
    for (uint32_t i = 0; i < n; i++)
      if (rows[i] != RT_NO_ROW && (!col->valid || rt_bit(col->valid, rows[i]))) rt_bit_set(bits, i);
    b->cols[c] = (rt_view){.type = t, .data = v, .valid = bits};
  }
}

/* INTERVAL UNION OF: ts, dur flat; the PER values of each region's lane
 * gathered per batch; each operand's carried columns selected by its row
 * array (a buffered operand's NULL row where it has none; a table's by
 * iv_nullable_views). */
static int iv_union(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *dn) {
  const ir_op *op = s->seg->source;
  const ir_plan *p = run->plan;
  int k = op->iv.nrel, np = op->iv.nper;
  iv_rel *rels = calloc((size_t)k, sizeof *rels);
  rt_ivrel *rv = calloc((size_t)k, sizeof *rv);
  int64_t *pv = malloc(sizeof *pv * RT_BATCH * ((size_t)np + 1));
  uint64_t *pbits = malloc(sizeof *pbits * RT_BITWORDS(RT_BATCH) * ((size_t)np + 1));
  bool *reads = iv_reads(run, s);
  rt_union_out out = {0};
  /* per direct operand: its safe rows and gathered columns (iv_nullable_views) */
  uint32_t **safe = calloc((size_t)k, sizeof *safe);
  int64_t **gv = calloc((size_t)k, sizeof *gv);
  uint64_t **gb = calloc((size_t)k, sizeof *gb);
  int rc = 0;
  if (!rels || !rv || !pv || !pbits || !safe || !gv || !gb) rc = ex_op_fail(run, op, "out of memory");
  for (int j = 0; j < k && rc == 0; j++) {
    rc = iv_rel_open(run, op, j, reads, &rels[j]);
    rels[j].r.name = op->iv.names[j];
    rv[j] = rels[j].r;
    if (rc == 0 && !rels[j].buf) {
      size_t nc = (size_t)rels[j].bop->ivbuf.ncarry + 1;
      safe[j] = malloc(sizeof **safe * RT_BATCH);
      gv[j] = malloc(sizeof **gv * RT_BATCH * nc);
      gb[j] = malloc(sizeof **gb * RT_BITWORDS(RT_BATCH) * nc);
      if (!safe[j] || !gv[j] || !gb[j]) rc = ex_op_fail(run, op, "out of memory");
    }
  }
  if (rc == 0 && !rt_union_run(k, rv, op->stage, &out, &run->err)) rc = iv_rt_failed(run, op);
  for (int j = 0; j < k && rc == 0; j++) {
    if (!rels[j].buf) continue;
    int64_t null_row = iv_null_row(run, op, &rels[j]);
    if (null_row < 0) rc = -1;
    for (size_t i = 0; rc == 0 && i < out.n; i++)
      if (out.rows[j][i] == RT_NO_ROW) out.rows[j][i] = (uint32_t)null_row;
  }
  for (size_t start = 0; rc == 0 && start < out.n && !s->done; start += RT_BATCH) {
    size_t rest = out.n - start;
    uint32_t n = rest < RT_BATCH ? (uint32_t)rest : RT_BATCH;
    b->cols[op->iv.ts_out] = iv_flat(RT_I64, out.ts, (int64_t)start, NULL);
    b->cols[op->iv.dur_out] = iv_flat(RT_I64, out.dur, (int64_t)start, NULL);
    for (int q = 0; q < np; q++) {
      rt_type t = rt_store_type(p->cols[op->iv.per_out[q]].type);
      int64_t *v = pv + (size_t)q * RT_BATCH;
      uint32_t *v32 = (uint32_t *)v;
      uint64_t *bits = pbits + (size_t)q * RT_BITWORDS(RT_BATCH);
      memset(bits, 0, RT_BITWORDS(n) * 8);
      for (uint32_t i = 0; i < n; i++) {
        uint32_t lane = out.lane[start + i], j = out.rep_op[lane], row = out.rep_row[lane];
        const rt_ivkey *key = &rels[j].keys[q];
        if (key->valid && !rt_bit(key->valid, row)) continue;
        int64_t x = rt_ivkey_get(key, row);
        if (t == RT_STR) v32[i] = (uint32_t)x;
        else v[i] = x;   /* a double's bits */
        rt_bit_set(bits, i);
      }
      b->cols[op->iv.per_out[q]] = (rt_view){.type = t, .data = v, .valid = bits};
    }
    for (int j = 0; j < k; j++) {
      if (rels[j].buf) iv_sel_views(&rels[j], out.rows[j] + start, n, b);
      else iv_nullable_views(&rels[j], reads, out.rows[j] + start, n, safe[j], gv[j], gb[j], b);
    }
    rc = run->feed(run, s, b, n, pick, ctx, dn);
  }
  rt_union_free(&out);
  for (int j = 0; safe && gv && gb && j < k; j++) free(safe[j]), free(gv[j]), free(gb[j]);
  free(safe);
  free(gv);
  free(gb);
  for (int j = 0; rels && j < k; j++) iv_rel_free(&rels[j]);
  free(rels);
  free(rv);
  free(pv);
  free(pbits);
  free(reads);
  ex_iv_release(run, op->iv.bufs, op->iv.nrel);
  return rc;
}

/* ---- §9.3 interval matching ------------------------------------------------------ */

/* INTERVAL FIND: (input, operand) pairs served as INTERVAL JOIN's. */
static int iv_find(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *dn) {
  const ir_op *op = s->seg->source;
  iv_rel in, opr;
  rt_find f;
  rt_ijpairs pairs = {0};
  memset(&f, 0, sizeof f);
  bool *reads;
  int rc = iv_open_rels(run, s, &in, &opr, &reads);
  const int64_t *within = NULL;
  const uint64_t *within_valid = NULL;
  int64_t *own = NULL;
  if (rc == 0 && op->iv.within_col >= 0) {
    int c = ex_buf_col(op->iv.bufs[0], op->iv.within_col);
    if (c < 0) rc = ex_op_fail(run, op, "the WITHIN distance was not buffered");
    else if (!(within = iv_rel_i64(&in, c, &own)) && in.r.n) rc = ex_op_fail(run, op, "out of memory");
    else within_valid = iv_rel_valid(&in, c);
  }
  bool built = false;
  if (rc == 0) {
    built = true;
    if (!rt_find_build(&f, &opr.r, op->iv.rel & IR_FIND_ENDING, op->iv.rel & IR_FIND_BEFORE,
                       op->stage, &run->err))
      rc = iv_rt_failed(run, op);
  }
  if (rc == 0 && !rt_find_probe(&f, &in.r, op->iv.rel & IR_FIND_END,
                                op->iv.within_col >= 0 ? within : NULL, within_valid, op->iv.left,
                                &pairs, &run->err))
    rc = iv_rt_failed(run, op);
  if (rc == 0) rc = iv_serve_pairs(run, s, b, pick, ctx, dn, &in, &opr, &pairs, op->iv.left);
  if (built) rt_find_free(&f);
  rt_mem_free(own);
  rt_ijpairs_free(&pairs);
  return iv_close_rels(run, op, &in, &opr, reads, rc);
}

/* INTERVAL KEEP IF / DROP IF: the input rows (selected) that stand (or do
 * not) in the relationship to the union of the operand's rows in their
 * lane. */
static int iv_keep(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *dn) {
  const ir_op *op = s->seg->source;
  iv_rel in, opr;
  rt_ijoin j;
  memset(&j, 0, sizeof j);
  bool *reads;
  uint32_t *sel = malloc(sizeof *sel * RT_BATCH);
  int rc = iv_open_rels(run, s, &in, &opr, &reads);
  if (rc == 0 && !sel) rc = ex_op_fail(run, op, "out of memory");
  bool built = false;
  if (rc == 0) {
    built = true;
    if (!rt_ijoin_build_union(&j, &opr.r, (rt_ijrel)op->iv.rel, op->stage, &run->err))
      rc = iv_rt_failed(run, op);
  }
  uint32_t n = 0;
  for (uint32_t i = 0; rc == 0 && i < in.r.n && !s->done; i++) {
    bool hit = false;
    if (rt_ivrel_bounds_valid(&in.r, i)) {
      int64_t ts = in.r.ts[i], dur = in.r.dur[i];
      if (dur >= 0 && ts > 0 && dur > INT64_MAX - ts) {
        rc = ex_op_fail(run, op, "integer overflow");
        break;
      }
      int64_t lane = rt_lanes_find_row(&j.lanes, &in.r, i, true);
      hit = lane >= 0 && rt_ijoin_any(&j, (uint32_t)lane, ts, dur);
    }
    if (hit != op->iv.drop) sel[n++] = i;
    if (n == RT_BATCH || (i + 1 == in.r.n && n)) {
      iv_sel_views(&in, sel, n, b);
      rc = run->feed(run, s, b, n, pick, ctx, dn);
      n = 0;
    }
  }
  if (built) rt_ijoin_free(&j);
  free(sel);
  return iv_close_rels(run, op, &in, &opr, reads, rc);
}

/* ---- entry points ----------------------------------------------------------- */

static int iv_scan(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *dn) {
  switch (s->seg->source->kind) {
  case IR_ISECT: return iv_isect(run, s, b, pick, ctx, dn);
  case IR_FLATTEN: return iv_flatten(run, s, b, pick, ctx, dn);
  case IR_IJOIN: return iv_ijoin(run, s, b, pick, ctx, dn);
  case IR_FILLGAPS: return iv_fillgaps(run, s, b, pick, ctx, dn);
  case IR_IV_EVENTS: return iv_events(run, s, b, pick, ctx, dn);
  case IR_IVMERGE: return iv_merge(run, s, b, pick, ctx, dn);
  case IR_SUBTRACT: case IR_SPLIT: case IR_QUANTIZE: case IR_SETBOUNDS:
    return iv_reshape(run, s, b, pick, ctx, dn);
  case IR_IV_UNION: return iv_union(run, s, b, pick, ctx, dn);
  case IR_IV_FIND: return iv_find(run, s, b, pick, ctx, dn);
  case IR_IV_KEEP: return iv_keep(run, s, b, pick, ctx, dn);
  case IR_SCAN_TABLE: case IR_SCAN_SQL: case IR_SCAN_BUF: case IR_SETOP: case IR_SCAN_FORK:
  case IR_GRAPH:
  case IR_TREE_SHAPE:
#define IR_CASE_STEP(name) case IR_##name:
#define IR_CASE_SINK(name) case IR_##name:
#define IR_CASE_BREAKER(name) case IR_##name:
#include "ir/op_cases.h"
  case IR__COUNT:
    break;
  }
  return ex_op_fail(run, s->seg->source, "not an interval source");
}

/* The operator holds its working arrays (indexes, scratch, outputs) in
 * the memory budget; the run's feed hands the batches' growth to the sink. */
int ex_iv_scan(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *dn) {
  const char *prev = rt_budget_owner(s->seg->source->stage);
  int rc = iv_scan(run, s, b, pick, ctx, dn);
  rt_budget_owner(prev);
  return rc;
}
