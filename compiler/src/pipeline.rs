//! The compiler's one ordered list of passes ([`Pass::ALL`]), from the typed AST to core IR,
//! kernel IR and, last, a backend's artefact.
//!
//! | pass           | module             | product after          |
//! |----------------|--------------------|------------------------|
//! | `lower`        | `lower`            | core                   |
//! | `simplify`     | `opt::simplify`    | core                   |
//! | `fuse`         | `opt::fuse`        | core                   |
//! | `resimplify`   | `opt::simplify`    | core                   |
//! | `flatten`      | `flatten`          | kernel                 |
//! | `narrow`       | `opt::narrow`      | kernel                 |
//! | `kir-simplify` | `opt::simplify`    | kernel                 |
//! | `hoist-reads`  | `opt::hoist_reads` | kernel                 |
//! | `index-inputs` | `opt::index_inputs`| kernel                 |
//! | `layout`       | `opt::layout`      | kernel                 |
//! | `unswitch`     | `plan::unswitch`   | kernel (plans)         |
//! | `skip-idle`    | `plan::skip_idle`  | kernel (plans)         |
//! | `jam`          | `plan::jam`        | kernel (plans)         |
//! | `interleave`   | `plan::interleave` | kernel (plans)         |
//! | `codegen-cpu`  | `back::cpu`        | artefact: CLIF         |
//! | `codegen-cuda` | `back::cuda`       | artefact: CUDA C, plans|
//!
//! Every IR pass is followed by the IR verifier in debug builds and when [`Options::verify`] is
//! set (tests set it), so a pass that breaks an invariant is caught where it happens. An observer
//! sees the product after each pass (`ogham dev --dump-after PASS`, the snapshots of test
//! blocks, the filetests), printed by [`Product::print`]. Between passes the program is an
//! [`Ir`]: core IR, or kernel IR from `flatten` on (the only pass that converts one to the
//! other).
//!
//! The code-generating passes (`Pass::Codegen(target)`) are alternatives, one per [`Target`]:
//! the pipeline runs the one [`Options::stop_after`] names, after `layout` and the target passes
//! (`plan`), and stops there; a compilation that stops earlier runs neither. Their product is
//! an [`Artifact`], not IR. The runtime does not run them on a whole program: it receives
//! kernel IR and asks a backend for one entry point's artefact when that entry point runs
//! (`ogham::codegen`).

use crate::syntax::ast;
use crate::typeck::Checked;
use crate::{back, flatten, lower, opt, plan};
use ogham_ir::Ir;
use ogham_ir::artifact::cuda::CudaProgram;
use ogham_ir::diag::Diagnostic;
use ogham_ir::kir;
use ogham_ir::source::SourceMap;

/// The code of the diagnostic reporting IR that fails verification: a compiler bug.
pub const INTERNAL_ERROR: &str = "ICE";

/// What a code-generating pass generates code for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// The CPU backend (Cranelift).
    Cpu,
    /// The CUDA backend (CUDA C for NVRTC).
    Cuda,
}

impl Target {
    /// The backend's artefact for every kernel of `program`.
    pub fn generate(self, program: &kir::Program) -> Artifact {
        match self {
            Target::Cpu => Artifact::Clif(back::cpu::compile(program)),
            Target::Cuda => Artifact::Cuda(back::cuda::generate(program)),
        }
    }
}

/// What a backend makes of a kernel-IR program.
#[derive(Clone, Debug)]
pub enum Artifact {
    /// The Cranelift IR of every kernel with what the executor needs to call it (printed with
    /// `; kernel NAME` before each; a kernel the backend does not compile is a comment saying
    /// why).
    Clif(back::cpu::ClifModule),
    /// The CUDA C of every kernel with its launch plan, and the prelude of the translation unit.
    Cuda(CudaProgram),
}

impl Artifact {
    /// The deterministic text of the artefact: the CLIF, or the CUDA kernels without the
    /// prelude.
    pub fn print(&self) -> String {
        match self {
            Artifact::Clif(module) => module.print(),
            Artifact::Cuda(program) => program.kernels_text(),
        }
    }

    /// The parts of [`Artifact::print`] of the kernels `names`, in that order (a CUDA kernel's
    /// with its combine kernel), or an error naming the kernels there are.
    pub fn print_kernels(&self, names: &[String]) -> Result<String, String> {
        let kernels: Vec<(&str, String)> = match self {
            Artifact::Clif(module) => module
                .segs
                .iter()
                .map(|seg| (seg.name.as_str(), seg.print()))
                .collect(),
            Artifact::Cuda(program) => program
                .segs
                .iter()
                .map(|seg| (seg.name.as_str(), seg.text.clone()))
                .collect(),
        };
        let text = |name: &String| match kernels.iter().find(|(kernel, _)| kernel == name) {
            Some((_, text)) => Ok(text.as_str()),
            None => {
                let known: Vec<&str> = kernels.iter().map(|(kernel, _)| *kernel).collect();
                Err(format!(
                    "no kernel `{name}`; the kernels are {}",
                    known.join(" ")
                ))
            }
        };
        names.iter().map(text).collect()
    }
}

/// What a pass makes: IR, or (the code-generating passes) a backend's artefact.
#[derive(Clone, Debug)]
pub enum Product {
    Ir(Ir),
    Artifact(Artifact),
}

impl Product {
    /// The product's text: the printed IR, or the artefact's ([`Artifact::print`]).
    pub fn print(&self) -> String {
        match self {
            Product::Ir(ir) => ir.print(),
            Product::Artifact(artifact) => artifact.print(),
        }
    }

    /// The IR, if the product is IR.
    pub fn ir(&self) -> Option<&Ir> {
        match self {
            Product::Ir(ir) => Some(ir),
            Product::Artifact(_) => None,
        }
    }
}

/// A pass, in the order [`Pass::ALL`] runs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pass {
    Lower,
    Simplify,
    Fuse,
    Resimplify,
    Flatten,
    Narrow,
    KirSimplify,
    HoistReads,
    IndexInputs,
    Layout,
    /// Target passes on kernel IR (`plan/`): they record how statements of kernels run.
    Unswitch,
    SkipIdle,
    Jam,
    Interleave,
    /// The last pass: a backend's code for the kernel IR (the pipeline runs only the one
    /// [`Options::stop_after`] names).
    Codegen(Target),
}

impl Pass {
    /// Every pass, in order (the code-generating passes last, one per target).
    pub const ALL: [Pass; 16] = [
        Pass::Lower,
        Pass::Simplify,
        Pass::Fuse,
        Pass::Resimplify,
        Pass::Flatten,
        Pass::Narrow,
        Pass::KirSimplify,
        Pass::HoistReads,
        Pass::IndexInputs,
        Pass::Layout,
        Pass::Unswitch,
        Pass::SkipIdle,
        Pass::Jam,
        Pass::Interleave,
        Pass::Codegen(Target::Cpu),
        Pass::Codegen(Target::Cuda),
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
            Pass::HoistReads => "hoist-reads",
            Pass::IndexInputs => "index-inputs",
            Pass::Layout => "layout",
            Pass::Unswitch => "unswitch",
            Pass::SkipIdle => "skip-idle",
            Pass::Jam => "jam",
            Pass::Interleave => "interleave",
            Pass::Codegen(Target::Cpu) => "codegen-cpu",
            Pass::Codegen(Target::Cuda) => "codegen-cuda",
        }
    }

    /// The pass of that name, if there is one.
    pub fn named(name: &str) -> Option<Pass> {
        Pass::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Whether the pass produces kernel IR (otherwise core IR, or an artefact): `flatten` and
    /// the rewrites of kernel IR after it.
    pub fn makes_kernel_ir(self) -> bool {
        self == Pass::Flatten || self.kernel_rewrite().is_some()
    }

    /// Whether the pass reads kernel IR (`lower` reads the AST: core, as it makes core IR):
    /// the rewrites of kernel IR and the code generators.
    pub fn reads_kernel_ir(self) -> bool {
        self.kernel_rewrite().is_some() || matches!(self, Pass::Codegen(_))
    }

    /// Runs the pass on `ir` (filetests run one pass on parsed IR). `lower` starts from the
    /// AST, so on IR it returns the program unchanged; so does a pass given the other form than
    /// the one it reads ([`Pass::reads_kernel_ir`]).
    pub fn run(self, ir: Ir) -> Product {
        let ir = match (self.kernel_rewrite(), ir) {
            (Some(rewrite), Ir::Kernel(mut p)) => {
                rewrite(&mut p);
                return Product::Ir(Ir::Kernel(p));
            }
            (_, ir) => ir,
        };
        Product::Ir(match (self, ir) {
            (Pass::Simplify | Pass::Resimplify, Ir::Core(mut p)) => {
                opt::simplify::simplify(&mut p);
                Ir::Core(p)
            }
            (Pass::Fuse, Ir::Core(mut p)) => {
                opt::fuse::fuse(&mut p);
                Ir::Core(p)
            }
            (Pass::Flatten, Ir::Core(p)) => Ir::Kernel(flatten::flatten(p)),
            (Pass::Codegen(target), Ir::Kernel(p)) => {
                return Product::Artifact(target.generate(&p));
            }
            (_, ir) => ir,
        })
    }

    /// The rewrite of kernel IR in place that a pass after `flatten` runs (`None` for the
    /// passes on core IR, `flatten` itself and the code generators).
    fn kernel_rewrite(self) -> Option<fn(&mut kir::Program)> {
        Some(match self {
            Pass::Narrow => opt::narrow::narrow,
            Pass::KirSimplify => opt::simplify::simplify,
            Pass::HoistReads => opt::hoist_reads::hoist_reads,
            Pass::IndexInputs => opt::index_inputs::index_inputs,
            Pass::Layout => opt::layout::layout,
            Pass::Unswitch => plan::unswitch::run,
            Pass::SkipIdle => plan::skip_idle::run,
            Pass::Jam => plan::jam::run,
            Pass::Interleave => plan::interleave::run,
            _ => return None,
        })
    }

    /// Whether the pass is an optimisation (skipped when [`Options::optimise`] is off).
    pub fn optimises(self) -> bool {
        !matches!(self, Pass::Lower | Pass::Flatten | Pass::Codegen(_))
    }

    /// Whether a compilation with `options` skips the pass: an optimisation without
    /// [`Options::optimise`], `fuse` without [`Options::fuse`], a code-generating pass other
    /// than the one [`Options::stop_after`] names.
    fn skipped(self, options: Options) -> bool {
        match self {
            Pass::Codegen(_) => self != options.stop_after,
            _ => (!options.optimise && self.optimises()) || (!options.fuse && self == Pass::Fuse),
        }
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
        stop_after: Pass::Interleave,
        optimise: true,
        verify: false,
        fuse: true,
    };
}

/// Runs the passes up to `options.stop_after`, calling `observe(pass, product)` after each.
pub fn compile(
    sources: &SourceMap,
    program: &ast::Program,
    checked: &Checked,
    options: Options,
    observe: &mut dyn FnMut(Pass, &Product),
) -> Result<Product, Vec<Diagnostic>> {
    let mut product = Product::Ir(Ir::Core(lower::lower(sources, program, checked)?));
    for pass in Pass::ALL {
        match pass {
            // Lowering makes the pipeline's first program, above.
            Pass::Lower => {}
            _ if pass.skipped(options) => {
                if pass == options.stop_after {
                    break;
                }
                continue;
            }
            _ => {
                product = match product {
                    Product::Ir(ir) => pass.run(ir),
                    // Nothing runs after a code-generating pass (it is the last to run).
                    artifact @ Product::Artifact(_) => artifact,
                }
            }
        }
        if let Product::Ir(ir) = &product {
            check(ir, pass, options)?;
        }
        observe(pass, &product);
        if pass == options.stop_after {
            break;
        }
    }
    Ok(product)
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
        assert_eq!(
            Pass::named("codegen-cuda"),
            Some(Pass::Codegen(Target::Cuda))
        );
        // The code-generating passes come last, after `kir-simplify`, `layout` and the target passes.
        let at = |p| Pass::ALL.iter().position(|q| *q == p);
        assert!(at(Pass::KirSimplify) < at(Pass::Layout));
        assert!(at(Pass::Layout) < at(Pass::Unswitch));
        assert!(at(Pass::Unswitch) < at(Pass::SkipIdle));
        assert!(at(Pass::SkipIdle) < at(Pass::Jam));
        assert!(at(Pass::Jam) < at(Pass::Interleave));
        assert!(at(Pass::Interleave) < at(Pass::Codegen(Target::Cpu)));
        // The JIT compiles `Options::KERNEL`'s product: it must run every kernel-IR pass.
        let last = at(Options::KERNEL.stop_after).map(|i| i + 1);
        assert_eq!(last, at(Pass::Codegen(Target::Cpu)));
        assert!(Options::KERNEL.stop_after.makes_kernel_ir());
        assert!(!Options::CORE.stop_after.makes_kernel_ir());
    }

    #[test]
    fn kernels_print_in_the_order_asked() {
        use back::cpu::{ClifModule, CompiledSeg};
        use ogham_ir::artifact::cuda::GeneratedSeg;
        let names = |ns: &[&str]| ns.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        let cuda_seg = |name: &str, text: &str| GeneratedSeg {
            function: 0,
            name: name.to_string(),
            kernel: Err("not needed here".to_string()),
            text: text.to_string(),
        };
        let cuda = Artifact::Cuda(CudaProgram {
            prelude: "prelude\n".to_string(),
            data_kernels: String::new(),
            segs: vec![
                cuda_seg("a_k0", "// kernel a_k0 (thread level)\nk0\nk0_combine\n"),
                cuda_seg("a_k1", "// kernel a_k1 (block level)\nk1\n"),
            ],
        });
        assert_eq!(
            cuda.print_kernels(&names(&["a_k1", "a_k0"])).unwrap(),
            "// kernel a_k1 (block level)\nk1\n// kernel a_k0 (thread level)\nk0\nk0_combine\n"
        );
        let clif_seg = |name: &str| CompiledSeg {
            function: 0,
            name: name.to_string(),
            kernel: Err(back::Unsupported("why".to_string())),
        };
        let clif = Artifact::Clif(ClifModule {
            segs: vec![clif_seg("a_k0"), clif_seg("a_k1")],
        });
        assert_eq!(
            clif.print_kernels(&names(&["a_k1"])).unwrap(),
            "; kernel a_k1: not compiled (why); the runtime evaluates it\n\n"
        );
        assert_eq!(
            clif.print_kernels(&names(&["a_k2"])).unwrap_err(),
            "no kernel `a_k2`; the kernels are a_k0 a_k1"
        );
    }
}
