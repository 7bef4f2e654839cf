//! Optimisations: `simplify` (fold, copy propagation, CSE, DCE, hoisting; core and kernel IR),
//! `fuse` (graph-based SOAC fusion, core IR) and `narrow` (guarded reductions over an index
//! range iterate only the range, kernel IR).

pub mod fuse;
pub mod narrow;
pub mod simplify;
