#!/usr/bin/env bash
# Compiles and runs the C example of README.md ("The library") against the
# freshly built shared library, so the README cannot drift from the API.
# Usage: example.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$src/README.md" "$tmp/example.c" <<'PY'
import sys
text = open(sys.argv[1]).read()
section = text[text.index("## The library"):]
code = section.split("```c", 1)[1].split("```", 1)[0]
code = code.replace("#include <pipejit.h>", "#include <stdio.h>\n#include <pipejit.h>\nint main(void) {", 1)
open(sys.argv[2], "w").write(code + "\n  return 0;\n}\n")
PY
cc -std=c17 -Wall -Wextra -Werror -I"$src/include" "$tmp/example.c" -L"$build" -lpipejit \
   -Wl,-rpath,"$build" -o "$tmp/example"
"$tmp/example" > "$tmp/out.txt"
# Two runs with different $min: rows of "depth count" pairs, then the plan
# and the JIT's LLVM IR of the handle.
rows=$(grep -cE '^[0-9]+ [0-9]+$' "$tmp/out.txt")
[ "$rows" -ge 10 ] || { echo "expected rows from two runs, got $rows"; cat "$tmp/out.txt"; exit 1; }
grep -q '^segment 0: scan table slice' "$tmp/out.txt" || { echo "no plan in output"; exit 1; }
grep -q 'define ' "$tmp/out.txt" || { echo "no LLVM IR in output"; exit 1; }
echo "README example: $rows rows, plan and LLVM IR printed"
