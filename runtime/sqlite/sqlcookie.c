/*
 * sqlcookie.c — what a plan bound against SQLite depends on, as numbers a
 * handle compares before a run (sqlsrc.h: rt_sql_schema_cookie,
 * rt_sql_data_cookie).
 */
#include <sqlite3.h>

#include "sqlsrc.h"


static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* Hashes, for every database of the connection, its name and the value of
 * `PRAGMA "<name>".<pragma>` (no pragma: only the names). */
static uint64_t hash_databases(sqlite3 *db, const char *pragma) {
  uint64_t h = 14695981039346656037ull;
  sqlite3_stmt *list = NULL;
  if (!db || sqlite3_prepare_v2(db, "PRAGMA database_list", -1, &list, NULL) != SQLITE_OK)
    return 0;
  int rc;
  while ((rc = sqlite3_step(list)) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(list, 1);
    if (!name) continue;
    h = fnv(h, name, strlen(name) + 1);
    if (!pragma) continue;
    char *sql = sqlite3_mprintf("PRAGMA \"%w\".%s", name, pragma);
    sqlite3_stmt *st = NULL;
    int ok = sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
             sqlite3_step(st) == SQLITE_ROW;
    int64_t v = ok ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    sqlite3_free(sql);
    if (!ok) {
      sqlite3_finalize(list);
      return 0;
    }
    h = fnv(h, &v, sizeof v);
  }
  sqlite3_finalize(list);
  if (rc != SQLITE_DONE) return 0;
  return h ? h : 1;
}

uint64_t rt_sql_schema_cookie(void *db) { return hash_databases(db, "schema_version"); }

uint64_t rt_sql_data_cookie(void *dbv) {
  sqlite3 *db = dbv;
  uint64_t h = hash_databases(db, "data_version");
  if (!h) return 0;
  int64_t changes = sqlite3_total_changes64(db);
  h = fnv(h, &changes, sizeof changes);
  return h ? h : 1;
}

