"""Every class of bad argument gives a Python exception naming the parameter; run-time and
compile errors are `ogham.OghamError` with the source location. Nothing crashes."""

import numpy as np
import pytest

import ogham

SOURCE = """
entry mean [m][n] (xs: [m][n]f32) (years: [n]f64) (k: i64) (on: bool) (s: f32) : [m]f32 =
  map (\\r -> reduce (+) 0f32 r / f32.i64 n) xs
entry at [n] (xs: [n]f32) (i: i64) : f32 = xs[i]
entry small (x: i8) : i8 = x
entry checked (n: i64) : i64 = assert (n > 0) "n must be positive" n
entry fixed (xs: [3]f64) : f64 = xs[0]
"""


@pytest.fixture(scope="module")
def mod():
    return ogham.load(SOURCE)


XS = np.zeros((2, 5), dtype=np.float32)
YEARS = np.zeros(5)


def call(mod, **changes):
    args = dict(xs=XS, years=YEARS, k=3, on=True, s=1.0) | changes
    return mod.mean(**args)


def test_ok(mod):
    np.testing.assert_array_equal(call(mod), [0, 0])


def test_wrong_dtype_names_parameter_and_fix(mod):
    with pytest.raises(TypeError) as e:
        call(mod, xs=XS.astype(np.float64))
    msg = str(e.value)
    assert "parameter `xs`" in msg and "[m][n]f32" in msg and "float64" in msg
    assert "xs.astype(np.float32)" in msg


def test_wrong_rank(mod):
    with pytest.raises(ValueError, match=r"parameter `xs`.*\(5,\).*xs\[np.newaxis\]"):
        call(mod, xs=XS[0])


def test_size_mismatch_names_both(mod):
    with pytest.raises(ValueError, match=r"parameter `years`.*n = 5 .*dimension 1 of `xs`.*\(4,\)"):
        call(mod, years=np.zeros(4))


def test_constant_size(mod):
    with pytest.raises(ValueError, match=r"parameter `xs`.*must be 3"):
        mod.fixed(np.zeros(4))


def test_argument_count(mod):
    with pytest.raises(TypeError, match=r"mean\(\) takes 5 arguments \(xs: \[m\]\[n\]f32, "
                                        r"years: \[n\]f64, k: i64, on: bool, s: f32\), given 2"):
        mod.mean(XS, YEARS)
    with pytest.raises(TypeError, match="missing a required argument: 'k'"):
        mod.mean(XS, YEARS, on=True, s=1.0)


@pytest.mark.parametrize("name,value,exc,pattern", [
    ("k", 2.5, TypeError, r"parameter `k`: expects i64, given a `float` \(2.5\): pass an int"),
    ("k", True, TypeError, r"parameter `k`: expects i64, given a `bool`"),
    ("on", 1, TypeError, r"parameter `on`: expects bool.*pass True or False"),
    ("s", "x", TypeError, r"parameter `s`: expects f32, given a `str`"),
    ("xs", "x", TypeError, r"parameter `xs`: expects \[m\]\[n\]f32, given a `str`: pass a NumPy"),
    ("years", [1, "a", 3, 4, 5], TypeError, r"parameter `years`.*cannot be converted"),
])
def test_bad_scalars_and_objects(mod, name, value, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call(mod, **{name: value})


def test_numpy_scalars_accepted(mod):
    call(mod, k=np.int32(3), on=np.bool_(True), s=np.float64(2))


def test_out_of_range(mod):
    with pytest.raises(ValueError, match=r"parameter `x`: 300 is out of the range of i8"):
        mod.small(300)


def test_runtime_errors_have_code_and_location(mod):
    with pytest.raises(ogham.OghamError) as e:
        mod.at(np.zeros(3, dtype=np.float32), 7)
    assert e.value.code == "R0702"
    assert "out of bounds" in str(e.value) and ".og:4:44" in str(e.value)
    with pytest.raises(ogham.OghamError) as e:
        mod.checked(-1)
    assert e.value.code == "R0710" and "n must be positive" in str(e.value)


def test_compile_errors():
    with pytest.raises(ogham.OghamError) as e:
        ogham.load("entry main (x: f32) : f32 = x + 1i64\n")
    assert e.value.code == "E0301" and "mismatched types" in str(e.value)


def test_bad_load_arguments(tmp_path):
    with pytest.raises(ValueError, match='backend "gpu" does not exist: use one of'):
        ogham.load("entry main (x: f32) : f32 = x\n", backend="gpu")
    with pytest.raises(FileNotFoundError):
        ogham.load(str(tmp_path / "missing.og"))
    with pytest.raises(TypeError, match="expects a path"):
        ogham.load(42)
    with pytest.raises(ValueError, match="no entry point `nope`"):
        ogham.load(SOURCE)["mean"].module._program.call("nope", ())


def test_errors_pickle_with_their_code(mod):
    """Errors raised on dask workers reach the client pickled."""
    import pickle

    with pytest.raises(ogham.OghamError) as e:
        mod.checked(-1)
    again = pickle.loads(pickle.dumps(e.value))
    assert type(again) is ogham.OghamError and again.code == "R0710"
    assert str(again) == str(e.value)
