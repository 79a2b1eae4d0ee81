"""Result: the rows of one statement, read as Python tuples, NumPy
arrays, a pandas DataFrame or Arrow.

A Result holds the C result (pj_result) until it is closed or collected;
every conversion reads the C column buffers again, so each call returns
arrays of its own. Types: integers are int64, doubles float64, strings
str (object arrays), a pipeline's predicates bool (SQL statements give
SQLite's 0/1). NULL is None in rows(); to_numpy() gives a
numpy.ma.MaskedArray for a column with NULLs; to_pandas() gives pandas'
nullable dtypes (Int64, Float64, boolean) for such columns, strings as
objects with None.
"""
from . import _arrow, _columns, _lib
from ._lib import Error


class Result(_lib.Closing):
    """Rows of one statement: len(result), iteration over row tuples,
    .columns (names), .types ('int', 'double', 'string', 'bool'),
    .rows(), .to_numpy(), .to_pandas(), .to_arrow(), __arrow_c_stream__,
    and for pipelines .plan and .llvm_ir."""

    def __init__(self, engine, handle, query=None):
        self._engine = engine
        self._r = handle
        self._query = query          # the handle that ran, for .llvm_ir
        self._owned_query = None     # closed with the result (Engine.query)
        lib = engine._lib
        ncols = lib.pj_result_column_count(handle)
        self.columns = [lib.pj_result_column_name(handle, c).decode("utf-8", "replace")
                        for c in range(ncols)]
        self.types = [_lib.TYPE_NAMES.get(lib.pj_result_column_type(handle, c), "int")
                      for c in range(ncols)]
        self._nrows = lib.pj_result_row_count(handle)
        self.plan = query.plan if query is not None else None

    def close(self):
        if self._r and self._engine._e:
            self._engine._lib.pj_result_free(self._r)
        self._r = None
        if self._owned_query is not None:
            self._owned_query.close()
            self._owned_query = None

    def _handle(self):
        if not self._r or not self._engine._e:
            raise Error("pipejit: the result is closed")
        return self._r

    def __len__(self):
        return self._nrows

    def __repr__(self):
        return "<pipejit.Result %d rows x %d columns: %s>" % (
            self._nrows, len(self.columns), ", ".join(self.columns))

    @property
    def llvm_ir(self):
        """The optimized LLVM IR of the pipeline that made this result
        (None for SQL)."""
        return self._query.llvm_ir if self._query is not None else None

    # -- conversions ------------------------------------------------------
    def _arrays(self):
        """[(values, mask)] per column, read from the C buffers."""
        np = _columns.numpy()
        res, lib = self._handle(), self._engine._lib
        return np, [_columns.read_column(np, lib, res, c) for c in range(len(self.columns))]

    def to_numpy(self):
        """A dict of column name -> NumPy array (MaskedArray with NULLs)."""
        np, arrays = self._arrays()
        return {name: values if mask is None else np.ma.MaskedArray(values, mask=mask)
                for name, (values, mask) in zip(self.columns, arrays)}

    def to_pandas(self):
        """A pandas DataFrame, one column per result column."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("pipejit: to_pandas needs pandas (Debian: apt-get install "
                              "python3-pandas, in a venv made with --system-site-packages; "
                              "elsewhere: pip install pandas)") from None
        np, arrays = self._arrays()
        nullable = {np.dtype(bool): pd.arrays.BooleanArray, np.dtype(np.int64):
                    pd.arrays.IntegerArray, np.dtype(np.float64): pd.arrays.FloatingArray}
        data = {}
        for name, (values, mask) in zip(self.columns, arrays):
            make = nullable.get(values.dtype) if mask is not None else None
            data[name] = make(values, mask) if make else values
        # The arrays are this call's own: no second copy (nor consolidation).
        return pd.DataFrame(data, copy=False)

    def rows(self):
        """The rows as a list of tuples (NULL as None)."""
        np, arrays = self._arrays()
        lists = []
        for values, mask in arrays:
            if mask is not None:
                values = values.astype(object)
                values[mask] = None
            lists.append(values.tolist())
        if not lists:
            return [()] * self._nrows
        return list(zip(*lists))

    def __iter__(self):
        return iter(self.rows())

    def __arrow_c_stream__(self, requested_schema=None):
        """The Arrow PyCapsule interface: a capsule "arrow_array_stream"
        with the rows as one record batch (requested_schema is ignored,
        as the interface allows)."""
        return _arrow.stream_capsule(self._engine._lib, self._handle())

    def to_arrow(self):
        """A pyarrow.Table (needs pyarrow)."""
        return _arrow.to_arrow(self)
