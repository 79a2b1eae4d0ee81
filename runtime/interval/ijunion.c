/*
 * ijunion.c — the union of a relation's rows per lane, as an INTERVAL
 * JOIN index (rt_ijoin) whose items are the union's disjoint pieces:
 * INTERVAL KEEP IF / DROP IF (LANGUAGE.md §9.3) ask how an input row
 * stands to that union, and the index's probe (ijoin.c) answers it.
 * Shared infrastructure: any operator that needs "the time a relation
 * covers in each lane" (SUBTRACT, say) can read the pieces.
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

/* Merges lane items [lo, lo + n) of j in place into w.. (w <= lo); returns
 * the number written. ps, pe, qs: scratch of n items. */
static size_t merge_lane(rt_ijoin *j, size_t lo, size_t n, size_t w, uint64_t *ps, uint64_t *pe,
                         uint64_t *qs) {
  size_t np = 0, nq = 0;
  for (size_t i = lo; i < lo + n; i++) {
    uint64_t s = j->s[i], e = j->e[i];
    if (j->pt[i]) {
      if (!nq || qs[nq - 1] != s) qs[nq++] = s;   /* starts ascend: equal points adjoin */
      continue;
    }
    if (np && s <= pe[np - 1]) {
      if (e > pe[np - 1]) pe[np - 1] = e;
    } else {
      ps[np] = s, pe[np] = e, np++;
    }
  }
  /* Points no piece holds; then both lists merged by start. */
  size_t k = 0, out = 0;
  size_t a = 0, b = 0;
  for (size_t q = 0; q < nq; q++) {
    while (k < np && pe[k] <= qs[q]) k++;
    bool held = k < np && ps[k] <= qs[q];
    if (!held) qs[out++] = qs[q];
  }
  nq = out;
  size_t at = w;
  while (a < np || b < nq) {
    bool take_point = b < nq && (a == np || qs[b] < ps[a]);
    if (take_point) {
      j->s[at] = j->e[at] = qs[b++];
      j->pt[at] = 1;
    } else {
      j->s[at] = ps[a];
      j->e[at] = pe[a++];
      j->pt[at] = 0;
    }
    j->row[at] = (uint32_t)at;
    at++;
  }
  return at - w;
}

int rt_ijoin_build_union(rt_ijoin *j, const rt_ivrel *op, rt_ijrel rel, const char *stage,
                         rt_err *err) {
  if (!rt_ijoin_build_keys(j, op, rel, true, stage, err)) return 0;
  size_t m = j->nlanes ? j->off[j->nlanes] : 0;
  uint64_t *ps = rt_iv_big((m + 1) * sizeof *ps);
  uint64_t *pe = rt_iv_big((m + 1) * sizeof *pe);
  uint64_t *qs = rt_iv_big((m + 1) * sizeof *qs);
  if (!ps || !pe || !qs) {
    rt_mem_free(ps);
    rt_mem_free(pe);
    rt_mem_free(qs);
    rt_ijoin_free(j);
    return rt_errorf(err, -1, "%s: out of memory", stage);
  }
  size_t w = 0;
  for (uint32_t l = 0; l < j->nlanes; l++) {
    size_t lo = j->off[l], n = j->off[l + 1] - lo;
    j->off[l] = (uint32_t)w;
    w += merge_lane(j, lo, n, w, ps, pe, qs);
    if (j->overlaps[l]) rt_ivtree_free(&j->trees[l]);
    j->overlaps[l] = 0;
  }
  if (j->nlanes) j->off[j->nlanes] = (uint32_t)w;
  j->lanes_disjoint = j->nlanes;
  j->lanes_overlapping = 0;
  rt_mem_free(ps);
  rt_mem_free(pe);
  rt_mem_free(qs);
  return 1;
}

bool rt_ijoin_any(const rt_ijoin *j, uint32_t lane, int64_t ts, int64_t dur) {
  return rt_ijoin_probe_one(j, lane, ts, dur, 0, NULL) > 0;
}
