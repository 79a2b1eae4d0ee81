/*
 * test_sqlpipes.c — pipelines inside SQL (LANGUAGE.md §7.6) through the
 * internal pieces a script and a PerfettoSQL function body share
 * (frontend/sqlpipe.c, api/sqltab.h): the statement's parameters reach the
 * pipelines with SQLite's numbering, whatever mix of `?`, `?N` and names
 * the statement uses; a pipeline in the inner loop of a join runs once;
 * a failed rewrite leaves nothing registered. Query-level cases (results,
 * errors, both backends) are in tests/queries/sql_pipelines.test.
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

#include "api/engine.h"
#include "api/sqltab.h"

static pj_engine *engine(void) {
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  assert_int_equal(pj_engine_load_sample_trace(e, 500), PJ_OK);
  assert_int_equal(pj_engine_exec(e,
                                  "CREATE PERFETTO TABLE small AS SELECT 1 AS a, 'x' AS b "
                                  "UNION ALL SELECT 2, 'y' UNION ALL SELECT 3, 'z'",
                                  NULL, NULL),
                   PJ_OK);
  return e;
}

/* Rewrites sql, prepares it and hands back the statement (with the
 * rewrite to finish after finalizing). */
static sqlite3_stmt *prepare(pj_engine *e, rt_arena *a, const char *sql, pj__sqlrewrite *rw) {
  fe_sqlpipes ps;
  rt_err err = {.offset = -1};
  int n = fe_sql_pipelines(a, sql, 0, (int)strlen(sql), NULL, &ps, &err);
  if (n < 0) fail_msg("%s: %s", sql, err.msg);
  if (pj__sql_rewrite(e, sql, 0, (int)strlen(sql), &ps, rw) != PJ_OK)
    fail_msg("%s: %s", sql, pj_engine_errmsg(e));
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(pj_engine_sqlite(e), rw->text, -1, &st, NULL) != SQLITE_OK)
    fail_msg("%s: %s", rw->text, sqlite3_errmsg(pj_engine_sqlite(e)));
  return st;
}

static void test_parameters(void **state) {
  (void)state;
  pj_engine *e = engine();
  rt_arena a;
  rt_arena_init(&a);
  pj__sqlrewrite rw;

  /* `?` before and inside: the pipeline's is the statement's second. */
  sqlite3_stmt *st = prepare(e, &a, "SELECT ?, (FROM small |> WHERE a = ? |> SELECT b)", &rw);
  assert_int_equal(sqlite3_bind_parameter_count(st), 2);
  sqlite3_bind_text(st, 1, "hello", -1, SQLITE_STATIC);
  sqlite3_bind_int(st, 2, 2);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_string_equal((const char *)sqlite3_column_text(st, 0), "hello");
  assert_string_equal((const char *)sqlite3_column_text(st, 1), "y");
  sqlite3_finalize(st);
  pj__sql_rewrite_done(e, &rw, 0);

  /* A name first seen in the pipeline keeps its number after it. */
  st = prepare(e, &a, "SELECT (FROM small |> WHERE a = $a |> SELECT b), $a, ?", &rw);
  assert_int_equal(sqlite3_bind_parameter_count(st), 2);
  assert_int_equal(sqlite3_bind_parameter_index(st, "$a"), 1);
  sqlite3_bind_int(st, 1, 3);
  sqlite3_bind_int(st, 2, 9);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_string_equal((const char *)sqlite3_column_text(st, 0), "z");
  assert_int_equal(sqlite3_column_int(st, 1), 3);
  assert_int_equal(sqlite3_column_int(st, 2), 9);
  sqlite3_finalize(st);
  pj__sql_rewrite_done(e, &rw, 0);

  /* ?1 inside the pipeline is the statement's ?1, not the pipeline's
   * first name. */
  st = prepare(e, &a,
               "SELECT ?, (FROM small |> WHERE a = $a OR b = ?1 |> AGGREGATE COUNT(*) AS n)", &rw);
  assert_int_equal(sqlite3_bind_parameter_count(st), 2);
  sqlite3_bind_text(st, 1, "x", -1, SQLITE_STATIC);
  sqlite3_bind_int(st, sqlite3_bind_parameter_index(st, "$a"), 3);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int(st, 1), 2);
  sqlite3_finalize(st);
  pj__sql_rewrite_done(e, &rw, 0);

  /* Two pipelines, parameters in each, of several types. */
  st = prepare(e, &a,
               "SELECT (FROM small |> WHERE b = :s |> SELECT a) AS x, "
               "(FROM small |> WHERE a > ?5 |> AGGREGATE COUNT(*) AS n) AS y, ?", &rw);
  assert_int_equal(sqlite3_bind_parameter_count(st), 6);
  sqlite3_bind_text(st, 1, "z", -1, SQLITE_STATIC);
  sqlite3_bind_double(st, 5, 1.5);
  sqlite3_bind_int(st, 6, 42);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int(st, 0), 3);
  assert_int_equal(sqlite3_column_int(st, 1), 2);
  assert_int_equal(sqlite3_column_int(st, 2), 42);
  /* Run again with other values: the same compiled pipelines. */
  sqlite3_reset(st);
  sqlite3_bind_text(st, 1, "x", -1, SQLITE_STATIC);
  sqlite3_bind_int(st, 5, 0);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int(st, 0), 1);
  assert_int_equal(sqlite3_column_int(st, 1), 3);
  sqlite3_finalize(st);
  pj__sql_rewrite_done(e, &rw, 0);

  /* A blob cannot be a pipeline's parameter. */
  st = prepare(e, &a, "SELECT * FROM (FROM small |> WHERE a = ?)", &rw);
  sqlite3_bind_blob(st, 1, "\x01", 1, SQLITE_STATIC);
  assert_int_equal(sqlite3_step(st), SQLITE_ERROR);
  assert_non_null(strstr(sqlite3_errmsg(pj_engine_sqlite(e)), "blob"));
  sqlite3_finalize(st);
  pj__sql_rewrite_done(e, &rw, 0);

  rt_arena_free(&a);
  pj_engine_close(e);
}

/* A pipeline on the inside of a join is scanned once per outer row, but
 * runs once: the cursor keeps its result. */
static void test_inner_loop_runs_once(void **state) {
  (void)state;
  pj_engine *e = engine();
  memset(&e->vtab_stats, 0, sizeof e->vtab_stats);
  assert_int_equal(pj_engine_exec(e,
                                  "SELECT count(*) FROM slice s LEFT JOIN (FROM slice |> "
                                  "AGGREGATE COUNT(*) AS n GROUP BY parent_id) c "
                                  "ON c.parent_id = s.id",
                                  NULL, NULL),
                   PJ_OK);
  assert_int_equal(e->vtab_stats.opens, 2);   /* slice s, and the pipeline once */
  assert_true(e->vtab_stats.hash_lookups >= 500);
  pj_engine_close(e);
}

/* A rewrite that fails leaves no table behind, and one that succeeds drops
 * its tables when done. */
static void test_cleanup(void **state) {
  (void)state;
  pj_engine *e = engine();
  rt_arena a;
  rt_arena_init(&a);
  const char *sql = "SELECT * FROM (FROM small) x, (FROM small |> WHERE nope = 1) y";
  fe_sqlpipes ps;
  rt_err err = {.offset = -1};
  assert_int_equal(fe_sql_pipelines(&a, sql, 0, (int)strlen(sql), NULL, &ps, &err), 2);
  pj__sqlrewrite rw;
  int seq = e->sqltab_seq;
  assert_int_equal(pj__sql_rewrite(e, sql, 0, (int)strlen(sql), &ps, &rw), PJ_ERROR);
  assert_string_equal(pj_engine_errmsg(e), "WHERE: no such column: 'nope'");
  char name[64];
  snprintf(name, sizeof name, "SELECT * FROM __pj_sql_%d()", seq + 1);
  sqlite3_stmt *st = NULL;
  assert_int_not_equal(sqlite3_prepare_v2(pj_engine_sqlite(e), name, -1, &st, NULL), SQLITE_OK);
  sqlite3_finalize(st);
  st = prepare(e, &a, "SELECT * FROM (FROM small)", &rw);
  sqlite3_finalize(st);
  snprintf(name, sizeof name, "SELECT * FROM %s()", rw.modules[0]);
  pj__sql_rewrite_done(e, &rw, 0);
  assert_int_not_equal(sqlite3_prepare_v2(pj_engine_sqlite(e), name, -1, &st, NULL), SQLITE_OK);
  sqlite3_finalize(st);
  rt_arena_free(&a);
  pj_engine_close(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parameters),
      cmocka_unit_test(test_inner_loop_runs_once),
      cmocka_unit_test(test_cleanup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
