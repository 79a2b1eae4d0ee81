#!/bin/sh
# demo.sh BUILD — what `make demo` shows once pipejit is built in BUILD:
#   1. examples/showcase.sql over the sample trace (1,000,000 generated
#      slices): each question with its query (--echo), its rows, and the
#      interpreter and the JIT timed on it, compile included (--compare);
#   2. the same pipelines over 10,000,000 slices, times only (at this size
#      compiling pays even for a query run once);
#   3. the real traces that come with the project (../shared/data/traces
#      beside the checkout, or TRACES=DIR): Chrome JSON and Perfetto
#      protobuf imports, examples/trace_slices.sql on those with slices and
#      examples/trace_sched.sql on those with scheduling data;
#   4. a summary: each run's --compare total and which backend won it.
# SAMPLE=N and BIG=N change the sizes (tests run it small; BIG=0 skips 2).
# Standard error joins standard output so the timing lines stay beside
# their query in a pipe too.
set -eu
B=${1:-build}
PJ=$B/pipejit
SAMPLE=${SAMPLE:-1000000}
BIG=${BIG:-10000000}
cd "$(dirname "$0")/.."
[ -x "$PJ" ] || { echo "demo: $PJ not built (make demo builds it)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/summary"

# show LABEL CMD...: runs CMD (standard error with standard output), prints
# what it printed, keeps its --compare total for the summary, and fails
# the demo when it fails.
show() {
  label=$1
  shift
  rc=0
  "$@" >"$tmp/out" 2>&1 || rc=$?
  cat "$tmp/out"
  [ "$rc" -eq 0 ] || { echo "demo: $label failed (exit status $rc)" >&2; exit "$rc"; }
  sed -n "s/^compare: \([0-9]* pipelines*: .*\)/$label: \1/p" "$tmp/out" >>"$tmp/summary"
}

heading() {
  printf '\n==============================================================================\n'
  printf '== %s\n' "$1"
  shift
  for line in "$@"; do printf '== %s\n' "$line"; done
  printf '==============================================================================\n\n'
}

heading "1. The sample trace: $SAMPLE generated slices on 64 threads, sched on 8 CPUs" \
  "   examples/showcase.sql: each question, its query, its rows; 'compare:' times" \
  "   the interpreter and the JIT on it, and says which wins for a query run once" \
  "   (the JIT's compile counted) and which when it runs again (compiled once)."
show "sample, $SAMPLE slices" "$PJ" --sample-trace="$SAMPLE" --echo --compare -q examples/showcase.sql

if [ "$BIG" -gt 0 ]; then
  heading "2. The same pipelines on $BIG slices (times only, rows not shown)" \
    "   Does compiling pay for a query run once at this size? Each verdict says, the" \
    "   compile counted. Mode auto (the default) runs inputs under 250,000 rows on" \
    "   the interpreter and compiles larger ones in the background."
  # the rows to /dev/null, the times (standard error) kept
  show "sample, $BIG slices" sh -c '"$1" --sample-trace="$2" --compare -q examples/showcase.sql 2>&1 >/dev/null' \
    sh "$PJ" "$BIG"
fi

# The real traces: beside the checkout (as CI and the developers have
# shared/), or in TRACES.
dir=${TRACES:-}
if [ -z "$dir" ]; then
  for d in ../shared/data/traces ../../shared/data/traces; do
    if [ -f "$d/lthi_cats.json.gz" ]; then dir=$d; break; fi
  done
fi
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
  heading "3. Real traces: not found" \
    "   (looked for ../shared/data/traces beside the checkout; set TRACES=DIR to the" \
    "   folder of lthi_cats.json.gz, tokio_test.pftrace, fuchsia_trace.json.gz and" \
    "   systing_trace.pb)"
  summary
  exit 0
fi
n=3
real() {   # real FILE SCRIPT WHAT
  [ -f "$dir/$1" ] || { echo "demo: $dir/$1 missing, skipped"; return 0; }
  heading "$n. $1 ($(wc -c <"$dir/$1" | awk '{ printf "%.1f MB", $1 / 1e6 }')): $3" "   $2"
  n=$((n + 1))
  show "$1" "$PJ" "$dir/$1" --echo --compare -q "$2"
}

summary() {
  heading "Summary: each run's pipelines timed on both backends; the winner for a" \
    "   query run once counts the JIT's compile (a query run again, or a compiled" \
    "   handle run many times, pays it once: see each 'run again' above)"
  cat "$tmp/summary"
}
real lthi_cats.json.gz examples/trace_slices.sql \
  "a Chrome desktop trace (JSON, gzip; 56k slices on 32 threads)"
real tokio_test.pftrace examples/trace_slices.sql \
  "a Rust program's TrackEvent trace (Perfetto protobuf; 20k slices on 9 threads)"
real fuchsia_trace.json.gz examples/trace_sched.sql \
  "a Fuchsia system trace (JSON, gzip; 47k context switches on 4 CPUs)"
real systing_trace.pb examples/trace_sched.sql \
  "a Linux system trace by systing (Perfetto protobuf; compact sched on 22 CPUs)"
summary
