//! The Ogham compiler: source text to typed AST (and, with the middle end, to core IR, kernel IR
//! and generated kernel code). The compiler only generates; the runtime crate executes. The IRs
//! it builds and transforms, and the types, source locations and diagnostics of every stage,
//! are the `ogham-ir` crate's (`ogham_ir`), which the runtime shares without the compiler.
//!
//! Passes, in order (one module each, one public entry):
//!
//! | module   | entry              | what it does                                            |
//! |----------|--------------------|---------------------------------------------------------|
//! | `syntax` | `parse_module`     | logos lexer + lalrpop grammar -> AST with spans         |
//! | `loader` | `load`             | reads the root file and its imports (and the prelude)   |
//! | `typeck` | `check`            | names, types, sizes, polymorphism, uniqueness           |
//! | `lower`  | `lower`            | inlining, defunctionalisation, ANF -> core IR (`ogham_ir`) |
//! | `opt`    | `simplify`, `fuse` | folding, CSE, DCE, hoisting; SOAC fusion                |
//! | `flatten`| `flatten`          | nested parallelism -> kernel IR (`ogham_ir::kir`), thresholds |
//! | `back`   | `back::cpu::compile` | kernel IR -> Cranelift functions (CPU backend)        |
//!
//! `pipeline` holds the one ordered list of passes, the middle end's then one backend's
//! code-generating pass (`ogham dev --dump-after PASS`); `ogham_ir::verify` checks the IR after
//! each of them in debug builds and tests;
//! `ogham_ir::print` and `ogham_ir::parse` write and read its text form (filetests run one pass on
//! it). `ogham_ir::sizes` is the one checked size arithmetic that every executor and the
//! generated code share. `docs/compiler.md` explains the IRs.

pub mod back;
pub mod builtins;
pub mod flatten;
pub mod loader;
pub mod lower;
pub mod opt;
pub mod pipeline;
pub mod plan;
pub mod stdlib;
pub mod syntax;
pub mod typeck;
