/*
 * topk.h — ORDER BY … LIMIT k without buffering every row: the sort's
 * buffer is kept to the k rows that come first in the sort's order among
 * the rows seen so far, plus the candidates that arrived since the last
 * prune.
 *
 * The order is rt_sort_perm's: the keys, then input position (a stable
 * sort). Rows enter a buffer in input order (a morsel's rows after the
 * morsels before it), so of two rows tied on every key the one already in
 * the buffer wins; a new row is kept only when it comes strictly before
 * the bound, the k-th row of the last prune. Whatever the bound rejects
 * has k rows before it, all earlier in the input, so it is in no top k
 * that includes rows seen later: the k rows kept at the end are the first
 * k rows of a full stable sort of the input, in input order.
 *
 * A bound learnt from some rows holds for every row that comes after them
 * in the input, so a worker of a parallel scan keeps its own across the
 * morsels it takes (in increasing order), with a buffer of its own for
 * each morsel; the segment's state filters the morsels' rows again as
 * they are appended in morsel order.
 */
#ifndef PJ_TOPK_H
#define PJ_TOPK_H

#include "store.h"

/* Top-k is used up to this k; past it the sort sorts everything (a
 * prune's buffer holds up to about 2k rows). */
#define RT_TOPK_MAX 65536

/* One key of the bound: its sortable value (DESC: complemented) or, for
 * a string key, its id (compared by text). */
typedef struct rt_topk_val {
  uint64_t v;
  bool null;
  bool str;   /* the key is a string column (fixed at init) */
  bool f64;   /* a double column (fixed at init) */
} rt_topk_val;

typedef struct rt_topk {
  int64_t k;
  int nkeys;
  const rt_sortkey *keys;   /* the caller's, live as long as this */
  const rt_strpool *sp;
  bool bounded;             /* bound[] holds the bound */
  rt_topk_val *bound;       /* per key */
  uint32_t *keep;           /* scratch: rows kept by a filter or a prune */
  uint64_t *mark;           /* scratch: a prune's rows, one bit each */
  uint32_t *active;         /* RT_BATCH positions for rt_topk_prefilter */
  int64_t cap;              /* rows keep and mark have room for */
} rt_topk;

/* For a buffer of column types `types` (keys name its columns). false
 * when out of memory (nothing to free then). */
bool rt_topk_init(rt_topk *t, int64_t k, int nkeys, const rt_sortkey *keys, const rt_type *types,
                  const rt_strpool *sp);
/* Rows from.. of b arrived after all its others (later in the input):
 * drops those the bound rejects and, when the buffer has grown past about
 * 2k rows (or holds more than k with no bound yet), prunes it to its k
 * first rows. Kept rows stay in input order; rows past nrows are left
 * zero and NULL, as rt_rowbuf_reserve leaves them. 0, or -1 when out of
 * memory (the run fails; b is still a valid buffer). */
int rt_topk_add(rt_topk *t, rt_rowbuf *b, int64_t from);
/* Before a batch of n <= RT_BATCH positions enters a sort that has no
 * step before it: the positions whose keys (kv[j]: the batch's view of
 * key j's column) come before the bound, into active (ascending), and
 * their count; all n without a bound yet. Only those need appending. */
uint32_t rt_topk_prefilter(const rt_topk *t, const rt_view *const *kv, uint32_t n, uint32_t *active);
/* Prunes b to exactly its k first rows (fewer when it has fewer). */
int rt_topk_finish(rt_topk *t, rt_rowbuf *b);
/* Takes from's bound when it is tighter than t's (or t has none): from's
 * must have been learnt from rows that all come before t's next rows. */
void rt_topk_take_bound(rt_topk *t, const rt_topk *from);
void rt_topk_free(rt_topk *t);

#endif
