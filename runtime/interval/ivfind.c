/*
 * ivfind.c — [LEFT] INTERVAL FIND src AS a (STARTING | ENDING) (AFTER |
 * BEFORE) anchor [WITHIN d] [PER …] (LANGUAGE.md §9.3): for each input
 * row, the one operand row of its lane whose start (or end) is nearest at
 * or after (or at or before) the input's anchor instant.
 *
 * The operand's keys (starts, or ends) are sorted per lane by (key, row),
 * so a binary search finds the nearest key, and among equal keys the
 * first row comes first: O(m log m) to build, O(log m) per input row.
 *
 * Bounds as in INTERVAL JOIN (ijoin.c): dur < 0 never ends, so such a row
 * has no end for ENDING to find (it is still found by STARTING); times
 * compare in rt_iv_u order; NULL bounds match nothing. Unlike INTERVAL
 * JOIN, NULL PER keys agree with each other (§9).
 */
#include <stdlib.h>

#include "interval.h"
#include "runtime/budget.h"

void rt_find_free(rt_find *f) {
  rt_mem_free(f->off);
  rt_mem_free(f->key);
  rt_mem_free(f->row);
  rt_lanes_free(&f->lanes);
  memset(f, 0, sizeof *f);
}

/* The key of operand row i (its start or end); false when it has none. */
static bool key_of(const rt_ivrel *op, uint32_t i, bool ending, uint64_t *k, bool *overflow) {
  if (!rt_ivrel_bounds_valid(op, i)) return false;
  int64_t ts = op->ts[i], dur = op->dur[i];
  if (!ending) {
    *k = rt_iv_u(ts);
    return true;
  }
  if (dur < 0) return false;   /* never ends */
  if (ts > 0 && dur > INT64_MAX - ts) {
    *overflow = true;
    return false;
  }
  *k = rt_iv_u(ts + dur);
  return true;
}

int rt_find_build(rt_find *f, const rt_ivrel *op, bool ending, bool before, const char *stage,
                  rt_err *err) {
  memset(f, 0, sizeof *f);
  f->ending = ending;
  f->before = before;
  f->stage = stage;
  rt_type types[RT_LANES_MAXKEYS];
  for (int q = 0; q < op->nkeys && q < RT_LANES_MAXKEYS; q++) types[q] = op->keys[q].type;
  if (!rt_lanes_init(&f->lanes, op->nkeys, types, stage, err)) return 0;
  uint32_t n = op->n;
  uint32_t *lane = rt_iv_big(((size_t)n + 1) * sizeof *lane);
  uint32_t *next = NULL;
  if (!lane) goto oom;
  if (!rt_lanes_assign(&f->lanes, op, true, true, lane, stage, err)) {
    rt_mem_free(lane);
    rt_find_free(f);
    return 0;
  }
  uint32_t nl = f->nlanes = f->lanes.n;
  f->off = rt_mem_calloc((size_t)nl + 2, sizeof *f->off);
  if (!f->off) goto oom;
  size_t m = 0;
  bool overflow = false;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t k;
    if (!key_of(op, i, ending, &k, &overflow)) {
      if (overflow) {
        rt_mem_free(lane);
        rt_find_free(f);
        return rt_errorf(err, -1, "%s: integer overflow", stage);
      }
      lane[i] = RT_NO_LANE;
      continue;
    }
    f->off[lane[i] + 1]++;
    m++;
  }
  for (uint32_t l = 0; l < nl; l++) f->off[l + 1] += f->off[l];
  f->key = rt_iv_big((m + 1) * sizeof *f->key);
  f->row = rt_iv_big((m + 1) * sizeof *f->row);
  next = rt_mem_alloc(((size_t)nl + 1) * sizeof *next);
  if (!f->key || !f->row || !next) goto oom;
  memcpy(next, f->off, (size_t)nl * sizeof *next);
  for (uint32_t i = 0; i < n; i++) {
    if (lane[i] == RT_NO_LANE) continue;
    uint32_t p = next[lane[i]]++;
    key_of(op, i, ending, &f->key[p], &overflow);
    f->row[p] = i;
  }
  for (uint32_t l = 0; l < nl; l++)
    if (!rt_iv_sort(f->key + f->off[l], NULL, f->row + f->off[l], f->off[l + 1] - f->off[l]))
      goto oom;
  rt_mem_free(next);
  rt_mem_free(lane);
  return 1;
oom:
  rt_mem_free(next);
  rt_mem_free(lane);
  rt_find_free(f);
  return rt_errorf(err, -1, "%s: out of memory", stage);
}

int64_t rt_find_one(const rt_find *f, uint32_t lane, int64_t anchor, bool limited, uint64_t within) {
  if (lane >= f->nlanes) return -1;
  const uint64_t *K = f->key + f->off[lane];
  size_t n = f->off[lane + 1] - f->off[lane];
  uint64_t a = rt_iv_u(anchor);
  size_t i;
  if (!f->before) {
    i = rt_iv_lower(K, n, a);   /* the first key >= a, its first row */
    if (i == n || (limited && K[i] - a > within)) return -1;
  } else {
    size_t j = a == UINT64_MAX ? n : rt_iv_lower(K, n, a + 1);   /* keys <= a end at j */
    if (j == 0) return -1;
    i = rt_iv_lower(K, j, K[j - 1]);   /* the first row of the nearest key */
    if (limited && a - K[i] > within) return -1;
  }
  return f->row[f->off[lane] + i];
}

int rt_find_probe(const rt_find *f, const rt_ivrel *in, bool anchor_end, const int64_t *within,
                  const uint64_t *within_valid, bool left, rt_ijpairs *out, rt_err *err) {
  for (uint32_t i = 0; i < in->n; i++) {
    int64_t hit = -1;
    bool ok = rt_ivrel_bounds_valid(in, i);
    int64_t a = ok ? in->ts[i] : 0;
    if (ok && anchor_end) {
      int64_t dur = in->dur[i];
      if (dur < 0) ok = false;   /* never ends: no END instant */
      else if (a > 0 && dur > INT64_MAX - a)
        return rt_errorf(err, -1, "%s: integer overflow", f->stage);
      else a += dur;
    }
    uint64_t d = 0;
    if (ok && within) {
      if (within_valid && !rt_bit(within_valid, i)) ok = false;   /* WITHIN NULL: no match */
      else if (within[i] < 0)
        return rt_errorf(err, -1, "%s: expected WITHIN to be at least 0, but it is %lld",
                         f->stage, (long long)within[i]);
      else d = (uint64_t)within[i];
    }
    if (ok) {
      int64_t lane = rt_lanes_find_row(&f->lanes, in, i, true);
      if (lane >= 0) hit = rt_find_one(f, (uint32_t)lane, a, within != NULL, d);
    }
    if (hit >= 0 ? !rt_ijpairs_put(out, i, (uint32_t)hit) : left && !rt_ijpairs_put(out, i, RT_NO_ROW))
      return rt_errorf(err, -1, "%s: out of memory", f->stage);
  }
  return 1;
}
