"""pipejit.batch (python/pipejit/_batch.py) over build/libpipejit.so
(ctest: python_batch): several small generated traces, one not a trace,
one corrupt, one whose query fails; every table against each trace run
alone with pipejit.Engine, batch_errors, out= against the CLI's --batch
file, and the same on a Dask LocalCluster of two worker processes
(Debian's python3-distributed, which `scripts/setup.sh dask` installs;
without it that one test is skipped: the rest needs nothing past the
standard library, pandas and the built library)."""
import gzip
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.normpath(os.path.join(HERE, os.pardir, os.pardir, "python"))
sys.path.insert(0, PYTHON_DIR)
# The cluster's worker processes import pipejit too.
os.environ["PYTHONPATH"] = os.pathsep.join(
    [PYTHON_DIR] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
import pandas as pd  # noqa: E402

import pipejit  # noqa: E402

SCRIPT = """
CREATE PERFETTO TABLE w AS FROM slice |> WHERE name = 'work';
-- name: per_name
FROM slice |> AGGREGATE COUNT(*) AS n, SUM(dur) AS total GROUP BY name |> ORDER BY name;
FROM w |> EXTEND dur * 1000000000000000 AS big |> AGGREGATE COUNT(*) AS n, MAX(big) AS m;
SELECT name, ts, dur, NULL AS empty_col FROM slice ORDER BY ts
"""
# Each statement that returns rows, runnable alone (after the first).
ALONE = {
    "per_name": "FROM slice |> AGGREGATE COUNT(*) AS n, SUM(dur) AS total GROUP BY name "
                "|> ORDER BY name",
    "result_2": "FROM w |> EXTEND dur * 1000000000000000 AS big "
                "|> AGGREGATE COUNT(*) AS n, MAX(big) AS m",
    "result_3": "SELECT name, ts, dur, NULL AS empty_col FROM slice ORDER BY ts",
}


def trace_json(n, dur):
    events = ['{"ph":"M","pid":1,"tid":%d,"name":"thread_name","args":{"name":"t%d"}}' % (n, n)]
    events += ['{"ph":"X","pid":1,"tid":%d,"ts":%d,"dur":%d,"name":"work"}' % (n, i * 10, dur)
               for i in range(n)]
    events.append('{"ph":"X","pid":1,"tid":%d,"ts":1000,"dur":1,"name":"idle"}' % n)
    return '{"traceEvents":[%s]}' % ",\n".join(events)


class BatchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        cls.ok = []
        for name, n, dur in (("a.json", 1, 2), ("b.json.gz", 3, 4), ("f.json", 5, 3)):
            path = os.path.join(d, name)
            data = trace_json(n, dur).encode()
            with open(path, "wb") as f:
                f.write(gzip.compress(data) if name.endswith(".gz") else data)
            cls.ok.append(path)
        cls.overflow = os.path.join(d, "c_overflow.json")   # dur 100 us: the product overflows
        with open(cls.overflow, "w") as f:
            f.write(trace_json(2, 100))
        cls.text = os.path.join(d, "d_text.json")
        with open(cls.text, "w") as f:
            f.write("not a trace\n")
        cls.corrupt = os.path.join(d, "e_corrupt.json.gz")
        with open(cls.corrupt, "wb") as f:
            f.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03not deflate data at all")
        cls.traces = [cls.ok[0], cls.ok[1], cls.overflow, cls.text, cls.corrupt, cls.ok[2]]
        cls.frames = pipejit.batch(os.path.join(d, "*.js*"), SCRIPT, jobs=2)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check_frames(self, frames):
        self.assertEqual(list(frames), ["per_name", "result_2", "result_3", "batch_errors"])
        for table, stmt in ALONE.items():
            df = frames[table]
            self.assertEqual(list(df["trace"].unique()), self.ok)   # in the order given
            for trace in self.ok:
                with pipejit.Engine(trace=trace) as e:
                    e.execute("CREATE PERFETTO TABLE w AS FROM slice |> WHERE name = 'work'")
                    alone = e.query(stmt).to_pandas()
                mine = df[df["trace"] == trace].drop(columns="trace").reset_index(drop=True)
                pd.testing.assert_frame_equal(mine, alone, check_dtype=True)
        errors = frames["batch_errors"]
        self.assertEqual(list(errors["trace"]), [self.overflow, self.text, self.corrupt])
        self.assertIn("integer overflow", errors["error"][0])
        self.assertIn("(line 5, column", errors["error"][0])
        self.assertIn("is not a trace", errors["error"][1])
        self.assertTrue(errors["error"][2].startswith("TRACE: "), errors["error"][2])

    def test_local_pool(self):
        self.check_frames(self.frames)
        df = self.frames["per_name"]
        b = df[(df["trace"] == self.ok[1]) & (df["name"] == "work")]
        self.assertEqual((int(b["n"].iloc[0]), int(b["total"].iloc[0])), (3, 12000))
        self.assertEqual(str(self.frames["result_3"]["empty_col"].dtype), "Int64")   # all NULL

    def test_out_file_matches_cli(self):
        out = os.path.join(self.tmp.name, "py.db")
        frames = pipejit.batch(self.traces, SCRIPT, out=out, jobs=1)
        for name in frames:
            pd.testing.assert_frame_equal(frames[name], self.frames[name])
        cli = os.path.join(os.path.dirname(os.environ["PIPEJIT_LIB"]), "pipejit")
        cli_out = os.path.join(self.tmp.name, "cli.db")
        r = subprocess.run([cli, "--batch", *self.traces, "-c", SCRIPT, "--out", cli_out],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1, r.stderr)
        for name in frames:
            q = 'SELECT * FROM "%s" ORDER BY rowid' % name
            with sqlite3.connect(out) as a, sqlite3.connect(cli_out) as b:
                self.assertEqual(a.execute(q).fetchall(), b.execute(q).fetchall(), name)

    def test_dask_cluster(self):
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            self.skipTest("python3-distributed is not installed (scripts/setup.sh dask)")
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            frames = pipejit.batch(self.traces, SCRIPT, client=client)
            pids = client.run(os.getpid)
        self.assertEqual(len(set(pids.values()) - {os.getpid()}), 2)   # two processes
        self.check_frames(frames)
        for name in frames:
            pd.testing.assert_frame_equal(frames[name], self.frames[name])

    def test_worker_dies(self):
        """A worker process that dies mid-trace (SIGKILLed here while its
        open() of a FIFO waits for a writer, as the OOM killer would end
        it) fails that trace only: the traces after it still run, on a new
        worker."""
        d = os.path.join(self.tmp.name, "dies")
        os.mkdir(d)
        fifo = os.path.join(d, "hang.json")
        os.mkfifo(fifo)
        killed = []

        def kill_the_waiter():
            for _ in range(600):
                for p in multiprocessing.active_children():
                    try:
                        with open("/proc/%d/wchan" % p.pid) as f:
                            waiting = f.read() == "wait_for_partner"
                    except OSError:
                        continue
                    if waiting:
                        os.kill(p.pid, signal.SIGKILL)
                        killed.append(p.pid)
                        return
                time.sleep(0.1)

        killer = threading.Thread(target=kill_the_waiter, daemon=True)
        killer.start()
        try:
            frames = pipejit.batch([self.ok[0], fifo, self.ok[1], self.ok[2]], SCRIPT, jobs=1)
        finally:
            killer.join(1)
            if not killed:   # let a worker still waiting go
                try:
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                except OSError:
                    pass
        self.assertTrue(killed, "no worker waited on the FIFO")
        errors = frames["batch_errors"]
        self.assertEqual(list(errors["trace"]), [fifo])
        self.assertIn("worker process ended by SIGKILL", errors["error"][0])
        self.assertEqual(list(frames["per_name"]["trace"].unique()), self.ok)
        for name in ALONE:
            want = self.frames[name][self.frames[name]["trace"].isin(self.ok)].reset_index(drop=True)
            pd.testing.assert_frame_equal(frames[name], want)

    def test_bad_arguments(self):
        with self.assertRaises(ValueError):
            pipejit.batch(self.ok, SCRIPT, mode="fast")
        with self.assertRaises(ValueError):
            pipejit.batch(self.ok, SCRIPT, jobs=0)
        with self.assertRaises(TypeError):
            pipejit.batch(self.ok, b"SELECT 1")
        frames = pipejit.batch([os.path.join(self.tmp.name, "nothing-*.json")], "SELECT 1 AS x")
        self.assertIn("cannot open", frames["batch_errors"]["error"][0])


if __name__ == "__main__":
    unittest.main()
