//! Kernel IR: the core IR after flattening. The host program ([`Program`], the IR in the form
//! [`HostOp`]) is scalar code, sequential loops and `if`s whose data-parallel work is all in
//! [`SegOp`] kernels ([`HostOp::Seg`]); no SOAC remains at host level (the verifier checks
//! this). Kernels are launched over an index space at a [`SegLevel`]; their bodies are core IR
//! again (sequential at `Thread` level, block-parallel SOACs at `Block` level), so by their
//! type they hold no kernel and no threshold. Memory is implicit: each kernel's results are
//! fresh arrays whose shapes are given by the space and the per-point result types; backends
//! plan allocations from those types.
//!
//! Multi-versioned code is an `if` on [`HostOp::Threshold`], comparing a size with a tunable
//! threshold ([`ThresholdId`]: a [`ThresholdKind`] and the map's number; defaults in
//! [`Threshold`], overridable by name in a tuning file).

pub mod tuning;

use crate::{Body, Form, HistOp, Lambda, RedOp, ScanOp, SubExp, Type, VarId};

/// A kernel IR program: its host code is in the form [`HostOp`].
pub type Program = crate::Program<HostOp>;
/// A kernel IR entry point.
pub type Function = crate::Function<HostOp>;
/// A body of kernel IR host code.
pub type HostBody = crate::Body<HostOp>;
/// A statement of kernel IR host code.
pub type HostStmt = crate::Stmt<HostOp>;
/// An expression of kernel IR host code.
pub type HostExp = crate::Exp<HostOp>;

/// What kernel IR's host code does beyond the core constructs ([`crate::Exp::Host`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum HostOp {
    /// A segmented operation launched by the host.
    Seg(Box<SegOp>),
    /// `size >= threshold` (a `bool`), where the threshold is the program's tunable parameter
    /// `id` (default or from a tuning file).
    Threshold { id: ThresholdId, size: SubExp },
}

impl Form for HostOp {
    const HOST: bool = true;

    fn host(&self) -> &HostOp {
        self
    }

    fn host_mut(&mut self) -> &mut HostOp {
        self
    }

    fn from_host(op: HostOp) -> Option<HostOp> {
        Some(op)
    }
}

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
    /// Where the arrays the body makes at a point live (chosen by the `layout` pass).
    #[serde(default)]
    pub layout: PointLayout,
    /// How the code generators run statements of the body, as the kernel-IR target passes chose
    /// ([`Plans`]).
    #[serde(default)]
    pub plans: Plans,
}

/// The plans of a kernel's statements, keyed by the statement's first bound variable (each
/// variable is bound once, so the key names one statement of the body, at any depth). Printed
/// `@plan` on the line before the statement. A statement without a plan is emitted plainly;
/// a code generator may also emit a planned statement plainly (where the plan's run-time
/// conditions fail, or it does not implement the plan), which is always correct: a plan
/// changes how a statement runs, never what it computes.
pub type Plans = std::collections::BTreeMap<VarId, Plan>;

/// How a statement of a kernel's body is run, chosen by a target pass on kernel IR just before
/// code generation. Each pass's module says which program shape it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Plan {
    /// `unswitch`: a sequential SOAC whose lambda tests `cond`, a value bound outside it, runs
    /// its loop once per value of `cond`, behind one branch (printed `@unswitch(c_3)`).
    Unswitch { cond: VarId },
    /// `skip-idle`: a `for` loop whose iterations leave its parameters unchanged where an
    /// element it reads is (or is not) NaN skips those iterations a vector at a time (printed
    /// `@skip_idle`).
    SkipIdle,
    /// `jam`: a sequential map of maps of dot products runs several outer iterations together
    /// (unroll-and-jam; printed `@jam`).
    Jam,
    /// `interleave`: a sequential map whose lambda computes one reduction runs several
    /// iterations' reductions in one loop (printed `@interleave`).
    Interleave,
}

impl Plan {
    /// The word after `@` in the text form.
    pub fn name(self) -> &'static str {
        match self {
            Plan::Unswitch { .. } => "unswitch",
            Plan::SkipIdle => "skip_idle",
            Plan::Jam => "jam",
            Plan::Interleave => "interleave",
        }
    }
}

/// Where the arrays a kernel's body makes at one point (its per-point arrays) live. Backends
/// that cannot honour a layout keep the arrays contiguous, which is always correct: every use of
/// a per-point array goes through its view's strides.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum PointLayout {
    /// Each point's arrays one after the other in its own memory (row-major).
    #[default]
    Contiguous,
    /// Interleaved across the points in flight: element slot `w` of the point run by thread (or
    /// lane) `t` of `n` is slot `w * n + t` of memory shared by the `n`, so consecutive points
    /// touch consecutive addresses (printed `interleaved` after the level).
    Interleaved,
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
            SegKind::Red(reds) => crate::screma_operators(&[], reds),
            SegKind::Scan(scans) => crate::screma_operators(scans, &[]),
            SegKind::Map | SegKind::Hist(_) => Vec::new(),
        }
    }
}

/// What a threshold's comparison decides; it fixes the prefix of the threshold's name.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum ThresholdKind {
    /// `suff_outer_par_K`: the outer width from which one thread per outer element runs a
    /// multi-versioned map's body sequentially.
    SuffOuterPar,
    /// `suff_intra_par_K`: the inner parallelism from which the distributed kernels run rather
    /// than one block per outer element.
    SuffIntraPar,
    /// `suff_block_par_K`: in the Block-level version of a map whose body is a nest of maps,
    /// the width of the inner map from which a block runs one outer element (its threads on the
    /// inner map's elements) rather than one element of the nest (its threads on the parallel
    /// code inside the inner map).
    SuffBlockPar,
}

impl ThresholdKind {
    pub const ALL: [ThresholdKind; 3] = [
        ThresholdKind::SuffOuterPar,
        ThresholdKind::SuffIntraPar,
        ThresholdKind::SuffBlockPar,
    ];

    /// The prefix of the names of thresholds of this kind.
    pub fn prefix(self) -> &'static str {
        match self {
            ThresholdKind::SuffOuterPar => "suff_outer_par",
            ThresholdKind::SuffIntraPar => "suff_intra_par",
            ThresholdKind::SuffBlockPar => "suff_block_par",
        }
    }
}

/// The identity of a threshold: its kind and the number of the multi-versioned map it belongs
/// to. Its name, `{prefix}_{map}` (`suff_outer_par_0`), is how tuning files refer to it.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct ThresholdId {
    pub kind: ThresholdKind,
    pub map: u32,
}

impl ThresholdId {
    /// The threshold that `name` names, if it is a threshold's name.
    pub fn parse(name: &str) -> Option<ThresholdId> {
        let (prefix, map) = name.rsplit_once('_')?;
        let kind = ThresholdKind::ALL
            .into_iter()
            .find(|k| k.prefix() == prefix)?;
        // Only the canonical spelling (no sign, no leading zeros) names a threshold.
        let map: u32 = map.parse().ok()?;
        (map.to_string() == name[prefix.len() + 1..]).then_some(ThresholdId { kind, map })
    }
}

impl std::fmt::Display for ThresholdId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}_{}", self.kind.prefix(), self.map)
    }
}

/// A tunable parameter of the compiled program: multi-versioned code takes its first version
/// when the size it compares is at least the threshold.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Threshold {
    /// Unique in the program.
    pub id: ThresholdId,
    pub default: i64,
    /// What the comparison decides, for the tuning file and `ogham dev --print kir`.
    pub doc: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_names_round_trip() {
        for kind in ThresholdKind::ALL {
            for map in [0, 7, 12, u32::MAX] {
                let id = ThresholdId { kind, map };
                assert_eq!(ThresholdId::parse(&id.to_string()), Some(id));
            }
        }
        assert_eq!(
            ThresholdId::parse("suff_outer_par_3").map(|t| t.to_string()),
            Some("suff_outer_par_3".to_string())
        );
        for bad in [
            "suff_outer_par",
            "suff_outer_par_",
            "suff_outer_par_03",
            "suff_outer_par_+3",
        ] {
            assert_eq!(ThresholdId::parse(bad), None, "{bad}");
        }
        assert_eq!(ThresholdId::parse("suff_outer_3"), None);
        assert_eq!(ThresholdId::parse("x"), None);
    }
}
