/*
 * bench_duck.c — DuckDB through its C API (bench_duck.h): only the six
 * functions used are declared, the result struct is opaque bytes.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench/bench_duck.h"
#include "runtime/rt.h"

typedef struct duck {
  void *lib;
  int (*open)(const char *, void **);
  int (*connect)(void *, void **);
  int (*query)(void *, const char *, void *);
  void (*destroy)(void *);
  int64_t (*value_int64)(void *, uint64_t, uint64_t);
  double (*value_double)(void *, uint64_t, uint64_t);
  _Bool (*value_is_null)(void *, uint64_t, uint64_t);
  uint64_t (*row_count)(void *);
  void *db, *con;
} duck;

static duck g_duck;

int bench_duck_open(void) {
  const char *path = getenv("PJ_DUCKDB_LIB");
  if (!path) return 1;
  duck *d = &g_duck;
  if (d->con) return 0;
  d->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!d->lib) return fprintf(stderr, "pipejit-bench: %s\n", dlerror()), -1;
  *(void **)&d->open = dlsym(d->lib, "duckdb_open");
  *(void **)&d->connect = dlsym(d->lib, "duckdb_connect");
  *(void **)&d->query = dlsym(d->lib, "duckdb_query");
  *(void **)&d->destroy = dlsym(d->lib, "duckdb_destroy_result");
  *(void **)&d->value_int64 = dlsym(d->lib, "duckdb_value_int64");
  *(void **)&d->row_count = dlsym(d->lib, "duckdb_row_count");
  *(void **)&d->value_double = dlsym(d->lib, "duckdb_value_double");
  *(void **)&d->value_is_null = dlsym(d->lib, "duckdb_value_is_null");
  if (!d->open || !d->connect || !d->query || !d->destroy || !d->value_int64 || !d->row_count ||
      !d->value_double || !d->value_is_null ||
      d->open(NULL, &d->db) != 0 || d->connect(d->db, &d->con) != 0) {
    d->con = NULL;
    return fprintf(stderr, "pipejit-bench: cannot open DuckDB from %s\n", path), -1;
  }
  if (bench_duck_exec("SET threads TO 1", 0, NULL) != 0) return -1;
  return 0;
}

static int duck_run(const char *sql, int ncols, int64_t *first, int64_t *rows, int64_t *sums) {
  duck *d = &g_duck;
  if (!d->con) return fprintf(stderr, "pipejit-bench: DuckDB is not open\n"), -1;
  uint64_t res[16] = {0};   /* duckdb_result: 48 bytes */
  int rc = d->query(d->con, sql, res);
  if (rc == 0) {
    uint64_t n = d->row_count(res);
    if (rows) *rows = (int64_t)n;
    for (int c = 0; c < ncols; c++) {
      if (first) first[c] = n ? d->value_int64(res, (uint64_t)c, 0) : 0;
      if (sums) {
        sums[c] = 0;
        for (uint64_t i = 0; i < n; i++) sums[c] += d->value_int64(res, (uint64_t)c, i);
      }
    }
  }
  d->destroy(res);
  if (rc != 0) fprintf(stderr, "pipejit-bench: DuckDB failed: %.200s\n", sql);
  return rc == 0 ? 0 : -1;
}

int bench_duck_exec(const char *sql, int ncols, int64_t *first) {
  return duck_run(sql, ncols, first, NULL, NULL);
}

int bench_duck_sums(const char *sql, int ncols, int64_t *rows, int64_t *sums) {
  return duck_run(sql, ncols, NULL, rows, sums);
}

int bench_duck_row(const char *sql, int ncols, int64_t *iv, double *dv, int *isnull) {
  duck *d = &g_duck;
  if (!d->con) return fprintf(stderr, "pipejit-bench: DuckDB is not open\n"), -1;
  uint64_t res[16] = {0};   /* duckdb_result: 48 bytes */
  int rc = d->query(d->con, sql, res);
  if (rc == 0) {
    int have = d->row_count(res) > 0;
    for (int c = 0; c < ncols; c++) {
      isnull[c] = !have || d->value_is_null(res, (uint64_t)c, 0);
      iv[c] = have ? d->value_int64(res, (uint64_t)c, 0) : 0;
      dv[c] = have ? d->value_double(res, (uint64_t)c, 0) : 0;
    }
  }
  d->destroy(res);
  if (rc != 0) fprintf(stderr, "pipejit-bench: DuckDB failed: %.300s\n", sql);
  return rc == 0 ? 0 : -1;
}

int64_t bench_clock_ns(void) {
  static int cpu = -1;
  if (cpu < 0) cpu = getenv("PJ_BENCH_CPU") && *getenv("PJ_BENCH_CPU") == '1';
  return cpu ? bench_cpu_ns() : rt_now_ns();
}

int64_t bench_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

double bench_median(double *t, int n) {
  if (n <= 0) return 0;
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
      double x = t[j];
      t[j] = t[j - 1];
      t[j - 1] = x;
    }
  return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}
