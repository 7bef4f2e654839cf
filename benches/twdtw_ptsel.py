#!/usr/bin/env python3
"""Benchmarks of TWDTW and PtSel on the CPU backend (issue 8), against the NumPy float64
references of tests/oracles in the same run. Needs numpy and a release build
(`cargo build --release`); run from the repository root:

    python3 benches/twdtw_ptsel.py

TWDTW, cell updates per second (pattern samples × series samples × pairs / time):
  (a) many short pairs: 4 patterns of 45 samples (one year, 2 bands) × S series of 69 samples
      (3 years every 16 days), entry `distances` (one pair per thread, rolling column);
  (b) few long pairs: 1 pattern of 1000 samples × 4 series of 10 000 samples, entries
      `distances` and `distances_wavefront` (anti-diagonal wavefront inside each pair).
PtSel: ranks of an R × R stack with 30 acquisitions, depth 3 (K = 84), s = 3, entries `rank_wp`
(one pixel per thread) and `rank_ap` (one arc per thread), pixels per second.
The NumPy references are timed on a subset and scaled (their cost is linear in the pairs or
pixels); every timing of the program is the whole process (compile, JIT, I/O), median of 3.
"""

import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "oracles"))
import ptsel_reference as pref  # noqa: E402
import twdtw_reference as tref  # noqa: E402

OGHAM = os.path.join(ROOT, "target", "release", "ogham")
TW = (0.1, 50.0, 366.0)


def ogham(program, entry, arrays, scalars, runs=3):
    """Median wall time of `ogham run --backend cpu` and its first output."""
    with tempfile.TemporaryDirectory() as tmp:
        args = []
        for i, a in enumerate(arrays):
            path = os.path.join(tmp, f"in{i}.npy")
            np.save(path, a)
            args.append(path)
        cmd = [OGHAM, "run", "--backend", "cpu", "--entry", entry, "-o", tmp,
               os.path.join(ROOT, "programs", program)] + args + scalars
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            times.append(time.perf_counter() - start)
        return float(np.median(times)), np.load(os.path.join(tmp, "out0.npy"))


def twdtw_args(y, ty, x, tx):
    return [y, ty, x, tx], [f"{TW[0]}f64", f"{TW[1]}f64", f"{TW[2]}f64", "f64.inf"]


def reference_distances(y, ty, x, tx):
    _, _, _, d = tref.batch(y, ty, x, tx, TW[0], TW[1], TW[2], tref.INF)
    return d


def short_pairs(S):
    y, ty, x, tx, _, _ = tref.make_batch(1, 4, 45, S, 3, 2, nan_frac=0.1, step_ser=16)
    x, tx = x[:, :69], tx[:, :69]
    cells = 4 * 45 * 69 * S
    arrays, scalars = twdtw_args(y, ty, x, tx)
    t, d = ogham("twdtw.og", "distances", arrays, scalars)
    sub = 20
    start = time.perf_counter()
    d_ref = reference_distances(y, ty, x[:sub], tx[:sub])
    t_ref = (time.perf_counter() - start) * S / sub
    err = np.nanmax(np.abs(np.where(np.isinf(d[:sub]), 0, d[:sub] - d_ref)))
    print(f"TWDTW (a) {S} series x 4 patterns, 45 x 69: ogham {t:.2f} s "
          f"({cells / t / 1e6:.0f} M cells/s); NumPy reference {t_ref:.0f} s (from {sub} series,"
          f" {cells / t_ref / 1e6:.2f} M cells/s); ratio {t_ref / t:.0f}x; max |diff| {err:.1e}")


def long_pairs():
    n, m, S = 1000, 10000, 4
    rng = np.random.default_rng(2)
    ty = np.linspace(1.0, 365.0, n)[None]
    y = (0.4 + 0.2 * np.sin(2 * np.pi * ty / 365.0))[..., None]
    tx = np.tile(1.0 + (np.arange(m) * 16.0) % 365.0, (S, 1))
    x = (0.4 + 0.2 * np.sin(2 * np.pi * tx / 365.0) + rng.normal(0, 0.02, (S, m)))[..., None]
    cells = n * m * S
    arrays, scalars = twdtw_args(y, ty, x, tx)
    for entry in ("distances", "distances_wavefront"):
        t, _ = ogham("twdtw.og", entry, arrays, scalars, runs=1)
        print(f"TWDTW (b) 1 pattern of {n} x {S} series of {m}, {entry}: ogham {t:.2f} s "
              f"({cells / t / 1e6:.0f} M cells/s)")


def ptsel(R):
    _, _, _, _, phi = pref.make_stack(3, R, R, 30, 3, 0.08, 0.3)
    for entry in ("rank_wp", "rank_ap"):
        t, rank = ogham("ptsel.og", entry, [phi], ["3i64", "false"])
        print(f"PtSel {R}x{R}, K = {phi.shape[0]}, {entry}: ogham {t:.2f} s "
              f"({R * R / t:.0f} pixels/s)")
    start = time.perf_counter()
    ref = pref.rank_vectorised(phi, 3, "max")
    t_ref = time.perf_counter() - start
    err = np.nanmax(np.abs(rank - ref))
    print(f"PtSel {R}x{R}: NumPy reference (vectorised by offset) {t_ref:.2f} s "
          f"({R * R / t_ref:.0f} pixels/s); max |diff| {err:.1e}")


if __name__ == "__main__":
    short_pairs(int(sys.argv[1]) if len(sys.argv) > 1 else 20000)
    long_pairs()
    ptsel(128)
