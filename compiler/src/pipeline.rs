//! The middle end's one ordered list of passes ([`Pass::ALL`]), from the typed AST to core IR
//! and kernel IR.
//!
//! | pass          | module             | form after   |
//! |---------------|--------------------|--------------|
//! | `lower`       | `lower`            | core         |
//! | `simplify`    | `opt::simplify`    | core         |
//! | `fuse`        | `opt::fuse`        | core         |
//! | `resimplify`  | `opt::simplify`    | core         |
//! | `flatten`     | `flatten`          | kernel       |
//! | `kir-simplify`| `opt::simplify`    | kernel       |
//! | `layout`      | `opt::layout`      | kernel       |
//!
//! Every pass is followed by the IR verifier in debug builds and when [`Options::verify`] is set
//! (tests set it), so a pass that breaks an invariant is caught where it happens. An observer sees
//! the program after each pass (`ogham dev --dump-after PASS`). Between passes the program is an
//! [`Ir`]: core IR, or kernel IR from `flatten` on (the only pass that converts one to the
//! other).

use crate::syntax::ast;
use crate::typeck::Checked;
use crate::{flatten, lower, opt};
use ogham_ir::Ir;
use ogham_ir::diag::Diagnostic;
use ogham_ir::source::SourceMap;

/// The code of the diagnostic reporting IR that fails verification: a compiler bug.
pub const INTERNAL_ERROR: &str = "ICE";

/// A middle-end pass, in the order [`Pass::ALL`] runs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pass {
    Lower,
    Simplify,
    Fuse,
    Resimplify,
    Flatten,
    Narrow,
    KirSimplify,
    Layout,
}

impl Pass {
    /// Every pass, in order.
    pub const ALL: [Pass; 8] = [
        Pass::Lower,
        Pass::Simplify,
        Pass::Fuse,
        Pass::Resimplify,
        Pass::Flatten,
        Pass::Narrow,
        Pass::KirSimplify,
        Pass::Layout,
    ];

    /// The pass's name on the command line (`ogham dev --dump-after NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Pass::Lower => "lower",
            Pass::Simplify => "simplify",
            Pass::Fuse => "fuse",
            Pass::Resimplify => "resimplify",
            Pass::Flatten => "flatten",
            Pass::Narrow => "narrow",
            Pass::KirSimplify => "kir-simplify",
            Pass::Layout => "layout",
        }
    }

    /// The pass of that name, if there is one.
    pub fn named(name: &str) -> Option<Pass> {
        Pass::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Whether the pass produces kernel IR (otherwise core IR).
    pub fn makes_kernel_ir(self) -> bool {
        matches!(
            self,
            Pass::Flatten | Pass::Narrow | Pass::KirSimplify | Pass::Layout
        )
    }

    /// Whether the pass reads kernel IR (`lower` reads the AST: core, as it makes core IR).
    pub fn reads_kernel_ir(self) -> bool {
        matches!(self, Pass::Narrow | Pass::KirSimplify | Pass::Layout)
    }

    /// Runs the pass on `ir` (filetests run one pass on parsed IR). `lower` starts from the
    /// AST, so on IR it returns the program unchanged; so does a pass given the other form than
    /// the one it reads ([`Pass::reads_kernel_ir`]).
    pub fn run(self, ir: Ir) -> Ir {
        match (self, ir) {
            (Pass::Simplify | Pass::Resimplify, Ir::Core(mut p)) => {
                opt::simplify::simplify(&mut p);
                Ir::Core(p)
            }
            (Pass::KirSimplify, Ir::Kernel(mut p)) => {
                opt::simplify::simplify(&mut p);
                Ir::Kernel(p)
            }
            (Pass::Narrow, Ir::Kernel(mut p)) => {
                opt::narrow::narrow(&mut p);
                Ir::Kernel(p)
            }
            (Pass::Layout, Ir::Kernel(mut p)) => {
                opt::layout::layout(&mut p);
                Ir::Kernel(p)
            }
            (Pass::Fuse, Ir::Core(mut p)) => {
                opt::fuse::fuse(&mut p);
                Ir::Core(p)
            }
            (Pass::Flatten, Ir::Core(p)) => Ir::Kernel(flatten::flatten(p)),
            (_, ir) => ir,
        }
    }

    /// Whether the pass is an optimisation (skipped when [`Options::optimise`] is off).
    pub fn optimises(self) -> bool {
        !matches!(self, Pass::Lower | Pass::Flatten)
    }
}

impl std::fmt::Display for Pass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How far to compile and how carefully.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// The last pass to run.
    pub stop_after: Pass,
    /// Run `simplify` and `fuse` (otherwise the pipeline is `lower`, then `flatten` if asked).
    pub optimise: bool,
    /// Verify the IR after every pass (always on in debug builds).
    pub verify: bool,
    /// Run `fuse` (with `optimise`). Off only to check that a difference in which error a run
    /// reports comes from fusion's documented reordering of failing points (the fuzzing harness).
    pub fuse: bool,
}

impl Options {
    /// Core IR, optimised.
    pub const CORE: Options = Options {
        stop_after: Pass::Resimplify,
        optimise: true,
        verify: false,
        fuse: true,
    };
    /// Kernel IR, optimised.
    pub const KERNEL: Options = Options {
        stop_after: Pass::Layout,
        optimise: true,
        verify: false,
        fuse: true,
    };
}

/// Runs the passes up to `options.stop_after`, calling `observe(pass, program)` after each.
pub fn compile(
    sources: &SourceMap,
    program: &ast::Program,
    checked: &Checked,
    options: Options,
    observe: &mut dyn FnMut(Pass, &Ir),
) -> Result<Ir, Vec<Diagnostic>> {
    let mut ir = Ir::Core(lower::lower(sources, program, checked)?);
    for pass in Pass::ALL {
        match pass {
            // Lowering makes the pipeline's first program, above.
            Pass::Lower => {}
            _ if (!options.optimise && pass.optimises())
                || (!options.fuse && pass == Pass::Fuse) =>
            {
                if pass == options.stop_after {
                    break;
                }
                continue;
            }
            _ => ir = pass.run(ir),
        }
        check(&ir, pass, options)?;
        observe(pass, &ir);
        if pass == options.stop_after {
            break;
        }
    }
    Ok(ir)
}

/// Verifies `ir` when asked; a failure is an internal compiler error naming the pass.
fn check(ir: &Ir, pass: Pass, options: Options) -> Result<(), Vec<Diagnostic>> {
    if !(options.verify || cfg!(debug_assertions)) {
        return Ok(());
    }
    ir.verify().map_err(|errors| {
        vec![Diagnostic::error(
            INTERNAL_ERROR,
            format!(
                "internal compiler error: the IR is invalid after pass `{pass}`:\n{}",
                errors.join("\n")
            ),
        )]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for pass in Pass::ALL {
            assert_eq!(Pass::named(pass.name()), Some(pass));
        }
        assert_eq!(Pass::named("fusion"), None);
        assert!(Options::KERNEL.stop_after.makes_kernel_ir());
        assert!(!Options::CORE.stop_after.makes_kernel_ir());
    }
}
