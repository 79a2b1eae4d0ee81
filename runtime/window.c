/*
 * window.c — window functions over a WINDOW op's buffer (window.h).
 *
 * Per distinct window: one stable sort of the rows (rt_sort_perm: the
 * partition keys, then the order keys; ties keep input order), the
 * partition starts in that order (where a partition key changes between
 * neighbours, found by one typed pass per key), and — only when a call
 * needs them — each position's peer group. Then each call walks the partitions in
 * sorted order and writes its value at the row's input position, so the
 * buffer keeps the input's order for the segment that reads it.
 *
 * Frames: every bound (ROWS and GROUPS n PRECEDING … n FOLLOWING, RANGE
 * by the order key's value, found by binary search over the partition's
 * sorted keys) gives a start and an end that never move backwards as the
 * current row moves forwards within a partition, so an aggregate keeps a running state, adding the rows that
 * enter the frame and removing those that leave: a count and an exact
 * 128-bit sum for integers (SUM's overflow is the frame's sum leaving
 * int64), a plain double sum added in sorted order as SQLite 3.40 adds
 * (so a running frame gives SQLite's rounding), and for MIN / MAX a
 * monotonic deque of positions. One pass per call: O(rows), whatever the
 * frame's width.
 */
#include <stdlib.h>

#include "budget.h"
#include "window.h"

bool rt_win_uses_frame(rt_winfn fn) {
  switch (fn) {
  case RT_WIN_FIRST_VALUE: case RT_WIN_LAST_VALUE: case RT_WIN_NTH_VALUE: case RT_WIN_COUNT_STAR:
  case RT_WIN_COUNT: case RT_WIN_SUM: case RT_WIN_TOTAL: case RT_WIN_AVG: case RT_WIN_MIN:
  case RT_WIN_MAX:
    return true;
  case RT_WIN_ROW_NUMBER: case RT_WIN_RANK: case RT_WIN_DENSE_RANK: case RT_WIN_PERCENT_RANK:
  case RT_WIN_CUME_DIST: case RT_WIN_NTILE: case RT_WIN_LAG: case RT_WIN_LEAD: case RT_WIN__COUNT:
    break;
  }
  return false;
}

/* Whether the call needs the peer groups of its window. */
static bool needs_peers(const rt_wincall *c) {
  switch (c->fn) {
  case RT_WIN_RANK: case RT_WIN_DENSE_RANK: case RT_WIN_PERCENT_RANK: case RT_WIN_CUME_DIST:
    return true;
  default:
    return rt_win_uses_frame(c->fn) && c->frame.unit != RT_WU_ROWS &&
           !(c->frame.start == RT_WB_UNBOUNDED_PRECEDING && c->frame.end == RT_WB_UNBOUNDED_FOLLOWING);
  }
}

/* ---- values in the buffer ------------------------------------------------------ */

static inline bool valid_at(const rt_rowbuf *b, int c, uint32_t r) { return rt_bit(b->valid[c], r); }

/* The stored bits of a value: int64, a double's bits, a string id. */
static inline int64_t bits_at(const rt_rowbuf *b, int c, uint32_t r) {
  if (b->types[c] == RT_STR) return ((const uint32_t *)b->data[c])[r];
  int64_t v;
  memcpy(&v, (const char *)b->data[c] + (size_t)r * 8, 8);
  return v;
}

static inline int64_t i64_at(const rt_rowbuf *b, int c, uint32_t r) {
  return ((const int64_t *)b->data[c])[r];
}

static inline double f64_at(const rt_rowbuf *b, int c, uint32_t r) {
  return ((const double *)b->data[c])[r];
}

static inline void put_bits(rt_rowbuf *b, int c, uint32_t r, int64_t v) {
  if (b->types[c] == RT_STR) ((uint32_t *)b->data[c])[r] = (uint32_t)v;
  else memcpy((char *)b->data[c] + (size_t)r * 8, &v, 8);
  rt_bit_set(b->valid[c], r);
}

static inline void put_i64(rt_rowbuf *b, int c, uint32_t r, int64_t v) {
  ((int64_t *)b->data[c])[r] = v;
  rt_bit_set(b->valid[c], r);
}

static inline void put_f64(rt_rowbuf *b, int c, uint32_t r, double v) {
  ((double *)b->data[c])[r] = v;
  rt_bit_set(b->valid[c], r);
}

/* Copies column from's value at row rf (NULL stays NULL) into column to
 * at row rt. */
static inline void copy_val(rt_rowbuf *b, int from, uint32_t rf, int to, uint32_t rt) {
  if (valid_at(b, from, rf)) put_bits(b, to, rt, bits_at(b, from, rf));
}

/* Sets mark[k] for every sorted position k > 0 whose row differs from
 * the one before it in keys[from..to) (NULL equals NULL, -0.0 equals
 * 0.0): one typed loop per key, not a test per key per row. */
static void mark_changes(const rt_rowbuf *b, const rt_sortkey *keys, int from, int to,
                         const uint32_t *perm, size_t n, uint8_t *mark) {
  for (int kk = from; kk < to; kk++) {
    int c = keys[kk].col;
    const uint64_t *valid = b->valid[c];
    switch (b->types[c]) {
    case RT_F64: {
      const double *d = b->data[c];
      for (size_t k = 1; k < n; k++) {
        uint32_t x = perm[k - 1], y = perm[k];
        bool vx = rt_bit(valid, x), vy = rt_bit(valid, y);
        double dx = d[x], dy = d[y];
        mark[k] |= vx != vy || (vx && dx != dy && !(dx != dx && dy != dy));
      }
      break;
    }
    case RT_STR: {   /* interned: one id per text */
      const uint32_t *d = b->data[c];
      for (size_t k = 1; k < n; k++) {
        uint32_t x = perm[k - 1], y = perm[k];
        bool vx = rt_bit(valid, x), vy = rt_bit(valid, y);
        mark[k] |= vx != vy || (vx && d[x] != d[y]);
      }
      break;
    }
    default: {
      const int64_t *d = b->data[c];
      for (size_t k = 1; k < n; k++) {
        uint32_t x = perm[k - 1], y = perm[k];
        bool vx = rt_bit(valid, x), vy = rt_bit(valid, y);
        mark[k] |= vx != vy || (vx && d[x] != d[y]);
      }
      break;
    }
    }
  }
}

/* ---- one window's order -------------------------------------------------------- */

typedef struct win {
  rt_rowbuf *b;
  size_t n;
  uint32_t *perm;       /* sorted position → row */
  uint32_t *parts;      /* partition starts, then n (nparts + 1 entries) */
  size_t nparts;
  uint32_t *gstart;     /* per position: its peer group [gstart, gend) */
  uint32_t *gend;
  uint32_t *gno;        /* per position: its group's number (GROUPS) */
  uint32_t *gfirst;     /* per group number: its first position, then n */
  const rt_winspec *spec;
  const rt_strpool *sp;
  rt_err *err;
} win;

static int fail(win *w, const rt_wincall *c, const char *msg) {
  rt_errorf(w->err, c->pos, "%s: %s", c->stage ? c->stage : "WINDOW", msg);
  return -1;
}

static int win_open(win *w, const rt_winspec *s) {
  size_t n = w->n;
  w->perm = rt_sort_perm(w->b, s->nkeys, s->keys, w->sp);
  w->parts = rt_mem_alloc((n + 1) * sizeof *w->parts);
  uint8_t *mark = rt_mem_calloc(n + 1, 1);
  if (!w->perm || !w->parts || !mark) {
    rt_mem_free(mark);
    return -1;
  }
  mark_changes(w->b, s->keys, 0, s->npart, w->perm, n, mark);
  w->nparts = 0;
  for (size_t k = 0; k < n; k++)
    if (k == 0 || mark[k]) w->parts[w->nparts++] = (uint32_t)k;
  w->parts[w->nparts] = (uint32_t)n;
  rt_mem_free(mark);
  return 0;
}

/* The peer groups: a new one at every partition start and wherever an
 * order key changes. */
static int win_peers(win *w, const rt_winspec *s) {
  if (w->gstart) return 0;
  size_t n = w->n;
  w->gstart = rt_mem_alloc(n * sizeof *w->gstart);
  w->gend = rt_mem_alloc(n * sizeof *w->gend);
  uint8_t *mark = rt_mem_calloc(n + 1, 1);
  if (!w->gstart || !w->gend || !mark) {
    rt_mem_free(mark);
    return -1;
  }
  mark_changes(w->b, s->keys, s->npart, s->nkeys, w->perm, n, mark);
  for (size_t p = 0; p < w->nparts; p++) mark[w->parts[p]] = 1;
  w->gno = rt_mem_alloc(n * sizeof *w->gno);
  w->gfirst = rt_mem_alloc((n + 1) * sizeof *w->gfirst);
  if (!w->gno || !w->gfirst) {
    rt_mem_free(mark);
    return -1;
  }
  uint32_t g = 0, ng = 0;
  for (size_t k = 0; k < n; k++) {
    if (mark[k] || k == 0) {
      g = (uint32_t)k;
      w->gfirst[ng++] = g;
    }
    w->gstart[k] = g;
    w->gno[k] = ng - 1;
  }
  w->gfirst[ng] = (uint32_t)n;
  uint32_t e = (uint32_t)n;
  for (size_t k = n; k-- > 0;) {
    w->gend[k] = e;
    if (mark[k]) e = (uint32_t)k;
  }
  rt_mem_free(mark);
  return 0;
}

static void win_close(win *w) {
  rt_mem_free(w->perm);
  rt_mem_free(w->parts);
  rt_mem_free(w->gstart);
  rt_mem_free(w->gend);
  rt_mem_free(w->gno);
  rt_mem_free(w->gfirst);
  w->perm = w->parts = w->gstart = w->gend = w->gno = w->gfirst = NULL;
}

/* GROUPS: the first position of the group `d` groups after (d < 0:
 * before) position k's, within partition [ps, pe); ps before the first
 * group, pe after the last. */
static int64_t group_at(const win *w, uint32_t k, uint32_t ps, uint32_t pe, int64_t d) {
  int64_t g = (int64_t)w->gno[k] + d, g0 = w->gno[ps], g1 = w->gno[pe - 1];
  if (g < g0) return ps;
  if (g > g1) return pe;
  return w->gfirst[g];
}

/* RANGE n PRECEDING / FOLLOWING: the first position of the partition's
 * rows with a non-NULL order key [vs, ve) at which `past(key)` holds
 * (the keys are sorted, so it holds from some position on). */
typedef struct rangeq {
  const rt_rowbuf *b;
  int c;
  bool desc, strict, dbl;
  __int128 iv;          /* the bound: the current key moved by the offset */
  double dv;
} rangeq;

static bool range_past(const rangeq *q, uint32_t r) {
  int cmp;
  if (q->dbl) {
    double x = ((const double *)q->b->data[q->c])[r];
    cmp = x < q->dv ? -1 : x > q->dv;
  } else {
    __int128 x = ((const int64_t *)q->b->data[q->c])[r];
    cmp = x < q->iv ? -1 : x > q->iv;
  }
  if (q->desc) cmp = -cmp;
  return q->strict ? cmp > 0 : cmp >= 0;
}

/* Where a RANGE offset bound of position k falls: for a start (end ==
 * false) the first row at or after key ∓ n in the order's direction, for
 * an end the first row past key ± n. A row whose key is NULL frames its
 * NULL peers only, and NULL rows are never within an offset of a number,
 * as in SQLite. */
static int64_t range_at(const win *w, const rt_winframe *f, uint32_t k, uint32_t ps, uint32_t pe,
                        bool end) {
  const rt_sortkey *key = &w->spec->keys[w->spec->npart];
  const rt_rowbuf *b = w->b;
  int c = key->col;
  if (!rt_bit(b->valid[c], w->perm[k])) return end ? w->gend[k] : w->gstart[k];
  /* the non-NULL rows of the partition */
  uint32_t vs = ps, ve = pe;
  if (key->nulls_first) {
    while (vs < pe && !rt_bit(b->valid[c], w->perm[vs])) vs = w->gend[vs];
  } else {
    while (ve > ps && !rt_bit(b->valid[c], w->perm[ve - 1])) ve = w->gstart[ve - 1];
  }
  rt_winbound bd = end ? f->end : f->start;
  /* moving towards the end of the order adds for ASC, subtracts for DESC */
  bool forward = bd == RT_WB_FOLLOWING;
  bool add = forward != key->desc;
  rangeq q = {.b = b, .c = c, .desc = key->desc, .strict = end, .dbl = b->types[c] == RT_F64};
  uint32_t r = w->perm[k];
  if (q.dbl) {
    double off = end ? f->end_d : f->start_d, v = ((const double *)b->data[c])[r];
    q.dv = add ? v + off : v - off;
  } else {
    __int128 off = end ? f->end_n : f->start_n, v = ((const int64_t *)b->data[c])[r];
    q.iv = add ? v + off : v - off;
  }
  uint32_t lo = vs, hi = ve;   /* binary search: the first row past the bound */
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (range_past(&q, w->perm[mid])) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/* The frame [*lo, *hi) of position k in partition [ps, pe). */
static void frame_at(const win *w, const rt_winframe *f, uint32_t k, uint32_t ps, uint32_t pe,
                     uint32_t *lo, uint32_t *hi) {
  int64_t K = k, PS = ps, PE = pe, l, h;
  bool rows = f->unit == RT_WU_ROWS, groups = f->unit == RT_WU_GROUPS;
  int64_t sn = f->start_n, en = f->end_n;
  switch (f->start) {
  case RT_WB_UNBOUNDED_PRECEDING: l = PS; break;
  case RT_WB_PRECEDING:
    l = rows ? (sn > K - PS ? PS : K - sn)
        : groups ? group_at(w, k, ps, pe, sn > K - PS ? -(K - PS) - 1 : -sn)
                 : range_at(w, f, k, ps, pe, false);
    break;
  case RT_WB_CURRENT: l = rows ? K : w->gstart[k]; break;
  case RT_WB_FOLLOWING:
    l = rows ? (sn >= PE - K ? PE : K + sn)
        : groups ? group_at(w, k, ps, pe, sn >= PE - K ? PE - K : sn)
                 : range_at(w, f, k, ps, pe, false);
    break;
  default: l = PE; break;
  }
  switch (f->end) {
  case RT_WB_UNBOUNDED_FOLLOWING: h = PE; break;
  case RT_WB_FOLLOWING:
    h = rows ? (en >= PE - K - 1 ? PE : K + en + 1)
        : groups ? group_at(w, k, ps, pe, en >= PE - K ? PE - K : en + 1)
                 : range_at(w, f, k, ps, pe, true);
    break;
  case RT_WB_CURRENT: h = rows ? K + 1 : w->gend[k]; break;
  case RT_WB_PRECEDING:
    h = rows ? (en > K - PS ? PS : K - en + 1)
        : groups ? group_at(w, k, ps, pe, en > K - PS ? -(K - PS) - 1 : -en + 1)
                 : range_at(w, f, k, ps, pe, true);
    break;
  default: h = PS; break;
  }
  if (h < l) h = l;
  *lo = (uint32_t)l;
  *hi = (uint32_t)h;
}

/* ---- ranking, NTILE, LAG / LEAD ------------------------------------------------ */

/* An integer argument's value at row r as SQLite's sqlite3_value_int64
 * reads it (doubles truncated and saturated, NULL 0). */
static int64_t int_arg(const rt_rowbuf *b, int c, uint32_t r) {
  if (!valid_at(b, c, r)) return 0;
  if (b->types[c] != RT_F64) return i64_at(b, c, r);
  double d = f64_at(b, c, r);
  if (d != d) return 0;
  if (d <= -9223372036854775808.0) return INT64_MIN;
  if (d >= 9223372036854775807.0) return INT64_MAX;
  return (int64_t)d;
}

/* An argument that must be a whole number (LAG's offset, NTH_VALUE's n):
 * false for NULL and for a double that is not integral. */
static bool whole_arg(const rt_rowbuf *b, int c, uint32_t r, int64_t *out) {
  if (!valid_at(b, c, r)) return false;
  if (b->types[c] != RT_F64) {
    *out = i64_at(b, c, r);
    return true;
  }
  double d = f64_at(b, c, r);
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != (double)(int64_t)d)
    return false;
  *out = (int64_t)d;
  return true;
}

static int run_rank(win *w, const rt_wincall *c) {
  rt_rowbuf *b = w->b;
  for (size_t p = 0; p < w->nparts; p++) {
    uint32_t ps = w->parts[p], pe = w->parts[p + 1], n = pe - ps;
    int64_t dense = 0, ntile = 0;
    if (c->fn == RT_WIN_NTILE) {
      ntile = c->narg >= 0 ? int_arg(b, c->narg, w->perm[ps]) : c->n;
      if (ntile <= 0) return fail(w, c, "argument of ntile must be a positive integer");
    }
    for (uint32_t k = ps; k < pe; k++) {
      uint32_t r = w->perm[k];
      switch (c->fn) {
      case RT_WIN_ROW_NUMBER: put_i64(b, c->out, r, (int64_t)(k - ps) + 1); break;
      case RT_WIN_RANK: put_i64(b, c->out, r, (int64_t)(w->gstart[k] - ps) + 1); break;
      case RT_WIN_DENSE_RANK:
        if (w->gstart[k] == k) dense++;
        put_i64(b, c->out, r, dense);
        break;
      case RT_WIN_PERCENT_RANK:
        put_f64(b, c->out, r, n > 1 ? (double)(w->gstart[k] - ps) / (double)(n - 1) : 0.0);
        break;
      case RT_WIN_CUME_DIST: put_f64(b, c->out, r, (double)(w->gend[k] - ps) / (double)n); break;
      case RT_WIN_NTILE: {
        /* SQLite's ntileValueFunc: the first n % ntile buckets get one
         * row more. */
        int64_t i = k - ps, size = (int64_t)n / ntile, v;
        if (size == 0) {
          v = i + 1;
        } else {
          int64_t large = (int64_t)n - ntile * size, small = large * (size + 1);
          v = i < small ? 1 + i / (size + 1) : 1 + large + (i - small) / size;
        }
        put_i64(b, c->out, r, v);
        break;
      }
      default: break;
      }
    }
  }
  return 0;
}

/* LAG / LEAD: the value `offset` rows before / after in the partition
 * (a negative offset looks the other way, as in SQLite), else the default
 * of the current row; a NULL or fractional offset finds no row. */
static int run_lag(win *w, const rt_wincall *c) {
  rt_rowbuf *b = w->b;
  bool lead = c->fn == RT_WIN_LEAD;
  for (size_t p = 0; p < w->nparts; p++) {
    int64_t ps = w->parts[p], pe = w->parts[p + 1];
    if (c->narg < 0 && c->n == 1 && c->arg >= 0) {
      /* the usual LAG(x) / LEAD(x): neighbours, no per-row offset */
      for (int64_t k = ps; k < pe; k++) {
        int64_t t = lead ? k + 1 : k - 1;
        uint32_t r = w->perm[k];
        if (t >= ps && t < pe) copy_val(b, c->arg, w->perm[t], c->out, r);
        else if (c->dflt >= 0) copy_val(b, c->dflt, r, c->out, r);
      }
      continue;
    }
    for (int64_t k = ps; k < pe; k++) {
      uint32_t r = w->perm[k];
      int64_t off = c->n;
      bool found = c->narg < 0 || whole_arg(b, c->narg, r, &off);
      if (found) {
        /* k ± off within [ps, pe), without overflowing */
        if (lead) found = off >= ps - k && off < pe - k;
        else found = off <= k - ps && off > k - pe;
      }
      if (found) copy_val(b, c->arg, w->perm[lead ? k + off : k - off], c->out, r);
      else if (c->dflt >= 0) copy_val(b, c->dflt, r, c->out, r);
    }
  }
  return 0;
}

/* ---- frames ------------------------------------------------------------------- */

/* FIRST_VALUE, LAST_VALUE, NTH_VALUE: a row of the frame, or NULL. */
static int run_nth(win *w, const rt_wincall *c) {
  rt_rowbuf *b = w->b;
  for (size_t p = 0; p < w->nparts; p++) {
    uint32_t ps = w->parts[p], pe = w->parts[p + 1];
    for (uint32_t k = ps; k < pe; k++) {
      uint32_t r = w->perm[k], lo, hi;
      int64_t nth = c->n;
      if (c->fn == RT_WIN_NTH_VALUE && c->narg >= 0 && !whole_arg(b, c->narg, r, &nth)) nth = 0;
      if (c->fn == RT_WIN_NTH_VALUE && nth <= 0)
        return fail(w, c, "second argument to nth_value must be a positive integer");
      frame_at(w, &c->frame, k, ps, pe, &lo, &hi);
      if (lo >= hi) continue;
      if (c->fn == RT_WIN_FIRST_VALUE) copy_val(b, c->arg, w->perm[lo], c->out, r);
      else if (c->fn == RT_WIN_LAST_VALUE) copy_val(b, c->arg, w->perm[hi - 1], c->out, r);
      else if (nth <= (int64_t)(hi - lo)) copy_val(b, c->arg, w->perm[lo + nth - 1], c->out, r);
    }
  }
  return 0;
}

/* The running state of COUNT, SUM, TOTAL and AVG over the frame. */
typedef struct sumst {
  int64_t cnt;
  __int128 isum;
  double dsum;
} sumst;

/* Row r enters (dir 1) or leaves (-1) the frame; count only: COUNT,
 * whose argument may be a string. */
static void sum_step(const rt_rowbuf *b, int c, uint32_t r, sumst *s, int dir, bool count) {
  if (c < 0) {
    s->cnt += dir;
    return;
  }
  if (!valid_at(b, c, r)) return;
  s->cnt += dir;
  if (count) return;
  if (b->types[c] == RT_F64) s->dsum += dir > 0 ? f64_at(b, c, r) : -f64_at(b, c, r);
  else s->isum += dir > 0 ? i64_at(b, c, r) : -(__int128)i64_at(b, c, r);
}

static int run_sum(win *w, const rt_wincall *c) {
  rt_rowbuf *b = w->b;
  bool dbl = c->arg >= 0 && b->types[c->arg] == RT_F64;
  bool count = c->fn == RT_WIN_COUNT || c->fn == RT_WIN_COUNT_STAR;
  for (size_t p = 0; p < w->nparts; p++) {
    uint32_t ps = w->parts[p], pe = w->parts[p + 1], clo = ps, chi = ps;
    sumst s = {0};
    for (uint32_t k = ps; k < pe; k++) {
      uint32_t r = w->perm[k], lo, hi;
      frame_at(w, &c->frame, k, ps, pe, &lo, &hi);
      if (lo >= chi) {   /* the frame jumped past the state: start again */
        s = (sumst){0};
        clo = chi = lo;
      }
      for (; chi < hi; chi++) sum_step(b, c->arg, w->perm[chi], &s, 1, count);
      for (; clo < lo; clo++) sum_step(b, c->arg, w->perm[clo], &s, -1, count);
      double d = dbl ? s.dsum : (double)s.isum;
      switch (c->fn) {
      case RT_WIN_COUNT_STAR:
      case RT_WIN_COUNT: put_i64(b, c->out, r, s.cnt); break;
      case RT_WIN_TOTAL: put_f64(b, c->out, r, s.cnt ? d : 0.0); break;
      case RT_WIN_AVG:
        if (s.cnt) put_f64(b, c->out, r, d / (double)s.cnt);
        break;
      case RT_WIN_SUM:
        if (!s.cnt) break;
        if (dbl) {
          put_f64(b, c->out, r, s.dsum);
        } else {
          if (s.isum > INT64_MAX || s.isum < INT64_MIN) return fail(w, c, "integer overflow");
          put_i64(b, c->out, r, (int64_t)s.isum);
        }
        break;
      default: break;
      }
    }
  }
  return 0;
}

/* a before b in the deque's order: a < b for MIN, a > b for MAX */
static bool better(const win *w, int c, bool max, uint32_t ra, uint32_t rb) {
  const rt_rowbuf *b = w->b;
  int cmp;
  switch (b->types[c]) {
  case RT_F64: {
    double x = f64_at(b, c, ra), y = f64_at(b, c, rb);
    cmp = x < y ? -1 : x > y;
    break;
  }
  case RT_STR: cmp = rt_str_cmp(w->sp, (uint32_t)bits_at(b, c, ra), (uint32_t)bits_at(b, c, rb)); break;
  default: {
    int64_t x = i64_at(b, c, ra), y = i64_at(b, c, rb);
    cmp = x < y ? -1 : x > y;
    break;
  }
  }
  return max ? cmp > 0 : cmp < 0;
}

/* MIN / MAX over the frame: a deque of the frame's non-NULL positions
 * whose values strictly improve from back to front; the front is the
 * answer. Each position enters and leaves once. */
static int run_minmax(win *w, const rt_wincall *c) {
  rt_rowbuf *b = w->b;
  bool max = c->fn == RT_WIN_MAX;
  uint32_t *dq = rt_mem_alloc((w->n + 1) * sizeof *dq);
  if (!dq) return -1;
  for (size_t p = 0; p < w->nparts; p++) {
    uint32_t ps = w->parts[p], pe = w->parts[p + 1], chi = ps, head = 0, tail = 0;
    for (uint32_t k = ps; k < pe; k++) {
      uint32_t lo, hi;
      frame_at(w, &c->frame, k, ps, pe, &lo, &hi);
      if (chi < lo) chi = lo;   /* rows skipped over never enter */
      for (; chi < hi; chi++) {
        uint32_t rr = w->perm[chi];
        if (!valid_at(b, c->arg, rr)) continue;
        while (tail > head && !better(w, c->arg, max, w->perm[dq[tail - 1]], rr)) tail--;
        dq[tail++] = chi;
      }
      while (tail > head && dq[head] < lo) head++;
      if (tail > head) copy_val(b, c->arg, w->perm[dq[head]], c->out, w->perm[k]);
    }
  }
  rt_mem_free(dq);
  return 0;
}

/* ---- the whole op ------------------------------------------------------------- */

static int run_call(win *w, const rt_wincall *c) {
  switch (c->fn) {
  case RT_WIN_ROW_NUMBER: case RT_WIN_RANK: case RT_WIN_DENSE_RANK: case RT_WIN_PERCENT_RANK:
  case RT_WIN_CUME_DIST: case RT_WIN_NTILE:
    return run_rank(w, c);
  case RT_WIN_LAG: case RT_WIN_LEAD: return run_lag(w, c);
  case RT_WIN_FIRST_VALUE: case RT_WIN_LAST_VALUE: case RT_WIN_NTH_VALUE: return run_nth(w, c);
  case RT_WIN_COUNT_STAR: case RT_WIN_COUNT: case RT_WIN_SUM: case RT_WIN_TOTAL: case RT_WIN_AVG:
    return run_sum(w, c);
  case RT_WIN_MIN: case RT_WIN_MAX: return run_minmax(w, c);
  case RT_WIN__COUNT: break;
  }
  return fail(w, c, "unknown window function");
}

int rt_window_run(rt_rowbuf *b, int nspecs, const rt_winspec *specs, int ncalls,
                  const rt_wincall *calls, const rt_strpool *sp, rt_err *err) {
  if (b->nrows == 0) return 0;
  for (int s = 0; s < nspecs; s++) {
    win w = {.b = b, .n = (size_t)b->nrows, .spec = &specs[s], .sp = sp, .err = err};
    bool used = false, peers = false;
    for (int i = 0; i < ncalls; i++) {
      if (calls[i].spec != s) continue;
      used = true;
      peers |= needs_peers(&calls[i]);
    }
    if (!used) continue;
    int rc = win_open(&w, &specs[s]);
    if (rc == 0 && peers) rc = win_peers(&w, &specs[s]);
    if (rc < 0 && !err->set) rt_errorf(err, calls[0].pos, "%s: out of memory", calls[0].stage);
    for (int i = 0; i < ncalls && rc == 0; i++) {
      if (calls[i].spec != s) continue;
      rc = run_call(&w, &calls[i]);
      if (rc < 0 && !err->set) rt_errorf(err, calls[i].pos, "%s: out of memory", calls[i].stage);
    }
    win_close(&w);
    if (rc < 0) return -1;
  }
  return 0;
}
