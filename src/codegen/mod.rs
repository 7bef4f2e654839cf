//! The code generators the runtime loads artefacts through, implemented with the compiler's
//! backends: the runtime defines what it needs as a trait and does not depend on the compiler;
//! this crate, which depends on both, wires them together.

pub mod cuda;
