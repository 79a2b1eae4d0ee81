/*
 * test_stale.c — compiled plans never answer from an outdated schema
 * (issue 12, item 1). A pj_query handle and the engine's compile cache
 * keep plans that read SQLite columns by position and with the types they
 * had when bound; after DROP/CREATE with the columns swapped, a column
 * that became TEXT, ALTER TABLE … ADD COLUMN, or a new view of the same
 * name, the same handle must bind again and answer from the new schema,
 * on both backends, and a handle whose query no longer binds fails with
 * the bind error (and works again once the table is back).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pipejit.h"

static const pj_mode modes[] = {PJ_MODE_INTERP, PJ_MODE_JIT, PJ_MODE_AUTO};

static void exec_ok(pj_engine *e, const char *script) {
  if (pj_engine_exec(e, script, NULL, NULL) != PJ_OK)
    fail_msg("%s\n-> %s", script, pj_engine_errmsg(e));
}

static pj_query *compile_ok(pj_engine *e, const char *text) {
  pj_query *q = NULL;
  if (pj_query_compile(e, text, &q) != PJ_OK) fail_msg("%s\n-> %s", text, pj_engine_errmsg(e));
  return q;
}

/* The result as "v|v;v|v" (NULL as empty), columns first: "a,b:". */
static char *show(pj_engine *e, pj_query *q) {
  pj_result *r = NULL;
  if (pj_query_run(q, &r) != PJ_OK) fail_msg("run -> %s", pj_engine_errmsg(e));
  static char buf[4096];
  size_t n = 0;
  buf[0] = 0;
  for (int c = 0; c < pj_result_column_count(r); c++)
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", c ? "," : "", pj_result_column_name(r, c));
  n += (size_t)snprintf(buf + n, sizeof buf - n, ":");
  for (int64_t i = 0; i < pj_result_row_count(r); i++) {
    for (int c = 0; c < pj_result_column_count(r); c++) {
      if (c) n += (size_t)snprintf(buf + n, sizeof buf - n, "|");
      if (pj_result_is_null(r, i, c)) continue;
      if (pj_result_column_type(r, c) == PJ_TYPE_STRING)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s", pj_result_text(r, i, c, NULL));
      else if (pj_result_column_type(r, c) == PJ_TYPE_DOUBLE)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%g", pj_result_double(r, i, c));
      else
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%lld",
                              (long long)pj_result_int64(r, i, c));
    }
    n += (size_t)snprintf(buf + n, sizeof buf - n, ";");
  }
  pj_result_free(r);
  return buf;
}

static pj_engine *open_mode(pj_mode m) {
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  pj_engine_set_mode(e, m);
  return e;
}

/* The example: the columns swap places in a table of the same
 * name; a plan reading by position returned no rows. */
static void test_columns_swapped(void **state) {
  (void)state;
  for (int m = 0; m < 3; m++) {
    pj_engine *e = open_mode(modes[m]);
    exec_ok(e, "CREATE TABLE t(a INTEGER, b INTEGER); INSERT INTO t VALUES (1, 2)");
    pj_query *q = compile_ok(e, "FROM t |> SELECT a, b |> WHERE a = 1");
    assert_string_equal(show(e, q), "a,b:1|2;");
    exec_ok(e, "DROP TABLE t; CREATE TABLE t(b INTEGER, a INTEGER); INSERT INTO t VALUES (2, 1)");
    assert_string_equal(show(e, q), "a,b:1|2;");
    assert_string_equal(show(e, q), "a,b:1|2;");   /* and stays bound to the new schema */
    pj_query_free(q);
    pj_engine_close(e);
  }
}

/* A column that became TEXT: the old plan typed it integer and failed
 * with "has a text value in row 1". */
static void test_column_became_text(void **state) {
  (void)state;
  for (int m = 0; m < 3; m++) {
    pj_engine *e = open_mode(modes[m]);
    exec_ok(e, "CREATE TABLE t(a INTEGER, b INTEGER); INSERT INTO t VALUES (1, 2)");
    pj_query *q = compile_ok(e, "FROM t |> SELECT a, b");
    assert_string_equal(show(e, q), "a,b:1|2;");
    exec_ok(e, "DROP TABLE t; CREATE TABLE t(a TEXT, b INTEGER); INSERT INTO t VALUES ('x', 2)");
    assert_string_equal(show(e, q), "a,b:x|2;");
    pj_query_free(q);
    pj_engine_close(e);
  }
}

/* ALTER TABLE … ADD COLUMN: the old plan failed with "table
 * __pipeline_source has 3 values for 2 columns"; FROM t alone shows the
 * new column. */
static void test_add_column(void **state) {
  (void)state;
  for (int m = 0; m < 3; m++) {
    pj_engine *e = open_mode(modes[m]);
    exec_ok(e, "CREATE TABLE t(a INTEGER, b INTEGER); INSERT INTO t VALUES (1, 2)");
    pj_query *sel = compile_ok(e, "FROM t |> SELECT b");
    pj_query *all = compile_ok(e, "FROM t");
    assert_string_equal(show(e, sel), "b:2;");
    assert_string_equal(show(e, all), "a,b:1|2;");
    exec_ok(e, "ALTER TABLE t ADD COLUMN c TEXT DEFAULT 'z'");
    assert_string_equal(show(e, sel), "b:2;");
    assert_string_equal(show(e, all), "a,b,c:1|2|z;");
    pj_query_free(sel);
    pj_query_free(all);
    pj_engine_close(e);
  }
}

/* A table replaced by a view of the same name, and a subquery source. */
static void test_view_and_subquery(void **state) {
  (void)state;
  pj_engine *e = open_mode(PJ_MODE_JIT);
  exec_ok(e, "CREATE TABLE t(a INTEGER, b INTEGER); INSERT INTO t VALUES (1, 2);"
             "CREATE TABLE u(x INTEGER, y INTEGER); INSERT INTO u VALUES (5, 6)");
  pj_query *q = compile_ok(e, "FROM t |> EXTEND a + b AS s");
  pj_query *sub = compile_ok(e, "FROM (SELECT * FROM t) |> SELECT b");
  assert_string_equal(show(e, q), "a,b,s:1|2|3;");
  assert_string_equal(show(e, sub), "b:2;");
  exec_ok(e, "DROP TABLE t; CREATE VIEW t AS SELECT y AS b, x AS a FROM u");
  assert_string_equal(show(e, q), "b,a,s:6|5|11;");
  assert_string_equal(show(e, sub), "b:6;");
  pj_query_free(q);
  pj_query_free(sub);
  pj_engine_close(e);
}

/* A handle whose query no longer binds fails with the bind error, and
 * binds again once the table is back. */
static void test_no_longer_binds(void **state) {
  (void)state;
  for (int m = 0; m < 3; m++) {
    pj_engine *e = open_mode(modes[m]);
    exec_ok(e, "CREATE TABLE t(a INTEGER, b INTEGER); INSERT INTO t VALUES (1, 2)");
    pj_query *q = compile_ok(e, "FROM t |> SELECT a, b");
    assert_string_equal(show(e, q), "a,b:1|2;");
    exec_ok(e, "DROP TABLE t; CREATE TABLE t(a INTEGER, c INTEGER); INSERT INTO t VALUES (1, 3)");
    pj_result *r = NULL;
    assert_int_equal(pj_query_run(q, &r), PJ_ERROR);
    assert_null(r);
    assert_non_null(strstr(pj_engine_errmsg(e), "SELECT: no such column: 'b'"));
    assert_int_equal(pj_engine_errline(e), 1);
    exec_ok(e, "DROP TABLE t");
    assert_int_equal(pj_query_run(q, &r), PJ_ERROR);
    assert_non_null(strstr(pj_engine_errmsg(e), "no such table: 't'"));
    /* the dumps say so too, without crashing on the missing plan */
    assert_string_equal(pj_query_plan(q), "");
    exec_ok(e, "CREATE TABLE t(b INTEGER, a INTEGER); INSERT INTO t VALUES (7, 8)");
    assert_string_equal(show(e, q), "a,b:8|7;");
    pj_query_free(q);
    pj_engine_close(e);
  }
}

/* The compile cache: a handle compiled before the change must not hand
 * its code to a handle of the same text compiled after it, and a new
 * columnar table replacing the SQLite one is read from then on. */
static void test_compile_cache_and_catalog(void **state) {
  (void)state;
  pj_engine *e = open_mode(PJ_MODE_JIT);
  const char *text = "FROM t |> WHERE a = 1 |> SELECT a, b";
  exec_ok(e, "CREATE TABLE t(a INTEGER, b INTEGER); INSERT INTO t VALUES (1, 2)");
  pj_query *old = compile_ok(e, text);
  assert_string_equal(show(e, old), "a,b:1|2;");
  exec_ok(e, "DROP TABLE t; CREATE TABLE t(b TEXT, a INTEGER); INSERT INTO t VALUES ('two', 1)");
  pj_query *q = compile_ok(e, text);
  assert_string_equal(show(e, q), "a,b:1|two;");
  pj_timing tm;
  pj_engine_last_timing(e, &tm);
  assert_int_equal(tm.cache_hit, 0);
  assert_int_equal(tm.used_jit, 1);
  assert_string_equal(show(e, old), "a,b:1|two;");
  /* the same schema again: the cache serves the code */
  pj_query *again = compile_ok(e, text);
  assert_string_equal(show(e, again), "a,b:1|two;");
  pj_engine_last_timing(e, &tm);
  assert_int_equal(tm.cache_hit, 1);
  /* the SQLite table gives way to a columnar table of the same name */
  exec_ok(e, "DROP TABLE t; CREATE PERFETTO TABLE t AS SELECT 1 AS a, 'col' AS b");
  assert_string_equal(show(e, q), "a,b:1|col;");
  pj_query_free(old);
  pj_query_free(q);
  pj_query_free(again);
  pj_engine_close(e);
}

/* Parameters and a schema change together: the rebind keeps the bound
 * values. */
static void test_params_survive_rebind(void **state) {
  (void)state;
  pj_engine *e = open_mode(PJ_MODE_JIT);
  exec_ok(e, "CREATE TABLE t(a INTEGER, b INTEGER); INSERT INTO t VALUES (1, 2), (3, 4)");
  pj_query *q = compile_ok(e, "FROM t |> WHERE a = $a |> SELECT b");
  assert_int_equal(pj_query_bind_int64(q, pj_query_param_index(q, "a"), 3), PJ_OK);
  assert_string_equal(show(e, q), "b:4;");
  exec_ok(e, "DROP TABLE t; CREATE TABLE t(b INTEGER, a INTEGER); INSERT INTO t VALUES (4, 3)");
  assert_string_equal(show(e, q), "b:4;");
  pj_query_free(q);
  pj_engine_close(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_columns_swapped),
      cmocka_unit_test(test_column_became_text),
      cmocka_unit_test(test_add_column),
      cmocka_unit_test(test_view_and_subquery),
      cmocka_unit_test(test_no_longer_binds),
      cmocka_unit_test(test_compile_cache_and_catalog),
      cmocka_unit_test(test_params_survive_rebind),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
