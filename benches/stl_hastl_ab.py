#!/usr/bin/env python3
"""STL kernels of `ogham run` against hastl 0.1.8 `multicore` (the STL paper's Futhark code) in
one run, taking turns: 1000 series x 828 of `tests/oracles/stl_reference.py`'s synthetic data,
period 23, q_s = 7, q_t = 45, q_l = 25, degrees 1, jumps 1/5/3, 2 inner loops, 1 outer
(hastl's defaults). Prints the medians and the pairwise ratio of Ogham's kernel time
(`OGHAM_PROFILE=1`, compiled code from a warm cache) to hastl's `fit` call. Several `ogham`
binaries separated by commas (a branch and its base) run in turns with hastl in every round.

Install hastl into a virtual environment first (about 2 minutes of C compilation):
    python3 -m venv hastlenv && hastlenv/bin/pip install numpy
    HASTL_BACKENDS="c multicore" hastlenv/bin/pip install hastl==0.1.8
    hastlenv/bin/python benches/stl_hastl_ab.py [path/to/ogham[,path/to/other]] [rounds]
"""
import os, subprocess, sys, tempfile, time
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "oracles"))
import stl_reference as ref  # noqa: E402
import hastl  # noqa: E402

oghams = (sys.argv[1] if len(sys.argv) > 1
          else os.path.join(ROOT, "target", "release", "ogham")).split(",")
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
work = tempfile.mkdtemp()
Y = ref.synthetic(24, 1000, 828, 23)
np.save(os.path.join(work, "y.npy"), Y.astype(np.float64))
P = "23i64 7i64 1i64 1i64 45i64 1i64 5i64 25i64 1i64 3i64 2i64 1i64 true".split()
cmds = [[ogham, "run", "--backend", "cpu", "--entry", "main_f64", "-o", os.path.join(work, "out"),
         os.path.join(ROOT, "programs", "stl.og"), os.path.join(work, "y.npy")] + P
        for ogham in oghams]
envs = [dict(os.environ, OGHAM_PROFILE="1", OGHAM_CACHE_DIR=os.path.join(work, f"cache{i}"))
        for i in range(len(oghams))]
for cmd, env in zip(cmds, envs):
    subprocess.run(cmd, env=env, capture_output=True, check=True)  # compiles, fills the cache
stl = hastl.STL(backend="multicore")
Y32 = Y.astype(np.float32)
hastl_s, ogham_s = [], [[] for _ in oghams]
for _ in range(rounds):
    t = time.perf_counter()
    stl.fit(Y32, 23, 7, q_t=45, q_l=25, d_s=1, d_t=1, d_l=1, jump_s=1, jump_t=5, jump_l=3,
            n_inner=2, n_outer=1)
    hastl_s.append(time.perf_counter() - t)
    for cmd, env, times in zip(cmds, envs, ogham_s):
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
        times.append(sum(float(l.split()[-2]) for l in p.stderr.splitlines()
                         if l.startswith("ogham-profile: kernel") and l.endswith(" ms")) / 1000)
print(f"load average {os.getloadavg()[0]:.1f}; {rounds} rounds")
print(f"hastl multicore fit: median {np.median(hastl_s) * 1e3:.0f} ms (min {min(hastl_s) * 1e3:.0f})")
for ogham, times in zip(oghams, ogham_s):
    ratios = [o / h for o, h in zip(times, hastl_s)]
    print(f"{ogham} kernels: median {np.median(times) * 1e3:.0f} ms (min {min(times) * 1e3:.0f})")
    print(f"  ogham / hastl, pairwise: median {np.median(ratios):.2f} "
          f"(min {min(ratios):.2f}, max {max(ratios):.2f})")
if len(oghams) > 1:
    rel = [a / b for a, b in zip(ogham_s[0], ogham_s[1])]
    print(f"first / second ogham, pairwise: median {np.median(rel):.2f} "
          f"(min {min(rel):.2f}, max {max(rel):.2f})")
