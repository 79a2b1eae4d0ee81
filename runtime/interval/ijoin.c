/*
 * ijoin.c — [LEFT] INTERVAL JOIN: the operand is read once into per-lane
 * interval indexes; input rows then probe it in any order.
 *
 * Index: per lane, items sorted by (start, row) with their ends. A lane
 * whose items never meet is "disjoint": its ends then ascend too, and a
 * binary search on the ends finds the first item that reaches the probe.
 * An overlapping lane gets a max-end pyramid (rt_ivtree), which lists the
 * items reaching the probe in start order without scanning the others.
 * Either way the candidates are the items that start early enough and end
 * late enough to possibly match; the exact relationship is then tested.
 * The matches of one input row thus come in operand start order, ties by
 * operand row.
 *
 * Bounds: time is integral; dur > 0 is [ts, ts+dur); dur = 0 is a point
 * holding only the instant ts; dur < 0 never ends (its end is INT64_MAX,
 * exclusive, the end of representable time). Bounds are compared in
 * rt_iv_u order, so negative ts works. Intervals are read as ranges of
 * continuous time in which a point is a single instant. With input
 * I = [s, e) and operand O = [a, b) the relationships are:
 *
 *   relationship     I and O positive      I a point s         O a point a
 *   OVERLAPPING      a < e && s < b        a <= s < b          s <= a < e
 *   COVERING BEGIN   a <= s < b            a <= s < b          a == s
 *   COVERING END     a < e <= b            a <= s < b          never (*)
 *   COVERING BOUNDS  a <= s && e <= b      a <= s < b          never (*)
 *   WITHIN BOUNDS    s <= a && b <= e      never               s <= a < e
 *
 * and two points match each other in every relationship when a == s.
 * (*) unless I is a point too. The reasons: a point input's first and last
 * instant is s itself, so COVERING BEGIN / END / BOUNDS all ask "does O
 * hold s"; a point operand holds no stretch of time, so it cannot cover a
 * positive input's bounds nor hold the instant just before e, but it lies
 * within I when I holds it. Every relationship implies OVERLAPPING, which
 * is what the index narrows on.
 */
#include <stdlib.h>

#include "interval.h"
#include "runtime/budget.h"

static const uint64_t U_INF = UINT64_MAX;   /* rt_iv_u(INT64_MAX) */

void rt_ijpairs_free(rt_ijpairs *p) {
  rt_mem_free(p->in);
  rt_mem_free(p->op);
  memset(p, 0, sizeof *p);
}

void rt_ijoin_free(rt_ijoin *j) {
  if (j->trees)
    for (uint32_t l = 0; l < j->nlanes; l++) rt_ivtree_free(&j->trees[l]);
  rt_mem_free(j->trees);
  rt_mem_free(j->off);
  rt_mem_free(j->s);
  rt_mem_free(j->e);
  rt_mem_free(j->pt);
  rt_mem_free(j->row);
  rt_mem_free(j->overlaps);
  rt_lanes_free(&j->lanes);
  memset(j, 0, sizeof *j);
}

/* End of [ts, ts+dur) in rt_iv_u order; false on overflow. */
static inline bool end_of(int64_t ts, int64_t dur, uint64_t *e) {
  if (dur < 0) {
    *e = U_INF;
    return true;
  }
  if (ts > 0 && dur > INT64_MAX - ts) return false;
  *e = rt_iv_u(ts + dur);
  return true;
}

int rt_ijoin_build(rt_ijoin *j, const rt_ivrel *op, rt_ijrel rel, const char *stage,
                   rt_err *err) {
  return rt_ijoin_build_keys(j, op, rel, false, stage, err);
}

int rt_ijoin_build_keys(rt_ijoin *j, const rt_ivrel *op, rt_ijrel rel, bool null_keys,
                        const char *stage, rt_err *err) {
  memset(j, 0, sizeof *j);
  j->rel = rel;
  j->stage = stage;
  rt_type types[RT_LANES_MAXKEYS];
  for (int q = 0; q < op->nkeys && q < RT_LANES_MAXKEYS; q++) types[q] = op->keys[q].type;
  if (!rt_lanes_init(&j->lanes, op->nkeys, types, stage, err)) return 0;
  uint32_t n = op->n;
  uint32_t *lane = rt_iv_big(((size_t)n + 1) * sizeof *lane);
  if (!lane) goto oom;
  if (!rt_lanes_assign(&j->lanes, op, true, null_keys, lane, stage, err)) {
    rt_mem_free(lane);
    return 0;
  }
  uint32_t nl = j->nlanes = j->lanes.n;
  j->off = rt_mem_calloc((size_t)nl + 2, sizeof *j->off);
  j->overlaps = rt_mem_calloc((size_t)nl + 1, 1);
  j->trees = rt_mem_calloc((size_t)nl + 1, sizeof *j->trees);
  if (!j->off || !j->overlaps || !j->trees) goto oom_lane;
  size_t m = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t e;
    if (lane[i] == RT_NO_LANE || !rt_ivrel_bounds_valid(op, i)) {
      lane[i] = RT_NO_LANE;
      continue;
    }
    if (!end_of(op->ts[i], op->dur[i], &e)) {
      rt_mem_free(lane);
      rt_ijoin_free(j);
      return rt_errorf(err, -1, "%s: integer overflow", stage);
    }
    j->off[lane[i] + 1]++;
    m++;
  }
  for (uint32_t l = 0; l < nl; l++) j->off[l + 1] += j->off[l];
  j->s = rt_iv_big((m + 1) * sizeof *j->s);
  j->e = rt_iv_big((m + 1) * sizeof *j->e);
  j->pt = rt_iv_big(m + 1);
  j->row = rt_iv_big((m + 1) * sizeof *j->row);
  uint32_t *next = rt_mem_alloc(((size_t)nl + 1) * sizeof *next);
  if (!j->s || !j->e || !j->pt || !j->row || !next) {
    rt_mem_free(next);
    goto oom_lane;
  }
  memcpy(next, j->off, (size_t)nl * sizeof *next);
  for (uint32_t i = 0; i < n; i++) {
    if (lane[i] == RT_NO_LANE) continue;
    uint32_t p = next[lane[i]]++;
    j->s[p] = rt_iv_u(op->ts[i]);
    j->row[p] = i;
  }
  rt_mem_free(next);
  rt_mem_free(lane);
  lane = NULL;
  for (uint32_t l = 0; l < nl; l++) {
    size_t lo = j->off[l], cnt = j->off[l + 1] - lo;
    if (!rt_iv_sort(j->s + lo, NULL, j->row + lo, cnt)) goto oom;
    uint8_t ov = 0;
    for (size_t i = lo; i < lo + cnt; i++) {
      uint32_t r = j->row[i];
      j->pt[i] = op->dur[r] == 0;
      end_of(op->ts[r], op->dur[r], &j->e[i]);
      /* Sorted by start, a lane has two meeting items iff two neighbours
       * meet: a point only by sharing its start, an interval when the next
       * one starts before its end. */
      if (i > lo && (j->pt[i - 1] ? j->s[i] == j->s[i - 1] : j->s[i] < j->e[i - 1])) ov = 1;
    }
    j->overlaps[l] = ov;
    if (ov) {
      j->lanes_overlapping++;
      if (!rt_ivtree_build(&j->trees[l], j->e + lo, cnt)) goto oom;
    } else if (cnt) {
      j->lanes_disjoint++;
    }
  }
  return 1;
oom_lane:
  rt_mem_free(lane);
oom:
  rt_ijoin_free(j);
  return rt_errorf(err, -1, "%s: out of memory", stage);
}

/* ---- probing -------------------------------------------------------------------- */

typedef struct probe {
  const rt_ijoin *j;
  size_t lo;               /* lane's first item */
  uint64_t s, e;
  bool ipt;
  uint32_t idx;
  rt_ijpairs *out;
  int64_t hits;
  bool failed;
} probe;

static inline bool holds(uint64_t a, uint64_t b, bool opt, uint64_t x) {
  return opt ? a == x : (a <= x && x < b);
}

static bool matches(rt_ijrel rel, uint64_t s, uint64_t e, bool ipt, uint64_t a, uint64_t b,
                    bool opt) {
  if (ipt) {
    if (rel == RT_IJ_WITHIN) return opt && a == s;
    return holds(a, b, opt, s);   /* every other relationship: O holds s */
  }
  switch (rel) {
  case RT_IJ_OVERLAPPING: return opt ? (s <= a && a < e) : (a < e && s < b);
  case RT_IJ_COVERING_BEGIN: return holds(a, b, opt, s);
  case RT_IJ_COVERING_END: return !opt && a < e && e <= b;
  case RT_IJ_COVERING_BOUNDS: return !opt && a <= s && e <= b;
  case RT_IJ_WITHIN: return opt ? (s <= a && a < e) : (s <= a && b <= e);
  }
  return false;
}

bool rt_ijpairs_put(rt_ijpairs *o, uint32_t in, uint32_t op) {
  if (o->n == o->cap) {
    size_t c1 = o->cap, c2 = o->cap;
    if (!rt_iv_grow((void **)&o->in, &c1, o->n + 1, 4)) return false;
    if (!rt_iv_grow((void **)&o->op, &c2, o->n + 1, 4)) return false;
    o->cap = c1;
  }
  o->in[o->n] = in;
  o->op[o->n] = op;
  o->n++;
  return true;
}

static bool consider(void *p, size_t i) {
  probe *q = p;
  size_t it = q->lo + i;
  const rt_ijoin *j = q->j;
  if (!matches(j->rel, q->s, q->e, q->ipt, j->s[it], j->e[it], j->pt[it])) return true;
  if (!q->out) {   /* only whether there is one (rt_ijoin_any) */
    q->hits++;
    return false;
  }
  if (!rt_ijpairs_put(q->out, q->idx, j->row[it])) {
    q->failed = true;
    return false;
  }
  q->hits++;
  return true;
}

int64_t rt_ijoin_probe_one(const rt_ijoin *j, uint32_t lane, int64_t ts, int64_t dur,
                           uint32_t idx, rt_ijpairs *out) {
  if (lane >= j->nlanes) return 0;
  size_t lo = j->off[lane], n = j->off[lane + 1] - lo;
  if (n == 0) return 0;
  uint64_t e;
  if (!end_of(ts, dur, &e)) e = U_INF;   /* the batch probe reports overflow first */
  probe q = {.j = j, .lo = lo, .s = rt_iv_u(ts), .e = e, .ipt = dur == 0, .idx = idx, .out = out};
  const uint64_t *S = j->s + lo, *E = j->e + lo;
  /* Candidate starts [alo, ahi): every relationship needs O to start before
   * I's end (at or before s for a point I); COVERING BEGIN and BOUNDS need
   * a <= s; WITHIN needs a >= s. */
  size_t ahi;
  bool upto_s = q.ipt || j->rel == RT_IJ_COVERING_BEGIN || j->rel == RT_IJ_COVERING_BOUNDS;
  if (upto_s) ahi = q.s == U_INF ? n : rt_iv_lower(S, n, q.s + 1);
  else ahi = rt_iv_lower(S, n, q.e);
  size_t alo = j->rel == RT_IJ_WITHIN ? rt_iv_lower(S, n, q.s) : 0;
  /* Candidate ends: O must reach s (b >= s), and reach e when it covers
   * the end of a positive I. */
  uint64_t thr = q.s;
  if (!q.ipt && (j->rel == RT_IJ_COVERING_END || j->rel == RT_IJ_COVERING_BOUNDS)) thr = q.e;
  if (j->overlaps[lane]) {
    rt_ivtree_query(&j->trees[lane], alo, ahi, thr, consider, &q);
  } else {
    size_t i = rt_iv_lower(E, n, thr);
    if (i < alo) i = alo;
    for (; i < ahi; i++)
      if (!consider(&q, i)) break;
  }
  return q.failed ? -1 : q.hits;
}

int rt_ijoin_probe(const rt_ijoin *j, const rt_ivrel *in, bool left, rt_ijpairs *out,
                   rt_err *err) {
  return rt_ijoin_probe_range(j, in, 0, in->n, left, out, err);
}

int rt_ijoin_probe_range(const rt_ijoin *j, const rt_ivrel *in, uint32_t lo, uint32_t hi, bool left,
                         rt_ijpairs *out, rt_err *err) {
  for (uint32_t i = lo; i < hi; i++) {
    int64_t hits = 0;
    if (rt_ivrel_bounds_valid(in, i)) {
      int64_t lane = rt_lanes_find_row(&j->lanes, in, i, false);
      uint64_t e;
      if (!end_of(in->ts[i], in->dur[i], &e))
        return rt_errorf(err, -1, "%s: integer overflow", j->stage);
      if (lane >= 0) hits = rt_ijoin_probe_one(j, (uint32_t)lane, in->ts[i], in->dur[i], i, out);
    }
    if (hits < 0 || (hits == 0 && left && !rt_ijpairs_put(out, i, RT_NO_ROW)))
      return rt_errorf(err, -1, "%s: out of memory", j->stage);
  }
  return 1;
}
