#!/bin/sh
# The CLI with traces: a trace as a positional argument (told apart from a
# script by content), --trace, a second trace refused unless
# --replace-trace, --export into a SQLite file read back by the sqlite3
# shell, and a trace_processor-style join on the exported file.
# Usage: test_trace_cli.sh PIPEJIT SQLITE3
set -eu
PJ=$1
SQ=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat > "$T/a.json" <<'J'
{"traceEvents":[
 {"ph":"M","pid":1,"tid":1,"name":"process_name","args":{"name":"Browser"}},
 {"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"IO"}},
 {"ph":"X","pid":1,"tid":2,"ts":1,"dur":5,"name":"outer"},
 {"ph":"X","pid":1,"tid":2,"ts":2,"dur":1,"name":"inner"},
 {"ph":"C","pid":1,"tid":2,"ts":3,"name":"mem","args":{"v":7}}]}
J
gzip -c "$T/a.json" > "$T/b.json.gz"
echo "SELECT count(*) AS n FROM slice;" > "$T/q.sql"

# positional trace, then a script file: the script still runs as a script
out=$("$PJ" "$T/a.json" "$T/q.sql" --format csv)
[ "$out" = "n
2" ] || fail "positional trace + script: $out"
out=$("$PJ" "$T/b.json.gz" -c "FROM slice |> WHERE depth = 1 |> SELECT name" --format csv)
[ "$out" = "name
inner" ] || fail "gzip positional: $out"
out=$("$PJ" --trace "$T/a.json" -c "SELECT name FROM thread WHERE tid = 2" --format csv)
[ "$out" = "name
IO" ] || fail "--trace: $out"

# two traces: refused, unless replacing
if "$PJ" "$T/a.json" "$T/b.json.gz" -c "SELECT 1" 2>"$T/err"; then fail "two traces accepted"; fi
grep -q -- "--replace-trace" "$T/err" || fail "two traces: $(cat "$T/err")"
out=$("$PJ" --replace-trace "$T/a.json" "$T/b.json.gz" -c "SELECT count(*) FROM trace_file" --format csv)
[ "$out" = "count(*)
2" ] || fail "--replace-trace: $out"

# export, no script: no shell, no stdin read
"$PJ" "$T/b.json.gz" --export "$T/x.db" </dev/null || fail "export failed"
[ "$("$SQ" "$T/x.db" 'SELECT count(*) FROM slice')" = 2 ] || fail "exported slice count"
out=$("$SQ" "$T/x.db" "SELECT s.name, t.name, p.name FROM slice s JOIN thread_track tt ON s.track_id = tt.id
  JOIN thread t USING (utid) JOIN process p USING (upid) ORDER BY s.ts")
[ "$out" = "outer|IO|Browser
inner|IO|Browser" ] || fail "join on the export: $out"
[ "$("$SQ" "$T/x.db" 'SELECT name, value FROM counters')" = "mem v|7.0" ] || fail "counters view"
[ "$("$SQ" "$T/x.db" "SELECT (SELECT count(*) FROM sched) || ',' || (SELECT count(*) FROM stats WHERE value > 0)
  || ',' || (SELECT str_value FROM metadata WHERE name = 'trace_type') || ',' || (SELECT count(*) FROM __intrinsic_track)")" \
  = "0,0,json,2" ] || fail "exported sched/stats/metadata/tracks" 
# the exported file opens in pipejit as a database too
out=$("$PJ" --db "$T/x.db" -c "FROM slice |> AGGREGATE COUNT(*) AS n" --format csv)
[ "$out" = "n
2" ] || fail "pipejit --db on the export: $out"
# export without a trace
if "$PJ" --export "$T/y.db" -c "SELECT 1" >/dev/null 2>"$T/err"; then fail "export without trace"; fi
grep -q "no trace" "$T/err" || fail "export without trace: $(cat "$T/err")"
echo "test_trace_cli: all passed"
