/*
 * sindex.c — named sorted indexes of finalized tables (CREATE PERFETTO
 * INDEX; tabindex.h), and the order they share with the searches over
 * them (rt_sindex_cmp_key, used by the SQLite virtual table).
 *
 * An index is a permutation of the table's rows sorted by its columns
 * with a merge sort (stable: equal keys keep row order, so the rows of one
 * key come out ascending, as a hash index gives them).
 */
#include <stdlib.h>

#include "tabindex.h"

/* ---- order ----------------------------------------------------------------- */

static int cmp_i64(int64_t a, int64_t b) { return (a > b) - (a < b); }
static int cmp_f64(double a, double b) { return (a > b) - (a < b); }

static int64_t int_at(const rt_column *col, int64_t r) {
  switch (col->type) {
  case RT_ID: return r;
  case RT_U32: return ((const uint32_t *)col->data)[r];
  case RT_I32: return ((const int32_t *)col->data)[r];
  default: return ((const int64_t *)col->data)[r];
  }
}

/* Rows a and b of column c: NULLs first (NaN with them: SQLite reads it as
 * NULL), then by value. */
static int cmp_rows(const rt_table *t, int c, int64_t a, int64_t b, const rt_strpool *sp) {
  const rt_column *col = &t->cols[c];
  int na = col->valid && !rt_bit(col->valid, (uint32_t)a);
  int nb = col->valid && !rt_bit(col->valid, (uint32_t)b);
  if (col->type == RT_F64) {
    double x = ((const double *)col->data)[a], y = ((const double *)col->data)[b];
    na |= x != x;
    nb |= y != y;
    if (na || nb) return nb - na;
    return cmp_f64(x, y);
  }
  if (na || nb) return nb - na;
  if (col->type == RT_STR)
    return rt_str_cmp(sp, ((const uint32_t *)col->data)[a], ((const uint32_t *)col->data)[b]);
  return cmp_i64(int_at(col, a), int_at(col, b));
}

int rt_sindex_cmp_key(const rt_table *t, int c, int64_t r, const rt_ikey *k,
                      const rt_strpool *sp) {
  const rt_column *col = &t->cols[c];
  int null = col->valid && !rt_bit(col->valid, (uint32_t)r);
  if (col->type == RT_F64) {
    double x = ((const double *)col->data)[r];
    if (null || x != x) return k->kind == RT_IKEY_NULL ? 0 : -1;
    if (k->kind == RT_IKEY_NULL) return 1;
    return cmp_f64(x, k->kind == RT_IKEY_INT ? (double)k->i : k->d);
  }
  if (null) return k->kind == RT_IKEY_NULL ? 0 : -1;
  if (k->kind == RT_IKEY_NULL) return 1;
  if (col->type == RT_STR) {
    size_t len;
    const char *s = rt_str_get(sp, ((const uint32_t *)col->data)[r], &len);
    size_t m = len < k->len ? len : k->len;
    int d = m ? memcmp(s, k->s, m) : 0;
    return d ? d : cmp_i64((int64_t)len, (int64_t)k->len);
  }
  int64_t x = int_at(col, r);
  return k->kind == RT_IKEY_INT ? cmp_i64(x, k->i) : cmp_f64((double)x, k->d);
}

/* ---- building -------------------------------------------------------------- */

typedef struct sort_ctx {
  const rt_table *t;
  int ncols;
  const int *cols;
  const rt_strpool *sp;
} sort_ctx;

static int cmp_key_rows(const sort_ctx *s, uint32_t a, uint32_t b) {
  for (int i = 0; i < s->ncols; i++) {
    int d = cmp_rows(s->t, s->cols[i], a, b, s->sp);
    if (d) return d;
  }
  return 0;
}

/* Bottom-up merge sort of v[0..n) with scratch tmp (same size). */
static void merge_sort(const sort_ctx *s, uint32_t *v, uint32_t *tmp, uint32_t n) {
  uint32_t *src = v, *dst = tmp;
  for (uint64_t width = 1; width < n; width *= 2) {
    for (uint64_t lo = 0; lo < n; lo += 2 * width) {
      uint64_t mid = lo + width < n ? lo + width : n;
      uint64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      uint64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) dst[k++] = cmp_key_rows(s, src[j], src[i]) < 0 ? src[j++] : src[i++];
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    uint32_t *x = src;
    src = dst;
    dst = x;
  }
  if (src != v) memcpy(v, src, sizeof *v * n);
}

int rt_table_add_sindex(rt_table *t, const char *name, int ncols, const int *cols,
                        const rt_strpool *sp) {
  size_t n = (size_t)t->nrows;
  rt_sindex *s = calloc(1, sizeof *s);
  uint32_t *tmp = malloc(sizeof *tmp * (n ? n : 1));
  if (s) {
    size_t len = strlen(name) + 1;
    s->name = malloc(len);
    if (s->name) memcpy(s->name, name, len);
    s->cols = malloc(sizeof *s->cols * (size_t)(ncols > 0 ? ncols : 1));
    s->perm = malloc(sizeof *s->perm * (n ? n : 1));
  }
  if (!s || !tmp || !s->name || !s->cols || !s->perm) {
    free(tmp);
    rt_sindex_free(s);
    return 0;
  }
  s->ncols = ncols;
  memcpy(s->cols, cols, sizeof *cols * (size_t)ncols);
  for (size_t r = 0; r < n; r++) s->perm[r] = (uint32_t)r;
  sort_ctx ctx = {t, ncols, cols, sp};
  merge_sort(&ctx, s->perm, tmp, (uint32_t)n);
  free(tmp);
  rt_table_drop_sindex(t, name);
  if (!rt_tabindexes_add_sorted(t, s)) {
    rt_sindex_free(s);
    return 0;
  }
  return 1;
}
