/*
 * table.c — finalized columnar tables: the builder (rt_tb_*), column
 * finalization shared with rt_rowbuf_to_table, references, lookup by name
 * and batch views.
 *
 * A table owns malloc'd memory (name, column names, data, validity) and is
 * freed when its last reference goes. The builder stores values in their
 * stored type (int64, double, string id) while appending; rt_column_finish
 * then picks the final representation: validity bits only when a NULL
 * exists, declared narrow types, and the implicit RT_ID for an "id" column
 * holding exactly 0..n-1 (the fast path TREE ACCUMULATE looks for).
 */
#include <stdlib.h>

#include "rt.h"
#include "tabindex.h"
#include "store.h"
#include "strfn.h"

/* ---- column finalization ------------------------------------------------ */

static bool has_null(const uint64_t *valid, int64_t n) {
  int64_t full = n / 64;
  for (int64_t w = 0; w < full; w++)
    if (valid[w] != ~0ull) return true;
  if (n % 64) {
    uint64_t m = (1ull << (n % 64)) - 1;
    if ((valid[full] & m) != m) return true;
  }
  return false;
}

static bool is_valid(const uint64_t *valid, int64_t i) { return !valid || rt_bit(valid, (uint32_t)i); }

static bool sorted_i64(const int64_t *d, const uint64_t *valid, int64_t n) {
  bool seen = false;
  int64_t prev = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!is_valid(valid, i)) {
      if (seen) return false;   /* NULLs must all come first */
      continue;
    }
    if (seen && d[i] < prev) return false;
    prev = d[i];
    seen = true;
  }
  return true;
}

static bool sorted_f64(const double *d, const uint64_t *valid, int64_t n) {
  bool seen = false;
  double prev = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!is_valid(valid, i)) {
      if (seen) return false;
      continue;
    }
    if (seen && !(d[i] >= prev)) return false;
    prev = d[i];
    seen = true;
  }
  return true;
}

static bool is_id_sequence(const int64_t *d, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (d[i] != i) return false;
  return true;
}

/* Narrows int64 values to 32 bits when all valid ones fit (NULL slots are
 * written as 0). Returns 1 narrowed, 0 kept, -1 out of memory. */
static int narrow32(rt_column *c, int64_t n, rt_type to) {
  const int64_t *d = c->data;
  for (int64_t i = 0; i < n; i++) {
    if (!is_valid(c->valid, i)) continue;
    if (to == RT_U32 ? (d[i] < 0 || d[i] > UINT32_MAX) : (d[i] < INT32_MIN || d[i] > INT32_MAX))
      return 0;
  }
  void *nd = malloc(n ? (size_t)n * 4 : 4);
  if (!nd) return -1;
  for (int64_t i = 0; i < n; i++) {
    int64_t v = is_valid(c->valid, i) ? d[i] : 0;
    if (to == RT_U32) ((uint32_t *)nd)[i] = (uint32_t)v;
    else ((int32_t *)nd)[i] = (int32_t)v;
  }
  free(c->data);
  c->data = nd;
  c->type = to;
  return 1;
}

int rt_column_finish(rt_column *c, int64_t n, rt_type declared) {
  if (c->valid && !has_null(c->valid, n)) {
    free(c->valid);
    c->valid = NULL;
  }
  c->nullable = c->valid != NULL;
  c->sorted = false;
  if (c->type == RT_I64) {
    bool want_id = declared == RT_ID || (c->name && rt_strieq(c->name, "id") && declared != RT_F64 &&
                                         declared != RT_STR && declared != RT_BOOL);
    if (want_id && !c->valid && is_id_sequence(c->data, n)) {
      free(c->data);
      c->data = NULL;
      c->type = RT_ID;
      c->sorted = true;
      return 1;
    }
    c->sorted = sorted_i64(c->data, c->valid, n);
    if (declared == RT_U32 || declared == RT_I32) {
      if (narrow32(c, n, declared) < 0) return 0;
    } else if (declared == RT_BOOL) {
      c->type = RT_BOOL;
    }
  } else if (c->type == RT_F64) {
    c->sorted = sorted_f64(c->data, c->valid, n);
  }
  return 1;
}

void rt_column_borrow(rt_column *c, rt_type type, void *data, uint64_t *valid, int64_t n) {
  c->type = type;
  c->data = data;
  c->valid = valid && has_null(valid, n) ? valid : NULL;
  c->nullable = c->valid != NULL;
  c->sorted = type == RT_F64   ? sorted_f64(data, c->valid, n)
              : type == RT_STR ? false
                               : sorted_i64(data, c->valid, n);
  c->borrowed = true;
}

/* ---- tables --------------------------------------------------------------- */

rt_table *rt_table_alloc(const char *name, int ncols) {
  rt_table *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->name = rt_strdup(name ? name : "");
  t->cols = calloc(ncols > 0 ? (size_t)ncols : 1, sizeof *t->cols);
  if (!t->name || !t->cols) {
    free(t->name);
    free(t->cols);
    free(t);
    return NULL;
  }
  t->ncols = ncols;
  t->refs = 1;
  return t;
}

static void table_free(rt_table *t) {
  rt_table_indexes_free(t);
  for (int c = 0; c < t->ncols; c++) {
    free(t->cols[c].name);
    if (t->cols[c].borrowed) continue;
    free(t->cols[c].data);
    free(t->cols[c].valid);
  }
  free(t->cols);
  free(t->name);
  rt_table *base = t->base;
  free(t);
  rt_table_unref(base);
}

rt_table *rt_table_share(rt_table *src, const char *name, int n, const int *cols,
                         const char *const *names, int extra) {
  rt_table *t = rt_table_alloc(name, n + extra);
  if (!t) return NULL;
  t->nrows = src->nrows;
  t->base = rt_table_ref(src);
  for (int i = 0; i < n; i++) {
    rt_column *c = &t->cols[i];
    *c = src->cols[cols[i]];
    c->borrowed = true;
    c->name = rt_strdup(names && names[i] ? names[i] : src->cols[cols[i]].name);
    if (!c->name) {
      rt_table_unref(t);
      return NULL;
    }
  }
  return t;
}

/* Atomic: an Arrow export (api/arrow.c) holds a reference that its
 * consumer may release from another thread. */
rt_table *rt_table_ref(rt_table *t) {
  if (t) __atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
  return t;
}

void rt_table_unref(rt_table *t) {
  if (t && __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) == 0) table_free(t);
}

int rt_table_find_col(const rt_table *t, const char *name) {
  for (int c = 0; c < t->ncols; c++)
    if (rt_strieq(t->cols[c].name, name)) return c;
  return -1;
}

void rt_table_view(const rt_table *t, int c, int64_t start, rt_view *out) {
  const rt_column *col = &t->cols[c];
  out->type = col->type;
  out->sel = NULL;
  out->base = col->type == RT_ID ? start : 0;
  out->data = col->data ? (const char *)col->data + (size_t)start * rt_type_size(col->type) : NULL;
  out->valid = col->valid ? col->valid + start / 64 : NULL;
}

/* ---- builder -------------------------------------------------------------- */

typedef struct tb_col {
  rt_type declared;
  rt_type stored;     /* RT_I64, RT_F64 or RT_STR */
  int64_t n, cap;
  void *data;
  uint64_t *valid;    /* allocated at the first NULL */
  bool oom;
} tb_col;

struct rt_table_builder {
  char *name;
  int ncols;
  char **names;
  tb_col *cols;
};

rt_table_builder *rt_tb_new(const char *name, int ncols, const char *const *names,
                            const rt_type *types) {
  rt_table_builder *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->ncols = ncols;
  b->name = rt_strdup(name ? name : "");
  b->names = calloc(ncols > 0 ? (size_t)ncols : 1, sizeof *b->names);
  b->cols = calloc(ncols > 0 ? (size_t)ncols : 1, sizeof *b->cols);
  if (!b->name || !b->names || !b->cols) {
    rt_tb_abort(b);
    return NULL;
  }
  for (int c = 0; c < ncols; c++) {
    b->names[c] = rt_strdup(names[c]);
    if (!b->names[c]) {
      rt_tb_abort(b);
      return NULL;
    }
    b->cols[c].declared = types ? types[c] : RT_I64;
    b->cols[c].stored = rt_store_type(b->cols[c].declared);
  }
  return b;
}

/* Makes room for one more value; returns its index or -1. */
static int64_t tb_slot(tb_col *c) {
  if (c->oom) return -1;
  if (c->n == c->cap) {
    int64_t cap = c->cap ? c->cap * 2 : 1024;
    void *d = realloc(c->data, (size_t)cap * rt_type_size(c->stored));
    if (!d) {
      c->oom = true;
      return -1;
    }
    c->data = d;
    if (c->valid) {
      uint64_t *v = realloc(c->valid, RT_BITWORDS(cap) * 8);
      if (!v) {
        c->oom = true;
        return -1;
      }
      memset(v + RT_BITWORDS(c->cap), 0, (RT_BITWORDS(cap) - RT_BITWORDS(c->cap)) * 8);
      c->valid = v;
    }
    c->cap = cap;
  }
  return c->n++;
}

static void tb_mark_valid(tb_col *c, int64_t i) {
  if (c->valid) rt_bit_set(c->valid, (uint32_t)i);
}

void rt_tb_append_i64(rt_table_builder *b, int col, int64_t v) {
  tb_col *c = &b->cols[col];
  int64_t i = tb_slot(c);
  if (i < 0) return;
  if (c->stored == RT_F64) ((double *)c->data)[i] = (double)v;
  else if (c->stored == RT_STR) ((uint32_t *)c->data)[i] = (uint32_t)v;
  else ((int64_t *)c->data)[i] = v;
  tb_mark_valid(c, i);
}

void rt_tb_append_f64(rt_table_builder *b, int col, double v) {
  tb_col *c = &b->cols[col];
  int64_t i = tb_slot(c);
  if (i < 0) return;
  if (c->stored == RT_F64) ((double *)c->data)[i] = v;
  else if (c->stored == RT_STR) ((uint32_t *)c->data)[i] = 0;
  else ((int64_t *)c->data)[i] = rt_fn_f64_to_i64(v);
  tb_mark_valid(c, i);
}

void rt_tb_append_str(rt_table_builder *b, int col, uint32_t id) {
  tb_col *c = &b->cols[col];
  int64_t i = tb_slot(c);
  if (i < 0) return;
  if (c->stored == RT_STR) ((uint32_t *)c->data)[i] = id;
  else if (c->stored == RT_F64) ((double *)c->data)[i] = id;
  else ((int64_t *)c->data)[i] = id;
  tb_mark_valid(c, i);
}

void rt_tb_append_null(rt_table_builder *b, int col) {
  tb_col *c = &b->cols[col];
  int64_t i = tb_slot(c);
  if (i < 0) return;
  memset((char *)c->data + (size_t)i * rt_type_size(c->stored), 0, rt_type_size(c->stored));
  if (!c->valid) {
    /* First NULL: every earlier value was valid. */
    c->valid = calloc(RT_BITWORDS(c->cap), 8);
    if (!c->valid) {
      c->oom = true;
      return;
    }
    for (int64_t k = 0; k < i; k++) rt_bit_set(c->valid, (uint32_t)k);
  }
}

rt_table *rt_tb_finish(rt_table_builder *b) {
  if (!b) return NULL;
  int64_t n = b->ncols ? b->cols[0].n : 0;
  for (int c = 0; c < b->ncols; c++) {
    if (b->cols[c].n != n || b->cols[c].oom) {
      rt_tb_abort(b);
      return NULL;
    }
  }
  rt_table *t = rt_table_alloc(b->name, b->ncols);
  if (!t) {
    rt_tb_abort(b);
    return NULL;
  }
  t->nrows = n;
  int ok = 1;
  for (int c = 0; c < b->ncols; c++) {
    tb_col *bc = &b->cols[c];
    rt_column *tc = &t->cols[c];
    /* Ownership of names, data and validity moves to the table. */
    tc->name = b->names[c];
    b->names[c] = NULL;
    tc->type = bc->stored;
    tc->data = bc->data ? bc->data : malloc(8);
    tc->valid = bc->valid;
    bc->data = NULL;
    bc->valid = NULL;
    if (!tc->data || !rt_column_finish(tc, n, bc->declared)) ok = 0;
  }
  rt_tb_abort(b);
  if (!ok) {
    rt_table_unref(t);
    return NULL;
  }
  return t;
}

void rt_tb_abort(rt_table_builder *b) {
  if (!b) return;
  for (int c = 0; c < b->ncols; c++) {
    if (b->names) free(b->names[c]);
    if (b->cols) {
      free(b->cols[c].data);
      free(b->cols[c].valid);
    }
  }
  free(b->names);
  free(b->cols);
  free(b->name);
  free(b);
}
