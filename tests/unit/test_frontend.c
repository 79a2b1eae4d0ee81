/*
 * test_frontend.c — lexer, statement splitter and parser.
 *
 * Expressions are checked through a compact S-expression rendering
 * ("(+ 1 (* 2 3))"), so precedence tests read like the trees they expect.
 * Error tests check the exact message and byte offset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "frontend/ast.h"
#include "ir/plan.h"

static rt_arena g_arena;

static int setup(void **state) {
  rt_arena_init(&g_arena);
  return 0;
}

static int teardown(void **state) {
  rt_arena_free(&g_arena);
  return 0;
}

/* ---- helpers ---------------------------------------------------------- */

static fe_token *lex(const char *s, int *n) {
  rt_err err = {0};
  fe_token *t = fe_lex(&g_arena, s, strlen(s), n, &err);
  if (!t) fail_msg("lex failed: %s", err.msg);
  return t;
}

static fe_pipeline *parse(const char *s) {
  rt_err err = {0};
  fe_pipeline *p = fe_parse_pipeline(&g_arena, s, strlen(s), &err);
  if (!p) fail_msg("parse of [%s] failed: %s at %d", s, err.msg, err.offset);
  assert_false(err.set);
  return p;
}

static fe_stmt *stmt(const char *s) {
  rt_err err = {0};
  fe_stmt *st = fe_parse_stmt(&g_arena, s, 0, (int)strlen(s), &err);
  if (!st) fail_msg("parse of [%s] failed: %s", s, err.msg);
  return st;
}

/* Parses s as a pipeline or statement and checks the error. */
static void check_error(const char *s, const char *msg, int offset) {
  rt_err err = {0};
  fe_stmt *st = fe_parse_stmt(&g_arena, s, 0, (int)strlen(s), &err);
  if (st) fail_msg("[%s] parsed but should fail with %s", s, msg);
  assert_true(err.set);
  assert_string_equal(err.msg, msg);
  assert_int_equal(err.offset, offset);
}

static void sx_rec(const fe_expr *e, char *buf, size_t cap);

static void sx_append(char *buf, size_t cap, const char *fmt, ...) {
  size_t n = strlen(buf);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + n, cap - n, fmt, ap);
  va_end(ap);
}

static void sx_args(const fe_expr *e, char *buf, size_t cap) {
  for (int i = 0; i < e->nargs; i++) {
    sx_append(buf, cap, " ");
    sx_rec(e->args[i], buf, cap);
  }
}

static void sx_rec(const fe_expr *e, char *buf, size_t cap) {
  switch (e->kind) {
  case AX_INT: sx_append(buf, cap, "%lld", (long long)e->ival); break;
  case AX_FLOAT: sx_append(buf, cap, "%g", e->fval); break;
  case AX_STRING: sx_append(buf, cap, "'%s'", e->str); break;
  case AX_NULL: sx_append(buf, cap, "NULL"); break;
  case AX_TRUE: sx_append(buf, cap, "TRUE"); break;
  case AX_FALSE: sx_append(buf, cap, "FALSE"); break;
  case AX_PARAM: sx_append(buf, cap, "%s", e->str); break;
  case AX_COLUMN:
    if (e->qual) sx_append(buf, cap, "%s.", e->qual);
    sx_append(buf, cap, "%s", e->name);
    break;
  case AX_UNARY:
  case AX_BINARY:
    /* the operator's spelling in exprs.def (fe_op is ir_exkind) */
    sx_append(buf, cap, "(%s%s", e->negated ? "NOT " : "",
              e->op == FO_PLUS ? "+" : ir_ex_names[e->op]);
    sx_args(e, buf, cap);
    sx_append(buf, cap, ")");
    break;
  case AX_ISNULL:
    sx_append(buf, cap, e->negated ? "(NOTNULL" : "(ISNULL");
    sx_args(e, buf, cap);
    sx_append(buf, cap, ")");
    break;
  case AX_IN:
    sx_append(buf, cap, e->negated ? "(NOT IN" : "(IN");
    sx_args(e, buf, cap);
    if (e->sub) sx_append(buf, cap, " (SELECT %s)", e->sub->sql ? e->sub->sql : "pipeline");
    sx_append(buf, cap, ")");
    break;
  case AX_EXISTS:
  case AX_SUBQUERY:
    sx_append(buf, cap, "(%s %s)", e->kind == AX_EXISTS ? "EXISTS" : "SUBQUERY",
              e->sub->sql ? e->sub->sql : "pipeline");
    break;
  case AX_BETWEEN:
    sx_append(buf, cap, e->negated ? "(NOT BETWEEN" : "(BETWEEN");
    sx_args(e, buf, cap);
    sx_append(buf, cap, ")");
    break;
  case AX_CASE:
    sx_append(buf, cap, "(CASE");
    if (e->operand) {
      sx_append(buf, cap, " ");
      sx_rec(e->operand, buf, cap);
    }
    for (int i = 0; i < e->nwhens; i++) {
      sx_append(buf, cap, " (");
      sx_rec(e->whens[i], buf, cap);
      sx_append(buf, cap, " ");
      sx_rec(e->thens[i], buf, cap);
      sx_append(buf, cap, ")");
    }
    if (e->els) {
      sx_append(buf, cap, " ELSE ");
      sx_rec(e->els, buf, cap);
    }
    sx_append(buf, cap, ")");
    break;
  case AX_CAST:
    sx_append(buf, cap, "(CAST");
    sx_args(e, buf, cap);
    sx_append(buf, cap, " %s)", e->str);
    break;
  case AX_COLLATE:
    sx_append(buf, cap, "(COLLATE");
    sx_args(e, buf, cap);
    sx_append(buf, cap, " %s)", e->str);
    break;
  case AX_CALL:
    sx_append(buf, cap, "(%s%s%s", e->str, e->distinct ? " DISTINCT" : "", e->star ? " *" : "");
    sx_args(e, buf, cap);
    sx_append(buf, cap, ")");
    break;
  }
}

/* The WHERE expression of "FROM t |> WHERE <s>", rendered. */
static const char *where_sx(const char *s) {
  char q[4096];
  snprintf(q, sizeof q, "FROM t |> WHERE %s", s);
  fe_pipeline *p = parse(q);
  assert_int_equal(p->nstages, 1);
  assert_int_equal(p->stages[0].kind, ST_WHERE);
  static char buf[4096];
  buf[0] = 0;
  sx_rec(p->stages[0].expr, buf, sizeof buf);
  return buf;
}

/* ---- lexer ------------------------------------------------------------ */

static void test_lex_kinds(void **state) {
  int n;
  fe_token *t = lex("FROM \"a\"\"b\" `c``d` [e f] 'it''s' 42 0x1F 1.5 .5 1e9 1.5E-3 "
                    "? ?12 $x :y @z |> | > <= >= != <> == << >> || -- c\n /* c */ ;",
                    &n);
  const fe_tokkind kinds[] = {TK_IDENT, TK_QIDENT, TK_QIDENT, TK_QIDENT, TK_STRING, TK_INT,
                              TK_INT, TK_FLOAT, TK_FLOAT, TK_FLOAT, TK_FLOAT, TK_PARAM,
                              TK_PARAM, TK_PARAM, TK_PARAM, TK_PARAM, TK_PIPE, TK_PUNCT,
                              TK_PUNCT, TK_PUNCT, TK_PUNCT, TK_PUNCT, TK_PUNCT, TK_PUNCT,
                              TK_PUNCT, TK_PUNCT, TK_PUNCT, TK_PUNCT, TK_EOF};
  assert_int_equal(n, (int)(sizeof kinds / sizeof kinds[0]));
  for (int i = 0; i < n; i++) assert_int_equal(t[i].kind, kinds[i]);
  assert_string_equal(t[1].text, "a\"b");
  assert_string_equal(t[2].text, "c`d");
  assert_string_equal(t[3].text, "e f");
  assert_string_equal(t[4].text, "it's");
  assert_int_equal(t[4].textlen, 4);
  assert_int_equal(t[5].ival, 42);
  assert_int_equal(t[6].ival, 31);
  assert_true(t[7].fval == 1.5);
  assert_true(t[8].fval == 0.5);
  assert_true(t[9].fval == 1e9);
  assert_true(t[10].fval == 1.5e-3);
  assert_string_equal(t[11].text, "?");
  assert_string_equal(t[12].text, "?12");
  assert_string_equal(t[13].text, "$x");
  assert_string_equal(t[14].text, ":y");
  assert_string_equal(t[15].text, "@z");
  /* "| >" is two tokens: bitwise OR then greater-than. */
  assert_string_equal(t[17].text, "|");
  assert_string_equal(t[18].text, ">");
  const char *ops[] = {"<=", ">=", "!=", "<>", "==", "<<", ">>", "||", ";"};
  for (int i = 0; i < 9; i++) assert_string_equal(t[19 + i].text, ops[i]);
  /* positions */
  assert_int_equal(t[0].pos, 0);
  assert_int_equal(t[0].len, 4);
  assert_int_equal(t[1].pos, 5);
  assert_int_equal(t[1].len, 6);
}

static void test_lex_numbers(void **state) {
  int n;
  fe_token *t = lex("9223372036854775807 9223372036854775808 0xFFFFFFFFFFFFFFFF 0x000000000000000001 1. 007", &n);
  assert_int_equal(t[0].kind, TK_INT);
  assert_true(t[0].ival == INT64_MAX);
  assert_int_equal(t[1].kind, TK_FLOAT); /* too big for int64: a float, as SQLite */
  assert_true(t[1].fval == 9223372036854775808.0);
  assert_int_equal(t[2].kind, TK_INT);
  assert_int_equal(t[2].ival, -1);
  assert_int_equal(t[3].ival, 1);
  assert_int_equal(t[4].kind, TK_FLOAT);
  assert_int_equal(t[5].ival, 7);
  /* "a|>b" and "a||b" */
  t = lex("a|>b", &n);
  assert_int_equal(n, 4);
  assert_int_equal(t[1].kind, TK_PIPE);
  assert_int_equal(t[1].pos, 1);
}

static void lex_fails(const char *s, const char *msg, int offset) {
  rt_err err = {0};
  int n;
  assert_null(fe_lex(&g_arena, s, strlen(s), &n, &err));
  assert_string_equal(err.msg, msg);
  assert_int_equal(err.offset, offset);
}

static void test_lex_errors(void **state) {
  lex_fails("a 'abc", "syntax error: unterminated string", 2);
  lex_fails("a \"abc", "syntax error: unterminated quoted identifier", 2);
  lex_fails("[abc", "syntax error: unterminated quoted identifier", 0);
  lex_fails("x /* abc", "syntax error: unterminated comment", 2);
  lex_fails("x # y", "syntax error: unrecognized token '#'", 2);
  lex_fails("1abc", "syntax error: unrecognized token '1abc'", 0);
  lex_fails("x ! y", "syntax error: unrecognized token '!'", 2);
  lex_fails("0x10000000000000000", "syntax error: hex literal too big: '0x10000000000000000'", 0);
  lex_fails("a $", "syntax error: unrecognized token '$'", 2);
  /* A comment at the end without a newline is fine. */
  int n;
  fe_token *t = lex("a -- end", &n);
  assert_int_equal(n, 2);
  assert_int_equal(t[1].kind, TK_EOF);
  assert_int_equal(t[1].pos, 8);
}

/* ---- splitter --------------------------------------------------------- */

static void check_split(const char *s, int count, const char *const *want) {
  fe_span *sp;
  int n = fe_split(&g_arena, s, strlen(s), &sp);
  assert_int_equal(n, count);
  for (int i = 0; i < n; i++) {
    char buf[512];
    snprintf(buf, sizeof buf, "%.*s", sp[i].len, s + sp[i].pos);
    assert_string_equal(buf, want[i]);
  }
}

static void test_split(void **state) {
  check_split("SELECT 1; SELECT 2", 2, (const char *[]){"SELECT 1", "SELECT 2"});
  check_split(" ; ;SELECT ';' ; -- x;\n ;", 1, (const char *[]){"SELECT ';'"});
  check_split("SELECT \"a;b\", `c;d`, [e;f] /* ; */ FROM t;", 1,
              (const char *[]){"SELECT \"a;b\", `c;d`, [e;f] /* ; */ FROM t"});
  check_split("FROM (SELECT 1; ) |> WHERE x; SELECT 'it''s;'", 2,
              (const char *[]){"FROM (SELECT 1; ) |> WHERE x", "SELECT 'it''s;'"});
  check_split("CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO u VALUES(1); "
              "UPDATE u SET a = CASE WHEN 1 THEN 2 END; END; SELECT 1;",
              2,
              (const char *[]){"CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO u "
                               "VALUES(1); UPDATE u SET a = CASE WHEN 1 THEN 2 END; END",
                               "SELECT 1"});
  check_split("create temp trigger tr after delete on t begin delete from u; end; "
              "BEGIN; END;",
              3,
              (const char *[]){"create temp trigger tr after delete on t begin delete from u; end",
                               "BEGIN", "END"});
  /* An unbalanced ')' does not swallow later statements. */
  check_split("SELECT 1); SELECT 2", 2, (const char *[]){"SELECT 1)", "SELECT 2"});
  check_split("-- only a comment\n/* and another */", 0, NULL);
  check_split("", 0, NULL);
  /* Unterminated quote runs to the end. */
  check_split("SELECT 'a; SELECT 2", 1, (const char *[]){"SELECT 'a; SELECT 2"});
}

/* ---- statements ------------------------------------------------------- */

static void test_statements(void **state) {
  fe_stmt *st = stmt("SELECT * FROM t WHERE x = 'a|>b'");
  assert_int_equal(st->kind, STMT_SQL);
  assert_string_equal(st->sql, "SELECT * FROM t WHERE x = 'a|>b'");

  /* "| >" is a bitwise OR and a comparison, not a pipe. */
  st = stmt("SELECT 1 | > 2");
  assert_int_equal(st->kind, STMT_SQL);
  /* Tokens we do not know are left for SQLite to report. */
  st = stmt("SELECT # FROM t");
  assert_int_equal(st->kind, STMT_SQL);
  st = stmt("-- leading comment\nFROM t");
  assert_int_equal(st->kind, STMT_PIPELINE);
  assert_int_equal(st->pipe->pos, 19);

  /* Pipe keywords are not reserved: plain SQL may use them as names. */
  st = stmt("CREATE TABLE extend(drop INT, rename INT, per INT)");
  assert_int_equal(st->kind, STMT_SQL);

  st = stmt("from slice |> where dur > 0");
  assert_int_equal(st->kind, STMT_PIPELINE);
  assert_int_equal(st->pipe->nstages, 1);

  st = stmt("INTERVAL INTERSECTION OF (a, b)");
  assert_int_equal(st->kind, STMT_PIPELINE);

  st = stmt("CREATE OR REPLACE PERFETTO TABLE foo(id LONG, name STRING, p JOINID(slice.id)) AS "
            "FROM slice |> SELECT id, name, parent_id AS p");
  assert_int_equal(st->kind, STMT_CREATE_TABLE);
  assert_true(st->or_replace);
  assert_string_equal(st->table.name, "foo");
  assert_int_equal(st->table.pos, 33);
  assert_int_equal(st->ncoldefs, 3);
  assert_string_equal(st->coldefs[0].name.name, "id");
  assert_string_equal(st->coldefs[0].type, "LONG");
  assert_string_equal(st->coldefs[2].type, "JOINID(slice.id)");
  assert_non_null(st->pipe);
  assert_null(st->sql);

  const char *q = "create perfetto table bar as select 1 as x  -- trailing";
  st = stmt(q);
  assert_int_equal(st->kind, STMT_CREATE_TABLE);
  assert_false(st->or_replace);
  assert_int_equal(st->ncoldefs, -1);
  assert_null(st->pipe);
  assert_string_equal(st->sql, "select 1 as x");
  assert_int_equal(st->sqlpos, 29);

  st = stmt("PERFETTO PRAGMA pipelines = 1");
  assert_int_equal(st->kind, STMT_PRAGMA);
  assert_string_equal(st->pragma.name, "pipelines");
  assert_string_equal(st->pragma_value, "1");
  assert_int_equal(st->valuepos, 28);
  st = stmt("perfetto pragma foo = 'bar baz'");
  assert_string_equal(st->pragma_value, "'bar baz'");

  /* Offsets stay relative to the whole script. */
  const char *script = "SELECT 1;\nFROM t |> WHERE x";
  rt_err err = {0};
  st = fe_parse_stmt(&g_arena, script, 10, 17, &err);
  assert_non_null(st);
  assert_int_equal(st->pipe->pos, 10);
  assert_int_equal(st->pipe->stages[0].pos, 20);
  assert_int_equal(st->pipe->stages[0].expr->pos, 26);
}

/* ---- sources ---------------------------------------------------------- */

static void test_sources(void **state) {
  fe_pipeline *p = parse("FROM main.slice AS s");
  assert_int_equal(p->src->kind, SRC_NAME);
  assert_string_equal(p->src->schema, "main");
  assert_string_equal(p->src->name, "slice");
  assert_string_equal(p->src->alias.name, "s");
  assert_int_equal(p->src->alias.pos, 19);
  assert_int_equal(p->nstages, 0);

  p = parse("FROM slice s");
  assert_string_equal(p->src->alias.name, "s");
  p = parse("FROM \"my table\"");
  assert_string_equal(p->src->name, "my table");
  assert_null(p->src->alias.name);

  const char *q = "FROM ( SELECT a, (b) FROM t ) q |> WHERE a";
  p = parse(q);
  assert_int_equal(p->src->kind, SRC_SQL);
  assert_string_equal(p->src->sql, "SELECT a, (b) FROM t");
  assert_int_equal(p->src->sqlpos, 7);
  assert_string_equal(p->src->alias.name, "q");

  p = parse("FROM (FROM t |> WHERE x |> SELECT x) AS sub |> SELECT sub.x");
  assert_int_equal(p->src->kind, SRC_PIPELINE);
  assert_int_equal(p->src->pipe->nstages, 2);
  assert_int_equal(p->src->pipe->pos, 6);
  assert_string_equal(p->src->alias.name, "sub");
  assert_int_equal(p->nstages, 1);

  p = parse("INTERVAL INTERSECTION OF (slice AS a, (SELECT * FROM sched) b, "
            "(FROM c |> WHERE x) AS c, thread) PER cpu, utid");
  fe_source *s = p->src;
  assert_int_equal(s->kind, SRC_INTERSECT);
  assert_int_equal(s->nops, 4);
  assert_int_equal(s->ops[0]->kind, SRC_NAME);
  assert_string_equal(s->ops[0]->alias.name, "a");
  assert_int_equal(s->ops[1]->kind, SRC_SQL);
  assert_string_equal(s->ops[1]->alias.name, "b");
  assert_int_equal(s->ops[2]->kind, SRC_PIPELINE);
  /* A named operand without alias is aliased by its name. */
  assert_string_equal(s->ops[3]->alias.name, "thread");
  assert_int_equal(s->nper, 2);
  assert_string_equal(s->per[1].name, "utid");
  assert_int_equal(p->endpos, (int)strlen("INTERVAL INTERSECTION OF (slice AS a, (SELECT * FROM "
                                          "sched) b, (FROM c |> WHERE x) AS c, thread) PER cpu, "
                                          "utid"));
  /* A trailing ';' is accepted by fe_parse_pipeline. */
  parse("FROM t;");
}

/* ---- stages ----------------------------------------------------------- */

static void test_stages(void **state) {
  fe_pipeline *p = parse(
      "FROM t |> WHERE x > 1 |> SELECT a, b AS c, d e, *, t.*, * EXCEPT (a, b), "
      "q.* REPLACE (a + 1 AS a, 2 AS b) |> EXTEND x * 2 AS y |> SET a = b, b = a "
      "|> DROP a, \"b\" |> RENAME a AS b, c d |> AS q |> ORDER BY a DESC NULLS FIRST, b, c ASC "
      "NULLS LAST |> LIMIT 10 OFFSET 5 |> AGGREGATE COUNT(*) AS n, SUM(dur) AS s GROUP BY "
      "a, b AS bb |> TREE ACCUMULATE UP SUM(dur) AS total |> TREE ACCUMULATE DOWN COUNT(*) AS k "
      "|> INTERVAL FLATTEN PER cpu AGGREGATE MAX(x) AS m |> INTERVAL FLATTEN AGGREGATE COUNT(*) AS c "
      "|> LEFT INTERVAL JOIN sched AS s COVERING BEGIN PER cpu |> INTERVAL JOIN (SELECT 1) j "
      "WITHIN BOUNDS |> INTERVAL JOIN sched OVERLAPPING BOUNDS "
      "|> INTERVAL FILL GAPS WITH bg PER cpu, utid |> AGGREGATE GROUP BY x");
  const fe_stagekind kinds[] = {ST_WHERE, ST_SELECT, ST_EXTEND, ST_SET, ST_DROP, ST_RENAME,
                                ST_AS, ST_ORDER_BY, ST_LIMIT, ST_AGGREGATE, ST_TREE, ST_TREE,
                                ST_FLATTEN, ST_FLATTEN, ST_IJOIN, ST_IJOIN, ST_IJOIN,
                                ST_FILL_GAPS, ST_AGGREGATE};
  assert_int_equal(p->nstages, (int)(sizeof kinds / sizeof kinds[0]));
  for (int i = 0; i < p->nstages; i++) assert_int_equal(p->stages[i].kind, kinds[i]);
  fe_stage *st = p->stages;
  assert_int_equal(st[0].pos, 10);

  fe_stage *sel = &st[1];
  assert_int_equal(sel->nitems, 7);
  assert_int_equal(sel->items[0].kind, IT_EXPR);
  assert_null(sel->items[0].name);
  assert_string_equal(sel->items[1].name, "c");
  assert_string_equal(sel->items[2].name, "e");
  assert_int_equal(sel->items[3].kind, IT_STAR);
  assert_int_equal(sel->items[4].kind, IT_QSTAR);
  assert_string_equal(sel->items[4].qual, "t");
  assert_int_equal(sel->items[5].kind, IT_STAR);
  assert_int_equal(sel->items[5].nexcept, 2);
  assert_string_equal(sel->items[5].except[1].name, "b");
  assert_int_equal(sel->items[6].kind, IT_QSTAR);
  assert_int_equal(sel->items[6].nreplace, 2);
  assert_string_equal(sel->items[6].replace[0].name, "a");
  assert_int_equal(sel->items[6].replace[0].expr->kind, AX_BINARY);

  assert_string_equal(st[2].items[0].name, "y");
  assert_int_equal(st[3].nassign, 2);
  assert_string_equal(st[3].assign[1].col.name, "b");
  assert_string_equal(st[3].assign[1].expr->name, "a");
  assert_int_equal(st[4].nnames, 2);
  assert_string_equal(st[4].names[1].name, "b");
  assert_int_equal(st[5].nassign, 2);
  assert_string_equal(st[5].assign[1].col.name, "c");
  assert_string_equal(st[5].assign[1].newname.name, "d");
  assert_string_equal(st[6].alias.name, "q");

  fe_stage *ob = &st[7];
  assert_int_equal(ob->norder, 3);
  assert_true(ob->order[0].desc);
  assert_int_equal(ob->order[0].nulls, 1);
  assert_false(ob->order[1].desc);
  assert_int_equal(ob->order[1].nulls, 0);
  assert_int_equal(ob->order[2].nulls, 2);
  assert_int_equal(st[8].limit->ival, 10);
  assert_int_equal(st[8].offset->ival, 5);

  fe_stage *ag = &st[9];
  assert_int_equal(ag->nitems, 2);
  assert_true(ag->items[0].expr->star);
  assert_string_equal(ag->items[0].expr->str, "COUNT");
  assert_string_equal(ag->items[1].name, "s");
  assert_int_equal(ag->ngroup, 2);
  assert_string_equal(ag->group[1].name, "bb");

  assert_true(st[10].up);
  assert_false(st[11].up);
  assert_string_equal(st[10].items[0].name, "total");
  assert_int_equal(st[12].nper, 1);
  assert_string_equal(st[12].items[0].name, "m");
  assert_int_equal(st[13].nper, 0);

  assert_true(st[14].left);
  assert_int_equal(st[14].rel, JR_COVERING_BEGIN);
  assert_string_equal(st[14].src->alias.name, "s");
  assert_int_equal(st[14].nper, 1);
  assert_false(st[15].left);
  assert_int_equal(st[15].src->kind, SRC_SQL);
  assert_string_equal(st[15].src->alias.name, "j");
  assert_int_equal(st[15].rel, JR_WITHIN_BOUNDS);
  assert_string_equal(st[16].src->alias.name, "sched");
  assert_int_equal(st[16].rel, JR_OVERLAPPING_BOUNDS);

  assert_string_equal(st[17].src->name, "bg");
  assert_null(st[17].src->alias.name);
  assert_int_equal(st[17].nper, 2);
  assert_int_equal(st[18].nitems, 0);
  assert_int_equal(st[18].ngroup, 1);

  /* Every relationship. */
  const char *rels[] = {"OVERLAPPING BOUNDS", "COVERING BEGIN", "COVERING END",
                        "COVERING BOUNDS", "WITHIN BOUNDS"};
  for (int i = 0; i < 5; i++) {
    char q[128];
    snprintf(q, sizeof q, "FROM t |> INTERVAL JOIN u AS x %s", rels[i]);
    assert_int_equal(parse(q)->stages[0].rel, (fe_joinrel)i);
  }
  /* Keywords are case-insensitive; pipe keywords work as column names. */
  p = parse("from t |> extend extend + 1 as per |> drop rename |> where tree and interval");
  assert_int_equal(p->nstages, 3);
  assert_string_equal(p->stages[1].names[0].name, "rename");
}

/* ---- expressions ------------------------------------------------------ */

static void test_precedence(void **state) {
  assert_string_equal(where_sx("a OR b AND c"), "(OR a (AND b c))");
  assert_string_equal(where_sx("a AND b OR c"), "(OR (AND a b) c)");
  assert_string_equal(where_sx("1 + 2 * 3"), "(+ 1 (* 2 3))");
  assert_string_equal(where_sx("1 - 2 - 3"), "(- (- 1 2) 3)");
  assert_string_equal(where_sx("a || b * c"), "(* (|| a b) c)");
  assert_string_equal(where_sx("NOT a = b"), "(NOT (= a b))");
  assert_string_equal(where_sx("NOT a AND b"), "(AND (NOT a) b)");
  assert_string_equal(where_sx("-a * b"), "(* (- a) b)");
  assert_string_equal(where_sx("- - ~x"), "(- (- (~ x)))");
  assert_string_equal(where_sx("a < b = c < d"), "(= (< a b) (< c d))");
  assert_string_equal(where_sx("a & b + 1 << 2"), "(<< (& a (+ b 1)) 2)");
  assert_string_equal(where_sx("a | b > c"), "(> (| a b) c)");
  assert_string_equal(where_sx("x BETWEEN 1 AND 2 AND y"), "(AND (BETWEEN x 1 2) y)");
  assert_string_equal(where_sx("x NOT BETWEEN a + 1 AND b"), "(NOT BETWEEN x (+ a 1) b)");
  assert_string_equal(where_sx("x IN (1, 2, 3) OR x NOT IN ()"),
                      "(OR (IN x 1 2 3) (NOT IN x))");
  assert_string_equal(where_sx("a IS NULL AND b IS NOT NULL AND c ISNULL AND d NOTNULL AND e NOT NULL"),
                      "(AND (AND (AND (AND (IS a NULL) (IS NOT b NULL)) (ISNULL c)) (NOTNULL d)) (NOTNULL e))");
  /* IS [NOT] NULL is IS with a NULL operand, so || binds tighter (SQLite). */
  assert_string_equal(where_sx("a IS NOT NULL || 'x'"), "(IS NOT a (|| NULL 'x'))");
  assert_string_equal(where_sx("a IS b AND a IS NOT b"), "(AND (IS a b) (IS NOT a b))");
  assert_string_equal(where_sx("a IS DISTINCT FROM b OR a IS NOT DISTINCT FROM b"),
                      "(OR (IS NOT a b) (IS a b))");
  assert_string_equal(where_sx("a LIKE 'x%' AND b NOT GLOB 'y*' AND c NOT LIKE d AND e GLOB f"),
                      "(AND (AND (AND (LIKE a 'x%') (NOT GLOB b 'y*')) (NOT LIKE c d)) (GLOB e f))");
  assert_string_equal(where_sx("(a OR b) AND c"), "(AND (OR a b) c)");
  assert_string_equal(where_sx("a == b != c <> d"), "(!= (!= (= a b) c) d)");
  assert_string_equal(where_sx("1 = NOT 0"), "(= 1 (NOT 0))");
  assert_string_equal(where_sx("a % b / c"), "(/ (% a b) c)");
  /* COLLATE is postfix, tighter than || and looser than unary operators. */
  assert_string_equal(where_sx("a = b COLLATE NOCASE"), "(= a (COLLATE b NOCASE))");
  assert_string_equal(where_sx("a || b COLLATE nocase"), "(|| a (COLLATE b nocase))");
  assert_string_equal(where_sx("-a COLLATE RTRIM"), "(COLLATE (- a) RTRIM)");
  assert_string_equal(where_sx("a COLLATE NOCASE COLLATE BINARY < b"),
                      "(< (COLLATE (COLLATE a NOCASE) BINARY) b)");
  /* ESCAPE is LIKE's third argument. */
  assert_string_equal(where_sx("a LIKE 'x!%' ESCAPE '!' AND b NOT LIKE c ESCAPE d || e"),
                      "(AND (LIKE a 'x!%' '!') (NOT LIKE b c (|| d e)))");
}

static void test_expr_forms(void **state) {
  assert_string_equal(where_sx("CASE WHEN a THEN 1 WHEN b THEN 2 ELSE 3 END"),
                      "(CASE (a 1) (b 2) ELSE 3)");
  assert_string_equal(where_sx("CASE x WHEN 1 THEN 'one' END"), "(CASE x (1 'one'))");
  assert_string_equal(where_sx("CAST(x AS INTEGER) + CAST(y AS VARCHAR(10))"),
                      "(+ (CAST x INTEGER) (CAST y VARCHAR(10)))");
  assert_string_equal(where_sx("count(*) + f() + g(DISTINCT x) + h(a, b + 1)"),
                      "(+ (+ (+ (count *) (f)) (g DISTINCT x)) (h a (+ b 1)))");
  assert_string_equal(where_sx("replace(a, 'x', 'y') = t.\"c d\""),
                      "(= (replace a 'x' 'y') t.c d)");
  assert_string_equal(where_sx("? + ?2 + $x + :y + @z"), "(+ (+ (+ (+ ? ?2) $x) :y) @z)");
  assert_string_equal(where_sx("NULL IS TRUE OR FALSE"), "(OR (IS NULL TRUE) FALSE)");
  assert_string_equal(where_sx("1.5 + 'it''s'"), "(+ 1.5 'it's')");
  assert_string_equal(where_sx("-9223372036854775808"), "-9223372036854775808");
  assert_string_equal(where_sx("- 9223372036854775807"), "(- 9223372036854775807)");

  /* Positions: pos, oppos, endpos, namepos. */
  const char *q = "FROM t |> WHERE q.a + (b * 2)";
  fe_pipeline *p = parse(q);
  fe_expr *e = p->stages[0].expr;
  assert_int_equal(e->pos, 16);
  assert_int_equal(e->oppos, 20);
  assert_int_equal(e->endpos, (int)strlen(q));
  assert_int_equal(e->args[0]->namepos, 18);
  assert_string_equal(e->args[0]->qual, "q");
  assert_int_equal(e->args[1]->pos, 22);
  assert_int_equal(e->args[1]->oppos, 25);
  assert_int_equal(e->height, 3);
}

/* ---- errors ----------------------------------------------------------- */

static void test_errors(void **state) {
  check_error("SELECT 1 |> 2",
              "syntax error near '|>': pipe operators need a pipeline that starts with FROM", 9);
  check_error("CREATE PERFETTO TABLE x AS SELECT 1 |> WHERE x",
              "CREATE PERFETTO TABLE: syntax error near '|>': pipe operators need a pipeline "
              "that starts with FROM",
              36);
  check_error("FROM t |> WHERE", "WHERE: syntax error near end of input: expected an expression",
              15);
  check_error("FROM t |> WHERE a = ", "WHERE: syntax error near end of input: expected an expression",
              20);
  check_error("FROM t |> FOO x",
              "PIPELINE: syntax error near 'FOO': expected a pipe stage (WHERE, SELECT, EXTEND, "
              "SET, DROP, RENAME, AS, ORDER BY, LIMIT, AGGREGATE, TREE ACCUMULATE, TREE KEEP, "
              "TREE DROP, TREE PRUNE, TREE CONTRACT, TREE ABSORB, TREE REPARENT, TREE MERGE, INTERVAL "
              "FLATTEN, INTERVAL JOIN, INTERVAL FILL GAPS, INTERVAL SPLIT, INTERVAL SUBTRACT, INTERVAL MERGE, INTERVAL SET BOUNDS, INTERVAL QUANTIZE, INTERVAL FIND, INTERVAL KEEP IF, INTERVAL DROP IF, JOIN, DISTINCT, UNION, INTERSECT, EXCEPT, FORK, SQL)",
              10);
  check_error("FROM t |>", "PIPELINE: syntax error near end of input: expected a pipe stage "
              "(WHERE, SELECT, EXTEND, SET, DROP, RENAME, AS, ORDER BY, LIMIT, AGGREGATE, TREE "
              "ACCUMULATE, TREE KEEP, TREE DROP, TREE PRUNE, TREE CONTRACT, TREE ABSORB, TREE REPARENT, "
              "TREE MERGE, INTERVAL FLATTEN, INTERVAL JOIN, INTERVAL FILL GAPS, INTERVAL SPLIT, INTERVAL SUBTRACT, INTERVAL MERGE, INTERVAL SET BOUNDS, INTERVAL QUANTIZE, INTERVAL FIND, INTERVAL KEEP IF, INTERVAL DROP IF, JOIN, DISTINCT, UNION, INTERSECT, EXCEPT, FORK, SQL)", 9);
  check_error("FROM slice WHERE x", "FROM: syntax error near 'WHERE': expected |> or end of input",
              11);
  check_error("FROM t |> SELECT a b c", "SELECT: syntax error near 'c': expected |> or end of input",
              21);
  check_error("FROM t |> ORDER x", "ORDER BY: syntax error near 'x': expected BY", 16);
  check_error("FROM t |> ORDER BY a NULLS x",
              "ORDER BY: syntax error near 'x': expected FIRST or LAST", 27);
  check_error("FROM t |> AGGREGATE COUNT(*) AS n GROUP x",
              "AGGREGATE: syntax error near 'x': expected BY", 40);
  check_error("FROM t |> TREE ACCUMULATE SIDEWAYS SUM(x) AS s",
              "TREE ACCUMULATE: syntax error near 'SIDEWAYS': expected UP or DOWN", 26);
  check_error("FROM t |> INTERVAL FLATTEN PER a SUM(x)",
              "INTERVAL FLATTEN: syntax error near 'SUM': expected AGGREGATE", 33);
  check_error("FROM t |> INTERVAL JOIN u AS x COVERING MIDDLE",
              "INTERVAL JOIN: syntax error near 'MIDDLE': expected OVERLAPPING BOUNDS, COVERING "
              "BEGIN, COVERING END, COVERING BOUNDS or WITHIN BOUNDS",
              40);
  check_error("FROM t |> INTERVAL JOIN (SELECT 1) OVERLAPPING BOUNDS",
              "INTERVAL JOIN: expected an alias for the relation: name the subquery with AS, as "
              "in (SELECT …) AS a",
              24);
  check_error("FROM t |> INTERVAL FILL GAPS bg",
              "INTERVAL FILL GAPS: syntax error near 'bg': expected WITH", 29);
  check_error("INTERVAL INTERSECTION (a, b)",
              "INTERVAL INTERSECTION OF: syntax error near '(': expected OF", 22);
  check_error("INTERVAL INTERSECTION OF (a, (SELECT 1))",
              "INTERVAL INTERSECTION OF: expected an alias for the relation: name the subquery "
              "with AS, as in (SELECT …) AS a",
              29);
  check_error("FROM (SELECT 1", "FROM: syntax error near end of input: expected ')'", 14);
  check_error("FROM ()", "FROM: syntax error near ')': expected a SELECT or a pipeline", 6);
  check_error("FROM (SELECT 1 |> WHERE x)",
              "FROM: syntax error near '|>': pipe operators need a pipeline that starts with FROM",
              15);
  check_error("FROM (FROM t |> WHERE a b) x",
              "WHERE: syntax error near 'b': expected |> or ')'", 24);
  check_error("FROM t |> WHERE 'abc", "WHERE: syntax error: unterminated string", 16);
  check_error("FROM t |> SELECT a /* x", "SELECT: syntax error: unterminated comment", 19);
  check_error("FROM t |> WHERE a # b", "WHERE: syntax error: unrecognized token '#'", 18);
  check_error("FROM t |> WHERE CASE x END",
              "WHERE: syntax error near 'END': expected WHEN", 23);
  check_error("FROM t |> WHERE x IN 1", "WHERE: syntax error near '1': expected '(' after IN", 21);
  check_error("FROM t |> WHERE x BETWEEN 1 OR 2",
              "WHERE: syntax error near 'OR': expected AND in BETWEEN", 28);
  check_error("FROM t |> SELECT f(a b)", "SELECT: syntax error near 'b': expected ',' or ')'", 21);
  check_error("FROM t |> SELECT * EXCEPT a", "SELECT: syntax error near 'a': expected '(' after EXCEPT",
              26);
  check_error("FROM t |> LIMIT", "LIMIT: syntax error near end of input: expected an expression", 15);
  check_error("CREATE PERFETTO VIEW v AS",
              "CREATE PERFETTO VIEW: syntax error near end of input: expected a pipeline or a "
              "SELECT",
              25);
  check_error("CREATE PERFETTO FUNCTION f(x) RETURNS INT AS SELECT 1",
              "CREATE PERFETTO FUNCTION: syntax error near ')': expected an argument type", 28);
  check_error("CREATE PERFETTO FUNCTION f(x INT) AS SELECT 1",
              "CREATE PERFETTO FUNCTION: syntax error near 'AS': expected RETURNS", 34);
  check_error("CREATE PERFETTO FUNCTION f() RETURNS AS SELECT 1",
              "CREATE PERFETTO FUNCTION: syntax error near 'AS': expected a return type or TABLE(…)",
              37);
  check_error("CREATE PERFETTO MACRO m(x Widget) RETURNS Expr AS 1",
              "CREATE PERFETTO MACRO: syntax error near 'Widget': expected a macro type: Expr, "
              "TableOrSubquery, ColumnName or Pipeline",
              26);
  check_error("CREATE PERFETTO MACRO m() RETURNS Expr AS",
              "CREATE PERFETTO MACRO: syntax error near end of input: expected the macro's body", 41);
  check_error("INCLUDE PERFETTO MODULE a.",
              "INCLUDE PERFETTO MODULE: syntax error near end of input: expected a name after '.'",
              26);
  check_error("INCLUDE PERFETTO MODULE a . b",
              "INCLUDE PERFETTO MODULE: syntax error near '.': expected a module name without "
              "spaces (a.b.c)",
              26);
  check_error("INCLUDE PERFETTO MODULE *",
              "INCLUDE PERFETTO MODULE: syntax error near '*': expected a package name before '.*'",
              24);
  check_error("INCLUDE PERFETTO MODULE a.b x",
              "INCLUDE PERFETTO MODULE: syntax error near 'x': expected the end of the statement", 28);
  check_error("CREATE PERFETTO THING v AS SELECT 1",
              "CREATE PERFETTO TABLE: syntax error near 'THING': expected TABLE, VIEW, FUNCTION, "
              "MACRO or INDEX",
              16);
  check_error("CREATE PERFETTO TABLE t (a INT,) AS SELECT 1",
              "CREATE PERFETTO TABLE: syntax error near ')': expected a column name", 31);
  check_error("CREATE PERFETTO TABLE t AS",
              "CREATE PERFETTO TABLE: syntax error near end of input: expected a pipeline or a "
              "SELECT",
              26);
  check_error("PERFETTO PRAGMA pipelines", "PERFETTO PRAGMA: syntax error near end of input: "
              "expected '='", 25);
  check_error("PERFETTO PRAGMA pipelines =", "PERFETTO PRAGMA: syntax error near end of input: "
              "expected a value", 27);
  /* A long token is quoted only in part. */
  check_error("FROM t |> WHERE a 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'",
              "WHERE: syntax error near ''aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...': expected |> "
              "or end of input",
              18);
}

static void test_deep_nesting(void **state) {
  enum { N = 10000 };
  size_t cap = 10 * N + 64;
  char *q = malloc(cap);
  /* 10,000 nested parentheses. */
  strcpy(q, "FROM t |> WHERE ");
  size_t n = strlen(q);
  for (int i = 0; i < N; i++) q[n++] = '(';
  q[n++] = '1';
  for (int i = 0; i < N; i++) q[n++] = ')';
  q[n] = 0;
  rt_err err = {0};
  assert_null(fe_parse_pipeline(&g_arena, q, n, &err));
  assert_string_equal(err.msg, "WHERE: expression is nested too deeply (more than 1000 levels)");
  /* 10,000 unary minus signs (spaced: "--" starts a comment). */
  strcpy(q, "FROM t |> WHERE ");
  n = strlen(q);
  for (int i = 0; i < N; i++) q[n++] = '-', q[n++] = ' ';
  q[n++] = '1';
  q[n] = 0;
  memset(&err, 0, sizeof err);
  assert_null(fe_parse_pipeline(&g_arena, q, n, &err));
  assert_string_equal(err.msg, "WHERE: expression is nested too deeply (more than 1000 levels)");
  /* A left-deep chain 1+1+…: no recursion, but the tree height is bounded. */
  strcpy(q, "FROM t |> WHERE 1");
  n = strlen(q);
  for (int i = 0; i < N; i++) q[n++] = '+', q[n++] = '1';
  q[n] = 0;
  memset(&err, 0, sizeof err);
  assert_null(fe_parse_pipeline(&g_arena, q, n, &err));
  assert_string_equal(err.msg, "WHERE: expression is nested too deeply (more than 1000 levels)");
  /* Nested calls and CASEs recurse through the same counted entry. */
  strcpy(q, "FROM t |> SELECT ");
  n = strlen(q);
  for (int i = 0; i < N; i++) memcpy(q + n, "f(", 2), n += 2;
  q[n] = 0;
  memset(&err, 0, sizeof err);
  assert_null(fe_parse_pipeline(&g_arena, q, n, &err));
  assert_string_equal(err.msg, "SELECT: expression is nested too deeply (more than 1000 levels)");
  strcpy(q, "FROM t |> SELECT ");
  n = strlen(q);
  for (int i = 0; i < N; i++) memcpy(q + n, "CASE WHEN ", 10), n += 10;
  q[n] = 0;
  memset(&err, 0, sizeof err);
  assert_null(fe_parse_pipeline(&g_arena, q, n, &err));
  assert_string_equal(err.msg, "SELECT: expression is nested too deeply (more than 1000 levels)");
  /* Nested pipelines. */
  n = 0;
  for (int i = 0; i < N; i++) memcpy(q + n, "FROM (", 6), n += 6;
  q[n] = 0;
  memset(&err, 0, sizeof err);
  assert_null(fe_parse_pipeline(&g_arena, q, n, &err));
  assert_string_equal(err.msg, "FROM: expression is nested too deeply (more than 1000 levels)");
  /* 900 levels are fine. */
  strcpy(q, "FROM t |> WHERE ");
  n = strlen(q);
  for (int i = 0; i < 900; i++) q[n++] = '(';
  q[n++] = 'x';
  for (int i = 0; i < 900; i++) q[n++] = ')';
  q[n] = 0;
  assert_non_null(parse(q));
  free(q);
}

/* Every prefix of a few valid statements must fail or succeed cleanly
 * (never crash, never read out of bounds under ASan). */
static void test_prefixes_never_crash(void **state) {
  const char *qs[] = {
    "FROM (SELECT a FROM t) AS q |> WHERE q.a BETWEEN 1 AND 2 |> SELECT * EXCEPT (a) "
    "|> AGGREGATE COUNT(DISTINCT a) AS n GROUP BY CASE WHEN x THEN 1 END AS k",
    "INTERVAL INTERSECTION OF (a AS x, (FROM b |> WHERE y IS NOT NULL) AS y) PER cpu "
    "|> LEFT INTERVAL JOIN c AS z COVERING END PER cpu |> INTERVAL FILL GAPS WITH bg PER cpu",
    "CREATE OR REPLACE PERFETTO TABLE t(a INT) AS FROM x |> ORDER BY a DESC NULLS LAST "
    "|> LIMIT 5 OFFSET ?1 |> SET a = CAST(a AS REAL) |> RENAME a b",
    "PERFETTO PRAGMA pipelines = 1",
  };
  for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
    size_t len = strlen(qs[k]);
    for (size_t i = 0; i <= len; i++) {
      char *buf = malloc(i + 1); /* exact size, so ASan sees overreads */
      memcpy(buf, qs[k], i);
      buf[i] = 0;
      rt_err err = {0};
      fe_stmt *st = fe_parse_stmt(&g_arena, buf, 0, (int)i, &err);
      assert_true(st != NULL || err.set);
      if (!st) assert_true(err.offset >= 0 && err.offset <= (int)i);
      free(buf);
    }
  }
}

/* Random token soup: parsing must fail or succeed cleanly. */
static void test_random_tokens(void **state) {
  static const char *const vocab[] = {
    "FROM", "t", "|>", "WHERE", "SELECT", "(", ")", ",", "AS", "*", ".", "1", "'s'", "+",
    "NOT", "IN", "BETWEEN", "AND", "OR", "IS", "NULL", "CASE", "WHEN", "THEN", "END", "CAST",
    "INTERVAL", "INTERSECTION", "OF", "JOIN", "COVERING", "BEGIN", "PER", "AGGREGATE", "GROUP",
    "BY", "ORDER", "LIMIT", "EXCEPT", "REPLACE", "TREE", "ACCUMULATE", "UP", "FILL", "GAPS",
    "WITH", "FLATTEN", "LEFT", "count", "?", "=", "-", ";", "CREATE", "PERFETTO", "TABLE",
    "PRAGMA", "DISTINCT",
  };
  const int nv = (int)(sizeof vocab / sizeof vocab[0]);
  unsigned seed = 12345;
  char buf[1024];
  for (int iter = 0; iter < 20000; iter++) {
    size_t n = 0;
    /* Half the inputs start like a pipeline so the parser gets deep. */
    if (iter % 2 == 0) n = (size_t)snprintf(buf, sizeof buf, "FROM t |> ");
    int len = 1 + iter % 24;
    for (int k = 0; k < len; k++) {
      seed = seed * 1103515245u + 12345u;
      const char *w = vocab[(seed >> 16) % (unsigned)nv];
      size_t wl = strlen(w);
      if (n + wl + 2 >= sizeof buf) break;
      memcpy(buf + n, w, wl);
      n += wl;
      buf[n++] = ' ';
    }
    buf[n] = 0;
    rt_err err = {0};
    fe_stmt *st = fe_parse_stmt(&g_arena, buf, 0, (int)n, &err);
    assert_true(st != NULL || (err.set && err.offset >= 0 && err.offset <= (int)n));
  }
}

static void test_line_col(void **state) {
  const char *s = "FROM t\n|> WHERE\n  x";
  int line, col;
  fe_line_col(s, 0, &line, &col);
  assert_int_equal(line, 1);
  assert_int_equal(col, 1);
  fe_line_col(s, 10, &line, &col);
  assert_int_equal(line, 2);
  assert_int_equal(col, 4);
  fe_line_col(s, 18, &line, &col);
  assert_int_equal(line, 3);
  assert_int_equal(col, 3);
  assert_string_equal(fe_stage_names[ST_ORDER_BY], "ORDER BY");
  assert_string_equal(fe_stage_names[ST_FILL_GAPS], "INTERVAL FILL GAPS");
  assert_string_equal(fe_stage_names[ST_TREE], "TREE ACCUMULATE");
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_lex_kinds),
    cmocka_unit_test(test_lex_numbers),
    cmocka_unit_test(test_lex_errors),
    cmocka_unit_test(test_split),
    cmocka_unit_test(test_statements),
    cmocka_unit_test(test_sources),
    cmocka_unit_test(test_stages),
    cmocka_unit_test(test_precedence),
    cmocka_unit_test(test_expr_forms),
    cmocka_unit_test(test_errors),
    cmocka_unit_test(test_deep_nesting),
    cmocka_unit_test(test_prefixes_never_crash),
    cmocka_unit_test(test_random_tokens),
    cmocka_unit_test(test_line_col),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
