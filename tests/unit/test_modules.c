/*
 * test_modules.c — pipejit's own modules (modules/, README "Modules") on
 * the shared real traces, each against an independent plain-SQL answer
 * computed in SQLite over native copies of the trace tables (with
 * indexes, no module, no pipeline): every row of the module's result must
 * be the reference's and the other way round, and both must be non-empty
 * where the trace has the data, so the comparisons can fail.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/unit/trace_rows.h"

static pj_engine *load(const char *file) {
  const char *path = shared_trace(file);
  if (!path) return NULL;
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  pj_trace_info info;
  if (pj_engine_load_trace(e, path, &info) != PJ_OK) fail_msg("%s: %s", path, pj_engine_errmsg(e));
  /* Native SQLite copies for the references. */
  assert_rows(e,
              "CREATE TEMP TABLE r_slice AS SELECT * FROM slice;"
              "CREATE INDEX r_slice_parent ON r_slice(parent_id);"
              "CREATE INDEX r_slice_id ON r_slice(id);"
              "CREATE TEMP TABLE r_thread_track AS SELECT * FROM thread_track;"
              "CREATE TEMP TABLE r_process_track AS SELECT * FROM process_track;"
              "CREATE TEMP TABLE r_thread AS SELECT * FROM thread;"
              "CREATE TEMP TABLE r_process AS SELECT * FROM process;"
              "CREATE TEMP TABLE r_sched AS SELECT * FROM sched;"
              "CREATE TEMP TABLE r_counter AS SELECT * FROM counter;"
              "CREATE INDEX r_counter_track ON r_counter(track_id, ts, id);"
              "CREATE TEMP TABLE r_bounds AS SELECT * FROM trace_bounds;",
              "");
  return e;
}

/* Rows of `a` not in `b` and of `b` not in `a` (0 when they are the same
 * set), and the count of `a`. */
static void same_rows(pj_engine *e, const char *a, const char *b, int64_t min_rows) {
  char sql[8192];
  snprintf(sql, sizeof sql,
           "SELECT (SELECT COUNT(*) FROM (SELECT * FROM (%s) EXCEPT SELECT * FROM (%s))) + "
           "(SELECT COUNT(*) FROM (SELECT * FROM (%s) EXCEPT SELECT * FROM (%s)))",
           a, b, b, a);
  int64_t diff = one_int(e, sql);
  snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM (%s)", a);
  int64_t n = one_int(e, sql);
  if (diff != 0 || n < min_rows)
    fail_msg("%lld rows differ, %lld rows (want >= %lld):\n  %s\n  %s", (long long)diff,
             (long long)n, (long long)min_rows, a, b);
}

static void test_self_time(void **state) {
  (void)state;
  static const char *const files[] = {"lthi_cats.json.gz", "fuchsia_trace.json.gz"};
  for (int i = 0; i < 2; i++) {
    pj_engine *e = load(files[i]);
    if (!e) skip();
    assert_rows(e, "INCLUDE PERFETTO MODULE slices.self_time", "");
    same_rows(e, "SELECT id, self_dur FROM slice_self_time",
              "SELECT s.id, CASE WHEN s.dur >= 0 THEN s.dur - coalesce((SELECT SUM(c.dur) FROM "
              "r_slice c WHERE c.parent_id = s.id AND c.dur >= 0), 0) END FROM r_slice s",
              50000);
    /* a pipeline reads the module's table on the fast path */
    assert_int_equal(one_int(e, "FROM slice_self_time |> WHERE self_dur < 0 |> AGGREGATE COUNT(*) AS n"),
                     one_int(e, "SELECT COUNT(*) FROM slice_self_time WHERE self_dur < 0"));
    pj_engine_close(e);
  }
}

static void test_thread_process_slice(void **state) {
  (void)state;
  static const char *const files[] = {"lthi_cats.json.gz", "fuchsia_trace.json.gz"};
  for (int i = 0; i < 2; i++) {
    pj_engine *e = load(files[i]);
    if (!e) skip();
    assert_rows(e, "INCLUDE PERFETTO MODULE slices.*", "");
    same_rows(e, "SELECT id, utid, tid, thread_name, upid, pid, process_name FROM thread_slice",
              "SELECT s.id, t.utid, t.tid, t.name, p.upid, p.pid, p.name FROM r_slice s, "
              "r_thread_track tt, r_thread t LEFT JOIN r_process p ON p.upid = t.upid "
              "WHERE tt.id = s.track_id AND t.utid = tt.utid",
              50000);
    same_rows(e, "SELECT id, upid, pid, process_name FROM process_slice",
              "SELECT s.id, p.upid, p.pid, p.name FROM r_slice s, r_process_track pt, r_process p "
              "WHERE pt.id = s.track_id AND p.upid = pt.upid",
              0);
    pj_engine_close(e);
  }
}

static void test_ancestors_descendants(void **state) {
  (void)state;
  pj_engine *e = load("lthi_cats.json.gz");
  if (!e) skip();
  assert_rows(e, "INCLUDE PERFETTO MODULE slices.ancestors; INCLUDE PERFETTO MODULE slices.descendants", "");
  /* every 41st slice: (slice, ancestor) and (slice, descendant) pairs */
  same_rows(e,
            "SELECT s.id, a.id, a.depth FROM r_slice s, slice_ancestors(s.id) a WHERE s.id % 41 = 0",
            "WITH RECURSIVE up(start, id) AS (SELECT id, parent_id FROM r_slice WHERE id % 41 = 0 "
            "AND parent_id IS NOT NULL UNION ALL SELECT up.start, s.parent_id FROM r_slice s JOIN "
            "up ON s.id = up.id WHERE s.parent_id IS NOT NULL) SELECT up.start, up.id, s.depth "
            "FROM up JOIN r_slice s ON s.id = up.id",
            1000);
  same_rows(e,
            "SELECT s.id, d.id FROM r_slice s, slice_descendants(s.id) d WHERE s.id % 41 = 0",
            "WITH RECURSIVE down(start, id) AS (SELECT id, id FROM r_slice WHERE id % 41 = 0 "
            "UNION ALL SELECT down.start, s.id FROM r_slice s JOIN down ON s.parent_id = down.id) "
            "SELECT start, id FROM down WHERE id != start",
            1000);
  /* ancestors come root first */
  assert_int_equal(one_int(e, "SELECT COUNT(*) FROM r_slice s WHERE s.depth >= 2 AND s.id % 41 = 0 "
                              "AND (SELECT depth FROM slice_ancestors(s.id) LIMIT 1) != 0"),
                   0);
  pj_engine_close(e);
}

static void test_thread_cpu_time(void **state) {
  (void)state;
  pj_engine *e = load("fuchsia_trace.json.gz");
  if (!e) skip();
  assert_rows(e, "INCLUDE PERFETTO MODULE sched.thread_cpu_time", "");
  same_rows(e, "SELECT utid, tid, thread_name, cpu_time, sched_count FROM sched_thread_cpu_time",
            "SELECT s.utid, t.tid, t.name, SUM(CASE WHEN s.dur < 0 THEN MAX((SELECT end_ts FROM "
            "r_bounds) - s.ts, 0) ELSE s.dur END), COUNT(*) FROM r_sched s LEFT JOIN r_thread t "
            "ON t.utid = s.utid GROUP BY s.utid",
            10);
  pj_engine_close(e);
}

static void test_counter_intervals(void **state) {
  (void)state;
  static const char *const files[] = {"lthi_cats.json.gz", "fuchsia_trace.json.gz"};
  for (int i = 0; i < 2; i++) {
    pj_engine *e = load(files[i]);
    if (!e) skip();
    assert_rows(e, "INCLUDE PERFETTO MODULE counters.intervals", "");
    /* the next sample by a correlated lookup, not a window */
    same_rows(e, "SELECT id, ts, dur, track_id, value, next_value FROM counter_intervals",
              "SELECT c.id, c.ts, coalesce((SELECT n.ts FROM r_counter n WHERE n.track_id = "
              "c.track_id AND (n.ts > c.ts OR (n.ts = c.ts AND n.id > c.id)) ORDER BY n.ts, n.id "
              "LIMIT 1), MAX((SELECT end_ts FROM r_bounds), c.ts)) - c.ts, c.track_id, c.value, "
              "(SELECT n.value FROM r_counter n WHERE n.track_id = c.track_id AND (n.ts > c.ts OR "
              "(n.ts = c.ts AND n.id > c.id)) ORDER BY n.ts, n.id LIMIT 1) FROM r_counter c",
              1000);
    /* the macro over a subquery */
    assert_int_equal(one_int(e, "SELECT COUNT(*) FROM counter_leading_intervals!((SELECT * FROM "
                                "counter WHERE value > 0))"),
                     one_int(e, "SELECT COUNT(*) FROM counter WHERE value > 0"));
    pj_engine_close(e);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_self_time),
      cmocka_unit_test(test_thread_process_slice),
      cmocka_unit_test(test_ancestors_descendants),
      cmocka_unit_test(test_thread_cpu_time),
      cmocka_unit_test(test_counter_intervals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
