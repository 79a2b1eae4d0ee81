/*
 * json.c — the Chrome JSON importer's entry point: pass 1 (json_read.c)
 * over the buffer, the §2.3 order (json_sort.c), pass 2 (json_events.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "json.h"
#include "load.h"
#include "trace.h"

void jt_free(jtrace *j) {
  js_store_free(&j->ev);
  js_store_free(&j->sys);
  free(j->names);
  free(j->threads);
  if (j->thread_map) im_map_free(j->thread_map);
  free(j->thread_map);
  free(j->strids);
  if (j->strid_map) im_map_free(j->strid_map);
  free(j->strid_map);
  rt_buf_free(&j->key);
  rt_buf_free(&j->flat);
  im_args_free(j->scratch);
  memset(j, 0, sizeof *j);
}

uint32_t jt_intern(jtrace *j, const char *s, size_t n) {
  /* a, b and n identify strings of up to 16 bytes (overlapping loads
   * cover every byte), without a call to memcpy */
  uint64_t a = 0, b = 0;
  if (n >= 8) {
    memcpy(&a, s, 8);
    memcpy(&b, s + n - 8, 8);
  } else if (n >= 4) {
    uint32_t lo, hi;
    memcpy(&lo, s, 4);
    memcpy(&hi, s + n - 4, 4);
    a = lo | (uint64_t)hi << 32;
  } else if (n) {
    a = (uint64_t)(unsigned char)s[0] | (uint64_t)(unsigned char)s[n / 2] << 8 |
        (uint64_t)(unsigned char)s[n - 1] << 16;
  }
  /* the high bits of a product depend on every bit of its operands */
  uint64_t h = ((a * 0x9e3779b97f4a7c15ull) ^ b ^ n) * 0xc2b2ae3d27d4eb4full;
  size_t slot = (size_t)(h >> 53);
  /* up to 16 bytes, the first and last eight are the whole string */
  if (j->icache[slot].p && j->icache[slot].len == n && j->icache[slot].a == a && j->icache[slot].b == b &&
      (n <= 16 || !memcmp(j->icache[slot].p, s, n)))
    return j->icache[slot].id;
  uint32_t id = im_str(j->t, s, n);
  /* pool bytes never move: the cache can point at them */
  j->icache[slot].p = rt_str_get(im_pool(j->t), id, NULL);
  j->icache[slot].len = (uint32_t)n;
  j->icache[slot].id = id;
  j->icache[slot].a = a;
  j->icache[slot].b = b;
  return id;
}

/* Pass 1, the order, pass 2. The jtrace is on the heap (its string cache
 * is 64 KB). */
static int import(jtrace *j, im_input *in, pj_trace_info *info, const im_progress *progress,
                  rt_err *err) {
  im_trace *t = j->t;
  jscan s = {.base = in->data, .p = in->data, .end = in->data + in->len, .base_off = in->win_off};
  im_meta_int(t, "trace_time_clock_id", 11);
  int ok = jt_read(j, &s);
  if (progress && progress->cb) progress->cb(progress->ctx, "read", in->file_size, in->file_size);
  if (!ok) {
    if (im_failed(t)) rt_errorf(err, -1, "TRACE: out of memory");
    else rt_errorf(err, -1, "TRACE: not a JSON trace: %s at byte %zu", s.err, s.err_at);
    rt_buf_free(&s.tmp);
    return 0;
  }
  if (s.failed) {
    im_stat_add(t, IM_STAT_TRACE_TRUNCATED, 1);
    if (info) {
      info->damaged_at = (int64_t)s.err_at;
      snprintf(info->warning, sizeof info->warning,
               "%s at byte %zu; the events before it were imported", s.err, s.err_at);
    }
  }
  rt_buf_free(&s.tmp);
  if (!jt_sort(j)) return rt_errorf(err, -1, "TRACE: out of memory");
  jt_events(j);
  if (info) info->events = j->nev;
  if (im_failed(t)) return rt_errorf(err, -1, "TRACE: out of memory");
  return 1;
}

int im_json_import(im_trace *t, im_input *in, pj_trace_info *info,
                   const im_progress *progress, rt_err *err) {
  jtrace *j = calloc(1, sizeof *j);
  if (!j) return rt_errorf(err, -1, "TRACE: out of memory");
  j->t = t;
  j->in = in;
  j->progress = progress;
  j->strid_map = calloc(1, sizeof(im_map));
  j->thread_map = calloc(1, sizeof(im_map));
  j->scratch = im_args_new(t);
  j->last_thread = -1;
  j->V = INT64_MAX;
  int ok = j->strid_map && j->thread_map && j->scratch ? import(j, in, info, progress, err)
                                                        : rt_errorf(err, -1, "TRACE: out of memory");
  jt_free(j);
  free(j);
  return ok;
}
