/*
 * subq.h — running the SQL of a subquery in an expression (LANGUAGE.md
 * §5): checking it when the plan binds, then stepping it row by row, one
 * value (its first column) at a time, for exec/subq.c.
 */
#ifndef PJ_SQL_SUBQ_H
#define PJ_SQL_SUBQ_H

#include "runtime/rt.h"

/* A value going to or coming from SQLite. RT_STR's bytes are s[0..n)
 * (coming from SQLite: valid until the next step); `blob` marks a BLOB
 * coming back (type RT_STR, its bytes in s). */
typedef struct rt_sqlval {
  rt_type type;         /* RT_I64, RT_F64, RT_STR or RT_NULLT */
  int64_t i;
  double f;
  const char *s;
  size_t n;
  bool blob;
} rt_sqlval;

/* What rt_sql_subq_check found out about a query. */
typedef struct rt_subqinfo {
  int ncols;
  rt_type decl;         /* column 0's declared type (RT_I64, RT_F64, RT_STR
                           by its affinity), RT_NULLT when it says nothing */
} rt_subqinfo;

/* Prepares sql without running it: 1 with *info filled; 0 with SQLite's
 * message in msg and *erroff its byte offset in sql (-1 when SQLite does
 * not say). A text that is more than one statement, or one that would
 * change the database, is an error too. */
int rt_sql_subq_check(void *db, const char *sql, rt_subqinfo *info, char *msg, size_t msglen,
                      int *erroff);

/* A running subquery: ?N is bound to args[N] (1 <= N <= nargs; args[0]
 * unused), any other parameter is NULL. NULL with err set on failure. */
typedef struct rt_subqrun rt_subqrun;
rt_subqrun *rt_sql_subq_open(void *db, const char *sql, int nargs, const rt_sqlval *args,
                             rt_err *err);
/* The next row's first column in *v: 1, 0 at the end, -1 with err set. */
int rt_sql_subq_next(rt_subqrun *r, rt_sqlval *v, rt_err *err);
void rt_sql_subq_close(rt_subqrun *r);

#endif
