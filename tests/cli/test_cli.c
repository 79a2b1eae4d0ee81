/*
 * test_cli.c — the shell's pieces that need no terminal: statement
 * completeness, dot-commands (settings and output) and tab completion
 * candidates from keywords and the engine's tables and columns.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/shell.h"

/* shell.c runs statements through main.c's cli_run_script; the test
 * provides a minimal one. */
int cli_run_script(struct cli *c, const char *script, size_t len) {
  return pj_engine_exec_len(c->e, script, len, NULL, NULL) == PJ_OK ? 0 : 1;
}

/* The shell's Ctrl-C flag lives in main.c too: no Ctrl-C here. */
int cli_take_interrupt(void) { return 0; }

static int setup(void **state) {
  struct cli *c = calloc(1, sizeof *c);
  assert_non_null(c);
  assert_int_equal(pj_engine_open(NULL, &c->e), PJ_OK);
  assert_int_equal(pj_engine_exec(c->e,
                                   "CREATE TABLE events(id INTEGER, ts INTEGER, thread_name TEXT);"
                                   "CREATE PERFETTO TABLE spans AS SELECT 1 AS span_id, 2 AS dur",
                                   NULL, NULL),
                   PJ_OK);
  *state = c;
  return 0;
}

static int teardown(void **state) {
  struct cli *c = *state;
  pj_engine_close(c->e);
  free(c);
  return 0;
}

static void test_stmt_complete(void **state) {
  const char *cases[][2] = {
      {"SELECT 1;", "1"},          {"SELECT 1", "0"},
      {"SELECT ';", "0"},          {"SELECT ';';", "1"},
      {"FROM t\n|> WHERE a = 1;\n", "1"}, {"SELECT (1;", "0"},
      {"SELECT 1 -- c;", "0"},    {"SELECT 1; /* ; */", "0"},
      {"  ;  ", "1"},              {"SELECT 1;\nSELECT 2", "0"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int got = cli_stmt_complete(cases[i][0], strlen(cases[i][0]));
    if (got != cases[i][1][0] - '0') fail_msg("cli_stmt_complete(\"%s\") = %d", cases[i][0], got);
  }
}

/* Runs a dot-command, returning its result and what it printed. */
static cli_dot_result dot(struct cli *c, const char *line, char **out, char **err) {
  size_t on = 0, en = 0;
  FILE *fo = open_memstream(out, &on), *fe = open_memstream(err, &en);
  cli_dot_result r = cli_dot_command(c, line, fo, fe);
  fclose(fo);
  fclose(fe);
  return r;
}

static void test_dot_settings(void **state) {
  struct cli *c = *state;
  char *out, *err;
  assert_int_equal(dot(c, ".mode csv", &out, &err), CLI_DOT_OK);
  assert_int_equal(c->fmt, CLI_CSV);
  free(out), free(err);
  assert_int_equal(dot(c, ".mode", &out, &err), CLI_DOT_OK);
  assert_string_equal(out, "csv\n");
  free(out), free(err);
  assert_int_equal(dot(c, ".mode xml", &out, &err), CLI_DOT_ERROR);
  assert_non_null(strstr(err, "table|csv|json"));
  assert_int_equal(c->fmt, CLI_CSV);
  free(out), free(err);
  assert_int_equal(dot(c, "  .timing on  ", &out, &err), CLI_DOT_OK);
  assert_int_equal(c->timing, 1);
  free(out), free(err);
  assert_int_equal(dot(c, ".timing off", &out, &err), CLI_DOT_OK);
  assert_int_equal(c->timing, 0);
  free(out), free(err);
  assert_int_equal(dot(c, ".dump llvm", &out, &err), CLI_DOT_OK);
  assert_string_equal(c->dump, "llvm");
  free(out), free(err);
  assert_int_equal(dot(c, ".dump off", &out, &err), CLI_DOT_OK);
  assert_null(c->dump);
  free(out), free(err);
  assert_int_equal(dot(c, ".timing on extra", &out, &err), CLI_DOT_ERROR);
  free(out), free(err);
  assert_int_equal(dot(c, ".frobnicate", &out, &err), CLI_DOT_ERROR);
  assert_non_null(strstr(err, "unknown command .frobnicate"));
  free(out), free(err);
  assert_int_equal(dot(c, ".quit", &out, &err), CLI_DOT_QUIT);
  free(out), free(err);
  assert_int_equal(dot(c, ".exit", &out, &err), CLI_DOT_QUIT);
  free(out), free(err);
  assert_int_equal(dot(c, ".help", &out, &err), CLI_DOT_OK);
  assert_non_null(strstr(out, ".schema NAME"));
  free(out), free(err);
}

static void test_dot_tables_schema(void **state) {
  struct cli *c = *state;
  char *out, *err;
  assert_int_equal(dot(c, ".tables", &out, &err), CLI_DOT_OK);
  assert_string_equal(out, "events\nspans\n");   /* SQLite and columnar tables */
  free(out), free(err);
  assert_int_equal(dot(c, ".schema events", &out, &err), CLI_DOT_OK);
  assert_string_equal(out, "CREATE TABLE events(\n  id INTEGER,\n  ts INTEGER,\n  thread_name TEXT\n);\n");
  free(out), free(err);
  assert_int_equal(dot(c, ".schema spans", &out, &err), CLI_DOT_OK);
  assert_non_null(strstr(out, "span_id INTEGER"));
  free(out), free(err);
  assert_int_equal(dot(c, ".schema nope", &out, &err), CLI_DOT_ERROR);
  assert_non_null(strstr(err, "no such table or view: nope"));
  free(out), free(err);
}

static int has(char **v, const char *s) {
  for (; v && *v; v++)
    if (!strcmp(*v, s)) return 1;
  return 0;
}

static int count(char **v) {
  int n = 0;
  while (v && v[n]) n++;
  return n;
}

static void test_complete(void **state) {
  struct cli *c = *state;
  char **v = cli_complete(c->e, "FROM ev", 5, "ev");
  assert_non_null(v);
  assert_int_equal(count(v), 1);
  assert_string_equal(v[0], "events");
  cli_complete_free(v);

  v = cli_complete(c->e, "FROM events |> WHERE thr", 21, "thr");
  assert_int_equal(count(v), 1);
  assert_string_equal(v[0], "thread_name");   /* a column */
  cli_complete_free(v);

  v = cli_complete(c->e, "FROM spans |> AGG", 14, "AGG");
  assert_int_equal(count(v), 1);
  assert_string_equal(v[0], "AGGREGATE");
  cli_complete_free(v);

  v = cli_complete(c->e, "from spans |> agg", 14, "agg");
  assert_string_equal(v[0], "aggregate");     /* the case the user types */
  cli_complete_free(v);

  v = cli_complete(c->e, "SELECT s", 7, "s");  /* keywords, tables and columns */
  assert_true(has(v, "select") && has(v, "spans") && has(v, "span_id") && has(v, "sum"));
  for (int i = 1; v[i]; i++) assert_true(strcmp(v[i - 1], v[i]) < 0);   /* sorted, unique */
  cli_complete_free(v);

  v = cli_complete(c->e, ".sc", 0, ".sc");
  assert_int_equal(count(v), 1);
  assert_string_equal(v[0], ".schema");
  cli_complete_free(v);

  v = cli_complete(c->e, ".schema ev", 8, "ev");
  assert_int_equal(count(v), 1);
  assert_string_equal(v[0], "events");
  cli_complete_free(v);

  v = cli_complete(c->e, ".mode j", 6, "j");
  assert_true(has(v, "json"));
  cli_complete_free(v);

  v = cli_complete(c->e, "FROM zz", 5, "zz");
  assert_non_null(v);
  assert_int_equal(count(v), 0);
  cli_complete_free(v);
}

/* Every scalar function of ir/funcs.def completes (in the case typed)
 * and is one the binder knows: calling it may fail on its arguments,
 * never with "no such function". */
static void test_function_names(void **state) {
  struct cli *c = *state;
  static const char *const names[] = {
#define FN(name) name,
#include "../../ir/funcs.def"
#undef FN
  };
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char **v = cli_complete(c->e, names[i], 0, names[i]);
    if (!has(v, names[i])) fail_msg("'%s' does not complete", names[i]);
    cli_complete_free(v);
    char upper[32];
    size_t k = 0;
    for (; names[i][k] && k + 1 < sizeof upper; k++)
      upper[k] = (char)(names[i][k] >= 'a' && names[i][k] <= 'z' ? names[i][k] - 32 : names[i][k]);
    upper[k] = 0;
    v = cli_complete(c->e, upper, 0, upper);
    if (!has(v, upper)) fail_msg("'%s' does not complete", upper);
    cli_complete_free(v);
    char q[128];
    snprintf(q, sizeof q, "FROM spans |> SELECT %s(1, 2) AS x", names[i]);
    pj_query *h = NULL;
    if (pj_query_compile(c->e, q, &h) != PJ_OK && strstr(pj_engine_errmsg(c->e), "no such function"))
      fail_msg("%s: %s", q, pj_engine_errmsg(c->e));
    pj_query_free(h);
  }
  pj_query *h = NULL;
  assert_int_not_equal(pj_query_compile(c->e, "FROM spans |> SELECT nosuch(1) AS x", &h), PJ_OK);
  assert_non_null(strstr(pj_engine_errmsg(c->e), "no such function"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stmt_complete),
      cmocka_unit_test_setup_teardown(test_dot_settings, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dot_tables_schema, setup, teardown),
      cmocka_unit_test_setup_teardown(test_complete, setup, teardown),
      cmocka_unit_test_setup_teardown(test_function_names, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
