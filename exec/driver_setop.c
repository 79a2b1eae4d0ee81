/*
 * driver_setop.c — the SETOP source (UNION / INTERSECT / EXCEPT, LANGUAGE.md
 * §8; bound in ir/bind_setop.c): its relations are the IV_BUFFERs of the
 * segments before it, one per relation in position order.
 *
 * Rows are first converted to the output types (integers into double
 * columns), then numbered by an rt_aggtab keyed on the whole row (NULL
 * equal to NULL, -0.0 as 0.0, strings by id), which gives each distinct
 * row a number in first-seen order:
 *   UNION ALL           every row of every relation, in order
 *   UNION [DISTINCT]    the first row of each number, over all relations
 *   INTERSECT DISTINCT  the input's rows whose number every operand has
 *   INTERSECT ALL       as many copies as the relation with the fewest has
 *   EXCEPT DISTINCT     the input's rows whose number no operand has
 *   EXCEPT ALL          the input's copies less every operand's copies
 * Equal rows are alike, so which copies stay does not matter; the ones
 * kept are the first in input order. The result is a rowbuf served in
 * batches to the rest of the segment.
 */
#include <stdlib.h>

#include "exec.h"

typedef struct srel {
  const rt_rowbuf *buf;
  int *bc;             /* buffer column per output position */
  int64_t *gid;        /* row number per row (distinct forms) */
} srel;

/* Row r of relation rel as output-typed key words and NULL flags. */
static void row_words(const srel *rel, const rt_type *types, int n, int64_t r, int64_t *w, uint8_t *nul) {
  for (int k = 0; k < n; k++) {
    const rt_rowbuf *b = rel->buf;
    int c = rel->bc[k];
    nul[k] = !rt_bit(b->valid[c], (uint64_t)r);
    if (nul[k]) { w[k] = 0; continue; }
    if (types[k] == RT_F64) {
      double d = b->types[c] == RT_F64 ? ((const double *)b->data[c])[r]
                                       : (double)((const int64_t *)b->data[c])[r];
      d += 0.0;
      memcpy(&w[k], &d, 8);
    } else if (types[k] == RT_STR) {
      w[k] = ((const uint32_t *)b->data[c])[r];
    } else {
      w[k] = ((const int64_t *)b->data[c])[r];
    }
  }
}

/* Appends row r of rel to res (output types). */
static int put_row(rt_rowbuf *res, const srel *rel, const rt_type *types, int n, int64_t r) {
  if (res->nrows == res->cap) {
    rt_rowbuf_reserve(res, RT_BATCH);
    if (res->nrows == res->cap) return -1;
  }
  int64_t o = res->nrows++;
  for (int k = 0; k < n; k++) {
    const rt_rowbuf *b = rel->buf;
    int c = rel->bc[k];
    if (!rt_bit(b->valid[c], (uint64_t)r)) continue;   /* rows beyond nrows are NULL */
    res->valid[k][o >> 6] |= 1ull << (o & 63);
    if (types[k] == RT_F64)
      ((double *)res->data[k])[o] = b->types[c] == RT_F64 ? ((const double *)b->data[c])[r]
                                                            : (double)((const int64_t *)b->data[c])[r];
    else if (types[k] == RT_STR) ((uint32_t *)res->data[k])[o] = ((const uint32_t *)b->data[c])[r];
    else ((int64_t *)res->data[k])[o] = ((const int64_t *)b->data[c])[r];
  }
  return 0;
}

int ex_setop_scan(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *dn) {
  const ir_op *op = s->seg->source;
  const struct ir_setop *so = &op->setop;
  const ir_plan *p = run->plan;
  int n = so->ncols, nrel = so->nrel;
  rt_type types[n > 0 ? n : 1];
  for (int k = 0; k < n; k++) types[k] = rt_store_type(p->cols[so->out[k]].type);
  srel *rels = rt_arena_alloc(&run->arena, sizeof(srel) * (size_t)nrel);
  if (!rels) return ex_op_fail(run, op, "out of memory");
  for (int j = 0; j < nrel; j++) {
    int idx = ex_op_index(p, so->bufs[j]);
    rels[j].buf = idx >= 0 ? run->bufs[idx] : NULL;
    if (!rels[j].buf) return ex_op_fail(run, op, "a relation was not buffered");
    rels[j].bc = rt_arena_alloc(&run->arena, sizeof(int) * ((size_t)n + 1));
    if (!rels[j].bc) return ex_op_fail(run, op, "out of memory");
    for (int k = 0; k < n; k++)
      if ((rels[j].bc[k] = ex_buf_col(so->bufs[j], so->cols[j][k])) < 0)
        return ex_op_fail(run, op, "a relation's column was not buffered");
  }
  rt_rowbuf res;
  rt_rowbuf_init(&res, n, types);
  if (res.ncols != n) return ex_op_fail(run, op, "out of memory");
  int rc = 0;
  bool distinct = !(so->kind == IR_SET_UNION && so->all);
  rt_aggtab tab;
  memset(&tab, 0, sizeof tab);
  int64_t *cnt = NULL;   /* per row number: what may still be emitted */
  uint8_t *seen = NULL;
  if (distinct) {
    rt_aggtab_init(&tab, n, types, 0, NULL, NULL);
    if (!tab.slots || !tab.aggs || tab.keys.ncols != n) rc = -1;
    int64_t w[n > 0 ? n : 1];
    uint8_t nul[n > 0 ? n : 1];
    for (int j = 0; j < nrel && rc == 0; j++) {
      int64_t nr = rels[j].buf->nrows;
      rels[j].gid = rt_mem_alloc(sizeof(int64_t) * ((size_t)nr + 1));
      if (!rels[j].gid) rc = -1;
      for (int64_t r = 0; r < nr && rc == 0; r++) {
        row_words(&rels[j], types, n, r, w, nul);
        if ((rels[j].gid[r] = rt_aggtab_group(&tab, w, nul)) < 0) rc = -1;
      }
    }
    int64_t ng = tab.ngroups;
    if (rc == 0 && (!(cnt = rt_mem_calloc((size_t)ng + 1, sizeof *cnt)) ||
                    !(seen = rt_mem_calloc((size_t)ng + 1, 1))))
      rc = -1;
    if (rc == 0 && so->kind != IR_SET_UNION) {
      /* INTERSECT: the fewest copies (ALL) / in every operand (DISTINCT);
       * EXCEPT: the operands' copies to take away / in any operand. */
      int64_t *c = rt_mem_calloc((size_t)ng + 1, sizeof *c);
      if (!c) rc = -1;
      bool inter = so->kind == IR_SET_INTERSECT;
      if (inter)
        for (int64_t g = 0; g < ng && c; g++) cnt[g] = INT64_MAX;
      for (int j = 1; j < nrel && c; j++) {
        memset(c, 0, sizeof *c * (size_t)ng);
        for (int64_t r = 0; r < rels[j].buf->nrows; r++) c[rels[j].gid[r]]++;
        for (int64_t g = 0; g < ng; g++)
          cnt[g] = inter ? (c[g] < cnt[g] ? c[g] : cnt[g]) : cnt[g] + c[g];
      }
      rt_mem_free(c);
    }
  }
  for (int j = 0; j < nrel && rc == 0; j++) {
    if (so->kind != IR_SET_UNION && j > 0) break;   /* only the input's rows come out */
    for (int64_t r = 0; r < rels[j].buf->nrows && rc == 0; r++) {
      bool emit = true;
      if (distinct) {
        int64_t g = rels[j].gid[r];
        switch (so->kind) {
        case IR_SET_UNION: emit = !seen[g]; break;
        case IR_SET_INTERSECT:
          emit = so->all ? cnt[g] > 0 : !seen[g] && cnt[g] > 0;
          if (emit && so->all) cnt[g]--;
          break;
        case IR_SET_EXCEPT:
          if (so->all) {
            emit = cnt[g] == 0;
            if (!emit) cnt[g]--;
          } else {
            emit = !seen[g] && cnt[g] == 0;
          }
          break;
        }
        seen[g] = 1;
      }
      if (emit && put_row(&res, &rels[j], types, n, r) < 0) rc = -1;
    }
  }
  for (int j = 0; j < nrel; j++) rt_mem_free(rels[j].gid);
  rt_mem_free(cnt);
  rt_mem_free(seen);
  if (distinct) rt_aggtab_free(&tab);
  if (rc < 0) {
    rt_rowbuf_free(&res);
    return ex_op_fail(run, op, "out of memory");
  }
  for (int64_t start = 0; rc == 0 && start < res.nrows && !s->done; start += RT_BATCH) {
    int64_t left = res.nrows - start;
    uint32_t nb = left < RT_BATCH ? (uint32_t)left : RT_BATCH;
    for (int k = 0; k < n; k++) rt_rowbuf_view(&res, k, start, NULL, &b->cols[so->out[k]]);
    rc = run->feed(run, s, b, nb, pick, ctx, dn);
  }
  rt_rowbuf_free(&res);
  return rc;
}
