/*
 * vtab.h — finalized columnar tables as SQLite virtual tables.
 *
 * The "pipejit" module reads rt_tables straight from the engine's catalog,
 * so SQL statements (`SELECT … FROM slice ORDER BY ts`) see the same data a
 * pipeline does, without copying it into SQLite. A table is exposed as
 * `temp."name"`: nothing is written to the database file, and the temp
 * schema shadows a main-schema object of the same name.
 *
 * The virtual table holds no table reference; every cursor takes one from
 * the catalog when it opens (rt_table_ref) and drops it when it closes, so
 * CREATE OR REPLACE of a table under a running SQL statement is safe: the
 * statement finishes on the old table, the next one sees the new one.
 */
#ifndef PJ_VTAB_H
#define PJ_VTAB_H

#include <sqlite3.h>

#include "runtime/rt.h"

/* Registers the "pipejit" module on a connection (once per connection: a
 * second call replaces the module). cat and sp must outlive the
 * connection's use of the module. Returns a SQLite result code. */
int rt_vtab_register(sqlite3 *db, rt_catalog *cat, rt_strpool *sp);

/* Makes catalog table `name` readable from SQL as temp."name", replacing a
 * previous pipejit virtual table of that name (so it also refreshes the
 * declared columns after CREATE OR REPLACE). Fails when the catalog has no
 * such table or a temp object of that name that is not ours exists. On
 * failure *errmsg (if errmsg != NULL) gets a message to free with
 * sqlite3_free. Returns a SQLite result code. */
int rt_vtab_expose(sqlite3 *db, const char *name, char **errmsg);

/* Drops the temp."name" virtual table if it is ours; no-op otherwise. */
int rt_vtab_unexpose(sqlite3 *db, const char *name, char **errmsg);

/* Exposes every table of the catalog registered with the module. */
int rt_vtab_expose_all(sqlite3 *db, rt_catalog *cat, char **errmsg);

#endif
