/*
 * topk.c — ORDER BY … LIMIT k (topk.h): each batch's new rows filtered
 * against the bound, and the buffer pruned to its k first rows now and
 * then by rt_sort_perm, whose order (keys, then input position) the
 * filter's comparison repeats key by key: the same sortable values for
 * numbers, rt_str_cmp for strings (distinct ids are distinct texts, as
 * the sort's ranks assume), NULLs before or after every value as the key
 * says.
 */
#include "topk.h"
#include "budget.h"

bool rt_topk_init(rt_topk *t, int64_t k, int nkeys, const rt_sortkey *keys, const rt_type *types,
                  const rt_strpool *sp) {
  memset(t, 0, sizeof *t);
  t->k = k;
  t->nkeys = nkeys;
  t->keys = keys;
  t->sp = sp;
  size_t n = nkeys > 0 ? (size_t)nkeys : 1;
  t->bound = rt_mem_calloc(n, sizeof *t->bound);
  t->active = rt_mem_alloc(RT_BATCH * sizeof *t->active);
  if (!t->bound || !t->active) {
    rt_topk_free(t);
    return false;
  }
  for (int j = 0; j < nkeys; j++) {
    rt_type ty = rt_store_type(types[keys[j].col]);
    t->bound[j].str = ty == RT_STR;
    t->bound[j].f64 = ty == RT_F64;
  }
  return true;
}

void rt_topk_free(rt_topk *t) {
  rt_mem_free(t->bound);
  rt_mem_free(t->active);
  rt_mem_free(t->keep);
  rt_mem_free(t->mark);
  memset(t, 0, sizeof *t);
}

static bool topk_room(rt_topk *t, int64_t n) {
  if (n <= t->cap) return true;
  int64_t cap = t->cap ? t->cap : RT_BATCH;
  while (cap < n) cap *= 2;
  uint32_t *keep = rt_mem_realloc(t->keep, (size_t)cap * sizeof *keep);
  if (!keep) return false;
  t->keep = keep;
  uint64_t *mark = rt_mem_realloc(t->mark, RT_BITWORDS(cap) * 8);
  if (!mark) return false;
  t->mark = mark;
  t->cap = cap;
  return true;
}

/* Key `key`'s sortable value of a non-NULL row r (DESC complemented; a
 * string's id, compared by text). */
static uint64_t row_value(const rt_rowbuf *b, const rt_sortkey *key, int64_t r) {
  int c = key->col;
  uint64_t v;
  switch (b->types[c]) {
  case RT_STR: return ((const uint32_t *)b->data[c])[r];
  case RT_F64: v = rt_sortable_f64(((const double *)b->data[c])[r]); break;
  default: v = rt_sortable_i64(((const int64_t *)b->data[c])[r]); break;
  }
  return key->desc ? ~v : v;
}

/* A value of key j (as row_value gives it, or NULL) against the bound:
 * < 0 before it, 0 tied, > 0 after. */
static int val_vs_bound(const rt_topk *t, int j, bool null, uint64_t v) {
  const rt_sortkey *key = &t->keys[j];
  const rt_topk_val *bv = &t->bound[j];
  if (null || bv->null) return null == bv->null ? 0 : null == key->nulls_first ? -1 : 1;
  if (bv->str) {
    int x = rt_str_cmp(t->sp, (uint32_t)v, (uint32_t)bv->v);
    x = (x > 0) - (x < 0);
    return key->desc ? -x : x;
  }
  return (v > bv->v) - (v < bv->v);
}

/* Row r of the buffer against the bound on key j. */
static int key_vs_bound(const rt_topk *t, const rt_rowbuf *b, int j, int64_t r) {
  const rt_sortkey *key = &t->keys[j];
  bool null = !rt_bit(b->valid[key->col], (uint32_t)r);
  return val_vs_bound(t, j, null, null ? 0 : row_value(b, key, r));
}

/* Whether row r comes strictly before the bound, judged from key j on
 * (the keys before tied). A full tie is after: the bound came first. */
static bool before_bound(const rt_topk *t, const rt_rowbuf *b, int j, int64_t r) {
  for (; j < t->nkeys; j++) {
    int x = key_vs_bound(t, b, j, r);
    if (x) return x < 0;
  }
  return false;
}

/* The first key's loop for a numeric key and a bound that is not NULL
 * (the usual case): most rows are rejected by one compare. */
#define FILTER_NUM(T, SORTABLE)                                                  \
  do {                                                                           \
    const T *d = b->data[c];                                                     \
    for (int64_t r = from; r < n; r++) {                                         \
      if (!rt_bit(valid, (uint32_t)r)) {                                         \
        if (k0->nulls_first) keep[nk++] = (uint32_t)r;                           \
        continue;                                                                \
      }                                                                          \
      uint64_t v = SORTABLE(d[r]) ^ flip;                                        \
      if (v > bound) continue;                                                   \
      if (v < bound || before_bound(t, b, 1, r)) keep[nk++] = (uint32_t)r;       \
    }                                                                            \
  } while (0)

/* Rows from.. of b that come before the bound, ascending, into keep. */
static int64_t topk_filter(const rt_topk *t, const rt_rowbuf *b, int64_t from, uint32_t *keep) {
  int64_t nk = 0, n = b->nrows;
  const rt_sortkey *k0 = &t->keys[0];
  int c = k0->col;
  if (t->nkeys > 0 && !t->bound[0].null && !t->bound[0].str) {
    const uint64_t *valid = b->valid[c];
    uint64_t bound = t->bound[0].v, flip = k0->desc ? ~0ull : 0;
    if (b->types[c] == RT_F64) FILTER_NUM(double, rt_sortable_f64);
    else FILTER_NUM(int64_t, rt_sortable_i64);
    return nk;
  }
  for (int64_t r = from; r < n; r++)
    if (before_bound(t, b, 0, r)) keep[nk++] = (uint32_t)r;
  return nk;
}
#undef FILTER_NUM

/* Clears bits [lo, hi). */
static void clear_bits(uint64_t *bits, int64_t lo, int64_t hi) {
  int64_t i = lo;
  for (; i < hi && (i & 63); i++) bits[i >> 6] &= ~(1ull << (i & 63));
  if (i + 64 <= hi) {
    memset(bits + (i >> 6), 0, (size_t)((hi - i) >> 6) * 8);
    i += (hi - i) & ~(int64_t)63;
  }
  for (; i < hi; i++) bits[i >> 6] &= ~(1ull << (i & 63));
}

/* Rows keep[0..nkeep) (ascending, none before from) move to from..; the
 * rows after them up to the old nrows become zero and NULL again. */
static void topk_compact(rt_rowbuf *b, int64_t from, const uint32_t *keep, int64_t nkeep) {
  int64_t n = b->nrows, to = from + nkeep;
  for (int c = 0; c < b->ncols; c++) {
    uint64_t *v = b->valid[c];
    if (rt_type_size(b->types[c]) == 8) {
      uint64_t *d = b->data[c];
      for (int64_t i = 0; i < nkeep; i++) d[from + i] = d[keep[i]];
      memset(d + to, 0, (size_t)(n - to) * 8);
    } else {
      uint32_t *d = b->data[c];
      for (int64_t i = 0; i < nkeep; i++) d[from + i] = d[keep[i]];
      memset(d + to, 0, (size_t)(n - to) * 4);
    }
    /* at <= keep[i]: every bit is read before anything is written over it */
    for (int64_t i = 0; i < nkeep; i++) {
      uint32_t at = (uint32_t)(from + i);
      if (rt_bit(v, keep[i])) rt_bit_set(v, at);
      else rt_bit_clear(v, at);
    }
    clear_bits(v, to, n);
  }
  b->nrows = to;
}

/* b to its k first rows (in input order); their last in sort order is
 * the new bound. */
static int topk_prune(rt_topk *t, rt_rowbuf *b) {
  int64_t n = b->nrows;
  if (n <= t->k) return 0;
  if (t->k == 0) {
    topk_compact(b, 0, NULL, 0);
    return 0;
  }
  if (!topk_room(t, n)) return -1;
  uint32_t *perm = rt_sort_perm(b, t->nkeys, t->keys, t->sp);
  if (!perm) return -1;
  memset(t->mark, 0, RT_BITWORDS(n) * 8);
  for (int64_t i = 0; i < t->k; i++) rt_bit_set(t->mark, perm[i]);
  uint32_t last = perm[t->k - 1];
  for (int j = 0; j < t->nkeys; j++) {
    t->bound[j].null = !rt_bit(b->valid[t->keys[j].col], last);
    t->bound[j].v = t->bound[j].null ? 0 : row_value(b, &t->keys[j], last);
  }
  t->bounded = true;
  rt_mem_free(perm);
  int64_t nk = 0;
  for (int64_t r = 0; r < n; r++)
    if (rt_bit(t->mark, (uint32_t)r)) t->keep[nk++] = (uint32_t)r;
  topk_compact(b, 0, t->keep, nk);
  return 0;
}

int rt_topk_add(rt_topk *t, rt_rowbuf *b, int64_t from) {
  if (from >= b->nrows) return 0;
  if (t->k == 0) {
    topk_compact(b, 0, NULL, 0);
    return 0;
  }
  if (t->bounded) {
    if (!topk_room(t, b->nrows - from)) return -1;
    topk_compact(b, from, t->keep, topk_filter(t, b, from, t->keep));
  }
  /* Pruning sorts what the buffer holds: at most every k candidates (or a
   * batch's worth, for small k), so each row is sorted about twice. */
  int64_t slack = t->k > RT_BATCH ? t->k : RT_BATCH;
  if (b->nrows > t->k && (!t->bounded || b->nrows >= t->k + slack)) return topk_prune(t, b);
  return 0;
}

int rt_topk_finish(rt_topk *t, rt_rowbuf *b) { return topk_prune(t, b); }

/* Bound a against bound b: < 0 when a comes first. */
static int bound_cmp(const rt_topk *a, const rt_topk *b) {
  for (int j = 0; j < a->nkeys; j++) {
    const rt_sortkey *key = &a->keys[j];
    const rt_topk_val *x0 = &a->bound[j], *y0 = &b->bound[j];
    int x;
    if (x0->null || y0->null) {
      x = x0->null == y0->null ? 0 : x0->null == key->nulls_first ? -1 : 1;
    } else if (x0->str) {
      x = rt_str_cmp(a->sp, (uint32_t)x0->v, (uint32_t)y0->v);
      x = (x > 0) - (x < 0);
      if (key->desc) x = -x;
    } else {
      x = (x0->v > y0->v) - (x0->v < y0->v);
    }
    if (x) return x;
  }
  return 0;
}

void rt_topk_take_bound(rt_topk *t, const rt_topk *from) {
  if (!from->bounded || (t->bounded && bound_cmp(t, from) <= 0)) return;
  memcpy(t->bound, from->bound, (size_t)t->nkeys * sizeof *t->bound);
  t->bounded = true;
}

/* Key j's value at position i of a batch's view, as the buffer would
 * hold it (rt_rowbuf_append_views' conversions: integer kinds widened, a
 * double column read as double) and row_value gives it; false for NULL. */
static bool view_value(const rt_topk *t, int j, const rt_view *v, uint32_t i, uint64_t *out) {
  if (v->type == RT_NULLT || rt_view_is_null(v, i)) return false;
  const rt_topk_val *bv = &t->bound[j];
  if (bv->str) {
    *out = rt_view_str(v, i);
    return true;
  }
  uint64_t x = bv->f64 ? rt_sortable_f64(rt_view_f64(v, i)) : rt_sortable_i64(rt_view_i64(v, i));
  *out = t->keys[j].desc ? ~x : x;
  return true;
}

/* Position i against the bound, from key j on (a full tie is after). */
static bool view_before_bound(const rt_topk *t, const rt_view *const *kv, int j, uint32_t i) {
  for (; j < t->nkeys; j++) {
    uint64_t v = 0;
    bool null = !view_value(t, j, kv[j], i, &v);
    int x = val_vs_bound(t, j, null, v);
    if (x) return x < 0;
  }
  return false;
}

/* rt_topk_prefilter's loop over a first key of type T: one compare
 * rejects most rows (ties go on to the other keys). */
#define PREFILTER_NUM(T, SORTABLE)                                               \
  do {                                                                           \
    const T *restrict d = v->data;                                               \
    const uint64_t *restrict valid = v->valid;                                   \
    const uint64_t bound = b0->v, flip = t->keys[0].desc ? ~0ull : 0;            \
    const bool nulls_first = t->keys[0].nulls_first;                             \
    for (uint32_t i = 0; i < n; i++) {                                           \
      if (valid && !rt_bit(valid, i)) {                                          \
        if (nulls_first) active[na++] = i;                                       \
        continue;                                                                \
      }                                                                          \
      uint64_t x = SORTABLE(d[i]) ^ flip;                                        \
      if (x > bound) continue;                                                   \
      if (x < bound || view_before_bound(t, kv, 1, i)) active[na++] = i;         \
    }                                                                            \
  } while (0)

uint32_t rt_topk_prefilter(const rt_topk *t, const rt_view *const *kv, uint32_t n, uint32_t *active) {
  uint32_t na = 0;
  if (!t->bounded) {
    for (uint32_t i = 0; i < n; i++) active[i] = i;
    return n;
  }
  if (t->k == 0 || t->nkeys == 0) return 0;
  const rt_view *v = kv[0];
  const rt_topk_val *b0 = &t->bound[0];
  /* the usual first key: a plain column of the buffer's own type */
  if (!b0->null && !b0->str && !v->sel && v->type == (b0->f64 ? RT_F64 : RT_I64)) {
    if (b0->f64) PREFILTER_NUM(double, rt_sortable_f64);
    else PREFILTER_NUM(int64_t, rt_sortable_i64);
    return na;
  }
  for (uint32_t i = 0; i < n; i++)
    if (view_before_bound(t, kv, 0, i)) active[na++] = i;
  return na;
}
