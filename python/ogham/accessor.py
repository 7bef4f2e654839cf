"""xarray integration: the `.ogham` accessor of DataArrays, lazy and chunk by chunk on dask.

A cube is a DataArray with a `time` dimension (any order of dimensions, any number of other
dimensions: `y`, `x`, bands, ...). Every method moves `time` last, flattens the other dimensions
into pixels (`[m][N]`, what the programs take), runs the entry point, and gives every result its
dimensions back: a `[m]` result is a map over the other dimensions, a `[m][N]` result a cube. A
result that is an array of tuples or records (`[m](f32, i64)`, `[m]{mean: f32, ...}`) is its
parts, each a map or a cube of its own (`Entry.outputs` names them).
Coordinates and attributes of the input (a rioxarray CRS in `spatial_ref` included) are kept.

On a dask-backed cube the work is `xarray.apply_ufunc(..., dask="parallelized")`: lazy, one call
per chunk. Chunks must hold the whole time axis (otherwise a `ValueError` says how to rechunk).
The function shipped to the workers holds the module, which pickles as its source and options:
each worker process compiles it once (a cache hit in `OGHAM_CACHE_DIR`) and reuses it for every
chunk. Per-pixel results do not depend on the chunking: the result is bit-identical to one
in-memory call.
"""

import functools
import math

import numpy as np
import xarray as xr

from . import programs
from ._module import Entry, keywords_checked, unexpected_keyword

TIME = "time"


def fractional_years(time):
    """Datetimes as fractional years (2020-07-02T00:00 = 2020.5 in a leap year)."""
    t = np.asarray(time, dtype="datetime64[ns]")
    year = t.astype("datetime64[Y]")
    start = year.astype("datetime64[ns]")
    length = (year + 1).astype("datetime64[ns]") - start
    return year.astype(np.int64) + 1970 + (t - start) / length


def day_of_year(time):
    """Datetimes as day of year (1 January = 1) with the fraction of the day."""
    t = np.asarray(time, dtype="datetime64[ns]")
    start = t.astype("datetime64[Y]").astype("datetime64[ns]")
    return 1.0 + (t - start) / np.timedelta64(1, "D")


def _pixels_call(block, entry, index, kinds, args):
    """Runs `entry` on one block whose last axis is time: the block flattened to `[m][N]` as
    argument `index`, the other arguments as given; its outputs (`Entry.outputs`) reshaped to the
    block's pixels."""
    pixels = block.shape[:-1]
    n = block.shape[-1]
    stack = np.ascontiguousarray(block.reshape(-1, n))
    full = list(args)
    full.insert(index, stack)
    out = entry.flatten(entry(*full))
    shaped = tuple(o.reshape(pixels + ((n,) if kind == "series" else ()))
                   for o, kind in zip(out, kinds))
    return shaped if len(kinds) > 1 else shaped[0]


class _Plan:
    """How an entry point's parameters and results map onto a cube."""

    def __init__(self, entry, cube_param):
        if not isinstance(entry, Entry):
            raise TypeError(f"apply(): expects an entry point of a module loaded with ogham.load "
                            f"(e.g. `module.main`), given {type(entry).__name__}")
        names = [p.pyname for p in entry.params]
        if cube_param is None:
            cube_param = names[0] if names else None
        if cube_param not in names:
            raise ValueError(f"apply(): {entry.__name__} has no parameter {cube_param!r} "
                             f"(parameters: {', '.join(names)})")
        self.index = names.index(cube_param)
        param = entry.params[self.index]
        if param.dims is None or len(param.dims) != 2:
            raise ValueError(f"apply(): parameter `{param.name}` of {entry.__name__} is "
                             f"{param.type}; the cube goes into a [m][N] parameter (pixels × time)")
        m, n = param.dims
        self.kinds = []
        for name, r in entry.outputs:
            if r.dims and r.dims[0] == m and len(r.dims) == 1:
                self.kinds.append("map")
            elif r.dims and r.dims[0] == m and len(r.dims) == 2 and r.dims[1] == n:
                self.kinds.append("series")
            else:
                what = "returns" if name == "result0" and len(entry.outputs) == 1 else \
                    f"returns `{name}` of type"
                raise ValueError(
                    f"apply(): {entry.__name__} {what} {r.type}; apply() handles results of "
                    f"shape [{m}] (one value per pixel) or [{m}][{n}] (a series per pixel), and "
                    f"arrays [{m}] of tuples or records of those. Call the entry on "
                    f"`cube.ogham.pixels()` for other shapes")
        self.entry = entry
        self.param = param
        self.names = [name for name, _ in entry.outputs]
        self.dtypes = [np.dtype(r.dtype) for _, r in entry.outputs]
        # One plain result gives a DataArray, as `xarray.apply_ufunc` does; anything else a
        # Dataset of named variables.
        self.single = len(entry.results) == 1 and entry.results[0].parts is None


@xr.register_dataarray_accessor("ogham")
class OghamAccessor:
    """`cube.ogham.<method>`: Ogham programs on a DataArray with a `time` dimension."""

    def __init__(self, da):
        self._da = da

    def _cube(self, dtype=None):
        da = self._da
        if TIME not in da.dims:
            raise ValueError(f"the DataArray has no `{TIME}` dimension (dims: {da.dims}); rename "
                             f"the time dimension with `da.rename({{'<dim>': 'time'}})`")
        if dtype is not None and da.dtype != dtype:
            raise TypeError(f"the cube is {da.dtype}; the method expects {dtype}: pass "
                            f"`da.astype(np.{np.dtype(dtype).name})`")
        if da.chunks is not None:
            chunks = da.chunks[da.dims.index(TIME)]
            if len(chunks) > 1:
                raise ValueError(
                    f"the `{TIME}` dimension is split into {len(chunks)} dask chunks; every chunk "
                    f"must hold the whole time series: rechunk with `da.chunk({{'{TIME}': -1}})`")
        return da

    def pixels(self):
        """The cube as a NumPy `[pixels][time]` array (time last, the other dims flattened)."""
        da = self._cube().transpose(..., TIME)
        return np.ascontiguousarray(da.values.reshape(-1, da.sizes[TIME]))

    def apply(self, entry, *args, cube_param=None, names=None, **kwargs):
        """Runs a user's entry point `[m][N] -> [m]... / [m][N]...` on the cube.

        `entry` is an entry of a module from `ogham.load`; the cube goes into parameter
        `cube_param` (default: the first), `args`/`kwargs` are the other parameters. An entry
        with one result gives a DataArray (a map over the non-time dims for `[m]`, a cube for
        `[m][N]`). Several results, or a result that is an array of tuples or records, give a
        Dataset with one map or cube per part, named by `names` or else as `entry.outputs` names
        them (record fields in declared order, `result0`, ... for tuples and several results)."""
        plan = _Plan(entry, cube_param)
        others = [p.pyname for i, p in enumerate(entry.params) if i != plan.index]
        if len(args) > len(others):
            raise TypeError(f"apply(): {entry.__name__} takes {len(others)} arguments besides "
                            f"the cube ({', '.join(others)}), given {len(args)}")
        values = dict(zip(others, args))
        for name, value in kwargs.items():
            if name in values:
                raise TypeError(f"apply(): {entry.__name__}() got multiple values for argument "
                                f"{name!r}")
            if name not in others:
                raise unexpected_keyword(entry.__name__, name, others)
            values[name] = value
        missing = [n for n in others if n not in values]
        if missing:
            raise TypeError(f"apply(): {entry.__name__} needs the argument(s) {', '.join(missing)}")
        rest = [values[n] for n in others]
        names = list(names) if names is not None else plan.names
        if len(names) != len(plan.names):
            raise ValueError(f"apply(): {len(names)} names for the {len(plan.names)} results of "
                             f"{entry.__name__} ({', '.join(plan.names)})")
        outputs = self._run(plan, rest, np.dtype(plan.param.dtype))
        if plan.single:
            return outputs[0] if names == plan.names else outputs[0].rename(names[0])
        return xr.Dataset(dict(zip(names, outputs)), attrs=self._da.attrs)

    def _run(self, plan, rest, dtype):
        da = self._cube(dtype)
        func = functools.partial(_pixels_call, entry=plan.entry, index=plan.index,
                                 kinds=plan.kinds, args=tuple(rest))
        out = xr.apply_ufunc(
            func, da,
            input_core_dims=[[TIME]],
            output_core_dims=[[TIME] if k == "series" else [] for k in plan.kinds],
            dask="parallelized",
            output_dtypes=plan.dtypes,
            keep_attrs=True,
        )
        out = out if isinstance(out, tuple) else (out,)
        return [o.transpose(*[d for d in da.dims if d in o.dims]) for o in out]

    @keywords_checked
    def bfast_monitor(self, history_end, *, order=3, trend=True, h=0.25, end=10, level=0.05,
                      lam=None, backend="cpu"):
        """BFAST-Monitor on every pixel, the history being the observations before
        `history_end` (a date: "2016-01-01"). Time is the cube's `time` coordinate (fractional
        years, any spacing). f32 or f64 cubes, NaN = missing.

        Returns a Dataset of maps: `break` (a break was detected), `break_time` (its date, NaT if
        none), `break_year` (fractional year, NaN if none), `magnitude`, `mosum_mean`, `status`
        (the break's index in the series, -1 none, -2 too few valid history observations, -3
        singular history design), `n_hist`, `n_valid`."""
        da = self._cube()
        if da.dtype not in (np.float32, np.float64):
            raise TypeError(f"bfast_monitor(): the cube is {da.dtype}; pass `da.astype(np.float32)`")
        time = da[TIME].values
        if not np.issubdtype(time.dtype, np.datetime64):
            raise TypeError("bfast_monitor(): the `time` coordinate must hold datetimes "
                            f"(given {time.dtype}); set it with `da.assign_coords(time=dates)`")
        history = int(np.sum(time < np.datetime64(history_end, "ns")))
        years = fractional_years(time)
        # (The history length is checked by the program, on the workers of a dask cube.)
        _, _, order, h, end, level, lam = programs._bfast_params(
            len(time), None, None, order, h, end, level, lam)
        module = programs.bundled("bfast", backend)
        entry = module.years_f64 if da.dtype == np.float64 else module.years
        plan = _Plan(entry, "images")
        brk, _, magnitude, mosum_mean, n_hist, n_valid = self._run(
            plan, [years, history, order, trend, h, end, level, lam], da.dtype)
        found = brk >= 0
        times = np.asarray(time, dtype="datetime64[ns]")
        break_time, break_year = (
            xr.apply_ufunc(_take, brk, kwargs={"values": values, "fill": fill},
                           dask="parallelized", output_dtypes=[values.dtype], keep_attrs=True)
            for values, fill in ((times, np.datetime64("NaT", "ns")), (years, np.nan)))
        attrs = dict(da.attrs)
        return xr.Dataset({
            "break": found, "break_time": break_time, "break_year": break_year,
            "magnitude": magnitude, "mosum_mean": mosum_mean, "status": brk,
            "n_hist": n_hist, "n_valid": n_valid,
        }, attrs=attrs | {"history_end": str(history_end), "history_length": history})

    @keywords_checked
    def stl(self, period, seasonal_window, *, robust=False, fill_subseries=False, backend="cpu"):
        """STL decomposition of every pixel series (`period` observations per cycle, odd
        `seasonal_window` >= 3; the spec's defaults for the rest; `fill_subseries` as in
        `ogham.stl`). Returns a Dataset with the cubes `seasonal`, `trend`, `remainder`,
        `weights` and the maps `trend_magnitude`, `seasonal_amplitude`."""
        da = self._cube()
        period, seasonal_window = programs._stl_windows(da.sizes[TIME], period, seasonal_window)
        entry = programs._stl_entry(programs.bundled("stl", backend), da.dtype, fill_subseries)
        outs = self._run(_Plan(entry, "Y"), [period, seasonal_window, robust], da.dtype)
        return xr.Dataset(dict(zip(programs.StlResult._fields, outs)), attrs=da.attrs)

    @keywords_checked
    def twdtw(self, patterns, pattern_doy, *, steepness=0.1, midpoint=50.0, cycle=366.0,
              max_elapsed=math.inf, fill=-1, backend="cpu"):
        """TWDTW nearest-pattern classification of every pixel series of a one-band cube:
        `patterns [p][n]` (or `[p][n][1]`) and their day of year `pattern_doy [p][n]`; the
        series' days of year come from the `time` coordinate. Returns a Dataset with the map
        `label` (0-based pattern index, `fill` if none matches) and `distance [pattern]`."""
        da = self._cube()
        if da.dtype not in (np.float32, np.float64):
            raise TypeError(f"twdtw(): the cube is {da.dtype}; pass `da.astype(np.float64)`")
        patterns = programs._floats(patterns, "patterns", f64_only=True)
        if patterns.ndim == 2:
            patterns = patterns[:, :, np.newaxis]
        pattern_doy = programs._floats(pattern_doy, "pattern_doy", f64_only=True)
        doy = day_of_year(da[TIME].values)
        p = patterns.shape[0]
        func = functools.partial(_twdtw_block, patterns=patterns, pattern_doy=pattern_doy,
                                 doy=doy, params=(steepness, midpoint, cycle, max_elapsed, fill),
                                 backend=backend)
        distance, label = xr.apply_ufunc(
            func, da.astype(np.float64),
            input_core_dims=[[TIME]], output_core_dims=[["pattern"], []],
            dask="parallelized", output_dtypes=[np.float64, np.int64],
            dask_gufunc_kwargs={"output_sizes": {"pattern": p}}, keep_attrs=True)
        dims = [d for d in da.dims if d != TIME]
        return xr.Dataset({"label": label.transpose(*dims),
                           "distance": distance.transpose(*dims, "pattern")}, attrs=da.attrs)

    @keywords_checked
    def mann_kendall(self, *, backend="cpu"):
        """The Mann-Kendall trend test and the Theil-Sen slope of every pixel series
        (`programs.mann_kendall`, docs/trend.md) against the cube's `time` coordinate: datetimes
        as fractional years (the slope is then per year), numbers as they are. f32 or f64 cubes,
        NaN = missing. Returns a Dataset of maps: `slope`, `intercept`, `p`, `z`, `tau`, `s`,
        `var_s`, `n`."""
        da = self._cube()
        if da.dtype not in (np.float32, np.float64):
            raise TypeError(f"mann_kendall(): the cube is {da.dtype}; pass "
                            f"`da.astype(np.float32)`")
        time = da[TIME].values
        if np.issubdtype(time.dtype, np.datetime64):
            t = fractional_years(time)
        elif np.issubdtype(time.dtype, np.number) and not np.issubdtype(time.dtype, np.bool_):
            t = time.astype(np.float64)
        else:
            raise TypeError(f"mann_kendall(): the `time` coordinate must hold datetimes or "
                            f"numbers (given {time.dtype})")
        func = functools.partial(_trend_block, time=t, backend=backend)
        fields = programs.TrendResult._fields
        kinds = [np.int64 if f in ("s", "n") else da.dtype for f in fields]
        outs = xr.apply_ufunc(func, da, input_core_dims=[[TIME]],
                              output_core_dims=[[] for _ in fields], dask="parallelized",
                              output_dtypes=kinds, keep_attrs=True)
        dims = [d for d in da.dims if d != TIME]
        return xr.Dataset({f: o.transpose(*dims) for f, o in zip(fields, outs)}, attrs=da.attrs)


def _take(index, values, fill):
    """`values[index]` where `index >= 0`, else `fill` (break dates from break indices)."""
    return np.where(index >= 0, values[np.maximum(index, 0)], fill)


def _twdtw_block(block, patterns, pattern_doy, doy, params, backend):
    pixels = block.shape[:-1]
    series = np.ascontiguousarray(block.reshape(-1, block.shape[-1], 1))
    distances, labels = programs.twdtw(patterns, pattern_doy, series, doy, steepness=params[0],
                                       midpoint=params[1], cycle=params[2],
                                       max_elapsed=params[3], fill=params[4], backend=backend)
    return distances.reshape(pixels + (patterns.shape[0],)), labels.reshape(pixels)


def _trend_block(block, time, backend):
    pixels = block.shape[:-1]
    stack = np.ascontiguousarray(block.reshape(-1, block.shape[-1]))
    out = programs.mann_kendall(stack, time, backend=backend)
    return tuple(o.reshape(pixels) for o in out)
