//! Hand-written Rust+rayon baselines for `benches/run.py`.
//!
//! `ogham-bench-baseline bfast IMAGES.npy n f k h lambda OUTDIR REPS` runs BFAST-Monitor (`r`
//! profile, f32) on a `[m][N]` f32 stack, writes `brk.npy`, `magnitude.npy`, `mosum_mean.npy`
//! to OUTDIR and prints the compute time of each of REPS repetitions in ms (input reading and
//! output writing excluded), one `ms=` line each.
//! `ogham-bench-baseline micro NAME REPS INPUT.npy...` runs one micro program the same way
//! (names: map, reduce, scan, scatter, matmul, inverse, filter) and prints a checksum.
//! `ogham-bench-baseline twdtw Y TY X TX a mid cycle max_elapsed OUTDIR REPS` writes the TWDTW
//! distances `[s][p]` (flattened) to `OUTDIR/distances.npy`.
//! `ogham-bench-baseline ptsel PHI s OUTDIR REPS` writes the PtSel window-parallel ranks
//! `[R][C]` (flattened) to `OUTDIR/rank.npy`.

mod bfast;
mod micro;
mod npy;
mod ptsel;
mod twdtw;

use std::hint::black_box;
use std::time::Instant;

fn arg<T: std::str::FromStr>(args: &[String], i: usize, what: &str) -> Result<T, String> {
    args.get(i)
        .ok_or(format!("missing argument {what}"))?
        .parse()
        .map_err(|_| format!("bad argument {what}: {}", args[i]))
}

fn f32s(a: &npy::Array) -> Vec<f32> {
    a.data.iter().map(|&v| v as f32).collect()
}

fn timed<T>(reps: usize, mut body: impl FnMut() -> T) -> T {
    let mut last = None;
    for _ in 0..reps.max(1) {
        let start = Instant::now();
        let out = black_box(body());
        println!("ms={:.3}", start.elapsed().as_secs_f64() * 1e3);
        last = Some(out);
    }
    last.expect("at least one repetition")
}

fn run_bfast(args: &[String]) -> Result<(), String> {
    let images = npy::read(&args[0])?;
    let [_, big_n] = images.shape[..] else {
        return Err("images must be [m][N]".into());
    };
    let n: usize = arg(args, 1, "n")?;
    let f: f64 = arg(args, 2, "f")?;
    let k: usize = arg(args, 3, "k")?;
    let h: f32 = arg(args, 4, "h")?;
    let lam: f32 = arg(args, 5, "lambda")?;
    let outdir: String = arg(args, 6, "outdir")?;
    let reps: usize = arg(args, 7, "reps")?;
    if n == 0 || n > big_n {
        return Err("n must be in 1..=N".into());
    }
    let ys = f32s(&images);
    let out = timed(reps, || bfast::run(&ys, big_n, n, f, k, h, lam));
    npy::write_i32(&format!("{outdir}/brk.npy"), &out.brk)?;
    npy::write_f32(&format!("{outdir}/magnitude.npy"), &out.magnitude)?;
    npy::write_f32(&format!("{outdir}/mosum_mean.npy"), &out.mosum_mean)
}

fn run_micro(args: &[String]) -> Result<(), String> {
    let name: String = arg(args, 0, "name")?;
    let reps: usize = arg(args, 1, "reps")?;
    let inputs: Vec<npy::Array> = args[2..]
        .iter()
        .map(|p| npy::read(p))
        .collect::<Result<_, _>>()?;
    let first = inputs.first().ok_or("missing input")?;
    let xs = f32s(first);
    let checksum: f64 = match name.as_str() {
        "map" => timed(reps, || micro::map(&xs))
            .iter()
            .map(|&v| v as f64)
            .sum(),
        "poly" => timed(reps, || micro::poly(&xs))
            .iter()
            .map(|&v| v as f64)
            .sum(),
        "reduce" => timed(reps, || micro::reduce(&xs)) as f64,
        "scan" => *timed(reps, || micro::scan(&xs)).last().unwrap_or(&0.0) as f64,
        "scatter" => {
            let is: Vec<i64> = inputs
                .get(1)
                .ok_or("missing indices")?
                .data
                .iter()
                .map(|&v| v as i64)
                .collect();
            timed(reps, || micro::scatter(&xs, &is))
                .iter()
                .map(|&v| v as f64)
                .sum()
        }
        "matmul" => {
            let b = inputs.get(1).ok_or("missing b")?;
            let (n, m, p) = (first.shape[0], first.shape[1], b.shape[1]);
            let bs = f32s(b);
            timed(reps, || micro::matmul(&xs, &bs, n, m, p))
                .iter()
                .map(|&v| v as f64)
                .sum()
        }
        "inverse" => {
            let k = first.shape[1];
            timed(reps, || micro::inverse(&xs, k))
                .iter()
                .map(|&v| v as f64)
                .sum()
        }
        "filter" => timed(reps, || micro::filter(&xs)).len() as f64,
        other => return Err(format!("unknown micro program {other}")),
    };
    println!("checksum={checksum}");
    Ok(())
}

fn run_twdtw(args: &[String]) -> Result<(), String> {
    let arrays: Vec<npy::Array> = args[..4]
        .iter()
        .map(|p| npy::read(p))
        .collect::<Result<_, _>>()?;
    let [y, ty, x, tx] = &arrays[..] else {
        return Err("twdtw needs y ty x tx".into());
    };
    let (&[p, n, b], &[s, m, b2]) = (&y.shape[..], &x.shape[..]) else {
        return Err("y must be [p][n][b] and x [s][m][b]".into());
    };
    if b != b2 || ty.shape != [p, n] || tx.shape != [s, m] {
        return Err("inconsistent twdtw shapes".into());
    }
    let prm = twdtw::Params {
        a: arg(args, 4, "a")?,
        mid: arg(args, 5, "mid")?,
        cycle: arg(args, 6, "cycle")?,
        max_elapsed: arg(args, 7, "max_elapsed")?,
    };
    let outdir: String = arg(args, 8, "outdir")?;
    let reps: usize = arg(args, 9, "reps")?;
    let d = timed(reps, || {
        twdtw::distances(&y.data, &ty.data, &x.data, &tx.data, [p, n, b, s, m], &prm)
    });
    npy::write_f64(&format!("{outdir}/distances.npy"), &d)
}

fn run_ptsel(args: &[String]) -> Result<(), String> {
    let phi = npy::read(args.first().ok_or("missing phi")?)?;
    let &[k, r, c] = &phi.shape[..] else {
        return Err("phi must be [K][R][C]".into());
    };
    let s: usize = arg(args, 1, "s")?;
    let outdir: String = arg(args, 2, "outdir")?;
    let reps: usize = arg(args, 3, "reps")?;
    if k == 0 || s == 0 {
        return Err("need K >= 1 and s >= 1".into());
    }
    let rank = timed(reps, || ptsel::rank_wp(&phi.data, k, r, c, s));
    npy::write_f64(&format!("{outdir}/rank.npy"), &rank)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("bfast") => run_bfast(&args[1..]),
        Some("micro") => run_micro(&args[1..]),
        Some("twdtw") => run_twdtw(&args[1..]),
        Some("ptsel") => run_ptsel(&args[1..]),
        _ => Err("usage: ogham-bench-baseline (bfast|micro|twdtw|ptsel) ...".into()),
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}
