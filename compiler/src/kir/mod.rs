//! Kernel IR: the core IR after flattening. The host program is an ordinary [`crate::ir`] body
//! (scalar code, sequential loops, `if`s) whose data-parallel work is all in [`SegOp`] kernels
//! ([`crate::ir::Exp::Seg`]); no SOAC remains at host level. Kernels are launched over an index
//! space at a [`SegLevel`]; their bodies are core IR again (sequential at `Thread` level,
//! block-parallel SOACs at `Block` level). Memory is implicit: each kernel's results are fresh
//! arrays whose shapes are given by the space and the per-point result types; backends plan
//! allocations from those types.
//!
//! Multi-versioned code is an `if` on [`crate::ir::Exp::Threshold`], comparing a size with a
//! named, tunable threshold (defaults in [`Threshold`], overridable by a tuning file).

pub mod tuning;

use crate::ir::{Body, HistOp, Lambda, RedOp, ScanOp, SubExp, Type, VarId};

/// How the points of a kernel's space map onto the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum SegLevel {
    /// One thread per point; the body (including any SOAC in it) runs sequentially.
    Thread,
    /// One block (CPU: one task) per point; the SOACs of the body that are not inside another
    /// SOAC (directly in it, or in its loops and `if`s) run in parallel across the block's
    /// threads, with block-local (shared) memory for their intermediate arrays.
    Block,
}

/// A kernel: `body` runs once per point of `space` (`space[d] = (index variable, extent)`,
/// outermost first; the index variables are bound in `body`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SegOp {
    pub level: SegLevel,
    pub space: Vec<(VarId, SubExp)>,
    pub kind: SegKind,
    pub body: Body,
    /// The types of the body's results at one point.
    pub ret: Vec<Type>,
}

/// What a kernel does with the values its body computes at each point.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum SegKind {
    /// Every result `t` becomes an array `[d_0]...[d_k]t` over the whole space.
    Map,
    /// Segmented reductions along the innermost dimension of the space: the body returns the
    /// values fed to each operator (in order), then mapped values. Results: one value per
    /// segment (`[d_0]...[d_{k-1}]t`) per reduced component, then the mapped arrays as in `Map`.
    Red(Vec<RedOp>),
    /// Segmented inclusive scans along the innermost dimension; results are over the whole space
    /// (scanned components, then mapped ones).
    Scan(Vec<ScanOp>),
    /// Segmented histograms: for each [`HistOp`] the body returns a bin then that histogram's
    /// values; the destinations have the space's outer dimensions (all but the innermost) then
    /// `num_bins`. Out-of-bounds bins are ignored. Results: the updated destinations.
    ///
    /// Flattening makes a `scatter` a histogram whose operator returns its second argument
    /// (`\_ v -> v`): each point overwrites its bin. That operator has no neutral element (its
    /// `neutral` is a placeholder zero), so a backend must apply it to the destination itself,
    /// never through privatised sub-histograms.
    Hist(Vec<HistOp>),
}

impl SegKind {
    /// The reduction or scan operators with their neutral elements (none for maps and
    /// histograms).
    pub fn operators(&self) -> Vec<(&Lambda, &[SubExp])> {
        match self {
            SegKind::Red(reds) => crate::ir::screma_operators(&[], reds),
            SegKind::Scan(scans) => crate::ir::screma_operators(scans, &[]),
            SegKind::Map | SegKind::Hist(_) => Vec::new(),
        }
    }
}

/// A tunable parameter of the compiled program: multi-versioned code takes its first version
/// when the size it compares is at least the threshold.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Threshold {
    /// Unique in the program, e.g. `suff_outer_par_0`.
    pub name: String,
    pub default: i64,
    /// What the comparison decides, for the tuning file and `ogham dev --print kir`.
    pub doc: String,
}
