/*
 * proto_read.c — the read pass of the protobuf importer (TRACES.md §3.1,
 * §3.3, §3.5.4): walks the Trace in file order, packet by packet.
 *
 * Per packet, in the order of §3.3.4: incremental-state clear or loss,
 * the NEEDS_INCREMENTAL_STATE check, trace_packet_defaults, interned
 * data, then the payload. Clock snapshots, service events, SystemInfo,
 * the trace uuid and FtraceStats are consumed here; track descriptors
 * are reserved here and parsed again in sorted order; track events and
 * ftrace bundles get their read-time pass (proto_te_read.c,
 * proto_ftrace_read.c); other known payloads are pushed as they are.
 *
 * Damage: a packet cut by the end of the file, or a broken tag / length
 * at the top level, stops the walk there; what came before is imported,
 * `proto_packet_truncated` counts it and the first damage is described
 * (byte offset, packet number) for the load message. A malformed field
 * inside a packet skips the rest of that message only.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <zlib.h>
#include <zstd.h>

#include "import/proto_import.h"

/* TracePacket fields (§3.2) */
enum {
  TP_FTRACE = 1, TP_PROCESS_TREE = 2, TP_TRUSTED_UID = 3, TP_CLOCK_SNAPSHOT = 6, TP_SYS_STATS = 7,
  TP_TIMESTAMP = 8, TP_PROCESS_STATS = 9, TP_SEQ_ID = 10, TP_TRACK_EVENT = 11, TP_INTERNED = 12,
  TP_SEQ_FLAGS = 13, TP_TRACE_CONFIG = 33, TP_FTRACE_STATS = 34, TP_TRACE_STATS = 35,
  TP_INCR_CLEARED = 41, TP_PREV_DROPPED = 42, TP_PROCESS_DESC = 43, TP_THREAD_DESC = 44,
  TP_SYSTEM_INFO = 45, TP_COMPRESSED = 50, TP_CLOCK_ID = 58, TP_DEFAULTS = 59,
  TP_TRACK_DESC = 60, TP_SERVICE_EVENT = 69, TP_TRUSTED_PID = 79, TP_FIRST_ON_SEQ = 87,
  TP_TRACE_UUID = 89, TP_MACHINE_ID = 98, TP_ZSTD = 133,
};

enum { SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2 };

void pb_damage(pb_imp *m, const char *fmt, ...) {
  if (m->damage[0]) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m->damage, sizeof m->damage, fmt, ap);
  va_end(ap);
}

/* ---- logical positions ------------------------------------------------------ */

static const pb_seg *seg_of(const pb_imp *m, uint64_t lpos) {
  size_t lo = 0, hi = m->segs.n;   /* last seg with lstart <= lpos */
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (m->segs.v[mid].lstart <= lpos) lo = mid;
    else hi = mid;
  }
  return m->segs.n ? &m->segs.v[lo] : NULL;
}

const uint8_t *pb_at(const pb_imp *m, uint64_t lpos, size_t *n) {
  const pb_seg *s = seg_of(m, lpos);
  if (!s || lpos < s->lstart || lpos >= s->lstart + s->len) {
    *n = 0;
    return NULL;
  }
  *n = s->len - (size_t)(lpos - s->lstart);
  return s->base + (lpos - s->lstart);
}

int pb_record_at(const pb_imp *m, uint64_t lpos, pb_span *out) {
  size_t n;
  const uint8_t *p = pb_at(m, lpos, &n);
  uint64_t len;
  if (!p || !pb_varint(&p, p + n, &len)) return 0;
  out->p = p;
  out->n = (size_t)len;
  return 1;
}

/* ---- pushing packets -------------------------------------------------------------- */

int pb_push_packet(pb_imp *m, pb_stream *s, uint64_t lpos, uint32_t clock_id, uint32_t seq,
                   int64_t ts, uint32_t flags, int at_eof) {
  if (clock_id && !pb_clock_convert(m, clock_id, seq, ts, &ts)) {
    if (at_eof) {
      pb_stat(m, IM_STAT_CLOCK_SYNC_FAILURE);
      pb_stat(m, IM_STAT_CLOCK_SYNC_FAILURE_UNDEFERRABLE_PACKET_LOSS);
      return 1;
    }
    pb_deferred d = {.lpos = lpos, .raw_ts = ts, .clock_id = clock_id, .seq = seq,
                     .stream = (int32_t)(s - m->streams.v), .flags = flags};
    if (!PB_PUSH(m->deferred, d)) return im_oom(m->t);
    return 1;
  }
  if (ts < 0) {
    pb_stat(m, IM_STAT_TRACE_SORTER_NEGATIVE_TIMESTAMP_DROPPED);
    return 1;
  }
  if (ts > m->max_ts) m->max_ts = ts;
  pb_item it = {.ts = ts, .ref = PB_REF(lpos, flags)};
  if (!pb_stream_push(s, &it)) return im_oom(m->t);
  return 1;
}

/* ---- compressed_packets --------------------------------------------------------- */

/* Inflates a zlib or gzip blob into a malloc'd buffer; *out_n its size.
 * NULL when it is not deflate data (a cut stream returns what inflated,
 * with *cut = 1). */
static uint8_t *pb_inflate(const uint8_t *p, size_t n, size_t *out_n, int *cut) {
  z_stream z;
  memset(&z, 0, sizeof z);
  *cut = 0;
  *out_n = 0;
  if (inflateInit2(&z, 15 + 32) != Z_OK) return NULL;
  size_t cap = n * 4 + 1024, len = 0;
  uint8_t *out = malloc(cap);
  if (!out) {
    inflateEnd(&z);
    return NULL;
  }
  z.next_in = (Bytef *)p;
  z.avail_in = (uInt)n;
  for (;;) {
    int rc;
    if (cap - len < 4096) {
      size_t nc = cap * 2;
      uint8_t *o = realloc(out, nc);
      if (!o) {
        *cut = 1;
        break;
      }
      out = o;
      cap = nc;
    }
    z.next_out = out + len;
    z.avail_out = (uInt)(cap - len > (1u << 30) ? (1u << 30) : cap - len);
    uInt before = z.avail_out;
    rc = inflate(&z, Z_NO_FLUSH);
    len += before - z.avail_out;
    if (rc == Z_STREAM_END) break;
    if (rc == Z_OK || (rc == Z_BUF_ERROR && z.avail_out == 0)) continue;
    if (len == 0) {
      inflateEnd(&z);
      free(out);
      return NULL;
    }
    *cut = 1;
    break;
  }
  inflateEnd(&z);
  *out_n = len;
  return out;
}

/* Decompresses a zstd frame sequence (zstd_compressed_packets) the same
 * way: NULL when nothing decoded, *cut = 1 when the data broke after some
 * output. */
static uint8_t *pb_unzstd(const uint8_t *p, size_t n, size_t *out_n, int *cut) {
  *cut = 0;
  *out_n = 0;
  ZSTD_DStream *z = ZSTD_createDStream();
  if (!z) return NULL;
  size_t cap = n * 4 + 1024, len = 0;
  uint8_t *out = malloc(cap);
  if (!out) {
    ZSTD_freeDStream(z);
    return NULL;
  }
  ZSTD_inBuffer in = {p, n, 0};
  size_t rc = 1;
  while (in.pos < in.size || rc != 0) {
    if (cap - len < 4096) {
      uint8_t *o = realloc(out, cap * 2);
      if (!o) break;
      out = o;
      cap *= 2;
    }
    ZSTD_outBuffer ob = {out + len, cap - len, 0};
    rc = ZSTD_decompressStream(z, &ob, &in);
    len += ob.pos;
    if (ZSTD_isError(rc)) break;
    if (in.pos == in.size && ob.pos < ob.size) break;   /* needs input it will not get */
  }
  ZSTD_freeDStream(z);
  if (!len) {
    free(out);
    return NULL;
  }
  *cut = rc != 0;
  *out_n = len;
  return out;
}

/* ---- read-time payloads ------------------------------------------------------------ */

/* TracePacketDefaults: the read-time view (clock, track event defaults). */
static void read_defaults(pb_imp *m, pb_seq *s, pb_span d) {
  s->def_clock = 0;
  s->has_def_track = 0;
  s->n_def_extra = s->n_def_extra_d = 0;
  pb_reader r;
  pb_field f;
  pb_init_span(&r, d);
  while (pb_next(&r, &f)) {
    if (f.id == 58 && f.wt == PB_VARINT) s->def_clock = pb_u32(&f);
    if (f.id != 11 || f.wt != PB_LEN) continue;
    pb_reader tr;
    pb_field tf;
    pb_init_span(&tr, f.s);
    while (pb_next(&tr, &tf)) {
      pb_rep it;
      uint64_t v;
      if (tf.id == 11 && tf.wt == PB_VARINT) s->has_def_track = 1, s->def_track_uuid = tf.v;
      if (tf.id == 31 || tf.id == 45) {
        pb_rep_init(&it, &tf, PB_VARINT);
        while (pb_rep_next(&it, &v)) {
          if (tf.id == 31 && s->n_def_extra < 8) s->def_extra[s->n_def_extra++] = v;
          if (tf.id == 45 && s->n_def_extra_d < 8) s->def_extra_d[s->n_def_extra_d++] = v;
        }
      }
    }
    if (tr.bad) pb_stat(m, IM_STAT_PROTO_MALFORMED_FIELDS);
  }
  if (r.bad) pb_stat(m, IM_STAT_PROTO_MALFORMED_FIELDS);
}

/* The InternedData fields the parsers look up (§3.3.5; 26 kernel_symbols). */
static int interned_field_used(uint32_t f) {
  return f == 1 || f == 2 || f == 3 || f == 4 || f == 26 || f == 27 || f == 29;
}

static void read_interned(pb_imp *m, pb_seq *s, pb_span d) {
  pb_reader r;
  pb_field f;
  uint32_t si = pb_seq_index(m, s);
  pb_init_span(&r, d);
  while (pb_next(&r, &f))
    if (f.wt == PB_LEN && interned_field_used(f.id)) pb_intern_put(m, si, s->epoch, f.id, f.s);
  if (r.bad) pb_stat(m, IM_STAT_PROTO_MALFORMED_FIELDS);
}

static void read_service_event(pb_imp *m, pb_span ev, int has_ts, int64_t ts, uint32_t seq) {
  if (!has_ts) return;
  if (!pb_clock_convert(m, PB_CLK_BOOTTIME, seq, ts, &ts)) return;
  pb_reader r;
  pb_field f;
  pb_init_span(&r, ev);
  while (pb_next(&r, &f)) {
    if (f.wt != PB_VARINT || !f.v) continue;
    switch (f.id) {
    case 1: im_meta_int(m->t, "all_data_source_started_ns", ts); break;
    case 2:
      im_meta_int(m->t, "tracing_started_ns", ts);
      m->tracing_started_ns = ts;
      break;
    case 3: im_meta_int_multi(m->t, "all_data_source_flushed_ns", ts); break;
    case 5: im_meta_int(m->t, "tracing_disabled_ns", ts); break;
    }
  }
}

static void read_system_info(pb_imp *m, pb_span si) {
  pb_field f;
  if (!pb_find(si, 1, &f) || f.wt != PB_LEN) return;
  uint32_t u[4] = {IM_NULL_STR, IM_NULL_STR, IM_NULL_STR, IM_NULL_STR};
  static const char *const keys[4] = {"system_name", "system_version", "system_release",
                                      "system_machine"};
  pb_reader r;
  pb_field uf;
  pb_span sysname = {0}, release = {0};
  pb_init_span(&r, f.s);
  while (pb_next(&r, &uf)) {
    if (uf.wt != PB_LEN || uf.id < 1 || uf.id > 4) continue;
    u[uf.id - 1] = im_str(m->t, (const char *)uf.s.p, uf.s.n);
    im_meta_str(m->t, keys[uf.id - 1], u[uf.id - 1]);
    if (uf.id == 1) sysname = uf.s;
    if (uf.id == 3) release = uf.s;
  }
  im_machine_uname(m->t, u[0], u[2], u[1], u[3]);
  /* kernel version for prev_state (§3.10.5): "Linux", release "maj.min…" */
  if (pb_span_eq(sysname, "Linux") && release.n) {
    int maj = 0, min = 0;
    size_t i = 0;
    while (i < release.n && release.p[i] >= '0' && release.p[i] <= '9')
      maj = maj * 10 + (release.p[i++] - '0');
    if (i < release.n && release.p[i] == '.') {
      i++;
      while (i < release.n && release.p[i] >= '0' && release.p[i] <= '9')
        min = min * 10 + (release.p[i++] - '0');
      if (maj > 0 && maj < 1000) im_set_kernel_version(m->t, maj, min);
    }
  }
}

static void read_trace_uuid(pb_imp *m, pb_span u) {
  uint64_t msb = 0, lsb = 0;
  pb_reader r;
  pb_field f;
  pb_init_span(&r, u);
  while (pb_next(&r, &f)) {
    if (f.id == 1) msb = f.v;
    if (f.id == 2) lsb = f.v;
  }
  im_trace_uuid(m->t, msb, lsb);
}

/* Legacy ThreadDescriptor (packet field 44) or TrackDescriptor.thread: the
 * sequence's thread and its delta-time references. */
void pb_seq_thread_descriptor(pb_imp *m, pb_seq *s, uint64_t lpos, pb_span td);
void pb_seq_thread_descriptor(pb_imp *m, pb_seq *s, uint64_t lpos, pb_span td) {
  pb_reader r;
  pb_field f;
  int32_t pid = 0, tid = 0;
  int64_t rts = 0, rtt = 0, rti = 0;
  pb_init_span(&r, td);
  while (pb_next(&r, &f)) {
    switch (f.id) {
    case 1: pid = pb_i32(&f); break;
    case 2: tid = pb_i32(&f); break;
    case 6: rts = pb_mul(pb_i64(&f), 1000); break;
    case 7: rtt = pb_mul(pb_i64(&f), 1000); break;
    case 8: rti = pb_i64(&f); break;
    }
  }
  if (r.bad) pb_stat(m, IM_STAT_PROTO_MALFORMED_FIELDS);
  s->ref_ts = rts;
  s->ref_tt = rtt;
  s->ref_ti = rti;
  s->ts_valid = 1;
  if (!s->has_td || s->td_pid != pid || s->td_tid != tid) {
    s->has_td = 1;
    s->td_pid = pid;
    s->td_tid = tid;
    const pb_gen *g = &s->gens.v[s->gens.n - 1];
    pb_seq_new_gen(m, s, lpos, g->defaults);
  }
}

/* ---- one packet -------------------------------------------------------------------- */

static int read_trace_bytes(pb_imp *m, const uint8_t *base, size_t len, size_t file_off,
                            int depth);

typedef struct pkt {
  int has_ts, has_seq, has_clock;
  int64_t ts;
  uint32_t seq_id, flags, clock_id, dropped;
  int cleared;
  pb_span defaults, interned, payload;
  int has_defaults, has_interned;
  uint32_t kind;          /* payload field number, 0 none */
  int unknown;
} pkt;

static int is_payload(uint32_t id) {
  switch (id) {
  case TP_TRUSTED_UID: case TP_TIMESTAMP: case TP_SEQ_ID: case TP_INTERNED: case TP_SEQ_FLAGS:
  case TP_INCR_CLEARED: case TP_PREV_DROPPED: case TP_CLOCK_ID: case TP_DEFAULTS:
  case TP_TRUSTED_PID: case TP_FIRST_ON_SEQ: case TP_MACHINE_ID:
    return 0;
  }
  return 1;
}

/* The packet at lpos (the logical offset of its length varint). */
static int read_packet(pb_imp *m, uint64_t lpos, pb_span body, int depth, size_t file_off) {
  pkt k;
  memset(&k, 0, sizeof k);
  pb_reader r;
  pb_field f;
  pb_init_span(&r, body);
  while (pb_next(&r, &f)) {
    switch (f.id) {
    case TP_TIMESTAMP: k.has_ts = 1, k.ts = (int64_t)f.v; break;
    case TP_SEQ_ID: k.has_seq = 1, k.seq_id = pb_u32(&f); break;
    case TP_SEQ_FLAGS: k.flags = pb_u32(&f); break;
    case TP_INCR_CLEARED: k.cleared |= pb_bool(&f); break;
    case TP_PREV_DROPPED: k.dropped = pb_u32(&f); break;
    case TP_CLOCK_ID: k.has_clock = 1, k.clock_id = pb_u32(&f); break;
    case TP_DEFAULTS:
      if (f.wt == PB_LEN) k.has_defaults = 1, k.defaults = f.s;
      break;
    case TP_INTERNED:
      if (f.wt == PB_LEN) k.has_interned = 1, k.interned = f.s;
      break;
    default:
      if (!is_payload(f.id)) break;
      if (f.wt == PB_LEN && !k.kind) k.kind = f.id, k.payload = f.s;
      else k.unknown = 1;
    }
  }
  if (r.bad) pb_stat(m, IM_STAT_PROTO_MALFORMED_FIELDS);
  if (k.flags & SEQ_INCREMENTAL_STATE_CLEARED) k.cleared = 1;

  pb_seq *s = pb_seq_get(m, k.seq_id);
  if (!s) return 0;
  /* §3.3.1–2: clear or loss */
  if (k.cleared) {
    s->valid = 1;
    s->ever_cleared = 1;
    s->epoch++;
    s->ts_valid = 0;
    s->def_clock = 0;
    s->has_def_track = 0;
    s->n_def_extra = s->n_def_extra_d = 0;
    pb_seq_new_gen(m, s, lpos, (pb_span){NULL, 0});
    for (size_t i = 0; i < m->res.n; i++)
      if (m->res.v[i].incremental && m->res.v[i].seq == k.seq_id) m->res.v[i].latest = 0;
  } else if (k.dropped) {
    s->valid = 0;
    s->ts_valid = 0;
    for (size_t i = 0; i < m->res.n; i++)
      if (m->res.v[i].incremental && m->res.v[i].seq == k.seq_id) m->res.v[i].latest = 0;
  }
  if ((k.flags & SEQ_NEEDS_INCREMENTAL_STATE) && !s->valid) {
    pb_stat(m, IM_STAT_PACKET_SKIPPED_SEQ_NEEDS_INCREMENTAL_STATE_INVALID);
    return 1;
  }
  if (k.has_defaults) {
    uint8_t *copy = k.defaults.n ? rt_arena_memdup(&m->arena, k.defaults.p, k.defaults.n) : NULL;
    if (k.defaults.n && !copy) return im_oom(m->t);
    read_defaults(m, s, k.defaults);
    pb_seq_new_gen(m, s, lpos, (pb_span){copy, k.defaults.n});
  }
  if (k.has_interned) {
    if (s->valid) read_interned(m, s, k.interned);
    else pb_stat(m, IM_STAT_INTERNED_DATA_SKIPPED_INCREMENTAL_STATE_INVALID);
  }
  if (k.unknown) pb_stat(m, IM_STAT_PROTO_UNKNOWN_PACKETS);

  uint32_t clock = k.has_clock ? k.clock_id : s->def_clock;
  if (clock == m->clk.trace_clock && m->clk.clocks.n == 0) clock = 0;   /* identity */
  int64_t ts = k.has_ts ? k.ts : m->max_ts;
  uint32_t seq_id = k.seq_id;
  switch (k.kind) {
  case 0:
    return 1;
  case TP_CLOCK_SNAPSHOT:
    pb_clock_snapshot(m, k.payload, seq_id);
    return 1;
  case TP_SERVICE_EVENT:
    read_service_event(m, k.payload, k.has_ts, k.ts, seq_id);
    return 1;
  case TP_SYSTEM_INFO:
    read_system_info(m, k.payload);
    return 1;
  case TP_TRACE_UUID:
    read_trace_uuid(m, k.payload);
    return 1;
  case TP_FTRACE_STATS: {
    pb_field pf;
    if (pb_find(k.payload, 8, &pf) && pf.v) m->preserve_ftrace = 1;
    return 1;
  }
  case TP_TRACE_CONFIG:
  case TP_TRACE_STATS:
    return 1;
  case TP_COMPRESSED:
  case TP_ZSTD: {
    if (depth > 0) {
      pb_stat(m, IM_STAT_PROTO_COMPRESSED_PACKETS_INVALID);
      return 1;
    }
    size_t n;
    int cut;
    uint8_t *inner = k.kind == TP_ZSTD ? pb_unzstd(k.payload.p, k.payload.n, &n, &cut)
                                       : pb_inflate(k.payload.p, k.payload.n, &n, &cut);
    if (!inner || cut) pb_stat(m, IM_STAT_PROTO_COMPRESSED_PACKETS_INVALID);
    if (!inner) return 1;
    /* splice: end the current file segment here, the inner buffer next,
     * then the file again from the end of this packet */
    pb_seg *cur = &m->segs.v[m->segs.n - 1];
    size_t end_off = (size_t)(k.payload.p + k.payload.n - cur->base);
    cur->len = end_off;
    m->lpos_end = cur->lstart + end_off;
    pb_seg in = {.lstart = m->lpos_end, .base = inner, .len = n, .owned = inner};
    if (!PB_PUSH(m->segs, in)) {
      free(inner);
      return im_oom(m->t);
    }
    m->lpos_end += n;
    int ok = read_trace_bytes(m, inner, n, 0, depth + 1);
    const uint8_t *after = k.payload.p + k.payload.n;
    pb_seg rest = {.lstart = m->lpos_end, .base = after, .len = 0,
                   .file_off = file_off + (size_t)(after - body.p)};
    if (!PB_PUSH(m->segs, rest)) return im_oom(m->t);
    return ok;
  }
  case TP_FTRACE:
    return pb_ftrace_read(m, s, lpos, k.payload);
  case TP_TRACK_EVENT:
    if (!k.has_seq) {
      pb_stat(m, IM_STAT_TRACK_EVENT_MISSING_SEQUENCE_ID);
      return 1;
    }
    return pb_te_read(m, s, lpos, k.payload, k.has_ts, k.ts, clock, 0);
  case TP_TRACK_DESC: {
    pb_td_reserve(m, s, k.payload);
    pb_field tf;
    if (pb_find(k.payload, 4, &tf) && tf.wt == PB_LEN) pb_seq_thread_descriptor(m, s, lpos, tf.s);
    break;
  }
  case TP_THREAD_DESC:
    if (!s->valid) return 1;   /* §3.3.3: ignored while invalid */
    pb_seq_thread_descriptor(m, s, lpos, k.payload);
    break;
  case TP_PROCESS_TREE: case TP_PROCESS_STATS: case TP_SYS_STATS: case TP_PROCESS_DESC:
    break;
  default:
    pb_stat(m, IM_STAT_PROTO_UNKNOWN_PACKETS);
    return 1;
  }
  return pb_push_packet(m, pb_stream_generic(m), lpos, k.has_ts ? clock : 0, seq_id, ts, 0, 0);
}

/* Walks a Trace byte stream: base[0, len) lies in the current segment at
 * file offset file_off (inner buffers: 0). */
static int read_trace_bytes(pb_imp *m, const uint8_t *base, size_t len, size_t file_off,
                            int depth) {
  const uint8_t *p = base, *end = base + len;
  while (p < end) {
    if (im_failed(m->t)) return 0;
    const uint8_t *start = p;
    uint64_t tag, n;
    int bad = !pb_varint(&p, end, &tag);
    if (!bad && tag == ((1u << 3) | PB_LEN)) {
      const uint8_t *lenp = p;
      if (!pb_varint(&p, end, &n) || n > (uint64_t)(end - p)) {
        m->npackets++;
        pb_stat(m, IM_STAT_PROTO_PACKET_TRUNCATED);
        pb_damage(m, "packet %lld at byte %zu%s is cut short by the end of the %s",
                  (long long)m->npackets, file_off + (size_t)(start - base),
                  depth ? " of a compressed_packets blob" : "", depth ? "blob" : "file");
        return 1;
      }
      m->npackets++;
      const pb_seg *seg = &m->segs.v[m->segs.n - 1];
      uint64_t lpos = seg->lstart + (uint64_t)(lenp - seg->base);
      if (n && !read_packet(m, lpos, (pb_span){p, (size_t)n}, depth,
                            file_off + (size_t)(p - base)))
        return 0;
      p += n;
      continue;
    }
    /* another top-level field: skip it */
    if (!bad) {
      pb_reader r;
      pb_field f;
      pb_init(&r, start, (size_t)(end - start));
      if (pb_next(&r, &f)) {
        p = r.p;
        continue;
      }
    }
    pb_stat(m, IM_STAT_PROTO_PACKET_TRUNCATED);
    pb_damage(m, "malformed data after packet %lld, at byte %zu%s; the rest was not read",
              (long long)m->npackets, file_off + (size_t)(start - base),
              depth ? " of a compressed_packets blob" : "");
    return 1;
  }
  return 1;
}

int pb_read_all(pb_imp *m) {
  const uint8_t *data = (const uint8_t *)m->in->data;
  pb_seg s = {.lstart = 0, .base = data, .len = 0, .file_off = 0};
  if (!PB_PUSH(m->segs, s)) return im_oom(m->t);
  int ok = read_trace_bytes(m, data, m->in->len, 0, 0);
  /* close the last file segment */
  pb_seg *last = &m->segs.v[m->segs.n - 1];
  if (!last->owned) {
    last->len = (size_t)(data + m->in->len - last->base);
    m->lpos_end = last->lstart + last->len;
  }
  if (!ok) return 0;
  /* deferred packets: convert now, or drop */
  for (size_t i = 0; i < m->deferred.n; i++) {
    pb_deferred *x = &m->deferred.v[i];
    pb_push_packet(m, &m->streams.v[x->stream], x->lpos, x->clock_id, x->seq, x->raw_ts,
                   x->flags, 1);
  }
  return !im_failed(m->t);
}
