/*
 * split.c — INTERVAL SPLIT src AS a [PER cols] (LANGUAGE.md §9.2): each
 * input row is cut at every boundary of the operand's rows of its lane
 * inside it (every start and end, and a point's instant), and each piece
 * carries the operand row covering it (once per such row; none: once,
 * with RT_NO_ROW). The pieces of one row tile it exactly.
 *
 * Per lane the operand's positive rows are sorted by (start, end, row)
 * under a max-end tree (ivindex.c), its points by instant, and every
 * boundary once in a sorted array. No boundary lies inside a piece, so
 * a positive row covers a piece [a, b) exactly when it starts at or
 * before a and ends at or after b: the tree answers that over the rows
 * starting at or before a. O((n + m) log m + k).
 */
#include "interval.h"
#include "runtime/budget.h"

typedef struct sctx {
  rt_ivpieces *out;
  const uint32_t *prow;
  int64_t ts, dur;
  uint32_t r;
  size_t hits;
  bool oom;
} sctx;

static bool hit(void *ctx, size_t i) {
  sctx *c = ctx;
  c->hits++;
  if (!rt_ivpieces_push(c->out, c->ts, c->dur, c->r, c->prow[i], 0)) return c->oom = true, false;
  return true;
}

int rt_ivsplit_run(const rt_ivrel *in, const rt_ivrel *op, const char *stage, rt_ivpieces *out,
                   rt_err *err) {
  rt_ivgroups g;
  rt_ivops o;
  memset(&o, 0, sizeof o);
  out->with_orow = true;
  int ok = rt_ivgroups_build(&g, in, stage, err);
  if (ok) ok = rt_ivops_build(&o, &g.lanes, op, RT_IVU_POINTS, stage, "", err);
  size_t n = ok ? o.off[o.nl] : 0;
  /* scratch per lane: positives (ps, pe, prow), points (qs, qrow), and
   * every boundary once (bnd; dummy rows for the sort) */
  uint64_t *ps = NULL, *pe = NULL, *qs = NULL, *bnd = NULL;
  uint32_t *prow = NULL, *qrow = NULL, *dummy = NULL;
  if (ok) {
    ps = rt_iv_big((n + 1) * sizeof *ps);
    pe = rt_iv_big((n + 1) * sizeof *pe);
    qs = rt_iv_big((n + 1) * sizeof *qs);
    prow = rt_iv_big((n + 1) * sizeof *prow);
    qrow = rt_iv_big((n + 1) * sizeof *qrow);
    bnd = rt_iv_big((2 * n + 1) * sizeof *bnd);
    dummy = rt_iv_big((2 * n + 1) * sizeof *dummy);
    if (!ps || !pe || !qs || !prow || !qrow || !bnd || !dummy) ok = 0;
  }
  sctx c = {.out = out, .prow = prow};
  for (uint32_t l = 0; ok && l < g.nl; l++) {
    size_t lo = o.off[l], hi = o.off[l + 1], from = out->n;
    size_t np = 0, nq = 0, nb = 0;
    for (size_t i = lo; i < hi; i++) {
      if (o.s[i] != o.e[i]) {
        ps[np] = o.s[i], pe[np] = o.e[i], prow[np] = o.row[i];
        np++;
        bnd[nb] = o.s[i], dummy[nb++] = 0;
        bnd[nb] = o.e[i], dummy[nb++] = 0;
      } else {
        qs[nq] = o.s[i], qrow[nq] = o.row[i];
        nq++;
        bnd[nb] = o.s[i], dummy[nb++] = 0;
      }
    }
    if (!rt_iv_sort(bnd, NULL, dummy, nb)) {
      ok = 0;
      break;
    }
    size_t nu = 0;   /* unique boundaries */
    for (size_t i = 0; i < nb; i++)
      if (nu == 0 || bnd[nu - 1] != bnd[i]) bnd[nu++] = bnd[i];
    rt_ivtree t;
    if (!rt_ivtree_build(&t, pe, np)) {
      ok = 0;
      break;
    }
    for (uint32_t k = g.off[l]; ok && k < g.off[l + 1]; k++) {
      uint32_t r = g.byrow[k];
      uint64_t a = (uint64_t)in->ts[r], end = a + (uint64_t)in->dur[r];
      c.r = r;
      if (a == end) {
        /* a point: the positives holding its instant, then points at it */
        c.ts = (int64_t)a, c.dur = 0, c.hits = 0;
        rt_ivtree_query(&t, 0, rt_iv_lower(ps, np, a + 1), a + 1, hit, &c);
        for (size_t q = rt_iv_lower(qs, nq, a); q < nq && qs[q] == a && !c.oom; q++) {
          c.hits++;
          if (!rt_ivpieces_push(out, (int64_t)a, 0, r, qrow[q], 0)) c.oom = true;
        }
        if (!c.oom && !c.hits && !rt_ivpieces_push(out, (int64_t)a, 0, r, RT_NO_ROW, 0)) c.oom = true;
        if (c.oom) ok = 0;
        continue;
      }
      size_t j = rt_iv_lower(bnd, nu, a + 1);
      uint64_t cur = a;
      while (ok) {
        uint64_t b = j < nu && bnd[j] < end ? bnd[j] : end;
        c.ts = (int64_t)cur, c.dur = (int64_t)(b - cur), c.hits = 0;
        rt_ivtree_query(&t, 0, rt_iv_lower(ps, np, cur + 1), b, hit, &c);
        if (!c.oom && !c.hits && !rt_ivpieces_push(out, c.ts, c.dur, r, RT_NO_ROW, 0)) c.oom = true;
        if (c.oom) ok = 0;
        if (b == end) break;
        cur = b;
        j++;
      }
    }
    rt_ivtree_free(&t);
    if (ok && !rt_ivpieces_order(out, from)) ok = 0;
  }
  if (!ok && !err->set) rt_errorf(err, -1, "%s: out of memory", stage);
  rt_mem_free(ps);
  rt_mem_free(pe);
  rt_mem_free(qs);
  rt_mem_free(prow);
  rt_mem_free(qrow);
  rt_mem_free(bnd);
  rt_mem_free(dummy);
  rt_ivops_free(&o);
  rt_ivgroups_free(&g);
  return ok;
}
