/*
 * union_of.c — INTERVAL UNION OF (src [AS] a, …) [PER …] (LANGUAGE.md
 * §9.1): wherever any operand covers, each combination that picks one
 * covering row from every operand (NULL for an operand with none there)
 * is one output row per maximal stretch of time over which it holds.
 *
 * One sweep per lane over the distinct instants where rows start or end
 * (a point, dur = 0, starts and ends at its instant). Per operand the rows
 * covering the current stretch form its active set; at an instant t the
 * combinations that stop holding end (their row's dur is set) and the new
 * ones start (a row is appended). Both are enumerated from what changed,
 * not from the whole product: with X the sets before t and Y after, the
 * combinations of Y that X lacks are, for each operand j that changed,
 * (unchanged choices of operands < j) × (changed choices of j) × (any
 * choice of operands > j), and the other way round for the ending ones.
 * Each enumerated combination is an output row, so the sweep costs
 * O((n+m) log(n+m) + k): the sort, plus constant work per row made.
 * Open combinations sit in a hash table keyed by their rows, holding the
 * output slot whose dur is set when they end.
 *
 * Most lanes never need the sets: when no operand's rows overlap each
 * other in the lane (a cpu's sched slices, a counter's samples), each
 * state is one combination, and a k-way merge of the operands' rows in
 * start order (fast_lane) gives the same rows in the same order. Items
 * are laid out once by (lane, operand), each bucket sorted by start only
 * when it is not in order already, and that one layout feeds both the
 * merge and, for a lane that overlaps, the general sweep.
 *
 * Points: the instant t itself is a state of its own (the sets with t's
 * points added): combinations with a point hold only there and come out
 * with dur = 0; one that a point interrupts (a NULL for the point's
 * operand) ends at t and starts again after it.
 *
 * Output order: lanes in first-seen order (operand 0's rows first), then
 * ts, then the point rows before the others, then by the rows of operand
 * 0, 1, … (no row last). Rows with NULL ts or dur are skipped; negative
 * ones are the below-zero error; ts + dur beyond int64 is an overflow.
 */
#include <stdlib.h>

#include "interval.h"
#include "runtime/budget.h"

void rt_union_free(rt_union_out *o) {
  rt_mem_free(o->ts);
  rt_mem_free(o->dur);
  rt_mem_free(o->lane);
  for (int j = 0; o->rows && j < o->k; j++) rt_mem_free(o->rows[j]);
  rt_mem_free(o->rows);
  rt_mem_free(o->rep_op);
  rt_mem_free(o->rep_row);
  memset(o, 0, sizeof *o);
}

/* ---- working state ---------------------------------------------------------- */

typedef struct usweep {
  int k;
  rt_union_out *out;
  /* items of every operand: start, end (= start for a point), operand, row */
  uint64_t *s, *e;
  uint8_t *pt;
  uint8_t *op;
  uint32_t *row;
  /* per operand: active items and the changed ones (removed / added) */
  uint32_t **act, *nact;
  uint32_t **chg, *nchg;
  uint32_t *pos;           /* item → its index in act[op] */
  uint8_t *marked;         /* item is in chg of its operand */
  bool *other_empty;       /* per operand: the other state's set is empty */
  /* the combination being enumerated, and the ones started at this instant */
  uint32_t *cur;
  uint32_t *fresh;         /* nfresh × (k + 1): rows, then has-a-point */
  size_t nfresh, capfresh;
  uint32_t *order;         /* sort scratch */
  size_t caporder;
  /* open combinations: slot + 1, 0 empty, UINT32_MAX deleted */
  uint32_t *slots;
  size_t hcap, hused, hlive;
  uint64_t t;              /* the instant being processed (rt_iv_u) */
  bool failed;             /* out of memory */
  bool lost;               /* an ending combination was not open: a bug */
} usweep;

static uint64_t combo_hash(const uint32_t *rows, int k) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (int j = 0; j < k; j++) {
    h ^= rows[j] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
  }
  return h ^ (h >> 29);
}

static bool slot_is(const usweep *u, uint32_t slot, const uint32_t *rows) {
  for (int j = 0; j < u->k; j++)
    if (u->out->rows[j][slot] != rows[j]) return false;
  return true;
}

/* Rebuilds the table for its live entries (dropping deleted ones): sized
 * by what is open, not by how many have passed, so it stays in cache. */
static bool hash_grow(usweep *u) {
  size_t cap = 1024;
  while (u->hlive * 4 >= cap) cap *= 2;
  uint32_t *ns = rt_mem_calloc(cap, sizeof *ns);
  if (!ns) return false;
  for (size_t i = 0; i < u->hcap; i++) {
    uint32_t v = u->slots[i];
    if (v == 0 || v == UINT32_MAX) continue;
    uint32_t rows[64];   /* k <= 64 (rt_union_run) */
    for (int j = 0; j < u->k; j++) rows[j] = u->out->rows[j][v - 1];
    size_t h = combo_hash(rows, u->k) & (cap - 1);
    while (ns[h]) h = (h + 1) & (cap - 1);
    ns[h] = v;
  }
  rt_mem_free(u->slots);
  u->slots = ns;
  u->hcap = cap;
  u->hused = u->hlive;
  return true;
}

static bool hash_put(usweep *u, uint32_t slot) {
  if ((u->hused + 1) * 2 > u->hcap && !hash_grow(u)) return false;
  uint32_t r[64];
  for (int j = 0; j < u->k; j++) r[j] = u->out->rows[j][slot];
  size_t h = combo_hash(r, u->k) & (u->hcap - 1);
  while (u->slots[h] && u->slots[h] != UINT32_MAX) h = (h + 1) & (u->hcap - 1);
  if (!u->slots[h]) u->hused++;
  u->slots[h] = slot + 1;
  u->hlive++;
  return true;
}

/* Removes the open combination rows; its slot, or UINT32_MAX. */
static uint32_t hash_take(usweep *u, const uint32_t *rows) {
  if (!u->hcap) return UINT32_MAX;
  size_t h = combo_hash(rows, u->k) & (u->hcap - 1);
  for (; u->slots[h]; h = (h + 1) & (u->hcap - 1)) {
    uint32_t v = u->slots[h];
    if (v != UINT32_MAX && slot_is(u, v - 1, rows)) {
      u->slots[h] = UINT32_MAX;
      u->hlive--;
      return v - 1;
    }
  }
  return UINT32_MAX;
}

/* ---- enumerating what changed ------------------------------------------------ */

/* Choice sets of operand j in the state the enumeration looks at (act),
 * against the other state: K unchanged, D changed, F any. */
enum { SET_K, SET_D, SET_F };

static size_t set_size(const usweep *u, int j, int which) {
  size_t n = u->nact[j], c = u->nchg[j];
  bool empty = n == 0, oe = u->other_empty[j];
  switch (which) {
  case SET_K: return !empty && !oe ? n - c : empty && oe ? 1 : 0;
  case SET_D: return !empty && !oe ? c : !empty && oe ? n : empty && !oe ? 1 : 0;
  default: return empty ? 1 : n;
  }
}

typedef void (*combo_fn)(usweep *u, int nonnull, bool point);

static void walk(usweep *u, int j, int dj, int nonnull, bool point, combo_fn fn) {
  if (u->failed) return;
  if (j == u->k) {
    if (nonnull) fn(u, nonnull, point);   /* the all-NULL combination is no region */
    return;
  }
  int which = j < dj ? SET_K : j == dj ? SET_D : SET_F;
  size_t n = u->nact[j];
  bool empty = n == 0, oe = u->other_empty[j];
  bool null_choice = which == SET_K ? empty && oe : which == SET_D ? empty && !oe : empty;
  if (null_choice) {
    u->cur[j] = RT_NO_ROW;
    walk(u, j + 1, dj, nonnull, point, fn);
    return;
  }
  if (which == SET_D && !oe) {   /* the changed rows */
    for (size_t i = 0; i < u->nchg[j]; i++) {
      uint32_t it = u->chg[j][i];
      u->cur[j] = u->row[it];
      walk(u, j + 1, dj, nonnull + 1, point || u->pt[it], fn);
    }
    return;
  }
  for (size_t i = 0; i < n; i++) {   /* all rows (F, or D of a set that empties), or the unchanged (K) */
    uint32_t it = u->act[j][i];
    if (which == SET_K && u->marked[it]) continue;
    u->cur[j] = u->row[it];
    walk(u, j + 1, dj, nonnull + 1, point || u->pt[it], fn);
  }
}

/* Every combination of the state in act that the other state lacks. */
static void enumerate(usweep *u, combo_fn fn) {
  for (int dj = 0; dj < u->k; dj++) {
    if (!set_size(u, dj, SET_D)) continue;
    bool any = true;
    for (int i = 0; i < dj && any; i++) any = set_size(u, i, SET_K) > 0;
    if (any) walk(u, 0, dj, 0, false, fn);
  }
}

static void on_end(usweep *u, int nonnull, bool point) {
  (void)nonnull;
  if (point) return;   /* a point's combinations were made with dur 0 */
  uint32_t slot = hash_take(u, u->cur);
  if (slot == UINT32_MAX) {
    u->lost = true;
    return;
  }
  u->out->dur[slot] = rt_iv_s(u->t) - u->out->ts[slot];
}

static void on_start(usweep *u, int nonnull, bool point) {
  (void)nonnull;
  size_t w = (size_t)u->k + 1;
  if (!rt_iv_grow((void **)&u->fresh, &u->capfresh, (u->nfresh + 1) * w, sizeof *u->fresh)) {
    u->failed = true;
    return;
  }
  uint32_t *f = u->fresh + u->nfresh * w;
  memcpy(f, u->cur, sizeof *f * (size_t)u->k);
  f[u->k] = point;
  u->nfresh++;
}

/* ---- one instant --------------------------------------------------------- */

static void mark_chg(usweep *u, uint8_t v) {
  for (int j = 0; j < u->k; j++)
    for (size_t i = 0; i < u->nchg[j]; i++) u->marked[u->chg[j][i]] = v;
}

/* other_empty for enumerating the state in act: the other state is act
 * minus chg (before: X with chg = removed) or plus chg's complement. */
static void set_other_empty(usweep *u, const size_t *other_n) {
  for (int j = 0; j < u->k; j++) u->other_empty[j] = other_n[j] == 0;
}

static void act_remove(usweep *u, uint32_t it) {
  int j = u->op[it];
  uint32_t p = u->pos[it], last = u->act[j][--u->nact[j]];
  u->act[j][p] = last;
  u->pos[last] = p;
}

static void act_add(usweep *u, uint32_t it) {
  int j = u->op[it];
  u->pos[it] = u->nact[j];
  u->act[j][u->nact[j]++] = it;
}

/* The state changes from act by removing rem (per operand lists) and
 * adding add; enumerates the ending then the starting combinations. */
static void transition(usweep *u, uint32_t **rem, const size_t *nrem, uint32_t **add,
                       const size_t *nadd, bool ends) {
  size_t after[64];
  for (int j = 0; j < u->k; j++) after[j] = u->nact[j] - nrem[j] + nadd[j];
  if (ends) {
    for (int j = 0; j < u->k; j++) u->chg[j] = rem[j], u->nchg[j] = nrem[j];
    set_other_empty(u, after);
    mark_chg(u, 1);
    enumerate(u, on_end);
    mark_chg(u, 0);
  }
  size_t before[64];
  for (int j = 0; j < u->k; j++) {
    before[j] = u->nact[j];
    for (size_t i = 0; i < nrem[j]; i++) act_remove(u, rem[j][i]);
    for (size_t i = 0; i < nadd[j]; i++) act_add(u, add[j][i]);
  }
  for (int j = 0; j < u->k; j++) u->chg[j] = add[j], u->nchg[j] = nadd[j];
  set_other_empty(u, before);
  mark_chg(u, 1);
  enumerate(u, on_start);
  mark_chg(u, 0);
}

/* Order of the fresh combinations: points first, then rows (none last). */
static bool fresh_less(const usweep *u, uint32_t a, uint32_t b) {
  size_t w = (size_t)u->k + 1;
  const uint32_t *x = u->fresh + a * w, *y = u->fresh + b * w;
  if (x[u->k] != y[u->k]) return x[u->k] > y[u->k];
  for (int j = 0; j < u->k; j++)
    if (x[j] != y[j]) return x[j] < y[j];
  return a < b;
}

static bool sort_fresh(usweep *u) {
  size_t n = u->nfresh;
  if (!rt_iv_grow((void **)&u->order, &u->caporder, 2 * n + 1, sizeof *u->order)) return false;
  uint32_t *a = u->order, *tmp = u->order + n;
  for (size_t i = 0; i < n; i++) a[i] = (uint32_t)i;
  for (size_t width = 1; width < n; width *= 2) {   /* bottom-up merge sort */
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      size_t i = lo, j = mid, o = lo;
      while (i < mid && j < hi) tmp[o++] = fresh_less(u, a[j], a[i]) ? a[j++] : a[i++];
      while (i < mid) tmp[o++] = a[i++];
      while (j < hi) tmp[o++] = a[j++];
    }
    memcpy(a, tmp, n * sizeof *a);
  }
  return true;
}

static bool put_region(rt_union_out *o, int64_t ts, uint32_t lane, const uint32_t *rows) {
  if (o->n == o->cap) {
    size_t cap = o->cap, c;
    c = cap;
    if (!rt_iv_grow((void **)&o->ts, &c, o->n + 1, 8)) return false;
    c = cap;
    if (!rt_iv_grow((void **)&o->dur, &c, o->n + 1, 8)) return false;
    c = cap;
    if (!rt_iv_grow((void **)&o->lane, &c, o->n + 1, 4)) return false;
    for (int j = 0; j < o->k; j++) {
      c = cap;
      if (!rt_iv_grow((void **)&o->rows[j], &c, o->n + 1, 4)) return false;
    }
    o->cap = c;
  }
  o->ts[o->n] = ts;
  o->dur[o->n] = 0;
  o->lane[o->n] = lane;
  for (int j = 0; j < o->k; j++) o->rows[j][o->n] = rows[j];
  o->n++;
  return true;
}

/* Makes room for cap regions in the empty output. */
static bool union_reserve(rt_union_out *o, size_t cap) {
  o->ts = rt_iv_big(cap * sizeof *o->ts);
  o->dur = rt_iv_big(cap * sizeof *o->dur);
  o->lane = rt_iv_big(cap * sizeof *o->lane);
  if (!o->ts || !o->dur || !o->lane) return false;
  for (int j = 0; j < o->k; j++)
    if (!(o->rows[j] = rt_iv_big(cap * sizeof *o->rows[j]))) return false;
  o->cap = cap;
  return true;
}

/* Appends this instant's fresh combinations in order; the positive ones
 * stay open. */
static bool emit_fresh(usweep *u, uint32_t lane) {
  if (!u->nfresh) return true;
  if (!sort_fresh(u)) return false;
  size_t w = (size_t)u->k + 1;
  for (size_t i = 0; i < u->nfresh; i++) {
    const uint32_t *f = u->fresh + u->order[i] * w;
    if (!put_region(u->out, rt_iv_s(u->t), lane, f)) return false;
    if (!f[u->k] && !hash_put(u, (uint32_t)(u->out->n - 1))) return false;
  }
  u->nfresh = 0;
  return true;
}

/* ---- laying the items out ------------------------------------------------- */

/* Whether bucket [lo, hi) (one operand of one lane, in start order) is
 * disjoint: no row overlaps or touches a point of the same operand, so at
 * any instant the operand has at most one row (a positive one, or a point
 * at an instant no other of its rows covers or bounds). Positive rows may
 * touch (end = next start), as a cpu's sched slices do. */
static bool bucket_disjoint(const usweep *u, size_t lo, size_t hi) {
  for (size_t p = lo + 1; p < hi; p++)
    if (u->pt[p - 1] || u->pt[p] ? u->e[p - 1] >= u->s[p] : u->e[p - 1] > u->s[p]) return false;
  return true;
}

/* Sorts bucket [lo, hi) by (start, row) when it is not in that order
 * already (a table in ts order never is sorted), then recomputes the
 * items' ends and point flags from their rows. */
static bool bucket_sort(usweep *u, const rt_ivrel *r, size_t lo, size_t hi) {
  size_t p = lo + 1;
  while (p < hi && (u->s[p - 1] < u->s[p] || (u->s[p - 1] == u->s[p] && u->row[p - 1] < u->row[p])))
    p++;
  if (p >= hi) return true;
  if (!rt_iv_sort(u->s + lo, NULL, u->row + lo, hi - lo)) return false;
  for (p = lo; p < hi; p++) {
    uint32_t i = u->row[p];
    u->e[p] = rt_iv_u(r->ts[i] + r->dur[i]);
    u->pt[p] = r->dur[i] == 0;
  }
  return true;
}

/* ---- a lane of disjoint operands -------------------------------------------- */

/* Every operand of lane l is disjoint (bucket_disjoint), so each state is
 * one combination: the row each operand has there, or none. One k-way
 * merge over the buckets: at each instant the combination before it ends,
 * the instant's own (its points added) comes out with dur 0, and the one
 * after it starts — the general sweep's output, with no sets or hashing. */
static bool fast_lane(usweep *u, const uint32_t *boff, uint32_t l, uint32_t *p, uint32_t *cur,
                      uint32_t *ptat) {
  int k = u->k;
  rt_union_out *o = u->out;
  const uint32_t *b = boff + (size_t)l * (size_t)k;
  for (int j = 0; j < k; j++) p[j] = b[j], cur[j] = ptat[j] = RT_NO_ROW;
  size_t open = SIZE_MAX;
  for (;;) {
    /* the next instant: an active row's end, else a next row's start (the
     * operand's next row starts at or after its active row's end) */
    uint64_t t = UINT64_MAX;
    for (int j = 0; j < k; j++) {
      uint64_t x = cur[j] != RT_NO_ROW ? u->e[cur[j]] : p[j] < b[j + 1] ? u->s[p[j]] : UINT64_MAX;
      t = x < t ? x : t;
    }
    if (t == UINT64_MAX) break;
    bool anypt = false, any = false;
    for (int j = 0; j < k; j++) {
      if (cur[j] != RT_NO_ROW && u->e[cur[j]] == t) cur[j] = RT_NO_ROW;
      if (cur[j] == RT_NO_ROW && p[j] < b[j + 1] && u->s[p[j]] == t) {
        if (u->pt[p[j]]) ptat[j] = p[j], anypt = true;
        else cur[j] = p[j];
        p[j]++;
      }
      any |= cur[j] != RT_NO_ROW;
    }
    int64_t ts = rt_iv_s(t);
    if (open != SIZE_MAX) o->dur[open] = ts - o->ts[open], open = SIZE_MAX;
    uint32_t rows[64];
    if (anypt) {
      for (int j = 0; j < k; j++) {
        uint32_t it = ptat[j] != RT_NO_ROW ? ptat[j] : cur[j];
        rows[j] = it == RT_NO_ROW ? RT_NO_ROW : u->row[it];
        ptat[j] = RT_NO_ROW;
      }
      if (!put_region(o, ts, l, rows)) return false;
    }
    if (any) {
      for (int j = 0; j < k; j++) rows[j] = cur[j] == RT_NO_ROW ? RT_NO_ROW : u->row[cur[j]];
      if (!put_region(o, ts, l, rows)) return false;
      open = o->n - 1;
    }
  }
  return true;
}

/* ---- a lane of overlapping rows ------------------------------------------- */

/* The general sweep's working arrays, made when a first lane needs them. */
typedef struct gwork {
  uint32_t *item, *byend;  /* a lane's items by (start, id) and the ends by (end, id) */
  uint64_t *key;
  uint32_t **rem, **add, **pts;
  size_t *nrem, *nadd, *npts, *zero;
} gwork;

static void gwork_free(gwork *g, usweep *u) {
  for (int j = 0; j < u->k; j++) {
    if (u->act) rt_mem_free(u->act[j]);
    if (g->rem) rt_mem_free(g->rem[j]), rt_mem_free(g->add[j]), rt_mem_free(g->pts[j]);
  }
  free(u->act);
  free(u->nact);
  free(u->chg);
  free(u->nchg);
  free(u->other_empty);
  free(u->cur);
  free(g->rem);
  free(g->nrem);
  rt_mem_free(u->pos);
  rt_mem_free(u->marked);
  rt_mem_free(g->item);
  rt_mem_free(g->byend);
  rt_mem_free(g->key);
}

static bool gwork_init(gwork *g, usweep *u, size_t m, const uint32_t *opn) {
  int k = u->k;
  u->pos = rt_iv_big((m + 1) * sizeof *u->pos);
  u->marked = rt_mem_calloc(m + 1, 1);
  g->item = rt_iv_big((m + 1) * sizeof *g->item);
  g->byend = rt_iv_big((m + 1) * sizeof *g->byend);
  g->key = rt_iv_big((m + 1) * sizeof *g->key);
  u->act = calloc((size_t)k, sizeof *u->act);
  u->nact = calloc((size_t)k, sizeof *u->nact);
  u->chg = calloc((size_t)k, sizeof *u->chg);
  u->nchg = calloc((size_t)k, sizeof *u->nchg);
  u->other_empty = calloc((size_t)k, sizeof *u->other_empty);
  u->cur = calloc((size_t)k, sizeof *u->cur);
  g->rem = calloc((size_t)k * 3, sizeof *g->rem);
  g->nrem = calloc((size_t)k * 4, sizeof *g->nrem);
  if (g->rem) g->add = g->rem + k, g->pts = g->rem + 2 * k;   /* gwork_free reads them */
  if (!u->pos || !u->marked || !g->item || !g->byend || !g->key || !u->act || !u->nact || !u->chg ||
      !u->nchg || !u->other_empty || !u->cur || !g->rem || !g->nrem)
    return false;
  g->nadd = g->nrem + k, g->npts = g->nrem + 2 * k, g->zero = g->nrem + 3 * k;
  for (int j = 0; j < k; j++) {
    u->act[j] = rt_mem_alloc(((size_t)opn[j] + 1) * sizeof **u->act);
    g->rem[j] = rt_mem_alloc(((size_t)opn[j] + 1) * sizeof **g->rem);
    g->add[j] = rt_mem_alloc(((size_t)opn[j] + 1) * sizeof **g->add);
    g->pts[j] = rt_mem_alloc(((size_t)opn[j] + 1) * sizeof **g->pts);
    if (!u->act[j] || !g->rem[j] || !g->add[j] || !g->pts[j]) return false;
  }
  return true;
}

/* Lane l's items [lo, hi) (ids follow operand, then start): the sets of
 * covering rows swept over the lane's instants (the header). */
static bool general_lane(usweep *u, gwork *g, uint32_t l, size_t lo, size_t hi) {
  int k = u->k;
  uint32_t *item = g->item, *byend = g->byend;
  /* items by (start, id) and the positive ones by (end, id) */
  for (size_t i = lo; i < hi; i++) item[i] = (uint32_t)i, byend[i] = (uint32_t)i;
  memcpy(g->key + lo, u->s + lo, (hi - lo) * sizeof *g->key);
  if (!rt_iv_sort(g->key + lo, NULL, item + lo, hi - lo)) return false;
  memcpy(g->key + lo, u->e + lo, (hi - lo) * sizeof *g->key);
  if (!rt_iv_sort(g->key + lo, NULL, byend + lo, hi - lo)) return false;
  size_t ps = lo, pe = lo;
  /* skip points in the end order: they end at their own instant */
  while (pe < hi || ps < hi) {
    while (pe < hi && u->pt[byend[pe]]) pe++;
    uint64_t t = UINT64_MAX;
    if (ps < hi) t = u->s[item[ps]];
    if (pe < hi && u->e[byend[pe]] < t) t = u->e[byend[pe]];
    if (ps >= hi && pe >= hi) break;
    u->t = t;
    for (int j = 0; j < k; j++) g->nrem[j] = g->nadd[j] = g->npts[j] = 0;
    for (; pe < hi && u->e[byend[pe]] == t; pe++) {
      uint32_t it = byend[pe];
      if (!u->pt[it]) g->rem[u->op[it]][g->nrem[u->op[it]]++] = it;
    }
    bool anypt = false;
    for (; ps < hi && u->s[item[ps]] == t; ps++) {
      uint32_t it = item[ps];
      int j = u->op[it];
      if (u->pt[it]) g->pts[j][g->npts[j]++] = it, anypt = true;
      g->add[j][g->nadd[j]++] = it;   /* the instant's state holds the points too */
    }
    transition(u, g->rem, g->nrem, g->add, g->nadd, true);
    if (anypt) transition(u, g->pts, g->npts, g->add, g->zero, false);   /* after the instant */
    if (u->failed || !emit_fresh(u, l)) return false;
  }
  for (int j = 0; j < k; j++) u->nact[j] = 0;
  return true;
}

/* ---- the sweep ------------------------------------------------------------- */

/* Items are laid out by (lane, operand) — one bucket per pair, lanes in
 * number order, operands in order, each bucket in (start, row) order —
 * so one sorted layout serves both sweeps: a lane whose buckets are all
 * disjoint (the usual trace table: a cpu's slices, a counter's samples)
 * takes fast_lane, any other the general sweep. */
int rt_union_run(int k, const rt_ivrel *ops, const char *stage, rt_union_out *out, rt_err *err) {
  memset(out, 0, sizeof *out);
  out->k = k;
  if (k < 1 || k > 64) return rt_errorf(err, -1, "%s: expected 1 to 64 relations", stage);
  usweep u;
  memset(&u, 0, sizeof u);
  u.k = k;
  u.out = out;
  gwork g;
  memset(&g, 0, sizeof g);
  bool gready = false;
  rt_lanes lanes;
  rt_type types[RT_LANES_MAXKEYS];
  for (int q = 0; q < ops[0].nkeys && q < RT_LANES_MAXKEYS; q++) types[q] = ops[0].keys[q].type;
  if (!rt_lanes_init(&lanes, ops[0].nkeys, types, stage, err)) return 0;
  int rc = 0;
  size_t total = 0;
  for (int j = 0; j < k; j++) total += ops[j].n;
  if (total >= RT_NO_ROW) {
    rt_lanes_free(&lanes);
    return rt_errorf(err, -1, "%s: too many rows", stage);
  }
  uint32_t *lane = rt_iv_big((total + 1) * sizeof *lane);
  uint32_t *boff = NULL, *next = NULL, *order = NULL, *scratch = NULL;
  uint32_t *opn = calloc((size_t)k, sizeof *opn);
  out->rows = rt_mem_calloc((size_t)k, sizeof *out->rows);
  if (!lane || !opn || !out->rows) goto oom;
  /* lanes: operand 0's rows first, NULL keys agreeing */
  size_t base = 0;
  for (int j = 0; j < k; j++) {
    if (!rt_lanes_assign(&lanes, &ops[j], true, true, lane + base, stage, err)) goto done;
    base += ops[j].n;
  }
  uint32_t nl = lanes.n;
  size_t nb = (size_t)nl * (size_t)k;
  boff = rt_mem_calloc(nb + 2, sizeof *boff);
  /* lanes run in the order of their first row with bounds, which also
   * gives the lane's PER values */
  order = rt_mem_alloc(((size_t)nl + 1) * sizeof *order);
  out->rep_op = rt_mem_alloc(((size_t)nl + 1) * sizeof *out->rep_op);
  out->rep_row = rt_mem_alloc(((size_t)nl + 1) * sizeof *out->rep_row);
  if (!boff || !order || !out->rep_op || !out->rep_row) goto oom;
  for (uint32_t l = 0; l < nl; l++) out->rep_op[l] = RT_NO_ROW;
  uint32_t nranked = 0;
  base = 0;
  size_t m = 0;
  for (int j = 0; j < k; j++, base += ops[j - 1].n) {
    const rt_ivrel *r = &ops[j];
    for (uint32_t i = 0; i < r->n; i++) {
      uint32_t g0 = lane[base + i];
      if (!rt_ivrel_bounds_valid(r, i)) {
        lane[base + i] = RT_NO_LANE;
        continue;
      }
      if (out->rep_op[g0] == RT_NO_ROW) {
        order[nranked++] = g0;
        out->rep_op[g0] = (uint32_t)j, out->rep_row[g0] = i;
      }
      if (r->ts[i] < 0 || r->dur[i] < 0) {
        rt_iv_below_zero(r, i, stage, "", err);
        goto done;
      }
      if (r->dur[i] > INT64_MAX - r->ts[i]) {
        rt_errorf(err, -1, "%s: integer overflow", stage);
        goto done;
      }
      boff[(size_t)g0 * (size_t)k + (size_t)j + 1]++;
      m++;
    }
  }
  for (size_t q = 0; q < nb; q++) boff[q + 1] += boff[q];
  u.s = rt_iv_big((m + 1) * sizeof *u.s);
  u.e = rt_iv_big((m + 1) * sizeof *u.e);
  u.pt = rt_iv_big(m + 1);
  u.op = rt_iv_big(m + 1);
  u.row = rt_iv_big((m + 1) * sizeof *u.row);
  next = rt_mem_alloc((nb + 1) * sizeof *next);
  scratch = rt_mem_alloc(3 * (size_t)k * sizeof *scratch);
  if (!u.s || !u.e || !u.pt || !u.op || !u.row || !next || !scratch) goto oom;
  memcpy(next, boff, nb * sizeof *next);
  /* The output sized once for the usual case (disjoint operands make
   * about 1.5 regions per row): big fresh arrays, so no doubling copies
   * of what is already written; more rows still grow them. */
  if (!union_reserve(out, m + m / 2 + 64)) goto oom;
  base = 0;
  for (int j = 0; j < k; j++, base += ops[j - 1].n) {
    const rt_ivrel *r = &ops[j];
    for (uint32_t i = 0; i < r->n; i++) {
      if (lane[base + i] == RT_NO_LANE) continue;
      uint32_t p = next[(size_t)lane[base + i] * (size_t)k + (size_t)j]++;
      u.s[p] = rt_iv_u(r->ts[i]);
      u.e[p] = rt_iv_u(r->ts[i] + r->dur[i]);
      u.pt[p] = r->dur[i] == 0;
      u.op[p] = (uint8_t)j;
      u.row[p] = i;
      opn[j]++;
    }
  }
  for (uint32_t r = 0; r < nranked; r++) {
    uint32_t l = order[r];
    bool disjoint = true;
    for (int j = 0; j < k; j++) {
      size_t lo = boff[(size_t)l * (size_t)k + (size_t)j], hi = boff[(size_t)l * (size_t)k + (size_t)j + 1];
      if (!bucket_sort(&u, &ops[j], lo, hi)) goto oom;
      disjoint = disjoint && bucket_disjoint(&u, lo, hi);
    }
    if (disjoint) {
      if (!fast_lane(&u, boff, l, scratch, scratch + k, scratch + 2 * k)) goto oom;
      continue;
    }
    if (!gready && !(gready = true, gwork_init(&g, &u, m, opn))) goto oom;
    if (!general_lane(&u, &g, l, boff[(size_t)l * (size_t)k], boff[(size_t)(l + 1) * (size_t)k]))
      goto oom;
  }
  if (u.lost || u.hlive) {
    rt_errorf(err, -1, "%s: internal error: a region was lost", stage);
    goto done;
  }
  rc = 1;
  goto done;
oom:
  rt_errorf(err, -1, "%s: out of memory", stage);
done:
  if (gready) gwork_free(&g, &u);
  free(opn);
  rt_mem_free(u.s);
  rt_mem_free(u.e);
  rt_mem_free(u.pt);
  rt_mem_free(u.op);
  rt_mem_free(u.row);
  rt_mem_free(u.fresh);
  rt_mem_free(u.order);
  rt_mem_free(u.slots);
  rt_mem_free(next);
  rt_mem_free(scratch);
  rt_mem_free(lane);
  rt_mem_free(boff);
  rt_mem_free(order);
  rt_lanes_free(&lanes);
  return rc;
}
