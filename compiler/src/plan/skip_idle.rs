//! `skip-idle` (kernel IR, target pass): marks the filtering loops whose idle iterations a code
//! generator may skip a vector at a time ([`Plan::SkipIdle`], printed `@skip_idle` before the
//! loop; the key is the loop statement's first bound variable).
//!
//! The shape ([`shape`]): a `for i < n` loop whose body is exactly
//! - the read `x = a[i]` of element `i` (the loop's own counter, no offset) of a rank-1 `f32`
//!   or `f64` array `a` bound outside the loop (neither a loop parameter nor the counter; the
//!   read is the body's first statement, so nothing in the body binds it either),
//! - a chain of one-variable statements on it: `isnan x` once, then any number of `!`s, each
//!   on the previous one's value,
//! - and an `if` on the chain's last value, whose results are the body's results in order,
//!   one of whose branches (an *idle* one) has no statements and returns the loop's parameters
//!   unchanged, in order.
//!
//! An iteration whose element takes the idle branch has no effect but the read, so a code
//! generator may move the counter past a run of such elements without running them, as long
//! as it reads only in-bounds elements: the iterations that run are the same, in the same
//! order, with the same results and failures. [`Shape::nan_runs`] says which elements run
//! the body (NaNs, or the others), from the branch that is idle and the parity of the `!`s.
//! Example: the one-pass compaction of the valid observations of a series,
//! `compact_with_keys (\v -> !(isnan v))` in `lib/segmented.og` (BFAST's first step).
//!
//! A loop statement that binds nothing cannot carry a plan (no key) and is left alone.
//!
//! Backends: the CPU backend skips with 128-bit vector compares (`back/cpu/skip.rs`), where its
//! run-time conditions hold (SIMD code on, the array contiguous, a vector within the array and
//! the range). The CUDA backend does not use the plan and emits the loop plainly: a thread runs
//! one point's loop in lock-step with the other threads of its warp, so skipping one thread's
//! idle elements saves the warp nothing unless all of its threads skip together, and a GPU
//! thread has no vector compare that yields a lane mask (a 16-byte `float4` load still takes
//! four scalar comparisons and branches), so a probe would cost each thread about what the
//! idle iterations it replaces cost.

use ogham_ir::kir::{Function, Plan, Program};
use ogham_ir::math::MathFn;
use ogham_ir::op::UnOp;
use ogham_ir::types::PrimType;
use ogham_ir::{Body, DimIndex, Exp, LoopForm, SubExp, VarId};

/// A loop of the shape of the module header: the array its body reads at the counter and
/// which elements run the body (NaNs when `nan_runs`, the others otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub array: VarId,
    pub nan_runs: bool,
}

/// Plans every loop of the shape of the module header, in every kernel of `program`.
pub fn run(program: &mut Program) {
    super::plan_statements(program, &|f, stmt| match &stmt.exp {
        Exp::Loop { params, form, body } => shape(f, params, form, body).map(|_| Plan::SkipIdle),
        _ => None,
    });
}

/// The shape of the loop with parameters `params`, form `form` and body `body` of function
/// `f`, or `None` when it is not of the form of the module header.
pub fn shape(
    f: &Function,
    params: &[(VarId, SubExp)],
    form: &LoopForm,
    body: &Body,
) -> Option<Shape> {
    let LoopForm::For { index, .. } = *form else {
        return None;
    };
    let (first, rest) = body.stmts.split_first()?;
    let (last, chain) = rest.split_last()?;
    let (array, x) = match (&first.pat[..], &first.exp) {
        ([x], Exp::Index(a, idx)) if idx == &[DimIndex::Fix(SubExp::Var(index))] => (*a, *x),
        _ => return None,
    };
    let t = f.ty(array);
    let bound = params.iter().any(|(p, _)| *p == array) || array == index;
    if t.rank() != 1 || !matches!(t.elem(), PrimType::F32 | PrimType::F64) || bound {
        return None;
    }
    // The chain `isnan x`, then `!`s: its last value and whether it is negated.
    let (mut cur, mut tested, mut negated) = (x, false, false);
    for s in chain {
        let [b] = s.pat[..] else { return None };
        match &s.exp {
            Exp::Math(MathFn::IsNan, _, args) if !tested && args == &[SubExp::Var(cur)] => {
                tested = true;
            }
            Exp::UnOp(UnOp::Not, SubExp::Var(v)) if tested && *v == cur => negated = !negated,
            _ => return None,
        }
        cur = b;
    }
    let Exp::If {
        cond: SubExp::Var(c),
        then_body,
        else_body,
        ..
    } = &last.exp
    else {
        return None;
    };
    let results: Vec<SubExp> = last.pat.iter().map(|v| SubExp::Var(*v)).collect();
    if !tested || *c != cur || body.result != results {
        return None;
    }
    let idle = |b: &Body| {
        b.stmts.is_empty()
            && b.result.len() == params.len()
            && b.result
                .iter()
                .zip(params)
                .all(|(r, (p, _))| r == &SubExp::Var(*p))
    };
    // The value of the condition for which the body does something.
    let runs_when = if idle(else_body) {
        true
    } else if idle(then_body) {
        false
    } else {
        return None;
    };
    Some(Shape {
        array,
        nan_runs: runs_when != negated,
    })
}
