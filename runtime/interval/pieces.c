/*
 * pieces.c — the output of the reshaping stages that give input rows new
 * bounds (SUBTRACT, SPLIT, QUANTIZE): growable arrays of pieces, and the
 * per-lane reorder into (ts, input row) from the order they were made
 * in (each lane's rows in input order, each row's pieces by time).
 */
#include "interval.h"
#include "runtime/budget.h"

bool rt_ivpieces_push(rt_ivpieces *p, int64_t ts, int64_t dur, uint32_t row, uint32_t orow,
                      int64_t bucket) {
  if (p->n == p->cap) {
    size_t need = p->n + 1, c;
    c = p->cap;
    if (!rt_iv_grow((void **)&p->ts, &c, need, 8)) return false;
    c = p->cap;
    if (!rt_iv_grow((void **)&p->dur, &c, need, 8)) return false;
    c = p->cap;
    if (!rt_iv_grow((void **)&p->row, &c, need, 4)) return false;
    if (p->with_orow) {
      c = p->cap;
      if (!rt_iv_grow((void **)&p->orow, &c, need, 4)) return false;
    }
    if (p->with_bucket) {
      c = p->cap;
      if (!rt_iv_grow((void **)&p->bucket, &c, need, 8)) return false;
    }
    p->cap = c;
  }
  size_t i = p->n++;
  p->ts[i] = ts;
  p->dur[i] = dur;
  p->row[i] = row;
  if (p->with_orow) p->orow[i] = orow;
  if (p->with_bucket) p->bucket[i] = bucket;
  return true;
}

/* Applies permutation idx (k items) to arr[from..) of elements of sz
 * bytes, through scratch tmp. */
static void permute(void *arr, size_t sz, size_t from, const uint32_t *idx, size_t k, char *tmp) {
  char *a = (char *)arr + from * sz;
  for (size_t i = 0; i < k; i++) memcpy(tmp + i * sz, a + (size_t)idx[i] * sz, sz);
  memcpy(a, tmp, k * sz);
}

bool rt_ivpieces_order(rt_ivpieces *p, size_t from) {
  size_t k = p->n - from;
  bool sorted = true;
  for (size_t i = from + 1; i < p->n && sorted; i++) sorted = p->ts[i - 1] <= p->ts[i];
  if (sorted) return true;
  uint64_t *s = rt_mem_alloc(k * sizeof *s);
  uint32_t *idx = rt_mem_alloc(k * sizeof *idx);
  char *tmp = rt_mem_alloc(k * 8);
  bool ok = s && idx && tmp;
  if (ok) {
    for (size_t i = 0; i < k; i++) {
      s[i] = (uint64_t)p->ts[from + i];   /* never negative */
      idx[i] = (uint32_t)i;
    }
    ok = rt_iv_sort(s, NULL, idx, k);
  }
  if (ok) {
    permute(p->ts, 8, from, idx, k, tmp);
    permute(p->dur, 8, from, idx, k, tmp);
    permute(p->row, 4, from, idx, k, tmp);
    if (p->with_orow) permute(p->orow, 4, from, idx, k, tmp);
    if (p->with_bucket) permute(p->bucket, 8, from, idx, k, tmp);
  }
  rt_mem_free(s);
  rt_mem_free(idx);
  rt_mem_free(tmp);
  return ok;
}

void rt_ivpieces_free(rt_ivpieces *p) {
  rt_mem_free(p->ts);
  rt_mem_free(p->dur);
  rt_mem_free(p->row);
  rt_mem_free(p->orow);
  rt_mem_free(p->bucket);
  bool o = p->with_orow, b = p->with_bucket;
  memset(p, 0, sizeof *p);
  p->with_orow = o;
  p->with_bucket = b;
}
