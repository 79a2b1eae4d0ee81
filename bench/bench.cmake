# bench.cmake — included from the top-level CMakeLists.txt after the
# pipejit-bench target: the hand-written C references of workload `fused`
# and the agg_* workloads are the speed-of-light yardstick, so they are
# built like a careful C programmer would ship them.
set_source_files_properties(${CMAKE_SOURCE_DIR}/bench/ref_fused.c ${CMAKE_SOURCE_DIR}/bench/ref_agg.c
                            PROPERTIES COMPILE_OPTIONS "-O3;-march=native")

# ctest bench_report_quick: `pipejit-bench --quick --report --svg` on a few
# small workloads writes a well-formed REPORT.md and report.svg.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME bench_report_quick
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/bench/check_report.py
                   $<TARGET_FILE:pipejit-bench> ${CMAKE_BINARY_DIR}/bench_report_quick)
endif()

# ctest bench_peers_quick: workload peers at 20k rows against SQLite (no
# DuckDB: the tests never need it): every checksum must agree.
add_test(NAME bench_peers_quick
         COMMAND ${CMAKE_COMMAND} -E env --unset=PJ_DUCKDB_LIB $<TARGET_FILE:pipejit-bench>
                 --workload peers --sizes 20000 --repeat 1 --sql-cap 20
                 --peers-report ${CMAKE_BINARY_DIR}/bench_peers_quick.md
                 --peers-svg ${CMAKE_BINARY_DIR}/bench_peers_quick.svg)
