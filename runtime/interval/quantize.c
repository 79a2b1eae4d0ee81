/*
 * quantize.c — INTERVAL QUANTIZE width [ALIGNED TO …] [PER cols] and the
 * check of INTERVAL SET BOUNDS (LANGUAGE.md §9.2).
 *
 * QUANTIZE cuts each row at every origin + k * width and tags each piece
 * with its bucket, floor((piece.ts - origin) / width) (a point: its
 * instant's). The origin is per row (an expression, or TRACE START's
 * trace_bounds.start_ts); NULL stands for the smallest ts of the input
 * (TRACE START with no trace loaded). Rows go lane by lane in input order
 * and each lane's pieces are put in (ts, input row) order (pieces.c).
 * Arithmetic is checked: a bucket or a bound beyond int64 is "integer
 * overflow".
 */
#include "interval.h"

int rt_ivquantize_run(const rt_ivrel *in, int64_t width, const int64_t *origin,
                      const uint64_t *origin_valid, bool least_default, const char *stage,
                      rt_ivpieces *out, rt_err *err) {
  out->with_bucket = true;
  if (width <= 0) return rt_errorf(err, -1, "%s: expected the width to be above zero", stage);
  rt_ivgroups g;
  int ok = rt_ivgroups_build(&g, in, stage, err);
  int64_t least = 0;
  for (size_t k = 0; k < g.m; k++)
    if (k == 0 || (int64_t)g.s[k] < least) least = (int64_t)g.s[k];
  for (uint32_t l = 0; ok && l < g.nl; l++) {
    size_t from = out->n;
    for (uint32_t k = g.off[l]; ok && k < g.off[l + 1]; k++) {
      uint32_t r = g.byrow[k];
      int64_t o = !origin ? (least_default ? least : 0)
                  : !origin_valid || rt_bit(origin_valid, r) ? origin[r] : least;
      int64_t a = in->ts[r], end = a + in->dur[r];
      __int128 rel = (__int128)a - o;
      __int128 q = rel / width - ((rel % width) != 0 && rel < 0);
      if (q > INT64_MAX || q < INT64_MIN) {
        ok = rt_errorf(err, -1, "%s: integer overflow", stage);
        break;
      }
      int64_t bucket = (int64_t)q;
      if (a == end) {
        if (!rt_ivpieces_push(out, a, 0, r, RT_NO_ROW, bucket)) ok = 0;
        continue;
      }
      int64_t cur = a;
      while (cur < end) {
        /* the next multiple after cur: origin + (bucket + 1) * width */
        __int128 nx = (__int128)o + ((__int128)bucket + 1) * width;
        int64_t b = nx < end ? (int64_t)nx : end;
        if (!rt_ivpieces_push(out, cur, b - cur, r, RT_NO_ROW, bucket)) {
          ok = 0;
          break;
        }
        cur = b;
        if (cur < end && bucket == INT64_MAX) {
          ok = rt_errorf(err, -1, "%s: integer overflow", stage);
          break;
        }
        bucket++;
      }
    }
    if (ok && !rt_ivpieces_order(out, from)) ok = 0;
  }
  if (!ok && !err->set) rt_errorf(err, -1, "%s: out of memory", stage);
  rt_ivgroups_free(&g);
  return ok;
}

int rt_ivbounds_check(const rt_ivrel *in, const char *stage, rt_err *err) {
  for (uint32_t i = 0; i < in->n; i++) {
    bool tv = !in->ts_valid || rt_bit(in->ts_valid, i), dv = !in->dur_valid || rt_bit(in->dur_valid, i);
    if ((tv && in->ts[i] < 0) || (dv && in->dur[i] < 0)) {
      if (tv && dv) return rt_iv_below_zero(in, i, stage, "", err);
      return rt_errorf(err, -1, "%s: ts or dur is below zero: a row has %s %lld", stage,
                       tv ? "ts" : "dur", (long long)(tv ? in->ts[i] : in->dur[i]));
    }
  }
  return 1;
}
