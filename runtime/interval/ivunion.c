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
    const uint64_t *s = o.s + o.off[l], *e = o.e + o.off[l];
    size_t m = o.off[l + 1] - o.off[l], from = w, np = 0;
    u->off[l] = (uint32_t)from;
    for (size_t i = 0; i < m; i++) {
      if (s[i] == e[i]) {
        pts[np++] = s[i];   /* in order */
      } else if (w > from && s[i] <= u->e[w - 1]) {
        if (e[i] > u->e[w - 1]) u->e[w - 1] = e[i];
      } else {
        u->s[w] = s[i];
        u->e[w] = e[i];
        w++;
      }
    }
    /* the points no item holds, one per instant */
    size_t k = from, kept = 0;
    for (size_t q = 0; q < np; q++) {
      uint64_t t = pts[q];
      while (k < w && u->e[k] <= t) k++;
      if ((k < w && u->s[k] <= t) || (kept && pts[kept - 1] == t)) continue;
      pts[kept++] = t;
    }
    /* merged in by start, from the back */
    size_t a = w, b = kept, out = w + kept;
    while (b > 0) {
      out--;
      if (a > from && u->s[a - 1] > pts[b - 1]) {
        a--;
        u->s[out] = u->s[a];
        u->e[out] = u->e[a];
      } else {
        b--;
        u->s[out] = u->e[out] = pts[b];
      }
    }
    w += kept;
  }
  if (ok) u->off[nl] = (uint32_t)w;
  rt_mem_free(pts);
  rt_ivops_free(&o);
  return ok;
}
