/*
 * driver_window.c — the end of a WINDOW sink's input: its buffer holds
 * the carried columns (the backends appended them, as for a SORT); this
 * adds one column per live call after them, in the order ir_buf_layout
 * gives the next segment, maps the calls' plan columns to buffer columns
 * and lets runtime/window.c compute them in place.
 */
#include <stdlib.h>

#include "exec.h"

int ex_window_finish(ex_run *run, ex_seg *s) {
  const ir_plan *p = run->plan;
  const ir_op *sink = s->seg->sink;
  const struct ir_window *w = &sink->win;
  rt_rowbuf *buf = s->buf;
  int *at = rt_arena_alloc(&run->arena, sizeof(int) * ((size_t)p->ncols + 1));
  rt_type *types = rt_arena_alloc(&run->arena, sizeof(rt_type) * ((size_t)w->ncalls + 1));
  rt_wincall *calls = rt_arena_alloc(&run->arena, sizeof *calls * ((size_t)w->ncalls + 1));
  rt_winspec *specs = rt_arena_alloc(&run->arena, sizeof *specs * ((size_t)w->nspecs + 1));
  if (!at || !types || !calls || !specs || !buf || buf->ncols != s->nbuf)
    goto oom;
  for (int c = 0; c < p->ncols; c++) at[c] = -1;
  for (int j = 0; j < s->nbuf; j++) at[s->buf_cols[j]] = j;
  int n = 0;
  for (int i = 0; i < w->ncalls; i++) {
    const ir_wincall *c = &w->calls[i];
    if (!c->live) continue;
    types[n] = p->cols[c->out_col].type;
    calls[n] = (rt_wincall){.fn = c->fn, .spec = c->spec, .n = c->n, .frame = c->frame,
                            .out = s->nbuf + n, .stage = sink->stage, .pos = c->pos,
                            .arg = c->arg_col >= 0 ? at[c->arg_col] : -1,
                            .narg = c->n_col >= 0 ? at[c->n_col] : -1,
                            .dflt = c->dflt_col >= 0 ? at[c->dflt_col] : -1};
    if ((c->arg_col >= 0 && calls[n].arg < 0) || (c->n_col >= 0 && calls[n].narg < 0) ||
        (c->dflt_col >= 0 && calls[n].dflt < 0)) {
      rt_errorf(&run->err, c->pos, "%s: a window argument is not in the buffer", sink->stage);
      return -1;
    }
    n++;
  }
  for (int k = 0; k < w->nspecs; k++) {
    const ir_winspec *sp = &w->specs[k];
    rt_sortkey *keys = rt_arena_alloc(&run->arena, sizeof *keys * ((size_t)(sp->npart + sp->norder) + 1));
    if (!keys) goto oom;
    for (int j = 0; j < sp->npart; j++) keys[j] = (rt_sortkey){at[sp->part[j]], false, true};
    for (int j = 0; j < sp->norder; j++)
      keys[sp->npart + j] = (rt_sortkey){at[sp->order[j].col], sp->order[j].desc, sp->order[j].nulls_first};
    for (int j = 0; j < sp->npart + sp->norder; j++)
      if (keys[j].col < 0) {
        rt_errorf(&run->err, sink->pos, "%s: a window key is not in the buffer", sink->stage);
        return -1;
      }
    specs[k] = (rt_winspec){.nkeys = sp->npart + sp->norder, .npart = sp->npart, .keys = keys};
  }
  if (!rt_rowbuf_add_cols(buf, n, types)) goto oom;
  return rt_window_run(buf, w->nspecs, specs, n, calls, run->strings, &run->err);
oom:
  rt_errorf(&run->err, sink->pos, "%s: out of memory", sink->stage);
  return -1;
}
