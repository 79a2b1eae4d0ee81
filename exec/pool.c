/*
 * pool.c — the engine's worker threads (see pool.h).
 *
 * The threads wait on one condition variable for the next job generation;
 * a job names how many workers it uses, and thread i (worker i + 1) takes
 * part when i + 1 < that count. The caller is worker 0 and waits for the
 * others' count of finished calls. `busy` (taken with a trylock) makes a
 * second concurrent job run on its caller alone instead of waiting.
 *
 * A child process made by fork() has none of the parent's threads: the
 * first call in it (ex_pool_run, _resize, _free) sees another pid, forgets
 * the threads without joining them, makes the locks afresh and starts its
 * own threads when a job wants them.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include "pool.h"

struct ex_pool {
  pthread_mutex_t mu;      /* guards everything below */
  pthread_cond_t start;    /* a new generation, or quit */
  pthread_cond_t done;     /* a worker finished its call */
  pthread_mutex_t busy;    /* held by the job's caller */
  int want;                /* threads to use in all (the caller's included) */
  int nthreads;            /* started (workers 1..nthreads) */
  pthread_t *threads;
  struct ex_worker *args;   /* one per thread */
  unsigned long gen;       /* job generation */
  ex_pool_fn fn;
  void *ctx;
  int nworkers;            /* of the current job */
  int finished;            /* calls of the current job that returned */
  int quit;                /* threads with id >= quit leave */
  pid_t pid;               /* the process the threads run in */
};

/* After fork(): the threads are the parent's (see the banner). */
static void after_fork(ex_pool *p) {
  if (p->pid == getpid()) return;
  pthread_mutex_init(&p->mu, NULL);
  pthread_mutex_init(&p->busy, NULL);
  pthread_cond_init(&p->start, NULL);
  pthread_cond_init(&p->done, NULL);
  p->nthreads = 0;
  p->nworkers = 0;
  p->quit = 1 << 30;
  p->pid = getpid();
}

int ex_ncpus(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

/* A thread's argument: its pool, id, and the generation when it was
 * made (a job started before it first takes the lock is still its). */
typedef struct ex_worker {
  ex_pool *pool;
  int id;
  unsigned long born;
} ex_worker;

static void *worker_main(void *arg) {
  ex_worker *w = arg;
  ex_pool *p = w->pool;
  int id = w->id;
  pthread_mutex_lock(&p->mu);
  unsigned long seen = w->born;
  for (;;) {
    while (p->gen == seen && id < p->quit) pthread_cond_wait(&p->start, &p->mu);
    if (id >= p->quit) break;
    seen = p->gen;
    if (id + 1 >= p->nworkers) continue;   /* not in this job */
    ex_pool_fn fn = p->fn;
    void *ctx = p->ctx;
    pthread_mutex_unlock(&p->mu);
    fn(ctx, id + 1);
    pthread_mutex_lock(&p->mu);
    p->finished++;
    pthread_cond_signal(&p->done);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

ex_pool *ex_pool_new(int nthreads) {
  ex_pool *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  pthread_mutex_init(&p->mu, NULL);
  pthread_mutex_init(&p->busy, NULL);
  pthread_cond_init(&p->start, NULL);
  pthread_cond_init(&p->done, NULL);
  p->want = nthreads < 1 ? 1 : nthreads;
  p->quit = 1 << 30;
  p->pid = getpid();
  return p;
}

/* Joins the threads with id >= keep (the caller holds no lock). */
static void stop_from(ex_pool *p, int keep) {
  pthread_mutex_lock(&p->mu);
  int n = p->nthreads;
  if (keep >= n) {
    pthread_mutex_unlock(&p->mu);
    return;
  }
  p->quit = keep;
  pthread_cond_broadcast(&p->start);
  pthread_mutex_unlock(&p->mu);
  for (int i = keep; i < n; i++) pthread_join(p->threads[i], NULL);
  pthread_mutex_lock(&p->mu);
  p->nthreads = keep;
  p->quit = 1 << 30;
  pthread_mutex_unlock(&p->mu);
}

void ex_pool_free(ex_pool *p) {
  if (!p) return;
  after_fork(p);
  stop_from(p, 0);
  free(p->threads);
  free(p->args);
  pthread_cond_destroy(&p->start);
  pthread_cond_destroy(&p->done);
  pthread_mutex_destroy(&p->busy);
  pthread_mutex_destroy(&p->mu);
  free(p);
}

void ex_pool_resize(ex_pool *p, int nthreads) {
  if (!p) return;
  if (nthreads < 1) nthreads = 1;
  after_fork(p);
  pthread_mutex_lock(&p->busy);   /* not while a job runs */
  p->want = nthreads;
  stop_from(p, nthreads - 1);
  pthread_mutex_unlock(&p->busy);
}

/* Starts threads up to want - 1 (under mu); stops at the first failure. */
static void start_threads(ex_pool *p) {
  int need = p->want - 1;
  if (p->nthreads >= need) return;
  if (!p->threads) {
    /* room for the most threads a pool ever has (ex_ncpus' cap) */
    p->threads = calloc(256, sizeof *p->threads);
    p->args = calloc(256, sizeof *p->args);
    if (!p->threads || !p->args) return;
  }
  if (need > 255) need = 255;
  while (p->nthreads < need) {
    ex_worker *w = &p->args[p->nthreads];
    *w = (ex_worker){p, p->nthreads, p->gen};
    if (ex_thread_start(&p->threads[p->nthreads], worker_main, w) != 0) break;
    p->nthreads++;
  }
}

/* Signals go to the application's threads, never to ours: a thread
 * inherits the mask it is created with, so it is created with every
 * signal blocked. (A shell's Ctrl-C taken by a compile thread while the
 * line editor waits would end the editor's read as end of input.) */
int ex_thread_start(pthread_t *t, void *(*fn)(void *), void *arg) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(t, NULL, fn, arg);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return rc;
}

int ex_pool_run(ex_pool *p, int want, ex_pool_fn fn, void *ctx) {
  if (p) after_fork(p);
  if (!p || want <= 1 || pthread_mutex_trylock(&p->busy) != 0) {
    fn(ctx, 0);
    return 1;
  }
  pthread_mutex_lock(&p->mu);
  start_threads(p);
  int n = want < p->nthreads + 1 ? want : p->nthreads + 1;
  if (n > 1) {
    p->fn = fn;
    p->ctx = ctx;
    p->nworkers = n;
    p->finished = 0;
    p->gen++;
    pthread_cond_broadcast(&p->start);
  }
  pthread_mutex_unlock(&p->mu);
  fn(ctx, 0);
  if (n > 1) {
    pthread_mutex_lock(&p->mu);
    while (p->finished < n - 1) pthread_cond_wait(&p->done, &p->mu);
    p->nworkers = 0;
    pthread_mutex_unlock(&p->mu);
  }
  pthread_mutex_unlock(&p->busy);
  return n;
}
