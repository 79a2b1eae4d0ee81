/*
 * parse_perfetto.c — the PerfettoSQL statements of LANGUAGE.md §7.1-7.4:
 *
 *   CREATE [OR REPLACE] PERFETTO VIEW name [(col type, …)] AS <select or pipeline>
 *   CREATE [OR REPLACE] PERFETTO FUNCTION name(arg type, …)
 *       RETURNS type | TABLE(col type, …) AS <select or pipeline>
 *   CREATE [OR REPLACE] PERFETTO MACRO name(arg Type, …) RETURNS Type AS tokens
 *   INCLUDE PERFETTO MODULE a.b.c   (or a.b.*)
 *
 * Only the shape is checked here: which types exist, whether names are
 * taken, and what a body means is the engine's business (api/). A
 * macro's body is kept as text (its tokens are expanded at each use).
 */
#include "parse.h"

fe_stmtkind fe_perfetto_stmt_kind(fe_parser *p) {
  if (fe_at_kw(p, "INCLUDE") && fe_tok_is_kw(fe_peek(p, 1), "PERFETTO") &&
      fe_tok_is_kw(fe_peek(p, 2), "MODULE"))
    return STMT_INCLUDE;
  if (!fe_at_kw(p, "CREATE")) return STMT_SQL;
  int k = 1;
  if (fe_tok_is_kw(fe_peek(p, 1), "OR") && fe_tok_is_kw(fe_peek(p, 2), "REPLACE")) k = 3;
  if (!fe_tok_is_kw(fe_peek(p, k), "PERFETTO")) return STMT_SQL;
  const fe_token *w = fe_peek(p, k + 1);
  if (fe_tok_is_kw(w, "VIEW")) return STMT_CREATE_VIEW;
  if (fe_tok_is_kw(w, "FUNCTION")) return STMT_CREATE_FUNCTION;
  if (fe_tok_is_kw(w, "MACRO")) return STMT_CREATE_MACRO;
  return STMT_SQL;
}

/* CREATE [OR REPLACE] PERFETTO <word> name */
static bool parse_head(fe_parser *p, fe_stmt *st, const char *word, const char *what) {
  fe_accept_kw(p, "CREATE");
  if (fe_accept_kw(p, "OR")) {
    if (!fe_expect_kw(p, "REPLACE", NULL)) return false;
    st->or_replace = true;
  }
  if (!fe_expect_kw(p, "PERFETTO", NULL) || !fe_expect_kw(p, word, NULL)) return false;
  if (fe_is_reserved(fe_cur(p))) return fe_syntax_error(p, fe_cur(p), what);
  return fe_parse_name(p, &st->table, what);
}

/* `(arg type, …)` or `()`: the '(' is next. */
static bool parse_args(fe_parser *p, fe_stmt *st) {
  if (!fe_expect_punct(p, "(", "'(' and the arguments")) return false;
  if (fe_accept_punct(p, ")")) return true;
  return fe_parse_coldefs(p, &st->args, &st->nargs, "argument");
}

static bool parse_view(fe_parser *p, fe_stmt *st) {
  p->stage = "CREATE PERFETTO VIEW";
  if (!parse_head(p, st, "VIEW", "a view name")) return false;
  if (fe_accept_punct(p, "(") && !fe_parse_coldefs(p, &st->coldefs, &st->ncoldefs, "column")) return false;
  if (!fe_expect_kw(p, "AS", "AS or a column list")) return false;
  return fe_parse_body(p, st);
}

static bool parse_function(fe_parser *p, fe_stmt *st) {
  p->stage = "CREATE PERFETTO FUNCTION";
  if (!parse_head(p, st, "FUNCTION", "a function name") || !parse_args(p, st)) return false;
  if (!fe_expect_kw(p, "RETURNS", NULL)) return false;
  if (fe_at_kw(p, "TABLE") && fe_tok_is_punct(fe_peek(p, 1), "(")) {
    st->returns_table = true;
    st->returnspos = fe_cur(p)->pos;
    p->i += 2;
    if (!fe_parse_coldefs(p, &st->coldefs, &st->ncoldefs, "column")) return false;
  } else {
    /* A type is every token up to AS (JOINID(slice.id) is several). */
    int from = p->i, depth = 0;
    while (fe_cur(p)->kind != TK_EOF && !(depth == 0 && fe_at_kw(p, "AS"))) {
      if (fe_at_punct(p, "(")) depth++;
      if (fe_at_punct(p, ")")) depth--;
      p->i++;
    }
    if (p->i == from) return fe_syntax_error(p, fe_cur(p), "a return type or TABLE(…)");
    if (!(st->returns = fe_token_text(p, from, p->i, &st->returnspos))) return false;
  }
  if (!fe_expect_kw(p, "AS", NULL)) return false;
  return fe_parse_body(p, st);
}

static bool parse_mtype(fe_parser *p, char **out, int *pos) {
  fe_token *t = fe_cur(p);
  fe_mtype mt;
  if (t->kind != TK_IDENT || !fe_mtype_parse(t->text, &mt))
    return fe_syntax_error(p, t, "a macro type: Expr, TableOrSubquery, ColumnName or Pipeline");
  *out = t->text;
  *pos = t->pos;
  p->i++;
  return true;
}

static bool parse_macro(fe_parser *p, fe_stmt *st) {
  p->stage = "CREATE PERFETTO MACRO";
  if (!parse_head(p, st, "MACRO", "a macro name")) return false;
  if (!fe_expect_punct(p, "(", "'(' and the arguments")) return false;
  int cap = 0;
  if (!fe_accept_punct(p, ")")) {
    do {
      fe_coldef *c = fe_push_p(p, &st->args, &st->nargs, &cap, sizeof *c);
      if (!c || !fe_parse_name(p, &c->name, "an argument name") ||
          !parse_mtype(p, &c->type, &c->typepos))
        return false;
    } while (fe_accept_punct(p, ","));
    if (!fe_expect_punct(p, ")", "',' or ')'")) return false;
  }
  if (!fe_expect_kw(p, "RETURNS", NULL) || !parse_mtype(p, &st->returns, &st->returnspos))
    return false;
  if (!fe_expect_kw(p, "AS", NULL)) return false;
  int end = fe_eof_index(p);
  if (p->lexerr.set) return fe_syntax_error(p, &p->toks[end], "");
  if (p->i == end) return fe_syntax_error(p, fe_cur(p), "the macro's body");
  st->bodypos = fe_cur(p)->pos;
  st->bodylen = p->toks[end - 1].pos + p->toks[end - 1].len - st->bodypos;
  p->i = end;
  return true;
}

/* a.b.c or a.b.*: names joined by '.', with no space between. */
static bool parse_include(fe_parser *p, fe_stmt *st) {
  p->stage = "INCLUDE PERFETTO MODULE";
  p->i += 3;
  fe_token *first = fe_cur(p);
  st->modulepos = first->pos;
  int from = p->i;
  for (;;) {
    fe_token *t = fe_cur(p);
    bool star = fe_tok_is_punct(t, "*");
    if (t->kind != TK_IDENT && !star)
      return fe_syntax_error(p, t, p->i == from ? "a module name (a.b.c)" : "a name after '.'");
    p->i++;
    if (star || !fe_at_punct(p, ".")) break;
    p->i++;
  }
  if (fe_tok_is_punct(&p->toks[p->i - 1], "*") && p->i - from < 3)
    return fe_syntax_error(p, &p->toks[p->i - 1], "a package name before '.*'");
  /* The name is written without spaces: `a . b` is not a module name. */
  for (int i = from + 1; i < p->i; i++)
    if (p->toks[i].pos != p->toks[i - 1].pos + p->toks[i - 1].len)
      return fe_syntax_error(p, &p->toks[i], "a module name without spaces (a.b.c)");
  int pos;
  if (!(st->module = fe_token_text(p, from, p->i, &pos))) return false;
  if (fe_cur(p)->kind != TK_EOF || p->lexerr.set)
    return fe_syntax_error(p, fe_cur(p), "the end of the statement");
  return true;
}

bool fe_parse_perfetto_stmt(fe_parser *p, fe_stmt *st, fe_stmtkind kind) {
  st->kind = kind;
  switch (kind) {
  case STMT_CREATE_VIEW: return parse_view(p, st);
  case STMT_CREATE_FUNCTION: return parse_function(p, st);
  case STMT_CREATE_MACRO: return parse_macro(p, st);
  case STMT_INCLUDE: return parse_include(p, st);
  default: return fe_syntax_error(p, fe_cur(p), "a PerfettoSQL statement");
  }
}
