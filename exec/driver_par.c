/*
 * driver_par.c — morsel-driven parallel scans (HyPer style).
 *
 * A segment that reads a table and whose steps and sink keep no state
 * that rows share in order (ex_par_wanted) runs on the engine's worker
 * threads (exec/pool.h): the table is cut into morsels of
 * EX_MORSEL_BATCHES batches, each worker takes the next morsel, runs its
 * batches through the same batch function one thread would (compiled
 * segment or interpreter, as the picker says), into a sink of its own for
 * that morsel, and the morsels' sinks are merged into the segment's in
 * morsel order:
 *
 *   AGGREGATE  a fresh table per morsel, merged into the segment's table
 *              (runtime/aggmerge.h: the same partial sums, added in the
 *              same order, as one thread folds; groups in first-seen
 *              order). When the first morsel's table has many groups,
 *              the merge is partitioned instead (runtime/aggpart.h): a
 *              morsel's partitions merge in parallel, each waiting only
 *              for the same partition of the morsel before, and the
 *              groups are written out at the end, in first-seen order,
 *              by the sink's finish (ex_par_agg_emit) on every thread.
 *   a buffer   (ORDER BY's, a window's, an interval operand's, a join's
 *              relation, a fork's, the result): when every row reaches
 *              the sink, the buffer is sized for the table first and each
 *              morsel appends in place, into a window over its own rows
 *              of the buffer (morsels start at multiples of 64 rows, so
 *              no two share a validity word); otherwise into a buffer of
 *              its own, appended to the segment's in morsel order.
 *   a top k    (ORDER BY … LIMIT, runtime/topk.h): a buffer per morsel,
 *              each batch's rows filtered against the worker's bound and
 *              the buffer pruned to its k first rows as it grows; the
 *              survivors appended in morsel order to the segment's
 *              buffer, filtered and pruned there by the segment's state.
 *              A worker starts each morsel with the tightest bound the
 *              merges so far have published (every row under it came
 *              from a morsel before the one it takes).
 *
 * A morsel waits for its turn to merge (the morsel before it merged);
 * taking morsels in order keeps the wait short.
 *
 * A source may make its rows while they are served (ex_par_src.more: an
 * interval operator's pieces): a worker then takes the next morsel only
 * once its rows are ready, and otherwise makes some (par_ready).
 *
 * Everything a batch touches is the worker's own: an ex_run copy (its
 * error, its interpreter scratch through ex_seg.vm, its memory budget
 * installed on its thread) and an ex_seg copy pointing at it; what they
 * share is read only during the scan (the plan, the table, parameters,
 * the string pool, JOIN tables: ex_par_wanted refuses expressions that
 * add strings, callouts, LIMIT, tree steps and joins that mark rows; a
 * worker's JOIN tables are copies with caches of its own).
 *
 * Errors: a morsel stops at its first failing batch; no morsel after the
 * earliest failed one is started, and the error reported is the earliest
 * failed morsel's (or its merge's), which is the one a single thread
 * reading the morsels in order would have met first.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "pool.h"
#include "runtime/aggmerge.h"
#include "runtime/aggpart.h"

/* ---- what may run in parallel ----------------------------------------------- */

/* An expression that only reads: no callouts (SQLite functions,
 * subqueries evaluated on first use) and no string made (the pool is not
 * written by two threads). Strings passed through (columns, constants,
 * CASE / COALESCE picking one) make none. */
static bool ex_par_expr(const ir_expr *e) {
  if (!e) return true;
  switch (e->kind) {
  case IX_CALLOUT: return false;
  case IX_COL: case IX_CONST: case IX_PARAM: case IX_CASE: case IX_COALESCE: case IX_NULLIF:
  case IX_MIN: case IX_MAX:
    break;
  default:
    if (e->type == RT_STR) return false;
    break;
  }
  for (int i = 0; i < e->nargs; i++)
    if (!ex_par_expr(e->args[i])) return false;
  return true;
}

bool ex_par_ok(const ex_run *run) {
  return run->pool && run->threads > 1 && run->budget.limit == 0;
}

int ex_par_runner(void *pool, int want, void (*fn)(void *ctx, int worker), void *ctx) {
  return ex_pool_run(pool, want, fn, ctx);
}

/* A JOIN probe that only reads its table: INNER, LEFT or CROSS (RIGHT
 * and FULL mark the rows matched), a residual that only reads. What the
 * JIT caches in the table is the worker's own (par_joins_init). */
static bool ex_par_join(const ir_op *op) {
  int k = op->join.kind;
  return (k == RT_JOIN_INNER || k == RT_JOIN_LEFT || k == RT_JOIN_CROSS) && ex_par_expr(op->join.residual);
}

bool ex_par_steps_ok(const ex_run *run, const ex_seg *s) { return ex_par_steps_ok_but(run, s, NULL); }

bool ex_par_steps_ok_but(const ex_run *run, const ex_seg *s, const ir_op *skip) {
  const ir_segment *seg = s->seg;
  const ir_op *sink = seg->sink;
  if (!ex_par_ok(run)) return false;
  for (int k = 0; k < seg->nsteps; k++) {
    const ir_op *op = seg->steps[k];
    if (op->dead || op == skip) continue;
    if (op->kind == IR_FILTER && ex_par_expr(op->filter.pred)) continue;
    if (op->kind == IR_COMPUTE && ex_par_expr(op->compute.expr)) continue;
    if (op->kind == IR_JOIN_PROBE && ex_par_join(op)) continue;
    return false;
  }
  switch (sink->kind) {
  case IR_AGGREGATE: return s->agg && rt_aggtab_mergeable(s->agg);
  case IR_OUTPUT: case IR_SORT: case IR_WINDOW: case IR_FORK: case IR_IV_BUFFER:
  case IR_JOIN_BUILD: case IR_TREE_ORDER:
    return s->buf != NULL;   /* the backends append the active rows */
#define IR_CASE_SOURCE(name) case IR_##name:
#define IR_CASE_STEP(name) case IR_##name:
#include "ir/op_cases.h"
  case IR__COUNT:
    break;
  }
  return false;
}

bool ex_par_wanted(const ex_run *run, const ex_seg *s) {
  const ir_op *src = s->seg->source;
  if (!ex_par_ok(run)) return false;
  if (src->kind != IR_SCAN_TABLE || !src->scan.table) return false;
  if (src->scan.table->nrows <= ex_morsel_batches(run) * ex_batch_rows(run)) return false;   /* one morsel */
  return ex_par_steps_ok(run, s);
}

/* Whether every row of the source reaches the sink (no step drops rows). */
static bool par_all_rows(const ir_segment *seg) {
  for (int k = 0; k < seg->nsteps; k++)
    if (!seg->steps[k]->dead && ir_op_has(seg->steps[k]->kind, OPF_ROWS)) return false;
  return true;
}

/* ---- top k (driver.c ex_topk_open) ---------------------------------------- */

uint32_t ex_topk_batch(const ex_topk *et, rt_topk *t, rt_batch *b) {
  if (!et->kcols || !t->bounded || b->active || b->n > RT_BATCH) return b->nactive;
  const rt_view *kv[t->nkeys > 0 ? t->nkeys : 1];
  for (int j = 0; j < t->nkeys; j++) kv[j] = &b->cols[et->kcols[j]];
  b->nactive = rt_topk_prefilter(t, kv, b->n, t->active);
  b->active = t->active;
  return b->nactive;
}

/* ---- the job ----------------------------------------------------------------- */

/* A worker keeps its AGGREGATE table across morsels while it holds at most
 * this many groups (par_merge); more groups empty it for each morsel, so
 * that each worker's table stays about one morsel's size. */
#define PAR_KEEP_MAX 65536

typedef struct par_worker {
  ex_run run;          /* copy of the run: own error, scratch, budget */
  ex_seg seg;          /* copy of the segment, run = &run */
  rt_batch b;
  rt_aggtab local;     /* the morsel's table */
  bool has_local;
  rt_aggfold keep;     /* local is kept across morsels (aggmerge.h rt_aggkeep_on) */
  bool kept;
  rt_aggsplit split;   /* its groups by partition (partitioned merge) */
  rt_rowbuf lbuf;      /* the morsel's buffer, or a window into the segment's */
  bool has_lbuf;
  rt_topk topk;        /* a top k's state, kept across the worker's morsels */
  bool has_topk;
  void **wdata;        /* the window's column pointers */
  uint64_t **wvalid;
  int64_t rows;
  int64_t lim;         /* the rows of the source, as far as known when the morsel was taken */
  rt_jointab **joins;  /* the run's join tables, as copies of its own */
  rt_jointab *jcopy;
} par_worker;

typedef struct par_job {
  ex_run *run;
  ex_seg *s;
  const ex_par_src *src;
  ex_pick_fn pick;
  void *ctx;
  pthread_mutex_t mu;  /* guards the fields below and calls of pick */
  pthread_cond_t cv;   /* merged or failed moved */
  int64_t nmorsels;
  int64_t next;        /* the next morsel to take */
  int64_t merged;      /* morsels merged into the segment's sink */
  int64_t failed;      /* the earliest failed morsel (INT64_MAX: none) */
  int64_t lim;         /* the source's rows: nrows, or as far as known (src->more) */
  bool window;         /* buffer sinks: append in place (see the banner) */
  bool decided;        /* AGGREGATE: morsel 0's owner chose the merge */
  rt_aggpart *part;    /* the partitioned merge, or NULL */
  rt_topk bound;       /* a top k: the bound the merges published (no rows) */
  rt_err err;          /* its error */
  par_worker *w;
} par_job;

/* The segment's top k state (driver.c ex_topk_open), or NULL. */
static rt_topk *par_topk(const par_job *job) {
  ex_topk *t = job->run->topks[job->s->index];
  return t ? &t->t : NULL;
}

static int par_fail(par_worker *w, int pos, const char *stage, const char *msg) {
  memset(&w->run.err, 0, sizeof w->run.err);
  rt_errorf(&w->run.err, pos, "%s: %s", stage ? stage : "RUN", msg);
  return -1;
}

/* ---- join tables ---------------------------------------------------------- */

/* Both backends reach a JOIN's table through the run (ex_join_tab,
 * cg_rt_join_tab), and the JIT keeps caches in it, made on first use
 * (runtime/jointab.h): the chain head per row of an earlier relation
 * (memo) and the AGGREGATE group per relation row (gcache). A worker's
 * run points at copies of the tables whose caches are its own; the
 * group cache names groups of the morsel's own table, so it is emptied
 * at every morsel. */
static bool par_joins_init(par_worker *w, const ex_run *run) {
  int n = run->plan->nops;
  bool any = false;
  for (int i = 0; run->joins && i < n; i++) any |= run->joins[i] != NULL;
  if (!any) return true;
  w->joins = calloc((size_t)n + 1, sizeof *w->joins);
  w->jcopy = calloc((size_t)n + 1, sizeof *w->jcopy);
  if (!w->joins || !w->jcopy) return false;
  for (int i = 0; i < n; i++)
    if (run->joins[i]) {
      w->jcopy[i] = *run->joins[i];
      w->jcopy[i].gcache = NULL;
      w->jcopy[i].memo = NULL;
      w->joins[i] = &w->jcopy[i];
    }
  w->run.joins = w->joins;
  return true;
}

static void par_joins_morsel(par_worker *w, const ex_run *run) {
  for (int i = 0; w->jcopy && i < run->plan->nops; i++)
    if (w->jcopy[i].gcache) memset(w->jcopy[i].gcache, 0xff, sizeof(int64_t) * ((size_t)w->jcopy[i].nrows + 1));
}

static void par_joins_free(par_worker *w, const ex_run *run) {
  for (int i = 0; w->jcopy && i < run->plan->nops; i++) {
    rt_mem_free(w->jcopy[i].gcache);
    rt_mem_free(w->jcopy[i].memo);
  }
  free(w->joins);
  free(w->jcopy);
  w->joins = NULL;
  w->jcopy = NULL;
}

/* Runs morsel m's batches into the worker's own sink. */
static int par_morsel(par_job *job, par_worker *w, int wid, int64_t m) {
  ex_run *run = job->run;
  const ir_op *sink = job->s->seg->sink;
  const ex_par_src *src = job->src;
  int64_t rows = src->batch_rows;
  int64_t start = m * ex_morsel_batches(run) * rows, end = start + ex_morsel_batches(run) * rows;
  if (src->bounds) start = src->bounds[m], end = src->bounds[m + 1];
  if (end > w->lim) end = w->lim;
  par_joins_morsel(w, run);
  if (sink->kind == IR_AGGREGATE) {
    /* the worker's table of its last morsel: kept with its groups while
     * they are few, else emptied (rt_aggtab_reset) */
    if (w->kept && w->local.ngroups > PAR_KEEP_MAX) {
      rt_aggkeep_off(&w->keep, &w->local);
      w->kept = false;
    }
    if (w->kept) rt_aggkeep_morsel(&w->keep, &w->local);
    else if (w->has_local) rt_aggtab_reset(&w->local);
    else if (!rt_aggtab_init_like(&w->local, job->s->agg)) return par_fail(w, -1, sink->stage, "out of memory");
    w->has_local = true;
    w->seg.agg = &w->local;
  } else if (job->window) {
    /* rows start.. of the segment's buffer, exactly as many as the morsel */
    const rt_rowbuf *big = job->s->buf;
    for (int c = 0; c < big->ncols; c++) {
      w->wdata[c] = (char *)big->data[c] + (size_t)start * rt_type_size(big->types[c]);
      w->wvalid[c] = big->valid[c] + start / 64;
    }
    w->lbuf = (rt_rowbuf){.ncols = big->ncols, .types = big->types, .nrows = 0, .cap = end - start,
                          .data = w->wdata, .valid = w->wvalid};
    w->seg.buf = &w->lbuf;
  } else {
    /* a top k's buffer is emptied after each merge and kept */
    if (!w->has_lbuf && !rt_rowbuf_init(&w->lbuf, job->s->buf->ncols, job->s->buf->types))
      return par_fail(w, -1, sink->stage, "out of memory");
    w->has_lbuf = true;
    w->seg.buf = &w->lbuf;
  }
  for (int64_t at = start, n = 0; at < end; at += n) {
    n = ex_par_batch_len(src, at, end);
    src->load(src->src, wid, at, (uint32_t)n, &w->b);
    if (run->interrupt && __atomic_load_n(run->interrupt, __ATOMIC_RELAXED)) {
      memset(&w->run.err, 0, sizeof w->run.err);
      rt_errorf(&w->run.err, -1, "interrupted");
      return -1;
    }
    if (src->count_in) w->rows += n;
    w->b.n = w->b.nactive = (uint32_t)n;
    w->b.active = NULL;
    /* a top k with a bound: only the rows before it go in */
    if (w->has_topk && ex_topk_batch(job->run->topks[job->s->index], &w->topk, &w->b) == 0) continue;
    if (w->kept && !rt_aggkeep_room(&w->keep, &w->local, n)) return par_fail(w, -1, sink->stage, "out of memory");
    pthread_mutex_lock(&job->mu);
    ex_batch_fn fn = job->pick(job->ctx, job->s->index);
    pthread_mutex_unlock(&job->mu);
    if (!fn) return par_fail(w, -1, sink->stage, "no backend runs this segment");
    int64_t before = w->lbuf.nrows;
    int rc = fn(&w->seg, &w->b);
    if (w->run.budget.oom) return par_fail(w, -1, sink->stage, "out of memory");
    if (rc < 0 || w->run.err.set) {
      if (!w->run.err.set) par_fail(w, -1, sink->stage, "the batch failed");
      return -1;
    }
    if (w->has_topk && rt_topk_add(&w->topk, &w->lbuf, before) < 0)
      return par_fail(w, -1, sink->stage, "out of memory");
  }
  return 0;
}

/* Merges the worker's morsel sink into the segment's (its turn). After
 * its first merge into one table a worker keeps its table of few groups
 * for its next morsels (aggmerge.h rt_aggkeep_on): the groups are then
 * inserted once per worker, not once per morsel, and found in the
 * segment's table once. Without memory for that it empties its table as
 * before. */
static int par_merge(par_job *job, par_worker *w) {
  const ir_op *sink = job->s->seg->sink;
  if (sink->kind == IR_AGGREGATE) {
    int rc = w->kept ? rt_aggkeep_merge(job->s->agg, &w->local, &w->keep) : rt_aggtab_merge(job->s->agg, &w->local);
    if (rc == RT_AGGMERGE_OVERFLOW) return par_fail(w, sink->pos, sink->stage, "integer overflow");
    if (rc) return par_fail(w, -1, sink->stage, "out of memory");
    if (!w->kept && w->local.nkeys > 0 && w->local.ngroups <= PAR_KEEP_MAX)
      w->kept = rt_aggkeep_on(&w->keep, &w->local);
  } else if (!job->window) {
    /* the morsel's rows after the segment's, a batch at a time (views
     * start at multiples of 64 rows, as rt_rowbuf_view needs) */
    rt_rowbuf *dst = job->s->buf;
    const rt_rowbuf *src = &w->lbuf;
    rt_view views[src->ncols > 0 ? src->ncols : 1];
    int64_t first = dst->nrows;
    for (int64_t at = 0; at < src->nrows; at += RT_BATCH) {
      uint32_t n = src->nrows - at < RT_BATCH ? (uint32_t)(src->nrows - at) : RT_BATCH;
      for (int c = 0; c < src->ncols; c++) rt_rowbuf_view(src, c, at, NULL, &views[c]);
      int64_t before = dst->nrows;
      rt_rowbuf_append_views(dst, views, NULL, n);
      if (dst->nrows != before + n || w->run.budget.oom) return par_fail(w, -1, sink->stage, "out of memory");
    }
    /* a top k: the morsel's survivors against the segment's bound */
    if (par_topk(job) && rt_topk_add(par_topk(job), dst, first) < 0)
      return par_fail(w, -1, sink->stage, "out of memory");
  }
  return 0;
}

/* AGGREGATE (job->mu held): whether morsel m merges by partition. Morsel
 * 0's owner decides, from its table, before anything merges; the others
 * wait for that (or for an earlier morsel's failure). */
static bool par_agg_parts(par_job *job, par_worker *w, int64_t m) {
  if (m == 0 && !job->decided) {
    rt_aggpart *pt = NULL;
    int64_t rows = ex_morsel_batches(job->run) * job->src->batch_rows;
    if (job->nmorsels > 1 && job->s->agg->ngroups == 0 && rt_aggpart_wanted(&w->local, rows) &&
        (pt = malloc(sizeof *pt)) && !rt_aggpart_init(pt, job->s->agg, job->run->threads, job->nmorsels)) {
      free(pt);   /* out of memory: the one-table merge needs none of it */
      pt = NULL;
    }
    job->part = pt;
    job->decided = true;
    pthread_cond_broadcast(&job->cv);
  }
  while (!job->decided && job->failed > m) pthread_cond_wait(&job->cv, &job->mu);
  return job->part != NULL;
}

/* Merges morsel m's table partition by partition (job->mu held, as on
 * return): any partition whose turn it is (it merged morsel m - 1),
 * until all are done or an earlier morsel failed. -1 on failure. */
static int par_merge_parts(par_job *job, par_worker *w, int64_t m) {
  rt_aggpart *pt = job->part;
  const ir_op *sink = job->s->seg->sink;
  pthread_mutex_unlock(&job->mu);
  bool split = rt_aggpart_split(pt, &w->local, m, &w->split);
  pthread_mutex_lock(&job->mu);
  if (!split) return par_fail(w, -1, sink->stage, "out of memory");
  uint64_t done = 0;
  for (int left = pt->nparts; left > 0 && job->failed > m;) {
    int p = 0;
    while (p < pt->nparts && ((done >> p & 1) || pt->next[p] != m)) p++;
    if (p == pt->nparts) {
      pthread_cond_wait(&job->cv, &job->mu);
      continue;
    }
    pthread_mutex_unlock(&job->mu);
    int rc = rt_aggpart_merge(pt, p, &w->local, &w->split, m);
    pthread_mutex_lock(&job->mu);
    if (rc == RT_AGGMERGE_OVERFLOW) return par_fail(w, sink->pos, sink->stage, "integer overflow");
    if (rc) return par_fail(w, -1, sink->stage, "out of memory");
    pt->next[p] = m + 1;
    done |= 1ull << p;
    left--;
    pthread_cond_broadcast(&job->cv);
  }
  return 0;
}

/* Drops the morsel's sink: a buffer is freed (a top k's emptied and
 * kept), a table kept for the worker's next morsel (par_morsel empties
 * it) unless `all`. */
static void par_drop_local(par_worker *w, bool all) {
  if (w->kept && all) rt_aggkeep_off(&w->keep, &w->local);
  w->kept = w->kept && !all;
  if (w->has_local && all) rt_aggtab_free(&w->local);
  bool keep = w->has_lbuf && w->has_topk && !all;
  if (keep) rt_rowbuf_clear(&w->lbuf);
  else if (w->has_lbuf) rt_rowbuf_free(&w->lbuf);
  w->has_local = w->has_local && !all;
  w->has_lbuf = keep;
  w->seg.agg = NULL;
  w->seg.buf = NULL;
}

/* Records that morsel m failed with w's error (the earliest wins). */
static void par_failed(par_job *job, par_worker *w, int64_t m) {
  if (m < job->failed) {
    job->failed = m;
    job->err = w->run.err;
  }
  pthread_cond_broadcast(&job->cv);
}

/* A source made while served (job->mu held, as on return): whether
 * morsel job->next is ready to take. If not, the worker makes rows (the
 * lock dropped) or, with nothing left to make, waits for another worker's;
 * when the source is complete and the morsel lies past its end, no
 * morsel is left (nmorsels set). A caller that gets false loops. */
static bool par_ready(par_job *job, int wid) {
  const ex_par_src *src = job->src;
  int64_t mrows = ex_morsel_batches(job->run) * src->batch_rows, at = job->next * mrows;
  bool complete = false;
  int64_t avail = src->avail(src->src, &complete);
  if (complete) {
    job->lim = avail;
    if (at >= avail) job->nmorsels = job->next;
    return at < avail;
  }
  if (avail >= at + mrows) return true;
  pthread_mutex_unlock(&job->mu);
  int made = src->more(src->src, wid);
  pthread_mutex_lock(&job->mu);
  if (made) {
    pthread_cond_broadcast(&job->cv);   /* rows, or the end, for a waiting worker */
    return false;
  }
  /* Another worker makes the rest: wait for its rows. Its broadcast
   * takes job->mu, so it cannot fall between this look and the wait. */
  avail = src->avail(src->src, &complete);
  if (!complete && avail < at + mrows && job->next < job->failed) pthread_cond_wait(&job->cv, &job->mu);
  return false;
}

static void par_work(void *ctx, int wid) {
  par_job *job = ctx;
  par_worker *w = &job->w[wid];
  const ir_op *sink = job->s->seg->sink;
  /* The worker's run: the caller's, with an error, scratch and budget of
   * its own (the budget only counts: runs with a limit use one thread). */
  memcpy(&w->run, job->run, sizeof w->run);
  memset(&w->run.err, 0, sizeof w->run.err);
  memset(&w->run.budget, 0, sizeof w->run.budget);
  rt_arena_init(&w->run.arena);
  w->run.seg_free = NULL;
  w->seg = *job->s;
  w->seg.run = &w->run;
  w->seg.vm = NULL;
  w->seg.agg = NULL;
  w->seg.buf = NULL;
  w->b.ncols = job->run->plan->ncols;
  w->b.cols = calloc((size_t)w->b.ncols + 1, sizeof *w->b.cols);
  int nbc = job->s->buf ? job->s->buf->ncols : 0;
  w->wdata = calloc((size_t)nbc + 1, sizeof *w->wdata);
  w->wvalid = calloc((size_t)nbc + 1, sizeof *w->wvalid);
  rt_budget *prev_budget = rt_budget_use(&w->run.budget);
  const rt_topk *tk = par_topk(job);
  w->has_topk = tk && rt_topk_init(&w->topk, tk->k, tk->nkeys, tk->keys, job->s->buf->types, tk->sp);
  if (!w->wdata || !w->wvalid || !par_joins_init(w, job->run) || (tk && !w->has_topk)) {
    free(w->b.cols);
    w->b.cols = NULL;   /* every morsel then fails: out of memory */
  }
  const char *prev_owner = rt_budget_owner(sink->stage);
  pthread_mutex_lock(&job->mu);
  while (job->next < job->nmorsels && job->next < job->failed) {
    if (job->src->more && !par_ready(job, wid)) continue;
    int64_t m = job->next++;
    w->lim = job->lim;
    if (w->has_topk) rt_topk_take_bound(&w->topk, &job->bound);
    pthread_mutex_unlock(&job->mu);
    int rc = w->b.cols ? par_morsel(job, w, wid, m) : par_fail(w, -1, sink->stage, "out of memory");
    if (job->src->done) {
      int64_t mrows = ex_morsel_batches(job->run) * job->src->batch_rows, at = m * mrows;
      job->src->done(job->src->src, at, (w->lim - at < mrows ? w->lim - at : mrows));
    }
    pthread_mutex_lock(&job->mu);
    if (rc < 0) {
      par_failed(job, w, m);
      par_drop_local(w, false);
      continue;
    }
    if (sink->kind == IR_AGGREGATE && par_agg_parts(job, w, m)) {
      if (par_merge_parts(job, w, m) < 0) par_failed(job, w, m);
      par_drop_local(w, false);
      continue;
    }
    while (job->merged != m && job->failed > m) pthread_cond_wait(&job->cv, &job->mu);
    if (job->failed > m) {
      pthread_mutex_unlock(&job->mu);
      rc = par_merge(job, w);   /* alone: only morsel m's owner gets here */
      pthread_mutex_lock(&job->mu);
      if (rc < 0) par_failed(job, w, m);
      else job->merged = m + 1;
      if (rc == 0 && par_topk(job)) rt_topk_take_bound(&job->bound, par_topk(job));
      pthread_cond_broadcast(&job->cv);
    }
    par_drop_local(w, false);
  }
  pthread_mutex_unlock(&job->mu);
  par_drop_local(w, true);
  if (w->has_topk) rt_topk_free(&w->topk);
  rt_budget_use(prev_budget);
  rt_budget_owner(prev_owner);
  if (w->run.seg_free) w->run.seg_free(&w->seg);
  par_joins_free(w, job->run);
  rt_aggsplit_free(&w->split);
  free(w->b.cols);
  free(w->wdata);
  free(w->wvalid);
  rt_arena_free(&w->run.arena);
}

int ex_par_rows(ex_run *run, ex_seg *s, const ex_par_src *src, ex_pick_fn pick, void *ctx) {
  int64_t morsel = ex_morsel_batches(run) * src->batch_rows;
  par_job job = {.run = run, .s = s, .src = src, .pick = pick, .ctx = ctx, .failed = INT64_MAX};
  job.nmorsels = src->bounds ? src->nbounds : (src->nrows + morsel - 1) / morsel;
  job.lim = src->more ? INT64_MAX : src->nrows;
  rt_rowbuf *buf = s->seg->sink->kind == IR_AGGREGATE ? NULL : s->buf;
  const rt_topk *tk = run->topks[s->index] ? &run->topks[s->index]->t : NULL;
  if (tk && !rt_topk_init(&job.bound, tk->k, tk->nkeys, tk->keys, buf->types, tk->sp)) {
    rt_errorf(&run->err, -1, "%s: out of memory", s->seg->sink->stage);
    return -1;
  }
  /* windows need morsels that start at multiples of 64 rows */
  if (buf && buf->nrows == 0 && !src->more && par_all_rows(s->seg) && !src->bounds && !tk) {
    rt_rowbuf_reserve(buf, src->nrows);
    job.window = buf->cap >= src->nrows;   /* else out of memory: copy instead */
  }
  int nw = run->threads < job.nmorsels ? run->threads : (int)job.nmorsels;
  if (nw < 1) nw = 1;
  job.w = calloc((size_t)nw, sizeof *job.w);
  if (!job.w) {
    rt_topk_free(&job.bound);
    rt_errorf(&run->err, -1, "%s: out of memory", s->seg->sink->stage);
    return -1;
  }
  pthread_mutex_init(&job.mu, NULL);
  pthread_cond_init(&job.cv, NULL);
  int ran = ex_pool_run(run->pool, nw, par_work, &job);
  if (ran > run->threads_used) run->threads_used = ran;
  int64_t held = run->budget.used;
  for (int i = 0; i < ran; i++) {
    run->rows_in += job.w[i].rows;
    held += job.w[i].run.budget.peak;   /* what the workers held at most, at once at worst */
  }
  if (held > run->budget.peak) run->budget.peak = held;
  pthread_cond_destroy(&job.cv);
  pthread_mutex_destroy(&job.mu);
  free(job.w);
  rt_topk_free(&job.bound);
  if (job.part && job.failed == INT64_MAX) {
    run->aggparts[s->index] = job.part;   /* the sink's finish writes them out (ex_par_agg_emit) */
  } else if (job.part) {
    rt_aggpart_free(job.part);
    free(job.part);
  }
  if (job.failed != INT64_MAX) {
    run->err = job.err;
    return -1;
  }
  if (job.window) buf->nrows = src->nrows;   /* every morsel filled its window */
  return 0;
}

int ex_par_agg_emit(ex_run *run, int si, rt_rowbuf *out, int64_t *ngroups) {
  rt_par par = {ex_par_runner, run->pool, run->threads};
  *ngroups = rt_aggpart_groups(run->aggparts[si]);
  int rc = rt_aggpart_emit(run->aggparts[si], out, &par);
  ex_par_agg_drop(run, si);
  return rc;
}

void ex_par_agg_drop(ex_run *run, int si) {
  if (!run->aggparts[si]) return;
  rt_aggpart_free(run->aggparts[si]);
  free(run->aggparts[si]);
  run->aggparts[si] = NULL;
}

/* A table scan's rows: views of the scanned columns. */
static void par_table_load(void *p, int worker, int64_t at, uint32_t n, rt_batch *b) {
  (void)worker, (void)n;
  const ir_op *src = p;
  for (int i = 0; i < src->scan.nscan; i++)
    rt_table_view(src->scan.table, src->scan.table_cols[i], at, &b->cols[src->scan.out_cols[i]]);
}

int ex_par_scan(ex_run *run, ex_seg *s, ex_pick_fn pick, void *ctx) {
  const ir_op *src = s->seg->source;
  ex_par_src ps = {.nrows = src->scan.table->nrows, .batch_rows = ex_batch_rows(run), .count_in = true,
                   .load = par_table_load, .src = (void *)src};
  return ex_par_rows(run, s, &ps, pick, ctx);
}
