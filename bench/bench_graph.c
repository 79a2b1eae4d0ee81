/*
 * bench_graph.c — data of the graph workloads (dfs, bfs, dominator,
 * retained; LANGUAGE.md §9.5): a heap-graph-like random graph of n nodes
 * and 3n edges as columnar tables
 *   gnode(id, self_size)  ids 0..n-1 in a random row order, sizes 16..4111
 *   gedge(src, dst)       a random spanning "allocation" edge into every
 *                         node but 0 (from a random earlier-numbered
 *                         node), then 2n + 1 uniformly random references
 *                         (self-loops and repeats among them)
 *   groot(id)             16 roots: node 0 and 15 random ones
 * so that every node is reachable and the dominator tree is far from a
 * chain. Deterministic for a given n.
 */
#include <stdlib.h>
#include <string.h>

#include "../runtime/rt.h"
#include "../runtime/store.h"
#include "api/engine.h"
#include "bench.h"

static uint64_t g_rand(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* A columnar table of int64 columns (no NULLs) moved into the catalog. */
static int put_table(pj_engine *e, const char *name, int ncols, const char *const *names,
                     int64_t *const *cols, int64_t n) {
  rt_type types[4] = {RT_I64, RT_I64, RT_I64, RT_I64};
  rt_rowbuf rb;
  rt_rowbuf_init(&rb, ncols, types);
  rt_rowbuf_reserve(&rb, n);
  if (rb.cap < n) {
    rt_rowbuf_free(&rb);
    return -1;
  }
  size_t words = (size_t)(n + 63) / 64;
  for (int c = 0; c < ncols; c++) {
    memcpy(rb.data[c], cols[c], (size_t)n * 8);
    memset(rb.valid[c], 0xff, words * 8);
  }
  rb.nrows = n;
  rt_table *t = rt_rowbuf_to_table(&rb, name, names, NULL);
  if (!t) return -1;
  rt_catalog_put(e->catalog, t);
  return 0;
}

int bench_graph_setup(pj_engine *e, int64_t n) {
  if (n < 1) n = 1;
  uint64_t s = 0x9e3779b97f4a7c15ull ^ (uint64_t)n;
  int64_t m = 3 * n, nr = 16;
  int64_t *id = malloc(sizeof(int64_t) * (size_t)n), *sz = malloc(sizeof(int64_t) * (size_t)n);
  int64_t *src = malloc(sizeof(int64_t) * (size_t)m), *dst = malloc(sizeof(int64_t) * (size_t)m);
  int64_t *root = malloc(sizeof(int64_t) * (size_t)nr);
  int rc = -1;
  if (id && sz && src && dst && root) {
    for (int64_t i = 0; i < n; i++) id[i] = i;
    for (int64_t i = n - 1; i > 0; i--) {   /* rows in random order */
      int64_t j = (int64_t)(g_rand(&s) % (uint64_t)(i + 1)), t = id[i];
      id[i] = id[j];
      id[j] = t;
    }
    for (int64_t i = 0; i < n; i++) sz[i] = 16 + (int64_t)(g_rand(&s) % 4096);
    int64_t k = 0;
    for (int64_t v = 1; v < n; v++) {
      src[k] = (int64_t)(g_rand(&s) % (uint64_t)v);
      dst[k++] = v;
    }
    while (k < m) {
      src[k] = (int64_t)(g_rand(&s) % (uint64_t)n);
      dst[k++] = (int64_t)(g_rand(&s) % (uint64_t)n);
    }
    root[0] = 0;
    for (int64_t i = 1; i < nr; i++) root[i] = (int64_t)(g_rand(&s) % (uint64_t)n);
    static const char *const nn[] = {"id", "self_size"}, *const en[] = {"src", "dst"},
                             *const rn[] = {"id"};
    int64_t *ncols[] = {id, sz}, *ecols[] = {src, dst}, *rcols[] = {root};
    rc = put_table(e, "gnode", 2, nn, ncols, n) || put_table(e, "gedge", 2, en, ecols, m) ||
                 put_table(e, "groot", 1, rn, rcols, nr)
             ? -1
             : 0;
  }
  free(id);
  free(sz);
  free(src);
  free(dst);
  free(root);
  return rc;
}
