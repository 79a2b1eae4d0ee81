#!/bin/sh
# The interactive shell end to end on a pseudo-terminal (ctest:
# cli_shell_pty): util-linux `script` gives pipejit a terminal, so it runs
# the libedit shell rather than reading stdin as a script. Checks a
# multi-line statement, dot-commands, that an error does not end the
# session, and the history file (libedit writes spaces as \040).
# `exec`: script(1) runs its command through $SHELL, and a non-interactive
# dash dies of the Ctrl-C typed below, so pipejit must be script's child.
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
} | HOME=$tmp TERM=dumb script -qec "exec $PIPEJIT --sample-trace=50" /dev/null >"$tmp/out" 2>&1 ||
  fail "exit status $?"

grep -q 'answer' "$tmp/out" || fail "no header of the multi-line statement"
grep -q '^42' "$tmp/out" || fail "no result of the multi-line statement"
grep -q "no such table: 'nope'" "$tmp/out" || fail "no error message"
grep -q '^50' "$tmp/out" || fail "the session did not go on after the error"
grep -q '^cpu_frequency' "$tmp/out" || fail ".tables"
grep -q 'CREATE TABLE thread(' "$tmp/out" || fail ".schema"
grep -q 'answer;' "$tmp/.pipejit_history" || fail "history file"
echo "ok: shell on a terminal"

# Ctrl-C (byte 0x03 through the terminal: SIGINT) at a `...>` prompt
# discards the half-typed statement and at the first prompt discards the
# line: neither is run and neither leaves; only end of input (Ctrl-D) does.
{
  sleep 0.5
  printf 'SELECT 111\n'; sleep 0.3
  printf '\003'; sleep 0.3
  printf 'SELECT 222;\n'; sleep 0.3
  printf 'SELECT 333'; sleep 0.3
  printf '\003'; sleep 0.3
  printf 'SELECT 444;\n'; sleep 0.3
  printf '\004'; sleep 0.3
} | HOME=$tmp TERM=dumb script -qec "exec $PIPEJIT" /dev/null >"$tmp/out" 2>&1 ||
  fail "exit status $? after Ctrl-C"

grep -q '^222' "$tmp/out" || fail "the shell did not go on after Ctrl-C at '...>'"
grep -q '^444' "$tmp/out" || fail "the shell did not go on after Ctrl-C at the prompt"
grep -q '^111' "$tmp/out" && fail "Ctrl-C ran the half-typed statement"
grep -q '^333' "$tmp/out" && fail "Ctrl-C ran the half-typed line"
grep -q 'syntax error' "$tmp/out" && fail "Ctrl-C kept the pending text"
echo "ok: Ctrl-C in the shell"
