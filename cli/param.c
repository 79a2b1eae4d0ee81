/*
 * param.c — typing a parameter value given as text (--param name=value,
 * the shell's .param set) the way sqlite3's `.param set` does: the value
 * is read as a SQL expression, so 42 is an integer, 1.5 and 1e3 reals,
 * 'it''s' text, NULL a NULL, and 60*1000 is 60000; text that is not an
 * expression (abc, a/b.json) is taken as the text itself. The value is
 * computed once, when it is set, by the engine's SQLite connection (so a
 * subquery sees the trace loaded by then), and bound with
 * pj_engine_bind_* to every statement after.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cli.h"

int cli_param_set(pj_engine *e, const char *name, const char *value) {
  sqlite3 *db = pj_engine_sqlite(e);
  char *sql = sqlite3_mprintf("SELECT (%s)", value);
  sqlite3_stmt *q = NULL;
  const char *tail = NULL;
  pj_status s;
  if (!sql) {
    fprintf(stderr, "error: parameter %s: out of memory\n", name);
    return 1;
  }
  /* Not one expression (a syntax error, an unknown column, a second
   * statement after it): the text as it is, as sqlite3 does. */
  int expr = sqlite3_prepare_v2(db, sql, -1, &q, &tail) == SQLITE_OK && q &&
             strspn(tail, " \t\r\n") == strlen(tail) && sqlite3_step(q) == SQLITE_ROW;
  if (!expr) {
    s = pj_engine_bind_text(e, name, value, strlen(value));
  } else {
    switch (sqlite3_column_type(q, 0)) {
    case SQLITE_INTEGER: s = pj_engine_bind_int64(e, name, sqlite3_column_int64(q, 0)); break;
    case SQLITE_FLOAT: s = pj_engine_bind_double(e, name, sqlite3_column_double(q, 0)); break;
    case SQLITE_NULL: s = pj_engine_bind_null(e, name); break;
    case SQLITE_TEXT:
      s = pj_engine_bind_text(e, name, (const char *)sqlite3_column_text(q, 0),
                              (size_t)sqlite3_column_bytes(q, 0));
      break;
    default:
      sqlite3_finalize(q);
      sqlite3_free(sql);
      fprintf(stderr, "error: parameter %s: %s is a blob, which pipelines cannot take\n", name,
              value);
      return 1;
    }
  }
  sqlite3_finalize(q);
  sqlite3_free(sql);
  if (s != PJ_OK) {
    fprintf(stderr, "error: %s\n", pj_engine_errmsg(e));
    return 1;
  }
  return 0;
}

int cli_param_literal(const pj_param *p, char *buf, size_t cap) {
  if (p->is_null) return snprintf(buf, cap, "NULL");
  if (p->type == PJ_TYPE_INT64) return snprintf(buf, cap, "%lld", (long long)p->i);
  if (p->type == PJ_TYPE_DOUBLE) {
    sqlite3_snprintf((int)cap, buf, "%!.15g", p->d);
    return (int)strlen(buf);
  }
  /* text, quoted as SQL quotes it */
  char *t = sqlite3_mprintf("%Q", p->s);
  int n = snprintf(buf, cap, "%s", t ? t : "''");
  sqlite3_free(t);
  return n;
}
