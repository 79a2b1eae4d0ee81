/*
 * aggx.c — the AGGREGATE functions whose state is not one value per group
 * (LANGUAGE.md §8 "More aggregates"): COUNT(DISTINCT x), ARG_MAX and
 * ARG_MIN (two arguments), GROUP_CONCAT (a string per group, in input
 * order), MEDIAN and PERCENTILE (every value of the group).
 *
 * Both backends update them through one call per row, rt_agg_add (the
 * JIT emits the call inside its row loop, the interpreter makes it per
 * active row), so there is one implementation of each rule; the fixed
 * aggregates keep their inlined updates (vm_agg.c, cg_agg.c).
 *
 *   COUNT(DISTINCT): an open-addressed set of (group, value bits) pairs;
 *     a pair seen for the first time counts into the group's i[g].
 *   ARG_MAX / ARG_MIN: per group the best ordering so far and the value of
 *     its row; a NULL ordering is skipped; ties keep the first row.
 *   GROUP_CONCAT, MEDIAN, PERCENTILE: a log of the non-NULL inputs in
 *     input order (group, value, separator); at the end the log is put in
 *     group order (stable), and each group's text is joined, or its values
 *     sorted and interpolated as SQLite's percentile extension does.
 *
 * Memory comes from rt_mem_* (charged to the run's budget): a refused
 * growth is RT_AGGX_NOMEM, which the backends report as out of memory
 * (the driver names the budget when it was the budget).
 */
#include <math.h>
#include <stdlib.h>

#include "budget.h"
#include "store.h"
#include "strfn.h"

struct rt_aggx {
  /* COUNT(DISTINCT) */
  int64_t *sg;          /* group + 1 (0: empty slot) */
  int64_t *sv;          /* value bits */
  uint64_t smask;
  int64_t sn;
  /* GROUP_CONCAT, MEDIAN, PERCENTILE */
  int64_t *lg, *lv, *lw;   /* group; value bits; separator id (-1: none, -2: ',') */
  int64_t ln, lcap;
  bool inf;                /* MEDIAN/PERCENTILE met an infinite value */
  /* ARG_MAX, ARG_MIN */
  int64_t *best, *val;
  uint8_t *st;             /* bit 0: a row seen; bit 1: its value is NULL */
  int64_t gcap;
};

void rt_aggx_free(rt_aggx *x) {
  if (!x) return;
  rt_mem_free(x->sg);
  rt_mem_free(x->sv);
  rt_mem_free(x->lg);
  rt_mem_free(x->lv);
  rt_mem_free(x->lw);
  rt_mem_free(x->best);
  rt_mem_free(x->val);
  rt_mem_free(x->st);
  rt_mem_free(x);
}

static rt_aggx *state(rt_agg *a) {
  if (!a->x) a->x = rt_mem_calloc(1, sizeof *a->x);
  return a->x;
}

/* Grows *p (elements of sz bytes) from old to cap, zeroing the new part. */
static bool grow(void **p, size_t sz, int64_t old, int64_t cap) {
  char *d = rt_mem_realloc(*p, (size_t)cap * sz);
  if (!d) return false;
  memset(d + (size_t)old * sz, 0, (size_t)(cap - old) * sz);
  *p = d;
  return true;
}

/* ---- COUNT(DISTINCT) ----------------------------------------------------- */

static uint64_t pair_hash(int64_t g, int64_t v) {
  return rt_hash_i64((uint64_t)v ^ rt_hash_i64((uint64_t)g + 0x9e3779b97f4a7c15ull));
}

static bool set_grow(rt_aggx *x) {
  uint64_t cap = x->smask ? (x->smask + 1) * 2 : 1024;
  int64_t *ng = rt_mem_calloc(cap, sizeof *ng), *nv = rt_mem_calloc(cap, sizeof *nv);
  if (!ng || !nv) {
    rt_mem_free(ng);
    rt_mem_free(nv);
    return false;
  }
  for (uint64_t i = 0; x->sg && i <= x->smask; i++) {
    if (!x->sg[i]) continue;
    uint64_t j = pair_hash(x->sg[i] - 1, x->sv[i]) & (cap - 1);
    while (ng[j]) j = (j + 1) & (cap - 1);
    ng[j] = x->sg[i];
    nv[j] = x->sv[i];
  }
  rt_mem_free(x->sg);
  rt_mem_free(x->sv);
  x->sg = ng;
  x->sv = nv;
  x->smask = cap - 1;
  return true;
}

/* Whether (g, v) is new (and now in the set); -1 out of memory. */
static int set_add(rt_aggx *x, int64_t g, int64_t v) {
  if ((uint64_t)(x->sn + 1) * 2 > (x->smask ? x->smask + 1 : 0) && !set_grow(x)) return -1;
  uint64_t i = pair_hash(g, v) & x->smask;
  for (; x->sg[i]; i = (i + 1) & x->smask)
    if (x->sg[i] == g + 1 && x->sv[i] == v) return 0;
  x->sg[i] = g + 1;
  x->sv[i] = v;
  x->sn++;
  return 1;
}

/* ---- the log ---------------------------------------------------------------- */

static bool log_add(rt_aggx *x, int64_t g, int64_t v, int64_t w) {
  if (x->ln == x->lcap) {
    int64_t cap = x->lcap ? x->lcap * 2 : 1024;
    if (!grow((void **)&x->lg, 8, x->lcap, cap) || !grow((void **)&x->lv, 8, x->lcap, cap) ||
        !grow((void **)&x->lw, 8, x->lcap, cap))
      return false;
    x->lcap = cap;
  }
  x->lg[x->ln] = g;
  x->lv[x->ln] = v;
  x->lw[x->ln] = w;
  x->ln++;
  return true;
}

/* The log's entries in group order, input order within a group (a
 * counting sort): order[from[g] .. from[g + 1]). NULL when out of memory. */
static int64_t *log_by_group(const rt_aggx *x, int64_t ngroups, int64_t **from_out) {
  int64_t *from = rt_mem_calloc((size_t)ngroups + 2, sizeof *from);
  int64_t *order = rt_mem_alloc((size_t)(x->ln ? x->ln : 1) * sizeof *order);
  if (!from || !order) {
    rt_mem_free(from);
    rt_mem_free(order);
    return NULL;
  }
  for (int64_t i = 0; i < x->ln; i++) from[x->lg[i] + 2]++;
  for (int64_t g = 0; g < ngroups; g++) from[g + 2] += from[g + 1];
  for (int64_t i = 0; i < x->ln; i++) order[from[x->lg[i] + 1]++] = i;
  *from_out = from;   /* now from[g] .. from[g + 1] */
  return order;
}

/* ---- per row -------------------------------------------------------------- */

static int cmp_values(const rt_aggtab *t, rt_type in, int64_t a, int64_t b) {
  if (in == RT_F64) {
    double x, y;
    memcpy(&x, &a, 8);
    memcpy(&y, &b, 8);
    return x < y ? -1 : x > y;
  }
  if (in == RT_STR) return rt_str_cmp(t->strings, (uint32_t)a, (uint32_t)b);
  return a < b ? -1 : a > b;
}

int rt_agg_add(rt_aggtab *t, int32_t ai, int64_t g, int64_t v, int32_t vnull, int64_t w,
               int32_t wnull) {
  rt_agg *a = &t->aggs[ai];
  if (vnull) return 0;   /* every one of these skips a NULL (first) argument */
  rt_aggx *x = state(a);
  if (!x) return RT_AGGX_NOMEM;
  switch (a->kind) {
  case RT_AGG_COUNT_DISTINCT: {
    if (a->in == RT_F64) {
      double d;
      memcpy(&d, &v, 8);
      if (d == 0) v = 0;   /* -0.0 is 0.0 */
    }
    int r = set_add(x, g, v);
    if (r < 0) return RT_AGGX_NOMEM;
    a->i[g] += r;
    return 0;
  }
  case RT_AGG_GROUP_CONCAT:
    return log_add(x, g, v, a->in2 == RT_NULLT ? -2 : wnull ? -1 : (int64_t)(uint32_t)w) ? 0 : RT_AGGX_NOMEM;
  case RT_AGG_MEDIAN:
  case RT_AGG_PERCENTILE: {
    double d;
    if (a->in == RT_F64) memcpy(&d, &v, 8);
    else d = (double)v;
    if (isinf(d)) x->inf = true;
    memcpy(&v, &d, 8);
    return log_add(x, g, v, 0) ? 0 : RT_AGGX_NOMEM;
  }
  case RT_AGG_ARG_MAX:
  case RT_AGG_ARG_MIN: {
    if (g >= x->gcap) {
      int64_t cap = x->gcap ? x->gcap : 256;
      while (cap <= g) cap *= 2;
      if (!grow((void **)&x->best, 8, x->gcap, cap) || !grow((void **)&x->val, 8, x->gcap, cap) ||
          !grow((void **)&x->st, 1, x->gcap, cap))
        return RT_AGGX_NOMEM;
      x->gcap = cap;
    }
    bool take = !(x->st[g] & 1);
    if (!take) {
      int c = cmp_values(t, a->in, v, x->best[g]);
      take = a->kind == RT_AGG_ARG_MAX ? c > 0 : c < 0;
    }
    if (take) {
      x->best[g] = v;
      x->val[g] = w;
      x->st[g] = (uint8_t)(1 | (wnull ? 2 : 0));
    }
    return 0;
  }
  case RT_AGG_COUNT_STAR: case RT_AGG_COUNT: case RT_AGG_SUM: case RT_AGG_MIN: case RT_AGG_MAX:
  case RT_AGG_AVG: case RT_AGG_ANY_VALUE: case RT_AGG_FIRST: case RT_AGG_LAST:
    break;   /* updated inline by the backends (FIRST, LAST: TREE ACCUMULATE's) */
  }
  return 0;
}

/* ---- output ----------------------------------------------------------------- */

static void put_bits(rt_rowbuf *out, int c, int64_t r, int64_t v) {
  switch (out->types[c]) {
  case RT_F64: memcpy((double *)out->data[c] + r, &v, 8); break;
  case RT_STR: ((uint32_t *)out->data[c])[r] = (uint32_t)v; break;
  default: ((int64_t *)out->data[c])[r] = v; break;
  }
  rt_bit_set(out->valid[c], (uint32_t)r);
}

static int emit_concat(const rt_aggtab *t, const rt_aggx *x, rt_rowbuf *out, int c, int64_t at) {
  int64_t *from, *order = log_by_group(x, t->ngroups, &from);
  if (!order) return RT_AGGX_NOMEM;
  int rc = 0;
  rt_strpool *p = t->strings;
  uint32_t comma = rt_str_intern(p, ",", 1);
  for (int64_t g = 0; g < t->ngroups && !rc; g++) {
    if (from[g] == from[g + 1]) continue;   /* no non-NULL value: NULL */
    size_t len = 0, n;
    for (int64_t k = from[g]; k < from[g + 1]; k++) {
      int64_t i = order[k];
      rt_str_get(p, (uint32_t)x->lv[i], &n);
      len += n;
      if (k > from[g] && x->lw[i] != -1) {
        rt_str_get(p, x->lw[i] == -2 ? comma : (uint32_t)x->lw[i], &n);
        len += n;
      }
    }
    if (!rt_str_fits(p, len)) {
      rc = RT_AGGX_STRING;
      break;
    }
    char *buf = rt_strpool_scratch(p, len ? len : 1);
    if (!buf) {
      rc = RT_AGGX_NOMEM;
      break;
    }
    size_t o = 0;
    for (int64_t k = from[g]; k < from[g + 1]; k++) {
      int64_t i = order[k];
      const char *s;
      if (k > from[g] && x->lw[i] != -1) {
        s = rt_str_get(p, x->lw[i] == -2 ? comma : (uint32_t)x->lw[i], &n);
        memcpy(buf + o, s, n);
        o += n;
      }
      s = rt_str_get(p, (uint32_t)x->lv[i], &n);
      memcpy(buf + o, s, n);
      o += n;
    }
    uint32_t id = len ? rt_str_intern(p, buf, len) : 0;
    if (len && !id) {
      rc = RT_AGGX_STRING;
      break;
    }
    put_bits(out, c, at + g, id);
  }
  rt_mem_free(from);
  rt_mem_free(order);
  return rc;
}

typedef struct pct_ent {
  int64_t g;
  double v;
  int64_t seq;
} pct_ent;

/* Group, then value (SQLite's doubleCmp), then input order: the sort is
 * stable, as glibc's qsort (a merge sort) is for SQLite's array. */
static int pct_cmp(const void *pa, const void *pb) {
  const pct_ent *a = pa, *b = pb;
  if (a->g != b->g) return a->g < b->g ? -1 : 1;
  if (a->v != b->v) return a->v < b->v ? -1 : 1;
  return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int emit_percentile(const rt_aggtab *t, const rt_agg *a, rt_rowbuf *out, int c, int64_t at) {
  const rt_aggx *x = a->x;
  if (x->inf) return RT_AGGX_INF;
  pct_ent *e = rt_mem_alloc((size_t)(x->ln ? x->ln : 1) * sizeof *e);
  if (!e) return RT_AGGX_NOMEM;
  for (int64_t i = 0; i < x->ln; i++) {
    e[i].g = x->lg[i];
    memcpy(&e[i].v, &x->lv[i], 8);
    e[i].seq = i;
  }
  qsort(e, (size_t)x->ln, sizeof *e, pct_cmp);
  /* SQLite keeps P + 1.0 (0 means "not set yet") and takes 1.0 off again:
   * the same steps give the same bits. */
  double rpct = a->param + 1.0;
  for (int64_t lo = 0; lo < x->ln;) {
    int64_t hi = lo;
    while (hi < x->ln && e[hi].g == e[lo].g) hi++;
    unsigned n = (unsigned)(hi - lo);
    double ix = (rpct - 1.0) * (n - 1) * 0.01;
    unsigned i1 = (unsigned)ix;
    unsigned i2 = ix == (double)i1 || i1 == n - 1 ? i1 : i1 + 1;
    double v1 = e[lo + i1].v, v2 = e[lo + i2].v;
    double vx = v1 + (v2 - v1) * (ix - i1);
    int64_t bits;
    memcpy(&bits, &vx, 8);
    put_bits(out, c, at + e[lo].g, bits);
    lo = hi;
  }
  rt_mem_free(e);
  return 0;
}

int rt_aggx_emit(const rt_aggtab *t, const rt_agg *a, rt_rowbuf *out, int c, int64_t at) {
  const rt_aggx *x = a->x;
  if (!x) return 0;   /* no non-NULL input anywhere: every group is NULL */
  switch (a->kind) {
  case RT_AGG_GROUP_CONCAT: return emit_concat(t, x, out, c, at);
  case RT_AGG_MEDIAN:
  case RT_AGG_PERCENTILE: return emit_percentile(t, a, out, c, at);
  case RT_AGG_ARG_MAX:
  case RT_AGG_ARG_MIN:
    for (int64_t g = 0; g < t->ngroups && g < x->gcap; g++)
      if (x->st[g] == 1) put_bits(out, c, at + g, x->val[g]);   /* a row, with a value */
    return 0;
  case RT_AGG_COUNT_STAR: case RT_AGG_COUNT: case RT_AGG_SUM: case RT_AGG_MIN: case RT_AGG_MAX:
  case RT_AGG_AVG: case RT_AGG_ANY_VALUE: case RT_AGG_COUNT_DISTINCT:
  case RT_AGG_FIRST: case RT_AGG_LAST:   /* TREE ACCUMULATE's, never here */
    break;   /* emitted by aggtab.c */
  }
  return 0;
}
