#!/usr/bin/env python3
"""Golden values for `lib/stats` (special functions, NaN-aware order statistics, sorting) and
`lib/trend` / `programs/trend.og` (Mann-Kendall, Theil-Sen) from SciPy, NumPy and pymannkendall,
in float64, on data generated here from fixed seeds (nothing in the library was tuned to it).

    python3 -m venv /tmp/oracle && /tmp/oracle/bin/pip install numpy==2.4.6 scipy==1.17.1 \\
        pymannkendall==1.4.3 mpmath==1.3.0         # the versions the committed values come from
    /tmp/oracle/bin/python tests/oracles/stats_trend_scipy.py

Writes (and prints the largest differences between the references it cross-checks):
  tests/cases/lib/stats_special.{in,out}   erf, erfc, the normal CDF and quantile: exact values
                                           (mpmath at 200 bits, rounded once), because SciPy's
                                           erfc and ndtr lose up to ~160 ulp in the tails (they
                                           round x² or x/√2 inside exp); SciPy's distance from
                                           them is printed. The Ogham case counts the elements
                                           off by more than its bound
  tests/cases/lib/stats_nan.{in,out}       np.nanmedian, np.nanquantile (method="linear") at 7
                                           levels, np.nanvar (ddof 0) and np.nanstd (ddof 1) of
                                           series with NaN, ties, an all-NaN and a 1-element row
  tests/cases/lib/stats_sort.{in,out}      np.argsort(kind="stable") / np.sort (NaN last) of f64
                                           series with ties, signed zeros, infinities and NaN,
                                           and of i64 series
  tests/cases/trend/{regular,irregular,f32}.{in,out}
                                           programs/trend.og's outputs: slope and intercept from
                                           scipy.stats.theilslopes (method="separate") on the
                                           valid observations, tau from scipy.stats.kendalltau
                                           (tau-b), s, var_s, z and p from
                                           pymannkendall.original_test (regular time: positions
                                           0..N-1, where its Sen slope and intercept must equal
                                           SciPy's) or from the formulas of docs/trend.md with
                                           SciPy's kendalltau (irregular time)
  tests/oracles/trend_golden.json          the same three cases for python/tests/test_trend.py
"""

import json
import math
import os

import mpmath
import numpy as np
import pymannkendall as mk
import scipy
import scipy.special as sp
import scipy.stats as st
from textvalues import fmt_value  # tests/oracles/textvalues.py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
LIB = os.path.join(ROOT, "tests", "cases", "lib")
TREND = os.path.join(ROOT, "tests", "cases", "trend")
assert (scipy.__version__, np.__version__, mpmath.__version__) == ("1.17.1", "2.4.6", "1.3.0"), \
    "the pinned versions (header)"


def write_case(directory, name, args, outs):
    os.makedirs(directory, exist_ok=True)
    for ext, values in (("in", args), ("out", outs)):
        with open(os.path.join(directory, f"{name}.{ext}"), "w") as fh:
            fh.write("\n".join(fmt_value(v, s) for v, s in values) + "\n")


def exact(f, xs):
    """`f` (an mpmath function) at each float of `xs` to 200 bits, rounded once to float64."""
    return np.array([float(f(mpmath.mpf(x))) for x in xs])


def ulps(got, want):
    """Largest |got - want| in units of the last place of `want` (finite, normal results)."""
    ok = np.isfinite(want) & (np.abs(want) >= np.finfo(float).tiny)
    return float(np.max(np.abs(got[ok] - want[ok]) / np.spacing(np.abs(want[ok]))))


def quantile_exact(p):
    if not 0 < p < 1:
        return float(sp.ndtri(p))                         # -inf, inf, NaN
    return float(mpmath.findroot(lambda x: mpmath.ncdf(x) - p, mpmath.mpf(float(sp.ndtri(p)))))


def special():
    mpmath.mp.prec = 200
    rng = np.random.default_rng(37001)
    xs = np.concatenate([
        np.linspace(-6, 6, 121), rng.uniform(-0.5, 0.5, 40), rng.uniform(-27, 27, 60),
        -np.geomspace(1e-300, 1, 20), [0.0, -0.0, 0.46875, -0.46875, 4.0, -4.0, 26.0, 26.5,
                                      -37.0, 38.5, 1e-20]])
    ps = np.concatenate([
        np.linspace(0, 1, 101), rng.uniform(0, 1, 60), np.geomspace(1e-300, 0.5, 40),
        1 - np.geomspace(1e-16, 0.5, 20), [0.075, 0.925, 0.5 - 0.425, 0.5 + 0.425,
                                           math.exp(-25)]])
    refs = [exact(mpmath.erf, xs), exact(mpmath.erfc, xs), exact(mpmath.ncdf, xs),
            np.array([quantile_exact(p) for p in ps])]
    for name, f, args, ref in zip(("erf", "erfc", "ndtr", "ndtri"),
                                  (sp.erf, sp.erfc, sp.ndtr, sp.ndtri), (xs, xs, xs, ps), refs):
        print(f"scipy.special.{name}: {ulps(f(args), ref):.1f} ulp from the exact values at most")
    # the non-finite arguments, whose results SciPy gives exactly
    odd = np.array([np.inf, -np.inf, np.nan])
    xs = np.concatenate([xs, odd])
    refs[:3] = [np.concatenate([r, f(odd)]) for r, f in zip(refs[:3], (sp.erf, sp.erfc, sp.ndtr))]
    ps = np.concatenate([ps, [-0.5, 1.5, np.nan]])
    refs[3] = np.concatenate([refs[3], [np.nan] * 3])
    write_case(LIB, "stats_special", [(xs, "f64"), (refs[0], "f64"), (refs[1], "f64"),
                                      (refs[2], "f64"), (ps, "f64"), (refs[3], "f64")],
               [(0, "i64")] * 5)


def nan_stats():
    rng = np.random.default_rng(37002)
    rows = []
    for n, missing in ((25, 0.2), (24, 0.5), (7, 0.0), (40, 0.9), (12, 0.3)):
        row = np.round(rng.normal(0, 3, n), 1)          # rounded: ties
        row[rng.uniform(size=n) < missing] = np.nan
        rows.append(np.pad(row, (0, 40 - n), constant_values=np.nan))
    rows.append(np.full(40, np.nan))
    one = np.full(40, np.nan)
    one[17] = 2.5
    rows.append(one)
    Y = np.array(rows)
    qs = np.array([0.0, 0.1, 0.25, 0.5, 0.7, 0.95, 1.0])
    with np.errstate(all="ignore"), __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("ignore")
        med = np.nanmedian(Y, axis=1)
        quant = np.nanquantile(Y, qs, axis=1).T          # [rows][q]
        var0 = np.nanvar(Y, axis=1, ddof=0)
        std1 = np.nanstd(Y, axis=1, ddof=1)
    write_case(LIB, "stats_nan", [(Y, "f64"), (qs, "f64")],
               [(med, "f64"), (quant, "f64"), (var0, "f64"), (std1, "f64")])


def sorting():
    rng = np.random.default_rng(37003)
    xs = np.concatenate([np.round(rng.normal(0, 2, 40)), [0.0, -0.0, np.inf, -np.inf, np.nan,
                                                          np.nan, -0.0, 0.0, 1e300]])
    rng.shuffle(xs)
    ks = rng.integers(-5, 5, 37)
    perm = np.argsort(xs, kind="stable")
    write_case(LIB, "stats_sort", [(xs, "f64"), (ks, "i64")],
               [(perm, "i64"), (xs[perm], "f64"), (np.argsort(ks, kind="stable"), "i64"),
                (np.sort(ks, kind="stable"), "i64")])


def trend_pixel(t, y, regular):
    """The reference results of one series (the program's outputs, in order)."""
    ok = ~np.isnan(y)
    tv, yv = t[ok], y[ok]
    n = int(ok.sum())
    if n < 2:
        return [math.nan] * 5 + [0, 0.0, n], None
    ts = st.theilslopes(yv, tv, method="separate")
    tau = st.kendalltau(tv, yv).statistic
    if regular:
        r = mk.original_test(y)
        assert abs(r.slope - ts.slope) <= 1e-12 * max(1, abs(ts.slope)), (r.slope, ts.slope)
        assert abs(r.intercept - ts.intercept) <= 1e-12 * max(1, abs(ts.intercept))
        s, var_s, z, p = float(r.s), float(r.var_s), float(r.z), float(r.p)
        extra = {"pmk_tau": float(r.Tau), "pmk_trend": r.trend}
    else:
        # docs/trend.md's formulas; S by NumPy, checked against SciPy's tau-b (no ties in time)
        _, counts = np.unique(yv, return_counts=True)
        var_s = (n * (n - 1) * (2 * n + 5) - np.sum(counts * (counts - 1) * (2 * counts + 5))) / 18
        n0 = n * (n - 1) / 2
        n2 = np.sum(counts * (counts - 1) / 2)
        s = int(np.sum(np.sign(yv[None, :] - yv[:, None])[np.triu_indices(n, 1)]))
        assert math.isnan(tau) or abs(tau * math.sqrt(n0 * (n0 - n2)) - s) < 1e-9, (tau, s)
        z = 0.0 if s == 0 else (s - math.copysign(1, s)) / math.sqrt(var_s)
        p = 2 * st.norm.sf(abs(z))
        extra = None
    return [ts.slope, ts.intercept, p, z, tau, int(s), var_s, n], extra


def trend_case(name, t, Y, regular, ft):
    outs = [trend_pixel(t, y, regular) for y in Y]
    cols = list(zip(*[o for o, _ in outs]))
    kinds = [ft] * 5 + ["i64", ft, "i64"]
    write_case(TREND, name, [(Y, ft), (t, "f64")], list(zip(cols, kinds)))
    names = ["slope", "intercept", "p", "z", "tau", "s", "var_s", "n"]
    case = {"t": t.tolist(), "Y": Y.tolist(), "dtype": "float32" if ft == "f32" else "float64"}
    case.update({k: list(map(float, c)) for k, c in zip(names, cols)})
    if regular:
        case["pmk_tau"] = [e["pmk_tau"] if e else math.nan for _, e in outs]
    return case


def series(rng, m, N, t, missing):
    Y = []
    for i in range(m):
        kind = i % 4
        y = (0.02 * (i - m / 2) * t + np.sin(2 * np.pi * t / 12) * (kind == 1)
             + rng.normal(0, 1 if kind != 2 else 0.05, N))
        if kind == 3:
            y = np.round(y)                                 # many ties
        y[rng.uniform(size=N) < missing * (i % 3)] = np.nan
        Y.append(y)
    Y[0][:] = 1.0                                           # constant: z = 0, p = 1, tau NaN
    Y[1][:] = np.nan                                        # no valid observation
    Y[2][3:] = np.nan                                       # 3 valid observations
    return np.array(Y)


def trend():
    rng = np.random.default_rng(37004)
    cases = {}
    t = np.arange(36, dtype=float)
    cases["regular"] = trend_case("regular", t, series(rng, 14, 36, t, 0.15), True, "f64")
    t = np.cumsum(rng.uniform(0.01, 0.2, 31)) + 2015.0       # fractional years
    cases["irregular"] = trend_case("irregular", t, series(rng, 12, 31, t, 0.2), False, "f64")
    t = np.arange(24, dtype=float)
    Y = series(rng, 10, 24, t, 0.1).astype(np.float32).astype(np.float64)
    cases["f32"] = trend_case("f32", t, Y, True, "f32")
    with open(os.path.join(HERE, "trend_golden.json"), "w") as fh:
        json.dump(cases, fh, indent=0)
        fh.write("\n")


if __name__ == "__main__":
    special()
    nan_stats()
    sorting()
    trend()
    print("written: tests/cases/lib/stats_{special,nan,sort}.*, tests/cases/trend/*, "
          "tests/oracles/trend_golden.json")
