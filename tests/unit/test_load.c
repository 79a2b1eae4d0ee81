/*
 * test_load.c — copying SQLite tables into columnar tables
 * (runtime/sqlite/load.c, pj_engine_load_table): a database in the schema that
 * Perfetto's `trace_processor_shell --export` writes (slice, sched,
 * thread, process, counter), generated here with a few thousand rows;
 * the same pipelines (TREE ACCUMULATE, AGGREGATE) must give the same rows
 * read through SQLite and after --load; column types, the implicit id
 * column, type widening, progress and errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "api/engine.h"
#include "pipejit.h"

/* ---- helpers ------------------------------------------------------------------ */

static void exec_ok(pj_engine *e, const char *script) {
  if (pj_engine_exec(e, script, NULL, NULL) != PJ_OK)
    fail_msg("%s\n-> %s", script, pj_engine_errmsg(e));
}

typedef struct text { char *s; size_t n; } text;

static void text_add(text *t, const char *s) {
  size_t k = strlen(s);
  t->s = realloc(t->s, t->n + k + 1);
  assert_non_null(t->s);
  memcpy(t->s + t->n, s, k + 1);
  t->n += k;
}

static int collect(void *ctx, const pj_result *r, const char *st, size_t len, size_t off) {
  text *t = ctx;
  char buf[64];
  for (int64_t i = 0; i < pj_result_row_count(r); i++) {
    for (int c = 0; c < pj_result_column_count(r); c++) {
      if (c) text_add(t, "|");
      if (pj_result_is_null(r, i, c)) text_add(t, "NULL");
      else if (pj_result_column_type(r, c) == PJ_TYPE_STRING)
        text_add(t, pj_result_text(r, i, c, NULL));
      else if (pj_result_column_type(r, c) == PJ_TYPE_DOUBLE) {
        snprintf(buf, sizeof buf, "%.6f", pj_result_double(r, i, c));
        text_add(t, buf);
      } else {
        snprintf(buf, sizeof buf, "%lld", (long long)pj_result_int64(r, i, c));
        text_add(t, buf);
      }
    }
    text_add(t, "\n");
  }
  return 0;
}

static char *rows(pj_engine *e, const char *script) {
  text t = {0};
  text_add(&t, "");
  if (pj_engine_exec(e, script, collect, &t) != PJ_OK)
    fail_msg("%s\n-> %s", script, pj_engine_errmsg(e));
  return t.s;
}

static const rt_column *col(pj_engine *e, const char *table, const char *name) {
  rt_table *t = rt_catalog_get(e->catalog, table);
  assert_non_null(t);
  int c = rt_table_find_col(t, name);
  assert_true(c >= 0);
  return &t->cols[c];
}

/* ---- a Perfetto-exported database ------------------------------------------------- */

/* The columns trace_processor_shell --export writes (CREATE TABLE … AS
 * SELECT gives these declared types), with a few of the extra columns. */
static const char *schema =
    "CREATE TABLE process(upid INT, pid INT, name TEXT, start_ts INT);"
    "CREATE TABLE thread(utid INT, tid INT, name TEXT, upid INT);"
    "CREATE TABLE slice(id INT, ts INT, dur INT, track_id INT, category TEXT, name TEXT,"
    "  depth INT, stack_id INT, parent_stack_id INT, parent_id INT, arg_set_id INT,"
    "  thread_ts INT, thread_dur INT);"
    "CREATE TABLE sched(id INT, ts INT, dur INT, cpu INT, utid INT, end_state TEXT,"
    "  priority INT, ucpu INT);"
    "CREATE TABLE counter(id INT, ts INT, track_id INT, value REAL, arg_set_id INT);";

static uint64_t rnd_state = 0x1234567;
static uint64_t rnd(uint64_t n) {
  rnd_state = rnd_state * 6364136223846793005ull + 1442695040888963407ull;
  return (rnd_state >> 33) % n;
}

typedef struct gen {
  sqlite3_stmt *ins;
  int64_t next_id;
} gen;

/* Inserts a slice and its subtree depth first, so ids are parent-first
 * as in Perfetto's slice table. */
static void gen_slice(gen *g, int track, int64_t parent, int64_t ts, int64_t dur, int depth) {
  static const char *const names[] = {"draw", "measure", "layout", "binder", "RunTask"};
  int64_t id = g->next_id++;
  sqlite3_stmt *q = g->ins;
  sqlite3_bind_int64(q, 1, id);
  sqlite3_bind_int64(q, 2, ts);
  sqlite3_bind_int64(q, 3, dur);
  sqlite3_bind_int64(q, 4, track);
  sqlite3_bind_text(q, 5, depth ? "view" : "toplevel", -1, SQLITE_STATIC);
  sqlite3_bind_text(q, 6, names[rnd(5)], -1, SQLITE_STATIC);
  sqlite3_bind_int64(q, 7, depth);
  if (parent < 0) sqlite3_bind_null(q, 8);
  else sqlite3_bind_int64(q, 8, parent);
  if (rnd(3)) sqlite3_bind_null(q, 9);
  else sqlite3_bind_int64(q, 9, (int64_t)rnd(1000));
  sqlite3_bind_int64(q, 10, ts / 2);
  assert_int_equal(sqlite3_step(q), SQLITE_DONE);
  sqlite3_reset(q);
  if (depth >= 6 || dur < 40) return;
  int kids = (int)rnd(4);
  int64_t at = ts + 1, step = dur / (kids + 1);
  for (int k = 0; k < kids; k++) {
    gen_slice(g, track, id, at, step - 2, depth + 1);
    at += step;
  }
}

static void make_perfetto_db(pj_engine *e, int nroots) {
  sqlite3 *db = pj_engine_sqlite(e);
  exec_ok(e, schema);
  exec_ok(e, "BEGIN");
  exec_ok(e, "INSERT INTO process VALUES (0, 0, NULL, NULL), (1, 1234, 'com.app', 5);"
             "INSERT INTO thread VALUES (0, 0, 'swapper', NULL), (1, 1234, 'main', 1),"
             "  (2, 1240, 'RenderThread', 1)");
  gen g = {0};
  assert_int_equal(sqlite3_prepare_v2(db,
                                      "INSERT INTO slice(id, ts, dur, track_id, category, name,"
                                      " depth, parent_id, arg_set_id, thread_ts)"
                                      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                                      -1, &g.ins, NULL),
                   SQLITE_OK);
  int64_t t[3] = {1000, 1000, 1000};
  for (int r = 0; r < nroots; r++) {
    int track = (int)rnd(3);
    int64_t dur = 100 + (int64_t)rnd(5000);
    gen_slice(&g, track, -1, t[track], dur, 0);
    t[track] += dur + (int64_t)rnd(100);
  }
  sqlite3_finalize(g.ins);
  sqlite3_stmt *q;
  static const char *const states[] = {"S", "R", "R+", "D"};
  assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO sched VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?4)",
                                      -1, &q, NULL),
                   SQLITE_OK);
  for (int i = 0; i < 3000; i++) {
    sqlite3_bind_int64(q, 1, i);
    sqlite3_bind_int64(q, 2, 1000 + i * 50);
    sqlite3_bind_int64(q, 3, 10 + (int64_t)rnd(40));
    sqlite3_bind_int64(q, 4, (int64_t)rnd(4));
    sqlite3_bind_int64(q, 5, (int64_t)rnd(3));
    sqlite3_bind_text(q, 6, states[rnd(4)], -1, SQLITE_STATIC);
    sqlite3_bind_int64(q, 7, 100 + (int64_t)rnd(40));
    assert_int_equal(sqlite3_step(q), SQLITE_DONE);
    sqlite3_reset(q);
  }
  sqlite3_finalize(q);
  assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO counter VALUES (?1, ?2, ?3, ?4, NULL)", -1,
                                      &q, NULL),
                   SQLITE_OK);
  for (int i = 0; i < 2000; i++) {
    sqlite3_bind_int64(q, 1, i);
    sqlite3_bind_int64(q, 2, 1000 + i * 70);
    sqlite3_bind_int64(q, 3, 10 + i % 5);
    /* Real values, and some integral ones SQLite stores as integers in a
     * REAL column (affinity converts them back to REAL). */
    sqlite3_bind_double(q, 4, i % 7 ? (double)rnd(100000) / 8.0 : 42.0);
    assert_int_equal(sqlite3_step(q), SQLITE_DONE);
    sqlite3_reset(q);
  }
  sqlite3_finalize(q);
  exec_ok(e, "COMMIT");
}

/* The questions asked of the trace, as pipelines. */
static const char *const queries[] = {
    "FROM slice |> TREE ACCUMULATE UP SUM(dur) AS total, COUNT(*) AS n, MAX(depth) AS md "
    "|> ORDER BY id |> SELECT id, total, n, md",
    "FROM slice |> TREE ACCUMULATE DOWN SUM(dur) AS path |> ORDER BY id |> SELECT id, path",
    "FROM slice |> AGGREGATE COUNT(*) AS n, SUM(dur) AS d, MAX(depth) AS md, COUNT(arg_set_id) AS a "
    "GROUP BY track_id, name |> ORDER BY track_id, name",
    "FROM sched |> WHERE end_state = 'R' |> AGGREGATE SUM(dur) AS d, COUNT(*) AS n, "
    "AVG(priority) AS p GROUP BY cpu |> ORDER BY cpu",
    "FROM counter |> AGGREGATE SUM(value) AS s, MIN(value) AS lo, MAX(value) AS hi "
    "GROUP BY track_id |> ORDER BY track_id",
};
enum { NQ = sizeof queries / sizeof *queries };

static void test_same_answers(void **state) {
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  pj_engine_set_mode(e, PJ_MODE_INTERP);
  make_perfetto_db(e, 800);
  char *n_sql = rows(e, "SELECT count(*) FROM slice");
  assert_true(atoi(n_sql) > 2000);

  /* Through SQLite first: nothing is in the catalog. */
  assert_null(rt_catalog_get(e->catalog, "slice"));
  char *before[NQ];
  for (int i = 0; i < NQ; i++) before[i] = rows(e, queries[i]);

  /* The plain SQL answer to the aggregate, as a third opinion. */
  char *sql_sched = rows(e, "SELECT cpu, sum(dur), count(*), avg(priority) FROM sched "
                            "WHERE end_state = 'R' GROUP BY cpu ORDER BY cpu");

  static const char *const tables[] = {"slice", "sched", "counter", "thread", "process"};
  for (int i = 0; i < 5; i++) assert_int_equal(pj_engine_load_table(e, tables[i]), PJ_OK);
  assert_non_null(rt_catalog_get(e->catalog, "slice"));

  for (int m = 0; m < 2; m++) {
    pj_engine_set_mode(e, m ? PJ_MODE_JIT : PJ_MODE_INTERP);
    for (int i = 0; i < NQ; i++) {
      char *after = rows(e, queries[i]);
      if (strcmp(before[i], after))
        fail_msg("%s differs after --load (%s)", queries[i], m ? "jit" : "interp");
      free(after);
    }
  }
  char *pipe_sched = rows(e, queries[3]);
  /* Same numbers: SQL's row is "cpu|d|n|p", the pipeline's "cpu|d|n|p". */
  assert_string_equal(pipe_sched, sql_sched);
  free(pipe_sched);
  free(sql_sched);

  /* SQL now reads the columnar copy (temp.slice shadows main.slice). */
  char *n_vtab = rows(e, "SELECT count(*) FROM slice");
  assert_string_equal(n_sql, n_vtab);
  free(n_vtab);
  free(n_sql);
  for (int i = 0; i < NQ; i++) free(before[i]);

  /* Types: ids 0..n-1 became the implicit id column; strings, doubles. */
  assert_int_equal(col(e, "slice", "id")->type, RT_ID);
  assert_int_equal(col(e, "sched", "id")->type, RT_ID);
  assert_int_equal(col(e, "slice", "ts")->type, RT_I64);
  assert_true(col(e, "sched", "ts")->sorted);
  assert_int_equal(col(e, "slice", "name")->type, RT_STR);
  assert_true(col(e, "slice", "parent_id")->nullable);
  assert_int_equal(col(e, "sched", "end_state")->type, RT_STR);
  assert_int_equal(col(e, "counter", "value")->type, RT_F64);
  /* Columns holding only NULLs take their declared type. */
  assert_int_equal(col(e, "slice", "thread_dur")->type, RT_I64);
  assert_true(col(e, "slice", "thread_dur")->nullable);
  assert_int_equal(col(e, "counter", "arg_set_id")->type, RT_I64);
  assert_int_equal(col(e, "thread", "utid")->type, RT_I64);   /* not named id */
  pj_engine_close(e);
}

/* Kinds widen as values arrive: integers then a real make doubles; a
 * string among numbers makes strings holding SQLite's text of the
 * numbers; an all-NULL TEXT column is a string column. An id column that
 * is not 0..n-1 stays an integer column. */
static void test_types(void **state) {
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  exec_ok(e, "CREATE TABLE t(id, a, b, c TEXT, d);"
             "INSERT INTO t VALUES (5, 1, 1, NULL, x'41'), (6, 2.5, 2, NULL, 'B'),"
             " (7, 3, 'x', NULL, NULL), (9, NULL, 1.5, NULL, 'D')");
  assert_int_equal(pj_engine_load_table(e, "t"), PJ_OK);
  assert_int_equal(col(e, "t", "id")->type, RT_I64);
  assert_int_equal(col(e, "t", "a")->type, RT_F64);
  assert_int_equal(col(e, "t", "b")->type, RT_STR);
  assert_int_equal(col(e, "t", "c")->type, RT_STR);
  assert_int_equal(col(e, "t", "d")->type, RT_STR);
  char *got = rows(e, "FROM t |> SELECT id, a, b, c, d");
  assert_string_equal(got, "5|1.000000|1|NULL|A\n"
                           "6|2.500000|2|NULL|B\n"
                           "7|3.000000|x|NULL|NULL\n"
                           "9|NULL|1.5|NULL|D\n");
  free(got);
  pj_engine_close(e);
}

static void on_progress(void *ctx, const char *what, int64_t done, int64_t total) {
  int64_t *last = ctx;
  assert_string_equal(what, "big");
  assert_true(done >= last[0]);
  last[0] = done;
  last[1] = total;
  last[2]++;
}

/* Progress reports every 65536 rows and once at the end; loading again
 * sees the table's new rows; errors name the table. */
static void test_progress_reload_errors(void **state) {
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  exec_ok(e, "CREATE TABLE big(id INTEGER, v INT);"
             "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 199999)"
             " INSERT INTO big SELECT i, i % 10 FROM n");
  int64_t p[3] = {0, 0, 0};
  assert_int_equal(pj_engine_load_table_progress(e, "big", on_progress, p), PJ_OK);
  assert_int_equal(p[0], 200000);
  assert_int_equal(p[1], 200000);
  assert_int_equal(p[2], 4);   /* 65536, 131072, 196608, then the end */
  char *got = rows(e, "FROM big |> AGGREGATE SUM(v) AS s, COUNT(*) AS n");
  assert_string_equal(got, "900000|200000\n");
  free(got);

  /* The SQLite table is still there under the copy: change it, reload. */
  exec_ok(e, "INSERT INTO main.big VALUES (200000, 7)");
  assert_int_equal(pj_engine_load_table(e, "BIG"), PJ_OK);
  got = rows(e, "FROM big |> AGGREGATE SUM(v) AS s, COUNT(*) AS n");
  assert_string_equal(got, "900007|200001\n");
  free(got);
  assert_int_equal(col(e, "big", "id")->type, RT_ID);

  assert_int_equal(pj_engine_load_table(e, "nope"), PJ_ERROR);
  assert_string_equal(pj_engine_errmsg(e), "LOAD: no table named 'nope' in the database");
  /* An empty table loads as an empty columnar table. */
  exec_ok(e, "CREATE TABLE empty(id INT, name TEXT)");
  assert_int_equal(pj_engine_load_table(e, "empty"), PJ_OK);
  assert_int_equal(col(e, "empty", "name")->type, RT_STR);
  got = rows(e, "FROM empty |> AGGREGATE COUNT(*) AS n");
  assert_string_equal(got, "0\n");
  free(got);
  pj_engine_close(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_same_answers),
      cmocka_unit_test(test_types),
      cmocka_unit_test(test_progress_reload_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
