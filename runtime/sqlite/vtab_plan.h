/*
 * vtab_plan.h — how the pipejit virtual tables answer SQLite's planner
 * (xBestIndex) and which rows one scan reads (xFilter). Internal to
 * runtime/sqlite/vtab*.c.
 *
 * Access paths over a finalized table, cheapest first:
 *  - rows by id: the id column (and the rowid) is the row number;
 *  - row order: a column finalized `sorted` is searched by bisection for
 *    `=`, `<`, `<=`, `>`, `>=`;
 *  - hash: `col = v` and `col IN (…)` on any other column, through the
 *    column's hash index (runtime/tabindex.h, built on the first lookup
 *    and kept with the table);
 *  - a PERFETTO INDEX: `=` on a prefix of its columns and a range on the
 *    next one, by bisection of its permutation;
 *  - a full scan.
 * Constraints are never marked omitted: SQLite checks every row again, so
 * a scan only has to return a superset of the matches. That keeps SQLite's
 * affinity rules for mixed comparisons (`int_col = '3'`, `text_col = 3`)
 * out of here: a key that does not convert exactly to the column's class
 * makes the scan read everything the other constraints allow.
 */
#ifndef PJ_VTAB_PLAN_H
#define PJ_VTAB_PLAN_H

#include <sqlite3.h>

#include "runtime/rt.h"
#include "vtab.h"

/* What SQLite was told about a table: its visible column types, then
 * nargs hidden argument columns. */
typedef struct vt_shape {
  int ncols;
  const char *const *names;
  const rt_type *types;
  int nargs;
} vt_shape;

/* xBestIndex. t (may be NULL: not known before a scan) gives the row
 * count, sorted columns, PERFETTO INDEXes and built hash indexes; without
 * it est_rows is the size assumed. Every hidden argument column needs a
 * usable `=` constraint: they get argv slots 1..nargs, in column order.
 * A call that passes fewer arguments gets a plan whose scan fails
 * (VT_MISSING_ARGS in idxNum). */
int vt_best_index(const vt_shape *sh, rt_table *t, double est_rows, sqlite3_index_info *info);

#define VT_MISSING_ARGS (1 << 30)

/* The rows one scan reads: rows[lo..hi) (rows NULL: the row numbers
 * lo..hi-1 themselves), backward when desc. `owned` is freed by the
 * cursor (an IN list's union). */
typedef struct vt_rows {
  const uint32_t *rows;
  uint32_t *owned;
  int64_t lo, hi;
  int desc;
} vt_rows;

/* xFilter: the rows of t for plan idx/idx_str and the key values argv
 * (the hidden arguments already taken off). Returns a SQLite result code
 * (SQLITE_NOMEM only: a plan that no longer fits the table, after CREATE
 * OR REPLACE, reads everything). */
int vt_select(rt_table *t, const rt_strpool *sp, int idx, const char *idx_str, int argc,
              sqlite3_value **argv, rt_vtab_stats *stats, vt_rows *out);

#endif
