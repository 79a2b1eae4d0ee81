"""Result columns as NumPy arrays, read from the C column buffers.

Each column is read in place through pj_result_column and copied once
into an array Python owns (the result may be freed right after):
integer kinds widen to int64, doubles stay float64, predicates become
bool, strings become an object array in which each distinct string is
decoded once (its Python str is shared by every row that holds it). A
column with NULLs also gets a boolean mask (True = NULL) unpacked from
the validity bits. No value ever goes through a per-row Python call.
"""
import ctypes

from . import _lib

_CTYPES = {_lib.U32: ctypes.c_uint32, _lib.I32: ctypes.c_int32, _lib.I64: ctypes.c_int64,
           _lib.F64: ctypes.c_double, _lib.STR: ctypes.c_uint32, _lib.BOOL: ctypes.c_int64}


def numpy():
    try:
        import numpy as np
    except ImportError:
        raise ImportError("pipejit: to_numpy and to_pandas need NumPy (Debian: apt-get install "
                          "python3-numpy, in a venv made with --system-site-packages; "
                          "elsewhere: pip install numpy)") from None
    return np


def _view(np, address, ctype, n):
    """The n values at address, without a copy."""
    return np.ctypeslib.as_array(ctypes.cast(address, ctypes.POINTER(ctype)), shape=(n,))


def _strings(np, lib, res, ids, mask):
    """Object array of the strings with these ids (rows under mask are
    None). Each distinct id is decoded once."""
    n = len(ids)
    if mask is not None:
        if mask.all():
            return np.empty(n, dtype=object)
        ids = ids.copy()
        ids[mask] = ids[~mask][0]   # NULL rows hold no id: give them a real one
    size = ctypes.c_size_t()

    def text(sid):
        p = lib.pj_result_string(res, int(sid), ctypes.byref(size))
        return ctypes.string_at(p, size.value).decode("utf-8", "replace")

    top = int(ids.max()) + 1
    if top <= 4 * n + 4096:
        # Ids dense enough for a lookup table indexed by id.
        present = np.zeros(top, dtype=bool)
        present[ids] = True
        lut = np.empty(top, dtype=object)
        for sid in np.flatnonzero(present):
            lut[sid] = text(sid)
        out = lut[ids]
    else:
        uniq, inverse = np.unique(ids, return_inverse=True)
        lut = np.empty(len(uniq), dtype=object)
        lut[:] = [text(sid) for sid in uniq]
        out = lut[inverse]
    if mask is not None:
        out[mask] = None
    return out


def read_column(np, lib, res, c):
    """(values, mask) of column c: values an owned array, mask a bool
    array (True = NULL) or None when the column has no NULL."""
    col = _lib.Column()
    lib.pj_result_column(res, c, ctypes.byref(col))
    n, t = col.rows, col.type
    mask = None
    if col.validity and n:
        words = _view(np, col.validity, ctypes.c_uint64, (n + 63) // 64)
        mask = np.unpackbits(words.view(np.uint8), count=n, bitorder="little") == 0
    if t == _lib.ID:
        values = np.arange(n, dtype=np.int64)
    elif n == 0:
        values = np.empty(0, dtype={_lib.F64: np.float64, _lib.STR: object,
                                    _lib.BOOL: bool}.get(t, np.int64))
    else:
        raw = _view(np, col.values, _CTYPES[t], n)
        if t == _lib.STR:
            values = _strings(np, lib, res, raw, mask)
        elif t == _lib.BOOL:
            values = raw != 0
        elif t in (_lib.I64, _lib.F64):
            values = raw.copy()
        else:
            values = raw.astype(np.int64)
    return values, mask
