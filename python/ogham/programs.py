"""The bundled programs (`programs/*.og` of the repository) as ready functions on NumPy arrays.

Each function picks the entry point for the data's precision (f32 or f64) and passes the
parameters of the program's documentation (docs/bfast.md, docs/stl.md, docs/twdtw.md,
docs/ptsel.md) with the same defaults. `bundled(name)` returns the whole module, for the other
entry points (`bundled("bfast").detailed`, ...).

The programs' sources are embedded in the extension; they are written once into
`<cache>/bundled-<hash>/` (the cache directory is `$OGHAM_CACHE_DIR`, else
`$XDG_CACHE_HOME/ogham`, else `~/.cache/ogham`) so that their relative imports resolve.
"""

import hashlib
import math
import os
import tempfile
from collections import namedtuple

import numpy as np

from . import _ogham
from ._module import _open

PROGRAMS = ("bfast", "stl", "twdtw", "ptsel")


def cache_dir():
    """The directory of Ogham's caches."""
    if os.environ.get("OGHAM_CACHE_DIR"):
        return os.environ["OGHAM_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ogham")


def _bundled_dir():
    """The directory holding the bundled files, written (atomically, file by file) if missing."""
    files = _ogham.bundled_files()
    digest = hashlib.sha256()
    for path, text in files:
        digest.update(path.encode() + b"\0" + text.encode() + b"\0")
    root = os.path.join(cache_dir(), f"bundled-{digest.hexdigest()[:16]}")
    for path, text in files:
        target = os.path.join(root, path)
        try:
            with open(target, encoding="utf-8") as f:
                if f.read() == text:
                    continue
        except OSError:
            pass
        os.makedirs(os.path.dirname(target), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    return root


def bundled(name, backend="cpu", tuning=None):
    """The module of bundled program `name` ("bfast", "stl", "twdtw" or "ptsel")."""
    if name not in PROGRAMS:
        raise ValueError(f"there is no bundled program {name!r}: use one of {', '.join(PROGRAMS)}")
    path = os.path.join(_bundled_dir(), "programs", f"{name}.og")
    return _open(("file", path), backend, tuning)


def _stack(stack, name):
    """`stack` as an array of rank 2 of f32 or f64 (the two precisions the programs have)."""
    if not isinstance(stack, np.ndarray):
        stack = np.asarray(stack)
    if stack.dtype not in (np.float32, np.float64):
        raise TypeError(f"parameter `{name}`: expects float32 or float64 data, given {stack.dtype}: "
                        f"pass `{name}.astype(np.float32)`")
    if stack.ndim != 2:
        raise ValueError(f"parameter `{name}`: expects a [pixels][time] array (2 dimensions), "
                         f"given shape {stack.shape}; reshape a (time, y, x) cube with "
                         f"`cube.reshape(len(cube), -1).T` or use the xarray accessor "
                         f"`da.ogham.{'bfast_monitor' if name == 'stack' else name}(...)`")
    return stack


BfastResult = namedtuple("BfastResult",
                         "break_index break_time magnitude mosum_mean n_hist n_valid")
BfastResult.__doc__ = """BFAST-Monitor per pixel: break index in the series (-1 none, -2 too few
valid history observations, -3 singular history design), break time in fractional years (NaN if
none), magnitude (median monitoring residual), mean of the MOSUM process, valid history and valid
counts."""


def bfast_monitor(stack, history, *, freq=None, start=0.0, years=None, order=3, trend=True, h=0.25,
                  end=10, level=0.05, lam=None, backend="cpu"):
    """BFAST-Monitor (R `bfastmonitor(history = "all", type = "OLS-MOSUM")`) on every pixel.

    `stack [pixels][time]` f32 or f64 (NaN = missing); `history` the number of history positions
    (the rest is monitored). Time is regular (`freq` observations per year, position 0 at the
    fractional year `start`) or given (`years [time]` strictly increasing fractional years).
    `order` harmonics, `trend`, MOSUM window fraction `h`, boundary from strucchange's table for
    `(h, end, level)` unless `lam` is given. Returns a `BfastResult` of [pixels] arrays.
    """
    stack = _stack(stack, "stack")
    f64 = stack.dtype == np.float64
    module = bundled("bfast", backend)
    lam = math.nan if lam is None else float(lam)
    if (freq is None) == (years is None):
        raise TypeError("bfast_monitor(): pass exactly one of `freq` (regular time) and `years` "
                        "(the time axis in fractional years)")
    if years is not None:
        entry = module.years_f64 if f64 else module.years
        out = entry(stack, np.asarray(years, dtype=np.float64), history, order, trend, h, end,
                    level, lam)
    else:
        entry = module.main_f64 if f64 else module.main
        out = entry(stack, history, float(freq), float(start), order, trend, h, end, level, lam)
    return BfastResult(*out)


StlResult = namedtuple("StlResult",
                       "seasonal trend remainder weights trend_magnitude seasonal_amplitude")
StlResult.__doc__ = """STL per series: seasonal, trend, remainder and robustness weights
[pixels][time] (NaN where the input is missing), trend magnitude and seasonal amplitude
[pixels]."""


def stl(stack, period, seasonal_window, *, robust=False, backend="cpu"):
    """STL decomposition of every series of `stack [pixels][time]` (f32 or f64, NaN = missing)
    with period `period` (observations per cycle), seasonal window `seasonal_window` (odd, >= 3)
    and the spec's defaults for the rest (docs/stl.md); `robust` adds robustness iterations.
    Returns an `StlResult`."""
    stack = _stack(stack, "stack")
    module = bundled("stl", backend)
    entry = module.auto_f64 if stack.dtype == np.float64 else module.auto
    return StlResult(*entry(stack, period, seasonal_window, robust))


def twdtw(patterns, pattern_doy, series, series_doy, *, steepness=0.1, midpoint=50.0,
          cycle=366.0, max_elapsed=math.inf, fill=-1, backend="cpu"):
    """TWDTW nearest-pattern classification: `patterns [p][n][b]`, their day of year
    `pattern_doy [p][n]`, `series [s][m][b]` and `series_doy [s][m]` (or `[m]`, shared), all f64
    (NaN in any band removes the sample). Returns `(distances [s][p], labels [s])`, labels
    0-based pattern indices, `fill` where no pattern matches."""
    series = np.asarray(series, dtype=np.float64)
    series_doy = np.asarray(series_doy, dtype=np.float64)
    if series_doy.ndim == 1 and series.ndim == 3:
        series_doy = np.ascontiguousarray(np.broadcast_to(series_doy, series.shape[:2]))
    module = bundled("twdtw", backend)
    return module.nearest(np.asarray(patterns, dtype=np.float64),
                          np.asarray(pattern_doy, dtype=np.float64), series, series_doy,
                          steepness, midpoint, cycle, max_elapsed, fill)


def ptsel(phi, s=3, *, mean=False, backend="cpu"):
    """PtSel persistent-scatterer rank `[R][C]` of a wrapped phase stack `phi [K][R][C]` (f64,
    radians, NaN = invalid) with search-window half-width `s`; `mean` aggregates the arcs by
    their mean instead of their max. Window-parallel (`rank_wp`)."""
    return bundled("ptsel", backend).rank_wp(np.asarray(phi, dtype=np.float64), s, mean)
