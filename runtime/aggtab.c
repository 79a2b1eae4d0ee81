/*
 * aggtab.c — the AGGREGATE hash table: key tuple → dense group number, and
 * per-group aggregate state arrays that the backends update in place.
 *
 * Two probing schemes share one slot array (`slots`, values group+1):
 *  - one key of stored type RT_I64 or RT_STR: the key value hashes with
 *    rt_hash_i64 and is compared against keys.data[0][group]; a NULL key is
 *    the separate `null_group`. Generated code inlines exactly this probe
 *    (see store.h), so its layout is a contract;
 *  - anything else (several keys, or a double key): the tuple of
 *    (presence, value bits) per key is hashed (tuple_hash) and compared
 *    against the stored hash and key row, so NULLs group together and -0.0
 *    equals 0.0. Generated code inlines this probe too when every key is
 *    an integer or a string (codegen/cg_agg.c repeats tuple_hash and
 *    calls rt_aggtab_insert_tuple on a miss), so tuple_hash, the NULL
 *    marking of key rows and `hashes` are a contract as well.
 * Small keys skip both probes: `direct` maps a single key below
 * RT_AGG_DIRECT, or a pair of two integer or string keys each below
 * RT_AGG_DIRECT2_W, to group+1. Every insert of such a key sets its entry
 * and both backends read it before hashing; an entry of 0 (not seen)
 * falls back to the probe, so it is only ever a shortcut to the group
 * the probe would find, and group numbers stay first-seen.
 * The slot array doubles at 50% load (rehashing from `hashes`, so keys are
 * never re-read); per-group arrays double with the group count. Big
 * arrays ask for huge pages (hugepage.h): probes and updates land at
 * random, and a table of a million groups spans thousands of 4 KiB pages.
 *
 * Out of memory: the table stops growing and the group functions return
 * -1; callers treat that as an error of the run.
 */
#include <math.h>
#include <stdlib.h>

#include "aggmerge.h"
#include "budget.h"
#include "hugepage.h"
#include "store.h"

#define INIT_SLOTS 1024
#define INIT_GROUPS 256

static bool single_fast(const rt_aggtab *t) {
  return t->nkeys == 1 && t->keys.types[0] != RT_F64;
}

/* Two integer or string keys: pairs of small keys are direct-indexed. */
static bool pair_direct(const rt_aggtab *t) {
  return t->nkeys == 2 && t->keys.types[0] != RT_F64 && t->keys.types[1] != RT_F64;
}

/* Entries of t->direct (0 without one). */
static size_t direct_len(const rt_aggtab *t) {
  if (single_fast(t)) return RT_AGG_DIRECT;
  if (pair_direct(t)) return (size_t)RT_AGG_DIRECT2_W * RT_AGG_DIRECT2_W;
  return 0;
}

static bool agg_needs_i(const rt_agg *a) {
  switch (a->kind) {
  case RT_AGG_COUNT_STAR: case RT_AGG_COUNT: case RT_AGG_COUNT_DISTINCT: return true;
  case RT_AGG_SUM: case RT_AGG_MIN: case RT_AGG_MAX: case RT_AGG_ANY_VALUE: return a->in != RT_F64;
  case RT_AGG_AVG: case RT_AGG_ARG_MAX: case RT_AGG_ARG_MIN: case RT_AGG_GROUP_CONCAT:
  case RT_AGG_MEDIAN: case RT_AGG_PERCENTILE: case RT_AGG_FIRST: case RT_AGG_LAST:
    return false;
  }
  return false;
}

static bool agg_needs_f(const rt_agg *a) {
  switch (a->kind) {
  case RT_AGG_COUNT_STAR: case RT_AGG_COUNT: case RT_AGG_COUNT_DISTINCT: case RT_AGG_ARG_MAX:
  case RT_AGG_ARG_MIN: case RT_AGG_GROUP_CONCAT: case RT_AGG_MEDIAN: case RT_AGG_PERCENTILE: case RT_AGG_FIRST: case RT_AGG_LAST:
    return false;
  case RT_AGG_SUM: case RT_AGG_MIN: case RT_AGG_MAX: case RT_AGG_ANY_VALUE: return a->in == RT_F64;
  case RT_AGG_AVG: return true;
  }
  return false;
}

/* aggs.def's OUT column, for the stored types (the runtime sits below ir/). */
static rt_type agg_out_type(rt_aggkind k, rt_type in, rt_type in2) {
  switch (k) {
  case RT_AGG_COUNT_STAR: case RT_AGG_COUNT: case RT_AGG_COUNT_DISTINCT: return RT_I64;
  case RT_AGG_AVG: case RT_AGG_MEDIAN: case RT_AGG_PERCENTILE: return RT_F64;
  case RT_AGG_SUM: return in == RT_F64 ? RT_F64 : RT_I64;
  case RT_AGG_MIN: case RT_AGG_MAX: case RT_AGG_ANY_VALUE: case RT_AGG_FIRST: case RT_AGG_LAST: return in;
  case RT_AGG_ARG_MAX: case RT_AGG_ARG_MIN: return in2;
  case RT_AGG_GROUP_CONCAT: return RT_STR;
  }
  return in;
}

void rt_aggtab_set_arg2(rt_aggtab *t, int a, rt_type in2, double param) {
  if (!t->aggs || a < 0 || a >= t->naggs) return;
  t->aggs[a].in2 = in2 == RT_NULLT ? RT_NULLT : rt_store_type(in2);
  t->aggs[a].param = param;
  t->aggs[a].out = agg_out_type(t->aggs[a].kind, t->aggs[a].in, t->aggs[a].in2);
}

void rt_aggtab_init(rt_aggtab *t, int nkeys, const rt_type *key_types, int naggs,
                    const rt_aggkind *kinds, const rt_type *in_types) {
  memset(t, 0, sizeof *t);
  t->nkeys = nkeys;
  t->naggs = naggs;
  t->null_group = -1;
  rt_rowbuf_init(&t->keys, nkeys, key_types);
  t->aggs = calloc(naggs > 0 ? (size_t)naggs : 1, sizeof *t->aggs);
  for (int a = 0; t->aggs && a < naggs; a++) {
    t->aggs[a].kind = kinds[a];
    t->aggs[a].in = kinds[a] == RT_AGG_COUNT_STAR ? RT_I64 : rt_store_type(in_types[a]);
    t->aggs[a].in2 = RT_NULLT;
    t->aggs[a].out = agg_out_type(kinds[a], t->aggs[a].in, RT_NULLT);
  }
  t->slots = calloc(INIT_SLOTS, sizeof *t->slots);
  t->mask = t->slots ? INIT_SLOTS - 1 : 0;
  if (t->keys.types && direct_len(t)) {   /* (types: NULL when out of memory) */
    t->direct = calloc(direct_len(t), sizeof *t->direct);
    if (!t->direct) {   /* the callers' check of slots fails the run */
      free(t->slots);
      t->slots = NULL;
      t->mask = 0;
    }
  }
}

/* Bytes per group of the state arrays and hashes (the key rowbuf charges
 * its own), and of the slot array beyond its initial size: what the table
 * charges to the run's memory budget (budget.h). */
static int64_t group_bytes(const rt_aggtab *t) {
  int64_t n = 8 + (t->epoch ? 4 : 0);   /* hashes, epochs */
  for (int a = 0; t->aggs && a < t->naggs; a++) {
    const rt_agg *g = &t->aggs[a];
    n += 1 + (agg_needs_i(g) ? 8 : 0) + (agg_needs_f(g) ? 8 : 0) + (g->kind == RT_AGG_AVG ? 8 : 0);
  }
  return n;
}

static int64_t slot_bytes(uint64_t mask) {
  return mask + 1 > INIT_SLOTS ? (int64_t)(mask + 1 - INIT_SLOTS) * 4 : 0;
}

void rt_aggtab_free(rt_aggtab *t) {
  if (t->slots) rt_budget_credit(t->cap * group_bytes(t) + slot_bytes(t->mask));
  for (int a = 0; t->aggs && a < t->naggs; a++) {
    free(t->aggs[a].i);
    free(t->aggs[a].f);
    free(t->aggs[a].n);
    free(t->aggs[a].has);
    rt_aggx_free(t->aggs[a].x);
  }
  free(t->aggs);
  free(t->slots);
  free(t->hashes);
  free(t->epoch);
  free(t->direct);
  rt_rowbuf_free(&t->keys);
  memset(t, 0, sizeof *t);
  t->null_group = -1;
}

/* Grows p (elements of size sz) to `cap` without writing the new part:
 * new_group writes each group's entries when it makes the group, so the
 * new pages are first touched one group after another, while the group
 * is hot anyway, instead of by a memset of the whole new half (at a
 * million groups, zeroing fresh pages was most of the table's growth).
 * Returns false on failure, leaving *p untouched. */
static bool grow_array(void **p, size_t sz, int64_t cap) {
  char *d = realloc(*p, (size_t)cap * sz);
  if (!d) return false;
  rt_advise_huge(d, (size_t)cap * sz);   /* read at random by group */
  *p = d;
  return true;
}

/* Bytes of the key buffer at `cap` rows, as rowbuf.c charges a buffer
 * (rt_rowbuf_free credits this for t->keys). */
static int64_t keys_bytes(const rt_rowbuf *b, int64_t cap) {
  int64_t n = 0;
  for (int c = 0; c < b->ncols; c++) n += cap * (int64_t)rt_type_size(b->types[c]) + (int64_t)RT_BITWORDS(cap) * 8;
  return n;
}

/* The key columns to `cap` rows (a multiple of 64), unwritten like the
 * state arrays (new_group zeroes a group's keys and each validity word it
 * starts). */
static bool grow_keys(rt_aggtab *t, int64_t cap) {
  rt_rowbuf *b = &t->keys;
  if (cap <= b->cap) return true;
  if (!rt_budget_charge(keys_bytes(b, cap) - keys_bytes(b, b->cap))) return false;
  for (int k = 0; k < b->ncols; k++) {
    if (!grow_array(&b->data[k], rt_type_size(b->types[k]), cap) ||
        !grow_array((void **)&b->valid[k], 8, (int64_t)RT_BITWORDS(cap))) {
      rt_budget_credit(keys_bytes(b, cap) - keys_bytes(b, b->cap));
      rt_budget_oom();
      return false;
    }
  }
  b->cap = cap;
  return true;
}

/* Grows the per-group arrays to at least `need` groups (doubling). */
static bool grow_groups_to(rt_aggtab *t, int64_t need) {
  if (!t->aggs || !t->slots) return false;
  int64_t cap = t->cap ? t->cap * 2 : INIT_GROUPS;
  while (cap < need && cap <= (int64_t)UINT32_MAX) cap *= 2;
  if (cap > (int64_t)UINT32_MAX - 1) return false;   /* slots hold group+1 in 32 bits */
  if (!rt_budget_charge((cap - t->cap) * group_bytes(t))) return false;
  for (int a = 0; a < t->naggs; a++) {
    rt_agg *g = &t->aggs[a];
    if (agg_needs_i(g) && !grow_array((void **)&g->i, 8, cap)) return false;
    if (agg_needs_f(g) && !grow_array((void **)&g->f, 8, cap)) return false;
    if (g->kind == RT_AGG_AVG && !grow_array((void **)&g->n, 8, cap)) return false;
    if (!grow_array((void **)&g->has, 1, cap)) return false;
  }
  if (!grow_array((void **)&t->hashes, 8, cap)) return false;
  if (t->epoch && !grow_array((void **)&t->epoch, 4, cap)) return false;
  if (!grow_keys(t, cap)) return false;
  t->cap = cap;
  return true;
}

static bool grow_groups(rt_aggtab *t) { return grow_groups_to(t, t->ngroups + 1); }

/* Doubles the slot array and reinserts every group that lives in it. */
static bool grow_slots(rt_aggtab *t) {
  uint64_t nmask = t->mask * 2 + 1;
  if (!rt_budget_charge(slot_bytes(nmask) - slot_bytes(t->mask))) return false;
  uint32_t *ns = calloc(nmask + 1, sizeof *ns);
  if (!ns) return false;
  rt_advise_huge(ns, (nmask + 1) * sizeof *ns);
  /* past the cache every slot written is a miss: have the later ones'
   * lines on their way (the hashes are read in order anyway) */
  int64_t ahead = t->ngroups > 4096 ? 16 : 0;
  for (int64_t g = 0; g < t->ngroups; g++) {
    if (ahead && g + ahead < t->ngroups) __builtin_prefetch(&ns[t->hashes[g + ahead] & nmask], 1);
    if (g == t->null_group && t->nkeys == 1) continue;   /* not slotted */
    uint64_t i = t->hashes[g] & nmask;
    while (ns[i]) i = (i + 1) & nmask;
    ns[i] = (uint32_t)(g + 1);
  }
  free(t->slots);
  t->slots = ns;
  t->mask = nmask;
  return true;
}

void rt_aggtab_zero_states(rt_aggtab *t, int64_t g) {
  for (int a = 0; a < t->naggs; a++) {
    rt_agg *ag = &t->aggs[a];
    if (ag->i) ag->i[g] = 0;
    if (ag->f) ag->f[g] = 0;
    if (ag->n) ag->n[g] = 0;
    ag->has[g] = 0;
  }
}

/* Appends a group (keys left zero/NULL for the caller to fill). */
static int64_t new_group(rt_aggtab *t, uint64_t hash) {
  if (t->ngroups == t->cap && !grow_groups(t)) return -1;
  int64_t g = t->ngroups++;
  t->hashes[g] = hash;
  /* its sums start as this morsel's; a kept worker table lists it at
   * its first row instead (aggmerge.h rt_aggkeep_on) */
  if (t->epoch) t->epoch[g] = t->fold->track ? t->morsel - 1 : t->morsel;
  /* the group's entries start zero (the arrays grow unwritten) */
  rt_aggtab_zero_states(t, g);
  for (int k = 0; k < t->nkeys; k++) {
    if (t->keys.types[k] == RT_STR) ((uint32_t *)t->keys.data[k])[g] = 0;
    else ((int64_t *)t->keys.data[k])[g] = 0;
    if ((g & 63) == 0) t->keys.valid[k][g >> 6] = 0;
  }
  t->keys.nrows = t->ngroups;
  return g;
}

/* Makes sure one more slotted group keeps the load at or below 1/2. */
static bool room_for_one(rt_aggtab *t) {
  if (!t->slots) return false;
  if ((uint64_t)(t->ngroups + 1) * 2 > t->mask + 1) return grow_slots(t);
  return true;
}

static void put_slot(rt_aggtab *t, uint64_t hash, int64_t g) {
  uint64_t i = hash & t->mask;
  while (t->slots[i]) i = (i + 1) & t->mask;
  t->slots[i] = (uint32_t)(g + 1);
}

/* ---- one integer or string key --------------------------------------------- */

int64_t rt_aggtab_insert_i64(rt_aggtab *t, int64_t v, uint64_t hash) {
  if (!room_for_one(t)) return -1;
  int64_t g = new_group(t, hash);
  if (g < 0) return -1;
  if (t->keys.types[0] == RT_STR) ((uint32_t *)t->keys.data[0])[g] = (uint32_t)v;
  else ((int64_t *)t->keys.data[0])[g] = v;
  rt_bit_set(t->keys.valid[0], (uint32_t)g);
  put_slot(t, hash, g);
  uint64_t dv = t->keys.types[0] == RT_STR ? (uint32_t)v : (uint64_t)v;
  if (t->direct && dv < RT_AGG_DIRECT) t->direct[dv] = (uint32_t)(g + 1);
  return g;
}

int64_t rt_aggtab_group_i64(rt_aggtab *t, int64_t v) {
  uint64_t dv = t->keys.types[0] == RT_STR ? (uint32_t)v : (uint64_t)v;
  if (t->direct && dv < RT_AGG_DIRECT && t->direct[dv]) return t->direct[dv] - 1;
  uint64_t h = rt_hash_i64((uint64_t)v);
  uint64_t i = h & t->mask;
  if (t->keys.types[0] == RT_STR) {
    const uint32_t *keys = t->keys.data[0];
    for (uint32_t s; (s = t->slots[i]) != 0; i = (i + 1) & t->mask)
      if (keys[s - 1] == (uint32_t)v) return s - 1;
  } else {
    const int64_t *keys = t->keys.data[0];
    for (uint32_t s; (s = t->slots[i]) != 0; i = (i + 1) & t->mask)
      if (keys[s - 1] == v) return s - 1;
  }
  return rt_aggtab_insert_i64(t, v, h);
}

/* ---- general tuples -------------------------------------------------------- */

/* Value bits as stored for a key: doubles fold -0.0 into 0.0 (they compare
 * equal, so they must group together) and every NaN into one pattern. */
static uint64_t key_bits(rt_type type, int64_t v) {
  if (type == RT_F64) {
    double d;
    memcpy(&d, &v, 8);
    if (d == 0) return 0;
    if (d != d) return 0x7ff8000000000000ull;
  }
  if (type == RT_STR) return (uint32_t)v;
  return (uint64_t)v;
}

static uint64_t tuple_hash(const rt_aggtab *t, const int64_t *vals, const uint8_t *isnull) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (int k = 0; k < t->nkeys; k++) {
    uint64_t x = isnull[k] ? 0 : key_bits(t->keys.types[k], vals[k]);
    h = rt_hash_i64(h ^ x ^ (isnull[k] ? 0x5bd1e9955bd1e995ull : 0)) + (uint64_t)k;
  }
  return h;
}

static bool tuple_eq(const rt_aggtab *t, int64_t g, const int64_t *vals, const uint8_t *isnull) {
  for (int k = 0; k < t->nkeys; k++) {
    bool stored_null = !rt_bit(t->keys.valid[k], (uint32_t)g);
    if (stored_null != (bool)isnull[k]) return false;
    if (stored_null) continue;
    uint64_t want = key_bits(t->keys.types[k], vals[k]);
    switch (t->keys.types[k]) {
    case RT_STR:
      if (((const uint32_t *)t->keys.data[k])[g] != (uint32_t)want) return false;
      break;
    default: {
      uint64_t have;
      memcpy(&have, (const int64_t *)t->keys.data[k] + g, 8);
      if (have != want) return false;
    }
    }
  }
  return true;
}

/* The direct entry of a key tuple of a two-key table, or -1 (none: no
 * direct array, another shape, a NULL or a key out of range). */
static int64_t tuple_direct(const rt_aggtab *t, const int64_t *vals, const uint8_t *isnull) {
  if (!t->direct || !pair_direct(t)) return -1;
  uint64_t bits[2] = {key_bits(t->keys.types[0], vals[0]), key_bits(t->keys.types[1], vals[1])};
  if (isnull[0] || isnull[1] || bits[0] >= RT_AGG_DIRECT2_W || bits[1] >= RT_AGG_DIRECT2_W) return -1;
  return (int64_t)rt_aggtab_direct2(bits[0], bits[1]);
}

/* The key tuple of src's group j, as the insert functions take it. */
static void stored_tuple(const rt_aggtab *src, int64_t j, int64_t *vals, uint8_t *isnull) {
  for (int k = 0; k < src->nkeys; k++) {
    isnull[k] = !rt_bit(src->keys.valid[k], (uint32_t)j);
    vals[k] = 0;
    if (isnull[k]) continue;
    if (src->keys.types[k] == RT_STR) vals[k] = ((const uint32_t *)src->keys.data[k])[j];
    else vals[k] = ((const int64_t *)src->keys.data[k])[j];
  }
}

static int64_t group_tuple(rt_aggtab *t, const int64_t *vals, const uint8_t *isnull) {
  int64_t d = tuple_direct(t, vals, isnull);
  if (d >= 0 && t->direct[d]) return t->direct[d] - 1;
  uint64_t h = tuple_hash(t, vals, isnull);
  uint64_t i = h & t->mask;
  for (uint32_t s; (s = t->slots[i]) != 0; i = (i + 1) & t->mask)
    if (t->hashes[s - 1] == h && tuple_eq(t, s - 1, vals, isnull)) return s - 1;
  return rt_aggtab_insert_tuple(t, vals, isnull, h);
}

int64_t rt_aggtab_insert_tuple(rt_aggtab *t, const int64_t *vals, const uint8_t *isnull, uint64_t h) {
  if (!room_for_one(t)) return -1;
  int64_t g = new_group(t, h);
  if (g < 0) return -1;
  for (int k = 0; k < t->nkeys; k++) {
    if (isnull[k]) continue;
    uint64_t bits = key_bits(t->keys.types[k], vals[k]);
    if (t->keys.types[k] == RT_STR) ((uint32_t *)t->keys.data[k])[g] = (uint32_t)bits;
    else memcpy((int64_t *)t->keys.data[k] + g, &bits, 8);
    rt_bit_set(t->keys.valid[k], (uint32_t)g);
  }
  put_slot(t, h, g);
  int64_t d = tuple_direct(t, vals, isnull);
  if (d >= 0) t->direct[d] = (uint32_t)(g + 1);
  return g;
}

/* ---- a group of another table (merging, runtime/aggmerge.c) -------------- */

/* Stored key k of t's group g equals src's group j's: both NULL, or both
 * present with the same stored bits (already folded by key_bits). */
static bool stored_eq(const rt_aggtab *t, int64_t g, const rt_aggtab *src, int64_t j) {
  for (int k = 0; k < t->nkeys; k++) {
    bool have = rt_bit(t->keys.valid[k], (uint32_t)g);
    if (have != rt_bit(src->keys.valid[k], (uint32_t)j)) return false;
    if (!have) continue;
    if (t->keys.types[k] == RT_STR) {
      if (((const uint32_t *)t->keys.data[k])[g] != ((const uint32_t *)src->keys.data[k])[j]) return false;
    } else if (((const int64_t *)t->keys.data[k])[g] != ((const int64_t *)src->keys.data[k])[j]) {
      return false;
    }
  }
  return true;
}

int64_t rt_aggtab_group_of(rt_aggtab *t, const rt_aggtab *src, int64_t j) {
  int nk = t->nkeys;
  if (nk == 0 || (nk == 1 && !rt_bit(src->keys.valid[0], (uint32_t)j))) {
    uint8_t isnull = 1;
    int64_t v = 0;
    return rt_aggtab_group(t, &v, &isnull);
  }
  if (single_fast(t)) {
    int64_t v = t->keys.types[0] == RT_STR ? (int64_t)((const uint32_t *)src->keys.data[0])[j]
                                           : ((const int64_t *)src->keys.data[0])[j];
    return rt_aggtab_group_i64(t, v);
  }
  /* a tuple: src's stored hash is tuple_hash of the same bits */
  uint64_t h = src->hashes[j];
  uint64_t i = h & t->mask;
  for (uint32_t s; (s = t->slots[i]) != 0; i = (i + 1) & t->mask)
    if (t->hashes[s - 1] == h && stored_eq(t, s - 1, src, j)) return s - 1;
  int64_t vals[nk];
  uint8_t isnull[nk];
  stored_tuple(src, j, vals, isnull);
  return rt_aggtab_insert_tuple(t, vals, isnull, h);
}

void rt_aggtab_prefetch_slot(const rt_aggtab *t, uint64_t hash) {
  __builtin_prefetch(&t->slots[hash & t->mask]);
}

int64_t rt_aggtab_prefetch_group(const rt_aggtab *t, uint64_t hash) {
  uint32_t s = t->slots[hash & t->mask];
  if (!s) return -1;
  int64_t g = s - 1;
  __builtin_prefetch(&t->hashes[g]);
  for (int k = 0; k < t->nkeys; k++) {
    __builtin_prefetch((const char *)t->keys.data[k] + (size_t)g * rt_type_size(t->keys.types[k]));
    __builtin_prefetch(&t->keys.valid[k][g >> 6]);
  }
  return g;
}

int64_t rt_aggtab_group_null(rt_aggtab *t) {
  if (t->nkeys == 0) {
    rt_aggtab_ensure_one(t);
    return t->ngroups ? 0 : -1;
  }
  if (t->nkeys > 1) {
    /* Every key NULL: an ordinary tuple. */
    int64_t *vals = calloc((size_t)t->nkeys, sizeof *vals);
    uint8_t *nulls = malloc((size_t)t->nkeys);
    int64_t g = -1;
    if (vals && nulls) {
      memset(nulls, 1, (size_t)t->nkeys);
      g = group_tuple(t, vals, nulls);
    }
    free(vals);
    free(nulls);
    return g;
  }
  if (t->null_group < 0) {
    /* Outside the slot array, so the inlined probe never meets it. */
    int64_t g = new_group(t, 0);
    if (g < 0) return -1;
    t->null_group = g;
  }
  return t->null_group;
}

int64_t rt_aggtab_group(rt_aggtab *t, const int64_t *vals, const uint8_t *isnull) {
  if (t->nkeys == 0) {
    rt_aggtab_ensure_one(t);
    return t->ngroups ? 0 : -1;
  }
  if (t->nkeys == 1) {
    if (isnull[0]) return rt_aggtab_group_null(t);
    if (single_fast(t)) return rt_aggtab_group_i64(t, vals[0]);
  }
  return group_tuple(t, vals, isnull);
}

void rt_aggtab_ensure_one(rt_aggtab *t) {
  if (t->ngroups == 0) new_group(t, 0);
}

/* Empties t->direct. A two-key table's array is 256 KiB, of which a few
 * groups touch a few lines: a worker's table emptied after every morsel
 * (exec/driver_par.c) clears the entries of its groups, not the array. */
static void clear_direct(rt_aggtab *t) {
  if (!pair_direct(t) || t->ngroups > 4096) {
    memset(t->direct, 0, direct_len(t) * sizeof *t->direct);
    return;
  }
  for (int64_t g = 0; g < t->ngroups; g++) {
    int64_t vals[2];
    uint8_t isnull[2];
    stored_tuple(t, g, vals, isnull);
    int64_t d = tuple_direct(t, vals, isnull);
    if (d >= 0) t->direct[d] = 0;
  }
}

void rt_aggtab_reset(rt_aggtab *t) {
  /* the groups' entries are written again by new_group */
  if (t->slots) memset(t->slots, 0, (t->mask + 1) * sizeof *t->slots);
  if (t->direct) clear_direct(t);
  t->ngroups = 0;
  t->keys.nrows = 0;
  t->null_group = -1;
  if (t->nkeys == 0) rt_aggtab_ensure_one(t);   /* the one group (room for it is there) */
}

/* ---- rows already in groups (store.h) ---------------------------------------- */

int64_t rt_aggtab_add_groups(rt_aggtab *t, int64_t k) {
  if (t->nkeys != 0) return -1;
  /* sized once: growing group by group copies every array ~log k times */
  if (t->ngroups + k > t->cap && !grow_groups_to(t, t->ngroups + k)) return -1;
  for (int64_t i = 0; i < k; i++)
    if (new_group(t, 0) < 0) return -1;
  return t->ngroups;
}

int rt_aggtab_fold(rt_aggtab *t, int a, int64_t g, int64_t v, bool vnull, int64_t w, bool wnull) {
  rt_agg *ag = &t->aggs[a];
  double d;
  memcpy(&d, &v, 8);
  bool f = ag->in == RT_F64;
  switch (ag->kind) {
  case RT_AGG_COUNT_STAR: ag->i[g]++; return 0;
  case RT_AGG_COUNT: ag->i[g] += !vnull; return 0;
  case RT_AGG_SUM:
    if (vnull) return 0;
    ag->has[g] = 1;
    if (f) ag->f[g] += d;
    else if (__builtin_add_overflow(ag->i[g], v, &ag->i[g])) return RT_AGGX_OVERFLOW;
    return 0;
  case RT_AGG_AVG:
    if (vnull) return 0;
    ag->f[g] += f ? d : (double)v;
    ag->n[g]++;
    ag->has[g] = 1;
    return 0;
  case RT_AGG_MIN:
  case RT_AGG_MAX: {
    if (vnull) return 0;
    bool mn = ag->kind == RT_AGG_MIN, better;
    if (!ag->has[g]) better = true;
    else if (f) better = mn ? d < ag->f[g] : d > ag->f[g];
    else if (ag->in == RT_STR) {
      int c = rt_str_cmp(t->strings, (uint32_t)v, (uint32_t)ag->i[g]);
      better = mn ? c < 0 : c > 0;
    } else better = mn ? v < ag->i[g] : v > ag->i[g];
    if (better) {
      if (f) ag->f[g] = d;
      else ag->i[g] = v;
      ag->has[g] = 1;
    }
    return 0;
  }
  case RT_AGG_ANY_VALUE:
    if (vnull || ag->has[g]) return 0;
    if (f) ag->f[g] = d;
    else ag->i[g] = v;
    ag->has[g] = 1;
    return 0;
  case RT_AGG_COUNT_DISTINCT: case RT_AGG_ARG_MAX: case RT_AGG_ARG_MIN: case RT_AGG_GROUP_CONCAT:
  case RT_AGG_MEDIAN: case RT_AGG_PERCENTILE: case RT_AGG_FIRST: case RT_AGG_LAST:
    return rt_agg_add(t, a, g, v, vnull, w, wnull);
  }
  return 0;
}

/* ---- output ---------------------------------------------------------------- */

/* Writes one value into out column c (of stored type out->types[c]) at row
 * r, converting from an int64 or a double source. */
static void put_i(rt_rowbuf *out, int c, int64_t r, int64_t v) {
  switch (out->types[c]) {
  case RT_F64: ((double *)out->data[c])[r] = (double)v; break;
  case RT_STR: ((uint32_t *)out->data[c])[r] = (uint32_t)v; break;
  default: ((int64_t *)out->data[c])[r] = v; break;
  }
  rt_bit_set(out->valid[c], (uint32_t)r);
}

static void put_f(rt_rowbuf *out, int c, int64_t r, double v) {
  if (out->types[c] == RT_F64) ((double *)out->data[c])[r] = v;
  else ((int64_t *)out->data[c])[r] = (int64_t)v;
  rt_bit_set(out->valid[c], (uint32_t)r);
}

/* Group g's value of aggregate ag into row r of out column c (left NULL
 * when the value is). runtime/aggx.c's kinds are written by rt_aggx_emit,
 * all groups at once. */
static void put_value(rt_rowbuf *out, int c, int64_t r, const rt_agg *ag, int64_t g) {
  switch (ag->kind) {
  case RT_AGG_COUNT_STAR: case RT_AGG_COUNT: case RT_AGG_COUNT_DISTINCT:
    put_i(out, c, r, ag->i[g]);
    break;
  case RT_AGG_ARG_MAX: case RT_AGG_ARG_MIN: case RT_AGG_GROUP_CONCAT: case RT_AGG_MEDIAN:
  case RT_AGG_PERCENTILE: case RT_AGG_FIRST: case RT_AGG_LAST:
    break;
  case RT_AGG_AVG:
    /* n counts the non-NULL inputs, so it decides NULL, and so does a
     * NaN sum (inf + -inf), as everywhere a NaN is made (SQLite). */
    if (ag->n[g] > 0 && !isnan(ag->f[g])) put_f(out, c, r, ag->f[g] / (double)ag->n[g]);
    break;
  case RT_AGG_SUM: case RT_AGG_MIN: case RT_AGG_MAX: case RT_AGG_ANY_VALUE:
    if (!ag->has[g]) break;   /* stays NULL */
    if (ag->in == RT_F64) {
      if (!isnan(ag->f[g])) put_f(out, c, r, ag->f[g]);
    } else {
      put_i(out, c, r, ag->i[g]);
    }
    break;
  }
}

/* Column c of out, rows at.. at+n, from n int64 values of which those
 * with has[g] (all when has is NULL) are not NULL: the common case of
 * rt_aggtab_emit without a call per value. */
static void put_i64s(rt_rowbuf *out, int c, int64_t at, const int64_t *v, const uint8_t *has, int64_t n) {
  memcpy((int64_t *)out->data[c] + at, v, (size_t)n * sizeof *v);
  uint64_t *bits = out->valid[c];
  for (int64_t g = 0; g < n; g++) {
    uint64_t r = (uint64_t)(at + g);
    bits[r >> 6] |= (uint64_t)(has ? has[g] != 0 : 1) << (r & 63);
  }
}

/* Key column k of t's groups into out column k, rows at.. */
static void emit_key(const rt_aggtab *t, int k, rt_rowbuf *out, int64_t at) {
  int64_t n = t->ngroups;
  rt_type kt = t->keys.types[k];
  if (kt == RT_I64 && out->types[k] == RT_I64 && at % 64 == 0) {
    /* values as they are; the key's validity words as they are */
    memcpy((int64_t *)out->data[k] + at, t->keys.data[k], (size_t)n * 8);
    const uint64_t *kv = t->keys.valid[k];
    uint64_t *ov = out->valid[k] + at / 64;
    for (size_t w = 0; w < RT_BITWORDS(n); w++) ov[w] |= kv[w];
    return;
  }
  for (int64_t g = 0; g < n; g++) {
    if (!rt_bit(t->keys.valid[k], (uint32_t)g)) continue;
    if (kt == RT_F64) put_f(out, k, at + g, ((const double *)t->keys.data[k])[g]);
    else if (kt == RT_STR) put_i(out, k, at + g, ((const uint32_t *)t->keys.data[k])[g]);
    else put_i(out, k, at + g, ((const int64_t *)t->keys.data[k])[g]);
  }
}

/* Aggregate a of t's groups into out column c, rows at.. */
static int emit_agg(const rt_aggtab *t, int a, rt_rowbuf *out, int c, int64_t at) {
  int64_t n = t->ngroups;
  const rt_agg *ag = &t->aggs[a];
  if (out->types[c] == RT_I64 && ag->in != RT_F64) {
    switch (ag->kind) {
    case RT_AGG_COUNT_STAR: case RT_AGG_COUNT:
      put_i64s(out, c, at, ag->i, NULL, n);
      return 0;
    case RT_AGG_SUM: case RT_AGG_MIN: case RT_AGG_MAX: case RT_AGG_ANY_VALUE:
      put_i64s(out, c, at, ag->i, ag->has, n);
      return 0;
    case RT_AGG_COUNT_DISTINCT: case RT_AGG_AVG: case RT_AGG_ARG_MAX: case RT_AGG_ARG_MIN: case RT_AGG_GROUP_CONCAT:
    case RT_AGG_MEDIAN: case RT_AGG_PERCENTILE: case RT_AGG_FIRST: case RT_AGG_LAST:
      break;
    }
  }
  for (int64_t g = 0; g < n; g++) put_value(out, c, at + g, ag, g);
  return rt_aggx_emit(t, ag, out, c, at);
}

int rt_aggtab_emit(const rt_aggtab *t, rt_rowbuf *out) {
  int64_t n = t->ngroups;
  if (n == 0) return 0;
  rt_rowbuf_reserve(out, n);
  if (out->cap < out->nrows + n) return RT_AGGX_NOMEM;
  int64_t at = out->nrows;
  for (int k = 0; k < t->nkeys && k < out->ncols; k++) emit_key(t, k, out, at);
  for (int a = 0; a < t->naggs && t->nkeys + a < out->ncols; a++) {
    int rc = emit_agg(t, a, out, t->nkeys + a, at);
    if (rc) return rc;
  }
  out->nrows += n;
  return 0;
}

/* ---- output by moving the table's arrays ------------------------------------ */

/* Validity words of n rows from per-group flags (ok[g] != 0: not NULL);
 * the values of NULL rows are set to 0, as the copying emit leaves them. */
static void valid_from(uint64_t *v, const uint8_t *ok, int64_t *vals, int64_t n) {
  for (int64_t w = 0; w * 64 < n; w++) {
    int64_t lo = w * 64, m = n - lo < 64 ? n - lo : 64;
    uint64_t bits = 0;
    for (int64_t j = 0; j < m; j++) bits |= (uint64_t)(ok[lo + j] != 0) << j;
    v[w] = bits;
    if (bits != (m == 64 ? ~0ull : (1ull << m) - 1))
      for (int64_t j = 0; j < m; j++)
        if (!(bits >> j & 1)) vals[lo + j] = 0;
  }
}

/* A double aggregate's words: not NULL when has[g] and not NaN (a NaN
 * sum is NULL, put_value); NULL rows' values set to 0. */
static void valid_from_f(uint64_t *v, const uint8_t *has, double *f, int64_t n) {
  for (int64_t w = 0; w * 64 < n; w++) {
    int64_t lo = w * 64, m = n - lo < 64 ? n - lo : 64;
    uint64_t bits = 0;
    for (int64_t j = 0; j < m; j++) bits |= (uint64_t)(has[lo + j] != 0 && !isnan(f[lo + j])) << j;
    v[w] = bits;
    for (int64_t j = 0; j < m; j++)
      if (!(bits >> j & 1)) f[lo + j] = 0;
  }
}

/* Aggregate a's state array that is its output column as it is (taken
 * from t, its validity written into v), or NULL when the column must be
 * written value by value. */
static void *take_agg(rt_aggtab *t, int a, rt_type out, uint64_t *v, int64_t n) {
  rt_agg *ag = &t->aggs[a];
  void *d = NULL;
  switch (ag->kind) {
  case RT_AGG_COUNT_STAR: case RT_AGG_COUNT:
    if (out != RT_I64) return NULL;
    for (int64_t w = 0; w * 64 < n; w++) v[w] = n - w * 64 >= 64 ? ~0ull : (1ull << (n - w * 64)) - 1;
    d = ag->i;
    ag->i = NULL;
    return d;
  case RT_AGG_SUM: case RT_AGG_MIN: case RT_AGG_MAX: case RT_AGG_ANY_VALUE:
    if (ag->in == RT_F64 && out == RT_F64) {
      valid_from_f(v, ag->has, ag->f, n);
      d = ag->f;
      ag->f = NULL;
    } else if (ag->in == RT_I64 && out == RT_I64) {
      valid_from(v, ag->has, ag->i, n);
      d = ag->i;
      ag->i = NULL;
    }
    return d;
  case RT_AGG_COUNT_DISTINCT: case RT_AGG_AVG: case RT_AGG_ARG_MAX: case RT_AGG_ARG_MIN: case RT_AGG_GROUP_CONCAT:
  case RT_AGG_MEDIAN: case RT_AGG_PERCENTILE: case RT_AGG_FIRST: case RT_AGG_LAST:
    break;
  }
  return NULL;
}

int rt_aggtab_emit_move(rt_aggtab *t, rt_rowbuf *out) {
  int64_t n = t->ngroups;
  if (n == 0 || out->nrows || out->cap || out->ncols != t->nkeys + t->naggs) return rt_aggtab_emit(t, out);
  /* t->cap is a power of two of at least 256, so at least these rows */
  int64_t cap = (n + 63) & ~(int64_t)63;
  size_t words = RT_BITWORDS(cap);
  if (!rt_budget_charge(keys_bytes(out, cap))) return RT_AGGX_NOMEM;
  out->cap = cap;   /* rt_rowbuf_free credits what was charged, whatever columns are there */
  for (int c = 0; c < out->ncols; c++) {
    size_t sz = rt_type_size(out->types[c]);
    void *d = NULL;
    uint64_t *v = NULL;
    if (c < t->nkeys) {
      if (out->types[c] == t->keys.types[c]) {   /* the key column as it is */
        d = t->keys.data[c];
        v = t->keys.valid[c];
        t->keys.data[c] = NULL;
        t->keys.valid[c] = NULL;
      }
    } else {
      if (!(v = malloc(words * 8))) return RT_AGGX_NOMEM;
      v[words - 1] = 0;   /* the bits past n */
      if (!(d = take_agg(t, c - t->nkeys, out->types[c], v, n))) {
        free(v);
        v = NULL;
      }
    }
    if (d) {
      memset((char *)d + (size_t)n * sz, 0, (size_t)(cap - n) * sz);   /* rows past n: zero */
      out->data[c] = d;
      out->valid[c] = v;
      continue;
    }
    /* written value by value into zeroed arrays */
    out->data[c] = calloc((size_t)cap, sz);
    out->valid[c] = calloc(words, 8);
    if (!out->data[c] || !out->valid[c]) return RT_AGGX_NOMEM;
    if (c < t->nkeys) {
      emit_key(t, c, out, 0);
    } else {
      int rc = emit_agg(t, c - t->nkeys, out, c, 0);
      if (rc) return rc;
    }
  }
  out->nrows = n;
  return 0;
}

void rt_aggtab_emit_gather(const rt_aggtab *tabs, const uint64_t *from, int64_t n, rt_rowbuf *out, int64_t at) {
  const rt_aggtab *t0 = &tabs[0];
  for (int c = 0; c < out->ncols; c++) {
    size_t sz = rt_type_size(out->types[c]);
    memset((char *)out->data[c] + (size_t)at * sz, 0, (size_t)n * sz);
    memset(out->valid[c] + at / 64, 0, RT_BITWORDS(n) * 8);
  }
  for (int k = 0; k < t0->nkeys && k < out->ncols; k++) {
    size_t sz = rt_type_size(t0->keys.types[k]);
    char *d = (char *)out->data[k] + (size_t)at * sz;
    for (int64_t r = 0; r < n; r++) {
      const rt_aggtab *s = &tabs[from[r] >> 32];
      uint32_t j = (uint32_t)from[r];
      if (!rt_bit(s->keys.valid[k], j)) continue;
      memcpy(d + (size_t)r * sz, (const char *)s->keys.data[k] + (size_t)j * sz, sz);
      rt_bit_set(out->valid[k], (uint32_t)(at + r));
    }
  }
  for (int a = 0; a < t0->naggs && t0->nkeys + a < out->ncols; a++)
    for (int64_t r = 0; r < n; r++)
      put_value(out, t0->nkeys + a, at + r, &tabs[from[r] >> 32].aggs[a], (uint32_t)from[r]);
}
