#!/usr/bin/env python3
"""The GPU performance model (`--backend cuda-model`, docs/cuda.md) on the bundled programs'
benchmark shapes, for each modelled GPU: the modelled time of every kernel (launches, copies and
allocations, as `OGHAM_PROFILE` on a GPU counts them), the kernels alone, the spec GFLOP/s over
the kernels alone, and the measured time where a GPU run is recorded (BENCHMARKS.md).

    python3 benches/gpu_model.py [--gpus h200,rtx2080ti]
                                 [--only calibration,bfast,daily,stl,twdtw,ptsel]
                                 [--scale 1.0] [--warps 64] [--ogham target/release/ogham]

`calibration` models the two recorded H200 runs' work (BFAST D2, D5, Peru; STL 20,000 x 828,
non-robust) and prints the modelled / measured ratio; `bfast` the spec's sets D1-D6 and Peru;
`daily` BFAST on a daily axis; `stl` HaSTL's C1 and C3 shapes (186,624 series of 828 and of
4,000 ... scaled by `--scale`, since every series is emulated on this machine's cores); `twdtw`
`benches/run.py`'s two TWDTW cases (many short pairs, column sweep; one long pair, wavefront),
with spec flops `3B + 14` per cell (B = 2 bands); `ptsel` its two PtSel patches (model-free rank,
window-parallel), with spec flops `2KRC + A(8K + 4)` over the A canonical arcs. Data
are generated into a temporary folder by the oracles' generators. Needs NumPy, g++, and (for
ptxas's register report) NVRTC on LD_LIBRARY_PATH, as `.ci/run` installs it.
"""
import argparse, os, re, subprocess, sys, tempfile, time
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "oracles"))
sys.path.insert(0, os.path.join(ROOT, "benches"))
import bfast_reference as bref  # noqa: E402
import ptsel_reference as pref  # noqa: E402
import twdtw_reference as tref  # noqa: E402
from run import BFAST_SETS, BFAST_F, BFAST_K, BFAST_H, DAILY_SEED, DAILY_HISTORY, DAILY_F, \
    spec_flops  # noqa: E402

# The recorded H200 run (BENCHMARKS.md, "CUDA backend on a GPU, second run", `452eef1`):
# the sum of `OGHAM_PROFILE` kernel times, copies and allocations included, milliseconds.
MEASURED_H200 = {"BFAST D2": 14.2, "BFAST D5": 25.2, "BFAST Peru": 42.2, "STL 20000x828": 1867.0}
# STL, non-robust (one outer pass), jumps 1, as `scripts/gpu-check` runs it.
STL_ARGS = "23i64 7i64 0i64 1i64 45i64 1i64 5i64 25i64 1i64 3i64 2i64 1i64 true".split()

LAUNCH = re.compile(r"^ogham-profile:   \S+: .*; ([0-9.]+) ms, bound by (.*)$")
KERNEL = re.compile(r"^ogham-profile: kernel (\S+) \((\w+)\) modeled ([0-9.]+) ms")


def model(ogham, gpu, warps, prog, entry, args, out):
    """Runs the model; (total ms, kernels-only ms, the three slowest kernels, seconds taken).
    A kernel's time is that of its launches (the kernels-only figure's share), not its
    `OGHAM_PROFILE` line's, which also holds the copies and allocations made for it and the
    main queue's wait for a part's upload before it."""
    env = dict(os.environ, OGHAM_PROFILE="1", OGHAM_GPU_MODEL=gpu, OGHAM_MODEL_WARPS=str(warps))
    t0 = time.time()
    p = subprocess.run([ogham, "run", "--backend", "cuda-model", "--entry", entry, "-o", out,
                        prog] + args, env=env, capture_output=True, text=True)
    took = time.time() - t0
    if p.returncode != 0:
        sys.exit(f"{prog} {entry} on {gpu}: exit {p.returncode}\n{p.stderr[-3000:]}")
    total, kernels_only, per_kernel, name = 0.0, 0.0, {}, None
    for line in p.stderr.splitlines():
        if m := KERNEL.match(line):
            name = m.group(1)
            per_kernel.setdefault(name, [0.0, name, ""])
            total += float(m.group(3))
        elif (m := LAUNCH.match(line)) and name:
            kernels_only += float(m.group(1))
            per_kernel[name][0] += float(m.group(1))
            per_kernel[name][2] = m.group(2)
    # Each kernel's launches summed (a loop runs some several times); the bound of its last.
    top = sorted(per_kernel.values(), reverse=True)[:3]
    return total, kernels_only, top, took


def bfast_args(path, n, f=BFAST_F, k=BFAST_K):
    return [path, f"{n}i64", f"{f}f64", "2000f64", f"{k}i64", "true", f"{BFAST_H}f64",
            "10i64", "0.05f64", "f64.nan"]


def works(only, scale, tmp):
    """(label, program, entry, args, spec flops or None) of each selected work."""
    out = []
    sets = {s[0]: (i, s) for i, s in enumerate(BFAST_SETS)}

    def bfast(name, scaled=True, seed=None):
        i, (_, M0, N, n) = sets[name]
        M = max(256, int(M0 * scale)) if scaled else M0
        seed = 10 + i if seed is None else seed
        path = os.path.join(tmp, f"bfast_{name}_{M}_{seed}.npy")
        if not os.path.exists(path):
            np.save(path, bref.cloudy_set(seed, M, N, n, BFAST_F)[0])
        return (f"BFAST {name}", "programs/bfast.og", "main", bfast_args(path, n),
                spec_flops(M, N, n))

    def stl(label, series, length, scaled=True):
        S = max(64, int(series * scale)) if scaled else series
        gen = os.path.join(tmp, f"stl_{S}_{length}")
        if not os.path.exists(os.path.join(gen, "out0.npy")):
            subprocess.run([OGHAM, "run", "--backend", "cpu", "--entry", "stl", "-o", gen,
                            "benches/cache/gen.og", f"{S}i64", f"{length}i64"], check=True)
        return (f"{label} {S}x{length}", "programs/stl.og", "main_f64",
                [os.path.join(gen, "out0.npy")] + STL_ARGS, None)

    if "calibration" in only:
        # The recorded runs' work, whatever `--scale` says (`scripts/gpu-check`'s seeds).
        out += [bfast(name, scaled=False, seed=10 + k)
                for k, name in enumerate(["D2", "D5", "Peru"])]
        out.append(stl("STL", 20000, 828, scaled=False))
    if "bfast" in only:
        out += [bfast(s[0]) for s in BFAST_SETS]
    if "daily" in only:
        M = max(256, int(4096 * scale))
        path = os.path.join(tmp, f"bfast_daily_{M}.npy")
        if not os.path.exists(path):
            np.save(path, bref.daily_set(DAILY_SEED, M)[0])
        out.append((f"BFAST daily {M}x3650", "programs/bfast.og", "main",
                    bfast_args(path, DAILY_HISTORY, DAILY_F), None))
    if "stl" in only:
        out += [stl("STL C1", 186624, 828), stl("STL C3", 186624, 414)]
    if "twdtw" in only:
        out += twdtw_works(scale, tmp)
    if "ptsel" in only:
        out += ptsel_works(scale, tmp)
    return out


def twdtw_works(scale, tmp):
    """`benches/run.py`'s TWDTW cases: (a) 5 patterns of 45 samples x S series of 69 (500
    generated series tiled to S, 20,000 at scale 1), column sweep; (b) one pattern of 1,000 x one
    series of 27 years daily (years scaled too: the model traces every access of the one block,
    and 27 years, 10^7 cells, took more than 24 GB), anti-diagonal wavefront."""
    a, mid, cycle = tref.PARAMS
    S = max(500, int(20000 * scale))
    y, ty, x, tx, _, _ = tref.make_batch(3, 5, 45, 500, 3, 2)
    x, tx = np.tile(x, (S // 500, 1, 1)), np.tile(tx, (S // 500, 1))
    years = max(1, round(27 * scale))
    yl, tyl, xl, txl, _, _ = tref.make_batch(4, 1, 1000, 1, years, 2, step_ser=1)
    out = []
    for label, entry, arrays in [("TWDTW (a) short pairs", "distances", (y, ty, x, tx)),
                                 ("TWDTW (b) long pair", "distances_wavefront",
                                  (yl, tyl, xl, txl))]:
        Y, X = arrays[0], arrays[2]
        paths = []
        for key, arr in zip(["y", "ty", "x", "tx"], arrays):
            paths.append(os.path.join(tmp, f"twdtw_{entry}_{S}_{key}.npy"))
            np.save(paths[-1], arr)
        cells = Y.shape[0] * X.shape[0] * Y.shape[1] * X.shape[1]
        bands = Y.shape[2]
        out.append((f"{label} {Y.shape[0]}x{Y.shape[1]} · {X.shape[0]}x{X.shape[1]}",
                    "programs/twdtw.og", entry,
                    paths + [f"{a}f64", f"{mid}f64", f"{cycle}f64", "f64.inf"],
                    cells * (3 * bands + 14)))
    return out


def ptsel_works(scale, tmp):
    """`benches/run.py`'s PtSel patches: 500 x 500 at scale 1 (side scaled by its square root),
    20 acquisitions at depth 3, model-free rank, windows 5 x 5 and 9 x 9."""
    R = C = max(50, int(500 * scale ** 0.5))
    phi = pref.make_stack(5, R, C, 20, 3, 0.05, 0.3)[4]
    path = os.path.join(tmp, f"ptsel_{R}.npy")
    np.save(path, phi)
    K = phi.shape[0]
    return [(f"PtSel {R}x{C} K={K} window {2 * s + 1}x{2 * s + 1}", "programs/ptsel.og",
             "rank_wp", [path, f"{s}i64", "false"],
             2 * K * R * C + pref.arc_count(R, C, s) * (8 * K + 4)) for s in (2, 4)]


OGHAM = os.path.join(ROOT, "target", "release", "ogham")


def main():
    global OGHAM
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpus", default="h200,rtx2080ti")
    ap.add_argument("--only", default="calibration")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--warps", type=int, default=64)
    ap.add_argument("--ogham", default=OGHAM)
    a = ap.parse_args()
    OGHAM = os.path.abspath(a.ogham)
    os.chdir(ROOT)
    tmp = tempfile.mkdtemp(prefix="ogham-gpu-model-")
    rows = []
    for label, prog, entry, args, flops in works(a.only.split(","), a.scale, tmp):
        for gpu in a.gpus.split(","):
            total, kern, top, took = model(OGHAM, gpu, a.warps, prog, entry, args,
                                           os.path.join(tmp, "out"))
            measured = MEASURED_H200.get(label) if gpu == "h200" else None
            rows.append([label, gpu, f"{total:.1f}", f"{kern:.1f}",
                         f"{flops / kern / 1e6:.0f}" if flops and kern else "—",
                         f"{measured:.1f}" if measured else "—",
                         f"{total / measured:.2f}" if measured else "—",
                         "; ".join(f"{n} {t:.1f} ({b})" for t, n, b in top), f"{took:.0f}"])
            print(" | ".join(rows[-1]), flush=True)
    print("\n| work | GPU | modelled ms | kernels only ms | GFLOP/s^Sp | measured ms | "
          "modelled / measured | slowest kernels (ms, bound) | model's run s |")
    print("|" + "---|" * 9)
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
