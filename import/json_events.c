/*
 * json_events.c — pass 2 of the Chrome JSON importer: the sorted records
 * through the builder, one phase rule of TRACES.md §2.5 each, with args
 * flattened as §2.6 says (indexes continue across a B and its E), then
 * the systemTraceEvents stream merged in by ts (JSON first on ties).
 */
#include <stdio.h>
#include <stdlib.h>

#include "json.h"
#include "load.h"
#include "trace.h"

/* A map of three-part keys (flow keys, async cookies) to values. */
typedef struct k3rec { uint64_t a, b, c; int64_t val, next; } k3rec;
typedef struct k3map { im_map heads; IM_VEC(k3rec) recs; } k3map;

static k3rec *k3_find(k3map *m, uint64_t a, uint64_t b, uint64_t c) {
  for (int64_t k = im_map_get(&m->heads, im_hash(im_hash(im_hash(1, a), b), c)); k != IM_NONE;
       k = m->recs.v[k].next)
    if (m->recs.v[k].a == a && m->recs.v[k].b == b && m->recs.v[k].c == c) return &m->recs.v[k];
  return NULL;
}

static k3rec *k3_add(im_trace *t, k3map *m, uint64_t a, uint64_t b, uint64_t c, int64_t val) {
  uint64_t h = im_hash(im_hash(im_hash(1, a), b), c);
  k3rec r = {a, b, c, val, im_map_get(&m->heads, h)};
  if (!IM_PUSH(t, m->recs, r) || !im_map_put(&m->heads, h, m->recs.n - 1)) return im_oom(t), NULL;
  return &m->recs.v[m->recs.n - 1];
}

static void k3_free(k3map *m) {
  im_map_free(&m->heads);
  free(m->recs.v);
}

typedef struct pass {
  jtrace *j;
  im_trace *t;
  k3map cookie_names;    /* (cookie, upid) → name of its first event */
  uint32_t s_no_name, s_args, s_utid, s_source, s_chrome, s_tiip, s_upid, s_scope;
  int64_t global_instants;
} pass;

/* ---- args (§2.6) --------------------------------------------------------------- */

static jscan args_scan(const jev *e) {
  jscan s = {.base = e->args, .p = e->args, .end = e->args + e->args_len};
  return s;
}

/* Flattens e's args (if any) into a. merge: a may hold the set's earlier
 * rows (an E merging into its B). */
static void add_args(pass *ps, im_args *a, const jev *e, int merge) {
  if (!a || !(e->flags & JF_ARGS)) return;
  jscan s = args_scan(e);
  jt_flatten(ps->j, a, &s, merge);
  rt_buf_free(&s.tmp);
}

/* A new slice's own args: the set pass 1 wrote, or (raw args) flattened
 * now and written. */
static void own_args(pass *ps, int64_t s, const jev *e) {
  if (s == IM_NONE) return;
  if (e->flags & JF_ARGSET) {
    im_set_i64(ps->t, IM_T_SLICE, IM_SLICE_ARG_SET_ID, s, e->argset);
    return;
  }
  add_args(ps, im_slice_args(ps->t, s), e, 0);
  im_slice_commit_args(ps->t, s);
}

/* The args object has at least one member. */
static int args_nonempty(pass *ps, const jev *e) {
  (void)ps;
  if (!(e->flags & JF_ARGS)) return 0;
  for (uint32_t i = 1; i < e->args_len; i++) {
    char c = e->args[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    return c != '}';
  }
  return 0;
}

/* Positions s at the value of top-level member `name` of e's args. */
static int args_member(pass *ps, const jev *e, const char *name, jscan *s) {
  (void)ps;
  if (!(e->flags & JF_ARGS)) return 0;
  *s = args_scan(e);
  s->p++;
  size_t want = strlen(name);
  int found = 0, members = 0;
  const char *key;
  size_t n;
  while (js_member(s, &members, &key, &n) > 0) {
    int match = n == want && !memcmp(key, name, n);
    /* later duplicates win: remember the position and go on */
    const char *at = s->p;
    if (!js_skip(s)) break;
    if (match) found = 1, s->base = at;
  }
  if (!found) {
    rt_buf_free(&s->tmp);
    return 0;
  }
  s->p = s->base;
  s->failed = 0;
  return 1;
}

static int arg_string(pass *ps, const jev *e, const char *name, uint32_t *out) {
  jscan s;
  if (!args_member(ps, e, name, &s)) return 0;
  const char *str;
  size_t n;
  int ok = js_kind(&s) == '"' && js_string(&s, &str, &n);
  if (ok) *out = n ? im_str(ps->t, str, n) : IM_NULL_STR;
  rt_buf_free(&s.tmp);
  return ok;
}

static int arg_number(pass *ps, const jev *e, const char *name, jnum *out) {
  jscan s;
  if (!args_member(ps, e, name, &s)) return 0;
  int ok = js_kind(&s) == 'n' && js_number(&s, out);
  rt_buf_free(&s.tmp);
  return ok;
}

/* ---- helpers ---------------------------------------------------------------------- */

static void parser_failure(pass *ps) { im_stat_add(ps->t, IM_STAT_JSON_PARSER_FAILURE, 1); }

static uint32_t or_no_name(pass *ps, uint32_t name) { return name == IM_NULL_STR ? ps->s_no_name : name; }

/* A flow id: an int, or a string read as hexadecimal (optional 0x). */
static int flow_id(im_trace *t, uint8_t kind, int64_t v, uint64_t *out) {
  if (kind == JID_INT) {
    *out = (uint64_t)v;
    return 1;
  }
  if (kind != JID_STR) return 0;
  size_t n;
  const char *s = rt_str_get(im_pool(t), (uint32_t)v, &n);
  if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s += 2, n -= 2;
  if (!n || n > 16) return 0;
  uint64_t x = 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return 0;
    x = x << 4 | (uint64_t)d;
  }
  *out = x;
  return 1;
}

/* §2.5.1.2: the v2 flow of a B, X, b or n on the track it used. */
static void v2_flow(pass *ps, const jev *e, int64_t track) {
  uint64_t id;
  if (!e->bind_kind || !flow_id(ps->t, e->bind_kind, e->bind_id, &id)) return;
  int in = (e->flags & JF_FLOW_IN) != 0, out = (e->flags & JF_FLOW_OUT) != 0;
  if (!in && !out) {
    im_stat_add(ps->t, IM_STAT_FLOW_WITHOUT_DIRECTION, 1);
    return;
  }
  int64_t s = im_slice_top(ps->t, track);
  if (s == IM_NONE) {
    im_stat_add(ps->t, IM_STAT_FLOW_NO_ENCLOSING_SLICE, 1);
    return;
  }
  if (in && out) im_flow_step(ps->t, s, 2, id, (int64_t)id, IM_NONE);
  else if (out) im_flow_begin(ps->t, s, 2, id);
  else im_flow_end(ps->t, s, 2, id, (int64_t)id, IM_NONE, 0);
}

/* §2.5.1.1: s, t, f. */
static void v1_flow(pass *ps, const jev *e, int64_t track) {
  uint64_t id;
  if (!flow_id(ps->t, e->id_kind, e->id, &id)) {
    im_stat_add(ps->t, IM_STAT_FLOW_INVALID_ID, 1);
    return;
  }
  im_flow_v1(ps->t, track, e->ph, id, e->cat, e->name, (e->flags & JF_BP_E) != 0);
}

static void set_thread_ts(pass *ps, int64_t s, const jev *e, int with_tdur) {
  if (s == IM_NONE) return;
  if (e->flags & JF_TTS) im_set_i64(ps->t, IM_T_SLICE, IM_SLICE_THREAD_TS, s, e->tts);
  if (with_tdur && (e->flags & JF_TDUR)) im_set_i64(ps->t, IM_T_SLICE, IM_SLICE_THREAD_DUR, s, e->tdur);
}

/* ---- phases ------------------------------------------------------------------------- */

static void complete(pass *ps, const jev *e, int64_t utid) {
  im_trace *t = ps->t;
  if (!(e->flags & JF_DUR)) {
    parser_failure(ps);
    return;
  }
  int64_t track = im_thread_track(t, utid);
  int over = 0;
  uint32_t name = or_no_name(ps, e->name);
  int64_t s = im_slice_complete(t, track, e->ts, e->dur, e->cat, name, &over);
  if (over) {
    /* §2.5 X: spilled to an overlap track of the thread. */
    im_stat_add(t, IM_STAT_SLICE_SPILL_OVERLAPPING_COMPLETE_EVENT, 1);
    im_track_spec set;
    im_track_spec_init(&set, "thread_overlapping_slice", IM_EV_SLICE);
    im_track_dim_int(&set, "utid", utid);
    track = im_overlap_track(t, &set, e->ts, e->ts + e->dur, IM_NULL_STR);
    s = im_slice_complete(t, track, e->ts, e->dur, e->cat, name, NULL);
  }
  if (s != IM_NONE) {
    set_thread_ts(ps, s, e, 1);
    own_args(ps, s, e);
  }
  v2_flow(ps, e, track);
}

static void instant(pass *ps, const jev *e, int64_t utid) {
  im_trace *t = ps->t;
  int64_t track;
  uint32_t name = e->name;
  im_args *src = NULL;
  if (e->scope == 'g' || e->scope == 'p') {
    src = im_args_new(t);
    im_args_string(src, ps->s_source, ps->s_chrome);
  }
  if (e->scope == 'g') {
    im_track_spec sp;
    im_track_spec_init(&sp, "legacy_chrome_global_instants", IM_EV_SLICE);
    sp.source = src;
    track = im_track(t, &sp);
  } else if (e->scope == 'p') {
    if (!(e->flags & JF_PID)) {
      im_args_free(src);
      parser_failure(ps);
      return;
    }
    im_track_spec sp;
    im_track_spec_init(&sp, "chrome_process_instant", IM_EV_SLICE);
    im_track_dim_int(&sp, "upid", im_process(t, e->pid));
    sp.source = src;
    track = im_track(t, &sp);
  } else {
    if (!(e->flags & JF_TID)) {
      parser_failure(ps);
      return;
    }
    track = im_thread_track(t, utid);
    name = or_no_name(ps, name);
  }
  im_args_free(src);
  int64_t s = im_slice_instant(t, track, e->ts, e->cat, name);
  if (s == IM_NONE) return;
  if (e->scope != 'g' && e->scope != 'p') set_thread_ts(ps, s, e, 0);
  own_args(ps, s, e);
}

static void counter(pass *ps, const jev *e, int64_t utid) {
  im_trace *t = ps->t;
  if (!args_nonempty(ps, e)) {
    parser_failure(ps);
    return;
  }
  rt_buf prefix = {0};
  if (e->name != IM_NULL_STR) {
    size_t n;
    const char *s = rt_str_get(im_pool(t), e->name, &n);
    rt_buf_append(&prefix, s, n);
  }
  if (e->id_kind == JID_STR) {
    size_t n;
    const char *s = rt_str_get(im_pool(t), (uint32_t)e->id, &n);
    rt_buf_append(&prefix, " id: ", 5);
    rt_buf_append(&prefix, s, n);
  }
  rt_buf_append(&prefix, " ", 1);
  size_t plen = prefix.len;
  int64_t upid = im_thread_upid(t, utid);
  im_args *a = im_args_new(t);
  im_args_uint(a, ps->s_utid, (uint64_t)utid);
  int64_t set = im_args_commit(t, a);
  im_args_free(a);
  jscan s = args_scan(e);
  s.p++;
  const char *key;
  size_t klen;
  int members = 0;
  while (js_member(&s, &members, &key, &klen) > 0) {
    prefix.len = plen;
    rt_buf_append(&prefix, key, klen);
    jnum v;
    int ok = 0;
    if (js_kind(&s) == 'n') {
      ok = js_number(&s, &v);
    } else if (js_kind(&s) == '"') {
      const char *str;
      size_t n;
      ok = js_string(&s, &str, &n) && js_number_text(str, n, &v);
    } else {
      js_skip(&s);
    }
    if (s.failed) break;
    if (!ok) {
      parser_failure(ps);
      continue;
    }
    uint32_t cname = im_str(t, prefix.data, prefix.len);
    im_track_spec sp;
    im_track_spec_init(&sp, upid != IM_NONE ? "json_counter" : "json_counter_thread_fallback",
                       IM_EV_COUNTER);
    if (upid != IM_NONE) im_track_dim_int(&sp, "upid", upid);
    else im_track_dim_int(&sp, "utid", utid);
    im_track_dim_str(&sp, "name", cname);
    sp.name = cname;
    im_counter(t, im_track_deferred(t, &sp), e->ts, v.is_int ? (double)v.i : v.d, set);
  }
  rt_buf_free(&s.tmp);
  rt_buf_free(&prefix);
}

/* §2.2.5 and §2.5 b/e/n. */
static void async_event(pass *ps, const jev *e, int64_t utid) {
  im_trace *t = ps->t;
  (void)utid;
  int process = 0;
  uint64_t kind, val;
  if (e->id_kind) kind = e->id_kind, val = (uint64_t)e->id;
  else if (e->id2_kind & JID2_GLOBAL) kind = 4 | (e->id2_kind & 3u), val = (uint64_t)e->id2;
  else if (e->id2_kind & JID2_LOCAL) kind = 8 | (e->id2_kind & 3u), val = (uint64_t)e->id2, process = 1;
  else kind = 0, val = 0;
  if (!(e->flags & JF_PID) || !kind) {
    parser_failure(ps);
    return;
  }
  int64_t upid = im_process(t, e->pid);
  im_cookie c = {((uint64_t)e->cat << 8) | kind, val};
  uint64_t scope = process ? (uint64_t)upid : UINT64_MAX;
  k3rec *first = k3_find(&ps->cookie_names, c.a, c.b, scope);
  if (!first) first = k3_add(t, &ps->cookie_names, c.a, c.b, scope, e->name);
  if (!first) return;
  uint32_t set_name = (uint32_t)first->val;
  im_track_spec set;
  im_track_spec_init(&set, process ? "legacy_async_process_slice" : "legacy_async_global_slice",
                     IM_EV_SLICE);
  if (process) im_track_dim_int(&set, "upid", upid);
  im_track_dim_str(&set, "scope", IM_NULL_STR);
  im_track_dim_str(&set, "name", set_name);
  im_args *src = im_args_new(t);
  im_args_string(src, ps->s_source, ps->s_chrome);
  im_args_bool(src, ps->s_tiip, process);
  im_args_uint(src, ps->s_upid, (uint64_t)upid);
  im_args_string(src, ps->s_scope, IM_NULL_STR);
  set.source = src;
  int64_t s;
  if (e->ph == 'b') {
    int64_t track = im_async_track(t, &set, c, +1, e->name);
    s = im_slice_begin(t, track, e->ts, e->cat, or_no_name(ps, e->name));
    add_args(ps, im_slice_args(t, s), e, 0);
    v2_flow(ps, e, track);
  } else if (e->ph == 'e') {
    int64_t track = im_async_track(t, &set, c, -1, e->name);
    s = im_slice_end(t, track, e->ts, e->cat, e->name);
    if (s != IM_NONE) {
      add_args(ps, im_slice_args(t, s), e, 1);
      im_slice_commit_args(t, s);
    }
  } else {
    int64_t track = im_async_track(t, &set, c, +1, e->name);
    im_async_track(t, &set, c, -1, e->name);
    s = im_slice_instant(t, track, e->ts, e->cat, e->name);
    own_args(ps, s, e);
    v2_flow(ps, e, track);
  }
  im_args_free(src);
}

static void metadata_event(pass *ps, const jev *e, int64_t utid) {
  im_trace *t = ps->t;
  if (!args_nonempty(ps, e) || e->name == IM_NULL_STR) return;
  size_t n;
  const char *what = rt_str_get(im_pool(t), e->name, &n);
  int pname = !strcmp(what, "process_name"), tname = !strcmp(what, "thread_name");
  int psort = !strcmp(what, "process_sort_index"), tsort = !strcmp(what, "thread_sort_index");
  if (pname || tname) {
    uint32_t v = IM_NULL_STR;
    if (!arg_string(ps, e, "name", &v) || v == IM_NULL_STR) {
      parser_failure(ps);
      return;
    }
    if (pname) im_process_name(t, im_thread_upid(t, utid), v, IM_PNAME_SYSTEM);
    else im_thread_name(t, utid, v, IM_TNAME_OTHER);
  } else if (psort || tsort) {
    jnum v;
    if (!arg_number(ps, e, "sort_index", &v)) return;
    int64_t x = jn_int(&v);
    if (psort)
      im_args_int(im_process_args(t, im_thread_upid(t, utid)), im_cstr(t, "process_sort_index_hint"), x);
    else im_args_int(im_thread_args(t, utid), im_cstr(t, "thread_sort_index_hint"), x);
  }
}

static void thread_state_event(pass *ps, const jev *e, int64_t utid) {
  im_trace *t = ps->t;
  if (!(e->flags & JF_DUR)) {
    parser_failure(ps);
    return;
  }
  jnum v;
  int io_wait = -1;
  int64_t cpu = -1;
  if (arg_number(ps, e, "io_wait", &v) && v.is_int) io_wait = v.i != 0;
  uint32_t blocked = IM_NULL_STR;
  arg_string(ps, e, "blocked_function", &blocked);
  if (arg_number(ps, e, "cpu", &v) && v.is_int && v.i >= 0) cpu = v.i;
  im_thread_state_row(t, e->ts, e->dur, utid, or_no_name(ps, e->name), cpu, io_wait, blocked);
}

static void one_event(pass *ps, const jev *e) {
  im_trace *t = ps->t;
  jtrace *j = ps->j;
  /* §2.4: string pids/tids named after their string; the thread of
   * every event, whatever its phase. */
  if (e->flags & JF_PID_STR)
    im_process_name(t, im_process(t, e->pid), j->strids[e->pid - ((int64_t)1 << 32)], IM_PNAME_SYSTEM);
  /* A (pid, tid) always gives the same thread in a JSON trace (nothing
   * ends threads here): it is looked up once. */
  jthread *th = &j->threads[e->thread];
  if (th->utid == IM_NONE) th->utid = im_thread_update(t, e->tid, e->pid);
  int64_t utid = th->utid;
  if (e->flags & JF_TID_STR)
    im_thread_name(t, utid, j->strids[e->tid - ((int64_t)1 << 32)], IM_TNAME_OTHER);
  switch (e->ph) {
  case 'B': {
    int64_t track = im_thread_track(t, utid);
    int64_t s = im_slice_begin(t, track, e->ts, e->cat, or_no_name(ps, e->name));
    if (s != IM_NONE) {
      set_thread_ts(ps, s, e, 0);
      add_args(ps, im_slice_args(t, s), e, 0);
    }
    v2_flow(ps, e, track);
    break;
  }
  case 'E': {
    int64_t s = im_slice_end(t, im_thread_track(t, utid), e->ts, e->cat, e->name);
    if (s == IM_NONE) break;
    add_args(ps, im_slice_args(t, s), e, 1);
    im_slice_commit_args(t, s);
    if ((e->flags & JF_TTS) && !im_is_null(t, IM_T_SLICE, IM_SLICE_THREAD_TS, s))
      im_set_i64(t, IM_T_SLICE, IM_SLICE_THREAD_DUR, s,
                 e->tts - im_get_i64(t, IM_T_SLICE, IM_SLICE_THREAD_TS, s));
    break;
  }
  case 'X': complete(ps, e, utid); break;
  case 'i': case 'I': case 'R': instant(ps, e, utid); break;
  case 'C': counter(ps, e, utid); break;
  case 'b': case 'e': case 'n': async_event(ps, e, utid); break;
  case 's': case 't': case 'f': v1_flow(ps, e, im_thread_track(t, utid)); break;
  case 'M': metadata_event(ps, e, utid); break;
  case 'T': thread_state_event(ps, e, utid); break;
  default: break;   /* S, F, O, N, D, P, …: the thread exists, nothing else */
  }
}

/* ---- systemTraceEvents --------------------------------------------------------------- */

/* Fuchsia thread states (zx_thread_state) as kernel-4.4 prev_state
 * masks: new/running → R, suspended → T, blocked → S, dying → Z,
 * dead → X (docs/DECISIONS.md). */
static int64_t fuchsia_state(int64_t st) {
  switch (st) {
  case 2: return 0x04;
  case 3: return 0x01;
  case 4: return 0x20;
  case 5: return 0x10;
  default: return 0;
  }
}

static void one_sys(pass *ps, const jsys *y) {
  im_trace *t = ps->t;
  if (y->kind == 'l') {
    jt_systrace_line(t, y->text, y->len);
  } else if (y->kind == 'k') {
    int64_t prev = im_thread_update(t, y->out_tid, y->out_pid);
    int64_t next = im_thread_update(t, y->in_tid, y->in_pid);
    im_sched_switch_utid(t, y->cpu, y->ts, prev, fuchsia_state(y->out_state), next, y->in_prio);
  }
}

/* Fuchsia name records, after every event so they do not decide the
 * numbering; names the trace's own metadata gave win. */
static void sys_names(pass *ps) {
  im_trace *t = ps->t;
  for (int64_t i = 0; i < ps->j->nnames; i++) {
    const jname *y = &ps->j->names[i];
    if (y->kind == 'p') {
      im_process_name(t, im_process(t, y->pid), y->name, IM_PNAME_DESCRIPTOR);
    } else {
      int64_t u = im_thread_update(t, y->tid, y->pid);
      if (im_is_null(t, IM_T_THREAD, IM_THREAD_NAME, u)) im_thread_name(t, u, y->name, IM_TNAME_OTHER);
    }
  }
}

/* The keys behind the cursor are given back every 4096 (64 KiB). */
static void keys_behind(jstore *st, int64_t done, int64_t *released) {
  if (done - *released < 4096) return;
  jt_release(st->keys + *released, st->keys + done);
  *released = done;
}

void jt_events(jtrace *j) {
  im_trace *t = j->t;
  pass ps = {.j = j, .t = t};
  ps.s_no_name = im_cstr(t, "[No name]");
  ps.s_utid = im_cstr(t, "utid");
  ps.s_source = im_cstr(t, "source");
  ps.s_chrome = im_cstr(t, "chrome");
  ps.s_tiip = im_cstr(t, "trace_id_is_process_scoped");
  ps.s_upid = im_cstr(t, "upid");
  ps.s_scope = im_cstr(t, "source_scope");
  /* The events and the systrace / Fuchsia stream, both in their order,
   * merged by ts (JSON first on ties). */
  jstore *ev = &j->ev, *sy = &j->sys;
  int64_t a = 0, b = 0, ra = 0, rb = 0, na = ev->nkeys, nb = sy->nkeys;
  int64_t total = na + nb;
  const im_progress *pr = j->progress && j->progress->cb ? j->progress : NULL;
  while ((a < na || b < nb) && !im_failed(t)) {
    if (pr && ((a + b) & 0xffff) == 0) pr->cb(pr->ctx, "events", a + b, total);
    if (b >= nb || (a < na && ev->keys[a].ts <= sy->keys[b].ts)) {
      jev e;
      uint64_t ref = ev->keys[a].ref;
      jt_decode(js_store_rec(ev, ref), &e);
      e.ts = (int64_t)ev->keys[a++].ts;
      const jthread *th = &j->threads[e.thread];
      e.pid = th->pid;
      e.tid = th->tid;
      e.flags |= th->flags;
      one_event(&ps, &e);
      js_store_done(ev, ref);
      keys_behind(ev, a, &ra);
    } else {
      jsys y;
      uint64_t ref = sy->keys[b].ref;
      jt_sys_decode(js_store_rec(sy, ref), &y);
      y.ts = (int64_t)sy->keys[b++].ts;
      one_sys(&ps, &y);
      js_store_done(sy, ref);
      keys_behind(sy, b, &rb);
    }
  }
  if (pr) pr->cb(pr->ctx, "events", total, total);
  sys_names(&ps);
  k3_free(&ps.cookie_names);
}
