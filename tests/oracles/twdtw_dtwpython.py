#!/usr/bin/env python3
"""Independent check of the TWDTW last rows and distances with dtw-python (spec §8.2).

    pip install dtw-python==1.9.0
    python3 tests/oracles/twdtw_dtwpython.py

Versions used: Python 3.11.7, NumPy 2.4.6, dtw-python 1.9.0 (with SciPy 1.17.1).

For every pair of the golden cases written by twdtw_reference.py (the spec's tiny case with
max_elapsed = inf / 60 / 30, and the generated batches gen_a, gen_b), this builds the N x M
local-cost matrix of spec §3 (its own few lines, not the reference's function), sets the masked
cells (g > max_elapsed) of columns 2..M to the finite sentinel 1e12, stacks a zero row on top and
runs `dtw.dtw(..., step_pattern=dtw.symmetric1, keep_internals=True)`; the last row of
`costMatrix` (values >= 1e11 meaning +inf) and its minimum (the distance) are compared with the
NumPy transcription, which wrote the golden files. Samples with a NaN band are removed first and
the columns mapped back, as in the program. dtw-python gives no start columns, so VM and the
matches are checked by the transcription only. Prints the largest absolute difference.
"""

import math
import os
import sys

import numpy as np
import dtw

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import twdtw_reference as ref  # noqa: E402  (inputs and the transcription's last rows)

SENTINEL = 1e12


def dtwpython_last_row(y, ty, x, tx, a, mid, cycle, max_elapsed):
    dist = np.sqrt(((y[:, None, :] - x[None, :, :]) ** 2).sum(axis=2))
    td = np.abs(ty[:, None] - tx[None, :])
    g = np.minimum(td, cycle - td)
    lcm = dist + 1.0 / (1.0 + np.exp(-a * (g - mid)))
    masked = g > max_elapsed
    masked[:, 0] = False                      # the first column is never masked
    lcm[masked] = SENTINEL
    lcm0 = np.vstack([np.zeros((1, lcm.shape[1])), lcm])
    al = dtw.dtw(lcm0, step_pattern=dtw.symmetric1, keep_internals=True)
    row = al.costMatrix[-1, :].copy()
    row[row >= SENTINEL / 10] = math.inf
    return row


def compare(y, ty, x, tx, a, mid, cycle, me):
    """Largest |dtw-python - transcription| over one pair's last row and distance."""
    cm_ref, _, _ = ref.pair(y, ty, x, tx, a, mid, cycle, me)
    py, px = ref.valid_rows(y), ref.valid_rows(x)
    row = np.full(x.shape[0], math.inf)
    row[px] = dtwpython_last_row(y[py], ty[py], x[px], tx[px], a, mid, cycle, me)
    assert np.array_equal(np.isinf(row), np.isinf(cm_ref)), (row, cm_ref)
    fin = np.isfinite(row)
    err_row = float(np.max(np.abs(row[fin] - cm_ref[fin]))) if fin.any() else 0.0
    d_py = float(row[fin].min()) if fin.any() else math.inf
    err_d = abs(d_py - ref.distance(cm_ref)) if fin.any() else 0.0
    return err_row, err_d


def main():
    a, mid, cycle = ref.PARAMS
    y, ty, x, tx, _ = ref.tiny_inputs()
    worst = 0.0
    for me in [math.inf, 60.0, 30.0]:
        er, ed = compare(y, ty, x, tx, a, mid, cycle, me)
        print(f"tiny max_elapsed={me}: last row max |diff| {er:.3e}, distance |diff| {ed:.3e}")
        worst = max(worst, er, ed)
    for (name, seed, P, n_pat, S, years, B, nan_frac, me, short) in ref.CASES:
        y, ty, x, tx, dx, truth = ref.make_batch(seed, P, n_pat, S, years, B, nan_frac,
                                                 short_pattern=short)
        er_all = ed_all = 0.0
        for s in range(S):
            for p in range(P):
                er, ed = compare(y[p], ty[p], x[s], tx[s], a, mid, cycle, me)
                er_all, ed_all = max(er_all, er), max(ed_all, ed)
        print(f"{name} ({P}x{S} pairs): last rows max |diff| {er_all:.3e}, "
              f"distances max |diff| {ed_all:.3e}")
        worst = max(worst, er_all, ed_all)
    print(f"dtw-python {dtw.__version__ if hasattr(dtw, '__version__') else '?'}: worst {worst:.3e}")
    assert worst < 1e-9, worst


if __name__ == "__main__":
    main()
