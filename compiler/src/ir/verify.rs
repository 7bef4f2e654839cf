//! Verifier for the core and kernel IR (placeholder until the verifier lands: accepts all).

use crate::ir::Program;

/// Which IR form a program must be in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// Core IR: SOACs anywhere, no `Seg`/`Threshold`.
    Core,
    /// Kernel IR: no SOAC at host level; `Seg` kernels only at host level.
    Kernel,
}

/// Checks the invariants of `form` (see the module headers of `ir` and `kir`); returns every
/// violation found, each as one line naming the function and the variable or statement.
pub fn verify(_program: &Program, _form: Form) -> Result<(), Vec<String>> {
    Ok(())
}
