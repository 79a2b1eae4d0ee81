"""Finding and loading libpipejit.so, the C signatures, and errors.

The library is looked for, in order: the file named by the environment
variable PIPEJIT_LIB; libpipejit.so inside this package (where
`pip install ./python` copies the one it was built against); the build
tree of the checkout this file sits in (python/pipejit/ -> build/), so
the package also runs straight from a checkout. Every failure is a
pipejit.Error naming what was tried, never a raw OSError.
"""
import ctypes
import os

# pj_type
ID, U32, I32, I64, F64, STR, BOOL = range(7)
TYPE_NAMES = {ID: "int", U32: "int", I32: "int", I64: "int", F64: "double", STR: "string",
              BOOL: "bool"}
# pj_status
OK, ERROR, NOMEM, INTERRUPTED = range(4)
# pj_mode
MODES = {"auto": 0, "interp": 1, "jit": 2}


class Error(Exception):
    """An error of the engine (compile, run, SQLite, trace import) or of
    the package (library not found, closed handle, bad parameter).
    `message` reads "<STAGE>: <text>"; `line` and `column` are 1-based in
    the text that was compiled (0 when the error has no position);
    `offset` is the byte offset in that text (-1 when none)."""

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


class Interrupted(Error):
    """The statement was stopped by Engine.interrupt()."""


class Closing:
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


class Column(ctypes.Structure):
    """pj_column."""
    _fields_ = [("type", ctypes.c_int), ("values", ctypes.c_void_p),
                ("validity", ctypes.c_void_p), ("rows", ctypes.c_int64)]


RESULT_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                             ctypes.c_size_t, ctypes.c_size_t)

_P, _I, _I64, _D, _S, _SZ = (ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_double,
                             ctypes.c_char_p, ctypes.c_size_t)
_PP = ctypes.POINTER(ctypes.c_void_p)
SIGNATURES = {
    "pj_engine_open": (_I, [_S, _PP]),
    "pj_engine_close": (None, [_P]),
    "pj_engine_errmsg": (_S, [_P]),
    "pj_engine_errline": (_I, [_P]),
    "pj_engine_errcol": (_I, [_P]),
    "pj_engine_erroffset": (_I, [_P]),
    "pj_engine_set_mode": (None, [_P, _I]),
    "pj_engine_mode": (_I, [_P]),
    "pj_engine_set_threads": (None, [_P, _I]),
    "pj_engine_threads": (_I, [_P]),
    "pj_engine_interrupt": (None, [_P]),
    "pj_engine_load_sample_trace": (_I, [_P, _I64]),
    "pj_engine_load_table": (_I, [_P, _S]),
    "pj_engine_load_trace": (_I, [_P, _S, _P]),
    "pj_engine_exec_len": (_I, [_P, _S, _SZ, RESULT_CB, _P]),
    "pj_query_compile": (_I, [_P, _S, _PP]),
    "pj_query_param_count": (_I, [_P]),
    "pj_query_param_index": (_I, [_P, _S]),
    "pj_query_bind_int64": (_I, [_P, _I, _I64]),
    "pj_query_bind_double": (_I, [_P, _I, _D]),
    "pj_query_bind_text": (_I, [_P, _I, _S, _SZ]),
    "pj_query_bind_null": (_I, [_P, _I]),
    "pj_query_run": (_I, [_P, _PP]),
    "pj_query_plan": (_S, [_P]),
    "pj_query_llvm_ir": (_S, [_P, _I]),
    "pj_query_asm": (_S, [_P]),
    "pj_query_free": (None, [_P]),
    "pj_result_row_count": (_I64, [_P]),
    "pj_result_column_count": (_I, [_P]),
    "pj_result_column_name": (_S, [_P, _I]),
    "pj_result_column_type": (_I, [_P, _I]),
    "pj_result_column": (None, [_P, _I, ctypes.POINTER(Column)]),
    "pj_result_string": (_P, [_P, ctypes.c_uint32, ctypes.POINTER(_SZ)]),
    "pj_result_clone": (_I, [_P, _PP]),
    "pj_result_free": (None, [_P]),
    "pj_result_export_arrow_stream": (_I, [_P, _P]),
    "pj_batch_run": (_I, [_P, _S, _SZ, _S]),
    "pj_batch_open": (_I, [_S, _PP]),
    "pj_batch_add": (_I, [_P, _S, _S]),
    "pj_batch_add_error": (_I, [_P, _S, _S]),
    "pj_batch_errmsg": (_S, [_P]),
    "pj_batch_close": (_I, [_P]),
}

_lib = None


def candidates():
    """The paths tried, in order, as (where, path)."""
    env = os.environ.get("PIPEJIT_LIB")
    if env:
        return [("PIPEJIT_LIB", os.path.abspath(env))]
    here = os.path.dirname(os.path.abspath(__file__))
    return [("the package", os.path.join(here, "libpipejit.so")),
            ("the build tree", os.path.normpath(os.path.join(here, os.pardir, os.pardir, "build",
                                                             "libpipejit.so")))]


def load():
    """The library, loaded once, with its signatures declared."""
    global _lib
    if _lib is not None:
        return _lib
    tried = candidates()
    found = [p for _, p in tried if os.path.isfile(p)]
    if not found:
        raise Error("pipejit: libpipejit.so not found (looked in %s); build it with `make build`, "
                    "reinstall with `pip install ./python`, or set PIPEJIT_LIB to its path"
                    % "; ".join("%s: %s" % t for t in tried))
    path = found[0]
    try:
        lib = ctypes.CDLL(path)
    except OSError as ex:
        raise Error("pipejit: cannot load %s: %s" % (path, ex)) from None
    for name, (res, args) in SIGNATURES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise Error("pipejit: %s has no %s: it is older than this package; rebuild it "
                        "(make build)" % (path, name)) from None
        fn.restype = res
        fn.argtypes = args
    lib.pj_path = path
    _lib = lib
    return lib
