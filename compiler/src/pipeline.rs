//! The middle end's one ordered list of passes, from the typed AST to core IR and kernel IR.
//!
//! | pass          | module             | form after   |
//! |---------------|--------------------|--------------|
//! | `lower`       | `lower`            | core         |
//! | `simplify`    | `opt::simplify`    | core         |
//! | `fuse`        | `opt::fuse`        | core         |
//! | `resimplify`  | `opt::simplify`    | core         |
//! | `flatten`     | `flatten`          | kernel       |
//! | `kir-simplify`| `opt::simplify`    | kernel       |
//!
//! Every pass is followed by the IR verifier in debug builds and when [`Options::verify`] is set
//! (tests set it), so a pass that breaks an invariant is caught where it happens. An observer sees
//! the program after each pass (`ogham dev --dump-after PASS`).

use crate::diag::Diagnostic;
use crate::ir::Program;
use crate::ir::verify::{Form, verify};
use crate::source::SourceMap;
use crate::syntax::ast;
use crate::typeck::Checked;
use crate::{flatten, lower, opt};

/// The code of the diagnostic reporting IR that fails verification: a compiler bug.
pub const INTERNAL_ERROR: &str = "ICE";

/// The passes in order, with the IR form each produces.
pub const PASSES: &[(&str, Form)] = &[
    ("lower", Form::Core),
    ("simplify", Form::Core),
    ("fuse", Form::Core),
    ("resimplify", Form::Core),
    ("flatten", Form::Kernel),
    ("kir-simplify", Form::Kernel),
];

/// How far to compile and how carefully.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// The last pass to run (a name from [`PASSES`]).
    pub stop_after: &'static str,
    /// Run `simplify` and `fuse` (otherwise the pipeline is `lower`, then `flatten` if asked).
    pub optimise: bool,
    /// Verify the IR after every pass (always on in debug builds).
    pub verify: bool,
}

impl Options {
    /// Core IR, optimised.
    pub const CORE: Options = Options {
        stop_after: "resimplify",
        optimise: true,
        verify: false,
    };
    /// Kernel IR, optimised.
    pub const KERNEL: Options = Options {
        stop_after: "kir-simplify",
        optimise: true,
        verify: false,
    };
}

/// The name of a pass if `name` is one (for command-line validation).
pub fn pass_named(name: &str) -> Option<&'static str> {
    PASSES.iter().map(|(n, _)| *n).find(|n| *n == name)
}

/// Runs the passes up to `options.stop_after`, calling `observe(pass, program)` after each.
pub fn compile(
    sources: &SourceMap,
    program: &ast::Program,
    checked: &Checked,
    options: Options,
    observe: &mut dyn FnMut(&str, &Program),
) -> Result<Program, Vec<Diagnostic>> {
    let mut ir = lower::lower(sources, program, checked)?;
    check(&ir, "lower", Form::Core, options)?;
    observe("lower", &ir);
    for &(pass, form) in &PASSES[1..] {
        if !options.optimise && matches!(pass, "simplify" | "fuse" | "resimplify" | "kir-simplify")
        {
            if pass == options.stop_after {
                break;
            }
            continue;
        }
        match pass {
            "simplify" | "resimplify" | "kir-simplify" => opt::simplify::simplify(&mut ir),
            "fuse" => opt::fuse::fuse(&mut ir),
            "flatten" => ir = flatten::flatten(ir),
            _ => unreachable!("unknown pass {pass}"),
        }
        check(&ir, pass, form, options)?;
        observe(pass, &ir);
        if pass == options.stop_after {
            break;
        }
    }
    Ok(ir)
}

/// Verifies `ir` when asked; a failure is an internal compiler error naming the pass.
fn check(ir: &Program, pass: &str, form: Form, options: Options) -> Result<(), Vec<Diagnostic>> {
    if !(options.verify || cfg!(debug_assertions)) {
        return Ok(());
    }
    verify(ir, form).map_err(|errors| {
        vec![Diagnostic::error(
            INTERNAL_ERROR,
            format!(
                "internal compiler error: the IR is invalid after pass `{pass}`:\n{}",
                errors.join("\n")
            ),
        )]
    })
}
