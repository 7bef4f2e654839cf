"""Named results: tuples and records (and arrays of them) from entry points reach Python as
`Results` named by field in declared order (or `result0`, ...), `cube.ogham.apply` makes each
part a map or a cube of a Dataset (lazily on dask), one plain result is a DataArray, and an
unknown keyword is named with the closest parameter."""

import pickle
import subprocess

import numpy as np
import pytest
import xarray as xr

import ogham
from test_xarray import make_cube

# A method in the tutorial's style with three outputs per pixel, declared in an order that is not
# alphabetical (the type sorts record fields; Python must not).
METHOD = """
type summary = {valid: i64, mean: f32, amplitude: f32}

-- | Per pixel: the number of valid values, their mean and their range.
entry summarise [m][N] (images: [m][N]f32) (lambda: f32) : [m]summary =
  map (\\r ->
    let ok = map (\\x -> !(isnan x)) r
    let n = reduce (+) 0i64 (map (\\b -> if b then 1i64 else 0i64) ok)
    let s = reduce (+) 0f32 (map2 (\\x b -> if b then x else 0f32) r ok)
    let lo = reduce f32.min f32.inf (map2 (\\x b -> if b then x else f32.inf) r ok)
    let hi = reduce f32.max (-f32.inf) (map2 (\\x b -> if b then x else -f32.inf) r ok)
    in {valid = n, mean = lambda * s / f32.i64 n, amplitude = hi - lo}) images

entry as_tuples [m][N] (images: [m][N]f32) : [m](f32, i64, [N]f32) =
  map (\\r -> (r[0], length r, map (* 2f32) r)) images

entry record_and_map [m][N] (images: [m][N]f32) : ([m]f32, [m]{b: f32, a: f32}) =
  (map (\\r -> r[1]) images, map (\\r -> {b = r[0], a = r[1]}) images)

entry scalars (x: f32) : {zeta: f32, alpha: i64} = {zeta = x, alpha = 2}

entry first [m][N] (images: [m][N]f32) : [m]f32 = map (\\r -> r[0]) images
"""


@pytest.fixture(scope="module")
def mod():
    return ogham.load(METHOD)


def expected_summary(pixels):
    ok = ~np.isnan(pixels)
    n = ok.sum(axis=1)
    return n, np.nansum(pixels, axis=1) / n, np.nanmax(pixels, axis=1) - np.nanmin(pixels, axis=1)


def test_record_fields_in_declared_order(mod):
    assert [name for name, _ in mod.summarise.outputs] == ["valid", "mean", "amplitude"]
    assert [p.type for _, p in mod.summarise.outputs] == ["[m]i64", "[m]f32", "[m]f32"]
    pixels = make_cube(ny=3, nx=4, nt=40).ogham.pixels()
    out = mod.summarise(pixels, 1.0)
    assert isinstance(out, ogham.Results) and isinstance(out, tuple)
    assert out._fields == ("valid", "mean", "amplitude")
    n, mean, amplitude = expected_summary(pixels)
    np.testing.assert_array_equal(out.valid, n)
    assert out.valid.dtype == np.int64
    np.testing.assert_allclose(out.mean, mean, rtol=1e-5)
    np.testing.assert_allclose(out[2], amplitude, rtol=1e-6)
    assert list(out._asdict()) == ["valid", "mean", "amplitude"]
    # a Results pickles (dask ships it between processes) with its names
    back = pickle.loads(pickle.dumps(out))
    assert back._fields == out._fields and back.mean.tobytes() == out.mean.tobytes()


def test_tuples_scalar_records_and_several_results(mod):
    pixels = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = mod.as_tuples(pixels)
    assert out._fields == ("result0", "result1", "result2")
    np.testing.assert_array_equal(out.result0, [0, 4, 8])
    np.testing.assert_array_equal(out.result1, [4, 4, 4])
    np.testing.assert_array_equal(out.result2, pixels * 2)
    record = mod.scalars(1.5)
    assert record._fields == ("zeta", "alpha") and record == (1.5, 2)
    several = mod.record_and_map(pixels)
    assert several._fields == ("result0", "result1")
    assert several.result1._fields == ("b", "a")
    np.testing.assert_array_equal(several.result1.b, pixels[:, 0])
    assert [n for n, _ in mod.record_and_map.outputs] == ["result0", "result1_b", "result1_a"]
    with pytest.raises(AttributeError, match="no 'median'.*valid, mean, amplitude"):
        mod.summarise(pixels, 1.0).median


def test_apply_gives_a_dataset_of_named_maps_lazily_on_dask(mod):
    cube = make_cube(ny=6, nx=5, nt=64)
    eager = cube.ogham.apply(mod.summarise, 0.5)
    assert isinstance(eager, xr.Dataset)
    assert list(eager.data_vars) == ["valid", "mean", "amplitude"]
    assert eager.valid.dims == ("y", "x") and eager.valid.dtype == np.int64
    assert eager.rio.crs == cube.rio.crs and eager.attrs["long_name"] == "NDMI"
    n, mean, amplitude = expected_summary(cube.ogham.pixels())
    np.testing.assert_array_equal(eager.valid.values.ravel(), n)
    np.testing.assert_allclose(eager["mean"].values.ravel(), 0.5 * mean, rtol=1e-5)
    lazy = cube.chunk({"y": 2, "x": 3}).ogham.apply(mod.summarise, lambda_=0.5)
    assert list(lazy.data_vars) == ["valid", "mean", "amplitude"]
    assert lazy["mean"].chunks is not None  # nothing computed yet
    computed = lazy.compute(scheduler="threads")
    for name in eager.data_vars:
        assert computed[name].values.tobytes() == eager[name].values.tobytes(), name


def test_apply_parts_of_arrays_and_names(mod):
    cube = make_cube(ny=2, nx=3, nt=20)
    ds = cube.ogham.apply(mod.as_tuples, names=["start", "length", "doubled"])
    assert list(ds.data_vars) == ["start", "length", "doubled"]
    assert ds.start.dims == ("y", "x") and ds.doubled.dims == ("time", "y", "x")
    np.testing.assert_array_equal(ds.doubled.values, cube.values * 2)
    ds = cube.chunk({"y": 1}).ogham.apply(mod.record_and_map).compute()
    assert list(ds.data_vars) == ["result0", "result1_b", "result1_a"]
    np.testing.assert_array_equal(ds.result1_a.values, ds.result0.values)
    with pytest.raises(ValueError, match=r"2 names for the 3 results of as_tuples"):
        cube.ogham.apply(mod.as_tuples, names=["a", "b"])


def test_one_result_is_a_data_array(mod):
    cube = make_cube(ny=2, nx=3, nt=20)
    out = cube.ogham.apply(mod.first)
    assert isinstance(out, xr.DataArray) and out.dims == ("y", "x")
    assert out.name == cube.name and out.attrs["long_name"] == "NDMI"
    np.testing.assert_array_equal(out.values, cube.isel(time=0).values)
    lazy = cube.chunk({"x": 1}).ogham.apply(mod.first, names=["first_value"])
    assert isinstance(lazy, xr.DataArray) and lazy.name == "first_value"
    assert lazy.compute().values.tobytes() == out.values.tobytes()


def test_unknown_keywords_are_named_with_the_closest_parameter(mod):
    pixels = make_cube(ny=2, nx=2, nt=20).ogham.pixels()
    with pytest.raises(TypeError, match=r"summarise\(\) got an unexpected keyword argument "
                                        r"'lam' \(did you mean 'lambda_'\?\)"):
        mod.summarise(pixels, lam=0.3)
    with pytest.raises(TypeError, match=r"got an unexpected keyword argument 'lam' \(did you mean "
                                        r"'lambda_'\?\)"):
        make_cube(ny=2, nx=2, nt=20).ogham.apply(mod.summarise, lam=0.3)
    with pytest.raises(TypeError, match=r"bfast_monitor\(\) got an unexpected keyword argument "
                                        r"'levle' \(did you mean 'level'\?\)"):
        ogham.bfast_monitor(pixels, 10, freq=23, levle=0.05)
    with pytest.raises(TypeError, match=r"stl\(\) got an unexpected keyword argument 'robustt' "
                                        r"\(did you mean 'robust'\?\)"):
        ogham.stl(pixels, 4, 7, robustt=True)
    with pytest.raises(TypeError, match=r"ptsel\(\) got an unexpected keyword argument 'zzz' "
                                        r"\(its parameters: phi, s, mean, backend\)"):
        ogham.ptsel(np.zeros((2, 3, 3)), zzz=1)
    with pytest.raises(TypeError, match=r"bfast_monitor\(\) got an unexpected keyword argument "
                                        r"'history' \(did you mean 'history_end'\?\)"):
        make_cube().ogham.bfast_monitor(history="2009-01-01")
    with pytest.raises(TypeError, match=r"mann_kendall\(\) got an unexpected keyword argument "
                                        r"'times' \(did you mean 'time'\?\)"):
        ogham.mann_kendall(pixels, times=np.arange(20.0))
    with pytest.raises(TypeError, match=r"mann_kendall\(\) got an unexpected keyword argument "
                                        r"'backnd' \(did you mean 'backend'\?\)"):
        make_cube().ogham.mann_kendall(backnd="cpu")


def test_cli_files_are_named_as_python_names_the_outputs(mod, cli, tmp_path):
    """`ogham run -o DIR` writes the parts of record results as `NAME.npy`, with the names and
    in the order of `Entry.outputs` (results without a record as `out0.npy`, ... in that order),
    and the same values as the call."""
    program = tmp_path / "method.og"
    program.write_text(METHOD)
    pixels = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.save(tmp_path / "pixels.npy", pixels)
    for entry, args, named in [("summarise", [1.5], True), ("record_and_map", [], True),
                               ("as_tuples", [], False), ("first", [], False)]:
        out = tmp_path / entry
        run = subprocess.run([cli, "run", "--entry", entry, "-o", out, program,
                              tmp_path / "pixels.npy"] + [f"{a}f32" for a in args],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        e = getattr(mod, entry)
        names = [name for name, _ in e.outputs]
        files = [f"{n}.npy" if named else f"out{i}.npy" for i, n in enumerate(names)]
        assert sorted(p.name for p in out.iterdir()) == sorted(files)
        said = [line.split(": ")[1].split(" ")[0] for line in run.stderr.splitlines()
                if line.startswith("wrote ")]
        assert said == names, run.stderr
        for file, value in zip(files, e.flatten(e(pixels, *args))):
            np.testing.assert_array_equal(np.load(out / file), value)
