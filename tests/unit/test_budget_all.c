/*
 * test_budget_all.c — the memory budget covers every working array and
 * names the stage that holds the memory (issue 12, items 3 and 4).
 *
 *  - INTERVAL INTERSECTION OF (a AS x, a AS y) over 20,000 identical
 *    intervals has 400,000,000 regions; its scratch (candidate regions,
 *    their sort) grew to 4 GB under a 100 MB budget, and then failed with
 *    the budget error once charged. The regions now stream into the
 *    AGGREGATE as they are made: it answers 400000000 under 100 MB and
 *    under 4 MB, its budget high-water mark stays a few MB (the operands
 *    and the sweep's per-row arrays, nothing per region), and the
 *    process's peak RSS grows by no more than a fixed allowance (measured
 *    with getrusage, not time).
 *  - A memory error names the stage holding the memory and what each
 *    holds: TREE ACCUMULATE's arrays, not the AGGREGATE or OUTPUT whose
 *    small growth happened to be refused.
 *  - ORDER BY's permutation, an INTERVAL JOIN's index and a GRAPH
 *    source's arrays are charged too:
 *    a budget that the buffered rows fit in but their working arrays do
 *    not is refused, naming the stage.
 * Both backends.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "pipejit.h"

#if defined(__SANITIZE_ADDRESS__)
/* Freed memory otherwise waits in ASan's quarantine (256 MB), and the
 * resident set grows whatever the engine keeps. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "quarantine_size_mb=0"; }
#endif

static const pj_mode modes[] = {PJ_MODE_INTERP, PJ_MODE_JIT};

static void exec_ok(pj_engine *e, const char *script) {
  if (pj_engine_exec(e, script, NULL, NULL) != PJ_OK)
    fail_msg("%s\n-> %s", script, pj_engine_errmsg(e));
}

static int cb_int(void *ctx, const pj_result *r, const char *t, size_t l, size_t o) {
  (void)t, (void)l, (void)o;
  *(int64_t *)ctx = pj_result_row_count(r) ? pj_result_int64(r, 0, 0) : -1;
  return 0;
}

static long peak_rss_mb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024;
}

static void test_self_intersection_under_budget(void **state) {
  (void)state;
  static const int64_t budgets[] = {(int64_t)100 << 20, (int64_t)4 << 20};
  for (int m = 0; m < 2; m++) {
    pj_engine *e = NULL;
    assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
    pj_engine_set_mode(e, modes[m]);
    exec_ok(e, "CREATE PERFETTO TABLE a AS WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL "
               "SELECT i + 1 FROM n WHERE i < 19999) SELECT i AS id, 100 AS ts, 50 AS dur FROM n");
    for (int b = 0; b < 2; b++) {
      long before = peak_rss_mb();
      pj_engine_set_max_memory(e, budgets[b]);
      int64_t n = -2;
      pj_status s = pj_engine_exec(
          e, "INTERVAL INTERSECTION OF (a AS x, a AS y) |> AGGREGATE COUNT(*) AS n", cb_int, &n);
      long after = peak_rss_mb();
      pj_timing t;
      pj_engine_last_timing(e, &t);
      print_message("self-intersection under %lld MB (%s): status %d, budget high-water %.2f MB, "
                    "peak RSS %ld MB -> %ld MB\n", (long long)(budgets[b] >> 20),
                    m ? "jit" : "interp", s, (double)t.mem_peak / (1 << 20), before, after);
      if (s != PJ_OK) fail_msg("%s", pj_engine_errmsg(e));
      assert_int_equal(n, 400000000);
      /* 40,000 operand rows: about 40 bytes a row and a batch of
       * regions, never a byte per region */
      if (t.mem_peak > (int64_t)3 << 20) fail_msg("budget high-water %lld", (long long)t.mem_peak);
      /* the JIT's compile and working slack, far from the 4 GB it took */
      if (after - before > 64) fail_msg("peak RSS grew by %ld MB", after - before);
    }
    /* the engine still answers within the budget */
    int64_t n = -2;
    assert_int_equal(pj_engine_exec(e, "FROM a |> AGGREGATE COUNT(*) AS n", cb_int, &n), PJ_OK);
    assert_int_equal(n, 20000);
    pj_engine_close(e);
  }
}

/* 200,000 nodes in a binary tree under 2 MB: TREE ACCUMULATE's arrays do
 * not fit, whichever stage's growth is refused last. */
static void test_error_names_the_holder(void **state) {
  (void)state;
  static const char *const tails[] = {"|> AGGREGATE MAX(t) AS m", "|> WHERE id = 0",
                                      "|> SELECT t"};
  for (int m = 0; m < 2; m++) {
    pj_engine *e = NULL;
    assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
    pj_engine_set_mode(e, modes[m]);
    exec_ok(e, "CREATE PERFETTO TABLE big AS WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT "
               "i + 1 FROM n WHERE i < 199999) SELECT i AS id, CASE WHEN i = 0 THEN NULL ELSE "
               "(i - 1) / 2 END AS parent_id, i % 7 AS v FROM n");
    pj_engine_set_max_memory(e, (int64_t)2 << 20);
    for (int k = 0; k < 3; k++) {
      char q[256];
      snprintf(q, sizeof q, "FROM big |> TREE ACCUMULATE UP SUM(v) AS t %s", tails[k]);
      assert_int_equal(pj_engine_exec(e, q, NULL, NULL), PJ_ERROR);
      const char *msg = pj_engine_errmsg(e);
      if (strncmp(msg, "TREE ACCUMULATE: the query needs more than 2 MB of memory", 57) ||
          !strstr(msg, "TREE ACCUMULATE holds"))
        fail_msg("%s\n-> %s", q, msg);
    }
    pj_engine_close(e);
  }
}

/* ORDER BY: 100,000 rows of one int64 column are 0.8 MB of buffer, and
 * the sort's keys and permutation as much again. */
static void test_sort_arrays_are_charged(void **state) {
  (void)state;
  for (int m = 0; m < 2; m++) {
    pj_engine *e = NULL;
    assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
    pj_engine_set_mode(e, modes[m]);
    exec_ok(e, "CREATE PERFETTO TABLE s AS WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT "
               "i + 1 FROM n WHERE i < 99999) SELECT (i * 7919) % 100000 AS v FROM n");
    pj_engine_set_max_memory(e, (int64_t)5 << 20);
    int64_t first = -1;
    /* a LIMIT past the top k bound (65,536): every row is sorted */
    assert_int_equal(pj_engine_exec(e, "FROM s |> ORDER BY v DESC |> LIMIT 70000", cb_int, &first),
                     PJ_OK);
    assert_int_equal(first, 99999);
    pj_timing t;
    pj_engine_last_timing(e, &t);
    /* the buffer (0.8 MB + validity) and the sort's arrays (keys and two
     * permutations: 1.6 MB) at once */
    if (t.mem_peak < 2 * 800000) fail_msg("peak %lld: the sort's arrays were not charged",
                                          (long long)t.mem_peak);
    pj_engine_close(e);
  }
}

/* An INTERVAL JOIN's operand index is the join's. */
static void test_join_index_is_charged(void **state) {
  (void)state;
  for (int m = 0; m < 2; m++) {
    pj_engine *e = NULL;
    assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
    pj_engine_set_mode(e, modes[m]);
    exec_ok(e, "CREATE PERFETTO TABLE b AS WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT "
               "i + 1 FROM n WHERE i < 199999) SELECT i AS id, i * 10 AS ts, 5 AS dur FROM n;"
               "CREATE PERFETTO TABLE p AS SELECT 0 AS id, 15 AS ts, 10 AS dur");
    pj_engine_set_max_memory(e, (int64_t)1 << 20);
    pj_status s = pj_engine_exec(
        e, "FROM p |> INTERVAL JOIN b AS o OVERLAPPING BOUNDS |> AGGREGATE COUNT(*) AS n", NULL,
        NULL);
    assert_int_equal(s, PJ_ERROR);
    if (!strstr(pj_engine_errmsg(e), "INTERVAL JOIN: the query needs more than 1 MB"))
      fail_msg("%s", pj_engine_errmsg(e));
    pj_engine_close(e);
  }
}

/* A graph source's arrays (§9.5: the edge lists, the walk's, the tree)
 * are the stage's: a budget its three relation buffers fit in (4.8 MB)
 * but not the arrays is refused, naming the stage; without it the
 * answer. */
static void test_graph_arrays_are_charged(void **state) {
  (void)state;
  for (int m = 0; m < 2; m++) {
    pj_engine *e = NULL;
    assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
    pj_engine_set_mode(e, modes[m]);
    exec_ok(e, "CREATE PERFETTO TABLE gn AS WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT "
               "i + 1 FROM n WHERE i < 199999) SELECT i AS id FROM n;"
               "CREATE PERFETTO TABLE ge AS SELECT id AS src, (id * 7 + 1) % 200000 AS dst FROM gn");
    const char *q = "GRAPH DFS TREE NODES gn EDGES ge FROM (SELECT 0 AS id) |> AGGREGATE MAX(depth) AS d";
    int64_t d = -1;
    assert_int_equal(pj_engine_exec(e, q, cb_int, &d), PJ_OK);
    assert_int_equal(d, 1999);
    pj_engine_set_max_memory(e, (int64_t)8 << 20);
    assert_int_equal(pj_engine_exec(e, q, NULL, NULL), PJ_ERROR);
    if (!strstr(pj_engine_errmsg(e), "GRAPH DFS TREE: the query needs more than 8 MB") ||
        !strstr(pj_engine_errmsg(e), "GRAPH DFS TREE holds"))
      fail_msg("%s", pj_engine_errmsg(e));
    pj_engine_close(e);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_graph_arrays_are_charged),
      cmocka_unit_test(test_self_intersection_under_budget),
      cmocka_unit_test(test_error_names_the_holder),
      cmocka_unit_test(test_sort_arrays_are_charged),
      cmocka_unit_test(test_join_index_is_charged),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
