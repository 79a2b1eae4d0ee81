/*
 * test_differential.c — random pipelines against the same question in
 * plain SQL.
 *
 * A fixed-seed generator makes tables (integers with NULLs, duplicates and
 * negatives; doubles; strings) loaded both as plain SQLite tables and as
 * PERFETTO TABLEs, and random pipelines of WHERE / EXTEND / SET /
 * AGGREGATE / ORDER BY / LIMIT together with the equivalent SQL (each
 * stage wraps the previous query as a subquery). Each pipeline runs on
 * every backend, reading either the columnar copy or the SQLite table, and
 * must give the rows SQLite gives: compared in order when ORDER BY orders
 * by every column, as sorted lists otherwise.
 *
 * test_exact_numbers leaves that ground on purpose, where exactness is the
 * point (see there).
 *
 * The generator stays inside the common ground of the two languages:
 * integers stay far from overflow (multiplication only by small
 * constants), doubles are multiples of 1/4 so sums are exact in any order
 * (an inexact double, e.g. an AVG, is never summed again), strings are
 * compared only with strings, and numbers printed as text are integers.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "api/engine.h"   /* pj__engine_set_batch_rows */
#include "codegen/cg.h"
#include "pipejit.h"
#include "rowdiff.h"

#define NPIPELINES 400

/* ---- tables ------------------------------------------------------------------- */

static const char *const g_words[] = {"a", "b", "ab", "B", "", "zeta", "Alpha", "a%b",
                                      "b ", "A_b", "a!b"};
#define NWORDS (int)(sizeof g_words / sizeof *g_words)

/* Loads src_<i> (SQLite) and pt_<i> (columnar) with n random rows. */
static void make_table(pj_engine *e, int i, int n) {
  sqlite3 *db = pj_engine_sqlite(e);
  char sql[256];
  snprintf(sql, sizeof sql, "CREATE TABLE src_%d(k INT, v INT, d REAL, s TEXT)", i);
  assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
  snprintf(sql, sizeof sql, "INSERT INTO src_%d VALUES (?, ?, ?, ?)", i);
  sqlite3_stmt *st = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
  sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
  for (int r = 0; r < n; r++) {
    if (chance(10)) sqlite3_bind_null(st, 1);
    else sqlite3_bind_int64(st, 1, rnd(12) - 4);          /* many duplicates */
    if (chance(15)) sqlite3_bind_null(st, 2);
    else sqlite3_bind_int64(st, 2, rnd(2001) - 1000);
    if (chance(15)) sqlite3_bind_null(st, 3);
    else sqlite3_bind_double(st, 3, (rnd(401) - 200) / 4.0);
    if (chance(12)) sqlite3_bind_null(st, 4);
    else sqlite3_bind_text(st, 4, g_words[rnd(NWORDS)], -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_reset(st);
  }
  sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
  sqlite3_finalize(st);
  snprintf(sql, sizeof sql,
           "CREATE PERFETTO TABLE pt_%d(k LONG, v LONG, d DOUBLE, s STRING) AS"
           " SELECT k, v, d, s FROM src_%d",
           i, i);
  if (pj_engine_exec(e, sql, NULL, NULL) != PJ_OK) fail_msg("%s: %s", sql, pj_engine_errmsg(e));
}

/* ---- the pipeline generator -------------------------------------------------- */

/* T_NULL: a column that holds only untyped NULLs (`EXTEND NULL AS c`): it
 * stands where any type may (issue 11: NULL's type unifies with all). */
typedef enum { T_INT, T_DBL, T_STR, T_BOOL, T_NULL } vtype;

typedef struct col {
  char name[16];
  vtype t;
  int exact;   /* doubles: a multiple of 1/4 (or 1/16): safe to sum */
} col;

typedef struct gen {
  int ncols;
  col cols[32];
  int fresh;   /* next name number */
} gen;

typedef struct expr {
  buf text;
  vtype t;
  int exact;
} expr;

static int pick_col(const gen *g, vtype t) {
  int idx[32], n = 0;
  for (int i = 0; i < g->ncols; i++)
    if (g->cols[i].t == t) idx[n++] = i;
  return n ? idx[rnd(n)] : -1;
}

static void gen_expr(const gen *g, vtype t, int depth, expr *out);
static void gen_pred(const gen *g, int depth, buf *out);
static void operand(const gen *g, vtype t, int depth, buf *out);

/* COLLATE and LIKE … ESCAPE appear only in predicates that nothing
 * aggregates or groups by (WHERE): there a collation could not reach a
 * MIN/MAX or GROUP BY, which refuse it. */
static int g_text_rules;

/* The tables subqueries read (make_table's src_<i>): the same text runs in
 * SQLite for both sides, and names only its own columns (k, v, d, s), so it
 * is never correlated (inside SQLite's reference query its columns hide
 * the outer ones). Five tables: 0, 1, 57, 3000 and 20,000 rows. */
#define NSUBQ_TABLES 5

/* A scalar subquery of type t (LANGUAGE.md §5): an aggregate (NULL over
 * no row), or the first of many rows in an order that fixes the value. */
static void gen_scalar_subq(vtype t, buf *out) {
  int tab = rnd(NSUBQ_TABLES), c = rnd(9) - 4;
  switch (t) {
  case T_INT:
    switch (rnd(3)) {
    case 0: bprintf(out, "(SELECT max(v) FROM src_%d WHERE k = %d)", tab, c); return;
    case 1: bprintf(out, "(SELECT count(*) FROM src_%d WHERE k > %d)", tab, c); return;
    default: bprintf(out, "(SELECT k FROM src_%d WHERE v > %d ORDER BY k DESC)", tab, c * 200); return;
    }
  case T_DBL:
    if (chance(50)) bprintf(out, "(SELECT sum(d) FROM src_%d WHERE k = %d)", tab, c);
    else bprintf(out, "(SELECT d FROM src_%d WHERE k = %d ORDER BY d)", tab, c);
    return;
  default:
    if (chance(50)) bprintf(out, "(SELECT min(s) FROM src_%d WHERE k = %d)", tab, c);
    else bprintf(out, "(SELECT s FROM src_%d WHERE v < %d ORDER BY s DESC)", tab, c * 200);
    return;
  }
}

/* x [NOT] IN (SELECT …) over a list that may hold NULLs and duplicates,
 * or [NOT] EXISTS (SELECT …). */
static void gen_subq_pred(const gen *g, int depth, buf *out) {
  int tab = rnd(NSUBQ_TABLES), c = rnd(9) - 4;
  const char *neg = chance(40) ? "NOT " : "";
  static const char *const lists[] = {"k FROM src_%d WHERE v > %d", "d FROM src_%d WHERE k < %d",
                                      "s FROM src_%d WHERE k = %d"};
  int r = rnd(4);
  if (r == 3) {
    bprintf(out, "%sEXISTS (SELECT 1 FROM src_%d WHERE k = %d)", neg, tab, c + 6);
    return;
  }
  /* integers meet reals by value */
  operand(g, r == 2 ? T_STR : chance(50) ? T_INT : T_DBL, depth - 1, out);
  bprintf(out, " %sIN (SELECT ", neg);
  bprintf(out, lists[r], tab, r == 0 ? c * 200 : c);
  bprintf(out, ")");
}

/* A leaf of type t: a column of that type when there is one, else a
 * literal; now and then an untyped NULL (a literal or a T_NULL column),
 * or a scalar subquery. */
static void gen_leaf(const gen *g, vtype t, expr *out) {
  int c = chance(75) ? pick_col(g, t) : -1;
  out->t = t;
  out->exact = 1;
  if (chance(3)) {
    gen_scalar_subq(t, &out->text);
    return;
  }
  if (chance(6)) {
    int n = pick_col(g, T_NULL);
    if (n >= 0 && chance(50)) bprintf(&out->text, "%s", g->cols[n].name);
    else bprintf(&out->text, "NULL");
    return;
  }
  if (c >= 0) {
    bprintf(&out->text, "%s", g->cols[c].name);
    out->exact = g->cols[c].exact;
    return;
  }
  switch (t) {
  case T_INT: bprintf(&out->text, "%d", rnd(11) - 5); break;
  case T_DBL: bprintf(&out->text, "%.2f", (rnd(41) - 20) / 4.0); break;
  default: bprintf(&out->text, "'%s'", g_words[rnd(NWORDS)]); break;
  }
}

static void sub(const gen *g, vtype t, int depth, expr *out, buf *into) {
  expr x = {0};
  gen_expr(g, t, depth, &x);
  bprintf(into, "%s", x.text.s);
  if (!x.exact) out->exact = 0;
  free(x.text.s);
}

static void gen_int(const gen *g, int depth, expr *o) {
  switch (depth <= 0 ? 0 : rnd(12)) {
  case 0: gen_leaf(g, T_INT, o); return;
  case 11:   /* §5's SQLite functions that give integers */
    switch (rnd(3)) {
    case 0: bprintf(&o->text, "sign("), sub(g, chance(50) ? T_INT : T_DBL, depth - 1, o, &o->text),
            bprintf(&o->text, ")"); return;
    case 1: bprintf(&o->text, "unicode("), sub(g, T_STR, depth - 1, o, &o->text), bprintf(&o->text, ")"); return;
    default: bprintf(&o->text, "length(printf('%%d|%%5.1f|%%-3s|%%q', "), sub(g, T_INT, depth - 1, o, &o->text),
             bprintf(&o->text, ", "), sub(g, T_INT, depth - 1, o, &o->text), bprintf(&o->text, ", "),
             sub(g, T_STR, depth - 1, o, &o->text), bprintf(&o->text, ", "),
             sub(g, T_STR, depth - 1, o, &o->text), bprintf(&o->text, "))"); return;
    }
  case 1: bprintf(&o->text, "("), sub(g, T_INT, depth - 1, o, &o->text), bprintf(&o->text, " + "),
          sub(g, T_INT, depth - 1, o, &o->text), bprintf(&o->text, ")"); return;
  case 2: bprintf(&o->text, "("), sub(g, T_INT, depth - 1, o, &o->text), bprintf(&o->text, " - "),
          sub(g, T_INT, depth - 1, o, &o->text), bprintf(&o->text, ")"); return;
  case 3: bprintf(&o->text, "("), sub(g, T_INT, depth - 1, o, &o->text),
          bprintf(&o->text, " * %d)", rnd(7) - 3); return;
  case 4: bprintf(&o->text, "("), sub(g, T_INT, depth - 1, o, &o->text), bprintf(&o->text, " %s ", chance(50) ? "/" : "%"),
          sub(g, T_INT, depth - 1, o, &o->text), bprintf(&o->text, ")"); return;
  case 5: bprintf(&o->text, "abs("), sub(g, T_INT, depth - 1, o, &o->text), bprintf(&o->text, ")"); return;
  case 6:
    if (chance(30)) {   /* untyped NULLs among the arguments */
      bprintf(&o->text, "coalesce(%s, ", chance(50) ? "ifnull(NULL, NULL)" : "NULL");
      sub(g, T_INT, depth - 1, o, &o->text);
      bprintf(&o->text, ")");
      return;
    }
    bprintf(&o->text, "coalesce("), sub(g, T_INT, depth - 1, o, &o->text),
          bprintf(&o->text, ", %d)", rnd(5)); return;
  case 7: bprintf(&o->text, "CASE WHEN "), gen_pred(g, depth - 1, &o->text), bprintf(&o->text, " THEN "),
          sub(g, T_INT, depth - 1, o, &o->text), bprintf(&o->text, " ELSE "),
          sub(g, T_INT, depth - 1, o, &o->text), bprintf(&o->text, " END"); return;
  case 8: bprintf(&o->text, "%s(", chance(50) ? "min" : "max"), sub(g, T_INT, depth - 1, o, &o->text),
          bprintf(&o->text, ", "), sub(g, T_INT, depth - 1, o, &o->text), bprintf(&o->text, ")"); return;
  case 9: bprintf(&o->text, "length("), sub(g, T_STR, depth - 1, o, &o->text), bprintf(&o->text, ")"); return;
  default: bprintf(&o->text, "(-("), sub(g, T_INT, depth - 1, o, &o->text), bprintf(&o->text, "))"); return;
  }
}

static void gen_dbl(const gen *g, int depth, expr *o) {
  switch (depth <= 0 ? 0 : rnd(8)) {
  case 0: gen_leaf(g, T_DBL, o); return;
  case 7:   /* round to a whole number stays exact; to a digit it need not */
    if (chance(50)) {
      bprintf(&o->text, "round("), sub(g, chance(70) ? T_DBL : T_INT, depth - 1, o, &o->text);
      bprintf(&o->text, ")");
    } else {
      bprintf(&o->text, "round("), sub(g, T_DBL, depth - 1, o, &o->text);
      bprintf(&o->text, ", %d)", rnd(3));
      o->exact = 0;
    }
    return;
  case 1: bprintf(&o->text, "("), sub(g, T_DBL, depth - 1, o, &o->text), bprintf(&o->text, " + "),
          sub(g, chance(50) ? T_DBL : T_INT, depth - 1, o, &o->text), bprintf(&o->text, ")"); return;
  case 2: bprintf(&o->text, "("), sub(g, T_DBL, depth - 1, o, &o->text), bprintf(&o->text, " - "),
          sub(g, T_DBL, depth - 1, o, &o->text), bprintf(&o->text, ")"); return;
  case 3: bprintf(&o->text, "("), sub(g, T_DBL, depth - 1, o, &o->text),
          bprintf(&o->text, " * %s)", chance(50) ? "0.5" : "-2"); return;
  case 4: bprintf(&o->text, "("), sub(g, T_DBL, depth - 1, o, &o->text), bprintf(&o->text, " / 4.0)"); return;
  case 5: bprintf(&o->text, "abs("), sub(g, T_DBL, depth - 1, o, &o->text), bprintf(&o->text, ")"); return;
  default: bprintf(&o->text, "coalesce("), sub(g, T_DBL, depth - 1, o, &o->text),
           bprintf(&o->text, ", 0.25)"); return;
  }
}

static void gen_str(const gen *g, int depth, expr *o) {
  switch (depth <= 0 ? 0 : rnd(7)) {
  case 0: gen_leaf(g, T_STR, o); return;
  case 6:   /* §5's SQLite functions that give text */
    switch (rnd(6)) {
    case 0: bprintf(&o->text, "replace("), sub(g, T_STR, depth - 1, o, &o->text),
            bprintf(&o->text, ", '%s', ", g_words[rnd(NWORDS)]), sub(g, T_STR, depth - 1, o, &o->text),
            bprintf(&o->text, ")"); return;
    case 1: bprintf(&o->text, "hex("), sub(g, chance(60) ? T_STR : T_INT, depth - 1, o, &o->text),
            bprintf(&o->text, ")"); return;
    case 2: bprintf(&o->text, "printf('%%s-%%05d-%%x', "), sub(g, T_STR, depth - 1, o, &o->text),
            bprintf(&o->text, ", "), sub(g, T_INT, depth - 1, o, &o->text), bprintf(&o->text, ", "),
            sub(g, T_INT, depth - 1, o, &o->text), bprintf(&o->text, ")"); return;
    case 3: {   /* typeof of a column: a computed value of mixed type is typed per row by SQLite */
      int c = rnd(g->ncols);
      if (g->cols[c].t == T_BOOL || g->cols[c].t == T_NULL || !g->cols[c].exact) c = 0;
      bprintf(&o->text, "typeof(%s)", g->cols[c].name);
      return;
    }
    case 4: bprintf(&o->text, "char(65 + abs("), sub(g, T_INT, depth - 1, o, &o->text),
            bprintf(&o->text, ") %% 26, 233)"); return;
    default: bprintf(&o->text, "%s(", chance(50) ? "ltrim" : "rtrim"), sub(g, T_STR, depth - 1, o, &o->text),
             bprintf(&o->text, ", 'ab ')"); return;
    }
  case 1: sub(g, T_STR, depth - 1, o, &o->text), bprintf(&o->text, " || "),
          sub(g, chance(50) ? T_STR : T_INT, depth - 1, o, &o->text); return;
  case 2: bprintf(&o->text, "%s(", chance(50) ? "upper" : "lower"), sub(g, T_STR, depth - 1, o, &o->text),
          bprintf(&o->text, ")"); return;
  case 3: bprintf(&o->text, "substr("), sub(g, T_STR, depth - 1, o, &o->text),
          bprintf(&o->text, ", %d, %d)", rnd(4) - 1, rnd(3)); return;
  case 4:
    if (chance(40)) {   /* a CASE of NULLs is an untyped NULL */
      bprintf(&o->text, "coalesce("), sub(g, T_STR, depth - 1, o, &o->text);
      bprintf(&o->text, ", CASE WHEN "), gen_pred(g, depth - 1, &o->text);
      bprintf(&o->text, " THEN NULL END)");
      return;
    }
    bprintf(&o->text, "coalesce("), sub(g, T_STR, depth - 1, o, &o->text),
          bprintf(&o->text, ", 'none')"); return;
  default: bprintf(&o->text, "CASE WHEN "), gen_pred(g, depth - 1, &o->text), bprintf(&o->text, " THEN "),
           sub(g, T_STR, depth - 1, o, &o->text), bprintf(&o->text, " ELSE "),
           sub(g, T_STR, depth - 1, o, &o->text), bprintf(&o->text, " END"); return;
  }
}

static void gen_expr(const gen *g, vtype t, int depth, expr *out) {
  out->t = t;
  out->exact = 1;
  if (t == T_INT) gen_int(g, depth, out);
  else if (t == T_DBL) gen_dbl(g, depth, out);
  else gen_str(g, depth, out);
}

static const char *cmp_op(void) {
  static const char *const ops[] = {"=", "!=", "<", "<=", ">", ">=", "IS", "IS NOT"};
  return ops[rnd(8)];
}

static void operand(const gen *g, vtype t, int depth, buf *out) {
  expr x = {0};
  gen_expr(g, t, depth, &x);
  bprintf(out, "%s", x.text.s);
  free(x.text.s);
}

/* COLLATE, LIKE … ESCAPE and x IN () (only where g_text_rules allows). */
static void gen_text_pred(const gen *g, int depth, buf *out) {
  static const char *const colls[] = {"NOCASE", "RTRIM", "BINARY", "nocase"};
  const char *cl = colls[rnd(4)];
  switch (rnd(6)) {
  case 0: operand(g, T_STR, depth - 1, out), bprintf(out, " COLLATE %s %s ", cl, cmp_op()),
          operand(g, T_STR, depth - 1, out); return;
  case 1: operand(g, T_STR, depth - 1, out), bprintf(out, " %s ", cmp_op()),
          operand(g, T_STR, depth - 1, out), bprintf(out, " COLLATE %s", cl); return;
  case 2: operand(g, T_STR, depth - 1, out),
          bprintf(out, " COLLATE %s %sIN ('a', 'B', 'b', '')", cl, chance(30) ? "NOT " : ""); return;
  case 3: operand(g, T_STR, depth - 1, out),
          bprintf(out, " COLLATE %s BETWEEN 'a' AND 'b'", cl); return;
  case 4: {
    static const char *const pats[][2] = {{"a!%%", "!"}, {"%%!_%%", "!"}, {"a__", "_"},
                                          {"a%%%%b", "%%"}, {"A!!b", "!"}, {"%%b", "x"},
                                          {"a!", "!"}, {"aa%%", "a"}};
    int k = rnd(8);
    operand(g, T_STR, depth - 1, out);
    bprintf(out, " %sLIKE '", chance(30) ? "NOT " : "");
    bprintf(out, pats[k][0]);
    bprintf(out, "' ESCAPE '");
    bprintf(out, pats[k][1]);
    bprintf(out, "'");
    return;
  }
  default: operand(g, chance(50) ? T_STR : T_INT, depth - 1, out),
           bprintf(out, " %sIN ()", chance(50) ? "NOT " : ""); return;
  }
}

static void gen_pred(const gen *g, int depth, buf *out) {
  vtype nt = chance(50) ? T_INT : T_DBL;
  if (chance(8)) {
    gen_subq_pred(g, depth, out);
    return;
  }
  if (g_text_rules && chance(15)) {
    gen_text_pred(g, depth, out);
    return;
  }
  switch (depth <= 0 ? rnd(3) : rnd(10)) {
  case 0: operand(g, nt, depth - 1, out), bprintf(out, " %s ", cmp_op()),
          operand(g, chance(70) ? nt : T_INT, depth - 1, out); return;
  case 1: operand(g, T_STR, depth - 1, out), bprintf(out, " %s ", cmp_op()),
          operand(g, T_STR, depth - 1, out); return;
  case 2:
    if (chance(20)) {   /* an untyped NULL compared with a string */
      operand(g, T_STR, 0, out), bprintf(out, " %s ", cmp_op());
      int n = pick_col(g, T_NULL);
      bprintf(out, "%s", n >= 0 ? g->cols[n].name : "NULL");
      return;
    }
    operand(g, rnd(3) == 0 ? T_STR : nt, 0, out),
          bprintf(out, chance(50) ? " IS NULL" : " IS NOT NULL"); return;
  case 3: bprintf(out, "NOT ("), gen_pred(g, depth - 1, out), bprintf(out, ")"); return;
  case 4: bprintf(out, "("), gen_pred(g, depth - 1, out), bprintf(out, " AND "),
          gen_pred(g, depth - 1, out), bprintf(out, ")"); return;
  case 5: bprintf(out, "("), gen_pred(g, depth - 1, out), bprintf(out, " OR "),
          gen_pred(g, depth - 1, out), bprintf(out, ")"); return;
  case 6: operand(g, T_INT, depth - 1, out), bprintf(out, "%s IN (%d, %d, %d)", chance(30) ? " NOT" : "",
          rnd(9) - 4, rnd(9) - 4, rnd(2001) - 1000); return;
  case 7: operand(g, T_STR, depth - 1, out), bprintf(out, " %sLIKE '%s'", chance(30) ? "NOT " : "",
          (const char *[]){"a%", "%b", "_", "%", "A_"}[rnd(5)]); return;
  case 8: operand(g, nt, depth - 1, out), bprintf(out, " %sBETWEEN %d AND %d", chance(30) ? "NOT " : "",
          rnd(11) - 8, rnd(11) - 2); return;
  default: operand(g, T_STR, depth - 1, out), bprintf(out, " IN ('a', 'B', '')"); return;
  }
}

/* The generated pair. */
typedef struct pair {
  char *pipe;
  char *sql;
  int ordered;   /* ORDER BY orders by every column */
} pair;

static void add_col(gen *g, const char *prefix, vtype t, int exact) {
  col *c = &g->cols[g->ncols++];
  snprintf(c->name, sizeof c->name, "%s%d", prefix, g->fresh++);
  c->t = t;
  c->exact = exact;
}

static vtype rnd_type(void) {
  int r = rnd(10);
  return r < 5 ? T_INT : r < 8 ? T_DBL : T_STR;
}

static pair gen_pair(int table, int from_sqlite) {
  gen g = {.ncols = 4, .cols = {{"k", T_INT, 1}, {"v", T_INT, 1}, {"d", T_DBL, 1}, {"s", T_STR, 1}}};
  buf pipe = {0}, sql = {0};
  if (from_sqlite) bprintf(&pipe, "FROM src_%d", table);
  else bprintf(&pipe, "FROM pt_%d", table);
  bprintf(&sql, "SELECT k, v, d, s FROM src_%d", table);
  int nstages = rnd(5) + 1;
  int in_order = 1;   /* both sides see the rows in the same order (GROUP_CONCAT) */
  for (int st = 0; st < nstages; st++) {
    buf next = {0};
    int kind = rnd(10);
    if (kind < 3) {   /* WHERE */
      buf p = {0};
      g_text_rules = 1;
      gen_pred(&g, 2, &p);
      g_text_rules = 0;
      bprintf(&pipe, " |> WHERE %s", p.s);
      bprintf(&next, "SELECT * FROM (%s) WHERE %s", sql.s, p.s);
      free(p.s);
    } else if (kind < 5 && g.ncols < 28) {   /* EXTEND */
      int n = rnd(2) + 1;
      vtype nt[2];
      int nexact[2];
      bprintf(&pipe, " |> EXTEND ");
      bprintf(&next, "SELECT *");
      for (int i = 0; i < n; i++) {
        expr x = {0};
        int boolean = chance(10);
        if (chance(5)) {   /* an untyped NULL column */
          bprintf(&x.text, "NULL");
          x.t = T_NULL;
          x.exact = 1;
        } else if (boolean) {
          gen_pred(&g, 1, &x.text);
          x.t = T_BOOL;
          x.exact = 1;
        } else {
          gen_expr(&g, rnd_type(), 2, &x);
        }
        char name[16];
        snprintf(name, sizeof name, "c%d", g.fresh + i);
        bprintf(&pipe, "%s%s AS %s", i ? ", " : "", x.text.s, name);
        bprintf(&next, ", %s AS %s", x.text.s, name);
        free(x.text.s);
        nt[i] = x.t;
        nexact[i] = x.exact;
      }
      /* Items of one stage see the row before it: the new columns join
       * the row only now. */
      for (int i = 0; i < n; i++) add_col(&g, "c", nt[i], nexact[i]);
      bprintf(&next, " FROM (%s)", sql.s);
    } else if (kind < 7) {   /* SET */
      int c = rnd(g.ncols);
      if (g.cols[c].t == T_BOOL || g.cols[c].t == T_NULL) {
        free(next.s);
        continue;
      }
      expr x = {0};
      gen_expr(&g, g.cols[c].t, 2, &x);
      bprintf(&pipe, " |> SET %s = %s", g.cols[c].name, x.text.s);
      bprintf(&next, "SELECT ");
      for (int i = 0; i < g.ncols; i++) {
        if (i) bprintf(&next, ", ");
        if (i == c) bprintf(&next, "%s AS %s", x.text.s, g.cols[i].name);
        else bprintf(&next, "%s", g.cols[i].name);
      }
      bprintf(&next, " FROM (%s)", sql.s);
      g.cols[c].exact = x.exact;
      free(x.text.s);
    } else {   /* AGGREGATE */
      gen out = {.fresh = g.fresh};
      int nkeys = rnd(3);
      int keys[2], nk = 0;
      for (int i = 0; i < nkeys; i++) {
        int c = rnd(g.ncols);
        if (g.cols[c].t == T_DBL) continue;   /* -0.0 and 0.0 print differently */
        int dup = 0;
        for (int j = 0; j < nk; j++) dup |= keys[j] == c;
        if (!dup) keys[nk++] = c;
      }
      for (int i = 0; i < nk; i++) out.cols[out.ncols++] = g.cols[keys[i]];
      buf aggs = {0}, saggs = {0};
      int naggs = rnd(3) + 1;
      for (int i = 0; i < naggs; i++) {
        int c = rnd(g.ncols);
        const col *in = &g.cols[c];
        const char *f;
        vtype t = T_INT;
        int exact = 1;
        char name[16];
        snprintf(name, sizeof name, "a%d", out.fresh);
        int r = rnd(9);
        if (r >= 7 && in->t != T_BOOL && in->t != T_NULL) {
          /* §8's more aggregates; SQLite's COUNT(DISTINCT) and group_concat,
           * reference functions (ref_*, below) for the rest */
          int o = rnd(g.ncols);
          const col *oc = &g.cols[o];
          int k = rnd(6);
          const char *sep = (const char *[]){"", ", '-'", ", ''", ", s"}[rnd(4)];
          if (!strcmp(sep, ", s") && pick_col(&g, T_STR) < 0) sep = "";
          /* GROUP_CONCAT's order and ARG_MAX's ties depend on the input order */
          if (k == 0 || (k <= 3 && !in_order) || (k >= 4 && in->t == T_STR)) {
            bprintf(&aggs, "%sCOUNT(DISTINCT %s) AS %s", i ? ", " : "", in->name, name);
            bprintf(&saggs, "%sCOUNT(DISTINCT %s) AS %s", i ? ", " : "", in->name, name);
          } else if (k == 1) {
            bprintf(&aggs, "%sGROUP_CONCAT(%s%s) AS %s", i ? ", " : "", in->name, sep, name);
            bprintf(&saggs, "%sgroup_concat(%s%s) AS %s", i ? ", " : "", in->name, sep, name);
            t = T_STR;
          } else if (k <= 3 && oc->t != T_BOOL && oc->t != T_NULL && oc->exact) {
            const char *fn = k == 2 ? "ARG_MAX" : "ARG_MIN";
            bprintf(&aggs, "%s%s(%s, %s) AS %s", i ? ", " : "", fn, oc->name, in->name, name);
            bprintf(&saggs, "%sref_%s(%s, %s) AS %s", i ? ", " : "", k == 2 ? "arg_max" : "arg_min",
                    oc->name, in->name, name);
            t = in->t, exact = in->exact;
          } else if (k >= 4) {
            int pc = rnd(5) == 0 ? 50 : rnd(101);
            if (k == 4) {
              bprintf(&aggs, "%sMEDIAN(%s) AS %s", i ? ", " : "", in->name, name);
              bprintf(&saggs, "%sref_percentile(%s, 50) AS %s", i ? ", " : "", in->name, name);
            } else {
              bprintf(&aggs, "%sPERCENTILE(%s, %d) AS %s", i ? ", " : "", in->name, pc, name);
              bprintf(&saggs, "%sref_percentile(%s, %d) AS %s", i ? ", " : "", in->name, pc, name);
            }
            t = T_DBL, exact = 0;
          } else {
            bprintf(&aggs, "%sCOUNT(DISTINCT %s) AS %s", i ? ", " : "", in->name, name);
            bprintf(&saggs, "%sCOUNT(DISTINCT %s) AS %s", i ? ", " : "", in->name, name);
          }
          add_col(&out, "a", t, exact);
          continue;
        }
        if (r >= 7) r = 0;
        if (r == 0 || in->t == T_BOOL) f = "COUNT(*)";
        else if (r == 1) f = "COUNT";
        else if (r == 2 && in->t != T_STR && in->exact) f = "SUM", t = in->t;
        else if (r == 3 && in->t != T_STR && in->exact) f = "AVG", t = T_DBL, exact = 0;
        else f = chance(50) ? "MIN" : "MAX", t = in->t, exact = in->exact;
        if (!strcmp(f, "COUNT(*)")) {
          bprintf(&aggs, "%sCOUNT(*) AS %s", i ? ", " : "", name);
          bprintf(&saggs, "%sCOUNT(*) AS %s", i ? ", " : "", name);
        } else {
          bprintf(&aggs, "%s%s(%s) AS %s", i ? ", " : "", f, in->name, name);
          bprintf(&saggs, "%s%s(%s) AS %s", i ? ", " : "", f, in->name, name);
        }
        add_col(&out, "a", t, exact);
      }
      bprintf(&pipe, " |> AGGREGATE %s", aggs.s);
      bprintf(&next, "SELECT ");
      for (int i = 0; i < nk; i++) bprintf(&next, "%s, ", g.cols[keys[i]].name);
      bprintf(&next, "%s FROM (%s)", saggs.s, sql.s);
      free(saggs.s);
      in_order = 0;   /* SQLite's groups come out sorted, ours first-seen */
      if (nk) {
        bprintf(&pipe, " GROUP BY ");
        bprintf(&next, " GROUP BY ");
        for (int i = 0; i < nk; i++) {
          bprintf(&pipe, "%s%s", i ? ", " : "", g.cols[keys[i]].name);
          bprintf(&next, "%s%s", i ? ", " : "", g.cols[keys[i]].name);
        }
      }
      free(aggs.s);
      g = out;
    }
    free(sql.s);
    sql = next;
  }
  int ordered = chance(50);
  if (ordered) {
    /* Every column, in a random order, so the order is total. */
    int perm[32];
    for (int i = 0; i < g.ncols; i++) perm[i] = i;
    for (int i = g.ncols - 1; i > 0; i--) {
      int j = rnd(i + 1), t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    buf keys = {0};
    int collated[32], ncoll = 0;
    for (int i = 0; i < g.ncols; i++) {
      int desc = chance(50), nulls = rnd(3);
      /* A collated string key ties 'a' with 'A': the same column, plain,
       * at the end keeps the order total. */
      const char *coll = "";
      if (g.cols[perm[i]].t == T_STR && chance(30)) {
        coll = chance(50) ? " COLLATE NOCASE" : " COLLATE RTRIM";
        collated[ncoll++] = perm[i];
      }
      bprintf(&keys, "%s%s%s%s%s", i ? ", " : "", g.cols[perm[i]].name, coll, desc ? " DESC" : "",
              nulls == 1 ? " NULLS FIRST" : nulls == 2 ? " NULLS LAST" : "");
    }
    for (int i = 0; i < ncoll; i++) bprintf(&keys, ", %s", g.cols[collated[i]].name);
    bprintf(&pipe, " |> ORDER BY %s", keys.s);
    buf next = {0};
    bprintf(&next, "SELECT * FROM (%s) ORDER BY %s", sql.s, keys.s);
    free(keys.s);
    if (chance(60)) {
      int n = rnd(20), off = chance(50) ? rnd(10) : 0;
      if (off) {
        bprintf(&pipe, " |> LIMIT %d OFFSET %d", n, off);
        bprintf(&next, " LIMIT %d OFFSET %d", n, off);
      } else {
        bprintf(&pipe, " |> LIMIT %d", n);
        bprintf(&next, " LIMIT %d", n);
      }
    }
    free(sql.s);
    sql = next;
  }
  return (pair){bdone(&pipe), bdone(&sql), ordered};
}

/* ---- comparing ------------------------------------------------------------------ */

/* ---- reference aggregates --------------------------------------------------------
 *
 * SQLite has no ARG_MAX / ARG_MIN, and its percentile() is an extension
 * this SQLite is not built with: ref_arg_max/ref_arg_min follow §8's words
 * (the value of the first row with the largest / smallest non-NULL
 * ordering), ref_percentile is ext/misc/percentile.c's algorithm (values
 * collected as doubles, qsort, interpolation from P + 1.0). */

typedef struct ref_arg {
  sqlite3_value *best, *val;
} ref_arg;

static int ref_cmp(sqlite3_value *a, sqlite3_value *b) {
  int ta = sqlite3_value_type(a), tb = sqlite3_value_type(b);
  if (ta == SQLITE_TEXT && tb == SQLITE_TEXT) {
    int na = sqlite3_value_bytes(a), nb = sqlite3_value_bytes(b);
    int c = memcmp(sqlite3_value_text(a), sqlite3_value_text(b), (size_t)(na < nb ? na : nb));
    return c ? c : na - nb;
  }
  if (ta == SQLITE_INTEGER && tb == SQLITE_INTEGER) {
    sqlite3_int64 x = sqlite3_value_int64(a), y = sqlite3_value_int64(b);
    return x < y ? -1 : x > y;
  }
  double x = sqlite3_value_double(a), y = sqlite3_value_double(b);
  return x < y ? -1 : x > y;
}

static void ref_arg_step(sqlite3_context *cx, int argc, sqlite3_value **argv) {
  (void)argc;
  ref_arg *s = sqlite3_aggregate_context(cx, sizeof *s);
  if (!s || sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
  int max = sqlite3_user_data(cx) != NULL;
  if (s->best) {
    int c = ref_cmp(argv[0], s->best);
    if (max ? c <= 0 : c >= 0) return;
  }
  sqlite3_value_free(s->best);
  sqlite3_value_free(s->val);
  s->best = sqlite3_value_dup(argv[0]);
  s->val = sqlite3_value_dup(argv[1]);
}

static void ref_arg_final(sqlite3_context *cx) {
  ref_arg *s = sqlite3_aggregate_context(cx, 0);
  if (!s || !s->best) return;
  sqlite3_result_value(cx, s->val);
  sqlite3_value_free(s->best);
  sqlite3_value_free(s->val);
}

typedef struct ref_pct {
  double rpct;
  double *a;
  unsigned n, cap;
} ref_pct;

static int ref_dbl_cmp(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return a == b ? 0 : a < b ? -1 : 1;
}

static void ref_pct_step(sqlite3_context *cx, int argc, sqlite3_value **argv) {
  (void)argc;
  ref_pct *p = sqlite3_aggregate_context(cx, sizeof *p);
  if (!p) return;
  if (p->rpct == 0.0) p->rpct = sqlite3_value_double(argv[1]) + 1.0;
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
  if (p->n == p->cap) {
    p->cap = p->cap ? p->cap * 2 : 16;
    p->a = realloc(p->a, sizeof *p->a * p->cap);
  }
  p->a[p->n++] = sqlite3_value_double(argv[0]);
}

static void ref_pct_final(sqlite3_context *cx) {
  ref_pct *p = sqlite3_aggregate_context(cx, 0);
  if (!p || !p->a) return;
  qsort(p->a, p->n, sizeof(double), ref_dbl_cmp);
  double ix = (p->rpct - 1.0) * (p->n - 1) * 0.01;
  unsigned i1 = (unsigned)ix;
  unsigned i2 = ix == (double)i1 || i1 == p->n - 1 ? i1 : i1 + 1;
  double v1 = p->a[i1], v2 = p->a[i2];
  sqlite3_result_double(cx, v1 + (v2 - v1) * (ix - i1));
  free(p->a);
}

static void add_ref_functions(sqlite3 *db) {
  static int one = 1;
  assert_int_equal(sqlite3_create_function(db, "ref_arg_max", 2, SQLITE_UTF8, &one, NULL,
                                           ref_arg_step, ref_arg_final), SQLITE_OK);
  assert_int_equal(sqlite3_create_function(db, "ref_arg_min", 2, SQLITE_UTF8, NULL, NULL,
                                           ref_arg_step, ref_arg_final), SQLITE_OK);
  assert_int_equal(sqlite3_create_function(db, "ref_percentile", 2, SQLITE_UTF8, NULL, NULL,
                                           ref_pct_step, ref_pct_final), SQLITE_OK);
}

/* ---- the test ------------------------------------------------------------------- */

typedef struct mode_spec { const char *name; pj_mode mode; } mode_spec;

/* Threads and batch size (PJ_TEST_THREADS, PJ_TEST_BATCH_ROWS: small
 * morsels, so the tables here run in parallel). */
static void tune_engine(pj_engine *e) {
  const char *t = getenv("PJ_TEST_THREADS"), *r = getenv("PJ_TEST_BATCH_ROWS");
  if (t && *t) pj_engine_set_threads(e, atoi(t));
  if (r && *r) pj__engine_set_batch_rows(e, atoi(r));
}

static int pick_modes(mode_spec *m) {
  const char *env = getenv("PJ_TEST_MODES");
  int n = 0;
  if (!env || strstr(env, "interp")) m[n++] = (mode_spec){"interp", PJ_MODE_INTERP};
  if (!env || strstr(env, "jit")) {
    rt_err err = {.offset = -1};
    cg_jit *j = cg_jit_new(&err);
    if (j) {
      cg_jit_free(j);
      m[n++] = (mode_spec){"jit", PJ_MODE_JIT};
    } else {
      fprintf(stderr, "test_differential: the JIT is not available (%s)\n", err.msg);
    }
  }
  return n;
}

/* Runs pipe in one mode and compares its rows with want (kept intact).
 * Returns NULL when they agree, else a description (malloc'd). */
static char *run_and_diff(pj_engine *e, pj_mode mode, const char *pipe, const rows *want,
                          int ordered) {
  pj_engine_set_mode(e, mode);
  pj_query *h = NULL;
  pj_result *r = NULL;
  char *why = NULL;
  if (pj_query_compile(e, pipe, &h) != PJ_OK || pj_query_run(h, &r) != PJ_OK) {
    buf b = {0};
    bprintf(&b, "pipejit error: %s (at %d:%d)\n", pj_engine_errmsg(e), pj_engine_errline(e),
            pj_engine_errcol(e));
    why = b.s;
  } else {
    rows got = {0};
    result_rows(r, &got);
    rows want_copy = *want;
    want_copy.r = malloc(sizeof *want->r * (size_t)(want->n + 1));
    if (want->n) memcpy(want_copy.r, want->r, sizeof *want->r * (size_t)want->n);
    why = diff_rows(&want_copy, &got, ordered, 1);
    free(want_copy.r);
    rows_free(&got);
  }
  pj_result_free(r);
  pj_query_free(h);
  return why;
}

/* Runs pipe in every mode and compares its rows with SQLite's for sql
 * (ordered or as sorted lists); prints each disagreement as "<what> <n>
 * [mode]: …". Returns how many modes disagreed; *nrows (may be NULL)
 * gets SQLite's row count. */
static int compare_with_sqlite(pj_engine *e, const mode_spec *modes, int nmodes, const char *what,
                               int n, const char *pipe, const char *sql, int ordered, int *nrows) {
  rows want = {0};
  sql_rows(pj_engine_sqlite(e), sql, &want);
  if (nrows) *nrows = want.n;
  if (getenv("PJ_DIFF_VERBOSE")) fprintf(stderr, "%d: %s\n", want.n, pipe);
  int failures = 0;
  for (int m = 0; m < nmodes; m++) {
    char *why = run_and_diff(e, modes[m].mode, pipe, &want, ordered);
    if (why) {
      print_error("%s %d [%s]:\n  %s\nsql:\n  %s\n%s\n", what, n, modes[m].name, pipe, sql, why);
      failures++;
      free(why);
    }
  }
  rows_free(&want);
  return failures;
}

static void test_random_pipelines(void **state) {
  static const int sizes[] = {0, 1, 57, 3000, 20000};
  const int ntables = (int)(sizeof sizes / sizeof *sizes);
  mode_spec modes[2];
  int nmodes = pick_modes(modes);
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  tune_engine(e);
  pj_engine_set_opt_level(e, 1);   /* hundreds of small compiles */
  g_rng = 0x5EED1234ull;
  for (int i = 0; i < ntables; i++) make_table(e, i, sizes[i]);
  add_ref_functions(pj_engine_sqlite(e));

  int failures = 0, compared = 0;
  /* PJ_DIFF_SEED explores other pipelines; the default is fixed. */
  const char *seed = getenv("PJ_DIFF_SEED");
  g_rng = seed ? strtoull(seed, NULL, 0) : 0xD1FFull;
  int nonempty = 0;
  for (int p = 0; p < NPIPELINES && failures < 5; p++) {
    int table = rnd(ntables);
    pair q = gen_pair(table, p % 4 == 3);
    int nrows;
    failures += compare_with_sqlite(e, modes, nmodes, "pipeline", p, q.pipe, q.sql, q.ordered, &nrows);
    nonempty += nrows > 0;
    compared += nmodes;
    free(q.pipe);
    free(q.sql);
  }
  pj_engine_close(e);
  if (failures) fail_msg("%d pipelines disagree with SQLite", failures);
  assert_true(compared >= NPIPELINES);
  /* The generator must not degenerate into empty results. */
  assert_true(nonempty > NPIPELINES / 2);
}

/* ---- exact numbers ---------------------------------------------------------------
 *
 * Where a comparison through doubles goes wrong (issue 11): integers and
 * doubles near 2^53 and 2^63 compared every way SQLite compares them
 * (=, <, IN, BETWEEN, IS [NOT] DISTINCT FROM, CASE x WHEN, nullif), checked
 * arithmetic whose overflow happens only beside a NULL operand (column n is
 * all NULL: SQLite gives NULL, and so must both backends), and doubles
 * overflowing to infinities and NaN (NULL), summed and averaged per group
 * and sorted with NULLS FIRST/LAST. The table's values come from pools of
 * exactly those neighbours. */

static const char *const g_xints[] = {
    "9007199254740991", "9007199254740992", "9007199254740993", "9007199254740994",
    "9223372036854775807", "9223372036854775806", "-9223372036854775808", "-9223372036854775807",
    "9223372036854774784", "9223372036854774785", "-9223372036854774784", "0", "1", "-1", "3"};
static const char *const g_xdbls[] = {
    "9007199254740992.0", "9007199254740994.0", "9007199254740990.0", "9223372036854775808.0",
    "-9223372036854775808.0", "9223372036854774784.0", "-9223372036854774784.0", "1e999", "-1e999",
    "0.5", "-0.5", "1.0", "3.0", "0.0", "1.8e19"};
#define NXINTS (int)(sizeof g_xints / sizeof *g_xints)
#define NXDBLS (int)(sizeof g_xdbls / sizeof *g_xdbls)

static void make_exact_table(pj_engine *e) {
  buf b = {0};
  bprintf(&b, "CREATE TABLE nx(g INT, n INT, i INT, j INT, d REAL, f REAL);"
              "INSERT INTO nx VALUES ");
  for (int r = 0; r < 400; r++) {
    bprintf(&b, "%s(%d, NULL, %s, %s, %s, %s)", r ? ", " : "", rnd(4),
            chance(8) ? "NULL" : g_xints[rnd(NXINTS)], chance(8) ? "NULL" : g_xints[rnd(NXINTS)],
            chance(8) ? "NULL" : g_xdbls[rnd(NXDBLS)], chance(8) ? "NULL" : g_xdbls[rnd(NXDBLS)]);
  }
  bprintf(&b, "; CREATE PERFETTO TABLE px(g LONG, n LONG, i LONG, j LONG, d DOUBLE, f DOUBLE) AS"
              " SELECT g, n, i, j, d, f FROM nx");
  if (pj_engine_exec(e, b.s, NULL, NULL) != PJ_OK) fail_msg("%s", pj_engine_errmsg(e));
  free(b.s);
}

/* An integer or a double operand: a column or a literal from the pools. */
static const char *x_num(int dbl) {
  static const char *const icols[] = {"i", "j"}, *const dcols[] = {"d", "f"};
  if (chance(60)) return dbl ? dcols[rnd(2)] : icols[rnd(2)];
  return dbl ? g_xdbls[rnd(NXDBLS)] : g_xints[rnd(NXINTS)];
}

/* A predicate that compares an integer with a double somewhere. */
static void x_pred(buf *b) {
  int swap = chance(50);
  const char *a = x_num(swap), *c = x_num(!swap);
  switch (rnd(8)) {
  case 0: bprintf(b, "%s %s %s", a, cmp_op(), c); break;
  case 1: bprintf(b, "%s %sIN (%s, %s, %s)", a, chance(30) ? "NOT " : "", c, x_num(rnd(2)), x_num(rnd(2))); break;
  case 2: bprintf(b, "%s %sBETWEEN %s AND %s", a, chance(30) ? "NOT " : "", c, x_num(rnd(2))); break;
  case 3: bprintf(b, "%s IS %sDISTINCT FROM %s", a, chance(50) ? "NOT " : "", c); break;
  case 4: bprintf(b, "(CASE %s WHEN %s THEN 1 WHEN %s THEN 2 ELSE 0 END) = %d", a, c, x_num(rnd(2)), rnd(3)); break;
  case 5: bprintf(b, "nullif(%s, %s) IS NULL", a, c); break;
  case 6: bprintf(b, "(%s %s %s) = (%s %s %s)", a, cmp_op(), c, x_num(rnd(2)), cmp_op(), x_num(rnd(2))); break;
  default: bprintf(b, "%s %s %s + 0.5", a, cmp_op(), c); break;
  }
}

/* A value: checked arithmetic that would overflow but for the NULL n, or
 * a double that may become an infinity or NaN. */
static void x_value(buf *b, int *dbl) {
  static const char *const nulls[] = {"n + i + 1", "(n + i) * 2", "-(n - i - 2)", "abs(n - i - 2)",
                                      "n * i * j", "(i + n) / -1", "n - j - j", "abs(j + n) + i * n"};
  static const char *const dbls[] = {"d * 1e300", "d * 1e300 - f * 1e300", "d + f", "d * f",
                                     "(d * 1e300) / (f * 1e300)", "d - f * 1e300", "abs(d) * -1e308",
                                     "coalesce(d * 1e300, f)"};
  *dbl = chance(60);
  bprintf(b, "%s", *dbl ? dbls[rnd(8)] : nulls[rnd(8)]);
}

static void test_exact_numbers(void **state) {
  (void)state;
  mode_spec modes[2];
  int nmodes = pick_modes(modes);
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  tune_engine(e);
  pj_engine_set_opt_level(e, 1);
  g_rng = 0xE8AC7ull;
  make_exact_table(e);
  const char *seed = getenv("PJ_DIFF_SEED");
  g_rng = seed ? strtoull(seed, NULL, 0) : 0x1EEEull;
  int failures = 0, nonempty = 0;
  const int npipes = 250;
  for (int p = 0; p < npipes && failures < 5; p++) {
    buf pipe = {0}, sql = {0}, pr1 = {0}, pr2 = {0}, v1 = {0}, v2 = {0};
    int d1, d2;
    x_pred(&pr1);
    x_pred(&pr2);
    x_value(&v1, &d1);
    x_value(&v2, &d2);
    bprintf(&pipe, "FROM %s |> EXTEND %s AS p, %s AS x, %s AS y", p % 3 == 2 ? "nx" : "px", pr1.s, v1.s, v2.s);
    bprintf(&sql, "SELECT *, %s AS p, %s AS x, %s AS y FROM nx", pr1.s, v1.s, v2.s);
    if (chance(60)) {
      bprintf(&pipe, " |> WHERE %s", pr2.s);
      buf next = {0};
      bprintf(&next, "SELECT * FROM (%s) WHERE %s", sql.s, pr2.s);
      free(sql.s);
      sql = next;
    }
    const char *cols = "g, n, i, j, d, f, p, x, y";
    if (chance(40)) {
      /* Sums of infinities are NaN (NULL) only where both signs meet;
       * the other aggregates of an integer x are exact. */
      const char *agg = d1 ? "SUM(x) AS sx, AVG(x) AS ax, MIN(x) AS mn, MAX(x) AS mx, COUNT(x) AS c"
                           : "COUNT(x) AS c, MIN(x) AS mn, MAX(x) AS mx";
      const char *sagg = d1 ? "sum(x) AS sx, avg(x) AS ax, min(x) AS mn, max(x) AS mx, count(x) AS c"
                            : "count(x) AS c, min(x) AS mn, max(x) AS mx";
      const char *key = chance(50) ? "g" : "p";
      bprintf(&pipe, " |> AGGREGATE %s GROUP BY %s", agg, key);
      buf next = {0};
      bprintf(&next, "SELECT %s, %s FROM (%s) GROUP BY %s", key, sagg, sql.s, key);
      free(sql.s);
      sql = next;
      cols = d1 ? "KEY, sx, ax, mn, mx, c" : "KEY, c, mn, mx";
    }
    int ordered = chance(50);
    if (ordered) {
      /* Every column, NULLs placed at random: the order is total. */
      buf keys = {0};
      char tmp[64];
      const char *c = cols;
      while (*c) {
        size_t k = strcspn(c, ",");
        snprintf(tmp, sizeof tmp, "%.*s", (int)k, c);
        const char *name = strcmp(tmp, "KEY") ? tmp : (strstr(pipe.s, "GROUP BY g") ? "g" : "p");
        int nulls = rnd(3);
        bprintf(&keys, "%s%s%s%s", keys.n ? ", " : "", name, chance(50) ? " DESC" : "",
                nulls == 1 ? " NULLS FIRST" : nulls == 2 ? " NULLS LAST" : "");
        c += k;
        while (*c == ',' || *c == ' ') c++;
      }
      bprintf(&pipe, " |> ORDER BY %s", keys.s);
      buf next = {0};
      bprintf(&next, "SELECT * FROM (%s) ORDER BY %s", sql.s, keys.s);
      free(sql.s);
      sql = next;
      free(keys.s);
    }
    int nrows;
    failures += compare_with_sqlite(e, modes, nmodes, "exact", p, pipe.s, sql.s, ordered, &nrows);
    nonempty += nrows > 0;
    free(pipe.s), free(sql.s), free(pr1.s), free(pr2.s), free(v1.s), free(v2.s);
  }
  pj_engine_close(e);
  if (failures) fail_msg("%d exact-number pipelines disagree with SQLite", failures);
  assert_true(nonempty > npipes / 2);
}

/* ---- window functions -------------------------------------------------------------
 *
 * LANGUAGE.md §8's window functions against SQLite's own, over a table of
 * 20,000 random rows (twenty batches; k and s with many duplicates and
 * NULLs) and a small one: random calls, windows (partitions, ordering in
 * both directions, NULLS FIRST / LAST) and frames, in EXTEND or SELECT
 * after an optional WHERE, every row compared in input order on both
 * backends. Where SQL leaves the order of peers open and the value
 * depends on it (ROW_NUMBER, NTILE, LAG / LEAD, FIRST / LAST / NTH_VALUE,
 * ROWS frames), the window orders by the unique id last; the ranks and
 * the aggregates over RANGE frames are checked over real ties. */

static const char *const g_wkeys[] = {"k", "v", "d", "s", "v % 5", "-k"};
#define NWKEYS (int)(sizeof g_wkeys / sizeof *g_wkeys)

/* A random bound of a ROWS frame: start (end == 0) or end. */
static void w_bound(buf *b, int end) {
  int r = rnd(4);
  if (r == 0) bprintf(b, end ? "UNBOUNDED FOLLOWING" : "UNBOUNDED PRECEDING");
  else if (r == 1) bprintf(b, "CURRENT ROW");
  else bprintf(b, "%d %s", rnd(r == 2 ? 3 : 60), end ? "FOLLOWING" : "PRECEDING");
}

/* One window function call and its OVER clause. */
static void w_call(buf *b) {
  static const char *const fns[] = {"ROW_NUMBER()", "RANK()", "DENSE_RANK()", "PERCENT_RANK()",
                                    "CUME_DIST()", "NTILE", "LAG", "LEAD", "FIRST_VALUE",
                                    "LAST_VALUE", "NTH_VALUE", "COUNT(*)", "COUNT", "SUM",
                                    "TOTAL", "AVG", "MIN", "MAX"};
  static const char *const vals[] = {"v", "d", "k", "s"};
  int f = rnd((int)(sizeof fns / sizeof *fns));
  const char *x = vals[rnd(4)], *num = vals[rnd(3)];
  bool peers_matter = false;
  switch (f) {
  case 5: bprintf(b, "NTILE(%d)", 1 + rnd(7)); peers_matter = true; break;
  case 6: case 7:
    if (chance(40)) bprintf(b, "%s(%s)", fns[f], x);
    else if (chance(50)) bprintf(b, "%s(%s, %d)", fns[f], num, rnd(4));
    /* LAG with a negative offset is LEAD here; SQLite reads at most one
     * row ahead for it (docs/DECISIONS.md) */
    else if (chance(50)) bprintf(b, "%s(v, %s, %s)", fns[f], f == 6 ? "abs(k)" : "k", chance(50) ? "-1" : "v");
    else bprintf(b, "%s(%s, %d, %s)", fns[f], x, rnd(3), x[0] == 's' ? "'none'" : "0");
    peers_matter = true;
    break;
  case 8: case 9: bprintf(b, "%s(%s)", fns[f], x); peers_matter = true; break;
  case 10: bprintf(b, "NTH_VALUE(%s, %d)", x, 1 + rnd(4)); peers_matter = true; break;
  case 12: case 16: case 17: bprintf(b, "%s(%s)", fns[f], x); break;
  case 13: case 14: case 15: bprintf(b, "%s(%s)", fns[f], num); break;
  default: bprintf(b, "%s", fns[f]); peers_matter = f == 0; break;
  }
  bool framed = f >= 8 && chance(70), byrows = framed && (peers_matter || chance(45));
  peers_matter |= byrows;
  bprintf(b, " OVER (");
  int np = rnd(3);
  if (np) bprintf(b, "PARTITION BY ");
  for (int i = 0; i < np; i++) bprintf(b, "%s%s", i ? ", " : "", g_wkeys[rnd(NWKEYS)]);
  int no = rnd(3), numkey = 0;
  if (no || peers_matter) bprintf(b, "%sORDER BY ", np ? " " : "");
  for (int i = 0; i < no; i++) {
    int kk = rnd(NWKEYS);
    numkey = strcmp(g_wkeys[kk], "s") != 0 ? (strcmp(g_wkeys[kk], "d") ? 1 : 2) : 0;
    bprintf(b, "%s%s", i ? ", " : "", g_wkeys[kk]);
    if (chance(40)) bprintf(b, " DESC");
    if (chance(25)) bprintf(b, chance(50) ? " NULLS FIRST" : " NULLS LAST");
  }
  if (peers_matter) bprintf(b, "%sid%s", no ? ", " : "", chance(30) ? " DESC" : "");
  if (byrows) {
    /* a start that does not come after the end (SQLite's rules) */
    static const char *const frames[] = {
        "ROWS BETWEEN UNBOUNDED PRECEDING AND %s", "ROWS BETWEEN %d PRECEDING AND %s",
        "ROWS BETWEEN CURRENT ROW AND %s", "ROWS BETWEEN %d FOLLOWING AND %s"};
    int fr = rnd(4);
    buf end = {0};
    if (fr == 3) bprintf(&end, chance(50) ? "UNBOUNDED FOLLOWING" : "%d FOLLOWING", 2 + rnd(5));
    else if (fr == 1 && chance(30)) bprintf(&end, "%d PRECEDING", rnd(2));
    else w_bound(&end, 1);
    bprintf(b, " ");
    if (fr == 1 || fr == 3) bprintf(b, frames[fr], fr == 1 ? 1 + rnd(80) : rnd(2), end.s);
    else bprintf(b, frames[fr], end.s);
    free(end.s);
  } else if (framed) {
    /* frames of peers: the value never depends on the order among them */
    static const char *const ranges[] = {
        "RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING",
        "RANGE BETWEEN CURRENT ROW AND CURRENT ROW", "RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING",
        "RANGE UNBOUNDED PRECEDING", "GROUPS BETWEEN %d PRECEDING AND %d FOLLOWING",
        "GROUPS BETWEEN %d FOLLOWING AND %d FOLLOWING", "GROUPS %d PRECEDING",
        "GROUPS BETWEEN UNBOUNDED PRECEDING AND %d PRECEDING"};
    int fr = rnd(8);
    if (no == 1 && numkey && chance(75)) {
      /* RANGE by the one key's value (d: a REAL key, fractional offsets) */
      static const char *const offs[] = {"RANGE BETWEEN %s PRECEDING AND %s FOLLOWING",
                                         "RANGE BETWEEN CURRENT ROW AND %s FOLLOWING",
                                         "RANGE BETWEEN %s PRECEDING AND CURRENT ROW",
                                         "RANGE BETWEEN %s FOLLOWING AND %s FOLLOWING",
                                         "RANGE BETWEEN UNBOUNDED PRECEDING AND %s PRECEDING"};
      char o1[16], o2[16];
      snprintf(o1, sizeof o1, numkey == 2 ? "%d.5" : "%d", rnd(numkey == 2 ? 8 : 300));
      snprintf(o2, sizeof o2, numkey == 2 ? "%d.25" : "%d", rnd(numkey == 2 ? 8 : 300));
      int r = rnd(5);
      bprintf(b, " ");
      if (r == 1) bprintf(b, offs[r], o2);
      else if (r == 2 || r == 4) bprintf(b, offs[r], o1);
      else if (r == 3) bprintf(b, offs[r], o1, o1[0] == '0' ? o1 : o2);
      else bprintf(b, offs[r], o1, o2);
    } else if (fr < 4) {
      bprintf(b, " %s", ranges[fr]);
    } else {
      bprintf(b, " ");
      bprintf(b, ranges[fr], rnd(4), 1 + rnd(4));
    }
  }
  bprintf(b, ")");
}

static void test_window_functions(void **state) {
  (void)state;
  mode_spec modes[2];
  int nmodes = pick_modes(modes);
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  tune_engine(e);
  pj_engine_set_opt_level(e, 1);
  g_rng = 0x3141ull;
  static const int sizes[] = {20000, 37};
  for (int i = 0; i < 2; i++) {
    make_table(e, 10 + i, sizes[i]);
    char sql[256];
    snprintf(sql, sizeof sql, "CREATE TABLE wsrc_%d AS SELECT rowid AS id, k, v, d, s FROM src_%d", i, 10 + i);
    assert_int_equal(sqlite3_exec(pj_engine_sqlite(e), sql, NULL, NULL, NULL), SQLITE_OK);
    snprintf(sql, sizeof sql, "CREATE PERFETTO TABLE wt_%d AS SELECT * FROM wsrc_%d ORDER BY id", i, i);
    if (pj_engine_exec(e, sql, NULL, NULL) != PJ_OK) fail_msg("%s: %s", sql, pj_engine_errmsg(e));
  }
  const char *seed = getenv("PJ_DIFF_SEED");
  g_rng = seed ? strtoull(seed, NULL, 0) : 0x3D0Full;
  int failures = 0, compared = 0;
  for (int p = 0; p < 160 && failures < 5; p++) {
    int t = p % 5 == 4;
    buf pipe = {0}, sql = {0}, calls = {0}, names = {0};
    int nc = 1 + rnd(3);
    for (int c = 0; c < nc; c++) {
      buf one = {0};
      w_call(&one);
      bprintf(&calls, "%s%s AS w%d", c ? ", " : "", one.s, c);
      bprintf(&names, ", w%d", c);
      free(one.s);
    }
    int where = chance(30) ? rnd(1000) - 500 : 0;
    bprintf(&pipe, "FROM wt_%d", t);
    if (where) bprintf(&pipe, " |> WHERE v > %d", where);
    if (chance(50)) bprintf(&pipe, " |> EXTEND %s |> SELECT id%s", calls.s, names.s);
    else bprintf(&pipe, " |> SELECT id, %s", calls.s);
    bprintf(&sql, "SELECT id, %s FROM wsrc_%d", calls.s, t);
    if (where) bprintf(&sql, " WHERE v > %d", where);
    bprintf(&sql, " ORDER BY id");
    rows want = {0};
    sql_rows(pj_engine_sqlite(e), sql.s, &want);
    if (getenv("PJ_DIFF_VERBOSE")) fprintf(stderr, "%d: %s\n", want.n, pipe.s);
    for (int m = 0; m < nmodes; m++) {
      char *why = run_and_diff(e, modes[m].mode, pipe.s, &want, 1);
      if (why) {
        print_error("window pipeline %d [%s]:\n  %s\nsql:\n  %s\n%s\n", p, modes[m].name, pipe.s,
                    sql.s, why);
        failures++;
        free(why);
      }
      compared++;
    }
    rows_free(&want);
    free(pipe.s);
    free(sql.s);
    free(calls.s);
    free(names.s);
  }
  pj_engine_close(e);
  if (failures) fail_msg("%d window pipelines disagree with SQLite", failures);
  assert_true(compared >= 160);
}

/* ---- JOIN -------------------------------------------------------------------------
 *
 * LANGUAGE.md §8: random joins of the tables above (NULL keys, duplicate
 * keys, 20,000-row inputs: several batches in and out) against SQLite's
 * own JOIN, row for row in §8's order, which the reference reproduces with
 * ORDER BY over the rowids: input order, the matches of a row in the
 * relation's order, RIGHT/FULL's unmatched rows last in the relation's
 * order (the columnar copies keep the SQLite tables' rowid order). */

static const int g_join_sizes[] = {0, 1, 57, 3000, 20000};

static void test_random_joins(void **state) {
  (void)state;
  mode_spec modes[2];
  int nmodes = pick_modes(modes);
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  tune_engine(e);
  pj_engine_set_opt_level(e, 1);
  g_rng = 0x5EED1234ull;
  for (int i = 0; i < 5; i++) make_table(e, i, g_join_sizes[i]);
  static const char *const kinds[] = {"JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "INNER JOIN",
                                      "LEFT OUTER JOIN"};
  /* ON conditions in SQL (the pipeline's reads r. for b.), and how many
   * pairs they make: 0 few per key, 1 about n*m/12, 2 every pair */
  static const struct { const char *sql; int fan; } conds[] = {
      {"a.v = b.v", 0},
      {"b.v = a.v AND a.k < b.k", 0},
      {"a.s = b.s AND a.v < b.v + 100", 1},
      {"a.d = b.d", 0},
      {"a.v = b.d * 4", 0},
      {"a.k = b.k AND a.s = b.s", 1},
      {"a.k = b.k", 1},
      {"lower(a.s) = lower(b.s) AND a.d > b.d", 1},
      {"a.v > b.v + 1900", 2},
      {"a.k = b.k OR a.v = b.v", 2},
  };
  const int nconds = (int)(sizeof conds / sizeof *conds);
  g_rng = 0x501Eull;
  int failures = 0, compared = 0;
  for (int q = 0; q < 120 && failures < 5; q++) {
    int ci = q % nconds, kind = rnd(6);
    int fan = conds[ci].fan;
    /* keep the output small enough: pairs grow with both sizes */
    int ta = rnd(5), tb = rnd(5);
    if (fan == 1) while (g_join_sizes[ta] > 3000 && g_join_sizes[tb] > 57) tb = rnd(4);
    if (fan == 2) ta = rnd(4), tb = rnd(3);
    bool filter = chance(40), sub = chance(30), using_ = chance(15) && fan < 2;
    buf pipe = {0}, sql = {0};
    bprintf(&pipe, "FROM pt_%d AS a ", ta);
    if (filter) bprintf(&pipe, "|> WHERE a.v %% 3 <> 1 ");
    const char *kw = kinds[kind];
    if (sub) bprintf(&pipe, "|> %s (FROM pt_%d |> WHERE d IS NULL OR d > -40) AS r ", kw, tb);
    else bprintf(&pipe, "|> %s pt_%d AS r ", kw, tb);
    const char *bsrc = sub ? "(SELECT rowid AS rid, * FROM src_%d WHERE d IS NULL OR d > -40)"
                           : "(SELECT rowid AS rid, * FROM src_%d)";
    char bbuf[160];
    snprintf(bbuf, sizeof bbuf, bsrc, tb);
    bprintf(&sql, "SELECT ");
    if (using_) {
      bprintf(&pipe, "USING (k) |> SELECT k, a.v AS av, a.s AS as_, r.v AS rv, r.d AS rd");
      bprintf(&sql, "k, a.v AS av, a.s AS as_, b.v AS rv, b.d AS rd");
    } else {
      bprintf(&pipe, "ON ");
      for (const char *c = conds[ci].sql; *c; c++)
        bprintf(&pipe, "%c", c[0] == 'b' && c[1] == '.' ? 'r' : c[0]);
      bprintf(&pipe, " |> SELECT a.k AS ak, a.v AS av, a.s AS as_, r.k AS rk, r.v AS rv, r.d AS rd");
      bprintf(&sql, "a.k AS ak, a.v AS av, a.s AS as_, b.k AS rk, b.v AS rv, b.d AS rd");
    }
    bprintf(&sql, " FROM (SELECT rowid AS rid, * FROM src_%d%s) a %s %s b ", ta,
            filter ? " WHERE v % 3 <> 1" : "", kw, bbuf);
    if (using_) bprintf(&sql, "USING (k)");
    else bprintf(&sql, "ON %s", conds[ci].sql);
    bprintf(&sql, " ORDER BY a.rid IS NULL, a.rid, b.rid");
    failures += compare_with_sqlite(e, modes, nmodes, "join", q, pipe.s, sql.s, 1, NULL);
    compared += nmodes;
    free(pipe.s);
    free(sql.s);
  }
  pj_engine_close(e);
  if (failures) fail_msg("%d joins disagree with SQLite", failures);
  assert_true(compared >= 120);
}

/* ---- DISTINCT and set operations -------------------------------------------------
 *
 * LANGUAGE.md §8 against SQLite on the same random tables: DISTINCT and
 * the DISTINCT forms in first-seen order (the reference orders SQLite's
 * groups by their first rowid; GROUP BY, like DISTINCT, takes NULL as
 * equal), UNION ALL in input-then-operand order, INTERSECT / EXCEPT with
 * SQLite's own compound selects deciding which rows, and the ALL forms
 * (which SQLite lacks) by copy number: the n-th copy of a row stays when
 * n <= the operand's copies (INTERSECT ALL), n > them (EXCEPT ALL). */

static void test_random_setops(void **state) {
  (void)state;
  mode_spec modes[2];
  int nmodes = pick_modes(modes);
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  tune_engine(e);
  pj_engine_set_opt_level(e, 1);
  g_rng = 0x5EED1234ull;
  for (int i = 0; i < 5; i++) make_table(e, i, g_join_sizes[i]);
  /* column lists: {pipeline, SQL} (the second relation's d makes doubles) */
  static const char *const colsets[][2] = {
      {"k, s", "k, s"}, {"k", "k"}, {"s, k, v %% 7 AS w", "s, k, v % 7 AS w"}, {"d", "d"}, {"k, d", "k, d"},
  };
  g_rng = 0x5E70ull;
  int failures = 0;
  for (int q = 0; q < 80 && failures < 5; q++) {
    int ta = rnd(5), tb = rnd(5), cs = rnd(5), form = rnd(7);
    if (form >= 3) ta = rnd(4), tb = rnd(4);   /* the references are quadratic */
    const char *pc = colsets[cs][0], *sc = colsets[cs][1];
    /* the operand mixes integers with doubles where it can: k with d */
    const char *sc2 = cs == 1 && chance(50) ? "d" : sc;
    buf pipe = {0}, sql = {0};
    char A[96], B[96];
    snprintf(A, sizeof A, "(SELECT rowid AS rid, %s FROM src_%d)", sc, ta);
    snprintf(B, sizeof B, "(SELECT rowid + 1000000 AS rid, %s FROM src_%d)", sc2, tb);
    bprintf(&pipe, "FROM pt_%d |> SELECT ", ta);
    bprintf(&pipe, "%s", cs == 2 ? "s, k, v % 7 AS w" : pc);
    static const char *const stages[] = {"DISTINCT", "UNION ALL", "UNION", "INTERSECT", "EXCEPT",
                                         "INTERSECT ALL", "EXCEPT ALL"};
    const char *cols = cs == 2 ? "s, k, w" : cs == 0 ? "k, s" : cs == 3 ? "d" : cs == 4 ? "k, d" : "k";
    if (form == 0) {
      bprintf(&pipe, " |> DISTINCT");
      bprintf(&sql, "SELECT %s FROM (SELECT %s, MIN(rid) AS o FROM %s GROUP BY %s) ORDER BY o", cols, cols, A, cols);
    } else {
      bprintf(&pipe, " |> %s (SELECT %s FROM src_%d)", stages[form], sc2, tb);
      switch (form) {
      case 1: bprintf(&sql, "SELECT %s FROM (SELECT * FROM %s UNION ALL SELECT * FROM %s) ORDER BY rid", cols, A, B); break;
      case 2:
        bprintf(&sql, "SELECT %s FROM (SELECT %s, MIN(rid) AS o FROM (SELECT * FROM %s UNION ALL SELECT * FROM %s) GROUP BY %s) ORDER BY o",
                cols, cols, A, B, cols);
        break;
      case 3: case 4: {
        /* which rows: SQLite's own INTERSECT / EXCEPT; order: first rowid */
        bprintf(&sql, "SELECT %s FROM (SELECT %s, MIN(rid) AS o FROM %s GROUP BY %s) x WHERE EXISTS (SELECT 1 FROM (SELECT %s FROM src_%d %s SELECT %s FROM src_%d) y WHERE ",
                cols, cols, A, cols, sc, ta, form == 3 ? "INTERSECT" : "EXCEPT", sc2, tb);
        int n = cs == 2 ? 3 : cs == 1 || cs == 3 ? 1 : 2;
        static const char *const names[][3] = {{"k", "s"}, {"k"}, {"s", "k", "w"}, {"d"}, {"k", "d"}};
        for (int i = 0; i < n; i++) bprintf(&sql, "%sy.%s IS x.%s", i ? " AND " : "", names[cs][i], names[cs][i]);
        bprintf(&sql, ") ORDER BY o");
        break;
      }
      default: {
        /* copy number n of each row; the operand's copies of it */
        bprintf(&sql, "SELECT %s FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY %s ORDER BY rid) AS n FROM %s) x WHERE n %s (SELECT COUNT(*) FROM (SELECT %s FROM src_%d) y WHERE ",
                cols, cols, A, form == 5 ? "<=" : ">", sc2, tb);
        int n = cs == 2 ? 3 : cs == 1 || cs == 3 ? 1 : 2;
        static const char *const names[][3] = {{"k", "s"}, {"k"}, {"s", "k", "w"}, {"d"}, {"k", "d"}};
        for (int i = 0; i < n; i++) {
          /* the operand's column by position (k may stand where d is) */
          const char *yn = cs == 1 && sc2[0] == 'd' ? "d" : names[cs][i];
          bprintf(&sql, "%sy.%s IS x.%s", i ? " AND " : "", yn, names[cs][i]);
        }
        bprintf(&sql, ") ORDER BY rid");
        break;
      }
      }
    }
    failures += compare_with_sqlite(e, modes, nmodes, "set op", q, pipe.s, sql.s, 1, NULL);
    free(pipe.s);
    free(sql.s);
  }
  pj_engine_close(e);
  if (failures) fail_msg("%d set operations disagree with SQLite", failures);
}

/* ---- the SQL stage ----------------------------------------------------------------
 *
 * `|> SQL (q)` (LANGUAGE.md §8) against SQLite running q itself with
 * @input replaced by the same rows as a subquery of the source table:
 * aggregates, self-joins of @input, window functions, compound selects
 * and CTEs over random tables (NULLs, duplicates, up to 20,000 rows), with
 * stages before the SQL stage (its input) and after it (over its
 * result). Rows compare as sorted lists: q's order is SQLite's to choose. */

static void test_random_sql_stage(void **state) {
  (void)state;
  mode_spec modes[2];
  int nmodes = pick_modes(modes);
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  tune_engine(e);
  pj_engine_set_opt_level(e, 1);
  g_rng = 0x5EED1234ull;
  for (int i = 0; i < 5; i++) make_table(e, i, g_join_sizes[i]);
  /* {q with @I for the input, its first column, quadratic in the input} */
  static const struct { const char *q, *first; bool quad; } qs[] = {
      {"SELECT k, count(*) AS n, sum(v) AS sv, max(d) AS md FROM @I GROUP BY k", "k", false},
      {"SELECT s, avg(v) AS av, min(k) AS mk FROM @I WHERE v > 0 GROUP BY s", "s", false},
      {"SELECT a.k AS k, count(*) AS n, sum(b.v) AS sv FROM @I AS a JOIN @I AS b ON a.k = b.k AND a.s = b.s GROUP BY a.k", "k", true},
      {"SELECT k, v, sum(v) OVER (PARTITION BY k) AS tot, count(*) OVER (PARTITION BY s) AS ns FROM @I", "k", false},
      {"SELECT DISTINCT s, k FROM @I", "s", false},
      {"SELECT v, d, s FROM @I WHERE d IS NOT NULL AND v % 5 = 0 UNION ALL SELECT v, d, s FROM @I WHERE s LIKE 'a%'", "v", false},
      {"WITH m AS (SELECT k, max(v) AS mv FROM @I GROUP BY k) SELECT x.k AS k, x.s AS s FROM @I AS x JOIN m ON m.k = x.k AND m.mv = x.v", "k", false},
      {"SELECT count(*) AS n, total(d) AS td, max(s) AS ms FROM @I", "n", false},
      {"SELECT * FROM @I ORDER BY v DESC, k, s, d LIMIT 7", "v", false},
      {"SELECT k * 2 AS k2, upper(s) AS us, d / 2 AS hd FROM @I WHERE k IN (SELECT k FROM @I WHERE v < -500)", "k2", false},
  };
  const int nq = (int)(sizeof qs / sizeof *qs);
  static const char *const pres[][2] = {
      {"", ""}, {" |> WHERE v % 3 <> 1", " WHERE v % 3 <> 1"}, {" |> WHERE s IS NOT NULL AND d > -20", " WHERE s IS NOT NULL AND d > -20"},
  };
  g_rng = 0x5015ull;
  int failures = 0, compared = 0;
  for (int n = 0; n < 60 && failures < 5; n++) {
    int qi = n % nq, t = rnd(5), pre = rnd(3);
    if (qs[qi].quad) t = rnd(4);
    bool post = chance(50);
    buf pipe = {0}, sub = {0}, sql = {0}, q = {0};
    bprintf(&sub, "(SELECT * FROM src_%d%s)", t, pres[pre][1]);
    for (const char *c = qs[qi].q; *c; c++) {
      if (c[0] == '@' && c[1] == 'I') {
        bprintf(&q, "@input");
        bprintf(&sql, "%s", sub.s);
        c++;
      } else {
        bprintf(&q, "%c", *c);
        bprintf(&sql, "%c", *c);
      }
    }
    bprintf(&pipe, "FROM pt_%d%s |> SQL (%s)", t, pres[pre][0], q.s);
    if (post) {
      bprintf(&pipe, " |> WHERE %s IS NOT NULL", qs[qi].first);
      buf w = {0};
      bprintf(&w, "SELECT * FROM (%s) WHERE %s IS NOT NULL", sql.s, qs[qi].first);
      free(sql.s);
      sql = w;
    }
    failures += compare_with_sqlite(e, modes, nmodes, "sql stage", n, pipe.s, sql.s, 0, NULL);
    compared += nmodes;
    free(pipe.s);
    free(sub.s);
    free(sql.s);
    free(q.s);
  }
  pj_engine_close(e);
  if (failures) fail_msg("%d SQL stages disagree with SQLite", failures);
  assert_true(compared >= 60);
}

/* ---- the straight-line loop of AGGREGATE without GROUP BY ------------------
 *
 * codegen/cg_vagg.c runs the batches of such a segment through a loop
 * without branches (LLVM vectorizes it) when its WHERE and EXTEND are
 * numbers only, and falls back to the row loop for a batch where a row
 * failed or a sum may have overflowed. Random numeric predicates and
 * expressions over the same values with NULLs (pt_i's k, v, d) and without
 * (pn_i: the NULLs replaced), on every backend against SQLite; most of the
 * JIT's segments must show the loop (vec.loop in the IR), so the test
 * cannot pass by never taking it. */

static void v_operand(buf *b, int depth) {
  static const char *const cols[] = {"k", "v", "d"};
  int r = rnd(depth > 0 ? 9 : 5);
  if (r < 3) bprintf(b, "%s", cols[r]);
  else if (r == 3) bprintf(b, "%d", rnd(21) - 10);
  else if (r == 4) bprintf(b, "%.2f", (rnd(81) - 40) / 4.0);
  else if (r == 5) bprintf(b, "(%s + %d)", cols[rnd(3)], rnd(7) - 3);
  else if (r == 6) bprintf(b, "(%s * %d)", cols[rnd(3)], rnd(5) - 2);
  else if (r == 7) bprintf(b, "(%s - %s)", cols[rnd(3)], cols[rnd(3)]);
  else bprintf(b, "(%s %% %d)", cols[rnd(2)], rnd(5) + 2);
}

static void v_pred(buf *b, int depth) {
  static const char *const ops[] = {"=", "!=", "<", "<=", ">", ">=", "IS", "IS NOT"};
  switch (depth <= 0 ? rnd(2) : rnd(8)) {
  case 0: v_operand(b, depth), bprintf(b, " %s ", ops[rnd(8)]), v_operand(b, depth); return;
  case 1: v_operand(b, 0), bprintf(b, chance(50) ? " IS NULL" : " IS NOT NULL"); return;
  case 2: bprintf(b, "NOT ("), v_pred(b, depth - 1), bprintf(b, ")"); return;
  case 3: bprintf(b, "("), v_pred(b, depth - 1), bprintf(b, " AND "), v_pred(b, depth - 1), bprintf(b, ")"); return;
  case 4: bprintf(b, "("), v_pred(b, depth - 1), bprintf(b, " OR "), v_pred(b, depth - 1), bprintf(b, ")"); return;
  case 5: v_operand(b, depth), bprintf(b, " %sBETWEEN %d AND %d", chance(30) ? "NOT " : "", rnd(11) - 8, rnd(11) - 2); return;
  case 6: v_operand(b, depth), bprintf(b, "%s IN (%d, %d, %.2f)", chance(30) ? " NOT" : "", rnd(9) - 4, rnd(9) - 4, (rnd(41) - 20) / 4.0); return;
  default: v_operand(b, depth), bprintf(b, " > "), v_operand(b, depth); return;
  }
}

static void test_vector_aggregates(void **state) {
  static const int sizes[] = {0, 57, 8193, 20000};
  const int ntables = (int)(sizeof sizes / sizeof *sizes);
  mode_spec modes[2];
  int nmodes = pick_modes(modes);
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  pj_engine_set_opt_level(e, 2);   /* the vectorizer's pipeline */
  g_rng = 0xFEC70Full;
  for (int i = 0; i < ntables; i++) {
    make_table(e, i, sizes[i]);
    char sql[256];
    snprintf(sql, sizeof sql,
             "CREATE PERFETTO TABLE pn_%d AS SELECT coalesce(k, 1) AS k, coalesce(v, -3) AS v,"
             " coalesce(d, 0.25) AS d FROM src_%d", i, i);
    if (pj_engine_exec(e, sql, NULL, NULL) != PJ_OK) fail_msg("%s: %s", sql, pj_engine_errmsg(e));
  }
  static const char *const aggs[] = {"COUNT(*)", "COUNT(k)", "SUM(v)", "MIN(v)", "MAX(k)", "SUM(d)",
                                     "AVG(d)", "AVG(k)", "SUM(e)", "MAX(e)", "COUNT(e)", "SUM(f)",
                                     "MIN(k)"};
  int failures = 0, vec = 0, jitted = 0;
  const int npipes = 160;
  for (int p = 0; p < npipes && failures < 5; p++) {
    int table = rnd(ntables), nonull = p % 2;
    buf pipe = {0}, sql = {0}, where = {0}, ag = {0}, sag = {0};
    v_pred(&where, 2);
    int extend = chance(40);
    if (nonull) bprintf(&pipe, "FROM pn_%d", table);
    else bprintf(&pipe, "FROM pt_%d", table);
    bprintf(&pipe, " |> WHERE %s", where.s);
    if (extend) bprintf(&pipe, " |> EXTEND k + v AS e, d * 2.0 - v AS f");
    int na = rnd(4) + 1;
    for (int i = 0; i < na; i++) {
      int a = rnd(extend ? 13 : 8);
      if (a == 12 && !extend) a = 4;
      bprintf(&ag, "%s%s AS a%d", i ? ", " : "", aggs[a], i);
    }
    bprintf(&pipe, " |> AGGREGATE %s", ag.s);
    if (nonull)
      bprintf(&sql, "SELECT %s FROM (SELECT *, k + v AS e, d * 2.0 - v AS f FROM (SELECT coalesce(k, 1) AS k,"
              " coalesce(v, -3) AS v, coalesce(d, 0.25) AS d FROM src_%d) WHERE %s)", ag.s, table, where.s);
    else
      bprintf(&sql, "SELECT %s FROM (SELECT *, k + v AS e, d * 2.0 - v AS f FROM src_%d WHERE %s)", ag.s,
              table, where.s);
    failures += compare_with_sqlite(e, modes, nmodes, "vector aggregate", p, pipe.s, sql.s, 1, NULL);
    for (int m = 0; m < nmodes; m++) {
      if (modes[m].mode != PJ_MODE_JIT) continue;
      pj_engine_set_mode(e, PJ_MODE_JIT);
      pj_query *h = NULL;
      pj_result *r = NULL;
      if (pj_query_compile(e, pipe.s, &h) == PJ_OK && pj_query_run(h, &r) == PJ_OK) {
        const char *ir = pj_query_llvm_ir(h, 0);
        jitted++;
        vec += ir && strstr(ir, "vec.loop") != NULL;
      }
      pj_result_free(r);
      pj_query_free(h);
    }
    free(pipe.s), free(sql.s), free(where.s), free(ag.s), free(sag.s);
  }
  pj_engine_close(e);
  if (failures) fail_msg("%d vector aggregates disagree with SQLite", failures);
  if (jitted && vec * 10 < jitted * 8) fail_msg("only %d of %d compiled segments had the vector loop", vec, jitted);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_pipelines),
      cmocka_unit_test(test_vector_aggregates),
      cmocka_unit_test(test_exact_numbers),
      cmocka_unit_test(test_window_functions),
      cmocka_unit_test(test_random_joins),
      cmocka_unit_test(test_random_setops),
      cmocka_unit_test(test_random_sql_stage),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
