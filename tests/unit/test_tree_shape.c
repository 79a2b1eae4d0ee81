/*
 * test_tree_shape.c — the §9.4 tree operators (LANGUAGE.md §9.4) on random
 * forests against an independent answer.
 *
 * A fixed-seed generator makes forests of 0 to 9000 nodes (deep chains
 * and wide fans, several roots; ids dense or scattered; rows parents-first
 * or shuffled; names from a few words with NULLs; values with NULLs) and a
 * random node set (with ids of no node and a NULL). Each is loaded as a
 * SQLite table `f` and as a columnar PERFETTO TABLE `pf`, and every
 * pipeline runs on each backend reading either:
 *   - the tree filters (KEEP / DROP IF DESCENDANT / ANCESTOR OF, PRUNE,
 *     REPARENT, with and without OVER) against SQLite's recursive CTEs:
 *     the kept set, then each kept row's nearest kept strict ancestor;
 *   - MERGE SIBLINGS BY name against SQLite's name paths (a recursive CTE
 *     grouping by the path from the root): the pipeline's output is turned
 *     into paths through its new ids, which must be dense with parents
 *     first;
 *   - CONTRACT, ABSORB and MERGE INTO PARENT against a brute-force C
 *     reference below that walks each node's ancestors one by one;
 *   - TREE ACCUMULATE's AVG, ARG_MAX, ARG_MIN (UP, DOWN) and FIRST, LAST
 *     (DOWN) against a brute force over every pair of nodes.
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
#include "rowdiff.h"

/* ---- forests ------------------------------------------------------------------------ */

static const char *const g_names[] = {"a", "b", "c", "main"};

typedef struct forest {
  int n;
  int *par;        /* parent node, -1 for roots (node numbers: generation order) */
  long long *id;   /* the node's id */
  int *name;       /* index into g_names, -1 NULL */
  int *v;          /* value; vnull marks NULL */
  char *vnull;
  char *in_set;    /* node is in the node set */
} forest;

static void forest_free(forest *f) {
  free(f->par);
  free(f->id);
  free(f->name);
  free(f->v);
  free(f->vnull);
  free(f->in_set);
}

/* Generates f and loads it as f / pf (rows in a random or parents-first
 * order) and its node set as s. */
static void make_forest(pj_engine *e, forest *f, int n) {
  memset(f, 0, sizeof *f);
  f->n = n;
  f->par = calloc((size_t)n + 1, sizeof *f->par);
  f->id = calloc((size_t)n + 1, sizeof *f->id);
  f->name = calloc((size_t)n + 1, sizeof *f->name);
  f->v = calloc((size_t)n + 1, sizeof *f->v);
  f->vnull = calloc((size_t)n + 1, 1);
  f->in_set = calloc((size_t)n + 1, 1);
  int shape = rnd(3);   /* 0 chains, 1 fans, 2 mixed */
  for (int i = 0; i < n; i++) {
    if (i == 0 || chance(shape == 1 ? 2 : 5)) f->par[i] = -1;
    else if (shape == 0 || (shape == 2 && chance(50))) f->par[i] = i - 1 - rnd(i < 3 ? i : 3);
    else f->par[i] = rnd(i);
    f->name[i] = chance(8) ? -1 : rnd(3 + (n > 100));
    f->vnull[i] = (char)chance(12);
    f->v[i] = rnd(41) - 10;
    f->in_set[i] = (char)chance(8);
  }
  bool dense = chance(40);
  int *perm = malloc(sizeof(int) * ((size_t)n + 1));
  for (int i = 0; i < n; i++) perm[i] = i;
  for (int i = n - 1; i > 0 && !dense; i--) {
    int j = rnd(i + 1), t = perm[i];
    perm[i] = perm[j], perm[j] = t;
  }
  for (int i = 0; i < n; i++) f->id[i] = dense ? i : (long long)perm[i] * 7 + 3;
  /* insertion order: as generated (parents first) or shuffled */
  int *order = malloc(sizeof(int) * ((size_t)n + 1));
  for (int i = 0; i < n; i++) order[i] = i;
  if (!dense && chance(60))
    for (int i = n - 1; i > 0; i--) {
      int j = rnd(i + 1), t = order[i];
      order[i] = order[j], order[j] = t;
    }
  sqlite3 *db = pj_engine_sqlite(e);
  assert_int_equal(sqlite3_exec(db,
                                "DROP TABLE IF EXISTS f; DROP TABLE IF EXISTS s;"
                                "CREATE TABLE f(id INT, parent_id INT, name TEXT, v INT);"
                                "CREATE TABLE s(id INT, w INT); BEGIN",
                                NULL, NULL, NULL),
                   SQLITE_OK);
  sqlite3_stmt *st = NULL, *ss = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO f VALUES (?, ?, ?, ?)", -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO s VALUES (?, 1)", -1, &ss, NULL), SQLITE_OK);
  for (int k = 0; k < n; k++) {
    int i = order[k];
    sqlite3_bind_int64(st, 1, f->id[i]);
    if (f->par[i] < 0) sqlite3_bind_null(st, 2);
    else sqlite3_bind_int64(st, 2, f->id[f->par[i]]);
    if (f->name[i] < 0) sqlite3_bind_null(st, 3);
    else sqlite3_bind_text(st, 3, g_names[f->name[i]], -1, SQLITE_STATIC);
    if (f->vnull[i]) sqlite3_bind_null(st, 4);
    else sqlite3_bind_int64(st, 4, f->v[i]);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_reset(st);
    if (f->in_set[i]) {
      sqlite3_bind_int64(ss, 1, f->id[i]);
      assert_int_equal(sqlite3_step(ss), SQLITE_DONE);
      sqlite3_reset(ss);
    }
  }
  sqlite3_finalize(st);
  sqlite3_finalize(ss);
  /* ids of no node, and a NULL: ignored */
  assert_int_equal(sqlite3_exec(db, "INSERT INTO s VALUES (-1, 0), (NULL, 0); COMMIT", NULL, NULL, NULL),
                   SQLITE_OK);
  if (pj_engine_exec(e,
                     "CREATE OR REPLACE PERFETTO TABLE pf(id LONG, parent_id LONG, name STRING, v LONG) AS "
                     "SELECT id, parent_id, name, v FROM f ORDER BY rowid",
                     NULL, NULL) != PJ_OK)
    fail_msg("pf: %s", pj_engine_errmsg(e));
  free(perm);
  free(order);
}

/* ---- running ------------------------------------------------------------------------ */

typedef struct mode_spec {
  const char *name;
  pj_mode mode;
} mode_spec;

static int pick_modes(mode_spec *m) {
  int n = 0;
  m[n++] = (mode_spec){"interp", PJ_MODE_INTERP};
  rt_err err = {.offset = -1};
  cg_jit *j = cg_jit_new(&err);
  if (j) {
    cg_jit_free(j);
    m[n++] = (mode_spec){"jit", PJ_MODE_JIT};
  }
  return n;
}

typedef void (*shape_fn)(const pj_result *r, rows *out);

/* Runs pipe in every mode; its rows (through shape, when given) must be
 * want's. Returns the number of disagreements. */
static int check(pj_engine *e, const mode_spec *modes, int nmodes, const char *what, int n,
                 const char *pipe, rows *want, shape_fn shape) {
  int failures = 0;
  for (int m = 0; m < nmodes; m++) {
    pj_engine_set_mode(e, modes[m].mode);
    pj_query *q = NULL;
    pj_result *r = NULL;
    char *why = NULL;
    if (pj_query_compile(e, pipe, &q) != PJ_OK || pj_query_run(q, &r) != PJ_OK) {
      buf b = {0};
      bprintf(&b, "error: %s\n", pj_engine_errmsg(e));
      why = b.s;
    } else {
      rows got = {0};
      (shape ? shape : result_rows)(r, &got);
      rows w = *want;
      w.r = malloc(sizeof *w.r * ((size_t)want->n + 1));
      if (want->n) memcpy(w.r, want->r, sizeof *w.r * (size_t)want->n);
      why = diff_rows(&w, &got, 0, 0);
      free(w.r);
      rows_free(&got);
    }
    if (why) {
      print_error("%s at %d nodes [%s]: %s\n%s", what, n, modes[m].name, pipe, why);
      failures++;
      free(why);
    }
    pj_result_free(r);
    pj_query_free(q);
  }
  return failures;
}

/* ---- the tree filters against recursive CTEs ----------------------------------------- */

/* d: descendants-or-self of the set; a: ancestors-or-self; k: the kept
 * (for REPARENT: the set's) nodes among the input rows `input`; up: each
 * output row's walk to its nearest strict ancestor in k. */
static char *filter_sql(const char *keep, const char *input, bool all_rows) {
  buf b = {0};
  bprintf(&b,
          "WITH RECURSIVE "
          "d(id) AS (SELECT id FROM f WHERE id IN (SELECT id FROM s)"
          "  UNION SELECT f.id FROM f JOIN d ON f.parent_id = d.id),"
          "a(id) AS (SELECT id FROM f WHERE id IN (SELECT id FROM s)"
          "  UNION SELECT f.parent_id FROM f JOIN a ON f.id = a.id WHERE f.parent_id IS NOT NULL),"
          "i(id) AS (SELECT id FROM f WHERE %s),"
          "k(id) AS (%s),"
          "o(id) AS (SELECT id FROM %s),"
          "up(id, anc) AS (SELECT id, (SELECT parent_id FROM f WHERE f.id = o.id) FROM o"
          "  UNION ALL SELECT up.id, f.parent_id FROM up JOIN f ON f.id = up.anc WHERE up.anc NOT IN k) "
          "SELECT f.id, up.anc, f.name, f.v FROM f JOIN up ON up.id = f.id "
          "WHERE (up.anc IS NULL OR up.anc IN k)",
          input, keep, all_rows ? "i" : "k");
  return bdone(&b);
}

static int test_filters(pj_engine *e, const mode_spec *modes, int nmodes, int n) {
  static const struct {
    const char *stage, *keep;
  } forms[] = {
      {"TREE KEEP IF DESCENDANT OF s", "SELECT id FROM d WHERE id IN i"},
      {"TREE KEEP IF ANCESTOR OF s", "SELECT id FROM a WHERE id IN i"},
      {"TREE DROP IF DESCENDANT OF s", "SELECT id FROM i WHERE id NOT IN d"},
      {"TREE DROP IF ANCESTOR OF s", "SELECT id FROM i WHERE id NOT IN a"},
      {"TREE PRUNE AT s", "SELECT id FROM i WHERE id NOT IN d"},
      {"TREE REPARENT TO NEAREST ANCESTOR IN s", "SELECT id FROM f WHERE id IN (SELECT id FROM s)"},
  };
  int failures = 0;
  for (size_t k = 0; k < sizeof forms / sizeof forms[0]; k++)
    for (int over = 0; over < 2; over++) {
      bool reparent = k == 5;
      if (over && k == 4) continue;   /* PRUNE takes no OVER */
      const char *src = chance(50) ? "pf" : "f";
      buf p = {0};
      if (over)
        bprintf(&p, "FROM %s |> WHERE v IS NULL OR v %% 3 <> 0 |> %s OVER %s", src, forms[k].stage,
                chance(50) ? "f" : "(FROM pf |> SELECT parent_id, id)");
      else
        bprintf(&p, "FROM %s |> %s", src, forms[k].stage);
      char *sql = filter_sql(forms[k].keep, over ? "v IS NULL OR v % 3 <> 0" : "1", reparent);
      rows want = {0};
      sql_rows(pj_engine_sqlite(e), sql, &want);
      failures += check(e, modes, nmodes, "filter", n, p.s, &want, NULL);
      rows_free(&want);
      free(sql);
      free(p.s);
    }
  return failures;
}

/* ---- MERGE SIBLINGS against name paths ----------------------------------------------- */

static int g_shape_bad;   /* the pipeline's ids were not dense, parents first */

/* (path, sum, count, count of values) of each merged node: its path
 * rebuilt through the new ids (row i must have id i, its parent a lower
 * id). */
static void sibling_paths(const pj_result *r, rows *out) {
  int64_t k = pj_result_row_count(r);
  char **path = calloc((size_t)k + 1, sizeof *path);
  for (int64_t i = 0; i < k; i++) {
    buf b = {0};
    int64_t p = pj_result_is_null(r, i, 1) ? -1 : pj_result_int64(r, i, 1);
    if (pj_result_int64(r, i, 0) != i || p >= i) {
      g_shape_bad++;
      p = -1;
    }
    bprintf(&b, "%s/%s%s", p >= 0 ? path[p] : "", pj_result_is_null(r, i, 2) ? "n" : "s",
            pj_result_is_null(r, i, 2) ? "" : pj_result_text(r, i, 2, NULL));
    path[i] = bdone(&b);
    buf row = {0};
    bprintf(&row, "'%s'|", path[i]);
    for (int c = 3; c < 6; c++) result_cell(&row, r, i, c);
    rows_add(out, bdone(&row));
  }
  for (int64_t i = 0; i < k; i++) free(path[i]);
  free(path);
}

static int test_siblings(pj_engine *e, const mode_spec *modes, int nmodes, int n) {
  static const char sql[] =
      "WITH RECURSIVE p(id, path, v) AS ("
      "  SELECT id, '/' || COALESCE('s' || name, 'n'), v FROM f WHERE parent_id IS NULL"
      "  UNION ALL SELECT f.id, p.path || '/' || COALESCE('s' || f.name, 'n'), f.v"
      "  FROM f JOIN p ON f.parent_id = p.id) "
      "SELECT path, SUM(v), COUNT(*), COUNT(v) FROM p GROUP BY path";
  rows want = {0};
  sql_rows(pj_engine_sqlite(e), sql, &want);
  char pipe[200];
  snprintf(pipe, sizeof pipe,
           "FROM %s |> TREE MERGE SIBLINGS BY name AGGREGATE SUM(v) AS sv, COUNT(*) AS n, COUNT(v) AS nv",
           chance(50) ? "pf" : "f");
  g_shape_bad = 0;
  int failures = check(e, modes, nmodes, "merge siblings", n, pipe, &want, sibling_paths);
  if (g_shape_bad) {
    print_error("merge siblings at %d nodes: %d rows break dense, parents-first ids\n", n, g_shape_bad);
    failures++;
  }
  rows_free(&want);
  return failures;
}

/* ---- CONTRACT, ABSORB, MERGE INTO PARENT against a brute force ---------------------- */

static bool same_name(const forest *f, int a, int b) { return f->name[a] == f->name[b]; }

/* The node whose row node x's values fold into (-1: lost), and whether x
 * comes out, by walking ancestors one at a time. */
static int fold_target(const forest *f, int form, int x) {
  switch (form) {
  case 0:   /* CONTRACT: a set node folds into its nearest ancestor not in the set */
    while (x >= 0 && f->in_set[x]) x = f->par[x];
    return x;
  case 1: {   /* ABSORB: the topmost set node at or above x, else x */
    int top = -1;
    for (int y = x; y >= 0; y = f->par[y])
      if (f->in_set[y]) top = y;
    return top >= 0 ? top : x;
  }
  default:   /* MERGE INTO PARENT: up while the parent has the same name */
    while (f->par[x] >= 0 && same_name(f, x, f->par[x])) x = f->par[x];
    return x;
  }
}

static void brute_fold(const forest *f, int form, rows *out) {
  int n = f->n;
  long long *sum = calloc((size_t)n + 1, sizeof *sum);
  int *cnt = calloc((size_t)n + 1, sizeof *cnt), *nv = calloc((size_t)n + 1, sizeof *nv);
  for (int x = 0; x < n; x++) {
    int t = fold_target(f, form, x);
    if (t < 0) continue;
    cnt[t]++;
    if (!f->vnull[x]) sum[t] += f->v[x], nv[t]++;
  }
  for (int x = 0; x < n; x++) {
    if (fold_target(f, form, x) != x) continue;
    /* the new parent: the nearest ancestor that comes out */
    int p = f->par[x];
    while (p >= 0 && fold_target(f, form, p) != p) p = f->par[p];
    buf b = {0};
    bprintf(&b, "%lld|", f->id[x]);
    if (p < 0) bprintf(&b, "N|");
    else bprintf(&b, "%lld|", f->id[p]);
    if (f->name[x] < 0) bprintf(&b, "N|");
    else bprintf(&b, "'%s'|", g_names[f->name[x]]);
    if (nv[x]) bprintf(&b, "%lld|", sum[x]);
    else bprintf(&b, "N|");
    bprintf(&b, "%d|", cnt[x]);
    rows_add(out, bdone(&b));
  }
  free(sum);
  free(cnt);
  free(nv);
}

static int test_folds(pj_engine *e, const mode_spec *modes, int nmodes, const forest *f) {
  static const char *const stages[] = {"TREE CONTRACT AT s", "TREE ABSORB AT s",
                                       "TREE MERGE INTO PARENT BY name"};
  int failures = 0;
  for (int form = 0; form < 3; form++) {
    rows want = {0};
    brute_fold(f, form, &want);
    char pipe[200];
    snprintf(pipe, sizeof pipe, "FROM %s |> %s AGGREGATE SUM(v) AS v, COUNT(*) AS n",
             chance(50) ? "pf" : "f", stages[form]);
    failures += check(e, modes, nmodes, "fold", f->n, pipe, &want, NULL);
    rows_free(&want);
  }
  return failures;
}

/* ---- TREE ACCUMULATE's §9.4 aggregates against a brute force ----------------------- */

/* Whether node a is node x or one of its ancestors. */
static bool at_or_above(const forest *f, int a, int x) {
  for (; x >= 0; x = f->par[x])
    if (x == a) return true;
  return false;
}

/* The rows of `FROM f |> TREE ACCUMULATE <dir> AVG(v) AS av, ARG_MAX(v * 100000 + id, name) AS am,
 * ARG_MIN(…) AS an[, FIRST(name) AS fn, LAST(v) AS lv] |> SELECT id, …`: for each node, the
 * nodes it aggregates over (its subtree, or its root path) visited by testing every pair. The
 * orderings are distinct (ids are below 100000), so no tie decides anything. */
static void brute_accumulate(const forest *f, bool up, rows *out) {
  for (int x = 0; x < f->n; x++) {
    long long sum = 0, cnt = 0, bo = 0, wo = 0;
    int best = -1, worst = -1, first = -1, last = -1, firstd = -1;
    for (int y = 0; y < f->n; y++) {
      if (!(up ? at_or_above(f, x, y) : at_or_above(f, y, x))) continue;
      if (!f->vnull[y]) {
        sum += f->v[y], cnt++;
        long long o = (long long)f->v[y] * 100000 + f->id[y];
        if (best < 0 || o > bo) best = y, bo = o;
        if (worst < 0 || o < wo) worst = y, wo = o;
      }
      if (up) continue;
      /* depth of y on x's path: the nearest the root has the fewest ancestors */
      int d = 0;
      for (int z = y; f->par[z] >= 0; z = f->par[z]) d++;
      if (f->name[y] >= 0 && (first < 0 || d < firstd)) first = y, firstd = d;
    }
    /* LAST(v): walk up from x itself */
    for (int z = x; z >= 0 && !up; z = f->par[z])
      if (!f->vnull[z]) {
        last = z;
        break;
      }
    buf b = {0};
    bprintf(&b, "%lld|", f->id[x]);
    if (cnt) bprintf(&b, "%.17g|", (double)sum / (double)cnt);
    else bprintf(&b, "N|");
    const int pick[2] = {best, worst};
    for (int k = 0; k < 2; k++) {
      if (pick[k] < 0 || f->name[pick[k]] < 0) bprintf(&b, "N|");
      else bprintf(&b, "'%s'|", g_names[f->name[pick[k]]]);
    }
    if (!up) {
      if (first < 0) bprintf(&b, "N|");
      else bprintf(&b, "'%s'|", g_names[f->name[first]]);
      if (last < 0) bprintf(&b, "N|");
      else bprintf(&b, "%d|", f->v[last]);
    }
    rows_add(out, bdone(&b));
  }
}

/* Doubles print as %.17g; the rest as result_rows does. */
static void accumulate_rows(const pj_result *r, rows *out) {
  for (int64_t i = 0; i < pj_result_row_count(r); i++) {
    buf b = {0};
    for (int c = 0; c < pj_result_column_count(r); c++) {
      if (pj_result_column_type(r, c) == PJ_TYPE_DOUBLE && !pj_result_is_null(r, i, c))
        bprintf(&b, "%.17g|", pj_result_double(r, i, c));
      else result_cell(&b, r, i, c);
    }
    rows_add(out, bdone(&b));
  }
}

static int test_accumulate(pj_engine *e, const mode_spec *modes, int nmodes, const forest *f) {
  if (f->n > 3000) return 0;   /* the brute force is quadratic */
  int failures = 0;
  for (int up = 0; up < 2; up++) {
    rows want = {0};
    brute_accumulate(f, up, &want);
    char pipe[400];
    snprintf(pipe, sizeof pipe,
             "FROM %s |> TREE ACCUMULATE %s AVG(v) AS av, ARG_MAX(v * 100000 + id, name) AS am, "
             "ARG_MIN(v * 100000 + id, name) AS an%s |> SELECT id, av, am, an%s",
             chance(50) ? "pf" : "f", up ? "UP" : "DOWN", up ? "" : ", FIRST(name) AS fn, LAST(v) AS lv",
             up ? "" : ", fn, lv");
    failures += check(e, modes, nmodes, "accumulate", f->n, pipe, &want, accumulate_rows);
    rows_free(&want);
  }
  return failures;
}

static void test_random_forests(void **state) {
  (void)state;
  g_rng = 0x7ee5eed;
  mode_spec modes[2];
  int nmodes = pick_modes(modes);
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  /* 9000 crosses an 8192-row batch */
  static const int sizes[] = {0, 1, 2, 3, 10, 57, 300, 2000, 9000};
  int failures = 0, runs = 0;
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
    for (int rep = 0; rep < (sizes[si] >= 2000 ? 1 : 5); rep++) {
      forest f;
      make_forest(e, &f, sizes[si]);
      failures += test_filters(e, modes, nmodes, f.n);
      failures += test_siblings(e, modes, nmodes, f.n);
      failures += test_folds(e, modes, nmodes, &f);
      failures += test_accumulate(e, modes, nmodes, &f);
      forest_free(&f);
      runs++;
    }
  pj_engine_close(e);
  if (failures) fail_msg("%d of the checks over %d forests disagreed", failures, runs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_forests),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
