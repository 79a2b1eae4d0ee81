/*
 * test_soak.c — the soak test (issue 7): random pipelines
 * (tests/unit/pipegen.h, one in twelve with a deliberate error) against
 * one long-lived engine for a given time. Each pipeline runs on the
 * interpreter and again on the JIT or in mode auto (background compiles
 * forced), and both outcomes must agree; interleaved are runs under a
 * small memory budget, runs interrupted from another thread, and CREATE
 * OR REPLACE PERFETTO TABLE of pipeline results read back from SQL.
 *
 * It reports queries run, errors by class, peak memory, and resident
 * memory after warm-up, at the middle and at the end; it fails when the
 * backends disagree or resident memory grows after warm-up by more than
 * 32 MiB + 10% (a leak grows with the run; caches and allocator pools do
 * not).
 *
 *   build/test_soak                 10 seconds (the ctest version)
 *   build/test_soak --minutes 10    the long soak (README, "Reliability")
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "exec/engine.h"
#include "pipegen.h"

#if defined(__SANITIZE_ADDRESS__)
/* Freed memory otherwise waits in ASan's quarantine (256 MB), and the
 * resident set grows whatever the engine keeps. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "quarantine_size_mb=0"; }
#endif

static double g_seconds = 10;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Resident set and its high-water mark, in MiB (Linux /proc). */
static double proc_mib(const char *key) {
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
  return E_OTHER;
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

static void test_soak(void **state) {
  (void)state;
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  assert_int_equal(pj_engine_load_sample_trace(e, 50000), PJ_OK);
  pj__engine_set_auto_rows(e, 0);
  pg_gen g = {.rng = (uint64_t)time(NULL), .bad = 8};
  uint64_t seed = g.rng;
  long queries = 0, runs = 0, mismatches = 0, errors[E_N] = {0};
  char first[8192] = "";
  double t0 = now_s(), warm_at = t0 + g_seconds * 0.2, mid_at = t0 + g_seconds * 0.6;
  double rss_warm = 0, rss_mid = 0;
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
    if (a.status != PJ_OK) errors[classify(a.err)]++;
    if (!pg_same(&a, &c) && mismatches++ == 0)
      snprintf(first, sizeof first, "%s\n  interp: %d %s\n  other: %d %s", b.s, a.status, a.err,
               c.status, c.err);
    switch (queries % 10) {
    case 3: {   /* a small budget */
      pj_engine_set_max_memory(e, 256 << 10);
      pg_run(e, b.s, &c);
      pj_engine_set_max_memory(e, 0);
      runs++;
      if (c.status != PJ_OK) errors[classify(c.err)]++;
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
      if (c.status != PJ_OK) errors[classify(c.err)]++;
      break;
    }
    case 9: {   /* replace a table with the result, read it back */
      char create[4200];
      snprintf(create, sizeof create, "CREATE OR REPLACE PERFETTO TABLE soak_t AS %s", b.s);
      pg_run(e, create, &c);
      pg_run(e, "SELECT count(*) FROM soak_t", &c);
      runs += 2;
      if (c.status != PJ_OK && !strstr(c.err, "no such table")) errors[E_OTHER]++;
      break;
    }
    }
    double now = now_s();
    if (!rss_warm && now >= warm_at) rss_warm = proc_mib("VmRSS:");
    if (!rss_mid && now >= mid_at) rss_mid = proc_mib("VmRSS:");
  }
  double rss_end = proc_mib("VmRSS:"), hwm = proc_mib("VmHWM:");
  if (!rss_warm) rss_warm = rss_end;
  if (!rss_mid) rss_mid = rss_end;
  pj_engine_close(e);

  long nerr = 0;
  for (int k = 0; k < E_N; k++) nerr += errors[k];
  printf("soak: %.0f s, seed %llu: %ld pipelines, %ld runs, %ld backend mismatches\n", g_seconds,
         (unsigned long long)seed, queries, runs, mismatches);
  printf("soak: errors by class (%ld):", nerr);
  for (int k = 0; k < E_N; k++) printf(" %s %ld%s", class_names[k], errors[k], k + 1 < E_N ? "," : "\n");
  printf("soak: resident memory %.1f MiB after warm-up, %.1f MiB at 60%%, %.1f MiB at the end; "
         "peak %.1f MiB; most run state %.1f MiB\n",
         rss_warm, rss_mid, rss_end, hwm, (double)run_peak / (1 << 20));
  if (mismatches) fail_msg("%ld mismatches; first:\n%s", mismatches, first);
  assert_true(errors[E_OTHER] == 0 || errors[E_OTHER] * 100 < queries);
  if (rss_end > rss_warm * 1.10 + 32) fail_msg("resident memory grew from %.1f to %.1f MiB", rss_warm, rss_end);
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
