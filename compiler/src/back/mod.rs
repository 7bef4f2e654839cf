//! Backends: kernel IR ([`crate::kir`]) to code a machine runs. Each backend only generates
//! (deterministic text or in-memory functions that print as text); the runtime crate loads and
//! executes what it generates.

pub mod cpu;
