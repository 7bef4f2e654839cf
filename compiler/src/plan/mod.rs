//! The target passes on kernel IR, run after `layout` and just before code generation. Each
//! matches one program shape among the statements of kernels' bodies and records in the
//! kernel's [`ogham_ir::kir::Plans`] how the code generators run such a statement; none changes
//! a statement. A plan is a decision about how to run code, never about what it computes: a
//! code generator follows it where its run-time conditions hold (array strides, widths) and
//! emits the statement plainly otherwise, or where it does not implement the plan, which is
//! always correct. What stays inside emission (the run-time tests, the vector instructions) is
//! each emitter module's business and its header says why.

pub mod skip_idle;
pub mod unswitch;
