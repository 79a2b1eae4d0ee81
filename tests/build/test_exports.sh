#!/bin/sh
# test_exports.sh LIB HEADER — the shared library exports the public API
# and nothing else: every dynamic symbol it defines is a pj_ function (no
# internal pj__ helper, no rt_/ir_/cg_/… symbol), and every pj_ function
# declared in pipejit.h is among them.
set -u
lib=$1 header=$2
tmp=${TMPDIR:-/tmp}/pj_exports.$$
trap 'rm -f "$tmp".*' EXIT
nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' | sort -u >"$tmp.all" || exit 1
[ -s "$tmp.all" ] || { echo "no dynamic symbols in $lib"; exit 1; }
fail=0
grep -v '^pj_[a-z]' "$tmp.all" >"$tmp.extra"
if [ -s "$tmp.extra" ]; then
  echo "exported but not public ($(wc -l <"$tmp.extra") symbols):"; head -20 "$tmp.extra"; fail=1
fi
# Functions of the header: "pj_name(" at a declaration.
grep -oE '\bpj_[a-z][a-z0-9_]*[ ]*\(' "$header" | tr -d ' (' | sort -u >"$tmp.api"
[ -s "$tmp.api" ] || { echo "no pj_ function found in $header"; exit 1; }
comm -23 "$tmp.api" "$tmp.all" >"$tmp.missing"
if [ -s "$tmp.missing" ]; then
  echo "declared in pipejit.h but not exported:"; cat "$tmp.missing"; fail=1
fi
[ $fail = 0 ] && echo "exports: $(wc -l <"$tmp.api") public functions, nothing else"
exit $fail
