/*
 * engine.c — the engine handle: opening (one SQLite connection with the
 * "pipejit" virtual table module registered, the catalog of finalized
 * columnar tables, the string pool), settings, the JIT created on first
 * use, loading SQLite tables into the catalog, and closing. The engine
 * also owns the state of mode auto (exec/adaptive.c): the background
 * compile thread and the compile cache, which go before the JIT they
 * compile with. Scripts run in script.c, handles in query.c, errors and
 * interrupts are errors.c's.
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
  e->adapt = ex_adapt_new(&cg_backend);
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
