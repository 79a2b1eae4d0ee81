/*
 * bench_compile.c — workload compile_scaling: JIT compile time against
 * the size of the query, in expression nodes (codegen/cg.h's
 * cg_plan_size), for two shapes that used to grow faster than linearly:
 * a CASE of many WHENs (4 nodes each) and an EXTEND of many columns
 * (3 nodes and a stored column each). Each size compiles at the run's
 * --opt with the compile cache off; the median of three compiles is
 * reported as ms and microseconds per node. Issue 12's target: at most
 * 20 us per node at 10,000 nodes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../codegen/cg.h"
#include "api/engine.h"
#include "bench.h"

static char *case_text(int64_t nodes) {
  int64_t nwhen = nodes / 4;
  size_t cap = (size_t)nwhen * 40 + 128, n = 0;
  char *q = malloc(cap);
  if (!q) return NULL;
  n += (size_t)snprintf(q + n, cap - n, "FROM t |> EXTEND CASE");
  for (int64_t i = 0; i < nwhen; i++)
    n += (size_t)snprintf(q + n, cap - n, " WHEN a = %lld THEN %lld", (long long)i, (long long)i * 3);
  snprintf(q + n, cap - n, " ELSE -1 END AS c |> SELECT c");
  return q;
}

static char *extend_text(int64_t nodes) {
  int64_t ncol = nodes / 4;
  size_t cap = (size_t)ncol * 40 + 64, n = 0;
  char *q = malloc(cap);
  if (!q) return NULL;
  n += (size_t)snprintf(q + n, cap - n, "FROM t |> EXTEND ");
  for (int64_t i = 0; i < ncol; i++)
    n += (size_t)snprintf(q + n, cap - n, "%sa + %lld AS c%lld", i ? ", " : "", (long long)i,
                          (long long)i);
  return q;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Median compile time of text (ns) and its size in nodes; -1 on error. */
static int64_t measure(pj_engine *e, const char *text, int64_t *nodes) {
  int64_t t[3];
  for (int k = 0; k < 3; k++) {
    pj_query *q = NULL;
    pj_result *r = NULL;
    if (pj_query_compile(e, text, &q) != PJ_OK || pj_query_run(q, &r) != PJ_OK) {
      fprintf(stderr, "compile_scaling: %s\n", pj_engine_errmsg(e));
      pj_query_free(q);
      return -1;
    }
    pj_timing tm;
    pj_engine_last_timing(e, &tm);
    t[k] = tm.compile_ns;
    *nodes = cg_plan_size(q->plan);
    pj_result_free(r);
    pj_query_free(q);
  }
  qsort(t, 3, sizeof *t, cmp_i64);
  return t[1];
}

int bench_compile_scaling(int opt, const char *report) {
  pj_engine *e = NULL;
  if (pj_engine_open(NULL, &e) != PJ_OK) return -1;
  pj_engine_set_mode(e, PJ_MODE_JIT);
  pj_engine_set_opt_level(e, opt);
  pj__engine_set_cache_size(e, 0);
  if (pj_engine_exec(e, "CREATE PERFETTO TABLE t AS SELECT 7 AS a", NULL, NULL) != PJ_OK) {
    pj_engine_close(e);
    return -1;
  }
  static const int64_t sizes[] = {1000, 2000, 4000, 10000};
  static const char *const shapes[] = {"CASE WHEN", "EXTEND"};
  char lines[8][160];
  int nl = 0, rc = 0;
  printf("\ncompile_scaling (--opt %d, median of 3 compiles)\n", opt);
  printf("%-10s %8s %12s %10s\n", "shape", "nodes", "compile ms", "us/node");
  for (int s = 0; s < 2 && rc == 0; s++) {
    for (int i = 0; i < 4; i++) {
      char *text = s == 0 ? case_text(sizes[i]) : extend_text(sizes[i]);
      int64_t nodes = 0, ns = text ? measure(e, text, &nodes) : -1;
      free(text);
      if (ns < 0) {
        rc = -1;
        break;
      }
      double us = nodes ? (double)ns / 1e3 / (double)nodes : 0;
      printf("%-10s %8lld %12.1f %10.1f\n", shapes[s], (long long)nodes, (double)ns / 1e6, us);
      snprintf(lines[nl++], sizeof lines[0], "| %s | %lld | %.1f | %.1f |", shapes[s],
               (long long)nodes, (double)ns / 1e6, us);
    }
  }
  pj_engine_close(e);
  if (rc == 0 && report) {
    FILE *f = fopen(report, "a");
    if (!f) return -1;
    fprintf(f, "\n## compile_scaling\n\nJIT compile time against query size (--opt %d, median "
               "of 3 compiles, compile cache off). Target: at most 20 us per node at 10,000 "
               "nodes.\n\n| shape | nodes | compile ms | us/node |\n|---|---:|---:|---:|\n",
            opt);
    for (int i = 0; i < nl; i++) fprintf(f, "%s\n", lines[i]);
    fclose(f);
  }
  return rc;
}
