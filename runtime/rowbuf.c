/*
 * rowbuf.c — columnar growable row storage for breakers (ORDER BY and
 * AGGREGATE inputs/outputs, query results).
 *
 * Values are stored widened (ints as int64, doubles, string ids as uint32)
 * so a buffer's layout depends only on the column's stored type, which is
 * what generated code relies on. Capacity is kept a multiple of 64 rows so
 * validity words are always whole, and rows beyond nrows are zero and NULL,
 * so a writer may fill a reserved row and just bump nrows. A buffer kept
 * for the next run of the same plan (a table function's result) is
 * emptied by zeroing only the rows it held (rt_rowbuf_clear).
 */
#include <stdlib.h>

#include "budget.h"
#include "hugepage.h"
#include "store.h"

bool rt_rowbuf_init(rt_rowbuf *b, int ncols, const rt_type *types) {
  memset(b, 0, sizeof *b);
  b->ncols = ncols;
  size_t n = ncols > 0 ? (size_t)ncols : 1;
  b->types = malloc(n * sizeof *b->types);
  b->data = calloc(n, sizeof *b->data);
  b->valid = calloc(n, sizeof *b->valid);
  if (!b->types || !b->data || !b->valid) {
    free(b->types);
    free(b->data);
    free(b->valid);
    b->types = NULL;
    b->data = NULL;
    b->valid = NULL;
    b->ncols = 0;
    rt_budget_oom();
    return false;
  }
  for (int c = 0; c < ncols; c++) b->types[c] = rt_store_type(types[c]);
  return true;
}

/* Bytes of column data and validity for `cap` rows: what the buffer
 * charges to the run's memory budget (budget.h). */
static int64_t rowbuf_bytes(const rt_rowbuf *b, int64_t cap) {
  int64_t n = 0;
  for (int c = 0; c < b->ncols; c++)
    n += cap * (int64_t)rt_type_size(b->types[c]) + (int64_t)RT_BITWORDS(cap) * 8;
  return n;
}

void rt_rowbuf_reserve(rt_rowbuf *b, int64_t extra) {
  int64_t need = b->nrows + extra;
  if (need <= b->cap) return;
  int64_t cap = b->cap ? b->cap * 2 : 1024;
  while (cap < need) cap *= 2;
  cap = (cap + 63) & ~(int64_t)63;
  /* Over the run's budget: behave as if out of memory (callers check cap). */
  if (!rt_budget_charge(rowbuf_bytes(b, cap) - rowbuf_bytes(b, b->cap))) return;
  for (int c = 0; c < b->ncols; c++) {
    size_t sz = rt_type_size(b->types[c]);
    char *d = realloc(b->data[c], (size_t)cap * sz);
    uint64_t *v = realloc(b->valid[c], RT_BITWORDS(cap) * 8);
    if (d) b->data[c] = d;
    if (v) b->valid[c] = v;
    /* Out of memory leaves the buffer at its old capacity; later writes
     * would overflow, so treat it as fatal-for-the-run upstream. Keep the
     * invariant that [old cap, cap) is zero for the columns we did grow. */
    if (!d || !v) {
      rt_budget_oom();
      return;
    }
    rt_advise_huge(d, (size_t)cap * sz);   /* e.g. an aggregation's key columns, read at random */
    memset(d + (size_t)b->cap * sz, 0, (size_t)(cap - b->cap) * sz);
    memset(v + RT_BITWORDS(b->cap), 0, (RT_BITWORDS(cap) - RT_BITWORDS(b->cap)) * 8);
  }
  b->cap = cap;
}

bool rt_rowbuf_reserve_raw(rt_rowbuf *b, int64_t n) {
  if (b->cap > 0 || b->nrows > 0) {   /* not empty: the usual growth */
    rt_rowbuf_reserve(b, n);
    return b->cap >= b->nrows + n;
  }
  int64_t cap = (n + 63) & ~(int64_t)63;
  if (cap == 0) return true;
  if (!rt_budget_charge(rowbuf_bytes(b, cap))) return false;
  for (int c = 0; c < b->ncols; c++) {
    size_t sz = rt_type_size(b->types[c]);
    b->data[c] = malloc((size_t)cap * sz);
    b->valid[c] = malloc(RT_BITWORDS(cap) * 8);
    if (!b->data[c] || !b->valid[c]) {
      for (int k = 0; k <= c; k++) {
        free(b->data[k]);
        free(b->valid[k]);
        b->data[k] = NULL;
        b->valid[k] = NULL;
      }
      rt_budget_credit(rowbuf_bytes(b, cap));
      rt_budget_oom();
      return false;
    }
    rt_advise_huge(b->data[c], (size_t)cap * sz);
    memset((char *)b->data[c] + (size_t)n * sz, 0, (size_t)(cap - n) * sz);
  }
  b->cap = cap;
  return true;
}

void rt_rowbuf_free(rt_rowbuf *b) {
  if (b->types) rt_budget_credit(rowbuf_bytes(b, b->cap));
  for (int c = 0; c < b->ncols; c++) {
    if (b->data) free(b->data[c]);
    if (b->valid) free(b->valid[c]);
  }
  free(b->types);
  free(b->data);
  free(b->valid);
  memset(b, 0, sizeof *b);
}

void rt_rowbuf_clear(rt_rowbuf *b) {
  for (int c = 0; c < b->ncols && b->nrows > 0; c++) {
    memset(b->data[c], 0, (size_t)b->nrows * rt_type_size(b->types[c]));
    memset(b->valid[c], 0, RT_BITWORDS(b->nrows) * 8);
  }
  b->nrows = 0;
}

bool rt_rowbuf_refill(rt_rowbuf *b, int ncols, const rt_type *types) {
  bool same = b->types && b->ncols == ncols && b->nrows == 0;
  for (int c = 0; same && c < ncols; c++) same = b->types[c] == rt_store_type(types[c]);
  if (!same) {
    rt_rowbuf_free(b);
    return false;
  }
  /* Over the budget: the run stops with the budget's error, as it would
   * at its first growth of a new buffer. */
  rt_budget_charge(rowbuf_bytes(b, b->cap));
  return true;
}

int64_t rt_rowbuf_bytes(const rt_rowbuf *b) { return rowbuf_bytes(b, b->cap); }

bool rt_rowbuf_add_cols(rt_rowbuf *b, int n, const rt_type *types) {
  if (n <= 0) return true;
  int nc = b->ncols + n;
  rt_type *t = realloc(b->types, (size_t)nc * sizeof *t);
  if (t) b->types = t;
  void **d = t ? realloc(b->data, (size_t)nc * sizeof *d) : NULL;
  if (d) b->data = d;
  uint64_t **v = d ? realloc(b->valid, (size_t)nc * sizeof *v) : NULL;
  if (v) b->valid = v;
  if (!v) {
    rt_budget_oom();
    return false;
  }
  int64_t bytes = 0;
  for (int j = 0; j < n; j++)
    bytes += b->cap * (int64_t)rt_type_size(rt_store_type(types[j])) + (int64_t)RT_BITWORDS(b->cap) * 8;
  if (!rt_budget_charge(bytes)) return false;
  size_t cap = b->cap > 0 ? (size_t)b->cap : 1;
  for (int j = 0; j < n; j++) {
    int c = b->ncols + j;
    b->types[c] = rt_store_type(types[j]);
    b->data[c] = calloc(cap, rt_type_size(b->types[c]));
    b->valid[c] = calloc(RT_BITWORDS(cap), 8);
    if (!b->data[c] || !b->valid[c]) {
      for (int i = 0; i <= j; i++) {
        free(b->data[b->ncols + i]);
        free(b->valid[b->ncols + i]);
      }
      rt_budget_credit(bytes);
      rt_budget_oom();
      return false;
    }
  }
  b->ncols = nc;
  return true;
}

/* Sets bits [from, from+n). */
static void set_bits(uint64_t *bits, int64_t from, int64_t n) {
  int64_t i = from, end = from + n;
  for (; i < end && (i & 63); i++) bits[i >> 6] |= 1ull << (i & 63);
  for (; i + 64 <= end; i += 64) bits[i >> 6] = ~0ull;
  for (; i < end; i++) bits[i >> 6] |= 1ull << (i & 63);
}

/* Row r of the view for output position j. */
#define ROW(j) (v->sel ? v->sel[active ? active[j] : (j)] : (active ? active[j] : (j)))

/* One column: typed loops over the source kind; no per-row type switch. */
static void append_col(rt_rowbuf *b, int c, const rt_view *v, const uint32_t *active, uint32_t n) {
  int64_t at = b->nrows;
  uint64_t *valid = b->valid[c];
  if (v->type == RT_NULLT) return;   /* rows stay zero and NULL */
  switch (b->types[c]) {
  case RT_F64: {
    double *out = (double *)b->data[c] + at;
    if (v->type == RT_F64) {
      const double *d = v->data;
      if (!v->sel && !active) memcpy(out, d, (size_t)n * 8);
      else for (uint32_t j = 0; j < n; j++) out[j] = d[ROW(j)];
    } else {
      for (uint32_t j = 0; j < n; j++) out[j] = rt_view_f64(v, active ? active[j] : j);
    }
    break;
  }
  case RT_STR: {
    uint32_t *out = (uint32_t *)b->data[c] + at;
    const uint32_t *d = v->data;
    if (!v->sel && !active) memcpy(out, d, (size_t)n * 4);
    else for (uint32_t j = 0; j < n; j++) out[j] = d[ROW(j)];
    break;
  }
  default: {
    int64_t *out = (int64_t *)b->data[c] + at;
    switch (v->type) {
    case RT_I64: case RT_BOOL: {
      const int64_t *d = v->data;
      if (!v->sel && !active) memcpy(out, d, (size_t)n * 8);
      else for (uint32_t j = 0; j < n; j++) out[j] = d[ROW(j)];
      break;
    }
    case RT_ID:
      for (uint32_t j = 0; j < n; j++) out[j] = v->base + ROW(j);
      break;
    case RT_U32: case RT_STR: {
      const uint32_t *d = v->data;
      for (uint32_t j = 0; j < n; j++) out[j] = d[ROW(j)];
      break;
    }
    case RT_I32: {
      const int32_t *d = v->data;
      for (uint32_t j = 0; j < n; j++) out[j] = d[ROW(j)];
      break;
    }
    default:
      for (uint32_t j = 0; j < n; j++) out[j] = rt_view_i64(v, active ? active[j] : j);
      break;
    }
  }
  }
  if (!v->valid) {
    set_bits(valid, at, n);
  } else {
    for (uint32_t j = 0; j < n; j++) {
      uint32_t r = ROW(j);
      if (rt_bit(v->valid, r)) rt_bit_set(valid, (uint32_t)(at + j));
    }
  }
}
#undef ROW

void rt_rowbuf_append_views(rt_rowbuf *b, const rt_view *views, const uint32_t *active,
                            uint32_t nactive) {
  if (nactive == 0) return;
  rt_rowbuf_reserve(b, nactive);
  if (b->cap < b->nrows + nactive) return;   /* out of memory */
  for (int c = 0; c < b->ncols; c++) append_col(b, c, &views[c], active, nactive);
  b->nrows += nactive;
}

void rt_rowbuf_view(const rt_rowbuf *b, int c, int64_t start, const uint32_t *perm,
                    rt_view *out) {
  out->type = b->types[c];
  out->base = 0;
  if (perm) {
    /* Positions index the permutation; rows index the whole arrays. */
    out->data = b->data[c];
    out->valid = b->valid[c];
    out->sel = perm + start;
  } else {
    out->data = b->data[c] ? (const char *)b->data[c] + (size_t)start * rt_type_size(b->types[c])
                           : NULL;
    out->valid = b->valid[c] ? b->valid[c] + start / 64 : NULL;
    out->sel = NULL;
  }
}

rt_table *rt_rowbuf_to_table(rt_rowbuf *b, const char *name, const char *const *names,
                             const bool *bools) {
  rt_table *t = rt_table_alloc(name, b->ncols);
  if (!t) {
    rt_rowbuf_free(b);
    return NULL;
  }
  t->nrows = b->nrows;
  int ok = 1;
  for (int c = 0; c < b->ncols; c++) {
    rt_column *col = &t->cols[c];
    size_t len = strlen(names[c]);
    col->name = malloc(len + 1);
    if (col->name) memcpy(col->name, names[c], len + 1);
    col->type = b->types[c];
    /* Ownership of the arrays moves to the table; give back the slack. */
    size_t bytes = (size_t)(b->nrows ? b->nrows : 1) * rt_type_size(b->types[c]);
    void *d = b->data[c] ? realloc(b->data[c], bytes) : malloc(bytes);
    col->data = d ? d : b->data[c];
    col->valid = b->valid[c];
    b->data[c] = NULL;
    b->valid[c] = NULL;
    rt_type declared = bools && bools[c] && col->type == RT_I64 ? RT_BOOL : col->type;
    if (!col->name || !col->data || !rt_column_finish(col, t->nrows, declared)) ok = 0;
  }
  rt_rowbuf_free(b);
  if (!ok) {
    rt_table_unref(t);
    return NULL;
  }
  return t;
}
