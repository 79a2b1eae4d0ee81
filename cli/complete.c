/*
 * complete.c — tab completion candidates for the shell: keywords of pipe
 * queries, PerfettoSQL and SQLite SQL, dot-commands, and the names of the
 * tables, views and columns the engine's SQLite connection knows (the
 * columnar tables are temp virtual tables there). Independent of libedit
 * so tests can call it.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sqlite3.h>

#include "shell.h"

/* Keywords that no list below names: SQL's, PerfettoSQL's, FROM and
 * INTERVAL INTERSECTION OF, CASE and BETWEEN. */
static const char *const keywords[] = {
    "BETWEEN", "CASE", "CREATE", "DELETE", "DISTINCT", "ELSE", "END", "FROM", "INSERT",
    "INTERSECTION", "INTERVAL", "INTO", "OF", "ON", "PERFETTO", "PRAGMA", "REPLACE", "SELECT",
    "TABLE", "THEN", "UPDATE", "VALUES", "VIEW", "WHEN", "WHERE", "WITH",
};

/* The words of the pipe language's lists (data only: ir/stages.def,
 * aggs.def, windows.def and exprs.def are X-macro lists, no internal
 * header): each stage's name and syntax words (a window's among them),
 * each aggregate's and window function's name, each operator
 * spelled in words (AND, IS NOT, IS NULL …). */
static const char *const list_words[] = {
#define STAGE(name, str, w1, w2, parse, bind, words) str, words,
#include "../ir/stages.def"
#undef STAGE
#define AGG(name, sql, printed, out, in_agg, in_tree, in_flat, lo, hi) sql,
#include "../ir/aggs.def"
#undef AGG
#define WIN(name, sql, printed, out, arg, lo, hi) sql,
#include "../ir/windows.def"
#undef WIN
#define EX(name, str, arity, form, prec, nulls) str,
#include "../ir/exprs.def"
#undef EX
};

/* Scalar function names (ir/funcs.def), offered in the case of the
 * prefix. */
static const char *const function_names[] = {
#define FN(name) name,
#include "../ir/funcs.def"
#undef FN
};

static const char *const dot_commands[] = {".dump", ".exit", ".help", ".mode", ".quit",
                                           ".schema", ".tables", ".timing"};

typedef struct list {
  char **v;
  size_t n, cap;
  int failed;
} list;

static void add(list *l, const char *s, const char *prefix) {
  if (l->failed || strncasecmp(s, prefix, strlen(prefix))) return;
  if (l->n + 2 > l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 32;
    char **v = realloc(l->v, cap * sizeof *v);
    if (!v) {
      l->failed = 1;
      return;
    }
    l->v = v;
    l->cap = cap;
  }
  if (!(l->v[l->n] = strdup(s))) {
    l->failed = 1;
    return;
  }
  l->n++;
}

/* Adds each word of `words` (space-separated) that is a keyword (upper
 * case letters and '_': not an operator sign or a function's own name),
 * in lower case when `lower`. */
static void add_words(list *l, const char *words, const char *prefix, int lower) {
  for (const char *w = words; *w;) {
    while (*w == ' ') w++;
    char kw[32];
    size_t k = 0;
    bool word = true;
    for (; *w && *w != ' '; w++) {
      word &= (*w >= 'A' && *w <= 'Z') || *w == '_';
      if (k + 1 < sizeof kw) kw[k++] = lower ? (char)(*w | 0x20) : *w;
    }
    kw[k] = 0;
    if (word && k > 0) add(l, kw, prefix);
  }
}

/* Adds every string the query's first column returns. */
static void add_query(list *l, sqlite3 *db, const char *sql, const char *prefix) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return;
  while (sqlite3_step(st) == SQLITE_ROW) {
    const char *s = (const char *)sqlite3_column_text(st, 0);
    if (s) add(l, s, prefix);
  }
  sqlite3_finalize(st);
}

static int cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

char **cli_complete(pj_engine *e, const char *line, size_t start, const char *prefix) {
  list l = {0};
  const char *p = line;
  while (*p == ' ' || *p == '\t') p++;
  int first = (size_t)(p - line) == start;   /* completing the line's first word */
  if (*p == '.' && first) {
    for (size_t i = 0; i < sizeof dot_commands / sizeof *dot_commands; i++)
      add(&l, dot_commands[i], prefix);
  } else if (*p == '.') {
    /* Arguments of dot-commands: modes, switches, dump kinds, table names. */
    static const char *const args[] = {"table", "csv", "json", "on", "off", "plan", "llvm"};
    for (size_t i = 0; i < sizeof args / sizeof *args; i++) add(&l, args[i], prefix);
  } else {
    /* Keywords in the case the user started typing (lowercase if the
     * prefix is lowercase). */
    int lower = prefix[0] >= 'a' && prefix[0] <= 'z';
    for (size_t i = 0; i < sizeof keywords / sizeof *keywords; i++) add_words(&l, keywords[i], prefix, lower);
    for (size_t i = 0; i < sizeof list_words / sizeof *list_words; i++)
      add_words(&l, list_words[i], prefix, lower);
    for (size_t i = 0; i < sizeof function_names / sizeof *function_names; i++) {
      char fn[32];
      size_t k = 0;
      for (const char *c = function_names[i]; *c && k + 1 < sizeof fn; c++)
        fn[k++] = lower ? *c : (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
      fn[k] = 0;
      add(&l, fn, prefix);
    }
  }
  sqlite3 *db = e ? pj_engine_sqlite(e) : NULL;
  if (db && (*p != '.' || !first)) {
    static const char tables[] =
        "SELECT name FROM sqlite_temp_schema WHERE type IN ('table','view') UNION "
        "SELECT name FROM sqlite_schema WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%'";
    add_query(&l, db, tables, prefix);
    if (*p != '.') {
      static const char cols[] =
          "SELECT DISTINCT c.name FROM (SELECT name FROM sqlite_temp_schema WHERE type IN "
          "('table','view') UNION SELECT name FROM sqlite_schema WHERE type IN ('table','view') "
          "AND name NOT LIKE 'sqlite_%') t, pragma_table_info(t.name) c";
      add_query(&l, db, cols, prefix);
    }
  }
  if (l.failed) {
    for (size_t i = 0; i < l.n; i++) free(l.v[i]);
    free(l.v);
    return NULL;
  }
  if (!l.v && !(l.v = calloc(1, sizeof *l.v))) return NULL;
  qsort(l.v, l.n, sizeof *l.v, cmp);
  size_t out = 0;
  for (size_t i = 0; i < l.n; i++) {
    if (out && !strcmp(l.v[out - 1], l.v[i])) free(l.v[i]);
    else l.v[out++] = l.v[i];
  }
  l.v[out] = NULL;
  return l.v;
}

void cli_complete_free(char **v) {
  if (!v) return;
  for (char **p = v; *p; p++) free(*p);
  free(v);
}
