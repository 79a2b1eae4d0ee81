/*
 * engine.c — the engine handle and the script runner.
 *
 * An engine owns one SQLite connection (with the "pipejit" virtual table
 * module registered), the catalog of finalized columnar tables and the
 * string pool. pj_engine_exec splits a script into statements and runs each
 * one: plain SQL goes to SQLite (engine_table.c turns its rows into a
 * result table), pipelines compile to query handles (query.c), CREATE
 * PERFETTO TABLE materializes either into the catalog (engine_table.c), and
 * PERFETTO PRAGMA is checked here. The engine also owns the state of
 * mode auto (exec/adaptive.c): the background compile thread and the
 * compile cache, which go before the JIT they compile with. Every error offset is relative to the
 * script, so the caller can point at the offending token.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "codegen/cg.h"
#include "runtime/sqlite/load.h"
#include "runtime/sqlite/vtab.h"
#include "exec/adaptive.h"
#include "engine.h"

/* ---- errors ----------------------------------------------------------- */

pj_status pj__fail(pj_engine *e, const rt_err *err, const char *text) {
  e->err = *err;
  e->err.set = 1;
  e->errtext = text;
  e->errline = e->errcol = 0;
  if (text && err->offset >= 0) fe_line_col(text, err->offset, &e->errline, &e->errcol);
  return PJ_ERROR;
}

pj_status pj__failf(pj_engine *e, const char *fmt, ...) {
  rt_err err = {.set = 1, .offset = -1};
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err.msg, sizeof err.msg, fmt, ap);
  va_end(ap);
  return pj__fail(e, &err, NULL);
}

/* Forgets the previous error: every call that can fail starts clean. */
void pj__clear_error(pj_engine *e) {
  memset(&e->err, 0, sizeof e->err);
  e->err.offset = -1;
  e->errtext = NULL;
  e->errline = e->errcol = 0;
}

const char *pj_engine_errmsg(const pj_engine *e) { return e->err.set ? e->err.msg : ""; }
int pj_engine_errline(const pj_engine *e) { return e->errline; }
int pj_engine_errcol(const pj_engine *e) { return e->errcol; }
int pj_engine_erroffset(const pj_engine *e) { return e->err.set ? e->err.offset : -1; }

/* ---- open / close ----------------------------------------------------- */

/* On failure *out still receives the engine (when it could be allocated)
 * so the caller can read pj_engine_errmsg; it must be closed, as with
 * sqlite3_open. */
/* An engine with its defaults, catalog, string pool and adaptive-compile
 * state, but no SQLite connection yet. *out receives it even on failure
 * (to be closed by the caller). */
static pj_status engine_new(pj_engine **out) {
  *out = NULL;
  pj_engine *e = calloc(1, sizeof *e);
  if (!e) return PJ_NOMEM;
  *out = e;
  pj__clear_error(e);
  e->mode = PJ_MODE_AUTO;
  e->opt_level = 2;
  e->auto_rows = PJ_AUTO_JIT_ROWS;
  /* Tests run whole suites with the backends alternating per batch. */
  const char *fs = getenv("PJ_FORCE_SWITCH");
  if (fs && (fs[0] == '1' || fs[0] == '2') && !fs[1]) e->force_switch = fs[0] - '0';
  e->catalog = rt_catalog_new();
  e->strings = rt_strpool_new();
  e->adapt = ex_adapt_new();
  if (!e->catalog || !e->strings || !e->adapt) return PJ_NOMEM;
  return PJ_OK;
}

pj_status pj_engine_open(const char *db_path, pj_engine **out) {
  pj_status st = engine_new(out);
  if (st != PJ_OK) return st;
  pj_engine *e = *out;
  sqlite3 *db = NULL;
  const char *path = db_path ? db_path : ":memory:";
  /* NOMUTEX: an engine is used by one thread at a time (pipejit.h), so
   * SQLite's per-call connection mutex only costs time (~17 ns per row
   * read from a 3-column SQLite source). */
  int rc = sqlite3_open_v2(path, &db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
  e->db = db;
  if (rc != SQLITE_OK)
    return pj__failf(e, "SQLite: cannot open database '%s': %s", path,
                     db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  rc = rt_vtab_register(db, e->catalog, e->strings, &e->vtab_stats);
  if (rc != SQLITE_OK)
    return pj__failf(e, "SQLite: cannot register the pipejit module: %s", sqlite3_errstr(rc));
  return PJ_OK;
}

void pj_engine_close(pj_engine *e) {
  if (!e) return;
  /* The connection goes first: its virtual tables read the catalog. */
  if (e->db && !e->db_borrowed) sqlite3_close_v2(e->db);
  /* Joins the compile thread (it compiles with e->jit) and frees the
   * cached code, which lives in the JIT. */
  ex_adapt_free(e->adapt);
  if (e->jit) cg_jit_free(e->jit);
  if (e->catalog) rt_catalog_free(e->catalog);
  if (e->strings) rt_strpool_free(e->strings);
  free(e);
}

/* ---- limits and cancellation ------------------------------------------ */

void pj_engine_set_max_memory(pj_engine *e, int64_t bytes) { e->max_memory = bytes > 0 ? bytes : 0; }
int64_t pj_engine_max_memory(const pj_engine *e) { return e->max_memory; }

/* Only an atomic store and sqlite3_interrupt (itself an atomic store on
 * the connection, documented as callable from other threads): safe in a
 * signal handler and from another thread. The driver reads the flag
 * before every batch; SQLite checks its own at its next VM step. */
void pj_engine_interrupt(pj_engine *e) {
  if (!e) return;
  __atomic_store_n(&e->interrupt, 1, __ATOMIC_RELAXED);
  if (e->db) sqlite3_interrupt(e->db);
}

void pj__begin_run(pj_engine *e) {
  if (e->exec_depth == 0) __atomic_store_n(&e->interrupt, 0, __ATOMIC_RELAXED);
}

int pj__interrupted(const pj_engine *e) { return __atomic_load_n(&e->interrupt, __ATOMIC_RELAXED); }

void pj_engine_set_mode(pj_engine *e, pj_mode mode) { e->mode = mode; }
pj_mode pj_engine_mode(const pj_engine *e) { return e->mode; }
void pj_engine_set_opt_level(pj_engine *e, int level) {
  e->opt_level = level < 0 ? 0 : level > 3 ? 3 : level;
}
void *pj_engine_sqlite(pj_engine *e) { return e->db; }
void pj__engine_set_force_switch(pj_engine *e, int force) {
  e->force_switch = force == 1 || force == 2 ? force : 0;
}
void pj__engine_set_auto_rows(pj_engine *e, int64_t rows) {
  e->auto_rows = rows < 0 ? PJ_AUTO_JIT_ROWS : rows;
}
void pj__engine_set_cache_size(pj_engine *e, int n) { ex_cache_set_cap(e->adapt, n); }
void pj_engine_last_timing(const pj_engine *e, pj_timing *out) { *out = e->timing; }
void pj__engine_set_hooks(pj_engine *e, const pj__hooks *h) {
  if (h) e->hooks = *h;
  else memset(&e->hooks, 0, sizeof e->hooks);
}

pj_status pj__engine_jit(pj_engine *e) {
  if (e->jit) return PJ_OK;
  rt_err err = {.offset = -1};
  e->jit = cg_jit_new(&err);
  if (e->jit) return PJ_OK;
  if (!err.set) rt_errorf(&err, -1, "JIT: LLVM could not be initialized");
  return pj__fail(e, &err, NULL);
}

/* ---- PERFETTO PRAGMA -------------------------------------------------- */

/* Only `pipelines` exists, and pipelines are always on: the value is
 * checked for shape and otherwise ignored (Perfetto compatibility). */
static pj_status run_pragma(pj_engine *e, const char *script, const fe_stmt *st) {
  rt_err err = {.offset = -1};
  if (!rt_strieq(st->pragma.name, "pipelines")) {
    rt_errorf(&err, st->pragma.pos, "PERFETTO PRAGMA: there is no setting '%s'", st->pragma.name);
    return pj__fail(e, &err, script);
  }
  const char *v = st->pragma_value ? st->pragma_value : "";
  const char *p = v;
  if (*p == '+' || *p == '-') p++;
  int digits = 0;
  while (*p >= '0' && *p <= '9') p++, digits++;
  if (!digits || *p) {
    rt_errorf(&err, st->pragma_value ? st->valuepos : st->pragma.pos,
              "PERFETTO PRAGMA: expected a whole number");
    return pj__fail(e, &err, script);
  }
  return PJ_OK;
}

/* ---- pipelines -------------------------------------------------------- */

/* Compiles and runs one pipeline of the script; *out gets its rows as a
 * table named `name` (caller's reference). */
pj_status pj__exec_pipeline(pj_engine *e, const char *script, const fe_stmt *st,
                            fe_pipeline *pipe, const char *name, rt_table **out) {
  *out = NULL;
  pj_query *q = NULL;
  pj_status s = pj__query_from_ast(e, script, pipe, &q);
  if (s != PJ_OK) return s;
  pj_timing compiled = e->timing;
  if (e->hooks.before_run) {
    pj__clear_error(e);
    if (e->hooks.before_run(e->hooks.ctx, q, script + st->pos, (size_t)st->len,
                            (size_t)st->pos)) {
      pj_query_free(q);
      return e->err.set ? PJ_ERROR : PJ_INTERRUPTED;
    }
  }
  s = pj__query_run_table(q, name, out);
  /* Keep the first run's bind time (a hook may have run it already). */
  e->timing.bind_ns = compiled.bind_ns;
  pj_query_free(q);
  return s;
}

/* ---- the script runner ------------------------------------------------ */

static pj_status run_stmt(pj_engine *e, const char *script, fe_stmt *st, pj_result_cb cb,
                          void *ctx, int *stop) {
  const char *stmt_text = script + st->pos;
  rt_table *t = NULL;
  pj_status s = PJ_OK;
  switch (st->kind) {
  case STMT_PRAGMA:
    return run_pragma(e, script, st);
  case STMT_CREATE_TABLE:
    return pj__exec_create(e, script, st);
  case STMT_SQL:
    s = pj__exec_sql_stmt(e, script, st, NULL, &t);
    break;
  case STMT_PIPELINE:
    s = pj__exec_pipeline(e, script, st, st->pipe, "result", &t);
    break;
  }
  if (s != PJ_OK || !t) return s;
  e->timing.rows_out = t->nrows;
  if (cb) {
    pj_result r = {.t = t, .strings = e->strings};
    if (cb(ctx, &r, stmt_text, (size_t)st->len, (size_t)st->pos)) *stop = 1;
  }
  rt_table_unref(t);
  return PJ_OK;
}

pj_status pj_engine_exec(pj_engine *e, const char *script, pj_result_cb cb, void *ctx) {
  return pj_engine_exec_len(e, script, strlen(script), cb, ctx);
}

pj_status pj_engine_exec_len(pj_engine *e, const char *script, size_t len, pj_result_cb cb,
                             void *ctx) {
  pj__clear_error(e);
  pj__begin_run(e);
  e->exec_depth++;
  /* One statement at a time, each parsed into an arena freed once it has
   * run (its plan goes with its handle): a script of a million
   * statements runs in the memory of its largest one. */
  rt_arena a;
  rt_arena_init(&a);
  size_t at = 0;
  fe_span span;
  pj_status s = PJ_OK;
  int stop = 0;
  while (s == PJ_OK && !stop && fe_split_next(script, len, &at, &span)) {
    memset(&e->timing, 0, sizeof e->timing);
    if (pj__interrupted(e)) {   /* between statements */
      s = PJ_INTERRUPTED;
      break;
    }
    rt_arena_free(&a);   /* the previous statement's parse */
    rt_arena_init(&a);
    rt_err err = {.offset = -1};
    int64_t t0 = rt_now_ns();
    fe_stmt *st = fe_parse_stmt(&a, script, span.pos, span.len, &err);
    int64_t parse_ns = rt_now_ns() - t0;
    if (!st) {
      s = pj__fail(e, &err, script);
      break;
    }
    s = run_stmt(e, script, st, cb, ctx, &stop);
    e->timing.parse_ns = parse_ns;
    if (s != PJ_OK) {
      /* A hook or callback may have cleared it; make sure a message exists. */
      if (s == PJ_ERROR && !e->err.set) pj__failf(e, "statement failed");
      /* A hook's stop without an error is a clean end of the script. */
      if (s == PJ_INTERRUPTED && !e->err.set && !pj__interrupted(e)) s = PJ_OK;
      break;
    }
    if (e->hooks.after_stmt)
      e->hooks.after_stmt(e->hooks.ctx, script + st->pos, (size_t)st->len, (size_t)st->pos,
                          &e->timing, st->pipe != NULL);
  }
  rt_arena_free(&a);
  e->exec_depth--;
  /* Whatever SQLite or the runtime said, an interrupted statement fails
   * with one message. */
  if (s != PJ_OK && pj__interrupted(e)) {
    pj__failf(e, "interrupted");
    s = PJ_INTERRUPTED;
  }
  return s;
}

/* ---- loading SQLite tables (traces: trace.c) --------------------------- */

/* Makes catalog table `name` visible to SQL as temp."name". */
static pj_status expose(pj_engine *e, const char *name) {
  char *msg = NULL;
  if (rt_vtab_expose(e->db, name, &msg) == SQLITE_OK) return PJ_OK;
  pj__failf(e, "SQLite: cannot expose table '%s': %s", name, msg ? msg : "unknown error");
  sqlite3_free(msg);
  return PJ_ERROR;
}

pj_status pj_engine_load_table_progress(pj_engine *e, const char *name, pj_progress_cb progress,
                                        void *ctx) {
  pj__clear_error(e);
  rt_err err = {.offset = -1};
  rt_table *t = rt_load_sqlite_table(e->db, e->strings, name, progress, ctx, &e->interrupt, &err);
  if (!t) return pj__fail(e, &err, NULL);
  rt_catalog_put(e->catalog, t);
  return expose(e, name);
}

pj_status pj_engine_load_table(pj_engine *e, const char *name) {
  return pj_engine_load_table_progress(e, name, NULL, NULL);
}

int pj_engine_table_count(pj_engine *e) { return rt_catalog_count(e->catalog); }

const char *pj_engine_table_name(pj_engine *e, int i, int64_t *rows) {
  rt_table *t = rt_catalog_at(e->catalog, i);
  if (rows) *rows = t ? t->nrows : 0;
  return t ? t->name : NULL;
}

/* ---- an engine over a borrowed connection ------------------------------ */

pj_status pj__engine_attach(void *db, pj_engine **out) {
  pj_engine *e;
  if (engine_new(&e) != PJ_OK) {
    if (e) pj_engine_close(e);
    *out = NULL;
    return PJ_NOMEM;
  }
  e->db = db;
  e->db_borrowed = 1;
  *out = e;
  return PJ_OK;
}
