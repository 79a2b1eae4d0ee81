/*
 * sqlsrc.h — SQLite as a source: the affinity of declared types, what a SQL
 * query returns (for the binder), what a bound plan depends on, and
 * reading a query's rows into columnar batches (sqlsrc.c, affinity.c).
 */
#ifndef PJ_SQLSRC_H
#define PJ_SQLSRC_H

#include "runtime/rt.h"

/* ---- declared types ------------------------------------------------------ */

/* SQLite's column affinity of a declared type, by the rules of §3.1 of
 * https://sqlite.org/datatype3.html applied in their order (a type
 * containing INT is INTEGER, then CHAR/CLOB/TEXT is TEXT, then BLOB or no
 * type at all is BLOB, then REAL/FLOA/DOUB is REAL, else NUMERIC), on
 * ASCII case-insensitive substrings. decl may be NULL (no declared type). */
typedef enum rt_affinity {
  RT_AFF_INTEGER,
  RT_AFF_TEXT,
  RT_AFF_BLOB,
  RT_AFF_REAL,
  RT_AFF_NUMERIC,
} rt_affinity;
rt_affinity rt_sql_affinity(const char *decl);

/* The value type a declared type names where pipejit reads a type name as
 * Perfetto does (CAST targets; columns of SQL results and loaded tables
 * that hold no value to judge by): INTEGER affinity is RT_I64, REAL is
 * RT_F64, TEXT is RT_STR, and so is a type containing STRING (Perfetto's
 * text type, NUMERIC affinity in SQLite); RT_NULLT for the rest (BLOB,
 * NUMERIC, none). A SQLite source instead leaves BLOB and NUMERIC columns
 * to their values (rt_sql_describe), as SQLite stores them. */
rt_type rt_sql_decl_type(const char *decl);

/* ---- SQLite source ------------------------------------------------------- */

/* Describes a SQL query's result columns for the binder: names and types.
 * Types come from the declared type of the column when its affinity says
 * (rt_sql_affinity: INTEGER → RT_I64, REAL → RT_F64, TEXT → RT_STR), else
 * from the values of the first RT_BATCH rows (any string → RT_STR, any
 * double → RT_F64, else RT_I64; strings mixed with numbers is an error).
 * Arrays come from arena a.
 *
 * rt_sql_prime does not run the query for that: it steps it only when a
 * column has no declared type, and then hands the open query back in
 * *primed (NULL when nothing was read) with the rows it read, for a run to
 * go on from (rt_sqlsrc_adopt), so the query is stepped once in all. An
 * open query holds a read transaction: a caller that will not run it soon
 * closes it (rt_sqlsrc_close; a DROP TABLE fails while it is open).
 * rt_sql_describe reads and closes. */
typedef struct rt_sqlcols {
  int ncols;
  char **names;
  rt_type *types;
  int sampled;          /* 1 when some type came from the values */
} rt_sqlcols;
typedef struct rt_sqlsrc rt_sqlsrc;
int rt_sql_prime(void *db, const char *sql, rt_strpool *sp, rt_arena *a, rt_sqlcols *out,
                 rt_sqlsrc **primed, rt_err *err);
int rt_sql_describe(void *db, const char *sql, rt_arena *a, rt_sqlcols *out, rt_err *err);

/* What a plan bound against SQLite depends on, as numbers to compare
 * before a run. rt_sql_schema_cookie changes whenever the schema of any
 * database of the connection changes (a hash of every attached database's
 * name and `PRAGMA schema_version`, so DDL through this connection or
 * another one, ATTACH and DETACH all show); rt_sql_data_cookie whenever
 * data changes (sqlite3_total_changes64 of this connection plus each
 * database's data_version, which moves on other connections' commits).
 * Both return 0 when the connection cannot say, which never equals a
 * cookie taken before (they are never 0 otherwise). */
uint64_t rt_sql_schema_cookie(void *db);
uint64_t rt_sql_data_cookie(void *db);

/* Steps a prepared query and copies its values into batches of up to
 * RT_BATCH rows: views[c] gets contiguous values of types[c] (ints as
 * int64, doubles, string ids interned in sp) with validity bits. A value
 * whose type does not fit (text in a number column, a real with a
 * fraction in an integer column, a blob) stops with an error naming the
 * column and row; an integer in a double column is converted. */
rt_sqlsrc *rt_sqlsrc_open(void *db, const char *sql, int ncols, const rt_type *types,
                          const char *const *names, rt_strpool *sp, const char *stage,
                          rt_err *err);
/* Types a primed source (rt_sql_prime) for a run: the run reads the
 * query's columns which[0..ncols) as types[], named names[]; its batches
 * start with the rows read while priming. 0 with err set on failure. */
int rt_sqlsrc_adopt(rt_sqlsrc *s, int ncols, const int *which, const rt_type *types,
                    const char *const *names, const char *stage, rt_err *err);
/* Fills views and *n; returns 1 for a batch, 0 at the end, -1 on error. */
int rt_sqlsrc_next(rt_sqlsrc *s, rt_view *views, uint32_t *n, rt_err *err);
void rt_sqlsrc_close(rt_sqlsrc *s);

#endif
