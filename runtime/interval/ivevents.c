/*
 * ivevents.c — INTERVALS FROM EVENTS src [PER …] [STOP src2] [KEEPING LAST
 * OPEN | CLOSING LAST AT (expr)] (LANGUAGE.md §9.1): each event opens an
 * interval that ends at the next event of its lane, or at the first STOP
 * event of the lane at or after it, whichever comes first.
 *
 * Events are laid out per lane by a counting sort (stable, so input order
 * breaks ties in ts), each lane checked for time order and sorted only
 * when it is not (a counter table in ts order needs no sort: its lanes
 * are each in time order). STOP events are laid out the same way under
 * the events' lanes (a STOP lane with no event is never read) and walked
 * with one forward pointer per lane, so the whole is O(n log n), linear
 * when already ordered.
 *
 * Without STOP, when every lane is in time order in the input (checked
 * in the counting pass), no layout is made at all: a second pass writes
 * each event to its output slot and the dur of its lane's previous one
 * (events_in_order), which halves the memory the operator touches.
 *
 * DECISIONS: a STOP bounds the last event of a lane too; KEEPING LAST
 * OPEN / CLOSING LAST AT apply only to a last event no STOP follows.
 */
#include <stdlib.h>

#include "interval.h"
#include "runtime/budget.h"

void rt_events_free(rt_events_out *o) {
  rt_mem_free(o->ts);
  rt_mem_free(o->dur);
  rt_mem_free(o->dur_valid);
  rt_mem_free(o->row);
  memset(o, 0, sizeof *o);
}

static int below_zero(const rt_ivrel *r, uint32_t i, const char *stage, const char *what,
                      rt_err *err) {
  if (r->id && (!r->id->valid || rt_bit(r->id->valid, i)))
    return rt_errorf(err, -1, "%s: ts is below zero: the %srow with id %lld has ts %lld", stage,
                     what, (long long)rt_ivkey_get(r->id, i), (long long)r->ts[i]);
  return rt_errorf(err, -1, "%s: ts is below zero: a %srow has ts %lld", stage, what,
                   (long long)r->ts[i]);
}

static bool ts_valid(const rt_ivrel *r, uint32_t i) {
  return !r->ts_valid || rt_bit(r->ts_valid, i);
}

/* Rows of r with a valid ts, laid out per lane (lane[] from the caller;
 * RT_NO_LANE rows left out): items off[l] .. off[l+1]-1 of lane l, each
 * lane in (ts, row) order. s holds rt_iv_u(ts). */
typedef struct laid {
  uint32_t *off;
  uint64_t *s;
  uint32_t *row;
  uint64_t sorted_lanes;
} laid;

static void laid_free(laid *l) {
  rt_mem_free(l->off);
  rt_mem_free(l->s);
  rt_mem_free(l->row);
}

/* Returns 1, 0 on a negative ts (error set), -1 when out of memory. */
static int lay_out(const rt_ivrel *r, const uint32_t *lane, uint32_t nl, const char *stage,
                   const char *what, laid *out, rt_err *err) {
  memset(out, 0, sizeof *out);
  uint32_t *off = out->off = rt_mem_calloc((size_t)nl + 2, sizeof *off);
  if (!off) return -1;
  size_t m = 0;
  for (uint32_t i = 0; i < r->n; i++) {
    if (lane[i] == RT_NO_LANE || !ts_valid(r, i)) continue;
    if (r->ts[i] < 0) return below_zero(r, i, stage, what, err);
    off[lane[i] + 1]++;
    m++;
  }
  for (uint32_t l = 0; l < nl; l++) off[l + 1] += off[l];
  out->s = rt_iv_big((m + 1) * sizeof *out->s);
  out->row = rt_iv_big((m + 1) * sizeof *out->row);
  uint32_t *next = rt_mem_alloc(((size_t)nl + 1) * sizeof *next);
  if (!out->s || !out->row || !next) {
    rt_mem_free(next);
    return -1;
  }
  memcpy(next, off, (size_t)nl * sizeof *next);
  for (uint32_t i = 0; i < r->n; i++) {
    if (lane[i] == RT_NO_LANE || !ts_valid(r, i)) continue;
    uint32_t p = next[lane[i]]++;
    out->s[p] = rt_iv_u(r->ts[i]);
    out->row[p] = i;
  }
  rt_mem_free(next);
  /* rt_iv_sort costs one scan on a lane already in order */
  for (uint32_t l = 0; l < nl; l++) {
    size_t lo = off[l], cnt = off[l + 1] - lo;
    bool in_order = true;
    for (size_t i = lo + 1; i < lo + cnt && in_order; i++) in_order = out->s[i - 1] <= out->s[i];
    if (in_order) continue;
    out->sorted_lanes++;
    if (!rt_iv_sort(out->s + lo, NULL, out->row + lo, cnt)) return -1;
  }
  return 1;
}

/* The last event of a lane, at output slot p (row, ts): no next event
 * ends it, so KEEPING LAST OPEN's -1 or CLOSING LAST AT's end. Returns
 * false with the error set on an end before the event. */
static bool close_last(rt_events_out *out, size_t p, uint32_t row, int64_t ts, const int64_t *close,
                       const uint64_t *close_valid, const char *stage, rt_err *err) {
  int64_t dur = -1;
  if (close) {
    if (close_valid && !rt_bit(close_valid, row)) {
      out->dur_valid[p / 64] &= ~(1ull << (p % 64));
      dur = 0;
    } else if (close[row] < ts) {
      rt_errorf(err, -1,
                "%s: ts or dur is below zero: CLOSING LAST AT gives %lld, before the last "
                "event's ts %lld",
                stage, (long long)close[row], (long long)ts);
      return false;
    } else {
      dur = close[row] - ts;
    }
  }
  out->dur[p] = dur;
  return true;
}

/* The output arrays for m events (ts only when wanted). */
static bool events_alloc(rt_events_out *out, size_t m, bool want_ts) {
  out->ts = want_ts ? rt_iv_big((m + 1) * sizeof *out->ts) : NULL;
  out->dur = rt_iv_big((m + 1) * sizeof *out->dur);
  out->row = rt_iv_big((m + 1) * sizeof *out->row);
  out->dur_valid = rt_iv_big((m / 64 + 1) * sizeof *out->dur_valid);
  if ((want_ts && !out->ts) || !out->dur || !out->row || !out->dur_valid) return false;
  memset(out->dur_valid, 0xff, (m / 64 + 1) * sizeof *out->dur_valid);
  return true;
}

/* No STOP: when every lane's events come in time order (ties in input
 * order, as they are), each event's slot is known from the lanes' counts,
 * and its dur is the next event of its lane's ts minus its own, so one
 * pass writes the output. Returns 1 (done), 0 (error set), -1 (out of
 * memory), 2 (a lane is out of order: the caller lays the lanes out). */
static int events_in_order(const rt_ivrel *ev, const uint32_t *lane, uint32_t nl, const int64_t *close,
                           const uint64_t *close_valid, const char *stage, bool want_ts,
                           rt_events_out *out, rt_events_stats *stats, rt_err *err) {
  /* per lane: its rank (first event with a ts first), events, the last
   * event's ts and then its output slot */
  uint32_t *rank = rt_mem_alloc(((size_t)nl + 1) * sizeof *rank);
  uint32_t *by_rank = rt_mem_alloc(((size_t)nl + 1) * sizeof *by_rank);
  size_t *pos = rt_mem_calloc((size_t)nl + 1, sizeof *pos);
  size_t *lastp = rt_mem_alloc(((size_t)nl + 1) * sizeof *lastp);
  int64_t *last = rt_mem_alloc(((size_t)nl + 1) * sizeof *last);
  int rc = -1;
  if (!rank || !by_rank || !pos || !lastp || !last) goto done;
  for (uint32_t l = 0; l < nl; l++) rank[l] = RT_NO_LANE;
  uint32_t nranked = 0;
  size_t m = 0;
  rc = 2;
  for (uint32_t i = 0; i < ev->n; i++) {
    if (!ts_valid(ev, i)) continue;
    uint32_t l = lane[i];
    int64_t t = ev->ts[i];
    if (rank[l] == RT_NO_LANE) by_rank[nranked] = l, rank[l] = nranked++;
    else if (t < last[l]) goto done;
    if (t < 0) {
      rc = below_zero(ev, i, stage, "", err);
      goto done;
    }
    last[l] = t;
    pos[l]++;
    m++;
  }
  rc = -1;
  if (!events_alloc(out, m, want_ts)) goto done;
  size_t at = 0;
  for (uint32_t k = 0; k < nranked; k++) {
    uint32_t l = by_rank[k];
    size_t cnt = pos[l];
    pos[l] = at, lastp[l] = SIZE_MAX;
    at += cnt;
  }
  int64_t *dur = out->dur, *ots = out->ts;
  uint32_t *orow = out->row;
  for (uint32_t i = 0; i < ev->n; i++) {
    if (!ts_valid(ev, i)) continue;
    uint32_t l = lane[i];
    int64_t t = ev->ts[i];
    size_t p = pos[l]++;
    orow[p] = i;
    if (ots) ots[p] = t;
    if (lastp[l] != SIZE_MAX) dur[lastp[l]] = t - last[l];   /* both >= 0: no overflow */
    lastp[l] = p, last[l] = t;
  }
  rc = 0;
  for (uint32_t k = 0; k < nranked; k++) {
    uint32_t l = by_rank[k];
    if (!close_last(out, lastp[l], orow[lastp[l]], last[l], close, close_valid, stage, err)) goto done;
  }
  out->n = m;
  if (stats) {
    stats->events = m;
    stats->lanes = nranked;
    stats->lanes_sorted = 0;
  }
  rc = 1;
done:
  rt_mem_free(rank);
  rt_mem_free(by_rank);
  rt_mem_free(pos);
  rt_mem_free(lastp);
  rt_mem_free(last);
  return rc;
}

int rt_events_run(const rt_ivrel *ev, const rt_ivrel *stop, const int64_t *close,
                  const uint64_t *close_valid, const char *stage, bool want_ts, rt_events_out *out,
                  rt_events_stats *stats, rt_err *err) {
  memset(out, 0, sizeof *out);
  rt_lanes lanes;
  rt_type types[RT_LANES_MAXKEYS];
  for (int q = 0; q < ev->nkeys && q < RT_LANES_MAXKEYS; q++) types[q] = ev->keys[q].type;
  if (!rt_lanes_init(&lanes, ev->nkeys, types, stage, err)) return 0;
  int rc = 0;
  laid E = {0}, S = {0};
  uint32_t *lane = rt_iv_big(((size_t)ev->n + 1) * sizeof *lane);
  uint32_t *slane = stop ? rt_iv_big(((size_t)stop->n + 1) * sizeof *slane) : NULL;
  uint32_t *rank = NULL;
  if (!lane || (stop && !slane)) goto oom;
  if (!rt_lanes_assign(&lanes, ev, true, true, lane, stage, err)) goto done;
  uint32_t nl = lanes.n;
  if (!stop) {
    int fr = events_in_order(ev, lane, nl, close, close_valid, stage, want_ts, out, stats, err);
    if (fr == 1) rc = 1;
    if (fr == -1) goto oom;
    if (fr != 2) goto done;
  }
  /* Lanes come out in the order of their first event with a ts (a lane
   * that only NULL-ts rows made emits nothing). */
  rank = rt_mem_alloc(((size_t)nl + 1) * sizeof *rank);
  if (!rank) goto oom;
  for (uint32_t l = 0; l < nl; l++) rank[l] = RT_NO_LANE;
  uint32_t nranked = 0;
  for (uint32_t i = 0; i < ev->n && nranked < nl; i++)
    if (ts_valid(ev, i) && rank[lane[i]] == RT_NO_LANE) rank[lane[i]] = nranked++;
  int r = lay_out(ev, lane, nl, stage, "", &E, err);
  if (r < 0) goto oom;
  if (r == 0) goto done;
  if (stop) {
    /* STOP events in the events' lanes only (a lookup never inserts) */
    if (!rt_lanes_assign(&lanes, stop, false, true, slane, stage, err)) goto done;
    r = lay_out(stop, slane, nl, stage, "STOP ", &S, err);
    if (r < 0) goto oom;
    if (r == 0) goto done;
  }
  size_t m = E.off[nl];
  if (!events_alloc(out, m, want_ts)) goto oom;
  uint32_t *by_rank = rank;   /* rank → lane, in place of lane → rank */
  {
    uint32_t *inv = rt_mem_alloc(((size_t)nl + 1) * sizeof *inv);
    if (!inv) goto oom;
    for (uint32_t l = 0; l < nl; l++)
      if (rank[l] != RT_NO_LANE) inv[rank[l]] = l;
    rt_mem_free(rank);
    rank = by_rank = inv;
  }
  size_t o = 0;
  for (uint32_t k = 0; k < nranked; k++) {
    uint32_t l = by_rank[k];
    size_t lo = E.off[l], hi = E.off[l + 1];
    size_t sp = stop ? S.off[l] : 0, shi = stop ? S.off[l + 1] : 0;
    for (size_t i = lo; i < hi; i++, o++) {
      uint64_t t = E.s[i];
      uint32_t row = E.row[i];
      while (sp < shi && S.s[sp] < t) sp++;
      bool has_end = false;
      uint64_t end = 0;
      if (i + 1 < hi) has_end = true, end = E.s[i + 1];
      if (sp < shi && (!has_end || S.s[sp] < end)) has_end = true, end = S.s[sp];
      int64_t ts = rt_iv_s(t);
      if (has_end) out->dur[o] = rt_iv_s(end) - ts;   /* both >= 0: no overflow */
      else if (!close_last(out, o, row, ts, close, close_valid, stage, err)) goto done;
      if (out->ts) out->ts[o] = ts;
      out->row[o] = row;
    }
  }
  out->n = o;
  if (stats) {
    stats->events = m;
    stats->lanes = nranked;
    stats->lanes_sorted = E.sorted_lanes + S.sorted_lanes;
  }
  rc = 1;
  goto done;
oom:
  rt_errorf(err, -1, "%s: out of memory", stage);
done:
  laid_free(&E);
  laid_free(&S);
  rt_mem_free(lane);
  rt_mem_free(slane);
  rt_mem_free(rank);
  rt_lanes_free(&lanes);
  return rc;
}
