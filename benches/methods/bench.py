#!/usr/bin/env python3
"""Two methods outside the bundled four, written by a user in Ogham (`programs/trend.og`:
Mann-Kendall and Theil-Sen; `programs/ewmacd.og`: EWMACD) and with numba `prange`
(`numba_methods.py`), run side by side on the same generated stacks (see benches/README.md).

    benches/methods/setup.sh                                  # the venv: numba 0.68.1, NumPy
    benches/methods/.venv/bin/python benches/methods/bench.py [--reps 7] [--scale 1.0]

Ogham runs as `ogham run --backend cpu` (`OGHAM_BIN`, default target/release/ogham) with
`OGHAM_PROFILE=1`: `kernels` is the sum of its kernel times (the compiled code's work; the input
and output of the .npy files excluded), `process` the whole process. numba's time is the call's
(arrays in memory, compiled beforehand: the first call is not timed). Both use every core.
Outputs are compared before anything is timed; the runs take turns, and every figure is a
median.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numba
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import numba_methods as nm  # noqa: E402

OGHAM = os.environ.get("OGHAM_BIN") or os.path.join(ROOT, "target", "release", "ogham")
PROFILE = re.compile(r"ogham-profile: kernel \S+ \([^)]*\) ([0-9.]+) ms")


def ogham_run(prog, args, out):
    cmd = [OGHAM, "run", "--backend", "cpu", "-o", out, os.path.join(ROOT, prog)] + args
    t = time.perf_counter()
    p = subprocess.run(cmd, env=dict(os.environ, OGHAM_PROFILE="1"), capture_output=True,
                       text=True)
    wall = (time.perf_counter() - t) * 1e3
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
    return wall, sum(float(m) for m in PROFILE.findall(p.stderr))


def outputs(out, count):
    return [np.load(os.path.join(out, f"out{i}.npy")) for i in range(count)]


def stack(rng, m, N, missing):
    """Seasonal series with noise, a drop in half of the pixels after the middle, missing values;
    irregular dates in years."""
    years = N / 23
    t = np.sort(rng.uniform(0, years, N))
    amp = rng.uniform(0.05, 0.3, (m, 1))
    Y = 0.5 + amp * np.sin(2 * np.pi * t + rng.uniform(0, 2 * np.pi, (m, 1)))
    Y += rng.normal(0, 0.03, (m, N))
    drop = (rng.random(m) < 0.5)[:, None] & (t[None, :] >= rng.uniform(years / 2, years, (m, 1)))
    Y -= np.where(drop, 0.2, 0)
    Y[rng.random((m, N)) < missing] = np.nan
    return Y.astype(np.float32), t


def check_trend(got, ref):
    exact = all(np.array_equal(got[i], ref[i].astype(got[i].dtype)) for i in (5, 7))
    close = all(np.allclose(got[i], ref[i], rtol=1e-5, atol=1e-6, equal_nan=True)
                for i in (0, 1, 2, 3, 4, 6))
    return exact and close


def check_ewmacd(got, ref):
    return np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1])


def bench(name, prog, files, scalars, n_out, numba_call, check, reps, work):
    out = os.path.join(work, f"out_{name}")
    os.makedirs(out, exist_ok=True)
    args = files + scalars
    ogham_run(prog, args, out)  # compiles into the cache
    ref = numba_call()          # compiles numba's functions
    ok = check(outputs(out, n_out), ref)
    print(f"  check {name}: Ogham vs numba {'OK' if ok else 'FAILED'}")
    proc, kern, nb = [], [], []
    for _ in range(reps):
        w, k = ogham_run(prog, args, out)
        proc.append(w)
        kern.append(k)
        t = time.perf_counter()
        numba_call()
        nb.append((time.perf_counter() - t) * 1e3)
    med = statistics.median
    return ok, [name, f"{med(proc):.0f}", f"{med(kern):.0f}", f"{med(nb):.0f}",
                f"**{med(kern) / med(nb):.2f}**", f"{med(proc) / med(nb):.2f}"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies the number of pixels")
    ap.add_argument("--work", default=None)
    args = ap.parse_args()
    if not os.path.exists(OGHAM):
        sys.exit(f"{OGHAM} is missing: run `cargo build --release` first (or set OGHAM_BIN)")
    work = args.work or tempfile.mkdtemp(prefix="ogham-methods-")
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(11)
    print(f"cores: {os.cpu_count()}, numba {numba.__version__} "
          f"({numba.config.NUMBA_NUM_THREADS} threads), numpy {np.__version__}, ogham {OGHAM}")
    rows, ok = [], True

    m, N = max(1, int(10000 * args.scale)), 96
    Y, t = stack(rng, m, N, 0.3)
    np.save(os.path.join(work, "trend_Y.npy"), Y)
    np.save(os.path.join(work, "trend_t.npy"), t)
    good, row = bench(f"Mann-Kendall + Theil-Sen, {m} × {N}", "programs/trend.og",
                      [os.path.join(work, f) for f in ("trend_Y.npy", "trend_t.npy")], [], 8,
                      lambda: nm.trend(Y, t), check_trend, args.reps, work)
    ok &= good
    rows.append(row)

    m, N = max(1, int(20000 * args.scale)), 184
    Y, t = stack(rng, m, N, 0.3)
    np.save(os.path.join(work, "ewmacd_Y.npy"), Y)
    np.save(os.path.join(work, "ewmacd_t.npy"), t)
    scalars = ["92i64", "2i64", "0.3f64", "3f64", "1.5f64", "3i64"]
    good, row = bench(f"EWMACD, {m} × {N}", "programs/ewmacd.og",
                      [os.path.join(work, f) for f in ("ewmacd_Y.npy", "ewmacd_t.npy")], scalars,
                      2, lambda: nm.ewmacd(Y, t, 92, 2, 0.3, 3.0, 1.5, 3), check_ewmacd,
                      args.reps, work)
    ok &= good
    rows.append(row)

    print("\n| method | Ogham process ms | Ogham kernels ms | numba ms | kernels / numba "
          "| process / numba |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print("\nall output checks passed" if ok else "\nSOME OUTPUT CHECKS FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
