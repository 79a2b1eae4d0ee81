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
