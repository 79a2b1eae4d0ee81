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
      {"SELECT 1 -- c;", "0"},    {"SELECT 1; /* ; */", "1"},
      {"SELECT 1; -- done\n", "1"}, {"-- only a comment\n", "1"},
      {"/* open", "0"},            {"/* closed */", "1"},
      {"SELECT 1; /* open", "0"},  {"", "1"},
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
  assert_non_null(strstr(err, cli_format_choices()));
  assert_non_null(strstr(err, "box|markdown|line|csv|json|jsonl"));
  assert_int_equal(c->fmt, CLI_CSV);
  free(out), free(err);
  assert_int_equal(dot(c, "  .timing on  ", &out, &err), CLI_DOT_OK);
  assert_int_equal(c->timing, 1);
  free(out), free(err);
  assert_int_equal(dot(c, ".timing off", &out, &err), CLI_DOT_OK);
  assert_int_equal(c->timing, 0);
  free(out), free(err);
  assert_int_equal(dot(c, ".explain llvm-raw", &out, &err), CLI_DOT_OK);
  assert_string_equal(c->dump, "llvm-raw");
  free(out), free(err);
  assert_int_equal(dot(c, ".explain asm", &out, &err), CLI_DOT_OK);
  assert_string_equal(c->dump, "asm");
  free(out), free(err);
  assert_int_equal(dot(c, ".explain", &out, &err), CLI_DOT_OK);
  assert_string_equal(out, "asm\n");
  free(out), free(err);
  assert_int_equal(dot(c, ".explain off", &out, &err), CLI_DOT_OK);
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
  assert_non_null(strstr(out, ".schema [PATTERN]"));
  free(out), free(err);
}

static void test_dot_tables_schema(void **state) {
  struct cli *c = *state;
  char *out, *err;
  assert_int_equal(dot(c, ".tables", &out, &err), CLI_DOT_OK);
  assert_string_equal(out, "events\nspans\n");   /* SQLite and columnar tables */
  free(out), free(err);
  assert_int_equal(dot(c, ".schema events", &out, &err), CLI_DOT_OK);
  /* a SQLite table: its CREATE text, as sqlite3 shows it */
  assert_string_equal(out, "CREATE TABLE events(id INTEGER, ts INTEGER, thread_name TEXT);\n");
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
  char **v = cli_complete(c->e, "FROM ev", 5, "ev", NULL);
  assert_non_null(v);
  assert_int_equal(count(v), 1);
  assert_string_equal(v[0], "events");
  cli_complete_free(v);

  v = cli_complete(c->e, "FROM events |> WHERE thr", 21, "thr", NULL);
  assert_int_equal(count(v), 1);
  assert_string_equal(v[0], "thread_name");   /* a column */
  cli_complete_free(v);

  v = cli_complete(c->e, "FROM spans |> AGG", 14, "AGG", NULL);
  assert_int_equal(count(v), 1);
  assert_string_equal(v[0], "AGGREGATE");
  cli_complete_free(v);

  v = cli_complete(c->e, "from spans |> agg", 14, "agg", NULL);
  assert_string_equal(v[0], "aggregate");     /* the case the user types */
  cli_complete_free(v);

  v = cli_complete(c->e, "SELECT s", 7, "s", NULL);  /* keywords, tables and columns */
  assert_true(has(v, "select") && has(v, "spans") && has(v, "span_id") && has(v, "sum"));
  for (int i = 1; v[i]; i++) assert_true(strcmp(v[i - 1], v[i]) < 0);   /* sorted, unique */
  cli_complete_free(v);

  /* subqueries in expressions: SELECT after IN (, EXISTS */
  v = cli_complete(c->e, "FROM spans |> WHERE span_id IN (SEL", 31, "SEL", NULL);
  assert_true(has(v, "SELECT"));
  cli_complete_free(v);
  v = cli_complete(c->e, "FROM spans |> WHERE NOT EXI", 24, "EXI", NULL);
  assert_int_equal(count(v), 1);
  assert_string_equal(v[0], "EXISTS");
  cli_complete_free(v);

  v = cli_complete(c->e, ".sc", 0, ".sc", NULL);
  assert_int_equal(count(v), 1);
  assert_string_equal(v[0], ".schema");
  cli_complete_free(v);

  v = cli_complete(c->e, ".schema ev", 8, "ev", NULL);
  assert_int_equal(count(v), 1);
  assert_string_equal(v[0], "events");
  cli_complete_free(v);

  v = cli_complete(c->e, ".mode j", 6, "j", NULL);
  assert_true(has(v, "json"));
  cli_complete_free(v);

  v = cli_complete(c->e, "FROM zz", 5, "zz", NULL);
  assert_non_null(v);
  assert_int_equal(count(v), 0);
  cli_complete_free(v);

  /* §9.5's graph sources, from ir/sources.def: the words and the algorithms */
  v = cli_complete(c->e, "GRA", 0, "GRA", NULL);
  assert_true(has(v, "GRAPH"));
  cli_complete_free(v);
  v = cli_complete(c->e, "GRAPH DOM", 6, "DOM", NULL);
  assert_true(has(v, "DOMINATOR"));
  cli_complete_free(v);
  v = cli_complete(c->e, "GRAPH BFS TREE NODES spans ED", 27, "ED", NULL);
  assert_true(has(v, "EDGES"));
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
    char **v = cli_complete(c->e, names[i], 0, names[i], NULL);
    if (!has(v, names[i])) fail_msg("'%s' does not complete", names[i]);
    cli_complete_free(v);
    char upper[32];
    size_t k = 0;
    for (; names[i][k] && k + 1 < sizeof upper; k++)
      upper[k] = (char)(names[i][k] >= 'a' && names[i][k] <= 'z' ? names[i][k] - 32 : names[i][k]);
    upper[k] = 0;
    v = cli_complete(c->e, upper, 0, upper, NULL);
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

/* ---- formats ---- */

typedef struct capture {
  cli_format fmt;
  cli_style style;
  char *text;
  size_t len;
  FILE *f;
} capture;

static int capture_cb(void *ctx, const pj_result *r, const char *t, size_t n, size_t off) {
  capture *cp = ctx;
  cli_print_result(cp->f, r, cp->fmt, &cp->style, NULL);
  return 0;
}

/* What a format prints for the script's results (each result set in turn). */
static char *printed(struct cli *c, cli_format fmt, const cli_style *st, const char *script) {
  capture cp = {.fmt = fmt};
  if (st) cp.style = *st;
  cp.f = open_memstream(&cp.text, &cp.len);
  assert_int_equal(pj_engine_exec(c->e, script, capture_cb, &cp), PJ_OK);
  fclose(cp.f);
  return cp.text;
}

static void expect_format(struct cli *c, cli_format fmt, const cli_style *st, const char *script,
                          const char *want) {
  char *got = printed(c, fmt, st, script);
  if (strcmp(got, want))
    fail_msg("%s: got\n%s\nwant\n%s", cli_format_names[fmt], got, want);
  free(got);
}

static const char two_rows[] =
    "SELECT 1 AS n, 'a|b' AS s, NULL AS z, 2.5 AS d UNION ALL SELECT 22, 'é', 3, 1e300";

static void test_formats(void **state) {
  struct cli *c = *state;
  for (int i = 0; i < CLI_FORMAT_COUNT; i++) assert_int_equal(cli_format_find(cli_format_names[i]), i);
  assert_int_equal(cli_format_find("xml"), -1);
  assert_int_equal(cli_format_find("column"), CLI_TABLE);
  assert_null(cli_format_names[CLI_FORMAT_COUNT]);
  expect_format(c, CLI_TABLE, NULL, two_rows,
                " n  s       z         d\n"
                "--  ---  ----  --------\n"
                " 1  a|b  NULL       2.5\n"
                "22  é       3  1.0e+300\n");
  expect_format(c, CLI_BOX, NULL, two_rows,
                "┌────┬─────┬──────┬──────────┐\n"
                "│  n │ s   │    z │        d │\n"
                "├────┼─────┼──────┼──────────┤\n"
                "│  1 │ a|b │ NULL │      2.5 │\n"
                "│ 22 │ é   │    3 │ 1.0e+300 │\n"
                "└────┴─────┴──────┴──────────┘\n");
  expect_format(c, CLI_MARKDOWN, NULL, two_rows,
                "|  n | s    |    z |        d |\n"
                "|---:|------|-----:|---------:|\n"
                "|  1 | a\\|b | NULL |      2.5 |\n"
                "| 22 | é    |    3 | 1.0e+300 |\n");
  expect_format(c, CLI_LINE, NULL, two_rows,
                "n = 1\ns = a|b\nz = NULL\nd = 2.5\n\nn = 22\ns = é\nz = 3\nd = 1.0e+300\n");
  expect_format(c, CLI_CSV, NULL, two_rows, "n,s,z,d\n1,a|b,,2.5\n22,é,3,1.0e+300\n");
  expect_format(c, CLI_LIST, NULL, two_rows, "n|s|z|d\n1|a|b||2.5\n22|é|3|1.0e+300\n");
  expect_format(c, CLI_TABS, NULL, two_rows, "n\ts\tz\td\n1\ta|b\t\t2.5\n22\té\t3\t1.0e+300\n");
  /* json: one document per result set; jsonl: one object per line */
  expect_format(c, CLI_JSON, NULL, "SELECT 1 AS a; SELECT 'x' AS b",
                "[\n  {\"a\": 1}\n]\n[\n  {\"b\": \"x\"}\n]\n");
  expect_format(c, CLI_JSONL, NULL, two_rows,
                "{\"n\": 1, \"s\": \"a|b\", \"z\": null, \"d\": 2.5}\n"
                "{\"n\": 22, \"s\": \"é\", \"z\": 3, \"d\": 1e+300}\n");
  expect_format(c, CLI_JSON, NULL, "SELECT 1 AS a WHERE 0", "[]\n");
  expect_format(c, CLI_JSONL, NULL, "SELECT 1 AS a WHERE 0", "");
  assert_int_equal(cli_format_separated(CLI_JSONL), 0);
  assert_int_equal(cli_format_separated(CLI_JSON), 1);

  /* .headers off: no header in table, box, csv, list, tabs; markdown
   * keeps its (a table needs one) */
  cli_style off = {.headers_off = 1};
  expect_format(c, CLI_TABLE, &off, "SELECT 1 AS a, 'x' AS b", "1  x\n");
  expect_format(c, CLI_CSV, &off, "SELECT 1 AS a, 'x' AS b", "1,x\n");
  expect_format(c, CLI_LIST, &off, "SELECT 1 AS a, 'x' AS b", "1|x\n");
  expect_format(c, CLI_BOX, &off, "SELECT 1 AS a", "┌───┐\n│ 1 │\n└───┘\n");
  expect_format(c, CLI_MARKDOWN, &off, "SELECT 1 AS a", "| a |\n|--:|\n| 1 |\n");

  /* .width: a set width cuts with "…"; negative aligns right; 0 is auto */
  int w[] = {4, -6, 0};
  cli_style widths = {.nwidths = 3, .widths = w};
  expect_format(c, CLI_TABLE, &widths, "SELECT 'abcdefgh' AS s, 1 AS n, 'xy' AS t",
                "s          n  t\n"
                "----  ------  --\n"
                "abc…       1  xy\n");
  expect_format(c, CLI_BOX, &widths, "SELECT 'abcdefgh' AS s, 12345678 AS n",
                "┌──────┬────────┐\n"
                "│ s    │      n │\n"
                "├──────┼────────┤\n"
                "│ abc… │ 12345… │\n"
                "└──────┴────────┘\n");
}

/* ---- .help and the command table ---- */

static void test_help_table(void **state) {
  struct cli *c = *state;
  char *out, *err;
  assert_int_equal(dot(c, ".help", &out, &err), CLI_DOT_OK);
  for (int i = 0; i < cli_ndot_cmds; i++) {
    char head[64];
    snprintf(head, sizeof head, "\n%s ", cli_dot_cmds[i].name);
    if (i == 0) snprintf(head, sizeof head, "%s ", cli_dot_cmds[i].name);
    if (!strstr(out, head)) fail_msg(".help lacks %s:\n%s", cli_dot_cmds[i].name, out);
    assert_true(strlen(cli_dot_help(&cli_dot_cmds[i])) > 10);
    if (i) assert_true(strcmp(cli_dot_cmds[i - 1].name, cli_dot_cmds[i].name) < 0);
  }
  /* every --dump kind, and every mode */
  assert_non_null(strstr(out, "plan|llvm|llvm-raw|asm"));
  assert_non_null(strstr(out, cli_format_choices()));
  for (const char *const *w = (const char *const[]){".read", ".output", ".once", ".headers",
                                                   ".width", ".param", ".open", ".timer",
                                                   ".tables", ".schema", ".explain", ".dump",
                                                   NULL};
       *w; w++)
    if (!strstr(out, *w)) fail_msg(".help lacks %s", *w);
  free(out), free(err);
  assert_int_equal(dot(c, ".help mode", &out, &err), CLI_DOT_OK);
  assert_non_null(strstr(out, ".mode MODE"));
  assert_null(strstr(out, ".tables"));
  free(out), free(err);
  /* unique prefixes, as sqlite3 takes them */
  assert_int_equal(dot(c, ".head off", &out, &err), CLI_DOT_OK);
  assert_int_equal(c->style.headers_off, 1);
  free(out), free(err);
  assert_int_equal(dot(c, ".he on", &out, &err), CLI_DOT_ERROR);
  assert_non_null(strstr(err, ".he is ambiguous: .headers .help"));
  free(out), free(err);
  /* .dump is sqlite3's: SQL text of the database */
  assert_int_equal(dot(c, ".dump events", &out, &err), CLI_DOT_OK);
  assert_string_equal(out, "PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n"
                           "CREATE TABLE events(id INTEGER, ts INTEGER, thread_name TEXT);\n"
                           "COMMIT;\n");
  free(out), free(err);
}

/* ---- .param ---- */

static void test_params(void **state) {
  struct cli *c = *state;
  char *out, *err;
  const char *sets[] = {".param set $i 42", ".param set :r 2.5", ".param set t 'a b'",
                        ".param set n NULL", ".param set w hello world", ".param set e 6*7"};
  for (size_t k = 0; k < sizeof sets / sizeof *sets; k++) {
    if (dot(c, sets[k], &out, &err) != CLI_DOT_OK) fail_msg("%s: %s", sets[k], err);
    free(out), free(err);
  }
  assert_int_equal(dot(c, ".param list", &out, &err), CLI_DOT_OK);
  assert_string_equal(out, "$i 42\n$r 2.5\n$t 'a b'\n$n NULL\n$w 'hello world'\n$e 42\n");
  free(out), free(err);
  /* SQL sees them with any prefix, typed */
  expect_format(c, CLI_CSV, NULL,
                "SELECT typeof($i), typeof(:r), typeof(@t), typeof($n), $w, $e + 0 AS e",
                "typeof($i),typeof(:r),typeof(@t),typeof($n),$w,e\n"
                "integer,real,text,null,hello world,42\n");
  /* and so do pipelines, and pipelines inside SQL */
  expect_format(c, CLI_CSV, NULL,
                "FROM (SELECT 1 AS v) |> EXTEND $i + 1 AS x, $r * 2 AS y, :t AS t",
                "v,x,y,t\n1,43,5.0,a b\n");
  expect_format(c, CLI_CSV, NULL, "SELECT x FROM (FROM (SELECT 1 AS v) |> EXTEND $i AS x)",
                "x\n42\n");
  assert_int_equal(dot(c, ".param unset i", &out, &err), CLI_DOT_OK);
  free(out), free(err);
  assert_int_equal(dot(c, ".param unset i", &out, &err), CLI_DOT_ERROR);
  free(out), free(err);
  assert_int_not_equal(pj_engine_exec(c->e, "FROM (SELECT 1 AS v) |> EXTEND $i AS x", NULL, NULL),
                       PJ_OK);
  assert_non_null(strstr(pj_engine_errmsg(c->e), "parameter $i is not bound"));
  /* names as the lexer takes them (errors on standard error) */
  assert_int_equal(dot(c, ".param set a-b 5", &out, &err), CLI_DOT_ERROR);
  assert_non_null(strstr(pj_engine_errmsg(c->e), "expected a name"));
  free(out), free(err);
  assert_int_equal(dot(c, ".param set b x'00'", &out, &err), CLI_DOT_ERROR);   /* a blob */
  free(out), free(err);
  assert_int_equal(dot(c, ".param bogus", &out, &err), CLI_DOT_ERROR);
  assert_non_null(strstr(err, "usage: .param set NAME VALUE"));
  free(out), free(err);
  assert_int_equal(dot(c, ".param clear", &out, &err), CLI_DOT_OK);
  free(out), free(err);
  assert_int_equal(dot(c, ".param", &out, &err), CLI_DOT_OK);
  assert_string_equal(out, "");
  free(out), free(err);
  expect_format(c, CLI_CSV, NULL, "SELECT $w IS NULL AS gone", "gone\n1\n");
}

/* ---- context-aware completion ---- */

/* The candidates for the last word of text (after its last blank, '.'
 * included at a line start). */
static char **comp(struct cli *c, const char *text, int *files) {
  size_t n = strlen(text), start = n;
  while (start > 0 && !strchr(" \t\n(,", text[start - 1])) start--;
  return cli_complete(c->e, text, start, text + start, files);
}

/* The candidates joined by ' '. */
static void expect_comp(struct cli *c, const char *text, const char *want) {
  char **v = comp(c, text, NULL);
  char got[2048] = "";
  for (char **p = v; p && *p; p++) {
    if (p != v) strcat(got, " ");
    strcat(got, *p);
  }
  cli_complete_free(v);
  if (strcmp(got, want)) fail_msg("completing '%s': got '%s', want '%s'", text, got, want);
}

static void test_complete_context(void **state) {
  struct cli *c = *state;
  /* the stage's second word after INTERVAL / TREE / ORDER, nothing else */
  expect_comp(c, "FROM spans |> INTERVAL FL", "FLATTEN");
  expect_comp(c, "FROM spans |> interval fl", "flatten");
  expect_comp(c, "FROM spans |> INTERVAL ", "DROP FILL FIND FLATTEN JOIN KEEP MERGE QUANTIZE SET SPLIT SUBTRACT");
  expect_comp(c, "FROM spans |> INTERVAL FILL ", "GAPS");
  expect_comp(c, "FROM spans |> TREE ", "ABSORB ACCUMULATE CONTRACT DROP KEEP MERGE PRUNE REPARENT");
  expect_comp(c, "FROM spans |> ORDER ", "BY");
  expect_comp(c, "FROM spans |> LEFT ", "INTERVAL JOIN");   /* LEFT INTERVAL JOIN, LEFT JOIN */
  expect_comp(c, "FROM spans |> LEFT INTERVAL ", "FIND JOIN");
  /* after |>: the stages' first words, from ir/stages.def */
  char **v = comp(c, "FROM spans |> ", NULL);
  static const char *const first[] = {
#define STAGE(name, str, w1, w2, parse, bind, words) w1,
#include "../../ir/stages.def"
#undef STAGE
  };
  for (size_t i = 0; i < sizeof first / sizeof *first; i++)
    if (!has(v, first[i])) fail_msg("'|> ' does not offer %s", first[i]);
  assert_false(has(v, "span_id"));   /* no columns, no functions */
  assert_false(has(v, "SUM"));
  cli_complete_free(v);
  /* tables after FROM and JOIN */
  expect_comp(c, "FROM ", "GRAPH INTERVAL INTERVALS events spans");
  expect_comp(c, "FROM events |> JOIN sp", "spans");
  expect_comp(c, "SELECT * FROM ev", "events");
  /* columns of the tables in scope only, over lines and with AS names */
  expect_comp(c, "FROM events |> WHERE t", "then thread_name total trim ts typeof");
  expect_comp(c, "FROM events |> ORDER BY ts D", "DENSE_RANK DESC DISTINCT");   /* the stage's own words */
  expect_comp(c, "FROM events |> AGGREGATE COUNT(*) AS n G", "GLOB GROUP GROUP_CONCAT");
  expect_comp(c, "FROM events\n|> WHERE thr", "thread_name");
  expect_comp(c, "FROM spans |> EXTEND dur * 2 AS doubled |> WHERE do", "doubled");
  expect_comp(c, "FROM events |> WHERE id = 1;\nFROM spans |> WHERE t", "then total trim typeof");
  v = comp(c, "FROM events |> WHERE ", NULL);
  assert_true(has(v, "thread_name") && has(v, "ts") && !has(v, "span_id") && !has(v, "spans"));
  cli_complete_free(v);
  /* no table in scope: every table's columns and the tables */
  v = comp(c, "SELECT s", NULL);
  assert_true(has(v, "span_id") && has(v, "spans") && has(v, "select"));
  cli_complete_free(v);
  /* dot-commands and their arguments, from dot.c's table */
  expect_comp(c, ".he", ".headers .help");
  v = cli_complete(c->e, "", 0, ".ti", NULL);   /* the line editor's view: the text before is empty */
  assert_true(has(v, ".timer") && has(v, ".timing") && count(v) == 2);
  cli_complete_free(v);
  expect_comp(c, ".headers ", "off on");
  expect_comp(c, ".explain llvm", "llvm llvm-raw");
  expect_comp(c, ".param ", "clear list set unset");
  expect_comp(c, ".tables s", "spans");
  expect_comp(c, ".help ti", "timer timing");
  v = comp(c, ".mode ", NULL);
  for (int i = 0; i < CLI_FORMAT_COUNT; i++) assert_true(has(v, cli_format_names[i]));
  assert_int_equal(count(v), CLI_FORMAT_COUNT);
  cli_complete_free(v);
  int files = 0;
  v = comp(c, ".read te", &files);
  assert_int_equal(files, 1);   /* the line editor completes file names */
  cli_complete_free(v);
  v = comp(c, "FROM ev", &files);
  assert_int_equal(files, 0);
  cli_complete_free(v);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stmt_complete),
      cmocka_unit_test_setup_teardown(test_dot_settings, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dot_tables_schema, setup, teardown),
      cmocka_unit_test_setup_teardown(test_complete, setup, teardown),
      cmocka_unit_test_setup_teardown(test_function_names, setup, teardown),
      cmocka_unit_test_setup_teardown(test_formats, setup, teardown),
      cmocka_unit_test_setup_teardown(test_help_table, setup, teardown),
      cmocka_unit_test_setup_teardown(test_params, setup, teardown),
      cmocka_unit_test_setup_teardown(test_complete_context, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
