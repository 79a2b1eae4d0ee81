/*
 * ivfind.c — [LEFT] INTERVAL FIND src AS a (STARTING | ENDING) (AFTER |
 * BEFORE) anchor [WITHIN d] [PER …] (LANGUAGE.md §9.3): for each input
 * row, the one operand row of its lane whose start (or end) is nearest at
 * or after (or at or before) the input's anchor instant.
 *
 * The operand's keys (starts, or ends) are sorted per lane by (key, row),
 * so a binary search finds the nearest key, and among equal keys the
 * first row comes first: O(m log m) to build, O(log m) per input row.
 * The probe remembers per lane where its last search ended: an input in
 * anchor order (a table in ts order, anchored at BEGIN) finds its key by
 * a galloping search from there, a step or two instead of a search of the
 * whole lane; its lanes are looked up a chunk of rows at a time.
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

/* Where a lane's last search ended: its anchor, and the first key at or
 * after it (AFTER) or after it (BEFORE). */
typedef struct find_hint {
  uint64_t a;
  size_t at;
  bool set;
} find_hint;

/* rt_find_one, starting from hint h (NULL: none) and updating it. */
static int64_t find_from(const rt_find *f, uint32_t lane, int64_t anchor, bool limited,
                         uint64_t within, find_hint *h) {
  if (lane >= f->nlanes) return -1;
  const uint64_t *K = f->key + f->off[lane];
  size_t n = f->off[lane + 1] - f->off[lane];
  uint64_t a = rt_iv_u(anchor);
  size_t from = h && h->set && a >= h->a ? h->at : 0, i;
  if (!f->before) {
    i = rt_iv_lower_from(K, n, from, a);   /* the first key >= a, its first row */
    if (h) *h = (find_hint){a, i, true};
    if (i == n || (limited && K[i] - a > within)) return -1;
  } else {
    size_t j = a == UINT64_MAX ? n : rt_iv_lower_from(K, n, from, a + 1);   /* keys <= a end at j */
    if (h) *h = (find_hint){a, j, true};
    if (j == 0) return -1;
    /* the first row of the nearest key (usually the key is unique) */
    i = j >= 2 && K[j - 2] == K[j - 1] ? rt_iv_lower(K, j, K[j - 1]) : j - 1;
    if (limited && a - K[i] > within) return -1;
  }
  return f->row[f->off[lane] + i];
}

int64_t rt_find_one(const rt_find *f, uint32_t lane, int64_t anchor, bool limited, uint64_t within) {
  return find_from(f, lane, anchor, limited, within, NULL);
}

/* Input row i (lane: its lane, or RT_NO_LANE): its match, or with
 * `left` a row without one, appended to out. 1, or 0 with the error set. */
static int probe_row(const rt_find *f, const rt_ivrel *in, uint32_t i, uint32_t lane, bool anchor_end,
                     const int64_t *within, const uint64_t *within_valid, bool left, find_hint *hint,
                     rt_ijpairs *out, rt_err *err) {
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
  if (ok && lane != RT_NO_LANE) hit = find_from(f, lane, a, within != NULL, d, &hint[lane]);
  if (hit >= 0 ? !rt_ijpairs_put(out, i, (uint32_t)hit) : left && !rt_ijpairs_put(out, i, RT_NO_ROW))
    return rt_errorf(err, -1, "%s: out of memory", f->stage);
  return 1;
}

enum { FIND_CHUNK = 4096 };   /* input rows whose lanes are looked up at once */

int rt_find_probe(const rt_find *f, const rt_ivrel *in, bool anchor_end, const int64_t *within,
                  const uint64_t *within_valid, bool left, rt_ijpairs *out, rt_err *err) {
  find_hint *hint = rt_mem_calloc((size_t)f->nlanes + 1, sizeof *hint);
  uint32_t *lanes = rt_mem_alloc(FIND_CHUNK * sizeof *lanes);
  int rc = 0;
  if (!hint || !lanes) {
    rc = rt_errorf(err, -1, "%s: out of memory", f->stage);
    goto done;
  }
  for (uint32_t c0 = 0; c0 < in->n; c0 += FIND_CHUNK) {
    uint32_t c1 = in->n - c0 > FIND_CHUNK ? c0 + FIND_CHUNK : in->n;
    /* a lookup that never inserts leaves the table unchanged */
    if (!rt_lanes_assign_range((rt_lanes *)&f->lanes, in, c0, c1, false, true, lanes, f->stage, err)) {
      rc = 0;
      goto done;
    }
    for (uint32_t i = c0; i < c1; i++) {
      rc = probe_row(f, in, i, lanes[i - c0], anchor_end, within, within_valid, left, hint, out, err);
      if (!rc) goto done;
    }
  }
  rc = 1;
done:
  rt_mem_free(hint);
  rt_mem_free(lanes);
  return rc;
}

