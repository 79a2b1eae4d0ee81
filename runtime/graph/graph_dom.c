/*
 * graph_dom.c — the dominator tree of a built graph (graph.h), by
 * Lengauer and Tarjan ("A fast algorithm for finding dominators in a
 * flowgraph", TOPLAS 1979), the sophisticated version: path compression
 * with balanced linking, O((V + E) α(V + E, V)).
 *
 * A virtual root R has an edge to every seed; the flowgraph is what R
 * reaches. Vertices are renumbered by DFS preorder from R (1 = R, 0 the
 * sentinel the paper's link/eval rely on: size 0, semi 0), so semi[]
 * comparisons are comparisons of those numbers and every array is dense
 * in them. Predecessor lists hold only reachable vertices. DFS, eval's
 * path compression and the output's tree walk are iterative: a million-
 * node chain must not overflow the C stack.
 *
 * The tree leaves R out: its children (every seed, and each node that no
 * single node dominates) are roots. Output in preorder, children in
 * ascending id (rank), each one's depth below its root.
 */
#include <string.h>

#include "runtime/budget.h"
#include "graph.h"

/* The state link and eval read of one vertex, together: each is one
 * cache line, where six arrays would be six misses per step (the
 * vertices they visit are scattered over millions). */
typedef struct ltv {
  uint32_t semi, label, ancestor, size, child, parent;
} ltv;

typedef struct lt {
  uint32_t n;            /* vertices numbered 1..n (R is 1) */
  uint32_t *vertex;      /* number → rank (R: nv) */
  ltv *v;                /* by number; v[0] the sentinel */
  uint32_t *idom;
  uint32_t *poff, *pred; /* predecessors of w: pred[poff[w] .. poff[w+1]) */
  uint32_t *bhead, *bnext;   /* buckets: vertices whose semi is v */
  uint32_t *stk;         /* scratch for compress */
} lt;

/* compress(v) of the paper, without recursion: the chain of ancestors
 * whose own ancestor is linked, then updated from the top down. */
static void compress(lt *t, uint32_t v) {
  ltv *x = t->v;
  uint32_t top = 0;
  while (x[x[v].ancestor].ancestor != 0) {
    t->stk[top++] = v;
    v = x[v].ancestor;
  }
  while (top) {
    v = t->stk[--top];
    uint32_t a = x[v].ancestor;
    if (x[x[a].label].semi < x[x[v].label].semi) x[v].label = x[a].label;
    x[v].ancestor = x[a].ancestor;
  }
}

static uint32_t eval(lt *t, uint32_t v) {
  ltv *x = t->v;
  if (x[v].ancestor == 0) return x[v].label;
  compress(t, v);
  uint32_t a = x[v].ancestor;
  return x[x[a].label].semi >= x[x[v].label].semi ? x[v].label : x[a].label;
}

/* link(v, w) with balancing (the paper's, 0 the sentinel). */
static void link(lt *t, uint32_t v, uint32_t w) {
  ltv *x = t->v;
  uint32_t s = w, lw = x[w].label, sw = x[lw].semi;
  while (sw < x[x[x[s].child].label].semi) {
    uint32_t c = x[s].child;
    if (x[s].size + x[x[c].child].size >= 2 * x[c].size) {
      x[c].ancestor = s;
      x[s].child = x[c].child;
    } else {
      x[c].size = x[s].size;
      x[s].ancestor = c;
      s = c;
    }
  }
  x[s].label = lw;
  x[v].size += x[w].size;
  if (x[v].size < 2 * x[w].size) {
    uint32_t y = s;
    s = x[v].child;
    x[v].child = y;
  }
  while (s != 0) {
    x[s].ancestor = v;
    s = x[s].child;
  }
}

/* How far ahead the loops fetch the vertices they will touch at random
 * (edge ends, predecessors, parents, idoms). */
enum { AHEAD = 16 };

static uint32_t *arr(size_t n) { return rt_graph_alloc(sizeof(uint32_t) * (n + 1), false); }

static void lt_free(lt *t) {
  uint32_t **a[] = {&t->vertex, &t->idom, &t->poff, &t->pred, &t->bhead, &t->bnext, &t->stk};
  for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
    rt_mem_free(*a[i]);
    *a[i] = NULL;
  }
  rt_mem_free(t->v);
  t->v = NULL;
}

/* DFS from R: numbers (dfn by rank, 0 = unreached), vertex, parent. R's
 * children are the seeds, so its walk is rt_graph_preorder's without
 * marking the seeds first; a root there is a child of R here. */
static int number(const rt_graph *g, lt *t, uint32_t *dfn) {
  rt_gtree pre;
  if (!rt_graph_preorder(g, false, &pre)) return 0;
  uint32_t nv = g->nv, n = 1;
  dfn[nv] = 1;
  t->vertex[1] = nv;
  t->v[1].parent = 0;
  for (uint32_t i = 0; i < pre.n; i++) {
    uint32_t v = pre.order[i];
    dfn[v] = ++n;
    t->vertex[n] = v;
    t->v[n].parent = pre.parent[i] == RT_GRAPH_NONE ? 1 : dfn[pre.parent[i]];
  }
  t->n = n;
  rt_gtree_free(&pre);
  return 1;
}

/* Predecessor lists in DFS numbers (every edge out of a reached vertex):
 * the out-lists are read in rank order, so sequentially, each edge's
 * ends mapped once into a scratch array of (from, to) numbers. */
static int preds(const rt_graph *g, lt *t, const uint32_t *dfn) {
  uint32_t n = t->n, nv = g->nv;
  size_t ne = g->nseeds;
  for (uint32_t u = 0; u < nv; u++)
    if (dfn[u]) ne += g->off[u + 1] - g->off[u];
  t->poff = rt_graph_alloc(((size_t)n + 2) * sizeof(uint32_t), true);
  t->pred = arr(ne);
  uint32_t *pairs = arr(2 * ne);
  if (!t->poff || !t->pred || !pairs) {
    rt_mem_free(pairs);
    return 0;
  }
  size_t k = 0;
  for (uint32_t i = 0; i < g->nseeds; i++) pairs[k++] = 1, pairs[k++] = dfn[g->seeds[i]];
  uint32_t na = g->off[nv];
  for (uint32_t u = 0; u < nv; u++) {
    uint32_t a = dfn[u];
    if (!a) continue;
    for (uint32_t e = g->off[u]; e < g->off[u + 1]; e++) {
      if (e + AHEAD < na) __builtin_prefetch(&dfn[g->adj[e + AHEAD]]);
      pairs[k++] = a, pairs[k++] = dfn[g->adj[e]];
    }
  }
  for (size_t i = 0; i < ne; i++) {
    if (i + AHEAD < ne) __builtin_prefetch(&t->poff[pairs[2 * (i + AHEAD) + 1] + 1], 1);
    t->poff[pairs[2 * i + 1] + 1]++;
  }
  for (uint32_t w = 0; w <= n; w++) t->poff[w + 1] += t->poff[w];
  /* bnext is free scratch until the buckets are used: the next free
   * slot per vertex */
  uint32_t *fill = t->bnext;
  memcpy(fill, t->poff, sizeof(uint32_t) * ((size_t)n + 1));
  for (size_t i = 0; i < ne; i++) {
    if (i + AHEAD < ne) __builtin_prefetch(&fill[pairs[2 * (i + AHEAD) + 1]], 1);
    t->pred[fill[pairs[2 * i + 1]]++] = pairs[2 * i];
  }
  rt_mem_free(pairs);
  return 1;
}

static void dominators(lt *t) {
  uint32_t n = t->n;
  ltv *x = t->v;
  for (uint32_t v = 0; v <= n; v++) {
    x[v].semi = x[v].label = v;
    x[v].ancestor = x[v].child = 0;
    x[v].size = v ? 1 : 0;
    t->bhead[v] = 0;
    t->idom[v] = 0;
  }
  for (uint32_t w = n; w >= 2; w--) {
    /* w descends, so the parent and first predecessors of the vertex
     * AHEAD steps on are known: their lines are fetched now */
    if (w > AHEAD + 1) {
      uint32_t y = w - AHEAD;
      __builtin_prefetch(&x[x[y].parent]);
      for (uint32_t i = t->poff[y]; i < t->poff[y + 1] && i < t->poff[y] + 4; i++)
        __builtin_prefetch(&x[t->pred[i]]);
    }
    uint32_t sw = x[w].semi;
    for (uint32_t i = t->poff[w]; i < t->poff[w + 1]; i++) {
      uint32_t u = eval(t, t->pred[i]);
      if (x[u].semi < sw) sw = x[u].semi;
    }
    x[w].semi = sw;
    /* bucket(vertex(semi w)) gets w */
    t->bnext[w] = t->bhead[sw];
    t->bhead[sw] = w;
    uint32_t p = x[w].parent;
    link(t, p, w);
    for (uint32_t v = t->bhead[p]; v; v = t->bnext[v]) {
      uint32_t u = eval(t, v);
      t->idom[v] = x[u].semi < x[v].semi ? u : p;
    }
    t->bhead[p] = 0;
  }
  for (uint32_t w = 2; w <= n; w++)
    if (t->idom[w] != x[w].semi) t->idom[w] = t->idom[t->idom[w]];
  t->idom[1] = 0;
}

/* The tree below R in preorder, children in ascending rank. */
static int walk(const rt_graph *g, const lt *t, const uint32_t *dfn, rt_gtree *out) {
  uint32_t n = t->n, nv = g->nv;
  uint32_t *coff = rt_graph_alloc(((size_t)n + 2) * sizeof(uint32_t), true), *kids = arr(n);
  uint32_t *stk = arr(n), *cur = arr(n);
  int ok = coff && kids && stk && cur && rt_gtree_alloc(out, n);
  if (ok) {
    /* by rank, so idom and the counters are read at random: ahead */
    for (uint32_t r = 0; r < nv; r++) {
      if (r + AHEAD < nv) __builtin_prefetch(&t->idom[dfn[r + AHEAD]]);
      if (r + AHEAD / 2 < nv && dfn[r + AHEAD / 2])
        __builtin_prefetch(&coff[t->idom[dfn[r + AHEAD / 2]] + 1], 1);
      if (dfn[r]) coff[t->idom[dfn[r]] + 1]++;
    }
    for (uint32_t v = 0; v <= n; v++) coff[v + 1] += coff[v];
    uint32_t *fill = t->stk;   /* free again: compress is done */
    memcpy(fill, coff, sizeof(uint32_t) * ((size_t)n + 1));
    for (uint32_t r = 0; r < nv; r++) {   /* ranks ascending: each list sorted */
      if (r + AHEAD < nv) __builtin_prefetch(&t->idom[dfn[r + AHEAD]]);
      if (r + AHEAD / 2 < nv && dfn[r + AHEAD / 2])
        __builtin_prefetch(&fill[t->idom[dfn[r + AHEAD / 2]]], 1);
      if (dfn[r]) kids[fill[t->idom[dfn[r]]]++] = dfn[r];
    }
    uint32_t top = 1;
    stk[0] = 1;
    cur[0] = coff[1];
    while (top) {
      uint32_t v = stk[top - 1], i = cur[top - 1];
      if (i == coff[v + 1]) {
        top--;
        continue;
      }
      cur[top - 1] = i + 1;
      /* the next siblings' lists and ids are on random lines: ahead */
      if (i + 4 < coff[v + 1]) {
        __builtin_prefetch(&coff[kids[i + 4]]);
        __builtin_prefetch(&t->vertex[kids[i + 4]]);
      }
      uint32_t c = kids[i];
      uint32_t k = out->n++;
      out->order[k] = t->vertex[c];
      out->parent[k] = v == 1 ? RT_GRAPH_NONE : t->vertex[v];
      out->depth[k] = top - 1;
      stk[top] = c;
      cur[top] = coff[c];
      top++;
    }
  }
  rt_mem_free(coff);
  rt_mem_free(kids);
  rt_mem_free(stk);
  rt_mem_free(cur);
  return ok;
}

int rt_graph_dominator(const rt_graph *g, rt_gtree *out) {
  uint32_t nv = g->nv;
  size_t cap = (size_t)nv + 2;   /* every node and R */
  lt t;
  memset(&t, 0, sizeof t);
  uint32_t *dfn = rt_graph_alloc(((size_t)nv + 1) * sizeof(uint32_t), true);
  uint32_t **a[] = {&t.vertex, &t.idom, &t.bhead, &t.bnext, &t.stk};
  int ok = dfn != NULL && (t.v = rt_graph_alloc(sizeof(ltv) * cap, false)) != NULL;
  for (size_t i = 0; i < sizeof a / sizeof a[0] && ok; i++) ok = (*a[i] = arr(cap)) != NULL;
  ok = ok && number(g, &t, dfn) && preds(g, &t, dfn);
  if (ok) {
    dominators(&t);
    ok = walk(g, &t, dfn, out);
  }
  lt_free(&t);
  rt_mem_free(dfn);
  return ok;
}
