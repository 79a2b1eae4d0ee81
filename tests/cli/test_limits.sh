#!/bin/sh
# The command-line tool's limits end to end (ctest: cli_limits; issue 12,
# items 7 and 8):
#  - a 20,000-column result prints in time linear in its cells (the plan
#    printer searched every column per column: seconds, now milliseconds);
#  - --timeout stops the printing of a huge result too, not only the run:
#    the output ends early, the timeout is reported and the status is 1;
#  - --sample-trace=N out of the integer range is refused, not clamped.
# Checks count bytes and exit statuses; the one bound in seconds is ten
# times what the linear printer needs here.
# Usage: test_limits.sh PIPEJIT
set -eu
PIPEJIT=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# 20,000 columns, one row: all of them printed.
cols=$(awk 'BEGIN { for (i = 0; i < 20000; i++) printf "%sa + %d AS c%d", i ? ", " : "", i, i }')
printf 'CREATE PERFETTO TABLE t AS SELECT 1 AS a;\nFROM t |> EXTEND %s;\n' "$cols" >"$tmp/wide.sql"
start=$(date +%s)
"$PIPEJIT" --mode interp --format csv "$tmp/wide.sql" >"$tmp/wide.out" || fail "wide result: status $?"
took=$(( $(date +%s) - start ))
[ "$took" -le 5 ] || fail "20,000 columns took $took s to print"
head -c 16 "$tmp/wide.out" | grep -q '^a,c0,c1,c2' || fail "wide header"
tail -n 1 "$tmp/wide.out" | grep -q ',20000$' || fail "wide row: last cell"

# 300 rows of 20,000 columns (53 MB as a table) into a reader that waits
# 3 s before reading: with --timeout 1 the printing stops at the timeout.
printf 'CREATE PERFETTO TABLE r AS WITH RECURSIVE n(a) AS (SELECT 1 UNION ALL SELECT a + 1 FROM n WHERE a < 300) SELECT a FROM n;\nFROM r |> EXTEND %s;\n' \
  "$(echo "$cols" | sed 's/a + /a * /g')" >"$tmp/big.sql"
status=0
"$PIPEJIT" --mode interp --timeout 1 "$tmp/big.sql" 2>"$tmp/big.err" | { sleep 3; wc -c >"$tmp/big.bytes"; } || status=$?
grep -q 'interrupted (timeout after 1 s)' "$tmp/big.err" || fail "no timeout message: $(cat "$tmp/big.err")"
bytes=$(cat "$tmp/big.bytes")
[ "$bytes" -lt 40000000 ] || fail "printing went on after the timeout ($bytes bytes)"

# --sample-trace out of range
if "$PIPEJIT" --sample-trace=99999999999999999999 -c "SELECT 1" >"$tmp/s.out" 2>"$tmp/s.err"; then
  fail "--sample-trace=99999999999999999999 accepted"
fi
grep -q "bad value for --sample-trace: '99999999999999999999'" "$tmp/s.err" ||
  fail "--sample-trace message: $(cat "$tmp/s.err")"
echo "ok: cli limits"
