/*
 * bench_ivsrc.c — data and the plain-SQL peer of events_to_intervals
 * (LANGUAGE.md §9.1's INTERVALS FROM EVENTS): n counter samples on 64
 * tracks, in ts order with the tracks interleaved (as a trace's counter
 * table is), as a columnar table `counter` and an SQLite copy indexed on
 * (track_id, ts) for the peer, `LEAD(ts) OVER (PARTITION BY track_id
 * ORDER BY ts)`, the way PerfettoSQL users turn samples into intervals
 * today. union_of and interval_find run on the sample trace
 * (bench_interval.c's setup).
 */
#include <sqlite3.h>
#include <stdio.h>

#include "../runtime/rt.h"
#include "bench.h"

int bench_evt_setup(pj_engine *e, int64_t n) {
  char sql[1024];
  /* ts strictly increasing; the track of sample i scattered over 64 */
  snprintf(sql, sizeof sql,
           "DROP TABLE IF EXISTS evt_src;"
           "CREATE TABLE evt_src AS WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r "
           "WHERE i < %lld) SELECT i AS id, i * 10 + (i * 7) %% 5 AS ts, (i * 2654435761) %% 64 AS "
           "track_id, (i %% 1000) * 0.5 AS value FROM r;"
           "CREATE INDEX evt_src_track_ts ON evt_src(track_id, ts);",
           (long long)(n > 0 ? n - 1 : 0));
  if (sqlite3_exec(pj_engine_sqlite(e), sql, NULL, NULL, NULL) != SQLITE_OK) return -1;
  return pj_engine_exec(e, "CREATE PERFETTO TABLE counter AS SELECT * FROM evt_src", NULL, NULL) ==
                 PJ_OK
             ? 0
             : -1;
}

static const char EVT_SQL[] =
    "SELECT COUNT(*), SUM(d), SUM(value) FROM (SELECT LEAD(ts) OVER (PARTITION BY track_id "
    "ORDER BY ts) - ts AS d, value FROM evt_src) WHERE d IS NOT NULL";

int bench_evt_sql(pj_engine *e, int64_t *count, int64_t *sum, double *ms) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(pj_engine_sqlite(e), EVT_SQL, -1, &st, NULL) != SQLITE_OK) return -1;
  int64_t t0 = rt_now_ns();
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    *count = sqlite3_column_int64(st, 0);
    *sum = sqlite3_column_int64(st, 1);
  }
  *ms = (double)(rt_now_ns() - t0) / 1e6;
  sqlite3_finalize(st);
  return rc == SQLITE_ROW ? 0 : -1;
}
