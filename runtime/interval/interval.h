/*
 * interval.h — the interval operators as a pure C runtime: INTERVAL
 * INTERSECTION OF (isect.c), INTERVAL FLATTEN (flatten.c), INTERVAL JOIN
 * (ijoin.c) and INTERVAL FILL GAPS (fillgaps.c), over PER-key lanes
 * (lanes.c) and a shared sorted-interval index (ivindex.c).
 *
 * The executor buffers each relation as plain columnar arrays (rt_ivrel):
 * ts, dur and the PER keys widened to 64 bits, with validity bits. The
 * operators answer with flat arrays of row indexes into those inputs plus
 * computed bounds, in buffers they own (freed by the matching *_free), so
 * both backends can serve the results as selection views in batches. No
 * function allocates per row; errors go to a sticky rt_err as
 * "<stage>: <message>" with offset -1 (the caller passes the stage name,
 * e.g. "INTERVAL INTERSECTION OF"). Out of memory is the error
 * "<stage>: out of memory".
 *
 * Time is integral (int64 nanoseconds). A row with dur > 0 is the half-open
 * interval [ts, ts+dur); a row with dur = 0 is a point that holds only the
 * instant ts. [0,10) and [10,20) do not meet; a point t meets [a,b) when
 * a <= t < b, and meets a point at the same instant.
 */
#ifndef PJ_INTERVAL_H
#define PJ_INTERVAL_H

#include "runtime/rt.h"
#include "runtime/store.h"

#define RT_NO_LANE UINT32_MAX
#define RT_NO_ROW UINT32_MAX
#define RT_LANES_MAXKEYS 64

/* ---- inputs --------------------------------------------------------------- */

/* One PER column: value bits widened to int64 (any integer kind as its
 * value, a string as its uint32 id, a double as its bits; -0.0 and 0.0,
 * and every NaN, are folded by the lane table). valid NULL = no NULLs. */
typedef struct rt_ivkey {
  rt_type type;            /* RT_I64, RT_F64 or RT_STR */
  const int64_t *v;
  const uint64_t *valid;
  /* Narrow storage read in place (a table column handed over without a
   * widened copy): when v is NULL, u32 (RT_U32 values or RT_STR ids), else
   * i32 (RT_I32), else, with rowid set, the row index itself (RT_ID). */
  const uint32_t *u32;
  const int32_t *i32;
  bool rowid;
} rt_ivkey;

/* Value bits of row i of key c (any storage above). */
static inline int64_t rt_ivkey_get(const rt_ivkey *c, uint32_t i) {
  if (c->v) return c->v[i];
  if (c->u32) return c->u32[i];
  if (c->i32) return c->i32[i];
  return i;
}

/* A buffered relation: n rows of ts, dur (validity NULL = all valid) and
 * nkeys PER columns (every relation of one operator lists its PER columns
 * in the same order with the same types). */
typedef struct rt_ivrel {
  uint32_t n;
  const int64_t *ts, *dur;
  const uint64_t *ts_valid, *dur_valid;
  int nkeys;
  const rt_ivkey *keys;
  /* The relation's integer id column, or NULL: only read to name a row in
   * an error message (rt_iv_below_zero). */
  const rt_ivkey *id;
  const char *name;        /* its alias in messages ("of a"), or NULL */
} rt_ivrel;

static inline bool rt_ivrel_bounds_valid(const rt_ivrel *r, uint32_t i) {
  return (!r->ts_valid || rt_bit(r->ts_valid, i)) && (!r->dur_valid || rt_bit(r->dur_valid, i));
}

/* ---- lanes: PER key tuple → dense lane number (lanes.c) -------------------- */

/* Lanes are numbered 0, 1, 2, … in first-inserted order. A key tuple is
 * compared as (NULL flag, 64 value bits) per column, so NULL agrees with
 * NULL as in GROUP BY. Unlike rt_aggtab it can look a key up without
 * inserting it (join probes must not grow the operand's table) and it keeps
 * no aggregate state. nkeys = 0 makes every row lane 0. */
typedef struct rt_lanes {
  int nkeys;
  rt_type types[RT_LANES_MAXKEYS];
  uint32_t n, cap;
  uint64_t *bits;          /* cap * nkeys key value bits */
  uint64_t *nulls;         /* per lane: bit k set = key k is NULL */
  uint64_t *hash;          /* per lane */
  uint32_t *slots;         /* open addressing: lane + 1, 0 = empty */
  uint64_t mask;
} rt_lanes;

/* Returns 0 (and sets "<stage>: too many PER columns") when nkeys > 64. */
int rt_lanes_init(rt_lanes *l, int nkeys, const rt_type *types, const char *stage, rt_err *err);
void rt_lanes_free(rt_lanes *l);
/* Lane of a key tuple: vals[k] value bits, bit k of nullmask = key k NULL.
 * Returns the lane, -1 when absent and !insert, -2 when out of memory. */
int64_t rt_lanes_lookup(rt_lanes *l, const int64_t *vals, uint64_t nullmask, bool insert);
/* Lane of every row 0..r->n-1 into lane[i]: inserting new keys when
 * `insert`; RT_NO_LANE for a key that is absent (!insert) or, when
 * !null_matches, for a row with a NULL key. Returns 0 on out of memory. */
int rt_lanes_assign(rt_lanes *l, const rt_ivrel *r, bool insert, bool null_matches,
                    uint32_t *lane, const char *stage, rt_err *err);
/* rt_lanes_assign (inserting) with the rows cut into chunks numbered on
 * par's workers: the same lanes, numbered the same. */
struct rt_par;
int rt_lanes_assign_par(rt_lanes *l, const rt_ivrel *r, bool null_matches, uint32_t *lane,
                        const struct rt_par *par, const char *stage, rt_err *err);
/* The rows per chunk that work over a relation of n rows cuts them into
 * on par's workers (a multiple of 64, so chunks own whole validity
 * words; n itself, one chunk, when par has one worker or n is small). */
#define RT_LANES_PAR_MIN 65536u
uint32_t rt_lanes_chunk(const struct rt_par *par, uint32_t n);
/* The same for rows lo .. hi-1 only, into lane[0 .. hi-lo): a probe
 * looks its input's lanes up a chunk at a time (a small buffer, the
 * small-key table's speed) instead of hashing row by row. */
int rt_lanes_assign_range(rt_lanes *l, const rt_ivrel *r, uint32_t lo, uint32_t hi, bool insert,
                          bool null_matches, uint32_t *lane, const char *stage, rt_err *err);
/* One row (same rules; -1 = no lane, -2 = out of memory). */
int64_t rt_lanes_row(rt_lanes *l, const rt_ivrel *r, uint32_t i, bool insert, bool null_matches);
/* Lookup only: the lane of row i, or -1. Never changes the table. */
int64_t rt_lanes_find_row(const rt_lanes *l, const rt_ivrel *r, uint32_t i, bool null_matches);

/* ---- shared helpers (ivindex.c) -------------------------------------------- */

/* Grows *p (elements of size elem) so it holds at least `need` elements;
 * capacity doubles. Returns false when out of memory (*p unchanged). */
bool rt_iv_grow(void **p, size_t *cap, size_t need, size_t elem);

/* Every working array of the interval operators comes from runtime/
 * budget.h's rt_mem_* (charged to the run's memory budget; freed with
 * rt_mem_free). rt_iv_big is rt_mem_big, for arrays sized by the row
 * count: from 2 MiB up, aligned to and advised for transparent huge
 * pages, because first-touch page faults otherwise cost more than the
 * sweeps themselves. */
void *rt_iv_big(size_t bytes);

/* The error for row i of r with a negative ts or dur: "<stage>: <what>ts
 * or dur is below zero: the <what>row with id 7 has ts 5 and dur -1",
 * naming the row by id when r has one (else "a <what>row has …"), and
 * for a negative dur the usual cause and fix (unfinished slices have
 * dur = -1: WHERE dur >= 0). what is "" or "background ". Returns 0. */
int rt_iv_below_zero(const rt_ivrel *r, uint32_t i, const char *stage, const char *what,
                     rt_err *err);

/* Order-preserving maps of signed values onto unsigned ones. */
static inline uint64_t rt_iv_u(int64_t v) { return (uint64_t)v ^ (1ull << 63); }
static inline int64_t rt_iv_s(uint64_t u) { return (int64_t)(u ^ (1ull << 63)); }

/* Sorts the parallel arrays (s, e, row) of n items by (s, e, row), or by
 * (s, row) when e is NULL (e is then left alone). Stable merge sort with
 * scratch from malloc; an already sorted input costs one scan. Returns
 * false when out of memory. */
bool rt_iv_sort(uint64_t *s, uint64_t *e, uint32_t *row, size_t n);

/* First index i in [0, n) with a[i] >= x (a non-decreasing); n if none. */
size_t rt_iv_lower(const uint64_t *a, size_t n, uint64_t x);
/* The same knowing a[i] < x for every i < from: doubling steps on from
 * `from`, then a binary search of the last step, so a probe whose keys
 * ascend (an input in time order) pays for the distance it moved, not
 * log n. */
size_t rt_iv_lower_from(const uint64_t *a, size_t n, size_t from, uint64_t x);

/* A max-end pyramid over n intervals sorted by start: level 0 holds the max
 * end of each block of RT_IVTREE_FAN items, each next level the max of
 * RT_IVTREE_FAN nodes below. It answers "every i in [lo, hi) with
 * end[i] >= thr, in index order" in O(log n) per hit, which is what an
 * interval tree does for intervals kept sorted by start. Used where
 * intervals overlap each other, so that ends are not sorted. */
#define RT_IVTREE_FAN 16
#define RT_IVTREE_MAXLEVELS 16
typedef struct rt_ivtree {
  const uint64_t *end;     /* caller's array, n items */
  size_t n;
  int nlevels;
  size_t len[RT_IVTREE_MAXLEVELS];
  uint64_t *lvl[RT_IVTREE_MAXLEVELS];
} rt_ivtree;
bool rt_ivtree_build(rt_ivtree *t, const uint64_t *end, size_t n);
void rt_ivtree_free(rt_ivtree *t);
/* Calls hit(ctx, i) for each match in order; stops early when hit returns
 * false. Returns false when stopped. */
bool rt_ivtree_query(const rt_ivtree *t, size_t lo, size_t hi, uint64_t thr,
                     bool (*hit)(void *ctx, size_t i), void *ctx);

/* ---- INTERVAL INTERSECTION OF (isect.c) ------------------------------------- */

/* Regions: region i is [ts[i], ts[i]+dur[i]) (dur 0 = a point) and
 * rows[j][i] is the row of operand j that covers it.
 *
 * Order: partitions (PER groups present in every operand) in the
 * first-seen order of the operand with the fewest partitions (the first
 * such operand on a tie); within a partition by region start, then by the
 * row of operand 0, operand 1, … So the order does not depend on which
 * path ran. */
typedef struct rt_isect_out {
  int k;
  size_t n, cap;
  int64_t *ts, *dur;
  uint32_t **rows;         /* k arrays */
} rt_isect_out;

/* What ran, for EXPLAIN and the plan dump. */
typedef struct rt_isect_stats {
  uint64_t rows_in;        /* rows of all operands */
  uint64_t rows_null;      /* skipped for NULL ts or dur */
  uint64_t lanes_sorted;   /* operand partitions that needed a sort */
  uint64_t partitions;     /* present in every operand */
  uint64_t part_disjoint;  /* ran the all-disjoint multi-way sweep */
  uint64_t part_narrow;    /* served by pairwise narrowing */
  uint64_t part_stream;    /* served by the streaming sweep (isect_sweep.c) */
  uint64_t part_capped;    /* … of those: narrowing gave up at the cap */
  uint64_t step_sweep;     /* narrowing steps by linear sweep */
  uint64_t step_bsearch;   /* … by binary search into a disjoint operand */
  uint64_t step_tree;      /* … by max-end tree into an overlapping operand */
  uint64_t stream_events;  /* starts the streaming sweep visited */
  uint64_t stream_skips;   /* … and its jumps over idle stretches */
  uint64_t regions;
} rt_isect_stats;

/* Intersects k >= 2 operands. Errors: a negative ts or dur
 * ("ts or dur is below zero"), ts + dur beyond int64 ("integer overflow"),
 * out of memory. Returns 1 on success, 0 on error (out then holds nothing
 * useful but must still be freed). stats may be NULL. */
int rt_isect_run(int k, const rt_ivrel *ops, const char *stage, rt_isect_out *out,
                 rt_isect_stats *stats, rt_err *err);
void rt_isect_free(rt_isect_out *out);

/* The same intersection served a slice at a time, so the regions never
 * have to exist all at once: rt_isect_begin reads and partitions the
 * operands (ops must outlive the iterator; errors as rt_isect_run, NULL
 * then), each rt_isect_next appends at most `max` (>= 1) further regions
 * to out (an rt_isect_out zeroed before first use; set out->n = 0 between
 * calls to reuse its arrays) and returns how many, 0 once all are out, -1
 * on error. The regions and their order are rt_isect_run's. stats (may be
 * NULL) is filled as the work happens and is final after the last call. */
typedef struct rt_isect rt_isect;
rt_isect *rt_isect_begin(int k, const rt_ivrel *ops, const char *stage, rt_isect_stats *stats,
                         rt_err *err);
int64_t rt_isect_next(rt_isect *it, rt_isect_out *out, size_t max);
/* rt_isect_begin reading the operands on par's workers (NULL: one
 * thread): the same iterator. */
rt_isect *rt_isect_begin_par(int k, const rt_ivrel *ops, const char *stage, rt_isect_stats *stats,
                             const struct rt_par *par, rt_err *err);
void rt_isect_end(rt_isect *it);

/* Paths within a partition whose operands are not all disjoint: two
 * operands that narrowing would sweep (comparable sizes) stream (the
 * streaming sweep, isect_sweep.c: regions made in output order, a slice
 * at a time); otherwise pairwise narrowing runs, which holds the
 * partition's regions, and gives up for the streaming sweep once a step
 * would hold more than RT_ISECT_NARROW_CAP of them. So the memory of a
 * partition is bounded by its rows, not its regions. Tests set another
 * cap (0: every such partition that has a region streams) before the
 * first rt_isect_next. */
#define RT_ISECT_NARROW_CAP ((size_t)1 << 16)
void rt_isect_set_narrow_cap(rt_isect *it, size_t cap);

/* Parallel serving (exec's parallel interval sources): the partitions an
 * iterator fresh from rt_isect_begin will visit, numbered 0..n-1 in its
 * order; the rows of partition q in all operands (a measure of its work);
 * and a slice: an iterator over partitions q0..q1-1 only that shares the
 * base's read operands (the base must outlive it and not be advanced
 * meanwhile; slices are read only towards it, so several may run at
 * once on different threads). Its regions are exactly the base's for
 * those partitions, in the same order; its errors go to err, its counts
 * to stats (the partition and path counts; the base holds the read
 * counts). NULL on error. Free it with rt_isect_end. */
uint32_t rt_isect_nparts(const rt_isect *it);
size_t rt_isect_part_rows(const rt_isect *it, uint32_t q);
rt_isect *rt_isect_slice(const rt_isect *base, uint32_t q0, uint32_t q1, rt_isect_stats *stats,
                         rt_err *err);
/* Whether partition q is disjoint in every operand: its regions are then
 * at most rt_isect_part_rows(it, q) (each step of the sweep passes a row). */
bool rt_isect_part_disjoint(const rt_isect *it, uint32_t q);

/* ---- INTERVAL FLATTEN (flatten.c) ------------------------------------------- */

/* One aggregate over the covering rows (aggs.def's FLATTEN column):
 * COUNT_STAR, COUNT, SUM, MIN, MAX or AVG over an int64 (in = RT_I64;
 * strings are not allowed) or double (in = RT_F64) column v with validity
 * (NULL = all valid); v is unused for COUNT_STAR. ARG_MAX / ARG_MIN: v is
 * the ordering (a number; NULL orderings are ignored, ties go to the
 * first row), v2 the value (int64 bits: an integer, a double's bits or a
 * string id widened; in2 RT_I64, RT_F64 or RT_STR, the output's type)
 * with validity valid2. GROUP_CONCAT: v the texts' string ids widened to
 * int64 (in = RT_STR), v2 the separators' (NULL: ','), joined in input
 * order. */
typedef struct rt_flat_agg {
  rt_aggkind kind;
  rt_type in;
  const void *v;
  const uint64_t *valid;
  rt_type in2;
  const void *v2;
  const uint64_t *valid2;
} rt_flat_agg;

/* Segments: ts, dur (0 for a point segment), rep = the first row of the
 * segment's PER group (to fetch PER values), then per aggregate a value
 * array (int64_t, double when type[a] == RT_F64, uint32_t string ids when
 * RT_STR) and validity bits
 * (bit clear = NULL). Order: groups in first-seen order; within a group by
 * time, a point segment at t before the positive segment starting at t. */
typedef struct rt_flat_out {
  int naggs;
  size_t n, cap;
  int64_t *ts, *dur;
  uint32_t *rep;
  rt_type *type;           /* per aggregate: RT_I64 or RT_F64 */
  void **val;
  uint64_t **valid;
} rt_flat_out;

typedef struct rt_flat_stats {
  bool presorted;          /* input was grouped and time-ordered: no sort */
  uint64_t rows_null, groups, segments, point_segments;
} rt_flat_stats;

/* strings: the pool GROUP_CONCAT interns into (may be NULL without one).
 * Errors: negative ts or dur ("ts or dur is below zero"), ts + dur or an
 * integer SUM beyond int64 ("integer overflow"), a string input, a text
 * the pool refuses, out of memory. Returns 1 on success, 0 on error. stats may be NULL. Double SUM
 * and AVG keep a running sum over the live set (added when an interval
 * starts, subtracted when it ends, reset when the set empties; finite
 * values in a long double, infinities counted), so they can differ from a
 * fresh sum in the last bits for non-integral values; +inf and -inf
 * together give NULL (NaN is NULL). */
int rt_flatten_run(const rt_ivrel *in, int naggs, const rt_flat_agg *aggs, rt_strpool *strings,
                   const char *stage, rt_flat_out *out, rt_flat_stats *stats, rt_err *err);
void rt_flatten_free(rt_flat_out *out);
/* FLATTEN made a chunk at a time (rt_flatten_run is one call of it):
 * rt_flatten_begin checks the aggregates and groups and orders the input
 * (on par's workers when it has more than one), and cuts the groups into
 * pieces, runs of consecutive groups of about an equal share of the rows
 * for `workers` workers (one piece for one worker); NULL on error (err
 * set). rt_flatten_next sweeps piece i on worker w (0 .. workers - 1; a
 * worker keeps to one piece from its first chunk until it ends) from where
 * it stopped, appending to out until out->n >= upto or the piece ends: 1
 * when more is to come, 0 when the piece has ended, -1 on error (err set;
 * the segments before the failing one are in out). In piece order the
 * pieces' segments are rt_flatten_run's output, and the earliest failing
 * piece's error is its error. rt_flatten_end frees it all, adding the
 * counts of the pieces swept into *stats (may be NULL). GROUP_CONCAT
 * interns strings: a caller sweeps it on one worker. */
typedef struct rt_flatten rt_flatten;
rt_flatten *rt_flatten_begin(const rt_ivrel *in, int naggs, const rt_flat_agg *aggs, rt_strpool *strings,
                             const char *stage, const struct rt_par *par, int workers, rt_err *err);
int64_t rt_flatten_npieces(const rt_flatten *f);
/* The input rows of piece i (it makes at most 2 segments per row). */
uint64_t rt_flatten_piece_rows(const rt_flatten *f, int64_t i);
int rt_flatten_next(rt_flatten *f, int worker, int64_t i, rt_flat_out *out, size_t upto, rt_err *err);
void rt_flatten_end(rt_flatten *f, rt_flat_stats *stats);
/* An empty output with f's aggregates' types and room for cap segments
 * (free it with rt_flatten_free, also on error); 0 on error. */
int rt_flatten_out_init(const rt_flatten *f, rt_flat_out *out, size_t cap, rt_err *err);
/* Drops out's first k segments (k = out->n, or a multiple of 64), moving
 * the rest to the front, and clears the validity bits after them. */
void rt_flatten_out_drop(rt_flat_out *out, size_t k);

/* ---- INTERVAL JOIN (ijoin.c) ------------------------------------------------ */

typedef enum rt_ijrel {
  RT_IJ_OVERLAPPING,       /* OVERLAPPING BOUNDS */
  RT_IJ_COVERING_BEGIN,    /* COVERING BEGIN */
  RT_IJ_COVERING_END,      /* COVERING END */
  RT_IJ_COVERING_BOUNDS,   /* COVERING BOUNDS */
  RT_IJ_WITHIN,            /* WITHIN BOUNDS */
} rt_ijrel;

/* The operand, indexed per lane: items sorted by (start, row); a lane whose
 * items are disjoint is searched by binary search on its (then sorted)
 * ends, an overlapping lane through an rt_ivtree. Built once, probed by
 * any number of input batches; read-only while probing. */
typedef struct rt_ijoin {
  rt_ijrel rel;
  const char *stage;
  rt_lanes lanes;
  uint32_t nlanes;
  uint32_t *off;           /* nlanes + 1: lane l is items off[l] .. off[l+1]-1 */
  uint64_t *s, *e;         /* item start, end (rt_iv_u order; e = s for a point) */
  uint8_t *pt;             /* item is a point (dur = 0) */
  uint32_t *row;           /* item's operand row */
  uint8_t *overlaps;       /* per lane */
  rt_ivtree *trees;        /* per lane; built only for overlapping lanes */
  uint64_t lanes_disjoint, lanes_overlapping;
} rt_ijoin;

/* (input index, operand row) pairs; op = RT_NO_ROW for a LEFT row with no
 * match. Appended by probes; reset n to 0 to reuse. */
typedef struct rt_ijpairs {
  size_t n, cap;
  uint32_t *in, *op;
} rt_ijpairs;

/* Reads the operand. Its rows with NULL ts or dur, or a NULL PER key, are
 * left out (they match nothing). dur < 0 never ends. Errors: ts + dur
 * beyond int64 ("integer overflow"), out of memory. Returns 1 / 0. */
int rt_ijoin_build(rt_ijoin *j, const rt_ivrel *op, rt_ijrel rel, const char *stage,
                   rt_err *err);
/* Probes input rows 0..in->n-1 (PER columns in the operand's order and
 * types) in order, appending each row's matches in operand start order
 * (ties by operand row); with `left`, a row without match is appended
 * once with RT_NO_ROW. Returns 1 / 0 (out of memory, overflow). */
int rt_ijoin_probe(const rt_ijoin *j, const rt_ivrel *in, bool left, rt_ijpairs *out,
                   rt_err *err);
/* The same over input rows lo..hi-1 only (the table is read only, so
 * ranges may be probed at once on several threads); the pairs of ranges
 * appended in row order are rt_ijoin_probe's. */
int rt_ijoin_probe_range(const rt_ijoin *j, const rt_ivrel *in, uint32_t lo, uint32_t hi, bool left,
                         rt_ijpairs *out, rt_err *err);
/* One input [ts, ts+dur) (dur < 0: never ends) in a known lane (from
 * rt_lanes_find_row(&j->lanes, …, false)); appends matches with input
 * index `idx`. Returns the number of matches, -1 on out of memory; with
 * out NULL it stops at the first match (1) and appends nothing. */
int64_t rt_ijoin_probe_one(const rt_ijoin *j, uint32_t lane, int64_t ts, int64_t dur,
                           uint32_t idx, rt_ijpairs *out);
void rt_ijoin_free(rt_ijoin *j);
void rt_ijpairs_free(rt_ijpairs *p);
/* Appends one pair; false when out of memory. */
bool rt_ijpairs_put(rt_ijpairs *p, uint32_t in, uint32_t op);
/* rt_ijoin_build, with null_keys: rows with NULL PER keys form a lane of
 * their own (NULL agrees with NULL, as §9's operators want) instead of
 * being left out. */
int rt_ijoin_build_keys(rt_ijoin *j, const rt_ivrel *op, rt_ijrel rel, bool null_keys,
                        const char *stage, rt_err *err);

/* ---- INTERVAL FILL GAPS (fillgaps.c) ----------------------------------------- */

/* Fillers: [ts, ts+dur) (never zero width), the background row it comes
 * from, and a representative input row of its lane (RT_NO_ROW for a lane
 * with no input row, whose PER values then come from the background row).
 * Order: by lane (first seen: input rows, then background rows), then
 * time. */
typedef struct rt_fill_out {
  size_t n, cap;
  int64_t *ts, *dur;
  uint32_t *bg;
  uint32_t *rep;
} rt_fill_out;

/* in: the input rows (ts, dur, PER keys). bg: background rows (ts, dur,
 * and the same PER keys when bg_has_per; otherwise bg->nkeys is ignored).
 * Lanes: nkeys = 0 → one lane (that always exists); bg_has_per → the
 * lanes of input and background rows (a lane with no input is filled
 * whole); otherwise every input lane is filled against every background
 * row. NULL PER keys agree with each other. Input rows: NULL bounds cover
 * nothing, dur < 0 covers to the end of time, dur = 0 covers no width.
 * Background rows: NULL bounds are skipped. Errors: negative background
 * bound ("background ts or dur is below zero"), two background rows
 * meeting within a lane ("background rows overlap within a lane"), a
 * finite ts + dur of either beyond int64 ("integer overflow"), out of
 * memory. Returns 1 / 0. */
int rt_fillgaps_run(const rt_ivrel *in, const rt_ivrel *bg, bool bg_has_per, const char *stage,
                    rt_fill_out *out, rt_err *err);
void rt_fillgaps_free(rt_fill_out *out);

/* ---- §9.1 interval sources (ivsrc) ------------------------------------------ */

/* INTERVALS FROM EVENTS (ivevents.c). ev: the events (ts and PER keys;
 * dur is not read and may be NULL); stop: the STOP events (ts and the same
 * PER keys) or NULL. close: per event row the end CLOSING LAST AT gives
 * (validity close_valid, NULL = all valid), or NULL for KEEPING LAST OPEN
 * (dur = -1). Output: one row per event with a valid ts: ts (only
 * when want_ts, else NULL: it is the event row's ts), dur (dur_valid:
 * bit clear = NULL, from a NULL closing end) and the event's row. Order: lanes in the order of their first event, then (ts, row).
 * NULL PER keys agree with each other. Errors: a negative ts of either
 * ("ts is below zero"), a closing end before its event ("ts or dur is
 * below zero"), out of memory. Returns 1 / 0. */
typedef struct rt_events_out {
  size_t n;
  int64_t *ts, *dur;
  uint64_t *dur_valid;
  uint32_t *row;
} rt_events_out;

typedef struct rt_events_stats {
  uint64_t events, lanes, lanes_sorted;
} rt_events_stats;

int rt_events_run(const rt_ivrel *ev, const rt_ivrel *stop, const int64_t *close,
                  const uint64_t *close_valid, const char *stage, bool want_ts, rt_events_out *out,
                  rt_events_stats *stats, rt_err *err);
void rt_events_free(rt_events_out *out);

/* INTERVAL UNION OF (ivunion.c). Regions: region i is [ts[i], ts[i] +
 * dur[i]) (dur 0: a point) in lane lane[i]; rows[j][i] is the row of
 * operand j that covers it, RT_NO_ROW where operand j has none there.
 * rep_op[l] / rep_row[l]: the first row of lane l (operand, row), for its
 * PER values. Order: lanes first-seen (operand 0's rows first), ts, point
 * regions first, then rows of operand 0, 1, … (RT_NO_ROW last). NULL PER
 * keys agree with each other. Errors: a negative ts or dur ("ts or dur is
 * below zero"), ts + dur beyond int64 ("integer overflow"), out of
 * memory. Returns 1 / 0 (out must be freed either way). */
typedef struct rt_union_out {
  int k;
  size_t n, cap;
  int64_t *ts, *dur;
  uint32_t *lane;
  uint32_t **rows;
  uint32_t *rep_op, *rep_row;
} rt_union_out;

int rt_union_run(int k, const rt_ivrel *ops, const char *stage, rt_union_out *out, rt_err *err);
void rt_union_free(rt_union_out *out);

/* end §9.1 */
/* ==== §9.2 interval reshaping (LANGUAGE.md §9.2) ============================ */

/* ---- rows by lane and time (ivgroups.c) ------------------------------------- */

/* The rows of a relation with non-NULL bounds, grouped by PER lane (NULL
 * agrees with NULL; lanes numbered in first-seen order, kept in `lanes`
 * for looking up an operand's rows). Per lane l, positions off[l] ..
 * off[l+1]-1 of byrow hold its rows in input order, and of row the same
 * rows by (ts, input order), s their ts. A negative ts or dur is
 * rt_iv_below_zero's error, ts + dur beyond int64 "integer overflow". */
typedef struct rt_ivgroups {
  rt_lanes lanes;
  uint32_t nl;
  uint32_t *off;
  uint32_t *byrow;
  uint32_t *row;
  uint64_t *s;
  size_t m;
  uint64_t rows_null;      /* skipped for NULL ts or dur */
  bool presorted;          /* already grouped and time-ordered: no sort ran */
} rt_ivgroups;
int rt_ivgroups_build(rt_ivgroups *g, const rt_ivrel *r, const char *stage, rt_err *err);
void rt_ivgroups_free(rt_ivgroups *g);

/* An operand's rows in an input's lanes (ivgroups.c): the rows with
 * non-NULL bounds whose PER key has a lane in `lanes` (NULL keys agree;
 * others are left out), per lane l items off[l] .. off[l+1]-1 sorted by
 * (start, end, row) with end = start + dur. Points (dur = 0) are left
 * out unless RT_IVU_POINTS; a negative ts or dur is rt_iv_below_zero's
 * error (what as there; op->name names the relation), or with
 * RT_IVU_OPEN_END a negative dur never ends (end = UINT64_MAX); a finite
 * ts + dur beyond int64 is "integer overflow". */
enum { RT_IVU_POINTS = 1, RT_IVU_OPEN_END = 2 };
typedef struct rt_ivops {
  uint32_t nl;
  uint32_t *off;           /* nl + 1 */
  uint64_t *s, *e;
  uint32_t *row;
} rt_ivops;
int rt_ivops_build(rt_ivops *o, const rt_lanes *lanes, const rt_ivrel *op, unsigned flags,
                   const char *stage, const char *what, rt_err *err);
void rt_ivops_free(rt_ivops *o);

/* ---- the union of an operand's rows per lane (ivunion.c) --------------------- */

/* Shared by INTERVAL SUBTRACT and the temporal semijoins (KEEP / DROP IF):
 * per lane of `lanes`, the union of the operand's rows (as rt_ivops_build
 * takes them, flags and errors included) as sorted, disjoint items
 * off[l] .. off[l+1]-1 of [s, e): positive rows that overlap or touch
 * are one item; with RT_IVU_POINTS a point no positive item holds
 * (s <= t < e) is an item with s == e, one per instant. Bounds are plain
 * (ts >= 0, so unsigned order is numeric order). */
typedef struct rt_ivunion {
  uint32_t nl;
  uint32_t *off;           /* nl + 1 */
  uint64_t *s, *e;
} rt_ivunion;
int rt_ivunion_build(rt_ivunion *u, const rt_lanes *lanes, const rt_ivrel *op, unsigned flags,
                     const char *stage, const char *what, rt_err *err);
void rt_ivunion_free(rt_ivunion *u);
/* One lane's union (ivunion.c): items sorted by start (start = end: a
 * point) to os, oe, in place allowed; pts scratch of n; returns the count. */
size_t rt_ivunion_lane(const uint64_t *s, const uint64_t *e, size_t n, uint64_t *os, uint64_t *oe,
                       uint64_t *pts);

/* ---- pieces: new bounds over input rows (pieces.c) ---------------------------- */

/* Output of SUBTRACT, SPLIT, QUANTIZE: piece i is [ts[i], ts[i]+dur[i]) of
 * input row row[i]; orow[i] (SPLIT, else NULL) the operand row covering
 * it or RT_NO_ROW; bucket[i] (QUANTIZE, else NULL). Order: lanes in
 * first-seen order, then ts, then input row (then operand order). */
typedef struct rt_ivpieces {
  size_t n, cap;
  int64_t *ts, *dur;
  uint32_t *row;
  uint32_t *orow;
  int64_t *bucket;
  bool with_orow, with_bucket;
} rt_ivpieces;
bool rt_ivpieces_push(rt_ivpieces *p, int64_t ts, int64_t dur, uint32_t row, uint32_t orow,
                      int64_t bucket);
/* Puts pieces from .. n-1 (one lane's, pushed in input row order) in (ts,
 * push order); a sorted range costs one scan. False when out of memory. */
bool rt_ivpieces_order(rt_ivpieces *p, size_t from);
void rt_ivpieces_free(rt_ivpieces *p);

/* INTERVAL SUBTRACT (subtract.c): each input row minus the union of the
 * operand's rows of its lane (operand points remove nothing); a point
 * survives when no operand row holds its instant. Errors as
 * rt_ivgroups_build / rt_ivunion_build. Returns 1 / 0. */
int rt_ivsubtract_run(const rt_ivrel *in, const rt_ivrel *op, const char *stage, rt_ivpieces *out,
                      rt_err *err);

/* INTERVAL SPLIT (split.c): each input row cut at every start and end
 * (a point's instant too) of the operand's rows of its lane inside it;
 * each piece once per operand row covering it (a positive piece: the
 * rows holding all of it; a point: those holding its instant, points
 * at it included), in operand (start, row) order, or once with
 * RT_NO_ROW. Returns 1 / 0. */
int rt_ivsplit_run(const rt_ivrel *in, const rt_ivrel *op, const char *stage, rt_ivpieces *out,
                   rt_err *err);

/* INTERVAL QUANTIZE (quantize.c): each row cut at every origin + k*width
 * (width > 0), each piece with bucket floor((piece.ts - origin) / width);
 * a point is one piece. origin: per row (valid NULL: all valid); a NULL
 * origin is the smallest ts of the input (TRACE START without a trace);
 * no origin array: that smallest ts when least_default, else 0 (ZERO).
 * Returns 1 / 0. */
int rt_ivquantize_run(const rt_ivrel *in, int64_t width, const int64_t *origin,
                      const uint64_t *origin_valid, bool least_default, const char *stage,
                      rt_ivpieces *out, rt_err *err);

/* INTERVAL SET BOUNDS (quantize.c): the new bounds of every row checked:
 * a negative ts or dur is rt_iv_below_zero's error (NULLs pass). 1 / 0. */
int rt_ivbounds_check(const rt_ivrel *in, const char *stage, rt_err *err);

/* INTERVAL MERGE OVERLAPPING / CONSECUTIVE BY (merge.c): rows of a lane
 * in (ts, input order) that overlap or touch the group so far (ts <= its
 * end) join it; with nby BY keys (consecutive) only while their values
 * equal the group's first row's (NULL equals NULL). Output: the rows
 * with non-NULL bounds in that order (row), each one's group (gid, and
 * gid32 for selections), and per group its bounds. Returns 1 / 0. */
typedef struct rt_ivmerge_out {
  size_t n, ng;
  uint32_t *row, *gid32;
  int64_t *gid;
  int64_t *ts, *dur;       /* per group */
} rt_ivmerge_out;
int rt_ivmerge_run(const rt_ivrel *in, int nby, const rt_ivkey *by, const char *stage,
                   rt_ivmerge_out *out, rt_err *err);
void rt_ivmerge_free(rt_ivmerge_out *out);

/* ---- §9.3 interval matching (ivsrc) ----------------------------------------- */

/* INTERVAL FIND (ivfind.c): the operand's keys (starts, or with `ending`
 * ends) per lane, sorted by (key, row). Operand rows with NULL bounds, and
 * for ENDING those that never end (dur < 0), are left out; NULL PER keys
 * agree. Errors: an end beyond int64 ("integer overflow"), out of memory. */
typedef struct rt_find {
  bool ending, before;
  const char *stage;
  rt_lanes lanes;
  uint32_t nlanes;
  uint32_t *off;
  uint64_t *key;           /* rt_iv_u order */
  uint32_t *row;
} rt_find;

int rt_find_build(rt_find *f, const rt_ivrel *op, bool ending, bool before, const char *stage,
                  rt_err *err);
/* The operand row nearest the anchor instant in a lane at or after it
 * (or at or before it, `before`), the first such row on a tie; with
 * `limited`, no farther than `within`. -1 when there is none. */
int64_t rt_find_one(const rt_find *f, uint32_t lane, int64_t anchor, bool limited, uint64_t within);
/* For every input row (ts, dur: the anchor's bounds; its PER keys in the
 * operand's order and types): the anchor is ts, or ts + dur with
 * anchor_end (none when dur < 0); within (validity within_valid) the
 * WITHIN distance per input row or NULL. Appends (input, operand row)
 * pairs in input order; with `left` a row without match once with
 * RT_NO_ROW. A NULL anchor or NULL distance finds nothing. Errors: an
 * anchor beyond int64 ("integer overflow"), a negative distance, out of
 * memory. Returns 1 / 0. */
int rt_find_probe(const rt_find *f, const rt_ivrel *in, bool anchor_end, const int64_t *within,
                  const uint64_t *within_valid, bool left, rt_ijpairs *out, rt_err *err);
void rt_find_free(rt_find *f);

/* The union of the operand's rows per lane as an INTERVAL JOIN index
 * (ijunion.c): its items are the union's disjoint pieces (rows that
 * overlap or touch merge; points held by a piece disappear; row[] is the
 * item's own index). NULL PER keys agree; rows with NULL bounds are left
 * out. For INTERVAL KEEP IF / DROP IF (an input row against the union of
 * its lane) and any operator that needs the time a relation covers.
 * Errors as rt_ijoin_build. */
int rt_ijoin_build_union(rt_ijoin *j, const rt_ivrel *op, rt_ijrel rel, const char *stage,
                         rt_err *err);
/* Whether [ts, ts+dur) (dur < 0: never ends) stands in j's relationship to
 * some item of lane (early exit). */
bool rt_ijoin_any(const rt_ijoin *j, uint32_t lane, int64_t ts, int64_t dur);

/* end §9.3 */


#endif
