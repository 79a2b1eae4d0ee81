/*
 * defs.c — the registry of PerfettoSQL definitions (defs.h): lookup,
 * replacement, the compiled bodies kept for calls, running a body from
 * inside SQLite. The snapshots INCLUDE rolls back to are snapshot.c's.
 */
#include <stdio.h>
#include <stdlib.h>

#include "runtime/argindex.h"
#include "defs.h"
#include "sqltab.h"

pj_defs *pj__defs_new(void) { return calloc(1, sizeof(pj_defs)); }

static void def_drain(pj_def *d) {
  for (int i = 0; i < d->nq; i++) pj_query_free(d->q[i]);
  for (int i = 0; i < d->nst; i++) sqlite3_finalize(d->st[i]);
  d->nq = d->nst = 0;
}

void pj__defs_drain(pj_defs *d) {
  if (!d) return;
  for (int i = 0; i < d->n; i++) def_drain(d->v[i]);
}

void pj__defs_free(pj_defs *d) {
  if (!d) return;
  for (int i = 0; i < d->n; i++) pj__def_unref(d->v[i]);
  free(d->v);
  for (int i = 0; i < d->nincluded; i++) free(d->included[i]);
  free(d->included);
  for (int i = 0; i < d->npaths; i++) free(d->paths[i]);
  free(d->paths);
  rt_argindex_unref(d->args_index);
  free(d);
}

pj_def *pj__def_new(pj_engine *e, pj_defkind kind, const char *name) {
  pj_def *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  d->kind = kind;
  d->refs = 1;
  d->e = e;
  rt_arena_init(&d->arena);
  d->name = rt_arena_strdup(&d->arena, name);
  if (!d->name) {
    free(d);
    return NULL;
  }
  return d;
}

pj_def *pj__def_ref(pj_def *d) {
  d->refs++;
  return d;
}

void pj__def_unref(pj_def *d) {
  if (!d || --d->refs > 0) return;
  def_drain(d);
  rt_arena_free(&d->arena);
  free(d);
}

/* Functions and views share a namespace (both are names SQL reads). */
static bool same_space(pj_defkind a, pj_defkind b) {
  return (a == PJ_DEF_MACRO) == (b == PJ_DEF_MACRO);
}

static int def_index(pj_defs *r, pj_defkind kind, const char *name) {
  for (int i = 0; i < r->n; i++)
    if (same_space(r->v[i]->kind, kind) && rt_strieq(r->v[i]->name, name)) return i;
  return -1;
}

pj_def *pj__def_find(pj_engine *e, pj_defkind kind, const char *name) {
  int i = def_index(e->defs, kind, name);
  return i < 0 ? NULL : e->defs->v[i];
}

bool pj__defs_reserve(pj_engine *e) {
  pj_defs *r = e->defs;
  if (r->n < r->cap) return true;
  int cap = r->cap ? r->cap * 2 : 16;
  pj_def **v = realloc(r->v, sizeof *v * (size_t)cap);
  if (!v) return false;
  r->v = v;
  r->cap = cap;
  return true;
}

/* d leaves the registry: the tables its SQL body reads go (its kept
 * statements first, which read them). A handle still holding d can take
 * no statement of it again: its plan is stale (gen) and binds anew. */
static void def_leave(pj_engine *e, pj_def *d) {
  if (!d->nsqltabs) return;
  def_drain(d);
  for (int i = 0; i < d->nsqltabs; i++) pj__sqltab_unregister(e, d->sqltabs[i]);
  d->nsqltabs = 0;
}

void pj__def_put(pj_engine *e, pj_def *d) {
  pj_defs *r = e->defs;
  r->gen++;
  int i = def_index(r, d->kind, d->name);
  if (i >= 0) {
    def_leave(e, r->v[i]);
    pj__def_unref(r->v[i]);
    r->v[i] = d;
    return;
  }
  if (!pj__defs_reserve(e)) {   /* the caller reserved: not reached */
    pj__def_unref(d);
    return;
  }
  r->v[r->n++] = d;
}

void pj__def_remove(pj_engine *e, pj_def *d) {
  pj_defs *r = e->defs;
  for (int i = 0; i < r->n; i++) {
    if (r->v[i] != d) continue;
    memmove(r->v + i, r->v + i + 1, sizeof *r->v * (size_t)(r->n - i - 1));
    r->n--;
    r->gen++;
    def_leave(e, d);
    pj__def_unref(d);
    return;
  }
}

const fe_macro *pj__macro_find(void *ctx, const char *name) {
  pj_def *d = pj__def_find(ctx, PJ_DEF_MACRO, name);
  return d && d->kind == PJ_DEF_MACRO ? &d->macro : NULL;
}

int pj__ir_defs_find(void *ctx, const char *name, ir_fndef *out) {
  pj_def *d = pj__def_find(ctx, PJ_DEF_FUNCTION, name);
  if (!d) return 0;
  *out = (ir_fndef){
      .name = d->name,
      .view = d->kind == PJ_DEF_VIEW,
      .table = d->table,
      .pipe = d->pipeline ? d->ast : NULL,
      .text = d->body,
      .nargs = d->nargs,
      .argnames = (const char *const *)d->argnames,
      .argtypes = d->argclass,
  };
  return 1;
}

/* ---- compiled bodies -------------------------------------------------- */

pj_query *pj__def_take_query(pj_def *d) {
  if (d->nq > 0) return d->q[--d->nq];
  pj_query *q = NULL;
  return pj_query_compile(d->e, d->body, &q) == PJ_OK ? q : NULL;
}

void pj__def_release_query(pj_def *d, pj_query *q) {
  if (!q) return;
  pj_query_clear_bindings(q);
  if (d->nq < (int)(sizeof d->q / sizeof *d->q)) d->q[d->nq++] = q;
  else pj_query_free(q);
}

sqlite3_stmt *pj__def_take_stmt(pj_def *d, char **errmsg) {
  if (d->nst > 0) return d->st[--d->nst];
  sqlite3_stmt *st = NULL;
  sqlite3 *db = d->e->db;
  if (sqlite3_prepare_v3(db, d->body, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK) {
    *errmsg = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return NULL;
  }
  return st;
}

void pj__def_release_stmt(pj_def *d, sqlite3_stmt *st) {
  if (!st) return;
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  if (d->nst < (int)(sizeof d->st / sizeof *d->st)) d->st[d->nst++] = st;
  else sqlite3_finalize(st);
}

pj_status pj__run_nested(pj_engine *e, pj_query *q, rt_table **out, char **errmsg) {
  rt_err err = e->err;
  const char *errtext = e->errtext;
  int line = e->errline, col = e->errcol;
  pj_timing timing = e->timing;
  pj_status s = pj__query_run_table(q, "result", out);
  if (s != PJ_OK) {
    if (e->errline > 0)
      *errmsg = sqlite3_mprintf("%s (line %d, column %d of the body)", pj_engine_errmsg(e),
                                e->errline, e->errcol);
    else
      *errmsg = sqlite3_mprintf("%s", e->err.set ? e->err.msg : "out of memory");
  }
  e->err = err;
  e->errtext = errtext;
  e->errline = line;
  e->errcol = col;
  /* The statement that called the body goes on with its own numbers. */
  timing.rows_in += e->timing.rows_in;
  e->timing = timing;
  return s;
}
