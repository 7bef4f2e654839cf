//! Checks of the laws that parallel execution relies on, on the values a run actually sees
//! (`ogham run --check-laws`): the operator of a `reduce`, `reduce_comm`, `scan`, `hist` or
//! `reduce_by_index` must be associative, and its neutral element neutral. The interpreter
//! applies operators left to right, so a program whose operator breaks a law passes every test on
//! it and then gives other answers on the compiled backends, which combine partial results in
//! another order (and differently under each tuning). The checks make that visible: a located
//! warning (`W0720` not associative, `W0721` not neutral) with the values that show it.
//!
//! Per call site, the checks look at consecutive triples of the input rows, a bounded number of
//! times per run ([`CHECKS_PER_SITE`]), and stop at the first warning. Floats compare with a
//! tolerance relative to the largest operand (float `+` is associative up to rounding); an
//! operator that fails while being checked (a division by zero) tells nothing and is skipped.

use super::value::{Array, Val};
use ogham_ir::diag::{Diagnostic, Severity};
use ogham_ir::source::Span;
use ogham_runtime::value::Scalar;
use std::cell::RefCell;
use std::collections::HashMap;

pub(crate) const W_ASSOCIATIVE: &str = "W0720";
pub(crate) const W_NEUTRAL: &str = "W0721";

/// Law checks per call site and run.
const CHECKS_PER_SITE: usize = 32;

/// Relative tolerance of float comparisons (relative to the largest operand, at least 1).
const TOLERANCE: f64 = 1e-4;

/// The state of the checks during one run.
#[derive(Default)]
pub(crate) struct Laws {
    /// Checks made per call site (`usize::MAX` once it has a warning).
    checks: RefCell<HashMap<Span, usize>>,
    warnings: RefCell<Vec<Diagnostic>>,
}

impl Laws {
    /// Checks the laws of the operator that `apply` applies (`None`: it failed), with neutral
    /// element `ne`, of the `what` at `span` on the first rows of `xs` (see the module header).
    pub fn check<'a>(
        &self,
        what: &str,
        ne: &Val<'a>,
        xs: &Array<'a>,
        span: Span,
        apply: impl Fn(&Val<'a>, &Val<'a>) -> Option<Val<'a>>,
    ) {
        if xs.is_empty() || !self.wants(span) {
            return;
        }
        let x = xs.row(0);
        if let (Some(l), Some(r)) = (apply(ne, &x), apply(&x, ne)) {
            let s = scale(&[ne, &x, &l, &r]);
            if !close(&l, &x, s) || !close(&r, &x, s) {
                let bad = if close(&l, &x, s) { &r } else { &l };
                self.warn(
                    span,
                    W_NEUTRAL,
                    format!("the neutral element of this `{what}` is not neutral for its operator"),
                    format!(
                        "with neutral element {} and x = {}, combining them gives {}, not x",
                        show(ne),
                        show(&x),
                        show(bad)
                    ),
                );
                return;
            }
        }
        if xs.len() < 3 {
            return;
        }
        let (a, b, c) = (xs.row(0), xs.row(1), xs.row(2));
        let left = apply(&a, &b).and_then(|ab| apply(&ab, &c));
        let right = apply(&b, &c).and_then(|bc| apply(&a, &bc));
        if let (Some(l), Some(r)) = (left, right)
            && !close(&l, &r, scale(&[&a, &b, &c, &l, &r]))
        {
            self.warn(
                span,
                W_ASSOCIATIVE,
                format!("the operator of this `{what}` is not associative"),
                format!(
                    "(a op b) op c = {} but a op (b op c) = {} for a = {}, b = {}, c = {}",
                    show(&l),
                    show(&r),
                    show(&a),
                    show(&b),
                    show(&c)
                ),
            );
        }
    }

    /// Whether call site `span` still gets a check (and counts it).
    pub fn wants(&self, span: Span) -> bool {
        let mut checks = self.checks.borrow_mut();
        let n = checks.entry(span).or_insert(0);
        if *n >= CHECKS_PER_SITE {
            return false;
        }
        *n += 1;
        true
    }

    pub fn warn(&self, span: Span, code: &'static str, message: String, note: String) {
        self.checks.borrow_mut().insert(span, usize::MAX);
        let mut d = Diagnostic::error(code, message)
            .with_primary(span, "this operator")
            .with_note(note)
            .with_help(
                "the compiled backends combine values in another order than the interpreter: \
                 make the operator associative with a neutral element (see the tutorial's EWMA)",
            );
        d.severity = Severity::Warning;
        self.warnings.borrow_mut().push(d);
    }

    pub fn into_warnings(self) -> Vec<Diagnostic> {
        self.warnings.into_inner()
    }
}

/// The scalars of a value, in order.
fn leaves(v: &Val<'_>, out: &mut Vec<Scalar>) {
    match v {
        Val::Prim(s) => out.push(*s),
        Val::Array(a) => {
            for i in 0..a.len() {
                leaves(&a.row(i), out);
            }
        }
        Val::Tuple(items) => items.iter().for_each(|x| leaves(x, out)),
        Val::Record(fields) => fields.iter().for_each(|(_, x)| leaves(x, out)),
        Val::Fun(_) => {}
    }
}

/// Whether `a` and `b` are equal up to the float tolerance, scaled by `scale`.
pub(crate) fn close(a: &Val<'_>, b: &Val<'_>, scale: f64) -> bool {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    leaves(a, &mut x);
    leaves(b, &mut y);
    x.len() == y.len()
        && x.iter().zip(&y).all(|(p, q)| match (p, q) {
            (Scalar::F32(_) | Scalar::F64(_), Scalar::F32(_) | Scalar::F64(_)) => {
                let (p, q) = (p.as_f64(), q.as_f64());
                (p.is_nan() && q.is_nan()) || p == q || (p - q).abs() <= TOLERANCE * scale
            }
            _ => p == q,
        })
}

/// The magnitude the float tolerance is relative to: the largest finite float in `vals`, at
/// least 1.
pub(crate) fn scale(vals: &[&Val<'_>]) -> f64 {
    let mut all = Vec::new();
    for v in vals {
        leaves(v, &mut all);
    }
    all.iter()
        .map(|s| s.as_f64().abs())
        .filter(|x| x.is_finite())
        .fold(1.0, f64::max)
}

/// Shows a value in a note (shortened).
pub(crate) fn show(v: &Val<'_>) -> String {
    let mut all = Vec::new();
    leaves(v, &mut all);
    let parts: Vec<String> = all.iter().take(6).map(|s| s.to_string()).collect();
    let more = if all.len() > 6 { ", ..." } else { "" };
    match (v, all.len()) {
        (Val::Prim(_), _) => parts.join(""),
        _ => format!("({}{more})", parts.join(", ")),
    }
}
