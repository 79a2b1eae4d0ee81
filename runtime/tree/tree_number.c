/*
 * tree_number.c — TREE ACCUMULATE's node numbering (see tree.h for the
 * three tiers and their rules).
 *
 * The tiers exist because the common inputs need no hash map at all: a
 * columnar table's id is its row index (TABLE tier), and a SQLite query
 * over such a table usually still yields 0, 1, 2, … with parents first
 * (DENSE tier). Only the first row that breaks density pays for building
 * the map, by back-filling the ids already numbered.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tree.h"

int rt_treenum_init(rt_treenum *t, rt_treetier tier, uint64_t table_rows, bool str_ids,
                    rt_err *err, const char *stage, int pos, const rt_strpool *sp) {
  memset(t, 0, sizeof *t);
  t->tier = str_ids ? RT_TREE_TIER_HASH : tier;
  t->limit = table_rows;
  t->str_ids = str_ids;
  t->err = err;
  t->stage = stage ? stage : "TREE ACCUMULATE";
  t->pos = pos;
  t->sp = sp;
  t->node_out = malloc(RT_BATCH * sizeof(uint32_t));
  t->pnode_out = malloc(RT_BATCH * sizeof(uint32_t));
  return t->node_out && t->pnode_out;
}

void rt_treenum_free(rt_treenum *t) {
  free(t->keys);
  free(t->hasrow);
  free(t->slots);
  rt_tree_big_free(t->map, t->map ? (t->mask + 1) * sizeof *t->map : 0);
  t->map = NULL;
  free(t->node_out);
  free(t->pnode_out);
  rt_tree_big_free(t->table_pnode, t->table_pnode_bytes);
  t->table_pnode = NULL;
  free(t->table_bmin);
  free(t->table_bmax);
  t->table_bmin = t->table_bmax = NULL;
  t->keys = NULL;
  t->hasrow = NULL;
  t->slots = NULL;
  t->node_out = t->pnode_out = NULL;
}

static int fail(rt_treenum *t, const char *msg) {
  rt_errorf(t->err, t->pos, "%s: %s", t->stage, msg);
  return -1;
}

/* "7" or "'name'" for messages. */
void rt_treenum_id_text(const rt_treenum *t, int64_t id, char *buf, size_t n) {
  if (!t->str_ids) {
    snprintf(buf, n, "%lld", (long long)id);
    return;
  }
  size_t len = 0;
  const char *s = t->sp ? rt_str_get(t->sp, (uint32_t)id, &len) : NULL;
  if (!s) snprintf(buf, n, "#%lld", (long long)id);
  else snprintf(buf, n, "'%.*s'", (int)(len < 200 ? len : 200), s);
}

static int fail_id(rt_treenum *t, const char *fmt, int64_t id) {
  char idb[256], msg[400];
  rt_treenum_id_text(t, id, idb, sizeof idb);
  snprintf(msg, sizeof msg, fmt, idb);
  return fail(t, msg);
}

#define MISSING_PARENT "a row names a parent which is not itself a row in the input"

/* A row names a parent that cannot be a row (TABLE tier: no such index). */
static int fail_parent(rt_treenum *t, int64_t id, int64_t parent) {
  char idb[256], pb[256], msg[700];
  rt_treenum_id_text(t, id, idb, sizeof idb);
  rt_treenum_id_text(t, parent, pb, sizeof pb);
  snprintf(msg, sizeof msg, MISSING_PARENT ": the row with id %s has parent_id %s", idb, pb);
  return fail(t, msg);
}

/* A NULL id, named by the row's place among the stage's input rows (this
 * row is the next one numbered) and its parent_id. */
static int fail_no_id(rt_treenum *t, int64_t parent, bool pnull) {
  char pb[300], msg[400];
  if (pnull) snprintf(pb, sizeof pb, "no parent_id");
  else {
    char v[256];
    rt_treenum_id_text(t, parent, v, sizeof v);
    snprintf(pb, sizeof pb, "parent_id %s", v);
  }
  snprintf(msg, sizeof msg, "a row has no id: row %llu of the input, with %s",
           (unsigned long long)t->nrows + 1, pb);
  return fail(t, msg);
}

/* ---- the hash map ------------------------------------------------------------ */

/* The map stores each id next to its node number (rt_treeslot, 16 bytes,
 * four to a cache line), so a probe touches one line instead of a slot
 * array and then keys[node] somewhere else. Open addressing, power-of-two
 * size, linear probing, load factor at most 1/2. `hasrow` is a bit per
 * node (1M nodes = 128 KiB, cache resident). */

static int grow_nodes(rt_treenum *t) {
  uint32_t cap = t->cap ? t->cap * 2 : 1024;
  if (cap < t->cap) return fail(t, "too many rows");
  uint64_t *h = realloc(t->hasrow, RT_BITWORDS(cap) * 8);
  if (!h) return fail(t, "out of memory");
  memset(h + RT_BITWORDS(t->cap), 0, (RT_BITWORDS(cap) - RT_BITWORDS(t->cap)) * 8);
  t->hasrow = h;
  t->cap = cap;
  return 0;
}

/* Moves the map to nslots slots (a power of two). The old slots are read
 * in order; the new ones are prefetched a few entries ahead because each
 * lands on a random cache line. */
static int rehash(rt_treenum *t, uint64_t nslots) {
  rt_treeslot *s = rt_tree_big_alloc(nslots * sizeof *s);
  if (!s) return fail(t, "out of memory");
  uint64_t mask = nslots - 1, old = t->map ? t->mask + 1 : 0;
  const rt_treeslot *o = t->map;
  enum { AHEAD = 8 };
  for (uint64_t i = 0; i < old; i++) {
    if (i + AHEAD < old && o[i + AHEAD].node1)
      __builtin_prefetch(&s[rt_hash_i64((uint64_t)o[i + AHEAD].key) & mask], 1);
    if (!o[i].node1) continue;
    uint64_t h = rt_hash_i64((uint64_t)o[i].key) & mask;
    while (s[h].node1) h = (h + 1) & mask;
    s[h] = o[i];
  }
  rt_tree_big_free(t->map, old * sizeof *o);
  t->map = s;
  t->mask = mask;
  return 0;
}

/* Slots for n nodes at load <= 1/2 (at least 1024). */
static uint64_t slots_for(uint64_t n) {
  uint64_t nslots = 1024;
  while (nslots < n * 2 + 2) nslots *= 2;
  return nslots;
}

/* Node of id, adding it (as awaited, no row yet) when new; *fresh says so.
 * UINT32_MAX on error. */
static inline __attribute__((always_inline)) uint32_t lookup(rt_treenum *t, int64_t id, bool *fresh) {
  rt_treeslot *map = t->map;
  uint64_t mask = t->mask, h = rt_hash_i64((uint64_t)id) & mask;
  for (;;) {
    uint32_t s = map[h].node1;
    if (!s) break;
    if (map[h].key == id) {
      *fresh = false;
      return s - 1;
    }
    h = (h + 1) & mask;
  }
  *fresh = true;
  /* A map whose last growth failed (out of memory, or refused by the run's
   * memory budget) takes no more keys, so the probe above always finds a
   * free slot even if the caller keeps going after the error. */
  if ((uint64_t)t->nnodes * 2 > mask + 1) return fail(t, "out of memory"), UINT32_MAX;
  if (t->nnodes == RT_TREE_NONE - 1) return fail(t, "too many rows"), UINT32_MAX;
  if (t->nnodes == t->cap && grow_nodes(t) < 0) return UINT32_MAX;
  uint32_t node = t->nnodes++;
  map[h].key = id;
  map[h].node1 = node + 1;
  /* Grow 4x while the map is small (fewer moves of every key), 2x once it
   * is large (memory). */
  if ((uint64_t)t->nnodes * 2 > mask + 1 &&
      rehash(t, (mask + 1) * ((mask + 1) < (1u << 20) ? 4 : 2)) < 0)
    return UINT32_MAX;
  return node;
}

/* Leaves the dense tiers: every row so far has node = id = its arrival
 * index, so the map gets ids 0..nrows-1 → themselves. Sized once for the
 * expected rows when the driver knows them (size_hint). */
static int to_hash(rt_treenum *t) {
  uint64_t want = t->size_hint > t->nrows ? t->size_hint : t->nrows;
  while (t->cap < want + 1) {
    if (grow_nodes(t) < 0) return -1;
  }
  for (uint32_t i = 0; i < t->nrows; i++) rt_bit_set(t->hasrow, i);
  if (rehash(t, slots_for(want)) < 0) return -1;
  for (uint32_t i = 0; i < t->nrows; i++) {
    uint64_t h = rt_hash_i64(i) & t->mask;
    while (t->map[h].node1) h = (h + 1) & t->mask;
    t->map[h].key = i;
    t->map[h].node1 = i + 1;
  }
  t->nnodes = t->nrows;
  t->tier = RT_TREE_TIER_HASH;
  return 0;
}

static inline __attribute__((always_inline)) int hash_row(rt_treenum *t, int64_t id, int64_t parent, bool pnull, uint32_t *node,
                           uint32_t *pnode) {
  /* string ids start in this tier with no map yet */
  if (!t->map && to_hash(t) < 0) return -1;
  bool fresh;
  uint32_t n = lookup(t, id, &fresh);
  if (n == UINT32_MAX) return -1;
  if (!fresh) {
    if (rt_bit(t->hasrow, n)) return fail_id(t, "two rows have the id %s", id);
    t->awaited--;   /* named as a parent before; its row is here now */
  }
  rt_bit_set(t->hasrow, n);
  uint32_t p = RT_TREE_NONE;
  if (!pnull) {
    if (parent == id) return fail_id(t, "the row with id %s is its own parent", id);
    p = lookup(t, parent, &fresh);
    if (p == UINT32_MAX) return -1;
    if (fresh) t->awaited++;
  }
  t->nrows++;
  *node = n;
  *pnode = p;
  return 0;
}

/* HASH tier over a batch: the slots of the row AHEAD positions on are
 * prefetched, so the random cache misses of a large map overlap instead
 * of queueing one after another. Plain int64 arrays (SQLite batches,
 * table columns) get their own loop without per-value type dispatch. */
enum { HASH_AHEAD = 16 };

static int hash_batch_i64(rt_treenum *t, const int64_t *id, const uint64_t *ivalid,
                          const int64_t *pd, const uint64_t *pvalid, const uint32_t *active,
                          uint32_t k, uint32_t nactive) {
  uint32_t *no = t->node_out, *po = t->pnode_out;
  for (; k < nactive; k++) {
    if (k + HASH_AHEAD < nactive) {
      uint32_t j = active ? active[k + HASH_AHEAD] : k + HASH_AHEAD;
      const rt_treeslot *map = t->map;
      uint64_t mask = t->mask;
      __builtin_prefetch(&map[rt_hash_i64((uint64_t)id[j]) & mask]);
      __builtin_prefetch(&map[rt_hash_i64((uint64_t)pd[j]) & mask]);
    }
    uint32_t i = active ? active[k] : k;
    bool pn = pvalid && !rt_bit(pvalid, i);
    if (ivalid && !rt_bit(ivalid, i)) return fail_no_id(t, pn ? 0 : pd[i], pn);
    if (hash_row(t, id[i], pn ? 0 : pd[i], pn, &no[i], &po[i]) < 0) return -1;
  }
  return 0;
}

static int hash_batch(rt_treenum *t, const rt_view *id, const rt_view *parent,
                      const uint32_t *active, uint32_t k, uint32_t nactive) {
  if (k >= nactive) return 0;
  if (!t->map && to_hash(t) < 0) return -1;
  if (id->type == RT_I64 && parent->type == RT_I64 && !id->sel && !parent->sel)
    return hash_batch_i64(t, id->data, id->valid, parent->data, parent->valid, active, k, nactive);
  uint32_t *no = t->node_out, *po = t->pnode_out;
  for (; k < nactive; k++) {
    if (k + HASH_AHEAD < nactive) {
      uint32_t j = active ? active[k + HASH_AHEAD] : k + HASH_AHEAD;
      uint64_t mask = t->mask;
      __builtin_prefetch(&t->map[rt_hash_i64((uint64_t)rt_view_i64(id, j)) & mask]);
      __builtin_prefetch(&t->map[rt_hash_i64((uint64_t)rt_view_i64(parent, j)) & mask]);
    }
    uint32_t i = active ? active[k] : k;
    bool in = rt_view_is_null(id, i), pn = rt_view_is_null(parent, i);
    int64_t pv = pn ? 0 : rt_view_i64(parent, i);
    if (in) return fail_no_id(t, pv, pn);
    int64_t v = rt_view_i64(id, i);
    if (hash_row(t, v, pv, pn, &no[i], &po[i]) < 0) return -1;
  }
  return 0;
}

/* ---- rows and batches ------------------------------------------------------------ */

int rt_treenum_row(rt_treenum *t, int64_t id, bool idnull, int64_t parent, bool pnull,
                   uint32_t *node, uint32_t *pnode) {
  if (idnull) return fail_no_id(t, parent, pnull);
  switch (t->tier) {
  case RT_TREE_TIER_TABLE:
    /* The plan chose this tier for a scan of row indices; anything else
     * would index per-node arrays out of bounds. */
    if ((uint64_t)id >= t->limit) return fail(t, "internal error: an id is not a row index");
    if (!pnull) {
      if (parent == id) return fail_id(t, "the row with id %s is its own parent", id);
      if ((uint64_t)parent >= t->limit) return fail_parent(t, id, parent);
    }
    *node = (uint32_t)id;
    *pnode = pnull ? RT_TREE_NONE : (uint32_t)parent;
    t->nrows++;
    return 0;
  case RT_TREE_TIER_DENSE:
    if (id == (int64_t)t->nrows && (pnull || (uint64_t)parent < t->nrows)) {
      *node = (uint32_t)id;
      *pnode = pnull ? RT_TREE_NONE : (uint32_t)parent;
      t->nrows++;
      return 0;
    }
    if (t->nrows == RT_TREE_NONE) return fail(t, "too many rows");
    if (to_hash(t) < 0) return -1;
    return hash_row(t, id, parent, pnull, node, pnode);
  default:
    return hash_row(t, id, parent, pnull, node, pnode);
  }
}

/* The common shapes get loops over plain arrays (no per-row type
 * dispatch): every position active, int64 parent values (table columns,
 * SQLite batches) with optional validity bits. Each returns how many rows
 * it numbered; it stops at the first row its tier's rule does not cover. */
static uint32_t table_fast(rt_treenum *t, int64_t base, const int64_t *pd, const uint64_t *pvalid,
                           uint32_t n) {
  uint32_t *no = t->node_out, *po = t->pnode_out;
  uint64_t lim = t->limit;
  uint32_t k = 0;
  for (; k < n; k++) {
    int64_t v = base + k, pv = pd[k];
    bool pn = pvalid && !rt_bit(pvalid, k);
    if ((uint64_t)v >= lim || (!pn && ((uint64_t)pv >= lim || pv == v))) break;
    no[k] = (uint32_t)v;
    po[k] = pn ? RT_TREE_NONE : (uint32_t)pv;
  }
  t->nrows += k;
  return k;
}

static uint32_t dense_fast(rt_treenum *t, const int64_t *id, const uint64_t *ivalid,
                           const int64_t *pd, const uint64_t *pvalid, uint32_t n) {
  uint32_t *no = t->node_out, *po = t->pnode_out;
  uint64_t next = t->nrows;
  if (next + n >= RT_TREE_NONE) return 0;   /* the row path reports it */
  uint32_t k = 0;
  for (; k < n; k++) {
    bool in = ivalid && !rt_bit(ivalid, k), pn = pvalid && !rt_bit(pvalid, k);
    int64_t pv = pd[k];
    if (in || (uint64_t)id[k] != next || (!pn && (uint64_t)pv >= next)) break;
    no[k] = (uint32_t)next++;
    po[k] = pn ? RT_TREE_NONE : (uint32_t)pv;
  }
  t->nrows = (uint32_t)next;
  return k;
}

static bool plain_i64(const rt_view *v) { return (v->type == RT_I64 || v->type == RT_BOOL) && !v->sel; }

int rt_treenum_batch(rt_treenum *t, const rt_view *id, const rt_view *parent,
                     const uint32_t *active, uint32_t nactive) {
  uint32_t *no = t->node_out, *po = t->pnode_out;
  uint32_t k = 0;
  /* Dense tiers: a tight loop while the rule holds; the first row that
   * does not goes through rt_treenum_row, and so does everything after
   * it once the tier is HASH. */
  if (t->tier == RT_TREE_TIER_TABLE && id->type == RT_ID && !id->sel && !active &&
      plain_i64(parent)) {
    k = table_fast(t, id->base, parent->data, parent->valid, nactive);
  } else if (t->tier == RT_TREE_TIER_DENSE && !active && plain_i64(id) && plain_i64(parent)) {
    k = dense_fast(t, id->data, id->valid, parent->data, parent->valid, nactive);
  } else if (t->tier == RT_TREE_TIER_TABLE && id->type == RT_ID && !id->sel) {
    for (; k < nactive; k++) {
      uint32_t i = active ? active[k] : k;
      int64_t v = id->base + i;
      bool pn = rt_view_is_null(parent, i);
      int64_t pv = pn ? 0 : rt_view_i64(parent, i);
      if ((uint64_t)v >= t->limit || (!pn && ((uint64_t)pv >= t->limit || pv == v))) break;
      no[i] = (uint32_t)v;
      po[i] = pn ? RT_TREE_NONE : (uint32_t)pv;
    }
    t->nrows += k;
  } else if (t->tier == RT_TREE_TIER_DENSE) {
    uint32_t next = t->nrows;
    for (; k < nactive; k++) {
      uint32_t i = active ? active[k] : k;
      if (rt_view_is_null(id, i)) break;
      int64_t v = rt_view_i64(id, i);
      bool pn = rt_view_is_null(parent, i);
      int64_t pv = pn ? 0 : rt_view_i64(parent, i);
      if (v != (int64_t)next || (!pn && (uint64_t)pv >= next) || next == RT_TREE_NONE) break;
      no[i] = next++;
      po[i] = pn ? RT_TREE_NONE : (uint32_t)pv;
    }
    t->nrows = next;
  }
  for (; k < nactive && t->tier != RT_TREE_TIER_HASH; k++) {
    uint32_t i = active ? active[k] : k;
    bool in = rt_view_is_null(id, i), pn = rt_view_is_null(parent, i);
    int64_t v = in ? 0 : rt_view_i64(id, i);
    int64_t pv = pn ? 0 : rt_view_i64(parent, i);
    if (rt_treenum_row(t, v, in, pv, pn, &no[i], &po[i]) < 0) return -1;
  }
  return hash_batch(t, id, parent, active, k, nactive);
}

int rt_treenum_finish(rt_treenum *t) {
  if (t->tier == RT_TREE_TIER_TABLE) {
    /* node numbers are row indices below the table's row count (equal to
     * the rows read, since the scan is unfiltered) */
    t->nnodes = (uint32_t)(t->limit > t->nrows ? t->limit : t->nrows);
    return 0;
  }
  if (t->tier == RT_TREE_TIER_DENSE) {
    t->nnodes = t->nrows;
    return 0;
  }
  if (t->awaited) {
    /* Name one parent id that never arrived (the map has it, without a
     * row), and how many more there are. */
    char pb[256] = "?", msg[500];
    for (uint64_t h = 0; t->map && h <= t->mask; h++) {
      uint32_t s = t->map[h].node1;
      if (s && !rt_bit(t->hasrow, s - 1)) {
        rt_treenum_id_text(t, t->map[h].key, pb, sizeof pb);
        break;
      }
    }
    if (t->awaited > 1)
      snprintf(msg, sizeof msg, MISSING_PARENT ": no row has the id %s (a parent_id), nor %u more "
               "parent ids", pb, t->awaited - 1);
    else
      snprintf(msg, sizeof msg, MISSING_PARENT ": no row has the id %s (a parent_id)", pb);
    return fail(t, msg);
  }
  if (t->keep_map) return 0;
  free(t->keys);
  free(t->hasrow);
  free(t->slots);
  rt_tree_big_free(t->map, t->map ? (t->mask + 1) * sizeof *t->map : 0);
  t->map = NULL;
  t->keys = NULL;
  t->hasrow = NULL;
  t->slots = NULL;
  t->cap = 0;
  return 0;
}

uint32_t rt_treenum_find(const rt_treenum *t, int64_t id) {
  if (t->tier != RT_TREE_TIER_HASH)
    return id >= 0 && (uint64_t)id < t->nrows ? (uint32_t)id : RT_TREE_NONE;
  if (!t->map) return RT_TREE_NONE;
  uint64_t h = rt_hash_i64((uint64_t)id) & t->mask;
  for (uint32_t s; (s = t->map[h].node1) != 0; h = (h + 1) & t->mask)
    if (t->map[h].key == id) return t->hasrow && rt_bit(t->hasrow, s - 1) ? s - 1 : RT_TREE_NONE;
  return RT_TREE_NONE;
}
