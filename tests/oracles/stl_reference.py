#!/usr/bin/env python3
"""The project's float64 NumPy reference of STL with missing values (shared/specs/stl.md §2–§5),
one series at a time, written from the spec. It is the oracle for series with NaN; without NaN
it is checked against statsmodels (stl_statsmodels.py) and the spec's golden values (§7.1).

    python3 tests/oracles/stl_reference.py spec      # checks the spec's §7.1 golden values
    python3 tests/oracles/stl_reference.py golden    # writes tests/cases/stl/*.in / *.out

Requires numpy only."""

import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "..", "cases", "stl")


def nextodd(c):
    return c if c % 2 == 1 else c + 1


def defaults(n_p, q_s=7, robust=False):
    q_t = nextodd(math.ceil(1.5 * n_p / (1 - 1.5 / q_s)))
    q_l = nextodd(n_p)
    return dict(n_p=n_p, q_s=q_s, d_s=1, j_s=math.ceil(q_s / 10), q_t=q_t, d_t=1,
                j_t=math.ceil(q_t / 10), q_l=q_l, d_l=1, j_l=math.ceil(q_l / 10),
                n_inner=1 if robust else 2, n_outer=16 if robust else 1, hermite=True)


def loess_at(xs, ys, rho, L, q, d, xh):
    """§2 at integer point xh over observed positions xs (sorted, 1-based): (value, slope) or
    None when there is no fit."""
    n = len(xs)
    qh = min(q, n)
    # the qh nearest positions, ties to the larger one: a contiguous run of xs
    i = np.searchsorted(xs, xh)          # first index with xs[i] >= xh
    lo, hi = i, i                        # run [lo, hi)
    while hi - lo < qh:
        if lo == 0:
            hi += 1
        elif hi == n:
            lo -= 1
        elif xs[hi] - xh <= xh - xs[lo - 1]:
            hi += 1
        else:
            lo -= 1
    x = xs[lo:hi].astype(float)
    y = ys[lo:hi]
    w0 = rho[lo:hi]
    lam = max(abs(x - xh)) + (math.floor((q - n) / 2) if q > n else 0)
    r = abs(x - xh)
    v = np.where(r <= 0.001 * lam, 1.0, np.where(r <= 0.999 * lam, (1 - (r / lam) ** 3) ** 3, 0.0))
    w = v * w0
    if w.sum() <= 0:
        return None
    w = w / w.sum()
    if d == 0 or lam == 0:
        return float(w @ y), 0.0
    xbar = float(w @ x)
    c = float(w @ (x - xbar) ** 2)
    if math.sqrt(c) <= 0.001 * (L - 1):
        return float(w @ y), 0.0
    val1 = float(w @ ((1 + (xh - xbar) * (x - xbar) / c) * y))
    slope1 = float(w @ ((x - xbar) * y) / c)
    if d == 1:
        return val1, slope1
    if np.count_nonzero(w > 0) < 3:       # project rule (spec §9): fewer than 3 weighted points
        return val1, slope1
    u = x - xh
    A = np.array([[w @ u ** (a + b) for b in range(3)] for a in range(3)])
    rhs = np.array([w @ (u ** a * y) for a in range(3)])
    try:
        beta = np.linalg.solve(A, rhs)
    except np.linalg.LinAlgError:
        return val1, slope1
    if not np.all(np.isfinite(beta)):
        return val1, slope1
    return float(beta[0]), float(beta[1])


def nearest_observed(xs, ys, xh):
    i = int(np.argmin([abs(x - xh) - 1e-9 * x for x in xs]))   # ties -> larger
    return ys[i]


def smooth(ys_all, ok, rho_all, q, d, J, hermite, extrapolate=False):
    """Loess of a length-L array at 1..L (grid + interpolation, §2.1); with `extrapolate`
    also at 0 and L+1. Returns values at 1..L (or 0..L+1)."""
    L = len(ys_all)
    pos = np.nonzero(ok)[0] + 1
    ys, rho = ys_all[ok], rho_all[ok]

    def fit(xh):
        r = loess_at(pos, ys, rho, L, q, d, xh)
        if r is None:
            return None
        return r

    Jp = 1 if L == 1 else min(J, L - 1)
    grid = list(range(1, L + 1, Jp))
    if grid[-1] != L:
        grid.append(L)
    vals = {}
    for g in grid:
        r = fit(g)
        vals[g] = r if r is not None else (nearest_observed(pos, ys, g), 0.0)
    out = np.empty(L)
    for a, b in zip(grid, grid[1:]):
        fa, sa = vals[a]
        fb, sb = vals[b]
        H = b - a
        for xx in range(a, b):
            u = (xx - a) / H
            if hermite:
                out[xx - 1] = ((2 * u ** 3 - 3 * u ** 2 + 1) * fa + (3 * u ** 2 - 2 * u ** 3) * fb
                               + (u ** 3 - 2 * u ** 2 + u) * H * sa + (u ** 3 - u ** 2) * H * sb)
            else:
                out[xx - 1] = fa + (fb - fa) * (xx - a) / H
    out[L - 1] = vals[L][0]
    if not extrapolate:
        return out
    before = fit(0)
    after = fit(L + 1)
    before = before[0] if before is not None else out[0]
    after = after[0] if after is not None else out[L - 1]
    return np.concatenate([[before], out, [after]])


def moving_average(x, w):
    c = np.concatenate([[0.0], np.cumsum(x)])
    return (c[w:] - c[:-w]) / w


def stl(y, p):
    """One series: (S, T, R, W) per §3–§5."""
    y = np.asarray(y, dtype=float)
    N = len(y)
    n_p = p["n_p"]
    ok = ~np.isnan(y)
    nan = np.full(N, np.nan)
    for i in range(n_p):
        if not ok[i::n_p].any():
            return nan, nan, nan, nan
    T = np.zeros(N)
    rho = np.ones(N)
    S = np.zeros(N)
    for pss in range(p["n_outer"]):
        for _ in range(p["n_inner"]):
            D = y - T
            C = np.empty(N + 2 * n_p)
            for i in range(n_p):
                sub = D[i::n_p]
                sm = smooth(sub, ok[i::n_p], rho[i::n_p], p["q_s"], p["d_s"], p["j_s"],
                            p["hermite"], extrapolate=True)
                C[i::n_p] = sm
            ma = moving_average(moving_average(moving_average(C, n_p), n_p), 3)
            Lp = smooth(ma, ok, np.ones(N), p["q_l"], p["d_l"], p["j_l"], p["hermite"])
            S = C[n_p:n_p + N] - Lp
            E = y - S
            T = smooth(E, ok, rho, p["q_t"], p["d_t"], p["j_t"], p["hermite"])
        if pss < p["n_outer"] - 1:
            r = np.abs(y - S - T)[ok]
            h = 6 * np.median(r)
            rr = np.abs(y - S - T)
            if h == 0:
                rho = np.ones(N)
            else:
                rho = np.where(rr <= 0.001 * h, 1.0,
                               np.where(rr <= 0.999 * h, (1 - (rr / h) ** 2) ** 2, 0.0))
            rho = np.where(ok, rho, 1.0)
    R = y - S - T
    W = np.where(ok, rho, np.nan)
    return S, T, R, W


def stl_batch(Y, p):
    outs = [stl(y, p) for y in Y]
    return tuple(np.array([o[k] for o in outs]) for k in range(4))


def trend_slope(T):
    """Least-squares slope of T against positions 1..N, times N (the trend magnitude)."""
    N = T.shape[-1]
    x = np.arange(1, N + 1, dtype=float)
    xc = x - x.mean()
    return (T - T.mean(axis=-1, keepdims=True)) @ xc / (xc @ xc) * N


# ----------------------------------------------------------------------------------------------
# The spec's golden values (§7.1)

def tiny():
    t = np.arange(36)
    y = 10 + 0.1 * t + 2 * np.sin(2 * np.pi * t / 6) + 0.3 * (((7 * t) % 5) - 2)
    y[[3, 10, 11, 20, 27, 33]] = np.nan
    return y


CASE1_S0, CASE1_S35 = -0.3800645935, -1.9354276642
CASE1_T0, CASE1_T35 = 9.9456507079, 13.4059040285


def spec_check():
    base = dict(n_p=6, q_s=7, d_s=1, j_s=1, q_t=13, d_t=1, j_t=1, q_l=7, d_l=1, j_l=1,
                n_inner=2, n_outer=1, hermite=True)
    S, T, R, W = stl(tiny(), base)
    assert abs(S[0] - CASE1_S0) < 1e-9 and abs(S[35] - CASE1_S35) < 1e-9, (S[0], S[35])
    assert abs(T[0] - CASE1_T0) < 1e-9 and abs(T[35] - CASE1_T35) < 1e-9, (T[0], T[35])
    p2 = dict(base, j_t=2)
    S, T, R, W = stl(tiny(), p2)
    for got, want in [(S[0], -0.3799769944), (S[35], -1.9333244694), (T[0], 9.9445823416),
                      (T[7], 10.8106732573), (T[35], 13.4046569079)]:
        assert abs(got - want) < 1e-9, (got, want)
    y = tiny()
    y[14] += 8
    p3 = dict(p2, n_inner=1, n_outer=3)
    S, T, R, W = stl(y, p3)
    for got, want in [(S[0], -0.2613662534), (T[35], 13.4113828043), (W[8], 0.0823157004),
                      (W[14], 0.0), (W[35], 0.9534385358)]:
        assert abs(got - want) < 1e-9, (got, want)
    print("spec §7.1 golden values: OK")


# ----------------------------------------------------------------------------------------------
# Golden files for tests/cases/stl

def synthetic(seed, m, N, P, missing=0.0):
    """§7.2: y = a + b t + A sin(2π t/P + φ) + 0.05 sin(4π t/P) + ε, optionally missing."""
    rng = np.random.default_rng(seed)
    t = np.arange(N)
    Y = np.empty((m, N))
    for i in range(m):
        a, b = rng.uniform(0.2, 0.6), rng.uniform(-1e-4, 1e-4)
        A, phi = rng.uniform(0.05, 0.3), rng.uniform(0, 2 * np.pi)
        Y[i] = (a + b * t + A * np.sin(2 * np.pi * t / P + phi) + 0.05 * np.sin(4 * np.pi * t / P)
                + rng.normal(0, 0.03, N))
        if missing > 0:
            Y[i, rng.random(N) < missing] = np.nan
    return Y


def fmt(x, suffix="f64"):
    if isinstance(x, (bool, np.bool_)):
        return "true" if x else "false"
    if isinstance(x, (int, np.integer)):
        return f"{int(x)}i64"
    if np.isnan(x):
        return f"{suffix}.nan"
    if np.isinf(x):
        return f"{suffix}.inf" if x > 0 else f"-{suffix}.inf"
    if suffix == "f32":
        return repr(float(np.float32(x))) + "f32"
    return repr(float(x)) + "f64"


def fmt_array(a, suffix="f64"):
    a = np.asarray(a)
    if a.ndim == 0:
        return fmt(a.item(), suffix)
    return "[" + ", ".join(fmt_array(r, suffix) for r in a) + "]"


PARAM_ORDER = ["n_p", "q_s", "d_s", "j_s", "q_t", "d_t", "j_t", "q_l", "d_l", "j_l",
               "n_inner", "n_outer", "hermite"]


def write_case(name, Y, p, suffix="f64"):
    if suffix == "f32":
        Y = Y.astype(np.float32).astype(np.float64)
    S, T, R, W = stl_batch(Y, p)
    os.makedirs(CASES, exist_ok=True)
    with open(os.path.join(CASES, name + ".in"), "w") as f:
        f.write(fmt_array(Y, suffix) + "\n")
        for k in PARAM_ORDER:
            v = p[k]
            f.write((fmt(bool(v)) if k == "hermite" else fmt(int(v))) + "\n")
    with open(os.path.join(CASES, name + ".out"), "w") as f:
        for a in (S, T, R, W, trend_slope(T), S.max(axis=1) - S.min(axis=1)):
            f.write(fmt_array(a, suffix) + "\n")
    print(f"wrote {name}: {Y.shape}")


def golden():
    spec_check()
    write_case("tiny_jumps1", tiny()[None], dict(n_p=6, q_s=7, d_s=1, j_s=1, q_t=13, d_t=1, j_t=1,
                                                q_l=7, d_l=1, j_l=1, n_inner=2, n_outer=1,
                                                hermite=True))
    y = tiny()
    y[14] += 8
    write_case("tiny_robust", y[None], dict(n_p=6, q_s=7, d_s=1, j_s=1, q_t=13, d_t=1, j_t=2,
                                            q_l=7, d_l=1, j_l=1, n_inner=1, n_outer=3,
                                            hermite=True))
    Y = synthetic(1, 6, 96, 12, missing=0.3)
    Y[5, 3::12] = np.nan                       # an entirely missing cycle-subseries
    Y[4, 20:50] = np.nan                       # a long gap
    write_case("nan_batch", Y, dict(defaults(12), d_s=2, d_t=1, d_l=0))
    Y = synthetic(2, 4, 92, 23, missing=0.0)
    write_case("jumps_linear", Y, dict(defaults(23), j_s=2, j_t=5, j_l=3, hermite=False))
    write_case("jumps_hermite_robust", synthetic(3, 3, 92, 23, missing=0.2),
               dict(defaults(23, robust=True), n_outer=4))
    write_case("auto_f32", synthetic(4, 3, 92, 23, missing=0.3), dict(defaults(23, q_s=9)), "f32")
    # the `auto` entry (defaults from n_p = 6, q_s = 7: the spec's §7.1 case 2)
    Y = tiny()[None]
    S, T, R, W = stl_batch(Y, defaults(6))
    with open(os.path.join(CASES, "tiny_auto.in"), "w") as f:
        f.write(fmt_array(Y) + "\n6i64\n7i64\nfalse\n")
    with open(os.path.join(CASES, "tiny_auto.out"), "w") as f:
        for a in (S, T, R, W, trend_slope(T), S.max(axis=1) - S.min(axis=1)):
            f.write(fmt_array(a) + "\n")
    print("wrote tiny_auto")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "spec"
    {"spec": spec_check, "golden": golden}[what]()
