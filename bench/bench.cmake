# bench.cmake — included from the top-level CMakeLists.txt after the
# pipejit-bench target: the hand-written C reference of workload `fused`
# is the speed-of-light yardstick, so it is built like a careful C
# programmer would ship it.
set_source_files_properties(${CMAKE_SOURCE_DIR}/bench/ref_fused.c PROPERTIES COMPILE_OPTIONS "-O3;-march=native")
