/*
 * test_trace_json.c — the Chrome JSON importer (TRACES.md §2, import/json*.c)
 * through pj_engine_load_trace: one small trace written here for each group
 * of rules, with the expected rows worked out from the spec, then damaged
 * and wrong inputs, and the two real traces of ../shared/data/traces,
 * whose expected numbers come from trace_expect.py (Python's json module
 * over the raw events, not this importer).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "trace_rows.h"

/* Writes text to a new temporary file (gzip-compressed when gz; cut to
 * `cut` compressed bytes when cut > 0). */
static void write_trace(char *path, const char *json, size_t n, int gz, long cut) {
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  if (gz) {
    gzFile f = gzdopen(fd, "wb");
    assert_non_null(f);
    assert_int_equal(gzwrite(f, json, (unsigned)n), (int)n);
    assert_int_equal(gzclose(f), Z_OK);
    if (cut > 0) assert_int_equal(truncate(path, cut), 0);
  } else {
    FILE *f = fdopen(fd, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(json, 1, n, f), n);
    fclose(f);
  }
}

static pj_engine *open_engine(void) {
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  pj_engine_set_mode(e, PJ_MODE_INTERP);
  return e;
}

/* Imports json into a new engine; info may be NULL. */
static pj_engine *import_gz(const char *json, int gz, pj_trace_info *info) {
  char path[] = "/tmp/pj_test_trace_XXXXXX";
  write_trace(path, json, strlen(json), gz, 0);
  pj_engine *e = open_engine();
  pj_trace_info local;
  if (pj_engine_load_trace(e, path, info ? info : &local) != PJ_OK)
    fail_msg("import failed: %s", pj_engine_errmsg(e));
  unlink(path);
  return e;
}
static pj_engine *import(const char *json) { return import_gz(json, 0, NULL); }

/* The load fails; returns the message (static buffer). */
static const char *import_error(const char *json) {
  static char msg[512];
  char path[] = "/tmp/pj_test_trace_XXXXXX";
  write_trace(path, json, strlen(json), 0, 0);
  pj_engine *e = open_engine();
  assert_int_equal(pj_engine_load_trace(e, path, NULL), PJ_ERROR);
  snprintf(msg, sizeof msg, "%s", pj_engine_errmsg(e));
  pj_engine_close(e);
  unlink(path);
  return msg;
}

#define STATS "SELECT name, value FROM stats WHERE value > 0 ORDER BY name"

/* ---- §2.1, §2.2, §2.4, §2.8: top level, fields, identity, metadata ------------------ */

static const char *basic_trace =
    "{\"displayTimeUnit\": \"ns\", \"metadata\": {\"x\": [\"]}\\\"{\", {\"y\": []}], \"b\": true,"
    "  \"i\": 3, \"d\": 2.0, \"f\": 1.5, \"s\": \"str\", \"n\": null},\n"
    " \"other\": {\"traceEvents\": 1},\n"
    " \"traceEvents\": [\n"
    "  {\"ph\": \"M\", \"pid\": 1, \"tid\": 1, \"name\": \"process_name\", \"args\": {\"name\": \"Browser\"}},\n"
    "  {\"ph\": \"M\", \"pid\": 1, \"tid\": 2, \"name\": \"thread_name\", \"args\": {\"name\": \"IO\"}},\n"
    "  {\"ph\": \"B\", \"pid\": 1, \"tid\": 1, \"ts\": 10, \"name\": \"a\", \"cat\": \"c1\", \"tts\": 3},\n"
    "  {\"ph\": \"B\", \"pid\": 1, \"tid\": 1, \"ts\": 12, \"name\": \"b\", \"cat\": \"c1\"},\n"
    "  {\"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": 13, \"dur\": 2.5, \"name\": \"x\", \"cat\": \"\","
    "   \"tts\": 4, \"tdur\": 1},\n"
    "  {\"ph\": \"E\", \"pid\": 1, \"tid\": 1, \"ts\": 20},\n"
    "  {\"ph\": \"i\", \"pid\": 1, \"tid\": 2, \"ts\": 21, \"name\": \"inst\", \"s\": \"t\"},\n"
    "  {\"ph\": \"E\", \"pid\": 1, \"tid\": 1, \"ts\": 30.0005, \"tts\": 9},\n"
    "  {\"ph\": \"B\", \"pid\": 1, \"tid\": 2, \"ts\": 40}\n"
    " ]}\n";

static void check_basic(pj_engine *e) {
  assert_rows(e, "SELECT * FROM slice",
              "0|10000|20001|0|c1|a|0|NULL|NULL|3000|6000|NULL|NULL|c1|0\n"
              "1|12000|8000|0|c1|b|1|0|NULL|NULL|NULL|NULL|NULL|c1|1\n"
              "2|13000|2500|0|NULL|x|2|1|NULL|4000|1000|NULL|NULL|NULL|2\n"
              "3|21000|0|1|NULL|inst|0|NULL|NULL|NULL|NULL|NULL|NULL|NULL|3\n"
              "4|40000|-1|1|NULL|[No name]|0|NULL|NULL|NULL|NULL|NULL|NULL|NULL|4\n");
  /* the reserved rows first (§1.16.1), then process before its main thread */
  assert_rows(e, "SELECT utid, id, tid, name, upid, is_main_thread, is_idle FROM thread",
              "0|0|0|NULL|0|1|1\n1|1|1|NULL|1|1|0\n2|2|2|IO|1|0|0\n");
  assert_rows(e, "SELECT upid, id, pid, name, cmdline FROM process",
              "0|0|0|NULL|NULL\n1|1|1|Browser|NULL\n");
  assert_rows(e, "SELECT id, name, type, utid FROM thread_track", "0|NULL|thread_execution|1\n1|NULL|thread_execution|2\n");
  assert_rows(e,
              "SELECT name, key_type, int_value, str_value FROM metadata"
              " WHERE name LIKE 'json_metadata.%' OR name = 'trace_type' OR name = 'trace_time_clock_id'",
              "trace_type|single|NULL|json\n"
              "trace_time_clock_id|single|11|NULL\n"
              "json_metadata.x|single|NULL|[\"]}\\\"{\", {\"y\": []}]\n"
              "json_metadata.b|single|1|NULL\njson_metadata.i|single|3|NULL\n"
              "json_metadata.d|single|2|NULL\njson_metadata.f|single|NULL|1.5\n"
              "json_metadata.s|single|NULL|str\n");
  assert_rows(e, STATS, "json_display_time_unit|1\n");
  assert_rows(e, "SELECT start_ts, end_ts FROM trace_bounds", "10000|40000\n");
  /* a trace_processor-style join runs unchanged */
  assert_rows(e,
              "SELECT s.name, t.name, p.name FROM slice s JOIN thread_track tt ON s.track_id = tt.id"
              " JOIN thread t USING (utid) JOIN process p USING (upid) WHERE s.depth = 0 ORDER BY s.ts",
              "a|NULL|Browser\ninst|IO|Browser\n[No name]|IO|Browser\n");
  assert_rows(e, "FROM slice |> WHERE depth > 0 |> AGGREGATE COUNT(*) AS n", "2\n");
  assert_rows(e, "FROM slice |> TREE ACCUMULATE UP COUNT(*) AS n |> ORDER BY id |> SELECT id, n",
              "0|3\n1|2\n2|1\n3|1\n4|1\n");
}

static void test_basic(void **state) {
  pj_trace_info info;
  pj_engine *e = import_gz(basic_trace, 0, &info);
  assert_string_equal(info.format, "json");
  assert_int_equal(info.gzip, 0);
  assert_int_equal(info.events, 9);
  assert_int_equal(info.slices, 5);
  assert_int_equal(info.damaged_at, -1);
  check_basic(e);
  pj_engine_close(e);
  e = import_gz(basic_trace, 1, &info);   /* the same through gzip */
  assert_int_equal(info.gzip, 1);
  check_basic(e);
  assert_rows(e, "SELECT id, parent_id, trace_type, is_container FROM trace_file",
              "0|NULL|gzip|1\n1|0|json|0\n");
  pj_engine_close(e);
}

/* §2.1.2, §2.1.4, §2.2, §2.3, §2.5 X: sorting, string and bad fields,
 * X without dur / negative dur / partial overlap, negative ts, a bare
 * array cut inside its last event. */
static const char *sort_trace =
    "[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":1,\"name\":\"first\"},\n"
    "{\"ph\":\"B\",\"pid\":1,\"tid\":1,\"ts\":10,\"name\":\"b\"},\n"
    "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":2,\"name\":\"short\"},\n"
    "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":5,\"name\":\"long\"},\n"
    "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":10},\n"
    "{\"ph\":\"i\",\"pid\":1,\"tid\":1,\"ts\":3,\"name\":\"early\"},\n"
    "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":-1,\"dur\":1,\"name\":\"neg\"},\n"
    "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":20,\"name\":\"nodur\"},\n"
    "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":-3,\"name\":\"negdur\"},\n"
    "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":30,\"dur\":10,\"name\":\"p\"},\n"
    "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":35,\"dur\":10,\"name\":\"spill\"},\n"
    "{\"ph\":\"X\",\"pid\":\"7\",\"tid\":\"worker\",\"ts\":\"50\",\"dur\":\"1.5\",\"name\":\"strs\"},\n"
    "{\"ph\":\"X\",\"pid\":-4,\"ts\":60,\"dur\":1,\"name\":\"negpid\"},\n"
    "{},\n"
    "{\"pid\":1,\"ts\":1},\n"
    "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":\"bad\",\"dur\":1},\n"
    "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":\"bad\"},\n"
    "{\"ph\":\"B\",\"pid\":1,\"tid\":1,\"ts\":70,\"name\":\"cut\"";

static void test_sort_and_fields(void **state) {
  pj_trace_info info;
  pj_engine *e = import_gz(sort_trace, 0, &info);
  /* At ts 10 (after the first violation): E (matches nothing), X by
   * decreasing dur, then B; b is cut to short's end when p begins. */
  assert_rows(e, "SELECT id, ts, dur, track_id, name, depth, parent_id FROM slice",
              "0|3000|0|0|early|0|NULL\n"
              "1|5000|1000|0|first|0|NULL\n"
              "2|10000|5000|0|long|0|NULL\n"
              "3|10000|2000|0|short|1|2\n"
              "4|10000|2000|0|b|2|3\n"
              "5|30000|10000|0|p|0|NULL\n"
              "6|35000|10000|1|spill|0|NULL\n"
              "7|50000|1500|2|strs|0|NULL\n"
              "8|60000|1000|3|negpid|0|NULL\n");
  assert_rows(e, "SELECT id, type, track_group_id FROM track",
              "0|thread_execution|NULL\n1|thread_overlapping_slice|0\n"
              "2|thread_execution|NULL\n3|thread_execution|NULL\n");
  /* string pid/tid: numbers of their own, named after the string;
   * a negative pid is 0, and tid 0 stays 0 when pid is 0 */
  assert_rows(e, "SELECT utid, tid > 4294967295, name, upid FROM thread",
              "0|0|NULL|0\n1|0|NULL|1\n2|1|NULL|2\n3|1|worker|2\n4|0|NULL|3\n");
  assert_rows(e, "SELECT upid, pid > 4294967295, name FROM process", "0|0|NULL\n1|0|NULL\n2|1|7\n3|0|NULL\n");
  assert_rows(e, STATS,
              "json_parser_failure|1\njson_tokenizer_failure|3\nmisplaced_end_event|1\n"
              "slice_negative_duration|1\nslice_spill_overlapping_complete_event|1\n"
              "trace_sorter_negative_timestamp_dropped|1\n");
  assert_int_equal(info.damaged_at, -1);   /* a bare array may end anywhere */
  pj_engine_close(e);
}

/* §2.6 args, §2.5 i/I scopes, C, b/e/n, s/t/f and v2 flows, M sort
 * indexes, T. */
static const char *more_trace =
    "{\"traceEvents\":[\n"
    "{\"ph\":\"B\",\"pid\":1,\"tid\":1,\"ts\":1,\"name\":\"s\",\"args\":{\"a\":{\"b\":[1,{\"c\":2.5}]},"
    "\"n\":null,\"t\":true,\"e\":{},\"x\":\"old\",\"arr\":[1]}},\n"
    "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":9,\"args\":{\"x\":\"new\",\"arr\":[2,3]}},\n"
    "{\"ph\":\"i\",\"pid\":1,\"tid\":1,\"ts\":2,\"name\":\"g\",\"s\":\"g\"},\n"
    "{\"ph\":\"I\",\"pid\":1,\"ts\":3,\"name\":\"p\",\"s\":\"p\"},\n"
    "{\"ph\":\"i\",\"pid\":1,\"ts\":4,\"name\":\"notid\"},\n"
    "{\"ph\":\"C\",\"pid\":1,\"tid\":1,\"ts\":5,\"name\":\"mem\",\"args\":{\"heap\":10,\"rss\":\"2.5\",\"bad\":\"x\"}},\n"
    "{\"ph\":\"C\",\"pid\":1,\"tid\":1,\"ts\":6,\"name\":\"ctr\",\"id\":\"7\",\"args\":{\"v\":1}},\n"
    "{\"ph\":\"C\",\"pid\":1,\"tid\":1,\"ts\":7,\"name\":\"empty\",\"args\":{}},\n"
    "{\"ph\":\"b\",\"pid\":1,\"tid\":1,\"ts\":10,\"name\":\"req\",\"cat\":\"net\",\"id\":\"0x1\"},\n"
    "{\"ph\":\"b\",\"pid\":1,\"tid\":1,\"ts\":11,\"name\":\"req\",\"cat\":\"net\",\"id\":\"0x2\"},\n"
    "{\"ph\":\"e\",\"pid\":1,\"tid\":1,\"ts\":12,\"name\":\"req\",\"cat\":\"net\",\"id\":\"0x1\",\"args\":{\"r\":1}},\n"
    "{\"ph\":\"n\",\"pid\":1,\"tid\":1,\"ts\":13,\"name\":\"mark\",\"cat\":\"net\",\"id2\":{\"local\":5}},\n"
    "{\"ph\":\"b\",\"pid\":1,\"tid\":1,\"ts\":14,\"name\":\"req\",\"cat\":\"net\"},\n"
    "{\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":20,\"dur\":5,\"name\":\"src\",\"bind_id\":\"0xab\",\"flow_out\":true},\n"
    "{\"ph\":\"X\",\"pid\":1,\"tid\":3,\"ts\":30,\"dur\":5,\"name\":\"dst\",\"bind_id\":171,\"flow_in\":true},\n"
    "{\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":40,\"dur\":5,\"name\":\"v1a\"},\n"
    "{\"ph\":\"s\",\"pid\":1,\"tid\":2,\"ts\":41,\"name\":\"f\",\"cat\":\"c\",\"id\":\"0x10\"},\n"
    "{\"ph\":\"f\",\"pid\":1,\"tid\":3,\"ts\":50,\"name\":\"f\",\"cat\":\"c\",\"id\":16},\n"
    "{\"ph\":\"X\",\"pid\":1,\"tid\":3,\"ts\":51,\"dur\":1,\"name\":\"v1b\"},\n"
    "{\"ph\":\"M\",\"pid\":1,\"tid\":1,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":-2}},\n"
    "{\"ph\":\"M\",\"pid\":1,\"tid\":2,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":1e300}},\n"
    "{\"ph\":\"M\",\"pid\":1,\"tid\":1,\"name\":\"thread_name\",\"args\":{\"name\":\"\"}},\n"
    "{\"ph\":\"T\",\"pid\":1,\"tid\":4,\"ts\":60,\"dur\":5,\"name\":\"Running\",\"args\":{\"cpu\":2}},\n"
    "{\"ph\":\"T\",\"pid\":1,\"tid\":4,\"ts\":65,\"dur\":3,\"name\":\"S\",\"args\":{\"io_wait\":1,\"blocked_function\":\"f\"}},\n"
    "{\"ph\":\"T\",\"pid\":1,\"tid\":4,\"ts\":70,\"name\":\"R\"}\n"
    "]}";

static void test_phases(void **state) {
  pj_engine *e = import(more_trace);
  assert_rows(e, "SELECT id, ts, dur, track_id, category, name, depth FROM slice",
              "0|1000|8000|0|NULL|s|0\n1|2000|0|1|NULL|g|0\n2|3000|0|2|NULL|p|0\n"
              "3|10000|2000|3|net|req|0\n4|11000|-1|4|net|req|0\n5|13000|0|5|net|mark|0\n"
              "6|20000|5000|6|NULL|src|0\n7|30000|5000|7|NULL|dst|0\n"
              "8|40000|5000|6|NULL|v1a|0\n9|51000|1000|7|NULL|v1b|0\n");
  /* §2.6: B and E args in one set, E's x replaces B's, array indexes go on */
  assert_rows(e,
              "SELECT a.flat_key, a.key, a.int_value, a.string_value, a.real_value, a.value_type,"
              " a.display_value FROM slice s JOIN args a USING (arg_set_id) WHERE s.id = 0 ORDER BY a.id",
              "args.a.b|args.a.b[0]|1|NULL|NULL|int|1\n"
              "args.a.b.c|args.a.b[1].c|NULL|NULL|2.5|real|2.5\n"
              "args.t|args.t|1|NULL|NULL|bool|true\n"
              "args.x|args.x|NULL|new|NULL|string|new\n"
              "args.arr|args.arr[0]|1|NULL|NULL|int|1\n"
              "args.arr|args.arr[1]|2|NULL|NULL|int|2\n"
              "args.arr|args.arr[2]|3|NULL|NULL|int|3\n");
  assert_rows(e, "SELECT a.key, a.int_value FROM slice s JOIN args a USING (arg_set_id) WHERE s.id = 3",
              "args.r|1\n");
  /* tracks: counter tracks come last, in sample order */
  assert_rows(e, "SELECT id, name, type, track_group_id FROM track",
              "0|NULL|thread_execution|NULL\n1|NULL|legacy_chrome_global_instants|NULL\n"
              "2|NULL|chrome_process_instant|NULL\n3|req|legacy_async_global_slice|0\n"
              "4|req|legacy_async_global_slice|0\n5|mark|legacy_async_process_slice|1\n"
              "6|NULL|thread_execution|NULL\n7|NULL|thread_execution|NULL\n"
              "8|mem heap|json_counter|NULL\n9|mem rss|json_counter|NULL\n"
              "10|ctr id: 7 v|json_counter|NULL\n");
  assert_rows(e,
              "SELECT t.id, a.key, a.display_value FROM track t JOIN args a"
              " ON a.arg_set_id = t.dimension_arg_set_id WHERE t.id IN (4, 5, 8) ORDER BY a.id, t.id",
              "4|scope|NULL\n4|name|req\n4|track_compressor_idx|1\n"
              "5|upid|1\n5|scope|NULL\n5|name|mark\n5|track_compressor_idx|0\n"
              "8|upid|1\n8|name|mem heap\n");
  assert_rows(e,
              "SELECT t.id, a.key, a.value_type, a.display_value FROM track t JOIN args a"
              " ON a.arg_set_id = t.source_arg_set_id WHERE t.id IN (1, 5) ORDER BY t.id, a.id",
              "1|source|string|chrome\n"
              "5|source|string|chrome\n5|trace_id_is_process_scoped|bool|true\n"
              "5|upid|uint|1\n5|source_scope|string|NULL\n");
  assert_rows(e, "SELECT id, ts, track_id, value, name FROM counters",
              "0|5000|8|10|mem heap\n1|5000|9|2.5|mem rss\n2|6000|10|1|ctr id: 7 v\n");
  assert_rows(e, "SELECT DISTINCT a.key, a.value_type, a.int_value FROM counter c JOIN args a USING (arg_set_id)",
              "utid|uint|1\n");
  assert_rows(e, "SELECT id, slice_out, slice_in, trace_id FROM flow", "0|6|7|171\n1|8|9|0\n");
  assert_rows(e, "SELECT a.key, a.string_value FROM flow f JOIN args a USING (arg_set_id) ORDER BY a.id",
              "name|f\ncat|c\n");
  assert_rows(e,
              "SELECT a.key, a.int_value FROM process p JOIN args a USING (arg_set_id)"
              " UNION ALL SELECT a.key, a.int_value FROM thread t JOIN args a USING (arg_set_id)",
              "process_sort_index_hint|-2\nthread_sort_index_hint|9223372036854775807\n");
  assert_rows(e, "SELECT ts, dur, cpu, utid, state, io_wait, blocked_function FROM thread_state",
              "60000|5000|2|4|Running|NULL|NULL\n65000|3000|NULL|4|S|1|f\n");
  assert_rows(e, "SELECT ts, dur, cpu, utid, end_state, priority FROM sched", "60000|5000|2|4|NULL|0\n");
  assert_rows(e, "SELECT id, cpu FROM cpu", "2|2\n");
  /* instant without tid, C bad member and empty args, b without cookie,
   * empty thread name, T without dur */
  assert_rows(e, STATS, "json_parser_failure|6\n");
  assert_rows(e, "SELECT ts, name FROM instant", "2000|g\n3000|p\n13000|mark\n");
  pj_engine_close(e);
}

/* §2.7 systemTraceEvents text: switches, wakings, cpu_frequency, atrace
 * markers, merged with the JSON events by ts; §2.7 Fuchsia switches. */
static void test_system_events(void **state) {
  pj_engine *e = import(
      "{\"traceEvents\":[{\"ph\":\"X\",\"pid\":40,\"tid\":42,\"ts\":100000001.5,\"dur\":1,\"name\":\"json\"}],"
      "\"systemTraceEvents\":\"# tracer: nop\\n"
      "          <idle>-0     [000] d..3  100.000001: sched_switch: prev_comm=swapper/0 prev_pid=0"
      " prev_prio=120 prev_state=R ==> next_comm=my-task next_pid=42 next_prio=110\\n"
      "     my-task-42    ( 40) [000] d..3  100.000002: sched_switch: prev_comm=my-task prev_pid=42"
      " prev_prio=110 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\\n"
      "          <idle>-0     [001] dN.4  100.000003: sched_waking: comm=my-task pid=42 prio=110 target_cpu=000\\n"
      "     my-task-42    ( 40) [001] ...1  100.000004: tracing_mark_write: B|40|work\\n"
      "     my-task-42    ( 40) [001] ...1  100.000005: tracing_mark_write: C|40|queue|7\\n"
      "     my-task-42    ( 40) [001] ...1  100.000006: tracing_mark_write: E|40\\n"
      "          <idle>-0     [002] d..2  100.000007: cpu_frequency: state=1200000 cpu_id=2\\n"
      "this line does not match\\n"
      "          <idle>-0     [000] d..3  99999999999999999999.5: sched_switch: prev_pid=0\\n\"}");
  assert_rows(e, "SELECT utid, tid, name, upid FROM thread",
              "0|0|NULL|0\n1|0|<idle>|NULL\n2|42|my-task|1\n3|40|NULL|1\n");
  assert_rows(e, "SELECT id, ts, dur, cpu, utid, end_state, priority FROM sched",
              "0|100000001000|1000|0|2|S|110\n1|100000002000|-1|0|1|NULL|120\n");
  assert_rows(e, "SELECT ts, dur, utid, state, cpu, waker_utid FROM thread_state",
              "100000001000|1000|1|R|NULL|NULL\n100000001000|1000|2|Running|0|NULL\n"
              "100000002000|1000|2|S|NULL|NULL\n100000002000|-1|1|Running|0|NULL\n"
              "100000003000|-1|2|R|NULL|1\n");
  assert_rows(e, "SELECT ts, dur, name, depth FROM slice",
              "100000001500|1000|json|0\n100000004000|2000|work|0\n");
  assert_rows(e, "SELECT ts, value, name FROM counters",
              "100000005000|7|queue\n100000007000|1.2e+06|cpufreq\n");
  assert_rows(e, "SELECT id, cpu FROM cpu", "0|0\n1|1\n2|2\n");
  assert_rows(e, STATS, "systrace_parse_failure|2\n");
  assert_rows(e, "SELECT count(*), min(name) FROM ftrace_event", "2|sched_switch\n");
  pj_engine_close(e);

  e = import("{\"traceEvents\":[{\"ph\":\"B\",\"pid\":5,\"tid\":6,\"ts\":1,\"name\":\"x\"}],"
             "\"systemTraceEvents\":{\"type\":\"fuchsia\",\"events\":["
             "{\"ph\":\"p\",\"pid\":5,\"name\":\"proc5\"},{\"ph\":\"t\",\"pid\":5,\"tid\":6,\"name\":\"thr6\"},"
             "{\"ph\":\"k\",\"ts\":2,\"cpu\":1,\"out\":{\"pid\":0,\"tid\":0,\"state\":0},\"in\":{\"pid\":5,\"tid\":6}},"
             "{\"ph\":\"k\",\"ts\":3,\"cpu\":1,\"out\":{\"pid\":5,\"tid\":6,\"state\":3},\"in\":{\"pid\":0,\"tid\":0}},"
             "{\"ph\":\"k\",\"ts\":1,\"cpu\":0,\"out\":{\"pid\":0,\"tid\":0,\"state\":0},\"in\":{\"pid\":5,\"tid\":7}}]}}");
  assert_rows(e, "SELECT utid, tid, name, upid FROM thread",
              "0|0|NULL|0\n1|5|NULL|1\n2|6|thr6|1\n3|0|NULL|2\n4|7|NULL|1\n");
  assert_rows(e, "SELECT upid, pid, name FROM process", "0|0|NULL\n1|5|proc5\n2|0|NULL\n");
  assert_rows(e, "SELECT id, ts, dur, cpu, utid, end_state FROM sched",
              "0|1000|-1|0|4|NULL\n1|2000|1000|1|2|S\n2|3000|-1|1|3|NULL\n");
  pj_engine_close(e);
}

/* §2.7 / §3.9.6 atrace special cases: lmkd's `lmk,pid,reason,adj` slices
 * (oom_score_adj counter and mem.lmk instant of the killed process),
 * kill_one_process counters (mem.lmk unless 0), ScreenState and
 * battery_stats.* as global counters of their own. */
static void test_atrace_lmk(void **state) {
  pj_engine *e = import(
      "{\"traceEvents\":[],\"systemTraceEvents\":\""
      "     lmkd-40    ( 40) [000] ...1  100.000001: tracing_mark_write: B|40|lmk,77,3,-900,low\\n"
      "     lmkd-40    ( 40) [000] ...1  100.000002: tracing_mark_write: E|40\\n"
      "     lmkd-40    ( 40) [000] ...1  100.000003: tracing_mark_write: B|40|lmk,78,x\\n"
      "     lmkd-40    ( 40) [000] ...1  100.000004: tracing_mark_write: E|40\\n"
      "     lmkd-40    ( 40) [000] ...1  100.000005: tracing_mark_write: C|40|kill_one_process|88\\n"
      "     lmkd-40    ( 40) [000] ...1  100.000006: tracing_mark_write: C|40|kill_one_process|0\\n"
      "     lmkd-40    ( 40) [000] ...1  100.000007: tracing_mark_write: C|40|ScreenState|2\\n"
      "     lmkd-40    ( 40) [000] ...1  100.000008: tracing_mark_write: C|40|battery_stats.audio|1\\n"
      "\"}");
  assert_rows(e,
              "SELECT s.ts, s.dur, s.name, t.type, t.name, p.pid FROM slice s JOIN track t ON s.track_id = t.id"
              " LEFT JOIN process_track pt ON pt.id = t.id LEFT JOIN process p ON p.upid ="
              " (SELECT upid FROM __intrinsic_track i WHERE i.id = t.id) ORDER BY s.id",
              "100000001000|1000|lmk,77,3,-900,low|thread_execution|NULL|NULL\n"
              "100000001000|0|mem.lmk|android_lmk|LMK|77\n"
              "100000003000|1000|lmk,78,x|thread_execution|NULL|NULL\n"
              "100000005000|0|mem.lmk|android_lmk|LMK|88\n");
  assert_rows(e,
              "SELECT c.ts, c.value, t.type, t.name, p.pid FROM counter c JOIN counter_track t ON"
              " c.track_id = t.id LEFT JOIN process p ON p.upid ="
              " (SELECT upid FROM __intrinsic_track i WHERE i.id = t.id) ORDER BY c.id",
              "100000001000|-900|oom_score_adj|oom_score_adj|77\n"
              "100000005000|88|atrace_counter|kill_one_process|40\n"
              "100000006000|0|atrace_counter|kill_one_process|40\n"
              "100000007000|2|screen_state|ScreenState|NULL\n"
              "100000008000|1|battery_stats|battery_stats.audio|NULL\n");
  assert_rows(e, STATS, "");
  pj_engine_close(e);
}

/* ---- damage and bad input ---------------------------------------------------------- */

static void test_damage(void **state) {
  /* a syntax error inside traceEvents: what came before is imported */
  const char *bad = "{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"name\":\"ok\"},,"
                    "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":1,\"name\":\"lost\"}]}";
  pj_trace_info info;
  pj_engine *e = import_gz(bad, 0, &info);
  assert_rows(e, "SELECT name FROM slice", "ok\n");
  assert_int_equal(info.damaged_at, 70);
  assert_non_null(strstr(info.warning, "two commas"));
  assert_non_null(strstr(info.warning, "at byte 70"));
  assert_rows(e, "SELECT value FROM stats WHERE name = 'trace_truncated'", "1\n");
  pj_engine_close(e);
  /* the object form cut inside traceEvents */
  const char *cut = "{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,"
                    "\"name\":\"ok\"},{\"ph\":\"X\",\"pid\":1,\"ti";
  e = import_gz(cut, 0, &info);
  assert_rows(e, "SELECT name FROM slice", "ok\n");
  assert_int_equal(info.damaged_at, (int64_t)strlen(cut));   /* where the file ends */
  assert_non_null(strstr(info.warning, "ends inside"));
  pj_engine_close(e);
  /* invalid escape and surrogate escapes are syntax errors */
  e = import_gz("[{\"ph\":\"i\",\"pid\":1,\"tid\":1,\"ts\":1,\"name\":\"a\\u00e9\"},"
                "{\"ph\":\"i\",\"pid\":1,\"tid\":1,\"ts\":2,\"name\":\"\\ud800\"}]",
                0, &info);
  assert_rows(e, "SELECT name FROM slice", "a\xc3\xa9\n");
  assert_non_null(strstr(info.warning, "surrogate"));
  pj_engine_close(e);
  /* a gzip file cut short: the part that decompresses is imported */
  text big = {0};
  text_add(&big, "[");
  for (int i = 0; i < 20000; i++) {
    char ev[160];
    snprintf(ev, sizeof ev, "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":1,\"name\":\"s%d\",\"args\":{\"i\":%d}},\n",
             i * 2, i % 977, i);
    text_add(&big, ev);
  }
  text_add(&big, "{}]");
  char path[] = "/tmp/pj_test_trace_XXXXXX";
  write_trace(path, big.s, big.n, 1, 40000);
  e = open_engine();
  assert_int_equal(pj_engine_load_trace(e, path, &info), PJ_OK);
  assert_true(info.damaged_at > 0);
  assert_true(info.slices > 1000 && info.slices < 20000);
  assert_non_null(strstr(info.warning, "gzip"));
  pj_engine_close(e);
  unlink(path);
  free(big.s);
}

static void test_errors(void **state) {
  assert_non_null(strstr(import_error("{\"traceEvents\": 5}"), "traceEvents is not an array"));
  assert_non_null(strstr(import_error("{\"systemTraceEvents\": 5, \"traceEvents\": []}"),
                         "systemTraceEvents"));
  assert_non_null(strstr(import_error("[]"), "is not a trace"));
  assert_non_null(strstr(import_error("SELECT 1;"), "is not a trace"));
  assert_non_null(strstr(import_error(""), "is not a trace"));
  pj_engine *e = open_engine();
  assert_int_equal(pj_engine_load_trace(e, "/nonexistent/trace.json", NULL), PJ_ERROR);
  assert_non_null(strstr(pj_engine_errmsg(e), "cannot open"));
  /* a failed load leaves the previous trace in place */
  pj_engine_close(e);
  e = import(basic_trace);
  char path[] = "/tmp/pj_test_trace_XXXXXX";
  write_trace(path, "{\"traceEvents\": 5}", 18, 0, 0);
  assert_int_equal(pj_engine_load_trace(e, path, NULL), PJ_ERROR);
  unlink(path);
  assert_rows(e, "SELECT count(*) FROM slice", "5\n");
  pj_engine_close(e);
}

/* ---- the real traces ---------------------------------------------------------------- */

/* The numbers trace_expect.py derives from the raw events. */
static char *expected(const char *path) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "python3 tests/unit/trace_expect.py '%s'", path);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  text t = {0};
  text_add(&t, "");
  char line[512];
  while (fgets(line, sizeof line, p)) text_add(&t, line);
  assert_int_equal(pclose(p), 0);
  return t.s;
}

static int64_t expect_num(const char *exp, const char *key) {
  char k[64];
  snprintf(k, sizeof k, "%s ", key);
  const char *p = strstr(exp, k);
  if (!p) fail_msg("trace_expect.py gave no %s", key);
  return strtoll(p + strlen(k), NULL, 10);
}

static void check_real(pj_engine *e, const char *exp) {
  char q[640];
  assert_int_equal(one_int(e, "SELECT count(*) FROM slice WHERE dur != 0"), expect_num(exp, "slices_nonzero"));
  assert_int_equal(one_int(e, "SELECT count(*) FROM slice WHERE dur = 0"), expect_num(exp, "slices_zero"));
  assert_int_equal(one_int(e, "SELECT max(s.depth) FROM slice s JOIN track t ON s.track_id = t.id"
                              " WHERE t.type = 'thread_execution' AND s.dur != 0"),
                   expect_num(exp, "max_depth"));
  assert_int_equal(one_int(e, "SELECT min(depth) FROM slice"), 0);
  assert_int_equal(one_int(e, "SELECT count(*) FROM counter"), expect_num(exp, "counters"));
  for (int cpu = 0; cpu < 64; cpu++) {
    char key[32];
    snprintf(key, sizeof key, "sched_cpu_%d ", cpu);
    if (!strstr(exp, key)) continue;
    key[strlen(key) - 1] = 0;
    snprintf(q, sizeof q, "SELECT count(*) FROM sched WHERE cpu = %d", cpu);
    assert_int_equal(one_int(e, q), expect_num(exp, key));
  }
  /* names: every M process_name / thread_name, on the right pid/tid */
  for (const char *l = exp; *l; l = strchr(l, '\n') + 1) {
    long long pid, tid;
    char name[256];
    if (sscanf(l, "process %lld %255[^\n]", &pid, name) == 2)
      snprintf(q, sizeof q, "SELECT count(*) FROM process WHERE pid = %lld AND name = '%s'", pid, name);
    else if (sscanf(l, "thread %lld %lld %255[^\n]", &pid, &tid, name) == 3)
      snprintf(q, sizeof q,
               "SELECT count(*) FROM thread JOIN process USING (upid) WHERE pid = %lld AND tid = %lld"
               " AND thread.name = '%s'", pid, tid, name);
    else continue;
    if (one_int(e, q) != 1) fail_msg("%s", q);
  }
  /* each thread slice's parent is on its track and one level up */
  assert_int_equal(one_int(e, "SELECT count(*) FROM slice c JOIN slice p ON c.parent_id = p.id"
                              " WHERE c.track_id != p.track_id OR c.depth != p.depth + 1"), 0);
  assert_int_equal(one_int(e, "SELECT count(*) FROM slice WHERE id != slice_id"), 0);
}

typedef struct calls { int read, events; int64_t last_done, last_total, read_first, read_total; } calls;
static void on_progress(void *ctx, const char *what, int64_t done, int64_t total) {
  calls *c = ctx;
  if (!strcmp(what, "read")) {
    if (!c->read++) c->read_first = done;
    c->read_total = total;
  }
  else if (!strcmp(what, "events")) c->events++;
  assert_true(done >= 0 && done <= total);
  c->last_done = done, c->last_total = total;
}

static void test_real_traces(void **state) {
  static const char *const files[] = {"lthi_cats.json.gz", "fuchsia_trace.json.gz"};
  for (int i = 0; i < 2; i++) {
    const char *path = shared_trace(files[i]);
    if (!path) skip();
    char *exp = expected(path);
    pj_trace_info info;
    pj_engine *e = open_engine();
    assert_int_equal(pj_engine_load_trace(e, path, &info), PJ_OK);
    assert_int_equal(info.damaged_at, -1);
    check_real(e, exp);
    /* progress: bytes read, then events, ending at done == total */
    calls c = {0};
    assert_int_equal(pj_engine_load_trace_progress(e, path, NULL, on_progress, &c), PJ_OK);
    assert_true(c.read >= 2 && c.events >= 2);
    assert_true(c.last_done == c.last_total && c.last_total > 50000);
    /* pipelines on the fast path see the same rows */
    assert_int_equal(one_int(e, "FROM slice |> WHERE dur != 0 |> AGGREGATE COUNT(*) AS n"),
                     expect_num(exp, "slices_nonzero"));
    pj_engine_close(e);
    free(exp);
  }
}

/* A gzip trace is read through a sliding window (import/input.c): the
 * same trace gives the same rows plain and compressed, with events, args
 * strings, a systemTraceEvents text and metadata far larger than the
 * window (256 KiB) and every element boundary at a different offset;
 * progress of the compressed file counts its bytes up to its size. */
static void test_streaming(void **state) {
  size_t cap = 8u << 20, n = 0;
  char *json = malloc(cap);
  assert_non_null(json);
#define OUT(...) (n += (size_t)snprintf(json + n, cap - n, __VA_ARGS__), assert_true(n < cap))
  OUT("{\"metadata\": {\"big\": \"");
  for (int i = 0; i < 300000; i++) json[n++] = (char)('a' + i % 26);
  OUT("\"}, \"traceEvents\": [");
  uint64_t r = 12345;
  for (int i = 0; i < 20000; i++) {
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    int len = (int)(r >> 60) * 7;   /* 0 … 105 */
    if (i == 7000) len = 400000;    /* one event larger than the window */
    OUT("%s{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%d.%03d,\"dur\":%d,\"name\":\"n%d\",\"args\":{\"s\":\"",
        i ? ",\n" : "", 1 + i % 3, 10 + i % 5, i * 10, (int)(r >> 40) % 1000, 1 + (int)(r >> 50) % 9, i % 50);
    for (int k = 0; k < len; k++) json[n++] = (char)('A' + (k + i) % 26);
    OUT("\",\"a\":[%d,{\"b\":%s}]}}", i, i % 2 ? "true" : "null");
  }
  OUT("], \"systemTraceEvents\": \"");
  for (int i = 0; i < 12000; i++)
    OUT("  my-task-42 ( 40) [000] ...1  %d.%06d: tracing_mark_write: %c|40|work%d\\n", 1 + i / 1000000,
        i % 1000000, i % 2 ? 'E' : 'B', i);
  OUT("\"}");
#undef OUT
  static const char *const queries[] = {
      "SELECT count(*), sum(ts), sum(dur), sum(depth), count(DISTINCT name) FROM slice",
      ("SELECT s.id, s.ts, s.name, group_concat(a.key || '=' || a.display_value) FROM slice s"
       " LEFT JOIN args a USING (arg_set_id) GROUP BY s.id ORDER BY s.id LIMIT 50 OFFSET 6980"),
      "SELECT count(*), sum(length(display_value)) FROM args",
      "SELECT name, length(str_value), int_value FROM metadata WHERE name != 'trace_uuid'",
      "SELECT utid, tid, upid FROM thread", "SELECT name, value FROM stats WHERE value > 0",
      "SELECT size, trace_type FROM trace_file WHERE is_container = 0"};
  char plain[] = "/tmp/pj_test_trace_XXXXXX", gz[] = "/tmp/pj_test_trace_XXXXXX";
  write_trace(plain, json, n, 0, 0);
  write_trace(gz, json, n, 1, 0);
  pj_engine *a = open_engine(), *b = open_engine();
  assert_int_equal(pj_engine_load_trace(a, plain, NULL), PJ_OK);
  calls c = {0};
  assert_int_equal(pj_engine_load_trace_progress(b, gz, NULL, on_progress, &c), PJ_OK);
  FILE *f = fopen(gz, "rb");
  fseek(f, 0, SEEK_END);
  long gz_size = ftell(f);
  fclose(f);
  /* during decompression, in bytes of the compressed file */
  assert_true(c.read >= 2 && c.read_first < gz_size);
  assert_int_equal(c.read_total, gz_size);
  for (size_t i = 0; i < sizeof queries / sizeof *queries; i++) {
    char *x = rows(a, queries[i]), *y = rows(b, queries[i]);
    if (strcmp(x, y)) fail_msg("%s\nplain:\n%s\ngzip:\n%s", queries[i], x, y);
    free(x);
    free(y);
  }
  assert_int_equal(one_int(a, "SELECT count(*) FROM slice"), 20000 + 6000);
  assert_int_equal(one_int(b, "SELECT length(str_value) FROM metadata WHERE name = 'json_metadata.big'"), 300000);
  assert_int_equal(one_int(b, "SELECT size FROM trace_file WHERE is_container = 1"), gz_size);
  pj_engine_close(a);
  pj_engine_close(b);
  unlink(plain);
  unlink(gz);
  free(json);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_basic),  cmocka_unit_test(test_sort_and_fields),
      cmocka_unit_test(test_phases), cmocka_unit_test(test_system_events),
      cmocka_unit_test(test_atrace_lmk),
      cmocka_unit_test(test_damage), cmocka_unit_test(test_errors),
      cmocka_unit_test(test_real_traces), cmocka_unit_test(test_streaming),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
