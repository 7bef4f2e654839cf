//! The CPU backend: every kernel ([`ogham_ir::kir::SegOp`]) of a kernel-IR program to a Cranelift
//! function (CLIF), compiled by Cranelift into machine code (`jit.rs`: JIT-compiled into this
//! process; `object.rs`: relocatable objects for the disk cache and ahead-of-time images) that
//! the runtime runs on all cores. The host program (scalar code, sequential loops, allocations)
//! is executed by the runtime around the kernels.
//!
//! # Calling convention of a kernel function
//!
//! `kernel(ctx, args, seg_start, seg_end, i_start, i_end, partial, carry) -> i32`, all `i64`:
//!
//! - `ctx` points to the worker's context record: the number of the failed [`ErrorSite`] at
//!   [`ogham_ir::abi::CTX_SITE`], up to [`ogham_ir::abi::MAX_DETAILS`] 64-bit values for its message from [`ogham_ir::abi::CTX_DETAILS`], then
//!   runtime-private fields (the worker's arena). A kernel returns 0, or 1 after a failure.
//! - `args` points to 8-byte slots: the kernel's inputs ([`Kernel::inputs`], the free variables
//!   of its statement, in order: a scalar in one slot, an array as its element pointer then its
//!   extents; arrays are contiguous and row-major), then for every result (none for
//!   histograms, which update their destinations among the inputs) the output array's element
//!   pointer and the number of elements of one point's value.
//! - The kernel runs the points of segments `seg_start..seg_end` (a segment is a point of the
//!   space's outer dimensions) and innermost indices `i_start..i_end` (see `kernel.rs`).
//! - A reduction writes one value per segment to its outputs or, when `partial` is not null,
//!   the accumulated components (8-byte slots) of the single segment it ran to `partial`; the
//!   runtime merges partials with [`Kernel::combine`], `combine(ctx, args, acc, val) -> i32`.
//!   A scan writes its scan to its outputs, starting from the accumulators in the slots at
//!   `carry` when that is not null (else from the neutral elements), and, when `partial` is not
//!   null, its total to `partial`. The runtime scans a long segment in two passes: totals of
//!   ranges (combined in order with [`Kernel::combine`]), then each range again from the
//!   combined totals of the ranges before it.
//!
//! Index bounds are checked unless the index is proven in range (`back/lower/bounds.rs`) or the
//! statement comes from a `#[unsafe]` definition ([`Program::unchecked`]); an out-of-bounds
//! access there is undefined behaviour.
//!
//! Bodies are sequential code: at `Block` level the runtime gives a whole point to one worker,
//! so inner SOACs run as loops there too. A kernel the generator cannot translate yet is
//! reported as [`Unsupported`] with the reason (`ogham dev --print clif` shows it) and the
//! runtime evaluates it instead; every other kernel is compiled.
//!
//! Modules: `kernel.rs` builds a kernel's functions around its body, which the shared lowering
//! ([`crate::back::lower`]) walks and `codegen.rs` (the CLIF builder), `lower.rs` (the CPU's side
//! of the walk) and `scalar.rs` (scalar operations, with the steps of the shared description in
//! `back/steps.rs`) emit, and `remat.rs` then makes the arguments that loop nests use again
//! before them (short live ranges); `simd/` and `interleave.rs` vectorise
//! points and interleave reductions, `jam.rs` runs maps of them several outer rows at a time, `unswitch.rs` specialises loops on invariant conditions,
//! `skip.rs` skips the idle iterations of the filtering loops `skip-idle` planned, `carried.rs`
//! finds the conditions that cheap `if`s branch on rather than select by masks, `fill.rs` and `copy.rs` fill and copy
//! rows in vectors, `helpers.rs` lists the runtime's helpers; `machine.rs` sets up the host
//! target and defines kernels in a Cranelift module, which `jit.rs` (machine code in memory,
//! [`ogham_ir::artifact::cpu::JitCode`]) and `object.rs` (ELF objects,
//! [`ogham_ir::artifact::cpu::NativeCode`] and ahead-of-time images) finish.

mod carried;
mod codegen;
mod copy;
mod early_calls;
mod fill;
pub mod helpers;
mod interleave;
mod jam;
pub mod jit;
mod kernel;
mod lanedot;
mod lower;
pub mod machine;
pub mod object;
mod reclaim;
mod remat;
mod scalar;
mod simd;
mod skip;
mod unswitch;

pub use simd::enabled as simd_enabled;

use super::Unsupported;
use ogham_ir::VarId;
use ogham_ir::abi::{ErrorSite, KernelSite, kernels};
use ogham_ir::artifact::cpu::KernelInfo;
use ogham_ir::kir::Program;
use std::fmt::Write;

/// A compiled kernel.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// `<entry>_k<n>`, numbered in statement order within the entry point.
    pub name: String,
    pub func: cranelift_codegen::ir::Function,
    /// For reductions and scans: merges two partial results.
    pub combine: Option<cranelift_codegen::ir::Function>,
    /// The variables passed in the argument slots, in order.
    pub inputs: Vec<VarId>,
    /// The checks of `func` then `combine`, by number.
    pub sites: Vec<ErrorSite>,
}

impl Kernel {
    /// What the executor needs to know of the kernel besides its code.
    pub fn info(&self) -> KernelInfo {
        KernelInfo {
            name: self.name.clone(),
            inputs: self.inputs.clone(),
            sites: self.sites.clone(),
        }
    }
}

/// One kernel statement of a program and its compiled form (or why there is none).
#[derive(Clone, Debug)]
pub struct CompiledSeg {
    /// Index of the entry point in [`Program::functions`].
    pub function: usize,
    /// The kernel statement's name ([`KernelSite::name`]).
    pub name: String,
    pub kernel: Result<Kernel, Unsupported>,
}

/// The backend's artefact (the pass `codegen-cpu`): the Cranelift IR of kernel statements, in
/// statement order ([`kernels`]). The JIT and the object writers turn it into machine code.
#[derive(Clone, Debug)]
pub struct ClifModule {
    pub segs: Vec<CompiledSeg>,
}

impl ClifModule {
    /// The CLIF text of every kernel, `; kernel NAME` before each; a kernel the backend does
    /// not compile is a comment saying why (deterministic: `ogham dev --print clif`,
    /// `snapshot { clif }`).
    pub fn print(&self) -> String {
        self.segs.iter().map(CompiledSeg::print).collect()
    }
}

impl CompiledSeg {
    /// The kernel's part of [`ClifModule::print`]: `; kernel NAME`, its CLIF and its combine
    /// function's, or the comment saying why it is not compiled.
    pub fn print(&self) -> String {
        let mut out = String::new();
        match &self.kernel {
            Ok(k) => {
                let _ = writeln!(out, "; kernel {}", self.name);
                let _ = writeln!(out, "{}", k.func.display());
                if let Some(c) = &k.combine {
                    let _ = writeln!(out, "{}", c.display());
                }
            }
            Err(Unsupported(why)) => {
                let _ = writeln!(
                    out,
                    "; kernel {}: not compiled ({why}); the runtime evaluates it\n",
                    self.name
                );
            }
        }
        out
    }
}

/// Compiles every kernel of a kernel-IR program.
pub fn compile(program: &Program) -> ClifModule {
    compile_sites(program, kernels(program))
}

/// Compiles the kernels of entry point `function` (an index in [`Program::functions`]), in
/// statement order: the entries of [`compile`] for that function.
pub fn compile_function(program: &Program, function: usize) -> ClifModule {
    let mut sites = kernels(program);
    sites.retain(|k| k.function == function);
    compile_sites(program, sites)
}

fn compile_sites(program: &Program, sites: Vec<KernelSite>) -> ClifModule {
    let segs = sites
        .into_iter()
        .map(|k| {
            let f = &program.functions[k.function];
            let kernel =
                kernel::build(f, k.stmt, k.seg, &k.name, &program.unchecked).map(|built| Kernel {
                    name: k.name.clone(),
                    func: built.func,
                    combine: built.combine,
                    inputs: built.inputs,
                    sites: built.sites,
                });
            CompiledSeg {
                function: k.function,
                name: k.name,
                kernel,
            }
        })
        .collect();
    ClifModule { segs }
}
