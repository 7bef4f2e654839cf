//! The IR evaluator: executes core IR and kernel IR (`ogham_ir`) with the reference
//! interpreter's semantics, so that every middle-end pass can be checked against the interpreter
//! before any backend exists (`--backend core`, `--backend kir`).
//!
//! It shares the interpreter's values (`crate::val`: flat, reference-counted, copy-on-write
//! arrays), scalar operations and indexing code, so the two agree on every corner case and report
//! run-time errors with the same codes and messages; the location is the statement's `loc`.
//! Kernels (`Seg` operations) run sequentially, point by point in row-major order, which is one
//! of the executions their parallel semantics allow (reductions combine in index order).
//!
//! Invariants relied on: the program passed the IR verifier (operands have the types the
//! constructs expect; an ill-typed program yields an internal error `R0708`, never a panic),
//! and a consumed array is not used after the statement consuming it — so the evaluator drops
//! its binding there, which lets in-place updates of unshared arrays run in O(1).

mod boundary;
pub(crate) mod eval;
pub mod parts;

pub use eval::Launcher;

use crate::boundary::no_entry;
use crate::error::{R_CUDA, R_INTERNAL, error};
use crate::value::Value;
use ogham_ir::diag::Diagnostic;
use ogham_ir::kir::{Threshold, ThresholdId};
use ogham_ir::{Form, Function, Program};
use std::collections::{BTreeMap, HashMap};

/// The values of a program's tunable thresholds ([`ogham_ir::kir::Threshold`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Thresholds {
    /// Values of particular thresholds (a tuning file's).
    pub named: BTreeMap<ThresholdId, i64>,
    /// The value of every threshold not in `named`; `None`: each one's default. `Some(0)`
    /// selects the first version of all multi-versioned code, `Some(i64::MAX)` the last.
    pub others: Option<i64>,
}

impl Thresholds {
    /// Every threshold set to `value`.
    pub fn uniform(value: i64) -> Thresholds {
        Thresholds {
            named: BTreeMap::new(),
            others: Some(value),
        }
    }

    /// The value of threshold `t`.
    pub fn value(&self, t: &Threshold) -> i64 {
        self.named
            .get(&t.id)
            .copied()
            .or(self.others)
            .unwrap_or(t.default)
    }
}

/// Runs function `entry` of `program` on `args` (checked against its signature exactly as the
/// interpreter checks them); returns its outputs, one per result of the signature. Traces go
/// to the sink in force on the calling thread (`crate::trace`).
pub fn run<H: Form>(
    program: &Program<H>,
    entry: &str,
    args: Vec<Value>,
    thresholds: &Thresholds,
) -> Result<Vec<Value>, Box<Diagnostic>> {
    let sink = crate::trace::current();
    run_in(program, entry, args, thresholds, sink, || Ok(None))
}

/// [`run`], with the kernels that the launcher built by `make_launcher` (on the evaluation
/// thread) has code for run by it: the host code of the compiled executors, which do not trace
/// (their kernels compile a trace as the identity, so the host does not trace either).
pub fn run_with<'p, H: Form>(
    program: &'p Program<H>,
    entry: &str,
    args: Vec<Value>,
    thresholds: &Thresholds,
    make_launcher: impl FnOnce() -> Result<Option<Box<dyn Launcher + 'p>>, Box<Diagnostic>> + Send + 'p,
) -> Result<Vec<Value>, Box<Diagnostic>> {
    run_in(program, entry, args, thresholds, None, make_launcher)
}

/// [`run_with`] for kernel IR, in parts of rows when `parts` says how and the arguments have
/// more rows than a part (`parts.rs`); otherwise, and when a part fails, whole. The outputs
/// and the number of parts it ran in (1: whole).
pub fn run_with_parts<'p>(
    program: &'p ogham_ir::kir::Program,
    entry: &str,
    args: Vec<Value>,
    thresholds: &Thresholds,
    parts: Option<(parts::RowParts, parts::WholeRows)>,
    make_launcher: impl FnOnce() -> Result<Option<Box<dyn Launcher + 'p>>, Box<Diagnostic>> + Send + 'p,
) -> Result<(Vec<Value>, usize), Box<Diagnostic>> {
    let function = program.functions.iter().find(|f| f.name == entry);
    let (Some((parts, whole)), Some(function)) = (parts, function) else {
        return run_with(program, entry, args, thresholds, make_launcher)
            .map(|outputs| (outputs, 1));
    };
    let limits = limits(program, thresholds);
    on_evaluator_thread(move || {
        let args = parts::shared(args)?;
        let launcher = make_launcher()?;
        if let Some(done) = parts::run(
            function,
            &parts,
            whole,
            args.clone(),
            &limits,
            launcher.as_deref(),
        )? {
            return Ok(done);
        }
        let whole = || evaluate(function, args.clone(), &limits, None, launcher.as_deref());
        whole()
            .or_else(|e| match launcher.as_deref() {
                Some(l) if l.rerun() => whole(),
                _ => Err(e),
            })
            .map(|outputs| (outputs, 1))
    })
}

/// Each threshold's value.
fn limits<H: Form>(program: &Program<H>, thresholds: &Thresholds) -> HashMap<ThresholdId, i64> {
    program
        .thresholds
        .iter()
        .map(|t| (t.id, thresholds.value(t)))
        .collect()
}

fn run_in<'p, H: Form>(
    program: &'p Program<H>,
    entry: &str,
    args: Vec<Value>,
    thresholds: &Thresholds,
    sink: Option<crate::trace::Sink>,
    make_launcher: impl FnOnce() -> Result<Option<Box<dyn Launcher + 'p>>, Box<Diagnostic>> + Send + 'p,
) -> Result<Vec<Value>, Box<Diagnostic>> {
    let Some(function) = program.functions.iter().find(|f| f.name == entry) else {
        return Err(no_entry(
            entry,
            program.functions.iter().map(|f| f.name.as_str()),
        ));
    };
    let limits = limits(program, thresholds);
    on_evaluator_thread(move || {
        let launcher = make_launcher()?;
        evaluate(function, args, &limits, sink, launcher.as_deref())
    })
}

/// Evaluates `function` on `args` with `launcher`; its outputs, on the host.
fn evaluate<H: Form>(
    function: &Function<H>,
    args: Vec<Value>,
    limits: &HashMap<ThresholdId, i64>,
    sink: Option<crate::trace::Sink>,
    launcher: Option<&dyn Launcher>,
) -> Result<Vec<Value>, Box<Diagnostic>> {
    let params = boundary::bind_arguments(function, args)?;
    let mut evaluator = eval::Evaluator::new(function, limits, launcher);
    let results = crate::trace::with_sink(sink, || evaluator.run(&function.body, params))?;
    // Its variables no longer share the results, which are then taken over, not copied.
    drop(evaluator);
    let mut outputs = boundary::gather_results(function, results)?;
    // Arrays a launcher left on its device come home before the device goes.
    for output in &mut outputs {
        output
            .settle()
            .map_err(|e| error(R_CUDA, Default::default(), e))?;
    }
    Ok(outputs)
}

/// Runs `run` on a thread with a large stack (the evaluator recurses).
fn on_evaluator_thread<T: Send>(
    run: impl FnOnce() -> Result<T, Box<Diagnostic>> + Send,
) -> Result<T, Box<Diagnostic>> {
    crate::stack::on_large_stack("ogham-ireval", run).unwrap_or_else(|e| {
        Err(error(
            R_INTERNAL,
            Default::default(),
            format!("cannot start the evaluator thread: {e}"),
        ))
    })
}
