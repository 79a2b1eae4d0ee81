/*
 * json_sort.c — the order events are parsed in (TRACES.md §2.3), exact:
 * by ts; events before the first "violation" keep file order among equal
 * ts; from it on, when the file has an X, equal ts are ordered E first,
 * then X by decreasing dur, then the rest, each in file order.
 *
 * A violation is an event whose ts is below the largest ts read so far
 * (or equal to it once an X has been read). The sort is an LSD radix sort
 * of (ts − min ts) over 11-bit digits, stable, skipping digits where every
 * key agrees; then each run of equal ts at or after V is put in key order
 * (runs are short).
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "json.h"
#include "trace.h"

typedef struct skey {
  uint64_t k;
  uint32_t i;
} skey;

static int64_t tie_key(const jev *e) {
  if (e->ph == 'E') return INT64_MIN;
  if (e->ph == 'X') return (e->flags & JF_DUR) ? INT64_MAX - (e->dur < 0 ? 0 : e->dur) : INT64_MIN;
  return INT64_MAX;
}

static int cmp_tie(const void *pa, const void *pb, void *ctx) {
  const jev *ev = ctx;
  const uint32_t *a = pa, *b = pb;
  int64_t x = tie_key(&ev[*a]), y = tie_key(&ev[*b]);
  if (x != y) return x < y ? -1 : 1;
  return *a < *b ? -1 : *a > *b;
}

/* Stable LSD radix sort of keys by k. */
static int radix(skey **keys, int64_t n) {
  if (n < 2) return 1;
  skey *a = *keys, *b = malloc((size_t)n * sizeof *b);
  if (!b) return 0;
  uint64_t all_or = 0, all_and = ~0ull;
  for (int64_t i = 0; i < n; i++) all_or |= a[i].k, all_and &= a[i].k;
  static int64_t count[2048];
  for (int shift = 0; shift < 64; shift += 11) {
    uint64_t mask = 2047ull << shift;
    if (!((all_or ^ all_and) & mask)) continue;   /* every key has the same digit */
    memset(count, 0, sizeof count);
    for (int64_t i = 0; i < n; i++) count[(a[i].k >> shift) & 2047]++;
    int64_t sum = 0;
    for (int d = 0; d < 2048; d++) {
      int64_t c = count[d];
      count[d] = sum;
      sum += c;
    }
    for (int64_t i = 0; i < n; i++) b[count[(a[i].k >> shift) & 2047]++] = a[i];
    skey *t = a;
    a = b, b = t;
  }
  free(b);
  *keys = a;
  return 1;
}

int jt_sort(jtrace *j) {
  int64_t n = j->nev;
  skey *keys = malloc((size_t)(n ? n : 1) * sizeof *keys);
  if (!keys) return im_oom(j->t);
  /* One walk over the records: V, the smallest ts of a violating event,
   * and the keys (negative ts are dropped; they never reach the order). */
  int64_t m = INT64_MIN, V = INT64_MAX, lo = INT64_MAX;
  int slow = 0, first = 1;
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++) {
    const jev *e = &j->ev[i];
    if (e->ts < 0) {
      im_stat_add(j->t, IM_STAT_TRACE_SORTER_NEGATIVE_TIMESTAMP_DROPPED, 1);
      continue;
    }
    if (e->ph == 'X') slow = 1;
    if (!first && (e->ts < m || (e->ts == m && slow)) && e->ts < V) V = e->ts;
    first = 0;
    if (e->ts > m) m = e->ts;
    if (e->ts < lo) lo = e->ts;
    keys[k].k = (uint64_t)e->ts;
    keys[k++].i = (uint32_t)i;
  }
  for (int64_t i = 0; i < k; i++) keys[i].k -= (uint64_t)lo;
  if (!radix(&keys, k)) {
    free(keys);
    return im_oom(j->t);
  }
  j->order = malloc((size_t)(k ? k : 1) * sizeof *j->order);
  if (!j->order) {
    free(keys);
    return im_oom(j->t);
  }
  for (int64_t i = 0; i < k; i++) j->order[i] = keys[i].i;
  j->norder = k;
  if (j->has_x && V != INT64_MAX) {
    /* Equal-ts runs at or after V: E, X by decreasing dur, others. */
    uint64_t from = (uint64_t)(V - lo);
    for (int64_t i = 0; i < k;) {
      int64_t e = i + 1;
      while (e < k && keys[e].k == keys[i].k) e++;
      if (e - i > 1 && keys[i].k >= from)
        qsort_r(j->order + i, (size_t)(e - i), sizeof *j->order, cmp_tie, j->ev);
      i = e;
    }
  }
  free(keys);
  return 1;
}
