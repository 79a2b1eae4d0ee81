-- slices.self_time: how long each slice ran by itself, outside its
-- children.
--
--   slice_self_time(id, ts, dur, track_id, category, name, depth,
--                   parent_id, self_dur)
--
-- self_dur = dur minus the durations of the slice's direct children, for
-- slices that ended (dur >= 0; NULL for one still open, dur = -1).
-- Children still open are not subtracted. One row per slice of `slice`,
-- as it was when the module was included.

-- Children's time per parent, sorted by parent: the join below then finds
-- a parent's row by binary search.
CREATE PERFETTO TABLE _slice_child_dur AS
FROM slice
|> WHERE parent_id IS NOT NULL AND dur >= 0
|> AGGREGATE SUM(dur) AS child_dur GROUP BY parent_id
|> ORDER BY parent_id;

CREATE PERFETTO TABLE slice_self_time AS
SELECT s.id, s.ts, s.dur, s.track_id, s.category, s.name, s.depth, s.parent_id,
       CASE WHEN s.dur >= 0 THEN s.dur - coalesce(c.child_dur, 0) END AS self_dur
FROM slice s LEFT JOIN _slice_child_dur c ON c.parent_id = s.id
ORDER BY s.id;
