/*
 * test_tree_par.c — TREE ACCUMULATE on several threads (exec/driver_treepar.c,
 * runtime/tree/tree_par.c) gives one thread's answer: the same rows in
 * the same order, every double bit for bit, the same error.
 *
 * The forests are made here in SQLite and loaded as columnar tables (ids
 * 0..n-1: the in-place orders) or read through SQL (the buffered orders):
 * many roots of mixed sizes (some bigger than a morsel), one root (nothing
 * to cut: one thread), deep chains, wide roots, roots whose subtrees
 * interleave, stored parent-first, child-first or shuffled (the walk). The
 * doubles span 60 binary orders of magnitude with both signs, so a sum
 * added in any other order than one thread's differs in its last bits.
 * Each answer is compared across 1, 2 and 4 threads and both backends,
 * and the per-row values against a recursive reference that folds each
 * node's children in one thread's order.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "api/engine.h"
#include "runtime/tree/tree.h"
#include "pipejit.h"
#include "rowdiff.h"

#define N 60000

static uint64_t rng(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

typedef enum { ROOTS, ONE, CHAINS, WIDE, MIXED, NSHAPES } shape;
static const char *const SHAPE[] = {"roots", "one root", "chains", "wide", "interleaved"};

/* parents of nodes 0..n-1, each before its children (par[i] < i or -1) */
static void make_shape(shape sh, int n, uint64_t *seed, int *par) {
  int root = 0, left = 0;
  for (int i = 0; i < n; i++) {
    if (sh == MIXED) {
      par[i] = i == 0 || rng(seed) % 40 == 0 ? -1 : (int)(rng(seed) % (uint64_t)i);
      continue;
    }
    if (i == 0 || (sh != ONE && left == 0)) {
      root = i;
      /* block sizes: mostly small, a few beyond a morsel (16,384 rows) */
      uint64_t r = rng(seed) % 100;
      left = sh == CHAINS ? 1 + (int)(rng(seed) % 3000)
             : r < 3   ? 17000 + (int)(rng(seed) % 4000)
                       : 1 + (int)(rng(seed) % 400);
      par[i] = -1;
      left--;
      continue;
    }
    left--;
    if (sh == CHAINS) par[i] = i - 1;
    else if (sh == WIDE) par[i] = root;
    else par[i] = root + (int)(rng(seed) % (uint64_t)(i - root));
  }
}

typedef enum { PARENT_FIRST, CHILD_FIRST, SHUFFLED } layout;

typedef struct forest {
  int n;
  int *par;      /* by id */
  double *x;
  int64_t *k;    /* INT64_MIN: NULL */
} forest;

/* The forest of shape sh laid out as `lay` (ids relabelled so that the
 * rows, in id order, are parent-first, child-first or neither), in table
 * f(id, parent_id, x, k); loaded as a columnar table when `load`. */
static forest make_forest(pj_engine *e, shape sh, layout lay, uint64_t seed, bool load, int64_t kbig) {
  forest f = {.n = N};
  int n = N;
  int *p0 = malloc(sizeof(int) * n), *lab = malloc(sizeof(int) * n);
  f.par = malloc(sizeof(int) * n);
  f.x = malloc(sizeof(double) * n);
  f.k = malloc(sizeof(int64_t) * n);
  make_shape(sh, n, &seed, p0);
  for (int i = 0; i < n; i++) lab[i] = lay == CHILD_FIRST ? n - 1 - i : i;
  if (lay == SHUFFLED)
    for (int i = n - 1; i > 0; i--) {
      int j = (int)(rng(&seed) % (uint64_t)(i + 1)), t = lab[i];
      lab[i] = lab[j];
      lab[j] = t;
    }
  for (int i = 0; i < n; i++) {
    int id = lab[i];
    f.par[id] = p0[i] < 0 ? -1 : lab[p0[i]];
    double m = (double)(rng(&seed) % 1000003) / 1000003.0 + 0.5;
    f.x[id] = ldexp(rng(&seed) & 1 ? m : -m, (int)(rng(&seed) % 60) - 30);
    f.k[id] = rng(&seed) % 9 == 0 ? INT64_MIN : kbig ? kbig : (int64_t)(rng(&seed) % 2001) - 1000;
  }
  sqlite3 *db = pj_engine_sqlite(e);
  assert_int_equal(sqlite3_exec(db, "DROP TABLE IF EXISTS f; CREATE TABLE f(id INT, parent_id INT, x REAL, k INT);"
                                    "BEGIN", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO f VALUES (?, ?, ?, ?)", -1, &st, NULL), SQLITE_OK);
  for (int id = 0; id < n; id++) {
    sqlite3_bind_int64(st, 1, id);
    if (f.par[id] < 0) sqlite3_bind_null(st, 2);
    else sqlite3_bind_int64(st, 2, f.par[id]);
    sqlite3_bind_double(st, 3, f.x[id]);
    if (f.k[id] == INT64_MIN) sqlite3_bind_null(st, 4);
    else sqlite3_bind_int64(st, 4, f.k[id]);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  assert_int_equal(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
  if (load) assert_int_equal(pj_engine_load_table(e, "f"), PJ_OK);
  free(p0);
  free(lab);
  return f;
}

static void forest_free(forest *f) {
  free(f->par);
  free(f->x);
  free(f->k);
}

/* ---- results as text ---------------------------------------------------------- */

static int dump_rows(void *ctx, const pj_result *r, const char *text, size_t len, size_t off) {
  (void)text, (void)len, (void)off;
  buf *d = ctx;
  for (int64_t i = 0; i < pj_result_row_count(r); i++) {
    for (int c = 0; c < pj_result_column_count(r); c++) {
      if (pj_result_is_null(r, i, c)) bprintf(d, "NULL|");
      else if (pj_result_column_type(r, c) == PJ_TYPE_DOUBLE) bprintf(d, "%a|", pj_result_double(r, i, c));
      else bprintf(d, "%lld|", (long long)pj_result_int64(r, i, c));
    }
    bprintf(d, "\n");
  }
  return 0;
}

/* The rows of q (or "error: …"), and the threads it ran on. */
static char *run(pj_engine *e, const char *q, int *threads) {
  buf d = {0};
  bprintf(&d, "rows:\n");
  if (pj_engine_exec(e, q, dump_rows, &d) != PJ_OK)
    bprintf(&d, "error: %s at %d\n", pj_engine_errmsg(e), pj_engine_erroffset(e));
  pj_timing t;
  pj_engine_last_timing(e, &t);
  if (threads) *threads = t.threads;
  return bdone(&d);
}

static pj_engine *engine(void) {
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  /* small morsels (two batches of RT_BATCH positions: 16,384 rows) */
  pj__engine_set_batch_rows(e, 64);
  return e;
}

/* q on 1, 2 and 4 threads and both backends: one answer. Returns it;
 * *par says whether some run used more than one thread. */
static char *same_everywhere(pj_engine *e, const char *q, const char *what, bool *par) {
  char *want = NULL;
  *par = false;
  for (int m = 0; m < 2; m++)
    for (int th = 1; th <= 4; th *= 2) {
      pj_engine_set_mode(e, m ? PJ_MODE_JIT : PJ_MODE_INTERP);
      pj_engine_set_threads(e, th);
      int used = 0;
      char *got = run(e, q, &used);
      *par |= used > 1;
      if (!want) {
        want = got;
        continue;
      }
      if (strcmp(want, got)) fail_msg("%s: %s threads, %s: other rows\n%.300s\nvs\n%.300s", what,
                                      th == 1 ? "1" : th == 2 ? "2" : "4", m ? "jit" : "interp", want, got);
      free(got);
    }
  return want;
}

/* ---- the recursive reference --------------------------------------------------- */

typedef struct ref {
  const forest *f;
  int *head, *next;   /* children lists */
  double *sx;
  int64_t *cnt;
} ref;

/* UP: the node's x plus its children's totals, added into a running value
 * from 0 in the order one thread reads them: children after their parent
 * in id order are read last first (parent-first rows read backwards). */
static double ref_up(ref *r, int n) {
  double acc = 0;
  int64_t c = 0;
  for (int ch = r->head[n]; ch >= 0; ch = r->next[ch]) {
    acc += ref_up(r, ch);
    c += r->cnt[ch];
  }
  r->cnt[n] = c + 1;
  return r->sx[n] = r->f->x[n] + acc;
}

static void ref_down(ref *r, int n, double above, bool root) {
  r->sx[n] = root ? r->f->x[n] : r->f->x[n] + above;
  r->cnt[n] = 0;
  for (int ch = r->head[n]; ch >= 0; ch = r->next[ch]) ref_down(r, ch, r->sx[n], false);
}

/* "id|sx|count|" per row in id order, as the query below prints them. */
static char *reference(const forest *f, bool up) {
  int n = f->n;
  ref r = {.f = f};
  r.head = malloc(sizeof(int) * n);
  r.next = malloc(sizeof(int) * n);
  r.sx = malloc(sizeof(double) * n);
  r.cnt = malloc(sizeof(int64_t) * n);
  for (int i = 0; i < n; i++) r.head[i] = -1;
  /* lists in descending id order: pushing ascending ids puts the last first */
  for (int i = 0; i < n; i++)
    if (f->par[i] >= 0) {
      r.next[i] = r.head[f->par[i]];
      r.head[f->par[i]] = i;
    }
  for (int i = 0; i < n; i++)
    if (f->par[i] < 0) {
      if (up) ref_up(&r, i);
      else ref_down(&r, i, 0, true);
    }
  buf d = {0};
  bprintf(&d, "rows:\n");
  for (int i = 0; i < n; i++) {
    if (up) bprintf(&d, "%d|%a|%lld|\n", i, r.sx[i], (long long)r.cnt[i]);
    else bprintf(&d, "%d|%a|\n", i, r.sx[i]);
  }
  free(r.head);
  free(r.next);
  free(r.sx);
  free(r.cnt);
  return bdone(&d);
}

/* ---- tests --------------------------------------------------------------------- */

static const char *const QUERIES[] = {
    "FROM f |> TREE ACCUMULATE UP SUM(x) AS sx, SUM(k) AS sk, COUNT(*) AS c, COUNT(k) AS ck, "
    "MIN(x) AS lo, MAX(k) AS hi, AVG(x) AS ax |> SELECT id, sx, sk, c, ck, lo, hi, ax",
    "FROM f |> TREE ACCUMULATE DOWN SUM(x) AS sx, SUM(k) AS sk, COUNT(*) AS c, MAX(x) AS hi, "
    "FIRST(k) AS fk |> SELECT id, sx, sk, c, hi, fk",
    /* per-morsel partial sums after the step, grouped and not */
    "FROM f |> TREE ACCUMULATE UP SUM(x) AS sx |> AGGREGATE SUM(sx) AS s, COUNT(*) AS n, MAX(sx) AS m",
    "FROM f |> TREE ACCUMULATE DOWN SUM(x) AS sx |> AGGREGATE SUM(sx) AS s, AVG(sx) AS a GROUP BY id % 7 AS g",
    /* many groups: one thread folds them lazily, the workers merge tables */
    "FROM f |> TREE ACCUMULATE UP SUM(x) AS sx |> AGGREGATE SUM(sx) AS s, COUNT(*) AS n GROUP BY id % 5003 AS g",
    /* buffered orders (numbered from SQL), an expression after the step */
    "FROM (SELECT * FROM f) |> TREE ACCUMULATE UP SUM(x) AS sx, COUNT(*) AS c "
    "|> EXTEND sx * 3.0 AS y |> SELECT id, sx, c, y",
    "FROM (SELECT * FROM f) |> TREE ACCUMULATE UP SUM(x) AS sx |> AGGREGATE SUM(sx) AS s",
};

static void same_for_any_thread_count(void **state) {
  (void)state;
  uint64_t seed = 0x51ed2701u;
  for (int sh = 0; sh < NSHAPES; sh++)
    for (int lay = 0; lay < 3; lay++) {
      pj_engine *e = engine();
      forest f = make_forest(e, (shape)sh, (layout)lay, seed + (uint64_t)sh * 31 + (uint64_t)lay, true, 0);
      bool any_par = false;
      for (size_t q = 0; q < sizeof QUERIES / sizeof *QUERIES; q++) {
        char what[160];
        snprintf(what, sizeof what, "%s, layout %d, query %zu", SHAPE[sh], lay, q);
        bool par;
        char *got = same_everywhere(e, QUERIES[q], what, &par);
        assert_null(strstr(got, "error"));
        any_par |= par;
        free(got);
      }
      /* one root holds every row: nothing to cut, one thread */
      if (sh == ONE) assert_false(any_par);
      if (sh == ROOTS || sh == WIDE || sh == CHAINS) assert_true(any_par);
      forest_free(&f);
      pj_engine_close(e);
    }
}

static void matches_the_recursive_reference(void **state) {
  (void)state;
  uint64_t seed = 0x7a11e7u;
  for (int sh = 0; sh < NSHAPES; sh++) {
    pj_engine *e = engine();
    /* parent-first rows: UP reads them backwards, DOWN forwards */
    forest f = make_forest(e, (shape)sh, PARENT_FIRST, seed + (uint64_t)sh, true, 0);
    for (int up = 0; up < 2; up++) {
      char *want = reference(&f, up);
      bool par;
      char *got = same_everywhere(e,
                                  up ? "FROM f |> TREE ACCUMULATE UP SUM(x) AS sx, COUNT(*) AS c |> SELECT id, sx, c |> ORDER BY id"
                                     : "FROM f |> TREE ACCUMULATE DOWN SUM(x) AS sx |> SELECT id, sx |> ORDER BY id",
                                  SHAPE[sh], &par);
      if (strcmp(want, got)) {
        size_t at = 0;
        while (want[at] && want[at] == got[at]) at++;
        while (at > 0 && want[at - 1] != '\n') at--;
        fail_msg("%s %s: not the reference at\n%.80s\nvs\n%.80s", SHAPE[sh], up ? "UP" : "DOWN", want + at,
                 got + at);
      }
      free(want);
      free(got);
    }
    forest_free(&f);
    pj_engine_close(e);
  }
}

/* Bad inputs give one thread's error on every thread count: the
 * numbering's and the ordering's run before the parallel step; an
 * integer overflow in the step is met in the earliest morsel that has
 * one, at the row one thread meets first. */
static void same_error_for_any_thread_count(void **state) {
  (void)state;
  static const struct {
    const char *sql, *query, *msg;
  } bad[] = {
      {"UPDATE f SET parent_id = 40000 WHERE id = 30000; UPDATE f SET parent_id = 30000 WHERE id = 40000",
       "FROM f |> TREE ACCUMULATE UP SUM(x) AS sx |> SELECT id, sx", "cycle"},
      {"UPDATE f SET parent_id = 1000000 WHERE id = 45000",
       "FROM f |> TREE ACCUMULATE UP SUM(x) AS sx |> SELECT id, sx", "parent"},
      {"UPDATE f SET id = 20 WHERE id = 50001",
       "FROM (SELECT * FROM f) |> TREE ACCUMULATE UP SUM(x) AS sx |> SELECT id, sx", "two rows"},
      /* sums past int64 in late morsels */
      {"UPDATE f SET k = 4611686018427387904 WHERE id > 41000",
       "FROM f |> TREE ACCUMULATE UP SUM(k) AS sk |> AGGREGATE COUNT(*) AS n, MAX(sk) AS m", "overflow"},
      {"UPDATE f SET k = 4611686018427387904 WHERE id > 41000",
       "FROM f |> TREE ACCUMULATE DOWN SUM(k) AS sk |> SELECT id, sk", "overflow"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    pj_engine *e = engine();
    forest f = make_forest(e, ROOTS, PARENT_FIRST, 99, false, 0);
    assert_int_equal(sqlite3_exec(pj_engine_sqlite(e), bad[i].sql, NULL, NULL, NULL), SQLITE_OK);
    if (!strstr(bad[i].query, "SELECT *")) assert_int_equal(pj_engine_load_table(e, "f"), PJ_OK);
    bool par;
    char *got = same_everywhere(e, bad[i].query, bad[i].msg, &par);
    if (!strstr(got, "error") || !strstr(got, bad[i].msg)) fail_msg("case %zu: %s", i, got);
    free(got);
    forest_free(&f);
    pj_engine_close(e);
  }
}

/* The table check of parent_id runs in pieces of 256K rows on the
 * workers (rt_tree_table_order_par): with bad rows in two pieces, the
 * error is the first bad row's, as one pass meets it, on every thread
 * count. */
static void first_bad_row_of_a_big_table(void **state) {
  (void)state;
  for (int bad = 1; bad >= 0; bad--) {
    pj_engine *e = engine();
    assert_int_equal(sqlite3_exec(pj_engine_sqlite(e),
                                  "CREATE TABLE g(id INT, parent_id INT, x REAL);"
                                  "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 599999) "
                                  "INSERT INTO g SELECT i, CASE WHEN i % 100 = 0 THEN NULL ELSE i - 1 END, i * 0.5 FROM c",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    if (bad)
      assert_int_equal(sqlite3_exec(pj_engine_sqlite(e),
                                    "UPDATE g SET parent_id = 5000000 WHERE id = 550000;"
                                    "UPDATE g SET parent_id = 300001 WHERE id = 300001",
                                    NULL, NULL, NULL),
                       SQLITE_OK);
    assert_int_equal(pj_engine_load_table(e, "g"), PJ_OK);
    bool par;
    char *got = same_everywhere(e, "FROM g |> TREE ACCUMULATE UP SUM(x) AS sx |> AGGREGATE SUM(sx) AS s",
                                "big table", &par);
    if (bad && !strstr(got, "the row with id 300001 is its own parent")) fail_msg("%s", got);
    if (!bad) {
      /* without the bad rows: the same answer everywhere, on several threads */
      assert_null(strstr(got, "error"));
      assert_true(par);
    }
    free(got);
    pj_engine_close(e);
  }
}

/* The table check takes whole 64-row blocks of a plain integer parent_id
 * at once (two vectorized loops) and checks a block row by row only when
 * it holds a bad parent or a value not below 2^32 - 1: each such value,
 * in a block's first, middle or last row, must still be the error of the
 * first bad row in table order, as a row-by-row pass (the reference here)
 * finds it, with NULL parents in the same blocks; parents above their
 * rows (child-first) and below (parent-first) both. */
static void bad_parent_in_a_block(void **state) {
  (void)state;
  static const char *const vals[] = {"-1", "4294967295", "4294967296", "640", "9000000000000000", "ID"};
  static const int at[] = {64, 100, 127, 575};
  for (int dir = 0; dir < 2; dir++)
    for (int vi = 0; vi < 6; vi++)
      for (int ri = 0; ri < 4; ri++) {
        pj_engine *e = engine();
        char sql[512];
        /* dir 0: parent i - 1 (parent-first), 1: i + 1 (child-first); a
         * root every 10th row; a second bad row after the first */
        snprintf(sql, sizeof sql,
                 "CREATE TABLE g(id INT, parent_id INT, x REAL);"
                 "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < %d) "
                 "INSERT INTO g SELECT i, CASE WHEN i %% 10 = %d THEN NULL ELSE i %s 1 END, i * 0.25 FROM c;"
                 "UPDATE g SET parent_id = %s WHERE id = %d;"
                 "UPDATE g SET parent_id = id WHERE id = 600",
                 639, dir ? 9 : 0, dir ? "+" : "-", strcmp(vals[vi], "ID") ? vals[vi] : "id", at[ri]);
        assert_int_equal(sqlite3_exec(pj_engine_sqlite(e), sql, NULL, NULL, NULL), SQLITE_OK);
        assert_int_equal(pj_engine_load_table(e, "g"), PJ_OK);
        /* the reference: the first row whose parent is no other row */
        sqlite3_stmt *st;
        assert_int_equal(sqlite3_prepare_v2(pj_engine_sqlite(e),
                                            "SELECT id, parent_id = id FROM g WHERE parent_id IS NOT NULL AND "
                                            "(parent_id < 0 OR parent_id >= 640 OR parent_id = id) ORDER BY id LIMIT 1",
                                            -1, &st, NULL),
                         SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        char want[128];
        if (sqlite3_column_int(st, 1))
          snprintf(want, sizeof want, "the row with id %d is its own parent", sqlite3_column_int(st, 0));
        else
          snprintf(want, sizeof want, "a row names a parent which is not itself a row in the input");
        sqlite3_finalize(st);
        bool par;
        char *got = same_everywhere(e, dir ? "FROM g |> TREE ACCUMULATE DOWN SUM(x) AS sx |> AGGREGATE SUM(sx) AS s"
                                           : "FROM g |> TREE ACCUMULATE UP SUM(x) AS sx |> AGGREGATE SUM(sx) AS s",
                                    "bad parent", &par);
        if (!strstr(got, want)) fail_msg("parent %s at row %d (dir %d): want %s, got %s", vals[vi], at[ri], dir, want, got);
        free(got);
        pj_engine_close(e);
      }
}

/* DOWN's per-node arrays and the in-place parent nodes are not zeroed (a
 * node's slots are written by its own row before a child reads them;
 * runtime/tree/tree_mem.c reuses freed blocks for them): with those
 * arrays filled with junk (rt_tree_big_junk), every aggregate DOWN keeps
 * gives the rows it gives on zeroed ones, on every thread count and both
 * backends, in place and through SQL, for any layout. Fails when one of
 * them reads a slot no row wrote (UP would: it adds into zeros). */
static const char *const DOWN_ALL[] = {
    "FROM f |> TREE ACCUMULATE DOWN SUM(x) AS sx, SUM(k) AS sk, COUNT(*) AS c, COUNT(k) AS ck, "
    "MIN(x) AS lo, MAX(k) AS hi, AVG(x) AS ax, FIRST(k) AS fk, LAST(x) AS lx, ARG_MAX(x, k) AS am, "
    "ARG_MIN(k, x) AS an |> SELECT id, sx, sk, c, ck, lo, hi, ax, fk, lx, am, an",
    "FROM (SELECT * FROM f) |> TREE ACCUMULATE DOWN SUM(k) AS sk, MAX(x) AS hi, AVG(k) AS ak, "
    "LAST(k) AS lk, ARG_MIN(x, id) AS an |> SELECT id, sk, hi, ak, lk, an",
    "FROM f |> TREE ACCUMULATE DOWN SUM(x) AS sx |> AGGREGATE SUM(sx) AS s, MAX(sx) AS m",
};

static void down_reads_no_unwritten_slot(void **state) {
  (void)state;
  uint64_t seed = 0xd0a11u;
  for (int sh = 0; sh < NSHAPES; sh += 2)
    for (int lay = 0; lay < 3; lay++) {
      pj_engine *e = engine();
      forest f = make_forest(e, (shape)sh, (layout)lay, seed + (uint64_t)sh * 7 + (uint64_t)lay, true, 0);
      for (size_t q = 0; q < sizeof DOWN_ALL / sizeof *DOWN_ALL; q++) {
        char what[160];
        snprintf(what, sizeof what, "%s, layout %d, DOWN query %zu", SHAPE[sh], lay, q);
        bool par;
        rt_tree_big_junk = false;
        char *want = same_everywhere(e, DOWN_ALL[q], what, &par);
        rt_tree_big_junk = true;
        char *got = same_everywhere(e, DOWN_ALL[q], what, &par);
        rt_tree_big_junk = false;
        assert_null(strstr(want, "error"));
        if (strcmp(want, got)) fail_msg("%s: other rows on junk memory\n%.300s\nvs\n%.300s", what, want, got);
        free(want);
        free(got);
      }
      forest_free(&f);
      pj_engine_close(e);
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(same_for_any_thread_count),
      cmocka_unit_test(matches_the_recursive_reference),
      cmocka_unit_test(same_error_for_any_thread_count),
      cmocka_unit_test(first_bad_row_of_a_big_table),
      cmocka_unit_test(bad_parent_in_a_block),
      cmocka_unit_test(down_reads_no_unwritten_slot),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
