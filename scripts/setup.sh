#!/usr/bin/env bash
# Installs what pipejit needs on a Debian 12 machine, and nothing more.
# `apt-get update` runs only when a package is missing; non-root users get
# a clear message listing what to install instead of a failed sudo prompt.
# `scripts/setup.sh fuzz` also installs clang and its runtime libraries
# (libFuzzer, ASan, UBSan) for the fuzz targets in fuzz/ (`make fuzz`).
# python3-venv, -numpy and -pandas: the Python package's tests (a venv
# with --system-site-packages; no package index is needed).
# `scripts/setup.sh dask` also installs python3-distributed, for
# pipejit.batch's test on a Dask LocalCluster (skipped without it: Dask
# is optional for pipejit.batch, and a plain `make test` asks for nothing
# beyond the packages above).
set -euo pipefail
PKGS="cmake make gcc pkg-config llvm-19-dev libsqlite3-dev sqlite3 libcmocka-dev zlib1g-dev libzstd-dev libisal-dev libedit-dev python3 bsdutils python3-venv python3-numpy python3-pandas"
# test-only: protoc --decode_raw cross-checks the protobuf test traces
PKGS="$PKGS protobuf-compiler"
if [ "${1:-}" = fuzz ]; then
  PKGS="$PKGS clang libclang-rt-14-dev"
fi
if [ "${1:-}" = dask ]; then
  PKGS="$PKGS python3-distributed"
fi
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "pipejit: missing packages:$missing" >&2
  echo "pipejit: run as root, or: sudo apt-get install -y$missing" >&2
  exit 1
fi
echo "pipejit: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq $missing >/dev/null
