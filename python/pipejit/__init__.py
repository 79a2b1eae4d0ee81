"""pipejit from Python: pipe queries over trace tables, results as NumPy
arrays, pandas DataFrames or Arrow.

    import pipejit
    with pipejit.Engine(trace="trace.json.gz") as e:   # or Engine(db="t.db")
        df = e.query("FROM slice |> AGGREGATE COUNT(*) AS n").to_pandas()
        r = e.query("FROM slice |> WHERE dur > $min |> SELECT name, dur", min=1000)
        r.columns, r.rows()[:3], r.to_numpy()["dur"], r.plan, r.llvm_ir
        q = e.compile("FROM slice |> WHERE dur > ? |> AGGREGATE COUNT(*) AS n")
        q.run(1000).rows(); q.run(5000).rows()        # compiled once
        e.execute("CREATE PERFETTO TABLE big AS FROM slice |> WHERE dur > 1000")
    frames = pipejit.batch("traces/*.pftrace", "FROM slice |> AGGREGATE COUNT(*) AS n")
    frames["result_1"], frames["batch_errors"]       # one row per trace; failures

ctypes over libpipejit.so (found through PIPEJIT_LIB, the package
directory, or the checkout's build/). Errors raise pipejit.Error with
.message ("<STAGE>: ..."), .line, .column and .offset.
"""
from ._batch import batch
from ._engine import Engine, Query
from ._lib import MODES, Error, Interrupted
from ._result import Result

__all__ = ["Engine", "Query", "Result", "Error", "Interrupted", "MODES", "batch", "__version__"]
__version__ = "0.1.0"

for _cls in (Engine, Query, Result, Error, Interrupted):
    _cls.__module__ = "pipejit"   # tracebacks say pipejit.Error
del _cls
