/*
 * test_sqlite_rt.c — the runtime's SQLite side: describing and reading SQL
 * sources (sqlsrc.c), the "pipejit" virtual table (vtab.c), and the sample
 * trace (sample.c).
 *
 * Virtual table tests are differential: each query runs on an exposed
 * columnar table and on a plain SQLite copy of the same rows, and the rows
 * must be identical, value type included. Plan-shape tests check that keyed
 * lookups and ORDER BY use the table's row order.
 */
#include <setjmp.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "import/sample.h"
#include "runtime/sqlite/sqlsrc.h"
#include "runtime/store.h"
#include "runtime/sqlite/vtab.h"
#include "runtime/tabindex.h"

typedef struct fx {
  sqlite3 *db;
  rt_strpool *sp;
  rt_catalog *cat;
  rt_arena arena;
  rt_vtab_stats stats;
} fx;

static int setup(void **state) {
  fx *f = calloc(1, sizeof *f);
  assert_int_equal(sqlite3_open(":memory:", &f->db), SQLITE_OK);
  f->sp = rt_strpool_new();
  f->cat = rt_catalog_new();
  rt_arena_init(&f->arena);
  assert_int_equal(rt_vtab_register(f->db, f->cat, f->sp, &f->stats), SQLITE_OK);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fx *f = *state;
  /* Virtual tables go with the connection, before the catalog they read;
   * a statement left unfinalized makes the close fail. */
  assert_int_equal(sqlite3_close(f->db), SQLITE_OK);
  rt_catalog_free(f->cat);
  rt_strpool_free(f->sp);
  rt_arena_free(&f->arena);
  free(f);
  return 0;
}

static void exec_ok(sqlite3 *db, const char *sql) {
  char *msg = NULL;
  int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
  if (rc != SQLITE_OK) fail_msg("%s: %s", sql, msg ? msg : "?");
}

/* ---- declared types ------------------------------------------------------ */

/* rt_sql_affinity against SQLite itself: CAST to a type name applies that
 * name's affinity, and the types of CAST('1.5' AS t) and CAST(12 AS t)
 * tell the five apart (NUMERIC keeps 1.5 real but 12 an integer). */
static void test_affinity_matches_sqlite(void **state) {
  fx *f = *state;
  static const char *const decls[] = {
      "INT", "integer", "TINYINT", "UNSIGNED BIG INT", "INT8", "FLOATING POINT", "pointer",
      "CHARACTER(20)", "VARCHAR(255)", "nchar(55)", "TEXT", "CLOB", "CHARINT", "BLOB",
      "blob text", "REAL", "DOUBLE PRECISION", "FLOAT", "BLOBREAL", "NUMERIC",
      "DECIMAL(10,5)", "BOOLEAN", "DATETIME", "STRING", "STRINGREAL", "x",
      "A_VERY_LONG_TYPE_NAME_THAT_GOES_ON_PAST_SIXTY_FOUR_CHARACTERS_BEFORE_INT",
  };
  static const char *const names[] = {"INTEGER", "TEXT", "BLOB", "REAL", "NUMERIC"};
  for (size_t i = 0; i < sizeof decls / sizeof *decls; i++) {
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT typeof(CAST('1.5' AS %s)), typeof(CAST(12 AS %s))", decls[i],
             decls[i]);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(f->db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    char sig[64];
    snprintf(sig, sizeof sig, "%s %s", sqlite3_column_text(st, 0), sqlite3_column_text(st, 1));
    sqlite3_finalize(st);
    const char *want = strcmp(sig, "integer integer") == 0 ? "INTEGER"
                       : strcmp(sig, "text text") == 0     ? "TEXT"
                       : strcmp(sig, "blob blob") == 0     ? "BLOB"
                       : strcmp(sig, "real real") == 0     ? "REAL"
                       : strcmp(sig, "real integer") == 0  ? "NUMERIC"
                                                           : sig;
    const char *got = names[rt_sql_affinity(decls[i])];
    if (strcmp(got, want) != 0) fail_msg("%s: rt_sql_affinity says %s, SQLite %s", decls[i], got, want);
  }
  assert_int_equal(rt_sql_affinity(NULL), RT_AFF_BLOB);
  assert_int_equal(rt_sql_affinity(""), RT_AFF_BLOB);
}

/* The Perfetto reading: STRING is text, ranked with the text words. */
static void test_decl_type(void **state) {
  (void)state;
  assert_int_equal(rt_sql_decl_type("bigint"), RT_I64);
  assert_int_equal(rt_sql_decl_type("VARCHAR(10)"), RT_STR);
  assert_int_equal(rt_sql_decl_type("STRING"), RT_STR);
  assert_int_equal(rt_sql_decl_type("STRINGREAL"), RT_STR);
  assert_int_equal(rt_sql_decl_type("STRING BLOB"), RT_STR);
  assert_int_equal(rt_sql_decl_type("INTSTRING"), RT_I64);
  assert_int_equal(rt_sql_decl_type("double"), RT_F64);
  assert_int_equal(rt_sql_decl_type("NUMERIC"), RT_NULLT);
  assert_int_equal(rt_sql_decl_type("BLOB"), RT_NULLT);
  assert_int_equal(rt_sql_decl_type(""), RT_NULLT);
  assert_int_equal(rt_sql_decl_type(NULL), RT_NULLT);
}

/* ---- describe ------------------------------------------------------------- */

static void test_describe_declared(void **state) {
  fx *f = *state;
  exec_ok(f->db, "CREATE TABLE t(a INTEGER, b BIGINT, c VARCHAR(10), d CLOB, e TEXT, "
                 "f REAL, g DOUBLE PRECISION, h FLOAT, i CHARINT, j NUMERIC, k)");
  exec_ok(f->db, "INSERT INTO t VALUES (1, 2, 'x', 'y', 'z', 1.5, 2.5, 3.5, 4, 7, 'w')");
  rt_sqlcols cols;
  rt_err err = {0};
  assert_true(rt_sql_describe(f->db, "SELECT * FROM t", &f->arena, &cols, &err));
  assert_int_equal(cols.ncols, 11);
  /* CHARINT contains INT, which wins (SQLite's rule order); NUMERIC and an
   * undeclared column are decided by their values. */
  const rt_type want[] = {RT_I64, RT_I64, RT_STR, RT_STR, RT_STR, RT_F64,
                          RT_F64, RT_F64, RT_I64, RT_I64, RT_STR};
  const char *names[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"};
  for (int c = 0; c < 11; c++) {
    assert_int_equal(cols.types[c], want[c]);
    assert_string_equal(cols.names[c], names[c]);
  }
}

static void test_describe_sampled(void **state) {
  fx *f = *state;
  rt_sqlcols cols;
  rt_err err = {0};
  assert_true(rt_sql_describe(f->db, "SELECT 1 AS a, 'x' AS b, 1.5 AS c, NULL AS d, x'00' IS NULL AS e",
                              &f->arena, &cols, &err));
  assert_int_equal(cols.ncols, 5);
  assert_int_equal(cols.types[0], RT_I64);
  assert_int_equal(cols.types[1], RT_STR);
  assert_int_equal(cols.types[2], RT_F64);
  assert_int_equal(cols.types[3], RT_I64);   /* all NULL: integer */
  assert_int_equal(cols.types[4], RT_I64);
  assert_string_equal(cols.names[3], "d");

  /* Any real among integers makes the column double; NULLs do not count. */
  assert_true(rt_sql_describe(f->db, "SELECT column1 AS v FROM (VALUES (1), (NULL), (2.5), (3))",
                              &f->arena, &cols, &err));
  assert_int_equal(cols.types[0], RT_F64);

  /* Sampling reads past the first row: a real deep in the first batch. */
  assert_true(rt_sql_describe(f->db,
                              "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r "
                              "WHERE x < 20000) SELECT CASE WHEN x = 8000 THEN 0.5 ELSE x END "
                              "AS v FROM r",
                              &f->arena, &cols, &err));
  assert_int_equal(cols.types[0], RT_F64);
  assert_false(err.set);
}

static void test_describe_mixed_is_error(void **state) {
  fx *f = *state;
  rt_sqlcols cols;
  rt_err err = {0};
  assert_false(rt_sql_describe(f->db, "SELECT column1 AS v, column2 AS w FROM (VALUES (1, 1), (2, 2), ('x', 3))",
                               &f->arena, &cols, &err));
  assert_true(err.set);
  assert_string_equal(err.msg, "FROM: column 'v' mixes text (row 3) and numbers (row 1), so it "
                               "has no single type: CAST it to one");
  assert_int_equal(err.offset, -1);
}

static void test_describe_prepare_error(void **state) {
  fx *f = *state;
  rt_sqlcols cols;
  rt_err err = {0};
  assert_false(rt_sql_describe(f->db, "SELECT * FROM nope", &f->arena, &cols, &err));
  assert_string_equal(err.msg, "FROM: no such table: nope");

  rt_err err2 = {0};
  assert_false(rt_sql_describe(f->db, "SELEC 1", &f->arena, &cols, &err2));
  assert_string_equal(err2.msg, "FROM: near \"SELEC\": syntax error");

  rt_err err3 = {0};
  assert_false(rt_sql_describe(f->db, "  ", &f->arena, &cols, &err3));
  assert_string_equal(err3.msg, "FROM: the query is empty");

  /* Describing may step a query; one that writes is refused. */
  exec_ok(f->db, "CREATE TABLE w(x INTEGER)");
  rt_err err4 = {0};
  assert_false(rt_sql_describe(f->db, "INSERT INTO w VALUES (1) RETURNING x", &f->arena, &cols, &err4));
  assert_string_equal(err4.msg, "FROM: expected a query that only reads data");
  rt_err err5 = {0};
  assert_false(rt_sql_describe(f->db, "CREATE TABLE z(y)", &f->arena, &cols, &err5));
  assert_string_equal(err5.msg, "FROM: expected a query that returns rows");
}

/* ---- source ----------------------------------------------------------------- */

/* 20000 rows: i NULL every 7th, d NULL every 11th, s NULL every 17th; and
 * k never NULL. Batches: 8192 + 8192 + 3616. */
static void make_source_table(sqlite3 *db) {
  exec_ok(db, "CREATE TABLE src(i INTEGER, d REAL, s TEXT, k INTEGER)");
  exec_ok(db, "WITH RECURSIVE r(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM r WHERE x < 19999) "
              "INSERT INTO src SELECT CASE WHEN x % 7 = 0 THEN NULL ELSE x * 3 - 20000 END, "
              "CASE WHEN x % 11 = 0 THEN NULL ELSE x * 0.5 END, "
              "CASE WHEN x % 17 = 0 THEN NULL ELSE 'name' || (x % 13) END, x FROM r");
}

static void test_source_batches(void **state) {
  fx *f = *state;
  make_source_table(f->db);
  const rt_type types[] = {RT_I64, RT_F64, RT_STR, RT_I64};
  const char *names[] = {"i", "d", "s", "k"};
  rt_err err = {0};
  rt_sqlsrc *s = rt_sqlsrc_open(f->db, "SELECT i, d, s, k FROM src ORDER BY k", 4, types, names,
                                f->sp, "FROM", &err);
  assert_non_null(s);
  rt_view v[4];
  uint32_t n;
  int64_t x = 0;
  int batches = 0;
  const uint32_t sizes[] = {8192, 8192, 3616};
  int rc;
  while ((rc = rt_sqlsrc_next(s, v, &n, &err)) == 1) {
    assert_true(batches < 3);
    assert_int_equal(n, sizes[batches]);
    assert_int_equal(v[0].type, RT_I64);
    assert_int_equal(v[1].type, RT_F64);
    assert_int_equal(v[2].type, RT_STR);
    assert_null(v[3].valid);   /* no NULL in k: no validity bits */
    assert_non_null(v[0].valid);
    for (uint32_t r = 0; r < n; r++, x++) {
      assert_int_equal(rt_view_i64(&v[3], r), x);
      if (x % 7 == 0) assert_true(rt_view_is_null(&v[0], r));
      else {
        assert_false(rt_view_is_null(&v[0], r));
        assert_int_equal(rt_view_i64(&v[0], r), x * 3 - 20000);
      }
      if (x % 11 == 0) assert_true(rt_view_is_null(&v[1], r));
      else assert_true(rt_view_f64(&v[1], r) == (double)x * 0.5);
      if (x % 17 == 0) assert_true(rt_view_is_null(&v[2], r));
      else {
        char want[32];
        int len = snprintf(want, sizeof want, "name%d", (int)(x % 13));
        assert_int_equal(rt_view_str(&v[2], r), rt_str_intern(f->sp, want, (size_t)len));
      }
    }
    batches++;
  }
  assert_int_equal(rc, 0);
  assert_int_equal(batches, 3);
  assert_int_equal(x, 20000);
  assert_int_equal(rt_sqlsrc_next(s, v, &n, &err), 0);   /* stays at the end */
  assert_false(err.set);
  rt_sqlsrc_close(s);
}

static void test_source_empty(void **state) {
  fx *f = *state;
  const rt_type types[] = {RT_I64};
  const char *names[] = {"x"};
  rt_err err = {0};
  rt_sqlsrc *s = rt_sqlsrc_open(f->db, "SELECT 1 AS x WHERE 0", 1, types, names, f->sp, "FROM", &err);
  assert_non_null(s);
  rt_view v[1];
  uint32_t n = 99;
  assert_int_equal(rt_sqlsrc_next(s, v, &n, &err), 0);
  assert_int_equal(n, 0);
  rt_sqlsrc_close(s);
}

/* Reads a one-column query to its end; returns the last rt_sqlsrc_next
 * result and the values seen. */
static int read_one(fx *f, const char *sql, rt_type type, const char *stage, rt_err *err,
                    int64_t *ints, double *dbls, int max) {
  const char *names[] = {"x"};
  rt_sqlsrc *s = rt_sqlsrc_open(f->db, sql, 1, &type, names, f->sp, stage, err);
  if (!s) return -2;
  rt_view v;
  uint32_t n;
  int rc, at = 0;
  while ((rc = rt_sqlsrc_next(s, &v, &n, err)) == 1)
    for (uint32_t r = 0; r < n && at < max; r++, at++) {
      if (ints) ints[at] = rt_view_i64(&v, r);
      if (dbls) dbls[at] = rt_view_f64(&v, r);
    }
  if (rc == -1) assert_int_equal(rt_sqlsrc_next(s, &v, &n, err), -1);   /* sticky */
  rt_sqlsrc_close(s);
  return rc;
}

static void test_source_conversions(void **state) {
  fx *f = *state;
  rt_err err = {0};
  double d[3];
  int64_t i[3];
  /* Integers in a double column convert. */
  assert_int_equal(read_one(f, "SELECT column1 FROM (VALUES (1), (2.5), (-7))", RT_F64, "FROM",
                            &err, NULL, d, 3), 0);
  assert_true(d[0] == 1.0 && d[1] == 2.5 && d[2] == -7.0);
  /* Whole reals in an integer column convert. */
  assert_int_equal(read_one(f, "SELECT column1 FROM (VALUES (3.0), (-2.0), (4))", RT_I64, "FROM",
                            &err, i, NULL, 3), 0);
  assert_true(i[0] == 3 && i[1] == -2 && i[2] == 4);
  assert_false(err.set);
}

static void test_source_type_errors(void **state) {
  fx *f = *state;
  struct {
    const char *sql;
    rt_type type;
    const char *stage;
    const char *msg;
  } cases[] = {
    {"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 20) "
     "SELECT CASE WHEN n = 17 THEN 'oops' ELSE n END FROM r",
     RT_I64, "FROM", "FROM: column 'x' was inferred to be integer from its first rows, but row 17 is string"},
    {"SELECT column1 FROM (VALUES (1), (2.5))", RT_I64, "FROM",
     "FROM: column 'x' was inferred to be integer from its first rows, but row 2 is double (a real with a fraction)"},
    {"SELECT 1e300", RT_I64, "FROM",
     "FROM: column 'x' was inferred to be integer from its first rows, but row 1 is double (a real out of the integer range)"},
    {"SELECT 9223372036854775807 + 1", RT_I64, "FROM",
     "FROM: column 'x' was inferred to be integer from its first rows, but row 1 is double (a real out of the integer range)"},
    {"SELECT column1 FROM (VALUES (1.5), ('a'))", RT_F64, "INTERVAL INTERSECTION OF",
     "INTERVAL INTERSECTION OF: column 'x' was inferred to be double from its first rows, but row 2 is string"},
    {"SELECT column1 FROM (VALUES ('a'), (5))", RT_STR, "FROM",
     "FROM: column 'x' was inferred to be string from its first rows, but row 2 is integer"},
    {"SELECT x'0102'", RT_STR, "FROM",
     "FROM: column 'x' was inferred to be string from its first rows, but row 1 is blob"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    rt_err err = {0};
    assert_int_equal(read_one(f, cases[k].sql, cases[k].type, cases[k].stage, &err, NULL, NULL, 0), -1);
    assert_string_equal(err.msg, cases[k].msg);
  }

  /* A row past the first batch: row numbers count across batches. */
  rt_err err = {0};
  assert_int_equal(read_one(f,
                            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r "
                            "WHERE n < 10000) SELECT CASE WHEN n = 9000 THEN 'z' ELSE n END FROM r",
                            RT_I64, "FROM", &err, NULL, NULL, 0), -1);
  assert_string_equal(err.msg, "FROM: column 'x' was inferred to be integer from its first rows, but row 9000 is string");

  /* A declared type was not inferred: the message says the type it has. */
  rt_err derr = {0};
  assert_int_equal(sqlite3_exec(f->db, "CREATE TABLE decl(x INTEGER); INSERT INTO decl VALUES (1), ('no')",
                                NULL, NULL, NULL), SQLITE_OK);
  assert_int_equal(read_one(f, "SELECT x FROM decl", RT_I64, "FROM", &derr, NULL, NULL, 0), -1);
  assert_string_equal(derr.msg, "FROM: column 'x' has a text value in row 2, but its type is integer");
}

static void test_source_open_errors(void **state) {
  fx *f = *state;
  const rt_type types[] = {RT_I64, RT_I64};
  const char *names[] = {"a", "b"};
  rt_err err = {0};
  assert_null(rt_sqlsrc_open(f->db, "SELECT * FROM nope", 1, types, names, f->sp, "FROM", &err));
  assert_string_equal(err.msg, "FROM: no such table: nope");
  rt_err err2 = {0};
  assert_null(rt_sqlsrc_open(f->db, "SELECT 1, 2, 3", 2, types, names, f->sp, "FROM", &err2));
  assert_string_equal(err2.msg, "FROM: the query now returns 3 columns, but it was compiled for 2");
  /* A runtime SQLite error while stepping. */
  rt_err err3 = {0};
  exec_ok(f->db, "CREATE TABLE big(x INTEGER)");
  exec_ok(f->db, "INSERT INTO big VALUES (9223372036854775807)");
  assert_int_equal(read_one(f, "SELECT sum(x) FROM (SELECT x FROM big UNION ALL SELECT x FROM big)",
                            RT_I64, "FROM", &err3, NULL, NULL, 0), -1);
  assert_string_equal(err3.msg, "FROM: integer overflow");
}

/* ---- virtual table ------------------------------------------------------------ */

enum { VT_ROWS = 5000 };

/* A table with every kind of column: id (becomes RT_ID), ts strictly
 * increasing, grp sorted with runs, val unsorted with NULLs, d sorted with
 * NULLs first, name strings with NULLs, small uint32 and int32 columns. */
static rt_table *make_vt_table(fx *f, const char *tname, int64_t offset) {
  const char *names[] = {"id", "ts", "grp", "val", "d", "name", "u", "i32"};
  const rt_type types[] = {RT_I64, RT_I64, RT_I64, RT_I64, RT_F64, RT_STR, RT_U32, RT_I32};
  rt_table_builder *b = rt_tb_new(tname, 8, names, types);
  for (int64_t i = 0; i < VT_ROWS; i++) {
    rt_tb_append_i64(b, 0, i);
    rt_tb_append_i64(b, 1, i * 3 / 2 + 1000 + offset);
    rt_tb_append_i64(b, 2, i / 10);
    if (i % 9 == 4) rt_tb_append_null(b, 3);
    else rt_tb_append_i64(b, 3, (i * 7919) % 4999 - 100);
    if (i < 10) rt_tb_append_null(b, 4);
    else rt_tb_append_f64(b, 4, (double)i * 0.25);
    if (i % 13 == 5) rt_tb_append_null(b, 5);
    else {
      char s[32];
      int len = snprintf(s, sizeof s, "n%d", (int)(i % 37));
      rt_tb_append_str(b, 5, rt_str_intern(f->sp, s, (size_t)len));
    }
    rt_tb_append_i64(b, 6, i % 100);
    rt_tb_append_i64(b, 7, -(i % 50));
  }
  rt_table *t = rt_tb_finish(b);
  assert_non_null(t);
  return t;
}

/* Copies a table's rows into a plain SQLite table straight from its column
 * arrays (not through the module), as the reference for differential tests. */
static void make_plain_copy(fx *f, const rt_table *t, const char *plain) {
  char create[512], insert[512];
  int cl = snprintf(create, sizeof create, "CREATE TABLE %s(", plain);
  int il = snprintf(insert, sizeof insert, "INSERT INTO %s VALUES (", plain);
  for (int c = 0; c < t->ncols; c++) {
    rt_type ty = t->cols[c].type;
    cl += snprintf(create + cl, sizeof create - (size_t)cl, "%s\"%s\" %s", c ? ", " : "",
                   t->cols[c].name, ty == RT_F64 ? "REAL" : ty == RT_STR ? "TEXT" : "INTEGER");
    il += snprintf(insert + il, sizeof insert - (size_t)il, "%s?", c ? ", " : "");
  }
  snprintf(create + cl, sizeof create - (size_t)cl, ")");
  snprintf(insert + il, sizeof insert - (size_t)il, ")");
  exec_ok(f->db, create);
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(f->db, insert, -1, &st, NULL), SQLITE_OK);
  for (int64_t r = 0; r < t->nrows; r++) {
    for (int c = 0; c < t->ncols; c++) {
      const rt_column *col = &t->cols[c];
      if (col->valid && !rt_bit(col->valid, (uint32_t)r)) {
        sqlite3_bind_null(st, c + 1);
        continue;
      }
      rt_view v;
      rt_table_view(t, c, 0, &v);
      if (col->type == RT_F64) sqlite3_bind_double(st, c + 1, rt_view_f64(&v, (uint32_t)r));
      else if (col->type == RT_STR) {
        size_t len;
        const char *s = rt_str_get(f->sp, rt_view_str(&v, (uint32_t)r), &len);
        sqlite3_bind_text(st, c + 1, s, (int)len, SQLITE_TRANSIENT);
      } else sqlite3_bind_int64(st, c + 1, rt_view_i64(&v, (uint32_t)r));
    }
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
}

/* Runs sql with "T" replaced by each table name; rows must match exactly. */
static void same_rows_in(sqlite3 *db, const char *sql, const char *vt, const char *plain) {
  char q1[1024], q2[1024];
  size_t j1 = 0, j2 = 0;
  for (const char *p = sql; *p; p++) {
    if (*p == 'T' && (p == sql || p[-1] == ' ') && (p[1] == ' ' || p[1] == 0 || p[1] == '.')) {
      j1 += (size_t)sprintf(q1 + j1, "%s", vt);
      j2 += (size_t)sprintf(q2 + j2, "%s", plain);
    } else {
      q1[j1++] = *p;
      q2[j2++] = *p;
    }
  }
  q1[j1] = q2[j2] = 0;
  sqlite3_stmt *a, *b;
  if (sqlite3_prepare_v2(db, q1, -1, &a, NULL) != SQLITE_OK) fail_msg("%s: %s", q1, sqlite3_errmsg(db));
  assert_int_equal(sqlite3_prepare_v2(db, q2, -1, &b, NULL), SQLITE_OK);
  int rows = 0;
  for (;;) {
    int ra = sqlite3_step(a), rb = sqlite3_step(b);
    if (ra != rb) fail_msg("%s: row %d: step %d vs %d (%s)", q1, rows, ra, rb, sqlite3_errmsg(db));
    if (ra != SQLITE_ROW) break;
    int n = sqlite3_column_count(a);
    assert_int_equal(n, sqlite3_column_count(b));
    for (int c = 0; c < n; c++) {
      int ta = sqlite3_column_type(a, c), tb = sqlite3_column_type(b, c);
      if (ta != tb) fail_msg("%s: row %d col %d: type %d vs %d", q1, rows, c, ta, tb);
      if (ta == SQLITE_INTEGER && sqlite3_column_int64(a, c) != sqlite3_column_int64(b, c))
        fail_msg("%s: row %d col %d: %lld vs %lld", q1, rows, c,
                 (long long)sqlite3_column_int64(a, c), (long long)sqlite3_column_int64(b, c));
      if (ta == SQLITE_FLOAT && sqlite3_column_double(a, c) != sqlite3_column_double(b, c))
        fail_msg("%s: row %d col %d: %g vs %g", q1, rows, c, sqlite3_column_double(a, c),
                 sqlite3_column_double(b, c));
      if (ta == SQLITE_TEXT &&
          strcmp((const char *)sqlite3_column_text(a, c), (const char *)sqlite3_column_text(b, c)))
        fail_msg("%s: row %d col %d: '%s' vs '%s'", q1, rows, c, sqlite3_column_text(a, c),
                 sqlite3_column_text(b, c));
    }
    rows++;
  }
  sqlite3_finalize(a);
  sqlite3_finalize(b);
}

static void same_rows(sqlite3 *db, const char *sql) { same_rows_in(db, sql, "vt", "plain"); }

static void setup_vt(fx *f) {
  rt_table *t = make_vt_table(f, "vt", 0);
  assert_int_equal(t->cols[0].type, RT_ID);
  assert_true(t->cols[1].sorted && t->cols[2].sorted && t->cols[4].sorted);
  assert_false(t->cols[3].sorted);
  assert_int_equal(t->cols[6].type, RT_U32);
  assert_int_equal(t->cols[7].type, RT_I32);
  make_plain_copy(f, t, "plain");
  rt_catalog_put(f->cat, t);
  char *msg = NULL;
  assert_int_equal(rt_vtab_expose(f->db, "vt", &msg), SQLITE_OK);
  assert_null(msg);
}

static void test_vtab_matches_sqlite(void **state) {
  fx *f = *state;
  setup_vt(f);
  static const char *const queries[] = {
    "SELECT * FROM T ORDER BY id",
    "SELECT * FROM T ORDER BY id DESC",
    "SELECT count(*), count(val), count(d), count(name) FROM T",
    "SELECT * FROM T WHERE id = 17",
    "SELECT * FROM T WHERE id = 0",
    "SELECT * FROM T WHERE id = 4999",
    "SELECT * FROM T WHERE id = 5000",
    "SELECT * FROM T WHERE id = -1",
    "SELECT id FROM T WHERE id > 4990 ORDER BY id",
    "SELECT id FROM T WHERE id >= 4990 AND id < 4995 ORDER BY id",
    "SELECT id FROM T WHERE id <= 3 ORDER BY id",
    "SELECT id FROM T WHERE id < 3 ORDER BY id",
    "SELECT id FROM T WHERE id = 2.0",
    "SELECT id FROM T WHERE id = 2.5",
    "SELECT id FROM T WHERE id > 2.5 AND id <= 7.5 ORDER BY id",
    "SELECT id FROM T WHERE id >= -2.5 AND id < 3.0 ORDER BY id",
    "SELECT id FROM T WHERE id > 9223372036854775807",
    "SELECT id FROM T WHERE id < -9223372036854775807 - 1",
    "SELECT id FROM T WHERE id = '5'",
    "SELECT id FROM T WHERE id = NULL",
    "SELECT id FROM T WHERE id IN (3, 5, 7, 5000) ORDER BY id",
    "SELECT id FROM T WHERE id BETWEEN 100 AND 105 ORDER BY id DESC",
    "SELECT id, ts FROM T WHERE ts >= 2000 AND ts < 2100 ORDER BY ts",
    "SELECT id, ts FROM T WHERE ts > 2000 AND ts <= 2100 ORDER BY ts",
    "SELECT id, ts FROM T WHERE ts > 1500.5 AND ts < 1510.5 ORDER BY ts",
    "SELECT id, ts FROM T WHERE ts = 1001 OR ts = 1003",
    "SELECT id FROM T WHERE ts = 1002",
    "SELECT id, ts FROM T WHERE ts BETWEEN 10 AND 20",
    "SELECT id, ts FROM T WHERE ts > 99999999",
    "SELECT id, grp FROM T WHERE grp = 42 ORDER BY id",
    "SELECT id, grp FROM T WHERE grp >= 498 ORDER BY id",
    "SELECT grp FROM T ORDER BY grp DESC",
    "SELECT ts FROM T ORDER BY ts DESC LIMIT 7",
    "SELECT id, d FROM T WHERE d < 3 ORDER BY id",
    "SELECT id, d FROM T WHERE d > 1200 AND d <= 1210.25 ORDER BY id",
    "SELECT id, d FROM T WHERE d = 12.5",
    "SELECT id, d FROM T WHERE d IS NULL ORDER BY id",
    "SELECT d FROM T ORDER BY d",
    "SELECT d FROM T ORDER BY d DESC",
    "SELECT id, val FROM T WHERE val > 4000 ORDER BY id",
    "SELECT count(*) FROM T WHERE val IS NULL",
    "SELECT val FROM T ORDER BY val, id",
    "SELECT id, name FROM T WHERE name = 'n3' ORDER BY id",
    "SELECT id, name FROM T WHERE name > 'n35' ORDER BY id",
    "SELECT id FROM T WHERE name IS NULL ORDER BY id",
    "SELECT name, count(*), sum(val), avg(d), min(ts), max(u) FROM T GROUP BY name ORDER BY name",
    "SELECT u, i32, count(*) FROM T GROUP BY u, i32 ORDER BY u, i32",
    ("SELECT typeof(id), typeof(ts), typeof(val), typeof(d), typeof(name), typeof(u), "
     "typeof(i32) FROM T WHERE id IN (4, 5, 10)"),
    "SELECT a.id, b.id, b.name FROM T a JOIN T b ON b.id = a.val WHERE a.id < 60 ORDER BY a.id",
    "SELECT a.id, b.id FROM T a JOIN T b ON b.ts = a.ts + 3 WHERE a.id < 40 ORDER BY a.id",
    "SELECT id FROM T WHERE id > 10 AND ts < 1100 AND grp = 5 ORDER BY id",
    "SELECT sum(ts) FROM T WHERE id BETWEEN 1000 AND 2000",
    /* `=` and IN on unsorted columns go through their hash index; keys
     * of another class convert as SQLite's affinities would, or read all. */
    "SELECT id, val FROM T WHERE val = 5 ORDER BY id",
    "SELECT id, val FROM T WHERE val = -100 ORDER BY id",
    "SELECT id FROM T WHERE val = '5' ORDER BY id",
    "SELECT id FROM T WHERE val = ' 5' ORDER BY id",
    "SELECT id FROM T WHERE val = '5x' ORDER BY id",
    "SELECT id FROM T WHERE val = 5.0 ORDER BY id",
    "SELECT id FROM T WHERE val = 5.5 ORDER BY id",
    "SELECT id FROM T WHERE val = 1e300 ORDER BY id",
    "SELECT id FROM T WHERE val = NULL",
    "SELECT id FROM T WHERE val = x'05'",
    "SELECT id, val FROM T WHERE val IN (5, '6', 7.0, 7, 99999, NULL) ORDER BY id",
    "SELECT id, val FROM T WHERE val IN (5, 6) ORDER BY val DESC, id",
    "SELECT id FROM T WHERE val IN (SELECT val FROM T WHERE id < 20) ORDER BY id",
    "SELECT id FROM T WHERE val IN (5, 'abc') ORDER BY id",
    "SELECT id, name FROM T WHERE name = 'n3' AND val > 0 ORDER BY id",
    "SELECT id, name FROM T WHERE name = 'never' ORDER BY id",
    "SELECT id, name FROM T WHERE name = 3 ORDER BY id",
    "SELECT id, name FROM T WHERE name IN ('n1', 'n36', 'zz') ORDER BY id",
    "SELECT id, name FROM T WHERE name = 'N3' COLLATE NOCASE ORDER BY id",
    "SELECT id, name FROM T WHERE name IN ('N1', 'n2') COLLATE NOCASE ORDER BY id",
    "SELECT id, d FROM T WHERE d = '12.5' ORDER BY id",
    "SELECT id, u FROM T WHERE u = 5 ORDER BY id",
    "SELECT id, u FROM T WHERE u = 5.0 ORDER BY id",
    "SELECT id, i32 FROM T WHERE i32 = -3 ORDER BY id",
    "SELECT id, i32 FROM T WHERE i32 IN (-3, -4) ORDER BY id",
    "SELECT a.id, b.id FROM T a JOIN T b ON b.val = a.id WHERE a.id < 60 ORDER BY a.id, b.id",
    "SELECT a.id, b.id FROM T a JOIN T b ON b.name = a.name WHERE a.id < 3 ORDER BY a.id, b.id",
    "SELECT a.id, count(b.id) FROM T a LEFT JOIN T b ON b.u = a.id WHERE a.id < 120 "
    "GROUP BY a.id ORDER BY a.id",
    "SELECT a.id, (SELECT sum(b.ts) FROM T b WHERE b.grp = a.id AND b.val >= 0) FROM T a "
    "WHERE a.id < 30 ORDER BY a.id",
  };
  for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) same_rows(f->db, queries[q]);
}

static void query_plan(sqlite3 *db, const char *sql, char *out, size_t cap);

/* A string column in binary order (NULLs first) is searched too. The
 * builder does not mark string columns sorted, so the test does, as a
 * producer that knows its order would. */
static void test_vtab_sorted_strings(void **state) {
  fx *f = *state;
  const char *names[] = {"s", "n"};
  const rt_type types[] = {RT_STR, RT_I64};
  rt_table_builder *b = rt_tb_new("vs", 2, names, types);
  for (int i = 0; i < 3000; i++) {
    if (i < 5) rt_tb_append_null(b, 0);
    else {
      char buf[16];
      /* "k0000".."k2999", with runs of three equal strings, then "l…" */
      int len = snprintf(buf, sizeof buf, "%c%04d", i < 2900 ? 'k' : 'l', i / 3);
      rt_tb_append_str(b, 0, rt_str_intern(f->sp, buf, (size_t)len));
    }
    rt_tb_append_i64(b, 1, i);
  }
  rt_table *t = rt_tb_finish(b);
  t->cols[0].sorted = true;
  make_plain_copy(f, t, "ps");
  rt_catalog_put(f->cat, t);
  char *msg = NULL;
  assert_int_equal(rt_vtab_expose(f->db, "vs", &msg), SQLITE_OK);
  static const char *const queries[] = {
    "SELECT * FROM T WHERE s = 'k0100' ORDER BY n",
    "SELECT * FROM T WHERE s = 'k01' ORDER BY n",
    "SELECT * FROM T WHERE s > 'k0990' ORDER BY n",
    "SELECT * FROM T WHERE s >= 'k0100' AND s < 'k0102' ORDER BY n",
    "SELECT * FROM T WHERE s <= 'k0003' ORDER BY n",
    "SELECT * FROM T WHERE s < 'a' ORDER BY n",
    "SELECT * FROM T WHERE s > 'z' ORDER BY n",
    "SELECT * FROM T WHERE s = 'K0100' COLLATE NOCASE ORDER BY n",
    "SELECT * FROM T WHERE s > 5 ORDER BY n",
    "SELECT * FROM T WHERE s IS NULL ORDER BY n",
  };
  for (size_t q = 0; q < sizeof queries / sizeof *queries; q++)
    same_rows_in(f->db, queries[q], "vs", "ps");
  char plan[1024];
  query_plan(f->db, "SELECT * FROM vs WHERE s = 'k0100'", plan, sizeof plan);
  assert_null(strstr(plan, "INDEX 0:"));
  /* Another collation orders differently: no search. */
  query_plan(f->db, "SELECT * FROM vs WHERE s = 'K0100' COLLATE NOCASE", plan, sizeof plan);
  assert_non_null(strstr(plan, "INDEX 0:"));
}

/* The first row of EXPLAIN QUERY PLAN's details, concatenated. */
static void query_plan(sqlite3 *db, const char *sql, char *out, size_t cap) {
  char buf[1024];
  snprintf(buf, sizeof buf, "EXPLAIN QUERY PLAN %s", sql);
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(db, buf, -1, &st, NULL), SQLITE_OK);
  out[0] = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    strncat(out, (const char *)sqlite3_column_text(st, 3), cap - strlen(out) - 2);
    strncat(out, ";", cap - strlen(out) - 1);
  }
  sqlite3_finalize(st);
}

/* Hash indexes: built on the first lookup, kept with the table, NULLs and
 * NaNs left out, -0.0 one key with 0.0; the virtual table counts what it
 * did. */
static void test_vtab_hash_index(void **state) {
  fx *f = *state;
  const char *names[] = {"k", "x", "s"};
  const rt_type types[] = {RT_I64, RT_F64, RT_STR};
  rt_table_builder *b = rt_tb_new("h", 3, names, types);
  for (int i = 0; i < 1000; i++) {
    if (i % 10 == 9) rt_tb_append_null(b, 0);
    else rt_tb_append_i64(b, 0, (i * 37) % 50);
    rt_tb_append_f64(b, 1, i == 3 ? -0.0 : i == 4 ? 0.0 : i == 5 ? NAN : (double)(i % 7));
    char buf[8];
    int len = snprintf(buf, sizeof buf, "s%d", i % 3);
    rt_tb_append_str(b, 2, rt_str_intern(f->sp, buf, (size_t)len));
  }
  rt_table *t = rt_tb_finish(b);
  assert_null(rt_table_hindex_peek(t, 0));
  const rt_hindex *ix = rt_table_hindex(t, 0);
  assert_non_null(ix);
  assert_ptr_equal(rt_table_hindex(t, 0), ix);   /* built once */
  assert_int_equal(ix->nindexed, 900);
  int seen[50] = {0}, distinct = 0;
  for (int i = 0; i < 1000; i++)
    if (i % 10 != 9 && !seen[(i * 37) % 50]++) distinct++;
  assert_int_equal(ix->ngroups, distinct);
  const uint32_t *rows;
  uint32_t n = rt_hindex_find(ix, rt_hkey_i64(37), &rows);
  uint32_t want = 0;
  for (uint32_t i = 0, prev = 0; i < 1000; i++)
    if (i % 10 != 9 && (i * 37) % 50 == 37) {
      assert_true(want < n);
      assert_int_equal(rows[want], i);
      assert_true(want == 0 || rows[want] > prev);
      prev = i;
      want++;
    }
  assert_int_equal(n, want);
  assert_int_equal(rt_hindex_find(ix, rt_hkey_i64(50), &rows), 0);
  assert_null(rows);
  const rt_hindex *fx_ix = rt_table_hindex(t, 1);
  n = rt_hindex_find(fx_ix, rt_hkey_f64(0.0), &rows);
  assert_true(n >= 2 && rows[0] == 0 && rows[1] == 3 && rows[2] == 4);
  assert_int_equal(fx_ix->nindexed, 999);   /* the NaN is not there */
  assert_int_equal(rt_hindex_find(rt_table_hindex(t, 2),
                                  rt_hkey_str(rt_str_find(f->sp, "s1", 2)), &rows), 333);
  assert_int_equal(rt_str_find(f->sp, "never interned", 14), RT_STR_FAILED);

  rt_catalog_put(f->cat, t);
  char *msg = NULL;
  assert_int_equal(rt_vtab_expose(f->db, "h", &msg), SQLITE_OK);
  memset(&f->stats, 0, sizeof f->stats);
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(f->db, "SELECT count(*) FROM h WHERE s = ?", -1, &st, NULL),
                   SQLITE_OK);
  for (int round = 0; round < 2; round++) {
    sqlite3_bind_text(st, 1, "s2", -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(st, 0), 333);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  assert_int_equal(f->stats.hash_lookups, 2);
  assert_int_equal(f->stats.full_scans, 0);
  assert_int_equal(sqlite3_prepare_v2(f->db, "SELECT count(*) FROM h WHERE k IN (1, 37, 37.0, 99)",
                                      -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int64(st, 0), 2 * want);
  sqlite3_finalize(st);
  assert_int_equal(f->stats.in_lists, 1);
  assert_int_equal(f->stats.full_scans, 0);
}

/* PERFETTO INDEXes: bisection of the permutation with NULLs first, a
 * prefix of `=` then a range, keys of other classes, against SQLite. */
static void test_vtab_sorted_index(void **state) {
  fx *f = *state;
  rt_table *t = make_vt_table(f, "vt", 0);
  make_plain_copy(f, t, "plain");
  int by_name_val[] = {5, 3}, by_val[] = {3}, by_u_i32_val[] = {6, 7, 3};
  assert_true(rt_table_add_sindex(t, "by_name_val", 2, by_name_val, f->sp));
  assert_true(rt_table_add_sindex(t, "by_val", 1, by_val, f->sp));
  assert_true(rt_table_add_sindex(t, "by_u_i32_val", 3, by_u_i32_val, f->sp));
  assert_int_equal(rt_table_sindex_count(t), 3);
  /* The permutation is sorted, NULLs first, rows of equal keys ascending. */
  const rt_sindex *ix = rt_table_find_sindex(t, "BY_VAL");
  assert_non_null(ix);
  for (int64_t i = 1; i < t->nrows; i++) {
    uint32_t a = ix->perm[i - 1], b = ix->perm[i];
    int na = !rt_bit(t->cols[3].valid, a), nb = !rt_bit(t->cols[3].valid, b);
    int64_t va = ((int64_t *)t->cols[3].data)[a], vb = ((int64_t *)t->cols[3].data)[b];
    assert_true(na > nb || (na == nb && (na || va < vb || (va == vb && a < b))));
  }
  rt_catalog_put(f->cat, t);
  char *msg = NULL;
  assert_int_equal(rt_vtab_expose(f->db, "vt", &msg), SQLITE_OK);
  static const char *const queries[] = {
    "SELECT id FROM T WHERE val > 100 AND val < 200 ORDER BY id",
    "SELECT id FROM T WHERE val >= -100 AND val <= -95 ORDER BY id",
    "SELECT id FROM T WHERE val < -99.5 ORDER BY id",
    "SELECT id FROM T WHERE val > 4897.5 ORDER BY id",
    "SELECT id FROM T WHERE val < '5' ORDER BY id",
    "SELECT id FROM T WHERE val > NULL ORDER BY id",
    "SELECT id, val FROM T WHERE name = 'n3' AND val > 1000 ORDER BY id",
    "SELECT id, val FROM T WHERE name = 'n3' AND val < 1000 AND val > 10 ORDER BY id",
    "SELECT id FROM T WHERE name > 'n30' AND name <= 'n5' ORDER BY id",
    "SELECT id FROM T WHERE name = 3 AND val > 0 ORDER BY id",
    "SELECT id FROM T WHERE u = 7 AND i32 = -7 AND val BETWEEN 0 AND 3000 ORDER BY id",
    "SELECT id FROM T WHERE u = 7 AND i32 = -7.0 AND val > 2000 ORDER BY id",
    "SELECT id FROM T WHERE u = 7 AND i32 = -7.5 ORDER BY id",
    "SELECT id FROM T WHERE u = 7 AND i32 = 'x' AND val > 0 ORDER BY id",
    "SELECT id FROM T WHERE u = 7 AND i32 = NULL ORDER BY id",
    ("SELECT a.id, b.id FROM T a JOIN T b ON b.u = a.u AND b.i32 = a.i32 AND b.val > a.val "
     "WHERE a.id < 30 ORDER BY a.id, b.id"),
  };
  for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) same_rows(f->db, queries[q]);
  char plan[1024];
  query_plan(f->db, "SELECT id FROM vt WHERE u = 7 AND i32 = -7 AND val > 2000", plan, sizeof plan);
  assert_non_null(strstr(plan, "perfetto index by_u_i32_val (u= i32= val range)"));
  query_plan(f->db, "SELECT id FROM vt WHERE name = 'n3' AND val > 1000", plan, sizeof plan);
  assert_non_null(strstr(plan, "perfetto index by_name_val (name= val range)"));
  /* A plan whose index was dropped reads everything (still right). */
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(f->db, "SELECT count(*) FROM vt WHERE val > 100 AND val < 200",
                                      -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  int64_t n = sqlite3_column_int64(st, 0);
  sqlite3_reset(st);
  assert_true(rt_table_drop_sindex(t, "by_val"));
  assert_false(rt_table_drop_sindex(t, "by_val"));
  int64_t before = f->stats.full_scans;
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int64(st, 0), n);
  assert_int_equal(f->stats.full_scans, before + 1);
  sqlite3_finalize(st);
}

/* A main-schema view reads a columnar table through its eponymous table,
 * and sees a replacement. */
static void test_vtab_main_view(void **state) {
  fx *f = *state;
  const char *names[] = {"v"};
  const rt_type types[] = {RT_I64};
  rt_table_builder *b = rt_tb_new("ep", 1, names, types);
  rt_tb_append_i64(b, 0, 41);
  rt_catalog_put(f->cat, rt_tb_finish(b));
  char *msg = NULL;
  assert_int_equal(rt_vtab_expose(f->db, "ep", &msg), SQLITE_OK);
  exec_ok(f->db, "CREATE VIEW main.epv AS SELECT v + 1 AS w FROM ep");
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(f->db, "SELECT w FROM epv", -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int64(st, 0), 42);
  sqlite3_finalize(st);
  const char *names2[] = {"v", "extra"};
  const rt_type types2[] = {RT_I64, RT_STR};
  b = rt_tb_new("ep", 2, names2, types2);
  rt_tb_append_i64(b, 0, 99);
  rt_tb_append_str(b, 1, 0);
  rt_catalog_put(f->cat, rt_tb_finish(b));
  assert_int_equal(rt_vtab_expose(f->db, "ep", &msg), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(f->db, "SELECT w FROM epv", -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int64(st, 0), 100);
  sqlite3_finalize(st);
  /* Unexposed: the view no longer finds it. */
  assert_int_equal(rt_vtab_unexpose(f->db, "ep", &msg), SQLITE_OK);
  assert_int_not_equal(sqlite3_prepare_v2(f->db, "SELECT w FROM epv", -1, &st, NULL), SQLITE_OK);
}

static void test_vtab_plan_shape(void **state) {
  fx *f = *state;
  setup_vt(f);
  /* The rowid is the row index (= id), and constraints on it are keyed. */
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(f->db, "SELECT rowid, id FROM vt WHERE rowid BETWEEN 100 AND 102 "
                                             "ORDER BY rowid DESC", -1, &st, NULL), SQLITE_OK);
  for (int64_t want = 102; want >= 100; want--) {
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(st, 0), want);
    assert_int_equal(sqlite3_column_int64(st, 1), want);
  }
  assert_int_equal(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  char plan[1024];
  query_plan(f->db, "SELECT * FROM vt WHERE rowid = 5", plan, sizeof plan);
  assert_null(strstr(plan, "INDEX 0:"));
  query_plan(f->db, "SELECT * FROM vt", plan, sizeof plan);
  assert_non_null(strstr(plan, "VIRTUAL TABLE INDEX 0:"));
  /* Keyed: idxNum is non-zero (key column in the low bits). */
  query_plan(f->db, "SELECT * FROM vt WHERE id = 5", plan, sizeof plan);
  assert_null(strstr(plan, "INDEX 0:"));
  query_plan(f->db, "SELECT * FROM vt WHERE ts > 5 AND ts < 10", plan, sizeof plan);
  assert_null(strstr(plan, "INDEX 0:"));
  /* An unsorted column: its hash index. */
  query_plan(f->db, "SELECT * FROM vt WHERE val = 5", plan, sizeof plan);
  assert_non_null(strstr(plan, ":hash eq val"));
  query_plan(f->db, "SELECT * FROM vt WHERE val IN (5, 6)", plan, sizeof plan);
  assert_non_null(strstr(plan, ":hash eq val in"));
  /* ORDER BY a sorted column, either way, needs no sorter; a string column
   * or an unsorted one does. */
  query_plan(f->db, "SELECT * FROM vt ORDER BY ts", plan, sizeof plan);
  assert_null(strstr(plan, "TEMP B-TREE"));
  query_plan(f->db, "SELECT * FROM vt ORDER BY d DESC", plan, sizeof plan);
  assert_null(strstr(plan, "TEMP B-TREE"));
  query_plan(f->db, "SELECT * FROM vt ORDER BY id, val", plan, sizeof plan);
  assert_null(strstr(plan, "TEMP B-TREE"));
  query_plan(f->db, "SELECT * FROM vt ORDER BY grp, val", plan, sizeof plan);
  assert_non_null(strstr(plan, "TEMP B-TREE"));
  query_plan(f->db, "SELECT * FROM vt ORDER BY val", plan, sizeof plan);
  assert_non_null(strstr(plan, "TEMP B-TREE"));
  query_plan(f->db, "SELECT * FROM vt ORDER BY name", plan, sizeof plan);
  assert_non_null(strstr(plan, "TEMP B-TREE"));
}

static void test_vtab_replace_while_reading(void **state) {
  fx *f = *state;
  setup_vt(f);
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(f->db, "SELECT ts, name FROM vt", -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int64(st, 0), 1000);

  /* CREATE OR REPLACE under a running statement: the statement keeps the
   * table it started on (ASan would catch a read of the freed one). */
  rt_catalog_put(f->cat, make_vt_table(f, "vt", 1000000));
  int rows = 1;
  int64_t last = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    last = sqlite3_column_int64(st, 0);
    rows++;
  }
  assert_int_equal(rows, VT_ROWS);
  assert_int_equal(last, (VT_ROWS - 1) * 3 / 2 + 1000);
  /* The next run reads the new table. */
  sqlite3_reset(st);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int64(st, 0), 1001000);
  sqlite3_finalize(st);

  /* A replacement with other columns is refused until exposed again. */
  const char *names[] = {"other"};
  const rt_type types[] = {RT_STR};
  rt_table_builder *b = rt_tb_new("vt", 1, names, types);
  rt_tb_append_str(b, 0, rt_str_intern(f->sp, "hello", 5));
  rt_catalog_put(f->cat, rt_tb_finish(b));
  char *msg = NULL;
  assert_int_not_equal(sqlite3_exec(f->db, "SELECT * FROM vt", NULL, NULL, &msg), SQLITE_OK);
  assert_non_null(strstr(msg, "changed its columns"));
  sqlite3_free(msg);
  msg = NULL;
  assert_int_equal(rt_vtab_expose(f->db, "vt", &msg), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(f->db, "SELECT other FROM vt", -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_string_equal((const char *)sqlite3_column_text(st, 0), "hello");
  assert_int_equal(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);

  /* Removed from the catalog: a clear error, not a crash. */
  rt_catalog_remove(f->cat, "vt");
  assert_int_not_equal(sqlite3_exec(f->db, "SELECT * FROM vt", NULL, NULL, &msg), SQLITE_OK);
  assert_non_null(strstr(msg, "no longer exists"));
  sqlite3_free(msg);
}

static void test_vtab_expose_rules(void **state) {
  fx *f = *state;
  char *msg = NULL;
  /* Not in the catalog. */
  assert_int_not_equal(rt_vtab_expose(f->db, "missing", &msg), SQLITE_OK);
  assert_non_null(strstr(msg, "no such columnar table: missing"));
  sqlite3_free(msg);

  /* A quoted, mixed-case name round-trips. */
  const char *names[] = {"v"};
  const rt_type types[] = {RT_I64};
  rt_table_builder *b = rt_tb_new("My \"odd\" Table", 1, names, types);
  rt_tb_append_i64(b, 0, 41);
  rt_catalog_put(f->cat, rt_tb_finish(b));
  assert_int_equal(rt_vtab_expose(f->db, "My \"odd\" Table", &msg), SQLITE_OK);
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(f->db, "SELECT v + 1 FROM \"my \"\"odd\"\" table\"", -1, &st, NULL),
                   SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int64(st, 0), 42);
  sqlite3_finalize(st);
  /* Exposing again replaces it; unexpose drops it. */
  assert_int_equal(rt_vtab_expose(f->db, "My \"odd\" Table", &msg), SQLITE_OK);
  assert_int_equal(rt_vtab_unexpose(f->db, "My \"odd\" Table", &msg), SQLITE_OK);
  assert_int_not_equal(sqlite3_exec(f->db, "SELECT * FROM \"My \"\"odd\"\" Table\"", NULL, NULL, &msg),
                       SQLITE_OK);
  sqlite3_free(msg);
  msg = NULL;
  assert_int_equal(rt_vtab_unexpose(f->db, "My \"odd\" Table", &msg), SQLITE_OK);   /* no-op */

  /* Someone else's temp table of that name is left alone. */
  exec_ok(f->db, "CREATE TEMP TABLE mine(x)");
  b = rt_tb_new("mine", 1, names, types);
  rt_tb_append_i64(b, 0, 1);
  rt_catalog_put(f->cat, rt_tb_finish(b));
  assert_int_not_equal(rt_vtab_expose(f->db, "mine", &msg), SQLITE_OK);
  assert_string_equal(msg, "there is already a temp table or view named 'mine'");
  sqlite3_free(msg);
  msg = NULL;
  assert_int_equal(rt_vtab_unexpose(f->db, "mine", &msg), SQLITE_OK);
  exec_ok(f->db, "SELECT x FROM temp.mine");

  /* Nothing is written to the main schema. */
  assert_int_equal(sqlite3_prepare_v2(f->db, "SELECT count(*) FROM main.sqlite_master", -1, &st, NULL),
                   SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int64(st, 0), 0);
  sqlite3_finalize(st);
}

/* ---- sample trace --------------------------------------------------------------- */

static const int64_t *col_i64(const rt_table *t, const char *name) {
  int c = rt_table_find_col(t, name);
  assert_true(c >= 0);
  assert_int_equal(t->cols[c].type, RT_I64);
  return t->cols[c].data;
}

static void test_sample_slices(void **state) {
  fx *f = *state;
  enum { N = 200000 };
  rt_err err = {0};
  assert_true(rt_sample_trace(f->cat, f->sp, N, &err));
  rt_table *s = rt_catalog_get(f->cat, "slice");
  assert_non_null(s);
  assert_int_equal(s->nrows, N);
  /* ids 0..n-1 exactly: finalized as the implicit id column. */
  assert_int_equal(s->cols[rt_table_find_col(s, "id")].type, RT_ID);
  const int64_t *ts = col_i64(s, "ts"), *dur = col_i64(s, "dur"), *track = col_i64(s, "track_id");
  const int64_t *parent = col_i64(s, "parent_id");
  const rt_column *pc = &s->cols[rt_table_find_col(s, "parent_id")];
  const rt_column *dc = &s->cols[rt_table_find_col(s, "depth")];
  const rt_column *nc = &s->cols[rt_table_find_col(s, "name")];
  assert_int_equal(dc->type, RT_U32);
  assert_int_equal(nc->type, RT_STR);
  assert_non_null(pc->valid);
  const uint32_t *depth = dc->data;

  int64_t *child_end = calloc(N, sizeof *child_end);   /* end of the last child seen */
  int64_t root_end[64] = {0};
  int64_t shallow = 0, roots = 0;
  uint32_t max_depth = 0;
  uint8_t *seen_name = calloc(1u << 20, 1);
  int distinct = 0;
  for (int64_t i = 0; i < N; i++) {
    assert_true(dur[i] >= 1);
    assert_true(track[i] >= 0 && track[i] < 64);
    if (depth[i] > max_depth) max_depth = depth[i];
    shallow += depth[i] < 10;
    uint32_t nm = ((const uint32_t *)nc->data)[i];
    if (nm < (1u << 20) && !seen_name[nm]) {
      seen_name[nm] = 1;
      distinct++;
    }
    if (!rt_bit(pc->valid, (uint32_t)i)) {
      roots++;
      assert_int_equal(depth[i], 0);
      assert_true(ts[i] >= root_end[track[i]]);   /* roots of a track do not overlap */
      root_end[track[i]] = ts[i] + dur[i];
      continue;
    }
    int64_t p = parent[i];
    assert_true(p >= 0 && p < i);                 /* parent first */
    assert_int_equal(depth[i], depth[p] + 1);
    assert_int_equal(track[i], track[p]);
    assert_true(ts[i] >= ts[p]);                  /* inside the parent */
    assert_true(ts[i] + dur[i] <= ts[p] + dur[p]);
    assert_true(ts[i] >= child_end[p]);           /* after the previous sibling */
    child_end[p] = ts[i] + dur[i];
  }
  assert_true(max_depth <= 30);
  assert_true(max_depth >= 15);                  /* a few deep stacks exist */
  assert_true(shallow >= N * 9 / 10);            /* most are shallow */
  assert_true(roots > N / 100);
  assert_true(distinct >= 200);
  free(child_end);
  free(seen_name);

  rt_table *th = rt_catalog_get(f->cat, "thread"), *pr = rt_catalog_get(f->cat, "process");
  assert_int_equal(th->nrows, 64);
  assert_int_equal(pr->nrows, 12);
  const int64_t *upid = col_i64(th, "upid");
  for (int i = 0; i < 64; i++) assert_true(upid[i] >= 0 && upid[i] < 12);
}

static void test_sample_sched_and_freq(void **state) {
  fx *f = *state;
  enum { N = 100000 };
  rt_err err = {0};
  assert_true(rt_sample_trace(f->cat, f->sp, N, &err));
  rt_table *s = rt_catalog_get(f->cat, "sched");
  assert_int_equal(s->nrows, N);
  const int64_t *ts = col_i64(s, "ts"), *dur = col_i64(s, "dur"), *utid = col_i64(s, "utid");
  const rt_column *cc = &s->cols[rt_table_find_col(s, "cpu")];
  assert_int_equal(cc->type, RT_U32);
  const uint32_t *cpu = cc->data;
  int64_t end[8] = {0}, first[8], busy[8] = {0};
  for (int c = 0; c < 8; c++) first[c] = -1;
  for (int64_t i = 0; i < N; i++) {
    assert_true(cpu[i] < 8);
    assert_true(utid[i] >= 0 && utid[i] < 64);
    assert_true(dur[i] >= 1);
    if (i) assert_true(ts[i] >= ts[i - 1]);
    assert_true(ts[i] >= end[cpu[i]]);           /* no overlap on a CPU */
    if (first[cpu[i]] < 0) first[cpu[i]] = ts[i];
    end[cpu[i]] = ts[i] + dur[i];
    busy[cpu[i]] += dur[i];
  }
  for (int c = 0; c < 8; c++) assert_true(busy[c] * 10 >= (end[c] - first[c]) * 8);

  /* Sched spans about the slices' span. */
  rt_table *sl = rt_catalog_get(f->cat, "slice");
  const int64_t *sts = col_i64(sl, "ts"), *sdur = col_i64(sl, "dur");
  int64_t smin = INT64_MAX, smax = 0;
  for (int64_t i = 0; i < sl->nrows; i++) {
    if (sts[i] < smin) smin = sts[i];
    if (sts[i] + sdur[i] > smax) smax = sts[i] + sdur[i];
  }
  for (int c = 0; c < 8; c++) {
    assert_true(first[c] - smin < (smax - smin) / 10);
    assert_true(llabs(end[c] - smax) < (smax - smin) / 5);
  }

  rt_table *fq = rt_catalog_get(f->cat, "cpu_frequency");
  assert_int_equal(fq->nrows, N / 10);
  const int64_t *fts = col_i64(fq, "ts"), *fdur = col_i64(fq, "dur"), *freq = col_i64(fq, "freq");
  const uint32_t *fcpu = fq->cols[rt_table_find_col(fq, "cpu")].data;
  int64_t fend[8];
  for (int c = 0; c < 8; c++) fend[c] = -1;
  for (int64_t i = 0; i < fq->nrows; i++) {
    assert_true(fcpu[i] < 8);
    assert_true(freq[i] >= 300000 && freq[i] <= 3000000);
    if (fend[fcpu[i]] >= 0) assert_int_equal(fts[i], fend[fcpu[i]]);   /* contiguous */
    fend[fcpu[i]] = fts[i] + fdur[i];
  }
}

static int tables_equal(const rt_table *a, const rt_strpool *pa, const rt_table *b,
                        const rt_strpool *pb) {
  if (a->nrows != b->nrows || a->ncols != b->ncols) return 0;
  for (int c = 0; c < a->ncols; c++) {
    rt_view va, vb;
    if (a->cols[c].type != b->cols[c].type) return 0;
    rt_table_view(a, c, 0, &va);
    rt_table_view(b, c, 0, &vb);
    for (int64_t r = 0; r < a->nrows; r++) {
      uint32_t i = (uint32_t)r;
      if (rt_view_is_null(&va, i) != rt_view_is_null(&vb, i)) return 0;
      if (rt_view_is_null(&va, i)) continue;
      if (va.type == RT_STR) {
        if (strcmp(rt_str_get(pa, rt_view_str(&va, i), NULL), rt_str_get(pb, rt_view_str(&vb, i), NULL)))
          return 0;
      } else if (rt_view_i64(&va, i) != rt_view_i64(&vb, i)) {
        return 0;
      }
    }
  }
  return 1;
}

static void test_sample_deterministic(void **state) {
  fx *f = *state;
  rt_catalog *c2 = rt_catalog_new(), *c3 = rt_catalog_new();
  rt_strpool *p2 = rt_strpool_new();
  rt_err err = {0};
  /* Intern something first so string ids differ between the pools: equality
   * must hold by text. */
  rt_str_intern(p2, "unrelated", 9);
  assert_true(rt_sample_trace(f->cat, f->sp, 30000, &err));
  assert_true(rt_sample_trace(c2, p2, 30000, &err));
  assert_true(rt_sample_trace_seeded(c3, p2, 30000, 12345, &err));
  const char *names[] = {"slice", "thread", "process", "sched", "cpu_frequency"};
  for (int i = 0; i < 5; i++) {
    rt_table *a = rt_catalog_get(f->cat, names[i]), *b = rt_catalog_get(c2, names[i]);
    assert_non_null(a);
    assert_non_null(b);
    assert_true(tables_equal(a, f->sp, b, p2));
  }
  assert_false(tables_equal(rt_catalog_get(f->cat, "slice"), f->sp, rt_catalog_get(c3, "slice"), p2));

  /* Edge sizes and bad input. */
  assert_true(rt_sample_trace(c3, p2, 0, &err));
  assert_int_equal(rt_catalog_get(c3, "slice")->nrows, 0);
  assert_int_equal(rt_catalog_get(c3, "sched")->nrows, 0);
  assert_true(rt_sample_trace(c3, p2, 1, &err));
  assert_int_equal(rt_catalog_get(c3, "slice")->nrows, 1);
  assert_false(err.set);
  assert_false(rt_sample_trace(c3, p2, -5, &err));
  assert_string_equal(err.msg, "SAMPLE TRACE: expected between 0 and 1073741824 slices, not -5");
  rt_catalog_free(c2);
  rt_catalog_free(c3);
  rt_strpool_free(p2);
}

/* The sample trace through SQL: the same counts the tables hold. */
static void test_sample_through_sql(void **state) {
  fx *f = *state;
  rt_err err = {0};
  assert_true(rt_sample_trace(f->cat, f->sp, 5000, &err));
  char *msg = NULL;
  assert_int_equal(rt_vtab_expose_all(f->db, f->cat, &msg), SQLITE_OK);
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(f->db,
                                      "SELECT (SELECT count(*) FROM slice), "
                                      "(SELECT count(*) FROM slice s JOIN slice p ON p.id = s.parent_id "
                                      " WHERE s.depth = p.depth + 1), "
                                      "(SELECT count(*) FROM slice WHERE parent_id IS NULL), "
                                      "(SELECT count(*) FROM sched), (SELECT count(*) FROM thread t "
                                      " JOIN process p USING (upid))",
                                      -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  int64_t total = sqlite3_column_int64(st, 0);
  assert_int_equal(total, 5000);
  assert_int_equal(sqlite3_column_int64(st, 1) + sqlite3_column_int64(st, 2), total);
  assert_int_equal(sqlite3_column_int64(st, 3), 5000);
  assert_int_equal(sqlite3_column_int64(st, 4), 64);
  sqlite3_finalize(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_affinity_matches_sqlite, setup, teardown),
    cmocka_unit_test(test_decl_type),
    cmocka_unit_test_setup_teardown(test_describe_declared, setup, teardown),
    cmocka_unit_test_setup_teardown(test_describe_sampled, setup, teardown),
    cmocka_unit_test_setup_teardown(test_describe_mixed_is_error, setup, teardown),
    cmocka_unit_test_setup_teardown(test_describe_prepare_error, setup, teardown),
    cmocka_unit_test_setup_teardown(test_source_batches, setup, teardown),
    cmocka_unit_test_setup_teardown(test_source_empty, setup, teardown),
    cmocka_unit_test_setup_teardown(test_source_conversions, setup, teardown),
    cmocka_unit_test_setup_teardown(test_source_type_errors, setup, teardown),
    cmocka_unit_test_setup_teardown(test_source_open_errors, setup, teardown),
    cmocka_unit_test_setup_teardown(test_vtab_matches_sqlite, setup, teardown),
    cmocka_unit_test_setup_teardown(test_vtab_sorted_strings, setup, teardown),
    cmocka_unit_test_setup_teardown(test_vtab_plan_shape, setup, teardown),
    cmocka_unit_test_setup_teardown(test_vtab_hash_index, setup, teardown),
    cmocka_unit_test_setup_teardown(test_vtab_sorted_index, setup, teardown),
    cmocka_unit_test_setup_teardown(test_vtab_main_view, setup, teardown),
    cmocka_unit_test_setup_teardown(test_vtab_replace_while_reading, setup, teardown),
    cmocka_unit_test_setup_teardown(test_vtab_expose_rules, setup, teardown),
    cmocka_unit_test_setup_teardown(test_sample_slices, setup, teardown),
    cmocka_unit_test_setup_teardown(test_sample_sched_and_freq, setup, teardown),
    cmocka_unit_test_setup_teardown(test_sample_deterministic, setup, teardown),
    cmocka_unit_test_setup_teardown(test_sample_through_sql, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
