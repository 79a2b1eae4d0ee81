/*
 * tabindex.h — indexes kept with a finalized table: a hash index per
 * column (equality lookups on any column, built on first use) and named
 * sorted indexes (CREATE PERFETTO INDEX: equality on a prefix of their
 * columns, a range on the next one).
 *
 * A finalized table never changes, so an index built once stays right for
 * the table's life and goes with it (rt_table_unref). Indexes are built
 * lazily by whoever needs them first: the SQLite virtual table (vtab.c)
 * for `col = ?`, `col IN (…)` and joins, and any C caller that looks rows
 * up by value (EXTRACT_ARG's arg_set_id, say). Not thread-safe, like the
 * engine: one thread at a time builds and reads a table's indexes.
 *
 * Keys are 64-bit patterns of the stored value: integer kinds as int64,
 * doubles as their bits (-0.0 folded to 0.0), strings as their pool id
 * (the pool interns, so equal strings have equal ids). NULLs and NaNs are
 * never in a hash index: `x = NULL` and `x = NaN` match nothing in SQL.
 */
#ifndef PJ_TABINDEX_H
#define PJ_TABINDEX_H

#include "rt.h"

/* ---- hash index ---------------------------------------------------------- */

/* Rows of one column grouped by value: group g holds the ids of its rows,
 * ascending, at rows[start[g] .. start[g + 1]). */
typedef struct rt_hindex {
  int col;
  uint32_t ngroups;      /* distinct non-NULL values */
  uint32_t nindexed;     /* rows with a non-NULL value */
  uint32_t *rows;
  uint32_t *start;       /* ngroups + 1 */
  uint64_t *keys;        /* per group */
  uint32_t *slots;       /* open addressing: group + 1, 0 = empty */
  uint32_t mask;
} rt_hindex;

/* The hash index of column c, built on the first call and kept with the
 * table. NULL when memory runs out, and for an RT_ID column (its value is
 * the row number: no index needed). */
const rt_hindex *rt_table_hindex(rt_table *t, int c);
/* The index if it was already built (for planners that only estimate). */
const rt_hindex *rt_table_hindex_peek(const rt_table *t, int c);

/* Key patterns of values, for the column's stored class. */
static inline uint64_t rt_hkey_i64(int64_t v) { return (uint64_t)v; }
static inline uint64_t rt_hkey_f64(double v) {
  if (v == 0) v = 0;     /* -0.0 and 0.0 are one key */
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}
static inline uint64_t rt_hkey_str(uint32_t id) { return id; }
/* The key of row r of column c (the row must not be NULL). */
uint64_t rt_hkey_row(const rt_table *t, int c, int64_t r);

/* The rows holding `key`: returns their count and points *rows at them
 * (ascending row ids; *rows is NULL when there are none). */
uint32_t rt_hindex_find(const rt_hindex *ix, uint64_t key, const uint32_t **rows);
/* The group of a key (to tell two keys apart), or UINT32_MAX. */
uint32_t rt_hindex_group(const rt_hindex *ix, uint64_t key);

/* ---- sorted (PERFETTO) indexes --------------------------------------------- */

/* perm lists every row of the table ordered by the index's columns in
 * turn (NULLs first, numbers numerically, strings in binary order), rows
 * with equal keys in row order. */
typedef struct rt_sindex {
  char *name;
  int ncols;
  int *cols;
  uint32_t *perm;        /* t->nrows row ids */
} rt_sindex;

/* A value to search for: an integer, a real, text bytes, or NULL. */
typedef enum rt_ikey_kind { RT_IKEY_NULL, RT_IKEY_INT, RT_IKEY_REAL, RT_IKEY_TEXT } rt_ikey_kind;
typedef struct rt_ikey {
  rt_ikey_kind kind;
  int64_t i;
  double d;
  const char *s;
  size_t len;
} rt_ikey;

/* Row r of column c against a key, in the order of sorted indexes: <0, 0,
 * >0. A number column takes INT and REAL keys (an integer against a real
 * compares as doubles), a string column TEXT keys only; NULL equals NULL
 * and sorts first. */
int rt_sindex_cmp_key(const rt_table *t, int c, int64_t r, const rt_ikey *k,
                      const rt_strpool *sp);

/* Builds index `name` on columns cols[0..ncols) of t (strings ordered
 * with sp), replacing an index of that name. 0 when memory runs out. */
int rt_table_add_sindex(rt_table *t, const char *name, int ncols, const int *cols,
                        const rt_strpool *sp);
/* Drops index `name` (case-insensitive); 0 when there is none. */
int rt_table_drop_sindex(rt_table *t, const char *name);
const rt_sindex *rt_table_find_sindex(const rt_table *t, const char *name);
int rt_table_sindex_count(const rt_table *t);
const rt_sindex *rt_table_sindex_at(const rt_table *t, int i);

/* Frees every index of a table (table.c, when the table goes). */
void rt_table_indexes_free(rt_table *t);

/* Between hindex.c (which keeps a table's list) and sindex.c. */
void rt_sindex_free(rt_sindex *s);
int rt_tabindexes_add_sorted(rt_table *t, rt_sindex *s);

#endif
