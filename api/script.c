/*
 * script.c — the script runner: pj_engine_exec splits a script into
 * statements and runs each one. Plain SQL goes to SQLite (engine_table.c
 * turns its rows into a result table), pipelines compile to query handles
 * and run (query.c), CREATE PERFETTO TABLE materializes either into the
 * catalog (engine_table.c), and PERFETTO PRAGMA is checked here. Every
 * error offset is relative to the script, so the caller can point at the
 * offending token.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

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

static pj_status run_stmt(pj_engine *e, const char *script, fe_stmt *st, pj_result_cb cb,
                          void *ctx, int *stop) {
  const char *stmt_text = script + st->pos;
  rt_table *t = NULL;
  pj_status s = PJ_OK;
  switch (st->kind) {
  case STMT_PRAGMA:
    return run_pragma(e, script, st);
  case STMT_CREATE_TABLE:
    return pj__exec_create(e, script, st);
  case STMT_CREATE_INDEX:
  case STMT_DROP_INDEX:
    return pj__exec_index(e, script, st);
  case STMT_SQL:
    s = pj__exec_sql_stmt(e, script, st, NULL, &t);
    break;
  case STMT_PIPELINE:
    s = pj__exec_pipeline(e, script, st, st->pipe, "result", &t);
    break;
  }
  if (s != PJ_OK || !t) return s;
  e->timing.rows_out = t->nrows;
  if (cb) {
    pj_result r = {.t = t, .strings = e->strings};
    if (cb(ctx, &r, stmt_text, (size_t)st->len, (size_t)st->pos)) *stop = 1;
  }
  rt_table_unref(t);
  return PJ_OK;
}

pj_status pj_engine_exec(pj_engine *e, const char *script, pj_result_cb cb, void *ctx) {
  return pj_engine_exec_len(e, script, strlen(script), cb, ctx);
}

pj_status pj_engine_exec_len(pj_engine *e, const char *script, size_t len, pj_result_cb cb,
                             void *ctx) {
  pj__clear_error(e);
  pj__begin_run(e);
  e->exec_depth++;
  /* One statement at a time, each parsed into an arena freed once it has
   * run (its plan goes with its handle): a script of a million
   * statements runs in the memory of its largest one. */
  rt_arena a;
  rt_arena_init(&a);
  size_t at = 0;
  fe_span span;
  pj_status s = PJ_OK;
  int stop = 0;
  while (s == PJ_OK && !stop && fe_split_next(script, len, &at, &span)) {
    memset(&e->timing, 0, sizeof e->timing);
    if (pj__interrupted(e)) {   /* between statements */
      s = PJ_INTERRUPTED;
      break;
    }
    rt_arena_free(&a);   /* the previous statement's parse */
    rt_arena_init(&a);
    rt_err err = {.offset = -1};
    int64_t t0 = rt_now_ns();
    fe_stmt *st = fe_parse_stmt(&a, script, span.pos, span.len, &err);
    int64_t parse_ns = rt_now_ns() - t0;
    if (!st) {
      s = pj__fail(e, &err, script);
      break;
    }
    s = run_stmt(e, script, st, cb, ctx, &stop);
    e->timing.parse_ns = parse_ns;
    if (s != PJ_OK) {
      /* A hook or callback may have cleared it; make sure a message exists. */
      if (s == PJ_ERROR && !e->err.set) pj__failf(e, "statement failed");
      /* A hook's stop without an error is a clean end of the script. */
      if (s == PJ_INTERRUPTED && !e->err.set && !pj__interrupted(e)) s = PJ_OK;
      break;
    }
    if (e->hooks.after_stmt)
      e->hooks.after_stmt(e->hooks.ctx, script + st->pos, (size_t)st->len, (size_t)st->pos,
                          &e->timing, st->pipe != NULL);
  }
  rt_arena_free(&a);
  e->exec_depth--;
  /* Whatever SQLite or the runtime said, an interrupted statement fails
   * with one message. */
  if (s != PJ_OK && pj__interrupted(e)) {
    pj__failf(e, "interrupted");
    s = PJ_INTERRUPTED;
  }
  return s;
}

int pj__script_complete(const char *text, size_t len) {
  size_t end = len;
  while (end && (text[end - 1] == ' ' || text[end - 1] == '\n' || text[end - 1] == '\t' ||
                 text[end - 1] == '\r'))
    end--;
  if (!end || text[end - 1] != ';') return 0;
  rt_arena a;
  rt_arena_init(&a);
  fe_span *spans = NULL;
  int n = fe_split(&a, text, len, &spans);
  /* The ';' ends the text when the splitter's last statement ends before
   * it (an open string or comment would swallow it). */
  int done = n == 0 || (size_t)(spans[n - 1].pos + spans[n - 1].len) < end;
  rt_arena_free(&a);
  return done;
}
