/*
 * isect_sweep.h — the streaming sweep of INTERVAL INTERSECTION OF
 * (isect_sweep.c), internal to runtime/isect.c: one partition's regions
 * generated in output order a slice at a time, in memory bounded by the
 * partition's rows whatever the number of regions.
 */
#ifndef PJ_ISECT_SWEEP_H
#define PJ_ISECT_SWEEP_H

#include "interval.h"

/* One operand's lane: n items sorted by (start, end, row), bounds doubled
 * as in isect.c (start 2ts; end 2(ts+dur), or 2ts+1 for a point). */
typedef struct rt_isweep_lane {
  const uint64_t *s, *e;
  const uint32_t *row;
  size_t n;
  bool overlaps;           /* two items of the lane meet */
} rt_isweep_lane;

typedef struct rt_isweep rt_isweep;

/* A sweep over k operands; its arrays grow to the largest lane seen and
 * are reused by the next partition. NULL when out of memory. */
rt_isweep *rt_isweep_new(int k);
void rt_isweep_free(rt_isweep *w);

/* Starts a partition (lanes[j] is operand j's; the arrays must outlive
 * the partition). Returns false when out of memory. */
bool rt_isweep_start(rt_isweep *w, const rt_isweep_lane *lanes);

/* Appends the partition's next regions to out until out->n reaches
 * limit: returns RT_ISWEEP_MORE when it stopped there, RT_ISWEEP_DONE
 * when the partition has no region left, RT_ISWEEP_OOM when out of
 * memory. */
enum { RT_ISWEEP_OOM = -1, RT_ISWEEP_MORE = 0, RT_ISWEEP_DONE = 1 };
int rt_isweep_step(rt_isweep *w, rt_isect_out *out, size_t limit);

/* Starts visited and jumps made since rt_isweep_new (for the stats). */
void rt_isweep_counts(const rt_isweep *w, uint64_t *events, uint64_t *skips);

/* Grows out's arrays to hold `need` regions (isect.c). */
bool rt_isect_reserve(rt_isect_out *o, size_t need);

#endif
