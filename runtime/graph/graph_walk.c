/*
 * graph_walk.c — the DFS and BFS trees of a built graph (graph.h), each
 * O(V + E): every node is reached once and every out-list read once.
 *
 * Seeds are marked reached before the walk starts, so no seed is ever
 * entered from another node: every seed is a root, in both trees. The
 * dominator tree numbers its vertices by the same walk without that
 * (graph_dom.c: a true depth-first search from the virtual root).
 */
#include <string.h>

#include "runtime/budget.h"
#include "graph.h"

/* A node joins the tree: position i of t. */
static void put(rt_gtree *t, uint32_t v, uint32_t parent, uint32_t depth) {
  uint32_t i = t->n++;
  t->order[i] = v;
  t->parent[i] = parent;
  t->depth[i] = depth;
}

int rt_graph_preorder(const rt_graph *g, bool seeds_are_roots, rt_gtree *t) {
  uint32_t nv = g->nv;
  /* reached: a bitmap (it stays in cache); the path from the current
   * seed: each node and its out-list's cursor and end (a node's depth
   * is its place on the path) */
  uint64_t *seen = rt_graph_alloc(RT_BITWORDS((size_t)nv + 1) * sizeof(uint64_t), true);
  uint32_t *stk = rt_graph_alloc(sizeof(uint32_t) * ((size_t)nv + 1), false);
  uint32_t *cur = rt_graph_alloc(sizeof(uint32_t) * ((size_t)nv + 1), false);
  uint32_t *end = rt_graph_alloc(sizeof(uint32_t) * ((size_t)nv + 1), false);
  int ok = seen && stk && cur && end && rt_gtree_alloc(t, nv);
  if (ok) {
    for (uint32_t i = 0; i < g->nseeds && seeds_are_roots; i++) rt_bit_set(seen, g->seeds[i]);
    for (uint32_t i = 0; i < g->nseeds; i++) {
      uint32_t s = g->seeds[i], top = 1;
      if (!seeds_are_roots) {
        if (rt_bit(seen, s)) continue;   /* reached from an earlier seed */
        rt_bit_set(seen, s);
      }
      stk[0] = s;
      cur[0] = g->off[s];
      end[0] = g->off[s + 1];
      put(t, s, RT_GRAPH_NONE, 0);
      while (top) {
        uint32_t e = cur[top - 1], stop = end[top - 1];
        while (e < stop && rt_bit(seen, g->adj[e])) e++;
        if (e == stop) {
          top--;
          continue;
        }
        uint32_t v = g->adj[e];
        cur[top - 1] = e + 1;
        rt_bit_set(seen, v);
        put(t, v, stk[top - 1], top);
        stk[top] = v;
        cur[top] = g->off[v];
        end[top] = g->off[v + 1];
        /* v's successors are the next nodes the walk enters: start
         * their out-lists' offsets on their way (random lines) */
        for (uint32_t j = cur[top]; j < end[top] && j < cur[top] + 8; j++)
          __builtin_prefetch(&g->off[g->adj[j]]);
        top++;
      }
    }
  }
  rt_mem_free(seen);
  rt_mem_free(stk);
  rt_mem_free(cur);
  rt_mem_free(end);
  return ok;
}

int rt_graph_dfs(const rt_graph *g, rt_gtree *t) { return rt_graph_preorder(g, true, t); }

int rt_graph_bfs(const rt_graph *g, rt_gtree *t) {
  uint32_t nv = g->nv;
  uint64_t *seen = rt_graph_alloc(RT_BITWORDS((size_t)nv + 1) * sizeof(uint64_t), true);
  uint32_t *tmp = rt_graph_alloc(sizeof(uint32_t) * ((size_t)nv + 1), false);
  uint32_t *par = rt_graph_alloc(sizeof(uint32_t) * ((size_t)nv + 1), false);   /* by rank */
  int ok = seen && tmp && par && rt_gtree_alloc(t, nv);
  if (ok) {
    /* t->order is the queue: level L is order[lo, hi) */
    for (uint32_t i = 0; i < g->nseeds; i++) {
      rt_bit_set(seen, g->seeds[i]);
      put(t, g->seeds[i], RT_GRAPH_NONE, 0);
    }
    uint32_t lo = 0, depth = 0;
    while (lo < t->n) {
      uint32_t hi = t->n;
      /* The level is in ascending id, so the first node to reach a
       * node of the next level is the smallest-id one with an edge to
       * it. */
      for (uint32_t i = lo; i < hi; i++) {
        uint32_t u = t->order[i];
        for (uint32_t e = g->off[u]; e < g->off[u + 1]; e++) {
          uint32_t v = g->adj[e];
          if (rt_bit(seen, v)) continue;
          rt_bit_set(seen, v);
          par[v] = u;
          t->order[t->n++] = v;
        }
      }
      depth++;
      rt_graph_sort_u32(t->order + hi, t->n - hi, tmp);
      for (uint32_t i = hi; i < t->n; i++) {
        t->parent[i] = par[t->order[i]];
        t->depth[i] = depth;
      }
      lo = hi;
    }
  }
  rt_mem_free(seen);
  rt_mem_free(tmp);
  rt_mem_free(par);
  return ok;
}
