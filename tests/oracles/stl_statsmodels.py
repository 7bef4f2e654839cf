#!/usr/bin/env python3
"""Checks the project's STL against statsmodels (shared/specs/stl.md §8.1, §8.2), where
statsmodels is an exact oracle: no missing values, degrees 0/1, q_t and q_l > n_p, jumps 1 or
linear interpolation with J <= (q+1)/2.

    pip install statsmodels numpy          # checked with statsmodels 0.15.0
    python3 tests/oracles/stl_statsmodels.py reference   # the NumPy reference vs statsmodels
                                                         # and the Fortran fixtures
    python3 tests/oracles/stl_statsmodels.py program     # the Ogham program (target/release/
                                                         # ogham, --backend cpu) vs statsmodels
    python3 tests/oracles/stl_statsmodels.py speed       # series/s: statsmodels vs the program
"""

import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from statsmodels.tsa.seasonal import STL

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, HERE)
import stl_reference as ref  # noqa: E402


def statsmodels_stl(y, p):
    r = STL(y, period=p["n_p"], seasonal=p["q_s"], trend=p["q_t"], low_pass=p["q_l"],
            seasonal_deg=p["d_s"], trend_deg=p["d_t"], low_pass_deg=p["d_l"],
            seasonal_jump=p["j_s"], trend_jump=p["j_t"], low_pass_jump=p["j_l"]).fit(
        inner_iter=p["n_inner"], outer_iter=p["n_outer"] - 1)
    return r.seasonal, r.trend, r.weights


SETTINGS = [
    ("jumps 1", dict(n_p=23, q_s=7, d_s=1, j_s=1, q_t=45, d_t=1, j_t=1, q_l=25, d_l=1, j_l=1,
                     n_inner=2, n_outer=1, hermite=True)),
    ("jumps 1, robust", dict(n_p=23, q_s=7, d_s=1, j_s=1, q_t=45, d_t=1, j_t=1, q_l=25, d_l=1,
                             j_l=1, n_inner=1, n_outer=6, hermite=True)),
    ("degree 0, jumps 1", dict(n_p=12, q_s=11, d_s=0, j_s=1, q_t=23, d_t=0, j_t=1, q_l=13,
                               d_l=0, j_l=1, n_inner=2, n_outer=1, hermite=True)),
    ("linear jumps 2/5/3", dict(n_p=23, q_s=7, d_s=1, j_s=2, q_t=45, d_t=1, j_t=5, q_l=25,
                                d_l=1, j_l=3, n_inner=2, n_outer=1, hermite=False)),
]


def reference():
    Y = ref.synthetic(21, 20, 828, 23)
    Y12 = ref.synthetic(22, 20, 240, 12)
    for name, p in SETTINGS:
        data = Y12 if p["n_p"] == 12 else Y
        worst = 0.0
        for y in data:
            S, T, _, W = ref.stl(y, p)
            s2, t2, w2 = statsmodels_stl(y, p)
            worst = max(worst, np.max(np.abs(S - s2)), np.max(np.abs(T - t2)),
                        np.max(np.abs(W - w2)))
        print(f"reference vs statsmodels, {name:22s}: max |diff| {worst:.1e}")
        assert worst < 1e-9, name
    fixtures()


def fixtures():
    import statsmodels
    d = os.path.join(os.path.dirname(statsmodels.__file__), "tsa", "stl", "tests", "results")
    co2 = np.loadtxt(os.path.join(d, "stl_co2.csv"))
    rows = {}
    with open(os.path.join(d, "stl_test_results.csv")) as f:
        header = [h.strip() for h in f.readline().split(",")]
        for line in f:
            parts = [x.strip() for x in line.split(",")]
            rows.setdefault(parts[0], []).append([float(x) for x in parts[1:]])
    scen = {"baseline": (4, 2, 2, 348), "nljump-1": (4, 2, 1, 348), "ntjump-1": (4, 1, 2, 348),
            "nljump-1-ntjump-1": (4, 1, 1, 348), "short": (4, 2, 2, 347)}
    for name, (js, jt, jl, n) in scen.items():
        p = dict(n_p=12, q_s=35, d_s=1, j_s=js, q_t=19, d_t=1, j_t=jt, q_l=13, d_l=1, j_l=jl,
                 n_inner=1, n_outer=3, hermite=False)
        S, T, _, W = ref.stl(co2[:n], p)
        want = np.array(rows[name])
        order = np.argsort(want[:, header.index("idx") - 1])
        want = want[order]
        cols = {h: header.index(h) - 1 for h in ("season", "trend", "rw")}
        err = max(np.max(np.abs(S - want[:, cols["season"]])),
                  np.max(np.abs(T - want[:, cols["trend"]])),
                  np.max(np.abs(W - want[:, cols["rw"]])))
        print(f"reference vs Fortran fixture {name:18s}: max |diff| {err:.1e}")
        assert err < 1e-9, name


def run_program(Y, p, entry="main_f64"):
    with tempfile.TemporaryDirectory() as tmp:
        np.save(os.path.join(tmp, "Y.npy"), Y)
        args = [os.path.join(tmp, "Y.npy")] + [
            ("true" if p[k] else "false") if k == "hermite" else f"{int(p[k])}i64"
            for k in ref.PARAM_ORDER]
        cmd = [os.path.join(ROOT, "target", "release", "ogham"), "run", "--backend", "cpu",
               "--entry", entry, "-o", tmp, os.path.join(ROOT, "programs", "stl.og")] + args
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        seconds = time.perf_counter() - start
        return [np.load(os.path.join(tmp, f"out{i}.npy")) for i in range(4)], seconds


def program():
    Y = ref.synthetic(23, 50, 828, 23)
    for name, p in SETTINGS:
        if p["n_p"] == 12:
            continue
        (S, T, _, W), _ = run_program(Y, p)
        worst = 0.0
        for i, y in enumerate(Y):
            s2, t2, w2 = statsmodels_stl(y, p)
            worst = max(worst, np.max(np.abs(S[i] - s2)), np.max(np.abs(T[i] - t2)),
                        np.max(np.abs(W[i] - w2)))
        print(f"program (cpu, f64) vs statsmodels, {name:22s}: max |diff| {worst:.1e}")
        assert worst < 1e-9, name


def speed():
    """1000 × 828, period 23, defaults q_s = 7 (jumps 1/5/3), f64."""
    Y = ref.synthetic(24, 1000, 828, 23)
    p = ref.defaults(23)
    p["q_l"] = 25   # statsmodels requires q_l > n_p
    times = []
    for _ in range(5):
        _, seconds = run_program(Y, p)
        times.append(seconds)
    ogham = float(np.median(times))
    start = time.perf_counter()
    for y in Y[:100]:
        statsmodels_stl(y, p)
    sm = (time.perf_counter() - start) * 10
    print(f"1000 series x 828, jumps {p['j_s']}/{p['j_t']}/{p['j_l']}: ogham cpu {ogham:.2f} s "
          f"({1000 / ogham:.0f} series/s, whole process, median of 5); statsmodels "
          f"{sm:.1f} s ({1000 / sm:.0f} series/s, one core, extrapolated from 100); "
          f"ratio {sm / ogham:.0f}x")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "reference"
    {"reference": reference, "program": program, "speed": speed}[what]()
