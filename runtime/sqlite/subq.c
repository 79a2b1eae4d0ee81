/*
 * subq.c — SQLite's side of subqueries in expressions (subq.h): a check
 * when the plan binds, and a cursor over the first column when it runs.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#include "sqlsrc.h"
#include "subq.h"

struct rt_subqrun {
  sqlite3_stmt *st;
  sqlite3 *db;
};

static bool blank(const char *s) {
  for (; *s; s++)
    if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r' && *s != '\f') return false;
  return true;
}

int rt_sql_subq_check(void *db, const char *sql, rt_subqinfo *info, char *msg, size_t msglen,
                      int *erroff) {
  *erroff = -1;
  memset(info, 0, sizeof *info);
  sqlite3_stmt *st = NULL;
  const char *tail = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, &tail) != SQLITE_OK || !st) {
    snprintf(msg, msglen, "%s", st || sqlite3_errcode(db) != SQLITE_OK ? sqlite3_errmsg(db)
                                                                        : "expected a SELECT");
    if (sqlite3_errcode(db) != SQLITE_OK) *erroff = sqlite3_error_offset(db);
    sqlite3_finalize(st);
    return 0;
  }
  if (tail && !blank(tail)) {
    snprintf(msg, msglen, "expected one SELECT, but there is more after it");
    *erroff = (int)(tail - sql);
    sqlite3_finalize(st);
    return 0;
  }
  if (!sqlite3_stmt_readonly(st) || sqlite3_column_count(st) == 0) {
    snprintf(msg, msglen, "expected a SELECT, but the subquery does not return rows");
    sqlite3_finalize(st);
    return 0;
  }
  info->ncols = sqlite3_column_count(st);
  info->decl = RT_NULLT;
  switch (rt_sql_affinity(sqlite3_column_decltype(st, 0))) {
  case RT_AFF_INTEGER: info->decl = RT_I64; break;
  case RT_AFF_REAL: info->decl = RT_F64; break;
  case RT_AFF_TEXT: info->decl = RT_STR; break;
  case RT_AFF_BLOB: case RT_AFF_NUMERIC: break;
  }
  /* No declared type at all is BLOB affinity: it says nothing. */
  if (!sqlite3_column_decltype(st, 0)) info->decl = RT_NULLT;
  sqlite3_finalize(st);
  return 1;
}

/* The number N of a parameter spelled ?N, else 0. */
static int param_number(const char *name) {
  if (!name || name[0] != '?') return 0;
  char *end;
  long v = strtol(name + 1, &end, 10);
  return *end || v < 1 || v > 1000000 ? 0 : (int)v;
}

rt_subqrun *rt_sql_subq_open(void *db, const char *sql, int nargs, const rt_sqlval *args,
                             rt_err *err) {
  rt_subqrun *r = calloc(1, sizeof *r);
  if (!r) {
    rt_errorf(err, -1, "out of memory");
    return NULL;
  }
  r->db = db;
  if (sqlite3_prepare_v2(db, sql, -1, &r->st, NULL) != SQLITE_OK || !r->st) {
    rt_errorf(err, -1, "%s", sqlite3_errmsg(db));
    rt_sql_subq_close(r);
    return NULL;
  }
  for (int k = 1; k <= sqlite3_bind_parameter_count(r->st); k++) {
    int n = param_number(sqlite3_bind_parameter_name(r->st, k));
    if (n < 1 || n > nargs) continue;   /* NULL */
    const rt_sqlval *v = &args[n];
    int rc = v->type == RT_I64   ? sqlite3_bind_int64(r->st, k, v->i)
             : v->type == RT_F64 ? sqlite3_bind_double(r->st, k, v->f)
             : v->type == RT_STR ? sqlite3_bind_text64(r->st, k, v->s ? v->s : "", v->n,
                                                       SQLITE_TRANSIENT, SQLITE_UTF8)
                                 : SQLITE_OK;
    if (rc != SQLITE_OK) {
      rt_errorf(err, -1, "%s", sqlite3_errmsg(db));
      rt_sql_subq_close(r);
      return NULL;
    }
  }
  return r;
}

int rt_sql_subq_next(rt_subqrun *r, rt_sqlval *v, rt_err *err) {
  memset(v, 0, sizeof *v);
  int rc = sqlite3_step(r->st);
  if (rc == SQLITE_DONE) return 0;
  if (rc != SQLITE_ROW) return rt_errorf(err, -1, "%s", sqlite3_errmsg(r->db)), -1;
  switch (sqlite3_column_type(r->st, 0)) {
  case SQLITE_NULL: v->type = RT_NULLT; break;
  case SQLITE_INTEGER:
    v->type = RT_I64;
    v->i = sqlite3_column_int64(r->st, 0);
    break;
  case SQLITE_FLOAT:
    v->type = RT_F64;
    v->f = sqlite3_column_double(r->st, 0);
    break;
  default:
    v->type = RT_STR;
    v->blob = sqlite3_column_type(r->st, 0) == SQLITE_BLOB;
    v->s = v->blob ? sqlite3_column_blob(r->st, 0) : (const char *)sqlite3_column_text(r->st, 0);
    v->n = (size_t)sqlite3_column_bytes(r->st, 0);
    if (!v->s && sqlite3_errcode(r->db) == SQLITE_NOMEM)
      return rt_errorf(err, -1, "out of memory"), -1;
    if (!v->s) v->s = "";
    break;
  }
  return 1;
}

void rt_sql_subq_close(rt_subqrun *r) {
  if (!r) return;
  sqlite3_finalize(r->st);
  free(r);
}
