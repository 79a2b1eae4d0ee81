/*
 * bench_data.c — the deterministic table of the workloads, and its
 * installation as a finalized columnar table through the runtime (the
 * public API has no "table from C arrays" call yet; see the report).
 *
 * Columns: k in 0..15 (random order), a in [-10, 90), b in [0, 2,000,000),
 * c a double in [-500, 500); a, b and c are each NULL in about 1% of the
 * rows. So `a > 5 AND b < 1000000` keeps about 42% of the rows and no
 * arithmetic of the workloads can overflow.
 */
#include <stdlib.h>
#include <string.h>

#include "api/engine.h"
#include "bench.h"

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void bench_data_make(bench_data *d, int64_t n) {
  memset(d, 0, sizeof *d);
  d->n = n;
  size_t words = (size_t)(n + 63) / 64 + 1;
  d->k = malloc((size_t)n * 8 + 8);
  d->a = malloc((size_t)n * 8 + 8);
  d->b = malloc((size_t)n * 8 + 8);
  d->c = malloc((size_t)n * 8 + 8);
  d->va = calloc(words, 8);
  d->vb = calloc(words, 8);
  d->vc = calloc(words, 8);
  if (!d->k || !d->a || !d->b || !d->c || !d->va || !d->vb || !d->vc) abort();
  uint64_t s = 42;
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = splitmix(&s);
    d->k[i] = (int64_t)(r & 15);
    d->a[i] = (int64_t)((r >> 4) % 100) - 10;
    d->b[i] = (int64_t)((r >> 11) % 2000000);
    d->c[i] = (double)((r >> 32) % 100000) / 100.0 - 500.0;
    uint64_t nul = splitmix(&s);
    if (nul % 100 != 0) d->va[i >> 6] |= 1ull << (i & 63); else d->a[i] = 0;
    if ((nul >> 8) % 100 != 0) d->vb[i >> 6] |= 1ull << (i & 63); else d->b[i] = 0;
    if ((nul >> 16) % 100 != 0) d->vc[i >> 6] |= 1ull << (i & 63); else d->c[i] = 0;
  }
}

void bench_data_free(bench_data *d) {
  free(d->k);
  free(d->a);
  free(d->b);
  free(d->c);
  free(d->va);
  free(d->vb);
  free(d->vc);
  memset(d, 0, sizeof *d);
}

int bench_data_install(pj_engine *e, const bench_data *d, const char *name) {
  static const char *const names[4] = {"k", "a", "b", "c"};
  rt_type types[4] = {RT_I64, RT_I64, RT_I64, RT_F64};
  rt_rowbuf rb;
  rt_rowbuf_init(&rb, 4, types);
  rt_rowbuf_reserve(&rb, d->n);
  if (rb.cap < d->n) {
    rt_rowbuf_free(&rb);
    return -1;
  }
  const void *src[4] = {d->k, d->a, d->b, d->c};
  const uint64_t *valid[4] = {NULL, d->va, d->vb, d->vc};
  size_t words = (size_t)(d->n + 63) / 64;
  for (int c = 0; c < 4; c++) {
    memcpy(rb.data[c], src[c], (size_t)d->n * 8);
    if (valid[c]) memcpy(rb.valid[c], valid[c], words * 8);
    else memset(rb.valid[c], 0xff, words * 8);
  }
  rb.nrows = d->n;
  rt_table *t = rt_rowbuf_to_table(&rb, name, names, NULL);
  if (!t) return -1;
  rt_catalog_put(e->catalog, t);
  return 0;
}

int bench_data_view(pj_engine *e, const char *name, bench_data *out) {
  rt_table *t = rt_catalog_get(e->catalog, name);
  memset(out, 0, sizeof *out);
  if (!t || t->ncols != 4) return -1;
  out->n = t->nrows;
  out->k = t->cols[0].data;
  out->a = t->cols[1].data;
  out->b = t->cols[2].data;
  out->c = t->cols[3].data;
  out->va = t->cols[1].valid;
  out->vb = t->cols[2].valid;
  out->vc = t->cols[3].valid;
  return out->va && out->vb && out->vc ? 0 : -1;
}
