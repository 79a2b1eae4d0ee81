/*
 * parse_index.c — CREATE [OR REPLACE] PERFETTO INDEX name ON table(col, …)
 * and DROP PERFETTO INDEX name ON table (LANGUAGE.md §7.5). What the
 * names mean (a columnar table, its columns) is the engine's to check
 * (api/engine_index.c).
 */
#include "parse.h"

bool fe_at_index_stmt(fe_parser *p) {
  int k = 1;
  if (fe_at_kw(p, "CREATE")) {
    if (fe_tok_is_kw(fe_peek(p, 1), "OR") && fe_tok_is_kw(fe_peek(p, 2), "REPLACE")) k = 3;
  } else if (!fe_at_kw(p, "DROP")) {
    return false;
  }
  return fe_tok_is_kw(fe_peek(p, k), "PERFETTO") && fe_tok_is_kw(fe_peek(p, k + 1), "INDEX");
}

/* `name ON table`, for both statements. */
static bool parse_index_target(fe_parser *p, fe_stmt *st) {
  if (fe_is_reserved(fe_cur(p))) return fe_syntax_error(p, fe_cur(p), "an index name");
  if (!fe_parse_name(p, &st->index, "an index name")) return false;
  if (!fe_expect_kw(p, "ON", NULL)) return false;
  if (fe_is_reserved(fe_cur(p))) return fe_syntax_error(p, fe_cur(p), "a table name");
  return fe_parse_name(p, &st->table, "a table name");
}

bool fe_parse_index_stmt(fe_parser *p, fe_stmt *st) {
  st->ncoldefs = -1;
  if (fe_accept_kw(p, "DROP")) {
    p->stage = "DROP PERFETTO INDEX";
    st->kind = STMT_DROP_INDEX;
    fe_accept_kw(p, "PERFETTO");
    fe_accept_kw(p, "INDEX");
    if (!parse_index_target(p, st)) return false;
  } else {
    p->stage = "CREATE PERFETTO INDEX";
    st->kind = STMT_CREATE_INDEX;
    fe_accept_kw(p, "CREATE");
    if (fe_accept_kw(p, "OR")) {
      fe_accept_kw(p, "REPLACE");
      st->or_replace = true;
    }
    fe_accept_kw(p, "PERFETTO");
    fe_accept_kw(p, "INDEX");
    if (!parse_index_target(p, st)) return false;
    if (!fe_expect_punct(p, "(", "'(' and the indexed columns")) return false;
    int cap = 0;
    do {
      fe_name *c = fe_push_p(p, &st->indexcols, &st->nindexcols, &cap, sizeof *c);
      if (!c || !fe_parse_name(p, c, "a column name")) return false;
    } while (fe_accept_punct(p, ","));
    if (!fe_expect_punct(p, ")", "',' or ')'")) return false;
  }
  while (fe_accept_punct(p, ";")) {
  }
  if (fe_cur(p)->kind != TK_EOF || p->lexerr.set)
    return fe_syntax_error(p, fe_cur(p), "end of the statement");
  return true;
}
