/*
 * test_topk.c — ORDER BY … LIMIT n OFFSET m keeps only its first n + m
 * rows while it reads (runtime/topk.h); what it returns must be rows
 * m .. m+n-1 of a full stable sort, for any n and m, on 1, 2 and 4
 * threads, on both backends.
 *
 * The reference is a brute force here: the table's rows read in input
 * order, sorted by qsort on the keys with LANGUAGE.md's rules (NULLs
 * first ascending and last descending unless told, numbers by value with
 * -0.0 equal to 0.0, strings in binary order) and then by input position.
 * The keys have few distinct values, so almost every row ties with others
 * and `id` (unique) tells which of the tied rows came out: a top k that
 * kept a later tied row instead of an earlier one fails. The doubles
 * print as hex floats, so a -0.0 kept in place of a 0.0 fails too.
 *
 * Small batches (the engine's test knob) cut the table into many morsels,
 * so a parallel run has many per-morsel top k's to merge, and each worker
 * bounds its rows with bounds learnt from other morsels.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/engine.h"
#include "pipejit.h"
#include "rowdiff.h"

#define ROWS 20000
#define BATCH 64

/* The table: id, then keys with many ties and NULLs. */
static const char TABLE[] =
    "CREATE PERFETTO TABLE tk AS FROM slice |> SELECT id, "
    "CASE WHEN (id * 7919) % 17 = 0 THEN NULL ELSE (id * 7919) % 23 - 11 END AS i1, "
    "CASE WHEN id % 11 = 0 THEN NULL WHEN id % 3 = 0 THEN 0.0 * -1 "
    "ELSE ((id * 31) % 7 - 3) * 0.5 END AS d1, "
    "CASE WHEN id % 13 = 0 THEN NULL ELSE name END AS s1, "
    "(id * 104729) % 5 AS i2, "
    "CASE WHEN id % 29 = 0 THEN 1e308 * 10 WHEN id % 31 = 0 THEN -1e308 * 10 "
    "WHEN id % 37 = 0 THEN NULL ELSE (dur % 9) * 0.25 END AS d2";

enum { C_ID, C_I1, C_D1, C_S1, C_I2, C_D2, NCOLS };

/* ---- the table in input order ------------------------------------------------ */

typedef struct cell {
  bool null;
  int64_t i;
  double d;
  char *s;
} cell;

typedef struct table {
  int64_t n;
  cell (*rows)[NCOLS];
  int types[NCOLS];   /* PJ_TYPE_* */
} table;

static int take_table(void *ctx, const pj_result *r, const char *text, size_t len, size_t off) {
  (void)text, (void)len, (void)off;
  table *t = ctx;
  assert_int_equal(pj_result_column_count(r), NCOLS);
  t->n = pj_result_row_count(r);
  t->rows = calloc((size_t)t->n + 1, sizeof *t->rows);
  assert_non_null(t->rows);
  for (int c = 0; c < NCOLS; c++) t->types[c] = pj_result_column_type(r, c);
  for (int64_t i = 0; i < t->n; i++)
    for (int c = 0; c < NCOLS; c++) {
      cell *x = &t->rows[i][c];
      x->null = pj_result_is_null(r, i, c);
      if (x->null) continue;
      if (t->types[c] == PJ_TYPE_DOUBLE) x->d = pj_result_double(r, i, c);
      else if (t->types[c] == PJ_TYPE_STRING) x->s = strdup(pj_result_text(r, i, c, NULL));
      else x->i = pj_result_int64(r, i, c);
    }
  return 0;
}

/* ---- rows as text (rowdiff.h's buffers) ------------------------------------------ */

static void put_cell(buf *d, int type, const cell *x) {
  if (x->null) bprintf(d, "NULL|");
  else if (type == PJ_TYPE_DOUBLE) bprintf(d, "%a|", x->d);
  else if (type == PJ_TYPE_STRING) bprintf(d, "%s|", x->s);
  else bprintf(d, "%lld|", (long long)x->i);
}

static int dump_result(void *ctx, const pj_result *r, const char *txt, size_t len, size_t off) {
  (void)txt, (void)len, (void)off;
  buf *d = ctx;
  for (int64_t i = 0; i < pj_result_row_count(r); i++) {
    for (int c = 0; c < pj_result_column_count(r); c++) {
      cell x = {.null = pj_result_is_null(r, i, c)};
      int type = pj_result_column_type(r, c);
      if (!x.null && type == PJ_TYPE_DOUBLE) x.d = pj_result_double(r, i, c);
      else if (!x.null && type == PJ_TYPE_STRING) x.s = (char *)pj_result_text(r, i, c, NULL);
      else if (!x.null) x.i = pj_result_int64(r, i, c);
      put_cell(d, type, &x);
    }
    bprintf(d, "\n");
  }
  return 0;
}

/* ---- the brute force ------------------------------------------------------------ */

typedef struct key {
  int col;
  bool desc, nulls_first;
} key;

typedef struct order {
  const char *text;   /* the ORDER BY list */
  int nkeys;
  key keys[3];
} order;

/* NULLs first ascending and last descending unless told (nf: 1 first,
 * 0 last, -1 the default). */
#define K(c, d, nf) {c, d, (nf) < 0 ? !(d) : (nf)}

static const order ORDERS[] = {
    {"i1 DESC, d1", 2, {K(C_I1, 1, -1), K(C_D1, 0, -1)}},
    {"d1 DESC NULLS FIRST, i1 NULLS LAST", 2, {K(C_D1, 1, 1), K(C_I1, 0, 0)}},
    {"s1, i2 DESC", 2, {K(C_S1, 0, -1), K(C_I2, 1, -1)}},
    {"i2", 1, {K(C_I2, 0, -1)}},
    {"d2 DESC", 1, {K(C_D2, 1, -1)}},
    {"s1 DESC NULLS FIRST, d1 DESC, i1", 3, {K(C_S1, 1, 1), K(C_D1, 1, -1), K(C_I1, 0, -1)}},
    {"d1, d2 NULLS LAST", 2, {K(C_D1, 0, -1), K(C_D2, 0, 0)}},
};

static const table *g_tab;
static const order *g_ord;

static int cmp_cell(int type, const cell *a, const cell *b) {
  if (type == PJ_TYPE_DOUBLE) return (a->d > b->d) - (a->d < b->d);   /* -0.0 == 0.0 */
  if (type == PJ_TYPE_STRING) {
    int c = strcmp(a->s, b->s);   /* the texts have no NUL: binary order */
    return (c > 0) - (c < 0);
  }
  return (a->i > b->i) - (a->i < b->i);
}

static int cmp_rows(const void *pa, const void *pb) {
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  for (int k = 0; k < g_ord->nkeys; k++) {
    const key *kk = &g_ord->keys[k];
    const cell *x = &g_tab->rows[a][kk->col], *y = &g_tab->rows[b][kk->col];
    int c;
    if (x->null || y->null) c = x->null == y->null ? 0 : x->null == kk->nulls_first ? -1 : 1;
    else c = kk->desc ? -cmp_cell(g_tab->types[kk->col], x, y) : cmp_cell(g_tab->types[kk->col], x, y);
    if (c) return c;
  }
  return (a > b) - (a < b);   /* the tie rule: input order */
}

/* Rows off .. off+lim-1 of the table's rows that `keep` lets through,
 * sorted by o, as text. */
static char *reference(const table *t, const order *o, int64_t lim, int64_t off, bool (*keep)(const cell *)) {
  int64_t *idx = malloc(sizeof *idx * ((size_t)t->n + 1)), n = 0;
  assert_non_null(idx);
  for (int64_t i = 0; i < t->n; i++)
    if (!keep || keep(t->rows[i])) idx[n++] = i;
  g_tab = t;
  g_ord = o;
  qsort(idx, (size_t)n, sizeof *idx, cmp_rows);
  buf d = {0};
  bprintf(&d, "result:\n");
  for (int64_t i = off; i < n && i < off + lim; i++) {
    for (int c = 0; c < NCOLS; c++) put_cell(&d, t->types[c], &t->rows[idx[i]][c]);
    bprintf(&d, "\n");
  }
  free(idx);
  return d.s;
}

static bool keep_some(const cell *row) { return row[C_ID].i % 4 != 1; }

/* ---- the engine ------------------------------------------------------------------ */

static pj_engine *engine(pj_mode mode, int threads) {
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  pj_engine_set_mode(e, mode);
  pj_engine_set_threads(e, threads);
  pj__engine_set_batch_rows(e, BATCH);
  assert_int_equal(pj_engine_load_sample_trace(e, ROWS), PJ_OK);
  if (pj_engine_exec(e, TABLE, NULL, NULL) != PJ_OK) fail_msg("%s", pj_engine_errmsg(e));
  return e;
}

static char *run(pj_engine *e, const char *q) {
  buf d = {0};
  bprintf(&d, "result:\n");
  if (pj_engine_exec(e, q, dump_result, &d) != PJ_OK)
    bprintf(&d, "error: %s at %d\n", pj_engine_errmsg(e), pj_engine_erroffset(e));
  return d.s;
}

static void free_table(table *t) {
  for (int64_t i = 0; i < t->n; i++)
    for (int c = 0; c < NCOLS; c++) free(t->rows[i][c].s);
  free(t->rows);
}

/* LIMIT n OFFSET m: none, one, a few, more than a batch or a morsel,
 * past the rows, an offset near the end and past it, the top k bound
 * (RT_TOPK_MAX: 65536) and one past it (a full sort). */
static const int64_t LIMITS[][2] = {
    {0, 0}, {1, 0}, {7, 0}, {10, 5}, {150, 0}, {1000, 37}, {ROWS + 5, 0},
    {3, ROWS - 2}, {50, ROWS + 10}, {65536, 0}, {65530, 6}, {65537, 0},
};

static void matches_brute_force(void **state) {
  (void)state;
  static const struct {
    pj_mode mode;
    int threads;
  } ENGINES[] = {{PJ_MODE_INTERP, 1}, {PJ_MODE_JIT, 1}, {PJ_MODE_INTERP, 2},
                 {PJ_MODE_JIT, 2},    {PJ_MODE_INTERP, 4}, {PJ_MODE_JIT, 4}};
  pj_engine *e0 = engine(PJ_MODE_INTERP, 1);
  table t = {0};
  assert_int_equal(pj_engine_exec(e0, "FROM tk", take_table, &t), PJ_OK);
  assert_int_equal(t.n, ROWS);
  assert_int_equal(t.types[C_D1], PJ_TYPE_DOUBLE);
  assert_int_equal(t.types[C_S1], PJ_TYPE_STRING);
  pj_engine_close(e0);
  for (size_t ei = 0; ei < sizeof ENGINES / sizeof *ENGINES; ei++) {
    pj_engine *e = engine(ENGINES[ei].mode, ENGINES[ei].threads);
    for (size_t oi = 0; oi < sizeof ORDERS / sizeof *ORDERS; oi++)
      for (size_t li = 0; li < sizeof LIMITS / sizeof *LIMITS; li++) {
        const order *o = &ORDERS[oi];
        int64_t lim = LIMITS[li][0], off = LIMITS[li][1];
        /* no step before the sort (rows judged before they are
         * appended), and a filter before it (judged after) */
        for (int form = 0; form < 2; form++) {
          char q[512];
          snprintf(q, sizeof q, "FROM tk %s|> ORDER BY %s |> LIMIT %lld OFFSET %lld",
                   form ? "|> WHERE id % 4 <> 1 " : "", o->text, (long long)lim, (long long)off);
          char *want = reference(&t, o, lim, off, form ? keep_some : NULL);
          char *got = run(e, q);
          if (strcmp(want, got))
            fail_msg("%s on %d threads (%s): %s\nwant:\n%.600s\ngot:\n%.600s",
                     ENGINES[ei].mode == PJ_MODE_JIT ? "jit" : "interp", ENGINES[ei].threads,
                     q, "rows differ", want, got);
          free(want);
          free(got);
        }
      }
    pj_engine_close(e);
  }
  free_table(&t);
}

/* The same cut of the same sort from every source kind and count form:
 * a SQL source (SQLite's batches), computed keys, a LIMIT given as a
 * parameter, and a SELECT after the LIMIT. Each against the full sort
 * of the same input (no LIMIT), cut here. */
static void other_sources_match_the_full_sort(void **state) {
  (void)state;
  static const char *const FROMS[] = {
      "FROM (SELECT * FROM tk)",
      "FROM slice |> EXTEND (id * 7919) % 23 AS i1, CASE WHEN id % 3 = 0 THEN NULL ELSE name END AS s1 "
      "|> SELECT id, i1, s1",
  };
  static const char *const ORDS[] = {"i1 DESC, s1", "s1 NULLS LAST, i1"};
  for (int threads = 1; threads <= 4; threads *= 2) {
    pj_engine *e = engine(PJ_MODE_JIT, threads);
    for (size_t fi = 0; fi < sizeof FROMS / sizeof *FROMS; fi++)
      for (size_t oi = 0; oi < sizeof ORDS / sizeof *ORDS; oi++) {
        char q[512];
        snprintf(q, sizeof q, "%s |> ORDER BY %s", FROMS[fi], ORDS[oi]);
        char *full = run(e, q);
        assert_null(strstr(full, "error"));
        for (size_t li = 0; li < sizeof LIMITS / sizeof *LIMITS; li++) {
          int64_t lim = LIMITS[li][0], off = LIMITS[li][1];
          /* rows off .. off+lim-1 of the full sort's text */
          buf want = {0};
          bprintf(&want, "result:\n");
          const char *p = strchr(full, '\n') + 1;
          for (int64_t i = 0; *p && i < off + lim; i++) {
            const char *nl = strchr(p, '\n');
            if (i >= off) bprintf(&want, "%.*s\n", (int)(nl - p), p);
            p = nl + 1;
          }
          char lq[640];
          snprintf(lq, sizeof lq, "%s |> LIMIT %lld OFFSET %lld", q, (long long)lim, (long long)off);
          char *got = run(e, lq);
          if (strcmp(want.s, got)) fail_msg("%d threads: %s\nwant:\n%.400s\ngot:\n%.400s", threads, lq, want.s, got);
          free(got);
          /* the count as a parameter, and a step after the LIMIT */
          pj_query *pq = NULL;
          snprintf(lq, sizeof lq, "%s |> LIMIT $n OFFSET $m |> SELECT *", q);
          assert_int_equal(pj_query_compile(e, lq, &pq), PJ_OK);
          assert_int_equal(pj_query_bind_int64(pq, pj_query_param_index(pq, "n"), lim), PJ_OK);
          assert_int_equal(pj_query_bind_int64(pq, pj_query_param_index(pq, "m"), off), PJ_OK);
          pj_result *r = NULL;
          assert_int_equal(pj_query_run(pq, &r), PJ_OK);
          buf pt = {0};
          bprintf(&pt, "result:\n");
          dump_result(&pt, r, NULL, 0, 0);
          if (strcmp(want.s, pt.s)) fail_msg("%d threads: %s (n %lld, m %lld)", threads, lq, (long long)lim, (long long)off);
          pj_result_free(r);
          pj_query_free(pq);
          free(pt.s);
          free(want.s);
        }
        free(full);
      }
    pj_engine_close(e);
  }
}

/* A count that is not valid is the reader's error, as without a top k. */
static void bad_counts_are_the_limits_errors(void **state) {
  (void)state;
  pj_engine *e = engine(PJ_MODE_JIT, 2);
  char *got = run(e, "FROM tk |> ORDER BY i1 |> LIMIT -1");
  assert_non_null(strstr(got, "error: LIMIT: expected a count that is zero or more"));
  free(got);
  /* checked when the run starts: parameters */
  assert_int_equal(pj_engine_bind_double(e, "m", 1.5), PJ_OK);
  got = run(e, "FROM tk |> ORDER BY i1 |> LIMIT 3 OFFSET $m");
  assert_non_null(strstr(got, "error: LIMIT: expected a count that is a whole number"));
  free(got);
  assert_int_equal(pj_engine_bind_null(e, "m"), PJ_OK);
  got = run(e, "FROM tk |> ORDER BY i1 |> LIMIT $m");
  assert_non_null(strstr(got, "error: LIMIT: expected a count, but it is NULL"));
  free(got);
  pj_engine_close(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(matches_brute_force),
      cmocka_unit_test(other_sources_match_the_full_sort),
      cmocka_unit_test(bad_counts_are_the_limits_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
