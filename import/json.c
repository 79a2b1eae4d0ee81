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
  free(j->ev);
  free(j->sys);
  free(j->blob);
  free(j->strids);
  if (j->strid_map) im_map_free(j->strid_map);
  free(j->strid_map);
  free(j->order);
  memset(j, 0, sizeof *j);
}

int im_json_import(im_trace *t, im_input *in, pj_trace_info *info,
                   const im_progress *progress, rt_err *err) {
  jtrace j = {.t = t, .in = in};
  j.strid_map = calloc(1, sizeof(im_map));
  jscan s = {.base = in->data, .p = in->data, .end = in->data + in->len};
  if (!j.strid_map) return rt_errorf(err, -1, "TRACE: out of memory");
  im_meta_int(t, "trace_time_clock_id", 11);
  int ok = jt_read(&j, &s);
  if (progress && progress->cb) progress->cb(progress->ctx, "read", (int64_t)in->len, (int64_t)in->len);
  if (!ok) {
    if (im_failed(t)) rt_errorf(err, -1, "TRACE: out of memory");
    else rt_errorf(err, -1, "TRACE: not a JSON trace: %s at byte %zu", s.err, s.err_at);
    rt_buf_free(&s.tmp);
    jt_free(&j);
    return 0;
  }
  if (s.failed && info) {
    info->damaged_at = (int64_t)s.err_at;
    snprintf(info->warning, sizeof info->warning,
             "%s at byte %zu; the events before it were imported", s.err, s.err_at);
    im_stat_add(t, IM_STAT_TRACE_TRUNCATED, 1);
  } else if (s.failed) {
    im_stat_add(t, IM_STAT_TRACE_TRUNCATED, 1);
  }
  rt_buf_free(&s.tmp);
  if (!jt_sort(&j)) {
    jt_free(&j);
    return rt_errorf(err, -1, "TRACE: out of memory");
  }
  jt_events(&j);
  if (info) info->events = j.nev;
  jt_free(&j);
  if (im_failed(t)) return rt_errorf(err, -1, "TRACE: out of memory");
  return 1;
}
