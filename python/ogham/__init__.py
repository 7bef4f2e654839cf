"""Ogham from Python: compiled Ogham programs on NumPy arrays, xarray cubes and dask clusters.

    import ogham
    mod = ogham.load("my_method.og")          # or the program's text; compiled once
    out = mod.main(stack)                     # NumPy in, NumPy out; the GIL is released
    res = ogham.bfast_monitor(stack, history=128, freq=23)
    ds = cube.ogham.bfast_monitor(history_end="2016-01-01")   # xarray, lazy on dask
    ogham.write_test("my_method.og", "main", [stack], [expected])   # a test case as .npy files

See docs/python.md.
"""

from ._ogham import OghamError
from ._module import Entry, Module, Results, load, load_count


def _rebuild_error(message, code):
    error = OghamError(message)
    error.code = code
    return error


# An error raised on a dask worker reaches the client pickled: keep its code.
OghamError.__reduce__ = lambda self: (_rebuild_error, (str(self), getattr(self, "code", None)))
from .programs import bfast_monitor, bundled, mann_kendall, ptsel, stl, twdtw
from .testdata import write_test

try:
    import xarray as _xarray  # noqa: F401
except ImportError:  # the accessor needs xarray; the rest does not
    pass
else:
    from . import accessor  # noqa: F401  (registers `DataArray.ogham`)


def load_ipython_extension(ipython):
    """`%load_ext ogham`: registers the `%%ogham` cell magic (ogham/magic.py)."""
    from .magic import register

    register(ipython)


__all__ = ["OghamError", "Entry", "Module", "Results", "load", "load_count", "bfast_monitor",
           "bundled", "mann_kendall", "ptsel", "stl", "twdtw", "write_test"]
