/*
 * proto_parse.c — the sorted pass of the protobuf importer: sorts the
 * streams, merges them in (ts, stream, arrival) order and hands each item
 * to its parser with what it needs of its packet (sequence, generation).
 *
 * Items point back into the buffer (logical offsets, proto_import.h), so
 * each packet is decoded a second time here, in place.
 */
#include <stdlib.h>

#include "import/proto_import.h"

enum { TP_PROCESS_TREE = 2, TP_SYS_STATS = 7, TP_PROCESS_STATS = 9, TP_TRACK_EVENT = 11,
       TP_PROCESS_DESC = 43, TP_THREAD_DESC = 44, TP_TRACK_DESC = 60 };

/* The packet at an item's logical offset, with its sequence context. */
static int packet_ctx(pb_imp *m, const pb_item *it, pb_pctx *c, uint32_t *kind, pb_span *payload) {
  memset(c, 0, sizeof *c);
  c->ts = it->ts;
  c->lpos = PB_REF_OFF(it->ref);
  if (!pb_record_at(m, c->lpos, &c->pkt)) return 0;
  pb_reader r;
  pb_field f;
  *kind = 0;
  pb_init_span(&r, c->pkt);
  while (pb_next(&r, &f)) {
    switch (f.id) {
    case 10: c->seq_id = pb_u32(&f); break;
    case 87: c->first_on_seq = pb_bool(&f); break;
    case TP_PROCESS_TREE: case TP_SYS_STATS: case TP_PROCESS_STATS: case TP_TRACK_EVENT:
    case TP_PROCESS_DESC: case TP_THREAD_DESC: case TP_TRACK_DESC:
      if (f.wt == PB_LEN && !*kind) *kind = f.id, *payload = f.s;
      break;
    }
  }
  pb_seq *s = pb_seq_get(m, c->seq_id);
  if (!s) return 0;
  c->seq = s;
  c->seq_idx = pb_seq_index(m, s);
  c->gen = pb_seq_gen_at(s, c->lpos);
  return 1;
}

static void parse_generic(pb_imp *m, const pb_item *it) {
  pb_pctx c;
  uint32_t kind;
  pb_span p = {0};
  if (!packet_ctx(m, it, &c, &kind, &p)) return;
  switch (kind) {
  case TP_PROCESS_TREE: pb_parse_process_tree(m, &c, p); break;
  case TP_PROCESS_STATS: pb_parse_process_stats(m, &c, p); break;
  case TP_SYS_STATS: pb_parse_sys_stats(m, &c, p); break;
  case TP_TRACK_DESC: pb_parse_track_descriptor(m, &c, p); break;
  case TP_PROCESS_DESC: pb_parse_legacy_process(m, &c, p); break;
  case TP_THREAD_DESC: pb_parse_legacy_thread(m, &c, p); break;
  }
}

static void parse_track_event(pb_imp *m, const pb_item *it) {
  pb_pctx c;
  uint32_t kind;
  pb_span p = {0};
  if (!packet_ctx(m, it, &c, &kind, &p) || kind != TP_TRACK_EVENT) return;
  const pb_aux *aux = PB_REF_FLAGS(it->ref) & PB_IF_AUX ? pb_aux_at(m, c.lpos) : NULL;
  pb_parse_track_event(m, &c, p, aux);
}

static void parse_ftrace(pb_imp *m, const pb_stream *s, const pb_item *it) {
  pb_span ev;
  uint64_t lpos = PB_REF_OFF(it->ref);
  if (!pb_record_at(m, lpos, &ev)) return;
  pb_parse_ftrace_event(m, s->cpu, it->ts, ev, lpos);
}

/* Room for the rows the streams will make, so the big tables are
 * allocated once instead of grown by doubling (copies, and the slack of
 * the last doubling): each compact switch makes a sched row, two
 * thread_state rows and an ftrace_event row, each waking an ftrace_event
 * row and at most one thread_state row, each ftrace event one
 * ftrace_event row; a track event at most one slice (pages of rows
 * never written are never touched). */
static void reserve_rows(pb_imp *m) {
  int64_t sw = 0, wk = 0, ft = 0, te = 0;
  for (size_t i = 0; i < m->streams.n; i++) {
    const pb_stream *s = &m->streams.v[i];
    if (s->kind == PB_STREAM_FTRACE) ft += (int64_t)s->n;
    if (s->kind == PB_STREAM_TRACK_EVENT) te += (int64_t)s->n;
    if (s->kind == PB_STREAM_COMPACT) {
      const pb_csched *c = (const pb_csched *)s->v;
      if (s->n && c[0].kind == PB_CS_SWITCH) sw += (int64_t)s->n;
      else wk += (int64_t)s->n;
    }
  }
  im_reserve(m->t, IM_T_SCHED, sw);
  im_reserve(m->t, IM_T_THREAD_STATE, 2 * sw + wk);
  im_reserve(m->t, IM_T_FTRACE_EVENT, sw + wk + ft);
  im_reserve(m->t, IM_T_SLICE, te);
}

int pb_parse_all(pb_imp *m) {
  m->default_track = IM_NONE;
  m->scratch = im_args_new(m->t);
  if (!m->scratch || !pb_sort_streams(m)) return im_oom(m->t);
  reserve_rows(m);
  pb_ftrace_init(m);
  pb_merge_begin(m);
  int si;
  const void *e;
  uint64_t n = 0;
  while (pb_merge_next(m, &si, &e)) {
    const pb_stream *s = &m->streams.v[si];
    switch (s->kind) {
    case PB_STREAM_GENERIC: parse_generic(m, e); break;
    case PB_STREAM_TRACK_EVENT: parse_track_event(m, e); break;
    case PB_STREAM_FTRACE: parse_ftrace(m, s, e); break;
    case PB_STREAM_COMPACT: pb_parse_compact(m, s->cpu, e); break;
    }
    if ((++n & 0xfffff) == 0) {
      if (im_failed(m->t)) break;
      pb_release_consumed(m);
    }
  }
  pb_merge_end(m);
  im_args_free(m->scratch);
  m->scratch = NULL;
  free(m->ftrace_str);
  m->ftrace_str = NULL;
  im_map_free(&m->flow_live);
  im_map_free(&m->uuid_by_utid);
  im_map_free(&m->uuid_by_upid);
  im_map_free(&m->async_names);
  return !im_failed(m->t);
}
