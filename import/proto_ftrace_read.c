/*
 * proto_ftrace_read.c — the read-time half of ftrace (TRACES.md §3.9.1,
 * §3.9.2, §3.9.7): splits an FtraceEventBundle into per-CPU streams.
 *
 * Each FtraceEvent becomes a sort item pointing at it inside the bundle
 * (its timestamp converted from the bundle's ftrace clock); compact_sched
 * arrays are decoded here into 32-byte switch / waking records (their
 * timestamps are deltas within the bundle, so they must be summed in file
 * order), with comm strings interned. A mark per bundle remembers its
 * sequence, for the interned kernel symbols of sched_blocked_reason.
 */
#include <stdlib.h>

#include "import/proto_import.h"

enum { FC_UNSPECIFIED = 0, FC_UNKNOWN = 1, FC_GLOBAL = 2, FC_LOCAL = 3, FC_MONO_RAW = 4 };

typedef struct bundle_clock {
  uint32_t clock;        /* builtin clock to convert from */
  int64_t offset;        /* added first (global/local ftrace clocks) */
  uint32_t seq;
} bundle_clock;

static int bundle_ts(pb_imp *m, const bundle_clock *bc, int64_t raw, int64_t *out) {
  if (!pb_clock_convert(m, bc->clock, bc->seq, pb_add(raw, bc->offset), out)) {
    pb_stat(m, IM_STAT_CLOCK_SYNC_FAILURE);
    return 0;
  }
  if (*out < 0) {
    pb_stat(m, IM_STAT_TRACE_SORTER_NEGATIVE_TIMESTAMP_DROPPED);
    return 0;
  }
  if (*out > m->max_ts) m->max_ts = *out;
  return 1;
}

/* The logical offset of a pointer into the segment being read. */
static uint64_t lpos_of(const pb_imp *m, const uint8_t *p) {
  const pb_seg *s = &m->segs.v[m->segs.n - 1];
  return s->lstart + (uint64_t)(p - s->base);
}

static size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) v >>= 7, n++;
  return n;
}

uint32_t pb_bundle_seq_at(const pb_imp *m, uint64_t lpos) {
  size_t lo = 0, hi = m->bundle_lpos.n;
  if (!hi) return 0;
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (m->bundle_lpos.v[mid] <= lpos) lo = mid;
    else hi = mid;
  }
  return m->bundle_seq.v[lo];
}

/* ---- compact_sched -------------------------------------------------------------- */

enum {
  CS_SW_TS = 1, CS_SW_PREV_STATE = 2, CS_SW_NEXT_PID = 3, CS_SW_NEXT_PRIO = 4, CS_INTERN = 5,
  CS_SW_COMM = 6, CS_WK_TS = 7, CS_WK_PID = 8, CS_WK_CPU = 9, CS_WK_PRIO = 10, CS_WK_COMM = 11,
  CS_WK_FLAGS = 12, CS_NFIELDS = 13,
};

static int read_compact(pb_imp *m, uint32_t cpu, const bundle_clock *bc, pb_span cs) {
  pb_field arr[CS_NFIELDS];
  int has[CS_NFIELDS] = {0};
  pb_reader r;
  pb_field f;
  int errors = 0;
  m->comm_tmp.n = 0;
  pb_init_span(&r, cs);
  while (pb_next(&r, &f)) {
    if (f.id == CS_INTERN) {
      if (f.wt != PB_LEN) continue;
      uint32_t id = im_str(m->t, (const char *)f.s.p, f.s.n);
      if (!PB_PUSH(m->comm_tmp, id)) return im_oom(m->t);
      continue;
    }
    if (f.id >= CS_NFIELDS) continue;
    if (has[f.id]) errors = 1;   /* a second blob of one array: not written by traced */
    else arr[f.id] = f, has[f.id] = 1;
  }
  if (r.bad) errors = 1;
  /* switches: timestamp, prev_state, next_pid, next_prio, comm index */
  static const int sw[5] = {CS_SW_TS, CS_SW_PREV_STATE, CS_SW_NEXT_PID, CS_SW_NEXT_PRIO,
                            CS_SW_COMM};
  static const int wk[6] = {CS_WK_TS, CS_WK_PID, CS_WK_CPU, CS_WK_PRIO, CS_WK_COMM, CS_WK_FLAGS};
  for (int pass = 0; pass < 2; pass++) {
    const int *ids = pass ? wk : sw;
    int nids = pass ? 6 : 5;
    if (!has[ids[0]]) {
      for (int i = 1; i < nids; i++) errors |= has[ids[i]] && arr[ids[i]].v;
      continue;
    }
    pb_rep it[6];
    int present[6];
    for (int i = 0; i < nids; i++) {
      present[i] = has[ids[i]];
      if (present[i]) pb_rep_init(&it[i], &arr[ids[i]], PB_VARINT);
    }
    /* waking_common_flags is optional (older traces); the rest must be there */
    for (int i = 1; i < nids; i++)
      if (!present[i] && !(pass && ids[i] == CS_WK_FLAGS)) errors = 1;
    if (!pb_stream_compact(m, cpu, pass)) return 0;
    pb_stream *st = &m->streams.v[m->stream_compact[pass][cpu]];
    int64_t ts = 0;
    uint64_t v[6];
    for (;;) {
      if (!pb_rep_next(&it[0], &v[0])) break;
      int ok = 1;
      for (int i = 1; i < nids; i++) {
        v[i] = 0;
        if (present[i] && !pb_rep_next(&it[i], &v[i])) ok = 0;
      }
      if (!ok) {
        errors = 1;
        break;
      }
      ts = pb_add(ts, (int64_t)v[0]);
      uint64_t idx = v[4];
      uint32_t comm = IM_NULL_STR;
      if (idx < m->comm_tmp.n) comm = m->comm_tmp.v[idx];
      else errors = 1;
      pb_csched rec;
      memset(&rec, 0, sizeof rec);
      if (!bundle_ts(m, bc, ts, &rec.ts)) continue;
      rec.comm = comm;
      if (!pass) {
        rec.kind = PB_CS_SWITCH;
        rec.a = (int64_t)v[1];
        rec.pid = (int32_t)(int64_t)v[2];
        rec.prio = (int32_t)(int64_t)v[3];
      } else {
        rec.kind = PB_CS_WAKING;
        rec.pid = (int32_t)(int64_t)v[1];
        rec.a = (int64_t)(int32_t)v[2];
        rec.prio = (int32_t)(int64_t)v[3];
        rec.flags = (uint16_t)v[5];
      }
      if (!pb_stream_push(st, &rec)) return im_oom(m->t);
    }
    /* arrays longer than the timestamps */
    for (int i = 1; i < nids; i++) {
      uint64_t x;
      if (present[i] && pb_rep_next(&it[i], &x)) errors = 1;
      if (present[i] && it[i].bad) errors = 1;
    }
    if (it[0].bad) errors = 1;
  }
  if (errors) pb_stat(m, IM_STAT_COMPACT_SCHED_HAS_PARSE_ERRORS);
  return 1;
}

/* ---- the bundle -------------------------------------------------------------------- */

int pb_ftrace_read(pb_imp *m, pb_seq *s, uint64_t lpos, pb_span bundle) {
  pb_reader r;
  pb_field f;
  int has_cpu = 0, has_fts = 0, has_bts = 0;
  uint64_t cpu = 0;
  uint32_t fclock = FC_UNSPECIFIED;
  int64_t fts = 0, bts = 0, prev_end = -1, last_read = -1;
  int64_t lost = 0;
  pb_init_span(&r, bundle);
  while (pb_next(&r, &f)) {
    switch (f.id) {
    case 1: has_cpu = 1, cpu = f.v; break;
    case 3: lost = f.v != 0; break;
    case 5: fclock = pb_u32(&f); break;
    case 6: has_fts = 1, fts = pb_i64(&f); break;
    case 7: has_bts = 1, bts = pb_i64(&f); break;
    case 9: last_read = pb_i64(&f); break;
    case 10: prev_end = pb_i64(&f); break;
    }
  }
  if (r.bad) pb_stat(m, IM_STAT_FTRACE_BUNDLE_TOKENIZER_ERRORS);
  if (!has_cpu || cpu >= 1024 || fclock == FC_UNKNOWN) {
    /* TP fails the whole load for cpu >= 1024 or an unknown clock; the
     * bundle alone is dropped here (docs/DECISIONS.md) */
    pb_stat(m, IM_STAT_FTRACE_BUNDLE_TOKENIZER_ERRORS);
    if (has_cpu && cpu >= 1024) pb_damage(m, "ftrace bundle for cpu %llu (>= 1024) dropped",
                                          (unsigned long long)cpu);
    return 1;
  }
  if (lost) im_stat_add_indexed(m->t, IM_STAT_FTRACE_CPU_HAS_DATA_LOSS, (int64_t)cpu, 1);
  bundle_clock bc = {.clock = PB_CLK_BOOTTIME, .offset = 0, .seq = s->id};
  if (fclock == FC_MONO_RAW) bc.clock = PB_CLK_MONOTONIC_RAW;
  if ((fclock == FC_GLOBAL || fclock == FC_LOCAL) && has_fts && has_bts) bc.offset = pb_sub(bts, fts);

  /* §3.9.2: the first bundle of each CPU that says where its data starts */
  int64_t start = prev_end >= 0 ? prev_end : last_read;
  if (start >= 0 && !m->ftrace_cpu_seen_start[cpu]) {
    int64_t c;
    m->ftrace_cpu_seen_start[cpu] = 1;
    if (pb_clock_convert(m, bc.clock, bc.seq, pb_add(start, bc.offset), &c) && c > m->ftrace_data_start)
      m->ftrace_data_start = c;
  }

  if (!PB_PUSH(m->bundle_lpos, lpos) || !PB_PUSH(m->bundle_seq, pb_seq_index(m, s)))
    return im_oom(m->t);
  int32_t si = -1;
  pb_init_span(&r, bundle);
  while (pb_next(&r, &f)) {
    if (f.wt != PB_LEN) continue;
    if (f.id == 4) {
      if (!read_compact(m, (uint32_t)cpu, &bc, f.s)) return 0;
      continue;
    }
    if (f.id != 2) continue;
    /* the event's timestamp: field 1, nearly always first */
    pb_reader er;
    pb_field ef;
    int has_ts = 0;
    int64_t raw = 0;
    pb_init_span(&er, f.s);
    while (pb_next(&er, &ef))
      if (ef.id == 1 && ef.wt == PB_VARINT) {
        has_ts = 1, raw = (int64_t)ef.v;
        break;
      }
    if (!has_ts) {
      pb_stat(m, IM_STAT_FTRACE_BUNDLE_TOKENIZER_ERRORS);
      continue;
    }
    pb_item it;
    if (!bundle_ts(m, &bc, raw, &it.ts)) continue;
    it.ref = PB_REF(lpos_of(m, f.s.p - varint_size(f.s.n)), 0);
    if (si < 0) {
      if (!pb_stream_ftrace(m, (uint32_t)cpu)) return 0;
      si = m->stream_ftrace[cpu];
    }
    if (!pb_stream_push(&m->streams.v[si], &it)) return im_oom(m->t);
  }
  if (r.bad) pb_stat(m, IM_STAT_FTRACE_BUNDLE_TOKENIZER_ERRORS);
  return 1;
}
