//! Printer for the core and kernel IR (placeholder until the printer lands).

use crate::ir::Program;

/// The whole program as stable, readable text.
pub fn print_program(program: &Program) -> String {
    format!("{program:#?}")
}
