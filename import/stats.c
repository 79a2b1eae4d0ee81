/*
 * stats.c — the stats table (TRACES.md §1.12), metadata (§1.11),
 * trace_file and machine rows.
 *
 * Stats are counted in an array indexed by stats.def; their rows are
 * written at end of trace: every non-indexed stat (value 0 when never
 * counted) in stats.def order, then the indexed ones that were counted,
 * in order of first count.
 */
#include <inttypes.h>
#include <stdio.h>

#include "trace.h"

typedef struct stat_info {
  const char *name, *severity, *source, *desc;
  int indexed;
} stat_info;

static const stat_info stat_infos[IM_NSTATS] = {
#define IM_STAT(ID, name, sev, src, indexed, desc) {name, #sev, #src, desc, indexed},
#include "stats.def"
#undef IM_STAT
};

void im_stat_add(im_trace *t, im_stat s, int64_t by) { t->stats[s] += by; }
void im_stat_set(im_trace *t, im_stat s, int64_t v) { t->stats[s] = v; }
int64_t im_stat_get(const im_trace *t, im_stat s) { return t->stats[s]; }

void im_stat_add_indexed(im_trace *t, im_stat s, int64_t idx, int64_t by) {
  for (int64_t i = 0; i + 2 < t->indexed_stat.n; i += 3)
    if (t->indexed_stat.v[i] == s && t->indexed_stat.v[i + 1] == idx) {
      t->indexed_stat.v[i + 2] += by;
      return;
    }
  if (IM_PUSH(t, t->indexed_stat, (int64_t)s) && IM_PUSH(t, t->indexed_stat, idx))
    IM_PUSH(t, t->indexed_stat, by);
}

static int64_t main_file(const im_trace *t) {
  int64_t n = im_rows(t, IM_T_TRACE_FILE);
  return n ? n - 1 : IM_NONE;
}

static void stat_row(im_trace *t, im_stat s, int64_t idx, int64_t value) {
  const stat_info *in = &stat_infos[s];
  int64_t r = im_append(t, IM_T_STATS);
  if (r < 0) return;
  im_table_id T = IM_T_STATS;
  im_set_str(t, T, IM_STATS_NAME, r, im_cstr(t, in->name));
  im_set_i64(t, T, IM_STATS_KEY, r, (int64_t)s);
  if (idx != IM_NONE) im_set_i64(t, T, IM_STATS_IDX, r, idx);
  im_set_str(t, T, IM_STATS_SEVERITY, r, im_cstr(t, in->severity));
  im_set_str(t, T, IM_STATS_SOURCE, r, im_cstr(t, in->source));
  im_set_i64(t, T, IM_STATS_VALUE, r, value);
  im_set_str(t, T, IM_STATS_DESCRIPTION, r, im_cstr(t, in->desc));
  im_set_i64(t, T, IM_STATS_MACHINE_ID, r, 0);
  if (main_file(t) != IM_NONE) im_set_i64(t, T, IM_STATS_TRACE_ID, r, main_file(t));
}

void im__stats_rows(im_trace *t) {
  for (int s = 0; s < IM_NSTATS; s++)
    if (!stat_infos[s].indexed) stat_row(t, (im_stat)s, IM_NONE, t->stats[s]);
  for (int64_t i = 0; i + 2 < t->indexed_stat.n; i += 3)
    stat_row(t, (im_stat)t->indexed_stat.v[i], t->indexed_stat.v[i + 1], t->indexed_stat.v[i + 2]);
}

/* ---- metadata ------------------------------------------------------------- */

static int64_t meta_row(im_trace *t, const char *name, int multi) {
  if (!multi)
    for (int64_t i = 0; i < t->meta_single.n; i++)
      if (!strcmp(t->meta_single.v[i].name, name)) return t->meta_single.v[i].row;
  int64_t r = im_append(t, IM_T_METADATA);
  if (r < 0) return IM_NONE;
  uint32_t nm = im_cstr(t, name);
  im_set_str(t, IM_T_METADATA, IM_METADATA_NAME, r, nm);
  im_set_str(t, IM_T_METADATA, IM_METADATA_KEY_TYPE, r, multi ? t->s_multi : t->s_single);
  if (!multi) {
    im_meta_single m = {rt_str_get(t->sp, nm, NULL), r};
    IM_PUSH(t, t->meta_single, m);
  }
  return r;
}

void im_meta_int(im_trace *t, const char *name, int64_t v) {
  int64_t r = meta_row(t, name, 0);
  im_set_null(t, IM_T_METADATA, IM_METADATA_STR_VALUE, r);
  im_set_i64(t, IM_T_METADATA, IM_METADATA_INT_VALUE, r, v);
}

void im_meta_str(im_trace *t, const char *name, uint32_t s) {
  int64_t r = meta_row(t, name, 0);
  im_set_null(t, IM_T_METADATA, IM_METADATA_INT_VALUE, r);
  im_set_str(t, IM_T_METADATA, IM_METADATA_STR_VALUE, r, s);
}

void im_meta_int_multi(im_trace *t, const char *name, int64_t v) {
  im_set_i64(t, IM_T_METADATA, IM_METADATA_INT_VALUE, meta_row(t, name, 1), v);
}

static void uuid_str(im_trace *t, uint64_t hi, uint64_t lo) {
  char buf[40];
  snprintf(buf, sizeof buf, "%08" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%012" PRIx64,
           hi >> 32, (hi >> 16) & 0xffff, hi & 0xffff, lo >> 48, lo & (uint64_t)0xffffffffffff);
  im_meta_str(t, "trace_uuid", im_cstr(t, buf));
}

void im_trace_uuid(im_trace *t, uint64_t msb, uint64_t lsb) { uuid_str(t, msb, lsb); }

void im_trace_file(im_trace *t, const char *name, int64_t size, const char *trace_type, int gzip,
                   int64_t inner_size, const void *head, size_t headlen) {
  im_table_id T = IM_T_TRACE_FILE;
  int64_t parent = IM_NONE;
  if (gzip) {
    parent = im_append(t, T);
    im_set_str(t, T, IM_TRACE_FILE_NAME, parent, im_cstr(t, name));
    im_set_i64(t, T, IM_TRACE_FILE_SIZE, parent, size);
    im_set_str(t, T, IM_TRACE_FILE_TRACE_TYPE, parent, im_cstr(t, "gzip"));
    im_set_i64(t, T, IM_TRACE_FILE_PROCESSING_ORDER, parent, parent);
    im_set_i64(t, T, IM_TRACE_FILE_IS_CONTAINER, parent, 1);
  }
  int64_t r = im_append(t, T);
  if (parent != IM_NONE) im_set_i64(t, T, IM_TRACE_FILE_PARENT_ID, r, parent);
  else im_set_str(t, T, IM_TRACE_FILE_NAME, r, im_cstr(t, name));
  int64_t inner = gzip ? inner_size : size;
  im_set_i64(t, T, IM_TRACE_FILE_SIZE, r, inner);
  im_set_str(t, T, IM_TRACE_FILE_TRACE_TYPE, r, im_cstr(t, trace_type));
  im_set_i64(t, T, IM_TRACE_FILE_PROCESSING_ORDER, r, r);
  im_set_i64(t, T, IM_TRACE_FILE_IS_CONTAINER, r, 0);
  im_meta_str(t, "trace_type", im_cstr(t, trace_type));
  im_meta_int(t, "trace_size_bytes", inner);
  /* FNV-1a 64 over the first (at most) 4096 bytes as stored. */
  uint64_t h = 0xcbf29ce484222325ull;
  const unsigned char *b = head;
  for (size_t i = 0; i < headlen && i < 4096; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  uuid_str(t, 0, h);
}

void im_trace_file_size(im_trace *t, int64_t inner_size) {
  int64_t r = im_rows(t, IM_T_TRACE_FILE) - 1;
  if (r < 0) return;
  im_set_i64(t, IM_T_TRACE_FILE, IM_TRACE_FILE_SIZE, r, inner_size);
  im_meta_int(t, "trace_size_bytes", inner_size);
}

void im_machine_uname(im_trace *t, uint32_t sysname, uint32_t release, uint32_t version,
                      uint32_t arch) {
  t->uname[0] = sysname;
  t->uname[1] = release;
  t->uname[2] = version;
  t->uname[3] = arch;
}
