/*
 * par.c — rt_par_for: pieces of work claimed by whichever workers run
 * (see par.h).
 */
#include <stddef.h>
#include <stdint.h>

#include "par.h"

typedef struct par_for {
  void (*piece)(void *ctx, int64_t i);
  void (*wpiece)(void *ctx, int worker, int64_t i);
  void *ctx;
  int64_t n;
  int64_t next;   /* atomic */
} par_for;

static void par_for_worker(void *arg, int worker) {
  par_for *f = arg;
  for (int64_t i; (i = __atomic_fetch_add(&f->next, 1, __ATOMIC_RELAXED)) < f->n;) {
    if (f->wpiece) f->wpiece(f->ctx, worker, i);
    else f->piece(f->ctx, i);
  }
}

void rt_par_for(const rt_par *par, int64_t n, void (*piece)(void *ctx, int64_t i), void *ctx) {
  if (!par || par->threads <= 1 || n <= 1 || !par->run) {
    for (int64_t i = 0; i < n; i++) piece(ctx, i);
    return;
  }
  par_for f = {piece, NULL, ctx, n, 0};
  par->run(par->pool, par->threads < n ? par->threads : (int)n, par_for_worker, &f);
}

int rt_par_workers(const rt_par *par) {
  return par && par->run && par->threads > 1 ? par->threads : 1;
}

void rt_par_for_w(const rt_par *par, int64_t n, void (*piece)(void *ctx, int worker, int64_t i),
                  void *ctx) {
  if (rt_par_workers(par) <= 1 || n <= 1) {
    for (int64_t i = 0; i < n; i++) piece(ctx, 0, i);
    return;
  }
  par_for f = {NULL, piece, ctx, n, 0};
  par->run(par->pool, par->threads < n ? par->threads : (int)n, par_for_worker, &f);
}
