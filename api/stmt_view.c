/*
 * stmt_view.c — CREATE [OR REPLACE] PERFETTO VIEW (LANGUAGE.md §7.1).
 *
 * A view with a SQL body is a SQLite TEMP VIEW (temp, so it can read the
 * columnar tables, which are temp virtual tables): SQLite runs it on the
 * current data at every read and plans it with the query that reads it.
 * A view with a pipeline body is compiled here, once; SQL reads it through
 * an eponymous virtual table (def_sqlite.c) that runs the kept handle,
 * which binds again by itself when a table it reads was replaced, and a
 * pipeline's `FROM v` inlines the body (the binder, through ir_defs).
 *
 * The optional schema is checked as CREATE PERFETTO TABLE checks its own:
 * names in order, and types where they are known before running — a
 * pipeline's output types, and for SQL the declared types of the columns
 * (a column computed by an expression has none, and is not checked).
 * A view reads no parameters (SQLite refuses them in a SQL view's body;
 * a pipeline body is checked in def_body.c). A failed CREATE leaves the old view (and
 * everything else) as it was: the SQLite part runs inside a savepoint.
 */
#include <stdio.h>
#include <stdlib.h>

#include "runtime/sqlite/sqlsrc.h"
#include "defs.h"

#define STAGE "CREATE PERFETTO VIEW"

/* Column i of the result, named `have` of type `t` (RT_NULLT: unknown),
 * against the schema. */
static int check_column(const fe_stmt *st, int i, const char *have, rt_type t, const pj_ptype *want,
                        rt_err *err) {
  const fe_coldef *c = &st->coldefs[i];
  if (!rt_strieq(have, c->name.name))
    return rt_errorf(err, c->name.pos,
                     STAGE ": column %d of the result is named '%s', but the schema says '%s'",
                     i + 1, have, c->name.name);
  if (!pj__ptype_fits(want, t) && !(want->t == RT_F64 && t == RT_I64))
    return rt_errorf(err, c->typepos,
                     STAGE ": column '%s' has type %s in the result, but the schema says %s", have,
                     pj__ptype_class_name(t), c->type);
  return 1;
}

static int check_count(const fe_stmt *st, int n, rt_err *err) {
  if (st->ncoldefs == n) return 1;
  return rt_errorf(err, st->table.pos, STAGE ": the schema has %d column%s, but the result has %d",
                   st->ncoldefs, st->ncoldefs == 1 ? "" : "s", n);
}

static int distinct(const char *const *names, int n, int pos, rt_err *err) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      if (rt_strieq(names[i], names[j]))
        return rt_errorf(err, pos,
                         STAGE ": expected distinct column names, but there are two named '%s'",
                         names[i]);
  return 1;
}

/* A pipeline body: compiled, its columns become the view's. */
static pj_status pipeline_view(pj_engine *e, pj_def *d, const char *script, const fe_stmt *st) {
  rt_err err = {.offset = -1};
  if (pj__def_pipeline_body(e, d, script, st, STAGE) != PJ_OK) return PJ_ERROR;
  const char *const *names;
  int n = pj__def_outputs(d->q[0], &names, NULL);
  rt_type types[n > 0 ? n : 1];
  pj__def_outputs(d->q[0], &names, types);
  if (!distinct(names, n, st->table.pos, &err)) return pj__fail(e, &err, script);
  if (st->ncoldefs >= 0) {
    if (!check_count(st, n, &err)) return pj__fail(e, &err, script);
    for (int i = 0; i < n; i++)
      if (!check_column(st, i, names[i], types[i], &d->coltypes[i], &err))
        return pj__fail(e, &err, script);
    return pj__def_widen_doubles(e, d);
  }
  d->ncols = n;
  d->colnames = rt_arena_alloc(&d->arena, sizeof(char *) * (size_t)(n + 1));
  d->coltypes = rt_arena_alloc(&d->arena, sizeof(pj_ptype) * (size_t)(n + 1));
  if (!d->colnames || !d->coltypes) return pj__failf(e, STAGE ": out of memory");
  for (int i = 0; i < n; i++) {
    if (!(d->colnames[i] = rt_arena_strdup(&d->arena, names[i])))
      return pj__failf(e, STAGE ": out of memory");
    rt_type t = types[i] == RT_NULLT ? RT_I64 : types[i];
    d->coltypes[i] = (pj_ptype){.t = t, .name = pj__ptype_class_name(t)};
  }
  return PJ_OK;
}

/* A SQL body, as a TEMP VIEW made inside the caller's savepoint. */
static int sql_view(pj_engine *e, pj_def *d, const fe_stmt *st, const pj__sqlrewrite *rw,
                    rt_err *err) {
  sqlite3 *db = e->db;
  char *sql = sqlite3_mprintf("CREATE TEMP VIEW \"%w\" AS %s", d->name, d->body);
  if (!sql) return rt_errorf(err, st->pos, STAGE ": out of memory");
  int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
  sqlite3_free(sql);
  if (rc != SQLITE_OK) {
    /* SQLite's offset is into our CREATE TEMP VIEW text */
    int off = sqlite3_error_offset(db);
    int prefix = (int)strlen("CREATE TEMP VIEW \"\" AS ") + (int)strlen(d->name);
    for (const char *p = d->name; *p; p++) prefix += *p == '"';
    return rt_errorf(err, off >= prefix ? pj__def_sql_offset(st, rw, off - prefix) : st->sqlpos,
                     STAGE ": SQLite: %s", sqlite3_errmsg(db));
  }
  sqlite3_stmt *q = NULL;
  sql = sqlite3_mprintf("SELECT * FROM temp.\"%w\"", d->name);
  rc = sql ? sqlite3_prepare_v2(db, sql, -1, &q, NULL) : SQLITE_NOMEM;
  sqlite3_free(sql);
  if (rc != SQLITE_OK) {
    rt_errorf(err, st->sqlpos, STAGE ": SQLite: %s", sqlite3_errmsg(db));
    sqlite3_finalize(q);
    return 0;
  }
  int ok = 1;
  int n = sqlite3_column_count(q);
  const char *names[n > 0 ? n : 1];
  for (int i = 0; i < n; i++) names[i] = sqlite3_column_name(q, i) ? sqlite3_column_name(q, i) : "";
  if (ok) ok = distinct(names, n, st->table.pos, err);
  if (ok && st->ncoldefs >= 0) {
    ok = check_count(st, n, err);
    for (int i = 0; ok && i < n; i++)
      ok = check_column(st, i, names[i], rt_sql_decl_type(sqlite3_column_decltype(q, i)),
                        &d->coltypes[i], err);
  }
  sqlite3_finalize(q);
  return ok;
}

pj_status pj__exec_view(pj_engine *e, const char *script, const fe_stmt *st) {
  rt_err err = {.offset = -1};
  const char *name = st->table.name;
  if (!pj__def_name_free(e, st, PJ_DEF_VIEW, true, STAGE, &err)) return pj__fail(e, &err, script);
  pj_def *d = pj__defs_reserve(e) ? pj__def_new(e, PJ_DEF_VIEW, name) : NULL;
  if (!d) return pj__failf(e, STAGE ": out of memory");
  d->table = true;
  if (!pj__def_signature(d, st, STAGE, &err)) {
    pj__def_unref(d);
    return pj__fail(e, &err, script);
  }
  pj__sqlrewrite rw = {0};
  if (st->pipe ? pipeline_view(e, d, script, st) != PJ_OK
               : pj__def_sql_body(e, d, script, st, &rw) != PJ_OK) {
    pj__def_unref(d);
    return PJ_ERROR;
  }
  pj_def *old = pj__def_find(e, PJ_DEF_VIEW, name);
  sqlite3 *db = e->db;
  if (sqlite3_exec(db, "SAVEPOINT pj_view", NULL, NULL, NULL) != SQLITE_OK) {
    rt_errorf(&err, st->pos, STAGE ": SQLite: %s", sqlite3_errmsg(db));
    pj__sql_rewrite_done(e, &rw, 0);
    pj__def_unref(d);
    return pj__fail(e, &err, script);
  }
  int ok = 1;
  char *msg = NULL;
  if (old && !old->pipeline) {
    char *sql = sqlite3_mprintf("DROP VIEW temp.\"%w\"", name);
    if (!sql || sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
      ok = rt_errorf(&err, st->table.pos, STAGE ": SQLite: %s", sqlite3_errmsg(db));
    sqlite3_free(sql);
  }
  if (old && old->pipeline) pj__def_unregister(e, old);
  if (ok) ok = st->pipe ? pj__def_register(e, d, &msg) == SQLITE_OK : sql_view(e, d, st, &rw, &err);
  if (!ok && msg) {
    rt_errorf(&err, st->table.pos, STAGE ": SQLite cannot register '%s': %s", name, msg);
    sqlite3_free(msg);
  }
  pj__sql_rewrite_done(e, &rw, ok);
  if (!ok) {
    sqlite3_exec(db, "ROLLBACK TO pj_view; RELEASE pj_view", NULL, NULL, NULL);
    if (st->pipe) pj__def_unregister(e, d);
    if (old && old->pipeline && pj__def_register(e, old, &msg) != SQLITE_OK) sqlite3_free(msg);
    pj__def_unref(d);
    return pj__fail(e, &err, script);
  }
  sqlite3_exec(db, "RELEASE pj_view", NULL, NULL, NULL);
  pj__def_put(e, d);
  return PJ_OK;
}
