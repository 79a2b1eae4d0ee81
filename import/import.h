/*
 * import.h — what the engine calls in import/: installing a built trace,
 * and (json.c, proto.c) the importers behind pj_engine_load_trace.
 */
#ifndef PJ_IMPORT_H
#define PJ_IMPORT_H

#include "builder.h"

/* Finishes t (im_trace_finish) into cat and exposes every trace table on
 * the SQLite connection db. Returns 1, or 0 with err set. */
int im_install(im_trace *t, rt_catalog *cat, void *db, rt_err *err);

#endif
