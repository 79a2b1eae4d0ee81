/*
 * fillgaps.c — INTERVAL FILL GAPS WITH bg [PER …]: for every lane, the parts
 * of background rows that no input row of the lane covers become filler
 * rows. (Passing the input rows through and attaching columns is the
 * executor's part; this file computes the fillers.)
 *
 * Per lane, the input rows' coverage is sorted by start and merged into a
 * union of disjoint intervals; each background row of the lane (sorted by
 * start, checked not to meet its neighbour) then subtracts that union in
 * one forward walk, so a lane costs O((input + background) log) for the
 * sorts and linear after. Example: background [0,100), input [10,20) and
 * [15,40) → union [10,40) → fillers [0,10) and [40,100).
 *
 * Input dur < 0 covers to the end of time; a finite ts + dur past INT64_MAX
 * is `integer overflow`, as in every interval operator.
 * An input point (dur = 0) holds an instant but no width, so it never
 * splits a filler: fillers are maximal gaps of positive width.
 */
#include <stdlib.h>

#include "interval.h"
#include "runtime/budget.h"

static const uint64_t U_INF = UINT64_MAX;

void rt_fillgaps_free(rt_fill_out *o) {
  rt_mem_free(o->ts);
  rt_mem_free(o->dur);
  rt_mem_free(o->bg);
  rt_mem_free(o->rep);
  memset(o, 0, sizeof *o);
}

static bool put_filler(rt_fill_out *o, uint64_t s, uint64_t e, uint32_t bg, uint32_t rep) {
  if (o->n == o->cap) {
    size_t cap = o->cap, c2;
    c2 = cap;
    if (!rt_iv_grow((void **)&o->ts, &c2, o->n + 1, 8)) return false;
    c2 = cap;
    if (!rt_iv_grow((void **)&o->dur, &c2, o->n + 1, 8)) return false;
    c2 = cap;
    if (!rt_iv_grow((void **)&o->bg, &c2, o->n + 1, 4)) return false;
    c2 = cap;
    if (!rt_iv_grow((void **)&o->rep, &c2, o->n + 1, 4)) return false;
    o->cap = c2;
  }
  o->ts[o->n] = rt_iv_s(s);
  o->dur[o->n] = rt_iv_s(e) - rt_iv_s(s);
  o->bg[o->n] = bg;
  o->rep[o->n] = rep;
  o->n++;
  return true;
}

/* Intervals laid out per lane: lane l is items off[l] .. off[l+1]-1. */
typedef struct spans {
  uint32_t *off;
  uint64_t *s, *e;
  uint32_t *row;
} spans;

static void spans_free(spans *x) {
  rt_mem_free(x->off);
  rt_mem_free(x->s);
  rt_mem_free(x->e);
  rt_mem_free(x->row);
}

/* Counting sort of the rows with lane[i] != RT_NO_LANE into nl lanes, each
 * then sorted by (start, end, row). s_of/e_of give the bounds. */
static bool spans_build(spans *x, uint32_t nl, uint32_t n, const uint32_t *lane,
                        const uint64_t *s_of, const uint64_t *e_of) {
  memset(x, 0, sizeof *x);
  x->off = rt_mem_calloc((size_t)nl + 2, sizeof *x->off);
  if (!x->off) return false;
  size_t m = 0;
  for (uint32_t i = 0; i < n; i++)
    if (lane[i] != RT_NO_LANE) {
      x->off[lane[i] + 1]++;
      m++;
    }
  for (uint32_t l = 0; l < nl; l++) x->off[l + 1] += x->off[l];
  x->s = rt_iv_big((m + 1) * 8);
  x->e = rt_iv_big((m + 1) * 8);
  x->row = rt_iv_big((m + 1) * 4);
  uint32_t *next = rt_mem_alloc(((size_t)nl + 1) * sizeof *next);
  if (!x->s || !x->e || !x->row || !next) {
    rt_mem_free(next);
    return false;
  }
  memcpy(next, x->off, (size_t)nl * sizeof *next);
  for (uint32_t i = 0; i < n; i++) {
    if (lane[i] == RT_NO_LANE) continue;
    uint32_t p = next[lane[i]]++;
    x->s[p] = s_of[i];
    x->e[p] = e_of[i];
    x->row[p] = i;
  }
  rt_mem_free(next);
  for (uint32_t l = 0; l < nl; l++)
    if (!rt_iv_sort(x->s + x->off[l], x->e + x->off[l], x->row + x->off[l],
                    x->off[l + 1] - x->off[l]))
      return false;
  return true;
}

/* Subtracts the union u[0..nu) (sorted, disjoint) from background rows
 * b[0..nb) (sorted, disjoint), appending fillers. */
static bool subtract(rt_fill_out *o, const uint64_t *us, const uint64_t *ue, size_t nu,
                     const uint64_t *bs, const uint64_t *be, const uint32_t *brow, size_t nb,
                     uint32_t rep) {
  size_t u = 0;
  for (size_t q = 0; q < nb; q++) {
    uint64_t a = bs[q], b = be[q];
    if (a == b) continue;   /* a background point has no width to fill */
    while (u < nu && ue[u] <= a) u++;
    uint64_t cur = a;
    for (size_t k = u; k < nu && us[k] < b; k++) {
      if (us[k] > cur && !put_filler(o, cur, us[k], brow[q], rep)) return false;
      if (ue[k] > cur) cur = ue[k];
      if (cur >= b) break;
    }
    if (cur < b && !put_filler(o, cur, b, brow[q], rep)) return false;
  }
  return true;
}

/* Sorted by start: two background rows meet iff two neighbours do. */
static bool bg_meets(const uint64_t *s, const uint64_t *e, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (s[i - 1] == e[i - 1] ? s[i] == s[i - 1] : s[i] < e[i - 1]) return true;
  return false;
}

int rt_fillgaps_run(const rt_ivrel *in, const rt_ivrel *bg, bool bg_has_per, const char *stage,
                    rt_fill_out *out, rt_err *err) {
  memset(out, 0, sizeof *out);
  int nkeys = in->nkeys;
  if (nkeys == 0) bg_has_per = false;
  if (bg_has_per && bg->nkeys != nkeys)
    return rt_errorf(err, -1, "%s: expected the background to have every PER column or none", stage);
  rt_type types[RT_LANES_MAXKEYS];
  for (int q = 0; q < nkeys && q < RT_LANES_MAXKEYS; q++) types[q] = in->keys[q].type;
  rt_lanes lanes;
  if (!rt_lanes_init(&lanes, nkeys, types, stage, err)) return 0;

  uint32_t ni = in->n, nb = bg->n;
  uint32_t *ilane = rt_iv_big(((size_t)ni + 1) * 4);
  uint32_t *blane = rt_iv_big(((size_t)nb + 1) * 4);
  uint64_t *is = rt_iv_big(((size_t)ni + 1) * 8), *ie = rt_iv_big(((size_t)ni + 1) * 8);
  uint64_t *bs = rt_iv_big(((size_t)nb + 1) * 8), *be = rt_iv_big(((size_t)nb + 1) * 8);
  uint32_t *rep = NULL;
  spans cov = {0}, back = {0};
  int ok = ilane && blane && is && ie && bs && be;
  if (!ok) ok = rt_errorf(err, -1, "%s: out of memory", stage);
  if (ok) ok = rt_lanes_assign(&lanes, in, true, true, ilane, stage, err);
  if (ok && nkeys == 0 && !lanes.n && rt_lanes_lookup(&lanes, NULL, 0, true) < 0)
    ok = rt_errorf(err, -1, "%s: out of memory", stage);   /* the one lane always exists */
  if (ok && bg_has_per) ok = rt_lanes_assign(&lanes, bg, true, true, blane, stage, err);
  uint32_t nl = lanes.n;
  if (ok && !(rep = rt_mem_alloc(((size_t)nl + 1) * 4))) ok = rt_errorf(err, -1, "%s: out of memory", stage);
  for (uint32_t l = 0; ok && l < nl; l++) rep[l] = RT_NO_ROW;

  /* Input coverage: positive-width rows with valid bounds. */
  for (uint32_t i = 0; ok && i < ni; i++) {
    if (rep[ilane[i]] == RT_NO_ROW) rep[ilane[i]] = i;
    if (!rt_ivrel_bounds_valid(in, i) || in->dur[i] == 0) {
      ilane[i] = RT_NO_LANE;
      continue;
    }
    int64_t ts = in->ts[i], dur = in->dur[i];
    if (dur > 0 && ts > INT64_MAX - dur) {
      ok = rt_errorf(err, -1, "%s: integer overflow", stage);
      break;
    }
    is[i] = rt_iv_u(ts);
    ie[i] = dur < 0 ? U_INF : rt_iv_u(ts + dur);
  }
  /* Background rows: one lane each (PER) or a single shared list (lane 0
   * of their own numbering). */
  for (uint32_t i = 0; ok && i < nb; i++) {
    if (!bg_has_per) blane[i] = 0;
    if (!rt_ivrel_bounds_valid(bg, i)) {
      blane[i] = RT_NO_LANE;
      continue;
    }
    int64_t ts = bg->ts[i], dur = bg->dur[i];
    if (ts < 0 || dur < 0) ok = rt_iv_below_zero(bg, i, stage, "background ", err);
    else if (ts > INT64_MAX - dur) ok = rt_errorf(err, -1, "%s: integer overflow", stage);
    else {
      bs[i] = rt_iv_u(ts);
      be[i] = rt_iv_u(ts + dur);
    }
  }
  if (ok && !spans_build(&cov, nl, ni, ilane, is, ie)) ok = rt_errorf(err, -1, "%s: out of memory", stage);
  uint32_t nbl = bg_has_per ? nl : 1;
  if (ok && !spans_build(&back, nbl, nb, blane, bs, be)) ok = rt_errorf(err, -1, "%s: out of memory", stage);
  for (uint32_t l = 0; ok && l < nbl; l++) {
    size_t lo = back.off[l];
    if (bg_meets(back.s + lo, back.e + lo, back.off[l + 1] - lo))
      ok = rt_errorf(err, -1, "%s: background rows overlap within a lane", stage);
  }
  for (uint32_t l = 0; ok && l < nl; l++) {
    /* Merge the lane's coverage into a union, in place. */
    size_t lo = cov.off[l], hi = cov.off[l + 1], nu = 0;
    uint64_t *us = cov.s + lo, *ue = cov.e + lo;
    for (size_t i = lo; i < hi; i++) {
      if (nu && cov.s[i] <= ue[nu - 1]) {
        if (cov.e[i] > ue[nu - 1]) ue[nu - 1] = cov.e[i];
      } else {
        us[nu] = cov.s[i];
        ue[nu] = cov.e[i];
        nu++;
      }
    }
    uint32_t bl = bg_has_per ? l : 0;
    size_t blo = back.off[bl], bn = back.off[bl + 1] - blo;
    if (!subtract(out, us, ue, nu, back.s + blo, back.e + blo, back.row + blo, bn, rep[l]))
      ok = rt_errorf(err, -1, "%s: out of memory", stage);
  }
  rt_lanes_free(&lanes);
  spans_free(&cov);
  spans_free(&back);
  rt_mem_free(ilane);
  rt_mem_free(blane);
  rt_mem_free(is);
  rt_mem_free(ie);
  rt_mem_free(bs);
  rt_mem_free(be);
  rt_mem_free(rep);
  return ok;
}
