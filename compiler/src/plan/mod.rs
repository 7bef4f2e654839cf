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
pub mod skip_idle;
pub mod unswitch;

use ogham_ir::kir::{Function, Plan, Program};
use ogham_ir::traverse::{for_each_kernel_mut, for_each_stmt};
use ogham_ir::{Body, Exp, Lambda, Soac, Stmt};

/// Records, for every statement of every kernel's body (at any depth) that has no plan yet, the
/// plan `matches` gives it, if any.
pub fn plan_statements(program: &mut Program, matches: &dyn Fn(&Function, &Stmt) -> Option<Plan>) {
    for_each_kernel_mut(program, &mut |f, seg| {
        let mut planned = Vec::new();
        for_each_stmt(&seg.body, &mut |s| {
            if let Some(&key) = s.pat.first()
                && !seg.plans.contains_key(&key)
                && let Some(plan) = matches(f, s)
            {
                planned.push((key, plan));
            }
        });
        seg.plans.extend(planned);
    });
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

/// Whether every statement of `body` is one `leaf` accepts or an `if` with scalar results whose
/// branches are such statements, at most `budget` statements in all (nested ones included; the
/// budget left is written back).
pub fn scalar_statements(body: &Body, budget: &mut usize, leaf: &dyn Fn(&Stmt) -> bool) -> bool {
    body.stmts.iter().all(|stmt| {
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        match &stmt.exp {
            Exp::If {
                then_body,
                else_body,
                ret,
                ..
            } => {
                ret.iter().all(|t| t.rank() == 0)
                    && scalar_statements(then_body, budget, leaf)
                    && scalar_statements(else_body, budget, leaf)
            }
            _ => leaf(stmt),
        }
    })
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
