/*
 * test_builder.c — the trace builder (import/builder.h) on its own: each
 * shared engine of TRACES.md §1.16–§1.19 and §3.10 driven by hand, then
 * the finished tables read through SQL and pipelines (views included).
 * The importers' own rules are tested in test_trace_json.c and the
 * protobuf tests.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "api/engine.h"
#include "import/builder.h"
#include "import/import.h"
#include "import/json.h"
#include "trace_rows.h"

typedef struct fx {
  pj_engine *e;
  im_trace *t;
} fx;

static fx open_fx(int zero_is_swapper) {
  fx f = {0};
  assert_int_equal(pj_engine_open(NULL, &f.e), PJ_OK);
  pj_engine_set_mode(f.e, PJ_MODE_INTERP);
  im_options o = {.zero_is_swapper = zero_is_swapper};
  f.t = im_trace_new(f.e->strings, &o);
  assert_non_null(f.t);
  return f;
}

static void install(fx *f) {
  rt_err err = {.offset = -1};
  if (!im_install(f->t, f->e->catalog, f->e->db, &err)) fail_msg("%s", err.msg);
  im_trace_free(f->t);
  f->t = NULL;
}

static void close_fx(fx *f) {
  im_trace_free(f->t);
  pj_engine_close(f->e);
}

static uint32_t S(fx *f, const char *s) { return im_cstr(f->t, s); }

/* §1.16: reserved rows, UpdateThread by (pid, tid), GetOrCreateThread,
 * attach on a later UpdateThread, name priorities, reuse. */
static void test_identity(void **state) {
  fx f = open_fx(0);
  int64_t u2 = im_thread_update(f.t, 2, 1);       /* process 1, main thread 1, then 2 */
  assert_int_equal(u2, 2);
  assert_int_equal(im_thread_update(f.t, 2, 1), 2);
  assert_int_equal(im_thread_update(f.t, 2, 7), 4); /* same tid, other pid: new thread */
  int64_t u5 = im_thread(f.t, 9);                   /* no process yet */
  im_thread_name(f.t, u5, S(&f, "ftrace"), IM_TNAME_FTRACE);
  im_thread_name(f.t, u5, S(&f, "json"), IM_TNAME_OTHER);  /* lower: ignored */
  assert_int_equal(im_thread_update(f.t, 9, 1), u5);       /* attached now */
  im_process_name(f.t, 1, S(&f, "proc"), IM_PNAME_SYSTEM);
  im_process_name(f.t, 1, S(&f, "desc"), IM_PNAME_DESCRIPTOR);
  im_args_int(im_thread_args(f.t, u2), S(&f, "thread_sort_index_hint"), -3);
  assert_int_equal(im_thread(f.t, 0), 6);           /* JSON: tid 0 is a new thread */
  install(&f);
  assert_rows(f.e, "SELECT utid, id, tid, name, upid, is_main_thread, is_idle, machine_id FROM thread",
              "0|0|0|NULL|0|1|1|0\n"
              "1|1|1|NULL|1|1|0|0\n"
              "2|2|2|NULL|1|0|0|0\n"
              "3|3|7|NULL|2|1|0|0\n"
              "4|4|2|NULL|2|0|0|0\n"
              "5|5|9|ftrace|1|0|0|0\n"
              "6|6|0|NULL|NULL|NULL|0|0\n");
  assert_rows(f.e, "SELECT upid, id, pid, name FROM process", "0|0|0|NULL\n1|1|1|proc\n2|2|7|NULL\n");
  assert_rows(f.e,
              "SELECT a.key, a.int_value FROM thread t JOIN args a USING (arg_set_id)",
              "thread_sort_index_hint|-3\n");
  close_fx(&f);
}

/* sched_process_free (trace_processor's EndThread): the ended thread and
 * (main thread) its process stop being found, so reused ids make new
 * rows; im_thread_find creates nothing. */
static void test_thread_end(void **state) {
  fx f = open_fx(1);
  int64_t main_t = im_thread_update(f.t, 20, 20), worker = im_thread_update(f.t, 21, 20);
  assert_int_equal(main_t, 1);   /* process 1 (pid 20): main thread 1, worker 2 */
  assert_int_equal(worker, 2);
  assert_int_equal(im_thread_find(f.t, 99), IM_NONE);
  assert_int_equal(im_rows(f.t, IM_T_THREAD), 3);
  im_thread_end(f.t, im_thread_find(f.t, 21), 500);
  assert_int_equal(im_thread_find(f.t, 21), IM_NONE);
  assert_int_equal(im_thread(f.t, 21), 3);             /* the tid again: a new thread */
  assert_int_equal(im_thread_update(f.t, 21, 20), 3);  /* attached to the live process */
  im_thread_end(f.t, main_t, 600);
  assert_int_equal(im_thread_update(f.t, 20, 20), 4);  /* new process 2 and its main thread */
  install(&f);
  assert_rows(f.e, "SELECT utid, tid, end_ts, upid, is_main_thread FROM thread WHERE utid > 0",
              "1|20|600|1|1\n2|21|500|1|0\n3|21|NULL|1|0\n4|20|NULL|2|1\n");
  assert_rows(f.e, "SELECT upid, pid, end_ts FROM process", "0|0|NULL\n1|20|600\n2|20|NULL\n");
  close_fx(&f);
}

/* §3.9.6: `E` without a tgid from a thread never seen is dropped without
 * creating it; with a known thread it ends its slice. */
static void test_atrace_end_tgid0(void **state) {
  fx f = open_fx(1);
  int64_t rows = im_rows(f.t, IM_T_THREAD);
  im_atrace_marker(f.t, 100, 77, "E", 1);
  im_atrace_marker(f.t, 110, 77, "E|0\n", 4);
  assert_int_equal(im_rows(f.t, IM_T_THREAD), rows);
  assert_int_equal(im_rows(f.t, IM_T_TRACK), 0);
  im_atrace_marker(f.t, 200, 78, "B|5|work", 8);
  im_atrace_marker(f.t, 300, 78, "E", 1);
  install(&f);
  assert_rows(f.e, "SELECT tid FROM thread WHERE utid > 0", "5\n78\n");
  assert_rows(f.e, "SELECT ts, dur, name FROM slice", "200|100|work\n");
  close_fx(&f);
}

static void test_swapper(void **state) {
  fx f = open_fx(1);
  assert_int_equal(im_thread(f.t, 0), 0);
  assert_int_equal(im_process(f.t, 0), 0);
  install(&f);
  assert_rows(f.e, "SELECT utid, tid, name, is_idle FROM thread", "0|0|swapper|1\n");
  close_fx(&f);
}

/* §1.17: nesting, instants stacking at equal ts, ends matching by
 * category and name, misplaced ends, partial overlap, negative duration,
 * topmost slice after it ended. */
static void test_nesting(void **state) {
  fx f = open_fx(0);
  int64_t tr = im_thread_track(f.t, im_thread_update(f.t, 1, 1));
  uint32_t c1 = S(&f, "c1");
  assert_int_equal(im_slice_begin(f.t, tr, 10, c1, S(&f, "a")), 0);
  assert_int_equal(im_slice_begin(f.t, tr, 12, c1, S(&f, "b")), 1);
  assert_int_equal(im_slice_complete(f.t, tr, 13, 2, IM_NULL_STR, S(&f, "x"), NULL), 2);
  assert_int_equal(im_slice_instant(f.t, tr, 15, IM_NULL_STR, S(&f, "i1")), 3); /* x ended at 15 */
  assert_int_equal(im_slice_instant(f.t, tr, 15, IM_NULL_STR, S(&f, "i2")), 4); /* on i1 */
  assert_int_equal(im_slice_top(f.t, tr), 4);
  /* an end with another category does not match b; a NULL name matches */
  assert_int_equal(im_slice_end(f.t, tr, 16, S(&f, "zz"), IM_NULL_STR), IM_NONE);
  assert_int_equal(im_slice_end(f.t, tr, 20, c1, IM_NULL_STR), 1);
  assert_int_equal(im_slice_top(f.t, tr), 0);   /* b ended on top: popped */
  /* partial overlap with a (10..open) is impossible; with a finished one: */
  assert_int_equal(im_slice_complete(f.t, tr, 21, 10, c1, S(&f, "y"), NULL), 5);
  int over = 0;
  assert_int_equal(im_slice_complete(f.t, tr, 25, 10, c1, S(&f, "z"), &over), IM_NONE);
  assert_int_equal(over, 1);
  assert_int_equal(im_slice_complete(f.t, tr, 25, 10, c1, S(&f, "z"), NULL), IM_NONE);
  assert_int_equal(im_slice_complete(f.t, tr, 25, -1, c1, S(&f, "n"), NULL), IM_NONE);
  assert_int_equal(im_slice_end(f.t, tr, 40, c1, S(&f, "a")), 0);
  /* misplaced end: p (finished at 60) below an open child c */
  int64_t p = im_slice_complete(f.t, tr, 50, 10, IM_NULL_STR, S(&f, "p"), NULL);
  int64_t c = im_slice_begin(f.t, tr, 55, IM_NULL_STR, S(&f, "c"));
  assert_int_equal(im_slice_begin(f.t, tr, 70, IM_NULL_STR, S(&f, "d")), c + 1);
  assert_int_equal(p, 6);
  install(&f);
  assert_rows(f.e, "SELECT id, ts, dur, category, name, depth, parent_id, cat, slice_id FROM slice",
              "0|10|30|c1|a|0|NULL|c1|0\n"
              "1|12|8|c1|b|1|0|c1|1\n"
              "2|13|2|NULL|x|2|1|NULL|2\n"
              "3|15|0|NULL|i1|2|1|NULL|3\n"
              "4|15|0|NULL|i2|3|3|NULL|4\n"
              "5|21|10|c1|y|1|0|c1|5\n"
              "6|50|10|NULL|p|0|NULL|NULL|6\n"
              "7|55|5|NULL|c|1|6|NULL|7\n"
              "8|70|-1|NULL|d|0|NULL|NULL|8\n");
  assert_rows(f.e,
              "SELECT name, value FROM stats WHERE name IN ('misplaced_end_event',"
              " 'slice_drop_overlapping_complete_event', 'slice_negative_duration') ORDER BY name",
              "misplaced_end_event|1\nslice_drop_overlapping_complete_event|1\n"
              "slice_negative_duration|1\n");
  assert_rows(f.e, "SELECT count(*) FROM slices", "9\n");
  assert_rows(f.e, "SELECT ts, name FROM instant", "15|i1\n15|i2\n");
  assert_rows(f.e, "SELECT id, name, type, parent_id, utid FROM thread_track",
              "0|NULL|thread_execution|NULL|1\n");
  assert_rows(f.e, "SELECT start_ts, end_ts FROM trace_bounds", "10|70\n");
  /* pipelines read the same tables on the fast path */
  assert_rows(f.e, "FROM slice |> WHERE depth > 1 |> AGGREGATE COUNT(*) AS n", "3\n");
  assert_rows(f.e, "FROM slices |> WHERE cat = 'c1' |> AGGREGATE COUNT(*) AS n", "3\n");
  close_fx(&f);
}

/* §1.10: deduplication, ids = row count, value columns, display values,
 * pending slice args written at commit, next array index. */
static void test_args(void **state) {
  fx f = open_fx(0);
  im_args *a = im_args_new(f.t);
  im_args_int(a, S(&f, "i"), -5);
  im_args_uint(a, S(&f, "u"), UINT64_MAX);
  im_args_real(a, S(&f, "r"), 1.5);
  im_args_string(a, S(&f, "s"), S(&f, "text"));
  im_args_bool(a, S(&f, "b"), 1);
  im_arg p = {.key = S(&f, "p"), .flat_key = S(&f, "p"), .type = IM_V_POINTER, .i = 0xbeef};
  im_args_add(a, &p, 0);
  im_args_int(a, S(&f, "i"), 7);   /* replaces in place */
  assert_int_equal(im_args_commit(f.t, a), 0);
  im_args_int(a, S(&f, "x"), 1);
  assert_int_equal(im_args_commit(f.t, a), 6);
  im_args_int(a, S(&f, "x"), 1);
  assert_int_equal(im_args_commit(f.t, a), 6);    /* the same set again */
  assert_int_equal(im_args_commit(f.t, a), IM_NONE);
  im_arg k = {.key = S(&f, "args.a[0]"), .flat_key = S(&f, "args.a"), .type = IM_V_INT, .i = 1};
  im_args_add(a, &k, 0);
  k.key = S(&f, "args.a[3].b");
  im_args_add(a, &k, 0);
  assert_int_equal(im_args_next_index(a, "args.a", 6), 4);
  assert_int_equal(im_args_next_index(a, "args.b", 6), 0);
  im_args_free(a);
  int64_t tr = im_thread_track(f.t, im_thread_update(f.t, 1, 1));
  int64_t s = im_slice_begin(f.t, tr, 1, IM_NULL_STR, S(&f, "s"));
  im_args_int(im_slice_args(f.t, s), S(&f, "x"), 1);
  install(&f);   /* the pending set is written at the end: the same set as 6 */
  assert_rows(f.e,
              "SELECT id, arg_set_id, flat_key, key, int_value, string_value, real_value, value_type,"
              " display_value FROM args",
              "0|0|i|i|7|NULL|NULL|int|7\n"
              "1|0|u|u|-1|NULL|NULL|uint|18446744073709551615\n"
              "2|0|r|r|NULL|NULL|1.5|real|1.5\n"
              "3|0|s|s|NULL|text|NULL|string|text\n"
              "4|0|b|b|1|NULL|NULL|bool|true\n"
              "5|0|p|p|48879|NULL|NULL|pointer|0xbeef\n"
              "6|6|x|x|1|NULL|NULL|int|1\n"
              "7|7|utid|utid|1|NULL|NULL|int|1\n");
  assert_rows(f.e, "SELECT arg_set_id FROM slice", "6\n");
  close_fx(&f);
}

/* §1.18 cookie mode and overlap mode; §1.5 dims and source args. */
static void test_allocator(void **state) {
  fx f = open_fx(0);
  im_track_spec set;
  im_track_spec_init(&set, "legacy_async_global_slice", IM_EV_SLICE);
  im_track_dim_str(&set, "scope", IM_NULL_STR);
  im_track_dim_str(&set, "name", S(&f, "req"));
  im_args *src = im_args_new(f.t);
  im_args_string(src, S(&f, "source"), S(&f, "chrome"));
  set.source = src;
  im_cookie c1 = {1, 1}, c2 = {1, 2}, c3 = {1, 3};
  int64_t a = im_async_track(f.t, &set, c1, +1, S(&f, "req"));
  int64_t b = im_async_track(f.t, &set, c2, +1, S(&f, "req"));
  assert_int_not_equal(a, b);
  assert_int_equal(im_async_track(f.t, &set, c1, -1, IM_NULL_STR), a);
  assert_int_equal(im_async_track(f.t, &set, c3, +1, IM_NULL_STR), a);  /* a is idle: reused */
  im_args_free(src);
  im_track_spec ov;
  im_track_spec_init(&ov, "thread_overlapping_slice", IM_EV_SLICE);
  im_track_dim_int(&ov, "utid", 1);
  int64_t o1 = im_overlap_track(f.t, &ov, 0, 10, IM_NULL_STR);
  assert_int_equal(im_overlap_track(f.t, &ov, 2, 5, IM_NULL_STR), o1);  /* nests */
  int64_t o2 = im_overlap_track(f.t, &ov, 6, 20, IM_NULL_STR);          /* overlaps [0,10) */
  assert_int_not_equal(o1, o2);
  assert_int_equal(im_overlap_track(f.t, &ov, 10, 12, IM_NULL_STR), o1);
  install(&f);
  assert_rows(f.e, "SELECT id, name, type, track_group_id FROM track",
              "0|req|legacy_async_global_slice|0\n1|req|legacy_async_global_slice|0\n"
              "2|NULL|thread_overlapping_slice|1\n3|NULL|thread_overlapping_slice|1\n");
  assert_rows(f.e,
              "SELECT t.id, a.key, a.display_value FROM track t JOIN args a"
              " ON a.arg_set_id = t.dimension_arg_set_id WHERE t.id = 1 ORDER BY a.id",
              "1|scope|NULL\n1|name|req\n1|track_compressor_idx|1\n");
  assert_rows(f.e,
              "SELECT a.key, a.string_value FROM track t JOIN args a"
              " ON a.arg_set_id = t.source_arg_set_id WHERE t.id = 0",
              "source|chrome\n");
  close_fx(&f);
}

/* §1.19 flows, and deferred counter tracks renumbered at the end. */
static void test_flows_counters(void **state) {
  fx f = open_fx(0);
  int64_t tr = im_thread_track(f.t, im_thread_update(f.t, 1, 1));
  int64_t s0 = im_slice_complete(f.t, tr, 10, 1, IM_NULL_STR, S(&f, "a"), NULL);
  im_flow_begin(f.t, s0, 1, 42);
  im_flow_begin(f.t, s0, 1, 42);   /* duplicate */
  im_flow_end_next(f.t, tr, 1, 42, 42, IM_NONE);
  int64_t s1 = im_slice_complete(f.t, tr, 20, 1, IM_NULL_STR, S(&f, "b"), NULL);
  im_flow_step(f.t, s0, 1, 99, 99, IM_NONE);   /* unknown */
  im_flow_end(f.t, s1, 1, 43, 43, IM_NONE, 1);  /* unknown */
  im_track_spec cs;
  im_track_spec_init(&cs, "json_counter", IM_EV_COUNTER);
  im_track_dim_int(&cs, "upid", 1);
  im_track_dim_str(&cs, "name", S(&f, "mem"));
  cs.name = S(&f, "mem");
  int64_t d = im_track_deferred(f.t, &cs);
  im_counter(f.t, d, 5, 1.5, IM_NONE);
  int64_t cpu = im_cpu_counter_track(f.t, "cpu_frequency", "cpufreq", 3);
  im_counter(f.t, cpu, 6, 1000, IM_NONE);
  im_counter(f.t, d, 7, 2.5, IM_NONE);
  install(&f);
  assert_rows(f.e, "SELECT id, slice_out, slice_in, trace_id FROM flow", "0|0|1|42\n");
  assert_rows(f.e,
              "SELECT name, value FROM stats WHERE name LIKE 'flow%' AND value > 0 ORDER BY name",
              "flow_duplicate_id|1\nflow_end_without_start|1\nflow_step_without_start|1\n");
  assert_rows(f.e, "SELECT id, ts, track_id, value, name FROM counters",
              "0|5|2|1.5|mem\n1|6|1|1000|cpufreq\n2|7|2|2.5|mem\n");
  assert_rows(f.e, "SELECT id, name, type FROM counter_track", "1|cpufreq|cpu_frequency\n2|mem|json_counter\n");
  assert_rows(f.e, "SELECT id, cpu FROM cpu_counter_track", "1|3\n");
  assert_rows(f.e, "SELECT id, ucpu, cpu, cluster_id FROM cpu", "3|3|3|0\n");
  close_fx(&f);
}

/* §3.10: switches, thread_state, wakings, the idle thread, end states. */
static void test_sched(void **state) {
  fx f = open_fx(1);
  assert_string_equal(rt_str_get(f.e->strings, im_task_state_str(f.t, 0x100), NULL), "W");
  assert_string_equal(rt_str_get(f.e->strings, im_task_state_str(f.t, 0x800), NULL), "R+");
  im_set_kernel_version(f.t, 5, 10);
  assert_string_equal(rt_str_get(f.e->strings, im_task_state_str(f.t, 0x100), NULL), "R+");
  assert_string_equal(rt_str_get(f.e->strings, im_task_state_str(f.t, 0x80), NULL), "I");
  assert_string_equal(rt_str_get(f.e->strings, im_task_state_str(f.t, 0x03), NULL), "SD");
  assert_int_equal(im_task_state_str(f.t, 0x200), IM_NULL_STR);
  im_set_kernel_version(f.t, 4, 4);
  assert_string_equal(rt_str_get(f.e->strings, im_task_state_str(f.t, 0x402), NULL), "I");
  assert_int_equal(im_task_state_parse("R+", 2), 0x800);
  assert_int_equal(im_task_state_parse("D|K", 3), 0x82);
  assert_int_equal(im_task_state_parse("Q", 1), -1);
  uint32_t sw = S(&f, "swapper"), a = S(&f, "a"), b = S(&f, "b");
  im_sched_switch(f.t, 0, 100, 0, sw, 120, 0, 10, a, 120);   /* idle → a */
  im_sched_switch(f.t, 0, 200, 10, a, 120, 1, 11, b, 110);   /* a sleeps, b runs */
  im_sched_waking(f.t, 250, im_thread(f.t, 10), im_thread(f.t, 11), 0);
  im_sched_switch(f.t, 0, 300, 11, b, 110, 0, 10, a, 120);   /* b preempted, a runs */
  im_sched_switch(f.t, 0, 400, 99, b, 110, 0, 0, sw, 120);   /* mismatched prev */
  install(&f);
  assert_rows(f.e, "SELECT id, ts, dur, cpu, utid, end_state, priority, ts_end FROM sched",
              "0|100|100|0|1|S|120|200\n"
              "1|200|100|0|2|R|110|300\n"
              "2|300|-1|0|1|NULL|120|299\n"
              "3|400|-1|0|0|NULL|120|399\n");
  assert_rows(f.e, "SELECT count(*) FROM sched_slice", "4\n");
  assert_rows(f.e, "SELECT ts, dur, cpu, utid, state, waker_utid, waker_id, irq_context FROM thread_state",
              "100|100|0|1|Running|NULL|NULL|NULL\n"
              "200|50|NULL|1|S|NULL|NULL|NULL\n"
              "200|100|0|2|Running|NULL|NULL|NULL\n"
              "250|50|NULL|1|R|2|2|0\n"
              "300|-1|NULL|2|R|NULL|NULL|NULL\n"
              "300|-1|0|1|Running|NULL|NULL|NULL\n"
              "400|-1|NULL|3|R|NULL|NULL|NULL\n");
  assert_rows(f.e, "SELECT name, value FROM stats WHERE name = 'mismatched_sched_switch_tids'",
              "mismatched_sched_switch_tids|1\n");
  assert_rows(f.e, "SELECT count(*), min(name), max(utid) FROM ftrace_event", "4|sched_switch|3\n");
  assert_rows(f.e, "SELECT count(*) FROM raw", "4\n");
  assert_rows(f.e, "SELECT utid, tid, name FROM thread",
              "0|0|swapper\n1|10|a\n2|11|b\n3|99|b\n");
  close_fx(&f);
}

/* §1.11 / §1.12: every non-indexed stat has a row; indexed ones only when
 * counted; metadata single and multi; trace_file and uuid. */
static void test_stats_metadata(void **state) {
  fx f = open_fx(0);
  im_stat_add_indexed(f.t, IM_STAT_FTRACE_CPU_HAS_DATA_LOSS, 3, 2);
  im_meta_int(f.t, "x", 1);
  im_meta_int(f.t, "x", 2);
  im_meta_int_multi(f.t, "m", 1);
  im_meta_int_multi(f.t, "m", 2);
  im_trace_file(f.t, "t.json.gz", 100, "json", 1, 1000, "ab", 2);
  install(&f);
  /* every non-indexed stat of stats.def has a row (the indexed one is set) */
  char want[16];
  snprintf(want, sizeof want, "%d\n", IM_NSTATS - 1);
  assert_rows(f.e, "SELECT count(*) FROM stats WHERE idx IS NULL AND value = 0", want);
  assert_rows(f.e, "SELECT name, idx, value, severity, source FROM stats WHERE idx IS NOT NULL",
              "ftrace_cpu_has_data_loss|3|2|data_loss|trace\n");
  assert_rows(f.e, "SELECT name, key_type, int_value, str_value FROM metadata ORDER BY id",
              "x|single|2|NULL\nm|multi|1|NULL\nm|multi|2|NULL\n"
              "trace_type|single|NULL|json\ntrace_size_bytes|single|1000|NULL\n"
              "trace_uuid|single|NULL|00000000-0000-0000-089c-4407b545986a\n");
  assert_rows(f.e, "SELECT id, parent_id, name, size, trace_type, is_container FROM trace_file",
              "0|NULL|t.json.gz|100|gzip|1\n1|0|NULL|1000|json|0\n");
  assert_rows(f.e, "SELECT id, raw_id FROM machine", "0|0\n");
  assert_rows(f.e, "SELECT start_ts, end_ts FROM trace_bounds", "0|0\n");
  close_fx(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_identity),       cmocka_unit_test(test_swapper),
      cmocka_unit_test(test_thread_end),     cmocka_unit_test(test_atrace_end_tgid0),
      cmocka_unit_test(test_nesting),        cmocka_unit_test(test_args),
      cmocka_unit_test(test_allocator),      cmocka_unit_test(test_flows_counters),
      cmocka_unit_test(test_sched),          cmocka_unit_test(test_stats_metadata),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
