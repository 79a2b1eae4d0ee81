/*
 * test_refused_strings.c — a string the pool refuses (longer than it
 * holds, or out of memory) stops what was reading it with the pool's
 * reason, never becoming an empty string: SQL results, CREATE PERFETTO
 * TABLE (strings, and numbers turned into text), loading a SQLite table,
 * and a bound text parameter. The pool's limit is lowered for the test
 * (4 GiB - 1 otherwise); after each refusal the engine still works.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "api/engine.h"

#define TOO_LONG "string too long: a string holds at most 8 bytes"

static pj_engine *open_limited(void) {
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  assert_int_equal(pj_engine_exec(e, "CREATE TABLE lite(a INT, s TEXT);"
                                     "INSERT INTO lite VALUES (1, 'short'), (123456789012, 'a long string');"
                                     "CREATE TABLE ok(a INT, s TEXT);"
                                     "INSERT INTO ok VALUES (1, 'short'), (2, 'tiny');",
                                  NULL, NULL), PJ_OK);
  rt_strpool_set_max_len(e->strings, 8);
  return e;
}

/* After a refusal: short strings still go in and come out. */
static void still_works(pj_engine *e) {
  pj_result *r = NULL;
  pj_query *q = NULL;
  assert_int_equal(pj_query_compile(e, "FROM ok |> WHERE a = 1 |> SELECT s", &q), PJ_OK);
  assert_int_equal(pj_query_run(q, &r), PJ_OK);
  assert_int_equal(pj_result_row_count(r), 1);
  assert_string_equal(pj_result_text(r, 0, 0, NULL), "short");
  pj_result_free(r);
  pj_query_free(q);
}

static void test_sql_result(void **state) {
  (void)state;
  pj_engine *e = open_limited();
  assert_int_equal(pj_engine_exec(e, "SELECT s FROM lite ORDER BY a", NULL, NULL), PJ_ERROR);
  assert_string_equal(pj_engine_errmsg(e), "SQLite: row 2, column 's': " TOO_LONG);
  still_works(e);
  pj_engine_close(e);
}

static void test_create_table(void **state) {
  (void)state;
  pj_engine *e = open_limited();
  assert_int_equal(pj_engine_exec(e, "CREATE PERFETTO TABLE t AS SELECT s FROM lite", NULL, NULL),
                   PJ_ERROR);
  assert_non_null(strstr(pj_engine_errmsg(e), TOO_LONG));
  /* a number shown as text in a column that mixes (plain SQL may mix) */
  assert_int_equal(pj_engine_exec(e, "SELECT a FROM lite UNION ALL SELECT 'x' ORDER BY 1", NULL,
                                  NULL), PJ_ERROR);
  assert_string_equal(pj_engine_errmsg(e), "SQLite: row 2, column 'a': " TOO_LONG);
  still_works(e);
  pj_engine_close(e);
}

static void test_load_table(void **state) {
  (void)state;
  pj_engine *e = open_limited();
  assert_int_equal(pj_engine_load_table(e, "lite"), PJ_ERROR);
  assert_string_equal(pj_engine_errmsg(e), "LOAD: 'lite', row 2, column 's': " TOO_LONG);
  assert_int_equal(pj_engine_table_count(e), 0);
  still_works(e);
  pj_engine_close(e);
}

static void test_bind_text(void **state) {
  (void)state;
  pj_engine *e = open_limited();
  pj_query *q = NULL;
  assert_int_equal(pj_query_compile(e, "FROM ok |> WHERE s = ? |> SELECT a", &q), PJ_OK);
  assert_int_equal(pj_query_bind_text(q, 1, "short", 5), PJ_OK);
  assert_int_equal(pj_query_bind_text(q, 1, "a long string", 13), PJ_ERROR);
  assert_string_equal(pj_engine_errmsg(e), "parameter 1: " TOO_LONG);
  /* the parameter kept its value: 'short', not '' */
  pj_result *r = NULL;
  assert_int_equal(pj_query_run(q, &r), PJ_OK);
  assert_int_equal(pj_result_row_count(r), 1);
  assert_int_equal(pj_result_int64(r, 0, 0), 1);
  pj_result_free(r);
  pj_query_free(q);
  still_works(e);
  pj_engine_close(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sql_result),
      cmocka_unit_test(test_create_table),
      cmocka_unit_test(test_load_table),
      cmocka_unit_test(test_bind_text),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
