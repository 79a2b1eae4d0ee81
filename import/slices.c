/*
 * slices.c — the slice nesting engine (TRACES.md §1.17) and the flow
 * engine (§1.19), shared by every importer.
 *
 * Each track keeps a stack of entries. Finished entries (complete slices,
 * instants, ended B slices) stay on it until a later begin, complete or
 * end on the same track pops them (close-stack), so an instant nests
 * under the slice open at its ts and flows bind to the topmost slice even
 * after it ended. A slice's args stay pending until the importer commits
 * them (at E, or right after a complete slice) or the end of trace.
 */
#include <stdlib.h>

#include "trace.h"

enum { MAX_DEPTH = 512 };

static int64_t slice_ts(const im_trace *t, int64_t s) {
  return ((const int64_t *)t->tabs[IM_T_SLICE].data[IM_SLICE_TS])[s];
}

static void set_dur(im_trace *t, im_stack_entry *e, int64_t dur) {
  e->dur = dur;
  im_set_i64(t, IM_T_SLICE, IM_SLICE_DUR, e->slice, dur);
}

/* §1.17.1 a–c. new_dur -1: the new event is a begin or an end. */
static void close_stack(im_trace *t, im_track_state *st, int64_t new_ts, int64_t new_dur) {
  int open_above = 0;
  for (int64_t i = st->stack.n - 1; i >= 0; i--) {
    im_stack_entry *e = &st->stack.v[i];
    if (e->dur < 0) {
      open_above = 1;
      continue;
    }
    int64_t end = e->ts + e->dur;
    if (open_above) {
      if (new_ts > end) {
        /* A parent ended while children were still open: they end with it. */
        for (int64_t j = i + 1; j < st->stack.n; j++)
          if (st->stack.v[j].dur < 0) set_dur(t, &st->stack.v[j], end - st->stack.v[j].ts);
        st->stack.n = i;
        open_above = 0;
        im_stat_add(t, IM_STAT_MISPLACED_END_EVENT, 1);
      }
      continue;
    }
    if (end < new_ts || (end == new_ts && !(e->dur == 0 && new_dur == 0))) {
      st->stack.n = i;
      continue;
    }
    break;   /* it contains the new event, and so do the ones below */
  }
}

/* Appends the slice row and pushes it. */
static int64_t push_slice(im_trace *t, int64_t track, im_track_state *st, int64_t ts, int64_t dur,
                          uint32_t cat, uint32_t name) {
  int64_t depth = st->stack.n;
  if (depth >= MAX_DEPTH) {
    im_stat_add(t, IM_STAT_SLICE_MAX_DEPTH_EXCEEDED, 1);
    return IM_NONE;
  }
  int64_t s = im_append(t, IM_T_SLICE);
  if (s < 0) return IM_NONE;
  im_tab *tab = im__tab(t, IM_T_SLICE);
  im__put_i64(tab, IM_SLICE_TS, s, ts);
  im__put_i64(tab, IM_SLICE_DUR, s, dur);
  im__put_u32(tab, IM_SLICE_TRACK_ID, s, (uint32_t)track);
  if (cat != IM_NULL_STR) im__put_u32(tab, IM_SLICE_CATEGORY, s, cat);
  if (name != IM_NULL_STR) im__put_u32(tab, IM_SLICE_NAME, s, name);
  im__put_u32(tab, IM_SLICE_DEPTH, s, (uint32_t)depth);
  if (depth) im__put_u32(tab, IM_SLICE_PARENT_ID, s, (uint32_t)st->stack.v[depth - 1].slice);
  if (!IM_PUSH(t, st->stack, ((im_stack_entry){.slice = s, .ts = ts, .dur = dur}))) return IM_NONE;
  /* JSON v1 flow ends waiting for the next slice on this track. */
  for (int64_t i = 0; i < st->next_flows.n; i++) {
    im_flow_pending *f = &st->next_flows.v[i];
    im_flow_end(t, s, f->ns, f->id, f->trace_id, f->arg_set_id, 0);
  }
  st->next_flows.n = 0;
  return s;
}

int64_t im_slice_begin(im_trace *t, int64_t track, int64_t ts, uint32_t cat, uint32_t name) {
  im_track_state *st = track < 0 || t->failed ? NULL : im__track_state(t, track);
  if (!st) return IM_NONE;
  close_stack(t, st, ts, -1);
  return push_slice(t, track, st, ts, -1, cat, name);
}

int64_t im_slice_complete(im_trace *t, int64_t track, int64_t ts, int64_t dur, uint32_t cat,
                          uint32_t name, int *overlap_out) {
  if (overlap_out) *overlap_out = 0;
  im_track_state *st = track < 0 || t->failed ? NULL : im__track_state(t, track);
  if (!st) return IM_NONE;
  if (dur < 0) {
    im_stat_add(t, IM_STAT_SLICE_NEGATIVE_DURATION, 1);
    return IM_NONE;
  }
  close_stack(t, st, ts, dur);
  /* §1.17.1d: a finished entry ending strictly inside the new slice. */
  int64_t end_new = ts + dur;
  for (int64_t i = st->stack.n - 1; i >= 0; i--) {
    const im_stack_entry *e = &st->stack.v[i];
    if (e->dur < 0) continue;
    int64_t end = e->ts + e->dur;
    if (ts < end && end < end_new) {
      if (overlap_out) *overlap_out = 1;
      else im_stat_add(t, IM_STAT_SLICE_DROP_OVERLAPPING_COMPLETE_EVENT, 1);
      return IM_NONE;
    }
  }
  return push_slice(t, track, st, ts, dur, cat, name);
}

int64_t im_slice_instant(im_trace *t, int64_t track, int64_t ts, uint32_t cat, uint32_t name) {
  return im_slice_complete(t, track, ts, 0, cat, name, NULL);
}

int64_t im_slice_end(im_trace *t, int64_t track, int64_t ts, uint32_t cat, uint32_t name) {
  im_track_state *st = track < 0 || t->failed ? NULL : im__track_state(t, track);
  if (!st) return IM_NONE;
  close_stack(t, st, ts, -1);
  for (int64_t i = st->stack.n - 1; i >= 0; i--) {
    im_stack_entry *e = &st->stack.v[i];
    if (e->dur >= 0) continue;
    uint32_t ecat = im_get_str(t, IM_T_SLICE, IM_SLICE_CATEGORY, e->slice);
    uint32_t ename = im_get_str(t, IM_T_SLICE, IM_SLICE_NAME, e->slice);
    if (cat != IM_NULL_STR && cat != ecat) continue;   /* also: never matches a NULL category */
    if (name != IM_NULL_STR && ename != IM_NULL_STR && name != ename) continue;
    int64_t s = e->slice;
    set_dur(t, e, ts - e->ts);
    if (i == st->stack.n - 1) st->stack.n--;
    return s;
  }
  return IM_NONE;
}

int64_t im_slice_top(const im_trace *t, int64_t track) {
  if (track < 0 || track >= t->track_state.n) return IM_NONE;
  const im_track_state *st = &t->track_state.v[track];
  return st->stack.n ? st->stack.v[st->stack.n - 1].slice : IM_NONE;
}

/* ---- pending args: slice id → im_args, linear probing with deletion --------------- */

static uint64_t pend_slot(const im_trace *t, int64_t slice) {
  return ((uint64_t)slice * 0x9e3779b97f4a7c15ull >> 17) & (uint64_t)(t->cpending - 1);
}

static struct im_pending *pend_find(const im_trace *t, int64_t slice) {
  if (!t->cpending) return NULL;
  for (uint64_t i = pend_slot(t, slice);; i = (i + 1) & (uint64_t)(t->cpending - 1)) {
    struct im_pending *p = &t->pending[i];
    if (!p->args) return NULL;
    if (p->slice == slice) return p;
  }
}

static int pend_put(im_trace *t, int64_t slice, im_args *a) {
  if ((t->npending + 1) * 2 > t->cpending) {
    int64_t cap = t->cpending ? t->cpending * 2 : 64, old = t->cpending;
    struct im_pending *o = t->pending, *n = calloc((size_t)cap, sizeof *n);
    if (!n) return 0;
    t->pending = n;
    t->cpending = cap;
    for (int64_t i = 0; i < old; i++)
      if (o[i].args) {
        uint64_t k = pend_slot(t, o[i].slice);
        while (n[k].args) k = (k + 1) & (uint64_t)(cap - 1);
        n[k] = o[i];
      }
    free(o);
  }
  uint64_t k = pend_slot(t, slice);
  while (t->pending[k].args) k = (k + 1) & (uint64_t)(t->cpending - 1);
  t->pending[k] = (struct im_pending){slice, a};
  t->npending++;
  return 1;
}

/* Backward-shift deletion: later entries of the run move into the hole
 * when their home slot is not between the hole and them. */
static void pend_del(im_trace *t, struct im_pending *p) {
  uint64_t mask = (uint64_t)(t->cpending - 1), hole = (uint64_t)(p - t->pending);
  for (uint64_t i = (hole + 1) & mask; t->pending[i].args; i = (i + 1) & mask) {
    uint64_t home = pend_slot(t, t->pending[i].slice);
    if (((i - home) & mask) >= ((i - hole) & mask)) {
      t->pending[hole] = t->pending[i];
      hole = i;
    }
  }
  t->pending[hole] = (struct im_pending){0, NULL};
  t->npending--;
}

im_args *im_slice_args(im_trace *t, int64_t slice) {
  if (slice < 0 || slice >= im_rows(t, IM_T_SLICE) || t->failed) return NULL;
  if (!im_is_null(t, IM_T_SLICE, IM_SLICE_ARG_SET_ID, slice)) return NULL;
  struct im_pending *p = pend_find(t, slice);
  if (p) return p->args;
  im_args *a = im_args_new(t);
  if (!a) return NULL;
  if (!pend_put(t, slice, a)) {
    im_args_free(a);
    return im_oom(t), NULL;
  }
  return a;
}

void im_slice_commit_args(im_trace *t, int64_t slice) {
  struct im_pending *p = slice < 0 ? NULL : pend_find(t, slice);
  if (!p) return;
  im_args *a = p->args;
  pend_del(t, p);
  int64_t set = im_args_commit(t, a);
  im_args_free(a);
  if (set != IM_NONE) im_set_i64(t, IM_T_SLICE, IM_SLICE_ARG_SET_ID, slice, set);
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* End of trace: open slices keep dur -1; their args are written now, in
 * slice order. */
void im__slices_flush(im_trace *t) {
  int64_t n = 0, *ids = malloc((size_t)(t->npending ? t->npending : 1) * sizeof *ids);
  if (!ids) {
    im_oom(t);
    return;
  }
  for (int64_t i = 0; i < t->cpending; i++)
    if (t->pending[i].args) ids[n++] = t->pending[i].slice;
  qsort(ids, (size_t)n, sizeof *ids, cmp_i64);
  for (int64_t i = 0; i < n; i++) im_slice_commit_args(t, ids[i]);
  free(ids);
}

/* ---- flows (§1.19) ----------------------------------------------------------- */

static uint64_t flow_hash(uint64_t ns, uint64_t id) { return im_hash(im_hash(0xf10, ns), id); }

static im_flow_rec *flow_find(im_trace *t, uint64_t ns, uint64_t id) {
  for (int64_t k = im_map_get(&t->flow_by_hash, flow_hash(ns, id)); k != IM_NONE;
       k = t->flows.v[k].next)
    if (t->flows.v[k].ns == ns && t->flows.v[k].id == id) return &t->flows.v[k];
  return NULL;
}

void im_flow_emit(im_trace *t, int64_t a, int64_t b, int64_t trace_id, int64_t arg_set_id) {
  if (a < 0 || b < 0) return;
  int64_t out = a, in = b;
  if (slice_ts(t, b) < slice_ts(t, a)) out = b, in = a;
  int64_t row = im_append(t, IM_T_FLOW);
  if (row < 0) return;
  im_set_i64(t, IM_T_FLOW, IM_FLOW_SLICE_OUT, row, out);
  im_set_i64(t, IM_T_FLOW, IM_FLOW_SLICE_IN, row, in);
  im_set_i64(t, IM_T_FLOW, IM_FLOW_TRACE_ID, row, trace_id);
  if (arg_set_id != IM_NONE) im_set_i64(t, IM_T_FLOW, IM_FLOW_ARG_SET_ID, row, arg_set_id);
}

void im_flow_begin(im_trace *t, int64_t slice, uint64_t ns, uint64_t id) {
  if (slice < 0 || t->failed) return;
  im_flow_rec *r = flow_find(t, ns, id);
  if (r && r->live) {
    im_stat_add(t, IM_STAT_FLOW_DUPLICATE_ID, 1);
    return;
  }
  if (r) {
    r->slice = slice;
    r->live = 1;
    return;
  }
  uint64_t h = flow_hash(ns, id);
  im_flow_rec nr = {.ns = ns, .id = id, .slice = slice, .live = 1,
                    .next = im_map_get(&t->flow_by_hash, h)};
  if (IM_PUSH(t, t->flows, nr) && !im_map_put(&t->flow_by_hash, h, t->flows.n - 1)) im_oom(t);
}

void im_flow_step(im_trace *t, int64_t slice, uint64_t ns, uint64_t id, int64_t trace_id,
                  int64_t arg_set_id) {
  if (slice < 0 || t->failed) return;
  im_flow_rec *r = flow_find(t, ns, id);
  if (!r || !r->live) {
    im_stat_add(t, IM_STAT_FLOW_STEP_WITHOUT_START, 1);
    return;
  }
  im_flow_emit(t, r->slice, slice, trace_id, arg_set_id);
  r->slice = slice;
}

void im_flow_end(im_trace *t, int64_t slice, uint64_t ns, uint64_t id, int64_t trace_id,
                 int64_t arg_set_id, int close) {
  if (slice < 0 || t->failed) return;
  im_flow_rec *r = flow_find(t, ns, id);
  if (!r || !r->live) {
    im_stat_add(t, IM_STAT_FLOW_END_WITHOUT_START, 1);
    return;
  }
  im_flow_emit(t, r->slice, slice, trace_id, arg_set_id);
  if (close) r->live = 0;
}

void im_flow_end_next(im_trace *t, int64_t track, uint64_t ns, uint64_t id, int64_t trace_id,
                      int64_t arg_set_id) {
  im_track_state *st = track < 0 || t->failed ? NULL : im__track_state(t, track);
  if (!st) return;
  im_flow_pending f = {.ns = ns, .id = id, .trace_id = trace_id, .arg_set_id = arg_set_id};
  IM_PUSH(t, st->next_flows, f);
}

/* ---- v1 flows (JSON s/t/f, TrackEvent legacy s/t/f) ---------------------------- */

enum { V1_NS = 1 };   /* the flow key space of v1 trace_ids */

/* The trace_id of v1 key (id, cat, name): 0, 1, … in order of first use. */
static int64_t v1_trace_id(im_trace *t, uint64_t id, uint32_t cat, uint32_t name) {
  uint64_t h = im_hash(im_hash(im_hash(0xf11, id), cat), name);
  for (int64_t k = im_map_get(&t->v1_by_hash, h); k != IM_NONE; k = t->v1_keys.v[k].next) {
    const im_v1_key *e = &t->v1_keys.v[k];
    if (e->id == id && e->cat == cat && e->name == name) return k;
  }
  im_v1_key nk = {id, cat, name, im_map_get(&t->v1_by_hash, h)};
  if (!IM_PUSH(t, t->v1_keys, nk) || !im_map_put(&t->v1_by_hash, h, t->v1_keys.n - 1))
    return im_oom(t), IM_NONE;
  return t->v1_keys.n - 1;
}

void im_flow_v1(im_trace *t, int64_t track, int phase, uint64_t id, uint32_t cat, uint32_t name,
                int bind_enclosing) {
  if (t->failed || track < 0) return;
  int64_t trace_id = v1_trace_id(t, id, cat, name);
  if (trace_id < 0) return;
  int64_t set = IM_NONE;
  if (phase != 's') {   /* a begin emits no row */
    im_args *a = im_args_new(t);
    im_args_string(a, im_cstr(t, "name"), name);
    im_args_string(a, im_cstr(t, "cat"), cat);
    set = im_args_commit(t, a);
    im_args_free(a);
  }
  if (phase == 'f' && !bind_enclosing) {
    im_flow_end_next(t, track, V1_NS, (uint64_t)trace_id, trace_id, set);
    return;
  }
  int64_t s = im_slice_top(t, track);
  if (s == IM_NONE) {
    im_stat_add(t, IM_STAT_FLOW_NO_ENCLOSING_SLICE, 1);
    return;
  }
  if (phase == 's') im_flow_begin(t, s, V1_NS, (uint64_t)trace_id);
  else if (phase == 't') im_flow_step(t, s, V1_NS, (uint64_t)trace_id, trace_id, set);
  else im_flow_end(t, s, V1_NS, (uint64_t)trace_id, trace_id, set, 0);
}
