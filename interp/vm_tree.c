/*
 * vm_tree.c — the interpreter's TREE ACCUMULATE steps.
 *
 * TREE_NUMBER hands the batch to the runtime (rt_treenum_batch, whose
 * dense tiers are tight loops) and exposes its two position-indexed
 * uint32 arrays as the node columns. TREE_ACC runs, per live aggregate, one
 * loop over the active rows in order applying the rule of runtime/tree/tree.h
 * to the per-node arrays of run->treeaccs — the same state the JIT's
 * fused loop updates, so a run may switch backends between batches. The
 * rows depend on each other through those arrays (a parent's value is
 * read after its children wrote it), so the loops are sequential; each is
 * specialized by direction and value type so its body is a few
 * instructions.
 */
#include "vm.h"

static int vm_op_index(const vm *m, const ir_op *op) {
  for (int i = 0; i < m->plan->nops; i++)
    if (m->plan->ops[i] == op) return i;
  return -1;
}

int vm_tree_number(vm *m, const ir_op *op, rt_batch *b) {
  int idx = vm_op_index(m, op);
  rt_treenum *t = idx >= 0 ? m->s->run->treenums[idx] : NULL;
  if (!t) return vm_fail(m, "internal error: the tree numbering has no state"), -1;
  if (rt_treenum_batch(t, &b->cols[op->tree.id_col], &b->cols[op->tree.parent_col], b->active,
                       b->nactive) < 0)
    return -1;
  b->cols[op->tree.node_col] = (rt_view){.type = RT_U32, .data = t->node_out};
  b->cols[op->tree.pnode_col] = (rt_view){.type = RT_U32, .data = t->pnode_out};
  return 0;
}

/* SUM / COUNT(*) / COUNT over int64 values (x NULL means the constant 1
 * of COUNT(*); for COUNT, x holds 0/1). Checked adds. */
static int acc_sum_i64(const rt_treeacc *a, rt_treeagg *g, const vm_set *set, const int64_t *nd,
                       const int64_t *pd, const int64_t *x, int64_t *o) {
  int64_t *acc = g->i;
  if (a->up) {
    VM_EACH(set, i, {
      int64_t v = x ? x[i] : 1, tot;
      uint64_t p = (uint64_t)pd[i];
      if (__builtin_add_overflow(v, acc[nd[i]], &tot)) return -1;
      o[i] = tot;
      if (p != RT_TREE_NONE && __builtin_add_overflow(acc[p], tot, &acc[p])) return -1;
    });
  } else {
    VM_EACH(set, i, {
      int64_t v = x ? x[i] : 1, tot = v;
      uint64_t p = (uint64_t)pd[i];
      if (p != RT_TREE_NONE && __builtin_add_overflow(v, acc[p], &tot)) return -1;
      acc[nd[i]] = tot;
      o[i] = tot;
    });
  }
  return 0;
}

static void acc_sum_f64(const rt_treeacc *a, rt_treeagg *g, const vm_set *set, const int64_t *nd,
                        const int64_t *pd, const double *x, double *o) {
  double *acc = g->f;
  if (a->up) {
    VM_EACH(set, i, {
      double tot = x[i] + acc[nd[i]];
      uint64_t p = (uint64_t)pd[i];
      o[i] = tot;
      if (p != RT_TREE_NONE) acc[p] += tot;
    });
  } else {
    VM_EACH(set, i, {
      uint64_t p = (uint64_t)pd[i];
      double tot = p != RT_TREE_NONE ? x[i] + acc[p] : x[i];
      acc[nd[i]] = tot;
      o[i] = tot;
    });
  }
}

/* MIN / MAX: NULL inputs bring no value; has[] marks nodes holding one.
 * Output NULL (onul = 1) when neither the row nor what it combines with
 * has a value. */
#define VM_TREE_MINMAX(T, BETTER)                                              \
  do {                                                                         \
    T *acc = (T *)accv;                                                        \
    const T *xv = (const T *)xs;                                               \
    T *ov = (T *)os;                                                           \
    uint8_t *has = g->has;                                                     \
    if (a->up) {                                                               \
      VM_EACH(set, i, {                                                        \
        uint64_t n = (uint64_t)nd[i], p = (uint64_t)pd[i];                     \
        bool hv = !(xnul && xnul[i]), hc = has[n];                             \
        T v = xv[i], c = acc[n];                                               \
        bool ht = hv || hc;                                                    \
        T t = hv ? (hc && BETTER(c, v) ? c : v) : c;                           \
        ov[i] = ht ? t : 0;                                                    \
        onul[i] = !ht;                                                         \
        any |= !ht;                                                            \
        if (p != RT_TREE_NONE && ht) {                                         \
          if (!has[p] || BETTER(t, acc[p])) acc[p] = t;                        \
          has[p] = 1;                                                          \
        }                                                                      \
      });                                                                      \
    } else {                                                                   \
      VM_EACH(set, i, {                                                        \
        uint64_t n = (uint64_t)nd[i], p = (uint64_t)pd[i];                     \
        bool hv = !(xnul && xnul[i]), hc = p != RT_TREE_NONE && has[p];        \
        T v = xv[i], c = hc ? acc[p] : 0;                                      \
        bool ht = hv || hc;                                                    \
        T t = hv ? (hc && BETTER(c, v) ? c : v) : c;                           \
        acc[n] = t;                                                            \
        has[n] = ht;                                                           \
        ov[i] = ht ? t : 0;                                                    \
        onul[i] = !ht;                                                         \
        any |= !ht;                                                            \
      });                                                                      \
    }                                                                          \
  } while (0)
#define VM_LT(a, b) ((a) < (b))
#define VM_GT(a, b) ((a) > (b))

static bool acc_minmax(const rt_treeacc *a, rt_treeagg *g, const vm_set *set, const int64_t *nd,
                       const int64_t *pd, const void *xs, const uint8_t *xnul, void *os,
                       uint8_t *onul) {
  bool any = false;
  bool f = g->in == RT_F64;
  void *accv = f ? (void *)g->f : (void *)g->i;
  if (g->kind == RT_AGG_MIN) {
    if (f) VM_TREE_MINMAX(double, VM_LT);
    else VM_TREE_MINMAX(int64_t, VM_LT);
  } else {
    if (f) VM_TREE_MINMAX(double, VM_GT);
    else VM_TREE_MINMAX(int64_t, VM_GT);
  }
  return any;
}
#undef VM_TREE_MINMAX
#undef VM_LT
#undef VM_GT

/* ---- §9.4's aggregates (tree.h): AVG, ARG_MAX / ARG_MIN, FIRST / LAST ---- */

/* Value bits of position i (an int, a double's bits, a string id). */
static int64_t vm_tree_bits(const vm_vec *v, uint32_t i) {
  if (v->vt == VT_STR) return ((const uint32_t *)v->v)[i];
  return ((const int64_t *)v->v)[i];
}

static void vm_tree_put(vm_vec *o, uint32_t i, int64_t bits) {
  if (o->vt == VT_STR) ((uint32_t *)o->v)[i] = (uint32_t)bits;
  else ((int64_t *)o->v)[i] = bits;
}

/* Whether ordering a beats b (as int64, or as doubles when f). */
static bool vm_tree_beats(bool f, bool max, int64_t a, int64_t b) {
  if (f) {
    double x, y;
    memcpy(&x, &a, 8);
    memcpy(&y, &b, 8);
    return max ? x > y : x < y;
  }
  return max ? a > b : a < b;
}

/* One aggregate over the active rows into out (value and NULL flags). */
static void acc_more(const rt_treeacc *a, rt_treeagg *g, const vm_set *set, const int64_t *nd,
                     const int64_t *pd, const vm_vec *x, const vm_vec *w, vm_vec *out) {
  uint8_t *on = out->nul;
  bool any = false, up = a->up;
  const uint8_t *xn = x->anynull ? x->nul : NULL;
  switch (g->kind) {
  case RT_AGG_AVG: {
    const double *xv = x->v;
    double *o = out->v, *sum = g->f;
    int64_t *cnt = g->i;
    VM_EACH(set, i, {
      uint64_t n = (uint64_t)nd[i], p = (uint64_t)pd[i];
      bool hv = !(xn && xn[i]);
      double s = hv ? xv[i] : 0;
      int64_t c = hv;
      if (up) {
        s += sum[n], c += cnt[n];
        if (p != RT_TREE_NONE) sum[p] += s, cnt[p] += c;
      } else {
        if (p != RT_TREE_NONE) s += sum[p], c += cnt[p];
        sum[n] = s, cnt[n] = c;
      }
      double avg = c ? s / (double)c : 0;
      bool nul = c == 0 || avg != avg;   /* NaN (inf and -inf) is NULL */
      o[i] = nul ? 0 : avg;
      on[i] = nul;
      any |= nul;
    });
    break;
  }
  case RT_AGG_ARG_MAX:
  case RT_AGG_ARG_MIN: {
    bool f = g->in == RT_F64, max = g->kind == RT_AGG_ARG_MAX;
    const uint8_t *wn = w->anynull ? w->nul : NULL;
    int64_t *best = f ? (int64_t *)g->f : g->i, *val = g->v;
    uint8_t *has = g->has;
    VM_EACH(set, i, {
      uint64_t n = (uint64_t)nd[i], p = (uint64_t)pd[i];
      bool own = !(xn && xn[i]);
      int64_t ob = own ? vm_tree_bits(x, i) : 0, ov = vm_tree_bits(w, i);
      uint8_t os = (uint8_t)(1 | (wn && wn[i] ? 2 : 0));
      int64_t tb = 0, tv = 0;
      uint8_t ts = 0;
      if (up) {
        /* the node's own row beats its subtree's best unless beaten */
        bool sub = has[n] & 1;
        if (own && !(sub && vm_tree_beats(f, max, best[n], ob))) tb = ob, tv = ov, ts = os;
        else if (sub) tb = best[n], tv = val[n], ts = has[n];
        if (ts && p != RT_TREE_NONE && (!(has[p] & 1) || vm_tree_beats(f, max, tb, best[p])))
          best[p] = tb, val[p] = tv, has[p] = ts;
      } else {
        /* an ancestor's best stays unless the row beats it */
        bool above = p != RT_TREE_NONE && (has[p] & 1);
        if (above && !(own && vm_tree_beats(f, max, ob, best[p]))) tb = best[p], tv = val[p], ts = has[p];
        else if (own) tb = ob, tv = ov, ts = os;
        best[n] = tb, val[n] = tv, has[n] = ts;
      }
      bool nul = !(ts & 1) || (ts & 2);
      vm_tree_put(out, i, nul ? 0 : tv);
      on[i] = nul;
      any |= nul;
    });
    break;
  }
  case RT_AGG_FIRST:
  case RT_AGG_LAST: {
    bool first = g->kind == RT_AGG_FIRST;
    int64_t *acc = g->i;
    uint8_t *has = g->has;
    VM_EACH(set, i, {
      uint64_t n = (uint64_t)nd[i], p = (uint64_t)pd[i];
      bool hv = !(xn && xn[i]), above = p != RT_TREE_NONE && has[p];
      bool mine = hv && (!first || !above);
      int64_t t = mine ? vm_tree_bits(x, i) : above ? acc[p] : 0;
      bool ht = mine || above;
      acc[n] = t;
      has[n] = ht;
      vm_tree_put(out, i, ht ? t : 0);
      on[i] = !ht;
      any |= !ht;
    });
    break;
  }
  case RT_AGG_COUNT_STAR: case RT_AGG_COUNT: case RT_AGG_SUM: case RT_AGG_MIN: case RT_AGG_MAX:
  case RT_AGG_ANY_VALUE: case RT_AGG_COUNT_DISTINCT: case RT_AGG_GROUP_CONCAT: case RT_AGG_MEDIAN:
  case RT_AGG_PERCENTILE:
    break;   /* vm_tree_acc's own loops */
  }
  out->anynull = any;
}

static bool vm_tree_more(rt_aggkind k) {
  return k == RT_AGG_AVG || k == RT_AGG_ARG_MAX || k == RT_AGG_ARG_MIN || k == RT_AGG_FIRST ||
         k == RT_AGG_LAST;
}

/* Loads the arguments of a §9.4 aggregate, runs it and sets its column. */
static int vm_tree_more_col(vm *m, const rt_treeacc *a, rt_treeagg *g, const ir_agg *ag,
                            rt_batch *b, const vm_set *set, const int64_t *nd, const int64_t *pd) {
  rt_type ot = rt_store_type(m->plan->cols[ag->out_col].type);
  vm_vec *x = vm_load_view(m, &b->cols[ag->arg_col], set), *w = NULL;
  if (x && g->kind == RT_AGG_AVG) x = vm_coerce(m, x, VT_F64, set);
  if (x && (g->kind == RT_AGG_ARG_MAX || g->kind == RT_AGG_ARG_MIN)) {
    x = vm_coerce(m, x, g->in == RT_F64 ? VT_F64 : VT_I64, set);
    w = x ? vm_load_view(m, &b->cols[ag->arg2_col], set) : NULL;
    if (w && ot != RT_STR) w = vm_coerce(m, w, ot == RT_F64 ? VT_F64 : VT_I64, set);
    if (!w) {
      if (x) vm_vec_put(m, x);
      return -1;
    }
  } else if (x && ot != RT_STR && x->vt != (ot == RT_F64 ? VT_F64 : VT_I64)) {
    x = vm_coerce(m, x, ot == RT_F64 ? VT_F64 : VT_I64, set);
  }
  vm_vec *out = x ? vm_vec_get(m, ot == RT_F64 ? VT_F64 : ot == RT_STR ? VT_STR : VT_I64) : NULL;
  if (!out) {
    if (x) vm_vec_put(m, x);
    if (w) vm_vec_put(m, w);
    return -1;
  }
  acc_more(a, g, set, nd, pd, x, w, out);
  vm_vec_put(m, x);
  if (w) vm_vec_put(m, w);
  b->cols[ag->out_col] = (rt_view){
      .type = ot,
      .data = out->v,
      .valid = out->anynull ? vm_bits(m, &m->colbits[ag->out_col], out, set, b->n) : NULL,
  };
  m->held[m->nheld++] = out;
  return out->anynull && !b->cols[ag->out_col].valid ? -1 : 0;
}

int vm_tree_acc(vm *m, const ir_op *op, rt_batch *b) {
  int idx = vm_op_index(m, op);
  rt_treeacc *a = idx >= 0 ? m->s->run->treeaccs[idx] : NULL;
  if (!a) return vm_fail(m, "internal error: the tree accumulation has no state"), -1;
  vm_set set = {b->active, b->nactive};
  vm_vec *nv = vm_load_view(m, &b->cols[op->tree.node_col], &set);
  vm_vec *pv = vm_load_view(m, &b->cols[op->tree.pnode_col], &set);
  if (!nv || !pv) return -1;
  const int64_t *nd = nv->v, *pd = pv->v;
  /* Node numbers index the per-node arrays: check them once per batch. */
  uint64_t nn = a->nnodes;
  bool bad = false;
  VM_EACH(&set, i, {
    uint64_t p = (uint64_t)pd[i];
    bad |= (uint64_t)nd[i] >= nn || (p != RT_TREE_NONE && p >= nn);
  });
  int rc = 0;
  if (bad) {
    vm_fail(m, "internal error: a node number is out of range");
    rc = -1;
  }
  int j = 0;
  for (int k = 0; k < op->tree.naggs && rc == 0; k++) {
    const ir_agg *ag = &op->tree.aggs[k];
    if (!ag->live) continue;
    rt_treeagg *g = &a->aggs[j++];
    if (vm_tree_more(g->kind)) {
      rc = vm_tree_more_col(m, a, g, ag, b, &set, nd, pd);
      continue;
    }
    bool f = g->in == RT_F64;
    vm_vec *out = vm_vec_get(m, f ? VT_F64 : VT_I64);
    if (!out) {
      rc = -1;
      break;
    }
    vm_vec *x = NULL;
    if (ag->arg_col >= 0) {
      x = vm_load_view(m, &b->cols[ag->arg_col], &set);
      if (x && g->kind != RT_AGG_COUNT) x = vm_coerce(m, x, f ? VT_F64 : VT_I64, &set);
      if (!x) {
        vm_vec_put(m, out);
        rc = -1;
        break;
      }
    }
    switch (g->kind) {
    case RT_AGG_COUNT: {
      /* 1 per non-NULL value, as int64 in the output vector's scratch */
      int64_t *ones = out->v;
      const uint8_t *z = x->nul;
      bool anyn = x->anynull;
      VM_EACH(&set, i, ones[i] = anyn ? !z[i] : 1;);
      if (acc_sum_i64(a, g, &set, nd, pd, ones, out->v) < 0) rc = -1;
      break;
    }
    case RT_AGG_COUNT_STAR:
      if (acc_sum_i64(a, g, &set, nd, pd, NULL, out->v) < 0) rc = -1;
      break;
    case RT_AGG_SUM:
      /* NULL slots hold 0 (vm.h's invariant): NULL adds nothing. */
      if (f) {
        acc_sum_f64(a, g, &set, nd, pd, x->v, out->v);
        /* +inf and -inf below (or above) make NaN, which is NULL; the
         * node's running value keeps the NaN for its parent. */
        double *o = out->v;
        uint8_t *z = out->nul, any = 0;
        VM_EACH(&set, i, uint8_t nan = o[i] != o[i]; z[i] = nan; any |= nan; if (nan) o[i] = 0.0;);
        out->anynull = any != 0;
      } else if (acc_sum_i64(a, g, &set, nd, pd, x->v, out->v) < 0) rc = -1;
      break;
    case RT_AGG_MIN:
    case RT_AGG_MAX:
    case RT_AGG_AVG: case RT_AGG_ARG_MAX: case RT_AGG_ARG_MIN: case RT_AGG_FIRST:
    case RT_AGG_LAST:       /* vm_tree_more_col, above */
    case RT_AGG_ANY_VALUE: case RT_AGG_COUNT_DISTINCT:   /* not tree aggregates (aggs.def) */
    case RT_AGG_GROUP_CONCAT: case RT_AGG_MEDIAN: case RT_AGG_PERCENTILE:
      out->anynull = acc_minmax(a, g, &set, nd, pd, x->v, x->anynull ? x->nul : NULL, out->v, out->nul);
      break;
    }
    vm_vec_put(m, x);
    if (rc < 0) {
      vm_vec_put(m, out);
      vm_fail(m, "integer overflow");
      break;
    }
    b->cols[ag->out_col] = (rt_view){
        .type = f ? RT_F64 : RT_I64,
        .data = out->v,
        .valid = out->anynull ? vm_bits(m, &m->colbits[ag->out_col], out, &set, b->n) : NULL,
    };
    m->held[m->nheld++] = out;
    if (out->anynull && !b->cols[ag->out_col].valid) {   /* out of memory */
      rc = -1;
      break;
    }
  }
  vm_vec_put(m, nv);
  vm_vec_put(m, pv);
  return rc;
}
