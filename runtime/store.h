/*
 * store.h — runtime structures that breakers write and sources read: row
 * buffers, the aggregation hash table and sorting (the SQLite source is
 * runtime/sqlite/sqlsrc.h).
 *
 * Both backends write these same structures (the interpreter a batch at a
 * time, the JIT a row at a time from generated code), so every layout here
 * that generated code touches is declared for LLVM in codegen/ and checked
 * against offsetof in a test. Change a field here, change it there.
 */
#ifndef PJ_STORE_H
#define PJ_STORE_H

#include "rt.h"

/* ---- row buffer ---------------------------------------------------------- */

/* Columnar growable storage. Integer kinds (id, u32, i32, i64, bool) are
 * stored as int64_t, doubles as double, strings as uint32_t ids. valid[c]
 * is always allocated (bit set = not NULL); writers set the bit for every
 * non-NULL value they write. */
typedef struct rt_rowbuf {
  int ncols;
  rt_type *types;       /* stored type per column: RT_I64, RT_F64, RT_STR */
  int64_t nrows;
  int64_t cap;
  void **data;
  uint64_t **valid;
} rt_rowbuf;

/* false when out of memory: the buffer is then empty with no columns (and
 * the run's budget marked, rt_budget_oom). */
bool rt_rowbuf_init(rt_rowbuf *b, int ncols, const rt_type *types);
/* Makes room for `extra` more rows (new rows zeroed and marked NULL). */
void rt_rowbuf_reserve(rt_rowbuf *b, int64_t extra);
/* Room for n rows in an empty buffer without writing them: the caller
 * writes every value and validity word of rows 0..n (bits past n zero)
 * before anything reads them, so their pages are first touched there,
 * on whichever threads write them (runtime/aggpart.c), not zeroed here
 * on one. Rows n..cap are zeroed here. false when out of memory (the
 * buffer then stays empty). */
bool rt_rowbuf_reserve_raw(rt_rowbuf *b, int64_t n);
/* Appends the active rows of `views` (one per column). */
void rt_rowbuf_append_views(rt_rowbuf *b, const rt_view *views, const uint32_t *active,
                            uint32_t nactive);
void rt_rowbuf_free(rt_rowbuf *b);
/* Empties b for another run to fill: rows [0, nrows) are zeroed and marked
 * NULL again (what lies beyond always is), the capacity is kept. */
void rt_rowbuf_clear(rt_rowbuf *b);
/* Takes b, an emptied buffer of an earlier run, as the buffer of ncols
 * columns of these types: true when it has them (its capacity is charged
 * to the run's budget like a growth); false, with b freed, when it does
 * not (the caller makes a new one). */
bool rt_rowbuf_refill(rt_rowbuf *b, int ncols, const rt_type *types);
/* Bytes of column data and validity the buffer holds (its capacity). */
int64_t rt_rowbuf_bytes(const rt_rowbuf *b);
/* Adds n columns of these types after the last one, every row NULL (a
 * WINDOW op's results, computed once its input is buffered). false when
 * out of memory or over the budget (the buffer is then unchanged). */
bool rt_rowbuf_add_cols(rt_rowbuf *b, int n, const rt_type *types);
static inline rt_type rt_store_type(rt_type t) {
  return t == RT_F64 ? RT_F64 : t == RT_STR ? RT_STR : RT_I64;
}
/* View of column c rows [start, start+n) (start a multiple of 64), optionally
 * through a permutation: when perm != NULL, position i reads row perm[start+i]. */
void rt_rowbuf_view(const rt_rowbuf *b, int c, int64_t start, const uint32_t *perm,
                    rt_view *out);
/* Moves the rows into a finalized table (names given); frees the buffer.
 * bools (may be NULL) marks the columns that hold predicates (stored as
 * int64 0/1): they become RT_BOOL columns, so readers see booleans. */
rt_table *rt_rowbuf_to_table(rt_rowbuf *b, const char *name, const char *const *names,
                             const bool *bools);

/* ---- aggregation hash table ---------------------------------------------- */

typedef enum rt_aggkind {
  RT_AGG_COUNT_STAR, RT_AGG_COUNT, RT_AGG_SUM, RT_AGG_MIN, RT_AGG_MAX, RT_AGG_AVG,
  RT_AGG_ANY_VALUE, RT_AGG_COUNT_DISTINCT, RT_AGG_ARG_MAX, RT_AGG_ARG_MIN, RT_AGG_GROUP_CONCAT,
  RT_AGG_MEDIAN, RT_AGG_PERCENTILE, RT_AGG_FIRST, RT_AGG_LAST,
} rt_aggkind;

/* State of the aggregates updated by rt_agg_add (aggx.c). */
typedef struct rt_aggx rt_aggx;

/* Per-group state of one aggregate, arrays indexed by group number.
 *   COUNT_STAR, COUNT: i[g] = count
 *   SUM of ints: i[g] = checked sum; SUM of doubles: f[g]
 *   MIN/MAX/ANY_VALUE: i[g] (ints, string ids) or f[g] (doubles)
 *   AVG: f[g] = sum as double, n[g] = count
 *   has[g] = 1 once a non-NULL input was seen (SUM/MIN/MAX/AVG/ANY give
 *   NULL when it stays 0; COUNT never NULL).
 *   COUNT_DISTINCT: i[g] = count; ARG_MAX/ARG_MIN, GROUP_CONCAT, MEDIAN,
 *   PERCENTILE: their state is x (aggx.c), updated by rt_agg_add.
 * MIN/MAX of strings compare by rt_str_cmp. */
typedef struct rt_agg {
  rt_aggkind kind;
  rt_type in;          /* stored type of the argument: RT_I64, RT_F64, RT_STR */
  rt_type out;         /* result type */
  int64_t *i;
  double *f;
  int64_t *n;
  uint8_t *has;
  rt_type in2;         /* the second argument's stored type (ARG_MAX's value,
                          GROUP_CONCAT's separator), RT_NULLT when none */
  double param;        /* PERCENTILE's p (MEDIAN: 50) */
  rt_aggx *x;
} rt_agg;

/* Groups keyed by a tuple of values. Each key contributes a presence byte
 * and 8 value bytes (int64, double bits with -0.0 folded to 0.0, or the
 * string id), so NULL keys group together. Groups are numbered in
 * first-seen order; key values are kept in `keys` for output.
 *
 * Layout for generated code (one key of stored type RT_I64 or RT_STR):
 * `slots` is an open-addressed array of mask+1 entries holding group+1
 * (0 = empty); a key v (non-NULL) hashes to rt_hash_i64(v) and probes
 * linearly from h & mask, comparing keys.data[0][group]. A NULL key is
 * group `null_group` (-1 until seen). Insert and growth call the runtime.
 * Keys in [0, RT_AGG_DIRECT) are also in `direct` (below), and so are
 * pairs of two-key tables in [0, RT_AGG_DIRECT2_W)^2. */
typedef struct rt_aggtab {
  int nkeys;
  int naggs;
  rt_agg *aggs;
  int64_t ngroups;
  int64_t cap;         /* capacity of per-group arrays */
  uint32_t *slots;
  uint64_t mask;
  int64_t null_group;  /* single-key tables: the group of the NULL key */
  uint64_t *hashes;    /* per group, for rehashing */
  rt_rowbuf keys;      /* key values per group, columns = keys */
  rt_strpool *strings; /* ARG_MAX of strings compares, GROUP_CONCAT interns */
  uint32_t *direct;    /* one integer or string key: group+1 of key v for
                          0 <= v < RT_AGG_DIRECT (0: not seen); two such
                          keys: of (a, b) at rt_aggtab_direct2(a, b) for
                          both non-NULL in [0, RT_AGG_DIRECT2_W); or NULL */
  /* Lazy folding of per-morsel sums (aggmerge.h), NULL when off: epoch[g]
   * is the morsel whose rows group g's SUM/AVG state holds; a row of
   * morsel `morsel` in a group of an older epoch first calls
   * rt_aggtab_refold(t, g). Both backends make that check. */
  uint32_t *epoch;
  uint32_t morsel;
  struct rt_aggfold *fold;
} rt_aggtab;

/* Small keys of a one-key table (depths, string ids, small ranges) find
 * their group in `direct` with one load, no hash; every insert of such a
 * key (rt_aggtab_insert_i64) sets its entry, so an entry of 0 means the
 * key has no group. Generated code reads it too. */
#define RT_AGG_DIRECT 4096
/* The same for two integer or string keys (tracks and depths, thread and
 * name ids), each below RT_AGG_DIRECT2_W: 256 KiB of entries, of which a
 * table touches only its keys' rows (64 tracks x 31 depths: 8 KiB), so
 * the 2 x 4 multiplies of the tuple hash, the stored hash and both key
 * compares become one load. Either key outside the range, or NULL, takes
 * the tuple probe. Generated code computes the index the same way. */
#define RT_AGG_DIRECT2_BITS 8
#define RT_AGG_DIRECT2_W (1u << RT_AGG_DIRECT2_BITS)
static inline uint64_t rt_aggtab_direct2(uint64_t a, uint64_t b) { return a << RT_AGG_DIRECT2_BITS | b; }

static inline uint64_t rt_hash_i64(uint64_t x) {
  x ^= x >> 33; x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

void rt_aggtab_init(rt_aggtab *t, int nkeys, const rt_type *key_types, int naggs,
                    const rt_aggkind *kinds, const rt_type *in_types);
/* Finds or inserts the group of a key tuple: vals[k] holds the key's value
 * bits (int64, double bits, string id), isnull[k] its NULL flag. */
int64_t rt_aggtab_group(rt_aggtab *t, const int64_t *vals, const uint8_t *isnull);
/* One-key fast paths (the JIT inlines the probe and calls insert on a miss). */
int64_t rt_aggtab_group_i64(rt_aggtab *t, int64_t v);
int64_t rt_aggtab_insert_i64(rt_aggtab *t, int64_t v, uint64_t hash);
int64_t rt_aggtab_group_null(rt_aggtab *t);
/* Tuple miss path of the JIT's inlined probe: appends the group of a key
 * tuple known to be absent, whose tuple hash (aggtab.c) is `hash`. -1 when
 * out of memory. */
int64_t rt_aggtab_insert_tuple(rt_aggtab *t, const int64_t *vals, const uint8_t *isnull, uint64_t hash);
/* The group of src's group j (src of t's shape) in t, found or inserted:
 * a tuple is probed with src's stored hash and compared by its stored
 * key bits, not hashed again (the merge of morsel tables,
 * runtime/aggmerge.c). -1 when out of memory. */
int64_t rt_aggtab_group_of(rt_aggtab *t, const rt_aggtab *src, int64_t j);
/* Prefetches the slot a key of this hash probes first; _group, a few
 * keys later, reads that slot and prefetches its group's hash and keys,
 * returning the group (the likely hit, for its states) or -1. */
void rt_aggtab_prefetch_slot(const rt_aggtab *t, uint64_t hash);
int64_t rt_aggtab_prefetch_group(const rt_aggtab *t, uint64_t hash);
/* Empties t for reuse (AGGREGATE's morsel tables, exec/driver_par.c):
 * no groups, its arrays kept at their size, so the next morsel's table
 * grows into memory it already holds instead of growing from 256 groups
 * again (a realloc and a zeroing per doubling, per morsel). Only for
 * tables without runtime/aggx.c's state or lazy folding; a table without
 * keys gets its one group back. */
void rt_aggtab_reset(rt_aggtab *t);
/* Makes sure group 0 exists (AGGREGATE without GROUP BY). */
void rt_aggtab_ensure_one(rt_aggtab *t);
/* Output: key columns then one column per aggregate, in a rowbuf the caller
 * initializes with the matching types. */
int rt_aggtab_emit(const rt_aggtab *t, rt_rowbuf *out);
/* The same into an empty out of exactly those columns, taking t's arrays
 * as out's columns where they already are the output (key columns, and
 * COUNT, SUM, MIN, MAX, ANY_VALUE of their own type: no copy of the
 * groups into fresh memory); t is then fit only for rt_aggtab_free. Any
 * other out: rt_aggtab_emit. */
int rt_aggtab_emit_move(rt_aggtab *t, rt_rowbuf *out);
/* Rows at..at+n of out (room reserved; at a multiple of 64, as n is
 * unless the rows end the buffer) from groups of several tables of one
 * shape, as rt_aggtab_emit writes them: row at+r is group
 * (uint32_t)from[r] of tabs[from[r] >> 32]. Every value and validity
 * word of those rows is written (a NULL's value as 0), so the rows need
 * not be zeroed before, and ranges of 64 rows apart may be written on
 * different threads (runtime/aggpart.c's parallel output). Only for
 * aggregates whose tables merge (no runtime/aggx.c state). */
void rt_aggtab_emit_gather(const rt_aggtab *tabs, const uint64_t *from, int64_t n, rt_rowbuf *out,
                           int64_t at);
void rt_aggtab_free(rt_aggtab *t);
/* The second argument's stored type and PERCENTILE's p of aggregate a
 * (after rt_aggtab_init; t->strings is the caller's to set). */
void rt_aggtab_set_arg2(rt_aggtab *t, int a, rt_type in2, double param);

/* aggx.c: one row's update of aggregate a (COUNT_DISTINCT, ARG_MAX,
 * ARG_MIN, GROUP_CONCAT, MEDIAN, PERCENTILE) in group g: v the first
 * argument's bits (int64, double bits, string id), w the second's.
 * Returns 0 or RT_AGGX_NOMEM. rt_aggx_emit writes aggregate a's column c
 * of rows at.. (a row per group); rt_aggtab_emit returns its codes:
 * RT_AGGX_INF (an infinite value reached MEDIAN or PERCENTILE: SQLite's
 * "Inf input to percentile()"), RT_AGGX_STRING (the pool refused a
 * GROUP_CONCAT: rt_strpool_error says why), RT_AGGX_NOMEM. */
enum { RT_AGGX_NOMEM = -1, RT_AGGX_INF = -2, RT_AGGX_STRING = -3, RT_AGGX_OVERFLOW = -4 };
int rt_agg_add(rt_aggtab *t, int32_t a, int64_t g, int64_t v, int32_t vnull, int64_t w,
               int32_t wnull);
int rt_aggx_emit(const rt_aggtab *t, const rt_agg *a, rt_rowbuf *out, int c, int64_t at);
void rt_aggx_free(rt_aggx *x);

/* Aggregates over rows already put in groups (the §9.4 tree operators):
 * rt_aggtab_add_groups appends k groups to a table without keys (nkeys 0)
 * and returns the group count, -1 when out of memory; rt_aggtab_fold is
 * one row's update of aggregate a in group g, for every kind, by the
 * rules of AGGREGATE (v, w as for rt_agg_add; MIN/MAX of strings compare
 * through t->strings). 0, RT_AGGX_NOMEM or RT_AGGX_OVERFLOW (an integer
 * SUM beyond int64). */
int64_t rt_aggtab_add_groups(rt_aggtab *t, int64_t k);
/* Group g's partial sums (SUM, AVG) into the totals of t->fold, the
 * partials zeroed, epoch[g] the current morsel (aggmerge.c). */
void rt_aggtab_refold(rt_aggtab *t, int64_t g);
/* Group g's aggregate states (i, f, n, has) zero, as a new group's
 * (aggtab.c new_group; a kept worker table at a group's first row in a
 * morsel, aggmerge.c). */
void rt_aggtab_zero_states(rt_aggtab *t, int64_t g);
int rt_aggtab_fold(rt_aggtab *t, int a, int64_t g, int64_t v, bool vnull, int64_t w, bool wnull);

/* ---- sort ---------------------------------------------------------------- */

typedef struct rt_sortkey {
  int col;             /* column of the rowbuf */
  bool desc;
  bool nulls_first;
} rt_sortkey;

/* A sort key value as an unsigned 64-bit number whose unsigned order is
 * the key's order (runtime/sort.c, runtime/topk.c): ints flip the sign
 * bit, doubles flip every bit when negative and set the sign bit
 * otherwise (-0.0 folds into 0.0). */
static inline uint64_t rt_sortable_i64(int64_t v) { return (uint64_t)v ^ (1ull << 63); }
static inline uint64_t rt_sortable_f64(double d) {
  if (d == 0) d = 0;   /* -0.0 == 0.0 */
  uint64_t u;
  memcpy(&u, &d, 8);
  return (u >> 63) ? ~u : u | (1ull << 63);
}

/* Stable sort of a rowbuf's rows: returns a malloc'd permutation of
 * 0..nrows-1 (NULL when nrows == 0). Strings compare by rt_str_cmp,
 * numbers numerically. */
uint32_t *rt_sort_perm(const rt_rowbuf *b, int nkeys, const rt_sortkey *keys,
                       const rt_strpool *sp);
/* The same on several threads (runtime/par.h; NULL: this one): the same
 * permutation. */
struct rt_par;
uint32_t *rt_sort_perm_par(const rt_rowbuf *b, int nkeys, const rt_sortkey *keys,
                           const rt_strpool *sp, const struct rt_par *par);

#endif
