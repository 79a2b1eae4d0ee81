/*
 * flatten.c — INTERVAL FLATTEN [PER …] AGGREGATE: per PER group, split the
 * intervals at every start and end and emit one segment per piece covered
 * by at least one interval, with aggregates over the covering rows.
 *
 * Rows are grouped by lane and ordered by ts; a scan detects input that is
 * already grouped (lanes are numbered in first-seen order, so grouped means
 * the lane sequence never decreases) and time-ordered, and then skips the
 * counting sort and the sorts. Each group is swept by time with a min-heap
 * of live ends: at each boundary the ending intervals leave, the starting
 * ones join, and the live set's aggregates describe [boundary, next
 * boundary). COUNT and SUM are running values (integer SUM in 128 bits, so
 * only a segment's total can overflow, never an order of additions); MIN
 * and MAX use lazy-deletion heaps (an ended row is marked dead and popped
 * when it reaches the top), O(log n) amortized per change.
 *
 * Points (dur = 0) never count toward positive segments, but a point's
 * instant is a boundary like any start or end: a positive segment that
 * contains it is split there. All points of one instant t make one
 * zero-length segment aggregating them and the positive intervals live at
 * t (started at or before t, ending after t), emitted before the positive
 * segment starting at t. Example: [0,10) and points 0, 5, 10 → point 0
 * (2 rows), [0,5) (1), point 5 (2), [5,10) (1), point 10 (1).
 *
 * Double SUM and AVG keep the live set's finite values in a long double
 * (on x86 its 15-bit exponent means no sum of doubles overflows, and its
 * 64-bit mantissa halves the drift of adding and subtracting) and count
 * the infinities apart, so an infinity that leaves the set leaves no NaN
 * behind; +inf with -inf live is NaN, which is NULL as everywhere.
 */
#include <math.h>
#include <stdlib.h>

#include "interval.h"
#include "runtime/budget.h"
#include "runtime/strfn.h"
#include "runtime/par.h"

#define INF UINT64_MAX

typedef struct heap {
  size_t n, cap;
  uint64_t *k;
  uint32_t *r;
} heap;

static bool heap_push(heap *h, uint64_t k, uint32_t r) {
  if (h->n == h->cap) {
    size_t c1 = h->cap, c2 = h->cap;
    if (!rt_iv_grow((void **)&h->k, &c1, h->n + 1, 8)) return false;
    if (!rt_iv_grow((void **)&h->r, &c2, h->n + 1, 4)) return false;
    h->cap = c1;
  }
  size_t i = h->n++;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (h->k[p] < k || (h->k[p] == k && h->r[p] < r)) break;
    h->k[i] = h->k[p];
    h->r[i] = h->r[p];
    i = p;
  }
  h->k[i] = k;
  h->r[i] = r;
  return true;
}

/* Entry a before entry b: by key, then by row (so ARG_MAX's tie goes to
 * the first row). */
static inline bool heap_less(const heap *h, size_t a, size_t b) {
  return h->k[a] < h->k[b] || (h->k[a] == h->k[b] && h->r[a] < h->r[b]);
}

static void heap_pop(heap *h) {
  uint64_t k = h->k[--h->n];
  uint32_t r = h->r[h->n];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= h->n) break;
    if (c + 1 < h->n && heap_less(h, c + 1, c)) c++;
    if (h->k[c] > k || (h->k[c] == k && h->r[c] > r)) break;
    h->k[i] = h->k[c];
    h->r[i] = h->r[c];
    i = c;
  }
  if (h->n) {
    h->k[i] = k;
    h->r[i] = r;
  }
}

static void heap_free(heap *h) {
  rt_mem_free(h->k);
  rt_mem_free(h->r);
}

/* Running state of one aggregate over the live set. */
typedef struct astate {
  int64_t nn;              /* live non-NULL inputs */
  __int128 isum;
  long double fsum;        /* the finite doubles */
  int64_t pinf, ninf;      /* live +inf and -inf inputs */
  heap ext;                /* MIN, ARG_MIN: key; MAX, ARG_MAX: ~key (ties: first row) */
} astate;

/* The group a sweeper is in: its rows, and the next positive interval
 * and point to take (group_sweep goes on from there). */
typedef struct fgroup {
  const uint64_t *s, *d;
  const uint32_t *row;
  size_t m, ip, jp;
  uint32_t rep;
} fgroup;

typedef struct fctx {
  const rt_ivrel *in;
  int naggs;
  const rt_flat_agg *aggs;
  const char *stage;
  rt_err *err;
  rt_flat_out *out;
  rt_flat_stats *st;
  astate *as;
  uint64_t *dead;          /* per input row: its interval has ended */
  heap ends;
  int64_t live;
  rt_strpool *strings;     /* GROUP_CONCAT interns its text here */
  uint32_t *gc;            /* GROUP_CONCAT scratch: the rows of a segment */
  size_t gccap;
  fgroup g;
} fctx;

static int oom(fctx *c) { return rt_errorf(c->err, -1, "%s: out of memory", c->stage); }

static inline bool agg_valid(const rt_flat_agg *a, uint32_t r) {
  return !a->valid || rt_bit(a->valid, r);
}
static inline int64_t agg_i(const rt_flat_agg *a, uint32_t r) { return ((const int64_t *)a->v)[r]; }
static inline double agg_f(const rt_flat_agg *a, uint32_t r) { return ((const double *)a->v)[r]; }

/* Adds (sign 1) or removes (-1) a double of the live set. */
static inline void fsum_add(astate *s, double d, int sign) {
  if (isinf(d)) {
    if (d > 0) s->pinf += sign;
    else s->ninf += sign;
  } else {
    s->fsum += sign > 0 ? (long double)d : -(long double)d;
  }
}

/* The sum as a double; false when it is NaN (+inf and -inf both live). */
static inline bool fsum_value(long double fsum, int64_t pinf, int64_t ninf, double *out) {
  if (pinf && ninf) return false;
  *out = pinf ? INFINITY : ninf ? -INFINITY : (double)fsum;
  return true;
}

/* MIN/MAX and ARG_MAX/ARG_MIN keep the heap of the live extreme. */
static inline bool has_heap(rt_aggkind k) {
  return k == RT_AGG_MIN || k == RT_AGG_MAX || k == RT_AGG_ARG_MIN || k == RT_AGG_ARG_MAX;
}
static inline bool is_max(rt_aggkind k) { return k == RT_AGG_MAX || k == RT_AGG_ARG_MAX; }

static uint64_t order_key(const rt_flat_agg *a, uint32_t r) {
  if (a->in == RT_F64) {
    double d = agg_f(a, r);
    if (d == 0) d = 0;   /* -0.0 and 0.0 tie */
    uint64_t b;
    memcpy(&b, &d, 8);
    return (b >> 63) ? ~b : b ^ (1ull << 63);
  }
  return rt_iv_u(agg_i(a, r));
}

/* ---- output ------------------------------------------------------------------ */

static bool out_reserve(rt_flat_out *o, size_t need) {
  if (need <= o->cap) return true;
  size_t cap = o->cap, c2;
  c2 = cap;
  if (!rt_iv_grow((void **)&o->ts, &c2, need, 8)) return false;
  c2 = cap;
  if (!rt_iv_grow((void **)&o->dur, &c2, need, 8)) return false;
  c2 = cap;
  if (!rt_iv_grow((void **)&o->rep, &c2, need, 4)) return false;
  for (int a = 0; a < o->naggs; a++) {
    c2 = cap;
    if (!rt_iv_grow(&o->val[a], &c2, need, 8)) return false;
    uint64_t *v = rt_mem_realloc(o->valid[a], RT_BITWORDS(c2) * 8);
    if (!v) return false;
    memset(v + RT_BITWORDS(cap), 0, (RT_BITWORDS(c2) - RT_BITWORDS(cap)) * 8);
    o->valid[a] = v;
  }
  o->cap = c2;
  return true;
}

void rt_flatten_free(rt_flat_out *o) {
  rt_mem_free(o->ts);
  rt_mem_free(o->dur);
  rt_mem_free(o->rep);
  for (int a = 0; a < o->naggs; a++) {
    if (o->val) rt_mem_free(o->val[a]);
    if (o->valid) rt_mem_free(o->valid[a]);
  }
  rt_mem_free(o->val);
  rt_mem_free(o->valid);
  rt_mem_free(o->type);
  memset(o, 0, sizeof *o);
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* GROUP_CONCAT over the live rows (the end heap holds exactly them) and
 * the points: their non-NULL texts in input order, each after its own
 * row's separator but the first (',' without one; a NULL separator joins
 * with nothing), as SQLite's group_concat. The id, -1 for NULL (no
 * non-NULL text), -2 on error. */
static int64_t concat(fctx *c, const rt_flat_agg *ag, const uint32_t *points, size_t np) {
  size_t need = c->ends.n + np, n = 0;
  if (need > c->gccap && !rt_iv_grow((void **)&c->gc, &c->gccap, need, 4)) return oom(c), -2;
  for (size_t i = 0; i < c->ends.n + np; i++) {
    uint32_t r = i < c->ends.n ? c->ends.r[i] : points[i - c->ends.n];
    if (agg_valid(ag, r)) c->gc[n++] = r;
  }
  if (n == 0) return -1;
  qsort(c->gc, n, sizeof *c->gc, cmp_u32);
  rt_strpool *p = c->strings;
  uint32_t comma = rt_str_intern(p, ",", 1);
  const int64_t *v = ag->v, *w = ag->v2;
  size_t len = 0, l;
  for (int pass = 0; pass < 2; pass++) {
    char *buf = NULL;
    if (pass) {
      if (!rt_str_fits(p, len)) break;
      if (!(buf = rt_strpool_scratch(p, len ? len : 1))) {
        rt_strpool_set_oom(p);
        break;
      }
    }
    size_t o = 0;
    for (size_t k = 0; k < n; k++) {
      uint32_t r = c->gc[k];
      if (k > 0 && !(w && ag->valid2 && !rt_bit(ag->valid2, r))) {
        const char *sep = rt_str_get(p, w ? (uint32_t)w[r] : comma, &l);
        if (pass) memcpy(buf + o, sep, l);
        o += l;
      }
      const char *t = rt_str_get(p, (uint32_t)v[r], &l);
      if (pass) memcpy(buf + o, t, l);
      o += l;
    }
    if (!pass) {
      len = o;
      continue;
    }
    uint32_t id = len ? rt_str_intern(p, buf, len) : 0;
    if (len && !id) break;
    return id;
  }
  rt_errorf(c->err, -1, "%s: %s", c->stage, rt_strpool_error(p));
  return -2;
}

/* Emits one segment. For a point segment, the rows of points[0..np) join
 * the live set's aggregates. */
static int emit(fctx *c, uint64_t ts, uint64_t dur, uint32_t rep, const uint32_t *points,
                size_t np) {
  rt_flat_out *o = c->out;
  if (o->n == o->cap && !out_reserve(o, o->n + 1)) return oom(c);
  size_t at = o->n;
  o->ts[at] = (int64_t)ts;
  o->dur[at] = (int64_t)dur;
  o->rep[at] = rep;
  for (int a = 0; a < c->naggs; a++) {
    const rt_flat_agg *ag = &c->aggs[a];
    astate *s = &c->as[a];
    int64_t nn = s->nn;
    __int128 isum = s->isum;
    long double fsum = s->fsum;
    int64_t pinf = s->pinf, ninf = s->ninf;
    bool has_ext = false;
    uint64_t ext = 0;
    uint32_t ext_row = 0;
    if (has_heap(ag->kind)) {
      while (s->ext.n && rt_bit(c->dead, s->ext.r[0])) heap_pop(&s->ext);
      if (s->ext.n) {
        has_ext = true;
        ext = s->ext.k[0];
        ext_row = s->ext.r[0];
      }
    }
    for (size_t q = 0; q < np; q++) {
      uint32_t r = points[q];
      if (ag->kind == RT_AGG_COUNT_STAR || !agg_valid(ag, r)) continue;
      nn++;
      if (ag->in == RT_F64) {
        double d = agg_f(ag, r);
        if (isinf(d)) pinf += d > 0, ninf += d < 0;
        else fsum += d;
      } else {
        isum += agg_i(ag, r);
      }
      if (has_heap(ag->kind)) {
        uint64_t k = order_key(ag, r);
        if (is_max(ag->kind)) k = ~k;
        if (!has_ext || k < ext || (k == ext && r < ext_row)) {
          has_ext = true;
          ext = k;
          ext_row = r;
        }
      }
    }
    int64_t *vi = o->val[a];
    double *vf = o->val[a];
    bool isnull = false;
    double f = 0;
    switch (ag->kind) {
    case RT_AGG_COUNT_STAR: vi[at] = c->live + (int64_t)np; break;
    case RT_AGG_COUNT: vi[at] = nn; break;
    case RT_AGG_SUM:
      if (nn == 0) isnull = true;
      else if (ag->in == RT_F64) isnull = !fsum_value(fsum, pinf, ninf, &vf[at]);
      else if (isum > INT64_MAX || isum < INT64_MIN)
        return rt_errorf(c->err, -1, "%s: integer overflow", c->stage);
      else vi[at] = (int64_t)isum;
      break;
    case RT_AGG_AVG:
      if (nn == 0) isnull = true;
      else if (ag->in != RT_F64) vf[at] = (double)isum / (double)nn;
      else if (!fsum_value(fsum, pinf, ninf, &f)) isnull = true;
      else vf[at] = f / (double)nn;
      break;
    case RT_AGG_ARG_MAX:
    case RT_AGG_ARG_MIN:
      /* the value of the row with the extreme ordering (NULL orderings
       * never joined the heap) */
      if (!has_ext || (ag->valid2 && !rt_bit(ag->valid2, ext_row))) isnull = true;
      else if (ag->in2 == RT_STR) ((uint32_t *)o->val[a])[at] = (uint32_t)((const int64_t *)ag->v2)[ext_row];
      else vi[at] = ((const int64_t *)ag->v2)[ext_row];   /* double bits too */
      break;
    case RT_AGG_GROUP_CONCAT: {
      int64_t got = concat(c, ag, points, np);
      if (got == -2) return 0;
      if (got < 0) isnull = true;
      else ((uint32_t *)o->val[a])[at] = (uint32_t)got;
      break;
    }
    case RT_AGG_MIN:
    case RT_AGG_MAX:
    case RT_AGG_ANY_VALUE:   /* not a FLATTEN aggregate: refused when it starts */
    case RT_AGG_COUNT_DISTINCT: case RT_AGG_MEDIAN: case RT_AGG_PERCENTILE: case RT_AGG_FIRST: case RT_AGG_LAST:
      if (!has_ext) isnull = true;
      else if (ag->in == RT_F64) vf[at] = agg_f(ag, ext_row);
      else vi[at] = agg_i(ag, ext_row);
      break;
    }
    if (!isnull) rt_bit_set(o->valid[a], (uint32_t)at);
  }
  o->n++;
  if (dur == 0) c->st->point_segments++;
  c->st->segments++;
  return 1;
}

static int join_live(fctx *c, uint32_t r, uint64_t end) {
  if (!heap_push(&c->ends, end, r)) return oom(c);
  c->live++;
  for (int a = 0; a < c->naggs; a++) {
    const rt_flat_agg *ag = &c->aggs[a];
    astate *s = &c->as[a];
    if (ag->kind == RT_AGG_COUNT_STAR || !agg_valid(ag, r)) continue;
    s->nn++;
    if (ag->in == RT_F64) fsum_add(s, agg_f(ag, r), 1);
    else s->isum += agg_i(ag, r);
    if (has_heap(ag->kind)) {
      uint64_t k = order_key(ag, r);
      if (!heap_push(&s->ext, is_max(ag->kind) ? ~k : k, r)) return oom(c);
    }
  }
  return 1;
}

static void leave_live(fctx *c, uint32_t r) {
  c->live--;
  rt_bit_set(c->dead, r);
  for (int a = 0; a < c->naggs; a++) {
    const rt_flat_agg *ag = &c->aggs[a];
    astate *s = &c->as[a];
    if (ag->kind == RT_AGG_COUNT_STAR || !agg_valid(ag, r)) continue;
    if (--s->nn == 0) {
      /* Exact zero once nothing is live: no drift carried forward. */
      s->isum = 0;
      s->fsum = 0;
      s->pinf = s->ninf = 0;
    } else if (ag->in == RT_F64) {
      fsum_add(s, agg_f(ag, r), -1);
    } else {
      s->isum -= agg_i(ag, r);
    }
  }
}

/* Starts sweeping one group: rows row[0..m) sorted by ts (start s[i]). */
static void group_begin(fctx *c, const uint64_t *s, const uint64_t *d, const uint32_t *row, size_t m,
                        uint32_t rep) {
  c->ends.n = 0;
  c->live = 0;
  for (int a = 0; a < c->naggs; a++) {
    c->as[a].nn = 0;
    c->as[a].isum = 0;
    c->as[a].fsum = 0;
    c->as[a].pinf = c->as[a].ninf = 0;
    c->as[a].ext.n = 0;
  }
  size_t ip = 0, jp = 0;   /* next positive interval, next point */
  while (ip < m && d[ip] == 0) ip++;
  while (jp < m && d[jp] != 0) jp++;
  c->g = (fgroup){.s = s, .d = d, .row = row, .m = m, .rep = rep, .ip = ip, .jp = jp};
}

/* Sweeps the group group_begin started, from where it stopped, until it
 * ends (1) or c->out holds at least `upto` segments (2; it stops only
 * between boundaries, where the live set is whole, so the next call goes
 * on as if it had not stopped); 0 on error (err set; the segments before
 * the failing one are in c->out). */
static int group_sweep(fctx *c, size_t upto) {
  const uint64_t *s = c->g.s, *d = c->g.d;
  const uint32_t *row = c->g.row;
  size_t m = c->g.m, ip = c->g.ip, jp = c->g.jp;
  uint32_t rep = c->g.rep;
  int rc = 1;
  for (;;) {
    if (c->out->n >= upto) {
      rc = 2;
      break;
    }
    uint64_t ns = ip < m ? s[ip] : INF;
    uint64_t np = jp < m ? s[jp] : INF;
    uint64_t ne = c->ends.n ? c->ends.k[0] : INF;
    uint64_t t = ns < np ? ns : np;
    if (ne < t) t = ne;
    if (t == INF) break;
    bool boundary = t == ns || t == ne || t == np;   /* a point's instant splits too */
    while (c->ends.n && c->ends.k[0] <= t) {
      leave_live(c, c->ends.r[0]);
      heap_pop(&c->ends);
    }
    while (rc && ip < m && s[ip] == t) {
      if (!join_live(c, row[ip], t + d[ip])) rc = 0;
      do ip++;
      while (ip < m && d[ip] == 0);
    }
    if (!rc) break;
    if (jp < m && s[jp] == t) {
      /* The points at t: row[jp .. ] skipping positives; they are
       * contiguous in time order, so collect them in place. */
      uint32_t buf[64];
      size_t nb = 0;
      uint32_t *pts = buf;
      size_t cap = 64;
      while (rc && jp < m && s[jp] == t) {
        if (d[jp] == 0) {
          if (nb == cap) {
            uint32_t *np2 = pts == buf ? rt_mem_alloc(cap * 2 * sizeof *np2)
                                       : rt_mem_realloc(pts, cap * 2 * sizeof *np2);
            if (!np2) {
              rc = oom(c);
              break;
            }
            if (pts == buf) memcpy(np2, buf, sizeof buf);
            pts = np2;
            cap *= 2;
          }
          pts[nb++] = row[jp];
        }
        jp++;
      }
      while (rc && jp < m && d[jp] != 0) jp++;
      if (rc) rc = emit(c, t, 0, rep, pts, nb);
      if (pts != buf) rt_mem_free(pts);
      if (!rc) break;
    }
    if (boundary && c->live > 0) {
      /* Up to the next start, end or point instant (jp is past t now). */
      uint64_t nxt = ip < m ? s[ip] : INF;
      if (c->ends.k[0] < nxt) nxt = c->ends.k[0];
      if (jp < m && s[jp] < nxt) nxt = s[jp];
      if (!emit(c, t, nxt - t, rep, NULL, 0)) {
        rc = 0;
        break;
      }
    }
  }
  c->g.ip = ip;
  c->g.jp = jp;
  return rc;
}

/* The output's aggregate arrays and their types (empty). */
static int out_init(rt_flat_out *out, int naggs, const rt_flat_agg *aggs, const char *stage, rt_err *err) {
  memset(out, 0, sizeof *out);
  out->naggs = naggs;
  out->type = rt_mem_calloc((size_t)naggs + 1, sizeof *out->type);
  out->val = rt_mem_calloc((size_t)naggs + 1, sizeof *out->val);
  out->valid = rt_mem_calloc((size_t)naggs + 1, sizeof *out->valid);
  if (!out->type || !out->val || !out->valid) return rt_errorf(err, -1, "%s: out of memory", stage);
  for (int a = 0; a < naggs; a++) {
    switch (aggs[a].kind) {
    case RT_AGG_COUNT_STAR: case RT_AGG_COUNT: out->type[a] = RT_I64; break;
    case RT_AGG_AVG: out->type[a] = RT_F64; break;
    case RT_AGG_SUM: case RT_AGG_MIN: case RT_AGG_MAX: out->type[a] = aggs[a].in; break;
    case RT_AGG_ARG_MAX: case RT_AGG_ARG_MIN: out->type[a] = aggs[a].in2; break;
    case RT_AGG_GROUP_CONCAT: out->type[a] = RT_STR; break;
    case RT_AGG_ANY_VALUE: case RT_AGG_COUNT_DISTINCT: case RT_AGG_MEDIAN: case RT_AGG_PERCENTILE: case RT_AGG_FIRST: case RT_AGG_LAST:
      return rt_errorf(err, -1, "%s: unsupported aggregate", stage);
    }
  }
  return 1;
}

/* The input grouped by lane and ordered by ts: lane l is s/d/row[off[l]
 * .. off[l+1]), rep[l] its first row; m rows in all. d holds the rows'
 * durations in that order, so the sweep reads them in a scan rather than
 * one cache miss per row through row (~40% of its time at 10M slices). */
typedef struct fprep {
  uint32_t nl;
  size_t m;
  uint64_t *s, *d;
  uint32_t *row, *off, *rep;
} fprep;

/* Sorts a lane's rows by (ts, row) and takes their durations again when
 * that moved any (the scatter wrote them in input order). */
static bool lane_sort(uint64_t *s, uint64_t *d, uint32_t *row, size_t n, const int64_t *dur) {
  size_t i = 1;
  while (i < n && (s[i - 1] < s[i] || (s[i - 1] == s[i] && row[i - 1] < row[i]))) i++;
  if (i >= n) return true;
  if (!rt_iv_sort(s, NULL, row, n)) return false;
  for (size_t k = 0; k < n; k++) d[k] = (uint64_t)dur[row[k]];
  return true;
}

static void prep_free(fprep *p) {
  rt_mem_free(p->s);
  rt_mem_free(p->d);
  rt_mem_free(p->row);
  rt_mem_free(p->off);
  rt_mem_free(p->rep);
  memset(p, 0, sizeof *p);
}

/* prep's pass over the rows on par's workers (the lanes are made the
 * same way already): the rows in chunks (rt_lanes_chunk), each counting
 * its rows per lane, noting each lane's first row and whether its rows
 * keep (lane, ts) order from the row before it; then each chunk's rows
 * scattered after the earlier chunks' rows of their lane, and the lanes
 * sorted one per piece; so every lane holds what one pass gives it. Only
 * for inputs without NULL bounds and with not many more lanes than rows
 * per chunk (the tables are chunks x lanes); a bad bound sends the input
 * to the one-thread pass, which names the first bad row. */
typedef struct ppar {
  const rt_ivrel *in;
  const uint32_t *lane;
  fprep *pr;
  uint32_t chunk, nch, nl;
  uint32_t *cnt;           /* nch x nl: rows, then the next slot */
  uint32_t *first;         /* nch x nl: the first row of the lane in the chunk */
  uint8_t *bad;            /* per chunk: a negative bound or an overflowing end */
  uint8_t *unsorted;       /* per chunk: a row out of (lane, ts) order */
  uint8_t *failed;         /* per lane: out of memory sorting it */
} ppar;

static void ppar_count(void *p, int64_t c) {
  ppar *x = p;
  const rt_ivrel *in = x->in;
  uint32_t lo = (uint32_t)c * x->chunk, hi = lo + x->chunk < in->n ? lo + x->chunk : in->n;
  uint32_t *cnt = x->cnt + (size_t)c * x->nl, *first = x->first + (size_t)c * x->nl;
  uint64_t bad = 0;
  bool unsorted = false;
  uint32_t prev_lane = lo ? x->lane[lo - 1] : 0;
  int64_t prev_ts = lo ? in->ts[lo - 1] : -1;
  for (uint32_t i = lo; i < hi; i++) {
    uint64_t t = (uint64_t)in->ts[i], d = (uint64_t)in->dur[i];
    bad |= t | d | (t + d);
    uint32_t l = x->lane[i];
    if (cnt[l]++ == 0) first[l] = i;
    unsorted |= l < prev_lane || (l == prev_lane && (int64_t)t < prev_ts);
    prev_lane = l;
    prev_ts = (int64_t)t;
  }
  x->bad[c] = (uint8_t)(bad >> 63);
  x->unsorted[c] = unsorted;
}

static void ppar_scatter(void *p, int64_t c) {
  ppar *x = p;
  uint32_t lo = (uint32_t)c * x->chunk, hi = lo + x->chunk < x->in->n ? lo + x->chunk : x->in->n;
  uint32_t *next = x->cnt + (size_t)c * x->nl;
  uint64_t *restrict s = x->pr->s, *restrict d = x->pr->d;
  uint32_t *restrict row = x->pr->row;
  const int64_t *ts = x->in->ts, *dur = x->in->dur;
  for (uint32_t i = lo; i < hi; i++) {
    uint32_t q = next[x->lane[i]]++;
    s[q] = (uint64_t)ts[i];
    d[q] = (uint64_t)dur[i];
    row[q] = i;
  }
}

static void ppar_sort(void *p, int64_t l) {
  ppar *x = p;
  const uint32_t *off = x->pr->off;
  if (!lane_sort(x->pr->s + off[l], x->pr->d + off[l], x->pr->row + off[l], off[l + 1] - off[l], x->in->dur))
    x->failed[l] = 1;
}

/* 1, 0 on out of memory (err set), -1 when one thread must do it. */
static int prep_par(const rt_ivrel *in, const rt_par *par, fprep *pr, const uint32_t *lane,
                    rt_flat_stats *stats, const char *stage, rt_err *err) {
  uint32_t n = in->n, chunk = rt_lanes_chunk(par, n), nl = pr->nl;
  if (chunk >= n || in->ts_valid || in->dur_valid) return -1;
  uint32_t nch = (n + chunk - 1) / chunk;
  if ((uint64_t)nch * nl > (uint64_t)chunk) return -1;
  ppar x = {.in = in, .lane = lane, .pr = pr, .chunk = chunk, .nch = nch, .nl = nl};
  x.cnt = rt_mem_calloc((size_t)nch * nl + 1, sizeof *x.cnt);
  x.first = rt_mem_alloc(((size_t)nch * nl + 1) * sizeof *x.first);
  x.bad = rt_mem_calloc(nch, 1);
  x.unsorted = rt_mem_calloc(nch, 1);
  x.failed = rt_mem_calloc((size_t)nl + 1, 1);
  int ok = x.cnt && x.first && x.bad && x.unsorted && x.failed ? 1 : rt_errorf(err, -1, "%s: out of memory", stage);
  if (ok) rt_par_for(par, nch, ppar_count, &x);
  bool presorted = true;
  for (uint32_t c = 0; ok && c < nch; c++) {
    if (x.bad[c]) ok = -1;
    presorted &= !x.unsorted[c];
  }
  if (ok == 1) {
    uint32_t *off = pr->off, *rep = pr->rep;
    /* each lane's first row is in its first chunk that has one; each
     * chunk's first slot per lane follows the earlier chunks' rows */
    for (uint32_t l = 0; l < nl; l++) {
      uint32_t k = 0;
      for (uint32_t c = 0; c < nch; c++) {
        uint32_t *cl = &x.cnt[(size_t)c * nl + l];
        if (*cl && !k) rep[l] = x.first[(size_t)c * nl + l];
        k += *cl;
      }
      off[l + 1] = off[l] + k;
      uint32_t at = off[l];
      for (uint32_t c = 0; c < nch; c++) {
        uint32_t *cl = &x.cnt[(size_t)c * nl + l];
        uint32_t k2 = *cl;
        *cl = at;
        at += k2;
      }
    }
    pr->m = n;
    stats->presorted = presorted;
    /* in (lane, ts) order already: the scatter is the identity */
    rt_par_for(par, nch, ppar_scatter, &x);
    if (!presorted) {
      rt_par_for(par, nl, ppar_sort, &x);
      for (uint32_t l = 0; ok == 1 && l < nl; l++)
        if (x.failed[l]) ok = rt_errorf(err, -1, "%s: out of memory", stage);
    }
  }
  rt_mem_free(x.cnt);
  rt_mem_free(x.first);
  rt_mem_free(x.bad);
  rt_mem_free(x.unsorted);
  rt_mem_free(x.failed);
  return ok;
}

static int prep(const rt_ivrel *in, const char *stage, const rt_par *par, fprep *pr,
                rt_flat_stats *stats, rt_err *err) {
  uint32_t n = in->n;
  memset(pr, 0, sizeof *pr);
  rt_type types[RT_LANES_MAXKEYS];
  for (int q = 0; q < in->nkeys && q < RT_LANES_MAXKEYS; q++) types[q] = in->keys[q].type;
  rt_lanes lanes;
  if (!rt_lanes_init(&lanes, in->nkeys, types, stage, err)) return 0;
  uint32_t *lane = rt_iv_big(((size_t)n + 1) * sizeof *lane);
  uint64_t *s = pr->s = rt_iv_big(((size_t)n + 1) * sizeof *s);
  uint64_t *d = pr->d = rt_iv_big(((size_t)n + 1) * sizeof *d);
  uint32_t *row = pr->row = rt_iv_big(((size_t)n + 1) * sizeof *row);
  uint32_t *off = NULL, *rep = NULL;
  int ok = lane && s && d && row ? 1 : rt_errorf(err, -1, "%s: out of memory", stage);
  if (ok) ok = par ? rt_lanes_assign_par(&lanes, in, true, lane, par, stage, err)
                   : rt_lanes_assign(&lanes, in, true, true, lane, stage, err);
  uint32_t nl = pr->nl = lanes.n;
  rt_lanes_free(&lanes);
  if (ok) {
    off = pr->off = rt_mem_calloc((size_t)nl + 2, sizeof *off);
    rep = pr->rep = rt_mem_alloc(((size_t)nl + 1) * sizeof *rep);
    if (!off || !rep) ok = rt_errorf(err, -1, "%s: out of memory", stage);
  }
  if (ok && par) {
    int pp = prep_par(in, par, pr, lane, stats, stage, err);
    if (pp >= 0) {
      rt_mem_free(lane);
      return pp;
    }
  }
  /* Validate, count per lane, and check for grouped + time-ordered. */
  bool presorted = true;
  uint32_t prev_lane = 0;
  int64_t prev_ts = -1;
  size_t m = 0;
  for (uint32_t i = 0; ok && i < n; i++) {
    if (!rt_ivrel_bounds_valid(in, i)) {
      stats->rows_null++;
      lane[i] = RT_NO_LANE;
      continue;
    }
    int64_t ts = in->ts[i], dur = in->dur[i];
    if (ts < 0 || dur < 0) ok = rt_iv_below_zero(in, i, stage, "", err);
    else if (ts > INT64_MAX - dur) ok = rt_errorf(err, -1, "%s: integer overflow", stage);
    if (!ok) break;
    uint32_t l = lane[i];
    if (off[l + 1]++ == 0) rep[l] = i;
    if (m > 0 && (l < prev_lane || (l == prev_lane && ts < prev_ts))) presorted = false;
    prev_lane = l;
    prev_ts = ts;
    m++;
  }
  pr->m = m;
  stats->presorted = presorted;
  if (ok) {
    for (uint32_t l = 0; l < nl; l++) off[l + 1] += off[l];
    if (presorted) {
      size_t p = 0;
      for (uint32_t i = 0; i < n; i++)
        if (lane[i] != RT_NO_LANE) {
          s[p] = (uint64_t)in->ts[i];
          d[p] = (uint64_t)in->dur[i];
          row[p++] = i;
        }
    } else {
      uint32_t *next = rt_mem_alloc(((size_t)nl + 1) * sizeof *next);
      if (!next) {
        ok = rt_errorf(err, -1, "%s: out of memory", stage);
      } else {
        memcpy(next, off, (size_t)nl * sizeof *next);
        for (uint32_t i = 0; i < n; i++) {
          if (lane[i] == RT_NO_LANE) continue;
          uint32_t p = next[lane[i]]++;
          s[p] = (uint64_t)in->ts[i];
          d[p] = (uint64_t)in->dur[i];
          row[p] = i;
        }
        rt_mem_free(next);
        for (uint32_t l = 0; ok && l < nl; l++)
          if (!lane_sort(s + off[l], d + off[l], row + off[l], off[l + 1] - off[l], in->dur))
            ok = rt_errorf(err, -1, "%s: out of memory", stage);
      }
    }
  }
  rt_mem_free(lane);
  return ok;
}

static void fctx_free(fctx *c);

/* A sweeper's state (one per worker: its live sets, its end heap and its
 * dead marks, which only rows of the groups it sweeps ever get). */
static int fctx_init(fctx *c, const rt_ivrel *in, int naggs, const rt_flat_agg *aggs,
                     rt_strpool *strings, const char *stage, rt_err *err) {
  *c = (fctx){.in = in, .naggs = naggs, .aggs = aggs, .stage = stage, .err = err, .strings = strings};
  c->as = rt_mem_calloc((size_t)naggs + 1, sizeof *c->as);
  c->dead = rt_mem_calloc(RT_BITWORDS(in->n) + 1, 8);
  if (c->as && c->dead) return 1;
  /* neither kept: the caller frees only a state that was made, and a
   * worker's next piece makes it again only while c->as is NULL */
  int r = oom(c);
  fctx_free(c);
  return r;
}

static void fctx_free(fctx *c) {
  rt_mem_free(c->dead);
  rt_mem_free(c->gc);
  heap_free(&c->ends);
  for (int a = 0; c->as && a < c->naggs; a++) heap_free(&c->as[a].ext);
  rt_mem_free(c->as);
  memset(c, 0, sizeof *c);
}

/* Checks the aggregates' inputs. */
static int check_aggs(int naggs, const rt_flat_agg *aggs, rt_strpool *strings, const char *stage,
                      rt_err *err) {
  for (int a = 0; a < naggs; a++) {
    rt_aggkind k = aggs[a].kind;
    if (k == RT_AGG_GROUP_CONCAT ? aggs[a].in != RT_STR || !strings
        : k != RT_AGG_COUNT_STAR && aggs[a].in != RT_I64 && aggs[a].in != RT_F64)
      return rt_errorf(err, -1, "%s: expected a number to aggregate", stage);
  }
  return 1;
}

/* ---- the sweep in pieces --------------------------------------------------- */

/* The input is grouped and ordered once (prep, on par's workers when
 * given), then the groups are swept in pieces, runs of consecutive groups
 * of about an equal share of the rows, each by one worker at a time, a
 * chunk of segments per rt_flatten_next; in piece order the pieces'
 * segments are one sweep's, and the earliest failing piece's error is the
 * one sweep's first. */
typedef struct fcursor {
  uint32_t l;              /* the next group to begin */
  bool in_group;           /* its worker's sweeper is inside group l - 1 */
} fcursor;

struct rt_flatten {
  const rt_ivrel *in;
  int naggs;
  const rt_flat_agg *aggs;
  rt_strpool *strings;     /* GROUP_CONCAT's (one worker then) */
  const char *stage;
  fprep pr;
  int64_t np;
  uint32_t *l0;            /* np + 1: the pieces' first groups */
  fcursor *cur;            /* per piece */
  rt_flat_stats *st;       /* per piece */
  int nw;
  fctx *w;                 /* per worker, made on its first chunk */
  rt_flat_stats stats;     /* prep's */
};

void rt_flatten_end(rt_flatten *f, rt_flat_stats *stats) {
  if (!f) return;
  if (stats) {
    *stats = f->stats;
    for (int64_t i = 0; f->st && i < f->np; i++) {
      stats->groups += f->st[i].groups;
      stats->segments += f->st[i].segments;
      stats->point_segments += f->st[i].point_segments;
    }
  }
  for (int i = 0; f->w && i < f->nw; i++) fctx_free(&f->w[i]);
  rt_mem_free(f->w);
  rt_mem_free(f->st);
  rt_mem_free(f->cur);
  rt_mem_free(f->l0);
  prep_free(&f->pr);
  rt_mem_free(f);
}

rt_flatten *rt_flatten_begin(const rt_ivrel *in, int naggs, const rt_flat_agg *aggs, rt_strpool *strings,
                             const char *stage, const struct rt_par *par, int workers, rt_err *err) {
  if (workers < 1) workers = 1;
  if (!check_aggs(naggs, aggs, strings, stage, err)) return NULL;
  rt_flat_out probe;
  int ok = out_init(&probe, naggs, aggs, stage, err);
  rt_flatten_free(&probe);
  if (!ok) return NULL;
  rt_flatten *f = rt_mem_calloc(1, sizeof *f);
  if (!f) {
    rt_errorf(err, -1, "%s: out of memory", stage);
    return NULL;
  }
  *f = (rt_flatten){.in = in, .naggs = naggs, .aggs = aggs, .strings = strings, .stage = stage, .nw = workers};
  if (!prep(in, stage, rt_par_workers(par) > 1 ? par : NULL, &f->pr, &f->stats, err)) {
    rt_flatten_end(f, NULL);
    return NULL;
  }
  /* one piece for one worker: its sweep is the whole output's. For
   * several, 16 per worker: the last piece is swept by one worker while
   * the others have nothing left to make (with 4 per worker that tail was
   * ~10% of a two-thread run at 10M slices); a piece done before an
   * earlier one holds its chunks until that one is, about a piece's
   * segments per worker, so smaller pieces also hold less. */
  const fprep *pr = &f->pr;
  size_t share = workers > 1 ? pr->m / (16 * (size_t)workers) + 1 : SIZE_MAX;
  f->l0 = rt_mem_alloc(((size_t)pr->nl + 2) * sizeof *f->l0);
  f->cur = rt_mem_calloc((size_t)pr->nl + 1, sizeof *f->cur);
  f->st = rt_mem_calloc((size_t)pr->nl + 1, sizeof *f->st);
  f->w = rt_mem_calloc((size_t)workers, sizeof *f->w);
  if (!f->l0 || !f->cur || !f->st || !f->w) {
    rt_errorf(err, -1, "%s: out of memory", stage);
    rt_flatten_end(f, NULL);
    return NULL;
  }
  for (uint32_t l = 0; l < pr->nl;) {
    f->cur[f->np].l = l;
    f->l0[f->np++] = l;
    for (size_t rows = 0; l < pr->nl && rows < share; l++) rows += pr->off[l + 1] - pr->off[l];
  }
  f->l0[f->np] = pr->nl;
  return f;
}

int64_t rt_flatten_npieces(const rt_flatten *f) { return f->np; }

uint64_t rt_flatten_piece_rows(const rt_flatten *f, int64_t i) {
  return f->pr.off[f->l0[i + 1]] - f->pr.off[f->l0[i]];
}

int rt_flatten_out_init(const rt_flatten *f, rt_flat_out *out, size_t cap, rt_err *err) {
  if (!out_init(out, f->naggs, f->aggs, f->stage, err)) return 0;
  if (cap && !out_reserve(out, cap)) return rt_errorf(err, -1, "%s: out of memory", f->stage);
  return 1;
}

void rt_flatten_out_drop(rt_flat_out *o, size_t k) {
  size_t keep = o->n - k, w = k / 64, nw = RT_BITWORDS(keep), all = RT_BITWORDS(o->n + 1);
  memmove(o->ts, o->ts + k, keep * sizeof *o->ts);
  memmove(o->dur, o->dur + k, keep * sizeof *o->dur);
  memmove(o->rep, o->rep + k, keep * sizeof *o->rep);
  /* the bits of a segment a failed emit left half made go too */
  if (all > RT_BITWORDS(o->cap)) all = RT_BITWORDS(o->cap);
  for (int a = 0; a < o->naggs; a++) {
    size_t sz = o->type[a] == RT_STR ? 4 : 8;
    memmove(o->val[a], (char *)o->val[a] + k * sz, keep * sz);
    if (keep) memmove(o->valid[a], o->valid[a] + w, (all - w) * 8);
    if (all > nw) memset(o->valid[a] + nw, 0, (all - nw) * 8);
  }
  o->n = keep;
}

int rt_flatten_next(rt_flatten *f, int worker, int64_t i, rt_flat_out *out, size_t upto, rt_err *err) {
  fctx *c = &f->w[worker];
  /* made on the worker's first chunk: a worker that makes none holds no
   * row marks */
  if (!c->as && !fctx_init(c, f->in, f->naggs, f->aggs, f->strings, f->stage, err)) return -1;
  fcursor *k = &f->cur[i];
  const fprep *pr = &f->pr;
  c->err = err;
  c->out = out;
  c->st = &f->st[i];
  for (;;) {
    if (!k->in_group) {
      for (; k->l < f->l0[i + 1] && pr->off[k->l + 1] == pr->off[k->l]; k->l++) {}
      if (k->l == f->l0[i + 1]) return 0;
      uint32_t l = k->l++;
      c->st->groups++;
      group_begin(c, pr->s + pr->off[l], pr->d + pr->off[l], pr->row + pr->off[l], pr->off[l + 1] - pr->off[l],
                  pr->rep[l]);
      k->in_group = true;
    }
    int r = group_sweep(c, upto);
    if (r == 0) return -1;
    if (r == 2) return 1;
    k->in_group = false;
  }
}

/* One sweep of one piece into out, reserved for the rows' most segments
 * first (at most 2 per row, points included; untouched pages cost
 * nothing). */
int rt_flatten_run(const rt_ivrel *in, int naggs, const rt_flat_agg *aggs, rt_strpool *strings,
                   const char *stage, rt_flat_out *out, rt_flat_stats *stats, rt_err *err) {
  rt_flat_stats dummy;
  if (!stats) stats = &dummy;
  memset(stats, 0, sizeof *stats);
  memset(out, 0, sizeof *out);
  rt_flatten *f = rt_flatten_begin(in, naggs, aggs, strings, stage, NULL, 1, err);
  if (!f) return 0;
  int ok = rt_flatten_out_init(f, out, 2 * (size_t)f->pr.m + 1, err);
  for (int64_t i = 0; ok && i < f->np; i++) ok = rt_flatten_next(f, 0, i, out, SIZE_MAX, err) == 0;
  rt_flatten_end(f, stats);
  return ok;
}
