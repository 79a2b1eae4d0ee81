/*
 * graph.h — runtime of the graph sources (LANGUAGE.md §9.5):
 * `GRAPH (DFS | BFS | DOMINATOR) TREE NODES n EDGES e FROM seeds`.
 *
 * The caller (exec/driver_graph.c) hands over three integer columns — the
 * nodes' ids, the edges' src and dst, the seeds' ids — as int64 arrays
 * with validity bitmaps; rt_graph_run builds the graph and returns the
 * tree: which node rows come out, in what order, each with its tree
 * parent's id (NULL for a root) and its depth.
 *
 * Building (graph.c), O(V + E):
 *   nodes   numbered by ascending id ("rank"): a direct table over
 *           [min, max] when the ids are dense enough, else an LSD radix
 *           sort and an open-addressing map id → rank; NULL and
 *           duplicate ids are errors naming the row
 *   edges   src and dst mapped to ranks (an endpoint that is not a node
 *           is an error naming the edge row; a NULL endpoint makes no
 *           edge); self-loops dropped; bucketed by dst, then by src in
 *           ascending dst, so every out-list is sorted and duplicates are
 *           adjacent and dropped (counting sorts, no comparisons)
 *   seeds   a NULL id is no seed; an id that is not a node is an error
 *           naming the seed row; repeated seeds count once
 * Every seed is a root (parent NULL, depth 0) in all three trees.
 *
 * Trees (graph_walk.c, graph_dom.c):
 *   DFS        seeds in ascending id, out-edges in ascending dst; a node's
 *              parent is the node it was first reached from; preorder
 *   BFS        levels from the seeds (level 0); a node's parent is the
 *              smallest-id node of the level before with an edge to it;
 *              level order, ascending id within a level
 *   DOMINATOR  immediate dominators (Lengauer–Tarjan with balanced
 *              linking, O((V + E) α)) under a virtual root whose children
 *              are the seeds; the virtual root is removed, so a node
 *              dominated by nothing else has parent NULL; preorder with
 *              children in ascending id
 * Nodes no seed reaches are not in the output.
 *
 * Every working array is charged to the run's memory budget (rt_mem_*):
 * a refused allocation is "out of memory", never a crash.
 */
#ifndef PJ_GRAPH_H
#define PJ_GRAPH_H

#include "runtime/rt.h"

typedef enum rt_graphalgo { RT_GRAPH_DFS, RT_GRAPH_BFS, RT_GRAPH_DOMINATOR } rt_graphalgo;

/* One integer column of n rows: values, and validity (NULL: no NULLs). */
typedef struct rt_gcol {
  uint32_t n;
  const int64_t *v;
  const uint64_t *valid;
} rt_gcol;

typedef struct rt_graph_in {
  rt_gcol id;          /* NODES.id */
  rt_gcol src, dst;    /* EDGES.src, EDGES.dst (same n) */
  rt_gcol seed;        /* FROM's id */
} rt_graph_in;

/* The tree: n rows; row[i] is the NODES row of output row i, parent[i]
 * its parent's id (valid bit clear for a root), depth[i] its depth. */
typedef struct rt_graph_out {
  uint32_t n;
  uint32_t *row;
  int64_t *parent;
  uint64_t *parent_valid;
  int64_t *depth;
} rt_graph_out;

/* Runs algo over in; errors (offset -1) start with "<stage>: ". Returns
 * 1, or 0 with err set (out is then empty). */
int rt_graph_run(rt_graphalgo algo, const rt_graph_in *in, const char *stage, rt_graph_out *out,
                 rt_err *err);
void rt_graph_out_free(rt_graph_out *out);

/* ---- internal: the built graph (graph.c), read by the tree builders ---- */

#define RT_GRAPH_NONE UINT32_MAX

typedef struct rt_graph {
  uint32_t nv;          /* nodes, numbered 0..nv-1 by ascending id */
  uint32_t *row;        /* rank → NODES row */
  uint32_t *off;        /* out-edges of u: adj[off[u] .. off[u+1]), ascending */
  uint32_t *adj;
  uint32_t nseeds;
  uint32_t *seeds;      /* the seeds' ranks, ascending, distinct */
} rt_graph;

/* What a tree builder returns: the nodes in output order (ranks) and
 * each one's parent rank (RT_GRAPH_NONE for a root) and depth. */
typedef struct rt_gtree {
  uint32_t n;
  uint32_t *order;
  uint32_t *parent;     /* by position in order, a rank or NONE */
  uint32_t *depth;      /* by position in order */
} rt_gtree;

/* Each returns 1, or 0 when out of memory (t is then freed). */
int rt_graph_dfs(const rt_graph *g, rt_gtree *t);
/* Depth-first preorder from the seeds in ascending id, out-edges in
 * ascending dst (graph_walk.c). seeds_are_roots: every seed is marked
 * reached first, so each is a root (rt_graph_dfs); else a seed reached
 * from an earlier one is entered from it, as a depth-first search from a
 * virtual root over the seeds enters it (graph_dom.c). A root's parent
 * is RT_GRAPH_NONE. */
int rt_graph_preorder(const rt_graph *g, bool seeds_are_roots, rt_gtree *t);
int rt_graph_bfs(const rt_graph *g, rt_gtree *t);
int rt_graph_dominator(const rt_graph *g, rt_gtree *t);
/* A working array (charged like rt_mem_alloc; free with rt_mem_free) on
 * huge pages from 2 MiB up: the walks and Lengauer–Tarjan read their
 * per-vertex and per-edge arrays at random, tens of MiB at a million
 * nodes, where 4 KiB pages would miss the TLB on nearly every access.
 * zero: filled with zeros. NULL on out of memory. */
void *rt_graph_alloc(size_t bytes, bool zero);
/* Allocates t's three arrays for up to n nodes. */
int rt_gtree_alloc(rt_gtree *t, uint32_t n);
void rt_gtree_free(rt_gtree *t);
/* Sorts a[0..n) ascending in O(n) for large n (radix), scratch tmp[n]. */
void rt_graph_sort_u32(uint32_t *a, uint32_t n, uint32_t *tmp);

#endif
