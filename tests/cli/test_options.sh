#!/bin/sh
# The CLI options of issue 17: --param (typed as sqlite3's .param set,
# read by pipelines, SQL, pipelines in SQL and CREATE PERFETTO TABLE),
# --dump / --timing / --compare on standard error or --dump-file and never
# in the rows, --echo, -q FILE / --query-file (trace_processor_shell's
# `TRACE -q query.sql`, the trace loaded first wherever it stands), and
# the messages for a trace given where a script, a query or a database
# was expected.
# Usage: test_options.sh PIPEJIT
set -eu
PJ=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
TAB="CREATE PERFETTO TABLE t AS SELECT 1 AS id, 'a' AS name, 0.5 AS w
  UNION ALL SELECT 2, 'b', 1.5 UNION ALL SELECT 3, 'c', 2.5;"

# ---- --param ---------------------------------------------------------------
# Typed like sqlite3's .param set: integer, real, quoted text, NULL, an
# expression; a bare word is the text itself.
out=$("$PJ" --format csv --param i=42 --param r=1.5 --param s="'it''s'" --param n=NULL \
  --param e='60*1000' --param word=abc --param path=a/b.json \
  -c 'SELECT typeof($i), typeof(:r), $s, typeof(@n), $e, $word, $path')
[ "$out" = "typeof(\$i),typeof(:r),\$s,typeof(@n),\$e,\$word,\$path
integer,real,it's,null,60000,abc,a/b.json" ] || fail "--param types: $out"
# $name, :name and @name in a pipeline; real and text values type the plan
for mode in interp jit; do
  out=$("$PJ" --mode $mode --format csv --param min=2 --param wmax=2.0 --param who="'c'" -c "$TAB
    FROM t |> WHERE id >= \$min |> SELECT id;
    FROM t |> WHERE w < :wmax |> AGGREGATE COUNT(*) AS n;
    FROM t |> WHERE name = @who |> SELECT id;
    SELECT count(*) AS k FROM (FROM t |> WHERE id >= \$min);
    CREATE PERFETTO TABLE big AS FROM t |> WHERE id >= :min; FROM big |> SELECT name" 2>&1) ||
    fail "--param in pipelines ($mode): $out"
  [ "$out" = "id
2
3

n
2

id
3

k
2

name
b
c" ] || fail "--param in pipelines ($mode): $out"
done
# A value may read the trace: parameters are typed once the trace is in.
printf '{"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":5,"name":"a"},
  {"ph":"X","pid":1,"tid":1,"ts":2,"dur":1,"name":"b"}]}' >"$T/t.json"
out=$("$PJ" --format csv --param top='(SELECT max(dur) FROM slice)' "$T/t.json" \
  -c 'FROM slice |> WHERE dur = $top |> SELECT name')
[ "$out" = "name
a" ] || fail "--param with a subquery of the trace: $out"
# An unbound parameter of a pipeline is an error naming it.
if "$PJ" -c "$TAB FROM t |> WHERE id > \$nope |> SELECT id" >/dev/null 2>"$T/err"; then
  fail "unbound parameter accepted"
fi
grep -q 'parameter \$nope is not bound' "$T/err" || fail "unbound: $(cat "$T/err")"
# Bad --param arguments.
for bad in "noequals" "=5" "?1=5" "a b=1"; do
  if "$PJ" --param "$bad" -c "SELECT 1" >/dev/null 2>"$T/err"; then fail "--param $bad accepted"; fi
  grep -q -- "--param" "$T/err" || fail "--param $bad: $(cat "$T/err")"
done
if "$PJ" --param "b=x'00'" -c "SELECT 1" >/dev/null 2>"$T/err"; then fail "blob accepted"; fi
grep -q "blob" "$T/err" || fail "blob: $(cat "$T/err")"

# ---- dumps and timings never in the rows ------------------------------------
Q="$TAB FROM t |> WHERE id > 1 |> SELECT id, name"
"$PJ" --format csv --dump plan --timing --compare -c "$Q" >"$T/out" 2>"$T/err" ||
  fail "--dump plan: $(cat "$T/err")"
[ "$(cat "$T/out")" = "id,name
2,b
3,c" ] || fail "--dump plan wrote into the rows: $(cat "$T/out")"
grep -q '^dump plan: FROM t |> WHERE id > 1' "$T/err" || fail "no dump label: $(cat "$T/err")"
grep -q '^segment 0: scan table t' "$T/err" || fail "no plan on stderr: $(cat "$T/err")"
grep -q '^timing: ' "$T/err" || fail "no timing on stderr"
grep -q '^compare: ' "$T/err" || fail "no compare on stderr"
"$PJ" --format json --dump llvm -c "$Q" >"$T/out" 2>"$T/err" || fail "--dump llvm: $(cat "$T/err")"
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$T/out" 2>/dev/null ||
  grep -q '"name": "c"' "$T/out" || fail "--dump llvm spoiled the JSON: $(cat "$T/out")"
grep -q 'define ' "$T/err" || fail "no IR on stderr"
# --dump-file: dumps and timings into the file, nothing on stderr
"$PJ" --format csv --dump plan --timing --compare --dump-file "$T/dump.txt" -c "$Q" \
  >"$T/out" 2>"$T/err" || fail "--dump-file: $(cat "$T/err")"
[ ! -s "$T/err" ] || fail "--dump-file left on stderr: $(cat "$T/err")"
[ "$(head -n 1 "$T/out")" = "id,name" ] || fail "--dump-file rows: $(cat "$T/out")"
grep -q '^segment 0: scan table t' "$T/dump.txt" || fail "--dump-file has no plan"
grep -q '^timing: ' "$T/dump.txt" || fail "--dump-file has no timing"
grep -q '^compare: ' "$T/dump.txt" || fail "--dump-file has no compare"
if "$PJ" --dump-file "$T/no/such/dir/x" -c "SELECT 1" >/dev/null 2>"$T/err"; then
  fail "unwritable --dump-file accepted"
fi
grep -q "cannot write" "$T/err" || fail "unwritable --dump-file: $(cat "$T/err")"

# --compare counts the compile in its one-off verdict
"$PJ" --compare -c "$Q" >/dev/null 2>"$T/err" || fail "--compare: $(cat "$T/err")"
grep -Eq '^  interp [0-9.]+ ms \| jit [0-9.]+ ms \+ [0-9.]+ ms compile = [0-9.]+ ms$' "$T/err" ||
  fail "--compare times: $(cat "$T/err")"
grep -Eq '^  (once: (jit|interp) [0-9.]+x faster|interp faster even without the compile)' "$T/err" ||
  fail "--compare verdict: $(cat "$T/err")"
grep -Eq '^compare: 1 pipeline: interp [0-9.]+ ms in all \| jit [0-9.]+ ms \+ [0-9.]+ ms compile = [0-9.]+ ms; run once, the (jit|interpreter) wins' "$T/err" ||
  fail "--compare summary: $(cat "$T/err")"
# code compiled for --dump is not counted as a compile of 0 ms
"$PJ" --dump llvm --compare -c "$Q" >/dev/null 2>"$T/err" || fail "--dump llvm --compare"
grep -Eq '^  interp [0-9.]+ ms \| jit [0-9.]+ ms \(compiled before: no compile to count\)$' "$T/err" ||
  fail "--dump llvm --compare: $(grep -A2 '^compare' "$T/err")"
# after --compare the rows' run reuses the code it compiled, and says so
"$PJ" --mode jit --compare --timing -c "$Q" >/dev/null 2>"$T/err" || fail "--compare --timing"
grep -q 'code compiled before' "$T/err" || fail "--compare --timing: $(cat "$T/err")"
# A statement whose code came from the cache says so instead of "compile 0.000 ms".
"$PJ" --mode jit --timing -c "$Q; FROM t |> WHERE id > 1 |> SELECT id, name" >/dev/null 2>"$T/err" ||
  fail "--timing twice: $(cat "$T/err")"
grep -q 'compiled code from the cache' "$T/err" || fail "cache not named: $(cat "$T/err")"
grep -q 'compile 0.000 ms' "$T/err" && fail "compile 0 ms printed: $(cat "$T/err")"

# ---- --echo ------------------------------------------------------------------
out=$("$PJ" --echo --format csv -c "-- how many?
SELECT 2 AS n; SELECT 3 AS m")
[ "$out" = "-- how many?
SELECT 2 AS n;
n
2

SELECT 3 AS m;
m
3" ] || fail "--echo: $out"

# ---- -q FILE, with the trace anywhere -----------------------------------------
echo "SELECT count(*) AS n FROM slice;" >"$T/q.sql"
for args in "$T/t.json -q $T/q.sql" "-q $T/q.sql $T/t.json" "--query-file $T/q.sql --trace $T/t.json" \
            "--query-file=$T/q.sql $T/t.json"; do
  # shellcheck disable=SC2086 (the words are the arguments)
  out=$("$PJ" --format csv $args) || fail "$args"
  [ "$out" = "n
2" ] || fail "$args: $out"
done
# -i: the shell (here standard input, not a terminal) after the scripts;
# -e: --export, as trace_processor_shell spells them
out=$(echo "SELECT 2 AS b;" | "$PJ" --format csv "$T/t.json" -q "$T/q.sql" -i -e "$T/x.db")
[ "$out" = "n
2

b
2" ] || fail "-q FILE -i: $out"
[ "$("$PJ" --db "$T/x.db" --format csv -c "SELECT count(*) AS n FROM slice")" = "n
2" ] || fail "-e OUT.db"
if "$PJ" -q >/dev/null 2>"$T/err"; then fail "-q without a file"; fi
grep -q -- "-q needs a file" "$T/err" || fail "-q alone: $(cat "$T/err")"

# ---- a trace where a script, a query or a database was expected ---------------
gzip -c "$T/t.json" >"$T/t.json.gz"
if "$PJ" -q "$T/t.json.gz" >/dev/null 2>"$T/err"; then fail "-q TRACE accepted"; fi
grep -q "t.json.gz is gzip.*not a query file: give the trace as an argument (pipejit TRACE -q QUERY.sql" \
  "$T/err" || fail "-q TRACE: $(cat "$T/err")"
if "$PJ" -c "$T/t.json.gz" >/dev/null 2>"$T/err"; then fail "-c TRACE accepted"; fi
grep -q "is a trace: give the trace as an argument" "$T/err" || fail "-c TRACE: $(cat "$T/err")"
if "$PJ" -c "$T/q.sql" >/dev/null 2>"$T/err"; then fail "-c FILE accepted"; fi
grep -q "is a file: run it with -q $T/q.sql" "$T/err" || fail "-c FILE: $(cat "$T/err")"
if "$PJ" --db "$T/t.json" -c "SELECT 1" >/dev/null 2>"$T/err"; then fail "--db TRACE accepted"; fi
grep -q "is a JSON trace, not a SQLite database" "$T/err" || fail "--db TRACE: $(cat "$T/err")"
if "$PJ" <"$T/t.json.gz" >/dev/null 2>"$T/err"; then fail "stdin TRACE accepted"; fi
grep -q "standard input is gzip.*not a script: give the trace as an argument" "$T/err" ||
  fail "stdin TRACE: $(cat "$T/err")"
echo "test_options: all passed"
