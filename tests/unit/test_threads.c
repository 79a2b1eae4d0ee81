/*
 * test_threads.c — parallel execution gives one thread's answer: the same
 * rows in the same order, bit-identical doubles, and the same error.
 *
 * The tables are the sample trace's slices; the engine's test knob
 * (pj__engine_set_batch_rows) cuts them into many small morsels, so a
 * merge that followed the order morsels finish in, rather than morsel
 * order, would reorder groups (first-seen order) or add partial sums in
 * another order in almost every run. The double sums are also checked
 * against the rule computed here by hand (partials per morsel in row
 * order, added in morsel order), which both backends and every thread
 * count follow.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/engine.h"
#include "pipejit.h"
#include "runtime/budget.h"
#include "runtime/jointab.h"
#include "runtime/par.h"

#define ROWS 200000
#define BATCH 64          /* rows per batch under the knob */
#define MORSEL (2 * BATCH) /* rows per morsel under the knob (exec.h) */

typedef struct dump {
  char *s;
  size_t n, cap;
} dump;

static void put(dump *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char buf[256];
  int k = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (k < 0) return;
  if (d->n + (size_t)k + 1 > d->cap) {
    d->cap = (d->n + (size_t)k + 1) * 2;
    d->s = realloc(d->s, d->cap);
    assert_non_null(d->s);
  }
  memcpy(d->s + d->n, buf, (size_t)k + 1);
  d->n += (size_t)k;
}

/* Every value of r exactly (doubles as hex floats), in row order. */
static int dump_result(void *ctx, const pj_result *r, const char *text, size_t len, size_t off) {
  (void)text, (void)len, (void)off;
  dump *d = ctx;
  for (int64_t i = 0; i < pj_result_row_count(r); i++) {
    for (int c = 0; c < pj_result_column_count(r); c++) {
      if (pj_result_is_null(r, i, c)) put(d, "NULL|");
      else if (pj_result_column_type(r, c) == PJ_TYPE_DOUBLE) put(d, "%a|", pj_result_double(r, i, c));
      else if (pj_result_column_type(r, c) == PJ_TYPE_STRING) put(d, "%s|", pj_result_text(r, i, c, NULL));
      else put(d, "%lld|", (long long)pj_result_int64(r, i, c));
    }
    put(d, "\n");
  }
  return 0;
}

static pj_engine *engine(pj_mode mode, int threads) {
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  pj_engine_set_mode(e, mode);
  pj_engine_set_threads(e, threads);
  pj__engine_set_batch_rows(e, BATCH);
  assert_int_equal(pj_engine_load_sample_trace(e, ROWS), PJ_OK);
  return e;
}

/* The query's rows (or "error: …" with its offset) on e; *threads gets
 * the threads its run used. */
static char *run(pj_engine *e, const char *q, int *threads) {
  dump d = {0};
  put(&d, "result:\n");
  if (pj_engine_exec(e, q, dump_result, &d) != PJ_OK)
    put(&d, "error: %s at %d\n", pj_engine_errmsg(e), pj_engine_erroffset(e));
  pj_timing t;
  pj_engine_last_timing(e, &t);
  if (threads) *threads = t.threads;
  return d.s;
}

/* INTERSECTION OF sched, its dur replaced by DUR, and cpu_frequency */
#define NULL_BOUNDS_Q(DUR)                                                                         \
  "INTERVAL INTERSECTION OF ((FROM sched |> SELECT id, ts, " DUR " AS dur, cpu) AS s, "          \
  "cpu_frequency AS f) PER cpu |> EXTEND dur * 1.37 AS x "                                         \
  "|> AGGREGATE COUNT(*) AS n, SUM(x) AS sx, SUM(f.freq) AS fr, MAX(s.id) AS m GROUP BY cpu"

static const char *const QUERIES[] = {
    /* thousands of groups, several keys, double sums, strings */
    "FROM slice |> WHERE dur > 1000 |> EXTEND dur * 1.37 AS x "
    "|> AGGREGATE COUNT(*) AS n, SUM(x) AS sx, AVG(x) AS ax, SUM(dur) AS sd, MIN(dur) AS lo, "
    "MAX(x) AS hi, MIN(name) AS mn, MAX(name) AS mx, ANY_VALUE(depth) AS av GROUP BY track_id, depth",
    /* one string key, first-seen order */
    "FROM slice |> AGGREGATE COUNT(*) AS n, SUM(dur / 3.0) AS s GROUP BY name",
    /* no GROUP BY */
    "FROM slice |> WHERE depth < 3 |> AGGREGATE COUNT(*) AS n, SUM(ts * 0.001) AS s, AVG(dur) AS a",
    /* a key per row almost: large merges */
    "FROM slice |> AGGREGATE SUM(dur * 0.5) AS s, COUNT(*) AS n GROUP BY id % 50000 AS k",
    /* many groups (the partitioned merge, runtime/aggpart.h): keys met
     * in an order unlike their hashes' partitions and unlike sorted, a
     * NULL key group, small keys (the direct table), tuples with a string */
    "FROM slice |> EXTEND CASE WHEN id % 7 = 0 THEN NULL ELSE (id * 7919) % 30011 END AS k "
    "|> AGGREGATE SUM(dur * 0.37) AS s, COUNT(*) AS n, MAX(name) AS mx, AVG(depth) AS ad GROUP BY k",
    "FROM slice |> AGGREGATE SUM(dur * 0.37) AS s, MIN(dur) AS lo, ANY_VALUE(id) AS av "
    "GROUP BY name, depth, (id * 31) % 997 AS k",
    "FROM slice |> AGGREGATE SUM(dur) AS s, COUNT(*) AS n GROUP BY (id * 13) % 3001 AS k",
    /* many groups merged by their stored hash and key bits
     * (rt_aggtab_group_of, prefetched past 4,096 groups): a double key
     * that is -0.0 in some rows and 0.0 in others (one group), NULL keys
     * in a tuple, a string key that is sometimes NULL */
    "FROM slice |> EXTEND CASE WHEN id % 13 = 0 THEN NULL ELSE (id % 4001 - 2000) * 0.5 * (depth % 2) END AS k "
    "|> EXTEND CASE WHEN id % 17 = 0 THEN NULL ELSE name END AS nm "
    "|> AGGREGATE COUNT(*) AS n, SUM(dur * 0.37) AS s, AVG(dur) AS a, MIN(dur * 0.5) AS lo, MAX(name) AS mx "
    "GROUP BY k, nm",
    /* one double key, NULL in some rows (its group outside the slots) */
    "FROM slice |> EXTEND CASE WHEN id % 9 = 0 THEN NULL ELSE ((id * 7919) % 20011) * 0.25 END AS k "
    "|> AGGREGATE COUNT(*) AS n, SUM(dur * 0.37) AS s, AVG(depth) AS ad, MIN(name) AS mn, MAX(dur) AS hi "
    "GROUP BY k",
    /* three integer keys (as bench agg_3keys), a NULL one among them */
    "FROM slice |> EXTEND CASE WHEN id % 5 = 0 THEN NULL ELSE id % 97 END AS a "
    "|> AGGREGATE COUNT(*) AS n, SUM(dur) AS s, MAX(dur) AS m, SUM(dur * 0.1) AS x, MIN(ts) AS t "
    "GROUP BY a, depth, (id * 31) % 211 AS b",
    /* more groups than a piece of the partitioned output's parallel copy
     * (65,536 rows, rt_aggpart_emit): pieces of whole validity words, the
     * last one partial; a string key sometimes NULL */
    "FROM slice |> EXTEND CASE WHEN id % 11 = 0 THEN NULL ELSE name END AS nm "
    "|> AGGREGATE COUNT(*) AS n, SUM(dur * 0.37) AS s, AVG(dur) AS a, MIN(nm) AS lo, MAX(dur) AS hi "
    "GROUP BY (id * 7919) % 150001 AS k, nm",
    /* nothing passes */
    "FROM slice |> WHERE dur < 0 |> AGGREGATE COUNT(*) AS n, SUM(dur) AS s GROUP BY depth",
    /* buffers: every row (appended in place), or filtered (appended in
     * morsel order) */
    "FROM slice |> EXTEND dur + 1 AS d1 |> SELECT id, d1, name",
    "FROM slice |> WHERE dur > 5000 |> EXTEND dur * 2 AS d2 |> SELECT id, d2, name",
    "FROM slice |> ORDER BY dur DESC, id |> LIMIT 50",
    "FROM slice |> WHERE depth > 2 |> ORDER BY name, dur |> SELECT id, name, dur",
    "FROM slice |> WHERE dur > 100 |> EXTEND ROW_NUMBER() OVER (PARTITION BY depth ORDER BY dur) AS rn "
    "|> SELECT id, rn",
    /* INTERVAL INTERSECTION OF: partitions made on several workers, the
     * rows after it on morsels of their regions (double sums, a narrow
     * PER column gathered per batch, both operands' columns) */
    "INTERVAL INTERSECTION OF (sched AS s, cpu_frequency AS f) PER cpu |> EXTEND dur * 1.37 AS x "
    "|> AGGREGATE COUNT(*) AS n, SUM(x) AS sx, SUM(f.freq) AS fr, MAX(s.id) AS m GROUP BY cpu",
    "INTERVAL INTERSECTION OF (sched AS s, cpu_frequency AS f) PER cpu |> WHERE dur > 10 "
    "|> SELECT ts, dur, cpu, s.id, f.id, f.freq",
    /* three operands: partitions that narrow rather than sweep */
    "INTERVAL INTERSECTION OF (sched AS s, cpu_frequency AS f, (FROM sched |> WHERE dur > 2000) AS t) "
    "PER cpu |> SELECT ts, dur, cpu, s.id, f.id, t.id",
    /* an operand with NULL bounds (skipped) read on the workers, and
     * one whose bad bound among them is named as one thread names it */
    NULL_BOUNDS_Q("CASE WHEN id % 7 = 0 THEN NULL ELSE dur END"),
    NULL_BOUNDS_Q("CASE WHEN id % 7 = 0 THEN NULL WHEN id = 150001 THEN -5 ELSE dur END"),
    /* INTERVAL FLATTEN: groups swept on several workers, segments served
     * in morsels (NULL aggregates, doubles, a piece's rows starting
     * inside a validity word) */
    "FROM slice |> EXTEND CASE WHEN depth % 3 = 0 THEN NULL ELSE dur * 0.7 END AS x "
    "|> INTERVAL FLATTEN PER track_id AGGREGATE COUNT(*) AS n, SUM(x) AS sx, AVG(depth) AS ad, MAX(id) AS mx "
    "|> SELECT ts, dur, track_id, n, sx, ad, mx",
    "FROM slice |> INTERVAL FLATTEN PER track_id AGGREGATE COUNT(*) AS n, MIN(dur) AS lo "
    "|> EXTEND dur * 0.37 AS y |> AGGREGATE SUM(y) AS sy, COUNT(*) AS c, SUM(n) AS sn, MIN(lo) AS l "
    "GROUP BY track_id",
    /* input already in (track, ts) order: prep_par's scatter keeps it */
    "FROM slice |> ORDER BY track_id, ts |> INTERVAL FLATTEN PER track_id AGGREGATE COUNT(*) AS n, "
    "SUM(dur * 0.3) AS sd |> SELECT ts, dur, track_id, n, sd",
    /* no PER: one group swept by one worker, its segments served in parallel */
    "FROM slice |> INTERVAL FLATTEN AGGREGATE COUNT(*) AS n |> WHERE n > 1 |> SELECT ts, dur, n",
    /* JOIN probes on morsels: the JIT's caches in the tables (a group per
     * relation row, emptied at each morsel; the second join's chain head
     * per row of the first relation) are each worker's own */
    "FROM slice |> JOIN thread_track AS tt ON track_id = tt.id |> JOIN thread USING (utid) "
    "|> AGGREGATE SUM(dur) AS d, COUNT(*) AS n, SUM(dur * 0.3) AS x GROUP BY thread.name",
    "FROM slice |> WHERE depth < 2 |> LEFT JOIN (FROM thread_track |> WHERE id % 3 = 0) AS tt "
    "ON track_id = tt.id AND dur > 100 |> SELECT slice.id, tt.id AS tid, tt.utid",
    /* INTERVAL JOIN: chunks of input rows probed on several workers, the
     * pairs served in morsels (LEFT: the operand's NULL row) */
    "FROM sched |> INTERVAL JOIN cpu_frequency AS f OVERLAPPING BOUNDS PER cpu "
    "|> AGGREGATE COUNT(*) AS n, SUM(f.freq * 0.001) AS fr, SUM(dur) AS d GROUP BY cpu",
    "FROM sched |> LEFT INTERVAL JOIN (FROM cpu_frequency |> WHERE freq > 1500000) AS f "
    "COVERING BOUNDS PER cpu |> SELECT id, f.id AS fid, f.freq",
    /* JOIN builds of every slice (above RT_JOIN_PAR_MIN rows) on the
     * workers, with 40 to 100 rows per key, whose order each input row's
     * matches show: a direct table (small integer span), a hashed one
     * (wide keys), a string key and two keys */
    "FROM slice |> WHERE id % 509 = 0 |> JOIN (FROM slice |> SELECT id % 5000 AS k, id AS bid) AS b "
    "ON id % 5000 = b.k |> SELECT id, b.bid",
    "FROM slice |> WHERE id % 1013 = 0 |> JOIN (FROM slice |> SELECT (id % 2000) * 1000003 AS k, id AS bid) AS b "
    "ON (id % 2000) * 1000003 = b.k |> SELECT id, b.bid",
    "FROM slice |> WHERE id % 4999 = 0 |> LEFT JOIN (FROM slice |> WHERE id % 3 > 0 |> SELECT name AS n, id AS bid) AS b "
    "ON name = b.n |> AGGREGATE COUNT(*) AS c, SUM(b.bid * (id % 7 + 1)) AS s, MIN(b.bid) AS lo GROUP BY id",
    "FROM slice |> WHERE id % 2003 = 0 |> JOIN (FROM slice |> SELECT depth AS d, track_id AS t, id AS bid) AS b "
    "ON depth = b.d AND track_id = b.t |> SELECT id, b.bid",
};

/* Query qi's result on the interpreter and the JIT at 1, 2 and 4
 * threads, which must all equal the first (the interpreter on one
 * thread) and run on more than one thread where given them; returns
 * that result (the caller frees it). */
static char *same_everywhere(const char *q, size_t qi) {
  char *want = NULL;
  for (int m = 0; m < 2; m++)
    for (int th = 1; th <= 4; th *= 2) {
      pj_engine *e = engine(m ? PJ_MODE_JIT : PJ_MODE_INTERP, th);
      int used = 0;
      char *got = run(e, q, &used);
      pj_engine_close(e);
      if (th > 1 && used <= 1) fail_msg("query %zu did not run in parallel", qi);
      if (!want) {
        want = got;
        continue;
      }
      if (strcmp(want, got)) fail_msg("query %zu, %s, %d threads: %s\none thread: %s", qi, m ? "jit" : "interp", th, got, want);
      free(got);
    }
  return want;
}

static void same_for_any_thread_count(void **state) {
  (void)state;
  for (size_t q = 0; q < sizeof QUERIES / sizeof *QUERIES; q++) {
    char *want = same_everywhere(QUERIES[q], q);
    assert_true(strlen(want) > 0);
    free(want);
  }
}

/* Rows with a NULL bound are skipped (isect.c read_par on several
 * workers, count_lanes on one): the answer is that of the operand
 * without them, on any thread count and backend; a bad bound among them
 * is an error everywhere. */
static void null_bounds_are_skipped(void **state) {
  (void)state;
  static const char filtered[] =
      "INTERVAL INTERSECTION OF ((FROM sched |> WHERE id % 7 <> 0 |> SELECT id, ts, dur, cpu) AS s, "
      "cpu_frequency AS f) PER cpu |> EXTEND dur * 1.37 AS x "
      "|> AGGREGATE COUNT(*) AS n, SUM(x) AS sx, SUM(f.freq) AS fr, MAX(s.id) AS m GROUP BY cpu";
  pj_mode modes[2] = {PJ_MODE_INTERP, PJ_MODE_JIT};
  for (int m = 0; m < 2; m++)
    for (int th = 1; th <= 4; th *= 2) {
      pj_engine *e = engine(modes[m], th);
      char *want = run(e, filtered, NULL);
      int used = 0;
      char *got = run(e, NULL_BOUNDS_Q("CASE WHEN id % 7 = 0 THEN NULL ELSE dur END"), &used);
      char *bad = run(e, NULL_BOUNDS_Q("CASE WHEN id % 7 = 0 THEN NULL WHEN id = 150001 THEN -5 ELSE dur END"), NULL);
      pj_engine_close(e);
      if (th > 1 && used <= 1) fail_msg("%d threads: did not run in parallel", th);
      assert_null(strstr(want, "error"));
      assert_true(strlen(want) > 40);
      if (strcmp(want, got)) fail_msg("%s, %d threads: NULL bounds not skipped", m ? "jit" : "interp", th);
      assert_non_null(strstr(bad, "error"));
      free(want);
      free(got);
      free(bad);
    }
}

/* The double sums follow the documented rule, computed here. */
static void sums_follow_the_morsel_rule(void **state) {
  (void)state;
  pj_engine *e = engine(PJ_MODE_INTERP, 1);
  pj_query *q;
  assert_int_equal(pj_query_compile(e, "FROM slice |> SELECT dur, depth", &q), PJ_OK);
  pj_result *r;
  assert_int_equal(pj_query_run(q, &r), PJ_OK);
  int64_t n = pj_result_row_count(r);
  assert_int_equal(n, ROWS);
  double total[64] = {0}, part[64] = {0}, plain[64] = {0};
  for (int64_t i = 0; i < n; i++) {
    int64_t d = pj_result_int64(r, i, 1);
    assert_true(d >= 0 && d < 64);
    part[d] += (double)pj_result_int64(r, i, 0) * 1.37;
    plain[d] += (double)pj_result_int64(r, i, 0) * 1.37;
    if ((i + 1) % MORSEL == 0 || i + 1 == n)
      for (int k = 0; k < 64; k++) total[k] += part[k], part[k] = 0;
  }
  pj_result_free(r);
  pj_query_free(q);
  pj_engine_close(e);
  /* the plain row-order sum differs for some depth: the test can tell */
  int differ = 0;
  for (int k = 0; k < 64; k++) differ += memcmp(&plain[k], &total[k], sizeof plain[k]) != 0;
  assert_true(differ > 0);
  const char *text = "FROM slice |> EXTEND dur * 1.37 AS x |> AGGREGATE SUM(x) AS s GROUP BY depth";
  for (int m = 0; m < 2; m++)
    for (int th = 1; th <= 4; th *= 3) {
      e = engine(m ? PJ_MODE_JIT : PJ_MODE_INTERP, th);
      assert_int_equal(pj_query_compile(e, text, &q), PJ_OK);
      assert_int_equal(pj_query_run(q, &r), PJ_OK);
      for (int64_t i = 0; i < pj_result_row_count(r); i++) {
        int64_t d = pj_result_int64(r, i, 0);
        double s = pj_result_double(r, i, 1);
        if (memcmp(&s, &total[d], sizeof s))
          fail_msg("%s, %d threads, depth %lld: %a, the rule gives %a", m ? "jit" : "interp", th,
                   (long long)d, s, total[d]);
      }
      pj_result_free(r);
      pj_query_free(q);
      pj_engine_close(e);
    }
}

/* Errors in two morsels: the earlier morsel's is reported (here a later
 * step's, so its offset tells them apart), as one thread reports it. */
static void earliest_error_wins(void **state) {
  (void)state;
  const char *q =
      "FROM slice |> EXTEND CASE WHEN id = 150000 THEN 9223372036854775807 + dur ELSE 0 END AS a "
      "|> EXTEND CASE WHEN id = 1000 THEN -9223372036854775807 - dur - 2 ELSE 0 END AS b "
      "|> AGGREGATE SUM(a) AS sa, SUM(b) AS sb";
  char *want = NULL;
  for (int m = 0; m < 2; m++)
    for (int th = 1; th <= 4; th *= 2)
      for (int rep = 0; rep < (th > 1 ? 5 : 1); rep++) {
        pj_engine *e = engine(m ? PJ_MODE_JIT : PJ_MODE_INTERP, th);
        char *got = run(e, q, NULL);
        pj_engine_close(e);
        assert_non_null(strstr(got, "error: EXTEND: integer overflow"));
        if (!want) {
          want = got;
          continue;
        }
        if (strcmp(want, got)) fail_msg("%s, %d threads: %s, one thread: %s", m ? "jit" : "interp", th, got, want);
        free(got);
      }
  /* the later step's EXTEND (its error has another offset than the
   * first step's alone) */
  char *late = NULL;
  {
    pj_engine *e = engine(PJ_MODE_INTERP, 1);
    char *alt = strdup(q);
    memcpy(strstr(alt, "id = 1000"), "id = -100", 9);
    late = run(e, alt, NULL);
    free(alt);
    pj_engine_close(e);
  }
  assert_non_null(strstr(late, "error: EXTEND: integer overflow"));
  assert_string_not_equal(want, late);
  free(late);
  free(want);
}

/* A worker keeps its table of few groups across its morsels
 * (runtime/aggmerge.h rt_aggkeep_*): each morsel's groups are listed at
 * their first row and their states start from zero there. Groups that
 * first appear late and a NULL key group; no sums at all (the JIT's
 * epoch check must list groups without them); MIN/MAX ties of -0.0 and
 * 0.0 (the earlier morsel's stays); two keys; few groups at first and
 * then a group per row (the worker's table passes PAR_KEEP_MAX and is
 * emptied per morsel from then on); an integer SUM that overflows only
 * across morsels' partials in a merge of the kept table. */
static void kept_tables_match_one_thread(void **state) {
  (void)state;
  static const char *const qs[] = {
      "FROM slice |> EXTEND CASE WHEN id % 11 = 0 THEN NULL ELSE id / 25000 END AS k "
      "|> AGGREGATE COUNT(*) AS n, MAX(dur) AS m, MIN(name) AS mn, ANY_VALUE(id) AS av GROUP BY k",
      "FROM slice |> EXTEND CASE WHEN id % 3 = 0 THEN (0 - 1 - depth) * 0.0 WHEN id % 3 = 1 THEN 0.0 ELSE dur * 0.01 END AS z "
      "|> AGGREGATE MIN(z) AS lo, MAX(0.0 - z) AS hi, SUM(z) AS s, AVG(dur * 0.37) AS a, COUNT(z) AS c "
      "GROUP BY depth % 3 AS k",
      "FROM slice |> EXTEND CASE WHEN id % 7 = 0 THEN NULL ELSE depth % 3 END AS a "
      "|> AGGREGATE SUM(dur) AS s, SUM(dur * 0.1) AS x, MIN(ts) AS t, COUNT(*) AS n GROUP BY a, id / 40000 AS b",
      "FROM slice |> AGGREGATE SUM(dur * 0.37) AS s, COUNT(*) AS n, MAX(name) AS mx "
      "GROUP BY CASE WHEN id < 20000 THEN id % 5 ELSE id END AS k",
      "FROM slice |> EXTEND CASE WHEN id % 40000 = 0 THEN 4611686018427387904 ELSE 0 END AS a "
      "|> AGGREGATE SUM(a) AS s, COUNT(*) AS n GROUP BY id % 3 AS k",
      /* two keys of the pair direct array (store.h RT_AGG_DIRECT2_W),
       * emptied with the table per morsel: pairs in range, out of range
       * (b up to 299) and NULL */
      "FROM slice |> EXTEND CASE WHEN id < 20000 THEN id % 5 ELSE id % 256 END AS a "
      "|> EXTEND CASE WHEN id % 13 = 0 THEN NULL WHEN id < 20000 THEN 0 ELSE (id / 256) % 300 END AS b "
      "|> AGGREGATE SUM(dur * 0.37) AS s, COUNT(*) AS n, MAX(dur) AS m GROUP BY a, b",
  };
  for (size_t qi = 0; qi < sizeof qs / sizeof *qs; qi++) {
    char *want = same_everywhere(qs[qi], qi);
    assert_true(strlen(want) > strlen("result:\n"));
    if (qi == 4) assert_non_null(strstr(want, "error: AGGREGATE: integer overflow"));
    else assert_null(strstr(want, "error"));
    free(want);
  }
}

/* An integer SUM that passes 64 bits only when the morsels' partials are
 * added fails the same way on any thread count: without GROUP BY, and in
 * one of 5,000 groups (past 16 morsels' rows of group sums, so one thread
 * folds lazily, runtime/aggmerge.h: the overflow is met at a fold long
 * after the morsel's end). */
static void sum_overflow_at_merge(void **state) {
  (void)state;
  static const char *const qs[] = {
      "FROM slice |> EXTEND CASE WHEN id % 128 = 0 THEN 4611686018427387904 ELSE 0 END AS a "
      "|> AGGREGATE SUM(a) AS s",
      "FROM slice |> EXTEND CASE WHEN id % 80000 = 0 THEN 4611686018427387904 ELSE 0 END AS a "
      "|> AGGREGATE SUM(a) AS s GROUP BY id % 5000 AS k",
      /* two keys, 20,000 groups: the overflow is met in a merge of
       * many groups by stored hash (rt_aggtab_group_of) */
      "FROM slice |> EXTEND CASE WHEN id % 80000 = 0 THEN 4611686018427387904 ELSE 0 END AS a "
      "|> AGGREGATE SUM(a) AS s, COUNT(*) AS n GROUP BY id % 20000 AS k, id % 2 AS j",
  };
  for (size_t qi = 0; qi < sizeof qs / sizeof *qs; qi++) {
    char *want = NULL;
    for (int m = 0; m < 2; m++)
      for (int th = 1; th <= 4; th *= 2) {
        pj_engine *e = engine(m ? PJ_MODE_JIT : PJ_MODE_INTERP, th);
        char *got = run(e, qs[qi], NULL);
        pj_engine_close(e);
        assert_non_null(strstr(got, "error: AGGREGATE: integer overflow"));
        if (!want) want = got;
        else {
          assert_string_equal(want, got);
          free(got);
        }
      }
    free(want);
  }
}

/* A child process forked after a parallel run runs in parallel with
 * threads of its own (the parent's are not in it) and gets the same rows. */
static void parallel_after_fork(void **state) {
  (void)state;
#if defined(__SANITIZE_THREAD__)
  /* TSan refuses to start threads in a child forked from a threaded
   * process ("not supported"), whatever the code does (make test-tsan) */
  skip();
#endif
  pj_engine *e = engine(PJ_MODE_INTERP, 2);
  const char *q = QUERIES[0];
  int used = 0;
  char *want = run(e, q, &used);
  assert_true(used > 1);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    alarm(120);   /* a child waiting for the parent's threads fails, not hangs */
    int u = 0;
    char *got = run(e, q, &u);
    pj_engine_close(e);
    _exit(u > 1 && !strcmp(got, want) ? 0 : 1);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  free(want);
  pj_engine_close(e);
}

/* ---- the join table built on workers, checked against one thread's ---- */

/* Runs the job on the calling thread alone: rt_par_workers still says
 * `threads`, so the table is cut into as many slot ranges as for that
 * many workers. */
static int one_runner(void *pool, int want, void (*fn)(void *ctx, int worker), void *ctx) {
  (void)pool, (void)want;
  fn(ctx, 0);
  return 1;
}

/* Keys whose home slot lies in the last 4 of a block of 1024 slots (in
 * any table of 1024 slots or more): 40 or so to a block, they run past
 * the end of every range the table is cut into, so those rows are
 * deferred and inserted afterwards by the calling thread. */
static int64_t *crowded_keys(int n) {
  int64_t *k = malloc(sizeof *k * (size_t)n);
  assert_non_null(k);
  int have = 0;
  for (int64_t v = 1; have < n; v++)
    if ((rt_hash_i64((uint64_t)v) & 1023) >= 1020) k[have++] = v;
  return k;
}

/* Every row's key finds the same chain head, and every chain is the same,
 * as one thread's table, for keys of each kind of table. */
static void join_build_matches_one_thread(void **state) {
  (void)state;
  enum { N = 3 * RT_JOIN_PAR_MIN + 77, NCROWD = N / 10 };
  int64_t *crowd = crowded_keys(NCROWD);
  rt_type types[3] = {RT_I64, RT_I64, RT_F64};
  for (int shape = 0; shape < 5; shape++)
    for (int threads = 2; threads <= 64; threads *= 4) {
      rt_rowbuf b;
      assert_true(rt_rowbuf_init(&b, 3, types));
      rt_rowbuf_reserve(&b, N);
      assert_true(b.cap >= N);
      for (int64_t r = 0; r < N; r++) {
        uint64_t h = (uint64_t)r * 0x9e3779b97f4a7c15ull;
        int64_t k0 = shape == 0   ? (int64_t)(h >> 50)              /* direct: 16K keys */
                     : shape == 1 ? (int64_t)(h >> 47) * 1000003     /* hashed, ~8 rows a key */
                     : shape == 2 ? (int64_t)r * 7919                /* hashed, unique */
                     : shape == 3 ? (int64_t)(h >> 54)               /* two keys */
                                  : crowd[h % NCROWD];               /* ~10 rows a key, crowded */
        ((int64_t *)b.data[0])[r] = k0;
        ((int64_t *)b.data[1])[r] = r;
        ((double *)b.data[2])[r] = (double)(r % 13) * 0.5;
        if (r % 101 != 5) rt_bit_set(b.valid[0], (uint32_t)r);   /* some NULL keys */
        rt_bit_set(b.valid[1], (uint32_t)r);
        rt_bit_set(b.valid[2], (uint32_t)r);
      }
      b.nrows = N;
      int keycols[2] = {0, 2}, nk = shape == 3 ? 2 : 1;
      rt_jointab one, many;
      const char *msg;
      assert_int_equal(rt_jointab_build(&one, &b, nk, keycols, false, NULL, &msg), 0);
      b.nrows = N;   /* without the NULL row the build appended */
      rt_par par = {one_runner, NULL, threads};
      assert_int_equal(rt_jointab_build(&many, &b, nk, keycols, false, &par, &msg), 0);
      assert_int_equal(one.direct, shape == 0);
      assert_int_equal(many.direct, one.direct);
      assert_int_equal(many.unique, one.unique);
      assert_int_equal(one.unique, shape == 2);
      for (int64_t r = 0; r < N; r++) {
        if (many.next[r] != one.next[r])
          fail_msg("shape %d, %d threads: row %lld's next", shape, threads, (long long)r);
        if (!rt_bit(b.valid[0], (uint32_t)r)) continue;
        int64_t w[2] = {((int64_t *)b.data[0])[r], 0};
        if (nk == 2) rt_join_f64_word(((double *)b.data[2])[r], &w[1]);
        uint32_t h1 = rt_jointab_find(&one, w), h2 = rt_jointab_find(&many, w);
        if (h1 != h2 || h1 > (uint32_t)r)
          fail_msg("shape %d, %d threads: row %lld finds %u, one thread %u", shape, threads, (long long)r, h2, h1);
      }
      rt_jointab_free(&one);
      rt_jointab_free(&many);
      rt_rowbuf_free(&b);
    }
  free(crowd);
}

/* Out of memory at any point of a build on the workers: a clean "out of
 * memory" with everything given back, or (when only the lists that split
 * the work found no room) one thread's table. */
static void join_build_out_of_memory(void **state) {
  (void)state;
  enum { N = 2 * RT_JOIN_PAR_MIN + 5 };
  rt_type types[1] = {RT_I64};
  rt_rowbuf b;
  assert_true(rt_rowbuf_init(&b, 1, types));
  rt_rowbuf_reserve(&b, N + 1);
  for (int64_t r = 0; r < N; r++) {
    ((int64_t *)b.data[0])[r] = (r % 9000) * 1000003;   /* hashed, ~15 rows a key */
    rt_bit_set(b.valid[0], (uint32_t)r);
  }
  int kc = 0;
  const char *msg;
  rt_jointab one;
  b.nrows = N;
  assert_int_equal(rt_jointab_build(&one, &b, 1, &kc, false, NULL, &msg), 0);
  rt_par par = {one_runner, NULL, 4};
  rt_budget big = {0};
  rt_budget *prev = rt_budget_use(&big);
  rt_jointab t;
  b.nrows = N;
  assert_int_equal(rt_jointab_build(&t, &b, 1, &kc, false, &par, &msg), 0);
  rt_jointab_free(&t);
  int64_t peak = big.peak;
  int failed = 0, fell_back = 0;
  for (int64_t limit = 0; limit <= peak; limit += peak / 64 + 1) {
    rt_budget lim = {.limit = limit};
    rt_budget_use(&lim);
    b.nrows = N;
    int rc = rt_jointab_build(&t, &b, 1, &kc, false, &par, &msg);
    if (rc == 0) {
      fell_back += lim.exceeded;
      for (int64_t r = 0; r < N; r++) assert_int_equal(t.next[r], one.next[r]);
      for (int64_t v = 0; v < 9000; v++) {
        int64_t w = v * 1000003;
        assert_int_equal(rt_jointab_find(&t, &w), rt_jointab_find(&one, &w));
      }
      rt_jointab_free(&t);
    } else {
      failed++;
      assert_string_equal(msg, "out of memory");
      assert_true(lim.exceeded);
    }
    assert_int_equal(lim.used, 0);   /* all given back */
  }
  rt_budget_use(prev);
  assert_true(failed > 0);
  assert_true(fell_back > 0);   /* the lists refused, one thread built it */
  rt_jointab_free(&one);
  rt_rowbuf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(same_for_any_thread_count),
      cmocka_unit_test(null_bounds_are_skipped),
      cmocka_unit_test(sums_follow_the_morsel_rule),
      cmocka_unit_test(earliest_error_wins),
      cmocka_unit_test(sum_overflow_at_merge),
      cmocka_unit_test(kept_tables_match_one_thread),
      cmocka_unit_test(parallel_after_fork),
      cmocka_unit_test(join_build_matches_one_thread),
      cmocka_unit_test(join_build_out_of_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
