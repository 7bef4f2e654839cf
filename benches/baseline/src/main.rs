//! Rust+rayon versions of the micro benchmarks of `benches/micro/*.og`, on the same data
//! (generated here with the same formulas). Prints one line per benchmark: name, median
//! milliseconds of 5 runs (the operation only), and a checksum to compare with Ogham's output.
//!
//! Usage: `ogham-baselines N` (elements for the streaming benchmarks).

use rayon::prelude::*;
use std::time::Instant;

fn median_ms(mut f: impl FnMut() -> f64) -> (f64, f64) {
    let mut times = Vec::new();
    let mut check = 0.0;
    for _ in 0..5 {
        let start = Instant::now();
        check = f();
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    (times[2], check)
}

fn input(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i % 1000) as f32) * 0.001).collect()
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(50_000_000);
    let xs = input(n);
    let (t, c) = median_ms(|| {
        let ys: Vec<f32> = xs.par_iter().map(|x| 2.0 * x + 1.0).collect();
        ys[n / 2] as f64
    });
    println!("map {t:.2} {c}");
    let (t, c) = median_ms(|| xs.par_iter().map(|&x| x as f64).sum::<f64>());
    println!("reduce {t:.2} {c}");
    let (t, c) = median_ms(|| {
        // Two-pass parallel inclusive scan over chunks.
        let chunk = n.div_ceil(rayon::current_num_threads() * 4).max(1);
        let mut out = vec![0f32; n];
        let totals: Vec<f32> = out
            .par_chunks_mut(chunk)
            .zip(xs.par_chunks(chunk))
            .map(|(o, x)| {
                let mut acc = 0f32;
                for (o, x) in o.iter_mut().zip(x) {
                    acc += x;
                    *o = acc;
                }
                acc
            })
            .collect();
        let mut carries = vec![0f32; totals.len()];
        for k in 1..totals.len() {
            carries[k] = carries[k - 1] + totals[k - 1];
        }
        out.par_chunks_mut(chunk)
            .zip(carries.par_iter())
            .for_each(|(o, c)| o.iter_mut().for_each(|v| *v += c));
        out[n - 1] as f64
    });
    println!("scan {t:.2} {c}");
    let (t, c) = median_ms(|| {
        let kept: Vec<f32> = xs.par_iter().copied().filter(|&x| x > 0.5).collect();
        kept.len() as f64
    });
    println!("filter {t:.2} {c}");
    // matmul: m×m, f32, naive loops with the inner dimension contiguous (transposed B).
    let m = 512;
    let a: Vec<f32> = (0..m * m).map(|i| ((i % 7) as f32) * 0.5).collect();
    let b: Vec<f32> = (0..m * m).map(|i| ((i % 5) as f32) * 0.25).collect();
    let bt: Vec<f32> = (0..m * m).map(|i| b[(i % m) * m + i / m]).collect();
    let (t, c) = median_ms(|| {
        let out: Vec<f32> = (0..m * m)
            .into_par_iter()
            .map(|ij| {
                let (i, j) = (ij / m, ij % m);
                (0..m).map(|k| a[i * m + k] * bt[j * m + k]).sum()
            })
            .collect();
        out.iter().map(|&x| x as f64).sum()
    });
    println!("matmul {t:.2} {c}");
}
