/*
 * merge.c — INTERVAL MERGE OVERLAPPING and INTERVAL MERGE CONSECUTIVE BY
 * (LANGUAGE.md §9.2): which merged interval each row belongs to.
 *
 * Rows are taken per lane in (ts, input order) (ivgroups.c); a row joins
 * the open group when it starts at or before the group's end (overlap or
 * touch; a point inside or at an edge merges), and, for CONSECUTIVE, its
 * BY values equal the group's first row's (NULL equals NULL, -0.0 equals
 * 0.0). Groups are numbered in that order, which is the output order:
 * lanes first seen, then ts. The aggregates over each group are the
 * AGGREGATE breaker's the binder puts after the operator (bind_reshape.c),
 * so both backends compute them as they compute GROUP BY.
 */
#include "interval.h"
#include "runtime/budget.h"

void rt_ivmerge_free(rt_ivmerge_out *o) {
  rt_mem_free(o->row);
  rt_mem_free(o->gid32);
  rt_mem_free(o->gid);
  rt_mem_free(o->ts);
  rt_mem_free(o->dur);
  memset(o, 0, sizeof *o);
}

/* Value bits of BY key c at row i as compared: NULL apart, -0.0 as 0.0. */
static bool by_eq(const rt_ivkey *c, uint32_t a, uint32_t b) {
  bool na = c->valid && !rt_bit(c->valid, a), nb = c->valid && !rt_bit(c->valid, b);
  if (na || nb) return na && nb;
  int64_t x = rt_ivkey_get(c, a), y = rt_ivkey_get(c, b);
  if (c->type == RT_F64) {
    double dx, dy;
    memcpy(&dx, &x, 8);
    memcpy(&dy, &y, 8);
    return dx == dy || (dx != dx && dy != dy);
  }
  return x == y;
}

int rt_ivmerge_run(const rt_ivrel *in, int nby, const rt_ivkey *by, const char *stage,
                   rt_ivmerge_out *out, rt_err *err) {
  memset(out, 0, sizeof *out);
  rt_ivgroups g;
  int ok = rt_ivgroups_build(&g, in, stage, err);
  if (ok) {
    size_t m = g.m + 1;
    out->gid32 = rt_iv_big(m * sizeof *out->gid32);
    out->gid = rt_iv_big(m * sizeof *out->gid);
    out->ts = rt_iv_big(m * sizeof *out->ts);
    out->dur = rt_iv_big(m * sizeof *out->dur);
    if (!out->gid32 || !out->gid || !out->ts || !out->dur)
      ok = rt_errorf(err, -1, "%s: out of memory", stage);
  }
  if (ok) {
    /* the served order is the groups' row order */
    out->row = g.row;
    g.row = NULL;
    out->n = g.m;
  }
  size_t ng = 0;
  for (uint32_t l = 0; ok && l < g.nl; l++) {
    uint64_t gs = 0, ge = 0;
    uint32_t first = 0;
    bool open = false;
    for (uint32_t k = g.off[l]; k < g.off[l + 1]; k++) {
      uint32_t r = out->row[k];
      uint64_t s = g.s[k], e = s + (uint64_t)in->dur[r];
      bool join = open && s <= ge;
      for (int q = 0; join && q < nby; q++) join = by_eq(&by[q], first, r);
      if (join) {
        if (e > ge) ge = e;
      } else {
        if (open) {
          out->ts[ng] = (int64_t)gs;
          out->dur[ng] = (int64_t)(ge - gs);
          ng++;
        }
        open = true;
        gs = s, ge = e, first = r;
      }
      out->gid32[k] = (uint32_t)ng;
      out->gid[k] = (int64_t)ng;
    }
    if (open) {
      out->ts[ng] = (int64_t)gs;
      out->dur[ng] = (int64_t)(ge - gs);
      ng++;
    }
  }
  out->ng = ng;
  rt_ivgroups_free(&g);
  return ok;
}
