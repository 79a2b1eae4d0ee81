#!/bin/sh
# make demo's queries on the real traces, checked against an independent
# answer: the trace exported to a SQLite file (--export) and the same
# question asked of it by the sqlite3 shell in plain SQL, joined the way
# trace_processor's tables mean (slice.track_id -> thread_track.id ->
# thread by utid; sched.utid -> thread). The thread names must match, and
# must differ from those of the wrong join (a track id copied as a utid)
# so the check can tell. Then scripts/demo.sh itself, small (SAMPLE=20000,
# BIG=0): every heading, every query answered, no build noise, no error.
# Usage: test_demo.sh PIPEJIT SQLITE3 (from the source folder). Exits 77
# (skipped) when shared/data/traces is not beside the checkout.
set -eu
PJ=$1
SQ=$2
dir=
for d in ../shared/data/traces ../../shared/data/traces; do
  if [ -f "$d/lthi_cats.json.gz" ]; then dir=$d; break; fi
done
[ -n "$dir" ] || { echo "skipped: no shared/data/traces beside the checkout"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The result set of a CSV run whose header line is $2 (result sets are
# separated by one blank line), without the header.
result() {
  awk -v want="$2" 'BEGIN { on = 0 } /^$/ { on = 0; next } on { print } $0 == want { on = 1 }' "$1"
}

# ---- lthi_cats: the busiest threads (S3) and the heaviest roots (S5) --------
"$PJ" "$dir/lthi_cats.json.gz" --format csv -q examples/trace_slices.sql >"$T/out" 2>"$T/err" ||
  fail "trace_slices.sql on lthi_cats: $(cat "$T/err")"
result "$T/out" "process,thread,utid,top_level,busy_ms" >"$T/busy"
[ "$(wc -l <"$T/busy")" -eq 6 ] || fail "S3 rows: $(cat "$T/busy")"
"$PJ" "$dir/lthi_cats.json.gz" --export "$T/lthi.db" 2>/dev/null </dev/null || fail "export lthi_cats"
"$SQ" -list -separator , "$T/lthi.db" "SELECT p.name, t.name, t.utid, count(*), sum(s.dur) / 1e6
  FROM slice s, thread_track tt, thread t LEFT JOIN process p ON p.upid = t.upid
  WHERE s.track_id = tt.id AND tt.utid = t.utid AND s.depth = 0 AND s.dur >= 0
  GROUP BY s.track_id ORDER BY sum(s.dur) DESC, t.utid LIMIT 6" >"$T/busy.sq"
cut -d, -f1-4 "$T/busy" >"$T/a"
cut -d, -f1-4 "$T/busy.sq" >"$T/b"
cmp -s "$T/a" "$T/b" || fail "S3 differs from sqlite3's join:
$(cat "$T/busy")
--- sqlite3:
$(cat "$T/busy.sq")"
# the wrong join names other threads: the check above can fail
"$SQ" -list -separator , "$T/lthi.db" "SELECT t.name FROM slice s JOIN thread t ON t.utid = s.track_id
  WHERE s.depth = 0 AND s.dur >= 0 GROUP BY s.track_id ORDER BY sum(s.dur) DESC LIMIT 6" >"$T/wrong"
cut -d, -f2 "$T/busy" >"$T/names"
cmp -s "$T/names" "$T/wrong" && fail "the track-id-as-utid join gives the same names: no check"

result "$T/out" "thread,name,dur_ms,subtree_slices" >"$T/roots"
[ "$(wc -l <"$T/roots")" -eq 5 ] || fail "S5 rows: $(cat "$T/roots")"
"$SQ" -list -separator , "$T/lthi.db" "WITH RECURSIVE sub(root, id) AS (
    SELECT id, id FROM slice WHERE depth = 0 AND dur >= 0
    UNION ALL SELECT sub.root, s.id FROM slice s JOIN sub ON s.parent_id = sub.id)
  SELECT t.name, r.name, count(*) FROM sub JOIN slice r ON r.id = sub.root
  JOIN thread_track tt ON tt.id = r.track_id JOIN thread t ON t.utid = tt.utid
  GROUP BY sub.root ORDER BY count(*) DESC, sub.root LIMIT 5" >"$T/roots.sq"
awk -F, '{ print $1 "," $2 "," $4 }' "$T/roots" >"$T/a"
cmp -s "$T/a" "$T/roots.sq" || fail "S5 differs from sqlite3's recursive join:
$(cat "$T/roots")
--- sqlite3:
$(cat "$T/roots.sq")"
# S4's self time agrees with sqlite3's (children summed per parent)
result "$T/out" "name,self_ms,calls" | cut -d, -f1,3 >"$T/self"
"$SQ" -list -separator , "$T/lthi.db" "SELECT s.name, count(*) FROM slice s
  LEFT JOIN (SELECT parent_id, sum(dur) AS c FROM slice WHERE parent_id IS NOT NULL AND dur >= 0
             GROUP BY parent_id) k ON k.parent_id = s.id
  WHERE s.dur >= 0 GROUP BY s.name ORDER BY sum(s.dur - coalesce(k.c, 0)) DESC LIMIT 8" >"$T/self.sq"
cmp -s "$T/self" "$T/self.sq" || fail "S4 differs: $(cat "$T/self") --- $(cat "$T/self.sq")"

# ---- systing and fuchsia: the threads with the most CPU (C3), by sched.utid --
for tr in systing_trace.pb fuchsia_trace.json.gz; do
  "$PJ" "$dir/$tr" --format csv -q examples/trace_sched.sql >"$T/out" 2>"$T/err" ||
    fail "trace_sched.sql on $tr: $(cat "$T/err")"
  result "$T/out" "process,thread,tid,runs,cpu_ms" | cut -d, -f1-4 >"$T/cpu"
  [ "$(wc -l <"$T/cpu")" -eq 6 ] || fail "C3 rows on $tr: $(cat "$T/cpu")"
  grep -q ',idle [0-9]*,\|,swapper,' "$T/cpu" && fail "C3 on $tr counts idle threads: $(cat "$T/cpu")"
  "$PJ" "$dir/$tr" --export "$T/sys.db" 2>/dev/null </dev/null || fail "export $tr"
  "$SQ" -list -separator , "$T/sys.db" "SELECT p.name, t.name, t.tid, count(*) FROM sched s
    JOIN thread t USING (utid) LEFT JOIN process p USING (upid)
    WHERE s.utid != 0 AND s.dur >= 0 AND NOT coalesce(t.name GLOB 'idle [0-9]*', 0)
    GROUP BY s.utid ORDER BY sum(s.dur) DESC, t.tid LIMIT 6" >"$T/cpu.sq"
  cmp -s "$T/cpu" "$T/cpu.sq" || fail "C3 on $tr differs from sqlite3's join:
$(cat "$T/cpu")
--- sqlite3:
$(cat "$T/cpu.sq")"
  rm -f "$T/sys.db"
done

# ---- the demo itself, small ------------------------------------------------------
SAMPLE=20000 BIG=0 sh scripts/demo.sh "$(dirname "$PJ")" >"$T/demo" 2>&1 || {
  tail -n 30 "$T/demo"
  fail "demo.sh failed"
}
for h in "== 1. The sample trace" "== 3. lthi_cats.json.gz" "== 4. tokio_test.pftrace" \
         "== 5. fuchsia_trace.json.gz" "== 6. systing_trace.pb"; do
  grep -q "^$h" "$T/demo" || fail "demo: no heading '$h'"
done
grep -q '^error' "$T/demo" && fail "demo printed an error: $(grep -A3 '^error' "$T/demo")"
grep -Eq 'make\[[0-9]+\]|Entering directory' "$T/demo" && fail "demo printed build noise"
# every question (a '-- Q', '-- S' or '-- C' heading) is echoed, and every
# pipeline is compared with its compile counted
q=$(grep -c '^-- [QSC][0-9]\.' "$T/demo")
[ "$q" -eq $((6 + 5 + 5 + 4 + 4)) ] || fail "demo: $q questions echoed, want 24"
c=$(grep -c '^compare: interp [0-9.]* ms | jit [0-9.]* ms + [0-9.]* ms compile' "$T/demo")
o=$(grep -Ec '^  (once: |interp faster even)' "$T/demo")
[ "$c" -ge 20 ] && [ "$c" -eq "$o" ] || fail "demo: $c comparisons, $o verdicts"
[ "$(grep -c '^compare: [0-9]* pipelines*: ' "$T/demo")" -eq 5 ] || fail "demo: summaries"
grep -q '^== Summary' "$T/demo" || fail "demo: no summary"
[ "$(sed -n '/^== Summary/,$p' "$T/demo" | grep -c '^[a-z].*: [0-9]* pipelines*: interp .* wins')" -eq 5 ] ||
  fail "demo: summary lines: $(sed -n '/^== Summary/,$p' "$T/demo")"
echo "test_demo: all passed ($c comparisons; names match sqlite3's joins)"
