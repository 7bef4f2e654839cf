#!/usr/bin/env python3
"""NumPy float64 reference for TWDTW (spec shared/specs/twdtw.md §3-§5, §7) and the golden files
of tests/cases/twdtw/.

Regenerate (deterministic: re-running rewrites byte-identical files):

    python3 tests/oracles/twdtw_reference.py          # checks spec §9.1, writes the goldens
    python3 tests/oracles/twdtw_dtwpython.py          # independent check with dtw-python

Versions used to produce the committed files: Python 3.11.7, NumPy 2.4.6 (any NumPy >= 1.17 gives
the same files; the reference uses only elementwise float64 arithmetic and explicit loops).

The DP is a direct transcription of spec §4 with 1-based matrices CM, VM (two nested loops,
unmasked first column, VM(1, J) = J, diagonal / horizontal / vertical with strict `<`), the run
scan of §5.2 and the classifiers of §7. Before writing anything it asserts every value of spec
§9.1 (tiny case, with max_elapsed = inf, 60, 30) to 1e-9.

Program conventions (programs/twdtw.og): 0-based columns, start0 = VM - 1, -1 for masked cells;
labels 0-based pattern indices; NaN samples removed before the DP and columns mapped back.
"""

import math
import os

import numpy as np
from textvalues import fmt_value  # tests/oracles/textvalues.py

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "..", "cases", "twdtw")

INF = math.inf


# ----------------------------------------------------------------------------------------------
# Reference (spec §3-§5, §7)

def elapsed(ty, tx, cycle):
    """[n][m] circular day-of-year distance."""
    td = np.abs(ty[:, None] - tx[None, :])
    return np.minimum(td, cycle - td)


def local_cost(y, ty, x, tx, a=0.1, mid=50.0, cycle=366.0):
    """[n][m] local cost dist + logistic weight and [n][m] elapsed time (spec §3).
    The band sum is accumulated in ascending band order from 0.0 (as the Ogham `reduce`)."""
    n, m = y.shape[0], x.shape[0]
    s = np.zeros((n, m))
    for b in range(y.shape[1]):
        d = y[:, None, b] - x[None, :, b]
        s = s + d * d
    dist = np.sqrt(s)
    g = elapsed(ty, tx, cycle)
    w = 1.0 / (1.0 + np.exp(-a * (g - mid)))
    return dist + w, g


def twdtw_matrices(cost, g, max_elapsed=INF):
    """Spec §4 as written: CM, VM, DM, (N+1) x M, 1-based semantics stored 0-based."""
    n, m = cost.shape
    CM = np.zeros((n + 1, m))
    VM = np.zeros((n + 1, m), dtype=np.int64)
    DM = np.zeros((n + 1, m), dtype=np.int64)
    VM[0, 0] = 1
    for I in range(1, n + 1):
        CM[I, 0] = CM[I - 1, 0] + cost[I - 1, 0]
        DM[I, 0] = 3
        VM[I, 0] = 1
    for J in range(1, m):
        VM[0, J] = J + 1
        for I in range(1, n + 1):
            if g[I - 1, J] > max_elapsed:
                CM[I, J] = INF
                DM[I, J] = -1
                VM[I, J] = 0
                continue
            c = cost[I - 1, J]
            CM[I, J] = c + CM[I - 1, J - 1]
            DM[I, J] = 1
            VM[I, J] = VM[I - 1, J - 1]
            if c + CM[I, J - 1] < CM[I, J]:
                CM[I, J] = c + CM[I, J - 1]
                DM[I, J] = 2
                VM[I, J] = VM[I, J - 1]
            if c + CM[I - 1, J] < CM[I, J]:
                CM[I, J] = c + CM[I - 1, J]
                DM[I, J] = 3
                VM[I, J] = VM[I - 1, J]
    return CM, VM, DM


def run_matches(last_cm, last_vm):
    """Spec §5.2 (1-based VM, 0 = masked): list of (start VM, end J 1-based, distance)."""
    ends = []
    cur = None
    for J in range(1, len(last_cm) + 1):
        s = last_vm[J - 1]
        if s == 0:
            continue
        if not ends or s != cur:
            ends.append(J)
            cur = s
        elif last_cm[J - 1] < last_cm[ends[-1] - 1]:
            ends[-1] = J
    return [(int(last_vm[e - 1]), e, float(last_cm[e - 1])) for e in ends]


def valid_rows(v):
    return ~np.any(np.isnan(v), axis=1)


def pair(y, ty, x, tx, a, mid, cycle, max_elapsed):
    """Last row of one pair in the program's convention: (cm [m], start0 [m]) in ORIGINAL
    series columns after NaN removal (removed columns: +inf, -1), plus the matches
    [(start0, end0, dist)]."""
    m = x.shape[0]
    py = valid_rows(y)
    px = valid_rows(x)
    keys = np.nonzero(px)[0]
    cm_out = np.full(m, INF)
    vm_out = np.full(m, -1, dtype=np.int64)
    if len(keys) == 0:
        return cm_out, vm_out, []
    yc, tyc = y[py], ty[py]
    xc, txc = x[px], tx[px]
    if len(yc) == 0:
        # no valid pattern sample: the last row is the zero row (start = the column itself,
        # with the off-by-one: VM(1, J) = J)
        last_cm = np.zeros(len(keys))
        last_vm = np.arange(1, len(keys) + 1)
        last_vm[0] = 1
    else:
        cost, g = local_cost(yc, tyc, xc, txc, a, mid, cycle)
        CM, VM, _ = twdtw_matrices(cost, g, max_elapsed)
        last_cm, last_vm = CM[-1], VM[-1]
    for jc, j in enumerate(keys):
        cm_out[j] = last_cm[jc]
        vm_out[j] = keys[last_vm[jc] - 1] if last_vm[jc] > 0 else -1
    ms = [(keys[s - 1], keys[e - 1], d) for (s, e, d) in run_matches(last_cm, last_vm)]
    return cm_out, vm_out, ms


def distance(last_cm):
    fin = last_cm[np.isfinite(last_cm)]
    return float(fin.min()) if len(fin) else INF


def nearest(dists, fill):
    best, lab = INF, fill
    for c, d in enumerate(dists):
        if d < best:
            best, lab = d, c
    return lab


def classify_intervals(matches_per_pattern, dx, breaks, overlap, theta, fill):
    """Spec §7.1. matches_per_pattern[c] = [(start0, end0, dist)] in column order."""
    labels, dists = [], []
    ov = np.float32(overlap)
    for q in range(len(breaks) - 1):
        b1, b2 = breaks[q], breaks[q + 1]
        best = list(theta)
        dd = best[0]
        label, dist = fill, INF
        for c, ms in enumerate(matches_per_pattern):
            for (s0, e0, d) in ms:
                d1, d2 = dx[s0], dx[e0]
                if d2 < b1 or d1 > b2:
                    continue
                r = np.float32(min(d2, b2) - max(d1, b1)) / np.float32(b2 - b1)
                if not (ov <= r <= np.float32(2) - ov):
                    continue
                if d >= best[c]:
                    continue
                best[c] = d
                if d < dd:
                    dd, label, dist = d, c, d
        labels.append(label)
        dists.append(dist)
    return labels, dists


def batch(y, ty, x, tx, a, mid, cycle, max_elapsed):
    """All pairs: cm [s][p][m], vm [s][p][m], matches[s][p] lists, distances [s][p]."""
    P, S, M = y.shape[0], x.shape[0], x.shape[1]
    cm = np.full((S, P, M), INF)
    vm = np.full((S, P, M), -1, dtype=np.int64)
    ms = [[None] * P for _ in range(S)]
    for s in range(S):
        for p in range(P):
            cm[s, p], vm[s, p], ms[s][p] = pair(y[p], ty[p], x[s], tx[s], a, mid, cycle,
                                                max_elapsed)
    d = np.array([[distance(cm[s, p]) for p in range(P)] for s in range(S)])
    return cm, vm, ms, d


def matches_arrays(ms, M):
    S, P = len(ms), len(ms[0])
    cnt = np.zeros((S, P), dtype=np.int64)
    st = np.full((S, P, M), -1, dtype=np.int64)
    en = np.full((S, P, M), -1, dtype=np.int64)
    di = np.full((S, P, M), INF)
    for s in range(S):
        for p in range(P):
            cnt[s, p] = len(ms[s][p])
            for k, (a, b, d) in enumerate(ms[s][p]):
                st[s, p, k], en[s, p, k], di[s, p, k] = a, b, d
    return cnt, st, en, di


# ----------------------------------------------------------------------------------------------
# Spec §9.1: the tiny two-band case

def doy(date):
    return date.timetuple().tm_yday


def tiny_inputs():
    import datetime as dt
    sd = [dt.date(2020, 1, 1) + dt.timedelta(days=16 * j) for j in range(12)]
    pd = [dt.date(2021, 2, 10) + dt.timedelta(days=16 * i) for i in range(4)]
    x = np.stack([np.array([0.1, 0.2, 0.5, 0.8, 0.6, 0.3, 0.1, 0.2, 0.6, 0.9, 0.5, 0.2]),
                  np.linspace(0.0, 1.0, 12)], axis=1)
    y = np.array([[0.2, 0.3], [0.6, 0.35], [0.85, 0.45], [0.4, 0.5]])
    tx = np.array([doy(d) for d in sd], dtype=np.float64)
    ty = np.array([doy(d) for d in pd], dtype=np.float64)
    dx = np.array([(d - dt.date(1970, 1, 1)).days for d in sd], dtype=np.float64)
    return y, ty, x, tx, dx


SPEC_LAST_ROW = [5.1772594881, 3.7676133435, 2.2320899606, 1.5253600147, 1.0930527748,
                 0.9064701322, 1.2246681506, 1.5358706974, 2.1075544061, 3.3458654765,
                 4.6672507991, 6.1696223177]
SPEC_CM = [
    [0.5851691874, 0.2782293294, 0.3372130835, 0.6153935466, 0.4741687733, 0.4530183007,
     0.9106995742, 1.2366131472, 1.5634066783, 1.8664298986, 1.6780526706, 1.6998159281],
    [1.8411532744, 1.0237503341, 0.5430335975, 0.5663957773, 0.5025791686, 0.8398511530,
     1.2588046526, 2.0482950354, 2.5141353854, 3.0975777564, 3.2415199919, 3.4403584955],
    [3.6160455695, 2.4120009313, 1.2529075393, 0.7963611050, 0.7818502280, 1.0673719828,
     1.6650395520, 2.2039349565, 3.0672878725, 3.7859462657, 4.6529871079, 5.0884930370],
    SPEC_LAST_ROW]
SPEC_VM = [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
           [1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
           [1, 1, 1, 2, 4, 5, 5, 6, 7, 8, 10, 10],
           [1, 1, 1, 1, 4, 4, 5, 5, 6, 7, 8, 10],
           [1, 1, 1, 1, 4, 4, 4, 4, 4, 4, 4, 8]]
SPEC_DM5 = [3, 3, 3, 3, 3, 1, 2, 2, 2, 2, 2, 1]
SPEC_G = [[40, 24, 8, 8, 24, 40, 56, 72, 88, 104, 120, 136],
          [56, 40, 24, 8, 8, 24, 40, 56, 72, 88, 104, 120],
          [72, 56, 40, 24, 8, 8, 24, 40, 56, 72, 88, 104],
          [88, 72, 56, 40, 24, 8, 8, 24, 40, 56, 72, 88]]
SPEC_COST_ROW1 = [0.5851691874, 0.2782293294, 0.3372130835, 0.6153935466, 0.4741687733,
                  0.4530183007, 0.9106995742, 1.2366131472, 1.5634066783, 1.8664298986,
                  1.6780526706, 1.6998159281]
SPEC_MASKED = {
    60.0: ([5.1772594881, INF, 2.2320899606, 1.5253600147, 1.0930527748, 0.9064701322,
            1.2246681506, 1.5358706974, 2.1075544061, 3.3458654765, INF, INF],
           [1, 0, 1, 1, 4, 4, 4, 4, 4, 4, 0, 0],
           [(1, 4, 1.5253600147), (4, 6, 0.9064701322)]),
    30.0: ([5.1772594881, INF, INF, INF, 1.0930527748, 0.9064701322, 1.2246681506,
            1.5358706974, INF, INF, INF, INF],
           [1, 0, 0, 0, 4, 4, 4, 4, 0, 0, 0, 0],
           [(1, 1, 5.1772594881), (4, 6, 0.9064701322)]),
}


def close(a, b, tol=1e-9):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    same_inf = np.isinf(a) == np.isinf(b)
    fin = np.isfinite(b)
    return bool(np.all(same_inf) and np.all(np.abs(a[fin] - b[fin]) <= tol))


def check_spec():
    y, ty, x, tx, _ = tiny_inputs()
    cost, g = local_cost(y, ty, x, tx)
    assert np.array_equal(g, np.array(SPEC_G)), g
    assert close(cost[0], SPEC_COST_ROW1, 1e-9)
    CM, VM, DM = twdtw_matrices(cost, g)
    assert np.all(CM[0] == 0)
    assert close(CM[1:], SPEC_CM, 1e-9)
    assert np.array_equal(VM, np.array(SPEC_VM))
    assert np.array_equal(DM[-1], np.array(SPEC_DM5))
    ms = run_matches(CM[-1], VM[-1])
    want = [(1, 4, 1.5253600147), (4, 6, 0.9064701322), (8, 12, 6.1696223177)]
    assert [(s, e) for s, e, _ in ms] == [(s, e) for s, e, _ in want]
    assert close([d for *_, d in ms], [d for *_, d in want])
    assert abs(distance(CM[-1]) - 0.9064701322) < 1e-9
    for me, (row, vm, wm) in SPEC_MASKED.items():
        CMm, VMm, _ = twdtw_matrices(cost, g, me)
        assert close(CMm[-1], row), (me, CMm[-1])
        assert list(VMm[-1]) == vm, (me, VMm[-1])
        got = run_matches(CMm[-1], VMm[-1])
        assert [(s, e) for s, e, _ in got] == [(s, e) for s, e, _ in wm], got
        assert close([d for *_, d in got], [d for *_, d in wm])
    print("spec §9.1: cost, g, CM, VM, DM, matches, distance, max_elapsed 60/30: all OK (1e-9)")


# ----------------------------------------------------------------------------------------------
# Synthetic data (spec §9.2, scaled down so that a debug-build interpreter runs it in seconds)

def class_curve(c, doys, band):
    """Smooth seasonal curve of class c in band `band` at the given days of year: one or two
    Gaussian bumps on a base level (NDVI/EVI-like)."""
    shapes = [  # (base, [(peak doy, width, amplitude)])
        (0.20, [(60.0, 30.0, 0.6)]),
        (0.25, [(150.0, 25.0, 0.5), (300.0, 30.0, 0.3)]),
        (0.30, [(230.0, 40.0, 0.45)]),
    ]
    base, bumps = shapes[c % len(shapes)]
    v = np.full_like(doys, base, dtype=np.float64)
    for (pk, wd, am) in bumps:
        dd = np.abs(doys - pk)
        dd = np.minimum(dd, 365.0 - dd)
        v = v + am * (0.8 if band else 1.0) * np.exp(-0.5 * (dd / wd) ** 2)
    return v + (0.05 * band)


def make_batch(seed, P, n_pat, S, years, B, nan_frac=0.0, step_ser=16,
               short_pattern=False):
    """Patterns: one year of class c, n_pat samples from DOY 1 to 351 (plus small noise).
    Series: `years` years every step_ser days from 2019-01-01 with per-series DOY jitter 0..15
    days; each year's class drawn at random. Returns y, ty, x, tx, dx, truth [S][years]."""
    rng = np.random.default_rng(seed)
    ty1 = 1.0 + np.round(np.linspace(0.0, 350.0, n_pat))   # one full year
    y = np.empty((P, n_pat, B))
    ty = np.empty((P, n_pat))
    for p in range(P):
        for b in range(B):
            y[p, :, b] = class_curve(p, ty1, b) + rng.normal(0, 0.01, n_pat)
        ty[p] = ty1
    if short_pattern and P > 1:  # pattern P-1 shorter: padded with NaN rows
        y[P - 1, n_pat - 3:, :] = np.nan
    d0 = 17897.0  # 2019-01-01 as days since 1970-01-01
    per_year = int(math.ceil(365.0 / step_ser))
    M = years * per_year
    x = np.empty((S, M, B))
    tx = np.empty((S, M))
    dx = np.empty((S, M))
    truth = rng.integers(0, P, size=(S, years))
    for s in range(S):
        jit = float(rng.integers(0, 16))
        days = d0 + jit + step_ser * np.arange(M)
        dx[s] = days
        tx[s] = np.array([doy_of_day_number(int(d)) for d in days], dtype=np.float64)
        for j in range(M):
            yr = min(int((days[j] - d0) // 365.25), years - 1)
            for b in range(B):
                x[s, j, b] = class_curve(truth[s, yr], np.array([tx[s, j]]), b)[0]
        x[s] += rng.normal(0, 0.02, (M, B))
    if nan_frac > 0:
        mask = rng.random((S, M)) < nan_frac
        band = rng.integers(0, B, size=(S, M))
        for s in range(S):
            for j in range(M):
                if mask[s, j]:
                    x[s, j, band[s, j]] = np.nan
    # round to 12 significant digits so the textual files are short and exact
    y = np.round(y, 6)
    x = np.round(x, 6)
    return y, ty, x, tx, dx, truth


def doy_of_day_number(d):
    import datetime as dt
    return (dt.date(1970, 1, 1) + dt.timedelta(days=d)).timetuple().tm_yday


# ----------------------------------------------------------------------------------------------
# Textual values

def write(name, values):
    path = os.path.join(OUT_DIR, name)
    with open(path, "w") as f:
        for v, suf in values:
            f.write(fmt_value(v, suf) + "\n")


# name, seed, P, n_pat, S, years, B, nan_frac, max_elapsed, short_pattern
CASES = [
    ("gen_a", 11, 3, 12, 6, 2, 2, 0.0, INF, False),
    ("gen_b", 12, 3, 10, 5, 2, 3, 0.1, 60.0, True),
]
PARAMS = (0.1, 50.0, 366.0)


def main():
    check_spec()
    os.makedirs(OUT_DIR, exist_ok=True)
    a, mid, cycle = PARAMS
    # --- tiny case, three max_elapsed values -------------------------------------------------
    y, ty, x, tx, dx = tiny_inputs()
    for tag, me in [("tiny", INF), ("tiny_me60", 60.0), ("tiny_me30", 30.0)]:
        ins = [(y[None], "f64"), (ty[None], "f64"), (x[None], "f64"), (tx[None], "f64"),
               (a, "f64"), (mid, "f64"), (cycle, "f64"), (me, "f64")]
        write(tag + ".in", ins)
        cm, vm, ms, d = batch(y[None], ty[None], x[None], tx[None], a, mid, cycle, me)
        write(tag + "_rows.out", [(cm, "f64"), (vm, "i64")])
        write(tag + "_dist.out", [(d, "f64")])
        write(tag + "_matches.out", [(v, suf) for v, suf in
                                     zip(matches_arrays(ms, x.shape[0]),
                                         ["i64", "i64", "i64", "f64"])])
    cost, g = local_cost(y, ty, x, tx)
    write("tiny_cost.out", [(cost[None, None], "f64")])
    # the whole accumulated matrix: rows I = 2..N+1 of CM and VM - 1 (tests/cases/twdtw/tiny.og
    # reads row r of the DP by running the pattern's first r samples)
    for tag, me in [("tiny", INF), ("tiny_me30", 30.0)]:
        CM, VM, _ = twdtw_matrices(cost, g, me)
        write(tag + "_matrices.out", [(CM[1:], "f64"), (VM[1:] - 1, "i64")])
    # interval classification of the tiny case: one pattern, two periods
    breaks = np.array([dx[0], dx[0] + 80.0, dx[-1]])
    cm, vm, ms, d = batch(y[None], ty[None], x[None], tx[None], a, mid, cycle, INF)
    lab, dis = classify_intervals(ms[0], dx, breaks, 0.5, [INF], 1)
    write("tiny_classify.in",
          [(y[None], "f64"), (ty[None], "f64"), (x[None], "f64"), (tx[None], "f64"),
           (a, "f64"), (mid, "f64"), (cycle, "f64"), (INF, "f64"), (dx[None], "f64"),
           (breaks, "f64"), (0.5, "f64"), (np.array([INF]), "f64"), (1, "i64")])
    write("tiny_classify.out", [(np.array([lab]), "i64"), (np.array([dis]), "f64")])
    print("tiny classify:", lab, dis)
    # --- generated batches ----------------------------------------------------------------
    for (name, seed, P, n_pat, S, years, B, nan_frac, me, short) in CASES:
        y, ty, x, tx, dx, truth = make_batch(seed, P, n_pat, S, years, B, nan_frac,
                                             short_pattern=short)
        M = x.shape[1]
        base = [(y, "f64"), (ty, "f64"), (x, "f64"), (tx, "f64"), (a, "f64"), (mid, "f64"),
                (cycle, "f64"), (me, "f64")]
        cm, vm, ms, d = batch(y, ty, x, tx, a, mid, cycle, me)
        write(name + ".in", base)
        write(name + "_rows.out", [(cm, "f64"), (vm, "i64")])
        write(name + "_dist.out", [(d, "f64")])
        write(name + "_matches.out", [(v, suf) for v, suf in
                                      zip(matches_arrays(ms, M), ["i64", "i64", "i64", "f64"])])
        fill = P
        labels = np.array([nearest(d[s], fill) for s in range(S)])
        write(name + "_auto.in", base + [(1000, "i64")])
        write(name + "_nearest.in", base + [(fill, "i64")])
        write(name + "_nearest.out", [(d, "f64"), (labels, "i64")])
        # yearly periods from 2019-01-01, thresholds: none for gen_a, finite for gen_b
        breaks = 17897.0 + 365.0 * np.arange(years + 1)
        theta = np.full(P, INF) if name == "gen_a" else np.array([INF, 3.0, 2.0])[:P]
        labs, dists = [], []
        for s in range(S):
            l, dd = classify_intervals(ms[s], dx[s], breaks, 0.5, theta, fill)
            labs.append(l)
            dists.append(dd)
        labs = np.array(labs)
        write(name + "_classify.in", base + [(dx, "f64"), (breaks, "f64"), (0.5, "f64"),
                                             (theta, "f64"), (fill, "i64")])
        write(name + "_classify.out", [(labs, "i64"), (np.array(dists), "f64")])
        acc = float(np.mean(labs == truth))
        print(f"{name}: P={P} n={n_pat} S={S} M={M} B={B} nan={nan_frac} max_elapsed={me}: "
              f"interval labels = truth for {acc:.0%} of the periods; distances min "
              f"{np.min(d):.4f} max {np.max(d):.4f}")


if __name__ == "__main__":
    main()
