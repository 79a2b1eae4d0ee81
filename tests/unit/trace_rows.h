/*
 * trace_rows.h — helpers of the trace import tests: run a script on an
 * engine and compare its rows, printed "a|b|c\n" (NULL for NULL, doubles
 * with %g), with the expected text; and find the shared traces.
 */
#ifndef PJ_TEST_TRACE_ROWS_H
#define PJ_TEST_TRACE_ROWS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipejit.h"

typedef struct text { char *s; size_t n; } text;

static inline void text_add(text *t, const char *s) {
  size_t k = strlen(s);
  t->s = realloc(t->s, t->n + k + 1);
  assert_non_null(t->s);
  memcpy(t->s + t->n, s, k + 1);
  t->n += k;
}

/* Appends every row of a result as "a|b|c\n" (NULL for NULL). */
static inline int collect(void *ctx, const pj_result *r, const char *st, size_t len, size_t off) {
  (void)st, (void)len, (void)off;
  text *t = ctx;
  char buf[64];
  for (int64_t i = 0; i < pj_result_row_count(r); i++) {
    for (int c = 0; c < pj_result_column_count(r); c++) {
      if (c) text_add(t, "|");
      if (pj_result_is_null(r, i, c)) {
        text_add(t, "NULL");
        continue;
      }
      switch (pj_result_column_type(r, c)) {
      case PJ_TYPE_STRING: text_add(t, pj_result_text(r, i, c, NULL)); break;
      case PJ_TYPE_DOUBLE:
        snprintf(buf, sizeof buf, "%g", pj_result_double(r, i, c));
        text_add(t, buf);
        break;
      default:
        snprintf(buf, sizeof buf, "%lld", (long long)pj_result_int64(r, i, c));
        text_add(t, buf);
      }
    }
    text_add(t, "\n");
  }
  return 0;
}

/* The rows of a script's results as text (caller frees). */
static inline char *rows(pj_engine *e, const char *script) {
  text t = {0};
  text_add(&t, "");
  if (pj_engine_exec(e, script, collect, &t) != PJ_OK)
    fail_msg("%s\n-> %s", script, pj_engine_errmsg(e));
  return t.s;
}

static inline void assert_rows(pj_engine *e, const char *script, const char *expected) {
  char *got = rows(e, script);
  if (strcmp(got, expected)) {
    print_error("%s\nexpected:\n%sgot:\n%s", script, expected, got);
    free(got);
    fail();
  }
  free(got);
}

static inline int64_t one_int(pj_engine *e, const char *script) {
  char *s = rows(e, script);
  int64_t v = strtoll(s, NULL, 10);
  free(s);
  return v;
}

/* The shared traces: ../shared beside the checkout (CI, /work/main), or
 * two levels up from a worktree in /work/wt/; NULL when neither has it. */
static inline const char *shared_trace(const char *file) {
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
