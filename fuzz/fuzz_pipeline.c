/*
 * fuzz_pipeline.c — libFuzzer target: the input's bytes drive a generator
 * of well-formed pipelines over random tables, and every backend must
 * agree.
 *
 * Each input makes two tables (`sa`/`sb` in SQLite, `pa`/`pb` as columnar
 * copies): a few literal rows, or thousands of formula rows so that runs
 * cross 8192-row batches; columns id/parent_id (a tree, sometimes broken),
 * ts/dur (sometimes NULL or negative), g (a small key), i (extreme
 * integers, near 2^53 and 2^63), d (doubles, infinities among them), s
 * (strings, NULLs, UTF-8); comparisons mix integers with doubles, and
 * expressions mix in untyped NULLs, COLLATE, LIKE … ESCAPE, x IN () and
 * subqueries (IN, EXISTS, scalar) over the SQLite tables.
 * Then one pipeline of
 * 1..6 stages — WHERE, EXTEND (window functions among its items), SET,
 * SELECT, DROP, RENAME, AS, ORDER BY,
 * LIMIT, AGGREGATE, TREE ACCUMULATE, the §9.4 tree operators, INTERVAL
 * FLATTEN / JOIN / FILL GAPS, §9.2's INTERVAL SUBTRACT / SPLIT / QUANTIZE /
 * SET BOUNDS / FILL WITHIN / MERGE,
 * JOIN, DISTINCT, FORK read back by UNION ALL / EXCEPT, SQL (… @input …),
 * or an INTERVAL INTERSECTION OF, INTERVALS FROM EVENTS or GRAPH … TREE source — tracking the row's columns so
 * most pipelines bind. It runs in interp, jit, auto with forced switching
 * (interpreter first and compiled first) and auto with a real background
 * compile; the printed rows, or the error message and offset, must be
 * identical. A mismatch prints the tables' SQL and the pipeline, then
 * aborts.
 *
 * When the bytes run out every choice is 0, so short inputs make simple,
 * valid pipelines.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "api/engine.h"
#include "pipejit.h"

/* ---- the input as a stream of choices --------------------------------------- */

typedef struct in {
  const uint8_t *p;
  size_t n;
} in;

static unsigned pick(in *s, unsigned n) {
  if (n <= 1 || !s->n) return 0;
  unsigned v = *s->p++;
  s->n--;
  if (n > 256 && s->n) {
    v = v << 8 | *s->p++;
    s->n--;
  }
  return v % n;
}

/* ---- text ---------------------------------------------------------------------- */

typedef struct buf {
  char *s;
  size_t n, cap;
} buf;

static void bprintf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (b->n + (size_t)n + 1 > b->cap) {
    b->cap = (b->n + (size_t)n + 1) * 2;
    b->s = realloc(b->s, b->cap);
    if (!b->s) abort();
  }
  va_start(ap, fmt);
  vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->n += (size_t)n;
}

static const char *bget(const buf *b) { return b->s ? b->s : ""; }

/* ---- tables ---------------------------------------------------------------------- */

/* Near 2^53 and 2^63, where an integer compared through a double goes
 * wrong, and doubles that overflow to infinities (and NaN, which is NULL). */
static const char *const k_ints[] = {"0", "1", "-1", "42", "9223372036854775807",
                                     "-9223372036854775808", "9223372036854775806",
                                     "4611686018427387904", "NULL", "-7", "1000000007",
                                     "9007199254740993", "9007199254740992"};
static const char *const k_dbls[] = {"0.5", "-1.25", "1e300", "NULL", "0.0", "-0.0", "3.75",
                                     "1e-300", "2.5", "9007199254740992.0",
                                     "9223372036854775808.0", "1e999", "-1e999",
                                     "-9223372036854775808.0"};
static const char *const k_strs[] = {"'a'", "'b'", "''", "NULL", "'ab'", "'A'",
                                     "'\xc3\xa4'", "'a%b'", "'zz'", "'B_'"};
#define N(a) (unsigned)(sizeof a / sizeof a[0])

/* Rows of table `name` (SQL, to run in SQLite). */
static void gen_table(in *s, buf *sql, const char *name) {
  bprintf(sql, "DROP TABLE IF EXISTS s%s; CREATE TABLE s%s(id INT, parent_id INT, ts INT, "
               "dur INT, g INT, i INT, d REAL, s TEXT);",
          name, name);
  static const int k_big[] = {8191, 8192, 8193, 20000};
  unsigned kind = pick(s, 8);
  if (kind == 7) {
    /* formula rows: a heap-shaped tree (parent x/2), periodic values;
     * ts grows with x (ts = a*x + x%m) so every row overlaps a bounded
     * number of others and joins and intersections stay linear */
    int n = k_big[pick(s, 4)];
    unsigned a = 1 + pick(s, 50), m = 1 + pick(s, 8), dd = 1 + pick(s, 20),
             gg = 1 + pick(s, 5), pi = 2 + pick(s, 9000), bad = pick(s, 4);
    bprintf(sql,
            "INSERT INTO s%s WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c "
            "WHERE x < %d) SELECT x, CASE WHEN x = 0 THEN NULL WHEN %u = 1 AND x = %d THEN x "
            "ELSE x / 2 END, x * %u + x %% %u, x %% %u, CASE WHEN x %% 7 = 3 THEN NULL ELSE x %% "
            "%u END, CASE WHEN x %% %u = 0 THEN 9223372036854775000 ELSE x - 100 END, x * 0.25, "
            "CASE x %% 4 WHEN 0 THEN 'a' WHEN 1 THEN NULL WHEN 2 THEN 'bc' ELSE '' END FROM c;",
            name, n - 1, bad, n / 2, a, m, dd, gg, pi);
    return;
  }
  unsigned n = pick(s, 12);
  unsigned shape = pick(s, 8);   /* 0..5 a proper tree; then broken ones */
  for (unsigned r = 0; r < n; r++) {
    int id = (int)r, parent;
    if (r == 0 || pick(s, 4) == 0) parent = -1;
    else parent = (int)pick(s, r);
    if (shape == 6 && r == n - 1) parent = id;          /* self parent */
    if (shape == 7 && r == n - 1) parent = 1000;        /* missing parent */
    if (shape == 5 && r == n - 1 && n > 1) id = 0;      /* duplicate id */
    char ts[24], dur[24];
    unsigned t = pick(s, 16);
    if (t == 15) strcpy(ts, "NULL");
    else if (t == 14 && pick(s, 4) == 0) strcpy(ts, "-5");
    else snprintf(ts, sizeof ts, "%u", pick(s, 60));
    unsigned d = pick(s, 16);
    if (d == 15) strcpy(dur, "NULL");
    else if (d == 14) strcpy(dur, pick(s, 3) ? "-1" : "0");
    else snprintf(dur, sizeof dur, "%u", pick(s, 30));
    char par[16];
    if (parent < 0) strcpy(par, "NULL");
    else snprintf(par, sizeof par, "%d", parent);
    unsigned g = pick(s, 5);
    char gs[8];
    if (g == 4) strcpy(gs, "NULL");
    else snprintf(gs, sizeof gs, "%u", g);
    bprintf(sql, "INSERT INTO s%s VALUES (%d, %s, %s, %s, %s, %s, %s, %s);", name, id, par, ts,
            dur, gs, pick(s, 3) ? "1" : k_ints[pick(s, N(k_ints))], k_dbls[pick(s, N(k_dbls))],
            k_strs[pick(s, N(k_strs))]);
  }
  /* the i column: mostly small, sometimes extreme */
  if (pick(s, 2)) bprintf(sql, "UPDATE s%s SET i = id * 3 - 7 WHERE id %% 2 = 0;", name);
}

/* ---- the row while a pipeline is generated ---------------------------------- */

typedef enum { T_INT, T_DBL, T_STR } vtype;

#define MAXC 24
typedef struct col {
  char name[32];
  vtype t;
} col;

typedef struct row {
  int n;
  col c[MAXC];
  int aliased;   /* an alias `q` of a snapshot exists */
  col qc[MAXC];
  int nq;
  int fresh;     /* counter for new names */
} row;

static int find(const row *r, const char *name) {
  for (int i = 0; i < r->n; i++)
    if (!strcasecmp(r->c[i].name, name)) return i;
  return -1;
}

static void add(row *r, const char *name, vtype t) {
  if (r->n == MAXC) return;
  snprintf(r->c[r->n].name, sizeof r->c[r->n].name, "%s", name);
  r->c[r->n++].t = t;
}

static void base_row(row *r) {
  memset(r, 0, sizeof *r);
  add(r, "id", T_INT);
  add(r, "parent_id", T_INT);
  add(r, "ts", T_INT);
  add(r, "dur", T_INT);
  add(r, "g", T_INT);
  add(r, "i", T_INT);
  add(r, "d", T_DBL);
  add(r, "s", T_STR);
}

/* A column of type t, or -1. */
static int col_of(in *s, const row *r, vtype t) {
  int idx[MAXC], k = 0;
  for (int i = 0; i < r->n; i++)
    if (r->c[i].t == t) idx[k++] = i;
  return k ? idx[pick(s, (unsigned)k)] : -1;
}

/* ---- expressions ------------------------------------------------------------------ */

static void gen_expr(in *s, const row *r, vtype t, int depth, buf *o);

static void leaf(in *s, const row *r, vtype t, buf *o) {
  int c = pick(s, 3) ? col_of(s, r, t) : -1;
  if (c >= 0) {
    bprintf(o, "%s", r->c[c].name);
    return;
  }
  if (pick(s, 8) == 7) {   /* an untyped NULL stands for any type */
    bprintf(o, pick(s, 2) ? "NULL" : "ifnull(NULL, NULL)");
    return;
  }
  if (t == T_INT) bprintf(o, "%s", k_ints[pick(s, N(k_ints))]);
  else if (t == T_DBL) bprintf(o, "%s", k_dbls[pick(s, N(k_dbls))]);
  else bprintf(o, "%s", k_strs[pick(s, N(k_strs))]);
}

static void gen_pred(in *s, const row *r, int depth, buf *o) {
  static const char *const cmp[] = {"=", "<", ">=", "!=", "IS", "IS NOT"};
  vtype t = (vtype)pick(s, 3);
  switch (depth > 2 ? 0 : pick(s, 7)) {
  case 0:
  case 1:
    gen_expr(s, r, t, depth + 1, o);
    bprintf(o, " %s ", cmp[pick(s, N(cmp))]);
    /* a number may meet the other kind of number: compared by value */
    gen_expr(s, r, t != T_STR && pick(s, 3) == 0 ? (t == T_INT ? T_DBL : T_INT) : t, depth + 1, o);
    break;
  case 2:
    bprintf(o, "(");
    gen_pred(s, r, depth + 1, o);
    bprintf(o, pick(s, 2) ? ") AND (" : ") OR (");
    gen_pred(s, r, depth + 1, o);
    bprintf(o, ")");
    break;
  case 3:
    bprintf(o, "NOT (");
    gen_pred(s, r, depth + 1, o);
    bprintf(o, ")");
    break;
  case 4:
    gen_expr(s, r, T_INT, depth + 1, o);
    switch (pick(s, 7)) {
    case 0: bprintf(o, " IN (1, 3, NULL, -1)"); break;
    case 1: bprintf(o, " BETWEEN 2 AND 20"); break;
    case 2: bprintf(o, " IN (9007199254740992.0, 1e999, 3, 9223372036854775808.0)"); break;
    /* subqueries (LANGUAGE.md §5): SQLite's, over the SQLite copies */
    case 3: bprintf(o, " IN (SELECT g FROM sa WHERE g > 1)"); break;
    case 4: bprintf(o, " NOT IN (SELECT i FROM sb UNION ALL SELECT NULL)"); break;
    case 5: bprintf(o, " = (SELECT max(g) FROM sb) AND EXISTS (SELECT 1 FROM sa WHERE d > 0)"); break;
    default: bprintf(o, " BETWEEN 9007199254740992.0 AND 9.3e18"); break;
    }
    break;
  case 5: {
    static const char *const tails[] = {
        " LIKE 'a%%'", " GLOB '*b*'", " LIKE 'a!%%' ESCAPE '!'", " NOT LIKE '%%__' ESCAPE '_'",
        " COLLATE NOCASE = 'A'", " < 'b ' COLLATE RTRIM", " COLLATE NOCASE IN ('a', 'B')",
        " IN ()", " NOT IN ()", " COLLATE NOCASE BETWEEN 'a' AND 'B'",
        " IN (SELECT s FROM sa)", " COLLATE NOCASE NOT IN (SELECT s FROM sb WHERE g < 3)",
        " > (SELECT min(s) FROM sb)"};
    gen_expr(s, r, T_STR, depth + 1, o);
    bprintf(o, "%s", tails[pick(s, N(tails))]);
    break;
  }
  default:
    gen_expr(s, r, t, depth + 1, o);
    bprintf(o, pick(s, 2) ? " IS NULL" : " IS NOT NULL");
  }
}

static void gen_expr(in *s, const row *r, vtype t, int depth, buf *o) {
  if (depth > 3 || pick(s, 3) == 0) {
    leaf(s, r, t, o);
    return;
  }
  unsigned k = pick(s, 6);
  if (k == 5) {   /* CASE, any type */
    bprintf(o, "CASE WHEN ");
    gen_pred(s, r, depth + 1, o);
    bprintf(o, " THEN ");
    gen_expr(s, r, t, depth + 1, o);
    bprintf(o, " ELSE ");
    gen_expr(s, r, t, depth + 1, o);
    bprintf(o, " END");
    return;
  }
  if (t == T_STR) {
    /* each takes a string or an integer (numbers read as text) */
    static const char *const f[] = {"upper(%s)", "lower(%s)", "substr(%s, 2)", "trim(%s)",
                                    "CAST(%s AS TEXT)", "replace(%s, 'a', 'xy')", "hex(%s)",
                                    "typeof(%s)", "printf('%%-4.2s|%%5d|%%q', %s, 7, 'o''k')",
                                    "format('%%c%%x', %s, 255)", "ltrim(%s, 'ab')"};
    if (k < 2) {
      bprintf(o, "(");
      gen_expr(s, r, T_STR, depth + 1, o);
      bprintf(o, " || ");
      gen_expr(s, r, pick(s, 2) ? T_STR : T_INT, depth + 1, o);
      bprintf(o, ")");
      return;
    }
    buf a = {0};
    gen_expr(s, r, k == 4 ? T_INT : T_STR, depth + 1, &a);
    bprintf(o, f[pick(s, N(f))], bget(&a));
    free(a.s);
    return;
  }
  if (t == T_INT && k == 4) {
    static const char *const f[] = {"length(%s)", "instr(%s, 'a')", "unicode(%s)",
                                    "sign(length(%s) - 2)"};
    buf a = {0};
    gen_expr(s, r, T_STR, depth + 1, &a);
    bprintf(o, f[pick(s, N(f))], bget(&a));
    free(a.s);
    return;
  }
  if (k == 3) {
    static const char *const f[] = {"abs(", "coalesce(", "-(", "max(", "min(", "nullif("};
    if (t == T_DBL && pick(s, 4) == 0) {   /* round(x [, digits]) is a double */
      bprintf(o, "round(");
      gen_expr(s, r, pick(s, 2) ? T_DBL : T_INT, depth + 1, o);
      if (pick(s, 2)) bprintf(o, ", %u", pick(s, 4));
      bprintf(o, ")");
      return;
    }
    unsigned w = pick(s, N(f));
    bprintf(o, "%s", f[w]);
    gen_expr(s, r, t, depth + 1, o);
    if (w == 1 || w >= 3) {
      bprintf(o, ", ");
      gen_expr(s, r, t, depth + 1, o);
    }
    bprintf(o, ")");
    return;
  }
  static const char *const iop[] = {"+", "-", "*", "/", "%", "&", "|", "<<", ">>"};
  static const char *const dop[] = {"+", "-", "*", "/"};
  bprintf(o, "(");
  gen_expr(s, r, t, depth + 1, o);
  bprintf(o, " %s ", t == T_INT ? iop[pick(s, N(iop))] : dop[pick(s, N(dop))]);
  gen_expr(s, r, t == T_DBL && pick(s, 2) ? T_INT : t, depth + 1, o);
  bprintf(o, ")");
}

/* ---- stages --------------------------------------------------------------------------- */

static void fresh(row *r, char *out, size_t n) { snprintf(out, n, "c%d", r->fresh++); }

static const char *const k_rel[] = {"OVERLAPPING BOUNDS", "COVERING BEGIN", "COVERING END",
                                    "COVERING BOUNDS", "WITHIN BOUNDS"};

/* Aggregates over row r for AGGREGATE (any=1), INTERVAL MERGE (any=2:
 * §9's list) or FLATTEN / TREE (numbers only, but FLATTEN's ARG_MAX value
 * and GROUP_CONCAT take strings). */
static void gen_aggs(in *s, row *r, row *out, buf *o, int any, int tree) {
  int n = 1 + (int)pick(s, 3);
  for (int k = 0; k < n; k++) {
    char name[16];
    fresh(r, name, sizeof name);
    unsigned f = pick(s, any ? 6 : 5);
    int c = col_of(s, r, f == 4 && any ? T_STR : pick(s, 4) ? T_INT : T_DBL);
    if (tree && c >= 0 && r->c[c].t != T_INT) c = col_of(s, r, T_INT);
    if (c < 0 || f == 0) {
      bprintf(o, "%sCOUNT(*) AS %s", k ? ", " : "", name);
      add(out, name, T_INT);
      continue;
    }
    if (any && pick(s, 4) == 0) {   /* §8's more aggregates (AGGREGATE only) */
      const char *cn = r->c[c].name;
      vtype t = r->c[c].t;
      switch (any == 2 ? 1 + pick(s, 2) : pick(s, 5)) {   /* any 2: §9's list (MERGE) */
      case 0: bprintf(o, "%sCOUNT(DISTINCT %s) AS %s", k ? ", " : "", cn, name); t = T_INT; break;
      case 1: bprintf(o, "%sGROUP_CONCAT(%s, '/') AS %s", k ? ", " : "", cn, name); t = T_STR; break;
      case 2: bprintf(o, "%s%s(%s, %s) AS %s", k ? ", " : "", pick(s, 2) ? "ARG_MAX" : "ARG_MIN", cn,
                      r->c[col_of(s, r, T_INT) >= 0 ? col_of(s, r, T_INT) : c].name, name);
              t = col_of(s, r, T_INT) >= 0 ? T_INT : t; break;
      case 3: bprintf(o, "%sPERCENTILE(%s, %u) AS %s", k ? ", " : "", t == T_STR ? "1" : cn, pick(s, 101), name);
              t = T_DBL; break;
      default: bprintf(o, "%sMEDIAN(%s) AS %s", k ? ", " : "", t == T_STR ? "2.5" : cn, name); t = T_DBL; break;
      }
      add(out, name, t);
      continue;
    }
    if (!any && !tree && pick(s, 4) == 0) {   /* §9's aggregate list in FLATTEN */
      const char *cn = r->c[c].name;
      int v = col_of(s, r, pick(s, 2) ? T_STR : T_INT);
      if (pick(s, 2) || v < 0) {
        bprintf(o, "%sGROUP_CONCAT(%s%s) AS %s", k ? ", " : "", v >= 0 ? r->c[v].name : cn,
                pick(s, 2) ? ", '/'" : "", name);
        add(out, name, T_STR);
      } else {
        bprintf(o, "%s%s(%s, %s) AS %s", k ? ", " : "", pick(s, 2) ? "ARG_MAX" : "ARG_MIN", cn,
                r->c[v].name, name);
        add(out, name, r->c[v].t);
      }
      continue;
    }
    static const char *const fn[] = {"COUNT", "SUM", "MIN", "MAX", "MAX", "AVG"};
    bprintf(o, "%s%s(%s) AS %s", k ? ", " : "", fn[f], r->c[c].name, name);
    vtype t = f == 0 ? T_INT : f == 5 ? T_DBL : r->c[c].t;
    if (tree) t = T_INT;
    add(out, name, t);
  }
}

static int has(const row *r, const char *a, const char *b) {
  return find(r, a) >= 0 && (!b || find(r, b) >= 0);
}

/* PER g when the row has g (and the operand does: always, for pa/pb). */
static void per(in *s, const row *r, buf *o, row *out) {
  if (find(r, "g") >= 0 && pick(s, 2)) {
    bprintf(o, " PER g");
    if (out) add(out, "g", r->c[find(r, "g")].t);
  }
}

/* A window function call (LANGUAGE.md §8) over the row's columns; *t its
 * result's type. */
static void gen_window(in *s, const row *r, buf *o, vtype *t) {
  static const char *const ranks[] = {"ROW_NUMBER()", "RANK()", "DENSE_RANK()", "NTILE(3)",
                                      "CUME_DIST()", "COUNT(*)"};
  static const char *const fns[] = {"LAG", "LEAD", "FIRST_VALUE", "LAST_VALUE", "MIN", "MAX",
                                    "COUNT", "SUM", "AVG", "NTH_VALUE"};
  unsigned f = pick(s, 16);
  int c = (int)pick(s, (unsigned)r->n);
  *t = T_INT;
  if (f < N(ranks)) {
    bprintf(o, "%s", ranks[f]);
    if (f == 4) *t = T_DBL;
  } else {
    f = pick(s, N(fns));
    if (f >= 7 && r->c[c].t == T_STR) f = 6;   /* SUM and AVG take numbers */
    if (f < 6 || f == 9) *t = r->c[c].t;
    if (f == 8) *t = T_DBL;
    if (f == 9) bprintf(o, "NTH_VALUE(%s, %u)", r->c[c].name, 1 + pick(s, 3));
    else if (f < 2 && pick(s, 2)) bprintf(o, "%s(%s, %u)", fns[f], r->c[c].name, pick(s, 3));
    else bprintf(o, "%s(%s)", fns[f], r->c[c].name);
  }
  bprintf(o, " OVER (");
  if (pick(s, 2)) bprintf(o, "PARTITION BY %s ", r->c[pick(s, (unsigned)r->n)].name);
  if (pick(s, 4)) {
    bprintf(o, "ORDER BY %s%s", r->c[pick(s, (unsigned)r->n)].name, pick(s, 3) ? "" : " DESC");
    if (pick(s, 2)) bprintf(o, ", %s", r->c[pick(s, (unsigned)r->n)].name);
  }
  switch (pick(s, 6)) {
  case 1: bprintf(o, " ROWS BETWEEN %u PRECEDING AND %u FOLLOWING", pick(s, 4), pick(s, 4)); break;
  case 2: bprintf(o, " ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"); break;
  case 3: bprintf(o, " RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING"); break;
  case 4: bprintf(o, " GROUPS BETWEEN %u PRECEDING AND %u FOLLOWING", pick(s, 3), pick(s, 3)); break;
  case 5:   /* an error unless one numeric key orders the window */
    bprintf(o, " RANGE BETWEEN %u PRECEDING AND %u FOLLOWING", pick(s, 1000), pick(s, 10));
    break;
  default: break;
  }
  bprintf(o, ")");
}

/* §9.2's interval reshaping stages over the row's ts and dur (pb's rows
 * as operands, some with negative bounds, which is an error both
 * backends must report alike). */
static void gen_reshape(in *s, row *r, buf *o) {
  char name[16];
  if (!has(r, "ts", "dur")) return;
  switch (pick(s, 7)) {
  case 0:
    bprintf(o, " |> INTERVAL SUBTRACT (FROM pb |> WHERE dur >= %d)", (int)pick(s, 2) - 1);
    per(s, r, o, NULL);
    return;
  case 1:
    fresh(r, name, sizeof name);
    bprintf(o, " |> INTERVAL SPLIT (FROM pb |> WHERE dur >= 0) AS %s", name);
    per(s, r, o, NULL);
    return;
  case 2:
    bprintf(o, " |> WHERE dur >= 0 |> INTERVAL QUANTIZE %u%s%s", 1 + pick(s, 50),
            pick(s, 2) ? "ns" : "", pick(s, 2) ? " ALIGNED TO ZERO" : pick(s, 2) ? " ALIGNED TO 3" : "");
    per(s, r, o, NULL);
    if (find(r, "bucket") < 0) add(r, "bucket", T_INT);
    return;
  case 3:
    bprintf(o, " |> INTERVAL SET BOUNDS BEGIN AT ts %s", pick(s, 2) ? "FOR dur" : "END AT ts + dur");
    return;
  case 4:
    bprintf(o, " |> INTERVAL FILL WITHIN (FROM pb |> WHERE dur >= 0 |> SELECT ts, dur%s)",
            find(r, "g") >= 0 && pick(s, 2) ? ", g" : "");
    per(s, r, o, NULL);
    return;
  default: {   /* MERGE: ts, dur, PER, BY, the aggregate list */
    row nr;
    memset(&nr, 0, sizeof nr);
    add(&nr, "ts", T_INT);
    add(&nr, "dur", T_INT);
    int c = col_of(s, r, T_INT);
    if (pick(s, 2) && c >= 0 && strcmp(r->c[c].name, "ts") && strcmp(r->c[c].name, "dur") &&
        strcmp(r->c[c].name, "g")) {
      bprintf(o, " |> INTERVAL MERGE CONSECUTIVE BY %s", r->c[c].name);
      per(s, r, o, &nr);
      add(&nr, r->c[c].name, T_INT);
    } else {
      bprintf(o, " |> INTERVAL MERGE OVERLAPPING");
      per(s, r, o, &nr);
    }
    bprintf(o, " AGGREGATE ");
    gen_aggs(s, r, &nr, o, 2, 0);
    nr.fresh = r->fresh;
    *r = nr;
    return;
  }
  }
}

/* A §9.4 tree operator over the row's id / parent_id (LANGUAGE.md §9.4):
 * the filters keep the row's shape, CONTRACT / ABSORB / MERGE INTO PARENT
 * append their aggregates, MERGE SIBLINGS makes id, parent_id, the BY
 * column and its aggregates. */
static void gen_tree_shape(in *s, row *r, buf *o) {
  static const char *const sets[] = {"(FROM pa |> WHERE id % 3 = 0 |> SELECT id)",
                                     "(SELECT 1 AS id UNION ALL SELECT 4)", "(FROM pb |> SELECT id)",
                                     "(SELECT NULL AS id)"};
  const char *set = sets[pick(s, 4)];
  unsigned f = pick(s, 8);
  int c = (int)pick(s, (unsigned)r->n);
  const char *by = r->c[c].name;
  if (!strcasecmp(by, "id") || !strcasecmp(by, "parent_id")) by = find(r, "g") >= 0 ? "g" : NULL;
  if (f >= 4 && !by) f = 2;
  row nr = *r;
  switch (f) {
  case 0:
  case 1:
    bprintf(o, " |> TREE %s IF %s OF %s", f ? "DROP" : "KEEP", pick(s, 2) ? "ANCESTOR" : "DESCENDANT", set);
    if (pick(s, 4) == 0) bprintf(o, " OVER (FROM pa |> SELECT id, parent_id)");
    return;
  case 2: bprintf(o, " |> TREE PRUNE AT %s", set); return;
  case 3: bprintf(o, " |> TREE REPARENT TO NEAREST ANCESTOR IN %s", set); return;
  case 7:
    memset(&nr, 0, sizeof nr);
    add(&nr, "id", T_INT);
    add(&nr, "parent_id", T_INT);
    add(&nr, by, r->c[find(r, by)].t);
    bprintf(o, " |> TREE MERGE SIBLINGS BY %s%s AGGREGATE ", by, pick(s, 3) ? "" : " ORDERED");
    break;
  default:
    if (f == 6) bprintf(o, " |> TREE MERGE INTO PARENT BY %s AGGREGATE ", by);
    else bprintf(o, " |> TREE %s AT %s AGGREGATE ", f == 4 ? "CONTRACT" : "ABSORB", set);
    break;
  }
  gen_aggs(s, r, &nr, o, 0, 0);
  nr.fresh = r->fresh;
  *r = nr;
}

static void gen_stage(in *s, row *r, buf *o) {
  char name[16];
  unsigned k = pick(s, 24);
  switch (k) {
  case 20:   /* §9.2 interval reshaping */
    gen_reshape(s, r, o);
    return;
  case 21:   /* §9.4 tree operators */
    if (has(r, "id", "parent_id")) gen_tree_shape(s, r, o);
    return;
  case 22:   /* §9.3: [LEFT] INTERVAL FIND */
    if (has(r, "ts", "dur")) {
      static const char *const var[] = {"STARTING AFTER BEGIN", "STARTING BEFORE END",
                                        "ENDING AFTER END", "ENDING BEFORE BEGIN"};
      unsigned v = pick(s, N(var));
      bprintf(o, " |> %sINTERVAL FIND p%c AS o %s%s", pick(s, 2) ? "LEFT " : "",
              pick(s, 2) ? 'a' : 'b', var[v], pick(s, 2) ? " WITHIN 5" : "");
      per(s, r, o, NULL);
    }
    return;
  case 23:   /* §9.3: INTERVAL KEEP IF / DROP IF */
    if (has(r, "ts", "dur")) {
      bprintf(o, " |> INTERVAL %s IF %s p%c", pick(s, 2) ? "KEEP" : "DROP", k_rel[pick(s, N(k_rel))],
              pick(s, 2) ? 'a' : 'b');
      per(s, r, o, NULL);
    }
    return;
  case 16:   /* the relational stages of §8 that keep the row's shape */
    bprintf(o, " |> DISTINCT");
    return;
  case 17:   /* FORK, read back by a set operation */
    fresh(r, name, sizeof name);
    bprintf(o, " |> FORK AS %s |> WHERE ", name);
    gen_pred(s, r, 0, o);
    bprintf(o, " |> %s (FROM %s |> LIMIT %u)", pick(s, 2) ? "UNION ALL" : "EXCEPT", name, pick(s, 4));
    r->aliased = 0;
    return;
  case 18:   /* SQL over the stream so far */
    bprintf(o, " |> SQL (SELECT * FROM @input%s)", pick(s, 2) ? " WHERE rowid % 2 = 0" : "");
    r->aliased = 0;
    return;
  case 19: {   /* a join with the other table by id (at most one match a row) */
    int c = (int)pick(s, (unsigned)r->n);
    if (r->c[c].t != T_INT) return;
    char jid[16], js[16];
    fresh(r, jid, sizeof jid);
    fresh(r, js, sizeof js);
    bprintf(o, " |> %sJOIN (FROM pb |> SELECT id AS %s, s AS %s) AS j ON %s = j.%s",
            pick(s, 2) ? "LEFT " : "", jid, js, r->c[c].name, jid);
    add(r, jid, T_INT);
    add(r, js, T_STR);
    return;
  }
  case 0:
    bprintf(o, " |> WHERE ");
    gen_pred(s, r, 0, o);
    return;
  case 1: {
    vtype t = (vtype)pick(s, 3);
    fresh(r, name, sizeof name);
    bprintf(o, " |> EXTEND ");
    if (pick(s, 4) == 0) gen_window(s, r, o, &t);
    else gen_expr(s, r, t, 0, o);
    bprintf(o, " AS %s", name);
    add(r, name, t);
    return;
  }
  case 2: {
    int c = (int)pick(s, (unsigned)r->n);
    bprintf(o, " |> SET %s = ", r->c[c].name);
    gen_expr(s, r, r->c[c].t, 0, o);
    return;
  }
  case 3: {
    row nr = *r;
    nr.n = 0;
    nr.aliased = 0;
    bprintf(o, " |> SELECT ");
    int n = 1 + (int)pick(s, (unsigned)r->n);
    for (int i = 0; i < n; i++) {
      if (pick(s, 4) == 0) {
        vtype t = (vtype)pick(s, 3);
        fresh(&nr, name, sizeof name);
        if (i) bprintf(o, ", ");
        gen_expr(s, r, t, 0, o);
        bprintf(o, " AS %s", name);
        add(&nr, name, t);
      } else {
        int c = (int)pick(s, (unsigned)r->n);
        if (find(&nr, r->c[c].name) >= 0) continue;
        bprintf(o, "%s%s", i ? ", " : "", r->c[c].name);
        add(&nr, r->c[c].name, r->c[c].t);
      }
    }
    if (!nr.n) {
      bprintf(o, "%s", r->c[0].name);
      add(&nr, r->c[0].name, r->c[0].t);
    }
    nr.fresh = r->fresh > nr.fresh ? r->fresh : nr.fresh;
    *r = nr;
    return;
  }
  case 4:
    if (r->n > 1) {
      int c = (int)pick(s, (unsigned)r->n);
      bprintf(o, " |> DROP %s", r->c[c].name);
      memmove(&r->c[c], &r->c[c + 1], sizeof(col) * (size_t)(r->n - c - 1));
      r->n--;
    }
    return;
  case 5: {
    int c = (int)pick(s, (unsigned)r->n);
    fresh(r, name, sizeof name);
    bprintf(o, " |> RENAME %s AS %s", r->c[c].name, name);
    snprintf(r->c[c].name, sizeof r->c[c].name, "%s", name);
    return;
  }
  case 6:
    bprintf(o, " |> AS q");
    r->aliased = 1;
    memcpy(r->qc, r->c, sizeof r->c);
    r->nq = r->n;
    if (pick(s, 2)) {
      int c = (int)pick(s, (unsigned)r->nq);
      fresh(r, name, sizeof name);
      bprintf(o, " |> EXTEND q.%s AS %s", r->qc[c].name, name);
      add(r, name, r->qc[c].t);
    }
    return;
  case 7: {
    int n = 1 + (int)pick(s, 3);
    bprintf(o, " |> ORDER BY ");
    for (int i = 0; i < n; i++) {
      static const char *const dir[] = {"", " DESC", " ASC NULLS LAST", " DESC NULLS FIRST"};
      if (i) bprintf(o, ", ");
      unsigned how = pick(s, 8);
      if (how == 7) bprintf(o, "%u", 1 + pick(s, (unsigned)r->n + 1));   /* a position (or one past) */
      else if (how) bprintf(o, "%s", r->c[pick(s, (unsigned)r->n)].name);
      else gen_expr(s, r, (vtype)pick(s, 3), 1, o);
      static const char *const coll[] = {"", "", " COLLATE NOCASE", " COLLATE RTRIM"};
      bprintf(o, "%s%s", coll[pick(s, 4)], dir[pick(s, 4)]);
    }
    return;
  }
  case 8:
    bprintf(o, " |> LIMIT %u", pick(s, 2) ? pick(s, 20) : pick(s, 30000));
    if (pick(s, 2)) bprintf(o, " OFFSET %u", pick(s, 2) ? pick(s, 10) : pick(s, 20000));
    return;
  case 9: {
    row nr;
    memset(&nr, 0, sizeof nr);
    nr.fresh = r->fresh;
    int ng = (int)pick(s, 3);
    buf keys = {0};
    for (int i = 0; i < ng; i++) {
      int c = (int)pick(s, (unsigned)r->n);
      if (find(&nr, r->c[c].name) >= 0) continue;
      bprintf(&keys, "%s%s", nr.n ? ", " : "", r->c[c].name);
      add(&nr, r->c[c].name, r->c[c].t);
    }
    bprintf(o, " |> AGGREGATE ");
    gen_aggs(s, r, &nr, o, 1, 0);
    if (keys.n) bprintf(o, " GROUP BY %s", keys.s);
    free(keys.s);
    nr.fresh = r->fresh;
    *r = nr;
    return;
  }
  case 10:
  case 11:
    if (has(r, "id", "parent_id")) {
      bprintf(o, " |> TREE ACCUMULATE %s ", k == 10 ? "UP" : "DOWN");
      row nr = *r;
      gen_aggs(s, r, &nr, o, 0, 1);
      nr.fresh = r->fresh;
      *r = nr;
    }
    return;
  case 12:
    if (has(r, "ts", "dur")) {
      row nr;
      memset(&nr, 0, sizeof nr);
      add(&nr, "ts", T_INT);
      add(&nr, "dur", T_INT);
      bprintf(o, " |> INTERVAL FLATTEN");
      per(s, r, o, &nr);
      bprintf(o, " AGGREGATE ");
      gen_aggs(s, r, &nr, o, 0, 0);
      nr.fresh = r->fresh;
      *r = nr;
    }
    return;
  case 13:
    if (has(r, "ts", "dur")) {
      bprintf(o, " |> %sINTERVAL JOIN p%c AS o %s", pick(s, 2) ? "LEFT " : "",
              pick(s, 2) ? 'a' : 'b', k_rel[pick(s, N(k_rel))]);
      per(s, r, o, NULL);
      if (pick(s, 2)) {
        fresh(r, name, sizeof name);
        bprintf(o, " |> EXTEND o.%s AS %s", pick(s, 2) ? "s" : "ts", name);
        add(r, name, T_INT);   /* the type only steers later picks */
      }
    }
    return;
  case 14:
    if (has(r, "ts", "dur")) {
      bprintf(o, " |> INTERVAL FILL GAPS WITH (FROM pb |> WHERE dur >= 0 |> SELECT ts, dur%s)",
              find(r, "g") >= 0 && pick(s, 2) ? ", g" : "");
      per(s, r, o, NULL);
    }
    return;
  default:
    if (has(r, "ts", "dur") && pick(s, 2)) {
      /* a stage that sees the row through a subquery */
      bprintf(o, " |> WHERE ts >= 0 AND dur >= 0");
    }
  }
}

/* ---- running --------------------------------------------------------------------------- */

static void print_cell(buf *out, const pj_result *r, int64_t i, int c) {
  if (pj_result_is_null(r, i, c)) {
    bprintf(out, "NULL");
    return;
  }
  switch (pj_result_column_type(r, c)) {
  case PJ_TYPE_STRING: {
    size_t len = 0;
    const char *t = pj_result_text(r, i, c, &len);
    bprintf(out, "'%.*s'", (int)len, t);
    return;
  }
  case PJ_TYPE_DOUBLE: bprintf(out, "%.17g", pj_result_double(r, i, c)); return;
  default: bprintf(out, "%lld", (long long)pj_result_int64(r, i, c));
  }
}

static int collect(void *ctx, const pj_result *r, const char *t, size_t l, size_t off) {
  buf *out = ctx;
  int nc = pj_result_column_count(r);
  for (int c = 0; c < nc; c++)
    bprintf(out, "%s%s:%d", c ? "," : "", pj_result_column_name(r, c),
            (int)pj_result_column_type(r, c));
  bprintf(out, "\n");
  for (int64_t i = 0; i < pj_result_row_count(r); i++) {
    for (int c = 0; c < nc; c++) {
      if (c) bprintf(out, ",");
      print_cell(out, r, i, c);
    }
    bprintf(out, "\n");
  }
  return 0;
}

static pj_engine *g_e;
static int g_runs;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  if (pj_engine_open(NULL, &g_e) != PJ_OK) abort();
  return 0;
}

/* Runs text in one configuration; the printed rows or the error. */
static char *run(const char *text, pj_mode mode, int force, int64_t auto_rows) {
  pj_engine_set_mode(g_e, mode);
  pj__engine_set_force_switch(g_e, force);
  pj__engine_set_auto_rows(g_e, auto_rows);
  buf out = {0};
  if (pj_engine_exec(g_e, text, collect, &out) != PJ_OK) {
    out.n = 0;
    bprintf(&out, "error: %s @%d", pj_engine_errmsg(g_e), pj_engine_erroffset(g_e));
  }
  pj__engine_set_force_switch(g_e, 0);
  pj__engine_set_auto_rows(g_e, -1);
  if (!out.s) bprintf(&out, "%s", "");
  return out.s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  in s = {data, size};
  if (++g_runs % 1000 == 0) {   /* a fresh engine now and then */
    pj_engine_close(g_e);
    if (pj_engine_open(NULL, &g_e) != PJ_OK) abort();
  }
  buf setup = {0};
  gen_table(&s, &setup, "a");
  gen_table(&s, &setup, "b");
  bprintf(&setup, "CREATE OR REPLACE PERFETTO TABLE pa AS SELECT * FROM sa;"
                  "CREATE OR REPLACE PERFETTO TABLE pb AS SELECT * FROM sb;");
  if (pj_engine_exec(g_e, setup.s, NULL, NULL) != PJ_OK) {
    fprintf(stderr, "setup failed: %s\n%s\n", pj_engine_errmsg(g_e), setup.s);
    abort();
  }

  row r;
  base_row(&r);
  buf q = {0};
  unsigned src = pick(&s, 9);
  if (src == 7) {
    /* §9.5: a graph over the rows: the tree's edges, reversed ones
     * (cycles), or pb's (ids that may be no node: an error the backends
     * must agree on); seeds from a key, the roots or one id */
    static const char *const algo[] = {"DFS", "BFS", "DOMINATOR"};
    static const char *const nodes[] = {"(FROM pa |> RENAME parent_id AS up)",
                                        "(SELECT id, parent_id AS up, ts, dur, g, i, d, s FROM sa)"};
    static const char *const edges[] = {
        "(SELECT parent_id AS src, id AS dst FROM sa)",
        ("(SELECT parent_id AS src, id AS dst FROM sa UNION ALL "
         "SELECT a.id, b.id FROM sa a JOIN sa b ON b.id = a.parent_id)"),
        "(FROM pb |> SELECT id AS src, parent_id AS dst)"};
    static const char *const seeds[] = {"(SELECT id FROM sa WHERE g = 0)",
                                        "(FROM pa |> WHERE parent_id IS NULL |> SELECT id)",
                                        "(SELECT MIN(id) AS root FROM sa)"};
    bprintf(&q, "GRAPH %s TREE NODES %s EDGES %s FROM %s", algo[pick(&s, 3)], nodes[pick(&s, 2)],
            edges[pick(&s, 3)], seeds[pick(&s, 3)]);
    memset(&r, 0, sizeof r);
    add(&r, "id", T_INT);
    add(&r, "up", T_INT);
    add(&r, "ts", T_INT);
    add(&r, "dur", T_INT);
    add(&r, "g", T_INT);
    add(&r, "i", T_INT);
    add(&r, "d", T_DBL);
    add(&r, "s", T_STR);
    add(&r, "parent_id", T_INT);
    add(&r, "depth", T_INT);
  } else if (src == 8) {   /* §9.1: INTERVAL UNION OF */
    bprintf(&q, "INTERVAL UNION OF (pa AS x, (FROM pb |> WHERE dur >= 0 AND ts >= 0) AS y)");
    row nr;
    memset(&nr, 0, sizeof nr);
    add(&nr, "ts", T_INT);
    add(&nr, "dur", T_INT);
    per(&s, &r, &q, &nr);
    r = nr;
  } else if (src == 6) {   /* §9.1 (ivsrc): INTERVALS FROM EVENTS, ts and dur first */
    static const char *const last[] = {"", " KEEPING LAST OPEN", " CLOSING LAST AT (ts + i)",
                                       " CLOSING LAST AT (NULL)"};
    bprintf(&q, "INTERVALS FROM EVENTS %s", pick(&s, 2) ? "pa" : "(FROM pb |> WHERE ts >= 0)");
    per(&s, &r, &q, NULL);
    if (pick(&s, 2)) bprintf(&q, " STOP (FROM pb |> WHERE id %% 3 = 0 AND ts >= 0)");
    bprintf(&q, "%s", last[pick(&s, N(last))]);
    row nr;
    memset(&nr, 0, sizeof nr);
    add(&nr, "ts", T_INT);
    add(&nr, "dur", T_INT);
    for (int c = 0; c < r.n; c++)
      if (strcmp(r.c[c].name, "ts") && strcmp(r.c[c].name, "dur")) add(&nr, r.c[c].name, r.c[c].t);
    r = nr;
  } else if (src == 5) {
    bprintf(&q, "INTERVAL INTERSECTION OF (pa AS x, (FROM pb |> WHERE dur >= 0 AND ts >= 0) "
                "AS y)");
    row nr;
    memset(&nr, 0, sizeof nr);
    add(&nr, "ts", T_INT);
    add(&nr, "dur", T_INT);
    per(&s, &r, &q, &nr);
    r = nr;
  } else {
    static const char *const from[] = {"FROM pa", "FROM sa", "FROM (SELECT * FROM sa)",
                                       "FROM (FROM pa |> WHERE ts >= 0)", "FROM pb"};
    bprintf(&q, "%s", from[src]);
  }
  int nst = 1 + (int)pick(&s, 6);
  for (int i = 0; i < nst; i++) gen_stage(&s, &r, &q);

  /* PJ_FUZZ_VERBOSE=1: the pipelines and how they end; 2: the tables too */
  const char *verbose = getenv("PJ_FUZZ_VERBOSE");
  if (verbose && *verbose == '2') fprintf(stderr, "%s\n", setup.s);
  if (verbose) fprintf(stderr, "%s\n", q.s);
  char *want = run(q.s, PJ_MODE_INTERP, 0, -1);
  if (verbose) fprintf(stderr, "  => %.*s\n", (int)strcspn(want, "\n"), want);
  struct {
    const char *name;
    pj_mode mode;
    int force;
    int64_t auto_rows;
  } cfg[] = {
      {"auto (background compile)", PJ_MODE_AUTO, 0, 1000},
      {"jit", PJ_MODE_JIT, 0, -1},
      {"auto, interpreter first", PJ_MODE_AUTO, 1, -1},
      {"auto, compiled first", PJ_MODE_AUTO, 2, -1},
  };
  for (size_t k = 0; k < sizeof cfg / sizeof cfg[0]; k++) {
    char *got = run(q.s, cfg[k].mode, cfg[k].force, cfg[k].auto_rows);
    if (strcmp(want, got)) {
      fprintf(stderr, "backends disagree (%s vs interp)\n-- tables --\n%s\n-- pipeline --\n%s\n"
                      "-- interp --\n%.4000s\n-- %s --\n%.4000s\n",
              cfg[k].name, setup.s, q.s, want, cfg[k].name, got);
      abort();
    }
    free(got);
  }
  free(want);
  free(q.s);
  free(setup.s);
  return 0;
}
