/*
 * test_proto.c — the Perfetto protobuf importer (import/proto*.c) end to
 * end: small traces written with tests/unit/proto_writer.h for the rules
 * of TRACES.md §3, and the two shared traces checked against numbers that
 * tests/proto/pbexpect.py derives with its own wire decoder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/unit/proto_test.h"
#include "tests/unit/proto_writer.h"

/* ---- packet helpers ---------------------------------------------------------------- */

enum { SEQ = 7 };

/* A TrackDescriptor for a thread (uuid, pid, tid, name). */
static void thread_track(pw *w, uint64_t uuid, int pid, int tid, const char *name) {
  pw_begin(w, 1);
  pw_u(w, 10, SEQ);
  pw_begin(w, 60);
  pw_u(w, 1, uuid);
  pw_begin(w, 4);
  pw_u(w, 1, (uint64_t)pid), pw_u(w, 2, (uint64_t)tid);
  if (name) pw_s(w, 5, name);
  pw_end(w);
  pw_end(w);
  pw_end(w);
}

/* A TrackEvent packet: type, track, name (inline), at ts. */
static void te(pw *w, uint64_t ts, int type, uint64_t uuid, const char *name) {
  pw_begin(w, 1);
  pw_u(w, 8, ts);
  pw_u(w, 10, SEQ);
  pw_begin(w, 11);
  pw_u(w, 9, (uint64_t)type);
  pw_u(w, 11, uuid);
  if (name) pw_s(w, 23, name);
  pw_end(w);
  pw_end(w);
}

static pj_engine *load(pw *w, char *warning, size_t cap) {
  return proto_engine(w->b, w->n, NULL, warning, cap);
}

/* ---- the shared traces ------------------------------------------------------------------- */

/* The value of `key` in pbexpect.py --summary output (-1 when absent). */
static int64_t expect_int(const char *out, const char *key) {
  size_t k = strlen(key);
  for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
    if (!strncmp(p, key, k) && p[k] == ' ') return strtoll(p + k + 1, NULL, 10);
  return -1;
}

static char *python_summary(const char *path) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "python3 tests/proto/pbexpect.py --summary %s", path);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  char *buf = calloc(1, 1 << 20);
  size_t n = fread(buf, 1, (1 << 20) - 1, p);
  buf[n] = 0;
  assert_int_equal(pclose(p), 0);
  return buf;
}

/* tokio_test.pftrace: 20,013 begin/end pairs and 8 instants on 9 thread
 * tracks, not time-sorted, inline names, debug annotations. */
static void test_tokio(void **st) {
  (void)st;
  const char *path = shared_trace("tokio_test.pftrace");
  if (!path) skip();
  char *exp = python_summary(path);
  char w[256];
  pj_engine *e = proto_engine(NULL, 0, path, w, sizeof w);
  assert_string_equal(w, "");
  assert_int_equal(pone(e, "SELECT count(*) FROM slice"), expect_int(exp, "te.slices"));
  assert_int_equal(pone(e, "SELECT count(DISTINCT track_id) FROM slice"), expect_int(exp, "te.tracks"));
  assert_int_equal(pone(e, "SELECT min(depth) FROM slice"), expect_int(exp, "te.depth.min"));
  assert_int_equal(pone(e, "SELECT max(depth) FROM slice"), expect_int(exp, "te.depth.max"));
  /* every slice on a thread's track, closed, parents on the same track */
  assert_rows(e,
              "SELECT count(*), sum(s.dur >= 0), sum(s.parent_id IS NULL) = sum(s.depth = 0) FROM slice s "
              "JOIN thread_track ON s.track_id = thread_track.id",
              "20021|20021|1\n");
  assert_rows(e,
              "SELECT count(*) FROM slice s JOIN slice p ON s.parent_id = p.id "
              "WHERE p.track_id != s.track_id OR p.depth != s.depth - 1 OR s.ts < p.ts",
              "0\n");
  /* ts order and ids in processing order */
  assert_rows(e, "SELECT count(*) FROM slice a JOIN slice b ON b.id = a.id + 1 WHERE b.ts < a.ts",
              "0\n");
  /* thread names from the descriptors */
  for (const char *p = exp; (p = strstr(p, "te.thread ")); p++) {
    long long tid;
    char name[128];
    assert_int_equal(sscanf(p, "te.thread %lld %127s", &tid, name), 2);
    char q[256], want[160];
    snprintf(q, sizeof q, "SELECT name FROM thread WHERE tid = %lld", tid);
    snprintf(want, sizeof want, "%s\n", name);
    assert_rows(e, q, want);
  }
  /* debug annotations and the inline source location as args */
  assert_rows(e,
              "SELECT a.key, a.value_type, a.display_value FROM slice s JOIN args a USING (arg_set_id) "
              "WHERE s.id = 0 ORDER BY a.key",
              "debug.data|string|start\n"
              "debug.target|string|flihgt_recorder\n"
              "source_location.file_name|string|tokio/src/runtime/scheduler/multi_thread/worker.rs\n"
              "source_location.line_number|uint|508\n");
  assert_rows(e, "SELECT count(*) FROM stats WHERE value > 0 AND severity IN ('error', 'data_loss')",
              "0\n");
  pj_engine_close(e);
  free(exp);
}

/* systing_trace.pb: compact_sched on 22 cpus, a process tree, track
 * descriptors naming processes, perf samples (not imported). */
static void test_systing(void **st) {
  (void)st;
  const char *path = shared_trace("systing_trace.pb");
  if (!path) skip();
  char *exp = python_summary(path);
  char w[256];
  pj_engine *e = proto_engine(NULL, 0, path, w, sizeof w);
  assert_string_equal(w, "");
  /* sched: every compact switch but the first of each cpu (its prev is
   * unknown) */
  int64_t total = 0, wakings = 0;
  for (int cpu = 0; cpu < 22; cpu++) {
    char key[32], q[128];
    snprintf(key, sizeof key, "cs.switch.%d", cpu);
    int64_t n = expect_int(exp, key);
    assert_true(n > 0);
    snprintf(q, sizeof q, "SELECT count(*) FROM sched WHERE cpu = %d", cpu);
    assert_int_equal(pone(e, q), n - 1);
    total += n;
    snprintf(key, sizeof key, "cs.waking.%d", cpu);
    wakings += expect_int(exp, key);
  }
  assert_int_equal(expect_int(exp, "cs.switch.22"), -1);
  assert_int_equal(total, 5053);
  assert_int_equal(wakings, 3678);
  assert_rows(e, "SELECT value FROM stats WHERE name = 'compact_sched_switch_skipped'", "22\n");
  int64_t early = expect_int(exp, "cs.wakings_before_first_switch");
  char q[256];
  snprintf(q, sizeof q, "SELECT count(*) = %lld FROM ftrace_event WHERE name = 'sched_waking'",
           (long long)(wakings - early));
  assert_rows(e, q, "1\n");
  snprintf(q, sizeof q, "SELECT value FROM stats WHERE name = 'compact_sched_waking_skipped'");
  assert_int_equal(pone(e, q), early);
  /* each cpu's last sched row is open, the others end where the next starts */
  assert_rows(e, "SELECT count(*) FROM sched WHERE dur = -1", "22\n");
  assert_rows(e,
              "SELECT count(*) FROM sched a JOIN sched b ON a.cpu = b.cpu AND b.ts > a.ts "
              "WHERE a.dur >= 0 AND b.id = (SELECT min(id) FROM sched c WHERE c.cpu = a.cpu AND c.id > a.id) "
              "AND a.ts + a.dur != b.ts",
              "0\n");
  /* process_tree names (cmdline[0]) win over descriptor names */
  for (const char *p = exp; (p = strstr(p, "pt.process ")); p++) {
    long long pid;
    char name[256];
    if (sscanf(p, "pt.process %lld %255[^\n]", &pid, name) != 2) continue;
    char want[300];
    snprintf(q, sizeof q, "SELECT name FROM process WHERE pid = %lld", pid);
    snprintf(want, sizeof want, "%s\n", name);
    assert_rows(e, q, want);
  }
  assert_rows(e, "SELECT count(*) FROM process WHERE cmdline IS NOT NULL", "34\n");
  assert_int_equal(expect_int(exp, "pt.processes"), 34);
  /* swapper: the reserved utid 0 */
  assert_rows(e, "SELECT tid, name, is_idle FROM thread WHERE utid = 0", "0|swapper|1\n");
  assert_rows(e, "SELECT count(*) FROM thread_state WHERE utid = 0", "0\n");
  assert_rows(e, "SELECT value FROM stats WHERE name = 'proto_unknown_packets'", "355\n");
  assert_rows(e, "SELECT count(*) FROM cpu", "22\n");
  pj_engine_close(e);
  free(exp);
}

/* ---- synthetic traces ---------------------------------------------------------------------- */

/* Begin/end nesting on a thread track, an instant inside, out of order in
 * the file; names and categories interned. */
static void test_track_event_slices(void **st) {
  (void)st;
  pw w = {0};
  /* sequence cleared, interned names/categories */
  pw_begin(&w, 1);
  pw_u(&w, 10, SEQ);
  pw_u(&w, 13, 1);   /* INCREMENTAL_STATE_CLEARED */
  pw_begin(&w, 12);
  pw_begin(&w, 1), pw_u(&w, 1, 1), pw_s(&w, 2, "cat1"), pw_end(&w);
  pw_begin(&w, 2), pw_u(&w, 1, 1), pw_s(&w, 2, "outer"), pw_end(&w);
  pw_end(&w);
  pw_end(&w);
  thread_track(&w, 10, 100, 101, "worker");
  te(&w, 2000, 1, 10, "inner");      /* arrives before the outer begin */
  pw_begin(&w, 1);                   /* outer: interned name and category */
  pw_u(&w, 8, 1000);
  pw_u(&w, 10, SEQ);
  pw_u(&w, 13, 2);
  pw_begin(&w, 11);
  pw_u(&w, 9, 1), pw_u(&w, 11, 10), pw_u(&w, 10, 1), pw_u(&w, 3, 1);
  pw_end(&w);
  pw_end(&w);
  te(&w, 2500, 3, 10, "mark");
  te(&w, 3000, 2, 10, NULL);
  te(&w, 4000, 2, 10, NULL);
  te(&w, 5000, 1, 10, "open");
  pj_engine *e = load(&w, NULL, 0);
  assert_rows(e, "SELECT id, ts, dur, category, name, depth, parent_id FROM slice ORDER BY id",
              "0|1000|3000|cat1|outer|0|NULL\n"
              "1|2000|1000|NULL|inner|1|0\n"
              "2|2500|0|NULL|mark|2|1\n"
              "3|5000|-1|NULL|open|0|NULL\n");
  assert_rows(e, "SELECT tid, name, upid IS NOT NULL FROM thread WHERE tid = 101", "101|worker|1\n");
  assert_rows(e, "SELECT pid FROM process p JOIN thread t USING (upid) WHERE t.tid = 101", "100\n");
  assert_rows(e, "SELECT count(*) FROM thread_track", "1\n");
  pj_engine_close(e);
  pw_free(&w);
}

/* A cut last packet: what came before is imported, the warning says where. */
static void test_truncated(void **st) {
  (void)st;
  pw w = {0};
  thread_track(&w, 10, 1, 1, "t");
  te(&w, 100, 1, 10, "a");
  te(&w, 200, 2, 10, NULL);
  size_t full = w.n;
  te(&w, 300, 1, 10, "b");
  char warn[256];
  pj_engine *e = proto_engine(w.b, w.n - 3, NULL, warn, sizeof warn);
  assert_non_null(strstr(warn, "packet 4"));
  char at[64];
  snprintf(at, sizeof at, "at byte %zu", full);
  assert_non_null(strstr(warn, at));
  assert_rows(e, "SELECT name, dur FROM slice", "a|100\n");
  assert_rows(e, "SELECT value FROM stats WHERE name = 'proto_packet_truncated'", "1\n");
  pj_engine_close(e);
  pw_free(&w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tokio),
      cmocka_unit_test(test_systing),
      cmocka_unit_test(test_track_event_slices),
      cmocka_unit_test(test_truncated),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
