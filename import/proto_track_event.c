/*
 * proto_track_event.c — TrackEvent in sorted order (TRACES.md §3.6):
 * slices, instants, counters and flows, with their args.
 *
 * The timestamp and the values that depended on file order come from the
 * read pass (the sort item, the aux record); everything else is decoded
 * here from the packet in place: interned names and categories of the
 * packet's generation, the track (§3.7), debug annotations into `debug.*`
 * args (dicts add `.key`, arrays `[i]` to the key only), source locations,
 * and the legacy_event phase, which overrides the type.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "import/proto_import.h"

enum { TE_SLICE_BEGIN = 1, TE_SLICE_END = 2, TE_INSTANT = 3, TE_COUNTER = 4, TE_STATE = 5 };
enum { IN_CATEGORIES = 1, IN_NAMES = 2, IN_DEBUG_NAMES = 3, IN_SOURCE_LOCATIONS = 4,
       IN_DEBUG_STRINGS = 29 };
enum { FLOW_NS = 0x7e00 };   /* TrackEvent flow ids (trace_id = the raw id) */
enum { MAX_KEY = 512, MAX_DEPTH = 16 };

typedef struct te_ctx {
  pb_imp *m;
  const pb_pctx *c;
  im_args *args;
} te_ctx;

static uint32_t span_str(pb_imp *m, pb_span s) { return pb_str(m, s.p, s.n); }

static pb_interned *interned(pb_imp *m, const pb_pctx *c, uint32_t field, uint64_t iid) {
  return pb_intern_get(m, c->seq_idx, c->gen->epoch, field, iid);
}

/* ---- args ---------------------------------------------------------------------- */

typedef struct keybuf {
  char key[MAX_KEY], flat[MAX_KEY];
  size_t kn, fn;
} keybuf;

static int key_push(keybuf *k, const char *s, size_t n, int sanitize, int index, int64_t i) {
  char tmp[32];
  if (index) {
    n = (size_t)snprintf(tmp, sizeof tmp, "[%lld]", (long long)i);
    if (k->kn + n >= MAX_KEY) return 0;
    memcpy(k->key + k->kn, tmp, n);
    k->kn += n;
    return 1;
  }
  if (k->kn + n + 1 >= MAX_KEY || k->fn + n + 1 >= MAX_KEY) return 0;
  k->key[k->kn++] = '.';
  k->flat[k->fn++] = '.';
  for (size_t j = 0; j < n; j++) {
    char ch = s[j];
    if (sanitize && (ch == '.' || ch == '[' || ch == ']')) ch = '_';
    k->key[k->kn++] = ch;
    k->flat[k->fn++] = ch;
  }
  return 1;
}

static void add_arg(te_ctx *x, const keybuf *k, im_vtype type, int64_t i, double d, uint32_t s) {
  uint32_t key = pb_str(x->m, k->key, k->kn);
  uint32_t flat = k->fn == k->kn ? key : pb_str(x->m, k->flat, k->fn);   /* no [i] in it */
  im_arg a = {.key = key, .flat_key = flat, .type = type,
              .i = i, .d = d, .s = s};
  im_args_add(x->args, &a, 0);
}

/* One DebugAnnotation's value under key k (its name already pushed). */
static void annotation_value(te_ctx *x, keybuf *k, pb_span da, int depth) {
  pb_imp *m = x->m;
  pb_reader r;
  pb_field f = {0};
  pb_init_span(&r, da);
  int64_t idx = 0;
  while (pb_next(&r, &f)) {
    switch (f.id) {
    case 2: add_arg(x, k, IM_V_BOOL, f.v != 0, 0, 0); break;
    case 3: add_arg(x, k, IM_V_UINT, (int64_t)f.v, 0, 0); break;
    case 4: add_arg(x, k, IM_V_INT, pb_i64(&f), 0, 0); break;
    case 5: add_arg(x, k, IM_V_REAL, 0, pb_double(&f), 0); break;
    case 6:
      if (f.wt == PB_LEN) add_arg(x, k, IM_V_STRING, 0, 0, span_str(m, f.s));
      break;
    case 7: add_arg(x, k, IM_V_POINTER, (int64_t)f.v, 0, 0); break;
    case 9:
      if (f.wt == PB_LEN) add_arg(x, k, IM_V_JSON, 0, 0, span_str(m, f.s));
      break;
    case 17: {
      pb_interned *e = interned(m, x->c, IN_DEBUG_STRINGS, f.v);
      add_arg(x, k, IM_V_STRING, 0, 0, e ? pb_intern_str(m, e, 2) : IM_NULL_STR);
      break;
    }
    case 11:   /* dict_entries: nested annotations with names */
    case 12: { /* array_values: nested annotations */
      if (f.wt != PB_LEN || depth >= MAX_DEPTH) break;
      keybuf save = *k;
      if (f.id == 12) {
        if (key_push(k, NULL, 0, 0, 1, idx++)) annotation_value(x, k, f.s, depth + 1);
      } else {
        pb_field nf = {0};
        pb_span name = {0};
        int has = 0;
        if (pb_find(f.s, 10, &nf) && nf.wt == PB_LEN) name = nf.s, has = 1;
        else if (pb_find(f.s, 1, &nf)) {
          pb_interned *e = interned(m, x->c, IN_DEBUG_NAMES, nf.v);
          pb_field ef = {0};
          if (e && pb_find((pb_span){e->p, e->len}, 2, &ef) && ef.wt == PB_LEN) name = ef.s, has = 1;
        }
        if (has && key_push(k, (const char *)name.p, name.n, 0, 0, 0))
          annotation_value(x, k, f.s, depth + 1);
      }
      *k = save;
      break;
    }
    }
  }
  if (r.bad) pb_stat(m, IM_STAT_PROTO_MALFORMED_FIELDS);
}

static void debug_annotation(te_ctx *x, pb_span da) {
  pb_imp *m = x->m;
  pb_field f = {0};
  pb_span name = {0};
  int has = 0;
  if (pb_find(da, 10, &f) && f.wt == PB_LEN) name = f.s, has = 1;
  else if (pb_find(da, 1, &f)) {
    pb_interned *e = interned(m, x->c, IN_DEBUG_NAMES, f.v);
    pb_field ef = {0};
    if (e && pb_find((pb_span){e->p, e->len}, 2, &ef) && ef.wt == PB_LEN) name = ef.s, has = 1;
  }
  if (!has) return;
  keybuf k;
  memcpy(k.key, "debug", 5);
  memcpy(k.flat, "debug", 5);
  k.kn = k.fn = 5;
  if (key_push(&k, (const char *)name.p, name.n, 1, 0, 0)) annotation_value(x, &k, da, 0);
}

/* SourceLocation (file_name 2, function_name 3, line_number 4) under
 * prefix p (0 "source", 1 "task.posted_from", 2 "source_location"): the
 * nine keys are interned once per import. */
static void source_location(te_ctx *x, int p, pb_span sl) {
  static const char *const PREFIX[3] = {"source", "task.posted_from", "source_location"};
  static const char *const LEAF[3] = {"file_name", "function_name", "line_number"};
  pb_imp *m = x->m;
  struct pb_loc_cache *c = NULL;
  if (p == 2 && sl.n && sl.n <= PB_LOC_BYTES) {
    uint64_t head = 0, tail = 0;
    memcpy(&head, sl.p, sl.n < 8 ? sl.n : 8);
    memcpy(&tail, sl.p + sl.n - (sl.n < 8 ? sl.n : 8), sl.n < 8 ? sl.n : 8);
    uint64_t h = (head * 0x9e3779b97f4a7c15ull) ^ (tail * 0xc2b2ae3d27d4eb4full) ^ sl.n;
    c = &m->loc_cache[(h >> 40) & (PB_LOC_CACHE - 1)];
    if (c->len == sl.n && memcmp(c->bytes, sl.p, sl.n) == 0) {
      for (int i = 0; i < c->nargs; i++) im_args_add(x->args, &c->args[i], 0);
      return;
    }
    c->len = 0;
    c->nargs = 0;
  }
  pb_reader r;
  pb_field f = {0};
  pb_init_span(&r, sl);
  while (pb_next(&r, &f)) {
    if (f.id < 2 || f.id > 4) continue;
    int l = (int)f.id - 2;
    uint32_t *k = &m->loc_keys[p][l];
    if (!*k) {
      char buf[64];
      int n = snprintf(buf, sizeof buf, "%s.%s", PREFIX[p], LEAF[l]);
      *k = im_str(m->t, buf, (size_t)n) + 1;
    }
    im_arg a = {.key = *k - 1, .flat_key = *k - 1};
    if (f.id == 4) a.type = IM_V_UINT, a.i = (int64_t)(uint32_t)f.v;
    else if (f.wt == PB_LEN) a.type = IM_V_STRING, a.s = span_str(m, f.s);
    else continue;
    im_args_add(x->args, &a, 0);
    if (c && c->nargs < 3) c->args[c->nargs] = a;
    if (c) c->nargs++;
  }
  /* cached when it decoded whole into at most three args */
  if (c && !r.bad && c->nargs <= 3) {
    memcpy(c->bytes, sl.p, sl.n);
    c->len = (uint32_t)sl.n;
  } else if (c) {
    c->nargs = 0;
  }
}

static void interned_location(te_ctx *x, int prefix, uint64_t iid) {
  pb_interned *e = interned(x->m, x->c, IN_SOURCE_LOCATIONS, iid);
  if (e) source_location(x, prefix, (pb_span){e->p, e->len});
}

/* ---- the event --------------------------------------------------------------------- */

typedef struct te_event {
  int type, has_type, has_track;
  uint64_t track_uuid;
  int ncat_iids, ncats;
  int has_name_iid, has_name;
  uint64_t name_iid;
  pb_span name;
  pb_span legacy;
  int has_legacy;
  int has_tta;
  int64_t tta;
  int nanns;
  pb_span inline_loc, task;
  int has_inline_loc, has_task, has_loc_iid;
  uint64_t loc_iid;
  int has_corr, has_corr_str;
  uint64_t corr;
  pb_span corr_str;
  int nflows, nterm;
  /* the arrays: not zeroed per event (1.5 KB), the counts above say how
   * much of each is set */
  uint64_t cat_iids[8];
  pb_span cats[8];
  pb_span anns[64];
  uint64_t flows[16], term[16];
} te_event;

static void decode(pb_imp *m, pb_span te, te_event *e) {
  pb_reader r;
  pb_field f = {0};
  pb_rep it;
  uint64_t v;
  memset(e, 0, offsetof(te_event, cat_iids));
  pb_init_span(&r, te);
  while (pb_next(&r, &f)) {
    switch (f.id) {
    case 9: e->has_type = 1, e->type = (int)f.v; break;
    case 11: e->has_track = 1, e->track_uuid = f.v; break;
    case 3:
      pb_rep_init(&it, &f, PB_VARINT);
      while (pb_rep_next(&it, &v))
        if (e->ncat_iids < 8) e->cat_iids[e->ncat_iids++] = v;
      break;
    case 22:
      if (f.wt == PB_LEN && e->ncats < 8) e->cats[e->ncats++] = f.s;
      break;
    case 10: e->has_name_iid = 1, e->name_iid = f.v; break;
    case 23:
      if (f.wt == PB_LEN) e->has_name = 1, e->name = f.s;
      break;
    case 6:
      if (f.wt == PB_LEN) e->has_legacy = 1, e->legacy = f.s;
      break;
    case 4:
      if (f.wt == PB_LEN && e->nanns < 64) e->anns[e->nanns++] = f.s;
      break;
    case 5:
      if (f.wt == PB_LEN) e->has_task = 1, e->task = f.s;
      break;
    case 33:
      if (f.wt == PB_LEN) e->has_inline_loc = 1, e->inline_loc = f.s;
      break;
    case 34: e->has_loc_iid = 1, e->loc_iid = f.v; break;
    case 52: e->has_corr = 1, e->corr = f.v; break;
    case 53:
      if (f.wt == PB_LEN) e->has_corr_str = 1, e->corr_str = f.s;
      break;
    case 47: case 36: case 48: case 42: {
      int term = f.id == 48 || f.id == 42;
      pb_rep_init(&it, &f, f.id == 47 || f.id == 48 ? PB_FIXED64 : PB_VARINT);
      while (pb_rep_next(&it, &v)) {
        if (term && e->nterm < 16) e->term[e->nterm++] = v;
        if (!term && e->nflows < 16) e->flows[e->nflows++] = v;
      }
      break;
    }
    }
  }
  /* a damaged message was counted by the read pass (proto_te_read.c) */
}

/* §3.6.2: the category string. */
static uint32_t category(pb_imp *m, const pb_pctx *c, const te_event *e) {
  int n = e->ncat_iids + e->ncats;
  if (!n) return IM_NULL_STR;
  if (n == 1 && e->ncats == 1) return span_str(m, e->cats[0]);
  char buf[1024];
  size_t len = 0;
  for (int i = 0; i < n; i++) {
    const char *s;
    size_t sn;
    char tmp[40];
    if (i < e->ncat_iids) {
      pb_interned *x = interned(m, c, IN_CATEGORIES, e->cat_iids[i]);
      uint32_t id = x ? pb_intern_str(m, x, 2) : IM_NULL_STR;
      if (n == 1 && id != IM_NULL_STR) return id;
      if (id != IM_NULL_STR) {
        s = rt_str_get(m->sp, id, &sn);
      } else {
        sn = (size_t)snprintf(tmp, sizeof tmp, "unknown(%llu)", (unsigned long long)e->cat_iids[i]);
        s = tmp;
      }
    } else {
      s = (const char *)e->cats[i - e->ncat_iids].p;
      sn = e->cats[i - e->ncat_iids].n;
    }
    if (i && len < sizeof buf) buf[len++] = ',';
    if (sn > sizeof buf - len) sn = sizeof buf - len;
    memcpy(buf + len, s, sn);
    len += sn;
  }
  return im_str(m->t, buf, len);
}

static uint32_t event_name(pb_imp *m, const pb_pctx *c, const te_event *e, uint64_t legacy_iid,
                           int has_legacy_iid) {
  if (e->has_name_iid) {
    pb_interned *x = interned(m, c, IN_NAMES, e->name_iid);
    return x ? pb_intern_str(m, x, 2) : IM_NULL_STR;
  }
  if (e->has_name) return span_str(m, e->name);
  if (has_legacy_iid) {
    pb_interned *x = interned(m, c, IN_NAMES, legacy_iid);
    return x ? pb_intern_str(m, x, 2) : IM_NULL_STR;
  }
  return IM_NULL_STR;
}

static void write_args(te_ctx *x, const te_event *e) {
  if (e->has_loc_iid) interned_location(x, 0, e->loc_iid);
  if (e->has_task) {
    pb_field f = {0};
    if (pb_find(e->task, 1, &f)) interned_location(x, 1, f.v);
  }
  if (e->has_inline_loc) source_location(x, 2, e->inline_loc);
  if (e->has_corr || e->has_corr_str) {
    keybuf k = {.key = "correlation_id", .flat = "correlation_id", .kn = 14, .fn = 14};
    if (e->has_corr) add_arg(x, &k, IM_V_UINT, (int64_t)e->corr, 0, 0);
    else add_arg(x, &k, IM_V_STRING, 0, 0, span_str(x->m, e->corr_str));
  }
  for (int i = 0; i < e->nanns; i++) debug_annotation(x, e->anns[i]);
}

/* Whether write_args may add anything. */
static int has_args(const te_event *e) {
  return e->has_loc_iid || e->has_task || e->has_inline_loc || e->has_corr || e->has_corr_str ||
         e->nanns;
}

static void flows(pb_imp *m, int64_t slice, const te_event *e) {
  im_trace *t = m->t;
  if (slice < 0) {
    if (e->nflows || e->nterm) pb_stat(m, IM_STAT_FLOW_NO_ENCLOSING_SLICE);
    return;
  }
  for (int i = 0; i < e->nflows; i++) {
    uint64_t id = e->flows[i];
    if (im_map_get(&m->flow_live, id) == IM_NONE) {
      im_flow_begin(t, slice, FLOW_NS, id);
      if (!im_map_put(&m->flow_live, id, 1)) im_oom(t);
    } else {
      im_flow_step(t, slice, FLOW_NS, id, (int64_t)id, IM_NONE);
    }
  }
  for (int i = 0; i < e->nterm; i++) {
    uint64_t id = e->term[i];
    if (im_map_get(&m->flow_live, id) == IM_NONE) continue;
    im_flow_end(t, slice, FLOW_NS, id, (int64_t)id, IM_NONE, 1);
    im_map_put(&m->flow_live, id, IM_NONE);
  }
}

/* A counter row, and the slice fields it also sets (thread time). */
static void extra_counters(pb_imp *m, const pb_pctx *c, const pb_aux *aux) {
  if (!aux) return;
  for (uint32_t i = 0; i < aux->nextra; i++) {
    const pb_extra *x = &m->extra.v[aux->extra_first + i];
    int64_t track = pb_counter_track(m, x->uuid);
    if (track >= 0) im_counter(m->t, track, c->ts, x->value, IM_NONE);
  }
}

/* The thread time and instruction count a slice gets: the event's own
 * (thread_time_*, thread_instruction_count_*), else an extra counter
 * value on a track named thread_time / thread_instruction_count (or of
 * that built-in type), §3.6.5. */
static pb_aux slice_times(pb_imp *m, const pb_aux *aux) {
  pb_aux st = {0};
  if (!aux) return st;
  st.flags = aux->flags & (PB_AUX_TT | PB_AUX_TI);
  st.tt = aux->tt, st.ti = aux->ti;
  if (!aux->nextra) return st;
  uint32_t s_tt = im_cstr(m->t, "thread_time"), s_ti = im_cstr(m->t, "thread_instruction_count");
  for (uint32_t i = 0; i < aux->nextra; i++) {
    const pb_extra *x = &m->extra.v[aux->extra_first + i];
    const pb_reservation *r = pb_res_get(m, x->uuid);
    if (!r) continue;
    if (!(st.flags & PB_AUX_TT) && (r->ctype == 1 || r->name == s_tt))
      st.tt = (int64_t)x->value, st.flags |= PB_AUX_TT;
    else if (!(st.flags & PB_AUX_TI) && (r->ctype == 2 || r->name == s_ti))
      st.ti = (int64_t)x->value, st.flags |= PB_AUX_TI;
  }
  return st;
}

/* The thread_time / thread_instruction_count counters of the thread. */
static void thread_counters(pb_imp *m, int64_t ts, int64_t utid, const pb_aux *aux) {
  if (!aux || utid < 0) return;
  if (aux->flags & PB_AUX_TT) {
    im_track_spec s;
    im_track_spec_init(&s, "thread_time", IM_EV_COUNTER);
    im_track_dim_int(&s, "utid", utid);
    s.name = im_cstr(m->t, "thread_time");
    im_counter(m->t, im_track(m->t, &s), ts, (double)aux->tt, IM_NONE);
  }
  if (aux->flags & PB_AUX_TI) {
    im_track_spec s;
    im_track_spec_init(&s, "thread_instructions", IM_EV_COUNTER);
    im_track_dim_int(&s, "utid", utid);
    s.name = im_cstr(m->t, "thread_instruction_count");
    im_counter(m->t, im_track(m->t, &s), ts, (double)aux->ti, IM_NONE);
  }
}

/* ---- legacy async events (§3.6.9) ------------------------------------------------ */

typedef struct legacy_ids {
  int has_id, local, has_scope, has_bind, direction, has_unscoped, bind_enclosing;
  uint64_t id, bind, unscoped;
  pb_span scope;
} legacy_ids;

/* b/e/n and S/T/p/F: slices on the async allocator's legacy tracks, keyed
 * by (scope, id); the set's name is the first name seen for that cookie. */
static void legacy_async(pb_imp *m, const pb_pctx *c, const te_event *e, int phase,
                         const legacy_ids *ids, uint64_t name_iid, int has_name_iid) {
  im_trace *t = m->t;
  if (!ids->has_id) {
    pb_stat(m, IM_STAT_TRACK_EVENT_PARSER_ERRORS);
    return;
  }
  uint32_t name = event_name(m, c, e, name_iid, has_name_iid);
  uint32_t cat = category(m, c, e);
  int nestable = phase == 'b' || phase == 'e' || phase == 'n';
  /* the scope dimension: category (b/e/n) or name (S/T/p/F), or
   * "<category>:<id_scope>" */
  uint32_t scope = nestable ? cat : name;
  if (ids->has_scope) {
    char buf[512];
    size_t cn = 0;
    const char *cs = cat != IM_NULL_STR ? rt_str_get(m->sp, cat, &cn) : "";
    int k = snprintf(buf, sizeof buf, "%.*s:%.*s", (int)cn, cs, (int)ids->scope.n,
                     (const char *)ids->scope.p);
    scope = im_str(t, buf, (size_t)(k < (int)sizeof buf ? k : (int)sizeof buf - 1));
  }
  int64_t upid = IM_NONE;
  if (c->gen->has_td) upid = im_thread_upid(t, im_thread_update(t, c->gen->td_tid, c->gen->td_pid));
  int local = ids->local && upid >= 0;
  uint64_t key = im_hash(im_hash(im_hash(ids->id, scope), (uint64_t)(local ? upid : -1)), 0xa5);
  int64_t first = im_map_get(&m->async_names, key);
  if (first == IM_NONE) {
    if (!im_map_put(&m->async_names, key, name)) im_oom(t);
    first = name;
  }
  im_track_spec s;
  im_track_spec_init(&s, local ? "legacy_async_process_slice" : "legacy_async_global_slice",
                     IM_EV_SLICE);
  if (local) im_track_dim_int(&s, "upid", upid);
  im_track_dim_str(&s, "scope", scope);
  im_track_dim_str(&s, "name", (uint32_t)first);
  im_args *src = m->scratch;
  im_args_clear(src);
  im_args_string(src, im_cstr(t, "source"), im_cstr(t, "chrome"));
  im_args_bool(src, im_cstr(t, "trace_id_is_process_scoped"), local);
  if (upid >= 0) im_args_uint(src, im_cstr(t, "upid"), (uint64_t)upid);
  im_args_string(src, im_cstr(t, "source_scope"), scope);
  s.source = src;
  im_cookie ck = {ids->id, key};
  int begin = phase == 'b' || phase == 'S';
  int end = phase == 'e' || phase == 'F';
  int64_t track = im_async_track(t, &s, ck, end ? -1 : 1, (uint32_t)first);
  im_args_clear(src);
  if (track < 0) return;
  int64_t slice;
  if (begin) slice = im_slice_begin(t, track, c->ts, cat, name == IM_NULL_STR ? im_cstr(t, "[No name]") : name);
  else if (end) slice = im_slice_end(t, track, c->ts, IM_NULL_STR, IM_NULL_STR);
  else {
    slice = im_slice_instant(t, track, c->ts, cat, name);
    im_async_track(t, &s, ck, -1, (uint32_t)first);
  }
  if (slice < 0) return;
  im_args *a = im_slice_args(t, slice);
  if (!a) return;
  te_ctx x = {.m = m, .c = c, .args = a};
  write_args(&x, e);
  if (!nestable && !end) {   /* the end's args merge into the slice: keep its begin phase */
    char ph[2] = {(char)phase, 0};
    im_args_string(a, im_cstr(t, "legacy_event.phase"), im_cstr(t, ph));
  }
  if (c->gen->has_td) {
    int64_t tu = im_thread_update(t, c->gen->td_tid, c->gen->td_pid);
    im_arg arg = {.key = im_cstr(t, "legacy_event.passthrough_utid"),
                  .flat_key = im_cstr(t, "legacy_event.passthrough_utid"), .type = IM_V_UINT, .i = tu};
    if (tu >= 0) im_args_add(a, &arg, 1);
  }
  if (!begin) im_slice_commit_args(t, slice);   /* §1.10.6: written when the slice ends */
}

/* TrackEventDefaults.track_uuid of the packet's generation. */
static int default_track(const pb_pctx *c, uint64_t *uuid) {
  pb_field d = {0}, tu = {0};
  if (!c->gen->defaults.n || !pb_find(c->gen->defaults, 11, &d) || d.wt != PB_LEN ||
      !pb_find(d.s, 11, &tu))
    return 0;
  *uuid = tu.v;
  return 1;
}

/* §3.6.4 STATE: the event's name becomes the state of the uuid's state
 * track (a NULL name ends the current state only); its args go on the
 * new `state` row. */
static void state_event(pb_imp *m, const pb_pctx *c, const te_event *e, const pb_aux *aux) {
  im_trace *t = m->t;
  uint64_t uuid = e->track_uuid;
  if (!e->has_track) default_track(c, &uuid);
  if (!uuid) {   /* a state needs a described track, not the thread fallback */
    pb_stat(m, IM_STAT_TRACK_EVENT_PARSER_ERRORS);
    return;
  }
  int64_t track = pb_state_track(m, uuid);
  if (track < 0) return;
  uint32_t name = event_name(m, c, e, 0, 0);
  int64_t set = IM_NONE;
  if (name != IM_NULL_STR) {
    im_args *a = im_args_new(t);
    te_ctx x = {.m = m, .c = c, .args = a};
    write_args(&x, e);
    set = im_args_commit(t, a);
    im_args_free(a);
  }
  im_state(t, track, c->ts, category(m, c, e), name, set);
  extra_counters(m, c, aux);
}

void pb_parse_track_event(pb_imp *m, const pb_pctx *c, pb_span te, const pb_aux *aux) {
  im_trace *t = m->t;
  te_event e;
  decode(m, te, &e);

  /* legacy_event: name_iid 1, phase 2, duration_us 3, thread_duration_us 4,
   * pid_override 18, tid_override 19 */
  int phase = 0;
  int64_t legacy_dur = -1, legacy_tdur = -1;
  uint64_t legacy_name_iid = 0;
  int has_legacy_name = 0;
  legacy_ids ids = {0};
  if (e.has_legacy) {
    pb_reader r;
    pb_field f = {0};
    pb_init_span(&r, e.legacy);
    while (pb_next(&r, &f)) {
      if (f.id == 1) legacy_name_iid = f.v, has_legacy_name = 1;
      if (f.id == 2) phase = (int)f.v;
      if (f.id == 3) legacy_dur = pb_mul(pb_i64(&f), 1000);
      if (f.id == 4) legacy_tdur = pb_mul(pb_i64(&f), 1000);
      if (f.id == 6 || f.id == 11) ids.has_id = 1, ids.id = f.v;   /* unscoped / global */
      if (f.id == 6) ids.has_unscoped = 1, ids.unscoped = f.v;
      if (f.id == 12) ids.bind_enclosing = f.v != 0;
      if (f.id == 10) ids.has_id = 1, ids.id = f.v, ids.local = 1;
      if (f.id == 7 && f.wt == PB_LEN) ids.has_scope = 1, ids.scope = f.s;
      if (f.id == 8) ids.has_bind = 1, ids.bind = f.v;
      if (f.id == 13) ids.direction = (int)f.v;
    }
  }
  int type = e.type;
  if (phase) {
    switch (phase) {
    case 'B': type = TE_SLICE_BEGIN; break;
    case 'E': type = TE_SLICE_END; break;
    case 'X': type = 'X'; break;
    case 'i': case 'I': case 'R': type = TE_INSTANT; break;
    case 'M': type = 'M'; break;
    case 's': case 't': case 'f': type = phase; break;
    case 'b': case 'e': case 'n': case 'S': case 'T': case 'p': case 'F':
      legacy_async(m, c, &e, phase, &ids, legacy_name_iid, has_legacy_name);
      return;
    default:
      pb_stat(m, IM_STAT_TRACK_EVENT_PARSER_ERRORS);
      return;
    }
  } else if (!e.has_type || type < TE_SLICE_BEGIN || type > TE_STATE) {
    pb_stat(m, IM_STAT_TRACK_EVENT_PARSER_ERRORS);
    return;
  }

  if (type == TE_COUNTER) {
    uint64_t uuid = e.track_uuid;
    if (!e.has_track) default_track(c, &uuid);
    int64_t track = pb_counter_track(m, uuid);
    if (track >= 0 && aux && (aux->flags & PB_AUX_VALUE)) im_counter(t, track, c->ts, aux->value, IM_NONE);
    extra_counters(m, c, aux);
    return;
  }
  if (type == TE_STATE) {
    state_event(m, c, &e, aux);
    return;
  }

  uint32_t name = event_name(m, c, &e, legacy_name_iid, has_legacy_name);
  uint32_t cat = category(m, c, &e);

  /* §3.6.3: the track: the event's uuid, else the defaults' */
  uint64_t uuid = e.track_uuid;
  int has_uuid = e.has_track || default_track(c, &uuid);
  int64_t track, utid = IM_NONE;
  pb_resolved rs = {.ok = 1, .scope = PB_SCOPE_GLOBAL, .is_root = 1, .utid = IM_NONE,
                    .upid = IM_NONE};
  int delta = type == TE_SLICE_BEGIN ? 1 : type == TE_SLICE_END ? -1 : 0;
  if (!uuid && c->gen->has_td && (!has_uuid || !e.has_type)) {
    utid = im_thread_update(t, c->gen->td_tid, c->gen->td_pid);
    rs.scope = PB_SCOPE_THREAD, rs.utid = utid;
    track = im_thread_track(t, utid);
  } else {
    rs = pb_resolve_uuid(m, uuid);
    if (!rs.ok) return;
    utid = rs.utid;
    if (type == TE_INSTANT) delta = 1;
    track = pb_slice_track(m, uuid, &rs, name, delta);
    if (type == TE_INSTANT && (!rs.r || rs.r->track < 0))
      pb_slice_track(m, uuid, &rs, name, -1);   /* merged: the instant's begin + end */
  }
  if (track < 0) return;
  if (type == 's' || type == 't' || type == 'f') {
    /* §3.6.8: v1 flows keyed (unscoped_id, category, name) as JSON's */
    if (!ids.has_unscoped) pb_stat(m, IM_STAT_FLOW_INVALID_ID);
    else im_flow_v1(t, track, type, ids.unscoped, cat, name, ids.bind_enclosing);
    return;
  }

  int64_t slice = IM_NONE;
  switch (type) {
  case TE_SLICE_BEGIN: slice = im_slice_begin(t, track, c->ts, cat, name); break;
  case TE_SLICE_END: slice = im_slice_end(t, track, c->ts, cat, name); break;
  case TE_INSTANT: slice = im_slice_instant(t, track, c->ts, cat, name); break;
  case 'X':
    slice = im_slice_complete(t, track, c->ts, legacy_dur < 0 ? 0 : legacy_dur, cat, name, NULL);
    break;
  case 'M': {
    /* legacy thread_name / process_name: the first annotation's string */
    if (!e.nanns || name == IM_NULL_STR || utid < 0) return;
    size_t nn;
    const char *ns = rt_str_get(m->sp, name, &nn);
    pb_field f = {0};
    if (!pb_find(e.anns[0], 6, &f) || f.wt != PB_LEN) return;
    if (nn == 11 && !memcmp(ns, "thread_name", 11))
      im_thread_name(t, utid, span_str(m, f.s), IM_TNAME_TRACK_EVENT);
    else if (nn == 12 && !memcmp(ns, "process_name", 12) && im_thread_upid(t, utid) >= 0)
      im_process_name(t, im_thread_upid(t, utid), span_str(m, f.s), IM_PNAME_DESCRIPTOR);
    return;
  }
  }
  if (slice >= 0) {
    /* §3.6.7: thread time and instruction counts */
    pb_aux st = slice_times(m, aux);
    if (st.flags & PB_AUX_TT) {
      if (type == TE_SLICE_END) {
        if (!im_is_null(t, IM_T_SLICE, IM_SLICE_THREAD_TS, slice))
          im_set_i64(t, IM_T_SLICE, IM_SLICE_THREAD_DUR, slice,
                     pb_sub(st.tt, im_get_i64(t, IM_T_SLICE, IM_SLICE_THREAD_TS, slice)));
      } else {
        im_set_i64(t, IM_T_SLICE, IM_SLICE_THREAD_TS, slice, st.tt);
        if (type == TE_INSTANT) im_set_i64(t, IM_T_SLICE, IM_SLICE_THREAD_DUR, slice, 0);
        if (type == 'X' && legacy_tdur >= 0)
          im_set_i64(t, IM_T_SLICE, IM_SLICE_THREAD_DUR, slice, legacy_tdur);
      }
    }
    if (st.flags & PB_AUX_TI) {
      if (type == TE_SLICE_END) {
        if (!im_is_null(t, IM_T_SLICE, IM_SLICE_THREAD_INSTRUCTION_COUNT, slice))
          im_set_i64(t, IM_T_SLICE, IM_SLICE_THREAD_INSTRUCTION_DELTA, slice,
                     pb_sub(st.ti, im_get_i64(t, IM_T_SLICE, IM_SLICE_THREAD_INSTRUCTION_COUNT, slice)));
      } else {
        im_set_i64(t, IM_T_SLICE, IM_SLICE_THREAD_INSTRUCTION_COUNT, slice, st.ti);
      }
    }
    /* args: a pending set only for slices that have some, written when
     * the slice ends (§1.10.6: at its end event, at once for instants and
     * complete slices, at end of trace for slices never closed) */
    int passthrough = c->gen->has_td && rs.scope != PB_SCOPE_THREAD;
    im_args *a = passthrough || has_args(&e) ? im_slice_args(t, slice) : NULL;
    if (a) {
      te_ctx x = {.m = m, .c = c, .args = a};
      write_args(&x, &e);
      /* §3.6.6: legacy_event.passthrough_utid on global / process tracks */
      if (passthrough) {
        int64_t tu = im_thread_update(t, c->gen->td_tid, c->gen->td_pid);
        im_arg arg = {.key = im_cstr(t, "legacy_event.passthrough_utid"),
                      .flat_key = im_cstr(t, "legacy_event.passthrough_utid"), .type = IM_V_UINT,
                      .i = tu};
        if (tu >= 0) im_args_add(a, &arg, 1);
      }
    }
    if (type != TE_SLICE_BEGIN) im_slice_commit_args(t, slice);
  }
  flows(m, slice, &e);
  if (ids.has_bind && slice >= 0 && (ids.direction < 1 || ids.direction > 3)) {
    pb_stat(m, IM_STAT_FLOW_WITHOUT_DIRECTION);
  } else if (ids.has_bind && slice >= 0) {
    /* §3.6.8: legacy bind_id with flow_direction 1 in, 2 out, 3 in-out */
    if (ids.direction == 2) im_flow_begin(t, slice, FLOW_NS, ids.bind);
    else if (ids.direction == 3) im_flow_step(t, slice, FLOW_NS, ids.bind, (int64_t)ids.bind, IM_NONE);
    else im_flow_end(t, slice, FLOW_NS, ids.bind, (int64_t)ids.bind, IM_NONE, 0);
  }
  thread_counters(m, c->ts, utid, aux);
  extra_counters(m, c, aux);
}
