/*
 * ivgroups.c — the rows of a relation by PER lane and time, for the
 * reshaping stages of §9.2 (SUBTRACT, SPLIT, QUANTIZE, MERGE): one pass
 * checks the bounds and numbers the lanes, a counting sort groups the
 * rows by lane in input order, and a stable sort per lane puts them in
 * (ts, input order). Input that is already grouped and time-ordered (the
 * lane sequence never decreases, ts never decreases within it) skips the
 * sorts.
 */
#include "interval.h"
#include "runtime/budget.h"

static int oom(rt_err *err, const char *stage) {
  return rt_errorf(err, -1, "%s: out of memory", stage);
}

void rt_ivgroups_free(rt_ivgroups *g) {
  rt_lanes_free(&g->lanes);
  rt_mem_free(g->off);
  rt_mem_free(g->byrow);
  rt_mem_free(g->row);
  rt_mem_free(g->s);
  memset(g, 0, sizeof *g);
}

int rt_ivgroups_build(rt_ivgroups *g, const rt_ivrel *r, const char *stage, rt_err *err) {
  memset(g, 0, sizeof *g);
  rt_type types[RT_LANES_MAXKEYS];
  for (int q = 0; q < r->nkeys && q < RT_LANES_MAXKEYS; q++) types[q] = r->keys[q].type;
  if (!rt_lanes_init(&g->lanes, r->nkeys, types, stage, err)) return 0;
  uint32_t n = r->n;
  uint32_t *lane = rt_iv_big(((size_t)n + 1) * sizeof *lane);
  g->byrow = rt_iv_big(((size_t)n + 1) * sizeof *g->byrow);
  g->row = rt_iv_big(((size_t)n + 1) * sizeof *g->row);
  g->s = rt_iv_big(((size_t)n + 1) * sizeof *g->s);
  int ok = lane && g->byrow && g->row && g->s ? 1 : oom(err, stage);
  if (ok) ok = rt_lanes_assign(&g->lanes, r, true, true, lane, stage, err);
  g->nl = g->lanes.n;
  if (ok && !(g->off = rt_mem_calloc((size_t)g->nl + 2, sizeof *g->off))) ok = oom(err, stage);
  bool sorted = true;
  uint32_t prev_lane = 0;
  int64_t prev_ts = -1;
  for (uint32_t i = 0; ok && i < n; i++) {
    if (!rt_ivrel_bounds_valid(r, i)) {
      g->rows_null++;
      lane[i] = RT_NO_LANE;
      continue;
    }
    int64_t ts = r->ts[i], dur = r->dur[i];
    if (ts < 0 || dur < 0) ok = rt_iv_below_zero(r, i, stage, "", err);
    else if (ts > INT64_MAX - dur) ok = rt_errorf(err, -1, "%s: integer overflow", stage);
    if (!ok) break;
    uint32_t l = lane[i];
    g->off[l + 1]++;
    if (g->m > 0 && (l < prev_lane || (l == prev_lane && ts < prev_ts))) sorted = false;
    prev_lane = l;
    prev_ts = ts;
    g->m++;
  }
  g->presorted = sorted;
  for (uint32_t l = 0; ok && l < g->nl; l++) g->off[l + 1] += g->off[l];
  /* the rows by lane in input order, their starts beside them */
  if (ok && sorted) {
    size_t p = 0;
    for (uint32_t i = 0; i < n; i++)
      if (lane[i] != RT_NO_LANE) g->s[p] = (uint64_t)r->ts[i], g->byrow[p++] = i;
  } else if (ok) {
    uint32_t *next = rt_mem_alloc(((size_t)g->nl + 1) * sizeof *next);
    if (!next) {
      ok = oom(err, stage);
    } else {
      memcpy(next, g->off, (size_t)g->nl * sizeof *next);
      for (uint32_t i = 0; i < n; i++) {
        if (lane[i] == RT_NO_LANE) continue;
        uint32_t p = next[lane[i]]++;
        g->s[p] = (uint64_t)r->ts[i];
        g->byrow[p] = i;
      }
      rt_mem_free(next);
    }
  }
  if (ok) {
    memcpy(g->row, g->byrow, g->m * sizeof *g->row);
    for (uint32_t l = 0; ok && !sorted && l < g->nl; l++)
      if (!rt_iv_sort(g->s + g->off[l], NULL, g->row + g->off[l], g->off[l + 1] - g->off[l]))
        ok = oom(err, stage);
  }
  rt_mem_free(lane);
  return ok;
}

/* ---- an operand in the input's lanes ----------------------------------------- */

void rt_ivops_free(rt_ivops *o) {
  rt_mem_free(o->off);
  rt_mem_free(o->s);
  rt_mem_free(o->e);
  rt_mem_free(o->row);
  memset(o, 0, sizeof *o);
}

int rt_ivops_build(rt_ivops *o, const rt_lanes *lanes, const rt_ivrel *op, unsigned flags,
                   const char *stage, const char *what, rt_err *err) {
  memset(o, 0, sizeof *o);
  uint32_t n = op->n, nl = lanes->n;
  o->nl = nl;
  uint32_t *lane = rt_iv_big(((size_t)n + 1) * sizeof *lane);
  uint32_t *next = rt_mem_calloc((size_t)nl + 2, sizeof *next);
  o->off = rt_mem_calloc((size_t)nl + 2, sizeof *o->off);
  o->row = rt_iv_big(((size_t)n + 1) * sizeof *o->row);
  o->s = rt_iv_big(((size_t)n + 1) * sizeof *o->s);
  o->e = rt_iv_big(((size_t)n + 1) * sizeof *o->e);
  int ok = lane && next && o->off && o->row && o->s && o->e ? 1 : oom(err, stage);
  /* every row's lane first (a lookup that never inserts leaves the
   * table unchanged), through the small-key table */
  if (ok && nl) ok = rt_lanes_assign((rt_lanes *)lanes, op, false, true, lane, stage, err);
  for (uint32_t i = 0; ok && i < n; i++) {
    uint32_t l = nl ? lane[i] : RT_NO_LANE;
    lane[i] = RT_NO_LANE;
    if (!rt_ivrel_bounds_valid(op, i)) continue;
    int64_t ts = op->ts[i], dur = op->dur[i];
    if (ts < 0 || (dur < 0 && !(flags & RT_IVU_OPEN_END))) {
      ok = rt_iv_below_zero(op, i, stage, what, err);
      break;
    }
    if (dur == 0 && !(flags & RT_IVU_POINTS)) continue;
    if (dur > 0 && ts > INT64_MAX - dur) {
      ok = rt_errorf(err, -1, "%s: integer overflow", stage);
      break;
    }
    if (l == RT_NO_LANE) continue;
    lane[i] = l;
    o->off[l + 1]++;
  }
  for (uint32_t l = 0; ok && l < nl; l++) o->off[l + 1] += o->off[l];
  if (ok) {
    memcpy(next, o->off, (size_t)nl * sizeof *next);
    for (uint32_t i = 0; i < n; i++) {
      if (lane[i] == RT_NO_LANE) continue;
      uint32_t p = next[lane[i]]++;
      int64_t dur = op->dur[i];
      o->s[p] = (uint64_t)op->ts[i];
      o->e[p] = dur < 0 ? UINT64_MAX : o->s[p] + (uint64_t)dur;
      o->row[p] = i;
    }
  }
  for (uint32_t l = 0; ok && l < nl; l++) {
    size_t lo = o->off[l], hi = o->off[l + 1];
    if (!rt_iv_sort(o->s + lo, o->e + lo, o->row + lo, hi - lo)) ok = oom(err, stage);
  }
  rt_mem_free(lane);
  rt_mem_free(next);
  return ok;
}
