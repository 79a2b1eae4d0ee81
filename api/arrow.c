/*
 * arrow.c — results as Arrow C data interface structs (pj_result_export_arrow
 * and the one-batch stream pj_result_export_arrow_stream).
 *
 * A result is exported as a struct array with one child per column. Each
 * child owns what it points to, so a consumer may move a child out and
 * release it alone: a reference on the result's table when its buffers
 * point into the table (int64 and double values, validity bitmaps: no
 * copy), and the buffers made for the export (strings as utf8 offsets and
 * bytes, bools as bits, ids and 32-bit integers widened to int64). Nothing
 * refers to the engine afterwards: strings are copied out of its pool.
 *
 * pipejit's validity words (bit i of word i/64) are Arrow's LSB-first
 * bitmaps byte for byte on a little-endian machine, which is all this file
 * supports (static assertion below).
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "validity words are exported as Arrow bitmaps: little-endian only");

/* A length-0 column may have no data array; Arrow wants a non-NULL
 * pointer for value buffers. */
static const int64_t empty_buffer[1];

/* ---- how each column is exported -------------------------------------- */

/* Bytes of text in string column c (NULL rows have none). */
static int64_t text_bytes(const rt_column *c, int64_t nrows, const rt_strpool *strings) {
  int64_t bytes = 0;
  const uint32_t *ids = c->data;
  for (int64_t i = 0; i < nrows; i++) {
    if (c->valid && !rt_bit(c->valid, (uint32_t)i)) continue;
    size_t len = 0;
    rt_str_get(strings, ids[i], &len);
    bytes += (int64_t)len;
  }
  return bytes;
}

/* The Arrow format of column c: integers as int64, strings as utf8 unless
 * their bytes need 64-bit offsets. */
static const char *column_format(const rt_column *c, int64_t nrows, const rt_strpool *strings) {
  switch (c->type) {
  case RT_F64: return "g";
  case RT_BOOL: return "b";
  case RT_STR: return text_bytes(c, nrows, strings) > INT32_MAX ? "U" : "u";
  default: return "l";
  }
}

/* ---- schemas ---------------------------------------------------------- */

static void release_child_schema(struct ArrowSchema *s) {
  free((char *)s->name);
  s->release = NULL;
}

/* The parent's private data: its children (structs and pointers). */
typedef struct schema_priv {
  struct ArrowSchema *kids;
  struct ArrowSchema **kidp;
} schema_priv;

static void release_schema(struct ArrowSchema *s) {
  schema_priv *p = s->private_data;
  for (int64_t c = 0; c < s->n_children; c++)
    if (p->kids[c].release) p->kids[c].release(&p->kids[c]);
  free(p->kids);
  free(p->kidp);
  free(p);
  s->release = NULL;
}

/* Fills *out with the struct schema of t's columns in the given formats.
 * 0 on out of memory (nothing to release). */
static int export_schema(const rt_table *t, const char *const *formats, struct ArrowSchema *out) {
  memset(out, 0, sizeof *out);
  size_t n = t->ncols > 0 ? (size_t)t->ncols : 1;
  schema_priv *p = calloc(1, sizeof *p);
  if (p) p->kids = calloc(n, sizeof *p->kids);
  if (p) p->kidp = calloc(n, sizeof *p->kidp);
  if (!p || !p->kids || !p->kidp) goto fail;
  for (int c = 0; c < t->ncols; c++) {
    struct ArrowSchema *k = &p->kids[c];
    k->name = rt_strdup(t->cols[c].name);
    if (!k->name) goto fail;
    k->format = formats[c];
    k->flags = ARROW_FLAG_NULLABLE;
    k->release = release_child_schema;
    p->kidp[c] = k;
  }
  out->format = "+s";
  out->name = "";
  out->n_children = t->ncols;
  out->children = p->kidp;
  out->release = release_schema;
  out->private_data = p;
  return 1;
fail:
  if (p) {
    for (int c = 0; p->kids && c < t->ncols; c++) free((char *)p->kids[c].name);
    free(p->kids);
    free(p->kidp);
    free(p);
  }
  return 0;
}

/* ---- arrays ----------------------------------------------------------- */

/* What one column array owns. */
typedef struct column_priv {
  rt_table *t;          /* reference, when a buffer points into the table */
  void *owned[3];       /* buffers made for the export */
  const void *bufs[3];  /* the array's buffers (validity, values/offsets, bytes) */
} column_priv;

static void release_column(struct ArrowArray *a) {
  column_priv *p = a->private_data;
  for (int i = 0; i < 3; i++) free(p->owned[i]);
  rt_table_unref(p->t);
  free(p);
  a->release = NULL;
}

static int64_t null_count(const uint64_t *valid, int64_t n) {
  if (!valid) return 0;
  int64_t set = 0;
  for (int64_t w = 0; w < n / 64; w++) set += __builtin_popcountll(valid[w]);
  if (n % 64) set += __builtin_popcountll(valid[n / 64] & ((1ull << (n % 64)) - 1));
  return n - set;
}

/* Fills the value buffers of column c (format fmt) into p. 0 on out of
 * memory. */
static int export_values(const rt_table *t, const rt_column *c, const char *fmt,
                         const rt_strpool *strings, column_priv *p) {
  int64_t n = t->nrows;
  size_t rows = n > 0 ? (size_t)n : 1;
  if (fmt[0] == 'b') {   /* bool: int64 0/1 to bits */
    uint8_t *bits = calloc((rows + 7) / 8, 1);
    if (!bits) return 0;
    const int64_t *v = c->data;
    for (int64_t i = 0; i < n; i++)
      if (v[i]) bits[i >> 3] |= (uint8_t)(1u << (i & 7));
    p->owned[1] = bits;
  } else if (fmt[0] == 'u' || fmt[0] == 'U') {   /* string ids to offsets + bytes */
    int wide = fmt[0] == 'U';
    const uint32_t *ids = c->data;
    void *offsets = malloc((rows + 1) * (wide ? 8 : 4));
    if (!offsets) return 0;
    p->owned[1] = offsets;
    int64_t bytes = text_bytes(c, n, strings);
    char *text = malloc(bytes > 0 ? (size_t)bytes : 1);
    if (!text) return 0;
    p->owned[2] = text;
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++) {
      if (wide) ((int64_t *)offsets)[i] = at;
      else ((int32_t *)offsets)[i] = (int32_t)at;
      if (c->valid && !rt_bit(c->valid, (uint32_t)i)) continue;
      size_t len = 0;
      const char *s = rt_str_get(strings, ids[i], &len);
      memcpy(text + at, s, len);
      at += (int64_t)len;
    }
    if (wide) ((int64_t *)offsets)[n] = at;
    else ((int32_t *)offsets)[n] = (int32_t)at;
  } else if (c->type == RT_I64 || c->type == RT_F64) {   /* no copy */
    p->t = rt_table_ref((rt_table *)t);
    p->bufs[1] = c->data ? c->data : empty_buffer;
  } else {   /* id, uint32, int32: widened to int64 */
    int64_t *v = malloc(rows * sizeof *v);
    if (!v) return 0;
    for (int64_t i = 0; i < n; i++)
      v[i] = c->type == RT_ID  ? i
             : c->type == RT_U32 ? (int64_t)((const uint32_t *)c->data)[i]
                                 : (int64_t)((const int32_t *)c->data)[i];
    p->owned[1] = v;
  }
  return 1;
}

/* Fills *out with column c as an array. 0 on out of memory (nothing to
 * release). */
static int export_column(const rt_table *t, int col, const char *fmt, const rt_strpool *strings,
                         struct ArrowArray *out) {
  memset(out, 0, sizeof *out);
  const rt_column *c = &t->cols[col];
  column_priv *p = calloc(1, sizeof *p);
  if (!p) return 0;
  if (!export_values(t, c, fmt, strings, p)) {
    out->private_data = p;
    release_column(out);
    return 0;
  }
  if (c->valid) {
    if (!p->t) p->t = rt_table_ref((rt_table *)t);
    p->bufs[0] = c->valid;
  }
  for (int i = 1; i < 3; i++)
    if (p->owned[i]) p->bufs[i] = p->owned[i];
  out->length = t->nrows;
  out->null_count = null_count(c->valid, t->nrows);
  out->n_buffers = fmt[0] == 'u' || fmt[0] == 'U' ? 3 : 2;
  out->buffers = p->bufs;
  out->release = release_column;
  out->private_data = p;
  return 1;
}

/* The parent's private data: its children and its one (NULL) buffer. */
typedef struct array_priv {
  struct ArrowArray *kids;
  struct ArrowArray **kidp;
  const void *bufs[1];
} array_priv;

static void release_array(struct ArrowArray *a) {
  array_priv *p = a->private_data;
  for (int64_t c = 0; c < a->n_children; c++)
    if (p->kids[c].release) p->kids[c].release(&p->kids[c]);
  free(p->kids);
  free(p->kidp);
  free(p);
  a->release = NULL;
}

static int export_array(const rt_table *t, const char *const *formats, const rt_strpool *strings,
                        struct ArrowArray *out) {
  memset(out, 0, sizeof *out);
  size_t n = t->ncols > 0 ? (size_t)t->ncols : 1;
  array_priv *p = calloc(1, sizeof *p);
  if (p) p->kids = calloc(n, sizeof *p->kids);
  if (p) p->kidp = calloc(n, sizeof *p->kidp);
  if (!p || !p->kids || !p->kidp) {
    if (p) free(p->kids);
    if (p) free(p->kidp);
    free(p);
    return 0;
  }
  out->length = t->nrows;
  out->n_buffers = 1;
  out->buffers = p->bufs;
  out->n_children = t->ncols;
  out->children = p->kidp;
  out->release = release_array;
  out->private_data = p;
  for (int c = 0; c < t->ncols; c++) {
    p->kidp[c] = &p->kids[c];
    if (!export_column(t, c, formats[c], strings, &p->kids[c])) {
      release_array(out);   /* children not yet made have release == NULL */
      return 0;
    }
  }
  return 1;
}

/* ---- public ----------------------------------------------------------- */

/* The formats of every column, in a malloc'd array the caller frees. */
static const char **result_formats(const pj_result *r) {
  const rt_table *t = r->t;
  const char **f = malloc((t->ncols > 0 ? (size_t)t->ncols : 1) * sizeof *f);
  if (!f) return NULL;
  for (int c = 0; c < t->ncols; c++) f[c] = column_format(&t->cols[c], t->nrows, r->strings);
  return f;
}

pj_status pj_result_export_arrow(const pj_result *r, struct ArrowSchema *schema,
                                 struct ArrowArray *array) {
  if (schema) schema->release = NULL;
  if (array) array->release = NULL;
  const char **formats = result_formats(r);
  if (!formats) return PJ_NOMEM;
  int ok = 1;
  if (schema) ok = export_schema(r->t, formats, schema);
  if (ok && array) {
    ok = export_array(r->t, formats, r->strings, array);
    if (!ok && schema) schema->release(schema);
  }
  free(formats);
  return ok ? PJ_OK : PJ_NOMEM;
}

/* ---- the stream ------------------------------------------------------- */

typedef struct stream_priv {
  rt_table *t;                /* reference: names and types for get_schema */
  const char **formats;
  struct ArrowArray batch;    /* moved out by the first get_next */
  const char *error;          /* of the last failed call, or NULL */
} stream_priv;

static int stream_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  stream_priv *p = s->private_data;
  p->error = NULL;
  if (!export_schema(p->t, p->formats, out)) {
    p->error = "out of memory";
    return 12;   /* ENOMEM, as the specification's errno convention */
  }
  return 0;
}

static int stream_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  stream_priv *p = s->private_data;
  p->error = NULL;
  *out = p->batch;               /* after the batch: release == NULL, the end */
  p->batch.release = NULL;
  return 0;
}

static const char *stream_last_error(struct ArrowArrayStream *s) {
  return ((stream_priv *)s->private_data)->error;
}

static void stream_release(struct ArrowArrayStream *s) {
  stream_priv *p = s->private_data;
  if (p->batch.release) p->batch.release(&p->batch);
  rt_table_unref(p->t);
  free(p->formats);
  free(p);
  s->release = NULL;
}

pj_status pj_result_export_arrow_stream(const pj_result *r, struct ArrowArrayStream *out) {
  memset(out, 0, sizeof *out);
  stream_priv *p = calloc(1, sizeof *p);
  if (!p) return PJ_NOMEM;
  p->formats = result_formats(r);
  if (!p->formats || !export_array(r->t, p->formats, r->strings, &p->batch)) {
    free(p->formats);
    free(p);
    return PJ_NOMEM;
  }
  p->t = rt_table_ref(r->t);
  out->get_schema = stream_get_schema;
  out->get_next = stream_get_next;
  out->get_last_error = stream_last_error;
  out->release = stream_release;
  out->private_data = p;
  return PJ_OK;
}
