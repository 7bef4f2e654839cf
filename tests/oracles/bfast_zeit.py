#!/usr/bin/env python3
"""Oracle (a) of spec shared/specs/bfast.md §8: zeit-cdts 2.2.0's compiled core (a Rust port of
R bfastmonitor(history = "all"), GPL-2.0-or-later, used only as an oracle), compared with the
float64 NumPy reference (bfast_reference.py) on the spec's §9 sets and on the cloudy sets of the
golden files (regular time, trend on: what zeit supports).

Set up (measured here: zeit-cdts 2.2.0 cp311 wheel, numpy 2.x in the venv; only `_core` is
loaded, `import zeit` would need torch, rasterio, ...):

    python3 -m venv zeitenv && . zeitenv/bin/activate && pip install numpy
    pip download --no-deps zeit-cdts==2.2.0 -d wheels
    mkdir zeitwheel && cd zeitwheel && python -m zipfile -e ../wheels/zeit_cdts-2.2.0-*.whl .
    python3 tests/oracles/bfast_zeit.py PATH/zeitwheel/zeit/_core.cpython-311-x86_64-linux-gnu.so
"""

import importlib.util
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bfast_reference as ref  # noqa: E402


def load(path):
    spec = importlib.util.spec_from_file_location("_core", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def zeit(core, Y, n, f, k=3, h=0.25, end=10, level=0.05, t0=2000.0):
    out = core.bfastmonitor.fit_bfast_monitor_batch(
        np.ascontiguousarray(Y, dtype=np.float64), t0, t0 + n / f, int(f), order=k, h=h,
        period=end, alpha=level, min_valid=6, n_jobs=1)
    out = np.asarray(out)
    brk = np.where(out[6] == 0, -2, np.where(np.isnan(out[1]), -1, out[1])).astype(np.int64)
    return dict(brk=brk, time=out[0], magnitude=out[2], sigma=out[3], nh=out[4])


def compare(name, core, Y, n, f, k=3, h=0.25, end=10, level=0.05):
    Y = np.asarray(Y, dtype=np.float64)
    z = zeit(core, Y, n, f, k, h, end, level)
    r = ref.run_r(Y, n, f, k, True, h, end, level, t0=2000.0)
    same = z["brk"] == r["brk"]
    ok = (r["brk"] >= -1) & np.isfinite(r["magnitude"])
    mag = np.max(np.abs(z["magnitude"][ok] - r["magnitude"][ok])
                 / np.maximum(1, np.abs(r["magnitude"][ok])), initial=0)
    fin = ok & (r["sigma"] > 0)
    sig = np.max(np.abs(z["sigma"][fin] - r["sigma"][fin]) / r["sigma"][fin], initial=0)
    bt = (r["brk"] >= 0) & same
    tim = np.max(np.abs(z["time"][bt] - r["time"][bt]), initial=0)
    print(f"{name}: breaks equal {np.sum(same)}/{len(same)}; magnitude max rel err {mag:.1e}; "
          f"sigma max rel err {sig:.1e}; break time max abs err {tim:.1e}")
    for i in np.flatnonzero(~same):
        print(f"   pixel {i}: zeit {z['brk'][i]} reference {r['brk'][i]} (n_h {r['nh'][i]}, "
              f"n_valid {r['nv'][i]}, sigma {r['sigma'][i]:.3g})")


def main():
    core = load(sys.argv[1])
    _, Y, _ = ref.spec_set(0)
    compare("spec set seed 0 (n = 128)", core, Y, 128, 23)
    _, Y, _ = ref.spec_set(7, n=64)
    compare("spec set seed 7 (n = 64)", core, Y, 64, 23)
    compare("spec set seed 7, (h, end, level) = (0.5, 6, 0.01)", core, Y[:300], 64, 23, 3, 0.5,
            6, 0.01)
    for (name, seed, M, N, n, f, k, trend, h, end, level, f32) in ref.MONITOR_CASES:
        if not trend:
            continue
        Y, _ = ref.cloudy_set(seed, M, N, n, f, k, 1e-4 if f32 else 1.0)
        compare(f"golden set {name}", core, Y, n, f, k, h, end, level)
    Y, _ = ref.cloudy_set(5, 1000, 256, 128, 23, 3)
    compare("cloudy set 1000 px (50-90 % clouds, adversarial)", core, Y, 128, 23)


if __name__ == "__main__":
    main()
