/*
 * tracefn.c — the trace functions of LANGUAGE.md §7.7, in SQL (SQLite
 * functions of the engine's connection) and in pipelines (callouts, see
 * ir/plan.h), with one implementation of each:
 *
 *   EXTRACT_ARG(arg_set_id, 'key')  the value of key in that arg set, as
 *                                   stored (integer, real or string), or NULL
 *   trace_start(), trace_end(), trace_dur()   from trace_bounds
 *
 * EXTRACT_ARG reads the columnar `args` table of a loaded trace through an
 * index (runtime/argindex.h: binary search on arg_set_id, built once per
 * table and kept until the table is replaced); without one it asks SQLite
 * (an `args` table of a --db file, as trace_processor exports it).
 *
 * A pipeline types EXTRACT_ARG from the values its key holds in the table
 * (the key must then be a constant string): integers give an integer
 * column, reals (with or without integers) a double column, strings a
 * string column; a key holding both strings and numbers is an error, since
 * a pipeline column has one type.
 */
#include <stdio.h>
#include <stdlib.h>

#include "runtime/argindex.h"
#include "defs.h"

/* ---- the data ---------------------------------------------------------- */

/* args_index's *why when the index could not be built for want of
 * memory (not a column the table lacks). */
static const char k_nomem[] = "";

/* The index of the catalog's `args`, made or refreshed (NULL: no columnar
 * args, or one without the columns; *why then says which, or is k_nomem). */
static rt_argindex *args_index(pj_engine *e, const char **why) {
  *why = NULL;
  rt_table *t = rt_catalog_get(e->catalog, "args");
  pj_defs *d = e->defs;
  if (!t) return NULL;
  if (d->args_index && rt_argindex_table(d->args_index) == t) return d->args_index;
  rt_argindex_unref(d->args_index);
  d->args_index = rt_argindex_new(t, why);
  if (!d->args_index && !*why) *why = k_nomem;
  return d->args_index;
}

/* trace_bounds' one row: the columnar table of a loaded trace, else
 * SQLite's. 0 with *msg set when there is none. */
static int trace_bounds(pj_engine *e, int64_t *start, int64_t *end, char *msg, size_t len) {
  rt_table *t = rt_catalog_get(e->catalog, "trace_bounds");
  if (t) {
    int cs = rt_table_find_col(t, "start_ts"), ce = rt_table_find_col(t, "end_ts");
    if (cs < 0 || ce < 0 || t->nrows < 1 || !rt_type_is_int(t->cols[cs].type) ||
        !rt_type_is_int(t->cols[ce].type)) {
      snprintf(msg, len, "trace_bounds has no row of start_ts, end_ts");
      return 0;
    }
    rt_view v;
    rt_table_view(t, cs, 0, &v);
    *start = rt_view_i64(&v, 0);
    rt_table_view(t, ce, 0, &v);
    *end = rt_view_i64(&v, 0);
    return 1;
  }
  sqlite3_stmt *q = NULL;
  int ok = 0;
  if (sqlite3_prepare_v2(e->db, "SELECT start_ts, end_ts FROM trace_bounds", -1, &q, NULL) ==
          SQLITE_OK &&
      sqlite3_step(q) == SQLITE_ROW) {
    *start = sqlite3_column_int64(q, 0);
    *end = sqlite3_column_int64(q, 1);
    ok = 1;
  } else {
    snprintf(msg, len, "there is no trace_bounds table (load a trace)");
  }
  sqlite3_finalize(q);
  return ok;
}

/* EXTRACT_ARG through SQLite (no columnar args). kind as argindex.h;
 * text into *s (valid until the statement is reset: copied by callers). */
static sqlite3_stmt *sql_extract(pj_engine *e, int64_t set, const char *key, int keylen,
                                 char *msg, size_t len) {
  sqlite3_stmt *q = NULL;
  if (sqlite3_prepare_v2(e->db,
                         "SELECT coalesce(int_value, string_value, real_value) FROM args "
                         "WHERE arg_set_id = ?1 AND key = ?2 LIMIT 1",
                         -1, &q, NULL) != SQLITE_OK) {
    snprintf(msg, len, "there is no args table (load a trace): %s", sqlite3_errmsg(e->db));
    sqlite3_finalize(q);
    return NULL;
  }
  sqlite3_bind_int64(q, 1, set);
  sqlite3_bind_text(q, 2, key, keylen, SQLITE_TRANSIENT);
  return q;
}

/* ---- SQL -------------------------------------------------------------- */

static void sql_extract_arg(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  pj_engine *e = sqlite3_user_data(ctx);
  if (argc != 2) {
    sqlite3_result_error(ctx, "EXTRACT_ARG: expected 2 arguments (arg_set_id, key)", -1);
    return;
  }
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL)
    return;
  int64_t set = sqlite3_value_int64(argv[0]);
  const char *key = (const char *)sqlite3_value_text(argv[1]);
  int keylen = sqlite3_value_bytes(argv[1]);
  const char *why;
  rt_argindex *x = args_index(e, &why);
  char msg[300];
  if (!x && why) {
    if (why == k_nomem) {
      sqlite3_result_error_nomem(ctx);
      return;
    }
    snprintf(msg, sizeof msg, "EXTRACT_ARG: the args table has no usable column '%s'", why);
    sqlite3_result_error(ctx, msg, -1);
    return;
  }
  if (x) {
    uint32_t k, s;
    int64_t i;
    double f;
    if ((k = rt_str_find(e->strings, key ? key : "", (size_t)keylen)) == RT_STR_FAILED) return;
    switch (rt_argindex_get(x, set, k, &i, &f, &s)) {
    case RT_ARG_INT: sqlite3_result_int64(ctx, i); break;
    case RT_ARG_REAL: sqlite3_result_double(ctx, f); break;
    case RT_ARG_STR: {
      size_t n;
      const char *t = rt_str_get(e->strings, s, &n);
      sqlite3_result_text64(ctx, t, n, SQLITE_STATIC, SQLITE_UTF8);   /* the pool keeps it */
      break;
    }
    default: break;
    }
    return;
  }
  sqlite3_stmt *q = sql_extract(e, set, key ? key : "", keylen, msg, sizeof msg);
  if (!q) {
    sqlite3_result_error(ctx, msg + 0, -1);
    return;
  }
  if (sqlite3_step(q) == SQLITE_ROW) sqlite3_result_value(ctx, sqlite3_column_value(q, 0));
  sqlite3_finalize(q);
}

/* trace_start(), trace_end(), trace_dur(): which = 0, 1, 2. */
static int bound(pj_engine *e, int which, int64_t *out, char *msg, size_t len) {
  int64_t start, end;
  if (!trace_bounds(e, &start, &end, msg, len)) return 0;
  *out = which == 0 ? start : which == 1 ? end : end - start;
  return 1;
}

static void sql_bound(sqlite3_context *ctx, int argc, int which) {
  static const char *const names[] = {"trace_start", "trace_end", "trace_dur"};
  char msg[300];
  int64_t v;
  if (argc != 0) {
    snprintf(msg, sizeof msg, "%s: expected no arguments", names[which]);
    sqlite3_result_error(ctx, msg, -1);
  } else if (!bound(sqlite3_user_data(ctx), which, &v, msg, sizeof msg)) {
    char full[400];
    snprintf(full, sizeof full, "%s: %s", names[which], msg);
    sqlite3_result_error(ctx, full, -1);
  } else {
    sqlite3_result_int64(ctx, v);
  }
}

static void sql_trace_start(sqlite3_context *c, int n, sqlite3_value **v) { (void)v; sql_bound(c, n, 0); }
static void sql_trace_end(sqlite3_context *c, int n, sqlite3_value **v) { (void)v; sql_bound(c, n, 1); }
static void sql_trace_dur(sqlite3_context *c, int n, sqlite3_value **v) { (void)v; sql_bound(c, n, 2); }

int pj__trace_functions_register(pj_engine *e) {
  static const struct {
    const char *name;
    void (*fn)(sqlite3_context *, int, sqlite3_value **);
  } fns[] = {
      {"extract_arg", sql_extract_arg},
      {"trace_start", sql_trace_start},
      {"trace_end", sql_trace_end},
      {"trace_dur", sql_trace_dur},
  };
  for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
    int rc = sqlite3_create_function_v2(e->db, fns[i].name, -1, SQLITE_UTF8, e, fns[i].fn, NULL,
                                        NULL, NULL);
    if (rc != SQLITE_OK) return rc;
  }
  return SQLITE_OK;
}

/* ---- pipelines -------------------------------------------------------- */

typedef struct extract_ctx {
  pj_engine *e;
  rt_argindex *x;       /* NULL: ask SQLite */
  bool known;           /* the key is in the pool (else never found) */
  uint32_t key;
  const char *keytext;
  int keylen;
  rt_type ret;
} extract_ctx;

static void extract_release(void *p) {
  extract_ctx *c = p;
  rt_argindex_unref(c->x);
  free(c);
}

/* A found value as the callout's word, in the column's type. */
static int as_word(rt_type ret, int kind, int64_t i, double f, uint32_t s, int64_t *out) {
  if (ret == RT_F64) {
    double d = kind == RT_ARG_INT ? (double)i : f;
    memcpy(out, &d, sizeof d);
  } else if (ret == RT_STR) {
    *out = s;
  } else {
    *out = i;
  }
  return 0;
}

static int extract_call(void *ctx, const int64_t *argv, uint64_t nulls, int64_t *out, char *err,
                        size_t errlen) {
  extract_ctx *c = ctx;
  if (nulls & 1) return 1;
  int64_t i = 0;
  double f = 0;
  uint32_t s = 0;
  if (c->x) {
    if (!c->known) return 1;
    int kind = rt_argindex_get(c->x, argv[0], c->key, &i, &f, &s);
    return kind ? as_word(c->ret, kind, i, f, s, out) : 1;
  }
  sqlite3_stmt *q = sql_extract(c->e, argv[0], c->keytext, c->keylen, err, errlen);
  if (!q) return -1;
  int r = 1;
  if (sqlite3_step(q) == SQLITE_ROW) {
    int k = sqlite3_column_type(q, 0);
    if (k == SQLITE_INTEGER) r = as_word(c->ret, RT_ARG_INT, sqlite3_column_int64(q, 0), 0, 0, out);
    else if (k == SQLITE_FLOAT) r = as_word(c->ret, RT_ARG_REAL, 0, sqlite3_column_double(q, 0), 0, out);
    else if (k == SQLITE_TEXT && c->ret == RT_STR) {
      uint32_t id = rt_str_intern(c->e->strings, (const char *)sqlite3_column_text(q, 0),
                                  (size_t)sqlite3_column_bytes(q, 0));
      r = as_word(c->ret, RT_ARG_STR, 0, 0, id, out);
    } else if (k != SQLITE_NULL) {
      snprintf(err, errlen, "key '%.*s' holds a value of another type than when the query was "
               "bound", c->keylen, c->keytext);
      r = -1;
    }
  }
  sqlite3_finalize(q);
  return r;
}

/* What a key holds: RT_ARG_* bits, from the index or from SQLite. */
static int key_kinds(pj_engine *e, rt_argindex *x, const char *key, size_t len) {
  if (x) {
    uint32_t k = rt_str_find(e->strings, key, len);
    return k != RT_STR_FAILED ? rt_argindex_key_kinds(x, k) : 0;
  }
  sqlite3_stmt *q = NULL;
  int kinds = 0;
  if (sqlite3_prepare_v2(e->db,
                         "SELECT DISTINCT typeof(coalesce(int_value, string_value, real_value)) "
                         "FROM args WHERE key = ?1",
                         -1, &q, NULL) == SQLITE_OK) {
    sqlite3_bind_text(q, 1, key, (int)len, SQLITE_STATIC);
    while (sqlite3_step(q) == SQLITE_ROW) {
      const char *t = (const char *)sqlite3_column_text(q, 0);
      if (!t) continue;
      kinds |= !strcmp(t, "integer") ? RT_ARG_INT : !strcmp(t, "real") ? RT_ARG_REAL
               : !strcmp(t, "text") ? RT_ARG_STR : 0;
    }
  }
  sqlite3_finalize(q);
  return kinds;
}

static int extract_callout(pj_engine *e, int nargs, ir_expr *const *args, rt_arena *a,
                           ir_callout *out, char *msg, size_t len) {
  if (nargs != 2) {
    snprintf(msg, len, "EXTRACT_ARG: expected 2 arguments (arg_set_id, key), but got %d", nargs);
    return -1;
  }
  const ir_expr *k = args[1];
  if (k->kind != IX_CONST || k->is_null || k->type != RT_STR) {
    snprintf(msg, len, "EXTRACT_ARG: in a pipeline the key must be a constant string");
    return -1;
  }
  if (args[0]->type == RT_STR || args[0]->type == RT_F64) {
    snprintf(msg, len, "EXTRACT_ARG: expected an arg_set_id (an integer) as the first argument");
    return -1;
  }
  size_t keylen;
  const char *key = rt_str_get(e->strings, k->sval, &keylen);
  const char *why;
  rt_argindex *x = args_index(e, &why);
  if (!x && why) {
    if (why == k_nomem) snprintf(msg, len, "EXTRACT_ARG: out of memory");
    else snprintf(msg, len, "EXTRACT_ARG: the args table has no usable column '%s'", why);
    return -1;
  }
  if (!x && !rt_catalog_get(e->catalog, "args")) {
    sqlite3_stmt *q = NULL;
    int ok = sqlite3_prepare_v2(e->db, "SELECT arg_set_id, key, int_value, string_value, "
                                       "real_value FROM args", -1, &q, NULL) == SQLITE_OK;
    sqlite3_finalize(q);
    if (!ok) {
      snprintf(msg, len, "EXTRACT_ARG: there is no args table (load a trace)");
      return -1;
    }
  }
  int kinds = key_kinds(e, x, key, keylen);
  if ((kinds & RT_ARG_STR) && (kinds & (RT_ARG_INT | RT_ARG_REAL))) {
    snprintf(msg, len, "EXTRACT_ARG: key '%s' holds both strings and numbers, but a pipeline "
             "column has one type: read it in SQL, or CAST it there", key);
    return -1;
  }
  extract_ctx *c = calloc(1, sizeof *c);
  if (!c) {
    snprintf(msg, len, "EXTRACT_ARG: out of memory");
    return -1;
  }
  c->e = e;
  c->x = x ? rt_argindex_ref(x) : NULL;
  c->key = x ? rt_str_find(e->strings, key, keylen) : RT_STR_FAILED;
  c->known = c->key != RT_STR_FAILED;
  c->keytext = rt_arena_strndup(a, key, keylen);
  c->keylen = (int)keylen;
  c->ret = kinds & RT_ARG_STR ? RT_STR : kinds & RT_ARG_REAL ? RT_F64 : RT_I64;
  rt_type *types = rt_arena_alloc(a, sizeof(rt_type) * 2);
  if (!c->keytext || !types) {
    extract_release(c);
    snprintf(msg, len, "EXTRACT_ARG: out of memory");
    return -1;
  }
  types[0] = RT_I64;
  types[1] = RT_STR;
  *out = (ir_callout){.name = "extract_arg", .nargs = 2, .argtypes = types, .ret = c->ret,
                      .fn = extract_call, .ctx = c, .release = extract_release,
                      .table = x ? rt_table_ref(rt_catalog_get(e->catalog, "args")) : NULL,
                      .reads_sql = x == NULL};
  return 1;
}

typedef struct bound_ctx {
  pj_engine *e;
  int which;
} bound_ctx;

static int bound_call(void *ctx, const int64_t *argv, uint64_t nulls, int64_t *out, char *err,
                      size_t errlen) {
  bound_ctx *c = ctx;
  /* which 3: INTERVAL QUANTIZE's TRACE START, NULL without a trace (the
   * stage then aligns to the input's smallest ts) */
  if (c->which == 3) return bound(c->e, 0, out, err, errlen) ? 0 : 1;
  return bound(c->e, c->which, out, err, errlen) ? 0 : -1;
}

int pj__trace_callout(pj_engine *e, const char *name, int nargs, ir_expr *const *args,
                      rt_arena *a, ir_callout *out, char *msg, size_t len) {
  /* the last one is bound only by INTERVAL QUANTIZE (ir/bind_reshape.c) */
  static const char *const bounds[] = {"trace_start", "trace_end", "trace_dur",
                                       "__pj_trace_start_or_null"};
  if (rt_strieq(name, "extract_arg"))
    return nargs < 0 ? 1 : extract_callout(e, nargs, args, a, out, msg, len);
  for (int w = 0; w < 4; w++) {
    if (!rt_strieq(name, bounds[w])) continue;
    if (nargs < 0) return 1;
    if (nargs != 0) {
      snprintf(msg, len, "%s: expected no arguments", bounds[w]);
      return -1;
    }
    bound_ctx *c = rt_arena_alloc(a, sizeof *c);
    if (!c) {
      snprintf(msg, len, "%s: out of memory", bounds[w]);
      return -1;
    }
    c->e = e;
    c->which = w;
    *out = (ir_callout){.name = bounds[w], .ret = RT_I64, .fn = bound_call, .ctx = c};
    return 1;
  }
  return 0;
}
