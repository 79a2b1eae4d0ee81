/*
 * engine.h — the structures behind the public handles (pj_engine,
 * pj_query, pj_result) and api/'s internal calls. Layers, each calling
 * only those below it: errors.c (sticky errors, interrupts) ← engine.c
 * (the handle, settings, the JIT) ← query.c (compiling and running
 * handles) ← engine_table.c (SQL statements, CREATE PERFETTO TABLE) ←
 * script.c (the script runner); result.c and arrow.c read results.
 */
#ifndef PJ_ENGINE_H
#define PJ_ENGINE_H

#include "pipejit.h"
#include "hooks.h"
#include "frontend/ast.h"
#include "exec/backend.h"
#include "runtime/sqlite/vtab.h"

struct ex_adapt;
struct ex_job;

/* Mode `auto` (exec/adaptive.h) starts every query on the interpreter.
 * When the estimated input (rows of the scanned columnar tables; a SQLite
 * source counts as large) is at least this many rows, it also compiles
 * the plan on the engine's background thread and switches to the
 * compiled loop at the first batch after the compile is ready. Below it
 * no compile starts: the interpreter would finish before the compile
 * (workload `fused` on this machine: compile ~9.2 ms, interpreter ~23
 * ns/row, so a compile cannot be ready before ~400k rows have been
 * interpreted), and on a 2-core machine the compile would take the core
 * the rest of the program may want. The bound is set lower than that
 * break-even because the estimate counts rows read, and heavier
 * per-row work (strings, many expressions) makes the interpreter slower
 * and the compile pay off sooner. Compiled code found in the cache is
 * used from the first batch whatever the size. */
#define PJ_AUTO_JIT_ROWS 250000
/* The interpreter's cost per row and expression node, in ns, for mode
 * auto's compile-or-not estimate (workload fused: ~23 ns a row for ~8
 * expression nodes; cheaper per node in wide plans). */
#define PJ_INTERP_NS_PER_NODE 3


struct pj_defs;

struct pj_engine {
  void *db;                 /* sqlite3 * */
  struct pj_defs *defs;     /* PerfettoSQL macros, functions, views, modules (defs.h) */
  ir_defs ir_defs;          /* what the binder asks of them (engine_open.c) */
  ir_sqlinput ir_sqlin;     /* the inputs of |> SQL stages (sql_input.c) */
  rt_catalog *catalog;
  rt_strpool *strings;
  pj_mode mode;
  int opt_level;
  rt_err err;               /* last error; offset relative to errtext */
  const char *errtext;      /* text the error offset refers to (not owned) */
  int errline, errcol;
  pj_timing timing;
  ex_compiler *jit;         /* the JIT's, created on first JIT compile */
  /* Set by pj_engine_interrupt (any thread, signal handlers): accessed
   * with __atomic builtins; cleared when a public call starts a run. */
  volatile int interrupt;
  int64_t max_memory;       /* per-run budget in bytes, 0 = none */
  int threads;              /* worker threads of a run (pj_engine_set_threads) */
  int batch_rows;           /* test knob: pj__engine_set_batch_rows */
  struct ex_pool *pool;     /* their pool (exec/pool.h), made on first use */
  int exec_depth;           /* >0 while pj_engine_exec runs (hooks may run
                               handles: they must not clear `interrupt`) */
  pj__hooks hooks;
  struct ex_adapt *adapt;   /* background compiles and the compile cache */
  /* Test knobs (pj__engine_set_*): alternate backends at every batch
   * (0 off, 1 interpreter first, 2 compiled code first; environment
   * PJ_FORCE_SWITCH at open), and the auto threshold in rows. */
  int force_switch;
  int64_t auto_rows;
  /* 1 when the SQLite connection belongs to someone else (the loadable
   * extension, pj__engine_attach): pj_engine_close leaves it open. */
  int db_borrowed;
  /* What the columnar virtual tables did (runtime/sqlite/vtab.h). */
  rt_vtab_stats vtab_stats;
  /* The last error of a pipeline run inside a SQL statement (sqltab.h),
   * with the text its offset refers to, so the statement's runner can
   * report it where it happened; and a counter naming those tables. */
  rt_err sqltab_err;
  const char *sqltab_errtext;
  int sqltab_seq;
  /* The engine's parameters (params.c), in the order first bound. */
  int nparams, cap_params;
  struct pj__param *params;
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
  unsigned char *bound;     /* 1-based: a value (NULL included) was bound */
  rt_type *param_types;     /* 1-based types the plan assumed */
  ex_code *code;            /* JIT code for `plan`, or NULL */
  /* The columnar tables the plan scans, one reference each, so a run can
   * tell whether the catalog now names a different table (and rebind). */
  int ntables;
  rt_table **tables;
  /* Mode auto: the background compile of `plan` (released before the
   * plan goes: ex_job_release). Its module becomes `code` once ready. */
  struct ex_job *job;
  /* The compile-cache key of `plan` at opt level key_opt (NULL: not made
   * yet), and the cache generation at which it last missed (+1; 0 never):
   * a handle run again does not search an unchanged cache again. */
  char *key;
  int key_opt;
  uint64_t miss_gen;
  /* What the plan read of SQLite when it was bound (rt_sql_*_cookie,
   * taken just before binding): a plan that reads SQLite is bound again
   * when the schema cookie moved, one whose SQLite column types were
   * sampled from the values also when the data cookie moved. */
  uint64_t schema_cookie, data_cookie;
  /* The generation of the engine's functions and views (defs.h) when a
   * plan that inlined one of them was bound (0: it inlined none). */
  uint64_t defs_gen;
};

/* A result is a finalized table plus the pool its strings live in. */
struct pj_result {
  rt_table *t;
  const rt_strpool *strings;
};

/* An engine parameter (pj_engine_bind_*; params.c). */
typedef struct pj__param {
  char *name;      /* without its $, : or @ */
  pj_param v;      /* v.name is name; v.s is owned */
} pj__param;
/* The engine's value of parameter `name` (with its prefix, as a plan or
 * SQLite spells it: "$min", ":min", "@min"), or NULL. */
const pj__param *pj__param_find(const pj_engine *e, const char *name);
/* Gives the unbound named parameters of q the engine's values (before a
 * run or a dump decides whether the plan is stale): PJ_ERROR when a text
 * value cannot be interned. */
pj_status pj__query_engine_params(pj_query *q);
/* Binds the named parameters of a prepared SQLite statement that the
 * engine has values for (SQLITE_OK or SQLite's error code). */
int pj__sql_bind_params(const pj_engine *e, void *stmt);
/* Frees the engine's parameters (pj_engine_close). */
void pj__params_free(pj_engine *e);

/* Records err on the engine, computing line/column in `text`. Returns
 * PJ_ERROR. */
pj_status pj__fail(pj_engine *e, const rt_err *err, const char *text);
/* Forgets the last error: every call that can fail starts with it. */
void pj__clear_error(pj_engine *e);
/* Starts a public call that runs something: forgets an interrupt request
 * made before it (not inside pj_engine_exec, whose hooks run handles). */
void pj__begin_run(pj_engine *e);
/* True when pj_engine_interrupt was called since the run began. */
int pj__interrupted(const pj_engine *e);
/* Records a message without position. Returns PJ_ERROR. */
pj_status pj__failf(pj_engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s, and when it is PJ_NOMEM from a place that set no message, the
 * message "out of memory" (every failure has one). */
pj_status pj__nomem_msg(pj_engine *e, pj_status s);

/* Compiles a pipeline AST (already parsed from text) into a query handle
 * that does not own text: used by the script runner. */
pj_status pj__query_from_ast(pj_engine *e, const char *text, fe_pipeline *ast,
                             pj_query **out);
/* The same for a handle that runs next, before anything else uses the
 * connection: a SQL source whose column types came from its first rows
 * keeps those rows open for the run (ir_op.primed), so the query is read
 * once. */
pj_status pj__query_from_ast_run(pj_engine *e, const char *text, fe_pipeline *ast,
                                 pj_query **out);

/* Binds the handle again when its plan is stale (query.c's banner: new
 * parameter types, a replaced columnar table, a changed SQLite schema),
 * as the next run would; PJ_OK when the plan is current, else the bind
 * error (the handle then has no plan until a later refresh or run binds
 * it). For callers that read the plan's shape before running (the
 * extension's output columns). */
pj_status pj__query_refresh(pj_query *q);

/* Rows a plan will read: columnar tables by their size; a SQLite source
 * counts as large (INT64_MAX / 2). */
int64_t pj__plan_estimate_rows(const ir_plan *p);

/* Runs a query; on success *out is a table named `name` owned by the
 * caller. */
pj_status pj__query_run_table(pj_query *q, const char *name, rt_table **out);
/* The same without the table or the timing (e->timing is left as it
 * was, but for a compile's numbers): the rows stay in *rows, the output
 * columns in output order. *rows may hold an earlier run's buffer of q,
 * emptied (rt_rowbuf_clear), which the run fills again when its columns
 * fit; types NULL: none. After an error *rows is freed and zeroed, but
 * for errors before the run (binding, compiling), which leave it as it
 * was. The table function's path (sqltab.c), run once per call. */
pj_status pj__query_run_rows(pj_query *q, rt_rowbuf *rows);
/* Moves rows of q's run into a finalized table named `name` (NULL when
 * out of memory; rows is freed either way). */
rt_table *pj__query_rows_table(const pj_query *q, rt_rowbuf *rows, const char *name);

/* Makes an engine over an existing SQLite connection it does not own
 * (the loadable extension: pipelines read the connection's own tables and
 * views). No module is registered on the connection and pj_engine_close
 * leaves it open; the caller closes the engine before the connection.
 * Returns PJ_NOMEM or PJ_OK. */
pj_status pj__engine_attach(void *db, pj_engine **out);

/* pj__engine_jit (the engine's JIT, made on first use): hooks.h. */
/* The engine's worker pool for a run, made on first use (NULL with one
 * thread, or when it cannot be made: the run then uses one thread). */
struct ex_pool *pj__engine_pool(pj_engine *e);

/* Adaptive-mode knobs, for tests and tools (internal). force: see
 * pj_engine.force_switch. rows < 0 restores PJ_AUTO_JIT_ROWS. A cache of
 * size 0 compiles every handle afresh (the benchmark's compile numbers). */
void pj__engine_set_force_switch(pj_engine *e, int force);
void pj__engine_set_auto_rows(pj_engine *e, int64_t rows);
void pj__engine_set_cache_size(pj_engine *e, int n);
/* Test knob: rows per batch of a table scan (a multiple of 64 below
 * RT_BATCH; 0: RT_BATCH) and then 2 batches per morsel, so small test
 * tables span several morsels and run in parallel (exec.h
 * ex_run.batch_rows). */
void pj__engine_set_batch_rows(pj_engine *e, int rows);

pj_result *pj__result_new(rt_table *t, const rt_strpool *strings);

/* Statements of a script (script.c, engine_table.c, query.c). `script` is the whole
 * script: every error offset is relative to it. */

/* Runs one SQL statement (sql starts at byte sqlpos of the script). When it
 * returns rows, *out gets them as a table (caller's reference; NULL when
 * the statement has no result columns). With create_name set the rows are
 * for CREATE PERFETTO TABLE: the table gets that name, and a column mixing
 * strings with numbers, or holding a blob, is an error instead of being
 * shown as text. */
pj_status pj__exec_sql(pj_engine *e, const char *script, const char *sql, int sqlpos,
                       const char *create_name, rt_table **out);
/* Where the pieces of a SQL text rewritten from the script came from:
 * piece i starts at new_at[i] of the text and stands for the script from
 * old_at[i] on (copied: the same bytes; else a substitute for the script
 * text at old_at[i], the pipeline it replaced). */
typedef struct pj__sqlmap {
  int n;
  const int *new_at, *old_at;
  const bool *copied;
} pj__sqlmap;
/* An offset of the SQL text given to SQLite (the script's text at sqlpos
 * when map is NULL or empty), as an offset of the script. */
int pj__sqlmap_offset(const pj__sqlmap *map, int sqlpos, int off);
/* pj__exec_sql over a rewritten text: SQLite's error offsets go through
 * map (NULL: sql is the script's text at sqlpos). */
pj_status pj__exec_sql_mapped(pj_engine *e, const char *script, const char *sql, int sqlpos,
                              const pj__sqlmap *map, const char *create_name, rt_table **out);
/* Runs the SQL of statement st, with its pipelines (§7.6: sqlpipes.c)
 * standing as tables. */
pj_status pj__exec_sql_stmt(pj_engine *e, const char *script, const fe_stmt *st,
                            const char *create_name, rt_table **out);
/* Compiles and runs a pipeline of the script (calling the before_run
 * hook); *out gets its rows as a table named `name`. */
pj_status pj__exec_pipeline(pj_engine *e, const char *script, const fe_stmt *st,
                            fe_pipeline *pipe, const char *name, rt_table **out);
/* CREATE [OR REPLACE] PERFETTO TABLE. */
pj_status pj__exec_create(pj_engine *e, const char *script, const fe_stmt *st);
/* CREATE [OR REPLACE] PERFETTO INDEX, DROP PERFETTO INDEX (engine_index.c). */
pj_status pj__exec_index(pj_engine *e, const char *script, const fe_stmt *st);

#endif
