#!/bin/sh
# pipejit --batch: one script over several small generated traces (JSON,
# gzip, and the shared protobuf trace when it is there), one of them not a
# trace, one corrupt, one whose query fails. Checks every table of the
# output against running each trace alone, the trace column, -- name:,
# the mixed-type rule, batch_errors, the messages on stderr, the exit
# status, and that --jobs 1 and --jobs 3 write the same rows.
# Usage: test_batch.sh PIPEJIT SQLITE3
set -eu
PJ=$1
SQ=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $* (in $T)" >&2; exit 1; }

# trace N: N slices 'work' of dur N on thread N, plus one 'idle'
gen() {
  n=$1 dur=$2
  {
    printf '{"traceEvents":[\n'
    printf ' {"ph":"M","pid":1,"tid":%d,"name":"thread_name","args":{"name":"t%d"}}' "$n" "$n"
    i=0
    while [ $i -lt "$n" ]; do
      printf ',\n {"ph":"X","pid":1,"tid":%d,"ts":%d,"dur":%d,"name":"work"}' "$n" $((i * 10)) "$dur"
      i=$((i + 1))
    done
    printf ',\n {"ph":"X","pid":1,"tid":%d,"ts":1000,"dur":1,"name":"idle"}]}\n' "$n"
  }
}
mkdir "$T/tr"
gen 1 2 > "$T/tr/a.json"
gen 3 4 | gzip -c > "$T/tr/b.json.gz"
gen 2 100 > "$T/tr/c_overflows.json"      # the query's product overflows here
echo 'not a trace at all' > "$T/tr/d_text.json"
printf '\037\213\010\000\000\000\000\000\000\003garbage-that-is-not-deflate' > "$T/tr/e_corrupt.json.gz"
gen 5 3 > "$T/tr/f.json"
PROTO=""
for d in ../shared/data/traces ../../shared/data/traces; do
  [ -f "$d/tokio_test.pftrace" ] && PROTO="$d/tokio_test.pftrace" && break
done

cat > "$T/q.sql" <<'Q'
CREATE PERFETTO TABLE w AS FROM slice |> WHERE name = 'work';
-- name: per_name
FROM slice |> AGGREGATE COUNT(*) AS n, SUM(dur) AS total GROUP BY name |> ORDER BY name;
-- the next one is result_2 (the second statement returning rows)
SELECT t.name AS thread, count(*) AS n FROM w JOIN thread_track tt ON w.track_id = tt.id
  JOIN thread t USING (utid) GROUP BY t.name ORDER BY t.name;
-- a dur of 100 makes this overflow: that trace fails, the others go on
FROM w |> EXTEND dur * 1000000000000000 AS big |> AGGREGATE COUNT(*) AS n, MAX(big) AS m;
-- integer in the first trace (a), double in b: the first trace's type wins
SELECT CASE WHEN (SELECT count(*) FROM w) > 2 THEN 2.0 ELSE 7 END AS v, 'x' AS trace
Q

set -- "$T/tr/a.json" "$T/tr/b.json.gz" "$T/tr/c_overflows.json" "$T/tr/d_text.json" \
  "$T/tr/e_corrupt.json.gz" "$T/tr/f.json"
[ -n "$PROTO" ] && set -- "$@" "$PROTO"

rc=0
"$PJ" --batch "$T/tr/*.js*" ${PROTO:+"$PROTO"} -q "$T/q.sql" --out "$T/r.db" --jobs 3 \
  2>"$T/err" || rc=$?
[ $rc = 1 ] || fail "exit status $rc with failed traces (want 1): $(cat "$T/err")"
grep -q "^error: $T/tr/c_overflows.json: .*overflow" "$T/err" || fail "no overflow error: $(cat "$T/err")"
grep -q "^error: $T/tr/d_text.json: .*not a trace" "$T/err" || fail "no not-a-trace error: $(cat "$T/err")"
grep -q "^error: $T/tr/e_corrupt.json.gz: " "$T/err" || fail "no corrupt-trace error: $(cat "$T/err")"
grep -q "failed (see batch_errors)" "$T/err" || fail "no summary: $(cat "$T/err")"

# batch_errors: the three failed traces, in the order given, with the errors
out=$("$SQ" "$T/r.db" "SELECT trace FROM batch_errors ORDER BY rowid")
[ "$out" = "$T/tr/c_overflows.json
$T/tr/d_text.json
$T/tr/e_corrupt.json.gz" ] || fail "batch_errors traces: $out"
"$SQ" "$T/r.db" "SELECT error FROM batch_errors WHERE trace LIKE '%c_overflows.json'" |
  grep -q "integer overflow" || fail "overflow message: $("$SQ" "$T/r.db" 'SELECT * FROM batch_errors')"
# the failed trace left no rows anywhere (all of a trace or none of it)
[ "$("$SQ" "$T/r.db" "SELECT count(*) FROM per_name WHERE trace LIKE '%c_overflows%'")" = 0 ] ||
  fail "rows of a failed trace were kept"

# every table against each trace run alone: the same rows, in order
ok="$T/tr/a.json $T/tr/b.json.gz $T/tr/f.json $PROTO"
for tr in $ok; do
  n=0
  for stmt in \
    "FROM slice |> AGGREGATE COUNT(*) AS n, SUM(dur) AS total GROUP BY name |> ORDER BY name" \
    "CREATE PERFETTO TABLE w AS FROM slice |> WHERE name = 'work'; SELECT t.name AS thread, count(*) AS n FROM w JOIN thread_track tt ON w.track_id = tt.id JOIN thread t USING (utid) GROUP BY t.name ORDER BY t.name"; do
    n=$((n + 1))
    tab=$([ $n = 1 ] && echo per_name || echo result_2)
    alone=$("$PJ" "$tr" -c "$stmt" --format list | tail -n +2)
    cols=$([ $n = 1 ] && echo "name, n, total" || echo "thread, n")
    batch=$("$SQ" "$T/r.db" "SELECT $cols FROM $tab WHERE trace = '$tr' ORDER BY rowid")
    [ "$alone" = "$batch" ] || fail "$tab for $tr: alone
$alone
batch
$batch"
  done
done
# the trace column holds the path as given, traces in the order given
out=$("$SQ" "$T/r.db" "SELECT DISTINCT trace FROM per_name ORDER BY rowid")
want=$(printf '%s\n' $ok)
[ "$out" = "$want" ] || fail "trace column / order: $out"
[ "$("$SQ" "$T/r.db" "SELECT n, total FROM per_name WHERE trace = '$T/tr/b.json.gz' AND name = 'work'")" = "3|12000" ] ||
  fail "per_name values"

# result_3: the overflowing statement, from the traces that passed
[ "$("$SQ" "$T/r.db" "SELECT n, m FROM result_3 WHERE trace = '$T/tr/a.json'")" = "1|2000000000000000000" ] ||
  fail "result_3"
# result_4: integer in trace a, 2.0 (whole) in b becomes 2; a result's own
# `trace` column is kept as trace:1 (SQLite's CREATE TABLE … AS naming)
out=$("$SQ" "$T/r.db" "SELECT typeof(v), v, \"trace:1\" FROM result_4 ORDER BY rowid") || fail "result_4"
case "$out" in "integer|7|x
integer|2|x"*) ;; *) fail "result_4 types: $out" ;; esac
[ "$("$SQ" "$T/r.db" "SELECT type FROM pragma_table_info('result_4') WHERE name = 'v'")" = INTEGER ] ||
  fail "result_4 declared type"

# one worker gives the same file contents
"$PJ" --batch "$T/tr/*.js*" ${PROTO:+"$PROTO"} -q "$T/q.sql" --out "$T/r1.db" --jobs 1 2>/dev/null && fail "jobs 1 status"
for tab in per_name result_2 result_3 result_4 batch_errors; do
  [ "$("$SQ" "$T/r.db" "SELECT * FROM $tab ORDER BY rowid")" = "$("$SQ" "$T/r1.db" "SELECT * FROM $tab ORDER BY rowid")" ] ||
    fail "--jobs 1 and 3 differ in $tab"
done

# a double with a fraction where the first trace had integers fails that trace
cat > "$T/mix.sql" <<'Q'
SELECT CASE WHEN (SELECT count(*) FROM slice) > 2 THEN 2.5 ELSE 7 END AS v
Q
rc=0
"$PJ" --batch "$T/tr/a.json" "$T/tr/b.json.gz" "$T/tr/f.json" -q "$T/mix.sql" --out "$T/m.db" 2>"$T/err" || rc=$?
[ $rc = 1 ] || fail "mixed types status $rc"
grep -q "b.json.gz: batch: column 'v' of table result_1 is integer (from $T/tr/a.json, the first trace), but row 1 holds 2.5 here" "$T/err" ||
  fail "mixed-type message: $(cat "$T/err")"
# a double first: integers become doubles
rc=0
"$PJ" --batch "$T/tr/b.json.gz" "$T/tr/a.json" -q "$T/mix.sql" --out "$T/m.db" 2>"$T/err" || rc=$?
[ $rc = 0 ] || fail "double first: $(cat "$T/err")"
out=$("$SQ" "$T/m.db" "SELECT typeof(v), v FROM result_1 ORDER BY rowid")
[ "$out" = "real|2.5
real|7.0" ] || fail "double first: $out"

# all traces fine: exit status 0, empty batch_errors, an existing file replaced
"$PJ" --batch "$T/tr/a.json" --batch "$T/tr/f.json" -c "FROM slice |> AGGREGATE COUNT(*) AS n" \
  --out "$T/m.db" 2>"$T/err" || fail "clean batch: $(cat "$T/err")"
[ "$("$SQ" "$T/m.db" "SELECT group_concat(n) FROM result_1; SELECT count(*) FROM batch_errors;
  SELECT count(*) FROM sqlite_master WHERE type = 'table'")" = "2,6
0
2" ] || fail "clean batch contents"

# --timeout is per trace and ends its worker; --param is bound in every worker
rc=0
"$PJ" --batch "$T/tr/a.json" "$T/tr/f.json" -c "SELECT 1 AS x" --out "$T/m.db" --timeout 0.000001 \
  2>"$T/err" || rc=$?
[ $rc = 1 ] || fail "--timeout status $rc"
[ "$(grep -c "ran past --timeout" "$T/err")" = 2 ] || fail "--timeout: $(cat "$T/err")"
"$PJ" --batch "$T/tr/a.json" "$T/tr/f.json" --param min=2500 \
  -c "FROM slice |> WHERE dur > \$min |> AGGREGATE COUNT(*) AS n" --out "$T/m.db" 2>"$T/err" ||
  fail "--param: $(cat "$T/err")"
[ "$("$SQ" "$T/m.db" "SELECT group_concat(n) FROM result_1")" = "0,5" ] || fail "--param rows"

# Stopped by a signal (Ctrl-C, SIGTERM) while a worker waits on a trace (a
# FIFO nobody writes: its open blocks): the workers end, their folder in
# TMPDIR is removed, the output holds the traces merged so far, and pipejit
# ends by the signal. (env --default-signal: a background job of sh starts
# with SIGINT ignored, which --batch keeps ignoring. The FIFO is a --batch
# pattern: a positional argument is opened to see whether it is a trace.)
mkfifo "$T/tr/hang.json"
# a worker left waiting (a failure) is let go before the folder is removed
trap 'timeout 2 sh -c ": > \"\$1\"" sh "$T/tr/hang.json" 2>/dev/null; rm -rf "$T"' EXIT
fifo_waiter() {   # a child of $1 waits in open() of a FIFO for a writer
  for c in $(pgrep -P "$1"); do
    [ "$(cat "/proc/$c/wchan" 2>/dev/null)" = wait_for_partner ] && return 0
  done
  return 1
}
for sig in INT TERM; do
  mkdir "$T/tmp_$sig"
  TMPDIR="$T/tmp_$sig" env --default-signal=INT "$PJ" --batch "$T/tr/a.json" --batch "$T/tr/hang.json" \
    -c "SELECT 1 AS x" --out "$T/stop.db" --jobs 1 2>"$T/err" &
  pid=$!
  # until its worker for the FIFO waits in open() for a writer
  i=0
  until fifo_waiter $pid; do
    i=$((i + 1)); [ $i -lt 300 ] || fail "--batch: no worker waits on the FIFO"; sleep 0.1
  done
  kill -"$sig" $pid
  rc=0; wait $pid || rc=$?
  [ $rc -gt 128 ] && [ "$(kill -l $rc)" = "$sig" ] || fail "SIG$sig: status $rc, $(cat "$T/err")"
  [ -z "$(ls -A "$T/tmp_$sig")" ] || fail "SIG$sig left $(ls -A "$T/tmp_$sig")"
  grep -q "batch: stopped by" "$T/err" || fail "SIG$sig message: $(cat "$T/err")"
  [ "$("$SQ" "$T/stop.db" "SELECT group_concat(trace) FROM result_1")" = "$T/tr/a.json" ] ||
    fail "SIG$sig: the output lacks the trace merged before the stop"
done
rm "$T/tr/hang.json"
trap 'rm -rf "$T"' EXIT

# usage errors
"$PJ" --batch "$T/tr/a.json" --out "$T/m.db" 2>"$T/err" && fail "no script accepted"
grep -q "needs the script" "$T/err" || fail "no script: $(cat "$T/err")"
"$PJ" --batch "$T/tr/a.json" -c "SELECT 1" 2>"$T/err" && fail "no --out accepted"
grep -q "needs --out" "$T/err" || fail "no --out: $(cat "$T/err")"
"$PJ" --batch "$T/tr/a.json" -c "SELECT 1" --out "$T/m.db" --format csv 2>"$T/err" && fail "--format accepted"
grep -q -- "--format does not go with --batch" "$T/err" || fail "--format: $(cat "$T/err")"
"$PJ" --out "$T/m.db" -c "SELECT 1" 2>"$T/err" && fail "--out without --batch"
grep -q -- "--out goes with --batch" "$T/err" || fail "--out alone: $(cat "$T/err")"
"$PJ" --batch "$T/tr/a.json" -c "-- name: 2bad
SELECT 1" --out "$T/m.db" 2>"$T/err" && fail "bad name accepted"
grep -q "not a plain identifier" "$T/err" || fail "bad name: $(cat "$T/err")"
"$PJ" --batch "$T/tr/a.json" -c "-- name: x
SELECT 1; -- name: x
SELECT 2" --out "$T/m.db" 2>"$T/err" && fail "duplicate name accepted"
grep -q "is named 'x', as statement 1" "$T/err" || fail "duplicate name: $(cat "$T/err")"
echo "ok"
