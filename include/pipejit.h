/*
 * pipejit.h — the one public header.
 *
 * pipejit compiles pipe queries (FROM t |> WHERE … |> AGGREGATE …) over
 * columnar tables and SQLite data into fused loops, JIT-compiled with LLVM or
 * run by a vectorized interpreter. An engine owns one SQLite connection, a
 * catalog of finalized columnar tables and a string pool.
 *
 * Conventions:
 *  - Every call that can fail returns a pj_status; on failure the message,
 *    line and column are kept on the engine (pj_engine_errmsg …) until the
 *    next call that can fail. The library never prints and never exits.
 *  - Pointers returned by the library are owned by the object they came
 *    from and live as long as it does, unless the comment says otherwise.
 *  - Threads: an engine is used by one thread at a time. Engines are
 *    independent (each has its own catalog, string pool, SQLite connection
 *    and JIT), so N threads may each run their own engine concurrently;
 *    handles and results belong to their engine's thread. The one call
 *    that may come from another thread (or a signal handler) is
 *    pj_engine_interrupt.
 */
#ifndef PIPEJIT_H
#define PIPEJIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pj_engine pj_engine;
typedef struct pj_query pj_query;
typedef struct pj_result pj_result;

typedef enum pj_status {
  PJ_OK = 0,
  PJ_ERROR = 1,       /* compile or runtime error: see pj_engine_errmsg */
  PJ_NOMEM = 2,
  PJ_INTERRUPTED = 3,
} pj_status;

/* Column types. Integer kinds all read back as int64 through the API. */
typedef enum pj_type {
  PJ_TYPE_ID = 0,     /* implicit row index 0..n-1, no storage */
  PJ_TYPE_UINT32,
  PJ_TYPE_INT32,
  PJ_TYPE_INT64,
  PJ_TYPE_DOUBLE,
  PJ_TYPE_STRING,     /* 32-bit id into the engine's string pool */
  PJ_TYPE_BOOL,       /* predicates; stored as int64 0/1 */
} pj_type;

typedef enum pj_mode {
  PJ_MODE_AUTO = 0,   /* interpreter for small inputs, JIT otherwise */
  PJ_MODE_INTERP,
  PJ_MODE_JIT,
} pj_mode;

/* ---- engine ---------------------------------------------------------- */

/* Opens an engine. db_path NULL or ":memory:" gives an in-memory SQLite
 * database; otherwise the file is opened (created if missing). When opening
 * fails, *out still receives the engine so pj_engine_errmsg can say why;
 * close it with pj_engine_close (SQLite's convention). */
pj_status pj_engine_open(const char *db_path, pj_engine **out);
void pj_engine_close(pj_engine *e);

/* The last error: message "<STAGE>: <text>", and 1-based line/column in the
 * text that was compiled (0 when the error has no position). */
const char *pj_engine_errmsg(const pj_engine *e);
int pj_engine_errline(const pj_engine *e);
int pj_engine_errcol(const pj_engine *e);
/* Byte offset of the error in the text passed to the failing call, or -1. */
int pj_engine_erroffset(const pj_engine *e);

void pj_engine_set_mode(pj_engine *e, pj_mode mode);
pj_mode pj_engine_mode(const pj_engine *e);
/* LLVM optimization level 0..3 for the JIT (default 2). */
void pj_engine_set_opt_level(pj_engine *e, int level);

/* Threads a pipeline run may use (default: the machine's processors
 * online; 1 runs everything on the calling thread, as before threads
 * existed; n <= 0 restores the default). Results, their row order and
 * errors are the same for every count (docs/DECISIONS.md "Parallel
 * execution"). The worker threads start on the first run that uses them
 * and end with pj_engine_close; when one cannot be started the run uses
 * those there are. */
void pj_engine_set_threads(pj_engine *e, int n);
int pj_engine_threads(const pj_engine *e);

/* ---- limits and cancellation ------------------------------------------ */

/* Memory budget of every pipeline run, in bytes (0, the default: none).
 * The state a run accumulates — ORDER BY buffers and permutations,
 * interval operands, indexes, join tables and scratch, aggregation tables,
 * tree numbering and ordering arrays, the result — is counted as it
 * grows, per stage; a growth that would pass the limit stops the run with
 * PJ_ERROR and "<STAGE>: the query needs more than N MB of memory (limit
 * set with --max-memory): <STAGE> holds X MB, …; <STAGE> asked for Y MB
 * more", named after the stage holding the most. Streaming work (scans,
 * filters, expressions) is not counted, nor plain SQL statements. */
void pj_engine_set_max_memory(pj_engine *e, int64_t bytes);
int64_t pj_engine_max_memory(const pj_engine *e);

/* Asks the statement or run in progress to stop: a pipeline stops at the
 * next batch (at most one batch of 8192 rows later), a JIT compile at its
 * next step (its code is dropped, not cached), a SQL statement at
 * SQLite's next check (sqlite3_interrupt), and the call fails with
 * PJ_INTERRUPTED and the message "interrupted". Async-signal-safe and
 * callable from any thread while another thread uses the engine (the only
 * such call). The request is forgotten when the next pj_engine_exec or
 * pj_query_run starts; when nothing is running it has no effect on later
 * calls. The engine stays fully usable afterwards. */
void pj_engine_interrupt(pj_engine *e);

/* The engine's SQLite connection (owned by the engine). Returned as void*
 * so this header does not need sqlite3.h; cast to sqlite3*. */
void *pj_engine_sqlite(pj_engine *e);

/* Generates the deterministic sample trace (slice, thread, thread_track,
 * process, sched, cpu_frequency) as finalized columnar tables with nslices
 * slices. */
pj_status pj_engine_load_sample_trace(pj_engine *e, int64_t nslices);

/* Runs a script of ';'-separated statements (SQL, pipelines, CREATE
 * PERFETTO TABLE, PERFETTO PRAGMA). For every statement that returns rows,
 * cb is called with its result (owned by the engine; valid during the
 * call). A non-zero return from cb stops the script. `stmt_text` is the
 * statement's text, `stmt_offset` its byte offset in the script. Stops at
 * the first error; the error's line/column are relative to the script. */
typedef int (*pj_result_cb)(void *ctx, const pj_result *res, const char *stmt_text,
                            size_t stmt_len, size_t stmt_offset);
pj_status pj_engine_exec(pj_engine *e, const char *script, pj_result_cb cb, void *ctx);
/* The same over script[0..len), which may hold NUL bytes: a NUL inside a
 * pipeline's string literal is part of the string; anywhere else (and in
 * plain SQL, which SQLite would stop reading at) it is an error at its
 * line and column. pj_engine_exec(e, s, …) is pj_engine_exec_len(e, s,
 * strlen(s), …). */
pj_status pj_engine_exec_len(pj_engine *e, const char *script, size_t len, pj_result_cb cb,
                             void *ctx);

/* Adds a folder to the module path that INCLUDE PERFETTO MODULE a.b.c
 * searches for a/b/c.sql (LANGUAGE.md §7.4). Folders are searched in the
 * order added, then those of the PIPEJIT_MODULE_PATH environment variable
 * (`:`-separated), then the modules that come with pipejit (slices.*,
 * sched.*, counters.*: see the README). Adding a folder twice does
 * nothing. Returns PJ_OK, or PJ_ERROR for an empty name. */
pj_status pj_engine_add_module_path(pj_engine *e, const char *dir);

/* Per-statement timings of the last statement run by pj_engine_exec or
 * pj_query_run, in nanoseconds. */
typedef struct pj_timing {
  int64_t parse_ns, bind_ns, compile_ns, run_ns;
  int64_t rows_in, rows_out;
  int used_jit;   /* 1 when the last run ran compiled code */
  /* 1 when the compiled code came from the engine's compile cache (same
   * pipeline text, tables of the same shape, parameter types, opt level):
   * compile_ns is then 0. */
  int cache_hit;
  /* Batches the last run processed, and how many ran compiled code: in
   * mode auto a long run starts on the interpreter and switches when its
   * background compile is ready (compile_ns is that compile's time,
   * spent on another thread). */
  int64_t batches, jit_batches;
  /* Most bytes of breaker state (sort, aggregation, tree and interval
   * buffers, the result) the last run held at once: what
   * pj_engine_set_max_memory limits. */
  int64_t mem_peak;
  /* Threads the last run's parallel segments ran on (the most of any
   * segment; 1 when none ran in parallel: pj_engine_set_threads). */
  int threads;
} pj_timing;
void pj_engine_last_timing(const pj_engine *e, pj_timing *out);

/* ---- parameters of the engine -------------------------------------- */

/* Values for the named parameters of every statement the engine runs
 * (the CLI's --param, the shell's .param, sqlite3's parameter table):
 * pipelines and CREATE PERFETTO TABLE of a script, plain SQL statements
 * (and the pipelines inside them), and compiled handles. `name` is given
 * with or without its prefix: "min", "$min", ":min" and "@min" are one
 * parameter, which $min, :min and @min all read. A handle's own binding
 * (pj_query_bind_*) wins over the engine's; a handle's parameter bound
 * neither way still fails its run ("parameter $min is not bound"), while
 * in plain SQL it is NULL as SQLite has it. Numbered parameters (?1) are
 * not engine parameters: PJ_ERROR. Binding a name again replaces its
 * value (and type). */
pj_status pj_engine_bind_int64(pj_engine *e, const char *name, int64_t v);
pj_status pj_engine_bind_double(pj_engine *e, const char *name, double v);
pj_status pj_engine_bind_text(pj_engine *e, const char *name, const char *s, size_t len);
pj_status pj_engine_bind_null(pj_engine *e, const char *name);
/* Forgets one parameter (PJ_ERROR when it has no value) or all of them. */
pj_status pj_engine_unbind(pj_engine *e, const char *name);
void pj_engine_clear_bindings(pj_engine *e);
/* The parameters bound, in the order first bound: i in 0..count-1. name
 * has no prefix; type is PJ_TYPE_INT64, PJ_TYPE_DOUBLE or PJ_TYPE_STRING,
 * or is_null is 1. Pointers live until the parameter changes. PJ_ERROR
 * when i is out of range. */
typedef struct pj_param {
  const char *name;
  pj_type type;
  int is_null;
  int64_t i;
  double d;
  const char *s;
  size_t len;
} pj_param;
int pj_engine_param_count(const pj_engine *e);
pj_status pj_engine_param(const pj_engine *e, int i, pj_param *out);

/* ---- compiled queries ------------------------------------------------ */

/* Compiles a pipeline (text starting with FROM or INTERVAL INTERSECTION OF)
 * into a handle. The handle can run many times; each run reads the current
 * data, and binds the query again first when what the plan read changed
 * (the SQLite schema, a replaced columnar table, a parameter's type): a
 * run never answers from an outdated schema, and fails with the bind
 * error when the query no longer binds. Freed with pj_query_free, which
 * also frees its JIT code. */
pj_status pj_query_compile(pj_engine *e, const char *text, pj_query **out);

/* Parameters: `?` are numbered 1, 2, … in order of appearance; `$name`
 * parameters are found with pj_query_param_index. Bindings persist across
 * runs until changed or cleared. A handle compiles with its parameters
 * unbound, but running it with one never bound fails naming it
 * ("WHERE: parameter $min is not bound"); pj_query_bind_null binds NULL. */
int pj_query_param_count(const pj_query *q);
int pj_query_param_index(const pj_query *q, const char *name); /* "$name" or "name"; 0 if none */
pj_status pj_query_bind_int64(pj_query *q, int idx, int64_t v);
pj_status pj_query_bind_double(pj_query *q, int idx, double v);
pj_status pj_query_bind_text(pj_query *q, int idx, const char *s, size_t len);
pj_status pj_query_bind_null(pj_query *q, int idx);
/* Makes every parameter unbound again. */
void pj_query_clear_bindings(pj_query *q);

/* Runs the handle; *out receives a result owned by the caller (free with
 * pj_result_free). */
pj_status pj_query_run(pj_query *q, pj_result **out);

/* Text dumps, owned by the handle: the plan after pruning and segmenting;
 * the LLVM IR of every segment (after optimization; raw = before); the
 * machine code. IR dumps are NULL when the handle has not been compiled by
 * the JIT (see pj_engine_errmsg for why). */
const char *pj_query_plan(pj_query *q);
const char *pj_query_llvm_ir(pj_query *q, int optimized);
const char *pj_query_asm(pj_query *q);
void pj_query_free(pj_query *q);

/* ---- results --------------------------------------------------------- */

int64_t pj_result_row_count(const pj_result *r);
int pj_result_column_count(const pj_result *r);
const char *pj_result_column_name(const pj_result *r, int col);
pj_type pj_result_column_type(const pj_result *r, int col);

/* By row. Integers of every kind read as int64; strings as a NUL-terminated
 * pointer into the string pool (len optional). */
int pj_result_is_null(const pj_result *r, int64_t row, int col);
int64_t pj_result_int64(const pj_result *r, int64_t row, int col);
double pj_result_double(const pj_result *r, int64_t row, int col);
const char *pj_result_text(const pj_result *r, int64_t row, int col, size_t *len);

/* By column: the whole column as one contiguous array. values points to
 * int64_t / double / uint32_t (string ids) / uint32_t / int32_t by type
 * (NULL for PJ_TYPE_ID: value = row index); validity is a bitvector (bit i
 * of word i/64), NULL when no value is NULL. */
typedef struct pj_column {
  pj_type type;
  const void *values;
  const uint64_t *validity;
  int64_t rows;
} pj_column;
void pj_result_column(const pj_result *r, int col, pj_column *out);
/* Text of a string id from a pj_column of type PJ_TYPE_STRING. */
const char *pj_result_string(const pj_result *r, uint32_t id, size_t *len);

/* A second handle on the same rows, owned by the caller (free with
 * pj_result_free): keeps a result passed to a pj_result_cb beyond the
 * callback. No values are copied (results never change). Like every
 * result, it reads strings from the engine's pool: free it before the
 * engine. PJ_NOMEM or PJ_OK. */
pj_status pj_result_clone(const pj_result *r, pj_result **out);

void pj_result_free(pj_result *r);

/* ---- Arrow ----------------------------------------------------------- */

/* The Arrow C data interface (arrow.apache.org/docs/format/CDataInterface
 * and CStreamInterface), declared as the specification asks, so DuckDB,
 * polars, pyarrow and nanoarrow read results without copies. */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4
struct ArrowSchema {
  const char *format;
  const char *name;
  const char *metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema **children;
  struct ArrowSchema *dictionary;
  void (*release)(struct ArrowSchema *);
  void *private_data;
};
struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void **buffers;
  struct ArrowArray **children;
  struct ArrowArray *dictionary;
  void (*release)(struct ArrowArray *);
  void *private_data;
};
#endif
#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE
struct ArrowArrayStream {
  int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
  int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
  const char *(*get_last_error)(struct ArrowArrayStream *);
  void (*release)(struct ArrowArrayStream *);
  void *private_data;
};
#endif

/* Exports a result as one record batch: a struct schema ("+s") with a
 * child per column (named as the column, flagged nullable) and a struct
 * array of pj_result_row_count rows whose children are the columns.
 * Types: every integer kind (id, uint32, int32, int64) is int64 ("l", as
 * the API reads integers), double is float64 ("g"), string is utf8 ("u";
 * large_utf8 "U" when a column's text passes 2 GiB), bool is boolean
 * ("b"). NULLs are validity bitmaps (none when a column has no NULL) and
 * null_count is exact. int64 and double values and the validity bitmaps
 * are not copied: the arrays hold a reference to the result's column
 * data. Strings, bools, ids and 32-bit integers are converted into
 * buffers the arrays own. The exported structs depend on nothing else:
 * they stay valid after pj_result_free and pj_engine_close, until their
 * release callbacks, which may run on any thread; children may be moved
 * out and released on their own (as the specification allows). schema or
 * array may be NULL to export only the other. Returns PJ_OK, or PJ_NOMEM
 * with nothing exported (release == NULL). */
pj_status pj_result_export_arrow(const pj_result *r, struct ArrowSchema *schema,
                                 struct ArrowArray *array);
/* The same as a stream that yields that one batch, then the end of the
 * stream (Python's __arrow_c_stream__, DuckDB's and polars' readers).
 * get_schema may be called any number of times. */
pj_status pj_result_export_arrow_stream(const pj_result *r, struct ArrowArrayStream *out);

/* ---- importing data -------------------------------------------------- */

/* Progress of a long import: `done` of `total` units (rows) of `what` (a
 * table name). Called from the calling thread. */
typedef void (*pj_progress_cb)(void *ctx, const char *what, int64_t done, int64_t total);

/* Copies the SQLite table (or view) `name` of the engine's database into a
 * finalized columnar table of the same name, for the fast path: FROM name
 * then reads the columnar copy (the catalog wins over SQLite), and SQL sees
 * it as temp."name", shadowing the original. Column types come from the
 * values (text → string, real → double, else integer; all-NULL columns
 * from the declared type); an integer `id` column holding exactly 0..n-1
 * becomes the implicit id type. Later changes to the SQLite table are not
 * seen until the table is loaded again. Errors read "LOAD: …". */
pj_status pj_engine_load_table(pj_engine *e, const char *name);
/* The same, calling progress (may be NULL) every 65536 rows and at the
 * end. */
pj_status pj_engine_load_table_progress(pj_engine *e, const char *name, pj_progress_cb progress,
                                        void *ctx);

/* What pj_engine_load_trace found. The Python package reads these fields
 * by position (python/pipejit/_engine.py): add new ones at the end. */
typedef struct pj_trace_info {
  const char *format;     /* "json" or "proto" */
  int gzip;               /* the file was gzip-compressed */
  int64_t file_bytes;     /* size of the file */
  int64_t bytes;          /* bytes of trace data (after decompression) */
  int64_t import_ns;      /* wall time from opening the file to tables ready */
  int64_t events;         /* events read (JSON: elements of traceEvents) */
  int64_t slices, threads, processes, counters, sched, args;   /* rows */
  int64_t problems;       /* sum of the `stats` rows counting dropped or
                             repaired data (see the stats table) */
  int64_t damaged_at;     /* byte offset where the file is cut or damaged
                             (everything before it was imported), or -1 */
  char warning[256];      /* what the damage was, "" when none */
} pj_trace_info;

/* Imports a trace file — Chrome JSON (trace event format) or Perfetto
 * protobuf, plain or gzip-compressed, told apart by content — as the
 * tables of trace_processor (slice, thread, process, track and its typed
 * views, counter, sched, thread_state, flow, args, metadata, stats,
 * trace_bounds, cpu, ftrace_event, …; pj_engine_tables lists them),
 * replacing the tables of an earlier trace, visible to pipelines and
 * SQL. info (may be NULL) receives the counts above. A file that cannot
 * be read or is not a trace fails ("TRACE: …") and leaves the catalog as
 * it was; a truncated or damaged one imports what it can. */
pj_status pj_engine_load_trace(pj_engine *e, const char *path, pj_trace_info *info);
/* The same, calling progress (may be NULL) as the import goes: `what` is
 * "read" (done/total in bytes) then "events" (done/total events). */
pj_status pj_engine_load_trace_progress(pj_engine *e, const char *path, pj_trace_info *info,
                                        pj_progress_cb progress, void *ctx);

/* The names of the tables a trace import creates (NULL-terminated), in a
 * stable order; present in the catalog once a trace was loaded. */
const char *const *pj_engine_trace_tables(void);
/* Every columnar table of the engine's catalog, in creation order: the
 * name of table i (0 <= i < count) and its row count. NULL past the end. */
int pj_engine_table_count(pj_engine *e);
const char *pj_engine_table_name(pj_engine *e, int i, int64_t *rows);

/* Writes every imported trace table into a new SQLite database file at
 * path, as trace_processor_shell's export does (TRACES.md §4): the
 * __intrinsic_* tables and the views over them. An existing file is
 * replaced. Errors read "EXPORT: …". */
pj_status pj_engine_export(pj_engine *e, const char *path);

/* ---- many traces (batch mode) ------------------------------------------ */

/* Batch mode runs one script on many traces, each in its own engine
 * (usually its own process), and gathers every result into one SQLite
 * file: a table per statement that returns rows, with a first column
 * `trace` naming the trace, and batch_errors(trace, error) for the traces
 * that failed. The CLI's --batch and Python's pipejit.batch are built on
 * these calls.
 *
 * pj_batch_run runs `script` on e (whose trace the caller has loaded) and
 * writes the rows of each statement that returns rows into a new SQLite
 * file at part_path (replaced if it exists): the statement's table is
 * named by a `-- name: NAME` line among the comments it starts with, else
 * result_K (K counting those statements from 1). On failure the error is
 * on the engine (pj_engine_errmsg, line, column) and no file is left. */
pj_status pj_batch_run(pj_engine *e, const char *script, size_t len, const char *part_path);

typedef struct pj_batch pj_batch;
/* Creates the output file at out_path (an existing one is replaced) with
 * an empty batch_errors. *out is set even on failure, for
 * pj_batch_errmsg; close it with pj_batch_close. */
pj_status pj_batch_open(const char *out_path, pj_batch **out);
/* Copies trace's part file (from pj_batch_run) into the output, all of
 * it or none. A table's columns are those of the first trace added that
 * returned it: a later trace must return the same names; an integer in a
 * double column becomes a double, a double in an integer column must be
 * whole, text never mixes with numbers. Returns 0 when added; 1 when the
 * trace failed that way (or its part cannot be read): the failure is
 * recorded in batch_errors, and pj_batch_errmsg says it; -1 when the
 * output cannot be written (pj_batch_errmsg): every later call fails. */
int pj_batch_add(pj_batch *b, const char *trace, const char *part_path);
/* Records a trace that failed (its import or its script) in batch_errors. */
pj_status pj_batch_add_error(pj_batch *b, const char *trace, const char *message);
const char *pj_batch_errmsg(const pj_batch *b);
/* Closes the file; PJ_ERROR when it could not be written completely. */
pj_status pj_batch_close(pj_batch *b);

/* ---- what a file holds ------------------------------------------------ */

/* What the first bytes of a file look like, so a tool handed a trace where
 * it expects a script (or the reverse) can say so. Judged by content, not
 * by name; `head` is the file's first `len` bytes (4 KiB is plenty). */
typedef enum pj_format {
  PJ_FORMAT_TEXT = 0,  /* anything else: a script */
  PJ_FORMAT_GZIP,      /* gzip magic: a .json.gz trace, say */
  PJ_FORMAT_JSON,      /* a JSON object or array: a Chrome JSON trace */
  PJ_FORMAT_PROTO,     /* binary shaped like a protobuf: a Perfetto trace */
  PJ_FORMAT_SQLITE,    /* a SQLite database file */
} pj_format;
pj_format pj_detect_format(const void *head, size_t len);
/* "gzip-compressed data", "a JSON trace", …: for messages. */
const char *pj_format_name(pj_format f);

#ifdef __cplusplus
}
#endif
#endif
