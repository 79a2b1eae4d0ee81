"""The Arrow PyCapsule interface of pipejit.Result (ctest: python_arrow).

pyarrow is not installable on this project's machines, so the capsule is
read here as a consumer would read it (a small reader of the Arrow C
stream interface over ctypes): capsule name, schema, every buffer, end
of stream, release. The pyarrow tests run where pyarrow is present and
are skipped otherwise."""
import ctypes
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.normpath(os.path.join(HERE, os.pardir, os.pardir, "python")))
import numpy as np  # noqa: E402

import pipejit  # noqa: E402
from pipejit._arrow import ArrowArray, ArrowArrayStream, ArrowSchema  # noqa: E402

try:
    import pyarrow
except ImportError:
    pyarrow = None

api = ctypes.pythonapi   # declared differently from pipejit's own handle, on purpose
api.PyCapsule_IsValid.restype = ctypes.c_int
api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_GetPointer.restype = ctypes.c_void_p
api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def bit(address, i):
    return (ctypes.c_uint8.from_address(address + (i >> 3)).value >> (i & 7)) & 1


def read_child(schema, array):
    """A column of the exported batch as a Python list (None for NULL)."""
    fmt = schema.format.decode()
    n = array.length
    bufs = array.buffers
    valid = bufs[0]
    out = []
    for i in range(n):
        if valid and not bit(valid, i):
            out.append(None)
        elif fmt == "l":
            out.append(ctypes.c_int64.from_address(bufs[1] + 8 * i).value)
        elif fmt == "g":
            out.append(ctypes.c_double.from_address(bufs[1] + 8 * i).value)
        elif fmt == "b":
            out.append(bool(bit(bufs[1], i)))
        elif fmt == "u":
            lo = ctypes.c_int32.from_address(bufs[1] + 4 * i).value
            hi = ctypes.c_int32.from_address(bufs[1] + 4 * i + 4).value
            out.append(ctypes.string_at(bufs[2] + lo, hi - lo).decode())
        else:
            raise AssertionError("unexpected format " + fmt)
    nulls = sum(v is None for v in out)
    assert array.null_count == nulls, (array.null_count, nulls)
    return fmt, out


def consume(capsule):
    """Reads a whole stream capsule as a consumer does (moving the stream
    out: the capsule keeps a released stream). {name: (format, values)}"""
    assert api.PyCapsule_IsValid(capsule, b"arrow_array_stream")
    address = api.PyCapsule_GetPointer(capsule, b"arrow_array_stream")
    src = ArrowArrayStream.from_address(address)
    stream = ArrowArrayStream()
    ctypes.memmove(ctypes.byref(stream), address, ctypes.sizeof(stream))
    src.release = ctypes.cast(None, type(src.release))   # moved: the capsule only frees memory
    sp = ctypes.pointer(stream)
    schema = ArrowSchema()
    assert stream.get_schema(sp, ctypes.byref(schema)) == 0
    assert schema.format == b"+s"
    batches = []
    while True:
        array = ArrowArray()
        assert stream.get_next(sp, ctypes.byref(array)) == 0
        if not array.release:
            break
        cols = {}
        for c in range(schema.n_children):
            cs, ca = schema.children[c].contents, array.children[c].contents
            assert ca.length == array.length
            cols[cs.name.decode()] = read_child(cs, ca)
        batches.append(cols)
        array.release(ctypes.byref(array))
    schema.release(ctypes.byref(schema))
    stream.release(sp)
    assert not stream.release
    assert len(batches) == 1, len(batches)
    return batches[0]


class CapsuleTest(unittest.TestCase):
    def setUp(self):
        self.e = pipejit.Engine()
        self.e.execute("CREATE TABLE t(id INTEGER, v INTEGER, w REAL, name TEXT);"
                       "INSERT INTO t VALUES (0, 5, 0.5, 'a'), (1, NULL, NULL, NULL),"
                       "(2, 7, 2.25, 'héllo'), (3, 0, -1.0, 'a')")
        self.e.load_table("t")

    def tearDown(self):
        self.e.close()

    TEXT = "FROM t |> SELECT id, v, w, name, v > 5 AS big |> ORDER BY id"

    def test_every_type_and_null(self):
        for mode in ("interp", "jit"):
            self.e.mode = mode
            r = self.e.query(self.TEXT)
            got = consume(r.__arrow_c_stream__())
            self.assertEqual(list(got), r.columns)
            self.assertEqual(got["id"], ("l", [0, 1, 2, 3]))
            self.assertEqual(got["v"], ("l", [5, None, 7, 0]))
            self.assertEqual(got["w"], ("g", [0.5, None, 2.25, -1.0]))
            self.assertEqual(got["name"], ("u", ["a", None, "héllo", "a"]))
            self.assertEqual(got["big"], ("b", [False, None, True, False]))
            # The same values as to_numpy gives.
            cols = r.to_numpy()
            for name, (_, values) in got.items():
                self.assertEqual(values, cols[name].tolist(), name)

    def test_requested_schema_is_ignored(self):
        r = self.e.query("SELECT 1 AS a")
        self.assertEqual(consume(r.__arrow_c_stream__(requested_schema=None)), {"a": ("l", [1])})

    def test_capsule_outlives_result_and_engine(self):
        r = self.e.query(self.TEXT)
        capsule = r.__arrow_c_stream__()
        r.close()
        self.e.close()
        self.assertEqual(consume(capsule)["name"], ("u", ["a", None, "héllo", "a"]))

    def test_unread_capsule_is_released(self):
        # Dropped without a consumer: its destructor releases the stream
        # (under ASan a double release or a bad free would fail here).
        for _ in range(100):
            capsule = self.e.query(self.TEXT).__arrow_c_stream__()
            del capsule

    def test_empty(self):
        got = consume(self.e.query("FROM t |> WHERE id > 9 |> SELECT name, w").__arrow_c_stream__())
        self.assertEqual(got, {"name": ("u", []), "w": ("g", [])})

    def test_large(self):
        self.e.load_sample_trace(100000)
        r = self.e.query("FROM slice |> SELECT id, dur, name")
        got = consume(r.__arrow_c_stream__())
        cols = r.to_numpy()
        self.assertEqual(got["dur"][1], cols["dur"].tolist())
        self.assertEqual(got["name"][1][:1000], cols["name"][:1000].tolist())

    @unittest.skipIf(pyarrow is not None, "pyarrow is installed")
    def test_to_arrow_without_pyarrow(self):
        with self.assertRaises(ImportError) as cm:
            self.e.query(self.TEXT).to_arrow()
        self.assertIn("__arrow_c_stream__", str(cm.exception))


@unittest.skipIf(pyarrow is None, "pyarrow is not installed")
class PyarrowTest(unittest.TestCase):
    def test_to_arrow(self):
        with pipejit.Engine() as e:
            e.load_sample_trace(1000)
            r = e.query("FROM slice |> SELECT id, dur, name, parent_id, dur > 100 AS big")
            table = r.to_arrow()
            self.assertEqual(table.column_names, r.columns)
            self.assertEqual(str(table.schema.field("name").type), "string")
            self.assertEqual(str(table.schema.field("big").type), "bool")
            cols = r.to_numpy()
            for name in r.columns:
                self.assertEqual(table.column(name).to_pylist(), cols[name].tolist(), name)
            if hasattr(pyarrow, "table"):
                self.assertTrue(pyarrow.table(r).equals(table))   # the PyCapsule protocol
            self.assertEqual(np.sum(table.column("dur").to_numpy()), np.sum(cols["dur"]))


if __name__ == "__main__":
    unittest.main(verbosity=2)
