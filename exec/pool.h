/*
 * pool.h — the engine's worker threads (pj_engine_set_threads): a small
 * pthread pool that runs one parallel job at a time.
 *
 * Threads start lazily, on the first job that wants more than the calling
 * thread, and are joined by ex_pool_free (pj_engine_close): none outlives
 * the engine. A thread that cannot be created is not an error: the job
 * runs on the threads there are (at least the caller's).
 *
 * A job is fn(ctx, worker) called once on each of n workers at the same
 * time; worker 0 is the calling thread. ex_pool_run returns when every
 * call has returned. A pool already running a job (a pipeline started
 * from inside another's run, or a second application thread on the same
 * engine) runs the new one on the caller alone.
 */
#ifndef PJ_EX_POOL_H
#define PJ_EX_POOL_H

#include <pthread.h>

typedef struct ex_pool ex_pool;
typedef void (*ex_pool_fn)(void *ctx, int worker);

/* A pool that will use up to nthreads threads in all (the caller's
 * included); NULL when out of memory (the caller then runs alone). */
ex_pool *ex_pool_new(int nthreads);
void ex_pool_free(ex_pool *p);
/* Changes the thread count for later jobs (threads beyond it are joined). */
void ex_pool_resize(ex_pool *p, int nthreads);
/* Runs fn on min(want, the pool's threads) workers; returns how many ran
 * (1 when p is NULL, busy, or no thread could be started). */
int ex_pool_run(ex_pool *p, int want, ex_pool_fn fn, void *ctx);
/* The machine's processors online (sysconf), at least 1. */
int ex_ncpus(void);

/* pthread_create with every signal blocked in the new thread. */
int ex_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

#endif
