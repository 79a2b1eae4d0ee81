/*
 * tree_acc.c — the per-node running values of TREE ACCUMULATE's
 * aggregates (layout and per-row rule in tree.h). The per-row work itself
 * is a few instructions, so each backend does it inline: interp/vm_tree.c
 * in a tight loop per aggregate, the JIT in its fused row loop.
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
  for (int k = 0; a->aggs && k < a->naggs; k++) {
    free(a->aggs[k].i);
    free(a->aggs[k].f);
    free(a->aggs[k].has);
  }
  free(a->aggs);
  memset(a, 0, sizeof *a);
}
