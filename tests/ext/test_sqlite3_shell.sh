#!/bin/sh
# The loadable extension from the sqlite3 shell (ctest: ext_sqlite3_shell).
# Usage: test_sqlite3_shell.sh SQLITE3 — run from the source directory;
# PIPEJIT_EXT names the built extension (default build/pipejit_sqlite.so).
set -eu
SQLITE3=${1:-sqlite3}
EXT=${PIPEJIT_EXT:-build/pipejit_sqlite.so}
EXT=${EXT%.so}
fail() { echo "FAIL: $*" >&2; exit 1; }
check() {   # check NAME EXPECTED ACTUAL
  [ "$2" = "$3" ] || fail "$1: expected [$2], got [$3]"
  echo "ok: $1"
}

# The issue's acceptance command, verbatim but for the path.
out=$("$SQLITE3" :memory: ".load $EXT" "CREATE TABLE t(id, parent_id, v); INSERT INTO t VALUES (0,NULL,1),(1,0,2); SELECT * FROM pipeline('FROM t |> TREE ACCUMULATE UP SUM(v) AS s')" | sort)
check "tree accumulate" "$(printf '0||1|3\n1|0|2|2')" "$out"

# Named columns once the shape is known; a WHERE over them; parameters; a
# named table with a parameter; the JIT backend; a view as the source.
out=$("$SQLITE3" -header :memory: <<SQL
.load $EXT
CREATE TABLE slice(id INTEGER, parent_id INTEGER, name TEXT, dur INTEGER);
INSERT INTO slice VALUES (0,NULL,'main',10),(1,0,'a',2000000000),(2,1,'b',3),(3,NULL,'idle',1);
SELECT pipeline_columns('FROM slice |> TREE ACCUMULATE UP SUM(dur) AS total');
SELECT name, total FROM pipeline('FROM slice |> TREE ACCUMULATE UP SUM(dur) AS total') WHERE total > 1e9 ORDER BY name;
SELECT count(*) AS n FROM pipeline('FROM slice |> WHERE dur > ?', 5);
CREATE VIEW v AS SELECT * FROM slice WHERE parent_id IS NULL;
SELECT * FROM pipeline('FROM v |> AGGREGATE COUNT(*) AS roots, SUM(dur) AS d');
CREATE VIRTUAL TABLE temp.longer USING pipeline('FROM slice |> WHERE dur >= \$min |> SELECT name');
SELECT group_concat(name) AS names FROM longer(3);
SELECT pipeline_mode('jit') AS mode;
SELECT * FROM pipeline('FROM slice |> WHERE dur > 5 |> AGGREGATE COUNT(*) AS n');
SQL
)
expected='pipeline_columns('"'"'FROM slice |> TREE ACCUMULATE UP SUM(dur) AS total'"'"')
id, parent_id, name, dur, total
name|total
a|2000000003
main|2000000013
n
2
roots|d
2|11
names
main,a,b
mode
jit
n
2'
check "names, parameters, views, named tables, jit" "$expected" "$out"

# Errors come back as SQLite errors with the engine's message.
err=$("$SQLITE3" :memory: ".load $EXT" "SELECT * FROM pipeline('FROM nope')" 2>&1 || true)
case "$err" in *"FROM: no such table: 'nope' (line 1, column 6)"*) echo "ok: error";; *) fail "error: [$err]";; esac
