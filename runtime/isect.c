/*
 * isect.c — INTERVAL INTERSECTION OF over buffered operands.
 *
 * 1. Partition: each operand's rows go into lanes by PER key (one lane
 *    table shared by all operands, so a lane number names the same key in
 *    every operand); rows with NULL ts or dur are skipped, negative bounds
 *    are an error. A counting sort by lane lays each operand out as flat
 *    per-lane arrays of (start, end, row), sorted by (start, end, row)
 *    (a scan finds input already in order and skips the sort), then one
 *    scan per lane records whether two of its intervals meet.
 * 2. Intersect: only lanes present in every operand, iterating the lanes of
 *    the operand with the fewest. When every operand is disjoint in a lane,
 *    one multi-way linear sweep writes regions straight to the output.
 *    Otherwise pairwise narrowing: the smallest operand seeds candidate
 *    regions (flat arrays of bounds plus a row array per operand) and each
 *    next operand narrows them by a linear sweep, by binary search into a
 *    disjoint operand, or through a max-end tree into an operand that
 *    overlaps itself (the last two when candidates are few against a big
 *    operand). The sweep keeps an active list per side, so it stays linear
 *    in input + output even when both sides overlap themselves.
 *
 * Bounds are kept doubled (start 2ts; end 2(ts+dur), or 2ts+1 for a
 * point), which makes a point a half-open interval of its own: then "meet"
 * is always max(start) < min(end). Example: point 10 → [20,21) meets
 * [0,10)·2 = [0,20)? 20 < 20 no; meets [10,20)·2 = [20,40)? 20 < 21 yes,
 * and the region [20,21) is the point 10 with dur 0. ts + dur <= INT64_MAX
 * keeps every doubled bound within uint64.
 */
#include <stdlib.h>

#include "interval.h"

typedef struct opnd {
  uint32_t nl;             /* lanes known when this operand was read */
  uint32_t *off;           /* nl + 1 */
  uint64_t *s, *e;
  uint32_t *row;
  uint8_t *overlaps;       /* per lane */
  uint32_t nparts;         /* lanes holding at least one row */
  uint32_t *parts;         /* those lanes in first-seen order */
} opnd;

/* Candidate (or result) regions of one partition. */
typedef struct cands {
  size_t n, cap;
  uint64_t *s, *e;
  uint32_t *r[];           /* k row arrays */
} cands;

typedef struct ctx {
  int k;
  const char *stage;
  rt_err *err;
  rt_isect_out *out;
  rt_isect_stats *st;
  opnd *ops;
  cands *cur, *nxt;
  uint32_t *perm;
  size_t permcap;
  uint32_t *act_a, *act_b;
  size_t capa, capb;
} ctx;

static int oom(ctx *c) { return rt_errorf(c->err, -1, "%s: out of memory", c->stage); }

/* ---- output ------------------------------------------------------------------ */

static bool out_reserve(rt_isect_out *o, size_t need) {
  if (need <= o->cap) return true;
  size_t cap = o->cap;
  size_t c2 = cap;
  if (!rt_iv_grow((void **)&o->ts, &c2, need, sizeof *o->ts)) return false;
  c2 = cap;
  if (!rt_iv_grow((void **)&o->dur, &c2, need, sizeof *o->dur)) return false;
  for (int j = 0; j < o->k; j++) {
    c2 = cap;
    if (!rt_iv_grow((void **)&o->rows[j], &c2, need, sizeof *o->rows[j])) return false;
  }
  o->cap = c2;
  return true;
}

static inline void put_region(rt_isect_out *o, uint64_t s, uint64_t e) {
  o->ts[o->n] = (int64_t)(s >> 1);
  o->dur[o->n] = (e & 1) ? 0 : (int64_t)((e - s) >> 1);
}

void rt_isect_free(rt_isect_out *o) {
  free(o->ts);
  free(o->dur);
  if (o->rows)
    for (int j = 0; j < o->k; j++) free(o->rows[j]);
  free(o->rows);
  memset(o, 0, sizeof *o);
}

/* ---- candidates ---------------------------------------------------------------- */

static cands *cands_new(int k) {
  return calloc(1, sizeof(cands) + (size_t)k * sizeof(uint32_t *));
}

static void cands_free(cands *c, int k) {
  if (!c) return;
  free(c->s);
  free(c->e);
  for (int j = 0; j < k; j++) free(c->r[j]);
  free(c);
}

static bool cands_reserve(cands *c, int k, size_t need) {
  if (need <= c->cap) return true;
  size_t c2 = c->cap;
  if (!rt_iv_grow((void **)&c->s, &c2, need, 8)) return false;
  c2 = c->cap;
  if (!rt_iv_grow((void **)&c->e, &c2, need, 8)) return false;
  for (int j = 0; j < k; j++) {
    c2 = c->cap;
    if (!rt_iv_grow((void **)&c->r[j], &c2, need, 4)) return false;
  }
  c->cap = c2;
  return true;
}

/* ---- reading operands ---------------------------------------------------------- */

/* lane: scratch of at least r->n entries, shared by the operands. */
static int read_operand(ctx *c, rt_lanes *lanes, const rt_ivrel *r, opnd *o, uint32_t *lane) {
  uint32_t n = r->n;
  if (!rt_lanes_assign(lanes, r, true, true, lane, c->stage, c->err)) return 0;
  o->nl = lanes->n;
  o->off = calloc((size_t)o->nl + 2, sizeof *o->off);
  o->overlaps = calloc((size_t)o->nl + 1, 1);
  o->parts = malloc(((size_t)o->nl + 1) * sizeof *o->parts);
  if (!o->off || !o->overlaps || !o->parts) return oom(c);
  /* Validate and count; off[l + 1] counts lane l for the prefix sum. */
  size_t valid = 0;
  for (uint32_t i = 0; i < n; i++) {
    c->st->rows_in++;
    if (!rt_ivrel_bounds_valid(r, i)) {
      c->st->rows_null++;
      lane[i] = RT_NO_LANE;
      continue;
    }
    int64_t ts = r->ts[i], dur = r->dur[i];
    if (ts < 0 || dur < 0) return rt_errorf(c->err, -1, "%s: ts or dur is below zero", c->stage);
    if (ts > INT64_MAX - dur) return rt_errorf(c->err, -1, "%s: integer overflow", c->stage);
    if (o->off[lane[i] + 1]++ == 0) o->parts[o->nparts++] = lane[i];
    valid++;
  }
  for (uint32_t l = 0; l < o->nl; l++) o->off[l + 1] += o->off[l];
  o->s = rt_iv_big((valid + 1) * sizeof *o->s);
  o->e = rt_iv_big((valid + 1) * sizeof *o->e);
  o->row = rt_iv_big((valid + 1) * sizeof *o->row);
  uint32_t *next = malloc(((size_t)o->nl + 1) * sizeof *next);
  if (!o->s || !o->e || !o->row || !next) {
    free(next);
    return oom(c);
  }
  memcpy(next, o->off, (size_t)o->nl * sizeof *next);
  for (uint32_t i = 0; i < n; i++) {
    if (lane[i] == RT_NO_LANE) continue;
    uint32_t p = next[lane[i]]++;
    uint64_t ts = (uint64_t)r->ts[i], dur = (uint64_t)r->dur[i];
    o->s[p] = 2 * ts;
    o->e[p] = dur ? 2 * (ts + dur) : 2 * ts + 1;
    o->row[p] = i;
  }
  free(next);
  /* Sort each lane (rows are already ascending within a lane, so a lane
   * whose starts and ends ascend is in order) and record self-overlap. */
  for (uint32_t q = 0; q < o->nparts; q++) {
    uint32_t l = o->parts[q];
    size_t lo = o->off[l], m = o->off[l + 1] - lo;
    uint64_t *s = o->s + lo, *e = o->e + lo;
    bool sorted = true;
    uint8_t ov = 0;
    for (size_t i = 1; i < m; i++) {
      if (s[i - 1] > s[i] || (s[i - 1] == s[i] && e[i - 1] > e[i])) {
        sorted = false;
        break;
      }
      ov |= e[i - 1] > s[i];
    }
    if (!sorted) {
      c->st->lanes_sorted++;
      if (!rt_iv_sort(s, e, o->row + lo, m)) return oom(c);
      ov = 0;
      for (size_t i = 1; i < m && !ov; i++) ov = e[i - 1] > s[i];
    }
    o->overlaps[l] = ov;
  }
  return 1;
}

static void opnd_free(opnd *o) {
  free(o->off);
  free(o->s);
  free(o->e);
  free(o->row);
  free(o->overlaps);
  free(o->parts);
}

static inline size_t lane_lo(const opnd *o, uint32_t l) { return o->off[l]; }
static inline size_t lane_n(const opnd *o, uint32_t l) { return o->off[l + 1] - o->off[l]; }

/* ---- all-disjoint multi-way sweep ------------------------------------------------ */

/* Every operand's lane is disjoint, so each instant is held by at most one
 * row per operand: at each step the current rows either meet in
 * [max start, min end) or not, and the row ending first can meet nothing
 * later (every other operand's later rows start at or after its current
 * row's end, which is >= this end). Regions come out in start order. */
static int sweep_disjoint(ctx *c, uint32_t l) {
  int k = c->k;
  size_t p[k], hi[k];
  const uint64_t *s[k], *e[k];
  for (int j = 0; j < k; j++) {
    const opnd *o = &c->ops[j];
    p[j] = lane_lo(o, l);
    hi[j] = p[j] + lane_n(o, l);
    s[j] = o->s;
    e[j] = o->e;
  }
  rt_isect_out *out = c->out;
  for (;;) {
    uint64_t S = 0, E = UINT64_MAX;
    for (int j = 0; j < k; j++) {
      if (s[j][p[j]] > S) S = s[j][p[j]];
      if (e[j][p[j]] < E) E = e[j][p[j]];
    }
    if (S < E) {
      if (out->n == out->cap && !out_reserve(out, out->n + 1)) return oom(c);
      put_region(out, S, E);
      for (int j = 0; j < k; j++) out->rows[j][out->n] = c->ops[j].row[p[j]];
      out->n++;
    }
    for (int j = 0; j < k; j++)
      if (e[j][p[j]] == E && ++p[j] == hi[j]) return 1;
  }
}

/* ---- pairwise narrowing ------------------------------------------------------- */

typedef struct step {
  ctx *c;
  const cands *cur;
  cands *nxt;
  int jb;                  /* operand being added */
  const uint64_t *bs, *be;
  const uint32_t *brow;
  const int *inc;          /* operands already in the candidates */
  int ninc;
  size_t ci;               /* candidate of a tree query */
  bool failed;
} step;

/* Appends the region of candidate ci and item x of the new operand. */
static bool emit(step *st, size_t ci, size_t x) {
  cands *n = st->nxt;
  int k = st->c->k;
  if (n->n == n->cap && !cands_reserve(n, k, n->n + 1)) {
    st->failed = true;
    return false;
  }
  const cands *cu = st->cur;
  n->s[n->n] = cu->s[ci] > st->bs[x] ? cu->s[ci] : st->bs[x];
  n->e[n->n] = cu->e[ci] < st->be[x] ? cu->e[ci] : st->be[x];
  for (int q = 0; q < st->ninc; q++) n->r[st->inc[q]][n->n] = cu->r[st->inc[q]][ci];
  n->r[st->jb][n->n] = st->brow[x];
  n->n++;
  return true;
}

static bool push_act(uint32_t **a, size_t *cap, size_t n, uint32_t v) {
  if (n == *cap && !rt_iv_grow((void **)a, cap, n + 1, sizeof **a)) return false;
  (*a)[n] = v;
  return true;
}

/* Merge by start, candidates first on ties. When an item starts at t, it
 * meets exactly the active items of the other side still ending after t,
 * and t is the region's start, so regions come out in start order. Each
 * active item scanned either yields a region or is dropped: linear in
 * candidates + items + regions. */
static bool narrow_sweep(step *st, size_t nb) {
  ctx *c = st->c;
  const cands *cu = st->cur;
  size_t i = 0, b = 0, na = 0, nbact = 0;
  while (i < cu->n || b < nb) {
    if (i >= cu->n && na == 0) break;
    if (b >= nb && nbact == 0) break;
    if (i < cu->n && (b >= nb || cu->s[i] <= st->bs[b])) {
      uint64_t t = cu->s[i];
      size_t w = 0;
      for (size_t q = 0; q < nbact; q++) {
        uint32_t x = c->act_b[q];
        if (st->be[x] > t) {
          c->act_b[w++] = x;
          if (!emit(st, i, x)) return false;
        }
      }
      nbact = w;
      if (!push_act(&c->act_a, &c->capa, na++, (uint32_t)i)) return false;
      i++;
    } else {
      uint64_t t = st->bs[b];
      size_t w = 0;
      for (size_t q = 0; q < na; q++) {
        uint32_t ci = c->act_a[q];
        if (cu->e[ci] > t) {
          c->act_a[w++] = ci;
          if (!emit(st, ci, b)) return false;
        }
      }
      na = w;
      if (!push_act(&c->act_b, &c->capb, nbact++, (uint32_t)b)) return false;
      b++;
    }
  }
  return true;
}

/* The new operand is disjoint, so its ends ascend with its starts: the
 * items meeting a candidate are a run starting at the first end > start. */
static bool narrow_bsearch(step *st, size_t nb) {
  const cands *cu = st->cur;
  for (size_t ci = 0; ci < cu->n; ci++) {
    for (size_t x = rt_iv_lower(st->be, nb, cu->s[ci] + 1); x < nb && st->bs[x] < cu->e[ci]; x++)
      if (!emit(st, ci, x)) return false;
  }
  return true;
}

static bool tree_hit(void *p, size_t x) {
  step *st = p;
  return emit(st, st->ci, x);
}

static bool narrow_tree(step *st, size_t nb) {
  rt_ivtree t;
  if (!rt_ivtree_build(&t, st->be, nb)) return false;
  const cands *cu = st->cur;
  bool ok = true;
  for (size_t ci = 0; ci < cu->n && ok; ci++) {
    st->ci = ci;
    size_t hi = rt_iv_lower(st->bs, nb, cu->e[ci]);   /* items starting before the end */
    ok = rt_ivtree_query(&t, 0, hi, cu->s[ci] + 1, tree_hit, st);
  }
  rt_ivtree_free(&t);
  return ok;
}

static int cmp_start(const void *p, uint32_t a, uint32_t b) {
  const cands *c = p;
  return c->s[a] < c->s[b] ? -1 : c->s[a] > c->s[b];
}

typedef struct canon { const cands *c; int k; } canon;

static int cmp_canon(const void *p, uint32_t a, uint32_t b) {
  const canon *x = p;
  const cands *c = x->c;
  if (c->s[a] != c->s[b]) return c->s[a] < c->s[b] ? -1 : 1;
  for (int j = 0; j < x->k; j++)
    if (c->r[j][a] != c->r[j][b]) return c->r[j][a] < c->r[j][b] ? -1 : 1;
  return 0;
}

static bool identity_perm(ctx *c, size_t n) {
  if (!rt_iv_grow((void **)&c->perm, &c->permcap, n + 1, sizeof *c->perm)) return false;
  for (size_t i = 0; i < n; i++) c->perm[i] = (uint32_t)i;
  return true;
}

/* Reorders cur by start (into nxt, then swapped back into cur). */
static bool sort_cands_by_start(ctx *c, const int *inc, int ninc) {
  cands *cu = c->cur, *nx = c->nxt;
  if (!identity_perm(c, cu->n)) return false;
  if (!rt_iv_sort_perm(c->perm, cu->n, cmp_start, cu)) return false;
  if (!cands_reserve(nx, c->k, cu->n)) return false;
  for (size_t i = 0; i < cu->n; i++) {
    uint32_t q = c->perm[i];
    nx->s[i] = cu->s[q];
    nx->e[i] = cu->e[q];
    for (int j = 0; j < ninc; j++) nx->r[inc[j]][i] = cu->r[inc[j]][q];
  }
  nx->n = cu->n;
  c->cur = nx;
  c->nxt = cu;
  return true;
}

static int narrow(ctx *c, uint32_t l) {
  int k = c->k;
  int order[k];
  for (int j = 0; j < k; j++) order[j] = j;
  /* Operands by interval count (insertion sort: k is small; stable). */
  for (int a = 1; a < k; a++) {
    int x = order[a], b = a;
    for (; b > 0 && lane_n(&c->ops[order[b - 1]], l) > lane_n(&c->ops[x], l); b--)
      order[b] = order[b - 1];
    order[b] = x;
  }
  const opnd *seed = &c->ops[order[0]];
  size_t n0 = lane_n(seed, l), lo0 = lane_lo(seed, l);
  cands *cu = c->cur;
  if (!cands_reserve(cu, k, n0)) return oom(c);
  memcpy(cu->s, seed->s + lo0, n0 * 8);
  memcpy(cu->e, seed->e + lo0, n0 * 8);
  memcpy(cu->r[order[0]], seed->row + lo0, n0 * 4);
  cu->n = n0;
  bool by_start = true;
  for (int q = 1; q < k && c->cur->n > 0; q++) {
    const opnd *o = &c->ops[order[q]];
    size_t nb = lane_n(o, l), lob = lane_lo(o, l);
    step st = {.c = c, .cur = c->cur, .nxt = c->nxt, .jb = order[q], .bs = o->s + lob,
               .be = o->e + lob, .brow = o->row + lob, .inc = order, .ninc = q};
    st.nxt->n = 0;
    /* Per-candidate searches pay about log2(nb) each; a sweep pays nb. */
    size_t lg = 1;
    while (((size_t)1 << lg) < nb) lg++;
    bool few = c->cur->n * (lg + 1) * 2 < nb;
    bool ok;
    if (few && !o->overlaps[l]) {
      c->st->step_bsearch++;
      ok = narrow_bsearch(&st, nb);
      by_start = false;
    } else if (few) {
      c->st->step_tree++;
      ok = narrow_tree(&st, nb);
      by_start = false;
    } else {
      c->st->step_sweep++;
      if (!by_start) {
        if (!sort_cands_by_start(c, order, q)) return oom(c);
        st.cur = c->cur;
        st.nxt = c->nxt;
        st.nxt->n = 0;
      }
      ok = narrow_sweep(&st, nb);
      by_start = true;
    }
    if (!ok) return oom(c);
    cands *x = c->cur;
    c->cur = c->nxt;
    c->nxt = x;
  }
  /* Canonical order, then out. */
  cu = c->cur;
  if (!identity_perm(c, cu->n)) return oom(c);
  canon cn = {cu, k};
  if (!rt_iv_sort_perm(c->perm, cu->n, cmp_canon, &cn)) return oom(c);
  rt_isect_out *out = c->out;
  if (!out_reserve(out, out->n + cu->n)) return oom(c);
  for (size_t i = 0; i < cu->n; i++) {
    uint32_t q = c->perm[i];
    put_region(out, cu->s[q], cu->e[q]);
    for (int j = 0; j < k; j++) out->rows[j][out->n] = cu->r[j][q];
    out->n++;
  }
  return 1;
}

/* ---- driver ------------------------------------------------------------------- */

int rt_isect_run(int k, const rt_ivrel *ops, const char *stage, rt_isect_out *out,
                 rt_isect_stats *stats, rt_err *err) {
  rt_isect_stats dummy;
  if (!stats) stats = &dummy;
  memset(stats, 0, sizeof *stats);
  memset(out, 0, sizeof *out);
  if (k < 2) return rt_errorf(err, -1, "%s: expected at least two relations to intersect", stage);
  out->k = k;
  out->rows = calloc((size_t)k, sizeof *out->rows);
  ctx c = {.k = k, .stage = stage, .err = err, .out = out, .st = stats};
  c.ops = calloc((size_t)k, sizeof *c.ops);
  c.cur = cands_new(k);
  c.nxt = cands_new(k);
  rt_lanes lanes;
  rt_type types[RT_LANES_MAXKEYS];
  int nkeys = ops[0].nkeys;
  for (int q = 0; q < nkeys && q < RT_LANES_MAXKEYS; q++) types[q] = ops[0].keys[q].type;
  int ok = rt_lanes_init(&lanes, nkeys, types, stage, err);
  if (ok && (!out->rows || !c.ops || !c.cur || !c.nxt)) ok = oom(&c);
  uint32_t maxn = 0;
  for (int j = 0; j < k; j++)
    if (ops[j].n > maxn) maxn = ops[j].n;
  uint32_t *lane = ok ? rt_iv_big(((size_t)maxn + 1) * sizeof *lane) : NULL;
  if (ok && !lane) ok = oom(&c);
  for (int j = 0; ok && j < k; j++) ok = read_operand(&c, &lanes, &ops[j], &c.ops[j], lane);
  free(lane);
  rt_lanes_free(&lanes);
  if (ok) {
    /* An all-disjoint partition yields at most as many regions as it has
     * rows (each sweep step moves past a row), so this reservation is
     * usually final; untouched pages cost nothing. */
    size_t rows = 0;
    for (int j = 0; j < k; j++) rows += c.ops[j].off[c.ops[j].nl];
    if (!out_reserve(out, rows + 1)) ok = oom(&c);
  }
  if (ok) {
    int jmin = 0;
    for (int j = 1; j < k; j++)
      if (c.ops[j].nparts < c.ops[jmin].nparts) jmin = j;
    const opnd *m = &c.ops[jmin];
    for (uint32_t q = 0; ok && q < m->nparts; q++) {
      uint32_t l = m->parts[q];
      bool everywhere = true, disjoint = true;
      for (int j = 0; j < k && everywhere; j++) {
        const opnd *o = &c.ops[j];
        everywhere = l < o->nl && lane_n(o, l) > 0;
        if (everywhere && o->overlaps[l]) disjoint = false;
      }
      if (!everywhere) continue;
      stats->partitions++;
      if (disjoint) {
        stats->part_disjoint++;
        ok = sweep_disjoint(&c, l);
      } else {
        stats->part_narrow++;
        ok = narrow(&c, l);
      }
    }
  }
  stats->regions = out->n;
  for (int j = 0; c.ops && j < k; j++) opnd_free(&c.ops[j]);
  free(c.ops);
  cands_free(c.cur, k);
  cands_free(c.nxt, k);
  free(c.perm);
  free(c.act_a);
  free(c.act_b);
  return ok;
}
