/*
 * vtab.h — finalized columnar tables as SQLite virtual tables.
 *
 * The "pipejit" module reads rt_tables straight from the engine's catalog,
 * so SQL statements (`SELECT … FROM slice ORDER BY ts`) see the same data a
 * pipeline does, without copying it into SQLite. A table is exposed twice:
 *  - as `temp."name"`: nothing is written to the database file, the temp
 *    schema shadows a main-schema object of the same name, and replacing
 *    the table changes the schema (so prepared statements and plans that
 *    read it are prepared again);
 *  - as an eponymous virtual table `name` (a module of that name), which
 *    is what SQLite finds from the main schema: a plain `CREATE VIEW v AS
 *    SELECT … FROM slice` (stored in main, whose views cannot see temp)
 *    and `main.slice` read the columnar table too. Names SQLite or pipejit
 *    use for their own modules (json_each, pragma_*, fts5, pipeline, …)
 *    are left alone: such a table is readable from temp only.
 *
 * The virtual table holds no table reference; every scan takes one from
 * the catalog (rt_table_ref) and drops it when its cursor closes, so
 * CREATE OR REPLACE of a table under a running SQL statement is safe: the
 * statement finishes on the old table, the next one sees the new one.
 *
 * Lookups (vtab_plan.h): `=` and `IN` on any column through the column's
 * hash index, ranges on sorted columns and on PERFETTO INDEXes, the id by
 * position; costs that make SQLite plan joins over these tables as index
 * nested loops.
 *
 * The same module also serves tables that something else provides
 * (rt_vsource below): api/sqltab.h makes compiled pipelines SQLite tables
 * that way.
 */
#ifndef PJ_VTAB_H
#define PJ_VTAB_H

#include <sqlite3.h>

#include "runtime/rt.h"

/* What the virtual tables of a connection did, for tests and tools (the
 * engine keeps one per connection: pj_engine.vtab_stats). */
typedef struct rt_vtab_stats {
  int64_t full_scans;        /* scans that read every row */
  int64_t order_searches;    /* bisections of a sorted column or the id */
  int64_t hash_lookups;      /* `=` through a column's hash index */
  int64_t in_lists;          /* `IN (…)` lists, every value in one scan */
  int64_t index_searches;    /* bisections of a PERFETTO INDEX */
  int64_t opens;             /* tables a source opened (for a pipeline: runs) */
} rt_vtab_stats;

/* Registers the "pipejit" module on a connection (once per connection: a
 * second call replaces the module). cat and sp must outlive the
 * connection's use of the module; stats (may be NULL) is counted into.
 * Returns a SQLite result code. */
int rt_vtab_register(sqlite3 *db, rt_catalog *cat, rt_strpool *sp, rt_vtab_stats *stats);

/* Makes catalog table `name` readable from SQL as temp."name" and as the
 * eponymous table `name`, replacing what a previous call made (so it also
 * refreshes the declared columns after CREATE OR REPLACE). Fails when the
 * catalog has no such table or a temp object of that name that is not
 * ours exists. On failure *errmsg (if errmsg != NULL) gets a message to
 * free with sqlite3_free. Returns a SQLite result code. Call it between
 * statements, not from inside one. */
int rt_vtab_expose(sqlite3 *db, const char *name, char **errmsg);

/* Drops what rt_vtab_expose made for `name`; no-op when it made nothing. */
int rt_vtab_unexpose(sqlite3 *db, const char *name, char **errmsg);

/* Sets the SQLite result to row r of column c of t (NULL, an integer, a
 * real, or text read in place from the pool, which never moves). */
void rt_vtab_result(sqlite3_context *ctx, const rt_table *t, int c, int64_t r,
                    const rt_strpool *sp);

/* Exposes every table of the catalog registered with the module. */
int rt_vtab_expose_all(sqlite3 *db, rt_catalog *cat, char **errmsg);

/* ---- tables that something else provides ------------------------------------ */

/* A source of the finalized tables one virtual table reads. Its columns
 * are fixed when it is registered; after them come `nargs` hidden columns,
 * the arguments of a table-valued call `name(a, b)`, all required. A scan
 * asks `open` for the table of its argument values; a cursor keeps that
 * table while later scans pass the same values (an inner loop of a join
 * scans once per outer row: the source runs once). Lookups on the table go
 * through its indexes as for catalog tables (a hash index on the result
 * of a run is built when a scan first needs it). */
typedef struct rt_vsource rt_vsource;
struct rt_vsource {
  int ncols;
  const char *const *names;
  const rt_type *types;        /* RT_F64 is REAL, RT_STR TEXT, others INTEGER */
  int nargs;
  const char *const *arg_names;  /* NULL: __pj_arg1, __pj_arg2, … */
  const char *what;            /* for messages: "table function f", … */
  rt_strpool *sp;              /* pool of the tables' strings */
  rt_vtab_stats *stats;        /* may be NULL */
  /* Rows to plan with when peek gives no table. */
  double est_rows;
  /* The table to plan against (borrowed), or NULL when none is known
   * before a scan. May be NULL. */
  rt_table *(*peek)(rt_vsource *self);
  /* The table of one scan for args[0..nargs): a new reference, or NULL
   * with *msg set (sqlite3_malloc'd; NULL for out of memory). Its columns
   * must be the declared ones, in order (open checks). */
  rt_table *(*open)(rt_vsource *self, sqlite3_value **args, char **msg);
  /* Frees the source: SQLite calls it when the module goes (unregistered,
   * replaced, or the connection closed), also when registering failed. */
  void (*destroy)(rt_vsource *self);
};

/* Registers `src` as the eponymous-only module `module` (SQLite owns src
 * from now on). Statements prepared after this see a table `module`. */
int rt_vtab_register_source(sqlite3 *db, const char *module, rt_vsource *src);
/* Drops module `module` (its source is destroyed once no statement uses
 * it). No-op when there is none. */
int rt_vtab_unregister(sqlite3 *db, const char *module);

#endif
