/*
 * sqltab.c — compiled pipelines as SQLite tables (sqltab.h): an rt_vsource
 * whose scans run the handle.
 *
 * A table function runs once per call, often once per row of a join, so a
 * call costs no more than a run of its handle: the run's rows stay in a
 * buffer the table keeps, filled again by the next call (only the rows
 * the last one held are zeroed), and the cursor reads them in place
 * through a table shell kept with it (columns borrowed from the buffer)
 * instead of a table made and freed per call. The shell is refilled only
 * when no cursor holds it (its reference count is the table's own): a
 * second cursor reading the table meanwhile (a self-join, fb(1) a, fb(2)
 * b) gets a table of its own, as does a result too large to keep (past
 * SQLTAB_KEEP_BYTES, which bounds what a table holds between calls).
 */
#include <stdio.h>
#include <stdlib.h>

#include "ir/plan.h"
#include "runtime/tabindex.h"
#include "sqltab.h"

typedef struct sqltab {
  rt_vsource base;
  pj_engine *e;
  pj_query *q;
  char *what;
  char **names;
  rt_type *types;
  char **arg_names;
  pj__sqltab_bind_fn bind;
  void *bind_ctx;
  void (*bind_ctx_free)(void *ctx);
  bool own_text;
  bool running;
  rt_rowbuf rows;     /* the last call's rows, kept to fill again (types
                         NULL: none) */
  rt_table *shell;    /* reads `rows` in place; NULL until the first call */
} sqltab;

/* The most a table keeps between calls: larger results become tables of
 * their own. */
#define SQLTAB_KEEP_BYTES ((int64_t)1 << 20)

static const char *sql_class(rt_type t) {
  return t == RT_F64 ? "REAL" : t == RT_STR ? "TEXT" : "INTEGER";
}

/* The shell outlives the table when a cursor still holds it: its
 * columns then take the buffer's arrays (and the buffer only its
 * bookkeeping goes). */
static void shell_release(sqltab *s) {
  rt_table *t = s->shell;
  s->shell = NULL;
  if (t && t->refs > 1 && t->ncols == s->rows.ncols && s->rows.types) {
    for (int c = 0; c < t->ncols; c++) {
      t->cols[c].data = s->rows.data[c];
      t->cols[c].valid = s->rows.valid[c];
      t->cols[c].nullable = true;
      t->cols[c].borrowed = false;
      s->rows.data[c] = NULL;
      s->rows.valid[c] = NULL;
    }
  }
  rt_table_unref(t);
  rt_rowbuf_free(&s->rows);
}

static void sqltab_destroy(rt_vsource *self) {
  sqltab *s = (sqltab *)self;
  shell_release(s);
  pj_query_free(s->q);
  for (int c = 0; s->names && c < self->ncols; c++) free(s->names[c]);
  for (int k = 0; s->arg_names && k < self->nargs; k++) free(s->arg_names[k]);
  free(s->names);
  free(s->types);
  free(s->arg_names);
  free(s->what);
  if (s->bind_ctx_free) s->bind_ctx_free(s->bind_ctx);
  free(s);
}

static int bind_default(pj_query *q, int nargs, sqlite3_value **args, char **msg) {
  pj_query_clear_bindings(q);
  int np = pj_query_param_count(q);
  for (int k = 1; k <= nargs && k <= np; k++) {
    sqlite3_value *v = args[k - 1];
    pj_status st;
    switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER: st = pj_query_bind_int64(q, k, sqlite3_value_int64(v)); break;
    case SQLITE_FLOAT: st = pj_query_bind_double(q, k, sqlite3_value_double(v)); break;
    case SQLITE_NULL: st = pj_query_bind_null(q, k); break;
    case SQLITE_TEXT: {
      const char *t = (const char *)sqlite3_value_text(v);
      st = pj_query_bind_text(q, k, t ? t : "", (size_t)sqlite3_value_bytes(v));
      break;
    }
    default:
      *msg = sqlite3_mprintf("parameter %d is a blob, which a pipeline cannot take", k);
      return 0;
    }
    if (st != PJ_OK) {
      *msg = sqlite3_mprintf("%s", pj_engine_errmsg(q->e));
      return 0;
    }
  }
  return 1;
}

/* No cursor holds the shell: the kept buffer may be filled again. */
static bool shell_free(const sqltab *s) { return !s->shell || s->shell->refs == 1; }

/* The shell over the kept buffer's rows, a new reference (NULL when out of
 * memory, the buffer then freed). */
static rt_table *shell_fill(sqltab *s) {
  rt_rowbuf *b = &s->rows;
  if (!s->shell) {
    rt_table *t = rt_table_alloc("result", b->ncols);
    for (int c = 0; t && c < b->ncols; c++)
      if (!(t->cols[c].name = rt_strdup(s->names[c]))) {
        rt_table_unref(t);
        t = NULL;
      }
    if (!t) {
      rt_rowbuf_free(b);
      return NULL;
    }
    s->shell = t;
  }
  rt_table *t = s->shell;
  rt_table_indexes_free(t);   /* built over the last call's rows */
  t->nrows = b->nrows;
  const ir_plan *p = s->q->plan;
  const ir_op *out = p->segs[p->nsegs - 1].sink;
  for (int c = 0; c < b->ncols; c++) {
    rt_type type = p->cols[out->output.out[c]].type == RT_BOOL ? RT_BOOL : b->types[c];
    rt_column_borrow(&t->cols[c], type, b->data[c], b->valid[c], b->nrows);
  }
  return rt_table_ref(t);
}

/* One run into the kept buffer, read through the shell (or a table of its
 * own when the rows are too many to keep). */
static pj_status run_kept(sqltab *s, rt_table **out) {
  rt_rowbuf *b = &s->rows;
  if (b->types && rt_rowbuf_bytes(b) > SQLTAB_KEEP_BYTES) rt_rowbuf_free(b);
  rt_rowbuf_clear(b);
  pj_status st = pj__query_run_rows(s->q, b);
  if (st != PJ_OK) return st;
  if (b->ncols != s->base.ncols || rt_rowbuf_bytes(b) > SQLTAB_KEEP_BYTES) {
    /* A table of its own (the column check below names a change). */
    *out = pj__query_rows_table(s->q, b, "result");
  } else {
    *out = shell_fill(s);
  }
  return *out ? PJ_OK : pj__failf(s->e, "run: out of memory");
}

static rt_table *sqltab_open(rt_vsource *self, sqlite3_value **args, char **msg) {
  sqltab *s = (sqltab *)self;
  pj_engine *e = s->e;
  if (s->running) {
    *msg = sqlite3_mprintf("%s reads itself while it runs (a recursive call): this is not "
                           "supported for a pipeline", s->what);
    return NULL;
  }
  if (s->bind ? !s->bind(s->bind_ctx, s->q, self->nargs, args, msg)
              : !bind_default(s->q, self->nargs, args, msg))
    return NULL;
  /* The statement this scan belongs to keeps its own timing. */
  pj_timing outer = e->timing;
  rt_table *t = NULL;
  s->running = true;
  pj_status st = shell_free(s) ? run_kept(s, &t) : pj__query_run_table(s->q, "result", &t);
  s->running = false;
  e->timing = outer;
  if (st != PJ_OK && s->own_text) {
    if (e->errline > 0)
      *msg = sqlite3_mprintf("%s: %s (line %d, column %d of its body)", s->what,
                             pj_engine_errmsg(e), e->errline, e->errcol);
    else
      *msg = sqlite3_mprintf("%s: %s", s->what, st == PJ_NOMEM ? "out of memory" : pj_engine_errmsg(e));
    return NULL;
  }
  if (st != PJ_OK) {
    e->sqltab_err = e->err;
    e->sqltab_errtext = e->errtext;
    *msg = sqlite3_mprintf("%s", st == PJ_NOMEM ? "out of memory" : pj_engine_errmsg(e));
    return NULL;
  }
  /* A table the handle reads was replaced with other columns: the
   * statement was prepared for the old ones. */
  const ir_plan *p = s->q->plan;
  const ir_op *out = p->segs[p->nsegs - 1].sink;
  int same = t->ncols == self->ncols && out->output.nout == self->ncols;
  for (int c = 0; same && c < t->ncols; c++)
    same = rt_strieq(out->output.out_names[c], s->names[c]) &&
           !strcmp(sql_class(t->cols[c].type), sql_class(s->types[c]));
  if (!same) {
    rt_table_unref(t);
    *msg = sqlite3_mprintf("the columns of %s changed since the statement was prepared "
                           "(a table it reads was replaced): prepare it again", s->what);
    return NULL;
  }
  self->est_rows = t->nrows > 0 ? (double)t->nrows : 1;
  return t;
}

static pj_status refuse(pj_engine *e, const pj__sqltab_def *def, sqltab *s, const char *fmt,
                        const char *name) {
  char msg[400];
  snprintf(msg, sizeof msg, fmt, name);
  pj__failf(e, "%s: %s", def->what ? def->what : def->module, msg);
  if (s) sqltab_destroy(&s->base);
  else {
    pj_query_free(def->q);
    if (def->bind_ctx_free) def->bind_ctx_free(def->bind_ctx);
  }
  return PJ_ERROR;
}

pj_status pj__sqltab_register(pj_engine *e, const pj__sqltab_def *def) {
  pj_query *q = def->q;
  if (!q->plan) return refuse(e, def, NULL, "the pipeline has no plan%s", "");
  const ir_op *out = q->plan->segs[q->plan->nsegs - 1].sink;
  int n = out->output.nout;
  if (n == 0) return refuse(e, def, NULL, "the pipeline returns no columns%s", "");
  for (int c = 0; c < n; c++) {
    const char *nm = out->output.out_names[c];
    for (int d = 0; d < c; d++)
      if (rt_strieq(nm, out->output.out_names[d]))
        return refuse(e, def, NULL,
                      "SQL needs distinct column names, but there are two named '%s': rename "
                      "one with AS", nm);
    int hidden = !def->arg_names && rt_strnieq(nm, "__pj_arg", 8);
    for (int k = 0; def->arg_names && k < def->nargs; k++) hidden |= rt_strieq(nm, def->arg_names[k]);
    if (hidden) return refuse(e, def, NULL, "the column name '%s' is taken by an argument", nm);
  }
  sqltab *s = calloc(1, sizeof *s);
  if (!s) {
    pj_query_free(q);
    if (def->bind_ctx_free) def->bind_ctx_free(def->bind_ctx);
    return pj__nomem_msg(e, PJ_NOMEM);
  }
  s->e = e;
  s->q = q;
  s->bind = def->bind;
  s->bind_ctx = def->bind_ctx;
  s->bind_ctx_free = def->bind_ctx_free;
  s->own_text = def->own_text;
  s->base.ncols = n;
  s->base.nargs = def->nargs;
  s->what = rt_strdup(def->what ? def->what : def->module);
  s->names = calloc((size_t)n, sizeof *s->names);
  s->types = calloc((size_t)n, sizeof *s->types);
  int ok = s->what && s->names && s->types;
  for (int c = 0; ok && c < n; c++) {
    ok = (s->names[c] = rt_strdup(out->output.out_names[c])) != NULL;
    s->types[c] = q->plan->cols[out->output.out[c]].type;
  }
  if (ok && def->arg_names) {
    s->arg_names = calloc((size_t)def->nargs + 1, sizeof *s->arg_names);
    ok = s->arg_names != NULL;
    for (int k = 0; ok && k < def->nargs; k++) ok = (s->arg_names[k] = rt_strdup(def->arg_names[k])) != NULL;
  }
  if (!ok) {
    sqltab_destroy(&s->base);
    return pj__nomem_msg(e, PJ_NOMEM);
  }
  rt_vsource *b = &s->base;
  b->names = (const char *const *)s->names;
  b->types = s->types;
  b->arg_names = (const char *const *)s->arg_names;
  b->what = s->what;
  b->sp = e->strings;
  b->stats = &e->vtab_stats;
  int64_t est = pj__plan_estimate_rows(q->plan);
  b->est_rows = est > 1000000000 ? 1e9 : est > 0 ? (double)est : 1;
  b->open = sqltab_open;
  b->destroy = sqltab_destroy;
  int rc = rt_vtab_register_source(e->db, def->module, b);   /* destroys b on failure */
  if (rc != SQLITE_OK)
    return pj__failf(e, "%s: cannot register it with SQLite: %s", def->what ? def->what : def->module,
                     sqlite3_errstr(rc));
  return PJ_OK;
}

void pj__sqltab_unregister(pj_engine *e, const char *module) { rt_vtab_unregister(e->db, module); }
