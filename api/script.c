/*
 * script.c — the script runner: pj_engine_exec splits a script into
 * statements and runs each one. Plain SQL goes to SQLite (engine_table.c
 * turns its rows into a result table), pipelines compile to query handles
 * and run (query.c), CREATE PERFETTO TABLE materializes either into the
 * catalog (engine_table.c), the other PerfettoSQL statements go to their
 * stmt_*.c (defs.h), and PERFETTO PRAGMA is checked here. Macros are
 * expanded before a statement is parsed (frontend/macro.c). Every
 * error offset is relative to the script, so the caller can point at the
 * offending token.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "defs.h"

/* ---- PERFETTO PRAGMA -------------------------------------------------- */

/* Only `pipelines` exists, and pipelines are always on: the value is
 * checked for shape and otherwise ignored (Perfetto compatibility). */
static pj_status run_pragma(pj_engine *e, const char *script, const fe_stmt *st) {
  rt_err err = {.offset = -1};
  if (!rt_strieq(st->pragma.name, "pipelines")) {
    rt_errorf(&err, st->pragma.pos, "PERFETTO PRAGMA: there is no setting '%s'", st->pragma.name);
    return pj__fail(e, &err, script);
  }
  const char *v = st->pragma_value ? st->pragma_value : "";
  const char *p = v;
  if (*p == '+' || *p == '-') p++;
  int digits = 0;
  while (*p >= '0' && *p <= '9') p++, digits++;
  if (!digits || *p) {
    rt_errorf(&err, st->pragma_value ? st->valuepos : st->pragma.pos,
              "PERFETTO PRAGMA: expected a whole number");
    return pj__fail(e, &err, script);
  }
  return PJ_OK;
}

/* ---- pipelines -------------------------------------------------------- */

/* ---- the script runner ------------------------------------------------ */

/* Runs one parsed statement. `text` is what st's offsets refer to (the
 * script, or a statement's macro expansion); `span` is the statement in
 * the script, for the callback. */
static pj_status run_stmt(pj_engine *e, const char *text, fe_stmt *st, fe_span span,
                          const char *script, pj_result_cb cb, void *ctx, int *stop) {
  rt_table *t = NULL;
  pj_status s = PJ_OK;
  switch (st->kind) {
  case STMT_PRAGMA:
    return run_pragma(e, text, st);
  case STMT_CREATE_TABLE:
    return pj__exec_create(e, text, st);
  case STMT_CREATE_VIEW:
    return pj__exec_view(e, text, st);
  case STMT_CREATE_FUNCTION:
    return pj__exec_function(e, text, st);
  case STMT_CREATE_MACRO:
    return pj__exec_macro(e, text, st);
  case STMT_INCLUDE:
    return pj__exec_include(e, text, st);
  case STMT_CREATE_INDEX:
  case STMT_DROP_INDEX:
    return pj__exec_index(e, text, st);
  case STMT_SQL:
    s = pj__exec_sql_stmt(e, text, st, NULL, &t);
    break;
  case STMT_PIPELINE:
    s = pj__exec_pipeline(e, text, st, st->pipe, "result", &t);
    break;
  }
  if (s != PJ_OK || !t) return s;
  e->timing.rows_out = t->nrows;
  if (cb) {
    pj_result r = {.t = t, .strings = e->strings};
    if (cb(ctx, &r, script + span.pos, (size_t)span.len, (size_t)span.pos)) *stop = 1;
  }
  rt_table_unref(t);
  return PJ_OK;
}

/* Moves an error found in a statement's macro expansion back to the
 * script: to the user's own token, or to the invocation, naming the macro
 * whose body the offending token came from. */
static void error_from_expansion(pj_engine *e, const fe_expansion *x, const char *script) {
  if (!e->err.set || e->errtext != x->text) return;
  if (e->err.offset >= 0) {
    const fe_xorigin *o = NULL;
    e->err.offset = fe_expansion_origin(x, e->err.offset, &o);
    size_t n = strlen(e->err.msg);
    if (o && o->macro && strcmp(o->macro, o->outer))
      snprintf(e->err.msg + n, sizeof e->err.msg - n,
               " (in the expansion of macro '%s', invoked by '%s')", o->macro, o->outer);
    else if (o && o->macro)
      snprintf(e->err.msg + n, sizeof e->err.msg - n, " (in the expansion of macro '%s')",
               o->macro);
  }
  e->errtext = script;
  e->errline = e->errcol = 0;
  if (e->err.offset >= 0) fe_line_col(script, e->err.offset, &e->errline, &e->errcol);
}

/* The words a statement starts with are CREATE [OR REPLACE] PERFETTO
 * MACRO: its body's invocations are kept for when it is used. */
static bool defines_macro(const char *text, fe_span span) {
  static const char *const words[] = {"CREATE", "OR", "REPLACE", "PERFETTO", "MACRO"};
  const char *p = text + span.pos, *end = p + span.len;
  for (int w = 0; w < 5; w++) {
    while (p < end && (*p == ' ' || (*p >= '\t' && *p <= '\r'))) p++;
    const char *q = p;
    while (q < end && (*q | 0x20) >= 'a' && (*q | 0x20) <= 'z') q++;
    size_t n = (size_t)(q - p);
    if (w == 1 && !(n == 2 && rt_strnieq(p, "OR", 2))) w = 3;   /* no OR REPLACE */
    if (!n || n != strlen(words[w]) || !rt_strnieq(p, words[w], n)) return false;
    p = q;
  }
  return true;
}

/* The statements of script[0, len), one at a time, each parsed into an
 * arena freed once it has run (its plan goes with its handle): a script
 * of a million statements runs in the memory of its largest one. With
 * `nested` (a module's body) no hook sees them. */
static pj_status exec_script(pj_engine *e, const char *script, size_t len, pj_result_cb cb,
                             void *ctx, bool nested) {
  rt_arena a;
  rt_arena_init(&a);
  size_t at = 0;
  fe_span span;
  pj_status s = PJ_OK;
  int stop = 0;
  pj__hooks saved = e->hooks;
  if (nested) memset(&e->hooks, 0, sizeof e->hooks);
  while (s == PJ_OK && !stop && fe_split_next(script, len, &at, &span)) {
    memset(&e->timing, 0, sizeof e->timing);
    if (pj__interrupted(e)) {   /* between statements */
      s = PJ_INTERRUPTED;
      break;
    }
    if (e->hooks.before_stmt)
      e->hooks.before_stmt(e->hooks.ctx, script + span.pos, (size_t)span.len, (size_t)span.pos);
    rt_arena_free(&a);   /* the previous statement's parse */
    rt_arena_init(&a);
    rt_err err = {.offset = -1};
    int64_t t0 = rt_now_ns();
    /* Macros first (LANGUAGE.md §7.3): the parser reads the expansion. */
    fe_expansion x = {0};
    int xr = e->defs->n == 0 || defines_macro(script, span)
                 ? 0
                 : fe_macro_expand(&a, script, span.pos, span.len, pj__macro_find, e, &x, &err);
    if (xr < 0) {
      s = pj__fail(e, &err, script);
      break;
    }
    const char *text = xr > 0 ? x.text : script;
    fe_stmt *st = xr > 0 ? fe_parse_stmt(&a, x.text, 0, x.len, &err)
                         : fe_parse_stmt(&a, script, span.pos, span.len, &err);
    int64_t parse_ns = rt_now_ns() - t0;
    if (!st) {
      s = pj__fail(e, &err, text);
      if (xr > 0) error_from_expansion(e, &x, script);
      break;
    }
    s = run_stmt(e, text, st, span, script, cb, ctx, &stop);
    e->timing.parse_ns = parse_ns;
    if (s != PJ_OK) {
      /* A hook or callback may have cleared it; make sure a message exists. */
      if (s == PJ_ERROR && !e->err.set) pj__failf(e, "statement failed");
      pj__nomem_msg(e, s);
      if (xr > 0) error_from_expansion(e, &x, script);
      /* A hook's stop without an error is a clean end of the script. */
      if (s == PJ_INTERRUPTED && !e->err.set && !pj__interrupted(e)) s = PJ_OK;
      break;
    }
    if (e->hooks.after_stmt)
      e->hooks.after_stmt(e->hooks.ctx, script + span.pos, (size_t)span.len, (size_t)span.pos,
                          &e->timing, st->pipe != NULL);
  }
  e->hooks = saved;
  rt_arena_free(&a);
  return s;
}

pj_status pj__exec_text(pj_engine *e, const char *text, size_t len) {
  return exec_script(e, text, len, NULL, NULL, true);
}

pj_status pj_engine_exec(pj_engine *e, const char *script, pj_result_cb cb, void *ctx) {
  return pj_engine_exec_len(e, script, strlen(script), cb, ctx);
}

pj_status pj_engine_exec_len(pj_engine *e, const char *script, size_t len, pj_result_cb cb,
                             void *ctx) {
  pj__clear_error(e);
  pj__begin_run(e);
  e->exec_depth++;
  pj_status s = exec_script(e, script, len, cb, ctx, false);
  e->exec_depth--;
  /* Whatever SQLite or the runtime said, an interrupted statement fails
   * with one message. */
  if (s != PJ_OK && pj__interrupted(e)) {
    pj__failf(e, "interrupted");
    s = PJ_INTERRUPTED;
  }
  return s;
}

int pj__script_complete(const char *text, size_t len) { return fe_split_complete(text, len); }

int pj__script_empty(const char *text, size_t len) {
  size_t at = 0;
  fe_span sp;
  return !fe_split_next(text, len, &at, &sp);
}
