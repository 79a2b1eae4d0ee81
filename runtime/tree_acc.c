/*
 * tree_acc.c — the per-node running values of TREE ACCUMULATE's
 * aggregates (layout and per-row rule in tree.h). The per-row work itself
 * is a few instructions, so each backend does it inline: interp/vm_tree.c
 * in a tight loop per aggregate, the JIT in its fused row loop.
 */
#include <stdlib.h>

#include "budget.h"
#include "tree.h"

/* Bytes per node of the state arrays: what the accumulation charges to
 * the run's memory budget (budget.h). */
static int64_t node_bytes(const rt_aggkind *kinds, int naggs) {
  int64_t n = 0;
  for (int k = 0; k < naggs; k++) n += 8 + (kinds[k] == RT_AGG_MIN || kinds[k] == RT_AGG_MAX);
  return n;
}

static int64_t acc_bytes(const rt_treeacc *a) {
  int64_t n = 0;
  for (int k = 0; a->aggs && k < a->naggs; k++) n += 8 + (a->aggs[k].has != NULL);
  return n * (int64_t)a->cap;
}

int rt_treeacc_init(rt_treeacc *a, bool up, uint32_t nnodes, int naggs,
                    const rt_aggkind *kinds, const rt_type *in) {
  memset(a, 0, sizeof *a);
  a->up = up;
  a->nnodes = nnodes;
  if (!rt_budget_charge(node_bytes(kinds, naggs) * (int64_t)(nnodes ? nnodes : 1))) return 0;
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
    if (g->in == RT_F64) g->f = calloc(n, sizeof *g->f);
    else g->i = calloc(n, sizeof *g->i);
    if (g->kind == RT_AGG_MIN || g->kind == RT_AGG_MAX) g->has = calloc(n, 1);
    if ((!g->f && !g->i) || ((g->kind == RT_AGG_MIN || g->kind == RT_AGG_MAX) && !g->has))
      return 0;
  }
  return 1;
}

void rt_treeacc_free(rt_treeacc *a) {
  rt_budget_credit(acc_bytes(a));
  for (int k = 0; a->aggs && k < a->naggs; k++) {
    free(a->aggs[k].i);
    free(a->aggs[k].f);
    free(a->aggs[k].has);
  }
  free(a->aggs);
  memset(a, 0, sizeof *a);
}

/* realloc + zero the new tail; a NULL array (unused by this kind) stays. */
#define RT_TREE_GROW(p, old, cap)                                        \
  do {                                                                   \
    if (p) {                                                             \
      void *q_ = realloc((p), (cap) * sizeof *(p));                      \
      if (!q_) return 0;                                                 \
      (p) = q_;                                                          \
      memset((p) + (old), 0, ((cap) - (old)) * sizeof *(p));             \
    }                                                                    \
  } while (0)

int rt_treeacc_reserve(rt_treeacc *a, uint32_t nnodes) {
  if (nnodes <= a->cap) {
    if (nnodes > a->nnodes) a->nnodes = nnodes;
    return 1;
  }
  uint64_t cap = a->cap ? a->cap : 1024;
  while (cap < nnodes) cap *= 2;
  if (cap > UINT32_MAX) cap = UINT32_MAX;
  size_t old = a->cap, nc = (size_t)cap;
  if (!rt_budget_charge(acc_bytes(a) / (a->cap ? a->cap : 1) * (int64_t)(nc - old))) return 0;
  for (int k = 0; k < a->naggs; k++) {
    rt_treeagg *g = &a->aggs[k];
    RT_TREE_GROW(g->i, old, nc);
    RT_TREE_GROW(g->f, old, nc);
    RT_TREE_GROW(g->has, old, nc);
  }
  a->cap = (uint32_t)cap;
  a->nnodes = (uint32_t)cap;
  return 1;
}
#undef RT_TREE_GROW
