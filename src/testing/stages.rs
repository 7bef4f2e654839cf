//! The text a snapshot or a `filecheck` of a test block reads: the product of the pipeline at
//! the end of the stage, printed as `ogham dev --dump-after` prints it (core IR, kernel IR, the
//! `codegen-cpu` pass's CLIF, the `codegen-cuda` pass's kernels), or of it the kernels a
//! `snapshot { ... kernel = NAME }` keeps.

use super::{Stage, compile_stage};
use crate::{Frontend, FrontendErrors};
use ogham_compiler::pipeline::Product;

/// The text of `stage` (not `diag`): the pipeline's product at its end, printed.
pub(super) fn stage_text(
    loaded: &Result<Frontend, FrontendErrors>,
    stage: Stage,
) -> Result<String, String> {
    Ok(compile_stage(loaded, stage)?.print())
}

/// The text of `stage` (not `diag`) for a snapshot: of the `clif` and `cuda` stages, only the
/// code of the kernels `kernels` when there are any ([`ogham_compiler::pipeline::Artifact::print_kernels`]); else whole.
pub(super) fn snapshot_text(
    loaded: &Result<Frontend, FrontendErrors>,
    stage: Stage,
    kernels: &[String],
) -> Result<String, String> {
    match compile_stage(loaded, stage)? {
        Product::Artifact(artifact) if !kernels.is_empty() => artifact.print_kernels(kernels),
        product => Ok(product.print()),
    }
}
