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
//! A value that cannot be made again from the argument record (an allocation's pointer, a value
//! computed in the point loop) has the same problem when it is live across a call on its way to
//! a loop nest without calls that uses it (`crosses_call`): it is stored to a stack slot of its
//! own right after its definition, and each such nest loads its copy from the slot before it
//! starts, at the same place as above. Cranelift cannot merge that load back into the original
//! (a call lies between them), so the copy is live only through the nest.
//!
//! Invariants relied on: the argument record (the kernel's second parameter) is not written
//! while the kernel runs, so a load from it gives the same value wherever it is made; the copied
//! arithmetic is pure; a value's slot is written only right after the value's definition, so a
//! load from it, at a point the definition dominates, gives the value. A copy that Cranelift
//! finds equal to the original (a load with no store or call between the two) is merged back
//! into it, which is the code before this pass.

use cranelift_codegen::Context;
use cranelift_codegen::cursor::{Cursor as _, FuncCursor};
use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::types::I64;
use cranelift_codegen::ir::{
    Block, Function, Inst, InstBuilder as _, InstructionData, Opcode, StackSlot, StackSlotData,
    StackSlotKind, Value, ValueDef,
};
use cranelift_codegen::loop_analysis::{Loop, LoopAnalysis};
use cranelift_codegen::settings::{self, Configurable};
use std::collections::{HashMap, HashSet};

/// At most this many instructions make one rematerialised value (the argument loads and the
/// arithmetic on them; constants are not counted, Cranelift makes them where they are used).
const MAX_COST: usize = 4;

/// Gives every use inside a loop of a value rematerialisable from the argument record `args`
/// (see the module header) a copy made before the loop that [`copy_loop`] chooses, and every
/// use of another value that reaches a call-free loop nest across a call a copy loaded there
/// from the value's stack slot.
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
    let mut slots: HashMap<Value, StackSlot> = HashMap::new();
    for (innermost, inst) in in_loops {
        // Operands only: a value passed to a block stays as it is, so that the parameters
        // passing a value unchanged around a loop stay constant (Cranelift removes them).
        let used: Vec<Value> = func.dfg.inst_args(inst).to_vec();
        let mut renamed = HashMap::new();
        for v in used {
            let w = same.dfg.resolve_aliases(v);
            if renamed.contains_key(&v) || !outside(func, &loops, w, innermost) {
                continue;
            }
            let remake_cost = cost(&same, args, w, MAX_COST);
            if remake_cost == Some(0) {
                continue;
            }
            let lp = copy_loop(func, (&loops, &calls), w, innermost);
            let copy = *copies.entry((lp, w)).or_insert_with(|| {
                let header = loops.loop_header(lp);
                let at = domtree
                    .idom(header)
                    .expect("a loop header has an immediate dominator");
                if remake_cost.is_some() {
                    // Right after the original, a copy would be the original again.
                    if def_block(func, w) == Some(at) {
                        w
                    } else {
                        remake(func, &same, w, at)
                    }
                } else if let Some(def) = def_point(func, w).filter(|&def| {
                    !calls.contains(&lp)
                        && slot_type(func, w)
                        && crosses_call(func, (&cfg, &domtree), def, header)
                }) {
                    let slot = *slots.entry(w).or_insert_with(|| spill(func, w, def));
                    reload(func, w, slot, at)
                } else {
                    w
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

/// Where a value is defined: by an instruction (in its block), or as a block's parameter.
#[derive(Clone, Copy)]
enum DefPoint {
    Inst(Block, Inst),
    Param(Block),
}

impl DefPoint {
    fn block(self) -> Block {
        match self {
            DefPoint::Inst(block, _) | DefPoint::Param(block) => block,
        }
    }
}

/// Where `v` is defined (none for an instruction not in the layout, or a union).
fn def_point(func: &Function, v: Value) -> Option<DefPoint> {
    match func.dfg.value_def(v) {
        ValueDef::Result(inst, _) => Some(DefPoint::Inst(func.layout.inst_block(inst)?, inst)),
        ValueDef::Param(block, _) => Some(DefPoint::Param(block)),
        ValueDef::Union(..) => None,
    }
}

/// The block where `v` is defined.
fn def_block(func: &Function, v: Value) -> Option<Block> {
    def_point(func, v).map(DefPoint::block)
}

/// The instructions that remaking `v` takes, at most `budget`: `v` is a load from the argument
/// record, a constant of any type (free: Cranelift makes constants where they are used, and
/// never from a stack slot) or cheap integer arithmetic on such values.
fn cost(func: &Function, args: Value, v: Value, budget: usize) -> Option<usize> {
    let ValueDef::Result(inst, 0) = func.dfg.value_def(v) else {
        return None;
    };
    let constant = |op| {
        matches!(
            op,
            Opcode::Iconst | Opcode::F32const | Opcode::F64const | Opcode::Vconst
        )
    };
    match func.dfg.insts[inst] {
        data if constant(data.opcode()) => Some(0),
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

/// Whether a value of `w`'s type can live in a stack slot of its own (a scalar or a vector of
/// at most 16 bytes).
fn slot_type(func: &Function, w: Value) -> bool {
    let bytes = func.dfg.value_type(w).bytes();
    (1..=16).contains(&bytes)
}

/// Whether a value defined at `def` is live across a call on its way to loop `header`: a call
/// after the definition in a block that the definition dominates and from which `header` is
/// reached without passing the definition again.
fn crosses_call(
    func: &Function,
    (cfg, domtree): (&ControlFlowGraph, &DominatorTree),
    def: DefPoint,
    header: Block,
) -> bool {
    let is_call = |inst: Inst| func.dfg.insts[inst].opcode().is_call();
    let mut seen = HashSet::from([header]);
    let mut work = vec![header];
    while let Some(block) = work.pop() {
        let call = match def {
            DefPoint::Inst(block_of_def, inst) if block == block_of_def => {
                std::iter::successors(func.layout.next_inst(inst), |&i| func.layout.next_inst(i))
                    .any(is_call)
            }
            _ => {
                domtree.block_dominates(def.block(), block)
                    && func.layout.block_insts(block).any(is_call)
            }
        };
        if call {
            return true;
        }
        if block == def.block() {
            continue;
        }
        for pred in cfg.pred_iter(block) {
            if seen.insert(pred.block) {
                work.push(pred.block);
            }
        }
    }
    false
}

/// A stack slot of its own for `w`, defined at `def`, which stores `w` to it right after it.
fn spill(func: &mut Function, w: Value, def: DefPoint) -> StackSlot {
    let bytes = func.dfg.value_type(w).bytes();
    let align_shift = u8::try_from(bytes.trailing_zeros()).expect("a small shift");
    let data = StackSlotData::new(StackSlotKind::ExplicitSlot, bytes, align_shift);
    let slot = func.create_sized_stack_slot(data);
    let mut cursor = match def {
        DefPoint::Inst(_, inst) => FuncCursor::new(func).after_inst(inst),
        DefPoint::Param(block) => FuncCursor::new(func).at_first_inst(block),
    };
    cursor.ins().stack_store(I64, w, slot, 0);
    slot
}

/// A copy of `w` loaded from its stack `slot` at the end of `block`, before its branch.
fn reload(func: &mut Function, w: Value, slot: StackSlot, block: Block) -> Value {
    let ty = func.dfg.value_type(w);
    let branch = func
        .layout
        .last_inst(block)
        .expect("a block ends in a branch");
    FuncCursor::new(func)
        .at_inst(branch)
        .ins()
        .stack_load(I64, ty, slot, 0)
}
