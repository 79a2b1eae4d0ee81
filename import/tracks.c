/*
 * tracks.c — tracks (TRACES.md §1.5) and the async / overlap track
 * allocator (§1.18).
 *
 * A track is interned by (type, dimensions): the dimensions are an arg set
 * like any other (deduplicated with all sets), so two specs name the same
 * track exactly when their type and dimension set match. The dimensions
 * utid, upid and cpu also fill the hidden columns of __intrinsic_track
 * that the typed views (thread_track, cpu_counter_track …) filter on.
 *
 * The allocator keeps sets of interchangeable tracks, keyed by (type,
 * dims); a set's tracks get one more dimension, track_compressor_idx, and
 * track_group_id = the set's number. Cookie mode binds a cookie to the
 * first idle track; overlap mode finds the first track where a slice
 * nests.
 */
#include <stdlib.h>

#include "trace.h"

void im_track_spec_init(im_track_spec *s, const char *type, im_event_type ev) {
  memset(s, 0, sizeof *s);
  s->type = type;
  s->event = ev;
  s->name = s->unit = s->description = IM_NULL_STR;
  s->parent_id = IM_NONE;
}

void im_track_dim_int(im_track_spec *s, const char *name, int64_t v) {
  if (s->ndims == IM_MAX_DIMS) return;
  s->dims[s->ndims++] = (im_dim){.name = name, .is_str = 0, .i = v, .s = IM_NULL_STR};
}

void im_track_dim_str(im_track_spec *s, const char *name, uint32_t v) {
  if (s->ndims == IM_MAX_DIMS) return;
  s->dims[s->ndims++] = (im_dim){.name = name, .is_str = 1, .s = v};
}

uint64_t im__spec_hash(const im_track_spec *s, int with_dims) {
  uint64_t h = im_hash_bytes(0x7261636b, s->type, strlen(s->type));
  if (!with_dims) return h;
  for (int d = 0; d < s->ndims; d++) {
    h = im_hash_bytes(h, s->dims[d].name, strlen(s->dims[d].name));
    h = im_hash(h, s->dims[d].is_str ? s->dims[d].s : (uint64_t)s->dims[d].i);
  }
  return h;
}

int im__spec_equal(const im_track_spec *a, const im_track_spec *b) {
  if (strcmp(a->type, b->type) || a->ndims != b->ndims) return 0;
  for (int d = 0; d < a->ndims; d++) {
    const im_dim *x = &a->dims[d], *y = &b->dims[d];
    if (strcmp(x->name, y->name) || x->is_str != y->is_str) return 0;
    if (x->is_str ? x->s != y->s : x->i != y->i) return 0;
  }
  return 1;
}

/* Copies a spec so that it outlives the caller's strings: names are
 * interned (pool bytes never move). */
static void spec_keep(im_trace *t, im_track_spec *dst, const im_track_spec *src) {
  *dst = *src;
  dst->type = rt_str_get(t->sp, im_cstr(t, src->type), NULL);
  for (int d = 0; d < src->ndims; d++)
    dst->dims[d].name = rt_str_get(t->sp, im_cstr(t, src->dims[d].name), NULL);
  dst->source = NULL;
}

int64_t im__dims_set(im_trace *t, const im_track_spec *s) {
  if (!s->ndims) return IM_NONE;
  im_args *a = im_args_new(t);
  if (!a) return IM_NONE;
  for (int d = 0; d < s->ndims; d++) {
    uint32_t key = im_cstr(t, s->dims[d].name);
    if (s->dims[d].is_str) im_args_string(a, key, s->dims[d].s);
    else im_args_int(a, key, s->dims[d].i);
  }
  int64_t set = im_args_commit(t, a);
  im_args_free(a);
  return set;
}

im_track_state *im__track_state(im_trace *t, int64_t track) {
  while (t->track_state.n <= track)
    if (!IM_PUSH(t, t->track_state, (im_track_state){0})) return NULL;
  return &t->track_state.v[track];
}

static const char *event_name(im_event_type ev) {
  return ev == IM_EV_COUNTER ? "counter" : ev == IM_EV_STATE ? "state" : "slice";
}

int64_t im__track_create(im_trace *t, const im_track_spec *spec, int64_t source_set,
                         uint64_t hash) {
  int64_t dims = im__dims_set(t, spec);
  int64_t id = im_append(t, IM_T_TRACK);
  if (id < 0) return IM_NONE;
  im_table_id T = IM_T_TRACK;
  im_set_str(t, T, IM_TRACK_NAME, id, spec->name);
  im_set_str(t, T, IM_TRACK_TYPE, id, im_cstr(t, spec->type));
  if (dims != IM_NONE) im_set_i64(t, T, IM_TRACK_DIMENSION_ARG_SET_ID, id, dims);
  if (spec->parent_id != IM_NONE) im_set_i64(t, T, IM_TRACK_PARENT_ID, id, spec->parent_id);
  if (source_set != IM_NONE) im_set_i64(t, T, IM_TRACK_SOURCE_ARG_SET_ID, id, source_set);
  im_set_i64(t, T, IM_TRACK_MACHINE_ID, id, 0);
  im_set_str(t, T, IM_TRACK_EVENT_TYPE, id, im_cstr(t, event_name(spec->event)));
  im_set_str(t, T, IM_TRACK_COUNTER_UNIT, id, spec->unit);
  im_set_str(t, T, IM_TRACK_DESCRIPTION, id, spec->description);
  for (int d = 0; d < spec->ndims; d++) {
    const im_dim *dm = &spec->dims[d];
    if (dm->is_str) continue;
    if (!strcmp(dm->name, "utid")) im_set_i64(t, T, IM_TRACK_UTID, id, dm->i);
    else if (!strcmp(dm->name, "upid")) im_set_i64(t, T, IM_TRACK_UPID, id, dm->i);
    else if (!strcmp(dm->name, "cpu")) {
      im_set_i64(t, T, IM_TRACK_CPU, id, dm->i);
      im_cpu_seen(t, dm->i);
    }
  }
  if (!IM_PUSH(t, t->track_hash, hash) || !IM_PUSH(t, t->track_next, IM_NONE)) return IM_NONE;
  return id;
}

/* Is track `id` the one spec names? (type, then the dimension set.) */
static int track_is(im_trace *t, int64_t id, const im_track_spec *spec) {
  size_t n;
  const char *type = rt_str_get(t->sp, im_get_str(t, IM_T_TRACK, IM_TRACK_TYPE, id), &n);
  if (strlen(spec->type) != n || memcmp(type, spec->type, n)) return 0;
  int64_t have = im_get_i64(t, IM_T_TRACK, IM_TRACK_DIMENSION_ARG_SET_ID, id);
  /* Dimension sets are deduplicated: equal dims give the same set id
   * (committing an existing set writes nothing). */
  return have == im__dims_set(t, spec);
}

int64_t im_track(im_trace *t, const im_track_spec *spec) {
  if (t->failed) return IM_NONE;
  uint64_t h = im__spec_hash(spec, 1);
  for (int64_t id = im_map_get(&t->track_by_hash, h); id != IM_NONE; id = t->track_next.v[id])
    if (t->track_hash.v[id] == h && track_is(t, id, spec)) return id;
  int64_t source = spec->source ? im_args_commit(t, spec->source) : IM_NONE;
  int64_t id = im__track_create(t, spec, source, h);
  if (id < 0) return IM_NONE;
  t->track_next.v[id] = im_map_get(&t->track_by_hash, h);
  if (!im_map_put(&t->track_by_hash, h, id)) return im_oom(t), IM_NONE;
  return id;
}

int64_t im_thread_track(im_trace *t, int64_t utid) {
  if (utid < 0 || t->failed) return IM_NONE;
  while (t->thread_track.n <= utid)
    if (!IM_PUSH(t, t->thread_track, IM_NONE)) return IM_NONE;
  if (t->thread_track.v[utid] != IM_NONE) return t->thread_track.v[utid];
  im_track_spec s;
  im_track_spec_init(&s, "thread_execution", IM_EV_SLICE);
  im_track_dim_int(&s, "utid", utid);
  return t->thread_track.v[utid] = im_track(t, &s);
}

int64_t im_cpu_counter_track(im_trace *t, const char *type, const char *name, int64_t cpu) {
  im_track_spec s;
  im_track_spec_init(&s, type, IM_EV_COUNTER);
  im_track_dim_int(&s, "cpu", cpu);
  s.name = im_cstr(t, name);
  return im_track(t, &s);
}

void im_track_set_name(im_trace *t, int64_t track, uint32_t name) {
  im_set_str(t, IM_T_TRACK, IM_TRACK_NAME, track, name);
}

/* ---- deferred tracks --------------------------------------------------------- */

#define DEFERRED_BASE ((int64_t)1 << 31)

int64_t im_track_deferred(im_trace *t, const im_track_spec *spec) {
  if (t->failed) return IM_NONE;
  uint64_t h = im__spec_hash(spec, 1);
  for (int64_t k = im_map_get(&t->deferred_by_hash, h); k != IM_NONE; k = t->deferred.v[k].next)
    if (t->deferred.v[k].hash == h && im__spec_equal(&t->deferred.v[k].spec, spec))
      return DEFERRED_BASE + k;
  im_deferred d = {.hash = h, .next = im_map_get(&t->deferred_by_hash, h)};
  spec_keep(t, &d.spec, spec);
  d.source_set = spec->source ? im_args_commit(t, spec->source) : IM_NONE;
  int64_t k = t->deferred.n;
  if (!IM_PUSH(t, t->deferred, d) || !im_map_put(&t->deferred_by_hash, h, k))
    return im_oom(t), IM_NONE;
  return DEFERRED_BASE + k;
}

/* Creates the deferred tracks in order of first use and renumbers the
 * counter rows that point at them. */
int im__tracks_flush(im_trace *t) {
  if (!t->deferred.n) return 1;
  int64_t *ids = malloc((size_t)t->deferred.n * sizeof *ids);
  if (!ids) return im_oom(t);
  for (int64_t k = 0; k < t->deferred.n; k++) {
    im_deferred *d = &t->deferred.v[k];
    ids[k] = im_track(t, &d->spec);
    if (d->source_set != IM_NONE && ids[k] != IM_NONE)
      im_set_i64(t, IM_T_TRACK, IM_TRACK_SOURCE_ARG_SET_ID, ids[k], d->source_set);
  }
  im_tab *c = im__tab(t, IM_T_COUNTER);
  uint32_t *track = c->data[IM_COUNTER_TRACK_ID];
  for (int64_t r = 0; r < c->n; r++)
    if (track[r] >= DEFERRED_BASE) track[r] = (uint32_t)ids[track[r] - DEFERRED_BASE];
  free(ids);
  return !t->failed;
}

/* ---- the allocator (§1.18) -------------------------------------------------- */

/* The set of tracks of spec `set` (made on first use; its index in
 * *num), or NULL when the import has failed (before, or now: out of
 * memory). */
static im_async_set *async_set(im_trace *t, const im_track_spec *set, int64_t *num) {
  if (t->failed) return NULL;
  uint64_t h = im__spec_hash(set, 1);
  for (int64_t k = im_map_get(&t->async_by_hash, h); k != IM_NONE; k = t->async_sets.v[k].next)
    if (t->async_sets.v[k].hash == h && im__spec_equal(&t->async_sets.v[k].spec, set)) {
      *num = k;
      return &t->async_sets.v[k];
    }
  im_async_set s = {.hash = h, .next = im_map_get(&t->async_by_hash, h)};
  spec_keep(t, &s.spec, set);
  int64_t k = t->async_sets.n;
  if (!IM_PUSH(t, t->async_sets, s) || !im_map_put(&t->async_by_hash, h, k)) {
    im_oom(t);
    return NULL;
  }
  /* The source args are committed now, once for the whole set. */
  t->async_sets.v[k].spec.source = NULL;
  t->async_sets.v[k].source_set = set->source ? im_args_commit(t, set->source) : IM_NONE;
  *num = k;
  return &t->async_sets.v[k];
}

/* A new track of the set, with index = its position. */
static int64_t new_slot(im_trace *t, im_async_set *s, int64_t num, uint32_t name) {
  im_track_spec spec = s->spec;
  int64_t idx = s->slots.n;
  im_track_dim_int(&spec, "track_compressor_idx", idx);
  spec.name = name;
  int64_t track = im__track_create(t, &spec, s->source_set, 0);
  if (track < 0) return IM_NONE;
  im_set_i64(t, IM_T_TRACK, IM_TRACK_TRACK_GROUP_ID, track, num);
  if (!IM_PUSH(t, s->slots, ((im_async_slot){.track = track}))) return IM_NONE;
  return idx;
}

int64_t im_async_track(im_trace *t, const im_track_spec *set, im_cookie c, int delta,
                       uint32_t name) {
  int64_t num;
  im_async_set *s = async_set(t, set, &num);
  if (!s) return IM_NONE;
  int64_t at = IM_NONE;
  for (int64_t i = 0; i < s->slots.n && at < 0; i++)
    if (s->slots.v[i].bound && s->slots.v[i].cookie.a == c.a && s->slots.v[i].cookie.b == c.b)
      at = i;
  for (int64_t i = 0; i < s->slots.n && at < 0; i++)
    if (s->slots.v[i].open == 0) at = i;
  if (at < 0 && (at = new_slot(t, s, num, name)) < 0) return IM_NONE;
  im_async_slot *sl = &s->slots.v[at];
  sl->cookie = c;
  sl->bound = 1;
  sl->open += delta;
  if (sl->open < 0) sl->open = 0;
  return sl->track;
}

int64_t im_overlap_track(im_trace *t, const im_track_spec *set, int64_t ts, int64_t end,
                         uint32_t name) {
  int64_t num;
  im_async_set *s = async_set(t, set, &num);
  if (!s) return IM_NONE;
  int64_t at = IM_NONE;
  for (int64_t i = 0; i < s->slots.n && at < 0; i++) {
    im_async_slot *sl = &s->slots.v[i];
    while (sl->ends.n && sl->ends.v[sl->ends.n - 1] <= ts) sl->ends.n--;
    if (!sl->ends.n || end <= sl->ends.v[sl->ends.n - 1]) at = i;
  }
  if (at < 0 && (at = new_slot(t, s, num, name)) < 0) return IM_NONE;
  im_async_slot *sl = &s->slots.v[at];
  if (!IM_PUSH(t, sl->ends, end)) return IM_NONE;
  return sl->track;
}

void im__tracks_free(im_trace *t) {
  im_map_free(&t->track_by_hash);
  free(t->track_next.v);
  free(t->track_hash.v);
  for (int64_t i = 0; i < t->track_state.n; i++) {
    free(t->track_state.v[i].stack.v);
    free(t->track_state.v[i].next_flows.v);
  }
  free(t->track_state.v);
  free(t->thread_track.v);
  im_map_free(&t->async_by_hash);
  for (int64_t k = 0; k < t->async_sets.n; k++) {
    for (int64_t i = 0; i < t->async_sets.v[k].slots.n; i++)
      free(t->async_sets.v[k].slots.v[i].ends.v);
    free(t->async_sets.v[k].slots.v);
  }
  free(t->async_sets.v);
  free(t->deferred.v);
  im_map_free(&t->deferred_by_hash);
}
