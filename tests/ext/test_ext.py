"""The loadable extension from python3's sqlite3 module (ctest:
ext_python_sqlite3). PIPEJIT_EXT names build/pipejit_sqlite.so."""
import os
import sqlite3
import sys
import unittest

EXT = os.environ.get("PIPEJIT_EXT", "build/pipejit_sqlite.so")


class ExtensionTest(unittest.TestCase):
    def setUp(self):
        self.db = sqlite3.connect(":memory:")
        self.db.enable_load_extension(True)
        self.db.load_extension(os.path.abspath(EXT))
        self.db.enable_load_extension(False)
        self.db.executescript(
            "CREATE TABLE slice(id INTEGER, parent_id INTEGER, name TEXT, dur INTEGER);"
            "INSERT INTO slice VALUES (0,NULL,'main',10),(1,0,'a',2000000000),(2,1,'b',3),"
            "(3,NULL,'idle',1);")

    def tearDown(self):
        self.db.close()

    def test_select_star_has_the_pipeline_columns(self):
        cur = self.db.execute(
            "SELECT * FROM pipeline('FROM slice |> TREE ACCUMULATE UP SUM(dur) AS total') "
            "ORDER BY 1")  # positional: names are unknown until it ran
        self.assertEqual([d[0] for d in cur.description],
                         ["id", "parent_id", "name", "dur", "total"])
        self.assertEqual([r[4] for r in cur.fetchall()], [2000000013, 2000000003, 3, 1])

    def test_issue_example(self):
        text = "FROM slice |> TREE ACCUMULATE UP SUM(dur) AS total"
        # The first statement with this shape declares the columns ...
        self.db.execute("SELECT pipeline_columns(?)", (text,)).fetchone()
        rows = self.db.execute(
            "SELECT name, total FROM pipeline(?) WHERE total > 1e9 ORDER BY name",
            (text,)).fetchall()
        self.assertEqual(rows, [("a", 2000000003), ("main", 2000000013)])

    def test_shapes_change_between_statements(self):
        a = "FROM slice |> AGGREGATE COUNT(*) AS n"
        b = "FROM slice |> WHERE dur > ? |> SELECT name"
        for _ in range(3):
            self.assertEqual(self.db.execute("SELECT * FROM pipeline(?)", (a,)).fetchall(), [(4,)])
            self.assertEqual(
                self.db.execute("SELECT * FROM pipeline(?, 5) ORDER BY 1", (b,)).fetchall(),
                [("a",), ("main",)])

    def test_reads_the_connections_tables_now(self):
        q = "SELECT * FROM pipeline('FROM slice |> AGGREGATE COUNT(*) AS n')"
        self.assertEqual(self.db.execute(q).fetchone(), (4,))
        self.db.execute("INSERT INTO slice VALUES (4, NULL, 'late', 7)")
        self.assertEqual(self.db.execute(q).fetchone(), (5,))

    def test_named_table_with_parameter(self):
        self.db.execute("CREATE VIRTUAL TABLE temp.longer USING "
                        "pipeline('FROM slice |> WHERE dur >= $min |> SELECT name, dur')")
        rows = self.db.execute("SELECT name FROM longer(10) ORDER BY dur").fetchall()
        self.assertEqual(rows, [("main",), ("a",)])
        rows = self.db.execute("SELECT l.name FROM slice s JOIN longer(3) l ON l.name = s.name "
                               "WHERE s.parent_id IS NULL").fetchall()
        self.assertEqual(rows, [("main",)])

    def test_unbound_parameter_is_an_error(self):
        # Not passing $min is an error naming it; passing NULL is an answer.
        self.db.execute("CREATE VIRTUAL TABLE temp.atleast USING "
                        "pipeline('FROM slice |> WHERE dur >= $min |> AGGREGATE COUNT(*) AS n')")
        with self.assertRaisesRegex(sqlite3.OperationalError,
                                    r"WHERE: parameter \$min is not bound"):
            self.db.execute("SELECT n FROM atleast").fetchall()
        self.assertEqual(self.db.execute("SELECT n FROM atleast(NULL)").fetchall(), [(0,)])
        # A cached pipeline does not keep an earlier call's value.
        self.assertEqual(self.db.execute("SELECT n FROM atleast(0)").fetchall(), [(4,)])
        with self.assertRaisesRegex(sqlite3.OperationalError, r"parameter \$min is not bound"):
            self.db.execute("SELECT n FROM atleast").fetchall()
        with self.assertRaisesRegex(sqlite3.OperationalError, r"parameter \$min is not bound"):
            self.db.execute("SELECT * FROM pipeline('FROM slice |> WHERE dur > $min')").fetchall()

    def test_both_backends_agree(self):
        text = "SELECT * FROM pipeline('FROM slice |> TREE ACCUMULATE UP SUM(dur) AS t') ORDER BY 1"
        got = {}
        for mode in ("interp", "jit", "auto"):
            self.assertEqual(self.db.execute("SELECT pipeline_mode(?)", (mode,)).fetchone(),
                             (mode,))
            got[mode] = self.db.execute(text).fetchall()
        self.assertEqual(got["interp"], got["jit"])
        self.assertEqual(got["interp"], got["auto"])

    def test_errors(self):
        with self.assertRaisesRegex(sqlite3.OperationalError, r"FROM: no such table: 'nope'"):
            self.db.execute("SELECT * FROM pipeline('FROM nope')").fetchall()
        with self.assertRaisesRegex(sqlite3.OperationalError, "parameter"):
            self.db.execute("SELECT * FROM pipeline('FROM slice', 1)").fetchall()
        with self.assertRaisesRegex(sqlite3.OperationalError, "same output columns"):
            self.db.execute("SELECT * FROM pipeline('FROM slice |> AGGREGATE COUNT(*) AS n') a, "
                            "pipeline('FROM slice |> SELECT id') b").fetchall()
        # the connection still works afterwards
        self.assertEqual(self.db.execute(
            "SELECT * FROM pipeline('FROM slice |> AGGREGATE MAX(dur) AS m')").fetchone(),
            (2000000000,))


class StalePlanTest(unittest.TestCase):
    """Issue 12 item 1: the connection's plan cache and named tables bind
    again when a table they read changed schema."""

    def setUp(self):
        self.db = sqlite3.connect(":memory:")
        self.db.enable_load_extension(True)
        self.db.load_extension(os.path.abspath(EXT))
        self.db.enable_load_extension(False)
        self.db.executescript("CREATE TABLE t(a INTEGER, b INTEGER); INSERT INTO t VALUES (1, 2);")

    def tearDown(self):
        self.db.close()

    def run_all(self, text, *args):
        got = {}
        for mode in ("interp", "jit", "auto"):
            self.db.execute("SELECT pipeline_mode(?)", (mode,)).fetchone()
            got[mode] = self.db.execute("SELECT * FROM pipeline(?%s)" % (", ?" * len(args)),
                                        (text,) + args).fetchall()
        self.assertEqual(got["interp"], got["jit"])
        self.assertEqual(got["interp"], got["auto"])
        return got["interp"]

    def test_columns_swapped(self):
        q = "FROM t |> SELECT a, b |> WHERE a = 1"
        self.assertEqual(self.run_all(q), [(1, 2)])
        self.db.executescript("DROP TABLE t; CREATE TABLE t(b INTEGER, a INTEGER);"
                              "INSERT INTO t VALUES (2, 1);")
        self.assertEqual(self.run_all(q), [(1, 2)])

    def test_column_became_text(self):
        q = "FROM t |> SELECT a, b"
        self.assertEqual(self.run_all(q), [(1, 2)])
        self.db.executescript("DROP TABLE t; CREATE TABLE t(a TEXT, b INTEGER);"
                              "INSERT INTO t VALUES ('x', 2);")
        self.assertEqual(self.run_all(q), [("x", 2)])

    def test_add_column(self):
        self.assertEqual(self.run_all("FROM t |> SELECT b"), [(2,)])
        self.assertEqual(self.run_all("FROM t"), [(1, 2)])
        self.db.execute("ALTER TABLE t ADD COLUMN c TEXT DEFAULT 'z'")
        self.assertEqual(self.run_all("FROM t |> SELECT b"), [(2,)])
        cur = self.db.execute("SELECT * FROM pipeline('FROM t')")
        self.assertEqual(cur.fetchall(), [(1, 2, "z")])
        self.assertEqual([d[0] for d in cur.description], ["a", "b", "c"])

    def test_no_longer_binds(self):
        q = "FROM t |> SELECT a, b"
        self.assertEqual(self.run_all(q), [(1, 2)])
        self.db.executescript("DROP TABLE t; CREATE TABLE t(a INTEGER, c INTEGER);")
        with self.assertRaisesRegex(sqlite3.OperationalError, r"SELECT: no such column: 'b'"):
            self.db.execute("SELECT * FROM pipeline(?)", (q,)).fetchall()
        self.db.executescript("DROP TABLE t; CREATE TABLE t(b INTEGER, a INTEGER);"
                              "INSERT INTO t VALUES (7, 8);")
        self.assertEqual(self.run_all(q), [(8, 7)])

    def test_named_table(self):
        self.db.execute("CREATE VIRTUAL TABLE temp.pv USING "
                        "pipeline('FROM t |> WHERE a >= $min |> SELECT a, b')")
        self.assertEqual(self.db.execute("SELECT a, b FROM pv(0)").fetchall(), [(1, 2)])
        self.db.executescript("DROP TABLE t; CREATE TABLE t(b TEXT, a INTEGER);"
                              "INSERT INTO t VALUES ('two', 1);")
        self.assertEqual(self.db.execute("SELECT a, b FROM pv(0)").fetchall(), [(1, "two")])
        self.db.execute("ALTER TABLE t ADD COLUMN c INTEGER")
        self.assertEqual(self.db.execute("SELECT a, b FROM pv(1)").fetchall(), [(1, "two")])


class ViewsAndErrorsTest(unittest.TestCase):
    """Issue 12 item 6: views and triggers over pipelines through
    pipeline_view(); clear errors for a named table without text and for
    FROM pipeline without arguments."""

    def setUp(self):
        self.db = sqlite3.connect(":memory:")
        self.db.enable_load_extension(True)
        self.db.load_extension(os.path.abspath(EXT))
        self.db.enable_load_extension(False)
        self.db.executescript("CREATE TABLE t(a INTEGER, b INTEGER); INSERT INTO t VALUES (1, 2);")

    def tearDown(self):
        self.db.close()

    def test_view_over_pipeline_view(self):
        self.assertEqual(self.db.execute(
            "SELECT pipeline_view('pt', 'FROM t |> EXTEND a + b AS s')").fetchone(),
            ("a, b, s",))
        self.db.execute("CREATE VIEW pv AS SELECT * FROM pt")
        self.assertEqual(self.db.execute("SELECT * FROM pv").fetchall(), [(1, 2, 3)])
        # other shapes run in between: the view keeps its columns
        for text in ("FROM t |> SELECT a", "FROM t |> AGGREGATE COUNT(*) AS n, SUM(b) AS m"):
            self.db.execute("SELECT * FROM pipeline(?)", (text,)).fetchall()
            self.assertEqual(self.db.execute("SELECT * FROM pv").fetchall(), [(1, 2, 3)])
        self.db.execute("INSERT INTO t VALUES (10, 20)")
        self.assertEqual(self.db.execute("SELECT s FROM pv ORDER BY s").fetchall(), [(3,), (30,)])

    def test_trigger_over_pipeline_view(self):
        self.db.execute("SELECT pipeline_view('total', "
                        "'FROM t |> AGGREGATE SUM(b) AS n')").fetchone()
        self.db.executescript(
            "CREATE TABLE log(n INTEGER);"
            "CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO log SELECT n FROM total; END;")
        self.db.execute("SELECT * FROM pipeline('FROM t |> SELECT a')").fetchall()
        self.db.execute("INSERT INTO t VALUES (3, 4)")
        self.db.execute("INSERT INTO t VALUES (5, 6)")
        self.assertEqual(self.db.execute("SELECT n FROM log").fetchall(), [(6,), (12,)])

    def test_pipeline_view_errors(self):
        with self.assertRaisesRegex(sqlite3.OperationalError, "no such table: 'nope'"):
            self.db.execute("SELECT pipeline_view('x', 'FROM nope')").fetchone()
        self.db.execute("SELECT pipeline_view('x', 'FROM t')").fetchone()
        with self.assertRaisesRegex(sqlite3.OperationalError, "pipeline_view\\(\\): .*already exists"):
            self.db.execute("SELECT pipeline_view('x', 'FROM t')").fetchone()

    def test_nested_pipeline(self):
        inner = "FROM t |> EXTEND a + b AS s"
        outer = "FROM (SELECT * FROM pipeline('%s')) |> SELECT s, a" % inner.replace("'", "''")
        for mode in ("interp", "jit", "auto"):
            self.db.execute("SELECT pipeline_mode(?)", (mode,)).fetchone()
            for _ in range(2):
                self.assertEqual(self.db.execute("SELECT * FROM pipeline(?)", (outer,)).fetchall(),
                                 [(3, 1)])
                # another shape in between
                self.assertEqual(self.db.execute(
                    "SELECT * FROM pipeline('FROM t |> SELECT b')").fetchall(), [(2,)])
        self.assertEqual(self.db.execute(
            "SELECT * FROM pipeline(?, 2)", (outer + " |> WHERE s > ?",)).fetchall(), [(3, 1)])

    def test_named_table_needs_text(self):
        with self.assertRaisesRegex(sqlite3.OperationalError,
                                    "CREATE VIRTUAL TABLE x USING pipeline needs the pipeline text"):
            self.db.execute("CREATE VIRTUAL TABLE x USING pipeline")
        self.assertEqual(self.db.execute(
            "SELECT count(*) FROM sqlite_schema WHERE name = 'x'").fetchone(), (0,))

    def test_from_pipeline_without_text(self):
        with self.assertRaisesRegex(sqlite3.OperationalError, "no pipeline text"):
            self.db.execute("SELECT * FROM pipeline").fetchall()


if __name__ == "__main__":
    if not hasattr(sqlite3.Connection, "enable_load_extension"):
        print("this python3's sqlite3 module cannot load extensions", file=sys.stderr)
        sys.exit(1)
    unittest.main(verbosity=2)
