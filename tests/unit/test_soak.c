/*
 * test_soak.c — the soak test (issue 7): random pipelines
 * (tests/unit/pipegen.h, one in twelve with a deliberate error) against
 * one long-lived engine for a given time. Each pipeline runs on the
 * interpreter and again on the JIT or in mode auto (background compiles
 * forced), and both outcomes must agree; interleaved are runs under a
 * small memory budget, runs interrupted from another thread, and CREATE
 * OR REPLACE PERFETTO TABLE of pipeline results read back from SQL, and
 * (issue 12) three checks whose right answer is known:
 *  - schema changes between runs: a SQLite table dropped and created
 *    again with its columns in another order or type, read by one
 *    long-lived compiled handle, which must always answer (1, 2);
 *  - interrupts during JIT compiles of a large CASE: interrupted, or the
 *    right value;
 *  - self-intersections of N identical intervals under a small budget:
 *    N * N regions (they stream into the AGGREGATE, so 256 KB holds the
 *    operands and one batch whatever N * N is).
 * Each wrong answer counts as a mismatch.
 *
 * It reports queries run, errors by class, peak memory, and resident
 * memory after warm-up, at the middle and at the end; it fails when the
 * backends disagree or resident memory grows after warm-up by more than
 * 32 MiB + 10% (a leak grows with the run; caches and allocator pools do
 * not).
 *
 *   build/test_soak                 10 seconds (the ctest version)
 *   build/test_soak --minutes 10    the long soak (README, "Reliability")
 *   PJ_SOAK_SEED=N                  the pipelines of the run that printed seed N
 *   PJ_SOAK_SHOW=1                  each "other" error with its pipeline
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <cmocka.h>

#include "exec/adaptive.h"
#include "api/engine.h"
#include "pipegen.h"

#if defined(__SANITIZE_ADDRESS__)
/* Freed memory otherwise waits in ASan's quarantine (256 MB), and the
 * resident set grows whatever the engine keeps. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "quarantine_size_mb=0"; }
/* ASan's allocator keeps freed chunks in its size-class free lists, not
 * glibc's heap, so malloc_trim gives nothing back; this hands them to the
 * system (compiler-rt's allocator_interface.h, exported by gcc's libasan). */
void __sanitizer_purge_allocator(void);
#endif

static double g_seconds = 10;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Resident set and its high-water mark, in MiB (Linux /proc). */
/* The allocator's free memory handed back first (glibc keeps the free
 * chunks of a big run, say a 650 MiB INTERVAL SPLIT, in its heap): the
 * check is for memory the engine still holds, not for what malloc caches. */
static void give_back_free_memory(void) {
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_purge_allocator();
#elif defined(__GLIBC__)
  malloc_trim(0);
#endif
}

static double proc_mib(const char *key) {
  if (!strcmp(key, "VmRSS:")) give_back_free_memory();
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  double v = 0;
  size_t n = strlen(key);
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, key, n)) v = strtod(line + n, NULL) / 1024.0;
  fclose(f);
  return v;
}

enum { E_PARSE, E_BIND, E_OVERFLOW, E_SQLITE, E_TREE, E_BUDGET, E_INTERRUPT, E_OTHER, E_N };
static const char *const class_names[E_N] = {"parse", "bind", "integer overflow", "SQLite",
                                             "tree", "memory budget", "interrupted", "other"};

static int classify(const char *msg) {
  if (!strcmp(msg, "interrupted")) return E_INTERRUPT;
  if (strstr(msg, "needs more than")) return E_BUDGET;
  if (strstr(msg, "integer overflow")) return E_OVERFLOW;
  if (strstr(msg, "no such table")) return E_SQLITE;
  if (strstr(msg, "no such column")) return E_BIND;
  if (strstr(msg, "not a tree") || strstr(msg, "parent which")) return E_TREE;
  if (strstr(msg, "expected")) return E_PARSE;
  if (getenv("PJ_SOAK_SHOW")) fprintf(stderr, "soak: other error: %s\n", msg);
  return E_OTHER;
}

/* One failed run of pipeline q counted by class; PJ_SOAK_SHOW prints the
 * pipeline of an unclassified one (classify printed its message). */
static void count_error(long *errors, const char *msg, const char *q) {
  int k = classify(msg);
  errors[k]++;
  if (k == E_OTHER && getenv("PJ_SOAK_SHOW")) fprintf(stderr, "soak:   in %s\n", q);
}

typedef struct interrupter {
  pj_engine *e;
  volatile int done;
} interrupter;

static void *interrupt_main(void *arg) {
  interrupter *it = arg;
  struct timespec d = {0, 300000};
  while (!__atomic_load_n(&it->done, __ATOMIC_ACQUIRE)) {
    nanosleep(&d, NULL);
    pj_engine_interrupt(it->e);
  }
  return NULL;
}

static int cb_count(void *ctx, const pj_result *r, const char *t, size_t l, size_t o) {
  (void)t, (void)l, (void)o;
  *(int64_t *)ctx = pj_result_row_count(r) ? pj_result_int64(r, 0, 0) : -1;
  return 0;
}

static void *interrupt_once(void *arg) {
  interrupter *it = arg;
  struct timespec d = {0, 2000000};   /* 2 ms: inside the compile */
  nanosleep(&d, NULL);
  pj_engine_interrupt(it->e);
  return NULL;
}

/* The schema-change handle's answer: "1|2", or the error. */
static void stale_check(pj_engine *e, pj_query *q, char *got, size_t n) {
  pj_result *r = NULL;
  if (pj_query_run(q, &r) != PJ_OK) {
    snprintf(got, n, "error: %s", pj_engine_errmsg(e));
    return;
  }
  if (pj_result_row_count(r) != 1) snprintf(got, n, "%lld rows", (long long)pj_result_row_count(r));
  else snprintf(got, n, "%s|%s", pj_result_column_name(r, 0), pj_result_column_name(r, 1));
  if (pj_result_row_count(r) == 1 &&
      !(pj_result_int64(r, 0, 0) == 1 && pj_result_column_type(r, 1) == PJ_TYPE_STRING
            ? !strcmp(pj_result_text(r, 0, 1, NULL), "2")
            : pj_result_int64(r, 0, 1) == 2))
    snprintf(got, n, "wrong values");
  pj_result_free(r);
}

static void test_soak(void **state) {
  (void)state;
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  assert_int_equal(pj_engine_load_sample_trace(e, 50000), PJ_OK);
  pj__engine_set_auto_rows(e, 0);
  /* PJ_SOAK_SEED repeats a run's pipelines (the seed it printed) */
  const char *seed_env = getenv("PJ_SOAK_SEED");
  pg_gen g = {.rng = seed_env ? strtoull(seed_env, NULL, 10) : (uint64_t)time(NULL), .bad = 8};
  uint64_t seed = g.rng;
  long queries = 0, runs = 0, mismatches = 0, errors[E_N] = {0};
  long schema_changes = 0, compile_interrupts = 0, iv_budget_runs = 0;
  char first[8192] = "";
  /* the long-lived handle over a table whose schema changes */
  if (pj_engine_exec(e, "CREATE TABLE soak_s(a INTEGER, b INTEGER); INSERT INTO soak_s "
                        "VALUES (1, 2), (3, 4)", NULL, NULL) != PJ_OK)
    fail_msg("%s", pj_engine_errmsg(e));
  pj_query *stale = NULL;
  assert_int_equal(pj_query_compile(e, "FROM soak_s |> WHERE a = 1 |> SELECT a, b", &stale), PJ_OK);
  /* the large CASE compiled under interrupts: a = 7 gives 21 */
  char *big_case = malloc(40 * 1500 + 128);
  assert_non_null(big_case);
  {
    size_t n = (size_t)sprintf(big_case, "FROM (SELECT 7 AS a) |> EXTEND CASE");
    for (int i = 0; i < 1500; i++) n += (size_t)sprintf(big_case + n, " WHEN a = %d THEN %d", i, i * 3);
    sprintf(big_case + n, " ELSE -1 END AS c |> SELECT c");
  }
  double t0 = now_s(), warm_at = t0 + g_seconds * 0.2, mid_at = t0 + g_seconds * 0.6;
  /* The engine interns every string a run computes (CAST, printf, ||) in
   * its pool for its life (docs/DECISIONS.md), so random pipelines grow it
   * by design; the check below is for everything else, so the pool's
   * growth since warm-up is taken out of the resident figures. */
  double rss_warm = 0, rss_mid = 0, pool_warm = 0;
  int64_t run_peak = 0;
  while (now_s() - t0 < g_seconds) {
    pg_buf b;
    pg_pipeline(&g, &b);
    queries++;
    pg_outcome a, c;
    pj_engine_set_mode(e, PJ_MODE_INTERP);
    pg_run(e, b.s, &a);
    pj_engine_set_mode(e, pg_chance(&g, 50) ? PJ_MODE_JIT : PJ_MODE_AUTO);
    pg_run(e, b.s, &c);
    runs += 2;
    pj_timing t;
    pj_engine_last_timing(e, &t);
    if (t.mem_peak > run_peak) run_peak = t.mem_peak;
    if (a.status != PJ_OK) count_error(errors, a.err, b.s);
    if (!pg_same(&a, &c) && mismatches++ == 0)
      snprintf(first, sizeof first, "%s\n  interp: %d %s\n  other: %d %s", b.s, a.status, a.err,
               c.status, c.err);
    switch (queries % 10) {
    case 3: {   /* a small budget */
      pj_engine_set_max_memory(e, 256 << 10);
      pg_run(e, b.s, &c);
      pj_engine_set_max_memory(e, 0);
      runs++;
      if (c.status != PJ_OK) count_error(errors, c.err, b.s);
      break;
    }
    case 6: {   /* interrupted from another thread, at a random moment */
      interrupter it = {.e = e};
      pthread_t th;
      assert_int_equal(pthread_create(&th, NULL, interrupt_main, &it), 0);
      pg_run(e, b.s, &c);
      __atomic_store_n(&it.done, 1, __ATOMIC_RELEASE);
      pthread_join(th, NULL);
      runs++;
      if (c.status != PJ_OK) count_error(errors, c.err, b.s);
      break;
    }
    case 9: {   /* replace a table with the result, read it back */
      char create[4200];
      snprintf(create, sizeof create, "CREATE OR REPLACE PERFETTO TABLE soak_t AS %s", b.s);
      pg_run(e, create, &c);
      pg_run(e, "SELECT count(*) FROM soak_t", &c);
      runs += 2;
      if (c.status != PJ_OK && !strstr(c.err, "no such table")) {
        if (getenv("PJ_SOAK_SHOW")) fprintf(stderr, "soak: other error: %s: %s\n", create, c.err);
        errors[E_OTHER]++;
      }
      break;
    }
    }
    if (queries % 4 == 1) {   /* a schema change, then the old handle */
      static const char *const schemas[] = {
          "DROP TABLE soak_s; CREATE TABLE soak_s(b INTEGER, a INTEGER); "
          "INSERT INTO soak_s VALUES (2, 1), (4, 3)",
          "DROP TABLE soak_s; CREATE TABLE soak_s(x INTEGER, b TEXT, a INTEGER); "
          "INSERT INTO soak_s VALUES (0, '2', 1)",
          "DROP TABLE soak_s; CREATE TABLE soak_s(a INTEGER, b INTEGER); "
          "INSERT INTO soak_s VALUES (1, 2), (3, 4)",
          "ALTER TABLE soak_s ADD COLUMN z" ,
      };
      pg_run(e, schemas[pg_rnd(&g, 4)], &c);
      pj_engine_set_mode(e, (pj_mode)pg_rnd(&g, 3));
      char got[300];
      stale_check(e, stale, got, sizeof got);
      schema_changes++;
      runs++;
      if (strcmp(got, "a|b") && mismatches++ == 0)
        snprintf(first, sizeof first, "schema change: %s -> %s", c.err, got);
    }
    if (queries % 8 == 2) {   /* an interrupt during a JIT compile */
      pj_engine_set_mode(e, PJ_MODE_JIT);
      pj__engine_set_cache_size(e, 0);
      interrupter it = {.e = e};
      pthread_t th;
      assert_int_equal(pthread_create(&th, NULL, interrupt_once, &it), 0);
      pg_run(e, big_case, &c);
      pthread_join(th, NULL);
      pj__engine_set_cache_size(e, EX_CACHE_CAP);
      compile_interrupts++;
      runs++;
      int right = c.status == PJ_INTERRUPTED ||
                  (c.status == PJ_OK && c.rows == 1);
      if (!right && mismatches++ == 0)
        snprintf(first, sizeof first, "interrupted compile: %d %s", c.status, c.err);
    }
    if (queries % 8 == 5) {   /* a self-intersection under a budget */
      int n = 50 + (int)pg_rnd(&g, 400);
      char sql[512];
      snprintf(sql, sizeof sql,
               "CREATE OR REPLACE PERFETTO TABLE soak_iv AS WITH RECURSIVE n(i) AS (SELECT 0 UNION "
               "ALL SELECT i + 1 FROM n WHERE i < %d) SELECT i AS id, 100 AS ts, 50 AS dur FROM n",
               n - 1);
      pg_run(e, sql, &c);
      pj_engine_set_mode(e, (pj_mode)pg_rnd(&g, 3));
      pj_engine_set_max_memory(e, 256 << 10);
      int64_t count = -1;
      pj_status st = pj_engine_exec(e, "INTERVAL INTERSECTION OF (soak_iv AS x, soak_iv AS y) "
                                       "|> AGGREGATE COUNT(*) AS n", cb_count, &count);
      pj_engine_set_max_memory(e, 0);
      iv_budget_runs++;
      runs++;
      int right = st == PJ_OK && count == (int64_t)n * n;
      if (!right && mismatches++ == 0)
        snprintf(first, sizeof first, "self-intersection of %d under a budget: %d %lld %s", n, st,
                 (long long)count, pj_engine_errmsg(e));
    }
    double now = now_s();
    if (!rss_warm && now >= warm_at) {
      rss_warm = proc_mib("VmRSS:");
      pool_warm = (double)rt_strpool_bytes(e->strings) / (1 << 20);
    }
    if (!rss_mid && now >= mid_at) rss_mid = proc_mib("VmRSS:");
  }
  double rss_end = proc_mib("VmRSS:"), hwm = proc_mib("VmHWM:");
  double pool_end = (double)rt_strpool_bytes(e->strings) / (1 << 20);
  if (!rss_warm) rss_warm = rss_end, pool_warm = pool_end;
  if (!rss_mid) rss_mid = rss_end;
  pj_query_free(stale);
  free(big_case);
  pj_engine_close(e);

  long nerr = 0;
  for (int k = 0; k < E_N; k++) nerr += errors[k];
  printf("soak: %.0f s, seed %llu: %ld pipelines, %ld runs, %ld backend mismatches\n", g_seconds,
         (unsigned long long)seed, queries, runs, mismatches);
  printf("soak: %ld schema changes under a compiled handle, %ld interrupted compiles, %ld "
         "self-intersections under a budget\n", schema_changes, compile_interrupts, iv_budget_runs);
  printf("soak: errors by class (%ld):", nerr);
  for (int k = 0; k < E_N; k++) printf(" %s %ld%s", class_names[k], errors[k], k + 1 < E_N ? "," : "\n");
  printf("soak: resident memory %.1f MiB after warm-up, %.1f MiB at 60%%, %.1f MiB at the end; "
         "peak %.1f MiB; most run state %.1f MiB\n",
         rss_warm, rss_mid, rss_end, hwm, (double)run_peak / (1 << 20));
  printf("soak: the string pool grew from %.1f to %.1f MiB\n", pool_warm, pool_end);
  if (mismatches) fail_msg("%ld mismatches; first:\n%s", mismatches, first);
  assert_true(errors[E_OTHER] == 0 || errors[E_OTHER] * 100 < queries);
  if (rss_end - (pool_end - pool_warm) > rss_warm * 1.10 + 32)
    fail_msg("resident memory grew from %.1f to %.1f MiB (%.1f of it the string pool)", rss_warm,
             rss_end, pool_end - pool_warm);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--minutes") && i + 1 < argc) g_seconds = atof(argv[++i]) * 60;
    else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) g_seconds = atof(argv[++i]);
    else {
      fprintf(stderr, "usage: test_soak [--minutes M | --seconds S]\n");
      return 2;
    }
  }
  if (!(g_seconds > 0)) g_seconds = 10;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_soak)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
