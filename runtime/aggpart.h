/*
 * aggpart.h — the partitioned merge of AGGREGATE's morsel tables, for
 * many groups (exec/driver_par.c picks it).
 *
 * Merging every morsel's table into one table on one thread costs a
 * probe per group and morsel; with many groups that is about a third of
 * a two-thread run, and it does not get faster with threads. Instead the
 * groups are split by the high bits of their hash into nparts partitions
 * (a power of two), each a table of its own: a morsel's groups of
 * partition p merge only into partition p's table, so the partitions of
 * one morsel merge on several threads at once, and the next morsel's
 * owner starts on a partition as soon as this one is done with it.
 *
 * Each partition merges the morsels in morsel order and a morsel's groups
 * in its table's order, exactly as the one-table merge does, so a group's
 * state is that merge's (the same partial sums added in the same order,
 * runtime/aggmerge.h). What partitions lose is the order of groups
 * across partitions; each group keeps its first appearance (morsel,
 * group number in that morsel's table), which is its place in the
 * one-table merge's first-seen order, and rt_aggpart_emit writes the
 * groups in that order straight into the segment's output, on every
 * thread (a copy into the segment's table first, with its slots rebuilt,
 * was a serial pass over fresh memory as large as the output: a third of
 * agg_3keys' two-thread run, most of it the kernel zeroing new pages).
 *
 * Threads: rt_aggpart_split and a partition's rt_aggpart_merge touch only
 * the morsel's split and that partition; the caller makes sure one thread
 * merges a partition at a time, in morsel order (`next`, guarded by the
 * caller's lock).
 */
#ifndef PJ_AGGPART_H
#define PJ_AGGPART_H

#include "par.h"
#include "store.h"

typedef struct rt_aggpart {
  int nparts;
  int shift;           /* a group's partition: its hash >> shift */
  rt_aggtab *tabs;     /* per partition: its groups, in first-seen order */
  uint64_t **first;    /* per partition and group: morsel << 32 | group in that morsel's table */
  int64_t *firstcap;
  int64_t nmorsels;
  int64_t *mgroups;    /* per morsel: its table's group count */
  int64_t *next;       /* per partition: the next morsel it merges (the caller's lock) */
} rt_aggpart;

/* A morsel table's groups by partition: idx[at[p]..at[p+1]) are those of
 * partition p, in the table's order. A worker keeps one for its morsels. */
typedef struct rt_aggsplit {
  uint32_t *idx;
  int64_t cap;
  int64_t *at;         /* nparts + 1 */
} rt_aggsplit;

/* Whether a morsel table of `groups` groups from `rows` rows has enough
 * groups that the partitioned merge pays. */
bool rt_aggpart_wanted(const rt_aggtab *t, int64_t rows);
/* Partitions like `like` (its keys and aggregates) for nmorsels morsels
 * on `threads` threads. false when out of memory (pt is then freed). */
bool rt_aggpart_init(rt_aggpart *pt, const rt_aggtab *like, int threads, int64_t nmorsels);
/* Splits morsel m's table src by partition into sp. false when out of memory. */
bool rt_aggpart_split(rt_aggpart *pt, const rt_aggtab *src, int64_t m, rt_aggsplit *sp);
/* Merges src's (morsel m's) groups of partition p into p's table. 0,
 * RT_AGGX_NOMEM or RT_AGGMERGE_OVERFLOW. */
int rt_aggpart_merge(rt_aggpart *pt, int p, const rt_aggtab *src, const rt_aggsplit *sp, int64_t m);
/* Every morsel merged: the groups of every partition, how many, and
 * written into out (empty; the segment's output, of the table's key and
 * aggregate columns) in first-seen order, the rows copied on par's
 * workers, each piece of rows first touched by the thread that writes it.
 * 0 or RT_AGGX_NOMEM (out is then left empty or partly written: the
 * caller frees it). */
int64_t rt_aggpart_groups(const rt_aggpart *pt);
int rt_aggpart_emit(const rt_aggpart *pt, rt_rowbuf *out, const rt_par *par);
void rt_aggpart_free(rt_aggpart *pt);
void rt_aggsplit_free(rt_aggsplit *sp);

#endif
