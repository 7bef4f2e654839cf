#!/usr/bin/env python3
"""Micro benchmarks of the CPU backend against hand-written Rust+rayon baselines, in one run.

    cargo build --release
    (cd benches/baseline && cargo build --release)
    python3 benches/micro.py [N]          # N elements for the streaming benchmarks (50 000 000)

Both sides time only the operation: Ogham's kernel times (OGHAM_PROFILE, summed over the
launches of the entry point) and the baseline's own timer; medians of 5 runs. Inputs are the
same numbers on both sides; the outputs' checksums are compared. Bandwidth counts the bytes an
implementation must move (read inputs, write outputs) against the machine's ~20 GB/s.
"""

import os
import re
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OGHAM = os.path.join(ROOT, "target", "release", "ogham")
BASELINE = os.path.join(ROOT, "benches", "baseline", "target", "release", "ogham-baselines")


def ogham(program, inputs):
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, a in enumerate(inputs):
            paths.append(os.path.join(tmp, f"in{i}.npy"))
            np.save(paths[-1], a)
        times, out = [], None
        for _ in range(5):
            run = subprocess.run(
                [OGHAM, "run", "--backend", "cpu", "-o", tmp,
                 os.path.join(ROOT, "benches", "micro", program)] + paths,
                check=True, capture_output=True, text=True,
                env=dict(os.environ, OGHAM_PROFILE="1"))
            times.append(sum(float(m) for m in re.findall(r"\) ([0-9.]+) ms", run.stderr)))
            out = np.load(os.path.join(tmp, "out0.npy"))
        return float(np.median(times)), out


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50_000_000
    base = {}
    for line in subprocess.run([BASELINE, str(n)], check=True, capture_output=True,
                               text=True).stdout.splitlines():
        name, ms, check = line.split()
        base[name] = (float(ms), float(check))
    xs = ((np.arange(n) % 1000) * np.float32(0.001)).astype(np.float32)
    m = 512
    a = ((np.arange(m * m) % 7) * 0.5).astype(np.float32).reshape(m, m)
    b = ((np.arange(m * m) % 5) * 0.25).astype(np.float32).reshape(m, m)
    cases = [
        ("map", "map.og", [xs], lambda o: float(o[n // 2]), 8 * n),
        ("reduce", "reduce.og", [xs], lambda o: float(o), 4 * n),
        ("scan", "scan.og", [xs], lambda o: float(o[-1]), 8 * n),
        ("filter", "filter.og", [xs], lambda o: float(len(o)), 4 * n + 4 * int((xs > 0.5).sum())),
        ("matmul", "matmul.og", [a, b], lambda o: float(o.astype(np.float64).sum()), None),
    ]
    print(f"{'benchmark':10s} {'ogham ms':>9s} {'rust ms':>8s} {'ratio':>6s} {'ogham GB/s':>10s} "
          f"{'rust GB/s':>9s}  checksums")
    for name, program, inputs, check, nbytes in cases:
        t, out = ogham(program, inputs)
        tb, cb = base[name]
        if nbytes is None:
            flops = 2 * m ** 3
            rate = f"{flops / t / 1e6:7.1f} GF" + f" {flops / tb / 1e6:8.1f} GF"
        else:
            rate = f"{nbytes / t / 1e6:10.1f} {nbytes / tb / 1e6:9.1f}"
        print(f"{name:10s} {t:9.1f} {tb:8.1f} {t / tb:6.2f} {rate}  {check(out):.6g} / {cb:.6g}")


if __name__ == "__main__":
    main()
