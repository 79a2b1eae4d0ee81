/*
 * def_sqlite.c — PerfettoSQL functions and pipeline views as SQLite sees
 * them (LANGUAGE.md §7.1, §7.2).
 *
 * A scalar function is an application-defined SQL function of any arity
 * (the count is checked here, so the error names the function and says
 * how many it takes). A table function and a view are each an eponymous
 * virtual table named after them: `SELECT * FROM fn(1, 'x')` passes the
 * arguments as its hidden columns ("$name", after the result columns),
 * `SELECT * FROM v` reads the view. Every registration holds a reference
 * on its definition.
 *
 * With a pipeline body the table is the compiled handle itself, through
 * api/sqltab.h (the mechanism of pipelines inside SQL): its rows are read
 * in place, `=`/IN lookups on them go through hash indexes, and a scan
 * with the same arguments as the one before (the inner loop of a join)
 * does not run the body again. With a SQL body (a table function) the
 * module below steps the kept statement as the cursor moves, each row
 * checked against the declared TABLE(…) types.
 *
 * A view with a SQL body is not here: it is a TEMP VIEW of SQLite's own
 * (stmt_view.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "runtime/sqlite/vtab.h"
#include "defs.h"
#include "sqltab.h"

/* ---- scalar functions ------------------------------------------------- */

static void scalar_call(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  pj_def *d = sqlite3_user_data(ctx);
  pj_cval args[d->nargs > 0 ? d->nargs : 1];
  char *msg = NULL;
  if (!pj__def_convert_args(d, argc, argv, args, &msg) || !pj__def_call_scalar(d, args, ctx, &msg)) {
    sqlite3_result_error(ctx, msg ? msg : "out of memory", -1);
    sqlite3_free(msg);
  }
}

/* ---- table functions with a SQL body ---------------------------------- */

typedef struct qv_tab {
  sqlite3_vtab base;
  pj_def *d;            /* referenced by the module's registration */
} qv_tab;

typedef struct qv_cursor {
  sqlite3_vtab_cursor base;
  sqlite3_stmt *st;     /* the SQL body being stepped */
  int eof;
  int64_t row;
  int nargs;
  sqlite3_value **args; /* the hidden columns' values */
} qv_cursor;

static const char *decl_type(const pj_ptype *t) {
  if (t->bytes) return "BLOB";
  return t->t == RT_F64 ? "REAL" : t->t == RT_STR ? "TEXT" : "INTEGER";
}

static int qv_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                      sqlite3_vtab **out, char **err) {
  pj_def *d = aux;
  sqlite3_str *s = sqlite3_str_new(db);
  sqlite3_str_appendall(s, "CREATE TABLE x(");
  for (int i = 0; i < d->ncols; i++)
    sqlite3_str_appendf(s, "%s\"%w\" %s", i ? ", " : "", d->colnames[i], decl_type(&d->coltypes[i]));
  for (int i = 0; i < d->nargs; i++)
    sqlite3_str_appendf(s, ", \"$%w\" HIDDEN", d->argnames[i]);
  sqlite3_str_appendall(s, ")");
  char *sql = sqlite3_str_finish(s);
  if (!sql) return SQLITE_NOMEM;
  int rc = sqlite3_declare_vtab(db, sql);
  sqlite3_free(sql);
  if (rc != SQLITE_OK) {
    *err = sqlite3_mprintf("%s: cannot declare its columns: %s", d->name, sqlite3_errmsg(db));
    return rc;
  }
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  qv_tab *v = sqlite3_malloc(sizeof *v);
  if (!v) return SQLITE_NOMEM;
  memset(v, 0, sizeof *v);
  v->d = d;
  *out = &v->base;
  return SQLITE_OK;
}

static int qv_disconnect(sqlite3_vtab *base) {
  sqlite3_free(base);
  return SQLITE_OK;
}

static int vtab_error(sqlite3_vtab *base, char *msg) {
  sqlite3_free(base->zErrMsg);
  base->zErrMsg = msg;
  return SQLITE_ERROR;
}

/* Every argument must be given (an equality on its hidden column);
 * idxNum is unused: argv holds the arguments in order. */
static int qv_best_index(sqlite3_vtab *base, sqlite3_index_info *info) {
  pj_def *d = ((qv_tab *)base)->d;
  int slot[d->nargs > 0 ? d->nargs : 1];
  for (int i = 0; i < d->nargs; i++) slot[i] = -1;
  bool unusable = false;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *k = &info->aConstraint[i];
    int a = k->iColumn - d->ncols;
    if (a < 0 || a >= d->nargs || k->op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
    if (!k->usable) unusable = true;
    else if (slot[a] < 0) slot[a] = i;
  }
  for (int a = 0; a < d->nargs; a++) {
    if (slot[a] >= 0) continue;
    if (unusable) return SQLITE_CONSTRAINT;   /* a plan that passes it comes later */
    /* Said as the pipeline-bodied ones say it (runtime/sqlite/vtab.c). */
    return vtab_error(base, sqlite3_mprintf("table function %s takes %d argument%s", d->name,
                                            d->nargs, d->nargs == 1 ? "" : "s"));
  }
  for (int a = 0; a < d->nargs; a++) {
    info->aConstraintUsage[slot[a]].argvIndex = a + 1;
    info->aConstraintUsage[slot[a]].omit = 1;
  }
  info->estimatedCost = 1000;
  info->estimatedRows = 1000;
  return SQLITE_OK;
}

static int qv_open(sqlite3_vtab *base, sqlite3_vtab_cursor **out) {
  qv_cursor *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SQLITE_OK;
}

/* Drops what the last xFilter made (a cursor may be filtered again). */
static void cursor_reset(qv_cursor *c, pj_def *d) {
  if (c->st) pj__def_release_stmt(d, c->st);
  c->st = NULL;
  for (int i = 0; i < c->nargs; i++) sqlite3_value_free(c->args[i]);
  sqlite3_free(c->args);
  c->args = NULL;
  c->nargs = 0;
  c->eof = 1;
  c->row = 0;
}

static int qv_close(sqlite3_vtab_cursor *base) {
  qv_cursor *c = (qv_cursor *)base;
  cursor_reset(c, ((qv_tab *)base->pVtab)->d);
  sqlite3_free(c);
  return SQLITE_OK;
}

/* The SQL body's current row against the declared types. */
static char *check_row(pj_def *d, sqlite3_stmt *st, int64_t row) {
  for (int i = 0; i < d->ncols; i++) {
    int k = sqlite3_column_type(st, i);
    const pj_ptype *t = &d->coltypes[i];
    bool ok = k == SQLITE_NULL || (t->bytes ? k == SQLITE_BLOB || k == SQLITE_TEXT
                                   : t->t == RT_STR ? k == SQLITE_TEXT
                                   : t->t == RT_F64 ? k == SQLITE_FLOAT || k == SQLITE_INTEGER
                                                    : k == SQLITE_INTEGER);
    if (ok) continue;
    const unsigned char *s = sqlite3_column_text(st, i);
    return sqlite3_mprintf("%s: column '%s' is declared %s, but row %lld holds '%.40s'", d->name,
                           d->colnames[i], t->name, (long long)row + 1, s ? (const char *)s : "");
  }
  return NULL;
}

static int step_sql(sqlite3_vtab *base, qv_cursor *c, pj_def *d) {
  int rc = sqlite3_step(c->st);
  if (rc == SQLITE_DONE) {
    c->eof = 1;
    return SQLITE_OK;
  }
  if (rc != SQLITE_ROW)
    return vtab_error(base, sqlite3_mprintf("%s: %s", d->name, sqlite3_errmsg(d->e->db)));
  char *bad = check_row(d, c->st, c->row);
  if (bad) return vtab_error(base, bad);
  c->eof = 0;
  return SQLITE_OK;
}

static int qv_filter(sqlite3_vtab_cursor *base, int idx, const char *idxstr, int argc,
                     sqlite3_value **argv) {
  qv_cursor *c = (qv_cursor *)base;
  sqlite3_vtab *tab = base->pVtab;
  pj_def *d = ((qv_tab *)tab)->d;
  cursor_reset(c, d);
  pj_cval args[d->nargs > 0 ? d->nargs : 1];
  char *msg = NULL;
  if (!pj__def_convert_args(d, argc, argv, args, &msg)) return vtab_error(tab, msg);
  c->args = sqlite3_malloc64(sizeof *c->args * (size_t)(argc ? argc : 1));
  if (!c->args) return SQLITE_NOMEM;
  for (int i = 0; i < argc; i++)
    if ((c->args[c->nargs] = sqlite3_value_dup(argv[i]))) c->nargs++;
  c->st = pj__def_take_stmt(d, &msg);
  if (!c->st) return vtab_error(tab, sqlite3_mprintf("%s: %s", d->name, msg ? msg : ""));
  sqlite3_free(msg);
  msg = NULL;
  if (!pj__def_bind_stmt(d, c->st, args, &msg)) return vtab_error(tab, msg);
  return step_sql(tab, c, d);
}

static int qv_next(sqlite3_vtab_cursor *base) {
  qv_cursor *c = (qv_cursor *)base;
  c->row++;
  return c->st ? step_sql(base->pVtab, c, ((qv_tab *)base->pVtab)->d) : SQLITE_OK;
}

static int qv_eof(sqlite3_vtab_cursor *base) { return ((qv_cursor *)base)->eof; }

static int qv_column(sqlite3_vtab_cursor *base, sqlite3_context *ctx, int i) {
  qv_cursor *c = (qv_cursor *)base;
  pj_def *d = ((qv_tab *)base->pVtab)->d;
  if (i >= d->ncols) {
    int a = i - d->ncols;
    if (a < c->nargs) sqlite3_result_value(ctx, c->args[a]);
    return SQLITE_OK;
  }
  if (c->st) {
    sqlite3_value *v = sqlite3_column_value(c->st, i);
    if (d->coltypes[i].t == RT_F64 && sqlite3_value_type(v) == SQLITE_INTEGER)
      sqlite3_result_double(ctx, sqlite3_value_double(v));
    else
      sqlite3_result_value(ctx, v);
  }
  return SQLITE_OK;
}

static int qv_rowid(sqlite3_vtab_cursor *base, sqlite3_int64 *out) {
  *out = ((qv_cursor *)base)->row;
  return SQLITE_OK;
}

static const sqlite3_module qv_module = {
    .iVersion = 1,
    .xCreate = NULL,   /* eponymous only: `fn(…)` or the view's name */
    .xConnect = qv_connect,
    .xBestIndex = qv_best_index,
    .xDisconnect = qv_disconnect,
    .xOpen = qv_open,
    .xClose = qv_close,
    .xFilter = qv_filter,
    .xNext = qv_next,
    .xEof = qv_eof,
    .xColumn = qv_column,
    .xRowid = qv_rowid,
};

/* ---- pipeline bodies: the compiled handle as a table (sqltab.h) -------- */

/* A call's arguments converted to the declared types and bound as $name. */
static int tab_bind(void *ctx, pj_query *q, int nargs, sqlite3_value **args, char **errmsg) {
  pj_def *d = ctx;
  pj_cval v[d->nargs > 0 ? d->nargs : 1];
  pj_query_clear_bindings(q);
  return pj__def_convert_args(d, nargs, args, v, errmsg) && pj__def_bind_query(d, q, v, errmsg);
}

static void def_release(void *p) { pj__def_unref(p); }

/* The table owns a handle of its own: the one CREATE compiled, or a new
 * one when a definition comes back (INCLUDE's rollback). */
static int register_pipeline_table(pj_engine *e, pj_def *d, char **errmsg) {
  pj_query *q = pj__def_take_query(d);
  if (!q) {
    *errmsg = sqlite3_mprintf("%s", pj_engine_errmsg(e));
    return SQLITE_ERROR;
  }
  char what[300];
  snprintf(what, sizeof what, "%s %s", d->kind == PJ_DEF_VIEW ? "view" : "table function", d->name);
  const char *names[d->nargs > 0 ? d->nargs : 1];
  char buf[d->nargs > 0 ? d->nargs : 1][260];
  for (int i = 0; i < d->nargs; i++) {
    snprintf(buf[i], sizeof buf[i], "$%s", d->argnames[i]);
    names[i] = buf[i];
  }
  pj__sqltab_def def = {.module = d->name, .q = q, .nargs = d->nargs, .arg_names = names,
                        .what = what, .bind = tab_bind, .bind_ctx = pj__def_ref(d),
                        .bind_ctx_free = def_release, .own_text = true};
  pj_status s = pj__sqltab_register(e, &def);
  if (s == PJ_OK) return SQLITE_OK;
  *errmsg = sqlite3_mprintf("%s", s == PJ_NOMEM ? "out of memory" : pj_engine_errmsg(e));
  return s == PJ_NOMEM ? SQLITE_NOMEM : SQLITE_ERROR;
}

/* ---- registration ----------------------------------------------------- */

/* Only views with a pipeline body and functions are SQLite's to know. */
static bool registered(const pj_def *d) {
  return d->kind == PJ_DEF_FUNCTION || (d->kind == PJ_DEF_VIEW && d->pipeline);
}

int pj__def_register(pj_engine *e, pj_def *d, char **errmsg) {
  *errmsg = NULL;
  if (!registered(d)) return SQLITE_OK;
  if (d->table && d->pipeline) return register_pipeline_table(e, d, errmsg);
  sqlite3 *db = e->db;
  int rc;
  if (d->table) {
    /* SQLite calls def_release when the module goes, even on failure. */
    rc = sqlite3_create_module_v2(db, d->name, &qv_module, pj__def_ref(d), def_release);
  } else {
    rc = sqlite3_create_function_v2(db, d->name, -1, SQLITE_UTF8, pj__def_ref(d), scalar_call,
                                    NULL, NULL, def_release);
  }
  if (rc != SQLITE_OK) *errmsg = sqlite3_mprintf("%s", sqlite3_errmsg(db));
  return rc;
}

void pj__def_unregister(pj_engine *e, pj_def *d) {
  if (!registered(d)) return;
  if (d->table && d->pipeline) pj__sqltab_unregister(e, d->name);
  else if (d->table) sqlite3_create_module_v2(e->db, d->name, NULL, NULL, NULL);
  else sqlite3_create_function_v2(e->db, d->name, -1, SQLITE_UTF8, NULL, NULL, NULL, NULL, NULL);
}
