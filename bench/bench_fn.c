/*
 * bench_fn.c — workload table_function: what a PerfettoSQL function call
 * costs against a run of its compiled body (issue 15's target: calling a
 * table function 10,000 times costs no more than 10,000 runs of its
 * compiled handle, since the body is compiled once and kept).
 *
 * The body is `FROM t |> WHERE a = $k |> SELECT a, b` over a columnar
 * table of 1,000 rows. Per backend (interp, jit), the median of seven of
 * each (the three taking turns, so a passing load weighs on each alike):
 *   handle   10,000 runs of one compiled handle of the body through the
 *            public API (bind $k, run, free the result): the floor;
 *   table    `SELECT SUM(f.b) FROM keys, fb(keys.k) AS f`: SQL calling the
 *            table function once per row of a native 10,000-row table
 *            (every key differs from the one before, so no call reuses the
 *            previous result);
 *   scalar   `SELECT SUM(sb(k)) FROM keys`: the same body as a scalar
 *            function (RETURNS LONG), 10,000 calls.
 * Every variant's sum is checked against the one of the handle runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/engine.h"
#include "bench.h"

#define FN_CALLS 10000
#define FN_ROWS 1000
#define FN_REPEAT 7

static const char *const SETUP =
    "CREATE PERFETTO TABLE t AS WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n "
    "WHERE i < 999) SELECT i AS a, i * 3 AS b FROM n;"
    "CREATE TEMP TABLE keys AS WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n "
    "WHERE i < 9999) SELECT (i * 7) % 1000 AS k FROM n;"
    "CREATE PERFETTO FUNCTION fb(k LONG) RETURNS TABLE(a LONG, b LONG) AS "
    "FROM t |> WHERE a = $k |> SELECT a, b;"
    "CREATE PERFETTO FUNCTION sb(k LONG) RETURNS LONG AS FROM t |> WHERE a = $k |> SELECT b;";

static const char *const BODY = "FROM t |> WHERE a = $k |> SELECT a, b";

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* 10,000 runs of the body's handle: ns, and the sum of b in *sum. */
static int64_t handle_runs(pj_engine *e, int64_t *sum) {
  pj_query *q = NULL;
  if (pj_query_compile(e, BODY, &q) != PJ_OK) return -1;
  int k = pj_query_param_index(q, "$k");
  *sum = 0;
  int64_t t0 = rt_now_ns();
  for (int i = 0; i < FN_CALLS; i++) {
    pj_result *r = NULL;
    if (pj_query_bind_int64(q, k, (int64_t)(i * 7) % FN_ROWS) != PJ_OK ||
        pj_query_run(q, &r) != PJ_OK) {
      pj_query_free(q);
      return -1;
    }
    for (int64_t j = 0; j < pj_result_row_count(r); j++) *sum += pj_result_int64(r, j, 1);
    pj_result_free(r);
  }
  int64_t ns = rt_now_ns() - t0;
  pj_query_free(q);
  return ns;
}

static int one_sum(void *ctx, const pj_result *r, const char *stmt, size_t len, size_t off) {
  (void)stmt, (void)len, (void)off;
  *(int64_t *)ctx = pj_result_row_count(r) ? pj_result_int64(r, 0, 0) : -1;
  return 0;
}

static int64_t sql_calls(pj_engine *e, const char *sql, int64_t *sum) {
  int64_t t0 = rt_now_ns();
  if (pj_engine_exec(e, sql, one_sum, sum) != PJ_OK) return -1;
  return rt_now_ns() - t0;
}

int bench_table_function(int opt, const char *report) {
  static const pj_mode modes[] = {PJ_MODE_INTERP, PJ_MODE_JIT};
  static const char *const mode_names[] = {"interp", "jit"};
  static const char *const what[] = {"handle", "table", "scalar"};
  static const char *const sql[] = {NULL, "SELECT SUM(f.b) FROM keys, fb(keys.k) AS f",
                                    "SELECT SUM(sb(k)) FROM keys"};
  char lines[6][160];
  int nl = 0, rc = 0;
  printf("\ntable_function (%d calls of a body over %d rows, --opt %d, median of %d, "
         "taking turns)\n", FN_CALLS, FN_ROWS, opt, FN_REPEAT);
  printf("%-7s %-7s %10s %12s %10s\n", "mode", "call", "total ms", "us per call", "x handle");
  for (int m = 0; m < 2 && rc == 0; m++) {
    pj_engine *e = NULL;
    if (pj_engine_open(NULL, &e) != PJ_OK) return -1;
    pj_engine_set_mode(e, modes[m]);
    pj_engine_set_opt_level(e, opt);
    if (pj_engine_exec(e, SETUP, NULL, NULL) != PJ_OK) {
      fprintf(stderr, "table_function: %s\n", pj_engine_errmsg(e));
      pj_engine_close(e);
      return -1;
    }
    /* The variants take turns, so a load that comes and goes on the
     * machine weighs on each alike. */
    int64_t t[3][FN_REPEAT], want = -1;
    for (int k = 0; k < FN_REPEAT && rc == 0; k++) {
      for (int v = 0; v < 3 && rc == 0; v++) {
        int64_t sum = 0;
        t[v][k] = v == 0 ? handle_runs(e, &sum) : sql_calls(e, sql[v], &sum);
        if (t[v][k] < 0) {
          fprintf(stderr, "table_function %s: %s\n", what[v], pj_engine_errmsg(e));
          rc = -1;
        } else if (v == 0) {
          want = sum;
        } else if (sum != want) {
          fprintf(stderr, "table_function %s: sum %lld, the handle runs gave %lld\n", what[v],
                  (long long)sum, (long long)want);
          rc = -1;
        }
      }
    }
    for (int v = 0; v < 3 && rc == 0; v++) qsort(t[v], FN_REPEAT, sizeof **t, cmp_i64);
    for (int v = 0; v < 3 && rc == 0; v++) {
      int64_t med = t[v][FN_REPEAT / 2], base = t[0][FN_REPEAT / 2];
      double ratio = base ? (double)med / (double)base : 0;
      printf("%-7s %-7s %10.1f %12.2f %10.2f\n", mode_names[m], what[v], (double)med / 1e6,
             (double)med / 1e3 / FN_CALLS, ratio);
      snprintf(lines[nl++], sizeof lines[0], "| %s | %s | %.1f | %.2f | %.2f |", mode_names[m],
               what[v], (double)med / 1e6, (double)med / 1e3 / FN_CALLS, ratio);
    }
    pj_engine_close(e);
  }
  if (rc == 0 && report) {
    FILE *f = fopen(report, "a");
    if (!f) return -1;
    fprintf(f, "\n## table_function\n\n%d calls of `%s` over %d rows (--opt %d, median of 7, "
               "the variants taking turns): 10,000 runs of one compiled handle (the floor), "
               "SQL calling the table function once per row of a 10,000-row table, and the "
               "same body as a scalar function. Target: table <= 1.0x handle.\n\n"
               "| mode | call | total ms | us per call | x handle |\n|---|---|---:|---:|---:|\n",
            FN_CALLS, BODY, FN_ROWS, opt);
    for (int i = 0; i < nl; i++) fprintf(f, "%s\n", lines[i]);
    fclose(f);
  }
  return rc;
}
