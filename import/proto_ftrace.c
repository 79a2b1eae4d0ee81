/*
 * proto_ftrace.c — ftrace events and compact_sched records in sorted
 * order (TRACES.md §3.9, §3.10 through the builder's sched engine).
 *
 * Every event gets an ftrace_event row (its fields as args, names from
 * proto_ftrace_events.def) except sched_switch, whose row the sched
 * engine writes; then the typed effect: sched_switch / sched_waking /
 * compact records → sched and thread_state, cpu_frequency / cpu_idle →
 * counters, task_newtask / task_rename / sched_process_free → thread and
 * process identity, sched_blocked_reason → the blocked row, print →
 * atrace markers. Events before tracing started are dropped; events
 * before the per-CPU data start keep only their ftrace_event row (§3.9.2).
 */
#include <stdio.h>
#include <stdlib.h>

#include "import/json.h"   /* im_atrace_marker */
#include "import/proto_import.h"

enum { K_INT, K_UINT, K_STR };
#define INT K_INT
#define UINT K_UINT
#define STR K_STR
typedef struct ev_row { uint32_t ev; const char *evname; uint32_t field; const char *fname; int kind; } ev_row;
static const ev_row ROWS[] = {
#define EV(id, name) {id, name, 0, NULL, 0},
#define F(id, name, kind) {0, NULL, id, name, kind},
#include "import/proto_ftrace_events.def"
#undef EV
#undef F
};
#undef INT
#undef UINT
#undef STR
enum { NROWS = sizeof ROWS / sizeof *ROWS };

enum {
  FE_PRINT = 3, FE_SCHED_SWITCH = 4, FE_CPU_FREQUENCY = 11, FE_CPU_IDLE = 13,
  FE_SCHED_BLOCKED_REASON = 18, FE_SCHED_WAKING = 20, FE_TASK_NEWTASK = 235,
  FE_TASK_RENAME = 236, FE_SCHED_PROCESS_FREE = 240,
};
enum { CLONE_THREAD = 0x10000, IN_KERNEL_SYMBOLS = 26 };

/* The ROWS index of an event kind's EV row, or -1. */
static int ev_index(uint32_t ev) {
  for (int i = 0; i < NROWS; i++)
    if (ROWS[i].evname && ROWS[i].ev == ev) return i;
  return -1;
}

static uint32_t span_str(pb_imp *m, pb_span s) { return im_str(m->t, (const char *)s.p, s.n); }

/* The ftrace_event row of an event (args = its fields). */
static void event_row(pb_imp *m, int64_t ts, uint32_t cpu, int64_t utid, int64_t flags, int row,
                      uint32_t ev, pb_span body) {
  im_trace *t = m->t;
  int64_t set = IM_NONE;
  uint32_t name;
  if (row < 0) {
    char buf[32];
    snprintf(buf, sizeof buf, "unknown(%u)", ev);
    name = im_cstr(t, buf);
  } else {
    name = m->ftrace_str[row];
    im_args *a = m->scratch;
    im_args_clear(a);
    pb_reader r;
    pb_field f;
    pb_init_span(&r, body);
    while (pb_next(&r, &f)) {
      for (int i = row + 1; i < NROWS && !ROWS[i].evname; i++) {
        if (ROWS[i].field != f.id) continue;
        uint32_t key = m->ftrace_str[i];
        if (ROWS[i].kind == K_STR) {
          if (f.wt == PB_LEN) im_args_string(a, key, span_str(m, f.s));
        } else if (ROWS[i].kind == K_UINT) {
          im_args_uint(a, key, f.v);
        } else {
          im_args_int(a, key, pb_i64(&f));
        }
        break;
      }
    }
    set = im_args_commit(t, a);
  }
  im_ftrace_event(t, ts, name, cpu, utid, set, flags);
}

/* A field of an event body. */
static int64_t fint(pb_span b, uint32_t id, int64_t dflt) {
  pb_field f;
  return pb_find(b, id, &f) && f.wt != PB_LEN ? pb_i64(&f) : dflt;
}
static uint32_t fstr(pb_imp *m, pb_span b, uint32_t id) {
  pb_field f;
  return pb_find(b, id, &f) && f.wt == PB_LEN ? span_str(m, f.s) : IM_NULL_STR;
}

void pb_ftrace_init(pb_imp *m) {
  im_trace *t = m->t;
  m->ftrace_str = malloc(NROWS * sizeof *m->ftrace_str);
  if (!m->ftrace_str) {
    im_oom(t);
    return;
  }
  for (int i = 0; i < NROWS; i++)
    m->ftrace_str[i] = im_cstr(t, ROWS[i].evname ? ROWS[i].evname : ROWS[i].fname);
  m->s_sched_waking = im_cstr(t, "sched_waking");
  m->s_comm = im_cstr(t, "comm");
  m->s_pid = im_cstr(t, "pid");
  m->s_prio = im_cstr(t, "prio");
  m->s_target_cpu = im_cstr(t, "target_cpu");
}

void pb_parse_ftrace_event(pb_imp *m, uint32_t cpu, int64_t ts, pb_span evmsg, uint64_t lpos) {
  im_trace *t = m->t;
  pb_reader r;
  pb_field f;
  int64_t pid = -1, flags = IM_NONE;
  uint32_t ev = 0;
  pb_span body = {0};
  pb_init_span(&r, evmsg);
  while (pb_next(&r, &f)) {
    if (f.id == 2) pid = pb_i32(&f);
    else if (f.id == 5) flags = (int64_t)f.v;
    else if (f.id > 2 && f.wt == PB_LEN && !ev) ev = f.id, body = f.s;
  }
  if (r.bad) pb_stat(m, IM_STAT_PROTO_MALFORMED_FIELDS);
  if (!ev) {
    pb_stat(m, IM_STAT_FTRACE_MISSING_EVENT_ID);
    return;
  }
  if (pid < 0) {
    pb_stat(m, IM_STAT_FTRACE_BUNDLE_TOKENIZER_ERRORS);
    return;
  }
  if (m->tracing_started_ns > 0 && ts < m->tracing_started_ns && !m->preserve_ftrace) {
    pb_stat(m, IM_STAT_FTRACE_PACKET_BEFORE_TRACING_START);
    return;
  }
  im_cpu_seen(t, cpu);
  int typed = ts >= m->ftrace_data_start;
  int row = ev_index(ev);
  if (row < 0) pb_stat(m, IM_STAT_PROTO_UNKNOWN_FTRACE_EVENTS);
  int64_t utid = im_thread(t, pid);
  if (ev == FE_SCHED_SWITCH) {
    if (typed)
      im_sched_switch(t, cpu, ts, fint(body, 2, 0), fstr(m, body, 1), fint(body, 3, 0),
                      fint(body, 4, 0), fint(body, 6, 0), fstr(m, body, 5), fint(body, 7, 0));
    else
      event_row(m, ts, cpu, utid, flags, row, ev, body);
    return;
  }
  event_row(m, ts, cpu, utid, flags, row, ev, body);
  if (!typed) return;
  switch (ev) {
  case FE_SCHED_WAKING: {
    int64_t wakee = im_thread(t, fint(body, 2, 0));
    im_thread_name(t, wakee, fstr(m, body, 1), IM_TNAME_FTRACE);
    im_sched_waking(t, ts, wakee, utid, -1);
    break;
  }
  case FE_CPU_FREQUENCY: case FE_CPU_IDLE: {
    int64_t c = fint(body, 2, 0);
    int freq = ev == FE_CPU_FREQUENCY;
    im_cpu_seen(t, c);
    int64_t track = im_cpu_counter_track(t, freq ? "cpu_frequency" : "cpu_idle",
                                         freq ? "cpufreq" : "cpuidle", c);
    im_counter(t, track, ts, (double)(uint32_t)fint(body, 1, 0), IM_NONE);
    break;
  }
  case FE_TASK_NEWTASK: {
    int64_t npid = fint(body, 1, 0);
    uint64_t clone = (uint64_t)fint(body, 3, 0);
    uint32_t comm = fstr(m, body, 2);
    if (!npid) break;
    int64_t nt;
    if (clone & CLONE_THREAD) {
      nt = im_thread_new(t, npid, im_thread_upid(t, utid));
      if (nt < 0) break;
    } else {
      int64_t up = im_process_new(t, npid);
      if (up < 0) break;
      im_set_i64(t, IM_T_PROCESS, IM_PROCESS_START_TS, up, ts);
      im_process_name(t, up, comm, IM_PNAME_SYSTEM);
      int64_t parent = im_thread_upid(t, utid);
      if (parent >= 0) im_set_i64(t, IM_T_PROCESS, IM_PROCESS_PARENT_UPID, up, parent);
      nt = im_thread_update(t, npid, npid);
    }
    im_set_i64(t, IM_T_THREAD, IM_THREAD_START_TS, nt, ts);
    im_thread_name(t, nt, comm, IM_TNAME_FTRACE);
    im_sched_waking(t, ts, nt, utid, 0);
    break;
  }
  case FE_TASK_RENAME: {
    int64_t tt = im_thread(t, fint(body, 1, 0));
    uint32_t comm = fstr(m, body, 3);
    im_thread_name(t, tt, comm, IM_TNAME_FTRACE);
    int64_t up = im_thread_upid(t, tt);
    if (up >= 0 && im_process_pid(t, up) == im_thread_tid(t, tt))
      im_process_name(t, up, comm, IM_PNAME_SYSTEM);
    break;
  }
  case FE_PRINT: {   /* atrace markers (§3.9.6), shared with systrace text */
    pb_field bf;
    if (pb_find(body, 2, &bf) && bf.wt == PB_LEN)
      im_atrace_marker(t, ts, pid, (const char *)bf.s.p, bf.s.n);
    break;
  }
  case FE_SCHED_PROCESS_FREE:
    im_thread_end(t, im_thread_find(t, fint(body, 2, 0)), ts);   /* never creates one */
    break;
  case FE_SCHED_BLOCKED_REASON: {
    int64_t caller = fint(body, 2, -1);
    uint32_t fn = IM_NULL_STR;
    if (caller >= 0) {   /* InternedString of the bundle's generation */
      uint32_t seq_idx = pb_bundle_seq_at(m, lpos);
      const pb_gen *g = pb_seq_gen_at(&m->seqs.v[seq_idx], lpos);
      pb_interned *e = pb_intern_get(m, seq_idx, g->epoch, IN_KERNEL_SYMBOLS, (uint64_t)caller);
      if (e) fn = pb_intern_str(m, e, 2);
    }
    int64_t io = fint(body, 3, -1);
    im_sched_blocked_reason(t, im_thread(t, fint(body, 1, 0)), io < 0 ? -1 : io != 0, fn);
    break;
  }
  }
}

/* ---- compact_sched (§3.9.7) ---------------------------------------------------------- */

void pb_parse_compact(pb_imp *m, uint32_t cpu, const pb_csched *r) {
  im_trace *t = m->t;
  if (m->tracing_started_ns > 0 && r->ts < m->tracing_started_ns && !m->preserve_ftrace) {
    pb_stat(m, IM_STAT_FTRACE_PACKET_BEFORE_TRACING_START);
    return;
  }
  im_cpu_seen(t, cpu);
  int typed = r->ts >= m->ftrace_data_start;
  if (r->kind == PB_CS_SWITCH) {
    int64_t next = im_thread(t, r->pid);
    im_thread_name(t, next, r->comm, IM_TNAME_FTRACE);
    int64_t prev = m->compact_last[cpu];
    m->compact_last[cpu] = next;
    if (prev < 0) {
      pb_stat(m, IM_STAT_COMPACT_SCHED_SWITCH_SKIPPED);
      return;
    }
    if (typed) im_sched_switch_utid(t, cpu, r->ts, prev, r->a, next, r->prio);
    return;
  }
  int64_t waker = m->compact_last[cpu];
  if (waker < 0) {
    pb_stat(m, IM_STAT_COMPACT_SCHED_WAKING_SKIPPED);
    return;
  }
  /* the args repeat: a hit is the id the same content was written with */
  uint64_t h = im_hash(im_hash(im_hash(r->comm, (uint64_t)r->pid), (uint64_t)r->prio), (uint64_t)r->a);
  __typeof__(m->waking_cache[0]) *slot = &m->waking_cache[h & 1023];
  if (!(slot->set1 && slot->comm == r->comm && slot->pid == r->pid && slot->prio == r->prio &&
        slot->cpu == r->a)) {
    im_args *a = m->scratch;
    im_args_clear(a);
    im_args_string(a, m->s_comm, r->comm);
    im_args_int(a, m->s_pid, r->pid);
    im_args_int(a, m->s_prio, r->prio);
    im_args_int(a, m->s_target_cpu, r->a);
    int64_t set = im_args_commit(t, a);
    slot->comm = r->comm, slot->pid = r->pid, slot->prio = r->prio, slot->cpu = r->a;
    slot->set1 = set + 1;
  }
  im_ftrace_event(t, r->ts, m->s_sched_waking, cpu, waker, slot->set1 - 1, r->flags);
  if (!typed) return;
  int64_t wakee = im_thread(t, r->pid);
  im_thread_name(t, wakee, r->comm, IM_TNAME_FTRACE);
  im_sched_waking(t, r->ts, wakee, waker, (r->flags & 0x18) != 0);
}
