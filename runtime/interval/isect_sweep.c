/*
 * isect_sweep.c — the streaming sweep of INTERVAL INTERSECTION OF: one
 * partition's regions generated directly in output order (region start,
 * then the rows of operand 0, 1, …) and served a slice at a time, so that
 * a partition whose regions could never be held at once still answers in
 * memory bounded by its rows: 20,000 identical intervals intersected with
 * themselves are 400M regions, served 8,192 at a time.
 *
 * A region starts at the latest start of its rows. So the regions that
 * start at t are the combinations of one row per operand, each active at
 * t (start <= t < end), of which at least one starts at t. The sweep
 * visits the distinct starts of all operands in order ("events"). At
 * each it holds, per operand, A = the items active at t sorted by row and
 * N = the items starting at t sorted by row, and enumerates the
 * combinations like an odometer in row order: at operand j the choices
 * are A_j when an earlier choice is new or a later operand has new items,
 * else N_j (some later or this operand must supply the new row). Every
 * choice made this way completes to at least one region, so an event
 * costs O(k) per region it yields. The odometer's position survives
 * between slices, so one event may fill any number of slices.
 *
 * Active sets: an item enters its operand's unsorted tail when it starts
 * and is merged into the row-sorted set only when that set is enumerated
 * in full, which happens only when each of its live items yields a region
 * (another operand has a new item to pair it with); ended items are
 * dropped lazily (from the front when testing for a live item, and by
 * every merge). So the sets cost O(rows log rows + regions) in all.
 *
 * Jumps: when an operand has nothing active at t and nothing starting
 * there, no region can start before its next start t'. Every operand then
 * skips to t': a galloping search over its starts, and the skipped items
 * still active at t' are found in O(1) for a disjoint operand (its ends
 * ascend, so only the last skipped item can reach past t') and through a
 * max-end tree (ivindex.c) for an overlapping one. So, like the pairwise
 * narrowing, a small operand against a big one costs about its rows times
 * a logarithm plus the regions, not the big operand's rows.
 */
#include <stdlib.h>

#include "isect_sweep.h"
#include "runtime/budget.h"

typedef struct side {
  const uint64_t *s, *e;
  const uint32_t *row;
  size_t n, p;             /* items; the next one to start */
  bool overlaps;
  uint32_t *act;           /* act[a0..an): active, by row (may hold ended items) */
  size_t a0, an;
  uint32_t *tail;          /* tail[t0..tn): started since the last merge */
  size_t t0, tn;
  uint32_t *nw;            /* nw[0..nn): starting at the event, by row */
  size_t nn;
  uint32_t *tmp;           /* merge scratch */
  size_t cap;              /* of act, tail, nw and tmp */
  rt_ivtree tree;          /* max ends, built at the first long jump */
  bool has_tree;
} side;

struct rt_isweep {
  int k;
  side *sd;
  bool in_event;
  uint64_t t;              /* the event's start */
  int depth;               /* k > 2: odometer level to resume at */
  /* per level j: */
  bool *later_new;         /* an operand after j has items starting at t */
  const uint32_t **lst;    /* the choices (A_j or N_j) and their count */
  size_t *len;
  size_t *pos;             /* the current choice */
  bool *pnew;              /* a choice at levels <= j starts at t */
  uint64_t *pend;          /* the least end of the choices at levels <= j */
  uint64_t events, skips;
};

rt_isweep *rt_isweep_new(int k) {
  rt_isweep *w = rt_mem_calloc(1, sizeof *w);
  if (!w) return NULL;
  w->k = k;
  size_t n = (size_t)k;
  w->sd = rt_mem_calloc(n, sizeof *w->sd);
  w->later_new = rt_mem_calloc(n, sizeof *w->later_new);
  w->lst = rt_mem_calloc(n, sizeof *w->lst);
  w->len = rt_mem_calloc(n, sizeof *w->len);
  w->pos = rt_mem_calloc(n, sizeof *w->pos);
  w->pnew = rt_mem_calloc(n, sizeof *w->pnew);
  w->pend = rt_mem_calloc(n, sizeof *w->pend);
  if (!w->sd || !w->later_new || !w->lst || !w->len || !w->pos || !w->pnew || !w->pend) {
    rt_isweep_free(w);
    return NULL;
  }
  return w;
}

static void drop_tree(side *d) {
  if (d->has_tree) rt_ivtree_free(&d->tree);
  d->has_tree = false;
}

void rt_isweep_free(rt_isweep *w) {
  if (!w) return;
  for (int j = 0; w->sd && j < w->k; j++) {
    side *d = &w->sd[j];
    drop_tree(d);
    rt_mem_free(d->act);
    rt_mem_free(d->tail);
    rt_mem_free(d->nw);
    rt_mem_free(d->tmp);
  }
  rt_mem_free(w->sd);
  rt_mem_free(w->later_new);
  rt_mem_free(w->lst);
  rt_mem_free(w->len);
  rt_mem_free(w->pos);
  rt_mem_free(w->pnew);
  rt_mem_free(w->pend);
  rt_mem_free(w);
}

void rt_isweep_counts(const rt_isweep *w, uint64_t *events, uint64_t *skips) {
  *events = w ? w->events : 0;
  *skips = w ? w->skips : 0;
}

/* Each item is in the tail at most once and the active set holds at
 * most every item, so arrays of n entries never overflow. */
static bool side_reserve(side *d, size_t n) {
  if (n <= d->cap) return true;
  uint32_t **arr[4] = {&d->act, &d->tail, &d->nw, &d->tmp};
  size_t got = d->cap;
  for (int q = 0; q < 4; q++) {
    got = d->cap;   /* each grows from the same capacity to the same one */
    if (!rt_iv_grow((void **)arr[q], &got, n, sizeof(uint32_t))) return false;
  }
  d->cap = got;
  return true;
}

bool rt_isweep_start(rt_isweep *w, const rt_isweep_lane *lanes) {
  w->in_event = false;
  for (int j = 0; j < w->k; j++) {
    side *d = &w->sd[j];
    drop_tree(d);
    if (!side_reserve(d, lanes[j].n + 1)) return false;
    d->s = lanes[j].s;
    d->e = lanes[j].e;
    d->row = lanes[j].row;
    d->n = lanes[j].n;
    d->overlaps = lanes[j].overlaps;
    d->p = d->a0 = d->an = d->t0 = d->tn = d->nn = 0;
  }
  return true;
}

/* ---- active sets ------------------------------------------------------------ */

/* Sorts items idx[0..n) by row (rows differ), tmp[0..n) scratch:
 * insertion-sorted runs (the short lists that are usual are one run,
 * and a sorted list costs one scan), then bottom-up merges. */
static void sort_by_row(uint32_t *idx, size_t n, const uint32_t *row, uint32_t *tmp) {
  enum { RUN = 32 };
  for (size_t lo = 0; lo < n; lo += RUN) {
    size_t hi = lo + RUN < n ? lo + RUN : n;
    for (size_t a = lo + 1; a < hi; a++) {
      uint32_t x = idx[a], rx = row[x];
      size_t j = a;
      for (; j > lo && row[idx[j - 1]] > rx; j--) idx[j] = idx[j - 1];
      idx[j] = x;
    }
  }
  uint32_t *src = idx, *dst = tmp;
  for (size_t w = RUN; w < n; w *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      size_t a = lo, b = mid, o = lo;
      while (a < mid && b < hi) dst[o++] = row[src[b]] < row[src[a]] ? src[b++] : src[a++];
      while (a < mid) dst[o++] = src[a++];
      while (b < hi) dst[o++] = src[b++];
    }
    uint32_t *x = src;
    src = dst;
    dst = x;
  }
  if (src != idx) memcpy(idx, src, n * sizeof *idx);
}

/* A disjoint operand keeps no sets: no item of it can be active at
 * t >= the last start but the item that started last, p - 1 (the items
 * before end by its start), and no two of its items share a start. */

/* Whether the operand has an item active at t (after the event's new
 * ones are taken in): drops ended items at the fronts on the way. */
static inline __attribute__((always_inline)) bool has_live(side *d, uint64_t t) {
  if (!d->overlaps) return d->p && d->e[d->p - 1] > t;
  while (d->a0 < d->an && d->e[d->act[d->a0]] <= t) d->a0++;
  if (d->a0 < d->an) return true;
  while (d->t0 < d->tn && d->e[d->tail[d->t0]] <= t) d->t0++;
  return d->t0 < d->tn;
}

/* Makes act[0..an) exactly the items active at t, by row: drops ended
 * items, then merges the tail in. */
static inline __attribute__((always_inline)) void refresh(side *d, uint64_t t) {
  const uint64_t *e = d->e;
  if (!d->overlaps) {
    d->a0 = 0;
    d->act[0] = (uint32_t)(d->p - 1);
    d->an = d->p && e[d->p - 1] > t;
    return;
  }
  const uint32_t *row = d->row;
  size_t w = 0;
  for (size_t i = d->a0; i < d->an; i++)
    if (e[d->act[i]] > t) d->act[w++] = d->act[i];
  d->a0 = 0;
  d->an = w;
  w = 0;
  bool sorted = true;
  for (size_t i = d->t0; i < d->tn; i++) {
    uint32_t x = d->tail[i];
    if (e[x] <= t) continue;
    sorted &= w == 0 || row[d->tail[w - 1]] < row[x];
    d->tail[w++] = x;
  }
  d->t0 = d->tn = 0;
  if (w == 0) return;
  if (!sorted) sort_by_row(d->tail, w, row, d->tmp);   /* tmp is free until the merge */
  if (d->an == 0 || row[d->act[d->an - 1]] < row[d->tail[0]]) {
    /* the usual case: rows follow start order, so the new items come last */
    memcpy(d->act + d->an, d->tail, w * sizeof *d->tail);
    d->an += w;
    return;
  }
  const uint32_t *a = d->act, *b = d->tail;
  size_t na = d->an, i = 0, j = 0, o = 0;
  uint32_t *m = d->tmp;
  while (i < na && j < w) m[o++] = row[a[i]] < row[b[j]] ? a[i++] : b[j++];
  while (i < na) m[o++] = a[i++];
  while (j < w) m[o++] = b[j++];
  d->tmp = d->act;
  d->act = m;
  d->an = o;
}

static bool push_hit(void *ctx, size_t x) {
  side *d = ctx;
  d->tail[d->tn++] = (uint32_t)x;
  return true;
}

/* Moves the operand past every item starting before T, keeping those
 * still active at T (end > T). */
static bool jump(side *d, uint64_t T) {
  const uint64_t *s = d->s;
  size_t p = d->p, n = d->n;
  if (p == n || s[p] >= T) return true;
  /* gallop: s[lo] < T, then a binary search in (lo, hi) */
  size_t lo = p, hi = p + 1, step = 1;
  while (hi < n && s[hi] < T) {
    lo = hi;
    step *= 2;
    hi = lo + step;
  }
  if (hi > n) hi = n;
  size_t q = lo + 1 + rt_iv_lower(s + lo + 1, hi - lo - 1, T);
  if (!d->overlaps) {
    /* item q - 1 is the only one that may be active at T (see above) */
  } else if (q - p <= 64) {
    for (size_t x = p; x < q; x++)
      if (d->e[x] > T) d->tail[d->tn++] = (uint32_t)x;
  } else {
    if (!d->has_tree && !rt_ivtree_build(&d->tree, d->e, n)) return false;
    d->has_tree = true;
    rt_ivtree_query(&d->tree, p, q, T + 1, push_hit, d);
  }
  d->p = q;
  return true;
}

/* ---- events ------------------------------------------------------------------- */

/* Takes the operand's d->nn items starting at the event into nw (by
 * row) and its tail. */
static inline __attribute__((always_inline)) void take_new(side *d) {
  size_t nn = d->nn, p = d->p;
  if (nn == 1) {
    d->nw[0] = (uint32_t)p;
    if (d->overlaps) d->tail[d->tn++] = (uint32_t)p;
    d->p = p + 1;
    return;
  }
  for (size_t i = 0; i < nn; i++) d->nw[i] = (uint32_t)(p + i);
  sort_by_row(d->nw, nn, d->row, d->tmp);
  memcpy(d->tail + d->tn, d->nw, nn * sizeof *d->nw);
  d->tn += nn;
  d->p = p + nn;
}

/* The number of items from d->p on that start at t. */
static inline size_t run_at(const side *d, uint64_t t) {
  size_t b = d->p;
  while (b < d->n && d->s[b] == t) b++;
  return b - d->p;
}

static inline int64_t region_dur(uint64_t t, uint64_t E) {
  return (E & 1) ? 0 : (int64_t)((E - t) >> 1);
}

/* The usual event of two operands: one item y of operand o starts at t
 * and no item of the other operand d, whose active items (by row) each
 * make a region with y. Emits them in one pass that also drops d's ended
 * items, when out has room for all of them and d's tail needs no sort
 * (its rows ascend past the set's, as when rows follow start order);
 * else returns false and the general path runs. */
static inline __attribute__((always_inline)) bool single2(side *d, const side *ys, int o,
                                                          uint64_t t, rt_isect_out *out,
                                                          size_t limit) {
  size_t n = out->n, room = (out->cap < limit ? out->cap : limit) - n;
  uint32_t ry = ys->row[ys->p];
  uint64_t ey = ys->e[ys->p];
  int64_t ts = (int64_t)(t >> 1);
  int64_t *ots = out->ts, *odur = out->dur;
  uint32_t *od = out->rows[1 - o], *oy = out->rows[o];
  const uint64_t *e = d->e;
  const uint32_t *row = d->row;
  if (!d->overlaps) {
    if (!room) return false;
    uint64_t ex = e[d->p - 1], E = ex < ey ? ex : ey;   /* live: checked */
    ots[n] = ts;
    odur[n] = region_dur(t, E);
    od[n] = row[d->p - 1];
    oy[n] = ry;
    out->n = n + 1;
    return true;
  }
  uint32_t *act = d->act, *tail = d->tail;
  if ((d->an - d->a0) + (d->tn - d->t0) > room) return false;
  if (d->tn > d->t0) {
    bool first = d->an == d->a0;
    uint32_t last = first ? 0 : row[act[d->an - 1]];
    for (size_t i = d->t0; i < d->tn; i++) {
      uint32_t r = row[tail[i]];
      if (!first && r <= last) return false;
      last = r;
      first = false;
    }
  }
  /* the set, then the tail, each item kept and paired while active */
  const uint32_t *src[2] = {act + d->a0, tail + d->t0};
  size_t len[2] = {d->an - d->a0, d->tn - d->t0}, w = 0;
  for (int part = 0; part < 2; part++)
    for (size_t i = 0; i < len[part]; i++) {
      uint32_t x = src[part][i];
      uint64_t ex = e[x];
      if (ex <= t) continue;
      act[w++] = x;
      uint64_t E = ex < ey ? ex : ey;
      ots[n] = ts;
      odur[n] = region_dur(t, E);
      od[n] = row[x];
      oy[n] = ry;
      n++;
    }
  d->a0 = d->t0 = d->tn = 0;
  d->an = w;
  out->n = n;
  return true;
}

/* next_event for two operands, without the loops over operands, and
 * emitting the usual events itself (single2). Returns 2 when out is
 * full, else as next_event. */
static int next_event2(rt_isweep *w, rt_isect_out *out, size_t limit) {
  side *a = &w->sd[0], *b = &w->sd[1];
  for (;;) {
    uint64_t sa = a->p < a->n ? a->s[a->p] : UINT64_MAX;
    uint64_t sb = b->p < b->n ? b->s[b->p] : UINT64_MAX;
    uint64_t t = sa < sb ? sa : sb;
    if (t == UINT64_MAX) return 0;   /* doubled bounds never reach it */
    a->nn = sa == t ? run_at(a, t) : 0;
    b->nn = sb == t ? run_at(b, t) : 0;
    bool la = a->nn || has_live(a, t), lb = b->nn || has_live(b, t);
    if (!la || !lb) {
      if ((!la && a->p == a->n) || (!lb && b->p == b->n)) return 0;
      uint64_t to = !la ? sa : 0;
      if (!lb && sb > to) to = sb;
      a->nn = b->nn = 0;
      if (!jump(a, to) || !jump(b, to)) return -1;
      w->skips++;
      continue;
    }
    if (a->nn + b->nn == 1) {
      int o = b->nn == 1;
      side *ys = o ? b : a;
      if (single2(o ? a : b, ys, o, t, out, limit)) {
        take_new(ys);
        w->events++;
        if (out->n >= limit) return 2;
        continue;
      }
    }
    if (a->nn) take_new(a);
    if (b->nn) take_new(b);
    if (b->nn) refresh(a, t);
    if (a->nn) refresh(b, t);
    w->t = t;
    w->in_event = true;
    w->lst[0] = b->nn ? a->act : a->nw;
    w->len[0] = b->nn ? a->an : a->nn;
    w->pos[0] = w->pos[1] = 0;
    w->events++;
    return 1;
  }
}

/* Sets up the next start at which regions begin (in_event), jumping over
 * stretches where some operand holds nothing. Returns 1, 0 when the
 * partition has no region left, -1 when out of memory. */
static int next_event(rt_isweep *w) {
  int k = w->k;
  side *sd = w->sd;
  for (;;) {
    uint64_t t = UINT64_MAX;
    bool any = false;
    for (int j = 0; j < k; j++)
      if (sd[j].p < sd[j].n) {
        any = true;
        t = sd[j].s[sd[j].p] < t ? sd[j].s[sd[j].p] : t;
      }
    if (!any) return 0;
    uint64_t to = 0;
    bool idle = false;
    for (int j = 0; j < k; j++) {
      side *d = &sd[j];
      d->nn = run_at(d, t);
      if (d->nn || has_live(d, t)) continue;
      if (d->p == d->n) return 0;   /* this operand holds nothing from here on */
      idle = true;
      to = d->s[d->p] > to ? d->s[d->p] : to;
    }
    if (idle) {
      for (int j = 0; j < k; j++) {
        sd[j].nn = 0;
        if (!jump(&sd[j], to)) return -1;
      }
      w->skips++;
      continue;
    }
    int nnew = 0;
    for (int j = 0; j < k; j++) {
      if (sd[j].nn) take_new(&sd[j]);
      nnew += sd[j].nn > 0;
    }
    bool later = false;
    for (int j = k - 1; j >= 0; j--) {
      w->later_new[j] = later;
      later |= sd[j].nn > 0;
    }
    /* A_j is enumerated only when another operand has a new item */
    for (int j = 0; j < k; j++)
      if (nnew - (sd[j].nn > 0) > 0) refresh(&sd[j], t);
    w->t = t;
    w->in_event = true;
    w->depth = 0;
    side *d0 = &sd[0];
    w->lst[0] = w->later_new[0] ? d0->act : d0->nw;
    w->len[0] = w->later_new[0] ? d0->an : d0->nn;
    w->pos[0] = w->pos[1] = 0;
    w->events++;
    return 1;
  }
}

/* Room for at least one more region in out; how many fit before limit. */
static inline size_t out_room(rt_isect_out *out, size_t limit, size_t want) {
  if (out->n == out->cap) {
    size_t more = want < 65536 ? want : 65536;
    if (more > limit - out->n) more = limit - out->n;
    if (!rt_isect_reserve(out, out->n + more)) return 0;
  }
  size_t m = want;
  if (m > limit - out->n) m = limit - out->n;
  if (m > out->cap - out->n) m = out->cap - out->n;
  return m;
}

/* Regions at t of one fixed item (row rf, end ef; its row goes to
 * out->rows[of]) with the items l[*i..n) of operand d (out->rows[1 - of]),
 * from *i on. Returns 1 when done, 0 when out reached limit first, -1
 * when out of memory. */
static inline __attribute__((always_inline)) int pair_run(rt_isect_out *out, size_t limit,
                                                          uint64_t t, const side *d,
                                                          const uint32_t *l, size_t n,
                                                          size_t *i, uint32_t rf, uint64_t ef,
                                                          int of) {
  int64_t ts = (int64_t)(t >> 1);
  const uint64_t *e = d->e;
  const uint32_t *row = d->row;
  while (*i < n) {
    if (out->n == limit) return 0;
    size_t m = out_room(out, limit, n - *i);
    if (!m) return -1;
    int64_t *ots = out->ts + out->n, *odur = out->dur + out->n;
    uint32_t *of_ = out->rows[of] + out->n, *od = out->rows[1 - of] + out->n;
    const uint32_t *x = l + *i;
    for (size_t q = 0; q < m; q++) {
      uint64_t ex = e[x[q]], E = ex < ef ? ex : ef;
      ots[q] = ts;
      odur[q] = region_dur(t, E);
      of_[q] = rf;
      od[q] = row[x[q]];
    }
    *i += m;
    out->n += m;
  }
  return 1;
}

/* Two operands: x0 over its choices, x1 over A_1 when x0 is new, else
 * N_1. Returns 1 when the event is done, 0 when out is full, -1. */
static int emit2(rt_isweep *w, rt_isect_out *out, size_t limit) {
  const side *a = &w->sd[0], *b = &w->sd[1];
  uint64_t t = w->t;
  const uint32_t *l0 = w->lst[0];
  size_t n0 = w->len[0], i0 = w->pos[0], i1 = w->pos[1];
  int r = 1;
  if (a->nn == 0 && b->nn == 1) {
    /* one new item of operand 1 against the active items of operand 0:
     * one region each, in one run */
    uint32_t x1 = b->nw[0];
    r = pair_run(out, limit, t, a, l0, n0, &i0, b->row[x1], b->e[x1], 1);
  } else {
    for (; i0 < n0; i0++, i1 = 0) {
      uint32_t x0 = l0[i0];
      bool fresh = a->s[x0] == t;
      r = pair_run(out, limit, t, b, fresh ? b->act : b->nw, fresh ? b->an : b->nn, &i1,
                   a->row[x0], a->e[x0], 0);
      if (r <= 0) break;
    }
  }
  w->pos[0] = i0;
  w->pos[1] = i1;
  return r;
}

/* Any k: the odometer, levels 0..k-1, the last one emitted in runs. */
static int emitk(rt_isweep *w, rt_isect_out *out, size_t limit) {
  int k = w->k, j = w->depth;
  uint64_t t = w->t;
  int64_t ts = (int64_t)(t >> 1);
  for (;;) {
    if (w->pos[j] == w->len[j]) {
      if (j == 0) return 1;
      w->pos[--j]++;
      continue;
    }
    if (j < k - 1) {
      const side *d = &w->sd[j];
      uint32_t x = w->lst[j][w->pos[j]];
      bool f = (j && w->pnew[j - 1]) || d->s[x] == t;
      uint64_t E = d->e[x];
      if (j && w->pend[j - 1] < E) E = w->pend[j - 1];
      w->pnew[j] = f;
      w->pend[j] = E;
      const side *dn = &w->sd[++j];
      bool all = f || w->later_new[j];
      w->lst[j] = all ? dn->act : dn->nw;
      w->len[j] = all ? dn->an : dn->nn;
      w->pos[j] = 0;
      continue;
    }
    if (out->n == limit) {
      w->depth = j;
      return 0;
    }
    size_t m = out_room(out, limit, w->len[j] - w->pos[j]);
    if (!m) return -1;
    const side *d = &w->sd[j];
    const uint32_t *l = w->lst[j] + w->pos[j];
    uint64_t pe = w->pend[j - 1];
    size_t o = out->n;
    for (size_t q = 0; q < m; q++) {
      uint64_t e = d->e[l[q]], E = pe < e ? pe : e;
      out->ts[o + q] = ts;
      out->dur[o + q] = region_dur(t, E);
      out->rows[j][o + q] = d->row[l[q]];
    }
    for (int i = 0; i < j; i++) {
      uint32_t r = w->sd[i].row[w->lst[i][w->pos[i]]];
      uint32_t *dst = out->rows[i] + o;
      for (size_t q = 0; q < m; q++) dst[q] = r;
    }
    w->pos[j] += m;
    out->n += m;
  }
}

int rt_isweep_step(rt_isweep *w, rt_isect_out *out, size_t limit) {
  for (;;) {
    if (w->in_event) {
      int r = w->k == 2 ? emit2(w, out, limit) : emitk(w, out, limit);
      if (r < 0) return RT_ISWEEP_OOM;
      if (r == 0) return RT_ISWEEP_MORE;
      w->in_event = false;
    }
    if (out->n >= limit) return RT_ISWEEP_MORE;
    int r = w->k == 2 ? next_event2(w, out, limit) : next_event(w);
    if (r < 0) return RT_ISWEEP_OOM;
    if (r == 0) return RT_ISWEEP_DONE;
    if (r == 2) return RT_ISWEEP_MORE;
  }
}
