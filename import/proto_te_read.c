/*
 * proto_te_read.c — the read-time half of TrackEvent (TRACES.md §3.6.1,
 * §3.6.5, §3.7.1): what depends on file order is resolved here, before
 * sorting.
 *
 *  - The event time: timestamp_delta_us adds to the sequence's reference
 *    time (set by its thread descriptor), timestamp_absolute_us is
 *    MONOTONIC µs, else the packet timestamp in its clock.
 *  - Thread time and instruction count, delta or absolute.
 *  - Counter values: × unit_multiplier, and for incremental counter
 *    descriptors added to the running value of that track (reset when the
 *    sequence's incremental state is cleared or lost).
 *  - Track descriptor reservations: the uuid's kind, parent, pid/tid and
 *    counter details, needed above before the descriptor is parsed.
 *
 * What cannot be re-read from the packet later (delta-resolved times,
 * counter values) goes into an aux record keyed by the packet's logical
 * offset; the sort item carries PB_IF_AUX.
 */
#include <stdlib.h>

#include "import/proto_import.h"

pb_reservation *pb_res_get(pb_imp *m, uint64_t uuid) {
  if (m->last_res1 && m->last_uuid == uuid) return &m->res.v[m->last_res1 - 1];
  int64_t i = im_map_get(&m->res_by_uuid, uuid);
  if (i == IM_NONE) return NULL;
  m->last_uuid = uuid, m->last_res1 = (size_t)i + 1;
  return &m->res.v[i];
}

void pb_td_reserve(pb_imp *m, pb_seq *s, pb_span td) {
  pb_reservation r = {.kind = 0, .track = IM_NONE, .state_track = IM_NONE, .upid = IM_NONE, .utid = IM_NONE,
                      .unit_mult = 0, .name = IM_NULL_STR, .merge_key = IM_NULL_STR,
                      .description = IM_NULL_STR, .unit_name = IM_NULL_STR,
                      .y_axis = IM_NULL_STR, .categories = IM_NULL_STR};
  int has_uuid = 0, has_pid = 0, has_tid = 0;
  pb_reader rd;
  pb_field f;
  pb_init_span(&rd, td);
  while (pb_next(&rd, &f)) {
    switch (f.id) {
    case 1: r.uuid = f.v, has_uuid = 1; break;
    case 5: r.parent = f.v; break;
    case 3: {   /* ProcessDescriptor */
      pb_field pf;
      if (f.wt == PB_LEN && pb_find(f.s, 1, &pf)) r.pid = pb_i32(&pf), has_pid = 1;
      if (r.kind == 0) r.kind = 1;
      break;
    }
    case 4: {   /* ThreadDescriptor */
      pb_reader tr;
      pb_field tf;
      if (f.wt != PB_LEN) break;
      pb_init_span(&tr, f.s);
      while (pb_next(&tr, &tf)) {
        if (tf.id == 1) r.pid = pb_i32(&tf), has_pid = 1;
        if (tf.id == 2) r.tid = pb_i32(&tf), has_tid = 1;
      }
      r.kind = 2;
      break;
    }
    case 8: {   /* CounterDescriptor */
      pb_reader cr;
      pb_field cf;
      r.is_counter = 1;
      if (f.wt != PB_LEN) break;
      pb_init_span(&cr, f.s);
      while (pb_next(&cr, &cf)) {
        if (cf.id == 4) r.unit_mult = pb_i64(&cf);
        if (cf.id == 5) r.incremental = pb_bool(&cf);
      }
      break;
    }
    }
  }
  if (rd.bad) pb_stat(m, IM_STAT_PROTO_MALFORMED_FIELDS);
  if (!has_uuid) {
    pb_stat(m, IM_STAT_TRACK_DESCRIPTOR_MISSING_UUID);
    return;
  }
  /* a thread needs pid and tid, a process its pid (§3.7.1) */
  if ((r.kind == 2 && (!has_pid || !has_tid)) || (r.kind == 1 && !has_pid)) r.kind = 0;
  if (r.is_counter) r.kind = 3;
  r.seq = s->id;
  pb_reservation *old = pb_res_get(m, r.uuid);
  if (old) {
    if (old->parent != r.parent || old->kind != r.kind || old->pid != r.pid ||
        old->tid != r.tid)
      pb_stat(m, IM_STAT_TRACK_DESCRIPTOR_CONFLICTING_RESERVATION);
    else
      old->unit_mult = r.unit_mult, old->incremental = r.incremental;
    return;
  }
  if (!PB_PUSH(m->res, r) || !im_map_put(&m->res_by_uuid, r.uuid, (int64_t)m->res.n - 1))
    im_oom(m->t);
}

/* A counter value through its descriptor: multiplier, then incremental
 * accumulation. 0 when the uuid is described but not as a counter. */
static int counter_value(pb_imp *m, uint64_t uuid, uint32_t seq, double *v) {
  pb_reservation *r = pb_res_get(m, uuid);
  if (!r) return 1;   /* described later (or never): checked when parsed */
  if (!r->is_counter) return 0;
  if (r->unit_mult > 0) *v *= (double)r->unit_mult;
  if (r->incremental) {
    if (r->seq != seq) r->seq = seq;
    r->latest += *v;
    *v = r->latest;
  }
  return 1;
}

/* Extra counter values v[i] on uuids[i] (as many as both have). */
static int extra_values(pb_imp *m, uint32_t seq, const double *v, int nv, const uint64_t *uuids,
                        int nu) {
  for (int i = 0; i < nv && i < nu; i++) {
    double val = v[i];
    if (!counter_value(m, uuids[i], seq, &val)) {
      pb_stat(m, IM_STAT_TRACK_EVENT_COUNTER_INVALID_TRACK_UUID);
      continue;
    }
    pb_extra x = {.uuid = uuids[i], .value = val};
    if (!PB_PUSH(m->extra, x)) return im_oom(m->t);
  }
  return 1;
}

int pb_te_read(pb_imp *m, pb_seq *s, uint64_t lpos, pb_span te, int has_ts, int64_t pkt_ts,
               uint32_t clock_id, int at_eof) {
  int has_delta = 0, has_abs = 0, has_ttd = 0, has_tta = 0, has_tid = 0, has_tia = 0;
  int64_t delta = 0, abs_us = 0, ttd = 0, tta = 0, tid = 0, tia = 0;
  int type = 0, has_track = 0, has_iv = 0, has_dv = 0;
  uint64_t track = 0;
  int64_t iv = 0;
  double dv = 0;
  uint64_t xu[8], xdu[8];
  double xv[8], xdv[8];
  int nxu = 0, nxdu = 0, nxv = 0, nxdv = 0;
  pb_reader r;
  pb_field f;
  pb_rep it;
  uint64_t v;
  pb_init_span(&r, te);
  while (pb_next(&r, &f)) {
    switch (f.id) {
    case 1: has_delta = 1, delta = pb_i64(&f); break;
    case 16: has_abs = 1, abs_us = pb_i64(&f); break;
    case 2: has_ttd = 1, ttd = pb_i64(&f); break;
    case 17: has_tta = 1, tta = pb_i64(&f); break;
    case 8: has_tid = 1, tid = pb_i64(&f); break;
    case 20: has_tia = 1, tia = pb_i64(&f); break;
    case 9: type = (int)f.v; break;
    case 11: has_track = 1, track = f.v; break;
    case 30: has_iv = 1, iv = pb_i64(&f); break;
    case 44: has_dv = 1, dv = pb_double(&f); break;
    case 31: case 45: case 12: case 46:
      pb_rep_init(&it, &f, f.id == 46 ? PB_FIXED64 : PB_VARINT);
      while (pb_rep_next(&it, &v)) {
        if (f.id == 31 && nxu < 8) xu[nxu++] = v;
        if (f.id == 45 && nxdu < 8) xdu[nxdu++] = v;
        if (f.id == 12 && nxv < 8) xv[nxv++] = (double)(int64_t)v;
        if (f.id == 46 && nxdv < 8) {
          double d;
          memcpy(&d, &v, 8);
          xdv[nxdv++] = d;
        }
      }
      break;
    }
  }
  if (r.bad) pb_stat(m, IM_STAT_PROTO_MALFORMED_FIELDS);

  /* §3.6.1: the event time */
  int64_t ts;
  uint32_t clock = 0;
  if (has_delta) {
    if (!s->ts_valid) {
      pb_stat(m, IM_STAT_TRACK_EVENT_SKIPPED_PACKET_DELTA_TIME);
      return 1;
    }
    ts = s->ref_ts = pb_add(s->ref_ts, pb_mul(delta, 1000));
  } else if (has_abs) {
    ts = pb_mul(abs_us, 1000);
    int64_t c;
    if (pb_clock_convert(m, PB_CLK_MONOTONIC, s->id, ts, &c)) ts = c;
  } else if (has_ts) {
    ts = pkt_ts;
    clock = clock_id;
  } else {
    pb_stat(m, IM_STAT_TRACK_EVENT_MISSING_TIMESTAMP);
    return 1;
  }
  if (!clock && ts < 0) {
    pb_stat(m, IM_STAT_TRACK_EVENT_INVALID_TIMESTAMP);
    return 1;
  }

  pb_aux a = {.lpos = lpos, .extra_first = (uint32_t)m->extra.n};
  if (has_ttd) {
    if (s->ts_valid) a.tt = s->ref_tt = pb_add(s->ref_tt, pb_mul(ttd, 1000)), a.flags |= PB_AUX_TT;
  } else if (has_tta) {
    a.tt = pb_mul(tta, 1000), a.flags |= PB_AUX_TT;
  }
  if (has_tid) {
    if (s->ts_valid) a.ti = s->ref_ti = pb_add(s->ref_ti, tid), a.flags |= PB_AUX_TI;
  } else if (has_tia) {
    a.ti = tia, a.flags |= PB_AUX_TI;
  }

  /* §3.6.5: counter values */
  if (type == 4) {
    if (!has_track && s->has_def_track) has_track = 1, track = s->def_track_uuid;
    if (!has_track || !track) {
      pb_stat(m, IM_STAT_TRACK_EVENT_COUNTER_MISSING_TRACK_UUID);
      return 1;
    }
    if (!has_iv && !has_dv) {
      pb_stat(m, IM_STAT_TRACK_EVENT_COUNTER_MISSING_VALUE);
      return 1;
    }
    double val = has_dv ? dv : (double)iv;
    if (has_iv && has_dv) val = dv;
    if (!counter_value(m, track, s->id, &val)) {
      pb_stat(m, IM_STAT_TRACK_EVENT_COUNTER_INVALID_TRACK_UUID);
      return 1;
    }
    a.value = val;
    a.flags |= PB_AUX_VALUE;
  }
  /* extra counters: values go to the event's uuids, else the defaults' */
  if (!extra_values(m, s->id, xv, nxv, nxu ? xu : s->def_extra, nxu ? nxu : s->n_def_extra) ||
      !extra_values(m, s->id, xdv, nxdv, nxdu ? xdu : s->def_extra_d,
                    nxdu ? nxdu : s->n_def_extra_d))
    return 0;
  a.nextra = (uint32_t)m->extra.n - a.extra_first;
  uint32_t flags = 0;
  if (a.flags || a.nextra) {
    if (!PB_PUSH(m->aux, a)) return im_oom(m->t);
    flags = PB_IF_AUX;
  }
  return pb_push_packet(m, pb_stream_track_event(m), lpos, clock, s->id, ts, flags, at_eof);
}

const pb_aux *pb_aux_at(pb_imp *m, uint64_t lpos) {
  size_t n = m->aux.n, c = m->aux_cursor;
  /* the parse pass mostly walks aux records in order: try the cursor */
  for (size_t k = c; k < n && k < c + 4; k++)
    if (m->aux.v[k].lpos == lpos) return &m->aux.v[m->aux_cursor = k];
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (m->aux.v[mid].lpos < lpos) lo = mid + 1;
    else hi = mid;
  }
  if (lo < n && m->aux.v[lo].lpos == lpos) return &m->aux.v[m->aux_cursor = lo];
  return NULL;
}
