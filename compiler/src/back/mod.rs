//! Backends: kernel IR ([`ogham_ir::kir`]) to code a machine runs. Each backend only generates
//! (deterministic text or in-memory functions that print as text); the runtime crate loads and
//! executes what it generates. What generated code and the runtime agree on (kernel names,
//! error sites, the context record, helper codes) is `ogham_ir::abi`.

pub mod cpu;
pub mod cuda;
pub mod lower;

/// Why a kernel was not compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported(pub String);
