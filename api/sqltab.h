/*
 * sqltab.h — compiled pipelines as SQLite tables: the one mechanism behind
 * pipelines inside SQL (LANGUAGE.md §7.6, api/sqlpipes.c) and views and
 * table functions whose body is a pipeline (§7.1, §7.2).
 *
 * pj__sqltab_register makes a compiled handle the eponymous virtual table
 * `module` of the engine's connection (runtime/sqlite/vtab.h's rt_vsource).
 * Its columns are the handle's output columns, fixed at registration, so
 * SQLite resolves names against them when it prepares a statement; after
 * them come `nargs` hidden columns, the arguments of a table-valued call
 * `module(a, b)`. A scan runs the handle with the arguments bound and
 * serves its result: in the statement's SQLite connection (it reads the
 * same data as the statement), on the engine's backend, with the compiled
 * code and plan kept across runs (the handle re-binds by itself when a
 * table it reads was replaced). A cursor keeps the result while later
 * scans pass the same arguments, so an inner loop of a join runs the
 * pipeline once, and `=`/IN constraints on the result go through hash
 * indexes built on it, as for any columnar table.
 *
 * Errors of a run stop the SQL statement with the pipeline's message; the
 * engine keeps the error with its position (pj_engine.sqltab_err) so the
 * statement's runner can report where in the script it happened. A scan
 * that starts while the same handle runs (a body that reads itself
 * through SQL) is refused rather than run re-entrantly.
 *
 * A run nested in a SQL statement leaves the engine's timing of the
 * statement alone and does not reset a pending interrupt.
 */
#ifndef PJ_SQLTAB_H
#define PJ_SQLTAB_H

#include <sqlite3.h>

#include "engine.h"

/* Binds one call's arguments to the handle; returns 0 with *errmsg
 * (sqlite3_malloc'd) set to refuse them. */
typedef int (*pj__sqltab_bind_fn)(void *ctx, pj_query *q, int nargs, sqlite3_value **args,
                                  char **errmsg);

typedef struct pj__sqltab_def {
  const char *module;        /* the table's name (an eponymous module) */
  pj_query *q;               /* compiled; the table owns it from now on,
                                also when registering fails */
  int nargs;                 /* hidden argument columns, in call order */
  const char *const *arg_names;  /* their names; NULL: __pj_arg1, … */
  const char *what;          /* for messages: "the pipeline at 3:15",
                                "table function f" */
  /* NULL: argument k binds parameter k (1-based) as the value it is
   * (integer, real, text, NULL; a blob is refused). Otherwise called
   * before every run that has new arguments. */
  pj__sqltab_bind_fn bind;
  void *bind_ctx;
  void (*bind_ctx_free)(void *ctx);   /* may be NULL; called when the table goes */
  /* The handle was compiled from a text of its own (a view's or
   * function's body), not from the script: an error of a run names its
   * line and column in that body instead of being placed in the script. */
  bool own_text;
} pj__sqltab_def;

/* Registers the table (replacing a module of that name). Fails (message
 * on the engine) when the handle's output has no columns, two columns of
 * one name (SQLite needs distinct names) or a column named like a hidden
 * one. */
pj_status pj__sqltab_register(pj_engine *e, const pj__sqltab_def *def);

/* Drops the table (the handle goes once no statement uses it). */
void pj__sqltab_unregister(pj_engine *e, const char *module);

/* ---- the input of a |> SQL (…) stage (§8; sql_input.c) ------------------------ */

/* ir_sqlinput's open and drop (ir/plan.h), with the engine as ctx. */
void *pj__sql_input_open(void *ctx, const fe_pipeline *pl, const char *text, rt_arena *a,
                         const char **name, const char **plan, rt_err *err);
void pj__sql_input_drop(void *ctx, void *handle);

/* ---- SQL text with pipelines inside (§7.6; sqlpipes.c) ------------------------ */

/* script[sqlpos, sqlend) rewritten for SQLite: every pipeline of ps (found
 * by fe_sql_pipelines over that range) compiled and registered as a table
 * "__pj_sql_N" ("__pj_view_N" when ps->kept), and its parenthesis replaced
 * by `"__pj_sql_N"(args)` after FROM or JOIN, else by
 * `(SELECT * FROM "__pj_sql_N"(args))`. */
typedef struct pj__sqlrewrite {
  char *text;                /* what to prepare */
  pj__sqlmap map;            /* its SQLite error offsets → script offsets */
  int nmodules;
  char (*modules)[32];
  int *new_at, *old_at;
  bool *copied;
} pj__sqlrewrite;

/* Compiles, registers and rewrites; on failure (message on the engine,
 * positions in the script) nothing stays registered. */
pj_status pj__sql_rewrite(pj_engine *e, const char *script, int sqlpos, int sqlend,
                          const fe_sqlpipes *ps, pj__sqlrewrite *rw);
/* After the statements prepared from rw->text are finalized: drops the
 * tables unless keep (a view or trigger now refers to them), frees rw. */
void pj__sql_rewrite_done(pj_engine *e, pj__sqlrewrite *rw, int keep);

#endif
