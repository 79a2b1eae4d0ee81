-- examples/trace_slices.sql: make demo's questions over an imported trace
-- with slices (pipejit TRACE --echo --compare -q examples/trace_slices.sql).
-- Threads are named through thread_track: a slice's track_id is a track,
-- and the track's utid is the thread.

-- S1. What is in this trace?
SELECT (SELECT count(*) FROM slice) AS slices,
       (SELECT count(*) FROM thread_track) AS thread_tracks,
       (SELECT count(*) FROM process) AS processes,
       (SELECT (max(ts + dur) - min(ts)) / 1e6 FROM slice WHERE dur >= 0) AS span_ms;

-- S2. How deep do the call stacks go, and where is the long work?
FROM slice
  |> WHERE dur >= 0
  |> AGGREGATE COUNT(*) AS slices, SUM(dur) AS total, MAX(dur) AS longest GROUP BY depth
  |> SELECT depth, slices, total / 1e6 AS total_ms, longest / 1e6 AS longest_ms
  |> ORDER BY depth
  |> LIMIT 8;

-- S3. Which threads are busiest (time in top-level slices)?
CREATE PERFETTO TABLE track_busy AS
FROM slice
  |> WHERE depth = 0 AND dur >= 0
  |> AGGREGATE COUNT(*) AS top_level, SUM(dur) AS busy GROUP BY track_id;

SELECT p.name AS process, t.name AS thread, t.utid, b.top_level, b.busy / 1e6 AS busy_ms
FROM track_busy b
JOIN thread_track tt ON tt.id = b.track_id
JOIN thread t USING (utid)
LEFT JOIN process p USING (upid)
ORDER BY b.busy DESC, t.utid
LIMIT 6;

-- S4. Where does the time go? The names with the most self time (time
-- not spent in child slices; module slices.self_time).
INCLUDE PERFETTO MODULE slices.self_time;
FROM slice_self_time
  |> WHERE self_dur IS NOT NULL
  |> AGGREGATE SUM(self_dur) AS self, COUNT(*) AS calls GROUP BY name
  |> ORDER BY self DESC
  |> SELECT name, self / 1e6 AS self_ms, calls
  |> LIMIT 8;

-- S5. Which top-level tasks have the most work beneath them, and on
-- which thread? (TREE ACCUMULATE UP over every subtree)
CREATE PERFETTO TABLE heavy_roots AS
FROM slice
  |> TREE ACCUMULATE UP COUNT(*) AS subtree_slices
  |> WHERE depth = 0 AND dur >= 0
  |> ORDER BY subtree_slices DESC, id
  |> LIMIT 5;

SELECT t.name AS thread, r.name, r.dur / 1e6 AS dur_ms, r.subtree_slices
FROM heavy_roots r
JOIN thread_track tt ON tt.id = r.track_id
JOIN thread t USING (utid)
ORDER BY r.subtree_slices DESC, r.id;
