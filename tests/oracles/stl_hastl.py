#!/usr/bin/env python3
"""Speed of hastl 0.1.8 (the seed paper's Futhark STL, C and multicore backends) on the same
data as `stl_statsmodels.py speed` (1000 series x 828, period 23, q_s = 7, q_t = 45, q_l = 25,
degrees 1, jumps 1/5/3 and 1/5/5), and its difference from the NumPy reference.

Install (spec §8.3; about 2 minutes of C compilation):
    python3 -m venv hastlenv && . hastlenv/bin/activate && pip install numpy
    HASTL_BACKENDS="c multicore" pip install hastl==0.1.8
    python tests/oracles/stl_hastl.py
"""
import sys, time
import numpy as np
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
import stl_reference as ref
import hastl
Y = ref.synthetic(24, 1000, 828, 23).astype(np.float32)
for backend in ["c", "multicore"]:
    stl = hastl.STL(backend=backend)
    for jumps in [(1, 5, 3), (1, 5, 5)]:
        times = []
        for _ in range(5):
            t = time.perf_counter()
            S, T, R = stl.fit(Y, 23, 7, q_t=45, q_l=25, d_s=1, d_t=1, d_l=1, jump_s=jumps[0], jump_t=jumps[1], jump_l=jumps[2], n_inner=2, n_outer=1)
            times.append(time.perf_counter() - t)
        m = float(np.median(times))
        print(f"hastl {backend:9s} jumps {jumps}: {m:.3f} s ({1000/m:.0f} series/s)")
        if backend == "multicore" and jumps == (1, 5, 5):
            Sr, Tr, _, _ = ref.stl_batch(Y[:20].astype(np.float64), dict(n_p=23, q_s=7, d_s=1, j_s=1, q_t=45, d_t=1, j_t=5, q_l=25, d_l=1, j_l=5, n_inner=2, n_outer=1, hermite=True))
            print("  hastl vs reference (equal jumps, f32 out):", np.max(np.abs(S[:20] - Sr)), np.max(np.abs(T[:20] - Tr)))
