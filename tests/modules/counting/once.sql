-- Counts its runs in a SQLite table the test made: once per engine.
INSERT INTO include_runs VALUES ('counting.once');
