/*
 * trace_json.h — imports a Chrome JSON trace (the "trace event format")
 * into columnar tables.
 *
 * Accepted input: a JSON object with a `traceEvents` array (other keys such
 * as `metadata`, `displayTimeUnit` or `systemTraceEvents` are skipped), or a
 * bare array of events, which may lack its closing `]` (Chrome writes such
 * files when tracing stops abruptly). Plain or gzip-compressed. The file is
 * read in chunks and each event is parsed on its own, so memory follows the
 * size of the tables, not of the file.
 *
 * Tables produced (replacing tables of the same names in the catalog):
 *
 *   slice(id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id)
 *     one row per B/E pair, X event and instant (i/I, dur 0). ts and dur in
 *     ns (the file's microseconds * 1000, rounded). A B never closed keeps
 *     dur = -1, as Perfetto does, and later slices of its thread nest under
 *     it. An X without dur (Chrome writes those for events still running
 *     when tracing stopped) also gets dur = -1 but nests as an instant.
 *     Ids are ordered by (ts, track, nesting order), so every parent's id
 *     is below its children's (the fast tier of TREE ACCUMULATE).
 *   thread(utid, tid, name, upid)      threads in order of first appearance
 *   process(upid, pid, name)           names from M process_name/thread_name
 *   track(id, type, utid, upid)        type 'thread' (one per thread with
 *                                      slices), 'process' (process-scoped
 *                                      instants) or 'global' (global ones)
 *   thread_track(id, utid)             the thread tracks, for Perfetto joins
 *   args(id, arg_set_id, flat_key, key, value_type, display_value)
 *     the `args` of slice events flattened as Perfetto does: key
 *     "args.a.b[1]", flat_key "args.a.b"; value_type int, real, string,
 *     bool or null; an E event's args join its slice's set.
 *
 * Other phases (counters, async, flows, samples, objects …) are counted as
 * ignored; so is `systemTraceEvents` (Fuchsia context switches, ftrace
 * text), which this importer does not read.
 */
#ifndef PJ_TRACE_JSON_H
#define PJ_TRACE_JSON_H

#include "../runtime/rt.h"

typedef struct rt_trace_stats {
  int64_t events;         /* elements of the event arrays */
  int64_t begin;          /* B events (each one slice) */
  int64_t complete;       /* X events */
  int64_t instants;       /* i/I events */
  int64_t metadata;       /* M events */
  int64_t ignored;        /* events of other phases */
  int64_t malformed;      /* not an object, or ph/ts/dur/pid/tid of the wrong type */
  int64_t unmatched_end;  /* E events with no open B on their thread (dropped) */
  int64_t unclosed;       /* B events never closed (kept, dur = -1) */
  int64_t no_dur;         /* X events without dur (kept, dur = -1) */
  int64_t slices, threads, processes, args;
  int system_events_skipped; /* 1 when the file had systemTraceEvents */
} rt_trace_stats;

/* Imports the trace at path into cat, interning strings into sp. stats
 * (may be NULL) receives the counts above. Malformed events are counted,
 * not fatal; a file that is not JSON, is cut in the middle of an event, or
 * cannot be read fails with err set ("TRACE: …") and the catalog
 * unchanged. Returns 1 on success, 0 on failure. */
int rt_trace_json_load(rt_catalog *cat, rt_strpool *sp, const char *path, rt_trace_stats *stats,
                       rt_err *err);

#endif
