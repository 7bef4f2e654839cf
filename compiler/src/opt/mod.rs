//! Core IR -> core IR optimisations: `simplify` (fold, copy propagation, CSE, DCE, hoisting) and
//! `fuse` (graph-based SOAC fusion).

pub mod fuse;
pub mod simplify;
