#!/usr/bin/env python3
"""NumPy float64 references for PtSel (spec shared/specs/ptsel.md §2-§4, §8, §9) and the golden
files of tests/cases/ptsel/.

Regenerate (deterministic: re-running rewrites byte-identical files):

    python3 tests/oracles/ptsel_reference.py            # checks spec §9.1, writes the goldens
    python3 tests/oracles/ptsel_precision.py            # precision / recall study (spec §9.2)

Versions used: Python 3.11.7, NumPy 2.4.6 (any NumPy >= 1.17, for default_rng).

Two references, cross-checked on every golden case (spec §8):
  1. `rank_direct`: loops over pixels, canonical neighbours and grid points,
     abs(mean(exp(1j*(dphi - beta*dh - alpha*dv)))), max or mean per pixel;
  2. `rank_vectorised`: per offset in D+, the two overlapping sub-arrays of the phasor stack,
     z = u_p * conj(u_q), model-free |mean_k z| or max_g |F_g . z| / K, scatter-max (or
     sum/count) into both endpoints.
Before writing anything the script asserts every value of spec §9.1 to 1e-9 with both.

Golden outputs are written from the vectorised reference (its phasor formulation is the
program's); the direct one agrees to ~1e-15.
"""

import math
import os

import numpy as np
from textvalues import fmt_value  # tests/oracles/textvalues.py

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "..", "cases", "ptsel")


def network(nacq, depth):
    return [(i, i + d) for i in range(nacq) for d in range(1, depth + 1) if i + d <= nacq - 1]


def wrap(x):
    return np.angle(np.exp(1j * x))


def interferograms(psi, pairs):
    return np.stack([wrap(psi[b] - psi[a]) for (a, b) in pairs])


def half_offsets(s):
    return [(dr, dc) for dr in range(0, s + 1) for dc in range(-s, s + 1) if dr > 0 or dc > 0]


def arc_count(R, C, s):
    return sum((R - dr) * (C - abs(dc)) for dr, dc in half_offsets(s))


def rank_direct(phi, s, agg="max", alpha=None, beta=None, hs=(0.0,), vs=(0.0,)):
    """Direct reference: returns (rank [R][C], arcs {(p, q): gamma})."""
    K, R, C = phi.shape
    alpha = np.zeros(K) if alpha is None else np.asarray(alpha)
    beta = np.zeros(K) if beta is None else np.asarray(beta)
    valid = ~np.any(np.isnan(phi), axis=0)
    per_pixel = [[[] for _ in range(C)] for _ in range(R)]
    arcs = {}
    for r in range(R):
        for c in range(C):
            for dr, dc in half_offsets(s):
                qr, qc = r + dr, c + dc
                if not (0 <= qr < R and 0 <= qc < C):
                    continue
                if not (valid[r, c] and valid[qr, qc]):
                    continue
                dphi = phi[:, r, c] - phi[:, qr, qc]
                g = max(abs(np.mean(np.exp(1j * (dphi - beta * h - alpha * v))))
                        for h in hs for v in vs)
                arcs[((r, c), (qr, qc))] = g
                per_pixel[r][c].append(g)
                per_pixel[qr][qc].append(g)
    rank = np.full((R, C), np.nan)
    for r in range(R):
        for c in range(C):
            if per_pixel[r][c]:
                rank[r, c] = max(per_pixel[r][c]) if agg == "max" else np.mean(per_pixel[r][c])
    return rank, arcs


def model_factors(alpha, beta, hs, vs):
    """[G][K] factors exp(-j(beta*h + alpha*v)), g = ih*|V| + iv."""
    return np.array([np.exp(-1j * (np.asarray(beta) * h + np.asarray(alpha) * v))
                     for h in hs for v in vs])


def rank_vectorised(phi, s, agg="max", alpha=None, beta=None, hs=None, vs=None, arcs_out=False):
    """Vectorised by offset. Model-free if hs is None. Returns rank [R][C] (and, with arcs_out,
    the per-arc coherences [R][C][|D+|], NaN where absent)."""
    K, R, C = phi.shape
    valid = ~np.any(np.isnan(phi), axis=0)
    u = np.exp(1j * np.where(np.isnan(phi), 0.0, phi))
    F = None if hs is None else model_factors(alpha, beta, hs, vs)
    best = np.full((R, C), -np.inf)
    total = np.zeros((R, C))
    cnt = np.zeros((R, C), dtype=np.int64)
    offs = half_offsets(s)
    arcs = np.full((R, C, len(offs)), np.nan)
    for o, (dr, dc) in enumerate(offs):
        c0, c1 = max(0, -dc), C - max(0, dc)          # p columns
        if R - dr <= 0 or c1 <= c0:
            continue
        up = u[:, 0:R - dr, c0:c1]
        uq = u[:, dr:R, c0 + dc:c1 + dc]
        z = up * np.conj(uq)
        if F is None:
            g = np.abs(z.sum(axis=0)) / K
        else:
            g = np.max(np.abs(np.tensordot(F, z, axes=(1, 0))), axis=0) / K
        ok = valid[0:R - dr, c0:c1] & valid[dr:R, c0 + dc:c1 + dc]
        g = np.where(ok, g, np.nan)
        arcs[0:R - dr, c0:c1, o] = g
        for (rs, cs) in [((slice(0, R - dr)), slice(c0, c1)),
                         ((slice(dr, R)), slice(c0 + dc, c1 + dc))]:
            gg = np.where(ok, g, -np.inf)
            best[rs, cs] = np.maximum(best[rs, cs], gg)
            total[rs, cs] += np.where(ok, g, 0.0)
            cnt[rs, cs] += ok
    if agg == "max":
        rank = np.where(cnt > 0, best, np.nan)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            rank = np.where(cnt > 0, total / np.maximum(cnt, 1), np.nan)
    return (rank, arcs) if arcs_out else rank


# ----------------------------------------------------------------------------------------------
# Spec §9.1

LAMBDA = 0.056


def tiny_inputs():
    R = C = 3
    t = np.array([0.0, 0.1, 0.2, 0.3])
    pairs = network(4, 2)
    psi = np.empty((4, R, C))
    for i in range(4):
        for r in range(R):
            for c in range(C):
                p = 3 * r + c
                if (r, c) in [(0, 0), (0, 1), (1, 1)]:
                    v = 0.5 * p + 0.1 * math.sin(i + p)
                    if (r, c) == (1, 1):
                        v += 4 * math.pi * t[i] * 0.02 / LAMBDA
                else:
                    v = 10 * math.sin(12.9898 * (i + 1) + 78.233 * (p + 1))
                psi[i, r, c] = v
    alpha = np.array([4 * math.pi * (t[b] - t[a]) / LAMBDA for a, b in pairs])
    return psi, pairs, t, alpha


SPEC_RANKS = {
    ("free", "max"): [[0.9988860828, 0.9988860828, 0.6470084728],
                      [0.4598197778, 0.9627639764, 0.6025903909],
                      [0.2011440739, 0.5685243955, 0.5685243955]],
    ("free", "mean"): [[0.7975198159, 0.6089387270, 0.5584640085],
                       [0.2946331910, 0.4352899883, 0.3537806849],
                       [0.1742245148, 0.3129229694, 0.2822969171]],
    ("grid", "max"): [[0.9988860828, 0.9988860828, 0.7889568523],
                      [0.6215480181, 0.9934901043, 0.6241805227],
                      [0.2712070407, 0.6066956744, 0.5708472724]],
    ("grid", "mean"): [[0.8614243628, 0.6895286455, 0.6689862117],
                       [0.4019389666, 0.4940572695, 0.4265444893],
                       [0.2108198454, 0.3609105108, 0.3170513665]],
}
TINY_V = [-0.02, -0.01, 0.0, 0.01, 0.02]


def check_spec():
    psi, pairs, t, alpha = tiny_inputs()
    assert pairs == [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)]
    assert np.allclose(alpha, [22.4399475256, 44.8798950513, 22.4399475256, 44.8798950513,
                               22.4399475256], atol=1e-9, rtol=0)
    phi = interferograms(psi, pairs)
    assert np.allclose(phi[:, 0, 0], [0.0841470985, 0.0909297427, 0.0067826442, -0.0700350977,
                                      -0.0768177419], atol=1e-9, rtol=0)
    for (model, agg), want in SPEC_RANKS.items():
        kw = {} if model == "free" else dict(alpha=alpha, beta=np.zeros(5), hs=[0.0], vs=TINY_V)
        r1, arcs = rank_direct(phi, 1, agg, **kw)
        r2 = rank_vectorised(phi, 1, agg, **kw)
        assert np.allclose(r1, want, atol=1e-9, rtol=0), (model, agg, r1)
        assert np.allclose(r2, want, atol=1e-9, rtol=0), (model, agg, r2)
        a01 = arcs[((0, 0), (0, 1))]
        a0111 = arcs[((0, 1), (1, 1))]
        a0011 = arcs[((0, 0), (1, 1))]
        assert abs(a01 - 0.9988860828) < 1e-9
        if model == "free":
            assert abs(a0111 - 0.9566071498) < 1e-9 and abs(a0011 - 0.9627639764) < 1e-9
        else:
            assert abs(a0111 - 0.9934901043) < 1e-9 and abs(a0011 - 0.9920883400) < 1e-9
    assert arc_count(3, 3, 1) == 20 and arc_count(100, 100, 3) == 231672
    assert arc_count(500, 500, 3) == 5958072
    print("spec §9.1: network, alpha, Phi, 4 rank variants, arcs, A(R,C,s): all OK (1e-9), "
          "direct and vectorised")


# ----------------------------------------------------------------------------------------------
# Generated stacks with known persistent scatterers (spec §9.2)

def make_stack(seed, R, C, nacq, depth, ps_prob, sigma, lam=LAMBDA, v_sd=0.0, ramp=0.0,
               dt_days=12.0):
    """Acquisition phases psi [N][R][C], the PS map, times t [N] (years), pairs, Phi [K][R][C]."""
    rng = np.random.default_rng(seed)
    t = dt_days * np.arange(nacq) / 365.25
    ps = rng.random((R, C)) < ps_prob
    theta = rng.uniform(-math.pi, math.pi, (R, C))
    vel = rng.normal(0.0, v_sd, (R, C)) if v_sd > 0 else np.zeros((R, C))
    psi = rng.uniform(-math.pi, math.pi, (nacq, R, C))
    eps = rng.normal(0.0, sigma, (nacq, R, C))
    stable = theta[None] + eps + 4 * math.pi * t[:, None, None] * vel[None] / lam
    psi = np.where(ps[None], stable, psi)
    if ramp > 0:
        rr, cc = np.meshgrid(np.arange(R) / max(R - 1, 1), np.arange(C) / max(C - 1, 1),
                             indexing="ij")
        for i in range(nacq):
            a, b = rng.uniform(-ramp, ramp, 2)
            psi[i] += a * rr + b * cc
    pairs = network(nacq, depth)
    return psi, ps, t, pairs, interferograms(psi, pairs)


def detectable(ps, s):
    """PS pixels with at least one other PS in their window (Chebyshev distance <= s)."""
    R, C = ps.shape
    out = np.zeros_like(ps)
    for r in range(R):
        for c in range(C):
            if ps[r, c]:
                w = ps[max(0, r - s):r + s + 1, max(0, c - s):c + s + 1]
                out[r, c] = w.sum() >= 2
    return out


def precision_recall(rank, ps, s, tau):
    truth = detectable(ps, s)
    isolated = ps & ~truth
    sel = rank >= tau
    counted = sel & ~isolated
    hits = int((sel & truth).sum())
    prec = hits / max(int(counted.sum()), 1)
    rec = hits / max(int(truth.sum()), 1)
    return prec, rec, int(truth.sum()), int(isolated.sum())


def null_threshold(seed, nacq, depth, s, size=96, q=99.9, **grid):
    _, _, _, _, phi = make_stack(seed, size, size, nacq, depth, 0.0, 0.3)
    rk = rank_vectorised(phi, s, "max", **grid)
    inner = rk[s:size - s, s:size - s]
    return float(np.percentile(inner, q)), float(np.mean(inner))


# ----------------------------------------------------------------------------------------------
# Textual values

def write(name, values):
    with open(os.path.join(OUT_DIR, name), "w") as f:
        for v, suf in values:
            f.write(fmt_value(v, suf) + "\n")


def main():
    check_spec()
    os.makedirs(OUT_DIR, exist_ok=True)
    # --- tiny ------------------------------------------------------------------------------
    psi, pairs, t, alpha = tiny_inputs()
    phi = interferograms(psi, pairs)
    K = len(pairs)
    write("tiny_psi.in", [(psi, "f64"), (2, "i64")])
    write("tiny_psi.out", [(phi, "f64"), ([a for a, _ in pairs], "i64"),
                           ([b for _, b in pairs], "i64")])
    write("tiny_alpha.in", [(t, "f64"), (2, "i64"), (LAMBDA, "f64")])
    write("tiny_alpha.out", [(alpha, "f64")])
    grid = dict(alpha=alpha, beta=np.zeros(K), hs=[0.0], vs=TINY_V)
    for agg in ["max", "mean"]:
        mean = agg == "mean"
        write(f"tiny_{agg}.in", [(phi, "f64"), (1, "i64"), (mean, "bool")])
        write(f"tiny_{agg}.out", [(rank_vectorised(phi, 1, agg), "f64")])
        write(f"tiny_grid_{agg}.in", [(phi, "f64"), (1, "i64"), (mean, "bool"), (alpha, "f64"),
                                      (np.zeros(K), "f64"), (np.array([0.0]), "f64"),
                                      (np.array(TINY_V), "f64")])
        write(f"tiny_grid_{agg}.out", [(rank_vectorised(phi, 1, agg, **grid), "f64")])
    _, arcs = rank_vectorised(phi, 1, "max", arcs_out=True)
    write("tiny_arcs.in", [(phi, "f64"), (1, "i64")])
    write("tiny_arcs.out", [(arcs, "f64")])
    # --- generated: a small stack with PS, two invalid pixels, a height + velocity grid ------
    R, C, nacq, depth, s = 9, 11, 10, 2, 2
    psi, ps, t, pairs, phi = make_stack(21, R, C, nacq, depth, 0.2, 0.3, v_sd=0.03)
    phi[3, 4, 5] = np.nan          # pixel (4, 5) invalid in one interferogram
    phi[:, 0, 10] = np.nan         # pixel (0, 10) invalid everywhere
    K = len(pairs)
    a_ = np.array([4 * math.pi * (t[b] - t[a]) / LAMBDA for a, b in pairs])
    bperp = np.random.default_rng(22).normal(0.0, 100.0, nacq)
    b_ = np.array([4 * math.pi * (bperp[b] - bperp[a]) / (LAMBDA * 850e3 * math.sin(0.6))
                   for a, b in pairs])
    hs = np.array([-10.0, 0.0, 10.0])
    vs = np.array([-0.04, -0.02, 0.0, 0.02, 0.04])
    stats = []
    for agg in ["max", "mean"]:
        mean = agg == "mean"
        r_free = rank_vectorised(phi, s, agg)
        r_grid = rank_vectorised(phi, s, agg, alpha=a_, beta=b_, hs=hs, vs=vs)
        d_free, _ = rank_direct(phi, s, agg)
        d_grid, _ = rank_direct(phi, s, agg, alpha=a_, beta=b_, hs=hs, vs=vs)
        stats.append(np.nanmax(np.abs(r_free - d_free)))
        stats.append(np.nanmax(np.abs(r_grid - d_grid)))
        assert np.array_equal(np.isnan(r_free), np.isnan(d_free))
        write(f"gen_{agg}.in", [(phi, "f64"), (s, "i64"), (mean, "bool")])
        write(f"gen_{agg}.out", [(r_free, "f64")])
        write(f"gen_auto_{agg}.in", [(phi, "f64"), (s, "i64"), (mean, "bool"), (1000, "i64")])
        write(f"gen_grid_{agg}.in", [(phi, "f64"), (s, "i64"), (mean, "bool"), (a_, "f64"),
                                     (b_, "f64"), (hs, "f64"), (vs, "f64")])
        write(f"gen_grid_{agg}.out", [(r_grid, "f64")])
    _, arcs = rank_vectorised(phi, s, "max", arcs_out=True)
    write("gen_arcs.in", [(phi, "f64"), (s, "i64")])
    write("gen_arcs.out", [(arcs, "f64")])
    print(f"gen: {R}x{C}, N={nacq}, d={depth} (K={K}), s={s}, {int(ps.sum())} PS; direct vs "
          f"vectorised max |diff| {max(stats):.2e}")


if __name__ == "__main__":
    main()
