/*
 * load.h — copies a SQLite table into a finalized columnar table.
 *
 * For databases written by Perfetto's `trace_processor_shell --export`
 * (slice, sched, thread, process, counter …): pipelines read such tables
 * through SQLite anyway, but a columnar copy in the catalog is what the
 * fast paths want (direct column scans, the implicit id column, TREE
 * ACCUMULATE's dense tier).
 *
 * Column types come from the values, as for CREATE PERFETTO TABLE: any text
 * (or blob) makes a string column, else any real a double column, else an
 * integer column; a column holding only NULLs takes its declared type. An
 * integer column named `id` holding exactly 0..n-1 becomes the id type.
 */
#ifndef PJ_LOAD_H
#define PJ_LOAD_H

#include <sqlite3.h>

#include "runtime/rt.h"

/* Called every RT_LOAD_PROGRESS_ROWS rows and once at the end, with the
 * rows copied so far and the table's row count. */
typedef void (*rt_load_progress)(void *ctx, const char *table, int64_t done, int64_t total);
#define RT_LOAD_PROGRESS_ROWS 65536

/* 1 when main has a table or view of that name (any case). */
int rt_sqlite_has_table(sqlite3 *db, const char *name);

/* Reads main."name" (a table or view of the database, never a pipejit
 * virtual table of the same name) into a new table named `name`, interning
 * strings into sp. progress may be NULL; *interrupt (may be NULL) is
 * polled and stops the copy when set. Returns the table (caller's
 * reference) or NULL with err set ("LOAD: …"). */
rt_table *rt_load_sqlite_table(sqlite3 *db, rt_strpool *sp, const char *name,
                               rt_load_progress progress, void *ctx,
                               const volatile int *interrupt, rt_err *err);

#endif
