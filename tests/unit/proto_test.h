/*
 * proto_test.h — helpers of the protobuf importer's tests: import a trace
 * (bytes or a file) into a fresh engine through the builder, and compare
 * query results as "a|b\n" text.
 */
#ifndef PJ_TEST_PROTO_TEST_H
#define PJ_TEST_PROTO_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/engine.h"
#include "import/builder.h"
#include "import/import.h"
#include "import/proto.h"
#include "pipejit.h"

typedef struct ptext { char *s; size_t n; } ptext;

static void ptext_add(ptext *t, const char *s) {
  size_t k = strlen(s);
  t->s = realloc(t->s, t->n + k + 1);
  memcpy(t->s + t->n, s, k + 1);
  t->n += k;
}

static int pcollect(void *ctx, const pj_result *r, const char *st, size_t len, size_t off) {
  ptext *t = ctx;
  char buf[64];
  (void)st, (void)len, (void)off;
  for (int64_t i = 0; i < pj_result_row_count(r); i++) {
    for (int c = 0; c < pj_result_column_count(r); c++) {
      if (c) ptext_add(t, "|");
      if (pj_result_is_null(r, i, c)) {
        ptext_add(t, "NULL");
        continue;
      }
      switch (pj_result_column_type(r, c)) {
      case PJ_TYPE_STRING: ptext_add(t, pj_result_text(r, i, c, NULL)); break;
      case PJ_TYPE_DOUBLE:
        snprintf(buf, sizeof buf, "%.17g", pj_result_double(r, i, c));
        ptext_add(t, buf);
        break;
      default:
        snprintf(buf, sizeof buf, "%lld", (long long)pj_result_int64(r, i, c));
        ptext_add(t, buf);
      }
    }
    ptext_add(t, "\n");
  }
  return 0;
}

/* The rows of a script's results (caller frees). */
static char *prows(pj_engine *e, const char *script) {
  ptext t = {0};
  ptext_add(&t, "");
  if (pj_engine_exec(e, script, pcollect, &t) != PJ_OK)
    fail_msg("%s\n-> %s", script, pj_engine_errmsg(e));
  return t.s;
}

#define assert_rows(e, script, expected)                                                    \
  do {                                                                                      \
    char *got_ = prows(e, script);                                                          \
    if (strcmp(got_, expected)) {                                                           \
      print_error("%s\nexpected:\n%sgot:\n%s", script, expected, got_);                     \
      free(got_);                                                                           \
      fail();                                                                               \
    }                                                                                       \
    free(got_);                                                                             \
  } while (0)

static int64_t pone(pj_engine *e, const char *script) {
  char *s = prows(e, script);
  int64_t v = strtoll(s, NULL, 10);
  free(s);
  return v;
}

/* A fresh engine holding the protobuf trace p[0, n) (path: a file
 * instead). warning gets the importer's damage note. */
static pj_engine *proto_engine(const void *p, size_t n, const char *path, char *warning,
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

/* The shared traces: ../shared beside the checkout (CI, /work/main), or
 * two levels up from a worktree in /work/wt/; NULL when neither has it. */
static const char *shared_trace(const char *file) {
  static char buf[4][512];
  static int k;
  char *b = buf[k++ & 3];
  const char *roots[] = {"../shared/data/traces", "../../shared/data/traces"};
  for (int i = 0; i < 2; i++) {
    snprintf(b, 512, "%s/%s", roots[i], file);
    if (access(b, R_OK) == 0) return b;
  }
  print_message("skipping: %s not found (CI has shared/ beside the checkout)\n", file);
  return NULL;
}

#endif
