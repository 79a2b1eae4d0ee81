/*
 * def_body.c — what CREATE PERFETTO FUNCTION and VIEW share: reading a
 * signature or schema, checking that the name is free, and compiling a
 * pipeline body (once: the handle is kept for the first call).
 *
 * Names: functions and views share SQL's namespace with tables, views and
 * SQLite's own functions and modules, so a new name must be none of
 * those; OR REPLACE replaces only a definition of the same kind (a view
 * by a view, a function by a function, scalar or table).
 */
#include <stdio.h>
#include <stdlib.h>

#include "ir/plan.h"
#include "defs.h"

/* The statement that makes a definition of d's kind, for messages. */
static const char *def_stage(const pj_def *d) {
  return d->kind == PJ_DEF_VIEW ? "CREATE PERFETTO VIEW" : "CREATE PERFETTO FUNCTION";
}

static int fail_oom(rt_err *err, const char *stage, int pos) {
  return rt_errorf(err, pos, "%s: out of memory", stage);
}

static int fail_type(rt_err *err, const char *stage, const fe_coldef *c) {
  return rt_errorf(err, c->typepos, "%s: unknown type '%s': expected " PJ_PTYPE_NAMES, stage,
                   c->type);
}

/* name type, … into names/types (arena of d); checks distinct names. */
static int read_list(pj_def *d, const fe_coldef *defs, int n, char ***names, pj_ptype **types,
                     const char *stage, const char *what, rt_err *err) {
  *names = rt_arena_alloc(&d->arena, sizeof(char *) * (size_t)(n + 1));
  *types = rt_arena_alloc(&d->arena, sizeof(pj_ptype) * (size_t)(n + 1));
  if (!*names || !*types) return fail_oom(err, stage, n > 0 ? defs[0].name.pos : -1);
  for (int i = 0; i < n; i++) {
    const fe_coldef *c = &defs[i];
    for (int j = 0; j < i; j++)
      if (rt_strieq(c->name.name, defs[j].name.name))
        return rt_errorf(err, c->name.pos, "%s: %s '%s' is listed twice", stage, what, c->name.name);
    if (!((*names)[i] = rt_arena_strdup(&d->arena, c->name.name)))
      return fail_oom(err, stage, c->name.pos);
    if (!pj__ptype_parse(c->type, &(*types)[i])) return fail_type(err, stage, c);
    if (!((*types)[i].name = rt_arena_strdup(&d->arena, c->type)))
      return fail_oom(err, stage, c->typepos);
  }
  return 1;
}

int pj__def_signature(pj_def *d, const fe_stmt *st, const char *stage, rt_err *err) {
  d->nargs = st->nargs;
  if (!read_list(d, st->args, st->nargs, &d->argnames, &d->argtypes, stage, "argument", err))
    return 0;
  d->argclass = rt_arena_alloc(&d->arena, sizeof(rt_type) * (size_t)(d->nargs + 1));
  if (!d->argclass) return fail_oom(err, stage, st->table.pos);
  for (int i = 0; i < d->nargs; i++) d->argclass[i] = d->argtypes[i].t;
  if (st->ncoldefs >= 0) {
    d->ncols = st->ncoldefs;
    if (!read_list(d, st->coldefs, st->ncoldefs, &d->colnames, &d->coltypes, stage, "column", err))
      return 0;
  }
  if (st->returns && st->kind == STMT_CREATE_FUNCTION) {
    fe_coldef r = {.type = st->returns, .typepos = st->returnspos};
    if (!pj__ptype_parse(st->returns, &d->ret)) return fail_type(err, stage, &r);
    if (!(d->ret.name = rt_arena_strdup(&d->arena, st->returns)))
      return fail_oom(err, stage, st->returnspos);
  }
  return 1;
}

/* Is `sql` (one integer column, ?1 = the name) true? */
static bool sqlite_has(pj_engine *e, const char *sql, const char *name) {
  sqlite3_stmt *q = NULL;
  bool has = false;
  if (sqlite3_prepare_v2(e->db, sql, -1, &q, NULL) == SQLITE_OK) {
    sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
    has = sqlite3_step(q) == SQLITE_ROW;
  }
  sqlite3_finalize(q);
  return has;
}

int pj__def_name_free(pj_engine *e, const fe_stmt *st, pj_defkind kind, bool table,
                      const char *stage, rt_err *err) {
  const char *name = st->table.name;
  int pos = st->table.pos;
  const char *what = kind == PJ_DEF_VIEW ? "view" : "function";
  pj_def *old = pj__def_find(e, kind, name);
  if (old && old->kind != kind)
    return rt_errorf(err, pos, "%s: '%s' is already a %s", stage, name,
                     old->kind == PJ_DEF_VIEW ? "view" : "function");
  if (old && !st->or_replace)
    return rt_errorf(err, pos, "%s: %s '%s' already exists (use CREATE OR REPLACE PERFETTO %s)",
                     stage, what, name, kind == PJ_DEF_VIEW ? "VIEW" : "FUNCTION");
  if (rt_catalog_get(e->catalog, name))
    return rt_errorf(err, pos, "%s: '%s' is already the name of a table", stage, name);
  /* A SQL view of ours is a temp view: it may be replaced. */
  bool ours = old && old->kind == PJ_DEF_VIEW && !old->pipeline;
  if (!ours && sqlite_has(e,
                          "SELECT 1 FROM main.sqlite_schema WHERE name = ?1 COLLATE NOCASE AND "
                          "type IN ('table', 'view') UNION ALL SELECT 1 FROM temp.sqlite_schema "
                          "WHERE name = ?1 COLLATE NOCASE AND type IN ('table', 'view')",
                          name))
    return rt_errorf(err, pos, "%s: '%s' is already the name of a SQLite table or view", stage,
                     name);
  if (!old && (table || kind == PJ_DEF_VIEW) &&
      sqlite_has(e, "SELECT 1 FROM pragma_module_list WHERE name = ?1 COLLATE NOCASE", name))
    return rt_errorf(err, pos, "%s: '%s' is already the name of a SQLite module", stage, name);
  if (!old && !table && kind == PJ_DEF_FUNCTION &&
      sqlite_has(e, "SELECT 1 FROM pragma_function_list WHERE name = ?1 COLLATE NOCASE", name))
    return rt_errorf(err, pos, "%s: '%s' is already a SQL function", stage, name);
  return 1;
}

/* Binds a value of each argument's declared type (then clears them), so
 * the kept plan is typed for the calls to come and a body that misuses
 * an argument fails now, at CREATE. */
static pj_status type_params(pj_def *d, pj_query *q) {
  for (int i = 0; i < d->nargs; i++) {
    char pname[300];
    snprintf(pname, sizeof pname, "$%s", d->argnames[i]);
    int k = pj_query_param_index(q, pname);
    if (k <= 0) continue;
    rt_type t = d->argtypes[i].t;
    if (t == RT_F64) pj_query_bind_double(q, k, 0);
    else if (t == RT_STR) pj_query_bind_text(q, k, "", 0);
    else pj_query_bind_int64(q, k, 0);
  }
  pj_status s = pj__query_refresh(q);
  pj_query_clear_bindings(q);
  return s;
}

/* The parameters a pipeline reads must be arguments ($name). */
static int check_params(pj_def *d, const ir_plan *p, const char *stage, int base, rt_err *err) {
  for (int i = 0; i < p->nparams; i++) {
    const ir_param *pp = &p->params[i];
    bool arg = false;
    for (int a = 0; a < d->nargs && !arg; a++)
      arg = pp->name && pp->name[0] == '$' && rt_strieq(pp->name + 1, d->argnames[a]);
    if (arg) continue;
    char num[24];
    snprintf(num, sizeof num, "?%d", i + 1);
    if (d->kind == PJ_DEF_VIEW)
      return rt_errorf(err, pp->pos >= 0 ? base + pp->pos : -1,
                       "%s: a view takes no parameters, but its body reads %s", stage,
                       pp->name ? pp->name : num);
    return rt_errorf(err, pp->pos >= 0 ? base + pp->pos : -1,
                     "%s: the body reads %s, which is not an argument of %s", stage,
                     pp->name ? pp->name : num, d->name);
  }
  return 1;
}

pj_status pj__def_pipeline_body(pj_engine *e, pj_def *d, const char *script, const fe_stmt *st,
                                const char *stage) {
  int base = st->asbody;
  int end = st->pos + st->len;
  d->pipeline = true;
  d->body = rt_arena_strndup(&d->arena, script + base, (size_t)(end - base));
  rt_err err = {.offset = -1};
  if (!d->body) {
    fail_oom(&err, stage, base);
    return pj__fail(e, &err, script);
  }
  for (int i = 0; i < d->nargs; i++)
    if (d->argtypes[i].bytes) {
      rt_errorf(&err, st->args[i].typepos,
                "%s: a pipeline cannot take BYTES ('%s'): give the function a SQL body", stage,
                d->argnames[i]);
      return pj__fail(e, &err, script);
    }
  /* The AST the binder inlines where a pipeline reads the body (FROM v,
   * FROM fn(…)), parsed once into the definition. */
  d->ast = fe_parse_pipeline(&d->arena, d->body, (size_t)(end - base), &err);
  pj_query *q = NULL;
  pj_status s = d->ast ? pj_query_compile(e, d->body, &q) : PJ_ERROR;
  if (s == PJ_OK) s = type_params(d, q);
  if (s != PJ_OK) {
    /* The body's offsets are the script's, shifted by where it starts. */
    if (!err.set) err = e->err;
    if (!err.set) fail_oom(&err, stage, -1);   /* a NOMEM that said nothing */
    if (err.offset >= 0) err.offset += base;
    pj_query_free(q);
    return pj__fail(e, &err, script);
  }
  if (!check_params(d, q->plan, stage, base, &err)) {
    pj_query_free(q);
    return pj__fail(e, &err, script);
  }
  d->q[d->nq++] = q;
  return PJ_OK;
}

pj_status pj__def_sql_body(pj_engine *e, pj_def *d, const char *script, const fe_stmt *st,
                           pj__sqlrewrite *rw) {
  memset(rw, 0, sizeof *rw);
  d->body = rt_arena_strdup(&d->arena, st->sql);
  if (!d->body) return pj__failf(e, "%s: out of memory", def_stage(d));
  if (st->sqlpipes.n == 0) return PJ_OK;
  fe_sqlpipes ps = st->sqlpipes;
  ps.kept = true;   /* the body outlives the statement */
  pj_status s = pj__sql_rewrite(e, script, st->sqlpos, st->sqlpos + (int)strlen(st->sql), &ps, rw);
  if (s != PJ_OK) return s;
  /* The tables the body reads are the definition's (def_leave). */
  d->body = rt_arena_strdup(&d->arena, rw->text);
  d->sqltabs = rt_arena_alloc(&d->arena, sizeof *d->sqltabs * (size_t)(rw->nmodules + 1));
  for (int i = 0; d->body && d->sqltabs && i < rw->nmodules; i++)
    if (!(d->sqltabs[i] = rt_arena_strdup(&d->arena, rw->modules[i]))) d->sqltabs = NULL;
  if (!d->body || !d->sqltabs) {
    pj__sql_rewrite_done(e, rw, 0);
    return pj__failf(e, "%s: out of memory", def_stage(d));
  }
  d->nsqltabs = rw->nmodules;
  return PJ_OK;
}

int pj__def_sql_offset(const fe_stmt *st, const pj__sqlrewrite *rw, int off) {
  return pj__sqlmap_offset(rw->text ? &rw->map : NULL, st->sqlpos, off);
}

int pj__def_outputs(const pj_query *q, const char *const **names, rt_type *types) {
  const ir_op *out = q->plan->segs[q->plan->nsegs - 1].sink;
  *names = out->output.out_names;
  for (int i = 0; types && i < out->output.nout; i++) {
    const ir_col *c = &q->plan->cols[out->output.out[i]];
    types[i] = c->untyped ? RT_NULLT : c->type == RT_BOOL ? RT_BOOL
               : rt_type_is_int(c->type) ? RT_I64 : c->type;
  }
  return out->output.nout;
}

pj_status pj__def_widen_doubles(pj_engine *e, pj_def *d) {
  const char *const *names;
  int n = pj__def_outputs(d->q[0], &names, NULL);
  rt_type types[n > 0 ? n : 1];
  pj__def_outputs(d->q[0], &names, types);
  sqlite3_str *b = NULL;
  for (int i = 0; i < n && i < d->ncols; i++) {
    if (d->coltypes[i].t != RT_F64 || (types[i] != RT_I64 && types[i] != RT_BOOL)) continue;
    if (!b) {
      b = sqlite3_str_new(NULL);
      sqlite3_str_append(b, d->body, d->ast->endpos);
      sqlite3_str_appendall(b, "\n|> SET ");
    } else {
      sqlite3_str_appendall(b, ", ");
    }
    sqlite3_str_appendf(b, "\"%w\" = CAST(\"%w\" AS REAL)", names[i], names[i]);
  }
  if (!b) return PJ_OK;
  char *text = sqlite3_str_finish(b);
  if (!text) return pj__failf(e, "%s: out of memory", def_stage(d));
  char *body = rt_arena_strdup(&d->arena, text);
  sqlite3_free(text);
  if (!body) return pj__failf(e, "%s: out of memory", def_stage(d));
  rt_err err = {.offset = -1};
  fe_pipeline *ast = fe_parse_pipeline(&d->arena, body, strlen(body), &err);
  pj_query *q = NULL;
  pj_status s = ast ? pj_query_compile(e, body, &q) : pj__fail(e, &err, body);
  if (s != PJ_OK) return s;
  pj_query_free(d->q[0]);
  d->q[0] = q;
  d->body = body;
  d->ast = ast;
  return PJ_OK;
}
