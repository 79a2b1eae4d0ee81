/*
 * lanes.c — PER-key partitioning shared by the interval operators: a key
 * tuple maps to a dense lane number, numbered in first-inserted order.
 *
 * Each key contributes a NULL flag and 64 value bits, so NULL agrees with
 * NULL; doubles fold -0.0 into 0.0 and every NaN into one pattern (they
 * compare equal, so they must share a lane). The table is open addressed
 * (slots hold lane + 1) at most half full; per-lane arrays keep the key
 * bits and the hash, so growing never re-reads the input.
 *
 * rt_aggtab would number groups the same way, but it cannot look a key up
 * without inserting it, which a join probe needs, and it carries aggregate
 * state the interval operators do not use.
 */
#include <stdlib.h>

#include "interval.h"
#include "runtime/budget.h"
#include "runtime/par.h"

#define INIT_SLOTS 64
#define INIT_LANES 32

int rt_lanes_init(rt_lanes *l, int nkeys, const rt_type *types, const char *stage, rt_err *err) {
  memset(l, 0, sizeof *l);
  if (nkeys < 0 || nkeys > RT_LANES_MAXKEYS)
    return rt_errorf(err, -1, "%s: too many PER columns", stage);
  l->nkeys = nkeys;
  for (int k = 0; k < nkeys; k++) l->types[k] = types[k];
  return 1;
}

void rt_lanes_free(rt_lanes *l) {
  rt_mem_free(l->bits);
  rt_mem_free(l->nulls);
  rt_mem_free(l->hash);
  rt_mem_free(l->slots);
  int nkeys = l->nkeys;
  rt_type types[RT_LANES_MAXKEYS];
  memcpy(types, l->types, sizeof types);
  memset(l, 0, sizeof *l);
  l->nkeys = nkeys;
  memcpy(l->types, types, sizeof types);
}

static uint64_t fold_bits(rt_type t, int64_t v) {
  if (t == RT_F64) {
    double d;
    memcpy(&d, &v, 8);
    if (d == 0) return 0;
    if (d != d) return 0x7ff8000000000000ull;
  }
  if (t == RT_STR) return (uint32_t)v;
  return (uint64_t)v;
}

static uint64_t tuple_hash(const rt_lanes *l, const uint64_t *bits, uint64_t nullmask) {
  if (l->nkeys == 1) return rt_hash_i64(bits[0] ^ (nullmask ? 0x5bd1e9955bd1e995ull : 0));
  uint64_t h = 0x9e3779b97f4a7c15ull ^ nullmask;
  for (int k = 0; k < l->nkeys; k++) h = rt_hash_i64(h ^ bits[k]) + (uint64_t)k;
  return h;
}

static bool lane_eq(const rt_lanes *l, uint32_t lane, const uint64_t *bits, uint64_t nullmask) {
  if (l->nulls[lane] != nullmask) return false;
  const uint64_t *have = l->bits + (size_t)lane * (size_t)l->nkeys;
  for (int k = 0; k < l->nkeys; k++)
    if (have[k] != bits[k]) return false;
  return true;
}

static bool grow_slots(rt_lanes *l) {
  uint64_t nsl = l->slots ? (l->mask + 1) * 2 : INIT_SLOTS;
  uint32_t *ns = rt_mem_calloc(nsl, sizeof *ns);
  if (!ns) return false;
  uint64_t mask = nsl - 1;
  for (uint32_t g = 0; g < l->n; g++) {
    uint64_t i = l->hash[g] & mask;
    while (ns[i]) i = (i + 1) & mask;
    ns[i] = g + 1;
  }
  rt_mem_free(l->slots);
  l->slots = ns;
  l->mask = mask;
  return true;
}

static bool grow_lanes(rt_lanes *l) {
  if (l->cap >= UINT32_MAX / 2) return false;
  uint32_t cap = l->cap ? l->cap * 2 : INIT_LANES;
  size_t kb = (size_t)(l->nkeys ? l->nkeys : 1);
  uint64_t *b = rt_mem_realloc(l->bits, (size_t)cap * kb * sizeof *b);
  if (!b) return false;
  l->bits = b;
  uint64_t *nu = rt_mem_realloc(l->nulls, (size_t)cap * sizeof *nu);
  if (!nu) return false;
  l->nulls = nu;
  uint64_t *h = rt_mem_realloc(l->hash, (size_t)cap * sizeof *h);
  if (!h) return false;
  l->hash = h;
  l->cap = cap;
  return true;
}

/* Key value bits are already folded here. Never changes the table. */
static int64_t find_bits(const rt_lanes *l, const uint64_t *bits, uint64_t nullmask, uint64_t h) {
  if (l->nkeys == 0) return l->n ? 0 : -1;
  if (!l->slots) return -1;
  for (uint64_t i = h & l->mask;; i = (i + 1) & l->mask) {
    uint32_t s = l->slots[i];
    if (!s) return -1;
    if (l->hash[s - 1] == h && lane_eq(l, s - 1, bits, nullmask)) return s - 1;
  }
}

static int64_t lookup_bits(rt_lanes *l, const uint64_t *bits, uint64_t nullmask, bool insert) {
  uint64_t h = l->nkeys ? tuple_hash(l, bits, nullmask) : 0;
  int64_t g = find_bits(l, bits, nullmask, h);
  if (g >= 0 || !insert) return g;
  if (l->nkeys == 0) {
    if (l->cap == 0 && !grow_lanes(l)) return -2;
    l->nulls[0] = 0;
    l->hash[0] = 0;
    l->n = 1;
    return 0;
  }
  if ((uint64_t)(l->n + 1) * 2 > (l->slots ? l->mask + 1 : 0) && !grow_slots(l)) return -2;
  if (l->n == l->cap && !grow_lanes(l)) return -2;
  uint32_t g2 = l->n++;
  memcpy(l->bits + (size_t)g2 * (size_t)l->nkeys, bits, (size_t)l->nkeys * sizeof *bits);
  l->nulls[g2] = nullmask;
  l->hash[g2] = h;
  uint64_t i = h & l->mask;
  while (l->slots[i]) i = (i + 1) & l->mask;
  l->slots[i] = g2 + 1;
  return g2;
}

int64_t rt_lanes_lookup(rt_lanes *l, const int64_t *vals, uint64_t nullmask, bool insert) {
  uint64_t bits[RT_LANES_MAXKEYS];
  for (int k = 0; k < l->nkeys; k++)
    bits[k] = (nullmask >> k) & 1 ? 0 : fold_bits(l->types[k], vals[k]);
  return lookup_bits(l, bits, nullmask, insert);
}

/* Gathers row i's folded key bits; returns its NULL mask. */
static uint64_t row_bits(const rt_lanes *l, const rt_ivrel *r, uint32_t i, uint64_t *bits) {
  uint64_t nullmask = 0;
  for (int k = 0; k < l->nkeys; k++) {
    const rt_ivkey *c = &r->keys[k];
    if (c->valid && !rt_bit(c->valid, i)) {
      nullmask |= 1ull << k;
      bits[k] = 0;
    } else {
      bits[k] = fold_bits(l->types[k], rt_ivkey_get(c, i));
    }
  }
  return nullmask;
}

int64_t rt_lanes_row(rt_lanes *l, const rt_ivrel *r, uint32_t i, bool insert, bool null_matches) {
  uint64_t bits[RT_LANES_MAXKEYS];
  uint64_t nullmask = row_bits(l, r, i, bits);
  if (nullmask && !null_matches) return -1;
  return lookup_bits(l, bits, nullmask, insert);
}

int64_t rt_lanes_find_row(const rt_lanes *l, const rt_ivrel *r, uint32_t i, bool null_matches) {
  uint64_t bits[RT_LANES_MAXKEYS];
  uint64_t nullmask = row_bits(l, r, i, bits);
  if (nullmask && !null_matches) return -1;
  return find_bits(l, bits, nullmask, l->nkeys ? tuple_hash(l, bits, nullmask) : 0);
}

/* rt_lanes_assign over rows lo..hi-1 into lane[0 .. hi-lo); 0 when out of
 * memory (no error set). */
static int assign_range(rt_lanes *l, const rt_ivrel *r, uint32_t lo, uint32_t hi, bool insert,
                        bool null_matches, uint32_t *lane) {
  uint32_t n = hi;
  if (l->nkeys == 0) {
    int64_t g = n > lo ? lookup_bits(l, NULL, 0, insert) : 0;
    if (g == -2) return 0;
    for (uint32_t i = lo; i < n; i++) lane[i - lo] = g < 0 ? RT_NO_LANE : (uint32_t)g;
    return 1;
  }
  /* One integer or string key: traces use small ids (cpu, track, utid),
   * so values 0..SMALL-1 are looked up once and then read from a direct
   * table; other values probe the hash table. */
  if (l->nkeys == 1 && l->types[0] != RT_F64) {
    enum { SMALL = 4096 };
    int32_t small[SMALL];   /* lane, or -3 = not looked up yet */
    for (int q = 0; q < SMALL; q++) small[q] = -3;
    const rt_ivkey *k0 = &r->keys[0];
    const uint64_t *valid0 = k0->valid;
    bool is_str = l->types[0] == RT_STR;
    if (!valid0 && !k0->v && k0->u32) {
      /* A narrow key with no NULLs (a table's cpu or utid column). */
      const uint32_t *u = k0->u32;
      for (uint32_t i = lo; i < n; i++) {
        uint64_t b = u[i];
        int64_t g = b < SMALL ? small[b] : -3;
        if (g == -3) {
          g = lookup_bits(l, &b, 0, insert);
          if (b < SMALL) small[b] = (int32_t)g;
        }
        if (g == -2) return 0;
        lane[i - lo] = g < 0 ? RT_NO_LANE : (uint32_t)g;
      }
      return 1;
    }
    for (uint32_t i = lo; i < n; i++) {
      int64_t g;
      if (valid0 && !rt_bit(valid0, i)) {
        g = rt_lanes_row(l, r, i, insert, null_matches);
      } else {
        int64_t v = rt_ivkey_get(k0, i);
        uint64_t b = is_str ? (uint32_t)v : (uint64_t)v;
        if (b < SMALL) {
          g = small[b];
          if (g == -3) small[b] = (int32_t)(g = lookup_bits(l, &b, 0, insert));
        } else {
          g = lookup_bits(l, &b, 0, insert);
        }
      }
      if (g == -2) return 0;
      lane[i - lo] = g < 0 ? RT_NO_LANE : (uint32_t)g;
    }
    return 1;
  }
  for (uint32_t i = lo; i < n; i++) {
    int64_t g = rt_lanes_row(l, r, i, insert, null_matches);
    if (g == -2) return 0;
    lane[i - lo] = g < 0 ? RT_NO_LANE : (uint32_t)g;
  }
  return 1;
}

int rt_lanes_assign(rt_lanes *l, const rt_ivrel *r, bool insert, bool null_matches,
                    uint32_t *lane, const char *stage, rt_err *err) {
  if (!assign_range(l, r, 0, r->n, insert, null_matches, lane))
    return rt_errorf(err, -1, "%s: out of memory", stage);
  return 1;
}

int rt_lanes_assign_range(rt_lanes *l, const rt_ivrel *r, uint32_t lo, uint32_t hi, bool insert,
                          bool null_matches, uint32_t *lane, const char *stage, rt_err *err) {
  if (!assign_range(l, r, lo, hi, insert, null_matches, lane))
    return rt_errorf(err, -1, "%s: out of memory", stage);
  return 1;
}

/* ---- in parallel ------------------------------------------------------------- */

/* Each chunk of rows is numbered in a table of its own (its lanes in
 * its first-seen order); then, chunk by chunk in row order, each chunk's
 * lanes are looked up (inserted) in l, which numbers every key where a
 * single pass would have first met it; then every row's chunk lane is
 * replaced by l's. */
typedef struct lanes_par {
  rt_lanes *l;
  const rt_ivrel *r;
  bool null_matches;
  uint32_t *lane;
  uint32_t nch, chunk;
  rt_lanes *loc;
  uint32_t **map;
  uint8_t *failed;
} lanes_par;

static void lanes_par_assign(void *p, int64_t c) {
  lanes_par *x = p;
  uint32_t lo = (uint32_t)c * x->chunk, hi = lo + x->chunk < x->r->n ? lo + x->chunk : x->r->n;
  x->failed[c] = !assign_range(&x->loc[c], x->r, lo, hi, true, x->null_matches, x->lane + lo);
}

static void lanes_par_map(void *p, int64_t c) {
  lanes_par *x = p;
  uint32_t lo = (uint32_t)c * x->chunk, hi = lo + x->chunk < x->r->n ? lo + x->chunk : x->r->n;
  const uint32_t *m = x->map[c];
  uint32_t *lane = x->lane;
  for (uint32_t i = lo; i < hi; i++)
    if (lane[i] != RT_NO_LANE) lane[i] = m[lane[i]];
}

uint32_t rt_lanes_chunk(const rt_par *par, uint32_t n) {
  uint32_t w = (uint32_t)rt_par_workers(par);
  if (w <= 1 || n < 2 * RT_LANES_PAR_MIN) return n ? n : 1;
  uint32_t nch = 4 * w, chunk = (n + nch - 1) / nch;
  if (chunk < RT_LANES_PAR_MIN) chunk = RT_LANES_PAR_MIN;
  return (chunk + 63) & ~63u;   /* whole validity words */
}

int rt_lanes_assign_par(rt_lanes *l, const rt_ivrel *r, bool null_matches, uint32_t *lane,
                        const rt_par *par, const char *stage, rt_err *err) {
  uint32_t n = r->n, chunk = rt_lanes_chunk(par, n);
  if (chunk >= n || l->nkeys == 0) return rt_lanes_assign(l, r, true, null_matches, lane, stage, err);
  lanes_par x = {.l = l, .r = r, .null_matches = null_matches, .lane = lane, .chunk = chunk};
  x.nch = (n + chunk - 1) / chunk;
  x.loc = rt_mem_calloc(x.nch, sizeof *x.loc);
  x.map = rt_mem_calloc(x.nch, sizeof *x.map);
  x.failed = rt_mem_calloc(x.nch, 1);
  int ok = x.loc && x.map && x.failed;
  for (uint32_t c = 0; ok && c < x.nch; c++) ok = rt_lanes_init(&x.loc[c], l->nkeys, l->types, stage, err);
  if (ok) rt_par_for(par, x.nch, lanes_par_assign, &x);
  for (uint32_t c = 0; ok && c < x.nch; c++) {
    const rt_lanes *lc = &x.loc[c];
    ok = !x.failed[c] && (x.map[c] = rt_mem_alloc(((size_t)lc->n + 1) * sizeof *x.map[c])) != NULL;
    for (uint32_t g = 0; ok && g < lc->n; g++) {
      int64_t h = lookup_bits(l, lc->bits + (size_t)g * (size_t)l->nkeys, lc->nulls[g], true);
      if (h < 0) ok = 0;
      else x.map[c][g] = (uint32_t)h;
    }
  }
  if (ok) rt_par_for(par, x.nch, lanes_par_map, &x);
  for (uint32_t c = 0; c < x.nch; c++) {
    if (x.loc) rt_lanes_free(&x.loc[c]);
    if (x.map) rt_mem_free(x.map[c]);
  }
  rt_mem_free(x.loc);
  rt_mem_free(x.map);
  rt_mem_free(x.failed);
  if (!ok && !err->set) rt_errorf(err, -1, "%s: out of memory", stage);
  return ok;
}
