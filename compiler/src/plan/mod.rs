//! The target passes on kernel IR, run after `layout` and just before code generation. Each
//! matches one program shape among the statements of kernels' bodies and records in the
//! kernel's [`ogham_ir::kir::Plans`] how the code generators run such a statement; none changes
//! a statement. A plan is a decision about how to run code, never about what it computes: a
//! code generator follows it where its run-time conditions hold (array strides, widths) and
//! emits the statement plainly otherwise, or where it does not implement the plan, which is
//! always correct. What stays inside emission (the run-time tests, the vector instructions) is
//! each emitter module's business and its header says why.

pub mod dot;
pub mod interleave;
pub mod jam;

use ogham_ir::kir::{Function, HostBody, HostOp, Plan, Program};
use ogham_ir::traverse::{NestedMut, for_each_stmt, nested_bodies_mut};
use ogham_ir::{Body, Exp, Lambda, Soac, Stmt};

/// Records `plan` for every statement of every kernel's body (at any depth) that has no plan
/// yet and for which `matches` holds.
pub fn plan_statements(
    program: &mut Program,
    plan: Plan,
    matches: &dyn Fn(&Function, &Stmt) -> bool,
) {
    for f in &mut program.functions {
        let mut body = std::mem::take(&mut f.body);
        host_body(f, &mut body, plan, matches);
        f.body = body;
    }
}

fn host_body(
    f: &Function,
    body: &mut HostBody,
    plan: Plan,
    matches: &dyn Fn(&Function, &Stmt) -> bool,
) {
    for stmt in &mut body.stmts {
        if let Exp::Host(HostOp::Seg(seg)) = &mut stmt.exp {
            let mut planned = Vec::new();
            for_each_stmt(&seg.body, &mut |s| {
                if let Some(&key) = s.pat.first()
                    && !seg.plans.contains_key(&key)
                    && matches(f, s)
                {
                    planned.push(key);
                }
            });
            for key in planned {
                seg.plans.insert(key, plan);
            }
            continue;
        }
        for nested in nested_bodies_mut(&mut stmt.exp) {
            if let NestedMut::Host(b) = nested {
                host_body(f, b, plan, matches);
            }
        }
    }
}

/// The lambda of `soac` when it is a `Screma` without scan or reduction components of its own
/// (a map).
pub fn map_only(soac: &Soac) -> Option<&Lambda> {
    let Soac::Screma {
        map, scans, reds, ..
    } = soac
    else {
        return None;
    };
    let own = scans.iter().map(|s| s.neutral.len()).sum::<usize>()
        + reds.iter().map(|r| r.neutral.len()).sum::<usize>();
    (own == 0).then_some(map)
}

/// Whether running `body` may allocate arena memory (then the CPU backend resets the arena at
/// each point, and keeps such code out of interleaved iterations).
pub fn allocates(body: &Body) -> bool {
    let mut found = false;
    for_each_stmt(body, &mut |stmt: &Stmt| {
        found |= match &stmt.exp {
            Exp::Iota(_)
            | Exp::Replicate(..)
            | Exp::ArrayLit(..)
            | Exp::Reshape(..)
            | Exp::Concat(_)
            | Exp::Copy(_) => true,
            // A reduction-only `redomap` keeps its accumulators in registers.
            Exp::Soac(Soac::Screma { scans, reds, .. }) => {
                let reduced: usize = reds.iter().map(|r| r.neutral.len()).sum();
                !scans.is_empty() || stmt.pat.len() > reduced
            }
            _ => false,
        };
    });
    found
}
