/*
 * tshape_sib.c — TREE MERGE SIBLINGS BY … [ORDERED] (LANGUAGE.md §9.4;
 * tshape.h says what comes out).
 *
 * Groups are numbered in level order (by depth, each level in input
 * order: parents first, siblings in first-seen order): a row's group is
 * the one keyed by (its parent's group, its BY values) — a hash map of
 * group numbers, compared against each group's first row — or, with
 * ORDERED, the last group made under that parent group when its BY values
 * are equal, else a new one. BY values compare as PER keys do: NULL
 * equals NULL, -0.0 equals 0.0, NaN equals NaN, strings by interned id.
 *
 * Level order is what lets the map's slots be fetched ahead: when a level
 * is reached every parent's group is known. Visiting rows in input order
 * instead (sequential sweeps, but each key needs the answer for a row just
 * before it) measured slower at a million slices, and so did per-group
 * child lists (their slots are just as scattered).
 */
#include <stdlib.h>

#include "runtime/budget.h"
#include "tshape_int.h"

#define NONE RT_TREE_NONE

static uint64_t by_hash(const rt_tshape_in *in, uint32_t pg, uint32_t r) {
  uint64_t h = rt_hash_i64((uint64_t)pg + 0x9e3779b97f4a7c15ull);
  for (int k = 0; k < in->nby; k++) {
    const rt_tcol *c = &in->by[k];
    uint64_t x = rt_tcol_null(c, r) ? 0x5bd1e9955bd1e995ull : rt_ts_by_bits(c, r);
    h = rt_hash_i64(h ^ x) + (uint64_t)k;
  }
  return h;
}

/* One slot of the (parent group, BY values) → group map, probed linearly:
 * with one BY column `key` is its value bits (NULL: a sentinel, told from
 * a real value equal to it by the group's bit in `gnull`), so a probe
 * compares in the slot without reading the group's row; with several,
 * `key` is the tuple's hash and a match is confirmed on the first row. */
typedef struct sibslot {
  uint64_t key;
  uint32_t pg;       /* parent group, NONE for roots */
  uint32_t g1;       /* group + 1, 0 = empty */
} sibslot;

typedef struct sibmap {
  sibslot *s;
  uint64_t mask;
  uint64_t *gnull;   /* one BY column: bit per group, its key is NULL */
} sibmap;

#define SIB_NULL 0x6a09e667f3bcc909ull

static uint64_t sib_key(const rt_tshape_in *in, uint32_t pg, uint32_t r, bool *isnull) {
  if (in->nby == 1) {
    *isnull = rt_tcol_null(&in->by[0], r);
    return *isnull ? SIB_NULL : rt_ts_by_bits(&in->by[0], r);
  }
  *isnull = false;
  return by_hash(in, pg, r);
}

static uint64_t sib_hash(uint64_t key, uint32_t pg) {
  return rt_hash_i64(key ^ rt_hash_i64((uint64_t)pg + 0x9e3779b97f4a7c15ull));
}

/* The map is read at random, a slot per row: on huge pages (rt_mem_big)
 * it costs a TLB entry per 2 MiB instead of per 4 KiB, which measured
 * about a fifth of MERGE SIBLINGS' time at a million slices. */
static bool sib_grow(sibmap *m, uint64_t nslots) {
  sibslot *ns = rt_mem_big(nslots * sizeof *ns);
  if (!ns) return false;
  memset(ns, 0, nslots * sizeof *ns);
  uint64_t mask = nslots - 1;
  for (uint64_t i = 0; m->s && i <= m->mask; i++) {
    if (!m->s[i].g1) continue;
    uint64_t h = sib_hash(m->s[i].key, m->s[i].pg) & mask;
    while (ns[h].g1) h = (h + 1) & mask;
    ns[h] = m->s[i];
  }
  rt_mem_free(m->s);
  m->s = ns;
  m->mask = mask;
  return true;
}

/* Rows in level order: by depth, each level in input order (a stable
 * counting sort by depth). Every parent comes before its children, and
 * when a level is reached every parent's group is known, so the map's
 * slots can be fetched ahead (the map is far larger than the caches). */
static uint32_t *level_order(const rt_tforest *f) {
  uint32_t n = f->n, maxd = 0;
  uint32_t *depth = rt_mem_big(sizeof(uint32_t) * ((size_t)n + 1));
  uint32_t *lv = rt_mem_big(sizeof(uint32_t) * ((size_t)n + 1));
  uint32_t *cnt = NULL;
  if (depth && lv) {
    for (uint32_t i = 0; i < n; i++) {
      uint32_t x = f->order ? f->order[i] : i, p = f->par[x];
      depth[x] = p == NONE ? 0 : depth[p] + 1;
      if (depth[x] > maxd) maxd = depth[x];
    }
    cnt = rt_mem_calloc((size_t)maxd + 2, sizeof *cnt);
  }
  if (!cnt) {
    rt_mem_free(depth);
    rt_mem_free(lv);
    return NULL;
  }
  for (uint32_t x = 0; x < n; x++) cnt[depth[x] + 1]++;
  for (uint32_t d = 0; d <= maxd; d++) cnt[d + 1] += cnt[d];
  for (uint32_t x = 0; x < n; x++) lv[cnt[depth[x]]++] = x;
  rt_mem_free(depth);
  rt_mem_free(cnt);
  return lv;
}

int rt_ts_merge_siblings(const rt_tshape_in *in, const rt_tforest *f, rt_tshape_out *out,
                          rt_err *err, const char *stage, int pos) {
  uint32_t n = f->n;
  uint32_t *g = out->group, *rep = out->rows, *gpar = out->prow;
  uint32_t ng = 0;
  sibmap m = {0};
  uint32_t *last = NULL, *lv = level_order(f);
  bool one = in->nby == 1;
  if (!lv) return rt_ts_fail(err, pos, stage, "out of memory");
  if (in->ordered) {
    last = rt_mem_big(sizeof(uint32_t) * ((size_t)n + 1));   /* per group + 1; [0]: roots */
    if (last) memset(last, 0xff, sizeof(uint32_t) * ((size_t)n + 1));
  } else {
    m.gnull = one ? rt_mem_calloc(RT_BITWORDS((size_t)n + 1), 8) : NULL;
    /* Sized for half the rows as groups (a flamegraph of a trace merges
     * about that many): no rehash below that. */
    uint64_t want = 1024;
    while (want < n) want *= 2;
    if (!sib_grow(&m, want)) m.mask = 0;
  }
  if (in->ordered ? !last : (!m.s || (one && !m.gnull))) {
    rt_mem_free(m.s);
    rt_mem_free(m.gnull);
    rt_mem_free(lv);
    return rt_ts_fail(err, pos, stage, "out of memory");
  }
  memset(g, 0xff, sizeof(uint32_t) * n);
  enum { AHEAD = 16 };
  for (uint32_t i = 0; i < n; i++) {
    uint32_t x = lv[i], p = f->par[x];
    uint32_t pg = p == NONE ? NONE : g[p], grp = NONE;
    if (in->ordered) {
      uint32_t *l = &last[pg == NONE ? 0 : pg + 1];
      if (*l != NONE && rt_ts_by_eq(in, rep[*l], x)) {
        grp = *l;
      } else {
        grp = ng++;
        *l = grp;
        rep[grp] = x;
        gpar[grp] = pg;
      }
      g[x] = grp;
      continue;
    }
    /* Two steps ahead the parent's group, one step ahead the slot. */
    if (i + 2 * AHEAD < n) {
      uint32_t q = f->par[lv[i + 2 * AHEAD]];
      if (q != NONE) __builtin_prefetch(&g[q]);
    }
    if (i + AHEAD < n) {
      uint32_t y = lv[i + AHEAD], q = f->par[y];
      uint32_t qg = q == NONE ? NONE : g[q];
      if (q == NONE || qg != NONE) {
        bool yn;
        __builtin_prefetch(&m.s[sib_hash(sib_key(in, qg, y, &yn), qg) & m.mask]);
      }
    }
    bool isnull;
    uint64_t key = sib_key(in, pg, x, &isnull), h = sib_hash(key, pg) & m.mask;
    for (;;) {
      const sibslot *sl = &m.s[h];
      if (!sl->g1) break;
      uint32_t c = sl->g1 - 1;
      if (sl->key == key && sl->pg == pg &&
          (one ? rt_bit(m.gnull, c) == isnull : rt_ts_by_eq(in, rep[c], x))) {
        grp = c;
        break;
      }
      h = (h + 1) & m.mask;
    }
    if (grp == NONE) {
      grp = ng++;
      m.s[h] = (sibslot){.key = key, .pg = pg, .g1 = grp + 1};
      if (one && isnull) rt_bit_set(m.gnull, grp);
      rep[grp] = x;
      gpar[grp] = pg;
      if ((uint64_t)ng * 2 > m.mask + 1 && !sib_grow(&m, (m.mask + 1) * 4)) {
        rt_mem_free(m.s);
        rt_mem_free(m.gnull);
        rt_mem_free(lv);
        return rt_ts_fail(err, pos, stage, "out of memory");
      }
    }
    g[x] = grp;
  }
  rt_mem_free(m.s);
  rt_mem_free(m.gnull);
  rt_mem_free(last);
  rt_mem_free(lv);
  out->n = ng;
  return 0;
}

