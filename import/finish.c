/*
 * finish.c — the trace's life: creating it, and at end of trace deriving
 * cpu, trace_bounds and stats, building every table of TRACES.md §1 and
 * the user views, and putting them into the catalog in one step.
 *
 * Views cost no copy where they are projections: `slice` shares
 * __intrinsic_slice's columns and adds the aliases cat and slice_id,
 * `slices` shares `slice`, `track` the first columns of __intrinsic_track,
 * `sched_slice` is the sched table and `sched` shares it plus ts_end,
 * `raw` shares ftrace_event, thread.id / process.id share utid / upid.
 * Filtered views (thread_track, counter_track …, instant) and `counters`'
 * name/unit are small copies.
 */
#include <stdlib.h>

#include "trace.h"

static const char *const table_names[] = {
    "slice", "slices", "instant", "thread", "process", "__intrinsic_track", "track",
    "thread_track", "process_track", "cpu_track", "counter_track", "cpu_counter_track",
    "process_counter_track", "thread_counter_track", "state_track", "process_state_track",
    "thread_state_track", "counter", "counters", "sched", "sched_slice", "thread_state", "state",
    "flow", "args", "metadata", "stats", "trace_bounds", "cpu", "ftrace_event", "raw", "trace_file",
    "machine", NULL};

const char *const *im_table_names(void) { return table_names; }

/* ---- life ------------------------------------------------------------------ */

im_trace *im_trace_new(rt_strpool *sp, const im_options *opt) {
  im_trace *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->sp = sp;
  if (opt) t->opt = *opt;
  t->kernel_major = 4;
  t->kernel_minor = 4;
  for (int i = 0; i < IM_NTABLES; i++) t->tabs[i].s = &im_schemas[i];
  static const char *const vt[] = {"int", "uint", "string", "real", "pointer", "bool", "json", "null"};
  for (int i = 0; i <= IM_V_NULL; i++) t->s_vtype[i] = im_cstr(t, vt[i]);
  t->s_true = im_cstr(t, "true");
  t->s_false = im_cstr(t, "false");
  t->s_single = im_cstr(t, "single");
  t->s_multi = im_cstr(t, "multi");
  t->s_running = im_cstr(t, "Running");
  static const char *const sk[] = {"prev_comm", "prev_pid", "prev_prio", "prev_state",
                                   "next_comm", "next_pid", "next_prio"};
  for (int i = 0; i < 7; i++) t->s_switch_key[i] = im_cstr(t, sk[i]);
  t->s_sched_switch = im_cstr(t, "sched_switch");
  t->s_R = im_cstr(t, "R");
  for (int i = 0; i < 64; i++) t->state_cache_st[i] = -1;
  im__threads_init(t);
  if (t->failed) {
    im_trace_free(t);
    return NULL;
  }
  return t;
}

void im_trace_free(im_trace *t) {
  if (!t) return;
  for (int i = 0; i < IM_NTABLES; i++) im_tab_free(&t->tabs[i]);
  im__args_free_all(t);
  free(t->pending);
  im__threads_free(t);
  im__tracks_free(t);
  im_map_free(&t->flow_by_hash);
  free(t->flows.v);
  im_map_free(&t->v1_by_hash);
  free(t->v1_keys.v);
  free(t->cpus.v);
  free(t->cpu_seen.v);
  free(t->switch_cache);
  free(t->indexed_stat.v);
  free(t->meta_single.v);
  free(t);
}

int im_failed(const im_trace *t) { return t->failed; }
int im_oom(im_trace *t) {
  t->failed = 1;
  return 0;
}
rt_strpool *im_pool(im_trace *t) { return t->sp; }

uint32_t im_str(im_trace *t, const char *s, size_t n) { return rt_str_intern(t->sp, s, n); }
uint32_t im_cstr(im_trace *t, const char *s) {
  return s ? rt_str_intern(t->sp, s, strlen(s)) : IM_NULL_STR;
}

/* ---- derived rows ------------------------------------------------------------ */

void im__cpu_rows(im_trace *t) {
  for (int64_t c = 0; c < t->cpu_seen.n; c++) {
    if (!t->cpu_seen.v[c]) continue;
    int64_t r = im_append(t, IM_T_CPU);
    im_set_i64(t, IM_T_CPU, IM_CPU_ID, r, c);
    im_set_i64(t, IM_T_CPU, IM_CPU_UCPU, r, c);
    im_set_i64(t, IM_T_CPU, IM_CPU_CPU, r, c);
    im_set_i64(t, IM_T_CPU, IM_CPU_CLUSTER_ID, r, 0);
    im_set_i64(t, IM_T_CPU, IM_CPU_MACHINE_ID, r, 0);
  }
}

/* §1.13: min ts and max end over the timed tables. */
void im__bounds_row(im_trace *t) {
  static const struct { im_table_id tab; int ts, dur; } src[] = {
      {IM_T_SLICE, IM_SLICE_TS, IM_SLICE_DUR},
      {IM_T_COUNTER, IM_COUNTER_TS, -1},
      {IM_T_SCHED, IM_SCHED_TS, IM_SCHED_DUR},
      {IM_T_THREAD_STATE, IM_THREAD_STATE_TS, IM_THREAD_STATE_DUR},
      {IM_T_STATE, IM_STATE_TS, IM_STATE_DUR},
      {IM_T_FTRACE_EVENT, IM_FTRACE_EVENT_TS, -1},
  };
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (size_t k = 0; k < sizeof src / sizeof *src; k++) {
    const im_tab *tab = &t->tabs[src[k].tab];
    const int64_t *ts = tab->data[src[k].ts];
    const int64_t *dur = src[k].dur >= 0 ? tab->data[src[k].dur] : NULL;
    for (int64_t i = 0; i < tab->n; i++) {
      int64_t end = ts[i] + (dur && dur[i] > 0 ? dur[i] : 0);
      if (ts[i] < lo) lo = ts[i];
      if (end > hi) hi = end;
    }
  }
  if (lo == INT64_MAX) lo = hi = 0;
  else if (hi == lo) hi = lo + 1;
  int64_t r = im_append(t, IM_T_TRACE_BOUNDS);
  im_set_i64(t, IM_T_TRACE_BOUNDS, IM_TRACE_BOUNDS_START_TS, r, lo);
  im_set_i64(t, IM_T_TRACE_BOUNDS, IM_TRACE_BOUNDS_END_TS, r, hi);
}

static void machine_row(im_trace *t) {
  int64_t r = im_append(t, IM_T_MACHINE);
  im_set_i64(t, IM_T_MACHINE, IM_MACHINE_RAW_ID, r, 0);
  static const int cols[4] = {IM_MACHINE_SYSNAME, IM_MACHINE_RELEASE, IM_MACHINE_VERSION,
                              IM_MACHINE_ARCH};
  for (int i = 0; i < 4; i++)
    if (t->uname[i]) im_set_str(t, IM_T_MACHINE, cols[i], r, t->uname[i]);
}

/* ---- views ---------------------------------------------------------------------- */

/* Copies a cell of any stored type into a builder column. */
static void copy_cell(rt_table_builder *b, int dst, const rt_column *c, int64_t row) {
  if (c->valid && !rt_bit(c->valid, (uint32_t)row)) {
    rt_tb_append_null(b, dst);
    return;
  }
  switch (c->type) {
  case RT_ID: rt_tb_append_i64(b, dst, row); break;
  case RT_U32: rt_tb_append_i64(b, dst, ((const uint32_t *)c->data)[row]); break;
  case RT_I32: rt_tb_append_i64(b, dst, ((const int32_t *)c->data)[row]); break;
  case RT_F64: rt_tb_append_f64(b, dst, ((const double *)c->data)[row]); break;
  case RT_STR: rt_tb_append_str(b, dst, ((const uint32_t *)c->data)[row]); break;
  default: rt_tb_append_i64(b, dst, ((const int64_t *)c->data)[row]); break;
  }
}

static int col_of(const rt_table *t, const char *name) { return rt_table_find_col(t, name); }

/* A track view: rows of __intrinsic_track with event_type `ev` (and a
 * non-NULL `need` column), columns `cols` (names in track). */
static rt_table *track_view(im_trace *t, rt_table *tr, const char *name, const char *ev,
                            const char *need, const char *const *cols) {
  int n = 0;
  while (cols[n]) n++;
  int src[16], evc = col_of(tr, "event_type"), needc = need ? col_of(tr, need) : -1;
  rt_type types[16];
  const char *names[16];
  for (int i = 0; i < n; i++) {
    /* unit is counter_unit under its view name */
    src[i] = col_of(tr, !strcmp(cols[i], "unit") ? "counter_unit" : cols[i]);
    types[i] = tr->cols[src[i]].type == RT_ID ? RT_I64 : tr->cols[src[i]].type;
    names[i] = cols[i];
  }
  rt_table_builder *b = rt_tb_new(name, n, names, types);
  if (!b) return NULL;
  uint32_t want = im_cstr(t, ev);
  const rt_column *e = &tr->cols[evc];
  for (int64_t r = 0; r < tr->nrows; r++) {
    if (((const uint32_t *)e->data)[r] != want) continue;
    if (needc >= 0 && tr->cols[needc].valid && !rt_bit(tr->cols[needc].valid, (uint32_t)r)) continue;
    for (int i = 0; i < n; i++) copy_cell(b, i, &tr->cols[src[i]], r);
  }
  return rt_tb_finish(b);
}

static rt_table *instant_view(rt_table *slice) {
  static const char *const names[] = {"ts", "track_id", "name", "arg_set_id"};
  static const rt_type types[] = {RT_I64, RT_U32, RT_STR, RT_U32};
  int src[4];
  for (int i = 0; i < 4; i++) src[i] = col_of(slice, names[i]);
  rt_table_builder *b = rt_tb_new("instant", 4, names, types);
  if (!b) return NULL;
  const int64_t *dur = slice->cols[col_of(slice, "dur")].data;
  for (int64_t r = 0; r < slice->nrows; r++) {
    if (dur[r] != 0) continue;
    for (int i = 0; i < 4; i++) copy_cell(b, i, &slice->cols[src[i]], r);
  }
  return rt_tb_finish(b);
}

/* Fills an extra column of a shared table from malloc'd data. */
static int own_column(rt_table *v, int c, const char *name, rt_type type, void *data,
                      uint64_t *valid) {
  rt_column *col = &v->cols[c];
  size_t n = strlen(name);
  col->name = malloc(n + 1);
  if (!col->name || !data) {
    free(data);
    free(valid);
    return 0;
  }
  memcpy(col->name, name, n + 1);
  col->type = type;
  col->data = data;
  col->valid = valid;
  col->nullable = valid != NULL;
  return 1;
}

/* counters: counter's columns plus the track's name and unit. */
static rt_table *counters_view(rt_table *counter, rt_table *track) {
  int cols[5] = {0, 1, 2, 3, 4};
  rt_table *v = rt_table_share(counter, "counters", 5, cols, NULL, 2);
  if (!v) return NULL;
  int64_t n = counter->nrows;
  uint32_t *name = malloc((size_t)(n ? n : 1) * 4), *unit = malloc((size_t)(n ? n : 1) * 4);
  uint64_t *nv = calloc(RT_BITWORDS(n ? n : 1), 8), *uv = calloc(RT_BITWORDS(n ? n : 1), 8);
  const uint32_t *tid = counter->cols[col_of(counter, "track_id")].data;
  const rt_column *tn = &track->cols[col_of(track, "name")];
  const rt_column *tu = &track->cols[col_of(track, "counter_unit")];
  int has_null_n = 0, has_null_u = 0;
  for (int64_t r = 0; name && unit && nv && uv && r < n; r++) {
    uint32_t k = tid[r];
    int okn = k < track->nrows && (!tn->valid || rt_bit(tn->valid, k));
    int oku = k < track->nrows && (!tu->valid || rt_bit(tu->valid, k));
    name[r] = okn ? ((const uint32_t *)tn->data)[k] : 0;
    unit[r] = oku ? ((const uint32_t *)tu->data)[k] : 0;
    if (okn) rt_bit_set(nv, (uint32_t)r);
    else has_null_n = 1;
    if (oku) rt_bit_set(uv, (uint32_t)r);
    else has_null_u = 1;
  }
  if (!nv || !uv) {
    free(nv), free(uv), nv = uv = NULL, free(name), free(unit), name = unit = NULL;
  }
  if (!has_null_n) free(nv), nv = NULL;
  if (!has_null_u) free(uv), uv = NULL;
  int ok = own_column(v, 5, "name", RT_STR, name, nv);
  ok = own_column(v, 6, "unit", RT_STR, unit, uv) && ok;
  if (!ok) {
    rt_table_unref(v);
    return NULL;
  }
  return v;
}

/* sched: sched_slice plus ts_end = ts + dur. */
static rt_table *sched_view(rt_table *ss) {
  int cols[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  rt_table *v = rt_table_share(ss, "sched", 8, cols, NULL, 1);
  if (!v) return NULL;
  int64_t n = ss->nrows;
  int64_t *end = malloc((size_t)(n ? n : 1) * 8);
  const int64_t *ts = ss->cols[1].data, *dur = ss->cols[2].data;
  for (int64_t r = 0; end && r < n; r++) end[r] = ts[r] + dur[r];
  if (!own_column(v, 8, "ts_end", RT_I64, end, NULL)) {
    rt_table_unref(v);
    return NULL;
  }
  return v;
}

/* A table with an alias column inserted: `alias` shares column `of`,
 * placed at position `at` (thread.id after utid, process.id after upid). */
static rt_table *with_alias(rt_table *base, const char *name, int at, int of, const char *alias) {
  int cols[IM_MAXCOLS + 2];
  const char *names[IM_MAXCOLS + 2] = {0};
  int n = 0;
  for (int c = 0; c < base->ncols; c++) {
    if (c == at) {
      cols[n] = of;
      names[n++] = alias;
    }
    cols[n++] = c;
  }
  return rt_table_share(base, name, n, cols, names, 0);
}

/* ---- finish ------------------------------------------------------------------------- */

typedef struct built {
  rt_table *t[64];
  int n;
  int oom;
} built;

static rt_table *keep(built *b, rt_table *t) {
  if (!t) b->oom = 1;
  else b->t[b->n++] = t;
  return t;
}

int im_trace_finish(im_trace *t, rt_catalog *cat, rt_err *err) {
  /* §2.9: process/thread args, deferred (JSON counter) tracks, pending
   * slice args; then the derived tables. */
  im__threads_flush(t);
  im__tracks_flush(t);
  im__slices_flush(t);
  im__cpu_rows(t);
  im__bounds_row(t);
  machine_row(t);
  im__stats_rows(t);
  if (t->failed) return rt_errorf(err, -1, "TRACE: out of memory");

  built b = {.n = 0};
  rt_table *base[IM_NTABLES] = {0};
  for (int i = 0; i < IM_NTABLES; i++) {
    base[i] = im_tab_finish(&t->tabs[i], im_schemas[i].name);
    if (!base[i]) b.oom = 1;
  }
  if (!b.oom) {
    /* slice = __intrinsic_slice + cat + slice_id */
    int sc[IM_MAXCOLS + 2];
    const char *sn[IM_MAXCOLS + 2] = {0};
    int n = base[IM_T_SLICE]->ncols;
    for (int c = 0; c < n; c++) sc[c] = c;
    sc[n] = IM_SLICE_CATEGORY, sn[n] = "cat";
    sc[n + 1] = IM_SLICE_ID, sn[n + 1] = "slice_id";
    rt_table *slice = keep(&b, rt_table_share(base[IM_T_SLICE], "slice", n + 2, sc, sn, 0));
    if (slice) {
      int all[IM_MAXCOLS + 2];
      for (int c = 0; c < slice->ncols; c++) all[c] = c;
      keep(&b, rt_table_share(slice, "slices", slice->ncols, all, NULL, 0));
      keep(&b, instant_view(slice));
    }
    keep(&b, with_alias(base[IM_T_THREAD], "thread", 1, IM_THREAD_UTID, "id"));
    keep(&b, with_alias(base[IM_T_PROCESS], "process", 1, IM_PROCESS_UPID, "id"));
    rt_table *tr = keep(&b, rt_table_ref(base[IM_T_TRACK]));
    int tc[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    keep(&b, rt_table_share(tr, "track", 8, tc, NULL, 0));
    static const char *const slice_cols[] = {"id", "name", "type", "parent_id",
                                             "source_arg_set_id", "machine_id", NULL, NULL};
#define WITH(x) (const char *const[]){"id", "name", "type", "parent_id", "source_arg_set_id", "machine_id", x, NULL}
#define CWITH(x) (const char *const[]){"id", "name", "type", "parent_id", "source_arg_set_id", "machine_id", "unit", "description", x, NULL}
    keep(&b, track_view(t, tr, "thread_track", "slice", "utid", WITH("utid")));
    keep(&b, track_view(t, tr, "process_track", "slice", "upid", WITH("upid")));
    keep(&b, track_view(t, tr, "cpu_track", "slice", "cpu", WITH("cpu")));
    keep(&b, track_view(t, tr, "counter_track", "counter", NULL,
                        (const char *const[]){"id", "name", "parent_id", "type",
                                              "dimension_arg_set_id", "source_arg_set_id",
                                              "machine_id", "unit", "description", NULL}));
    keep(&b, track_view(t, tr, "cpu_counter_track", "counter", "cpu", CWITH("cpu")));
    keep(&b, track_view(t, tr, "process_counter_track", "counter", "upid", CWITH("upid")));
    keep(&b, track_view(t, tr, "thread_counter_track", "counter", "utid", CWITH("utid")));
    keep(&b, track_view(t, tr, "state_track", "state", NULL, slice_cols));
    keep(&b, track_view(t, tr, "process_state_track", "state", "upid", WITH("upid")));
    keep(&b, track_view(t, tr, "thread_state_track", "state", "utid", WITH("utid")));
#undef WITH
#undef CWITH
    keep(&b, rt_table_ref(base[IM_T_COUNTER]));
    keep(&b, counters_view(base[IM_T_COUNTER], tr));
    keep(&b, sched_view(base[IM_T_SCHED]));
    keep(&b, rt_table_ref(base[IM_T_SCHED]));
    static const im_table_id plain[] = {IM_T_THREAD_STATE, IM_T_STATE,    IM_T_FLOW, IM_T_ARGS,
                                        IM_T_METADATA,     IM_T_STATS,    IM_T_TRACE_BOUNDS,
                                        IM_T_CPU,          IM_T_FTRACE_EVENT, IM_T_TRACE_FILE,
                                        IM_T_MACHINE};
    for (size_t i = 0; i < sizeof plain / sizeof *plain; i++) keep(&b, rt_table_ref(base[plain[i]]));
    int fc[IM_MAXCOLS];
    for (int c = 0; c < base[IM_T_FTRACE_EVENT]->ncols; c++) fc[c] = c;
    keep(&b, rt_table_share(base[IM_T_FTRACE_EVENT], "raw", base[IM_T_FTRACE_EVENT]->ncols, fc,
                            NULL, 0));
  }
  for (int i = 0; i < IM_NTABLES; i++) rt_table_unref(base[i]);
  if (b.oom) {
    for (int i = 0; i < b.n; i++) rt_table_unref(b.t[i]);
    return rt_errorf(err, -1, "TRACE: out of memory");
  }
  for (int i = 0; i < b.n; i++)
    if (!rt_catalog_put(cat, b.t[i])) {
      while (++i < b.n) rt_table_unref(b.t[i]);
      return rt_errorf(err, -1, "TRACE: out of memory");
    }
  return 1;
}
