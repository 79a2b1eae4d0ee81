/*
 * adaptive.c — the engine's background compile thread, its jobs, the
 * compile cache, and the per-batch backend picker of mode auto.
 *
 * A job goes QUEUED → BUILDING (the thread emits the IR: the only time it
 * reads the plan) → COMPILING (LLVM passes, code generation, linking: the
 * long part, cancellable between steps) → DONE. Lifetimes: a job has two
 * references, its handle's and the thread's (taken when queued), counted
 * under the mutex; the last one frees it. The handle lets go with
 * ex_job_release, which waits only while the job is BUILDING, so freeing
 * the plan afterwards is safe and the caller never waits for LLVM's
 * optimizer or code generator.
 *
 * Cancelling. A job whose handle lets go before the thread took it is
 * dropped. One the thread has begun is finished and cached: its cost is
 * mostly sunk by then (the IR is emitted, the passes run), and the same
 * pipeline is likely to run again (a script run twice, a dashboard, a
 * benchmark loop), when it hits the cache instead of compiling from the
 * start. Closing the engine cancels the running job at its next step
 * (the backend's compile_end checks between verify, passes, code generation and
 * linking). A new job for a key being compiled shares the running job.
 *
 * The ex_compiler the thread compiles with is the
 * engine's, which outlives the thread (ex_adapt_free joins it before the
 * engine frees its JIT).
 *
 * Handing over the code: the thread publishes the finished module with a
 * release store into job->ready; the picker reads it with an acquire load
 * before every batch, so everything the compile wrote (the function
 * table, the linked code) is visible to the thread that runs it.
 *
 * The cache is a small array searched linearly (64 entries: a lookup
 * costs less than a microsecond next to a compile of milliseconds), with
 * least-recently-used eviction.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "adaptive.h"
#include "pool.h"

enum { JOB_QUEUED, JOB_BUILDING, JOB_COMPILING, JOB_DONE };

/* Nice value of the compile thread (see ex_worker_lower_priority). */
#define EX_COMPILE_NICE 10

struct ex_job {
  ex_adapt *a;
  int refs;                    /* under a->mu */
  int state;                   /* under a->mu */
  atomic_int cancel;
  _Atomic(ex_code *) ready;  /* the module, published when compiled */
  const ir_plan *plan;         /* under a->mu; NULL once not needed */
  ex_compiler *jit;            /* the backend's compiler */
  int opt_level;
  char *key;
  ex_code *mod;              /* the job's reference to its result */
  rt_err err;
  int64_t compile_ns;
  ex_job *next;                /* queue */
};

typedef struct ex_centry {
  char *key;
  uint64_t hash;
  ex_code *m;
  uint64_t used;               /* tick of the last hit, for LRU */
} ex_centry;

struct ex_adapt {
  const ex_backend *b;         /* compiles jobs, owns cached codes */
  pthread_mutex_t mu;
  pthread_cond_t cv;           /* any job's state changed, queue changed */
  pthread_t thread;
  bool started, stop;
  int hold;
  ex_job *head, *tail;
  ex_job *running;             /* BUILDING or COMPILING */
  ex_centry *cache;
  int ncache, cap;
  uint64_t tick;
  uint64_t generation;         /* modules added so far */
  ex_adapt_stats st;
};

/* ---- the cache (callers hold a->mu) ----------------------------------------- */

static uint64_t ex_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;   /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static void ex_cache_drop(ex_adapt *a, int i) {
  free(a->cache[i].key);
  a->b->release(a->cache[i].m);
  a->cache[i] = a->cache[--a->ncache];
}

static void ex_cache_trim(ex_adapt *a, int keep) {
  while (a->ncache > keep) {
    int lru = 0;
    for (int i = 1; i < a->ncache; i++)
      if (a->cache[i].used < a->cache[lru].used) lru = i;
    ex_cache_drop(a, lru);
    a->st.evictions++;
  }
}

static int ex_cache_find(ex_adapt *a, const char *key, uint64_t h) {
  for (int i = 0; i < a->ncache; i++)
    if (a->cache[i].hash == h && !strcmp(a->cache[i].key, key)) return i;
  return -1;
}

static void ex_cache_put_locked(ex_adapt *a, const char *key, ex_code *m) {
  if (!key || !m || a->cap <= 0) return;
  uint64_t h = ex_hash(key);
  if (ex_cache_find(a, key, h) >= 0) return;
  ex_cache_trim(a, a->cap - 1);
  char *k = strdup(key);
  if (!k) return;
  a->cache[a->ncache++] = (ex_centry){k, h, a->b->ref(m), ++a->tick};
  a->generation++;
}

uint64_t ex_cache_generation(ex_adapt *a) {
  pthread_mutex_lock(&a->mu);
  uint64_t g = a->generation;
  pthread_mutex_unlock(&a->mu);
  return g;
}

ex_code *ex_cache_get(ex_adapt *a, const char *key) {
  if (!key) return NULL;
  uint64_t h = ex_hash(key);
  pthread_mutex_lock(&a->mu);
  int i = ex_cache_find(a, key, h);
  ex_code *m = NULL;
  if (i >= 0) {
    a->cache[i].used = ++a->tick;
    m = a->b->ref(a->cache[i].m);
    a->st.hits++;
  } else {
    a->st.misses++;
  }
  pthread_mutex_unlock(&a->mu);
  return m;
}

void ex_cache_put(ex_adapt *a, const char *key, ex_code *m) {
  pthread_mutex_lock(&a->mu);
  ex_cache_put_locked(a, key, m);
  pthread_mutex_unlock(&a->mu);
}

void ex_cache_set_cap(ex_adapt *a, int cap) {
  if (cap < 0) cap = 0;
  if (cap > EX_CACHE_CAP) cap = EX_CACHE_CAP;   /* the array's size */
  pthread_mutex_lock(&a->mu);
  a->cap = cap;
  ex_cache_trim(a, cap);
  pthread_mutex_unlock(&a->mu);
}

char *ex_cache_key(const char *text, size_t len, const ir_plan *p, const char *plan_text,
                   int opt_level, const char *passes) {
  rt_buf b = {0};
  rt_buf_printf(&b, "opt %d [%s]\nparams", opt_level, passes ? passes : "");
  for (int i = 0; i < p->nparams; i++) rt_buf_printf(&b, " %d", (int)p->params[i].type);
  for (int i = 0; i < p->nops; i++) {
    const ir_op *op = p->ops[i];
    if (op->dead || op->kind != IR_SCAN_TABLE || !op->scan.table) continue;
    rt_buf_printf(&b, "\ntable %s:", op->scan.table_name ? op->scan.table_name : "");
    for (int c = 0; c < op->scan.nscan; c++) {
      const rt_column *col = &op->scan.table->cols[op->scan.table_cols[c]];
      rt_buf_printf(&b, " %d%s%s", (int)col->type, col->valid ? "n" : "", col->sorted ? "s" : "");
    }
  }
  rt_buf_printf(&b, "\ntext ");
  rt_buf_append(&b, text, len);
  rt_buf_printf(&b, "\nplan %s", plan_text ? plan_text : "");
  rt_buf_append(&b, "", 1);
  return b.data;   /* the buffer's bytes, NUL-terminated (NULL if never grown) */
}

/* ---- jobs -------------------------------------------------------------------- */

static void ex_job_unref_locked(ex_job *j) {
  if (--j->refs > 0) return;
  j->a->b->release(j->mod);
  free(j->key);
  free(j);
}

/* One job on the compile thread; called and returns with a->mu held. */
static void ex_run_job(ex_adapt *a, ex_job *j) {
  if (atomic_load_explicit(&j->cancel, memory_order_relaxed)) {
    j->state = JOB_DONE;
    a->st.cancelled++;
    return;
  }
  j->state = JOB_BUILDING;
  a->running = j;
  pthread_mutex_unlock(&a->mu);

  rt_err err = {.offset = -1};
  /* the plan belongs to the handle, which may free it once this returns */
  ex_code *m = a->b->compile_begin(j->jit, j->plan, j->opt_level, &err);
  pthread_mutex_lock(&a->mu);
  j->plan = NULL;
  j->state = JOB_COMPILING;
  pthread_cond_broadcast(&a->cv);
  pthread_mutex_unlock(&a->mu);

  int ok = m && a->b->compile_end(m, &j->cancel, &err);

  pthread_mutex_lock(&a->mu);
  if (ok) {
    j->mod = m;
    j->compile_ns = a->b->compile_ns(m);
    ex_cache_put_locked(a, j->key, m);
    atomic_store_explicit(&j->ready, m, memory_order_release);
    a->st.compiled++;
  } else {
    a->b->release(m);
    if (!err.set) rt_errorf(&err, -1, "JIT: compilation failed");
    j->err = err;
    if (atomic_load_explicit(&j->cancel, memory_order_relaxed)) a->st.cancelled++;
    else a->st.failed++;
  }
  j->state = JOB_DONE;
  a->running = NULL;
}

/* The compile should use a core nobody else wants: when the cores are
 * busy, the interpreter (which is doing the query's work) keeps its full
 * speed and the compile waits, rather than both going at half speed. On
 * Linux a thread has its own nice value. */
static void ex_worker_lower_priority(void) {
#ifdef __linux__
  (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), EX_COMPILE_NICE);
#endif
}

static void *ex_worker(void *arg) {
  ex_adapt *a = arg;
  ex_worker_lower_priority();
  pthread_mutex_lock(&a->mu);
  for (;;) {
    while (!a->stop && (!a->head || a->hold)) pthread_cond_wait(&a->cv, &a->mu);
    if (a->stop) break;
    ex_job *j = a->head;
    a->head = j->next;
    if (!a->head) a->tail = NULL;
    j->next = NULL;
    ex_run_job(a, j);
    ex_job_unref_locked(j);
    pthread_cond_broadcast(&a->cv);
  }
  pthread_mutex_unlock(&a->mu);
  return NULL;
}

ex_job *ex_job_submit(ex_adapt *a, ex_compiler *jit, const ir_plan *p, int opt_level,
                      const char *key) {
  ex_job *j = calloc(1, sizeof *j);
  if (!j) return NULL;
  j->a = a;
  j->refs = 2;   /* the caller's and the queue's (the thread's) */
  j->state = JOB_QUEUED;
  atomic_init(&j->cancel, 0);
  atomic_init(&j->ready, NULL);
  j->plan = p;
  j->jit = jit;
  j->opt_level = opt_level;
  j->key = key ? strdup(key) : NULL;
  pthread_mutex_lock(&a->mu);
  /* The same code is being compiled already (for another handle of the
   * same text, say): share that job. Only once it no longer reads its
   * plan, which belongs to the other handle. */
  ex_job *r = a->running;
  if (key && r && r->state == JOB_COMPILING && r->key && !strcmp(r->key, key) &&
      !atomic_load_explicit(&r->cancel, memory_order_relaxed)) {
    r->refs++;
    pthread_mutex_unlock(&a->mu);
    free(j->key);
    free(j);
    return r;
  }
  if (!a->started) {
    if (ex_thread_start(&a->thread, ex_worker, a) != 0) {
      pthread_mutex_unlock(&a->mu);
      free(j->key);
      free(j);
      return NULL;
    }
    a->started = true;
  }
  if (a->tail) a->tail->next = j;
  else a->head = j;
  a->tail = j;
  a->st.submitted++;
  pthread_cond_broadcast(&a->cv);
  pthread_mutex_unlock(&a->mu);
  return j;
}

ex_code *ex_job_ready(ex_job *j) {
  return j ? atomic_load_explicit(&j->ready, memory_order_acquire) : NULL;
}

int64_t ex_job_compile_ns(const ex_job *j) {
  /* written before the release store of ready */
  return ex_job_ready((ex_job *)j) ? j->compile_ns : 0;
}

ex_code *ex_job_wait(ex_job *j, rt_err *err) {
  ex_adapt *a = j->a;
  pthread_mutex_lock(&a->mu);
  while (j->state != JOB_DONE) pthread_cond_wait(&a->cv, &a->mu);
  ex_code *m = a->b->ref(j->mod);
  if (!m) *err = j->err;
  pthread_mutex_unlock(&a->mu);
  return m;
}

void ex_job_release(ex_job *j) {
  if (!j) return;
  ex_adapt *a = j->a;
  pthread_mutex_lock(&a->mu);
  /* Work not begun is dropped; work begun is finished for the cache (see
   * the banner). Either way the plan is not read after this. */
  if (j->state == JOB_QUEUED) atomic_store_explicit(&j->cancel, 1, memory_order_relaxed);
  while (j->state == JOB_BUILDING) pthread_cond_wait(&a->cv, &a->mu);
  j->plan = NULL;
  ex_job_unref_locked(j);
  pthread_mutex_unlock(&a->mu);
}

/* ---- the engine's state ------------------------------------------------------ */

ex_adapt *ex_adapt_new(const ex_backend *b) {
  ex_adapt *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  a->cache = calloc(EX_CACHE_CAP, sizeof *a->cache);
  if (!a->cache) {
    free(a);
    return NULL;
  }
  a->cap = EX_CACHE_CAP;
  a->b = b;
  pthread_mutex_init(&a->mu, NULL);
  pthread_cond_init(&a->cv, NULL);
  return a;
}

void ex_adapt_free(ex_adapt *a) {
  if (!a) return;
  pthread_mutex_lock(&a->mu);
  a->stop = true;
  while (a->head) {
    ex_job *j = a->head;
    a->head = j->next;
    atomic_store_explicit(&j->cancel, 1, memory_order_relaxed);
    j->state = JOB_DONE;
    a->st.cancelled++;
    ex_job_unref_locked(j);
  }
  a->tail = NULL;
  if (a->running) atomic_store_explicit(&a->running->cancel, 1, memory_order_relaxed);
  pthread_cond_broadcast(&a->cv);
  pthread_mutex_unlock(&a->mu);
  if (a->started) pthread_join(a->thread, NULL);
  while (a->ncache > 0) ex_cache_drop(a, a->ncache - 1);
  free(a->cache);
  pthread_cond_destroy(&a->cv);
  pthread_mutex_destroy(&a->mu);
  free(a);
}

/* ---- the picker -------------------------------------------------------------- */

/* Judging (pk->judge). Compiled code is not always faster: for some
 * plans (a tree accumulation over shuffled ids, say) the time goes into
 * runtime calls both backends make alike, and the compiled loop only adds
 * its own overheads. So, per segment, the picker times batches and keeps
 * the faster backend for the rest of the run:
 *
 *  - The time between two picks is the cost of the batch picked first
 *    (plus the driver's reading of the next batch, the same for both
 *    backends). It is charged to that batch's segment and backend, except
 *    the interval that ends at a segment's first pick (it holds the end
 *    of the previous segment: sorting, emitting groups) and the
 *    segment's first batch and first compiled batch (cold caches, code
 *    pages touched for the first time).
 *  - Once the code is ready, a segment runs compiled until it has
 *    EX_PROBE_BATCHES measured compiled batches, then the interpreter
 *    until it has as many interpreted ones (usually it has them already:
 *    the batches run while the compile went on).
 *  - Then it decides, once: compiled code, unless its mean batch time is
 *    more than EX_SLOWER_PCT percent above the interpreter's, in which
 *    case the segment goes back to the interpreter for the rest of the
 *    run. No re-probe: a segment is a few hundred batches at most
 *    (8192 rows each) and both backends share the same runtime state, so
 *    their relative cost does not drift much within one.
 *
 * Both backends give the same results batch by batch, so the choice never
 * changes a result. A segment that ends before it decides simply ran the
 * mix. Runs that start with code (cached, or the handle's) do not judge:
 * they have no interpreted baseline and measuring one would cost batches
 * of the interpreter in the common case where compiled code wins. */
static int64_t ex_pick_now(ex_picker *pk) {
  return pk->clock ? pk->clock(pk->clock_ctx) : rt_now_ns();
}

/* Charges the interval since the previous pick; seg is picked now. */
static void ex_pick_measure(ex_picker *pk, int seg, int64_t now) {
  if (pk->batches > 0 && pk->last_seg >= 0 && pk->last_seg < EX_PICK_SEGS) {
    ex_segcost *c = &pk->cost[pk->last_seg];
    int b = pk->last_jit;
    /* the interval ending a segment, and first batches, are not clean */
    bool clean = seg >= EX_PICK_SEGS || pk->cost[seg].seen;
    if (clean && c->ran[0] + c->ran[1] > 1 && c->ran[b] > (b ? 1 : 0)) {
      c->ns[b] += now - pk->last_ns;
      c->n[b]++;
    }
  }
  pk->last_ns = now;
}

/* The backend for a judged segment's next batch (1 compiled). */
static int ex_pick_judged(ex_picker *pk, ex_segcost *c) {
  if (c->decided) return c->decided == 2;
  if (c->n[1] < EX_PROBE_BATCHES) return 1;
  if (c->n[0] < EX_PROBE_BATCHES) return 0;
  /* compare means without dividing: jit/nj > interp/ni * (1 + pct/100) */
  double jit = (double)c->ns[1] * c->n[0] * 100.0;
  double interp = (double)c->ns[0] * c->n[1] * (100.0 + EX_SLOWER_PCT);
  c->decided = jit > interp ? 1 : 2;
  if (c->decided == 1) pk->switched_back++;
  return c->decided == 2;
}

ex_batch_fn ex_pick(void *ctx, int seg) {
  ex_picker *pk = ctx;
  bool judge = pk->judge && !pk->force_switch;
  if (judge) ex_pick_measure(pk, seg, ex_pick_now(pk));
  int64_t n = pk->batches++;
  if (!pk->code && pk->job) pk->code = ex_job_ready(pk->job);
  bool jit = pk->code != NULL;
  if (jit && pk->force_switch) jit = (n % 2) == (pk->force_switch == 2 ? 0 : 1);
  if (judge && seg >= 0 && seg < EX_PICK_SEGS) {
    ex_segcost *c = &pk->cost[seg];
    if (jit) jit = ex_pick_judged(pk, c);
    c->seen = 1;
    c->ran[jit]++;
  }
  pk->last_seg = seg;
  pk->last_jit = jit;
  if (!jit) return pk->interp->run_batch(NULL, seg);
  pk->jit_batches++;
  return pk->jit->run_batch(pk->code, seg);
}

/* ---- test hooks ---------------------------------------------------------------- */

void ex_adapt_hold(ex_adapt *a, int hold) {
  pthread_mutex_lock(&a->mu);
  a->hold = hold;
  pthread_cond_broadcast(&a->cv);
  pthread_mutex_unlock(&a->mu);
}

void ex_adapt_drain(ex_adapt *a) {
  pthread_mutex_lock(&a->mu);
  while ((a->head && !a->hold) || a->running) pthread_cond_wait(&a->cv, &a->mu);
  pthread_mutex_unlock(&a->mu);
}

void ex_adapt_get_stats(ex_adapt *a, ex_adapt_stats *out) {
  pthread_mutex_lock(&a->mu);
  *out = a->st;
  out->cached = a->ncache;
  pthread_mutex_unlock(&a->mu);
}
