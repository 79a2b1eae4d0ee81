/*
 * test_arrow.c — the Arrow C data interface export (api/arrow.c): every
 * column type and NULL read back from the exported structs as a consumer
 * would (formats, buffers, bitmaps, offsets) and compared with the row
 * accessors; children moved out and released alone; arrays that outlive
 * the result and the engine; the one-batch stream; empty results; results
 * kept beyond a callback with pj_result_clone; predicates typed bool.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/engine.h"
#include "pipejit.h"

static int setup_engine(void **state) {
  pj_engine *e = NULL;
  if (pj_engine_open(NULL, &e) != PJ_OK) return -1;
  pj_engine_set_mode(e, PJ_MODE_INTERP);
  *state = e;
  return 0;
}

static int teardown_engine(void **state) {
  pj_engine_close(*state);
  return 0;
}

static pj_result *run1(pj_engine *e, const char *text) {
  pj_query *q = NULL;
  if (pj_query_compile(e, text, &q) != PJ_OK) fail_msg("%s\n-> %s", text, pj_engine_errmsg(e));
  pj_result *r = NULL;
  if (pj_query_run(q, &r) != PJ_OK) fail_msg("%s\n-> %s", text, pj_engine_errmsg(e));
  pj_query_free(q);
  return r;
}

/* ---- a consumer ----------------------------------------------------------- */

static int arrow_valid(const struct ArrowArray *a, int64_t i) {
  const uint8_t *bits = a->buffers[0];
  i += a->offset;
  return !bits || (bits[i >> 3] >> (i & 7)) & 1;
}

/* Checks child array `a` with schema `s` against column c of r, row by
 * row, reading only what the Arrow specification defines. */
static void check_column(const pj_result *r, int c, const struct ArrowSchema *s,
                         const struct ArrowArray *a) {
  int64_t n = pj_result_row_count(r);
  assert_string_equal(s->name, pj_result_column_name(r, c));
  assert_true(s->flags & ARROW_FLAG_NULLABLE);
  assert_int_equal(s->n_children, 0);
  assert_int_equal(a->length, n);
  assert_int_equal(a->offset, 0);
  assert_int_equal(a->n_children, 0);
  assert_non_null(a->buffers[1]);
  int64_t nulls = 0;
  for (int64_t i = 0; i < n; i++) nulls += pj_result_is_null(r, i, c);
  assert_int_equal(a->null_count, nulls);
  if (nulls == 0) assert_null(a->buffers[0]);
  pj_type t = pj_result_column_type(r, c);
  const char *want = t == PJ_TYPE_DOUBLE ? "g" : t == PJ_TYPE_STRING ? "u" : t == PJ_TYPE_BOOL ? "b" : "l";
  assert_string_equal(s->format, want);
  assert_int_equal(a->n_buffers, t == PJ_TYPE_STRING ? 3 : 2);
  for (int64_t i = 0; i < n; i++) {
    int is_null = pj_result_is_null(r, i, c);
    assert_int_equal(!arrow_valid(a, i), is_null);
    switch (s->format[0]) {
    case 'l':
      if (!is_null) assert_int_equal(((const int64_t *)a->buffers[1])[i], pj_result_int64(r, i, c));
      break;
    case 'g':
      if (!is_null) assert_true(((const double *)a->buffers[1])[i] == pj_result_double(r, i, c));
      break;
    case 'b': {
      int bit = (((const uint8_t *)a->buffers[1])[i >> 3] >> (i & 7)) & 1;
      if (!is_null) assert_int_equal(bit, pj_result_int64(r, i, c) != 0);
      break;
    }
    case 'u': {
      const int32_t *off = a->buffers[1];
      const char *bytes = a->buffers[2];
      assert_true(off[i + 1] >= off[i]);
      if (is_null) {
        assert_int_equal(off[i + 1], off[i]);
      } else {
        size_t len = 0;
        const char *want_s = pj_result_text(r, i, c, &len);
        assert_int_equal((size_t)(off[i + 1] - off[i]), len);
        assert_memory_equal(bytes + off[i], want_s, len);
      }
      break;
    }
    default: fail_msg("unexpected format %s", s->format);
    }
  }
  if (s->format[0] == 'u') assert_int_equal(((const int32_t *)a->buffers[1])[0], 0);
}

/* Exports r and checks every column. */
static void check_export(const pj_result *r) {
  struct ArrowSchema s;
  struct ArrowArray a;
  assert_int_equal(pj_result_export_arrow(r, &s, &a), PJ_OK);
  assert_string_equal(s.format, "+s");
  assert_int_equal(s.n_children, pj_result_column_count(r));
  assert_int_equal(a.n_children, pj_result_column_count(r));
  assert_int_equal(a.length, pj_result_row_count(r));
  assert_int_equal(a.null_count, 0);
  assert_int_equal(a.n_buffers, 1);
  assert_null(a.buffers[0]);
  for (int c = 0; c < s.n_children; c++) check_column(r, c, s.children[c], a.children[c]);
  s.release(&s);
  assert_null(s.release);
  a.release(&a);
  assert_null(a.release);
}

/* ---- every type ------------------------------------------------------------- */

/* A hand-made result with every storage type, including the 32-bit kinds
 * no pipeline result has today, and NULLs in each nullable kind. */
static void test_every_storage_type(void **state) {
  rt_strpool *pool = rt_strpool_new();
  const char *names[] = {"id", "u", "i", "big", "d", "s", "b"};
  const rt_type types[] = {RT_ID, RT_U32, RT_I32, RT_I64, RT_F64, RT_STR, RT_BOOL};
  rt_table_builder *b = rt_tb_new("t", 7, names, types);
  const char *words[] = {"", "héllo", "x", "a longer string"};
  for (int i = 0; i < 200; i++) {
    rt_tb_append_i64(b, 0, i);
    if (i % 7 == 3) rt_tb_append_null(b, 1);
    else rt_tb_append_i64(b, 1, 4000000000 - i);
    if (i % 5 == 1) rt_tb_append_null(b, 2);
    else rt_tb_append_i64(b, 2, -i * 1000);
    rt_tb_append_i64(b, 3, (int64_t)i << 40);
    if (i % 3 == 0) rt_tb_append_null(b, 4);
    else rt_tb_append_f64(b, 4, i / 8.0);
    if (i % 11 == 2) rt_tb_append_null(b, 5);
    else rt_tb_append_str(b, 5, rt_str_intern(pool, words[i % 4], strlen(words[i % 4])));
    if (i % 13 == 0) rt_tb_append_null(b, 6);
    else rt_tb_append_i64(b, 6, i % 2);
  }
  rt_table *t = rt_tb_finish(b);
  assert_non_null(t);
  const rt_type stored[] = {RT_ID, RT_U32, RT_I32, RT_I64, RT_F64, RT_STR, RT_BOOL};
  for (int c = 0; c < 7; c++) assert_int_equal(t->cols[c].type, stored[c]);
  pj_result *r = pj__result_new(t, pool);
  check_export(r);

  /* A child moved out (as the specification allows) lives on alone: after
   * the parent, the result and the pool are gone. */
  struct ArrowSchema s;
  struct ArrowArray a;
  assert_int_equal(pj_result_export_arrow(r, &s, &a), PJ_OK);
  struct ArrowArray str = *a.children[5], dbl = *a.children[4];
  a.children[5]->release = NULL;
  a.children[4]->release = NULL;
  a.release(&a);
  s.release(&s);
  pj_result_free(r);
  rt_strpool_free(pool);
  const int32_t *off = str.buffers[1];
  assert_memory_equal((const char *)str.buffers[2] + off[1], "héllo", strlen("héllo"));
  assert_int_equal(str.null_count, 200 / 11 + (200 % 11 > 2));
  assert_true(((const double *)dbl.buffers[1])[1] == 1 / 8.0);
  str.release(&str);
  dbl.release(&dbl);
}

/* A pipeline's result: ids, integers, doubles, strings and predicates with
 * NULLs, on both backends; the arrays outlive the result and the engine. */
static void test_pipeline_result(void **state) {
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  assert_int_equal(pj_engine_exec(e,
                                  "CREATE TABLE t(id INTEGER, v INTEGER, w REAL, name TEXT);"
                                  "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n "
                                  "WHERE i < 999) INSERT INTO t SELECT i, CASE WHEN i % 4 = 1 "
                                  "THEN NULL ELSE i * 3 END, CASE WHEN i % 6 = 0 THEN NULL ELSE "
                                  "i / 4.0 END, CASE WHEN i % 9 = 4 THEN NULL ELSE 'n' || (i % 17) "
                                  "END FROM n",
                                  NULL, NULL),
                   PJ_OK);
  assert_int_equal(pj_engine_load_table(e, "t"), PJ_OK);
  const char *text = "FROM t |> SELECT id, v, w, name, v > 100 AS big, name = 'n3' AS is3";
  struct ArrowSchema keep_s;
  struct ArrowArray keep_a;
  for (int mode = PJ_MODE_INTERP; mode <= PJ_MODE_JIT; mode++) {
    pj_engine_set_mode(e, (pj_mode)mode);
    pj_result *r = run1(e, text);
    assert_int_equal(pj_result_row_count(r), 1000);
    assert_int_equal(pj_result_column_type(r, 0), PJ_TYPE_ID);
    assert_int_equal(pj_result_column_type(r, 4), PJ_TYPE_BOOL);   /* predicates are bool */
    assert_int_equal(pj_result_column_type(r, 5), PJ_TYPE_BOOL);
    check_export(r);
    if (mode == PJ_MODE_JIT) assert_int_equal(pj_result_export_arrow(r, &keep_s, &keep_a), PJ_OK);
    pj_result_free(r);
  }
  pj_engine_close(e);
  /* Row 7: v = 21, w = 1.75, name 'n7', big false; row 5: v NULL. */
  assert_string_equal(keep_s.children[3]->format, "u");
  const int32_t *off = keep_a.children[3]->buffers[1];
  assert_memory_equal((const char *)keep_a.children[3]->buffers[2] + off[7], "n7", 2);
  assert_int_equal(((const int64_t *)keep_a.children[1]->buffers[1])[7], 21);
  assert_true(((const double *)keep_a.children[2]->buffers[1])[7] == 1.75);
  assert_int_equal(((const uint8_t *)keep_a.children[4]->buffers[1])[0] >> 7 & 1, 0);
  assert_int_equal(((const uint8_t *)keep_a.children[1]->buffers[0])[0] >> 5 & 1, 0);
  keep_a.release(&keep_a);
  keep_s.release(&keep_s);
}

static void test_empty_result(void **state) {
  pj_engine *e = *state;
  assert_int_equal(pj_engine_load_sample_trace(e, 100), PJ_OK);
  pj_result *r = run1(e, "FROM slice |> WHERE dur < 0 |> SELECT id, ts, name, dur > 0 AS p");
  assert_int_equal(pj_result_row_count(r), 0);
  check_export(r);
  pj_result_free(r);
}

/* Only the schema, or only the array. */
static void test_export_one_side(void **state) {
  pj_engine *e = *state;
  assert_int_equal(pj_engine_load_sample_trace(e, 100), PJ_OK);
  pj_result *r = run1(e, "FROM slice |> SELECT name, dur |> LIMIT 3");
  struct ArrowSchema s;
  struct ArrowArray a;
  assert_int_equal(pj_result_export_arrow(r, &s, NULL), PJ_OK);
  assert_string_equal(s.children[1]->name, "dur");
  s.release(&s);
  assert_int_equal(pj_result_export_arrow(r, NULL, &a), PJ_OK);
  assert_int_equal(a.children[0]->length, 3);
  a.release(&a);
  pj_result_free(r);
}

/* ---- the stream ------------------------------------------------------------- */

static void test_stream(void **state) {
  pj_engine *e = *state;
  assert_int_equal(pj_engine_load_sample_trace(e, 1000), PJ_OK);
  pj_result *r = run1(e, "FROM slice |> WHERE depth = 0 |> SELECT id, name, dur |> ORDER BY id");
  struct ArrowArrayStream st;
  assert_int_equal(pj_result_export_arrow_stream(r, &st), PJ_OK);
  int64_t rows = pj_result_row_count(r);
  pj_result_free(r);   /* the stream owns what it needs */
  for (int k = 0; k < 2; k++) {   /* get_schema may be called again */
    struct ArrowSchema s;
    assert_int_equal(st.get_schema(&st, &s), 0);
    assert_string_equal(s.format, "+s");
    assert_int_equal(s.n_children, 3);
    assert_string_equal(s.children[1]->name, "name");
    assert_string_equal(s.children[1]->format, "u");
    s.release(&s);
  }
  struct ArrowArray a;
  assert_int_equal(st.get_next(&st, &a), 0);
  assert_non_null(a.release);
  assert_int_equal(a.length, rows);
  assert_true(rows > 0);
  assert_null(st.get_last_error(&st));
  struct ArrowArray end;
  assert_int_equal(st.get_next(&st, &end), 0);
  assert_null(end.release);   /* end of stream */
  st.release(&st);
  assert_null(st.release);
  a.release(&a);   /* the batch outlives the stream */

  /* A stream released without reading frees its batch. */
  r = run1(e, "FROM slice |> SELECT name |> LIMIT 5");
  assert_int_equal(pj_result_export_arrow_stream(r, &st), PJ_OK);
  pj_result_free(r);
  st.release(&st);
}

/* ---- results beyond a callback -------------------------------------------- */

static int keep_clone(void *ctx, const pj_result *r, const char *t, size_t l, size_t o) {
  return pj_result_clone(r, (pj_result **)ctx) != PJ_OK;
}

static void test_clone_outlives_callback(void **state) {
  pj_engine *e = *state;
  pj_result *kept = NULL;
  assert_int_equal(pj_engine_exec(e, "SELECT 7 AS a, 'seven' AS b, NULL AS c", keep_clone, &kept),
                   PJ_OK);
  assert_non_null(kept);
  assert_int_equal(pj_result_row_count(kept), 1);
  assert_int_equal(pj_result_int64(kept, 0, 0), 7);
  assert_string_equal(pj_result_text(kept, 0, 1, NULL), "seven");
  assert_true(pj_result_is_null(kept, 0, 2));
  check_export(kept);
  pj_result_free(kept);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_storage_type),
      cmocka_unit_test(test_pipeline_result),
      cmocka_unit_test_setup_teardown(test_empty_result, setup_engine, teardown_engine),
      cmocka_unit_test_setup_teardown(test_export_one_side, setup_engine, teardown_engine),
      cmocka_unit_test_setup_teardown(test_stream, setup_engine, teardown_engine),
      cmocka_unit_test_setup_teardown(test_clone_outlives_callback, setup_engine, teardown_engine),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
