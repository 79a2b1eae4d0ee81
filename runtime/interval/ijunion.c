/*
 * ijunion.c — the union of a relation's rows per lane, as an INTERVAL
 * JOIN index (rt_ijoin) whose items are the union's disjoint pieces:
 * INTERVAL KEEP IF / DROP IF (LANGUAGE.md §9.3) ask how an input row
 * stands to that union, and the index's probe (ijoin.c) answers it.
 * The union of one lane is rt_ivunion_lane (ivunion.c), which SUBTRACT's
 * union uses too.
 *
 * Per lane, the rows sorted by start are merged: positive rows that
 * overlap or touch (next start <= end so far) become one piece; a point
 * (dur = 0) held by a piece ([s, e) holds s <= t < e) disappears into it,
 * and points at one instant become one. What stays is sorted by start
 * and pairwise disjoint (a point at a piece's end is its own item), so
 * every lane is searched by binary search. A never-ending row (dur < 0)
 * makes a piece that never ends. O(m log m).
 */
#include <stdlib.h>

#include "interval.h"
#include "runtime/budget.h"

/* Merges lane items [lo, lo + n) of j in place into w.. (w <= lo) with
 * rt_ivunion_lane (SUBTRACT's union too); returns the number written. pts:
 * scratch of n items. */
static size_t merge_lane(rt_ijoin *j, size_t lo, size_t n, size_t w, uint64_t *pts) {
  size_t got = rt_ivunion_lane(j->s + lo, j->e + lo, n, j->s + w, j->e + w, pts);
  for (size_t at = w; at < w + got; at++) {
    j->pt[at] = j->s[at] == j->e[at];
    j->row[at] = (uint32_t)at;
  }
  return got;
}

int rt_ijoin_build_union(rt_ijoin *j, const rt_ivrel *op, rt_ijrel rel, const char *stage,
                         rt_err *err) {
  if (!rt_ijoin_build_keys(j, op, rel, true, stage, err)) return 0;
  size_t m = j->nlanes ? j->off[j->nlanes] : 0;
  uint64_t *pts = rt_iv_big((m + 1) * sizeof *pts);
  if (!pts) {
    rt_ijoin_free(j);
    return rt_errorf(err, -1, "%s: out of memory", stage);
  }
  size_t w = 0;
  for (uint32_t l = 0; l < j->nlanes; l++) {
    size_t lo = j->off[l], n = j->off[l + 1] - lo;
    j->off[l] = (uint32_t)w;
    w += merge_lane(j, lo, n, w, pts);
    if (j->overlaps[l]) rt_ivtree_free(&j->trees[l]);
    j->overlaps[l] = 0;
  }
  if (j->nlanes) j->off[j->nlanes] = (uint32_t)w;
  j->lanes_disjoint = j->nlanes;
  j->lanes_overlapping = 0;
  rt_mem_free(pts);
  return 1;
}

bool rt_ijoin_any(const rt_ijoin *j, uint32_t lane, int64_t ts, int64_t dur) {
  return rt_ijoin_probe_one(j, lane, ts, dur, 0, NULL) > 0;
}
