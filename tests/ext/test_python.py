"""The pipejit Python package (python/pipejit) over build/libpipejit.so
(ctest: python_pipejit). Plain unittest with the system python3 and
Debian's python3-numpy and python3-pandas (scripts/setup.sh installs
them)."""
import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.normpath(os.path.join(HERE, os.pardir, os.pardir, "python"))
sys.path.insert(0, PYTHON_DIR)
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import pipejit  # noqa: E402


def real_trace(name):
    """A trace of shared/data/traces (beside the checkout, or beside the
    worktree folder), or None."""
    for up in (os.pardir, os.path.join(os.pardir, os.pardir)):
        path = os.path.join(PYTHON_DIR, os.pardir, up, "shared", "data", "traces", name)
        if os.path.isfile(path):
            return os.path.normpath(path)
    return None


class EngineTest(unittest.TestCase):
    def setUp(self):
        self.e = pipejit.Engine()
        self.e.execute("CREATE TABLE t(id INTEGER, parent_id INTEGER, v INTEGER, name TEXT);"
                       "INSERT INTO t VALUES (0,NULL,1,'root'),(1,0,2,'kid'),(2,0,NULL,'kid2')")

    def tearDown(self):
        self.e.close()

    def test_rows_and_nulls(self):
        r = self.e.query("FROM t |> TREE ACCUMULATE UP SUM(v) AS s |> ORDER BY id")
        self.assertEqual(r.columns, ["id", "parent_id", "v", "name", "s"])
        self.assertEqual(r.types, ["int", "int", "int", "string", "int"])
        self.assertEqual(len(r), 3)
        self.assertEqual(r.rows(), [(0, None, 1, "root", 3), (1, 0, 2, "kid", 2),
                                    (2, 0, None, "kid2", 0)])   # NULL adds 0 (LANGUAGE.md)
        self.assertEqual(list(r), r.rows())

    def test_to_numpy(self):
        r = self.e.query("FROM t |> SELECT id, v, v * 1.5 AS w, name, v > 1 AS big |> ORDER BY id")
        cols = r.to_numpy()
        self.assertEqual(list(cols), ["id", "v", "w", "name", "big"])
        self.assertIsInstance(cols["id"], np.ndarray)
        self.assertNotIsInstance(cols["id"], np.ma.MaskedArray)   # no NULL: a plain array
        self.assertEqual(cols["id"].dtype, np.int64)
        self.assertEqual(cols["id"].tolist(), [0, 1, 2])
        self.assertIsInstance(cols["v"], np.ma.MaskedArray)
        self.assertEqual(cols["v"].dtype, np.int64)
        self.assertEqual(cols["v"].mask.tolist(), [False, False, True])
        self.assertEqual(cols["v"].tolist(), [1, 2, None])
        self.assertEqual(cols["w"].dtype, np.float64)
        self.assertEqual(cols["w"].tolist(), [1.5, 3.0, None])
        self.assertEqual(cols["name"].dtype, object)
        self.assertEqual(cols["name"].tolist(), ["root", "kid", "kid2"])
        self.assertEqual(cols["big"].dtype, bool)
        self.assertEqual(cols["big"].tolist(), [False, True, None])
        # Each call makes arrays of its own.
        again = r.to_numpy()
        again["id"][0] = 99
        self.assertEqual(cols["id"][0], 0)

    def test_to_pandas(self):
        df = self.e.query("FROM t |> SELECT id, v, v / 2.0 AS w, name, v > 1 AS big, "
                          "id > 0 AS kid |> ORDER BY id").to_pandas()
        self.assertIsInstance(df, pd.DataFrame)
        self.assertEqual(list(df.columns), ["id", "v", "w", "name", "big", "kid"])
        self.assertEqual([str(t) for t in df.dtypes],
                         ["int64", "Int64", "Float64", "object", "boolean", "bool"])
        self.assertEqual(df["v"].tolist()[:2], [1, 2])
        self.assertIs(df["v"][2], pd.NA)
        self.assertIs(df["big"][2], pd.NA)
        self.assertEqual(df["kid"].tolist(), [False, True, True])
        self.assertEqual(df["w"][1], 1.0)
        self.assertEqual(df["name"].tolist(), ["root", "kid", "kid2"])
        nulls = self.e.query("SELECT NULL AS a, 'x' AS s UNION ALL SELECT 1, NULL").to_pandas()
        self.assertIsNone(nulls["s"][1])

    def test_empty_result(self):
        r = self.e.query("FROM t |> WHERE id > 100 |> SELECT id, name, v * 2.5 AS w, v > 1 AS b")
        self.assertEqual(len(r), 0)
        self.assertEqual(r.rows(), [])
        df = r.to_pandas()
        self.assertEqual(list(df.columns), ["id", "name", "w", "b"])
        self.assertEqual(len(df), 0)
        cols = r.to_numpy()
        self.assertEqual([cols[c].dtype for c in ("id", "name", "w", "b")],
                         [np.int64, object, np.float64, bool])

    def test_predicates_are_bool(self):
        row = self.e.query("FROM t |> WHERE id = 1 |> SELECT v > 1 AS a, name = 'x' AS b, "
                           "v IS NULL AS c").rows()[0]
        self.assertEqual(row, (True, False, False))
        self.assertTrue(all(type(x) is bool for x in row))
        for mode in ("interp", "jit"):
            self.e.mode = mode
            r = self.e.query("FROM t |> SELECT id > 0 AS p |> ORDER BY p")
            self.assertEqual(r.types, ["bool"])
            self.assertEqual([type(x) for (x,) in r.rows()], [bool] * 3)
        # SQL has no boolean type: SQLite's 0/1, as the sqlite3 module gives.
        self.assertEqual(self.e.query("SELECT 2 > 1 AS p").rows(), [(1,)])

    def test_strings_decoded_once_per_distinct_value(self):
        names = self.e.query("FROM t |> ORDER BY id |> SELECT name").to_numpy()["name"]
        many = self.e.query("SELECT a.name FROM t AS a, t AS b").to_numpy()
        col = many["name"]
        self.assertEqual(len(col), 9)
        same = [x for x in col if x == "kid"]
        self.assertEqual(len(same), 3)
        self.assertTrue(all(x is same[0] for x in same))   # one str object per distinct string
        self.assertEqual(names.tolist(), ["root", "kid", "kid2"])

    def test_sparse_string_ids(self):
        # One row whose string id is far past the row count: the lookup
        # by unique ids, not the table indexed by id.
        self.e.execute("CREATE TABLE w(i INTEGER, s TEXT); WITH RECURSIVE n(i) AS (SELECT 0 "
                       "UNION ALL SELECT i + 1 FROM n WHERE i < 9999) INSERT INTO w "
                       "SELECT i, 'w' || i FROM n")
        self.e.load_table("w")
        r = self.e.query("FROM w |> WHERE i >= 9998 |> SELECT s, i |> ORDER BY i")
        self.assertEqual(r.rows(), [("w9998", 9998), ("w9999", 9999)])
        self.assertEqual(r.to_pandas()["s"].tolist(), ["w9998", "w9999"])

    def test_sql_and_execute(self):
        sets = self.e.execute("SELECT 1 AS a; CREATE TABLE u(x); FROM t |> AGGREGATE COUNT(*) AS n")
        self.assertEqual([s.rows() for s in sets], [[(1,)], [(3,)]])
        self.assertEqual([s.columns for s in sets], [["a"], ["n"]])
        r = self.e.query("SELECT name FROM t WHERE id = 1")
        self.assertEqual(r.rows(), [("kid",)])
        self.assertIsNone(r.plan)
        self.assertIsNone(r.llvm_ir)
        self.assertIsNone(self.e.query("INSERT INTO u VALUES (1)"))
        self.assertEqual(self.e.query("SELECT 1 AS a; SELECT 2 AS b").rows(), [(2,)])
        # A pipeline after comments is still compiled (it has a plan).
        r = self.e.query("-- count\n/* all */ FROM t |> AGGREGATE COUNT(*) AS n")
        self.assertIn("AGGREGATE", r.plan.upper())

    def test_compile_and_params(self):
        with self.e.compile("FROM t |> WHERE v >= $min |> AGGREGATE COUNT(*) AS n") as q:
            self.assertEqual(q.param_count, 1)
            self.assertEqual(q.run(min=1).rows(), [(2,)])
            self.assertEqual(q.run(min=2).rows(), [(1,)])
            self.assertEqual(q.run(1.5).rows(), [(1,)])        # positional, and a new type
            self.assertEqual(q.run(np.int64(2)).rows(), [(1,)])  # NumPy scalars bind
            self.assertEqual(q.run(None).rows(), [(0,)])
            self.assertEqual(q.run().rows(), [(0,)])           # bindings persist
            self.assertIn("AGGREGATE", q.plan.upper())
            with self.assertRaises(pipejit.Error) as cm:
                q.run(nope=1)
            self.assertIn("$nope", str(cm.exception))
            with self.assertRaises(pipejit.Error):
                q.run(1, 2)
            with self.assertRaises(TypeError):
                q.run([1])
        q2 = self.e.compile("FROM t |> WHERE name = ? |> SELECT id")
        self.assertEqual(q2.run("kid").rows(), [(1,)])
        r = self.e.query("FROM t |> WHERE id > ? |> SELECT id |> ORDER BY id", 0)
        self.assertEqual(r.rows(), [(1,), (2,)])
        self.assertEqual(self.e.query("FROM t |> WHERE id > $lo |> AGGREGATE COUNT(*) AS n",
                                      lo=0).rows(), [(2,)])

    def test_plan_and_ir(self):
        r = self.e.query("FROM t |> WHERE v > 1 |> SELECT id")
        self.assertIn("scan", r.plan)
        self.assertIn("define", r.llvm_ir)   # compiled on demand
        q = self.e.compile("FROM t |> WHERE v > 1 |> SELECT id")
        self.assertIn("define", q.llvm_ir_raw)
        self.assertTrue(q.asm.strip())
        self.assertEqual(q.run().plan, q.plan)

    def test_errors_have_positions(self):
        with self.assertRaises(pipejit.Error) as cm:
            self.e.query("FROM t\n|> WHERE nope > 1")
        err = cm.exception
        self.assertTrue(err.message.startswith("WHERE: "), err.message)
        self.assertEqual((err.line, err.column), (2, 10))
        self.assertEqual(err.offset, 16)
        self.assertIn("(line 2, column 10)", str(err))
        with self.assertRaises(pipejit.Error):
            self.e.compile("FROM")
        with self.assertRaises(pipejit.Error) as cm:
            self.e.query("SELECT nope FROM t")
        self.assertIn("nope", cm.exception.message)
        with self.assertRaises(pipejit.Error) as cm:
            self.e.execute("SELECT 1; SELECT * FROM missing")
        self.assertEqual(cm.exception.line, 1)

    def test_nul_byte_is_an_error(self):
        # A NUL reaches the engine (by length) and is reported, not a silent end.
        with self.assertRaises(pipejit.Error) as cm:
            self.e.execute("SELECT 1;\0SELECT 2;")
        self.assertIn("unexpected NUL byte", cm.exception.message)
        self.assertEqual((cm.exception.line, cm.exception.column), (1, 10))
        with self.assertRaises(pipejit.Error) as cm:
            self.e.query("FROM t\n|> SELECT id\0 |> LIMIT 1")
        self.assertIn("unexpected NUL byte", cm.exception.message)
        self.assertEqual((cm.exception.line, cm.exception.column), (2, 13))

    def test_modes_agree(self):
        text = "FROM t |> TREE ACCUMULATE UP SUM(v) AS s |> ORDER BY id"
        self.e.mode = "interp"
        a = self.e.query(text).rows()
        self.e.mode = "jit"
        self.assertEqual(self.e.mode, "jit")
        self.assertEqual(self.e.query(text).rows(), a)
        with self.assertRaises(ValueError):
            self.e.mode = "fast"
        with self.assertRaises(ValueError):
            pipejit.Engine(mode="fast")

    def test_threads(self):
        self.assertGreaterEqual(self.e.threads, 1)
        text = ("FROM slice |> WHERE dur > 100 |> AGGREGATE COUNT(*) AS n, SUM(dur * 0.5) AS s"
                " GROUP BY track_id, depth")
        e1 = pipejit.Engine(threads=1)
        e4 = pipejit.Engine(threads=4)
        try:
            self.assertEqual((e1.threads, e4.threads), (1, 4))
            for e in (e1, e4):
                e.load_sample_trace(300000)
            self.assertEqual(e4.query(text).rows(), e1.query(text).rows())
            e4.threads = 2
            self.assertEqual(e4.threads, 2)
            for bad in (0, -1, 1.5, "2", True):
                with self.assertRaises(ValueError):
                    e4.threads = bad
        finally:
            e1.close()
            e4.close()

    def test_sample_trace(self):
        self.e.load_sample_trace(1000)
        self.assertEqual(self.e.query("FROM slice |> AGGREGATE COUNT(*) AS n").rows(), [(1000,)])
        df = self.e.query("FROM slice |> WHERE depth = 0 |> SELECT id, ts, dur, name").to_pandas()
        self.assertGreater(len(df), 0)
        self.assertEqual(df["id"].dtype, np.int64)

    def test_compiled_handle_after_schema_change(self):
        # issue 12 item 1: a handle bound before DROP/CREATE read a and b
        # by position, so it returned them swapped
        self.e.execute("CREATE TABLE s(a INTEGER, b INTEGER); INSERT INTO s VALUES (1, 2)")
        for mode in ("interp", "jit", "auto"):
            self.e.mode = mode
            q = self.e.compile("FROM s |> WHERE a = 1 |> SELECT a, b")
            self.assertEqual(q.run().rows(), [(1, 2)])
            self.e.execute("DROP TABLE s; CREATE TABLE s(b INTEGER, a INTEGER);"
                           "INSERT INTO s VALUES (2, 1)")
            self.assertEqual(q.run().rows(), [(1, 2)])
            self.e.execute("DROP TABLE s; CREATE TABLE s(a INTEGER, c INTEGER)")
            with self.assertRaisesRegex(pipejit.Error, "no such column: 'b'"):
                q.run()
            self.e.execute("DROP TABLE s; CREATE TABLE s(a INTEGER, b INTEGER);"
                           "INSERT INTO s VALUES (1, 2)")
            q.close()

    def test_closed_engine(self):
        q = self.e.compile("FROM t |> SELECT id, name")
        r = q.run()
        df = r.to_pandas()
        self.e.close()
        for call in (q.run, r.rows, r.to_numpy, r.to_pandas, r.__arrow_c_stream__,
                     lambda: self.e.query("SELECT 1")):
            with self.assertRaises(pipejit.Error):
                call()
        self.assertEqual(df["name"].tolist(), ["root", "kid", "kid2"])   # made before: kept
        self.e.close()   # twice is fine

    def test_context_managers(self):
        with pipejit.Engine() as e:
            e.execute("CREATE TABLE a(x INTEGER); INSERT INTO a VALUES (1)")
            with e.compile("FROM a |> SELECT x") as q:
                with q.run() as r:
                    self.assertEqual(r.rows(), [(1,)])
                with self.assertRaises(pipejit.Error):
                    r.rows()
            with self.assertRaises(pipejit.Error):
                q.run()
        with self.assertRaises(pipejit.Error):
            e.query("SELECT 1")

    def test_interrupt_from_another_thread(self):
        self.e.load_sample_trace(2000000)
        self.e.mode = "interp"
        done = threading.Event()

        def keep_interrupting():
            while not done.wait(0.002):
                self.e.interrupt()

        t = threading.Thread(target=keep_interrupting)
        t.start()
        try:
            with self.assertRaises(pipejit.Interrupted) as cm:
                for _ in range(50):   # each run long enough for a request to land
                    self.e.query("FROM slice |> EXTEND dur * 3 + ts % 7 AS k |> "
                                 "AGGREGATE SUM(k) AS s GROUP BY name, depth")
            self.assertIsInstance(cm.exception, pipejit.Error)
        finally:
            done.set()
            t.join()
        self.assertEqual(self.e.query("FROM t |> AGGREGATE COUNT(*) AS n").rows(), [(3,)])


class TraceTest(unittest.TestCase):
    def test_engine_with_a_real_trace(self):
        path = real_trace("lthi_cats.json.gz")
        if not path:
            self.skipTest("shared/data/traces not beside the checkout")
        with pipejit.Engine(trace=path) as e:
            info = e.trace_info
            self.assertGreater(info["slices"], 50000)
            df = e.query("FROM slice |> AGGREGATE COUNT(*) AS n").to_pandas()
            self.assertEqual(df["n"].tolist(), [info["slices"]])
            self.assertEqual(e.load_trace(path)["slices"], info["slices"])

    def test_readme_example(self):
        # The README's Python example, run as written on a real trace.
        path = real_trace("lthi_cats.json.gz")
        if not path:
            self.skipTest("shared/data/traces not beside the checkout")
        with open(os.path.join(PYTHON_DIR, os.pardir, "README.md"), encoding="utf-8") as f:
            readme = f.read()
        section = readme[readme.index("## Python (`python/`)"):]
        code = section[section.index("```python\n") + 10:section.index("```\n", section.index("```python"))]
        code = code.replace("trace.json.gz", path)
        out = io.StringIO()
        scope = {}
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), scope)
        r = scope["r"]
        self.assertEqual((r.columns, r.types), (["name", "dur", "long"], ["string", "int", "bool"]))
        df = scope["df"]   # made inside the with: outlives the engine
        self.assertEqual(tuple(df.iloc[0]), ("MessageLoop::RunTask", 73000, True))   # as shown
        self.assertEqual(str(df.dtypes["long"]), "bool")
        self.assertIn("WHERE: no such column: 'nope' 1 21", out.getvalue())

    def test_trace_errors(self):
        with self.assertRaises(pipejit.Error) as cm:
            pipejit.Engine(trace="/nonexistent/trace.json")
        self.assertIn("/nonexistent/trace.json", cm.exception.message)
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            f.write("{ not json")
            f.flush()
            with pipejit.Engine() as e:
                with self.assertRaises(pipejit.Error) as cm:
                    e.load_trace(f.name)
                self.assertTrue(cm.exception.message.startswith("TRACE"), cm.exception.message)

    def test_db_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "x.db")
            with pipejit.Engine(db=path) as e:
                e.execute("CREATE TABLE k(x INTEGER); INSERT INTO k VALUES (41), (1)")
            with pipejit.Engine(db=path) as e:
                self.assertEqual(e.query("FROM k |> AGGREGATE SUM(x) AS s").rows(), [(42,)])


class LibraryLookupTest(unittest.TestCase):
    """A missing or broken library is a pipejit.Error that says where it
    looked, never a raw OSError."""

    def run_python(self, code, env_lib):
        with tempfile.TemporaryDirectory() as d:
            shutil.copytree(os.path.join(PYTHON_DIR, "pipejit"), os.path.join(d, "pipejit"),
                            ignore=shutil.ignore_patterns("*.so", "__pycache__"))
            env = dict(os.environ, PYTHONPATH=d)
            env.pop("PIPEJIT_LIB", None)
            if env_lib is not None:
                env["PIPEJIT_LIB"] = env_lib
            return subprocess.run([sys.executable, "-c", code], env=env, cwd=d,
                                  capture_output=True, text=True)

    PROBE = ("import pipejit\ntry:\n    pipejit.Engine()\nexcept pipejit.Error as e:\n"
             "    print('Error:', e)\n")

    def test_not_found(self):
        p = self.run_python(self.PROBE, None)
        self.assertIn("Error: pipejit: libpipejit.so not found", p.stdout, p.stderr)
        self.assertIn("PIPEJIT_LIB", p.stdout)
        self.assertIn("the package", p.stdout)
        p = self.run_python(self.PROBE, "/nonexistent/libpipejit.so")
        self.assertIn("/nonexistent/libpipejit.so", p.stdout, p.stderr)

    def test_not_a_library(self):
        with tempfile.NamedTemporaryFile(suffix=".so") as f:
            f.write(b"not an ELF file")
            f.flush()
            p = self.run_python(self.PROBE, f.name)
        self.assertIn("Error: pipejit: cannot load", p.stdout, p.stderr)

    def test_import_needs_no_library(self):
        p = self.run_python("import pipejit; print(pipejit.__version__)", "/nonexistent.so")
        self.assertEqual(p.returncode, 0, p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
