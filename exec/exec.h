/*
 * exec.h — the driver that runs a plan's segments over batches, with either
 * backend, and the per-run state both backends share.
 *
 * For each segment in order the driver opens its source (table scan, SQLite
 * scan or a breaker's buffer), and for every batch calls the segment's
 * batch function — the interpreter's or a JIT-compiled loop, as the
 * caller's pick function says (backend.h) —
 * which runs the streaming steps and feeds the sink. Then it finishes the
 * sink (sorts, emits aggregate groups). Backends can change between
 * batches: all state lives in ex_seg / ex_run, not in the backend.
 */
#ifndef PJ_EXEC_H
#define PJ_EXEC_H

#include "../ir/plan.h"
#include "../runtime/store.h"
#include "runtime/tree/tree.h"
#include "runtime/interval/interval.h"
#include "../runtime/budget.h"
#include "../runtime/jointab.h"
#include "../runtime/topk.h"

/* A parameter value for one run. */
typedef struct ex_value {
  rt_type type;        /* RT_I64, RT_F64, RT_STR or RT_NULLT */
  int64_t i;
  double f;
  uint32_t s;
} ex_value;

typedef struct ex_run ex_run;

/* Run state of one segment (layout read by generated code: see
 * codegen/cg_types.c, checked in tests/unit/test_layout.c). */
typedef struct ex_seg {
  ex_run *run;
  const ir_segment *seg;
  int index;
  /* Sink state. SORT and OUTPUT append the active rows' columns
   * buf_cols[0..nbuf) to buf; AGGREGATE updates agg (group keys from the
   * op's group_cols, aggregate inputs from the live aggs' arg_col). */
  rt_rowbuf *buf;
  int nbuf;
  int *buf_cols;
  rt_aggtab *agg;
  /* LIMIT steps, in step order: rows still to skip, rows still to pass. */
  int nlimits;
  int64_t *limit_skip;
  int64_t *limit_left;
  /* Set by a backend when every LIMIT is satisfied: stop the source. */
  int done;
  /* Interpreter scratch (interp/), opaque to everyone else; the run's
   * seg_free frees it. */
  void *vm;
} ex_seg;

/* Batches per morsel: the unit of parallel scans (driver_par.c) and of
 * AGGREGATE's partial sums (runtime/aggmerge.h), the same for any thread
 * count. */
#define EX_MORSEL_BATCHES 8

/* Runs one batch through segment s; 0 on success, -1 on error (s->run->err
 * set, message "<STAGE>: …"). */
typedef int (*ex_batch_fn)(ex_seg *s, rt_batch *b);

/* Chooses the batch function of segment `seg` for the batch about to run
 * (lets a caller switch backends between batches). */
typedef ex_batch_fn (*ex_pick_fn)(void *ctx, int seg);

/* The run's feed (ex_run.feed, driver.c's): runs one batch of n
 * positions through segment s with the backend pick chooses, then into
 * `down` (driver.c's streaming order state, or NULL) as driver.c's own
 * sources do. 0, or -1 with run->err. The sources of driver_interval.c
 * push their rows through it, so they call nothing of driver.c. */
typedef int (*ex_feed_fn)(ex_run *run, ex_seg *s, rt_batch *b, uint32_t n, ex_pick_fn pick,
                          void *ctx, void *down);

struct ex_run {
  const ir_plan *plan;
  rt_arena arena;      /* per-run allocations; freed at the end of the run */
  rt_strpool *strings;
  void *db;            /* sqlite3 * */
  int nparams;
  const ex_value *params;  /* 1-based: params[0] unused */
  rt_err err;
  int nsegs;
  ex_seg *segs;
  /* Buffers of breakers, indexed by op index in plan->ops: the rowbuf the
   * next segment scans and, for SORT, its permutation. */
  rt_rowbuf **bufs;
  uint32_t **perms;
  /* TREE ACCUMULATE state, indexed by op index in plan->ops like bufs
   * (runtime/tree/tree.h; read by generated code):
   *   treenums[i]  the rt_treenum of a TREE_NUMBER op, set up when its
   *                segment opens, finished (missing-parent check, nnodes
   *                final) when that segment's input ends, kept to the end
   *                of the run because later ops size by its nnodes;
   *   treeaccs[i]  the rt_treeacc of a TREE_ACC op, set up when its
   *                segment opens with nnodes from its TREE_NUMBER.
   * A TREE_ORDER's buffer and permutation are bufs[i] / perms[i] as for a
   * SORT (perms[i] NULL when the rows are already in order); tree_paths[i]
   * records which path it took (rt_treeorder_path), for tests and
   * timing. */
  rt_treenum **treenums;
  rt_treeacc **treeaccs;
  int *tree_paths;
  rt_rowbuf result;    /* OUTPUT columns in output order */
  int64_t rows_in;     /* rows read by sources, for timing */
  volatile int *interrupt;  /* engine's interrupt flag, or NULL */
  /* What INTERVAL INTERSECTION OF did in this run (summed over its ops):
   * which path each partition took; for tests and timing. */
  rt_isect_stats isect_stats;
  /* The run's memory budget (runtime/budget.h): the caller sets
   * budget.limit (0 = none); ex_run_plan installs it for the calling
   * thread while it runs, and turns a refused growth into the error
   * "<STAGE>: the query needs more than N MB of memory …". budget.peak is
   * the most breaker state the run held at once. */
  rt_budget budget;
  /* Set by a backend that keeps scratch in its segments' ex_seg.vm (the
   * interpreter): ex_run_free calls it for every segment. */
  void (*seg_free)(ex_seg *s);
  /* Set by ex_run_init: see ex_feed_fn. */
  ex_feed_fn feed;
  /* The answers of plan->subqs (subq.c), NULL until one is asked for;
   * ex_run_free frees them with subqs_free (set with them: subq.c runs
   * plans through the driver, so the driver does not call it by name). */
  struct ex_subqval *subqs;
  void (*subqs_free)(ex_run *run);
  /* The interpreter (backend.h), which runs the plans of pipeline
   * subqueries (set by the caller; without it they fail). */
  const struct ex_backend *interp;
  /* JOIN hash tables, indexed by the op index of their JOIN_BUILD like
   * bufs (whose buffer they index; both freed at the end of the run). */
  rt_jointab **joins;
  /* Set by the caller (api/query.c: the interpreter's vm_run_from): runs a
   * batch through a segment from a given step on, for rows that enter a
   * segment in its middle (RIGHT and FULL JOIN's unmatched rows after
   * their probe). */
  int (*run_from)(ex_seg *s, rt_batch *b, int step);
  /* Worker threads (set by the caller; NULL / 1: the calling thread
   * only): the engine's pool and how many threads a parallel segment may
   * use (driver_par.c). */
  struct ex_pool *pool;
  int threads;
  /* Rows per batch of a table scan: RT_BATCH, or fewer (a multiple of 64)
   * when a test sets it (pj__engine_set_batch_rows); 0 means RT_BATCH. */
  int batch_rows;
  /* The most threads a parallel segment of this run ran on (0: none). */
  int threads_used;
  /* AGGREGATE on one thread, by segment index: batches run so far and the
   * totals of the per-morsel sums (runtime/aggmerge.h; NULL until the
   * first morsel ends). Allocated with segs. */
  int64_t *seg_batches;
  struct rt_aggfold **folds;
  /* AGGREGATE on several threads with many groups, by segment index: the
   * partitions holding the groups (runtime/aggpart.h), which the sink's
   * finish writes out instead of the segment's table (NULL: the table
   * holds them). Allocated with segs. */
  struct rt_aggpart **aggparts;
  /* By segment index: the state of an ORDER BY whose reader starts with
   * LIMIT, its buffer kept to its first rows (driver.c ex_topk_open),
   * else NULL. Allocated with segs. */
  struct ex_topk **topks;
  /* Set by a caller that put an emptied buffer of an earlier run of this
   * plan in `result` after ex_run_init (a table function's, api/sqltab.c):
   * the OUTPUT sink fills it again when its columns fit (else frees it and
   * makes its own). Either way `result` is the run's as usual: the
   * caller's on success, freed by ex_run_free after an error. */
  bool result_kept;
  /* The segment the driver feeds morsels of its own (a tree order's whole
   * subtrees, driver_treepar.c) and ends each itself, or NULL: its
   * AGGREGATE's partial sums then do not follow the batch count. */
  const ex_seg *own_morsels;
};


/* Runs the plan. On success the result is in run->result (columns in
 * output order) and 0 is returned; on error -1 and run->err. The caller
 * fills plan, strings, db, params, interrupt; ex_run_init does the rest. */
void ex_run_init(ex_run *run, const ir_plan *plan, rt_strpool *strings, void *db,
                 int nparams, const ex_value *params);
int ex_run_plan(ex_run *run, ex_pick_fn pick, void *pick_ctx);
void ex_run_free(ex_run *run);

/* ORDER BY … LIMIT's state (runtime/topk.h) and, when the sort's
 * segment has no step (its buffer's columns are the source's), the batch
 * column of each key, which lets a batch's rows be judged before they are
 * appended (ex_topk_batch); else kcols is NULL. */
typedef struct ex_topk {
  rt_topk t;
  int *kcols;
} ex_topk;

/* Before a batch (every position active) enters the sort of et, with
 * state t (et's own, or a worker's): restricts the batch's active list to
 * the positions t's bound lets through. Returns how many remain. */
uint32_t ex_topk_batch(const ex_topk *et, rt_topk *t, rt_batch *b);

/* Evaluates a LIMIT/OFFSET count expression (constant or parameter). */
int ex_eval_count(ex_run *run, const ir_expr *e, const char *stage, int64_t *out);

/* The index of op in plan->ops, which run->bufs and the run's other per-op
 * arrays follow; -1 when op is not in the plan. */
static inline int ex_op_index(const ir_plan *p, const ir_op *op) {
  for (int i = 0; i < p->nops; i++)
    if (p->ops[i] == op) return i;
  return -1;
}

/* Sets run->err to "<op's stage>: msg" at op; returns -1. */
static inline int ex_op_fail(ex_run *run, const ir_op *op, const char *msg) {
  rt_errorf(&run->err, op->pos, "%s: %s", op->stage ? op->stage : "RUN", msg);
  return -1;
}

/* Position of plan column c in the rowbuf of buffering op bop (its layout
 * is ir_buf_cols), or -1. */
static inline int ex_buf_col(const ir_op *bop, int c) {
  int n;
  const int *cols = ir_buf_cols(bop, &n);
  for (int i = 0; i < n; i++)
    if (cols[i] == c) return i;
  return -1;
}


/* The sources of the INTERVAL operators (driver_interval.c; the
 * ir_op_is_interval ops): ex_iv_scan runs the operator over its
 * relations' IV_BUFFERs and serves the output. */
int ex_iv_scan(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *down);
/* True when segment seg only copies an unfiltered table scan into an
 * IV_BUFFER whose interval source reads the table in place: the driver
 * then skips the segment (it would copy rows nobody reads). */
bool ex_iv_direct(const ir_plan *p, const ir_segment *seg);
/* Frees the n IV_BUFFERs bufs[] of a source (an interval or GRAPH source)
 * once its output has been served, each charged back to its own stage. */
void ex_iv_release(ex_run *run, ir_op *const *bufs, int n);

/* A WINDOW sink's input has ended (driver_window.c): adds the live calls'
 * result columns to its buffer and computes them (runtime/window.h). 0, or
 * -1 with run->err. */
int ex_window_finish(ex_run *run, ex_seg *s);

/* Calls plan->callouts[idx] for one row (callout.c): argv and nulls (bit
 * i set: argument i is NULL) as ir_callout_fn takes them. Returns the
 * result word; *status is 0 for a value, 1 for NULL, -1 for an error (set
 * on run->err as "<STAGE>: <message>"). Both backends call this. */
int64_t ex_callout(ex_run *run, int32_t idx, const int64_t *argv, int64_t nulls,
                   int32_t *status);
/* The callout c of a subquery (c->subq set; subq.c), as ex_callout. */
int64_t ex_subq_call(ex_run *run, const ir_callout *c, const int64_t *argv, uint64_t nulls,
                     int32_t *status);
/* The SETOP source (driver_setop.c): combines its relations' IV_BUFFERs
 * and serves the result. */
int ex_setop_scan(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *down);

/* Rows per batch of a table scan (ex_run.batch_rows), and batches per
 * morsel: EX_MORSEL_BATCHES, or 2 under the test knob (small tables then
 * span many morsels of several batches). */
static inline int64_t ex_batch_rows(const ex_run *run) {
  return run->batch_rows > 0 && run->batch_rows <= RT_BATCH ? run->batch_rows : RT_BATCH;
}
static inline int64_t ex_morsel_batches(const ex_run *run) {
  return run->batch_rows > 0 && run->batch_rows < RT_BATCH ? 2 : EX_MORSEL_BATCHES;
}

/* Parallel scans (driver_par.c): whether segment s runs on several
 * threads, and running it (0, or -1 with run->err). */
bool ex_par_wanted(const ex_run *run, const ex_seg *s);
/* Whether the run may use its threads at all (a pool, more than one
 * thread, no memory limit), and the runner of runtime/par.h over the
 * run's pool (breakers' finishing work: ORDER BY's sort). */
bool ex_par_ok(const ex_run *run);
int ex_par_runner(void *pool, int want, void (*fn)(void *ctx, int worker), void *ctx);
int ex_par_scan(ex_run *run, ex_seg *s, ex_pick_fn pick, void *ctx);
/* AGGREGATE segment si whose groups a parallel run left in partitions
 * (run->aggparts[si]): _emit writes them into out in first-seen order
 * on the run's threads and sets *ngroups (0 or RT_AGGX_NOMEM); both free
 * the partitions. */
int ex_par_agg_emit(ex_run *run, int si, rt_rowbuf *out, int64_t *ngroups);
void ex_par_agg_drop(ex_run *run, int si);
/* Whether segment s's steps and sink may run on several threads (what
 * ex_par_wanted asks of any source). */
bool ex_par_steps_ok(const ex_run *run, const ex_seg *s);
/* Rows an operator made (an interval source's output) run through
 * segment s on the run's threads, morsel by morsel, as ex_par_scan runs a
 * table's: nrows rows in batches of batch_rows positions (the batches one
 * thread would feed, so morsels and partial sums are the same), load
 * putting rows at..at+n-1 into b's columns as views; worker is 0 ..
 * run->threads - 1 (for scratch of its own). count_in: the rows count as
 * read (run->rows_in). 0, or -1 with run->err. */
typedef struct ex_par_src {
  int64_t nrows;
  int64_t batch_rows;
  bool count_in;
  void (*load)(void *src, int worker, int64_t at, uint32_t n, rt_batch *b);
  void *src;
  /* A source whose rows are made while they are served (more != NULL):
   * nrows is then only an upper bound. avail: how many rows are ready, in
   * order, and whether that is all there will be; more: a worker that
   * finds no morsel ready makes some rows (1), or finds nothing left to
   * make and waits for another worker's (0); done: rows at..at+n-1 were
   * run and are not read again (their memory may be reused). Each is
   * called without the job's lock, and a source guards its own state. */
  int64_t (*avail)(void *src, bool *complete);
  int (*more)(void *src, int worker);
  void (*done)(void *src, int64_t at, int64_t n);
  /* Morsels given (NULL: every EX_MORSEL_BATCHES batches): morsel m is
   * positions bounds[m]..bounds[m+1]-1, in the batches ex_par_batch_len
   * cuts from its start; nbounds morsels. */
  const int64_t *bounds;
  int64_t nbounds;
} ex_par_src;
/* The batch of src's morsel ending at `end` that starts at `at`:
 * batch_rows positions, fewer at the morsel's end, and with given morsels
 * only up to the next multiple of 64 when `at` is not one (so the rows
 * after it start on a validity word and read the columns in place). */
static inline int64_t ex_par_batch_len(const ex_par_src *src, int64_t at, int64_t end) {
  int64_t n = end - at < src->batch_rows ? end - at : src->batch_rows;
  if (src->bounds && at % 64 && n > 64 - at % 64) n = 64 - at % 64;
  return n;
}
int ex_par_rows(ex_run *run, ex_seg *s, const ex_par_src *src, ex_pick_fn pick, void *ctx);

/* Whether segment s's steps and sink may run on several threads when its
 * step `skip` is left out (a TREE_ACC, which driver_treepar.c runs on
 * morsels of whole subtrees). */
bool ex_par_steps_ok_but(const ex_run *run, const ex_seg *s, const ir_op *skip);

/* The rows a segment reading a finished tree order is fed
 * (driver_treepar.c), the same batches on one thread and on several:
 * position k is the order's k-th row. In place (t set): the table's rows,
 * kept, reversed (row n-1-k) or through the walk's perm; columns whose
 * table_cols entry is -1 read pnode. Buffered (buf set): scanned column i
 * is buffer column bc[i] under plan column ids[i], through perm when
 * there is one. */
typedef struct ex_treescan {
  const ir_op *src;
  const rt_table *t;
  const uint32_t *pnode;
  const uint64_t *bmin, *bmax;   /* the table check's block bounds (rt_treenum) */
  bool reversed;
  const rt_rowbuf *buf;
  int nc;
  const int *bc, *ids;
  const uint32_t *perm;
  int path;            /* rt_treeorder_path */
  int64_t n;
  const uint32_t *ramps;   /* ex_treescan_ramps' (2 x EX_RAMP), read only */
} ex_treescan;
/* The selections of batches that are not a run of whole validity words
 * are slices of two ramps, 0, 1, … and EX_RAMP - 1, …, 0, made once per
 * run into 2 * EX_RAMP entries. */
enum { EX_RAMP = RT_BATCH + 64 };
void ex_treescan_ramps(uint32_t *ramps);
/* Positions at..at+n-1 (n <= RT_BATCH) into b's columns. */
void ex_treescan_batch(const ex_treescan *ts, int64_t at, uint32_t n, rt_batch *b);
/* The morsels segment s reads ts in when its first live step is the
 * TREE ACCUMULATE of that order (runtime/tree/tree.h rt_tree_morsels):
 * how many (*bounds malloc'd, count + 1 entries), 0 when it is fed plain
 * batches, -1 on out of memory (run->err set). The same for any thread
 * count. */
int64_t ex_tree_morsels(ex_run *run, const ex_seg *s, const ex_treescan *ts, int64_t **bounds);
/* Runs those morsels on the run's threads when the segment may run in
 * parallel: 1 when it did, 0 when the caller must feed them on one
 * thread, -1 on error. */
int ex_tree_par(ex_run *run, ex_seg *s, const ex_treescan *ts, const int64_t *bounds, int64_t count,
                ex_pick_fn pick, void *ctx);

/* A GRAPH source (§9.5; driver_graph.c): builds the tree of its
 * relations' IV_BUFFERs (runtime/graph/graph.h) and serves it. */
int ex_graph_scan(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *down);
/* The TREE_SHAPE source (driver_tshape.c): a §9.4 tree operator over its
 * relations' IV_BUFFERs, serving the reshaped forest. */
int ex_tshape_scan(ex_run *run, ex_seg *s, rt_batch *b, ex_pick_fn pick, void *ctx, void *down);

/* The hash table a JOIN_PROBE reads (its build's), or NULL. */
rt_jointab *ex_join_tab(const ex_run *run, const ir_op *probe);

#endif
