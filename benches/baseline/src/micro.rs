//! Micro programs of issue 4 item 6, hand-written with rayon, each the counterpart of a
//! `benches/micro/*.og` program: map, poly, reduce, scan, scatter, matmul, batched small inverse and
//! filter. Inputs are read from the same `.npy` files the Ogham programs get.

use rayon::prelude::*;

/// Element-wise `2x + 1`.
pub fn map(xs: &[f32]) -> Vec<f32> {
    xs.par_iter()
        .with_min_len(1 << 14)
        .map(|x| 2.0 * x + 1.0)
        .collect()
}

/// The degree-8 polynomial of `benches/micro/poly.og` by Horner's rule, clamped to [-1, 1].
pub fn poly(xs: &[f32]) -> Vec<f32> {
    let horner = |x: f32| {
        (((((((0.01 * x - 0.02) * x + 0.03) * x - 0.05) * x + 0.08) * x - 0.13) * x + 0.21) * x
            - 0.34)
            * x
            + 0.55
    };
    xs.par_iter()
        .with_min_len(1 << 14)
        .map(|&x| horner(x).min(1.0).max(-1.0))
        .collect()
}

/// Sum.
pub fn reduce(xs: &[f32]) -> f32 {
    xs.par_chunks(1 << 16).map(|c| c.iter().sum::<f32>()).sum()
}

/// Inclusive prefix sum in two passes: per-chunk sums, then each chunk rescanned from its
/// offset.
pub fn scan(xs: &[f32]) -> Vec<f32> {
    let chunk = xs.len().div_ceil(rayon::current_num_threads() * 4).max(1);
    let sums: Vec<f32> = xs.par_chunks(chunk).map(|c| c.iter().sum()).collect();
    let mut offsets = vec![0f32; sums.len()];
    for i in 1..sums.len() {
        offsets[i] = offsets[i - 1] + sums[i - 1];
    }
    let mut out = vec![0f32; xs.len()];
    out.par_chunks_mut(chunk)
        .zip(xs.par_chunks(chunk))
        .zip(offsets)
        .for_each(|((o, c), off)| {
            let mut acc = off;
            for (o, x) in o.iter_mut().zip(c) {
                acc += x;
                *o = acc;
            }
        });
    out
}

/// `dest[is[j]] = xs[j]` (indices outside are ignored), sequential: a permutation needs no
/// atomics, but a general scatter fixes the winner by order, as Ogham's CPU backend does.
pub fn scatter(xs: &[f32], is: &[i64]) -> Vec<f32> {
    let mut dest = vec![0f32; xs.len()];
    for (&i, &x) in is.iter().zip(xs) {
        if let Some(d) = usize::try_from(i).ok().and_then(|i| dest.get_mut(i)) {
            *d = x;
        }
    }
    dest
}

/// `a [n][m] · b [m][p]` with `b` transposed first, rows in parallel.
pub fn matmul(a: &[f32], b: &[f32], n: usize, m: usize, p: usize) -> Vec<f32> {
    let mut bt = vec![0f32; m * p];
    for r in 0..m {
        for c in 0..p {
            bt[c * m + r] = b[r * p + c];
        }
    }
    let mut out = vec![0f32; n * p];
    out.par_chunks_mut(p).enumerate().for_each(|(i, row)| {
        let ar = &a[i * m..(i + 1) * m];
        for (c, o) in row.iter_mut().enumerate() {
            *o = ar
                .iter()
                .zip(&bt[c * m..(c + 1) * m])
                .map(|(x, y)| x * y)
                .sum();
        }
    });
    out
}

/// Batched Gauss–Jordan inverses with partial pivoting of `[batch][k][k]` matrices.
pub fn inverse(a: &[f32], k: usize) -> Vec<f32> {
    let mut out = vec![0f32; a.len()];
    out.par_chunks_mut(k * k)
        .zip(a.par_chunks(k * k))
        .for_each(|(o, g)| {
            let m = 2 * k;
            let mut ab = vec![0f32; k * m];
            for i in 0..k {
                ab[i * m..i * m + k].copy_from_slice(&g[i * k..i * k + k]);
                ab[i * m + k + i] = 1.0;
            }
            for q in 0..k {
                let piv = (q..k).fold(q, |b, r| {
                    if ab[r * m + q].abs() > ab[b * m + q].abs() {
                        r
                    } else {
                        b
                    }
                });
                if piv != q {
                    for c in 0..m {
                        ab.swap(q * m + c, piv * m + c);
                    }
                }
                let d = ab[q * m + q];
                for c in 0..m {
                    ab[q * m + c] /= d;
                }
                for r in 0..k {
                    if r != q {
                        let f = ab[r * m + q];
                        for c in 0..m {
                            ab[r * m + c] -= f * ab[q * m + c];
                        }
                    }
                }
            }
            for i in 0..k {
                o[i * k..i * k + k].copy_from_slice(&ab[i * m + k..i * m + m]);
            }
        });
    out
}

/// The positive elements, in order.
pub fn filter(xs: &[f32]) -> Vec<f32> {
    let parts: Vec<Vec<f32>> = xs
        .par_chunks(1 << 16)
        .map(|c| c.iter().copied().filter(|&x| x > 0.0).collect())
        .collect();
    parts.concat()
}
