/*
 * engine.c — the engine handle: settings, the JIT created on first use,
 * loading SQLite tables into the catalog. Opening and closing are
 * engine_open.c's (they also make and drop the PerfettoSQL definitions,
 * which sit above the handles). Scripts run in script.c, handles in
 * query.c, errors and interrupts are errors.c's.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "codegen/cg.h"
#include "runtime/sqlite/load.h"
#include "runtime/sqlite/vtab.h"
#include "exec/adaptive.h"
#include "exec/pool.h"
#include "engine.h"

/* ---- limits and cancellation ------------------------------------------ */

void pj_engine_set_max_memory(pj_engine *e, int64_t bytes) { e->max_memory = bytes > 0 ? bytes : 0; }
int64_t pj_engine_max_memory(const pj_engine *e) { return e->max_memory; }

/* ---- threads ------------------------------------------------------------ */

void pj_engine_set_threads(pj_engine *e, int n) {
  e->threads = n > 0 ? (n > 256 ? 256 : n) : ex_ncpus();
  ex_pool_resize(e->pool, e->threads);
}
int pj_engine_threads(const pj_engine *e) { return e->threads; }

struct ex_pool *pj__engine_pool(pj_engine *e) {
  if (e->threads <= 1) return NULL;
  if (!e->pool) e->pool = ex_pool_new(e->threads);   /* threads start on first use */
  return e->pool;
}

void pj_engine_set_mode(pj_engine *e, pj_mode mode) { e->mode = mode; }
pj_mode pj_engine_mode(const pj_engine *e) { return e->mode; }
void pj_engine_set_opt_level(pj_engine *e, int level) {
  e->opt_level = level < 0 ? 0 : level > 3 ? 3 : level;
}
void *pj_engine_sqlite(pj_engine *e) { return e->db; }
void pj__engine_set_batch_rows(pj_engine *e, int rows) {
  e->batch_rows = rows >= 64 && rows <= RT_BATCH ? rows / 64 * 64 : 0;
}

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
  if (!rt_catalog_put(e->catalog, t)) return pj__nomem_msg(e, PJ_NOMEM);
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
