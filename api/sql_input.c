/*
 * sql_input.c — the input of a `|> SQL (select)` stage (LANGUAGE.md §8,
 * ir/bind_sql.c): the pipeline before the stage, compiled as a handle of
 * its own and registered as the SQLite table "__pj_input_N" (sqltab.h),
 * which the stage's SQL reads in place of `@input`. The table goes with
 * the plan that asked for it (ir_plan_free calls drop), after the plan's
 * SQL scans have closed.
 *
 * The binder reaches this through e->ir_sqlin (engine_open.c), as it
 * reaches the definitions, so query.c does not call up into sqltab.c.
 */
#include <stdio.h>
#include <stdlib.h>

#include "sqltab.h"

typedef struct sql_input {
  pj_engine *e;
  char module[32];
  fe_pipeline pipe;   /* the handle's AST (its parts are the caller's) */
} sql_input;

static void fail(rt_err *err, int pos, const char *msg) {
  memset(err, 0, sizeof *err);
  rt_errorf(err, pos, "SQL: %s", msg);
}

void *pj__sql_input_open(void *ctx, const fe_pipeline *pl, const char *text, rt_arena *a,
                         const char **name, const char **plan, rt_err *err) {
  pj_engine *e = ctx;
  sql_input *in = calloc(1, sizeof *in);
  if (!in) return fail(err, pl->pos, "out of memory"), NULL;
  in->e = e;
  in->pipe = *pl;
  /* The statement being bound keeps its own timing and error state. */
  pj_timing outer = e->timing;
  pj_query *q = NULL;
  pj_status s = pj__query_from_ast(e, text, &in->pipe, &q);
  e->timing = outer;
  if (s != PJ_OK) {
    if (s == PJ_ERROR) *err = e->err;   /* the input's own error, in the same text */
    else fail(err, pl->pos, "out of memory");
    free(in);
    return NULL;
  }
  if (pj_query_param_count(q) > 0) {
    /* The input runs inside SQLite, which has no value for them. */
    const ir_param *pm = &q->plan->params[0];
    char msg[200];
    snprintf(msg, sizeof msg,
             "the stages before a SQL stage cannot read parameters or function arguments "
             "(%s is one): put it after the SQL stage, or in the SQL",
             pm->name ? pm->name : "?");
    fail(err, pm->pos >= 0 ? pm->pos : pl->pos, msg);
    pj_query_free(q);
    free(in);
    return NULL;
  }
  snprintf(in->module, sizeof in->module, "__pj_input_%d", ++e->sqltab_seq);
  if (!(*plan = rt_arena_strdup(a, pj_query_plan(q)))) {
    pj_query_free(q);
    free(in);
    return fail(err, pl->pos, "out of memory"), NULL;
  }
  pj__sqltab_def def = {.module = in->module, .q = q, .what = "the stream before the SQL stage"};
  s = pj__sqltab_register(e, &def);   /* owns q from here */
  if (s != PJ_OK) {
    if (s == PJ_ERROR) fail(err, pl->pos, pj_engine_errmsg(e));
    else fail(err, pl->pos, "out of memory");
    free(in);
    return NULL;
  }
  if (!(*name = rt_arena_strdup(a, in->module))) {
    pj__sqltab_unregister(e, in->module);
    free(in);
    return fail(err, pl->pos, "out of memory"), NULL;
  }
  return in;
}

void pj__sql_input_drop(void *ctx, void *handle) {
  (void)ctx;
  sql_input *in = handle;
  pj__sqltab_unregister(in->e, in->module);
  free(in);
}
