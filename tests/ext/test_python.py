"""python/pipejit.py over build/libpipejit.so (ctest: python_pipejit).
Plain unittest: runs with the system python3, no pip packages."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir,
                                "python"))
import pipejit  # noqa: E402


class EngineTest(unittest.TestCase):
    def setUp(self):
        self.e = pipejit.Engine()
        self.e.execute("CREATE TABLE t(id INTEGER, parent_id INTEGER, v INTEGER, name TEXT);"
                       "INSERT INTO t VALUES (0,NULL,1,'root'),(1,0,2,'kid'),(2,0,NULL,'kid2')")

    def tearDown(self):
        self.e.close()

    def test_query_rows_and_nulls(self):
        rows = self.e.query("FROM t |> TREE ACCUMULATE UP SUM(v) AS s |> ORDER BY id")
        self.assertEqual([r["s"] for r in rows][:2], [3, 2])
        self.assertIsNone(rows[2]["v"])
        self.assertEqual(rows[0]["name"], "root")
        self.assertIsNone(rows[0]["parent_id"])
        self.assertEqual(list(rows[0]), ["id", "parent_id", "v", "name", "s"])

    def test_columns(self):
        cols = self.e.columns("FROM t |> WHERE v IS NOT NULL |> SELECT name, v * 1.5 AS w "
                              "|> ORDER BY name")
        self.assertEqual(cols, {"name": ["kid", "root"], "w": [3.0, 1.5]})

    def test_sql_and_execute(self):
        sets = self.e.execute("SELECT 1 AS a; FROM t |> AGGREGATE COUNT(*) AS n")
        self.assertEqual(sets, [[{"a": 1}], [{"n": 3}]])
        self.assertEqual(self.e.query("SELECT name FROM t WHERE id = 1"), [{"name": "kid"}])

    def test_compile_and_params(self):
        q = self.e.compile("FROM t |> WHERE v >= $min |> AGGREGATE COUNT(*) AS n")
        self.assertEqual(q.param_count, 1)
        self.assertEqual(q.run(min=1), [{"n": 2}])
        self.assertEqual(q.run(min=2), [{"n": 1}])
        self.assertEqual(q.run(1.5), [{"n": 1}])   # positional, and a new type
        self.assertIn("AGGREGATE", q.plan.upper())
        with self.assertRaises(pipejit.Error):
            q.run(nope=1)
        q2 = self.e.compile("FROM t |> WHERE name = ? |> SELECT id")
        self.assertEqual(q2.run("kid"), [{"id": 1}])
        self.assertEqual(self.e.query("FROM t |> WHERE id > ? |> SELECT id |> ORDER BY id", 0),
                         [{"id": 1}, {"id": 2}])

    def test_errors_have_positions(self):
        with self.assertRaises(pipejit.Error) as cm:
            self.e.query("FROM t\n|> WHERE nope > 1")
        err = cm.exception
        self.assertTrue(err.message.startswith("WHERE: "), err.message)
        self.assertEqual((err.line, err.column), (2, 10))
        self.assertEqual(err.offset, 16)
        with self.assertRaises(pipejit.Error):
            self.e.compile("FROM")

    def test_nul_byte_is_an_error(self):
        # A NUL reaches the engine (by length) and is reported, not a silent end.
        with self.assertRaises(pipejit.Error) as cm:
            self.e.execute("SELECT 1;\0SELECT 2;")
        self.assertIn("unexpected NUL byte", cm.exception.message)
        self.assertEqual((cm.exception.line, cm.exception.column), (1, 10))

    def test_modes_agree(self):
        text = "FROM t |> TREE ACCUMULATE UP SUM(v) AS s |> ORDER BY id"
        self.e.mode = "interp"
        a = self.e.query(text)
        self.e.mode = "jit"
        self.assertEqual(self.e.mode, "jit")
        self.assertEqual(self.e.query(text), a)
        with self.assertRaises(ValueError):
            self.e.mode = "fast"

    def test_sample_trace(self):
        self.e.load_sample_trace(1000)
        self.assertEqual(self.e.query("FROM slice |> AGGREGATE COUNT(*) AS n"), [{"n": 1000}])
        cols = self.e.columns("FROM slice |> WHERE depth = 0 |> AGGREGATE COUNT(*) AS roots")
        self.assertGreater(cols["roots"][0], 0)

    def test_compiled_handle_after_schema_change(self):
        # issue 12 item 1: a handle bound before DROP/CREATE read a and b
        # by position, so it returned them swapped
        self.e.execute("CREATE TABLE s(a INTEGER, b INTEGER); INSERT INTO s VALUES (1, 2)")
        for mode in ("interp", "jit", "auto"):
            self.e.mode = mode
            q = self.e.compile("FROM s |> WHERE a = 1 |> SELECT a, b")
            self.assertEqual(q.run(), [{"a": 1, "b": 2}])
            self.e.execute("DROP TABLE s; CREATE TABLE s(b INTEGER, a INTEGER);"
                           "INSERT INTO s VALUES (2, 1)")
            self.assertEqual(q.run(), [{"a": 1, "b": 2}])
            self.e.execute("DROP TABLE s; CREATE TABLE s(a INTEGER, c INTEGER)")
            with self.assertRaisesRegex(pipejit.Error, "no such column: 'b'"):
                q.run()
            self.e.execute("DROP TABLE s; CREATE TABLE s(a INTEGER, b INTEGER);"
                           "INSERT INTO s VALUES (1, 2)")
            q.close()

    def test_closed_engine(self):
        q = self.e.compile("FROM t |> SELECT id")
        self.e.close()
        with self.assertRaises(pipejit.Error):
            q.run()
        with self.assertRaises(pipejit.Error):
            self.e.query("SELECT 1")


if __name__ == "__main__":
    unittest.main(verbosity=2)
