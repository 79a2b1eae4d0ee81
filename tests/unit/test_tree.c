/*
 * test_tree.c — TREE ACCUMULATE: the runtime's numbering tiers and their
 * switching, the ordering paths and the cycle count, and a differential
 * test of UP and DOWN against SQLite's recursive CTEs on random forests
 * (random row order, sparse or string ids, NULL values) through the public
 * API, on the interpreter and, when LLVM is there, the JIT.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "codegen/cg.h"
#include "pipejit.h"
#include "runtime/tree/tree.h"
#include "runtime/budget.h"

/* ---- numbering ------------------------------------------------------------- */

/* An int64 view of n values; NULL where isnull[i] (isnull may be NULL). */
typedef struct col {
  int64_t v[64];
  uint64_t valid[1];
  rt_view view;
} col;

static void col_set(col *c, int n, const int64_t *v, const bool *isnull) {
  memset(c, 0, sizeof *c);
  for (int i = 0; i < n; i++) {
    c->v[i] = v[i];
    if (!isnull || !isnull[i]) c->valid[0] |= 1ull << i;
  }
  c->view = (rt_view){.type = RT_I64, .data = c->v, .valid = c->valid};
}

static void number(rt_treenum *t, int n, const int64_t *id, const int64_t *par, const bool *pnull,
                   int expect_rc) {
  col ci, cp;
  col_set(&ci, n, id, NULL);
  col_set(&cp, n, par, pnull);
  assert_int_equal(rt_treenum_batch(t, &ci.view, &cp.view, NULL, (uint32_t)n), expect_rc);
}

static void test_number_dense_stays_identity(void **state) {
  rt_err err = {0};
  rt_treenum t;
  assert_true(rt_treenum_init(&t, RT_TREE_TIER_DENSE, 0, false, &err, "TREE ACCUMULATE", 3, NULL));
  int64_t id[] = {0, 1, 2, 3, 4}, par[] = {0, 0, 0, 1, 3};
  bool pn[] = {true, false, false, false, false};
  number(&t, 5, id, par, pn, 0);
  assert_int_equal(t.tier, RT_TREE_TIER_DENSE);
  assert_null(t.slots);   /* no hash map was ever built */
  assert_null(t.map);
  for (int i = 0; i < 5; i++) assert_int_equal(t.node_out[i], i);
  assert_int_equal(t.pnode_out[0], RT_TREE_NONE);
  assert_int_equal(t.pnode_out[4], 3);
  assert_int_equal(rt_treenum_finish(&t), 0);
  assert_int_equal(t.nnodes, 5);
  rt_treenum_free(&t);
}

static void test_number_switches_to_hash(void **state) {
  rt_err err = {0};
  rt_treenum t;
  assert_true(rt_treenum_init(&t, RT_TREE_TIER_DENSE, 0, false, &err, "TREE ACCUMULATE", 0, NULL));
  /* 0, 1, 2 dense; 10 breaks density; 3 names parent 99 before it
   * arrives (it gets a number on sight); 99 then takes that number. */
  int64_t id[] = {0, 1, 2, 10, 5, 3, 99}, par[] = {0, 0, 1, 0, 10, 99, 0};
  bool pn[] = {true, false, false, false, false, false, true};
  number(&t, 3, id, par, pn, 0);
  assert_int_equal(t.tier, RT_TREE_TIER_DENSE);
  col ci, cp;
  col_set(&ci, 7, id, NULL);
  col_set(&cp, 7, par, pn);
  uint32_t active[] = {3, 4, 5, 6};
  assert_int_equal(rt_treenum_batch(&t, &ci.view, &cp.view, active, 4), 0);
  assert_int_equal(t.tier, RT_TREE_TIER_HASH);
  assert_int_equal(t.node_out[3], 3);    /* 10 */
  assert_int_equal(t.pnode_out[3], 0);
  assert_int_equal(t.node_out[4], 4);    /* 5 */
  assert_int_equal(t.pnode_out[4], 3);
  assert_int_equal(t.node_out[5], 5);    /* 3 */
  assert_int_equal(t.pnode_out[5], 6);   /* 99, numbered on sight */
  assert_int_equal(t.awaited, 0);
  assert_int_equal(t.node_out[6], 6);    /* 99 arrives: same number */
  assert_int_equal(t.pnode_out[6], RT_TREE_NONE);
  assert_int_equal(rt_treenum_finish(&t), 0);
  assert_int_equal(t.nnodes, 7);
  assert_false(err.set);
  rt_treenum_free(&t);
}

static void test_number_grows_hash(void **state) {
  /* enough sparse ids to rehash several times, spread over batches */
  rt_err err = {0};
  rt_treenum t;
  assert_true(rt_treenum_init(&t, RT_TREE_TIER_DENSE, 0, false, &err, "TREE ACCUMULATE", 0, NULL));
  for (int b = 0; b < 100; b++) {
    int64_t id[50], par[50];
    bool pn[50];
    for (int i = 0; i < 50; i++) {
      int k = b * 50 + i;
      id[i] = (int64_t)k * 1000003 - 7;
      par[i] = k ? (int64_t)(k / 2) * 1000003 - 7 : 0;
      pn[i] = k == 0;
    }
    number(&t, 50, id, par, pn, 0);
    for (int i = 0; i < 50; i++) assert_int_equal(t.node_out[i], b * 50 + i);
  }
  assert_int_equal(rt_treenum_finish(&t), 0);
  assert_int_equal(t.nnodes, 5000);
  rt_treenum_free(&t);
}

static void expect_error(rt_treenum *t, rt_err *err, const char *msg) {
  assert_true(err->set);
  assert_string_equal(err->msg, msg);
  assert_int_equal(err->offset, 12);
  rt_treenum_free(t);
}

static void test_number_errors(void **state) {
  rt_treenum t;
  {
    rt_err err = {0};
    rt_treenum_init(&t, RT_TREE_TIER_DENSE, 0, false, &err, "TREE ACCUMULATE", 12, NULL);
    int64_t id[] = {0, 1, 1}, par[] = {0, 0, 0};
    bool pn[] = {true, false, false};
    number(&t, 3, id, par, pn, -1);
    expect_error(&t, &err, "TREE ACCUMULATE: two rows have the id 1");
  }
  {
    rt_err err = {0};
    rt_treenum_init(&t, RT_TREE_TIER_DENSE, 0, false, &err, "TREE ACCUMULATE", 12, NULL);
    int64_t id[] = {0, 1}, par[] = {0, 1};
    bool pn[] = {true, false};
    number(&t, 2, id, par, pn, -1);
    expect_error(&t, &err, "TREE ACCUMULATE: the row with id 1 is its own parent");
  }
  {
    rt_err err = {0};
    rt_treenum_init(&t, RT_TREE_TIER_DENSE, 0, false, &err, "TREE ACCUMULATE", 12, NULL);
    col ci, cp;
    int64_t id[] = {0, 0}, par[] = {0, 0};
    bool in[] = {false, true}, pn[] = {true, false};
    col_set(&ci, 2, id, in);
    col_set(&cp, 2, par, pn);
    assert_int_equal(rt_treenum_batch(&t, &ci.view, &cp.view, NULL, 2), -1);
    expect_error(&t, &err, "TREE ACCUMULATE: a row has no id: row 2 of the input, with parent_id 0");
  }
  {
    rt_err err = {0};
    rt_treenum_init(&t, RT_TREE_TIER_DENSE, 0, false, &err, "TREE ACCUMULATE", 12, NULL);
    int64_t id[] = {0, 1, 2}, par[] = {0, 0, 40};
    bool pn[] = {true, false, false};
    number(&t, 3, id, par, pn, 0);   /* 40 might still come */
    assert_int_equal(rt_treenum_finish(&t), -1);
    expect_error(&t, &err, "TREE ACCUMULATE: a row names a parent which is not itself a row in the input: no row has the id 40 (a parent_id)");
  }
}

static void test_number_strings(void **state) {
  rt_strpool *sp = rt_strpool_new();
  uint32_t a = rt_str_intern(sp, "a", 1), b = rt_str_intern(sp, "b", 1);
  rt_err err = {0};
  rt_treenum t;
  rt_treenum_init(&t, RT_TREE_TIER_DENSE, 0, true, &err, "TREE ACCUMULATE", 12, sp);
  assert_int_equal(t.tier, RT_TREE_TIER_HASH);
  uint32_t n, p;
  assert_int_equal(rt_treenum_row(&t, b, false, a, false, &n, &p), 0);
  assert_int_equal(n, 0);
  assert_int_equal(p, 1);
  assert_int_equal(rt_treenum_row(&t, a, false, 0, true, &n, &p), 0);
  assert_int_equal(n, 1);
  assert_int_equal(p, RT_TREE_NONE);
  assert_int_equal(rt_treenum_row(&t, b, false, 0, true, &n, &p), -1);
  expect_error(&t, &err, "TREE ACCUMULATE: two rows have the id 'b'");
  rt_strpool_free(sp);
}

static void test_number_table_tier(void **state) {
  rt_err err = {0};
  rt_treenum t;
  rt_treenum_init(&t, RT_TREE_TIER_TABLE, 4, false, &err, "TREE ACCUMULATE", 12, NULL);
  /* ids are row indices (RT_ID views); a parent may come after its child */
  col cp;
  int64_t par[] = {2, 0, 0, 2};
  bool pn[] = {false, true, false, false};
  col_set(&cp, 4, par, pn);
  rt_view id = {.type = RT_ID, .base = 0};
  assert_int_equal(rt_treenum_batch(&t, &id, &cp.view, NULL, 4), 0);
  assert_int_equal(t.tier, RT_TREE_TIER_TABLE);
  assert_int_equal(t.node_out[3], 3);
  assert_int_equal(t.pnode_out[0], 2);
  assert_int_equal(t.pnode_out[1], RT_TREE_NONE);
  assert_int_equal(rt_treenum_finish(&t), 0);
  assert_int_equal(t.nnodes, 4);
  rt_treenum_free(&t);

  rt_treenum_init(&t, RT_TREE_TIER_TABLE, 4, false, &err, "TREE ACCUMULATE", 12, NULL);
  par[3] = 4;   /* beyond the table */
  col_set(&cp, 4, par, pn);
  assert_int_equal(rt_treenum_batch(&t, &id, &cp.view, NULL, 4), -1);
  expect_error(&t, &err, "TREE ACCUMULATE: a row names a parent which is not itself a row in the input: the row with id 3 has parent_id 4");
}

/* ---- ordering ---------------------------------------------------------------- */

#define NONE ((int64_t)RT_TREE_NONE)

static uint32_t *order(const int64_t *node, const int64_t *pnode, int n, bool up, int *path,
                       rt_err *err) {
  return rt_tree_order(node, pnode, n, (uint32_t)n, up, path, err, "TREE ACCUMULATE", 5);
}

static void test_order_paths(void **state) {
  rt_err err = {0};
  int path;
  /* parent-first: 0 → 1 → 2, 0 → 3 */
  int64_t node[] = {0, 1, 2, 3}, pf[] = {NONE, 0, 1, 0};
  assert_null(order(node, pf, 4, false, &path, &err));
  assert_int_equal(path, RT_TREE_ORDER_KEPT);
  uint32_t *perm = order(node, pf, 4, true, &path, &err);
  assert_int_equal(path, RT_TREE_ORDER_REVERSED);
  for (int i = 0; i < 4; i++) assert_int_equal(perm[i], 3 - i);
  rt_mem_free(perm);
  /* child-first: rows are nodes 2, 1, 3, 0 */
  int64_t cnode[] = {2, 1, 3, 0}, cpar[] = {1, 0, 0, NONE};
  assert_null(order(cnode, cpar, 4, true, &path, &err));
  assert_int_equal(path, RT_TREE_ORDER_KEPT);
  perm = order(cnode, cpar, 4, false, &path, &err);
  assert_int_equal(path, RT_TREE_ORDER_REVERSED);
  rt_mem_free(perm);
  /* neither: row 0 (node 1) before its parent, row 2 after; walk gives
   * root, then children in input order, depth first */
  int64_t wnode[] = {1, 0, 2, 3}, wpar[] = {0, NONE, 0, 1};
  perm = order(wnode, wpar, 4, false, &path, &err);
  assert_int_equal(path, RT_TREE_ORDER_WALKED);
  uint32_t want_down[] = {1, 0, 3, 2};
  for (int i = 0; i < 4; i++) assert_int_equal(perm[i], want_down[i]);
  rt_mem_free(perm);
  perm = order(wnode, wpar, 4, true, &path, &err);
  for (int i = 0; i < 4; i++) assert_int_equal(perm[i], want_down[3 - i]);
  rt_mem_free(perm);
  assert_false(err.set);
  /* no rows, or only roots */
  assert_null(order(node, pf, 0, true, &path, &err));
  int64_t roots[] = {NONE, NONE};
  int64_t rn[] = {1, 0};
  assert_null(order(rn, roots, 2, true, &path, &err));
  assert_int_equal(path, RT_TREE_ORDER_KEPT);
}

/* rt_tree_table_order over a parent_id column of n table rows: the path,
 * the parent nodes it writes, the permutation when it walks. */
static int table_order(const int64_t *par, const bool *pnull, int n, bool up, uint32_t **perm,
                       rt_treenum *t, rt_err *err) {
  col cp;
  col_set(&cp, n, par, pnull);
  memset(err, 0, sizeof *err);
  rt_treenum_init(t, RT_TREE_TIER_TABLE, (uint64_t)n, false, err, "TREE ACCUMULATE", 12, NULL);
  return rt_tree_table_order(t, &cp.view, n, up, perm);
}

static void test_order_table_in_place(void **state) {
  rt_err err = {0};
  rt_treenum t;
  uint32_t *perm;
  /* parents precede children (0 → 1 → 2, 0 → 3, root 4): DOWN reads the
   * table forwards, UP backwards; no permutation either way */
  int64_t pf[] = {0, 0, 1, 0, 0};
  bool pfn[] = {true, false, false, false, true};
  assert_int_equal(table_order(pf, pfn, 5, false, &perm, &t, &err), RT_TREE_ORDER_KEPT);
  assert_null(perm);
  uint32_t want_pn[] = {RT_TREE_NONE, 0, 1, 0, RT_TREE_NONE};
  for (int i = 0; i < 5; i++) assert_int_equal(t.table_pnode[i], want_pn[i]);
  assert_int_equal(rt_treenum_finish(&t), 0);
  assert_int_equal(t.nnodes, 5);
  rt_treenum_free(&t);
  assert_int_equal(table_order(pf, pfn, 5, true, &perm, &t, &err), RT_TREE_ORDER_REVERSED);
  assert_null(perm);
  rt_treenum_free(&t);
  /* children precede parents: UP forwards, DOWN backwards */
  int64_t cf[] = {2, 2, 3, 0};
  bool cfn[] = {false, false, false, true};
  assert_int_equal(table_order(cf, cfn, 4, true, &perm, &t, &err), RT_TREE_ORDER_KEPT);
  rt_treenum_free(&t);
  assert_int_equal(table_order(cf, cfn, 4, false, &perm, &t, &err), RT_TREE_ORDER_REVERSED);
  rt_treenum_free(&t);
  /* neither (row 0's parent is row 1, row 2's is row 0): the walk's
   * permutation of row indices, root first for DOWN, reversed for UP */
  int64_t mx[] = {1, 0, 0, 1};
  bool mxn[] = {false, true, false, false};
  assert_int_equal(table_order(mx, mxn, 4, false, &perm, &t, &err), RT_TREE_ORDER_WALKED);
  uint32_t want_down[] = {1, 0, 2, 3};
  for (int i = 0; i < 4; i++) assert_int_equal(perm[i], want_down[i]);
  rt_mem_free(perm);
  rt_treenum_free(&t);
  assert_int_equal(table_order(mx, mxn, 4, true, &perm, &t, &err), RT_TREE_ORDER_WALKED);
  for (int i = 0; i < 4; i++) assert_int_equal(perm[i], want_down[3 - i]);
  rt_mem_free(perm);
  rt_treenum_free(&t);
  assert_false(err.set);
  /* the first bad row in table order gets the numbering's message */
  int64_t bad[] = {0, 9, 2};
  bool badn[] = {true, false, false};
  assert_int_equal(table_order(bad, badn, 3, true, &perm, &t, &err), -1);
  expect_error(&t, &err, "TREE ACCUMULATE: a row names a parent which is not itself a row in the input: the row with id 1 has parent_id 9");
  int64_t self[] = {0, 0, 2};
  assert_int_equal(table_order(self, badn, 3, true, &perm, &t, &err), -1);
  expect_error(&t, &err, "TREE ACCUMULATE: the row with id 2 is its own parent");
  /* a cycle among rows 1 and 2 */
  int64_t cyc[] = {0, 2, 1, 1};
  bool cycn[] = {true, false, false, false};
  assert_int_equal(table_order(cyc, cycn, 4, false, &perm, &t, &err), -1);
  expect_error(&t, &err, "TREE ACCUMULATE: the rows are not a tree, because 2 of them are in a cycle");
  /* a parent column of another integer kind goes through the view */
  uint32_t p32[] = {0, 0, 1};
  uint64_t v32 = 0x6;
  rt_view pv = {.type = RT_U32, .data = p32, .valid = &v32};
  memset(&err, 0, sizeof err);
  rt_treenum_init(&t, RT_TREE_TIER_TABLE, 3, false, &err, "TREE ACCUMULATE", 12, NULL);
  assert_int_equal(rt_tree_table_order(&t, &pv, 3, true, &perm), RT_TREE_ORDER_REVERSED);
  assert_int_equal(t.table_pnode[0], RT_TREE_NONE);
  assert_int_equal(t.table_pnode[2], 1);
  rt_treenum_free(&t);
}

static void test_order_cycles(void **state) {
  /* root 0; cycle 1 → 2 → 3 → 1; 4 below 2 and 5 below 4; cycle 6 ↔ 7 */
  int64_t node[] = {0, 1, 2, 3, 4, 5, 6, 7}, par[] = {NONE, 2, 3, 1, 2, 4, 7, 6};
  for (int up = 0; up < 2; up++) {
    rt_err err = {0};
    int path = 0;
    assert_null(order(node, par, 8, up, &path, &err));
    assert_int_equal(path, -1);
    assert_string_equal(err.msg, "TREE ACCUMULATE: the rows are not a tree, because 5 of them are in a cycle");
    assert_int_equal(err.offset, 5);
  }
}

/* A deep chain (one million levels) walks without recursion. */
static void test_order_deep_chain(void **state) {
  int n = 1000000;
  int64_t *node = malloc(sizeof *node * (size_t)n), *par = malloc(sizeof *par * (size_t)n);
  /* rows in an order that is neither: odd positions first */
  for (int i = 0; i < n; i++) {
    int64_t k = i < n / 2 ? 2 * i + 1 : 2 * (i - n / 2);
    node[i] = k;
    par[i] = k ? k - 1 : NONE;
  }
  rt_err err = {0};
  int path;
  uint32_t *perm = order(node, par, n, true, &path, &err);
  assert_non_null(perm);
  assert_int_equal(path, RT_TREE_ORDER_WALKED);
  for (int i = 0; i < n; i++) assert_int_equal(node[perm[i]], n - 1 - i);
  rt_mem_free(perm);
  free(node);
  free(par);
}

/* ---- hash numbering at scale ---------------------------------------------------- */

/* Random 64-bit ids (or string ids) in random order, parents named before
 * and after their rows: the same id always gets the same node, distinct
 * ids distinct nodes, and a row's parent node is the node of its parent's
 * row. Several batches, so the map grows while in use. */
static void hash_numbering(bool strings) {
  enum { N = 50000 };
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  int64_t *key = malloc(sizeof *key * N), *id = malloc(sizeof *id * N), *par = malloc(sizeof *par * N);
  int *ord = malloc(sizeof *ord * N), *pidx = malloc(sizeof *pidx * N);
  uint32_t *node_of = malloc(sizeof *node_of * N), *pnode_of = malloc(sizeof *pnode_of * N);
  uint64_t *valid = calloc(RT_BITWORDS(N) + 1, 8);
  for (int i = 0; i < N; i++) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    /* strings: distinct pool ids, scattered; ints: scattered 64-bit */
    key[i] = strings ? (int64_t)(i * 7919u % 1000003u) : (int64_t)(seed >> 3) - (1ll << 60);
    pidx[i] = i == 0 ? -1 : (int)(seed % (uint64_t)i);
    ord[i] = i;
  }
  for (int i = N - 1; i > 0; i--) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    int j = (int)(seed % (uint64_t)(i + 1)), t = ord[i];
    ord[i] = ord[j];
    ord[j] = t;
  }
  for (int k = 0; k < N; k++) {
    int i = ord[k];
    id[k] = key[i];
    par[k] = pidx[i] < 0 ? 0 : key[pidx[i]];
    if (pidx[i] >= 0) rt_bit_set(valid, (uint32_t)k);
  }
  uint32_t *sid = NULL, *spar = NULL;
  if (strings) {
    sid = malloc(sizeof *sid * N);
    spar = malloc(sizeof *spar * N);
    for (int k = 0; k < N; k++) sid[k] = (uint32_t)id[k], spar[k] = (uint32_t)par[k];
  }
  rt_err err = {0};
  rt_treenum t;
  assert_true(rt_treenum_init(&t, RT_TREE_TIER_DENSE, 0, strings, &err, "TREE ACCUMULATE", 0, NULL));
  for (int s = 0; s < N; s += RT_BATCH) {
    uint32_t m = N - s < RT_BATCH ? (uint32_t)(N - s) : RT_BATCH;
    rt_view vi = {.type = strings ? RT_STR : RT_I64, .data = strings ? (void *)(sid + s) : (void *)(id + s)};
    rt_view vp = {.type = strings ? RT_STR : RT_I64,
                  .data = strings ? (void *)(spar + s) : (void *)(par + s),
                  .valid = valid + s / 64};
    assert_int_equal(rt_treenum_batch(&t, &vi, &vp, NULL, m), 0);
    for (uint32_t j = 0; j < m; j++) node_of[s + j] = t.node_out[j], pnode_of[s + j] = t.pnode_out[j];
  }
  assert_int_equal(t.tier, RT_TREE_TIER_HASH);
  assert_int_equal(rt_treenum_finish(&t), 0);
  assert_int_equal(t.nnodes, N);
  /* row of each node: distinct ids got distinct nodes below N */
  int *row = malloc(sizeof *row * N);
  for (int i = 0; i < N; i++) row[i] = -1;
  for (int k = 0; k < N; k++) {
    assert_true(node_of[k] < N);
    assert_int_equal(row[node_of[k]], -1);
    row[node_of[k]] = k;
  }
  for (int k = 0; k < N; k++) {
    if (!rt_bit(valid, (uint32_t)k)) {
      assert_int_equal(pnode_of[k], RT_TREE_NONE);
      continue;
    }
    assert_true(pnode_of[k] < N);
    assert_int_equal(id[row[pnode_of[k]]], par[k]);
  }
  rt_treenum_free(&t);
  free(key), free(id), free(par), free(ord), free(pidx), free(node_of), free(pnode_of);
  free(valid), free(row), free(sid), free(spar);
}

static void test_number_hash_random_ids(void **state) { hash_numbering(false); }
static void test_number_hash_string_ids(void **state) { hash_numbering(true); }

/* ---- streaming DOWN order ---------------------------------------------------------- */

/* Feeds rows (node[i], parent node par[i], NONE for roots) in batches of
 * RT_BATCH, the row's only column being its node; collects the emitted
 * nodes in emit order (out, n entries) and checks each batch's output is
 * parent-first and every released row's copy is intact. Returns the
 * finish status. */
static int down_run(rt_treedown *d, const int64_t *node, const int64_t *par, int n, int64_t *out,
                    int *nout, rt_err *err) {
  rt_type ty = RT_I64;
  assert_true(rt_treedown_init(d, 1, &ty));
  uint8_t *done = calloc((size_t)n + 1, 1);
  *nout = 0;
  for (int s = 0; s < n; s += RT_BATCH) {
    uint32_t m = n - s < RT_BATCH ? (uint32_t)(n - s) : RT_BATCH;
    rt_view vn = {.type = RT_I64, .data = node + s}, vp = {.type = RT_I64, .data = par + s};
    assert_int_equal(rt_treedown_batch(d, &vn, &vp, &vn, NULL, m), 0);
    assert_true(d->npass <= m);
    for (uint32_t k = 0; k < d->npass; k++) out[(*nout)++] = node[s + d->pass[k]];
    for (int64_t q = 0; q < d->nrel; q++) {
      uint32_t r = d->rel[q];
      int64_t copied = ((const int64_t *)d->side.data[0])[r];
      assert_int_equal(copied, d->snode[r]);
      out[(*nout)++] = copied;
    }
  }
  /* parent-first: every emitted row's parent was emitted before it */
  for (int k = 0; k < *nout; k++) {
    int64_t nd = out[k];
    int64_t p = -1;
    for (int i = 0; i < n && p < 0; i++)
      if (node[i] == nd) p = par[i];
    if (n > 5000) p = par[nd];   /* big tests: node i is row i's node */
    assert_true(p == (int64_t)RT_TREE_NONE || done[p]);
    assert_false(done[nd]);
    done[nd] = 1;
  }
  free(done);
  return rt_treedown_finish(d, err, "TREE ACCUMULATE", 7);
}

/* Parent-first input over several batches: everything passes untouched,
 * nothing is copied, the waiting lists are never allocated. */
static void test_down_parent_first_buffers_nothing(void **state) {
  enum { N = 3 * RT_BATCH + 100 };
  int64_t *node = malloc(sizeof *node * N), *par = malloc(sizeof *par * N), *out = malloc(sizeof *out * N);
  for (int i = 0; i < N; i++) node[i] = i, par[i] = i == 0 ? (int64_t)RT_TREE_NONE : (i - 1) / 2;
  rt_treedown d;
  rt_err err = {0};
  int nout;
  assert_int_equal(down_run(&d, node, par, N, out, &nout, &err), 0);
  assert_int_equal(nout, N);
  for (int i = 0; i < N; i++) assert_int_equal(out[i], i);   /* input order */
  assert_int_equal(d.buffered, 0);
  assert_false(d.side_open);
  assert_null(d.head);
  assert_int_equal(d.npass, N - 3 * RT_BATCH);   /* the last batch passed whole */
  rt_treedown_free(&d);
  free(node), free(par), free(out);
}

/* Children before parents across batch boundaries: a chain served
 * leaf-first waits whole until the root arrives in the last batch, then
 * comes out root-first; a random forest in random order comes out
 * parent-first with exactly the early rows copied. */
static void test_down_children_first_across_batches(void **state) {
  enum { N = 2 * RT_BATCH + 1234 };
  int64_t *node = malloc(sizeof *node * N), *par = malloc(sizeof *par * N), *out = malloc(sizeof *out * N);
  /* row i holds node i; the chain's node k has parent k - 1, rows in
   * reverse so node N-1 comes first */
  int64_t *cn = malloc(sizeof *cn * N), *cp = malloc(sizeof *cp * N);
  for (int i = 0; i < N; i++) {
    int64_t k = N - 1 - i;
    cn[i] = k;
    cp[i] = k == 0 ? (int64_t)RT_TREE_NONE : k - 1;
  }
  rt_treedown d;
  rt_err err = {0};
  int nout;
  rt_type ty = RT_I64;
  assert_true(rt_treedown_init(&d, 1, &ty));
  nout = 0;
  for (int s = 0; s < N; s += RT_BATCH) {
    uint32_t m = N - s < RT_BATCH ? (uint32_t)(N - s) : RT_BATCH;
    rt_view vn = {.type = RT_I64, .data = cn + s}, vp = {.type = RT_I64, .data = cp + s};
    assert_int_equal(rt_treedown_batch(&d, &vn, &vp, &vn, NULL, m), 0);
    if (s + (int)m < N) assert_int_equal(d.nrel + d.npass, 0);   /* all wait */
    for (uint32_t k = 0; k < d.npass; k++) out[nout++] = cn[s + d.pass[k]];
    for (int64_t q = 0; q < d.nrel; q++) out[nout++] = ((const int64_t *)d.side.data[0])[d.rel[q]];
  }
  assert_int_equal(rt_treedown_finish(&d, &err, "TREE ACCUMULATE", 7), 0);
  assert_int_equal(nout, N);
  for (int k = 0; k < N; k++) assert_int_equal(out[k], k);
  assert_int_equal(d.buffered, N - 1);
  assert_int_equal(d.waiting, 0);
  rt_treedown_free(&d);

  /* Random forest in random order: row i holds node i; parents are drawn
   * among nodes made earlier in a random making order, so any row may come
   * before its parent. */
  uint64_t seed = 12345;
  int *lab = malloc(sizeof *lab * N);
  for (int i = 0; i < N; i++) lab[i] = i;
  for (int i = N - 1; i > 0; i--) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    int j = (int)(seed % (uint64_t)(i + 1)), t = lab[i];
    lab[i] = lab[j];
    lab[j] = t;
  }
  /* node lab[x] is the x-th made; its parent an earlier-made node */
  int64_t early = 0;
  for (int x = 0; x < N; x++) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    int64_t p = x == 0 || seed % 16 == 0 ? -1 : lab[seed % (uint64_t)x];
    node[lab[x]] = lab[x];
    par[lab[x]] = p < 0 ? (int64_t)RT_TREE_NONE : p;
  }
  for (int i = 0; i < N; i++) early += par[i] != (int64_t)RT_TREE_NONE && par[i] > i;
  assert_int_equal(down_run(&d, node, par, N, out, &nout, &err), 0);
  assert_int_equal(nout, N);
  assert_true(d.buffered >= early);   /* at least every row before its parent */
  assert_true(d.buffered < N);
  rt_treedown_free(&d);
  free(node), free(par), free(out), free(cn), free(cp), free(lab);
}

/* Rows never released: cycles (and rows below them) in streaming mode. */
static void test_down_cycles(void **state) {
  /* root 0; cycle 1 → 2 → 3 → 1; 4 below 2 and 5 below 4; cycle 6 ↔ 7 */
  int64_t node[] = {0, 1, 2, 3, 4, 5, 6, 7}, par[] = {NONE, 2, 3, 1, 2, 4, 7, 6}, out[8];
  rt_treedown d;
  rt_err err = {0};
  int nout;
  assert_int_equal(down_run(&d, node, par, 8, out, &nout, &err), -1);
  assert_int_equal(nout, 1);
  assert_string_equal(err.msg, "TREE ACCUMULATE: the rows are not a tree, because 5 of them are in a cycle");
  assert_int_equal(err.offset, 7);
  rt_treedown_free(&d);
}

/* Through the engine: streaming DOWN reports a missing parent and a cycle
 * with the same texts as before, on both backends. */
static void test_down_errors_through_engine(void **state) {
  pj_engine *e;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  assert_int_equal(pj_engine_exec(e,
                                  "CREATE TABLE m(id INT, parent_id INT, v INT);"
                                  "INSERT INTO m VALUES (2,1,1),(1,NULL,1),(3,9,1);"
                                  "CREATE TABLE c(id INT, parent_id INT, v INT);"
                                  "INSERT INTO c VALUES (0,NULL,1),(1,2,1),(2,1,1),(3,2,1);",
                                  NULL, NULL),
                   PJ_OK);
  for (int mode = 0; mode < 2; mode++) {
    pj_engine_set_mode(e, mode ? PJ_MODE_JIT : PJ_MODE_INTERP);
    assert_int_equal(pj_engine_exec(e, "FROM m |> TREE ACCUMULATE DOWN SUM(v) AS s", NULL, NULL), PJ_ERROR);
    assert_string_equal(pj_engine_errmsg(e),
                        "TREE ACCUMULATE: a row names a parent which is not itself a row in the input: no row has the id 9 (a parent_id)");
    assert_int_equal(pj_engine_exec(e, "FROM c |> TREE ACCUMULATE DOWN SUM(v) AS s", NULL, NULL), PJ_ERROR);
    assert_string_equal(pj_engine_errmsg(e),
                        "TREE ACCUMULATE: the rows are not a tree, because 2 of them are in a cycle");
  }
  pj_engine_close(e);
}

/* ---- differential against SQLite --------------------------------------------- */

typedef struct text {
  char *s;
  size_t n;
} text;

static int collect(void *ctx, const pj_result *r, const char *stmt, size_t len, size_t off) {
  text *t = ctx;
  FILE *f = open_memstream(&t->s, &t->n);
  for (int64_t i = 0; i < pj_result_row_count(r); i++) {
    for (int c = 0; c < pj_result_column_count(r); c++) {
      if (c) fputc(',', f);
      if (pj_result_is_null(r, i, c)) fputs("NULL", f);
      else if (pj_result_column_type(r, c) == PJ_TYPE_STRING) fputs(pj_result_text(r, i, c, NULL), f);
      else fprintf(f, "%lld", (long long)pj_result_int64(r, i, c));
    }
    fputc('\n', f);
  }
  fclose(f);
  return 0;
}

static char *run(pj_engine *e, const char *sql) {
  text t = {0};
  if (pj_engine_exec(e, sql, collect, &t) != PJ_OK) fail_msg("%s\nfailed: %s", sql, pj_engine_errmsg(e));
  return t.s ? t.s : strdup("");
}

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

enum { IDS_SPARSE, IDS_STRING, IDS_TABLE };

/* A random forest of n rows: each node's parent is an earlier-made node
 * (or none), so it is a forest; rows go in in random order with ids that
 * are sparse 64-bit numbers, strings, or (IDS_TABLE) a random permutation
 * of 0..n-1 in a columnar table, where parents often follow children. */
static void make_forest(pj_engine *e, uint64_t seed, int n, int ids) {
  sqlite3 *db = pj_engine_sqlite(e);
  int64_t *key = malloc(sizeof *key * (size_t)n);
  int *par = malloc(sizeof *par * (size_t)n), *ord = malloc(sizeof *ord * (size_t)n);
  for (int i = 0; i < n; i++) {
    key[i] = ids == IDS_TABLE ? i : (int64_t)(rng_next(&seed) >> 4) - (1ll << 58);
    par[i] = i == 0 || rng_next(&seed) % 10 == 0 ? -1 : (int)(rng_next(&seed) % (uint64_t)i);
    ord[i] = i;
  }
  for (int i = n - 1; i > 0; i--) {
    int j = (int)(rng_next(&seed) % (uint64_t)(i + 1)), t = ord[i];
    ord[i] = ord[j];
    ord[j] = t;
  }
  if (ids == IDS_TABLE) {
    /* relabel: node i gets id perm[i], so ids are 0..n-1 in random order */
    for (int i = 0; i < n; i++) key[ord[i]] = i;
  }
  /* declared types: a one-row forest's parent_id holds only NULL, which
   * alone would not say it is a string column */
  sqlite3_exec(db,
               ids == IDS_STRING ? "DROP TABLE IF EXISTS f; CREATE TABLE f(id TEXT, parent_id TEXT, v INT)"
                                 : "DROP TABLE IF EXISTS f; CREATE TABLE f(id INT, parent_id INT, v INT)",
               NULL, NULL, NULL);
  sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
  sqlite3_stmt *st;
  sqlite3_prepare_v2(db, "INSERT INTO f VALUES (?, ?, ?)", -1, &st, NULL);
  for (int k = 0; k < n; k++) {
    /* random row order; IDS_TABLE: rows in id order, id k being node ord[k] */
    int i = ord[k];
    char buf[32];
    if (ids == IDS_STRING) {
      snprintf(buf, sizeof buf, "n%lld", (long long)key[i]);
      sqlite3_bind_text(st, 1, buf, -1, SQLITE_TRANSIENT);
    } else {
      sqlite3_bind_int64(st, 1, key[i]);
    }
    if (par[i] < 0) sqlite3_bind_null(st, 2);
    else if (ids == IDS_STRING) {
      snprintf(buf, sizeof buf, "n%lld", (long long)key[par[i]]);
      sqlite3_bind_text(st, 2, buf, -1, SQLITE_TRANSIENT);
    } else {
      sqlite3_bind_int64(st, 2, key[par[i]]);
    }
    if (rng_next(&seed) % 8 == 0) sqlite3_bind_null(st, 3);
    else sqlite3_bind_int64(st, 3, (int64_t)(rng_next(&seed) % 2001) - 1000);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
  free(key);
  free(par);
  free(ord);
  if (ids == IDS_TABLE) {
    char *r = run(e, "CREATE OR REPLACE PERFETTO TABLE ft AS SELECT * FROM f");
    free(r);
  }
}

static void compare(pj_engine *e, const char *pipe, const char *sql) {
  char *a = run(e, pipe), *b = run(e, sql);
  if (strcmp(a, b)) {
    size_t i = 0;
    while (a[i] && a[i] == b[i]) i++;
    fail_msg("%s\ndiffers from SQL at byte %zu:\n%.200s\n-- vs --\n%.200s", pipe, i, a + i, b + i);
  }
  free(a);
  free(b);
}

static const char *k_up_sql =
    "WITH RECURSIVE below(top, id) AS (SELECT id, id FROM f UNION ALL "
    "SELECT below.top, f.id FROM below JOIN f ON f.parent_id = below.id) "
    "SELECT below.top, COALESCE(SUM(f.v), 0), COUNT(*), MIN(f.v), MAX(f.v) FROM below "
    "JOIN f ON f.id = below.id GROUP BY below.top ORDER BY below.top";
static const char *k_down_sql =
    "WITH RECURSIVE above(low, id) AS (SELECT id, id FROM f UNION ALL "
    "SELECT above.low, f.parent_id FROM above JOIN f ON f.id = above.id "
    "WHERE f.parent_id IS NOT NULL) "
    "SELECT above.low, COALESCE(SUM(f.v), 0), COUNT(*), MIN(f.v), MAX(f.v) FROM above "
    "JOIN f ON f.id = above.id GROUP BY above.low ORDER BY above.low";

static void differential(pj_mode mode) {
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  pj_engine_set_mode(e, mode);
  static const int sizes[] = {1, 7, 300, 3000, 20000};
  for (int ids = IDS_SPARSE; ids <= IDS_TABLE; ids++) {
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
      uint64_t seed = 0x9e3779b97f4a7c15ull * (k + 1) + (uint64_t)ids;
      make_forest(e, seed, sizes[k], ids);
      const char *src = ids == IDS_TABLE ? "ft" : "f";
      char up[512], down[512];
      snprintf(up, sizeof up,
               "FROM %s |> TREE ACCUMULATE UP SUM(v) AS s, COUNT(*) AS c, MIN(v) AS mn, MAX(v) AS mx "
               "|> ORDER BY id |> SELECT id, s, c, mn, mx", src);
      snprintf(down, sizeof down,
               "FROM %s |> TREE ACCUMULATE DOWN SUM(v) AS s, COUNT(*) AS c, MIN(v) AS mn, MAX(v) AS mx "
               "|> ORDER BY id |> SELECT id, s, c, mn, mx", src);
      compare(e, up, k_up_sql);
      compare(e, down, k_down_sql);
      /* chained: both directions after each other share the numbering */
      snprintf(up, sizeof up,
               "FROM %s |> TREE ACCUMULATE DOWN COUNT(*) AS d |> TREE ACCUMULATE UP SUM(v) AS s, "
               "COUNT(*) AS c, MIN(v) AS mn, MAX(v) AS mx |> ORDER BY id |> SELECT id, s, c, mn, mx",
               src);
      compare(e, up, k_up_sql);
    }
  }
  pj_engine_close(e);
}

static void test_differential_interp(void **state) { differential(PJ_MODE_INTERP); }

static void test_differential_jit(void **state) {
  rt_err err = {.offset = -1};
  cg_jit *j = cg_jit_new(&err);
  if (!j) {
    fprintf(stderr, "test_tree: the JIT is not available (%s): skipped\n", err.msg);
    skip();
  }
  cg_jit_free(j);
  differential(PJ_MODE_JIT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_number_dense_stays_identity),
      cmocka_unit_test(test_number_switches_to_hash),
      cmocka_unit_test(test_number_grows_hash),
      cmocka_unit_test(test_number_errors),
      cmocka_unit_test(test_number_strings),
      cmocka_unit_test(test_number_table_tier),
      cmocka_unit_test(test_order_paths),
      cmocka_unit_test(test_order_table_in_place),
      cmocka_unit_test(test_order_cycles),
      cmocka_unit_test(test_order_deep_chain),
      cmocka_unit_test(test_number_hash_random_ids),
      cmocka_unit_test(test_number_hash_string_ids),
      cmocka_unit_test(test_down_parent_first_buffers_nothing),
      cmocka_unit_test(test_down_children_first_across_batches),
      cmocka_unit_test(test_down_cycles),
      cmocka_unit_test(test_down_errors_through_engine),
      cmocka_unit_test(test_differential_interp),
      cmocka_unit_test(test_differential_jit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
