/*
 * argindex.h — finding one arg of an arg set fast (EXTRACT_ARG,
 * LANGUAGE.md §7.7) in an `args` table (TRACES.md §1.10: arg_set_id, key,
 * int_value, string_value, real_value).
 *
 * An importer writes `args` sorted by arg_set_id, so an arg set is a run
 * of rows found by binary search; a table not in that order gets a sort
 * permutation once. The index also knows, for every key, which kinds of
 * values it holds, so a pipeline can type EXTRACT_ARG(…, 'key') before
 * running. It holds a reference to its table and is immutable once built
 * (tables are): build it once per table and keep it.
 */
#ifndef PJ_ARGINDEX_H
#define PJ_ARGINDEX_H

#include "rt.h"

enum { RT_ARG_INT = 1, RT_ARG_REAL = 2, RT_ARG_STR = 4 };

typedef struct rt_argindex rt_argindex;

/* NULL with *why set to the column t lacks (or has of another type), or
 * NULL with *why NULL when out of memory. */
rt_argindex *rt_argindex_new(rt_table *t, const char **why);
/* Reference counted: new gives one; the last unref frees it. */
rt_argindex *rt_argindex_ref(rt_argindex *x);
void rt_argindex_unref(rt_argindex *x);
const rt_table *rt_argindex_table(const rt_argindex *x);

/* The value of `key` (a string id) in arg set `set`: RT_ARG_INT (*i),
 * RT_ARG_REAL (*f), RT_ARG_STR (*s), or 0 when absent or NULL. */
int rt_argindex_get(const rt_argindex *x, int64_t set, uint32_t key, int64_t *i, double *f,
                    uint32_t *s);

/* The kinds of value `key` holds anywhere in the table (RT_ARG_* bits). */
int rt_argindex_key_kinds(const rt_argindex *x, uint32_t key);

#endif
