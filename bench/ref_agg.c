/*
 * ref_agg.c — the grouped-aggregation workloads (agg_0key, agg_1key,
 * agg_2keys, agg_3keys, agg_str, agg_3mixed, agg_100k, agg_1m) written by hand in C: the speed-of-light reference
 * the JIT is measured against. Built with -O3 -march=native
 * (bench/bench.cmake).
 *
 *   FROM slice |> WHERE dur > 1000
 *              |> AGGREGATE COUNT(*) AS n, SUM(dur) AS s, MAX(dur) AS m
 *                 GROUP BY <keys>
 *
 * What a careful programmer would write for exactly this question: one
 * pass over the column arrays, validity bits tested inline (a column
 * without NULLs has no bitmap), checked sums, and an open-addressing table
 * (linear probing, 50% load, doubling) keyed on the key tuple with NULL
 * flags, groups numbered in first-seen order. The key ranges are not known
 * in advance, so a direct array would be cheating. Each shape is its own
 * loop (the key count is a compile-time constant in each).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static inline uint64_t mix(uint64_t x) {
  x ^= x >> 33; x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

static inline int present(const uint64_t *v, int64_t i) {
  return !v || (int)((v[i >> 6] >> (i & 63)) & 1);
}

typedef struct table {
  uint32_t *slots;
  uint64_t mask;
  uint64_t *hash;
  bench_agg_out *o;
  int64_t cap;
} table;

static int grow_groups(table *t) {
  bench_agg_out *o = t->o;
  int64_t cap = t->cap ? t->cap * 2 : 256;
  void *p;
#define GROW(f, sz)                                           \
  if (!(p = realloc((void *)o->f, (size_t)cap * (sz)))) return -1; \
  o->f = p
  for (int k = 0; k < 3; k++) {
    GROW(key[k], 8);
    GROW(knull[k], 1);
  }
  GROW(n, 8);
  GROW(s, 8);
  GROW(m, 8);
#undef GROW
  if (!(p = realloc(t->hash, (size_t)cap * 8))) return -1;
  t->hash = p;
  t->cap = cap;
  return 0;
}

static int grow_slots(table *t) {
  uint64_t nmask = t->mask * 2 + 1;
  uint32_t *ns = calloc(nmask + 1, sizeof *ns);
  if (!ns) return -1;
  for (int64_t g = 0; g < t->o->ngroups; g++) {
    uint64_t i = t->hash[g] & nmask;
    while (ns[i]) i = (i + 1) & nmask;
    ns[i] = (uint32_t)(g + 1);
  }
  free(t->slots);
  t->slots = ns;
  t->mask = nmask;
  return 0;
}

/* Group of the key tuple (vals, nulls) of NK keys. */
static inline __attribute__((always_inline)) int64_t group(table *t, int nk, const int64_t *vals,
                                                           const uint8_t *nulls) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (int k = 0; k < nk; k++) h = mix(h ^ (uint64_t)vals[k] ^ (nulls[k] ? 0x5bd1e9955bd1e995ull : 0));
  bench_agg_out *o = t->o;
  uint64_t i = h & t->mask;
  for (uint32_t s; (s = t->slots[i]) != 0; i = (i + 1) & t->mask) {
    int64_t g = s - 1;
    if (t->hash[g] != h) continue;
    int eq = 1;
    for (int k = 0; k < nk; k++) eq &= o->knull[k][g] == nulls[k] && o->key[k][g] == vals[k];
    if (eq) return g;
  }
  if ((uint64_t)(o->ngroups + 1) * 2 > t->mask + 1) {
    if (grow_slots(t)) return -1;
    i = h & t->mask;
    while (t->slots[i]) i = (i + 1) & t->mask;
  }
  if (o->ngroups == t->cap && grow_groups(t)) return -1;
  int64_t g = o->ngroups++;
  t->slots[i] = (uint32_t)(g + 1);
  t->hash[g] = h;
  for (int k = 0; k < nk; k++) {
    o->key[k][g] = vals[k];
    o->knull[k][g] = nulls[k];
  }
  o->n[g] = o->s[g] = 0;
  o->m[g] = INT64_MIN;
  return g;
}

/* One shape: NK key columns kc[], of 32-bit values (depth, string ids)
 * where w32[k], else int64; the ts column is taken modulo `mod`. */
static inline __attribute__((always_inline)) int run(const bench_agg_in *in, int nk, const int *w32,
                                                     const int *kc, int64_t mod, bench_agg_out *o) {
  table t = {.o = o};
  memset(o, 0, sizeof *o);
  o->nkeys = nk;
  t.slots = calloc(1024, sizeof *t.slots);
  t.mask = 1023;
  int rc = t.slots && grow_groups(&t) == 0 ? 0 : -1;
  const int64_t *dur = in->dur;
  for (int64_t i = 0; i < in->n && rc == 0; i++) {
    if (!present(in->vdur, i) || dur[i] <= 1000) continue;
    int64_t vals[3] = {0, 0, 0};
    uint8_t nulls[3] = {0, 0, 0};
    for (int k = 0; k < nk; k++) {
      nulls[k] = (uint8_t)!present(in->valid[kc[k]], i);
      if (!nulls[k])
        vals[k] = w32[k] ? (int64_t)((const uint32_t *)in->col[kc[k]])[i] : ((const int64_t *)in->col[kc[k]])[i];
      if (kc[k] == BENCH_AGG_TS) vals[k] %= mod;
    }
    int64_t g = group(&t, nk, vals, nulls);
    if (g < 0 || __builtin_add_overflow(o->s[g], dur[i], &o->s[g])) {
      rc = -1;
      break;
    }
    o->n[g]++;
    if (dur[i] > o->m[g]) o->m[g] = dur[i];
  }
  free(t.slots);
  free(t.hash);
  return rc;
}

/* No GROUP BY: one group, its state in registers; the sum checked per row. */
static int run0(const bench_agg_in *in, bench_agg_out *o) {
  memset(o, 0, sizeof *o);
  o->n = malloc(8);
  o->s = malloc(8);
  o->m = malloc(8);
  if (!o->n || !o->s || !o->m) return -1;
  const int64_t *dur = in->dur;
  int64_t n = 0, s = 0, m = INT64_MIN;
  int ovf = 0;
  for (int64_t i = 0; i < in->n; i++) {
    if (!present(in->vdur, i) || dur[i] <= 1000) continue;
    ovf |= __builtin_add_overflow(s, dur[i], &s);
    n++;
    if (dur[i] > m) m = dur[i];
  }
  o->ngroups = 1;
  o->n[0] = n;
  o->s[0] = s;
  o->m[0] = m;
  return ovf ? -1 : 0;
}

int bench_ref_agg(const bench_agg_in *in, int shape, bench_agg_out *out) {
  /* the slice schema (checked by bench_agg_view): track_id and parent_id
   * int64, depth uint32, name and category string ids */
  static const int k1[] = {BENCH_AGG_DEPTH}, k2[] = {BENCH_AGG_TRACK, BENCH_AGG_DEPTH},
                   k3[] = {BENCH_AGG_TRACK, BENCH_AGG_DEPTH, BENCH_AGG_PARENT}, ks[] = {BENCH_AGG_NAME},
                   km[] = {BENCH_AGG_TRACK, BENCH_AGG_DEPTH, BENCH_AGG_CATEGORY};
  static const int w1[] = {1}, w2[] = {0, 1}, w3[] = {0, 1, 0}, ws[] = {1}, wm[] = {0, 1, 1};
  static const int kt[] = {BENCH_AGG_TS}, wt[] = {0};
  switch (shape) {
  case 1: return run(in, 1, w1, k1, 0, out);
  case 2: return run(in, 2, w2, k2, 0, out);
  case 3: return run(in, 3, w3, k3, 0, out);
  case 4: return run(in, 1, ws, ks, 0, out);
  case 6: return run0(in, out);
  case 7: return run(in, 1, wt, kt, 100000, out);
  case 8: return run(in, 1, wt, kt, 1000000, out);
  default: return run(in, 3, wm, km, 0, out);
  }
}

/* ---- the same on several threads -----------------------------------------
 * What the careful programmer does with more cores and no engine: cut the
 * rows into one contiguous piece per thread (at a multiple of 64, so the
 * validity bitmaps cut on a word), run the one-thread loop above on each
 * piece into a table of its own, then fold the pieces' groups, in piece
 * order, into one table with the same group() probe: groups stay in
 * first-seen order and every sum is exact, so the answer is the
 * one-thread answer. It is the yardstick for the engine's thread
 * speed-up: the ceiling this machine gives a plain two-phase aggregation. */
enum { PAR_MAX = 16 };
/* element width of each slice column the shapes read (bench_agg_view) */
static const int col_width[BENCH_AGG_NCOLS] = {
    [BENCH_AGG_TRACK] = 8, [BENCH_AGG_DEPTH] = 4, [BENCH_AGG_PARENT] = 8,
    [BENCH_AGG_NAME] = 4,  [BENCH_AGG_CATEGORY] = 4, [BENCH_AGG_TS] = 8};

typedef struct piece {
  bench_agg_in in;
  int shape, rc;
  bench_agg_out out;
} piece;

static void *piece_run(void *arg) {
  piece *p = arg;
  p->rc = bench_ref_agg(&p->in, p->shape, &p->out);
  return NULL;
}

/* rows [lo, lo + n) of in, lo a multiple of 64 */
static bench_agg_in in_view(const bench_agg_in *in, int64_t lo, int64_t n) {
  bench_agg_in v = *in;
  v.n = n;
  v.dur = in->dur + lo;
  if (in->vdur) v.vdur = in->vdur + lo / 64;
  for (int c = 0; c < BENCH_AGG_NCOLS; c++) {
    if (in->col[c]) v.col[c] = (const char *)in->col[c] + lo * col_width[c];
    if (in->valid[c]) v.valid[c] = in->valid[c] + lo / 64;
  }
  return v;
}

int bench_ref_agg_par(const bench_agg_in *in, int shape, int threads, bench_agg_out *out) {
  if (threads < 1) threads = 1;
  if (threads > PAR_MAX) threads = PAR_MAX;
  piece ps[PAR_MAX];
  pthread_t tid[PAR_MAX];
  int64_t per = (in->n / threads + 63) / 64 * 64, lo = 0;
  int started = 0;
  for (int p = 0; p < threads; p++) {
    int64_t n = p == threads - 1 ? in->n - lo : (per < in->n - lo ? per : in->n - lo);
    memset(&ps[p], 0, sizeof ps[p]);
    ps[p].in = in_view(in, lo, n);
    ps[p].shape = shape;
    lo += n;
    if (p > 0 && pthread_create(&tid[p], NULL, piece_run, &ps[p]) == 0) started |= 1 << p;
  }
  piece_run(&ps[0]);
  for (int p = 1; p < threads; p++) {
    if (started & (1 << p)) pthread_join(tid[p], NULL);
    else piece_run(&ps[p]);   /* no thread: run it here */
  }
  int rc = 0, nk = bench_agg_nkeys(shape);
  for (int p = 0; p < threads; p++) rc |= ps[p].rc;
  memset(out, 0, sizeof *out);
  table t = {.o = out};
  t.slots = calloc(1024, sizeof *t.slots);
  t.mask = 1023;
  if (rc == 0 && (!t.slots || grow_groups(&t) != 0)) rc = -1;
  out->nkeys = nk;
  for (int p = 0; p < threads && rc == 0; p++) {
    const bench_agg_out *po = &ps[p].out;
    for (int64_t g = 0; g < po->ngroups && rc == 0; g++) {
      int64_t vals[3] = {0, 0, 0};
      uint8_t nulls[3] = {0, 0, 0};
      for (int k = 0; k < nk; k++) vals[k] = po->key[k][g], nulls[k] = po->knull[k][g];
      int64_t m = nk ? group(&t, nk, vals, nulls) : 0;
      if (!nk && out->ngroups == 0) out->ngroups = 1, out->n[0] = out->s[0] = 0, out->m[0] = INT64_MIN;
      if (m < 0 || __builtin_add_overflow(out->s[m], po->s[g], &out->s[m])) {
        rc = -1;
        break;
      }
      out->n[m] += po->n[g];
      if (po->m[g] > out->m[m]) out->m[m] = po->m[g];
    }
  }
  for (int p = 0; p < threads; p++) bench_agg_out_free(&ps[p].out);
  free(t.slots);
  free(t.hash);
  return rc;
}

int bench_agg_nkeys(int shape) {
  switch (shape) {
  case 6: return 0;
  case 1: case 4: case 7: case 8: return 1;
  case 2: return 2;
  default: return 3;
  }
}

void bench_agg_out_free(bench_agg_out *o) {
  for (int k = 0; k < 3; k++) {
    free(o->key[k]);
    free(o->knull[k]);
  }
  free(o->n);
  free(o->s);
  free(o->m);
  memset(o, 0, sizeof *o);
}
