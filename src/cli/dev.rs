//! `ogham dev`: compiles a file up to a pass or the end of a stage and prints the product there
//! (the IR, or a code-generating pass's artefact), verified after every IR pass (the compiler's
//! debugging view). `--print clif` is `--dump-after codegen-cpu`; `--print cuda` is
//! `--dump-after codegen-cuda` after the prelude (the translation unit NVRTC compiles);
//! `--print kir` is `--dump-after layout` after one line per kernel saying where it comes from.
//!
//! Invariants: what is printed passed `verify` after every pass that made it.

use crate::{Failure, StageArg, load, out};
use ogham_compiler::pipeline::{self, Artifact, Pass, Product, Target};
use ogham_ir::Ir;
use ogham_ir::diag::emit_to_stderr;
use ogham_ir::print::print_program;
use std::path::Path;

/// Compiles `file` up to the pass asked for (by name, or the end of a stage) and prints its
/// product, verified after every pass.
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
        (None, Some(StageArg::Kir)) | (None, None) => pipeline::Options::KERNEL.stop_after,
        (None, Some(StageArg::Clif)) => Pass::Codegen(Target::Cpu),
        (None, Some(StageArg::Cuda)) => Pass::Codegen(Target::Cuda),
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
        &mut |pass, product| {
            if pass == stop_after {
                printed = Some(match (print, product) {
                    // The whole translation unit NVRTC compiles.
                    (Some(StageArg::Cuda), Product::Artifact(Artifact::Cuda(cuda))) => {
                        cuda.source()
                    }
                    (Some(StageArg::Kir), Product::Ir(Ir::Kernel(ir))) => {
                        let origins: String = ogham_ir::abi::kernel_origins(ir, &fe.sources)
                            .into_iter()
                            .map(|(_, line)| format!("-- kernel {line}\n"))
                            .collect();
                        format!("{origins}{}", print_program(ir))
                    }
                    // The pass's product, as the snapshots and filetests see it.
                    _ => product.print(),
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
