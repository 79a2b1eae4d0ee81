/*
 * sample.h — a deterministic, realistic sample trace for demos, tests and
 * benchmarks.
 */
#ifndef PJ_SAMPLE_H
#define PJ_SAMPLE_H

#include "../runtime/rt.h"

/* Generates the tables below (finalized, put into cat, replacing tables of
 * the same names), interning strings into sp. The same seed always gives
 * the same tables, on every platform (fixed PRNG, no libc rand()).
 *
 *   slice(id, ts, dur, track_id, parent_id, depth, name, category)
 *     nslices rows; ids in parent-first (DFS) order per root, so a parent's
 *     id is below its children's; parent_id NULL for roots; children lie
 *     inside their parent in time and siblings do not overlap; one track
 *     per thread (track_id = utid); depth up to 30, mostly below 10.
 *   thread(utid, tid, name, upid)         64 threads
 *   thread_track(id, name, utid)          one track per thread (id = utid
 *     here, unlike imported traces: join slices to threads through it)
 *   process(upid, pid, name)              12 processes
 *   sched(id, ts, dur, cpu, utid, end_state, priority)
 *     about nslices rows over 8 CPUs, ordered by ts, never overlapping on
 *     one CPU, covering most of the slices' time span with short gaps.
 *   cpu_frequency(id, ts, dur, cpu, freq)
 *     about nslices / 10 rows, ordered by ts; per CPU the intervals are
 *     contiguous (each starts where the previous ended); freq in kHz.
 *
 * Returns 1, or 0 with err set ("SAMPLE TRACE: …") for a negative or huge
 * nslices or when memory runs out. */
int rt_sample_trace(rt_catalog *cat, rt_strpool *sp, int64_t nslices, rt_err *err);
int rt_sample_trace_seeded(rt_catalog *cat, rt_strpool *sp, int64_t nslices, uint64_t seed,
                           rt_err *err);

#define RT_SAMPLE_SEED 0x7069706a6974ull   /* "pipjit" */

#endif
