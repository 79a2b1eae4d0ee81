-- counters.intervals: counter samples as the intervals they hold for.
--
--   counter_leading_intervals!(counters)   a macro over any table or
--     subquery with id, ts, track_id, value: one row per sample,
--     (id, ts, dur, track_id, value, next_value, delta_value)
--   counter_intervals                      the same over `counter`
--
-- A sample holds from its ts until the next sample of the same track
-- (dur = next ts - ts); the last one of a track until the end of the
-- trace (trace_end() - ts, never below 0). next_value is the next
-- sample's value (NULL for the last), delta_value the change since the
-- previous sample (NULL for the first). trace_processor's stdlib has the
-- same macro, counter_leading_intervals!.
CREATE PERFETTO MACRO counter_leading_intervals(counters TableOrSubquery)
RETURNS TableOrSubquery AS (
  SELECT id, ts,
         coalesce(LEAD(ts) OVER w, max(trace_end(), ts)) - ts AS dur,
         track_id, value,
         LEAD(value) OVER w AS next_value,
         value - LAG(value) OVER w AS delta_value
  FROM $counters
  WINDOW w AS (PARTITION BY track_id ORDER BY ts, id)
);

CREATE PERFETTO TABLE counter_intervals AS
SELECT * FROM counter_leading_intervals!(counter) ORDER BY id;
