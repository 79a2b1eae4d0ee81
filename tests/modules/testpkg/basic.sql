-- A module for tests/queries/perfetto_include.test: one of each thing.
CREATE PERFETTO FUNCTION testpkg_double(x LONG) RETURNS LONG AS SELECT $x * 2;
CREATE PERFETTO MACRO testpkg_triple(x Expr) RETURNS Expr AS ($x * 3);
CREATE PERFETTO TABLE testpkg_numbers AS SELECT 1 AS n UNION ALL SELECT 2 UNION ALL SELECT 3;
CREATE PERFETTO VIEW testpkg_big AS FROM testpkg_numbers |> WHERE n > 1;
