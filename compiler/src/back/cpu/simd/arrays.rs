//! Per-point arrays in lanes: the one-dimensional arrays a kernel's point code makes
//! (`replicate`) and updates in place, for a group of points at once, in the layout the
//! `layout` pass chose for the kernel (`PointLayout::Interleaved`, `opt/layout.rs`).
//!
//! The group's copy of an array of length `n` is one block of `n` vectors from the worker's
//! arena: element `w` of lane `t` is lane `t` of vector `w` (slot `w * lanes + t`). So an
//! element at a uniform index is one vector load or store for every lane. Under an execution
//! mask, a store keeps the inactive lanes' elements (a vector store of the lanes selected from
//! the new and the old vector), so a branch or a loop iteration that runs for some lanes
//! updates only theirs. An index out of bounds, a negative or too large length, or an
//! allocation that fails sends the group to the scalar code, which reports the error.
//!
//! Per-lane indices (a gather or scatter of one scalar per lane, which only two-lane kernels
//! have, as indices are `i64`) were built and measured at commits `435e477` to `aa5608d`:
//! they did not pay in two `f64` lanes, and the cost rule (`check.rs`) keeps per-point arrays
//! out of two-lane kernels.

use super::PointArray;
use super::lanes::Lanes;
use crate::back::cpu::codegen::{Gen, Res, elem_size};
use crate::back::cpu::helpers::HelperId;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value};
use ogham_ir::types::PrimType;
use ogham_ir::{DimIndex, Exp, SubExp, VarId};

/// The largest per-point array of lane code, in elements: a group with a longer one runs the
/// scalar code (which allocates a lane's worth, and reports the error if that fails).
const MAX_POINT_ARRAY: i64 = 1 << 20;

impl Lanes<'_> {
    /// Emits `exp` bound to `pat` when it is a statement on per-point arrays (the plan's
    /// `replicate`s, copies of names, reads and updates); false when it is not one.
    pub(super) fn array_stmt(&mut self, g: &mut Gen, exp: &Exp, pat: &[VarId]) -> Res<bool> {
        match (pat, exp) {
            ([a], Exp::Replicate(n, x)) => {
                let array = self.replicate(g, *n, *x, g.f.ty(*a).elem())?;
                self.arrays.insert(*a, array);
            }
            ([b], Exp::SubExp(SubExp::Var(a))) if self.arrays.contains_key(a) => {
                self.arrays.insert(*b, self.arrays[a]);
            }
            ([b], Exp::Update(a, idx, v)) if self.arrays.contains_key(a) => {
                let array = self.arrays[a];
                let at = self.index(g, &array, idx)?;
                let v = self.operand(g, *v)?;
                self.store_point(g, &array, at, v);
                self.arrays.insert(*b, array);
            }
            ([x], Exp::Index(a, idx)) if self.arrays.contains_key(a) => {
                let array = self.arrays[a];
                let at = self.index(g, &array, idx)?;
                let v = self.load_point(g, &array, at);
                self.vals.insert(*x, v);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The memory of a per-point array, by name (its vectors' address, for lane code that
    /// passes arrays through `if`s and loops).
    pub(super) fn array(&self, v: VarId) -> Option<PointArray> {
        self.arrays.get(&v).copied()
    }

    /// `replicate n x`: `n` vectors from the arena, each `x`'s lanes.
    fn replicate(&mut self, g: &mut Gen, n: SubExp, x: SubExp, elem: PrimType) -> Res<PointArray> {
        let len = g.scalar(n)?;
        let fits =
            g.b.ins()
                .icmp_imm_u(IntCC::UnsignedLessThanOrEqual, len, MAX_POINT_ARRAY);
        self.bail_unless(g, fits);
        let row = self.row_bytes(elem);
        let bytes = g.b.ins().imul_imm_s(len, row);
        let ctx = g.ctx;
        let ptr = g
            .call(HelperId::Alloc, &[ctx, bytes])
            .expect("alloc returns a pointer");
        let allocated = g.b.ins().icmp_imm_s(IntCC::NotEqual, ptr, 0);
        self.bail_unless(g, allocated);
        let x = self.operand(g, x)?;
        let zero = g.iconst(0);
        g.for_range(zero, len, &mut |g, w| {
            let offset = g.b.ins().imul_imm_s(w, row);
            let addr = g.b.ins().iadd(ptr, offset);
            g.b.ins().store(flags(), x, addr, 0);
            Ok(())
        })?;
        Ok(PointArray { ptr, len, elem })
    }

    /// Stores each lane's copy of `array` (a kernel's result) as the row of `row` elements at
    /// `addr` for the group's first point, the next lanes' in the next rows; the array's length
    /// is `row` (checked).
    pub(super) fn store_rows(
        &mut self,
        g: &mut Gen,
        array: &PointArray,
        addr: Value,
        row: Value,
    ) -> Res<()> {
        let size = elem_size(array.elem);
        let vty = self.width.vector(array.elem);
        let row_bytes = g.b.ins().imul_imm_s(row, size);
        let lanes = self.width.lanes() as u8;
        let zero = g.iconst(0);
        let array = *array;
        let width = self.width;
        g.for_range(zero, row, &mut |g, w| {
            let offset = g.b.ins().imul_imm_s(w, width.lanes() * size);
            let from = g.b.ins().iadd(array.ptr, offset);
            let v = g.b.ins().load(vty, flags(), from, 0);
            let at = g.b.ins().imul_imm_s(w, size);
            let mut to = g.b.ins().iadd(addr, at);
            for t in 0..lanes {
                if t > 0 {
                    to = g.b.ins().iadd(to, row_bytes);
                }
                let x = g.b.ins().extractlane(v, t);
                g.b.ins().store(flags(), x, to, 0);
            }
            Ok(())
        })
    }

    /// The bytes of one vector of a per-point array of `elem`s.
    fn row_bytes(&self, elem: PrimType) -> i64 {
        self.width.lanes() * elem_size(elem)
    }

    /// The index `idx` of `array` (a uniform scalar), checked.
    fn index(&mut self, g: &mut Gen, array: &PointArray, idx: &[DimIndex]) -> Res<Value> {
        let [DimIndex::Fix(i)] = idx else {
            unreachable!("plan: per-point arrays are indexed by one element index")
        };
        let i = g.scalar(*i)?;
        let inside = g.b.ins().icmp(IntCC::UnsignedLessThan, i, array.len);
        self.bail_unless(g, inside);
        Ok(i)
    }

    /// The address of the vector of `array`'s elements at index `w`.
    fn slot(&self, g: &mut Gen, array: &PointArray, w: Value) -> Value {
        let offset = g.b.ins().imul_imm_s(w, self.row_bytes(array.elem));
        g.b.ins().iadd(array.ptr, offset)
    }

    /// The lanes' elements of `array` at index `w`.
    fn load_point(&mut self, g: &mut Gen, array: &PointArray, w: Value) -> Value {
        let vty = self.width.vector(array.elem);
        let addr = self.slot(g, array, w);
        g.b.ins().load(vty, flags(), addr, 0)
    }

    /// Stores the active lanes of `v` into `array` at index `w`.
    fn store_point(&mut self, g: &mut Gen, array: &PointArray, w: Value, v: Value) {
        let v = match self.mask {
            Some(m) => {
                let old = self.load_point(g, array, w);
                Self::select(g, m, v, old)
            }
            None => v,
        };
        let addr = self.slot(g, array, w);
        g.b.ins().store(flags(), v, addr, 0);
    }
}

/// Loads and stores of per-point arrays: in bounds (checked), not aligned to vectors.
fn flags() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}
