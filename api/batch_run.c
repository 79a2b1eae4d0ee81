/*
 * batch_run.c — one trace's share of batch mode: pj_batch_run runs a
 * script on an engine and writes the rows of every statement that returns
 * rows into a part file (layout: batch.h), which pj_batch_add
 * (batch_merge.c) later copies into the output with the trace's name.
 *
 * Naming: a statement whose leading comments hold a line `-- name: NAME`
 * gives its table that name; any other is result_K, K counting the
 * statements that return rows from 1 in script order. Two statements of
 * one name, a name that is not a plain identifier, and the output's own
 * batch_errors are errors naming the statement's line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "batch.h"
#include "engine.h"

typedef struct part {
  pj_engine *e;
  sqlite3 *db;
  const char *script;
  const char *path;
  int nstmts;
  char (*names)[64];   /* the tables written so far, for duplicates */
  int cap;
  char err[512];       /* set: stop, and fail with it */
} part;

static int part_fail(part *p, const char *what) {
  snprintf(p->err, sizeof p->err, "batch: cannot write the results to %s: %s%s%s", p->path, what,
           p->db ? ": " : "", p->db ? sqlite3_errmsg(p->db) : "");
  return 1;
}

static int is_ident(const char *s, size_t n) {
  if (!n || n >= 64 || !(((s[0] | 0x20) >= 'a' && (s[0] | 0x20) <= 'z') || s[0] == '_')) return 0;
  for (size_t i = 1; i < n; i++)
    if (!(((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
          s[i] == '_'))
      return 0;
  return 1;
}

/* The NAME of a `-- name: NAME` line among the comments the statement
 * starts with: 1 with it in out, 0 when there is none, -1 when the line
 * is there but NAME is not an identifier (out then holds the text). */
static int stmt_name(const char *s, size_t len, char out[64]) {
  const char *p = s, *end = s + len;
  for (;;) {
    while (p < end && (*p == ' ' || (*p >= '\t' && *p <= '\r'))) p++;
    if (end - p >= 2 && p[0] == '/' && p[1] == '*') {
      const char *q = p + 2;
      while (end - q >= 2 && !(q[0] == '*' && q[1] == '/')) q++;
      p = end - q >= 2 ? q + 2 : end;
      continue;
    }
    if (!(end - p >= 2 && p[0] == '-' && p[1] == '-')) return 0;
    const char *line = p + 2, *eol = memchr(line, '\n', (size_t)(end - line));
    if (!eol) eol = end;
    p = eol;
    while (line < eol && (*line == ' ' || *line == '\t')) line++;
    if (eol - line < 5 || strncasecmp(line, "name:", 5)) continue;
    line += 5;
    while (line < eol && (*line == ' ' || *line == '\t')) line++;
    const char *stop = eol;
    while (stop > line && (stop[-1] == ' ' || stop[-1] == '\t' || stop[-1] == '\r')) stop--;
    size_t n = (size_t)(stop - line) < 63 ? (size_t)(stop - line) : 63;
    memcpy(out, line, n);
    out[n] = 0;
    return is_ident(line, (size_t)(stop - line)) ? 1 : -1;
  }
}

/* The declared type of a result column in a part (and in the output). */
static const char *decl_type(pj_type t) {
  return t == PJ_TYPE_DOUBLE ? "REAL" : t == PJ_TYPE_STRING ? "TEXT" : "INTEGER";
}

/* CREATE TABLE s<ord>(…) with the result's columns, names made unique
 * the way SQLite's CREATE TABLE … AS does (a second `a` is `a:1`); the
 * trace column batch mode adds counts as taken. */
static char *create_sql(const pj_result *r, int ord) {
  int n = pj_result_column_count(r);
  sqlite3_str *s = sqlite3_str_new(NULL);
  char **used = calloc((size_t)n + 1, sizeof *used);
  if (!used) return NULL;
  used[0] = sqlite3_mprintf("%s", PJ_BATCH_TRACE_COL);
  sqlite3_str_appendf(s, "CREATE TABLE s%d(", ord);
  for (int c = 0; c < n; c++) {
    const char *base = pj_result_column_name(r, c);
    char *name = sqlite3_mprintf("%s", base);
    for (int k = 1;; k++) {
      int clash = 0;
      for (int u = 0; u <= c && !clash; u++) clash = used[u] && name && !sqlite3_stricmp(used[u], name);
      if (!clash) break;
      sqlite3_free(name);
      name = sqlite3_mprintf("%s:%d", base, k);
    }
    used[c + 1] = name;
    sqlite3_str_appendf(s, "%s\"%w\" %s", c ? ", " : "", name ? name : "",
                        decl_type(pj_result_column_type(r, c)));
  }
  sqlite3_str_appendall(s, ")");
  for (int c = 0; c <= n; c++) sqlite3_free(used[c]);
  free(used);
  return sqlite3_str_finish(s);
}

static int bind_value(sqlite3_stmt *ins, int at, const pj_result *r, const pj_column *col,
                      int64_t row) {
  if (col->validity && !(col->validity[row >> 6] >> (row & 63) & 1)) return sqlite3_bind_null(ins, at);
  switch (col->type) {
  case PJ_TYPE_ID: return sqlite3_bind_int64(ins, at, row);
  case PJ_TYPE_UINT32: return sqlite3_bind_int64(ins, at, ((const uint32_t *)col->values)[row]);
  case PJ_TYPE_INT32: return sqlite3_bind_int64(ins, at, ((const int32_t *)col->values)[row]);
  case PJ_TYPE_INT64:
  case PJ_TYPE_BOOL: return sqlite3_bind_int64(ins, at, ((const int64_t *)col->values)[row]);
  case PJ_TYPE_DOUBLE: return sqlite3_bind_double(ins, at, ((const double *)col->values)[row]);
  case PJ_TYPE_STRING: {
    size_t len = 0;
    const char *t = pj_result_string(r, ((const uint32_t *)col->values)[row], &len);
    return sqlite3_bind_text64(ins, at, t ? t : "", t ? len : 0, SQLITE_STATIC, SQLITE_UTF8);
  }
  }
  return SQLITE_MISUSE;
}

static int write_rows(part *p, const pj_result *r, int ord) {
  int n = pj_result_column_count(r);
  sqlite3_str *s = sqlite3_str_new(NULL);
  sqlite3_str_appendf(s, "INSERT INTO s%d VALUES (", ord);
  for (int c = 0; c < n; c++) sqlite3_str_appendall(s, c ? ",?" : "?");
  sqlite3_str_appendall(s, ")");
  char *sql = sqlite3_str_finish(s);
  pj_column *cols = calloc((size_t)n + 1, sizeof *cols);
  sqlite3_stmt *ins = NULL;
  int rc = !sql || !cols ? part_fail(p, "out of memory")
           : sqlite3_prepare_v2(p->db, sql, -1, &ins, NULL) != SQLITE_OK ? part_fail(p, "insert")
                                                                          : 0;
  for (int c = 0; c < n && !rc; c++) pj_result_column(r, c, &cols[c]);
  int64_t rows = pj_result_row_count(r);
  for (int64_t row = 0; row < rows && !rc; row++) {
    for (int c = 0; c < n && !rc; c++)
      if (bind_value(ins, c + 1, r, &cols[c], row) != SQLITE_OK) rc = part_fail(p, "a value");
    if (!rc && sqlite3_step(ins) != SQLITE_DONE) rc = part_fail(p, "a row");
    sqlite3_reset(ins);
  }
  sqlite3_finalize(ins);
  sqlite3_free(sql);
  free(cols);
  return rc;
}

/* pj_result_cb: the statement's table, then its rows. */
static int on_result(void *ctx, const pj_result *r, const char *stmt, size_t len, size_t off) {
  part *p = ctx;
  int ord = ++p->nstmts, line = 0, col = 0;
  fe_line_col(p->script, (int)off, &line, &col);
  char name[64];
  int named = stmt_name(stmt, len, name);
  if (named < 0) {
    snprintf(p->err, sizeof p->err,
             "batch: the statement at line %d is named '%s', which is not a plain identifier"
             " (letters, digits and _; at most 63)",
             line, name);
    return 1;
  }
  if (!named) snprintf(name, sizeof name, "result_%d", ord);
  if (!sqlite3_stricmp(name, PJ_BATCH_ERRORS) || !sqlite3_strnicmp(name, "sqlite_", 7)) {
    snprintf(p->err, sizeof p->err,
             "batch: the statement at line %d cannot be named '%s': the name is taken", line, name);
    return 1;
  }
  for (int i = 0; i < ord - 1; i++)
    if (!sqlite3_stricmp(p->names[i], name)) {
      snprintf(p->err, sizeof p->err,
               "batch: the statement at line %d is named '%s', as statement %d returning rows"
               " before it is: name it with a '-- name: NAME' comment",
               line, name, i + 1);
      return 1;
    }
  if (ord > p->cap) {
    int cap = p->cap ? 2 * p->cap : 16;
    void *v = realloc(p->names, (size_t)cap * sizeof *p->names);
    if (!v) return part_fail(p, "out of memory");
    p->names = v;
    p->cap = cap;
  }
  memcpy(p->names[ord - 1], name, sizeof name);
  char *sql = create_sql(r, ord);
  char *meta = sqlite3_mprintf("INSERT INTO " PJ_BATCH_STMTS " VALUES (%d, %Q, %d)", ord, name,
                               line);
  int rc = !sql || !meta ? part_fail(p, "out of memory")
           : sqlite3_exec(p->db, sql, NULL, NULL, NULL) != SQLITE_OK ||
                   sqlite3_exec(p->db, meta, NULL, NULL, NULL) != SQLITE_OK
               ? part_fail(p, "a table")
               : write_rows(p, r, ord);
  sqlite3_free(sql);
  sqlite3_free(meta);
  return rc;
}

pj_status pj_batch_run(pj_engine *e, const char *script, size_t len, const char *part_path) {
  part p = {.e = e, .script = script, .path = part_path};
  unlink(part_path);   /* a part is always new */
  if (sqlite3_open_v2(part_path, &p.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
          SQLITE_OK ||
      sqlite3_exec(p.db,
                   "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;"
                   "CREATE TABLE " PJ_BATCH_STMTS "(ord INTEGER, name TEXT, line INTEGER)",
                   NULL, NULL, NULL) != SQLITE_OK) {
    part_fail(&p, "cannot create it");
    sqlite3_close(p.db);
    unlink(part_path);
    return pj__failf(e, "%s", p.err);
  }
  pj_status s = pj_engine_exec_len(e, script, len, on_result, &p);
  if (s == PJ_OK && p.err[0]) s = pj__failf(e, "%s", p.err);
  if (s == PJ_OK && sqlite3_exec(p.db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    s = pj__failf(e, "%s", (part_fail(&p, "commit"), p.err));
  if (sqlite3_close(p.db) != SQLITE_OK && s == PJ_OK)
    s = pj__failf(e, "batch: cannot close %s", part_path);
  if (s != PJ_OK) unlink(part_path);
  free(p.names);
  return s;
}
