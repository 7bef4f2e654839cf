#!/usr/bin/env python3
"""Golden values for programs/bfast_kernels.og: the BFAST-Monitor kernel quantities in float64.

Regenerate (deterministic: re-running rewrites byte-identical files):

    python3 tests/oracles/bfast_kernels.py

Needs only NumPy (any version >= 1.17, for default_rng). Writes, in Futhark's textual value
syntax, for each case NAME in CASES:

    tests/cases/bfast/NAME.in    the entry point's arguments: images [m][N]f32 (NaN = missing),
                                 n i64, k i64, f f32, hfrac f32, lam f32
    tests/cases/bfast/NAME.out   the 15 outputs of `main`, in order (see the program)

The quantities are computed independently of the Ogham program's algorithms wherever NumPy has
its own: the inverse by numpy.linalg.inv, beta by numpy.linalg.solve on the normal equations
(cross-checked against numpy.linalg.lstsq), the compaction by boolean indexing, the MOSUM
values directly as window sums (not by a scan). Only the conventions are shared (spec
shared/specs/bfast.md §3-§4, the program's header): t = 0..N-1, design rows
1, t/f, cos(2πjt/f), sin(2πjt/f) for j = 1..k; history = positions < n; window
w = trunc(n_hist·hfrac); boundary lam·sqrt(log⁺((n_hist+t+1)/n_hist)); break = first strict
exceedance, as an index into the series.

The inputs are rounded to f32 first and the reference computed from those f32 values in f64,
so the only difference to the program is the program's f32 arithmetic. The script also runs
the same kernels in float32 and prints, per output, the largest error of that emulation under
the harness's comparison; the `-- tolerance:` of tests/cases/bfast/kernels.og is chosen with a
margin over it.
"""

import math
import os

import numpy as np
from textvalues import fmt_value  # tests/oracles/textvalues.py

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cases", "bfast")

# name, seed, pixels m, length N, history n, harmonic order k, frequency f, hfrac, lambda
CASES = [
    ("kernels_k1", 1, 6, 48, 30, 1, 12.0, 0.25, 1.5),
    ("kernels", 2, 5, 60, 34, 2, 12.0, 0.25, 1.5),
]

# Fraction of missing observations drawn per pixel.
MISSING = 0.4


def make_images(seed, m, N, n, f):
    """NDVI-like series: level + trend + annual cycle + noise, a drop on odd pixels, NaNs."""
    rng = np.random.default_rng(seed)
    t = np.arange(N, dtype=np.float64)
    images = np.empty((m, N))
    for i in range(m):
        level = rng.uniform(0.3, 0.7)
        trend = rng.uniform(-0.02, 0.02)
        amp = rng.uniform(0.05, 0.25)
        phase = rng.uniform(0.0, 2 * math.pi)
        noise = rng.normal(0.0, 0.02, N)
        y = level + trend * t / f + amp * np.sin(2 * math.pi * t / f + phase) + noise
        if i % 2 == 1:
            start = n + rng.integers(0, N - n - 4)
            y[start:] -= rng.uniform(0.1, 0.3)
        images[i] = y
    images[rng.random((m, N)) < MISSING] = np.nan
    return images.astype(np.float32)


def design_matrix(N, k, f, dtype):
    t = np.arange(N, dtype=dtype)
    f = dtype(f)
    rows = [np.ones(N, dtype=dtype), t / f]
    for j in range(1, k + 1):
        a = dtype(2) * dtype(math.pi) * dtype(j) * t / f
        rows += [np.cos(a), np.sin(a)]
    return np.array(rows, dtype=dtype)


def log_plus(x):
    return 1.0 if x <= math.e else math.log(x)


def reference(images, n, k, f, hfrac, lam):
    """The 15 outputs of `main`, in float64, computed pixel by pixel."""
    images = images.astype(np.float64)
    m, N = images.shape
    X = design_matrix(N, k, f, np.float64)
    p = X.shape[0]
    out = {key: [] for key in ["gram", "inv", "xy", "beta", "yhat", "nv", "res", "keys",
                               "nh", "sigma", "w", "mosum", "mean", "brk"]}
    for y in images:
        hist = np.arange(N) < n
        valid = ~np.isnan(y)
        Xh = X[:, hist & valid]
        gram = Xh @ Xh.T
        inv = np.linalg.inv(gram)
        xy = Xh @ y[hist & valid]
        beta = np.linalg.solve(gram, xy)
        lstsq = np.linalg.lstsq(Xh.T, y[hist & valid], rcond=None)[0]
        assert np.allclose(beta, lstsq, rtol=1e-9, atol=1e-9), "normal equations disagree"
        yhat = X.T @ beta
        keys = np.flatnonzero(valid)
        nv = len(keys)
        res = np.full(N, np.nan)
        res[:nv] = (y - yhat)[keys]
        keys_padded = np.full(N, -1, dtype=np.int64)
        keys_padded[:nv] = keys
        nh = int(np.count_nonzero(valid & hist))
        assert nh > p + 1, "too few valid history observations for a well-posed case"
        sigma = math.sqrt(np.sum(res[:nh] ** 2) / (nh - p))
        w = int(nh * hfrac)
        assert w > 1, "window too small"
        nm = nv - nh
        assert nm > 0, "no valid monitoring observation"
        mosum = np.full(N, np.nan)
        for t in range(nm):
            c = nh + t  # compacted index of the (t+1)-th valid monitoring observation
            mosum[t] = np.sum(res[c - w + 1:c + 1]) / (sigma * math.sqrt(nh))
        mean = float(np.mean(mosum[:nm]))
        bounds = np.array([lam * math.sqrt(log_plus((nh + t + 1) / nh)) for t in range(nm)])
        crossing = np.flatnonzero(np.abs(mosum[:nm]) > bounds)
        brk = int(keys[nh + crossing[0]]) if len(crossing) else -1
        # A break decision must not hinge on rounding: every |MOSUM| is far from its boundary.
        margin = np.min(np.abs(np.abs(mosum[:nm]) - bounds) / bounds)
        assert margin > 1e-3, f"|MOSUM| within {margin:.1e} of the boundary"
        for key, value in [("gram", gram), ("inv", inv), ("xy", xy), ("beta", beta),
                           ("yhat", yhat), ("nv", nv), ("res", res), ("keys", keys_padded),
                           ("nh", nh), ("sigma", sigma), ("w", w), ("mosum", mosum),
                           ("mean", mean), ("brk", brk)]:
            out[key].append(value)
    results = [X] + [np.array(out[key]) for key in
                     ["gram", "inv", "xy", "beta", "yhat", "nv", "res", "keys", "nh", "sigma",
                      "w", "mosum", "mean", "brk"]]
    return results


def emulate_f32(images, n, k, f, hfrac, lam):
    """The program's algorithm in float32 (same formulas; NumPy's summation order)."""
    s = np.float32
    m, N = images.shape
    X = design_matrix(N, k, f, s)
    p = X.shape[0]
    hist = np.where(np.arange(N) < n, images, np.nan).astype(s)
    mask = (~np.isnan(hist)).astype(s)
    h0 = np.nan_to_num(hist)
    gram = np.einsum("in,jn,mn->mij", X, X, mask).astype(s)
    inv = np.linalg.inv(gram).astype(s)
    xy = (h0 @ X.T).astype(s)
    beta = np.einsum("mij,mj->mi", inv, xy).astype(s)
    yhat = (beta @ X).astype(s)
    results = {key: [] for key in ["nv", "res", "keys", "nh", "sigma", "w", "mosum", "mean",
                                   "brk"]}
    for i in range(m):
        r = (images[i] - yhat[i]).astype(s)
        keys = np.flatnonzero(~np.isnan(r))
        nv = len(keys)
        res = np.full(N, np.nan, dtype=s)
        res[:nv] = r[keys]
        kp = np.full(N, -1, dtype=np.int64)
        kp[:nv] = keys
        nh = int(np.count_nonzero(~np.isnan(hist[i])))
        sigma = np.sqrt(np.sum(res[:nh] * res[:nh], dtype=s) / s(nh - p))
        w = int(s(nh) * s(hfrac))
        nm = nv - nh
        steps = np.zeros(N, dtype=s)
        steps[0] = np.sum(res[nh - w + 1:nh + 1], dtype=s)
        for t in range(1, nm):
            steps[t] = res[nh + t] - res[nh - w + t]
        scale = s(sigma * np.sqrt(s(nh)))
        mosum = np.full(N, np.nan, dtype=s)
        mosum[:nm] = (np.cumsum(steps, dtype=s) / scale)[:nm]
        mean = np.sum(mosum[:nm], dtype=s) / s(nm)
        brk = -1
        for t in range(nm):
            b = s(lam) * np.sqrt(s(log_plus(float(s(nh + t + 1) / s(nh)))))
            if abs(mosum[t]) > b:
                brk = int(kp[nh + t])
                break
        for key, value in [("nv", nv), ("res", res), ("keys", kp), ("nh", nh), ("sigma", sigma),
                           ("w", w), ("mosum", mosum), ("mean", mean), ("brk", brk)]:
            results[key].append(value)
    return [X, gram, inv, xy, beta, yhat] + [np.array(results[key]) for key in
                                             ["nv", "res", "keys", "nh", "sigma", "w", "mosum",
                                              "mean", "brk"]]


OUTPUT_TYPES = ["f32"] * 6 + ["i64", "f32", "i64", "i64", "f32", "i64", "f32", "f32", "i64"]
OUTPUT_NAMES = ["X", "gram", "inverse", "xy", "beta", "yhat", "n_valid", "residuals", "keys",
                "n_hist", "sigma", "window", "mosum", "mosum_mean", "break"]


def max_error(got, want):
    """Largest |got - want| / max(1, |want|) over the elements (NaN must match NaN)."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert np.array_equal(np.isnan(got), np.isnan(want)), "NaN positions differ"
    ok = ~np.isnan(want)
    if not ok.any():
        return 0.0
    return float(np.max(np.abs(got[ok] - want[ok]) / np.maximum(1.0, np.abs(want[ok]))))


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    for name, seed, m, N, n, k, f, hfrac, lam in CASES:
        images = make_images(seed, m, N, n, f)
        args = [(images, "f32"), (n, "i64"), (k, "i64"), (f, "f32"), (hfrac, "f32"),
                (lam, "f32")]
        ref = reference(images, n, k, f, hfrac, lam)
        emu = emulate_f32(images, n, k, f, hfrac, lam)
        with open(os.path.join(OUT_DIR, name + ".in"), "w") as fh:
            fh.write("\n".join(fmt_value(v, s) for v, s in args) + "\n")
        with open(os.path.join(OUT_DIR, name + ".out"), "w") as fh:
            fh.write("\n".join(fmt_value(v, s) for v, s in zip(ref, OUTPUT_TYPES)) + "\n")
        print(f"{name}: m={m} N={N} n={n} k={k} missing={np.isnan(images).mean():.2f} "
              f"breaks={ref[14].tolist()}")
        for out_name, got, want in zip(OUTPUT_NAMES, emu, ref):
            print(f"  {out_name:10s} f32 emulation error {max_error(got, want):.1e}")


if __name__ == "__main__":
    main()
