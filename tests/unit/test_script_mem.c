/*
 * test_script_mem.c — a script's memory does not grow with its number of
 * statements (issue 12, item 5): pj_engine_exec frees each statement's
 * parse and plan once it has run, so a script of 1,000,000 statements
 * (SQL and pipelines mixed) holds no more heap at its end than after its
 * first thousand. Measured as malloc's bytes in use (mallinfo2) from the
 * result callback, by statement count, not by time. Under AddressSanitizer
 * (whose allocator mallinfo2 does not see) the script is shorter and only
 * the RSS bound is checked.
 */
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pipejit.h"

#if defined(__SANITIZE_ADDRESS__)
#define NSTMTS 100000
#define ASAN 1
/* Freed memory otherwise waits in ASan's quarantine (256 MB) and the RSS
 * grows whatever the engine keeps. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "quarantine_size_mb=0"; }
#else
#define NSTMTS 1000000
#define ASAN 0
#endif

typedef struct probe {
  int64_t results;
  size_t heap_at_1000, heap_max_after;
  long rss_at_1000, rss_max_after;
} probe;

static long rss_kb(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long pages = 0, rss = 0;
  if (f) {
    if (fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
    fclose(f);
  }
  return rss * 4;
}

static int on_result(void *ctx, const pj_result *r, const char *t, size_t l, size_t o) {
  (void)r, (void)t, (void)l, (void)o;
  probe *p = ctx;
  p->results++;
  if (p->results % 1000) return 0;
  size_t heap = mallinfo2().uordblks;
  long rss = rss_kb();
  if (p->results == 1000) {
    p->heap_at_1000 = heap;
    p->rss_at_1000 = rss;
  } else {
    if (heap > p->heap_max_after) p->heap_max_after = heap;
    if (rss > p->rss_max_after) p->rss_max_after = rss;
  }
  return 0;
}

static void test_million_statements(void **state) {
  (void)state;
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  pj_engine_set_mode(e, PJ_MODE_INTERP);
  assert_int_equal(pj_engine_exec(e, "CREATE PERFETTO TABLE t AS SELECT 1 AS a, 2 AS b", NULL,
                                  NULL), PJ_OK);
  /* The script is built first, so its own bytes are in use all along. */
  size_t cap = (size_t)NSTMTS * 48 + 64, n = 0;
  char *script = malloc(cap);
  assert_non_null(script);
  for (int i = 0; i < NSTMTS; i++) {
    if (i % 2)
      n += (size_t)snprintf(script + n, cap - n, "FROM t |> WHERE a = %d |> SELECT b;\n", i % 3);
    else
      n += (size_t)snprintf(script + n, cap - n, "SELECT %d AS x;\n", i);
  }
  probe p = {0};
  if (pj_engine_exec(e, script, on_result, &p) != PJ_OK) fail_msg("%s", pj_engine_errmsg(e));
  assert_int_equal(p.results, NSTMTS);
  if (!ASAN) {
    /* about 2 KB a statement were kept before: 2 GB here */
    long grown = (long)p.heap_max_after - (long)p.heap_at_1000;
    if (grown > 1 << 20)
      fail_msg("heap grew by %ld bytes over %d statements", grown, NSTMTS - 1000);
  }
  long rss_grown = p.rss_max_after - p.rss_at_1000;
  if (rss_grown > 32 * 1024)
    fail_msg("RSS grew by %ld KB over %d statements", rss_grown, NSTMTS - 1000);
  free(script);
  pj_engine_close(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_million_statements),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
