//! The runtime's CUDA code generator ([`CudaCodegen`]) as the compiler's CUDA backend: the
//! kernels of one entry point, generated when it runs (`back::cuda::generate_entry`), so a run
//! pays NVRTC only for the kernels it can launch.

use ogham_compiler::back::cuda::generate_entry;
use ogham_ir::artifact::cuda::{Counting, CudaProgram};
use ogham_ir::kir::Program;
use ogham_runtime::cuda::CudaCodegen;

/// The compiler's CUDA C backend.
struct CudaC;

/// The code generator of the runtime's CUDA executors (`cuda`, `cuda-emu`, `cuda-model`).
pub static CUDA: &dyn CudaCodegen = &CudaC;

impl CudaCodegen for CudaC {
    fn entry(&self, program: &Program, function: usize, counting: Counting) -> CudaProgram {
        generate_entry(program, function, counting)
    }
}
