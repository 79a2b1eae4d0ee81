#!/bin/sh
# What the CLI does with inputs that are not plain scripts (ctest:
# cli_inputs, issue 11): a NUL byte is an error with its line and column
# and nothing after it is dropped unnoticed; a trace or database given
# given on standard input says to load it as a trace / with --db; a FILE
# argument that is a trace is loaded as one.
# Usage: test_inputs.sh PIPEJIT
set -u
PIPEJIT=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; echo "--- stdout:" >&2; cat "$tmp/out" >&2; echo "--- stderr:" >&2; cat "$tmp/err" >&2; exit 1; }
run() { "$PIPEJIT" "$@" >"$tmp/out" 2>"$tmp/err"; echo $?; }

# A NUL between statements: the first runs, then the NUL is an error.
rc=$(printf 'SELECT 1;\0SELECT 2;' | run)
[ "$rc" = 1 ] || fail "NUL between statements: exit status $rc"
grep -q 'unexpected NUL byte' "$tmp/err" || fail "no NUL error"
grep -q 'at line 1, column 10' "$tmp/err" || fail "NUL error without its position"
grep -q '^2' "$tmp/out" && fail "the statement after the NUL ran"

# In a pipeline, on line 2.
rc=$(printf 'FROM (SELECT 1 AS x)\n|> WHERE x\0 > 0;' | run)
[ "$rc" = 1 ] || fail "NUL in a pipeline: exit status $rc"
grep -q 'WHERE: syntax error: unexpected NUL byte' "$tmp/err" || fail "no NUL error in WHERE"
grep -q 'at line 2, column 11' "$tmp/err" || fail "NUL error in WHERE without its position"

# In a SQL string literal: SQLite would stop reading there.
rc=$(printf "SELECT 'a\0b';" | run)
[ "$rc" = 1 ] || fail "NUL in a SQL literal: exit status $rc"
grep -q 'unexpected NUL byte in SQL' "$tmp/err" || fail "no NUL error in SQL"

# In a file too.
printf 'SELECT 1;\n\0' >"$tmp/nul.sql"
rc=$(run "$tmp/nul.sql")
[ "$rc" = 1 ] || fail "NUL in a file: exit status $rc"
grep -q 'at line 2, column 1' "$tmp/err" || fail "NUL in a file without its position"

# A gzip trace named like a script: a FILE argument that is a trace is
# loaded as one (issue 14), whatever its name.
printf '[{"ph":"X","ts":1,"dur":2,"pid":1,"tid":1,"name":"a"}]' >"$tmp/t.json"
gzip -c "$tmp/t.json" >"$tmp/trace.sql"
rc=$(run "$tmp/trace.sql" -c "FROM slice |> AGGREGATE COUNT(*) AS n")
[ "$rc" = 0 ] || fail "gzip: exit status $rc"
grep -q '^ *1$' "$tmp/out" || fail "gzip trace not loaded"
grep -q 'SQLite\|unrecognized' "$tmp/err" && fail "gzip reached SQLite"
# ... and it loads with --trace too.
rc=$(run --trace "$tmp/trace.sql" -c "FROM slice |> AGGREGATE COUNT(*) AS n")
[ "$rc" = 0 ] || fail "--trace of the gzip file: exit status $rc"

# A JSON trace from a file loads; from standard input it is refused.
rc=$(run "$tmp/t.json" -c "FROM slice |> AGGREGATE COUNT(*) AS n")
[ "$rc" = 0 ] || fail "JSON: exit status $rc"
rc=$(printf '\n  {"traceEvents": []}' | run)
[ "$rc" = 1 ] || fail "JSON on stdin: exit status $rc"
grep -q 'standard input is a JSON trace' "$tmp/err" || fail "JSON on stdin not detected"

# A Perfetto protobuf trace: field 1 (packet), a length, binary bytes.
printf '\n\022\010\001\020\002\030\003\000\000abcdefgh' >"$tmp/trace.pb"
rc=$(run "$tmp/trace.pb" -c "SELECT 1")
grep -q 'SQLite\|unrecognized' "$tmp/err" && fail "protobuf reached SQLite"
printf '\n\022\010\001\020\002\030\003\000\000abcdefgh' | run >/dev/null
grep -q 'is a protobuf (Perfetto) trace, not a script' "$tmp/err" || fail "protobuf on stdin not detected"

# A SQLite database.
"$PIPEJIT" --db "$tmp/x.db" -c "CREATE TABLE t(a); INSERT INTO t VALUES (1)" || fail "making a db"
rc=$(run "$tmp/x.db")
[ "$rc" = 1 ] || fail "database: exit status $rc"
grep -q "is a SQLite database, not a script: open it with --db $tmp/x.db" "$tmp/err" ||
  fail "database not detected"

# A script that starts with a newline, a bracket in a string, or a comment
# is still a script.
printf '\n\nSELECT 7 AS "[x]";' >"$tmp/ok.sql"
rc=$(run "$tmp/ok.sql")
[ "$rc" = 0 ] || fail "a script starting with newlines: exit status $rc"
grep -q "^ *7" "$tmp/out" || fail "a script starting with newlines did not run"
# The CLI binds no parameters: a pipeline with one fails naming it.
rc=$(run -c 'FROM (SELECT 5 AS dur) |> WHERE dur > $min |> AGGREGATE COUNT(*) AS n')
[ "$rc" = 1 ] || fail "unbound parameter: exit status $rc"
grep -q 'WHERE: parameter \$min is not bound' "$tmp/err" || fail "no unbound-parameter error"
# --module-path DIR (repeatable, in order): INCLUDE PERFETTO MODULE finds
# a.b in DIR/a/b.sql, the first folder that has it winning; a missing
# module names the folders searched.
mkdir -p "$tmp/m1/pkg" "$tmp/m2/pkg"
echo "CREATE PERFETTO FUNCTION which_dir() RETURNS STRING AS SELECT 'm1';" >"$tmp/m1/pkg/a.sql"
echo "CREATE PERFETTO FUNCTION which_dir() RETURNS STRING AS SELECT 'm2';" >"$tmp/m2/pkg/a.sql"
echo "CREATE PERFETTO FUNCTION only_m2() RETURNS LONG AS SELECT 2;" >"$tmp/m2/pkg/b.sql"
rc=$(run --format csv --module-path "$tmp/m1" --module-path "$tmp/m2" \
  -c "INCLUDE PERFETTO MODULE pkg.a; INCLUDE PERFETTO MODULE pkg.b; SELECT which_dir() AS w, only_m2() AS o")
[ "$rc" = 0 ] || fail "--module-path: exit status $rc"
[ "$(cat "$tmp/out")" = "w,o
m1,2" ] || fail "--module-path: wrong modules"
rc=$(run --module-path "$tmp/m1" -c "INCLUDE PERFETTO MODULE pkg.nope")
[ "$rc" = 1 ] || fail "missing module: exit status $rc"
grep -q "pkg.nope" "$tmp/err" && grep -q "$tmp/m1" "$tmp/err" || fail "missing module: no folders named"
rc=$(run --module-path "" -c "SELECT 1")
[ "$rc" = 1 ] || fail "empty --module-path: exit status $rc"
echo "ok: CLI inputs"
