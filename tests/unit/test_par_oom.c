/*
 * test_par_oom.c — out of memory on several threads: a parallel
 * AGGREGATE or top k (ORDER BY … LIMIT) whose Nth allocation fails (on
 * whichever thread makes it) either gives one thread's rows or fails
 * with "out of memory", never a crash, and under ASan leaks nothing.
 *
 * test_oom's sweep runs on one thread (its failures are picked by count
 * on the main thread, which must not depend on scheduling), so the
 * workers' allocations — the morsel tables, the partitioned merge of many
 * groups (runtime/aggpart.c), its final pass on the caller, a TREE
 * ACCUMULATE's morsels — are swept
 * here instead, by a counter shared by every thread (the library's
 * malloc, calloc and realloc go through it by --wrap). Which allocation
 * the Nth is varies with scheduling; what each run must give does not.
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/engine.h"
#include "pipejit.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

static long g_count, g_fail_at;   /* armed when g_fail_at > 0 */

static int fail_now(void) {
  if (__atomic_load_n(&g_fail_at, __ATOMIC_RELAXED) <= 0) return 0;
  return __atomic_add_fetch(&g_count, 1, __ATOMIC_RELAXED) == __atomic_load_n(&g_fail_at, __ATOMIC_RELAXED);
}
void *__wrap_malloc(size_t n) { return fail_now() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t size) { return fail_now() ? NULL : __real_calloc(n, size); }
void *__wrap_realloc(void *p, size_t n) { return fail_now() ? NULL : __real_realloc(p, n); }

#define ROWS 20000

/* The result's rows as text (doubles as hex floats), or "error: …". */
static char *run(pj_engine *e, pj_query *q) {
  pj_result *r = NULL;
  __atomic_store_n(&g_count, 0, __ATOMIC_RELAXED);
  pj_status st = pj_query_run(q, &r);
  __atomic_store_n(&g_fail_at, 0, __ATOMIC_RELAXED);   /* the test's own allocations */
  size_t cap = 1 << 16, n = 0;
  char *s = malloc(cap);
  assert_non_null(s);
  s[0] = 0;
  if (st != PJ_OK) {
    snprintf(s, cap, "error: %s", pj_engine_errmsg(e));
    return s;
  }
  for (int64_t i = 0; i < pj_result_row_count(r); i++)
    for (int c = 0; c < pj_result_column_count(r); c++) {
      if (cap - n < 64) {
        cap *= 2;
        s = realloc(s, cap);
        assert_non_null(s);
      }
      if (pj_result_is_null(r, i, c)) n += (size_t)snprintf(s + n, cap - n, "NULL|");
      else if (pj_result_column_type(r, c) == PJ_TYPE_DOUBLE)
        n += (size_t)snprintf(s + n, cap - n, "%a|", pj_result_double(r, i, c));
      else n += (size_t)snprintf(s + n, cap - n, "%lld|", (long long)pj_result_int64(r, i, c));
    }
  pj_result_free(r);
  return s;
}

static void each_failure_is_clean(void **state) {
  (void)state;
  /* many groups (the partitioned merge) and few (the one-table merge) */
  static const char *const qs[] = {
      "FROM slice |> AGGREGATE SUM(dur * 0.37) AS s, COUNT(*) AS n, MIN(dur) AS lo "
      "GROUP BY (id * 7919) % 9973 AS k",
      "FROM slice |> AGGREGATE SUM(dur * 0.37) AS s, COUNT(*) AS n GROUP BY depth",
      /* a tuple of keys, one a double, merged by stored hash */
      "FROM slice |> AGGREGATE SUM(dur * 0.37) AS s, COUNT(*) AS n, MAX(dur) AS hi "
      "GROUP BY (id * 7919) % 4999 AS k, depth * 0.5 AS d",
      /* INTERSECTION OF made in chunks by the workers that run its
       * morsels (driver_interval.c iv_isect_stream) */
      "INTERVAL INTERSECTION OF (sched AS s, cpu_frequency AS f) PER cpu |> EXTEND dur * 1.37 AS x "
      "|> AGGREGATE COUNT(*) AS n, SUM(x) AS sx, MAX(s.id) AS m GROUP BY cpu",
      /* INTERSECTION OF an operand with NULL bounds read on the workers
       * (isect.c read_par: past two chunks of 65,536 rows) */
      "INTERVAL INTERSECTION OF ((FROM sched |> SELECT id, ts, CASE WHEN id % 7 = 0 THEN NULL ELSE dur END "
      "AS dur, cpu) AS s, cpu_frequency AS f) PER cpu |> AGGREGATE COUNT(*) AS n, SUM(dur * 0.37) AS sx "
      "GROUP BY cpu",
      /* TREE ACCUMULATE's morsels of whole subtrees on the workers
       * (driver_treepar.c): its order, the morsel bounds, the workers'
       * sinks */
      "FROM slice |> TREE ACCUMULATE UP SUM(dur) AS t, MIN(dur) AS lo "
      "|> AGGREGATE SUM(t * 0.37) AS s, MIN(lo) AS m GROUP BY depth",
      /* FLATTEN's input counted, scattered and sorted on the workers
       * (flatten.c prep_par: past two chunks of 65,536 rows) */
      "FROM slice |> INTERVAL FLATTEN PER track_id AGGREGATE COUNT(*) AS n, SUM(dur) AS sd "
      "|> AGGREGATE COUNT(*) AS c, SUM(n) AS sn, SUM(sd * 0.5) AS x",
      /* FLATTEN's segments made in chunks by the workers that run its
       * morsels (driver_interval.c iv_flatten_par): chunks, the sweepers'
       * states and heaps (MAX), batches copied across chunks; points and
       * a buffered input */
      "FROM slice |> EXTEND CASE WHEN id % 7 = 0 THEN 0 ELSE dur END AS d0 "
      "|> SELECT ts, d0 AS dur, track_id, depth |> INTERVAL FLATTEN PER track_id "
      "AGGREGATE COUNT(*) AS n, MAX(depth) AS md, AVG(depth) AS ad "
      "|> AGGREGATE COUNT(*) AS c, SUM(n) AS sn, SUM(md) AS s2, SUM(ad) AS s3",
      /* ORDER BY … LIMIT (runtime/topk.h): the workers' states and
       * buffers, the published bound, the prunes' sorts; rows judged
       * before they are appended (no step) and after (a filter) */
      "FROM slice |> ORDER BY dur DESC, id |> LIMIT 40 |> SELECT id, dur",
      "FROM slice |> WHERE depth > 0 |> ORDER BY depth, ts DESC |> LIMIT 700 OFFSET 3 |> SELECT id, ts",
  };
  for (int m = 0; m < 2; m++)
    for (size_t qi = 0; qi < sizeof qs / sizeof *qs; qi++) {
      pj_engine *e = NULL;
      assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
      pj_engine_set_mode(e, m ? PJ_MODE_JIT : PJ_MODE_INTERP);
      pj_engine_set_threads(e, 2);
      pj__engine_set_batch_rows(e, 64);
      /* the interval source runs in parallel past two morsels of regions */
      bool iv = strstr(qs[qi], "INTERVAL") != NULL;
      bool flat = strstr(qs[qi], "FLATTEN") != NULL || strstr(qs[qi], "NULL ELSE dur") != NULL;
      assert_int_equal(pj_engine_load_sample_trace(e, flat ? 7 * ROWS : iv ? 3 * ROWS : ROWS), PJ_OK);
      pj_query *q = NULL;
      assert_int_equal(pj_query_compile(e, qs[qi], &q), PJ_OK);
      char *want = run(e, q);
      assert_null(strstr(want, "error"));
      /* how many allocations a run makes, about */
      __atomic_store_n(&g_fail_at, 1L << 40, __ATOMIC_RELAXED);
      char *again = run(e, q);
      long total = g_count;
      assert_string_equal(want, again);
      free(again);
      int failed = 0;
      long step = total / 150 + 1;
      /* about every 150th allocation, then each of the last 64: the run's
       * end on the calling thread once the workers are done (the
       * partitioned output of many groups, rt_aggpart_emit, and the
       * result) is not left to the stride */
      for (long k = 1; k <= total + 1; k += k + step <= total - 64 ? step : 1) {
        __atomic_store_n(&g_fail_at, k, __ATOMIC_RELAXED);
        char *got = run(e, q);
        if (strncmp(got, "error", 5)) {
          if (strcmp(got, want)) fail_msg("query %zu, failing allocation %ld: other rows", qi, k);
        } else {
          if (!strstr(got, "out of memory")) fail_msg("query %zu, failing allocation %ld: %s", qi, k, got);
          failed++;
        }
        free(got);
        char *after = run(e, q);   /* the engine is as it was */
        assert_string_equal(want, after);
        free(after);
      }
      assert_true(failed > 0);
      free(want);
      pj_query_free(q);
      pj_engine_close(e);
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(each_failure_is_clean),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
