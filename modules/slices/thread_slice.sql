-- slices.thread_slice: slices on thread tracks with their thread and
-- process (trace_processor's stdlib slices.with_context has the same
-- view).
--
--   thread_slice(id, ts, dur, category, name, track_id, thread_name, utid,
--                tid, process_name, upid, pid, depth, parent_id,
--                arg_set_id, thread_ts, thread_dur)
--
-- A slice is on a thread track when its track_id is a thread_track's id
-- (TRACES.md §1.5); a thread without a known process has NULL process
-- columns.
CREATE PERFETTO VIEW thread_slice AS
SELECT s.id, s.ts, s.dur, s.category, s.name, s.track_id,
       t.name AS thread_name, t.utid, t.tid,
       p.name AS process_name, p.upid, p.pid,
       s.depth, s.parent_id, s.arg_set_id, s.thread_ts, s.thread_dur
FROM slice s
JOIN thread_track tt ON s.track_id = tt.id
JOIN thread t ON t.utid = tt.utid
LEFT JOIN process p ON p.upid = t.upid;
