/*
 * tree_acc.c — the per-node running values of TREE ACCUMULATE's
 * aggregates (layout and per-row rule in tree.h). The per-row work itself
 * is a few instructions, so each backend does it inline: interp/vm_tree.c
 * in a tight loop per aggregate, the JIT in its fused row loop.
 *
 * The arrays come from rt_tree_big_alloc: zeroed pages straight from the
 * kernel (no memset; UP needs zeros, since a node's children add into its
 * slot before its own row reads it), and at a million nodes and more
 * advised as huge pages, so first touches fault once per 2 MiB instead of
 * once per 4 KiB. rt_tree_big_alloc also charges them to the run's
 * memory budget (runtime/budget.h). DOWN needs no zeros: a node's slots
 * are written by its own row before any child's row reads them (a root
 * reads its own slot, unwritten, only into results its root flag masks),
 * so its arrays may be blocks an earlier run freed (rt_tree_big_alloc_any).
 */
#include <stdlib.h>

#include "tree.h"

int rt_treeacc_init(rt_treeacc *a, bool up, uint32_t nnodes, int naggs,
                    const rt_aggkind *kinds, const rt_type *in) {
  memset(a, 0, sizeof *a);
  a->up = up;
  a->nnodes = nnodes;
  a->aggs = calloc((size_t)(naggs > 0 ? naggs : 1), sizeof *a->aggs);
  if (!a->aggs) return 0;
  a->naggs = naggs;
  size_t n = nnodes ? nnodes : 1;
  a->cap = (uint32_t)n;
  for (int k = 0; k < naggs; k++) {
    rt_treeagg *g = &a->aggs[k];
    g->kind = kinds[k];
    /* COUNT counts (int) whatever its argument; SUM/MIN/MAX keep doubles */
    g->in = kinds[k] != RT_AGG_COUNT_STAR && kinds[k] != RT_AGG_COUNT && in[k] == RT_F64 ? RT_F64
                                                                                          : RT_I64;
    /* FIRST / LAST keep value bits of any type; AVG a double sum and a count */
    bool avg = g->kind == RT_AGG_AVG, bits = g->kind == RT_AGG_FIRST || g->kind == RT_AGG_LAST;
    bool arg = g->kind == RT_AGG_ARG_MAX || g->kind == RT_AGG_ARG_MIN;
    if (bits) g->in = RT_I64;
    void *(*alloc)(size_t) = up ? rt_tree_big_alloc : rt_tree_big_alloc_any;
    if (g->in == RT_F64 || avg) g->f = alloc(n * sizeof *g->f);
    if (g->in != RT_F64 || avg) g->i = alloc(n * sizeof *g->i);
    bool has = g->kind == RT_AGG_MIN || g->kind == RT_AGG_MAX || arg || bits;
    if (has) g->has = alloc(n);
    if (arg) g->v = alloc(n * sizeof *g->v);
    if ((!g->f && !g->i) || (avg && (!g->f || !g->i)) || (has && !g->has) || (arg && !g->v))
      return 0;
  }
  return 1;
}

void rt_treeacc_free(rt_treeacc *a) {
  size_t n = a->cap;
  for (int k = 0; a->aggs && k < a->naggs; k++) {
    rt_tree_big_free(a->aggs[k].i, n * sizeof(int64_t));
    rt_tree_big_free(a->aggs[k].f, n * sizeof(double));
    rt_tree_big_free(a->aggs[k].has, n);
    rt_tree_big_free(a->aggs[k].v, n * sizeof(int64_t));
  }
  free(a->aggs);
  memset(a, 0, sizeof *a);
}

/* Moves *p (old entries of size sz) into fresh zeroed room for cap
 * entries; q is that room, allocated beforehand (NULL arrays stay NULL). */
static void grow_into(void **p, void *q, size_t old, size_t cap, size_t sz) {
  (void)cap;
  if (!*p) return;
  memcpy(q, *p, old * sz);
  rt_tree_big_free(*p, old * sz);
  *p = q;
}

int rt_treeacc_reserve(rt_treeacc *a, uint32_t nnodes) {
  if (nnodes <= a->cap) {
    if (nnodes > a->nnodes) a->nnodes = nnodes;
    return 1;
  }
  uint64_t cap = a->cap ? a->cap : 1024;
  while (cap < nnodes) cap *= 2;
  if (cap > UINT32_MAX) cap = UINT32_MAX;
  size_t old = a->cap, nc = (size_t)cap;
  /* Allocate every new array first: on failure nothing has moved, so
   * each array still matches a->cap (the size rt_tree_big_free needs). */
  int n3 = a->naggs * 4;
  void **fresh = calloc((size_t)(n3 > 0 ? n3 : 1), sizeof *fresh);
  bool ok = fresh != NULL;
  void *(*alloc)(size_t) = a->up ? rt_tree_big_alloc : rt_tree_big_alloc_any;
  for (int k = 0; ok && k < a->naggs; k++) {
    rt_treeagg *g = &a->aggs[k];
    if (g->i) ok &= (fresh[4 * k] = alloc(nc * sizeof *g->i)) != NULL;
    if (g->f) ok &= (fresh[4 * k + 1] = alloc(nc * sizeof *g->f)) != NULL;
    if (g->has) ok &= (fresh[4 * k + 2] = alloc(nc)) != NULL;
    if (g->v) ok &= (fresh[4 * k + 3] = alloc(nc * sizeof *g->v)) != NULL;
  }
  if (!ok) {
    for (int k = 0; fresh && k < a->naggs; k++) {
      rt_tree_big_free(fresh[4 * k], nc * sizeof(int64_t));
      rt_tree_big_free(fresh[4 * k + 1], nc * sizeof(double));
      rt_tree_big_free(fresh[4 * k + 2], nc);
      rt_tree_big_free(fresh[4 * k + 3], nc * sizeof(int64_t));
    }
    free(fresh);
    return 0;
  }
  for (int k = 0; k < a->naggs; k++) {
    rt_treeagg *g = &a->aggs[k];
    grow_into((void **)&g->i, fresh[4 * k], old, nc, sizeof *g->i);
    grow_into((void **)&g->f, fresh[4 * k + 1], old, nc, sizeof *g->f);
    grow_into((void **)&g->has, fresh[4 * k + 2], old, nc, 1);
    grow_into((void **)&g->v, fresh[4 * k + 3], old, nc, sizeof *g->v);
  }
  free(fresh);
  a->cap = (uint32_t)cap;
  a->nnodes = (uint32_t)cap;
  return 1;
}
