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
#include <zlib.h>
#include <zstd.h>

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
  assert_int_equal(one_int(e, "SELECT count(*) FROM slice"), expect_int(exp, "te.slices"));
  assert_int_equal(one_int(e, "SELECT count(DISTINCT track_id) FROM slice"), expect_int(exp, "te.tracks"));
  assert_int_equal(one_int(e, "SELECT min(depth) FROM slice"), expect_int(exp, "te.depth.min"));
  assert_int_equal(one_int(e, "SELECT max(depth) FROM slice"), expect_int(exp, "te.depth.max"));
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
    assert_int_equal(one_int(e, q), n - 1);
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
  assert_int_equal(one_int(e, q), early);
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


/* ---- sequences, interning, defaults (§3.3) ------------------------------------------------- */

static void interned_name(pw *w, uint64_t iid, const char *name) {
  pw_begin(w, 2), pw_u(w, 1, iid), pw_s(w, 2, name), pw_end(w);
}

/* A TrackEvent with interned name iid on uuid 10 at ts (flags as given). */
static void te_iid(pw *w, uint32_t seq, uint64_t ts, int type, uint64_t iid, uint32_t flags) {
  pw_begin(w, 1);
  pw_u(w, 8, ts);
  pw_u(w, 10, seq);
  if (flags) pw_u(w, 13, flags);
  pw_begin(w, 11);
  pw_u(w, 9, (uint64_t)type), pw_u(w, 11, 10), pw_u(w, 10, iid);
  pw_end(w);
  pw_end(w);
}

static void test_sequence_state(void **st) {
  (void)st;
  pw w = {0};
  thread_track(&w, 10, 1, 2, "t");
  /* sequence 3 was never cleared: its interned data and its packets that
   * need incremental state are dropped */
  pw_begin(&w, 1);
  pw_u(&w, 10, 3);
  pw_begin(&w, 12), interned_name(&w, 1, "lost"), pw_end(&w);
  pw_end(&w);
  te_iid(&w, 3, 50, 3, 1, 2);
  /* sequence 4: cleared, name 1 = "first" */
  pw_begin(&w, 1);
  pw_u(&w, 10, 4);
  pw_u(&w, 13, 1);
  pw_begin(&w, 12), interned_name(&w, 1, "first"), pw_end(&w);
  pw_end(&w);
  te_iid(&w, 4, 100, 3, 1, 2);
  /* loss: invalid until the next clear, which renames iid 1 */
  pw_begin(&w, 1);
  pw_u(&w, 10, 4), pw_u(&w, 42, 1);
  pw_end(&w);
  te_iid(&w, 4, 200, 3, 1, 2);
  pw_begin(&w, 1);
  pw_u(&w, 10, 4);
  pw_u(&w, 41, 1);   /* incremental_state_cleared (field form) */
  pw_begin(&w, 12), interned_name(&w, 1, "second"), pw_end(&w);
  pw_end(&w);
  te_iid(&w, 4, 300, 3, 1, 2);
  te_iid(&w, 4, 350, 3, 9, 2);   /* an iid never interned: NULL name */
  pj_engine *e = load(&w, NULL, 0);
  assert_rows(e, "SELECT ts, name FROM slice ORDER BY ts", "100|first\n300|second\n350|NULL\n");
  assert_rows(e,
              "SELECT name, value FROM stats WHERE name IN "
              "('packet_skipped_seq_needs_incremental_state_invalid', "
              "'interned_data_skipped_incremental_state_invalid') ORDER BY name",
              "interned_data_skipped_incremental_state_invalid|1\n"
              "packet_skipped_seq_needs_incremental_state_invalid|2\n");
  pj_engine_close(e);
  pw_free(&w);
}

/* trace_packet_defaults: track_uuid and timestamp_clock_id of a sequence. */
static void test_packet_defaults(void **st) {
  (void)st;
  pw w = {0};
  pw_begin(&w, 1);   /* clock snapshot: MONOTONIC 0 = BOOTTIME 1000 */
  pw_begin(&w, 6);
  pw_begin(&w, 1), pw_u(&w, 1, 6), pw_u(&w, 2, 1000), pw_end(&w);
  pw_begin(&w, 1), pw_u(&w, 1, 3), pw_u(&w, 2, 0), pw_end(&w);
  pw_end(&w);
  pw_end(&w);
  thread_track(&w, 10, 1, 2, "t");
  pw_begin(&w, 1);
  pw_u(&w, 10, SEQ), pw_u(&w, 13, 1);
  pw_begin(&w, 59);
  pw_u(&w, 58, 3);                                 /* timestamps in MONOTONIC */
  pw_begin(&w, 11), pw_u(&w, 11, 10), pw_end(&w);  /* track_uuid 10 */
  pw_end(&w);
  pw_end(&w);
  pw_begin(&w, 1);   /* no track_uuid, no clock: both from the defaults */
  pw_u(&w, 8, 5), pw_u(&w, 10, SEQ), pw_u(&w, 13, 2);
  pw_begin(&w, 11), pw_u(&w, 9, 3), pw_s(&w, 23, "d"), pw_end(&w);
  pw_end(&w);
  pj_engine *e = load(&w, NULL, 0);
  assert_rows(e,
              "SELECT s.ts, s.name, th.tid FROM slice s JOIN thread_track t ON s.track_id = t.id "
              "JOIN thread th USING (utid)",
              "1005|d|2\n");
  pj_engine_close(e);
  pw_free(&w);
}

/* ---- clocks (§3.4) -------------------------------------------------------------------------- */

static void snapshot(pw *w, uint64_t boot, uint64_t mono) {
  pw_begin(w, 1);
  pw_begin(w, 6);
  pw_begin(w, 1), pw_u(w, 1, 6), pw_u(w, 2, boot), pw_end(w);
  pw_begin(w, 1), pw_u(w, 1, 3), pw_u(w, 2, mono), pw_end(w);
  pw_end(w);
  pw_end(w);
}

static void te_clock(pw *w, uint64_t ts, uint32_t clock, const char *name) {
  pw_begin(w, 1);
  pw_u(w, 8, ts), pw_u(w, 10, SEQ), pw_u(w, 58, clock);
  pw_begin(w, 11), pw_u(w, 9, 3), pw_u(w, 11, 10), pw_s(w, 23, name), pw_end(w);
  pw_end(w);
}

static void test_clocks(void **st) {
  (void)st;
  pw w = {0};
  /* the worked example of proto_clock.c */
  snapshot(&w, 1100, 100);
  snapshot(&w, 1250, 200);
  thread_track(&w, 10, 1, 2, "t");
  te_clock(&w, 150, 3, "a");
  te_clock(&w, 250, 3, "b");
  te_clock(&w, 50, 3, "c");
  te_clock(&w, 777, 6, "boot");
  te_clock(&w, 5, 9, "tsc");   /* TSC: no path to BOOTTIME, dropped at the end */
  /* a sequence-scoped incremental clock in µs: 64 on this sequence */
  pw_begin(&w, 1);
  pw_u(&w, 10, SEQ);
  pw_begin(&w, 6);
  pw_begin(&w, 1), pw_u(&w, 1, 64), pw_u(&w, 2, 10), pw_u(&w, 3, 1), pw_u(&w, 4, 1000), pw_end(&w);
  pw_begin(&w, 1), pw_u(&w, 1, 6), pw_u(&w, 2, 20000), pw_end(&w);
  pw_end(&w);
  pw_end(&w);
  te_clock(&w, 1, 64, "inc1");   /* 10 µs + 1 µs = 11000 ns on clock 64 → 21000 */
  te_clock(&w, 2, 64, "inc2");   /* + 2 µs → 23000 */
  pj_engine *e = load(&w, NULL, 0);
  assert_rows(e, "SELECT name, ts FROM slice ORDER BY ts",
              "boot|777\nc|1050\na|1150\nb|1300\ninc1|21000\ninc2|23000\n");
  assert_rows(e,
              "SELECT name, value FROM stats WHERE name LIKE 'clock_sync_failure%' ORDER BY name",
              "clock_sync_failure|1\nclock_sync_failure_undeferrable_packet_loss|1\n");
  assert_rows(e, "SELECT int_value FROM metadata WHERE name = 'trace_time_clock_id'", "");
  pj_engine_close(e);
  pw_free(&w);
}

/* ---- sorting (§3.5) --------------------------------------------------------------------------- */

static void test_sorting(void **st) {
  (void)st;
  pw w = {0};
  thread_track(&w, 10, 1, 2, "t");
  te(&w, 300, 3, 10, "late-in-file-but-early");
  te(&w, 100, 3, 10, "first");
  te(&w, 300, 3, 10, "second-at-300");
  /* a process_tree (generic stream) at 300 sorts before track events at 300 */
  pw_begin(&w, 1);
  pw_u(&w, 8, 300);
  pw_begin(&w, 2);
  pw_begin(&w, 1), pw_u(&w, 1, 1), pw_u(&w, 2, 0), pw_s(&w, 3, "proc"), pw_end(&w);
  pw_end(&w);
  pw_end(&w);
  /* a packet without timestamp takes the largest seen so far */
  pw_begin(&w, 1);
  pw_begin(&w, 2);
  pw_begin(&w, 1), pw_u(&w, 1, 5), pw_u(&w, 2, 1), pw_s(&w, 3, "stamped-late"), pw_end(&w);
  pw_end(&w);
  pw_end(&w);
  pj_engine *e = load(&w, NULL, 0);
  assert_rows(e, "SELECT id, ts, name FROM slice ORDER BY id",
              "0|100|first\n1|300|late-in-file-but-early\n2|300|second-at-300\n");
  /* process 1 was created by the process tree before the slices at 300
   * looked their thread up: pid 1 got its row first */
  assert_rows(e, "SELECT pid, name FROM process WHERE pid IN (1, 5) ORDER BY upid", "1|proc\n5|stamped-late\n");
  pj_engine_close(e);
  pw_free(&w);
}

/* ---- TrackEvent counters, flows, args (§3.6) ---------------------------------------------------- */

/* A counter TrackDescriptor under parent (unit 3 = bytes, multiplier, incremental). */
static void counter_track(pw *w, uint64_t uuid, uint64_t parent, const char *name, int unit,
                          int mult, int incremental) {
  pw_begin(w, 1);
  pw_u(w, 10, SEQ);
  pw_begin(w, 60);
  pw_u(w, 1, uuid);
  if (parent) pw_u(w, 5, parent);
  if (name) pw_s(w, 2, name);
  pw_begin(w, 8);
  if (unit) pw_u(w, 3, (uint64_t)unit);
  if (mult) pw_u(w, 4, (uint64_t)mult);
  if (incremental) pw_u(w, 5, 1);
  pw_end(w);
  pw_end(w);
  pw_end(w);
}

static void counter_ev(pw *w, uint64_t ts, uint64_t uuid, int is_double, double v) {
  pw_begin(w, 1);
  pw_u(w, 8, ts), pw_u(w, 10, SEQ);
  pw_begin(w, 11);
  pw_u(w, 9, 4), pw_u(w, 11, uuid);
  if (is_double) pw_d(w, 44, v);
  else pw_i(w, 30, (int64_t)v);
  pw_end(w);
  pw_end(w);
}

static void test_counters(void **st) {
  (void)st;
  pw w = {0};
  /* a process track, counters under it and a global one */
  pw_begin(&w, 1);
  pw_u(&w, 10, SEQ);
  pw_begin(&w, 60), pw_u(&w, 1, 1);
  pw_begin(&w, 3), pw_u(&w, 1, 42), pw_s(&w, 6, "app"), pw_end(&w);
  pw_end(&w);
  pw_end(&w);
  counter_track(&w, 20, 1, "mem", 3, 1024, 0);
  counter_track(&w, 21, 1, "events", 0, 0, 1);
  counter_track(&w, 22, 0, "global", 2, 0, 0);
  counter_ev(&w, 100, 20, 0, 2);      /* 2 KiB */
  counter_ev(&w, 110, 21, 0, 5);      /* incremental: 5, 8, 9 */
  counter_ev(&w, 120, 21, 0, 3);
  counter_ev(&w, 130, 21, 1, 1.0);
  counter_ev(&w, 140, 22, 1, 0.5);
  counter_ev(&w, 150, 99, 0, 1);      /* never described: not a counter track */
  thread_track(&w, 10, 42, 43, "t");
  counter_ev(&w, 160, 10, 0, 1);      /* a slice track: rejected when read */
  pw_begin(&w, 1);                    /* no value */
  pw_u(&w, 8, 170), pw_u(&w, 10, SEQ);
  pw_begin(&w, 11), pw_u(&w, 9, 4), pw_u(&w, 11, 20), pw_end(&w);
  pw_end(&w);
  pw_begin(&w, 1);                    /* a slice carrying extra counter values */
  pw_u(&w, 8, 180), pw_u(&w, 10, SEQ);
  pw_begin(&w, 11);
  pw_u(&w, 9, 3), pw_u(&w, 11, 10), pw_s(&w, 23, "with-extras");
  uint64_t xu[] = {20, 21}, xv[] = {3, 4};
  pw_packed(&w, 31, xu, 2), pw_packed(&w, 12, xv, 2);
  pw_fixed64(&w, 45, 22), pw_d(&w, 46, 0.25);
  pw_end(&w);
  pw_end(&w);
  pj_engine *e = load(&w, NULL, 0);
  assert_rows(e,
              "SELECT c.ts, t.name, t.type, c.value FROM counter c JOIN track t ON c.track_id = t.id "
              "ORDER BY c.ts",
              "100|mem|process_counter_track_event|2048\n"
              "110|events|process_counter_track_event|5\n"
              "120|events|process_counter_track_event|8\n"
              "130|events|process_counter_track_event|9\n"
              "140|global|global_counter_track_event|0.5\n"
              "180|mem|process_counter_track_event|3072\n"
              "180|events|process_counter_track_event|13\n"
              "180|global|global_counter_track_event|0.25\n");
  assert_rows(e, "SELECT name, unit FROM counter_track ORDER BY id",
              "mem|bytes\nevents|NULL\nglobal|count\n");
  assert_rows(e, "SELECT count(*) FROM process_counter_track p JOIN process USING (upid) WHERE pid = 42",
              "2\n");
  assert_rows(e,
              "SELECT name, value FROM stats WHERE name LIKE 'track_event_counter%' AND value > 0 "
              "ORDER BY name",
              "track_event_counter_invalid_track_uuid|2\ntrack_event_counter_missing_value|1\n");
  pj_engine_close(e);
  pw_free(&w);
}

static void flow_ev(pw *w, uint64_t ts, int type, uint64_t uuid, const char *name, uint64_t flow,
                    uint64_t term) {
  pw_begin(w, 1);
  pw_u(w, 8, ts), pw_u(w, 10, SEQ);
  pw_begin(w, 11);
  pw_u(w, 9, (uint64_t)type), pw_u(w, 11, uuid);
  if (name) pw_s(w, 23, name);
  if (flow) pw_fixed64(w, 47, flow);
  if (term) pw_fixed64(w, 48, term);
  pw_end(w);
  pw_end(w);
}

static void test_flows(void **st) {
  (void)st;
  pw w = {0};
  thread_track(&w, 10, 1, 2, "a");
  thread_track(&w, 11, 1, 3, "b");
  flow_ev(&w, 100, 1, 10, "send", 77, 0);   /* begins flow 77 */
  flow_ev(&w, 150, 2, 10, NULL, 0, 0);
  flow_ev(&w, 200, 1, 11, "relay", 77, 0);  /* known: a step */
  flow_ev(&w, 250, 2, 11, NULL, 0, 0);
  flow_ev(&w, 300, 3, 10, "recv", 0, 77);   /* terminates it */
  flow_ev(&w, 400, 3, 11, "again", 0, 77);  /* closed: nothing */
  pj_engine *e = load(&w, NULL, 0);
  assert_rows(e,
              "SELECT o.name, i.name, f.trace_id FROM flow f JOIN slice o ON f.slice_out = o.id "
              "JOIN slice i ON f.slice_in = i.id ORDER BY f.id",
              "send|relay|77\nrelay|recv|77\n");
  pj_engine_close(e);
  pw_free(&w);
}

static void test_debug_annotations(void **st) {
  (void)st;
  pw w = {0};
  pw_begin(&w, 1);
  pw_u(&w, 10, SEQ), pw_u(&w, 13, 1);
  pw_begin(&w, 12);
  pw_begin(&w, 3), pw_u(&w, 1, 5), pw_s(&w, 2, "interned.key"), pw_end(&w);
  pw_begin(&w, 29), pw_u(&w, 1, 6), pw_s(&w, 2, "interned value"), pw_end(&w);
  pw_begin(&w, 4), pw_u(&w, 1, 3), pw_s(&w, 2, "a.cc"), pw_s(&w, 3, "Run"), pw_u(&w, 4, 12), pw_end(&w);
  pw_begin(&w, 1), pw_u(&w, 1, 1), pw_s(&w, 2, "c1"), pw_end(&w);
  pw_begin(&w, 1), pw_u(&w, 1, 2), pw_s(&w, 2, "c2"), pw_end(&w);
  pw_end(&w);
  pw_end(&w);
  thread_track(&w, 10, 1, 2, "t");
  pw_begin(&w, 1);
  pw_u(&w, 8, 100), pw_u(&w, 10, SEQ), pw_u(&w, 13, 2);
  pw_begin(&w, 11);
  pw_u(&w, 9, 3), pw_u(&w, 11, 10), pw_s(&w, 23, "ev");
  uint64_t cats[] = {1, 2};
  pw_packed(&w, 3, cats, 2);
  pw_s(&w, 22, "inline");
  pw_u(&w, 34, 3);   /* source_location_iid */
  pw_begin(&w, 4), pw_s(&w, 10, "b"), pw_u(&w, 2, 1), pw_end(&w);
  pw_begin(&w, 4), pw_s(&w, 10, "u"), pw_u(&w, 3, 7), pw_end(&w);
  pw_begin(&w, 4), pw_s(&w, 10, "i"), pw_i(&w, 4, -3), pw_end(&w);
  pw_begin(&w, 4), pw_s(&w, 10, "d"), pw_d(&w, 5, 2.5), pw_end(&w);
  pw_begin(&w, 4), pw_s(&w, 10, "p"), pw_u(&w, 7, 255), pw_end(&w);
  pw_begin(&w, 4), pw_s(&w, 10, "j"), pw_s(&w, 9, "{\"x\":1}"), pw_end(&w);
  pw_begin(&w, 4), pw_u(&w, 1, 5), pw_u(&w, 17, 6), pw_end(&w);   /* both interned */
  pw_begin(&w, 4);   /* dict {k: [1, 2]} */
  pw_s(&w, 10, "dict");
  pw_begin(&w, 11);
  pw_s(&w, 10, "k");
  pw_begin(&w, 12), pw_i(&w, 4, 1), pw_end(&w);
  pw_begin(&w, 12), pw_i(&w, 4, 2), pw_end(&w);
  pw_end(&w);
  pw_end(&w);
  pw_end(&w);
  pw_end(&w);
  pj_engine *e = load(&w, NULL, 0);
  assert_rows(e, "SELECT category FROM slice", "c1,c2,inline\n");
  assert_rows(e,
              "SELECT a.flat_key, a.key, a.value_type, a.display_value FROM slice s "
              "JOIN args a USING (arg_set_id) ORDER BY a.id",
              "source.file_name|source.file_name|string|a.cc\n"
              "source.function_name|source.function_name|string|Run\n"
              "source.line_number|source.line_number|uint|12\n"
              "debug.b|debug.b|bool|true\n"
              "debug.u|debug.u|uint|7\n"
              "debug.i|debug.i|int|-3\n"
              "debug.d|debug.d|real|2.5\n"
              "debug.p|debug.p|pointer|0xff\n"
              "debug.j|debug.j|json|{\"x\":1}\n"
              "debug.interned_key|debug.interned_key|string|interned value\n"
              "debug.dict.k|debug.dict.k[0]|int|1\n"
              "debug.dict.k|debug.dict.k[1]|int|2\n");
  pj_engine_close(e);
  pw_free(&w);
}

/* ---- descriptors and tracks (§3.7) ------------------------------------------------------------ */

static void plain_track(pw *w, uint64_t uuid, uint64_t parent, const char *name) {
  pw_begin(w, 1);
  pw_u(w, 10, SEQ);
  pw_begin(w, 60);
  pw_u(w, 1, uuid);
  if (parent) pw_u(w, 5, parent);
  if (name) pw_s(w, 2, name);
  pw_end(w);
  pw_end(w);
}

static void test_tracks(void **st) {
  (void)st;
  pw w = {0};
  pw_begin(&w, 1);   /* process 50 "desc-name", later renamed by the process tree */
  pw_u(&w, 10, SEQ);
  pw_begin(&w, 60), pw_u(&w, 1, 1);
  pw_begin(&w, 3), pw_u(&w, 1, 50), pw_s(&w, 6, "desc-name"), pw_end(&w);
  pw_end(&w);
  pw_end(&w);
  thread_track(&w, 2, 50, 51, "main-thread");
  plain_track(&w, 3, 2, "child");    /* child of a thread: merged by name */
  plain_track(&w, 4, 2, "child");    /* same name: same merged set */
  plain_track(&w, 5, 1, NULL);       /* child of the process, no name */
  plain_track(&w, 6, 0, "global");   /* a global root */
  plain_track(&w, 7, 99, "orphan");  /* parent never described */
  te(&w, 100, 1, 3, "x");
  te(&w, 110, 1, 4, "y");            /* overlaps x: a second track of the set */
  te(&w, 120, 2, 4, NULL);
  te(&w, 130, 2, 3, NULL);
  te(&w, 140, 3, 4, "z");            /* both free again: the track bound to 4 */
  te(&w, 150, 3, 5, "named-by-event");
  te(&w, 160, 3, 6, "g");
  te(&w, 170, 3, 7, "dropped");
  te(&w, 180, 3, 0, "default");      /* uuid 0 without thread descriptor */
  te(&w, 190, 3, 12345, "undescribed");
  pw_begin(&w, 1);
  pw_u(&w, 8, 200);
  pw_begin(&w, 2);
  pw_begin(&w, 1), pw_u(&w, 1, 50), pw_u(&w, 2, 1), pw_s(&w, 3, "tree-name"), pw_end(&w);
  pw_end(&w);
  pw_end(&w);
  pj_engine *e = load(&w, NULL, 0);
  assert_rows(e,
              "SELECT s.name, t.type, t.name, t.track_group_id IS NOT NULL FROM slice s "
              "JOIN track t ON s.track_id = t.id ORDER BY s.ts",
              "x|thread_merged_track_event|child|1\n"
              "y|thread_merged_track_event|child|1\n"
              "z|thread_merged_track_event|child|1\n"
              "named-by-event|process_merged_track_event|named-by-event|1\n"
              "g|global_track_event|global|0\n"
              "default|global_track_event|Default Track|0\n"
              "undescribed|global_track_event|NULL|0\n");
  assert_rows(e, "SELECT count(DISTINCT track_id) FROM slice WHERE name IN ('x', 'y', 'z')", "2\n");
  assert_rows(e,
              "SELECT (SELECT track_id FROM slice WHERE name = 'z') = "
              "(SELECT track_id FROM slice WHERE name = 'y')",
              "1\n");
  assert_rows(e, "SELECT value FROM stats WHERE name = 'track_hierarchy_missing_uuid'", "1\n");
  assert_rows(e, "SELECT name FROM process WHERE pid = 50", "tree-name\n");
  assert_rows(e, "SELECT name, is_main_thread FROM thread WHERE tid = 51", "main-thread|0\n");
  /* descriptor source args */
  assert_rows(e,
              "SELECT a.key, a.display_value FROM track t JOIN args a ON a.arg_set_id = t.source_arg_set_id "
              "WHERE t.name = 'global' ORDER BY a.id",
              "source|descriptor\ntrace_id|6\nis_root_in_scope|true\n");
  pj_engine_close(e);
  pw_free(&w);
}

/* Legacy thread descriptor: delta timestamps and thread time, uuid 0
 * falls back to the sequence's thread. */
static void test_legacy_thread(void **st) {
  (void)st;
  pw w = {0};
  pw_begin(&w, 1);
  pw_u(&w, 10, SEQ), pw_u(&w, 13, 1);
  pw_begin(&w, 44);
  pw_u(&w, 1, 8), pw_u(&w, 2, 9), pw_s(&w, 5, "legacy"), pw_u(&w, 6, 1000), pw_u(&w, 7, 50);
  pw_end(&w);
  pw_end(&w);
  for (int i = 0; i < 2; i++) {
    pw_begin(&w, 1);
    pw_u(&w, 10, SEQ), pw_u(&w, 13, 2);
    pw_begin(&w, 11);
    pw_u(&w, 9, (uint64_t)(i ? 2 : 1));
    pw_i(&w, 1, i ? 5 : 2);      /* timestamp_delta_us: 1002 µs, 1007 µs */
    pw_i(&w, 2, i ? 3 : 1);      /* thread_time_delta_us: 51 µs, 54 µs */
    if (!i) pw_s(&w, 23, "work");
    pw_end(&w);
    pw_end(&w);
  }
  pj_engine *e = load(&w, NULL, 0);
  assert_rows(e,
              "SELECT s.ts, s.dur, s.thread_ts, s.thread_dur, th.tid, th.name FROM slice s "
              "JOIN thread_track t ON s.track_id = t.id JOIN thread th USING (utid)",
              "1002000|5000|51000|3000|9|legacy\n");
  assert_rows(e,
              "SELECT t.name, c.value FROM counter c JOIN track t ON c.track_id = t.id ORDER BY c.ts",
              "thread_time|51000\nthread_time|54000\n");
  pj_engine_close(e);
  pw_free(&w);
}

/* ---- process_tree, process_stats, sys_stats (§3.8) -------------------------------------------- */

static void tree_proc(pw *w, int pid, int ppid, const char *const *argv, int argc, int uid) {
  pw_begin(w, 1);
  pw_u(w, 1, (uint64_t)pid), pw_u(w, 2, (uint64_t)ppid);
  for (int i = 0; i < argc; i++) pw_s(w, 3, argv[i]);
  if (uid >= 0) pw_u(w, 5, (uint64_t)uid);
  pw_end(w);
}

static void test_process_tree_stats(void **st) {
  (void)st;
  pw w = {0};
  pw_begin(&w, 1);
  pw_u(&w, 8, 10);
  pw_begin(&w, 2);
  const char *a1[] = {"/bin/app", "--flag", "x"};
  const char *a2[] = {"kworker/3:1-events"};
  const char *a3[] = {"single word arg"};
  tree_proc(&w, 100, 1, a1, 3, 1010123);
  tree_proc(&w, 200, 2, a2, 1, -1);
  tree_proc(&w, 300, 1, a3, 1, -1);
  tree_proc(&w, 400, 1, NULL, 0, -1);   /* no cmdline: skipped */
  pw_begin(&w, 2), pw_u(&w, 1, 101), pw_u(&w, 3, 100), pw_s(&w, 2, "app-worker"), pw_end(&w);
  pw_end(&w);
  pw_end(&w);
  pw_begin(&w, 1);
  pw_u(&w, 8, 20);
  pw_begin(&w, 9);
  pw_begin(&w, 1), pw_u(&w, 1, 100), pw_u(&w, 3, 4), pw_u(&w, 4, 1), pw_i(&w, 10, -100), pw_end(&w);
  pw_end(&w);
  pw_end(&w);
  pw_begin(&w, 1);
  pw_u(&w, 8, 30);
  pw_begin(&w, 7);
  uint64_t f[] = {1000, 2000};
  pw_packed(&w, 11, f, 2);
  pw_end(&w);
  pw_end(&w);
  pj_engine *e = load(&w, NULL, 0);
  assert_rows(e,
              "SELECT pid, name, cmdline, uid, android_appid, android_user_id, "
              "(SELECT pid FROM process q WHERE q.upid = p.parent_upid) FROM process p "
              "WHERE pid >= 100 ORDER BY pid",
              "100|/bin/app|/bin/app --flag x|1010123|10123|10|1\n"
              "200|kworker/3:1|kworker/3:1|NULL|NULL|NULL|2\n"
              "300|single|single word arg|NULL|NULL|NULL|1\n");
  assert_rows(e, "SELECT t.name, p.pid FROM thread t JOIN process p USING (upid) WHERE tid = 101",
              "app-worker|100\n");
  assert_rows(e,
              "SELECT t.name, t.type, c.ts, c.value FROM counter c JOIN track t ON c.track_id = t.id "
              "ORDER BY c.ts, t.name",
              "mem.rss|process_memory|20|4096\n"
              "mem.rss.anon|process_memory|20|1024\n"
              "oom_score_adj|oom_score_adj|20|-100\n"
              "cpufreq|cpu_frequency|30|1000\n"
              "cpufreq|cpu_frequency|30|2000\n");
  assert_rows(e, "SELECT cpu FROM cpu_counter_track ORDER BY cpu", "0\n1\n");
  pj_engine_close(e);
  pw_free(&w);
}

/* ---- ftrace (§3.9, §3.10) ----------------------------------------------------------------- */

/* Opens an FtraceEvent at ts by pid inside an open bundle. */
static void fev_begin(pw *w, uint64_t ts, int pid, uint32_t field) {
  pw_begin(w, 2);
  pw_u(w, 1, ts), pw_u(w, 2, (uint64_t)pid);
  pw_begin(w, field);
}
static void fev_end(pw *w) { pw_end(w), pw_end(w); }

static void sched_switch(pw *w, uint64_t ts, const char *pc, int pp, int64_t st, const char *nc,
                         int np) {
  fev_begin(w, ts, pp, 4);
  pw_s(w, 1, pc), pw_u(w, 2, (uint64_t)pp), pw_u(w, 3, 120), pw_i(w, 4, st);
  pw_s(w, 5, nc), pw_u(w, 6, (uint64_t)np), pw_u(w, 7, 100);
  fev_end(w);
}

static void test_ftrace(void **st) {
  (void)st;
  pw w = {0};
  pw_begin(&w, 1);   /* kernel 5.10: prev_state 0x80 is I */
  pw_begin(&w, 45), pw_begin(&w, 1), pw_s(&w, 1, "Linux"), pw_s(&w, 3, "5.10.0-1"), pw_end(&w), pw_end(&w);
  pw_end(&w);
  pw_begin(&w, 1);
  pw_u(&w, 10, 9), pw_u(&w, 13, 1);
  pw_begin(&w, 12), pw_begin(&w, 26), pw_u(&w, 1, 0xabc), pw_s(&w, 2, "io_schedule"), pw_end(&w), pw_end(&w);
  pw_end(&w);
  pw_begin(&w, 1);
  pw_u(&w, 10, 9);
  pw_begin(&w, 1);   /* bundle for cpu 1 */
  pw_u(&w, 1, 1);
  sched_switch(&w, 1000, "swapper/1", 0, 0, "app", 10);
  fev_begin(&w, 1100, 10, 20);   /* app wakes 11 */
  pw_s(&w, 1, "helper"), pw_u(&w, 2, 11), pw_u(&w, 3, 120), pw_u(&w, 5, 1);
  fev_end(&w);
  sched_switch(&w, 1200, "app", 10, 2, "helper", 11);   /* app blocks (D) */
  fev_begin(&w, 1250, 11, 18);   /* blocked reason of app */
  pw_u(&w, 1, 10), pw_u(&w, 2, 0xabc), pw_u(&w, 3, 1);
  fev_end(&w);
  sched_switch(&w, 1300, "oops", 99, 0, "app", 10);      /* prev_pid mismatch */
  sched_switch(&w, 1400, "app", 10, 0x80, "swapper/1", 0);
  fev_begin(&w, 1500, 0, 11), pw_u(&w, 1, 1800000), pw_u(&w, 2, 1), fev_end(&w);
  fev_begin(&w, 1600, 0, 13), pw_u(&w, 1, 2), pw_u(&w, 2, 1), fev_end(&w);
  fev_begin(&w, 1700, 10, 235), pw_u(&w, 1, 12), pw_s(&w, 2, "newthr"), pw_u(&w, 3, 0x10000), fev_end(&w);
  fev_begin(&w, 1800, 10, 235), pw_u(&w, 1, 20), pw_s(&w, 2, "child"), pw_u(&w, 3, 0), fev_end(&w);
  fev_begin(&w, 1900, 12, 236), pw_u(&w, 1, 12), pw_s(&w, 2, "newthr"), pw_s(&w, 3, "renamed"), fev_end(&w);
  fev_begin(&w, 2000, 0, 240), pw_s(&w, 1, "child"), pw_u(&w, 2, 20), fev_end(&w);
  fev_begin(&w, 2100, 0, 999), pw_u(&w, 1, 1), fev_end(&w);   /* unknown event kind */
  /* atrace markers in print events */
  fev_begin(&w, 2200, 11, 3), pw_s(&w, 2, "B|10|draw frame\n"), fev_end(&w);
  fev_begin(&w, 2300, 11, 3), pw_s(&w, 2, "C|10|queue|7\n"), fev_end(&w);
  fev_begin(&w, 2400, 11, 3), pw_s(&w, 2, "E|10\n"), fev_end(&w);
  pw_end(&w);
  pw_end(&w);
  pj_engine *e = load(&w, NULL, 0);
  assert_rows(e,
              "SELECT s.ts, s.dur, s.cpu, t.tid, s.end_state, s.priority FROM sched s "
              "JOIN thread t USING (utid) ORDER BY s.id",
              "1000|200|1|10|D|100\n"
              "1200|-1|1|11|NULL|100\n"
              "1300|100|1|10|I|100\n"
              "1400|-1|1|0|NULL|100\n");
  assert_rows(e, "SELECT value FROM stats WHERE name = 'mismatched_sched_switch_tids'", "1\n");
  assert_rows(e,
              "SELECT ts.ts, ts.dur, ts.state, ts.cpu, ts.io_wait, ts.blocked_function, "
              "(SELECT tid FROM thread w WHERE w.utid = ts.waker_utid) FROM thread_state ts "
              "JOIN thread t USING (utid) WHERE t.tid = 10 ORDER BY ts.id",
              "1000|200|Running|1|NULL|NULL|NULL\n"
              "1200|100|D|NULL|1|io_schedule|NULL\n"
              "1300|100|Running|1|NULL|NULL|NULL\n"
              "1400|-1|I|NULL|NULL|NULL|NULL\n");
  assert_rows(e,
              "SELECT ts.ts, ts.state, (SELECT tid FROM thread w WHERE w.utid = ts.waker_utid) "
              "FROM thread_state ts JOIN thread t USING (utid) WHERE t.tid = 11 ORDER BY ts.id",
              "1100|R|10\n1200|Running|NULL\n");
  assert_rows(e, "SELECT t.name, c.value FROM counter c JOIN track t ON c.track_id = t.id ORDER BY c.ts",
              "cpufreq|1.8e+06\ncpuidle|2\nqueue|7\n");
  assert_rows(e,
              "SELECT s.ts, s.dur, s.name, th.tid FROM slice s JOIN thread_track tt ON s.track_id = tt.id "
              "JOIN thread th USING (utid)",
              "2200|200|draw frame|11\n");
  assert_rows(e,
              "SELECT t.tid, t.name, t.start_ts, t.end_ts, p.pid, p.name, p.start_ts, p.end_ts "
              "FROM thread t LEFT JOIN process p USING (upid) WHERE t.tid IN (12, 20) ORDER BY t.tid",
              "12|renamed|1700|NULL|NULL|NULL|NULL|NULL\n"
              "20|child|1800|2000|20|child|1800|2000\n");
  assert_rows(e, "SELECT name, count(*) FROM ftrace_event GROUP BY name ORDER BY name",
              "cpu_frequency|1\ncpu_idle|1\nprint|3\nsched_blocked_reason|1\nsched_process_free|1\n"
              "sched_switch|4\nsched_waking|1\ntask_newtask|2\ntask_rename|1\nunknown(999)|1\n");
  assert_rows(e,
              "SELECT a.key, a.display_value FROM ftrace_event f JOIN args a USING (arg_set_id) "
              "WHERE f.name = 'sched_waking' ORDER BY a.id",
              "comm|helper\npid|11\nprio|120\ntarget_cpu|1\n");
  assert_rows(e, "SELECT value FROM stats WHERE name = 'proto_unknown_ftrace_events'", "1\n");
  assert_rows(e, "SELECT str_value FROM metadata WHERE name = 'system_release'", "5.10.0-1\n");
  pj_engine_close(e);
  pw_free(&w);
}

static void test_compact_sched(void **st) {
  (void)st;
  pw w = {0};
  pw_begin(&w, 1);
  pw_begin(&w, 1);
  pw_u(&w, 1, 2);   /* cpu 2 */
  pw_begin(&w, 4);
  pw_s(&w, 5, "swapper/2"), pw_s(&w, 5, "a"), pw_s(&w, 5, "b");
  uint64_t ts[] = {1000, 100, 100}, state[] = {0, 1, 0}, pid[] = {5, 6, 0}, prio[] = {120, 110, 120},
           comm[] = {1, 2, 0};
  pw_packed(&w, 1, ts, 3), pw_packed(&w, 2, state, 3), pw_packed(&w, 3, pid, 3);
  pw_packed(&w, 4, prio, 3), pw_packed(&w, 6, comm, 3);
  uint64_t wts[] = {900, 150}, wpid[] = {7, 5}, wcpu[] = {2, 3}, wprio[] = {120, 120}, wcomm[] = {1, 1},
           wflags[] = {0, 0x10};
  pw_packed(&w, 7, wts, 2), pw_packed(&w, 8, wpid, 2), pw_packed(&w, 9, wcpu, 2);
  pw_packed(&w, 10, wprio, 2), pw_packed(&w, 11, wcomm, 2), pw_packed(&w, 12, wflags, 2);
  pw_end(&w);
  pw_end(&w);
  pw_end(&w);
  pj_engine *e = load(&w, NULL, 0);
  /* switch 1 (ts 1000) only records pid 5; the waking at 900 has no
   * waker, the one at 1050 was made by the thread running then (5) */
  assert_rows(e, "SELECT s.ts, s.dur, t.tid, t.name, s.end_state, s.priority FROM sched s "
                 "JOIN thread t USING (utid) ORDER BY s.id",
              "1100|100|6|b|R|110\n1200|-1|0|swapper|NULL|120\n");
  assert_rows(e,
              "SELECT ts.ts, ts.state, ts.irq_context, (SELECT tid FROM thread w WHERE w.utid = ts.waker_utid) "
              "FROM thread_state ts JOIN thread t USING (utid) WHERE t.tid = 5 ORDER BY ts.id",
              "1050|R|1|5\n1100|S|NULL|NULL\n");
  assert_rows(e,
              "SELECT name, value FROM stats WHERE name LIKE 'compact_sched%' ORDER BY name",
              "compact_sched_has_parse_errors|0\ncompact_sched_switch_skipped|1\n"
              "compact_sched_waking_skipped|1\n");
  pj_engine_close(e);
  pw_free(&w);
}

/* ---- unknown, malformed, compressed (§3.1) -------------------------------------------------- */

static void test_unknown_and_damage(void **st) {
  (void)st;
  pw w = {0};
  thread_track(&w, 10, 1, 2, "t");
  pw_begin(&w, 1), pw_u(&w, 8, 5), pw_begin(&w, 66), pw_u(&w, 1, 1), pw_end(&w), pw_end(&w);  /* unknown kind */
  pw_u(&w, 2, 17);   /* an unknown top-level Trace field */
  pw_begin(&w, 1), pw_end(&w);   /* empty packet */
  te(&w, 100, 1, 10, "a");
  /* a malformed TrackEvent: its name is read, then a length past the end */
  pw_begin(&w, 1);
  pw_u(&w, 8, 200), pw_u(&w, 10, SEQ);
  const uint8_t bad[] = {0x48, 0x03, 0x58, 0x0a, 0xba, 0x01, 0x02, 'b', 'x', 0x12, 0x7f};
  pw_bytes(&w, 11, bad, sizeof bad);
  pw_end(&w);
  te(&w, 300, 2, 10, NULL);
  /* compressed_packets: two packets, deflated */
  pw inner = {0};
  te(&inner, 400, 1, 10, "zipped");
  te(&inner, 500, 2, 10, NULL);
  uLongf zn = compressBound(inner.n);
  uint8_t *z = malloc(zn);
  assert_int_equal(compress(z, &zn, inner.b, inner.n), Z_OK);
  pw_begin(&w, 1), pw_bytes(&w, 50, z, zn), pw_end(&w);
  pw_begin(&w, 1), pw_bytes(&w, 50, "junk", 4), pw_end(&w);
  te(&w, 600, 3, 10, "after");
  char warn[256];
  pj_engine *e = load(&w, warn, sizeof warn);
  assert_string_equal(warn, "");
  assert_rows(e, "SELECT ts, dur, name FROM slice ORDER BY ts",
              "100|200|a\n200|0|bx\n400|100|zipped\n600|0|after\n");
  assert_rows(e,
              "SELECT name, value FROM stats WHERE name LIKE 'proto_%' AND value > 0 ORDER BY name",
              "proto_compressed_packets_invalid|1\nproto_malformed_fields|1\nproto_unknown_packets|1\n");
  pj_engine_close(e);
  /* the same trace gzip-compressed, as a file */
  char path[] = "/tmp/pj_test_proto_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  gzFile g = gzdopen(fd, "wb");
  assert_int_equal(gzwrite(g, w.b, (unsigned)w.n), (int)w.n);
  gzclose(g);
  e = proto_engine(NULL, 0, path, warn, sizeof warn);
  assert_rows(e, "SELECT count(*) FROM slice", "4\n");
  assert_rows(e, "SELECT trace_type, is_container FROM trace_file ORDER BY id", "gzip|1\nproto|0\n");
  pj_engine_close(e);
  unlink(path);
  free(z);
  pw_free(&inner);
  pw_free(&w);
}

/* Every prefix of a small trace imports without error (a cut file keeps
 * the packets before the cut). */
static void test_every_prefix(void **st) {
  (void)st;
  pw w = {0};
  thread_track(&w, 10, 1, 2, "t");
  for (int i = 0; i < 4; i++) te(&w, 100 + (uint64_t)i * 10, i % 2 ? 2 : 1, 10, i % 2 ? NULL : "s");
  pw_begin(&w, 1);
  pw_begin(&w, 1);
  pw_u(&w, 1, 0);
  sched_switch(&w, 1000, "a", 1, 0, "b", 2);
  pw_end(&w);
  pw_end(&w);
  for (size_t n = 1; n <= w.n; n++) {
    char warn[256];
    pj_engine *e = proto_engine(w.b, n, NULL, warn, sizeof warn);
    int64_t slices = one_int(e, "SELECT count(*) FROM slice");
    assert_true(slices >= 0 && slices <= 2);
    pj_engine_close(e);
  }
  pw_free(&w);
}

/* Legacy async phases (§3.6.9) and legacy bind_id flows (§3.6.8). */
static void legacy_ev(pw *w, uint64_t ts, int phase, const char *name, int idfield, uint64_t id,
                      uint64_t bind, int dir) {
  pw_begin(w, 1);
  pw_u(w, 8, ts), pw_u(w, 10, SEQ), pw_u(w, 13, 2);
  pw_begin(w, 11);
  if (name) pw_s(w, 23, name);
  pw_s(w, 22, "cat");
  pw_begin(w, 6);
  pw_u(w, 2, (uint64_t)phase);
  if (idfield) pw_u(w, (uint32_t)idfield, id);
  if (bind) pw_u(w, 8, bind), pw_u(w, 13, (uint64_t)dir);
  pw_end(w);
  pw_end(w);
  pw_end(w);
}

static void test_legacy_events(void **st) {
  (void)st;
  pw w = {0};
  pw_begin(&w, 1);
  pw_u(&w, 10, SEQ), pw_u(&w, 13, 1);
  pw_begin(&w, 44), pw_u(&w, 1, 30), pw_u(&w, 2, 31), pw_end(&w);
  pw_end(&w);
  legacy_ev(&w, 100, 'b', "req", 6, 5, 0, 0);      /* global id 5 */
  legacy_ev(&w, 110, 'b', "req", 6, 6, 0, 0);      /* overlaps: second track */
  legacy_ev(&w, 120, 'e', NULL, 6, 5, 0, 0);
  legacy_ev(&w, 130, 'e', NULL, 6, 6, 0, 0);
  legacy_ev(&w, 140, 'S', "step", 10, 9, 0, 0);    /* process-scoped */
  legacy_ev(&w, 150, 'F', "step", 10, 9, 0, 0);
  legacy_ev(&w, 200, 'B', "out", 0, 0, 77, 2);     /* a thread slice starting flow 77 */
  legacy_ev(&w, 210, 'E', NULL, 0, 0, 0, 0);
  legacy_ev(&w, 300, 'X', "in", 0, 0, 77, 1);      /* X without duration: 0 */
  pj_engine *e = load(&w, NULL, 0);
  assert_rows(e,
              "SELECT s.ts, s.dur, s.name, t.type, t.track_group_id IS NOT NULL FROM slice s "
              "JOIN track t ON s.track_id = t.id ORDER BY s.ts",
              "100|20|req|legacy_async_global_slice|1\n"
              "110|20|req|legacy_async_global_slice|1\n"
              "140|10|step|legacy_async_process_slice|1\n"
              "200|10|out|thread_execution|0\n"
              "300|0|in|thread_execution|0\n");
  assert_rows(e, "SELECT count(DISTINCT track_id) FROM slice WHERE name = 'req'", "2\n");
  assert_rows(e,
              "SELECT a.key, a.display_value FROM slice s JOIN args a USING (arg_set_id) "
              "WHERE s.name = 'step' AND a.key LIKE 'legacy_event.%' ORDER BY a.key",
              "legacy_event.passthrough_utid|2\nlegacy_event.phase|S\n");
  assert_rows(e,
              "SELECT o.name, i.name, f.trace_id FROM flow f JOIN slice o ON f.slice_out = o.id "
              "JOIN slice i ON f.slice_in = i.id",
              "out|in|77\n");
  pj_engine_close(e);
  pw_free(&w);
}

/* Legacy v1 flows (§3.6.8): s/t/f keyed by (unscoped_id, category, name)
 * as JSON's, trace_id 0, 1, … per key, args {name, cat}; an f without
 * bind_to_enclosing binds to the next slice on the track. */
static void v1_ev(pw *w, uint64_t ts, int phase, const char *name, int has_id, uint64_t id,
                  int enclosing) {
  pw_begin(w, 1);
  pw_u(w, 8, ts), pw_u(w, 10, SEQ), pw_u(w, 13, 2);
  pw_begin(w, 11);
  if (name) pw_s(w, 23, name);
  pw_s(w, 22, "cat");
  pw_begin(w, 6);
  pw_u(w, 2, (uint64_t)phase);
  if (has_id) pw_u(w, 6, id);
  if (enclosing) pw_u(w, 12, 1);
  pw_end(w);
  pw_end(w);
  pw_end(w);
}

static void test_legacy_v1_flows(void **st) {
  (void)st;
  pw w = {0};
  pw_begin(&w, 1);
  pw_u(&w, 10, SEQ), pw_u(&w, 13, 1);
  pw_begin(&w, 44), pw_u(&w, 1, 30), pw_u(&w, 2, 31), pw_end(&w);
  pw_end(&w);
  v1_ev(&w, 100, 'B', "a", 0, 0, 0);
  v1_ev(&w, 110, 's', "f", 1, 5, 0);    /* begins key (5, cat, f) on a */
  v1_ev(&w, 115, 's', "g", 1, 5, 0);    /* another key: trace_id 1 */
  v1_ev(&w, 120, 'E', NULL, 0, 0, 0);
  v1_ev(&w, 200, 'B', "b", 0, 0, 0);
  v1_ev(&w, 210, 't', "f", 1, 5, 0);    /* step a → b */
  v1_ev(&w, 220, 'E', NULL, 0, 0, 0);
  v1_ev(&w, 300, 'f', "f", 1, 5, 0);    /* bound to the next slice: c */
  v1_ev(&w, 310, 'B', "c", 0, 0, 0);
  v1_ev(&w, 315, 'f', "g", 1, 5, 1);    /* bind_to_enclosing: the top slice, c */
  v1_ev(&w, 320, 'E', NULL, 0, 0, 0);
  v1_ev(&w, 340, 's', "h", 0, 0, 0);    /* no unscoped_id */
  legacy_ev(&w, 400, 'B', "d", 0, 0, 88, 0);   /* bind_id without a direction */
  legacy_ev(&w, 410, 'E', NULL, 0, 0, 0, 0);
  pj_engine *e = load(&w, NULL, 0);
  assert_rows(e, "SELECT name, value FROM stats WHERE value > 0 AND name LIKE 'flow%' ORDER BY name",
              "flow_invalid_id|1\nflow_without_direction|1\n");
  assert_rows(e,
              "SELECT o.name, i.name, f.trace_id, "
              "(SELECT group_concat(key || '=' || display_value, ',') FROM args a "
              " WHERE a.arg_set_id = f.arg_set_id) FROM flow f JOIN slice o ON f.slice_out = o.id "
              "JOIN slice i ON f.slice_in = i.id ORDER BY f.id",
              "a|b|0|name=f,cat=cat\nb|c|0|name=f,cat=cat\na|c|1|name=g,cat=cat\n");
  assert_rows(e, "SELECT value FROM stats WHERE name = 'track_event_parser_errors'", "0\n");
  assert_rows(e, "SELECT count(*) FROM slice", "4\n");
  pj_engine_close(e);
  pw_free(&w);
}

/* STATE events (§3.6.4): the event name is the state of the uuid's state
 * track; the next state ends it, a nameless one only ends it; args go on
 * the row. Tracks are `*_state_track_event` with event_type state. */
static void test_states(void **st) {
  (void)st;
  pw w = {0};
  thread_track(&w, 10, 1, 2, "t");
  pw_begin(&w, 1), pw_u(&w, 10, SEQ);
  pw_begin(&w, 60), pw_u(&w, 1, 50), pw_s(&w, 2, "power"), pw_end(&w);
  pw_end(&w);
  pw_begin(&w, 1), pw_u(&w, 10, SEQ);
  pw_begin(&w, 60), pw_u(&w, 1, 20), pw_u(&w, 5, 10), pw_s(&w, 2, "mode"), pw_u(&w, 18, 1), pw_end(&w);
  pw_end(&w);
  te(&w, 150, 5, 50, "off");            /* written out of order: sorted first */
  te(&w, 100, 5, 50, "on");
  te(&w, 200, 5, 50, NULL);             /* ends "off", opens nothing */
  pw_begin(&w, 1);                      /* a state with a debug annotation */
  pw_u(&w, 8, 300), pw_u(&w, 10, SEQ);
  pw_begin(&w, 11);
  pw_u(&w, 9, 5), pw_u(&w, 11, 20), pw_s(&w, 23, "busy");
  pw_begin(&w, 4), pw_s(&w, 10, "why"), pw_s(&w, 6, "io"), pw_end(&w);
  pw_end(&w);
  pw_end(&w);
  te(&w, 400, 5, 0, "nowhere");         /* no track: rejected */
  te(&w, 500, 3, 10, "i");
  pj_engine *e = load(&w, NULL, 0);
  assert_rows(e,
              "SELECT s.ts, s.dur, s.name, t.name, t.type, "
              "(SELECT group_concat(key || '=' || display_value) FROM args a "
              " WHERE a.arg_set_id = s.arg_set_id) FROM state s JOIN track t ON s.track_id = t.id "
              "ORDER BY s.id",
              "100|50|on|power|global_state_track_event|NULL\n"
              "150|50|off|power|global_state_track_event|NULL\n"
              "300|-1|busy|mode|thread_state_track_event|debug.why=io\n");
  assert_rows(e, "SELECT count(*) FROM state_track", "2\n");
  assert_rows(e, "SELECT t.name, th.tid FROM thread_state_track t JOIN thread th USING (utid)",
              "mode|2\n");
  assert_rows(e,
              "SELECT key, display_value FROM track t JOIN args a ON a.arg_set_id = t.dimension_arg_set_id "
              "WHERE t.name = 'power'",
              "track_uuid|50\n");
  assert_rows(e, "SELECT value FROM stats WHERE name = 'track_event_parser_errors'", "1\n");
  assert_rows(e, "SELECT start_ts, end_ts FROM trace_bounds", "100|500\n");
  pj_engine_close(e);
  pw_free(&w);
}

/* zstd_compressed_packets (§3.1.3): a zstd blob of packets read in place,
 * a broken one counted. */
static void test_zstd_packets(void **st) {
  (void)st;
  pw w = {0}, inner = {0};
  thread_track(&w, 10, 1, 2, "t");
  te(&inner, 100, 1, 10, "zstd");
  te(&inner, 200, 2, 10, NULL);
  size_t cap = ZSTD_compressBound(inner.n);
  uint8_t *z = malloc(cap);
  size_t zn = ZSTD_compress(z, cap, inner.b, inner.n, 3);
  assert_false(ZSTD_isError(zn));
  pw_begin(&w, 1), pw_bytes(&w, 133, z, zn), pw_end(&w);
  pw_begin(&w, 1), pw_bytes(&w, 133, "junk", 4), pw_end(&w);
  pw_begin(&w, 1), pw_bytes(&w, 133, z, zn / 2), pw_end(&w);   /* cut: what decodes, counted */
  te(&w, 300, 3, 10, "after");
  pj_engine *e = load(&w, NULL, 0);
  assert_rows(e, "SELECT ts, dur, name FROM slice ORDER BY ts", "100|100|zstd\n300|0|after\n");
  assert_rows(e, "SELECT value FROM stats WHERE name = 'proto_compressed_packets_invalid'", "2\n");
  pj_engine_close(e);
  free(z);
  pw_free(&inner);
  pw_free(&w);
}

/* §3.6.5: an extra counter on a thread_time track also gives the slice
 * its thread_ts / thread_dur (and a counter row). */
static void extra_tt_ev(pw *w, uint64_t ts, int type, const char *name, uint64_t value) {
  pw_begin(w, 1);
  pw_u(w, 8, ts), pw_u(w, 10, SEQ);
  pw_begin(w, 11);
  pw_u(w, 9, (uint64_t)type), pw_u(w, 11, 10);
  if (name) pw_s(w, 23, name);
  pw_u(w, 31, 70), pw_u(w, 12, value);
  pw_end(w);
  pw_end(w);
}

static void test_extra_thread_time(void **st) {
  (void)st;
  pw w = {0};
  thread_track(&w, 10, 1, 2, "t");
  pw_begin(&w, 1), pw_u(&w, 10, SEQ);
  pw_begin(&w, 60), pw_u(&w, 1, 70), pw_u(&w, 5, 10);
  pw_begin(&w, 8), pw_u(&w, 1, 1), pw_end(&w);   /* THREAD_TIME_NS */
  pw_end(&w);
  pw_end(&w);
  extra_tt_ev(&w, 100, 1, "s", 5000);
  extra_tt_ev(&w, 200, 2, NULL, 8000);
  pj_engine *e = load(&w, NULL, 0);
  assert_rows(e, "SELECT name, thread_ts, thread_dur FROM slice", "s|5000|3000\n");
  assert_rows(e,
              "SELECT t.name, c.ts, c.value FROM counter c JOIN counter_track t ON c.track_id = t.id "
              "ORDER BY c.ts",
              "thread_time|100|5000\nthread_time|200|8000\n");
  pj_engine_close(e);
  pw_free(&w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tokio),
      cmocka_unit_test(test_systing),
      cmocka_unit_test(test_track_event_slices),
      cmocka_unit_test(test_truncated),
      cmocka_unit_test(test_sequence_state),
      cmocka_unit_test(test_packet_defaults),
      cmocka_unit_test(test_clocks),
      cmocka_unit_test(test_sorting),
      cmocka_unit_test(test_counters),
      cmocka_unit_test(test_flows),
      cmocka_unit_test(test_debug_annotations),
      cmocka_unit_test(test_tracks),
      cmocka_unit_test(test_legacy_thread),
      cmocka_unit_test(test_process_tree_stats),
      cmocka_unit_test(test_ftrace),
      cmocka_unit_test(test_compact_sched),
      cmocka_unit_test(test_unknown_and_damage),
      cmocka_unit_test(test_every_prefix),
      cmocka_unit_test(test_legacy_events),
      cmocka_unit_test(test_legacy_v1_flows),
      cmocka_unit_test(test_states),
      cmocka_unit_test(test_zstd_packets),
      cmocka_unit_test(test_extra_thread_time),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
