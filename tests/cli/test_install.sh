#!/bin/sh
# A fresh install (cmake --install into an empty prefix) finds pipejit's
# own modules: INCLUDE PERFETTO MODULE slices.self_time works with no
# module path given, from the installed binary, and reads the installed
# files (not the build tree's).
set -eu
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
test -x "$prefix/bin/pipejit"
test -f "$prefix/share/pipejit/modules/slices/self_time.sql"
test -f "$prefix/include/pipejit.h"
# The installed copy is what runs: a marker module only there is found.
mkdir -p "$prefix/share/pipejit/modules/installcheck"
echo "CREATE PERFETTO FUNCTION installed_here() RETURNS STRING AS SELECT 'yes';" \
  > "$prefix/share/pipejit/modules/installcheck/marker.sql"
out=$(env -u PIPEJIT_MODULE_PATH "$prefix/bin/pipejit" --sample-trace=2000 --format csv -c "
INCLUDE PERFETTO MODULE slices.self_time;
INCLUDE PERFETTO MODULE installcheck.marker;
SELECT installed_here() AS here, COUNT(*) AS n, SUM(self_dur >= 0) AS ok FROM slice_self_time")
expected="here,n,ok
yes,2000,2000"
if [ "$out" != "$expected" ]; then
  echo "unexpected output:"; echo "$out"; exit 1
fi
echo "install ok"
