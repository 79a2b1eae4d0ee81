/*
 * parse.c — statements and the parser's token helpers.
 *
 * fe_parse_stmt classifies one statement of a script (split.c cuts them):
 * a pipeline (starts with FROM or INTERVAL INTERSECTION), CREATE [OR
 * REPLACE] PERFETTO TABLE, PERFETTO PRAGMA, a PerfettoSQL statement not
 * built yet (CREATE PERFETTO VIEW, …: an error saying so), or plain SQL
 * passed to SQLite
 * unchanged — except that a `|>` inside SQL is reported here, since SQLite
 * would only say "unrecognized token". Sources and stages are parsed in
 * parse_stage.c, expressions in parse_expr.c. Validation of meaning (names,
 * types, pragma values) is left to the binder and the engine.
 */
#include <stdarg.h>
#include <stdio.h>

#include "parse.h"

/* ---- tokens ----------------------------------------------------------- */

fe_token *fe_peek(fe_parser *p, int k) {
  int i = p->i + k;
  return &p->toks[i < p->ntok ? i : p->ntok - 1];
}

bool fe_tok_is_kw(const fe_token *t, const char *kw) {
  return t->kind == TK_IDENT && rt_strieq(t->text, kw);
}

bool fe_tok_is_punct(const fe_token *t, const char *s) {
  return t->kind == TK_PUNCT && strcmp(t->text, s) == 0;
}

bool fe_at_kw(fe_parser *p, const char *kw) { return fe_tok_is_kw(fe_cur(p), kw); }
bool fe_at_punct(fe_parser *p, const char *s) { return fe_tok_is_punct(fe_cur(p), s); }

static void advance(fe_parser *p) {
  if (p->i < p->ntok - 1) p->i++;
}

bool fe_accept_kw(fe_parser *p, const char *kw) {
  if (!fe_at_kw(p, kw)) return false;
  advance(p);
  return true;
}

bool fe_accept_punct(fe_parser *p, const char *s) {
  if (!fe_at_punct(p, s)) return false;
  advance(p);
  return true;
}

bool fe_expect_kw(fe_parser *p, const char *kw, const char *what) {
  if (fe_accept_kw(p, kw)) return true;
  return fe_syntax_error(p, fe_cur(p), what ? what : kw);
}

bool fe_expect_punct(fe_parser *p, const char *s, const char *what) {
  if (fe_accept_punct(p, s)) return true;
  if (what) return fe_syntax_error(p, fe_cur(p), what);
  char buf[16];
  snprintf(buf, sizeof buf, "'%s'", s);
  return fe_syntax_error(p, fe_cur(p), buf);
}

int fe_prev_end(fe_parser *p) {
  if (p->i == 0) return p->toks[0].pos;
  const fe_token *t = &p->toks[p->i - 1];
  return t->pos + t->len;
}

int fe_syntax_error(fe_parser *p, const fe_token *t, const char *what) {
  const char *stage = p->stage ? p->stage : "";
  const char *sep = p->stage ? ": " : "";
  if (t->kind == TK_EOF) {
    /* Lexing stopped here: the lexer's message says why. */
    if (p->lexerr.set)
      return rt_errorf(p->err, p->lexerr.offset, "%s%s%s", stage, sep, p->lexerr.msg);
    return rt_errorf(p->err, t->pos, "%s%ssyntax error near end of input: expected %s", stage,
                     sep, what);
  }
  /* Quote the token as written, cut short so a long string stays readable. */
  int n = t->len > 40 ? 40 : t->len;
  return rt_errorf(p->err, t->pos, "%s%ssyntax error near '%.*s%s': expected %s", stage, sep,
                   n, p->text + t->pos, t->len > n ? "..." : "", what);
}

int fe_fail(fe_parser *p, int pos, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return rt_errorf(p->err, pos, "%s%s%s", p->stage ? p->stage : "", p->stage ? ": " : "", msg);
}

/* SQLite's reserved words that can begin or end clauses: they are never a
 * bare column name or an implicit alias (`FROM slice WHERE …` must not take
 * WHERE as the alias). Pipe keywords are deliberately absent. */
static const char *const k_reserved[] = {
  "ALL", "AND", "AS", "BETWEEN", "BY", "CASE", "CAST", "COLLATE", "CROSS", "DISTINCT",
  "ELSE", "END", "ESCAPE", "EXCEPT", "EXISTS", "FROM", "FULL", "GLOB", "GROUP", "HAVING",
  "IN", "INNER", "INTERSECT", "IS", "ISNULL", "JOIN", "LEFT", "LIKE", "LIMIT", "MATCH",
  "NATURAL", "NOT", "NOTNULL", "NULL", "OFFSET", "ON", "OR", "ORDER", "OUTER", "REGEXP",
  "REPLACE", "RIGHT", "SELECT", "THEN", "UNION", "USING", "WHEN", "WHERE", "WINDOW", "WITH",
};

bool fe_is_reserved(const fe_token *t) {
  if (t->kind != TK_IDENT) return false;
  for (size_t i = 0; i < sizeof k_reserved / sizeof k_reserved[0]; i++)
    if (rt_strieq(t->text, k_reserved[i])) return true;
  return false;
}

int fe_oom(fe_parser *p) {
  p->oom = true;
  return fe_fail(p, fe_cur(p)->pos, "out of memory");
}

void *fe_push_p(fe_parser *p, void *arrp, int *n, int *cap, size_t size) {
  void *v = fe_push(p->a, arrp, n, cap, size);
  if (!v) fe_oom(p);
  return v;
}

bool fe_push_ptr(fe_parser *p, void *arrp, int *n, int *cap, const void *v) {
  void *slot = fe_push_p(p, arrp, n, cap, sizeof v);
  if (slot) memcpy(slot, &v, sizeof v);
  return slot != NULL;
}

void *fe_alloc(fe_parser *p, size_t n) {
  void *v = rt_arena_alloc(p->a, n);
  if (!v) fe_oom(p);
  return v;
}

bool fe_enter(fe_parser *p, int pos) {
  if (++p->depth <= FE_MAX_DEPTH) return true;
  p->depth--;
  rt_errorf(p->err, pos, "%s%sexpression is nested too deeply (more than %d levels)",
            p->stage ? p->stage : "", p->stage ? ": " : "", FE_MAX_DEPTH);
  return false;
}

bool fe_parse_name(fe_parser *p, fe_name *out, const char *what) {
  fe_token *t = fe_cur(p);
  if (t->kind != TK_IDENT && t->kind != TK_QIDENT) return fe_syntax_error(p, t, what);
  out->name = t->text;
  out->pos = t->pos;
  advance(p);
  return true;
}

bool fe_check_no_pipe(fe_parser *p, int from, int to) {
  for (int i = from; i < to && i < p->ntok; i++) {
    if (p->toks[i].kind != TK_PIPE) continue;
    rt_errorf(p->err, p->toks[i].pos,
              "%s%ssyntax error near '|>': pipe operators need a pipeline that starts "
              "with FROM",
              p->stage ? p->stage : "", p->stage ? ": " : "");
    return false;
  }
  return true;
}

/* ---- statements ------------------------------------------------------- */

/* The tokens of text[start, end); when the lexer runs out of memory, a
 * lone EOF token and the error (every parse then fails). */
static void lex_into(fe_parser *p, int start, int end, unsigned flags) {
  p->toks = fe_lex_range_flags(p->a, p->text, start, end, &p->ntok, &p->lexerr, flags);
  if (p->toks) return;
  static char empty[1];   /* never written */
  p->eof = (fe_token){.kind = TK_EOF, .pos = end, .text = empty};
  p->toks = &p->eof;
  p->ntok = 1;
  p->oom = true;
  rt_errorf(p->err, start, "%s%sout of memory", p->stage ? p->stage : "", p->stage ? ": " : "");
}

static void parser_init(fe_parser *p, rt_arena *a, const char *text, int start, int end,
                        rt_err *err) {
  memset(p, 0, sizeof *p);
  p->a = a;
  p->text = text;
  p->err = err;
  p->end = end;
  lex_into(p, start, end, 0);
}

/* A pipeline that must run to the end of the input (a trailing ';' is
 * tolerated, for texts given straight to pj_query_compile). */
fe_pipeline *fe_parse_whole_pipeline(fe_parser *p) {
  fe_pipeline *pl = fe_parse_pipeline_at(p);
  if (!pl) return NULL;
  while (fe_accept_punct(p, ";")) {
  }
  fe_token *t = fe_cur(p);
  if (t->kind != TK_EOF || p->lexerr.set) {
    fe_syntax_error(p, t, "|> or end of input");
    return NULL;
  }
  return pl;
}

/* The text of tokens [from, to) as written (comments inside kept). */
char *fe_token_text(fe_parser *p, int from, int to, int *pos) {
  int start = p->toks[from].pos;
  int end = p->toks[to - 1].pos + p->toks[to - 1].len;
  *pos = start;
  char *t = rt_arena_strndup(p->a, p->text + start, (size_t)(end - start));
  if (!t) fe_oom(p);
  return t;
}

/* Index of the EOF token. */
int fe_eof_index(fe_parser *p) { return p->ntok - 1; }

/* (col type, …): a type is every token up to ',' or ')' at depth 0, so
 * Perfetto's `JOINID(slice.id)` is kept whole. */
bool fe_parse_coldefs(fe_parser *p, fe_coldef **out, int *n, const char *what) {
  int cap = 0;
  *n = 0;
  do {
    fe_coldef *c = fe_push_p(p, out, n, &cap, sizeof *c);
    if (!c) return false;
    char name_what[48], type_what[48];
    snprintf(name_what, sizeof name_what, "a%s %s name", what[0] == 'a' ? "n" : "", what);
    snprintf(type_what, sizeof type_what, "a%s %s type", what[0] == 'a' ? "n" : "", what);
    if (!fe_parse_name(p, &c->name, name_what)) return false;
    int from = p->i, depth = 0;
    for (;;) {
      fe_token *t = fe_cur(p);
      if (t->kind == TK_EOF) break;
      if (depth == 0 && (fe_tok_is_punct(t, ",") || fe_tok_is_punct(t, ")"))) break;
      if (fe_tok_is_punct(t, "(")) depth++;
      if (fe_tok_is_punct(t, ")")) depth--;
      advance(p);
    }
    if (p->i == from) return fe_syntax_error(p, fe_cur(p), type_what);
    if (!(c->type = fe_token_text(p, from, p->i, &c->typepos))) return false;
  } while (fe_accept_punct(p, ","));
  return fe_expect_punct(p, ")", "',' or ')'");
}

/* SQL text for SQLite, text[from, to): SQLite stops reading at a NUL
 * byte, so one anywhere in it (even in a string literal) is an error here
 * rather than the silent end of the statement. */
bool fe_check_sql_nul(fe_parser *p, int from, int to) {
  const char *nul = to > from ? memchr(p->text + from, 0, (size_t)(to - from)) : NULL;
  if (!nul) return true;
  return fe_fail(p, (int)(nul - p->text),
                 "syntax error: unexpected NUL byte in SQL (SQLite would stop reading there)");
}

bool fe_parse_body(fe_parser *p, fe_stmt *st) {
  st->asbody = fe_cur(p)->pos;
  if (fe_at_pipeline_start(p)) {
    st->pipe = fe_parse_whole_pipeline(p);
    return st->pipe != NULL;
  }
  if (fe_cur(p)->kind == TK_EOF) return fe_syntax_error(p, fe_cur(p), "a pipeline or a SELECT");
  if (!fe_check_sql_nul(p, fe_cur(p)->pos, p->end)) return false;
  if (fe_sql_pipelines(p->a, p->text, fe_cur(p)->pos, p->end, p->stage, &st->sqlpipes, p->err) < 0)
    return false;
  if (p->lexerr.set) return fe_syntax_error(p, &p->toks[fe_eof_index(p)], "");
  st->sql = fe_token_text(p, p->i, fe_eof_index(p), &st->sqlpos);
  return st->sql != NULL;
}

static bool parse_create(fe_parser *p, fe_stmt *st) {
  p->stage = "CREATE PERFETTO TABLE";
  st->kind = STMT_CREATE_TABLE;
  st->ncoldefs = -1;
  fe_accept_kw(p, "CREATE");
  if (fe_accept_kw(p, "OR")) {
    if (!fe_expect_kw(p, "REPLACE", NULL)) return false;
    st->or_replace = true;
  }
  if (!fe_expect_kw(p, "PERFETTO", NULL) ||
      !fe_expect_kw(p, "TABLE", "TABLE, VIEW, FUNCTION, MACRO or INDEX"))
    return false;
  if (fe_is_reserved(fe_cur(p))) return fe_syntax_error(p, fe_cur(p), "a table name");
  if (!fe_parse_name(p, &st->table, "a table name")) return false;
  if (fe_accept_punct(p, "(") && !fe_parse_coldefs(p, &st->coldefs, &st->ncoldefs, "column")) return false;
  if (!fe_expect_kw(p, "AS", "AS or a column list")) return false;
  return fe_parse_body(p, st);
}

static bool parse_pragma(fe_parser *p, fe_stmt *st) {
  p->stage = "PERFETTO PRAGMA";
  st->kind = STMT_PRAGMA;
  st->ncoldefs = -1;
  fe_accept_kw(p, "PERFETTO");
  fe_accept_kw(p, "PRAGMA");
  if (!fe_parse_name(p, &st->pragma, "a setting name")) return false;
  if (!fe_expect_punct(p, "=", NULL)) return false;
  int end = fe_eof_index(p);
  while (end > p->i && fe_tok_is_punct(&p->toks[end - 1], ";")) end--;
  if (p->lexerr.set) return fe_syntax_error(p, &p->toks[fe_eof_index(p)], "");
  if (end == p->i) return fe_syntax_error(p, fe_cur(p), "a value");
  st->pragma_value = fe_token_text(p, p->i, end, &st->valuepos);
  return st->pragma_value != NULL;
}

fe_stmt *fe_parse_stmt(rt_arena *a, const char *text, int pos, int len, rt_err *err) {
  fe_parser p;
  parser_init(&p, a, text, pos, pos + len, err);
  fe_stmt *st = p.oom ? NULL : fe_alloc(&p, sizeof *st);
  if (!st) return NULL;
  st->pos = pos;
  st->len = len;
  st->ncoldefs = -1;
  bool ok;
  fe_stmtkind pk = fe_perfetto_stmt_kind(&p);
  if (pk == STMT_CREATE_MACRO) {
    /* A macro's body may invoke macros: lex again with '!' as a token. */
    memset(&p.lexerr, 0, sizeof p.lexerr);
    lex_into(&p, pos, pos + len, FE_LEX_BANG);
  }
  if (pk != STMT_SQL) {
    ok = fe_parse_perfetto_stmt(&p, st, pk);
  } else if (fe_at_index_stmt(&p)) {
    ok = fe_parse_index_stmt(&p, st);
  } else if (fe_at_pipeline_start(&p)) {
    st->kind = STMT_PIPELINE;
    st->pipe = fe_parse_whole_pipeline(&p);
    ok = st->pipe != NULL;
  } else if (fe_at_kw(&p, "CREATE") &&
             (fe_tok_is_kw(fe_peek(&p, 1), "PERFETTO") ||
              (fe_tok_is_kw(fe_peek(&p, 1), "OR") && fe_tok_is_kw(fe_peek(&p, 2), "REPLACE") &&
               fe_tok_is_kw(fe_peek(&p, 3), "PERFETTO")))) {
    ok = parse_create(&p, st);
  } else if (fe_at_kw(&p, "PERFETTO") && fe_tok_is_kw(fe_peek(&p, 1), "PRAGMA")) {
    ok = parse_pragma(&p, st);
  } else {
    /* Plain SQL. A lexical error is left for SQLite to report in its own
     * words (it knows tokens we do not, such as blobs); the tokens before it
     * are still checked for `|>`. */
    st->kind = STMT_SQL;
    st->sql = rt_arena_strndup(a, text + pos, (size_t)len);
    if (!st->sql) fe_oom(&p);
    st->sqlpos = pos;
    ok = fe_check_sql_nul(&p, pos, pos + len) &&
         fe_sql_pipelines(a, text, pos, pos + len, NULL, &st->sqlpipes, err) >= 0;
  }
  /* An allocation that failed anywhere fails the statement (a part the
   * parser only stored may be NULL). */
  return ok && !p.oom ? st : NULL;
}

fe_pipeline *fe_parse_pipeline(rt_arena *a, const char *text, size_t len, rt_err *err) {
  fe_parser p;
  parser_init(&p, a, text, 0, (int)len, err);
  if (!fe_at_pipeline_start(&p)) {
    p.stage = "FROM";
    /* "FROM, INTERVAL INTERSECTION OF, …": FROM and ir/sources.def */
    static const char what[] = "a pipeline starting with FROM"
#define SOURCE(name, str, w1, w2, parse, bind, words) " or " str
#include "../ir/sources.def"
#undef SOURCE
        ;
    fe_syntax_error(&p, fe_cur(&p), what);
    return NULL;
  }
  fe_pipeline *pl = fe_parse_whole_pipeline(&p);
  return p.oom ? NULL : pl;
}
