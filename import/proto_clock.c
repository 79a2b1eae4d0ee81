/*
 * proto_clock.c — clock snapshots and the conversion of packet timestamps
 * to trace time (TRACES.md §3.4).
 *
 * Each ClockSnapshot links every pair of its clocks; the values of a pair
 * are kept in arrival order (ordered by the first clock, as clocks only
 * move forward). A timestamp converts along the shortest chain of pairs
 * (breadth-first, at most 4 hops) from its clock to the trace clock; per
 * hop it takes the latest snapshot whose source value is <= t (the
 * earliest when t precedes them all) and adds (target − source). Worked
 * example: snapshots {MONOTONIC 100, BOOTTIME 1100} and {MONOTONIC 200,
 * BOOTTIME 1250}: MONOTONIC 150 → 150 − 100 + 1100 = 1150; MONOTONIC 250
 * → 250 − 200 + 1250 = 1300; MONOTONIC 50 → 1050.
 *
 * Clock ids 64–127 are scoped to the sequence that wrote the snapshot;
 * they are keyed (sequence << 32) | id. Values are scaled by the clock's
 * unit_multiplier_ns; an incremental clock's timestamps are deltas added
 * to its last value (a snapshot sets that value).
 */
#include <stdlib.h>

#include "import/proto_import.h"

enum { MAX_HOPS = 4, SNAP_MAX = 64 };

static uint64_t clock_key(uint32_t id, uint32_t seq) {
  return id >= 64 && id <= 127 ? ((uint64_t)seq << 32) | id : id;
}

static pb_clock *clock_find(pb_clocks *c, uint64_t key) {
  for (size_t i = 0; i < c->clocks.n; i++)
    if (c->clocks.v[i].key == key) return &c->clocks.v[i];
  return NULL;
}

static pb_clock_pair *pair_find(pb_clocks *c, uint64_t a, uint64_t b) {
  for (size_t i = 0; i < c->pairs.n; i++)
    if (c->pairs.v[i].a == a && c->pairs.v[i].b == b) return &c->pairs.v[i];
  return NULL;
}

void pb_clock_snapshot(pb_imp *m, pb_span snap, uint32_t seq) {
  pb_clocks *c = &m->clk;
  uint64_t keys[SNAP_MAX];
  int64_t vals[SNAP_MAX];
  int n = 0;
  pb_reader r;
  pb_field f;
  pb_init_span(&r, snap);
  while (pb_next(&r, &f)) {
    if (f.id == 2 && f.wt == PB_VARINT) {
      if (!c->trace_clock_set) {
        /* the trace clock can change only before any timestamp used it */
        if (!c->converted_any || f.v == c->trace_clock) c->trace_clock = f.v;
        else pb_stat(m, IM_STAT_CLOCK_SYNC_FAILURE);
        c->trace_clock_set = 1;
        im_meta_int(m->t, "trace_time_clock_id", (int64_t)c->trace_clock);
      }
      continue;
    }
    if (f.id != 1 || f.wt != PB_LEN || n == SNAP_MAX) continue;
    pb_reader cr;
    pb_field cf;
    uint32_t id = 0;
    int64_t ts = 0, unit = 1;
    int incr = 0, has_id = 0;
    pb_init_span(&cr, f.s);
    while (pb_next(&cr, &cf)) {
      if (cf.id == 1) id = pb_u32(&cf), has_id = 1;
      else if (cf.id == 2) ts = pb_i64(&cf);
      else if (cf.id == 3) incr = pb_bool(&cf);
      else if (cf.id == 4 && cf.v > 0) unit = pb_i64(&cf);
    }
    if (cr.bad) pb_stat(m, IM_STAT_PROTO_MALFORMED_FIELDS);
    if (!has_id) continue;
    uint64_t key = clock_key(id, seq);
    pb_clock *ck = clock_find(c, key);
    if (!ck) {
      pb_clock nc = {.key = key};
      if (!PB_PUSH(c->clocks, nc)) {
        im_oom(m->t);
        return;
      }
      ck = &c->clocks.v[c->clocks.n - 1];
    }
    ck->unit = unit;
    ck->incremental = incr;
    ck->last = pb_mul(ts, unit);
    keys[n] = key;
    vals[n] = pb_mul(ts, unit);
    n++;
  }
  if (r.bad) pb_stat(m, IM_STAT_PROTO_MALFORMED_FIELDS);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      if (keys[i] == keys[j]) continue;
      pb_clock_pair *p = pair_find(c, keys[i], keys[j]);
      if (!p) {
        pb_clock_pair np = {.a = keys[i], .b = keys[j]};
        if (!PB_PUSH(c->pairs, np)) {
          im_oom(m->t);
          return;
        }
        p = &c->pairs.v[c->pairs.n - 1];
      }
      if (p->va.n && vals[i] < p->va.v[p->va.n - 1]) p->unsorted = 1;
      if (!PB_PUSH(p->va, vals[i]) || !PB_PUSH(p->vb, vals[j])) {
        im_oom(m->t);
        return;
      }
    }
  c->nsnapshots++;
  c->cache_src = UINT64_MAX;   /* new edges: find paths again */
}

/* Insertion sort of a pair's snapshots by source value (rare: only when a
 * clock went backwards between snapshots). */
static void pair_sort(pb_clock_pair *p) {
  for (size_t i = 1; i < p->va.n; i++) {
    int64_t a = p->va.v[i], b = p->vb.v[i];
    size_t j = i;
    for (; j > 0 && p->va.v[j - 1] > a; j--) {
      p->va.v[j] = p->va.v[j - 1];
      p->vb.v[j] = p->vb.v[j - 1];
    }
    p->va.v[j] = a;
    p->vb.v[j] = b;
  }
  p->unsorted = 0;
}

static int64_t hop(pb_clock_pair *p, int64_t t) {
  if (p->unsorted) pair_sort(p);
  size_t lo = 0, hi = p->va.n;   /* first index with va > t */
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (p->va.v[mid] <= t) lo = mid + 1;
    else hi = mid;
  }
  size_t i = lo ? lo - 1 : 0;
  return pb_add(pb_sub(t, p->va.v[i]), p->vb.v[i]);
}

/* Breadth-first search of a chain src → trace clock; fills the cache. */
static int find_path(pb_clocks *c, uint64_t src) {
  uint64_t q[64];
  int prev[64], depth[64], via[64];
  int qn = 0;
  q[qn] = src, prev[qn] = -1, depth[qn] = 0, via[qn] = -1, qn++;
  for (int h = 0; h < qn; h++) {
    if (q[h] == c->trace_clock) {
      c->cache_src = src;
      c->cache_hops = depth[h];
      for (int k = h; prev[k] >= 0; k = prev[k]) c->cache_path[depth[k] - 1] = (uint64_t)via[k];
      return 1;
    }
    if (depth[h] == MAX_HOPS) continue;
    for (size_t i = 0; i < c->pairs.n && qn < 64; i++) {
      if (c->pairs.v[i].a != q[h]) continue;
      uint64_t b = c->pairs.v[i].b;
      int seen = 0;
      for (int k = 0; k < qn; k++) seen |= q[k] == b;
      if (seen) continue;
      q[qn] = b, prev[qn] = h, depth[qn] = depth[h] + 1, via[qn] = (int)i, qn++;
    }
  }
  return 0;
}

int pb_clock_convert(pb_imp *m, uint32_t clock_id, uint32_t seq, int64_t ts, int64_t *out) {
  pb_clocks *c = &m->clk;
  uint64_t key = clock_key(clock_id, seq);
  c->converted_any = 1;
  if (c->clocks.n) {
    pb_clock *ck = clock_find(c, key);
    if (ck) {
      ts = pb_mul(ts, ck->unit);
      if (ck->incremental) ts = ck->last = pb_add(ck->last, ts);
    }
  }
  if (key == c->trace_clock) {
    *out = ts;
    return 1;
  }
  if (c->cache_src != key && !find_path(c, key)) {
    /* BOOTTIME with no snapshot at all: identity (TP does the same) */
    if (key == PB_CLK_BOOTTIME && c->nsnapshots == 0) {
      *out = ts;
      return 1;
    }
    return 0;
  }
  for (int h = 0; h < c->cache_hops; h++)
    ts = hop(&c->pairs.v[c->cache_path[h]], ts);
  *out = ts;
  return 1;
}

void pb_clocks_free(pb_clocks *c) {
  for (size_t i = 0; i < c->pairs.n; i++) {
    free(c->pairs.v[i].va.v);
    free(c->pairs.v[i].vb.v);
  }
  free(c->pairs.v);
  free(c->clocks.v);
  memset(c, 0, sizeof *c);
}
