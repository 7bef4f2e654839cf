"""A campaign of bad arguments to the Python API (issue "Security and reliability").

Each call passes one of the bundled functions (`bfast_monitor`, `stl` with and without
`fill_subseries`, `twdtw`, `ptsel`, `mann_kendall`) or an entry point of a loaded program valid
arguments with one to three of them replaced by a drawn bad value: arrays of other dtypes (int, bool, complex, object, strings), ranks and layouts (strided,
Fortran order, broadcast views, empty), bool arrays holding bytes other than 0/1, scalars that are
huge, negative, NaN, infinite, of the wrong type or `None`, and unexpected keywords. A call passes
when it returns or raises one of the API's documented exceptions (`TypeError`, `ValueError`,
`OverflowError`, `MemoryError`, `ogham.OghamError`); anything else (another exception, a hang
past the per-call time limit) is a failure, and a crash ends the process, which the runner of this
script reports (`test_reliability.py` runs a short campaign in a child process).

    python/.venv/bin/python python/tests/argument_campaign.py --calls 2000 --seed 1

prints the counts (calls, returned, refused by exception type) and every failure with its seed,
and exits 1 if there was one. `--seed S --calls 1` reproduces call S.
"""

import argparse
import math
import random
import signal
import sys
import traceback

import numpy as np

import ogham

ACCEPTED = (TypeError, ValueError, OverflowError, MemoryError, ogham.OghamError)
TIME_LIMIT = 60

BAD_SCALARS = [None, True, False, -1, 0, 1, 2, 3, 7, 2**31, 2**62, 2**63 - 1, 2**63, -2**63,
               2**64, 10**30, 1.5, -0.0, math.nan, math.inf, -math.inf, 1e308, "3", b"3", 1j,
               np.int64(5), np.int8(-3), np.uint64(2**64 - 1), np.float32(2.5), np.float16(1),
               np.bool_(True), [], [3], (), object()]

ENTRY = """
entry scale [n] (xs: [n]f32) (k: i64) (c: f64) (flag: bool) : [n]f32 =
  map (\\x -> if flag then x * f32.f64 c else x + f32.i64 k) xs
entry bools [n] (bs: [n]bool) : bool = reduce (&&) true bs
"""


def bool_bytes(values):
    """A bool array holding the bytes `values` as they are (not normalised)."""
    return np.frombuffer(bytes(values), dtype=np.uint8).view(np.bool_)


def bad_array(rng, good):
    """A drawn variation of array `good`."""
    kind = rng.randrange(16)
    if kind == 0:
        with np.errstate(invalid="ignore"):
            return good.astype(np.int32)
    if kind == 1:
        return good.astype(bool)
    if kind == 2:
        return good.astype(np.complex128)
    if kind == 3:
        return good.astype(object)
    if kind == 4:
        return good.astype(str)
    if kind == 5:
        return good.reshape(-1)
    if kind == 6:
        return good[np.newaxis]
    if kind == 7:
        return good[..., ::2]
    if kind == 8:
        return np.asfortranarray(good)
    if kind == 9:
        return np.broadcast_to(good.reshape(-1)[:1], good.shape)
    if kind == 10:
        return good[:0]
    if kind == 11:
        return np.full_like(good, rng.choice([math.nan, math.inf, -math.inf, 1e38]))
    if kind == 12:
        return good.tolist()
    if kind == 13:
        return bool_bytes([rng.randrange(256) for _ in range(max(good.size, 1))])
    if kind == 14:
        return np.zeros((0,) * good.ndim, dtype=good.dtype)
    return rng.choice(BAD_SCALARS)


def bad_value(rng, good):
    if isinstance(good, np.ndarray):
        return bad_array(rng, good)
    return rng.choice(BAD_SCALARS)


def cases(rng):
    """The functions with valid arguments (positional, keyword)."""
    t = np.arange(48, dtype=np.float64)
    stack = (np.sin(2 * np.pi * t / 12) + 0.01 * t)[np.newaxis].repeat(4, axis=0)
    stack[1, 5] = np.nan
    patterns = rng.random((2, 10, 2))
    return [
        (ogham.bfast_monitor, [stack.astype(np.float32), 24],
         {"freq": 12.0, "order": 1, "h": 0.25, "end": 10, "level": 0.05}),
        (ogham.stl, [stack, 12, 7], {"robust": False}),
        (ogham.twdtw, [patterns, np.tile(np.linspace(1, 300, 10), (2, 1)),
                       rng.random((3, 12, 2)), np.linspace(1, 330, 12)],
         {"steepness": 0.1, "midpoint": 50.0, "cycle": 366.0, "fill": -1}),
        (ogham.ptsel, [rng.uniform(-3, 3, (5, 6, 6)), 2], {"mean": False}),
        (ogham.mann_kendall, [stack, t / 12], {"backend": "cpu"}),
        (ogham.stl, [stack, 12, 7], {"robust": False, "fill_subseries": True}),
    ]


def entry_cases(module):
    xs = np.arange(6, dtype=np.float32)
    return [(module.scale, [xs, 3, 2.0, True], {}),
            (module.bools, [np.array([True, False, True])], {})]


def one_call(seed, module):
    """Runs call `seed`; returns the outcome's name, or raises on a failure."""
    rng = random.Random(seed)
    np_rng = np.random.default_rng(seed)
    functions = cases(np_rng) + entry_cases(module)
    function, args, kwargs = functions[rng.randrange(len(functions))]
    args, kwargs = list(args), dict(kwargs)
    names = [("arg", i) for i in range(len(args))] + [("kw", k) for k in kwargs]
    for place in rng.sample(names, k=min(len(names), rng.randint(1, 3))):
        if place[0] == "arg":
            args[place[1]] = bad_value(rng, args[place[1]])
        else:
            kwargs[place[1]] = bad_value(rng, kwargs[place[1]])
    if rng.random() < 0.1:
        kwargs[rng.choice(["lam_", "Period", "s", "backend", "x"])] = rng.choice(BAD_SCALARS)
    if rng.random() < 0.05:
        args = args[:rng.randrange(len(args) + 1)]
    try:
        function(*args, **kwargs)
        return "returned"
    except ACCEPTED as e:
        return type(e).__name__


def on_alarm(signum, frame):
    raise TimeoutError(f"the call took more than {TIME_LIMIT} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args()
    signal.signal(signal.SIGALRM, on_alarm)
    np.seterr(all="ignore")  # the drawn casts of NaN and infinities to integers
    module = ogham.load(ENTRY)
    counts, failures = {}, []
    for seed in range(options.seed, options.seed + options.calls):
        signal.alarm(TIME_LIMIT)
        try:
            outcome = one_call(seed, module)
        except BaseException:  # noqa: BLE001 - every other outcome is a failure to report
            outcome = "failure"
            failures.append((seed, traceback.format_exc()))
        finally:
            signal.alarm(0)
        counts[outcome] = counts.get(outcome, 0) + 1
    print(f"{options.calls} calls from seed {options.seed}: "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for seed, trace in failures:
        print(f"--- failure at seed {seed}:\n{trace}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
