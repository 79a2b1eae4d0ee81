/*
 * fuzz_frontend.c — libFuzzer target: arbitrary bytes as a script.
 *
 * The input runs through pj_engine_exec on one engine per process, whose
 * catalog holds a few small tables set up once (a SQLite table `s`, the
 * columnar tables `t` and `tr`, and the sample trace). It must never crash
 * or leak; every failure must carry a message; when the text also fails to
 * compile as one pipeline (pj_query_compile), that error must point inside
 * the text. The engine is replaced every few hundred inputs, so tables the
 * input creates do not pile up ("fresh-ish").
 *
 * SQLite is fenced so the fuzzer explores pipejit, not the file system or
 * SQLite's own loops: no ATTACH/DETACH/VACUUM, a bounded statement length
 * and a progress handler that stops a statement after a few million VM
 * steps (an endless recursive CTE).
 *
 * Environment: PJ_FUZZ_MODE=jit|interp|auto (default interp).
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "pipejit.h"

#define RESET_EVERY 500
#define MAX_VM_STEPS 4000000

static pj_engine *g_e;
static int g_runs;
static long g_steps;

/* Called every 1000 VM instructions: a non-zero return interrupts. */
static int progress(void *ctx) {
  (void)ctx;
  g_steps += 1000;
  return g_steps > MAX_VM_STEPS;
}

static int deny_files(void *ctx, int action, const char *a, const char *b, const char *c,
                      const char *d) {
  (void)ctx, (void)a, (void)b, (void)c, (void)d;
  return action == SQLITE_ATTACH || action == SQLITE_DETACH ? SQLITE_DENY : SQLITE_OK;
}

static void die(const char *what) {
  fprintf(stderr, "fuzz_frontend: %s: %s\n", what, g_e ? pj_engine_errmsg(g_e) : "?");
  abort();
}

static const char *const k_setup =
    "CREATE TABLE s(id INT, parent_id INT, ts INT, dur INT, name TEXT, v REAL);"
    "INSERT INTO s VALUES (0,NULL,0,10,'a',1.5),(1,0,2,3,'b',NULL),(2,0,5,5,NULL,-2),"
    "(3,1,2,1,'a',0),(4,NULL,20,0,'c',9223372036854775807);"
    "CREATE PERFETTO TABLE t AS SELECT id, parent_id, ts, dur, name, v, id % 2 AS k FROM s;"
    "CREATE PERFETTO TABLE tr AS SELECT 1 AS id, 0 AS ts, 100 AS dur, 'x' AS name UNION ALL "
    "SELECT 2, 50, 10, NULL UNION ALL SELECT 3, 200, -1, 'y'";

static void open_engine(void) {
  if (g_e) pj_engine_close(g_e);
  g_e = NULL;
  if (pj_engine_open(NULL, &g_e) != PJ_OK) die("open");
  const char *m = getenv("PJ_FUZZ_MODE");
  pj_engine_set_mode(g_e, m && !strcmp(m, "jit")    ? PJ_MODE_JIT
                          : m && !strcmp(m, "auto") ? PJ_MODE_AUTO
                                                    : PJ_MODE_INTERP);
  sqlite3 *db = pj_engine_sqlite(g_e);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 20);
  sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, 1 << 20);
  sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_set_authorizer(db, deny_files, NULL);
  if (pj_engine_load_sample_trace(g_e, 50) != PJ_OK) die("sample trace");
  if (pj_engine_exec(g_e, k_setup, NULL, NULL) != PJ_OK) die("setup");
  sqlite3_progress_handler(db, 1000, progress, NULL);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  open_engine();
  return 0;
}

/* Case-insensitive search for a word that would let SQLite write files. */
static int has_word(const char *s, const char *w) {
  size_t n = strlen(w);
  for (; *s; s++)
    if (!strncasecmp(s, w, n)) return 1;
  return 0;
}

static int count_rows(void *ctx, const pj_result *r, const char *t, size_t len, size_t off) {
  (void)t, (void)len, (void)off;
  /* Read every cell: a result must be readable whatever it holds. */
  int nc = pj_result_column_count(r);
  for (int c = 0; c < nc; c++) {
    if (!pj_result_column_name(r, c)) die("column without a name");
    for (int64_t i = 0; i < pj_result_row_count(r); i++) {
      if (pj_result_is_null(r, i, c)) continue;
      switch (pj_result_column_type(r, c)) {
      case PJ_TYPE_STRING: {
        size_t l = 0;
        const char *s = pj_result_text(r, i, c, &l);
        if (!s || strlen(s) > l) die("bad string");
        break;
      }
      case PJ_TYPE_DOUBLE: (void)pj_result_double(r, i, c); break;
      default: (void)pj_result_int64(r, i, c);
      }
    }
  }
  (*(int64_t *)ctx)++;
  return 0;
}

/* Every error has a message; a position, when given, lies in the text. */
static void check_error(size_t len, const char *what) {
  const char *msg = pj_engine_errmsg(g_e);
  if (!msg || !*msg) die(what);
  int off = pj_engine_erroffset(g_e);
  if (off < -1 || off > (int)len) die("error offset outside the text");
  if (off >= 0 && (pj_engine_errline(g_e) < 1 || pj_engine_errcol(g_e) < 1))
    die("error offset without line and column");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 64 * 1024) return -1;
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = 0;
  size_t len = strlen(text);
  if (has_word(text, "vacuum")) {
    free(text);
    return -1;
  }
  if (++g_runs % RESET_EVERY == 0) open_engine();

  g_steps = 0;
  int64_t nres = 0;
  if (pj_engine_exec(g_e, text, count_rows, &nres) != PJ_OK) check_error(len, "exec");

  /* The same text as one pipeline handle: a compile error has a position. */
  const char *p = text;
  while (isspace((unsigned char)*p)) p++;
  if (!strncasecmp(p, "FROM", 4) || !strncasecmp(p, "INTERVAL", 8)) {
    g_steps = 0;
    pj_query *q = NULL;
    if (pj_query_compile(g_e, text, &q) != PJ_OK) {
      check_error(len, "compile");
      if (pj_engine_erroffset(g_e) < 0) die("compile error without a position");
    } else {
      pj_result *r = NULL;
      if (pj_query_run(q, &r) == PJ_OK) pj_result_free(r);
      else check_error(len, "run");
      pj_query_free(q);
    }
  }
  /* The engine still works after whatever happened. */
  g_steps = 0;
  if (pj_engine_exec(g_e, "FROM (SELECT 1 AS x UNION ALL SELECT 2) |> AGGREGATE SUM(x) AS s",
                     NULL, NULL) != PJ_OK)
    die("engine unusable after an input");
  free(text);
  return 0;
}
