/*
 * test_graph_diff.c — GRAPH DFS / BFS / DOMINATOR TREE (LANGUAGE.md §9.5)
 * on random graphs against brute-force references written here, on both
 * backends.
 *
 * Each trial makes a graph from a fixed linear congruential sequence (so
 * runs repeat): 1..120 nodes with dense or sparse (negative, huge) ids
 * stored in shuffled order, edges with cycles, self-loops, duplicates,
 * NULL ends and unreachable parts, one to four seeds (repeats and NULL
 * among them). The references use none of runtime/graph's machinery: an
 * adjacency matrix over the nodes in ascending id,
 *   DFS        plain recursion from each seed in ascending id (every seed
 *              marked reached first, so each one is a root), neighbours
 *              scanned in ascending id;
 *   BFS        levels, each node's parent found by scanning the whole
 *              level before for the smallest id with an edge to it;
 *   DOMINATOR  the iterative dataflow dom(n) = {n} ∪ ∩ dom(p) over the
 *              predecessors p (the virtual root R precedes every seed,
 *              dom(R) = {R}) until nothing changes, as bitsets; idom(n)
 *              is the dominator with one element fewer, depth the count
 *              of dominators other than n and R; preorder by recursion
 *              over the children in ascending id.
 * Every pipeline runs through the exec driver with the interpreter and
 * with the JIT's compiled segments (no fallback), and the rows must match
 * the reference in order. DOMINATOR is also checked through TREE
 * ACCUMULATE UP SUM (retained sizes) against sums over the reference's
 * subtrees.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "codegen/cg.h"
#include "interp/vm.h"
#include "api/engine.h"

static pj_engine *E;
static cg_jit *J;

static int setup(void **state) {
  (void)state;
  if (pj_engine_open(NULL, &E) != PJ_OK) return -1;
  rt_err err = {.offset = -1};
  J = cg_jit_new(&err);
  return J ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  cg_jit_free(J);
  pj_engine_close(E);
  return 0;
}

static uint64_t g_seed = 88172645463325252ull;
static uint32_t rnd(uint32_t m) {
  g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
  return m ? (uint32_t)((g_seed >> 33) % m) : 0;
}

/* ---- the graph -------------------------------------------------------------- */

#define MAXN 120
typedef struct graph {
  int n;
  int64_t id[MAXN];         /* node k's id, ascending in k */
  int64_t sz[MAXN];
  int order[MAXN];          /* table row r holds node order[r] */
  bool adj[MAXN][MAXN];     /* an edge k → j (self-loops dropped) */
  bool seed[MAXN];
  int nseeds;
} graph;

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

typedef struct sbuf {
  char *s;
  size_t n, cap;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    if (b->s && b->n + (size_t)k < b->cap) {
      b->n += (size_t)k;
      return;
    }
    b->cap = (b->cap + (size_t)k + 1) * 2;
    b->s = realloc(b->s, b->cap);
    assert_non_null(b->s);
  }
}

/* A random graph, written as the tables gn(id, sz), ge(src, dst), gs(id). */
static void make_graph(graph *g) {
  memset(g, 0, sizeof *g);
  int n = 1 + (int)rnd(MAXN);
  g->n = n;
  bool sparse = rnd(3) == 0;
  for (int k = 0; k < n; k++) {
    bool again;
    do {
      g->id[k] = sparse ? (int64_t)rnd(2000000000) * 4611686 - 4611686000000000000ll : (int64_t)k + 1;
      again = false;
      for (int j = 0; j < k; j++) again |= g->id[j] == g->id[k];
    } while (again);
  }
  qsort(g->id, (size_t)n, sizeof g->id[0], cmp_i64);
  for (int k = 0; k < n; k++) {
    g->sz[k] = rnd(1000);
    g->order[k] = k;
  }
  for (int k = n - 1; k > 0; k--) {   /* rows in shuffled order */
    int j = (int)rnd((uint32_t)k + 1), t = g->order[k];
    g->order[k] = g->order[j];
    g->order[j] = t;
  }
  sbuf q = {0};
  sb_printf(&q, "DROP TABLE IF EXISTS gn; DROP TABLE IF EXISTS ge; DROP TABLE IF EXISTS gs;"
                "CREATE TABLE gn(id INT, sz INT); CREATE TABLE ge(src INT, dst INT); CREATE TABLE gs(id INT);"
                "INSERT INTO gn VALUES ");
  for (int r = 0; r < n; r++)
    sb_printf(&q, "%s(%lld, %lld)", r ? "," : "", (long long)g->id[g->order[r]], (long long)g->sz[g->order[r]]);
  sb_printf(&q, ";");
  /* edges: a few local ones (chains and cycles), random ones, self-loops,
   * repeats, NULL ends */
  int m = (int)rnd((uint32_t)(3 * n + 1)), written = 0;
  int cluster = 1 + (int)rnd(4);
  for (int i = 0; i < m; i++) {
    int s = (int)rnd((uint32_t)n), d;
    switch (rnd(5)) {
    case 0: d = s; break;                                           /* self-loop */
    case 1: d = (s + 1 + (int)rnd(3)) % n; break;                   /* local */
    case 2: d = (s / cluster) * cluster + (int)rnd((uint32_t)cluster); if (d >= n) d = s; break;
    default: d = (int)rnd((uint32_t)n); break;
    }
    int copies = rnd(6) == 0 ? 2 : 1;                               /* repeats */
    for (int c = 0; c < copies; c++) {
      sb_printf(&q, "%s(%lld, %lld)", written++ ? "," : "INSERT INTO ge VALUES ", (long long)g->id[s], (long long)g->id[d]);
      if (s != d) g->adj[s][d] = true;
    }
    if (rnd(15) == 0) {   /* a NULL end: no edge */
      long long x = (long long)g->id[rnd((uint32_t)n)];
      if (rnd(2)) sb_printf(&q, ",(NULL, %lld)", x);
      else sb_printf(&q, ",(%lld, NULL)", x);
    }
  }
  if (written) sb_printf(&q, ";");
  int ns = 1 + (int)rnd(4);
  sb_printf(&q, "INSERT INTO gs VALUES ");
  for (int i = 0; i < ns; i++) {
    int k = (int)rnd((uint32_t)n);
    sb_printf(&q, "%s(%lld)", i ? "," : "", (long long)g->id[k]);
    g->seed[k] = true;
  }
  if (rnd(4) == 0) sb_printf(&q, ",(NULL)");
  sb_printf(&q, ";");
  if (pj_engine_exec(E, q.s, NULL, NULL) != PJ_OK) {
    fprintf(stderr, "setup: %s\n", pj_engine_errmsg(E));
    fail();
  }
  free(q.s);
  g->nseeds = 0;
  for (int k = 0; k < n; k++) g->nseeds += g->seed[k];
}

/* ---- references ------------------------------------------------------------- */

/* A reference row: node, parent node (-1 for a root), depth. */
typedef struct ref {
  int n;
  int node[MAXN], parent[MAXN], depth[MAXN];
} ref;

static void put(ref *r, int v, int parent, int depth) {
  r->node[r->n] = v;
  r->parent[r->n] = parent;
  r->depth[r->n] = depth;
  r->n++;
}

static void dfs_visit(const graph *g, bool *seen, ref *r, int u, int depth) {
  for (int v = 0; v < g->n; v++) {
    if (!g->adj[u][v] || seen[v]) continue;
    seen[v] = true;
    put(r, v, u, depth + 1);
    dfs_visit(g, seen, r, v, depth + 1);
  }
}

static void ref_dfs(const graph *g, ref *r) {
  bool seen[MAXN] = {0};
  r->n = 0;
  for (int k = 0; k < g->n; k++) seen[k] = g->seed[k];
  for (int k = 0; k < g->n; k++) {
    if (!g->seed[k]) continue;
    put(r, k, -1, 0);
    dfs_visit(g, seen, r, k, 0);
  }
}

static void ref_bfs(const graph *g, ref *r) {
  int level[MAXN];
  for (int k = 0; k < g->n; k++) level[k] = g->seed[k] ? 0 : -1;
  r->n = 0;
  for (int L = 0;; L++) {
    bool any = false;
    for (int v = 0; v < g->n; v++) {   /* level L in ascending id */
      if (level[v] != L) continue;
      any = true;
      int parent = -1;
      for (int u = 0; u < g->n && L > 0 && parent < 0; u++)
        if (level[u] == L - 1 && g->adj[u][v]) parent = u;
      put(r, v, parent, L);
    }
    if (!any) break;
    for (int v = 0; v < g->n; v++) {
      if (level[v] >= 0) continue;
      for (int u = 0; u < g->n; u++)
        if (level[u] == L && g->adj[u][v]) level[v] = L + 1;
    }
  }
}

/* Bit k: node k; bit n: the virtual root. */
typedef struct bits {
  uint64_t w[(MAXN + 1 + 63) / 64];
} bits;

static bool bit(const bits *b, int k) { return (b->w[k / 64] >> (k % 64)) & 1; }
static int popcount(const bits *b) {
  int c = 0;
  for (size_t i = 0; i < sizeof b->w / sizeof b->w[0]; i++) c += __builtin_popcountll(b->w[i]);
  return c;
}

static int g_idom[MAXN], g_ddepth[MAXN];

static void dom_visit(const graph *g, ref *r, int p) {
  for (int v = 0; v < g->n; v++)   /* children in ascending id */
    if (g_idom[v] == p && g_ddepth[v] >= 0) {
      put(r, v, p < g->n ? p : -1, g_ddepth[v]);
      dom_visit(g, r, v);
    }
}

static void ref_dominator(const graph *g, ref *r) {
  int n = g->n, R = n;
  bool reach[MAXN + 1] = {0};
  /* reachable from R (plain fixpoint) */
  for (int k = 0; k < n; k++) reach[k] = g->seed[k];
  for (bool ch = true; ch;) {
    ch = false;
    for (int u = 0; u < n; u++)
      for (int v = 0; v < n && reach[u]; v++)
        if (g->adj[u][v] && !reach[v]) reach[v] = ch = true;
  }
  bits dom[MAXN + 1];
  memset(dom, 0, sizeof dom);
  bits all;
  memset(&all, 0, sizeof all);
  for (int k = 0; k <= n; k++) all.w[k / 64] |= 1ull << (k % 64);
  for (int k = 0; k < n; k++) dom[k] = all;
  dom[R].w[R / 64] |= 1ull << (R % 64);
  for (bool ch = true; ch;) {
    ch = false;
    for (int v = 0; v < n; v++) {
      if (!reach[v]) continue;
      bits x = all;
      for (int u = 0; u <= n; u++) {
        bool pred = u == R ? g->seed[v] : reach[u] && g->adj[u][v];
        if (!pred) continue;
        for (size_t i = 0; i < sizeof x.w / sizeof x.w[0]; i++) x.w[i] &= dom[u].w[i];
      }
      x.w[v / 64] |= 1ull << (v % 64);
      if (memcmp(&x, &dom[v], sizeof x)) dom[v] = x, ch = true;
    }
  }
  for (int v = 0; v < n; v++) {
    g_idom[v] = -2;
    g_ddepth[v] = -1;
    if (!reach[v]) continue;
    int c = popcount(&dom[v]);
    g_ddepth[v] = c - 2;   /* neither v nor R */
    for (int d = 0; d <= n; d++)
      if (d != v && bit(&dom[v], d) && popcount(&dom[d]) == c - 1) g_idom[v] = d;
  }
  r->n = 0;
  dom_visit(g, r, R);
}

/* ---- running ---------------------------------------------------------------- */

static ex_batch_fn pick_interp(void *ctx, int seg) {
  (void)ctx, (void)seg;
  return vm_run_batch;
}
static ex_batch_fn pick_jit(void *ctx, int seg) { return cg_segment_fn(ctx, seg); }

/* The pipeline's result on one backend (code NULL: the interpreter). */
static void run_one(pj_query *q, cg_module *code, rt_rowbuf *out) {
  ex_value none[1] = {{.type = RT_NULLT}};
  ex_run run;
  ex_run_init(&run, q->plan, E->strings, E->db, 0, none);
  int rc = code ? ex_run_plan(&run, pick_jit, code) : ex_run_plan(&run, pick_interp, NULL);
  if (rc != 0) {
    fprintf(stderr, "run: %s\n", run.err.msg);
    fail();
  }
  bool after_source = false;
  for (int i = 0; i < run.nsegs && code; i++) {
    if (!cg_segment_compiled(code, i)) continue;
    assert_null(run.segs[i].vm);   /* no fallback to the interpreter */
    after_source |= run.segs[i].seg->source->kind == IR_GRAPH;
  }
  if (code) assert_true(after_source);
  ex_run_free(&run);
  *out = run.result;
}

static int64_t cell(const rt_rowbuf *b, int c, int64_t r, bool *null) {
  *null = !rt_bit(b->valid[c], (uint32_t)r);
  return *null ? 0 : ((const int64_t *)b->data[c])[r];
}

/* The rows (id, parent_id, depth) must be the reference's, in order. */
static void check_rows(const char *what, const graph *g, const rt_rowbuf *b, const ref *r) {
  if (b->nrows != r->n) {
    fprintf(stderr, "%s: %lld rows, reference %d\n", what, (long long)b->nrows, r->n);
    fail();
  }
  for (int i = 0; i < r->n; i++) {
    bool nid, npar, ndep;
    int64_t id = cell(b, 0, i, &nid), par = cell(b, 1, i, &npar), dep = cell(b, 2, i, &ndep);
    int v = r->node[i], p = r->parent[i];
    bool ok = !nid && id == g->id[v] && npar == (p < 0) && (p < 0 || par == g->id[p]) && !ndep &&
              dep == r->depth[i];
    if (!ok) {
      fprintf(stderr, "%s: row %d: id %lld parent %s%lld depth %lld; reference id %lld parent %lld depth %d\n",
              what, i, (long long)id, npar ? "NULL " : "", (long long)par, (long long)dep,
              (long long)g->id[v], p < 0 ? -1ll : (long long)g->id[p], r->depth[i]);
      fail();
    }
  }
}

static void diff(const char *pipe, const graph *g, const ref *r) {
  pj_query *q = NULL;
  if (pj_query_compile(E, pipe, &q) != PJ_OK) {
    fprintf(stderr, "compile: %s: %s\n", pipe, pj_engine_errmsg(E));
    fail();
  }
  rt_err err = {.offset = -1};
  cg_module *code = cg_compile(J, q->plan, 2, &err);
  assert_non_null(code);
  rt_rowbuf a, b;
  run_one(q, NULL, &a);
  run_one(q, code, &b);
  check_rows("interp", g, &a, r);
  check_rows("jit", g, &b, r);
  rt_rowbuf_free(&a);
  rt_rowbuf_free(&b);
  cg_module_free(code);
  pj_query_free(q);
}

/* Something after the source for the JIT to compile (depth + 0 keeps the
 * value). */
#define TAIL " |> SELECT id, parent_id, depth + 0 AS depth"

static void test_random_graphs(void **state) {
  (void)state;
  int64_t rows = 0, unreached = 0, dom_roots = 0;
  for (int trial = 0; trial < 150; trial++) {
    graph g;
    make_graph(&g);
    ref r;
    ref_dfs(&g, &r);
    diff("GRAPH DFS TREE NODES gn EDGES ge FROM gs" TAIL, &g, &r);
    rows += r.n;
    unreached += g.n - r.n;
    ref_bfs(&g, &r);
    diff("GRAPH BFS TREE NODES gn EDGES ge FROM gs" TAIL, &g, &r);
    ref_dominator(&g, &r);
    diff("GRAPH DOMINATOR TREE NODES gn EDGES ge FROM gs" TAIL, &g, &r);
    for (int i = 0; i < r.n; i++) dom_roots += r.parent[i] < 0 && !g.seed[r.node[i]];
  }
  /* not vacuous: big trees, nodes left out, and nodes only the virtual
   * root dominates that are not seeds */
  assert_true(rows > 2000);
  assert_true(unreached > 500);
  assert_true(dom_roots > 20);
}

/* Retained sizes: DOMINATOR then TREE ACCUMULATE UP SUM(sz), against the
 * sums over the reference's dominator subtrees. */
static void test_retained(void **state) {
  (void)state;
  for (int trial = 0; trial < 40; trial++) {
    graph g;
    make_graph(&g);
    ref r;
    ref_dominator(&g, &r);
    int64_t want[MAXN] = {0};
    for (int i = r.n - 1; i >= 0; i--) {   /* preorder backwards: children first */
      int v = r.node[i];
      want[v] += g.sz[v];
      if (r.parent[i] >= 0) want[r.parent[i]] += want[v];
    }
    pj_query *q = NULL;
    const char *pipe = "GRAPH DOMINATOR TREE NODES gn EDGES ge FROM gs |> TREE ACCUMULATE UP SUM(sz) AS retained "
                       "|> SELECT id, retained";
    assert_int_equal(pj_query_compile(E, pipe, &q), PJ_OK);
    rt_err err = {.offset = -1};
    cg_module *code = cg_compile(J, q->plan, 2, &err);
    assert_non_null(code);
    for (int be = 0; be < 2; be++) {
      rt_rowbuf b;
      run_one(q, be ? code : NULL, &b);
      assert_int_equal(b.nrows, r.n);
      for (int64_t i = 0; i < b.nrows; i++) {
        bool null;
        int64_t id = cell(&b, 0, i, &null), got = cell(&b, 1, i, &null);
        int v = -1;
        for (int k = 0; k < g.n; k++)
          if (g.id[k] == id) v = k;
        assert_true(v >= 0);
        if (got != want[v]) {
          fprintf(stderr, "trial %d node %lld: retained %lld, reference %lld\n", trial, (long long)id,
                  (long long)got, (long long)want[v]);
          fail();
        }
      }
      rt_rowbuf_free(&b);
    }
    cg_module_free(code);
    pj_query_free(q);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_graphs),
      cmocka_unit_test(test_retained),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
