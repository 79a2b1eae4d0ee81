/*
 * proto_test.h — helpers of the protobuf importer's tests: import a trace
 * (bytes or a file) into a fresh engine through the builder; rows are
 * compared and the shared traces found with trace_rows.h.
 */
#ifndef PJ_TEST_PROTO_TEST_H
#define PJ_TEST_PROTO_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/engine.h"
#include "import/builder.h"
#include "import/import.h"
#include "import/proto.h"
#include "pipejit.h"
#include "tests/unit/trace_rows.h"

/* A fresh engine holding the protobuf trace p[0, n) (path: a file
 * instead). warning gets the importer's damage note. */
static inline pj_engine *proto_engine(const void *p, size_t n, const char *path, char *warning,
                               size_t cap) {
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  im_options opt = {.zero_is_swapper = 1};
  im_trace *t = im_trace_new(e->strings, &opt);
  assert_non_null(t);
  rt_err err = {0};
  char w[256];
  int ok = path ? pb_import_file(t, path, w, sizeof w, &err)
                : pb_import_memory(t, p, n, "test.pftrace", w, sizeof w, &err);
  if (!ok) fail_msg("import: %s", err.msg);
  if (!im_install(t, e->catalog, e->db, &err)) fail_msg("install: %s", err.msg);
  im_trace_free(t);
  if (warning) snprintf(warning, cap, "%s", w);
  return e;
}

#endif
