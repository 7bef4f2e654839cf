"""The xarray accessor: reshaping to [m][N] and back, coordinates, attributes and CRS, the time
axis, dask laziness, user entries, GeoTIFF stacks in and maps out."""

import numpy as np
import pytest
import rasterio
import rioxarray  # noqa: F401
import xarray as xr
from rasterio.transform import from_origin

import ogham
from ogham import io
from ogham.accessor import fractional_years

USER = """
-- | Mean of the valid values of each pixel and the series minus it.
entry centre [m][n] (xs: [m][n]f32) (offset: f32) : ([m]f32, [m][n]f32) =
  let mean r = reduce (+) 0f32 (map (\\x -> if isnan x then 0f32 else x) r)
               / f32.i64 (reduce (+) 0i64 (map (\\x -> if isnan x then 0i64 else 1i64) r))
  let ms = map mean xs
  in (map (+ offset) ms, map2 (\\r m -> map (\\x -> x - m) r) xs ms)
"""


def make_cube(ny=6, nx=5, nt=160, seed=0):
    rng = np.random.default_rng(seed)
    time = np.datetime64("2005-01-01") + np.arange(nt) * np.timedelta64(16, "D")
    t = np.arange(nt)
    y = 0.5 + 0.2 * np.sin(2 * np.pi * t / 23)[:, None, None] + 0.03 * rng.standard_normal(
        (nt, ny, nx))
    y[120:, :3, :] -= 0.4  # a clear-cut in the northern half, in 2010
    y[rng.random(y.shape) < 0.2] = np.nan
    cube = xr.DataArray(y.astype(np.float32), dims=("time", "y", "x"),
                        coords={"time": time.astype("datetime64[ns]"),
                                "y": 5_000_000.0 - 30.0 * np.arange(ny),
                                "x": 600_000.0 + 30.0 * np.arange(nx)},
                        attrs={"long_name": "NDMI", "units": "1"}, name="ndmi")
    return cube.rio.write_crs("EPSG:32633")


def test_fractional_years():
    t = np.array(["2020-07-02", "2021-01-01", "2019-12-31T12:00"], dtype="datetime64[ns]")
    np.testing.assert_allclose(fractional_years(t), [2020.5, 2021.0, 2019 + 364.5 / 365])


def test_bfast_monitor_round_trip():
    cube = make_cube()
    ds = cube.ogham.bfast_monitor("2009-06-01")
    assert dict(ds.sizes) == {"y": 6, "x": 5}
    np.testing.assert_array_equal(ds.y, cube.y)
    np.testing.assert_array_equal(ds.x, cube.x)
    assert ds.rio.crs == cube.rio.crs and ds.break_year.rio.crs == cube.rio.crs
    assert ds.attrs["long_name"] == "NDMI" and ds.attrs["history_length"] == 101
    assert ds.break_time.dtype == np.dtype("datetime64[ns]")
    # the same as the entry on the pixels, and the breaks where the clear-cut is
    years = fractional_years(cube.time.values)
    pixels = cube.ogham.pixels()
    direct = ogham.bundled("bfast").years(pixels, years, 101, 3, True, 0.25, 10, 0.05, np.nan)
    np.testing.assert_array_equal(ds.status.values.ravel(), direct[0])
    np.testing.assert_array_equal(ds.magnitude.values.ravel(), direct[2])
    # every pixel of the clear-cut breaks; elsewhere only the test's 5 % false alarms
    assert ds["break"].values[:3].all() and ds["break"].values[3:].sum() <= 2
    brk = ds.status.values
    found = brk >= 0
    np.testing.assert_array_equal(ds.break_time.values[found], cube.time.values[brk[found]])
    assert np.isnat(ds.break_time.values[~found]).all()
    assert (ds.break_time.values[:3] >= np.datetime64("2010-04-01")).all()


def test_any_dimension_order():
    cube = make_cube()
    a = cube.ogham.bfast_monitor("2009-06-01")
    b = cube.transpose("x", "time", "y").ogham.bfast_monitor("2009-06-01")
    assert b.status.dims == ("x", "y")
    np.testing.assert_array_equal(a.status.values, b.status.values.T)


def test_errors():
    cube = make_cube()
    with pytest.raises(ValueError, match="no `time` dimension.*rename"):
        cube.rename(time="t").ogham.bfast_monitor("2009-06-01")
    with pytest.raises(ValueError, match=r"split into 4 dask chunks.*chunk\(\{'time': -1\}\)"):
        cube.chunk({"time": 40}).ogham.bfast_monitor("2009-06-01")
    with pytest.raises(TypeError, match=r"the cube is float64.*astype\(np.float32\)"):
        cube.astype(np.float64).ogham.apply(ogham.load(USER).centre, 0.0)
    with pytest.raises(TypeError, match="needs the argument"):
        cube.ogham.apply(ogham.load(USER).centre)


def test_apply_user_entry_lazy_on_dask():
    cube = make_cube()
    mod = ogham.load(USER)
    eager = cube.ogham.apply(mod.centre, 1.0, names=["mean", "anomaly"])
    assert eager["mean"].dims == ("y", "x") and eager.anomaly.dims == ("time", "y", "x")
    np.testing.assert_array_equal(eager.anomaly.time, cube.time)
    lazy = cube.chunk({"y": 2, "x": 3}).ogham.apply(mod.centre, offset=1.0,
                                                    names=["mean", "anomaly"])
    assert lazy["mean"].chunks is not None  # nothing computed yet
    computed = lazy.compute(scheduler="threads")
    for name in ("mean", "anomaly"):
        assert computed[name].values.tobytes() == eager[name].values.tobytes()


def test_stl_and_twdtw_accessors():
    cube = make_cube(ny=3, nx=2, nt=92)
    filled = cube.fillna(0.5)
    ds = filled.ogham.stl(23, 7)
    assert ds.seasonal.dims == ("time", "y", "x") and ds.trend_magnitude.dims == ("y", "x")
    direct = ogham.stl(filled.ogham.pixels(), 23, 7)
    np.testing.assert_array_equal(ds.trend.transpose("y", "x", "time").values.reshape(6, 92),
                                  direct.trend)
    gappy = filled.where(xr.DataArray(np.arange(92) % 23 != 3, dims="time"))  # a phase unobserved
    gaps = gappy.ogham.stl(23, 7, fill_subseries=True)
    np.testing.assert_array_equal(
        gaps.trend.transpose("y", "x", "time").values.reshape(6, 92),
        ogham.stl(gappy.ogham.pixels(), 23, 7, fill_subseries=True).trend)
    assert np.isfinite(gaps.trend.values).all()
    doy = np.linspace(1, 360, 23)
    patterns = np.stack([0.5 + 0.2 * np.sin(2 * np.pi * doy / 366), np.full(23, 0.1)])
    res = filled.ogham.twdtw(patterns, np.tile(doy, (2, 1)))
    assert res.label.dims == ("y", "x") and res.distance.dims == ("y", "x", "pattern")
    assert (res.label.values[1:] == 0).all()  # the unbroken pixels follow the seasonal pattern


def test_geotiff_stack_in_and_break_map_out(tmp_path):
    cube = make_cube()
    transform = from_origin(600_000.0 - 15, 5_000_000.0 + 15, 30.0, 30.0)
    paths = []
    for i, layer in enumerate(cube.values):
        path = tmp_path / f"scene_{i:03d}.tif"
        with rasterio.open(path, "w", driver="GTiff", width=5, height=6, count=1,
                           dtype="float32", crs="EPSG:32633", transform=transform,
                           nodata=np.nan) as dst:
            dst.write(layer, 1)
        paths.append(path)
    stack = io.open_geotiff_stack(paths, cube.time.values)
    assert stack.dims == ("time", "y", "x") and stack.rio.crs.to_epsg() == 32633
    np.testing.assert_array_equal(stack.values, cube.values)
    ds = stack.ogham.bfast_monitor("2009-06-01")
    out = tmp_path / "breaks.tif"
    io.to_geotiff(ds.break_year, out)
    with rasterio.open(out) as src:
        assert src.crs.to_epsg() == 32633 and src.transform == transform
        np.testing.assert_array_equal(src.read(1), ds.break_year.values)
    with pytest.raises(TypeError, match="no datetime type"):
        io.to_geotiff(ds.break_time, tmp_path / "t.tif")


def test_bfast_monitor_on_dask_equals_in_memory():
    cube = make_cube()
    eager = cube.ogham.bfast_monitor("2009-06-01")
    lazy = cube.chunk({"y": 3, "x": 2}).ogham.bfast_monitor("2009-06-01")
    assert lazy.break_time.chunks is not None
    computed = lazy.compute(scheduler="threads")
    for name in eager.data_vars:
        assert computed[name].values.tobytes() == eager[name].values.tobytes(), name
