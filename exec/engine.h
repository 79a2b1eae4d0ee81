/*
 * engine.h — the structures behind the public handles (pj_engine,
 * pj_query, pj_result). engine.c runs scripts and statements; query.c
 * compiles and runs handles; result.c reads results.
 */
#ifndef PJ_ENGINE_H
#define PJ_ENGINE_H

#include "../include/pipejit.h"
#include "../frontend/ast.h"
#include "exec.h"

struct cg_jit;
struct cg_module;

/* Mode `auto` runs a query with the interpreter when its estimated input
 * (rows of the scanned columnar tables; a SQLite source counts as large) is
 * below this many rows, and with the JIT otherwise: below it, compiling
 * costs more than it saves. Measured on workload `fused` (pipejit-bench):
 * a compile costs ~9.5 ms at the default level and saves ~17 ns per row
 * (interpreter ~25 ns/row, JIT ~8 ns/row), so one run breaks even near
 * 560k rows. */
#define PJ_AUTO_JIT_ROWS 500000

/* Observers of pj_engine_exec, for tools (the CLI's --dump, --timing and
 * --compare). Internal: not part of the public API. Every member may be
 * NULL. */
typedef struct pj__hooks {
  void *ctx;
  /* Called with every pipeline the script runs (a pipeline statement or
   * CREATE PERFETTO TABLE … AS <pipeline>) after it is compiled and before
   * it runs. A non-zero return stops the script (status PJ_ERROR if the
   * hook recorded an error, else PJ_OK). The hook may run the query itself
   * (pj_query_run) and read its plan and code. */
  int (*before_run)(void *ctx, pj_query *q, const char *stmt_text, size_t stmt_len,
                    size_t stmt_offset);
  /* Called after every statement that succeeded, with its timing;
   * `pipeline` is 1 when it ran a pipeline (else SQLite did the work). */
  void (*after_stmt)(void *ctx, const char *stmt_text, size_t stmt_len, size_t stmt_offset,
                     const pj_timing *t, int pipeline);
} pj__hooks;

struct pj_engine {
  void *db;                 /* sqlite3 * */
  rt_catalog *catalog;
  rt_strpool *strings;
  pj_mode mode;
  int opt_level;
  rt_err err;               /* last error; offset relative to errtext */
  const char *errtext;      /* text the error offset refers to (not owned) */
  int errline, errcol;
  pj_timing timing;
  struct cg_jit *jit;       /* created on first JIT compile */
  volatile int interrupt;
  pj__hooks hooks;
};

struct pj_query {
  pj_engine *e;
  char *text;               /* owned copy of the pipeline text, or NULL
                               when built from a script's AST */
  const char *src;          /* text the AST positions refer to */
  rt_arena ast_arena;       /* AST (when text is owned) */
  fe_pipeline *ast;
  ir_plan *plan;            /* bound for param_types below */
  rt_buf plan_text;
  int nparams;
  ex_value *params;         /* 1-based bound values (strings interned) */
  rt_type *param_types;     /* 1-based types the plan assumed */
  struct cg_module *code;   /* JIT code for `plan`, or NULL */
  /* The columnar tables the plan scans, one reference each, so a run can
   * tell whether the catalog now names a different table (and rebind). */
  int ntables;
  rt_table **tables;
};

/* A result is a finalized table plus the pool its strings live in. */
struct pj_result {
  rt_table *t;
  const rt_strpool *strings;
};

/* Records err on the engine, computing line/column in `text`. Returns
 * PJ_ERROR. */
pj_status pj__fail(pj_engine *e, const rt_err *err, const char *text);
/* Forgets the last error: every call that can fail starts with it. */
void pj__clear_error(pj_engine *e);
/* Records a message without position. Returns PJ_ERROR. */
pj_status pj__failf(pj_engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Compiles a pipeline AST (already parsed from text) into a query handle
 * that does not own text: used by the script runner. */
pj_status pj__query_from_ast(pj_engine *e, const char *text, fe_pipeline *ast,
                             pj_query **out);

/* Runs a query; on success *out is a table named `name` owned by the
 * caller. */
pj_status pj__query_run_table(pj_query *q, const char *name, rt_table **out);

/* Installs observers for pj_engine_exec (replaces any previous ones). */
void pj__engine_set_hooks(pj_engine *e, const pj__hooks *h);

/* Makes sure the engine's JIT exists; PJ_ERROR (message set) when LLVM
 * cannot be initialized. */
pj_status pj__engine_jit(pj_engine *e);

pj_result *pj__result_new(rt_table *t, const rt_strpool *strings);

/* Statements of a script (engine.c, engine_table.c). `script` is the whole
 * script: every error offset is relative to it. */

/* Runs one SQL statement (sql starts at byte sqlpos of the script). When it
 * returns rows, *out gets them as a table (caller's reference; NULL when
 * the statement has no result columns). With create_name set the rows are
 * for CREATE PERFETTO TABLE: the table gets that name, and a column mixing
 * strings with numbers, or holding a blob, is an error instead of being
 * shown as text. */
pj_status pj__exec_sql(pj_engine *e, const char *script, const char *sql, int sqlpos,
                       const char *create_name, rt_table **out);
/* Compiles and runs a pipeline of the script (calling the before_run
 * hook); *out gets its rows as a table named `name`. */
pj_status pj__exec_pipeline(pj_engine *e, const char *script, const fe_stmt *st,
                            fe_pipeline *pipe, const char *name, rt_table **out);
/* CREATE [OR REPLACE] PERFETTO TABLE. */
pj_status pj__exec_create(pj_engine *e, const char *script, const fe_stmt *st);

#endif
