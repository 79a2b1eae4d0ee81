/*
 * test_limits.c — limits and cancellation (issue 7): the per-run memory
 * budget, pj_engine_interrupt from another thread and from a signal
 * handler (pipelines and SQL), and "nothing lost": after an error of every
 * class the same engine runs a good statement correctly, and a failed
 * CREATE OR REPLACE PERFETTO TABLE leaves the old table readable from SQL
 * and from pipelines. Every test runs in both backends.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "pipejit.h"

#define NSLICES 200000

static pj_engine *open_engine(pj_mode mode, int64_t nslices) {
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  pj_engine_set_mode(e, mode);
  if (nslices > 0) assert_int_equal(pj_engine_load_sample_trace(e, nslices), PJ_OK);
  return e;
}

/* Runs a script whose last result is one integer; returns it. */
static int cb_int(void *ctx, const pj_result *r, const char *t, size_t l, size_t o) {
  (void)t, (void)l, (void)o;
  int64_t *out = ctx;
  *out = pj_result_row_count(r) > 0 && !pj_result_is_null(r, 0, 0) ? pj_result_int64(r, 0, 0) : -1;
  return 0;
}

static int64_t exec_int(pj_engine *e, const char *script) {
  int64_t v = -2;
  if (pj_engine_exec(e, script, cb_int, &v) != PJ_OK)
    fail_msg("%s\n-> %s", script, pj_engine_errmsg(e));
  return v;
}

static void exec_fails(pj_engine *e, const char *script, pj_status want, const char *msg) {
  pj_status s = pj_engine_exec(e, script, NULL, NULL);
  if (s != want || !strstr(pj_engine_errmsg(e), msg))
    fail_msg("%s\n-> status %d, '%s' (wanted %d, '%s')", script, s, pj_engine_errmsg(e), want, msg);
}

static const pj_mode modes[] = {PJ_MODE_INTERP, PJ_MODE_JIT};

/* ---- memory budget ------------------------------------------------------- */

static void test_budget(void **state) {
  (void)state;
  static const struct {
    const char *query, *msg;
  } over[] = {
      /* a LIMIT past the top k bound (65,536): every row is sorted */
      {"FROM slice |> ORDER BY ts |> LIMIT 100000", "ORDER BY: the query needs more than 1 MB of memory"},
      {"FROM slice |> AGGREGATE COUNT(*) AS n GROUP BY id |> AGGREGATE COUNT(*) AS k",
       "the query needs more than 1 MB of memory (limit set with --max-memory)"},
      {"FROM slice |> SELECT id, ts, dur", "the query needs more than 1 MB"},
      {"FROM slice |> TREE ACCUMULATE DOWN SUM(dur) AS s |> AGGREGATE MAX(s) AS m",
       "the query needs more than 1 MB"},
      /* sparse ids: the numbering's hash map is refused its growth (it
       * used to keep inserting into a full map and probe forever) */
      {"FROM slice |> SET id = id * 7, parent_id = parent_id * 7 "
       "|> TREE ACCUMULATE UP COUNT(*) AS n |> AGGREGATE MAX(n) AS m",
       "TREE ACCUMULATE: the query needs more than 1 MB"},
  };
  for (size_t m = 0; m < 2; m++) {
    pj_engine *e = open_engine(modes[m], NSLICES);
    assert_int_equal(pj_engine_max_memory(e), 0);
    pj_engine_set_max_memory(e, 1 << 20);
    assert_int_equal(pj_engine_max_memory(e), 1 << 20);
    for (size_t i = 0; i < sizeof over / sizeof *over; i++) {
      exec_fails(e, over[i].query, PJ_ERROR, over[i].msg);
      /* The engine is fine: a small pipeline runs within the same limit. */
      assert_int_equal(exec_int(e, "FROM slice |> AGGREGATE COUNT(*) AS n"), NSLICES);
      pj_timing t;
      pj_engine_last_timing(e, &t);
      assert_true(t.mem_peak < (1 << 20));
    }
    /* A top k (ORDER BY … LIMIT 1) holds a few batches' rows, not all. */
    assert_int_equal(exec_int(e, "FROM slice |> ORDER BY ts |> LIMIT 1 |> SELECT id"), 0);
    /* Same queries without a limit: they run, and report what they held. */
    pj_engine_set_max_memory(e, 0);
    assert_int_equal(exec_int(e, "FROM slice |> ORDER BY ts |> LIMIT 100000 |> SELECT id"), 0);
    pj_timing t;
    pj_engine_last_timing(e, &t);
    assert_true(t.mem_peak >= (int64_t)NSLICES * 8);
    assert_int_equal(exec_int(e, over[1].query), NSLICES);
    /* A handle sees a limit set after it was compiled. */
    pj_query *q = NULL;
    assert_int_equal(pj_query_compile(e, "FROM slice |> ORDER BY dur |> LIMIT 3", &q), PJ_OK);
    pj_result *r = NULL;
    assert_int_equal(pj_query_run(q, &r), PJ_OK);
    assert_int_equal(pj_result_row_count(r), 3);
    pj_result_free(r);
    pj_engine_set_max_memory(e, 64 << 10);
    assert_int_equal(pj_query_run(q, &r), PJ_ERROR);
    assert_null(r);
    assert_non_null(strstr(pj_engine_errmsg(e), "65536 bytes of memory"));
    pj_engine_set_max_memory(e, 0);
    assert_int_equal(pj_query_run(q, &r), PJ_OK);
    assert_int_equal(pj_result_row_count(r), 3);
    pj_result_free(r);
    pj_query_free(q);
    pj_engine_close(e);
  }
}

/* ---- interrupt ----------------------------------------------------------- */

typedef struct interrupter {
  pj_engine *e;
  int delay_ms;
  volatile int done;
  int calls;
} interrupter;

/* Waits delay_ms, then interrupts every millisecond until the statement
 * returns (so the test does not depend on when the run starts). */
static void *interrupt_main(void *arg) {
  interrupter *it = arg;
  struct timespec d = {0, it->delay_ms * 1000000L};
  nanosleep(&d, NULL);
  while (!__atomic_load_n(&it->done, __ATOMIC_ACQUIRE)) {
    pj_engine_interrupt(it->e);
    it->calls++;
    struct timespec ms = {0, 1000000L};
    nanosleep(&ms, NULL);
  }
  return NULL;
}

static pj_status exec_interrupted(pj_engine *e, const char *script, int delay_ms) {
  interrupter it = {.e = e, .delay_ms = delay_ms};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, interrupt_main, &it), 0);
  pj_status s = pj_engine_exec(e, script, NULL, NULL);
  __atomic_store_n(&it.done, 1, __ATOMIC_RELEASE);
  pthread_join(th, NULL);
  return s;
}

/* A pipeline that runs for seconds unless stopped: sorts of 2M rows. */
static const char *const long_pipe =
    "FROM slice |> ORDER BY name, dur |> EXTEND dur * 2 AS d |> ORDER BY d, ts "
    "|> AGGREGATE COUNT(*) AS n GROUP BY d |> ORDER BY n |> AGGREGATE COUNT(*) AS k";
/* A SQL statement that never ends. */
static const char *const long_sql =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";

static void test_interrupt_thread(void **state) {
  (void)state;
  for (size_t m = 0; m < 2; m++) {
    pj_engine *e = open_engine(modes[m], 2000000);
    int64_t t0 = (int64_t)time(NULL);
    assert_int_equal(exec_interrupted(e, long_pipe, 30), PJ_INTERRUPTED);
    assert_string_equal(pj_engine_errmsg(e), "interrupted");
    assert_int_equal(exec_interrupted(e, long_sql, 30), PJ_INTERRUPTED);
    assert_string_equal(pj_engine_errmsg(e), "interrupted");
    assert_true((int64_t)time(NULL) - t0 < 20);
    /* Usable afterwards, and an interrupt made while idle is forgotten. */
    pj_engine_interrupt(e);
    assert_int_equal(exec_int(e, "FROM slice |> WHERE dur > 0 |> AGGREGATE COUNT(*) AS n"), 2000000);
    pj_engine_interrupt(e);
    assert_int_equal(exec_int(e, "SELECT count(*) FROM slice"), 2000000);
    /* A handle: PJ_INTERRUPTED, no result, and the next run is whole. */
    pj_query *q = NULL;
    assert_int_equal(pj_query_compile(e, "FROM slice |> ORDER BY name, dur |> AGGREGATE COUNT(*) AS n", &q),
                     PJ_OK);
    interrupter it = {.e = e, .delay_ms = 5};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, interrupt_main, &it), 0);
    pj_result *r = NULL;
    pj_status s = pj_query_run(q, &r);
    __atomic_store_n(&it.done, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    assert_int_equal(s, PJ_INTERRUPTED);
    assert_null(r);
    assert_int_equal(pj_query_run(q, &r), PJ_OK);
    assert_int_equal(pj_result_int64(r, 0, 0), 2000000);
    pj_result_free(r);
    pj_query_free(q);
    pj_engine_close(e);
  }
}

static pj_engine *g_sig_engine;
static void on_alarm(int sig) {
  (void)sig;
  pj_engine_interrupt(g_sig_engine);
}

static void test_interrupt_signal(void **state) {
  (void)state;
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, &old);
  for (size_t m = 0; m < 2; m++) {
    pj_engine *e = open_engine(modes[m], 2000000);
    g_sig_engine = e;
    const char *const scripts[] = {long_pipe, long_sql};
    for (int i = 0; i < 2; i++) {
      /* every 50 ms until the statement stops */
      struct itimerval t = {{0, 50000}, {0, 50000}}, off = {{0, 0}, {0, 0}};
      setitimer(ITIMER_REAL, &t, NULL);
      pj_status s = pj_engine_exec(e, scripts[i], NULL, NULL);
      setitimer(ITIMER_REAL, &off, NULL);
      assert_int_equal(s, PJ_INTERRUPTED);
      assert_string_equal(pj_engine_errmsg(e), "interrupted");
      assert_int_equal(exec_int(e, "FROM slice |> AGGREGATE COUNT(*) AS n"), 2000000);
    }
    pj_engine_close(e);
  }
  sigaction(SIGALRM, &old, NULL);
}

/* ---- nothing lost ---------------------------------------------------------- */

static void test_error_then_good(void **state) {
  (void)state;
  static const struct {
    const char *bad, *msg;
  } cases[] = {
      {"FROM t |> WHERE", "WHERE"},                                        /* parse */
      {"FROM t |> SELECT nope", "no such column: 'nope'"},                 /* bind */
      {"FROM t |> EXTEND v + 9223372036854775807 AS x", "integer overflow"}, /* runtime */
      {"FROM t |> AGGREGATE SUM(v * 4611686018427387904) AS s", "integer overflow"},
      {"FROM (SELECT 1 AS id, 2 AS parent_id UNION ALL SELECT 2, 1) "
       "|> TREE ACCUMULATE UP COUNT(*) AS n",
       "in a cycle"},
      {"INTERVAL INTERSECTION OF (neg AS a, t AS b)", "below zero"},
      {"SELECT * FROM no_such_table", "no such table"},                   /* SQLite */
      {"FROM (SELECT * FROM no_such_table)", "no such table"},
      {"FROM big |> ORDER BY x", "the query needs more than"},            /* budget */
      {"CREATE OR REPLACE PERFETTO TABLE t AS FROM t |> EXTEND v + 9223372036854775807 AS boom",
       "integer overflow"},
      {"CREATE OR REPLACE PERFETTO TABLE t AS FROM t |> SELECT nope", "no such column"},
      {"CREATE OR REPLACE PERFETTO TABLE t AS SELECT * FROM no_such_table", "no such table"},
      {"CREATE OR REPLACE PERFETTO TABLE t AS FROM big |> ORDER BY x", "the query needs more"},
  };
  for (size_t m = 0; m < 2; m++) {
    pj_engine *e = open_engine(modes[m], 0);
    assert_int_equal(pj_engine_exec(e,
                                     "CREATE PERFETTO TABLE t AS SELECT 1 AS id, 5 AS ts, 10 AS dur, "
                                     "40 AS v, NULL AS parent_id UNION ALL SELECT 2, 20, 5, 2, 1;"
                                     "CREATE PERFETTO TABLE neg AS SELECT 1 AS id, -5 AS ts, 10 AS dur;"
                                     "CREATE PERFETTO TABLE big AS WITH RECURSIVE c(x) AS (SELECT 1 "
                                     "UNION ALL SELECT x + 1 FROM c WHERE x < 300000) SELECT x FROM c",
                                     NULL, NULL),
                     PJ_OK);
    pj_engine_set_max_memory(e, 1 << 20);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
      exec_fails(e, cases[i].bad, PJ_ERROR, cases[i].msg);
      /* The old t, whole, from a pipeline and from SQL. */
      assert_int_equal(exec_int(e, "FROM t |> AGGREGATE SUM(v) AS s"), 42);
      assert_int_equal(exec_int(e, "SELECT sum(v) + count(*) FROM t"), 44);
      assert_int_equal(exec_int(e, "FROM t |> TREE ACCUMULATE UP COUNT(*) AS n "
                                   "|> AGGREGATE COUNT(*) AS k"), 2);
    }
    /* Interrupt, then the good statements again. */
    assert_int_equal(exec_interrupted(e, long_sql, 10), PJ_INTERRUPTED);
    assert_int_equal(exec_int(e, "FROM t |> AGGREGATE SUM(v) AS s"), 42);
    /* A script stops at its first error; the next script starts afresh. */
    exec_fails(e, "SELECT 1; FROM t |> SELECT nope; SELECT 2", PJ_ERROR, "nope");
    assert_int_equal(exec_int(e, "SELECT 1; SELECT 3"), 3);
    pj_engine_close(e);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_budget),
      cmocka_unit_test(test_interrupt_thread),
      cmocka_unit_test(test_interrupt_signal),
      cmocka_unit_test(test_error_then_good),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
