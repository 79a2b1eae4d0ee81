"""pipejit.batch: one script over many traces, on worker processes of this
machine or on a Dask distributed cluster, gathered into pandas DataFrames
(or a SQLite file).

The work is the C library's, as for the CLI's --batch: each task opens an
engine, imports its trace and runs the script with pj_batch_run, which
writes the statements' results into a part file; this process copies the
parts into the output with pj_batch_add, in the order the traces were
given (whatever finished first), and records failed traces in
batch_errors. Tables are named as --batch names them (result_1, … or the
statement's `-- name: NAME` comment); the DataFrames are read back from
the output by pipejit itself (Result.to_pandas), so their types are the
same as a query's.
"""
import ctypes
import glob
import multiprocessing
import multiprocessing.connection as mpconn
import os
import shutil
import signal
import tempfile

from . import _lib
from ._lib import Error


def _expand(paths):
    """Paths and glob patterns, in order; a pattern matching nothing stays
    as it is (and fails as a trace that cannot be opened), as in the CLI."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    out = []
    for p in paths:
        p = os.fsdecode(p)
        matches = sorted(glob.glob(p)) if glob.has_magic(p) else []
        out.extend(matches or [p])
    return out


def _run_trace(trace, script, mode, part_path):
    """One trace, in a worker: imports it, runs the script, writes the
    part file. Returns None, or the error's text."""
    from ._engine import Engine   # a worker imports only what it needs
    try:
        with Engine(mode=mode, threads=1) as e:   # the tasks take the cores already
            e.load_trace(trace)
            data = script.encode("utf-8")
            lib = _lib.load()
            st = lib.pj_batch_run(e._handle(), data, len(data), os.fsencode(part_path))
            if st != _lib.OK:
                return str(e._error(st))
    except Error as ex:
        return str(ex)
    except MemoryError:
        return "pipejit: out of memory"
    return None


def _run_trace_bytes(trace, script, mode):
    """The same on a cluster's worker: the part file comes back as bytes
    (the client's disk is not the worker's). Returns (error, data)."""
    fd, part = tempfile.mkstemp(prefix="pipejit-part-", suffix=".db")
    os.close(fd)
    try:
        err = _run_trace(trace, script, mode, part)
        if err is not None:
            return err, None
        with open(part, "rb") as f:
            return None, f.read()
    finally:
        if os.path.exists(part):
            os.unlink(part)


class _Output:
    """The output file (pj_batch_open …), filled in trace order."""

    def __init__(self, path, traces):
        self.lib = _lib.load()
        self.traces = traces
        self.done = {}      # index -> (error, part path)
        self.next = 0
        self.failed = []
        handle = ctypes.c_void_p()
        st = self.lib.pj_batch_open(os.fsencode(path), ctypes.byref(handle))
        self.b = handle.value
        if st != _lib.OK:
            msg = self.message()
            self.close()
            raise Error(msg)

    def message(self):
        return self.lib.pj_batch_errmsg(self.b).decode("utf-8", "replace")

    def finished(self, i, error, part):
        """Trace i ended (error: its text, or None with its part file);
        copies every trace that is next in order."""
        self.done[i] = (error, part)
        while self.next in self.done:
            error, part = self.done.pop(self.next)
            trace = self.traces[self.next].encode("utf-8", "surrogateescape")
            if error is None:
                r = self.lib.pj_batch_add(self.b, trace, os.fsencode(part))
                if r == 1:
                    self.failed.append((self.traces[self.next], self.message()))
            else:
                r = 0 if self.lib.pj_batch_add_error(self.b, trace,
                                                     error.encode("utf-8", "replace")) == _lib.OK else -1
                self.failed.append((self.traces[self.next], error))
            if part and os.path.exists(part):
                os.unlink(part)
            if r < 0:
                raise Error(self.message())
            self.next += 1

    def close(self):
        if self.b:
            st = self.lib.pj_batch_close(self.b)
            self.b = None
            if st != _lib.OK:
                raise Error("pipejit.batch: the output could not be written completely")


def _frames(path):
    """Every table of the output as a DataFrame, in the order made
    (statements in script order, then batch_errors last)."""
    import sqlite3
    from ._engine import Engine
    con = sqlite3.connect(path)
    try:
        names = [r[0] for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid")]
    finally:
        con.close()
    names = [n for n in names if n != "batch_errors"] + ["batch_errors"]
    with Engine(db=path) as e:
        return {n: e.query('SELECT * FROM "%s"' % n.replace('"', '""')).to_pandas()
                for n in names}


def _worker_main(conn, script, mode):
    """A worker process of the local pool: runs the traces it is sent,
    one at a time, until it is sent None."""
    while True:
        task = conn.recv()
        if task is None:
            return
        i, trace, part = task
        try:
            err = _run_trace(trace, script, mode, part)
        except Exception as ex:   # (never expected: _run_trace catches pipejit's)
            err = "pipejit.batch: %s: %s" % (type(ex).__name__, ex)
        conn.send((i, err))


def _died(proc):
    """What batch_errors says of a worker process that ended mid-trace."""
    code = proc.exitcode
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "signal %d" % -code
        return "pipejit.batch: the worker process ended by %s (%d)" % (name, -code)
    return "pipejit.batch: the worker process ended (exit status %s)" % code


def _local(traces, script, mode, jobs, parts, output):
    """A pool of `jobs` spawned worker processes, each sent one trace at a
    time (no fork of a threaded interpreter). A worker that dies (a crash,
    the OOM killer) fails only the trace it was running: a new worker
    takes its place and the others go on, as in the CLI."""
    ctx = multiprocessing.get_context("spawn")
    todo = list(enumerate(traces))
    todo.reverse()                       # popped from the end: in order
    workers = {}                         # connection -> [process, task or None]

    def start():
        mine, theirs = ctx.Pipe()
        p = ctx.Process(target=_worker_main, args=(theirs, script, mode), daemon=True)
        p.start()
        theirs.close()
        workers[mine] = [p, None]
        return mine

    def give(conn):
        i, t = todo.pop()
        part = os.path.join(parts, "%d.db" % i)
        workers[conn][1] = (i, part)
        try:
            conn.send((i, t, part))
        except OSError:   # it died: its sentinel says so next
            pass

    try:
        for _ in range(min(jobs, len(todo))):
            give(start())
        while workers:
            ready = mpconn.wait(list(workers) + [w[0].sentinel for w in workers.values()])
            for conn in list(workers):
                p, task = workers[conn]
                got = None
                if conn in ready or p.sentinel in ready:
                    try:
                        got = conn.recv() if conn.poll() else None
                    except (EOFError, OSError):
                        got = None
                if got is not None:
                    i, err = got
                    workers[conn][1] = None
                    output.finished(i, err, None if err else task[1])
                elif p.sentinel in ready:   # ended with a trace unfinished
                    p.join()
                    del workers[conn]
                    conn.close()
                    if task is not None:
                        output.finished(task[0], _died(p), None)
                    if todo:
                        give(start())
                    continue
                else:
                    continue
                if todo:
                    give(conn)
                else:
                    conn.send(None)
                    p.join()
                    del workers[conn]
                    conn.close()
    finally:
        for conn, (p, _) in workers.items():
            p.kill()
            p.join()
            conn.close()


def _cluster(traces, script, mode, client, parts, output):
    from distributed import as_completed
    futures = client.map(_run_trace_bytes, traces, script=script, mode=mode, pure=False)
    index = {f.key: i for i, f in enumerate(futures)}
    for f in as_completed(futures):
        i = index[f.key]
        try:
            err, data = f.result()
        except Exception as ex:   # the task failed on the cluster (worker lost …)
            err, data = "pipejit.batch: the task failed on the cluster: %s" % ex, None
        part = None
        if err is None:
            part = os.path.join(parts, "%d.db" % i)
            with open(part, "wb") as fh:
                fh.write(data)
        output.finished(i, err, part)
        f.release()


def batch(paths, script, out=None, jobs=None, client=None, mode="auto"):
    """Runs `script` on every trace of `paths` (a path or glob pattern, or
    a list of them) and returns {table: pandas.DataFrame}: one table per
    statement that returns rows (result_1, … or the NAME of a
    `-- name: NAME` comment the statement starts with), each with a first
    column `trace`, then `batch_errors` (trace, error) for the traces that
    failed, which do not stop the others.

    out: also (or instead of a temporary file) write the tables into this
    SQLite file, replaced if it exists — the file `pipejit --batch … --out`
    writes. jobs: worker processes on this machine (default: the cores).
    client: a dask.distributed.Client: one task per trace on its cluster
    (jobs is then the cluster's business); the workers need this package
    and libpipejit.so, and to see the trace paths. mode: the engines'
    backend ('auto', 'interp', 'jit')."""
    if mode not in _lib.MODES:
        raise ValueError("pipejit: mode must be one of %s, not %r" % (", ".join(_lib.MODES), mode))
    if not isinstance(script, str):
        raise TypeError("pipejit.batch: script is the text of the statements, not %r"
                        % type(script).__name__)
    traces = _expand(paths)
    if not traces:
        raise ValueError("pipejit.batch: no traces")
    if jobs is None:
        jobs = os.cpu_count() or 1
    if int(jobs) < 1:
        raise ValueError("pipejit.batch: jobs must be at least 1, not %r" % jobs)
    work = tempfile.mkdtemp(prefix="pipejit-batch-")
    try:
        path = os.fspath(out) if out is not None else os.path.join(work, "results.db")
        output = _Output(path, traces)
        try:
            if client is not None:
                _cluster(traces, script, mode, client, work, output)
            else:
                _local(traces, script, mode, min(int(jobs), len(traces)), work, output)
        finally:
            output.close()
        return _frames(path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
