/*
 * proto_descriptor.c — TrackDescriptor, and the legacy Process/Thread
 * descriptors, in sorted order (TRACES.md §3.7): thread and process
 * identity and names, and the tracks TrackEvents land on.
 *
 * A uuid resolves (§3.7.3) to its own thread or process, else to the
 * nearest described ancestor's, else to the global scope. Its track is
 * made at the first event (§3.7.4): a thread's root slice track is the
 * thread's `thread_execution` track (shared with ftrace/atrace slices);
 * children of a thread or process merge with same-named siblings through
 * the cookie allocator (cookie = uuid), unless their merge behaviour
 * says otherwise; counters get `*_counter_track_event` tracks.
 */
#include <stdio.h>

#include "import/proto_import.h"

/* ---- descriptors ------------------------------------------------------------------ */

/* §3.7.3: the first uuid of a thread or process owns it; a second one means
 * the tid/pid was reused, so it gets a new row. */
static int64_t own_thread(pb_imp *m, pb_reservation *r) {
  int64_t utid = im_thread_update(m->t, r->tid, r->pid);
  if (utid < 0) return IM_NONE;
  int64_t owner = im_map_get(&m->uuid_by_utid, (uint64_t)utid);
  if (owner != IM_NONE && (uint64_t)owner != r->uuid) {
    int64_t upid = im_process(m->t, r->pid);
    utid = im_thread_new(m->t, r->tid, upid);
    if (utid < 0) return IM_NONE;
  }
  if (!im_map_put(&m->uuid_by_utid, (uint64_t)utid, (int64_t)r->uuid)) im_oom(m->t);
  return utid;
}

static int64_t own_process(pb_imp *m, pb_reservation *r) {
  int64_t upid = im_process(m->t, r->pid);
  if (upid < 0) return IM_NONE;
  int64_t owner = im_map_get(&m->uuid_by_upid, (uint64_t)upid);
  if (owner != IM_NONE && (uint64_t)owner != r->uuid) {
    upid = im_process_new(m->t, r->pid);
    if (upid < 0) return IM_NONE;
    im_thread_update(m->t, r->pid, r->pid);
  }
  if (!im_map_put(&m->uuid_by_upid, (uint64_t)upid, (int64_t)r->uuid)) im_oom(m->t);
  return upid;
}

static void resolve_own(pb_imp *m, pb_reservation *r) {
  if (r->resolved) return;
  r->resolved = 1;
  if (r->kind == 2) {
    r->utid = own_thread(m, r);
    r->upid = r->utid >= 0 ? im_thread_upid(m->t, r->utid) : IM_NONE;
  } else if (r->kind == 1) {
    r->upid = own_process(m, r);
  }
}

static uint32_t span_str(pb_imp *m, pb_span s) { return im_str(m->t, (const char *)s.p, s.n); }

void pb_parse_track_descriptor(pb_imp *m, const pb_pctx *c, pb_span td) {
  im_trace *t = m->t;
  pb_field f;
  if (!pb_find(td, 1, &f)) return;   /* counted when reserved */
  pb_reservation *r = pb_res_get(m, f.v);
  if (!r) return;
  pb_reader rd;
  pb_init_span(&rd, td);
  pb_span tname = {0}, pname = {0};
  int has_tname = 0, has_pname = 0, has_pstart = 0;
  int64_t pstart = 0;
  pb_span labels[16];
  int nlabels = 0;
  r->described = 1;
  r->first_on_seq |= c->first_on_seq;
  while (pb_next(&rd, &f)) {
    switch (f.id) {
    case 2: case 10: case 13:
      if (f.wt == PB_LEN) r->name = span_str(m, f.s);
      break;
    case 3: {   /* ProcessDescriptor: pid 1, process_name 6, start 7, labels 8 */
      pb_reader pr;
      pb_field pf;
      if (f.wt != PB_LEN) break;
      pb_init_span(&pr, f.s);
      while (pb_next(&pr, &pf)) {
        if (pf.id == 6 && pf.wt == PB_LEN) pname = pf.s, has_pname = 1;
        if (pf.id == 7) pstart = pb_i64(&pf), has_pstart = 1;
        if (pf.id == 8 && pf.wt == PB_LEN && nlabels < 16) labels[nlabels++] = pf.s;
      }
      break;
    }
    case 4: {   /* ThreadDescriptor: thread_name 5 */
      pb_field tf;
      if (f.wt == PB_LEN && pb_find(f.s, 5, &tf) && tf.wt == PB_LEN) tname = tf.s, has_tname = 1;
      break;
    }
    case 8: {   /* CounterDescriptor */
      pb_reader cr;
      pb_field cf;
      if (f.wt != PB_LEN) break;
      pb_init_span(&cr, f.s);
      while (pb_next(&cr, &cf)) {
        if (cf.id == 1) r->ctype = (int)cf.v;
        if (cf.id == 3) r->cunit = (int)cf.v;
        if (cf.id == 6 && cf.wt == PB_LEN) r->unit_name = span_str(m, cf.s);
        if (cf.id == 7 && cf.wt == PB_LEN) r->y_axis = span_str(m, cf.s);
        if (cf.id == 2 && cf.wt == PB_LEN && r->categories == IM_NULL_STR)
          r->categories = span_str(m, cf.s);
      }
      break;
    }
    case 9: r->disallow_merging = pb_bool(&f); break;
    case 11: r->child_ordering = (int)f.v; break;
    case 12: r->has_rank = 1, r->rank = pb_i32(&f); break;
    case 14:
      if (f.wt == PB_LEN) r->description = span_str(m, f.s);
      break;
    case 15: r->merge = (int)f.v; break;
    case 16:
      if (f.wt == PB_LEN) r->merge_key = span_str(m, f.s);
      break;
    case 17: r->has_merge_key_int = 1, r->merge_key_int = pb_i64(&f); break;
    case 18: r->is_state = 1; break;
    }
  }
  if (rd.bad) pb_stat(m, IM_STAT_PROTO_MALFORMED_FIELDS);
  resolve_own(m, r);
  /* §3.7.2: names and process details */
  if (r->kind == 2 && r->utid >= 0 && has_tname)
    im_thread_name(t, r->utid, span_str(m, tname), IM_TNAME_DESCRIPTOR);
  if (r->kind == 1 && r->upid >= 0) {
    if (has_pname) im_process_name(t, r->upid, span_str(m, pname), IM_PNAME_DESCRIPTOR);
    if (has_pstart && pstart > 0 && im_is_null(t, IM_T_PROCESS, IM_PROCESS_START_TS, r->upid))
      im_set_i64(t, IM_T_PROCESS, IM_PROCESS_START_TS, r->upid, pstart);
    im_args *a = nlabels ? im_process_args(t, r->upid) : NULL;
    for (int i = 0; a && i < nlabels; i++) {
      char key[48];
      snprintf(key, sizeof key, "chrome.process_label[%d]", i);
      im_arg arg = {.key = im_cstr(t, key), .flat_key = im_cstr(t, "chrome.process_label"),
                    .type = IM_V_STRING, .s = span_str(m, labels[i])};
      im_args_add(a, &arg, 0);
    }
  }
}

/* Legacy ProcessDescriptor packet (43): pid 1, process_name 6. */
void pb_parse_legacy_process(pb_imp *m, const pb_pctx *c, pb_span pd) {
  pb_reader r;
  pb_field f;
  int64_t pid = -1;
  pb_span name = {0};
  int has_name = 0;
  (void)c;
  pb_init_span(&r, pd);
  while (pb_next(&r, &f)) {
    if (f.id == 1) pid = pb_i32(&f);
    if (f.id == 6 && f.wt == PB_LEN) name = f.s, has_name = 1;
  }
  if (pid < 0) return;
  int64_t upid = im_process(m->t, pid);
  if (upid >= 0 && has_name) im_process_name(m->t, upid, span_str(m, name), IM_PNAME_DESCRIPTOR);
}

/* Legacy ThreadDescriptor packet (44): pid 1, tid 2, thread_name 5. */
void pb_parse_legacy_thread(pb_imp *m, const pb_pctx *c, pb_span td) {
  pb_reader r;
  pb_field f;
  int64_t pid = 0, tid = 0;
  pb_span name = {0};
  int has_name = 0;
  (void)c;
  pb_init_span(&r, td);
  while (pb_next(&r, &f)) {
    if (f.id == 1) pid = pb_i32(&f);
    if (f.id == 2) tid = pb_i32(&f);
    if (f.id == 5 && f.wt == PB_LEN) name = f.s, has_name = 1;
  }
  int64_t utid = im_thread_update(m->t, tid, pid);
  if (utid >= 0 && has_name) im_thread_name(m->t, utid, span_str(m, name), IM_TNAME_DESCRIPTOR);
}

/* ---- resolution (§3.7.3) ---------------------------------------------------------------- */

pb_resolved pb_resolve_uuid(pb_imp *m, uint64_t uuid) {
  pb_resolved rs = {.ok = 1, .scope = PB_SCOPE_GLOBAL, .is_root = 1, .utid = IM_NONE,
                    .upid = IM_NONE};
  pb_reservation *r = pb_res_get(m, uuid);
  rs.r = r;
  if (!r) return rs;   /* never described: an unnamed global root track */
  resolve_own(m, r);
  if (r->kind == 2 && r->utid >= 0) {
    rs.scope = PB_SCOPE_THREAD, rs.utid = r->utid, rs.upid = r->upid;
    return rs;
  }
  if (r->kind == 1 && r->upid >= 0) {
    rs.scope = PB_SCOPE_PROCESS, rs.upid = r->upid;
    return rs;
  }
  rs.is_root = r->parent == 0;
  uint64_t p = r->parent;
  for (int depth = 0; p; depth++) {
    pb_reservation *a = pb_res_get(m, p);
    if (!a || depth > 100 || p == uuid) {
      pb_stat(m, IM_STAT_TRACK_HIERARCHY_MISSING_UUID);
      rs.ok = 0;
      return rs;
    }
    resolve_own(m, a);
    if (a->kind == 2 && a->utid >= 0) {
      rs.scope = PB_SCOPE_THREAD, rs.utid = a->utid, rs.upid = a->upid;
      return rs;
    }
    if (a->kind == 1 && a->upid >= 0) {
      rs.scope = PB_SCOPE_PROCESS, rs.upid = a->upid;
      return rs;
    }
    p = a->parent;
  }
  return rs;
}

/* ---- tracks (§3.7.4–5) --------------------------------------------------------------------- */

static im_args *source_args(pb_imp *m, const pb_reservation *r, uint64_t uuid, int is_root) {
  im_trace *t = m->t;
  im_args *a = m->scratch;
  im_args_clear(a);
  im_args_string(a, im_cstr(t, "source"), im_cstr(t, "descriptor"));
  im_args_int(a, im_cstr(t, "trace_id"), (int64_t)uuid);
  im_args_bool(a, im_cstr(t, "is_root_in_scope"), is_root);
  if (!r) return a;
  if (r->categories != IM_NULL_STR) im_args_string(a, im_cstr(t, "category"), r->categories);
  if (r->ctype == 1 || r->ctype == 2)
    im_args_string(a, im_cstr(t, "builtin_counter_type"),
                   im_cstr(t, r->ctype == 1 ? "COUNTER_THREAD_TIME_NS"
                                            : "COUNTER_THREAD_INSTRUCTION_COUNT"));
  if (r->y_axis != IM_NULL_STR) im_args_string(a, im_cstr(t, "y_axis_share_key"), r->y_axis);
  if (r->first_on_seq) im_args_bool(a, im_cstr(t, "has_first_packet_on_sequence"), 1);
  static const char *const ORD[] = {NULL, "lexicographic", "chronological", "explicit"};
  if (r->child_ordering >= 1 && r->child_ordering <= 3)
    im_args_string(a, im_cstr(t, "child_ordering"), im_cstr(t, ORD[r->child_ordering]));
  if (r->has_rank) im_args_int(a, im_cstr(t, "sibling_order_rank"), r->rank);
  if (r->description != IM_NULL_STR) im_args_string(a, im_cstr(t, "description"), r->description);
  return a;
}

/* parent_id: the parent's track unless the parent is a thread/process root. */
static int64_t parent_track(pb_imp *m, const pb_reservation *r, int scope) {
  if (!r || !r->parent) return IM_NONE;
  pb_reservation *p = pb_res_get(m, r->parent);
  if (!p) return IM_NONE;
  if (scope != PB_SCOPE_GLOBAL && (p->kind == 1 || p->kind == 2)) return IM_NONE;
  if (p->track >= 0) return p->track;
  pb_resolved prs = pb_resolve_uuid(m, r->parent);
  if (!prs.ok) return IM_NONE;
  return pb_slice_track(m, r->parent, &prs, p->name, 0);
}

static void scope_dims(im_track_spec *s, const pb_resolved *rs) {
  if (rs->scope == PB_SCOPE_THREAD) im_track_dim_int(s, "utid", rs->utid);
  if (rs->scope == PB_SCOPE_PROCESS) im_track_dim_int(s, "upid", rs->upid);
}

static const char *scoped(int scope, const char *thread, const char *process, const char *global) {
  return scope == PB_SCOPE_THREAD ? thread : scope == PB_SCOPE_PROCESS ? process : global;
}

int64_t pb_slice_track(pb_imp *m, uint64_t uuid, const pb_resolved *rs, uint32_t name, int delta) {
  im_trace *t = m->t;
  pb_reservation *r = rs->r;
  if (r && r->track >= 0) return r->track;
  if (!r && !uuid && m->default_track >= 0) return m->default_track;
  uint32_t tname = r && r->name != IM_NULL_STR ? r->name : IM_NULL_STR;
  im_track_spec s;
  /* a thread's root: the thread's own track */
  if (rs->scope == PB_SCOPE_THREAD && rs->is_root && !(r && r->disallow_merging)) {
    int64_t tr = im_thread_track(t, rs->utid);
    if (r) r->track = tr;
    return tr;
  }
  int merged = !rs->is_root && r && (r->merge == 0 || r->merge == 1 || r->merge == 3) && !r->is_state;
  if (merged) {
    im_track_spec_init(&s, scoped(rs->scope, "thread_merged_track_event", "process_merged_track_event",
                                  "global_merged_track_event"),
                       IM_EV_SLICE);
    scope_dims(&s, rs);
    im_track_dim_int(&s, "parent_track_uuid", (int64_t)r->parent);
    if (r->merge == 3) {
      im_track_dim_str(&s, "merge_key_type", im_cstr(t, "key"));
      if (r->has_merge_key_int) im_track_dim_int(&s, "merge_key_value", r->merge_key_int);
      else im_track_dim_str(&s, "merge_key_value", r->merge_key);
    } else {
      im_track_dim_str(&s, "merge_key_type", im_cstr(t, "name"));
      im_track_dim_str(&s, "merge_key_value", tname);
    }
    s.parent_id = parent_track(m, r, rs->scope);
    s.source = source_args(m, r, uuid, 0);
    int64_t tr = im_async_track(t, &s, (im_cookie){uuid, 0x7e}, delta,
                                tname != IM_NULL_STR ? tname : name);
    im_args_clear(m->scratch);
    return tr;
  }
  im_track_spec_init(&s, scoped(rs->scope, "thread_track_event", "process_track_event",
                                "global_track_event"),
                     IM_EV_SLICE);
  scope_dims(&s, rs);
  im_track_dim_int(&s, "track_uuid", (int64_t)uuid);
  if (!r && !uuid) tname = im_cstr(t, "Default Track");
  s.name = tname != IM_NULL_STR || rs->is_root ? tname : name;
  s.parent_id = parent_track(m, r, rs->scope);
  s.source = source_args(m, r, uuid, rs->is_root);
  int64_t tr = im_track(t, &s);
  im_args_clear(m->scratch);
  if (r) r->track = tr;
  else if (!uuid) m->default_track = tr;
  return tr;
}

int64_t pb_state_track(pb_imp *m, uint64_t uuid) {
  pb_resolved rs = pb_resolve_uuid(m, uuid);
  if (!rs.ok) return IM_NONE;
  pb_reservation *r = rs.r;
  if (r && r->state_track >= 0) return r->state_track;
  im_track_spec s;
  im_track_spec_init(&s, scoped(rs.scope, "thread_state_track_event", "process_state_track_event",
                                "global_state_track_event"),
                     IM_EV_STATE);
  scope_dims(&s, &rs);
  im_track_dim_int(&s, "track_uuid", (int64_t)uuid);
  s.name = r ? r->name : IM_NULL_STR;
  s.parent_id = parent_track(m, r, rs.scope);
  s.source = source_args(m, r, uuid, rs.is_root);
  int64_t tr = im_track(m->t, &s);
  im_args_clear(m->scratch);
  if (r) r->state_track = tr;
  return tr;
}

int64_t pb_counter_track(pb_imp *m, uint64_t uuid) {
  im_trace *t = m->t;
  pb_reservation *r = pb_res_get(m, uuid);
  if (!r || !r->is_counter) {
    pb_stat(m, IM_STAT_TRACK_EVENT_COUNTER_INVALID_TRACK_UUID);
    return IM_NONE;
  }
  if (r->track >= 0) return r->track;
  pb_resolved rs = pb_resolve_uuid(m, uuid);
  if (!rs.ok) return IM_NONE;
  /* a counter's own thread/process comes from its parent */
  im_track_spec s;
  im_track_spec_init(&s, scoped(rs.scope, "thread_counter_track_event",
                                "process_counter_track_event", "global_counter_track_event"),
                     IM_EV_COUNTER);
  scope_dims(&s, &rs);
  im_track_dim_int(&s, "track_uuid", (int64_t)uuid);
  s.name = r->name;
  if (s.name == IM_NULL_STR && r->ctype == 1) s.name = im_cstr(t, "thread_time");
  if (s.name == IM_NULL_STR && r->ctype == 2) s.name = im_cstr(t, "thread_instruction_count");
  static const char *const UNIT[] = {NULL, "ns", "count", "bytes"};
  if (r->cunit >= 1 && r->cunit <= 3) s.unit = im_cstr(t, UNIT[r->cunit]);
  else if (r->ctype == 1) s.unit = im_cstr(t, "ns");
  else if (r->ctype == 2) s.unit = im_cstr(t, "count");
  else s.unit = r->unit_name;
  s.description = r->description;
  s.parent_id = parent_track(m, r, rs.scope);
  s.source = source_args(m, r, uuid, rs.is_root);
  r->track = im_track(t, &s);
  im_args_clear(m->scratch);
  return r->track;
}
