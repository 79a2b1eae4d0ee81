"""Results as Arrow: the PyCapsule interface (__arrow_c_stream__) over
pj_result_export_arrow_stream, and to_arrow() through pyarrow.

The C library fills an ArrowArrayStream in memory allocated here with
PyMem_RawMalloc; the capsule's destructor releases the stream unless a
consumer moved it out (the specification's rule: a moved-out stream has
release == NULL), then frees that memory. The exported data owns what it
needs, so it outlives the Result and the Engine.
"""
import ctypes

from . import _lib


class ArrowSchema(ctypes.Structure):
    pass


ArrowSchema._fields_ = [
    ("format", ctypes.c_char_p), ("name", ctypes.c_char_p), ("metadata", ctypes.c_void_p),
    ("flags", ctypes.c_int64), ("n_children", ctypes.c_int64),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowSchema))),
    ("dictionary", ctypes.POINTER(ArrowSchema)),
    ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowSchema))),
    ("private_data", ctypes.c_void_p)]


class ArrowArray(ctypes.Structure):
    pass


ArrowArray._fields_ = [
    ("length", ctypes.c_int64), ("null_count", ctypes.c_int64), ("offset", ctypes.c_int64),
    ("n_buffers", ctypes.c_int64), ("n_children", ctypes.c_int64),
    ("buffers", ctypes.POINTER(ctypes.c_void_p)),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowArray))),
    ("dictionary", ctypes.POINTER(ArrowArray)),
    ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArray))),
    ("private_data", ctypes.c_void_p)]


class ArrowArrayStream(ctypes.Structure):
    pass


ArrowArrayStream._fields_ = [
    ("get_schema", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ArrowArrayStream),
                                    ctypes.POINTER(ArrowSchema))),
    ("get_next", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ArrowArrayStream),
                                  ctypes.POINTER(ArrowArray))),
    ("get_last_error", ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.POINTER(ArrowArrayStream))),
    ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArrayStream))),
    ("private_data", ctypes.c_void_p)]

STREAM_CAPSULE = b"arrow_array_stream"

# A handle of our own: declarations made on ctypes.pythonapi by other code
# (argtypes are per function object) cannot change these.
_api = ctypes.PyDLL(None)
_api.PyMem_RawMalloc.restype = ctypes.c_void_p
_api.PyMem_RawMalloc.argtypes = [ctypes.c_size_t]
_api.PyMem_RawFree.restype = None
_api.PyMem_RawFree.argtypes = [ctypes.c_void_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)   # the capsule, as a plain pointer
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _DESTRUCTOR]


def _release_capsule(capsule):
    # The capsule is being destroyed: never turn it back into an object.
    address = _api.PyCapsule_GetPointer(capsule, STREAM_CAPSULE)
    if not address:
        return
    stream = ArrowArrayStream.from_address(address)
    if stream.release:
        stream.release(ctypes.cast(address, ctypes.POINTER(ArrowArrayStream)))
    _api.PyMem_RawFree(address)


_release_capsule_c = _DESTRUCTOR(_release_capsule)   # kept for the module's life


def stream_capsule(lib, res):
    """A PyCapsule "arrow_array_stream" holding the result's rows."""
    address = _api.PyMem_RawMalloc(ctypes.sizeof(ArrowArrayStream))
    if not address:
        raise MemoryError("pipejit: out of memory")
    ctypes.memset(address, 0, ctypes.sizeof(ArrowArrayStream))
    if lib.pj_result_export_arrow_stream(res, address) != _lib.OK:
        _api.PyMem_RawFree(address)
        raise MemoryError("pipejit: out of memory")
    try:
        return _api.PyCapsule_New(address, STREAM_CAPSULE, _release_capsule_c)
    except BaseException:
        ArrowArrayStream.from_address(address).release(
            ctypes.cast(address, ctypes.POINTER(ArrowArrayStream)))
        _api.PyMem_RawFree(address)
        raise


def to_arrow(result):
    """A pyarrow.Table of the result (pyarrow reads the stream, no copy)."""
    try:
        import pyarrow as pa
    except ImportError:
        raise ImportError("pipejit: to_arrow needs pyarrow; without it, any reader of the Arrow "
                          "PyCapsule interface (polars, duckdb, nanoarrow) takes the Result "
                          "itself through Result.__arrow_c_stream__") from None
    capsule = result.__arrow_c_stream__()
    reader_type = pa.RecordBatchReader
    if hasattr(reader_type, "_import_from_c_capsule"):   # pyarrow >= 14
        return reader_type._import_from_c_capsule(capsule).read_all()
    # Older pyarrow imports from an address; it moves the stream out, and
    # the capsule then frees only the struct.
    address = _api.PyCapsule_GetPointer(id(capsule), STREAM_CAPSULE)   # id: the object's address
    return reader_type._import_from_c(address).read_all()
