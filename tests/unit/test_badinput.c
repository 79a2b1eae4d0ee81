/*
 * test_badinput.c — the bad inputs of the catalogue (issue 7) that do not
 * fit a .test file: texts too big to write by hand (expressions nested
 * 10,000 deep, 100,000-byte names, 100,000-element IN lists, 10,000
 * stages, 20,000 statements, a 1 MB string), a table of 1,000 columns,
 * 10 million rows of NULLs, and NUL bytes inside strings. Every case runs
 * on the interpreter and the JIT, and after every error a good statement
 * must still run on the same engine. (The .test catalogue is
 * tests/queries/bad_*.test.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/engine.h"
#include "pipejit.h"

static const pj_mode k_modes[] = {PJ_MODE_INTERP, PJ_MODE_JIT};
#define NMODES 2

/* ---- helpers ------------------------------------------------------------------ */

typedef struct text {
  char *s;
  size_t n, cap;
} text;

static void add(text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (t->n + (size_t)n + 1 > t->cap) {
    t->cap = (t->n + (size_t)n + 1) * 2;
    t->s = realloc(t->s, t->cap);
    assert_non_null(t->s);
  }
  va_start(ap, fmt);
  vsnprintf(t->s + t->n, (size_t)n + 1, fmt, ap);
  va_end(ap);
  t->n += (size_t)n;
}

static void repeat(text *t, const char *piece, int times) {
  for (int i = 0; i < times; i++) add(t, "%s", piece);
}

static pj_engine *open_engine(pj_mode mode) {
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  pj_engine_set_mode(e, mode);
  return e;
}

static void exec_ok(pj_engine *e, const char *script) {
  if (pj_engine_exec(e, script, NULL, NULL) != PJ_OK)
    fail_msg("%.200s: %s", script, pj_engine_errmsg(e));
}

/* Counts the result sets of a script. */
static int count_results(void *ctx, const pj_result *r, const char *t, size_t l, size_t off) {
  (*(int *)ctx)++;
  return 0;
}

/* Runs text as a handle (compile + run); fails the test on error. */
static pj_result *run_ok(pj_engine *e, const char *q) {
  pj_query *h = NULL;
  if (pj_query_compile(e, q, &h) != PJ_OK) fail_msg("%.200s: %s", q, pj_engine_errmsg(e));
  pj_result *r = NULL;
  if (pj_query_run(h, &r) != PJ_OK) fail_msg("%.200s: %s", q, pj_engine_errmsg(e));
  pj_query_free(h);
  return r;
}

static int64_t int_of(pj_engine *e, const char *q) {
  pj_result *r = run_ok(e, q);
  assert_int_equal(pj_result_row_count(r), 1);
  int64_t v = pj_result_int64(r, 0, 0);
  pj_result_free(r);
  return v;
}

/* The engine still answers a good statement. */
static void still_works(pj_engine *e) {
  assert_int_equal(int_of(e, "FROM (SELECT 1 AS x UNION ALL SELECT 2) |> AGGREGATE SUM(x) AS s"),
                   3);
}

/* q fails with exactly msg (at byte offset `off`; -2: anywhere in q) both as a
 * script and as a handle, and the engine still works afterwards. */
static void fails(pj_engine *e, const char *q, const char *msg, int off) {
  assert_int_equal(pj_engine_exec(e, q, NULL, NULL), PJ_ERROR);
  assert_string_equal(pj_engine_errmsg(e), msg);
  if (off != -2) assert_int_equal(pj_engine_erroffset(e), off);
  else assert_in_range(pj_engine_erroffset(e), 0, strlen(q));
  still_works(e);
  pj_query *h = NULL;
  assert_int_equal(pj_query_compile(e, q, &h), PJ_ERROR);
  assert_null(h);
  assert_string_equal(pj_engine_errmsg(e), msg);
  if (off != -2) assert_int_equal(pj_engine_erroffset(e), off);
  else assert_in_range(pj_engine_erroffset(e), 0, strlen(q));
  still_works(e);
}

/* ---- nesting ------------------------------------------------------------------ */

#define DEEP 10000
static const char *const k_deep_msg = "expression is nested too deeply (more than 1000 levels)";

static void test_deep_nesting(void **state) {
  for (int m = 0; m < NMODES; m++) {
    pj_engine *e = open_engine(k_modes[m]);
    exec_ok(e, "CREATE PERFETTO TABLE p AS SELECT 1 AS id, 'a' AS s");
    char msg[128];
    struct {
      const char *stage, *head, *open, *mid, *close, *tail;
    } shapes[] = {
        {"WHERE", "FROM p |> WHERE ", "(", "id", ")", " = 1"},
        {"EXTEND", "FROM p |> EXTEND ", "- ", "id", "", " AS x"},
        {"WHERE", "FROM p |> WHERE ", "NOT ", "id = 1", "", ""},
        {"EXTEND", "FROM p |> EXTEND ", "abs(", "id", ")", " AS x"},
        {"EXTEND", "FROM p |> EXTEND ", "id + ", "id", "", " AS x"},
        {"EXTEND", "FROM p |> EXTEND ", "s || ", "s", "", " AS x"},
        {"EXTEND", "FROM p |> EXTEND ", "CASE WHEN id = 1 THEN ", "1", " END", " AS x"},
        {"AGGREGATE", "FROM p |> AGGREGATE SUM(", "(", "id", ")", ") AS x"},
        {"ORDER BY", "FROM p |> ORDER BY ", "coalesce(", "id", ", 1)", ""},
        {"FROM", "FROM ", "(FROM ", "p", ")", ""},
    };
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
      text q = {0};
      add(&q, "%s", shapes[k].head);
      repeat(&q, shapes[k].open, DEEP);
      add(&q, "%s", shapes[k].mid);
      repeat(&q, shapes[k].close, DEEP);
      add(&q, "%s", shapes[k].tail);
      snprintf(msg, sizeof msg, "%s: %s", shapes[k].stage, k_deep_msg);
      fails(e, q.s, msg, -2);
      free(q.s);
    }
    /* Just under the limit compiles and runs, on both backends (the JIT
     * lowers the tree recursively too). */
    text q = {0};
    add(&q, "FROM p |> EXTEND ");
    repeat(&q, "(", 900);
    add(&q, "id");
    repeat(&q, " + 1)", 900);
    add(&q, " AS x |> SELECT x");
    assert_int_equal(int_of(e, q.s), 901);
    free(q.s);
    /* SQLite's own limit inside a FROM subquery */
    text s = {0};
    add(&s, "FROM (SELECT ");
    repeat(&s, "(", DEEP);
    add(&s, "1");
    repeat(&s, ")", DEEP);
    add(&s, " AS x)");
    assert_int_equal(pj_engine_exec(e, s.s, NULL, NULL), PJ_ERROR);
    assert_non_null(strstr(pj_engine_errmsg(e), "FROM: "));
    still_works(e);
    free(s.s);
    pj_engine_close(e);
  }
}

/* ---- long texts ------------------------------------------------------------------ */

static void test_long_names(void **state) {
  const char *msg_suffix = "syntax error: a name is longer than 1024 bytes";
  for (int m = 0; m < NMODES; m++) {
    pj_engine *e = open_engine(k_modes[m]);
    exec_ok(e, "CREATE PERFETTO TABLE p AS SELECT 1 AS id, 'a' AS s");
    text name = {0};
    repeat(&name, "x", 100000);
    char msg[128];
    struct {
      const char *stage, *fmt;
      int off;
    } cases[] = {
        {"WHERE", "FROM p |> WHERE %s = 1", 16},
        {"WHERE", "FROM p |> WHERE \"%s\" = 1", 16},
        {"WHERE", "FROM p |> WHERE [%s] = 1", 16},
        {"SELECT", "FROM p |> SELECT id AS %s", 23},
        {"RENAME", "FROM p |> RENAME id AS `%s`", 23},
        {"FROM", "FROM %s", 5},
        {"AS", "FROM p |> AS %s", 13},
        {"SELECT", "FROM p |> SELECT %s.id", 17},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
      text q = {0};
      add(&q, cases[k].fmt, name.s);
      snprintf(msg, sizeof msg, "%s: %s", cases[k].stage, msg_suffix);
      fails(e, q.s, msg, cases[k].off);
      free(q.s);
    }
    /* A name is refused in CREATE PERFETTO TABLE too. */
    text c = {0};
    add(&c, "CREATE PERFETTO TABLE %s AS FROM p", name.s);
    assert_int_equal(pj_engine_exec(e, c.s, NULL, NULL), PJ_ERROR);
    assert_non_null(strstr(pj_engine_errmsg(e), msg_suffix));
    still_works(e);
    free(c.s);
    /* 1024 bytes is allowed and kept whole in the result header. */
    text q = {0};
    add(&q, "FROM p |> SELECT id AS %.1024s", name.s);
    pj_result *r = run_ok(e, q.s);
    assert_int_equal(strlen(pj_result_column_name(r, 0)), 1024);
    pj_result_free(r);
    free(q.s);
    /* A string literal has no such limit. */
    text lit = {0};
    add(&lit, "FROM p |> EXTEND '%s' AS v |> SELECT length(v) AS n", name.s);
    assert_int_equal(int_of(e, lit.s), 100000);
    free(lit.s);
    /* A 1 MB literal. */
    text big = {0};
    add(&big, "FROM p |> EXTEND '");
    repeat(&big, "abcdefgh", 1 << 17);
    add(&big, "' AS v |> SELECT length(v) AS n");
    assert_int_equal(int_of(e, big.s), 1 << 20);
    free(big.s);
    free(name.s);
    pj_engine_close(e);
  }
}

static void test_wide_texts(void **state) {
  for (int m = 0; m < NMODES; m++) {
    pj_engine *e = open_engine(k_modes[m]);
    exec_ok(e, "CREATE PERFETTO TABLE p AS SELECT 7 AS id UNION ALL SELECT 100001");
    /* An IN list of 100,000 values is flat, not deep. The JIT gets
     * 10,000: its compile time grows faster than linearly with the list
     * (100,000 take seconds), which is a cost, not a failure. */
    text q = {0};
    int nin = k_modes[m] == PJ_MODE_JIT ? 10000 : 100000;
    add(&q, "FROM p |> WHERE id IN (");
    for (int i = 0; i < nin; i++) add(&q, "%s%d", i ? "," : "", i * 2 + 1);
    add(&q, ") |> AGGREGATE COUNT(*) AS n");
    assert_int_equal(int_of(e, q.s), k_modes[m] == PJ_MODE_JIT ? 1 : 2);
    free(q.s);
    /* 2,000 stages in one pipeline */
    text st = {0};
    add(&st, "FROM p");
    for (int i = 0; i < 2000; i++) add(&st, " |> WHERE id >= %d", i);
    add(&st, " |> AGGREGATE COUNT(*) AS n");
    assert_int_equal(int_of(e, st.s), 1);
    free(st.s);
    /* a script of 10,000 statements; the bad one at the end stops it */
    text sc = {0};
    for (int i = 0; i < 10000; i++) add(&sc, "FROM p |> LIMIT 0;\n");
    size_t bad_at = sc.n;
    add(&sc, "FROM p |> WHERE nope = 1;\nFROM p");
    assert_int_equal(pj_engine_exec(e, sc.s, NULL, NULL), PJ_ERROR);
    assert_string_equal(pj_engine_errmsg(e), "WHERE: no such column: 'nope'");
    assert_int_equal(pj_engine_erroffset(e), (int)bad_at + 16);
    assert_int_equal(pj_engine_errline(e), 10001);
    assert_int_equal(pj_engine_errcol(e), 17);
    still_works(e);
    free(sc.s);
    pj_engine_close(e);
  }
}

/* ---- 1,000 columns --------------------------------------------------------------- */

static void test_thousand_columns(void **state) {
  for (int m = 0; m < NMODES; m++) {
    pj_engine *e = open_engine(k_modes[m]);
    text ddl = {0}, ins = {0};
    add(&ddl, "CREATE TABLE w(");
    for (int c = 0; c < 1000; c++) add(&ddl, "%sc%d INT", c ? ", " : "", c);
    add(&ddl, ");");
    for (int r = 0; r < 3; r++) {
      add(&ins, "INSERT INTO w VALUES (");
      for (int c = 0; c < 1000; c++) {
        if (r == 2 && c % 2) add(&ins, "%sNULL", c ? ", " : "");
        else add(&ins, "%s%d", c ? ", " : "", c * 10 + r);
      }
      add(&ins, ");");
    }
    exec_ok(e, ddl.s);
    exec_ok(e, ins.s);
    exec_ok(e, "CREATE PERFETTO TABLE pw AS SELECT * FROM w");
    free(ddl.s);
    free(ins.s);
    for (int src = 0; src < 2; src++) {
      const char *from = src ? "FROM w" : "FROM pw";
      char q[256];
      /* the whole row */
      snprintf(q, sizeof q, "%s |> ORDER BY c0", from);
      pj_result *r = run_ok(e, q);
      assert_int_equal(pj_result_column_count(r), 1000);
      assert_int_equal(pj_result_row_count(r), 3);
      assert_string_equal(pj_result_column_name(r, 999), "c999");
      assert_int_equal(pj_result_int64(r, 1, 999), 9991);
      assert_true(pj_result_is_null(r, 2, 999));
      pj_result_free(r);
      /* the last and first columns together */
      snprintf(q, sizeof q, "%s |> WHERE c999 > 9990 |> EXTEND c0 + c999 AS s |> SELECT s", from);
      r = run_ok(e, q);
      assert_int_equal(pj_result_row_count(r), 1);
      assert_int_equal(pj_result_int64(r, 0, 0), 1 + 9991);
      pj_result_free(r);
    }
    /* 1,000 aggregates in one stage (the JIT gets every fifth column: its
     * compile time grows faster than linearly with the aggregates, about
     * 10 s for 1,000 at -O2, which is a cost, not a failure) */
    int step = k_modes[m] == PJ_MODE_JIT ? 5 : 1;
    text agg = {0};
    add(&agg, "FROM pw |> AGGREGATE ");
    for (int c = step - 1; c < 1000; c += step)
      add(&agg, "%sSUM(c%d) AS s%d", c >= step ? ", " : "", c, c);
    pj_result *r = run_ok(e, agg.s);
    int na = 1000 / step;
    assert_int_equal(pj_result_column_count(r), na);
    if (step == 1) assert_int_equal(pj_result_int64(r, 0, 0), 0 + 1 + 2);
    assert_int_equal(pj_result_int64(r, 0, na - 2), 3 * (10 * (1000 - step - 1)) + 3);
    assert_int_equal(pj_result_int64(r, 0, na - 1), 2 * 9990 + 1);
    pj_result_free(r);
    free(agg.s);
    /* an error in the middle of the row, then a good query */
    fails(e, "FROM pw |> SET c500 = c499 + 'x'",
          "SET: cannot add strings with '+': use || to concatenate", 27);
    pj_engine_close(e);
  }
}

/* ---- 10 million NULLs ---------------------------------------------------------- */

#define NNULL 10000000

static void test_ten_million_nulls(void **state) {
  pj_engine *e = open_engine(PJ_MODE_INTERP);
  /* Built directly: SQLite would need several seconds for the rows. */
  const char *names[] = {"x", "s", "ts", "dur"};
  rt_type types[] = {RT_I64, RT_STR, RT_I64, RT_I64};
  rt_table_builder *b = rt_tb_new("nulls", 4, names, types);
  assert_non_null(b);
  for (int c = 0; c < 4; c++)
    for (int64_t i = 0; i < NNULL; i++) rt_tb_append_null(b, c);
  rt_table *t = rt_tb_finish(b);
  assert_non_null(t);
  assert_int_equal(t->nrows, NNULL);
  rt_catalog_put(e->catalog, t);
  for (int m = 0; m < NMODES; m++) {
    pj_engine_set_mode(e, k_modes[m]);
    pj_result *r = run_ok(e, "FROM nulls |> EXTEND x * 2.5 AS d |> AGGREGATE COUNT(*) AS n, "
                             "COUNT(x) AS nx, SUM(x) AS sx, MIN(s) AS ms, AVG(d) AS ad");
    assert_int_equal(pj_result_int64(r, 0, 0), NNULL);
    assert_int_equal(pj_result_int64(r, 0, 1), 0);
    for (int c = 2; c <= 4; c++) assert_true(pj_result_is_null(r, 0, c));
    pj_result_free(r);

    r = run_ok(e, "FROM nulls |> WHERE x IS NULL AND s IS NULL |> EXTEND x + 1 AS y |> "
                  "AGGREGATE COUNT(*) AS n, COUNT(y) AS ny GROUP BY s");
    assert_int_equal(pj_result_row_count(r), 1);
    assert_true(pj_result_is_null(r, 0, 0));
    assert_int_equal(pj_result_int64(r, 0, 1), NNULL);
    assert_int_equal(pj_result_int64(r, 0, 2), 0);
    pj_result_free(r);

    /* a comparison with NULL keeps nothing; ORDER BY and LIMIT cope */
    assert_int_equal(int_of(e, "FROM nulls |> WHERE x = 1 OR ts > 0 |> AGGREGATE COUNT(*) AS n"),
                     0);
    r = run_ok(e, "FROM nulls |> SELECT x |> ORDER BY x DESC |> LIMIT 2 OFFSET 9999999");
    assert_int_equal(pj_result_row_count(r), 1);
    assert_true(pj_result_is_null(r, 0, 0));
    pj_result_free(r);

    /* NULL bounds are skipped by the interval operators */
    assert_int_equal(int_of(e, "FROM nulls |> INTERVAL FLATTEN AGGREGATE COUNT(*) AS n "
                               "|> AGGREGATE COUNT(*) AS segs"),
                     0);
    /* and NULL ids are an error, after which the engine works */
    assert_int_equal(pj_engine_exec(e, "FROM nulls |> RENAME x AS id, ts AS parent_id |> "
                                       "TREE ACCUMULATE UP COUNT(*) AS n", NULL, NULL),
                     PJ_ERROR);
    assert_string_equal(pj_engine_errmsg(e), "TREE ACCUMULATE: a row has no id: row 1 of the input, with no parent_id");
    still_works(e);
  }
  pj_engine_close(e);
}

/* ---- NUL bytes ------------------------------------------------------------------ */

static void test_nul_bytes(void **state) {
  for (int m = 0; m < NMODES; m++) {
    pj_engine *e = open_engine(k_modes[m]);
    exec_ok(e, "CREATE TABLE u(s TEXT, k INT);"
               "INSERT INTO u VALUES (CAST(X'610062' AS TEXT), 1), ('a', 2), (CAST(X'00' AS TEXT), 3);"
               "CREATE PERFETTO TABLE pu AS SELECT * FROM u");
    for (int src = 0; src < 2; src++) {
      const char *q = src ? "FROM u |> ORDER BY k" : "FROM pu |> ORDER BY k";
      pj_result *r = run_ok(e, q);
      size_t len = 0;
      const char *s = pj_result_text(r, 0, 0, &len);
      /* the bytes after the NUL are kept, and so the two strings differ */
      assert_int_equal(len, 3);
      assert_memory_equal(s, "a\0b", 3);
      s = pj_result_text(r, 1, 0, &len);
      assert_int_equal(len, 1);
      s = pj_result_text(r, 2, 0, &len);
      assert_int_equal(len, 1);
      assert_int_equal(s[0], 0);
      pj_result_free(r);
    }
    /* a parameter holding a NUL matches the same bytes, not a prefix */
    pj_query *h = NULL;
    assert_int_equal(pj_query_compile(e, "FROM pu |> WHERE s = ?1 |> SELECT k", &h), PJ_OK);
    assert_int_equal(pj_query_bind_text(h, 1, "a\0b", 3), PJ_OK);
    pj_result *r = NULL;
    assert_int_equal(pj_query_run(h, &r), PJ_OK);
    assert_int_equal(pj_result_row_count(r), 1);
    assert_int_equal(pj_result_int64(r, 0, 0), 1);
    pj_result_free(r);
    assert_int_equal(pj_query_bind_text(h, 1, "\0", 1), PJ_OK);
    assert_int_equal(pj_query_run(h, &r), PJ_OK);
    assert_int_equal(pj_result_row_count(r), 1);
    assert_int_equal(pj_result_int64(r, 0, 0), 3);
    pj_result_free(r);
    pj_query_free(h);
    /* grouping keeps the three apart */
    assert_int_equal(int_of(e, "FROM pu |> AGGREGATE COUNT(*) AS n GROUP BY s |> "
                               "AGGREGATE COUNT(*) AS groups"),
                     3);
    /* A script is a C string: a NUL ends it, whatever follows. */
    static const char script[] = "FROM pu |> AGGREGATE COUNT(*) AS n\0 |> garbage (";
    int seen = 0;
    assert_int_equal(pj_engine_exec(e, script, count_results, &seen), PJ_OK);
    assert_int_equal(seen, 1);
    still_works(e);
    pj_engine_close(e);
  }
}

int main(void) {
  /* PJ_TEST_FILTER=test_name runs one test (for timing and debugging). */
  if (getenv("PJ_TEST_FILTER")) cmocka_set_test_filter(getenv("PJ_TEST_FILTER"));
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_deep_nesting),     cmocka_unit_test(test_long_names),
      cmocka_unit_test(test_wide_texts),       cmocka_unit_test(test_thousand_columns),
      cmocka_unit_test(test_ten_million_nulls), cmocka_unit_test(test_nul_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
