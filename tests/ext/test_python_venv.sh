#!/bin/sh
# test_python_venv.sh PYTHON3 LIB — the Python package as a new user gets
# it (issue 17's acceptance): a fresh venv, `pip install ./python` with no
# package index (the backend needs none), then the README's one-liner on a
# real trace, run from another folder with PIPEJIT_LIB unset, so the
# library comes from the installed package.
# The venv sees Debian's python3-numpy and python3-pandas
# (--system-site-packages). LIB is the libpipejit.so to package: when it
# is not the checkout's build/libpipejit.so (the ASan build), PIPEJIT_LIB
# names it for the install. Exits 77 (skipped) when shared/ is absent.
set -eu
python3=$1
lib=$2
src=$(pwd)
trace=
for d in "$src/../shared" "$src/../../shared"; do
  if [ -f "$d/data/traces/lthi_cats.json.gz" ]; then
    trace=$(cd "$d/data/traces" && pwd)/lthi_cats.json.gz
    break
  fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python3" -m venv --system-site-packages "$tmp/venv"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
if [ "$(realpath "$lib")" = "$(realpath -m "$src/build/libpipejit.so")" ]; then
  env -u PIPEJIT_LIB "$tmp/venv/bin/pip" install --quiet ./python
else
  PIPEJIT_LIB="$lib" "$tmp/venv/bin/pip" install --quiet ./python
fi
cd "$tmp"
unset PIPEJIT_LIB
# The library found is the package's copy.
"$tmp/venv/bin/python" -c "import pipejit, pipejit._lib as l; pipejit.Engine(); print(l.load().pj_path)" \
  >where.txt
grep -q "$tmp/venv/lib/.*/site-packages/pipejit/libpipejit.so" where.txt || {
  echo "library loaded from $(cat where.txt), not from the installed package" >&2
  exit 1
}
if [ -z "$trace" ]; then
  echo "skipping the real trace: shared/data/traces not beside the checkout" >&2
  exit 77
fi
"$tmp/venv/bin/python" -c "import pipejit; e = pipejit.Engine(trace='$trace'); print(e.query('FROM slice |> AGGREGATE COUNT(*) AS n').to_pandas())" >out.txt
cat out.txt
# A one-row DataFrame: the heading n, then row 0 with the trace's slice count.
want=$("$tmp/venv/bin/python" -c "import pipejit; print(pipejit.Engine(trace='$trace').trace_info['slices'])")
[ "$(awk 'NR == 1 { print $1 } NR == 2 { print $1, $2 } END { print NR }' out.txt)" = "$(printf 'n\n0 %s\n2' "$want")" ] || {
  echo "expected the heading n and the row 0 $want" >&2
  exit 1
}
echo "venv install: ok ($want slices)"
