//! The code generators the runtime runs compiled programs with: the compiler's backends behind
//! the runtime's traits (the runtime depends on the IR only, so this crate wires the two).

pub mod cpu;
