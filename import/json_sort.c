/*
 * json_sort.c — the order events are parsed in (TRACES.md §2.3), exact:
 * by ts; events before the first "violation" keep file order among equal
 * ts; from it on, when the file has an X, equal ts are ordered E first,
 * then X by decreasing dur, then the rest, each in file order. V (the
 * smallest violating ts) was found while reading (json_read.c).
 *
 * The keys (ts, record) are in file order; a radix sort of (ts − min ts)
 * over 11-bit digits, stable, skipping digits where every key agrees,
 * puts them in ts order (a large array split by its top digit first, so
 * the other digits are sorted in cache); then each run of equal ts at or
 * after V is put in tie order (runs are short). The systemTraceEvents
 * keys are sorted the same way (ts, then file order).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "trace.h"

static int64_t tie_key(const jev *e) {
  if (e->ph == 'E') return INT64_MIN;
  if (e->ph == 'X') return (e->flags & JF_DUR) ? INT64_MAX - (e->dur < 0 ? 0 : e->dur) : INT64_MIN;
  return INT64_MAX;
}

typedef struct tie { int64_t key; int64_t pos; jkey k; } tie;

static int cmp_tie(const void *pa, const void *pb) {
  const tie *a = pa, *b = pb;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  return a->pos < b->pos ? -1 : a->pos > b->pos;
}

enum { DIGIT = 11, BUCKETS = 1 << DIGIT, DIGITS = 6 };   /* 6 x 11 bits cover 64 */

/* Stable LSD radix sort of a[0..n) by the low `bits` bits of ts - lo,
 * with b as scratch: every digit's histogram in one read, then one
 * scatter per digit that is not the same in every key. count is DIGITS
 * x BUCKETS (any contents). Returns where the sorted keys are (a or b). */
static jkey *lsd(jkey *a, jkey *b, int64_t n, uint64_t lo, int bits, int64_t (*count)[BUCKETS]) {
  int nd = (bits + DIGIT - 1) / DIGIT;
  memset(count, 0, (size_t)nd * sizeof *count);
  uint64_t all_or = 0, all_and = ~0ull;
  for (int64_t i = 0; i < n; i++) {
    uint64_t k = a[i].ts - lo;
    all_or |= k, all_and &= k;
    for (int d = 0; d < nd; d++) count[d][(k >> (DIGIT * d)) & (BUCKETS - 1)]++;
  }
  for (int d = 0; d < nd; d++) {
    int shift = DIGIT * d;
    if (!((all_or ^ all_and) & ((uint64_t)(BUCKETS - 1) << shift))) continue;   /* every key has the same digit */
    int64_t sum = 0, *c = count[d];
    for (int v = 0; v < BUCKETS; v++) {
      int64_t x = c[v];
      c[v] = sum;
      sum += x;
    }
    for (int64_t i = 0; i < n; i++) b[c[((a[i].ts - lo) >> shift) & (BUCKETS - 1)]++] = a[i];
    jkey *t = a;
    a = b, b = t;
  }
  return a;
}

/* Stable radix sort of the keys by ts (they are ≥ 0 here). An array of
 * at least split_min keys is first split by its top digit (one scatter
 * through memory), then each bucket, which then fits in cache, is sorted
 * by the digits below with lsd: one pass over memory instead of one per
 * digit. */
int jt_sort_keys(jstore *st, int64_t split_min) {
  int64_t n = st->nkeys;
  if (n < 2) return 1;
  jkey *a = st->keys;
  int64_t run = 1;
  while (run < n && a[run].ts >= a[run - 1].ts) run++;
  if (run == n) return 1;   /* in order already (a stable sort keeps it) */
  size_t bytes = (size_t)st->ckeys * sizeof *a;
  jkey *b = jt_map(bytes);
  if (!b) return 0;
  int64_t (*count)[BUCKETS] = jt_map(DIGITS * sizeof *count);
  if (!count) {
    jt_unmap(b, bytes);
    return 0;
  }
  uint64_t lo = UINT64_MAX, hi = 0;
  for (int64_t i = 0; i < n; i++) {
    if (a[i].ts < lo) lo = a[i].ts;
    if (a[i].ts > hi) hi = a[i].ts;
  }
  int bits = hi > lo ? 64 - __builtin_clzll(hi - lo) : 0;
  jkey *out;
  if (n < split_min || bits <= DIGIT) {
    out = lsd(a, b, n, lo, bits, count);
  } else {
    /* top digit: bits [from, bits) */
    int from = bits - DIGIT;
    int64_t *c = count[0], start[BUCKETS + 1];
    memset(c, 0, BUCKETS * sizeof *c);
    for (int64_t i = 0; i < n; i++) c[(a[i].ts - lo) >> from]++;
    int64_t sum = 0;
    for (int v = 0; v < BUCKETS; v++) {
      start[v] = sum;
      sum += c[v];
      c[v] = start[v];
    }
    start[BUCKETS] = n;
    for (int64_t i = 0; i < n; i++) b[c[(a[i].ts - lo) >> from]++] = a[i];
    /* each bucket sorted by the bits below from, the result in b */
    for (int v = 0; v < BUCKETS; v++) {
      int64_t s0 = start[v], m = start[v + 1] - s0;
      if (m < 2) continue;
      if (m <= 32) {   /* insertion sort, stable */
        for (int64_t i = s0 + 1; i < s0 + m; i++) {
          jkey k = b[i];
          int64_t j = i;
          for (; j > s0 && b[j - 1].ts > k.ts; j--) b[j] = b[j - 1];
          b[j] = k;
        }
        continue;
      }
      /* the keys of a bucket differ only in the bits below from */
      jkey *r = lsd(b + s0, a + s0, m, lo, from, count);
      if (r != b + s0) memcpy(b + s0, r, (size_t)m * sizeof *r);
    }
    out = b;
  }
  jt_unmap(count, DIGITS * sizeof *count);
  if (out == a) {
    jt_unmap(b, bytes);
  } else {
    jt_unmap(a, bytes);
    st->keys = out;
  }
  return 1;
}

int jt_sort(jtrace *j) {
  /* below a million keys (16 MiB) the digits are sorted in cache anyway */
  if (!jt_sort_keys(&j->ev, 1 << 20) || !jt_sort_keys(&j->sys, 1 << 20)) return im_oom(j->t);
  if (!j->slow || !j->any || j->V == INT64_MAX) return 1;
  /* Equal-ts runs at or after V: E, X by decreasing dur, others. */
  jkey *k = j->ev.keys;
  int64_t n = j->ev.nkeys;
  tie *run = NULL;
  int64_t crun = 0;
  for (int64_t i = 0; i < n;) {
    int64_t e = i + 1;
    while (e < n && k[e].ts == k[i].ts) e++;
    if (e - i > 1 && (int64_t)k[i].ts >= j->V) {
      if (!im_grow((void **)&run, &crun, e - i, sizeof *run)) {
        free(run);
        return im_oom(j->t);
      }
      for (int64_t r = i; r < e; r++) {
        jev ev;
        jt_decode(js_store_rec(&j->ev, k[r].ref), &ev);
        run[r - i] = (tie){tie_key(&ev), r, k[r]};
      }
      qsort(run, (size_t)(e - i), sizeof *run, cmp_tie);
      for (int64_t r = i; r < e; r++) k[r] = run[r - i].k;
    }
    i = e;
  }
  free(run);
  return 1;
}
