//! The code generators the runtime runs compiled programs with: the compiler's backends behind
//! the runtime's traits (`cpu::CpuCodegen`, `cuda::CudaCodegen`). The runtime depends on the IR
//! only and defines what it needs as traits; the compiler does not know the runtime; this
//! crate, which depends on both, wires them — and nothing else, so that the C interface can
//! compile `.ogl` libraries without the CLI's crate (`ogham` re-exports it as
//! `ogham::codegen`).
//!
//! Invariant: every request compiles exactly the kernels asked for (one entry point's, or a
//! library's for an ahead-of-time object) through the pipeline's code-generating pass, so entry
//! points are compiled lazily, at their first call.

pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
