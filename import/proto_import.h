/*
 * proto_import.h — the inside of the Perfetto protobuf importer, shared by
 * its files (the public entry is proto.h):
 *
 *   proto_wire.h      zero-copy wire reader
 *   proto_read.c      read pass: splits packets, per-sequence flags and
 *                     defaults, read-time payloads, pushes sort items
 *   proto_seq.c       sequences, generations, interned data
 *   proto_clock.c     clock snapshots and conversion to trace time
 *   proto_sort.c      streams, sorting, the k-way merge
 *   proto_te_read.c   TrackEvent timestamps / counter values at read time
 *   proto_ftrace_read.c  ftrace bundles and compact_sched into streams
 *   proto_parse.c     the sorted pass: dispatch per packet kind
 *   proto_track_event.c, proto_descriptor.c, proto_system.c (process_tree,
 *   process_stats, sys_stats), proto_ftrace.c: the parsers
 *
 * Two passes, as trace_processor does (TRACES.md §3.5): the read pass
 * walks the file once in file order and resolves everything that depends
 * on that order (sequence state, interning generations, clocks, delta
 * timestamps, incremental counters); it pushes 16-byte sort items that
 * point back into the buffer. The parse pass merges the streams in
 * (ts, stream, arrival) order and decodes each packet again, in place,
 * feeding the trace builder (builder.h).
 *
 * Positions: every packet is addressed by a *logical offset* in the order
 * the read pass met it. The file is one segment; a compressed_packets
 * payload is inflated into its own buffer, spliced into the logical space
 * right where it was met (the rest of the file continues after it). Per
 * sequence generations, aux records and ftrace bundle marks are kept in
 * logical order, so the parse pass finds them by binary search.
 */
#ifndef PJ_PROTO_IMPORT_H
#define PJ_PROTO_IMPORT_H

#include "import/builder.h"
#include "import/trace.h"   /* im_map, im_hash: the builder's hash map */
#include "import/input.h"
#include "import/proto_wire.h"

/* Arithmetic on values from the trace wraps (two's complement) instead
 * of overflowing: garbage in gives garbage numbers, never undefined
 * behaviour (a wrapped timestamp usually turns negative and is dropped). */
static inline int64_t pb_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline int64_t pb_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static inline int64_t pb_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

#define PB_VEC(type) struct { type *v; size_t n, cap; }
/* Grows a PB_VEC to hold one more; 0 when out of memory. */
int pb_grow(void **v, size_t *cap, size_t need, size_t sz);
#define PB_PUSH(vec, val)                                                                       \
  (pb_grow((void **)&(vec).v, &(vec).cap, (vec).n + 1, sizeof *(vec).v)                        \
       ? ((vec).v[(vec).n++] = (val), 1)                                                        \
       : 0)

/* ---- logical segments --------------------------------------------------- */

typedef struct pb_seg {
  uint64_t lstart;       /* logical offset of base[0] */
  const uint8_t *base;
  size_t len;
  uint8_t *owned;        /* malloc'd inflated buffer, or NULL (the file) */
  size_t file_off;       /* for file segments: offset of base in the file */
} pb_seg;

/* ---- sort items --------------------------------------------------------- */

/* ref: bits 0–47 the logical offset of a length varint (a packet's, or an
 * FtraceEvent's inside a bundle); bits 48–63 flags. */
#define PB_REF_OFF(r) ((r) & 0xffffffffffffull)
#define PB_REF_FLAGS(r) ((uint32_t)((r) >> 48))
#define PB_REF(off, flags) ((uint64_t)(off) | ((uint64_t)(flags) << 48))
enum {
  PB_IF_AUX = 1,         /* a track event with an aux record */
};

typedef struct pb_item {
  int64_t ts;
  uint64_t ref;
} pb_item;

/* compact_sched records, decoded at read time (32 bytes). */
enum { PB_CS_SWITCH = 1, PB_CS_WAKING = 2 };
typedef struct pb_csched {
  int64_t ts;
  int64_t a;             /* switch: prev_state; waking: target_cpu */
  int32_t pid;           /* switch: next_pid; waking: pid */
  int32_t prio;
  uint32_t comm;         /* string id (IM_NULL_STR when bad) */
  uint16_t kind;
  uint16_t flags;        /* waking: common_flags */
} pb_csched;

enum { PB_STREAM_GENERIC, PB_STREAM_TRACK_EVENT, PB_STREAM_FTRACE, PB_STREAM_COMPACT };

typedef struct pb_heap_ent {
  int64_t ts;
  int32_t stream;
  int32_t done;          /* the stream has no item left */
} pb_heap_ent;

typedef struct pb_stream {
  int kind;
  uint32_t cpu;
  size_t esz;            /* sizeof(pb_item) or sizeof(pb_csched) */
  uint8_t *v;
  size_t n, cap;
  int64_t last_ts;
  int unsorted;
  size_t pos;            /* merge cursor */
  uint64_t *sufmin;      /* per block of PB_SUF_BLOCK items: the least logical
                            offset referred to from that block on (or NULL) */
  size_t released;       /* bytes of v handed back */
} pb_stream;
enum { PB_SUF_SHIFT = 12, PB_STR_CACHE = 4096, PB_LOC_CACHE = 256, PB_LOC_BYTES = 160 };

/* ---- sequences ---------------------------------------------------------- */

/* What a packet sees of its sequence: interned data epoch, defaults and
 * the thread descriptor. A new generation starts when one changes. */
typedef struct pb_gen {
  uint64_t lstart;
  uint32_t epoch;
  pb_span defaults;      /* TracePacketDefaults copy (arena), n = 0 none */
  int has_td;
  int32_t td_pid, td_tid;
} pb_gen;

typedef struct pb_seq {
  uint32_t id;           /* trusted_packet_sequence_id */
  int valid;             /* incremental state valid */
  int ever_cleared;
  uint32_t epoch;        /* bumps at each clear */
  PB_VEC(pb_gen) gens;
  /* read-time view of the current defaults */
  uint32_t def_clock;    /* 0 = none */
  int has_def_track;
  uint64_t def_track_uuid;
  uint64_t def_extra[8];
  int n_def_extra;
  uint64_t def_extra_d[8];
  int n_def_extra_d;
  /* TrackEvent delta state (§3.3) */
  int ts_valid;
  int64_t ref_ts, ref_tt, ref_ti;
  /* the sequence's thread descriptor */
  int has_td;
  int32_t td_pid, td_tid;
} pb_seq;

/* An interned message, copied out of the buffer (so the buffer can be
 * released before the packets that refer to it are parsed). */
typedef struct pb_interned {
  uint64_t iid;
  uint32_t seq, epoch;
  uint32_t field;
  uint32_t len;
  const uint8_t *p;
  uint32_t str;          /* cached string id of field 2 (name / str), or ~0 */
} pb_interned;

/* A track event's values resolved at read time. */
enum { PB_AUX_TT = 1, PB_AUX_TI = 2, PB_AUX_VALUE = 4 };
typedef struct pb_aux {
  uint64_t lpos;
  int64_t tt, ti;
  double value;
  uint32_t flags;
  uint32_t extra_first, nextra;   /* into imp->extra */
} pb_aux;
typedef struct pb_extra {
  uint64_t uuid;
  double value;
} pb_extra;

/* ---- clocks ------------------------------------------------------------- */

enum {
  PB_CLK_REALTIME = 1, PB_CLK_MONOTONIC = 3, PB_CLK_MONOTONIC_RAW = 5, PB_CLK_BOOTTIME = 6,
  PB_CLK_TRACE_FILE = 11,
};

typedef struct pb_clock {
  uint64_t key;          /* clock id, sequence-scoped ids: (seq << 32) | id */
  int64_t unit;          /* unit_multiplier_ns */
  int incremental;
  int64_t last;          /* incremental: last absolute value */
} pb_clock;

/* Snapshot values of one (a, b) clock pair, ordered by a. */
typedef struct pb_clock_pair {
  uint64_t a, b;
  PB_VEC(int64_t) va;
  PB_VEC(int64_t) vb;
  int unsorted;
} pb_clock_pair;

typedef struct pb_clocks {
  uint64_t trace_clock;
  int trace_clock_set, converted_any;
  PB_VEC(pb_clock) clocks;
  PB_VEC(pb_clock_pair) pairs;
  int nsnapshots;
  /* one-entry path cache */
  uint64_t cache_src;
  int cache_hops;
  uint64_t cache_path[4];   /* pair index per hop */
} pb_clocks;

/* ---- track descriptor reservations ---------------------------------------- */

typedef struct pb_reservation {
  uint64_t uuid, parent;
  int kind;              /* 0 plain, 1 process, 2 thread, 3 counter */
  int32_t pid, tid;
  int is_counter, incremental;
  int64_t unit_mult;
  uint32_t seq;          /* sequence of an incremental counter */
  double latest;
  /* parse time: what the descriptor said (§3.7) */
  int described;
  uint32_t name;         /* name / static_name / atrace_name, IM_NULL_STR */
  int disallow_merging;
  int merge;             /* sibling_merge_behavior: 0/1 name, 2 none, 3 key */
  uint32_t merge_key;    /* sibling_merge_key, IM_NULL_STR */
  int has_merge_key_int;
  int64_t merge_key_int;
  int child_ordering;    /* 0 none, 1 lexicographic, 2 chronological, 3 explicit */
  int has_rank;
  int64_t rank;
  uint32_t description;
  int first_on_seq;
  int ctype, cunit;      /* CounterDescriptor type / unit */
  uint32_t unit_name, y_axis, categories;
  int is_state;
  /* parse time: what it resolved to */
  int64_t track;         /* slice or counter track once created, IM_NONE */
  int64_t state_track;   /* state track once created (STATE events), IM_NONE */
  int64_t upid, utid;    /* own process / thread, IM_NONE */
  int resolved;          /* utid/upid looked up */
} pb_reservation;

/* A packet whose clock did not convert yet: retried at end of file. */
typedef struct pb_deferred {
  uint64_t lpos;
  int64_t raw_ts;
  uint32_t clock_id, seq;
  int32_t stream;
  uint32_t flags;
} pb_deferred;

/* ---- the importer ----------------------------------------------------------- */

typedef struct pb_imp {
  im_trace *t;
  rt_strpool *sp;
  im_input *in;          /* the file's bytes (not owned) */
  rt_arena arena;        /* interned copies, defaults */
  PB_VEC(pb_seg) segs;
  uint64_t lpos_end;     /* logical size so far */

  PB_VEC(pb_seq) seqs;
  im_map seq_by_id;      /* sequence id → index */
  uint32_t last_seq_id;  /* pb_seq_get's one-entry cache: id and index + 1 */
  size_t last_seq1;
  PB_VEC(pb_interned) interned;
  im_map interned_by_key;/* hash of (seq, epoch, field, iid) → chain head */
  PB_VEC(int64_t) interned_next;

  pb_clocks clk;

  PB_VEC(pb_stream) streams;
  pb_heap_ent *heap;     /* merge: tournament tree of (next ts, stream) */
  size_t heap_n;         /* its leaves (streams rounded up to a power of two) */
  int32_t stream_ftrace[1024];        /* cpu → stream, -1 */
  int32_t stream_compact[2][1024];    /* [switch, waking][cpu] → stream, -1 */
  PB_VEC(pb_aux) aux;
  PB_VEC(pb_extra) extra;
  size_t aux_cursor;
  /* ftrace bundle marks: logical offset of each bundle → its sequence and
   * read-time context */
  PB_VEC(uint64_t) bundle_lpos;
  PB_VEC(uint32_t) bundle_seq;
  PB_VEC(uint32_t) comm_tmp;   /* a compact_sched intern table as string ids */

  PB_VEC(pb_reservation) res;
  im_map res_by_uuid;
  uint64_t last_uuid;    /* pb_res_get's one-entry cache: uuid and index + 1 */
  size_t last_res1;

  PB_VEC(pb_deferred) deferred;   /* clock not convertible yet */

  int64_t max_ts;        /* largest timestamp pushed, for packets without one */
  int64_t npackets;      /* packets read (1-based number of the last one) */
  int64_t tracing_started_ns;
  int preserve_ftrace;
  int64_t ftrace_data_start;   /* ftrace_latest_data_start_ns */
  int32_t ftrace_cpu_seen_start[1024];   /* 1 once a bundle set the data start */

  int64_t stats[IM_NSTATS];    /* counted while reading, added at the end */
  char damage[256];      /* first damage, for the load message */
  int kernel_major, kernel_minor;
  /* parse pass */
  im_map flow_live;      /* TrackEvent flow ids begun and not terminated */
  im_map uuid_by_utid, uuid_by_upid;   /* §3.7.3: one descriptor per thread/process */
  im_map async_names;    /* legacy async cookie → the first name seen with it */
  int64_t default_track; /* the "Default Track" (uuid 0), IM_NONE until used */
  int64_t compact_last[1024];   /* compact_sched: utid last switched in per cpu, -1 */
  im_args *scratch;
  uint32_t *ftrace_str;  /* per proto_ftrace_events.def row: its name's string id */
  uint32_t s_sched_waking, s_comm, s_pid, s_prio, s_target_cpu;
  /* compact_sched wakings: their ftrace_event arg sets by value (set + 1,
   * 0 = empty), as sched.c keeps those of switches */
  struct { uint32_t comm; int32_t pid, prio; int64_t cpu, set1; } waking_cache[1024];
  uint32_t loc_keys[3][3];   /* source location arg keys by prefix and leaf, id + 1 */
  /* inline source locations repeat byte for byte (one per call site):
   * the args of the last ones seen, by their bytes */
  struct pb_loc_cache {
    uint32_t len;            /* 0: empty */
    int nargs;
    uint8_t bytes[PB_LOC_BYTES];
    im_arg args[3];
  } loc_cache[PB_LOC_CACHE];
  struct { uint64_t idx1; } intern_cache[1024];   /* pb_intern_get: index + 1 into interned */
  /* a direct-mapped cache in front of the string pool (pb_str) */
  struct { uint32_t id, len; uint64_t head, tail; } str_cache[PB_STR_CACHE];
} pb_imp;

/* The string id of bytes p[0, n): a small cache in front of the pool for
 * the strings an importer meets again and again (names, arg keys, file
 * names), checked by comparing the bytes (proto_seq.c). */
uint32_t pb_str(pb_imp *m, const void *p, size_t n);

/* ---- proto_seq.c ------------------------------------------------------------- */

pb_seq *pb_seq_get(pb_imp *m, uint32_t id);        /* created on first use */
uint32_t pb_seq_index(const pb_imp *m, const pb_seq *s);
/* Starts a new generation of s at logical offset lpos from its current
 * epoch, defaults and thread descriptor. */
int pb_seq_new_gen(pb_imp *m, pb_seq *s, uint64_t lpos, pb_span defaults);
/* The generation a packet of s at lpos belongs to. */
const pb_gen *pb_seq_gen_at(const pb_seq *s, uint64_t lpos);
/* Records an interned message (field f of InternedData, payload msg). */
int pb_intern_put(pb_imp *m, uint32_t seq, uint32_t epoch, uint32_t field, pb_span msg);
/* The interned message (field, iid) of that generation, or NULL. */
pb_interned *pb_intern_get(pb_imp *m, uint32_t seq, uint32_t epoch, uint32_t field,
                           uint64_t iid);
/* The string field `strfield` of an interned message as a string id (cached),
 * IM_NULL_STR when absent. */
uint32_t pb_intern_str(pb_imp *m, pb_interned *e, uint32_t strfield);

/* ---- proto_clock.c ------------------------------------------------------------ */

void pb_clock_snapshot(pb_imp *m, pb_span snap, uint32_t seq);
/* Converts ts of clock id (sequence seq for ids 64–127) to trace time.
 * Returns 1, or 0 when no path exists yet. */
int pb_clock_convert(pb_imp *m, uint32_t clock_id, uint32_t seq, int64_t ts, int64_t *out);
void pb_clocks_free(pb_clocks *c);

/* ---- proto_sort.c ---------------------------------------------------------------- */

pb_stream *pb_stream_generic(pb_imp *m);
pb_stream *pb_stream_track_event(pb_imp *m);
pb_stream *pb_stream_ftrace(pb_imp *m, uint32_t cpu);
pb_stream *pb_stream_compact(pb_imp *m, uint32_t cpu, int kind);
int pb_stream_push(pb_stream *s, const void *elem);
/* Sorts every stream; then pb_merge_next yields items in (ts, stream,
 * arrival) order: *stream the stream index, *elem the element. */
int pb_sort_streams(pb_imp *m);
void pb_merge_begin(pb_imp *m);
int pb_merge_next(pb_imp *m, int *stream, const void **elem);
void pb_merge_end(pb_imp *m);
void pb_streams_free(pb_imp *m);
/* Hands back the pages of the input and of the streams that the merge
 * has passed (nothing before them is read again). */
void pb_release_consumed(pb_imp *m);
/* Stable sort of n elements of size esz by their leading int64 ts. */
int pb_sort_by_ts(void *v, size_t n, size_t esz);
/* The same for 16-byte items by LSD radix sort. */
int pb_radix_items(pb_item *v, size_t n);

/* ---- proto_read.c --------------------------------------------------------------- */

/* Reads the whole buffer (the read pass). Returns 1, or 0 on out of memory. */
int pb_read_all(pb_imp *m);
/* The bytes at logical offset lpos (to the end of its segment): *n. */
const uint8_t *pb_at(const pb_imp *m, uint64_t lpos, size_t *n);
/* The length-delimited record whose length varint is at lpos. */
int pb_record_at(const pb_imp *m, uint64_t lpos, pb_span *out);
void pb_damage(pb_imp *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void pb_stat(pb_imp *m, im_stat s) { m->stats[s]++; }

/* Pushes a packet to a stream after converting its timestamp; defers it
 * when the clock does not convert yet (at_eof: drop instead). */
int pb_push_packet(pb_imp *m, pb_stream *s, uint64_t lpos, uint32_t clock_id, uint32_t seq,
                   int64_t ts, uint32_t flags, int at_eof);

/* ---- proto_te_read.c / proto_ftrace_read.c ------------------------------------------- */

/* A TrackEvent packet at read time: resolves its times and counter values
 * and pushes it. pkt_ts < 0: the packet has no timestamp. */
int pb_te_read(pb_imp *m, pb_seq *s, uint64_t lpos, pb_span te, int has_ts, int64_t pkt_ts,
               uint32_t clock_id, int at_eof);
/* Track descriptor reservation (read time, §3.7.1). */
void pb_td_reserve(pb_imp *m, pb_seq *s, pb_span td);
/* An ftrace bundle: events into the per-CPU streams. */
int pb_ftrace_read(pb_imp *m, pb_seq *s, uint64_t lpos, pb_span bundle);
/* The aux record of a track event at lpos (NULL if none). */
const pb_aux *pb_aux_at(pb_imp *m, uint64_t lpos);
/* The sequence index of the ftrace bundle holding logical offset lpos. */
uint32_t pb_bundle_seq_at(const pb_imp *m, uint64_t lpos);
pb_reservation *pb_res_get(pb_imp *m, uint64_t uuid);

/* ---- the sorted pass -------------------------------------------------------------------- */

/* What a parser knows of the packet it is handed. */
typedef struct pb_pctx {
  int64_t ts;
  uint64_t lpos;
  pb_span pkt;           /* the TracePacket */
  uint32_t seq_id, seq_idx;
  const pb_seq *seq;
  const pb_gen *gen;
  int first_on_seq;
} pb_pctx;

int pb_parse_all(pb_imp *m);
/* proto_system.c */
void pb_parse_process_tree(pb_imp *m, const pb_pctx *c, pb_span pt);
void pb_parse_process_stats(pb_imp *m, const pb_pctx *c, pb_span ps);
void pb_parse_sys_stats(pb_imp *m, const pb_pctx *c, pb_span ss);
/* proto_descriptor.c */
void pb_parse_track_descriptor(pb_imp *m, const pb_pctx *c, pb_span td);
void pb_parse_legacy_process(pb_imp *m, const pb_pctx *c, pb_span pd);
void pb_parse_legacy_thread(pb_imp *m, const pb_pctx *c, pb_span td);
/* How an event's uuid resolved (§3.7.3). */
typedef struct pb_resolved {
  int ok;
  int scope;             /* PB_SCOPE_* */
  int is_root;
  int64_t utid, upid;
  pb_reservation *r;     /* NULL: never described */
} pb_resolved;
enum { PB_SCOPE_GLOBAL, PB_SCOPE_PROCESS, PB_SCOPE_THREAD };
pb_resolved pb_resolve_uuid(pb_imp *m, uint64_t uuid);
/* The slice track of a resolved uuid for an event named `name`; delta as
 * im_async_track (+1 begin, -1 end, 0 instant/look up). */
int64_t pb_slice_track(pb_imp *m, uint64_t uuid, const pb_resolved *rs, uint32_t name, int delta);
/* The state track of a uuid (§1.5 `*_state_track_event`), IM_NONE if it
 * does not resolve. */
int64_t pb_state_track(pb_imp *m, uint64_t uuid);
/* The counter track of a uuid, IM_NONE (stat counted) if not a counter. */
int64_t pb_counter_track(pb_imp *m, uint64_t uuid);
/* proto_track_event.c */
void pb_parse_track_event(pb_imp *m, const pb_pctx *c, pb_span te, const pb_aux *aux);
/* proto_ftrace.c */
void pb_ftrace_init(pb_imp *m);   /* interned names of the ftrace table */
void pb_parse_ftrace_event(pb_imp *m, uint32_t cpu, int64_t ts, pb_span ev, uint64_t lpos);
void pb_parse_compact(pb_imp *m, uint32_t cpu, const pb_csched *r);

#endif
