/*
 * vm_str.c — casts and string functions for the interpreter.
 *
 * Every per-value operation is a call into runtime/strfn.h, the same
 * helpers the JIT calls, so both backends agree on SQLite's rules (number
 * formatting, LIKE, substr's negative starts, …). This file only does the
 * vector plumbing: NULL in any argument gives NULL and the helper is not
 * called for that row.
 */
#include "../runtime/strfn.h"
#include "vm.h"

/* r.nul = OR of the args' NULL flags over set; returns whether any. */
static bool vm_nulls_of(vm_vec *r, vm_vec **args, int n, const vm_set *set) {
  uint8_t *z = r->nul;
  bool first = true;
  for (int k = 0; k < n; k++) {
    if (!args[k]->anynull) continue;
    const uint8_t *x = args[k]->nul;
    if (first) VM_EACH(set, i, z[i] = x[i];);
    else VM_EACH(set, i, z[i] |= x[i];);
    first = false;
  }
  r->anynull = !first;
  return r->anynull;
}

/* A string result the pool refused (RT_STR_FAILED: too long, out of
 * memory) stops the query with the pool's reason, never an empty string. */
static vm_vec *vm_str_checked(vm *m, vm_vec *r, const vm_set *set) {
  const uint32_t *o = r->v;
  uint32_t bad = 0;
  VM_EACH(set, i, if (o[i] == RT_STR_FAILED) { bad = 1; break; });
  if (!bad) return r;
  vm_vec_put(m, r);
  return vm_fail(m, rt_strpool_error(m->sp));
}

vm_vec *vm_coerce(vm *m, vm_vec *v, int vt, const vm_set *set) {
  if (!v || v->vt == vt) return v;
  vm_vec *r = vm_vec_get(m, vt);
  if (!r) return NULL;
  vm_nulls_of(r, &v, 1, set);
  const uint8_t *z = r->nul;
  bool nn = r->anynull;
  rt_strpool *sp = m->sp;
  /* NULL slots hold zero, which converts to zero, except into text. */
  if (vt == VT_F64) {
    double *o = r->v;
    if (v->vt == VT_I64) {
      const int64_t *x = v->v;
      VM_EACH(set, i, o[i] = (double)x[i];);
    } else {
      const uint32_t *x = v->v;
      VM_EACH(set, i, o[i] = rt_fn_str_to_f64(sp, x[i]););
      if (nn) VM_EACH(set, i, if (z[i]) o[i] = 0.0;);
    }
  } else if (vt == VT_I64) {
    int64_t *o = r->v;
    if (v->vt == VT_F64) {
      const double *x = v->v;
      VM_EACH(set, i, o[i] = rt_fn_f64_to_i64(x[i]););
    } else {
      const uint32_t *x = v->v;
      VM_EACH(set, i, o[i] = rt_fn_str_to_i64(sp, x[i]););
      if (nn) VM_EACH(set, i, if (z[i]) o[i] = 0;);
    }
  } else {
    uint32_t *o = r->v;
    if (v->vt == VT_I64) {
      const int64_t *x = v->v;
      if (nn) VM_EACH(set, i, o[i] = z[i] ? 0 : rt_fn_i64_to_str(sp, x[i]); if (o[i] == RT_STR_FAILED) break;);
      else VM_EACH(set, i, o[i] = rt_fn_i64_to_str(sp, x[i]); if (o[i] == RT_STR_FAILED) break;);
    } else {
      const double *x = v->v;
      if (nn) VM_EACH(set, i, o[i] = z[i] ? 0 : rt_fn_f64_to_str(sp, x[i]); if (o[i] == RT_STR_FAILED) break;);
      else VM_EACH(set, i, o[i] = rt_fn_f64_to_str(sp, x[i]); if (o[i] == RT_STR_FAILED) break;);
    }
    vm_vec_put(m, v);
    return vm_str_checked(m, r, set);
  }
  vm_vec_put(m, v);
  return r;
}

/* Result representation and the representation each argument is read in. */
static int vm_fn_result_vt(ir_exkind k) {
  switch (k) {
  case IX_TOF64:
  case IX_STRTOF64:
  case IX_ROUND: return VT_F64;
  case IX_LIKE:
  case IX_GLOB:
  case IX_TOINT:
  case IX_LENGTH:
  case IX_INSTR:
  case IX_SIGN:
  case IX_UNICODE: return VT_I64;
  default: return VT_STR;
  }
}

static int vm_fn_arg_vt(ir_exkind k, int arg) {
  if ((k == IX_SUBSTR || k == IX_ROUND) && arg > 0) return VT_I64;
  if (k == IX_ROUND || k == IX_SIGN) return VT_F64;
  if (k == IX_CHAR) return VT_I64;
  return VT_STR;
}

vm_vec *vm_eval_strfn(vm *m, const ir_expr *e, const vm_set *set) {
  /* Casts are conversions of the one argument. */
  if (e->kind == IX_TOF64 || e->kind == IX_STRTOF64 || e->kind == IX_TOINT ||
      e->kind == IX_TOSTR) {
    vm_vec *a = vm_eval(m, e->args[0], set);
    if (!a) return NULL;
    int vt = e->kind == IX_TOINT ? VT_I64 : e->kind == IX_TOSTR ? VT_STR : VT_F64;
    return vm_coerce(m, a, vt, set);
  }
  enum { MAXARGS = 3 };
  int lo = 1, hi = 1;
  if (e->kind == IX_CONCAT || e->kind == IX_LIKE || e->kind == IX_GLOB || e->kind == IX_INSTR)
    lo = hi = 2;
  else if (e->kind == IX_SUBSTR)
    lo = 2, hi = 3;
  else if (e->kind == IX_TRIM || e->kind == IX_LTRIM || e->kind == IX_RTRIM || e->kind == IX_ROUND)
    hi = 2;
  else if (e->kind == IX_REPLACE)
    lo = hi = 3;
  if (e->nargs < lo || e->nargs > hi) return vm_fail(m, "wrong number of arguments to a function");
  vm_vec *args[MAXARGS] = {0};
  int n = e->nargs;
  for (int k = 0; k < n; k++) {
    vm_vec *a = vm_eval(m, e->args[k], set);
    if (a) a = vm_coerce(m, a, vm_fn_arg_vt(e->kind, k), set);
    if (!a) {
      for (int j = 0; j < k; j++) vm_vec_put(m, args[j]);
      return NULL;
    }
    args[k] = a;
  }
  vm_vec *r = vm_vec_get(m, vm_fn_result_vt(e->kind));
  if (!r) return NULL;
  bool nn = vm_nulls_of(r, args, n, set);
  const uint8_t *z = r->nul;
  rt_strpool *sp = m->sp;
  const uint32_t *s0 = args[0]->v;
  const uint32_t *s1 = n > 1 ? args[1]->v : NULL;

  /* One loop per function; a NULL row is skipped and left zero. The row
   * loop is spelled out twice (with and without NULLs) so the common
   * NULL-free case has no test in it. */
#define VM_FN_LOOP(o, call)                                                    \
  do {                                                                         \
    if (nn) VM_EACH(set, i, o[i] = z[i] ? 0 : (call););                        \
    else VM_EACH(set, i, o[i] = (call););                                      \
  } while (0)
  /* String results stop at the first one the pool refused, as the JIT's
   * row loop does, so the pool's reason is that row's in both. */
#define VM_STR_LOOP(o, call)                                                   \
  do {                                                                         \
    if (nn) VM_EACH(set, i, o[i] = z[i] ? 0 : (call); if (o[i] == RT_STR_FAILED) break;); \
    else VM_EACH(set, i, o[i] = (call); if (o[i] == RT_STR_FAILED) break;);    \
  } while (0)

  switch (e->kind) {
  case IX_CONCAT: { uint32_t *o = r->v; VM_STR_LOOP(o, rt_fn_concat(sp, s0[i], s1[i])); break; }
  /* x LIKE p: the helper takes the pattern first. */
  case IX_LIKE: {
    int64_t *o = r->v;
    uint32_t esc = (uint32_t)e->ival;   /* ESCAPE's character, 0 for none */
    if (esc) VM_FN_LOOP(o, rt_fn_like_esc(sp, s1[i], s0[i], esc));
    else VM_FN_LOOP(o, rt_fn_like(sp, s1[i], s0[i]));
    break;
  }
  case IX_GLOB: { int64_t *o = r->v; VM_FN_LOOP(o, rt_fn_glob(sp, s1[i], s0[i])); break; }
  case IX_LENGTH: { int64_t *o = r->v; VM_FN_LOOP(o, rt_fn_length(sp, s0[i])); break; }
  case IX_LOWER: { uint32_t *o = r->v; VM_STR_LOOP(o, rt_fn_lower(sp, s0[i])); break; }
  case IX_UPPER: { uint32_t *o = r->v; VM_STR_LOOP(o, rt_fn_upper(sp, s0[i])); break; }
  case IX_INSTR: { int64_t *o = r->v; VM_FN_LOOP(o, rt_fn_instr(sp, s0[i], s1[i])); break; }
  case IX_SUBSTR: {
    uint32_t *o = r->v;
    const int64_t *st = (const int64_t *)args[1]->v;
    if (n == 3) {
      const int64_t *len = args[2]->v;
      VM_STR_LOOP(o, rt_fn_substr3(sp, s0[i], st[i], len[i]));
    } else {
      VM_STR_LOOP(o, rt_fn_substr2(sp, s0[i], st[i]));
    }
    break;
  }
  case IX_TRIM:
  case IX_LTRIM:
  case IX_RTRIM: {
    uint32_t *o = r->v;
    int mode = e->kind == IX_TRIM ? RT_TRIM_BOTH : e->kind == IX_LTRIM ? RT_TRIM_LEFT : RT_TRIM_RIGHT;
    if (n == 2) VM_STR_LOOP(o, rt_fn_trim_set(sp, s0[i], s1[i], mode));
    else VM_STR_LOOP(o, rt_fn_trim(sp, s0[i], mode));
    break;
  }
  case IX_ROUND: {
    double *o = r->v;
    const double *x = args[0]->v;
    const int64_t *d = n == 2 ? args[1]->v : NULL;
    if (d) VM_FN_LOOP(o, rt_fn_round(x[i], d[i]));
    else VM_FN_LOOP(o, rt_fn_round(x[i], 0));
    break;
  }
  case IX_SIGN: {
    int64_t *o = r->v;
    const double *x = args[0]->v;
    VM_FN_LOOP(o, rt_fn_sign(x[i]));
    break;
  }
  case IX_REPLACE: {
    uint32_t *o = r->v;
    const uint32_t *s2 = args[2]->v;
    VM_STR_LOOP(o, rt_fn_replace(sp, s0[i], s1[i], s2[i]));
    break;
  }
  case IX_HEX: { uint32_t *o = r->v; VM_STR_LOOP(o, rt_fn_hex(sp, s0[i])); break; }
  case IX_UNICODE: { int64_t *o = r->v; VM_FN_LOOP(o, rt_fn_unicode(sp, s0[i])); break; }
  case IX_CHAR: {
    uint32_t *o = r->v;
    const int64_t *c = args[0]->v;
    VM_STR_LOOP(o, rt_fn_char(sp, c[i]));
    break;
  }
  default:
    for (int k = 0; k < n; k++) vm_vec_put(m, args[k]);
    vm_vec_put(m, r);
    return vm_fail(m, "unexpected string function");
  }
#undef VM_FN_LOOP
#undef VM_STR_LOOP
  for (int k = 0; k < n; k++) vm_vec_put(m, args[k]);
  return r->vt == VT_STR ? vm_str_checked(m, r, set) : r;
}

/* printf(fmt, …): each row's arguments packed as (kind, bits) pairs for
 * rt_fn_printf, which returns RT_STR_NULL for SQLite's NULL results. */
vm_vec *vm_eval_printf(vm *m, const ir_expr *e, const vm_set *set) {
  enum { MAXARGS = 128 };
  int n = e->nargs;
  if (n < 1 || n > MAXARGS) return vm_fail(m, "wrong number of arguments to printf");
  vm_vec *args[MAXARGS];
  for (int k = 0; k < n; k++) {
    vm_vec *a = vm_eval(m, e->args[k], set);
    if (a && k == 0) a = vm_coerce(m, a, VT_STR, set);
    if (!a) {
      for (int j = 0; j < k; j++) vm_vec_put(m, args[j]);
      return NULL;
    }
    args[k] = a;
  }
  vm_vec *r = vm_vec_get(m, VT_STR);
  if (!r) {
    for (int k = 0; k < n; k++) vm_vec_put(m, args[k]);
    return NULL;
  }
  uint32_t *o = r->v;
  uint8_t *z = r->nul;
  rt_strpool *sp = m->sp;
  const vm_vec *f = args[0];
  const uint32_t *fmt = f->v;
  int64_t packed[2 * MAXARGS];
  bool anynull = false, failed = false;
  VM_EACH(set, i, {
    if (f->anynull && f->nul[i]) {
      z[i] = 1, o[i] = 0, anynull = true;
      continue;
    }
    for (int k = 1; k < n; k++) {
      const vm_vec *a = args[k];
      int64_t *p = packed + 2 * (k - 1);
      if (a->anynull && a->nul[i]) p[0] = RT_PF_NULL, p[1] = 0;
      else if (a->vt == VT_I64) p[0] = RT_PF_INT, p[1] = ((const int64_t *)a->v)[i];
      else if (a->vt == VT_F64) p[0] = RT_PF_F64, memcpy(&p[1], &((const double *)a->v)[i], 8);
      else p[0] = RT_PF_STR, p[1] = ((const uint32_t *)a->v)[i];
    }
    uint32_t id = rt_fn_printf(sp, fmt[i], packed, n - 1);
    z[i] = id == RT_STR_NULL;
    anynull |= z[i];
    o[i] = z[i] ? 0 : id;
    if (id == RT_STR_FAILED) {
      failed = true;
      break;
    }
  });
  r->anynull = anynull;
  for (int k = 0; k < n; k++) vm_vec_put(m, args[k]);
  if (failed) {
    vm_vec_put(m, r);
    return vm_fail(m, rt_strpool_error(sp));
  }
  return r;
}
