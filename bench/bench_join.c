/*
 * bench_join.c — workload `join` (issue 16's target): n slices joined to
 * thread_track and thread by id, summed per thread name, against the same
 * SQL in plain SQLite and in DuckDB on one thread.
 *
 * The three tables follow formulas every engine can compute, so DuckDB
 * builds its own copy with range() and the answers compare by value:
 *   thread(utid 0..999, name 'thread-' || utid % 300)
 *   thread_track(id 0..3999, utid = id * 7 % 1000)
 *   slice(id 0..n-1, ts = id * 10, dur = id * 31 % 1000 + 1,
 *         track_id = id * 7919 % 4000)
 * pipejit reads them as PERFETTO TABLEs made from SQLite tables src_*,
 * which the SQLite row reads.
 *
 * DuckDB is bench_duck.h's (its C library from $PJ_DUCKDB_LIB, one
 * thread): without it the row is skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../runtime/rt.h"
#include "bench.h"
#include "bench/bench_duck.h"

static const char JOIN_SQL[] =
    "SELECT thread.name, SUM(dur) AS d FROM %sslice s JOIN %sthread_track tt ON s.track_id = tt.id "
    "JOIN %sthread thread USING (utid) GROUP BY thread.name";

int bench_join_setup(pj_engine *e, int64_t n) {
  char sql[2048];
  snprintf(sql, sizeof sql,
           "CREATE TABLE src_thread(utid INT, name TEXT);"
           "WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i < 999) "
           "INSERT INTO src_thread SELECT i, 'thread-' || (i %% 300) FROM r;"
           "CREATE TABLE src_thread_track(id INT, utid INT);"
           "WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i < 3999) "
           "INSERT INTO src_thread_track SELECT i, i * 7 %% 1000 FROM r;"
           "CREATE TABLE src_slice(id INT, ts INT, dur INT, track_id INT);"
           "WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i < %lld) "
           "INSERT INTO src_slice SELECT i, i * 10, i * 31 %% 1000 + 1, i * 7919 %% 4000 FROM r;"
           "CREATE PERFETTO TABLE thread AS SELECT * FROM src_thread;"
           "CREATE PERFETTO TABLE thread_track AS SELECT * FROM src_thread_track;"
           "CREATE PERFETTO TABLE slice AS SELECT * FROM src_slice;",
           (long long)(n - 1));
  return pj_engine_exec(e, sql, NULL, NULL) == PJ_OK ? 0 : -1;
}

/* The answer, reduced: groups and the sum of every group's d. */
int bench_join_sums(const pj_result *r, int64_t *groups, int64_t *total) {
  *groups = pj_result_row_count(r);
  *total = 0;
  for (int64_t i = 0; i < *groups; i++) *total += pj_result_int64(r, i, 1);
  return 0;
}

typedef struct sums { int64_t groups, total; } sums;

static int take_sums(void *ctx, const pj_result *res, const char *text, size_t len, size_t off) {
  (void)text, (void)len, (void)off;
  sums *s = ctx;
  bench_join_sums(res, &s->groups, &s->total);
  return 0;
}

int bench_join_sql(pj_engine *e, int64_t *groups, int64_t *total, double *ms) {
  char sql[512];
  snprintf(sql, sizeof sql, JOIN_SQL, "src_", "src_", "src_");
  sums s = {-1, 0};
  int64_t t0 = rt_now_ns();
  if (pj_engine_exec(e, sql, take_sums, &s) != PJ_OK) return -1;
  *ms = (double)(rt_now_ns() - t0) / 1e6;
  *groups = s.groups;
  *total = s.total;
  return 0;
}

/* ---- DuckDB (bench_duck.h) ------------------------------------------------------ */

/* DuckDB with this workload's tables of n slices: 0, 1 without
 * $PJ_DUCKDB_LIB, -1 on error. */
static int duck_open(int64_t n) {
  static int64_t made = -1;
  int rc = bench_duck_open();
  if (rc || made == n) return rc;
  char sql[1024];
  snprintf(sql, sizeof sql,
           "CREATE OR REPLACE TABLE thread AS SELECT i AS utid, 'thread-' || (i %% 300) AS name FROM range(1000) t(i);"
           "CREATE OR REPLACE TABLE thread_track AS SELECT i AS id, i * 7 %% 1000 AS utid FROM range(4000) t(i);"
           "CREATE OR REPLACE TABLE slice AS SELECT i AS id, i * 10 AS ts, i * 31 %% 1000 + 1 AS dur, "
           "i * 7919 %% 4000 AS track_id FROM range(%lld) t(i);",
           (long long)n);
  if (bench_duck_exec(sql, 0, NULL) != 0) return fprintf(stderr, "pipejit-bench: DuckDB setup failed\n"), -1;
  made = n;
  return 0;
}

/* The query's groups and the sum of its d column. */
static int duck_run(const char *sql, int64_t *groups, int64_t *total) {
  int64_t col[2] = {0, 0}, rows = 0;
  if (bench_duck_sums(sql, 2, &rows, col) != 0) return -1;
  if (groups) *groups = rows;
  if (total) *total = col[1];
  return 0;
}

int bench_join_duckdb(int64_t n, int repeat, int64_t *groups, int64_t *total, double *ms) {
  int rc = duck_open(n);
  if (rc) return rc;
  char sql[512];
  snprintf(sql, sizeof sql, JOIN_SQL, "", "", "");
  double t[64];
  if (repeat > 64) repeat = 64;
  for (int r = 0; r < repeat; r++) {
    int64_t t0 = rt_now_ns();
    if (duck_run(sql, groups, total) != 0) return -1;
    t[r] = (double)(rt_now_ns() - t0) / 1e6;
  }
  *ms = bench_median(t, repeat);
  return 0;
}

int bench_join_cpu(pj_query *q, int64_t n, int repeat, double *jit_ms, double *duck_ms) {
  int rc = duck_open(n);
  if (rc) return rc;
  char sql[512];
  snprintf(sql, sizeof sql, JOIN_SQL, "", "", "");
  double a[64], b[64];
  if (repeat > 64) repeat = 64;
  /* interleaved, so both see the same load */
  for (int r = 0; r < repeat; r++) {
    int64_t t0 = bench_cpu_ns();
    pj_result *res = NULL;
    if (pj_query_run(q, &res) != PJ_OK) return -1;
    a[r] = (double)(bench_cpu_ns() - t0) / 1e6;
    pj_result_free(res);
    t0 = bench_cpu_ns();
    if (duck_run(sql, NULL, NULL) != 0) return -1;
    b[r] = (double)(bench_cpu_ns() - t0) / 1e6;
  }
  *jit_ms = bench_median(a, repeat);
  *duck_ms = bench_median(b, repeat);
  return 0;
}
