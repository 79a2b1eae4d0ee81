/*
 * vm.c — the interpreter's batch function (vm_run_batch) and its scratch
 * pools.
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

static void *vm_xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) abort();   /* out of memory: the runtime's allocators do the same */
  return p;
}

static void *vm_xcalloc(size_t n, size_t sz) {
  void *p = calloc(n ? n : 1, sz ? sz : 1);
  if (!p) abort();
  return p;
}

int vm_vt_of(rt_type t) {
  return t == RT_F64 ? VT_F64 : t == RT_STR ? VT_STR : VT_I64;
}

void *vm_fail(vm *m, const char *msg) {
  const char *stage = m->op && m->op->stage ? m->op->stage : "RUN";
  rt_errorf(m->err, m->op ? m->op->pos : -1, "%s: %s", stage, msg);
  return NULL;
}

/* ---- pools ---------------------------------------------------------------- */

vm_vec *vm_vec_get(vm *m, int vt) {
  vm_vec *v = m->free_vecs;
  if (v) {
    m->free_vecs = v->next;
  } else {
    v = vm_xcalloc(1, sizeof *v);
    v->own_v = vm_xmalloc((size_t)RT_BATCH * 8);
    v->own_nul = vm_xmalloc(RT_BATCH);
    if (m->nall_vecs == m->cap_vecs) {
      m->cap_vecs = m->cap_vecs ? 2 * m->cap_vecs : 16;
      m->all_vecs = realloc(m->all_vecs, (size_t)m->cap_vecs * sizeof *m->all_vecs);
      if (!m->all_vecs) abort();
    }
    m->all_vecs[m->nall_vecs++] = v;
  }
  v->vt = vt;
  v->v = v->own_v;
  v->nul = v->own_nul;
  v->anynull = false;
  v->next = NULL;
  return v;
}

void vm_vec_put(vm *m, vm_vec *v) {
  if (!v) return;
  v->next = m->free_vecs;
  m->free_vecs = v;
}

uint32_t *vm_idx_get(vm *m) {
  vm_idxbuf *b = m->free_idx;
  if (b) {
    m->free_idx = b->next;
  } else {
    b = vm_xcalloc(1, sizeof *b);
    b->p = vm_xmalloc((size_t)RT_BATCH * sizeof(uint32_t));
    if (m->nall_idx == m->cap_idx) {
      m->cap_idx = m->cap_idx ? 2 * m->cap_idx : 16;
      m->all_idx = realloc(m->all_idx, (size_t)m->cap_idx * sizeof *m->all_idx);
      if (!m->all_idx) abort();
    }
    m->all_idx[m->nall_idx++] = b;
  }
  b->next = NULL;
  /* the buffer pointer is the handle; find the holder again on put */
  return b->p;
}

void vm_idx_put(vm *m, uint32_t *p) {
  if (!p) return;
  /* Few index buffers are ever live (one per nesting level of CASE/AND/…),
   * so a linear search over all of them is cheap. */
  for (int k = m->nall_idx - 1; k >= 0; k--) {
    if (m->all_idx[k]->p == p) {
      m->all_idx[k]->next = m->free_idx;
      m->free_idx = m->all_idx[k];
      return;
    }
  }
}

static vm *vm_state(ex_seg *s) {
  if (s->vm) return s->vm;
  vm *m = vm_xcalloc(1, sizeof *m);
  m->s = s;
  m->plan = s->run->plan;
  m->sp = s->run->strings;
  m->err = &s->run->err;
  int nsteps = s->seg->nsteps;
  /* held: one vector per COMPUTE, one per aggregate of a TREE_ACC */
  size_t nheld = (size_t)nsteps + 1;
  for (int k = 0; k < nsteps; k++)
    if (s->seg->steps[k]->kind == IR_TREE_ACC) nheld += (size_t)s->seg->steps[k]->tree.naggs;
  m->held = vm_xcalloc(nheld, sizeof *m->held);
  m->colvec = vm_xcalloc((size_t)m->plan->ncols + 1, sizeof *m->colvec);
  m->colbits = vm_xcalloc((size_t)m->plan->ncols + 1, sizeof *m->colbits);
  m->bits = vm_xcalloc((size_t)nsteps + 1, sizeof *m->bits);
  m->active = vm_xmalloc((size_t)RT_BATCH * sizeof(uint32_t));
  s->vm = m;
  s->run->seg_free = vm_seg_free;
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

/* Builds validity bits for the active positions of v. */
static uint64_t *vm_bits_for(vm *m, int step, const vm_vec *v, const vm_set *set, uint32_t n) {
  if (!m->bits[step]) m->bits[step] = vm_xmalloc(RT_BITWORDS(RT_BATCH) * sizeof(uint64_t));
  uint64_t *bits = m->bits[step];
  memset(bits, 0, RT_BITWORDS(n) * sizeof(uint64_t));
  const uint8_t *nul = v->nul;
  VM_EACH(set, i, bits[i >> 6] |= (uint64_t)(nul[i] ^ 1) << (i & 63););
  return bits;
}

uint64_t *vm_col_bits(vm *m, int col, const vm_vec *v, const vm_set *set, uint32_t n) {
  if (!m->colbits[col]) m->colbits[col] = vm_xmalloc(RT_BITWORDS(RT_BATCH) * sizeof(uint64_t));
  uint64_t *bits = m->colbits[col];
  memset(bits, 0, RT_BITWORDS(n) * sizeof(uint64_t));
  const uint8_t *nul = v->nul;
  VM_EACH(set, i, bits[i >> 6] |= (uint64_t)(nul[i] ^ 1) << (i & 63););
  return bits;
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
  out->valid = v->anynull ? vm_bits_for(m, step, v, &set, b->n) : NULL;
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

int vm_run_batch(ex_seg *s, rt_batch *b) {
  vm *m = vm_state(s);
  const ir_segment *seg = s->seg;
  m->batch = b;
  if (!b->active) b->nactive = b->n;
  int rc = 0, nlimit = 0;
  for (int k = 0; k < seg->nsteps && rc == 0; k++) {
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
    case IR_SCAN_TABLE: case IR_SCAN_SQL: case IR_SCAN_BUF: case IR_IV_BUFFER: case IR_ISECT:
    case IR_FLATTEN: case IR_IJOIN: case IR_FILLGAPS: case IR_SORT: case IR_AGGREGATE:
    case IR_TREE_ORDER: case IR_OUTPUT: case IR__COUNT:
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
    case IR_TREE_ORDER:
    case IR_IV_BUFFER:
    case IR_OUTPUT: rc = vm_append(m, b); break;
    case IR_AGGREGATE: rc = vm_agg_update(m, b); break;
    case IR_SCAN_TABLE: case IR_SCAN_SQL: case IR_SCAN_BUF: case IR_FILTER: case IR_COMPUTE:
    case IR_LIMIT: case IR_TREE_NUMBER: case IR_TREE_ACC: case IR_ISECT: case IR_FLATTEN:
    case IR_IJOIN: case IR_FILLGAPS: case IR__COUNT:
      vm_fail(m, "unexpected sink of a segment");
      rc = -1;
      break;
    }
  }
  /* Release this batch's COMPUTE results: their views die with the batch. */
  for (int k = 0; k < seg->nsteps; k++)
    if (seg->steps[k]->kind == IR_COMPUTE) m->colvec[seg->steps[k]->compute.out_col] = NULL;
  for (int i = 0; i < m->nheld; i++) vm_vec_put(m, m->held[i]);
  m->nheld = 0;
  return rc == 0 && !m->err->set ? 0 : -1;
}
