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

typedef struct lt {
  uint32_t n;            /* vertices numbered 1..n (R is 1) */
  uint32_t *vertex;      /* number → rank (R: nv) */
  uint32_t *parent;      /* DFS tree parent (number) */
  uint32_t *semi, *label, *ancestor, *size, *child, *idom;
  uint32_t *poff, *pred; /* predecessors of w: pred[poff[w] .. poff[w+1]) */
  uint32_t *bhead, *bnext;   /* buckets: vertices whose semi is v */
  uint32_t *stk;         /* scratch for compress */
} lt;

/* compress(v) of the paper, without recursion: the chain of ancestors
 * whose own ancestor is linked, then updated from the top down. */
static void compress(lt *t, uint32_t v) {
  uint32_t *anc = t->ancestor, *label = t->label, *semi = t->semi;
  uint32_t top = 0;
  while (anc[anc[v]] != 0) {
    t->stk[top++] = v;
    v = anc[v];
  }
  while (top) {
    v = t->stk[--top];
    uint32_t a = anc[v];
    if (semi[label[a]] < semi[label[v]]) label[v] = label[a];
    anc[v] = anc[a];
  }
}

static uint32_t eval(lt *t, uint32_t v) {
  if (t->ancestor[v] == 0) return t->label[v];
  compress(t, v);
  uint32_t a = t->ancestor[v];
  return t->semi[t->label[a]] >= t->semi[t->label[v]] ? t->label[v] : t->label[a];
}

/* link(v, w) with balancing (the paper's, 0 the sentinel). */
static void link(lt *t, uint32_t v, uint32_t w) {
  uint32_t *semi = t->semi, *label = t->label, *size = t->size, *child = t->child,
           *anc = t->ancestor;
  uint32_t s = w;
  while (semi[label[w]] < semi[label[child[s]]]) {
    if (size[s] + size[child[child[s]]] >= 2 * size[child[s]]) {
      anc[child[s]] = s;
      child[s] = child[child[s]];
    } else {
      size[child[s]] = size[s];
      s = anc[s] = child[s];
    }
  }
  label[s] = label[w];
  size[v] += size[w];
  if (size[v] < 2 * size[w]) {
    uint32_t x = s;
    s = child[v];
    child[v] = x;
  }
  while (s != 0) {
    anc[s] = v;
    s = child[s];
  }
}

static uint32_t *arr(size_t n) { return rt_mem_alloc(sizeof(uint32_t) * (n + 1)); }

static void lt_free(lt *t) {
  uint32_t **a[] = {&t->vertex, &t->parent, &t->semi, &t->label, &t->ancestor, &t->size,
                    &t->child, &t->idom, &t->poff, &t->pred, &t->bhead, &t->bnext, &t->stk};
  for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
    rt_mem_free(*a[i]);
    *a[i] = NULL;
  }
}

/* Successors of rank u (R = nv: the seeds). */
static void succs(const rt_graph *g, uint32_t u, const uint32_t **s, uint32_t *n) {
  if (u == g->nv) {
    *s = g->seeds;
    *n = g->nseeds;
  } else {
    *s = g->adj + g->off[u];
    *n = g->off[u + 1] - g->off[u];
  }
}

/* DFS from R: numbers (dfn by rank, 0 = unreached), vertex, parent. */
static int number(const rt_graph *g, lt *t, uint32_t *dfn) {
  uint32_t nv = g->nv;
  uint32_t *stk = arr((size_t)nv + 1), *cur = arr((size_t)nv + 1);
  if (!stk || !cur) {
    rt_mem_free(stk);
    rt_mem_free(cur);
    return 0;
  }
  uint32_t n = 1, top = 1;
  dfn[nv] = 1;
  t->vertex[1] = nv;
  t->parent[1] = 0;
  stk[0] = nv;
  cur[0] = 0;
  while (top) {
    uint32_t u = stk[top - 1];
    const uint32_t *s;
    uint32_t ns;
    succs(g, u, &s, &ns);
    uint32_t i = cur[top - 1];
    while (i < ns && dfn[s[i]]) i++;
    if (i == ns) {
      top--;
      continue;
    }
    cur[top - 1] = i + 1;
    uint32_t v = s[i];
    dfn[v] = ++n;
    t->vertex[n] = v;
    t->parent[n] = dfn[u];
    stk[top] = v;
    cur[top] = 0;
    top++;
  }
  t->n = n;
  rt_mem_free(stk);
  rt_mem_free(cur);
  return 1;
}

/* Predecessor lists in DFS numbers (every edge out of a reached vertex). */
static int preds(const rt_graph *g, lt *t, const uint32_t *dfn) {
  uint32_t n = t->n;
  t->poff = rt_mem_calloc((size_t)n + 2, sizeof(uint32_t));
  size_t ne = 0;
  for (uint32_t a = 1; a <= n; a++) {
    const uint32_t *s;
    uint32_t ns;
    succs(g, t->vertex[a], &s, &ns);
    ne += ns;
  }
  t->pred = arr(ne);
  if (!t->poff || !t->pred) return 0;
  for (uint32_t a = 1; a <= n; a++) {
    const uint32_t *s;
    uint32_t ns;
    succs(g, t->vertex[a], &s, &ns);
    for (uint32_t i = 0; i < ns; i++) t->poff[dfn[s[i]] + 1]++;
  }
  for (uint32_t w = 0; w <= n; w++) t->poff[w + 1] += t->poff[w];
  /* fill from the back of each list (bnext is free scratch until the
   * buckets are used: the next free slot per vertex) */
  uint32_t *fill = t->bnext;
  memcpy(fill, t->poff, sizeof(uint32_t) * ((size_t)n + 1));
  for (uint32_t a = 1; a <= n; a++) {
    const uint32_t *s;
    uint32_t ns;
    succs(g, t->vertex[a], &s, &ns);
    for (uint32_t i = 0; i < ns; i++) t->pred[fill[dfn[s[i]]]++] = a;
  }
  return 1;
}

static void dominators(lt *t) {
  uint32_t n = t->n;
  for (uint32_t v = 0; v <= n; v++) {
    t->semi[v] = t->label[v] = v;
    t->ancestor[v] = t->child[v] = 0;
    t->size[v] = v ? 1 : 0;
    t->bhead[v] = 0;
    t->idom[v] = 0;
  }
  for (uint32_t w = n; w >= 2; w--) {
    for (uint32_t i = t->poff[w]; i < t->poff[w + 1]; i++) {
      uint32_t u = eval(t, t->pred[i]);
      if (t->semi[u] < t->semi[w]) t->semi[w] = t->semi[u];
    }
    /* bucket(vertex(semi w)) gets w */
    t->bnext[w] = t->bhead[t->semi[w]];
    t->bhead[t->semi[w]] = w;
    uint32_t p = t->parent[w];
    link(t, p, w);
    for (uint32_t v = t->bhead[p]; v; v = t->bnext[v]) {
      uint32_t u = eval(t, v);
      t->idom[v] = t->semi[u] < t->semi[v] ? u : p;
    }
    t->bhead[p] = 0;
  }
  for (uint32_t w = 2; w <= n; w++)
    if (t->idom[w] != t->semi[w]) t->idom[w] = t->idom[t->idom[w]];
  t->idom[1] = 0;
}

/* The tree below R in preorder, children in ascending rank. */
static int walk(const rt_graph *g, const lt *t, const uint32_t *dfn, rt_gtree *out) {
  uint32_t n = t->n, nv = g->nv;
  uint32_t *coff = rt_mem_calloc((size_t)n + 2, sizeof(uint32_t)), *kids = arr(n);
  uint32_t *stk = arr(n), *cur = arr(n);
  int ok = coff && kids && stk && cur && rt_gtree_alloc(out, n);
  if (ok) {
    for (uint32_t r = 0; r < nv; r++)
      if (dfn[r]) coff[t->idom[dfn[r]] + 1]++;
    for (uint32_t v = 0; v <= n; v++) coff[v + 1] += coff[v];
    uint32_t *fill = t->stk;   /* free again: compress is done */
    memcpy(fill, coff, sizeof(uint32_t) * ((size_t)n + 1));
    for (uint32_t r = 0; r < nv; r++)   /* ranks ascending: each list sorted */
      if (dfn[r]) kids[fill[t->idom[dfn[r]]]++] = dfn[r];
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
  uint32_t *dfn = rt_mem_calloc((size_t)nv + 1, sizeof(uint32_t));
  uint32_t **a[] = {&t.vertex, &t.parent, &t.semi, &t.label, &t.ancestor, &t.size,
                    &t.child, &t.idom, &t.bhead, &t.bnext, &t.stk};
  int ok = dfn != NULL;
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
