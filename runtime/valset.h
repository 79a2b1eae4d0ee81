/*
 * valset.h — a hash set of SQL values (integers, doubles, string ids), the
 * list of an `x IN (SELECT …)` subquery (exec/subq.c).
 *
 * Values compare as SQLite compares them: an integer equals a double of
 * the same value (1 = 1.0; exactly, so 2^53 + 1 is not 2^53 as a double),
 * and a number never equals a string. A string is its id in the run's
 * pool, so equal strings are equal ids.
 */
#ifndef PJ_VALSET_H
#define PJ_VALSET_H

#include "rt.h"

typedef struct rt_valset rt_valset;

/* NULL when out of memory. */
rt_valset *rt_valset_new(void);
void rt_valset_free(rt_valset *s);
/* Each returns 0 when out of memory (the set is left as it was). */
int rt_valset_add_i64(rt_valset *s, int64_t v);
int rt_valset_add_f64(rt_valset *s, double v);
int rt_valset_add_str(rt_valset *s, uint32_t id);
bool rt_valset_has_i64(const rt_valset *s, int64_t v);
bool rt_valset_has_f64(const rt_valset *s, double v);
bool rt_valset_has_str(const rt_valset *s, uint32_t id);
/* Distinct values held. */
int64_t rt_valset_count(const rt_valset *s);

#endif
