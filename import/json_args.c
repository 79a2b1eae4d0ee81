/*
 * json_args.c — args flattening of the Chrome JSON importer (TRACES.md
 * §2.6): an args object into rows of an arg set, keys `args.a.b[0]`,
 * flat keys without indexes. Pass 1 runs it on the events whose args
 * become a set of their own (X, instants, n), pass 2 on the raw args of
 * B/E and b/e, whose sets merge (indexes continue across the merge).
 */
#include <stdio.h>

#include "json.h"

static void flatten(jtrace *j, im_args *a, jscan *s, int merge, int depth);

static void leaf(jtrace *j, im_args *a, im_vtype type, int64_t i, double d, uint32_t str) {
  uint32_t key = jt_intern(j, j->key.data, j->key.len);
  /* the flat key is the key without indexes: the same when it has none */
  uint32_t flat = j->flat.len == j->key.len ? key : jt_intern(j, j->flat.data, j->flat.len);
  im_arg arg = {.key = key, .flat_key = flat, .type = type, .i = i, .d = d, .s = str};
  im_args_add(a, &arg, 0);
}

/* The value at s->p under the current key / flat key. */
static void flatten_value(jtrace *j, im_args *a, jscan *s, int merge, int depth) {
  char k = js_kind(s);
  const char *str;
  size_t n;
  jnum num;
  switch (k) {
  case '{':
    flatten(j, a, s, merge, depth + 1);
    return;
  case '[': {
    s->p++;
    size_t klen = j->key.len;
    int64_t i = merge ? im_args_next_index(a, j->key.data, klen) : 0;
    int elems = 0;
    while (js_element(s, &elems) > 0) {
      char idx[32];
      int m = snprintf(idx, sizeof idx, "[%lld]", (long long)i++);
      rt_buf_append(&j->key, idx, (size_t)m);
      if (depth < 100) flatten_value(j, a, s, merge, depth + 1);
      else js_skip(s);
      j->key.len = klen;
      if (s->failed) return;
    }
    return;
  }
  case '"':
    if (!js_string(s, &str, &n)) return;
    leaf(j, a, IM_V_STRING, 0, 0, jt_intern(j, str, n));
    return;
  case 'n':
    if (!js_number(s, &num)) return;
    if (num.is_int) leaf(j, a, IM_V_INT, num.i, 0, 0);
    else leaf(j, a, IM_V_REAL, 0, num.d, 0);
    return;
  case 't': case 'f':
    if (js_literal(s, k == 't' ? "true" : "false")) leaf(j, a, IM_V_BOOL, k == 't', 0, 0);
    return;
  case 'N':
    js_literal(s, "null");   /* null members are skipped */
    return;
  default:
    js_skip(s);
  }
}

/* An object at s->p: members add ".name" to key and flat key. */
static void flatten(jtrace *j, im_args *a, jscan *s, int merge, int depth) {
  s->p++;
  size_t klen = j->key.len, flen = j->flat.len;
  const char *name;
  size_t n;
  int members = 0;
  while (js_member(s, &members, &name, &n) > 0) {
    rt_buf_append(&j->key, ".", 1);
    rt_buf_append(&j->key, name, n);
    rt_buf_append(&j->flat, ".", 1);
    rt_buf_append(&j->flat, name, n);
    if (depth < 100) flatten_value(j, a, s, merge, depth);
    else js_skip(s);
    j->key.len = klen;
    j->flat.len = flen;
    if (s->failed) return;
  }
}

void jt_flatten(jtrace *j, im_args *a, jscan *s, int merge) {
  j->key.len = j->flat.len = 0;
  rt_buf_append(&j->key, "args", 4);
  rt_buf_append(&j->flat, "args", 4);
  flatten(j, a, s, merge, 0);
}
