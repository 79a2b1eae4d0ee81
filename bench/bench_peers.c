/*
 * bench_peers.c — workload `peers` of pipejit-bench (`make bench-peers`):
 * every benchmark workload that has a SQL equivalent, timed in pipejit
 * (interpreter and JIT), DuckDB on one and on two threads, and SQLite, on
 * the same data in the same run, each engine's answer checked against the
 * interpreter's by a checksum; the ratios go into a section of
 * bench/REPORT.md and a bar chart (bench/report_peers.svg).
 *
 * Same data: each data set is made once in a pipejit engine (the sample
 * trace, the table t of `fused`, the tables of `join` and `window`), then
 * copied out with pj_batch_run (batch mode's writer: every table into a
 * SQLite file, types kept) into a plain SQLite connection, and from there
 * as CSV with declared column types into DuckDB.
 *
 * Same answer: every engine runs the workload with one aggregate on top,
 * COUNT(*) and SUM of each numeric output column (the pipeline gets `|>
 * AGGREGATE COUNT(*) …`, the SQL `SELECT COUNT(*), SUM(…) FROM (…)`), so no
 * engine is timed handing many rows to the harness, and the one row is
 * the checksum: integers must be equal, doubles equal to 1e-9 relative (a
 * sum of doubles in another order). Any difference fails the run loudly.
 *
 * Times are wall-clock medians of `repeat` runs, the engines taking turns
 * in each round (a loaded machine slows them alike); the JIT's and the
 * interpreter's are of a compiled handle run again (compile excluded, as
 * DuckDB and SQLite prepare once too). SQLite stops after sql_cap seconds
 * (its time is then a bound, `>`), and an engine whose first run took
 * more than 2 s runs once. Without $PJ_DUCKDB_LIB the DuckDB columns are
 * left out (`make bench-peers` fetches the library: scripts/fetch_duckdb.sh).
 */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../runtime/rt.h"
#include "api/batch.h"
#include "bench.h"
#include "bench/bench_duck.h"

enum { D_SAMPLE, D_T, D_JOIN, D_COUNTER, D_N };

/* The tables of each data set, as pipejit has them. */
static const char *const TABLES[D_N] = {"slice,sched,cpu_frequency", "t",
                                        "slice,thread_track,thread", "counter"};

typedef struct peer_wl {
  const char *name;
  int data;
  const char *pipe;      /* pipejit */
  const char *sql;       /* SQLite, and DuckDB unless duck is set */
  const char *duck;      /* DuckDB's spelling when it differs (LEAST/GREATEST) */
  const char *sums;      /* the numeric output columns summed into the checksum */
  const char *sqlite_prep;   /* indexes SQLite gets (untimed), or NULL */
} peer_wl;

#define AGGP "FROM slice |> WHERE dur > 1000 |> AGGREGATE COUNT(*) AS n, SUM(dur) AS s, MAX(dur) AS m"
#define AGGS "SELECT COUNT(*) AS n, SUM(dur) AS s, MAX(dur) AS m FROM slice WHERE dur > 1000"
#define OVL(a, b) "MIN(" a ".ts + " a ".dur, " b ".ts + " b ".dur) - MAX(" a ".ts, " b ".ts)"
#define OVLD(a, b) "LEAST(" a ".ts + " a ".dur, " b ".ts + " b ".dur) - GREATEST(" a ".ts, " b ".ts)"
/* sched against cpu_frequency on one cpu, overlapping; the last bound
 * lets an index on (cpu, ts) narrow each probe (bench_interval.c's form) */
#define IVJ(x)                                                                          \
  " FROM sched s JOIN cpu_frequency f ON s.cpu = f.cpu AND f.ts < s.ts + s.dur AND "    \
  "s.ts < f.ts + f.dur AND f.ts > s.ts - (SELECT MAX(dur) FROM cpu_frequency) " x
#define IV_PREP                                                                        \
  "CREATE INDEX IF NOT EXISTS s_cpu_ts ON sched(cpu, ts);"                             \
  "CREATE INDEX IF NOT EXISTS f_cpu_ts ON cpu_frequency(cpu, ts)"
#define TREE_UP_SQL                                                                    \
  "WITH RECURSIVE anc(id, top, dur) AS (SELECT id, id, COALESCE(dur, 0) FROM slice "   \
  "UNION ALL SELECT c.id, anc.top, COALESCE(c.dur, 0) FROM slice c JOIN anc ON "       \
  "c.parent_id = anc.id) SELECT SUM(t) AS s, MAX(t) AS m FROM (SELECT top, SUM(dur) AS t " \
  "FROM anc GROUP BY top)"
#define TREE_DOWN_SQL                                                                  \
  "WITH RECURSIVE p(id, t) AS (SELECT id, COALESCE(dur, 0) FROM slice WHERE parent_id " \
  "IS NULL UNION ALL SELECT c.id, p.t + COALESCE(c.dur, 0) FROM slice c JOIN p ON "    \
  "c.parent_id = p.id) SELECT SUM(t) AS s, MAX(t) AS m FROM p"

static const peer_wl WL[] = {
    {"agg_none", D_SAMPLE, AGGP, AGGS, NULL, "n,s,m", NULL},
    {"agg_1key", D_SAMPLE, AGGP " GROUP BY depth", AGGS " GROUP BY depth", NULL, "n,s,m", NULL},
    {"agg_2keys", D_SAMPLE, AGGP " GROUP BY track_id, depth", AGGS " GROUP BY track_id, depth",
     NULL, "n,s,m", NULL},
    {"agg_3keys", D_SAMPLE, AGGP " GROUP BY track_id, depth, parent_id",
     AGGS " GROUP BY track_id, depth, parent_id", NULL, "n,s,m", NULL},
    {"agg_str", D_SAMPLE, AGGP " GROUP BY name", AGGS " GROUP BY name", NULL, "n,s,m", NULL},
    {"agg_3mixed", D_SAMPLE, AGGP " GROUP BY track_id, depth, category",
     AGGS " GROUP BY track_id, depth, category", NULL, "n,s,m", NULL},
    {"fused", D_T,
     "FROM t |> WHERE a > 5 AND b < 1000000 |> EXTEND a * 3 + b AS x, (a - b) * 2 AS y, "
     "c * 0.5 AS z |> AGGREGATE SUM(x) AS sx, SUM(y) AS sy, AVG(z) AS az, COUNT(*) AS n GROUP BY k",
     "SELECT k, SUM(a * 3 + b) AS sx, SUM((a - b) * 2) AS sy, AVG(c * 0.5) AS az, COUNT(*) AS n "
     "FROM t WHERE a > 5 AND b < 1000000 GROUP BY k",
     NULL, "k,sx,sy,az,n", NULL},
    /* bench.c's order_by; the checksum sums a and b only, the sort keys:
     * rows tied on both may be any of the tied rows in another engine */
    {"order_by", D_T, "FROM t |> ORDER BY b DESC, a |> LIMIT 10",
     "SELECT k, a, b, c FROM t ORDER BY b DESC, a LIMIT 10", NULL, "a,b", NULL},
    {"filter_project", D_T, "FROM t |> WHERE a % 7 = 3 OR b IS NULL |> SELECT k, a + b AS s",
     "SELECT k, a + b AS s FROM t WHERE a % 7 = 3 OR b IS NULL", NULL, "k,s", NULL},
    {"tree_up", D_SAMPLE,
     "FROM slice |> TREE ACCUMULATE UP SUM(dur) AS t |> AGGREGATE SUM(t) AS s, MAX(t) AS m",
     TREE_UP_SQL, NULL, "s,m", "CREATE INDEX IF NOT EXISTS slice_parent ON slice(parent_id)"},
    {"tree_down", D_SAMPLE,
     "FROM slice |> TREE ACCUMULATE DOWN SUM(dur) AS t |> AGGREGATE SUM(t) AS s, MAX(t) AS m",
     TREE_DOWN_SQL, NULL, "s,m", "CREATE INDEX IF NOT EXISTS slice_parent ON slice(parent_id)"},
    {"intersect", D_SAMPLE,
     "INTERVAL INTERSECTION OF (sched AS s, cpu_frequency AS f) PER cpu "
     "|> AGGREGATE SUM(dur) AS d GROUP BY cpu",
     "SELECT s.cpu, SUM(" OVL("s", "f") ") AS d" IVJ("GROUP BY s.cpu"),
     "SELECT s.cpu, SUM(" OVLD("s", "f") ") AS d" IVJ("GROUP BY s.cpu"), "cpu,d",
     IV_PREP},
    {"interval_join", D_SAMPLE,
     "FROM sched |> INTERVAL JOIN cpu_frequency AS f OVERLAPPING BOUNDS PER cpu "
     "|> AGGREGATE COUNT(*) AS n, SUM(f.freq) AS fr, SUM(dur) AS d GROUP BY cpu",
     "SELECT s.cpu, COUNT(*) AS n, SUM(f.freq) AS fr, SUM(s.dur) AS d" IVJ("GROUP BY s.cpu"),
     NULL, "cpu,n,fr,d", IV_PREP},
    {"join", D_JOIN,
     "FROM slice |> JOIN thread_track AS tt ON track_id = tt.id |> JOIN thread USING (utid) "
     "|> AGGREGATE SUM(dur) AS d GROUP BY thread.name",
     "SELECT thread.name, SUM(dur) AS d FROM slice s JOIN thread_track tt ON s.track_id = tt.id "
     "JOIN thread thread USING (utid) GROUP BY thread.name",
     NULL, "d", NULL},
    {"window", D_COUNTER,
     "FROM counter |> EXTEND LAG(ts) OVER (PARTITION BY track_id ORDER BY ts) AS prev "
     "|> AGGREGATE SUM(ts - prev) AS s, COUNT(prev) AS n",
     "SELECT SUM(ts - prev) AS s, COUNT(prev) AS n FROM (SELECT ts, LAG(ts) OVER (PARTITION BY "
     "track_id ORDER BY ts) AS prev FROM counter)",
     NULL, "s,n", NULL},
};
#define NWL (int)(sizeof WL / sizeof WL[0])

/* E_JIT2: the JIT's handle again on two threads (pj_engine_set_threads);
 * every other pipejit column runs on one. */
enum { E_INTERP, E_JIT, E_JIT2, E_DUCK1, E_DUCK2, E_SQLITE, E_N };
static const char *const ENGINE[E_N] = {"interp", "jit", "jit-2t", "duckdb-1t", "duckdb-2t", "sqlite"};

#define MAXC 8
typedef struct checksum {
  int n;
  int isnull[MAXC];
  int64_t i[MAXC];
  double d[MAXC];
} checksum;

typedef struct peer_row {
  const char *workload;
  int64_t size;
  double ms[E_N];      /* median; < 0: not run */
  int capped[E_N];     /* SQLite hit the cap: ms is a bound */
  int same[E_N];
} peer_row;

static void fail(const char *what, const char *detail) {
  fprintf(stderr, "pipejit-bench: peers: %s: %s\n", what, detail ? detail : "failed");
  exit(1);
}

/* ---- the data --------------------------------------------------------- */

static void make_data(pj_engine *e, int data, int64_t n, bench_data *t) {
  switch (data) {
  case D_SAMPLE:
    if (pj_engine_load_sample_trace(e, n) != PJ_OK) fail("sample trace", pj_engine_errmsg(e));
    return;
  case D_T:
    bench_data_make(t, n);
    if (bench_data_install(e, t, "t") != 0) fail("table t", NULL);
    return;
  case D_JOIN:
    if (bench_join_setup(e, n) != 0) fail("join tables", pj_engine_errmsg(e));
    return;
  case D_COUNTER:   /* bench_window.c's counter rows */
    if (bench_counter_setup(e, n) != 0) fail("counter table", pj_engine_errmsg(e));
    return;
  }
}

/* The data set's tables into a plain SQLite connection, through batch
 * mode's part file (`-- name: TABLE` / `FROM TABLE` per table). */
static sqlite3 *copy_to_sqlite(pj_engine *e, int data, const char *dir) {
  char script[1024] = "", part[512], list[256];
  snprintf(list, sizeof list, "%s", TABLES[data]);
  for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    size_t l = strlen(script);
    snprintf(script + l, sizeof script - l, "-- name: %s\nFROM %s;\n", t, t);
  }
  snprintf(part, sizeof part, "%s/peers-part.db", dir);
  if (pj_batch_run(e, script, strlen(script), part) != PJ_OK) fail("copy out", pj_engine_errmsg(e));
  sqlite3 *db = NULL;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) fail("sqlite", NULL);
  char *sql = sqlite3_mprintf("ATTACH %Q AS p", part);
  char *err = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) fail("attach", err);
  sqlite3_free(sql);
  sqlite3_stmt *q = NULL;
  sqlite3_prepare_v2(db, "SELECT ord, name FROM p." PJ_BATCH_STMTS, -1, &q, NULL);
  while (q && sqlite3_step(q) == SQLITE_ROW) {
    sql = sqlite3_mprintf("CREATE TABLE main.\"%w\" AS SELECT * FROM p.s%d",
                          (const char *)sqlite3_column_text(q, 1), sqlite3_column_int(q, 0));
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) fail("copy", err);
    sqlite3_free(sql);
  }
  sqlite3_finalize(q);
  sqlite3_exec(db, "DETACH p", NULL, NULL, NULL);
  unlink(part);
  return db;
}

static const char *duck_type(const char *decl) {
  return !decl ? "BIGINT" : strstr(decl, "REAL") ? "DOUBLE" : strstr(decl, "TEXT") ? "VARCHAR" : "BIGINT";
}

/* Every table of the SQLite copy into DuckDB, through a CSV file. */
static void copy_to_duck(sqlite3 *db, int data, const char *dir) {
  char list[256];
  snprintf(list, sizeof list, "%s", TABLES[data]);
  for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char path[512], *sql = sqlite3_mprintf("SELECT * FROM \"%w\"", t);
    snprintf(path, sizeof path, "%s/peers-%s.csv", dir, t);
    sqlite3_stmt *q = NULL;
    FILE *f = fopen(path, "w");
    if (!f || sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) fail("csv", path);
    sqlite3_free(sql);
    int nc = sqlite3_column_count(q);
    sqlite3_str *cols = sqlite3_str_new(NULL);
    for (int c = 0; c < nc; c++) {
      fprintf(f, "%s%s", c ? "," : "", sqlite3_column_name(q, c));
      sqlite3_str_appendf(cols, "%s'%q': '%s'", c ? ", " : "", sqlite3_column_name(q, c),
                          duck_type(sqlite3_column_decltype(q, c)));
    }
    fputc('\n', f);
    while (sqlite3_step(q) == SQLITE_ROW) {
      for (int c = 0; c < nc; c++) {
        if (c) fputc(',', f);
        switch (sqlite3_column_type(q, c)) {
        case SQLITE_NULL: break;
        case SQLITE_INTEGER: fprintf(f, "%lld", (long long)sqlite3_column_int64(q, c)); break;
        case SQLITE_FLOAT: fprintf(f, "%.17g", sqlite3_column_double(q, c)); break;
        default: {
          fputc('"', f);
          for (const char *s = (const char *)sqlite3_column_text(q, c); s && *s; s++) {
            if (*s == '"') fputc('"', f);
            fputc(*s, f);
          }
          fputc('"', f);
        }
        }
      }
      fputc('\n', f);
    }
    sqlite3_finalize(q);
    if (fclose(f) != 0) fail("csv", path);
    char *types = sqlite3_str_finish(cols);
    sql = sqlite3_mprintf("CREATE OR REPLACE TABLE \"%w\" AS SELECT * FROM read_csv('%q', header = "
                          "true, allow_quoted_nulls = false, columns = {%s})",
                          t, path, types);
    if (bench_duck_exec(sql, 0, NULL) != 0) fail("DuckDB load", t);
    sqlite3_free(sql);
    sqlite3_free(types);
    unlink(path);
  }
}

/* ---- the runs --------------------------------------------------------- */

/* The checksum query of w for SQL (SQLite or DuckDB) or for pipejit. */
static char *wrapped(const peer_wl *w, int pipeline, int duck) {
  sqlite3_str *s = sqlite3_str_new(NULL);
  char sums[128];
  snprintf(sums, sizeof sums, "%s", w->sums);
  if (pipeline) sqlite3_str_appendf(s, "%s |> AGGREGATE COUNT(*) AS n__", w->pipe);
  else sqlite3_str_appendall(s, "SELECT COUNT(*)");
  int k = 0;
  for (char *save = NULL, *c = strtok_r(sums, ",", &save); c; c = strtok_r(NULL, ",", &save), k++)
    sqlite3_str_appendf(s, pipeline ? ", SUM(%s) AS s%d__" : ", SUM(%s)", c, k);
  if (!pipeline) sqlite3_str_appendf(s, " FROM (%s) AS q__", duck && w->duck ? w->duck : w->sql);
  return sqlite3_str_finish(s);
}

static double now_ms(void) { return (double)rt_now_ns() / 1e6; }

static void take_result(const pj_result *r, checksum *c) {
  c->n = pj_result_column_count(r);
  for (int k = 0; k < c->n && k < MAXC; k++) {
    c->isnull[k] = pj_result_row_count(r) < 1 || pj_result_is_null(r, 0, k);
    c->i[k] = c->isnull[k] ? 0 : pj_result_int64(r, 0, k);
    c->d[k] = c->isnull[k] ? 0 : pj_result_double(r, 0, k);
  }
}

static int sqlite_deadline(void *ctx) { return rt_now_ns() > *(int64_t *)ctx; }

/* One SQLite run: 0, 1 capped, or fails. */
static int run_sqlite(sqlite3 *db, const char *sql, double cap_s, double *ms, checksum *c) {
  sqlite3_stmt *q = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) fail("SQLite", sqlite3_errmsg(db));
  int64_t deadline = rt_now_ns() + (int64_t)(cap_s * 1e9);
  sqlite3_progress_handler(db, 10000, sqlite_deadline, &deadline);
  double t0 = now_ms();
  int rc = sqlite3_step(q);
  if (rc == SQLITE_ROW) {
    c->n = sqlite3_column_count(q);
    for (int k = 0; k < c->n && k < MAXC; k++) {
      c->isnull[k] = sqlite3_column_type(q, k) == SQLITE_NULL;
      c->i[k] = sqlite3_column_int64(q, k);
      c->d[k] = sqlite3_column_double(q, k);
    }
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {}
  }
  *ms = now_ms() - t0;
  sqlite3_progress_handler(db, 0, NULL, NULL);
  sqlite3_finalize(q);
  if (rc == SQLITE_INTERRUPT) return 1;
  if (rc != SQLITE_DONE) fail("SQLite", sqlite3_errmsg(db));
  return 0;
}

/* Equal checksums: integers exactly, doubles to 1e-9 relative. A column
 * is compared as the interpreter typed it. */
static int same_sum(const checksum *ref, const pj_result *typed, const checksum *c) {
  if (c->n != ref->n) return 0;
  for (int k = 0; k < c->n && k < MAXC; k++) {
    if (c->isnull[k] != ref->isnull[k]) return 0;
    if (ref->isnull[k]) continue;
    if (pj_result_column_type(typed, k) == PJ_TYPE_DOUBLE) {
      double a = ref->d[k], b = c->d[k];
      if (fabs(a - b) > 1e-9 * fmax(fabs(a), fabs(b)) && a != b) return 0;
    } else if (c->i[k] != ref->i[k]) {
      return 0;
    }
  }
  return 1;
}

static void print_sum(const char *who, const checksum *c) {
  fprintf(stderr, "  %-10s", who);
  for (int k = 0; k < c->n && k < MAXC; k++)
    if (c->isnull[k]) fprintf(stderr, " NULL");
    else fprintf(stderr, " %lld/%.17g", (long long)c->i[k], c->d[k]);
  fputc('\n', stderr);
}

static void run_one(const peer_wl *w, pj_engine *e, sqlite3 *db, int duck, int64_t size,
                    int repeat, double cap_s, peer_row *out) {
  memset(out, 0, sizeof *out);
  out->workload = w->name;
  out->size = size;
  char *pipe = wrapped(w, 1, 0), *sql = wrapped(w, 0, 0), *dsql = wrapped(w, 0, 1);
  pj_query *q[2] = {NULL, NULL};
  pj_result *ref = NULL;
  checksum got[E_N];
  double t[E_N][64];
  int runs[E_N] = {0}, slow[E_N] = {0};
  memset(got, 0, sizeof got);
  if (repeat > 64) repeat = 64;
  pj_engine_set_threads(e, 1);
  for (int m = 0; m < 2; m++) {
    pj_engine_set_mode(e, m ? PJ_MODE_JIT : PJ_MODE_INTERP);
    if (pj_query_compile(e, pipe, &q[m]) != PJ_OK) fail(w->name, pj_engine_errmsg(e));
    pj_result *r = NULL;   /* the first run compiles (JIT): not timed */
    if (pj_query_run(q[m], &r) != PJ_OK) fail(w->name, pj_engine_errmsg(e));
    take_result(r, &got[m]);
    if (m == 0) ref = r;
    else pj_result_free(r);
  }
  for (int en = 0; en < E_N; en++) out->ms[en] = -1;
  for (int round = 0; round < repeat; round++) {
    for (int en = 0; en < E_N; en++) {
      if ((en == E_DUCK1 || en == E_DUCK2) && !duck) continue;
      if (slow[en] || out->capped[en]) continue;
      double t0 = now_ms(), ms = 0;
      if (en <= E_JIT2) {
        pj_result *r = NULL;
        pj_engine_set_threads(e, en == E_JIT2 ? 2 : 1);
        t0 = now_ms();
        if (pj_query_run(q[en == E_JIT2 ? E_JIT : en], &r) != PJ_OK) fail(w->name, pj_engine_errmsg(e));
        ms = now_ms() - t0;
        pj_engine_set_threads(e, 1);
        if (en == E_JIT2) take_result(r, &got[en]);   /* two threads' answer, checked too */
        pj_result_free(r);
      } else if (en == E_SQLITE) {
        out->capped[en] = run_sqlite(db, sql, cap_s, &ms, &got[en]);
      } else {
        bench_duck_exec(en == E_DUCK1 ? "SET threads TO 1" : "SET threads TO 2", 0, NULL);
        t0 = now_ms();
        if (bench_duck_row(dsql, got[en].n = got[E_INTERP].n, got[en].i, got[en].d,
                           got[en].isnull) != 0)
          fail(w->name, "DuckDB");
        ms = now_ms() - t0;
      }
      t[en][runs[en]++] = ms;
      if (ms > 2000) slow[en] = 1;   /* long runs: once is enough */
    }
  }
  for (int en = 0; en < E_N; en++) {
    if (!runs[en]) continue;
    out->ms[en] = bench_median(t[en], runs[en]);
    out->same[en] = out->capped[en] ? -1 : same_sum(&got[E_INTERP], ref, &got[en]);
    if (out->same[en] == 0) {
      fprintf(stderr, "pipejit-bench: peers: CHECKSUM MISMATCH in %s at %lld rows: %s differs from "
                      "pipejit's interpreter (COUNT(*), then SUM of %s):\n",
              w->name, (long long)size, ENGINE[en], w->sums);
      print_sum(ENGINE[E_INTERP], &got[E_INTERP]);
      print_sum(ENGINE[en], &got[en]);
    }
  }
  pj_result_free(ref);
  pj_query_free(q[0]);
  pj_query_free(q[1]);
  sqlite3_free(pipe);
  sqlite3_free(sql);
  sqlite3_free(dsql);
}

/* ---- the report ------------------------------------------------------- */

static void fmt_ms(char *buf, size_t cap, double ms, int capped) {
  if (ms < 0) snprintf(buf, cap, "–");
  else snprintf(buf, cap, "%s%.*f", capped ? "> " : "", ms < 10 ? 2 : ms < 100 ? 1 : 0, ms);
}

static void fmt_ratio(char *buf, size_t cap, const peer_row *r, int a, int b) {
  if (r->ms[a] < 0 || r->ms[b] <= 0) snprintf(buf, cap, "–");
  else if (r->ms[a] / r->ms[b] >= 0.1)
    snprintf(buf, cap, "%s%.2fx", r->capped[b] ? "< " : "", r->ms[a] / r->ms[b]);
  else   /* two significant digits, not 0.00x */
    snprintf(buf, cap, "%s%.2gx", r->capped[b] ? "< " : "", r->ms[a] / r->ms[b]);
}

/* The section, between markers, so a later run replaces it and `make
 * bench` (report.c) keeps it. */
static void write_section(FILE *f, const peer_row *rows, int n, int duck, int repeat, double cap_s,
                          const char *svg) {
  char date[64];
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M %Z", localtime(&now));
  fprintf(f, "## Peers: DuckDB and SQLite (`make bench-peers`)\n\n");
  fprintf(f, "Measured on %s: every workload with a SQL equivalent, on the same data in one run "
             "(bench/bench_peers.c): pipejit's interpreter and JIT on one thread and the JIT on "
             "two (compiled handle run again), %s and SQLite (its own copy, indexed where the SQL needs it; stopped "
             "after %.0f s, then `>`). Wall-clock medians of %d rounds in which the engines take "
             "turns (1 run when one takes over 2 s). Every engine's checksum (COUNT(*) and the "
             "SUM of each output column) equals the interpreter's unless **same** says NO.\n\n",
          date,
          duck ? "DuckDB on 1 and on 2 threads (its C library, scripts/fetch_duckdb.sh)"
               : "(DuckDB not measured: PJ_DUCKDB_LIB unset)",
          cap_s, repeat);
  if (svg) fprintf(f, "![peers](%s)\n\n", svg);
  fprintf(f, "| workload | rows | interp ms | jit ms | jit 2t ms | duckdb 1t ms | duckdb 2t ms | "
             "sqlite ms | jit 1t / 2t | jit / duckdb 1t | jit 2t / duckdb 2t | jit / sqlite | same |\n"
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
  for (int i = 0; i < n; i++) {
    const peer_row *r = &rows[i];
    char ms[E_N][32], sp[32], q1[32], q2[32], qs[32];
    for (int en = 0; en < E_N; en++) fmt_ms(ms[en], sizeof ms[en], r->ms[en], r->capped[en]);
    fmt_ratio(sp, sizeof sp, r, E_JIT, E_JIT2);
    fmt_ratio(q1, sizeof q1, r, E_JIT, E_DUCK1);
    fmt_ratio(q2, sizeof q2, r, E_JIT2, E_DUCK2);
    fmt_ratio(qs, sizeof qs, r, E_JIT, E_SQLITE);
    int same = 1, capped = 0;
    for (int en = 0; en < E_N; en++) {
      if (r->ms[en] < 0) continue;
      same &= r->same[en] != 0;
      capped |= r->same[en] < 0;
    }
    fprintf(f, "| `%s` | %lld | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r->workload,
            (long long)r->size, ms[E_INTERP], ms[E_JIT], ms[E_JIT2], ms[E_DUCK1], ms[E_DUCK2],
            ms[E_SQLITE], sp, q1, q2, qs, !same ? "**NO**" : capped ? "yes (SQLite capped)" : "yes");
  }
  fprintf(f, "\nLeft out: `flatten` (INTERVAL FLATTEN has no plain SQL form short of a "
             "hand-written sweep), `tiny` (`fused` at 1,000 rows), `tree_up_shuffled` (a SQLite "
             "source: the same tree as `tree_up` for the peers); `self_time`, `sql_join` and "
             "`table_function` compare SQL with SQL (their own sections).\n");
}

/* Bars of ms per engine and workload, log scale. */
static int write_svg(const char *path, const peer_row *rows, int n) {
  static const char *const color[E_N] = {"#1f77b4", "#d62728", "#ff9896", "#2ca02c", "#98df8a", "#7f7f7f"};
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  const int left = 130, width = 560, bar = 7, gap = 10, top = 70;
  int h = top + n * (E_N * bar + gap) + 40, w = left + width + 120;
  double lo = 1e9, hi = 0;
  for (int i = 0; i < n; i++)
    for (int en = 0; en < E_N; en++)
      if (rows[i].ms[en] > 0) lo = fmin(lo, rows[i].ms[en]), hi = fmax(hi, rows[i].ms[en]);
  if (hi <= 0) lo = 1, hi = 10;
  double xlo = floor(log10(lo)), xhi = ceil(log10(hi));
  if (xhi <= xlo) xhi = xlo + 1;
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
             "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, "
             "sans-serif\" font-size=\"11\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"#fafafa\"/>\n"
             "<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">make bench-peers: ms "
             "per run (median, log scale, shorter is faster)</text>\n",
          w, h, w, h);
  for (int en = 0; en < E_N; en++)
    fprintf(f, "<rect x=\"%d\" y=\"34\" width=\"12\" height=\"10\" fill=\"%s\"/><text x=\"%d\" "
               "y=\"43\">%s</text>\n",
            left + en * 110, color[en], left + en * 110 + 16, ENGINE[en]);
  for (double d = xlo; d <= xhi; d++) {
    double x = left + (d - xlo) / (xhi - xlo) * width;
    fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/><text x=\"%.1f\" "
               "y=\"%d\" text-anchor=\"middle\">%g ms</text>\n",
            x, top - 8, x, h - 30, x, h - 16, pow(10, d));
  }
  for (int i = 0; i < n; i++) {
    int y0 = top + i * (E_N * bar + gap);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", left - 6,
            y0 + E_N * bar / 2 + 4, rows[i].workload);
    for (int en = 0; en < E_N; en++) {
      double ms = rows[i].ms[en];
      if (ms <= 0) continue;
      double x = (log10(ms) - xlo) / (xhi - xlo) * width;
      fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"%s/>"
                 "<text x=\"%.1f\" y=\"%d\" font-size=\"8\">%s%.3g</text>\n",
              left, y0 + en * bar, x > 1 ? x : 1, bar - 1, color[en],
              rows[i].same[en] == 0 ? " stroke=\"black\" stroke-width=\"2\"" : "",
              left + (x > 1 ? x : 1) + 3, y0 + en * bar + bar - 1, rows[i].capped[en] ? ">" : "", ms);
    }
  }
  fprintf(f, "</svg>\n");
  return fclose(f) == 0 ? 0 : -1;
}

/* The section "peers" of the report (bench_report_section). */
static int update_report(const char *report, const peer_row *rows, int n, int duck, int repeat,
                         double cap_s, const char *svg_name) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return -1;
  write_section(f, rows, n, duck, repeat, cap_s, svg_name);
  int rc = fclose(f) == 0 ? bench_report_section(report, "peers", text) : -1;
  free(text);
  return rc;
}

int bench_peers(const bench_peers_opts *o) {
  int duck = bench_duck_open();
  if (duck < 0) return -1;
  duck = duck == 0;
  if (!duck) fprintf(stderr, "peers: PJ_DUCKDB_LIB is not set: SQLite only (make bench-peers fetches DuckDB)\n");
  const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  peer_row rows[NWL];
  int n = 0, bad = 0;
  printf("%-15s %9s %10s %10s %10s %10s %10s %10s %8s %8s %8s %8s %s\n", "workload", "rows",
         "interp_ms", "jit_ms", "jit2_ms", "duck1_ms", "duck2_ms", "sqlite_ms", "jit/jit2", "jit/d1",
         "jit2/d2", "jit/sq", "same");
  for (int data = 0; data < D_N; data++) {
    int any = 0;
    for (int i = 0; i < NWL; i++) any |= WL[i].data == data && bench_selected(o->workloads, WL[i].name);
    if (!any) continue;
    pj_engine *e = NULL;
    bench_data t = {0};
    if (pj_engine_open(NULL, &e) != PJ_OK) fail("engine", NULL);
    pj_engine_set_opt_level(e, o->opt);
    make_data(e, data, o->size, &t);
    sqlite3 *db = copy_to_sqlite(e, data, dir);
    if (duck) copy_to_duck(db, data, dir);
    for (int i = 0; i < NWL; i++) {
      const peer_wl *w = &WL[i];
      if (w->data != data || !bench_selected(o->workloads, w->name)) continue;
      if (w->sqlite_prep) {   /* the indexes SQLite's form of the query needs */
        char *err = NULL;
        if (sqlite3_exec(db, w->sqlite_prep, NULL, NULL, &err) != SQLITE_OK) fail("index", err);
      }
      peer_row *r = &rows[n++];
      run_one(w, e, db, duck, o->size, o->repeat, o->sql_cap, r);
      char ms[E_N][32], sp[32], q1[32], q2[32], qs[32];
      int same = 1;
      for (int en = 0; en < E_N; en++) {
        fmt_ms(ms[en], sizeof ms[en], r->ms[en], r->capped[en]);
        if (r->ms[en] >= 0) same &= r->same[en] != 0;
      }
      fmt_ratio(sp, sizeof sp, r, E_JIT, E_JIT2);
      fmt_ratio(q1, sizeof q1, r, E_JIT, E_DUCK1);
      fmt_ratio(q2, sizeof q2, r, E_JIT2, E_DUCK2);
      fmt_ratio(qs, sizeof qs, r, E_JIT, E_SQLITE);
      printf("%-15s %9lld %10s %10s %10s %10s %10s %10s %8s %8s %8s %8s %s\n", w->name,
             (long long)o->size, ms[E_INTERP], ms[E_JIT], ms[E_JIT2], ms[E_DUCK1], ms[E_DUCK2],
             ms[E_SQLITE], sp, q1, q2, qs, same ? "yes" : "NO");
      fflush(stdout);
      bad |= !same;
    }
    sqlite3_close(db);
    pj_engine_close(e);
    if (data == D_T) bench_data_free(&t);
  }
  if (o->report) {
    const char *svg_name = NULL;
    if (o->svg) {
      if (write_svg(o->svg, rows, n) != 0) fail("svg", o->svg);
      svg_name = strrchr(o->svg, '/') ? strrchr(o->svg, '/') + 1 : o->svg;
    }
    if (update_report(o->report, rows, n, duck, o->repeat, o->sql_cap, svg_name) != 0)
      fail("report", o->report);
  }
  if (bad) fprintf(stderr, "pipejit-bench: peers: some engine gave a different answer (above)\n");
  return bad ? 1 : 0;
}
