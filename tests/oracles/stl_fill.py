#!/usr/bin/env python3
"""The oracle of STL with unobserved cycle-subseries filled (`fill_f64` of programs/stl.og,
docs/stl.md "Unobserved cycle-subseries"), in float64.

The filling rule is written here again, independently of lib/stl.og: a position whose
cycle-subseries (phase `i % n_p`) has no observation gets the value at it of the straight line
through the nearest observed values before (a) and after (b) it, `y[a] + (i - a)/(b - a) ·
(y[b] - y[a])`; before the first or after the last observation, the nearest one. The filled
series is then decomposed by

  * statsmodels' STL (the exact oracle where it applies: no other missing value, degrees 0/1,
    jumps 1, q_l > n_p; `statsmodels` case), and
  * the project's NumPy reference `stl_reference.stl` (statsmodels equals it to 2e-12 on
    complete series, `stl_statsmodels.py reference`), for filled series that also have
    scattered missing values, which statsmodels does not take (`missing` case).

R and W are NaN where the input is missing (filled or not). The cases are written as corpus
files next to tests/cases/stl/fill.og, which compares `fill_f64` with them at 1e-9 relative:

    pip install statsmodels numpy          # checked with statsmodels 0.15.0
    python3 tests/oracles/stl_fill.py      # writes tests/cases/stl/fill_*.in / .out
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import stl_reference as ref  # noqa: E402
from stl_statsmodels import statsmodels_stl  # noqa: E402


def fill(y, n_p):
    """`y` with its unobserved cycle-subseries filled (the rule of the module docstring)."""
    y = np.asarray(y, dtype=float)
    obs = ~np.isnan(y)
    seen = np.zeros(n_p, dtype=bool)
    for i in np.nonzero(obs)[0]:
        seen[i % n_p] = True
    out = y.copy()
    where = np.nonzero(obs)[0]
    if len(where) == 0:
        return out
    for i in range(len(y)):
        if seen[i % n_p]:
            continue
        before = where[where < i]
        after = where[where > i]
        if len(before) == 0:
            out[i] = y[after[0]]
        elif len(after) == 0:
            out[i] = y[before[-1]]
        else:
            a, b = before[-1], after[0]
            out[i] = y[a] + (i - a) / (b - a) * (y[b] - y[a])
    return out


def outputs(Y, decompose):
    """S, T, R, W (R and W NaN where Y is missing), trend magnitude, seasonal amplitude of the
    filled series of `Y`, decomposed by `decompose(filled series) -> (S, T, W)`."""
    S, T, W = (np.array(a) for a in zip(*(decompose(fill(y, P["n_p"])) for y in Y)))
    missing = np.isnan(Y)
    R = np.where(missing, np.nan, Y - S - T)
    W = np.where(missing, np.nan, W)
    return S, T, R, W, ref.trend_slope(T), S.max(axis=1) - S.min(axis=1)


# Period 12, 8 cycles; statsmodels' exact settings (jumps 1, degree 1, q_l > n_p); robust.
P = dict(n_p=12, q_s=7, d_s=1, j_s=1, q_t=23, d_t=1, j_t=1, q_l=13, d_l=1, j_l=1, n_inner=1,
         n_outer=3, hermite=True)


def write(name, Y, outs):
    os.makedirs(ref.CASES, exist_ok=True)
    with open(os.path.join(ref.CASES, name + ".in"), "w") as f:
        f.write(ref.fmt_array(Y, "f64") + "\n")
        for k in ref.PARAM_ORDER:
            v = P[k]
            f.write((ref.fmt(bool(v)) if k == "hermite" else ref.fmt(int(v))) + "\n")
    with open(os.path.join(ref.CASES, name + ".out"), "w") as f:
        for a in outs:
            f.write(ref.fmt_array(a, "f64") + "\n")
    print(f"wrote {name}: {Y.shape}")


def main():
    n_p = P["n_p"]
    # Complete series but for whole phases: one inside the cycle, the first (the series starts
    # with no observation before it), the last and the first together (neighbours across the
    # cycle boundary), and three in a row.
    Y = ref.synthetic(31, 4, 8 * n_p, n_p)
    Y[0, 5::n_p] = np.nan
    Y[1, 0::n_p] = np.nan
    Y[2, 11::n_p] = np.nan
    Y[2, 0::n_p] = np.nan
    for phase in (3, 4, 5):
        Y[3, phase::n_p] = np.nan
    sm = outputs(Y, lambda y: statsmodels_stl(y, P))
    # The reference on the same filled series agrees with statsmodels (the check that it may
    # stand in for it below).
    rf = outputs(Y, lambda y: (lambda S, T, _R, W: (S, T, W))(*ref.stl(y, P)))
    worst = max(np.nanmax(np.abs(a - b)) for a, b in zip(sm[:4], rf[:4]))
    print(f"statsmodels vs the reference on the filled series: max |diff| {worst:.1e}")
    assert worst < 1e-9
    write("fill_statsmodels", Y, sm)
    # Scattered missing values too (20 %), so that the filled positions interpolate between
    # observations further away; a series with no observation stays NaN.
    Y = ref.synthetic(32, 4, 8 * n_p, n_p, missing=0.2)
    Y[0, 7::n_p] = np.nan
    Y[1, 0::n_p] = np.nan
    Y[1, 1::n_p] = np.nan
    Y[2, 11::n_p] = np.nan
    Y[3, :] = np.nan
    write("fill_missing", Y, outputs(Y, lambda y: (lambda S, T, _R, W: (S, T, W))(
        *ref.stl(y, P))))


if __name__ == "__main__":
    main()
