/*
 * graph_tree.c — what the graph's tree builders (graph_walk.c,
 * graph_dom.c) share with its build (graph.c): how their working arrays
 * are allocated, the tree's arrays and the linear-time sort of node
 * numbers. Below all three, so that none calls back into another.
 */
#include <string.h>

#include "runtime/budget.h"
#include "graph.h"

void *rt_graph_alloc(size_t bytes, bool zero) {
  void *p = rt_mem_big(bytes);
  if (p && zero) memset(p, 0, bytes);
  return p;
}

int rt_gtree_alloc(rt_gtree *t, uint32_t n) {
  memset(t, 0, sizeof *t);
  t->order = rt_graph_alloc(sizeof(uint32_t) * ((size_t)n + 1), false);
  t->parent = rt_graph_alloc(sizeof(uint32_t) * ((size_t)n + 1), false);
  t->depth = rt_graph_alloc(sizeof(uint32_t) * ((size_t)n + 1), false);
  if (t->order && t->parent && t->depth) return 1;
  rt_gtree_free(t);
  return 0;
}

void rt_gtree_free(rt_gtree *t) {
  rt_mem_free(t->order);
  rt_mem_free(t->parent);
  rt_mem_free(t->depth);
  memset(t, 0, sizeof *t);
}

void rt_graph_sort_u32(uint32_t *a, uint32_t n, uint32_t *tmp) {
  if (n < 32) {   /* a radix pass costs its 256 buckets: not worth it */
    for (uint32_t i = 1; i < n; i++) {
      uint32_t x = a[i], j = i;
      for (; j > 0 && a[j - 1] > x; j--) a[j] = a[j - 1];
      a[j] = x;
    }
    return;
  }
  uint32_t or_ = 0, and_ = UINT32_MAX;
  for (uint32_t i = 0; i < n; i++) or_ |= a[i], and_ &= a[i];
  uint32_t cnt[257];
  for (int shift = 0; shift < 32; shift += 8) {
    if ((((or_ ^ and_) >> shift) & 0xff) == 0) continue;
    memset(cnt, 0, sizeof cnt);
    for (uint32_t i = 0; i < n; i++) cnt[((a[i] >> shift) & 0xff) + 1]++;
    for (int d = 0; d < 256; d++) cnt[d + 1] += cnt[d];
    for (uint32_t i = 0; i < n; i++) tmp[cnt[(a[i] >> shift) & 0xff]++] = a[i];
    memcpy(a, tmp, sizeof *a * n);
  }
}
