/*
 * test_json_sort.c — the Chrome JSON importer's sort of event keys
 * (import/json_sort.c, jt_sort_keys): stable by ts, file order among equal
 * ts (TRACES.md §2.3), on both of its paths (the plain radix sort, and the
 * split by the top digit that large arrays take: buckets sorted by radix,
 * small ones by insertion, empty and single ones), checked against qsort
 * on (ts, file position).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "import/json.h"

static int cmp_key(const void *pa, const void *pb) {
  const jkey *a = pa, *b = pb;
  if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
  return (a->ref > b->ref) - (a->ref < b->ref);   /* refs grow in file order */
}

/* Fills a store with n keys from gen, sorts it with split_min and
 * compares with qsort. */
static void check(int64_t n, uint64_t (*gen)(int64_t i, uint64_t r), int64_t split_min) {
  jstore st = {0};
  uint64_t r = 0x1234567;
  for (int64_t i = 0; i < n; i++) {
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    char *rec = js_store_add(&st, 1 + (size_t)(i % 3), (int64_t)gen(i, r >> 16));
    assert_non_null(rec);
  }
  jkey *want = malloc((size_t)(n ? n : 1) * sizeof *want);
  assert_non_null(want);
  if (n) memcpy(want, st.keys, (size_t)n * sizeof *want);
  qsort(want, (size_t)n, sizeof *want, cmp_key);
  assert_int_equal(jt_sort_keys(&st, split_min), 1);
  assert_int_equal(st.nkeys, n);
  for (int64_t i = 0; i < n; i++) {
    if (st.keys[i].ts != want[i].ts || st.keys[i].ref != want[i].ref)
      fail_msg("key %lld: got ts %llu ref %llx, want ts %llu ref %llx", (long long)i,
               (unsigned long long)st.keys[i].ts, (unsigned long long)st.keys[i].ref,
               (unsigned long long)want[i].ts, (unsigned long long)want[i].ref);
  }
  free(want);
  js_store_free(&st);
}

/* Half the keys in one narrow range (a crowded bucket with many equal
 * ts), most of the rest uniform over a wide one, a few sparse far out
 * (buckets of one or a few keys): 40 bits of range. */
static uint64_t mixed(int64_t i, uint64_t r) {
  if (i % 2) return 5000000000000ull + r % 1500 * 1000;
  if (i % 97 == 0) return 100000000000ull + r % 1000000000000ull;
  return 7 + r % 2000000000ull;
}
/* 600 clumps of about ten keys of two ts values each: small buckets
 * with equal ts. */
static uint64_t clumps(int64_t i, uint64_t r) { return (uint64_t)(i % 600) << 30 | (r % 2); }
static uint64_t few(int64_t i, uint64_t r) { return (uint64_t)(i % 5) * 1000 + r % 3; }
static uint64_t sorted_up(int64_t i, uint64_t r) { return (void)r, (uint64_t)(i / 2); }
static uint64_t reversed(int64_t i, uint64_t r) { return (void)r, (uint64_t)(1000000000 - i * 7); }
static uint64_t equal(int64_t i, uint64_t r) { return (void)i, (void)r, 42; }
static uint64_t huge(int64_t i, uint64_t r) { return i % 3 ? r : UINT64_MAX >> 1; }

static void test_paths(void **state) {
  (void)state;
  /* the split path (threshold below n), and the plain one */
  check(200000, mixed, 1000);
  check(200000, mixed, INT64_MAX);
  check(6000, clumps, 100);
  check(5000, few, 100);
  check(5000, few, INT64_MAX);
  check(70000, huge, 1000);
  check(70000, huge, INT64_MAX);
}

static void test_edges(void **state) {
  (void)state;
  check(0, mixed, 1);
  check(1, mixed, 1);
  check(2, reversed, 1);
  check(3000, sorted_up, 1);
  check(3000, reversed, 1);
  check(3000, equal, 1);
  check(40, mixed, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_paths), cmocka_unit_test(test_edges)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
