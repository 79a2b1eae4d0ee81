/*
 * vm_pool.c — the interpreter's scratch pools (vectors and index buffers
 * reused across batches), validity bits for output views, and errors: the
 * bottom of interp/, which the step and expression files call.
 *
 * Allocation fails cleanly: a pool that cannot grow sets "<STAGE>: out of
 * memory" on the run and returns NULL, which every caller passes up (an
 * expression gives NULL, a step -1); whatever was allocated stays on the
 * pool's lists and is freed with the segment (vm_seg_free).
 */
#include <stdlib.h>
#include <string.h>

#include "vm.h"

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
    if (m->nall_vecs == m->cap_vecs) {
      int cap = m->cap_vecs ? 2 * m->cap_vecs : 16;
      vm_vec **all = realloc(m->all_vecs, (size_t)cap * sizeof *all);
      if (!all) return vm_fail(m, "out of memory");
      m->all_vecs = all;
      m->cap_vecs = cap;
    }
    v = calloc(1, sizeof *v);
    if (!v) return vm_fail(m, "out of memory");
    v->own_v = malloc((size_t)RT_BATCH * 8);
    v->own_nul = malloc(RT_BATCH);
    m->all_vecs[m->nall_vecs++] = v;   /* freed with the segment, whole or not */
    if (!v->own_v || !v->own_nul) return vm_fail(m, "out of memory");
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
    if (m->nall_idx == m->cap_idx) {
      int cap = m->cap_idx ? 2 * m->cap_idx : 16;
      vm_idxbuf **all = realloc(m->all_idx, (size_t)cap * sizeof *all);
      if (!all) return vm_fail(m, "out of memory");
      m->all_idx = all;
      m->cap_idx = cap;
    }
    b = calloc(1, sizeof *b);
    if (!b) return vm_fail(m, "out of memory");
    b->p = malloc((size_t)RT_BATCH * sizeof(uint32_t));
    m->all_idx[m->nall_idx++] = b;   /* freed with the segment, whole or not */
    if (!b->p) return vm_fail(m, "out of memory");
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

uint64_t *vm_bits(vm *m, uint64_t **slot, const vm_vec *v, const vm_set *set, uint32_t n) {
  if (!*slot && !(*slot = malloc(RT_BITWORDS(RT_BATCH) * sizeof(uint64_t))))
    return vm_fail(m, "out of memory");
  uint64_t *bits = *slot;
  memset(bits, 0, RT_BITWORDS(n) * sizeof(uint64_t));
  const uint8_t *nul = v->nul;
  VM_EACH(set, i, bits[i >> 6] |= (uint64_t)(nul[i] ^ 1) << (i & 63););
  return bits;
}
