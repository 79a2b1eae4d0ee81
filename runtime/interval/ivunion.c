/*
 * ivunion.c — the union of an operand's rows per lane (interval.h's
 * rt_ivunion): what INTERVAL SUBTRACT takes away, and what the temporal
 * semijoins (INTERVAL KEEP IF / DROP IF) test against.
 *
 * The operand's rows come in the input's lanes sorted by (start, end)
 * (rt_ivops_build, ivgroups.c); one sweep per lane merges positive rows
 * that overlap or touch into one item. Points, when kept, are checked
 * against the merged items in the same order (both sorted), so one that
 * a positive item holds disappears, and merged in by start. O(m log m).
 */
#include "interval.h"
#include "runtime/budget.h"

void rt_ivunion_free(rt_ivunion *u) {
  rt_mem_free(u->off);
  rt_mem_free(u->s);
  rt_mem_free(u->e);
  memset(u, 0, sizeof *u);
}

/* One lane's items sorted by start (a point: start = end) into their
 * union at os, oe: positive items that overlap or touch merge into one;
 * the points no merged item holds stay, one per instant; all sorted by
 * start. Returns the number written. os, oe may be s, e themselves or lie
 * before them (each write is at or before the items still to be read);
 * pts is scratch of n. */
size_t rt_ivunion_lane(const uint64_t *s, const uint64_t *e, size_t n, uint64_t *os, uint64_t *oe,
                       uint64_t *pts) {
  size_t w = 0, np = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t si = s[i], ei = e[i];
    if (si == ei) {
      pts[np++] = si;   /* in order */
    } else if (w && si <= oe[w - 1]) {
      if (ei > oe[w - 1]) oe[w - 1] = ei;
    } else {
      os[w] = si;
      oe[w] = ei;
      w++;
    }
  }
  /* the points no item holds, one per instant */
  size_t k = 0, kept = 0;
  for (size_t q = 0; q < np; q++) {
    uint64_t t = pts[q];
    while (k < w && oe[k] <= t) k++;
    if ((k < w && os[k] <= t) || (kept && pts[kept - 1] == t)) continue;
    pts[kept++] = t;
  }
  /* merged in by start, from the back (every item has been read) */
  size_t a = w, b = kept, out = w + kept;
  while (b > 0) {
    out--;
    if (a > 0 && os[a - 1] > pts[b - 1]) {
      a--;
      os[out] = os[a];
      oe[out] = oe[a];
    } else {
      b--;
      os[out] = oe[out] = pts[b];
    }
  }
  return w + kept;
}

int rt_ivunion_build(rt_ivunion *u, const rt_lanes *lanes, const rt_ivrel *op, unsigned flags,
                     const char *stage, const char *what, rt_err *err) {
  memset(u, 0, sizeof *u);
  rt_ivops o;
  int ok = rt_ivops_build(&o, lanes, op, flags, stage, what, err);
  uint32_t nl = o.nl;
  size_t n = ok ? o.off[nl] : 0;
  u->nl = nl;
  u->off = rt_mem_calloc((size_t)nl + 2, sizeof *u->off);
  u->s = rt_iv_big((n + 1) * sizeof *u->s);
  u->e = rt_iv_big((n + 1) * sizeof *u->e);
  uint64_t *pts = rt_iv_big((n + 1) * sizeof *pts);
  if (ok && (!u->off || !u->s || !u->e || !pts))
    ok = rt_errorf(err, -1, "%s: out of memory", stage);
  size_t w = 0;
  for (uint32_t l = 0; ok && l < nl; l++) {
    u->off[l] = (uint32_t)w;
    size_t lo = o.off[l];
    w += rt_ivunion_lane(o.s + lo, o.e + lo, o.off[l + 1] - lo, u->s + w, u->e + w, pts);
  }
  if (ok) u->off[nl] = (uint32_t)w;
  rt_mem_free(pts);
  rt_ivops_free(&o);
  return ok;
}
