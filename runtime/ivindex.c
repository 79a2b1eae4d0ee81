/*
 * ivindex.c — pieces shared by the interval operators: growable arrays,
 * sorting intervals by (start, end, row), binary search over sorted bounds,
 * and the max-end pyramid (rt_ivtree) that finds the intervals overlapping
 * a query among intervals sorted by start that overlap each other.
 *
 * The pyramid is an implicit interval tree: the items stay in start order
 * (so matches come out in start order for free) and each node keeps the
 * largest end below it; a query walks only the nodes whose max end reaches
 * the query's start, within the prefix of items that start before the
 * query's end. Fan-out 16 keeps it at about 1/15 of an extra end per item.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "interval.h"

#define HUGE_PAGE ((size_t)2 << 20)

void *rt_iv_big(size_t bytes) {
  if (bytes < HUGE_PAGE) return malloc(bytes ? bytes : 1);
  void *p = NULL;
  size_t rounded = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
  if (posix_memalign(&p, HUGE_PAGE, rounded)) return NULL;
#ifdef MADV_HUGEPAGE
  madvise(p, rounded, MADV_HUGEPAGE);   /* advice only: failure is harmless */
#endif
  return p;
}

bool rt_iv_grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return true;
  size_t c = *cap ? *cap : 256;
  while (c < need) c *= 2;
  void *np;
  if (c * elem < HUGE_PAGE) {
    np = realloc(*p, c * elem);
  } else {
    np = rt_iv_big(c * elem);
    if (np && *p) memcpy(np, *p, *cap * elem);
    if (np) free(*p);
  }
  if (!np) return false;
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
  item *a = malloc(n * sizeof *a), *tmp = malloc(n * sizeof *tmp);
  if (!a || !tmp) {
    free(a);
    free(tmp);
    return false;
  }
  for (size_t k = 0; k < n; k++) a[k] = (item){s[k], use_e ? e[k] : 0, row[k]};
  item *r = merge_sort(a, tmp, n, use_e);
  for (size_t k = 0; k < n; k++) {
    s[k] = r[k].s;
    if (use_e) e[k] = r[k].e;
    row[k] = r[k].row;
  }
  free(a);
  free(tmp);
  return true;
}

bool rt_iv_sort_perm(uint32_t *perm, size_t n, rt_iv_cmp cmp, const void *ctx) {
  size_t i = 1;
  while (i < n && cmp(ctx, perm[i - 1], perm[i]) <= 0) i++;
  if (i >= n) return true;
  uint32_t *tmp = malloc(n * sizeof *tmp);
  if (!tmp) return false;
  for (size_t lo = 0; lo < n; lo += RUN) {
    size_t hi = lo + RUN < n ? lo + RUN : n;
    for (size_t a = lo + 1; a < hi; a++) {
      uint32_t x = perm[a];
      size_t j = a;
      for (; j > lo && cmp(ctx, x, perm[j - 1]) < 0; j--) perm[j] = perm[j - 1];
      perm[j] = x;
    }
  }
  uint32_t *src = perm, *dst = tmp;
  for (size_t w = RUN; w < n; w *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      size_t mid = lo + w < n ? lo + w : n;
      size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
      size_t a = lo, b = mid, o = lo;
      while (a < mid && b < hi) dst[o++] = cmp(ctx, src[b], src[a]) < 0 ? src[b++] : src[a++];
      while (a < mid) dst[o++] = src[a++];
      while (b < hi) dst[o++] = src[b++];
    }
    uint32_t *x = src; src = dst; dst = x;
  }
  if (src != perm) memcpy(perm, src, n * sizeof *perm);
  free(tmp);
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
    uint64_t *lv = malloc(len * sizeof *lv);
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
  for (int l = 0; l < t->nlevels; l++) free(t->lvl[l]);
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
