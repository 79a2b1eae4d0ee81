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

#endif
