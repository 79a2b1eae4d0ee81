-- Includes another module, and uses what it defines.
INCLUDE PERFETTO MODULE testpkg.basic;
CREATE PERFETTO VIEW testpkg_sum AS
  SELECT SUM(testpkg_double(n)) AS total, testpkg_triple!(1) AS three FROM testpkg_numbers;
