/*
 * tables.c — the builder's growable columnar tables (one per entry of
 * schema.def) and their conversion into finalized rt_tables.
 *
 * A column grows by doubling; a new row starts NULL in every column. Data
 * is kept in the final stored type (int64, double, uint32 for strings and
 * RT_U32 columns), so finishing moves the arrays into the table instead of
 * copying them (the import's peak memory is the tables, not twice them):
 * each array is trimmed to its row count, validity bits are dropped when
 * no value is NULL, and sortedness is computed for the SQL index planner.
 */
#include <stdlib.h>

#include "trace.h"

/* Each IM_TABLE closes the previous table's column array and opens its
 * own; the first closes a dummy. */
#define IM_TABLE(T, name) }; static const im_colschema cols_##T[] = {
#define IM_COL(T, C, name, type) {name, type},
static const im_colschema cols__dummy[] __attribute__((unused)) = {{NULL, RT_ID},
#include "schema.def"
};
#undef IM_TABLE
#undef IM_COL

const im_schema im_schemas[IM_NTABLES] = {
#define IM_TABLE(T, name) [IM_T_##T] = {name, (int)(sizeof cols_##T / sizeof *cols_##T), cols_##T},
#define IM_COL(T, C, name, type)
#include "schema.def"
#undef IM_TABLE
#undef IM_COL
};

/* ---- growth -------------------------------------------------------------- */

int im_grow(void **p, int64_t *cap, int64_t need, size_t sz) {
  if (need <= *cap) return 1;
  int64_t c = *cap ? *cap : 16;
  while (c < need) c *= 2;
  void *np = realloc(*p, (size_t)c * sz);
  if (!np) return 0;
  *p = np;
  *cap = c;
  return 1;
}

static inline size_t col_size(rt_type t) {
  switch (t) {
  case RT_ID: return 0;
  case RT_U32: case RT_I32: case RT_STR: return 4;
  default: return 8;
  }
}

/* Grows every column of tab to cap rows (fresh arrays come from calloc;
 * grown ones keep their bytes, the new rows are zeroed in chunks as
 * im_append reaches them, so pages are touched as rows are written and an
 * over-sized capacity costs address space, not memory). */
static int tab_grow(im_tab *tab, int64_t cap) {
  const im_schema *s = tab->s;
  int fresh = tab->cap == 0;   /* every array comes from calloc: all rows zero and NULL */
  for (int c = 0; c < s->ncols; c++) {
    size_t sz = col_size(s->cols[c].type);
    if (!sz) continue;
    void *d = tab->data[c] ? realloc(tab->data[c], (size_t)cap * sz) : calloc((size_t)cap, sz);
    if (!d) return 0;
    tab->data[c] = d;
    uint64_t *v = tab->valid[c] ? realloc(tab->valid[c], RT_BITWORDS(cap) * 8)
                                : calloc(RT_BITWORDS(cap), 8);
    if (!v) return 0;
    tab->valid[c] = v;
  }
  tab->cap = cap;
  if (fresh) tab->zeroed = cap;
  return 1;
}

enum { ZERO_CHUNK = 4096 };   /* rows zeroed at a time */

/* Zeroes rows [tab->zeroed, tab->zeroed + ZERO_CHUNK) (capped at cap): the
 * data of a NULL is zero, so every reader sees the same bytes, and the
 * validity words of the chunk are zero (NULL). */
static void tab_zero_chunk(im_tab *tab) {
  const im_schema *s = tab->s;
  int64_t from = tab->zeroed, to = from + ZERO_CHUNK < tab->cap ? from + ZERO_CHUNK : tab->cap;
  /* validity words: whole words from the one holding `from` */
  int64_t w0 = from / 64, w1 = (int64_t)RT_BITWORDS(to);
  uint64_t keep = (1ull << (from % 64)) - 1;   /* bits of rows below from in word w0 */
  for (int c = 0; c < s->ncols; c++) {
    size_t sz = col_size(s->cols[c].type);
    if (!sz) continue;
    memset((char *)tab->data[c] + (size_t)from * sz, 0, (size_t)(to - from) * sz);
    uint64_t *v = tab->valid[c];
    v[w0] &= keep;
    if (w1 > w0 + 1) memset(v + w0 + 1, 0, (size_t)(w1 - w0 - 1) * 8);
  }
  tab->zeroed = to;
}

int64_t im_append(im_trace *t, im_table_id id) {
  if (t->failed) return IM_NONE;
  im_tab *tab = &t->tabs[id];
  if (tab->n == tab->cap && !tab_grow(tab, tab->cap ? tab->cap * 2 : 256))
    return im_oom(t), IM_NONE;
  if (tab->n == tab->zeroed) tab_zero_chunk(tab);
  return tab->n++;
}

void im_reserve(im_trace *t, im_table_id id, int64_t rows) {
  im_tab *tab = &t->tabs[id];
  if (t->failed || rows <= 0 || tab->n + rows <= tab->cap) return;
  if (!tab_grow(tab, tab->n + rows)) im_oom(t);
}

int64_t im_rows(const im_trace *t, im_table_id id) { return t->tabs[id].n; }

static int cell_ok(const im_trace *t, im_table_id id, int col, int64_t row) {
  const im_tab *tab = &t->tabs[id];
  return !t->failed && row >= 0 && row < tab->n && tab->data[col];
}

void im_set_i64(im_trace *t, im_table_id id, int col, int64_t row, int64_t v) {
  if (!cell_ok(t, id, col, row)) return;
  im_tab *tab = &t->tabs[id];
  switch (tab->s->cols[col].type) {
  case RT_F64: ((double *)tab->data[col])[row] = (double)v; break;
  case RT_U32: case RT_STR: ((uint32_t *)tab->data[col])[row] = (uint32_t)v; break;
  case RT_I32: ((int32_t *)tab->data[col])[row] = (int32_t)v; break;
  default: ((int64_t *)tab->data[col])[row] = v; break;
  }
  rt_bit_set(tab->valid[col], (uint32_t)row);
}

void im_set_f64(im_trace *t, im_table_id id, int col, int64_t row, double v) {
  if (!cell_ok(t, id, col, row)) return;
  im_tab *tab = &t->tabs[id];
  if (tab->s->cols[col].type != RT_F64) {
    im_set_i64(t, id, col, row, (int64_t)v);
    return;
  }
  ((double *)tab->data[col])[row] = v;
  rt_bit_set(tab->valid[col], (uint32_t)row);
}

void im_set_str(im_trace *t, im_table_id id, int col, int64_t row, uint32_t s) {
  if (s == IM_NULL_STR) {
    im_set_null(t, id, col, row);
    return;
  }
  im_set_i64(t, id, col, row, s);
}

void im_set_null(im_trace *t, im_table_id id, int col, int64_t row) {
  if (!cell_ok(t, id, col, row)) return;
  im_tab *tab = &t->tabs[id];
  size_t sz = col_size(tab->s->cols[col].type);
  memset((char *)tab->data[col] + (size_t)row * sz, 0, sz);
  rt_bit_clear(tab->valid[col], (uint32_t)row);
}

int im_is_null(const im_trace *t, im_table_id id, int col, int64_t row) {
  const im_tab *tab = &t->tabs[id];
  if (row < 0 || row >= tab->n) return 1;
  if (!tab->data[col]) return 0;   /* an id column */
  return !rt_bit(tab->valid[col], (uint32_t)row);
}

int64_t im_get_i64(const im_trace *t, im_table_id id, int col, int64_t row) {
  const im_tab *tab = &t->tabs[id];
  if (row < 0 || row >= tab->n) return IM_NONE;
  if (!tab->data[col]) return row;
  if (!rt_bit(tab->valid[col], (uint32_t)row)) return IM_NONE;
  switch (tab->s->cols[col].type) {
  case RT_F64: return (int64_t)((const double *)tab->data[col])[row];
  case RT_U32: case RT_STR: return ((const uint32_t *)tab->data[col])[row];
  case RT_I32: return ((const int32_t *)tab->data[col])[row];
  default: return ((const int64_t *)tab->data[col])[row];
  }
}

uint32_t im_get_str(const im_trace *t, im_table_id id, int col, int64_t row) {
  const im_tab *tab = &t->tabs[id];
  if (row < 0 || row >= tab->n || !rt_bit(tab->valid[col], (uint32_t)row)) return IM_NULL_STR;
  return ((const uint32_t *)tab->data[col])[row];
}

/* ---- finishing ------------------------------------------------------------ */

static int any_null(const uint64_t *valid, int64_t n) {
  int64_t full = n / 64;
  for (int64_t w = 0; w < full; w++)
    if (valid[w] != ~0ull) return 1;
  if (n % 64) {
    uint64_t m = (1ull << (n % 64)) - 1;
    if ((valid[full] & m) != m) return 1;
  }
  return 0;
}

/* Non-decreasing with the NULLs first (rt_column.sorted). */
static int col_sorted(const rt_column *c, int64_t n) {
  int seen = 0;
  double pf = 0;
  int64_t pi = 0;
  for (int64_t i = 0; i < n; i++) {
    if (c->valid && !rt_bit(c->valid, (uint32_t)i)) {
      if (seen) return 0;
      continue;
    }
    if (c->type == RT_F64) {
      double v = ((const double *)c->data)[i];
      if (seen && !(v >= pf)) return 0;
      pf = v;
    } else {
      int64_t v = c->type == RT_U32 ? ((const uint32_t *)c->data)[i]
                                    : ((const int64_t *)c->data)[i];
      if (seen && v < pi) return 0;
      pi = v;
    }
    seen = 1;
  }
  return 1;
}

rt_table *im_tab_finish(im_tab *tab, const char *name) {
  const im_schema *s = tab->s;
  rt_table *out = rt_table_alloc(name, s->ncols);
  if (!out) return NULL;
  int64_t n = tab->n;
  out->nrows = n;
  for (int c = 0; c < s->ncols; c++) {
    rt_column *col = &out->cols[c];
    size_t len = strlen(s->cols[c].name);
    col->name = malloc(len + 1);
    if (!col->name) goto oom;
    memcpy(col->name, s->cols[c].name, len + 1);
    col->type = s->cols[c].type;
    if (col->type == RT_ID) {
      col->sorted = true;
      continue;
    }
    size_t sz = col_size(col->type);
    /* Trim to the rows: large blocks shrink in place (mremap). */
    void *d = tab->data[c] ? realloc(tab->data[c], n ? (size_t)n * sz : sz) : malloc(sz);
    if (!d) goto oom;
    tab->data[c] = NULL;
    col->data = d;
    uint64_t *v = tab->valid[c];
    tab->valid[c] = NULL;
    if (v && any_null(v, n)) {
      uint64_t *tv = realloc(v, RT_BITWORDS(n ? n : 1) * 8);
      col->valid = tv ? tv : v;
      col->nullable = true;
    } else {
      free(v);
    }
    col->sorted = col->type != RT_STR && col_sorted(col, n);
  }
  im_tab_free(tab);
  return out;
oom:
  rt_table_unref(out);
  return NULL;
}

void im_tab_free(im_tab *tab) {
  for (int c = 0; c < IM_MAXCOLS; c++) {
    free(tab->data[c]);
    free(tab->valid[c]);
    tab->data[c] = NULL;
    tab->valid[c] = NULL;
  }
  tab->n = tab->cap = tab->zeroed = 0;
}
