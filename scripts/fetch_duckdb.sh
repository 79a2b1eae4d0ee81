#!/usr/bin/env bash
# Fetches DuckDB's C library for `make bench-peers` (never for the build
# or the tests): npm's @duckdb/node-bindings-linux-x64 package ships
# libduckdb.so. It is unpacked once into a cache folder, reused after,
# and its path printed on standard output (the Makefile puts it in
# PJ_DUCKDB_LIB). DUCKDB_VERSION picks another release of the package;
# PJ_CACHE_DIR another cache (default ~/.cache/pipejit).
set -euo pipefail
VERSION=${DUCKDB_VERSION:-1.5.6-r.1}
CACHE=${PJ_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pipejit}/duckdb-$VERSION
LIB=$CACHE/libduckdb.so
if [ ! -s "$LIB" ]; then
  if ! command -v npm >/dev/null; then
    echo "fetch_duckdb: npm is needed to fetch DuckDB (apt-get install npm), or set PJ_DUCKDB_LIB to a libduckdb.so" >&2
    exit 1
  fi
  mkdir -p "$CACHE"
  tmp=$(mktemp -d "$CACHE/.fetch-XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  echo "fetch_duckdb: npm pack @duckdb/node-bindings-linux-x64@$VERSION into $CACHE" >&2
  (cd "$tmp" && npm pack --silent "@duckdb/node-bindings-linux-x64@$VERSION" >/dev/null)
  tar -xzf "$tmp"/*.tgz -C "$tmp" package/libduckdb.so
  mv "$tmp/package/libduckdb.so" "$LIB"
fi
echo "$LIB"
