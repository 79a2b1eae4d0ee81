/*
 * trace.c — the public functions over the trace importers (import/):
 * loading a trace file, the sample trace, the trace tables' names and
 * exporting the catalog. Kept apart from engine.c so that a build without
 * the importers (the SQLite extension, which links neither libdeflate nor
 * zlib) leaves out this file and import/ whole.
 */
#include <sqlite3.h>

#include "import/builder.h"
#include "import/export.h"
#include "import/load.h"
#include "import/sample.h"
#include "runtime/sqlite/vtab.h"
#include "engine.h"

pj_status pj_engine_load_sample_trace(pj_engine *e, int64_t nslices) {
  pj__clear_error(e);
  rt_err err = {.offset = -1};
  if (!rt_sample_trace(e->catalog, e->strings, nslices, &err)) return pj__fail(e, &err, NULL);
  char *msg = NULL;
  if (rt_vtab_expose_all(e->db, e->catalog, &msg) != SQLITE_OK) {
    pj__failf(e, "SQLite: cannot expose the sample trace: %s", msg ? msg : "unknown error");
    sqlite3_free(msg);
    return PJ_ERROR;
  }
  return PJ_OK;
}

pj_status pj_engine_load_trace_progress(pj_engine *e, const char *path, pj_trace_info *info,
                                        pj_progress_cb progress, void *ctx) {
  pj__clear_error(e);
  pj__begin_run(e);
  rt_err err = {.offset = -1};
  im_progress pr = {progress, ctx};
  if (!im_load(e->catalog, e->db, e->strings, path, info, &pr, &e->interrupt, &err))
    return pj__fail(e, &err, NULL);
  return PJ_OK;
}

pj_status pj_engine_load_trace(pj_engine *e, const char *path, pj_trace_info *info) {
  return pj_engine_load_trace_progress(e, path, info, NULL, NULL);
}

const char *const *pj_engine_trace_tables(void) { return im_table_names(); }

pj_status pj_engine_export(pj_engine *e, const char *path) {
  pj__clear_error(e);
  rt_err err = {.offset = -1};
  if (!im_export(e->db, e->catalog, path, &err)) return pj__fail(e, &err, NULL);
  return PJ_OK;
}

