//! The CUDA backend: every kernel ([`ogham_ir::kir::SegOp`]) of a kernel-IR program to a
//! `__global__` function of one CUDA C translation unit, which the runtime compiles with NVRTC
//! and launches through cudarc; the host program runs on the CPU around the launches.
//!
//! The translation unit is the prelude (`prelude.cuh`: fixed-width types, the failure record,
//! strided array views, the interpreter's scalar semantics as device functions, the arena
//! allocator; `prelude.rs` writes its integer division, float `%` and float-to-integer
//! conversion from the shared description of `back/steps.rs`) followed by the kernels in statement order, each named `<entry>_k<n>` like the
//! CPU backend's. `kernel.rs` documents the launch conventions (work items and chunks for
//! thread-level kernels; one block per point for block-level ones; two launches plus a combine
//! kernel for reductions and scans over few long segments). The body code is the shared
//! lowering's ([`crate::back::lower`]) written as C by `emit.rs` and `lower.rs` (`scalar.rs`:
//! scalar operations; `block.rs`: SOACs across a block's threads).
//!
//! Generated text is deterministic (`ogham dev --print cuda`, `snapshot { cuda }`). A kernel
//! the generator cannot translate ([`Unsupported`]: reductions of arrays in a kernel,
//! block-level kernels other than maps) is listed as a comment with the reason; the runtime
//! evaluates it on the host.
//!
//! Bounds checks are emitted unless the index is proven in range (`back/lower/bounds.rs`, as on
//! the CPU) or the statement comes from a `#[unsafe]` definition. A failed check records its
//! [`ErrorSite`] number and details in the context record (the lowest failing point wins, as in
//! the interpreter's order) and leaves the kernel; the runtime rebuilds the interpreter's error.

mod block;
mod emit;
mod kernel;
mod lower;
mod prelude;
mod scalar;

use super::Unsupported;
use ogham_ir::VarId;
use ogham_ir::abi::ErrorSite;
use ogham_ir::kir::SegLevel;
use ogham_ir::kir::{HostStmt, Program};
use std::fmt::Write;

use prelude::prelude;

/// Whether kernels count their float operations: `Plain` for the GPU and the emulator,
/// `Counted` for the performance model (`--backend cuda-model`), whose translation unit wraps
/// every float operation in `og_flop`/`og_special` (defined by the model's header, not by the
/// prelude: NVRTC never sees counted code). Counting changes no value: each wrapper returns its
/// argument.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Counting {
    Plain,
    Counted,
}

/// A generated kernel: its name and what the runtime needs to launch it.
#[derive(Clone, Debug)]
pub struct CudaKernel {
    pub name: String,
    pub level: SegLevel,
    /// The variables passed in the argument slots, in order.
    pub inputs: Vec<VarId>,
    /// The checks of the kernel then of its combine kernel, by number.
    pub sites: Vec<ErrorSite>,
    /// Accumulator components of a reduction or scan (slots per partial result).
    pub accumulators: usize,
    /// `<name>_combine`, for reductions and scans.
    pub combine: Option<String>,
    /// Block level: 8-byte shared-memory slots needed per thread.
    pub shared_slots: usize,
    /// Whether the kernel needs an arena (it makes arrays).
    pub allocates: bool,
}

/// One kernel statement of a program and its generated form (or why there is none).
pub struct GeneratedSeg<'p> {
    /// Index of the entry point in [`Program::functions`].
    pub function: usize,
    pub stmt: &'p HostStmt,
    pub name: String,
    pub kernel: Result<CudaKernel, Unsupported>,
    /// The kernel's code (or the comment saying why there is none), without the prelude.
    pub text: String,
}

/// A whole program's CUDA code.
pub struct CudaProgram<'p> {
    pub segs: Vec<GeneratedSeg<'p>>,
}

impl CudaProgram<'_> {
    /// The kernels of every entry point, without the prelude.
    pub fn kernels_text(&self) -> String {
        self.segs.iter().map(|s| s.text.as_str()).collect()
    }

    /// The translation unit of the whole program (prelude then every kernel).
    pub fn source(&self) -> String {
        format!("{}\n{}", prelude(), self.kernels_text())
    }

    /// The translation unit of entry point `function` alone (its index in
    /// [`Program::functions`]): what the runtime compiles, so that a run pays NVRTC only for
    /// the kernels it can launch (BFAST's program has six entry points).
    pub fn source_of(&self, function: usize) -> String {
        let kernels: String = self
            .segs
            .iter()
            .filter(|s| s.function == function)
            .map(|s| s.text.as_str())
            .collect();
        format!("{}\n{kernels}", prelude())
    }
}

/// Generates every kernel of a kernel-IR program.
pub fn generate(program: &Program) -> CudaProgram<'_> {
    generate_with(program, Counting::Plain)
}

/// Generates every kernel of a kernel-IR program, with float operations counted or not.
pub fn generate_with(program: &Program, counting: Counting) -> CudaProgram<'_> {
    let mut segs = Vec::new();
    for k in ogham_ir::abi::kernels(program) {
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
                Ok(CudaKernel {
                    name: name.clone(),
                    level: seg.level,
                    inputs: built.inputs,
                    sites: built.sites,
                    accumulators: built.accumulators,
                    combine: built.combine,
                    shared_slots: built.shared_slots,
                    allocates: built.allocates,
                })
            }
            Err(Unsupported(why)) => {
                let _ = writeln!(
                    text,
                    "// kernel {name}: not generated ({why}); the runtime evaluates it\n"
                );
                Err(Unsupported(why))
            }
        };
        segs.push(GeneratedSeg {
            function: fi,
            stmt,
            name,
            kernel,
            text,
        });
    }
    CudaProgram { segs }
}

/// The kernels' CUDA C (deterministic; `snapshot { cuda }` and, after the prelude,
/// `ogham dev --print cuda`).
pub fn print_cuda(program: &Program) -> String {
    generate(program).kernels_text()
}
