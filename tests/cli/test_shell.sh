#!/bin/sh
# The interactive shell end to end on a pseudo-terminal (ctest:
# cli_shell_pty): util-linux `script` gives pipejit a terminal, so it runs
# the libedit shell rather than reading stdin as a script. Checks a
# multi-line statement, dot-commands, that an error does not end the
# session, and the history file (libedit writes spaces as \040).
# Usage: test_shell.sh PIPEJIT
set -eu
PIPEJIT=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; echo "--- transcript:" >&2; cat "$tmp/out" >&2; exit 1; }

# Input arrives slowly so that each line reaches the editor as typed.
{
  sleep 0.5
  for line in '.mode csv' 'SELECT 40 + 2' '  AS answer;' 'FROM nope;' \
              'FROM slice |> AGGREGATE COUNT(*) AS n;' '.tables' '.schema thread' '.quit'; do
    printf '%s\n' "$line"
    sleep 0.2
  done
} | HOME=$tmp TERM=dumb script -qec "$PIPEJIT --sample-trace=50" /dev/null >"$tmp/out" 2>&1 ||
  fail "exit status $?"

grep -q 'answer' "$tmp/out" || fail "no header of the multi-line statement"
grep -q '^42' "$tmp/out" || fail "no result of the multi-line statement"
grep -q "no such table: 'nope'" "$tmp/out" || fail "no error message"
grep -q '^50' "$tmp/out" || fail "the session did not go on after the error"
grep -q '^cpu_frequency' "$tmp/out" || fail ".tables"
grep -q 'CREATE TABLE thread(' "$tmp/out" || fail ".schema"
grep -q 'answer;' "$tmp/.pipejit_history" || fail "history file"
echo "ok: shell on a terminal"
