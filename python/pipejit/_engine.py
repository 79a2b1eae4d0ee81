"""Engine and Query: ctypes over the C API (include/pipejit.h).

An Engine owns the C engine; Queries (compiled handles) and Results keep
their Engine alive and are freed before it: Engine.close() closes them,
and using one afterwards raises pipejit.Error. Errors of the C library
become pipejit.Error with its message, line and column.
"""
import ctypes
import numbers
import os
import re
import weakref

from . import _lib
from ._lib import Closing, Error, Interrupted, MODES
from ._result import Result


# A pipeline starts with FROM, INTERVAL(S) or GRAPH DFS|BFS|DOMINATOR
# (after blanks and comments); anything else is SQL for the script runner.
_LEADING = re.compile(r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", re.S)
_PIPELINE = re.compile(r"(?:FROM|INTERVALS?|GRAPH\s+(?:DFS|BFS|DOMINATOR))\b", re.I)


def _is_pipeline(text):
    return _PIPELINE.match(text, _LEADING.match(text).end()) is not None


class _TraceInfo(ctypes.Structure):
    """pj_trace_info (include/pipejit.h), read by position."""
    _fields_ = [("format", ctypes.c_char_p), ("gzip", ctypes.c_int)] + [
        (f, ctypes.c_int64) for f in ("file_bytes", "bytes", "import_ns", "events", "slices",
                                      "threads", "processes", "counters", "sched", "args",
                                      "problems", "damaged_at")] + [
        ("warning", ctypes.c_char * 256)]


class Engine(Closing):
    """An engine: one SQLite connection, the columnar tables, compiled
    queries.

    trace: a trace file to import (pj_engine_load_trace: Chrome JSON or
    Perfetto protobuf, plain or .gz) as trace_processor's tables.
    db: a SQLite database file (created if missing); None for an
    in-memory database. mode: 'auto' (default), 'interp' or 'jit'.
    threads: how many threads a pipeline may use (None: the machine's
    processors; 1: the calling thread only); results are the same for any
    count.
    """

    def __init__(self, trace=None, db=None, mode="auto", threads=None):
        self._e = None
        self._lib = _lib.load()
        self._children = weakref.WeakSet()   # queries and results, freed before the engine
        handle = ctypes.c_void_p()
        path = os.fsencode(db) if db is not None else None
        st = self._lib.pj_engine_open(path, ctypes.byref(handle))
        self._e = handle.value
        try:
            if st != _lib.OK:
                raise self._error(st) if self._e else MemoryError("pipejit: out of memory")
            self.mode = mode
            if threads is not None:
                self.threads = threads
            self.trace_info = self.load_trace(trace) if trace is not None else None
        except BaseException:
            self.close()
            raise

    # -- lifetime ---------------------------------------------------------
    def close(self):
        """Closes the engine, and its queries and results first (their
        arrays and DataFrames already made stay valid)."""
        if self._e:
            for child in list(self._children):
                child.close()
            self._lib.pj_engine_close(self._e)
            self._e = None

    def _handle(self):
        if not self._e:
            raise Error("pipejit: the engine is closed")
        return self._e

    def _adopt(self, child):
        self._children.add(child)
        return child

    # -- errors -----------------------------------------------------------
    def _error(self, status):
        if status == _lib.NOMEM:
            return MemoryError("pipejit: out of memory")
        lib, e = self._lib, self._e
        cls = Interrupted if status == _lib.INTERRUPTED else Error
        return cls(lib.pj_engine_errmsg(e).decode("utf-8", "replace"), lib.pj_engine_errline(e),
                   lib.pj_engine_errcol(e), lib.pj_engine_erroffset(e))

    def _check(self, status):
        if status != _lib.OK:
            raise self._error(status)

    # -- settings ---------------------------------------------------------
    @property
    def mode(self):
        """'auto' (default), 'interp' or 'jit'."""
        m = self._lib.pj_engine_mode(self._handle())
        return next(k for k, v in MODES.items() if v == m)

    @mode.setter
    def mode(self, value):
        if value not in MODES:
            raise ValueError("pipejit: mode must be one of %s, not %r" % (", ".join(MODES), value))
        self._lib.pj_engine_set_mode(self._handle(), MODES[value])

    @property
    def threads(self):
        """Threads a pipeline may use (default: the machine's processors)."""
        return self._lib.pj_engine_threads(self._handle())

    @threads.setter
    def threads(self, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 1 <= value <= 256:
            raise ValueError("pipejit: threads must be a whole number from 1 to 256, not %r" % (value,))
        self._lib.pj_engine_set_threads(self._handle(), int(value))

    def interrupt(self):
        """Stops the statement running in another thread (it raises
        pipejit.Interrupted there). Safe from any thread."""
        if self._e:
            self._lib.pj_engine_interrupt(self._e)

    # -- data -------------------------------------------------------------
    def load_trace(self, path):
        """Imports a trace file — Chrome JSON or Perfetto protobuf, plain
        or gzip — as trace_processor's tables (replacing the trace tables);
        returns what was found: a dict with format, gzip, file_bytes,
        bytes, import_ns, events, the row counts slices, threads,
        processes, counters, sched, args, problems (dropped or repaired
        events, see the stats table), damaged_at (byte offset, or -1) and
        warning."""
        # Room for fields a newer library may add after the ones read here.
        buf = ctypes.create_string_buffer(max(1024, ctypes.sizeof(_TraceInfo)))
        self._check(self._lib.pj_engine_load_trace(self._handle(), os.fsencode(path), buf))
        info = _TraceInfo.from_buffer(buf)
        out = {f: getattr(info, f) for f, _ in _TraceInfo._fields_}
        out["format"] = (out["format"] or b"").decode()
        out["warning"] = out["warning"].decode(errors="replace")
        return out

    def load_sample_trace(self, nslices=1000000):
        """Generates the sample trace (slice, thread, process, sched,
        cpu_frequency) with nslices slices."""
        self._check(self._lib.pj_engine_load_sample_trace(self._handle(), int(nslices)))

    def load_table(self, name):
        """Copies a SQLite table or view into a columnar table (fast path)."""
        self._check(self._lib.pj_engine_load_table(self._handle(), name.encode()))

    # -- running ----------------------------------------------------------
    def execute(self, script):
        """Runs a script of ';'-separated statements (SQL, pipelines,
        CREATE PERFETTO TABLE, PERFETTO PRAGMA). Returns a Result for each
        statement that returned rows, in order."""
        lib, results, failure = self._lib, [], []

        def on_result(ctx, res, text, length, offset):
            try:   # never unwind through C
                handle = ctypes.c_void_p()
                if lib.pj_result_clone(res, ctypes.byref(handle)) != _lib.OK:
                    raise MemoryError("pipejit: out of memory")
                results.append(self._adopt(Result(self, handle.value)))
                return 0
            except BaseException as ex:
                failure.append(ex)
                return 1

        data = script.encode()   # by length: a NUL inside is reported, not a silent end
        st = lib.pj_engine_exec_len(self._handle(), data, len(data), _lib.RESULT_CB(on_result),
                                    None)
        try:
            if failure:
                raise failure[0]
            self._check(st)
        except BaseException:
            for r in results:
                r.close()
            raise
        return results

    def query(self, text, *args, **params):
        """Runs one statement and returns its Result. A pipeline (text
        starting with FROM or INTERVAL) is compiled first, so the Result
        has .plan and .llvm_ir, and may take parameters: positional for
        ?, keywords for $name. Other text is SQL (no parameters); it gives
        the last result set, or None when it returns none (CREATE,
        INSERT, ...)."""
        if args or params or _is_pipeline(text):
            q = self.compile(text)
            try:
                r = q.run(*args, **params)
            except BaseException:
                q.close()
                raise
            r._owned_query = q
            return r
        results = self.execute(text)
        for r in results[:-1]:
            r.close()
        return results[-1] if results else None

    def compile(self, text):
        """Compiles a pipeline into a Query, to run many times."""
        nul = text.find("\0")
        if nul >= 0:   # the C call takes a NUL-terminated string: never cut it short
            line = text.count("\n", 0, nul) + 1
            column = nul - (text.rfind("\n", 0, nul) + 1) + 1
            raise Error("FROM: syntax error: unexpected NUL byte (a pipeline's text ends at a NUL "
                        "in the C API; pass a string holding one as a parameter)",
                        line, column, len(text[:nul].encode()))
        handle = ctypes.c_void_p()
        self._check(self._lib.pj_query_compile(self._handle(), text.encode(),
                                               ctypes.byref(handle)))
        return self._adopt(Query(self, handle.value))


class Query(Closing):
    """A compiled pipeline. run() reads the current data each time;
    parameter bindings persist across runs until changed."""

    def __init__(self, engine, handle):
        self._engine = engine
        self._q = handle

    def close(self):
        if self._q and self._engine._e:
            self._engine._lib.pj_query_free(self._q)
        self._q = None

    def _handle(self):
        if not self._q or not self._engine._e:
            raise Error("pipejit: the query is closed")
        return self._q

    @property
    def param_count(self):
        """Number of parameters (? and $name)."""
        return self._engine._lib.pj_query_param_count(self._handle())

    @property
    def plan(self):
        """The plan after pruning and segmenting, as text."""
        return self._engine._lib.pj_query_plan(self._handle()).decode("utf-8", "replace")

    def _dump(self, text):
        if text is None:
            raise self._engine._error(_lib.ERROR)
        return text.decode("utf-8", "replace")

    @property
    def llvm_ir(self):
        """The optimized LLVM IR of every segment (compiles if needed)."""
        return self._dump(self._engine._lib.pj_query_llvm_ir(self._handle(), 1))

    @property
    def llvm_ir_raw(self):
        """The LLVM IR before optimization."""
        return self._dump(self._engine._lib.pj_query_llvm_ir(self._handle(), 0))

    @property
    def asm(self):
        """The machine code, as assembly text."""
        return self._dump(self._engine._lib.pj_query_asm(self._handle()))

    def bind(self, *args, **params):
        """Binds ? parameters by position (1, 2, ...) and $name ones by
        keyword: None, bool, int, float or str."""
        lib, q = self._engine._lib, self._handle()
        slots = [(i + 1, "?%d" % (i + 1), v) for i, v in enumerate(args)]
        for name, v in params.items():
            idx = lib.pj_query_param_index(q, name.encode())
            if idx == 0:
                raise Error("pipejit: the pipeline has no parameter $%s" % name)
            slots.append((idx, "$" + name, v))
        n = lib.pj_query_param_count(q)
        for idx, label, v in slots:
            if idx > n:
                raise Error("pipejit: parameter %d given, the pipeline has %d" % (idx, n))
            if v is None:
                st = lib.pj_query_bind_null(q, idx)
            elif isinstance(v, numbers.Integral):   # bool, int, NumPy integers
                st = lib.pj_query_bind_int64(q, idx, int(v))
            elif isinstance(v, numbers.Real):
                st = lib.pj_query_bind_double(q, idx, float(v))
            elif isinstance(v, str):
                b = v.encode()
                st = lib.pj_query_bind_text(q, idx, b, len(b))
            else:
                raise TypeError("pipejit: parameter %s: %s is not None, bool, int, float or str"
                                % (label, type(v).__name__))
            self._engine._check(st)

    def run(self, *args, **params):
        """Binds the parameters given (see bind) and runs; a Result."""
        self.bind(*args, **params)
        e = self._engine
        res = ctypes.c_void_p()
        e._check(e._lib.pj_query_run(self._handle(), ctypes.byref(res)))
        return e._adopt(Result(e, res.value, self))
