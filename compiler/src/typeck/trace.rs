//! Type checking of `trace "label" e` (`docs/reference.md`, "Tracing").
//!
//! `trace "label" e` has the type of `e`. What is traced must be a scalar or an array of
//! scalars (of any rank): every executor prints such a value the same way, and one that is not
//! (a tuple, a record, a function, a type parameter) is error `E0313`, whose help says to trace
//! the components. The check runs at the end of the definition (`Checker::check_traces`, from
//! `finish_def_exprs`), once inference and defaulting have settled the type: inside
//! `map (\x -> trace "x" x) xs` the type of `x` is only known after the lambda.

use super::Checker;
use super::unify::Ty;
use crate::syntax::ast::Expr;
use ogham_ir::diag::Diagnostic;

/// The code of a traced value that is not a scalar or an array of scalars.
pub const E_TRACE_TYPE: &str = "E0313";

impl Checker<'_> {
    /// Infers `trace "label" e`: the type of `e`, whose shape is checked later.
    pub(super) fn infer_trace(&mut self, e: &Expr) -> Ty {
        let t = self.infer(e);
        self.traces.push((e.span, t.clone()));
        t
    }

    /// Reports the traced values of the finished definition that are not scalars or arrays of
    /// scalars.
    pub(super) fn check_traces(&mut self) {
        for (span, t) in std::mem::take(&mut self.traces) {
            let mut elem = self.subst.resolve(&t);
            while let Ty::Array(inner, _) = elem {
                elem = *inner;
            }
            if matches!(elem, Ty::Prim(_) | Ty::Error) {
                continue;
            }
            let shown = self.subst.show(&t);
            self.diags.push(
                Diagnostic::error(
                    E_TRACE_TYPE,
                    "`trace` needs a scalar or an array of scalars",
                )
                .with_primary(span, format!("this is `{shown}`"))
                .with_help(
                    "trace the components one by one (`trace \"x\" p.0`), or annotate the \
                         type where it is not known",
                ),
            );
        }
    }
}
