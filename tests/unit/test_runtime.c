/*
 * test_runtime.c — unit tests of the runtime core: string pool, arena and
 * buffers, table builder and catalog, row buffers, the aggregation hash
 * table and sorting. (String helpers are in test_strfn.c.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "runtime/rt.h"
#include "runtime/store.h"
#include "runtime/budget.h"

/* ---- string pool ---------------------------------------------------------- */

static void test_strpool_basics(void **state) {
  (void)state;
  rt_strpool *p = rt_strpool_new();
  size_t len = 99;
  assert_int_equal(rt_str_intern(p, "", 0), 0);
  assert_string_equal(rt_str_get(p, 0, &len), "");
  assert_int_equal(len, 0);
  uint32_t a = rt_str_intern(p, "abc", 3);
  uint32_t b = rt_str_intern(p, "abd", 3);
  assert_int_equal(a, 1);
  assert_int_equal(b, 2);
  assert_int_equal(rt_str_intern(p, "abcdef", 3), a);   /* length-based */
  assert_string_equal(rt_str_get(p, a, &len), "abc");
  assert_int_equal(len, 3);
  assert_int_equal(rt_strpool_count(p), 3);
  rt_strpool_free(p);
}

static void test_strpool_nul_bytes(void **state) {
  (void)state;
  rt_strpool *p = rt_strpool_new();
  uint32_t x = rt_str_intern(p, "a\0b", 3);
  uint32_t y = rt_str_intern(p, "a\0c", 3);
  uint32_t z = rt_str_intern(p, "a", 1);
  uint32_t w = rt_str_intern(p, "a\0", 2);
  assert_true(x != y && x != z && z != w && w != x);
  assert_int_equal(rt_str_intern(p, "a\0b", 3), x);
  size_t len;
  const char *s = rt_str_get(p, x, &len);
  assert_int_equal(len, 3);
  assert_memory_equal(s, "a\0b", 3);
  assert_int_equal(s[3], 0);   /* NUL-terminated in the pool */
  assert_true(rt_str_cmp(p, x, y) < 0);
  assert_true(rt_str_cmp(p, z, w) < 0);   /* "a" < "a\0": prefix first */
  assert_true(rt_str_cmp(p, w, x) < 0);
  rt_strpool_free(p);
}

static void test_strpool_cmp(void **state) {
  (void)state;
  rt_strpool *p = rt_strpool_new();
  uint32_t e = 0, a = rt_str_intern(p, "a", 1), ab = rt_str_intern(p, "ab", 2),
           b = rt_str_intern(p, "b", 1), B = rt_str_intern(p, "B", 1),
           hi = rt_str_intern(p, "\xc3\xa9", 2);
  assert_true(rt_str_cmp(p, e, a) < 0);
  assert_true(rt_str_cmp(p, a, ab) < 0);
  assert_true(rt_str_cmp(p, ab, b) < 0);
  assert_true(rt_str_cmp(p, B, a) < 0);    /* binary: uppercase first */
  assert_true(rt_str_cmp(p, b, hi) < 0);   /* bytes compare unsigned */
  assert_true(rt_str_cmp(p, hi, b) > 0);
  assert_int_equal(rt_str_cmp(p, ab, ab), 0);
  rt_strpool_free(p);
}

static void test_strpool_million(void **state) {
  (void)state;
  rt_strpool *p = rt_strpool_new();
  uint32_t first = rt_str_intern(p, "first", 5);
  const char *first_ptr = rt_str_get(p, first, NULL);
  char buf[32];
  enum { N = 1000000 };
  for (int i = 0; i < N; i++) {
    int n = snprintf(buf, sizeof buf, "s%d", i);
    assert_int_equal(rt_str_intern(p, buf, (size_t)n), (uint32_t)i + 2);
  }
  /* A big string gets its own chunk and does not disturb the others. */
  char *big = malloc(3 << 20);
  memset(big, 'x', 3 << 20);
  uint32_t bid = rt_str_intern(p, big, 3 << 20);
  assert_int_equal(bid, N + 2);
  free(big);
  for (int i = 0; i < N; i += 7) {
    int n = snprintf(buf, sizeof buf, "s%d", i);
    size_t len;
    uint32_t id = rt_str_intern(p, buf, (size_t)n);
    assert_int_equal(id, (uint32_t)i + 2);
    assert_string_equal(rt_str_get(p, id, &len), buf);
    assert_int_equal(len, (size_t)n);
  }
  assert_int_equal(rt_strpool_count(p), N + 3);
  /* Pointers stay valid while the pool grows. */
  assert_ptr_equal(rt_str_get(p, first, NULL), first_ptr);
  assert_string_equal(first_ptr, "first");
  rt_strpool_free(p);
}

/* ---- arena, buffers, helpers -------------------------------------------- */

static void test_arena(void **state) {
  (void)state;
  rt_arena a;
  rt_arena_init(&a);
  size_t total = 0;
  for (int i = 1; i < 3000; i++) {
    size_t n = (size_t)(i % 97) + 1;
    unsigned char *p = rt_arena_alloc(&a, n);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 16, 0);
    for (size_t k = 0; k < n; k++) assert_int_equal(p[k], 0);
    memset(p, 0xab, n);
    total += (n + 15) & ~(size_t)15;
  }
  assert_int_equal(a.used_total, total);
  char *big = rt_arena_alloc(&a, 5 << 20);   /* own block */
  assert_non_null(big);
  assert_int_equal(big[(5 << 20) - 1], 0);
  char *after = rt_arena_alloc(&a, 10);      /* still served */
  assert_non_null(after);
  assert_string_equal(rt_arena_strdup(&a, "hello"), "hello");
  assert_string_equal(rt_arena_strndup(&a, "hello", 3), "hel");
  assert_string_equal(rt_arena_printf(&a, "%d-%s", 42, "x"), "42-x");
  int v[3] = {1, 2, 3};
  int *c = rt_arena_memdup(&a, v, sizeof v);
  assert_int_equal(c[2], 3);
  rt_arena_free(&a);
  assert_null(a.head);
  assert_int_equal(a.used_total, 0);
}

static void test_buf_and_helpers(void **state) {
  (void)state;
  rt_buf b = {0};
  rt_buf_append(&b, "ab", 2);
  for (int i = 0; i < 1000; i++) rt_buf_printf(&b, "%d,", i);
  assert_int_equal(strncmp(b.data, "ab0,1,2,", 8), 0);
  assert_int_equal(b.data[b.len], 0);
  assert_int_equal(b.len, strlen(b.data));
  rt_buf_free(&b);

  rt_err e = {0};
  assert_int_equal(rt_errorf(&e, 7, "WHERE: %s", "first"), 0);
  rt_errorf(&e, 9, "WHERE: second");
  assert_true(e.set);
  assert_int_equal(e.offset, 7);
  assert_string_equal(e.msg, "WHERE: first");

  assert_true(rt_strieq("Slice", "sLICE"));
  assert_false(rt_strieq("slice", "slices"));
  assert_true(rt_strnieq("ABCdef", "abcXYZ", 3));
  assert_false(rt_strnieq("ABCdef", "abd", 3));
  assert_string_equal(rt_type_name(RT_U32), "uint32");
  assert_string_equal(rt_type_name(RT_STR), "string");
  assert_int_equal(rt_type_size(RT_ID), 0);
  assert_int_equal(rt_type_size(RT_I32), 4);
  assert_int_equal(rt_type_size(RT_F64), 8);
  int64_t t0 = rt_now_ns(), t1 = rt_now_ns();
  assert_true(t1 >= t0 && t0 > 0);
}

/* ---- tables ---------------------------------------------------------------- */

static rt_table *build_sample(int n) {
  const char *names[] = {"id", "parent_id", "name", "dur", "ts", "depth"};
  rt_type types[] = {RT_I64, RT_U32, RT_STR, RT_F64, RT_I64, RT_I32};
  rt_table_builder *b = rt_tb_new("slice", 6, names, types);
  for (int i = 0; i < n; i++) {
    rt_tb_append_i64(b, 0, i);
    if (i == 0) rt_tb_append_null(b, 1);
    else rt_tb_append_i64(b, 1, i / 2);
    rt_tb_append_str(b, 2, (uint32_t)(i % 5));
    rt_tb_append_f64(b, 3, i % 3 ? 1.5 * i : -1.0);
    rt_tb_append_i64(b, 4, 1000 + i * 10);
    rt_tb_append_i64(b, 5, -i);
  }
  return rt_tb_finish(b);
}

static void test_table_builder(void **state) {
  (void)state;
  rt_table *t = build_sample(200);
  assert_non_null(t);
  assert_string_equal(t->name, "slice");
  assert_int_equal(t->nrows, 200);
  assert_int_equal(t->refs, 1);
  const rt_column *id = &t->cols[0], *par = &t->cols[1], *name = &t->cols[2], *dur = &t->cols[3],
                   *ts = &t->cols[4], *depth = &t->cols[5];
  assert_int_equal(id->type, RT_ID);
  assert_null(id->data);
  assert_true(id->sorted);
  assert_false(id->nullable);
  assert_int_equal(par->type, RT_U32);
  assert_true(par->nullable);
  assert_non_null(par->valid);
  assert_false(rt_bit(par->valid, 0));
  assert_true(rt_bit(par->valid, 1));
  assert_int_equal(((uint32_t *)par->data)[199], 99);
  assert_true(par->sorted);   /* NULL first, then non-decreasing */
  assert_int_equal(name->type, RT_STR);
  assert_false(name->nullable);
  assert_null(name->valid);
  assert_int_equal(dur->type, RT_F64);
  assert_false(dur->sorted);
  assert_int_equal(ts->type, RT_I64);
  assert_true(ts->sorted);
  assert_int_equal(depth->type, RT_I32);
  assert_int_equal(((int32_t *)depth->data)[5], -5);
  assert_false(depth->sorted);

  assert_int_equal(rt_table_find_col(t, "PARENT_ID"), 1);
  assert_int_equal(rt_table_find_col(t, "nope"), -1);

  rt_view v;
  rt_table_view(t, 0, 128, &v);
  assert_int_equal(v.type, RT_ID);
  assert_int_equal(rt_view_i64(&v, 3), 131);
  rt_table_view(t, 1, 64, &v);
  assert_false(rt_view_is_null(&v, 0));
  assert_int_equal(rt_view_i64(&v, 0), 32);
  rt_table_view(t, 1, 0, &v);
  assert_true(rt_view_is_null(&v, 0));
  rt_table_view(t, 3, 64, &v);
  assert_true(rt_view_f64(&v, 1) == 1.5 * 65);

  assert_ptr_equal(rt_table_ref(t), t);
  assert_int_equal(t->refs, 2);
  rt_table_unref(t);
  rt_table_unref(t);
}

static rt_table *one_col(const char *name, rt_type type, const int64_t *vals, const bool *null,
                         int n) {
  rt_table_builder *b = rt_tb_new("t", 1, &name, &type);
  for (int i = 0; i < n; i++) {
    if (null && null[i]) rt_tb_append_null(b, 0);
    else rt_tb_append_i64(b, 0, vals[i]);
  }
  return rt_tb_finish(b);
}

static void test_table_id_detection(void **state) {
  (void)state;
  int64_t seq[] = {0, 1, 2, 3}, gap[] = {0, 1, 3, 4}, shifted[] = {1, 2, 3, 4};
  bool null2[] = {false, false, true, false};
  rt_table *t;
  t = one_col("ID", RT_I64, seq, NULL, 4);   /* case-insensitive name */
  assert_int_equal(t->cols[0].type, RT_ID);
  rt_table_unref(t);
  t = one_col("id", RT_I64, gap, NULL, 4);
  assert_int_equal(t->cols[0].type, RT_I64);
  assert_true(t->cols[0].sorted);
  rt_table_unref(t);
  t = one_col("id", RT_I64, shifted, NULL, 4);
  assert_int_equal(t->cols[0].type, RT_I64);
  rt_table_unref(t);
  t = one_col("id", RT_I64, seq, null2, 4);
  assert_int_equal(t->cols[0].type, RT_I64);
  assert_true(t->cols[0].nullable);
  assert_false(t->cols[0].sorted);   /* a NULL after values */
  rt_table_unref(t);
  t = one_col("other", RT_I64, seq, NULL, 4);   /* only "id" is special */
  assert_int_equal(t->cols[0].type, RT_I64);
  rt_table_unref(t);
  t = one_col("id", RT_U32, seq, NULL, 4);   /* id wins over the narrow type */
  assert_int_equal(t->cols[0].type, RT_ID);
  rt_table_unref(t);
  /* A declared narrow type that does not fit keeps int64. */
  int64_t big[] = {1, 5000000000};
  t = one_col("x", RT_I32, big, NULL, 2);
  assert_int_equal(t->cols[0].type, RT_I64);
  rt_table_unref(t);
  int64_t neg[] = {1, -1};
  t = one_col("x", RT_U32, neg, NULL, 2);
  assert_int_equal(t->cols[0].type, RT_I64);
  rt_table_unref(t);
  /* Empty table. */
  t = one_col("x", RT_I64, NULL, NULL, 0);
  assert_non_null(t);
  assert_int_equal(t->nrows, 0);
  rt_table_unref(t);
}

static void test_table_unequal_lengths(void **state) {
  (void)state;
  const char *names[] = {"a", "b"};
  rt_type types[] = {RT_I64, RT_F64};
  rt_table_builder *b = rt_tb_new("t", 2, names, types);
  rt_tb_append_i64(b, 0, 1);
  rt_tb_append_i64(b, 0, 2);
  rt_tb_append_f64(b, 1, 1.0);
  assert_null(rt_tb_finish(b));
  b = rt_tb_new("t", 2, names, types);
  rt_tb_append_i64(b, 0, 1);
  rt_tb_abort(b);
}

static void test_table_nulls_many(void **state) {
  (void)state;
  /* NULLs late in a long column: validity bits cover earlier rows. */
  const char *name = "v";
  rt_type type = RT_F64;
  rt_table_builder *b = rt_tb_new("t", 1, &name, &type);
  for (int i = 0; i < 5000; i++) {
    if (i == 4321) rt_tb_append_null(b, 0);
    else rt_tb_append_f64(b, 0, i);
  }
  rt_table *t = rt_tb_finish(b);
  assert_true(t->cols[0].nullable);
  assert_false(t->cols[0].sorted);
  for (int i = 0; i < 5000; i++) assert_int_equal(rt_bit(t->cols[0].valid, (uint32_t)i), i != 4321);
  rt_table_unref(t);
}

static void test_catalog(void **state) {
  (void)state;
  rt_catalog *c = rt_catalog_new();
  rt_table *t1 = build_sample(10), *t2 = build_sample(20);
  free(t2->name);
  t2->name = strdup("Thread");
  rt_catalog_put(c, t1);
  rt_catalog_put(c, t2);
  assert_int_equal(rt_catalog_count(c), 2);
  assert_ptr_equal(rt_catalog_get(c, "SLICE"), t1);
  assert_ptr_equal(rt_catalog_get(c, "thread"), t2);
  assert_null(rt_catalog_get(c, "sched"));
  assert_ptr_equal(rt_catalog_at(c, 1), t2);
  /* Replacing keeps a table a query still holds alive. */
  rt_table *held = rt_table_ref(rt_catalog_get(c, "slice"));
  rt_table *t3 = build_sample(30);
  rt_catalog_put(c, t3);
  assert_int_equal(rt_catalog_count(c), 2);
  assert_ptr_equal(rt_catalog_get(c, "slice"), t3);
  assert_int_equal(held->refs, 1);
  assert_int_equal(held->nrows, 10);
  rt_table_unref(held);
  rt_catalog_remove(c, "THREAD");
  assert_int_equal(rt_catalog_count(c), 1);
  assert_null(rt_catalog_get(c, "thread"));
  rt_catalog_remove(c, "missing");
  rt_catalog_free(c);
}

/* ---- row buffers ------------------------------------------------------------- */

static void test_rowbuf_append_views(void **state) {
  (void)state;
  rt_type types[] = {RT_I32, RT_F64, RT_STR, RT_ID, RT_U32, RT_NULLT};
  rt_rowbuf b;
  rt_rowbuf_init(&b, 6, types);
  assert_int_equal(b.types[0], RT_I64);
  assert_int_equal(b.types[3], RT_I64);
  assert_int_equal(b.types[5], RT_I64);

  int32_t i32[100];
  double f64[100];
  uint32_t str[100], u32[100];
  uint64_t valid[2] = {0, 0};
  uint32_t sel[100], active[50];
  for (int i = 0; i < 100; i++) {
    i32[i] = -i;
    f64[i] = i * 0.5;
    str[i] = (uint32_t)(1000 + i);
    u32[i] = 4000000000u + (uint32_t)i;
    sel[i] = (uint32_t)(99 - i);   /* reversed */
    if (i % 3) rt_bit_set(valid, (uint32_t)i);
  }
  for (int j = 0; j < 50; j++) active[j] = (uint32_t)(2 * j);
  rt_view v[6] = {
      {RT_I32, i32, NULL, NULL, 0},   {RT_F64, f64, valid, NULL, 0},
      {RT_STR, str, NULL, sel, 0},    {RT_ID, NULL, NULL, NULL, 500},
      {RT_U32, u32, valid, sel, 0},   {RT_NULLT, NULL, NULL, NULL, 0},
  };
  /* 30 batches, so rows cross validity words and the buffer grows. */
  for (int k = 0; k < 30; k++) rt_rowbuf_append_views(&b, v, active, 50);
  rt_rowbuf_append_views(&b, v, NULL, 100);   /* all positions */
  assert_int_equal(b.nrows, 1600);
  assert_true(b.cap >= 1600 && b.cap % 64 == 0);
  for (int k = 0; k < 30; k++) {
    for (int j = 0; j < 50; j++) {
      int64_t r = k * 50 + j;
      int i = 2 * j;
      assert_int_equal(((int64_t *)b.data[0])[r], -i);
      assert_true(rt_bit(b.valid[0], (uint32_t)r));
      assert_int_equal(rt_bit(b.valid[1], (uint32_t)r), i % 3 != 0);
      if (i % 3) assert_true(((double *)b.data[1])[r] == i * 0.5);
      assert_int_equal(((uint32_t *)b.data[2])[r], 1000 + (99 - i));
      assert_int_equal(((int64_t *)b.data[3])[r], 500 + i);
      /* The selection maps position i to row 99-i, validity included. */
      assert_int_equal(rt_bit(b.valid[4], (uint32_t)r), (99 - i) % 3 != 0);
      assert_int_equal(((int64_t *)b.data[4])[r], 4000000000ll + 99 - i);
      assert_false(rt_bit(b.valid[5], (uint32_t)r));
    }
  }
  assert_int_equal(((int64_t *)b.data[3])[1500 + 77], 577);

  /* Views back out: plain (aligned start) and through a permutation. */
  rt_view out;
  rt_rowbuf_view(&b, 0, 64, NULL, &out);
  assert_int_equal(out.type, RT_I64);
  assert_int_equal(rt_view_i64(&out, 0), ((int64_t *)b.data[0])[64]);
  rt_rowbuf_view(&b, 1, 64, NULL, &out);
  assert_int_equal(rt_view_is_null(&out, 2), !rt_bit(b.valid[1], 66));
  uint32_t *perm = malloc(1600 * sizeof *perm);
  for (int i = 0; i < 1600; i++) perm[i] = (uint32_t)(1599 - i);
  rt_rowbuf_view(&b, 3, 128, perm, &out);
  assert_int_equal(rt_view_i64(&out, 0), ((int64_t *)b.data[3])[1599 - 128]);
  free(perm);
  rt_rowbuf_free(&b);
}

static void test_rowbuf_to_table(void **state) {
  (void)state;
  rt_type types[] = {RT_I64, RT_F64, RT_I64};
  rt_rowbuf b;
  rt_rowbuf_init(&b, 3, types);
  int64_t ids[300], vals[300];
  double d[300];
  uint64_t valid[5] = {0};
  for (int i = 0; i < 300; i++) {
    ids[i] = i;
    vals[i] = 7 - i;
    d[i] = i;
    if (i != 250) rt_bit_set(valid, (uint32_t)i);
  }
  rt_view v[3] = {{RT_I64, ids, NULL, NULL, 0}, {RT_F64, d, NULL, NULL, 0},
                  {RT_I64, vals, valid, NULL, 0}};
  rt_rowbuf_append_views(&b, v, NULL, 300);
  const char *names[] = {"id", "ts", "v"};
  rt_table *t = rt_rowbuf_to_table(&b, "out", names, NULL);
  assert_int_equal(b.ncols, 0);   /* moved out */
  assert_int_equal(t->nrows, 300);
  assert_int_equal(t->cols[0].type, RT_ID);
  assert_int_equal(t->cols[1].type, RT_F64);
  assert_true(t->cols[1].sorted);
  assert_false(t->cols[1].nullable);   /* validity dropped: no NULL */
  assert_null(t->cols[1].valid);
  assert_true(t->cols[2].nullable);
  assert_false(rt_bit(t->cols[2].valid, 250));
  assert_int_equal(((int64_t *)t->cols[2].data)[299], 7 - 299);
  assert_string_equal(t->cols[2].name, "v");
  rt_table_unref(t);

  rt_rowbuf e;
  rt_rowbuf_init(&e, 1, types);
  t = rt_rowbuf_to_table(&e, "empty", names, NULL);
  assert_int_equal(t->nrows, 0);
  rt_table_unref(t);
}

/* ---- aggregation -------------------------------------------------------------- */

/* What generated code does for one I64/STR key: the documented probe. */
static int64_t inline_probe(const rt_aggtab *t, int64_t v) {
  uint64_t i = rt_hash_i64((uint64_t)v) & t->mask;
  for (uint32_t s; (s = t->slots[i]) != 0; i = (i + 1) & t->mask) {
    int64_t key = t->keys.types[0] == RT_STR ? ((const uint32_t *)t->keys.data[0])[s - 1]
                                             : ((const int64_t *)t->keys.data[0])[s - 1];
    if (key == v) return s - 1;
  }
  return -1;
}

static void test_aggtab_int_key(void **state) {
  (void)state;
  rt_type kt = RT_I64;
  rt_aggkind kinds[] = {RT_AGG_COUNT_STAR, RT_AGG_SUM, RT_AGG_MIN, RT_AGG_AVG, RT_AGG_MAX};
  rt_type in[] = {RT_I64, RT_I64, RT_I64, RT_I64, RT_F64};
  rt_aggtab t;
  rt_aggtab_init(&t, 1, &kt, 5, kinds, in);
  assert_int_equal(t.null_group, -1);
  assert_int_equal(t.aggs[1].out, RT_I64);
  assert_int_equal(t.aggs[3].out, RT_F64);
  assert_int_equal(t.aggs[4].out, RT_F64);
  int64_t keys[] = {5, -3, 5, 0, -3, 5};
  int64_t vals[] = {1, 2, 3, 4, 5, 6};
  for (int r = 0; r < 6; r++) {
    int64_t g = rt_aggtab_group_i64(&t, keys[r]);
    t.aggs[0].i[g]++;
    t.aggs[1].i[g] += vals[r];
    t.aggs[1].has[g] = 1;
    if (!t.aggs[2].has[g] || vals[r] < t.aggs[2].i[g]) t.aggs[2].i[g] = vals[r];
    t.aggs[2].has[g] = 1;
    t.aggs[3].f[g] += (double)vals[r];
    t.aggs[3].n[g]++;
    t.aggs[3].has[g] = 1;
    /* MAX of a column that is always NULL: has stays 0. */
  }
  assert_int_equal(t.ngroups, 3);   /* first-seen order: 5, -3, 0 */
  assert_int_equal(inline_probe(&t, 5), 0);
  assert_int_equal(inline_probe(&t, -3), 1);
  assert_int_equal(inline_probe(&t, 0), 2);
  assert_int_equal(inline_probe(&t, 42), -1);
  int64_t g0 = rt_aggtab_group_null(&t);
  assert_int_equal(g0, 3);
  assert_int_equal(t.null_group, 3);
  assert_int_equal(rt_aggtab_group_null(&t), 3);
  assert_int_equal(inline_probe(&t, 0), 2);   /* NULL is not key 0 */
  t.aggs[0].i[3]++;
  /* The generic entry point agrees with the fast paths. */
  int64_t v = 0;
  uint8_t isnull = 1;
  assert_int_equal(rt_aggtab_group(&t, &v, &isnull), 3);
  isnull = 0;
  v = -3;
  assert_int_equal(rt_aggtab_group(&t, &v, &isnull), 1);

  rt_type out_types[] = {RT_I64, RT_I64, RT_I64, RT_I64, RT_F64, RT_F64};
  rt_rowbuf out;
  rt_rowbuf_init(&out, 6, out_types);
  rt_aggtab_emit(&t, &out);
  assert_int_equal(out.nrows, 4);
  const int64_t *k = out.data[0], *cnt = out.data[1], *sum = out.data[2], *mn = out.data[3];
  const double *avg = out.data[4];
  assert_int_equal(k[0], 5);
  assert_int_equal(k[1], -3);
  assert_int_equal(k[2], 0);
  assert_false(rt_bit(out.valid[0], 3));   /* the NULL key */
  assert_int_equal(cnt[0], 3);
  assert_int_equal(cnt[3], 1);
  assert_true(rt_bit(out.valid[1], 3));    /* COUNT is never NULL */
  assert_int_equal(sum[0], 10);
  assert_int_equal(sum[1], 7);
  assert_false(rt_bit(out.valid[2], 3));   /* SUM of nothing is NULL */
  assert_int_equal(mn[0], 1);
  assert_int_equal(mn[1], 2);
  assert_true(avg[0] == 10.0 / 3);
  assert_false(rt_bit(out.valid[4], 3));
  for (int g = 0; g < 4; g++) assert_false(rt_bit(out.valid[5], (uint32_t)g));
  rt_rowbuf_free(&out);
  rt_aggtab_free(&t);
}

static void test_aggtab_string_key(void **state) {
  (void)state;
  rt_strpool *p = rt_strpool_new();
  rt_type kt = RT_STR;
  rt_aggkind kinds[] = {RT_AGG_COUNT, RT_AGG_MIN, RT_AGG_ANY_VALUE};
  rt_type in[] = {RT_STR, RT_STR, RT_F64};
  rt_aggtab t;
  rt_aggtab_init(&t, 1, &kt, 3, kinds, in);
  assert_int_equal(t.aggs[1].out, RT_STR);
  const char *words[] = {"b", "a", "b", "c", "a", "b"};
  for (int r = 0; r < 6; r++) {
    uint32_t id = rt_str_intern(p, words[r], 1);
    int64_t g = rt_aggtab_group_i64(&t, id);
    t.aggs[0].i[g]++;
    if (!t.aggs[1].has[g] || rt_str_cmp(p, id, (uint32_t)t.aggs[1].i[g]) < 0) t.aggs[1].i[g] = id;
    t.aggs[1].has[g] = 1;
    if (!t.aggs[2].has[g]) {
      t.aggs[2].f[g] = r;
      t.aggs[2].has[g] = 1;
    }
  }
  assert_int_equal(t.ngroups, 3);
  assert_int_equal(inline_probe(&t, rt_str_intern(p, "c", 1)), 2);
  rt_type ot[] = {RT_STR, RT_I64, RT_STR, RT_F64};
  rt_rowbuf out;
  rt_rowbuf_init(&out, 4, ot);
  rt_aggtab_emit(&t, &out);
  const uint32_t *k = out.data[0];
  assert_string_equal(rt_str_get(p, k[0], NULL), "b");
  assert_string_equal(rt_str_get(p, k[1], NULL), "a");
  assert_string_equal(rt_str_get(p, k[2], NULL), "c");
  assert_int_equal(((int64_t *)out.data[1])[0], 3);
  assert_string_equal(rt_str_get(p, ((uint32_t *)out.data[2])[2], NULL), "c");
  assert_true(((double *)out.data[3])[1] == 1.0);
  rt_rowbuf_free(&out);
  rt_aggtab_free(&t);
  rt_strpool_free(p);
}

static int64_t dbits(double d) {
  int64_t v;
  memcpy(&v, &d, 8);
  return v;
}

/* Two integer keys: pairs in [0, RT_AGG_DIRECT2_W)^2 find their group in
 * the direct array, the rest (out of range, negative, NULL) in the slots,
 * all numbered first-seen; emptying the table forgets the pairs (a stale
 * entry would hand out a group of before the reset), for a few groups and
 * for many. */
static void test_aggtab_pair_direct(void **state) {
  (void)state;
  rt_type kt[] = {RT_I64, RT_STR};
  rt_aggkind kinds[] = {RT_AGG_COUNT_STAR};
  rt_type in[] = {RT_I64};
  rt_aggtab t;
  rt_aggtab_init(&t, 2, kt, 1, kinds, in);
  assert_non_null(t.direct);
  static const int64_t pairs[][2] = {{1, 2}, {255, 255}, {256, 0}, {-1, 3}, {0, 0}, {2, 1}, {3, 256}};
  int np = (int)(sizeof pairs / sizeof *pairs);
  uint8_t nn[2] = {0, 0};
  for (int round = 0; round < 2; round++)
    for (int i = 0; i < np; i++) assert_int_equal(rt_aggtab_group(&t, pairs[i], nn), i);
  assert_int_equal(t.direct[rt_aggtab_direct2(255, 255)], 2);
  assert_int_equal(t.direct[rt_aggtab_direct2(0, 0)], 5);
  uint8_t n0[2] = {1, 0};
  int64_t v[2] = {1, 2};
  assert_int_equal(rt_aggtab_group(&t, v, n0), np);   /* (NULL, 2) is not (1, 2) */
  assert_int_equal(rt_aggtab_group(&t, v, n0), np);
  assert_int_equal(t.ngroups, np + 1);

  rt_aggtab_reset(&t);
  for (int i = np - 1; i >= 0; i--) assert_int_equal(rt_aggtab_group(&t, pairs[i], nn), np - 1 - i);
  assert_int_equal(t.ngroups, np);

  /* more groups than the reset clears one by one */
  rt_aggtab_reset(&t);
  for (int64_t a = 0; a < 100; a++)
    for (int64_t b = 0; b < 50; b++) {
      int64_t ab[2] = {a, b};
      assert_int_equal(rt_aggtab_group(&t, ab, nn), a * 50 + b);
    }
  rt_aggtab_reset(&t);
  int64_t last[2] = {99, 49};
  assert_int_equal(rt_aggtab_group(&t, last, nn), 0);
  assert_int_equal(rt_aggtab_group(&t, pairs[0], nn), 1);
  assert_int_equal(t.ngroups, 2);
  rt_aggtab_free(&t);
}

static void test_aggtab_multi_key(void **state) {
  (void)state;
  rt_type kt[] = {RT_I64, RT_F64};
  rt_aggkind kinds[] = {RT_AGG_COUNT_STAR};
  rt_type in[] = {RT_I64};
  rt_aggtab t;
  rt_aggtab_init(&t, 2, kt, 1, kinds, in);
  int64_t v[2];
  uint8_t n[2] = {0, 0};
  v[0] = 1, v[1] = dbits(0.0);
  int64_t g0 = rt_aggtab_group(&t, v, n);
  v[1] = dbits(-0.0);
  assert_int_equal(rt_aggtab_group(&t, v, n), g0);   /* -0.0 groups with 0.0 */
  v[1] = dbits(2.5);
  int64_t g1 = rt_aggtab_group(&t, v, n);
  assert_int_equal(g1, 1);
  n[0] = 1;
  v[0] = 0;
  int64_t g2 = rt_aggtab_group(&t, v, n);   /* (NULL, 2.5) */
  assert_int_equal(g2, 2);
  v[0] = 12345;   /* value bits of a NULL key are ignored */
  assert_int_equal(rt_aggtab_group(&t, v, n), g2);
  n[0] = 0;
  v[0] = 0;
  assert_int_equal(rt_aggtab_group(&t, v, n), 3);   /* (0, 2.5) is not (NULL, 2.5) */
  n[0] = n[1] = 1;
  int64_t g4 = rt_aggtab_group(&t, v, n);
  assert_int_equal(g4, 4);
  assert_int_equal(rt_aggtab_group_null(&t), g4);
  assert_int_equal(t.ngroups, 5);

  rt_rowbuf out;
  rt_type ot[] = {RT_I64, RT_F64, RT_I64};
  rt_rowbuf_init(&out, 3, ot);
  rt_aggtab_emit(&t, &out);
  assert_int_equal(out.nrows, 5);
  const double *d = out.data[1];
  assert_true(d[0] == 0.0 && !signbit(d[0]));
  assert_true(d[1] == 2.5);
  assert_false(rt_bit(out.valid[0], 2));
  assert_true(rt_bit(out.valid[1], 2));
  assert_false(rt_bit(out.valid[0], 4) || rt_bit(out.valid[1], 4));
  for (int g = 0; g < 5; g++) assert_int_equal(((int64_t *)out.data[2])[g], 0);   /* COUNT 0 */
  rt_rowbuf_free(&out);
  rt_aggtab_free(&t);

  /* One double key: the generic tuple path, NULL kept apart. */
  rt_type fk = RT_F64;
  rt_aggtab_init(&t, 1, &fk, 1, kinds, in);
  uint8_t nn = 0;
  int64_t x = dbits(-0.0);
  assert_int_equal(rt_aggtab_group(&t, &x, &nn), 0);
  x = dbits(0.0);
  assert_int_equal(rt_aggtab_group(&t, &x, &nn), 0);
  nn = 1;
  assert_int_equal(rt_aggtab_group(&t, &x, &nn), 1);
  assert_int_equal(t.null_group, 1);
  nn = 0;
  for (int i = 0; i < 5000; i++) {   /* grow past the NULL group */
    x = dbits(i + 0.5);
    assert_int_equal(rt_aggtab_group(&t, &x, &nn), i + 2);
  }
  x = dbits(0.0);
  assert_int_equal(rt_aggtab_group(&t, &x, &nn), 0);
  nn = 1;
  assert_int_equal(rt_aggtab_group(&t, &x, &nn), 1);
  rt_aggtab_free(&t);
}

static void test_aggtab_no_keys(void **state) {
  (void)state;
  rt_aggkind kinds[] = {RT_AGG_COUNT_STAR, RT_AGG_SUM, RT_AGG_AVG};
  rt_type in[] = {RT_I64, RT_F64, RT_I64};
  rt_aggtab t;
  rt_aggtab_init(&t, 0, NULL, 3, kinds, in);
  rt_aggtab_ensure_one(&t);
  rt_aggtab_ensure_one(&t);
  assert_int_equal(t.ngroups, 1);
  assert_int_equal(rt_aggtab_group(&t, NULL, NULL), 0);
  rt_rowbuf out;
  rt_type ot[] = {RT_I64, RT_F64, RT_F64};
  rt_rowbuf_init(&out, 3, ot);
  rt_aggtab_emit(&t, &out);
  assert_int_equal(out.nrows, 1);
  assert_true(rt_bit(out.valid[0], 0));
  assert_int_equal(((int64_t *)out.data[0])[0], 0);
  assert_false(rt_bit(out.valid[1], 0));
  assert_false(rt_bit(out.valid[2], 0));
  rt_rowbuf_free(&out);
  rt_aggtab_free(&t);
}

static void test_aggtab_million_groups(void **state) {
  (void)state;
  rt_type kt = RT_I64;
  rt_aggkind kinds[] = {RT_AGG_SUM};
  rt_type in[] = {RT_I64};
  rt_aggtab t;
  rt_aggtab_init(&t, 1, &kt, 1, kinds, in);
  enum { N = 1000000 };
  /* Keys spread over the int64 range, including the extremes. */
  for (int64_t i = 0; i < N; i++) {
    int64_t key = i == 1 ? INT64_MIN : i == 2 ? INT64_MAX : (i * 2654435761ll) ^ (i << 40);
    int64_t g = rt_aggtab_group_i64(&t, key);
    assert_int_equal(g, i);
    t.aggs[0].i[g] += i;
    t.aggs[0].has[g] = 1;
  }
  assert_int_equal(t.ngroups, N);
  assert_true(t.mask + 1 >= 2 * (uint64_t)N);   /* load <= 1/2 */
  for (int64_t i = 0; i < N; i += 3) {
    int64_t key = i == 1 ? INT64_MIN : i == 2 ? INT64_MAX : (i * 2654435761ll) ^ (i << 40);
    assert_int_equal(inline_probe(&t, key), i);
    int64_t g = rt_aggtab_group_i64(&t, key);
    assert_int_equal(g, i);
    t.aggs[0].i[g] += 1;
  }
  assert_int_equal(t.ngroups, N);
  rt_rowbuf out;
  rt_type ot[] = {RT_I64, RT_I64};
  rt_rowbuf_init(&out, 2, ot);
  rt_aggtab_emit(&t, &out);
  assert_int_equal(out.nrows, N);
  assert_int_equal(((int64_t *)out.data[0])[1], INT64_MIN);
  assert_int_equal(((int64_t *)out.data[1])[999999], 999999 + (999999 % 3 == 0));
  assert_int_equal(((int64_t *)out.data[1])[999998], 999998);
  rt_rowbuf_free(&out);
  rt_aggtab_free(&t);
}

/* ---- sort ---------------------------------------------------------------------- */

typedef struct ref_ctx {
  const rt_rowbuf *b;
  int nkeys;
  const rt_sortkey *keys;
  const rt_strpool *sp;
} ref_ctx;
static ref_ctx g_ref;

/* Reference comparator: the documented order, ties broken by row index. */
static int ref_cmp(const void *pa, const void *pb) {
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  for (int k = 0; k < g_ref.nkeys; k++) {
    const rt_sortkey *key = &g_ref.keys[k];
    int c = key->col;
    bool na = !rt_bit(g_ref.b->valid[c], a), nb = !rt_bit(g_ref.b->valid[c], b);
    if (na || nb) {
      if (na && nb) continue;
      return na == key->nulls_first ? -1 : 1;
    }
    int r;
    switch (g_ref.b->types[c]) {
    case RT_F64: {
      double x = ((double *)g_ref.b->data[c])[a], y = ((double *)g_ref.b->data[c])[b];
      r = x < y ? -1 : x > y;
      break;
    }
    case RT_STR:
      r = rt_str_cmp(g_ref.sp, ((uint32_t *)g_ref.b->data[c])[a], ((uint32_t *)g_ref.b->data[c])[b]);
      r = r < 0 ? -1 : r > 0;
      break;
    default: {
      int64_t x = ((int64_t *)g_ref.b->data[c])[a], y = ((int64_t *)g_ref.b->data[c])[b];
      r = x < y ? -1 : x > y;
    }
    }
    if (r) return key->desc ? -r : r;
  }
  return a < b ? -1 : a > b;
}

static void check_against_ref(const rt_rowbuf *b, int nkeys, const rt_sortkey *keys,
                              const rt_strpool *sp) {
  uint32_t *perm = rt_sort_perm(b, nkeys, keys, sp);
  uint32_t *ref = malloc((size_t)b->nrows * sizeof *ref);
  for (int64_t i = 0; i < b->nrows; i++) ref[i] = (uint32_t)i;
  g_ref = (ref_ctx){b, nkeys, keys, sp};
  qsort(ref, (size_t)b->nrows, sizeof *ref, ref_cmp);
  assert_memory_equal(perm, ref, (size_t)b->nrows * sizeof *ref);
  rt_mem_free(perm);
  free(ref);
}

/* Appends one row of (int, double, string) with the given NULL flags. */
static void append_row(rt_rowbuf *b, int64_t i, double d, uint32_t s, int nullmask) {
  rt_view v[3] = {{RT_I64, &i, NULL, NULL, 0}, {RT_F64, &d, NULL, NULL, 0}, {RT_STR, &s, NULL, NULL, 0}};
  uint64_t zero = 0;
  for (int c = 0; c < 3; c++)
    if (nullmask & (1 << c)) v[c].valid = &zero;
  rt_rowbuf_append_views(b, v, NULL, 1);
}

static void test_sort_small_cases(void **state) {
  (void)state;
  rt_strpool *p = rt_strpool_new();
  /* Interned in reverse order, so id order is not text order. */
  uint32_t sc = rt_str_intern(p, "c", 1), sb = rt_str_intern(p, "b", 1),
           sa = rt_str_intern(p, "a", 1), sab = rt_str_intern(p, "ab", 2);
  rt_type types[] = {RT_I64, RT_F64, RT_STR};
  rt_rowbuf b;
  rt_rowbuf_init(&b, 3, types);
  append_row(&b, 3, 1.5, sc, 0);     /* 0 */
  append_row(&b, 1, -0.0, sb, 0);    /* 1 */
  append_row(&b, 3, 0.0, sa, 0);     /* 2 */
  append_row(&b, 0, -2.0, sab, 1);   /* 3: int NULL */
  append_row(&b, 1, 0.0, sa, 2);     /* 4: double NULL */
  append_row(&b, 1, 1e300, sa, 4);   /* 5: string NULL */

  assert_null(rt_sort_perm(&(rt_rowbuf){0}, 0, NULL, p));

  rt_sortkey k_int = {0, false, true};
  uint32_t *perm = rt_sort_perm(&b, 1, &k_int, p);
  uint32_t e1[] = {3, 1, 4, 5, 0, 2};   /* NULL first, ties stable */
  assert_memory_equal(perm, e1, sizeof e1);
  rt_mem_free(perm);

  rt_sortkey k_int_desc = {0, true, false};
  perm = rt_sort_perm(&b, 1, &k_int_desc, p);
  uint32_t e2[] = {0, 2, 1, 4, 5, 3};   /* DESC keeps ties in input order */
  assert_memory_equal(perm, e2, sizeof e2);
  rt_mem_free(perm);

  rt_sortkey k_dbl = {1, false, false};
  perm = rt_sort_perm(&b, 1, &k_dbl, p);
  uint32_t e3[] = {3, 1, 2, 0, 5, 4};   /* -0.0 ties 0.0; NULLS LAST */
  assert_memory_equal(perm, e3, sizeof e3);
  rt_mem_free(perm);

  rt_sortkey k_str = {2, false, true};
  perm = rt_sort_perm(&b, 1, &k_str, p);
  uint32_t e4[] = {5, 2, 4, 3, 1, 0};   /* NULL, a, a, ab, b, c */
  assert_memory_equal(perm, e4, sizeof e4);
  rt_mem_free(perm);

  rt_sortkey k2[] = {{2, true, false}, {1, false, true}};
  perm = rt_sort_perm(&b, 2, k2, p);
  uint32_t e5[] = {0, 1, 3, 4, 2, 5};   /* c, b, ab, a(NULL dbl), a(0.0), NULL */
  assert_memory_equal(perm, e5, sizeof e5);
  rt_mem_free(perm);
  check_against_ref(&b, 2, k2, p);

  perm = rt_sort_perm(&b, 0, NULL, p);   /* no keys: identity */
  for (uint32_t i = 0; i < 6; i++) assert_int_equal(perm[i], i);
  rt_mem_free(perm);
  rt_rowbuf_free(&b);
  rt_strpool_free(p);
}

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static void test_sort_random_vs_reference(void **state) {
  (void)state;
  rt_strpool *p = rt_strpool_new();
  uint32_t ids[50];
  char buf[16];
  for (int i = 0; i < 50; i++) {
    int n = snprintf(buf, sizeof buf, "k%llu", (unsigned long long)(rng() % 1000));
    ids[i] = rt_str_intern(p, buf, (size_t)n);
  }
  rt_type types[] = {RT_I64, RT_F64, RT_STR};
  rt_rowbuf b;
  rt_rowbuf_init(&b, 3, types);
  for (int i = 0; i < 20000; i++) {
    int64_t iv = (int64_t)(rng() % 7) - 3;
    if (i % 11 == 0) iv = (int64_t)rng();   /* full-range values too */
    double dv = ((double)(int64_t)(rng() % 2001) - 1000) / 8;
    append_row(&b, iv, dv, ids[rng() % 50], (int)(rng() % 16 == 0 ? rng() % 8 : 0));
  }
  for (int trial = 0; trial < 8; trial++) {
    rt_sortkey keys[3];
    int nk = 1 + trial % 3;
    for (int k = 0; k < nk; k++)
      keys[k] = (rt_sortkey){(int)((trial + k) % 3), (trial >> k) & 1, ((trial >> (k + 1)) & 1) != 0};
    check_against_ref(&b, nk, keys, p);
  }
  rt_rowbuf_free(&b);
  rt_strpool_free(p);
}

static void test_sort_million(void **state) {
  (void)state;
  enum { N = 1000000 };
  rt_type types[] = {RT_I64};
  rt_rowbuf b;
  rt_rowbuf_init(&b, 1, types);
  rt_rowbuf_reserve(&b, N);
  int64_t *d = b.data[0];
  for (int i = 0; i < N; i++) {
    d[i] = (int64_t)(rng() % 100000) - 50000;   /* many ties */
    if (i % 1000 != 7) rt_bit_set(b.valid[0], (uint32_t)i);
  }
  b.nrows = N;
  rt_sortkey k = {0, true, false};
  int64_t t0 = rt_now_ns();
  uint32_t *perm = rt_sort_perm(&b, 1, &k, NULL);
  int64_t t1 = rt_now_ns();
  print_message("sort of 1M int64 rows: %.1f ms\n", (t1 - t0) / 1e6);
  uint8_t *seen = calloc(N, 1);
  for (int i = 0; i < N; i++) {
    assert_false(seen[perm[i]]);
    seen[perm[i]] = 1;
    if (i == 0) continue;
    uint32_t a = perm[i - 1], c = perm[i];
    bool na = !rt_bit(b.valid[0], a), nc = !rt_bit(b.valid[0], c);
    if (na) {
      assert_true(nc && a < c);   /* NULLs last, stable */
    } else if (!nc) {
      assert_true(d[a] > d[c] || (d[a] == d[c] && a < c));
    }
  }
  assert_false(rt_bit(b.valid[0], perm[N - 1]));
  free(seen);
  rt_mem_free(perm);
  rt_rowbuf_free(&b);
}

/* Rows of the emit-move test: key tuple of row r (group r % 997, a NULL
 * in some), and its values. */
static void move_row(int64_t r, int64_t *vals, uint8_t *nulls, int seed) {
  int64_t g = (r * 7 + seed) % 997;
  double d = g % 5 == 0 ? -0.0 : (double)(g % 13) / 4;
  vals[0] = g;
  vals[1] = g;   /* never NULL: every tuple its own group */
  memcpy(&vals[2], &d, 8);
  nulls[0] = g % 17 == 3;
  nulls[1] = 0;
  nulls[2] = g % 29 == 1;
}

static void move_fill(rt_aggtab *t, int64_t nrows, int seed, int64_t *count, int64_t *sum) {
  for (int64_t r = 0; r < nrows; r++) {
    int64_t vals[3];
    uint8_t nulls[3];
    move_row(r, vals, nulls, seed);
    int64_t g = rt_aggtab_group(t, vals, nulls);
    assert_true(g >= 0);
    int64_t key = vals[1];
    /* SUM of an integer NULL in every row of some groups; a double SUM
     * that is inf + -inf (NaN: NULL) in others */
    bool inull = key % 11 == 0;
    double f = key % 23 == 0 ? (r % 2 ? INFINITY : -INFINITY) : (double)r * 0.25;
    int64_t fb;
    memcpy(&fb, &f, 8);
    assert_int_equal(rt_aggtab_fold(t, 0, g, 0, false, 0, true), 0);
    assert_int_equal(rt_aggtab_fold(t, 1, g, r, inull, 0, true), 0);
    assert_int_equal(rt_aggtab_fold(t, 2, g, fb, false, 0, true), 0);
    assert_int_equal(rt_aggtab_fold(t, 3, g, r % 5, false, 0, true), 0);
    assert_int_equal(rt_aggtab_fold(t, 4, g, fb, key % 7 == 0, 0, true), 0);
    assert_int_equal(rt_aggtab_fold(t, 5, g, r % 3, false, 0, true), 0);
    if (count) {
      count[g]++;
      if (!inull) sum[g] += r;
    }
  }
}

/* rt_aggtab_emit_move writes what rt_aggtab_emit writes (values, NULLs,
 * zeros in NULL rows and past the last row), taking the arrays it can
 * and writing the others (ANY_VALUE of strings, AVG), also from a table
 * reset after other groups (new groups start zero although the arrays
 * grow unwritten). */
static void test_aggtab_emit_move(void **state) {
  (void)state;
  rt_type kt[] = {RT_I64, RT_STR, RT_F64};
  rt_aggkind kinds[] = {RT_AGG_COUNT_STAR, RT_AGG_SUM, RT_AGG_SUM, RT_AGG_ANY_VALUE, RT_AGG_MAX, RT_AGG_AVG};
  rt_type in[] = {RT_I64, RT_I64, RT_F64, RT_STR, RT_F64, RT_I64};
  rt_aggtab a, b;
  rt_aggtab_init(&a, 3, kt, 6, kinds, in);
  rt_aggtab_init(&b, 3, kt, 6, kinds, in);
  enum { NROWS = 20000, NG = 997 };
  int64_t count[NG] = {0}, sum[NG] = {0};
  move_fill(&a, NROWS, 0, count, sum);
  move_fill(&b, NROWS * 3, 5, NULL, NULL);   /* other groups first, then reset */
  rt_aggtab_reset(&b);
  move_fill(&b, NROWS, 0, NULL, NULL);
  assert_int_equal(a.ngroups, NG);
  assert_int_equal(b.ngroups, NG);
  rt_type ot[9];
  for (int k = 0; k < 3; k++) ot[k] = a.keys.types[k];
  for (int j = 0; j < 6; j++) ot[3 + j] = a.aggs[j].out;
  rt_rowbuf oa, ob;
  rt_rowbuf_init(&oa, 9, ot);
  rt_rowbuf_init(&ob, 9, ot);
  assert_int_equal(rt_aggtab_emit(&a, &oa), 0);
  assert_int_equal(rt_aggtab_emit_move(&b, &ob), 0);
  assert_int_equal(oa.nrows, NG);
  assert_int_equal(ob.nrows, NG);
  assert_true(ob.cap >= NG && ob.cap % 64 == 0);
  for (int c = 0; c < 9; c++) {
    size_t sz = rt_type_size(ot[c]);
    assert_memory_equal(oa.data[c], ob.data[c], NG * sz);
    assert_memory_equal(oa.valid[c], ob.valid[c], RT_BITWORDS(NG) * 8);
    for (size_t i = NG * sz; i < (size_t)ob.cap * sz; i++) assert_int_equal(((char *)ob.data[c])[i], 0);
  }
  /* against the rows themselves */
  const int64_t *cnt = ob.data[3], *s = ob.data[4];
  int64_t nullsum = 0, nanrows = 0;
  for (int64_t g = 0; g < NG; g++) {
    assert_int_equal(cnt[g], count[g]);
    assert_int_equal(s[g], sum[g]);
    assert_int_equal(rt_bit(ob.valid[4], (uint32_t)g), (((const uint32_t *)ob.data[1])[g] % 11) != 0);
    nullsum += !rt_bit(ob.valid[4], (uint32_t)g);
    nanrows += !rt_bit(ob.valid[5], (uint32_t)g);
    if (!rt_bit(ob.valid[5], (uint32_t)g)) assert_true(((const double *)ob.data[5])[g] == 0);
  }
  assert_true(nullsum > 0);
  assert_true(nanrows > 0);
  rt_rowbuf_free(&oa);
  rt_rowbuf_free(&ob);
  rt_aggtab_free(&a);
  rt_aggtab_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_strpool_basics),
      cmocka_unit_test(test_strpool_nul_bytes),
      cmocka_unit_test(test_strpool_cmp),
      cmocka_unit_test(test_strpool_million),
      cmocka_unit_test(test_arena),
      cmocka_unit_test(test_buf_and_helpers),
      cmocka_unit_test(test_table_builder),
      cmocka_unit_test(test_table_id_detection),
      cmocka_unit_test(test_table_unequal_lengths),
      cmocka_unit_test(test_table_nulls_many),
      cmocka_unit_test(test_catalog),
      cmocka_unit_test(test_rowbuf_append_views),
      cmocka_unit_test(test_rowbuf_to_table),
      cmocka_unit_test(test_aggtab_int_key),
      cmocka_unit_test(test_aggtab_string_key),
      cmocka_unit_test(test_aggtab_multi_key),
      cmocka_unit_test(test_aggtab_pair_direct),
      cmocka_unit_test(test_aggtab_no_keys),
      cmocka_unit_test(test_aggtab_million_groups),
      cmocka_unit_test(test_aggtab_emit_move),
      cmocka_unit_test(test_sort_small_cases),
      cmocka_unit_test(test_sort_random_vs_reference),
      cmocka_unit_test(test_sort_million),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
