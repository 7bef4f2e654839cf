//! What the code generators (the `codegen` passes of the compiler's pipeline) hand to the
//! runtime: plain data about compiled code — descriptions of kernels and their launch plans,
//! addresses of machine code with the owner of its memory, object files, CUDA source — one
//! module per backend. Nothing here generates or runs code: the compiler's backends make these
//! values and the runtime's executors consume them, so a runtime that only runs compiled code
//! needs this crate and not the compiler.

pub mod cpu;
pub mod cuda;
