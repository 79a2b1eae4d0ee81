#!/bin/sh
# Dot-commands outside a terminal (ctest: cli_dot): in scripts on standard
# input, FILE arguments, -c TEXT and .read files, as sqlite3 reads them —
# a line starting with '.' where a statement may start. Every command the
# shell lists in .help runs here at least once (the pseudo-terminal test
# covers what needs a terminal); .dump's SQL is loaded into python3's
# sqlite3 module and compared with the source.
# Usage: test_dot.sh PIPEJIT PYTHON3
set -eu
PJ=$1
PY=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"
fail() { echo "FAIL: $*" >&2; exit 1; }
# same TEXT WANT WHAT
same() { [ "$1" = "$2" ] || fail "$3: got
$1
--- want
$2"; }

# ---- modes, headers, widths through stdin ----
out=$(printf '%s\n' '.mode csv' 'SELECT 1 AS a, NULL AS b;' '.headers off' 'SELECT 2 AS a;' \
  '.headers on' '.mode jsonl' 'SELECT 3 AS a UNION ALL SELECT 4;' 'SELECT 5 AS b;' \
  '.mode list' "SELECT 6 AS a, 'x' AS b;" '.mode tabs' "SELECT 7 AS a, 'y' AS b;" \
  '.mode line' 'SELECT 8 AS a, 9 AS bb;' '.mode markdown' 'SELECT 10 AS a;' \
  '.mode box' 'SELECT 11 AS a;' '.mode json' 'SELECT 12 AS a;' '.mode table' \
  '.width 3 -5' "SELECT 'abcdef' AS s, 13 AS n;" '.width' "SELECT 'abcdef' AS s;" '.mode' \
  | "$PJ")
same "$out" 'a,b
1,

2
{"a": 3}
{"a": 4}
{"b": 5}

a|b
6|x

a	b
7	y

 a = 8
bb = 9

|  a |
|---:|
| 10 |

┌────┐
│  a │
├────┤
│ 11 │
└────┘

[
  {"a": 12}
]

s        n
---  -----
ab…     13

s
------
abcdef
table' "modes through stdin"

# --format takes the same names; a bad one lists them
same "$("$PJ" --format jsonl -c 'SELECT 1 AS a; SELECT 2 AS b')" '{"a": 1}
{"b": 2}' "--format jsonl"
same "$("$PJ" --format markdown -c 'SELECT 1 AS a')" '| a |
|--:|
| 1 |' "--format markdown"
"$PJ" --format xml -c 'SELECT 1' 2>err && fail "--format xml accepted"
grep -q "bad value for --format: 'xml'" err || fail "--format xml message"
"$PJ" --help | grep -q 'table|box|markdown|line|csv|json|jsonl|list|tabs' || fail "--help formats"

# ---- .read, nested, relative, with errors at the file's line ----
mkdir sub
printf '%s\n' 'SELECT 1 AS inner_one;' '.read sub/two.sql' > one.sql
printf '%s\n' '.mode csv' 'SELECT 2 AS inner_two;' > sub/two.sql
same "$(printf '.read one.sql\nSELECT 3 AS after;\n' | "$PJ")" 'inner_one
---------
        1

inner_two
2

after
3' ".read nested"
printf '%s\n' '.mode csv' '-- a comment' '' 'SELECT 1 AS ok;' 'SELECT nope;' > bad.sql
printf '.read bad.sql\nSELECT 99;\n' | "$PJ" >out 2>err && fail ".read error ignored"
grep -q 'no such column: nope' err || fail ".read error message"
grep -q 'at line 5, column 8' err || fail ".read error line: $(cat err)"
grep -q '99' out && fail "the script went on after the error"
printf '.read missing.sql\n' | "$PJ" 2>err && fail ".read missing accepted"
grep -q "cannot open 'missing.sql'" err || fail ".read missing message"
grep -q 'at line 1 of -: .read missing.sql' err || fail ".read missing: where"
printf '{"traceEvents":[]}' > t.json
printf '.read t.json\n' | "$PJ" 2>err && fail ".read of a trace accepted"
grep -q 't.json is a JSON trace, not a script (.open t.json loads it)' err || fail ".read trace: $(cat err)"
printf '.read self.sql\n' > self.sql
"$PJ" self.sql 2>err && fail "endless .read accepted"
grep -q 'more than 16 deep' err || fail ".read depth"

# error positions of a FILE argument stay its own lines after dot-commands
printf '%s\n' '.headers off' '.mode csv' 'SELECT 1;' '' 'SELECT' '  nope;' > lines.sql
"$PJ" lines.sql >out 2>err && fail "error ignored"
grep -q 'at line 6, column 3' err || fail "line after dot-commands: $(cat err)"
# a '.' inside a statement is not a command; a comment-only script is fine
same "$(printf 'SELECT\n.5 AS x;\n' | "$PJ" --format csv)" 'x
0.5' "'.' continuing a statement"
same "$(printf -- '-- nothing\n/* at all */\n' | "$PJ")" '' "comments only"
printf '.frobnicate\n' | "$PJ" 2>err && fail "unknown command accepted"
grep -q 'unknown command .frobnicate' err || fail "unknown command message"
# .quit and .exit end the script, status 0
same "$(printf 'SELECT 1 AS a;\n.quit\nSELECT 2 AS b;\n' | "$PJ" --format csv)" 'a
1' ".quit"
same "$("$PJ" --format csv -c 'SELECT 1 AS a;' -c '.exit' -c 'SELECT 2 AS b')" 'a
1' ".exit in -c"

# ---- .output, .once, a pipe ----
printf '%s\n' '.mode csv' '.output o.txt' 'SELECT 1 AS a;' '.tables' 'SELECT 2 AS b;' \
  '.output' 'SELECT 3 AS c;' '.once once.txt' 'SELECT 4 AS d;' 'SELECT 5 AS e;' \
  ".output '|tr a-z A-Z > piped.txt'" "SELECT 'low' AS f;" '.output stdout' \
  'SELECT 6 AS g;' | "$PJ" --sample-trace=10 >out
same "$(cat out)" 'c
3
e
5
g
6' "stdout beside .output/.once"
same "$(cat o.txt)" 'a
1
cpu_frequency
process
sched
slice
thread
thread_track

b
2' ".output file"
same "$(cat once.txt)" 'd
4' ".once file"
same "$(cat piped.txt)" 'F
LOW' ".output |command"
printf '.output /nonexistent/dir/x\n' | "$PJ" 2>err && fail "unwritable .output accepted"
grep -q "cannot open '/nonexistent/dir/x'" err || fail ".output error"

# ---- .param: typed as sqlite3 types it, bound in SQL and pipelines ----
out=$(printf '%s\n' '.param set $i 42' '.param set :r 2.5' ".param set t 'a b'" \
  '.param set n NULL' '.param set w hello world' '.param set e 6*7' '.param list' \
  '.mode csv' 'SELECT typeof($i) AS i, typeof($r) AS r, typeof($t) AS t, typeof($n) AS n, $w AS w, $e AS e;' \
  'FROM (SELECT 1 AS v) |> EXTEND $i + 1 AS x, @t AS t;' \
  '.param unset i' '.param list' '.param clear' '.param' | "$PJ")
same "$out" '$i 42
$r 2.5
$t '"'a b'"'
$n NULL
$w '"'hello world'"'
$e 42
i,r,t,n,w,e
integer,real,text,null,hello world,42

v,x,t
1,43,a b
$r 2.5
$t '"'a b'"'
$n NULL
$w '"'hello world'"'
$e 42' ".param"
same "$("$PJ" --format csv -c '.param set lo 3' -c 'FROM (SELECT 5 AS v) |> WHERE v > $lo')" 'v
5' ".param across -c"
printf '.param set lo 1\n.param clear\nFROM (SELECT 5 AS v) |> WHERE v > $lo;\n' | "$PJ" 2>err &&
  fail "a cleared parameter still bound"
grep -q 'parameter \$lo is not bound' err || fail "cleared parameter message"

# ---- .open: a SQLite file, a trace; options and parameters carry over ----
"$PY" -c "import sqlite3; c = sqlite3.connect('db.sqlite'); c.execute('CREATE TABLE t(a INTEGER, b TEXT)'); c.execute(\"INSERT INTO t VALUES (1, 'x'), (2, 'y')\"); c.commit()"
cat > a.json <<'J'
{"traceEvents":[
 {"ph":"X","pid":1,"tid":2,"ts":1,"dur":5,"name":"outer"},
 {"ph":"X","pid":1,"tid":2,"ts":2,"dur":1,"name":"inner"}]}
J
out=$(printf '%s\n' '.param set k 1' '.open db.sqlite' '.tables' 'FROM t |> WHERE a > $k |> SELECT b;' \
  '.open a.json' 'FROM slice |> AGGREGATE COUNT(*) AS n;' '.open' '.tables' 'SELECT 1 AS empty;' \
  | "$PJ" --format csv)
same "$out" 't
b
y

n
2

empty
1' ".open"
printf '.open one.sql\n' | "$PJ" 2>err && fail ".open of a script accepted"
grep -q 'one.sql is not a database or a trace (.read one.sql runs a script)' err || fail ".open script"

# ---- .tables, .schema ----
out=$(printf '%s\n' 'CREATE TABLE zt(a INTEGER);' 'CREATE PERFETTO TABLE zp AS SELECT 1 AS b;' \
  '.tables z%' '.schema z%' '.schema zp' | "$PJ")
same "$out" 'zp
zt
CREATE TABLE zp(
  b INTEGER
);
CREATE TABLE zt(a INTEGER);
CREATE TABLE zp(
  b INTEGER
);' ".tables/.schema"
printf '.schema nope\n' | "$PJ" 2>err && fail ".schema nope"
grep -q 'no such table or view: nope' err || fail ".schema nope message"

# ---- .timer, .timing: on standard error ----
printf '%s\n' '.timer on' 'SELECT 1;' '.timer off' 'SELECT 2;' '.timing on' 'SELECT 3;' | "$PJ" >out 2>err
[ "$(grep -c '^Run Time: real [0-9.]* user [0-9.]* sys [0-9.]*$' err)" = 1 ] || fail ".timer: $(cat err)"
grep -q '^timing: parse' err || fail ".timing"
grep -q 'Run Time' out && fail ".timer on standard output"

# ---- .threads: the engine's thread count ----
same "$(printf '%s\n' '.threads 3' '.threads' | "$PJ")" '3' ".threads"
printf '.threads 0\n' | "$PJ" 2>err && fail ".threads 0"
grep -q 'from 1 to 256' err || fail ".threads message"

# ---- .explain (the --dump kinds), on standard error as --dump's ----
printf '%s\n' '.explain plan' 'FROM (SELECT 1 AS v) |> WHERE v = 1;' | "$PJ" >out 2>err
grep -q 'filter v = 1' err || fail ".explain plan"
grep -q 'filter' out && fail ".explain plan on standard output"
if "$PJ" --mode jit -c 'SELECT 1' >/dev/null 2>&1; then
  for k in llvm llvm-raw asm; do
    printf '%s\n' ".explain $k" 'FROM (SELECT 1 AS v) |> WHERE v = 1;' '.explain off' \
      'FROM (SELECT 2 AS w) |> WHERE w = 2;' | "$PJ" >out 2>err
    [ "$(wc -l < err)" -gt 8 ] || fail ".explain $k printed little"
    grep -q 'w = 2\|(SELECT 2' err && fail ".explain off still dumps"
  done
  printf '.explain llvm\nFROM (SELECT 1 AS v) |> WHERE v = 1;\n' | "$PJ" 2>&1 >/dev/null | grep -q 'define' ||
    fail ".explain llvm: no IR"
fi
printf '.explain sideways\n' | "$PJ" 2>err && fail ".explain sideways"
grep -q 'expected plan, llvm, llvm-raw, asm or off' err || fail ".explain message"

# ---- .dump: SQL text that rebuilds the data in sqlite3 ----
printf '%s\n' "CREATE TABLE s(a INTEGER, b TEXT, c REAL);" \
  "INSERT INTO s VALUES (1, 'it''s', 0.1), (2, NULL, -1e300), (3, 'x\"y', 2.0);" \
  "CREATE VIEW sv AS SELECT a FROM s WHERE a > 1;" "CREATE INDEX si ON s(b);" \
  "CREATE PERFETTO TABLE p AS SELECT 7 AS k, 'seven' AS name UNION ALL SELECT 8, NULL;" \
  '.dump' | "$PJ" > dump.sql
head -2 dump.sql | grep -q 'BEGIN TRANSACTION' || fail ".dump header"
tail -1 dump.sql | grep -q '^COMMIT;$' || fail ".dump end"
"$PY" - dump.sql <<'P' || fail ".dump does not load back"
import sqlite3, sys
c = sqlite3.connect(":memory:")
c.executescript(open(sys.argv[1]).read())
assert c.execute("SELECT * FROM s ORDER BY a").fetchall() == [(1, "it's", 0.1), (2, None, -1e300), (3, 'x"y', 2.0)]
assert c.execute("SELECT * FROM sv").fetchall() == [(2,), (3,)]
assert c.execute("SELECT * FROM p ORDER BY k").fetchall() == [(7, "seven"), (8, None)]
assert c.execute("SELECT name FROM sqlite_schema WHERE type = 'index'").fetchall() == [("si",)]
P
same "$(printf '%s\n' 'CREATE TABLE q(a);' 'INSERT INTO q VALUES (1);' '.dump q' | "$PJ")" \
  'PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE q(a);
INSERT INTO "q" VALUES(1);
COMMIT;' ".dump TABLE"

# ---- .help lists every command, abbreviations work ----
printf '.help\n' | "$PJ" >out
for c in .dump .exit .explain .headers .help .mode .once .open .output .param .quit .read \
         .schema .tables .threads .timer .timing .width; do
  grep -q "^$c " out || fail ".help lacks $c"
done
grep -q 'llvm-raw|asm' out || fail ".help lacks llvm-raw and asm"
same "$(printf '.mo csv\n.head off\nSELECT 1;\n' | "$PJ")" '1' "abbreviated commands"
echo "ok: dot-commands in scripts"
