/*
 * jointab.h — the hash table of a JOIN (LANGUAGE.md §8): the joined
 * relation's buffer (a rowbuf its segment wrote) indexed by its equality
 * keys, probed row by row by both backends (the interpreter through
 * rt_jointab_find, the JIT inline for one key: see codegen/cg_join.c, and
 * the layout in codegen/cg_types.c, checked in tests/unit/test_layout.c).
 *
 * Keys are 64-bit words: integers as themselves, doubles as their bits
 * (-0.0 folded to 0.0), strings as their pool id (the pool interns, so
 * equal strings have equal ids). A NULL key (and a NaN, which SQLite
 * reads as NULL) matches nothing: such build rows are never inserted.
 *
 * The rows of one key form a chain in buffer order (next[]), so the
 * matches of an input row come in the relation's order (also when big
 * relations are built on the workers). A single integer
 * key whose values span little more than the row count (ids, utids) is
 * `direct`: slots is indexed by key - dmin, no hashing and no compare.
 * Otherwise slots is open-addressed (mask + 1 entries, linear probing
 * from hash & mask), each entry the head row + 1 of one key (0: empty).
 *
 * The buffer gets one all-NULL row appended at index nrows: an input row
 * of a LEFT or FULL join without a match reads the relation's columns
 * there. matched[] records the rows some input row matched (RIGHT and
 * FULL emit the others at the end).
 */
#ifndef PJ_JOINTAB_H
#define PJ_JOINTAB_H

#include "store.h"

typedef enum rt_joinkind {
  RT_JOIN_INNER, RT_JOIN_LEFT, RT_JOIN_RIGHT, RT_JOIN_FULL, RT_JOIN_CROSS
} rt_joinkind;

#define RT_JOIN_END UINT32_MAX   /* the end of a chain / no match */
#define RT_JOIN_MAX_ROWS ((int64_t)UINT32_MAX - 2)
#define RT_JOIN_MAX_KEYS 64      /* more equalities stay in the residual */

typedef struct rt_jointab {
  int32_t nkeys;
  int32_t direct;
  uint32_t *slots;
  uint64_t mask;
  int64_t dmin;
  uint64_t drange;
  uint32_t *next;
  int64_t **keys;        /* keys[k][row] */
  uint8_t *matched;
  int64_t nrows;
  rt_rowbuf *buf;
  int32_t *kinds;        /* per key: RT_I64, RT_F64 or RT_STR (stored kinds) */
  int64_t *gcache;       /* rt_jointab_gcache's */
  int32_t unique;        /* no two rows share a key: every chain is one row */
  uint32_t *memo;        /* rt_jointab_memo's */
} rt_jointab;

/* Hash of a tuple of key words (one word: rt_hash_i64, which the JIT
 * inlines). */
static inline uint64_t rt_join_hash(const int64_t *w, int n) {
  uint64_t h = rt_hash_i64((uint64_t)w[0]);
  for (int k = 1; k < n; k++) h = rt_hash_i64(h ^ ((uint64_t)w[k] + 0x9e3779b97f4a7c15ull));
  return h;
}

/* The key word of a double: its bits with -0.0 as 0.0; false for NaN
 * (no match). */
static inline bool rt_join_f64_word(double d, int64_t *w) {
  if (d != d) return false;
  d += 0.0;
  memcpy(w, &d, sizeof d);
  return true;
}

/* Relations of fewer rows are built on one thread: below this the
 * workers' start costs more than the build. */
#define RT_JOIN_PAR_MIN (1 << 16)

struct rt_par;

/* Builds the table over buf (kept, not owned: the driver frees it), keyed
 * by buffer columns keycols[0..nkeys). nkeys 0 (a nested loop): every
 * row is one chain. Appends the NULL row. par (runtime/par.h; NULL: one
 * thread) reads the keys and fills the slots on workers for relations of
 * RT_JOIN_PAR_MIN rows and more; every chain, and so every match, is the
 * one thread's (jointab_insert.c). All memory is taken on the calling
 * thread. 0, or -1 with the message ("out of memory", too many rows) in
 * *msg. */
int rt_jointab_build(rt_jointab *t, rt_rowbuf *buf, int nkeys, const int *keycols,
                     bool want_matched, const struct rt_par *par, const char **msg);
/* Inserts the rows r with has[r] != 0 (their key words in t->keys; every
 * next[r] RT_JOIN_END) into t's zeroed slots and sets t->unique
 * (jointab_insert.c). has[] is overwritten. */
void rt_jointab_insert(rt_jointab *t, uint8_t *has, const struct rt_par *par);
/* The first row whose key equals words (no NULLs), or RT_JOIN_END. */
uint32_t rt_jointab_find(const rt_jointab *t, const int64_t *words);
void rt_jointab_free(rt_jointab *t);
/* Per buffer row (the NULL row included), -1 at first: a group number
 * the JIT keeps when the segment's AGGREGATE is keyed by a column of
 * this relation (codegen/cg_agg.c). Made on first use; NULL when out of
 * memory. */
int64_t *rt_jointab_gcache(rt_jointab *t);
/* n entries of RT_JOIN_UNKNOWN at first: the head of this table's chain
 * for each row of another relation whose columns are this probe's keys
 * (a later join keyed by an earlier one's columns: codegen/cg_join.c
 * looks the key up once per row of that relation). Made on first use;
 * NULL when out of memory. */
#define RT_JOIN_UNKNOWN (UINT32_MAX - 1)
uint32_t *rt_jointab_memo(rt_jointab *t, int64_t n);

#endif
