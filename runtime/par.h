/*
 * par.h — how the runtime asks for parallel work without knowing threads:
 * the caller (exec/, which owns the engine's pool) hands a runner that
 * calls fn(ctx, worker) on up to `threads` workers at once and returns how
 * many it used. Work is split into a fixed number of pieces that workers
 * claim with an atomic counter, so the result never depends on how many
 * workers ran or which took which piece.
 */
#ifndef PJ_RT_PAR_H
#define PJ_RT_PAR_H

#include <stdint.h>

typedef void (*rt_par_fn)(void *ctx, int worker);

typedef struct rt_par {
  int (*run)(void *pool, int want, rt_par_fn fn, void *ctx);
  void *pool;
  int threads;
} rt_par;

/* Runs fn over pieces 0..n-1 (piece(ctx, i) for each, claimed by the
 * workers par has; all of them on the caller when par is NULL or has one
 * thread). Returns when every piece is done. */
void rt_par_for(const rt_par *par, int64_t n, void (*piece)(void *ctx, int64_t i), void *ctx);
/* The same, telling each piece which worker runs it (0 .. rt_par_workers
 * - 1), for scratch kept per worker rather than per piece. */
void rt_par_for_w(const rt_par *par, int64_t n, void (*piece)(void *ctx, int worker, int64_t i),
                  void *ctx);
/* The most workers par can run at once (1 when par is NULL). */
int rt_par_workers(const rt_par *par);

#endif
