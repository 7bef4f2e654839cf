//! The memory of a sequential loop's iterations given back. Arrays made inside a kernel come
//! from bump arenas (`emit.rs`), which never free on their own: a loop whose body makes arrays
//! would take new memory in every iteration, and a long one (TWDTW's wavefront makes two
//! diagonals in each of its `n + m` iterations) ran out of any arena. So a loop whose body
//! allocates from the arena of the loop's own code ([`Emit::arena_name`]: the block's at block
//! level, the interleaved sub-arenas `og_lanes`, or the thread's) takes a mark of that arena
//! before it (`og_mark`, `prelude.cuh`), and at the end of each iteration:
//!
//! - when no parameter of the loop is an array, nothing the iteration made outlives it, and the
//!   arena goes back to the mark (`og_rewind`);
//! - otherwise, once the iterations hold more than a third of the room the loop found
//!   (`og_reclaim_due`: rare, so that a short loop never pays for copies), the new values of the
//!   array parameters that lie above the mark (`og_made_since`: made by this iteration or an
//!   earlier one) are copied above a gap as large as their copies (`og_reserve`), the arena goes
//!   back to the mark, and they are copied down to it. Arrays carried from before the loop
//!   (its initial values, updated in place or not) stay where they are.
//!
//! The values are the same either way (copies of the same elements, with the row-major strides
//! of a fresh array, which every access reads through the view), so this changes no result.
//! Invariants relied on: the arena is a bump allocator, so everything above the mark was made
//! after it, by the loop; nothing an iteration made is reachable after it except through the new
//! values of the loop's parameters (IR variables are scoped to the body); at block level every
//! thread keeps the same arena state (so the tests are uniform), the first copies go to memory
//! no thread has used since the mark, and a barrier precedes the rewind (another thread may
//! still read what is given back). Allocations from another arena than the loop's own (a
//! thread's arena inside a lambda of a block-level loop) are given back by that lambda's own
//! loops, if any, not here.

use super::emit::{CView, Emit, Res, type_str};
use ogham_ir::source::Span;
use ogham_ir::{SubExp, Type, VarId};

/// What a loop recorded before its body was emitted.
pub(super) struct Mark {
    arena: &'static str,
    /// Where the mark's declaration goes in the text, and its indentation.
    at: usize,
    depth: usize,
    /// The arena's allocations before the body.
    before: usize,
    loc: Span,
}

/// Records the place for a mark of the current arena, before a loop.
pub(super) fn before_loop(e: &mut Emit) -> Mark {
    let arena = e.arena_name();
    Mark {
        arena,
        at: e.mark(),
        depth: e.depth(),
        before: e.allocations(arena),
        loc: e.checks.loc,
    }
}

/// Gives back the iteration's memory at the end of a loop body whose parameters' new values are
/// `vals`; returns the values to carry (moved copies of arrays, when they moved).
pub(super) fn iteration_end(
    e: &mut Emit,
    mark: Mark,
    params: &[(VarId, SubExp)],
    vals: Vec<String>,
) -> Res<Vec<String>> {
    if e.allocations(mark.arena) == mark.before {
        return Ok(vals);
    }
    let (a, m) = (mark.arena, e.temp("mark"));
    let m = m.as_str();
    let decl = if a == "og_lanes" {
        format!("const OgLanesMark {m} = og_mark({a});")
    } else {
        format!("const i64 {m} = og_mark({a});")
    };
    e.insert_line(mark.at, mark.depth, &decl);
    e.checks.loc = mark.loc;
    let arrays: Vec<(usize, CView)> = params
        .iter()
        .enumerate()
        .filter_map(|(k, (p, _))| match e.f.ty(*p) {
            Type::Array { elem, shape } => Some((
                k,
                CView {
                    name: vals[k].clone(),
                    rank: shape.len(),
                    elem: *elem,
                },
            )),
            Type::Prim(_) => None,
        })
        .collect();
    if arrays.is_empty() {
        e.barrier();
        e.line(format!("og_rewind({a}, {m});"));
        return Ok(vals);
    }
    let mut vals = vals;
    let moved: Vec<(String, String)> = arrays
        .iter()
        .map(|(k, v)| {
            let next = e.temp("carried");
            let made = e.temp("made");
            e.line(format!(
                "{} {next} = {};",
                type_str(e.f.ty(params[*k].0)),
                v.name
            ));
            vals[*k] = next.clone();
            (next, made)
        })
        .collect();
    e.open(format!("if (og_reclaim_due({a}, {m}))"));
    let space = e.temp("space");
    e.line(format!("OgSpace {space} = {{{{0, 0, 0, 0}}}};"));
    for ((_, v), (_, made)) in arrays.iter().zip(&moved) {
        e.line(format!(
            "const bool {made} = og_made_since({a}, {m}, {}.p);",
            v.name
        ));
        e.line(format!(
            "if ({made}) og_add_space({a}, {space}, {});",
            v.name
        ));
    }
    e.line(format!("og_reserve({a}, {m}, {space});"));
    copy_made(e, &arrays, &moved)?;
    e.barrier();
    e.line(format!("og_rewind({a}, {m});"));
    copy_made(e, &arrays, &moved)?;
    e.close();
    Ok(vals)
}

/// Replaces each carried array that was made since the mark (`made`) by a fresh copy of it.
fn copy_made(e: &mut Emit, arrays: &[(usize, CView)], moved: &[(String, String)]) -> Res<()> {
    for ((_, v), (next, made)) in arrays.iter().zip(moved) {
        e.open(format!("if ({made})"));
        let dims: Vec<String> = (0..v.rank).map(|k| format!("{next}.d[{k}]")).collect();
        let copy = e.alloc(v.elem, &dims)?;
        e.copy(&copy, next);
        e.line(format!("{next} = {copy};"));
        e.close();
    }
    Ok(())
}
