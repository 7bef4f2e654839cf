//! Optimisations: `simplify` (fold, copy propagation, CSE, DCE, hoisting; core and kernel IR),
//! `fuse` (graph-based SOAC fusion, core IR), `narrow` (guarded reductions over an index
//! range iterate only the range, kernel IR), `hoist_reads` (element reads that are the same in
//! every iteration move out of loops, kernel IR), `index_inputs` (reads at an `iota` input's
//! element become inputs, kernel IR) and `layout` (where a kernel's per-point arrays
//! live, kernel IR); `iota_views` finds the arrays of consecutive indices those passes
//! recognise.

pub mod fuse;
pub mod hoist_reads;
pub mod index_inputs;
mod iota_views;
pub mod layout;
pub mod narrow;
pub mod simplify;
