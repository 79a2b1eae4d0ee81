/*
 * bench_interval.c — data and the plain-SQL reference of the INTERVAL
 * workloads (intersect, intersect_overlapping, flatten, interval_join,
 * intersect_sql): the sample trace, and for intersect_sql the same
 * per-cpu overlap sums computed by SQLite over indexed copies of sched
 * and cpu_frequency, under a time cap like tree_sql's.
 *
 * The SQL is the best plain formulation we know: a join on cpu with the
 * overlap predicate, plus the redundant bound f.ts > s.ts - max(f.dur)
 * (implied by s.ts < f.ts + f.dur), which turns the probe into a range
 * scan of the (cpu, ts) index instead of every earlier frequency row.
 * Only positive-length overlaps count: the sample has no points, and a
 * point would add dur 0 to pipejit's SUM anyway, so the sums agree.
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/rt.h"
#include "bench.h"

int bench_iv_setup(pj_engine *e, int64_t n, int sql) {
  if (pj_engine_load_sample_trace(e, n) != PJ_OK) return -1;
  if (!sql) return 0;
  /* Real SQLite tables (the columnar ones are virtual tables, which
   * SQLite cannot index), indexed the way the join probes them. No
   * ANALYZE: with statistics SQLite prefers an automatic index on cpu
   * alone and scans every frequency row of the cpu per sched row. */
  return sqlite3_exec(pj_engine_sqlite(e),
                      "DROP TABLE IF EXISTS iv_sched; DROP TABLE IF EXISTS iv_freq;"
                      "CREATE TABLE iv_sched AS SELECT ts, dur, cpu FROM sched;"
                      "CREATE TABLE iv_freq AS SELECT ts, dur, cpu FROM cpu_frequency;"
                      "CREATE INDEX iv_sched_cpu_ts ON iv_sched(cpu, ts);"
                      "CREATE INDEX iv_freq_cpu_ts ON iv_freq(cpu, ts);",
                      NULL, NULL, NULL) == SQLITE_OK
             ? 0
             : -1;
}

static const char IV_SQL[] =
    "SELECT s.cpu, SUM(MIN(s.ts + s.dur, f.ts + f.dur) - MAX(s.ts, f.ts)) "
    "FROM iv_sched s JOIN iv_freq f ON s.cpu = f.cpu "
    "  AND f.ts < s.ts + s.dur AND s.ts < f.ts + f.dur "
    "  AND f.ts > s.ts - (SELECT MAX(dur) FROM iv_freq) "
    "GROUP BY s.cpu ORDER BY s.cpu";

/* Stops SQLite once the deadline has passed. */
static int iv_sql_progress(void *ctx) { return rt_now_ns() > *(int64_t *)ctx; }

int bench_iv_sql(pj_engine *e, double cap_s, bench_iv_sums *out, double *ms) {
  sqlite3 *db = pj_engine_sqlite(e);
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, IV_SQL, -1, &st, NULL) != SQLITE_OK) return -1;
  int64_t t0 = rt_now_ns();
  int64_t deadline = t0 + (int64_t)(cap_s * 1e9);
  sqlite3_progress_handler(db, 10000, iv_sql_progress, &deadline);
  out->n = 0;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW && out->n < BENCH_IV_MAXGROUPS) {
    out->cpu[out->n] = sqlite3_column_int64(st, 0);
    out->d[out->n] = sqlite3_column_int64(st, 1);
    out->n++;
  }
  *ms = (double)(rt_now_ns() - t0) / 1e6;
  sqlite3_progress_handler(db, 0, NULL, NULL);
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? 1 : rc == SQLITE_INTERRUPT ? 0 : -1;
}

int bench_iv_matches(const pj_result *r, const bench_iv_sums *want) {
  if (pj_result_column_count(r) != 2 || pj_result_row_count(r) != want->n) return 0;
  /* pipejit lists groups in first-seen order, SQL by cpu: match by key */
  for (int i = 0; i < want->n; i++) {
    int found = 0;
    for (int64_t j = 0; j < want->n && !found; j++)
      found = !pj_result_is_null(r, j, 0) && pj_result_int64(r, j, 0) == want->cpu[i] &&
              !pj_result_is_null(r, j, 1) && pj_result_int64(r, j, 1) == want->d[i];
    if (!found) return 0;
  }
  return 1;
}
