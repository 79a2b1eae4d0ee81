#!/usr/bin/env python3
"""bench_python.py — workload `to_pandas`: a 1M-row x 4-column result into
Python, run by `make bench` after pipejit-bench, written to
bench/REPORT_python.md.

usage: bench_python.py [--rows N] [--repeat K] [--report FILE]

The result is `FROM slice |> SELECT <4 columns>` over the sample trace
(ids, two int64 columns, one string column; and a variant with a
nullable column). Timed, each the median of K runs on the same result:
  to_pandas   Result.to_pandas() (pandas imported beforehand)
  to_numpy    Result.to_numpy()
  arrow       Result.__arrow_c_stream__() (the C export, strings copied)
  rows        Result.rows(), a Python tuple per row
  lists       the yardstick: how the package read results before it
              had NumPy (python/pipejit.py up to issue 17): a Python
              object per value through ctypes, a dict lookup per string,
              a bit test per value for NULLs
The query itself (compile and run) is timed apart and counted in none.
Targets (issue 17): to_pandas at most 0.1 s at 1M rows (pro rata at
other sizes), and at least 10x faster than the lists.
"""
import argparse
import ctypes
import os
import platform
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))
import pandas  # noqa: E402,F401  (imported before timing: its import is not the conversion)

import pipejit  # noqa: E402
from pipejit import _lib  # noqa: E402

QUERIES = [("4 columns", "FROM slice |> SELECT id, ts, dur, name"),
           ("4 columns, one nullable", "FROM slice |> SELECT id, dur, parent_id, name")]


def lists_yardstick(lib, res):
    """The pre-NumPy reader: column name -> list of Python values."""
    out = {}
    for c in range(lib.pj_result_column_count(res)):
        name = lib.pj_result_column_name(res, c).decode()
        col = _lib.Column()
        lib.pj_result_column(res, c, ctypes.byref(col))
        n, t = col.rows, col.type
        if t == _lib.ID:
            vals = list(range(n))
        else:
            ctype = {_lib.U32: ctypes.c_uint32, _lib.I32: ctypes.c_int32,
                     _lib.I64: ctypes.c_int64, _lib.F64: ctypes.c_double,
                     _lib.STR: ctypes.c_uint32, _lib.BOOL: ctypes.c_int64}[t]
            vals = list((ctype * n).from_address(col.values))
            if t == _lib.STR:
                strs, size = {}, ctypes.c_size_t()
                for i, sid in enumerate(vals):
                    s = strs.get(sid)
                    if s is None:
                        p = lib.pj_result_string(res, sid, ctypes.byref(size))
                        s = strs[sid] = ctypes.string_at(p, size.value).decode("utf-8", "replace")
                    vals[i] = s
        if col.validity:
            words = ctypes.cast(col.validity, ctypes.POINTER(ctypes.c_uint64))
            vals = [v if (words[i >> 6] >> (i & 63)) & 1 else None for i, v in enumerate(vals)]
        out[name] = vals
    return out


def median_s(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--report", default=os.path.join(HERE, "REPORT_python.md"))
    args = ap.parse_args()
    started = time.time()
    e = pipejit.Engine()
    e.load_sample_trace(args.rows)
    rows = []
    for label, text in QUERIES:
        t0 = time.perf_counter()
        r = e.query(text)
        query_s = time.perf_counter() - t0
        assert len(r) == args.rows, (len(r), args.rows)
        df = r.to_pandas()
        lists = lists_yardstick(e._lib, r._r)
        # Same answer both ways (NULL: pandas.NA against None).
        for name in r.columns:
            got = [None if v is pandas.NA else v for v in df[name].tolist()]
            assert got == lists[name], name
        m = {"query": query_s,
             "to_pandas": median_s(r.to_pandas, args.repeat),
             "to_numpy": median_s(r.to_numpy, args.repeat),
             "arrow": median_s(r.__arrow_c_stream__, args.repeat),
             "rows": median_s(r.rows, max(1, args.repeat // 2)),
             "lists": median_s(lambda: lists_yardstick(e._lib, r._r), max(1, args.repeat // 2))}
        rows.append((label, text, [str(t) for t in df.dtypes], m))
        r.close()
    e.close()

    out = []
    w = out.append
    w("# pipejit Python benchmark: workload `to_pandas`\n")
    w("Measured on %s UTC; the run took %.0f s. Python %s, NumPy %s, pandas %s, on %s."
      % (time.strftime("%Y-%m-%d %H:%M", time.gmtime(started)), time.time() - started,
         platform.python_version(), sys.modules["numpy"].__version__, pandas.__version__,
         platform.machine()))
    w("\n```\n%s\n```\n" % " ".join(["bench/bench_python.py"] + sys.argv[1:]))
    w("A result of %d rows of the sample trace, already computed (query time shown apart), "
      "converted %d times; medians in ms. `lists` is how the package read results before "
      "NumPy (a Python object per value through ctypes).\n" % (args.rows, args.repeat))
    w("| result | dtypes | query | to_pandas | to_numpy | arrow capsule | rows() | lists "
      "| lists / to_pandas |")
    w("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, text, dtypes, m in rows:
        w("| %s: `%s` | %s | %.1f | %.1f | %.1f | %.1f | %.0f | %.0f | %.1fx |"
          % (label, text, ", ".join(dtypes), 1e3 * m["query"], 1e3 * m["to_pandas"],
             1e3 * m["to_numpy"], 1e3 * m["arrow"], 1e3 * m["rows"], 1e3 * m["lists"],
             m["lists"] / m["to_pandas"]))
    w("\n## Targets\n")
    w("| target | measured | goal | met |")
    w("|---|---:|---:|---|")
    for label, _, _, m in rows:
        a = m["to_pandas"] <= 0.1 * args.rows / 1000000
        b = m["lists"] / m["to_pandas"] >= 10
        w("| `to_pandas` %s, %d rows: time | %.1f ms | <= %.3g ms | %s |"
          % (label, args.rows, 1e3 * m["to_pandas"], 100 * args.rows / 1000000,
             "yes" if a else "**no**"))
        w("| `to_pandas` %s: lists / to_pandas | %.1fx | >= 10x | %s |"
          % (label, m["lists"] / m["to_pandas"], "yes" if b else "**no**"))
    text = "\n".join(out) + "\n"
    with open(args.report, "w", encoding="utf-8") as f:
        f.write(text)
    print(text)
    return 0   # a missed target shows as **no** in the report, as in REPORT.md


if __name__ == "__main__":
    sys.exit(main())
