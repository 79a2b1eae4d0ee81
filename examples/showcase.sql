-- showcase.sql — what `make demo` runs over the sample trace
-- (pipejit --sample-trace --timing --compare examples/showcase.sql).
-- Each pipeline prints its rows; --compare prints the time it takes on the
-- interpreter and on the JIT, --timing every statement's parse, bind,
-- compile and run times.

-- How deep do the call stacks go, and where does long work sit?
-- A filter and an aggregate over every slice, grouped by depth.
FROM slice
  |> WHERE dur > 1000
  |> AGGREGATE COUNT(*) AS slices, SUM(dur) AS total_dur, MAX(dur) AS longest
     GROUP BY depth
  |> ORDER BY depth
  |> LIMIT 12;

-- The ten names that take the most time: how often they run and how
-- deeply nested they usually are.
FROM slice
  |> AGGREGATE SUM(dur) AS total_dur, COUNT(*) AS calls, AVG(depth) AS avg_depth
     GROUP BY name
  |> ORDER BY total_dur DESC
  |> LIMIT 10;

-- Materialize per-thread busy time as a columnar table...
CREATE PERFETTO TABLE thread_busy AS
FROM slice
  |> WHERE depth = 0
  |> AGGREGATE COUNT(*) AS top_level, SUM(dur) AS busy GROUP BY track_id;

-- ...and join it with the thread and process tables in plain SQL.
SELECT p.name AS process, t.name AS thread, b.top_level, b.busy
FROM thread_busy b
JOIN thread t ON t.utid = b.track_id
JOIN process p ON p.upid = t.upid
ORDER BY b.busy DESC
LIMIT 8;

-- Scheduling: how much each CPU ran, and its longest slice.
FROM sched
  |> EXTEND dur / 1000 AS dur_us
  |> AGGREGATE COUNT(*) AS slices, SUM(dur_us) AS busy_us, MAX(dur_us) AS longest_us
     GROUP BY cpu
  |> ORDER BY cpu;

-- Trees: the time spent under each span, the heaviest top-level spans.
-- TREE ACCUMULATE UP sums dur over every slice's subtree (the slice table is
-- parent-first, so pipejit reads it backwards and buffers nothing).
FROM slice
  |> TREE ACCUMULATE UP SUM(dur) AS subtree_dur, COUNT(*) AS subtree_slices
  |> WHERE depth = 0
  |> ORDER BY subtree_slices DESC
  |> LIMIT 5
  |> SELECT id, name, dur, subtree_slices;

-- Time intervals: how much each CPU ran at each frequency.
INTERVAL INTERSECTION OF (sched AS s, cpu_frequency AS f) PER cpu
  |> AGGREGATE SUM(dur) AS running_ns GROUP BY cpu, f.freq AS freq
  |> ORDER BY running_ns DESC
  |> LIMIT 8;
