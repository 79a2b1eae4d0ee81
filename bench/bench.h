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

#endif
