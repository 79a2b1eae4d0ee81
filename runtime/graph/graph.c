/*
 * graph.c — builds the graph of a GRAPH source (graph.h, "Building") and
 * turns the tree a builder returns into output rows (ids, not ranks).
 *
 * Ranks rather than ids everywhere after the build: the per-node arrays
 * are dense (sized by the node count, never by the largest id), and
 * "ascending id" orders (seeds, out-edges, BFS levels, dominator
 * children) become orders of small integers that counting sorts give in
 * linear time.
 */
#include <string.h>

#include "runtime/budget.h"
#include "graph.h"

/* How far ahead the loops over edges fetch what they will touch at random. */
enum { AHEAD = 16 };

static bool valid_at(const rt_gcol *c, uint32_t i) { return !c->valid || rt_bit(c->valid, i); }

/* ---- radix sorts ------------------------------------------------------------ */

/* LSD radix sort of (key, value) pairs by key (unsigned), 16-bit digits,
 * skipping digits every key shares. Scratch tk/tv of n. */
static void radix_pairs(uint64_t *k, uint32_t *v, uint32_t n, uint64_t *tk, uint32_t *tv,
                        uint32_t *cnt /* 65536 + 1 */) {
  uint64_t all_or = 0, all_and = ~(uint64_t)0;
  for (uint32_t i = 0; i < n; i++) all_or |= k[i], all_and &= k[i];
  for (int shift = 0; shift < 64; shift += 16) {
    if ((((all_or ^ all_and) >> shift) & 0xffff) == 0) continue;   /* every key has this digit */
    memset(cnt, 0, sizeof(uint32_t) * 65537);
    for (uint32_t i = 0; i < n; i++) cnt[((k[i] >> shift) & 0xffff) + 1]++;
    for (int d = 0; d < 65536; d++) cnt[d + 1] += cnt[d];
    for (uint32_t i = 0; i < n; i++) {
      uint32_t at = cnt[(k[i] >> shift) & 0xffff]++;
      tk[at] = k[i];
      tv[at] = v[i];
    }
    memcpy(k, tk, sizeof *k * n);
    memcpy(v, tv, sizeof *v * n);
  }
}

/* ---- node numbering -------------------------------------------------------- */

/* id → rank: a direct table over [lo, lo + span) when the ids are dense
 * enough (at most 4 slots per node), else an open-addressing map; and
 * when the ids are exactly lo .. lo + n - 1 (a heap graph's, a table's
 * row ids), no table at all: the rank is id - lo. */
typedef struct idmap {
  int64_t lo;
  uint64_t span;
  bool identity;
  uint32_t *direct;     /* rank + 1, 0 = no node */
  uint64_t mask;
  int64_t *keys;
  uint32_t *vals;       /* rank + 1 */
} idmap;

static uint64_t mix(int64_t x) {
  uint64_t h = (uint64_t)x * 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}

/* The rank of id, or RT_GRAPH_NONE. */
static uint32_t idmap_get(const idmap *m, int64_t id) {
  if (m->direct || m->identity) {
    uint64_t o = (uint64_t)id - (uint64_t)m->lo;
    if (id < m->lo || o >= m->span) return RT_GRAPH_NONE;
    return m->identity ? (uint32_t)o : m->direct[o] - 1;   /* 0 - 1 wraps to NONE */
  }
  if (!m->vals) return RT_GRAPH_NONE;   /* no nodes: no map at all */
  for (uint64_t h = mix(id) & m->mask;; h = (h + 1) & m->mask) {
    if (!m->vals[h]) return RT_GRAPH_NONE;
    if (m->keys[h] == id) return m->vals[h] - 1;
  }
}

static void idmap_free(idmap *m) {
  rt_mem_free(m->direct);
  rt_mem_free(m->keys);
  rt_mem_free(m->vals);
  memset(m, 0, sizeof *m);
}

typedef struct gctx {
  const char *stage;
  rt_err *err;
} gctx;

static int oom(gctx *c) { return rt_errorf(c->err, -1, "%s: out of memory", c->stage); }

/* The first repeated id in rank order (ids sorted): an error naming both
 * rows. */
static int dup_error(gctx *c, const rt_gcol *id, uint32_t r1, uint32_t r2) {
  if (r1 > r2) {
    uint32_t t = r1;
    r1 = r2;
    r2 = t;
  }
  return rt_errorf(c->err, -1, "%s: expected distinct node ids, but NODES rows %u and %u both have id %lld",
                   c->stage, r1 + 1, r2 + 1, (long long)id->v[r1]);
}

/* Numbers the nodes: g->nv, g->row (rank → row) and the map. */
static int number_nodes(gctx *c, const rt_gcol *id, rt_graph *g, idmap *m) {
  uint32_t n = id->n;
  g->nv = n;
  if (!(g->row = rt_graph_alloc(sizeof(uint32_t) * ((size_t)n + 1), false))) return oom(c);
  if (n == 0) return 1;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (uint32_t r = 0; r < n; r++) {
    if (!valid_at(id, r))
      return rt_errorf(c->err, -1, "%s: NODES row %u has no id (NULL)", c->stage, r + 1);
    if (id->v[r] < lo) lo = id->v[r];
    if (id->v[r] > hi) hi = id->v[r];
  }
  uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;   /* 0 when the range is all of int64 */
  if (span != 0 && span <= 4 * (uint64_t)n + 1024) {
    m->lo = lo;
    m->span = span;
    if (!(m->direct = rt_graph_alloc((size_t)span * sizeof(uint32_t), true))) return oom(c);
    for (uint32_t r = 0; r < n; r++) {
      uint32_t *slot = &m->direct[(uint64_t)id->v[r] - (uint64_t)lo];
      if (*slot) return dup_error(c, id, *slot - 1, r);
      *slot = r + 1;
    }
    uint32_t rank = 0;
    for (uint64_t o = 0; o < span; o++)
      if (m->direct[o]) {
        g->row[rank] = m->direct[o] - 1;
        m->direct[o] = ++rank;
      }
    if (span == n) {   /* every slot taken: rank = id - lo */
      m->identity = true;
      rt_mem_free(m->direct);
      m->direct = NULL;
    }
    return 1;
  }
  /* sparse ids: sort (id, row) pairs, then a hash map id → rank */
  uint64_t *k = rt_graph_alloc(sizeof(uint64_t) * n, false), *tk = rt_graph_alloc(sizeof(uint64_t) * n, false);
  uint32_t *tv = rt_graph_alloc(sizeof(uint32_t) * n, false), *cnt = rt_graph_alloc(sizeof(uint32_t) * 65537, false);
  uint64_t cap = 16;
  while (cap < 2 * (uint64_t)n) cap *= 2;
  m->mask = cap - 1;
  m->keys = rt_graph_alloc(sizeof(int64_t) * cap, false);
  m->vals = rt_graph_alloc(cap * sizeof(uint32_t), true);
  int ok = k && tk && tv && cnt && m->keys && m->vals;
  if (ok) {
    for (uint32_t r = 0; r < n; r++) {
      k[r] = (uint64_t)id->v[r] ^ ((uint64_t)1 << 63);   /* signed order as unsigned */
      g->row[r] = r;
    }
    radix_pairs(k, g->row, n, tk, tv, cnt);
    for (uint32_t i = 1; i < n && ok > 0; i++)
      if (k[i] == k[i - 1]) ok = -1, dup_error(c, id, g->row[i - 1], g->row[i]);
    for (uint32_t i = 0; i < n && ok > 0; i++) {
      int64_t x = id->v[g->row[i]];
      uint64_t h = mix(x) & m->mask;
      while (m->vals[h]) h = (h + 1) & m->mask;
      m->keys[h] = x;
      m->vals[h] = i + 1;
    }
  }
  rt_mem_free(k);
  rt_mem_free(tk);
  rt_mem_free(tv);
  rt_mem_free(cnt);
  if (!ok) return oom(c);
  return ok > 0;
}

/* ---- edges ------------------------------------------------------------------ */

static int endpoint(gctx *c, const idmap *m, const rt_graph_in *in, uint32_t r, bool dst,
                    uint32_t *out) {
  const rt_gcol *col = dst ? &in->dst : &in->src;
  *out = idmap_get(m, col->v[r]);
  if (*out != RT_GRAPH_NONE) return 1;
  return rt_errorf(c->err, -1, "%s: EDGES row %u (src %lld, dst %lld): %s %lld is not a node", c->stage,
                   r + 1, (long long)in->src.v[r], (long long)in->dst.v[r], dst ? "dst" : "src",
                   (long long)col->v[r]);
}

/* Out-lists sorted by dst, without self-loops or repeats: the edges
 * bucketed by src (a counting sort), then each list sorted and its
 * repeats (adjacent now) dropped while compacting. */
static int build_edges(gctx *c, const rt_graph_in *in, const idmap *m, rt_graph *g) {
  uint32_t nv = g->nv, ne = in->src.n;
  uint32_t *es = rt_graph_alloc(sizeof(uint32_t) * ((size_t)ne + 1), false);
  uint32_t *ed = rt_graph_alloc(sizeof(uint32_t) * ((size_t)ne + 1), false);
  g->off = rt_graph_alloc(((size_t)nv + 2) * sizeof(uint32_t), true);
  uint32_t *fill = rt_graph_alloc(sizeof(uint32_t) * ((size_t)nv + 1), false);
  if (!es || !ed || !g->off || !fill) {
    rt_mem_free(es), rt_mem_free(ed), rt_mem_free(fill);
    return oom(c);
  }
  /* endpoints as ranks; k edges kept */
  uint32_t k = 0;
  int ok = 1;
  uint32_t r = 0;
  if (m->identity && !in->src.valid && !in->dst.valid) {
    /* ids lo .. lo + n - 1 and no NULL endpoint (a heap graph's tables):
     * the rank is id - lo, one compare each; the first endpoint out of
     * range stops here and the general loop below reports it */
    const int64_t *sv = in->src.v, *dv = in->dst.v;
    uint64_t lo = (uint64_t)m->lo, span = m->span;
    for (; r < ne; r++) {
      uint64_t s = (uint64_t)sv[r] - lo, d = (uint64_t)dv[r] - lo;
      if (s >= span || d >= span) break;
      es[k] = (uint32_t)s, ed[k] = (uint32_t)d;
      k += s != d;
    }
  }
  for (; r < ne && ok; r++) {
    if (!valid_at(&in->src, r) || !valid_at(&in->dst, r)) continue;   /* NULL: no edge */
    uint32_t s, d;
    if (!endpoint(c, m, in, r, false, &s) || !endpoint(c, m, in, r, true, &d)) ok = 0;
    else if (s != d) es[k] = s, ed[k] = d, k++;
  }
  uint32_t *adj = ok ? rt_graph_alloc(sizeof(uint32_t) * ((size_t)k + 1), false) : NULL;
  if (ok && !adj) ok = oom(c);
  if (ok) {
    /* the sources are in edge order, so at random: their counters and
     * list ends are fetched ahead */
    for (uint32_t i = 0; i < k; i++) {
      if (i + AHEAD < k) __builtin_prefetch(&g->off[es[i + AHEAD] + 1], 1);
      g->off[es[i] + 1]++;
    }
    for (uint32_t v = 0; v < nv; v++) g->off[v + 1] += g->off[v];
    memcpy(fill, g->off, sizeof(uint32_t) * nv);
    for (uint32_t i = 0; i < k; i++) {
      if (i + AHEAD < k) __builtin_prefetch(&fill[es[i + AHEAD]], 1);
      if (i + AHEAD / 2 < k) __builtin_prefetch(&adj[fill[es[i + AHEAD / 2]]], 1);
      adj[fill[es[i]]++] = ed[i];
    }
    uint32_t w = 0, start = 0;
    for (uint32_t u = 0; u < nv; u++) {
      uint32_t end = g->off[u + 1];
      rt_graph_sort_u32(adj + start, end - start, es);   /* es is free scratch now */
      g->off[u] = w;
      for (uint32_t i = start; i < end; i++)
        if (i == start || adj[i] != adj[i - 1]) adj[w++] = adj[i];
      start = end;
    }
    g->off[nv] = w;
    g->adj = adj;
    adj = NULL;
  }
  rt_mem_free(es);
  rt_mem_free(ed);
  rt_mem_free(fill);
  rt_mem_free(adj);
  return ok;
}

/* ---- seeds ------------------------------------------------------------------ */

static int build_seeds(gctx *c, const rt_gcol *seed, const idmap *m, rt_graph *g) {
  uint8_t *is = rt_graph_alloc((size_t)g->nv + 1, true);
  g->seeds = rt_graph_alloc(sizeof(uint32_t) * ((size_t)g->nv + 1), false);
  if (!is || !g->seeds) {
    rt_mem_free(is);
    return oom(c);
  }
  for (uint32_t r = 0; r < seed->n; r++) {
    if (!valid_at(seed, r)) continue;   /* NULL: no seed */
    uint32_t k = idmap_get(m, seed->v[r]);
    if (k == RT_GRAPH_NONE) {
      rt_mem_free(is);
      return rt_errorf(c->err, -1, "%s: FROM row %u: seed %lld is not a node", c->stage, r + 1,
                       (long long)seed->v[r]);
    }
    is[k] = 1;
  }
  g->nseeds = 0;
  for (uint32_t v = 0; v < g->nv; v++)
    if (is[v]) g->seeds[g->nseeds++] = v;
  rt_mem_free(is);
  return 1;
}

/* ---- output ----------------------------------------------------------------- */

static void graph_free(rt_graph *g) {
  rt_mem_free(g->row);
  rt_mem_free(g->off);
  rt_mem_free(g->adj);
  rt_mem_free(g->seeds);
  memset(g, 0, sizeof *g);
}

void rt_graph_out_free(rt_graph_out *out) {
  rt_mem_free(out->row);
  rt_mem_free(out->parent);
  rt_mem_free(out->parent_valid);
  rt_mem_free(out->depth);
  memset(out, 0, sizeof *out);
}

/* The tree's ranks as NODES rows and ids. */
static int emit(gctx *c, const rt_graph *g, const rt_gtree *t, const rt_gcol *id, rt_graph_out *out) {
  uint32_t n = t->n;
  out->row = rt_graph_alloc(sizeof(uint32_t) * ((size_t)n + 1), false);
  out->parent = rt_graph_alloc(sizeof(int64_t) * ((size_t)n + 1), false);
  out->parent_valid = rt_graph_alloc(RT_BITWORDS((size_t)n + 1) * sizeof(uint64_t), true);
  out->depth = rt_graph_alloc(sizeof(int64_t) * ((size_t)n + 1), false);
  if (!out->row || !out->parent || !out->parent_valid || !out->depth) {
    rt_graph_out_free(out);
    return oom(c);
  }
  for (uint32_t i = 0; i < n; i++) {
    out->row[i] = g->row[t->order[i]];
    out->depth[i] = t->depth[i];
    out->parent[i] = 0;
    if (t->parent[i] != RT_GRAPH_NONE) {
      out->parent[i] = id->v[g->row[t->parent[i]]];
      rt_bit_set(out->parent_valid, i);
    }
  }
  out->n = n;
  return 1;
}

int rt_graph_run(rt_graphalgo algo, const rt_graph_in *in, const char *stage, rt_graph_out *out,
                 rt_err *err) {
  gctx c = {stage, err};
  memset(out, 0, sizeof *out);
  rt_graph g;
  memset(&g, 0, sizeof g);
  idmap m;
  memset(&m, 0, sizeof m);
  rt_gtree t;
  memset(&t, 0, sizeof t);
  int ok = number_nodes(&c, &in->id, &g, &m) && build_edges(&c, in, &m, &g) &&
           build_seeds(&c, &in->seed, &m, &g);
  idmap_free(&m);
  if (ok) {
    switch (algo) {
    case RT_GRAPH_DFS: ok = rt_graph_dfs(&g, &t); break;
    case RT_GRAPH_BFS: ok = rt_graph_bfs(&g, &t); break;
    case RT_GRAPH_DOMINATOR: ok = rt_graph_dominator(&g, &t); break;
    }
    if (!ok) oom(&c);
  }
  if (ok) ok = emit(&c, &g, &t, &in->id, out);
  rt_gtree_free(&t);
  graph_free(&g);
  return ok;
}
