# The two commands of the README. Both install what is missing first
# (scripts/setup.sh), then configure and build with CMake into build/.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# ON: warnings are errors (CI: .ci/run sets it).
PJ_WERROR ?= OFF
CMAKE_FLAGS = -DPJ_WERROR=$(PJ_WERROR)

.PHONY: all setup build demo test test-asan test-tsan test-nollvm fuzz bench bench-peers install clean

all: build

setup:
	@./scripts/setup.sh

CONFIGURE = cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null

build: setup
	@$(CONFIGURE)
	@cmake --build $(BUILD) -j $(JOBS)

# The same build, quiet: the build's output goes to $(BUILD)/build.log and
# only its warnings and errors are shown (no progress or directory lines);
# then scripts/demo.sh (the showcase on the sample trace and on the real
# traces beside the checkout).
BUILD_NOISE = ^\[ *[0-9]+%\]|^g?make(\[[0-9]+\])?: (Entering|Leaving|Nothing)|^Scanning dependencies|^Consolidate compiler|^Built target
demo: setup
	@$(CONFIGURE)
	@echo "demo: building pipejit in $(BUILD)/ (the first build takes a few minutes)"
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory >$(BUILD)/build.log 2>&1; \
	  rc=$$?; grep -Ev '$(BUILD_NOISE)' $(BUILD)/build.log || true; exit $$rc
	@./scripts/demo.sh $(BUILD)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The same suite under AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan: setup
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DPJ_SANITIZE=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-asan -j $(JOBS)
	@cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

# ThreadSanitizer over the parallel paths (build-tsan/): the threads
# test and every query file on 4 threads in small morsels. Not in CI (a
# full build; ~10 minutes on 2 cores).
TSAN_TESTS = ^(test_threads|test_queries_threads)$$
test-tsan: setup
	@cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS=-fsanitize=thread \
	  -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread \
	  $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-tsan -j $(JOBS) --target test_threads test_queries
	@cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -j $(JOBS) -R '$(TSAN_TESTS)'

# The interpreter-only build (PJ_WITH_LLVM=OFF: no LLVM linked) into
# build-nollvm/: the library, the CLI and the query files, on the
# interpreter (CI runs it; a few minutes on 2 cores).
NOLLVM_TESTS = ^(test_queries|test_cli|build_no_llvm|build_exports|cli_inputs|cli_limits)$$
test-nollvm: setup
	@cmake -S . -B build-nollvm -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPJ_WITH_LLVM=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-nollvm -j $(JOBS) --target pipejit pipejit_cli test_queries test_cli
	@cd build-nollvm && ctest --output-on-failure -j $(JOBS) -R '$(NOLLVM_TESTS)'

# Every workload at 1k … 10M rows in modes interp, jit and auto (about 20
# minutes on 2 cores; run it on a quiet machine): prints the table and
# writes bench/REPORT.md and bench/report.svg. A fast smoke check of the
# same path: make bench BENCH_ARGS=--quick (sizes up to 100k, one repeat).
BENCH_ARGS ?=
# libFuzzer targets (fuzz/) under ASan + UBSan, built with clang into
# build-fuzz/, each run for FUZZ_SECONDS from the committed seeds
# (fuzz/corpus/<target>); new inputs go to build-fuzz/corpus/<target>,
# findings to build-fuzz/artifacts/ (and make fails). FUZZ_SEED fixes
# libFuzzer's random choices so that a CI run can be repeated; FUZZ_SEED=0
# draws a seed from the clock.
FUZZ_SECONDS ?= 60
FUZZ_SEED ?= 1
FUZZ_TARGETS = fuzz_frontend fuzz_pipeline fuzz_proto fuzz_json
fuzz:
	@./scripts/setup.sh fuzz
	@CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPJ_FUZZ=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target $(FUZZ_TARGETS)
	@mkdir -p build-fuzz/artifacts
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p build-fuzz/corpus/$$t; \
	  echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
	  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ./build-fuzz/fuzz/$$t -seed=$(FUZZ_SEED) -max_total_time=$(FUZZ_SECONDS) -timeout=30 -rss_limit_mb=3072 \
	    -print_final_stats=1 -artifact_prefix=build-fuzz/artifacts/$$t- \
	    build-fuzz/corpus/$$t fuzz/corpus/$$t 2>build-fuzz/$$t.log \
	  || { tail -n 60 build-fuzz/$$t.log; exit 1; }; \
	  grep -E '^stat::(number_of_executed_units|peak_rss_mb)' build-fuzz/$$t.log; \
	done

# Then workload to_pandas (bench/bench_python.py: a 1M-row result into
# pandas, NumPy, Arrow and Python rows) into bench/REPORT_python.md, with
# Debian's python3 and its NumPy and pandas (100k rows under --quick).
PYTHON3 ?= /usr/bin/python3
BENCH_PY_ARGS ?= $(if $(findstring --quick,$(BENCH_ARGS)),--rows 100000 --repeat 1)
bench: build
	@./$(BUILD)/pipejit-bench --report bench/REPORT.md --svg bench/report.svg $(BENCH_ARGS)
	@PIPEJIT_LIB=$(BUILD)/libpipejit.so $(PYTHON3) bench/bench_python.py $(BENCH_PY_ARGS)

# Every workload that has a SQL form, in pipejit, DuckDB (1 and 2 threads)
# and SQLite on the same data in one run, checksums compared (a mismatch
# fails): the section "Peers" of bench/REPORT.md and bench/report_peers.svg;
# and workload batch (pipejit --batch over 100 traces), section "batch".
# DuckDB's C library is fetched once by scripts/fetch_duckdb.sh (npm) into
# ~/.cache/pipejit, unless PJ_DUCKDB_LIB names one. A few minutes on 2
# cores; PEERS_ARGS='--sizes 100000 --repeat 3 --peers agg_2keys,join'.
PEERS_ARGS ?=
bench-peers: build
	@lib="$${PJ_DUCKDB_LIB:-$$(./scripts/fetch_duckdb.sh)}" && \
	  PJ_DUCKDB_LIB="$$lib" ./$(BUILD)/pipejit-bench --workload peers,batch \
	    --peers-report bench/REPORT.md --peers-svg bench/report_peers.svg $(PEERS_ARGS)

# The CLI, the libraries, pipejit.h and pipejit's own modules into
# $(PREFIX) (bin/, lib/, include/, share/pipejit/modules/).
PREFIX ?= /usr/local
install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) build-asan build-nollvm build-fuzz
