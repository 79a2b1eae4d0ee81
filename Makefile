# The two commands of the README. Both install what is missing first
# (scripts/setup.sh), then configure and build with CMake into build/.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all setup build demo test test-asan bench clean

all: build

setup:
	@./scripts/setup.sh

build: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@./$(BUILD)/pipejit --sample-trace --timing --compare examples/showcase.sql

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The same suite under AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan: setup
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DPJ_SANITIZE=ON >/dev/null
	@cmake --build build-asan -j $(JOBS)
	@cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

# Every workload at 1k … 10M rows in modes interp, jit and auto (about 20
# minutes on 2 cores; run it on a quiet machine): prints the table and
# writes bench/REPORT.md and bench/report.svg. A fast smoke check of the
# same path: make bench BENCH_ARGS=--quick (sizes up to 100k, one repeat).
BENCH_ARGS ?=
bench: build
	@./$(BUILD)/pipejit-bench --report bench/REPORT.md --svg bench/report.svg $(BENCH_ARGS)

clean:
	rm -rf $(BUILD) build-asan
