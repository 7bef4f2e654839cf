//! `layout` (kernel IR): chooses where the arrays a kernel's body makes at one point (its
//! per-point arrays) live, and records it in the kernel ([`SegOp::layout`], printed
//! `segmap thread interleaved ...`).
//!
//! The rule: a thread-level kernel whose body binds an array other than a view (at any depth:
//! a statement's result, a loop's carried value; an index, slice or transposition of an array
//! is a view of it and makes nothing) is [`PointLayout::Interleaved`]; every other kernel
//! stays [`PointLayout::Contiguous`].
//!
//! - *Interleaved* means: element slot `w` of the point run by thread (or SIMD lane) `t` of the
//!   `n` in flight is slot `w * n + t` of memory those `n` share, so the `n` points reading
//!   element `w` of their arrays touch `n` consecutive slots (on CUDA a warp's load of an `f32`
//!   takes 4 sectors instead of 32). A backend gives each array a view whose strides are `n`
//!   times the contiguous ones.
//! - Why every array of a thread-level kernel can be interleaved: no construct of kernel IR
//!   needs a per-point array's elements to be adjacent. Every use of an array goes through its
//!   view (element pointer, extents, strides): indexing, slices, rows, transposes, copies,
//!   fills, `concat`'s parts; a `reshape` copies its operand into a fresh array and describes
//!   that copy with the copy's own element stride. Per-point arrays never leave the point: a
//!   kernel's results are copied into its output arrays, which are the host's.
//! - Block-level kernels stay contiguous: their block-level arrays live in memory every thread
//!   of the block addresses identically, and the arrays of their per-thread lambdas are left
//!   for a later layout.
//! - A body that binds no array but views makes none, and is left contiguous so that its text
//!   does not change.
//!
//! Backends that do not implement a layout keep every array contiguous, which is always
//! correct. The CPU backend follows the decision where it runs a kernel's points in SIMD
//! lanes (`back/cpu/simd/arrays.rs`: lanes in place of threads, an interleaved kernel's
//! one-dimensional per-point arrays as one vector per element) and keeps the scalar code's
//! arrays contiguous.

use ogham_ir::Exp;
use ogham_ir::kir::{Function, PointLayout, Program, SegLevel, SegOp};
use ogham_ir::traverse::{for_each_kernel_mut, for_each_stmt};

/// Chooses the layout of every kernel of the program.
pub fn layout(program: &mut Program) {
    for_each_kernel_mut(program, &mut |f, seg| seg.layout = choose(f, seg));
}

/// The layout of `seg`'s per-point arrays, by the rule of the module header.
fn choose(f: &Function, seg: &SegOp) -> PointLayout {
    if seg.level != SegLevel::Thread {
        return PointLayout::Contiguous;
    }
    let mut makes_arrays = false;
    for_each_stmt(&seg.body, &mut |stmt| {
        let view = matches!(stmt.exp, Exp::Index(..) | Exp::Rearrange(..));
        makes_arrays |= !view && stmt.pat.iter().any(|&v| f.ty(v).rank() > 0);
    });
    if makes_arrays {
        PointLayout::Interleaved
    } else {
        PointLayout::Contiguous
    }
}
