/*
 * vm_callout.c — IX_CALLOUT for the interpreter: the engine's functions
 * (ir/plan.h's ir_callout) called through ex_callout once per position,
 * with each argument as a 64-bit word, exactly as the JIT calls them.
 */
#include "vm.h"

vm_vec *vm_eval_callout(vm *m, const ir_expr *e, const vm_set *set) {
  const ir_callout *c = &m->plan->callouts[e->ival];
  int n = e->nargs;
  vm_vec *args[64];
  for (int k = 0; k < n; k++) {
    vm_vec *a = vm_eval(m, e->args[k], set);
    if (a) a = vm_coerce(m, a, vm_vt_of(c->argtypes[k]), set);
    if (!a) {
      for (int j = 0; j < k; j++) vm_vec_put(m, args[j]);
      return NULL;
    }
    args[k] = a;
  }
  int vt = vm_vt_of(c->ret);
  vm_vec *r = vm_vec_get(m, vt);
  if (!r) {   /* out of memory: the pool said so */
    for (int k = 0; k < n; k++) vm_vec_put(m, args[k]);
    return NULL;
  }
  r->anynull = false;
  int64_t argv[64];
  bool failed = false;
  VM_EACH(set, i, {
    uint64_t nulls = 0;
    for (int k = 0; k < n; k++) {
      const vm_vec *a = args[k];
      if (a->anynull && a->nul[i]) nulls |= 1ull << k;
      if (a->vt == VT_I64) argv[k] = ((const int64_t *)a->v)[i];
      else if (a->vt == VT_F64) memcpy(&argv[k], &((const double *)a->v)[i], sizeof(double));
      else argv[k] = ((const uint32_t *)a->v)[i];
    }
    int32_t status;
    int64_t w = ex_callout(m->s->run, (int32_t)e->ival, argv, (int64_t)nulls, &status);
    if (status < 0) {
      failed = true;
      break;
    }
    r->nul[i] = status == 1;
    r->anynull |= status == 1;
    if (vt == VT_I64) ((int64_t *)r->v)[i] = w;
    else if (vt == VT_F64) memcpy(&((double *)r->v)[i], &w, sizeof(double));
    else ((uint32_t *)r->v)[i] = (uint32_t)w;
  });
  for (int k = 0; k < n; k++) vm_vec_put(m, args[k]);
  if (failed) {
    vm_vec_put(m, r);
    return NULL;
  }
  return r;
}
