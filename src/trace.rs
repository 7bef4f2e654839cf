//! `trace` on the compiled backends: they compile it as the identity (their kernels skip it,
//! their host code runs without a sink, see `ogham_runtime::trace`), and a program with a
//! trace compiled for one of them gets warning `W0730` ([`compiled_warning`]) pointing at its
//! first trace. The tracing executors are `interp`, `core` and `kir`.

use crate::Backend;
use ogham_ir::diag::{Diagnostic, Severity};
use ogham_ir::source::Span;
use ogham_ir::traverse::{Visitor, walk};
use ogham_ir::{Exp, Form, Program, Stmt};

/// The warning of a program with `trace` compiled for a backend that does not trace.
pub const W_TRACE_COMPILED: &str = "W0730";

/// The locations of the traces in `program` that survived the optimiser, in program order.
pub fn traces<H: Form>(program: &Program<H>) -> Vec<Span> {
    struct Found(Vec<Span>);
    impl Visitor<'_> for Found {
        fn stmt<H: Form>(&mut self, stmt: &Stmt<H>) {
            if let Exp::Trace { .. } = stmt.exp {
                self.0.push(stmt.loc);
            }
        }
    }
    let mut found = Found(Vec::new());
    for f in &program.functions {
        walk(&f.body, &mut found);
    }
    found.0
}

/// `W0730` if `backend` does not trace and `program` (compiled for it) has a trace.
pub fn compiled_warning<H: Form>(program: &Program<H>, backend: Backend) -> Option<Diagnostic> {
    if !matches!(
        backend,
        Backend::Cpu | Backend::Cuda | Backend::CudaEmu | Backend::CudaModel
    ) {
        return None;
    }
    let spans = traces(program);
    let first = *spans.first()?;
    let others = match spans.len() - 1 {
        0 => String::new(),
        1 => " (and 1 other)".to_string(),
        n => format!(" (and {n} others)"),
    };
    let mut d = Diagnostic::error(
        W_TRACE_COMPILED,
        format!(
            "`trace` is compiled as the identity by the `{}` backend: nothing is printed",
            backend.name()
        ),
    )
    .with_primary(first, format!("this trace{others} prints nothing here"))
    .with_help("run with `--backend interp` (or `core`, `kir`) to see the traced values");
    d.severity = Severity::Warning;
    Some(d)
}
