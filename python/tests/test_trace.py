"""`entry.trace(...)`: the traces of `trace "label" e` as (label, location, value), and one
pixel of an entry point (`pixel=`)."""

import numpy as np
import pytest

import ogham

# Loading these programs for the cpu backend warns W0730 (tested below on its own).
pytestmark = pytest.mark.filterwarnings(r"ignore:warning\[W0730\]:UserWarning")

SOURCE = """\
entry mean [m][n] (stack: [m][n]f32) (weights: [n]f32) : [m]f32 =
  map (\\px ->
         let total = trace "total" (reduce (+) 0f32 (map2 (*) px weights))
         in trace "mean" (total / f32.i64 n))
      stack
"""


@pytest.fixture(scope="module")
def mod():
    return ogham.load(SOURCE)


def test_trace_returns_the_result_and_every_traced_value(mod):
    stack = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float32)
    weights = np.ones(2, dtype=np.float32)
    result, traces = mod.mean.trace(stack, weights)
    np.testing.assert_array_equal(result, mod.mean(stack, weights))
    assert [t[0] for t in traces] == ["total", "mean"] * 3
    assert [float(t[2]) for t in traces if t[0] == "mean"] == [1.5, 3.5, 5.5]
    label, location, _ = traces[0]
    assert location.endswith(":3:22"), location


def test_a_pixel_runs_alone(mod):
    stack = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float32)
    result, traces = mod.mean.trace(stack, weights=np.ones(2, dtype=np.float32), pixel=2)
    np.testing.assert_array_equal(result, np.array([5.5], dtype=np.float32))
    assert [(t[0], float(t[2])) for t in traces] == [("total", 11.0), ("mean", 5.5)]


def test_a_bad_pixel_is_a_value_error(mod):
    stack = np.zeros((3, 2), dtype=np.float32)
    with pytest.raises(ValueError, match="out of range"):
        mod.mean.trace(stack, np.ones(2, dtype=np.float32), pixel=3)
    with pytest.raises(ValueError, match="no pixel axis"):
        mod.mean.trace(stack, np.ones(2, dtype=np.float32), pixel=(0, 0))


def test_an_error_carries_the_traces_before_it():
    failing = ogham.load("entry f (xs: []i64) : i64 = xs[trace \"i\" (length xs)]\n")
    with pytest.raises(ogham.OghamError) as caught:
        failing.f.trace([1, 2])
    assert caught.value.code == "R0702"
    assert [(t[0], t[2]) for t in caught.value.traces] == [("i", 2)]


def test_the_compiled_backend_warns():
    with pytest.warns(UserWarning, match="W0730"):
        ogham._ogham.compile_text("<warns>.og", SOURCE, "cpu", None)


def test_the_compiled_backend_computes_the_same_without_traces(mod):
    interp = ogham.load(SOURCE, backend="interp")
    stack = np.arange(8, dtype=np.float32).reshape(4, 2)
    weights = np.array([0.5, 2], dtype=np.float32)
    np.testing.assert_array_equal(mod.mean(stack, weights), interp.mean(stack, weights))
    result, traces = interp.mean.trace(stack, weights, pixel=1)
    assert len(traces) == 2 and result.shape == (1,)
