/*
 * builder.h — the trace builder: the one table-building API every importer
 * writes through (Chrome JSON in json_*.c; the Perfetto protobuf importer
 * of the traces-proto work, import/proto*.c, builds on this header and may
 * add what only protobuf needs), so the engine never knows which format a
 * trace came from.
 *
 * An importer creates an im_trace, feeds it events in processing order
 * (after its own sorting, TRACES.md §2.3 / §3.5) through the engines below
 * — process/thread identity (§1.16), slice nesting (§1.17), the async and
 * overlap track allocator (§1.18), flows (§1.19), args (§1.10), stats
 * (§1.12), metadata (§1.11), sched and thread_state (§3.10) — and calls
 * im_trace_finish, which builds every table of §1 (slice, thread,
 * process, track and its typed views, counter, sched, thread_state, flow,
 * args, metadata, stats, trace_bounds, cpu, ftrace_event, trace_file,
 * machine, and the aliases slices, instant, counters, sched_slice, raw)
 * and puts them into a catalog in one step. Until then nothing is
 * visible; im_trace_free drops everything.
 *
 * Conventions
 *  - Rows are numbered from 0 in insertion order; that number is the
 *    table's `id` (utid, upid …). IM_NONE (-1) means "no row" / NULL.
 *  - Strings are string-pool ids (im_str); IM_NULL_STR is a NULL string.
 *  - Errors are sticky: running out of memory marks the trace failed and
 *    turns later calls into no-ops; im_trace_finish then fails with
 *    "TRACE: out of memory". Loops over big inputs check im_failed().
 *  - A column no engine fills is written with im_set_* on the row an
 *    engine returned (e.g. thread_ts of a slice).
 */
#ifndef PJ_IMPORT_BUILDER_H
#define PJ_IMPORT_BUILDER_H

#include "../runtime/rt.h"

#define IM_NONE ((int64_t)-1)
#define IM_NULL_STR UINT32_MAX

/* ---- tables and columns (schema.def) ------------------------------------- */

typedef enum im_table_id {
#define IM_TABLE(T, name) IM_T_##T,
#define IM_COL(T, C, name, type)
#include "schema.def"
#undef IM_TABLE
#undef IM_COL
  IM_NTABLES
} im_table_id;

/* Column numbers within their table: IM_SLICE_TS, IM_THREAD_NAME, … (one
 * enum per table: each IM_TABLE closes the previous table's enum). */
enum im__cols_start { IM__COLS_START
#define IM_TABLE(T, name) }; enum im_cols_##T {
#define IM_COL(T, C, name, type) IM_##T##_##C,
#include "schema.def"
#undef IM_TABLE
#undef IM_COL
};

typedef enum im_stat {
#define IM_STAT(ID, name, sev, src, indexed, desc) IM_STAT_##ID,
#include "stats.def"
#undef IM_STAT
  IM_NSTATS
} im_stat;

typedef struct im_trace im_trace;

/* ---- the trace ------------------------------------------------------------ */

typedef struct im_options {
  /* Protobuf and systrace text: pid/tid 0 are the reserved upid 0 / utid 0
   * (named `swapper`). JSON: 0 is an ordinary pid/tid (§1.16.1). */
  int zero_is_swapper;
} im_options;

/* A new, empty trace interning into sp (the engine's pool). NULL when out
 * of memory. The reserved upid 0 / utid 0 rows exist from the start. */
im_trace *im_trace_new(rt_strpool *sp, const im_options *opt);
void im_trace_free(im_trace *t);
int im_failed(const im_trace *t);
/* Marks the trace failed (out of memory) from importer code; returns 0. */
int im_oom(im_trace *t);
rt_strpool *im_pool(im_trace *t);

uint32_t im_str(im_trace *t, const char *s, size_t n);
uint32_t im_cstr(im_trace *t, const char *s);   /* NULL → IM_NULL_STR */

/* End of trace (§2.9, §1.17.5): writes the pending arg sets of open
 * slices, process/thread args and deferred tracks, derives trace_bounds,
 * cpu and stats, builds every table and puts them (and the user views)
 * into cat, replacing tables of the same names. Tables of an earlier
 * trace that this one does not have are removed. Frees nothing: call
 * im_trace_free after. Returns 1, or 0 with err set ("TRACE: …"). The
 * names put into the catalog are listed by im_table_names. */
int im_trace_finish(im_trace *t, rt_catalog *cat, rt_err *err);
/* The names of every catalog table an import creates (NULL-terminated),
 * for listing (.tables), exposing to SQL and replacing a trace. */
const char *const *im_table_names(void);

/* Rows of a table so far. */
int64_t im_rows(const im_trace *t, im_table_id tab);

/* Direct column access, for what no engine fills. */
void im_set_i64(im_trace *t, im_table_id tab, int col, int64_t row, int64_t v);
void im_set_f64(im_trace *t, im_table_id tab, int col, int64_t row, double v);
void im_set_str(im_trace *t, im_table_id tab, int col, int64_t row, uint32_t s); /* NULL ok */
void im_set_null(im_trace *t, im_table_id tab, int col, int64_t row);
int im_is_null(const im_trace *t, im_table_id tab, int col, int64_t row);
int64_t im_get_i64(const im_trace *t, im_table_id tab, int col, int64_t row); /* NULL → IM_NONE */
uint32_t im_get_str(const im_trace *t, im_table_id tab, int col, int64_t row);
/* Appends a row (every column NULL) and returns its number. */
int64_t im_append(im_trace *t, im_table_id tab);
/* Room for `rows` more rows of tab, allocated once (an importer that
 * knows about how many rows are coming saves the doubling's copies;
 * capacity never written costs address space, not memory). */
void im_reserve(im_trace *t, im_table_id tab, int64_t rows);

/* ---- stats (§1.12) and metadata (§1.11) ---------------------------------------- */

void im_stat_add(im_trace *t, im_stat s, int64_t by);
void im_stat_set(im_trace *t, im_stat s, int64_t v);
/* Indexed stats (per cpu …): only counted indexes get a row. */
void im_stat_add_indexed(im_trace *t, im_stat s, int64_t idx, int64_t by);
int64_t im_stat_get(const im_trace *t, im_stat s);

/* One `single` row per name (a second call replaces the value); `multi`
 * rows append. */
void im_meta_int(im_trace *t, const char *name, int64_t v);
void im_meta_str(im_trace *t, const char *name, uint32_t s);
void im_meta_int_multi(im_trace *t, const char *name, int64_t v);

/* The trace_file rows and the trace_type / trace_size_bytes / trace_uuid
 * metadata of §1.11 for a file of `size` bytes whose first bytes (as
 * stored, before decompression) are head[0..headlen): the uuid hashes at
 * most 4096 of them. gzip: the file is gzip-compressed, giving a `gzip`
 * container row and a child row of trace_type and inner_size bytes (the
 * decompressed size; = size otherwise). */
void im_trace_file(im_trace *t, const char *name, int64_t size, const char *trace_type, int gzip,
                   int64_t inner_size, const void *head, size_t headlen);
/* The decompressed size, once known (a gzip file read as a stream):
 * the child row's size and trace_size_bytes. */
void im_trace_file_size(im_trace *t, int64_t inner_size);
/* trace_uuid from a TraceUuid packet (replaces the hash-based one). */
void im_trace_uuid(im_trace *t, uint64_t msb, uint64_t lsb);

/* ---- args (§1.10) -------------------------------------------------------------- */

typedef enum im_vtype {
  IM_V_INT, IM_V_UINT, IM_V_STRING, IM_V_REAL, IM_V_POINTER, IM_V_BOOL, IM_V_JSON, IM_V_NULL,
} im_vtype;

typedef struct im_arg {
  uint32_t key, flat_key;   /* interned; flat_key = key without [i] */
  im_vtype type;
  int64_t i;                /* int, uint (bits), pointer, bool */
  double d;                 /* real */
  uint32_t s;               /* string, json (IM_NULL_STR: NULL string) */
} im_arg;

/* A set being built (owned by the trace; reused). Adding a key already in
 * the set replaces its value in place (§1.10.6), unless keep_first. */
typedef struct im_args im_args;
im_args *im_args_new(im_trace *t);           /* an empty scratch set */
void im_args_clear(im_args *a);
void im_args_add(im_args *a, const im_arg *arg, int keep_first);
int im_args_count(const im_args *a);
/* The next array index under `key` (the key text with indexes, e.g.
 * "args.a.b") in this set: 1 + the largest i of a key "<key>[i]…", else 0
 * (§2.6.3: indexes continue across merged events). */
int64_t im_args_next_index(const im_args *a, const char *key, size_t keylen);
/* Convenience adders (key = flat_key when it has no index). */
void im_args_int(im_args *a, uint32_t key, int64_t v);
void im_args_uint(im_args *a, uint32_t key, uint64_t v);
void im_args_real(im_args *a, uint32_t key, double v);
void im_args_string(im_args *a, uint32_t key, uint32_t s);
void im_args_bool(im_args *a, uint32_t key, int v);
/* Writes the set to `args` (deduplicated by content, §1.10.6) and returns
 * its arg_set_id, or IM_NONE for an empty set; clears a. */
int64_t im_args_commit(im_trace *t, im_args *a);
void im_args_free(im_args *a);

/* ---- processes and threads (§1.16) ------------------------------------------------ */

/* Name priorities of §1.16.5. */
enum {
  IM_TNAME_OTHER = 0, IM_TNAME_FTRACE = 1, IM_TNAME_PROCESS_TREE = 2, IM_TNAME_TRACK_EVENT = 3,
  IM_TNAME_DESCRIPTOR = 4, IM_TNAME_BUILTIN = 5,
  IM_PNAME_DESCRIPTOR = 2, IM_PNAME_SYSTEM = 4,
};

int64_t im_process(im_trace *t, int64_t pid);                  /* GetOrCreateProcess */
int64_t im_thread_update(im_trace *t, int64_t tid, int64_t pid); /* UpdateThread */
int64_t im_thread(im_trace *t, int64_t tid);                   /* GetOrCreateThread */
/* A new row even if one is live (pid/tid reuse); the old one stops being
 * found. */
int64_t im_process_new(im_trace *t, int64_t pid);
int64_t im_thread_new(im_trace *t, int64_t tid, int64_t upid /* IM_NONE */);
/* Links a thread without a process to upid (is_main_thread from tid ==
 * pid); a thread already in another process counts process_tracker_errors. */
void im_thread_attach(im_trace *t, int64_t utid, int64_t upid);
void im_thread_name(im_trace *t, int64_t utid, uint32_t name, int prio);
void im_process_name(im_trace *t, int64_t upid, uint32_t name, int prio);
int64_t im_thread_upid(const im_trace *t, int64_t utid);      /* IM_NONE if none */
int64_t im_thread_tid(const im_trace *t, int64_t utid);
int64_t im_process_pid(const im_trace *t, int64_t upid);
/* The most recent live thread with that tid (GetThreadOrNull), or
 * IM_NONE; creates nothing. */
int64_t im_thread_find(const im_trace *t, int64_t tid);
/* sched_process_free: the thread's end_ts, and its process's when it is
 * the main thread; both stop being found by tid / pid, so a reused id
 * makes a new row. */
void im_thread_end(im_trace *t, int64_t utid, int64_t ts);
/* Extra args of a process or thread (sort hints, labels …), committed at
 * end of trace (§1.16.6). */
im_args *im_process_args(im_trace *t, int64_t upid);
im_args *im_thread_args(im_trace *t, int64_t utid);

/* ---- tracks (§1.5) ------------------------------------------------------------------ */

enum { IM_MAX_DIMS = 8 };

typedef enum im_event_type { IM_EV_SLICE, IM_EV_COUNTER, IM_EV_STATE } im_event_type;

/* A dimension: a name and an int or a string value (a NULL string is a
 * string dimension with IM_NULL_STR). */
typedef struct im_dim {
  const char *name;
  int is_str;
  int64_t i;
  uint32_t s;
} im_dim;

/* What identifies and describes a track. Tracks are interned by (type,
 * dims): asking again returns the same id. The rest is used only when
 * the track is created. dims named utid, upid and cpu also fill the
 * hidden columns the typed views filter on. */
typedef struct im_track_spec {
  const char *type;          /* catalogue type, e.g. "thread_execution" */
  im_event_type event;
  int ndims;
  im_dim dims[IM_MAX_DIMS];
  uint32_t name;             /* IM_NULL_STR for none */
  uint32_t unit;             /* counter_unit, IM_NULL_STR for none */
  uint32_t description;      /* IM_NULL_STR for none */
  int64_t parent_id;         /* IM_NONE */
  im_args *source;           /* source args, or NULL (committed on creation) */
} im_track_spec;

/* Fills a spec: type, event, no dims, NULL name/unit/description/parent. */
void im_track_spec_init(im_track_spec *s, const char *type, im_event_type ev);
void im_track_dim_int(im_track_spec *s, const char *name, int64_t v);
void im_track_dim_str(im_track_spec *s, const char *name, uint32_t v);

int64_t im_track(im_trace *t, const im_track_spec *spec);
/* A track created at end of trace, after every other track, in order of
 * first use (JSON counter tracks, §2.5 C). Returns a placeholder id that
 * counter rows may carry; im_trace_finish renumbers them. */
int64_t im_track_deferred(im_trace *t, const im_track_spec *spec);
/* The thread's `thread_execution` track (dims utid). */
int64_t im_thread_track(im_trace *t, int64_t utid);
/* A counter track of one cpu: type e.g. "cpu_frequency", name "cpufreq". */
int64_t im_cpu_counter_track(im_trace *t, const char *type, const char *name, int64_t cpu);
void im_track_set_name(im_trace *t, int64_t track, uint32_t name);

/* ---- the async / overlap allocator (§1.18) ------------------------------------------- */

/* A cookie: any 128-bit key the importer derives from (scope, id). */
typedef struct im_cookie { uint64_t a, b; } im_cookie;

/* Cookie mode. The set is spec's (type, dims); its tracks get one more
 * dimension track_compressor_idx and track_group_id = the set number.
 * delta +1 begin, -1 end, 0 just look up (an instant is +1 then -1).
 * `name` names a track this call creates. Returns the track. */
int64_t im_async_track(im_trace *t, const im_track_spec *set, im_cookie c, int delta,
                       uint32_t name);
/* Overlap mode for [ts, end): the first track of the set where the slice
 * nests, else a new one. */
int64_t im_overlap_track(im_trace *t, const im_track_spec *set, int64_t ts, int64_t end,
                         uint32_t name);

/* ---- slices (§1.17) ---------------------------------------------------------------------- */

/* Each returns the new slice id, or IM_NONE when the slice was dropped
 * (negative duration, depth > 512, partial overlap: the stat is counted).
 * The slice's args are pending (im_slice_args) until
 * im_slice_commit_args or the end of trace. */
int64_t im_slice_begin(im_trace *t, int64_t track, int64_t ts, uint32_t cat, uint32_t name);
/* dur >= 0. overlap_out (may be NULL) is set to 1 instead of dropping the
 * slice when it partially overlaps the stack (nothing is added then), so
 * the caller can spill it (JSON X); with NULL it is dropped and counted. */
int64_t im_slice_complete(im_trace *t, int64_t track, int64_t ts, int64_t dur, uint32_t cat,
                          uint32_t name, int *overlap_out);
/* An instant: a complete slice of dur 0. */
int64_t im_slice_instant(im_trace *t, int64_t track, int64_t ts, uint32_t cat, uint32_t name);
/* Ends the matching open slice (§1.17.3); returns it or IM_NONE. */
int64_t im_slice_end(im_trace *t, int64_t track, int64_t ts, uint32_t cat, uint32_t name);
/* The topmost slice on the track's stack (§1.17.4), or IM_NONE. */
int64_t im_slice_top(const im_trace *t, int64_t track);
/* The pending args of a slice (NULL when they were written already). */
im_args *im_slice_args(im_trace *t, int64_t slice);
void im_slice_commit_args(im_trace *t, int64_t slice);

/* ---- flows (§1.19) ---------------------------------------------------------------------- */

/* A flow key is (ns, id): ns separates id spaces (e.g. JSON v1 keys from
 * v2 ids). trace_id and args go on the emitted rows (args IM_NONE). */
void im_flow_begin(im_trace *t, int64_t slice, uint64_t ns, uint64_t id);
void im_flow_step(im_trace *t, int64_t slice, uint64_t ns, uint64_t id, int64_t trace_id,
                  int64_t arg_set_id);
void im_flow_end(im_trace *t, int64_t slice, uint64_t ns, uint64_t id, int64_t trace_id,
                 int64_t arg_set_id, int close);
/* Queues an end on a track, bound to the next slice that begins there
 * (JSON v1 `f` without bp:"e"). */
void im_flow_end_next(im_trace *t, int64_t track, uint64_t ns, uint64_t id, int64_t trace_id,
                      int64_t arg_set_id);
/* A v1 flow event (JSON §2.5.1.1, TrackEvent legacy s/t/f §3.6.8): phase
 * 's', 't' or 'f' for the key (id, cat, name), whose trace_id is 0, 1, …
 * in order of first use. 's' begins and 't' steps on the topmost slice of
 * track; 'f' ends there when bind_enclosing, else on the next slice that
 * begins on track. Ends never close the key; flow rows get args
 * {name, cat}. */
void im_flow_v1(im_trace *t, int64_t track, int phase, uint64_t id, uint32_t cat, uint32_t name,
                int bind_enclosing);
/* A flow row directly (slice_out, slice_in ordered by ts as §1.19.2). */
void im_flow_emit(im_trace *t, int64_t a, int64_t b, int64_t trace_id, int64_t arg_set_id);

/* ---- states (TrackEvent STATE, §3.6.4) -------------------------------------------------- */

/* The state track enters state `name` at ts: the track's open `state`
 * row ends there, and unless name is IM_NULL_STR a new row opens (dur -1
 * until the next state). Returns the new row, or IM_NONE. */
int64_t im_state(im_trace *t, int64_t track, int64_t ts, uint32_t cat, uint32_t name,
                 int64_t arg_set_id);

/* ---- counters ---------------------------------------------------------------------------- */

int64_t im_counter(im_trace *t, int64_t track, int64_t ts, double value, int64_t arg_set_id);

/* ---- sched and thread_state (§3.10) ------------------------------------------------------- */

/* Kernel version for prev_state decoding (§3.10.5); default 4.4. */
void im_set_kernel_version(im_trace *t, int major, int minor);
/* S(prev_state) as an interned string, IM_NULL_STR when invalid. */
uint32_t im_task_state_str(im_trace *t, int64_t prev_state);
/* A kernel-4.4 prev_state mask from a systrace state string ("R", "R+",
 * "S", "D|K" …); -1 when it is not one. */
int64_t im_task_state_parse(const char *s, size_t n);

/* §3.10.1–2: the switch on `cpu` at ts. prev_comm / next_comm may be
 * IM_NULL_STR. Also writes the ftrace_event row (sched_switch, with the
 * prev/next args). */
void im_sched_switch(im_trace *t, uint32_t cpu, int64_t ts, int64_t prev_pid, uint32_t prev_comm,
                     int64_t prev_prio, int64_t prev_state, int64_t next_pid, uint32_t next_comm,
                     int64_t next_prio);
/* The same with the threads already resolved (compact_sched: prev is the
 * last thread switched in on that cpu, no pid check). */
void im_sched_switch_utid(im_trace *t, uint32_t cpu, int64_t ts, int64_t prev_utid,
                          int64_t prev_state, int64_t next_utid, int64_t next_prio);
/* The utid last switched in on cpu, or IM_NONE. */
int64_t im_sched_cpu_utid(const im_trace *t, uint32_t cpu);
/* §3.10.3: wakee woken by waker (IM_NONE: unknown) at ts. irq_context 0/1,
 * or -1 for NULL. */
void im_sched_waking(im_trace *t, int64_t ts, int64_t wakee_utid, int64_t waker_utid,
                     int irq_context);
/* §3.10.4: io_wait (0/1, -1 NULL) and blocked_function on the thread's
 * last blocked row. */
void im_sched_blocked_reason(im_trace *t, int64_t utid, int io_wait, uint32_t blocked_function);
/* A ready-made thread_state row (JSON `T`), with sched row when Running
 * with a cpu. Returns the thread_state row. */
int64_t im_thread_state_row(im_trace *t, int64_t ts, int64_t dur, int64_t utid, uint32_t state,
                            int64_t cpu, int io_wait, uint32_t blocked_function);
/* Notes a cpu number referenced by an event (cpu table, §1.14). */
void im_cpu_seen(im_trace *t, int64_t cpu);

/* ---- ftrace_event ------------------------------------------------------------------------- */

int64_t im_ftrace_event(im_trace *t, int64_t ts, uint32_t name, int64_t cpu, int64_t utid,
                        int64_t arg_set_id, int64_t common_flags);

/* ---- machine --------------------------------------------------------------------------------- */

void im_machine_uname(im_trace *t, uint32_t sysname, uint32_t release, uint32_t version,
                      uint32_t arch);

#endif
