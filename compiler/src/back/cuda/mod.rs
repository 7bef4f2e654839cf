//! The CUDA backend: every kernel ([`ogham_ir::kir::SegOp`]) of a kernel-IR program to a
//! `__global__` function of CUDA C, which the runtime compiles with NVRTC and launches through
//! cudarc; the host program runs on the CPU around the launches.
//!
//! The translation unit is the prelude (`prelude.cuh`: fixed-width types, the failure record,
//! strided array views, the interpreter's scalar semantics as device functions, the arena
//! allocator; `prelude.rs` writes its integer division, float `%` and float-to-integer
//! conversion from the shared description of `back/steps.rs`), the data kernels
//! (`data_kernels.cuh`), then the kernels in statement order, each named `<entry>_k<n>` like the
//! CPU backend's. A kernel calls only the prelude, so the runtime compiles each kernel after
//! the prelude as a unit of its own (`CudaProgram::units`). `kernel.rs` documents the launch conventions (work items and chunks for
//! thread-level kernels; one block per point for block-level ones; two launches plus a combine
//! kernel for reductions and scans over few long segments). The body code is the shared
//! lowering's ([`crate::back::lower`]) written as C by `emit.rs` and `lower.rs` (`scalar.rs`:
//! scalar operations; `block.rs`: SOACs across a block's threads; `interleave.rs`: the maps of
//! reductions planned `@interleave`, several iterations' reductions in one loop; `jam.rs`: the
//! maps of dot products planned `@jam`, in register tiles, reading the columns of a gather of
//! shared rows through its keys (`gather.rs`); `reclaim.rs`: the memory of a
//! loop's iterations given back).
//!
//! The product is the artefact [`CudaProgram`] (`ogham_ir::artifact::cuda`: each kernel's code
//! and launch plan); the pipeline's `codegen-cuda` pass makes it for the whole program, the
//! runtime (through the root crate) for one entry point at a time ([`generate_entry`]).
//! Generated text is deterministic (`ogham dev --print cuda`, `snapshot { cuda }`). A kernel
//! the generator cannot translate ([`Unsupported`]: reductions of arrays in a kernel,
//! block-level kernels other than maps) is listed as a comment with the reason; the runtime
//! evaluates it on the host.
//!
//! Bounds checks are emitted unless the index is proven in range (`back/lower/bounds.rs`, as on
//! the CPU) or the statement comes from a `#[unsafe]` definition. A failed check records its
//! [`ogham_ir::abi::ErrorSite`] number and details in the context record (the lowest failing point wins, as in
//! the interpreter's order) and leaves the kernel; the runtime rebuilds the interpreter's error.

mod block;
mod emit;
mod gather;
mod interleave;
mod jam;
mod kernel;
mod lower;
mod prelude;
mod reclaim;
mod scalar;

use super::Unsupported;
use ogham_ir::abi::KernelSite;
use ogham_ir::artifact::cuda::{Counting, CudaProgram, GeneratedSeg};
use ogham_ir::kir::{Program, SegLevel};
use std::fmt::Write;

use prelude::{data_kernels, prelude};

/// Generates every kernel of a kernel-IR program (uncounted): the `codegen-cuda` pass.
pub fn generate(program: &Program) -> CudaProgram {
    generate_with(program, Counting::Plain)
}

/// Generates every kernel of a kernel-IR program, with float operations counted or not.
pub fn generate_with(program: &Program, counting: Counting) -> CudaProgram {
    generate_sites(program, ogham_ir::abi::kernels(program), counting)
}

/// Generates the kernels of entry point `function` alone (its index in
/// [`Program::functions`]): what the runtime compiles, so that a run pays NVRTC only for the
/// kernels it can launch (BFAST's program has six entry points).
pub fn generate_entry(program: &Program, function: usize, counting: Counting) -> CudaProgram {
    let mut sites = ogham_ir::abi::kernels(program);
    sites.retain(|k| k.function == function);
    generate_sites(program, sites, counting)
}

fn generate_sites(program: &Program, sites: Vec<KernelSite>, counting: Counting) -> CudaProgram {
    let mut segs = Vec::new();
    for k in sites {
        let (fi, stmt, seg, name) = (k.function, k.stmt, k.seg, k.name);
        let f = &program.functions[fi];
        let mut text = String::new();
        let kernel = match kernel::build(f, stmt, seg, &name, &program.unchecked, counting) {
            Ok(built) => {
                let level = match seg.level {
                    SegLevel::Thread => "thread",
                    SegLevel::Block => "block",
                };
                let _ = writeln!(text, "// kernel {name} ({level} level)");
                text.push_str(&built.text);
                text.push('\n');
                Ok(built.kernel)
            }
            Err(Unsupported(why)) => {
                let _ = writeln!(
                    text,
                    "// kernel {name}: not generated ({why}); the runtime evaluates it\n"
                );
                Err(why)
            }
        };
        segs.push(GeneratedSeg {
            function: fi,
            name,
            kernel,
            text,
        });
    }
    CudaProgram {
        prelude: prelude().to_string(),
        data_kernels: data_kernels().to_string(),
        segs,
    }
}
