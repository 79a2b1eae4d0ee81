/*
 * batch_merge.c — the output of batch mode: pj_batch_open makes the
 * SQLite file, pj_batch_add copies one trace's part file (batch_run.c)
 * into it, each statement's rows into the table of its name with the
 * trace in front, and pj_batch_add_error records a trace that failed in
 * batch_errors(trace, error).
 *
 * A table's columns are those of the first trace added that returned it
 * (callers add traces in the order given, so that is the first trace in
 * that order that did not fail). A later trace must return the same
 * column names; its values follow the rule for SQLite source columns
 * (DECISIONS.md, Types): an integer in a REAL column becomes a double, a
 * double in an INTEGER column must be a whole number in range, and text
 * never mixes with numbers. Anything else fails the trace, naming the
 * column and the row. A trace is added whole or not at all: its rows go
 * in in one transaction, rolled back when any of its tables fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "batch.h"
#include "pipejit.h"

typedef struct otab {
  char name[64];
  int ncols;
  char **cols;    /* the result's columns (not the trace column) */
  char *types;    /* 'I', 'R' or 'T' per column */
  char *first;    /* the trace that made the table, for messages */
} otab;

struct pj_batch {
  sqlite3 *db;
  otab *tabs;
  int ntabs, cap;
  int broken;      /* the output could not be written: every call fails */
  char err[1024];
};

const char *pj_batch_errmsg(const pj_batch *b) { return b ? b->err : "out of memory"; }

static void tab_free(otab *t) {
  for (int c = 0; c < t->ncols; c++) free(t->cols[c]);
  free(t->cols);
  free(t->types);
  free(t->first);
}

/* A failure of the output file itself: sticky. */
static int out_fail(pj_batch *b, const char *what) {
  snprintf(b->err, sizeof b->err, "batch: cannot write the output (%s): %s", what,
           sqlite3_errmsg(b->db));
  b->broken = 1;
  return -1;
}

static int exec(pj_batch *b, const char *sql) {
  return sqlite3_exec(b->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : out_fail(b, sql);
}

pj_status pj_batch_open(const char *out_path, pj_batch **out) {
  pj_batch *b = calloc(1, sizeof *b);
  *out = b;
  if (!b) return PJ_NOMEM;
  /* Replaced, as --export replaces its file: the rows are this run's. */
  char *aside = sqlite3_mprintf("%s-journal", out_path);
  if (aside) unlink(aside);
  sqlite3_free(aside);
  if (unlink(out_path) != 0 && access(out_path, F_OK) == 0) {
    snprintf(b->err, sizeof b->err, "batch: cannot replace %s", out_path);
    return PJ_ERROR;
  }
  if (sqlite3_open_v2(out_path, &b->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
      SQLITE_OK) {
    snprintf(b->err, sizeof b->err, "batch: cannot create %s: %s", out_path,
             b->db ? sqlite3_errmsg(b->db) : "out of memory");
    return PJ_ERROR;
  }
  /* One transaction per trace; a crash of the machine (not of the tool)
   * may lose the file, which a rerun makes again. */
  if (exec(b, "PRAGMA synchronous=OFF") ||
      exec(b, "CREATE TABLE " PJ_BATCH_ERRORS "(" PJ_BATCH_TRACE_COL " TEXT, error TEXT)"))
    return PJ_ERROR;
  return PJ_OK;
}

pj_status pj_batch_add_error(pj_batch *b, const char *trace, const char *message) {
  if (b->broken) return PJ_ERROR;
  sqlite3_stmt *q = NULL;
  if (sqlite3_prepare_v2(b->db, "INSERT INTO " PJ_BATCH_ERRORS " VALUES (?1, ?2)", -1, &q, NULL) !=
          SQLITE_OK ||
      sqlite3_bind_text(q, 1, trace, -1, SQLITE_STATIC) != SQLITE_OK ||
      sqlite3_bind_text(q, 2, message, -1, SQLITE_STATIC) != SQLITE_OK ||
      sqlite3_step(q) != SQLITE_DONE) {
    sqlite3_finalize(q);
    out_fail(b, PJ_BATCH_ERRORS);
    return PJ_ERROR;
  }
  sqlite3_finalize(q);
  return PJ_OK;
}

/* ---- one statement's table ---------------------------------------------- */

typedef struct pcols {   /* a part table's columns */
  int n;
  char **names;
  char *types;
} pcols;

static void pcols_free(pcols *c) {
  for (int i = 0; i < c->n; i++) free(c->names[i]);
  free(c->names);
  free(c->types);
}

static char type_letter(const char *decl) {
  return !decl ? 'I' : !sqlite3_stricmp(decl, "REAL") ? 'R' : !sqlite3_stricmp(decl, "TEXT") ? 'T' : 'I';
}

static const char *type_decl(char t) { return t == 'R' ? "REAL" : t == 'T' ? "TEXT" : "INTEGER"; }
static const char *type_word(char t) { return t == 'R' ? "double" : t == 'T' ? "string" : "integer"; }

/* The columns of p.s<ord>: 0, or 1 (trace error in b->err). */
static int read_cols(pj_batch *b, int ord, pcols *out) {
  char *sql = sqlite3_mprintf("PRAGMA p.table_info(s%d)", ord);
  sqlite3_stmt *q = NULL;
  int rc = 0, cap = 0;
  memset(out, 0, sizeof *out);
  if (!sql || sqlite3_prepare_v2(b->db, sql, -1, &q, NULL) != SQLITE_OK) rc = 1;
  while (!rc && sqlite3_step(q) == SQLITE_ROW) {
    if (out->n == cap) {
      cap = cap ? 2 * cap : 8;
      char **n = realloc(out->names, (size_t)cap * sizeof *n);
      if (n) out->names = n;
      char *t = realloc(out->types, (size_t)cap);
      if (t) out->types = t;
      if (!n || !t) { rc = 1; break; }
    }
    const char *name = (const char *)sqlite3_column_text(q, 1);
    out->names[out->n] = strdup(name ? name : "");
    out->types[out->n] = type_letter((const char *)sqlite3_column_text(q, 2));
    if (!out->names[out->n++]) rc = 1;
  }
  sqlite3_finalize(q);
  sqlite3_free(sql);
  if (rc || out->n == 0)
    snprintf(b->err, sizeof b->err, "batch: the worker's results are damaged (table s%d)", ord);
  return rc || out->n == 0;
}

static otab *find_tab(pj_batch *b, const char *name) {
  for (int i = 0; i < b->ntabs; i++)
    if (!sqlite3_stricmp(b->tabs[i].name, name)) return &b->tabs[i];
  return NULL;
}

/* A new output table with the columns of the trace's part table. */
static otab *new_tab(pj_batch *b, const char *name, pcols *pc, const char *trace) {
  if (b->ntabs == b->cap) {
    int cap = b->cap ? 2 * b->cap : 8;
    otab *t = realloc(b->tabs, (size_t)cap * sizeof *t);
    if (!t) return NULL;
    b->tabs = t;
    b->cap = cap;
  }
  sqlite3_str *s = sqlite3_str_new(b->db);
  sqlite3_str_appendf(s, "CREATE TABLE main.\"%w\"(" PJ_BATCH_TRACE_COL " TEXT", name);
  for (int c = 0; c < pc->n; c++)
    sqlite3_str_appendf(s, ", \"%w\" %s", pc->names[c], type_decl(pc->types[c]));
  sqlite3_str_appendall(s, ")");
  char *sql = sqlite3_str_finish(s);
  int rc = sql ? exec(b, sql) : -1;
  sqlite3_free(sql);
  if (rc) return NULL;
  otab *t = &b->tabs[b->ntabs++];
  memset(t, 0, sizeof *t);
  snprintf(t->name, sizeof t->name, "%s", name);
  t->ncols = pc->n;
  t->cols = pc->names;
  t->types = pc->types;
  t->first = strdup(trace);
  pc->names = NULL;
  pc->types = NULL;
  pc->n = 0;
  return t;
}

/* The column list of a table, "(a, b, c)", for messages. */
static void list_cols(char *buf, size_t cap, char **names, int n) {
  size_t at = 0;
  at += (size_t)snprintf(buf, cap, "(");
  for (int c = 0; c < n && at < cap; c++)
    at += (size_t)snprintf(buf + at, cap - at, "%s%s", c ? ", " : "", names[c]);
  if (at < cap) snprintf(buf + at, cap - at, ")");
}

/* The first row of column `col` of p.s<ord> holding a double that an
 * integer column cannot take (a fraction, out of range): its 1-based row,
 * and the value, or 0 when none. */
static int64_t bad_integer(pj_batch *b, int ord, const char *col, double *value) {
  char *sql = sqlite3_mprintf(
      "SELECT rowid, \"%w\" FROM p.s%d WHERE typeof(\"%w\") = 'real' AND (\"%w\" >= 9223372036854775808.0"
      " OR \"%w\" < -9223372036854775808.0 OR \"%w\" <> CAST(\"%w\" AS INTEGER))"
      " ORDER BY rowid LIMIT 1",
      col, ord, col, col, col, col, col);
  sqlite3_stmt *q = NULL;
  int64_t row = 0;
  if (sql && sqlite3_prepare_v2(b->db, sql, -1, &q, NULL) == SQLITE_OK &&
      sqlite3_step(q) == SQLITE_ROW) {
    row = sqlite3_column_int64(q, 0);
    *value = sqlite3_column_double(q, 1);
  }
  sqlite3_finalize(q);
  sqlite3_free(sql);
  return row;
}

/* The rows of p.s<ord> (statement `name` at `line`) into its output
 * table: 0, 1 (the trace fails: b->err), -1 (the output fails). */
static int add_stmt(pj_batch *b, const char *trace, int ord, const char *name, int line) {
  pcols pc;
  if (read_cols(b, ord, &pc)) return 1;
  otab *t = find_tab(b, name);
  int rc = 0;
  if (!t) {
    t = new_tab(b, name, &pc, trace);
    if (!t) {
      pcols_free(&pc);
      return b->broken ? -1 : out_fail(b, "out of memory");
    }
  } else {
    int same = pc.n == t->ncols;
    for (int c = 0; c < pc.n && same; c++) same = !strcmp(pc.names[c], t->cols[c]);
    if (!same) {
      char mine[400], theirs[400];
      list_cols(mine, sizeof mine, pc.names, pc.n);
      list_cols(theirs, sizeof theirs, t->cols, t->ncols);
      snprintf(b->err, sizeof b->err,
               "batch: table %s has the columns %s (from %s, the first trace), but the statement"
               " at line %d returns %s here",
               name, theirs, t->first, line, mine);
      rc = 1;
    }
  }
  sqlite3_str *s = sqlite3_str_new(b->db);
  sqlite3_str_appendf(s, "INSERT INTO main.\"%w\" SELECT ?1", name);
  for (int c = 0; c < t->ncols && !rc; c++) {
    char want = t->types[c], got = pc.n ? pc.types[c] : want;
    const char *col = t->cols[c];
    if (want == got) {
      sqlite3_str_appendf(s, ", \"%w\"", col);
    } else if ((want == 'T') != (got == 'T')) {
      snprintf(b->err, sizeof b->err,
               "batch: column '%s' of table %s is %s (from %s, the first trace) but %s here", col,
               name, type_word(want), t->first, type_word(got));
      rc = 1;
    } else if (want == 'R') {   /* integers into a double column */
      sqlite3_str_appendf(s, ", CAST(\"%w\" AS REAL)", col);
    } else {                    /* doubles into an integer column: whole ones */
      double v = 0;
      int64_t row = bad_integer(b, ord, col, &v);
      if (row) {
        snprintf(b->err, sizeof b->err,
                 "batch: column '%s' of table %s is integer (from %s, the first trace), but row"
                 " %lld holds %.17g here",
                 col, name, t->first, (long long)row, v);
        rc = 1;
      }
      sqlite3_str_appendf(s, ", CAST(\"%w\" AS INTEGER)", col);
    }
  }
  sqlite3_str_appendf(s, " FROM p.s%d ORDER BY rowid", ord);
  char *sql = sqlite3_str_finish(s);
  pcols_free(&pc);
  if (rc) {
    sqlite3_free(sql);
    return rc;
  }
  sqlite3_stmt *q = NULL;
  if (!sql || sqlite3_prepare_v2(b->db, sql, -1, &q, NULL) != SQLITE_OK ||
      sqlite3_bind_text(q, 1, trace, -1, SQLITE_STATIC) != SQLITE_OK ||
      sqlite3_step(q) != SQLITE_DONE)
    rc = out_fail(b, name);
  sqlite3_finalize(q);
  sqlite3_free(sql);
  return rc;
}

/* ---- one trace -------------------------------------------------------- */

typedef struct pstmt { int ord, line; char name[64]; } pstmt;

/* The statements of the attached part, in order: their count, or -1 (the
 * part cannot be read: b->err). */
static int read_stmts(pj_batch *b, pstmt **out) {
  sqlite3_stmt *q = NULL;
  int n = 0, cap = 0;
  *out = NULL;
  if (sqlite3_prepare_v2(b->db, "SELECT ord, name, line FROM p." PJ_BATCH_STMTS " ORDER BY ord",
                         -1, &q, NULL) != SQLITE_OK) {
    snprintf(b->err, sizeof b->err, "batch: the worker's results cannot be read: %s",
             sqlite3_errmsg(b->db));
    return -1;
  }
  while (sqlite3_step(q) == SQLITE_ROW) {
    if (n == cap) {
      cap = cap ? 2 * cap : 8;
      pstmt *v = realloc(*out, (size_t)cap * sizeof *v);
      if (!v) {
        n = -1;
        snprintf(b->err, sizeof b->err, "batch: out of memory");
        break;
      }
      *out = v;
    }
    pstmt *p = &(*out)[n++];
    p->ord = sqlite3_column_int(q, 0);
    p->line = sqlite3_column_int(q, 2);
    const char *name = (const char *)sqlite3_column_text(q, 1);
    snprintf(p->name, sizeof p->name, "%s", name ? name : "");
  }
  sqlite3_finalize(q);
  return n;
}

static int attach(pj_batch *b, const char *part_path) {
  sqlite3_stmt *q = NULL;
  int ok = sqlite3_prepare_v2(b->db, "ATTACH ?1 AS p", -1, &q, NULL) == SQLITE_OK &&
           sqlite3_bind_text(q, 1, part_path, -1, SQLITE_STATIC) == SQLITE_OK &&
           sqlite3_step(q) == SQLITE_DONE;
  sqlite3_finalize(q);
  if (!ok)
    snprintf(b->err, sizeof b->err, "batch: the worker's results %s cannot be read: %s",
             part_path, sqlite3_errmsg(b->db));
  return ok ? 0 : 1;
}

int pj_batch_add(pj_batch *b, const char *trace, const char *part_path) {
  if (b->broken) return -1;
  b->err[0] = 0;
  if (attach(b, part_path)) return pj_batch_add_error(b, trace, b->err) == PJ_OK ? 1 : -1;
  int ntabs = b->ntabs, rc = exec(b, "BEGIN");
  pstmt *st = NULL;
  int n = rc ? 0 : read_stmts(b, &st);
  if (n < 0) rc = 1;
  for (int i = 0; i < n && !rc; i++) rc = add_stmt(b, trace, st[i].ord, st[i].name, st[i].line);
  free(st);
  if (!rc) {
    rc = exec(b, "COMMIT");
  } else if (!b->broken || sqlite3_get_autocommit(b->db) == 0) {
    char keep[sizeof b->err];
    memcpy(keep, b->err, sizeof keep);
    sqlite3_exec(b->db, "ROLLBACK", NULL, NULL, NULL);
    memcpy(b->err, keep, sizeof keep);
    /* the tables this trace made are gone with the transaction */
    while (b->ntabs > ntabs) tab_free(&b->tabs[--b->ntabs]);
  }
  sqlite3_exec(b->db, "DETACH p", NULL, NULL, NULL);
  if (rc == 1 && pj_batch_add_error(b, trace, b->err) != PJ_OK) rc = -1;
  return rc;
}

pj_status pj_batch_close(pj_batch *b) {
  if (!b) return PJ_OK;
  pj_status s = b->broken ? PJ_ERROR : PJ_OK;
  if (b->db && sqlite3_close(b->db) != SQLITE_OK) s = PJ_ERROR;
  for (int i = 0; i < b->ntabs; i++) tab_free(&b->tabs[i]);
  free(b->tabs);
  free(b);
  return s;
}
