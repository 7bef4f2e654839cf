#!/usr/bin/env python3
"""Float64 NumPy reference of BFAST-Monitor (spec shared/specs/bfast.md §3–§6), the synthetic
data generator, and the golden files of tests/cases/bfast/monitor*.og and seed*.og.

Needs only NumPy (>= 1.17; written against 1.26 and 2.x). Regenerate the golden files
(deterministic: re-running rewrites byte-identical files):

    python3 tests/oracles/bfast_reference.py golden

Other commands:

    python3 tests/oracles/bfast_reference.py spec      # checks the spec's §9.2 golden values and
                                                       # counts on the 1000-pixel set (seed 0)
    python3 tests/oracles/bfast_reference.py compare   # runs programs/bfast.og on the §9 sets
                                                       # (f64 and f32, all profiles) through the
                                                       # interpreter and reports agreement
                                                       # (`--pixels M` to use fewer pixels)
    python3 tests/oracles/bfast_reference.py daily OUT.npy M [SEED]
                                                       # writes a daily-axis stack of M pixels
                                                       # (`daily_set`; n = 1825, f = 365)

The reference is written directly from the spec, one pixel at a time: compress the valid
positions, fit the history rows with numpy.linalg.lstsq, residuals of all valid rows, sigma with
the profile's degrees of freedom, every MOSUM value from a cumulative sum of the residuals, the
boundary of the chosen convention (`r`: count ratio; `own_date`; `compressed`), the first strict
exceedance mapped back through the compressed index list, the median and the mean.
The independent oracles are run by bfast_zeit.py (zeit-cdts `_core`, = R) and bfast_pypi.py
(PyPI `bfast` 0.7 python backend); both compare against this reference.

Conventions beyond R (the spec leaves them open). -3 (singular history design) is decided by
the 1-norm condition number of the Gram matrix of the valid history rows (see `pixel`). A
pixel whose valid history is exactly
constant is fitted exactly (β = (c, 0, ...), residuals y - c, σ = 0), and a MOSUM value is 0 for a
zero window sum (0/0) and ±inf otherwise. R's `lm` leaves rounding noise there, which makes
every MOSUM value noise/noise, i.e. arbitrary; the program does the same as this reference.
"""

import math
import os
import subprocess
import sys
import json
import tempfile

import numpy as np
from textvalues import fmt_value  # tests/oracles/textvalues.py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
CASES = os.path.join(ROOT, "tests", "cases", "bfast")

# ---------------------------------------------------------------------------------------------
# Critical values (tests/oracles/bfast_critvals.json, extracted by bfast_critvals.py)

with open(os.path.join(HERE, "bfast_critvals.json")) as _fh:
    CRITVALS_MAX = json.load(_fh)["max"]
HS = (0.25, 0.5, 1.0)
ENDS = (2, 4, 6, 8, 10)


def critval(h, end, level):
    """strucchange's table column (h, end, "max"), linear in 1 - level (R's approx)."""
    H, P = HS.index(h), ENDS.index(end)
    col = np.array([CRITVALS_MAX[(L * 5 + P) * 3 + H] for L in range(50)])
    grid = 0.95 + 0.001 * np.arange(50)
    lv = 1.0 - level
    if not (0.95 - 1e-9 <= lv <= 0.999 + 1e-9):
        raise ValueError("level outside the table")
    return float(np.interp(lv, grid, col))


def mosum_lambda(h=0.25, end=10, level=0.05):
    return math.sqrt(2.0) * critval(h, end, level)


# ---------------------------------------------------------------------------------------------
# Reference


def design(ts, f, k, trend=True, drop_nyquist=False, tc=0.0, tscale=1.0):
    """Rows 1, (t - tc)/tscale, cos(2πjt/f), sin(2πjt/f) (j = 1..k). The affine form of the
    trend column changes no output except the condition number used for -3, so it is the
    program's: centred on the history, in years (`r` profile); raw t (`seed`)."""
    ts = np.asarray(ts, dtype=np.float64)
    rows = [np.ones_like(ts)]
    if trend:
        rows.append((ts - tc) / tscale)
    for j in range(1, k + 1):
        a = 2 * math.pi * j * ts / f
        rows.append(np.cos(a))
        if not (drop_nyquist and j == k):
            rows.append(np.sin(a))
    return np.array(rows)


def log_plus(x):
    x = np.asarray(x, dtype=np.float64)
    return np.where(x <= math.e, 1.0, np.log(np.maximum(x, 1e-300)))


def pixel(y, X, n, lam, h=0.25, profile="r", ts=None, k=3, bound="r", max_cond=7.0e13):
    """One pixel. Returns a dict: brk, q (MOSUM index), magnitude, mean, nh, nv, sigma, w,
    res, keys, mosum, bounds, margin (min relative distance of |MOSUM| to the boundary)."""
    y = np.asarray(y, dtype=np.float64)
    p = X.shape[0]
    V = np.flatnonzero(~np.isnan(y))
    nh = int(np.count_nonzero(V < n))
    nv = len(V)
    nm = nv - nh
    out = dict(brk=-2, q=-1, magnitude=np.nan, mean=np.nan, nh=nh, nv=nv, sigma=np.nan,
               w=0, res=np.zeros(0), keys=V, mosum=np.zeros(0), bounds=np.zeros(0),
               margin=np.inf)
    if profile == "r":
        w = int(math.floor(h * nh))
        out["w"] = w
        if w <= 1 or nh <= p:
            return out
        dof = nh - p
    else:
        w = int(nh * h)
        out["w"] = w
        if nh <= 5 or nm <= 5:
            out["magnitude"] = out["mean"] = 0.0
            return out
        dof = nh - (2 * k + 2)
    Xv = X[:, V].T
    yv = y[V]
    hist = yv[:nh]
    if np.all(hist == hist[0]):
        e = yv - hist[0]
    else:
        # -3: the Gram matrix of the valid history rows is singular up to rounding: its 1-norm
        # condition number exceeds 1/(64·eps) = 7e13 (f64 data) or 1e6 (f32 data, where one
        # refinement step of the program's f32 solve still converges); as the program.
        G = Xv[:nh].T @ Xv[:nh]
        with np.errstate(all="ignore"):
            try:
                cond = np.linalg.norm(G, 1) * np.linalg.norm(np.linalg.inv(G), 1)
            except np.linalg.LinAlgError:
                cond = np.inf
        if not cond <= max_cond:
            out["brk"] = -3
            if profile != "r":
                out["magnitude"] = out["mean"] = 0.0
            return out
        beta = np.linalg.lstsq(Xv[:nh], hist, rcond=None)[0]
        e = yv - Xv @ beta
    sigma = math.sqrt(np.sum(e[:nh] ** 2) / dof)
    cs = np.concatenate([[0.0], np.cumsum(e)])
    c = np.arange(nh + 1, nv + 1)              # 1-based count index of each monitoring obs
    sums = cs[c] - cs[c - w]
    with np.errstate(divide="ignore", invalid="ignore"):
        mosum = np.where(sums == 0, 0.0, sums / (sigma * math.sqrt(nh)))
    j = np.arange(1, nm + 1)
    if bound == "r":
        bounds = lam * np.sqrt(log_plus((nh + j) / nh))
    elif bound == "own_date":
        bounds = lam * np.sqrt(log_plus(ts[V[nh:]] / ts[n - 1]))
    elif bound == "compressed":
        bounds = lam * np.sqrt(log_plus(ts[n + j - 1] / ts[n - 1]))
    else:
        raise ValueError(bound)
    cross = np.flatnonzero(np.abs(mosum) > bounds)
    q = int(cross[0]) if len(cross) else -1
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.abs(np.abs(mosum) - bounds) / bounds
    # Only the crossings up to the first one decide the break.
    last = q + 1 if q >= 0 else nm
    out.update(brk=int(V[nh + q]) if q >= 0 else -1, q=q,
               magnitude=float(np.median(e[nh:])) if nm > 0 else np.nan,
               mean=float(np.mean(mosum)) if nm > 0 else np.nan,
               sigma=sigma, res=e, mosum=mosum, bounds=bounds,
               margin=float(np.min(rel[:last])) if last > 0 and np.isfinite(sigma) and sigma > 0
               else np.inf)
    return out


# The condition number of the history's Gram matrix above which the design is singular (-3):
# f64's `max_condition` (lib/regression.og) for f32 and f64 stacks alike, since the program
# redoes an f32 fit whose f32 condition number exceeds 1e6 in f64 (`ols_fit_guarded`) and
# rejects it only past this bound.
MAX_COND = 7.0e13


def run_r(Y, n, f, k=3, trend=True, h=0.25, end=10, level=0.05, lam=None, t0=0.0, years=None):
    """The `r` profile for a stack; regular time unless `years` (fractional years) is given."""
    Y = np.asarray(Y, dtype=np.float64)
    N = Y.shape[1]
    lam = mosum_lambda(h, end, level) if lam is None else lam
    if years is None:
        X = design(np.arange(N), f, k, trend, (2 * k == f), (n - 1) / 2, f)
        tyears = t0 + np.arange(N) / f
    else:
        years = np.asarray(years, dtype=np.float64)
        X = design(years, 1.0, k, trend, False, (years[0] + years[n - 1]) / 2, 1.0)
        tyears = years
    res = [pixel(y, X, n, lam, h, "r", k=k, max_cond=MAX_COND) for y in Y]
    return collect(res, tyears)


def run_seed(Y, ts, n, f, k=3, trend=True, hfrac=0.25, lam=1.7361262695265256, t0=0.0,
             bound="compressed"):
    Y = np.asarray(Y, dtype=np.float64)
    ts = np.asarray(ts, dtype=np.float64)
    X = design(ts, f, k, trend)
    res = [pixel(y, X, n, lam, hfrac, "seed", ts=ts, k=k, bound=bound, max_cond=MAX_COND)
           for y in Y]
    return collect(res, t0 + ts / f)


def collect(res, tyears):
    brk = np.array([r["brk"] for r in res], dtype=np.int64)
    return dict(
        brk=brk,
        time=np.array([tyears[b] if b >= 0 else np.nan for b in brk]),
        magnitude=np.array([r["magnitude"] for r in res]),
        mean=np.array([r["mean"] for r in res]),
        nh=np.array([r["nh"] for r in res], dtype=np.int64),
        nv=np.array([r["nv"] for r in res], dtype=np.int64),
        sigma=np.array([r["sigma"] for r in res]),
        margin=np.array([r["margin"] for r in res]),
        pixels=res)


# ---------------------------------------------------------------------------------------------
# Data


def spec_set(seed=0, M=1000, N=256, n=128, f=23):
    """The spec's §9.1 generator, bit for bit: returns (Yi int16 with -32768 = missing,
    Y float64 with NaN, true break positions (-1 none))."""
    rng = np.random.default_rng(seed)
    tt = np.arange(N)
    Y = np.empty((M, N))
    truth = np.full(M, -1)
    for i in range(M):
        a = rng.uniform(4000, 6000)
        b = rng.uniform(-2, 2)
        A = rng.uniform(200, 1000)
        phi = rng.uniform(0, 2 * np.pi)
        eps = rng.normal(0, 150, N)
        y = a + b * tt + A * np.sin(2 * np.pi * tt / f + phi) + eps
        if i % 2 == 0:
            s = n + rng.integers(0, N - n - 10)
            d = rng.uniform(800, 2500)
            y[s:] -= d
            truth[i] = s
        Y[i] = y
    Yi = np.round(Y).astype(np.int16)
    miss = rng.random((M, N)) < 0.5
    Yi[miss] = -32768
    Yf = Yi.astype(np.float64)
    Yf[miss] = np.nan
    return Yi, Yf, truth


def cloudy_set(seed, M, N, n, f, k=3, scale=1.0):
    """Synthetic stack with known injected breaks, per-pixel cloud fractions uniform in
    [0.5, 0.9] (clouds in runs: a pixel is cloudy on a date with a probability that depends on
    the previous date), and adversarial pixels at the end (see `ADVERSARIAL`). Values are
    int16-like (§9.1 model) times `scale` (1e-4: reflectance units), rounded to f32."""
    rng = np.random.default_rng(seed)
    tt = np.arange(N)
    rows, truth = [], []
    for i in range(M - len(ADVERSARIAL)):
        a = rng.uniform(4000, 6000)
        b = rng.uniform(-2, 2)
        A = rng.uniform(200, 1000)
        phi = rng.uniform(0, 2 * np.pi)
        y = a + b * tt + A * np.sin(2 * np.pi * tt / f + phi) + rng.normal(0, 150, N)
        s = -1
        if i % 2 == 0:
            s = n + int(rng.integers(0, N - n - 5))
            y[s:] -= rng.uniform(800, 2500) * (1 if i % 4 == 0 else -1)
        frac = rng.uniform(0.5, 0.9)
        # two-state Markov chain with stationary cloud fraction `frac` and mean run length 3
        stay = 2.0 / 3.0
        p_cc = stay + (1 - stay) * frac
        p_fc = (1 - stay) * frac
        cloud = np.empty(N, dtype=bool)
        cloud[0] = rng.random() < frac
        u = rng.random(N)
        for t in range(1, N):
            cloud[t] = u[t] < (p_cc if cloud[t - 1] else p_fc)
        y = np.round(y)
        y[cloud] = np.nan
        rows.append(y)
        truth.append(s)
    for name, make in ADVERSARIAL:
        y, s = make(rng, N, n, f, k)
        rows.append(y)
        truth.append(s)
    Y = (np.array(rows) * scale).astype(np.float32)
    return Y, np.array(truth)


def daily_set(seed, M, years=10, revisit=16, clear=0.75):
    """A daily-axis stack as R's `bfastts` makes from Landsat dates (f = 365, N = 365·years):
    per pixel `a + b·t + A·sin(2πt/365 + φ) + N(0, 150)`, int16-like and rounded, with a shift of
    800–2500 (alternating sign) at a random date of the second half in every other pixel; a pixel
    is observed every `revisit`-th day from a random offset, and each such day is clear with
    probability `clear` (defaults: about 95 % NaN). f32; returns the stack and the break days
    (-1 none). The history is the first half (`n = N // 2`)."""
    rng = np.random.default_rng(seed)
    N = 365 * years
    n = N // 2
    tt = np.arange(N)
    Y = np.full((M, N), np.nan)
    truth = np.full(M, -1)
    for i in range(M):
        y = (rng.uniform(4000, 6000) + rng.uniform(-0.2, 0.2) * tt
             + rng.uniform(200, 1000) * np.sin(2 * np.pi * tt / 365 + rng.uniform(0, 2 * np.pi))
             + rng.normal(0, 150, N))
        if i % 2 == 0:
            truth[i] = n + int(rng.integers(0, N - n - 30))
            y[truth[i]:] -= rng.uniform(800, 2500) * (1 if i % 4 == 0 else -1)
        seen = np.zeros(N, dtype=bool)
        seen[int(rng.integers(0, revisit))::revisit] = True
        seen &= rng.random(N) < clear
        Y[i, seen] = np.round(y[seen])
    return Y.astype(np.float32), truth


def dry_history_set(seed, f=23, years=10):
    """Three f32 pixels whose valid observations all lie in the first 8 of the `f` positions of
    the year (a dry season), the history the first half: 0, a drop of 0.3 at position 170;
    1, none; 2, the drop, but in the history only the first 4 positions of the year (4 distinct
    rows of the 7 harmonic regressors: rank 5 of 8, singular). The dry-season histories' Gram
    matrices have condition numbers of about 2e7: beyond f32's bound, within f64's."""
    rng = np.random.default_rng(seed)
    N = f * years
    t = np.arange(N)
    dry = t % f < 8
    Y = np.full((3, N), np.nan)
    for i, (phase, drop) in enumerate([(0.3, True), (1.1, False), (2.0, True)]):
        y = 0.5 + 0.2 * np.sin(2 * np.pi * t / f + phase) + 0.01 * t / f + rng.normal(0, 0.02, N)
        if drop:
            y[170:] -= 0.3
        keep = dry.copy()
        if i == 2:
            keep[:N // 2] = t[:N // 2] % f < 4
        Y[i, keep] = y[keep]
    return Y.astype(np.float32)


def _seasonal(rng, N, f):
    tt = np.arange(N)
    return np.round(5000 + 400 * np.sin(2 * np.pi * tt / f + rng.uniform(0, 6.28))
                    + rng.normal(0, 100, N))


def _all_nan(rng, N, n, f, k):
    return np.full(N, np.nan), -1


def _valid_history(rng, N, n, f, count):
    """A seasonal series with `count` valid history observations and half its monitoring
    period missing."""
    y = _seasonal(rng, N, f)
    keep = np.zeros(N, dtype=bool)
    keep[rng.choice(n, count, replace=False)] = True
    keep[n:] = rng.random(N - n) < 0.5
    y[~keep] = np.nan
    return y, -1


def _few_history(rng, N, n, f, k):
    """p valid history observations (too few: n_h <= p)."""
    return _valid_history(rng, N, n, f, 2 * k + 2)


def _just_enough(rng, N, n, f, k):
    """p + 1 valid history observations... and W = floor(h·(p+1)) <= 1: still too few (R's W
    rule); 2p + 1 (W >= 2 with h = 0.25 when p + 1 >= 8): fitted."""
    return _valid_history(rng, N, n, f, 4 * k + 5)


def _constant(rng, N, n, f, k):
    y = np.full(N, 4321.0)
    y[rng.random(N) < 0.5] = np.nan
    return y, -1


def _constant_step(rng, N, n, f, k):
    """Constant history, a step in the monitoring period: σ = 0, the first window that
    contains the step is ±inf."""
    y = np.full(N, 4321.0)
    s = n + (N - n) // 3
    y[s:] = 3000.0
    y[rng.random(N) < 0.5] = np.nan
    y[s] = 3000.0
    return y, s


def _first_monitoring(rng, N, n, f, k):
    """A huge drop exactly at the first monitoring observation (which is valid)."""
    y = _seasonal(rng, N, f)
    y[n:] -= 30000
    y[rng.random(N) < 0.5] = np.nan
    y[n] = 5000 - 30000
    return y, n


def _no_monitoring(rng, N, n, f, k):
    """No valid monitoring observation: break -1, magnitude and mean NaN."""
    y = _seasonal(rng, N, f)
    y[rng.random(N) < 0.5] = np.nan
    y[n:] = np.nan
    return y, -1


def _history_all_nan(rng, N, n, f, k):
    y = _seasonal(rng, N, f)
    y[:n] = np.nan
    return y, -1


ADVERSARIAL = [("all_nan", _all_nan), ("few_history", _few_history),
               ("just_enough", _just_enough), ("constant", _constant),
               ("constant_step", _constant_step), ("first_monitoring", _first_monitoring),
               ("no_monitoring", _no_monitoring), ("history_all_nan", _history_all_nan)]


# ---------------------------------------------------------------------------------------------
# Golden files


def write_case(name, args, outs):
    with open(os.path.join(CASES, name + ".in"), "w") as fh:
        fh.write("\n".join(fmt_value(v, s) for v, s in args) + "\n")
    with open(os.path.join(CASES, name + ".out"), "w") as fh:
        fh.write("\n".join(fmt_value(v, s) for v, s in outs) + "\n")


def summary_outs(r, ft):
    return [(r["brk"], "i32"), (r["time"], "f64"), (r["magnitude"], ft), (r["mean"], ft),
            (r["nh"], "i32"), (r["nv"], "i32")]


def regular_args(Y, ft, n, f, t0, k, trend, h, end, level, lam):
    return [(Y, ft), (n, "i64"), (f, "f64"), (t0, "f64"), (k, "i64"), (trend, "bool"),
            (h, "f64"), (end, "i64"), (level, "f64"), (np.nan if lam is None else lam, "f64")]


def report(name, r, truth=None):
    b = r["brk"]
    msg = (f"{name}: {len(b)} px, -2: {np.sum(b == -2)}, -1: {np.sum(b == -1)}, "
           f"breaks: {np.sum(b >= 0)}, min margin {np.min(r['margin']):.2e}")
    if truth is not None:
        msg += f", true breaks detected: {np.sum((truth >= 0) & (b >= 0))}/{np.sum(truth >= 0)}"
    print(msg)


# (name, seed, M, N, n, f, k, trend, h, end, level, f32)
MONITOR_CASES = [
    ("monitor_f64", 11, 40, 160, 80, 23, 3, True, 0.25, 10, 0.05, False),
    ("monitor_f32", 11, 40, 160, 80, 23, 3, True, 0.25, 10, 0.05, True),
    ("monitor_logplus", 12, 30, 200, 50, 23, 3, True, 0.25, 10, 0.05, False),
    ("monitor_k1_notrend", 13, 30, 120, 60, 12, 1, False, 0.5, 6, 0.01, False),
    ("monitor_nyquist", 14, 24, 120, 60, 6, 3, True, 1.0, 2, 0.0125, False),
]


def golden():
    for (name, seed, M, N, n, f, k, trend, h, end, level, f32) in MONITOR_CASES:
        scale = 1e-4 if f32 else 1.0
        Y, truth = cloudy_set(seed, M, N, n, f, k, scale)
        Y = Y if f32 else Y.astype(np.float64)
        ft = "f32" if f32 else "f64"
        r = run_r(Y, n, f, k, trend, h, end, level, t0=2000.0)
        report(name, r, truth)
        assert np.min(r["margin"]) > 1e-4, "a break decision hinges on rounding"
        write_case(name, regular_args(Y, ft, n, f, 2000.0, k, trend, h, end, level, None),
                   summary_outs(r, ft))
    # irregular time in fractional years (day-of-year dates with gaps), f64
    rng = np.random.default_rng(21)
    N, n, M = 150, 70, 24
    days = np.cumsum(rng.integers(8, 24, N))
    years = 2001.0 + days / 365.25
    Y, truth = cloudy_set(22, M, N, n, 23, 2)
    Y = Y.astype(np.float64)
    r = run_r(Y, n, 23, k=2, years=years)
    report("monitor_years", r, truth)
    assert np.min(r["margin"]) > 1e-4
    write_case("monitor_years",
               [(Y, "f64"), (years, "f64"), (n, "i64"), (2, "i64"), (True, "bool"),
                (0.25, "f64"), (10, "i64"), (0.05, "f64"), (np.nan, "f64")],
               summary_outs(r, "f64"))
    # detailed entry, f64, a few pixels
    Y, truth = cloudy_set(31, 12, 100, 50, 23, 3)
    Y = Y.astype(np.float64)
    r = run_r(Y, 50, 23, 3, t0=2000.0)
    N = Y.shape[1]
    det = r["pixels"]

    def pad(a, fill):
        out = np.full(N, fill, dtype=np.float64)
        out[:len(a)] = a
        return out

    outs = [(r["brk"], "i32"), (r["sigma"], "f64"), ([d["w"] for d in det], "i64"),
            (r["nh"], "i32"), (r["nv"], "i32"),
            ([pad(d["res"], np.nan) if d["brk"] != -2 else pad([], np.nan) for d in det], "f64"),
            ([pad(d["keys"], -1) for d in det], "i64"),
            ([pad(d["mosum"], np.nan) for d in det], "f64"),
            ([pad(d["bounds"], np.nan) for d in det], "f64"),
            (r["magnitude"], "f64"), (r["mean"], "f64")]
    write_case("detailed_f64", regular_args(Y, "f64", 50, 23.0, 2000.0, 3, True, 0.25, 10, 0.05,
                                            None), outs)
    report("detailed_f64", r, truth)
    # dry-season-only histories (ill-conditioned, not singular) and a singular one, on the f32
    # stack and on the same values widened: both entries give the same breaks and -3
    Y = dry_history_set(5)
    r = run_r(Y, 115, 23.0, 3, t0=2000.0)
    report("dry_season", r, np.array([170, -1, 170]))
    assert list(r["brk"][2:]) == [-3] and np.min(r["margin"]) > 1e-4
    for ft in ("f32", "f64"):
        write_case("dry_season_" + ft, regular_args(Y, ft, 115, 23.0, 2000.0, 3, True, 0.25, 10,
                                                    0.05, None), summary_outs(r, ft))
    # seed profile: t = 1..N, f = 12 (the paper's benchmark convention), both boundary
    # conventions; a short history makes the log⁺ part active so that they differ.
    N, n, M = 160, 48, 40
    ts = np.arange(1, N + 1, dtype=np.float64)
    Y, truth = cloudy_set(41, M, N, n, 12, 3, 1e-4)
    for bound in ("compressed", "own_date"):
        r = run_seed(Y, ts, n, 12.0, 3, True, 0.25, 1.7361262695265256, 2000.0, bound)
        report("seed_" + bound, r, truth)
        assert np.min(r["margin"]) > 1e-4
        outs = summary_outs(r, "f32")
        write_case("seed_" + bound,
                   [(Y, "f32"), (ts, "f32"), (n, "i64"), (12.0, "f64"), (2000.0, "f64"),
                    (3, "i64"), (True, "bool"), (0.25, "f64"), (1.7361262695265256, "f64"),
                    (bound == "own_date", "bool")], outs)


# ---------------------------------------------------------------------------------------------
# Spec checks and comparison with the program


def spec_check():
    Yi, Y, truth = spec_set(0)
    r = run_r(Y, 128, 23, t0=2000.0)
    print("pixels 0..7:")
    for i in range(8):
        print(f"  {i}: {r['brk'][i]} {r['time'][i]:.10f} {r['magnitude'][i]:.8f} "
              f"{r['mean'][i]:.8f} {r['nh'][i]} {r['nv'][i]}")
    gold = [211, -1, 179, -1, 218, -1, 134, -1]
    assert list(r["brk"][:8]) == gold
    assert abs(r["magnitude"][0] - (-120.53340059)) < 1e-6
    assert abs(r["mean"][6] - (-22.60023444)) < 1e-6
    b = r["brk"]
    assert (np.sum(b == -2), np.sum(b == -1), np.sum(b >= 0)) == (0, 351, 649)
    print("spec §9.2 golden values and counts: OK")


def run_program(entry, args, outdir):
    cmd = [os.path.join(ROOT, "target", "debug", "ogham"), "run",
           os.path.join(ROOT, "programs", "bfast.og"), "--entry", entry, "-o", outdir] + args
    subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    return [np.load(os.path.join(outdir, f"out{i}.npy")) for i in range(6)]


def agreement(name, got, ref, ymax=None):
    brk = got[0].astype(np.int64)
    same = brk == ref["brk"]
    mag_ok = ~np.isnan(ref["magnitude"])
    scale = np.maximum(1.0, np.abs(ref["magnitude"][mag_ok]))
    mag_err = np.max(np.abs(got[2][mag_ok] - ref["magnitude"][mag_ok]) / scale, initial=0)
    mean_ok = np.isfinite(ref["mean"])
    mean_err = np.max(np.abs(got[3][mean_ok] - ref["mean"][mean_ok])
                      / np.maximum(1.0, np.abs(ref["mean"][mean_ok])), initial=0)
    if ymax is not None:
        mag_abs = np.max(np.abs(got[2][mag_ok] - ref["magnitude"][mag_ok]), initial=0) / ymax
        mean_abs = np.max(np.abs(got[3][mean_ok] - ref["mean"][mean_ok]), initial=0)
        print(f"   magnitude max abs err / max|y| {mag_abs:.1e}; mosum_mean max abs err "
              f"{mean_abs:.1e}")
    counts = np.array_equal(got[4], ref["nh"]) and np.array_equal(got[5], ref["nv"])
    print(f"{name}: breaks equal {np.sum(same)}/{len(same)}; magnitude max rel err "
          f"{mag_err:.1e}; mosum_mean max rel err {mean_err:.1e}; counts equal {counts}")
    for i in np.flatnonzero(~same):
        px = ref["pixels"][i]
        print(f"   pixel {i}: program {brk[i]} reference {ref['brk'][i]}; reference margin "
              f"{px['margin']:.1e} (|MOSUM| relative distance to the boundary)")
    return same


def compare(pixels):
    tmp = tempfile.mkdtemp()
    Yi, Y, truth = spec_set(0)
    Y = Y[:pixels]
    ref = run_r(Y, 128, 23, t0=2000.0)
    lam = "f64.nan"
    base = ["128i64", "23f64", "2000f64", "3i64", "true", "0.25f64", "10i64", "0.05f64", lam]
    np.save(os.path.join(tmp, "y64.npy"), Y)
    np.save(os.path.join(tmp, "y32.npy"), Y.astype(np.float32))
    agreement("seed-0 set, r profile, f64", run_program("main_f64", [os.path.join(tmp, "y64.npy")]
                                                        + base, tmp), ref)
    agreement("seed-0 set, r profile, f32", run_program("main", [os.path.join(tmp, "y32.npy")]
                                                        + base, tmp), ref, np.nanmax(np.abs(Y)))
    Yi, Y7, truth = spec_set(7, n=64)
    Y7 = Y7[:pixels]
    ref7 = run_r(Y7, 64, 23, t0=2000.0)
    np.save(os.path.join(tmp, "y7.npy"), Y7)
    np.save(os.path.join(tmp, "y7_32.npy"), Y7.astype(np.float32))
    base[0] = "64i64"
    agreement("seed-7 set (n = 64, log⁺ active), r profile, f64",
              run_program("main_f64", [os.path.join(tmp, "y7.npy")] + base, tmp), ref7)
    agreement("seed-7 set (n = 64, log⁺ active), r profile, f32",
              run_program("main", [os.path.join(tmp, "y7_32.npy")] + base, tmp), ref7,
              np.nanmax(np.abs(Y7)))
    # seed profile with the daily-date trick convention of the spec (t = 0..N-1 would make
    # t[n-1] ... we use t = 1..N as the paper's benchmark data)
    N = Y7.shape[1]
    ts = np.arange(1, N + 1, dtype=np.float64)
    np.save(os.path.join(tmp, "ts.npy"), ts.astype(np.float32))
    lam = mosum_lambda()
    for bound in ("compressed", "own_date"):
        refs = run_seed(Y7, ts, 64, 23.0, 3, True, 0.25, lam, 2000.0, bound)
        got = run_program("seed", [os.path.join(tmp, "y7_32.npy"), os.path.join(tmp, "ts.npy"),
                                   "64i64", "23f64", "2000f64", "3i64", "true", "0.25f64",
                                   f"{lam!r}f64", "true" if bound == "own_date" else "false"],
                          tmp)
        agreement(f"seed-7 set, seed profile ({bound}), f32", got, refs, np.nanmax(np.abs(Y7)))


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else "golden"
    if cmd == "golden":
        golden()
    elif cmd == "spec":
        spec_check()
    elif cmd == "daily":
        out, M = sys.argv[2], int(sys.argv[3])
        seed = int(sys.argv[4]) if len(sys.argv) > 4 else 7
        np.save(out, daily_set(seed, M)[0])
    elif cmd == "compare":
        pixels = int(sys.argv[sys.argv.index("--pixels") + 1]) if "--pixels" in sys.argv else 1000
        compare(pixels)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
