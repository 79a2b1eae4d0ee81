-- sched.thread_cpu_time: CPU time per thread from the scheduler.
--
--   sched_thread_cpu_time(utid, tid, thread_name, upid, process_name,
--                         cpu_time, sched_count)
--
-- cpu_time is the sum of the thread's `sched` slices in ns; a slice still
-- running at the end of the trace (dur = -1) counts up to trace_end().
-- sched_count is the number of slices. Every thread that ran (the idle
-- thread, utid 0, included), most CPU time first.
CREATE PERFETTO TABLE _sched_thread_cpu AS
FROM sched
|> EXTEND CASE WHEN dur < 0 THEN max(trace_end() - ts, 0) ELSE dur END AS ran
|> AGGREGATE SUM(ran) AS cpu_time, COUNT(*) AS sched_count GROUP BY utid
|> ORDER BY utid;

CREATE PERFETTO TABLE sched_thread_cpu_time AS
SELECT c.utid, t.tid, t.name AS thread_name, t.upid, p.name AS process_name,
       c.cpu_time, c.sched_count
FROM _sched_thread_cpu c
LEFT JOIN thread t ON t.utid = c.utid
LEFT JOIN process p ON p.upid = t.upid
ORDER BY c.cpu_time DESC, c.utid;
