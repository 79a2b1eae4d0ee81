/*
 * defs.h — the engine's PerfettoSQL definitions (LANGUAGE.md §7): macros,
 * functions and views, the modules included so far and the module path.
 *
 * defs.c keeps the registry, snapshot.c its snapshots; the statements that fill it
 * are stmt_macro.c, stmt_function.c, stmt_view.c and stmt_include.c;
 * def_call.c runs a function's body; def_sqlite.c shows functions and
 * views to SQLite; ptype.c reads the type names of signatures and schemas.
 *
 * A definition is reference-counted: the registry holds one reference,
 * and so does each SQLite registration that points at it (a function, a
 * module), so replacing or dropping a definition never frees what a
 * statement still runs. Every change of a function or view bumps `gen`:
 * a compiled pipeline that inlined one binds again (query.c).
 */
#ifndef PJ_DEFS_H
#define PJ_DEFS_H

#include <sqlite3.h>

#include "engine.h"
#include "ir/plan.h"
#include "sqltab.h"

/* A type of LANGUAGE.md §7 as written in a signature or schema: its value
 * class (RT_I64, RT_F64, RT_STR, or RT_BOOL), and BYTES (a blob, which
 * only SQL can carry). */
typedef struct pj_ptype {
  rt_type t;
  bool bytes;
  const char *name;     /* as written */
} pj_ptype;
/* Reads LONG INT INTEGER UINT32 INT64 BIGINT, DOUBLE REAL FLOAT, STRING
 * TEXT, BOOL BOOLEAN, BYTES, TIMESTAMP DURATION ARGSETID ID, JOINID(t.c)
 * and ID(t.c) (ASCII case-insensitive). 1 when known. */
int pj__ptype_parse(const char *text, pj_ptype *out);
/* The list of those names, for messages. */
#define PJ_PTYPE_NAMES                                                                 \
  "LONG, INT, DOUBLE, STRING, BOOL, BOOLEAN, BYTES, TIMESTAMP, DURATION, ARGSETID, ID, " \
  "JOINID(table.column) or ID(table.column)"
/* The name of a class for messages: LONG, DOUBLE, STRING, BOOL. */
const char *pj__ptype_class_name(rt_type t);
/* Whether a value of class `have` fits a declared type (ints fit BOOL and
 * every integer type; doubles only DOUBLE; NULL-only columns fit all). */
bool pj__ptype_fits(const pj_ptype *want, rt_type have);

typedef enum pj_defkind { PJ_DEF_MACRO, PJ_DEF_FUNCTION, PJ_DEF_VIEW } pj_defkind;

typedef struct pj_def pj_def;
struct pj_def {
  pj_defkind kind;
  int refs;
  pj_engine *e;
  rt_arena arena;       /* everything below that is not a handle */
  char *name;
  fe_macro macro;       /* PJ_DEF_MACRO */
  /* FUNCTION and VIEW. A view is a table with no arguments. */
  int nargs;
  char **argnames;
  pj_ptype *argtypes;
  rt_type *argclass;    /* argtypes[i].t, for the binder (ir_fndef) */
  bool table;           /* a table function, or a view */
  int ncols;            /* table: result columns (declared, or a view's own) */
  char **colnames;
  pj_ptype *coltypes;
  bool col_known;       /* a view without schema: types from the body */
  pj_ptype ret;         /* scalar function */
  bool pipeline;        /* the body is a pipeline (else SQL) */
  char *body;           /* its text (NUL-terminated) */
  int *argparam;        /* a pipeline body's parameter number per argument
                           (def_call.c; NULL until the first call) */
  struct fe_pipeline *ast;  /* a pipeline body parsed (in arena), for inlining */
  /* A SQL body's pipelines: the tables ("__pj_view_N", sqltab.h) its text
   * reads, registered while the definition is the registry's. */
  int nsqltabs;
  char **sqltabs;
  /* Compiled bodies ready to run (a call takes one; a call made while
   * all are running, a recursion, compiles another). */
  int nq;
  pj_query *q[4];
  int nst;
  sqlite3_stmt *st[4];
};

typedef struct pj_defs {
  int n, cap;
  pj_def **v;
  uint64_t gen;
  int nincluded, capincluded;
  char **included;      /* module names, as resolved (a.b.c) */
  int npaths, cappaths;
  char **paths;         /* pj_engine_add_module_path, in order */
  int include_depth;    /* modules being included now (a cycle guard) */
  struct rt_argindex *args_index;   /* EXTRACT_ARG's index of the catalog's args */
} pj_defs;

pj_defs *pj__defs_new(void);
/* Finalizes the statements and handles kept for calls (before the
 * connection closes). */
void pj__defs_drain(pj_defs *d);
void pj__defs_free(pj_defs *d);

pj_def *pj__def_new(pj_engine *e, pj_defkind kind, const char *name);
pj_def *pj__def_ref(pj_def *d);
void pj__def_unref(pj_def *d);
/* The definition of that kind and name (case-insensitive), or NULL.
 * Functions and views share one namespace: kind FUNCTION finds either. */
pj_def *pj__def_find(pj_engine *e, pj_defkind kind, const char *name);
/* Room for one more definition in the registry (false: out of memory), so
 * that a statement can make sure of it before it changes anything. */
bool pj__defs_reserve(pj_engine *e);
/* Puts d in the registry (taking the caller's reference), replacing the
 * one of the same name and namespace, and bumps gen. Call
 * pj__defs_reserve first: without room, d is dropped. */
void pj__def_put(pj_engine *e, pj_def *d);
/* Takes d out of the registry (dropping its reference) and bumps gen.
 * A definition that leaves the registry (taken out, or replaced by
 * pj__def_put) takes its SQL body's pipeline tables out of SQLite. */
void pj__def_remove(pj_engine *e, pj_def *d);

/* Takes a compiled body for one call (compiling another when every kept
 * one is running); pj__def_release gives it back. NULL with the engine's
 * error set when the body no longer compiles. */
pj_query *pj__def_take_query(pj_def *d);
void pj__def_release_query(pj_def *d, pj_query *q);
sqlite3_stmt *pj__def_take_stmt(pj_def *d, char **errmsg);
void pj__def_release_stmt(pj_def *d, sqlite3_stmt *st);

/* Makes a definition visible to SQLite (a function, a table-valued
 * function or a view's eponymous table) or withdraws it. SQLite result
 * codes; *errmsg (sqlite3_malloc'd) on failure. */
int pj__def_register(pj_engine *e, pj_def *d, char **errmsg);
void pj__def_unregister(pj_engine *e, pj_def *d);

/* Everything INCLUDE may change, to put back when a module fails: the
 * definitions, the included modules, the columnar tables, and SQLite's
 * own state through a savepoint. */
typedef struct pj_snapshot {
  int ndefs;
  pj_def **defs;
  uint64_t gen;
  int nincluded;
  int ntables;
  rt_table **tables;
  int savepoint;        /* 0 none, else its number */
} pj_snapshot;
pj_status pj__snapshot_take(pj_engine *e, pj_snapshot *s);
/* Puts everything back as it was at the snapshot and drops it. */
void pj__snapshot_restore(pj_engine *e, pj_snapshot *s);
/* Keeps the changes and drops the snapshot. */
void pj__snapshot_release(pj_engine *e, pj_snapshot *s);

/* Shared by FUNCTION and VIEW (def_body.c). The signature: arguments,
 * result columns (st->coldefs) and the scalar return type, with their
 * types checked. Whether st's name may be defined as `kind` (a table
 * function when `table`). A pipeline body (after AS) compiled into the
 * first kept handle, its parameters checked to be arguments; errors are
 * at their place in the script. The output columns of a compiled body
 * (types RT_I64 for every integer kind, RT_BOOL, RT_F64, RT_STR, RT_NULLT
 * for a column of untyped NULLs): the count. */
int pj__def_signature(pj_def *d, const fe_stmt *st, const char *stage, rt_err *err);
int pj__def_name_free(pj_engine *e, const fe_stmt *st, pj_defkind kind, bool table,
                      const char *stage, rt_err *err);
pj_status pj__def_pipeline_body(pj_engine *e, pj_def *d, const char *script, const fe_stmt *st,
                                const char *stage);
/* A SQL body (st->sql) as SQLite will prepare it, in d->body: with
 * pipelines inside (§7.6), each compiled and registered as a table that
 * stays while the engine lives (the view or function reads it at every
 * call), and the text refers to them. Give *rw to pj__sql_rewrite_done
 * (keep: the body was accepted); pj__def_sql_offset turns SQLite's
 * offsets in d->body into the script's. */
pj_status pj__def_sql_body(pj_engine *e, pj_def *d, const char *script, const fe_stmt *st,
                           pj__sqlrewrite *rw);
int pj__def_sql_offset(const fe_stmt *st, const pj__sqlrewrite *rw, int off);
int pj__def_outputs(const pj_query *q, const char *const **names, rt_type *types);
/* A pipeline body whose integer columns are declared DOUBLE gets a last
 * stage converting them (|> SET c = CAST(c AS REAL)), in its text, its
 * AST and its first handle, so SQL and pipelines read the declared type. */
pj_status pj__def_widen_doubles(pj_engine *e, pj_def *d);

/* The statements (each returns PJ_OK or fails with the engine's error;
 * a failure leaves every definition, table and SQLite object as it was). */
pj_status pj__exec_macro(pj_engine *e, const char *script, const fe_stmt *st);
pj_status pj__exec_function(pj_engine *e, const char *script, const fe_stmt *st);
pj_status pj__exec_view(pj_engine *e, const char *script, const fe_stmt *st);
pj_status pj__exec_include(pj_engine *e, const char *script, const fe_stmt *st);

/* Runs the statements of `text` as pj_engine_exec does, without result
 * callbacks or hooks (a module's body). Errors point into `text`. */
pj_status pj__exec_text(pj_engine *e, const char *text, size_t len);

/* What the binder asks of the registry (ir_env.defs; ctx: the engine):
 * views and functions to inline, and the scalar functions a pipeline
 * calls (ir_defs.callout): PerfettoSQL functions (def_call.c) and the
 * trace functions (tracefn.c). */
int pj__ir_defs_find(void *ctx, const char *name, ir_fndef *out);
int pj__ir_callout(void *ctx, const char *name, int nargs, ir_expr *const *args, rt_arena *a,
                   ir_callout *out, char *msg, size_t msglen);
int pj__trace_callout(pj_engine *e, const char *name, int nargs, ir_expr *const *args,
                      rt_arena *a, ir_callout *out, char *msg, size_t len);
/* EXTRACT_ARG, trace_start(), trace_end(), trace_dur() as SQL functions
 * of the engine's connection (tracefn.c). A SQLite result code. */
int pj__trace_functions_register(pj_engine *e);

/* The macro lookup the expander takes (ctx: the engine). */
const fe_macro *pj__macro_find(void *ctx, const char *name);

/* Runs q with the engine's error and timing kept aside (a call made
 * while a statement runs, from SQLite): on failure *errmsg gets the
 * message (sqlite3_malloc'd). */
pj_status pj__run_nested(pj_engine *e, pj_query *q, rt_table **out, char **errmsg);

/* A value converted to a declared type (§7.2: arguments and results are
 * converted): kind is SQLITE_NULL, _INTEGER, _FLOAT, _TEXT or _BLOB;
 * text and blobs point into the source value or into buf. */
typedef struct pj_cval {
  int kind;
  int64_t i;
  double f;
  const char *s;
  int n;
  char buf[40];
} pj_cval;
/* NULL stays NULL; numbers convert as CAST does (a real to an integer
 * type only when it is whole); text that reads as a number converts to a
 * number type, other text is an error; BOOL takes integers (non-zero is
 * 1); STRING takes numbers as SQLite prints them; BYTES takes text or
 * blobs. Returns 1, or 0 with `why` set ("expected LONG, but got 'abc'"). */
int pj__convert_value(sqlite3_value *v, const pj_ptype *t, pj_cval *out, char *why, size_t whylen);
/* Calls (def_call.c): the arguments converted to the declared types
 * (a wrong count is an error naming the function), bound as $name, and a
 * scalar body's first value as the SQLite result. 1, or 0 with *errmsg
 * (sqlite3_malloc'd). */
int pj__def_convert_args(pj_def *d, int argc, sqlite3_value **argv, pj_cval *out,
                         char **errmsg);
int pj__def_bind_query(pj_def *d, pj_query *q, const pj_cval *args, char **errmsg);
int pj__def_bind_stmt(pj_def *d, sqlite3_stmt *st, const pj_cval *args, char **errmsg);
int pj__def_call_scalar(pj_def *d, const pj_cval *args, sqlite3_context *ctx, char **errmsg);

/* Sets a SQLite result from a converted value. */
void pj__result_cval(sqlite3_context *ctx, const pj_cval *v);

#endif
