/*
 * stmt_function.c — CREATE [OR REPLACE] PERFETTO FUNCTION (LANGUAGE.md §7.2).
 *
 * The body is compiled (a pipeline) or prepared (SQL) here, once, and the
 * handle is kept for the calls; its parameters must be the arguments
 * ($name) and its columns must fit the declared result: a scalar body
 * needs a first column (of a type that converts to RETURNS), a table body
 * exactly the columns of TABLE(…), by name and in order (types checked
 * here for a pipeline, whose types are static, and on every row for SQL).
 *
 * A SQL body is prepared with the new function already registered, so it
 * may call itself (recursion, as in trace_processor); on any error the
 * previous definition's registration comes back, so a failed CREATE
 * changes nothing.
 */
#include <stdio.h>
#include <stdlib.h>

#include "defs.h"

#define STAGE "CREATE PERFETTO FUNCTION"

/* The body's column names (n of them) against TABLE(…): one list for
 * pipeline and SQL bodies. */
static int check_names(pj_def *d, const fe_stmt *st, int n, const char *const *names,
                       rt_err *err) {
  if (n != d->ncols)
    return rt_errorf(err, st->returnspos,
                     STAGE ": %s returns TABLE of %d column%s, but the body returns %d", d->name,
                     d->ncols, d->ncols == 1 ? "" : "s", n);
  for (int i = 0; i < n; i++)
    if (!names[i] || !rt_strieq(names[i], d->colnames[i]))
      return rt_errorf(err, st->coldefs[i].name.pos,
                       STAGE ": column %d of the body is named '%s', but TABLE(…) says '%s'", i + 1,
                       names[i] ? names[i] : "", d->colnames[i]);
  return 1;
}

/* The output columns of a compiled body against the declaration. */
static int check_outputs(pj_def *d, const pj_query *q, const fe_stmt *st, rt_err *err) {
  const char *const *names;
  int n = pj__def_outputs(q, &names, NULL);
  rt_type types[n > 0 ? n : 1];
  pj__def_outputs(q, &names, types);
  if (!d->table) {
    if (n == 0) return rt_errorf(err, st->asbody, STAGE ": the body returns no column");
    bool ok = pj__ptype_fits(&d->ret, types[0]) || (d->ret.t == RT_F64 && types[0] == RT_I64);
    if (!ok)
      return rt_errorf(err, st->returnspos,
                       STAGE ": %s returns %s, but the body's first column '%s' is %s", d->name,
                       d->ret.name, names[0], pj__ptype_class_name(types[0]));
    return 1;
  }
  if (!check_names(d, st, n, names, err)) return 0;
  for (int i = 0; i < n; i++) {
    const fe_coldef *c = &st->coldefs[i];
    bool ok = pj__ptype_fits(&d->coltypes[i], types[i]) ||
              (d->coltypes[i].t == RT_F64 && types[i] == RT_I64);
    if (!ok)
      return rt_errorf(err, c->typepos, STAGE ": column '%s' of the body is %s, but TABLE(…) says %s",
                       names[i], pj__ptype_class_name(types[i]), d->coltypes[i].name);
  }
  return 1;
}

/* A prepared SQL body against the declaration: its parameters are
 * arguments, its columns the declared ones. */
static int check_stmt(pj_def *d, sqlite3_stmt *q, const fe_stmt *st, rt_err *err) {
  for (int k = 1; k <= sqlite3_bind_parameter_count(q); k++) {
    const char *pn = sqlite3_bind_parameter_name(q, k);
    bool arg = false;
    for (int a = 0; pn && pn[0] == '$' && a < d->nargs && !arg; a++)
      arg = rt_strieq(pn + 1, d->argnames[a]);
    if (!arg)
      return rt_errorf(err, st->sqlpos, STAGE ": the body reads %s, which is not an argument of %s",
                       pn ? pn : "?", d->name);
  }
  int n = sqlite3_column_count(q);
  if (!d->table) {
    if (n == 0) return rt_errorf(err, st->sqlpos, STAGE ": the body returns no column");
    return 1;
  }
  const char *names[n > 0 ? n : 1];
  for (int i = 0; i < n; i++) names[i] = sqlite3_column_name(q, i);
  return check_names(d, st, n, names, err);
}

/* Registers d in SQLite in place of old (if any); on failure old's comes
 * back. */
static int swap_in(pj_engine *e, pj_def *old, pj_def *d, char **msg) {
  if (old) pj__def_unregister(e, old);
  if (pj__def_register(e, d, msg) == SQLITE_OK) return 1;
  char *ignored = NULL;
  if (old && pj__def_register(e, old, &ignored) != SQLITE_OK) sqlite3_free(ignored);
  return 0;
}

static void swap_back(pj_engine *e, pj_def *old, pj_def *d) {
  pj__def_unregister(e, d);
  char *ignored = NULL;
  if (old && pj__def_register(e, old, &ignored) != SQLITE_OK) sqlite3_free(ignored);
}

pj_status pj__exec_function(pj_engine *e, const char *script, const fe_stmt *st) {
  rt_err err = {.offset = -1};
  const char *name = st->table.name;
  if (!pj__def_name_free(e, st, PJ_DEF_FUNCTION, st->returns_table, STAGE, &err))
    return pj__fail(e, &err, script);
  pj_def *d = pj__defs_reserve(e) ? pj__def_new(e, PJ_DEF_FUNCTION, name) : NULL;
  if (!d) return pj__failf(e, STAGE ": out of memory");
  d->table = st->returns_table;
  if (!pj__def_signature(d, st, STAGE, &err)) {
    pj__def_unref(d);
    return pj__fail(e, &err, script);
  }
  pj_def *old = pj__def_find(e, PJ_DEF_FUNCTION, name);
  char *msg = NULL;
  if (st->pipe) {
    if (pj__def_pipeline_body(e, d, script, st, STAGE) != PJ_OK) {
      pj__def_unref(d);
      return PJ_ERROR;
    }
    if (!check_outputs(d, d->q[0], st, &err)) {
      pj__def_unref(d);
      return pj__fail(e, &err, script);
    }
    if (d->table && pj__def_widen_doubles(e, d) != PJ_OK) {
      pj__def_unref(d);
      return PJ_ERROR;
    }
    if (!swap_in(e, old, d, &msg)) goto sqlite_failed;
  } else {
    pj__sqlrewrite rw;
    if (pj__def_sql_body(e, d, script, st, &rw) != PJ_OK) {
      pj__def_unref(d);
      return PJ_ERROR;
    }
    if (!swap_in(e, old, d, &msg)) {
      pj__sql_rewrite_done(e, &rw, 0);
      goto sqlite_failed;
    }
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v3(e->db, d->body, -1, SQLITE_PREPARE_PERSISTENT, &q, NULL) != SQLITE_OK) {
      int off = sqlite3_error_offset(e->db);
      rt_errorf(&err, off >= 0 ? pj__def_sql_offset(st, &rw, off) : st->sqlpos,
                STAGE ": SQLite: %s", sqlite3_errmsg(e->db));
      sqlite3_finalize(q);
      q = NULL;
    } else if (!q) {
      rt_errorf(&err, st->sqlpos, STAGE ": the body is empty");
    } else if (!check_stmt(d, q, st, &err)) {
      sqlite3_finalize(q);
      q = NULL;
    }
    pj__sql_rewrite_done(e, &rw, q != NULL);
    if (!q) {
      swap_back(e, old, d);
      pj__def_unref(d);
      return pj__fail(e, &err, script);
    }
    d->st[d->nst++] = q;
  }
  pj__def_put(e, d);
  return PJ_OK;

sqlite_failed:
  rt_errorf(&err, st->table.pos, STAGE ": SQLite cannot register '%s': %s", name,
            msg ? msg : "out of memory");
  sqlite3_free(msg);
  pj__def_unref(d);
  return pj__fail(e, &err, script);
}
