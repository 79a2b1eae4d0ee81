/*
 * sched.c — sched and thread_state construction (TRACES.md §3.10), shared
 * by the protobuf ftrace parser, compact_sched and the systrace text and
 * Fuchsia context switches of JSON traces.
 *
 * Per cpu the open sched row and the thread last switched in; per thread
 * its last thread_state row. A switch closes the cpu's open row (when the
 * prev pid matches), gives the prev thread a row in its end state and the
 * next thread a `Running` row; a waking turns a sleeping thread `R`. The
 * reserved idle utid 0 gets sched rows but never thread_state rows.
 */
#include <stdlib.h>

#include "trace.h"

enum { MAX_CPUS = 1 << 16 };

void im_set_kernel_version(im_trace *t, int major, int minor) {
  t->kernel_major = major;
  t->kernel_minor = minor;
  for (int i = 0; i < 64; i++) t->state_cache_st[i] = -1;   /* letters change */
}

static int kernel_at_least(const im_trace *t, int major, int minor) {
  return t->kernel_major > major || (t->kernel_major == major && t->kernel_minor >= minor);
}

/* ---- prev_state (§3.10.5) ------------------------------------------------- */

static uint32_t task_state_str(im_trace *t, int64_t st);

/* Every switch asks: the few prev_state values a trace uses are cached. */
uint32_t im_task_state_str(im_trace *t, int64_t st) {
  if (st < 0) return IM_NULL_STR;
  unsigned slot = (unsigned)((uint64_t)st * 0x9e3779b97f4a7c15ull >> 58);
  if (t->state_cache_st[slot] == st) return t->state_cache_id[slot];
  uint32_t id = task_state_str(t, st);
  t->state_cache_st[slot] = st;
  t->state_cache_id[slot] = id;
  return id;
}

static uint32_t task_state_str(im_trace *t, int64_t st) {
  /* Letter bits in the output order S D T t X Z P x K W N I. */
  static const char letters[] = "SDTtXZPxKWNI";
  int64_t bit[12] = {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0, 0, 0, 0, 0, 0};
  int64_t preempt, known;
  int d_n_is_i = 0;
  if (kernel_at_least(t, 4, 14)) {
    bit[6] = 0x40;    /* P */
    bit[11] = 0x80;   /* I */
    preempt = 0x100;
    known = 0x1FF;
    if (st & 0xFE00) return IM_NULL_STR;
  } else {
    bit[7] = 0x40;    /* x */
    bit[8] = 0x80;    /* K */
    bit[9] = 0x100;   /* W */
    bit[6] = 0x200;   /* P */
    bit[10] = 0x400;  /* N */
    preempt = kernel_at_least(t, 4, 8) ? 0x1000 : 0x800;
    known = 0x7FF | preempt;
    d_n_is_i = 1;
  }
  if (st & ~known) return IM_NULL_STR;
  int64_t flags = st & ~preempt;
  if (!flags) return im_cstr(t, st & preempt ? "R+" : "R");
  if (d_n_is_i && flags == (0x02 | 0x400)) return im_cstr(t, "I");
  char out[4];
  int n = 0;
  for (int i = 0; i < 12 && n < 3; i++)
    if (bit[i] && (flags & bit[i])) out[n++] = letters[i];
  return im_str(t, out, (size_t)n);
}

int64_t im_task_state_parse(const char *s, size_t n) {
  if (n == 1 && s[0] == 'R') return 0;
  if (n == 2 && s[0] == 'R' && s[1] == '+') return 0x800;
  int64_t m = 0;
  for (size_t i = 0; i < n; i++) {
    switch (s[i]) {
    case 'S': m |= 0x01; break;
    case 'D': m |= 0x02; break;
    case 'T': m |= 0x04; break;
    case 't': m |= 0x08; break;
    case 'X': m |= 0x10; break;
    case 'Z': m |= 0x20; break;
    case 'x': m |= 0x40; break;
    case 'K': m |= 0x80; break;
    case 'W': m |= 0x100; break;
    case 'P': m |= 0x200; break;
    case 'N': m |= 0x400; break;
    case 'I': m |= 0x402; break;
    case 'R': break;
    case '+': m |= 0x800; break;
    case '|': break;
    default: return -1;
    }
  }
  return n ? m : -1;
}

/* ---- cpus ---------------------------------------------------------------- */

void im_cpu_seen(im_trace *t, int64_t cpu) {
  if (cpu < 0 || cpu >= MAX_CPUS) return;
  while (t->cpu_seen.n <= cpu)
    if (!IM_PUSH(t, t->cpu_seen, 0)) return;
  t->cpu_seen.v[cpu] = 1;
}

static im_cpu_state *cpu_state(im_trace *t, uint32_t cpu) {
  if (cpu >= MAX_CPUS) return NULL;
  im_cpu_seen(t, cpu);
  while (t->cpus.n <= cpu)
    if (!IM_PUSH(t, t->cpus, ((im_cpu_state){.sched_row = IM_NONE, .utid = IM_NONE,
                                             .pid = IM_NONE})))
      return NULL;
  return &t->cpus.v[cpu];
}

int64_t im_sched_cpu_utid(const im_trace *t, uint32_t cpu) {
  return cpu < t->cpus.n ? t->cpus.v[cpu].utid : IM_NONE;
}

/* ---- thread_state ------------------------------------------------------------ */

static int64_t last_state(const im_trace *t, int64_t utid) {
  return utid >= 0 && utid < t->thread_last_state.n ? t->thread_last_state.v[utid] : IM_NONE;
}

/* The hot paths below write the engine's own rows directly (im__put_*):
 * every column they touch has a known type and the row exists. */

static void close_state(im_trace *t, int64_t row, int64_t ts) {
  if (row == IM_NONE) return;
  im_tab *tab = im__tab(t, IM_T_THREAD_STATE);
  int64_t *dur = tab->data[IM_THREAD_STATE_DUR];
  if (dur[row] != -1) return;
  dur[row] = ts - ((const int64_t *)tab->data[IM_THREAD_STATE_TS])[row];
}

/* Opens a state row for utid (never for the idle utid 0). */
static int64_t open_state(im_trace *t, int64_t ts, int64_t utid, uint32_t state, int64_t cpu) {
  if (utid <= 0 || utid >= t->thread_last_state.n) return IM_NONE;
  int64_t row = im_append(t, IM_T_THREAD_STATE);
  if (row < 0) return IM_NONE;
  im_tab *tab = im__tab(t, IM_T_THREAD_STATE);
  im__put_i64(tab, IM_THREAD_STATE_TS, row, ts);
  im__put_i64(tab, IM_THREAD_STATE_DUR, row, -1);
  im__put_u32(tab, IM_THREAD_STATE_UTID, row, (uint32_t)utid);
  if (state != IM_NULL_STR) im__put_u32(tab, IM_THREAD_STATE_STATE, row, state);
  if (cpu >= 0) {
    im__put_u32(tab, IM_THREAD_STATE_CPU, row, (uint32_t)cpu);
    im__put_u32(tab, IM_THREAD_STATE_UCPU, row, (uint32_t)cpu);
  }
  t->thread_last_state.v[utid] = row;
  return row;
}

static int is_running(im_trace *t, int64_t row) {
  return row != IM_NONE && im_get_str(t, IM_T_THREAD_STATE, IM_THREAD_STATE_STATE, row) ==
                               t->s_running;
}

/* ---- switches -------------------------------------------------------------- */

static void switch_rows(im_trace *t, uint32_t cpu, im_cpu_state *c, int64_t ts, int64_t prev_utid,
                        int64_t prev_state, int64_t next_utid, int64_t next_prio, int close) {
  uint32_t end_state = im_task_state_str(t, prev_state);
  if (end_state == IM_NULL_STR) im_stat_add(t, IM_STAT_TASK_STATE_INVALID, 1);
  im_tab *sc = im__tab(t, IM_T_SCHED);
  if (close && c->sched_row != IM_NONE) {
    int64_t r = c->sched_row;
    ((int64_t *)sc->data[IM_SCHED_DUR])[r] = ts - ((const int64_t *)sc->data[IM_SCHED_TS])[r];
    if (end_state != IM_NULL_STR) im__put_u32(sc, IM_SCHED_END_STATE, r, end_state);
  }
  int64_t row = im_append(t, IM_T_SCHED);
  if (row < 0) return;
  im__put_i64(sc, IM_SCHED_TS, row, ts);
  im__put_i64(sc, IM_SCHED_DUR, row, -1);
  im__put_u32(sc, IM_SCHED_CPU, row, cpu);
  im__put_u32(sc, IM_SCHED_UTID, row, (uint32_t)next_utid);
  if (next_prio != IM_NONE) im__put_i64(sc, IM_SCHED_PRIORITY, row, next_prio);
  im__put_u32(sc, IM_SCHED_UCPU, row, cpu);
  c->sched_row = row;
  c->utid = next_utid;
  /* thread_state: prev leaves Running (a row that was not Running stays
   * open: data was lost), next runs. */
  int64_t prev_row = last_state(t, prev_utid);
  if (is_running(t, prev_row)) close_state(t, prev_row, ts);
  open_state(t, ts, prev_utid, end_state, -1);
  close_state(t, last_state(t, next_utid), ts);
  open_state(t, ts, next_utid, t->s_running, cpu);
}

/* The args of sched_switch ftrace rows repeat (a few threads, states and
 * priorities): a direct-mapped cache of the last sets written, by value,
 * skips building and deduplicating the 7-row set. A hit returns the id
 * im_args_commit returned for the same content, so nothing changes. */
typedef struct im_switch_key {
  int64_t prev_pid, prev_prio, prev_state, next_pid, next_prio;
  uint32_t prev_comm, next_comm;
  int64_t set;   /* IM_NONE: empty slot */
} im_switch_key;
enum { SWITCH_CACHE = 1024 };

static void switch_event(im_trace *t, uint32_t cpu, int64_t ts, int64_t prev_utid,
                         uint32_t prev_comm, int64_t prev_pid, int64_t prev_prio,
                         int64_t prev_state, uint32_t next_comm, int64_t next_pid,
                         int64_t next_prio) {
  if (!t->switch_cache) {
    t->switch_cache = malloc(SWITCH_CACHE * sizeof *t->switch_cache);
    if (!t->switch_cache) return (void)im_oom(t);
    for (int i = 0; i < SWITCH_CACHE; i++) t->switch_cache[i].set = IM_NONE;
  }
  im_switch_key k = {prev_pid, prev_prio, prev_state, next_pid, next_prio, prev_comm, next_comm, 0};
  uint64_t h = im_hash(im_hash(im_hash(im_hash((uint64_t)prev_pid, (uint64_t)next_pid),
                                       (uint64_t)prev_state ^ ((uint64_t)prev_comm << 32)),
                               (uint64_t)next_comm ^ ((uint64_t)prev_prio << 32)),
                       (uint64_t)next_prio);
  im_switch_key *slot = &t->switch_cache[h & (SWITCH_CACHE - 1)];
  int64_t set;
  if (slot->set != IM_NONE && slot->prev_pid == k.prev_pid && slot->next_pid == k.next_pid &&
      slot->prev_state == k.prev_state && slot->prev_prio == k.prev_prio &&
      slot->next_prio == k.next_prio && slot->prev_comm == k.prev_comm &&
      slot->next_comm == k.next_comm) {
    set = slot->set;
  } else {
    im_args *a = im_args_new(t);
    if (!a) return;
    const uint32_t *key = t->s_switch_key;
    im_args_string(a, key[0], prev_comm);
    im_args_int(a, key[1], prev_pid);
    im_args_int(a, key[2], prev_prio);
    im_args_int(a, key[3], prev_state);
    im_args_string(a, key[4], next_comm);
    im_args_int(a, key[5], next_pid);
    im_args_int(a, key[6], next_prio);
    set = im_args_commit(t, a);
    im_args_free(a);
    k.set = set;
    *slot = k;
  }
  im_ftrace_event(t, ts, t->s_sched_switch, cpu, prev_utid, set, IM_NONE);
}

void im_sched_switch(im_trace *t, uint32_t cpu, int64_t ts, int64_t prev_pid, uint32_t prev_comm,
                     int64_t prev_prio, int64_t prev_state, int64_t next_pid, uint32_t next_comm,
                     int64_t next_prio) {
  im_cpu_state *c = t->failed ? NULL : cpu_state(t, cpu);
  if (!c) return;
  int64_t next = im_thread(t, next_pid);
  im_thread_name(t, next, next_comm, IM_TNAME_FTRACE);
  int close = c->sched_row != IM_NONE;
  if (close && prev_pid != c->pid) {
    im_stat_add(t, IM_STAT_MISMATCHED_SCHED_SWITCH_TIDS, 1);
    close = 0;
  }
  int64_t prev = im_thread(t, prev_pid);
  im_thread_name(t, prev, prev_comm, IM_TNAME_FTRACE);
  switch_event(t, cpu, ts, prev, prev_comm, prev_pid, prev_prio, prev_state, next_comm, next_pid,
               next_prio);
  switch_rows(t, cpu, c, ts, prev, prev_state, next, next_prio, close);
  c->pid = next_pid;
  c->prio = next_prio;
}

void im_sched_switch_utid(im_trace *t, uint32_t cpu, int64_t ts, int64_t prev_utid,
                          int64_t prev_state, int64_t next_utid, int64_t next_prio) {
  im_cpu_state *c = t->failed ? NULL : cpu_state(t, cpu);
  if (!c || next_utid < 0) return;
  if (prev_utid >= 0)
    switch_event(t, cpu, ts, prev_utid, im_get_str(t, IM_T_THREAD, IM_THREAD_NAME, prev_utid),
                 im_thread_tid(t, prev_utid), c->prio, prev_state,
                 im_get_str(t, IM_T_THREAD, IM_THREAD_NAME, next_utid),
                 im_thread_tid(t, next_utid), next_prio);
  switch_rows(t, cpu, c, ts, prev_utid, prev_state, next_utid, next_prio, 1);
  c->pid = im_thread_tid(t, next_utid);
  c->prio = next_prio;
}

void im_sched_waking(im_trace *t, int64_t ts, int64_t wakee, int64_t waker, int irq_context) {
  if (wakee <= 0 || t->failed) return;
  int64_t row = last_state(t, wakee);
  if (row != IM_NONE) {
    uint32_t st = im_get_str(t, IM_T_THREAD_STATE, IM_THREAD_STATE_STATE, row);
    size_t n = 0;
    const char *s = st == IM_NULL_STR ? "" : rt_str_get(t->sp, st, &n);
    if (st == t->s_running || (n == 1 && s[0] == 'R')) return;
    close_state(t, row, ts);
  }
  int64_t r = open_state(t, ts, wakee, t->s_R, -1);
  if (r < 0) return;
  if (waker != IM_NONE) {
    im_set_i64(t, IM_T_THREAD_STATE, IM_THREAD_STATE_WAKER_UTID, r, waker);
    int64_t wr = last_state(t, waker);
    if (is_running(t, wr)) im_set_i64(t, IM_T_THREAD_STATE, IM_THREAD_STATE_WAKER_ID, r, wr);
  }
  if (irq_context >= 0) im_set_i64(t, IM_T_THREAD_STATE, IM_THREAD_STATE_IRQ_CONTEXT, r, irq_context);
}

void im_sched_blocked_reason(im_trace *t, int64_t utid, int io_wait, uint32_t blocked_function) {
  int64_t row = last_state(t, utid);
  if (row == IM_NONE || is_running(t, row)) return;
  if (io_wait >= 0) im_set_i64(t, IM_T_THREAD_STATE, IM_THREAD_STATE_IO_WAIT, row, io_wait);
  im_set_str(t, IM_T_THREAD_STATE, IM_THREAD_STATE_BLOCKED_FUNCTION, row, blocked_function);
}

int64_t im_thread_state_row(im_trace *t, int64_t ts, int64_t dur, int64_t utid, uint32_t state,
                            int64_t cpu, int io_wait, uint32_t blocked_function) {
  int64_t row = im_append(t, IM_T_THREAD_STATE);
  if (row < 0) return IM_NONE;
  im_table_id T = IM_T_THREAD_STATE;
  im_set_i64(t, T, IM_THREAD_STATE_TS, row, ts);
  im_set_i64(t, T, IM_THREAD_STATE_DUR, row, dur);
  im_set_i64(t, T, IM_THREAD_STATE_UTID, row, utid);
  im_set_str(t, T, IM_THREAD_STATE_STATE, row, state);
  if (io_wait >= 0) im_set_i64(t, T, IM_THREAD_STATE_IO_WAIT, row, io_wait);
  im_set_str(t, T, IM_THREAD_STATE_BLOCKED_FUNCTION, row, blocked_function);
  if (state == t->s_running && cpu >= 0 && cpu < MAX_CPUS) {
    im_set_i64(t, T, IM_THREAD_STATE_CPU, row, cpu);
    im_set_i64(t, T, IM_THREAD_STATE_UCPU, row, cpu);
    im_cpu_seen(t, cpu);
    int64_t s = im_append(t, IM_T_SCHED);
    if (s < 0) return row;
    im_set_i64(t, IM_T_SCHED, IM_SCHED_TS, s, ts);
    im_set_i64(t, IM_T_SCHED, IM_SCHED_DUR, s, dur);
    im_set_i64(t, IM_T_SCHED, IM_SCHED_CPU, s, cpu);
    im_set_i64(t, IM_T_SCHED, IM_SCHED_UTID, s, utid);
    im_set_i64(t, IM_T_SCHED, IM_SCHED_PRIORITY, s, 0);
    im_set_i64(t, IM_T_SCHED, IM_SCHED_UCPU, s, cpu);
  }
  return row;
}

int64_t im_ftrace_event(im_trace *t, int64_t ts, uint32_t name, int64_t cpu, int64_t utid,
                        int64_t arg_set_id, int64_t common_flags) {
  int64_t row = im_append(t, IM_T_FTRACE_EVENT);
  if (row < 0) return IM_NONE;
  im_tab *tab = im__tab(t, IM_T_FTRACE_EVENT);
  im__put_i64(tab, IM_FTRACE_EVENT_TS, row, ts);
  if (name != IM_NULL_STR) im__put_u32(tab, IM_FTRACE_EVENT_NAME, row, name);
  if (cpu >= 0) {
    im__put_u32(tab, IM_FTRACE_EVENT_CPU, row, (uint32_t)cpu);
    im__put_u32(tab, IM_FTRACE_EVENT_UCPU, row, (uint32_t)cpu);
    im_cpu_seen(t, cpu);
  }
  if (utid >= 0) im__put_u32(tab, IM_FTRACE_EVENT_UTID, row, (uint32_t)utid);
  if (arg_set_id != IM_NONE) im__put_u32(tab, IM_FTRACE_EVENT_ARG_SET_ID, row, (uint32_t)arg_set_id);
  if (common_flags != IM_NONE) im__put_u32(tab, IM_FTRACE_EVENT_COMMON_FLAGS, row, (uint32_t)common_flags);
  return row;
}

int64_t im_counter(im_trace *t, int64_t track, int64_t ts, double value, int64_t arg_set_id) {
  int64_t row = im_append(t, IM_T_COUNTER);
  if (row < 0) return IM_NONE;
  im_tab *tab = im__tab(t, IM_T_COUNTER);
  im__put_i64(tab, IM_COUNTER_TS, row, ts);
  im__put_u32(tab, IM_COUNTER_TRACK_ID, row, (uint32_t)track);
  ((double *)tab->data[IM_COUNTER_VALUE])[row] = value;
  rt_bit_set(tab->valid[IM_COUNTER_VALUE], (uint32_t)row);
  if (arg_set_id != IM_NONE) im__put_u32(tab, IM_COUNTER_ARG_SET_ID, row, (uint32_t)arg_set_id);
  return row;
}
