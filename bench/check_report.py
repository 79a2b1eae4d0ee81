#!/usr/bin/env python3
"""check_report.py — ctest `bench_report_quick`: runs pipejit-bench --quick
with --report/--svg on a few small workloads and checks that REPORT.md has
its sections and well-formed tables and that report.svg is well-formed XML
with one panel per workload and every point inside the picture.

usage: check_report.py PIPEJIT_BENCH OUTPUT_PREFIX
"""
import math
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

WORKLOADS = ["fused", "tiny", "tree_sql"]
SVG = "{http://www.w3.org/2000/svg}"


def fail(msg):
    print("check_report: " + msg, file=sys.stderr)
    sys.exit(1)


def tables(md):
    """Every Markdown table as a list of rows (lists of cells)."""
    out, cur = [], []
    for line in md.splitlines() + [""]:
        if line.startswith("|"):
            cur.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif cur:
            out.append(cur)
            cur = []
    return out


def check_md(path):
    md = open(path, encoding="utf-8").read()
    for head in ["# pipejit benchmark report", "## Machine", "## Command", "## Targets",
                 "## Results per workload"] + ["### " + w for w in WORKLOADS]:
        if head not in md:
            fail(f"{path}: no '{head}'")
    if not re.search(r"\| CPU \| .+ \|", md) or not re.search(r"\| LLVM \| \d+\.\d+", md):
        fail(f"{path}: machine description incomplete")
    if "pipejit-bench --quick" not in md:
        fail(f"{path}: the command is missing")
    tabs = tables(md)
    for t in tabs:
        if len(t) < 2 or not all(set(c) <= set("-:") for c in t[1]):
            fail(f"{path}: table without a separator row: {t[0]}")
        if any(len(r) != len(t[0]) for r in t):
            fail(f"{path}: ragged table under {t[0]}")
    targets = [t for t in tabs if t[0][:2] == ["target", "measured"]]
    if len(targets) != 1:
        fail(f"{path}: no targets table")
    tiny = [r for r in targets[0] if r[0].startswith("`tiny`")]
    if len(tiny) != 2 or any(r[3] not in ("yes", "**no**") for r in tiny):
        fail(f"{path}: tiny targets not evaluated: {tiny}")
    results = [t for t in tabs if t[0][:2] == ["size", "mode"]]
    if len(results) != len(WORKLOADS):
        fail(f"{path}: {len(results)} result tables, want {len(WORKLOADS)}")
    for w, t in zip(WORKLOADS, results):
        modes = {r[1] for r in t[2:]}
        want = {"interp", "jit", "auto"} | ({"c-ref"} if w in ("fused", "tiny") else set()) | (
            {"sqlite"} if w == "tree_sql" else set())
        if modes != want:
            fail(f"{path}: {w}: modes {sorted(modes)}, want {sorted(want)}")
        if any(r[-1] != "yes" for r in t[2:]):
            fail(f"{path}: {w}: an answer differs")
        if (w == "tree_sql") != ("vs SQLite" in t[0]):
            fail(f"{path}: {w}: vs SQLite column wrong")


def check_svg(path):
    root = ET.parse(path).getroot()
    if root.tag != SVG + "svg":
        fail(f"{path}: root is {root.tag}")
    w, h = float(root.get("width")), float(root.get("height"))
    titles = [t.text for t in root.iter(SVG + "text") if t.get("font-weight") == "bold"]
    for wl in WORKLOADS:
        if wl not in titles:
            fail(f"{path}: no panel for {wl}")
    circles = list(root.iter(SVG + "circle"))
    lines = list(root.iter(SVG + "polyline"))
    if len(lines) < 3 * len(WORKLOADS) or len(circles) < 3 * len(WORKLOADS):
        fail(f"{path}: too few lines ({len(lines)}) or points ({len(circles)})")
    for c in circles:
        x, y = float(c.get("cx")), float(c.get("cy"))
        if not (math.isfinite(x) and math.isfinite(y) and 0 <= x <= w and 0 <= y <= h):
            fail(f"{path}: point outside the picture: {x},{y}")


def main():
    if len(sys.argv) != 3:
        fail("usage: check_report.py PIPEJIT_BENCH OUTPUT_PREFIX")
    bench, prefix = sys.argv[1], sys.argv[2]
    md, svg = prefix + ".md", prefix + ".svg"
    cmd = [bench, "--quick", "--workload", ",".join(WORKLOADS), "--sizes", "1000,10000",
           "--report", md, "--svg", svg, "--csv"]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        fail(f"{' '.join(cmd)} exited {run.returncode}: {run.stderr}")
    check_md(md)
    check_svg(svg)
    print("check_report: ok")


if __name__ == "__main__":
    main()
