//! The target passes on kernel IR, run after `layout` and just before code generation. Each
//! matches one program shape among the statements of kernels' bodies and records in the
//! kernel's [`ogham_ir::kir::Plans`] how the code generators run such a statement; none changes
//! a statement. A plan is a decision about how to run code, never about what it computes: a
//! code generator follows it where its run-time conditions hold (array strides, widths) and
//! emits the statement plainly otherwise, or where it does not implement the plan, which is
//! always correct. What stays inside emission (the run-time tests, the vector instructions) is
//! each emitter module's business and its header says why.

pub mod skip_idle;

use ogham_ir::Exp;
use ogham_ir::kir::{Function, HostBody, HostOp, Program, SegOp};
use ogham_ir::traverse::{NestedMut, nested_bodies_mut};

/// Calls `visit` on every kernel of `program` with the function it is in (kernels sit in host
/// code: a function's body and the host bodies nested in it, never inside another kernel).
pub fn each_kernel(program: &mut Program, visit: &mut impl FnMut(&Function, &mut SegOp)) {
    fn host_body(f: &Function, body: &mut HostBody, visit: &mut impl FnMut(&Function, &mut SegOp)) {
        for stmt in &mut body.stmts {
            if let Exp::Host(HostOp::Seg(seg)) = &mut stmt.exp {
                visit(f, seg);
                continue;
            }
            for nested in nested_bodies_mut(&mut stmt.exp) {
                if let NestedMut::Host(b) = nested {
                    host_body(f, b, visit);
                }
            }
        }
    }
    for f in &mut program.functions {
        let mut body = std::mem::take(&mut f.body);
        host_body(f, &mut body, visit);
        f.body = body;
    }
}
