-- Defines a function, then fails: the INCLUDE must leave nothing behind.
CREATE PERFETTO FUNCTION broken_ok() RETURNS LONG AS SELECT 1;
CREATE PERFETTO TABLE broken_table AS SELECT 1 AS x;
FROM broken_table |> WHERE nocol > 1;
