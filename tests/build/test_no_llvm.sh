#!/bin/sh
# test_no_llvm.sh LIB CLI — a PJ_WITH_LLVM=OFF build (make test-nollvm):
# neither the shared library nor the CLI links LLVM, the CLI refuses
# --mode jit up front saying the JIT is not built in, and mode auto and
# interp run pipelines (on the interpreter).
set -u
lib=$1 cli=$2
fail() { echo "test_no_llvm: $*"; exit 1; }
for f in "$lib" "$cli"; do
  needed=$(readelf -d "$f" | grep NEEDED) || fail "readelf $f"
  echo "$needed" | grep -qi llvm && fail "$f links LLVM: $needed"
done
out=$("$cli" --mode jit -c 'SELECT 1' 2>&1) && fail "--mode jit succeeded: $out"
echo "$out" | grep -q 'error: --mode jit: JIT: not built in' || fail "--mode jit said: $out"
q='FROM (SELECT 1 AS a UNION ALL SELECT 2 UNION ALL SELECT 3) |> WHERE a > 1 |> AGGREGATE SUM(a) AS s'
for mode in auto interp; do
  out=$("$cli" --mode $mode --format csv -c "$q" 2>&1) || fail "--mode $mode: $out"
  [ "$out" = "s
5" ] || fail "--mode $mode printed: $out"
done
out=$("$cli" --compare -c "$q" 2>&1) || fail "--compare: $out"
echo "$out" | grep -q 'the JIT could not run it: JIT: not built in' || fail "--compare said: $out"
echo "no LLVM: library and CLI interpreter-only, --mode jit refused"
