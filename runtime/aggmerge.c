/*
 * aggmerge.c — per-morsel sums and the morsel merge of AGGREGATE tables
 * (see aggmerge.h for the rule they implement together).
 *
 * Only aggtab's interface and its documented state arrays (store.h) are
 * used: group numbers from rt_aggtab_group_of (which reads the source's
 * stored keys and hashes), and per aggregate i / f / n / has as store.h defines
 * them for each kind.
 */
#include <stdlib.h>
#include <string.h>

#include "aggmerge.h"
#include "budget.h"
#include "hugepage.h"

static bool folds_f(const rt_agg *a) {
  return (a->kind == RT_AGG_SUM && a->in == RT_F64) || a->kind == RT_AGG_AVG;
}

static bool folds_i(const rt_agg *a) { return a->kind == RT_AGG_SUM && a->in != RT_F64; }

bool rt_aggfold_needed(const rt_aggtab *t) {
  for (int a = 0; t->aggs && a < t->naggs; a++)
    if (folds_f(&t->aggs[a]) || folds_i(&t->aggs[a])) return true;
  return false;
}

/* Bytes of the totals per group (charged to the run's budget). */
static int64_t fold_bytes(const rt_aggtab *t) {
  int64_t n = 0;
  for (int a = 0; a < t->naggs; a++) n += folds_f(&t->aggs[a]) || folds_i(&t->aggs[a]) ? 8 : 0;
  return n;
}

static bool fold_grow(rt_aggfold *f, const rt_aggtab *t) {
  if (!f->tf) {
    f->naggs = t->naggs;
    f->tf = calloc((size_t)t->naggs + 1, sizeof *f->tf);
    f->ti = calloc((size_t)t->naggs + 1, sizeof *f->ti);
    if (!f->tf || !f->ti) return false;
  }
  if (t->ngroups <= f->cap) return true;
  int64_t cap = f->cap ? f->cap : 256;
  while (cap < t->ngroups) cap *= 2;
  if (!rt_budget_charge((cap - f->cap) * fold_bytes(t))) return false;
  for (int a = 0; a < t->naggs; a++) {
    const rt_agg *g = &t->aggs[a];
    void **p = folds_f(g) ? (void **)&f->tf[a] : folds_i(g) ? (void **)&f->ti[a] : NULL;
    if (!p) continue;
    char *d = realloc(*p, (size_t)cap * 8);
    if (!d) return false;
    memset(d + (size_t)f->cap * 8, 0, (size_t)(cap - f->cap) * 8);
    *p = d;
  }
  f->cap = cap;
  return true;
}

int rt_aggfold_step(rt_aggfold *f, rt_aggtab *t) {
  if (!fold_grow(f, t)) return RT_AGGX_NOMEM;
  int64_t n = t->ngroups;
  bool ovf = false;
  for (int a = 0; a < t->naggs && n > 0; a++) {
    rt_agg *g = &t->aggs[a];
    if (folds_f(g)) {
      double *tot = f->tf[a], *part = g->f;
      for (int64_t k = 0; k < n; k++) tot[k] += part[k];
      memset(part, 0, (size_t)n * sizeof *part);
    } else if (folds_i(g)) {
      int64_t *tot = f->ti[a], *part = g->i;
      for (int64_t k = 0; k < n; k++) ovf |= __builtin_add_overflow(tot[k], part[k], &tot[k]);
      memset(part, 0, (size_t)n * sizeof *part);
    }
  }
  return ovf ? RT_AGGMERGE_OVERFLOW : 0;
}

/* ---- lazy folding ---------------------------------------------------------- */

static void keep_touch(rt_aggfold *f, rt_aggtab *t, int64_t g);

void rt_aggtab_refold(rt_aggtab *t, int64_t g) {
  rt_aggfold *f = t->fold;
  if (f->track) {
    keep_touch(f, t, g);
    return;
  }
  for (int a = 0; a < t->naggs; a++) {
    rt_agg *ag = &t->aggs[a];
    if (folds_f(ag)) {
      f->tf[a][g] += ag->f[g];
      ag->f[g] = 0;
    } else if (folds_i(ag)) {
      f->ovf |= __builtin_add_overflow(f->ti[a][g], ag->i[g], &f->ti[a][g]);
      ag->i[g] = 0;
    }
  }
  t->epoch[g] = t->morsel;
}

/* Epochs for t's cap groups (0: the first morsel's), charged as the
 * table's growth charges them (aggtab.c group_bytes). */
static bool lazy_on(rt_aggfold *f, rt_aggtab *t) {
  if (!rt_budget_charge(t->cap * 4)) return false;
  if (!(t->epoch = calloc((size_t)t->cap, 4))) {
    rt_budget_credit(t->cap * 4);
    return false;
  }
  rt_advise_huge(t->epoch, (size_t)t->cap * 4);   /* read at random by group */
  t->morsel = 0;
  t->fold = f;
  return true;
}

static void lazy_off(rt_aggtab *t) {
  if (!t->epoch) return;
  free(t->epoch);
  rt_budget_credit(t->cap * 4);
  t->epoch = NULL;
  t->fold = NULL;
}

int rt_aggfold_next(rt_aggfold *f, rt_aggtab *t) {
  if (t->ngroups == 0) return 0;   /* no sums yet: the next morsel's rows are its own */
  if (!fold_grow(f, t)) return RT_AGGX_NOMEM;
  if (!t->epoch && !lazy_on(f, t)) return RT_AGGX_NOMEM;
  t->morsel++;
  return f->ovf ? RT_AGGMERGE_OVERFLOW : 0;
}

int rt_aggfold_finish(rt_aggfold *f, rt_aggtab *t) {
  lazy_off(t);
  if (f->ovf) return RT_AGGMERGE_OVERFLOW;
  int rc = rt_aggfold_step(f, t);
  if (rc == 0)
    for (int a = 0; a < t->naggs; a++) {
      rt_agg *g = &t->aggs[a];
      if (folds_f(g) && t->ngroups) memcpy(g->f, f->tf[a], (size_t)t->ngroups * sizeof *g->f);
      if (folds_i(g) && t->ngroups) memcpy(g->i, f->ti[a], (size_t)t->ngroups * sizeof *g->i);
    }
  return rc;
}

void rt_aggfold_free(rt_aggfold *f) {
  for (int a = 0; a < f->naggs; a++) {
    if (f->tf) free(f->tf[a]);
    if (f->ti) free(f->ti[a]);
  }
  int64_t bytes = 0;
  if (f->tf && f->ti)
    for (int a = 0; a < f->naggs; a++) bytes += f->tf[a] || f->ti[a] ? 8 : 0;
  rt_budget_credit(f->cap * bytes);
  free(f->tf);
  free(f->ti);
  memset(f, 0, sizeof *f);
}

/* ---- merging morsel tables ------------------------------------------------ */

bool rt_aggtab_mergeable(const rt_aggtab *t) {
  for (int a = 0; t->aggs && a < t->naggs; a++)
    switch (t->aggs[a].kind) {
    case RT_AGG_COUNT_STAR: case RT_AGG_COUNT: case RT_AGG_SUM: case RT_AGG_MIN: case RT_AGG_MAX:
    case RT_AGG_AVG: case RT_AGG_ANY_VALUE:
      break;
    case RT_AGG_COUNT_DISTINCT: case RT_AGG_ARG_MAX: case RT_AGG_ARG_MIN: case RT_AGG_GROUP_CONCAT:
    case RT_AGG_MEDIAN: case RT_AGG_PERCENTILE: case RT_AGG_FIRST: case RT_AGG_LAST:
      return false;
    }
  return t->aggs != NULL;
}

bool rt_aggtab_init_like(rt_aggtab *dst, const rt_aggtab *like) {
  int na = like->naggs, nk = like->nkeys;
  rt_aggkind kinds[na > 0 ? na : 1];
  rt_type in[na > 0 ? na : 1];
  kinds[0] = RT_AGG_COUNT_STAR;
  in[0] = RT_I64;
  for (int a = 0; a < na; a++) {
    kinds[a] = like->aggs[a].kind;
    in[a] = like->aggs[a].in;
  }
  rt_aggtab_init(dst, nk, like->keys.types, na, kinds, in);
  dst->strings = like->strings;
  for (int a = 0; dst->aggs && a < na; a++)
    rt_aggtab_set_arg2(dst, a, like->aggs[a].in2, like->aggs[a].param);
  if (nk == 0) rt_aggtab_ensure_one(dst);
  if (!dst->aggs || !dst->slots || (nk > 0 && !dst->keys.data) || (nk == 0 && dst->ngroups != 1)) {
    rt_aggtab_free(dst);
    return false;
  }
  return true;
}

/* Whether value b (src's) replaces a (dst's) as MIN (mn) or MAX, the
 * comparison rt_agg's update makes: only a strictly better one does, so
 * of equal values the earlier morsel's stays, as in row order. */
static bool better_i(const rt_aggtab *t, const rt_agg *a, int64_t b, int64_t cur, bool mn) {
  int c = a->in == RT_STR ? rt_str_cmp(t->strings, (uint32_t)b, (uint32_t)cur) : (b > cur) - (b < cur);
  return mn ? c < 0 : c > 0;
}

/* Adds src's group g into dst's group d (the same key). false for an
 * aggregate whose state is not merged (rt_aggtab_mergeable said no). */
static bool merge_group(rt_aggtab *dst, int64_t d, const rt_aggtab *src, int64_t g, bool *ovf) {
  for (int j = 0; j < src->naggs; j++) {
    const rt_agg *s = &src->aggs[j];
    rt_agg *a = &dst->aggs[j];
    bool had = a->has[d], has = s->has[g];
    switch (s->kind) {
    case RT_AGG_COUNT_STAR: case RT_AGG_COUNT:
      a->i[d] += s->i[g];
      break;
    case RT_AGG_SUM:
      if (s->in == RT_F64) a->f[d] += s->f[g];
      else *ovf |= __builtin_add_overflow(a->i[d], s->i[g], &a->i[d]);
      break;
    case RT_AGG_AVG:
      a->f[d] += s->f[g];
      a->n[d] += s->n[g];
      break;
    case RT_AGG_MIN: case RT_AGG_MAX: {
      if (!has) break;
      bool mn = s->kind == RT_AGG_MIN;
      if (s->in == RT_F64) {
        double b = s->f[g], cur = a->f[d];
        if (!had || (mn ? b < cur : b > cur)) a->f[d] = b;
      } else if (!had || better_i(src, s, s->i[g], a->i[d], mn)) {
        a->i[d] = s->i[g];
      }
      break;
    }
    case RT_AGG_ANY_VALUE:
      if (has && !had) {
        if (s->in == RT_F64) a->f[d] = s->f[g];
        else a->i[d] = s->i[g];
      }
      break;
    case RT_AGG_COUNT_DISTINCT: case RT_AGG_ARG_MAX: case RT_AGG_ARG_MIN: case RT_AGG_GROUP_CONCAT:
    case RT_AGG_MEDIAN: case RT_AGG_PERCENTILE: case RT_AGG_FIRST: case RT_AGG_LAST:
      return false;
    }
    a->has[d] = had | has;
  }
  return true;
}

/* Prefetches the states of dst's group d (merge_group reads and writes them). */
static void prefetch_states(const rt_aggtab *dst, int64_t d) {
  for (int a = 0; a < dst->naggs; a++) {
    const rt_agg *g = &dst->aggs[a];
    if (g->i) __builtin_prefetch(&g->i[d], 1);
    if (g->f) __builtin_prefetch(&g->f[d], 1);
    if (g->n) __builtin_prefetch(&g->n[d], 1);
    __builtin_prefetch(&g->has[d], 1);
  }
}

/* How many groups ahead the merge prefetches dst's slot (MERGE_AHEAD) and,
 * half as far ahead, the group in it and its states: with many groups
 * every probe of dst misses the cache, and the misses of a few dozen
 * groups then overlap instead of following one another. */
#define MERGE_AHEAD 16

int rt_aggtab_merge_groups(rt_aggtab *dst, const rt_aggtab *src, const uint32_t *gs, int64_t n,
                           uint64_t *first, uint64_t tag) {
  bool ovf = false;
  bool ahead = dst->nkeys > 0 && dst->ngroups + n > 4096;   /* not cache-sized */
  for (int64_t k = 0; k < n; k++) {
    int64_t g = gs ? gs[k] : k, before = dst->ngroups;
    if (ahead) {
      if (k + MERGE_AHEAD < n) rt_aggtab_prefetch_slot(dst, src->hashes[gs ? gs[k + MERGE_AHEAD] : k + MERGE_AHEAD]);
      int64_t p = k + MERGE_AHEAD / 2 < n ? rt_aggtab_prefetch_group(dst, src->hashes[gs ? gs[k + MERGE_AHEAD / 2] : k + MERGE_AHEAD / 2]) : -1;
      if (p >= 0) prefetch_states(dst, p);
    }
    int64_t d = rt_aggtab_group_of(dst, src, g);
    if (d < 0) return RT_AGGX_NOMEM;
    if (first && dst->ngroups > before) first[d] = tag | (uint64_t)g;
    if (!merge_group(dst, d, src, g, &ovf)) return RT_AGGX_NOMEM;   /* not mergeable */
  }
  return ovf ? RT_AGGMERGE_OVERFLOW : 0;
}

int rt_aggtab_merge(rt_aggtab *dst, const rt_aggtab *src) {
  return rt_aggtab_merge_groups(dst, src, NULL, src->ngroups, NULL, 0);
}

/* ---- a worker's table kept across its morsels ------------------------------ */

/* Group g's first row in the morsel: its states start from zero, as a
 * fresh table's (rt_aggkeep_room made room in touched). */
static void keep_touch(rt_aggfold *f, rt_aggtab *t, int64_t g) {
  rt_aggtab_zero_states(t, g);
  f->touched[f->ntouched++] = (uint32_t)g;
  t->epoch[g] = t->morsel;
}

bool rt_aggkeep_on(rt_aggfold *f, rt_aggtab *t) {
  if (!lazy_on(f, t)) return false;
  t->morsel = 1;   /* the epochs are 0: every group is stale */
  f->track = true;
  if (!rt_aggkeep_room(f, t, 0)) {
    rt_aggkeep_off(f, t);
    return false;
  }
  return true;
}

void rt_aggkeep_morsel(rt_aggfold *f, rt_aggtab *t) {
  f->ntouched = 0;
  if (++t->morsel == 0) {   /* wrapped: no epoch may look current */
    memset(t->epoch, 0, (size_t)t->cap * 4);
    t->morsel = 1;
  }
}

bool rt_aggkeep_room(rt_aggfold *f, const rt_aggtab *t, int64_t rows) {
  int64_t need = t->ngroups + rows;
  if (need <= f->kcap) return true;
  int64_t cap = f->kcap ? f->kcap : 256;
  while (cap < need) cap *= 2;
  if (!rt_budget_charge((cap - f->kcap) * 12)) return false;
  uint32_t *tv = realloc(f->touched, (size_t)cap * sizeof *tv);
  if (tv) f->touched = tv;
  int64_t *dv = tv ? realloc(f->dst_of, (size_t)cap * sizeof *dv) : NULL;
  if (!dv) {
    rt_budget_credit((cap - f->kcap) * 12);
    return false;
  }
  f->dst_of = dv;
  memset(dv + f->kcap, 0xff, (size_t)(cap - f->kcap) * sizeof *dv);   /* -1: not found yet */
  f->kcap = cap;
  return true;
}

int rt_aggkeep_merge(rt_aggtab *dst, const rt_aggtab *src, rt_aggfold *f) {
  bool ovf = false;
  for (int64_t k = 0; k < f->ntouched; k++) {
    int64_t g = f->touched[k], d = f->dst_of[g];
    if (d < 0 && (d = f->dst_of[g] = rt_aggtab_group_of(dst, src, g)) < 0) return RT_AGGX_NOMEM;
    if (!merge_group(dst, d, src, g, &ovf)) return RT_AGGX_NOMEM;   /* not mergeable */
  }
  return ovf ? RT_AGGMERGE_OVERFLOW : 0;
}

void rt_aggkeep_off(rt_aggfold *f, rt_aggtab *t) {
  lazy_off(t);
  rt_budget_credit(f->kcap * 12);
  free(f->touched);
  free(f->dst_of);
  memset(f, 0, sizeof *f);
}
