//! TWDTW distances (spec `shared/specs/twdtw.md` §3–4), one (series, pattern) pair per rayon
//! task, the column sweep of `lib/dtw.og`'s `distances` with an O(n) rolling column: samples
//! with a NaN band removed, local cost = Euclidean band distance + logistic time weight,
//! open begin and end (row 0 is zero), cells past the band constraint `max_elapsed` are +inf,
//! distance = the smallest finite value of the last row.

use rayon::prelude::*;

/// Parameters of the time weight and the band constraint.
pub struct Params {
    pub a: f64,
    pub mid: f64,
    pub cycle: f64,
    pub max_elapsed: f64,
}

/// Row-major `[len][bands]` values and `[len]` days of one series or pattern.
struct Seq<'a> {
    values: &'a [f64],
    days: &'a [f64],
}

fn valid_rows(s: &Seq, bands: usize) -> Vec<usize> {
    (0..s.days.len())
        .filter(|&i| {
            s.values[i * bands..(i + 1) * bands]
                .iter()
                .all(|v| !v.is_nan())
        })
        .collect()
}

fn pair(y: &Seq, x: &Seq, bands: usize, prm: &Params, col: &mut Vec<f64>) -> f64 {
    let py = valid_rows(y, bands);
    let px = valid_rows(x, bands);
    let n = py.len();
    col.clear();
    col.resize(n + 1, 0.0);
    let cost = |i: usize, j: usize| -> (f64, f64) {
        let (yi, xj) = (py[i], px[j]);
        let d2: f64 = (0..bands)
            .map(|b| {
                let d = y.values[yi * bands + b] - x.values[xj * bands + b];
                d * d
            })
            .sum();
        let td = (y.days[yi] - x.days[xj]).abs();
        let g = td.min(prm.cycle - td);
        (d2.sqrt() + 1.0 / (1.0 + (-prm.a * (g - prm.mid)).exp()), g)
    };
    if px.is_empty() || n == 0 {
        return f64::INFINITY;
    }
    for i in 1..=n {
        col[i] = col[i - 1] + cost(i - 1, 0).0;
    }
    let mut best = if col[n].is_finite() {
        col[n]
    } else {
        f64::INFINITY
    };
    for j in 1..px.len() {
        let mut diag = col[0];
        for i in 1..=n {
            let (c, g) = cost(i - 1, j);
            let left = col[i];
            col[i] = if g > prm.max_elapsed {
                f64::INFINITY
            } else {
                c + diag.min(left).min(col[i - 1])
            };
            diag = left;
        }
        if col[n] < best {
            best = col[n];
        }
    }
    best
}

/// Distances `[s][p]` of patterns `y [p][n][b]`, `ty [p][n]` and series `x [s][m][b]`, `tx [s][m]`.
pub fn distances(
    y: &[f64],
    ty: &[f64],
    x: &[f64],
    tx: &[f64],
    dims: [usize; 5],
    prm: &Params,
) -> Vec<f64> {
    let [p, n, b, s, m] = dims;
    (0..s * p)
        .into_par_iter()
        .map_init(Vec::new, |col, idx| {
            let (si, pi) = (idx / p, idx % p);
            let yy = Seq {
                values: &y[pi * n * b..(pi + 1) * n * b],
                days: &ty[pi * n..(pi + 1) * n],
            };
            let xx = Seq {
                values: &x[si * m * b..(si + 1) * m * b],
                days: &tx[si * m..(si + 1) * m],
            };
            pair(&yy, &xx, b, prm, col)
        })
        .collect()
}
