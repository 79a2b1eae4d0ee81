/*
 * test_subquery.c — subqueries in expressions through query handles
 * (LANGUAGE.md §5), on every backend: a subquery runs once per run (not
 * per row or batch, counted by a SQLite function it calls), again at the
 * next run of the same handle (the data may have changed), with the
 * run's parameter values ($x and ? inside it are the pipeline's, numbered
 * in text order), a pipeline as the subquery likewise, and a handle
 * rebinds when a scalar's sampled type no longer fits or a table a
 * pipeline subquery reads is replaced.
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
#include "pipejit.h"

static int g_calls;

/* tick(x): x, counting the calls. */
static void tick(sqlite3_context *cx, int argc, sqlite3_value **argv) {
  (void)argc;
  g_calls++;
  sqlite3_result_value(cx, argv[0]);
}

static int nmodes(pj_mode *m) {
  int n = 0;
  m[n++] = PJ_MODE_INTERP;
  rt_err err = {.offset = -1};
  cg_jit *j = cg_jit_new(&err);
  if (j) {
    cg_jit_free(j);
    m[n++] = PJ_MODE_JIT;
  }
  return n;
}

static void exec_ok(pj_engine *e, const char *script) {
  if (pj_engine_exec(e, script, NULL, NULL) != PJ_OK)
    fail_msg("%s\n-> %s", script, pj_engine_errmsg(e));
}

static pj_engine *open_engine(void) {
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  sqlite3 *db = pj_engine_sqlite(e);
  assert_int_equal(sqlite3_create_function(db, "tick", 1, SQLITE_UTF8, NULL, tick, NULL, NULL),
                   SQLITE_OK);
  /* 20,000 rows: three batches */
  exec_ok(e, "CREATE PERFETTO TABLE big AS WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL "
             "SELECT i + 1 FROM n WHERE i < 19999) SELECT i, i % 7 AS m, 'w' || (i % 5) AS w "
             "FROM n;"
             "CREATE TABLE keys(k INTEGER, name TEXT);"
             "INSERT INTO keys VALUES (1, 'w1'), (3, 'w3'), (NULL, NULL)");
  return e;
}

static pj_query *compile(pj_engine *e, const char *text) {
  pj_query *q = NULL;
  if (pj_query_compile(e, text, &q) != PJ_OK) fail_msg("%s\n-> %s", text, pj_engine_errmsg(e));
  return q;
}

static int64_t run_count(pj_query *q, pj_engine *e) {
  pj_result *r = NULL;
  if (pj_query_run(q, &r) != PJ_OK) fail_msg("run: %s", pj_engine_errmsg(e));
  assert_int_equal(pj_result_row_count(r), 1);
  int64_t n = pj_result_int64(r, 0, 0);
  pj_result_free(r);
  return n;
}

/* Once per run, whatever the number of rows and batches; again at each
 * run, reading the data of that run. */
static void test_once_per_run(void **state) {
  (void)state;
  pj_mode modes[2];
  int nm = nmodes(modes);
  for (int m = 0; m < nm; m++) {
    pj_engine *e = open_engine();
    pj_engine_set_mode(e, modes[m]);
    pj_query *q = compile(e, "FROM big |> WHERE m IN (SELECT tick(k) FROM keys) AND "
                             "EXISTS (SELECT tick(1)) |> EXTEND (SELECT tick(max(k)) FROM keys) "
                             "AS mx |> AGGREGATE COUNT(*) AS n, SUM(mx) AS s");
    int before = g_calls;
    pj_result *r = NULL;
    assert_int_equal(pj_query_run(q, &r), PJ_OK);
    /* m in (1, 3): 2 of every 7 values of i */
    assert_int_equal(pj_result_int64(r, 0, 0), 5714);
    assert_int_equal(pj_result_int64(r, 0, 1), 5714 * 3);
    pj_result_free(r);
    /* IN: 3 rows of keys; EXISTS: 1; the scalar: 1 */
    assert_int_equal(g_calls - before, 5);

    exec_ok(e, "INSERT INTO keys VALUES (5, 'w0')");
    before = g_calls;
    assert_int_equal(pj_query_run(q, &r), PJ_OK);
    assert_int_equal(pj_result_int64(r, 0, 0), 5714 + 2857);
    assert_int_equal(pj_result_int64(r, 0, 1), (5714 + 2857) * 5);
    pj_result_free(r);
    /* 6, and 1 more: the data changed, so the handle bound again, which
     * samples the type of the scalar (it has no declared type) */
    assert_int_equal(g_calls - before, 7);
    pj_query_free(q);

    /* No row reaches the subquery: it never runs. */
    q = compile(e, "FROM big |> WHERE i < 0 |> EXTEND (SELECT tick(1)) AS z");
    before = g_calls;
    assert_int_equal(pj_query_run(q, &r), PJ_OK);
    assert_int_equal(pj_result_row_count(r), 0);
    pj_result_free(r);
    assert_int_equal(g_calls, before);
    pj_query_free(q);
    pj_engine_close(e);
  }
}

/* Parameters inside a subquery are the pipeline's: numbered in text order
 * with the rest (SQLite's rules), typed when bound, new values each run. */
static void test_params(void **state) {
  (void)state;
  pj_mode modes[2];
  int nm = nmodes(modes);
  for (int m = 0; m < nm; m++) {
    pj_engine *e = open_engine();
    pj_engine_set_mode(e, modes[m]);
    pj_query *q = compile(e, "FROM big |> WHERE i < ? AND m IN (SELECT k FROM keys WHERE k >= $min"
                             " OR name = ?) |> AGGREGATE COUNT(*) AS n");
    assert_int_equal(pj_query_param_count(q), 3);
    assert_int_equal(pj_query_param_index(q, "$min"), 2);
    assert_int_equal(pj_query_bind_int64(q, 1, 70), PJ_OK);
    assert_int_equal(pj_query_bind_int64(q, 2, 3), PJ_OK);
    assert_int_equal(pj_query_bind_null(q, 3), PJ_OK);
    assert_int_equal(run_count(q, e), 10);   /* m = 3 among i < 70 */
    assert_int_equal(pj_query_bind_int64(q, 2, 0), PJ_OK);
    assert_int_equal(run_count(q, e), 20);   /* m in (1, 3) */
    /* a text value: the handle binds again for it */
    assert_int_equal(pj_query_bind_int64(q, 2, 100), PJ_OK);
    assert_int_equal(pj_query_bind_text(q, 3, "w1", 2), PJ_OK);
    assert_int_equal(run_count(q, e), 10);   /* m = 1 */
    pj_query_free(q);

    /* a scalar with a text parameter; unbound, the run fails naming it */
    q = compile(e, "FROM big |> WHERE m = (SELECT k FROM keys WHERE name = $n) |> "
                   "AGGREGATE COUNT(*) AS n");
    pj_result *r = NULL;
    assert_int_equal(pj_query_run(q, &r), PJ_ERROR);
    assert_string_equal(pj_engine_errmsg(e), "WHERE: parameter $n is not bound");
    assert_int_equal(pj_query_bind_text(q, 1, "w3", 2), PJ_OK);
    assert_int_equal(run_count(q, e), 2857);
    assert_int_equal(pj_query_bind_text(q, 1, "none", 4), PJ_OK);
    assert_int_equal(run_count(q, e), 0);
    pj_query_free(q);
    pj_engine_close(e);
  }
}

/* A pipeline subquery: its parameters are the pipeline's too, and a
 * columnar table it reads that is replaced makes the handle bind again. */
static void test_pipeline_subquery(void **state) {
  (void)state;
  pj_mode modes[2];
  int nm = nmodes(modes);
  for (int m = 0; m < nm; m++) {
    pj_engine *e = open_engine();
    pj_engine_set_mode(e, modes[m]);
    exec_ok(e, "CREATE PERFETTO TABLE few AS SELECT 1 AS v UNION ALL SELECT 2");
    pj_query *q = compile(e, "FROM big |> WHERE i < ? AND m IN (FROM few |> WHERE v >= $lo |> "
                             "SELECT v) |> AGGREGATE COUNT(*) AS n");
    assert_int_equal(pj_query_param_count(q), 2);
    assert_int_equal(pj_query_param_index(q, "$lo"), 2);
    assert_int_equal(pj_query_bind_int64(q, 1, 70), PJ_OK);
    assert_int_equal(pj_query_bind_int64(q, 2, 0), PJ_OK);
    assert_int_equal(run_count(q, e), 20);   /* m in (1, 2) among i < 70 */
    assert_int_equal(pj_query_bind_int64(q, 2, 2), PJ_OK);
    assert_int_equal(run_count(q, e), 10);
    exec_ok(e, "CREATE OR REPLACE PERFETTO TABLE few AS SELECT 2 AS v UNION ALL SELECT 3 "
               "UNION ALL SELECT 4");
    assert_int_equal(run_count(q, e), 30);   /* m in (2, 3, 4) */
    pj_query_free(q);
    pj_engine_close(e);
  }
}

/* A scalar typed from its value when bound: after the data changes, the
 * handle binds again and the new type is the one it runs with. */
static void test_scalar_type_follows_data(void **state) {
  (void)state;
  pj_mode modes[2];
  int nm = nmodes(modes);
  for (int m = 0; m < nm; m++) {
    pj_engine *e = open_engine();
    pj_engine_set_mode(e, modes[m]);
    exec_ok(e, "CREATE TABLE dyn(v)");
    exec_ok(e, "INSERT INTO dyn VALUES (2)");
    pj_query *q = compile(e, "FROM big |> WHERE i = 0 |> SELECT (SELECT v FROM dyn) AS v");
    pj_result *r = NULL;
    assert_int_equal(pj_query_run(q, &r), PJ_OK);
    assert_int_equal(pj_result_int64(r, 0, 0), 2);
    pj_result_free(r);
    exec_ok(e, "UPDATE dyn SET v = 'two'");
    assert_int_equal(pj_query_run(q, &r), PJ_OK);
    size_t n;
    assert_string_equal(pj_result_text(r, 0, 0, &n), "two");
    pj_result_free(r);
    pj_query_free(q);
    pj_engine_close(e);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_once_per_run),
      cmocka_unit_test(test_params),
      cmocka_unit_test(test_pipeline_subquery),
      cmocka_unit_test(test_scalar_type_follows_data),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
