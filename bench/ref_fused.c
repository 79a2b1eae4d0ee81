/*
 * ref_fused.c — workload `fused` written by hand in C: the speed-of-light
 * reference the JIT is measured against. Built with -O3 -march=native
 * (bench/bench.cmake).
 *
 *   FROM t |> WHERE a > 5 AND b < 1000000
 *          |> EXTEND a * 3 + b AS x, (a - b) * 2 AS y, c * 0.5 AS z
 *          |> AGGREGATE SUM(x) AS sx, SUM(y) AS sy, AVG(z) AS az, COUNT(*) AS n
 *             GROUP BY k
 *
 * It does what a careful programmer would do for exactly this question and
 * no more: one pass, validity bits tested inline, checked arithmetic with
 * the compiler builtins, and a small open-addressing table on k (the key's
 * range is not known in advance, so a direct array would be cheating).
 * AVG's sum follows the engine's documented order (docs/DECISIONS.md,
 * Parallel execution): a partial per 65,536-row morsel, the partials
 * added in order; the integer sums are exact either way.
 */
#include <string.h>

#include "bench.h"

#define SLOTS 1024   /* power of two, far above 2x the groups we expect */

static inline uint64_t mix(uint64_t x) {
  x ^= x >> 33; x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

static inline int bit(const uint64_t *v, int64_t i) { return (int)((v[i >> 6] >> (i & 63)) & 1); }

int bench_ref_fused(const bench_data *d, bench_fused_group *out, int cap) {
  uint32_t slots[SLOTS];
  memset(slots, 0, sizeof slots);
  int64_t sx[SLOTS / 2], sy[SLOTS / 2], cnt[SLOTS / 2], nz[SLOTS / 2], keys[SLOTS / 2];
  double fz[SLOTS / 2], tz[SLOTS / 2];
  uint8_t hx[SLOTS / 2], hy[SLOTS / 2];
  int ng = 0;
  const int64_t *K = d->k, *A = d->a, *B = d->b;
  const double *C = d->c;
  for (int64_t i = 0; i < d->n; i++) {
    if (i > 0 && i % 65536 == 0)   /* a morsel ended: its partial sums */
      for (int g = 0; g < ng; g++) tz[g] += fz[g], fz[g] = 0;
    if (!bit(d->va, i) || !bit(d->vb, i)) continue;   /* NULL > 5 is not true */
    int64_t a = A[i], b = B[i];
    if (!(a > 5 && b < 1000000)) continue;
    int64_t x, y, t;
    if (__builtin_mul_overflow(a, (int64_t)3, &t) || __builtin_add_overflow(t, b, &x)) return -1;
    if (__builtin_sub_overflow(a, b, &t) || __builtin_mul_overflow(t, (int64_t)2, &y)) return -1;
    int cnull = !bit(d->vc, i);
    double z = cnull ? 0.0 : C[i] * 0.5;
    int64_t k = K[i];
    uint64_t h = mix((uint64_t)k) & (SLOTS - 1);
    int g;
    for (;;) {
      uint32_t s = slots[h];
      if (!s) {
        if (ng >= SLOTS / 2) return -1;
        g = ng++;
        slots[h] = (uint32_t)g + 1;
        keys[g] = k;
        sx[g] = sy[g] = cnt[g] = nz[g] = 0;
        fz[g] = tz[g] = 0;
        hx[g] = hy[g] = 0;
        break;
      }
      if (keys[s - 1] == k) {
        g = (int)s - 1;
        break;
      }
      h = (h + 1) & (SLOTS - 1);
    }
    if (__builtin_add_overflow(sx[g], x, &sx[g]) || __builtin_add_overflow(sy[g], y, &sy[g])) return -1;
    hx[g] = hy[g] = 1;
    fz[g] += z;
    nz[g] += !cnull;
    cnt[g]++;
  }
  for (int g = 0; g < ng; g++) tz[g] += fz[g];
  int n = ng < cap ? ng : cap;
  for (int g = 0; g < n; g++) {
    out[g].k = keys[g];
    out[g].sx = sx[g];
    out[g].sy = sy[g];
    out[g].n = cnt[g];
    out[g].sx_null = !hx[g];
    out[g].sy_null = !hy[g];
    out[g].az_null = nz[g] == 0;
    out[g].az = nz[g] ? tz[g] / (double)nz[g] : 0;
  }
  return n;
}
