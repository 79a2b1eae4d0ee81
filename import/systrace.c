/*
 * systrace.c — ftrace text lines (JSON systemTraceEvents, TRACES.md §2.7)
 * and atrace markers (§3.9.6, shared with the protobuf `print` event).
 *
 * A line is matched by hand against trace_processor's pattern
 *   -(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*([a-zA-Z.]{3}[0-9a-f.]{1,2}\s*)?(\d+\.\d+):\s+(\S+):
 * tried at each '-' from the left (so task names may hold dashes); the
 * task is the trimmed text before the match.
 */
#include <stdio.h>
#include <stdlib.h>

#include "json.h"
#include "trace.h"

typedef struct sline {
  const char *task; size_t task_len;
  int64_t pid, tgid;      /* tgid -1: none */
  int64_t cpu, ts;
  const char *event; size_t event_len;
  const char *args; size_t args_len;
} sline;

static int is_sp(char c) { return c == ' ' || c == '\t'; }
static int is_dig(char c) { return c >= '0' && c <= '9'; }

static const char *digits(const char *p, const char *e, int64_t *v) {
  const char *s = p;
  int64_t x = 0;
  while (p < e && is_dig(*p)) {
    if (x < INT64_MAX / 10) x = x * 10 + (*p - '0');
    p++;
  }
  *v = x;
  return p > s ? p : NULL;
}

/* From the flags group on: ts, ':' , spaces, event ':'. */
static int match_tail(const char *p, const char *e, sline *out) {
  const char *s = p;
  while (p < e && is_dig(*p)) p++;
  if (p == s || p >= e || *p != '.') return 0;
  p++;
  const char *f = p;
  while (p < e && is_dig(*p)) p++;
  if (p == f || p >= e || *p != ':') return 0;
  char num[64];
  size_t n = (size_t)(p - s) < sizeof num - 1 ? (size_t)(p - s) : sizeof num - 1;
  memcpy(num, s, n);
  num[n] = 0;
  /* A timestamp past int64 nanoseconds (about 292 years) is not a
   * line we can place: it counts as a parse failure, as other junk. */
  double ns = strtod(num, NULL) * 1e9;
  if (!(ns < 9.2e18)) return 0;
  out->ts = (int64_t)ns;
  p++;
  if (p >= e || !is_sp(*p)) return 0;
  while (p < e && is_sp(*p)) p++;
  const char *ev = p;
  while (p < e && !is_sp(*p)) p++;
  const char *colon = NULL;
  for (const char *q = ev; q < p; q++)
    if (*q == ':') colon = q;
  if (!colon || colon == ev) return 0;
  out->event = ev;
  out->event_len = (size_t)(colon - ev);
  const char *a = colon + 1;
  while (a < e && is_sp(*a)) a++;
  out->args = a;
  out->args_len = (size_t)(e - a);
  return 1;
}

static int match_at(const char *line, const char *p, const char *e, sline *out) {
  p++;   /* '-' */
  if (!(p = digits(p, e, &out->pid))) return 0;
  if (p >= e || !is_sp(*p)) return 0;
  while (p < e && is_sp(*p)) p++;
  if (p < e && *p == '(') p++;
  while (p < e && is_sp(*p)) p++;
  out->tgid = -1;
  if (p < e && is_dig(*p)) p = digits(p, e, &out->tgid);
  else while (p < e && *p == '-') p++;
  if (p < e && *p == ')') p++;
  if (p < e && is_sp(*p)) p++;
  if (p >= e || *p != '[') return 0;
  if (!(p = digits(p + 1, e, &out->cpu)) || p >= e || *p != ']') return 0;
  p++;
  while (p < e && is_sp(*p)) p++;
  /* optional flags: three of [a-zA-Z.] then one or two of [0-9a-f.] */
  const char *q = p;
  int k = 0;
  while (k < 3 && q < e && (*q == '.' || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z'))) q++, k++;
  if (k == 3) {
    for (int m = 2; m >= 1; m--) {
      int ok = 1;
      for (int i = 0; i < m; i++) {
        char c = q + i < e ? q[i] : 0;
        if (!(is_dig(c) || (c >= 'a' && c <= 'f') || c == '.')) ok = 0;
      }
      if (!ok) continue;
      const char *r = q + m;
      while (r < e && is_sp(*r)) r++;
      if (match_tail(r, e, out)) goto task;
    }
  }
  if (!match_tail(p, e, out)) return 0;
task:
  (void)line;
  return 1;
}

static int match(const char *line, size_t n, sline *out) {
  const char *e = line + n;
  for (const char *p = line; p < e; p++) {
    if (*p != '-') continue;
    if (match_at(line, p, e, out)) {
      const char *ts = line, *te = p;
      while (ts < te && is_sp(*ts)) ts++;
      while (te > ts && is_sp(te[-1])) te--;
      out->task = ts;
      out->task_len = (size_t)(te - ts);
      return 1;
    }
  }
  return 0;
}

int64_t jt_systrace_ts(const char *line, size_t n, int *ok);
int64_t jt_systrace_ts(const char *line, size_t n, int *ok) {
  sline l;
  *ok = match(line, n, &l);
  return *ok ? l.ts : 0;
}

/* key=value of the args (a token without '=' is `name`). */
static int arg_of(const sline *l, const char *key, const char **v, size_t *vn) {
  size_t kn = strlen(key);
  const char *p = l->args, *e = l->args + l->args_len;
  int found = 0;
  while (p < e) {
    while (p < e && is_sp(*p)) p++;
    const char *tok = p;
    while (p < e && !is_sp(*p)) p++;
    const char *eq = memchr(tok, '=', (size_t)(p - tok));
    const char *k = tok, *val = eq ? eq + 1 : tok;
    size_t klen = eq ? (size_t)(eq - tok) : 4;
    if (!eq) k = "name";
    if (klen == kn && !memcmp(k, key, kn)) *v = val, *vn = (size_t)(p - val), found = 1;
  }
  return found;
}

static int arg_int(const sline *l, const char *key, int64_t *out) {
  const char *v;
  size_t n;
  if (!arg_of(l, key, &v, &n) || !n) return 0;
  char buf[32];
  if (n >= sizeof buf) return 0;
  memcpy(buf, v, n);
  buf[n] = 0;
  char *end;
  long long x = strtoll(buf, &end, 10);
  if (*end) return 0;
  *out = x;
  return 1;
}

static uint32_t arg_str(im_trace *t, const sline *l, const char *key) {
  const char *v;
  size_t n;
  return arg_of(l, key, &v, &n) ? im_str(t, v, n) : IM_NULL_STR;
}

#define EV(lit) (l.event_len == sizeof lit - 1 && !memcmp(l.event, lit, sizeof lit - 1))

int jt_systrace_line(im_trace *t, const char *line, size_t n) {
  sline l;
  if (!match(line, n, &l)) {
    im_stat_add(t, IM_STAT_SYSTRACE_PARSE_FAILURE, 1);
    return 0;
  }
  int64_t utid = im_thread(t, l.pid);
  if (!(l.task_len == 5 && !memcmp(l.task, "<...>", 5)))
    im_thread_name(t, utid, im_str(t, l.task, l.task_len), IM_TNAME_FTRACE);
  if (l.tgid >= 0) utid = im_thread_update(t, l.pid, l.tgid);
  im_cpu_seen(t, l.cpu);
  if (EV("sched_switch")) {
    int64_t pp, pprio, np, nprio;
    const char *st;
    size_t stn;
    if (!arg_int(&l, "prev_pid", &pp) || !arg_int(&l, "next_pid", &np) ||
        !arg_of(&l, "prev_state", &st, &stn))
      return 1;   /* malformed known events are skipped */
    if (!arg_int(&l, "prev_prio", &pprio)) pprio = 0;
    if (!arg_int(&l, "next_prio", &nprio)) nprio = 0;
    int64_t mask = im_task_state_parse(st, stn);
    im_sched_switch(t, (uint32_t)l.cpu, l.ts, pp, arg_str(t, &l, "prev_comm"), pprio,
                    mask < 0 ? INT64_MAX : mask, np, arg_str(t, &l, "next_comm"), nprio);
  } else if (EV("sched_waking") || EV("sched_wakeup")) {
    int64_t pid;
    if (!EV("sched_waking") || !arg_int(&l, "pid", &pid)) return 1;
    int64_t wakee = im_thread(t, pid);
    im_thread_name(t, wakee, arg_str(t, &l, "comm"), IM_TNAME_FTRACE);
    im_sched_waking(t, l.ts, wakee, utid, -1);
  } else if (EV("cpu_frequency") || EV("cpu_idle")) {
    int64_t cpu, state;
    if (!arg_int(&l, "cpu_id", &cpu) || !arg_int(&l, "state", &state)) return 1;
    int freq = EV("cpu_frequency");
    im_counter(t, im_cpu_counter_track(t, freq ? "cpu_frequency" : "cpu_idle",
                                       freq ? "cpufreq" : "cpuidle", cpu),
               l.ts, (double)state, IM_NONE);
  } else if (EV("print") || EV("tracing_mark_write") || EV("0")) {
    im_atrace_marker(t, l.ts, l.pid, l.args, l.args_len);
  } else if (EV("workqueue_execute_start")) {
    const char *f = NULL;
    for (const char *p = l.args; p + 9 <= l.args + l.args_len; p++)
      if (!memcmp(p, "function ", 9)) {
        f = p + 9;
        break;
      }
    if (!f) return 1;
    im_slice_begin(t, im_thread_track(t, utid), l.ts, im_cstr(t, "workqueue"),
                   im_str(t, f, (size_t)(l.args + l.args_len - f)));
  } else if (EV("workqueue_execute_end")) {
    im_slice_end(t, im_thread_track(t, utid), l.ts, im_cstr(t, "workqueue"), IM_NULL_STR);
  } else if (EV("sched_blocked_reason")) {
    int64_t pid, io = -1;
    if (!arg_int(&l, "pid", &pid)) return 1;
    arg_int(&l, "iowait", &io);
    im_sched_blocked_reason(t, im_thread(t, pid), io < 0 ? -1 : io != 0, arg_str(t, &l, "caller"));
  }
  return 1;
}

/* ---- atrace markers (§3.9.6) --------------------------------------------------------- */

/* Field i (0-based) of a '|'-separated marker. */
static int field(const char *s, size_t n, int i, const char **f, size_t *fn) {
  const char *p = s, *e = s + n;
  for (int k = 0; k < i; k++) {
    const char *bar = memchr(p, '|', (size_t)(e - p));
    if (!bar) return 0;
    p = bar + 1;
  }
  const char *bar = memchr(p, '|', (size_t)(e - p));
  *f = p;
  *fn = (size_t)((bar ? bar : e) - p);
  return 1;
}

static int parse_u(const char *s, size_t n, int64_t *out) {
  if (!n || n > 18) return 0;
  int64_t x = 0;
  for (size_t i = 0; i < n; i++) {
    if (!is_dig(s[i])) return 0;
    x = x * 10 + (s[i] - '0');
  }
  *out = x;
  return 1;
}

/* The `mem.lmk` instant of a low-memory kill, on the killed process's
 * android_lmk track. */
static void lmk_instant(im_trace *t, int64_t ts, int64_t killed_pid) {
  im_track_spec sp;
  im_track_spec_init(&sp, "android_lmk", IM_EV_SLICE);
  im_track_dim_int(&sp, "upid", im_process(t, killed_pid));
  sp.name = im_cstr(t, "LMK");
  im_slice_instant(t, im_track(t, &sp), ts, IM_NULL_STR, im_cstr(t, "mem.lmk"));
}

/* `B|tgid|lmk,pid,reason,adj,…` (lmkd since Android 12): the killed
 * process's oom_score_adj as a counter, and the mem.lmk instant. Fields
 * that are not numbers leave only the slice. */
static void lmk_begin(im_trace *t, int64_t ts, const char *name, size_t n) {
  const char *f[4];
  size_t fl[4];
  size_t at = 0;
  for (int i = 0; i < 4; i++) {
    if (at > n) return;   /* fewer than four fields */
    const char *comma = memchr(name + at, ',', n - at);
    size_t end = comma ? (size_t)(comma - name) : n;
    f[i] = name + at;
    fl[i] = end - at;
    at = end + 1;
  }
  int64_t pid, adj;
  int neg = fl[3] && f[3][0] == '-';
  if (!parse_u(f[1], fl[1], &pid) || pid > UINT32_MAX || !parse_u(f[3] + neg, fl[3] - (size_t)neg, &adj) ||
      adj > INT32_MAX)
    return;
  int64_t upid = im_process(t, pid);
  im_track_spec sp;
  im_track_spec_init(&sp, "oom_score_adj", IM_EV_COUNTER);
  im_track_dim_int(&sp, "upid", upid);
  sp.name = im_cstr(t, "oom_score_adj");
  im_counter(t, im_track(t, &sp), ts, (double)(neg ? -adj : adj), IM_NONE);
  lmk_instant(t, ts, pid);
}

/* Counters trace_processor treats apart (§3.9.6 C): ScreenState and
 * battery_stats.* are global counters of their own (1: done, no
 * atrace_counter); kill_one_process (lmkd before Android 12: the value is
 * the killed pid, reset to 0 after) adds the mem.lmk instant and is also
 * an ordinary counter (0). */
static int special_counter(im_trace *t, int64_t ts, const char *name, size_t n, uint32_t nm,
                           double v) {
  im_track_spec sp;
  if (n == 11 && !memcmp(name, "ScreenState", 11)) {
    im_track_spec_init(&sp, "screen_state", IM_EV_COUNTER);
    sp.name = nm;
  } else if (n > 14 && !memcmp(name, "battery_stats.", 14)) {
    im_track_spec_init(&sp, "battery_stats", IM_EV_COUNTER);
    im_track_dim_str(&sp, "counter_key", nm);
    sp.name = nm;
  } else {
    if (n == 16 && !memcmp(name, "kill_one_process", 16) && v >= 1 && v <= UINT32_MAX)
      lmk_instant(t, ts, (int64_t)v);
    return 0;
  }
  im_counter(t, im_track(t, &sp), ts, v, IM_NONE);
  return 1;
}

void im_atrace_marker(im_trace *t, int64_t ts, int64_t pid, const char *buf, size_t n) {
  while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\0')) n--;
  if (n < 1) return;
  char ph = buf[0];
  if (!strchr("BECSFINGH", ph) || (n > 1 && buf[1] != '|')) return;   /* other text: ignored */
  const char *f;
  size_t fn;
  int64_t tgid = 0;
  if (field(buf, n, 1, &f, &fn) && !parse_u(f, fn, &tgid)) tgid = 0;
  if (ph != 'E' && n < 2) {
    im_stat_add(t, IM_STAT_SYSTRACE_PARSE_FAILURE, 1);
    return;
  }
  int64_t utid;
  if (ph == 'E' && !tgid) {
    /* Older Android writes E without a tgid: a thread never seen can
     * have no open slice, so the event is dropped without making one. */
    if ((utid = im_thread_find(t, pid)) == IM_NONE) return;
  } else {
    utid = tgid ? im_thread_update(t, pid, tgid) : im_thread(t, pid);
  }
  int64_t upid = im_thread_upid(t, utid);
  const char *name = NULL;
  size_t name_len = 0;
  int has_name = field(buf, n, 2, &name, &name_len);
  switch (ph) {
  case 'B': {
    if (!has_name) {
      im_stat_add(t, IM_STAT_SYSTRACE_PARSE_FAILURE, 1);
      return;
    }
    /* the name is all the text after B|tgid| */
    size_t rest = (size_t)(buf + n - name);
    uint32_t nm = rest ? im_str(t, name, rest) : im_cstr(t, "[empty slice name]");
    im_slice_begin(t, im_thread_track(t, utid), ts, IM_NULL_STR, nm);
    if (rest > 4 && !memcmp(name, "lmk,", 4)) lmk_begin(t, ts, name, rest);
    return;
  }
  case 'E':
    im_slice_end(t, im_thread_track(t, utid), ts, IM_NULL_STR, IM_NULL_STR);
    return;
  case 'I':
    if (!has_name) break;
    im_slice_instant(t, im_thread_track(t, utid), ts, IM_NULL_STR, im_str(t, name, name_len));
    return;
  case 'C': {
    const char *v;
    size_t vn;
    if (!has_name || !field(buf, n, 3, &v, &vn) || upid == IM_NONE) break;
    char num[64];
    if (!vn || vn >= sizeof num) break;
    memcpy(num, v, vn);
    num[vn] = 0;
    char *end;
    double x = strtod(num, &end);
    if (*end) break;
    im_track_spec sp;
    uint32_t nm = im_str(t, name, name_len);
    if (special_counter(t, ts, name, name_len, nm, x)) return;
    im_track_spec_init(&sp, "atrace_counter", IM_EV_COUNTER);
    im_track_dim_int(&sp, "upid", upid);
    im_track_dim_str(&sp, "name", nm);
    sp.name = nm;
    im_args *a = im_args_new(t);
    im_args_int(a, im_cstr(t, "utid"), utid);
    im_counter(t, im_track(t, &sp), ts, x, im_args_commit(t, a));
    im_args_free(a);
    return;
  }
  case 'S': case 'F': {
    const char *c;
    size_t cn;
    int64_t cookie;
    if (!has_name || !field(buf, n, 3, &c, &cn) || !parse_u(c, cn, &cookie) || upid == IM_NONE) break;
    uint32_t nm = im_str(t, name, name_len);
    im_track_spec set;
    im_track_spec_init(&set, "atrace_async_slice", IM_EV_SLICE);
    im_track_dim_int(&set, "upid", upid);
    im_track_dim_str(&set, "name", nm);
    im_cookie ck = {0x5f, (uint64_t)cookie};
    if (ph == 'S') {
      int64_t track = im_async_track(t, &set, ck, +1, nm);
      int64_t top = im_slice_top(t, track);
      if (top != IM_NONE && im_get_i64(t, IM_T_SLICE, IM_SLICE_DUR, top) == -1) return;  /* unnestable */
      int64_t s = im_slice_begin(t, track, ts, IM_NULL_STR, nm);
      im_args_int(im_slice_args(t, s), im_cstr(t, "cookie"), cookie);
    } else {
      int64_t track = im_async_track(t, &set, ck, -1, nm);
      int64_t s = im_slice_end(t, track, ts, IM_NULL_STR, IM_NULL_STR);
      im_slice_commit_args(t, s);
    }
    return;
  }
  case 'N': case 'G': case 'H': {
    const char *nm2 = NULL, *c = NULL;
    size_t n2 = 0, cn = 0;
    if (!has_name || upid == IM_NONE) break;
    int has3 = field(buf, n, 3, &nm2, &n2), has4 = field(buf, n, 4, &c, &cn);
    uint32_t track_name = im_str(t, name, name_len);
    im_track_spec set;
    im_track_spec_init(&set, "atrace_async_slice_for_track", IM_EV_SLICE);
    im_track_dim_int(&set, "upid", upid);
    im_track_dim_str(&set, "name", track_name);
    int64_t cookie = 0;
    if (ph == 'G' && !(has3 && has4 && parse_u(c, cn, &cookie))) break;
    if (ph == 'H') {
      /* H|tgid|track[|name]|cookie */
      if (has4 ? !parse_u(c, cn, &cookie) : !(has3 && parse_u(nm2, n2, &cookie))) break;
    }
    if (ph == 'N' && !has3) break;
    im_cookie ck = {0x60, (uint64_t)cookie};
    im_args *a = im_args_new(t);
    if (ph == 'N') {
      int64_t track = im_async_track(t, &set, ck, +1, track_name);
      im_async_track(t, &set, ck, -1, track_name);
      int64_t s = im_slice_instant(t, track, ts, IM_NULL_STR, im_str(t, nm2, n2));
      im_args_int(im_slice_args(t, s), im_cstr(t, "utid"), utid);
      im_slice_commit_args(t, s);
    } else if (ph == 'G') {
      int64_t track = im_async_track(t, &set, ck, +1, track_name);
      int64_t s = im_slice_begin(t, track, ts, IM_NULL_STR, im_str(t, nm2, n2));
      im_args_int(im_slice_args(t, s), im_cstr(t, "utid"), utid);
    } else {
      int64_t track = im_async_track(t, &set, ck, -1, track_name);
      int64_t s = im_slice_end(t, track, ts, IM_NULL_STR, IM_NULL_STR);
      im_args_int(im_slice_args(t, s), im_cstr(t, "end_utid"), utid);
      im_slice_commit_args(t, s);
    }
    im_args_free(a);
    return;
  }
  default: return;
  }
  im_stat_add(t, IM_STAT_SYSTRACE_PARSE_FAILURE, 1);
}
