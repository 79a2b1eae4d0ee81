/*
 * proto.c — the protobuf importer's driver (proto.h): opens the input,
 * runs the read pass (proto_read.c) and the parse pass (proto_parse.c),
 * then writes what the trace learned as a whole: trace_file rows,
 * ftrace_latest_data_start_ns, and the stats counted while reading.
 */
#include <stdio.h>
#include <stdlib.h>

#include "import/proto.h"
#include "import/proto_import.h"

int pb_detect(const void *head, size_t n) { return n > 0 && ((const uint8_t *)head)[0] == 0x0a; }

static void imp_init(pb_imp *m, im_trace *t) {
  memset(m, 0, sizeof *m);
  m->t = t;
  m->sp = im_pool(t);
  rt_arena_init(&m->arena);
  m->clk.trace_clock = PB_CLK_BOOTTIME;
  m->clk.cache_src = UINT64_MAX;
  for (int i = 0; i < 1024; i++)
    m->stream_ftrace[i] = m->stream_compact[0][i] = m->stream_compact[1][i] = -1;
  for (int i = 0; i < 1024; i++) m->compact_last[i] = -1;
  pb_stream g = {.kind = PB_STREAM_GENERIC, .esz = sizeof(pb_item), .last_ts = INT64_MIN};
  pb_stream te = {.kind = PB_STREAM_TRACK_EVENT, .esz = sizeof(pb_item), .last_ts = INT64_MIN};
  if (!PB_PUSH(m->streams, g) || !PB_PUSH(m->streams, te)) im_oom(t);
}

static void imp_free(pb_imp *m) {
  pb_streams_free(m);
  pb_merge_end(m);
  for (size_t i = 0; i < m->seqs.n; i++) free(m->seqs.v[i].gens.v);
  free(m->seqs.v);
  im_map_free(&m->seq_by_id);
  free(m->interned.v);
  free(m->interned_next.v);
  im_map_free(&m->interned_by_key);
  pb_clocks_free(&m->clk);
  free(m->aux.v);
  free(m->extra.v);
  free(m->bundle_lpos.v);
  free(m->bundle_seq.v);
  free(m->comm_tmp.v);
  free(m->res.v);
  im_map_free(&m->res_by_uuid);
  free(m->deferred.v);
  for (size_t i = 0; i < m->segs.n; i++) free(m->segs.v[i].owned);
  free(m->segs.v);
  rt_arena_free(&m->arena);
}

static int run(pb_imp *m, const char *name, char *warning, size_t cap, rt_err *err) {
  im_trace *t = m->t;
  im_trace_file(t, name, m->in->file_size, "proto", m->in->gzip, (int64_t)m->in->len,
                m->in->head, m->in->headlen);
  if (m->in->damaged >= 0) {
    im_stat_add(t, IM_STAT_TRACE_TRUNCATED, 1);
    snprintf(m->damage, sizeof m->damage, "%s", m->in->damage_msg);
  }
  int ok = pb_read_all(m) && pb_parse_all(m);
  if (m->ftrace_data_start > 0) im_meta_int(t, "ftrace_latest_data_start_ns", m->ftrace_data_start);
  for (int i = 0; i < IM_NSTATS; i++)
    if (m->stats[i]) im_stat_add(t, (im_stat)i, m->stats[i]);
  if (warning && cap) snprintf(warning, cap, "%s", m->damage);
  if (!ok || im_failed(t)) return rt_errorf(err, -1, "TRACE: out of memory importing '%s'", name);
  return 1;
}

int pb_import_input(im_trace *t, im_input *in, const char *name, char *warning, size_t cap,
                    rt_err *err) {
  pb_imp *m = malloc(sizeof *m);
  if (!m) return rt_errorf(err, -1, "TRACE: out of memory");
  imp_init(m, t);
  m->in = in;
  int ok = run(m, name, warning, cap, err);
  imp_free(m);
  free(m);
  return ok;
}

int pb_import_file(im_trace *t, const char *path, char *warning, size_t cap, rt_err *err) {
  im_input in;
  if (!im_input_open(&in, path, err)) return 0;
  int ok = pb_import_input(t, &in, path, warning, cap, err);
  im_input_close(&in);
  return ok;
}

int pb_import_memory(im_trace *t, const void *p, size_t n, const char *name, char *warning,
                     size_t cap, rt_err *err) {
  im_input in;
  if (!im_input_memory(&in, p, n, err)) return 0;
  int ok = pb_import_input(t, &in, name, warning, cap, err);
  im_input_close(&in);
  return ok;
}
