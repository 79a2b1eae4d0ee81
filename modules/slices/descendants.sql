-- slices.descendants: the slices below a slice.
--
--   slice_descendants(slice_id) → TABLE(id, ts, dur, track_id, category,
--                                       name, depth, parent_id, arg_set_id)
--
-- Its children, their children, … in the order of `slice` (by id).
-- Empty for a leaf or an id that is no slice.
--
-- Descendants are on the slice's own track (TRACES.md §1.17), deeper, and
-- start within it: those rows (found by ts, which `slice` is sorted by)
-- are the candidates, among which the parent links are followed.
CREATE PERFETTO FUNCTION slice_descendants(slice_id LONG)
RETURNS TABLE(id LONG, ts TIMESTAMP, dur DURATION, track_id JOINID(track.id),
              category STRING, name STRING, depth LONG, parent_id JOINID(slice.id),
              arg_set_id ARGSETID) AS
WITH RECURSIVE
  root AS (SELECT id, ts, dur, track_id, depth FROM slice WHERE id = $slice_id),
  cand AS MATERIALIZED (
    -- CROSS JOIN keeps root outside, so ts bounds the scan of slice
    SELECT s.id, s.parent_id FROM root r CROSS JOIN slice s
    WHERE s.ts >= r.ts
      AND s.ts <= CASE WHEN r.dur < 0 THEN 9223372036854775807 ELSE r.ts + r.dur END
      AND s.track_id = r.track_id AND s.depth > r.depth),
  down(id) AS (
    SELECT id FROM root
    UNION ALL
    SELECT c.id FROM cand c JOIN down ON c.parent_id = down.id)
SELECT s.id, s.ts, s.dur, s.track_id, s.category, s.name, s.depth, s.parent_id, s.arg_set_id
FROM down JOIN slice s ON s.id = down.id
WHERE s.id != $slice_id
ORDER BY s.id;
