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
 *
 * One thread with GROUP BY folds lazily (rt_aggfold_next) once the
 * groups' sums pass 16 morsels' rows (exec/driver.c ex_agg_morsel_end): a
 * fold of every group at every morsel's end costs the group count per
 * morsel, then more than the morsel's rows. Instead the table
 * keeps per group the morsel its partial belongs to (rt_aggtab.epoch);
 * the first row of a later morsel in that group folds the partial into
 * the totals (rt_aggtab_refold, called by both backends after the group
 * lookup) and the finish folds the last ones. A group's totals so add the
 * same partials in the same order as the eager fold: the morsels the group
 * has no rows in add a partial of +0.0 or 0 there, which changes nothing
 * (a partial starts at +0.0, and a sum of +0.0 and anything is never
 * -0.0). An integer total passing 64 bits is remembered (ovf) and fails
 * the run at the next morsel's end or the finish.
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
  bool ovf;            /* a lazy fold's integer total passed 64 bits */
  /* A worker's table kept across its morsels (rt_aggkeep_*, below): the
   * first row of a morsel in a group then starts the group's states
   * afresh and lists the group, instead of folding. */
  bool track;
  uint32_t *touched;   /* the morsel's groups, in the order of their first rows */
  int64_t ntouched;
  int64_t *dst_of;     /* per group: the destination's group for it, -1 until a merge finds it */
  int64_t kcap;        /* entries of touched and dst_of */
} rt_aggfold;

/* Whether t has sums to fold (SUM, AVG). */
bool rt_aggfold_needed(const rt_aggtab *t);
/* The end of a morsel: adds t's partial sums into the totals and zeroes
 * them. 0, RT_AGGX_NOMEM or RT_AGGMERGE_OVERFLOW. */
int rt_aggfold_step(rt_aggfold *f, rt_aggtab *t);
/* The end of a morsel, lazily (see above; a table with keys): the first
 * call turns lazy folding on for t. 0, RT_AGGX_NOMEM or
 * RT_AGGMERGE_OVERFLOW. */
int rt_aggfold_next(rt_aggfold *f, rt_aggtab *t);
/* The end of the input: the last step, then the totals go back into t's
 * arrays (which rt_aggtab_emit reads; lazy folding ends). */
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
/* The same for the n groups gs[0..n) of src (all of them, in order, when
 * gs is NULL), in that order. A group new to dst, d, gets first[d] = tag
 * | its number in src (when first is not NULL: room for dst's groups
 * after the merge). */
int rt_aggtab_merge_groups(rt_aggtab *dst, const rt_aggtab *src, const uint32_t *gs, int64_t n,
                           uint64_t *first, uint64_t tag);

/* A parallel worker's table kept across its morsels (exec/driver_par.c),
 * for few groups: a fresh table per morsel inserts every group again and
 * its merge probes the destination for every group, each morsel; a kept
 * table holds the groups the worker has seen, and a group's first row in
 * a morsel (the epoch check both backends make, as for lazy folding)
 * zeroes its states, which then hold exactly what a fresh morsel table's
 * group would, and appends it to `touched`: the groups of the morsel in
 * the order a fresh table would number them. The merge adds them into the
 * destination in that order, finding each group there once per worker
 * (dst_of), so the destination's groups, their order and every sum are
 * those of the fresh tables' merge. New groups start stale (new_group)
 * so that their first row lists them in row order too. */
/* Turns keeping on for t (f zeroed; t has keys): every group is stale.
 * false when out of memory (t is then as before). */
bool rt_aggkeep_on(rt_aggfold *f, rt_aggtab *t);
/* The start of a morsel: no group touched yet. */
void rt_aggkeep_morsel(rt_aggfold *f, rt_aggtab *t);
/* Room for a batch of `rows` rows (each may touch one group). false when
 * out of memory. */
bool rt_aggkeep_room(rt_aggfold *f, const rt_aggtab *t, int64_t rows);
/* Adds the morsel's touched groups of src into dst, as rt_aggtab_merge
 * adds a fresh morsel table's. 0, RT_AGGX_NOMEM or RT_AGGMERGE_OVERFLOW. */
int rt_aggkeep_merge(rt_aggtab *dst, const rt_aggtab *src, rt_aggfold *f);
/* Turns keeping off (t's epochs go; f is zeroed). */
void rt_aggkeep_off(rt_aggfold *f, rt_aggtab *t);

#endif
