//! Loop invariants made again before the loop nests that use them, so that their live ranges
//! there start at the nest: a kernel's arguments and cheap integer arithmetic on them (an input
//! array's pointer, extents and strides, a bound), run on a built kernel function.
//!
//! A kernel loads its arguments once, at its start (`kernel.rs`), and a per-pixel kernel uses
//! them in many loops, so their live ranges span the whole function with its helper calls.
//! Cranelift's register allocator spills such a value and then reloads it from its stack slot at
//! each use, also inside loops: EWMACD's Gram sums reloaded three such invariants per term (the
//! design's pointer and row stride, the training length). Here, each use inside a loop of a
//! value rematerialisable from the argument record is given a copy made before a loop around
//! the use (at the end of that loop header's immediate dominator, which lies outside the loop
//! and dominates it): the argument's load again, and the arithmetic on it. The loop is the
//! outermost one around the use that makes no call, below the loops that make calls (the
//! point loop of a kernel that allocates), or the innermost loop if that makes calls itself. A
//! copy is live only from there through that loop nest, so the allocator can keep it in a
//! register through the nest's iterations and spill the original across the nest instead. Each
//! such loop gets one copy of a value, shared by all its uses there; none is made where it would
//! directly follow the original (in the block that defines it).
//!
//! Invariants relied on: the argument record (the kernel's second parameter) is not written
//! while the kernel runs, so a load from it gives the same value wherever it is made; the copied
//! arithmetic is pure. A copy that Cranelift finds equal to the original (a load with no store
//! or call between the two) is merged back into it, which is the code before this pass.

use cranelift_codegen::Context;
use cranelift_codegen::cursor::{Cursor as _, FuncCursor};
use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{Block, Function, Inst, InstructionData, Opcode, Value, ValueDef};
use cranelift_codegen::loop_analysis::{Loop, LoopAnalysis};
use cranelift_codegen::settings::{self, Configurable};
use std::collections::{HashMap, HashSet};

/// At most this many instructions make one rematerialised value (the argument loads and the
/// arithmetic on them; constants are not counted, Cranelift makes them where they are used).
const MAX_COST: usize = 4;

/// Gives every use inside a loop of a value rematerialisable from the argument record `args`
/// (see the module header) a copy made before the loop that [`copy_loop`] chooses.
pub fn loop_invariants(func: &mut Function, args: Value) {
    let cfg = ControlFlowGraph::with_function(func);
    let domtree = DominatorTree::with_function(func, &cfg);
    let mut loops = LoopAnalysis::new();
    loops.compute(func, &cfg, &domtree);
    if loops.loops().next().is_none() {
        return;
    }
    let same = constant_phis(func);
    let calls = loops_with_calls(func, &loops);
    // The instructions in loops, with their innermost loops, before any copy is made.
    let in_loops: Vec<(Loop, Inst)> = func
        .layout
        .blocks()
        .filter_map(|block| Some((loops.innermost_loop(block)?, block)))
        .flat_map(|(lp, block)| func.layout.block_insts(block).map(move |inst| (lp, inst)))
        .collect();
    let mut copies: HashMap<(Loop, Value), Value> = HashMap::new();
    for (innermost, inst) in in_loops {
        // Operands only: a value passed to a block stays as it is, so that the parameters
        // passing a value unchanged around a loop stay constant (Cranelift removes them).
        let used: Vec<Value> = func.dfg.inst_args(inst).to_vec();
        let mut renamed = HashMap::new();
        for v in used {
            let w = same.dfg.resolve_aliases(v);
            if renamed.contains_key(&v)
                || !outside(func, &loops, w, innermost)
                || cost(&same, args, w, MAX_COST).is_none_or(|c| c == 0)
            {
                continue;
            }
            let lp = copy_loop(func, (&loops, &calls), w, innermost);
            let copy = *copies.entry((lp, w)).or_insert_with(|| {
                let at = domtree
                    .idom(loops.loop_header(lp))
                    .expect("a loop header has an immediate dominator");
                // Right after the original, a copy would be the original again.
                if def_block(func, w) == Some(at) {
                    w
                } else {
                    remake(func, &same, w, at)
                }
            });
            if copy != w {
                renamed.insert(v, copy);
            }
        }
        for v in func.dfg.inst_args_mut(inst) {
            if let Some(copy) = renamed.get(v) {
                *v = *copy;
            }
        }
    }
}

/// A copy of `func` in which each block parameter that always holds one value (a variable
/// passed unchanged around a loop) is an alias of that value, as Cranelift's constant-phi
/// removal makes it (which Cranelift runs again, on the function, when it compiles it).
fn constant_phis(func: &Function) -> Function {
    let mut flags = settings::builder();
    flags
        .set("enable_verifier", "false")
        .expect("a Cranelift setting");
    let flags = settings::Flags::new(flags);
    let mut ctx = Context::for_function(func.clone());
    ctx.compute_cfg();
    ctx.compute_domtree();
    ctx.remove_constant_phis(&flags)
        .expect("constant-phi removal without the verifier does not fail");
    ctx.func
}

/// The loop before which a use in loop `innermost` gets its copy of `w`: the outermost loop
/// around the use that `w` is defined outside of, and that makes no call, if `innermost` makes
/// none (else `innermost`). A copy made before a loop nest without calls can stay in a register
/// through the nest, and is made once per entry into the nest rather than once per iteration of
/// an inner loop.
fn copy_loop(
    func: &Function,
    (loops, calls): (&LoopAnalysis, &HashSet<Loop>),
    w: Value,
    innermost: Loop,
) -> Loop {
    let mut lp = innermost;
    while let Some(parent) = loops.loop_parent(lp) {
        if calls.contains(&parent) || !outside(func, loops, w, parent) {
            break;
        }
        lp = parent;
    }
    lp
}

/// The loops with a call in one of their blocks.
fn loops_with_calls(func: &Function, loops: &LoopAnalysis) -> HashSet<Loop> {
    let mut calls = HashSet::new();
    for block in func.layout.blocks() {
        let call = func
            .layout
            .block_insts(block)
            .any(|inst| func.dfg.insts[inst].opcode().is_call());
        let mut lp = loops.innermost_loop(block);
        while let Some(l) = lp.filter(|_| call) {
            calls.insert(l);
            lp = loops.loop_parent(l);
        }
    }
    calls
}

/// Whether `v` is defined outside loop `lp`.
fn outside(func: &Function, loops: &LoopAnalysis, v: Value, lp: Loop) -> bool {
    def_block(func, v).is_some_and(|b| !loops.is_in_loop(b, lp))
}

/// The block where `v` is defined.
fn def_block(func: &Function, v: Value) -> Option<Block> {
    match func.dfg.value_def(v) {
        ValueDef::Result(inst, _) => func.layout.inst_block(inst),
        ValueDef::Param(block, _) => Some(block),
        ValueDef::Union(..) => None,
    }
}

/// The instructions that remaking `v` takes, at most `budget`: `v` is a load from the argument
/// record, a constant (free: Cranelift makes constants where they are used) or cheap integer
/// arithmetic on such values.
fn cost(func: &Function, args: Value, v: Value, budget: usize) -> Option<usize> {
    let ValueDef::Result(inst, 0) = func.dfg.value_def(v) else {
        return None;
    };
    match func.dfg.insts[inst] {
        InstructionData::UnaryImm {
            opcode: Opcode::Iconst,
            ..
        } => Some(0),
        InstructionData::Load {
            opcode: Opcode::Load,
            arg,
            ..
        } if arg == args && budget >= 1 => Some(1),
        InstructionData::Binary {
            opcode: Opcode::Iadd | Opcode::Isub | Opcode::Imul | Opcode::Ishl,
            args: [x, y],
        } if budget >= 1 => {
            let (x, y) = (func.dfg.resolve_aliases(x), func.dfg.resolve_aliases(y));
            let cx = cost(func, args, x, budget - 1)?;
            let cy = cost(func, args, y, budget - 1 - cx)?;
            Some(1 + cx + cy)
        }
        _ => None,
    }
}

/// A copy of `v` (for which [`cost`] in `same` is some) made at the end of `block`, before its
/// branch: constants and the argument record's pointer are shared, everything else is made
/// again, from the operands as `same` resolves them.
fn remake(func: &mut Function, same: &Function, v: Value, block: Block) -> Value {
    let ValueDef::Result(inst, 0) = func.dfg.value_def(v) else {
        return v;
    };
    if func.dfg.insts[inst].opcode() == Opcode::Iconst {
        return v;
    }
    let remade: Vec<Value> = same
        .dfg
        .inst_args(inst)
        .iter()
        .map(|x| remake(func, same, same.dfg.resolve_aliases(*x), block))
        .collect();
    let copy = func.dfg.clone_inst(inst);
    func.dfg.inst_args_mut(copy).copy_from_slice(&remade);
    let branch = func
        .layout
        .last_inst(block)
        .expect("a block ends in a branch");
    FuncCursor::new(func).at_inst(branch).insert_inst(copy);
    func.dfg.first_result(copy)
}
