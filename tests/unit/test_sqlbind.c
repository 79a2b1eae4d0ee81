/*
 * test_sqlbind.c — binding a SQL source does not run its query (issue 15,
 * item 3). A SQLite function counts the rows the query computes:
 *   - a source whose columns all have declared types is never stepped
 *     while binding, so one that fails at row 10,000 compiles and fails
 *     only when run, naming the error;
 *   - a column without a declared type is typed from the first rows, which
 *     the script runner's run then goes on from: the query computes each
 *     row once (binding used to read 8,192 rows and the run read them
 *     again);
 *   - a handle compiled and not yet run holds no open statement, so the
 *     connection can DROP a table in between.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "pipejit.h"

static int64_t computed;   /* rows bump() saw */

/* bump(x): x, counting the call; x = 10000 fails when fail_at is set. */
static int fail_at;
static void bump(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  computed++;
  if (fail_at && sqlite3_value_int64(argv[0]) == fail_at) {
    sqlite3_result_error(ctx, "bump: row 10000 is poisoned", -1);
    return;
  }
  sqlite3_result_value(ctx, argv[0]);
}

static void exec_ok(pj_engine *e, const char *script) {
  if (pj_engine_exec(e, script, NULL, NULL) != PJ_OK)
    fail_msg("%s\n-> %s", script, pj_engine_errmsg(e));
}

static int setup(void **state) {
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  sqlite3 *db = pj_engine_sqlite(e);
  assert_int_equal(sqlite3_create_function(db, "bump", 1, SQLITE_UTF8, NULL, bump, NULL, NULL),
                   SQLITE_OK);
  /* undeclared: no type on x; declared: x INTEGER */
  exec_ok(e, "CREATE TABLE undeclared AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL "
             "SELECT n + 1 FROM r WHERE n < 20000) SELECT n AS x FROM r;"
             "CREATE TABLE declared(x INTEGER); INSERT INTO declared SELECT x FROM undeclared");
  computed = 0;
  fail_at = 0;
  *state = e;
  return 0;
}

static int teardown(void **state) {
  pj_engine_close(*state);
  return 0;
}

static int64_t sum_cb_value;
static int sum_cb(void *ctx, const pj_result *r, const char *t, size_t l, size_t o) {
  (void)ctx, (void)t, (void)l, (void)o;
  sum_cb_value = pj_result_int64(r, 0, 0);
  return 0;
}

/* Declared types: compiling steps nothing; the failure is the run's. */
static void test_declared_binds_without_stepping(void **state) {
  pj_engine *e = *state;
  fail_at = 10000;
  pj_query *q = NULL;
  assert_int_equal(pj_query_compile(e, "FROM (SELECT x FROM declared WHERE bump(x) > 0) "
                                       "|> AGGREGATE SUM(x) AS s", &q), PJ_OK);
  assert_int_equal(computed, 0);
  pj_result *r = NULL;
  assert_int_equal(pj_query_run(q, &r), PJ_ERROR);
  assert_non_null(strstr(pj_engine_errmsg(e), "row 10000 is poisoned"));
  assert_int_equal(computed, 10000);
  pj_query_free(q);
}

/* Undeclared: compiling reads at most one batch, and one that fails later
 * still compiles. */
static void test_undeclared_binds_first_rows_only(void **state) {
  pj_engine *e = *state;
  fail_at = 10000;
  pj_query *q = NULL;
  assert_int_equal(pj_query_compile(e, "FROM (SELECT bump(x) AS y FROM undeclared) "
                                       "|> AGGREGATE SUM(y) AS s", &q), PJ_OK);
  assert_true(computed > 0 && computed <= 8192);
  /* No statement is left open: the connection may drop a table. */
  exec_ok(e, "CREATE TABLE other(a); DROP TABLE other");
  pj_result *r = NULL;
  assert_int_equal(pj_query_run(q, &r), PJ_ERROR);
  assert_non_null(strstr(pj_engine_errmsg(e), "row 10000 is poisoned"));
  pj_query_free(q);
}

/* The script runner binds and runs at once: every row is computed once,
 * the rows read to type the column included, and the answer is whole. */
static void test_script_computes_each_row_once(void **state) {
  pj_engine *e = *state;
  static const pj_mode modes[] = {PJ_MODE_INTERP, PJ_MODE_JIT};
  for (int m = 0; m < 2; m++) {
    pj_engine_set_mode(e, modes[m]);
    computed = 0;
    sum_cb_value = -1;
    assert_int_equal(pj_engine_exec(e, "FROM (SELECT bump(x) AS y, 'r' || x AS label FROM undeclared) "
                                       "|> WHERE label <> 'r5' |> AGGREGATE SUM(y) AS s",
                                    sum_cb, NULL), PJ_OK);
    assert_int_equal(computed, 20000);
    assert_int_equal(sum_cb_value, 20000LL * 20001 / 2 - 5);
  }
  /* Named tables too, and the next statement may drop one. */
  computed = 0;
  exec_ok(e, "CREATE TABLE t2 AS SELECT bump(x) AS x FROM undeclared");
  assert_int_equal(computed, 20000);
  computed = 0;
  assert_int_equal(pj_engine_exec(e, "FROM t2 |> AGGREGATE SUM(x) AS s; DROP TABLE t2",
                                  sum_cb, NULL), PJ_OK);
  assert_int_equal(sum_cb_value, 20000LL * 20001 / 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_declared_binds_without_stepping, setup, teardown),
    cmocka_unit_test_setup_teardown(test_undeclared_binds_first_rows_only, setup, teardown),
    cmocka_unit_test_setup_teardown(test_script_computes_each_row_once, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
