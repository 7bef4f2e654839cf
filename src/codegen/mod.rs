//! The code generators the runtime runs compiled programs with: the compiler's backends behind
//! the runtime's traits (`cpu::CpuCodegen`, `cuda::CudaCodegen`). The runtime depends on the IR
//! only and defines what it needs as a trait; this crate, which depends on both, wires them.

pub mod cpu;
pub mod cuda;
