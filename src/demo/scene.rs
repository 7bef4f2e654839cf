//! The demo's synthetic scene: a deterministic NDMI-like image stack with cloud gaps and known
//! events, and a small interferogram stack with known persistent scatterers.
//!
//! Everything comes from one seed through a SplitMix64 generator, so a scene is reproducible
//! bit for bit on every machine. The model (all values are NDMI-like, roughly −0.1 … 0.7):
//!
//! - **Forest** (the top two thirds): `0.45 + 0.06·sin(2π(doy − 100)/365.25)` plus noise
//!   (σ = 0.02). A **greening** disc and a **browning** disc add a linear trend of
//!   ±0.012 per year over the whole period.
//! - **Clear-cuts** (deforestation): rectangles in the forest, each cut on a known date of the
//!   monitoring period; afterwards the pixel drops to bare soil (0.1) and regrows at 0.03 per
//!   year.
//! - **Crop fields** (the bottom third): rectangles following one of three crop calendars,
//!   Gaussian green-up peaks at day of year 120 (A), 220 (B), or 90 and 260 (C, double
//!   cropping), over bare soil.
//! - **Clouds**: on every date a smooth random field (bilinear interpolation of a coarse random
//!   grid) is thresholded at that date's cloud fraction, uniform in [0.5, 0.95]: spatially
//!   correlated gaps, about 72 % of all observations missing (NaN).
//! - **InSAR**: acquisitions every 12 days of a `size/4` square; persistent scatterers
//!   (probability 0.08) keep a stable phase plus noise (σ = 0.3 rad), all other pixels get
//!   uniformly random phases; interferograms of every pair up to 3 acquisitions apart
//!   (`shared/specs/ptsel.md` §9.2).

use std::f64::consts::PI;

/// Observations per year (16-day steps, as Landsat/MODIS composites).
pub const PER_YEAR: usize = 23;
/// The first year of the stack.
pub const START_YEAR: f64 = 2010.0;

/// Land-cover classes of the truth map (and TWDTW's patterns, in this order).
pub const CLASSES: [&str; 5] = ["forest", "crop A", "crop B", "crop C (double)", "cleared"];

/// A deterministic random number generator (SplitMix64).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }

    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u = self.uniform().max(1e-300);
        let v = self.uniform();
        (-2.0 * u.ln()).sqrt() * (2.0 * PI * v).cos()
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.uniform() * n as f64) as usize % n.max(1)
    }
}

/// The optical stack and its truth.
pub struct Scene {
    pub size: usize,
    pub years: usize,
    /// Fractional year of every date.
    pub dates: Vec<f64>,
    /// Day of year (1-based) of every date.
    pub doy: Vec<f64>,
    /// `[size*size][dates]` row-major, NaN where cloudy.
    pub ndmi: Vec<f32>,
    /// Truth class per pixel (index into [`CLASSES`]) at the end of the period.
    pub class: Vec<u8>,
    /// Truth clear-cut date per pixel (NaN: none).
    pub cut_date: Vec<f64>,
    /// Truth linear trend per pixel (NDMI per year), 0 outside the trend discs.
    pub trend: Vec<f64>,
    /// The number of history dates (BFAST monitors the rest).
    pub history: usize,
    pub insar: Insar,
}

/// The interferogram stack and its truth.
pub struct Insar {
    pub rows: usize,
    pub cols: usize,
    /// Wrapped phases `[K][rows][cols]`.
    pub phi: Vec<f64>,
    pub k: usize,
    /// Persistent scatterers, row-major.
    pub ps: Vec<bool>,
}

fn crop_profile(class: u8, doy: f64) -> f64 {
    let bump = |peak: f64, width: f64| (-((doy - peak) / width).powi(2)).exp();
    let bare = 0.0;
    match class {
        1 => bare + 0.5 * bump(120.0, 30.0),
        2 => bare + 0.5 * bump(220.0, 30.0),
        3 => bare + 0.4 * bump(90.0, 25.0) + 0.4 * bump(260.0, 25.0),
        _ => bare,
    }
}

fn forest_profile(doy: f64) -> f64 {
    0.45 + 0.06 * (2.0 * PI * (doy - 100.0) / 365.25).sin()
}

/// The noise-free value of class `class` on day of year `doy` (TWDTW's patterns).
pub fn class_profile(class: u8, doy: f64) -> f64 {
    match class {
        0 => forest_profile(doy),
        4 => 0.15,
        c => crop_profile(c, doy),
    }
}

/// A rectangle `[r0, r1) × [c0, c1)`.
#[derive(Clone, Copy)]
struct Rect {
    r0: usize,
    r1: usize,
    c0: usize,
    c1: usize,
}

impl Rect {
    fn contains(&self, r: usize, c: usize) -> bool {
        r >= self.r0 && r < self.r1 && c >= self.c0 && c < self.c1
    }
}

/// A smooth random field in `[0, 1]` over `size × size` (bilinear interpolation of a coarse grid).
fn smooth_field(rng: &mut Rng, size: usize, cell: usize) -> Vec<f64> {
    let n = size / cell + 2;
    let grid: Vec<f64> = (0..n * n).map(|_| rng.uniform()).collect();
    let mut out = Vec::with_capacity(size * size);
    for r in 0..size {
        for c in 0..size {
            let (y, x) = (r as f64 / cell as f64, c as f64 / cell as f64);
            let (i, j) = (y as usize, x as usize);
            let (fy, fx) = (y - i as f64, x - j as f64);
            let at = |a: usize, b: usize| grid[a.min(n - 1) * n + b.min(n - 1)];
            let top = at(i, j) * (1.0 - fx) + at(i, j + 1) * fx;
            let bottom = at(i + 1, j) * (1.0 - fx) + at(i + 1, j + 1) * fx;
            out.push(top * (1.0 - fy) + bottom * fy);
        }
    }
    out
}

/// The value below which a fraction `q` of `values` lies.
fn quantile(values: &[f64], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let i = ((sorted.len() as f64 * q) as usize).min(sorted.len() - 1);
    sorted[i]
}

/// Generates the scene: `size × size` pixels over `years` years.
pub fn generate(size: usize, years: usize, seed: u64) -> Scene {
    let mut rng = Rng::new(seed);
    let t = years * PER_YEAR;
    let history = t / 2;
    let dates: Vec<f64> = (0..t)
        .map(|i| START_YEAR + i as f64 / PER_YEAR as f64)
        .collect();
    let doy: Vec<f64> = dates
        .iter()
        .map(|d| 1.0 + (d - d.floor()) * 365.25)
        .collect();
    let forest_rows = size * 2 / 3;
    // Crop fields: a grid of rectangles in the bottom third.
    let field = (size / 8).max(2);
    let mut field_class = Vec::new();
    for _ in 0..(size / field + 1) * (size / field + 1) {
        field_class.push(1 + rng.below(3) as u8);
    }
    // Clear-cuts: rectangles in the forest, cut during the monitoring period.
    let monitor_start = dates[history];
    let end = dates[t - 1];
    let n_cuts = 6 + size / 32;
    let cuts: Vec<(Rect, f64)> = (0..n_cuts)
        .map(|_| {
            let h = (size / 16 + rng.below(size / 12 + 1)).max(2);
            let w = (size / 16 + rng.below(size / 12 + 1)).max(2);
            let r0 = rng.below(forest_rows.saturating_sub(h).max(1));
            let c0 = rng.below(size.saturating_sub(w).max(1));
            let date = rng.range(monitor_start + 0.3, end - 0.6);
            (
                Rect {
                    r0,
                    r1: r0 + h,
                    c0,
                    c1: c0 + w,
                },
                date,
            )
        })
        .collect();
    let disc = |r: usize, c: usize, cr: f64, cc: f64| {
        let (dr, dc) = (r as f64 - cr * size as f64, c as f64 - cc * size as f64);
        (dr * dr + dc * dc).sqrt() < 0.16 * size as f64
    };
    let px = size * size;
    let mut class = vec![0u8; px];
    let mut cut_date = vec![f64::NAN; px];
    let mut trend = vec![0.0; px];
    for r in 0..size {
        for c in 0..size {
            let p = r * size + c;
            if r >= forest_rows {
                class[p] = field_class[(r / field) * (size / field + 1) + c / field];
                continue;
            }
            if disc(r, c, 0.22, 0.25) {
                trend[p] = 0.012;
            } else if disc(r, c, 0.3, 0.75) {
                trend[p] = -0.012;
            }
            if let Some((_, date)) = cuts.iter().find(|(rect, _)| rect.contains(r, c)) {
                cut_date[p] = *date;
                class[p] = 4;
                trend[p] = 0.0;
            }
        }
    }
    let mut ndmi = vec![0f32; px * t];
    for p in 0..px {
        for i in 0..t {
            let value = match class[p] {
                0 => forest_profile(doy[i]) + trend[p] * (dates[i] - START_YEAR),
                4 if dates[i] >= cut_date[p] => 0.1 + 0.03 * (dates[i] - cut_date[p]),
                4 => forest_profile(doy[i]),
                c => crop_profile(c, doy[i]),
            };
            ndmi[p * t + i] = (value + 0.02 * rng.normal()) as f32;
        }
    }
    for i in 0..t {
        let fraction = rng.range(0.5, 0.95);
        let field = smooth_field(&mut rng, size, (size / 8).max(2));
        let threshold = quantile(&field, fraction);
        for (p, v) in field.iter().enumerate() {
            if *v < threshold {
                ndmi[p * t + i] = f32::NAN;
            }
        }
    }
    let insar = interferograms(&mut rng, (size / 4).max(8));
    Scene {
        size,
        years,
        dates,
        doy,
        ndmi,
        class,
        cut_date,
        trend,
        history,
        insar,
    }
}

fn wrap(x: f64) -> f64 {
    x.sin().atan2(x.cos())
}

/// Persistent scatterers in an `n × n` interferogram stack (30 acquisitions, depth 3).
fn interferograms(rng: &mut Rng, n: usize) -> Insar {
    let (acquisitions, depth, sigma, ps_prob) = (30usize, 3usize, 0.3, 0.08);
    let px = n * n;
    let ps: Vec<bool> = (0..px).map(|_| rng.uniform() < ps_prob).collect();
    let theta: Vec<f64> = (0..px).map(|_| rng.range(-PI, PI)).collect();
    let mut psi = vec![0.0; acquisitions * px];
    for a in 0..acquisitions {
        for p in 0..px {
            psi[a * px + p] = if ps[p] {
                theta[p] + sigma * rng.normal()
            } else {
                rng.range(-PI, PI)
            };
        }
    }
    let pairs: Vec<(usize, usize)> = (0..acquisitions)
        .flat_map(|a| (1..=depth).map(move |d| (a, a + d)))
        .filter(|(_, b)| *b < acquisitions)
        .collect();
    let mut phi = Vec::with_capacity(pairs.len() * px);
    for (a, b) in &pairs {
        for p in 0..px {
            phi.push(wrap(psi[b * px + p] - psi[a * px + p]));
        }
    }
    Insar {
        rows: n,
        cols: n,
        phi,
        k: pairs.len(),
        ps,
    }
}

/// PS pixels with another PS within Chebyshev distance `s` (the detectable ones).
pub fn detectable(insar: &Insar, s: usize) -> Vec<bool> {
    let n = insar.rows;
    let mut out = vec![false; n * n];
    for r in 0..n {
        for c in 0..n {
            if !insar.ps[r * n + c] {
                continue;
            }
            let mut count = 0;
            for rr in r.saturating_sub(s)..(r + s + 1).min(n) {
                for cc in c.saturating_sub(s)..(c + s + 1).min(n) {
                    count += insar.ps[rr * n + cc] as usize;
                }
            }
            out[r * n + c] = count >= 2;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenes_are_deterministic_and_cloudy() {
        let a = generate(32, 4, 7);
        let b = generate(32, 4, 7);
        assert_eq!(
            a.ndmi.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            b.ndmi.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
        let missing = a.ndmi.iter().filter(|x| x.is_nan()).count() as f64 / a.ndmi.len() as f64;
        assert!((0.6..0.9).contains(&missing), "cloud fraction {missing}");
        assert!(a.cut_date.iter().any(|d| !d.is_nan()));
        assert!(a.class.contains(&1) && a.class.contains(&0));
        assert!(a.insar.ps.iter().any(|p| *p));
    }
}
