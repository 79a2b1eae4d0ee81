/*
 * vm.c — the interpreter's batch function (vm_run_batch) and its
 * per-segment scratch (pools are vm_pool.c's).
 *
 * vm_run_batch runs a segment's streaming steps in order, each over the
 * whole batch: FILTER narrows the active list, COMPUTE writes a new column
 * view, LIMIT slices the active list, then the sink takes the active rows
 * (rowbuf append for SORT/TREE_ORDER/OUTPUT, vm_agg.c for AGGREGATE).
 * TREE_NUMBER and TREE_ACC are in vm_tree.c. Expressions are
 * in vm_expr.c and vm_str.c. All state that must survive a batch lives in
 * ex_seg (LIMIT counters, sink), so the JIT can take over at any batch;
 * ex_seg.vm only holds reusable scratch memory.
 */
#include <stdio.h>
#include <stdlib.h>

#include "vm.h"

/* The segment's scratch, made on its first batch; NULL when out of memory
 * (error set; what was allocated is freed with the run's seg_free). */
static vm *vm_state(ex_seg *s) {
  if (s->vm) return s->vm;
  vm *m = calloc(1, sizeof *m);
  if (!m) {
    rt_errorf(&s->run->err, -1, "%s: out of memory", s->seg->sink->stage);
    return NULL;
  }
  m->s = s;
  m->plan = s->run->plan;
  m->sp = s->run->strings;
  m->err = &s->run->err;
  s->vm = m;
  s->run->seg_free = vm_seg_free;
  int nsteps = s->seg->nsteps;
  /* held: one vector per COMPUTE, one per aggregate of a TREE_ACC */
  size_t nheld = (size_t)nsteps + 1;
  for (int k = 0; k < nsteps; k++)
    if (s->seg->steps[k]->kind == IR_TREE_ACC) nheld += (size_t)s->seg->steps[k]->tree.naggs;
  m->held = calloc(nheld, sizeof *m->held);
  m->colvec = calloc((size_t)m->plan->ncols + 1, sizeof *m->colvec);
  m->colbits = calloc((size_t)m->plan->ncols + 1, sizeof *m->colbits);
  m->bits = calloc((size_t)nsteps + 1, sizeof *m->bits);
  m->jn = calloc((size_t)nsteps + 1, sizeof *m->jn);
  m->active = malloc((size_t)RT_BATCH * sizeof(uint32_t));
  if (!m->held || !m->colvec || !m->colbits || !m->bits || !m->jn || !m->active) {
    rt_errorf(&s->run->err, -1, "%s: out of memory", s->seg->sink->stage);
    return NULL;
  }
  return m;
}

void vm_seg_free(ex_seg *s) {
  vm *m = s->vm;
  if (!m) return;
  for (int i = 0; i < m->nall_vecs; i++) {
    free(m->all_vecs[i]->own_v);
    free(m->all_vecs[i]->own_nul);
    free(m->all_vecs[i]);
  }
  free(m->all_vecs);
  for (int i = 0; i < m->nall_idx; i++) {
    free(m->all_idx[i]->p);
    free(m->all_idx[i]);
  }
  free(m->all_idx);
  if (m->bits)
    for (int i = 0; i < s->seg->nsteps; i++) free(m->bits[i]);
  free(m->bits);
  if (m->colbits)
    for (int c = 0; c < m->plan->ncols; c++) free(m->colbits[c]);
  free(m->colbits);
  free(m->held);
  free(m->colvec);
  free(m->active);
  free(m->groups);
  free(m->keyvals);
  free(m->keynull);
  vm_join_free(m);
  free(m);
  s->vm = NULL;
}

/* ---- steps ---------------------------------------------------------------- */

static int vm_filter(vm *m, const ir_op *op, rt_batch *b) {
  vm_set set = {b->active, b->nactive};
  vm_vec *v = vm_eval(m, op->filter.pred, &set);
  if (!v) return -1;
  uint32_t ny = 0;
  /* Writing into m->active while reading it is safe: the split only
   * compacts (output index <= input index). */
  vm_split_truth(v, &set, m->active, &ny, NULL, NULL);
  vm_vec_put(m, v);
  b->active = m->active;
  b->nactive = ny;
  return 0;
}

static int vm_compute(vm *m, int step, const ir_op *op, rt_batch *b) {
  vm_set set = {b->active, b->nactive};
  const ir_col *col = &m->plan->cols[op->compute.out_col];
  vm_vec *v = vm_eval(m, op->compute.expr, &set);
  if (!v) return -1;
  v = vm_coerce(m, v, vm_vt_of(col->type), &set);
  if (!v) return -1;
  rt_view *out = &b->cols[op->compute.out_col];
  rt_type t = col->type;
  if (t != RT_I64 && t != RT_F64 && t != RT_STR && t != RT_BOOL)
    t = v->vt == VT_F64 ? RT_F64 : v->vt == VT_STR ? RT_STR : RT_I64;
  out->type = t;
  out->data = v->v;
  out->sel = NULL;
  out->base = 0;
  out->valid = NULL;
  if (v->anynull && !(out->valid = vm_bits(m, &m->bits[step], v, &set, b->n))) return -1;
  m->held[m->nheld++] = v;
  m->colvec[op->compute.out_col] = v;
  return 0;
}

static void vm_limit(vm *m, int k, rt_batch *b) {
  ex_seg *s = m->s;
  uint32_t n = b->nactive;
  uint32_t drop = s->limit_skip[k] < (int64_t)n ? (uint32_t)s->limit_skip[k] : n;
  s->limit_skip[k] -= drop;
  uint32_t rest = n - drop;
  uint32_t take = s->limit_left[k] < (int64_t)rest ? (uint32_t)s->limit_left[k] : rest;
  s->limit_left[k] -= take;
  if (b->active) {
    memmove(m->active, b->active + drop, (size_t)take * sizeof(uint32_t));
  } else {
    for (uint32_t i = 0; i < take; i++) m->active[i] = drop + i;
  }
  b->active = m->active;
  b->nactive = take;
  /* Once any LIMIT has passed its last row, nothing more can reach the
   * sink: the source may stop. */
  if (s->limit_left[k] == 0) s->done = 1;
}

static int vm_append(vm *m, rt_batch *b) {
  ex_seg *s = m->s;
  rt_view views[s->nbuf > 0 ? s->nbuf : 1];
  for (int j = 0; j < s->nbuf; j++) views[j] = b->cols[s->buf_cols[j]];
  rt_rowbuf_append_views(s->buf, views, b->active, b->nactive);
  return 0;
}

/* Steps k0.. of the segment over b, then the sink. A JOIN_PROBE runs the
 * rest itself, once per chunk of its output (vm_join.c). nlimit: the
 * LIMIT steps before k0. */
int vm_rest(vm *m, rt_batch *b, int k0, int nlimit) {
  const ir_segment *seg = m->s->seg;
  int rc = 0;
  for (int k = k0; k < seg->nsteps && rc == 0; k++) {
    const ir_op *op = seg->steps[k];
    if (op->dead) continue;
    m->op = op;
    if (b->nactive == 0) {
      /* Nothing left in this batch, but a LIMIT still counts its position. */
      if (op->kind == IR_LIMIT) nlimit++;
      continue;
    }
    switch (op->kind) {
    case IR_FILTER: rc = vm_filter(m, op, b); break;
    case IR_COMPUTE: rc = vm_compute(m, k, op, b); break;
    case IR_LIMIT: vm_limit(m, nlimit++, b); break;
    case IR_TREE_NUMBER: rc = vm_tree_number(m, op, b); break;
    case IR_TREE_ACC: rc = vm_tree_acc(m, op, b); break;
    case IR_JOIN_PROBE: return vm_join_probe(m, op, k, b, nlimit);
#define IR_CASE_SOURCE(name) case IR_##name:
#define IR_CASE_SINK(name) case IR_##name:
#define IR_CASE_BREAKER(name) case IR_##name:
#include "ir/op_cases.h"
    case IR__COUNT:
      vm_fail(m, "unexpected step in a segment");
      rc = -1;
      break;
    }
  }
  if (rc == 0 && b->nactive > 0) {
    const ir_op *sink = seg->sink;
    m->op = sink;
    switch (sink->kind) {
    case IR_SORT:
    case IR_WINDOW:
    case IR_FORK:
    case IR_TREE_ORDER:
    case IR_IV_BUFFER:
    case IR_JOIN_BUILD:
    case IR_OUTPUT: rc = vm_append(m, b); break;
    case IR_AGGREGATE: rc = vm_agg_update(m, b); break;
#define IR_CASE_SOURCE(name) case IR_##name:
#define IR_CASE_STEP(name) case IR_##name:
#include "ir/op_cases.h"
    case IR__COUNT:
      vm_fail(m, "unexpected sink of a segment");
      rc = -1;
      break;
    }
  }
  return rc;
}

/* Releases what the steps from k0 on hold: their COMPUTE results (views
 * that die with the batch) back to the pools, down to `held` entries. */
void vm_release(vm *m, int k0, int held) {
  const ir_segment *seg = m->s->seg;
  for (int k = k0; k < seg->nsteps; k++)
    if (seg->steps[k]->kind == IR_COMPUTE) m->colvec[seg->steps[k]->compute.out_col] = NULL;
  for (int i = held; i < m->nheld; i++) vm_vec_put(m, m->held[i]);
  m->nheld = held;
}

int vm_run_from(ex_seg *s, rt_batch *b, int step) {
  vm *m = vm_state(s);
  if (!m) return -1;
  const ir_segment *seg = s->seg;
  m->batch = b;
  if (!b->active) b->nactive = b->n;
  int nlimit = 0;
  for (int k = 0; k < step && k < seg->nsteps; k++)
    if (!seg->steps[k]->dead && seg->steps[k]->kind == IR_LIMIT) nlimit++;
  int rc = vm_rest(m, b, step, nlimit);
  vm_release(m, 0, 0);
  return rc == 0 && !m->err->set ? 0 : -1;
}

int vm_run_batch(ex_seg *s, rt_batch *b) { return vm_run_from(s, b, 0); }
