/*
 * aggmerge.h — what makes AGGREGATE's results the same for any thread
 * count: the per-morsel sums of one table (rt_aggfold) and the merge of a
 * morsel's table into the run's (rt_aggtab_merge).
 *
 * The rule (docs/DECISIONS.md "Parallel execution"): a segment's input is
 * cut into morsels of EX_MORSEL_BATCHES consecutive batches (65,536 rows
 * of a table); a SUM or AVG adds each morsel's rows in row order from 0
 * into a partial, and the group's value is the partials added in morsel
 * order from 0 (integer sums are checked at both steps). One thread keeps
 * one table whose sums are that morsel's partial and folds them into
 * totals at every morsel's end (rt_aggfold_step); several threads give
 * each morsel its own table and merge the tables in morsel order
 * (rt_aggtab_merge), which adds the same partials in the same order.
 * Groups are merged in the morsel table's order, so the run's table keeps
 * first-seen order. Both backends update the same arrays, so both follow
 * the rule as the driver cuts the input.
 */
#ifndef PJ_AGGMERGE_H
#define PJ_AGGMERGE_H

#include "store.h"

/* Codes beside RT_AGGX_NOMEM: a sum passed 64 bits. */
enum { RT_AGGMERGE_OVERFLOW = -4 };

typedef struct rt_aggfold {
  int naggs;
  int64_t cap;         /* groups the totals arrays hold */
  double **tf;         /* per aggregate: totals of f (SUM of doubles, AVG), or NULL */
  int64_t **ti;        /* per aggregate: totals of i (SUM of integers), or NULL */
} rt_aggfold;

/* Whether t has sums to fold (SUM, AVG). */
bool rt_aggfold_needed(const rt_aggtab *t);
/* The end of a morsel: adds t's partial sums into the totals and zeroes
 * them. 0, RT_AGGX_NOMEM or RT_AGGMERGE_OVERFLOW. */
int rt_aggfold_step(rt_aggfold *f, rt_aggtab *t);
/* The end of the input: the last step, then the totals go back into t's
 * arrays (which rt_aggtab_emit reads) and f is freed. */
int rt_aggfold_finish(rt_aggfold *f, rt_aggtab *t);
void rt_aggfold_free(rt_aggfold *f);

/* Whether tables of t's aggregates can be merged (not the ones of
 * runtime/aggx.c: COUNT(DISTINCT), ARG_MAX/MIN, GROUP_CONCAT, MEDIAN,
 * PERCENTILE, whose state is not merged). */
bool rt_aggtab_mergeable(const rt_aggtab *t);
/* An empty table of like's keys and aggregates (for a morsel). false when
 * out of memory (dst is then freed). */
bool rt_aggtab_init_like(rt_aggtab *dst, const rt_aggtab *like);
/* Adds every group of src, in src's order, into dst (same shape). 0,
 * RT_AGGX_NOMEM or RT_AGGMERGE_OVERFLOW. */
int rt_aggtab_merge(rt_aggtab *dst, const rt_aggtab *src);

#endif
