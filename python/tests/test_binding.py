"""Entry binding: every element type and rank, signatures, docstrings, zero-copy results."""

import inspect

import numpy as np
import pytest

import ogham

TYPES = ["bool", "i8", "i16", "i32", "i64", "u8", "f32", "f64"]
NUMPY = {"bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
         "u8": np.uint8, "f32": np.float32, "f64": np.float64}


def program():
    lines = []
    for t in TYPES:
        # identity on scalars; on arrays of rank 1..3 a function of every element, so that the
        # data really travels through the kernels
        op = "!x" if t == "bool" else f"x + ({t}.i64 1)"
        lines += [
            f"entry s_{t} (x: {t}) : {t} = x",
            f"entry a1_{t} [n] (xs: [n]{t}) : [n]{t} = map (\\x -> {op}) xs",
            f"entry a2_{t} [n][m] (xs: [n][m]{t}) : [n][m]{t} = map (map (\\x -> {op})) xs",
            f"entry a3_{t} [n][m][k] (xs: [n][m][k]{t}) : [n][m][k]{t} ="
            f" map (map (map (\\x -> {op}))) xs",
        ]
    lines += [
        "-- | Sum and count of the valid values of each row.",
        "-- `xs` rows of observations.",
        "entry stats [m][n] (xs: [m][n]f32) (scale: f64) : ([m]f32, [m]i64) =",
        "  (map (\\r -> f32.f64 scale * reduce (+) 0f32 (map (\\x -> if isnan x then 0f32 else x) r)) xs,",
        "   map (\\r -> reduce (+) 0i64 (map (\\x -> if isnan x then 0i64 else 1i64) r)) xs)",
        "entry pair (p: (i64, f64)) : f64 = f64.i64 p.0 + p.1",
    ]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def mod():
    return ogham.load(program())


def expected(t, x):
    if t == "bool":
        return ~x
    return (x + NUMPY[t](1)).astype(NUMPY[t])


@pytest.mark.parametrize("t", TYPES)
def test_every_type_and_rank(mod, t):
    rng = np.random.default_rng(1)
    dt = NUMPY[t]
    for rank in (1, 2, 3):
        shape = (3, 4, 2)[:rank]
        if t == "bool":
            x = rng.random(shape) < 0.5
        elif t.startswith("f"):
            x = rng.standard_normal(shape).astype(dt)
        else:
            x = rng.integers(0, 100, shape).astype(dt)
        out = getattr(mod, f"a{rank}_{t}")(x)
        assert out.dtype == dt and out.shape == shape
        np.testing.assert_array_equal(out, expected(t, x))
    scalar = {"bool": True, "f32": 1.5, "f64": -2.25}.get(t, 7)
    assert getattr(mod, f"s_{t}")(scalar) == scalar


def test_signature_and_doc(mod):
    sig = inspect.signature(mod.stats)
    assert list(sig.parameters) == ["xs", "scale"]
    assert sig.parameters["xs"].annotation == "[m][n]f32"
    assert sig.return_annotation == "([m]f32, [m]i64)"
    assert "Sum and count of the valid values" in mod.stats.__doc__
    assert mod.stats.__doc__.startswith("stats(xs: '[m][n]f32', scale: 'f64')")
    assert [p.name for p in mod.stats.params] == ["xs", "scale"]
    assert mod.stats.params[0].dims == ["m", "n"] and mod.stats.params[0].dtype == "float32"


def test_tuple_results_keywords_and_tuple_params(mod):
    xs = np.array([[1, np.nan, 2], [np.nan, np.nan, 4]], dtype=np.float32)
    total, count = mod.stats(scale=2.0, xs=xs)
    np.testing.assert_array_equal(total, np.array([6, 8], dtype=np.float32))
    np.testing.assert_array_equal(count, [2, 1])
    assert mod.pair((2, 0.5)) == 2.5


def test_results_are_not_copied(mod):
    out = mod.a2_f64(np.zeros((100, 50)))
    # the array's memory is the runtime's buffer, owned by a Rust container object
    assert not out.flags.owndata
    base = out.base
    while isinstance(base, np.ndarray):
        base = base.base
    assert base is not None and type(base).__name__ == "PySliceContainer"


def test_non_contiguous_inputs(mod):
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    for view in (x[:, ::2], x.T, np.asfortranarray(x)):
        np.testing.assert_array_equal(mod.a2_f32(view), view + 1)
    np.testing.assert_array_equal(mod.a1_i64([1, 2, 3]), [2, 3, 4])  # lists: numpy.asarray


PEAK_MEMORY_OF_A_CALL = r"""
import resource, sys
import numpy as np
import ogham
mod = ogham.load("entry total [n][m] (xs: [n][m]f32) : f32 ="
                 " reduce (+) 0f32 (map (\\r -> reduce (+) 0f32 r) xs)")
mod.total(np.ones((4, 4), dtype=np.float32))  # compiled before measuring
x = np.ones((8192, 8192), dtype=np.float32, order=sys.argv[1])  # 256 MiB
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
assert mod.total(x) == x.size
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


def test_contiguous_inputs_are_not_copied():
    """A C-contiguous argument is read in place: the peak memory of a call on a 256 MiB array
    grows by far less than the array, while a Fortran-order one (copied into row-major order)
    grows by the array (the control: the measurement sees a copy). A fresh process each, so
    that no earlier peak hides the growth."""
    import subprocess
    import sys

    def grown_kib(order):
        run = subprocess.run([sys.executable, "-c", PEAK_MEMORY_OF_A_CALL, order],
                             capture_output=True, text=True, check=True)
        return int(run.stdout.split()[-1])

    assert grown_kib("C") < 64 << 10
    assert grown_kib("F") > 200 << 10
    # a result never aliases an argument: returning an argument copies it
    mod = ogham.load("entry same [n] (xs: [n]f32) : [n]f32 = xs\n")
    small = np.arange(5, dtype=np.float32)
    out = mod.same(small)
    assert not np.shares_memory(out, small)
    np.testing.assert_array_equal(out, small)


def test_an_argument_the_program_consumes_is_not_modified():
    """A unique (`*`) parameter updated in place writes to the program's own copy."""
    mod = ogham.load("entry bump [n] (xs: *[n]i64) : [n]i64 = xs with [0] = 99\n")
    x = np.arange(4, dtype=np.int64)
    np.testing.assert_array_equal(mod.bump(x), [99, 1, 2, 3])
    np.testing.assert_array_equal(x, [0, 1, 2, 3])


def test_same_program_loaded_once(mod):
    before = ogham.load_count()
    assert ogham.load(program()) is mod
    assert ogham.load_count() == before


def test_pickle_round_trip(mod):
    import pickle

    assert pickle.loads(pickle.dumps(mod)) is mod
    assert pickle.loads(pickle.dumps(mod.stats)).__name__ == "stats"


def test_gil_released_while_running():
    """A Python thread keeps counting while an entry runs in another one."""
    import threading
    import time

    mod = ogham.load("entry spin (n: i64) : f64 =\n"
                     "  reduce (+) 0f64 (map (\\i -> f64.sqrt (f64.i64 i)) (iota n))\n")
    mod.spin(10)
    count = 0
    stop = threading.Event()

    def counter():
        nonlocal count
        while not stop.is_set():
            count += 1

    thread = threading.Thread(target=counter)
    thread.start()
    time.sleep(0.05)
    start_count, t0 = count, time.perf_counter()
    mod.spin(100_000_000)
    during, elapsed = count - start_count, time.perf_counter() - t0
    stop.set()
    thread.join()
    assert elapsed > 0.1, "the call was too short to tell"
    # with the GIL held for the whole call the counter could not advance at all
    assert during > 10_000, f"{during} increments in {elapsed:.2f} s"


def test_unaligned_arrays(mod):
    """Arrays at odd addresses (as pickle protocol 5 gives them to dask workers) are copied."""
    raw = np.zeros(8 * 10 + 1, dtype=np.uint8)
    x = raw[1:].view(np.float64)
    x[:] = np.arange(10)
    assert not x.flags.aligned
    np.testing.assert_array_equal(mod.a1_f64(x), np.arange(10) + 1)
