//! `ogham autotune`: chooses the values of a program's tunable thresholds (the sizes from which
//! multi-versioned kernels take their first, more parallel version; see
//! `ogham_ir::kir::Threshold`) by timing an entry point on a data set with the chosen
//! backend, as Futhark's `futhark autotune` does.
//!
//! The search is coordinate descent over the thresholds in program order, starting from the
//! defaults: for each threshold it times the current value, `0` (always the first version) and
//! the largest value (never), each the median of `runs` runs, and keeps the fastest. Every
//! candidate's outputs must equal the defaults' (to the tolerance `1e-6` relative on floats):
//! a candidate that changes the results is rejected and reported. The result is a tuning file
//! (`name=value` lines with the timings as comments) for `--tuning`.
//!
//! The program is compiled once (`crate::cache::Compiled`; thresholds are run-time values, so
//! every candidate runs the same code) and a time is that of one call after an untimed warm-up
//! run: the execution alone on the CPU backend; with the CUDA backend the call also loads the
//! kernels' module (its CUBINs come from the on-disk cache after the warm-up). With the GPU
//! performance model (`cuda-model`) a time is the call's modelled total on the GPU
//! `OGHAM_GPU_MODEL` names (kernels, copies and allocations, as `OGHAM_PROFILE`'s last line
//! gives it): the model is deterministic, so each candidate runs once and without a warm-up, and
//! a GPU that is not here can be tuned for.

use crate::Backend;
use crate::cache::Compiled;
use ogham_ir::diag::Diagnostic;
use ogham_ir::kir::ThresholdId;
use ogham_runtime::ireval::Thresholds;
use ogham_runtime::value::Value;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Instant;

/// What the search found for one threshold.
pub struct Choice {
    pub id: ThresholdId,
    pub doc: String,
    pub default: i64,
    pub value: i64,
    /// Median seconds of each value tried.
    pub tried: Vec<(i64, f64)>,
}

/// The autotuner's result.
pub struct Tuned {
    pub choices: Vec<Choice>,
    /// Median seconds with the defaults and with the chosen values.
    pub default_seconds: f64,
    pub tuned_seconds: f64,
    /// Candidates rejected because their outputs differed.
    pub rejected: Vec<String>,
}

impl Tuned {
    /// The tuning file (`--tuning`).
    pub fn file(&self) -> String {
        let mut out = format!(
            "# ogham autotune: {:.3} ms with the defaults, {:.3} ms tuned\n",
            self.default_seconds * 1e3,
            self.tuned_seconds * 1e3
        );
        for c in &self.choices {
            let tried: Vec<String> = c
                .tried
                .iter()
                .map(|(v, s)| format!("{v}: {:.3} ms", s * 1e3))
                .collect();
            let _ = writeln!(out, "# {}", c.doc);
            let _ = writeln!(out, "# default {}; tried {}", c.default, tried.join(", "));
            let _ = writeln!(out, "{}={}", c.id, c.value);
        }
        out
    }
}

/// Median wall time of `runs` runs of `entry` with the threshold values `values` (in the
/// performance model: the modelled time of one run), and the outputs of the first.
fn measure(
    compiled: &Compiled,
    entry: &str,
    args: &[Value],
    values: &BTreeMap<ThresholdId, i64>,
    runs: usize,
) -> Result<(f64, Vec<Value>), Box<Diagnostic>> {
    let thresholds = Thresholds {
        named: values.clone(),
        others: None,
    };
    if let Some(modeled) = compiled.call_modeled(entry, args.to_vec(), &thresholds) {
        let (out, seconds) = modeled?;
        return Ok((seconds, out));
    }
    let mut times = Vec::new();
    let mut first = None;
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        let out = compiled.call_tuned(entry, args.to_vec(), &thresholds)?;
        times.push(start.elapsed().as_secs_f64());
        first.get_or_insert(out);
    }
    times.sort_by(f64::total_cmp);
    Ok((times[times.len() / 2], first.unwrap_or_default()))
}

/// Whether two runs' outputs agree (as the test harness compares, floats to 1e-6 relative).
fn same_outputs(a: &[Value], b: &[Value]) -> bool {
    crate::testing::compare_outputs(a, b, Some(1e-6)).is_ok()
}

/// Tunes the thresholds of `compiled`'s kernel IR (compiled for the backend to tune for) for
/// `entry` on `args`.
pub fn autotune(
    compiled: &Compiled,
    entry: &str,
    args: Vec<Value>,
    runs: usize,
) -> Result<Tuned, Box<Diagnostic>> {
    let thresholds = compiled.tunable();
    let mut values: BTreeMap<ThresholdId, i64> =
        thresholds.iter().map(|t| (t.id, t.default)).collect();
    // A first run warms caches (the NVRTC cache on disk, the operating system's) untimed; the
    // model's times do not depend on them.
    if compiled.backend() != Backend::CudaModel {
        measure(compiled, entry, &args, &values, 1)?;
    }
    let (default_seconds, expected) = measure(compiled, entry, &args, &values, runs)?;
    let mut best_seconds = default_seconds;
    let mut choices = Vec::new();
    let mut rejected = Vec::new();
    for t in thresholds {
        let mut tried = vec![(values[&t.id], best_seconds)];
        for candidate in [0, i64::MAX] {
            if tried.iter().any(|(v, _)| *v == candidate) {
                continue;
            }
            let mut trial = values.clone();
            trial.insert(t.id, candidate);
            let (seconds, out) = measure(compiled, entry, &args, &trial, runs)?;
            if !same_outputs(&out, &expected) {
                rejected.push(format!("{}={candidate}", t.id));
                continue;
            }
            tried.push((candidate, seconds));
            if seconds < best_seconds {
                best_seconds = seconds;
                values.insert(t.id, candidate);
            }
        }
        choices.push(Choice {
            id: t.id,
            doc: t.doc.clone(),
            default: t.default,
            value: values[&t.id],
            tried,
        });
    }
    Ok(Tuned {
        choices,
        default_seconds,
        tuned_seconds: best_seconds,
        rejected,
    })
}
