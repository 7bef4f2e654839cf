#!/usr/bin/env python3
"""Fixed cost of a call from Python: the first `load` (compile), a second `load` in a fresh
process (the disk cache), the first call, and the median of later calls of a trivial entry on a
small chunk, of `ogham.bfast_monitor` on a 16x16-pixel chunk and of an empty NumPy ufunc call for
scale. Prints one line per figure.

    python benches/python/overhead.py [--calls 2000]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

TRIVIAL = """
entry first [m][n] (xs: [m][n]f32) : [m]f32 = map (\\r -> r[0] + 1f32) xs
"""


def median_call(f, calls):
    times = []
    for _ in range(calls):
        t0 = time.perf_counter_ns()
        f()
        times.append(time.perf_counter_ns() - t0)
    return np.median(times) / 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    import ogham

    t0 = time.perf_counter()
    mod = ogham.load(TRIVIAL)
    load = time.perf_counter() - t0
    if args.child:
        print(f"{load * 1e3:.1f}")
        return
    xs = np.random.default_rng(0).random((256, 64), dtype=np.float32)
    t0 = time.perf_counter()
    mod.first(xs)
    first = time.perf_counter() - t0
    print(f"load (compile, fresh cache)        {load * 1e3:8.1f} ms")
    again = subprocess.run([sys.executable, __file__, "--child"], check=True, text=True,
                           capture_output=True, env=os.environ).stdout.strip()
    print(f"load in a new process (disk cache)  {float(again):8.1f} ms")
    print(f"first call                          {first * 1e3:8.2f} ms")
    print(f"later calls, [256][64]f32 -> [256]  {median_call(lambda: mod.first(xs), args.calls):8.3f}"
          " ms (median)")
    y = np.random.default_rng(1).random((256, 184), dtype=np.float32)
    ogham.bfast_monitor(y, 92, freq=23)
    print(f"bfast_monitor, 256 pixels x 184     "
          f"{median_call(lambda: ogham.bfast_monitor(y, 92, freq=23), args.calls // 10):8.3f}"
          " ms (median)")
    print(f"numpy xs.sum(axis=1), for scale     {median_call(lambda: xs.sum(axis=1), args.calls):8.3f}"
          " ms (median)")


if __name__ == "__main__":
    if "OGHAM_CACHE_DIR" not in os.environ:
        os.environ["OGHAM_CACHE_DIR"] = tempfile.mkdtemp(prefix="ogham-overhead-")
    main()
