/*
 * bench_duck.h — DuckDB as a peer of the benchmarks (bench_duck.c): its C
 * library, loaded with dlopen from $PJ_DUCKDB_LIB (npm's
 * @duckdb/node-bindings-linux-x64 ships libduckdb.so), on one thread; and
 * the timing helpers the workloads measured against it share.
 */
#ifndef PJ_BENCH_DUCK_H
#define PJ_BENCH_DUCK_H

#include <stdint.h>

/* Opens DuckDB once per process (in memory, SET threads TO 1): 0 ready,
 * 1 when $PJ_DUCKDB_LIB is not set (the DuckDB row is skipped), -1 on
 * error (printed). */
int bench_duck_open(void);
/* Runs sql; with ncols > 0 stores the first row's first ncols values as
 * int64 in first[]. 0, or -1 (printed). */
int bench_duck_exec(const char *sql, int ncols, int64_t *first);
/* The first row of sql's result: its row count in *rows and, for each of
 * the first ncols columns, the sum of its int64 values over all rows. */
int bench_duck_sums(const char *sql, int ncols, int64_t *rows, int64_t *sums);

/* The first row of sql: ncols values as int64 (iv), double (dv) and
 * whether NULL (isnull). 0, or -1 (printed). */
int bench_duck_row(const char *sql, int ncols, int64_t *iv, double *dv, int *isnull);

/* The process's CPU time in ns (the machine is shared: the time an engine
 * spent, whatever the others do). */
int64_t bench_cpu_ns(void);
/* The clock of the timed runs: wall time, or the process's CPU time when
 * $PJ_BENCH_CPU is 1 (a loaded machine: wall times then measure the other
 * processes as much as the engine; one-thread runs only). */
int64_t bench_clock_ns(void);
/* The median of t[0..n) (sorts t). */
double bench_median(double *t, int n);

#endif
