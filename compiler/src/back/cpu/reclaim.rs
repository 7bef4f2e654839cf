//! The memory of a sequential loop's iterations given back. A worker's arena hands out memory
//! by a bump pointer and takes it all back only at the next point (`ogham_arena_reset`), so a
//! loop whose body makes arrays held the arrays of all its iterations: TWDTW's wavefront over a
//! pattern of 1,000 and a series of 9,855 took 290 MB for 240 KB of data, and a series of
//! 100,000 would take about 3 GB. A loop whose body may make arrays
//! ([`lower::makes_arrays`]) takes a mark of the arena before it (`ogham_arena_mark`), and at
//! the end of each iteration, with its parameters bound to their new values:
//!
//! - when no parameter is an array, nothing the iteration made outlives it, and the arena goes
//!   back to the mark (`ogham_arena_rewind`);
//! - otherwise, once more than a whole chunk of the arena was handed out since the mark
//!   (`ogham_arena_due`: rarely, so that short loops never copy), each array parameter whose
//!   value lies in memory handed out since the mark (`ogham_arena_made_since`) is copied to the
//!   worker's scratch arena, the arena goes back to the mark, and the copies are copied to fresh
//!   arrays at the mark. Arrays from before the loop (its initial values, updated in place or
//!   not) stay where they are.
//!
//! The values are the same (copies of the same elements, in fresh arrays with row-major strides,
//! which every access reads through the view). Invariants relied on: the arena hands out memory
//! in order, so everything after the mark was made by the loop; nothing an iteration made is
//! reachable after it but through the new values of the loop's parameters (IR variables are
//! scoped to the body); the scratch arena is not used otherwise, and `ogham_arena_due` empties
//! it before each use (the copies in it are dead once copied back). The CUDA backend does the
//! same in its own terms (`back/cuda/reclaim.rs`).

use super::codegen::Gen;
use super::helpers::HelperId;
use crate::back::lower::{self, Res};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, Value};
use ogham_ir::{Body, SubExp, VarId};

/// The arena's mark before a loop whose body may make arrays; `None` when it makes none.
pub(super) fn before_loop(g: &mut Gen, body: &Body) -> Option<Value> {
    if !lower::makes_arrays(g.f, body) {
        return None;
    }
    let ctx = g.ctx;
    g.call(HelperId::ArenaMark, &[ctx])
}

/// Gives back what the iteration made, once the loop's `params` are bound to their new values
/// (moving the arrays among them when the copies are due).
pub(super) fn iteration_end(g: &mut Gen, mark: Value, params: &[(VarId, SubExp)]) -> Res<()> {
    let ctx = g.ctx;
    let arrays: Vec<VarId> = params
        .iter()
        .map(|(p, _)| *p)
        .filter(|p| g.f.ty(*p).rank() > 0)
        .collect();
    if arrays.is_empty() {
        g.call(HelperId::ArenaRewind, &[ctx, mark]);
        return Ok(());
    }
    let due = g.call(HelperId::ArenaDue, &[ctx, mark]).expect("a flag");
    let due = g.b.ins().icmp_imm_s(IntCC::NotEqual, due, 0);
    g.when(due, &mut |g| {
        let mut made = Vec::with_capacity(arrays.len());
        for p in &arrays {
            let ptr = g.view(*p)?.ptr;
            let flag = g
                .call(HelperId::ArenaMadeSince, &[ctx, mark, ptr])
                .expect("a flag");
            made.push(g.b.ins().icmp_imm_s(IntCC::NotEqual, flag, 0));
        }
        move_made(g, &arrays, &made, HelperId::ScratchAlloc)?;
        g.call(HelperId::ArenaRewind, &[ctx, mark]);
        move_made(g, &arrays, &made, HelperId::Alloc)
    })
}

/// Rebinds each array parameter that was `made` since the mark to a copy of its value in memory
/// from `from` (the scratch arena, or the arena once rewound).
fn move_made(g: &mut Gen, arrays: &[VarId], made: &[Value], from: HelperId) -> Res<()> {
    for (p, made) in arrays.iter().zip(made) {
        g.when(*made, &mut |g| {
            let value = g.view(*p)?;
            let copy = g.alloc_from(from, value.elem, value.dims.clone())?;
            g.copy_view(&value, &copy)?;
            g.bind(*p, &copy.values());
            Ok(())
        })?;
    }
    Ok(())
}
