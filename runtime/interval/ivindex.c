/*
 * ivindex.c — pieces shared by the interval operators: growable arrays,
 * sorting intervals by (start, end, row), binary search over sorted bounds,
 * (from the start, or galloping on from an earlier answer), and the max-end pyramid (rt_ivtree) that finds the intervals overlapping
 * a query among intervals sorted by start that overlap each other.
 *
 * The pyramid is an implicit interval tree: the items stay in start order
 * (so matches come out in start order for free) and each node keeps the
 * largest end below it; a query walks only the nodes whose max end reaches
 * the query's start, within the prefix of items that start before the
 * query's end. Fan-out 16 keeps it at about 1/15 of an extra end per item.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "interval.h"
#include "runtime/budget.h"

#define HUGE_PAGE ((size_t)2 << 20)

void *rt_iv_big(size_t bytes) { return rt_mem_big(bytes); }

/* Asks for transparent huge pages on the 2 MiB-aligned part of [p, p+bytes). */
static void advise_huge(void *p, size_t bytes) {
#ifdef MADV_HUGEPAGE
  uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
  uintptr_t hi = ((uintptr_t)p + bytes) & ~(uintptr_t)(HUGE_PAGE - 1);
  if (hi > lo) madvise((void *)lo, hi - lo, MADV_HUGEPAGE);   /* advice only */
#else
  (void)p, (void)bytes;
#endif
}

/* realloc, not malloc + copy: a big block lives in its own mapping, which
 * glibc grows with mremap, moving page tables instead of copying bytes
 * into freshly zeroed pages; a capacity that doubles keeps the number of
 * calls logarithmic. The added memory is left uninitialized (every caller
 * writes what it reads). */
bool rt_iv_grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return true;
  size_t c = *cap ? *cap : 256;
  while (c < need) c *= 2;
  if (c > SIZE_MAX / elem) return false;
  void *np = rt_mem_realloc(*p, c * elem);
  if (!np) return false;
  if (c * elem >= HUGE_PAGE) advise_huge(np, c * elem);
  *p = np;
  *cap = c;
  return true;
}

size_t rt_iv_lower(const uint64_t *a, size_t n, uint64_t x) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

size_t rt_iv_lower_from(const uint64_t *a, size_t n, size_t from, uint64_t x) {
  size_t lo = from, hi = from, step = 1;
  while (hi < n && a[hi] < x) {
    lo = hi + 1;
    hi += step;
    step *= 2;
  }
  if (hi > n) hi = n;
  return lo + rt_iv_lower(a + lo, hi - lo, x);
}

/* ---- sorting intervals ------------------------------------------------------ */

typedef struct item {
  uint64_t s, e;
  uint32_t row;
} item;

static inline bool item_lt(const item *a, const item *b, bool use_e) {
  if (a->s != b->s) return a->s < b->s;
  if (use_e && a->e != b->e) return a->e < b->e;
  return a->row < b->row;
}

#define RUN 32

/* Bottom-up merge sort: insertion-sorted runs, then merges ping-ponging
 * between a and tmp. Returns the array holding the result. */
static item *merge_sort(item *a, item *tmp, size_t n, bool use_e) {
  for (size_t lo = 0; lo < n; lo += RUN) {
    size_t hi = lo + RUN < n ? lo + RUN : n;
    for (size_t i = lo + 1; i < hi; i++) {
      item x = a[i];
      size_t j = i;
      for (; j > lo && item_lt(&x, &a[j - 1], use_e); j--) a[j] = a[j - 1];
      a[j] = x;
    }
  }
  item *src = a, *dst = tmp;
  for (size_t w = RUN; w < n; w *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      size_t mid = lo + w < n ? lo + w : n;
      size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
      size_t i = lo, j = mid, o = lo;
      while (i < mid && j < hi) dst[o++] = item_lt(&src[j], &src[i], use_e) ? src[j++] : src[i++];
      while (i < mid) dst[o++] = src[i++];
      while (j < hi) dst[o++] = src[j++];
    }
    item *x = src; src = dst; dst = x;
  }
  return src;
}

#define RADIX_BITS 11
#define RADIX_SIZE (1u << RADIX_BITS)

/* Items by start alone, stably: an LSD radix sort (11 bits a pass) over
 * the bits in which the starts differ, skipping a pass whose digit is the
 * same everywhere; starts are taken relative to the smallest, so a
 * partition's timestamps need a few passes. a holds the items (starts
 * already relative), tmp is scratch; returns the array holding the
 * result, or NULL when out of memory. */
static item *radix_by_start(item *a, item *tmp, size_t n, uint64_t range) {
  int passes = 0;
  for (uint64_t r = range; r; r >>= RADIX_BITS) passes++;
  if (!passes) return a;
  uint32_t(*hist)[RADIX_SIZE] = rt_mem_calloc((size_t)passes, sizeof *hist);
  if (!hist) return NULL;
  for (size_t i = 0; i < n; i++)
    for (int d = 0; d < passes; d++) hist[d][(a[i].s >> (d * RADIX_BITS)) & (RADIX_SIZE - 1)]++;
  for (int d = 0; d < passes; d++) {
    uint32_t *h = hist[d];
    if (h[(a[0].s >> (d * RADIX_BITS)) & (RADIX_SIZE - 1)] == n) continue;
    uint32_t sum = 0;
    for (uint32_t q = 0; q < RADIX_SIZE; q++) {
      uint32_t x = h[q];
      h[q] = sum;
      sum += x;
    }
    for (size_t i = 0; i < n; i++) tmp[h[(a[i].s >> (d * RADIX_BITS)) & (RADIX_SIZE - 1)]++] = a[i];
    item *x = a;
    a = tmp;
    tmp = x;
  }
  rt_mem_free(hist);
  return a;
}

bool rt_iv_sort(uint64_t *s, uint64_t *e, uint32_t *row, size_t n) {
  bool use_e = e != NULL;
  size_t i = 1;
  for (; i < n; i++) {
    if (s[i - 1] != s[i]) {
      if (s[i - 1] > s[i]) break;
      continue;
    }
    if (use_e && e[i - 1] != e[i]) {
      if (e[i - 1] > e[i]) break;
      continue;
    }
    if (row[i - 1] > row[i]) break;
  }
  if (i >= n) return true;
  item *a = rt_mem_alloc(n * sizeof *a), *tmp = rt_mem_alloc(n * sizeof *tmp);
  if (!a || !tmp) {
    rt_mem_free(a);
    rt_mem_free(tmp);
    return false;
  }
  item *r;
  if (n < 1024) {
    /* short: the merge sort's few passes beat the radix histograms */
    for (size_t k = 0; k < n; k++) a[k] = (item){s[k], use_e ? e[k] : 0, row[k]};
    r = merge_sort(a, tmp, n, use_e);
  } else {
    /* By start with a radix sort, then each run of equal starts (usually
     * short) by (end, row) with the merge sort. */
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t k = 0; k < n; k++) {
      lo = s[k] < lo ? s[k] : lo;
      hi = s[k] > hi ? s[k] : hi;
    }
    for (size_t k = 0; k < n; k++) a[k] = (item){s[k] - lo, use_e ? e[k] : 0, row[k]};
    r = radix_by_start(a, tmp, n, hi - lo);
    if (!r) {
      rt_mem_free(a);
      rt_mem_free(tmp);
      return false;
    }
    item *scratch = r == a ? tmp : a;
    for (size_t x = 0; x < n;) {
      size_t y = x + 1;
      bool bad = false;
      for (; y < n && r[y].s == r[x].s; y++) bad |= item_lt(&r[y], &r[y - 1], use_e);
      if (bad) {
        item *got = merge_sort(r + x, scratch + x, y - x, use_e);
        if (got != r + x) memcpy(r + x, got, (y - x) * sizeof *got);
      }
      x = y;
    }
    for (size_t k = 0; k < n; k++) r[k].s += lo;
  }
  for (size_t k = 0; k < n; k++) {
    s[k] = r[k].s;
    if (use_e) e[k] = r[k].e;
    row[k] = r[k].row;
  }
  rt_mem_free(a);
  rt_mem_free(tmp);
  return true;
}

/* ---- max-end pyramid ---------------------------------------------------------- */

bool rt_ivtree_build(rt_ivtree *t, const uint64_t *end, size_t n) {
  memset(t, 0, sizeof *t);
  t->end = end;
  t->n = n;
  const uint64_t *below = end;
  size_t nbelow = n;
  while (nbelow > 1 && t->nlevels < RT_IVTREE_MAXLEVELS) {
    size_t len = (nbelow + RT_IVTREE_FAN - 1) / RT_IVTREE_FAN;
    uint64_t *lv = rt_mem_alloc(len * sizeof *lv);
    if (!lv) {
      rt_ivtree_free(t);
      return false;
    }
    for (size_t i = 0; i < len; i++) {
      uint64_t m = 0;
      size_t hi = (i + 1) * RT_IVTREE_FAN < nbelow ? (i + 1) * RT_IVTREE_FAN : nbelow;
      for (size_t j = i * RT_IVTREE_FAN; j < hi; j++)
        if (below[j] > m) m = below[j];
      lv[i] = m;
    }
    t->lvl[t->nlevels] = lv;
    t->len[t->nlevels] = len;
    t->nlevels++;
    below = lv;
    nbelow = len;
  }
  return true;
}

void rt_ivtree_free(rt_ivtree *t) {
  for (int l = 0; l < t->nlevels; l++) rt_mem_free(t->lvl[l]);
  memset(t, 0, sizeof *t);
}

/* Node `node` of level `lv` (-1 = the items) covers items
 * [node * FAN^(lv+1), (node+1) * FAN^(lv+1)). Visits its children that
 * intersect [lo, hi) and whose max reaches thr. */
static bool visit(const rt_ivtree *t, int lv, size_t node, size_t span, size_t lo, size_t hi,
                  uint64_t thr, bool (*hit)(void *, size_t), void *ctx) {
  /* span = items covered by one child of this node */
  size_t first = node * RT_IVTREE_FAN;
  const uint64_t *vals = lv == 0 ? t->end : t->lvl[lv - 1];
  size_t nvals = lv == 0 ? t->n : t->len[lv - 1];
  for (size_t c = first; c < first + RT_IVTREE_FAN && c < nvals; c++) {
    size_t clo = c * span, chi = clo + span;
    if (chi <= lo) continue;
    if (clo >= hi) break;
    if (vals[c] < thr) continue;
    if (lv == 0) {
      if (!hit(ctx, c)) return false;
    } else if (!visit(t, lv - 1, c, span / RT_IVTREE_FAN, lo, hi, thr, hit, ctx)) {
      return false;
    }
  }
  return true;
}

bool rt_ivtree_query(const rt_ivtree *t, size_t lo, size_t hi, uint64_t thr,
                     bool (*hit)(void *ctx, size_t i), void *ctx) {
  if (hi > t->n) hi = t->n;
  if (lo >= hi) return true;
  if (t->nlevels == 0) {
    for (size_t i = lo; i < hi; i++)
      if (t->end[i] >= thr && !hit(ctx, i)) return false;
    return true;
  }
  /* The top level has len[top] nodes; treat it as the children of one
   * virtual root so the recursion is uniform. */
  int top = t->nlevels;
  size_t span = 1;
  for (int l = 0; l < top; l++) span *= RT_IVTREE_FAN;   /* items per top-level node */
  const uint64_t *vals = t->lvl[top - 1];
  for (size_t c = 0; c < t->len[top - 1]; c++) {
    size_t clo = c * span, chi = clo + span;
    if (chi <= lo) continue;
    if (clo >= hi) break;
    if (vals[c] < thr) continue;
    if (!visit(t, top - 1, c, span / RT_IVTREE_FAN, lo, hi, thr, hit, ctx)) return false;
  }
  return true;
}

int rt_iv_below_zero(const rt_ivrel *r, uint32_t i, const char *stage, const char *what,
                     rt_err *err) {
  char who[160], of[80] = "";
  if (r->name) snprintf(of, sizeof of, " of %s", r->name);
  if (r->id && (!r->id->valid || rt_bit(r->id->valid, i)))
    snprintf(who, sizeof who, "the %srow%s with id %lld", what, of, (long long)rt_ivkey_get(r->id, i));
  else
    snprintf(who, sizeof who, "a %srow%s", what, of);
  int64_t dur = r->dur[i];
  return rt_errorf(err, -1, "%s: %sts or dur is below zero: %s has ts %lld and dur %lld%s%s%s",
                   stage, what, who, (long long)r->ts[i], (long long)dur,
                   dur < 0 ? " (unfinished slices have dur = -1: add WHERE dur >= 0 " : "",
                   dur < 0 ? (what[0] ? "to the background" : "before this stage") : "",
                   dur < 0 ? ")" : "");
}
