//! Backends: kernel IR ([`ogham_ir::kir`]) to code a machine runs. Each backend only generates
//! (deterministic text or in-memory functions that print as text); the runtime crate loads and
//! executes what it generates. What generated code and the runtime agree on (kernel names,
//! error sites, the context record, helper codes) is `ogham_ir::abi`. Both walk kernel bodies
//! with the shared lowering ([`lower`]) and emit the scalar operations whose semantics their
//! instructions lack (integer division, float `%`, float-to-integer conversion, the
//! power-of-two rewrite) from one description ([`steps`]).

pub mod cpu;
pub mod cuda;
pub mod lower;
pub mod steps;

/// Why a kernel was not compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported(pub String);
