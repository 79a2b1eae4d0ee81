/*
 * args.c — arg sets (TRACES.md §1.10): sets being built (im_args) and
 * their deduplicated writing into the `args` table.
 *
 * A set is hashed over (key, value_type, value) of its rows in order; a
 * set equal to one already written reuses its arg_set_id, which is the
 * `args` row count when the set was first written (the id of its first
 * row), so ids are sparse and `args` is sorted by arg_set_id.
 * display_value follows the SQL of §1.10.3 (int as decimal, uint as
 * unsigned, real as SQLite prints it, pointer as 0x…, bool true/false).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "trace.h"

im_args *im_args_new(im_trace *t) {
  im_args *a;
  if (t->arg_pool.n) {
    a = t->arg_pool.v[--t->arg_pool.n];
    a->rows.n = 0;
    return a;
  }
  a = calloc(1, sizeof *a);
  if (!a) return im_oom(t), NULL;
  a->t = t;
  if (!IM_PUSH(t, t->all_args, a)) {
    free(a);
    return NULL;
  }
  return a;
}

/* Back to the pool (the trace frees every set at the end). */
void im_args_free(im_args *a) {
  if (!a) return;
  im_args_clear(a);
  IM_PUSH(a->t, a->t->arg_pool, a);
}

void im_args_clear(im_args *a) {
  if (!a) return;
  a->rows.n = 0;
  if (a->by_key.n) im_map_free(&a->by_key);
}

int im_args_count(const im_args *a) { return a ? (int)a->rows.n : 0; }

enum { BIG_SET = 32 };

void im_args_add(im_args *a, const im_arg *arg, int keep_first) {
  if (!a) return;
  int64_t at = IM_NONE;
  if (a->rows.n < BIG_SET) {
    /* Sets are small: a linear search finds a key given twice. */
    for (int64_t i = a->rows.n - 1; i >= 0 && at < 0; i--)
      if (a->rows.v[i].key == arg->key) at = i;
  } else {
    /* A big set (an event with thousands of args) would make that
     * quadratic: index its keys. */
    if (!a->by_key.n)
      for (int64_t i = 0; i < a->rows.n; i++)
        if (!im_map_put(&a->by_key, a->rows.v[i].key, i)) return (void)im_oom(a->t);
    at = im_map_get(&a->by_key, arg->key);
  }
  if (at >= 0) {
    if (!keep_first) a->rows.v[at] = *arg;
    return;
  }
  if (IM_PUSH(a->t, a->rows, *arg) && a->by_key.n &&
      !im_map_put(&a->by_key, arg->key, a->rows.n - 1))
    im_oom(a->t);
}

int64_t im_args_next_index(const im_args *a, const char *key, size_t keylen) {
  int64_t next = 0;
  if (!a) return 0;
  for (int64_t i = 0; i < a->rows.n; i++) {
    size_t n;
    const char *k = rt_str_get(a->t->sp, a->rows.v[i].key, &n);
    if (n <= keylen + 1 || memcmp(k, key, keylen) || k[keylen] != '[') continue;
    int64_t idx = 0;
    size_t j = keylen + 1;
    while (j < n && k[j] >= '0' && k[j] <= '9' && idx < INT64_MAX / 16) idx = idx * 10 + (k[j++] - '0');
    if (j < n && k[j] == ']' && idx + 1 > next) next = idx + 1;
  }
  return next;
}

static void add_simple(im_args *a, uint32_t key, im_vtype type, int64_t i, double d, uint32_t s) {
  im_arg arg = {.key = key, .flat_key = key, .type = type, .i = i, .d = d, .s = s};
  im_args_add(a, &arg, 0);
}
void im_args_int(im_args *a, uint32_t key, int64_t v) { add_simple(a, key, IM_V_INT, v, 0, 0); }
void im_args_uint(im_args *a, uint32_t key, uint64_t v) {
  add_simple(a, key, IM_V_UINT, (int64_t)v, 0, 0);
}
void im_args_real(im_args *a, uint32_t key, double v) { add_simple(a, key, IM_V_REAL, 0, v, 0); }
void im_args_string(im_args *a, uint32_t key, uint32_t s) {
  add_simple(a, key, IM_V_STRING, 0, 0, s);
}
void im_args_bool(im_args *a, uint32_t key, int v) { add_simple(a, key, IM_V_BOOL, v != 0, 0, 0); }

/* ---- writing ------------------------------------------------------------- */

static uint64_t value_bits(const im_arg *r) {
  switch (r->type) {
  case IM_V_REAL: {
    uint64_t b;
    double d = r->d == 0 ? 0 : r->d;   /* -0.0 and 0.0 compare equal */
    memcpy(&b, &d, 8);
    return b;
  }
  case IM_V_STRING: case IM_V_JSON: return r->s;
  case IM_V_NULL: return 0;
  default: return (uint64_t)r->i;
  }
}

static uint64_t set_hash(const im_args *a) {
  uint64_t h = 0x51ed27;
  for (int64_t i = 0; i < a->rows.n; i++) {
    const im_arg *r = &a->rows.v[i];
    h = im_hash(h, ((uint64_t)r->key << 8) | (uint64_t)r->type);
    h = im_hash(h, value_bits(r));
  }
  return h;
}

/* Does the written set starting at args row `row` (len rows) hold a's rows? */
static int set_equal(im_trace *t, int64_t row, int32_t len, const im_args *a) {
  if (len != a->rows.n) return 0;
  im_tab *tab = im__tab(t, IM_T_ARGS);
  const uint32_t *key = tab->data[IM_ARGS_KEY];
  const uint32_t *vt = tab->data[IM_ARGS_VALUE_TYPE];
  const uint32_t *flat = tab->data[IM_ARGS_FLAT_KEY];
  const int64_t *iv = tab->data[IM_ARGS_INT_VALUE];
  const double *rv = tab->data[IM_ARGS_REAL_VALUE];
  const uint32_t *sv = tab->data[IM_ARGS_STRING_VALUE];
  const uint64_t *svalid = tab->valid[IM_ARGS_STRING_VALUE];
  for (int32_t i = 0; i < len; i++) {
    const im_arg *r = &a->rows.v[i];
    int64_t k = row + i;
    if (key[k] != r->key || flat[k] != r->flat_key || vt[k] != t->s_vtype[r->type]) return 0;
    switch (r->type) {
    case IM_V_REAL:
      if (!(rv[k] == r->d || (rv[k] != rv[k] && r->d != r->d))) return 0;
      break;
    case IM_V_STRING: case IM_V_JSON: {
      int valid = rt_bit(svalid, (uint32_t)k);
      if (r->s == IM_NULL_STR ? valid : (!valid || sv[k] != r->s)) return 0;
      break;
    }
    case IM_V_NULL: break;
    default:
      if (iv[k] != r->i) return 0;
    }
  }
  return 1;
}

/* Ints repeat (pids, priorities, states, line numbers): their display
 * strings go through a direct-mapped cache before printf and interning. */
static uint32_t display_int(im_trace *t, int64_t v) {
  uint64_t h = ((uint64_t)v * 0x9e3779b97f4a7c15ull) >> 54;   /* 1024 slots */
  if (t->dint_id[h] && t->dint_v[h] == v) return t->dint_id[h] - 1;
  char buf[32];
  snprintf(buf, sizeof buf, "%" PRId64, v);
  uint32_t id = im_cstr(t, buf);
  if (id != IM_NULL_STR && !t->failed) {
    t->dint_v[h] = v;
    t->dint_id[h] = id + 1;
  }
  return id;
}

static uint32_t display(im_trace *t, const im_arg *r) {
  char buf[64];
  switch (r->type) {
  case IM_V_INT: return display_int(t, r->i);
  case IM_V_UINT: snprintf(buf, sizeof buf, "%" PRIu64, (uint64_t)r->i); break;
  case IM_V_POINTER: snprintf(buf, sizeof buf, "0x%" PRIx64, (uint64_t)r->i); break;
  case IM_V_BOOL: return r->i ? t->s_true : t->s_false;
  case IM_V_REAL: sqlite3_snprintf(sizeof buf, buf, "%!.15g", r->d); break;
  case IM_V_STRING: case IM_V_JSON: return r->s;
  case IM_V_NULL: return IM_NULL_STR;
  }
  return im_cstr(t, buf);
}

int64_t im_args_commit(im_trace *t, im_args *a) {
  if (!a || !a->rows.n || t->failed) {
    im_args_clear(a);
    return IM_NONE;
  }
  uint64_t h = set_hash(a);
  for (int64_t s = im_map_get(&t->argset_by_hash, h); s != IM_NONE; s = t->argset_next.v[s]) {
    if (t->argset_hash.v[s] == h && set_equal(t, t->argset_row.v[s], t->argset_len.v[s], a)) {
      im_args_clear(a);
      return t->argset_row.v[s];
    }
  }
  int64_t first = im_rows(t, IM_T_ARGS);
  int64_t set = t->argset_row.n;
  if (!IM_PUSH(t, t->argset_row, first) || !IM_PUSH(t, t->argset_len, (int32_t)a->rows.n) ||
      !IM_PUSH(t, t->argset_hash, h) ||
      !IM_PUSH(t, t->argset_next, im_map_get(&t->argset_by_hash, h)) ||
      !im_map_put(&t->argset_by_hash, h, set)) {
    im_oom(t);
    return IM_NONE;
  }
  for (int64_t i = 0; i < a->rows.n; i++) {
    const im_arg *r = &a->rows.v[i];
    int64_t row = im_append(t, IM_T_ARGS);
    if (row < 0) return IM_NONE;
    im_set_i64(t, IM_T_ARGS, IM_ARGS_ARG_SET_ID, row, first);
    im_set_str(t, IM_T_ARGS, IM_ARGS_FLAT_KEY, row, r->flat_key);
    im_set_str(t, IM_T_ARGS, IM_ARGS_KEY, row, r->key);
    switch (r->type) {
    case IM_V_REAL: im_set_f64(t, IM_T_ARGS, IM_ARGS_REAL_VALUE, row, r->d); break;
    case IM_V_STRING: case IM_V_JSON:
      im_set_str(t, IM_T_ARGS, IM_ARGS_STRING_VALUE, row, r->s);
      break;
    case IM_V_NULL: break;
    default: im_set_i64(t, IM_T_ARGS, IM_ARGS_INT_VALUE, row, r->i); break;
    }
    im_set_str(t, IM_T_ARGS, IM_ARGS_VALUE_TYPE, row, t->s_vtype[r->type]);
    im_set_str(t, IM_T_ARGS, IM_ARGS_DISPLAY_VALUE, row, display(t, r));
  }
  im_args_clear(a);
  return first;
}

void im__args_free_all(im_trace *t) {
  for (int64_t i = 0; i < t->all_args.n; i++) {
    free(t->all_args.v[i]->rows.v);
    im_map_free(&t->all_args.v[i]->by_key);
    free(t->all_args.v[i]);
  }
  free(t->all_args.v);
  free(t->arg_pool.v);
  t->all_args = (typeof(t->all_args)){0};
  t->arg_pool = (typeof(t->arg_pool)){0};
  im_map_free(&t->argset_by_hash);
  free(t->argset_next.v);
  free(t->argset_row.v);
  free(t->argset_len.v);
  free(t->argset_hash.v);
}
