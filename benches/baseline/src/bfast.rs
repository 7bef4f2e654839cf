//! BFAST-Monitor, `r` profile, f32: the algorithm of `lib/bfast.og` (`bfast_r_pixel` at f32)
//! written by hand, one pixel per rayon task. Masked Gram matrix of the valid history, its
//! inverse by Gauss–Jordan with partial pivoting, one refinement step on centred values,
//! residuals of the valid observations compacted with their keys, sigma, MOSUM by a rolling
//! window sum, the count boundary, first crossing, median (selection, not a sort) and mean.
//! A history whose f32 Gram matrix fails f32's condition bound is fitted again in f64 on the
//! same observations and gets -3 only if f64's bound fails too (`ols_fit_guarded` of
//! `lib/regression`, docs/bfast.md "Conditioning guard").

use rayon::prelude::*;
use std::cmp::Ordering;
use std::ops::{Add, AddAssign, Div, DivAssign, Mul, Sub, SubAssign};

/// The arithmetic of the fit, in f32 and in f64 (the retry).
trait Real:
    Copy
    + PartialOrd
    + std::iter::Sum
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + AddAssign
    + SubAssign
    + DivAssign
{
    const ZERO: Self;
    const ONE: Self;
    /// The largest condition number of the Gram matrix accepted (`max_condition` of
    /// `lib/regression`).
    const MAX_CONDITION: Self;
    fn abs(self) -> Self;
    fn is_nan(self) -> bool;
    fn total_cmp(&self, other: &Self) -> Ordering;
    fn from_usize(n: usize) -> Self;
}

impl Real for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const MAX_CONDITION: Self = 1.0e6;
    fn abs(self) -> Self {
        self.abs()
    }
    fn is_nan(self) -> bool {
        self.is_nan()
    }
    fn total_cmp(&self, other: &Self) -> Ordering {
        f32::total_cmp(self, other)
    }
    fn from_usize(n: usize) -> Self {
        n as f32
    }
}

impl Real for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const MAX_CONDITION: Self = 7.0e13;
    fn abs(self) -> Self {
        self.abs()
    }
    fn is_nan(self) -> bool {
        self.is_nan()
    }
    fn total_cmp(&self, other: &Self) -> Ordering {
        f64::total_cmp(self, other)
    }
    fn from_usize(n: usize) -> Self {
        n as f64
    }
}

/// Per-pixel outputs compared with Ogham's: break index, magnitude and MOSUM mean.
pub struct Outputs {
    pub brk: Vec<i32>,
    pub magnitude: Vec<f32>,
    pub mosum_mean: Vec<f32>,
}

/// The `r`-profile design `[p][N]` (row-major): 1, (t - (n-1)/2)/f, cos/sin of 2πjt/f.
pub fn design(big_n: usize, n: usize, f: f64, k: usize, trend: bool) -> (usize, Vec<f32>) {
    let mut rows: Vec<Vec<f64>> = vec![vec![1.0; big_n]];
    let tc = (n as f64 - 1.0) / 2.0;
    if trend {
        rows.push((0..big_n).map(|t| (t as f64 - tc) / f).collect());
    }
    let drop_nyquist = (2 * k) as f64 == f;
    for j in 1..=k {
        let a = |t: usize| 2.0 * std::f64::consts::PI * j as f64 * t as f64 / f;
        rows.push((0..big_n).map(|t| a(t).cos()).collect());
        if !(drop_nyquist && j == k) {
            rows.push((0..big_n).map(|t| a(t).sin()).collect());
        }
    }
    let p = rows.len();
    (p, rows.into_iter().flatten().map(|v| v as f32).collect())
}

/// Inverse by Gauss–Jordan with partial pivoting; `None` if a pivot is zero.
fn inverse<T: Real>(g: &[T], p: usize) -> Option<Vec<T>> {
    let m = 2 * p;
    let mut a = vec![T::ZERO; p * m];
    for i in 0..p {
        a[i * m..i * m + p].copy_from_slice(&g[i * p..i * p + p]);
        a[i * m + p + i] = T::ONE;
    }
    for q in 0..p {
        let piv = (q..p).max_by(|&r, &s| a[r * m + q].abs().total_cmp(&a[s * m + q].abs()))?;
        if a[piv * m + q] == T::ZERO {
            return None;
        }
        if piv != q {
            for c in 0..m {
                a.swap(q * m + c, piv * m + c);
            }
        }
        let d = a[q * m + q];
        for c in 0..m {
            a[q * m + c] /= d;
        }
        for r in 0..p {
            if r != q {
                let factor = a[r * m + q];
                if factor != T::ZERO {
                    for c in 0..m {
                        let v = factor * a[q * m + c];
                        a[r * m + c] -= v;
                    }
                }
            }
        }
    }
    Some((0..p * p).map(|i| a[(i / p) * m + p + i % p]).collect())
}

fn norm1<T: Real>(a: &[T], p: usize) -> T {
    (0..p)
        .map(|c| (0..p).map(|r| a[r * p + c].abs()).sum::<T>())
        .fold(T::ZERO, |m, v| if v > m { v } else { m })
}

fn log_plus(x: f32) -> f32 {
    if x <= std::f32::consts::E {
        1.0
    } else {
        x.ln()
    }
}

/// Masked `X·v` over the first `n` positions where `v` is valid.
fn masked_xv<T: Real>(x: &[T], p: usize, big_n: usize, n: usize, v: &[T], out: &mut [T]) {
    out.iter_mut().for_each(|o| *o = T::ZERO);
    for i in 0..n {
        if !v[i].is_nan() {
            for r in 0..p {
                out[r] += x[r * big_n + i] * v[i];
            }
        }
    }
}

fn matvec<T: Real>(a: &[T], p: usize, v: &[T]) -> Vec<T> {
    (0..p)
        .map(|r| (0..p).map(|c| a[r * p + c] * v[c]).sum())
        .collect()
}

/// Least squares of the valid values of `y` (the first `y.len()` columns of the `[p][stride]`
/// design `x`, NaN = missing), `ols_fit_valid` with pivoting and refinement: the values centred
/// on their mean, the Gram matrix inverted by Gauss–Jordan, one refinement step, the mean added
/// to the intercept. `None` when the Gram matrix's condition number (1-norm) exceeds
/// `T::MAX_CONDITION` or a pivot is zero.
fn fit<T: Real>(x: &[T], stride: usize, p: usize, y: &[T]) -> Option<Vec<T>> {
    let n = y.len();
    let nh = y.iter().filter(|v| !v.is_nan()).count();
    let c = y.iter().filter(|v| !v.is_nan()).copied().sum::<T>() / T::from_usize(nh);
    let yc: Vec<T> = y.iter().map(|&v| v - c).collect();
    let mut g = vec![T::ZERO; p * p];
    for i in 0..n {
        if !yc[i].is_nan() {
            for r in 0..p {
                let xr = x[r * stride + i];
                for s in 0..p {
                    g[r * p + s] += xr * x[s * stride + i];
                }
            }
        }
    }
    let inv = inverse(&g, p).filter(|inv| norm1(&g, p) * norm1(inv, p) <= T::MAX_CONDITION)?;
    let mut xy = vec![T::ZERO; p];
    masked_xv(x, p, stride, n, &yc, &mut xy);
    let mut beta = matvec(&inv, p, &xy);
    let r: Vec<T> = (0..n)
        .map(|i| yc[i] - (0..p).map(|q| x[q * stride + i] * beta[q]).sum::<T>())
        .collect();
    masked_xv(x, p, stride, n, &r, &mut xy);
    let delta = matvec(&inv, p, &xy);
    beta.iter_mut().zip(delta).for_each(|(b, d)| *b += d);
    beta[0] += c;
    Some(beta)
}

/// One pixel: (break, magnitude).
#[allow(clippy::too_many_arguments)]
fn pixel(
    x: &[f32],
    p: usize,
    big_n: usize,
    n: usize,
    h: f32,
    lam: f32,
    y: &[f32],
) -> (i32, f32, f32) {
    let hist = &y[..n];
    let nh = hist.iter().filter(|v| !v.is_nan()).count();
    let w = (h * nh as f32).floor() as usize;
    if w <= 1 || nh <= p {
        return (-2, f32::NAN, f32::NAN);
    }
    let (lo, hi) = hist
        .iter()
        .filter(|v| !v.is_nan())
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(l, u), &v| {
            (l.min(v), u.max(v))
        });
    let mut beta = vec![0f32; p];
    if lo == hi {
        beta[0] = hi;
    } else {
        beta = match fit(x, big_n, p, hist) {
            Some(beta) => beta,
            None => {
                // f32's bound failed: the same observations, widened exactly, fitted in f64
                let n = hist.len();
                let x64: Vec<f64> = (0..p * n)
                    .map(|j| f64::from(x[(j / n) * big_n + j % n]))
                    .collect();
                let y64: Vec<f64> = hist.iter().map(|&v| f64::from(v)).collect();
                match fit(&x64, n, p, &y64) {
                    Some(beta) => beta.into_iter().map(|b| b as f32).collect(),
                    None => return (-3, f32::NAN, f32::NAN),
                }
            }
        };
    }
    let mut res = Vec::with_capacity(big_n);
    let mut keys = Vec::with_capacity(big_n);
    for (i, &v) in y.iter().enumerate() {
        if !v.is_nan() {
            let fit: f32 = (0..p).map(|q| x[q * big_n + i] * beta[q]).sum();
            res.push(v - fit);
            keys.push(i);
        }
    }
    let nv = res.len();
    let nm = nv - nh;
    let ss: f32 = res[..nh].iter().map(|r| r * r).sum();
    let sigma = (ss / (nh - p) as f32).sqrt();
    let scale = sigma * (nh as f32).sqrt();
    // MOSUM over all monitoring observations (its mean is an output too), first crossing.
    let mut window: f32 = if nm > 0 {
        res[nh + 1 - w..=nh].iter().sum()
    } else {
        0.0
    };
    let mut brk = -1i32;
    let mut mosum_sum = 0f32;
    for j in 0..nm {
        if j > 0 {
            window += res[nh + j] - res[nh + j - w];
        }
        let mosum = if window == 0.0 { 0.0 } else { window / scale };
        mosum_sum += mosum;
        let bound = lam * log_plus((nh + j + 1) as f32 / nh as f32).sqrt();
        if brk < 0 && mosum.abs() > bound {
            brk = keys[nh + j] as i32;
        }
    }
    let mosum_mean = mosum_sum / nm as f32;
    let mut mres = res[nh..].to_vec();
    let magnitude = if nm == 0 {
        f32::NAN
    } else {
        let mid = nm / 2;
        let (_, &mut upper, _) = mres.select_nth_unstable_by(mid, f32::total_cmp);
        if nm % 2 == 1 {
            upper
        } else {
            let lower = mres[..mid]
                .iter()
                .copied()
                .fold(f32::NEG_INFINITY, f32::max);
            (lower + upper) / 2.0
        }
    };
    (brk, magnitude, mosum_mean)
}

/// All pixels of a row-major `[m][N]` stack.
pub fn run(images: &[f32], big_n: usize, n: usize, f: f64, k: usize, h: f32, lam: f32) -> Outputs {
    let (p, x) = design(big_n, n, f, k, true);
    let per_pixel: Vec<(i32, f32, f32)> = images
        .par_chunks(big_n)
        .with_min_len(64)
        .map(|y| pixel(&x, p, big_n, n, h, lam, y))
        .collect();
    Outputs {
        brk: per_pixel.iter().map(|o| o.0).collect(),
        magnitude: per_pixel.iter().map(|o| o.1).collect(),
        mosum_mean: per_pixel.iter().map(|o| o.2).collect(),
    }
}
