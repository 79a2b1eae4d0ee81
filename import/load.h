/*
 * load.h — pj_engine_load_trace's work: open a trace file, tell its
 * format from its content (gzip, JSON, protobuf), run the importer for
 * it into a new im_trace and install the tables (import.h).
 */
#ifndef PJ_IMPORT_LOAD_H
#define PJ_IMPORT_LOAD_H

#include "../include/pipejit.h"
#include "../runtime/rt.h"
#include "input.h"

/* Progress of an import: done of total units (bytes read, then events
 * parsed) of phase `what`. */
typedef struct im_progress {
  pj_progress_cb cb;
  void *ctx;
} im_progress;

/* Imports path into cat (exposing the tables on db); info may be NULL.
 * Returns 1, or 0 with err set ("TRACE: …"): the catalog is then as it
 * was. A damaged file imports what it can (info->damaged_at says where). */
int im_load(rt_catalog *cat, void *db, rt_strpool *sp, const char *path, pj_trace_info *info,
            const im_progress *progress, const volatile int *interrupt, rt_err *err);

/* The JSON importer (json.c) over a whole buffer into t. */
struct im_trace;
int im_json_import(struct im_trace *t, im_input *in, pj_trace_info *info,
                   const im_progress *progress, rt_err *err);

#endif
