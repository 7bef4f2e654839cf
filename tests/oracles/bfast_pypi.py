#!/usr/bin/env python3
"""Oracle (b) of spec shared/specs/bfast.md §8: PyPI `bfast` 0.7, python backend (the paper's
package; GPL, used only as an oracle) against the float64 NumPy reference
(bfast_reference.py) in the `seed` profile with `own_date` boundary, and its MOSUM means
against the `r` profile, on the spec's §9 sets.

Set up (measured here: bfast 0.7, numpy 1.23.5, pandas 1.5.3, scipy 1.11.4, scikit-learn 1.3.2,
pyopencl 2023.1.x, Python 3.11):

    python3 -m venv bfastenv && . bfastenv/bin/activate && pip install --upgrade pip
    pip install "numpy==1.23.5" "pandas<2" "scipy<1.12" "matplotlib<3.8" "pyopencl<2024" \
                "scikit-learn<1.4" wget wheel
    pip install --no-build-isolation --no-deps bfast==0.7
    python3 tests/oracles/bfast_pypi.py [PIXELS]

`benches/run.py --pypi-python bfastenv/bin/python` times it in that environment through
`python3 tests/oracles/bfast_pypi.py --time Y.npy n PIXELS REPS` (the first PIXELS rows of the
f32 stack Y.npy, NaN as -32768 int16; prints the median ms of REPS calls and the breaks' file).
"""

import datetime
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bfast_reference as ref  # noqa: E402
from bfast import BFASTMonitor  # noqa: E402


def pypi(Yi, n, f=23):
    M, N = Yi.shape
    dates = [datetime.datetime(2000, 1, 1) + datetime.timedelta(days=i) for i in range(N)]
    model = BFASTMonitor(dates[n], freq=f, k=3, hfrac=0.25, trend=True, level=0.05,
                         backend="python")
    model.fit(Yi.T.reshape(N, M, 1), dates, nan_value=-32768)
    return (model.breaks.reshape(M), model.means.reshape(M), model.magnitudes.reshape(M),
            model.valids.reshape(M))


def time_stack(path, n, pixels, reps):
    """The benchmark mode: median wall ms of `reps` fits of the first `pixels` rows."""
    import time
    Y = np.load(path)[:pixels]
    Yi = np.where(np.isnan(Y), -32768, Y).astype(np.int16)
    ms = []
    for _ in range(reps):
        t = time.perf_counter()
        brk, _, _, _ = pypi(Yi, n)
        ms.append((time.perf_counter() - t) * 1e3)
    print(f"pypi-bfast ms={float(np.median(ms)):.3f} pixels={len(Y)} "
          f"breaks={np.sum(brk >= 0)}")


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--time":
        time_stack(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
        return
    M = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    for seed, n in ((0, 128), (7, 64)):
        Yi, Y, _ = ref.spec_set(seed, n=n)
        Yi, Y = Yi[:M], Y[:M]
        q, means, mags, valids = pypi(Yi, n)
        brk = np.where(q >= 0, q + n, q)
        N = Y.shape[1]
        # the daily-date trick: t = 0..N-1 (t[n-1] = n-1 > 0), frequency 23
        ts = np.arange(N, dtype=np.float64)
        own = ref.run_seed(Y, ts, n, 23.0, 3, True, 0.25, ref.mosum_lambda(), 0.0, "own_date")
        r = ref.run_r(Y, n, 23)
        same = brk == own["brk"]
        ok = np.isfinite(r["mean"])
        mean_err = np.max(np.abs(means[ok] - r["mean"][ok]), initial=0)
        mag_err = np.max(np.abs(mags[ok] - own["magnitude"][ok])
                         / np.maximum(1, np.abs(own["magnitude"][ok])), initial=0)
        print(f"spec set seed {seed} (n = {n}): breaks equal to the reference's own_date "
              f"{np.sum(same)}/{M}, to the r profile {np.sum(brk == r['brk'])}/{M}; means vs r "
              f"profile max abs err {mean_err:.1e}; magnitudes max rel err {mag_err:.1e}; "
              f"valids equal {np.array_equal(valids, own['nv'])}")
        for i in np.flatnonzero(~same)[:10]:
            print(f"   pixel {i}: pypi {brk[i]} reference {own['brk'][i]}")


if __name__ == "__main__":
    main()
