/*
 * pipegen.h — a small random pipeline generator over the sample trace's
 * `slice` table, shared by test_concurrency.c and test_soak.c (included,
 * everything static: each test is its own program).
 *
 * Every generator has its own random state, so threads generate
 * independently. Pipelines start with FROM, or now and then with a GRAPH
 * … TREE source over the slices (§9.5), and chain WHERE / EXTEND / SET / SELECT / AGGREGATE /
 * ORDER BY / LIMIT / TREE ACCUMULATE / the §9.4 tree operators / JOIN / DISTINCT /
 * FORK (read back by UNION ALL) / SQL (…FROM @input…) / §9.2's interval reshaping
 * over the columnar table or a SQLite
 * subquery of it; with `bad` > 0, that percentage of pipelines carries a
 * deliberate error (parse, bind, integer overflow, SQLite, tree cycle) so
 * error paths are exercised as often as the good ones. Results are
 * compared through pg_digest, a hash of every value in row order: the
 * stages never leave row order to chance (sorts are stable, groups come
 * in first-seen order), so every backend must give the same digest.
 */
#ifndef PJ_TEST_PIPEGEN_H
#define PJ_TEST_PIPEGEN_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipejit.h"

typedef struct pg_gen {
  uint64_t rng;
  int bad;        /* percent of pipelines with a deliberate error */
} pg_gen;

static uint64_t pg_u64(pg_gen *g) {
  uint64_t z = (g->rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static int pg_rnd(pg_gen *g, int n) { return (int)(pg_u64(g) % (uint64_t)n); }
static int pg_chance(pg_gen *g, int percent) { return pg_rnd(g, 100) < percent; }

typedef struct pg_buf {
  char s[4096];
  size_t n;
} pg_buf;

static void pg_put(pg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pg_put(pg_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(b->s + b->n, sizeof b->s - b->n, fmt, ap);
  va_end(ap);
  if (n > 0) b->n = b->n + (size_t)n < sizeof b->s ? b->n + (size_t)n : sizeof b->s - 1;
}

/* The current row: integer and string column names. */
typedef struct pg_row {
  char ints[16][16];
  int nint;
  char strs[8][16];
  int nstr;
  int tree;       /* bare id and parent_id still there */
} pg_row;

static const char *pg_int(pg_gen *g, const pg_row *r) { return r->ints[pg_rnd(g, r->nint)]; }

static void pg_int_expr(pg_gen *g, const pg_row *r, pg_buf *b) {
  const char *a = pg_int(g, r), *c = pg_int(g, r);
  if (pg_chance(g, 10)) {   /* a NULL operand beside an overflowing one: NULL */
    pg_put(b, "(nullif(%s, %s) + 9223372036854775807) * 2 + %s", a, a, c);
    return;
  }
  switch (pg_rnd(g, 8)) {
  case 0: pg_put(b, "%s + %d", a, pg_rnd(g, 100) - 50); break;
  case 1: pg_put(b, "%s * %d", a, pg_rnd(g, 5)); break;
  case 2: pg_put(b, "%s / %d", a, pg_rnd(g, 9)); break;   /* / 0 is NULL */
  case 3: pg_put(b, "%s %% %d", a, pg_rnd(g, 7) + 1); break;
  case 4: pg_put(b, "%s - %s", a, c); break;
  case 5:
    /* untyped NULLs (issue 11) unify with the integer */
    if (pg_chance(g, 30)) pg_put(b, "coalesce(ifnull(NULL, NULL), %s, %d)", a, pg_rnd(g, 10));
    else pg_put(b, "coalesce(%s, %d)", a, pg_rnd(g, 10));
    break;
  case 6: pg_put(b, "CASE WHEN %s > %s THEN %s ELSE %d END", a, c, c, pg_rnd(g, 1000)); break;
  default:
    /* §5's SQLite functions: an integer out of text, signs, rounding */
    switch (pg_rnd(g, 4)) {
    case 0: pg_put(b, "length(printf('%%5d|%%.2f|%%x', %s, %s / 7.0, %s))", a, c, a); break;
    case 1: pg_put(b, "sign(%s - %s) * %d", a, c, pg_rnd(g, 9)); break;
    case 2: pg_put(b, "CAST(round(%s / 3.0, %d) * 3 AS INTEGER)", a, pg_rnd(g, 3)); break;
    default: pg_put(b, "coalesce(unicode(hex(%s)), 0) + length(replace(%s, '1', '22'))", a, c); break;
    }
    break;
  }
}

/* An integer window function (LANGUAGE.md §8): the stage keeps the row
 * order and the sort is stable, so the digest is still the same on every
 * backend. */
static void pg_window(pg_gen *g, const pg_row *r, pg_buf *b) {
  const char *a = pg_int(g, r);
  switch (pg_rnd(g, 6)) {
  case 0: pg_put(b, "ROW_NUMBER() OVER (ORDER BY %s)", pg_int(g, r)); return;
  case 1: pg_put(b, "%s - LAG(%s, 1, 0) OVER (PARTITION BY %s %% 5 ORDER BY %s)", a, a, pg_int(g, r), pg_int(g, r)); return;
  case 2: pg_put(b, "RANK() OVER (PARTITION BY %s %% 3 ORDER BY %s DESC)", pg_int(g, r), a); return;
  case 3: pg_put(b, "COUNT(%s) OVER (ORDER BY %s ROWS BETWEEN 10 PRECEDING AND CURRENT ROW)", a, pg_int(g, r)); return;
  case 4: pg_put(b, "MAX(%s) OVER (PARTITION BY %s %% 7 ORDER BY %s ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING)", a, pg_int(g, r), pg_int(g, r)); return;
  default: pg_put(b, "coalesce(FIRST_VALUE(%s) OVER (PARTITION BY %s %% 4), 0)", a, pg_int(g, r)); return;
  }
}

static void pg_pred(pg_gen *g, const pg_row *r, pg_buf *b) {
  /* Exactness (issue 11): an integer against a double near 2^53 and 2^63
   * (compared by value, not through a double), checked arithmetic beside
   * a NULL operand (NULL, not an overflow), doubles overflowing to
   * infinities and NaN (NULL). */
  if (pg_chance(g, 15)) {
    const char *a = pg_int(g, r);
    switch (pg_rnd(g, 5)) {
    case 0: pg_put(b, "%s + 9007199254740992 %s 9007199254740992.0 + %d", a, pg_chance(g, 50) ? ">" : "=",
                   pg_rnd(g, 4)); return;
    case 1: pg_put(b, "%s - %s + 9223372036854775807 < 9223372036854775808.0", a, a); return;
    case 2: pg_put(b, "(nullif(%s, %s) + 9223372036854775807 + %d) IS NULL", a, a, 1 + pg_rnd(g, 9)); return;
    case 3: pg_put(b, "(%s * 1e308 * 10 - %s * 1e308 * 10) IS NULL", a, pg_int(g, r)); return;
    default: pg_put(b, "%s + 9007199254740993 IN (9007199254740992.0, %d.0, 1e999)", a, pg_rnd(g, 1000)); return;
    }
  }
  if (r->nstr && pg_chance(g, 15)) {
    /* COLLATE, LIKE … ESCAPE, x IN () and an untyped NULL against a string */
    const char *s = r->strs[pg_rnd(g, r->nstr)];
    switch (pg_rnd(g, 5)) {
    case 0: pg_put(b, "%s COLLATE NOCASE >= 'Post'", s); break;
    case 1: pg_put(b, "%s = 'post' COLLATE %s", s, pg_chance(g, 50) ? "NOCASE" : "RTRIM"); break;
    case 2: pg_put(b, "%s %sLIKE 'p!_%%' ESCAPE '!'", s, pg_chance(g, 50) ? "" : "NOT "); break;
    case 3: pg_put(b, "%s %sIN ()", s, pg_chance(g, 50) ? "" : "NOT "); break;
    default: pg_put(b, "coalesce(%s, CASE WHEN %s > 0 THEN NULL END) IS NOT NULL", s, pg_int(g, r)); break;
    }
    return;
  }
  switch (pg_rnd(g, 5)) {
  case 0: pg_put(b, "%s > %d", pg_int(g, r), pg_rnd(g, 2000000)); break;
  case 1: pg_put(b, "%s %% %d = %d", pg_int(g, r), pg_rnd(g, 5) + 2, pg_rnd(g, 2)); break;
  case 2: pg_put(b, "%s IS NOT NULL", pg_int(g, r)); break;
  case 3:
    if (r->nstr) {
      pg_put(b, "%s %s 'post%%'", r->strs[pg_rnd(g, r->nstr)], pg_chance(g, 50) ? "LIKE" : "NOT LIKE");
      break;
    }
    /* fallthrough */
  default:
    pg_put(b, "%s BETWEEN %d AND %d OR %s < 3", pg_int(g, r), pg_rnd(g, 100), 100 + pg_rnd(g, 5000000),
           pg_int(g, r));
    break;
  }
}

static void pg_add_int(pg_row *r, const char *name) {
  if (r->nint < 16) snprintf(r->ints[r->nint++], sizeof r->ints[0], "%s", name);
}

static int pg_has_int(const pg_row *r, const char *name) {
  for (int i = 0; i < r->nint; i++)
    if (!strcmp(r->ints[i], name)) return 1;
  return 0;
}

/* A §9.2 interval reshaping stage (SUBTRACT, SPLIT, QUANTIZE, SET BOUNDS,
 * MERGE OVERLAPPING / CONSECUTIVE BY) when the row has bare ts and dur;
 * 0 when it has not. Rows multiply or merge: the tree columns no longer
 * name a tree. */
static int pg_reshape(pg_gen *g, pg_row *r, pg_buf *b, int ext) {
  if (!pg_has_int(r, "ts") || !pg_has_int(r, "dur")) return 0;
  int per = pg_has_int(r, "track_id") && pg_chance(g, 60);
  const char *pc = per ? " PER track_id" : "";
  /* unfinished slices (dur = -1) and rows SET to a negative ts are the
   * below-zero error in these stages */
  pg_put(b, " |> WHERE dur >= 0 AND ts >= 0");
  switch (pg_rnd(g, 6)) {
  case 0:
    pg_put(b, " |> INTERVAL SUBTRACT (FROM slice |> WHERE depth = %d AND dur >= 0)%s", 1 + pg_rnd(g, 3), pc);
    break;
  case 1:
    pg_put(b, " |> INTERVAL SPLIT (FROM slice |> WHERE depth = %d AND dur >= 0 |> SELECT ts, dur, track_id, id) AS sp%d%s",
           pg_rnd(g, 3), ext, pc);
    break;
  case 2:
    pg_put(b, " |> INTERVAL QUANTIZE %dms%s%s", 50 + pg_rnd(g, 200),
           pg_chance(g, 50) ? " ALIGNED TO ZERO" : "", pc);
    if (!pg_has_int(r, "bucket")) pg_add_int(r, "bucket");
    break;
  case 3:
    pg_put(b, " |> INTERVAL SET BOUNDS BEGIN AT ts + %d FOR dur", pg_rnd(g, 1000));
    break;
  default: {   /* MERGE: the row becomes ts, dur, [track_id], [BY], aggregates */
    int by = pg_has_int(r, "depth") && pg_chance(g, 50);
    pg_row nr = {0};
    char n1[16], n2[16];
    snprintf(n1, sizeof n1, "mn%d", ext);
    snprintf(n2, sizeof n2, "ms%d", ext);
    pg_put(b, " |> INTERVAL MERGE %s%s AGGREGATE COUNT(*) AS %s, SUM(dur) AS %s",
           by ? "CONSECUTIVE BY depth" : "OVERLAPPING", pc, n1, n2);
    pg_add_int(&nr, "ts");
    pg_add_int(&nr, "dur");
    if (per) pg_add_int(&nr, "track_id");
    if (by) pg_add_int(&nr, "depth");
    pg_add_int(&nr, n1);
    pg_add_int(&nr, n2);
    *r = nr;
    break;
  }
  }
  r->tree = 0;
  return 1;
}

/* One random pipeline into b. */
static void pg_pipeline(pg_gen *g, pg_buf *b) {
  pg_row r = {.tree = 1};
  static const char *const ints[] = {"id", "ts", "dur", "track_id", "parent_id", "depth"};
  for (int i = 0; i < 6; i++) pg_add_int(&r, ints[i]);
  snprintf(r.strs[r.nstr++], sizeof r.strs[0], "name");
  snprintf(r.strs[r.nstr++], sizeof r.strs[0], "category");
  b->n = 0;
  b->s[0] = 0;
  int bad = g->bad && pg_chance(g, g->bad) ? 1 + pg_rnd(g, 6) : 0;
  if (bad == 5) {
    pg_put(b, "FROM (SELECT * FROM no_such_table_%d)", pg_rnd(g, 3));
    return;
  }
  int src = pg_rnd(g, 10);
  if (src < 2) {
    pg_put(b, "FROM (SELECT * FROM slice WHERE id < %d)", 1000 + pg_rnd(g, 30000));
  } else if (src == 2) {   /* §9.1 (ivsrc): the slices' starts as events, the row's columns kept */
    pg_put(b, "INTERVALS FROM EVENTS slice PER track_id%s",
           pg_chance(g, 50) ? " STOP (FROM slice |> WHERE depth = 0 |> SELECT ts + dur AS ts, track_id)" : "");
  } else if (src == 3) {
    /* §9.5: the slices as a graph (nesting edges, and back edges making
     * cycles); the tree's parent_id and depth replace the slice's */
    static const char *const algo[] = {"DFS", "BFS", "DOMINATOR"};
    pg_put(b, "GRAPH %s TREE NODES (FROM slice |> DROP parent_id, depth) EDGES (FROM slice |> WHERE "
              "parent_id IS NOT NULL |> SELECT parent_id AS src, id AS dst%s) FROM (FROM slice |> "
              "WHERE depth = 0 AND track_id %% %d = 0 |> SELECT id)",
           algo[pg_rnd(g, 3)],
           pg_chance(g, 50) ? " |> UNION ALL (FROM slice |> WHERE depth > 1 AND id % 3 = 0 |> SELECT id, parent_id)"
                            : "",
           1 + pg_rnd(g, 4));
  } else {
    pg_put(b, "FROM slice");
  }
  if (bad == 6) {   /* a cycle: every node's parent is the next id */
    pg_put(b, " |> SET parent_id = (id + 1) %% 50 |> WHERE id < 50 |> TREE ACCUMULATE UP COUNT(*) AS n");
    return;
  }
  int nstages = 1 + pg_rnd(g, 5), ext = 0, bad_at = bad ? pg_rnd(g, nstages) : -1;
  for (int k = 0; k < nstages; k++) {
    if (k == bad_at) {
      switch (bad) {
      case 1: pg_put(b, " |> WHERE"); return;                                   /* parse */
      case 2: pg_put(b, " |> EXTEND nope_%d + 1 AS x", pg_rnd(g, 9)); break;     /* bind */
      case 3: pg_put(b, " |> EXTEND %s + 9223372036854775000 AS big", pg_int(g, &r)); break;
      default: pg_put(b, " |> SET %s = %s * 4611686018427387904", pg_int(g, &r), pg_int(g, &r)); break;
      }
      continue;
    }
    int kind = pg_rnd(g, 17);
    if (kind == 13) {   /* §9.2 interval reshaping, over the row's ts and dur */
      if (pg_reshape(g, &r, b, ext++)) continue;
      kind = 0;
    }
    if (kind >= 15) {   /* §9.3: INTERVAL KEEP/DROP IF and FIND keep the row's columns */
      int has_ts = 0, has_dur = 0, has_track = 0;
      for (int i = 0; i < r.nint; i++) {
        has_ts |= !strcmp(r.ints[i], "ts");
        has_dur |= !strcmp(r.ints[i], "dur");
        has_track |= !strcmp(r.ints[i], "track_id");
      }
      if (!has_ts || !has_dur) continue;
      static const char *const rels[] = {"OVERLAPPING BOUNDS", "COVERING BEGIN", "WITHIN BOUNDS"};
      static const char *const finds[] = {"STARTING AFTER END", "ENDING BEFORE BEGIN"};
      if (kind == 15)
        pg_put(b, " |> INTERVAL %s IF %s (FROM slice |> WHERE depth = %d)", pg_chance(g, 50) ? "KEEP" : "DROP",
               rels[pg_rnd(g, 3)], pg_rnd(g, 3));
      else
        pg_put(b, " |> %sINTERVAL FIND (FROM slice |> WHERE depth = %d) AS f%d %s", pg_chance(g, 50) ? "LEFT " : "",
               pg_rnd(g, 3), ext++, finds[pg_rnd(g, 2)]);
      if (has_track && pg_chance(g, 50)) pg_put(b, " PER track_id");
      continue;
    }
    if (kind == 11) {   /* FORK, read back by a later stage: the row's shape stays */
      pg_put(b, " |> FORK AS fk%d |> WHERE ", ext);
      pg_pred(g, &r, b);
      pg_put(b, " |> UNION ALL (FROM fk%d |> LIMIT %d)", ext, 1 + pg_rnd(g, 5));
      ext++;
      r.tree = 0;   /* ids repeat now */
      continue;
    }
    if (kind == 12) {   /* SQL over the stream so far (the stages before it are its input) */
      pg_put(b, " |> SQL (SELECT * FROM @input WHERE %s %% %d != 0)", pg_int(g, &r), 2 + pg_rnd(g, 3));
      continue;
    }
    if (kind == 9) {   /* JOIN (LANGUAGE.md §8): slice by id, so at most one match a row */
      static const char *const kinds[] = {"", "LEFT ", "INNER "};
      char n1[16], n2[16];
      snprintf(n1, sizeof n1, "jid%d", ext);
      snprintf(n2, sizeof n2, "jd%d", ext);
      pg_put(b, " |> %sJOIN (FROM slice |> WHERE depth < %d |> SELECT id AS %s, dur AS %s) AS j%d ON %s = j%d.%s",
             kinds[pg_rnd(g, 3)], 1 + pg_rnd(g, 3), n1, n2, ext, pg_int(g, &r), ext, n1);
      pg_add_int(&r, n1);
      pg_add_int(&r, n2);
      ext++;
      continue;
    }
    if (kind == 10) {   /* DISTINCT keeps the row's columns */
      pg_put(b, " |> DISTINCT");
      continue;
    }
    if (kind == 14 && r.tree) {   /* §9.4 tree operators: the filters keep the row */
      static const char *const sets[] = {"(FROM slice |> WHERE depth = 1 |> SELECT id)",
                                         "(SELECT 0 AS id UNION ALL SELECT 7)"};
      const char *set = sets[pg_rnd(g, 2)];
      switch (pg_rnd(g, 5)) {
      case 0: pg_put(b, " |> TREE KEEP IF DESCENDANT OF %s", set); break;
      case 1: pg_put(b, " |> TREE DROP IF ANCESTOR OF %s", set); break;
      case 2: pg_put(b, " |> TREE PRUNE AT %s", set); break;
      case 3: pg_put(b, " |> TREE REPARENT TO NEAREST ANCESTOR IN %s", set); break;
      default:
        if (r.nstr && pg_chance(g, 50))
          pg_put(b, " |> TREE MERGE INTO PARENT BY %s AGGREGATE COUNT(*) AS mn%d", r.strs[pg_rnd(g, r.nstr)], ext);
        else
          pg_put(b, " |> TREE CONTRACT AT (SELECT 1 AS id) AGGREGATE COUNT(*) AS mn%d", ext);
        char n1[16];
        snprintf(n1, sizeof n1, "mn%d", ext++);
        pg_add_int(&r, n1);
        break;
      }
      continue;
    }
    if (kind == 8 && r.tree) {
      pg_put(b, " |> TREE ACCUMULATE %s COUNT(*) AS tn%d, %s(%s) AS ta%d", pg_chance(g, 50) ? "UP" : "DOWN",
             ext, pg_chance(g, 50) ? "SUM" : "MAX", pg_chance(g, 50) ? "depth" : "dur", ext);
      char n1[16], n2[16];
      snprintf(n1, sizeof n1, "tn%d", ext);
      snprintf(n2, sizeof n2, "ta%d", ext);
      pg_add_int(&r, n1);
      pg_add_int(&r, n2);
      ext++;
      continue;
    }
    switch (kind) {
    case 0:
    case 1:
      pg_put(b, " |> WHERE ");
      pg_pred(g, &r, b);
      break;
    case 2: {
      char n[16];
      snprintf(n, sizeof n, "e%d", ext++);
      pg_put(b, " |> EXTEND ");
      if (pg_chance(g, 25)) pg_window(g, &r, b);
      else pg_int_expr(g, &r, b);
      pg_put(b, " AS %s", n);
      pg_add_int(&r, n);
      break;
    }
    case 3: {
      const char *c = pg_int(g, &r);
      if (r.tree && (!strcmp(c, "id") || !strcmp(c, "parent_id"))) c = "dur";
      pg_put(b, " |> SET %s = ", c);
      pg_int_expr(g, &r, b);
      break;
    }
    case 4: {   /* AGGREGATE: the row becomes the keys and the aggregates */
      pg_row nr = {0};
      int nk = pg_rnd(g, 3);
      char aggs[512] = "";
      size_t an = 0;
      const char *fn[] = {"SUM", "MIN", "MAX", "COUNT", "COUNT(DISTINCT "};
      int na = 1 + pg_rnd(g, 3);
      for (int a = 0; a < na; a++) {
        char n[16];
        snprintf(n, sizeof n, "a%d", ext++);
        int f = pg_rnd(g, 7);
        if (f < 5)
          an += (size_t)snprintf(aggs + an, sizeof aggs - an, "%s%s%s%s) AS %s", a ? ", " : "",
                                 fn[f], f < 4 ? "(" : "", pg_int(g, &r), n);
        else   /* ARG_MAX / ARG_MIN of integers: an integer */
          an += (size_t)snprintf(aggs + an, sizeof aggs - an, "%s%s(%s, %s) AS %s", a ? ", " : "",
                                 f == 5 ? "ARG_MAX" : "ARG_MIN", pg_int(g, &r), pg_int(g, &r), n);
        pg_add_int(&nr, n);
      }
      pg_put(b, " |> AGGREGATE COUNT(*) AS n%d, %s", ext, aggs);
      char cn[16];
      snprintf(cn, sizeof cn, "n%d", ext++);
      pg_add_int(&nr, cn);
      for (int i = 0; i < nk; i++) {
        int str = r.nstr && pg_chance(g, 50);
        const char *key = str ? r.strs[pg_rnd(g, r.nstr)] : pg_int(g, &r);
        char n[16];
        snprintf(n, sizeof n, "k%d", ext++);
        /* strings group as they are, integers in 97 buckets */
        pg_put(b, "%s%s%s AS %s", i ? ", " : " GROUP BY ", key, str ? "" : " % 97", n);
        if (str) snprintf(nr.strs[nr.nstr++], sizeof nr.strs[0], "%s", n);
        else pg_add_int(&nr, n);
      }
      r = nr;
      break;
    }
    case 5: {
      const char *c = pg_int(g, &r);
      pg_put(b, " |> ORDER BY %s%s", c, pg_chance(g, 50) ? " DESC" : "");
      if (r.nstr && pg_chance(g, 50))
        pg_put(b, ", %s%s", r.strs[pg_rnd(g, r.nstr)], pg_chance(g, 30) ? " COLLATE NOCASE" : "");
      break;
    }
    case 6:
      pg_put(b, " |> LIMIT %d", pg_rnd(g, 20000));
      if (pg_chance(g, 30)) pg_put(b, " OFFSET %d", pg_rnd(g, 100));
      break;
    default: {   /* SELECT a few columns (keeps the tree columns if there) */
      pg_row nr = {.tree = r.tree};
      pg_put(b, " |> SELECT ");
      int first = 1;
      if (r.tree) {
        pg_put(b, "id, parent_id");
        pg_add_int(&nr, "id");
        pg_add_int(&nr, "parent_id");
        first = 0;
      }
      for (int i = 0; i < r.nint; i++) {
        if ((r.tree && (!strcmp(r.ints[i], "id") || !strcmp(r.ints[i], "parent_id"))) ||
            (!first && !pg_chance(g, 60)))
          continue;
        pg_put(b, "%s%s", first ? "" : ", ", r.ints[i]);
        pg_add_int(&nr, r.ints[i]);
        first = 0;
      }
      for (int i = 0; i < r.nstr; i++)
        if (pg_chance(g, 50)) {
          pg_put(b, ", %s", r.strs[i]);
          snprintf(nr.strs[nr.nstr++], sizeof nr.strs[0], "%s", r.strs[i]);
        }
      r = nr;
      break;
    }
    }
    if (kind == 4) r.tree = 0;
  }
}

/* FNV-1a over every value of the result, in row order, and the shape. */
static uint64_t pg_mix(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 0x100000001b3ull;
  return h;
}

static uint64_t pg_digest(const pj_result *r) {
  uint64_t h = 0xcbf29ce484222325ull;
  int64_t rows = pj_result_row_count(r);
  int cols = pj_result_column_count(r);
  h = pg_mix(h, &rows, sizeof rows);
  h = pg_mix(h, &cols, sizeof cols);
  for (int64_t i = 0; i < rows; i++)
    for (int c = 0; c < cols; c++) {
      if (pj_result_is_null(r, i, c)) {
        h = pg_mix(h, "N", 1);
        continue;
      }
      switch (pj_result_column_type(r, c)) {
      case PJ_TYPE_DOUBLE: {
        double d = pj_result_double(r, i, c);
        h = pg_mix(h, &d, sizeof d);
        break;
      }
      case PJ_TYPE_STRING: {
        size_t len = 0;
        const char *s = pj_result_text(r, i, c, &len);
        h = pg_mix(h, s, len);
        break;
      }
      default: {
        int64_t v = pj_result_int64(r, i, c);
        h = pg_mix(h, &v, sizeof v);
      }
      }
    }
  return h;
}

/* What one pipeline gave: a digest, or the error message. */
typedef struct pg_outcome {
  pj_status status;
  uint64_t digest;
  int64_t rows;
  char err[256];
} pg_outcome;

static int pg_cb(void *ctx, const pj_result *r, const char *t, size_t l, size_t o) {
  (void)t, (void)l, (void)o;
  pg_outcome *out = ctx;
  out->digest = pg_digest(r);
  out->rows = pj_result_row_count(r);
  return 0;
}

static void pg_run(pj_engine *e, const char *text, pg_outcome *out) {
  memset(out, 0, sizeof *out);
  out->status = pj_engine_exec(e, text, pg_cb, out);
  if (out->status != PJ_OK) snprintf(out->err, sizeof out->err, "%s", pj_engine_errmsg(e));
}

/* Same result, or the same error. */
static int pg_same(const pg_outcome *a, const pg_outcome *b) {
  if (a->status != b->status) return 0;
  if (a->status != PJ_OK) return !strcmp(a->err, b->err);
  return a->digest == b->digest && a->rows == b->rows;
}

#endif
