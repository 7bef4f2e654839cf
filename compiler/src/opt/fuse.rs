//! Fusion (placeholder until fusion lands: the identity).

use crate::ir::Program;

pub fn fuse(_program: &mut Program) {}
