-- slices.ancestors: the slices above a slice.
--
--   slice_ancestors(slice_id) → TABLE(id, ts, dur, track_id, category,
--                                     name, depth, parent_id, arg_set_id)
--
-- Its parent, the parent's parent, … up to the root, root first (by
-- depth). Empty for a root or an id that is no slice.
CREATE PERFETTO FUNCTION slice_ancestors(slice_id LONG)
RETURNS TABLE(id LONG, ts TIMESTAMP, dur DURATION, track_id JOINID(track.id),
              category STRING, name STRING, depth LONG, parent_id JOINID(slice.id),
              arg_set_id ARGSETID) AS
WITH RECURSIVE up(id) AS (
  SELECT parent_id FROM slice WHERE id = $slice_id AND parent_id IS NOT NULL
  UNION ALL
  SELECT s.parent_id FROM slice s JOIN up ON s.id = up.id WHERE s.parent_id IS NOT NULL
)
SELECT s.id, s.ts, s.dur, s.track_id, s.category, s.name, s.depth, s.parent_id, s.arg_set_id
FROM up JOIN slice s ON s.id = up.id
ORDER BY s.depth;
