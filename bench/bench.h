/*
 * bench.h — pieces of the benchmark harness (pipejit-bench): the data of
 * the workloads, and the hand-written C reference for workload `fused`.
 */
#ifndef PJ_BENCH_H
#define PJ_BENCH_H

#include <stdint.h>

#include "pipejit.h"

/* The table of the workloads, as plain arrays: k (16 distinct values), a,
 * b (int64), c (double); a, b and c are NULL where their bit is clear.
 * Deterministic for a given n. */
typedef struct bench_data {
  int64_t n;
  int64_t *k, *a, *b;
  double *c;
  uint64_t *va, *vb, *vc;   /* validity, bit set = not NULL */
} bench_data;

void bench_data_make(bench_data *d, int64_t n);
void bench_data_free(bench_data *d);
/* Registers the data as finalized columnar table `name` in the engine. */
int bench_data_install(pj_engine *e, const bench_data *d, const char *name);
/* Points out at the installed table's own arrays (not owned: do not free),
 * so the C reference reads exactly the memory the engine reads. */
int bench_data_view(pj_engine *e, const char *name, bench_data *out);

/* Result of the fused reference: per group (first-seen order) the key,
 * sums, avg and count, exactly as the query computes them. */
typedef struct bench_fused_group {
  int64_t k, sx, sy, n;
  double az;
  int az_null, sx_null, sy_null;
} bench_fused_group;

/* Runs `fused` over d by hand (bench/ref_fused.c, built -O3 -march=native).
 * Returns the number of groups written to out (at most cap), or -1 on
 * integer overflow. */
int bench_ref_fused(const bench_data *d, bench_fused_group *out, int cap);

/* Grouped-aggregation workloads agg_* on the sample trace's slice table:
 * the columns the hand-written reference (bench/ref_agg.c, -O3
 * -march=native) reads, and its answer per group in first-seen order. */
enum { BENCH_AGG_TRACK, BENCH_AGG_DEPTH, BENCH_AGG_PARENT, BENCH_AGG_NAME, BENCH_AGG_CATEGORY,
       BENCH_AGG_TS, BENCH_AGG_NCOLS };
typedef struct bench_agg_in {
  int64_t n;
  const int64_t *dur;
  const uint64_t *vdur;                   /* validity; NULL when no NULLs */
  const void *col[BENCH_AGG_NCOLS];       /* int64, name: uint32 string ids */
  const uint64_t *valid[BENCH_AGG_NCOLS];
} bench_agg_in;
typedef struct bench_agg_out {
  int nkeys;
  int64_t ngroups;
  int64_t *key[3];
  uint8_t *knull[3];
  int64_t *n, *s, *m;
} bench_agg_out;
/* shape 1: GROUP BY depth; 2: track_id, depth; 3: track_id, depth,
 * parent_id; 4: name; 5: track_id, depth, category; 6: no GROUP BY (one
 * group); 7: ts % 100000; 8: ts % 1000000. 0, or -1 on overflow or out of
 * memory. bench_agg_nkeys: the shape's number of keys. */
int bench_ref_agg(const bench_agg_in *in, int shape, bench_agg_out *out);
int bench_agg_nkeys(int shape);
/* The same answer on `threads` threads (a piece of the rows each, then the
 * pieces' groups folded in order): the machine's ceiling for the engine's
 * thread speed-up. */
int bench_ref_agg_par(const bench_agg_in *in, int shape, int threads, bench_agg_out *out);
void bench_agg_out_free(bench_agg_out *o);
/* bench/bench_agg.c: points in at the engine's slice table (not owned);
 * 0 or -1. */
int bench_agg_view(pj_engine *e, bench_agg_in *in);
/* 1 when r (keys, n, s, m) is exactly o, row for row. */
int bench_agg_matches(const pj_result *r, const bench_agg_out *o);
/* DuckDB (bench_duck.h) on one thread: copies the slice table into it
 * (0, 1 when $PJ_DUCKDB_LIB is not set, -1); runs the workload's SQL
 * GROUP BY keys, giving the group count, the sums of n, s and m over the
 * groups and the wall time. bench_agg_sums: the same sums of a result. */
int bench_agg_duck_load(pj_engine *e);
int bench_agg_duck_run(const char *keys, int64_t *rows, int64_t sums[3], double *ms);
int bench_agg_sums(const pj_result *r, int nkeys, int64_t sums[3]);

/* TREE ACCUMULATE workloads (bench/bench_tree.c). The expected answers
 * of `AGGREGATE SUM(t) AS s, MAX(t) AS m` over TREE ACCUMULATE UP / DOWN
 * SUM(dur) AS t, computed by hand from the slice table. */
typedef struct bench_tree_ref {
  int64_t s_up, m_up, s_down, m_down;
} bench_tree_ref;

/* Loads the sample trace with n slices into e and fills ref; with
 * shuffled, also creates SQLite table shuffled(id, parent_id, dur): the
 * same tree in random row order with ids perm(id) * 7 + 3, indexed on
 * parent_id. 0 or -1. */
int bench_tree_setup(pj_engine *e, int64_t n, int shuffled, bench_tree_ref *ref);
/* 1 when r is the one row (s, m) ref expects for UP (down = 0) or DOWN. */
int bench_tree_matches(const pj_result *r, const bench_tree_ref *ref, int down);
/* The UP answer from plain SQLite (recursive CTE over `shuffled`), stopped
 * after cap_s seconds. Returns 1 with *s, *m; 0 when the cap was hit; -1
 * on error. *ms is the time spent either way. */
int bench_tree_sql(pj_engine *e, double cap_s, int64_t *s, int64_t *m, double *ms);

/* Workload `flamegraph` (bench/bench_tree.c): bench_flame_setup copies the
 * loaded slice table into the SQLite table fslice(id, parent_id, name,
 * dur), indexed on parent_id; bench_flame_sql computes the flamegraph's
 * checksum (nodes, SUM(self), SUM(total), SUM((total % 1000003) * (self %
 * 1009)) over the merged nodes) in plain SQLite from name paths, stopped
 * after cap_s seconds: 1 with out[4], 0 at the cap, -1 on error; *ms the
 * time spent either way. */
int bench_flame_setup(pj_engine *e);
int bench_flame_sql(pj_engine *e, double cap_s, int64_t out[4], double *ms);

/* Workload `join` (bench/bench_join.c): the tables in e (n slices), the
 * answer reduced to its group count and total, the same SQL timed in
 * plain SQLite, and in DuckDB on one thread (median of repeat runs; 1
 * when $PJ_DUCKDB_LIB is not set). 0 or -1. */
int bench_join_setup(pj_engine *e, int64_t n);
int bench_join_sums(const pj_result *r, int64_t *groups, int64_t *total);
int bench_join_sql(pj_engine *e, int64_t *groups, int64_t *total, double *ms);
int bench_join_duckdb(int64_t n, int repeat, int64_t *groups, int64_t *total, double *ms);
/* q (the join pipeline, compiled) and DuckDB's same SQL run alternately
 * `repeat` times, each timed in the process's CPU time (every thread
 * counted, so whatever DuckDB runs on a helper thread too): medians in
 * *jit_ms, *duck_ms. A loaded machine stretches wall times unevenly; CPU
 * time much less. */
int bench_join_cpu(pj_query *q, int64_t n, int repeat, double *jit_ms, double *duck_ms);

/* One measured line of the harness: a workload at a size in a mode
 * (interp, jit, auto) or a reference (c-ref: bench/ref_fused.c; sqlite:
 * the plain-SQL version). Strings are static (not owned). */
typedef struct bench_row {
  const char *workload;
  int64_t size;
  const char *mode;
  double compile_ms, first_ms, ns_per_row, speedup;
  int64_t rows_out;
  int same;             /* 1 equal, 0 different, -1 not known (SQLite capped) */
} bench_row;

/* What the report says besides the rows (bench/report.c). */
typedef struct bench_report_info {
  const char *command;          /* the exact command line */
  int nworkloads;               /* every registered workload, in order */
  const char *const *names;     /* [nworkloads] */
  const char *const *texts;     /* [nworkloads] pipeline text */
  int opt;                      /* --opt of the run */
  int quick;                    /* --quick: sizes up to 100k, one repeat */
  const char *repeats;          /* how many repeats per size, in words */
  double sql_cap_s;             /* SQLite time cap per run */
  int64_t sql_max_size;         /* *_sql workloads ran up to this size */
  double fused_opt0_compile_ms; /* compile latency of fused at --opt 0; < 0 not measured */
  double elapsed_s;             /* the whole run */
} bench_report_info;

/* Write bench/REPORT.md (Markdown: machine, command, targets, one table
 * per workload) and bench/report.svg (ns/row against size, log-log, one
 * panel per workload) from the rows of a run. 0, or -1 when the file
 * cannot be written. */
int bench_report_md(const char *path, const bench_row *rows, int n, const bench_report_info *info);
int bench_report_svg(const char *path, const bench_row *rows, int n, const bench_report_info *info);
/* Writes text as the section `name` of the report at path, between
 * markers: in place of that section when the file has it, else at the
 * end. bench_report_md keeps every such section when it rewrites the
 * file, so workloads run on their own (peers, batch) stay in it. 0 or -1. */
int bench_report_section(const char *path, const char *name, const char *text);
/* The section "threads" (bench/report_threads.c): the rows of a run with
 * --threads 1,N side by side, N = threads, with issue 18's targets; load
 * is the load average before and after the run. 0 or -1. */
int bench_report_threads(const char *path, const bench_row *rows, int n, int threads, const char *command,
                         const double load[2]);

/* INTERVAL workloads (bench/bench_interval.c). Per-cpu sums of overlap
 * lengths, the answer of `intersect`. */
#define BENCH_IV_MAXGROUPS 64
typedef struct bench_iv_sums {
  int n;
  int64_t cpu[BENCH_IV_MAXGROUPS], d[BENCH_IV_MAXGROUPS];
} bench_iv_sums;

/* Loads the sample trace with n slices into e; with sql, also indexed
 * SQLite copies of sched and cpu_frequency for bench_iv_sql. 0 or -1. */
int bench_iv_setup(pj_engine *e, int64_t n, int sql);
/* The graph workloads (bench/bench_graph.c, §9.5): tables gnode(id,
 * self_size), gedge(src, dst), groot(id) of a random graph of n nodes and
 * 3n edges. 0 or -1. */
int bench_graph_setup(pj_engine *e, int64_t n);
/* The `intersect` answer from plain SQLite (join on cpu with the overlap
 * predicate), stopped after cap_s seconds: 1 with *out, 0 when the cap
 * was hit, -1 on error; *ms is the time spent either way. */
int bench_iv_sql(pj_engine *e, double cap_s, bench_iv_sums *out, double *ms);
/* 1 when r (cpu, d) holds exactly the groups of want, in any order. */
int bench_iv_matches(const pj_result *r, const bench_iv_sums *want);

/* events_to_intervals (bench/bench_ivsrc.c): n counter samples on 64
 * tracks as the columnar table `counter` (id, ts, track_id, value) and an
 * SQLite copy indexed on (track_id, ts); 0 or -1. bench_evt_sql: the
 * count and sum of the LEAD() gaps by plain SQLite (*ms its time); 0 or
 * -1. */
int bench_evt_setup(pj_engine *e, int64_t n);
int bench_evt_sql(pj_engine *e, int64_t *count, int64_t *sum, double *ms);

/* Workload compile_scaling (bench/bench_compile.c): prints compile time
 * against query size at opt level `opt` and appends a section to
 * `report` (may be NULL). 0, or -1 on error. */
int bench_compile_scaling(int opt, const char *report);

/* Workloads self_time and sql_join (bench/bench_sql.c): SQL over
 * columnar tables against native SQLite tables with an index, in one run.
 * Times in ms: the first run (it builds the hash index) and the median of
 * the next `repeat`, for the engine and the peer. */
typedef struct bench_sql_row {
  const char *workload, *form;
  int64_t rows;                 /* sql_join: rows of the table */
  double first_ms, ms, peer_first_ms, peer_ms;
  int same;
} bench_sql_row;
/* The trace at path; 2 rows (subquery, LEFT JOIN form) or -1. */
int bench_self_time(int repeat, const char *trace, bench_sql_row *rows, int cap);
/* The sample trace with nrows slices; 2 rows (two join orders) or -1. */
int bench_sql_join(int repeat, int64_t nrows, bench_sql_row *rows, int cap);

/* Workload table_function (bench/bench_fn.c): 10,000 calls of a
 * PerfettoSQL function from SQL against 10,000 runs of its compiled body;
 * prints and appends a section to `report` (may be NULL). 0, or -1 on
 * error or a wrong answer. */
int bench_table_function(int opt, const char *report);

/* Workload window (bench/bench_window.c): LAG over n counter rows on both
 * backends, DuckDB on one thread and SQLite, in one run; prints and
 * appends a section to `report` (may be NULL). 0, or -1 on error or when
 * the answers differ. */
int bench_window(int repeat, int64_t n, const char *report);
/* Its counter(id, ts, track_id) table of n rows, in e. 0 or -1. */
int bench_counter_setup(pj_engine *e, int64_t n);

/* Workload peers (bench/bench_peers.c, `make bench-peers`): the workloads
 * with a SQL equivalent in pipejit, DuckDB (1 and 2 threads; when
 * $PJ_DUCKDB_LIB is set) and SQLite on the same data, checksums compared;
 * with report, its section "peers" of REPORT.md (bench_report_section)
 * and the bar chart svg. 0, 1 when an engine's answer
 * differs (printed), -1 on error. */
typedef struct bench_peers_opts {
  const char *workloads;   /* "all" or a comma list of peer workloads */
  int64_t size;
  int repeat, opt;
  double sql_cap;
  const char *report, *svg;
} bench_peers_opts;
int bench_peers(const bench_peers_opts *o);
/* 1 when name is in the comma list (or list is "all"). */
int bench_selected(const char *list, const char *name);

/* Workload batch (bench/bench_batch.c): pipejit --batch over 100 copies
 * of lthi_cats against one trace alone x 100 / cores; prints, and writes
 * the section "batch" of report (may be NULL). 0 (also when the trace is missing),
 * -1 on error or a wrong output. */
int bench_batch(int quick, const char *report);

#endif
