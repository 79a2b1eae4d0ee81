"""pipejit from Python: ctypes over libpipejit.so, no build step.

    import pipejit
    with pipejit.Engine() as e:                 # or Engine("trace.db")
        e.load_sample_trace(10000)
        rows = e.query("FROM slice |> AGGREGATE COUNT(*) AS n")   # [{'n': 10000}]
        cols = e.columns("FROM slice |> WHERE dur > 1000 |> SELECT id, dur")
        q = e.compile("FROM slice |> WHERE dur > $min |> AGGREGATE COUNT(*) AS n")
        q.run(min=1000)                         # named $params, or q.run(1000)

The library is found through the environment variable PIPEJIT_LIB (a path
to libpipejit.so), else next to this file in ../build/. Errors raise
pipejit.Error, with the message ("<STAGE>: ..."), the 1-based line and
column in the text (0 when the error has no position) and the byte offset
(-1 when none). Values come back as int, float, str or None (booleans of
predicates as bool).
"""
import ctypes
import os
import weakref

__all__ = ["Engine", "Query", "Error", "MODES"]

MODES = {"auto": 0, "interp": 1, "jit": 2}

# pj_type
_ID, _U32, _I32, _I64, _F64, _STR, _BOOL = range(7)
_PJ_OK, _PJ_ERROR, _PJ_NOMEM, _PJ_INTERRUPTED = range(4)


class Error(Exception):
    """A compile or runtime error of the engine."""

    def __init__(self, message, line=0, column=0, offset=-1):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.offset = offset

    def __str__(self):
        if self.line > 0:
            return "%s (line %d, column %d)" % (self.message, self.line, self.column)
        return self.message


class _Column(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("values", ctypes.c_void_p),
                ("validity", ctypes.POINTER(ctypes.c_uint64)), ("rows", ctypes.c_int64)]


_RESULT_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                              ctypes.c_size_t, ctypes.c_size_t)
_lib = None


def _find_lib():
    path = os.environ.get("PIPEJIT_LIB")
    if not path:
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, os.pardir, "build", "libpipejit.so")
    return os.path.abspath(path)


def _load():
    """Loads the library once and declares the signatures used here."""
    global _lib
    if _lib is not None:
        return _lib
    lib = ctypes.CDLL(_find_lib())
    P, I, I64, D, S, SZ = (ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_double,
                           ctypes.c_char_p, ctypes.c_size_t)
    sigs = {
        "pj_engine_open": (I, [S, ctypes.POINTER(P)]),
        "pj_engine_close": (None, [P]),
        "pj_engine_errmsg": (S, [P]),
        "pj_engine_errline": (I, [P]),
        "pj_engine_errcol": (I, [P]),
        "pj_engine_erroffset": (I, [P]),
        "pj_engine_set_mode": (None, [P, I]),
        "pj_engine_mode": (I, [P]),
        "pj_engine_load_sample_trace": (I, [P, I64]),
        "pj_engine_load_table": (I, [P, S]),
        "pj_engine_exec": (I, [P, S, _RESULT_CB, P]),
        "pj_engine_exec_len": (I, [P, S, SZ, _RESULT_CB, P]),
        "pj_query_compile": (I, [P, S, ctypes.POINTER(P)]),
        "pj_query_param_count": (I, [P]),
        "pj_query_param_index": (I, [P, S]),
        "pj_query_bind_int64": (I, [P, I, I64]),
        "pj_query_bind_double": (I, [P, I, D]),
        "pj_query_bind_text": (I, [P, I, S, SZ]),
        "pj_query_bind_null": (I, [P, I]),
        "pj_query_run": (I, [P, ctypes.POINTER(P)]),
        "pj_query_plan": (S, [P]),
        "pj_query_free": (None, [P]),
        "pj_result_row_count": (I64, [P]),
        "pj_result_column_count": (I, [P]),
        "pj_result_column_name": (S, [P, I]),
        "pj_result_column": (None, [P, I, ctypes.POINTER(_Column)]),
        "pj_result_string": (P, [P, ctypes.c_uint32, ctypes.POINTER(SZ)]),
        "pj_result_free": (None, [P]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    _lib = lib
    return lib


def _read_columns(lib, res):
    """A pj_result as an ordered dict of column name -> list of values."""
    out = {}
    ncols = lib.pj_result_column_count(res)
    for c in range(ncols):
        name = lib.pj_result_column_name(res, c).decode()
        col = _Column()
        lib.pj_result_column(res, c, ctypes.byref(col))
        n = col.rows
        t = col.type
        if t == _ID:
            vals = list(range(n))
        elif n == 0:
            vals = []
        else:
            ctype = {_U32: ctypes.c_uint32, _I32: ctypes.c_int32, _I64: ctypes.c_int64,
                     _F64: ctypes.c_double, _STR: ctypes.c_uint32,
                     _BOOL: ctypes.c_int64}[t]
            vals = list((ctype * n).from_address(col.values))
            if t == _STR:
                strs = {}
                size = ctypes.c_size_t()
                for i, sid in enumerate(vals):
                    s = strs.get(sid)
                    if s is None:
                        p = lib.pj_result_string(res, sid, ctypes.byref(size))
                        s = ctypes.string_at(p, size.value).decode("utf-8", "replace")
                        strs[sid] = s
                    vals[i] = s
            elif t == _BOOL:
                vals = [bool(v) for v in vals]
        if col.validity:
            words = col.validity
            vals = [v if (words[i >> 6] >> (i & 63)) & 1 else None for i, v in enumerate(vals)]
        out[name] = vals
    return out


def _rows(columns):
    names = list(columns)
    if not names:
        return []
    return [dict(zip(names, vals)) for vals in zip(*(columns[n] for n in names))]


class _Closing:
    """`with` support and close-on-collect for objects with a close()."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class Engine(_Closing):
    """An engine: one SQLite connection (db: a file path, or None for an
    in-memory database), the columnar tables and the compiled queries."""

    def __init__(self, db=None, mode="auto"):
        self._lib = _load()
        self._e = None
        self._queries = weakref.WeakSet()   # freed before the engine closes
        handle = ctypes.c_void_p()
        st = self._lib.pj_engine_open(db.encode() if db is not None else None,
                                      ctypes.byref(handle))
        self._e = handle.value
        if st != _PJ_OK:
            err = self._error(st) if self._e else MemoryError("pipejit: out of memory")
            if self._e:
                self._lib.pj_engine_close(self._e)
                self._e = None
            raise err
        self.mode = mode

    # -- lifetime ---------------------------------------------------------
    def close(self):
        """Closes the engine (its queries must not be used afterwards)."""
        if self._e:
            for q in list(self._queries):
                q.close()
            self._lib.pj_engine_close(self._e)
            self._e = None

    # -- errors -----------------------------------------------------------
    def _handle(self):
        if not self._e:
            raise Error("pipejit: the engine is closed")
        return self._e

    def _error(self, status):
        if status == _PJ_NOMEM:
            return MemoryError("pipejit: out of memory")
        lib, e = self._lib, self._e
        return Error(lib.pj_engine_errmsg(e).decode("utf-8", "replace"),
                     lib.pj_engine_errline(e), lib.pj_engine_errcol(e),
                     lib.pj_engine_erroffset(e))

    def _check(self, status):
        if status not in (_PJ_OK, _PJ_INTERRUPTED):
            raise self._error(status)

    # -- settings ---------------------------------------------------------
    @property
    def mode(self):
        """'auto' (default), 'interp' or 'jit'."""
        m = self._lib.pj_engine_mode(self._handle())
        return [k for k, v in MODES.items() if v == m][0]

    @mode.setter
    def mode(self, value):
        if value not in MODES:
            raise ValueError("mode must be one of %s" % ", ".join(MODES))
        self._lib.pj_engine_set_mode(self._handle(), MODES[value])

    # -- data -------------------------------------------------------------
    def load_sample_trace(self, nslices=1000000):
        """Generates the sample trace (slice, thread, process, sched,
        cpu_frequency) with nslices slices."""
        self._check(self._lib.pj_engine_load_sample_trace(self._handle(), int(nslices)))

    def load_table(self, name):
        """Copies a SQLite table or view into a columnar table (fast path)."""
        self._check(self._lib.pj_engine_load_table(self._handle(), name.encode()))

    # -- running ----------------------------------------------------------
    def execute(self, script):
        """Runs a script of ';'-separated statements (SQL, pipelines, CREATE
        PERFETTO TABLE, ...). Returns one list of row dicts per statement
        that returned rows, in order."""
        sets = []
        failure = []

        def on_result(ctx, res, text, length, offset):
            try:
                sets.append(_rows(_read_columns(self._lib, res)))
                return 0
            except BaseException as ex:   # do not unwind through C
                failure.append(ex)
                return 1

        cb = _RESULT_CB(on_result)
        data = script.encode()   # by length: a NUL inside is reported, not a silent end
        st = self._lib.pj_engine_exec_len(self._handle(), data, len(data), cb, None)
        if failure:
            raise failure[0]
        self._check(st)
        return sets

    def query(self, text, *args, **params):
        """Rows of a pipeline or SQL statement as a list of dicts. With
        parameters (positional for ?, keywords for $name) the text must be a
        pipeline."""
        if args or params:
            with self.compile(text) as q:
                return q.run(*args, **params)
        sets = self.execute(text)
        return sets[-1] if sets else []

    def columns(self, text, *args, **params):
        """Like query, as a dict of column name -> list of values."""
        if args or params:
            with self.compile(text) as q:
                return q.columns(*args, **params)
        holder = []

        def on_result(ctx, res, stmt, length, offset):
            try:
                holder[:] = [_read_columns(self._lib, res)]
                return 0
            except BaseException as ex:
                holder[:] = [ex]
                return 1

        cb = _RESULT_CB(on_result)
        data = text.encode()
        st = self._lib.pj_engine_exec_len(self._handle(), data, len(data), cb, None)
        if holder and isinstance(holder[0], BaseException):
            raise holder[0]
        self._check(st)
        return holder[0] if holder else {}

    def compile(self, text):
        """Compiles a pipeline into a Query that can run many times."""
        handle = ctypes.c_void_p()
        self._check(self._lib.pj_query_compile(self._handle(), text.encode(),
                                               ctypes.byref(handle)))
        q = Query(self, handle.value)
        self._queries.add(q)
        return q


class Query(_Closing):
    """A compiled pipeline. run() re-reads the current data each time;
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
        return self._engine._lib.pj_query_param_count(self._handle())

    @property
    def plan(self):
        """The plan after pruning and segmenting, as text."""
        return self._engine._lib.pj_query_plan(self._handle()).decode()

    def bind(self, *args, **params):
        """Binds ? parameters by position (1, 2, ...) and $name ones by
        keyword."""
        lib, q = self._engine._lib, self._handle()
        slots = [(i + 1, v) for i, v in enumerate(args)]
        for name, v in params.items():
            idx = lib.pj_query_param_index(q, name.encode())
            if idx == 0:
                raise Error("pipejit: the pipeline has no parameter $%s" % name)
            slots.append((idx, v))
        n = lib.pj_query_param_count(q)
        for idx, v in slots:
            if idx > n:
                raise Error("pipejit: parameter %d given, the pipeline has %d" % (idx, n))
            if v is None:
                st = lib.pj_query_bind_null(q, idx)
            elif isinstance(v, bool) or isinstance(v, int):
                st = lib.pj_query_bind_int64(q, idx, int(v))
            elif isinstance(v, float):
                st = lib.pj_query_bind_double(q, idx, v)
            elif isinstance(v, str):
                b = v.encode()
                st = lib.pj_query_bind_text(q, idx, b, len(b))
            else:
                raise TypeError("parameter %d: unsupported type %s" % (idx, type(v).__name__))
            self._engine._check(st)

    def columns(self, *args, **params):
        """Runs the pipeline; a dict of column name -> list of values."""
        self.bind(*args, **params)
        lib = self._engine._lib
        res = ctypes.c_void_p()
        self._engine._check(lib.pj_query_run(self._handle(), ctypes.byref(res)))
        try:
            return _read_columns(lib, res.value)
        finally:
            lib.pj_result_free(res.value)

    def run(self, *args, **params):
        """Runs the pipeline; a list of row dicts."""
        return _rows(self.columns(*args, **params))
