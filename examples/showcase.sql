-- examples/showcase.sql: make demo's questions over the sample trace
-- (pipejit --sample-trace --echo --compare -q examples/showcase.sql).

-- Q1. How deep do the call stacks go, and where does long work sit?
FROM slice
  |> WHERE dur > 1000
  |> AGGREGATE COUNT(*) AS slices, SUM(dur) AS total_dur, MAX(dur) AS longest
     GROUP BY depth
  |> ORDER BY depth
  |> LIMIT 12;

-- Q2. Which ten names take the most time, how often do they run, and how
-- deeply nested are they?
FROM slice
  |> AGGREGATE SUM(dur) AS total_dur, COUNT(*) AS calls, AVG(depth) AS avg_depth
     GROUP BY name
  |> ORDER BY total_dur DESC
  |> LIMIT 10;

-- Q3. Which threads are busiest? A pipeline sums top-level time per
-- track into a columnar table; SQL names each track's thread and process
-- through thread_track (a slice's track_id is a track, whose utid is the
-- thread: the same join is right on imported traces).
CREATE PERFETTO TABLE track_busy AS
FROM slice
  |> WHERE depth = 0
  |> AGGREGATE COUNT(*) AS top_level, SUM(dur) AS busy GROUP BY track_id;

SELECT p.name AS process, t.name AS thread, b.top_level, b.busy
FROM track_busy b
JOIN thread_track tt ON tt.id = b.track_id
JOIN thread t USING (utid)
JOIN process p USING (upid)
ORDER BY b.busy DESC
LIMIT 8;

-- Q4. How much did each CPU run, and what was its longest slice?
FROM sched
  |> EXTEND dur / 1000 AS dur_us
  |> AGGREGATE COUNT(*) AS slices, SUM(dur_us) AS busy_us, MAX(dur_us) AS longest_us
     GROUP BY cpu
  |> ORDER BY cpu;

-- Q5. Which top-level spans have the most work beneath them? TREE
-- ACCUMULATE UP sums over every slice's subtree (the slice table is
-- parent-first, so pipejit reads it backwards and buffers nothing).
FROM slice
  |> TREE ACCUMULATE UP SUM(dur) AS subtree_dur, COUNT(*) AS subtree_slices
  |> WHERE depth = 0
  |> ORDER BY subtree_slices DESC
  |> LIMIT 5
  |> SELECT id, name, dur, subtree_slices;

-- Q6. How long did each CPU run at each frequency? (interval intersection
-- of sched and cpu_frequency, per CPU)
INTERVAL INTERSECTION OF (sched AS s, cpu_frequency AS f) PER cpu
  |> AGGREGATE SUM(dur) AS running_ns GROUP BY cpu, f.freq AS freq
  |> ORDER BY running_ns DESC
  |> LIMIT 8;
