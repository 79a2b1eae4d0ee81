#!/bin/sh
# test_ext_deps.sh EXT — the SQLite loadable extension carries no trace
# importer: it needs neither ISA-L, zlib nor zstd (nor json-c), and it
# exports its sqlite3_*_init entry points and nothing else (the engine it
# contains is hidden, so it never clashes with a libpipejit in the same
# process).
set -u
ext=$1
needed=$(readelf -d "$ext" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p') || exit 1
[ -n "$needed" ] || { echo "readelf found no NEEDED entry in $ext"; exit 1; }
fail=0
for lib in $needed; do
  case $lib in
    libisal*|libdeflate*|libz.*|libzstd*|libjson-c*) echo "the extension links $lib"; fail=1 ;;
  esac
done
extra=$(nm -D --defined-only "$ext" | awk '{print $NF}' |
        grep -vE '^(sqlite3_[a-z_]*_init|_edata|_end|__bss_start)$')
if [ -n "$extra" ]; then echo "the extension exports more than its entry points:"; echo "$extra" | head; fail=1; fi
if ! nm -D --defined-only "$ext" | grep -q ' T sqlite3_pipejit_sqlite_init$'; then
  echo "entry point sqlite3_pipejit_sqlite_init missing"; fail=1
fi
[ $fail = 0 ] && echo "extension: needs" $needed
exit $fail
