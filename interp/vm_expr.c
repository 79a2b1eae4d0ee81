/*
 * vm_expr.c — column-at-a-time evaluation of scalar expressions.
 *
 * vm_eval(e, set) returns a vector holding e's value at every position of
 * `set`. Each node kind is a handful of tight loops (one per operand
 * representation), run once per batch. Lazy operators evaluate their
 * operands only on the rows that reach them, exactly as a row-at-a-time
 * evaluator that short-circuits would (the JIT must do the same, so errors
 * such as integer overflow fire on the same rows in both backends):
 *   - AND evaluates its right side only where the left is not FALSE; OR
 *     only where the left is not TRUE;
 *   - CASE evaluates WHEN k only on rows no earlier WHEN took, THEN k only
 *     on the rows WHEN k took, ELSE on the rest;
 *   - COALESCE evaluates argument k only where every earlier one was NULL.
 * Everything else (IN lists, NULLIF, scalar MIN/MAX included) evaluates
 * all operands on all rows of the set, as codegen/cg_expr.c does.
 *
 * Strings, LIKE/GLOB and casts are in vm_str.c.
 */
#include <math.h>
#include <stdio.h>

#include "../runtime/strfn.h"
#include "vm.h"

/* ---- helpers --------------------------------------------------------------- */

static void vm_zero_nulls(vm_vec *v, const vm_set *set) {
  if (!v->anynull) return;
  const uint8_t *z = v->nul;
  if (v->vt == VT_F64) {
    double *o = v->v;
    VM_EACH(set, i, if (z[i]) o[i] = 0.0;);
  } else if (v->vt == VT_STR) {
    uint32_t *o = v->v;
    VM_EACH(set, i, if (z[i]) o[i] = 0;);
  } else {
    int64_t *o = v->v;
    VM_EACH(set, i, if (z[i]) o[i] = 0;);
  }
}

/* r.nul = a.nul | b.nul (b may be NULL). */
static void vm_merge_nulls(vm_vec *r, const vm_vec *a, const vm_vec *b, const vm_set *set) {
  uint8_t *z = r->nul;
  bool an = a->anynull, bn = b && b->anynull;
  if (an && bn) {
    const uint8_t *x = a->nul, *y = b->nul;
    VM_EACH(set, i, z[i] = x[i] | y[i];);
  } else if (an || bn) {
    const uint8_t *x = an ? a->nul : b->nul;
    VM_EACH(set, i, z[i] = x[i];);
  }
  r->anynull = an || bn;
}

/* Makes r.nul defined over set (zeros when r had no NULLs) so that new NULLs
 * can be or-ed in. */
static uint8_t *vm_nul_begin(vm_vec *r, const vm_set *set) {
  if (!r->anynull) {
    uint8_t *z = r->nul;
    VM_EACH(set, i, z[i] = 0;);
  }
  return r->nul;
}

static vm_vec *vm_nullvec(vm *m, int vt, const vm_set *set) {
  vm_vec *r = vm_vec_get(m, vt);
  if (!r) return NULL;
  uint8_t *z = r->nul;
  if (vt == VT_F64) {
    double *o = r->v;
    VM_EACH(set, i, o[i] = 0.0; z[i] = 1;);
  } else if (vt == VT_STR) {
    uint32_t *o = r->v;
    VM_EACH(set, i, o[i] = 0; z[i] = 1;);
  } else {
    int64_t *o = r->v;
    VM_EACH(set, i, o[i] = 0; z[i] = 1;);
  }
  r->anynull = true;
  return r;
}

/* Copies t's values and NULL flags into r at the positions of set. r.nul
 * must already be defined (zero) over those positions. */
static void vm_scatter(vm_vec *r, const vm_vec *t, const vm_set *set) {
  if (r->vt == VT_F64) {
    double *o = r->v;
    const double *x = t->v;
    VM_EACH(set, i, o[i] = x[i];);
  } else if (r->vt == VT_STR) {
    uint32_t *o = r->v;
    const uint32_t *x = t->v;
    VM_EACH(set, i, o[i] = x[i];);
  } else {
    int64_t *o = r->v;
    const int64_t *x = t->v;
    VM_EACH(set, i, o[i] = x[i];);
  }
  if (t->anynull) {
    uint8_t *z = r->nul;
    const uint8_t *y = t->nul;
    VM_EACH(set, i, z[i] = y[i];);
    r->anynull = true;
  }
}

/* An owned, writable copy of v over set (v is consumed). */
static vm_vec *vm_own(vm *m, vm_vec *v, const vm_set *set) {
  if (v->v == v->own_v && v->nul == v->own_nul) return v;
  vm_vec *r = vm_vec_get(m, v->vt);
  if (!r) return NULL;
  if (v->anynull) vm_nul_begin(r, set);
  vm_scatter(r, v, set);
  vm_vec_put(m, v);
  return r;
}

/* Converts to I64 truth values 0/1 (NULL kept) for NOT/AND/OR/WHEN/WHERE. */
static vm_vec *vm_truthy(vm *m, vm_vec *v, const vm_set *set) {
  if (!v || v->vt == VT_I64) return v;
  if (v->vt == VT_STR) {
    v = vm_coerce(m, v, VT_F64, set);
    if (!v) return NULL;
  }
  vm_vec *r = vm_vec_get(m, VT_I64);
  if (!r) return NULL;
  int64_t *o = r->v;
  const double *x = v->v;
  VM_EACH(set, i, o[i] = x[i] != 0.0;);
  vm_merge_nulls(r, v, NULL, set);
  vm_zero_nulls(r, set);
  vm_vec_put(m, v);
  return r;
}

static vm_vec *vm_eval_bool(vm *m, const ir_expr *e, const vm_set *set) {
  return vm_truthy(m, vm_eval(m, e, set), set);
}

void vm_split_truth(const vm_vec *v, const vm_set *set, uint32_t *yes, uint32_t *nyes,
                    uint32_t *no, uint32_t *nno) {
  uint32_t ny = 0, nn = 0;
  /* NULL slots hold zero, so "non-zero" already means "true and not NULL". */
  if (v->vt == VT_F64) {
    const double *x = v->v;
    if (yes && no) VM_EACH(set, i, uint32_t t = x[i] != 0.0; yes[ny] = i; ny += t; no[nn] = i; nn += t ^ 1;);
    else if (yes) VM_EACH(set, i, yes[ny] = i; ny += x[i] != 0.0;);
    else VM_EACH(set, i, no[nn] = i; nn += x[i] == 0.0;);
  } else {
    const int64_t *x = v->v;
    if (yes && no) VM_EACH(set, i, uint32_t t = x[i] != 0; yes[ny] = i; ny += t; no[nn] = i; nn += t ^ 1;);
    else if (yes) VM_EACH(set, i, yes[ny] = i; ny += x[i] != 0;);
    else VM_EACH(set, i, no[nn] = i; nn += x[i] == 0;);
  }
  if (nyes) *nyes = ny;
  if (nno) *nno = nn;
}

/* ---- leaves --------------------------------------------------------------- */

vm_vec *vm_load_view(vm *m, const rt_view *w, const vm_set *set) {
  int vt = vm_vt_of(w->type);
  vm_vec *r = vm_vec_get(m, vt);
  if (!r) return NULL;
  if (w->type == RT_NULLT) {
    vm_vec_put(m, r);
    return vm_nullvec(m, vt, set);
  }
  const uint32_t *sel = w->sel;
  /* Contiguous, selection-free, NULL-free values are read in place. */
  if (!sel && !w->valid &&
      (w->type == RT_I64 || w->type == RT_BOOL || w->type == RT_F64 || w->type == RT_STR)) {
    r->v = (void *)w->data;
    return r;
  }
#define VM_GATHER(T, OT)                                                       \
  do {                                                                         \
    const T *d = w->data;                                                      \
    OT *o = r->v;                                                              \
    if (sel) VM_EACH(set, i, o[i] = (OT)d[sel[i]];);                           \
    else VM_EACH(set, i, o[i] = (OT)d[i];);                                    \
  } while (0)
  switch (w->type) {
  case RT_ID: {
    int64_t *o = r->v;
    int64_t base = w->base;
    if (sel) VM_EACH(set, i, o[i] = base + sel[i];);
    else VM_EACH(set, i, o[i] = base + i;);
    break;
  }
  case RT_U32: VM_GATHER(uint32_t, int64_t); break;
  case RT_I32: VM_GATHER(int32_t, int64_t); break;
  case RT_F64: VM_GATHER(double, double); break;
  case RT_STR: VM_GATHER(uint32_t, uint32_t); break;
  default: VM_GATHER(int64_t, int64_t); break;
  }
#undef VM_GATHER
  if (w->valid) {
    const uint64_t *bits = w->valid;
    uint8_t *z = r->nul;
    uint8_t any = 0;
    if (sel) VM_EACH(set, i, uint8_t n = !rt_bit(bits, sel[i]); z[i] = n; any |= n;);
    else VM_EACH(set, i, uint8_t n = !rt_bit(bits, i); z[i] = n; any |= n;);
    r->anynull = any != 0;
    vm_zero_nulls(r, set);
  }
  return r;
}

static vm_vec *vm_col(vm *m, const ir_expr *e, const vm_set *set) {
  vm_vec *held = m->colvec[e->col];
  if (held) {
    /* A column computed earlier in this batch: borrow its vector. */
    vm_vec *r = vm_vec_get(m, held->vt);
    if (!r) return NULL;
    r->v = held->v;
    r->nul = held->nul;
    r->anynull = held->anynull;
    return r;
  }
  return vm_load_view(m, &m->batch->cols[e->col], set);
}

static vm_vec *vm_broadcast(vm *m, int vt, int64_t iv, double fv, uint32_t sv,
                            const vm_set *set) {
  vm_vec *r = vm_vec_get(m, vt);
  if (!r) return NULL;
  if (vt == VT_F64) {
    double *o = r->v;
    VM_EACH(set, i, o[i] = fv;);
  } else if (vt == VT_STR) {
    uint32_t *o = r->v;
    VM_EACH(set, i, o[i] = sv;);
  } else {
    int64_t *o = r->v;
    VM_EACH(set, i, o[i] = iv;);
  }
  return r;
}

static vm_vec *vm_const(vm *m, const ir_expr *e, const vm_set *set) {
  int vt = vm_vt_of(e->type);
  if (e->is_null || e->type == RT_NULLT) return vm_nullvec(m, vt, set);
  return vm_broadcast(m, vt, e->ival, e->fval, e->sval, set);
}

/* A parameter, converted to the type the plan was bound with. */
static vm_vec *vm_param(vm *m, const ir_expr *e, const vm_set *set) {
  int vt = vm_vt_of(e->type);
  const ex_run *run = m->s->run;
  if (e->param < 1 || e->param > run->nparams || !run->params) return vm_nullvec(m, vt, set);
  const ex_value *p = &run->params[e->param];
  switch (p->type) {
  case RT_I64:
    if (vt == VT_STR) break;
    return vm_broadcast(m, vt, p->i, (double)p->i, 0, set);
  case RT_F64:
    if (vt == VT_F64) return vm_broadcast(m, vt, 0, p->f, 0, set);
    if (vt == VT_I64 && p->f >= -9223372036854775808.0 && p->f < 9223372036854775808.0 &&
        p->f == (double)(int64_t)p->f)
      return vm_broadcast(m, vt, (int64_t)p->f, 0, 0, set);
    break;
  case RT_STR:
    if (vt == VT_STR) return vm_broadcast(m, vt, 0, 0, p->s, set);
    break;
  default:
    return vm_nullvec(m, vt, set);
  }
  char msg[96];
  snprintf(msg, sizeof msg, "parameter %d has a value of another type than the query was compiled for",
           e->param);
  return vm_fail(m, msg);
}

/* ---- unary ---------------------------------------------------------------- */

static vm_vec *vm_unary(vm *m, const ir_expr *e, const vm_set *set) {
  vm_vec *a = vm_eval(m, e->args[0], set);
  if (!a) return NULL;
  vm_vec *r = NULL;
  bool ovf = false;
  switch (e->kind) {
  case IX_ISNULL:
  case IX_NOTNULL: {
    r = vm_vec_get(m, VT_I64);
    if (!r) return NULL;
    int64_t *o = r->v;
    int64_t want = e->kind == IX_ISNULL;
    if (a->anynull) {
      const uint8_t *z = a->nul;
      VM_EACH(set, i, o[i] = z[i] == want;);
    } else {
      VM_EACH(set, i, o[i] = !want;);
    }
    break;
  }
  case IX_NOT: {
    a = vm_truthy(m, a, set);
    if (!a) return NULL;
    r = vm_vec_get(m, VT_I64);
    if (!r) return NULL;
    int64_t *o = r->v;
    const int64_t *x = a->v;
    VM_EACH(set, i, o[i] = x[i] == 0;);
    vm_merge_nulls(r, a, NULL, set);
    vm_zero_nulls(r, set);
    break;
  }
  case IX_BITNOT: {
    a = vm_coerce(m, a, VT_I64, set);
    if (!a) return NULL;
    r = vm_vec_get(m, VT_I64);
    if (!r) return NULL;
    int64_t *o = r->v;
    const int64_t *x = a->v;
    VM_EACH(set, i, o[i] = ~x[i];);
    vm_merge_nulls(r, a, NULL, set);
    vm_zero_nulls(r, set);
    break;
  }
  case IX_NEG:
  case IX_ABS: {
    if (a->vt == VT_STR) {
      a = vm_coerce(m, a, vm_vt_of(e->type) == VT_F64 ? VT_F64 : VT_I64, set);
      if (!a) return NULL;
    }
    r = vm_vec_get(m, a->vt);
    if (!r) return NULL;
    if (a->vt == VT_F64) {
      double *o = r->v;
      const double *x = a->v;
      if (e->kind == IX_NEG) VM_EACH(set, i, o[i] = -x[i];);
      else VM_EACH(set, i, o[i] = fabs(x[i]););
    } else {
      int64_t *o = r->v;
      const int64_t *x = a->v;
      /* -INT64_MIN and abs(INT64_MIN) do not fit (in a non-NULL lane). */
      const uint8_t *an = a->anynull ? a->nul : NULL;
      if (e->kind == IX_NEG)
        VM_EACH(set, i, uint8_t big = x[i] == INT64_MIN; ovf |= big & !(an && an[i]);
                o[i] = big ? 0 : -x[i];);
      else
        VM_EACH(set, i, uint8_t big = x[i] == INT64_MIN; ovf |= big & !(an && an[i]);
                o[i] = big ? 0 : x[i] < 0 ? -x[i] : x[i];);
    }
    vm_merge_nulls(r, a, NULL, set);
    vm_zero_nulls(r, set);   /* -0.0 back to 0.0 */
    break;
  }
  default:
    vm_vec_put(m, a);
    return vm_fail(m, "unexpected unary expression");
  }
  vm_vec_put(m, a);
  if (ovf) {
    vm_vec_put(m, r);
    return vm_fail(m, "integer overflow");
  }
  return r;
}

/* ---- arithmetic ------------------------------------------------------------ */

/* Brings two operands to one representation: numbers meet as doubles when
 * either is a double; strings in arithmetic are converted as SQLite would. */
static int vm_unify_numeric(vm *m, vm_vec **a, vm_vec **b, bool ints_only, const vm_set *set) {
  int vt = ints_only ? VT_I64
                     : ((*a)->vt == VT_F64 || (*b)->vt == VT_F64) ? VT_F64 : VT_I64;
  if ((*a)->vt != vt && !(*a = vm_coerce(m, *a, vt, set))) return -1;
  if ((*b)->vt != vt && !(*b = vm_coerce(m, *b, vt, set))) return -1;
  return vt;
}

static vm_vec *vm_arith(vm *m, const ir_expr *e, const vm_set *set) {
  vm_vec *a = vm_eval(m, e->args[0], set);
  if (!a) return NULL;
  vm_vec *b = vm_eval(m, e->args[1], set);
  if (!b) {
    vm_vec_put(m, a);
    return NULL;
  }
  bool bitop = e->kind == IX_BITAND || e->kind == IX_BITOR || e->kind == IX_SHL ||
               e->kind == IX_SHR;
  if (e->args[0]->type == RT_NULLT || e->args[1]->type == RT_NULLT) {
    vm_vec_put(m, a);
    vm_vec_put(m, b);
    return vm_nullvec(m, vm_vt_of(e->type), set);
  }
  int vt = vm_unify_numeric(m, &a, &b, bitop, set);
  if (vt < 0) {
    vm_vec_put(m, a);
    vm_vec_put(m, b);
    return NULL;
  }
  vm_vec *r = vm_vec_get(m, vt);
  if (!r) return NULL;
  vm_merge_nulls(r, a, b, set);
  bool ovf = false;
  if (vt == VT_I64) {
    const int64_t *x = a->v, *y = b->v;
    int64_t *o = r->v;
    /* A NULL lane's slot holds whatever its operands' slots made (0 + the
     * other side), so it may overflow: only non-NULL lanes count, as in
     * the JIT, which tests overflow under the row's NULL flag. */
    const uint8_t *rn = r->anynull ? r->nul : NULL;
#define VM_CHECKED(op)                                                          \
  do {                                                                          \
    if (rn) VM_EACH(set, i, ovf |= op(x[i], y[i], &o[i]) & (rn[i] ^ 1););       \
    else VM_EACH(set, i, ovf |= op(x[i], y[i], &o[i]););                        \
  } while (0)
    switch (e->kind) {
    case IX_ADD: VM_CHECKED(__builtin_add_overflow); break;
    case IX_SUB: VM_CHECKED(__builtin_sub_overflow); break;
    case IX_MUL: VM_CHECKED(__builtin_mul_overflow); break;
#undef VM_CHECKED
    case IX_DIV:
    case IX_MOD: {
      /* NULL slots are 0, so a NULL divisor lands in the by-zero case. */
      uint8_t *z = vm_nul_begin(r, set);
      uint8_t any = 0;
      if (e->kind == IX_DIV)
        VM_EACH(set, i, int64_t d = y[i]; uint8_t zero = d == 0; any |= zero; z[i] |= zero;
                uint8_t bad = d == -1 && x[i] == INT64_MIN && !(rn && rn[i]); ovf |= bad;
                o[i] = zero || bad ? 0 : d == -1 ? -x[i] : x[i] / d;);
      else
        /* INT64_MIN % -1 is 0 (and UB in C), as in SQLite. */
        VM_EACH(set, i, int64_t d = y[i]; uint8_t zero = d == 0; any |= zero; z[i] |= zero;
                o[i] = zero || d == -1 ? 0 : x[i] % d;);
      r->anynull |= any != 0;
      break;
    }
    case IX_BITAND: VM_EACH(set, i, o[i] = x[i] & y[i];); break;
    case IX_BITOR: VM_EACH(set, i, o[i] = x[i] | y[i];); break;
    case IX_SHL: VM_EACH(set, i, o[i] = rt_fn_shl(x[i], y[i]);); vm_zero_nulls(r, set); break;
    case IX_SHR: VM_EACH(set, i, o[i] = rt_fn_shr(x[i], y[i]);); break;
    default: break;
    }
    vm_zero_nulls(r, set);   /* NULL slots hold 0 for the next operator */
  } else {
    const double *x = a->v, *y = b->v;
    double *o = r->v;
    switch (e->kind) {
    case IX_ADD: VM_EACH(set, i, o[i] = x[i] + y[i];); break;
    case IX_SUB: VM_EACH(set, i, o[i] = x[i] - y[i];); break;
    case IX_MUL: VM_EACH(set, i, o[i] = x[i] * y[i];); break;
    /* (the binder lowers a real % to integers: ir/verify.c refuses a
     * double MOD) */
    case IX_DIV: VM_EACH(set, i, o[i] = y[i] == 0.0 ? NAN : x[i] / y[i];); break;
    default: break;
    }
    /* SQLite turns a NaN result (0/0, inf-inf, by zero above) into NULL. */
    uint8_t *z = vm_nul_begin(r, set);
    uint8_t any = 0;
    VM_EACH(set, i, uint8_t n = o[i] != o[i]; any |= n; z[i] |= n; if (n) o[i] = 0.0;);
    r->anynull |= any != 0;
    vm_zero_nulls(r, set);
  }
  vm_vec_put(m, a);
  vm_vec_put(m, b);
  if (ovf) {
    vm_vec_put(m, r);
    return vm_fail(m, "integer overflow");
  }
  return r;
}

/* ---- comparisons ----------------------------------------------------------- */

/* Unifies comparison operands; a string against a number is an error. An
 * integer against a double stays as it is (VT_MIXED): it is compared by
 * value, never through a double. */
enum { VT_MIXED = -2 };
static int vm_unify_cmp(vm *m, vm_vec **a, vm_vec **b, const vm_set *set) {
  (void)set;
  if ((*a)->vt == (*b)->vt) return (*a)->vt;
  if ((*a)->vt == VT_STR || (*b)->vt == VT_STR) {
    vm_fail(m, "cannot compare a string with a number");
    return -1;
  }
  return VT_MIXED;
}

#define VM_CMP_LOOPS(x, y, set, o, kind)                                       \
  switch (kind) {                                                              \
  case IX_EQ: VM_EACH(set, i, o[i] = x[i] == y[i];); break;                    \
  case IX_NE: VM_EACH(set, i, o[i] = x[i] != y[i];); break;                    \
  case IX_LT: VM_EACH(set, i, o[i] = x[i] < y[i];); break;                     \
  case IX_LE: VM_EACH(set, i, o[i] = x[i] <= y[i];); break;                    \
  case IX_GT: VM_EACH(set, i, o[i] = x[i] > y[i];); break;                     \
  case IX_GE: VM_EACH(set, i, o[i] = x[i] >= y[i];); break;                    \
  default: break;                                                              \
  }

static vm_vec *vm_compare(vm *m, const ir_expr *e, const vm_set *set) {
  vm_vec *a = vm_eval(m, e->args[0], set);
  if (!a) return NULL;
  vm_vec *b = vm_eval(m, e->args[1], set);
  if (!b) {
    vm_vec_put(m, a);
    return NULL;
  }
  bool is = e->kind == IX_IS || e->kind == IX_ISNOT;
  bool nullt = e->args[0]->type == RT_NULLT || e->args[1]->type == RT_NULLT;
  int vt;
  if (nullt) {
    /* Only NULL-ness matters: the NULL side becomes NULLs of the other's
     * representation. */
    if (e->args[0]->type == RT_NULLT) {
      vt = b->vt;
      vm_vec_put(m, a);
      if (!(a = vm_nullvec(m, vt, set))) return NULL;
    } else {
      vt = a->vt;
      vm_vec_put(m, b);
      if (!(b = vm_nullvec(m, vt, set))) return NULL;
    }
  } else {
    vt = vm_unify_cmp(m, &a, &b, set);
  }
  if (vt < 0 && vt != VT_MIXED) {
    vm_vec_put(m, a);
    vm_vec_put(m, b);
    return NULL;
  }
  vm_vec *r = vm_vec_get(m, VT_I64);
  if (!r) return NULL;
  int64_t *o = r->v;
  ir_exkind kind = is ? IX_EQ : e->kind;
  if (nullt && !is) {
    vm_vec_put(m, a);
    vm_vec_put(m, b);
    vm_vec_put(m, r);
    return vm_nullvec(m, VT_I64, set);
  }
  if (vt == VT_MIXED) {
    /* c[i] = sign of (a - b) by value; zero (the comparison's own
     * constant) stands in for the other side. */
    const int64_t *x = a->vt == VT_I64 ? a->v : b->v;
    const double *y = a->vt == VT_F64 ? a->v : b->v;
    int64_t flip = a->vt == VT_I64 ? 1 : -1;
    VM_EACH(set, i, o[i] = flip * rt_cmp_i64_f64(x[i], y[i]););
    const int64_t zero = 0;
    switch (kind) {
    case IX_EQ: VM_EACH(set, i, o[i] = o[i] == zero;); break;
    case IX_NE: VM_EACH(set, i, o[i] = o[i] != zero;); break;
    case IX_LT: VM_EACH(set, i, o[i] = o[i] < zero;); break;
    case IX_LE: VM_EACH(set, i, o[i] = o[i] <= zero;); break;
    case IX_GT: VM_EACH(set, i, o[i] = o[i] > zero;); break;
    case IX_GE: VM_EACH(set, i, o[i] = o[i] >= zero;); break;
    default: break;
    }
  } else if (vt == VT_I64) {
    const int64_t *x = a->v, *y = b->v;
    VM_CMP_LOOPS(x, y, set, o, kind);
  } else if (vt == VT_F64) {
    const double *x = a->v, *y = b->v;
    VM_CMP_LOOPS(x, y, set, o, kind);
  } else {
    const uint32_t *x = a->v, *y = b->v;
    const rt_strpool *sp = m->sp;
    switch (kind) {
    /* Interned: equal strings have equal ids. */
    case IX_EQ: VM_EACH(set, i, o[i] = x[i] == y[i];); break;
    case IX_NE: VM_EACH(set, i, o[i] = x[i] != y[i];); break;
    case IX_LT: VM_EACH(set, i, o[i] = x[i] != y[i] && rt_str_cmp(sp, x[i], y[i]) < 0;); break;
    case IX_LE: VM_EACH(set, i, o[i] = x[i] == y[i] || rt_str_cmp(sp, x[i], y[i]) <= 0;); break;
    case IX_GT: VM_EACH(set, i, o[i] = x[i] != y[i] && rt_str_cmp(sp, x[i], y[i]) > 0;); break;
    case IX_GE: VM_EACH(set, i, o[i] = x[i] == y[i] || rt_str_cmp(sp, x[i], y[i]) >= 0;); break;
    default: break;
    }
  }
  if (is) {
    /* IS: equal when both NULL, or both non-NULL with equal values. */
    int64_t flip = e->kind == IX_ISNOT;
    if (a->anynull || b->anynull) {
      const uint8_t *an = a->anynull ? a->nul : NULL, *bn = b->anynull ? b->nul : NULL;
      if (an && bn)
        VM_EACH(set, i, o[i] = ((an[i] & bn[i]) | (((an[i] | bn[i]) ^ 1) & (uint8_t)o[i])) ^ flip;);
      else {
        const uint8_t *z = an ? an : bn;
        VM_EACH(set, i, o[i] = ((z[i] ^ 1) & (uint8_t)o[i]) ^ flip;);
      }
    } else if (flip) {
      VM_EACH(set, i, o[i] ^= 1;);
    }
  } else {
    vm_merge_nulls(r, a, b, set);
    vm_zero_nulls(r, set);
  }
  vm_vec_put(m, a);
  vm_vec_put(m, b);
  return r;
}

/* match[i] = a[i] equals b[i] (values only), over set. Numbers compare as
 * numbers; a string never equals a number. */
static void vm_equal_into(uint8_t *match, const vm_vec *a, const vm_vec *b, const vm_set *set) {
  if (a->vt == VT_STR || b->vt == VT_STR) {
    if (a->vt != b->vt) {
      VM_EACH(set, i, match[i] = 0;);
      return;
    }
    const uint32_t *x = a->v, *y = b->v;
    VM_EACH(set, i, match[i] = x[i] == y[i];);
  } else if (a->vt == VT_I64 && b->vt == VT_I64) {
    const int64_t *x = a->v, *y = b->v;
    VM_EACH(set, i, match[i] = x[i] == y[i];);
  } else if (a->vt == VT_F64 && b->vt == VT_F64) {
    const double *x = a->v, *y = b->v;
    VM_EACH(set, i, match[i] = x[i] == y[i];);
  } else {
    /* by value, not through a double (rt_cmp_i64_f64) */
    const int64_t *x = a->vt == VT_I64 ? a->v : b->v;
    const double *y = a->vt == VT_F64 ? a->v : b->v;
    VM_EACH(set, i, match[i] = rt_cmp_i64_f64(x[i], y[i]) == 0;);
  }
}

/* ---- logic ---------------------------------------------------------------- */

static vm_vec *vm_and_or(vm *m, const ir_expr *e, const vm_set *set) {
  bool is_and = e->kind == IX_AND;
  vm_vec *a = vm_eval_bool(m, e->args[0], set);
  if (!a) return NULL;
  const int64_t *x = a->v;
  const uint8_t *an = a->anynull ? a->nul : NULL;
  /* Rows whose result the left side does not decide: AND → left not FALSE;
   * OR → left not TRUE (NULL slots hold 0, so x == 0 covers NULL). */
  uint32_t *ri = vm_idx_get(m);
  if (!ri) return NULL;
  uint32_t nr = 0;
  if (is_and) {
    if (an) VM_EACH(set, i, ri[nr] = i; nr += an[i] | (x[i] != 0););
    else VM_EACH(set, i, ri[nr] = i; nr += x[i] != 0;);
  } else {
    VM_EACH(set, i, ri[nr] = i; nr += x[i] == 0;);
  }
  vm_vec *r = vm_vec_get(m, VT_I64);
  if (!r) return NULL;
  int64_t *o = r->v;
  uint8_t *z = r->nul;
  int64_t decided = is_and ? 0 : 1;
  VM_EACH(set, i, o[i] = decided; z[i] = 0;);
  if (nr) {
    vm_set rs = {ri, nr};
    vm_vec *b = vm_eval_bool(m, e->args[1], &rs);
    if (!b) {
      vm_idx_put(m, ri);
      vm_vec_put(m, a);
      vm_vec_put(m, r);
      return NULL;
    }
    const int64_t *y = b->v;
    const uint8_t *bn = b->anynull ? b->nul : NULL;
    if (an || bn) {
      if (is_and) {
        /* FALSE if the right is FALSE; else NULL if either is NULL. */
        VM_EACH(&rs, i, uint8_t ln = an ? an[i] : 0; uint8_t rn = bn ? bn[i] : 0;
                uint8_t rfalse = (rn ^ 1) & (y[i] == 0);
                uint8_t n = (ln | rn) & (rfalse ^ 1); z[i] = n;
                o[i] = (x[i] != 0) & (y[i] != 0););
      } else {
        /* TRUE if the right is TRUE; else NULL if either is NULL. */
        VM_EACH(&rs, i, uint8_t ln = an ? an[i] : 0; uint8_t rn = bn ? bn[i] : 0;
                uint8_t rtrue = y[i] != 0; z[i] = (ln | rn) & (rtrue ^ 1); o[i] = rtrue;);
      }
      r->anynull = true;
    } else {
      /* No NULLs: the right side decides every remaining row. */
      VM_EACH(&rs, i, o[i] = y[i] != 0;);
    }
    vm_vec_put(m, b);
  }
  vm_idx_put(m, ri);
  vm_vec_put(m, a);
  return r;
}

static vm_vec *vm_in(vm *m, const ir_expr *e, const vm_set *set) {
  vm_vec *x = vm_eval(m, e->args[0], set);
  if (!x) return NULL;
  vm_vec *r = vm_vec_get(m, VT_I64);
  if (!r) return NULL;
  int64_t *o = r->v;
  uint8_t *z = r->nul;   /* while looping: "some item was NULL" */
  VM_EACH(set, i, o[i] = 0; z[i] = 0;);
  vm_vec *match = vm_vec_get(m, VT_I64);
  if (!match) return NULL;
  uint8_t *eq = match->own_nul;   /* used as a byte array */
  for (int k = 1; k < e->nargs; k++) {
    vm_vec *v = vm_eval(m, e->args[k], set);
    if (!v) {
      vm_vec_put(m, match);
      vm_vec_put(m, x);
      vm_vec_put(m, r);
      return NULL;
    }
    vm_equal_into(eq, x, v, set);
    if (v->anynull) {
      const uint8_t *vn = v->nul;
      VM_EACH(set, i, o[i] |= eq[i] & (vn[i] ^ 1); z[i] |= vn[i];);
    } else {
      VM_EACH(set, i, o[i] |= eq[i];);
    }
    vm_vec_put(m, v);
  }
  /* NULL on the left → NULL; a match → TRUE; else NULL if an item was. */
  if (x->anynull) {
    const uint8_t *xn = x->nul;
    VM_EACH(set, i, uint8_t hit = (uint8_t)o[i] & (xn[i] ^ 1); o[i] = hit;
            z[i] = (z[i] | xn[i]) & (hit ^ 1););
  } else {
    VM_EACH(set, i, z[i] &= (uint8_t)(o[i] ^ 1););
  }
  r->anynull = true;
  vm_vec_put(m, match);
  vm_vec_put(m, x);
  return r;
}

/* ---- conditionals ----------------------------------------------------------- */

/* What CASE and COALESCE work in: the result (its rows of the set not
 * NULL to start with) and three row lists to split the set into. */
typedef struct vm_branches {
  vm_vec *r;
  uint32_t *rows[3];
} vm_branches;

static bool branches_get(vm *m, int vt, const vm_set *set, vm_branches *br) {
  br->r = vm_vec_get(m, vt);
  for (int k = 0; k < 3; k++) br->rows[k] = br->r ? vm_idx_get(m) : NULL;
  if (!br->r || !br->rows[0] || !br->rows[1] || !br->rows[2]) return false;
  uint8_t *z = br->r->nul;
  VM_EACH(set, i, z[i] = 0;);
  return true;
}

/* Gives the row lists back, and the result unless ok: it, or NULL. */
static vm_vec *branches_put(vm *m, vm_branches *br, bool ok) {
  for (int k = 0; k < 3; k++)
    if (br->rows[k]) vm_idx_put(m, br->rows[k]);
  if (!ok && br->r) vm_vec_put(m, br->r);
  return ok ? br->r : NULL;
}

/* x over the rows of set, in type vt, into those rows of r (CASE's
 * branches); false when out of memory or an error was raised. */
static bool eval_into(vm *m, const ir_expr *x, int vt, const vm_set *set, vm_vec *r) {
  vm_vec *t = vm_eval(m, x, set);
  if (t) t = vm_coerce(m, t, vt, set);
  if (!t) return false;
  vm_scatter(r, t, set);
  vm_vec_put(m, t);
  return true;
}

static vm_vec *vm_case(vm *m, const ir_expr *e, const vm_set *set) {
  int vt = vm_vt_of(e->type);
  vm_branches br;
  if (!branches_get(m, vt, set, &br)) return branches_put(m, &br, false);
  vm_vec *r = br.r;
  uint32_t *rem = br.rows[0], *yes = br.rows[1], *no = br.rows[2];
  vm_set cur = *set;
  int npairs = (e->nargs - 1) / 2;
  vm_vec *fail = r;   /* non-NULL until something fails */
  for (int k = 0; k < npairs && cur.n > 0 && fail; k++) {
    vm_vec *w = vm_eval_bool(m, e->args[2 * k], &cur);
    if (!w) {
      fail = NULL;
      break;
    }
    uint32_t ny = 0, nn = 0;
    vm_split_truth(w, &cur, yes, &ny, no, &nn);
    vm_vec_put(m, w);
    vm_set ys = {yes, ny};
    if (ny && !eval_into(m, e->args[2 * k + 1], vt, &ys, r)) {
      fail = NULL;
      break;
    }
    uint32_t *tmp = rem;
    rem = no;
    no = tmp;
    cur = (vm_set){rem, nn};
  }
  br.rows[0] = rem, br.rows[2] = no;   /* swapped: give back what is held */
  if (fail && cur.n > 0 && !eval_into(m, e->args[e->nargs - 1], vt, &cur, r)) fail = NULL;
  return branches_put(m, &br, fail != NULL);
}

static vm_vec *vm_coalesce(vm *m, const ir_expr *e, const vm_set *set) {
  int vt = vm_vt_of(e->type);
  vm_branches br;
  if (!branches_get(m, vt, set, &br)) return branches_put(m, &br, false);
  vm_vec *r = br.r;
  uint8_t *z = r->nul;
  uint32_t *a = br.rows[0], *b = br.rows[1], *c = br.rows[2];
  vm_set cur = *set;
  bool ok = true;
  for (int k = 0; k < e->nargs && cur.n > 0; k++) {
    vm_vec *v = vm_eval(m, e->args[k], &cur);
    if (v) v = vm_coerce(m, v, vt, &cur);
    if (!v) {
      ok = false;
      break;
    }
    if (k == e->nargs - 1 || !v->anynull) {
      vm_scatter(r, v, &cur);
      vm_vec_put(m, v);
      cur.n = 0;
      break;
    }
    /* Take the non-NULL rows; the NULL ones go on to the next argument. */
    const uint8_t *vn = v->nul;
    uint32_t nt = 0, nr = 0;
    VM_EACH(&cur, i, b[nt] = i; nt += vn[i] ^ 1; c[nr] = i; nr += vn[i];);
    vm_set taken = {b, nt};
    vm_scatter(r, v, &taken);
    vm_vec_put(m, v);
    uint32_t *t = a;
    a = c;
    c = t;
    cur = (vm_set){a, nr};
  }
  br.rows[0] = a, br.rows[2] = c;   /* swapped: give back what is held */
  if (!branches_put(m, &br, ok)) return NULL;
  if (cur.n > 0) {
    /* No arguments left (cannot happen with nargs >= 1): NULL. */
    VM_EACH(&cur, i, z[i] = 1;);
    r->anynull = true;
  }
  return r;
}

static vm_vec *vm_nullif(vm *m, const ir_expr *e, const vm_set *set) {
  int vt = vm_vt_of(e->type);
  vm_vec *a = vm_eval(m, e->args[0], set);
  if (a) a = vm_coerce(m, a, vt, set);
  if (!a) return NULL;
  vm_vec *b = vm_eval(m, e->args[1], set);
  if (!b) {
    vm_vec_put(m, a);
    return NULL;
  }
  if (!(a = vm_own(m, a, set))) return NULL;
  vm_vec *match = vm_vec_get(m, VT_I64);
  if (!match) return NULL;
  uint8_t *eq = match->own_nul;
  vm_equal_into(eq, a, b, set);
  uint8_t *z = vm_nul_begin(a, set);
  const uint8_t *bn = b->anynull ? b->nul : NULL;
  /* NULL when both are non-NULL and equal (a NULL slot of a is already NULL). */
  if (bn) VM_EACH(set, i, z[i] |= eq[i] & (bn[i] ^ 1););
  else VM_EACH(set, i, z[i] |= eq[i];);
  a->anynull = true;
  vm_zero_nulls(a, set);
  vm_vec_put(m, match);
  vm_vec_put(m, b);
  return a;
}

/* Scalar min()/max(): NULL when any argument is NULL. */
static vm_vec *vm_minmax(vm *m, const ir_expr *e, const vm_set *set) {
  int vt = vm_vt_of(e->type);
  bool is_min = e->kind == IX_MIN;
  vm_vec *r = vm_eval(m, e->args[0], set);
  if (r) r = vm_coerce(m, r, vt, set);
  if (!r) return NULL;
  if (!(r = vm_own(m, r, set))) return NULL;
  for (int k = 1; k < e->nargs; k++) {
    vm_vec *v = vm_eval(m, e->args[k], set);
    if (v) v = vm_coerce(m, v, vt, set);
    if (!v) {
      vm_vec_put(m, r);
      return NULL;
    }
    if (vt == VT_I64) {
      int64_t *o = r->v;
      const int64_t *x = v->v;
      if (is_min) VM_EACH(set, i, o[i] = x[i] < o[i] ? x[i] : o[i];);
      else VM_EACH(set, i, o[i] = x[i] > o[i] ? x[i] : o[i];);
    } else if (vt == VT_F64) {
      double *o = r->v;
      const double *x = v->v;
      if (is_min) VM_EACH(set, i, o[i] = x[i] < o[i] ? x[i] : o[i];);
      else VM_EACH(set, i, o[i] = x[i] > o[i] ? x[i] : o[i];);
    } else {
      uint32_t *o = r->v;
      const uint32_t *x = v->v;
      const rt_strpool *sp = m->sp;
      if (is_min) VM_EACH(set, i, if (rt_str_cmp(sp, x[i], o[i]) < 0) o[i] = x[i];);
      else VM_EACH(set, i, if (rt_str_cmp(sp, x[i], o[i]) > 0) o[i] = x[i];);
    }
    if (v->anynull) {
      uint8_t *z = vm_nul_begin(r, set);
      const uint8_t *vn = v->nul;
      VM_EACH(set, i, z[i] |= vn[i];);
      r->anynull = true;
    }
    vm_vec_put(m, v);
  }
  vm_zero_nulls(r, set);
  return r;
}

/* ---- dispatch ------------------------------------------------------------- */

vm_vec *vm_eval(vm *m, const ir_expr *e, const vm_set *set) {
  switch (e->kind) {
  case IX_CONST: return vm_const(m, e, set);
  case IX_COL: return vm_col(m, e, set);
  case IX_PARAM: return vm_param(m, e, set);
  case IX_NEG:
  case IX_ABS:
  case IX_BITNOT:
  case IX_NOT:
  case IX_ISNULL:
  case IX_NOTNULL: return vm_unary(m, e, set);
  case IX_ADD:
  case IX_SUB:
  case IX_MUL:
  case IX_DIV:
  case IX_MOD:
  case IX_BITAND:
  case IX_BITOR:
  case IX_SHL:
  case IX_SHR: return vm_arith(m, e, set);
  case IX_EQ:
  case IX_NE:
  case IX_LT:
  case IX_LE:
  case IX_GT:
  case IX_GE:
  case IX_IS:
  case IX_ISNOT: return vm_compare(m, e, set);
  case IX_AND:
  case IX_OR: return vm_and_or(m, e, set);
  case IX_IN: return vm_in(m, e, set);
  case IX_CASE: return vm_case(m, e, set);
  case IX_COALESCE: return vm_coalesce(m, e, set);
  case IX_NULLIF: return vm_nullif(m, e, set);
  case IX_MIN:
  case IX_MAX: return vm_minmax(m, e, set);
  case IX_CALLOUT: return vm_eval_callout(m, e, set);
  case IX_TOF64:
  case IX_CONCAT:
  case IX_LIKE:
  case IX_GLOB:
  case IX_TOINT:
  case IX_TOSTR:
  case IX_STRTOF64:
  case IX_LENGTH:
  case IX_LOWER:
  case IX_UPPER:
  case IX_SUBSTR:
  case IX_INSTR:
  case IX_TRIM:
  case IX_LTRIM:
  case IX_RTRIM:
  case IX_ROUND:
  case IX_SIGN:
  case IX_REPLACE:
  case IX_HEX:
  case IX_UNICODE:
  case IX_CHAR: return vm_eval_strfn(m, e, set);
  case IX_PRINTF: return vm_eval_printf(m, e, set);
  case IX__COUNT: break;
  }
  return vm_fail(m, "unexpected expression");
}
