/*
 * test_interval.c — unit tests of the interval runtime (runtime/interval/interval.h):
 * INTERVAL INTERSECTION OF, FLATTEN, JOIN and FILL GAPS, plus lanes and the
 * max-end tree. Hand cases pin every rule of LANGUAGE.md §3/§4; randomized
 * differential tests (fixed seeds) compare each operator with a brute-force
 * reference written here from the rules, not from the implementation; a
 * 1M-row case checks that the fast paths scale (not timed).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "runtime/interval/interval.h"

#define NUL INT64_MIN   /* "NULL" in the row literals below */
#define STAGE_I "INTERVAL INTERSECTION OF"

/* ---- test relations ------------------------------------------------------------ */

typedef struct trel {
  rt_ivrel r;
  int64_t *ts, *dur;
  uint64_t *tsv, *durv;
  int64_t *k[2];
  uint64_t *kv[2];
  rt_ivkey keys[2];
} trel;

static trel *trel_new(uint32_t n, int nkeys) {
  trel *t = calloc(1, sizeof *t);
  size_t w = RT_BITWORDS(n) + 1;
  t->ts = calloc(n + 1, 8);
  t->dur = calloc(n + 1, 8);
  t->tsv = calloc(w, 8);
  t->durv = calloc(w, 8);
  for (int k = 0; k < nkeys; k++) {
    t->k[k] = calloc(n + 1, 8);
    t->kv[k] = calloc(w, 8);
    t->keys[k] = (rt_ivkey){.type = RT_I64, .v = t->k[k], .valid = t->kv[k]};
  }
  t->r = (rt_ivrel){n, t->ts, t->dur, t->tsv, t->durv, nkeys, t->keys, NULL, NULL};
  return t;
}

/* Row i: ts, dur, key0, key1; NUL = NULL. */
static void trel_set(trel *t, uint32_t i, int64_t ts, int64_t dur, int64_t k0, int64_t k1) {
  int64_t v[4] = {ts, dur, k0, k1};
  int64_t *d[4] = {t->ts, t->dur, t->k[0], t->k[1]};
  uint64_t *b[4] = {t->tsv, t->durv, t->kv[0], t->kv[1]};
  for (int c = 0; c < 2 + t->r.nkeys; c++) {
    if (v[c] == NUL) {
      d[c][i] = 0;
      rt_bit_clear(b[c], i);
    } else {
      d[c][i] = v[c];
      rt_bit_set(b[c], i);
    }
  }
}

static trel *mk(int nkeys, uint32_t n, const int64_t (*rows)[4]) {
  trel *t = trel_new(n, nkeys);
  for (uint32_t i = 0; i < n; i++) trel_set(t, i, rows[i][0], rows[i][1], rows[i][2], rows[i][3]);
  return t;
}

static void trel_free(trel *t) {
  if (!t) return;
  free(t->ts);
  free(t->dur);
  free(t->tsv);
  free(t->durv);
  for (int k = 0; k < 2; k++) {
    free(t->k[k]);
    free(t->kv[k]);
  }
  free(t);
}

static bool rvalid(const trel *t, uint32_t i) { return rt_ivrel_bounds_valid(&t->r, i); }
static bool knull(const trel *t, int k, uint32_t i) { return !rt_bit(t->kv[k], i); }

/* Same PER key, NULL agreeing with NULL. */
static bool same_key(const trel *a, uint32_t i, const trel *b, uint32_t j) {
  for (int k = 0; k < a->r.nkeys; k++) {
    if (knull(a, k, i) != knull(b, k, j)) return false;
    if (!knull(a, k, i) && a->k[k][i] != b->k[k][j]) return false;
  }
  return true;
}

/* ---- small deterministic PRNG -------------------------------------------------- */

static uint64_t rng_state;
static uint32_t rnd(uint32_t n) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)((rng_state >> 33) % n);
}

/* ==== INTERVAL INTERSECTION OF =================================================== */

#define MAXK 5

static void isect_ok(int k, trel **ops, rt_isect_out *out, rt_isect_stats *st) {
  rt_ivrel rels[MAXK];
  for (int j = 0; j < k; j++) rels[j] = ops[j]->r;
  rt_err err = {0};
  int ok = rt_isect_run(k, rels, STAGE_I, out, st, &err);
  if (!ok) fail_msg("unexpected error: %s", err.msg);
}

/* Expects exactly the regions {ts, dur, row0, row1, …}. */
static void expect_regions(const rt_isect_out *o, size_t n, const int64_t (*want)[2 + MAXK]) {
  assert_int_equal(o->n, n);
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(o->ts[i], want[i][0]);
    assert_int_equal(o->dur[i], want[i][1]);
    for (int j = 0; j < o->k; j++) assert_int_equal(o->rows[j][i], want[i][2 + j]);
  }
}

static void test_isect_touching_and_overlap(void **state) {
  (void)state;
  const int64_t a[][4] = {{0, 10, 0, 0}, {20, 10, 0, 0}};
  const int64_t b[][4] = {{10, 10, 0, 0}, {25, 20, 0, 0}};
  trel *ops[2] = {mk(0, 2, a), mk(0, 2, b)};
  rt_isect_out o;
  rt_isect_stats st;
  isect_ok(2, ops, &o, &st);
  /* [0,10)/[10,20) and [10,20)/[20,30) touch only: nothing; [20,30)∩[25,45) */
  const int64_t want[][2 + MAXK] = {{25, 5, 1, 1}};
  expect_regions(&o, 1, want);
  assert_int_equal(st.part_disjoint, 1);
  assert_int_equal(st.part_narrow, 0);
  rt_isect_free(&o);
  trel_free(ops[0]);
  trel_free(ops[1]);
}

static void test_isect_points(void **state) {
  (void)state;
  /* A: points 10, 30, 50. B: [0,10) (end excluded), point 30, [50,60). */
  const int64_t a[][4] = {{10, 0, 0, 0}, {30, 0, 0, 0}, {50, 0, 0, 0}};
  const int64_t b[][4] = {{0, 10, 0, 0}, {30, 0, 0, 0}, {50, 10, 0, 0}};
  trel *ops[2] = {mk(0, 3, a), mk(0, 3, b)};
  rt_isect_out o;
  isect_ok(2, ops, &o, NULL);
  const int64_t want[][2 + MAXK] = {{30, 0, 1, 1}, {50, 0, 2, 2}};
  expect_regions(&o, 2, want);
  rt_isect_free(&o);
  /* A point strictly inside an interval, and two points at different instants. */
  trel_set(ops[1], 0, 5, 10, 0, 0);   /* [5,15) holds 10 */
  trel_set(ops[1], 1, 31, 0, 0, 0);   /* point 31 misses point 30 */
  isect_ok(2, ops, &o, NULL);
  const int64_t want2[][2 + MAXK] = {{10, 0, 0, 0}, {50, 0, 2, 2}};
  expect_regions(&o, 2, want2);
  rt_isect_free(&o);
  trel_free(ops[0]);
  trel_free(ops[1]);
}

static void test_isect_three_operands(void **state) {
  (void)state;
  const int64_t a[][4] = {{0, 100, 0, 0}};
  const int64_t b[][4] = {{10, 40, 0, 0}, {70, 10, 0, 0}};
  const int64_t c[][4] = {{40, 35, 0, 0}};
  const int64_t d[][4] = {{0, 0, 0, 0}, {45, 0, 0, 0}, {72, 0, 0, 0}};
  trel *ops[4] = {mk(0, 1, a), mk(0, 2, b), mk(0, 1, c), mk(0, 3, d)};
  rt_isect_out o;
  isect_ok(3, ops, &o, NULL);
  const int64_t want[][2 + MAXK] = {{40, 10, 0, 0, 0}, {70, 5, 0, 1, 0}};
  expect_regions(&o, 2, want);
  rt_isect_free(&o);
  isect_ok(4, ops, &o, NULL);
  const int64_t want4[][2 + MAXK] = {{45, 0, 0, 0, 0, 1}, {72, 0, 0, 1, 0, 2}};
  expect_regions(&o, 2, want4);
  rt_isect_free(&o);
  for (int j = 0; j < 4; j++) trel_free(ops[j]);
}

static void test_isect_self_overlap(void **state) {
  (void)state;
  /* A nests (a slice and its child); every overlapping combination counts. */
  const int64_t a[][4] = {{0, 100, 0, 0}, {10, 10, 0, 0}, {15, 0, 0, 0}};
  const int64_t b[][4] = {{15, 15, 0, 0}, {90, 20, 0, 0}};
  trel *ops[2] = {mk(0, 3, a), mk(0, 2, b)};
  rt_isect_out o;
  rt_isect_stats st;
  isect_ok(2, ops, &o, &st);
  const int64_t want[][2 + MAXK] = {
      {15, 15, 0, 0}, {15, 5, 1, 0}, {15, 0, 2, 0}, {90, 10, 0, 1}};
  expect_regions(&o, 4, want);
  assert_int_equal(st.part_stream, 1);   /* two comparable operands stream */
  assert_int_equal(st.part_disjoint, 0);
  rt_isect_free(&o);
  /* Both sides overlapping themselves. */
  const int64_t c[][4] = {{12, 20, 0, 0}, {14, 2, 0, 0}};
  trel *ops2[2] = {ops[0], mk(0, 2, c)};
  isect_ok(2, ops2, &o, &st);
  const int64_t want2[][2 + MAXK] = {
      {12, 20, 0, 0}, {12, 8, 1, 0}, {14, 2, 0, 1}, {14, 2, 1, 1}, {15, 0, 2, 0}, {15, 0, 2, 1}};
  expect_regions(&o, 6, want2);
  rt_isect_free(&o);
  trel_free(ops2[1]);
  trel_free(ops[0]);
  trel_free(ops[1]);
}

static void test_isect_per_nulls_and_order(void **state) {
  (void)state;
  /* A has partitions 7, NULL, 3 (first-seen); B has NULL and 7 only. The
   * operand with fewer partitions (B) sets the order: NULL, then 7. */
  const int64_t a[][4] = {{0, 10, 7, 0}, {0, 10, NUL, 0}, {0, 10, 3, 0}, {5, 1, NUL, 0}};
  const int64_t b[][4] = {{2, 2, NUL, 0}, {4, 4, 7, 0}, {100, 1, 9, 0}};
  trel *ops[2] = {mk(1, 4, a), mk(1, 3, b)};
  ops[1]->r.n = 2;   /* drop the 9 partition: B then has 2 partitions */
  rt_isect_out o;
  rt_isect_stats st;
  isect_ok(2, ops, &o, &st);
  const int64_t want[][2 + MAXK] = {{2, 2, 1, 0}, {4, 4, 0, 1}};
  expect_regions(&o, 2, want);
  assert_int_equal(st.partitions, 2);
  rt_isect_free(&o);
  /* Two PER columns: (1, NULL) agrees only with (1, NULL). */
  const int64_t c[][4] = {{0, 10, 1, NUL}, {0, 10, 1, 2}, {0, 10, NUL, NUL}};
  const int64_t d[][4] = {{1, 1, 1, NUL}, {2, 1, NUL, NUL}, {3, 1, 1, 3}};
  trel *ops2[2] = {mk(2, 3, c), mk(2, 3, d)};
  isect_ok(2, ops2, &o, NULL);
  const int64_t want2[][2 + MAXK] = {{1, 1, 0, 0}, {2, 1, 2, 1}};
  expect_regions(&o, 2, want2);
  rt_isect_free(&o);
  trel_free(ops[0]);
  trel_free(ops[1]);
  trel_free(ops2[0]);
  trel_free(ops2[1]);
}

static void test_isect_null_bounds_and_errors(void **state) {
  (void)state;
  const int64_t a[][4] = {{NUL, 10, 0, 0}, {0, NUL, 0, 0}, {0, 10, 0, 0}};
  const int64_t b[][4] = {{0, 10, 0, 0}};
  trel *ops[2] = {mk(0, 3, a), mk(0, 1, b)};
  rt_isect_out o;
  rt_isect_stats st;
  isect_ok(2, ops, &o, &st);
  const int64_t want[][2 + MAXK] = {{0, 10, 2, 0}};
  expect_regions(&o, 1, want);
  assert_int_equal(st.rows_null, 2);
  rt_isect_free(&o);

  rt_ivrel rels[2] = {ops[0]->r, ops[1]->r};
  rt_err err = {0};
  trel_set(ops[1], 0, 0, -1, 0, 0);
  assert_int_equal(rt_isect_run(2, rels, STAGE_I, &o, NULL, &err), 0);
  assert_string_equal(err.msg, "INTERVAL INTERSECTION OF: ts or dur is below zero: a row has ts 0 "
                               "and dur -1 (unfinished slices have dur = -1: add WHERE dur >= 0 "
                               "before this stage)");
  assert_int_equal(err.offset, -1);
  rt_isect_free(&o);
  err = (rt_err){0};
  trel_set(ops[1], 0, -5, 1, 0, 0);
  /* with an id column and a name the row is named by both */
  int64_t ids[1] = {42};
  rt_ivkey idk = {.type = RT_I64, .v = ids};
  rels[1].id = &idk;
  rels[1].name = "b";
  assert_int_equal(rt_isect_run(2, rels, STAGE_I, &o, NULL, &err), 0);
  assert_string_equal(err.msg, "INTERVAL INTERSECTION OF: ts or dur is below zero: the row of b "
                               "with id 42 has ts -5 and dur 1");
  rels[1].id = NULL;
  rels[1].name = NULL;
  rt_isect_free(&o);
  err = (rt_err){0};
  trel_set(ops[1], 0, INT64_MAX - 5, 10, 0, 0);
  assert_int_equal(rt_isect_run(2, rels, STAGE_I, &o, NULL, &err), 0);
  assert_string_equal(err.msg, "INTERVAL INTERSECTION OF: integer overflow");
  rt_isect_free(&o);
  /* The largest representable bounds still work (doubled in uint64). */
  err = (rt_err){0};
  trel_set(ops[1], 0, INT64_MAX - 10, 10, 0, 0);
  trel_set(ops[0], 2, INT64_MAX - 1, 0, 0, 0);
  assert_int_equal(rt_isect_run(2, rels, STAGE_I, &o, NULL, &err), 1);
  assert_int_equal(o.n, 1);
  assert_int_equal(o.ts[0], INT64_MAX - 1);
  assert_int_equal(o.dur[0], 0);
  rt_isect_free(&o);
  trel_free(ops[0]);
  trel_free(ops[1]);
}

/* Brute force: every combination of rows, one per operand, that share a
 * PER key and all meet. */
typedef struct ref_region {
  int64_t part, ts, dur;
  uint32_t rows[MAXK];
} ref_region;

static int k_cmp;
static int cmp_region(const void *pa, const void *pb) {
  const ref_region *a = pa, *b = pb;
  if (a->part != b->part) return a->part < b->part ? -1 : 1;
  if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
  for (int j = 0; j < k_cmp; j++)
    if (a->rows[j] != b->rows[j]) return a->rows[j] < b->rows[j] ? -1 : 1;
  return 0;
}

static size_t ref_isect(int k, trel **ops, ref_region **outp) {
  /* Partitions per operand, first-seen among valid rows. */
  int jmin = -1;
  size_t best = 0;
  for (int j = 0; j < k; j++) {
    size_t np = 0;
    for (uint32_t i = 0; i < ops[j]->r.n; i++) {
      if (!rvalid(ops[j], i)) continue;
      bool seen = false;
      for (uint32_t q = 0; q < i && !seen; q++) seen = rvalid(ops[j], q) && same_key(ops[j], q, ops[j], i);
      if (!seen) np++;
    }
    if (jmin < 0 || np < best) {
      jmin = j;
      best = np;
    }
  }
  /* partition position of each row of operand 0: the rank of its key
   * among the first-seen keys of operand jmin's valid rows */
  int64_t *part0 = malloc(((size_t)ops[0]->r.n + 1) * sizeof *part0);
  for (uint32_t i = 0; i < ops[0]->r.n; i++) {
    part0[i] = -1;
    int64_t pos = 0;
    for (uint32_t q = 0; q < ops[jmin]->r.n && part0[i] < 0; q++) {
      if (!rvalid(ops[jmin], q)) continue;
      bool first = true;
      for (uint32_t p = 0; p < q && first; p++)
        first = !(rvalid(ops[jmin], p) && same_key(ops[jmin], p, ops[jmin], q));
      if (!first) continue;
      if (same_key(ops[jmin], q, ops[0], i)) part0[i] = pos;
      pos++;
    }
  }
  size_t cap = 1024, n = 0;
  ref_region *out = malloc(cap * sizeof *out);
  uint32_t idx[MAXK] = {0};
  for (;;) {
    bool ok = true;
    uint64_t S = 0, E = UINT64_MAX;
    for (int j = 0; j < k && ok; j++) {
      const trel *t = ops[j];
      uint32_t i = idx[j];
      ok = rvalid(t, i) && same_key(ops[0], idx[0], t, i);
      if (!ok) break;
      uint64_t s = 2 * (uint64_t)t->ts[i];
      uint64_t e = t->dur[i] ? 2 * (uint64_t)(t->ts[i] + t->dur[i]) : s + 1;
      if (s > S) S = s;
      if (e < E) E = e;
    }
    if (ok && S < E) {
      if (n == cap) out = realloc(out, (cap *= 2) * sizeof *out);
      ref_region *r = &out[n++];
      r->ts = (int64_t)(S / 2);
      r->dur = (E - S == 1) ? 0 : (int64_t)((E - S) / 2);
      for (int j = 0; j < k; j++) r->rows[j] = idx[j];
      r->part = part0[idx[0]];
    }
    int j = 0;
    for (; j < k; j++) {
      if (++idx[j] < ops[j]->r.n) break;
      idx[j] = 0;
    }
    if (j == k) break;
    bool empty = false;
    for (int q = 0; q < k; q++) empty |= ops[q]->r.n == 0;
    if (empty) break;
  }
  free(part0);
  k_cmp = k;
  qsort(out, n, sizeof *out, cmp_region);
  *outp = out;
  return n;
}

/* out holds exactly the reference's n regions, in its order. */
static void expect_ref(int k, const rt_isect_out *o, const ref_region *ref, size_t n) {
  assert_int_equal(o->n, n);
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(o->ts[i], ref[i].ts);
    assert_int_equal(o->dur[i], ref[i].dur);
    for (int j = 0; j < k; j++) assert_int_equal(o->rows[j][i], ref[i].rows[j]);
  }
}

/* Stats of the streamed runs of check_isect_against_ref, summed. */
static rt_isect_stats g_streamed;

static void add_stats(rt_isect_stats *t, const rt_isect_stats *s) {
  t->part_disjoint += s->part_disjoint;
  t->part_narrow += s->part_narrow;
  t->part_stream += s->part_stream;
  t->part_capped += s->part_capped;
  t->step_sweep += s->step_sweep;
  t->stream_events += s->stream_events;
  t->stream_skips += s->stream_skips;
  t->regions += s->regions;
}

/* rt_isect_begin / next with narrowing capped at `cap` regions, served
 * in slices of 1 + rnd(max) regions, against the reference's n regions;
 * stats summed into *total. */
static void check_streamed(int k, trel **ops, size_t cap, uint32_t max, const ref_region *ref,
                           size_t n, rt_isect_stats *total) {
  rt_ivrel rels[MAXK];
  for (int j = 0; j < k; j++) rels[j] = ops[j]->r;
  rt_err err = {0};
  rt_isect_stats st;
  rt_isect *it = rt_isect_begin(k, rels, STAGE_I, &st, &err);
  if (!it) fail_msg("unexpected error: %s", err.msg);
  rt_isect_set_narrow_cap(it, cap);
  rt_isect_out o = {0};
  size_t at = 0;
  int64_t got;
  while ((got = rt_isect_next(it, &o, 1 + rnd(max))) > 0) {
    for (int64_t i = 0; i < got; i++, at++) {
      if (at >= n) fail_msg("more than the %zu regions of the reference", n);
      const ref_region *r = &ref[at];
      bool same = o.ts[i] == r->ts && o.dur[i] == r->dur;
      for (int j = 0; j < k; j++) same = same && o.rows[j][i] == r->rows[j];
      if (!same)
        fail_msg("region %zu (cap %zu): [%lld +%lld rows %u %u] want [%lld +%lld rows %u %u]", at,
                 cap, (long long)o.ts[i], (long long)o.dur[i], o.rows[0][i], o.rows[1][i],
                 (long long)r->ts, (long long)r->dur, r->rows[0], r->rows[1]);
    }
    o.n = 0;
  }
  assert_int_equal(got, 0);
  assert_int_equal(at, n);
  assert_int_equal(st.regions, n);
  rt_isect_end(it);
  rt_isect_free(&o);
  add_stats(total, &st);
}

/* rt_isect_run against the reference, then the same served in slices
 * with narrowing capped at 0 regions, so that every partition that
 * narrowing would serve streams (the streaming sweep's stats go to
 * g_streamed). */
static void check_isect_against_ref(int k, trel **ops, rt_isect_stats *st) {
  rt_isect_out o;
  isect_ok(k, ops, &o, st);
  ref_region *ref;
  size_t n = ref_isect(k, ops, &ref);
  expect_ref(k, &o, ref, n);
  check_streamed(k, ops, 0, 7, ref, n, &g_streamed);
  free(ref);
  rt_isect_free(&o);
}

static trel *random_rel(uint32_t n, int nkeys, uint32_t tmax, uint32_t dmax, uint32_t nkeyvals,
                        bool disjoint) {
  trel *t = trel_new(n, nkeys);
  int64_t at = rnd(5);
  for (uint32_t i = 0; i < n; i++) {
    int64_t ts, dur;
    if (disjoint) {
      ts = at + rnd(4);
      dur = rnd(4) == 0 ? 0 : 1 + rnd(dmax);
      at = ts + dur + (dur == 0);
    } else {
      ts = rnd(tmax);
      dur = rnd(4) == 0 ? 0 : 1 + rnd(dmax);
    }
    int64_t k0 = rnd(8) == 0 ? NUL : (int64_t)rnd(nkeyvals);
    int64_t k1 = rnd(8) == 0 ? NUL : (int64_t)rnd(2);
    if (rnd(20) == 0) ts = NUL;
    if (rnd(20) == 0) dur = NUL;
    trel_set(t, i, ts, dur, k0, k1);
  }
  return t;
}

static void test_isect_random_small(void **state) {
  (void)state;
  rng_state = 42;
  rt_isect_stats total = {0};
  for (int iter = 0; iter < 3000; iter++) {
    int k = 2 + (int)rnd(3);
    if (k > 2 && rnd(2)) k = 2;
    int nkeys = (int)rnd(3);
    trel *ops[MAXK];
    uint32_t maxn = k == 4 ? 6 : 10;
    for (int j = 0; j < k; j++)
      ops[j] = random_rel(rnd(maxn + 1), nkeys, 40, 1 + rnd(12), 3, rnd(3) == 0);
    rt_isect_stats st;
    check_isect_against_ref(k, ops, &st);
    add_stats(&total, &st);
    for (int j = 0; j < k; j++) trel_free(ops[j]);
  }
  assert_true(total.part_disjoint > 100);
  assert_true(total.part_narrow > 100);
  assert_true(total.part_stream > 100);   /* two comparable operands */
  assert_true(total.step_sweep > 100);
  assert_true(g_streamed.part_capped > 50);   /* narrowing gave up at cap 0 */
  assert_true(g_streamed.stream_skips > 100);
}

/* Few candidates against a big operand: binary search (disjoint) and the
 * max-end tree (overlapping), compared with the reference. */
static void test_isect_random_paths(void **state) {
  (void)state;
  rng_state = 7;
  uint64_t bs = 0, tree = 0;
  rt_isect_stats before = g_streamed;
  for (int iter = 0; iter < 300; iter++) {
    int k = 2 + (int)rnd(2);
    trel *ops[MAXK];
    ops[0] = random_rel(2 + rnd(3), 0, 400, 60, 1, false);   /* small, overlapping */
    for (int j = 1; j < k; j++) ops[j] = random_rel(100 + rnd(200), 0, 1000, 10, 1, rnd(2) == 0);
    rt_isect_stats st;
    check_isect_against_ref(k, ops, &st);
    bs += st.step_bsearch;
    tree += st.step_tree;
    for (int j = 0; j < k; j++) trel_free(ops[j]);
  }
  assert_true(bs > 20);
  assert_true(tree > 20);
  /* streamed, the small operand's gaps are jumped over in the big ones */
  assert_true(g_streamed.stream_skips - before.stream_skips > 300);
}

/* Long runs of regions sharing a start (many rows starting at one instant
 * on both sides, rows shuffled against start order) must come out by
 * rows: runs longer than the short-run insertion sort, from the sweep
 * (sorted in place) and from binary search / tree steps (radix sorted
 * through a permutation), with two and three operands. Starts spread over
 * most of the int64 range make the radix sort take several passes. */
static void test_isect_long_runs_and_wide_starts(void **state) {
  (void)state;
  rng_state = 1234;
  uint64_t sweep = 0, other = 0;
  for (int iter = 0; iter < 60; iter++) {
    int k = 2 + (int)rnd(2);
    bool wide = iter % 2 == 1, few = iter % 3 == 0;
    trel *ops[MAXK];
    for (int j = 0; j < k; j++) {
      uint32_t n = few && j == 0 ? 3 + rnd(3) : 60 + rnd(80);
      ops[j] = trel_new(n, 0);
      for (uint32_t i = 0; i < n; i++) {
        int64_t ts, dur;
        if (wide) {
          /* a few shared starts, far apart, plus scattered ones */
          int64_t base = (int64_t)rnd(4) << 58 | (int64_t)rnd(1u << 30) << 20;
          ts = rnd(3) ? (int64_t)(rnd(3) + 1) << 58 : base;
          dur = rnd(5) == 0 ? 0 : 1 + (int64_t)rnd(1u << 30) * (1 + (int64_t)rnd(1u << 20));
        } else {
          ts = rnd(3) ? 100 : (int64_t)rnd(400);
          dur = rnd(5) == 0 ? 0 : 1 + (int64_t)rnd(300);
        }
        trel_set(ops[j], i, ts, dur, 0, 0);
      }
    }
    rt_isect_stats st;
    check_isect_against_ref(k, ops, &st);
    sweep += st.step_sweep;
    other += st.step_bsearch + st.step_tree;
    for (int j = 0; j < k; j++) trel_free(ops[j]);
  }
  assert_true(sweep > 10);
  assert_true(other > 5);
}

/* Many overlapping intervals, each partition holding several batches of
 * regions (RT_BATCH = 8,192), with long runs of equal starts and points:
 * two operands stream directly; three and four give up narrowing at the
 * cap (RT_ISECT_NARROW_CAP regions) and stream. Each is compared with the
 * reference whole, served in batch-sized slices with the default cap and
 * in odd slices with cap 0 (pausing inside one start's regions). */
static void test_isect_many_overlaps_in_batches(void **state) {
  (void)state;
  rng_state = 2024;
  static const struct {
    int k;
    uint32_t n;
    int nkeys;
  } cases[] = {{2, 400, 1}, {2, 300, 0}, {3, 80, 0}, {4, 32, 0}};
  rt_isect_stats streamed = {0};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    int k = cases[c].k;
    trel *ops[MAXK];
    for (int j = 0; j < k; j++) {
      ops[j] = trel_new(cases[c].n, cases[c].nkeys);
      for (uint32_t i = 0; i < cases[c].n; i++) {
        int64_t ts = rnd(4) == 0 ? 50 : (int64_t)rnd(120);
        int64_t dur = rnd(6) == 0 ? 0 : 40 + (int64_t)rnd(400);
        trel_set(ops[j], i, ts, dur, cases[c].nkeys ? (int64_t)rnd(2) : 0, 0);
      }
    }
    rt_isect_stats st;
    rt_isect_out o;
    isect_ok(k, ops, &o, &st);
    ref_region *ref;
    size_t n = ref_isect(k, ops, &ref);
    expect_ref(k, &o, ref, n);
    /* every partition yields more than one batch */
    size_t run = 0;
    for (size_t i = 0; i <= n; i++) {
      if (i < n && (i == 0 || ref[i].part == ref[i - 1].part)) {
        run++;
        continue;
      }
      if (run <= RT_BATCH) fail_msg("case %zu: a partition of %zu regions", c, run);
      run = 1;
    }
    assert_true(st.partitions >= 1);
    assert_int_equal(st.part_stream, st.partitions);
    assert_int_equal(st.part_capped, k > 2 ? st.partitions : 0);
    check_streamed(k, ops, RT_ISECT_NARROW_CAP, RT_BATCH, ref, n, &streamed);
    check_streamed(k, ops, 0, 1000, ref, n, &streamed);
    print_message("[ info ] %d operands of %u rows: %zu regions\n", k, cases[c].n, n);
    free(ref);
    rt_isect_free(&o);
    for (int j = 0; j < k; j++) trel_free(ops[j]);
  }
  assert_true(streamed.stream_events > 100);
}

/* rt_iv_sort orders (start, end, row) like a comparison sort, above the
 * size where it switches to the radix sort: ties of starts and ends,
 * starts over a narrow and a wide range, with and without ends. */
static int cmp_sitem(const void *pa, const void *pb) {
  const uint64_t *a = pa, *b = pb;
  for (int q = 0; q < 3; q++)
    if (a[q] != b[q]) return a[q] < b[q] ? -1 : 1;
  return 0;
}

static void test_iv_sort_matches_qsort(void **state) {
  (void)state;
  rng_state = 555;
  for (int iter = 0; iter < 24; iter++) {
    size_t n = iter < 4 ? rnd(1100) : 1024 + rnd(20000);
    bool use_e = iter % 2 == 0, wide = iter % 3 == 0;
    uint64_t *s = malloc((n + 1) * 8), *e = malloc((n + 1) * 8), *ref = malloc((n + 1) * 24);
    uint32_t *row = malloc((n + 1) * 4);
    for (size_t i = 0; i < n; i++) {
      s[i] = wide ? (uint64_t)rnd(50) << 50 | rnd(1u << 31) * (uint64_t)rnd(4) : rnd(500);
      e[i] = s[i] + rnd(8);
      row[i] = (uint32_t)(n - i) ^ 5;   /* rows not in input order */
      ref[3 * i] = s[i];
      ref[3 * i + 1] = use_e ? e[i] : 0;
      ref[3 * i + 2] = row[i];
    }
    if (!use_e)
      for (size_t i = 0; i < n; i++) e[i] = 7;   /* left alone */
    qsort(ref, n, 24, cmp_sitem);
    assert_true(rt_iv_sort(s, use_e ? e : NULL, row, n));
    for (size_t i = 0; i < n; i++) {
      assert_int_equal(s[i], ref[3 * i]);
      assert_int_equal(use_e ? e[i] : 0, ref[3 * i + 1]);
      assert_int_equal(row[i], ref[3 * i + 2]);
      if (!use_e) assert_int_equal(e[i], 7);
    }
    free(s), free(e), free(ref), free(row);
  }
}

/* rt_isect_next served a few regions at a time gives rt_isect_run's
 * regions in its order, whatever the slice size, on random relations
 * (both paths); and a PER key read in place from uint32 / int32 storage
 * or as the row index gives the same regions as its int64 copy. */
static void test_isect_streamed_and_narrow_keys(void **state) {
  (void)state;
  rng_state = 99;
  uint64_t sliced = 0;
  for (int iter = 0; iter < 400; iter++) {
    int k = 2 + (int)rnd(2);
    trel *ops[MAXK];
    rt_ivrel rv[MAXK];
    for (int j = 0; j < k; j++) {
      ops[j] = random_rel(rnd(40), 1, 200, 1 + rnd(30), 4, rnd(2) == 0);
      rv[j] = ops[j]->r;
    }
    rt_err e1 = {0}, e2 = {0};
    rt_isect_out whole, part = {0};
    int ok = rt_isect_run(k, rv, STAGE_I, &whole, NULL, &e1);
    rt_isect_stats st;
    rt_isect *it = rt_isect_begin(k, rv, STAGE_I, &st, &e2);
    assert_int_equal(ok, it != NULL);
    if (it) {
      size_t max = 1 + rnd(5), at = 0;
      int64_t got;
      while ((got = rt_isect_next(it, &part, max)) > 0) {
        assert_true((size_t)got <= max);
        for (int64_t i = 0; i < got; i++, at++) {
          assert_true(at < whole.n);
          assert_int_equal(part.ts[i], whole.ts[at]);
          assert_int_equal(part.dur[i], whole.dur[at]);
          for (int j = 0; j < k; j++) assert_int_equal(part.rows[j][i], whole.rows[j][at]);
        }
        part.n = 0;
        sliced++;
      }
      assert_int_equal(got, 0);
      assert_int_equal(at, whole.n);
      assert_int_equal(st.regions, whole.n);
      rt_isect_end(it);
    }
    rt_isect_free(&whole);
    rt_isect_free(&part);
    for (int j = 0; j < k; j++) trel_free(ops[j]);
  }
  assert_true(sliced > 400);

  /* narrow storage: keys 0..3 (and NULLs) as uint32, int32, row index */
  enum { N = 64 };
  trel *a = trel_new(N, 1), *b = trel_new(N, 1);
  uint32_t ua[N], ub[N];
  int32_t ia[N], ib[N];
  for (uint32_t i = 0; i < N; i++) {
    int64_t ka = i % 4 == 3 ? NUL : (int64_t)(i % 4), kb = i % 5 == 4 ? NUL : (int64_t)(i % 3);
    trel_set(a, i, (int64_t)(i * 7 % 50), (int64_t)(i % 6), ka, NUL);
    trel_set(b, i, (int64_t)(i * 3 % 60), (int64_t)(1 + i % 9), kb, NUL);
    ua[i] = ka == NUL ? 0 : (uint32_t)ka, ub[i] = kb == NUL ? 0 : (uint32_t)kb;
    ia[i] = (int32_t)ua[i], ib[i] = (int32_t)ub[i];
  }
  rt_ivrel wide[2] = {a->r, b->r};
  rt_isect_out want;
  rt_err err = {0};
  assert_int_equal(rt_isect_run(2, wide, STAGE_I, &want, NULL, &err), 1);
  assert_true(want.n > 10);
  for (int form = 0; form < 2; form++) {
    rt_ivkey ka = {.type = RT_I64, .valid = a->kv[0]}, kb = {.type = RT_I64, .valid = b->kv[0]};
    if (form == 0) ka.u32 = ua, kb.u32 = ub;
    else ka.i32 = ia, kb.i32 = ib;
    rt_ivrel nr[2] = {a->r, b->r};
    nr[0].keys = &ka;
    nr[1].keys = &kb;
    rt_isect_out got;
    assert_int_equal(rt_isect_run(2, nr, STAGE_I, &got, NULL, &err), 1);
    assert_int_equal(got.n, want.n);
    for (size_t i = 0; i < got.n; i++) {
      assert_int_equal(got.ts[i], want.ts[i]);
      assert_int_equal(got.rows[0][i], want.rows[0][i]);
      assert_int_equal(got.rows[1][i], want.rows[1][i]);
    }
    rt_isect_free(&got);
  }
  rt_isect_free(&want);
  /* the row index as key: each row its own lane, so only equal row
   * numbers meet (rows 0..N-1 of both, key = i) */
  for (uint32_t i = 0; i < N; i++) a->k[0][i] = b->k[0][i] = i, rt_bit_set(a->kv[0], i), rt_bit_set(b->kv[0], i);
  rt_ivrel byv[2] = {a->r, b->r};
  assert_int_equal(rt_isect_run(2, byv, STAGE_I, &want, NULL, &err), 1);
  rt_ivkey ra = {.type = RT_I64, .rowid = true}, rb = {.type = RT_I64, .rowid = true};
  rt_ivrel byid[2] = {a->r, b->r};
  byid[0].keys = &ra;
  byid[1].keys = &rb;
  rt_isect_out got;
  assert_int_equal(rt_isect_run(2, byid, STAGE_I, &got, NULL, &err), 1);
  assert_int_equal(got.n, want.n);
  for (size_t i = 0; i < got.n; i++) {
    assert_int_equal(got.ts[i], want.ts[i]);
    assert_int_equal(got.rows[0][i], got.rows[1][i]);
    assert_int_equal(got.rows[0][i], want.rows[0][i]);
  }
  rt_isect_free(&got);
  rt_isect_free(&want);
  trel_free(a);
  trel_free(b);
}

/* ==== INTERVAL FLATTEN ============================================================ */

typedef struct fseg {
  int64_t ts, dur;
  uint32_t rep;
  int64_t v[4];            /* NUL = NULL */
} fseg;

static void flat_expect(const rt_flat_out *o, size_t n, const fseg *want) {
  assert_int_equal(o->n, n);
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(o->ts[i], want[i].ts);
    assert_int_equal(o->dur[i], want[i].dur);
    assert_int_equal(o->rep[i], want[i].rep);
    for (int a = 0; a < o->naggs; a++) {
      bool valid = rt_bit(o->valid[a], (uint32_t)i);
      if (want[i].v[a] == NUL) {
        assert_false(valid);
        continue;
      }
      assert_true(valid);
      if (o->type[a] == RT_F64) assert_true(((double *)o->val[a])[i] == (double)want[i].v[a]);
      else assert_int_equal(((int64_t *)o->val[a])[i], want[i].v[a]);
    }
  }
}

static void test_flatten_points_and_segments(void **state) {
  (void)state;
  /* The example of flatten.c: [0,10) and points 0, 5, 10 (point 5 splits
   * [0,10)); plus [10,15) touching (not merged) and a gap before [20,25). */
  const int64_t r[][4] = {{0, 10, 0, 0}, {5, 0, 0, 0}, {0, 0, 0, 0}, {10, 0, 0, 0},
                          {10, 5, 0, 0}, {20, 5, 0, 0}, {5, 0, 0, 0}};
  trel *t = mk(0, 7, r);
  rt_flat_agg aggs[1] = {{.kind = RT_AGG_COUNT_STAR, .in = RT_I64, .v = NULL, .valid = NULL}};
  rt_flat_out o;
  rt_flat_stats st;
  rt_err err = {0};
  assert_int_equal(rt_flatten_run(&t->r, 1, aggs, NULL, "INTERVAL FLATTEN", &o, &st, &err), 1);
  const fseg want[] = {{0, 0, 0, {2}},  {0, 5, 0, {1}},  {5, 0, 0, {3}}, {5, 5, 0, {1}},
                       {10, 0, 0, {2}}, {10, 5, 0, {1}}, {20, 5, 0, {1}}};
  flat_expect(&o, 7, want);
  assert_false(st.presorted);
  assert_int_equal(st.point_segments, 3);
  rt_flatten_free(&o);
  trel_free(t);
}

static void test_flatten_aggregates(void **state) {
  (void)state;
  /* Group 1: [0,10) v=5, [5,15) v=NULL, [5,8) v=-2; group NULL: [0,4) v=7. */
  const int64_t r[][4] = {{0, 10, 1, 0}, {0, 4, NUL, 0}, {5, 10, 1, 0}, {5, 3, 1, 0}};
  trel *t = mk(1, 4, r);
  int64_t v[4] = {5, 7, 0, -2};
  double f[4] = {0.5, 7, 0, -2};
  uint64_t vv[1] = {0xB};   /* row 2 NULL */
  rt_flat_agg aggs[4] = {{.kind = RT_AGG_COUNT, .in = RT_I64, .v = v, .valid = vv},
                         {.kind = RT_AGG_SUM, .in = RT_I64, .v = v, .valid = vv},
                         {.kind = RT_AGG_MIN, .in = RT_I64, .v = v, .valid = vv},
                         {.kind = RT_AGG_MAX, .in = RT_F64, .v = f, .valid = vv}};
  rt_flat_out o;
  rt_flat_stats st;
  rt_err err = {0};
  assert_int_equal(rt_flatten_run(&t->r, 4, aggs, NULL, "INTERVAL FLATTEN", &o, &st, &err), 1);
  const fseg want[] = {
      {0, 5, 0, {1, 5, 5, 0}},      /* f max 0.5 checked below */
      {5, 3, 0, {2, 3, -2, 0}},
      {8, 2, 0, {1, 5, 5, 0}},
      {10, 5, 0, {0, NUL, NUL, NUL}},
      {0, 4, 1, {1, 7, 7, 7}},
  };
  assert_int_equal(o.n, 5);
  for (size_t i = 0; i < 5; i++) {
    assert_int_equal(o.ts[i], want[i].ts);
    assert_int_equal(o.dur[i], want[i].dur);
    assert_int_equal(o.rep[i], want[i].rep);
    for (int a = 0; a < 3; a++) {
      if (want[i].v[a] == NUL) {
        assert_false(rt_bit(o.valid[a], (uint32_t)i));
      } else {
        assert_true(rt_bit(o.valid[a], (uint32_t)i));
        assert_int_equal(((int64_t *)o.val[a])[i], want[i].v[a]);
      }
    }
  }
  assert_int_equal(o.type[3], RT_F64);
  assert_true(((double *)o.val[3])[0] == 0.5);
  assert_true(((double *)o.val[3])[1] == 0.5);
  assert_true(((double *)o.val[3])[2] == 0.5);
  assert_false(rt_bit(o.valid[3], 3));
  assert_true(((double *)o.val[3])[4] == 7);
  rt_flatten_free(&o);
  trel_free(t);
}

static void test_flatten_presorted_and_errors(void **state) {
  (void)state;
  const int64_t r[][4] = {{0, 10, 1, 0}, {NUL, 3, 1, 0}, {2, 3, 1, 0}, {0, 5, 2, 0}};
  trel *t = mk(1, 4, r);
  int64_t v[4] = {INT64_MAX, 0, INT64_MAX, 1};
  rt_flat_agg aggs[2] = {{.kind = RT_AGG_COUNT_STAR, .in = RT_I64, .v = NULL, .valid = NULL}, {.kind = RT_AGG_SUM, .in = RT_I64, .v = v, .valid = NULL}};
  rt_flat_out o;
  rt_flat_stats st;
  rt_err err = {0};
  /* SUM is fine where one row covers; overflow where two do. */
  assert_int_equal(rt_flatten_run(&t->r, 2, aggs, NULL, "INTERVAL FLATTEN", &o, &st, &err), 0);
  assert_string_equal(err.msg, "INTERVAL FLATTEN: integer overflow");
  assert_true(st.presorted);
  rt_flatten_free(&o);
  v[2] = -INT64_MAX;   /* 128-bit running sum: no false overflow */
  err = (rt_err){0};
  assert_int_equal(rt_flatten_run(&t->r, 2, aggs, NULL, "INTERVAL FLATTEN", &o, &st, &err), 1);
  const fseg want[] = {{0, 2, 0, {1, INT64_MAX}}, {2, 3, 0, {2, 0}}, {5, 5, 0, {1, INT64_MAX}},
                       {0, 5, 3, {1, 1}}};
  flat_expect(&o, 4, want);
  assert_int_equal(st.rows_null, 1);
  rt_flatten_free(&o);
  trel_set(t, 3, 0, -5, 2, 0);
  err = (rt_err){0};
  assert_int_equal(rt_flatten_run(&t->r, 2, aggs, NULL, "INTERVAL FLATTEN", &o, &st, &err), 0);
  assert_string_equal(err.msg, "INTERVAL FLATTEN: ts or dur is below zero: a row has ts 0 and dur "
                               "-5 (unfinished slices have dur = -1: add WHERE dur >= 0 before "
                               "this stage)");
  rt_flatten_free(&o);
  trel_free(t);
}

/* Brute force: per group (first-seen over all rows), split at every
 * positive bound and every point instant; point segments at each point
 * instant. */
typedef struct rseg {
  int64_t grp, ts, dur, pt;
  uint32_t rep;
  int64_t cnt, cntv, sum, mn, mx;
  bool hasv;
  /* the column with infinities: finite quarters summed as integers,
   * infinities counted; gmx the largest finite value ×4 (INT64_MIN when
   * only -inf) */
  int64_t gsum, pinf, ninf, gmx;
} rseg;

static int cmp_rseg(const void *pa, const void *pb) {
  const rseg *a = pa, *b = pb;
  if (a->grp != b->grp) return a->grp < b->grp ? -1 : 1;
  if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
  return (int)b->pt - (int)a->pt;   /* point first */
}

static void ref_agg(rseg *s, const trel *t, const int64_t *v, const uint64_t *vv, const double *g,
                    uint32_t i) {
  (void)t;
  s->cnt++;
  if (!rt_bit(vv, i)) return;
  if (isinf(g[i])) {
    if (g[i] > 0) s->pinf++;
    else s->ninf++;
    if (!s->hasv) s->gmx = INT64_MIN;
  } else {
    s->gsum += v[i];
    if (!s->hasv || s->gmx == INT64_MIN || v[i] > s->gmx) s->gmx = v[i];
  }
  s->cntv++;
  s->sum += v[i];
  if (!s->hasv || v[i] < s->mn) s->mn = v[i];
  if (!s->hasv || v[i] > s->mx) s->mx = v[i];
  s->hasv = true;
}

static size_t ref_flatten(const trel *t, const int64_t *v, const uint64_t *vv, const double *gv,
                          rseg **outp) {
  uint32_t n = t->r.n;
  size_t cap = 64, m = 0;
  rseg *out = malloc(cap * sizeof *out);
  int64_t grp = 0;
  for (uint32_t g = 0; g < n; g++) {
    bool first = true;
    for (uint32_t p = 0; p < g && first; p++) first = !same_key(t, p, t, g);
    if (!first) continue;
    uint32_t rep = UINT32_MAX;
    int64_t bounds[256];
    int nb = 0;
    for (uint32_t i = 0; i < n; i++) {
      if (!rvalid(t, i) || !same_key(t, i, t, g)) continue;
      if (rep == UINT32_MAX) rep = i;
      bounds[nb++] = t->ts[i];
      if (t->dur[i] > 0) bounds[nb++] = t->ts[i] + t->dur[i];
    }
    for (int a = 0; a < nb; a++)
      for (int b = a + 1; b < nb; b++)
        if (bounds[b] < bounds[a]) {
          int64_t x = bounds[a]; bounds[a] = bounds[b]; bounds[b] = x;
        }
    for (int a = 0; a + 1 < nb; a++) {
      if (bounds[a] == bounds[a + 1]) continue;
      rseg s = {.grp = grp, .ts = bounds[a], .dur = bounds[a + 1] - bounds[a], .rep = rep};
      for (uint32_t i = 0; i < n; i++)
        if (rvalid(t, i) && same_key(t, i, t, g) && t->dur[i] > 0 && t->ts[i] <= bounds[a] &&
            t->ts[i] + t->dur[i] >= bounds[a + 1])
          ref_agg(&s, t, v, vv, gv, i);
      if (s.cnt == 0) continue;
      if (m == cap) out = realloc(out, (cap *= 2) * sizeof *out);
      out[m++] = s;
    }
    for (uint32_t p = 0; p < n; p++) {
      if (!rvalid(t, p) || !same_key(t, p, t, g) || t->dur[p] != 0) continue;
      bool firstpt = true;
      for (uint32_t q = 0; q < p && firstpt; q++)
        firstpt = !(rvalid(t, q) && same_key(t, q, t, g) && t->dur[q] == 0 && t->ts[q] == t->ts[p]);
      if (!firstpt) continue;
      int64_t at = t->ts[p];
      rseg s = {.grp = grp, .ts = at, .dur = 0, .pt = 1, .rep = rep};
      for (uint32_t i = 0; i < n; i++) {
        if (!rvalid(t, i) || !same_key(t, i, t, g)) continue;
        bool cov = t->dur[i] == 0 ? t->ts[i] == at : (t->ts[i] <= at && at < t->ts[i] + t->dur[i]);
        if (cov) ref_agg(&s, t, v, vv, gv, i);
      }
      if (m == cap) out = realloc(out, (cap *= 2) * sizeof *out);
      out[m++] = s;
    }
    grp++;
  }
  qsort(out, m, sizeof *out, cmp_rseg);
  *outp = out;
  return m;
}

static void test_flatten_random(void **state) {
  (void)state;
  rng_state = 99;
  int presorted = 0;
  for (int iter = 0; iter < 3000; iter++) {
    uint32_t n = rnd(16);
    trel *t = random_rel(n, (int)rnd(3), 30, 1 + rnd(10), 3, rnd(4) == 0);
    int64_t *v = calloc(n + 1, 8);
    double *f = calloc(n + 1, 8), *g = calloc(n + 1, 8);
    uint64_t vv[1] = {0};
    for (uint32_t i = 0; i < n; i++) {
      v[i] = (int64_t)rnd(21) - 10;
      f[i] = (double)v[i] / 4;
      /* g: f with some infinities (SUM of +inf and -inf is NaN: NULL) */
      g[i] = rnd(6) ? f[i] : rnd(2) ? INFINITY : -INFINITY;
      if (rnd(5)) vv[0] |= 1ull << i;
    }
    rt_flat_agg aggs[10] = {{.kind = RT_AGG_COUNT_STAR, .in = RT_I64, .v = NULL, .valid = NULL}, {.kind = RT_AGG_COUNT, .in = RT_I64, .v = v, .valid = vv},
                            {.kind = RT_AGG_SUM, .in = RT_I64, .v = v, .valid = vv},            {.kind = RT_AGG_MIN, .in = RT_I64, .v = v, .valid = vv},
                            {.kind = RT_AGG_MAX, .in = RT_I64, .v = v, .valid = vv},            {.kind = RT_AGG_SUM, .in = RT_F64, .v = f, .valid = vv},
                            {.kind = RT_AGG_MIN, .in = RT_F64, .v = f, .valid = vv},            {.kind = RT_AGG_SUM, .in = RT_F64, .v = g, .valid = vv},
                            {.kind = RT_AGG_AVG, .in = RT_F64, .v = g, .valid = vv},            {.kind = RT_AGG_MAX, .in = RT_F64, .v = g, .valid = vv}};
    rt_flat_out o;
    rt_flat_stats st;
    rt_err err = {0};
    assert_int_equal(rt_flatten_run(&t->r, 10, aggs, NULL, "INTERVAL FLATTEN", &o, &st, &err), 1);
    presorted += st.presorted;
    rseg *ref;
    size_t m = ref_flatten(t, v, vv, g, &ref);
    assert_int_equal(o.n, m);
    for (size_t i = 0; i < m; i++) {
      assert_int_equal(o.ts[i], ref[i].ts);
      assert_int_equal(o.dur[i], ref[i].dur);
      assert_int_equal(o.rep[i], ref[i].rep);
      assert_int_equal(((int64_t *)o.val[0])[i], ref[i].cnt);
      assert_int_equal(((int64_t *)o.val[1])[i], ref[i].cntv);
      for (int a = 2; a < 7; a++) assert_int_equal(rt_bit(o.valid[a], (uint32_t)i), ref[i].hasv);
      if (!ref[i].hasv) continue;
      assert_int_equal(((int64_t *)o.val[2])[i], ref[i].sum);
      assert_int_equal(((int64_t *)o.val[3])[i], ref[i].mn);
      assert_int_equal(((int64_t *)o.val[4])[i], ref[i].mx);
      assert_true(((double *)o.val[5])[i] == (double)ref[i].sum / 4);   /* quarters: exact */
      assert_true(((double *)o.val[6])[i] == (double)ref[i].mn / 4);
      /* g: +inf with -inf is NULL; one kind of infinity wins; else exact */
      bool nan = ref[i].pinf && ref[i].ninf;
      assert_int_equal(rt_bit(o.valid[7], (uint32_t)i), !nan);
      assert_int_equal(rt_bit(o.valid[8], (uint32_t)i), !nan);
      assert_true(rt_bit(o.valid[9], (uint32_t)i));
      double gs = ref[i].pinf ? INFINITY : ref[i].ninf ? -INFINITY : (double)ref[i].gsum / 4;
      double gmx = ref[i].pinf ? INFINITY : ref[i].gmx == INT64_MIN ? -INFINITY : (double)ref[i].gmx / 4;
      if (!nan) {
        assert_true(((double *)o.val[7])[i] == gs);
        assert_true(((double *)o.val[8])[i] == gs / (double)ref[i].cntv);
      }
      assert_true(((double *)o.val[9])[i] == gmx);
    }
    free(ref);
    rt_flatten_free(&o);
    free(v);
    free(f);
    free(g);
    trel_free(t);
  }
  assert_true(presorted > 100);
}

/* ==== INTERVAL JOIN ============================================================== */

static const rt_ijrel all_rels[5] = {RT_IJ_OVERLAPPING, RT_IJ_COVERING_BEGIN, RT_IJ_COVERING_END,
                                     RT_IJ_COVERING_BOUNDS, RT_IJ_WITHIN};

/* Runs one relation; returns the matched operand rows of input row 0 as a
 * bit mask. */
static unsigned join_mask(const trel *in, const trel *op, rt_ijrel rel) {
  rt_ijoin j;
  rt_err err = {0};
  assert_int_equal(rt_ijoin_build(&j, &op->r, rel, "INTERVAL JOIN", &err), 1);
  rt_ijpairs p = {0};
  assert_int_equal(rt_ijoin_probe(&j, &in->r, false, &p, &err), 1);
  unsigned m = 0;
  uint32_t last = 0;
  for (size_t i = 0; i < p.n; i++) {
    assert_int_equal(p.in[i], 0);
    /* start order: operand rows below are listed by start */
    if (i) assert_true(op->ts[p.op[i]] > op->ts[last] ||
                       (op->ts[p.op[i]] == op->ts[last] && p.op[i] > last));
    last = p.op[i];
    m |= 1u << p.op[i];
  }
  rt_ijpairs_free(&p);
  rt_ijoin_free(&j);
  return m;
}

static void test_join_relations_intervals(void **state) {
  (void)state;
  /* Input [10,20). Operand rows: */
  const int64_t op_rows[][4] = {
      {0, 10, 0, 0},    /* 0: ends at 10: touches only */
      {0, 11, 0, 0},    /* 1: holds 10 */
      {10, 10, 0, 0},   /* 2: exactly the input */
      {12, 3, 0, 0},    /* 3: inside */
      {19, 5, 0, 0},    /* 4: holds 19 (last instant) */
      {20, 5, 0, 0},    /* 5: starts at the end: touches only */
      {5, -1, 0, 0},    /* 6: never ends, from 5 */
      {15, -1, 0, 0},   /* 7: never ends, from 15 */
      {10, 0, 0, 0},    /* 8: point at s */
      {19, 0, 0, 0},    /* 9: point at e - 1 */
      {20, 0, 0, 0},    /* 10: point at e */
      {5, 30, 0, 0},    /* 11: covers */
  };
  trel *op = mk(0, 12, op_rows);
  const int64_t in_rows[][4] = {{10, 10, 0, 0}};
  trel *in = mk(0, 1, in_rows);
  assert_int_equal(join_mask(in, op, RT_IJ_OVERLAPPING),
                   (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 6) | (1u << 7) |
                       (1u << 8) | (1u << 9) | (1u << 11));
  assert_int_equal(join_mask(in, op, RT_IJ_COVERING_BEGIN),
                   (1u << 1) | (1u << 2) | (1u << 6) | (1u << 8) | (1u << 11));
  assert_int_equal(join_mask(in, op, RT_IJ_COVERING_END),
                   (1u << 2) | (1u << 4) | (1u << 6) | (1u << 7) | (1u << 11));
  assert_int_equal(join_mask(in, op, RT_IJ_COVERING_BOUNDS), (1u << 2) | (1u << 6) | (1u << 11));
  assert_int_equal(join_mask(in, op, RT_IJ_WITHIN),
                   (1u << 2) | (1u << 3) | (1u << 8) | (1u << 9));
  /* A never-ending input [10, ∞). */
  trel_set(in, 0, 10, -1, 0, 0);
  assert_int_equal(join_mask(in, op, RT_IJ_OVERLAPPING),
                   (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5) | (1u << 6) |
                       (1u << 7) | (1u << 8) | (1u << 9) | (1u << 10) | (1u << 11));
  assert_int_equal(join_mask(in, op, RT_IJ_COVERING_END), (1u << 6) | (1u << 7));
  assert_int_equal(join_mask(in, op, RT_IJ_COVERING_BOUNDS), 1u << 6);
  assert_int_equal(join_mask(in, op, RT_IJ_WITHIN),
                   (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5) | (1u << 7) | (1u << 8) |
                       (1u << 9) | (1u << 10));
  trel_free(op);
  trel_free(in);
}

static void test_join_relations_points(void **state) {
  (void)state;
  const int64_t op_rows[][4] = {
      {0, 10, 0, 0},    /* 0: ends at 10: misses */
      {10, 5, 0, 0},    /* 1: starts at 10: holds it */
      {5, 10, 0, 0},    /* 2: holds 10 */
      {10, 0, 0, 0},    /* 3: the same point */
      {11, 0, 0, 0},    /* 4: another point */
      {3, -1, 0, 0},    /* 5: never ends */
  };
  trel *op = mk(0, 6, op_rows);
  const int64_t in_rows[][4] = {{10, 0, 0, 0}};
  trel *in = mk(0, 1, in_rows);
  unsigned holds = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 5);
  assert_int_equal(join_mask(in, op, RT_IJ_OVERLAPPING), holds);
  assert_int_equal(join_mask(in, op, RT_IJ_COVERING_BEGIN), holds);
  assert_int_equal(join_mask(in, op, RT_IJ_COVERING_END), holds);
  assert_int_equal(join_mask(in, op, RT_IJ_COVERING_BOUNDS), holds);
  assert_int_equal(join_mask(in, op, RT_IJ_WITHIN), 1u << 3);
  trel_free(op);
  trel_free(in);
}

static void test_join_left_nulls_per(void **state) {
  (void)state;
  const int64_t op_rows[][4] = {{0, 100, 1, 0}, {0, 100, NUL, 0}, {NUL, 100, 1, 0},
                                {50, 10, 1, 0}, {0, 100, 2, 0}, {20, 1, 1, 0}};
  trel *op = mk(1, 6, op_rows);
  const int64_t in_rows[][4] = {{10, 50, 1, 0}, {10, 5, NUL, 0}, {NUL, 5, 1, 0},
                                {10, 5, 3, 0},  {10, 5, 2, 0},   {200, 1, 1, 0}};
  trel *in = mk(1, 6, in_rows);
  rt_ijoin j;
  rt_err err = {0};
  assert_int_equal(rt_ijoin_build(&j, &op->r, RT_IJ_OVERLAPPING, "INTERVAL JOIN", &err), 1);
  assert_int_equal(j.lanes_overlapping, 1);   /* key 1 */
  assert_int_equal(j.lanes_disjoint, 1);      /* key 2 */
  rt_ijpairs p = {0};
  assert_int_equal(rt_ijoin_probe(&j, &in->r, true, &p, &err), 1);
  /* row 0 → ops 0, 5, 3 (start order); a NULL key, NULL bound, unknown key
   * or no overlap keeps the row once (LEFT); row 4 → op 4. */
  const uint32_t want_in[] = {0, 0, 0, 1, 2, 3, 4, 5};
  const uint32_t want_op[] = {0, 5, 3, RT_NO_ROW, RT_NO_ROW, RT_NO_ROW, 4, RT_NO_ROW};
  assert_int_equal(p.n, 8);
  for (size_t i = 0; i < 8; i++) {
    assert_int_equal(p.in[i], want_in[i]);
    assert_int_equal(p.op[i], want_op[i]);
  }
  p.n = 0;
  assert_int_equal(rt_ijoin_probe(&j, &in->r, false, &p, &err), 1);
  assert_int_equal(p.n, 4);
  rt_ijpairs_free(&p);
  rt_ijoin_free(&j);
  /* A point meets an interval starting at its instant: that lane overlaps;
   * a point at an interval's end does not. */
  const int64_t pts[][4] = {{10, 0, 1, 0}, {10, 10, 1, 0}, {30, 0, 2, 0}, {20, 10, 2, 0}};
  trel *op2 = mk(1, 4, pts);
  assert_int_equal(rt_ijoin_build(&j, &op2->r, RT_IJ_OVERLAPPING, "INTERVAL JOIN", &err), 1);
  assert_int_equal(j.lanes_overlapping, 1);
  assert_int_equal(j.lanes_disjoint, 1);
  rt_ijoin_free(&j);
  trel_free(op2);
  trel_free(op);
  trel_free(in);
}

/* Reference from "holds": doubled instants x2 (x2 odd = a half instant). */
static bool holds2(int64_t ts, int64_t dur, int64_t x2) {
  if (dur == 0) return x2 == 2 * ts;
  if (dur < 0) return x2 >= 2 * ts;
  return 2 * ts <= x2 && x2 < 2 * (ts + dur);
}

static bool ref_rel(rt_ijrel rel, int64_t s, int64_t d, int64_t a, int64_t bd) {
  bool ipt = d == 0, opt = bd == 0, iinf = d < 0, oinf = bd < 0;
  int64_t e = s + d, b = a + bd;
  /* I's last instant, for a positive finite input: just before e */
  switch (rel) {
  case RT_IJ_OVERLAPPING: {
    int64_t m2 = 2 * (s > a ? s : a);   /* the later start is in both if anything is */
    return holds2(s, d, m2) && holds2(a, bd, m2);
  }
  case RT_IJ_COVERING_BEGIN: return holds2(a, bd, 2 * s);
  case RT_IJ_COVERING_END:
    if (ipt) return holds2(a, bd, 2 * s);
    if (iinf) return oinf;
    return holds2(a, bd, 2 * e - 1);
  case RT_IJ_COVERING_BOUNDS:
    if (ipt) return holds2(a, bd, 2 * s);
    if (iinf) return oinf && a <= s;
    return holds2(a, bd, 2 * s) && holds2(a, bd, 2 * e - 1);
  case RT_IJ_WITHIN:
    if (opt) return holds2(s, d, 2 * a);
    if (oinf) return iinf && s <= a;
    return holds2(s, d, 2 * a) && holds2(s, d, 2 * b - 1);
  }
  return false;
}

static void test_join_random(void **state) {
  (void)state;
  rng_state = 1234;
  uint64_t nmatch = 0, novl = 0;
  for (int iter = 0; iter < 2500; iter++) {
    rt_ijrel rel = all_rels[rnd(5)];
    int nkeys = (int)rnd(2);
    uint32_t nop = rnd(rnd(5) == 0 ? 120 : 14), nin = rnd(12);
    trel *op = random_rel(nop, nkeys, 40, 1 + rnd(12), 3, rnd(3) == 0);
    trel *in = random_rel(nin, nkeys, 40, 1 + rnd(15), 3, false);
    for (uint32_t i = 0; i < nop; i++)
      if (rnd(10) == 0 && rvalid(op, i)) op->dur[i] = -1;
    for (uint32_t i = 0; i < nin; i++)
      if (rnd(10) == 0 && rvalid(in, i)) in->dur[i] = -1 - (int64_t)rnd(3);
    if (rnd(3) == 0)
      for (uint32_t i = 0; i < nop; i++) op->ts[i] -= 20;   /* negative ts are allowed */
    bool left = rnd(2);
    rt_ijoin j;
    rt_err err = {0};
    assert_int_equal(rt_ijoin_build(&j, &op->r, rel, "INTERVAL JOIN", &err), 1);
    novl += j.lanes_overlapping;
    rt_ijpairs p = {0};
    assert_int_equal(rt_ijoin_probe(&j, &in->r, left, &p, &err), 1);
    size_t at = 0;
    for (uint32_t i = 0; i < nin; i++) {
      /* reference matches of input i, in (start, row) order */
      uint32_t want[200];
      size_t nw = 0;
      bool iok = rvalid(in, i);
      for (int k = 0; k < nkeys; k++) iok = iok && !knull(in, k, i);
      for (uint32_t q = 0; iok && q < nop; q++) {
        bool ok = rvalid(op, q) && same_key(in, i, op, q);
        for (int k = 0; k < nkeys; k++) ok = ok && !knull(op, k, q);
        if (ok && ref_rel(rel, in->ts[i], in->dur[i], op->ts[q], op->dur[q])) want[nw++] = q;
      }
      for (size_t a = 1; a < nw; a++)
        for (size_t b = a; b > 0 && op->ts[want[b]] < op->ts[want[b - 1]]; b--) {
          uint32_t x = want[b]; want[b] = want[b - 1]; want[b - 1] = x;
        }
      for (size_t w = 0; w < nw; w++, at++) {
        assert_true(at < p.n);
        assert_int_equal(p.in[at], i);
        assert_int_equal(p.op[at], want[w]);
      }
      nmatch += nw;
      if (nw == 0 && left) {
        assert_true(at < p.n);
        assert_int_equal(p.in[at], i);
        assert_int_equal(p.op[at], RT_NO_ROW);
        at++;
      }
    }
    assert_int_equal(p.n, at);
    rt_ijpairs_free(&p);
    rt_ijoin_free(&j);
    trel_free(op);
    trel_free(in);
  }
  assert_true(nmatch > 1000);
  assert_true(novl > 500);
}

/* ==== INTERVAL FILL GAPS ========================================================== */

#define STAGE_F "INTERVAL FILL GAPS"

static void fill_expect(const rt_fill_out *o, size_t n, const int64_t (*want)[4]) {
  assert_int_equal(o->n, n);
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(o->ts[i], want[i][0]);
    assert_int_equal(o->dur[i], want[i][1]);
    assert_int_equal(o->bg[i], (uint32_t)want[i][2]);
    assert_int_equal(o->rep[i], want[i][3] < 0 ? RT_NO_ROW : (uint32_t)want[i][3]);
  }
}

static void test_fillgaps_one_lane(void **state) {
  (void)state;
  const int64_t in_rows[][4] = {{10, 10, 0, 0}, {15, 25, 0, 0}, {60, 0, 0, 0},
                                {NUL, 5, 0, 0}, {90, -1, 0, 0}};
  const int64_t bg_rows[][4] = {{0, 100, 0, 0}, {100, 50, 0, 0}, {200, 0, 0, 0}};
  trel *in = mk(0, 5, in_rows), *bg = mk(0, 3, bg_rows);
  rt_fill_out o;
  rt_err err = {0};
  assert_int_equal(rt_fillgaps_run(&in->r, &bg->r, false, STAGE_F, &o, &err), 1);
  /* [0,10), [40,90) (the point at 60 has no width); 90.. covered forever */
  const int64_t want[][4] = {{0, 10, 0, 0}, {40, 50, 0, 0}};
  fill_expect(&o, 2, want);
  rt_fillgaps_free(&o);
  /* No input at all: the one lane is filled whole. */
  in->r.n = 0;
  assert_int_equal(rt_fillgaps_run(&in->r, &bg->r, false, STAGE_F, &o, &err), 1);
  const int64_t want2[][4] = {{0, 100, 0, -1}, {100, 50, 1, -1}};
  fill_expect(&o, 2, want2);
  rt_fillgaps_free(&o);
  trel_free(in);
  trel_free(bg);
}

static void test_fillgaps_lanes(void **state) {
  (void)state;
  const int64_t in_rows[][4] = {{10, 10, 2, 0}, {0, 5, 1, 0}, {30, 5, NUL, 0}, {0, 100, 2, 0}};
  trel *in = mk(1, 4, in_rows);
  /* Background with the PER column: it names the lanes; lane 5 has no input. */
  const int64_t bg_rows[][4] = {{0, 50, 1, 0}, {0, 50, 5, 0}, {0, 50, NUL, 0}, {50, 10, 1, 0}};
  trel *bg = mk(1, 4, bg_rows);
  rt_fill_out o;
  rt_err err = {0};
  assert_int_equal(rt_fillgaps_run(&in->r, &bg->r, true, STAGE_F, &o, &err), 1);
  /* lanes first seen: 2 (input 0), 1 (input 1), NULL (input 2), 5 (bg) */
  const int64_t want[][4] = {{5, 45, 0, 1},  {50, 10, 3, 1}, {0, 30, 2, 2},
                             {35, 15, 2, 2}, {0, 50, 1, -1}};
  fill_expect(&o, 5, want);
  rt_fillgaps_free(&o);
  /* Background without PER columns: every input lane against all of it. */
  const int64_t bg2_rows[][4] = {{0, 40, 0, 0}};
  trel *bg2 = mk(0, 1, bg2_rows);
  assert_int_equal(rt_fillgaps_run(&in->r, &bg2->r, false, STAGE_F, &o, &err), 1);
  const int64_t want2[][4] = {{5, 35, 0, 1}, {0, 30, 0, 2}, {35, 5, 0, 2}};
  fill_expect(&o, 3, want2);
  rt_fillgaps_free(&o);
  trel_free(in);
  trel_free(bg);
  trel_free(bg2);
}

static void test_fillgaps_errors(void **state) {
  (void)state;
  const int64_t in_rows[][4] = {{10, 10, 1, 0}};
  trel *in = mk(1, 1, in_rows);
  const int64_t bg_rows[][4] = {{0, 50, 1, 0}, {40, 20, 2, 0}, {49, 0, 1, 0}};
  trel *bg = mk(1, 3, bg_rows);
  rt_fill_out o;
  rt_err err = {0};
  /* Rows of different lanes may overlap; the point 49 meets [0,50) in lane 1. */
  assert_int_equal(rt_fillgaps_run(&in->r, &bg->r, true, STAGE_F, &o, &err), 0);
  assert_string_equal(err.msg, "INTERVAL FILL GAPS: background rows overlap within a lane");
  rt_fillgaps_free(&o);
  bg->r.n = 2;
  err = (rt_err){0};
  assert_int_equal(rt_fillgaps_run(&in->r, &bg->r, true, STAGE_F, &o, &err), 1);
  rt_fillgaps_free(&o);
  /* Without PER in the background, every row is in every lane. */
  err = (rt_err){0};
  assert_int_equal(rt_fillgaps_run(&in->r, &bg->r, false, STAGE_F, &o, &err), 0);
  assert_string_equal(err.msg, "INTERVAL FILL GAPS: background rows overlap within a lane");
  rt_fillgaps_free(&o);
  /* A background point meets a row starting at its instant. */
  trel_set(bg, 0, 50, 0, 1, 0);
  trel_set(bg, 1, 50, 10, 1, 0);
  err = (rt_err){0};
  assert_int_equal(rt_fillgaps_run(&in->r, &bg->r, true, STAGE_F, &o, &err), 0);
  assert_string_equal(err.msg, "INTERVAL FILL GAPS: background rows overlap within a lane");
  rt_fillgaps_free(&o);
  trel_set(bg, 0, 0, 50, 1, 0);
  /* Touching background rows are fine; a negative bound is not. */
  trel_set(bg, 1, 50, 20, 1, 0);
  err = (rt_err){0};
  assert_int_equal(rt_fillgaps_run(&in->r, &bg->r, false, STAGE_F, &o, &err), 1);
  const int64_t want[][4] = {{0, 10, 0, 0}, {20, 30, 0, 0}, {50, 20, 1, 0}};
  fill_expect(&o, 3, want);
  rt_fillgaps_free(&o);
  trel_set(bg, 1, 50, -20, 1, 0);
  err = (rt_err){0};
  assert_int_equal(rt_fillgaps_run(&in->r, &bg->r, false, STAGE_F, &o, &err), 0);
  assert_string_equal(err.msg, "INTERVAL FILL GAPS: background ts or dur is below zero: a "
                               "background row has ts 50 and dur -20 (unfinished slices have "
                               "dur = -1: add WHERE dur >= 0 to the background)");
  rt_fillgaps_free(&o);
  trel_free(in);
  trel_free(bg);
}

/* A lane of the reference: the relation and row that first named it. */
typedef struct lane_ref {
  const trel *t;
  uint32_t i;
} lane_ref;

/* Reference by unit sampling (bounds are small integers here). */
static void test_fillgaps_random(void **state) {
  (void)state;
  rng_state = 555;
  uint64_t total = 0;
  for (int iter = 0; iter < 2000; iter++) {
    int nkeys = (int)rnd(2);
    bool per = nkeys && rnd(2);
    uint32_t nin = rnd(10), nb = rnd(6);
    trel *in = random_rel(nin, nkeys, 40, 1 + rnd(10), 3, false);
    for (uint32_t i = 0; i < nin; i++)
      if (rnd(10) == 0 && rvalid(in, i)) in->dur[i] = -1;
    trel *bg = trel_new(nb, per ? nkeys : 0);
    int64_t at[4] = {0, 0, 0, 0};
    for (uint32_t i = 0; i < nb; i++) {
      int64_t k0 = per ? (rnd(6) == 0 ? NUL : (int64_t)rnd(3)) : 0;
      int lane = k0 == NUL ? 3 : (int)k0;
      int64_t ts = at[lane] + rnd(5), dur = rnd(5) == 0 ? 0 : 1 + rnd(15);
      at[lane] = ts + dur + (dur == 0);
      trel_set(bg, i, ts, dur, k0, 0);
    }
    rt_fill_out o;
    rt_err err = {0};
    assert_int_equal(rt_fillgaps_run(&in->r, &bg->r, per, STAGE_F, &o, &err), 1);
    /* lanes: input keys first seen, then background keys (PER mode) */
    size_t got = 0;
    uint32_t nl = 0;
    lane_ref lanes[32];
    if (nkeys == 0) lanes[nl++] = (lane_ref){in, 0};
    for (uint32_t i = 0; nkeys && i < nin; i++) {
      bool seen = false;
      for (uint32_t l = 0; l < nl && !seen; l++) seen = same_key(lanes[l].t, lanes[l].i, in, i);
      if (!seen) lanes[nl++] = (lane_ref){in, i};
    }
    for (uint32_t i = 0; per && i < nb; i++) {
      bool seen = false;
      for (uint32_t l = 0; l < nl && !seen; l++) seen = same_key(lanes[l].t, lanes[l].i, bg, i);
      if (!seen) lanes[nl++] = (lane_ref){bg, i};
    }
    for (uint32_t l = 0; l < nl; l++) {
      uint32_t rep = RT_NO_ROW;
      for (uint32_t i = 0; i < nin && rep == RT_NO_ROW; i++)
        if (nkeys == 0 || same_key(lanes[l].t, lanes[l].i, in, i)) rep = i;
      /* background rows of the lane, by start */
      uint32_t ord[16];
      uint32_t no = 0;
      for (uint32_t q = 0; q < nb; q++)
        if (rvalid(bg, q) && (!per || same_key(lanes[l].t, lanes[l].i, bg, q))) ord[no++] = q;
      for (uint32_t a = 1; a < no; a++)
        for (uint32_t b = a; b > 0 && bg->ts[ord[b]] < bg->ts[ord[b - 1]]; b--) {
          uint32_t x = ord[b]; ord[b] = ord[b - 1]; ord[b - 1] = x;
        }
      for (uint32_t q = 0; q < no; q++) {
        uint32_t r = ord[q];
        int64_t run = -1;
        for (int64_t t = bg->ts[r]; t <= bg->ts[r] + bg->dur[r]; t++) {
          bool cov = t == bg->ts[r] + bg->dur[r];   /* sentinel closes a run */
          for (uint32_t i = 0; i < nin && !cov; i++) {
            if (!rvalid(in, i) || in->dur[i] == 0) continue;
            if (nkeys && !same_key(lanes[l].t, lanes[l].i, in, i)) continue;
            cov = in->ts[i] <= t && (in->dur[i] < 0 || t < in->ts[i] + in->dur[i]);
          }
          if (!cov && run < 0) run = t;
          if (cov && run >= 0) {
            assert_true(got < o.n);
            assert_int_equal(o.ts[got], run);
            assert_int_equal(o.dur[got], t - run);
            assert_int_equal(o.bg[got], r);
            assert_int_equal(o.rep[got], rep);
            got++;
            run = -1;
          }
        }
      }
    }
    assert_int_equal(o.n, got);
    total += got;
    rt_fillgaps_free(&o);
    trel_free(in);
    trel_free(bg);
  }
  assert_true(total > 1000);
}

/* ==== lanes and the tree ============================================================ */

static void test_lanes_doubles_and_lookup(void **state) {
  (void)state;
  rt_lanes l;
  rt_err err = {0};
  rt_type t[2] = {RT_F64, RT_STR};
  assert_int_equal(rt_lanes_init(&l, 2, t, "X", &err), 1);
  double z = 0.0, nz = -0.0;
  int64_t v[2];
  memcpy(&v[0], &z, 8);
  v[1] = 5;
  assert_int_equal(rt_lanes_lookup(&l, v, 0, true), 0);
  memcpy(&v[0], &nz, 8);
  assert_int_equal(rt_lanes_lookup(&l, v, 0, false), 0);   /* -0.0 == 0.0 */
  assert_int_equal(rt_lanes_lookup(&l, v, 1, false), -1);  /* NULL first key */
  assert_int_equal(rt_lanes_lookup(&l, v, 1, true), 1);
  assert_int_equal(rt_lanes_lookup(&l, v, 1, true), 1);
  for (int64_t i = 0; i < 5000; i++) {
    v[1] = i;
    assert_int_equal(rt_lanes_lookup(&l, v, 0, true), i == 5 ? 0 : (i < 5 ? i + 2 : i + 1));
  }
  assert_int_equal(l.n, 5001);
  rt_lanes_free(&l);
  rt_type tt[65];
  for (int i = 0; i < 65; i++) tt[i] = RT_I64;
  assert_int_equal(rt_lanes_init(&l, 65, tt, "X", &err), 0);
  assert_string_equal(err.msg, "X: too many PER columns");
}

static bool collect(void *ctx, size_t i) {
  size_t *acc = ctx;
  acc[++acc[0]] = i;
  return true;
}

static void test_ivtree_matches_scan(void **state) {
  (void)state;
  rng_state = 3;
  for (int iter = 0; iter < 300; iter++) {
    size_t n = rnd(3000);
    uint64_t *end = malloc((n + 1) * 8);
    for (size_t i = 0; i < n; i++) end[i] = rnd(1000);
    rt_ivtree t;
    assert_true(rt_ivtree_build(&t, end, n));
    size_t lo = rnd((uint32_t)n + 1), hi = rnd((uint32_t)n + 1);
    uint64_t thr = rnd(1100);
    size_t *acc = malloc((n + 2) * sizeof *acc);
    acc[0] = 0;
    assert_true(rt_ivtree_query(&t, lo, hi, thr, collect, acc));
    size_t k = 0;
    for (size_t i = lo; i < hi; i++)
      if (end[i] >= thr) {
        assert_true(k < acc[0]);
        assert_int_equal(acc[1 + k], i);
        k++;
      }
    assert_int_equal(acc[0], k);
    free(acc);
    rt_ivtree_free(&t);
    free(end);
  }
}

/* ==== 1M rows: the fast paths scale (a sanity check, not a benchmark) ======= */

static void test_million_rows(void **state) {
  (void)state;
  const uint32_t n = 500000;
  trel *a = trel_new(n, 1), *b = trel_new(n, 1);
  /* 8 cpus, each a back-to-back sequence of slices; b is shifted by 3. */
  for (uint32_t i = 0; i < n; i++) {
    trel_set(a, i, (int64_t)(i / 8) * 10, 10, i % 8, 0);
    trel_set(b, i, (int64_t)(i / 8) * 10 + 3, 10, i % 8, 0);
  }
  trel *ops[2] = {a, b};
  rt_isect_out o;
  rt_isect_stats st;
  int64_t t0 = rt_now_ns();
  isect_ok(2, ops, &o, &st);
  int64_t t1 = rt_now_ns();
  assert_int_equal(st.part_disjoint, 8);
  assert_int_equal(o.n, 2 * (size_t)n - 8);   /* per cpu: 2 pieces per slice but the last */
  rt_isect_free(&o);

  /* INTERVAL JOIN: b probes a; each b row overlaps two a rows but the last. */
  rt_ijoin j;
  rt_ijpairs p = {0};
  rt_err jerr = {0};
  int64_t tj0 = rt_now_ns();
  assert_int_equal(rt_ijoin_build(&j, &a->r, RT_IJ_OVERLAPPING, "INTERVAL JOIN", &jerr), 1);
  assert_int_equal(rt_ijoin_probe(&j, &b->r, false, &p, &jerr), 1);
  int64_t tj1 = rt_now_ns();
  assert_int_equal(j.lanes_disjoint, 8);
  assert_int_equal(p.n, 2 * (size_t)n - 8);
  rt_ijpairs_free(&p);
  rt_ijoin_free(&j);

  /* FLATTEN of 1M nested intervals on 16 tracks, presorted. */
  const uint32_t m = 1000000;
  trel *f = trel_new(m, 1);
  for (uint32_t i = 0; i < m; i++) {
    uint32_t track = i / (m / 16), at = i % (m / 16);
    trel_set(f, i, (int64_t)(at / 4) * 100 + (at % 4) * 10, 100 - (int64_t)(at % 4) * 20, track, 0);
  }
  rt_flat_agg agg = {.kind = RT_AGG_COUNT_STAR, .in = RT_I64, .v = NULL, .valid = NULL};
  rt_flat_out fo;
  rt_flat_stats fs;
  rt_err err = {0};
  int64_t t2 = rt_now_ns();
  assert_int_equal(rt_flatten_run(&f->r, 1, &agg, NULL, "INTERVAL FLATTEN", &fo, &fs, &err), 1);
  int64_t t3 = rt_now_ns();
  assert_true(fs.presorted);
  assert_int_equal(fs.groups, 16);
  /* per group of 4 nested: [0,10) 1, [10,20) 2, [20,30) 3, [30,70) 4,
   * [70,80) 3, [80,90) 2, [90,100) 1 → 7 segments */
  assert_int_equal(fo.n, (size_t)m / 4 * 7);
  rt_flatten_free(&fo);
  print_message("[ info ] isect 2x%u rows: %.1f ns/row; join %u+%u rows: %.1f ns/row; "
                "flatten %u rows: %.1f ns/row\n", n, (double)(t1 - t0) / (2.0 * n), n, n,
                (double)(tj1 - tj0) / (2.0 * n), m, (double)(t3 - t2) / m);
  trel_free(a);
  trel_free(b);
  trel_free(f);
}

/* ---- the union of an operand per lane (ivunion.c), shared by SUBTRACT
 * and the temporal semijoins ------------------------------------------------ */

static void test_ivunion(void **state) {
  (void)state;
  /* input lanes: 1, NULL, 2 (first seen) */
  const int64_t in_rows[][4] = {{0, 1, 1, 0}, {0, 1, NUL, 0}, {0, 1, 2, 0}};
  trel *in = mk(1, 3, in_rows);
  rt_err err = {.offset = -1};
  rt_ivgroups g;
  assert_int_equal(rt_ivgroups_build(&g, &in->r, "T", &err), 1);
  assert_int_equal(g.nl, 3);
  /* lane 1: [0,5) [5,8) touch, [6,7) inside, point 8 at the end (kept
   * with POINTS), point 3 inside (gone), point 20 twice (one item),
   * [30,-1) open; lane NULL: [2,4); lane 7: absent from the input */
  const int64_t op_rows[][4] = {{0, 5, 1, 0},  {5, 3, 1, 0},   {6, 1, 1, 0},  {8, 0, 1, 0},
                                {3, 0, 1, 0},  {20, 0, 1, 0},  {20, 0, 1, 0}, {30, -1, 1, 0},
                                {2, 2, NUL, 0}, {1, 1, 7, 0},  {NUL, 3, 1, 0}};
  trel *op = mk(1, 11, op_rows);
  rt_ivunion u;
  assert_int_equal(rt_ivunion_build(&u, &g.lanes, &op->r, RT_IVU_POINTS | RT_IVU_OPEN_END, "T", "", &err), 1);
  assert_int_equal(u.nl, 3);
  const uint64_t want_s[] = {0, 8, 20, 30, 2}, want_e[] = {8, 8, 20, UINT64_MAX, 4};
  assert_int_equal(u.off[0], 0);
  assert_int_equal(u.off[1], 4);
  assert_int_equal(u.off[2], 5);
  assert_int_equal(u.off[3], 5);
  for (int i = 0; i < 5; i++) {
    assert_int_equal(u.s[i], want_s[i]);
    assert_int_equal(u.e[i], want_e[i]);
  }
  rt_ivunion_free(&u);
  /* without the flags: points left out, a negative dur is the error */
  assert_int_equal(rt_ivunion_build(&u, &g.lanes, &op->r, 0, "T", "", &err), 0);
  assert_non_null(strstr(err.msg, "T: ts or dur is below zero"));
  rt_ivunion_free(&u);
  trel_set(op, 7, 30, 5, 1, 0);
  err = (rt_err){.offset = -1};
  assert_int_equal(rt_ivunion_build(&u, &g.lanes, &op->r, 0, "T", "", &err), 1);
  assert_int_equal(u.off[1], 2);   /* [0,8) [30,35) */
  assert_int_equal(u.e[0], 8);
  assert_int_equal(u.s[1], 30);
  rt_ivunion_free(&u);
  rt_ivgroups_free(&g);
  trel_free(in);
  trel_free(op);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_isect_touching_and_overlap),
      cmocka_unit_test(test_isect_points),
      cmocka_unit_test(test_isect_three_operands),
      cmocka_unit_test(test_isect_self_overlap),
      cmocka_unit_test(test_isect_per_nulls_and_order),
      cmocka_unit_test(test_isect_null_bounds_and_errors),
      cmocka_unit_test(test_isect_random_small),
      cmocka_unit_test(test_isect_random_paths),
      cmocka_unit_test(test_isect_streamed_and_narrow_keys),
      cmocka_unit_test(test_isect_long_runs_and_wide_starts),
      cmocka_unit_test(test_isect_many_overlaps_in_batches),
      cmocka_unit_test(test_iv_sort_matches_qsort),
      cmocka_unit_test(test_flatten_points_and_segments),
      cmocka_unit_test(test_flatten_aggregates),
      cmocka_unit_test(test_flatten_presorted_and_errors),
      cmocka_unit_test(test_flatten_random),
      cmocka_unit_test(test_join_relations_intervals),
      cmocka_unit_test(test_join_relations_points),
      cmocka_unit_test(test_join_left_nulls_per),
      cmocka_unit_test(test_join_random),
      cmocka_unit_test(test_fillgaps_one_lane),
      cmocka_unit_test(test_fillgaps_lanes),
      cmocka_unit_test(test_fillgaps_errors),
      cmocka_unit_test(test_fillgaps_random),
      cmocka_unit_test(test_lanes_doubles_and_lookup),
      cmocka_unit_test(test_ivtree_matches_scan),
      cmocka_unit_test(test_million_rows),
      cmocka_unit_test(test_ivunion),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
