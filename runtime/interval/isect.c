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
 *    in input + output even when both sides overlap themselves. Narrowing
 *    holds the partition's regions, so it gives up once a step would hold
 *    more than the cap (RT_ISECT_NARROW_CAP), and two operands of
 *    comparable size, which narrowing would sweep, do not narrow at all:
 *    both stream (isect_sweep.c), making the regions in output order a
 *    slice at a time in memory bounded by the partition's rows.
 *
 * 3. Serve: rt_isect_next resumes where the last slice stopped (inside a
 *    partition's multi-way or streaming sweep, or part way through a
 *    narrowed partition's regions), so a caller can take a batch at a time
 *    and no partition's regions need to exist at once; rt_isect_run
 *    collects them all.
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
#include "runtime/budget.h"
#include "isect_sweep.h"
#include "runtime/par.h"

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
  bool ident;              /* cur is in output order as it stands (no perm) */
  uint32_t *perm;          /* else: the output order of cur */
  size_t permcap;
  /* Radix sort scratch, kept across partitions (like cur and nxt) so a
   * later partition touches no fresh pages. */
  uint64_t *ka, *kb;
  uint32_t *ib;
  size_t kacap, kbcap, ibcap;
  uint32_t *act_a, *act_b;
  size_t capa, capb;
  size_t narrow_cap;       /* regions a narrowing step may hold */
  const rt_par *par;       /* rt_isect_begin_par's workers, or NULL */
} ctx;

static int oom(ctx *c) { return rt_errorf(c->err, -1, "%s: out of memory", c->stage); }

/* ---- output ------------------------------------------------------------------ */

bool rt_isect_reserve(rt_isect_out *o, size_t need) {
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
  rt_mem_free(o->ts);
  rt_mem_free(o->dur);
  if (o->rows)
    for (int j = 0; j < o->k; j++) rt_mem_free(o->rows[j]);
  rt_mem_free(o->rows);
  memset(o, 0, sizeof *o);
}

/* ---- candidates ---------------------------------------------------------------- */

static cands *cands_new(int k) {
  return rt_mem_calloc(1, sizeof(cands) + (size_t)k * sizeof(uint32_t *));
}

static void cands_free(cands *c, int k) {
  if (!c) return;
  rt_mem_free(c->s);
  rt_mem_free(c->e);
  for (int j = 0; j < k; j++) rt_mem_free(c->r[j]);
  rt_mem_free(c);
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

/* Counts the valid rows of each lane into off[lane + 1] and lists the
 * lanes in first-seen order; invalid (NULL-bound) rows get RT_NO_LANE.
 * Returns the number of valid rows, or -1 after an error. */
static int64_t count_lanes(ctx *c, const rt_ivrel *r, opnd *o, uint32_t *lane) {
  uint32_t n = r->n;
  c->st->rows_in += n;
  if (!r->ts_valid && !r->dur_valid) {
    /* No NULL bounds: one branch-free pass; a negative bound or an
     * overflowing end sets bit 63 of `bad` (both bounds are then
     * non-negative, so ts + dur overflows exactly when its bit 63 is set),
     * and the exact error is found by the general loop below. */
    uint64_t bad = 0;
    uint32_t *cnt = o->off + 1;
    for (uint32_t i = 0; i < n; i++) {
      uint64_t ts = (uint64_t)r->ts[i], dur = (uint64_t)r->dur[i];
      bad |= ts | dur | (ts + dur);
      if (cnt[lane[i]]++ == 0) o->parts[o->nparts++] = lane[i];
    }
    if (!(bad >> 63)) return n;
    memset(o->off, 0, ((size_t)o->nl + 2) * sizeof *o->off);
    o->nparts = 0;
  }
  size_t valid = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (!rt_ivrel_bounds_valid(r, i)) {
      c->st->rows_null++;
      lane[i] = RT_NO_LANE;
      continue;
    }
    int64_t ts = r->ts[i], dur = r->dur[i];
    if (ts < 0 || dur < 0) return rt_iv_below_zero(r, i, c->stage, "", c->err), -1;
    if (ts > INT64_MAX - dur) return rt_errorf(c->err, -1, "%s: integer overflow", c->stage), -1;
    if (o->off[lane[i] + 1]++ == 0) o->parts[o->nparts++] = lane[i];
    valid++;
  }
  return (int64_t)valid;
}

/* ---- reading an operand on several workers ---------------------------------- */

/* The rows in chunks (rt_lanes_chunk): each chunk counts its rows per
 * lane, then scatters them to where one pass would have put them (its
 * lane's start plus the earlier chunks' rows of the lane), so every lane
 * holds its rows in row order as before; then the lanes are checked and
 * sorted one per piece. Rows with a NULL bound get RT_NO_LANE and are
 * counted as one pass counts them (chunks are whole validity words).
 * Only for operands with not many more lanes than rows per chunk (the
 * counts are chunks x lanes); a bad bound sends the operand to the
 * one-thread reading, which names the first bad row. */
typedef struct rpar {
  const rt_ivrel *r;
  opnd *o;
  uint32_t *lane;          /* RT_NO_LANE written over rows with a NULL bound */
  uint32_t chunk, nch, nl;
  uint32_t *cnt;           /* nch x nl: rows, then the next slot, per chunk and lane */
  uint32_t *cparts;        /* nch x nl: each chunk's lanes in first-seen order */
  uint32_t *ncparts;       /* per chunk: how many */
  uint32_t *nnull;         /* per chunk: rows with a NULL bound */
  uint8_t *bad;            /* per chunk: a negative bound or an overflowing end */
  uint8_t *seen;           /* per lane: listed in parts */
} rpar;

/* Bit i - lo of the result: row i has both bounds (lo a multiple of 64). */
static inline uint64_t rpar_valid_word(const rt_ivrel *r, uint32_t lo) {
  uint64_t w = ~0ull;
  if (r->ts_valid) w &= r->ts_valid[lo / 64];
  if (r->dur_valid) w &= r->dur_valid[lo / 64];
  return w;
}

static void rpar_count(void *p, int64_t c) {
  rpar *x = p;
  uint32_t lo = (uint32_t)c * x->chunk, hi = lo + x->chunk < x->r->n ? lo + x->chunk : x->r->n;
  uint32_t *cnt = x->cnt + (size_t)c * x->nl, *cp = x->cparts + (size_t)c * x->nl, ncp = 0, nnull = 0;
  const int64_t *ts = x->r->ts, *dur = x->r->dur;
  uint32_t *lane = x->lane;
  uint64_t bad = 0;
  bool nulls = x->r->ts_valid || x->r->dur_valid;
  for (uint32_t w0 = lo; w0 < hi; w0 += 64) {
    uint32_t w1 = w0 + 64 < hi ? w0 + 64 : hi;
    uint64_t v = nulls ? rpar_valid_word(x->r, w0) : ~0ull;
    if (w1 - w0 < 64) v &= (1ull << (w1 - w0)) - 1;
    if (v == ~0ull || !nulls) {
      for (uint32_t i = w0; i < w1; i++) {
        uint64_t t = (uint64_t)ts[i], d = (uint64_t)dur[i];
        bad |= t | d | (t + d);
        if (cnt[lane[i]]++ == 0) cp[ncp++] = lane[i];
      }
      continue;
    }
    for (uint32_t i = w0; i < w1; i++) {
      if (!(v >> (i - w0) & 1)) {
        lane[i] = RT_NO_LANE;
        nnull++;
        continue;
      }
      uint64_t t = (uint64_t)ts[i], d = (uint64_t)dur[i];
      bad |= t | d | (t + d);
      if (cnt[lane[i]]++ == 0) cp[ncp++] = lane[i];
    }
  }
  x->ncparts[c] = ncp;
  x->nnull[c] = nnull;
  x->bad[c] = (uint8_t)(bad >> 63);
}

static void rpar_scatter(void *p, int64_t c) {
  rpar *x = p;
  uint32_t lo = (uint32_t)c * x->chunk, hi = lo + x->chunk < x->r->n ? lo + x->chunk : x->r->n;
  uint32_t *next = x->cnt + (size_t)c * x->nl;
  uint64_t *restrict os = x->o->s, *restrict oe = x->o->e;
  uint32_t *restrict orow = x->o->row;
  const int64_t *rts = x->r->ts, *rdur = x->r->dur;
  const uint32_t *lane = x->lane;
  bool nulls = x->r->ts_valid || x->r->dur_valid;
  for (uint32_t i = lo; i < hi; i++) {
    if (nulls && lane[i] == RT_NO_LANE) continue;
    uint32_t p2 = next[lane[i]]++;
    uint64_t ts = (uint64_t)rts[i], dur = (uint64_t)rdur[i];
    os[p2] = 2 * ts;   /* doubled bounds: see the banner */
    oe[p2] = dur ? 2 * (ts + dur) : 2 * ts + 1;
    orow[p2] = i;
  }
}

/* Lane parts[q] in order (sorted if not) and whether two of its items
 * meet. Rows ascend within a lane, so a lane whose (start, end) ascend is
 * in order; in order, two items meet exactly when neighbours do. One
 * sequential pass per lane (cheaper than tracking it while scattering,
 * which makes every row a read-modify-write of per-lane state). */
typedef struct lorder {
  opnd *o;
  uint8_t *sorted;         /* per lane: it needed a sort */
  uint8_t *failed;         /* per lane: out of memory sorting it */
} lorder;

static void order_lane(void *p, int64_t q) {
  lorder *x = p;
  opnd *o = x->o;
  uint32_t l = o->parts[q];
  size_t lo = o->off[l], m = o->off[l + 1] - lo;
  uint64_t *s = o->s + lo, *e = o->e + lo;
  uint64_t bad = 0, ovl = 0;
  for (size_t i = 1; i < m; i++) {
    bad |= (s[i - 1] > s[i]) | ((s[i - 1] == s[i]) & (e[i - 1] > e[i]));
    ovl |= e[i - 1] > s[i];
  }
  x->sorted[l] = (uint8_t)bad;
  if (bad) {
    /* sorted, and its overlap found again */
    if (!rt_iv_sort(s, e, o->row + lo, m)) {
      x->failed[l] = 1;
      return;
    }
    ovl = 0;
    for (size_t i = 1; i < m && !ovl; i++) ovl = e[i - 1] > s[i];
  }
  o->overlaps[l] = (uint8_t)ovl;
}

/* Every lane of o in order, one lane per piece on par's workers (NULL:
 * this thread). */
static int order_lanes(ctx *c, opnd *o, const rt_par *par) {
  lorder x = {.o = o};
  x.sorted = rt_mem_calloc((size_t)o->nl + 1, 1);
  x.failed = rt_mem_calloc((size_t)o->nl + 1, 1);
  int ok = x.sorted && x.failed ? 1 : oom(c);
  if (ok) rt_par_for(par, o->nparts, order_lane, &x);
  for (uint32_t q = 0; ok && q < o->nparts; q++) {
    uint32_t l = o->parts[q];
    c->st->lanes_sorted += x.sorted[l];
    if (x.failed[l]) ok = oom(c);
  }
  rt_mem_free(x.sorted);
  rt_mem_free(x.failed);
  return ok;
}

/* read_operand's work after the lanes, on c->par's workers: 1, 0 on out
 * of memory, -1 when the operand must be read by one thread. */
static int read_par(ctx *c, const rt_ivrel *r, opnd *o, uint32_t *lane) {
  uint32_t n = r->n, chunk = rt_lanes_chunk(c->par, n), nl = o->nl;
  if (chunk >= n) return -1;
  uint32_t nch = (n + chunk - 1) / chunk;
  if ((uint64_t)nch * nl > (uint64_t)chunk) return -1;
  rpar x = {.r = r, .o = o, .lane = lane, .chunk = chunk, .nch = nch, .nl = nl};
  x.cnt = rt_mem_calloc((size_t)nch * nl + 1, sizeof *x.cnt);
  x.cparts = rt_mem_alloc(((size_t)nch * nl + 1) * sizeof *x.cparts);
  x.ncparts = rt_mem_calloc(nch, sizeof *x.ncparts);
  x.nnull = rt_mem_calloc(nch, sizeof *x.nnull);
  x.bad = rt_mem_calloc(nch, 1);
  x.seen = rt_mem_calloc((size_t)nl + 1, 1);
  int ok = x.cnt && x.cparts && x.ncparts && x.nnull && x.bad && x.seen ? 1 : oom(c);
  if (ok) rt_par_for(c->par, nch, rpar_count, &x);
  for (uint32_t ch = 0; ok && ch < nch; ch++)
    if (x.bad[ch]) ok = -1;
  size_t valid = n;
  for (uint32_t ch = 0; ok == 1 && ch < nch; ch++) valid -= x.nnull[ch];
  if (ok == 1) {
    c->st->rows_in += n;
    c->st->rows_null += n - valid;
    /* the lanes in first-seen order: chunk by chunk, each chunk's in the
     * order its rows met them */
    uint8_t *seen = x.seen;
    for (uint32_t ch = 0; ch < nch; ch++) {
      const uint32_t *cnt = x.cnt + (size_t)ch * nl, *cp = x.cparts + (size_t)ch * nl;
      for (uint32_t l = 0; l < nl; l++) o->off[l + 1] += cnt[l];
      for (uint32_t q = 0; q < x.ncparts[ch]; q++)
        if (!seen[cp[q]]) {
          seen[cp[q]] = 1;
          o->parts[o->nparts++] = cp[q];
        }
    }
    for (uint32_t l = 0; l < nl; l++) o->off[l + 1] += o->off[l];
    o->s = rt_iv_big((valid + 1) * sizeof *o->s);
    o->e = rt_iv_big((valid + 1) * sizeof *o->e);
    o->row = rt_iv_big((valid + 1) * sizeof *o->row);
    if (!o->s || !o->e || !o->row) ok = oom(c);
  }
  if (ok == 1) {
    /* each chunk's first slot per lane: the lane's start plus the rows of
     * the lane in earlier chunks */
    for (uint32_t l = 0; l < nl; l++) {
      uint32_t at = o->off[l];
      for (uint32_t ch = 0; ch < nch; ch++) {
        uint32_t *cl = &x.cnt[(size_t)ch * nl + l];
        uint32_t k2 = *cl;
        *cl = at;
        at += k2;
      }
    }
    rt_par_for(c->par, nch, rpar_scatter, &x);
    ok = order_lanes(c, o, c->par);
  }
  rt_mem_free(x.cnt);
  rt_mem_free(x.cparts);
  rt_mem_free(x.ncparts);
  rt_mem_free(x.nnull);
  rt_mem_free(x.bad);
  rt_mem_free(x.seen);
  return ok;
}

/* lane: scratch of at least r->n entries, shared by the operands. */
static int read_operand(ctx *c, rt_lanes *lanes, const rt_ivrel *r, opnd *o, uint32_t *lane) {
  uint32_t n = r->n;
  o->nl = lanes->n;
  o->off = rt_mem_calloc((size_t)o->nl + 2, sizeof *o->off);
  o->overlaps = rt_mem_calloc((size_t)o->nl + 1, 1);
  o->parts = rt_mem_alloc(((size_t)o->nl + 1) * sizeof *o->parts);
  if (!o->off || !o->overlaps || !o->parts) return oom(c);
  if (c->par) {
    int rp = read_par(c, r, o, lane);
    if (rp >= 0) return rp;
    memset(o->off, 0, ((size_t)o->nl + 2) * sizeof *o->off);   /* read by one thread after all */
    o->nparts = 0;
  }
  /* off[l + 1] counts lane l for the prefix sum. */
  int64_t valid = count_lanes(c, r, o, lane);
  if (valid < 0) return 0;
  for (uint32_t l = 0; l < o->nl; l++) o->off[l + 1] += o->off[l];
  o->s = rt_iv_big(((size_t)valid + 1) * sizeof *o->s);
  o->e = rt_iv_big(((size_t)valid + 1) * sizeof *o->e);
  o->row = rt_iv_big(((size_t)valid + 1) * sizeof *o->row);
  /* Per lane: the next slot. */
  uint32_t *next = rt_mem_alloc(((size_t)o->nl + 1) * sizeof *next);
  if (!o->s || !o->e || !o->row || !next) {
    rt_mem_free(next);
    return oom(c);
  }
  memcpy(next, o->off, (size_t)o->nl * sizeof *next);
  /* locals, so the stores below cannot be taken to change them */
  uint64_t *restrict os = o->s, *restrict oe = o->e;
  uint32_t *restrict orow = o->row;
  const int64_t *rts = r->ts, *rdur = r->dur;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t l = lane[i];
    if (l == RT_NO_LANE) continue;
    uint32_t p = next[l]++;
    uint64_t ts = (uint64_t)rts[i], dur = (uint64_t)rdur[i];
    uint64_t s = 2 * ts, e = dur ? 2 * (ts + dur) : 2 * ts + 1;
    os[p] = s;
    oe[p] = e;
    orow[p] = i;
  }
  rt_mem_free(next);
  return order_lanes(c, o, NULL);
}

static void opnd_free(opnd *o) {
  rt_mem_free(o->off);
  rt_mem_free(o->s);
  rt_mem_free(o->e);
  rt_mem_free(o->row);
  rt_mem_free(o->overlaps);
  rt_mem_free(o->parts);
}

static inline size_t lane_lo(const opnd *o, uint32_t l) { return o->off[l]; }
static inline size_t lane_n(const opnd *o, uint32_t l) { return o->off[l + 1] - o->off[l]; }

/* ---- all-disjoint multi-way sweep ------------------------------------------------ */

/* Where an iterator stands: looking for the next partition, inside a
 * partition's multi-way sweep (positions p[]), or serving a narrowed
 * partition's regions (cur through perm, from pos). */
enum { AT_NEXT, AT_SWEEP, AT_SERVE, AT_STREAM, AT_END };

struct rt_isect {
  ctx c;
  rt_lanes lanes;
  int at;
  uint32_t q;              /* next partition of ops[jmin] to look at */
  uint32_t qend;           /* ... and the end of its partitions (a slice's) */
  int jmin;
  bool shared;             /* a slice: c.ops are its base's (rt_isect_slice) */
  size_t *p, *hi;          /* k each: sweep positions and lane ends */
  size_t pos;              /* AT_SERVE: next region of cur */
  rt_isweep *sw;           /* AT_STREAM: the partition's streaming sweep */
  rt_isect_stats dummy;
};

static inline void put_rows2(rt_isect_out *out, const opnd *ops, size_t p0, size_t p1) {
  out->rows[0][out->n] = ops[0].row[p0];
  out->rows[1][out->n] = ops[1].row[p1];
}

/* Every operand's lane is disjoint, so each instant is held by at most one
 * row per operand: at each step the current rows either meet in
 * [max start, min end) or not, and the row ending first can meet nothing
 * later (every other operand's later rows start at or after its current
 * row's end, which is >= this end). Regions come out in start order.
 * Runs from it->p until the lane ends (it->at = AT_NEXT) or out holds
 * `limit` regions; returns 0 on out of memory. */
static int sweep_disjoint(rt_isect *it, size_t limit) {
  ctx *c = &it->c;
  int k = c->k;
  size_t *p = it->p;
  const size_t *hi = it->hi;
  rt_isect_out *out = c->out;
  const opnd *ops = c->ops;
  if (k == 2) {
    /* The common case, with both cursors in registers. */
    const uint64_t *s0 = ops[0].s, *e0 = ops[0].e, *s1 = ops[1].s, *e1 = ops[1].e;
    size_t p0 = p[0], p1 = p[1], h0 = hi[0], h1 = hi[1];
    while (out->n < limit) {
      uint64_t S = s0[p0] > s1[p1] ? s0[p0] : s1[p1];
      uint64_t a = e0[p0], b = e1[p1], E = a < b ? a : b;
      if (S < E) {
        if (out->n == out->cap && !rt_isect_reserve(out, out->n + 1)) return oom(c);
        put_region(out, S, E);
        put_rows2(out, ops, p0, p1);
        out->n++;
      }
      p0 += a == E;
      p1 += b == E;
      if (p0 == h0 || p1 == h1) {
        it->at = AT_NEXT;
        break;
      }
    }
    p[0] = p0;
    p[1] = p1;
    return 1;
  }
  while (out->n < limit) {
    uint64_t S = 0, E = UINT64_MAX;
    for (int j = 0; j < k; j++) {
      if (ops[j].s[p[j]] > S) S = ops[j].s[p[j]];
      if (ops[j].e[p[j]] < E) E = ops[j].e[p[j]];
    }
    if (S < E) {
      if (out->n == out->cap && !rt_isect_reserve(out, out->n + 1)) return oom(c);
      put_region(out, S, E);
      for (int j = 0; j < k; j++) out->rows[j][out->n] = ops[j].row[p[j]];
      out->n++;
    }
    bool ended = false;
    for (int j = 0; j < k; j++)
      if (ops[j].e[p[j]] == E && ++p[j] == hi[j]) ended = true;
    if (ended) {
      it->at = AT_NEXT;
      break;
    }
  }
  return 1;
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
  bool capped;             /* gave up: more regions than c->narrow_cap */
} step;

/* Appends the region of candidate ci and item x of the new operand. */
static bool emit(step *st, size_t ci, size_t x) {
  cands *n = st->nxt;
  int k = st->c->k;
  if (n->n >= st->c->narrow_cap) st->capped = true;
  if (st->capped || (n->n == n->cap && !cands_reserve(n, k, n->n + 1))) {
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

/* Makes room for `more` regions after nxt's current ones and returns false
 * when out of memory or past the cap (st->capped); the sweep reserves
 * once per event, for every region the event can yield, so its inner
 * loops store without checks (and passes the cap by at most one event's
 * regions, no more than the operands' rows). */
static inline bool room(step *st, size_t more) {
  cands *n = st->nxt;
  if (n->n > st->c->narrow_cap) {
    st->capped = true;
    return false;
  }
  return n->n + more <= n->cap || cands_reserve(n, st->c->k, n->n + more);
}

/* Appends x to the active list act[0..n) and moves it towards the front
 * past items with a larger key[], at most ACT_ORDER places: an event
 * then yields its regions in row order (the output order among regions of
 * one start) as long as the list is short, and canonical_order has little
 * left to sort; a long list costs at most ACT_ORDER moves per item.
 * Returns the new length. */
#define ACT_ORDER 32
static inline size_t act_insert(uint32_t *act, size_t n, uint32_t x, const uint32_t *key) {
  size_t p = n, lim = n > ACT_ORDER ? n - ACT_ORDER : 0;
  uint32_t kx = key[x];
  for (; p > lim && key[act[p - 1]] > kx; p--) act[p] = act[p - 1];
  act[p] = x;
  return n + 1;
}

/* Merge by start, candidates first on ties. When an item starts at t, it
 * meets exactly the active items of the other side still ending after t,
 * and t is the region's start, so regions come out in start order (only
 * runs of equal starts may need reordering by rows afterwards). Each
 * active item scanned either yields a region or is dropped: linear in
 * candidates + items + regions. The order of an active list does not
 * matter for which regions come out, only for their order: act_insert
 * keeps it close to row order. Inlined with ninc = 1 for two operands,
 * so that case copies one row array through pointers held in registers. */
static inline __attribute__((always_inline)) bool sweep_body(step *st, size_t nb, int ninc) {
  ctx *c = st->c;
  const cands *cu = st->cur;
  size_t ncu = cu->n;
  /* An active list never holds more than its side has items. */
  if (!rt_iv_grow((void **)&c->act_a, &c->capa, ncu + 1, sizeof *c->act_a) ||
      !rt_iv_grow((void **)&c->act_b, &c->capb, nb + 1, sizeof *c->act_b))
    return false;
  uint32_t *restrict act_a = c->act_a, *restrict act_b = c->act_b;
  const uint64_t *cs = cu->s, *ce = cu->e, *bs = st->bs, *be = st->be;
  const uint32_t *brow = st->brow;
  int jb = st->jb;
  const int *inc = st->inc;
  const uint32_t *crow0 = cu->r[inc[0]];
  int amin = inc[0];
  for (int j = 1; j < ninc; j++) amin = inc[j] < amin ? inc[j] : amin;
  const uint32_t *akey = cu->r[amin];
  size_t i = 0, b = 0, na = 0, nbact = 0;
  while (i < ncu || b < nb) {
    if (i >= ncu && na == 0) break;
    if (b >= nb && nbact == 0) break;
    if (i < ncu && (b >= nb || cs[i] <= bs[b])) {
      uint64_t t = cs[i], ei = ce[i];
      if (!room(st, nbact)) return false;
      cands *nx = st->nxt;
      uint64_t *restrict ns = nx->s, *restrict ne = nx->e;
      uint32_t *restrict nrb = nx->r[jb], *restrict nr0 = nx->r[inc[0]];
      uint32_t r0 = crow0[i];
      size_t o = nx->n, w = 0;
      for (size_t q = 0; q < nbact; q++) {
        uint32_t x = act_b[q];
        uint64_t ex = be[x];
        if (ex > t) {
          act_b[w++] = x;
          ns[o] = t;
          ne[o] = ei < ex ? ei : ex;
          nrb[o] = brow[x];
          nr0[o] = r0;
          for (int j = 1; j < ninc; j++) nx->r[inc[j]][o] = cu->r[inc[j]][i];
          o++;
        }
      }
      nx->n = o;
      nbact = w;
      na = act_insert(act_a, na, (uint32_t)i, akey);
      i++;
    } else {
      uint64_t t = bs[b], eb = be[b];
      uint32_t rb = brow[b];
      if (!room(st, na)) return false;
      cands *nx = st->nxt;
      uint64_t *restrict ns = nx->s, *restrict ne = nx->e;
      uint32_t *restrict nrb = nx->r[jb], *restrict nr0 = nx->r[inc[0]];
      size_t o = nx->n, w = 0;
      for (size_t q = 0; q < na; q++) {
        uint32_t ci = act_a[q];
        uint64_t ec = ce[ci];
        if (ec > t) {
          act_a[w++] = ci;
          ns[o] = t;
          ne[o] = ec < eb ? ec : eb;
          nrb[o] = rb;
          nr0[o] = crow0[ci];
          for (int j = 1; j < ninc; j++) nx->r[inc[j]][o] = cu->r[inc[j]][ci];
          o++;
        }
      }
      nx->n = o;
      na = w;
      nbact = act_insert(act_b, nbact, (uint32_t)b, brow);
      b++;
    }
  }
  return true;
}

static bool narrow_sweep(step *st, size_t nb) {
  return st->ninc == 1 ? sweep_body(st, nb, 1) : sweep_body(st, nb, st->ninc);
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

/* ---- ordering regions ------------------------------------------------------------- */

#define RADIX_BITS 11
#define RADIX_SIZE (1u << RADIX_BITS)
#define RADIX_MAXPASS ((64 + RADIX_BITS - 1) / RADIX_BITS)

/* c->perm = the indexes 0..n-1 stably sorted by key[]: an LSD radix sort
 * of (key - min, index) pairs, 11 bits a pass, only over the bits in
 * which keys differ (timestamps of one partition share their high bits,
 * so a few passes) and skipping a pass whose digit is the same
 * everywhere. One counting pass fills every digit's histogram. */
static bool perm_by_key(ctx *c, const uint64_t *key, size_t n) {
  if (!rt_iv_grow((void **)&c->perm, &c->permcap, n + 1, sizeof *c->perm)) return false;
  uint64_t lo = UINT64_MAX, hi = 0;
  for (size_t i = 0; i < n; i++) {
    lo = key[i] < lo ? key[i] : lo;
    hi = key[i] > hi ? key[i] : hi;
  }
  int passes = 0;
  for (uint64_t r = n ? hi - lo : 0; r; r >>= RADIX_BITS) passes++;
  uint32_t *ia = c->perm;
  if (passes == 0) {
    for (size_t i = 0; i < n; i++) ia[i] = (uint32_t)i;
    return true;
  }
  if (!rt_iv_grow((void **)&c->ka, &c->kacap, n + 1, sizeof *c->ka) ||
      !rt_iv_grow((void **)&c->kb, &c->kbcap, n + 1, sizeof *c->kb) ||
      !rt_iv_grow((void **)&c->ib, &c->ibcap, n + 1, sizeof *c->ib))
    return false;
  uint32_t(*hist)[RADIX_SIZE] = rt_mem_calloc((size_t)passes, sizeof *hist);
  if (!hist) return false;
  uint64_t *ka = c->ka, *kb = c->kb;
  uint32_t *ib = c->ib;
  for (size_t i = 0; i < n; i++) {
    uint64_t v = key[i] - lo;
    ka[i] = v;
    ia[i] = (uint32_t)i;
    for (int d = 0; d < passes; d++) hist[d][(v >> (d * RADIX_BITS)) & (RADIX_SIZE - 1)]++;
  }
  for (int d = 0; d < passes; d++) {
    uint32_t *h = hist[d];
    uint64_t first = (ka[0] >> (d * RADIX_BITS)) & (RADIX_SIZE - 1);
    if (h[first] == n) continue;   /* the same digit everywhere */
    uint32_t sum = 0;
    for (uint32_t q = 0; q < RADIX_SIZE; q++) {
      uint32_t x = h[q];
      h[q] = sum;
      sum += x;
    }
    bool last = d == passes - 1;
    for (size_t i = 0; i < n; i++) {
      uint64_t v = ka[i];
      uint32_t p = h[(v >> (d * RADIX_BITS)) & (RADIX_SIZE - 1)]++;
      if (!last) kb[p] = v;   /* the last pass's keys are not read again */
      ib[p] = ia[i];
    }
    uint64_t *tk = ka;
    ka = kb;
    kb = tk;
    uint32_t *ti = ia;
    ia = ib;
    ib = ti;
  }
  rt_mem_free(hist);
  if (ia != c->perm) memcpy(c->perm, ia, n * sizeof *ia);
  return true;
}

/* Region a's rows come after region b's (operand 0 first, then 1, …). */
static inline bool rows_after(const cands *cu, int k, uint32_t a, uint32_t b) {
  for (int j = 0; j < k; j++)
    if (cu->r[j][a] != cu->r[j][b]) return cu->r[j][a] > cu->r[j][b];
  return false;
}

/* Sorts p[0..m) by rows: insertion sort for the short runs of equal
 * starts that are usual (a nest of intervals all meeting one new row),
 * a merge sort (scratch tmp of m) for long ones. Stable. */
static void sort_by_rows(const cands *cu, int k, uint32_t *p, size_t m, uint32_t *tmp) {
  enum { SHORT = 24 };
  for (size_t lo = 0; lo < m; lo += SHORT) {
    size_t hi = lo + SHORT < m ? lo + SHORT : m;
    for (size_t a = lo + 1; a < hi; a++) {
      uint32_t x = p[a];
      size_t j = a;
      for (; j > lo && rows_after(cu, k, p[j - 1], x); j--) p[j] = p[j - 1];
      p[j] = x;
    }
  }
  uint32_t *src = p, *dst = tmp;
  for (size_t w = SHORT; w < m; w *= 2) {
    for (size_t lo = 0; lo < m; lo += 2 * w) {
      size_t mid = lo + w < m ? lo + w : m, hi = lo + 2 * w < m ? lo + 2 * w : m;
      size_t a = lo, b = mid, o = lo;
      while (a < mid && b < hi) dst[o++] = rows_after(cu, k, src[a], src[b]) ? src[b++] : src[a++];
      while (a < mid) dst[o++] = src[a++];
      while (b < hi) dst[o++] = src[b++];
    }
    uint32_t *x = src;
    src = dst;
    dst = x;
  }
  if (src != p) memcpy(p, src, m * sizeof *p);
}

/* Sorts the regions [a, a+m) of cur, which share their start, by rows
 * in place. Two operands: insertion sort on (row 0, row 1) packed in a
 * word for the short runs that are usual (the rows of a nest of
 * intervals all met by one new row); otherwise the run's indexes are
 * sorted (scratch c->ib, 2m) and the run's ends and rows permuted
 * through scratch. */
static bool sort_run(ctx *c, size_t a, size_t m) {
  cands *cu = c->cur;
  int k = c->k;
  if (k == 2 && m <= 32) {
    uint64_t *e = cu->e + a;
    uint32_t *r0 = cu->r[0] + a, *r1 = cu->r[1] + a;
    for (size_t i = 1; i < m; i++) {
      uint64_t x = (uint64_t)r0[i] << 32 | r1[i], xe = e[i];
      size_t j = i;
      for (; j > 0 && ((uint64_t)r0[j - 1] << 32 | r1[j - 1]) > x; j--) {
        r0[j] = r0[j - 1];
        r1[j] = r1[j - 1];
        e[j] = e[j - 1];
      }
      r0[j] = (uint32_t)(x >> 32);
      r1[j] = (uint32_t)x;
      e[j] = xe;
    }
    return true;
  }
  if (!rt_iv_grow((void **)&c->ib, &c->ibcap, 2 * m + 1, sizeof *c->ib) ||
      !rt_iv_grow((void **)&c->ka, &c->kacap, m + 1, sizeof *c->ka))
    return false;
  uint32_t *g = c->ib, *tmp = c->ib + m;
  for (size_t i = 0; i < m; i++) g[i] = (uint32_t)(a + i);
  sort_by_rows(cu, k, g, m, tmp);
  for (size_t i = 0; i < m; i++) c->ka[i] = cu->e[g[i]];
  memcpy(cu->e + a, c->ka, m * sizeof *c->ka);
  for (int j = 0; j < k; j++) {
    for (size_t i = 0; i < m; i++) tmp[i] = cu->r[j][g[i]];
    memcpy(cu->r[j] + a, tmp, m * sizeof *tmp);
  }
  return true;
}

/* Puts cur in the output order: by start, then by the rows of operand 0,
 * 1, … Regions of a sweep already come by start, and often in full
 * order: one scan proves it. When they come by start, each run of equal
 * starts that is out of row order is sorted in place; either way cur is
 * then served as it stands (c->ident). Otherwise (binary search and tree
 * steps yield regions per candidate) c->perm holds the order: a radix
 * sort by start, then each run of equal starts sorted by rows. */
/* The first i >= from (from >= 1) where regions i-1, i of cur are out of
 * output order, or n. */
static size_t out_of_order(const cands *cu, int k, size_t from) {
  size_t n = cu->n, i = from;
  const uint64_t *s = cu->s;
  if (k == 2) {
    /* (start, row 0, row 1) compared as two words, without branches
     * until the first pair out of order */
    const uint32_t *r0 = cu->r[0], *r1 = cu->r[1];
    for (; i < n; i++) {
      uint64_t pa = (uint64_t)r0[i - 1] << 32 | r1[i - 1], pb = (uint64_t)r0[i] << 32 | r1[i];
      if ((s[i - 1] > s[i]) | ((s[i - 1] == s[i]) & (pa > pb))) break;
    }
    return i;
  }
  for (; i < n; i++) {
    if (s[i - 1] < s[i]) continue;
    if (s[i - 1] > s[i] || rows_after(cu, k, (uint32_t)i - 1, (uint32_t)i)) break;
  }
  return i;
}

static bool canonical_order(ctx *c) {
  const cands *cu = c->cur;
  int k = c->k;
  size_t n = cu->n;
  const uint64_t *s = cu->s;
  size_t i = out_of_order(cu, k, 1);
  c->ident = true;
  if (i >= n) return true;
  bool by_start = true;
  for (size_t q = i; q < n && by_start; q++) by_start = s[q - 1] <= s[q];
  if (by_start) {
    /* Sort the run of equal starts holding each pair out of order, then
     * look on after it. */
    while (i < n) {
      size_t a = i - 1, b = i + 1;
      while (a > 0 && s[a - 1] == s[a]) a--;
      while (b < n && s[b] == s[a]) b++;
      if (!sort_run(c, a, b - a)) return false;
      i = b + 1 < n ? out_of_order(cu, k, b + 1) : n;
    }
    return true;
  }
  c->ident = false;
  if (!perm_by_key(c, s, n)) return false;
  if (!rt_iv_grow((void **)&c->ib, &c->ibcap, n + 1, sizeof *c->ib)) return false;
  uint32_t *p = c->perm;
  for (size_t a = 0; a < n;) {
    uint64_t sa = s[p[a]];
    size_t b = a + 1;
    bool bad = false;
    for (; b < n && s[p[b]] == sa; b++) bad |= rows_after(cu, k, p[b - 1], p[b]);
    if (bad) sort_by_rows(cu, k, p + a, b - a, c->ib);
    a = b;
  }
  return true;
}

/* Reorders cur by start (into nxt, then swapped back into cur). */
static bool sort_cands_by_start(ctx *c, const int *inc, int ninc) {
  cands *cu = c->cur, *nx = c->nxt;
  if (!perm_by_key(c, cu->s, cu->n)) return false;
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

/* order[] = the operands by their interval count in lane l (insertion
 * sort: k is small; stable), the order narrowing adds them in. */
static void by_count(const ctx *c, uint32_t l, int *order) {
  int k = c->k;
  for (int j = 0; j < k; j++) order[j] = j;
  for (int a = 1; a < k; a++) {
    int x = order[a], b = a;
    for (; b > 0 && lane_n(&c->ops[order[b - 1]], l) > lane_n(&c->ops[x], l); b--)
      order[b] = order[b - 1];
    order[b] = x;
  }
}

/* Whether ncand candidates search an operand of nb items one by one
 * (binary search or tree) rather than sweep it: per-candidate searches
 * pay about log2(nb) each, a sweep pays nb. */
static bool few_against(size_t ncand, size_t nb) {
  size_t lg = 1;
  while (((size_t)1 << lg) < nb) lg++;
  return ncand * (lg + 1) * 2 < nb;
}

/* Narrows partition l into cur. Returns 1, 0 on error, -1 when a step
 * would hold more than c->narrow_cap regions (the partition then
 * streams instead). */
static int narrow(ctx *c, uint32_t l) {
  int k = c->k;
  int order[k];
  by_count(c, l, order);
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
    bool few = few_against(c->cur->n, nb);
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
    if (!ok) return st.capped ? -1 : oom(c);
    cands *x = c->cur;
    c->cur = c->nxt;
    c->nxt = x;
  }
  /* The iterator serves cur in place or through perm. */
  return canonical_order(c) ? 1 : oom(c);
}

/* Serves narrowed regions cur[perm[pos..]] (cur[pos..] when c->ident)
 * until out holds `limit`. */
static int serve_narrowed(rt_isect *it, size_t limit) {
  ctx *c = &it->c;
  const cands *cu = c->cur;
  rt_isect_out *out = c->out;
  size_t room = limit - out->n, left = cu->n - it->pos;
  size_t m = left < room ? left : room;
  if (!rt_isect_reserve(out, out->n + m)) return oom(c);
  size_t o = out->n, from = it->pos;
  int64_t *ts = out->ts + o, *dur = out->dur + o;
  if (c->ident) {
    const uint64_t *s = cu->s + from, *e = cu->e + from;
    for (size_t i = 0; i < m; i++) {
      ts[i] = (int64_t)(s[i] >> 1);
      dur[i] = (e[i] & 1) ? 0 : (int64_t)((e[i] - s[i]) >> 1);
    }
    for (int j = 0; j < c->k; j++) memcpy(out->rows[j] + o, cu->r[j] + from, m * sizeof(uint32_t));
  } else {
    const uint32_t *perm = c->perm + from;
    for (size_t i = 0; i < m; i++) {
      uint64_t s = cu->s[perm[i]], e = cu->e[perm[i]];
      ts[i] = (int64_t)(s >> 1);
      dur[i] = (e & 1) ? 0 : (int64_t)((e - s) >> 1);
    }
    for (int j = 0; j < c->k; j++) {
      uint32_t *dst = out->rows[j] + o;
      const uint32_t *src = cu->r[j];
      for (size_t i = 0; i < m; i++) dst[i] = src[perm[i]];
    }
  }
  out->n = o + m;
  it->pos += m;
  if (it->pos == cu->n) it->at = AT_NEXT;
  return 1;
}

/* ---- driver ------------------------------------------------------------------- */

void rt_isect_end(rt_isect *it) {
  if (!it) return;
  ctx *c = &it->c;
  if (!it->shared) {
    for (int j = 0; c->ops && j < c->k; j++) opnd_free(&c->ops[j]);
    rt_mem_free(c->ops);
  }
  cands_free(c->cur, c->k);
  cands_free(c->nxt, c->k);
  rt_mem_free(c->perm);
  rt_mem_free(c->ka);
  rt_mem_free(c->kb);
  rt_mem_free(c->ib);
  rt_mem_free(c->act_a);
  rt_mem_free(c->act_b);
  rt_mem_free(it->p);
  rt_mem_free(it->hi);
  rt_isweep_free(it->sw);
  rt_mem_free(it);
}

rt_isect *rt_isect_begin(int k, const rt_ivrel *ops, const char *stage, rt_isect_stats *stats,
                         rt_err *err) {
  return rt_isect_begin_par(k, ops, stage, stats, NULL, err);
}

rt_isect *rt_isect_begin_par(int k, const rt_ivrel *ops, const char *stage, rt_isect_stats *stats,
                             const rt_par *par, rt_err *err) {
  if (k < 2) {
    rt_errorf(err, -1, "%s: expected at least two relations to intersect", stage);
    return NULL;
  }
  rt_isect *it = rt_mem_calloc(1, sizeof *it);
  if (!it) {
    rt_errorf(err, -1, "%s: out of memory", stage);
    return NULL;
  }
  if (!stats) stats = &it->dummy;
  memset(stats, 0, sizeof *stats);
  ctx *c = &it->c;
  *c = (ctx){.k = k, .stage = stage, .err = err, .st = stats, .narrow_cap = RT_ISECT_NARROW_CAP,
             .par = rt_par_workers(par) > 1 ? par : NULL};
  c->ops = rt_mem_calloc((size_t)k, sizeof *c->ops);
  c->cur = cands_new(k);
  c->nxt = cands_new(k);
  it->p = rt_mem_calloc((size_t)k, sizeof *it->p);
  it->hi = rt_mem_calloc((size_t)k, sizeof *it->hi);
  rt_type types[RT_LANES_MAXKEYS];
  int nkeys = ops[0].nkeys;
  for (int q = 0; q < nkeys && q < RT_LANES_MAXKEYS; q++) types[q] = ops[0].keys[q].type;
  int ok = rt_lanes_init(&it->lanes, nkeys, types, stage, err);
  if (ok && (!c->ops || !c->cur || !c->nxt || !it->p || !it->hi)) ok = oom(c);
  uint32_t maxn = 0;
  for (int j = 0; j < k; j++)
    if (ops[j].n > maxn) maxn = ops[j].n;
  uint32_t *lane = ok ? rt_iv_big(((size_t)maxn + 1) * sizeof *lane) : NULL;
  if (ok && !lane) ok = oom(c);
  for (int j = 0; ok && j < k; j++) {
    ok = par ? rt_lanes_assign_par(&it->lanes, &ops[j], true, lane, par, stage, err)
             : rt_lanes_assign(&it->lanes, &ops[j], true, true, lane, stage, err);
    if (ok) ok = read_operand(c, &it->lanes, &ops[j], &c->ops[j], lane);
  }
  rt_mem_free(lane);
  rt_lanes_free(&it->lanes);
  if (!ok) {
    rt_isect_end(it);
    return NULL;
  }
  for (int j = 1; j < k; j++)
    if (c->ops[j].nparts < c->ops[it->jmin].nparts) it->jmin = j;
  it->qend = c->ops[it->jmin].nparts;
  it->at = AT_NEXT;
  return it;
}

uint32_t rt_isect_nparts(const rt_isect *it) { return it->qend - it->q; }

size_t rt_isect_part_rows(const rt_isect *it, uint32_t q) {
  const ctx *c = &it->c;
  uint32_t l = c->ops[it->jmin].parts[it->q + q];
  size_t rows = 0;
  for (int j = 0; j < c->k; j++)
    if (l < c->ops[j].nl) rows += lane_n(&c->ops[j], l);
  return rows;
}

bool rt_isect_part_disjoint(const rt_isect *it, uint32_t q) {
  const ctx *c = &it->c;
  uint32_t l = c->ops[it->jmin].parts[it->q + q];
  for (int j = 0; j < c->k; j++)
    if (l < c->ops[j].nl && c->ops[j].overlaps[l]) return false;
  return true;
}

/* A slice is an iterator of its own (scratch, sweep, position, stats,
 * error) over the base's read operands, which only the base frees: the
 * regions of partitions q0..q1-1 are what the base would serve for them,
 * in the same order, since each partition's work depends only on the
 * operands. */
rt_isect *rt_isect_slice(const rt_isect *base, uint32_t q0, uint32_t q1, rt_isect_stats *stats,
                         rt_err *err) {
  const ctx *bc = &base->c;
  rt_isect *it = rt_mem_calloc(1, sizeof *it);
  if (!it) {
    rt_errorf(err, -1, "%s: out of memory", bc->stage);
    return NULL;
  }
  it->shared = true;
  if (!stats) stats = &it->dummy;
  memset(stats, 0, sizeof *stats);
  ctx *c = &it->c;
  *c = (ctx){.k = bc->k, .stage = bc->stage, .err = err, .st = stats, .ops = bc->ops,
             .narrow_cap = bc->narrow_cap};
  c->cur = cands_new(c->k);
  c->nxt = cands_new(c->k);
  it->p = rt_mem_calloc((size_t)c->k, sizeof *it->p);
  it->hi = rt_mem_calloc((size_t)c->k, sizeof *it->hi);
  if (!c->cur || !c->nxt || !it->p || !it->hi) {
    oom(c);
    rt_isect_end(it);
    return NULL;
  }
  it->jmin = base->jmin;
  it->q = base->q + q0;
  it->qend = base->q + q1;
  it->at = AT_NEXT;
  return it;
}

/* Sets up the streaming sweep over partition l. */
static int start_stream(rt_isect *it, uint32_t l) {
  ctx *c = &it->c;
  if (!it->sw && !(it->sw = rt_isweep_new(c->k))) return oom(c);
  rt_isweep_lane lanes[c->k];
  for (int j = 0; j < c->k; j++) {
    const opnd *o = &c->ops[j];
    size_t lo = lane_lo(o, l);
    lanes[j] = (rt_isweep_lane){.s = o->s + lo, .e = o->e + lo, .row = o->row + lo,
                                .n = lane_n(o, l), .overlaps = o->overlaps[l]};
  }
  return rt_isweep_start(it->sw, lanes) ? 1 : oom(c);
}

void rt_isect_set_narrow_cap(rt_isect *it, size_t cap) { it->c.narrow_cap = cap; }

/* Moves to the next partition present in every operand and sets up its
 * sweep, or narrows it whole; AT_END when none is left. */
static int next_partition(rt_isect *it) {
  ctx *c = &it->c;
  const opnd *m = &c->ops[it->jmin];
  while (it->q < it->qend) {
    uint32_t l = m->parts[it->q++];
    bool everywhere = true, disjoint = true;
    for (int j = 0; j < c->k && everywhere; j++) {
      const opnd *o = &c->ops[j];
      everywhere = l < o->nl && lane_n(o, l) > 0;
      if (everywhere && o->overlaps[l]) disjoint = false;
    }
    if (!everywhere) continue;
    c->st->partitions++;
    if (disjoint) {
      c->st->part_disjoint++;
      for (int j = 0; j < c->k; j++) {
        it->p[j] = lane_lo(&c->ops[j], l);
        it->hi[j] = it->p[j] + lane_n(&c->ops[j], l);
      }
      it->at = AT_SWEEP;
      return 1;
    }
    /* Two operands that a narrowing would sweep: the streaming sweep
     * does the same work without holding the regions. Otherwise narrow,
     * and stream when the regions pass the cap. */
    size_t na = lane_n(&c->ops[0], l), nb = lane_n(&c->ops[1], l);
    int r = -1;
    if (c->k > 2 || few_against(na < nb ? na : nb, na < nb ? nb : na)) {
      r = narrow(c, l);
      if (r == 0) return 0;
      if (r < 0) c->st->part_capped++;
    }
    if (r < 0) {
      if (!start_stream(it, l)) return 0;
      c->st->part_stream++;
      it->at = AT_STREAM;
      return 1;
    }
    c->st->part_narrow++;
    if (c->cur->n == 0) continue;
    it->pos = 0;
    it->at = AT_SERVE;
    return 1;
  }
  it->at = AT_END;
  return 1;
}

/* Serves the streaming sweep of the current partition until out holds
 * `limit` regions or the partition ends. */
static int serve_stream(rt_isect *it, size_t limit) {
  int r = rt_isweep_step(it->sw, it->c.out, limit);
  if (r == RT_ISWEEP_OOM) return oom(&it->c);
  if (r == RT_ISWEEP_DONE) it->at = AT_NEXT;
  rt_isweep_counts(it->sw, &it->c.st->stream_events, &it->c.st->stream_skips);
  return 1;
}

int64_t rt_isect_next(rt_isect *it, rt_isect_out *out, size_t max) {
  ctx *c = &it->c;
  if (!out->rows) {
    out->k = c->k;
    out->rows = rt_mem_calloc((size_t)c->k, sizeof *out->rows);
    if (!out->rows) return oom(c), -1;
  }
  c->out = out;
  size_t n0 = out->n, limit = max > SIZE_MAX - n0 ? SIZE_MAX : n0 + max;
  /* One reservation covers a batch-sized slice (the sweep grows past it
   * only for large slices). */
  if (!rt_isect_reserve(out, n0 + (max < 65536 ? max : 65536))) return oom(c), -1;
  while (out->n < limit && it->at != AT_END) {
    int ok = it->at == AT_NEXT    ? next_partition(it)
             : it->at == AT_SWEEP ? sweep_disjoint(it, limit)
             : it->at == AT_STREAM ? serve_stream(it, limit)
                                  : serve_narrowed(it, limit);
    if (!ok) return -1;
  }
  c->st->regions += out->n - n0;
  return (int64_t)(out->n - n0);
}

int rt_isect_run(int k, const rt_ivrel *ops, const char *stage, rt_isect_out *out,
                 rt_isect_stats *stats, rt_err *err) {
  memset(out, 0, sizeof *out);
  out->k = k > 0 ? k : 0;
  rt_isect *it = rt_isect_begin(k, ops, stage, stats, err);
  if (!it) return 0;
  /* An all-disjoint partition yields at most as many regions as it has
   * rows (each sweep step moves past a row), so this reservation is
   * usually final; untouched pages cost nothing. */
  size_t rows = 0;
  for (int j = 0; j < k; j++) rows += it->c.ops[j].off[it->c.ops[j].nl];
  out->rows = rt_mem_calloc((size_t)k, sizeof *out->rows);
  int ok = out->rows && rt_isect_reserve(out, rows + 1) ? 1 : oom(&it->c);
  int64_t got = 1;
  while (ok && got > 0) {
    got = rt_isect_next(it, out, SIZE_MAX);
    if (got < 0) ok = 0;
  }
  rt_isect_end(it);
  return ok;
}
