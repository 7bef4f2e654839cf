//! What the code generators make of kernel IR (the `codegen` passes of the compiler's pipeline)
//! and the runtime loads: plain data, with no code generation here, so that a runtime that only
//! runs compiled code needs this crate and not the compiler.

pub mod cuda;
