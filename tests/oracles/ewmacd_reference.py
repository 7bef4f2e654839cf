#!/usr/bin/env python3
"""A float64 NumPy reference of EWMACD as `programs/ewmacd.og` defines it (docs/ewmacd.md), and
the golden values of its corpus case, on data generated here from fixed seeds.

    python/.venv/bin/python tests/oracles/ewmacd_reference.py      # NumPy only (python/requirements.txt)

Writes tests/cases/ewmacd/{seasonal,edge}.{in,out}. The reference is written from the method's
definition, not from the Ogham source: the fits are `numpy.linalg.lstsq` on the design's valid
training rows (the Ogham program solves the normal equations with a Gauss–Jordan inverse), the
EWMA and its limit follow the formulas directly (`(1 - λ)**(2j)` as a power). Codes are integers
(a truncated ratio), so the comparison is exact; the script checks that no ratio lies within
1e-9 of an integer, where the two computations could round to different sides.
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from textvalues import fmt_value  # noqa: E402

OUT = os.path.join(HERE, "..", "cases", "ewmacd")


def design(t, k):
    cols = [np.ones_like(t)]
    for j in range(1, k + 1):
        a = 2 * np.pi * np.mod(j * t, 1.0)
        cols += [np.cos(a), np.sin(a)]
    return np.stack(cols, axis=1)


def fit(x, y, rows):
    beta, *_ = np.linalg.lstsq(x[rows], y[rows], rcond=None)
    r = y[rows] - x[rows] @ beta
    dof = rows.sum() - x.shape[1]
    sigma = np.sqrt(r @ r / dof) if dof > 0 else np.nan
    return beta, sigma


def pixel(x, y, n, lam, L, xbar, persistence, margins):
    """(first, codes) of one series `y` (float64, NaN = missing); `margins` collects how close
    each ratio z/limit came to an integer."""
    N, p = x.shape
    codes = np.zeros(N, dtype=np.int32)
    train = np.zeros(N, dtype=bool)
    train[:n] = ~np.isnan(y[:n])
    if train.sum() < p:
        return -2, codes
    beta0, sigma0 = fit(x, y, train)
    if not np.isfinite(sigma0):
        return -2, codes
    kept = train & (np.abs(np.where(train, y, 0) - x @ beta0) <= xbar * sigma0)
    if kept.sum() < p + 1:
        return -2, codes
    beta, sigma = fit(x, y, kept)
    if not sigma > 0:
        return -2, codes
    z, j, code, run, start, first = 0.0, 0, 0, 0, 0, -1
    c = lam / (2 - lam)
    for i in range(n, N):
        if np.isnan(y[i]):
            codes[i] = code
            continue
        j += 1
        z = lam * (y[i] - x[i] @ beta) + (1 - lam) * z
        ratio = z / (L * sigma * np.sqrt(c * (1 - (1 - lam) ** (2 * j))))
        margins.append(abs(ratio - np.round(ratio)))
        code = int(np.trunc(ratio))
        codes[i] = code
        run = run + 1 if code < 0 else 0
        if run == 1:
            start = i
        if first < 0 and run == persistence:
            first = start
    return first, codes


def ewmacd(Y, t, n, k, lam, L, xbar, persistence):
    x = design(t, k)
    margins = []
    firsts, codes = [], []
    for y in np.asarray(Y, dtype=np.float64):
        f, c = pixel(x, y, n, lam, L, xbar, persistence, margins)
        firsts.append(f)
        codes.append(c)
    return np.array(firsts, dtype=np.int64), np.array(codes, dtype=np.int32), margins


def scene(rng, m, years, per_year, missing, disturbed):
    """A stack of seasonal series (NDVI-like) with noise, missing values and, in a share of the
    pixels, a drop after the training period; irregular dates."""
    N = years * per_year
    t = np.sort(rng.uniform(0, years, N))
    amp = rng.uniform(0.05, 0.3, (m, 1))
    phase = rng.uniform(0, 2 * np.pi, (m, 1))
    Y = 0.5 + amp * np.sin(2 * np.pi * t + phase) + 0.1 * amp * np.cos(4 * np.pi * t)
    Y += rng.normal(0, 0.03, (m, N))
    drop = rng.random(m) < disturbed
    when = rng.uniform(years / 2, years, m)
    Y -= np.where(drop[:, None] & (t[None, :] >= when[:, None]), rng.uniform(0.1, 0.4, (m, 1)), 0)
    Y[rng.random((m, N)) < missing] = np.nan
    return Y.astype(np.float32), t


def write_case(name, args, outs):
    Y, t, n, k, lam, L, xbar, persistence = args
    with open(os.path.join(OUT, f"{name}.in"), "w") as fh:
        fh.write(fmt_value(Y, "f32") + "\n" + fmt_value(t, "f64") + "\n")
        fh.write(f"{n}i64 {k}i64 {lam!r}f64 {L!r}f64 {xbar!r}f64 {persistence}i64\n")
    with open(os.path.join(OUT, f"{name}.out"), "w") as fh:
        fh.write(fmt_value(outs[0], "i64") + "\n" + fmt_value(outs[1], "i32") + "\n")


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20261129)
    Y, t = scene(rng, 24, 4, 23, 0.3, 0.5)
    cases = {"seasonal": (Y, t, 46, 2, 0.3, 3.0, 1.5, 3)}
    # Edge pixels: all missing, too few training observations, no training observation,
    # missing values only after the training period, and one harmonic with lambda = 1.
    Y2, t2 = scene(rng, 6, 3, 12, 0.1, 0.5)
    Y2[0] = np.nan
    Y2[1, :18] = np.nan
    Y2[1, [2, 5, 9]] = 0.5
    Y2[2, :18] = np.nan
    Y2[3, 18:] = np.nan
    cases["edge"] = (Y2, t2, 18, 1, 1.0, 2.0, 2.0, 2)
    worst = 1.0
    for name, args in cases.items():
        Yc, tc, n, k, lam, L, xbar, persistence = args
        first, codes, margins = ewmacd(Yc, tc, n, k, lam, L, xbar, persistence)
        worst = min([worst] + margins)
        write_case(name, args, (first, codes))
        print(f"{name}: {Yc.shape}, first = {first.tolist()}")
    print(f"closest ratio to an integer: {worst:.3g}")
    assert worst > 1e-9, "a code sits on an integer boundary: change the seed"


if __name__ == "__main__":
    main()
