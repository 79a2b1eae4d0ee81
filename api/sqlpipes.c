/*
 * sqlpipes.c — SQL statements with pipelines inside (LANGUAGE.md §7.6).
 *
 * The frontend found the pipelines (frontend/sqlpipe.c: every `( FROM … )`
 * with its parameters renamed to the statement's numbers). Each is
 * compiled once, here, and registered as a table of its own (sqltab.h:
 * its columns are known before SQLite prepares the statement), and the
 * statement runs with each pipeline's parenthesis replaced by the table
 * `"__pj_sql_7"(args)` right after FROM or JOIN, and elsewhere by
 *     (SELECT * FROM "__pj_sql_7"(args))
 * which is a subquery wherever SQL takes one: a CTE body, an IN, EXISTS or
 * scalar subquery. The arguments are the
 * statement's own parameters 1..n, spelled as the statement spells them,
 * so SQLite binds them as it binds the rest of the statement (unbound:
 * NULL, as for any parameter of a plain SQL statement).
 *
 * Tables of an ordinary statement go when it has run. A statement whose
 * text SQLite keeps (CREATE VIEW, CREATE TRIGGER) refers to its tables
 * later: those ("__pj_view_N") stay registered for the engine's life and
 * compile from their own copy of the pipeline text.
 */
#include <stdio.h>
#include <stdlib.h>

#include "sqltab.h"

/* Compiles pipeline sp of the statement (kept: from a copy of its text,
 * errors still placed in the script). */
static pj_status compile(pj_engine *e, const char *script, const fe_sqlpipe *sp, bool kept,
                         pj_query **q) {
  if (!kept) return pj__query_from_ast(e, script, sp->pipe, q);
  int base = sp->pipe->pos;
  size_t len = (size_t)(sp->pipe->endpos - base);
  char *text = malloc(len + 1);
  if (!text) return pj__nomem_msg(e, PJ_NOMEM);
  memcpy(text, script + base, len);
  text[len] = 0;
  pj_status s = pj_query_compile(e, text, q);
  free(text);
  if (s == PJ_ERROR) {
    rt_err err = e->err;
    if (err.offset >= 0) err.offset += base;
    pj__fail(e, &err, script);
  }
  return s;
}

void pj__sql_rewrite_done(pj_engine *e, pj__sqlrewrite *rw, int keep) {
  for (int i = 0; !keep && i < rw->nmodules; i++) pj__sqltab_unregister(e, rw->modules[i]);
  free(rw->modules);
  free(rw->text);
  free(rw->new_at);
  free(rw->old_at);
  free(rw->copied);
  memset(rw, 0, sizeof *rw);
}

pj_status pj__sql_rewrite(pj_engine *e, const char *script, int sqlpos, int sqlend,
                          const fe_sqlpipes *ps, pj__sqlrewrite *rw) {
  memset(rw, 0, sizeof *rw);
  int n = ps->n;
  rw->modules = calloc((size_t)n + 1, sizeof *rw->modules);
  rw->new_at = calloc((size_t)(2 * n + 1), sizeof *rw->new_at);
  rw->old_at = calloc((size_t)(2 * n + 1), sizeof *rw->old_at);
  rw->copied = calloc((size_t)(2 * n + 1), sizeof *rw->copied);
  if (!rw->modules || !rw->new_at || !rw->old_at || !rw->copied) {
    pj__sql_rewrite_done(e, rw, 0);
    return pj__nomem_msg(e, PJ_NOMEM);
  }
  pj_timing outer = e->timing;
  pj_status s = PJ_OK;
  for (int i = 0; i < n && s == PJ_OK; i++) {
    const fe_sqlpipe *sp = &ps->v[i];
    pj_query *q = NULL;
    pj_timing before = e->timing;
    s = compile(e, script, sp, ps->kept, &q);
    outer.bind_ns += e->timing.bind_ns;
    e->timing = before;
    if (s != PJ_OK) break;
    snprintf(rw->modules[i], sizeof rw->modules[i], "__pj_%s_%d", ps->kept ? "view" : "sql",
             ++e->sqltab_seq);
    int line, col;
    fe_line_col(script, sp->pipe->pos, &line, &col);
    char what[64];
    snprintf(what, sizeof what, "the pipeline at line %d, column %d", line, col);
    pj__sqltab_def def = {.module = rw->modules[i], .q = q, .nargs = sp->nargs, .what = what};
    s = pj__sqltab_register(e, &def);
    if (s == PJ_OK) rw->nmodules = i + 1;
    else if (s == PJ_ERROR) {
      rt_err err = e->err;
      err.offset = sp->pipe->pos;
      pj__fail(e, &err, script);
    }
  }
  e->timing = outer;
  if (s != PJ_OK) {
    pj__sql_rewrite_done(e, rw, 0);
    return s;
  }
  /* The text SQLite runs, and where its pieces come from. */
  rt_buf b = {0};
  int at = sqlpos, pieces = 0;
  for (int i = 0; i < n; i++) {
    const fe_sqlpipe *sp = &ps->v[i];
    rw->new_at[pieces] = (int)b.len;
    rw->old_at[pieces] = at;
    rw->copied[pieces++] = true;
    rt_buf_append(&b, script + at, (size_t)(sp->start - at));
    rw->new_at[pieces] = (int)b.len;
    rw->old_at[pieces] = sp->start;
    rw->copied[pieces++] = false;
    /* After FROM or JOIN the table itself, so SQLite plans it as one (a
     * subquery on the right of a LEFT JOIN would be materialized and
     * indexed again); elsewhere a subquery. */
    if (!sp->table) rt_buf_printf(&b, "(SELECT * FROM ");
    rt_buf_printf(&b, "\"%s\"(", rw->modules[i]);
    for (int k = 0; k < sp->nargs; k++) rt_buf_printf(&b, "%s%s", k ? ", " : "", sp->args[k]);
    rt_buf_printf(&b, sp->table ? ")" : "))");
    at = sp->end;
  }
  rw->new_at[pieces] = (int)b.len;
  rw->old_at[pieces] = at;
  rw->copied[pieces++] = true;
  rt_buf_append(&b, script + at, (size_t)(sqlend - at));
  rt_buf_append(&b, "", 1);
  if (b.failed || !b.data) {
    /* a text cut short is other SQL: out of memory, not a SQLite error */
    rt_buf_free(&b);
    pj__sql_rewrite_done(e, rw, 0);
    return pj__nomem_msg(e, PJ_NOMEM);
  }
  rw->text = b.data;
  rw->map = (pj__sqlmap){pieces, rw->new_at, rw->old_at, rw->copied};
  return PJ_OK;
}

pj_status pj__exec_sql_stmt(pj_engine *e, const char *script, const fe_stmt *st,
                            const char *create_name, rt_table **out) {
  *out = NULL;
  if (st->sqlpipes.n == 0) return pj__exec_sql(e, script, st->sql, st->sqlpos, create_name, out);
  pj__sqlrewrite rw;
  pj_status s = pj__sql_rewrite(e, script, st->sqlpos, st->sqlpos + (int)strlen(st->sql),
                                &st->sqlpipes, &rw);
  if (s != PJ_OK) return s;
  s = pj__exec_sql_mapped(e, script, rw.text, st->sqlpos, &rw.map, create_name, out);
  /* A statement that failed keeps nothing; one whose text is not kept
   * needs its tables no more. */
  pj__sql_rewrite_done(e, &rw, s == PJ_OK && st->sqlpipes.kept);
  return s;
}
