-- slices.process_slice: slices on process tracks (async slices, process
-- instants) with their process.
--
--   process_slice(id, ts, dur, category, name, track_id, process_name,
--                 upid, pid, depth, parent_id, arg_set_id, thread_ts,
--                 thread_dur)
--
-- A slice is on a process track when its track_id is a process_track's id
-- (TRACES.md §1.5).
CREATE PERFETTO VIEW process_slice AS
SELECT s.id, s.ts, s.dur, s.category, s.name, s.track_id,
       p.name AS process_name, p.upid, p.pid,
       s.depth, s.parent_id, s.arg_set_id, s.thread_ts, s.thread_dur
FROM slice s
JOIN process_track pt ON s.track_id = pt.id
JOIN process p ON p.upid = pt.upid;
