/*
 * def_call.c — calling a PerfettoSQL function's body (LANGUAGE.md §7.2):
 * arguments converted to their declared types and bound as `$name` to the
 * kept pipeline handle or SQLite statement, and the first value of a
 * scalar body. SQLite's calls (def_sqlite.c) and the pipelines' calls
 * (pj__def_call_scalar, through the runtime) share it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "runtime/sqlite/vtab.h"
#include "defs.h"

int pj__def_convert_args(pj_def *d, int argc, sqlite3_value **argv, pj_cval *out,
                         char **errmsg) {
  if (argc != d->nargs) {
    *errmsg = sqlite3_mprintf("%s: expected %d argument%s, but got %d", d->name, d->nargs,
                              d->nargs == 1 ? "" : "s", argc);
    return 0;
  }
  for (int i = 0; i < argc; i++) {
    char why[128];
    if (!pj__convert_value(argv[i], &d->argtypes[i], &out[i], why, sizeof why)) {
      *errmsg = sqlite3_mprintf("%s: argument %d ('%s') %s", d->name, i + 1, d->argnames[i], why);
      return 0;
    }
  }
  return 1;
}

/* The parameter number of argument i in the body's handles (0: the body
 * does not read it), looked up once: every handle is compiled from the
 * one text, so they number their parameters alike. */
static int arg_param(pj_def *d, pj_query *q, int i) {
  if (!d->argparam && d->nargs > 0) {
    int *v = rt_arena_alloc(&d->arena, sizeof *v * (size_t)d->nargs);
    for (int a = 0; v && a < d->nargs; a++) {
      char pname[300];
      snprintf(pname, sizeof pname, "$%s", d->argnames[a]);
      int k = pj_query_param_index(q, pname);
      v[a] = k > 0 ? k : 0;
    }
    d->argparam = v;
  }
  if (d->argparam) return d->argparam[i];
  char pname[300];   /* no memory for the list: look it up this time */
  snprintf(pname, sizeof pname, "$%s", d->argnames[i]);
  int k = pj_query_param_index(q, pname);
  return k > 0 ? k : 0;
}

int pj__def_bind_query(pj_def *d, pj_query *q, const pj_cval *args, char **errmsg) {
  for (int i = 0; i < d->nargs; i++) {
    int k = arg_param(d, q, i);
    if (k <= 0) continue;   /* the body does not read it */
    const pj_cval *v = &args[i];
    pj_status s = v->kind == SQLITE_INTEGER ? pj_query_bind_int64(q, k, v->i)
                  : v->kind == SQLITE_FLOAT ? pj_query_bind_double(q, k, v->f)
                  : v->kind == SQLITE_TEXT  ? pj_query_bind_text(q, k, v->s, (size_t)v->n)
                                            : pj_query_bind_null(q, k);
    if (s != PJ_OK) {
      *errmsg = sqlite3_mprintf("%s: cannot bind argument '%s'", d->name, d->argnames[i]);
      return 0;
    }
  }
  return 1;
}

int pj__def_bind_stmt(pj_def *d, sqlite3_stmt *st, const pj_cval *args, char **errmsg) {
  for (int i = 0; i < d->nargs; i++) {
    char pname[300];
    snprintf(pname, sizeof pname, "$%s", d->argnames[i]);
    int k = sqlite3_bind_parameter_index(st, pname);
    if (k <= 0) continue;
    const pj_cval *v = &args[i];
    int rc = v->kind == SQLITE_INTEGER ? sqlite3_bind_int64(st, k, v->i)
             : v->kind == SQLITE_FLOAT ? sqlite3_bind_double(st, k, v->f)
             : v->kind == SQLITE_TEXT  ? sqlite3_bind_text(st, k, v->s, v->n, SQLITE_TRANSIENT)
             : v->kind == SQLITE_BLOB  ? sqlite3_bind_blob(st, k, v->s, v->n, SQLITE_TRANSIENT)
                                       : sqlite3_bind_null(st, k);
    if (rc != SQLITE_OK) {
      *errmsg = sqlite3_mprintf("%s: cannot bind argument '%s': %s", d->name, d->argnames[i],
                                sqlite3_errstr(rc));
      return 0;
    }
  }
  return 1;
}

/* A scalar result as a SQLite-like value for pj__convert_value. */
static int convert_result(pj_def *d, sqlite3_value *v, pj_cval *out, char **errmsg) {
  char why[128];
  if (pj__convert_value(v, &d->ret, out, why, sizeof why)) return 1;
  *errmsg = sqlite3_mprintf("%s: its result %s", d->name, why);
  return 0;
}

int pj__def_call_scalar(pj_def *d, const pj_cval *args, sqlite3_context *ctx, char **errmsg) {
  pj_engine *e = d->e;
  if (d->pipeline) {
    pj_query *q = pj__def_take_query(d);
    if (!q) {
      *errmsg = sqlite3_mprintf("%s: %s", d->name, pj_engine_errmsg(e));
      return 0;
    }
    rt_table *t = NULL;
    int ok = pj__def_bind_query(d, q, args, errmsg) && pj__run_nested(e, q, &t, errmsg) == PJ_OK;
    pj__def_release_query(d, q);
    if (!ok) return 0;
    rt_view v;
    if (t->nrows > 0 && t->ncols > 0) rt_table_view(t, 0, 0, &v);
    if (t->nrows == 0 || t->ncols == 0 || rt_view_is_null(&v, 0)) sqlite3_result_null(ctx);
    else if (d->ret.t == RT_F64 && rt_type_is_int(v.type)) sqlite3_result_double(ctx, rt_view_f64(&v, 0));
    else rt_vtab_result(ctx, t, 0, 0, e->strings);
    rt_table_unref(t);
    return 1;
  }
  sqlite3_stmt *st = pj__def_take_stmt(d, errmsg);
  if (!st) return 0;
  int ok = pj__def_bind_stmt(d, st, args, errmsg);
  if (ok) {
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      pj_cval v;
      ok = convert_result(d, sqlite3_column_value(st, 0), &v, errmsg);
      if (ok) pj__result_cval(ctx, &v);
    } else if (rc == SQLITE_DONE) {
      sqlite3_result_null(ctx);
    } else {
      *errmsg = sqlite3_mprintf("%s: %s", d->name, sqlite3_errmsg(e->db));
      ok = 0;
    }
  }
  pj__def_release_stmt(d, st);
  return ok;
}

/* ---- calls from pipelines ---------------------------------------------- */

/* A word of the callout ABI (ir/plan.h) as a value for binding. */
static void word_value(pj_def *d, int i, int64_t w, bool null, pj_cval *v) {
  memset(v, 0, sizeof *v);
  if (null) return;   /* SQLITE_NULL is 5, not 0: set below */
  rt_type t = d->argclass[i];
  if (t == RT_F64) {
    v->kind = SQLITE_FLOAT;
    memcpy(&v->f, &w, sizeof v->f);
  } else if (t == RT_STR) {
    size_t n;
    v->kind = SQLITE_TEXT;
    v->s = rt_str_get(d->e->strings, (uint32_t)w, &n);
    v->n = (int)n;
  } else {
    v->kind = SQLITE_INTEGER;
    v->i = t == RT_BOOL ? w != 0 : w;
  }
}

/* A SQLite value of the declared return type as a word: 0, 1 for NULL. */
static int value_word(pj_def *d, const pj_cval *v, int64_t *out) {
  switch (v->kind) {
  case SQLITE_INTEGER: *out = v->i; return 0;
  case SQLITE_FLOAT: memcpy(out, &v->f, sizeof v->f); return 0;
  case SQLITE_TEXT: *out = rt_str_intern(d->e->strings, v->s, (size_t)v->n); return 0;
  default: return 1;
  }
}

static void copy_msg(char *err, size_t len, char *msg) {
  snprintf(err, len, "%s", msg ? msg : "out of memory");
  sqlite3_free(msg);
}

/* ir_callout_fn of a PerfettoSQL scalar function (ctx: its definition). */
static int udf_call(void *ctx, const int64_t *argv, uint64_t nulls, int64_t *out, char *err,
                    size_t errlen) {
  pj_def *d = ctx;
  pj_cval args[d->nargs > 0 ? d->nargs : 1];
  for (int i = 0; i < d->nargs; i++) {
    word_value(d, i, argv[i], (nulls >> i) & 1, &args[i]);
    if ((nulls >> i) & 1) args[i].kind = SQLITE_NULL;
  }
  char *msg = NULL;
  if (d->pipeline) {
    pj_query *q = pj__def_take_query(d);
    if (!q) {
      snprintf(err, errlen, "%s: %s", d->name, pj_engine_errmsg(d->e));
      return -1;
    }
    rt_table *t = NULL;
    int ok = pj__def_bind_query(d, q, args, &msg) && pj__run_nested(d->e, q, &t, &msg) == PJ_OK;
    pj__def_release_query(d, q);
    if (!ok) return copy_msg(err, errlen, msg), -1;
    int r = 1;
    if (t->nrows > 0 && t->ncols > 0) {
      rt_view v;
      rt_table_view(t, 0, 0, &v);
      if (!rt_view_is_null(&v, 0)) {
        r = 0;
        if (d->ret.t == RT_F64) {
          double f = rt_view_f64(&v, 0);
          memcpy(out, &f, sizeof f);
        } else if (d->ret.t == RT_STR) {
          *out = rt_view_str(&v, 0);
        } else {
          *out = rt_view_i64(&v, 0);
        }
      }
    }
    rt_table_unref(t);
    return r;
  }
  sqlite3_stmt *st = pj__def_take_stmt(d, &msg);
  if (!st) return copy_msg(err, errlen, msg), -1;
  int r = -1;
  if (pj__def_bind_stmt(d, st, args, &msg)) {
    int rc = sqlite3_step(st);
    pj_cval v;
    if (rc == SQLITE_DONE) r = 1;
    else if (rc != SQLITE_ROW) msg = sqlite3_mprintf("%s: %s", d->name, sqlite3_errmsg(d->e->db));
    else if (convert_result(d, sqlite3_column_value(st, 0), &v, &msg)) r = value_word(d, &v, out);
  }
  pj__def_release_stmt(d, st);
  if (r < 0) copy_msg(err, errlen, msg);
  return r;
}

static void udf_release(void *ctx) { pj__def_unref(ctx); }

int pj__ir_callout(void *ctx, const char *name, int nargs, ir_expr *const *args, rt_arena *a,
                   ir_callout *out, char *msg, size_t msglen) {
  pj_engine *e = ctx;
  int r = pj__trace_callout(e, name, nargs, args, a, out, msg, msglen);
  if (r) return r;
  pj_def *d = pj__def_find(e, PJ_DEF_FUNCTION, name);
  if (!d) return 0;
  if (d->kind == PJ_DEF_VIEW || d->table) {
    snprintf(msg, msglen, "%s is a %s: read it as a source (FROM %s%s)", d->name,
             d->kind == PJ_DEF_VIEW ? "view" : "table function", d->name,
             d->kind == PJ_DEF_VIEW ? "" : "(…)");
    return nargs < 0 ? 1 : -1;
  }
  if (nargs < 0) return 1;
  if (nargs != d->nargs) {
    snprintf(msg, msglen, "%s: expected %d argument%s, but got %d", d->name, d->nargs,
             d->nargs == 1 ? "" : "s", nargs);
    return -1;
  }
  bool bytes = d->ret.bytes;
  for (int i = 0; i < d->nargs; i++) bytes |= d->argtypes[i].bytes;
  if (bytes) {
    snprintf(msg, msglen, "%s takes or returns BYTES, which a pipeline cannot hold: call it in SQL",
             d->name);
    return -1;
  }
  rt_type *types = rt_arena_alloc(a, sizeof(rt_type) * (size_t)(d->nargs + 1));
  if (!types) {
    snprintf(msg, msglen, "%s: out of memory", d->name);
    return -1;
  }
  for (int i = 0; i < d->nargs; i++) types[i] = d->argclass[i] == RT_BOOL ? RT_I64 : d->argclass[i];
  *out = (ir_callout){.name = d->name, .nargs = d->nargs, .argtypes = types,
                      .argnames = (const char *const *)d->argnames, .ret = d->ret.t,
                      .fn = udf_call, .ctx = pj__def_ref(d), .release = udf_release};
  return 1;
}
