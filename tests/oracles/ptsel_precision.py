#!/usr/bin/env python3
"""PtSel precision / recall of persistent-scatterer detection (spec shared/specs/ptsel.md §9.2),
with the NumPy reference and with the Ogham program.

    python3 tests/oracles/ptsel_precision.py [--ogham target/debug/ogham] [--skip-ogham]

Versions used: Python 3.11.7, NumPy 2.4.6.

Part A (NumPy only): the spec's settings (48×48, N = 30 every 12 days, s = 3, PS probability
0.08; σ, depth, ramp as in the spec's first table; and the 32×32 model-grid table), threshold τ =
99.9th percentile of the ranks of a 96×96 null stack (pixels at least s from the border),
precision and recall over the detectable PS. Compare with the spec's table (one seed each there
too, so the numbers are ranges, not goldens).

Part B (Ogham): the program `programs/ptsel.og` (entries rank_wp and rank_ap) run by the
reference interpreter on generated stacks small enough for a debug build; its ranks are
compared with the NumPy reference (max |diff|; target 1e-5, f64 gives ~1e-15) and precision /
recall at the NumPy null threshold are computed from the PROGRAM's ranks.
"""

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptsel_reference as ref  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def study(seed, R, nacq, depth, s, ps_prob, sigma, grid=None, v_sd=0.0, ramp=0.0,
          null_seed=None):
    psi, ps, t, pairs, phi = ref.make_stack(seed, R, R, nacq, depth, ps_prob, sigma, v_sd=v_sd,
                                            ramp=ramp)
    kw = {}
    if grid is not None:
        alpha = np.array([4 * math.pi * (t[b] - t[a]) / ref.LAMBDA for a, b in pairs])
        kw = dict(alpha=alpha, beta=np.zeros(len(pairs)), hs=[0.0], vs=grid)
    tau, null_mean = ref.null_threshold(null_seed if null_seed else seed + 1000, nacq, depth, s,
                                        **kw)
    rank = ref.rank_vectorised(phi, s, "max", **kw)
    prec, rec, ntruth, niso = ref.precision_recall(rank, ps, s, tau)
    truth = ref.detectable(ps, s)
    return dict(K=len(pairs), null_mean=null_mean, tau=tau, ps_rank=float(rank[truth].mean()),
                prec=prec, rec=rec, ntruth=ntruth, niso=niso, phi=phi, ps=ps, rank=rank)


def part_a():
    print("Part A: NumPy reference, spec §9.2 settings (48x48, N=30, s=3, PS prob 0.08)")
    print(f"{'setting':28s} {'K':>4s} {'null':>6s} {'tau':>6s} {'PS rank':>8s} {'prec':>5s} "
          f"{'rec':>5s}  truth/isolated")
    rows = [("default sigma=0.3, d=3", dict(depth=3, sigma=0.3)),
            ("sigma=0.5", dict(depth=3, sigma=0.5)),
            ("sigma=0.7", dict(depth=3, sigma=0.7)),
            ("d=1", dict(depth=1, sigma=0.3)),
            ("d=5", dict(depth=5, sigma=0.3)),
            ("+ ramp up to pi", dict(depth=3, sigma=0.3, ramp=math.pi))]
    for name, kw in rows:
        r = study(1, 48, 30, s=3, ps_prob=0.08, null_seed=2, **kw)
        print(f"{name:28s} {r['K']:4d} {r['null_mean']:6.3f} {r['tau']:6.3f} {r['ps_rank']:8.3f} "
              f"{r['prec']:5.2f} {r['rec']:5.2f}  {r['ntruth']}/{r['niso']}")
    print("Model grid vs model-free (32x32, s=2, PS prob 0.1, sigma=0.3, v ~ N(0, 0.05^2) m/yr, "
          "V = -0.2..0.2 step 0.005)")
    V = np.round(np.arange(-0.2, 0.2 + 1e-9, 0.005), 6)
    for d in [1, 3, 5]:
        out = []
        for grid in [None, V]:
            r = study(3, 32, 30, d, 2, 0.1, 0.3, grid=grid, v_sd=0.05, null_seed=4)
            out.append(f"{r['ps_rank']:.3f} / {r['null_mean']:.3f} / {r['tau']:.3f} / "
                       f"prec {r['prec']:.2f} rec {r['rec']:.2f}")
        print(f"  d={d} K={r['K']:3d}: model-free {out[0]} | grid {out[1]}")


def run_ogham(ogham, entry, phi, s):
    with tempfile.TemporaryDirectory() as tmp:
        np.save(os.path.join(tmp, "phi.npy"), phi)
        t0 = time.time()
        subprocess.run([ogham, "run", "--entry", entry, "-o", tmp,
                        os.path.join(ROOT, "programs", "ptsel.og"),
                        os.path.join(tmp, "phi.npy"), f"{s}i64", "false"],
                       check=True)
        dt = time.time() - t0
        return np.load(os.path.join(tmp, "out0.npy")), dt


def part_b(ogham):
    print("Part B: the Ogham program (reference interpreter) on generated stacks with known PS")
    cases = [  # seed, R, N, depth, s, PS prob, sigma, entries
        (5, 24, 20, 3, 2, 0.1, 0.3, ["rank_ap", "rank_wp"]),
        (6, 24, 20, 3, 2, 0.1, 0.5, ["rank_ap", "rank_wp"]),
        (1, 48, 30, 3, 3, 0.08, 0.3, ["rank_ap"]),      # the spec's default setting (~1 min)
    ]
    for (seed, R, nacq, depth, s, prob, sigma, entries) in cases:
        r = study(seed, R, nacq, depth, s, prob, sigma, null_seed=seed + 100 if R < 48 else 2)
        for entry in entries:
            got, dt = run_ogham(ogham, entry, r["phi"], s)
            if entry == "rank_wp":
                assert np.array_equal(got, prev, equal_nan=True), "WP and AP differ"
            prev = got
            err = float(np.nanmax(np.abs(got - r["rank"])))
            assert np.array_equal(np.isnan(got), np.isnan(r["rank"]))
            prec, rec, ntruth, niso = ref.precision_recall(got, r["ps"], s, r["tau"])
            print(f"  {R}x{R} N={nacq} d={depth} K={r['K']} s={s} sigma={sigma} {entry}: "
                  f"max |rank - NumPy| = {err:.2e}; tau = {r['tau']:.3f} (null 96x96); "
                  f"precision {prec:.3f}, recall {rec:.3f} ({ntruth} detectable, {niso} "
                  f"isolated PS; {dt:.1f} s)")
            assert err < 1e-5


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ogham", default=os.path.join(ROOT, "target", "debug", "ogham"))
    ap.add_argument("--skip-ogham", action="store_true")
    args = ap.parse_args()
    part_a()
    if not args.skip_ogham:
        part_b(args.ogham)


if __name__ == "__main__":
    main()
