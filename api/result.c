/*
 * result.c — reading results. A result is a finalized rt_table (the same
 * kind of table CREATE PERFETTO TABLE makes) plus the string pool its
 * string ids refer to; the accessors read the column arrays directly.
 * Out-of-range rows and columns read as NULL (never undefined behaviour).
 */
#include <stdlib.h>

#include "engine.h"

pj_result *pj__result_new(rt_table *t, const rt_strpool *strings) {
  pj_result *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->t = t;   /* takes the caller's reference */
  r->strings = strings;
  return r;
}

pj_status pj_result_clone(const pj_result *r, pj_result **out) {
  *out = pj__result_new(rt_table_ref(r->t), r->strings);
  if (*out) return PJ_OK;
  rt_table_unref(r->t);
  return PJ_NOMEM;
}

void pj_result_free(pj_result *r) {
  if (!r) return;
  rt_table_unref(r->t);
  free(r);
}

int64_t pj_result_row_count(const pj_result *r) { return r->t->nrows; }
int pj_result_column_count(const pj_result *r) { return r->t->ncols; }

static const rt_column *col_at(const pj_result *r, int col) {
  return col >= 0 && col < r->t->ncols ? &r->t->cols[col] : NULL;
}

const char *pj_result_column_name(const pj_result *r, int col) {
  const rt_column *c = col_at(r, col);
  return c ? c->name : NULL;
}

/* rt_type and pj_type list the same kinds in the same order. */
pj_type pj_result_column_type(const pj_result *r, int col) {
  const rt_column *c = col_at(r, col);
  return c ? (pj_type)c->type : PJ_TYPE_INT64;
}

/* The cell's column, or NULL when the cell is out of range or NULL. */
static const rt_column *cell(const pj_result *r, int64_t row, int col) {
  const rt_column *c = col_at(r, col);
  if (!c || row < 0 || row >= r->t->nrows) return NULL;
  if (c->valid && !rt_bit(c->valid, (uint32_t)row)) return NULL;
  return c;
}

int pj_result_is_null(const pj_result *r, int64_t row, int col) { return !cell(r, row, col); }

int64_t pj_result_int64(const pj_result *r, int64_t row, int col) {
  const rt_column *c = cell(r, row, col);
  if (!c) return 0;
  switch (c->type) {
  case RT_ID: return row;
  case RT_U32: return ((const uint32_t *)c->data)[row];
  case RT_I32: return ((const int32_t *)c->data)[row];
  case RT_I64:
  case RT_BOOL: return ((const int64_t *)c->data)[row];
  case RT_F64: {
    /* As SQLite's sqlite3_column_int64: truncate, saturating at the ends. */
    double d = ((const double *)c->data)[row];
    if (d != d) return 0;
    if (d >= 9223372036854775807.0) return INT64_MAX;
    if (d <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)d;
  }
  case RT_STR: return strtoll(rt_str_get(r->strings, ((const uint32_t *)c->data)[row], NULL), NULL, 10);
  default: return 0;
  }
}

double pj_result_double(const pj_result *r, int64_t row, int col) {
  const rt_column *c = cell(r, row, col);
  if (!c) return 0.0;
  if (c->type == RT_F64) return ((const double *)c->data)[row];
  if (c->type == RT_STR) return strtod(rt_str_get(r->strings, ((const uint32_t *)c->data)[row], NULL), NULL);
  return (double)pj_result_int64(r, row, col);
}

/* Strings only: other types give NULL (format numbers as you need them). */
const char *pj_result_text(const pj_result *r, int64_t row, int col, size_t *len) {
  const rt_column *c = cell(r, row, col);
  if (!c || c->type != RT_STR) {
    if (len) *len = 0;
    return NULL;
  }
  return rt_str_get(r->strings, ((const uint32_t *)c->data)[row], len);
}

void pj_result_column(const pj_result *r, int col, pj_column *out) {
  const rt_column *c = col_at(r, col);
  memset(out, 0, sizeof *out);
  out->rows = r->t->nrows;
  if (!c) return;
  out->type = (pj_type)c->type;
  out->values = c->data;
  out->validity = c->valid;
}

const char *pj_result_string(const pj_result *r, uint32_t id, size_t *len) {
  return rt_str_get(r->strings, id, len);
}

_Static_assert((int)PJ_TYPE_ID == RT_ID && (int)PJ_TYPE_UINT32 == RT_U32 &&
                   (int)PJ_TYPE_INT32 == RT_I32 && (int)PJ_TYPE_INT64 == RT_I64 &&
                   (int)PJ_TYPE_DOUBLE == RT_F64 && (int)PJ_TYPE_STRING == RT_STR &&
                   (int)PJ_TYPE_BOOL == RT_BOOL,
               "pj_type mirrors rt_type");
