/*
 * threads.c — process and thread identity (TRACES.md §1.16), shared by
 * every importer.
 *
 * A pid maps to its live process; a tid to a chain of threads with that
 * tid, most recent first (thread_prev links the older ones), so JSON
 * (pid, tid) pairs, ftrace tids and descriptor reuse all resolve the same
 * way. Names carry the priority of their source: a lower-priority name
 * never replaces a higher one. Extra process/thread args (sort hints,
 * labels) are collected per row and written at end of trace.
 */
#include <stdlib.h>

#include "trace.h"

static int grow_thread_vecs(im_trace *t, int64_t utid) {
  while (t->thread_prev.n <= utid) {
    if (!IM_PUSH(t, t->thread_prev, IM_NONE) || !IM_PUSH(t, t->thread_name_prio, 0) ||
        !IM_PUSH(t, t->thread_args, NULL) || !IM_PUSH(t, t->thread_last_state, IM_NONE))
      return 0;
  }
  return 1;
}

static int64_t new_thread_row(im_trace *t, int64_t tid) {
  int64_t utid = im_append(t, IM_T_THREAD);
  if (utid < 0 || !grow_thread_vecs(t, utid)) return IM_NONE;
  im_set_i64(t, IM_T_THREAD, IM_THREAD_TID, utid, tid);
  im_set_i64(t, IM_T_THREAD, IM_THREAD_IS_IDLE, utid, 0);
  im_set_i64(t, IM_T_THREAD, IM_THREAD_MACHINE_ID, utid, 0);
  return utid;
}

static int64_t new_process_row(im_trace *t, int64_t pid) {
  int64_t upid = im_append(t, IM_T_PROCESS);
  if (upid < 0) return IM_NONE;
  while (t->process_name_prio.n <= upid)
    if (!IM_PUSH(t, t->process_name_prio, 0) || !IM_PUSH(t, t->process_args, NULL))
      return IM_NONE;
  im_set_i64(t, IM_T_PROCESS, IM_PROCESS_PID, upid, pid);
  im_set_i64(t, IM_T_PROCESS, IM_PROCESS_MACHINE_ID, upid, 0);
  return upid;
}

/* The reserved rows of §1.16.1. */

void im__threads_init(im_trace *t) {
  int64_t upid = new_process_row(t, 0);
  int64_t utid = new_thread_row(t, 0);
  if (upid < 0 || utid < 0) return;
  im_set_i64(t, IM_T_THREAD, IM_THREAD_UPID, utid, upid);
  im_set_i64(t, IM_T_THREAD, IM_THREAD_IS_MAIN_THREAD, utid, 1);
  im_set_i64(t, IM_T_THREAD, IM_THREAD_IS_IDLE, utid, 1);
  if (!t->opt.zero_is_swapper) return;
  if (!im_map_put(&t->process_by_pid, 0, upid) || !im_map_put(&t->thread_by_tid, 0, utid)) {
    im_oom(t);
    return;
  }
  im_thread_name(t, utid, im_cstr(t, "swapper"), IM_TNAME_BUILTIN);
}

int64_t im_thread_upid(const im_trace *t, int64_t utid) {
  return im_get_i64(t, IM_T_THREAD, IM_THREAD_UPID, utid);
}
int64_t im_thread_tid(const im_trace *t, int64_t utid) {
  return im_get_i64(t, IM_T_THREAD, IM_THREAD_TID, utid);
}
int64_t im_process_pid(const im_trace *t, int64_t upid) {
  return im_get_i64(t, IM_T_PROCESS, IM_PROCESS_PID, upid);
}

int64_t im_process_new(im_trace *t, int64_t pid) {
  int64_t upid = new_process_row(t, pid);
  if (upid < 0) return IM_NONE;
  if (!im_map_put(&t->process_by_pid, (uint64_t)pid, upid)) return im_oom(t), IM_NONE;
  im_thread_update(t, pid, pid);
  return upid;
}

int64_t im_process(im_trace *t, int64_t pid) {
  if (t->failed) return IM_NONE;
  int64_t upid = im_map_get(&t->process_by_pid, (uint64_t)pid);
  return upid != IM_NONE ? upid : im_process_new(t, pid);
}

int64_t im_thread_new(im_trace *t, int64_t tid, int64_t upid) {
  int64_t utid = new_thread_row(t, tid);
  if (utid < 0) return IM_NONE;
  t->thread_prev.v[utid] = im_map_get(&t->thread_by_tid, (uint64_t)tid);
  if (!im_map_put(&t->thread_by_tid, (uint64_t)tid, utid)) return im_oom(t), IM_NONE;
  if (upid != IM_NONE) im_thread_attach(t, utid, upid);
  return utid;
}

void im_thread_attach(im_trace *t, int64_t utid, int64_t upid) {
  if (utid < 0 || upid < 0 || t->failed) return;
  int64_t cur = im_thread_upid(t, utid);
  if (cur != IM_NONE) {
    if (cur != upid) im_stat_add(t, IM_STAT_PROCESS_TRACKER_ERRORS, 1);
    return;
  }
  im_set_i64(t, IM_T_THREAD, IM_THREAD_UPID, utid, upid);
  im_set_i64(t, IM_T_THREAD, IM_THREAD_IS_MAIN_THREAD, utid,
             im_thread_tid(t, utid) == im_process_pid(t, upid));
}

int64_t im_thread_update(im_trace *t, int64_t tid, int64_t pid) {
  int64_t upid = im_process(t, pid);
  if (upid < 0) return IM_NONE;
  for (int64_t u = im_map_get(&t->thread_by_tid, (uint64_t)tid); u != IM_NONE;
       u = t->thread_prev.v[u]) {
    int64_t p = im_thread_upid(t, u);
    if (p == IM_NONE) {
      im_thread_attach(t, u, upid);
      return u;
    }
    if (im_process_pid(t, p) == pid) return u;
  }
  return im_thread_new(t, tid, upid);
}

int64_t im_thread(im_trace *t, int64_t tid) {
  if (t->failed) return IM_NONE;
  int64_t utid = im_map_get(&t->thread_by_tid, (uint64_t)tid);
  return utid != IM_NONE ? utid : im_thread_new(t, tid, IM_NONE);
}

void im_thread_name(im_trace *t, int64_t utid, uint32_t name, int prio) {
  if (utid < 0 || utid >= t->thread_name_prio.n || name == IM_NULL_STR) return;
  if (!im_is_null(t, IM_T_THREAD, IM_THREAD_NAME, utid) && prio < t->thread_name_prio.v[utid])
    return;
  im_set_str(t, IM_T_THREAD, IM_THREAD_NAME, utid, name);
  t->thread_name_prio.v[utid] = (uint8_t)prio;
}

void im_process_name(im_trace *t, int64_t upid, uint32_t name, int prio) {
  if (upid < 0 || upid >= t->process_name_prio.n || name == IM_NULL_STR) return;
  if (!im_is_null(t, IM_T_PROCESS, IM_PROCESS_NAME, upid) && prio < t->process_name_prio.v[upid])
    return;
  im_set_str(t, IM_T_PROCESS, IM_PROCESS_NAME, upid, name);
  t->process_name_prio.v[upid] = (uint8_t)prio;
}

im_args *im_process_args(im_trace *t, int64_t upid) {
  if (upid < 0 || upid >= t->process_args.n) return NULL;
  if (!t->process_args.v[upid]) t->process_args.v[upid] = im_args_new(t);
  return t->process_args.v[upid];
}

im_args *im_thread_args(im_trace *t, int64_t utid) {
  if (utid < 0 || utid >= t->thread_args.n) return NULL;
  if (!t->thread_args.v[utid]) t->thread_args.v[utid] = im_args_new(t);
  return t->thread_args.v[utid];
}

int64_t im_thread_find(const im_trace *t, int64_t tid) {
  return im_map_get(&t->thread_by_tid, (uint64_t)tid);
}

/* Takes utid out of its tid's chain (the map keeps IM_NONE for an empty
 * chain, which reads as "no thread"). */
static void unlink_thread(im_trace *t, int64_t utid) {
  int64_t tid = im_thread_tid(t, utid);
  int64_t u = im_map_get(&t->thread_by_tid, (uint64_t)tid);
  if (u == utid) {
    if (!im_map_put(&t->thread_by_tid, (uint64_t)tid, t->thread_prev.v[utid])) im_oom(t);
    return;
  }
  for (; u != IM_NONE; u = t->thread_prev.v[u])
    if (t->thread_prev.v[u] == utid) {
      t->thread_prev.v[u] = t->thread_prev.v[utid];
      return;
    }
}

/* trace_processor's EndThread: the thread stops being found by its tid
 * (a reused tid makes a new thread), and a main thread ends its process,
 * whose pid then makes a new process. */
void im_thread_end(im_trace *t, int64_t utid, int64_t ts) {
  if (utid < 0 || utid >= t->thread_prev.n || t->failed) return;
  im_set_i64(t, IM_T_THREAD, IM_THREAD_END_TS, utid, ts);
  unlink_thread(t, utid);
  int64_t upid = im_thread_upid(t, utid);
  if (upid == IM_NONE || im_get_i64(t, IM_T_THREAD, IM_THREAD_IS_MAIN_THREAD, utid) != 1) return;
  im_set_i64(t, IM_T_PROCESS, IM_PROCESS_END_TS, upid, ts);
  int64_t pid = im_process_pid(t, upid);
  if (im_map_get(&t->process_by_pid, (uint64_t)pid) == upid &&
      !im_map_put(&t->process_by_pid, (uint64_t)pid, IM_NONE))
    im_oom(t);
}

/* §1.16.6: process then thread args, in row order. */
void im__threads_flush(im_trace *t) {
  for (int64_t p = 0; p < t->process_args.n; p++)
    if (t->process_args.v[p] && im_args_count(t->process_args.v[p]))
      im_set_i64(t, IM_T_PROCESS, IM_PROCESS_ARG_SET_ID, p,
                 im_args_commit(t, t->process_args.v[p]));
  for (int64_t u = 0; u < t->thread_args.n; u++)
    if (t->thread_args.v[u] && im_args_count(t->thread_args.v[u]))
      im_set_i64(t, IM_T_THREAD, IM_THREAD_ARG_SET_ID, u, im_args_commit(t, t->thread_args.v[u]));
}

void im__threads_free(im_trace *t) {
  im_map_free(&t->process_by_pid);
  im_map_free(&t->thread_by_tid);
  free(t->thread_prev.v);
  free(t->thread_name_prio.v);
  free(t->process_name_prio.v);
  free(t->thread_args.v);
  free(t->process_args.v);
  free(t->thread_last_state.v);
}
