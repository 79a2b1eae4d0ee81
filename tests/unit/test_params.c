/*
 * test_params.c — the engine's parameters (pj_engine_bind_*): read by the
 * pipelines of a script, CREATE PERFETTO TABLE, plain SQL and the
 * pipelines inside it, and by compiled handles (whose own bindings win),
 * under one name whatever the prefix; each type typing the plan as a
 * handle's binding would; listing, replacing and forgetting them. Every
 * query runs on the interpreter and on the JIT (when the build has one).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/hooks.h"
#include "pipejit.h"

typedef struct fixture {
  pj_engine *e;
  int jit;   /* the build can compile */
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f || pj_engine_open(NULL, &f->e) != PJ_OK) return -1;
  f->jit = pj__engine_jit(f->e) == PJ_OK;
  if (pj_engine_exec(f->e,
                     "CREATE PERFETTO TABLE t AS SELECT 1 AS id, 'a' AS name, 0.5 AS w "
                     "UNION ALL SELECT 2, 'b', 1.5 UNION ALL SELECT 3, 'c', 2.5",
                     NULL, NULL) != PJ_OK)
    return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  pj_engine_close(f->e);
  free(f);
  return 0;
}

/* The script's last result as "v1,v2;v1,v2" text (cells by SQLite's
 * text of them), into a static buffer. */
static char got[512];

static int collect(void *ctx, const pj_result *r, const char *t, size_t l, size_t o) {
  (void)ctx, (void)t, (void)l, (void)o;
  size_t n = 0;
  got[0] = 0;
  for (int64_t i = 0; i < pj_result_row_count(r); i++) {
    for (int c = 0; c < pj_result_column_count(r); c++) {
      const char *sep = c ? "," : i ? ";" : "";
      if (pj_result_is_null(r, i, c))
        n += (size_t)snprintf(got + n, sizeof got - n, "%sNULL", sep);
      else if (pj_result_column_type(r, c) == PJ_TYPE_STRING) {
        size_t len;
        const char *s = pj_result_text(r, i, c, &len);
        n += (size_t)snprintf(got + n, sizeof got - n, "%s%.*s", sep, (int)len, s);
      } else if (pj_result_column_type(r, c) == PJ_TYPE_DOUBLE)
        n += (size_t)snprintf(got + n, sizeof got - n, "%s%g", sep, pj_result_double(r, i, c));
      else
        n += (size_t)snprintf(got + n, sizeof got - n, "%s%lld", sep,
                              (long long)pj_result_int64(r, i, c));
    }
  }
  return 0;
}

/* Runs script in each mode; its last result must read `want`. */
static void expect(fixture *f, const char *script, const char *want) {
  for (int m = 0; m < 1 + f->jit; m++) {
    pj_engine_set_mode(f->e, m ? PJ_MODE_JIT : PJ_MODE_INTERP);
    got[0] = 0;
    if (pj_engine_exec(f->e, script, collect, NULL) != PJ_OK)
      fail_msg("%s (%s)\n-> %s", script, m ? "jit" : "interp", pj_engine_errmsg(f->e));
    if (strcmp(got, want))
      fail_msg("%s (%s)\n-> %s, want %s", script, m ? "jit" : "interp", got, want);
  }
}

static void expect_error(fixture *f, const char *script, const char *msg) {
  for (int m = 0; m < 1 + f->jit; m++) {
    pj_engine_set_mode(f->e, m ? PJ_MODE_JIT : PJ_MODE_INTERP);
    assert_int_not_equal(pj_engine_exec(f->e, script, NULL, NULL), PJ_OK);
    if (!strstr(pj_engine_errmsg(f->e), msg))
      fail_msg("%s\n-> %s, want %s", script, pj_engine_errmsg(f->e), msg);
  }
}

static void test_pipelines_and_sql(void **state) {
  fixture *f = *state;
  pj_engine_clear_bindings(f->e);
  assert_int_equal(pj_engine_bind_int64(f->e, "min", 2), PJ_OK);
  assert_int_equal(pj_engine_bind_text(f->e, "$who", "c", 1), PJ_OK);
  assert_int_equal(pj_engine_bind_double(f->e, ":wmax", 2.0), PJ_OK);
  /* every prefix reads the one parameter */
  expect(f, "FROM t |> WHERE id >= $min |> SELECT id", "2;3");
  expect(f, "FROM t |> WHERE id >= :min |> SELECT id", "2;3");
  expect(f, "FROM t |> WHERE id >= @min AND name = $who |> SELECT id", "3");
  /* a real value types the plan as a real: 1.5 < 2.0, not 1 < 2 */
  expect(f, "FROM t |> WHERE w < $wmax |> AGGREGATE COUNT(*) AS n", "2");
  expect(f, "SELECT count(*) FROM t WHERE id >= $min AND w < :wmax", "1");
  expect(f, "SELECT $who, :who, @who, typeof(@wmax)", "c,c,c,real");
  /* a pipeline inside SQL, and CREATE PERFETTO TABLE of a pipeline */
  expect(f, "SELECT count(*) FROM (FROM t |> WHERE id >= $min)", "2");
  expect(f, "CREATE OR REPLACE PERFETTO TABLE big AS FROM t |> WHERE id >= $min; FROM big |> SELECT name",
         "b;c");
  /* replaced: the next statement reads the new value (and type) */
  assert_int_equal(pj_engine_bind_text(f->e, "min", "2", 1), PJ_OK);
  expect(f, "SELECT typeof($min)", "text");
  assert_int_equal(pj_engine_bind_null(f->e, "@min"), PJ_OK);
  expect(f, "FROM t |> WHERE id >= $min |> AGGREGATE COUNT(*) AS n", "0");
  expect(f, "SELECT $min IS NULL", "1");
  /* forgotten: a pipeline fails naming it, SQL reads NULL as SQLite does */
  assert_int_equal(pj_engine_unbind(f->e, "min"), PJ_OK);
  expect_error(f, "FROM t |> WHERE id >= $min |> SELECT id", "parameter $min is not bound");
  expect(f, "SELECT $min IS NULL", "1");
  assert_int_equal(pj_engine_unbind(f->e, "min"), PJ_ERROR);
  assert_non_null(strstr(pj_engine_errmsg(f->e), "'min' has no value"));
  pj_engine_clear_bindings(f->e);
  assert_int_equal(pj_engine_param_count(f->e), 0);
  expect_error(f, "FROM t |> WHERE name = $who |> SELECT id", "parameter $who is not bound");
}

static void test_handles(void **state) {
  fixture *f = *state;
  pj_engine_clear_bindings(f->e);
  for (int m = 0; m < 1 + f->jit; m++) {
    pj_engine_set_mode(f->e, m ? PJ_MODE_JIT : PJ_MODE_INTERP);
    pj_query *q = NULL;
    assert_int_equal(pj_query_compile(f->e, "FROM t |> WHERE id > $min |> AGGREGATE COUNT(*) AS n",
                                      &q),
                     PJ_OK);
    pj_result *r = NULL;
    /* neither bound: the run names it */
    assert_int_equal(pj_query_run(q, &r), PJ_ERROR);
    assert_non_null(strstr(pj_engine_errmsg(f->e), "parameter $min is not bound"));
    /* the engine's value, read again at every run */
    assert_int_equal(pj_engine_bind_int64(f->e, "min", 1), PJ_OK);
    assert_int_equal(pj_query_run(q, &r), PJ_OK);
    assert_int_equal(pj_result_int64(r, 0, 0), 2);
    pj_result_free(r);
    assert_int_equal(pj_engine_bind_double(f->e, "min", 2.5), PJ_OK);
    assert_int_equal(pj_query_run(q, &r), PJ_OK);
    assert_int_equal(pj_result_int64(r, 0, 0), 1);   /* 3 > 2.5, typed as a real */
    pj_result_free(r);
    /* the handle's own binding wins */
    assert_int_equal(pj_query_bind_int64(q, pj_query_param_index(q, "min"), 0), PJ_OK);
    assert_int_equal(pj_query_run(q, &r), PJ_OK);
    assert_int_equal(pj_result_int64(r, 0, 0), 3);
    pj_result_free(r);
    /* ... until cleared */
    pj_query_clear_bindings(q);
    assert_int_equal(pj_query_run(q, &r), PJ_OK);
    assert_int_equal(pj_result_int64(r, 0, 0), 1);
    pj_result_free(r);
    /* the plan of a handle compiled with an engine value is typed for it */
    pj_query *q2 = NULL;
    assert_int_equal(pj_query_compile(f->e, "FROM t |> SELECT id, $min AS m", &q2), PJ_OK);
    assert_non_null(strstr(pj_query_plan(q2), "m double"));
    assert_int_equal(pj_query_run(q2, &r), PJ_OK);
    assert_int_equal(pj_result_column_type(r, 1), PJ_TYPE_DOUBLE);
    pj_result_free(r);
    pj_query_free(q2);
    pj_engine_unbind(f->e, "min");
    pj_query_free(q);
  }
}

static void test_names_and_listing(void **state) {
  fixture *f = *state;
  pj_engine_clear_bindings(f->e);
  const char *bad[] = {"", "$", "?1", "1x", "a b", "a-b", ":", NULL};
  for (int i = 0; bad[i]; i++) {
    assert_int_equal(pj_engine_bind_int64(f->e, bad[i], 1), PJ_ERROR);
    assert_non_null(strstr(pj_engine_errmsg(f->e), "expected a name"));
  }
  assert_int_equal(pj_engine_param_count(f->e), 0);
  assert_int_equal(pj_engine_bind_int64(f->e, "$b", 7), PJ_OK);
  assert_int_equal(pj_engine_bind_text(f->e, "a", "x\0y", 3), PJ_OK);
  assert_int_equal(pj_engine_bind_null(f->e, ":c"), PJ_OK);
  assert_int_equal(pj_engine_bind_double(f->e, "@b", 0.25), PJ_OK);   /* replaces $b */
  assert_int_equal(pj_engine_param_count(f->e), 3);
  pj_param p;
  assert_int_equal(pj_engine_param(f->e, 0, &p), PJ_OK);
  assert_string_equal(p.name, "b");
  assert_int_equal(p.type, PJ_TYPE_DOUBLE);
  assert_true(p.d == 0.25);
  assert_int_equal(pj_engine_param(f->e, 1, &p), PJ_OK);
  assert_string_equal(p.name, "a");
  assert_int_equal(p.type, PJ_TYPE_STRING);
  assert_int_equal(p.len, 3);
  assert_memory_equal(p.s, "x\0y", 3);
  assert_int_equal(pj_engine_param(f->e, 2, &p), PJ_OK);
  assert_string_equal(p.name, "c");
  assert_true(p.is_null);
  assert_int_equal(pj_engine_param(f->e, 3, &p), PJ_ERROR);
  assert_int_equal(pj_engine_param(f->e, -1, &p), PJ_ERROR);
  /* text with a NUL reaches SQL whole */
  expect(f, "SELECT length(CAST($a AS BLOB))", "3");
  assert_int_equal(pj_engine_unbind(f->e, "b"), PJ_OK);
  assert_int_equal(pj_engine_param(f->e, 0, &p), PJ_OK);
  assert_string_equal(p.name, "a");
  pj_engine_clear_bindings(f->e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pipelines_and_sql),
      cmocka_unit_test(test_handles),
      cmocka_unit_test(test_names_and_listing),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
