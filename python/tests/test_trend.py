"""`ogham.mann_kendall` (programs/trend.og) against SciPy 1.17.1 and pymannkendall 1.4.3: the golden
values of tests/oracles/stats_trend_scipy.py (tests/oracles/trend_golden.json), the blocks of
pixels, the argument checks and the xarray accessor."""

import json

import numpy as np
import pytest
import xarray as xr

import ogham
from ogham import programs
from ogham.accessor import fractional_years


@pytest.fixture(scope="module")
def golden(root):
    with open(root / "tests" / "oracles" / "trend_golden.json") as fh:
        return json.load(fh)


@pytest.mark.parametrize("case", ["regular", "irregular", "f32"])
def test_references(golden, case):
    g = golden[case]
    dtype = np.dtype(g["dtype"])
    res = ogham.mann_kendall(np.array(g["Y"], dtype=dtype), np.array(g["t"]))
    rtol = 1e-5 if dtype == np.float32 else 1e-9
    for field in ("slope", "intercept", "p", "z", "tau", "var_s"):
        got = getattr(res, field)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, g[field], rtol=rtol, atol=rtol, equal_nan=True,
                                   err_msg=field)
    for field in ("s", "n"):
        got = getattr(res, field)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, np.array(g[field], dtype=np.int64), err_msg=field)
    if "pmk_tau" in g:
        # pymannkendall's Tau is tau-a: S over the number of pairs
        n = res.n.astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            tau_a = res.s / (n * (n - 1) / 2)
        np.testing.assert_allclose(tau_a, g["pmk_tau"], rtol=rtol, equal_nan=True)


def test_default_time_and_blocks(golden, monkeypatch):
    g = golden["regular"]
    stack = np.array(g["Y"])
    whole = ogham.mann_kendall(stack)                 # time 0..N-1, the case's own axis
    np.testing.assert_allclose(whole.slope, g["slope"], rtol=1e-9, equal_nan=True)
    n = stack.shape[1]
    monkeypatch.setattr(programs, "_TREND_BYTES", 3 * n * (n - 1) * 8)   # blocks of 3 pixels
    blocks = ogham.mann_kendall(stack)
    for a, b in zip(whole, blocks):
        np.testing.assert_array_equal(a, b)


def test_arguments():
    stack = np.zeros((2, 5), dtype=np.float32)
    with pytest.raises(ValueError, match="parameter `time`: need finite, strictly increasing"):
        ogham.mann_kendall(stack, [0.0, 1.0, 1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="parameter `time`: expects 5 times"):
        ogham.mann_kendall(stack, [0.0, 1.0])
    with pytest.raises(TypeError, match="parameter `stack`"):
        ogham.mann_kendall(np.zeros((2, 5), dtype=np.int32))
    empty = ogham.mann_kendall(np.zeros((0, 5)))
    assert all(len(column) == 0 for column in empty)


def test_accessor():
    rng = np.random.default_rng(5)
    time = (np.datetime64("2010-01-01") + np.arange(40) * np.timedelta64(30, "D"))
    y = 0.1 * np.arange(40)[:, None, None] + rng.standard_normal((40, 3, 4))
    y[rng.random(y.shape) < 0.2] = np.nan
    cube = xr.DataArray(y.astype(np.float32), dims=("time", "y", "x"),
                        coords={"time": time.astype("datetime64[ns]")}, attrs={"units": "1"})
    ds = cube.ogham.mann_kendall()
    assert dict(ds.sizes) == {"y": 3, "x": 4} and ds.attrs["units"] == "1"
    direct = ogham.mann_kendall(cube.ogham.pixels(), fractional_years(cube.time.values))
    for field in programs.TrendResult._fields:
        np.testing.assert_array_equal(ds[field].values.ravel(), getattr(direct, field))
    # lazily on dask, chunk by chunk: the same
    lazy = cube.chunk({"y": 2}).ogham.mann_kendall()
    np.testing.assert_array_equal(lazy.slope.values, ds.slope.values)
    assert (ds.p.values < 0.05).all()                  # a clear trend everywhere
