//! `ogham dev`: compiles a file up to a pass or the end of a stage and prints the IR there,
//! verified after every pass (the compiler's debugging view).
//!
//! Invariants: what is printed passed `verify` after every pass that made it.

use crate::{Failure, StageArg, load, out};
use ogham_compiler::pipeline;
use ogham_ir::Ir;
use ogham_ir::diag::emit_to_stderr;
use ogham_ir::print::print_program;
use std::path::Path;

/// Compiles `file` up to the pass asked for (by name, or the end of a stage) and prints the IR
/// there, verified after every pass.
pub(crate) fn dev(
    file: &Path,
    dump_after: Option<&str>,
    print: Option<StageArg>,
    optimise: bool,
) -> Result<(), Failure> {
    let stop_after = match (dump_after, print) {
        (Some(name), _) => pipeline::Pass::named(name).ok_or_else(|| {
            let names: Vec<&str> = pipeline::Pass::ALL.iter().map(|p| p.name()).collect();
            format!("there is no pass `{name}` (passes: {})", names.join(", "))
        })?,
        (None, Some(StageArg::Core)) => pipeline::Options::CORE.stop_after,
        (None, Some(StageArg::Kir | StageArg::Clif | StageArg::Cuda)) | (None, None) => {
            pipeline::Options::KERNEL.stop_after
        }
    };
    let fe = load(file)?;
    let options = pipeline::Options {
        stop_after,
        optimise,
        verify: true,
        fuse: true,
    };
    let mut printed = None;
    let compiled = pipeline::compile(
        &fe.sources,
        &fe.program,
        &fe.checked,
        options,
        &mut |pass, ir| {
            if pass == stop_after {
                printed = Some(match (print, ir) {
                    (Some(StageArg::Clif), Ir::Kernel(ir)) => {
                        ogham_compiler::back::cpu::print_clif(ir)
                    }
                    (Some(StageArg::Cuda), Ir::Kernel(ir)) => {
                        ogham_compiler::back::cuda::generate(ir).source()
                    }
                    (Some(StageArg::Kir), Ir::Kernel(ir)) => {
                        let origins: String = ogham_ir::abi::kernel_origins(ir, &fe.sources)
                            .into_iter()
                            .map(|(_, line)| format!("-- kernel {line}\n"))
                            .collect();
                        format!("{origins}{}", print_program(ir))
                    }
                    // Core IR (a pass before `flatten`) has no kernels: its text.
                    _ => ir.print(),
                });
            }
        },
    );
    if let Err(diagnostics) = compiled {
        emit_to_stderr(&fe.sources, &diagnostics);
        let internal = diagnostics
            .iter()
            .any(|d| d.code == pipeline::INTERNAL_ERROR);
        return Err(if internal {
            Failure::Internal
        } else {
            Failure::Reported
        });
    }
    match printed {
        Some(text) => out(&text),
        None => outln!("(pass `{stop_after}` is skipped without optimisations)"),
    }
    Ok(())
}
