/*
 * test_interval_diff.c — INTERVAL INTERSECTION OF, FLATTEN and JOIN, and
 * §9.2's SUBTRACT, MERGE OVERLAPPING and MERGE CONSECUTIVE BY, on random
 * interval sets against plain-SQL answers from SQLite, and SPLIT and
 * QUANTIZE against brute-force answers computed here, on both backends.
 *
 * Tables (made by SQL from a fixed linear congruential sequence, so runs
 * repeat): a, b, c of ~2000 rows with ts in [0, 20000), dur in [0, 60)
 * (points included, a few NULL bounds), PER key k in 0..4 or NULL, values
 * with NULLs; each relation overlaps itself. o adds never-ending rows
 * (dur = -1) for JOIN. Each pipeline runs through the exec driver with the
 * interpreter and with the JIT's segment functions; the JIT run must not
 * fall back to the interpreter in a compiled segment (ex_seg.vm stays
 * NULL), and every compiled plan must have compiled the segment after the
 * interval source. Both results are compared with the SQL query's rows:
 * as sorted multisets (INTERSECTION, FLATTEN) or in order (JOIN, whose
 * output order is defined).
 *
 * SQL formulations. Let s = max(starts), e = min(ends). Operands meet iff
 * s < e (all positive), or s = e and every positive operand still holds s
 * (s < its end): that is how a point meets an interval and another point.
 * FLATTEN: the distinct starts and ends of positive rows and the point
 * instants cut each group into segments (lead() over the sorted cuts),
 * each counted when a row covers it; plus one zero-length segment per distinct point instant,
 * aggregating the points there and the positive rows with ts <= t < end.
 * JOIN: the relationship table of runtime/interval/ijoin.c as a CASE.
 * SUBTRACT: the operand's islands per lane (a running max of ends over
 * the rows sorted by start; a row past it starts an island), then each
 * input row's pieces start at its ts or at an island's end inside it,
 * unless an island holds that start, and end at the next island's start
 * or the row's end. MERGE OVERLAPPING: the same islands over the input
 * (points included, ts <= running end joins). MERGE CONSECUTIVE BY: a
 * recursive walk over each lane's rows in (ts, id) order carrying the
 * run's BY value and end. Ordered comparisons check the output order
 * (lanes first seen, then ts, then input order).
 * SPLIT: every operand boundary inside each input row, found by a scan
 * of the lane's operand rows, and every operand row covering each piece;
 * QUANTIZE: the pieces walked one bucket at a time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "codegen/cg.h"
#include "interp/vm.h"
#include "api/engine.h"

/* codegen/cg_segment.c: whether the JIT compiles a segment at all. */
bool cg_segment_wanted(const ir_segment *seg);

static pj_engine *E;
static cg_jit *J;

/* x(i) is a pseudo-random number from a row index i (SQLite integers). */
#define RND(i, m, a) "((((" i ") * 1103515245 + " a ") % 2147483648) % " m ")"

static const char *SETUP =
    "CREATE TABLE seq AS WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i < 1999) SELECT i FROM r;"
    "CREATE PERFETTO TABLE a AS SELECT i AS id, "
    "  CASE WHEN i % 97 = 5 THEN NULL ELSE " RND("i", "20000", "12345") " END AS ts, "
    "  CASE WHEN i % 89 = 7 THEN NULL WHEN i % 7 = 0 THEN 0 ELSE " RND("i + 7", "60", "999") " END AS dur, "
    "  CASE WHEN i % 11 = 0 THEN NULL ELSE " RND("i + 3", "5", "77") " END AS k, "
    "  CASE WHEN i % 13 = 0 THEN NULL ELSE " RND("i + 5", "1000", "31") " END AS v FROM seq;"
    "CREATE PERFETTO TABLE b AS SELECT i AS id, "
    "  " RND("i + 100", "20000", "54321") " AS ts, "
    "  CASE WHEN i % 5 = 0 THEN 0 ELSE " RND("i + 9", "80", "4242") " END AS dur, "
    "  CASE WHEN i % 17 = 0 THEN NULL ELSE " RND("i + 11", "5", "99") " END AS k, "
    "  " RND("i + 13", "1000", "17") " AS w FROM seq;"
    "CREATE PERFETTO TABLE c AS SELECT i AS id, "
    "  " RND("i + 200", "20000", "888") " AS ts, "
    "  CASE WHEN i % 3 = 0 THEN 0 ELSE " RND("i + 1", "200", "1") " END AS dur, "
    "  CASE WHEN i % 19 = 0 THEN NULL ELSE " RND("i + 21", "5", "5") " END AS k FROM seq;"
    "CREATE PERFETTO TABLE o AS SELECT id, ts, CASE WHEN id % 101 = 3 THEN -1 ELSE dur END AS dur, k, w FROM b;"
    /* h, h2, g: many overlapping intervals (a quarter start at 50, a
     * sixth are points), so that a partition holds several batches of
     * regions */
    "CREATE PERFETTO TABLE h AS SELECT i AS id, "
    "  CASE WHEN i % 4 = 0 THEN 50 ELSE " RND("i + 1", "120", "71") " END AS ts, "
    "  CASE WHEN i % 6 = 0 THEN 0 ELSE 40 + " RND("i + 2", "400", "73") " END AS dur, "
    "  " RND("i + 3", "2", "79") " AS k FROM seq WHERE i < 400;"
    "CREATE PERFETTO TABLE h2 AS SELECT i AS id, "
    "  CASE WHEN i % 5 = 0 THEN 50 ELSE " RND("i + 4", "120", "83") " END AS ts, "
    "  CASE WHEN i % 7 = 0 THEN 0 ELSE 40 + " RND("i + 5", "400", "89") " END AS dur, "
    "  " RND("i + 6", "2", "97") " AS k FROM seq WHERE i < 400;"
    /* dj, dk: per lane, rows in time order that do not overlap (some
     * touch; points in the gaps, dk's on dj's boundaries), the shape of a
     * cpu's slices; lane 3 of dj overlaps now and then, and NULL keys
     * make a lane of scattered rows */
    "CREATE PERFETTO TABLE dj AS SELECT i AS id, (i / 4) * 20 + i % 4 AS ts, "
    "  CASE WHEN (i / 4) % 5 = 0 THEN 0 WHEN i % 4 = 3 AND (i / 4) % 13 = 6 THEN 30 "
    "  WHEN (i / 4) % 5 IN (2, 3) THEN 20 ELSE 5 + (i / 4) % 11 END AS dur, "
    "  CASE WHEN i % 37 = 5 THEN NULL ELSE i % 4 END AS k FROM seq WHERE i < 800;"
    "CREATE PERFETTO TABLE dk AS SELECT i AS id, (i / 4) * 50 + i % 4 + ((i / 4) % 2) * 10 AS ts, "
    "  CASE WHEN (i / 4) % 7 = 0 THEN 0 WHEN (i / 4) % 7 = 1 THEN 40 ELSE 13 + (i / 4) % 17 END AS dur, "
    "  CASE WHEN i % 41 = 9 THEN NULL ELSE i % 4 END AS k FROM seq WHERE i < 400;"
    "CREATE PERFETTO TABLE g AS SELECT * FROM h WHERE id < 70;"
    /* Native copies with indexes for the SQL side (a join over the
     * virtual tables would rescan them per row). */
    "CREATE TABLE sa AS SELECT * FROM a; CREATE TABLE sb AS SELECT * FROM b;"
    "CREATE TABLE sc AS SELECT * FROM c; CREATE TABLE so AS SELECT * FROM o;"
    "CREATE TABLE sh AS SELECT * FROM h; CREATE TABLE sh2 AS SELECT * FROM h2;"
    "CREATE TABLE sg AS SELECT * FROM g; CREATE TABLE sdj AS SELECT * FROM dj; CREATE TABLE sdk AS SELECT * FROM dk;"
    "CREATE INDEX sa_k ON sa(k, ts); CREATE INDEX sb_k ON sb(k, ts);"
    "CREATE INDEX sc_k ON sc(k, ts); CREATE INDEX so_k ON so(k, ts);";

static int setup(void **state) {
  (void)state;
  if (pj_engine_open(NULL, &E) != PJ_OK) return -1;
  if (pj_engine_exec(E, SETUP, NULL, NULL) != PJ_OK) {
    fprintf(stderr, "setup: %s\n", pj_engine_errmsg(E));
    return -1;
  }
  rt_err err = {.offset = -1};
  J = cg_jit_new(&err);
  return J ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  cg_jit_free(J);
  pj_engine_close(E);
  return 0;
}

static ex_batch_fn pick_interp(void *ctx, int seg) { return vm_run_batch; }
static ex_batch_fn pick_jit(void *ctx, int seg) { return cg_segment_fn(ctx, seg); }

/* Rows as text lines "c1|c2|…" (NULL as "NULL"). */
typedef struct lines {
  int n, cap;
  char **v;
} lines;

static void lines_add(lines *l, const char *s) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 256;
    l->v = realloc(l->v, sizeof(char *) * (size_t)l->cap);
    assert_non_null(l->v);
  }
  l->v[l->n++] = strdup(s);
}

static void lines_free(lines *l) {
  for (int i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
  memset(l, 0, sizeof *l);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void rowbuf_lines(const rt_rowbuf *r, lines *out) {
  char line[1024];
  for (int64_t i = 0; i < r->nrows; i++) {
    size_t at = 0;
    for (int c = 0; c < r->ncols; c++) {
      if (c) line[at++] = '|';
      if (!rt_bit(r->valid[c], (uint32_t)i)) at += (size_t)snprintf(line + at, sizeof line - at, "NULL");
      else if (r->types[c] == RT_F64) at += (size_t)snprintf(line + at, sizeof line - at, "%.6f", ((double *)r->data[c])[i]);
      else if (r->types[c] == RT_STR) at += (size_t)snprintf(line + at, sizeof line - at, "s%u", ((uint32_t *)r->data[c])[i]);
      else at += (size_t)snprintf(line + at, sizeof line - at, "%lld", (long long)((int64_t *)r->data[c])[i]);
    }
    line[at] = 0;
    lines_add(out, line);
  }
}

static void sql_lines(const char *sql, lines *out) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(E->db, sql, -1, &st, NULL) != SQLITE_OK) {
    fprintf(stderr, "sql: %s\n%s\n", sqlite3_errmsg(E->db), sql);
    fail();
  }
  char line[1024];
  while (sqlite3_step(st) == SQLITE_ROW) {
    size_t at = 0;
    for (int c = 0; c < sqlite3_column_count(st); c++) {
      if (c) line[at++] = '|';
      int t = sqlite3_column_type(st, c);
      if (t == SQLITE_NULL) at += (size_t)snprintf(line + at, sizeof line - at, "NULL");
      else if (t == SQLITE_FLOAT) at += (size_t)snprintf(line + at, sizeof line - at, "%.6f", sqlite3_column_double(st, c));
      else at += (size_t)snprintf(line + at, sizeof line - at, "%lld", (long long)sqlite3_column_int64(st, c));
    }
    line[at] = 0;
    lines_add(out, line);
  }
  sqlite3_finalize(st);
}

/* INTERSECTION partitions the streaming sweep served, and those where
 * narrowing gave up at its cap, over all runs. */
static uint64_t g_streamed, g_capped;

/* Runs the pipeline on one backend; fills rows; checks no fallback. */
static void run_one(pj_query *q, cg_module *code, lines *rows) {
  ex_value none[1] = {{.type = RT_NULLT}};
  ex_run run;
  ex_run_init(&run, q->plan, E->strings, E->db, 0, none);
  int rc = code ? ex_run_plan(&run, pick_jit, code) : ex_run_plan(&run, pick_interp, NULL);
  if (rc != 0) {
    fprintf(stderr, "run: %s\n", run.err.msg);
    fail();
  }
  bool fell_back = false, after_source = false;
  for (int i = 0; i < run.nsegs; i++) {
    const ir_op *src = run.segs[i].seg->source;
    bool ivsrc = ir_op_is_interval(src->kind);
    if (code && cg_segment_compiled(code, i)) {
      fell_back |= run.segs[i].vm != NULL;
      after_source |= ivsrc;
    }
    /* a segment after the operator that the JIT wants must be compiled */
    if (code && ivsrc && cg_segment_wanted(run.segs[i].seg)) assert_true(cg_segment_compiled(code, i));
  }
  if (code) {
    assert_false(fell_back);
    assert_true(after_source);   /* every pipeline here has work after the operator */
  }
  rowbuf_lines(&run.result, rows);
  g_streamed += run.isect_stats.part_stream;
  g_capped += run.isect_stats.part_capped;
  ex_run_free(&run);
  rt_rowbuf_free(&run.result);
}

static void same_lines(const char *what, lines *x, lines *y, bool sort) {
  if (sort) {
    qsort(x->v, (size_t)x->n, sizeof(char *), cmp_str);
    qsort(y->v, (size_t)y->n, sizeof(char *), cmp_str);
  }
  if (x->n != y->n) {
    fprintf(stderr, "%s: %d rows, SQL %d rows\n", what, x->n, y->n);
    fail();
  }
  for (int i = 0; i < x->n; i++)
    if (strcmp(x->v[i], y->v[i])) {
      fprintf(stderr, "%s: row %d: '%s', SQL '%s'\n", what, i, x->v[i], y->v[i]);
      fail();
    }
}

/* The pipeline on both backends against the SQL. min_rows guards against
 * a vacuous comparison. */
static void diff_want(const char *pipe, lines *want, bool sorted, int min_rows);
static void diff(const char *pipe, const char *sql, bool sorted, int min_rows) {
  lines want = {0};
  sql_lines(sql, &want);
  diff_want(pipe, &want, sorted, min_rows);
}

/* The pipeline on both backends against the rows of want (freed). */
static void diff_want(const char *pipe, lines *want, bool sorted, int min_rows) {
  pj_query *q = NULL;
  if (pj_query_compile(E, pipe, &q) != PJ_OK) {
    fprintf(stderr, "compile: %s: %s\n", pipe, pj_engine_errmsg(E));
    fail();
  }
  rt_err err = {.offset = -1};
  cg_module *code = cg_compile(J, q->plan, 2, &err);
  assert_non_null(code);
  lines a = {0}, b = {0};
  assert_true(want->n >= min_rows);
  run_one(q, NULL, &a);
  run_one(q, code, &b);
  same_lines("interp", &a, want, !sorted);
  same_lines("jit", &b, want, !sorted);
  lines_free(want);
  lines_free(&a);
  lines_free(&b);
  cg_module_free(code);
  pj_query_free(q);
}

#define END(t) "(" t ".ts + " t ".dur)"
#define VALID(t) t ".ts IS NOT NULL AND " t ".dur IS NOT NULL"

static void test_intersect_two(void **state) {
  (void)state;
  diff("INTERVAL INTERSECTION OF (a AS x, b AS y) PER k |> WHERE dur >= 0 |> SELECT ts, dur, k, x.v AS v, y.w AS w, x.id AS xi, y.id AS yi",
       "SELECT max(x.ts, y.ts), min(" END("x") ", " END("y") ") - max(x.ts, y.ts), x.k, x.v, y.w, x.id, y.id "
       "FROM sa x JOIN sb y ON x.k IS y.k AND y.ts BETWEEN x.ts - 200 AND x.ts + 200 WHERE " VALID("x") " AND " VALID("y") " AND "
       "(max(x.ts, y.ts) < min(" END("x") ", " END("y") ") OR (max(x.ts, y.ts) = min(" END("x") ", " END("y") ") "
       " AND (x.dur = 0 OR max(x.ts, y.ts) < " END("x") ") AND (y.dur = 0 OR max(x.ts, y.ts) < " END("y") ")))",
       false, 100);
  /* no PER, downstream filter and arithmetic */
  diff("INTERVAL INTERSECTION OF (b AS x, c AS y) |> WHERE y.dur > 0 |> SELECT ts, dur * 2 AS d2, x.id AS xi, y.id AS yi",
       "SELECT max(x.ts, y.ts), 2 * (min(" END("x") ", " END("y") ") - max(x.ts, y.ts)), x.id, y.id "
       "FROM sb x JOIN sc y ON y.dur > 0 AND y.ts BETWEEN x.ts - 200 AND x.ts + 200 WHERE " VALID("x") " AND " VALID("y") " AND "
       "(max(x.ts, y.ts) < min(" END("x") ", " END("y") ") OR (max(x.ts, y.ts) = min(" END("x") ", " END("y") ") "
       " AND (x.dur = 0 OR max(x.ts, y.ts) < " END("x") ") AND (y.dur = 0 OR max(x.ts, y.ts) < " END("y") ")))",
       false, 100);
}

static void test_intersect_three(void **state) {
  (void)state;
#define S3 "max(x.ts, y.ts, z.ts)"
#define E3 "min(" END("x") ", " END("y") ", " END("z") ")"
  diff("INTERVAL INTERSECTION OF (a AS x, b AS y, c AS z) PER k |> AGGREGATE COUNT(*) AS n, SUM(dur) AS d, SUM(x.v) AS sv GROUP BY k",
       "SELECT x.k, count(*), sum(" E3 " - " S3 "), sum(x.v) FROM sa x JOIN sb y ON x.k IS y.k AND y.ts BETWEEN x.ts - 200 AND x.ts + 200 "
       "JOIN sc z ON z.k IS x.k AND z.ts BETWEEN x.ts - 200 AND x.ts + 200 "
       "WHERE " VALID("x") " AND " VALID("y") " AND " VALID("z") " AND (" S3 " < " E3 " OR (" S3 " = " E3
       " AND (x.dur = 0 OR " S3 " < " END("x") ") AND (y.dur = 0 OR " S3 " < " END("y") ") AND (z.dur = 0 OR " S3 " < " END("z") "))) GROUP BY x.k",
       false, 3);
}

/* Many overlapping intervals: the streaming sweep serves each partition
 * in several batches (pausing inside the regions of one start), on both
 * backends; two operands, an operand with itself, and three operands
 * (narrowing passes its cap and streams). */
#define MEET2 \
  "(max(x.ts, y.ts) < min(" END("x") ", " END("y") ") OR (max(x.ts, y.ts) = min(" END("x") ", " END("y") ") " \
  " AND (x.dur = 0 OR max(x.ts, y.ts) < " END("x") ") AND (y.dur = 0 OR max(x.ts, y.ts) < " END("y") ")))"
static void test_intersect_many_overlaps(void **state) {
  (void)state;
  uint64_t streamed = g_streamed, capped = g_capped;
  diff("INTERVAL INTERSECTION OF (h AS x, h2 AS y) PER k |> WHERE dur >= 0 |> SELECT ts, dur, k, x.id AS xi, y.id AS yi",
       "SELECT max(x.ts, y.ts), min(" END("x") ", " END("y") ") - max(x.ts, y.ts), x.k, x.id, y.id "
       "FROM sh x JOIN sh2 y ON x.k = y.k WHERE " MEET2,
       false, 2 * 8192 + 1);
  diff("INTERVAL INTERSECTION OF (h AS x, h AS y) |> EXTEND x.id * 1000 + y.id AS pair |> SELECT ts, dur, pair",
       "SELECT max(x.ts, y.ts), min(" END("x") ", " END("y") ") - max(x.ts, y.ts), x.id * 1000 + y.id "
       "FROM sh x JOIN sh y WHERE " MEET2,
       false, 4 * 8192);
  diff("INTERVAL INTERSECTION OF (g AS x, g AS y, g AS z) |> AGGREGATE COUNT(*) AS n, SUM(dur) AS d, "
       "SUM(x.id * 10000 + y.id * 100 + z.id) AS sig, MIN(ts) AS lo, MAX(ts) AS hi",
       "SELECT count(*), sum(" E3 " - " S3 "), sum(x.id * 10000 + y.id * 100 + z.id), min(" S3 "), max(" S3 ") "
       "FROM sg x JOIN sg y JOIN sg z WHERE " S3 " < " E3 " OR (" S3 " = " E3
       " AND (x.dur = 0 OR " S3 " < " END("x") ") AND (y.dur = 0 OR " S3 " < " END("y") ") AND (z.dur = 0 OR " S3 " < " END("z") "))",
       false, 1);
  /* per backend: 2 partitions, 1, and 1 given up by narrowing */
  assert_int_equal(g_streamed - streamed, 2 * (2 + 1 + 1));
  assert_int_equal(g_capped - capped, 2);
}

static void test_flatten(void **state) {
  (void)state;
  diff("FROM a |> INTERVAL FLATTEN PER k AGGREGATE COUNT(*) AS n, SUM(v) AS sv, MAX(v) AS mx |> WHERE n > 0",
       "WITH r AS (SELECT * FROM sa WHERE " VALID("sa") "), "
       "cut AS (SELECT k, ts AS t FROM r UNION SELECT k, ts + dur FROM r WHERE dur > 0), "
       "seg AS (SELECT k, t AS s, lead(t) OVER (PARTITION BY k ORDER BY t) AS e FROM cut) "
       "SELECT seg.s, seg.e - seg.s, seg.k, count(*), sum(r.v), max(r.v) FROM seg JOIN r ON r.k IS seg.k AND r.dur > 0 "
       "  AND r.ts <= seg.s AND r.ts + r.dur >= seg.e WHERE seg.e IS NOT NULL GROUP BY seg.k, seg.s, seg.e "
       "UNION ALL "
       "SELECT p.t, 0, p.k, count(*), sum(r.v), max(r.v) FROM (SELECT DISTINCT k, ts AS t FROM r WHERE dur = 0) p "
       "  JOIN r ON r.k IS p.k AND ((r.dur = 0 AND r.ts = p.t) OR (r.dur > 0 AND r.ts <= p.t AND p.t < r.ts + r.dur)) "
       "GROUP BY p.k, p.t",
       false, 100);
}

/* The relationship of input i to operand o (runtime/interval/ijoin.c's table). */
#define OE "(CASE WHEN o.dur < 0 THEN 9223372036854775807 ELSE o.ts + o.dur END)"
#define IE "(CASE WHEN i.dur < 0 THEN 9223372036854775807 ELSE i.ts + i.dur END)"
#define REL(pos, ipt, opt) \
  "(CASE WHEN i.dur = 0 AND o.dur = 0 THEN o.ts = i.ts WHEN i.dur = 0 THEN (" ipt ") " \
  "WHEN o.dur = 0 THEN (" opt ") ELSE (" pos ") END)"

static void join_case(const char *rel, const char *cond, bool left) {
  char pipe[512], sql[2048];
  snprintf(pipe, sizeof pipe,
           "FROM a |> %sINTERVAL JOIN o AS m %s PER k |> WHERE id >= 0 |> SELECT id, m.id AS mid, m.w AS w, v", left ? "LEFT " : "", rel);
  snprintf(sql, sizeof sql,
           "SELECT i.id, o.id, o.w, i.v FROM sa i %s JOIN so o ON i.k = o.k AND " VALID("i") " AND " VALID("o")
           " AND %s ORDER BY i.id, o.ts, o.id",
           left ? "LEFT" : "", cond);
  diff(pipe, sql, true, 100);
}

static void test_join(void **state) {
  (void)state;
  join_case("OVERLAPPING BOUNDS", REL("o.ts < " IE " AND i.ts < " OE, "o.ts <= i.ts AND i.ts < " OE, "i.ts <= o.ts AND o.ts < " IE), false);
  join_case("OVERLAPPING BOUNDS", REL("o.ts < " IE " AND i.ts < " OE, "o.ts <= i.ts AND i.ts < " OE, "i.ts <= o.ts AND o.ts < " IE), true);
  join_case("COVERING BEGIN", REL("o.ts <= i.ts AND i.ts < " OE, "o.ts <= i.ts AND i.ts < " OE, "o.ts = i.ts"), false);
  join_case("COVERING END", REL("o.ts < " IE " AND " IE " <= " OE, "o.ts <= i.ts AND i.ts < " OE, "0"), false);
  join_case("COVERING BOUNDS", REL("o.ts <= i.ts AND " IE " <= " OE, "o.ts <= i.ts AND i.ts < " OE, "0"), true);
  join_case("WITHIN BOUNDS", REL("i.ts <= o.ts AND " OE " <= " IE, "0", "i.ts <= o.ts AND o.ts < " IE), false);
}

/* ---- §9.1 interval sources (ivsrc): brute-force references ---------------- */

/* Rows of a SQL query as int64 cells (NULL flagged). */
typedef struct cells {
  int n, ncols;
  int64_t *v;
  bool *null;
} cells;

static void sql_cells(const char *sql, int ncols, cells *out) {
  sqlite3_stmt *st = NULL;
  assert_int_equal(sqlite3_prepare_v2(E->db, sql, -1, &st, NULL), SQLITE_OK);
  memset(out, 0, sizeof *out);
  out->ncols = ncols;
  int cap = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    if (out->n == cap) {
      cap = cap ? 2 * cap : 256;
      out->v = realloc(out->v, sizeof(int64_t) * (size_t)cap * (size_t)ncols);
      out->null = realloc(out->null, (size_t)cap * (size_t)ncols);
      assert_true(out->v && out->null);
    }
    for (int c = 0; c < ncols; c++) {
      out->null[out->n * ncols + c] = sqlite3_column_type(st, c) == SQLITE_NULL;
      out->v[out->n * ncols + c] = sqlite3_column_int64(st, c);
    }
    out->n++;
  }
  sqlite3_finalize(st);
}

static void cells_free(cells *c) {
  free(c->v);
  free(c->null);
}

#define CV(c, r, k) ((c)->v[(r) * (c)->ncols + (k)])
#define CN(c, r, k) ((c)->null[(r) * (c)->ncols + (k)])

static bool same_key(const cells *a, int i, const cells *b, int j) {
  /* column 2 is the PER key; NULL equals NULL */
  return CN(a, i, 2) == CN(b, j, 2) && (CN(a, i, 2) || CV(a, i, 2) == CV(b, j, 2));
}

typedef struct ev_row {
  int64_t rank, ts, dur, idx, id;
  bool dur_null;
} ev_row;

static int cmp_ev(const void *x, const void *y) {
  const ev_row *a = x, *b = y;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
  return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* INTERVALS FROM EVENTS by the definition, O(n^2): for each event the
 * next of its lane in (ts, input order) and the first stop at or after
 * it; close(id) the closing end, or -1 to keep the last open. Lines
 * "ts|dur|id" in lane (first-seen), ts, input order. */
static void events_ref(const char *ev_sql, const char *stop_sql, bool close, lines *out) {
  cells e, s = {0};
  sql_cells(ev_sql, 3, &e);   /* id, ts, k */
  if (stop_sql) sql_cells(stop_sql, 3, &s);   /* id, ts, k */
  ev_row *rows = calloc((size_t)e.n + 1, sizeof *rows);
  int n = 0, nranks = 0;
  int64_t *rank_of = calloc((size_t)e.n + 1, sizeof *rank_of);
  for (int i = 0; i < e.n; i++) {
    if (CN(&e, i, 1)) continue;
    int64_t rank = -1;
    for (int j = 0; j < i && rank < 0; j++)
      if (!CN(&e, j, 1) && same_key(&e, i, &e, j)) rank = rank_of[j];
    rank_of[i] = rank >= 0 ? rank : nranks++;
    int64_t t = CV(&e, i, 1), end = INT64_MAX;
    bool found = false;
    for (int j = 0; j < e.n; j++) {
      if (j == i || CN(&e, j, 1) || !same_key(&e, i, &e, j)) continue;
      int64_t tj = CV(&e, j, 1);
      if ((tj > t || (tj == t && j > i)) && tj <= end) {
        if (tj < end || !found) end = tj;
        found = true;
      }
    }
    for (int j = 0; j < s.n; j++) {
      if (CN(&s, j, 1) || !same_key(&e, i, &s, j)) continue;
      if (CV(&s, j, 1) >= t && CV(&s, j, 1) < end) end = CV(&s, j, 1), found = true;
      else if (CV(&s, j, 1) >= t && CV(&s, j, 1) == end) found = true;
    }
    ev_row *r = &rows[n++];
    r->rank = rank_of[i];
    r->ts = t;
    r->idx = i;
    r->id = CV(&e, i, 0);
    /* close: the end is ts + id % 7 (NULL when id % 5 = 1) */
    if (found) r->dur = end - t;
    else if (!close) r->dur = -1;
    else if (r->id % 5 == 1) r->dur_null = true;
    else r->dur = r->id % 7;
  }
  qsort(rows, (size_t)n, sizeof *rows, cmp_ev);
  char line[128];
  for (int i = 0; i < n; i++) {
    if (rows[i].dur_null) snprintf(line, sizeof line, "%lld|NULL|%lld", (long long)rows[i].ts, (long long)rows[i].id);
    else snprintf(line, sizeof line, "%lld|%lld|%lld", (long long)rows[i].ts, (long long)rows[i].dur, (long long)rows[i].id);
    lines_add(out, line);
  }
  free(rows);
  free(rank_of);
  cells_free(&e);
  cells_free(&s);
}

static void test_events(void **state) {
  (void)state;
  lines want = {0};
  /* a: NULL ts and NULL keys; ties in ts (ts in [0, 20000) over 2000 rows) */
  events_ref("SELECT id, ts, k FROM sa", NULL, false, &want);
  diff_want("INTERVALS FROM EVENTS a PER k |> WHERE id >= 0 |> SELECT ts, dur, id", &want, true, 1900);
  events_ref("SELECT id, ts, k FROM sa", "SELECT id, ts, k FROM sb WHERE id % 3 = 0", false, &want);
  diff_want("INTERVALS FROM EVENTS a PER k STOP (FROM b |> WHERE id % 3 = 0) |> WHERE id >= 0 |> SELECT ts, dur, id",
            &want, true, 1900);
  events_ref("SELECT id, ts, k FROM sc", "SELECT id, ts, k FROM sb WHERE id % 2 = 0", true, &want);
  diff_want("INTERVALS FROM EVENTS c PER k STOP (FROM b |> WHERE id % 2 = 0) "
            "CLOSING LAST AT (CASE WHEN id % 5 = 1 THEN NULL ELSE ts + id % 7 END) |> WHERE id >= 0 |> SELECT ts, dur, id",
            &want, true, 1900);
  /* lanes each in time order in the input (events_in_order: no layout),
   * NULL ts and keys, ties, a NULL closing end */
  events_ref("SELECT id, ts, k FROM sa ORDER BY ts, id", NULL, true, &want);
  diff_want("INTERVALS FROM EVENTS (SELECT id, ts, k FROM sa ORDER BY ts, id) PER k "
            "CLOSING LAST AT (CASE WHEN id % 5 = 1 THEN NULL ELSE ts + id % 7 END) |> WHERE id >= 0 "
            "|> SELECT ts, dur, id",
            &want, true, 1900);
  events_ref("SELECT id, ts, k FROM sa ORDER BY ts, id", NULL, false, &want);
  diff_want("INTERVALS FROM EVENTS (SELECT id, ts, k FROM sa ORDER BY ts, id) PER k |> WHERE id >= 0 "
            "|> SELECT ts + 0 AS ts, dur, id",
            &want, true, 1900);
  /* one lane, input in time order (no sort) and shuffled */
  events_ref("SELECT id, ts, NULL FROM sb ORDER BY ts, id", NULL, false, &want);
  diff_want("INTERVALS FROM EVENTS (SELECT id, ts FROM sb ORDER BY ts, id) |> WHERE id >= 0 |> SELECT ts, dur, id", &want, true, 1900);
}
/* end §9.1 */
/* ---- §9.2 interval reshaping ------------------------------------------------ */

/* Islands of the positive valid rows of table t (columns k, ts, dur),
 * as a CTE named u(k, s, e). */
#define ISLANDS(t)                                                                                  \
  "ob AS (SELECT k, ts AS s, ts + dur AS e FROM " t " WHERE ts IS NOT NULL AND dur IS NOT NULL "    \
  "  AND dur > 0), "                                                                                \
  "om AS (SELECT *, max(e) OVER (PARTITION BY k ORDER BY s, e ROWS BETWEEN UNBOUNDED PRECEDING "    \
  "  AND 1 PRECEDING) AS pe FROM ob), "                                                             \
  "og AS (SELECT *, sum(CASE WHEN pe IS NULL OR s > pe THEN 1 ELSE 0 END) OVER (PARTITION BY k "    \
  "  ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS grp FROM om), "                                     \
  "u AS (SELECT k, min(s) AS s, max(e) AS e FROM og GROUP BY k, grp) "

static void test_subtract(void **state) {
  (void)state;
  static const char *const sql =
      "WITH " ISLANDS("sb") ", "
      "st AS (SELECT i.id, i.k, i.ts AS b0, i.ts + i.dur AS b1, i.ts AS p FROM sa i WHERE " VALID("i")
      "  UNION ALL SELECT i.id, i.k, i.ts, i.ts + i.dur, u.e FROM sa i JOIN u ON u.k IS i.k "
      "  AND u.e > i.ts AND u.e < i.ts + i.dur WHERE " VALID("i") " AND i.dur > 0), "
      "pc AS (SELECT id, k, b0, b1, p, min(b1, coalesce((SELECT min(u.s) FROM u WHERE u.k IS st.k "
      "  AND u.s > st.p), b1)) AS q FROM st WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.k IS st.k "
      "  AND u.s <= st.p AND st.p < u.e)) "
      "SELECT id, p, q - p, k FROM pc WHERE q > p OR b0 = b1 "
      "ORDER BY (SELECT min(x.id) FROM sa x WHERE x.k IS pc.k), p, id";
  diff("FROM a |> INTERVAL SUBTRACT b PER k |> WHERE id >= 0 |> SELECT id, ts, dur, k", sql, true, 500);
  /* one lane: every operand row takes from every input row (a sparse
   * operand, so that pieces remain) */
  static const char *const sql1 =
      "WITH sb1 AS (SELECT 0 AS k, ts, dur FROM sb WHERE id % 10 = 0), sa1 AS (SELECT id, 0 AS k, ts, dur FROM sa), "
      ISLANDS("sb1") ", "
      "st AS (SELECT i.id, i.ts AS b0, i.ts + i.dur AS b1, i.ts AS p FROM sa1 i WHERE " VALID("i")
      "  UNION ALL SELECT i.id, i.ts, i.ts + i.dur, u.e FROM sa1 i JOIN u "
      "  ON u.e > i.ts AND u.e < i.ts + i.dur WHERE " VALID("i") " AND i.dur > 0), "
      "pc AS (SELECT id, b0, b1, p, min(b1, coalesce((SELECT min(u.s) FROM u WHERE u.s > st.p), b1)) AS q "
      "  FROM st WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.s <= st.p AND st.p < u.e)) "
      "SELECT id, p, q - p FROM pc WHERE q > p OR b0 = b1 ORDER BY p, id";
  diff("FROM a |> INTERVAL SUBTRACT (FROM b |> WHERE id % 10 = 0 |> SELECT ts, dur) |> WHERE id >= 0 "
       "|> SELECT id, ts, dur",
       sql1, true, 100);
}

static void test_merge(void **state) {
  (void)state;
  diff("FROM a |> INTERVAL MERGE OVERLAPPING PER k AGGREGATE COUNT(*) AS n, SUM(v) AS sv, MAX(v) AS mx, "
       "COUNT(v) AS cv, MIN(id) AS first |> WHERE n > 0",
       "WITH r AS (SELECT id, k, ts, ts + dur AS e, v FROM sa WHERE " VALID("sa") "), "
       "m AS (SELECT *, max(e) OVER (PARTITION BY k ORDER BY ts, id ROWS BETWEEN UNBOUNDED PRECEDING "
       "  AND 1 PRECEDING) AS pe FROM r), "
       "g AS (SELECT *, sum(CASE WHEN pe IS NULL OR ts > pe THEN 1 ELSE 0 END) OVER (PARTITION BY k "
       "  ORDER BY ts, id ROWS UNBOUNDED PRECEDING) AS grp FROM m) "
       "SELECT min(ts), max(e) - min(ts), k, count(*), sum(v), max(v), count(v), min(id) FROM g "
       "GROUP BY k, grp ORDER BY (SELECT min(x.id) FROM sa x WHERE x.k IS g.k), min(ts)",
       true, 500);
  /* BY a value with NULLs; points and gaps end runs too */
  diff("FROM b |> EXTEND CASE WHEN id % 7 = 0 THEN NULL ELSE w % 3 END AS c "
       "|> INTERVAL MERGE CONSECUTIVE BY c PER k AGGREGATE COUNT(*) AS n, SUM(w) AS sw |> WHERE n > 0",
       "WITH r AS (SELECT id, k, ts, ts + dur AS e, c, w, row_number() OVER (PARTITION BY k ORDER BY ts, id) AS rn "
       "  FROM (SELECT *, CASE WHEN id % 7 = 0 THEN NULL ELSE w % 3 END AS c FROM sb) x WHERE " VALID("x") "), "
       "walk(k, rn, grp, c, re) AS (SELECT k, rn, 0, c, e FROM r WHERE rn = 1 "
       "  UNION ALL SELECT r.k, r.rn, CASE WHEN r.c IS walk.c AND r.ts <= walk.re THEN walk.grp ELSE walk.grp + 1 END, "
       "  r.c, CASE WHEN r.c IS walk.c AND r.ts <= walk.re THEN max(walk.re, r.e) ELSE r.e END "
       "  FROM walk JOIN r ON r.k IS walk.k AND r.rn = walk.rn + 1) "
       "SELECT min(r.ts), max(r.e) - min(r.ts), r.k, r.c, count(*), sum(r.w) FROM walk JOIN r "
       "  ON r.k IS walk.k AND r.rn = walk.rn GROUP BY r.k, walk.grp "
       "ORDER BY (SELECT min(x.id) FROM sb x WHERE x.k IS r.k), min(r.rn)",
       true, 500);
}

/* A table's rows (id, ts, dur, k) with NULL flags, read through SQLite. */
typedef struct ivrow {
  int64_t id, ts, dur, k;
  bool nts, ndur, nk;
} ivrow;

static int read_rows(const char *table, ivrow **out) {
  char sql[128];
  snprintf(sql, sizeof sql, "SELECT id, ts, dur, k FROM %s ORDER BY rowid", table);
  sqlite3_stmt *st = NULL;
  assert_int_equal(sqlite3_prepare_v2(E->db, sql, -1, &st, NULL), SQLITE_OK);
  int n = 0, cap = 0;
  ivrow *v = NULL;
  while (sqlite3_step(st) == SQLITE_ROW) {
    if (n == cap) {
      cap = cap ? 2 * cap : 1024;
      v = realloc(v, sizeof *v * (size_t)cap);
      assert_non_null(v);
    }
    ivrow *r = &v[n++];
    r->id = sqlite3_column_int64(st, 0);
    r->nts = sqlite3_column_type(st, 1) == SQLITE_NULL, r->ts = sqlite3_column_int64(st, 1);
    r->ndur = sqlite3_column_type(st, 2) == SQLITE_NULL, r->dur = sqlite3_column_int64(st, 2);
    r->nk = sqlite3_column_type(st, 3) == SQLITE_NULL, r->k = sqlite3_column_int64(st, 3);
  }
  sqlite3_finalize(st);
  *out = v;
  return n;
}

static bool same_lane(const ivrow *x, const ivrow *y) {
  return x->nk == y->nk && (x->nk || x->k == y->k);
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static void test_split(void **state) {
  (void)state;
  ivrow *in, *op;
  int n = read_rows("sa", &in), m = read_rows("sc", &op);
  lines want = {0};
  char line[128];
  int64_t *cut = malloc(sizeof *cut * (2 * (size_t)m + 2));
  assert_non_null(cut);
  for (int i = 0; i < n; i++) {
    const ivrow *r = &in[i];
    if (r->nts || r->ndur) continue;
    int64_t s = r->ts, e = r->ts + r->dur;
    int nc = 0;
    cut[nc++] = s;
    for (int j = 0; j < m; j++) {
      const ivrow *o = &op[j];
      if (o->nts || o->ndur || !same_lane(r, o)) continue;
      int64_t os = o->ts, oe = o->ts + o->dur;
      if (os > s && os < e) cut[nc++] = os;
      if (oe > s && oe < e) cut[nc++] = oe;
    }
    qsort(cut, (size_t)nc, sizeof *cut, cmp_i64);
    for (int c = 0; c < nc; c++) {
      if (c && cut[c] == cut[c - 1]) continue;
      int64_t a = cut[c], b = e;
      for (int d = c + 1; d < nc; d++)
        if (cut[d] > a) {
          b = cut[d];
          break;
        }
      int hits = 0;
      for (int j = 0; j < m; j++) {
        const ivrow *o = &op[j];
        if (o->nts || o->ndur || !same_lane(r, o)) continue;
        int64_t os = o->ts, oe = o->ts + o->dur;
        bool cover = a == b ? (o->dur == 0 ? os == a : os <= a && a < oe)
                            : o->dur > 0 && os <= a && b <= oe;
        if (!cover) continue;
        hits++;
        snprintf(line, sizeof line, "%lld|%lld|%lld|%lld", (long long)r->id, (long long)a,
                 (long long)(b - a), (long long)o->id);
        lines_add(&want, line);
      }
      if (!hits) {
        snprintf(line, sizeof line, "%lld|%lld|%lld|NULL", (long long)r->id, (long long)a, (long long)(b - a));
        lines_add(&want, line);
      }
    }
  }
  assert_true(want.n > 2 * n);
  diff_want("FROM a |> INTERVAL SPLIT c AS o PER k |> WHERE id >= 0 |> SELECT id, ts, dur, o.id AS oid", &want,
            false, 1);
  free(cut);
  free(in);
  free(op);
}

/* QUANTIZE's pieces of the valid rows, in the stage's order: lanes first
 * seen, then ts, then input order (a stable sort of the rows' pieces). */
typedef struct qpiece {
  int lane;
  int64_t ts, dur, id, bucket;
} qpiece;

static int cmp_qpiece(const void *pa, const void *pb) {
  const qpiece *a = pa, *b = pb;
  if (a->lane != b->lane) return a->lane - b->lane;
  if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

static void quantize_case(int64_t width, bool trace_start, int64_t origin) {
  ivrow *in;
  int n = read_rows("sa", &in);
  int64_t least = INT64_MAX;
  for (int i = 0; i < n; i++)
    if (!in[i].nts && !in[i].ndur && in[i].ts < least) least = in[i].ts;
  if (trace_start) origin = least;
  int *lane = malloc(sizeof *lane * (size_t)n);
  int nl = 0;
  size_t np = 0, cap = 1024;
  qpiece *pc = malloc(sizeof *pc * cap);
  assert_true(lane && pc);
  for (int i = 0; i < n; i++) {
    lane[i] = -1;
    for (int j = 0; j < i && lane[i] < 0; j++)
      if (same_lane(&in[i], &in[j])) lane[i] = lane[j];
    if (lane[i] < 0) lane[i] = nl++;
  }
  for (int i = 0; i < n; i++) {
    const ivrow *r = &in[i];
    if (r->nts || r->ndur) continue;
    int64_t t = r->ts, e = r->ts + r->dur;
    do {
      int64_t rel = t - origin;
      int64_t bk = rel >= 0 ? rel / width : -((-rel + width - 1) / width);
      int64_t nx = origin + (bk + 1) * width;
      int64_t b = nx < e ? nx : e;
      if (np == cap) pc = realloc(pc, sizeof *pc * (cap *= 2));
      pc[np++] = (qpiece){lane[i], t, b - t, r->id, bk};
      t = b;
    } while (t < e);
  }
  /* qsort is not stable: the comparator breaks every tie (id) */
  qsort(pc, np, sizeof *pc, cmp_qpiece);
  lines want = {0};
  char line[128];
  for (size_t i = 0; i < np; i++) {
    snprintf(line, sizeof line, "%lld|%lld|%lld|%lld", (long long)pc[i].id, (long long)pc[i].ts,
             (long long)pc[i].dur, (long long)pc[i].bucket);
    lines_add(&want, line);
  }
  assert_true(want.n > n);
  char pipe[256];
  if (trace_start)
    snprintf(pipe, sizeof pipe, "FROM a |> INTERVAL QUANTIZE %lldns PER k |> WHERE id >= 0 |> SELECT id, ts, dur, bucket",
             (long long)width);
  else
    snprintf(pipe, sizeof pipe,
             "FROM a |> INTERVAL QUANTIZE %lld ALIGNED TO %lld PER k |> WHERE id >= 0 |> SELECT id, ts, dur, bucket",
             (long long)width, (long long)origin);
  diff_want(pipe, &want, true, 1);
  free(pc);
  free(lane);
  free(in);
}

static void test_quantize(void **state) {
  (void)state;
  quantize_case(7, false, 3);
  quantize_case(16, false, 5000);   /* rows before the origin: negative buckets */
  quantize_case(25, true, 0);       /* TRACE START without a trace: the smallest ts */
}

/* INTERVAL UNION OF of two relations (id, ts, dur, k) by the definition:
 * per lane the elementary units (each boundary instant, and the open
 * stretch between two boundaries) in time order; at each unit every
 * combination of covering rows (NULL for none; not all NULL); a
 * combination's output row spans a run of consecutive units it holds on.
 * Lines "ts|dur|k|x|y" ordered by lane (first row with bounds), ts, zero
 * length first, then x, y (NULL last). */
typedef struct un_row {
  int64_t rank, ts, dur, k, x, y;   /* x, y: -1 for none */
  bool knull;
} un_row;

static int cmp_un(const void *p, const void *q) {
  const un_row *a = p, *b = q;
  uint64_t ax = (uint64_t)a->x, bx = (uint64_t)b->x, ay = (uint64_t)a->y, by = (uint64_t)b->y;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
  if ((a->dur == 0) != (b->dur == 0)) return a->dur == 0 ? -1 : 1;
  if (ax != bx) return ax < bx ? -1 : 1;   /* -1 as unsigned: none last */
  return ay < by ? -1 : ay > by;
}

static void union_ref(const char *sql_a, const char *sql_b, lines *out) {
  cells r[2];
  sql_cells(sql_a, 4, &r[0]);   /* id, ts, dur, k */
  sql_cells(sql_b, 4, &r[1]);
  int n = 0, cap = 1024, nl = 0;
  un_row *rows = malloc(sizeof *rows * (size_t)cap);
  /* lanes by first row with bounds */
  int64_t lk[64];
  bool lnull[64];
  for (int j = 0; j < 2; j++)
    for (int i = 0; i < r[j].n; i++) {
      if (CN(&r[j], i, 1) || CN(&r[j], i, 2)) continue;
      bool found = false;
      for (int l = 0; l < nl && !found; l++)
        found = lnull[l] == CN(&r[j], i, 3) && (lnull[l] || lk[l] == CV(&r[j], i, 3));
      if (!found) lnull[nl] = CN(&r[j], i, 3), lk[nl] = CV(&r[j], i, 3), nl++;
    }
  for (int l = 0; l < nl; l++) {
    /* the lane's rows and boundaries */
    int64_t *bd = malloc(sizeof *bd * (size_t)(2 * (r[0].n + r[1].n) + 1));
    int nb = 0;
    for (int j = 0; j < 2; j++)
      for (int i = 0; i < r[j].n; i++) {
        if (CN(&r[j], i, 1) || CN(&r[j], i, 2)) continue;
        if (!(lnull[l] ? CN(&r[j], i, 3) : !CN(&r[j], i, 3) && CV(&r[j], i, 3) == lk[l])) continue;
        bd[nb++] = CV(&r[j], i, 1);
        bd[nb++] = CV(&r[j], i, 1) + CV(&r[j], i, 2);
      }
    for (int a = 1; a < nb; a++)   /* insertion sort, then unique */
      for (int b = a; b > 0 && bd[b - 1] > bd[b]; b--) {
        int64_t t = bd[b];
        bd[b] = bd[b - 1];
        bd[b - 1] = t;
      }
    int nu = 0;
    for (int a = 0; a < nb; a++)
      if (!nu || bd[nu - 1] != bd[a]) bd[nu++] = bd[a];
    /* open combinations: (x, y, start, seen at this unit) */
    int64_t open[4096][3];
    int nopen = 0;
    for (int unit = 0; unit < 2 * nu - 1; unit++) {
      bool instant = unit % 2 == 0;
      int64_t t0 = bd[unit / 2], t1 = instant ? t0 : bd[unit / 2 + 1];
      int cov[2][512], nc[2] = {0, 0};
      for (int j = 0; j < 2; j++) {
        for (int i = 0; i < r[j].n; i++) {
          if (CN(&r[j], i, 1) || CN(&r[j], i, 2)) continue;
          if (!(lnull[l] ? CN(&r[j], i, 3) : !CN(&r[j], i, 3) && CV(&r[j], i, 3) == lk[l])) continue;
          int64_t s = CV(&r[j], i, 1), e = s + CV(&r[j], i, 2);
          bool holds = instant ? (s == e ? s == t0 : s <= t0 && t0 < e) : (s < e && s <= t0 && t1 <= e);
          if (holds) cov[j][nc[j]++] = (int)CV(&r[j], i, 0);
        }
        if (!nc[j]) cov[j][nc[j]++] = -1;
      }
      bool seen[4096] = {false};
      for (int x = 0; x < nc[0]; x++)
        for (int y = 0; y < nc[1]; y++) {
          if (cov[0][x] < 0 && cov[1][y] < 0) continue;
          int o = 0;
          while (o < nopen && !(open[o][0] == cov[0][x] && open[o][1] == cov[1][y])) o++;
          if (o == nopen) {
            open[nopen][0] = cov[0][x], open[nopen][1] = cov[1][y], open[nopen][2] = t0;
            nopen++;
          }
          seen[o] = true;
        }
      /* combinations that do not hold here ended where this unit starts */
      for (int o = 0; o < nopen;) {
        if (seen[o]) {
          o++;
          continue;
        }
        if (n == cap) rows = realloc(rows, sizeof *rows * (size_t)(cap *= 2));
        rows[n++] = (un_row){l, open[o][2], t0 - open[o][2], lk[l], open[o][0], open[o][1], lnull[l]};
        /* a point-only stretch ends at its instant: t0 of the next unit */
        memmove(open[o], open[o + 1], sizeof open[0] * (size_t)(nopen - o - 1));
        memmove(&seen[o], &seen[o + 1], sizeof seen[0] * (size_t)(nopen - o - 1));
        nopen--;
      }
    }
    for (int o = 0; o < nopen; o++) {   /* the last unit is the last instant */
      if (n == cap) rows = realloc(rows, sizeof *rows * (size_t)(cap *= 2));
      rows[n++] = (un_row){l, open[o][2], bd[nu - 1] - open[o][2], lk[l], open[o][0], open[o][1], lnull[l]};
    }
    free(bd);
  }
  qsort(rows, (size_t)n, sizeof *rows, cmp_un);
  char line[160], xs[24], ys[24], ks[24];
  for (int i = 0; i < n; i++) {
    snprintf(xs, sizeof xs, rows[i].x < 0 ? "NULL" : "%lld", (long long)rows[i].x);
    snprintf(ys, sizeof ys, rows[i].y < 0 ? "NULL" : "%lld", (long long)rows[i].y);
    snprintf(ks, sizeof ks, rows[i].knull ? "NULL" : "%lld", (long long)rows[i].k);
    snprintf(line, sizeof line, "%lld|%lld|%s|%s|%s", (long long)rows[i].ts, (long long)rows[i].dur, ks, xs, ys);
    lines_add(out, line);
  }
  free(rows);
  cells_free(&r[0]);
  cells_free(&r[1]);
}

static void test_union(void **state) {
  (void)state;
  lines want = {0};
  /* a: NULL bounds and keys, points (dur 0 every 7th row); c overlaps itself */
  union_ref("SELECT id, ts, dur, k FROM sa WHERE id < 600", "SELECT id, ts, dur, k FROM sc WHERE id < 600", &want);
  diff_want("INTERVAL UNION OF ((FROM a |> WHERE id < 600) AS x, (FROM c |> WHERE id < 600) AS y) PER k "
            "|> WHERE dur >= 0 |> SELECT ts, dur, k, x.id AS xi, y.id AS yi",
            &want, true, 500);
  union_ref("SELECT id, ts, dur, 0 FROM sb WHERE id < 400", "SELECT id, ts, dur, 0 FROM sh WHERE id < 100", &want);
  diff_want("INTERVAL UNION OF ((FROM b |> WHERE id < 400) AS x, (FROM h |> WHERE id < 100) AS y) "
            "|> EXTEND 0 AS k |> SELECT ts, dur, k, x.id AS xi, y.id AS yi",
            &want, true, 500);
  /* lanes whose operands do not overlap themselves (rt_union_run's
   * merge of one row per operand) beside lanes that do */
  union_ref("SELECT id, ts, dur, k FROM sdj", "SELECT id, ts, dur, k FROM sdk", &want);
  diff_want("INTERVAL UNION OF (dj AS x, dk AS y) PER k |> WHERE dur >= 0 |> SELECT ts, dur, k, x.id AS xi, y.id AS yi",
            &want, true, 1000);
  union_ref("SELECT id, ts, dur, k FROM sdk", "SELECT id, ts, dur, k FROM sdj WHERE k < 3", &want);
  diff_want("INTERVAL UNION OF (dk AS x, (FROM dj |> WHERE k < 3) AS y) PER k "
            "|> WHERE dur >= 0 |> SELECT ts, dur, k, x.id AS xi, y.id AS yi",
            &want, true, 500);
}

/* The input of find_case, and what its pipeline ends with: a in table
 * order, or in time order (the probe's searches then gallop on from the
 * lane's last one) with the rows put back in id order. */
static const char *g_find_in = "FROM a", *g_find_end = "";

/* INTERVAL FIND against SQLite: the nearest key by a correlated subquery
 * (ties by operand rowid); key, anchor and the comparison by variant. */
static void find_case(const char *variant, const char *key, const char *anchor, bool before,
                      const char *within, bool left) {
  char pipe[512], sql[2048], cond[256] = "";
  snprintf(pipe, sizeof pipe,
           "%s |> %sINTERVAL FIND o AS m %s%s%s PER k |> WHERE id >= 0 |> SELECT id, m.id AS mid%s",
           g_find_in, left ? "LEFT " : "", variant, within ? " WITHIN " : "", within ? within : "",
           g_find_end);
  if (within) snprintf(cond, sizeof cond, " AND abs(%s - %s) <= %s", key, anchor, within);
  snprintf(sql, sizeof sql,
           "SELECT * FROM (SELECT i.id, (SELECT o.id FROM so o WHERE o.k IS i.k AND " VALID("o") " AND " VALID("i")
           " AND (%s) IS NOT NULL AND (%s) IS NOT NULL AND %s %s %s%s ORDER BY %s%s, o.rowid LIMIT 1) AS mid FROM sa i) "
           "%s ORDER BY id",
           key, anchor, key, before ? "<=" : ">=", anchor, cond, key, before ? " DESC" : "",
           left ? "" : "WHERE mid IS NOT NULL");
  diff(pipe, sql, true, 100);
}

static void test_find(void **state) {
  (void)state;
#define OSTART "o.ts"
#define OEND "(CASE WHEN o.dur >= 0 THEN o.ts + o.dur END)"
#define ISTART "i.ts"
#define IEND "(CASE WHEN i.dur >= 0 THEN i.ts + i.dur END)"
  for (int sorted = 0; sorted < 2; sorted++) {
    g_find_in = sorted ? "FROM a |> ORDER BY ts, id" : "FROM a";
    g_find_end = sorted ? " |> ORDER BY id" : "";
    find_case("STARTING AFTER BEGIN", OSTART, ISTART, false, NULL, false);
    find_case("STARTING AFTER END", OSTART, IEND, false, NULL, true);
    find_case("STARTING BEFORE BEGIN", OSTART, ISTART, true, NULL, true);
    find_case("ENDING BEFORE END", OEND, IEND, true, NULL, false);
    find_case("ENDING AFTER BEGIN", OEND, ISTART, false, "30", true);
    find_case("ENDING BEFORE BEGIN", OEND, ISTART, true, "10", false);
    find_case("ENDING BEFORE BEGIN", OEND, ISTART, true, NULL, true);
  }
  g_find_in = "FROM a", g_find_end = "";
}

/* INTERVAL KEEP IF / DROP IF against SQLite: the operand's union per lane
 * by gaps and islands (a row starts an island when it starts after every
 * earlier row's end), points no piece holds kept apart; then EXISTS with
 * INTERVAL JOIN's relationship table (REL). */
#define PIECES \
  "WITH r AS (SELECT k, ts AS s, CASE WHEN dur < 0 THEN 9223372036854775807 ELSE ts + dur END AS e, dur = 0 AS pt " \
  "  FROM so WHERE ts IS NOT NULL AND dur IS NOT NULL), " \
  "pos AS (SELECT k, s, e FROM r WHERE NOT pt), " \
  "ord AS (SELECT k, s, e, max(e) OVER (PARTITION BY k ORDER BY s, e ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pe FROM pos), " \
  "isl AS (SELECT k, s, e, sum(CASE WHEN pe IS NULL OR s > pe THEN 1 ELSE 0 END) OVER (PARTITION BY k ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS g FROM ord), " \
  "pieces AS (SELECT k, min(s) AS ts, CASE WHEN max(e) = 9223372036854775807 THEN -1 ELSE max(e) - min(s) END AS dur FROM isl GROUP BY k, g " \
  "  UNION ALL SELECT DISTINCT k, s, 0 FROM r WHERE pt AND NOT EXISTS (SELECT 1 FROM pos p WHERE p.k IS r.k AND p.s <= r.s AND r.s < p.e)) "

static void keep_case(const char *rel, const char *cond) {
  for (int drop = 0; drop < 2; drop++) {
    char pipe[512], sql[4096];
    snprintf(pipe, sizeof pipe, "FROM a |> INTERVAL %s IF %s o PER k |> WHERE id >= 0 |> SELECT id, v",
             drop ? "DROP" : "KEEP", rel);
    snprintf(sql, sizeof sql,
             PIECES "SELECT i.id, i.v FROM sa i WHERE %s(" VALID("i") " AND EXISTS (SELECT 1 FROM pieces o WHERE o.k IS i.k AND %s)) ORDER BY i.id",
             drop ? "NOT " : "", cond);
    diff(pipe, sql, true, 20);
  }
}

static void test_keep(void **state) {
  (void)state;
  keep_case("OVERLAPPING BOUNDS", REL("o.ts < " IE " AND i.ts < " OE, "o.ts <= i.ts AND i.ts < " OE, "i.ts <= o.ts AND o.ts < " IE));
  keep_case("COVERING BEGIN", REL("o.ts <= i.ts AND i.ts < " OE, "o.ts <= i.ts AND i.ts < " OE, "o.ts = i.ts"));
  keep_case("COVERING END", REL("o.ts < " IE " AND " IE " <= " OE, "o.ts <= i.ts AND i.ts < " OE, "0"));
  keep_case("COVERING BOUNDS", REL("o.ts <= i.ts AND " IE " <= " OE, "o.ts <= i.ts AND i.ts < " OE, "0"));
  keep_case("WITHIN BOUNDS", REL("i.ts <= o.ts AND " OE " <= " IE, "0", "i.ts <= o.ts AND o.ts < " IE));
}
/* end §9.1 / §9.3 */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_intersect_two),
      cmocka_unit_test(test_intersect_three),
      cmocka_unit_test(test_intersect_many_overlaps),
      cmocka_unit_test(test_flatten),
      cmocka_unit_test(test_join),
      cmocka_unit_test(test_events),   /* §9.1 (ivsrc) */
      cmocka_unit_test(test_subtract),
      cmocka_unit_test(test_merge),
      cmocka_unit_test(test_split),
      cmocka_unit_test(test_quantize),
      cmocka_unit_test(test_union),   /* §9.1, §9.3 */
      cmocka_unit_test(test_find),
      cmocka_unit_test(test_keep),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
