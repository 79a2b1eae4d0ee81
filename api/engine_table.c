/*
 * engine_table.c — statements that produce tables: plain SQL statements
 * (their rows become a result table, so SQL and pipeline results look
 * alike) and CREATE [OR REPLACE] PERFETTO TABLE (the rows of a pipeline or
 * a SELECT become a finalized columnar table in the catalog, visible to
 * SQL through the pipejit virtual table module).
 *
 * Column types of SQL rows are inferred from the values, as Perfetto does
 * for PERFETTO TABLEs: any string makes a string column, else any real a
 * double column, else an integer column; a column with no value at all
 * takes the schema's type or SQLite's declared type. A column named `id`
 * holding exactly 0..n-1 becomes the id type (rt_tb_finish).
 *
 * A failed CREATE leaves the catalog and the SQLite schema as they were.
 */
#include <stdio.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "runtime/sqlite/sqlsrc.h"
#include "runtime/sqlite/vtab.h"
#include "engine.h"

#define CREATE_STAGE "CREATE PERFETTO TABLE"

/* ---- SQL rows into a table -------------------------------------------- */

enum { V_NULL, V_INT, V_REAL, V_TEXT, V_BLOB };

typedef struct cell {
  uint8_t kind;
  union {
    int64_t i;
    double f;
    uint32_t s;   /* V_TEXT, V_BLOB: interned bytes */
  } u;
} cell;

/* Rows collected from SQLite, row-major. */
typedef struct rows {
  int ncols;
  int64_t n, cap;
  cell *cells;
} rows;

/* Appends the statement's current row: 1, or 0 when out of memory, or -1
 * when the string pool refused a value (too long, out of memory: never
 * kept as an empty string), whose column goes to *bad_col. */
static int rows_push(rows *r, sqlite3_stmt *q, rt_strpool *sp, int *bad_col) {
  if (r->n == r->cap) {
    int64_t cap = r->cap ? r->cap * 2 : 64;
    cell *c = realloc(r->cells, (size_t)cap * (size_t)r->ncols * sizeof *c);
    if (!c) return 0;
    r->cells = c;
    r->cap = cap;
  }
  cell *row = r->cells + r->n * r->ncols;
  for (int c = 0; c < r->ncols; c++) {
    cell *v = &row[c];
    switch (sqlite3_column_type(q, c)) {
    case SQLITE_INTEGER:
      v->kind = V_INT;
      v->u.i = sqlite3_column_int64(q, c);
      break;
    case SQLITE_FLOAT:
      v->kind = V_REAL;
      v->u.f = sqlite3_column_double(q, c);
      break;
    case SQLITE_TEXT: {
      const char *s = (const char *)sqlite3_column_text(q, c);
      v->kind = V_TEXT;
      size_t len = (size_t)sqlite3_column_bytes(q, c);
      v->u.s = rt_str_intern(sp, s ? s : "", len);
      if (v->u.s == 0 && len > 0) return *bad_col = c, -1;
      break;
    }
    case SQLITE_BLOB: {
      const void *b = sqlite3_column_blob(q, c);
      v->kind = V_BLOB;
      size_t len = (size_t)sqlite3_column_bytes(q, c);
      v->u.s = rt_str_intern(sp, b ? b : "", len);
      if (v->u.s == 0 && len > 0) return *bad_col = c, -1;
      break;
    }
    default:
      v->kind = V_NULL;
    }
  }
  r->n++;
  return 1;
}

/* Type of a column with no values, from SQLite's declared type
 * (rt_sql_decl_type; integer when it names none). */
static rt_type decl_type(const char *decl) {
  rt_type t = rt_sql_decl_type(decl);
  return t == RT_NULLT ? RT_I64 : t;
}

/* A number shown as text the way SQLite prints it (for result columns that
 * mix strings and numbers). */
static uint32_t number_text(rt_strpool *sp, const cell *v) {
  char buf[64];
  if (v->kind == V_INT) sqlite3_snprintf(sizeof buf, buf, "%lld", (long long)v->u.i);
  else sqlite3_snprintf(sizeof buf, buf, "%!.15g", v->u.f);
  return rt_str_intern(sp, buf, strlen(buf));
}

/* Decides column types and builds the table. Returns NULL with err set when
 * a CREATE column cannot be typed. */
static rt_table *rows_to_table(pj_engine *e, rows *r, sqlite3_stmt *q, const char *name,
                               int strict, rt_err *err) {
  int nc = r->ncols;
  const char **names = calloc((size_t)nc, sizeof *names);
  rt_type *types = calloc((size_t)nc, sizeof *types);
  rt_table *t = NULL;
  if (!names || !types) goto done;
  for (int c = 0; c < nc; c++) {
    names[c] = sqlite3_column_name(q, c);
    if (!names[c]) names[c] = "";
    int has[V_BLOB + 1] = {0};
    for (int64_t i = 0; i < r->n; i++) has[r->cells[i * nc + c].kind] = 1;
    if (strict && has[V_BLOB]) {
      rt_errorf(err, -1, CREATE_STAGE ": column '%s' holds a blob, which a table cannot store",
                names[c]);
      goto done;
    }
    int text = has[V_TEXT] || has[V_BLOB], num = has[V_INT] || has[V_REAL];
    if (strict && text && num) {
      rt_errorf(err, -1, CREATE_STAGE ": column '%s' mixes strings and numbers", names[c]);
      goto done;
    }
    if (text) types[c] = RT_STR;
    else if (has[V_REAL]) types[c] = RT_F64;
    else if (has[V_INT]) types[c] = RT_I64;
    else types[c] = decl_type(sqlite3_column_decltype(q, c));
  }
  rt_table_builder *b = rt_tb_new(name, nc, names, types);
  if (!b) goto done;   /* out of memory: err unset */
  for (int64_t i = 0; i < r->n; i++) {
    for (int c = 0; c < nc; c++) {
      const cell *v = &r->cells[i * nc + c];
      if (v->kind == V_NULL) rt_tb_append_null(b, c);
      else if (types[c] == RT_STR) {
        uint32_t id = v->kind >= V_TEXT ? v->u.s : number_text(e->strings, v);
        if (id == 0 && v->kind < V_TEXT) {   /* a number's text is never "": refused */
          rt_errorf(err, -1, "%s: row %lld, column '%s': %s", strict ? CREATE_STAGE : "SQLite",
                    (long long)i + 1, names[c], rt_strpool_error(e->strings));
          rt_tb_abort(b);
          goto done;
        }
        rt_tb_append_str(b, c, id);
      } else if (types[c] == RT_F64)
        rt_tb_append_f64(b, c, v->kind == V_REAL ? v->u.f : (double)v->u.i);
      else rt_tb_append_i64(b, c, v->u.i);
    }
  }
  t = rt_tb_finish(b);
done:
  free(names);
  free(types);
  return t;
}

int pj__sqlmap_offset(const pj__sqlmap *map, int sqlpos, int off) {
  if (!map || map->n == 0) return sqlpos + off;
  int i = 0;
  while (i + 1 < map->n && map->new_at[i + 1] <= off) i++;
  return map->copied[i] ? map->old_at[i] + (off - map->new_at[i]) : map->old_at[i];
}

/* Fails the statement with the connection's last error; the offset is
 * SQLite's, made relative to the script. A pipeline inside the statement
 * that failed (sqltab.h) says what and where instead. */
static pj_status sqlite_fail(pj_engine *e, const char *script, const pj__sqlmap *map, int sqlpos,
                             int start) {
  rt_err err = {.offset = -1};
  if (e->sqltab_err.set && strstr(sqlite3_errmsg(e->db), e->sqltab_err.msg)) {
    err = e->sqltab_err;
    return pj__fail(e, &err, e->sqltab_errtext);
  }
  int off = sqlite3_error_offset(e->db);
  rt_errorf(&err, pj__sqlmap_offset(map, sqlpos, off >= 0 ? start + off : start), "SQLite: %s",
            sqlite3_errmsg(e->db));
  return pj__fail(e, &err, script);
}

pj_status pj__exec_sql(pj_engine *e, const char *script, const char *sql, int sqlpos,
                       const char *create_name, rt_table **out) {
  return pj__exec_sql_mapped(e, script, sql, sqlpos, NULL, create_name, out);
}

pj_status pj__exec_sql_mapped(pj_engine *e, const char *script, const char *sql, int sqlpos,
                              const pj__sqlmap *map, const char *create_name, rt_table **out) {
  *out = NULL;
  const char *tail = sql;
  pj_status s = PJ_OK;
  /* The splitter gives one statement, but a SQL text may still hold more
   * (e.g. from a caller's string): run them all, the last rows win. */
  while (s == PJ_OK && *tail) {
    sqlite3_stmt *q = NULL;
    int64_t t0 = rt_now_ns();
    const char *start = tail;
    memset(&e->sqltab_err, 0, sizeof e->sqltab_err);
    if (sqlite3_prepare_v2(e->db, start, -1, &q, &tail) != SQLITE_OK)
      return sqlite_fail(e, script, map, sqlpos, (int)(start - sql));
    if (q && pj__sql_bind_params(e, q) != SQLITE_OK) {
      s = sqlite_fail(e, script, map, sqlpos, (int)(start - sql));
      sqlite3_finalize(q);
      return s;
    }
    int64_t t1 = rt_now_ns();
    e->timing.bind_ns += t1 - t0;
    if (!q) break;   /* only whitespace or comments left */
    rows r = {.ncols = sqlite3_column_count(q)};
    int rc, bad_col = 0;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
      if (pj__interrupted(e)) {
        rc = SQLITE_INTERRUPT;
        break;
      }
      int pushed = r.ncols ? rows_push(&r, q, e->strings, &bad_col) : 1;
      if (pushed <= 0) {
        rc = pushed < 0 ? SQLITE_TOOBIG : SQLITE_NOMEM;
        break;
      }
    }
    if (rc == SQLITE_NOMEM) {
      s = PJ_NOMEM;
      pj__failf(e, "SQLite: out of memory");
    } else if (rc == SQLITE_TOOBIG) {
      s = pj__failf(e, "SQLite: row %lld, column '%s': %s", (long long)r.n + 1,
                    sqlite3_column_name(q, bad_col), rt_strpool_error(e->strings));
    } else if (rc != SQLITE_DONE) {
      s = sqlite_fail(e, script, map, sqlpos, (int)(start - sql));
    } else if (r.ncols) {
      rt_err err = {.offset = -1};
      rt_table *t = rows_to_table(e, &r, q, create_name ? create_name : "result",
                                  create_name != NULL, &err);
      if (!t) {
        if (err.offset < 0) err.offset = sqlpos;
        if (err.set) s = pj__fail(e, &err, script);
        else {
          pj__failf(e, "%s: out of memory", create_name ? CREATE_STAGE : "SQLite");
          s = PJ_NOMEM;
        }
      } else {
        if (*out) rt_table_unref(*out);
        *out = t;
      }
    }
    e->timing.rows_in += r.n;
    e->timing.run_ns += rt_now_ns() - t1;
    free(r.cells);
    sqlite3_finalize(q);
  }
  if (s != PJ_OK && *out) {
    rt_table_unref(*out);
    *out = NULL;
  }
  return s;
}

/* ---- CREATE PERFETTO TABLE -------------------------------------------- */

/* Schema type names: the class each stands for. */
static int schema_class(const char *type, rt_type *out) {
  static const char *const ints[] = {"INT", "INTEGER", "UINT32", "LONG", "INT64", "BIGINT"};
  static const char *const reals[] = {"DOUBLE", "REAL", "FLOAT"};
  static const char *const strs[] = {"STRING", "TEXT"};
  for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
    if (rt_strieq(type, ints[i])) return *out = RT_I64, 1;
  for (size_t i = 0; i < sizeof reals / sizeof *reals; i++)
    if (rt_strieq(type, reals[i])) return *out = RT_F64, 1;
  for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
    if (rt_strieq(type, strs[i])) return *out = RT_STR, 1;
  return 0;
}

static rt_type type_class(rt_type t) {
  return t == RT_F64 ? RT_F64 : t == RT_STR ? RT_STR : RT_I64;
}

static const char *class_name(rt_type t) {
  return t == RT_F64 ? "DOUBLE" : t == RT_STR ? "STRING" : "LONG";
}

/* A column with no non-NULL value: its type says nothing about the data. */
static int column_all_null(const rt_table *t, int c) {
  const rt_column *col = &t->cols[c];
  if (t->nrows == 0) return 1;
  if (!col->valid) return 0;
  for (size_t w = 0; w < RT_BITWORDS(t->nrows); w++)
    if (col->valid[w]) return 0;
  return 1;
}

static void copy_cell(rt_table_builder *b, int dst, const rt_column *col, int64_t row) {
  if (col->valid && !rt_bit(col->valid, (uint32_t)row)) {
    rt_tb_append_null(b, dst);
    return;
  }
  switch (col->type) {
  case RT_ID: rt_tb_append_i64(b, dst, row); break;
  case RT_U32: rt_tb_append_i64(b, dst, ((const uint32_t *)col->data)[row]); break;
  case RT_I32: rt_tb_append_i64(b, dst, ((const int32_t *)col->data)[row]); break;
  case RT_F64: rt_tb_append_f64(b, dst, ((const double *)col->data)[row]); break;
  case RT_STR: rt_tb_append_str(b, dst, ((const uint32_t *)col->data)[row]); break;
  default: rt_tb_append_i64(b, dst, ((const int64_t *)col->data)[row]); break;
  }
}

/* Gives every all-NULL column the schema's type (rebuilding the table: this
 * only happens for columns with no values, e.g. an empty result). Takes
 * the reference to t; NULL when out of memory (t kept). */
static rt_table *retype(rt_table *t, const rt_type *want) {
  const char **names = calloc((size_t)t->ncols + 1, sizeof *names);
  rt_type *types = calloc((size_t)t->ncols + 1, sizeof *types);
  rt_table_builder *b = NULL;
  if (!names || !types) goto oom;
  for (int c = 0; c < t->ncols; c++) {
    names[c] = t->cols[c].name;
    types[c] = want[c];
  }
  b = rt_tb_new(t->name, t->ncols, names, types);
  if (!b) goto oom;
  for (int64_t i = 0; i < t->nrows; i++)
    for (int c = 0; c < t->ncols; c++) {
      if (type_class(t->cols[c].type) != want[c]) rt_tb_append_null(b, c);
      else copy_cell(b, c, &t->cols[c], i);
    }
  rt_table *nt = rt_tb_finish(b);
  free(names);
  free(types);
  if (nt) rt_table_unref(t);
  return nt;
oom:
  free(names);
  free(types);
  return NULL;
}

/* Checks the optional schema against the result: names and types, in
 * order. It checks, it does not project. */
static int check_schema(const fe_stmt *st, rt_table **tp, rt_err *err) {
  rt_table *t = *tp;
  if (st->ncoldefs < 0) return 1;
  rt_type *want = calloc((size_t)st->ncoldefs + 1, sizeof *want);
  int ok = 0, need_retype = 0;
  if (!want) return rt_errorf(err, st->pos, CREATE_STAGE ": out of memory");
  for (int c = 0; c < st->ncoldefs; c++) {
    const fe_coldef *d = &st->coldefs[c];
    if (!schema_class(d->type, &want[c])) {
      rt_errorf(err, d->typepos,
                CREATE_STAGE ": unknown column type '%s': expected INT, LONG, DOUBLE or STRING",
                d->type);
      goto done;
    }
  }
  if (st->ncoldefs != t->ncols) {
    rt_errorf(err, st->table.pos,
              CREATE_STAGE ": the schema has %d column%s, but the result has %d",
              st->ncoldefs, st->ncoldefs == 1 ? "" : "s", t->ncols);
    goto done;
  }
  for (int c = 0; c < t->ncols; c++) {
    const fe_coldef *d = &st->coldefs[c];
    if (!rt_strieq(d->name.name, t->cols[c].name)) {
      rt_errorf(err, d->name.pos,
                CREATE_STAGE ": column %d of the result is named '%s', but the schema says '%s'",
                c + 1, t->cols[c].name, d->name.name);
      goto done;
    }
    rt_type have = type_class(t->cols[c].type);
    if (have == want[c]) continue;
    if (column_all_null(t, c)) {
      need_retype = 1;
      continue;
    }
    rt_errorf(err, d->typepos,
              CREATE_STAGE ": column '%s' has type %s in the result, but the schema says %s",
              t->cols[c].name, class_name(have), d->type);
    goto done;
  }
  if (need_retype) {
    rt_table *nt = retype(t, want);
    if (!nt) {
      rt_errorf(err, st->pos, CREATE_STAGE ": out of memory");
      goto done;
    }
    *tp = nt;
  }
  ok = 1;
done:
  free(want);
  return ok;
}

/* Is `name` taken by something in SQLite that is not one of our virtual
 * tables? (Ours live in the temp schema and are in the catalog.) */
static int sqlite_name_taken(pj_engine *e, const char *name, int in_catalog) {
  static const char *const sql =
      "SELECT 'main' FROM main.sqlite_schema WHERE name = ?1 COLLATE NOCASE"
      " AND type IN ('table', 'view')"
      " UNION ALL SELECT 'temp' FROM temp.sqlite_schema WHERE name = ?1 COLLATE NOCASE"
      " AND type IN ('table', 'view')";
  sqlite3_stmt *q = NULL;
  int taken = 0;
  if (sqlite3_prepare_v2(e->db, sql, -1, &q, NULL) != SQLITE_OK) return 0;
  sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
  while (sqlite3_step(q) == SQLITE_ROW) {
    const char *schema = (const char *)sqlite3_column_text(q, 0);
    if (strcmp(schema, "main") == 0 || !in_catalog) taken = 1;
  }
  sqlite3_finalize(q);
  return taken;
}

/* Puts t in the catalog and exposes it to SQL; on failure restores the old
 * table (catalog entry and virtual table). Takes the reference to t. */
static pj_status install(pj_engine *e, rt_table *t, const char *name, int pos,
                         const char *script) {
  rt_table *old = rt_catalog_get(e->catalog, name);
  if (old) rt_table_ref(old);
  if (!rt_catalog_put(e->catalog, t)) {
    if (old) rt_table_unref(old);
    return pj__nomem_msg(e, PJ_NOMEM);
  }
  char *msg = NULL;
  if (rt_vtab_expose(e->db, name, &msg) == SQLITE_OK) {
    if (old) rt_table_unref(old);
    return PJ_OK;
  }
  rt_err err = {.offset = -1};
  rt_errorf(&err, pos, CREATE_STAGE ": cannot make '%s' visible to SQL: %s", name,
            msg ? msg : "unknown error");
  sqlite3_free(msg);
  if (old) {
    rt_catalog_put(e->catalog, old);
    if (rt_vtab_expose(e->db, name, &msg) != SQLITE_OK) sqlite3_free(msg);
  } else {
    rt_catalog_remove(e->catalog, name);
  }
  return pj__fail(e, &err, script);
}

pj_status pj__exec_create(pj_engine *e, const char *script, const fe_stmt *st) {
  const char *name = st->table.name;
  rt_err err = {.offset = -1};
  int in_catalog = rt_catalog_get(e->catalog, name) != NULL;
  if (in_catalog && !st->or_replace) {
    rt_errorf(&err, st->table.pos, CREATE_STAGE ": table '%s' already exists", name);
    return pj__fail(e, &err, script);
  }
  if (sqlite_name_taken(e, name, in_catalog)) {
    rt_errorf(&err, st->table.pos,
              CREATE_STAGE ": '%s' is already the name of a SQLite table or view", name);
    return pj__fail(e, &err, script);
  }
  rt_table *t = NULL;
  pj_status s = st->pipe ? pj__exec_pipeline(e, script, st, st->pipe, name, &t)
                         : pj__exec_sql_stmt(e, script, st, name, &t);
  if (s != PJ_OK) return s;
  if (!t) {
    rt_errorf(&err, st->sqlpos, CREATE_STAGE ": the statement after AS returns no rows");
    return pj__fail(e, &err, script);
  }
  /* SQL and the catalog need one name per column. */
  for (int c = 0; c < t->ncols && !err.set; c++)
    for (int d = 0; d < c; d++)
      if (rt_strieq(t->cols[c].name, t->cols[d].name)) {
        rt_errorf(&err, st->table.pos,
                  CREATE_STAGE ": expected distinct column names, but there are two named '%s'",
                  t->cols[c].name);
        break;
      }
  if (err.set || !check_schema(st, &t, &err)) {
    rt_table_unref(t);
    return pj__fail(e, &err, script);
  }
  e->timing.rows_out = t->nrows;
  return install(e, t, name, st->table.pos, script);
}
