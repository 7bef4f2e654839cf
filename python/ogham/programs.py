"""The bundled programs (`programs/*.og` of the repository) as ready functions on NumPy arrays.

Each function picks the entry point for the data's precision (f32 or f64) and passes the
parameters of the program's documentation (docs/bfast.md, docs/stl.md, docs/twdtw.md,
docs/ptsel.md, docs/trend.md) with the same defaults. `bundled(name)` returns the whole module, for the other
entry points (`bundled("bfast").detailed`, ...).

The programs' sources are embedded in the extension and compiled from there, their imports
from the compiler's embedded standard library: no file on disk (in the current directory, the
cache, `OGHAM_PATH`) can change them.
"""

import math
from collections import namedtuple

import numpy as np

from . import _ogham
from ._module import _open, keywords_checked

PROGRAMS = ("bfast", "stl", "twdtw", "ptsel", "trend")


@keywords_checked
def bundled(name, backend="cpu", tuning=None):
    """The module of bundled program `name` ("bfast", "stl", "twdtw", "ptsel" or "trend")."""
    if name not in PROGRAMS:
        raise ValueError(f"there is no bundled program {name!r}: use one of {', '.join(PROGRAMS)}")
    return _open(("bundled", name), backend, tuning)


# The argument policy of every bundled function (docs/python.md): data arrays must already be
# floating point (float32 or float64; programs that have only an f64 version get float32 widened
# exactly) and are never cast from int, bool, complex or object data; integer parameters take
# Python or NumPy integers (not bool, not floats), checked with exact Python arithmetic against
# the bounds the program needs (so that nothing overflows in its 64-bit arithmetic); real
# parameters take any real number but bool and must be finite unless said otherwise. Every
# error names the function's own parameter.

def _floats(data, name, f64_only=False):
    """`data` as a float32/float64 NumPy array (float64 when `f64_only`), never cast from
    other kinds of data."""
    array = data if isinstance(data, np.ndarray) else np.asarray(data)
    if array.dtype not in (np.float32, np.float64):
        raise TypeError(f"parameter `{name}`: expects float32 or float64 data, given {array.dtype}: "
                        f"pass `{name}.astype(np.{'float64' if f64_only else 'float32'})`")
    return array.astype(np.float64, copy=False) if f64_only else array


def _stack(stack, name):
    """`stack` as an array of rank 2 of f32 or f64 (the two precisions the programs have)."""
    stack = _floats(stack, name)
    if stack.ndim != 2:
        raise ValueError(f"parameter `{name}`: expects a [pixels][time] array (2 dimensions), "
                         f"given shape {stack.shape}; reshape a (time, y, x) cube with "
                         f"`cube.reshape(len(cube), -1).T` or use the xarray accessor "
                         f"`da.ogham.{'bfast_monitor' if name == 'stack' else name}(...)`")
    return stack


def _int(value, name, low, high, why=""):
    """`value` as a Python int in `low..high` (exact: Python integers do not overflow)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"parameter `{name}`: expects an int, given a `{type(value).__name__}` "
                        f"({value!r})")
    value = int(value)
    if not low <= value <= high:
        raise ValueError(f"parameter `{name}`: need {low} <= {name} <= {high}{why}, given {value}")
    return value


def _real(value, name, finite=True):
    """`value` as a Python float: a real number (not bool), finite if `finite`, never NaN."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                      np.floating)):
        raise TypeError(f"parameter `{name}`: expects a real number, given a "
                        f"`{type(value).__name__}` ({value!r})")
    try:
        value = float(value)
    except OverflowError:
        value = math.inf if value > 0 else -math.inf
    if math.isnan(value) or (finite and math.isinf(value)):
        raise ValueError(f"parameter `{name}`: need a {'finite number' if finite else 'number'}, "
                         f"given {value}")
    return value


def _positive(value, name, finite=True):
    value = _real(value, name, finite)
    if value <= 0:
        raise ValueError(f"parameter `{name}`: need {name} > 0, given {value}")
    return value


# The largest window or count a bundled program is given where no size of the data bounds it:
# far beyond any real use, and small enough that the programs' 64-bit arithmetic on it (sums and
# products of a few such values) cannot overflow.
_LARGE = 2**31 - 1


BfastResult = namedtuple("BfastResult",
                         "break_index break_time magnitude mosum_mean n_hist n_valid")
BfastResult.__doc__ = """BFAST-Monitor per pixel: break index in the series (-1 none, -2 too few
valid history observations, -3 singular history design), break time in fractional years (NaN if
none), magnitude (median monitoring residual), mean of the MOSUM process, valid history and valid
counts."""


@keywords_checked
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
    if (freq is None) == (years is None):
        raise TypeError("bfast_monitor(): pass exactly one of `freq` (regular time) and `years` "
                        "(the time axis in fractional years)")
    history, freq, order, h, end, level, lam = _bfast_params(stack.shape[1], history, freq,
                                                             order, h, end, level, lam)
    module = bundled("bfast", backend)
    if years is not None:
        entry = module.years_f64 if f64 else module.years
        out = entry(stack, _floats(years, "years", f64_only=True), history, order, trend, h, end, level, lam)
    else:
        entry = module.main_f64 if f64 else module.main
        out = entry(stack, history, freq, _real(start, "start"), order, trend, h, end, level,
                    lam)
    return BfastResult(*out)


def _bfast_params(n, history, freq, order, h, end, level, lam):
    """BFAST-Monitor's scalar parameters checked for series of `n` time steps (`history` None:
    not checked; `freq` None on a time axis of fractional years), `lam` NaN for none."""
    if history is not None:
        history = _int(history, "history", 1, n - 1, f" (the series have {n} time steps)")
    if freq is None:
        order = _int(order, "order", 0, _LARGE)
    else:
        freq = _positive(freq, "freq")
        order = _int(order, "order", 0, min(math.floor(freq / 2), _LARGE), " (2·order <= freq)")
    lam = math.nan if lam is None else _positive(lam, "lam")
    return (history, freq, order, _real(h, "h"), _int(end, "end", 1, _LARGE),
            _real(level, "level"), lam)


StlResult = namedtuple("StlResult",
                       "seasonal trend remainder weights trend_magnitude seasonal_amplitude")
StlResult.__doc__ = """STL per series: seasonal, trend, remainder and robustness weights
[pixels][time] (NaN where the input is missing), trend magnitude and seasonal amplitude
[pixels]."""


@keywords_checked
def stl(stack, period, seasonal_window, *, robust=False, fill_subseries=False, backend="cpu"):
    """STL decomposition of every series of `stack [pixels][time]` (f32 or f64, NaN = missing)
    with period `period` (observations per cycle), seasonal window `seasonal_window` (odd, >= 3)
    and the spec's defaults for the rest (docs/stl.md); `robust` adds robustness iterations.
    A series with a cycle-subseries (a position in the cycle) that has no observation is NaN
    throughout unless `fill_subseries`, which first fills such subseries from the nearest
    observations around them (docs/stl.md, "Unobserved cycle-subseries"). Returns an
    `StlResult`."""
    stack = _stack(stack, "stack")
    period, seasonal_window = _stl_windows(stack.shape[1], period, seasonal_window)
    return StlResult(*_stl_entry(bundled("stl", backend), stack.dtype, fill_subseries)(
        stack, period, seasonal_window, robust))


def _stl_entry(module, dtype, fill_subseries):
    """The `auto` entry of the bundled STL module for data of `dtype`, filling unobserved
    cycle-subseries or not (`fill_subseries`, a bool)."""
    if not isinstance(fill_subseries, (bool, np.bool_)):
        raise TypeError(f"parameter `fill_subseries`: expects a bool, given a "
                        f"`{type(fill_subseries).__name__}` ({fill_subseries!r})")
    name = ("auto_fill" if fill_subseries else "auto") + ("_f64" if dtype == np.float64 else "")
    return getattr(module, name)


def _stl_windows(n, period, seasonal_window):
    """`(period, seasonal_window)` checked for series of `n` time steps."""
    period = _int(period, "period", 2, n // 2, f" (two cycles of the {n} time steps at least)")
    seasonal_window = _int(seasonal_window, "seasonal_window", 3, _LARGE)
    if seasonal_window % 2 == 0:
        raise ValueError(f"parameter `seasonal_window`: need an odd window, given "
                         f"{seasonal_window}")
    return period, seasonal_window


@keywords_checked
def twdtw(patterns, pattern_doy, series, series_doy, *, steepness=0.1, midpoint=50.0,
          cycle=366.0, max_elapsed=math.inf, fill=-1, backend="cpu"):
    """TWDTW nearest-pattern classification: `patterns [p][n][b]`, their day of year
    `pattern_doy [p][n]`, `series [s][m][b]` and `series_doy [s][m]` (or `[m]`, shared), all
    float64 (float32 is widened; NaN in any band removes the sample); `cycle` > 0 and
    `max_elapsed` > 0 (may be infinite). Returns `(distances [s][p], labels [s])`, labels
    0-based pattern indices, `fill` where no pattern matches."""
    patterns = _floats(patterns, "patterns", f64_only=True)
    pattern_doy = _floats(pattern_doy, "pattern_doy", f64_only=True)
    series = _floats(series, "series", f64_only=True)
    series_doy = _floats(series_doy, "series_doy", f64_only=True)
    if series_doy.ndim == 1 and series.ndim == 3:
        series_doy = np.ascontiguousarray(np.broadcast_to(series_doy, series.shape[:2]))
    params = (_real(steepness, "steepness"), _real(midpoint, "midpoint"),
              _positive(cycle, "cycle"), _positive(max_elapsed, "max_elapsed", finite=False),
              _int(fill, "fill", -2**63, 2**63 - 1))
    module = bundled("twdtw", backend)
    return module.nearest(patterns, pattern_doy, series, series_doy, *params)


@keywords_checked
def ptsel(phi, s=3, *, mean=False, backend="cpu"):
    """PtSel persistent-scatterer rank `[R][C]` of a wrapped phase stack `phi [K][R][C]` (f64;
    float32 is widened; radians, NaN = invalid) with search-window half-width `s` (1 to
    max(R, C)); `mean` aggregates the arcs by
    their mean instead of their max. Window-parallel (`rank_wp`)."""
    phi = _floats(phi, "phi", f64_only=True)
    widest = max(phi.shape[1:], default=1) if phi.ndim == 3 else _LARGE
    s = _int(s, "s", 1, max(widest, 1), " (the patch's larger side: a wider window holds no "
             "more pixels)")
    return bundled("ptsel", backend).rank_wp(phi, s, mean)


TrendResult = namedtuple("TrendResult", "slope intercept p z tau s var_s n")
TrendResult.__doc__ = """Mann-Kendall and Theil-Sen per pixel (docs/trend.md): Theil-Sen slope
(per unit of time) and intercept (median(y) - slope·median(t)), two-sided p-value, continuity-
corrected z, Kendall's tau-b, the statistic S (int64), its variance with the ties correction and
the number of valid observations (int64). With fewer than 2 valid observations S and its
variance are 0 and the rest NaN."""

# The most bytes of pairwise slopes one call of the trend program holds (`N(N-1)/2` f64 twice
# per pixel): larger stacks are split into blocks of pixels.
_TREND_BYTES = 1 << 28


@keywords_checked
def mann_kendall(stack, time=None, *, backend="cpu"):
    """The Mann-Kendall trend test and the Theil-Sen slope of every series of
    `stack [pixels][time]` (f32 or f64, NaN = missing, skipped) observed at `time [time]` (real,
    finite, strictly increasing, e.g. fractional years; default 0, 1, ..., the positions).
    Returns a `TrendResult` of [pixels] arrays (f32 for an f32 stack: computed in f64, rounded
    once). The work per pixel grows with time², and the pixels are sent to the program in blocks
    of at most 256 MiB of pairwise slopes."""
    stack = _stack(stack, "stack")
    m, n = stack.shape
    if time is None:
        time = np.arange(n, dtype=np.float64)
    time = _floats(time, "time", f64_only=True)
    if time.shape != (n,):
        raise ValueError(f"parameter `time`: expects {n} times (one per column of `stack`), "
                         f"given shape {time.shape}")
    if not np.all(np.isfinite(time)) or np.any(np.diff(time) <= 0):
        raise ValueError("parameter `time`: need finite, strictly increasing times")
    module = bundled("trend", backend)
    entry = module.main_f64 if stack.dtype == np.float64 else module.main
    per = max(1, _TREND_BYTES // max(1, n * (n - 1) * 8))
    if m <= per:
        return TrendResult(*entry(stack, time))
    parts = [entry(stack[i:i + per], time) for i in range(0, m, per)]
    return TrendResult(*(np.concatenate(column) for column in zip(*parts)))
