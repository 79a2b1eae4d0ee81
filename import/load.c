/*
 * load.c — the importer behind pj_engine_load_trace: reads the file,
 * dispatches on its content (TRACES.md §2.1.1, §3.1.1) and installs what
 * the importer built: Chrome JSON (json.c) or Perfetto protobuf
 * (proto.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "proto.h"
#include "load.h"
#include "trace.h"

int im_load(rt_catalog *cat, void *db, rt_strpool *sp, const char *path, pj_trace_info *info,
            const im_progress *progress, const volatile int *interrupt, rt_err *err) {
  (void)interrupt;
  int64_t t0 = rt_now_ns();
  if (info) {
    memset(info, 0, sizeof *info);
    info->damaged_at = -1;
  }
  im_input in;
  if (!im_input_open_stream(&in, path, err)) return 0;   /* gzip: the first window */
  im_format f = im_detect(in.data, in.len);
  /* the protobuf reader wants the whole stream; JSON reads the window */
  if (f == IM_FMT_PROTO && !im_input_whole(&in, err)) {
    im_input_close(&in);
    return 0;
  }
  int ok = 0;
  if (info) {
    info->gzip = in.gzip;
    info->file_bytes = in.file_size;
    info->bytes = (int64_t)in.len;
  }
  if (f != IM_FMT_JSON && f != IM_FMT_PROTO) {
    int gz = in.gzip;
    im_input_close(&in);
    return rt_errorf(err, -1, "TRACE: '%s' is not a trace (expected Chrome JSON or Perfetto protobuf%s)",
                     path, gz ? " inside the gzip data" : "");
  }
  /* pid/tid 0 are the swapper in protobuf traces, ordinary ids in JSON */
  im_options opt = {.zero_is_swapper = f == IM_FMT_PROTO};
  im_trace *t = im_trace_new(sp, &opt);
  if (!t) {
    im_input_close(&in);
    return rt_errorf(err, -1, "TRACE: out of memory");
  }
  if (f == IM_FMT_JSON) {
    im_trace_file(t, path, in.file_size, "json", in.gzip, (int64_t)in.len, in.head, in.headlen);
    if (info) info->format = "json";
    ok = im_json_import(t, &in, info, progress, err);
    if (in.gzip) {
      /* the decompressed size: the rest of the stream counted if the
       * import stopped early */
      while (!in.eof && im_input_more(&in, in.len) > 0) {}
      im_trace_file_size(t, (int64_t)(in.win_off + in.len));
      if (info) info->bytes = (int64_t)(in.win_off + in.len);
    }
    if (ok && in.damaged >= 0) {
      im_stat_add(t, IM_STAT_TRACE_TRUNCATED, 1);
      if (info) {
        info->damaged_at = in.damaged;
        snprintf(info->warning, sizeof info->warning, "%s; what came before was imported",
                 in.damage_msg);
      }
    }
    im_input_close(&in);
  } else {
    char warning[256] = "";
    if (info) info->format = "proto";
    ok = pb_import_input(t, &in, path, warning, sizeof warning, err);
    im_input_close(&in);
    if (ok && info && warning[0]) {
      snprintf(info->warning, sizeof info->warning, "%s", warning);
      info->damaged_at = 0;
      const char *at = strstr(warning, "byte ");
      if (at) info->damaged_at = strtoll(at + 5, NULL, 10);
    }
  }
  if (ok && info) {
    info->slices = im_rows(t, IM_T_SLICE);
    info->threads = im_rows(t, IM_T_THREAD);
    info->processes = im_rows(t, IM_T_PROCESS);
    info->counters = im_rows(t, IM_T_COUNTER);
    info->sched = im_rows(t, IM_T_SCHED);
    info->args = im_rows(t, IM_T_ARGS);
    for (int s = 0; s < IM_NSTATS; s++) info->problems += im_stat_get(t, (im_stat)s);
    info->problems -= im_stat_get(t, IM_STAT_JSON_DISPLAY_TIME_UNIT);
  }
  if (ok) ok = im_install(t, cat, db, err);
  im_trace_free(t);
  if (ok && info) info->import_ns = rt_now_ns() - t0;
  return ok;
}
