/*
 * bench_window.c — workload `window` (issue 16's target): the delta
 * between consecutive samples of each counter track,
 *
 *   FROM counter |> EXTEND LAG(ts) OVER (PARTITION BY track_id ORDER BY ts) AS prev
 *   |> AGGREGATE SUM(ts - prev) AS s, COUNT(prev) AS n
 *
 * over n counter rows, on pipejit's interpreter and JIT, DuckDB on one
 * thread (bench_duck.c, $PJ_DUCKDB_LIB) and SQLite (the same SQL over a
 * native table), all in one run: each engine's runs take turns, and each
 * row is the median of its process CPU times (the machine is shared: CPU
 * time is what the engine spent), with the first run apart. Target:
 * pipejit's time at most DuckDB's.
 *
 * The table follows formulas every engine computes alike, as a trace's
 * counter table is laid out: rows in ts order, tracks interleaved:
 *   counter(id 0..n-1, ts = id * 10 + id * 7 % 3, track_id = id * 7919 % 500)
 * The aggregate keeps the result small, so no engine is timed writing 1M
 * rows out; the answers (s, n) must agree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/bench_duck.h"
#include "runtime/rt.h"

static const char WINDOW_PIPE[] =
    "FROM counter |> EXTEND LAG(ts) OVER (PARTITION BY track_id ORDER BY ts) AS prev "
    "|> AGGREGATE SUM(ts - prev) AS s, COUNT(prev) AS n";
static const char WINDOW_SQL[] =
    "SELECT SUM(ts - prev) AS s, COUNT(prev) AS n FROM (SELECT ts, LAG(ts) OVER (PARTITION BY "
    "track_id ORDER BY ts) AS prev FROM %s)";

typedef struct answer { int64_t s, n; } answer;

static int take(void *ctx, const pj_result *r, const char *t, size_t l, size_t o) {
  (void)t, (void)l, (void)o;
  answer *a = ctx;
  if (pj_result_row_count(r) == 1) {
    a->s = pj_result_int64(r, 0, 0);
    a->n = pj_result_int64(r, 0, 1);
  }
  return 0;
}

int bench_counter_setup(pj_engine *e, int64_t n) {
  char sql[1024];
  snprintf(sql, sizeof sql,
           "CREATE TABLE src_counter(id INT, ts INT, track_id INT);"
           "WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i < %lld) "
           "INSERT INTO src_counter SELECT i, i * 10 + i * 7 %% 3, i * 7919 %% 500 FROM r;"
           "CREATE PERFETTO TABLE counter AS SELECT * FROM src_counter;",
           (long long)(n - 1));
  return pj_engine_exec(e, sql, NULL, NULL) == PJ_OK ? 0 : -1;
}

static int setup(pj_engine *e, int64_t n) {
  char sql[1024];
  if (bench_counter_setup(e, n) != 0) return -1;
  snprintf(sql, sizeof sql,
           "CREATE TABLE counter AS SELECT i AS id, i * 10 + i * 7 %% 3 AS ts, i * 7919 %% 500 AS "
           "track_id FROM range(%lld) t(i)",
           (long long)n);
  int rc = bench_duck_open();
  if (rc == 0 && bench_duck_exec(sql, 0, NULL) != 0) rc = -1;
  return rc < 0 ? -1 : rc;   /* 1: no DuckDB */
}

enum { E_INTERP, E_JIT, E_DUCK, E_SQLITE, E_N };

int bench_window(int repeat, int64_t n, const char *report) {
  static const char *const names[E_N] = {"interp", "jit", "duckdb-1t", "sqlite"};
  pj_engine *e = NULL;
  if (pj_engine_open(NULL, &e) != PJ_OK) return -1;
  int rc = -1, noduck = 0;
  pj_query *q[2] = {NULL, NULL};
  double compile_ms[2] = {0, 0}, first[E_N] = {0}, t[E_N][64];
  answer ans[E_N];
  memset(ans, 0xff, sizeof ans);
  char sql[512];
  snprintf(sql, sizeof sql, WINDOW_SQL, "src_counter");
  int k = setup(e, n);
  if (k < 0) {
    fprintf(stderr, "pipejit-bench: window: setup failed: %s\n", pj_engine_errmsg(e));
    goto out;
  }
  noduck = k == 1;
  if (noduck) fprintf(stderr, "window: set PJ_DUCKDB_LIB to libduckdb.so for the DuckDB row\n");
  for (int m = 0; m < 2; m++) {
    pj_engine_set_mode(e, m ? PJ_MODE_JIT : PJ_MODE_INTERP);
    int64_t t0 = rt_now_ns();
    if (pj_query_compile(e, WINDOW_PIPE, &q[m]) != PJ_OK) {
      fprintf(stderr, "pipejit-bench: window: %s\n", pj_engine_errmsg(e));
      goto out;
    }
    compile_ms[m] = (double)(rt_now_ns() - t0) / 1e6;
  }
  if (repeat > 63) repeat = 63;
  if (repeat < 1) repeat = 1;
  int sql_reps = repeat < 3 ? repeat : 3;   /* SQLite takes seconds */
  for (int r = 0; r <= repeat; r++) {
    for (int en = 0; en < E_N; en++) {
      if ((en == E_DUCK && noduck) || (en == E_SQLITE && r > sql_reps)) continue;
      int64_t c0 = bench_cpu_ns();
      if (en <= E_JIT) {
        pj_result *res = NULL;
        if (pj_query_run(q[en], &res) != PJ_OK) {
          fprintf(stderr, "pipejit-bench: window: %s\n", pj_engine_errmsg(e));
          goto out;
        }
        take(&ans[en], res, NULL, 0, 0);
        pj_result_free(res);
      } else if (en == E_DUCK) {
        int64_t v[2];
        if (bench_duck_exec("SELECT SUM(ts - prev) AS s, COUNT(prev) AS n FROM (SELECT ts, LAG(ts) "
                            "OVER (PARTITION BY track_id ORDER BY ts) AS prev FROM counter)",
                            2, v) != 0)
          goto out;
        ans[en] = (answer){v[0], v[1]};
      } else if (pj_engine_exec(e, sql, take, &ans[en]) != PJ_OK) {
        goto out;
      }
      double ms = (double)(bench_cpu_ns() - c0) / 1e6;
      if (r == 0) first[en] = ms;
      else t[en][r - 1] = ms;
    }
  }
  double med[E_N];
  for (int en = 0; en < E_N; en++)
    med[en] = en == E_SQLITE ? bench_median(t[en], sql_reps) : bench_median(t[en], repeat);
  char line[4][256];
  int same = 1;
  printf("%-8s %-10s %9s %10s %10s %10s %11s %5s\n", "workload", "engine", "rows", "compile_ms",
         "first_ms", "median_ms", "vs_duckdb", "same");
  for (int en = 0; en < E_N; en++) {
    if (en == E_DUCK && noduck) continue;
    int ok = ans[en].s == ans[E_SQLITE].s && ans[en].n == ans[E_SQLITE].n;
    same &= ok;
    char vs[32] = "-";
    if (!noduck) snprintf(vs, sizeof vs, "%.2fx", med[en] / med[E_DUCK]);
    snprintf(line[en], sizeof line[en], "%-8s %-10s %9lld %10.1f %10.1f %10.1f %11s %5s", "window",
             names[en], (long long)n, en <= E_JIT ? compile_ms[en] : 0.0, first[en], med[en], vs,
             ok ? "yes" : "NO");
    printf("%s\n", line[en]);
  }
  if (!noduck) {
    double best = med[E_JIT] < med[E_INTERP] ? med[E_JIT] : med[E_INTERP];
    printf("window: target pipejit <= DuckDB (1 thread): jit %.1f ms, interp %.1f ms, duckdb %.1f ms: %s\n",
           med[E_JIT], med[E_INTERP], med[E_DUCK], best <= med[E_DUCK] ? "met" : "MISSED");
  }
  if (report) {
    FILE *f = fopen(report, "a");
    if (f) {
      fprintf(f, "\n## window (issue 16)\n\n`%s` over %lld counter rows; process CPU ms, median of %d "
                 "(SQLite %d), runs taking turns, one thread everywhere.\n\n```\n",
              WINDOW_PIPE, (long long)n, repeat, sql_reps);
      for (int en = 0; en < E_N; en++)
        if (!(en == E_DUCK && noduck)) fprintf(f, "%s\n", line[en]);
      fprintf(f, "```\n");
      fclose(f);
    }
  }
  rc = same ? 0 : -1;
  if (!same) fprintf(stderr, "pipejit-bench: window: the engines' answers differ\n");
out:
  pj_query_free(q[0]);
  pj_query_free(q[1]);
  pj_engine_close(e);
  return rc;
}
