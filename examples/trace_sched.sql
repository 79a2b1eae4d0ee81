-- examples/trace_sched.sql: make demo's questions over an imported trace
-- with scheduling data (pipejit TRACE --echo --compare -q
-- examples/trace_sched.sql). sched.utid is a thread, so it joins thread
-- directly.

-- C1. What is in this trace?
SELECT (SELECT count(*) FROM sched) AS sched_slices,
       (SELECT count(DISTINCT cpu) FROM sched) AS cpus,
       (SELECT count(*) FROM thread) AS threads,
       (SELECT (max(ts + dur) - min(ts)) / 1e6 FROM sched WHERE dur >= 0) AS span_ms;

-- C2. How busy was each CPU? (The idle threads do not count: Linux's
-- swapper is utid 0, Fuchsia has an "idle N" thread per CPU.)
CREATE PERFETTO TABLE busy_sched AS
SELECT s.ts, s.dur, s.cpu, s.utid, s.end_state
FROM sched s JOIN thread t USING (utid)
WHERE s.utid != 0 AND s.dur >= 0 AND NOT coalesce(t.name GLOB 'idle [0-9]*', 0);

FROM busy_sched
  |> AGGREGATE COUNT(*) AS slices, SUM(dur) AS busy, MAX(dur) AS longest GROUP BY cpu
  |> ORDER BY busy DESC
  |> SELECT cpu, slices, busy / 1e6 AS busy_ms, longest / 1e6 AS longest_ms
  |> LIMIT 8;

-- C3. Which threads got the most CPU time?
CREATE PERFETTO TABLE thread_cpu AS
FROM busy_sched
  |> AGGREGATE SUM(dur) AS cpu_ns, COUNT(*) AS runs GROUP BY utid;

SELECT p.name AS process, t.name AS thread, t.tid, c.runs, c.cpu_ns / 1e6 AS cpu_ms
FROM thread_cpu c
JOIN thread t USING (utid)
LEFT JOIN process p USING (upid)
ORDER BY c.cpu_ns DESC, t.tid
LIMIT 6;

-- C4. How do threads leave the CPU? (end_state: R preempted, S sleeping,
-- D uninterruptible, …)
FROM busy_sched
  |> AGGREGATE COUNT(*) AS slices, SUM(dur) AS ran GROUP BY end_state
  |> ORDER BY slices DESC
  |> SELECT end_state, slices, ran / 1e6 AS ran_ms;
