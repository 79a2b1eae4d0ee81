/*
 * vm_agg.c — the interpreter's AGGREGATE sink: group numbers for the
 * batch's active rows, then one tight update loop per live aggregate.
 *
 * Group lookup uses the runtime's table (rt_aggtab): with one integer or
 * string key the one-key fast path (rt_aggtab_group_i64 / _null, the same
 * probe the JIT inlines), otherwise key tuples through rt_aggtab_group.
 * State layout and meaning are documented in runtime/store.h; the JIT
 * writes the same arrays, so a run may switch backends between batches.
 */
#include <stdlib.h>

#include "vm.h"

/* Group number of every active row into m->groups. */
static int vm_agg_groups(vm *m, const ir_op *op, rt_batch *b, const vm_set *set) {
  rt_aggtab *t = m->s->agg;
  int64_t *g = m->groups;
  if (op->agg.ngroup == 0) {
    VM_EACH(set, i, g[i] = 0;);
    return 0;
  }
  vm_vec *keys[op->agg.ngroup];
  for (int k = 0; k < op->agg.ngroup; k++)
    if (!(keys[k] = vm_load_view(m, &b->cols[op->agg.group_cols[k]], set))) return -1;
  if (op->agg.ngroup == 1 && keys[0]->vt != VT_F64) {
    vm_vec *k = keys[0];
    const uint8_t *z = k->nul;
    /* Equal keys often come in runs (sorted or clustered input): reuse the
     * previous row's group before probing. */
    int64_t pk = 0, pg = -1;
#define VM_GROUP_LOOP(x)                                                       \
  do {                                                                         \
    if (k->anynull)                                                            \
      VM_EACH(set, i, {                                                        \
        if (z[i]) { g[i] = rt_aggtab_group_null(t); continue; }               \
        int64_t kv = (int64_t)x[i];                                            \
        if (pg >= 0 && kv == pk) { g[i] = pg; continue; }                      \
        pg = g[i] = rt_aggtab_group_i64(t, kv);                                \
        pk = kv;                                                               \
      });                                                                      \
    else                                                                       \
      VM_EACH(set, i, {                                                        \
        int64_t kv = (int64_t)x[i];                                            \
        if (pg >= 0 && kv == pk) { g[i] = pg; continue; }                      \
        pg = g[i] = rt_aggtab_group_i64(t, kv);                                \
        pk = kv;                                                               \
      });                                                                      \
  } while (0)
    if (k->vt == VT_STR) {
      const uint32_t *x = k->v;
      VM_GROUP_LOOP(x);
    } else {
      const int64_t *x = k->v;
      VM_GROUP_LOOP(x);
    }
#undef VM_GROUP_LOOP
  } else {
    int64_t *vals = m->keyvals;
    uint8_t *isnull = m->keynull;
    int nk = op->agg.ngroup;
    VM_EACH(set, i, {
      for (int k = 0; k < nk; k++) {
        const vm_vec *kv = keys[k];
        isnull[k] = kv->anynull ? kv->nul[i] : 0;
        if (kv->vt == VT_F64) {
          /* -0.0 and 0.0 are one group: fold before taking the bits. */
          double d = ((const double *)kv->v)[i];
          if (d == 0.0) d = 0.0;
          memcpy(&vals[k], &d, sizeof d);
        } else if (kv->vt == VT_STR) {
          vals[k] = ((const uint32_t *)kv->v)[i];
        } else {
          vals[k] = ((const int64_t *)kv->v)[i];
        }
      }
      g[i] = rt_aggtab_group(t, vals, isnull);
    });
  }
  for (int k = 0; k < op->agg.ngroup; k++) vm_vec_put(m, keys[k]);
  /* The table returns -1 when it cannot grow. */
  int64_t bad = 0;
  VM_EACH(set, i, bad |= g[i];);
  if (bad < 0) {
    vm_fail(m, "out of memory");
    return -1;
  }
  return 0;
}

/* Updates aggregate `a` from argument vector v (NULL for COUNT(*)). */
static int vm_agg_one(vm *m, rt_agg *a, const vm_vec *v, const vm_set *set) {
  const int64_t *g = m->groups;
  const uint8_t *z = v && v->anynull ? v->nul : NULL;
  uint8_t *has = a->has;
  switch (a->kind) {
  case RT_AGG_COUNT_STAR: {
    int64_t *c = a->i;
    VM_EACH(set, i, c[g[i]]++;);
    break;
  }
  case RT_AGG_COUNT: {
    int64_t *c = a->i;
    if (z) VM_EACH(set, i, c[g[i]] += z[i] ^ 1;);
    else VM_EACH(set, i, c[g[i]]++;);
    break;
  }
  case RT_AGG_SUM:
    if (v->vt == VT_F64) {
      /* NULL slots are 0.0: adding them is harmless, only `has` needs the flag. */
      double *f = a->f;
      const double *x = v->v;
      if (z) VM_EACH(set, i, f[g[i]] += x[i]; has[g[i]] |= z[i] ^ 1;);
      else VM_EACH(set, i, f[g[i]] += x[i]; has[g[i]] = 1;);
    } else {
      int64_t *s = a->i;
      const int64_t *x = v->v;
      bool ovf = false;
      if (z) VM_EACH(set, i, ovf |= __builtin_add_overflow(s[g[i]], x[i], &s[g[i]]); has[g[i]] |= z[i] ^ 1;);
      else VM_EACH(set, i, ovf |= __builtin_add_overflow(s[g[i]], x[i], &s[g[i]]); has[g[i]] = 1;);
      if (ovf) {
        vm_fail(m, "integer overflow");
        return -1;
      }
    }
    break;
  case RT_AGG_AVG: {
    double *f = a->f;
    int64_t *n = a->n;
    if (v->vt == VT_F64) {
      const double *x = v->v;
      if (z) VM_EACH(set, i, uint8_t ok = z[i] ^ 1; f[g[i]] += x[i]; n[g[i]] += ok; has[g[i]] |= ok;);
      else VM_EACH(set, i, f[g[i]] += x[i]; n[g[i]]++; has[g[i]] = 1;);
    } else {
      const int64_t *x = v->v;
      if (z) VM_EACH(set, i, uint8_t ok = z[i] ^ 1; f[g[i]] += (double)x[i]; n[g[i]] += ok; has[g[i]] |= ok;);
      else VM_EACH(set, i, f[g[i]] += (double)x[i]; n[g[i]]++; has[g[i]] = 1;);
    }
    break;
  }
  case RT_AGG_MIN:
  case RT_AGG_MAX: {
    bool mn = a->kind == RT_AGG_MIN;
    /* A NULL row never replaces; the first non-NULL value always does. */
#define VM_MINMAX(T, x, cur, better)                                           \
  VM_EACH(set, i, {                                                            \
    if (z && z[i]) continue;                                                   \
    int64_t gi = g[i];                                                         \
    T xv = x[i];                                                               \
    if (!has[gi] || (better)) { cur[gi] = xv; has[gi] = 1; }                   \
  })
    if (v->vt == VT_F64) {
      const double *x = v->v;
      double *c = a->f;
      if (mn) VM_MINMAX(double, x, c, xv < c[gi]);
      else VM_MINMAX(double, x, c, xv > c[gi]);
    } else if (v->vt == VT_STR) {
      const uint32_t *x = v->v;
      int64_t *c = a->i;
      const rt_strpool *sp = m->sp;
      if (mn) VM_MINMAX(uint32_t, x, c, rt_str_cmp(sp, xv, (uint32_t)c[gi]) < 0);
      else VM_MINMAX(uint32_t, x, c, rt_str_cmp(sp, xv, (uint32_t)c[gi]) > 0);
    } else {
      const int64_t *x = v->v;
      int64_t *c = a->i;
      if (mn) VM_MINMAX(int64_t, x, c, xv < c[gi]);
      else VM_MINMAX(int64_t, x, c, xv > c[gi]);
    }
#undef VM_MINMAX
    break;
  }
  case RT_AGG_COUNT_DISTINCT: case RT_AGG_ARG_MAX: case RT_AGG_ARG_MIN: case RT_AGG_GROUP_CONCAT:
  case RT_AGG_MEDIAN: case RT_AGG_PERCENTILE: case RT_AGG_FIRST: case RT_AGG_LAST:
    break;   /* vm_agg_x */
  case RT_AGG_ANY_VALUE:
    if (v->vt == VT_F64) {
      const double *x = v->v;
      double *c = a->f;
      VM_EACH(set, i, {
        int64_t gi = g[i];
        if (!has[gi] && !(z && z[i])) { c[gi] = x[i]; has[gi] = 1; }
      });
    } else {
      int64_t *c = a->i;
      if (v->vt == VT_STR) {
        const uint32_t *x = v->v;
        VM_EACH(set, i, {
          int64_t gi = g[i];
          if (!has[gi] && !(z && z[i])) { c[gi] = x[i]; has[gi] = 1; }
        });
      } else {
        const int64_t *x = v->v;
        VM_EACH(set, i, {
          int64_t gi = g[i];
          if (!has[gi] && !(z && z[i])) { c[gi] = x[i]; has[gi] = 1; }
        });
      }
    }
    break;
  }
  return 0;
}

/* A value's bits as rt_agg_add takes them. */
static int64_t vm_agg_bits(const vm_vec *v, uint32_t i) {
  if (v->vt == VT_STR) return ((const uint32_t *)v->v)[i];
  return ((const int64_t *)v->v)[i];   /* a double's bits too */
}

/* The aggregates of runtime/aggx.c: one rt_agg_add per active row, the
 * call the JIT makes. w is the second argument (NULL when none). */
static int vm_agg_x(vm *m, rt_aggtab *t, int j, const vm_vec *v, const vm_vec *w,
                    const vm_set *set) {
  const int64_t *g = m->groups;
  int rc = 0;
  VM_EACH(set, i, {
    int vn = v->anynull && v->nul[i], wn = w ? w->anynull && w->nul[i] : 1;
    if ((rc = rt_agg_add(t, j, g[i], vm_agg_bits(v, i), vn, w ? vm_agg_bits(w, i) : 0, wn)) != 0) break;
  });
  if (rc) vm_fail(m, "out of memory");
  return rc ? -1 : 0;
}

static bool vm_agg_is_x(rt_aggkind k) {
  switch (k) {
  case RT_AGG_COUNT_DISTINCT: case RT_AGG_ARG_MAX: case RT_AGG_ARG_MIN: case RT_AGG_GROUP_CONCAT:
  case RT_AGG_MEDIAN: case RT_AGG_PERCENTILE: case RT_AGG_FIRST: case RT_AGG_LAST:
    return true;
  case RT_AGG_COUNT_STAR: case RT_AGG_COUNT: case RT_AGG_SUM: case RT_AGG_MIN: case RT_AGG_MAX:
  case RT_AGG_AVG: case RT_AGG_ANY_VALUE:
    return false;
  }
  return false;
}

int vm_agg_update(vm *m, rt_batch *b) {
  const ir_op *op = m->s->seg->sink;
  rt_aggtab *t = m->s->agg;
  vm_set set = {b->active, b->nactive};
  if (!m->groups) {
    m->groups = malloc((size_t)RT_BATCH * sizeof *m->groups);
    m->keyvals = malloc(((size_t)op->agg.ngroup + 1) * sizeof *m->keyvals);
    m->keynull = malloc((size_t)op->agg.ngroup + 1);
    /* freed with the segment (vm_seg_free), whichever were allocated */
    if (!m->groups || !m->keyvals || !m->keynull) return vm_fail(m, "out of memory"), -1;
  }
  if (vm_agg_groups(m, op, b, &set) < 0) return -1;
  if (t->epoch) {
    /* lazy folding (runtime/aggmerge.h): groups last summed in an older
     * morsel fold their partials before this batch adds to them */
    const int64_t *g = m->groups;
    const uint32_t *ep = t->epoch;
    VM_EACH(&set, i, if (ep[g[i]] != t->morsel) rt_aggtab_refold(t, g[i]););
  }
  /* The aggtab holds the live aggregates only, in op order. */
  int j = 0;
  for (int k = 0; k < op->agg.naggs; k++) {
    const ir_agg *ag = &op->agg.aggs[k];
    if (!ag->live) continue;
    rt_agg *a = &t->aggs[j++];
    vm_vec *v = NULL;
    if (a->kind != RT_AGG_COUNT_STAR) {
      v = vm_load_view(m, &b->cols[ag->arg_col], &set);
      if (a->kind != RT_AGG_COUNT) v = vm_coerce(m, v, vm_vt_of(a->in), &set);
      if (!v) return -1;
    }
    int rc;
    if (vm_agg_is_x(a->kind)) {
      vm_vec *w = NULL;
      if (ag->arg2_col >= 0) {
        w = vm_load_view(m, &b->cols[ag->arg2_col], &set);
        w = vm_coerce(m, w, vm_vt_of(a->in2), &set);
        if (!w) {
          vm_vec_put(m, v);
          return -1;
        }
      }
      rc = vm_agg_x(m, t, j - 1, v, w, &set);
      vm_vec_put(m, w);
    } else {
      rc = vm_agg_one(m, a, v, &set);
    }
    vm_vec_put(m, v);
    if (rc < 0) return -1;
  }
  return 0;
}
