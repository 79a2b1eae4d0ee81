/*
 * proto_system.c — ProcessTree, ProcessStats and SysStats packets
 * (TRACES.md §3.8): process and thread identity, names and command lines
 * from /proc scans, per-process memory counters, and cpufreq samples.
 */
#include <stdio.h>

#include "import/proto_import.h"

/* ---- ProcessTree ------------------------------------------------------------ */

static void tree_process(pb_imp *m, const pb_pctx *c, pb_span p) {
  im_trace *t = m->t;
  pb_reader r;
  pb_field f;
  int64_t pid = 0, ppid = 0, uid = 0, start = 0;
  int has_ppid = 0, has_uid = 0, has_start = 0, is_comm = 0, kthread = -1;
  pb_span argv[64];
  int argc = 0, more = 0;
  pb_init_span(&r, p);
  while (pb_next(&r, &f)) {
    switch (f.id) {
    case 1: pid = pb_i32(&f); break;
    case 2: ppid = pb_i32(&f), has_ppid = 1; break;
    case 3:
      if (f.wt != PB_LEN) break;
      if (argc < 64) argv[argc++] = f.s;
      else more = 1;
      break;
    case 5: uid = pb_i32(&f), has_uid = 1; break;
    case 7: start = pb_i64(&f), has_start = 1; break;
    case 8: kthread = pb_bool(&f); break;
    case 9: is_comm = pb_bool(&f); break;
    }
  }
  if (r.bad) pb_stat(m, IM_STAT_PROTO_MALFORMED_FIELDS);
  (void)more;
  if (!argc) return;   /* §3.8.1: processes without cmdline are skipped */
  int64_t parent = has_ppid ? im_process(t, ppid) : IM_NONE;
  int64_t upid = im_process(t, pid);
  if (upid < 0) return;
  /* name and cmdline */
  pb_span name = argv[0];
  char buf[4096];
  size_t len = 0;
  if (argc == 1) {
    for (size_t i = 0; i < name.n; i++)
      if (name.p[i] == ' ') {
        name.n = i;
        break;
      }
  }
  int kworker = ppid == 2 && name.n > 8 && memcmp(name.p, "kworker/", 8) == 0;
  if (kworker) {
    for (size_t i = 8; i < name.n; i++)
      if (name.p[i] == '+' || name.p[i] == '-') {
        name.n = i;
        break;
      }
  }
  uint32_t sname = im_str(t, (const char *)name.p, name.n);
  uint32_t scmd;
  if (kworker) {
    scmd = sname;
  } else {
    for (int i = 0; i < argc; i++) {
      if (i && len < sizeof buf) buf[len++] = ' ';
      size_t k = argv[i].n < sizeof buf - len ? argv[i].n : sizeof buf - len;
      memcpy(buf + len, argv[i].p, k);
      len += k;
    }
    scmd = im_str(t, buf, len);
  }
  im_process_name(t, upid, sname, IM_PNAME_SYSTEM);
  im_set_str(t, IM_T_PROCESS, IM_PROCESS_CMDLINE, upid, scmd);
  if (parent >= 0 && im_is_null(t, IM_T_PROCESS, IM_PROCESS_PARENT_UPID, upid))
    im_set_i64(t, IM_T_PROCESS, IM_PROCESS_PARENT_UPID, upid, parent);
  if (is_comm) im_thread_name(t, im_thread_update(t, pid, pid), sname, IM_TNAME_PROCESS_TREE);
  if (has_uid) {
    im_set_i64(t, IM_T_PROCESS, IM_PROCESS_UID, upid, uid);
    im_set_i64(t, IM_T_PROCESS, IM_PROCESS_ANDROID_APPID, upid, uid % 100000);
    im_set_i64(t, IM_T_PROCESS, IM_PROCESS_ANDROID_USER_ID, upid, uid / 100000);
  }
  if (has_start && im_is_null(t, IM_T_PROCESS, IM_PROCESS_START_TS, upid)) {
    int64_t ts;
    if (pb_clock_convert(m, PB_CLK_BOOTTIME, c->seq_id, start, &ts))
      im_set_i64(t, IM_T_PROCESS, IM_PROCESS_START_TS, upid, ts);
  }
  if (kthread >= 0) {
    im_args *a = im_process_args(t, upid);
    if (a) im_args_bool(a, im_cstr(t, "is_kthread"), kthread);
  }
}

static void tree_thread(pb_imp *m, pb_span p) {
  pb_reader r;
  pb_field f;
  int64_t tid = 0, tgid = 0;
  pb_span name = {0};
  int has_name = 0;
  pb_init_span(&r, p);
  while (pb_next(&r, &f)) {
    if (f.id == 1) tid = pb_i32(&f);
    else if (f.id == 3) tgid = pb_i32(&f);
    else if (f.id == 2 && f.wt == PB_LEN) name = f.s, has_name = 1;
  }
  if (r.bad) pb_stat(m, IM_STAT_PROTO_MALFORMED_FIELDS);
  int64_t utid = im_thread_update(m->t, tid, tgid);
  if (utid >= 0 && has_name)
    im_thread_name(m->t, utid, im_str(m->t, (const char *)name.p, name.n), IM_TNAME_PROCESS_TREE);
}

void pb_parse_process_tree(pb_imp *m, const pb_pctx *c, pb_span pt) {
  pb_reader r;
  pb_field f;
  pb_init_span(&r, pt);
  while (pb_next(&r, &f)) {
    if (f.wt != PB_LEN) continue;
    if (f.id == 1) tree_process(m, c, f.s);
    else if (f.id == 2) tree_thread(m, f.s);
  }
  if (r.bad) pb_stat(m, IM_STAT_PROTO_MALFORMED_FIELDS);
}

/* ---- ProcessStats ------------------------------------------------------------- */

static const struct { uint32_t field; const char *key; } MEM[] = {
    {2, "virt"},       {3, "rss"},  {4, "rss.anon"},   {5, "rss.file"},
    {6, "rss.shmem"},  {7, "swap"}, {8, "locked"},     {9, "rss.watermark"},
    {24, "dmabuf_rss"},
};

static void stats_process(pb_imp *m, const pb_pctx *c, pb_span p) {
  im_trace *t = m->t;
  pb_reader r;
  pb_field f;
  int64_t pid = -1;
  pb_init_span(&r, p);
  while (pb_next(&r, &f))
    if (f.id == 1) pid = pb_i32(&f);
  if (pid < 0) return;
  int64_t upid = im_process(t, pid);
  if (upid < 0) return;
  pb_init_span(&r, p);
  while (pb_next(&r, &f)) {
    if (f.id == 10 && f.wt == PB_VARINT) {
      im_track_spec s;
      im_track_spec_init(&s, "oom_score_adj", IM_EV_COUNTER);
      im_track_dim_int(&s, "upid", upid);
      s.name = im_cstr(t, "oom_score_adj");
      im_counter(t, im_track(t, &s), c->ts, (double)pb_i64(&f), IM_NONE);
      continue;
    }
    if (f.id == 11 && f.wt == PB_LEN) {   /* Thread: tid 1 */
      pb_field tf;
      if (pb_find(f.s, 1, &tf)) im_thread_update(t, pb_i32(&tf), pid);
      continue;
    }
    for (size_t i = 0; i < sizeof MEM / sizeof *MEM; i++) {
      if (MEM[i].field != f.id || f.wt != PB_VARINT) continue;
      char name[32];
      snprintf(name, sizeof name, "mem.%s", MEM[i].key);
      im_track_spec s;
      im_track_spec_init(&s, "process_memory", IM_EV_COUNTER);
      im_track_dim_int(&s, "upid", upid);
      im_track_dim_str(&s, "process_memory_key", im_cstr(t, MEM[i].key));
      s.name = im_cstr(t, name);
      im_counter(t, im_track(t, &s), c->ts, (double)pb_i64(&f) * 1024.0, IM_NONE);
    }
  }
}

void pb_parse_process_stats(pb_imp *m, const pb_pctx *c, pb_span ps) {
  pb_reader r;
  pb_field f;
  pb_init_span(&r, ps);
  while (pb_next(&r, &f))
    if (f.id == 1 && f.wt == PB_LEN) stats_process(m, c, f.s);
  if (r.bad) pb_stat(m, IM_STAT_PROTO_MALFORMED_FIELDS);
}

/* ---- SysStats ------------------------------------------------------------------- */

void pb_parse_sys_stats(pb_imp *m, const pb_pctx *c, pb_span ss) {
  pb_reader r;
  pb_field f;
  int64_t cpu = 0;
  pb_init_span(&r, ss);
  while (pb_next(&r, &f)) {
    if (f.id != 11) continue;
    pb_rep it;
    uint64_t v;
    pb_rep_init(&it, &f, PB_VARINT);
    while (pb_rep_next(&it, &v)) {
      int64_t track = im_cpu_counter_track(m->t, "cpu_frequency", "cpufreq", cpu);
      im_cpu_seen(m->t, cpu);
      im_counter(m->t, track, c->ts, (double)(uint32_t)v, IM_NONE);
      cpu++;
    }
  }
  if (r.bad) pb_stat(m, IM_STAT_PROTO_MALFORMED_FIELDS);
}
