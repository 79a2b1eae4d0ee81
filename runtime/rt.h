/*
 * rt.h — the runtime's data model, shared by every layer.
 *
 * Values: integer kinds (id, uint32, int32, int64, bool), double, and string
 * (a 32-bit id into the engine's string pool, so equality and grouping
 * compare ids). Nullable columns carry a validity bitvector: bit i of word
 * i/64 set means row i is valid.
 *
 * A finalized table (rt_table) is a set of contiguous column arrays; it is
 * immutable once finalized. A batch (rt_batch) holds up to RT_BATCH rows;
 * each column in it is a view (rt_view) over contiguous values, optional
 * validity bits, and an optional selection index, so filters and reorders
 * never copy values.
 *
 * Memory: rt_arena is a bump allocator; everything a query or a run
 * allocates comes from an arena whose lifetime is the query or the run.
 */
#ifndef PJ_RT_H
#define PJ_RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RT_BATCH 8192

/* ---- errors ----------------------------------------------------------- */

/* A sticky error: the first one set wins. offset is a byte offset into the
 * text being compiled (-1 when the error has no position, e.g. runtime).
 * Messages read "<STAGE>: <text>". */
typedef struct rt_err {
  int set;
  int offset;
  char msg[512];
} rt_err;

/* Sets the error if none is set yet; returns 0 so callers can
 * `return rt_errorf(...)`. */
int rt_errorf(rt_err *e, int offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- arena ------------------------------------------------------------ */

typedef struct rt_arena_block rt_arena_block;
typedef struct rt_arena {
  rt_arena_block *head;
  size_t used_total;   /* bytes handed out, for memory accounting */
} rt_arena;

void rt_arena_init(rt_arena *a);
void *rt_arena_alloc(rt_arena *a, size_t n);         /* zeroed, 16-aligned */
void *rt_arena_memdup(rt_arena *a, const void *p, size_t n);
char *rt_arena_strdup(rt_arena *a, const char *s);
char *rt_arena_strndup(rt_arena *a, const char *s, size_t n);
char *rt_arena_printf(rt_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void rt_arena_free(rt_arena *a);                     /* frees every block */

/* A growable byte buffer on malloc (for row stores and text dumps). */
typedef struct rt_buf {
  char *data;
  size_t len, cap;
  bool failed;   /* a growth failed and text was dropped (out of memory) */
} rt_buf;
void rt_buf_reserve(rt_buf *b, size_t extra);
void rt_buf_append(rt_buf *b, const void *p, size_t n);
void rt_buf_printf(rt_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rt_buf_free(rt_buf *b);

/* ---- types ------------------------------------------------------------ */

typedef enum rt_type {
  RT_ID = 0,   /* implicit row index; in a view: value = base + index */
  RT_U32,
  RT_I32,
  RT_I64,
  RT_F64,
  RT_STR,      /* uint32_t string id */
  RT_BOOL,     /* int64_t 0/1 */
  RT_NULLT,    /* type of a bare NULL literal; never stored */
} rt_type;

const char *rt_type_name(rt_type t);       /* "id", "uint32", … */
static inline bool rt_type_is_int(rt_type t) { return t <= RT_I64 || t == RT_BOOL; }
/* Bytes per stored value (0 for RT_ID). */
size_t rt_type_size(rt_type t);

static inline bool rt_bit(const uint64_t *bits, uint32_t i) {
  return (bits[i >> 6] >> (i & 63)) & 1;
}
static inline void rt_bit_set(uint64_t *bits, uint32_t i) { bits[i >> 6] |= 1ull << (i & 63); }
static inline void rt_bit_clear(uint64_t *bits, uint32_t i) { bits[i >> 6] &= ~(1ull << (i & 63)); }
#define RT_BITWORDS(n) (((size_t)(n) + 63) / 64)

/* ---- string pool ------------------------------------------------------ */

/* Interns byte strings; equal bytes get equal ids. Id 0 is the empty
 * string. Strings are NUL-terminated in the pool (and may contain NUL
 * bytes before their length). Owned by the engine; ids stay valid for the
 * engine's life. */
typedef struct rt_strpool rt_strpool;
rt_strpool *rt_strpool_new(void);
void rt_strpool_free(rt_strpool *p);
uint32_t rt_str_intern(rt_strpool *p, const char *s, size_t len);
const char *rt_str_get(const rt_strpool *p, uint32_t id, size_t *len);
/* The id of s if it was interned, else RT_STR_FAILED (the pool is left
 * as it is: lookups of strings a table cannot hold add nothing). */
uint32_t rt_str_find(const rt_strpool *p, const char *s, size_t len);
/* Binary (memcmp, then length) order of two ids: <0, 0, >0. */
int rt_str_cmp(const rt_strpool *p, uint32_t a, uint32_t b);
/* Strings longer than the pool's maximum (4 GiB - 1 bytes, the most a
 * length of 32 bits holds; lower only for tests) are refused, as are
 * strings when memory runs out: rt_str_intern then returns 0 and
 * rt_strpool_error says why ("string too long: a string holds at most
 * M bytes", "out of memory"). rt_str_fits checks a length ahead
 * of building the string (false, with the reason set, when too long). */
bool rt_str_fits(rt_strpool *p, size_t len);
void rt_strpool_set_max_len(rt_strpool *p, size_t n);
const char *rt_strpool_error(const rt_strpool *p);
/* Sets the reason to "out of memory", for a helper whose own allocation
 * failed before it reached the pool. */
void rt_strpool_set_oom(rt_strpool *p);
/* What string helpers (strfn.h) return instead of an id when the pool
 * refused their result: never a valid id, so the backends can tell it
 * from the empty string and stop the query with rt_strpool_error. */
#define RT_STR_FAILED UINT32_MAX
/* What a helper whose SQL result may be NULL for non-NULL arguments
 * (printf) returns for that NULL: never a valid id either (the pool stops
 * below both). */
#define RT_STR_NULL (UINT32_MAX - 1)
/* Number of interned strings (ids are 0..count-1), and bytes held. */
uint32_t rt_strpool_count(const rt_strpool *p);
size_t rt_strpool_bytes(const rt_strpool *p);

/* ---- columns, views and batches -------------------------------------- */

/* A column in a batch. The value at position i (0 <= i < batch n) is
 *   r = sel ? sel[i] : i;  value = type == RT_ID ? base + r : data[r]
 * and it is NULL when valid && !rt_bit(valid, r). data and valid are
 * indexed by the same r. */
typedef struct rt_view {
  rt_type type;
  const void *data;
  const uint64_t *valid;
  const uint32_t *sel;
  int64_t base;
} rt_view;

static inline uint32_t rt_view_row(const rt_view *v, uint32_t i) { return v->sel ? v->sel[i] : i; }
static inline bool rt_view_is_null(const rt_view *v, uint32_t i) {
  return v->valid && !rt_bit(v->valid, rt_view_row(v, i));
}
/* Reads any integer kind (id, u32, i32, i64, bool) as int64. */
static inline int64_t rt_view_i64(const rt_view *v, uint32_t i) {
  uint32_t r = rt_view_row(v, i);
  switch (v->type) {
  case RT_ID: return v->base + r;
  case RT_U32: return ((const uint32_t *)v->data)[r];
  case RT_I32: return ((const int32_t *)v->data)[r];
  case RT_STR: return ((const uint32_t *)v->data)[r];
  case RT_F64: return (int64_t)((const double *)v->data)[r];
  default: return ((const int64_t *)v->data)[r];
  }
}
static inline double rt_view_f64(const rt_view *v, uint32_t i) {
  if (v->type == RT_F64) return ((const double *)v->data)[rt_view_row(v, i)];
  return (double)rt_view_i64(v, i);
}
static inline uint32_t rt_view_str(const rt_view *v, uint32_t i) {
  return ((const uint32_t *)v->data)[rt_view_row(v, i)];
}

/* A batch: n positions, of which the active ones are listed in `active`
 * (ascending; NULL = all n are active). cols is indexed by IR column id
 * (see ir/plan.h); only the columns live at this point are filled in. */
typedef struct rt_batch {
  uint32_t n;
  uint32_t nactive;
  uint32_t *active;
  int ncols;
  rt_view *cols;
} rt_batch;

/* ---- finalized tables ------------------------------------------------- */

typedef struct rt_column {
  char *name;
  rt_type type;
  void *data;        /* n values of rt_type_size(type); NULL for RT_ID */
  uint64_t *valid;   /* NULL when no value is NULL */
  bool sorted;       /* non-decreasing (NULLs first) */
  bool nullable;     /* valid != NULL */
  bool borrowed;     /* data/valid belong to the table's `base` or its maker (not freed) */
} rt_column;

typedef struct rt_table {
  char *name;
  int64_t nrows;
  int ncols;
  rt_column *cols;
  int refs;          /* catalog + running queries; freed at 0 */
  struct rt_table *base;  /* owner of the borrowed columns (one reference) */
  struct rt_tabindexes *indexes;  /* tabindex.h: built on demand, freed with the table */
} rt_table;

/* Builds a table column by column. Values are appended as int64 / double /
 * string id / NULL; finalize picks the narrowest storage the values allow
 * only where told (see rt_table_finish). Owns its memory until finished. */
typedef struct rt_table_builder rt_table_builder;
rt_table_builder *rt_tb_new(const char *name, int ncols, const char *const *names,
                            const rt_type *types);
void rt_tb_append_i64(rt_table_builder *b, int col, int64_t v);
void rt_tb_append_f64(rt_table_builder *b, int col, double v);
void rt_tb_append_str(rt_table_builder *b, int col, uint32_t id);
void rt_tb_append_null(rt_table_builder *b, int col);
/* Finishes: every column must have the same number of values. Computes
 * `sorted`; a column named "id" of an integer type whose values are exactly
 * 0..n-1 becomes RT_ID. Frees the builder. */
rt_table *rt_tb_finish(rt_table_builder *b);
void rt_tb_abort(rt_table_builder *b);

/* Shared by rt_tb_finish and rt_rowbuf_to_table: finalizes column c of n
 * rows whose data (malloc'd, n values of c->type, which is the stored type
 * RT_I64, RT_F64 or RT_STR) and valid (malloc'd or NULL) are filled in.
 * Drops validity bits with no NULL in them; narrows RT_I64 to `declared`
 * (RT_U32, RT_I32, RT_BOOL) when every value fits, else keeps RT_I64; turns
 * an integer column named "id" (or declared RT_ID) holding exactly 0..n-1
 * with no NULL into RT_ID (data freed); computes `sorted` (numbers only:
 * string ids carry no order without the pool). Returns 0 on out of memory. */
int rt_column_finish(rt_column *c, int64_t n, rt_type declared);
/* Column c reads n rows of data and valid (a row buffer's stored column of
 * `type`, RT_BOOL for predicates) in place, borrowed (never freed with
 * the table): validity only when a NULL is among them, `sorted` as
 * rt_column_finish computes it, no narrowing. */
void rt_column_borrow(rt_column *c, rt_type type, void *data, uint64_t *valid, int64_t n);
/* Allocates an empty table shell with ncols zeroed columns, refs = 1. */
rt_table *rt_table_alloc(const char *name, int ncols);

/* A table named `name` whose n columns are columns cols[i] of src, shared
 * rather than copied (src stays alive as long as the new table), named
 * names[i] (NULL or a NULL entry: src's name), followed by `extra` empty
 * columns for the caller to fill (name, type, data, valid, nrows already
 * set to src's). Views of trace tables (slices, sched_slice, slice.cat)
 * cost no memory this way. NULL when out of memory. */
rt_table *rt_table_share(rt_table *src, const char *name, int n, const int *cols,
                         const char *const *names, int extra);

rt_table *rt_table_ref(rt_table *t);
void rt_table_unref(rt_table *t);
int rt_table_find_col(const rt_table *t, const char *name); /* ASCII case-insensitive; -1 */

/* Fills a view of rows [start, start+count) of column c (no copy). start
 * must be a multiple of 64 when the column has validity bits. */
void rt_table_view(const rt_table *t, int c, int64_t start, rt_view *out);

/* ---- catalog ---------------------------------------------------------- */

/* Finalized tables by name (case-insensitive). Holds one reference each. */
typedef struct rt_catalog rt_catalog;
rt_catalog *rt_catalog_new(void);
void rt_catalog_free(rt_catalog *c);
rt_table *rt_catalog_get(rt_catalog *c, const char *name);
/* Replaces any table of that name; takes the caller's reference. False
 * out of memory (the reference dropped, the catalog as it was). */
bool rt_catalog_put(rt_catalog *c, rt_table *t);
void rt_catalog_remove(rt_catalog *c, const char *name);
int rt_catalog_count(const rt_catalog *c);
rt_table *rt_catalog_at(rt_catalog *c, int i);

/* ---- ASCII helpers ---------------------------------------------------- */
/* A malloc'd copy of s (NULL when out of memory): strdup, which C17 lacks. */
char *rt_strdup(const char *s);
int rt_strieq(const char *a, const char *b);
int rt_strnieq(const char *a, const char *b, size_t n);

/* Monotonic clock in nanoseconds. */
int64_t rt_now_ns(void);

#endif
