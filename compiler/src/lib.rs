//! The Ogham compiler: source text to typed AST (and, with the middle end, to core IR, kernel IR
//! and generated kernel code). The compiler only generates; the runtime crate executes.
//!
//! Passes, in order (one module each, one public entry):
//!
//! | module   | entry              | what it does                                            |
//! |----------|--------------------|---------------------------------------------------------|
//! | `syntax` | `parse_module`     | logos lexer + lalrpop grammar -> AST with spans         |
//! | `loader` | `load`             | reads the root file and its imports (and the prelude)   |
//! | `typeck` | `check`            | names, types, sizes, polymorphism, uniqueness           |
//! | `lower`  | `lower`            | inlining, defunctionalisation, ANF -> core IR (`ir`)    |
//! | `opt`    | `simplify`, `fuse` | folding, CSE, DCE, hoisting; SOAC fusion                |
//! | `flatten`| `flatten`          | nested parallelism -> kernel IR (`kir`), thresholds     |
//! | `back`   | `back::cpu::compile` | kernel IR -> Cranelift functions (CPU backend)        |
//!
//! `pipeline` holds the one ordered list of middle-end passes (`ogham dev --dump-after PASS`);
//! `ir::verify` checks the IR after each of them in debug builds and tests; `ir::print` and
//! `ir::parse` write and read its text form (filetests run one pass on it). `sizes` is the one
//! checked size arithmetic that every executor and the generated code share. `docs/compiler.md`
//! explains the IRs.

pub mod back;
pub mod builtins;
pub mod flatten;
pub mod loader;
pub mod lower;
pub mod opt;
pub mod pipeline;
pub mod stdlib;
pub mod syntax;
pub mod typeck;
