//! PtSel model-free rank, window-parallel (spec `shared/specs/ptsel.md`): one pixel per rayon
//! task evaluates every arc to a neighbour in its `(2s+1)²` window, the arc temporal coherence
//! `|Σ_k u_p·conj(u_q)| / K` of the unit phasors, and keeps the maximum (NaN without a valid
//! arc). A pixel is valid when no interferogram is NaN there.

use rayon::prelude::*;

/// Ranks `[R][C]` of a wrapped phase stack `phi [K][R][C]`.
pub fn rank_wp(phi: &[f64], k: usize, r: usize, c: usize, s: usize) -> Vec<f64> {
    // phasors, pixel-major: [R][C][K] of (cos, sin)
    let mut u = vec![(0f64, 0f64); r * c * k];
    let mut valid = vec![true; r * c];
    for kk in 0..k {
        for p in 0..r * c {
            let v = phi[kk * r * c + p];
            if v.is_nan() {
                valid[p] = false;
            } else {
                u[p * k + kk] = (v.cos(), v.sin());
            }
        }
    }
    let s = s as isize;
    (0..r * c)
        .into_par_iter()
        .map(|p| {
            if !valid[p] {
                return f64::NAN;
            }
            let (pr, pc) = ((p / c) as isize, (p % c) as isize);
            let mut best = f64::NEG_INFINITY;
            for dr in -s..=s {
                for dc in -s..=s {
                    let (qr, qc) = (pr + dr, pc + dc);
                    if (dr, dc) == (0, 0)
                        || qr < 0
                        || qc < 0
                        || qr >= r as isize
                        || qc >= c as isize
                    {
                        continue;
                    }
                    let q = qr as usize * c + qc as usize;
                    if !valid[q] {
                        continue;
                    }
                    let (up, uq) = (&u[p * k..(p + 1) * k], &u[q * k..(q + 1) * k]);
                    let (mut re, mut im) = (0.0, 0.0);
                    for (a, b) in up.iter().zip(uq) {
                        re += a.0 * b.0 + a.1 * b.1;
                        im += a.1 * b.0 - a.0 * b.1;
                    }
                    best = best.max((re * re + im * im).sqrt() / k as f64);
                }
            }
            if best == f64::NEG_INFINITY {
                f64::NAN
            } else {
                best
            }
        })
        .collect()
}
