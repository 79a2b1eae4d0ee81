/*
 * argindex.c — the arg-set index of argindex.h: binary search over the
 * rows in arg_set_id order (the table's own order, or a permutation made
 * once), then a scan of the set's few rows for the key's string id; and a
 * hash of key id → the kinds of value it holds.
 */
#include <stdlib.h>

#include "argindex.h"

struct rt_argindex {
  int refs;
  rt_table *t;
  int c_set, c_key, c_int, c_str, c_real;
  uint32_t *perm;       /* rows in arg_set_id order; NULL: the table's order */
  /* key id → kinds, open addressing; slot key UINT32_MAX is empty */
  uint32_t mask;
  uint32_t *keys;
  uint8_t *kinds;
};

static bool is_null(const rt_column *c, int64_t r) { return c->valid && !rt_bit(c->valid, (uint32_t)r); }

static int64_t int_at(const rt_column *c, int64_t r) {
  switch (c->type) {
  case RT_ID: return r;
  case RT_U32: return ((const uint32_t *)c->data)[r];
  case RT_I32: return ((const int32_t *)c->data)[r];
  default: return ((const int64_t *)c->data)[r];
  }
}

/* arg_set_id of the k-th row in set order; NULL sorts first (INT64_MIN). */
static int64_t set_at(const rt_argindex *x, int64_t k) {
  int64_t r = x->perm ? x->perm[k] : k;
  const rt_column *c = &x->t->cols[x->c_set];
  return is_null(c, r) ? INT64_MIN : int_at(c, r);
}

typedef struct pair {
  int64_t set;
  uint32_t row;
} pair;

static int cmp_pair(const void *a, const void *b) {
  const pair *p = a, *q = b;
  if (p->set != q->set) return p->set < q->set ? -1 : 1;
  return (p->row > q->row) - (p->row < q->row);
}

static uint32_t hash_key(uint32_t k) { return k * 2654435761u; }

static int add_kind(rt_argindex *x, uint32_t key, int kind) {
  uint32_t i = hash_key(key) & x->mask;
  while (x->keys[i] != UINT32_MAX && x->keys[i] != key) i = (i + 1) & x->mask;
  x->keys[i] = key;
  x->kinds[i] |= (uint8_t)kind;
  return 1;
}

enum { K_INT, K_STR, K_NUM };

/* Column `name` of t holding `want` (an integer kind, strings, numbers). */
static int col_of(const rt_table *t, const char *name, int want, const char **why) {
  int c = rt_table_find_col(t, name);
  rt_type ty = c >= 0 ? t->cols[c].type : RT_NULLT;
  bool ok = c >= 0 && (want == K_STR   ? ty == RT_STR
                       : want == K_INT ? rt_type_is_int(ty)
                                       : ty != RT_STR);
  if (!ok && !*why) *why = name;
  return ok ? c : -1;
}

rt_argindex *rt_argindex_new(rt_table *t, const char **why) {
  *why = NULL;
  rt_argindex *x = calloc(1, sizeof *x);
  if (!x) return NULL;
  x->refs = 1;
  x->c_set = col_of(t, "arg_set_id", K_INT, why);
  x->c_key = col_of(t, "key", K_STR, why);
  x->c_int = col_of(t, "int_value", K_INT, why);
  x->c_str = col_of(t, "string_value", K_STR, why);
  x->c_real = col_of(t, "real_value", K_NUM, why);
  if (*why) {
    free(x);
    return NULL;
  }
  x->t = rt_table_ref(t);
  int64_t n = t->nrows;
  if (n > UINT32_MAX) {
    *why = "arg_set_id";
    rt_argindex_unref(x);
    return NULL;
  }
  const rt_column *cs = &t->cols[x->c_set];
  if (!(cs->sorted || cs->type == RT_ID)) {
    pair *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    x->perm = malloc(sizeof *x->perm * (size_t)(n ? n : 1));
    if (!v || !x->perm) {
      free(v);
      rt_argindex_unref(x);
      return NULL;
    }
    for (int64_t r = 0; r < n; r++) v[r] = (pair){is_null(cs, r) ? INT64_MIN : int_at(cs, r), (uint32_t)r};
    qsort(v, (size_t)n, sizeof *v, cmp_pair);
    for (int64_t k = 0; k < n; k++) x->perm[k] = v[k].row;
    free(v);
  }
  /* Key kinds: a table of at least twice the distinct keys (at most n). */
  uint32_t cap = 64;
  while (cap < 2 * (uint64_t)n + 2 && cap < (1u << 31)) cap *= 2;
  x->mask = cap - 1;
  x->keys = malloc(sizeof *x->keys * cap);
  x->kinds = calloc(cap, 1);
  if (!x->keys || !x->kinds) {
    rt_argindex_unref(x);
    return NULL;
  }
  memset(x->keys, 0xff, sizeof *x->keys * cap);
  const rt_column *ck = &t->cols[x->c_key], *ci = &t->cols[x->c_int], *cstr = &t->cols[x->c_str],
                  *cr = &t->cols[x->c_real];
  for (int64_t r = 0; r < n; r++) {
    if (is_null(ck, r)) continue;
    uint32_t key = ((const uint32_t *)ck->data)[r];
    int kind = !is_null(ci, r) ? RT_ARG_INT : !is_null(cstr, r) ? RT_ARG_STR
               : !is_null(cr, r) ? RT_ARG_REAL : 0;
    add_kind(x, key, kind);
  }
  return x;
}

rt_argindex *rt_argindex_ref(rt_argindex *x) {
  x->refs++;
  return x;
}

void rt_argindex_unref(rt_argindex *x) {
  if (!x || --x->refs > 0) return;
  if (x->t) rt_table_unref(x->t);
  free(x->perm);
  free(x->keys);
  free(x->kinds);
  free(x);
}

const rt_table *rt_argindex_table(const rt_argindex *x) { return x->t; }

int rt_argindex_get(const rt_argindex *x, int64_t set, uint32_t key, int64_t *i, double *f,
                    uint32_t *s) {
  int64_t lo = 0, hi = x->t->nrows;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (set_at(x, mid) < set) lo = mid + 1;
    else hi = mid;
  }
  const rt_table *t = x->t;
  const rt_column *ck = &t->cols[x->c_key];
  for (int64_t k = lo; k < t->nrows && set_at(x, k) == set; k++) {
    int64_t r = x->perm ? x->perm[k] : k;
    if (is_null(ck, r) || ((const uint32_t *)ck->data)[r] != key) continue;
    const rt_column *ci = &t->cols[x->c_int], *cs = &t->cols[x->c_str], *cr = &t->cols[x->c_real];
    if (!is_null(ci, r)) return *i = int_at(ci, r), RT_ARG_INT;
    if (!is_null(cs, r)) return *s = ((const uint32_t *)cs->data)[r], RT_ARG_STR;
    if (!is_null(cr, r)) {
      *f = cr->type == RT_F64 ? ((const double *)cr->data)[r] : (double)int_at(cr, r);
      return RT_ARG_REAL;
    }
    return 0;
  }
  return 0;
}

int rt_argindex_key_kinds(const rt_argindex *x, uint32_t key) {
  for (uint32_t i = hash_key(key) & x->mask; x->keys[i] != UINT32_MAX; i = (i + 1) & x->mask)
    if (x->keys[i] == key) return x->kinds[i];
  return 0;
}
