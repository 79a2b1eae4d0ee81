/*
 * subtract.c — INTERVAL SUBTRACT src [PER cols] (LANGUAGE.md §9.2): each
 * input row minus the union of the operand's rows in its lane
 * (ivunion.c); every remaining piece is a row with the input's columns.
 *
 * The union's items of a lane are disjoint and sorted, so their ends are
 * sorted too: a binary search (galloping on from the last row's, for
 * rows in time order) finds the first item ending after an input row's
 * start, and a walk over the items it overlaps cuts the pieces.
 * O((n + m) log m + k). A point input survives when no item holds its
 * instant; operand points are not in the union (they remove nothing).
 */
#include "interval.h"

int rt_ivsubtract_run(const rt_ivrel *in, const rt_ivrel *op, const char *stage, rt_ivpieces *out,
                      rt_err *err) {
  rt_ivgroups g;
  rt_ivunion u;
  memset(&u, 0, sizeof u);
  int ok = rt_ivgroups_build(&g, in, stage, err);
  if (ok) ok = rt_ivunion_build(&u, &g.lanes, op, 0, stage, "", err);
  for (uint32_t l = 0; ok && l < g.nl; l++) {
    const uint64_t *us = u.s + u.off[l], *ue = u.e + u.off[l];
    size_t nu = u.off[l + 1] - u.off[l], from = out->n;
    /* the last row's start and search: rows in time order search on */
    uint64_t s0 = 0;
    size_t j0 = 0;
    for (uint32_t k = g.off[l]; ok && k < g.off[l + 1]; k++) {
      uint32_t r = g.byrow[k];
      uint64_t s = (uint64_t)in->ts[r], e = s + (uint64_t)in->dur[r];
      size_t j = rt_iv_lower_from(ue, nu, s >= s0 ? j0 : 0, s + 1);   /* first item ending after s */
      s0 = s, j0 = j;
      if (s == e) {
        if ((j == nu || us[j] > s) && !rt_ivpieces_push(out, (int64_t)s, 0, r, RT_NO_ROW, 0)) ok = 0;
        continue;
      }
      uint64_t cur = s;
      for (; j < nu && us[j] < e && ok; j++) {
        if (us[j] > cur && !rt_ivpieces_push(out, (int64_t)cur, (int64_t)(us[j] - cur), r, RT_NO_ROW, 0))
          ok = 0;
        if (ue[j] > cur) cur = ue[j];
      }
      if (ok && cur < e && !rt_ivpieces_push(out, (int64_t)cur, (int64_t)(e - cur), r, RT_NO_ROW, 0))
        ok = 0;
    }
    if (ok && !rt_ivpieces_order(out, from)) ok = 0;
    if (!ok && !err->set) rt_errorf(err, -1, "%s: out of memory", stage);
  }
  rt_ivgroups_free(&g);
  rt_ivunion_free(&u);
  return ok;
}
