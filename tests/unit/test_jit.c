/*
 * test_jit.c — the JIT backend against the interpreter.
 *
 * Every query here is bound once and run twice through the exec driver:
 * once with vm_run_batch for every segment, once with the segment
 * functions cg_compile made. The results must be identical bit for bit
 * (values, NULLs, row order), and so must errors (message and offset).
 * The JIT run must also never have fallen back to the interpreter in a
 * compiled segment (the fallback allocates ex_seg.vm, so it shows), or the
 * comparison would prove nothing. The table has 20,000 rows (three batches), NULLs in
 * every column, negative numbers, strings and one huge value that makes
 * arithmetic overflow in a chosen batch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "codegen/cg.h"
#include "interp/vm.h"
#include "api/engine.h"

static pj_engine *E;
static cg_jit *J;

static const char *SETUP =
    "CREATE PERFETTO TABLE t AS "
    "WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i < 19999) "
    "SELECT i AS id, i % 16 AS k, "
    "  CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 7919) % 2001 - 1000 END AS a, "
    "  CASE WHEN i % 13 = 0 THEN NULL ELSE (i * 104729) % 3000000 - 1000000 END AS b, "
    "  CASE WHEN i % 17 = 0 THEN NULL ELSE (i % 1000) * 0.25 - 50 END AS c, "
    "  CASE WHEN i % 19 = 0 THEN NULL ELSE 'n' || (i % 37) END AS s, "
    "  CASE WHEN i = 12345 THEN 9223372036854775000 ELSE i END AS big, "
    "  CASE WHEN i % 5 = 0 THEN NULL ELSE i % 7 END AS g "
    "FROM r;"
    "CREATE PERFETTO TABLE small AS SELECT 1 AS x, 'a' AS y UNION ALL SELECT NULL, NULL "
    "UNION ALL SELECT -3, 'b';";

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

typedef struct outcome {
  int rc;
  rt_err err;
  rt_rowbuf result;
  int fell_back;
} outcome;

static void run_plan(pj_query *q, const ex_value *params, cg_module *code, outcome *o) {
  ex_run run;
  ex_run_init(&run, q->plan, E->strings, E->db, q->nparams, params);
  o->rc = code ? ex_run_plan(&run, pick_jit, code) : ex_run_plan(&run, pick_interp, NULL);
  o->err = run.err;
  o->fell_back = 0;
  for (int i = 0; i < run.nsegs; i++)
    if (code && cg_segment_compiled(code, i)) o->fell_back |= run.segs[i].vm != NULL;
  o->result = run.result;
  memset(&run.result, 0, sizeof run.result);   /* keep it past ex_run_free */
  ex_run_free(&run);
}

static void compare(const char *text, const outcome *a, const outcome *b) {
  if (a->rc != b->rc || strcmp(a->err.msg, b->err.msg) != 0 || a->err.offset != b->err.offset) {
    fprintf(stderr, "query: %s\ninterp: rc %d '%s' @%d\njit:    rc %d '%s' @%d\n", text, a->rc,
            a->err.msg, a->err.offset, b->rc, b->err.msg, b->err.offset);
    fail();
  }
  if (a->rc != 0) return;
  const rt_rowbuf *x = &a->result, *y = &b->result;
  assert_int_equal(x->ncols, y->ncols);
  if (x->nrows != y->nrows) {
    fprintf(stderr, "query: %s\nrows: interp %lld, jit %lld\n", text, (long long)x->nrows,
            (long long)y->nrows);
    fail();
  }
  for (int c = 0; c < x->ncols; c++) {
    assert_int_equal(x->types[c], y->types[c]);
    size_t w = rt_type_size(x->types[c]);
    for (int64_t r = 0; r < x->nrows; r++) {
      bool vx = rt_bit(x->valid[c], (uint32_t)r), vy = rt_bit(y->valid[c], (uint32_t)r);
      bool same = vx == vy && (!vx || memcmp((char *)x->data[c] + r * w, (char *)y->data[c] + r * w, w) == 0);
      if (!same) {
        fprintf(stderr, "query: %s\nrow %lld column %d differs (valid %d/%d)\n", text, (long long)r,
                c, vx, vy);
        fail();
      }
    }
  }
}

/* Runs text on both backends (JIT at opt level `opt`) and compares. */
static void both_at(const char *text, const ex_value *params, int opt, int expect_error) {
  pj_query *q = NULL;
  if (pj_query_compile(E, text, &q) != PJ_OK) {
    fprintf(stderr, "compile: %s: %s\n", text, pj_engine_errmsg(E));
    fail();
  }
  ex_value none[1] = {{.type = RT_NULLT}};
  const ex_value *pv = params ? params : none;
  rt_err err = {.offset = -1};
  cg_module *code = cg_compile(J, q->plan, opt, &err);
  if (!code) {
    fprintf(stderr, "cg_compile: %s: %s\n", text, err.msg);
    fail();
  }
  outcome a, b;
  run_plan(q, pv, NULL, &a);
  run_plan(q, pv, code, &b);
  compare(text, &a, &b);
  if (b.fell_back) {
    fprintf(stderr, "query: %s\nthe JIT run fell back to the interpreter\n", text);
    fail();
  }
  if ((a.rc != 0) != expect_error) {
    fprintf(stderr, "query: %s\nexpected %s, got '%s'\n", text, expect_error ? "an error" : "rows",
            a.err.msg);
    fail();
  }
  rt_rowbuf_free(&a.result);
  rt_rowbuf_free(&b.result);
  cg_module_free(code);
  pj_query_free(q);
}

static void both(const char *text) { both_at(text, NULL, 2, 0); }
static void both_err(const char *text) { both_at(text, NULL, 2, 1); }

static void test_filters_and_arith(void **state) {
  (void)state;
  both("FROM t |> WHERE a > 5 AND b < 1000000 |> SELECT id, a * 3 + b AS x, (a - b) * 2 AS y, c * 0.5 AS z");
  both("FROM t |> WHERE a % 7 = 3 OR b IS NULL |> SELECT k, a + b AS s");
  both("FROM t |> EXTEND a / (k - 3) AS q, a % (k - 3) AS m, c / (k - 3) AS fq, -a AS na, ~a AS bn |> SELECT q, m, fq, na, bn");
  both("FROM t |> EXTEND a & 255 AS x, a | b AS y, a << k AS l, b >> (k - 8) AS r, k << 70 AS huge |> SELECT x, y, l, r, huge");
  both("FROM t |> WHERE NOT (a > 0) OR (c < 0 AND s IS NOT NULL) |> SELECT id");
  both("FROM t |> WHERE a IS b OR a IS NOT NULL AND b IS NULL |> SELECT id, a, b");
  both("FROM t |> EXTEND a IN (1, 2, 3, -5, b) AS i1, a NOT IN (k, 7) AS i2, s IN ('n1', 'n2', NULL) AS i3 |> SELECT i1, i2, i3");
  both("FROM t |> WHERE c BETWEEN -10 AND 10.5 |> SELECT id, c, c + a AS ca, c * k AS ck");
  both("FROM t |> SELECT abs(a) AS x, abs(c) AS y, min(a, b, k) AS mn, max(c, 0.0) AS mx, min(s, 'n2') AS ms");
}

static void test_lazy_and_strings(void **state) {
  (void)state;
  both("FROM t |> SELECT CASE WHEN a > 500 THEN 'hi' WHEN a < -500 THEN s ELSE NULL END AS c1, "
       "CASE k WHEN 1 THEN a WHEN 2 THEN b END AS c2, iif(c > 0, c, -c) AS c3");
  both("FROM t |> SELECT coalesce(a, b, k) AS x, ifnull(s, 'none') AS y, nullif(k, 3) AS z, coalesce(c, a) AS w");
  both("FROM t |> WHERE s LIKE 'N1%' OR s GLOB 'n2?' |> SELECT id, s, upper(s) AS u, lower('AbC' || s) AS l");
  both("FROM t |> SELECT length(s) AS n, substr(s, 2) AS s2, substr(s, -2, 1) AS s3, instr(s, '3') AS i, "
       "trim(' ' || s || ' ') AS tr, ltrim(s, 'n') AS lt, rtrim(s, '0123') AS rt");
  both("FROM t |> SELECT CAST(a AS TEXT) AS t1, CAST(c AS TEXT) AS t2, CAST(s AS INTEGER) AS i1, "
       "CAST(c AS INTEGER) AS i2, CAST('1.5e3' AS REAL) AS r1, a || s AS cat");
  both("FROM t |> WHERE s > 'n2' AND s <= 'n5' |> SELECT s");
  /* the right side of AND / OR runs only when the left does not decide */
  both("FROM t |> WHERE id <> 12345 AND big * 2 > 0 |> SELECT id");
  both("FROM t |> WHERE id = 12345 OR big * 2 > 0 |> SELECT id");
  both("FROM t |> SELECT CASE WHEN id = 12345 THEN 0 ELSE big * 2 END AS safe");
}

static void test_sinks(void **state) {
  (void)state;
  both("FROM t |> WHERE a > 5 AND b < 1000000 |> EXTEND a * 3 + b AS x, (a - b) * 2 AS y, c * 0.5 AS z "
       "|> AGGREGATE SUM(x) AS sx, SUM(y) AS sy, AVG(z) AS az, COUNT(*) AS n GROUP BY k");
  both("FROM t |> AGGREGATE COUNT(*) AS n, COUNT(a) AS na, SUM(c) AS sc, MIN(a) AS mn, MAX(c) AS mx, "
       "MIN(s) AS ms, MAX(s) AS xs, ANY_VALUE(s) AS av, AVG(a) AS aa GROUP BY g");
  both("FROM t |> AGGREGATE COUNT(*) AS n, SUM(a) AS sa GROUP BY s");
  both("FROM t |> AGGREGATE COUNT(*) AS n, SUM(b) AS sb GROUP BY k, s");
  both("FROM t |> AGGREGATE COUNT(*) AS n, MAX(b) AS mb GROUP BY c");
  both("FROM t |> AGGREGATE COUNT(*) AS n, SUM(a) AS s, AVG(c) AS av");
  both("FROM t |> WHERE id < 0 |> AGGREGATE COUNT(*) AS n, SUM(a) AS s");
  both("FROM t |> ORDER BY b DESC, id |> WHERE a > 0 |> SELECT id, a, b |> LIMIT 50 OFFSET 10");
  both("FROM t |> ORDER BY c NULLS LAST |> AGGREGATE SUM(a) AS s GROUP BY k |> ORDER BY k");
  both("FROM t |> LIMIT 9000 OFFSET 100 |> WHERE a > 0 |> LIMIT 3000 |> SELECT id");
  both("FROM t |> LIMIT 0 |> SELECT id");
  both("FROM small |> AGGREGATE COUNT(*) AS n, MIN(y) AS m GROUP BY x");
  both("FROM small |> SELECT x, y, x + 1 AS z, y || '!' AS w");
}

static void test_errors(void **state) {
  (void)state;
  both_err("FROM t |> EXTEND big + 1000 AS x |> SELECT x");
  both_err("FROM t |> WHERE a * 92233720368547758 > 0 |> SELECT id");
  both_err("FROM t |> AGGREGATE SUM(big) AS s, SUM(big) AS s2 GROUP BY k = 9 AS nine");
  both_err("FROM t |> SELECT abs(big - 9223372036854775000 - 9223372036854775807 - 1) AS x");
  /* Two stages fail in one batch, the later stage on an earlier row: the
   * interpreter reports the earlier stage, and so must the JIT. */
  both_err("FROM t |> WHERE big + 1000 > 0 "
           "|> EXTEND CASE WHEN id > 9000 THEN a * 100000000000000000 ELSE 0 END AS y |> SELECT y");
  both_err("FROM t |> EXTEND CASE WHEN id > 9000 THEN a * 100000000000000000 ELSE 0 END AS y "
           "|> AGGREGATE SUM(big) AS s");
  both_err("FROM t |> WHERE id >= 0 |> EXTEND -(big - 9223372036854775000 - 9223372036854775807 - 1) AS n |> SELECT n");
  both_err("FROM t |> SELECT (big - 9223372036854775000 - 9223372036854775807 - 1) / -1 AS n");
}

/* A string longer than the pool holds stops the query with "string too
 * long" in both backends, at the same stage; never an empty string. The
 * engine's limit is lowered for the test (4 GiB otherwise). */
static void test_string_too_long(void **state) {
  (void)state;
  rt_strpool_set_max_len(E->strings, 20);
  const char *text = "FROM t |> WHERE id < 50 |> EXTEND s || s || s || s || s || 'a long tail' AS x "
                     "|> SELECT x";
  both_err(text);
  pj_query *q = NULL;
  assert_int_equal(pj_query_compile(E, text, &q), PJ_OK);
  outcome o;
  ex_value none[1] = {{.type = RT_NULLT}};
  run_plan(q, none, NULL, &o);
  assert_string_equal(o.err.msg, "EXTEND: string too long: a string holds at most 20 bytes");
  rt_rowbuf_free(&o.result);
  pj_query_free(q);
  both_err("FROM t |> WHERE id < 50 |> SELECT upper(s || s || s || s || s || s || s) AS x");
  both_err("FROM t |> WHERE id < 50 |> SELECT CAST(big + 1000000000000 AS TEXT) || s || s || s || s AS x");
  rt_strpool_set_max_len(E->strings, SIZE_MAX);
  both("FROM t |> WHERE id < 50 |> EXTEND s || s || s || s || s || 'a long tail' AS x |> SELECT x");
}

static void test_params_and_levels(void **state) {
  (void)state;
  ex_value p[3] = {{.type = RT_NULLT}, {.type = RT_I64, .i = 100}, {.type = RT_I64, .i = 7}};
  both_at("FROM t |> WHERE a > ? AND k != ? |> AGGREGATE COUNT(*) AS n, SUM(a) AS s GROUP BY k", p, 2, 0);
  p[1].type = RT_NULLT;
  both_at("FROM t |> WHERE a > ? AND k != ? |> AGGREGATE COUNT(*) AS n, SUM(a) AS s GROUP BY k", p, 2, 0);
  for (int opt = 0; opt <= 3; opt++) {
    both_at("FROM t |> WHERE a > 5 AND b < 1000000 |> EXTEND a * 3 + b AS x |> AGGREGATE SUM(x) AS sx, "
            "MIN(s) AS m GROUP BY k", NULL, opt, 0);
    both_at("FROM t |> ORDER BY a |> SELECT id, coalesce(s, 'x') || a AS w |> LIMIT 100", NULL, opt, 0);
    both_at("FROM t |> EXTEND big + 1000 AS x |> SELECT x", NULL, opt, 1);
  }
}

/* The public API: a handle compiled once runs again with new parameter
 * values, and its dumps show one fused loop. */
static void test_handle(void **state) {
  (void)state;
  pj_engine_set_mode(E, PJ_MODE_JIT);
  pj_query *q = NULL;
  assert_int_equal(pj_query_compile(E, "FROM t |> WHERE a > $lo |> AGGREGATE SUM(a) AS s GROUP BY k |> ORDER BY k", &q), PJ_OK);
  int idx = pj_query_param_index(q, "$lo");
  assert_true(idx > 0);
  int64_t sums[2];
  for (int run = 0; run < 2; run++) {
    assert_int_equal(pj_query_bind_int64(q, idx, run ? 900 : 0), PJ_OK);
    pj_result *r = NULL;
    assert_int_equal(pj_query_run(q, &r), PJ_OK);
    pj_timing tm;
    pj_engine_last_timing(E, &tm);
    assert_int_equal(tm.used_jit, 1);
    assert_int_equal(pj_result_row_count(r), 16);
    sums[run] = pj_result_int64(r, 0, 1);
    pj_result_free(r);
  }
  assert_true(sums[0] > sums[1]);
  assert_true(sums[1] > 0);
  const char *ir = pj_query_llvm_ir(q, 1);
  assert_non_null(ir);
  assert_non_null(strstr(ir, "where.pass"));
  assert_non_null(strstr(ir, "agg.probe"));
  assert_non_null(strstr(ir, "llvm.sadd.with.overflow"));
  const char *raw = pj_query_llvm_ir(q, 0);
  assert_non_null(raw);
  assert_non_null(strstr(raw, "%a = load"));
  const char *as = pj_query_asm(q);
  assert_non_null(as);
  assert_non_null(strstr(as, "seg0"));
  pj_query_free(q);
  pj_engine_set_mode(E, PJ_MODE_AUTO);
}

/* ---- TREE ACCUMULATE --------------------------------------------------- */

/* Tables of trees, made once: the sample trace's slice (ids are the row
 * index: the TABLE tier), and SQLite tables read through subqueries:
 *   forest: 3000 rows in scrambled order, ids i * 7 + 3, parent i / 3
 *           (every 97th a root), NULLs in v, doubles in f (the hash tier
 *           and the CSR walk);
 *   dense:  ids 0, 1, 2, … with parent i / 2 for the first 5000 rows, then
 *           ids i * 3: the dense tier gives way to the hash map in the
 *           middle of a batch;
 *   big:    a chain whose UP sums overflow int64. */
static const char *TREE_SETUP =
    "CREATE TABLE forest AS WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i < 2999) "
    "SELECT i * 7 + 3 AS id, CASE WHEN i % 97 = 0 THEN NULL ELSE (i / 3) * 7 + 3 END AS parent_id, "
    "  CASE WHEN i % 5 = 2 THEN NULL ELSE (i * 7919) % 1001 - 500 END AS v, "
    "  CASE WHEN i % 7 = 3 THEN NULL ELSE (i % 100) * 0.5 - 20 END AS f, "
    "  'n' || i AS sid, CASE WHEN i % 97 = 0 THEN NULL ELSE 'n' || (i / 3) END AS spid "
    "FROM r ORDER BY (i * 2654435761) % 3001;"
    "CREATE TABLE dense AS WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i < 11999) "
    "SELECT CASE WHEN i < 5000 THEN i ELSE i * 3 END AS id, "
    "  CASE WHEN i = 0 THEN NULL WHEN i / 2 < 5000 THEN i / 2 ELSE (i / 2) * 3 END AS parent_id, "
    "  i % 13 AS v FROM r;"
    "CREATE TABLE big AS WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i < 9) "
    "SELECT i AS id, CASE WHEN i = 0 THEN NULL ELSE i - 1 END AS parent_id, 4611686018427387904 AS v FROM r;"
    "CREATE TABLE bad AS SELECT 1 AS id, NULL AS parent_id UNION ALL SELECT 2, 1 UNION ALL SELECT 3, 4 "
    "UNION ALL SELECT 4, 3 UNION ALL SELECT 5, 1;"
    /* Columnar tables numbered by row index, for the in-place tree order:
     * tmix in neither order (row i has key (i * 7919) % 20000, a key's
     * parent is key / 3: the walk's permutation over table rows); tcf
     * child-first (each parent after its children), NULLs in v. */
    "CREATE TABLE mixk AS WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i < 19999) "
    "  SELECT i, (i * 7919) % 20000 AS k FROM r;"
    "CREATE INDEX mixk_k ON mixk(k);"
    "CREATE PERFETTO TABLE tmix AS SELECT a.i AS id, b.i AS parent_id, "
    "  CASE WHEN a.i % 11 = 4 THEN NULL ELSE a.i % 1000 - 300 END AS v "
    "  FROM mixk a LEFT JOIN mixk b ON b.k = a.k / 3 AND a.k > 0 ORDER BY a.i;"
    "CREATE PERFETTO TABLE tcf AS WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i < 19999) "
    "  SELECT i AS id, CASE WHEN i % 53 = 52 OR i = 19999 THEN NULL ELSE i + 1 + (i % 3) * (i + 1 < 19998) END AS parent_id, "
    "  CASE WHEN i % 9 = 1 THEN NULL ELSE i % 77 END AS v FROM r;";

/* Every segment holding a tree step must run machine code. */
static void tree_compiled(const char *text) {
  pj_query *q = NULL;
  assert_int_equal(pj_query_compile(E, text, &q), PJ_OK);
  rt_err err = {.offset = -1};
  cg_module *code = cg_compile(J, q->plan, 2, &err);
  assert_non_null(code);
  int ntree = 0;
  for (int s = 0; s < q->plan->nsegs; s++) {
    const ir_segment *seg = &q->plan->segs[s];
    bool tree = false;
    for (int k = 0; k < seg->nsteps; k++)
      tree |= !seg->steps[k]->dead &&
              (seg->steps[k]->kind == IR_TREE_NUMBER || seg->steps[k]->kind == IR_TREE_ACC);
    if (!tree) continue;
    ntree++;
    if (!cg_segment_compiled(code, s)) {
      fprintf(stderr, "query: %s\nsegment %d (tree steps) is not compiled\n", text, s);
      fail();
    }
  }
  assert_true(ntree > 0);
  cg_module_free(code);
  pj_query_free(q);
}

/* The query's TREE_ORDER reads its table in place (ir/plan.h tree_table). */
static void tree_in_place(const char *text) {
  pj_query *q = NULL;
  assert_int_equal(pj_query_compile(E, text, &q), PJ_OK);
  bool in_place = false;
  for (int i = 0; i < q->plan->nops; i++)
    in_place |= ir_tree_in_place(q->plan->ops[i]);
  if (!in_place) fprintf(stderr, "query: %s\nthe tree order is not in place\n", text);
  assert_true(in_place);
  pj_query_free(q);
}

static void tree_both(const char *text) {
  tree_compiled(text);
  both(text);
}

static void tree_both_err(const char *text, const char *msg) {
  tree_compiled(text);
  both_err(text);
  pj_query *q = NULL;
  assert_int_equal(pj_query_compile(E, text, &q), PJ_OK);
  rt_err err = {.offset = -1};
  cg_module *code = cg_compile(J, q->plan, 2, &err);
  assert_non_null(code);
  outcome o;
  ex_value none[1] = {{.type = RT_NULLT}};
  run_plan(q, none, code, &o);
  if (!strstr(o.err.msg, msg)) {
    fprintf(stderr, "query: %s\nexpected '%s', got '%s'\n", text, msg, o.err.msg);
    fail();
  }
  rt_rowbuf_free(&o.result);
  cg_module_free(code);
  pj_query_free(q);
}

static int tree_setup(void **state) {
  (void)state;
  if (pj_engine_load_sample_trace(E, 30000) != PJ_OK) return -1;
  if (pj_engine_exec(E, TREE_SETUP, NULL, NULL) != PJ_OK) {
    fprintf(stderr, "tree setup: %s\n", pj_engine_errmsg(E));
    return -1;
  }
  return 0;
}

static void test_tree_slice(void **state) {
  (void)state;
  /* the benchmark query: accumulation and aggregate in one loop */
  tree_both("FROM slice |> TREE ACCUMULATE UP SUM(dur) AS t |> AGGREGATE SUM(t) AS s, MAX(t) AS m");
  tree_both("FROM slice |> TREE ACCUMULATE DOWN SUM(dur) AS t |> AGGREGATE SUM(t) AS s, MAX(t) AS m");
  /* the table read in place: backwards, forwards (no selection), through
   * the walk's permutation; compiled for table views, no fallback */
  tree_in_place("FROM slice |> TREE ACCUMULATE UP SUM(dur) AS t |> AGGREGATE SUM(t) AS s, MAX(t) AS m");
  tree_in_place("FROM tmix |> TREE ACCUMULATE UP SUM(v) AS s |> SELECT id, s");
  for (int up = 0; up < 2; up++) {
    char q[256];
    const char *dir = up ? "UP" : "DOWN";
    snprintf(q, sizeof q, "FROM tmix |> TREE ACCUMULATE %s SUM(v) AS s, MIN(v) AS lo, COUNT(v) AS c "
             "|> SELECT id, s, lo, c", dir);
    tree_both(q);
    snprintf(q, sizeof q, "FROM tcf |> TREE ACCUMULATE %s SUM(v) AS s, MAX(v) AS hi |> SELECT id, s, hi", dir);
    tree_both(q);
    snprintf(q, sizeof q, "FROM tcf |> TREE ACCUMULATE %s SUM(v) AS s |> AGGREGATE SUM(s) AS t, MAX(s) AS m", dir);
    tree_both(q);
  }
  tree_both("FROM slice |> TREE ACCUMULATE UP SUM(dur) AS t, COUNT(*) AS n, MIN(ts) AS lo, MAX(depth) AS d "
            "|> SELECT id, t, n, lo, d");
  tree_both("FROM slice |> TREE ACCUMULATE DOWN SUM(dur) AS t, COUNT(*) AS n, MIN(dur) AS lo, MAX(dur) AS hi "
            "|> SELECT id, t, n, lo, hi");
  /* filtered: no longer the TABLE tier */
  tree_both("FROM slice |> WHERE depth < 3 |> TREE ACCUMULATE UP COUNT(*) AS n |> SELECT id, n");
  /* chained stages, both directions, reusing numbering and ordering */
  tree_both("FROM slice |> TREE ACCUMULATE UP SUM(dur) AS a |> TREE ACCUMULATE UP MAX(a) AS b "
            "|> TREE ACCUMULATE DOWN SUM(b) AS c |> SELECT id, a, b, c");
  tree_both("FROM slice |> TREE ACCUMULATE DOWN COUNT(*) AS lvl |> EXTEND lvl * 2 AS l2 "
            "|> TREE ACCUMULATE UP MIN(l2) AS m |> AGGREGATE SUM(m) AS s, COUNT(*) AS n GROUP BY depth");
}

static void test_tree_sql_sources(void **state) {
  (void)state;
  /* scattered ids in scrambled order: hash map and CSR walk; NULLs, doubles */
  tree_both("FROM (SELECT * FROM forest) |> TREE ACCUMULATE UP SUM(v) AS sv, SUM(f) AS sf, COUNT(v) AS cv, "
            "MIN(f) AS mf, MAX(v) AS xv, MIN(v) AS nv, MAX(f) AS xf |> SELECT id, sv, sf, cv, mf, xv, nv, xf");
  tree_both("FROM (SELECT * FROM forest) |> TREE ACCUMULATE DOWN SUM(v) AS sv, SUM(f) AS sf, COUNT(v) AS cv, "
            "MIN(f) AS mf, MAX(v) AS xv, COUNT(*) AS n |> SELECT id, sv, sf, cv, mf, xv, n");
  /* string ids */
  tree_both("FROM (SELECT sid AS id, spid AS parent_id, v FROM forest) "
            "|> TREE ACCUMULATE UP SUM(v) AS s, MAX(v) AS m |> SELECT id, s, m");
  tree_both("FROM (SELECT sid AS id, spid AS parent_id, f FROM forest) "
            "|> TREE ACCUMULATE DOWN SUM(f) AS s |> AGGREGATE SUM(s) AS t, MIN(s) AS lo");
  /* the dense tier hands over to the hash map in the middle of a batch */
  tree_both("FROM (SELECT * FROM dense) |> TREE ACCUMULATE UP SUM(v) AS s, COUNT(*) AS n |> SELECT id, s, n");
  tree_both("FROM (SELECT * FROM dense) |> TREE ACCUMULATE DOWN SUM(v) AS s |> AGGREGATE SUM(s) AS t");
  tree_both("FROM (SELECT * FROM forest) |> TREE ACCUMULATE UP SUM(v) AS a "
            "|> TREE ACCUMULATE DOWN MIN(a) AS b |> SELECT id, a, b");
  /* a step before the numbering in its segment: the hash tier row by row
   * instead of the batch numbered up front */
  tree_both("FROM (SELECT * FROM forest) |> EXTEND v * 2 AS w |> TREE ACCUMULATE UP SUM(w) AS s "
            "|> SELECT id, s");
  tree_both("FROM (SELECT sid AS id, spid AS parent_id, v FROM forest) |> EXTEND v + 1 AS w "
            "|> TREE ACCUMULATE DOWN MAX(w) AS m |> SELECT id, m");
}

/* §9.4's aggregates compiled (cg_tree.c): AVG, ARG_MAX / ARG_MIN over int
 * and double orderings with int, double and string values (ties, NULL
 * orderings and NULL values in forest), FIRST / LAST (DOWN) of every
 * type; the same rows as the interpreter. */
static void test_tree_more_aggs(void **state) {
  (void)state;
  for (int up = 0; up < 2; up++) {
    char q[512];
    const char *dir = up ? "UP" : "DOWN";
    snprintf(q, sizeof q, "FROM (SELECT * FROM forest) |> TREE ACCUMULATE %s AVG(v) AS av, AVG(f) AS af, "
             "ARG_MAX(v, sid) AS xs, ARG_MIN(v, f) AS nf, ARG_MAX(f, id) AS xi, ARG_MIN(f, v) AS nv "
             "|> SELECT id, av, af, xs, nf, xi, nv", dir);
    tree_both(q);
    snprintf(q, sizeof q, "FROM (SELECT sid AS id, spid AS parent_id, v, f FROM forest) "
             "|> TREE ACCUMULATE %s AVG(f) AS a, ARG_MAX(f, v) AS b, SUM(v) AS s |> SELECT id, a, b, s", dir);
    tree_both(q);
    snprintf(q, sizeof q, "FROM slice |> TREE ACCUMULATE %s AVG(dur) AS a, ARG_MAX(dur, name) AS n, "
             "ARG_MIN(ts, dur) AS d |> SELECT id, a, n, d", dir);
    tree_both(q);
    snprintf(q, sizeof q, "FROM tmix |> TREE ACCUMULATE %s ARG_MIN(v, id) AS m, AVG(v) AS a "
             "|> AGGREGATE SUM(m) AS s, MAX(a) AS x, COUNT(m) AS c", dir);
    tree_both(q);
  }
  tree_both("FROM (SELECT * FROM forest) |> TREE ACCUMULATE DOWN FIRST(v) AS fv, LAST(v) AS lv, "
            "FIRST(f) AS ff, LAST(f) AS lf, FIRST(sid) AS fs, LAST(sid) AS ls |> SELECT id, fv, lv, ff, lf, fs, ls");
  tree_both("FROM slice |> TREE ACCUMULATE DOWN FIRST(name) AS root_name, LAST(dur) AS d, COUNT(*) AS lvl "
            "|> SELECT id, root_name, d, lvl");
  /* chained: a §9.4 aggregate feeding another stage */
  tree_both("FROM (SELECT * FROM forest) |> TREE ACCUMULATE UP ARG_MAX(v, f) AS b "
            "|> TREE ACCUMULATE DOWN LAST(b) AS l, AVG(b) AS a |> SELECT id, b, l, a");
}

static void test_tree_errors(void **state) {
  (void)state;
  tree_both_err("FROM (SELECT * FROM big) |> TREE ACCUMULATE UP SUM(v) AS s |> SELECT id, s",
                "TREE ACCUMULATE: integer overflow");
  tree_both_err("FROM (SELECT * FROM big) |> TREE ACCUMULATE DOWN SUM(v) AS s |> AGGREGATE MAX(s) AS m",
                "TREE ACCUMULATE: integer overflow");
  tree_both_err("FROM (SELECT * FROM bad) |> TREE ACCUMULATE UP COUNT(*) AS n |> SELECT id, n",
                "are in a cycle");
  tree_both_err("FROM (SELECT * FROM bad WHERE id != 4) |> TREE ACCUMULATE UP COUNT(*) AS n |> SELECT id, n",
                "a row names a parent which is not itself a row in the input");
  tree_both_err("FROM (SELECT * FROM dense UNION ALL SELECT 7, 3, 1) "
                "|> TREE ACCUMULATE UP COUNT(*) AS n |> SELECT id, n", "two rows have the id 7");
  tree_both_err("FROM (SELECT * FROM dense UNION ALL SELECT NULL, 3, 1) "
                "|> TREE ACCUMULATE DOWN COUNT(*) AS n |> SELECT id, n", "a row has no id");
  /* batches numbered up front in the hash tier: the first failing row of
   * the batch reports, with the interpreter's message */
  tree_both_err("FROM (SELECT id, parent_id, v FROM forest UNION ALL SELECT 30000, 30000, 1 "
                "UNION ALL SELECT NULL, 3, 1) |> TREE ACCUMULATE UP SUM(v) AS s |> SELECT id, s",
                "TREE ACCUMULATE: the row with id 30000 is its own parent");
  tree_both_err("FROM (SELECT id, parent_id, v FROM forest UNION ALL SELECT NULL, 3, 1 "
                "UNION ALL SELECT 30000, 30000, 1) |> TREE ACCUMULATE UP SUM(v) AS s |> SELECT id, s",
                "TREE ACCUMULATE: a row has no id");
  tree_both_err("FROM (SELECT sid AS id, spid AS parent_id, v FROM forest UNION ALL SELECT 'n5', 'n1', 1) "
                "|> TREE ACCUMULATE DOWN SUM(v) AS s |> SELECT id, s",
                "TREE ACCUMULATE: two rows have the id 'n5'");
  /* the same through the row-by-row hash tier (a step before it) */
  tree_both_err("FROM (SELECT sid AS id, spid AS parent_id, v FROM forest UNION ALL SELECT 'n5', 'n1', 1) "
                "|> EXTEND v + 1 AS w |> TREE ACCUMULATE DOWN SUM(w) AS s |> SELECT id, s",
                "TREE ACCUMULATE: two rows have the id 'n5'");
}

/* --dump llvm of the benchmark query: one loop accumulates and aggregates. */
static void test_tree_ir(void **state) {
  (void)state;
  pj_engine_set_mode(E, PJ_MODE_JIT);
  pj_query *q = NULL;
  assert_int_equal(pj_query_compile(E, "FROM slice |> TREE ACCUMULATE UP SUM(dur) AS t "
                                       "|> AGGREGATE SUM(t) AS s, MAX(t) AS m", &q), PJ_OK);
  pj_result *r = NULL;
  assert_int_equal(pj_query_run(q, &r), PJ_OK);
  pj_result_free(r);
  const char *ir = pj_query_llvm_ir(q, 1);
  assert_non_null(ir);
  const char *seg1 = strstr(ir, "seg1(");
  assert_non_null(seg1);
  assert_non_null(strstr(seg1, "%tree.acc.t"));
  assert_non_null(strstr(seg1, "%tree.acc.t.up"));
  assert_non_null(strstr(seg1, "llvm.sadd.with.overflow"));
  assert_non_null(strstr(seg1, "agg."));
  /* numbering inline in segment 0 */
  assert_non_null(strstr(ir, "tree.fast"));
  pj_query_free(q);
  pj_engine_set_mode(E, PJ_MODE_AUTO);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_tree_slice, tree_setup),
      cmocka_unit_test(test_tree_sql_sources),
      cmocka_unit_test(test_tree_more_aggs),
      cmocka_unit_test(test_tree_errors),
      cmocka_unit_test(test_tree_ir),
      cmocka_unit_test(test_filters_and_arith),
      cmocka_unit_test(test_lazy_and_strings),
      cmocka_unit_test(test_sinks),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_string_too_long),
      cmocka_unit_test(test_params_and_levels),
      cmocka_unit_test(test_handle),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
