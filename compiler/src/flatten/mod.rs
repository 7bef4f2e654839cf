//! Flattening: core IR -> kernel IR (placeholder until flattening lands: the identity).

use crate::ir::Program;

pub fn flatten(program: Program) -> Program {
    program
}
