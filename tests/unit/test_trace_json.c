/*
 * test_trace_json.c — the Chrome JSON trace importer (runtime/trace_json.c,
 * pj_engine_load_trace): small traces written by the tests with exact
 * expected tables (B/E nesting, X containment and ties, instants and their
 * scopes, metadata names, args flattening, unmatched E, unclosed B, X
 * without dur, out-of-order timestamps, gzip, a bare array without its
 * closing bracket, malformed events, syntax errors, a trace larger than
 * the reader's chunk), and the two real traces of ../shared/data/traces
 * checked against the counts in SOURCES.md.
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

#include "pipejit.h"

/* ---- helpers ---------------------------------------------------------------- */

typedef struct text { char *s; size_t n; } text;

static void text_add(text *t, const char *s) {
  size_t k = strlen(s);
  t->s = realloc(t->s, t->n + k + 1);
  assert_non_null(t->s);
  memcpy(t->s + t->n, s, k + 1);
  t->n += k;
}

/* Appends every row of a result as "a|b|c\n" (NULL for NULL). */
static int collect(void *ctx, const pj_result *r, const char *st, size_t len, size_t off) {
  text *t = ctx;
  char buf[64];
  for (int64_t i = 0; i < pj_result_row_count(r); i++) {
    for (int c = 0; c < pj_result_column_count(r); c++) {
      if (c) text_add(t, "|");
      if (pj_result_is_null(r, i, c)) {
        text_add(t, "NULL");
        continue;
      }
      switch (pj_result_column_type(r, c)) {
      case PJ_TYPE_STRING: text_add(t, pj_result_text(r, i, c, NULL)); break;
      case PJ_TYPE_DOUBLE:
        snprintf(buf, sizeof buf, "%g", pj_result_double(r, i, c));
        text_add(t, buf);
        break;
      default:
        snprintf(buf, sizeof buf, "%lld", (long long)pj_result_int64(r, i, c));
        text_add(t, buf);
      }
    }
    text_add(t, "\n");
  }
  return 0;
}

/* The rows of a script's results as text (caller frees). */
static char *rows(pj_engine *e, const char *script) {
  text t = {0};
  text_add(&t, "");
  if (pj_engine_exec(e, script, collect, &t) != PJ_OK)
    fail_msg("%s\n-> %s", script, pj_engine_errmsg(e));
  return t.s;
}

static void assert_rows(pj_engine *e, const char *script, const char *expected) {
  char *got = rows(e, script);
  if (strcmp(got, expected)) {
    print_error("%s\nexpected:\n%sgot:\n%s", script, expected, got);
    free(got);
    fail();
  }
  free(got);
}

static int64_t one_int(pj_engine *e, const char *script) {
  char *s = rows(e, script);
  int64_t v = strtoll(s, NULL, 10);
  free(s);
  return v;
}

/* Writes text to a new temporary file (gzip-compressed when gz); the
 * caller unlinks path. */
static void write_trace(char *path, const char *json, int gz) {
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  if (gz) {
    gzFile f = gzdopen(fd, "wb");
    assert_non_null(f);
    assert_int_equal(gzwrite(f, json, (unsigned)strlen(json)), (int)strlen(json));
    assert_int_equal(gzclose(f), Z_OK);
  } else {
    FILE *f = fdopen(fd, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(json, 1, strlen(json), f), strlen(json));
    fclose(f);
  }
}

static pj_engine *open_engine(void) {
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  pj_engine_set_mode(e, PJ_MODE_INTERP);
  return e;
}

/* Imports json (as a file) into a new engine; info may be NULL. */
static pj_engine *import(const char *json, int gz, pj_trace_info *info) {
  char path[] = "/tmp/pj_test_trace_XXXXXX";
  write_trace(path, json, gz);
  pj_engine *e = open_engine();
  pj_trace_info local;
  if (pj_engine_load_trace(e, path, info ? info : &local) != PJ_OK)
    fail_msg("import failed: %s", pj_engine_errmsg(e));
  unlink(path);
  return e;
}

#define SLICES "SELECT id, ts, dur, track_id, category, name, depth, parent_id FROM slice ORDER BY id"

/* ---- small traces ---------------------------------------------------------- */

/* Object form with other keys around traceEvents (one holding brackets and
 * quotes in strings, which the skipper must not count), metadata names,
 * B/E nesting, X containment, a thread instant, float microseconds. */
static const char *basic_trace =
    "{\"displayTimeUnit\": \"ns\", \"metadata\": {\"x\": [\"]}\\\"{\", {\"y\": []}]},\n"
    " \"traceEvents\": [\n"
    "  {\"ph\": \"M\", \"pid\": 1, \"tid\": 1, \"name\": \"process_name\", \"args\": {\"name\": \"Browser\"}},\n"
    "  {\"ph\": \"M\", \"pid\": 1, \"tid\": 2, \"name\": \"thread_name\", \"args\": {\"name\": \"IO\"}},\n"
    "  {\"ph\": \"B\", \"pid\": 1, \"tid\": 1, \"ts\": 10, \"name\": \"a\", \"cat\": \"c1\"},\n"
    "  {\"ph\": \"B\", \"pid\": 1, \"tid\": 1, \"ts\": 12, \"name\": \"b\", \"cat\": \"c1\"},\n"
    "  {\"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": 13, \"dur\": 2.5, \"name\": \"x\", \"cat\": \"c2\"},\n"
    "  {\"ph\": \"i\", \"pid\": 1, \"tid\": 1, \"ts\": 14, \"name\": \"inst\", \"s\": \"t\"},\n"
    "  {\"ph\": \"E\", \"pid\": 1, \"tid\": 1, \"ts\": 20},\n"
    "  {\"ph\": \"X\", \"pid\": 1, \"tid\": 2, \"ts\": 11.25, \"dur\": 4, \"name\": \"io\"},\n"
    "  {\"ph\": \"E\", \"pid\": 1, \"tid\": 1, \"ts\": 30},\n"
    "  {\"ph\": \"C\", \"pid\": 1, \"tid\": 1, \"ts\": 31, \"name\": \"ctr\", \"args\": {\"v\": 1}}\n"
    " ],\n"
    " \"systemTraceEvents\": \"# tracer: nop\\n[]{}\"}\n";

static void test_basic(void **state) {
  pj_trace_info info;
  pj_engine *e = import(basic_trace, 0, &info);
  /* Ids in (ts, track) order: a(10), io(11.25 µs), b(12), x(13), inst(14).
   * The thread_name event makes (1,2) the first thread (utid 0); tracks
   * come with the first slice: track 0 is thread (1,1), track 1 (1,2). */
  assert_rows(e, SLICES,
              "0|10000|20000|0|c1|a|0|NULL\n"
              "1|11250|4000|1|NULL|io|0|NULL\n"
              "2|12000|8000|0|c1|b|1|0\n"
              "3|13000|2500|0|c2|x|2|2\n"
              "4|14000|0|0|NULL|inst|3|3\n");
  assert_rows(e, "SELECT utid, tid, name, upid FROM thread ORDER BY utid",
              "0|2|IO|0\n1|1|NULL|0\n");
  assert_rows(e, "SELECT upid, pid, name FROM process", "0|1|Browser\n");
  assert_rows(e, "SELECT id, type, utid, upid FROM track ORDER BY id",
              "0|thread|1|0\n1|thread|0|0\n");
  assert_rows(e, "SELECT id, utid FROM thread_track ORDER BY id", "0|1\n1|0\n");
  assert_int_equal(info.events, 10);
  assert_int_equal(info.slices, 5);
  assert_int_equal(info.threads, 2);
  assert_int_equal(info.processes, 1);
  assert_int_equal(info.ignored, 1);      /* the counter */
  assert_int_equal(info.malformed, 0);
  assert_int_equal(info.unmatched_end, 0);
  assert_int_equal(info.unclosed, 0);
  assert_int_equal(info.system_events_skipped, 1);
  /* Pipelines read the columnar table: the tree is usable as is. */
  assert_rows(e, "FROM slice |> TREE ACCUMULATE UP COUNT(*) AS n |> ORDER BY id |> SELECT id, n",
              "0|4\n1|1\n2|3\n3|2\n4|1\n");
  pj_engine_close(e);
}

/* The same trace gzip-compressed gives the same tables. */
static void test_gzip(void **state) {
  pj_engine *e = import(basic_trace, 1, NULL);
  assert_rows(e, SLICES,
              "0|10000|20000|0|c1|a|0|NULL\n"
              "1|11250|4000|1|NULL|io|0|NULL\n"
              "2|12000|8000|0|c1|b|1|0\n"
              "3|13000|2500|0|c2|x|2|2\n"
              "4|14000|0|0|NULL|inst|3|3\n");
  pj_engine_close(e);
}

/* A stray E is counted and dropped; a B never closed stays with dur -1 and
 * what follows on its thread nests under it (Perfetto's behaviour); an X
 * without dur is kept with dur -1 but does not swallow later slices. */
static void test_unmatched(void **state) {
  pj_trace_info info;
  pj_engine *e = import("[{\"ph\": \"E\", \"pid\": 1, \"tid\": 1, \"ts\": 1},\n"
                        " {\"ph\": \"B\", \"pid\": 1, \"tid\": 1, \"ts\": 2, \"name\": \"open\"},\n"
                        " {\"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": 3, \"dur\": 1, \"name\": \"k1\"},\n"
                        " {\"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"name\": \"nodur\"},\n"
                        " {\"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": 6, \"dur\": 1, \"name\": \"k2\"},\n"
                        " {\"ph\": \"B\", \"pid\": 1, \"tid\": 2, \"ts\": 1, \"name\": \"t2\"},\n"
                        " {\"ph\": \"E\", \"pid\": 1, \"tid\": 2, \"ts\": 4},\n"
                        " {\"ph\": \"E\", \"pid\": 1, \"tid\": 2, \"ts\": 5}]",
                        0, &info);
  assert_rows(e, SLICES,
              "0|1000|3000|1|NULL|t2|0|NULL\n"
              "1|2000|-1|0|NULL|open|0|NULL\n"
              "2|3000|1000|0|NULL|k1|1|1\n"
              "3|5000|-1|0|NULL|nodur|1|1\n"
              "4|6000|1000|0|NULL|k2|1|1\n");
  assert_int_equal(info.unmatched_end, 2);
  assert_int_equal(info.unclosed, 1);
  assert_int_equal(info.no_dur, 1);
  assert_int_equal(info.slices, 5);
  pj_engine_close(e);
}

/* Events written out of order are sorted per thread (stably); among X
 * events with the same ts the longer one becomes the parent whatever the
 * file order; siblings that touch ([0,5) then [5,8)) do not nest. */
static void test_out_of_order(void **state) {
  pj_engine *e = import(
      "{\"traceEvents\": [\n"
      " {\"ph\": \"X\", \"pid\": 7, \"tid\": 3, \"ts\": 5, \"dur\": 3, \"name\": \"second\"},\n"
      " {\"ph\": \"X\", \"pid\": 7, \"tid\": 3, \"ts\": 0, \"dur\": 2, \"name\": \"short\"},\n"
      " {\"ph\": \"X\", \"pid\": 7, \"tid\": 3, \"ts\": 0, \"dur\": 5, \"name\": \"long\"},\n"
      " {\"ph\": \"E\", \"pid\": 7, \"tid\": 4, \"ts\": 9},\n"
      " {\"ph\": \"B\", \"pid\": 7, \"tid\": 4, \"ts\": 1, \"name\": \"outer\"},\n"
      " {\"ph\": \"E\", \"pid\": 7, \"tid\": 4, \"ts\": 4},\n"
      " {\"ph\": \"B\", \"pid\": 7, \"tid\": 4, \"ts\": 2, \"name\": \"inner\"},\n"
      " {\"ph\": \"X\", \"pid\": 7, \"tid\": 3, \"ts\": 6, \"dur\": 1, \"name\": \"child\"}\n"
      "]}",
      0, NULL);
  assert_rows(e, "SELECT id, ts, dur, name, depth, parent_id FROM slice ORDER BY id",
              "0|0|5000|long|0|NULL\n"
              "1|0|2000|short|1|0\n"
              "2|1000|8000|outer|0|NULL\n"
              "3|2000|2000|inner|1|2\n"
              "4|5000|3000|second|0|NULL\n"
              "5|6000|1000|child|1|4\n");
  /* Parent-first ids: every parent id is below its child's. */
  assert_int_equal(one_int(e, "SELECT count(*) FROM slice WHERE parent_id >= id"), 0);
  pj_engine_close(e);
}

/* Process- and global-scoped instants get their own tracks, outside the
 * thread's nesting. Args are flattened with Perfetto's keys; an E event's
 * args join its slice's set. */
static void test_instants_and_args(void **state) {
  pj_engine *e = import(
      "[{\"ph\": \"B\", \"pid\": 2, \"tid\": 5, \"ts\": 1, \"name\": \"s\",\n"
      "  \"args\": {\"n\": 3, \"f\": 0.5, \"o\": {\"k\": \"v\", \"arr\": [true, null]}}},\n"
      " {\"ph\": \"I\", \"pid\": 2, \"tid\": 5, \"ts\": 2, \"name\": \"p\", \"s\": \"p\"},\n"
      " {\"ph\": \"i\", \"pid\": 2, \"tid\": 5, \"ts\": 3, \"name\": \"g\", \"s\": \"g\"},\n"
      " {\"ph\": \"E\", \"pid\": 2, \"tid\": 5, \"ts\": 4, \"args\": {\"ret\": \"ok\"}},\n"
      " {\"ph\": \"X\", \"pid\": 2, \"tid\": 5, \"ts\": 5, \"dur\": 1, \"name\": \"e\", \"args\": {}}\n"
      "]",
      0, NULL);
  assert_rows(e, "SELECT id, track_id, name, depth, parent_id, arg_set_id FROM slice ORDER BY id",
              "0|0|s|0|NULL|0\n"
              "1|1|p|0|NULL|NULL\n"
              "2|2|g|0|NULL|NULL\n"
              "3|0|e|0|NULL|NULL\n");
  assert_rows(e, "SELECT id, type, utid, upid FROM track ORDER BY id",
              "0|thread|0|0\n1|process|NULL|0\n2|global|NULL|NULL\n");
  assert_rows(e, "SELECT id, utid FROM thread_track", "0|0\n");
  assert_rows(e, "SELECT arg_set_id, flat_key, key, value_type, display_value FROM args ORDER BY id",
              "0|args.n|args.n|int|3\n"
              "0|args.f|args.f|real|0.5\n"
              "0|args.o.k|args.o.k|string|v\n"
              "0|args.o.arr|args.o.arr[0]|bool|true\n"
              "0|args.o.arr|args.o.arr[1]|null|NULL\n"
              "0|args.ret|args.ret|string|ok\n");
  pj_engine_close(e);
}

/* A bare array may end without ']' (and with a trailing comma), as Chrome
 * writes when tracing stops abruptly. Malformed events are counted. */
static void test_truncated_and_malformed(void **state) {
  pj_trace_info info;
  pj_engine *e = import("[{\"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1, \"name\": \"ok\"},\n"
                        " 42, null, [1],\n"
                        " {\"pid\": 1, \"tid\": 1, \"ts\": 1},\n"
                        " {\"ph\": 5, \"ts\": 1},\n"
                        " {\"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"name\": \"nots\"},\n"
                        " {\"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": \"soon\", \"dur\": 1},\n"
                        " {\"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": \"7\", \"dur\": 1, \"name\": \"strts\"},\n"
                        " {\"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": 2, \"dur\": -1},\n"
                        " {\"ph\": \"X\", \"pid\": {}, \"tid\": 1, \"ts\": 2, \"dur\": 1},\n"
                        " {\"ph\": \"B\", \"pid\": 1, \"tid\": 1, \"ts\": 3, \"name\": \"last\"},\n",
                        0, &info);
  assert_int_equal(info.events, 12);
  assert_int_equal(info.malformed, 9);
  assert_rows(e, "SELECT ts, dur, name FROM slice ORDER BY id",
              "1000|1000|ok\n3000|-1|last\n7000|1000|strts\n");
  pj_engine_close(e);
}

/* A file that is not JSON fails with a TRACE message and leaves the
 * tables of an earlier import in place. */
static void test_errors(void **state) {
  pj_engine *e = import("[{\"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1, \"name\": \"kept\"}]",
                        0, NULL);
  char path[] = "/tmp/pj_test_trace_XXXXXX";
  write_trace(path, "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"dur\": 1}, {\"ph\": }]}", 0);
  assert_int_equal(pj_engine_load_trace(e, path, NULL), PJ_ERROR);
  assert_non_null(strstr(pj_engine_errmsg(e), "TRACE: "));
  assert_non_null(strstr(pj_engine_errmsg(e), "is not a valid JSON trace"));
  unlink(path);
  strcpy(path, "/tmp/pj_test_trace_XXXXXX");
  write_trace(path, "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1", 0);
  assert_int_equal(pj_engine_load_trace(e, path, NULL), PJ_ERROR);
  assert_non_null(strstr(pj_engine_errmsg(e), "ends inside an event"));
  unlink(path);
  strcpy(path, "/tmp/pj_test_trace_XXXXXX");
  write_trace(path, "hello", 0);
  assert_int_equal(pj_engine_load_trace(e, path, NULL), PJ_ERROR);
  unlink(path);
  assert_int_equal(pj_engine_load_trace(e, "/nonexistent/trace.json", NULL), PJ_ERROR);
  assert_non_null(strstr(pj_engine_errmsg(e), "TRACE: cannot open '/nonexistent/trace.json'"));
  assert_rows(e, "SELECT name FROM slice", "kept\n");
  pj_engine_close(e);
}

/* More than the reader's 1 MB chunk, so events straddle chunk boundaries;
 * long names make the boundaries fall inside strings too. */
static void test_large(void **state) {
  enum { N = 12000 };
  text t = {0};
  text_add(&t, "{\"traceEvents\":[");
  char buf[256];
  for (int i = 0; i < N; i++) {
    /* Roots of 10 µs every 20 µs on 4 threads, each with one child. */
    int tid = i % 4, k = i / 8;
    if (i % 8 < 4)
      snprintf(buf, sizeof buf,
               "%s{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%d,\"dur\":10,"
               "\"name\":\"root-with-a-long-name-to-fill-the-buffer-%d\"}",
               i ? "," : "", tid, k * 20, i);
    else
      snprintf(buf, sizeof buf,
               ",{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%d,\"dur\":5,"
               "\"name\":\"child-with-a-long-name-to-fill-the-buffer-%d\",\"args\":{\"i\":%d}}",
               tid, k * 20 + 2, i, i);
    text_add(&t, buf);
  }
  text_add(&t, "]}");
  assert_true(t.n > (1u << 20));
  pj_trace_info info;
  pj_engine *e = import(t.s, 1, &info);
  free(t.s);
  assert_int_equal(info.slices, N);
  assert_int_equal(info.args, N / 2);
  assert_rows(e, "SELECT count(*), sum(parent_id IS NULL), max(depth), sum(parent_id >= id) FROM slice",
              "12000|6000|1|0\n");
  pj_engine_close(e);
}

/* ---- the real traces ---------------------------------------------------------------- */

static const char *trace_path(const char *file, char *buf, size_t cap) {
  snprintf(buf, cap, "../shared/data/traces/%s", file);
  if (access(buf, R_OK) == 0) return buf;
  print_message("skipping: %s not found (CI has shared/ beside the checkout)\n", buf);
  return NULL;
}

#define THREAD_SLICES                                                                      \
  "SELECT count(*), sum(parent_id IS NULL), min(depth), max(depth), count(DISTINCT track_id) " \
  "FROM slice JOIN thread_track ON slice.track_id = thread_track.id"

/* SOURCES.md: 66,373 B/E slices on 12 threads, 7,268 roots, depth 0..8.
 * The 45 instants are process-scoped, on process tracks. */
static void test_real_fuchsia(void **state) {
  char buf[512];
  const char *path = trace_path("fuchsia_trace.json.gz", buf, sizeof buf);
  if (!path) skip();
  pj_engine *e = open_engine();
  pj_trace_info info;
  assert_int_equal(pj_engine_load_trace(e, path, &info), PJ_OK);
  assert_rows(e, THREAD_SLICES, "66373|7268|0|8|12\n");
  assert_int_equal(info.slices, 66373 + 45);
  assert_int_equal(info.malformed, 0);
  assert_int_equal(info.unmatched_end, 0);
  assert_int_equal(info.unclosed, 0);
  assert_int_equal(info.system_events_skipped, 1);
  assert_int_equal(one_int(e, "SELECT count(*) FROM slice WHERE parent_id >= id"), 0);
  assert_int_equal(one_int(e, "SELECT count(*) FROM slice WHERE dur < 0"), 0);
  /* The pipeline and SQL agree on the tree. */
  assert_rows(e, "FROM slice |> TREE ACCUMULATE UP COUNT(*) AS n |> WHERE parent_id IS NULL "
                 "|> AGGREGATE SUM(n) AS total",
              "66418\n");
  pj_engine_close(e);
}

/* SOURCES.md: 51,516 X and 4,535 B/E events, 56,050 slices on 32 threads,
 * 12,297 roots, depth 0..19, one unclosed B and one stray E. Those counts
 * leave out the unclosed B (RendererMain.START_MSG_LOOP); we keep it, as
 * Perfetto does, with dur -1, and the 64 roots that follow it on its thread
 * nest under it. Plus 1,743 thread-scoped instants, nested, and one
 * process-scoped instant on its own track. */
static void test_real_lthi(void **state) {
  char buf[512];
  const char *path = trace_path("lthi_cats.json.gz", buf, sizeof buf);
  if (!path) skip();
  pj_engine *e = open_engine();
  pj_trace_info info;
  assert_int_equal(pj_engine_load_trace(e, path, &info), PJ_OK);
  assert_int_equal(info.unclosed, 1);
  assert_int_equal(info.unmatched_end, 1);
  assert_int_equal(info.no_dur, 13);
  assert_int_equal(info.malformed, 0);
  assert_int_equal(info.slices, 51516 + 4535 + 1743 + 1);
  assert_rows(e, THREAD_SLICES, "57794|12234|0|20|32\n");
  assert_int_equal(one_int(e, "SELECT count(*) FROM slice WHERE parent_id >= id"), 0);
  /* SOURCES.md's numbers once the unclosed B is left out. */
  assert_rows(e,
              "SELECT id, name FROM slice WHERE dur = -1 AND name = 'RendererMain.START_MSG_LOOP'",
              "10021|RendererMain.START_MSG_LOOP\n");
  assert_int_equal(one_int(e, "SELECT count(*) FROM slice WHERE parent_id = 10021"), 64);
  assert_int_equal(56050, 51516 + 4535 - 1);
  assert_int_equal(12297, 12234 - 1 + 64);
  assert_int_equal(one_int(e, "WITH RECURSIVE under(id) AS (SELECT 10021 UNION ALL "
                              "SELECT s.id FROM slice s JOIN under u ON s.parent_id = u.id) "
                              "SELECT max(CASE WHEN id IN (SELECT id FROM under) THEN depth - 1 "
                              "ELSE depth END) FROM slice"),
                   19);
  pj_engine_close(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_basic),
      cmocka_unit_test(test_gzip),
      cmocka_unit_test(test_unmatched),
      cmocka_unit_test(test_out_of_order),
      cmocka_unit_test(test_instants_and_args),
      cmocka_unit_test(test_truncated_and_malformed),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_large),
      cmocka_unit_test(test_real_fuchsia),
      cmocka_unit_test(test_real_lthi),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
