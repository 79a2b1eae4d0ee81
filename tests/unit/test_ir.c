/*
 * test_ir.c — the IR passes on real pipeline texts: binding errors (exact
 * text and offset), typing, reshaping without ops, liveness (what scans
 * read, the SQLite wrapper), segments, and the plan printer.
 *
 * Fixture: a finalized table `slice` in the catalog and an in-memory
 * SQLite database with a table `sq` and a view `v`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/ast.h"
#include "ir/plan.h"

typedef struct fx {
  rt_strpool *sp;
  rt_catalog *cat;
  sqlite3 *db;
  ir_env env;
} fx;

static int setup(void **state) {
  fx *f = calloc(1, sizeof *f);
  f->sp = rt_strpool_new();
  f->cat = rt_catalog_new();
  /* slice: id 0..3 (becomes RT_ID), ts, dur, depth uint32, name nullable */
  const char *names[] = {"id", "ts", "dur", "depth", "name"};
  rt_type types[] = {RT_I64, RT_I64, RT_I64, RT_U32, RT_STR};
  rt_table_builder *tb = rt_tb_new("slice", 5, names, types);
  for (int i = 0; i < 4; i++) {
    rt_tb_append_i64(tb, 0, i);
    rt_tb_append_i64(tb, 1, 100 * i);
    rt_tb_append_i64(tb, 2, 10 + i);
    rt_tb_append_i64(tb, 3, (uint32_t)(i % 2));
    if (i == 3) rt_tb_append_null(tb, 4);
    else rt_tb_append_str(tb, 4, rt_str_intern(f->sp, "s", 1));
  }
  rt_catalog_put(f->cat, rt_tb_finish(tb));
  assert_int_equal(sqlite3_open(":memory:", &f->db), SQLITE_OK);
  assert_int_equal(sqlite3_exec(f->db,
                                "CREATE TABLE sq(a INTEGER, b TEXT, c REAL);"
                                "INSERT INTO sq VALUES (1, 'x', 1.5), (2, NULL, 2.5);"
                                "CREATE VIEW v AS SELECT a, b FROM sq;",
                                NULL, NULL, NULL),
                   SQLITE_OK);
  f->env = (ir_env){.catalog = f->cat, .db = f->db, .strings = f->sp};
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fx *f = *state;
  sqlite3_close(f->db);
  rt_catalog_free(f->cat);
  rt_strpool_free(f->sp);
  free(f);
  return 0;
}

/* Parses and runs `pass`: 0 bind only, 1 the whole ir_build. */
static ir_plan *compile(fx *f, const char *q, int full, rt_err *err) {
  rt_arena a;
  rt_arena_init(&a);
  memset(err, 0, sizeof *err);
  fe_pipeline *pl = fe_parse_pipeline(&a, q, strlen(q), err);
  if (!pl) fail_msg("parse error in %s: %s", q, err->msg);
  ir_plan *p = full ? ir_build(pl, q, &f->env, err) : ir_bind(pl, q, &f->env, err);
  rt_arena_free(&a);
  return p;
}

static ir_plan *ok(fx *f, const char *q) {
  rt_err err;
  ir_plan *p = compile(f, q, 1, &err);
  if (!p) fail_msg("%s: unexpected error %s at %d", q, err.msg, err.offset);
  return p;
}

/* Expects an error `msg` at byte offset `off` of q. */
static void expect_err_at(fx *f, const char *q, const char *msg, int off) {
  rt_err err;
  ir_plan *p = compile(f, q, 1, &err);
  if (p) {
    ir_plan_free(p);
    fail_msg("%s: expected error '%s'", q, msg);
  }
  assert_string_equal(err.msg, msg);
  assert_int_equal(err.offset, off);
}

/* Expects an error `msg` at the first occurrence of `at` in q. */
static void expect_err(fx *f, const char *q, const char *msg, const char *at) {
  const char *hit = strstr(q, at);
  assert_non_null(hit);
  expect_err_at(f, q, msg, (int)(hit - q));
}

static char *plan_text(const ir_plan *p) {
  rt_buf b = {0};
  ir_print(p, &b);
  rt_buf_append(&b, "", 1);
  return b.data;
}

static const ir_op *find_op(const ir_plan *p, ir_opkind k, int nth) {
  for (int i = 0; i < p->nops; i++)
    if (p->ops[i]->kind == k && !p->ops[i]->dead && nth-- == 0) return p->ops[i];
  return NULL;
}

static int count_ops(const ir_plan *p, ir_opkind k) {
  int n = 0;
  for (int i = 0; i < p->nops; i++) n += p->ops[i]->kind == k && !p->ops[i]->dead;
  return n;
}

/* ---- errors -------------------------------------------------------------- */

static void test_name_errors(void **state) {
  fx *f = *state;
  expect_err(f, "FROM nosuch", "FROM: no such table: 'nosuch'", "nosuch");
  expect_err(f, "FROM slice |> WHERE nope > 1", "WHERE: no such column: 'nope'", "nope");
  expect_err_at(f, "FROM slice AS s |> SELECT s", "SELECT: expected a column, but 's' is a table alias",
                (int)strlen("FROM slice AS s |> SELECT "));
  expect_err(f, "FROM slice AS a |> EXTEND dur * 2 AS ts |> WHERE ts > 0",
             "WHERE: column 'ts' is ambiguous: it could be a.ts or ts", "ts > 0");
  expect_err(f, "FROM slice |> SELECT q.*", "SELECT: no such table alias: 'q'", "q.*");
  expect_err(f, "FROM slice |> WHERE q.dur > 0", "WHERE: no such table alias: 'q'", "q.dur");
  expect_err(f, "FROM slice AS s |> WHERE s.zz > 0", "WHERE: no such column: 's.zz'", "zz");
  expect_err(f, "FROM slice |> SELECT dur + 1",
             "SELECT: expected every column to have a valid name, but 'dur + 1' is not one: give "
             "it one with AS",
             "dur + 1");
  expect_err(f, "FROM slice |> EXTEND *", "EXTEND: expected a table alias before the star, as in t.*",
             "*");
  expect_err(f, "FROM slice |> DROP id, ts, dur, depth, name",
             "DROP: expected a column to be left after DROP", "DROP");
  expect_err(f, "FROM slice |> DROP zz", "DROP: no such column: 'zz'", "zz");
  expect_err(f, "FROM slice |> SET zz = 1", "SET: no such column: 'zz'", "zz");
  expect_err(f, "FROM slice |> RENAME zz AS y", "RENAME: no such column: 'zz'", "zz");
  expect_err(f, "FROM slice |> SELECT * EXCEPT (zz)", "SELECT: no such column: 'zz'", "zz");
  /* Names are checked after AS: the alias no longer names slice. */
  expect_err(f, "FROM slice |> AS t |> SELECT slice.ts", "SELECT: no such table alias: 'slice'",
             "slice.ts");
  /* SELECT clears aliases. */
  expect_err(f, "FROM slice AS s |> SELECT ts |> WHERE s.ts > 0",
             "WHERE: no such table alias: 's'", "s.ts > 0");
}

static void test_source_errors(void **state) {
  fx *f = *state;
  expect_err(f, "FROM (SELECT 1 + 1)",
             "FROM: expected every column to have a valid name, but '1 + 1' is not one: give it "
             "one with AS",
             "SELECT");
  expect_err(f, "FROM (SELECT 1 AS x, 2 AS X)",
             "FROM: expected distinct column names, but there are two named 'X'", "SELECT");
  expect_err(f, "FROM (FROM slice |> EXTEND ts AS a, dur AS A)",
             "FROM: expected distinct column names, but there are two named 'A'", "(FROM");
  expect_err(f, "INTERVAL INTERSECTION OF (slice AS a)",
             "INTERVAL INTERSECTION OF: expected at least two relations to intersect",
             "INTERVAL");
  expect_err(f, "INTERVAL INTERSECTION OF (slice AS a, slice AS a)",
             "INTERVAL INTERSECTION OF: expected a different alias for each relation",
             "a)");
}

static void test_type_errors(void **state) {
  fx *f = *state;
  expect_err(f, "FROM slice |> WHERE name = 1", "WHERE: cannot compare a string with a number", "=");
  expect_err(f, "FROM slice |> EXTEND name + 'a' AS z",
             "EXTEND: cannot add strings with '+': use || to concatenate", "+");
  expect_err(f, "FROM slice |> WHERE name", "WHERE: expected a condition, but got a string", "name");
  expect_err(f, "FROM slice |> EXTEND foo(1) AS x", "EXTEND: no such function: 'foo'", "foo");
  expect_err(f, "FROM slice |> EXTEND substr(name) AS x",
             "EXTEND: expected 2 to 3 arguments to substr(), but got 1", "substr");
  expect_err(f, "FROM slice |> EXTEND CAST(dur AS BLOB) AS x",
             "EXTEND: cannot cast to 'BLOB': expected INTEGER, REAL or TEXT", "CAST");
  expect_err(f, "FROM slice |> EXTEND CASE WHEN dur > 1 THEN 'a' ELSE 2 END AS x",
             "EXTEND: expected every branch of CASE to have the same type, but some are strings "
             "and some numbers",
             "CASE");
  expect_err(f, "FROM slice |> LIMIT dur", "LIMIT: expected a whole number or a parameter, but got 'dur'",
             "dur");
  expect_err(f, "FROM slice |> LIMIT 1.5", "LIMIT: expected a whole number or a parameter, but got '1.5'",
             "1.5");
}

static void test_aggregate_errors(void **state) {
  fx *f = *state;
  expect_err(f, "FROM slice |> SELECT COUNT(*) AS c", "SELECT: an aggregate belongs in AGGREGATE, not SELECT",
             "COUNT");
  expect_err(f, "FROM slice |> WHERE sum(dur) > 1", "WHERE: an aggregate belongs in AGGREGATE, not WHERE",
             "sum");
  expect_err(f, "FROM slice |> ORDER BY max(dur)",
             "ORDER BY: an aggregate belongs in AGGREGATE, not ORDER BY", "max");
  expect_err(f, "FROM slice |> AGGREGATE SUM(name) AS s",
             "AGGREGATE: expected a number in SUM(), but 'name' is a string", "name");
  expect_err(f, "FROM slice |> AGGREGATE SUM(DISTINCT dur) AS c",
             "AGGREGATE: DISTINCT is only supported in COUNT(DISTINCT x)", "SUM");
  expect_err(f, "FROM slice |> AGGREGATE COUNT(*)",
             "AGGREGATE: expected every column to have a valid name, but 'COUNT(*)' is not one: "
             "give it one with AS",
             "COUNT");
  expect_err(f, "FROM slice |> AGGREGATE COUNT(*) AS c GROUP BY dur + 1",
             "AGGREGATE: expected every column to have a valid name, but 'dur + 1' is not one: "
             "give it one with AS",
             "dur + 1");
  expect_err(f, "FROM slice |> AGGREGATE SUM(COUNT(*)) AS x",
             "AGGREGATE: an aggregate cannot contain another aggregate", "COUNT");
  expect_err(f, "FROM slice |> AGGREGATE dur + 1 AS x",
             "AGGREGATE: expected an aggregate such as COUNT(*) or SUM(x), but got 'dur + 1'", "dur");
  expect_err(f, "FROM slice |> TREE ACCUMULATE UP SUM(dur) AS s",
             "TREE ACCUMULATE: no such column: 'parent_id'", "TREE");
}

/* ---- typing ------------------------------------------------------------- */

static const ir_expr *compute_expr(const ir_plan *p, int nth) {
  const ir_op *op = find_op(p, IR_COMPUTE, nth);
  assert_non_null(op);
  return op->compute.expr;
}

static void test_typing(void **state) {
  fx *f = *state;
  rt_err err;
  /* int * double: the int operand is wrapped in TOF64. */
  ir_plan *p = compile(f, "FROM slice |> EXTEND dur * 1.5 AS x", 0, &err);
  assert_non_null(p);
  const ir_expr *e = compute_expr(p, 0);
  assert_int_equal(e->kind, IX_MUL);
  assert_int_equal(e->type, RT_F64);
  assert_int_equal(e->args[0]->kind, IX_TOF64);
  assert_int_equal(e->args[0]->args[0]->kind, IX_COL);
  assert_int_equal(e->args[1]->kind, IX_CONST);
  assert_false(e->nullable);
  ir_plan_free(p);

  /* comparisons are booleans; int vs double compares doubles */
  p = compile(f, "FROM slice |> WHERE depth > 2.5", 0, &err);
  const ir_op *flt = find_op(p, IR_FILTER, 0);
  assert_int_equal(flt->filter.pred->kind, IX_GT);
  assert_int_equal(flt->filter.pred->type, RT_BOOL);
  assert_int_equal(flt->filter.pred->args[0]->kind, IX_TOF64);
  assert_int_equal(flt->filter.pred->args[0]->args[0]->type, RT_U32);
  ir_plan_free(p);

  /* an int64 against a double compares by value (no TOF64: mixed
   * operands); an integral double constant becomes an integer */
  p = compile(f, "FROM slice |> WHERE dur > 2.5 AND dur = 3.0", 0, &err);
  flt = find_op(p, IR_FILTER, 0);
  assert_int_equal(flt->filter.pred->args[0]->args[0]->kind, IX_COL);
  assert_int_equal(flt->filter.pred->args[0]->args[1]->type, RT_F64);
  assert_int_equal(flt->filter.pred->args[1]->args[1]->kind, IX_CONST);
  assert_int_equal(flt->filter.pred->args[1]->args[1]->type, RT_I64);
  assert_int_equal(flt->filter.pred->args[1]->args[1]->ival, 3);
  ir_plan_free(p);

  /* integer division stays integer and may be NULL (by zero) */
  p = compile(f, "FROM slice |> EXTEND dur / 2 AS h", 0, &err);
  e = compute_expr(p, 0);
  assert_int_equal(e->kind, IX_DIV);
  assert_int_equal(e->type, RT_I64);
  assert_true(e->nullable);
  ir_plan_free(p);

  /* || casts numbers to text */
  p = compile(f, "FROM slice |> EXTEND name || dur AS s", 0, &err);
  e = compute_expr(p, 0);
  assert_int_equal(e->kind, IX_CONCAT);
  assert_int_equal(e->args[1]->kind, IX_TOSTR);
  assert_int_equal(e->type, RT_STR);
  assert_true(e->nullable); /* name is nullable */
  ir_plan_free(p);

  /* NULL folds to a typed NULL constant */
  p = compile(f, "FROM slice |> EXTEND dur + NULL AS n, NULL AS z", 0, &err);
  e = compute_expr(p, 0);
  assert_int_equal(e->kind, IX_CONST);
  assert_true(e->is_null);
  assert_int_equal(e->type, RT_I64);
  assert_int_equal(compute_expr(p, 1)->type, RT_I64);
  ir_plan_free(p);

  /* BETWEEN lowers to two comparisons; CASE branches settle on double */
  p = compile(f, "FROM slice |> WHERE dur NOT BETWEEN 1 AND 5 |> EXTEND CASE WHEN dur > 1 THEN 1 ELSE 0.5 END AS c", 0, &err);
  flt = find_op(p, IR_FILTER, 0);
  assert_int_equal(flt->filter.pred->kind, IX_NOT);
  assert_int_equal(flt->filter.pred->args[0]->kind, IX_AND);
  assert_int_equal(flt->filter.pred->args[0]->args[0]->kind, IX_GE);
  assert_int_equal(flt->filter.pred->args[0]->args[1]->kind, IX_LE);
  e = compute_expr(p, 0);
  assert_int_equal(e->kind, IX_CASE);
  assert_int_equal(e->nargs, 3);
  assert_int_equal(e->type, RT_F64);
  assert_int_equal(e->args[1]->type, RT_F64); /* 1 folded to 1.0 */
  ir_plan_free(p);

  /* CASE x WHEN v → x = v; IS DISTINCT FROM → ISNOT; CAST */
  p = compile(f, "FROM slice |> EXTEND CASE depth WHEN 1 THEN 'one' END AS c, "
                 "dur IS DISTINCT FROM ts AS d, CAST(name AS INTEGER) AS i, "
                 "CAST(dur AS TEXT) AS t, CAST(dur AS REAL) AS r",
              0, &err);
  e = compute_expr(p, 0);
  assert_int_equal(e->args[0]->kind, IX_EQ);
  assert_true(e->args[2]->is_null);
  assert_int_equal(e->args[2]->type, RT_STR);
  assert_int_equal(compute_expr(p, 1)->kind, IX_ISNOT);
  assert_false(compute_expr(p, 1)->nullable);
  assert_int_equal(compute_expr(p, 2)->kind, IX_TOINT);
  assert_int_equal(compute_expr(p, 3)->kind, IX_TOSTR);
  assert_int_equal(compute_expr(p, 4)->kind, IX_TOF64);
  ir_plan_free(p);

  /* TRUE is a boolean; string literals are interned */
  p = compile(f, "FROM slice |> WHERE TRUE AND name = 'abc'", 0, &err);
  flt = find_op(p, IR_FILTER, 0);
  assert_int_equal(flt->filter.pred->args[0]->type, RT_BOOL);
  assert_int_equal(flt->filter.pred->args[1]->args[1]->sval, rt_str_intern(f->sp, "abc", 3));
  ir_plan_free(p);

  /* an int predicate becomes `x != 0` */
  p = compile(f, "FROM slice |> WHERE depth", 0, &err);
  flt = find_op(p, IR_FILTER, 0);
  assert_int_equal(flt->filter.pred->kind, IX_NE);
  ir_plan_free(p);

  /* verification accepts every plan above (ir_build runs ir_verify) */
  p = ok(f, "FROM slice |> EXTEND coalesce(name, 'x') AS c, max(dur, 2.5) AS m, "
            "abs(-dur) AS a, iif(dur > 1, 1, 2) AS i, lower(name) AS l, "
            "substr(name, 1, 2) AS s, length(name) AS n, dur % 1.5 AS r, "
            "depth IN (1, 2.0) AS inn, name LIKE 's%' AS lk, ~depth AS bn");
  assert_int_equal(compute_expr(p, 0)->type, RT_STR);
  assert_false(compute_expr(p, 0)->nullable);
  assert_int_equal(compute_expr(p, 1)->type, RT_F64);
  ir_plan_free(p);
}

static void test_params(void **state) {
  fx *f = *state;
  rt_err err;
  ir_plan *p = compile(f, "FROM slice |> WHERE dur > ? AND ts < $t AND depth = ? AND ts > $t "
                          "|> LIMIT ?5",
                       0, &err);
  assert_non_null(p);
  assert_int_equal(p->nparams, 5);
  assert_null(p->params[0].name);
  assert_string_equal(p->params[1].name, "$t");
  assert_null(p->params[2].name);
  assert_int_equal(p->params[0].type, RT_I64);
  const ir_op *lim = find_op(p, IR_LIMIT, 0);
  assert_int_equal(lim->limit.count->kind, IX_PARAM);
  assert_int_equal(lim->limit.count->param, 5);
  ir_plan_free(p);

  /* bound types type the parameter */
  rt_type types[] = {RT_F64, RT_STR};
  f->env.nparam_types = 2;
  f->env.param_types = types;
  p = compile(f, "FROM slice |> WHERE dur > ? AND name = ?", 0, &err);
  const ir_op *flt = find_op(p, IR_FILTER, 0);
  /* an int64 column against a double compares by value: no TOF64 */
  assert_int_equal(flt->filter.pred->args[0]->args[0]->kind, IX_COL);
  assert_int_equal(flt->filter.pred->args[0]->args[1]->type, RT_F64);
  assert_int_equal(flt->filter.pred->args[1]->args[1]->type, RT_STR);
  ir_plan_free(p);
  f->env.nparam_types = 0;
  f->env.param_types = NULL;
}

/* ---- reshaping, liveness, segments -------------------------------------- */

static void test_reshaping_makes_no_ops(void **state) {
  fx *f = *state;
  rt_err err;
  ir_plan *p = compile(f, "FROM slice |> SELECT dur AS d, ts |> RENAME d AS e |> DROP ts "
                          "|> AS q |> SELECT q.e, e AS e2",
                       0, &err);
  assert_non_null(p);
  assert_int_equal(p->nops, 2); /* scan, output */
  const ir_op *out = find_op(p, IR_OUTPUT, 0);
  assert_int_equal(out->output.nout, 2);
  assert_string_equal(out->output.out_names[0], "e");
  assert_string_equal(out->output.out_names[1], "e2");
  assert_string_equal(p->cols[out->output.out[0]].name, "dur");
  assert_int_equal(out->output.out[0], out->output.out[1]);
  ir_plan_free(p);

  /* SET and RENAME see the row before the stage: both swap */
  p = ok(f, "FROM slice |> SET ts = dur, dur = ts |> RENAME id AS name, name AS id");
  out = find_op(p, IR_OUTPUT, 0);
  assert_int_equal(count_ops(p, IR_COMPUTE), 0);
  assert_string_equal(out->output.out_names[0], "name");
  assert_string_equal(p->cols[out->output.out[0]].name, "id");
  assert_string_equal(out->output.out_names[1], "ts");
  assert_string_equal(p->cols[out->output.out[1]].name, "dur");
  assert_string_equal(out->output.out_names[2], "dur");
  assert_string_equal(p->cols[out->output.out[2]].name, "ts");
  assert_string_equal(out->output.out_names[4], "id");
  ir_plan_free(p);

  /* stars: EXCEPT and REPLACE; names match case-insensitively, defining spelling kept */
  p = ok(f, "FROM slice |> SELECT * EXCEPT (ID, Name) REPLACE (DUR * 2 AS Dur)");
  out = find_op(p, IR_OUTPUT, 0);
  assert_int_equal(out->output.nout, 3);
  assert_string_equal(out->output.out_names[0], "ts");
  assert_string_equal(out->output.out_names[1], "dur");
  assert_int_equal(count_ops(p, IR_COMPUTE), 1);
  ir_plan_free(p);

  /* aliases survive EXTEND and let an alias read the old value after SET */
  p = ok(f, "FROM slice AS s |> SET dur = dur + 1 |> EXTEND s.dur AS old");
  out = find_op(p, IR_OUTPUT, 0);
  assert_string_equal(out->output.out_names[5], "old");
  assert_string_equal(p->cols[out->output.out[5]].name, "dur");
  assert_int_not_equal(out->output.out[2], out->output.out[5]);
  ir_plan_free(p);

  /* nested pipeline source with an alias */
  p = ok(f, "FROM (FROM slice |> WHERE dur > 1 |> SELECT ts, dur AS d) AS x |> WHERE x.d < 10");
  assert_int_equal(count_ops(p, IR_FILTER), 2);
  out = find_op(p, IR_OUTPUT, 0);
  assert_int_equal(out->output.nout, 2);
  ir_plan_free(p);
}

static void test_liveness(void **state) {
  fx *f = *state;
  /* the dead COMPUTE goes; the scan reads only ts */
  ir_plan *p = ok(f, "FROM slice |> EXTEND dur * 2 AS d2 |> SELECT ts");
  const ir_op *scan = find_op(p, IR_SCAN_TABLE, 0);
  assert_int_equal(scan->scan.nscan, 1);
  assert_string_equal(p->cols[scan->scan.out_cols[0]].name, "ts");
  assert_int_equal(scan->scan.table_cols[0], 1);
  assert_int_equal(count_ops(p, IR_COMPUTE), 0);
  ir_plan_free(p);

  /* a filter keeps its input live; dead aggregates go, the AGGREGATE stays */
  p = ok(f, "FROM slice |> WHERE ts > 0 |> AGGREGATE COUNT(*) AS c, SUM(dur) AS s GROUP BY depth "
            "|> SELECT c");
  scan = find_op(p, IR_SCAN_TABLE, 0);
  assert_int_equal(scan->scan.nscan, 2); /* ts, depth: dur is not read */
  const ir_op *agg = find_op(p, IR_AGGREGATE, 0);
  assert_true(agg->agg.aggs[0].live);
  assert_false(agg->agg.aggs[1].live);
  assert_int_equal(p->cols[agg->agg.aggs[1].out_col].type, RT_I64);
  assert_int_equal(p->cols[agg->agg.group_out[0]].type, RT_I64); /* uint32 widens */
  ir_plan_free(p);

  /* SORT carries only what is read after it, plus its keys */
  p = ok(f, "FROM slice |> ORDER BY dur * 2 DESC |> SELECT name");
  const ir_op *sort = find_op(p, IR_SORT, 0);
  assert_int_equal(sort->sort.ncarry, 2);
  assert_false(sort->sort.keys[0].nulls_first);
  assert_true(sort->sort.keys[0].desc);
  ir_plan_free(p);

  /* SQLite: only live columns are projected, in the wrapper */
  p = ok(f, "FROM sq |> SELECT c, a");
  scan = find_op(p, IR_SCAN_SQL, 0);
  assert_string_equal(scan->scan.sql, "WITH __pipeline_source(c0, c1, c2) AS (SELECT * FROM (SELECT * "
                                 "FROM \"sq\")) SELECT c0 AS \"a\", c2 AS \"c\" FROM __pipeline_source");
  assert_int_equal(p->cols[scan->scan.out_cols[1]].type, RT_F64);
  ir_plan_free(p);

  /* no live column: SQLite still yields every row through one column */
  p = ok(f, "FROM (SELECT a, b FROM sq WHERE a > 0) |> AGGREGATE COUNT(*) AS n");
  scan = find_op(p, IR_SCAN_SQL, 0);
  assert_int_equal(scan->scan.nscan, 1);
  assert_string_equal(scan->scan.sql, "WITH __pipeline_source(c0, c1) AS (SELECT * FROM (SELECT a, b "
                                 "FROM sq WHERE a > 0)) SELECT c0 AS \"a\" FROM __pipeline_source");
  ir_plan_free(p);

  /* views and schema-qualified names go to SQLite */
  p = ok(f, "FROM main.sq AS t |> SELECT t.b |> WHERE b = 'x'");
  scan = find_op(p, IR_SCAN_SQL, 0);
  assert_non_null(strstr(scan->scan.sql, "SELECT * FROM \"main\".\"sq\""));
  ir_plan_free(p);
  p = ok(f, "FROM v");
  assert_int_equal(find_op(p, IR_SCAN_SQL, 0)->scan.nscan, 2);
  ir_plan_free(p);

  /* GRAPH (§9.5): each relation buffers its key and what is read after
   * the source; NODES' unread payload and EDGES' and the seeds' other
   * columns are neither buffered nor read by their scans */
  p = ok(f, "GRAPH DFS TREE NODES (FROM slice |> SELECT id, name, ts) "
            "EDGES (FROM slice |> SELECT id AS src, depth AS dst, ts AS w) "
            "FROM (FROM slice |> WHERE dur > 10 |> SELECT id, name AS extra) |> SELECT name, depth");
  const int carries[3] = {2, 2, 1};   /* id, name; src, dst; id */
  const int reads[3] = {2, 2, 2};     /* id, name; id, depth; id, dur (the filter) */
  for (int j = 0; j < 3; j++) {
    assert_int_equal(find_op(p, IR_IV_BUFFER, j)->ivbuf.ncarry, carries[j]);
    assert_int_equal(find_op(p, IR_SCAN_TABLE, j)->scan.nscan, reads[j]);
  }
  ir_plan_free(p);
}

static void test_segments(void **state) {
  fx *f = *state;
  ir_plan *p = ok(f, "FROM slice |> WHERE dur > 1 |> ORDER BY ts DESC |> LIMIT 3 "
                     "|> AGGREGATE COUNT(*) AS c, MAX(name) AS m");
  assert_int_equal(p->nsegs, 3);
  assert_int_equal(p->segs[0].source->kind, IR_SCAN_TABLE);
  assert_int_equal(p->segs[0].nsteps, 1);
  assert_int_equal(p->segs[0].sink->kind, IR_SORT);
  assert_int_equal(p->segs[1].source->kind, IR_SCAN_BUF);
  assert_ptr_equal(p->segs[1].source->scan.buf_op, p->segs[0].sink);
  assert_int_equal(p->segs[1].steps[0]->kind, IR_LIMIT);
  assert_int_equal(p->segs[1].sink->kind, IR_AGGREGATE);
  assert_int_equal(p->segs[2].source->kind, IR_SCAN_BUF);
  assert_int_equal(p->segs[2].source->scan.nscan, 2);
  assert_int_equal(p->segs[2].sink->kind, IR_OUTPUT);
  /* no GROUP BY: MAX is NULL on empty input, COUNT never */
  const ir_op *agg = p->segs[1].sink;
  assert_true(p->cols[agg->agg.aggs[1].out_col].nullable);
  assert_int_equal(p->cols[agg->agg.aggs[1].out_col].type, RT_STR);
  assert_false(p->cols[agg->agg.aggs[0].out_col].nullable);
  /* segmenting twice gives the same shape */
  ir_segment_plan(p);
  assert_int_equal(p->nsegs, 3);
  rt_err err = {0};
  assert_true(ir_verify(p, &err));
  ir_plan_free(p);
}

/* The verifier catches what the binder must never produce. */
static void test_verify(void **state) {
  fx *f = *state;
  ir_plan *p = ok(f, "FROM slice |> EXTEND dur * 1.5 AS x |> WHERE x > 1.0");
  ir_expr *mul = p->segs[0].steps[0]->compute.expr;
  ir_expr *tof = mul->args[0];
  rt_err err = {0};
  assert_true(ir_verify(p, &err));
  mul->args[0] = tof->args[0]; /* int * double without TOF64 */
  assert_false(ir_verify(p, &err));
  assert_non_null(strstr(err.msg, "internal error: arithmetic operands differ"));
  mul->args[0] = tof;
  mul->args[1]->type = RT_NULLT;
  memset(&err, 0, sizeof err);
  assert_false(ir_verify(p, &err));
  assert_non_null(strstr(err.msg, "untyped NULL"));
  mul->args[1]->type = RT_F64;
  /* a double remainder: the binder lowers a real % to integers, and no
   * backend has one */
  mul->kind = IX_MOD;
  memset(&err, 0, sizeof err);
  assert_false(ir_verify(p, &err));
  assert_non_null(strstr(err.msg, "MOD needs int operands"));
  mul->kind = IX_MUL;
  /* the filter reads x: swapping the steps uses x before it is defined */
  ir_op *t = p->segs[0].steps[0];
  p->segs[0].steps[0] = p->segs[0].steps[1];
  p->segs[0].steps[1] = t;
  memset(&err, 0, sizeof err);
  assert_false(ir_verify(p, &err));
  assert_non_null(strstr(err.msg, "used before it is defined"));
  ir_plan_free(p);
}

/* ---- printer ------------------------------------------------------------ */

static void test_print(void **state) {
  fx *f = *state;
  ir_plan *p = ok(f, "FROM slice |> WHERE dur > 10 AND name = 'it''s' |> EXTEND dur * 2 AS d2 "
                     "|> ORDER BY d2 DESC |> LIMIT 5 OFFSET 1 |> SELECT ts, name AS n");
  char *t = plan_text(p);
  assert_string_equal(t,
                      "segment 0: scan table slice [ts, dur, name]\n"
                      "  filter (dur > 10) AND (name = 'it''s')\n"
                      "  compute d2 = dur * 2\n"
                      "  sort by d2 DESC; carry [ts, name, d2]\n"
                      "segment 1: scan buffer of sort [ts, name, d2]\n"
                      "  limit 5 offset 1\n"
                      "  output [ts, name AS n]\n"
                      "live columns: ts int64, dur int64, name string (nullable), d2 int64\n");
  free(t);
  ir_plan_free(p);

  p = ok(f, "FROM sq |> AGGREGATE COUNT(*) AS n, AVG(c) AS m GROUP BY b |> WHERE m > 1.0");
  t = plan_text(p);
  assert_string_equal(t,
                      "segment 0: scan sqlite sq [b#1, c]\n"
                      "    sql: WITH __pipeline_source(c0, c1, c2) AS (SELECT * FROM (SELECT * FROM "
                      "\"sq\")) SELECT c1 AS \"b\", c2 AS \"c\" FROM __pipeline_source\n"
                      "  aggregate n = count(*), m = avg(c) group by b#1\n"
                      "segment 1: scan buffer of aggregate [b#3, n, m]\n"
                      "  filter m > 1.0\n"
                      "  output [b#3, n, m]\n"
                      "live columns: b#1 string (nullable), c double (nullable), b#3 string "
                      "(nullable), n int64, m double (nullable)\n");
  free(t);
  ir_plan_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_name_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_source_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_type_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_aggregate_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_typing, setup, teardown),
      cmocka_unit_test_setup_teardown(test_params, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reshaping_makes_no_ops, setup, teardown),
      cmocka_unit_test_setup_teardown(test_liveness, setup, teardown),
      cmocka_unit_test_setup_teardown(test_segments, setup, teardown),
      cmocka_unit_test_setup_teardown(test_verify, setup, teardown),
      cmocka_unit_test_setup_teardown(test_print, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
