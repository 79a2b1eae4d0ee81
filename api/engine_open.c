/*
 * engine_open.c — an engine's life: opening (one SQLite connection with
 * the "pipejit" virtual table module and the trace functions registered,
 * the catalog of finalized columnar tables, the string pool, the registry
 * of PerfettoSQL definitions), attaching to a borrowed connection (the
 * SQLite extension), and closing. The engine also owns the state of mode
 * auto (exec/adaptive.c): the background compile thread and the compile
 * cache, which go before the JIT they compile with.
 *
 * The binder reaches the definitions through e->ir_defs, set here, so the
 * handles (query.c) do not call up into defs.c, which runs handles.
 */
#include <stdio.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "codegen/cg.h"
#include "runtime/sqlite/vtab.h"
#include "exec/adaptive.h"
#include "exec/pool.h"
#include "defs.h"
#include "sqltab.h"

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
  e->threads = ex_ncpus();
  /* Tests run whole suites with the backends alternating per batch. */
  const char *fs = getenv("PJ_FORCE_SWITCH");
  if (fs && (fs[0] == '1' || fs[0] == '2') && !fs[1]) e->force_switch = fs[0] - '0';
  e->catalog = rt_catalog_new();
  e->strings = rt_strpool_new();
  e->adapt = ex_adapt_new(&cg_backend);
  e->defs = pj__defs_new();
  e->ir_defs = (ir_defs){e, pj__ir_defs_find, pj__ir_callout};
  e->ir_sqlin = (ir_sqlinput){e, pj__sql_input_open, pj__sql_input_drop};
  if (!e->catalog || !e->strings || !e->adapt || !e->defs) return PJ_NOMEM;
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
  rc = pj__trace_functions_register(e);
  if (rc != SQLITE_OK)
    return pj__failf(e, "SQLite: cannot register the trace functions: %s", sqlite3_errstr(rc));
  return PJ_OK;
}

void pj_engine_close(pj_engine *e) {
  if (!e) return;
  /* Statements kept for calls go before the connection, which then
   * closes at once (dropping its references to the definitions). */
  pj__defs_drain(e->defs);
  /* The connection goes first: its virtual tables read the catalog. */
  if (e->db && !e->db_borrowed) sqlite3_close_v2(e->db);
  /* Joins the compile thread (it compiles with e->jit) and frees the
   * cached code, which lives in the JIT. */
  ex_adapt_free(e->adapt);
  ex_pool_free(e->pool);   /* joins the worker threads */
  if (e->jit) cg_jit_free(e->jit);
  pj__defs_free(e->defs);
  if (e->catalog) rt_catalog_free(e->catalog);
  if (e->strings) rt_strpool_free(e->strings);
  pj__params_free(e);
  free(e);
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
