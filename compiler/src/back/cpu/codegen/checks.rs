//! The run-time checks of generated code ([`Gen::check`]): each failing condition branches to a
//! cold exit block that records the failure and its details and returns 1; [`Gen::finish`]
//! emits the dispatch that makes each exit's immediate dominator the entry block.
//!
//! Invariants: a condition whose conjuncts were all checked on the same straight-line path is
//! not checked again (the operands are the same values); `finish` is called once, after the
//! function's body.

use super::{Condition, Gen};
use crate::back::lower::Res;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{F32, F64, I32};
use cranelift_codegen::ir::{
    BlockArg, InstBuilder, InstructionData, MemFlagsData, Opcode, Type, Value, ValueDef,
};
use ogham_ir::abi::{CTX_DETAILS, CTX_SITE, Failure};

impl Gen<'_> {
    /// Continues when `ok` (a `bool`) holds; otherwise records `failure` with `details` (each
    /// widened to 64 bits) and returns 1 from the generated function.
    ///
    /// The failure exit is a cold block that takes the details as parameters and has a second
    /// predecessor, a branch from the entry block that is never taken ([`Gen::finish`]). Its
    /// immediate dominator is then the entry, not the check inside a loop. This matters to
    /// Cranelift's loop-invariant code motion: its elaboration keeps a stack of the loops around
    /// the block it visits, in dominator-tree order, pops the loops a block is not in, and pushes
    /// a loop only at its header. A failure exit dominated by a block inside a loop is not in
    /// the loop, so visiting it popped the loop for the rest of its body, and every value used
    /// there after the first check was computed in the loop, however invariant (the MOSUM's
    /// `sigma * sqrt(nh)` once per element, say). The details are passed as block arguments, so
    /// the checked path executes nothing more (the moves are on the split edge to the exit).
    ///
    /// A condition whose conjuncts were all checked already on the same straight-line path (no
    /// other block entered since: the rows of an interleaved map all checked against one width,
    /// say) holds again, as their operands are the same values: it is not checked twice.
    pub fn check(&mut self, ok: Value, failure: Failure, details: &[Value]) -> Res<()> {
        let mut conjuncts = Vec::new();
        self.conjuncts(ok, &mut conjuncts);
        if self.checked.0 != self.b.current_block() {
            self.checked.1.clear();
        }
        if conjuncts.iter().all(|c| self.checked.1.contains(c)) {
            return Ok(());
        }
        let site = self.checks.record(failure, details.len())? as i64;
        let fail = self.b.create_block();
        let cont = self.b.create_block();
        self.b.set_cold_block(fail);
        let types: Vec<Type> = details
            .iter()
            .map(|d| self.b.func.dfg.value_type(*d))
            .collect();
        let params: Vec<Value> = types
            .iter()
            .map(|t| self.b.append_block_param(fail, *t))
            .collect();
        let args: Vec<BlockArg> = details.iter().map(|d| BlockArg::Value(*d)).collect();
        self.b.ins().brif(ok, cont, &[], fail, &args);
        // Not sealed: the dispatch branches here too (`finish`).
        self.b.switch_to_block(fail);
        let flags = MemFlagsData::trusted();
        let site = self.iconst(site);
        self.b.ins().store(flags, site, self.ctx, CTX_SITE);
        for (k, d) in params.iter().enumerate() {
            let d = self.widen(*d);
            self.b
                .ins()
                .store(flags, d, self.ctx, CTX_DETAILS + 8 * k as i32);
        }
        let one = self.b.ins().iconst(I32, 1);
        self.b.ins().return_(&[one]);
        self.failures.push((fail, types));
        self.b.switch_to_block(cont);
        self.b.seal_block(cont);
        self.checked.0 = Some(cont);
        self.checked.1.extend(conjuncts);
        Ok(())
    }

    /// The conjuncts of the condition `ok` as [`Gen::check`] compares them: the leaves of its
    /// tree of `band`s, the constant true left out.
    fn conjuncts(&self, ok: Value, out: &mut Vec<Condition>) {
        let dfg = &self.b.func.dfg;
        let ValueDef::Result(inst, 0) = dfg.value_def(ok) else {
            out.push(Condition::Other(ok));
            return;
        };
        match dfg.insts[inst] {
            InstructionData::Binary {
                opcode: Opcode::Band,
                args: [a, b],
            } => {
                self.conjuncts(a, out);
                self.conjuncts(b, out);
            }
            InstructionData::UnaryImm {
                opcode: Opcode::Iconst,
                imm,
            } if imm.bits() == 1 => {}
            InstructionData::IntCompare { cond, args, .. } => {
                out.push(Condition::Compare(cond, args[0], args[1]));
            }
            _ => out.push(Condition::Other(ok)),
        }
    }

    /// Ends the function's code: the dispatch block branches to each failure exit with zero
    /// details (never at run time: see [`Gen::check`]), one comparison of the context pointer
    /// per exit, and returns 1 after the last. Call once, after the function's body.
    pub fn finish(&mut self) {
        self.b.switch_to_block(self.dispatch);
        self.b.seal_block(self.dispatch);
        for (k, (fail, types)) in std::mem::take(&mut self.failures).iter().enumerate() {
            let zeros: Vec<BlockArg> = types
                .iter()
                .map(|t| {
                    BlockArg::Value(match *t {
                        F32 => self.b.ins().f32const(0.0),
                        F64 => self.b.ins().f64const(0.0),
                        t => self.b.ins().iconst(t, 0),
                    })
                })
                .collect();
            let next = self.b.create_block();
            self.b.set_cold_block(next);
            let hit = self
                .b
                .ins()
                .icmp_imm_u(IntCC::Equal, self.ctx, k as i64 + 1);
            self.b.ins().brif(hit, *fail, &zeros, next, &[]);
            self.b.switch_to_block(next);
            self.b.seal_block(next);
        }
        let one = self.b.ins().iconst(I32, 1);
        self.b.ins().return_(&[one]);
    }
}
