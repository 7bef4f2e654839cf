#!/usr/bin/env python3
"""Benchmarks of `ogham run --backend cpu` against references and a hand-written Rust+rayon
baseline, in one run (see benches/README.md).

    cargo build --release                                              # target/release/ogham
    cargo build --release --manifest-path benches/baseline/Cargo.toml  # the Rust baseline
    cargo build --release -p ogham-capi                                # libogham_c.so (aot group)
    python3 benches/run.py [--reps 5] [--only bfast,daily,scaling,aot,micro,twdtw,ptsel,styles] [--scale 1.0]
                           [--zeit-core PATH/zeit/_core.cpython-311-x86_64-linux-gnu.so]
                           [--pypi-python PATH/bfastenv/bin/python]

Needs Python 3.11 and NumPy; installs nothing. Optional references, skipped with a note when
absent: dtw-python (`pip install dtw-python`, TWDTW), zeit-cdts `_core` (`--zeit-core`, see
tests/oracles/bfast_zeit.py for how to unpack it), PyPI `bfast` 0.7 (python backend, `--pypi-python`:
the interpreter of the pinned environment described in tests/oracles/bfast_pypi.py, run as a
subprocess).

Every figure is the median of `--reps` runs. For Ogham, `process` is the whole `ogham run`
process (reading the .npy inputs, writing outputs; the compiled program comes from the on-disk
cache, filled by the correctness run before the timed ones) and `kernels` the
sum of the kernel times printed with OGHAM_PROFILE=1; for the Rust baseline the compute time
measured inside the process (input and output excluded); for Python references the call's
time. Outputs are checked against each other before anything is timed. The `aot` group calls
BFAST from C (benches/aot/bfast_call.c, linked with libogham_c) with the library compiled ahead
of time into an object file and, for comparison, as a `.ogl` file JIT-compiled at each call.
"""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "oracles"))
import bfast_reference as bref  # noqa: E402
import ptsel_reference as pref  # noqa: E402
import twdtw_reference as tref  # noqa: E402

# `OGHAM_BIN` runs another build (e.g. an older commit's, for A/B comparisons).
OGHAM = os.environ.get("OGHAM_BIN") or os.path.join(ROOT, "target", "release", "ogham")
BASE = os.path.join(HERE, "baseline", "target", "release", "ogham-bench-baseline")
LIBOGHAM_C = os.path.join(os.path.dirname(OGHAM), "libogham_c.so")
PROFILE = re.compile(r"ogham-profile: kernel \S+ \([^)]*\) ([0-9.]+) ms")

# Machine limits quoted in issue 4 (2 cores): memory bandwidth and f32 peak.
PEAK_GBS = 20.0
PEAK_GFLOPS = 125.0


def median(xs):
    return statistics.median(xs) if xs else math.nan


def ogham(prog, args, outdir, reps, entry=None):
    """Runs `ogham run --backend cpu` `reps` times: (process ms, kernel ms) medians."""
    cmd = [OGHAM, "run", "--backend", "cpu", "-o", outdir]
    if entry:
        cmd += ["--entry", entry]
    cmd += [os.path.join(ROOT, prog)] + [str(a) for a in args]
    env = dict(os.environ, OGHAM_PROFILE="1")
    wall, kern = [], []
    for _ in range(reps):
        t = time.perf_counter()
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        wall.append((time.perf_counter() - t) * 1e3)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
        kern.append(sum(float(m) for m in PROFILE.findall(p.stderr)))
    return median(wall), median(kern)


def baseline(args):
    """Runs the Rust baseline (its last argument is the number of repetitions inside the one
    process): median compute ms, the first repetition (a warm-up) dropped."""
    p = subprocess.run([BASE] + [str(a) for a in args], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"baseline {args} failed: {p.stderr}")
    ms = [float(x) for x in re.findall(r"ms=([0-9.]+)", p.stdout)]
    return median(ms[1:] if len(ms) > 1 else ms), p.stdout


def timed_py(fn, reps):
    out, ts = None, []
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        ts.append((time.perf_counter() - t) * 1e3)
    return median(ts), out


def table(title, header, rows):
    print(f"\n### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        print("| " + " | ".join(r) + " |")
    sys.stdout.flush()


def f(x, digits=1):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:,.{digits}f}"


# ---------------------------------------------------------------------------------------------
# BFAST-Monitor

# Spec §10.2 shapes (M, N, n, NaN fraction); M is divided by `BFAST_M_DIV` on 2 cores.
BFAST_SETS = [("D1", 16384, 1024, 512), ("D2", 16384, 512, 256), ("D3", 32768, 512, 256),
              ("D4", 32768, 256, 128), ("D5", 65536, 256, 128), ("D6", 16384, 1024, 256),
              ("Peru", 111556, 235, 113)]
BFAST_M_DIV = 8
BFAST_F, BFAST_K, BFAST_H = 23.0, 3, 0.25
NUMPY_PIXELS = 256  # the f64 NumPy reference is a per-pixel loop: timed on the first pixels


def spec_flops(M, N, n, K=2 * BFAST_K + 2, h=BFAST_H):
    """Spec §10.3, the project's application-level spec-FLOP count."""
    return M * (4 * n * K * K + 6 * K ** 3 + 3 * n * K + 2 * K * K + 2 * N * K + N + 2 * n
                + h * n + 10 * (N - n))


def load_zeit(path):
    if not path:
        print("note: zeit-cdts _core skipped (pass --zeit-core PATH to the unpacked "
              "zeit/_core.cpython-311-x86_64-linux-gnu.so; see tests/oracles/bfast_zeit.py)")
        return None
    import importlib.util
    spec = importlib.util.spec_from_file_location("_core", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def zeit_run(core, Y, n, jobs):
    """zeit-cdts `_core` on the stack `Y` (f64, C order: converted here if it is not, which
    the callers avoid for timed calls)."""
    out = core.bfastmonitor.fit_bfast_monitor_batch(
        np.ascontiguousarray(Y, dtype=np.float64), 2000.0, 2000.0 + n / BFAST_F, int(BFAST_F),
        order=BFAST_K, h=BFAST_H, period=10, alpha=0.05, min_valid=6, n_jobs=jobs)
    out = np.asarray(out)
    return np.where(out[6] == 0, -2, np.where(np.isnan(out[1]), -1, out[1])).astype(np.int64)


# A whole Python process that loads the stack and calls zeit-cdts `_core` (2 threads) and saves
# the breaks: what a user would run instead of `ogham run` (issue 22: "whole `ogham run`
# processes faster than a Python process calling zeit"). Only NumPy and `_core` are imported,
# the fastest way to call zeit.
ZEIT_PROCESS = """
import importlib.util, sys
import numpy as np
core_path, path, n, f, k, h, out = sys.argv[1:]
spec = importlib.util.spec_from_file_location("_core", core_path)
core = importlib.util.module_from_spec(spec)
spec.loader.exec_module(core)
Y = np.ascontiguousarray(np.load(path), dtype=np.float64)
n, f = int(n), float(f)
res = np.asarray(core.bfastmonitor.fit_bfast_monitor_batch(
    Y, 2000.0, 2000.0 + n / f, int(f), order=int(k), h=float(h), period=10, alpha=0.05,
    min_valid=6, n_jobs=2))
np.save(out, res[1])
"""


def zeit_process_ms(core_path, path, n, reps):
    """Median wall ms of `reps` whole Python processes running ZEIT_PROCESS (after one
    warm-up, so that both sides read the stack from the page cache)."""
    cmd = [sys.executable, "-c", ZEIT_PROCESS, core_path, path, str(n), str(BFAST_F),
           str(BFAST_K), str(BFAST_H), path + ".zeit.npy"]
    ts = []
    for _ in range(reps + 1):
        t = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        ts.append((time.perf_counter() - t) * 1e3)
        if p.returncode != 0:
            raise RuntimeError(f"zeit process failed:\n{p.stderr[-2000:]}")
    return median(ts[1:])


def pypi_bfast_ms(python, path, n, pixels, reps):
    """PyPI `bfast` 0.7, python backend, in its own pinned environment (`python`, see
    tests/oracles/bfast_pypi.py): median ms for the first `pixels` pixels of the stack."""
    script = os.path.join(ROOT, "tests", "oracles", "bfast_pypi.py")
    p = subprocess.run([python, script, "--time", path, str(n), str(pixels), str(reps)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"PyPI bfast failed:\n{p.stderr[-2000:]}")
    return float(re.search(r"ms=([0-9.]+)", p.stdout).group(1))


def check_close(what, got, want, tolerance):
    """Prints `what` with the largest |got - want| (equal where both are NaN) and OK or FAILED;
    whether that is within `tolerance`."""
    both = np.isnan(got) & np.isnan(want)
    err = float(np.nanmax(np.where(both, 0.0, np.abs(got - want))))
    good = err <= tolerance
    print(f"  check {what} max |diff| {err:.2e} {'OK' if good else 'FAILED'}")
    return good


def break_agreement(name, got, ref_brk, margin):
    """Spec §9.2 f32 rule: >= 99.5 % identical breaks, every mismatch with |MOSUM| within 1e-3
    (relative) of the boundary in the f64 reference (or a -2/-3 code on both sides)."""
    diff = np.flatnonzero(got != ref_brk)
    unexplained = [int(i) for i in diff if not margin[i] < 1e-3]
    frac = 1.0 - len(diff) / len(got)
    ok = frac >= 0.995 and not unexplained
    print(f"  check {name}: {frac * 100:.2f} % identical breaks ({len(diff)} differ, "
          f"{len(unexplained)} not at a boundary tie) {'OK' if ok else 'FAILED'}")
    return ok


def bfast_stack(args, work, i):
    """The stack of `BFAST_SETS[i]` (generated once into `work`): M and its path."""
    name, M0, N, n = BFAST_SETS[i]
    M = max(256, int(M0 * args.scale) // BFAST_M_DIV)
    path = os.path.join(work, f"bfast_{name}_{M}x{N}.npy")
    if not os.path.exists(path):
        Y, _ = bref.cloudy_set(10 + i, M, N, n, BFAST_F)
        np.save(path, Y)
    return M, path


def bfast_args(path, n):
    return [path, f"{n}i64", f"{BFAST_F}f64", "2000f64", f"{BFAST_K}i64", "true",
            f"{BFAST_H}f64", "10i64", "0.05f64", "f64.nan"]


def check_bfast_guard(work, lam):
    """Ogham and the baseline on dry-season pixels (`bref.dry_history_set`, 32 seeds × 3 pixels:
    f32 history Gram matrices beyond f32's condition bound, which both redo in f64, and singular
    ones, -3 in both; docs/bfast.md "Conditioning guard"): the same breaks everywhere and the
    same -3 pixels, magnitudes and MOSUM means within 1e-4 relative."""
    Y = np.concatenate([bref.dry_history_set(seed) for seed in range(32)])
    n = Y.shape[1] // 2
    path = os.path.join(work, "bfast_dry_season.npy")
    np.save(path, Y)
    out = os.path.join(work, "out_bfast_dry_season")
    bdir = os.path.join(work, "base_bfast_dry_season")
    os.makedirs(out, exist_ok=True)
    os.makedirs(bdir, exist_ok=True)
    ogham("programs/bfast.og", bfast_args(path, n), out, 1)
    baseline(["bfast", path, n, BFAST_F, BFAST_K, BFAST_H, lam, bdir, 1])
    o_brk = np.load(os.path.join(out, "out0.npy")).astype(np.int64)
    b_brk = np.load(os.path.join(bdir, "brk.npy")).astype(np.int64)
    close = all(np.allclose(np.load(os.path.join(bdir, f"{b}.npy")),
                            np.load(os.path.join(out, f"out{o}.npy")), rtol=1e-4, atol=0,
                            equal_nan=True)
                for b, o in (("magnitude", 2), ("mosum_mean", 3)))
    ok = bool(np.array_equal(o_brk, b_brk)) and close
    print(f"  check ogham vs baseline, dry-season histories (f32 fit redone in f64): "
          f"{np.mean(o_brk == b_brk) * 100:.2f} % identical breaks, {np.sum(o_brk == -3)} "
          f"singular (ogham) and {np.sum(b_brk == -3)} (baseline) of {len(o_brk)} "
          f"{'OK' if ok else 'FAILED'}")
    return ok


def bench_bfast(args, work):
    lam = bref.mosum_lambda(BFAST_H, 10, 0.05)
    core = load_zeit(args.zeit_core)
    if not args.pypi_python:
        print("note: PyPI bfast skipped (pass --pypi-python PATH/bin/python of the environment "
              "in tests/oracles/bfast_pypi.py)")
    rows, ok = [], True
    if os.path.exists(BASE):
        ok &= check_bfast_guard(work, lam)
    for i, (name, M0, N, n) in enumerate(BFAST_SETS):
        M, path = bfast_stack(args, work, i)
        Y = np.load(path)
        nan_frac = float(np.mean(np.isnan(Y)))
        out = os.path.join(work, f"out_bfast_{name}")
        os.makedirs(out, exist_ok=True)
        print(f"BFAST {name}: M={M} (spec {M0}/{BFAST_M_DIV}), N={N}, n={n}, "
              f"NaN {nan_frac * 100:.0f} %", flush=True)
        oargs = bfast_args(path, n)
        # correctness first: one run of each, compared with the f64 reference
        ogham("programs/bfast.og", oargs, out, 1)
        o_brk = np.load(os.path.join(out, "out0.npy")).astype(np.int64)
        ref_n = min(M, NUMPY_PIXELS)
        ref = bref.run_r(Y[:ref_n], n, BFAST_F, k=BFAST_K, h=BFAST_H)
        ok &= break_agreement("ogham vs NumPy f64 (first pixels)", o_brk[:ref_n], ref["brk"],
                              ref["margin"])
        bdir = os.path.join(work, f"base_bfast_{name}")
        os.makedirs(bdir, exist_ok=True)
        have_base = os.path.exists(BASE)
        if have_base:
            baseline(["bfast", path, n, BFAST_F, BFAST_K, BFAST_H, lam, bdir, 1])
            b_brk = np.load(os.path.join(bdir, "brk.npy")).astype(np.int64)
            same = float(np.mean(b_brk == o_brk))
            ok &= break_agreement("baseline vs NumPy f64 (first pixels)", b_brk[:ref_n],
                                  ref["brk"], ref["margin"])
            print(f"  check ogham vs baseline: {same * 100:.2f} % identical breaks (all pixels)")
        # timings
        p_ms, k_ms = ogham("programs/bfast.og", oargs, out, args.reps)
        if have_base:
            b_ms, _ = baseline(["bfast", path, n, BFAST_F, BFAST_K, BFAST_H, lam, bdir,
                                args.reps + 1])
        else:
            b_ms = math.nan
        np_ms, _ = timed_py(lambda: bref.run_r(Y[:ref_n], n, BFAST_F, k=BFAST_K, h=BFAST_H),
                            max(1, args.reps // 2))
        np_ms *= M / ref_n
        z1 = z2 = zp = math.nan
        pairs = []
        if core is not None:
            zp = zeit_process_ms(args.zeit_core, path, n, args.reps)
            Y64 = np.ascontiguousarray(Y, dtype=np.float64)  # zeit's input type, made once
            zb = zeit_run(core, Y64, n, 2)
            print(f"  check zeit vs ogham: {np.mean(zb == o_brk) * 100:.2f} % identical breaks")
            z1, _ = timed_py(lambda: zeit_run(core, Y64, n, 1), args.reps)
            z2, _ = timed_py(lambda: zeit_run(core, Y64, n, 2), args.reps)
            # In turns, so that a noisy moment of the shared machine hits both sides of a pair.
            for _ in range(args.reps):
                k = ogham("programs/bfast.og", oargs, out, 1)[1]
                pairs.append(k / timed_py(lambda: zeit_run(core, Y64, n, 2), 1)[0])
        py_ms = math.nan
        if args.pypi_python:  # python backend, seed convention: timed on the first pixels
            py_ms = pypi_bfast_ms(args.pypi_python, path, n, ref_n, max(1, args.reps // 2))
            py_ms *= M / ref_n
        gf = spec_flops(M, N, n) / 1e9
        rows.append([name, f"{M}×{N}", f"{n}", f"{nan_frac * 100:.0f}", f(p_ms), f(k_ms),
                     f(M / k_ms * 1e3 / 1e3, 0), f(gf / (k_ms / 1e3), 2), f(b_ms),
                     f(k_ms / b_ms, 1), f(np_ms, 0), f(k_ms / np_ms, 2), f(z1), f(z2),
                     f(k_ms / z2, 1),
                     f"{median(pairs):.2f} ({min(pairs):.2f}–{max(pairs):.2f})" if pairs else "–",
                     f(zp), f(p_ms / zp, 2), f(py_ms, 0), f(py_ms / k_ms, 0)])
    table("BFAST-Monitor, r profile, f32 stack (cloudy_set, f = 23, k = 3, h = 0.25)",
          ["set", "M×N", "n", "NaN %", "ogham process ms", "ogham kernels ms",
           "kpixels/s (kernels)", "GFLOP/s^Sp (kernels)", "Rust baseline ms", "ogham/Rust",
           "NumPy f64 ms (extrap.)", "ogham/NumPy", "zeit 1 thr ms", "zeit 2 thr ms",
           "ogham/zeit 2 thr", "ogham/zeit 2 thr, pairs: median (min–max)",
           "zeit 2 thr Python process ms", "ogham process / zeit process",
           "PyPI bfast ms (extrap.)", "PyPI bfast/ogham"], rows)
    return ok


# ---------------------------------------------------------------------------------------------
# BFAST on a daily axis (issue 22): f = 365, 10 years, ~5 % valid observations

DAILY_PIXELS, DAILY_SEED, DAILY_HISTORY, DAILY_F = 4096, 7, 1825, 365.0


def bench_daily(args, work):
    """BFAST on `bfast_reference.daily_set` (4096 pixels x 3650 days): Ogham's kernels and
    zeit-cdts' call (2 threads, f = 365) in turns, `--reps` pairs after a warm-up; the pairwise
    ratio. Without `--zeit-core`, Ogham alone."""
    M = max(256, int(DAILY_PIXELS * args.scale))
    path = os.path.join(work, f"bfast_daily_{M}.npy")
    if not os.path.exists(path):
        np.save(path, bref.daily_set(DAILY_SEED, M)[0])
    Y = np.load(path)
    print(f"BFAST daily axis: M={M}, N={Y.shape[1]}, "
          f"{np.mean(~np.isnan(Y)) * 100:.1f} % valid", flush=True)
    out = os.path.join(work, "out_daily")
    oargs = [path, f"{DAILY_HISTORY}i64", f"{DAILY_F}f64", "2000f64", f"{BFAST_K}i64", "true",
             f"{BFAST_H}f64", "10i64", "0.05f64", "f64.nan"]
    ogham("programs/bfast.og", oargs, out, 1)
    o_brk = np.load(os.path.join(out, "out0.npy")).astype(np.int64)
    ref_n = min(M, 64)
    ref = bref.run_r(Y[:ref_n], DAILY_HISTORY, DAILY_F, k=BFAST_K, h=BFAST_H)
    ok = break_agreement("ogham vs NumPy f64 (first pixels)", o_brk[:ref_n], ref["brk"],
                         ref["margin"])
    core = load_zeit(args.zeit_core)
    Y64 = np.ascontiguousarray(Y, dtype=np.float64)

    def zeit_call():
        return core.bfastmonitor.fit_bfast_monitor_batch(
            Y64, 2000.0, 2000.0 + DAILY_HISTORY / DAILY_F, int(DAILY_F), order=BFAST_K,
            h=BFAST_H, period=10, alpha=0.05, min_valid=6, n_jobs=2)

    if core is not None:
        zeit_call()
    kern, zeit, ratio = [], [], []
    for _ in range(args.reps):
        kern.append(ogham("programs/bfast.og", oargs, out, 1)[1])
        if core is not None:
            zeit.append(timed_py(zeit_call, 1)[0])
            ratio.append(kern[-1] / zeit[-1])
    table(f"BFAST daily axis ({M} × {Y.shape[1]}, f = 365, n = {DAILY_HISTORY})",
          ["ogham kernels ms (median)", "(min)", "zeit 2 thr call ms (median)", "(min)",
           "ogham/zeit, pairs (median)", "(min–max)"],
          [[f(median(kern)), f(min(kern)), f(median(zeit)), f(min(zeit) if zeit else None),
            f(median(ratio), 2),
            f"{min(ratio):.2f}–{max(ratio):.2f}" if ratio else "–"]])
    return ok


# ---------------------------------------------------------------------------------------------
# BFAST scaling: time and peak memory from 10^3 to 10^5 pixels (issue 22)

SCALING_PIXELS = [1000, 10000, 100000]
SCALING_N, SCALING_HISTORY = 256, 128


GNU_TIME = "/usr/bin/time"


def run_peak(cmd, env=None):
    """Runs `cmd` under GNU time: (wall ms, its peak resident set in MiB, stderr). The child's
    own `ru_maxrss` would not do: a child forked from this Python process starts with the
    parent's high-water mark. NaN when GNU time is missing."""
    with tempfile.NamedTemporaryFile(mode="r") as rss:
        timed = [GNU_TIME, "-f", "%M", "-o", rss.name] + cmd if os.path.exists(GNU_TIME) else cmd
        t = time.perf_counter()
        p = subprocess.run(timed, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True)
        ms = (time.perf_counter() - t) * 1e3
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
        kib = rss.read().strip()
    return ms, float(kib) / 1024 if kib else math.nan, p.stderr


def bench_scaling(args, work):
    """BFAST on 10^3, 10^4 and 10^5 pixels x 256 dates (D4/D5's shape): how the whole `ogham
    run` process, its kernels and its peak memory grow, next to a Python process calling
    zeit-cdts (when `--zeit-core` is given)."""
    rows, ok = [], True
    if not os.path.exists(GNU_TIME):
        print(f"note: peak memory skipped ({GNU_TIME} is missing: apt install time)")
    for M0 in SCALING_PIXELS:
        M = max(256, int(M0 * args.scale))
        path = os.path.join(work, f"bfast_scaling_{M}x{SCALING_N}.npy")
        if not os.path.exists(path):
            Y, _ = bref.cloudy_set(40, M, SCALING_N, SCALING_HISTORY, BFAST_F)
            np.save(path, Y)
        print(f"BFAST scaling: M={M}, N={SCALING_N}", flush=True)
        out = os.path.join(work, f"out_scaling_{M}")
        cmd = [OGHAM, "run", "--backend", "cpu", "-o", out,
               os.path.join(ROOT, "programs", "bfast.og")]
        cmd += [str(a) for a in bfast_args(path, SCALING_HISTORY)]
        env = dict(os.environ, OGHAM_PROFILE="1")
        run_peak(cmd, env)  # fills the cache; checked against the f64 reference below
        Y = np.load(path)
        o_brk = np.load(os.path.join(out, "out0.npy")).astype(np.int64)
        ref_n = min(M, NUMPY_PIXELS)
        ref = bref.run_r(Y[:ref_n], SCALING_HISTORY, BFAST_F, k=BFAST_K, h=BFAST_H)
        ok &= break_agreement("ogham vs NumPy f64 (first pixels)", o_brk[:ref_n], ref["brk"],
                              ref["margin"])
        wall, kern, peak = [], [], []
        for _ in range(args.reps):
            ms, mib, err = run_peak(cmd, env)
            wall.append(ms)
            peak.append(mib)
            kern.append(sum(float(m) for m in PROFILE.findall(err)))
        zp = zpeak = math.nan
        if args.zeit_core:
            zcmd = [sys.executable, "-c", ZEIT_PROCESS, args.zeit_core, path,
                    str(SCALING_HISTORY), str(BFAST_F), str(BFAST_K), str(BFAST_H),
                    path + ".zeit.npy"]
            runs = [run_peak(zcmd) for _ in range(args.reps + 1)][1:]
            zp, zpeak = median([r[0] for r in runs]), median([r[1] for r in runs])
        mib_in = Y.nbytes / 2**20
        rows.append([f"{M:,}", f(mib_in), f(median(wall)), f(median(kern)),
                     f(median(kern) * 1e3 / M, 2), f(median(peak)), f(median(peak) / mib_in, 2),
                     f(zp), f(zpeak), f(median(wall) / zp, 2)])
    table(f"BFAST scaling, {SCALING_N} dates (f32 stack, n = {SCALING_HISTORY}, cloudy_set)",
          ["pixels", "input MiB", "ogham process ms", "ogham kernels ms", "kernel µs/pixel",
           "ogham peak RSS MiB", "ogham peak / input", "zeit Python process ms",
           "zeit peak RSS MiB", "ogham process / zeit process"], rows)
    return ok


# ---------------------------------------------------------------------------------------------
# BFAST from C: an object compiled ahead of time against a .ogl library (JIT at each call)

def bfast_call(exe, path, n, reps, lib=None):
    """Runs benches/aot/bfast_call.c's program: (open ms, median call ms, breaks)."""
    brk = path + ".brk.i32"
    p = subprocess.run([exe, path, str(n), str(reps), brk] + ([lib] if lib else []),
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{exe} failed:\n{p.stderr[-2000:]}")
    times = re.findall(r"^(open|call) ([0-9.]+)$", p.stdout, re.M)
    calls = [float(ms) for what, ms in times if what == "call"]
    opened = [float(ms) for what, ms in times if what == "open"][0]
    return opened, median(calls[1:] if len(calls) > 1 else calls), np.fromfile(brk, np.int32)


def bench_aot(args, work):
    if not os.path.exists(LIBOGHAM_C):
        print(f"note: aot skipped ({LIBOGHAM_C} is missing: cargo build --release -p ogham-capi)")
        return True
    obj, ogl = os.path.join(work, "bfast.o"), os.path.join(work, "bfast.ogl")
    for out in (obj, ogl):
        subprocess.run([OGHAM, "build", os.path.join(ROOT, "programs", "bfast.og"), "-o", out],
                       check=True, capture_output=True)
    exe = os.path.join(work, "bfast_call")
    libdir = os.path.dirname(LIBOGHAM_C)
    subprocess.run(["cc", "-O2", "-o", exe, os.path.join(HERE, "aot", "bfast_call.c"), obj,
                    f"-I{work}", f"-I{os.path.join(ROOT, 'capi', 'include')}", f"-L{libdir}",
                    f"-Wl,-rpath,{libdir}", "-logham_c", "-lm"], check=True)
    rows, ok = [], True
    for i, (name, _, N, n) in enumerate(BFAST_SETS):
        if name not in ("D2", "Peru"):
            continue
        M, path = bfast_stack(args, work, i)
        out = os.path.join(work, f"out_aot_{name}")
        os.makedirs(out, exist_ok=True)
        p_ms, k_ms = ogham("programs/bfast.og", bfast_args(path, n), out, args.reps)
        want = np.load(os.path.join(out, "out0.npy"))
        a_open, a_call, a_brk = bfast_call(exe, path, n, args.reps + 1)
        j_open, j_call, j_brk = bfast_call(exe, path, n, args.reps + 1, ogl)
        same = np.array_equal(a_brk, want) and np.array_equal(j_brk, want)
        ok &= same
        print(f"  check {name}: C with the object and with the .ogl give `ogham run`'s breaks "
              f"{'OK' if same else 'FAILED'}")
        rows.append([name, f"{M}×{N}", f(p_ms), f(k_ms), f(j_open), f(j_call), f(a_open),
                     f(a_call), f(j_call / a_call, 1)])
    table("BFAST-Monitor called from C: object file (ahead of time) vs .ogl (JIT at the first "
          "call); calls after the first, median",
          ["set", "M×N", "ogham run process ms", "ogham kernels ms", ".ogl open ms",
           ".ogl call ms", "object open ms", "object call ms", "call .ogl/object"], rows)
    return ok


# ---------------------------------------------------------------------------------------------
# Micro programs (issue 4 item 6)

def poly_f32(x):
    """`benches/micro/poly.og` in f32, operation by operation (`a - c` is `a + (-c)` exactly)."""
    p = np.float32(0.01) * x
    for c in (-0.02, 0.03, -0.05, 0.08, -0.13, 0.21, -0.34):
        p = (p + np.float32(c)) * x
    return p + np.float32(0.55)


def bench_micro(args, work):
    rng = np.random.default_rng(1)
    big = int((1 << 24) * args.scale)
    x = rng.standard_normal(big).astype(np.float32)
    perm = rng.permutation(big).astype(np.int64)
    mm = int(512 * math.sqrt(args.scale)) // 8 * 8 or 8
    A = rng.standard_normal((mm, mm)).astype(np.float32)
    B = rng.standard_normal((mm, mm)).astype(np.float32)
    batch = int(65536 * args.scale)
    G = rng.standard_normal((batch, 8, 8)).astype(np.float32) + 8 * np.eye(8, dtype=np.float32)
    files = {}
    for key, arr in [("x", x), ("perm", perm), ("A", A), ("B", B), ("G", G)]:
        files[key] = os.path.join(work, f"micro_{key}.npy")
        np.save(files[key], arr)
    # name, inputs, bytes moved, flops, reference result
    progs = [("map", ["x"], 8 * big, 0, lambda: 2 * x + 1),
             ("poly", ["x"], 0, 16 * big, lambda: np.clip(poly_f32(x), -1, 1)),
             ("reduce", ["x"], 4 * big, 0, lambda: np.sum(x, dtype=np.float64)),
             ("scan", ["x"], 8 * big, 0, lambda: np.cumsum(x, dtype=np.float64)),
             ("scatter", ["x", "perm"], 16 * big, 0, None),
             ("filter", ["x"], 4 * big + 4 * int(np.sum(x > 0)), 0, lambda: x[x > 0]),
             ("matmul", ["A", "B"], 0, 2 * mm ** 3, lambda: A.astype(np.float64) @ B),
             ("inverse", ["G"], 0, 6 * 8 ** 3 * batch, lambda: np.linalg.inv(G))]
    rows, ok = [], True
    for name, ins, nbytes, flops, npfn in progs:
        out = os.path.join(work, f"out_micro_{name}")
        os.makedirs(out, exist_ok=True)
        paths = [files[i] for i in ins]
        ogham(f"benches/micro/{name}.og", paths, out, 1)
        got = np.load(os.path.join(out, "out0.npy"))
        if name == "scatter":
            want = np.zeros_like(x)
            want[perm] = x
        else:
            want = npfn()
        if name == "reduce":
            good = abs(float(got) - float(want)) <= 1e-3 * float(np.sum(np.abs(x)))
        elif name == "scan":
            good = np.max(np.abs(got - want)) <= 1e-3 * float(np.sum(np.abs(x)))
        else:
            good = got.shape == want.shape and np.allclose(got, want, rtol=1e-3, atol=1e-3)
        ok &= bool(good)
        print(f"  check micro {name}: ogham vs NumPy {'OK' if good else 'FAILED'}")
        p_ms, k_ms = ogham(f"benches/micro/{name}.og", paths, out, args.reps)
        b_ms = math.nan
        if os.path.exists(BASE):
            b_ms, _ = baseline(["micro", name, args.reps + 1] + paths)
        np_ms, _ = timed_py(npfn, args.reps) if npfn else (math.nan, None)
        if nbytes:
            rate = lambda ms: nbytes / ms / 1e6  # noqa: E731  GB/s
            unit, peak = "GB/s", PEAK_GBS
        else:
            rate = lambda ms: flops / ms / 1e6  # noqa: E731  GFLOP/s
            unit, peak = "GFLOP/s", PEAK_GFLOPS
        rows.append([name, unit, f(p_ms), f(k_ms, 2), f(rate(k_ms), 2),
                     f(100 * rate(k_ms) / peak, 0), f(b_ms, 2), f(rate(b_ms), 2),
                     f(k_ms / b_ms, 2), f(np_ms, 2)])
    table(f"Micro programs (f32; n = {big} elements, matmul {mm}³, inverse {batch}×8×8)",
          ["program", "unit", "ogham process ms", "ogham kernels ms", "ogham rate",
           "% of machine", "Rust ms", "Rust rate", "ogham/Rust", "NumPy ms"], rows)
    return ok


# ---------------------------------------------------------------------------------------------
# TWDTW and PtSel (issue 8)

def try_dtw():
    try:
        import dtw
        return dtw
    except Exception:
        print("note: dtw-python skipped (pip install dtw-python)")
        return None


def dtwpython_distance(dtw, y, ty, x, tx, a, mid, cycle):
    """Distance of one pair (no NaN, no band constraint) by dtw-python on the spec §3 costs."""
    cost, _ = tref.local_cost(y, ty, x, tx, a, mid, cycle)
    al = dtw.dtw(np.vstack([np.zeros((1, cost.shape[1])), cost]),
                 step_pattern=dtw.symmetric1, keep_internals=True)
    return float(np.min(al.costMatrix[-1, :]))


def bench_twdtw(args, work):
    dtw = try_dtw()
    a, mid, cycle = tref.PARAMS
    ok, rows = True, []
    # (a) many short pairs: 5 patterns of 45 samples x S series of 69 samples (3 years), 2 bands;
    # 500 generated series tiled to S.  (b) few long pairs: one pattern of 1000 x one series
    # of 365*years daily samples.
    S = max(500, int(20000 * args.scale))
    y, ty, x, tx, _, _ = tref.make_batch(3, 5, 45, 500, 3, 2)
    reps = S // 500
    x, tx = np.tile(x, (reps, 1, 1)), np.tile(tx, (reps, 1))
    yl, tyl, xl, txl, _, _ = tref.make_batch(4, 1, 1000, 1, 27, 2, step_ser=1)
    for label, entry, (Y, TY, X, TX), npairs in [
            ("(a) short pairs", "distances", (y, ty, x, tx), 20),
            ("(b) long pair", "distances_wavefront", (yl, tyl, xl, txl), 1),
            ("(b) long pair, column sweep", "distances", (yl, tyl, xl, txl), 1)]:
        paths = []
        for key, arr in zip(["y", "ty", "x", "tx"], [Y, TY, X, TX]):
            paths.append(os.path.join(work, f"twdtw_{label[:3]}_{key}.npy"))
            np.save(paths[-1], arr)
        out = os.path.join(work, f"out_twdtw_{label[1]}_{entry}")
        os.makedirs(out, exist_ok=True)
        oargs = paths + [f"{a}f64", f"{mid}f64", f"{cycle}f64", "f64.inf"]
        ogham("programs/twdtw.og", oargs, out, 1, entry=entry)
        d = np.load(os.path.join(out, "out0.npy"))  # [s][p]
        sub = [(s, p) for s in range(min(X.shape[0], npairs)) for p in range(Y.shape[0])]
        want = {}
        for s, p in sub:
            cm, _, _ = tref.pair(Y[p], TY[p], X[s], TX[s], a, mid, cycle, math.inf)
            want[(s, p)] = tref.distance(cm)
        err = max(abs(d[s, p] - want[(s, p)]) for s, p in sub)
        good = err <= 1e-9 * max(1.0, max(abs(v) for v in want.values()))
        ok &= bool(good)
        print(f"  check TWDTW {label}: ogham vs NumPy f64 on {len(sub)} pairs, max |diff| "
              f"{err:.2e} {'OK' if good else 'FAILED'}")
        cells = Y.shape[0] * X.shape[0] * Y.shape[1] * X.shape[1]
        b_ms = math.nan
        if os.path.exists(BASE):
            bargs = ["twdtw"] + paths + [a, mid, cycle, "inf", out, args.reps + 1]
            baseline(bargs)
            bd = np.load(os.path.join(out, "distances.npy")).reshape(d.shape)
            berr = float(np.max(np.abs(bd - d) / np.maximum(1.0, np.abs(d))))
            good = berr <= 1e-9
            ok &= bool(good)
            print(f"  check TWDTW {label}: baseline vs ogham on all pairs, max rel diff "
                  f"{berr:.2e} {'OK' if good else 'FAILED'}")
            b_ms, _ = baseline(bargs)
        p_ms, k_ms = ogham("programs/twdtw.og", oargs, out, args.reps, entry=entry)

        def numpy_sub():
            for s, p in sub:
                tref.pair(Y[p], TY[p], X[s], TX[s], a, mid, cycle, math.inf)
        np_ms, _ = timed_py(numpy_sub, max(1, args.reps // 2))
        np_cells = len(sub) * Y.shape[1] * X.shape[1]
        dp_rate = math.nan
        if dtw is not None:
            dsub = sub[: max(1, len(sub) // 4)]
            dp_ms, _ = timed_py(lambda: [dtwpython_distance(dtw, Y[p], TY[p], X[s], TX[s], a,
                                                             mid, cycle) for s, p in dsub], 1)
            dp_rate = len(dsub) * Y.shape[1] * X.shape[1] / dp_ms / 1e3
        rows.append([label, f"{Y.shape[0]}×{Y.shape[1]} · {X.shape[0]}×{X.shape[1]}",
                     f(p_ms), f(k_ms), f(cells / k_ms / 1e3, 1), f(b_ms),
                     f(cells / b_ms / 1e3, 1), f(k_ms / b_ms, 2),
                     f(np_cells / np_ms / 1e3, 2), f(dp_rate, 2),
                     f((cells / k_ms) / (np_cells / np_ms), 1)])
    table("TWDTW distances (f64, 2 bands, no band constraint); rates in million cell updates/s",
          ["case", "patterns · series", "ogham process ms", "ogham kernels ms",
           "ogham Mcells/s", "Rust ms", "Rust Mcells/s", "ogham/Rust", "NumPy f64 Mcells/s", "dtw-python Mcells/s", "ogham speed-up vs NumPy"], rows)
    return ok


def bench_ptsel(args, work):
    ok, rows = True, []
    R = C = max(50, int(500 * math.sqrt(args.scale)))
    _, _, _, _, phi = pref.make_stack(5, R, C, 20, 3, 0.05, 0.3)
    path = os.path.join(work, f"ptsel_{R}.npy")
    np.save(path, phi)
    K = phi.shape[0]
    for s in (2, 4):
        out = os.path.join(work, f"out_ptsel_{s}")
        os.makedirs(out, exist_ok=True)
        oargs = [path, f"{s}i64", "false"]
        ogham("programs/ptsel.og", oargs, out, 1, entry="rank_wp")
        got = np.load(os.path.join(out, "out0.npy"))
        np_ms, want = timed_py(lambda: pref.rank_vectorised(phi, s), max(1, args.reps // 2))
        ok &= check_close(f"PtSel s={s}: ogham vs NumPy f64", got, want, 1e-9)
        b_ms = math.nan
        if os.path.exists(BASE):
            bargs = ["ptsel", path, s, out, args.reps + 1]
            baseline(bargs)
            br = np.load(os.path.join(out, "rank.npy")).reshape(got.shape)
            ok &= check_close(f"PtSel s={s}: baseline vs ogham", br, got, 1e-9)
            b_ms, _ = baseline(bargs)
        p_ms, k_ms = ogham("programs/ptsel.og", oargs, out, args.reps, entry="rank_wp")
        work_units = pref.arc_count(R, C, s) * K
        rows.append([f"{R}×{C}, window {2 * s + 1}×{2 * s + 1}", f"{K}", f(p_ms), f(k_ms),
                     f(work_units / k_ms / 1e3, 1), f(b_ms), f(k_ms / b_ms, 2), f(np_ms), f(work_units / np_ms / 1e3, 1),
                     f(np_ms / k_ms, 2)])
    table("PtSel model-free rank, window-parallel (f64, 20 acquisitions, depth 3); "
          "rates in million arc·interferograms/s",
          ["patch", "K", "ogham process ms", "ogham kernels ms", "ogham rate", "Rust ms",
           "ogham/Rust", "NumPy ms",
           "NumPy rate", "ogham speed-up vs NumPy"], rows)
    return ok


# ---------------------------------------------------------------------------------------------
# Per-pixel styles (docs/performance.md)

def bench_styles(args, work):
    """The tutorial's detector written with masked maps and with loops (the two entry points of
    tests/cases/programs/per_pixel_styles.og) on one cube: same outputs, timed taking turns."""
    rng = np.random.default_rng(7)
    m, N = int(20000 * args.scale) or 1, 256
    Y = (1 + 0.1 * rng.standard_normal((m, N))).astype(np.float32)
    start = rng.integers(150, N, m)
    for i in range(0, m, 2):
        Y[i, start[i]:] += 1.0
    Y[rng.random((m, N)) < 0.65] = np.nan
    path = os.path.join(work, "styles.npy")
    np.save(path, Y)
    prog = "tests/cases/programs/per_pixel_styles.og"
    outs, times = {}, {"maps": [], "loops": []}
    for entry in times:
        out = os.path.join(work, f"out_styles_{entry}")
        os.makedirs(out, exist_ok=True)
        ogham(prog, [path, "100i64", "10i64", "3f32"], out, 1, entry=entry)
        outs[entry] = np.load(os.path.join(out, "out0.npy"))
    ok = bool(np.array_equal(outs["maps"], outs["loops"]))
    print(f"  check styles: maps vs loops {'OK' if ok else 'FAILED'} "
          f"({100 * np.mean(outs['maps'] >= 0):.0f} % of the pixels break)")
    for _ in range(args.reps):
        for entry in times:
            out = os.path.join(work, f"out_styles_{entry}")
            times[entry].append(ogham(prog, [path, "100i64", "10i64", "3f32"], out, 1,
                                      entry=entry))
    rows = []
    for entry, ts in times.items():
        p_ms, k_ms = median([t[0] for t in ts]), median([t[1] for t in ts])
        rows.append([entry, f(p_ms), f(k_ms, 1), f(1e3 * m / k_ms / 1e6, 2)])
    k_maps = median([t[1] for t in times["maps"]])
    k_loops = median([t[1] for t in times["loops"]])
    rows.append(["maps / loops", "", f(k_maps / k_loops, 2), ""])
    table(f"Per-pixel styles ({m} × {N} f32, 65 % missing; docs/performance.md)",
          ["entry", "process ms", "kernels ms", "Mpixels/s"], rows)
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--only", default="bfast,daily,scaling,aot,micro,twdtw,ptsel,styles")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiplies every problem size (default: the sizes of BENCHMARKS.md)")
    ap.add_argument("--zeit-core", default=os.environ.get("ZEIT_CORE"))
    ap.add_argument("--pypi-python", default=os.environ.get("PYPI_BFAST_PYTHON"),
                    help="python of the PyPI bfast 0.7 environment (tests/oracles/bfast_pypi.py)")
    ap.add_argument("--work", default=None, help="data and output folder (default: a temp dir)")
    args = ap.parse_args()
    if not os.path.exists(OGHAM):
        sys.exit(f"{OGHAM} is missing: run `cargo build --release` first")
    if not os.path.exists(BASE):
        print("note: Rust baseline skipped (cargo build --release --manifest-path "
              "benches/baseline/Cargo.toml)")
    print(f"cores: {os.cpu_count()}, numpy {np.__version__}, python {sys.version.split()[0]}")
    work = args.work or tempfile.mkdtemp(prefix="ogham-bench-")
    os.makedirs(work, exist_ok=True)
    ok = True
    for name, fn in [("bfast", bench_bfast), ("daily", bench_daily), ("scaling", bench_scaling),
                     ("aot", bench_aot),
                     ("micro", bench_micro), ("twdtw", bench_twdtw), ("ptsel", bench_ptsel),
                     ("styles", bench_styles)]:
        if name in args.only.split(","):
            ok &= fn(args, work)
    print("\nall output checks passed" if ok else "\nSOME OUTPUT CHECKS FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
