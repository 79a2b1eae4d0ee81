/*
 * trace.h — the inside of the trace builder (builder.h), shared by its
 * files: tables.c (growable columnar tables), map.c (hash map), args.c,
 * threads.c, tracks.c, slices.c, sched.c, stats.c and finish.c. Importers
 * include builder.h only.
 */
#ifndef PJ_IMPORT_TRACE_H
#define PJ_IMPORT_TRACE_H

#include "builder.h"

/* ---- growable vectors ------------------------------------------------------ */

/* Grows *p (cap elements of sz bytes) to hold need; 0 when out of memory. */
int im_grow(void **p, int64_t *cap, int64_t need, size_t sz);
#define IM_VEC(type) struct { type *v; int64_t n, cap; }
#define IM_PUSH(t, vec, val)                                                                    \
  (im_grow((void **)&(vec).v, &(vec).cap, (vec).n + 1, sizeof *(vec).v)                         \
       ? ((vec).v[(vec).n] = (val), (vec).n++, 1)                                               \
       : im_oom(t))

/* ---- hash map: uint64 key → int64 value ----------------------------------- */

/* Open addressing; keys are hashes or exact ints. Callers that hash
 * composite keys keep chains (a per-record `next`) and compare. */
typedef struct im_map {
  uint64_t *keys;
  int64_t *vals;
  uint8_t *used;
  int64_t cap, n;
} im_map;
/* The value of key, or IM_NONE. */
int64_t im_map_get(const im_map *m, uint64_t key);
/* Sets key → val; 0 when out of memory. */
int im_map_put(im_map *m, uint64_t key, int64_t val);
void im_map_free(im_map *m);
uint64_t im_hash(uint64_t h, uint64_t v);   /* mixes v into h */
uint64_t im_hash_bytes(uint64_t h, const void *p, size_t n);

/* ---- tables ------------------------------------------------------------------- */

typedef struct im_colschema { const char *name; rt_type type; } im_colschema;
typedef struct im_schema { const char *name; int ncols; const im_colschema *cols; } im_schema;
extern const im_schema im_schemas[IM_NTABLES];

enum { IM_MAXCOLS = 16 };
typedef struct im_tab {
  const im_schema *s;
  int64_t n, cap;
  int64_t zeroed;                /* rows [0, zeroed) have zero data and NULL bits */
  void *data[IM_MAXCOLS];        /* NULL for RT_ID columns */
  uint64_t *valid[IM_MAXCOLS];   /* bit set = not NULL */
} im_tab;

/* Moves the rows into a finalized table named `name`; empties tab. NULL
 * when out of memory. */
rt_table *im_tab_finish(im_tab *tab, const char *name);
void im_tab_free(im_tab *tab);

/* Table names, in the order im_trace_finish builds them. */

/* ---- per-track state ---------------------------------------------------------- */

typedef struct im_stack_entry {
  int64_t slice;
  int64_t ts, dur;   /* dur -1: pending */
} im_stack_entry;

typedef struct im_flow_pending {
  uint64_t ns, id;
  int64_t trace_id, arg_set_id;
} im_flow_pending;

typedef struct im_track_state {
  IM_VEC(im_stack_entry) stack;
  IM_VEC(im_flow_pending) next_flows;   /* ends waiting for the next slice */
  int64_t state_open;                   /* state tracks: open `state` row + 1, 0 none */
} im_track_state;

/* An allocator set (§1.18): its tracks and their state. */
typedef struct im_async_slot {
  int64_t track;
  int64_t open;             /* cookie mode: open count */
  im_cookie cookie;
  int bound;
  IM_VEC(int64_t) ends;     /* overlap mode: end times of open slices */
} im_async_slot;

typedef struct im_async_set {
  uint64_t hash;
  im_track_spec spec;       /* dims copied; names point at static strings */
  IM_VEC(im_async_slot) slots;
  int64_t source_set;       /* source args of its tracks */
  int64_t next;             /* chain of equal hashes */
} im_async_set;

/* A deferred track (created at end of trace). */
typedef struct im_deferred {
  im_track_spec spec;
  int64_t source_set;       /* committed source args */
  uint64_t hash;
  int64_t next;
} im_deferred;

typedef struct im_cpu_state {
  int64_t sched_row;        /* open sched row, IM_NONE */
  int64_t utid;             /* last next utid, IM_NONE */
  int64_t pid;              /* last next pid */
  int64_t prio;             /* last next prio */
} im_cpu_state;

typedef struct im_flow_rec {
  uint64_t ns, id;
  int64_t slice;
  int64_t next;
  int live;
} im_flow_rec;

typedef struct im_v1_key {
  uint64_t id;
  uint32_t cat, name;
  int64_t next;
} im_v1_key;

typedef struct im_meta_single { const char *name; int64_t row; } im_meta_single;

/* A pending arg set of a slice: an index into trace->pend. */
struct im_args {
  im_trace *t;
  IM_VEC(im_arg) rows;
  im_map by_key;   /* key → row, only for sets of more than 32 rows */
};

struct im_trace {
  rt_strpool *sp;
  im_options opt;
  int failed;
  im_tab tabs[IM_NTABLES];

  /* args */
  im_map argset_by_hash;           /* content hash → first set (row id) */
  IM_VEC(int64_t) argset_next;     /* indexed by set number (see args.c) */
  IM_VEC(int64_t) argset_row;      /* set number → first args row */
  IM_VEC(int32_t) argset_len;
  IM_VEC(uint64_t) argset_hash;
  im_args scratch_commit;
  IM_VEC(im_args *) arg_pool;      /* free pending sets for reuse */
  IM_VEC(im_args *) all_args;      /* every im_args made, freed at the end */

  /* slices: the pending args of the slices that have some (open
   * addressing by slice id, emptied as sets are written, so its size
   * follows the slices waiting for an end, not all slices) */
  struct im_pending { int64_t slice; im_args *args; } *pending;
  int64_t npending, cpending;      /* cpending: a power of two, or 0 */

  /* processes and threads */
  im_map process_by_pid;           /* pid → live upid */
  im_map thread_by_tid;            /* tid → most recent utid with that tid */
  IM_VEC(int64_t) thread_prev;     /* utid → older utid with the same tid */
  IM_VEC(uint8_t) thread_name_prio;
  IM_VEC(uint8_t) process_name_prio;
  IM_VEC(im_args *) thread_args;
  IM_VEC(im_args *) process_args;

  /* tracks */
  im_map track_by_hash;
  IM_VEC(int64_t) track_next;
  IM_VEC(uint64_t) track_hash;
  IM_VEC(im_track_state) track_state;
  IM_VEC(int64_t) thread_track;    /* utid → thread_execution track */
  im_map async_by_hash;
  IM_VEC(im_async_set) async_sets;
  IM_VEC(im_deferred) deferred;
  im_map deferred_by_hash;

  /* flows */
  im_map flow_by_hash;
  IM_VEC(im_flow_rec) flows;
  im_map v1_by_hash;               /* v1 flow keys (id, cat, name) → first record */
  IM_VEC(im_v1_key) v1_keys;

  /* sched */
  int kernel_major, kernel_minor;
  IM_VEC(im_cpu_state) cpus;
  IM_VEC(int64_t) thread_last_state;   /* utid → last thread_state row */
  IM_VEC(uint8_t) cpu_seen;

  /* stats and metadata */
  int64_t stats[IM_NSTATS];
  IM_VEC(int64_t) indexed_stat;         /* (stat, idx, value) triples */
  IM_VEC(im_meta_single) meta_single;

  /* machine */
  uint32_t uname[4];

  /* interned constants */
  uint32_t s_vtype[IM_V_NULL + 1];
  uint32_t s_true, s_false, s_slice, s_counter, s_state, s_single, s_multi, s_running;
  /* sched hot path (sched.c): the sched_switch arg keys and name, and the
   * end-state strings by prev_state (direct-mapped; -1 = empty slot) */
  uint32_t s_switch_key[7], s_sched_switch, s_R;
  struct im_switch_key *switch_cache;  /* sched_switch arg sets by value (sched.c) */
  int64_t state_cache_st[64];
  uint32_t state_cache_id[64];
  /* args.c: display strings of ints (value, string id + 1; 0 = empty) */
  int64_t dint_v[1024];
  uint32_t dint_id[1024];
};

/* Track hidden columns from a spec's dims; commits source args. */
int64_t im__track_create(im_trace *t, const im_track_spec *spec, int64_t source_set,
                         uint64_t hash);
uint64_t im__spec_hash(const im_track_spec *s, int with_dims);
int im__spec_equal(const im_track_spec *a, const im_track_spec *b);
/* The per-track state, grown to cover track. */
im_track_state *im__track_state(im_trace *t, int64_t track);
/* Dimension / source arg set of a spec. */
int64_t im__dims_set(im_trace *t, const im_track_spec *s);
/* End of trace pieces (finish.c calls them). */
void im__slices_flush(im_trace *t);
void im__threads_flush(im_trace *t);
void im__threads_init(im_trace *t);
int im__tracks_flush(im_trace *t);
void im__args_free_all(im_trace *t);
void im__stats_rows(im_trace *t);
void im__cpu_rows(im_trace *t);
void im__bounds_row(im_trace *t);
void im__threads_free(im_trace *t);
void im__tracks_free(im_trace *t);

static inline im_tab *im__tab(im_trace *t, im_table_id id) { return &t->tabs[id]; }

/* Hot-path writes of a non-NULL value into a row im_append just made
 * (no checks: the engines' own rows and columns of known types). */
static inline void im__put_i64(im_tab *tab, int col, int64_t row, int64_t v) {
  ((int64_t *)tab->data[col])[row] = v;
  rt_bit_set(tab->valid[col], (uint32_t)row);
}
static inline void im__put_u32(im_tab *tab, int col, int64_t row, uint32_t v) {
  ((uint32_t *)tab->data[col])[row] = v;
  rt_bit_set(tab->valid[col], (uint32_t)row);
}

#endif
