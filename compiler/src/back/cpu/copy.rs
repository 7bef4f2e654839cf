//! Copies of rank-1 arrays inside a kernel (`Gen::copy_view` of a row: a row gathered by
//! `map (\k -> xt[k]) keys`, a row returned into its place in a map's result): when both the
//! source and the destination have unit stride (tested at run time: views carry their strides
//! as values), 16 bytes per step with one vector load and one vector store, then the last
//! `n % (16 / size)` elements one by one; otherwise the element-by-element loop. BFAST's fit
//! gathers a row of the `[N][p]` design per valid history observation (`ols_fit_valid`), eight
//! `f32`s: two steps instead of eight scalar iterations.
//!
//! Invariants: the source and the destination do not overlap (a copy goes to a fresh array or
//! to a row that is not its source, see `lower.rs` `copy_row`), so copying several elements per
//! step stores the bits the element-by-element loop would. Loads and stores are not assumed
//! aligned (the arena aligns allocations to 8 bytes) and move bits, whatever the element type.
//!
//! Why this is emission and not a pass on kernel IR: the choice is made at run time, from the
//! views' strides, for every copy; there is nothing about the program's shape to plan.

use super::codegen::{Gen, Res, View, elem_size};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::I8X16;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData};

/// Bytes of one vector load and store.
const VECTOR_BYTES: i64 = 16;

impl Gen<'_> {
    /// Copies the elements of the rank-1 view `src` to the same positions of `dst` (same
    /// extent, no overlap).
    pub(super) fn copy_run(&mut self, src: &View, dst: &View) -> Res<()> {
        let n = src.dims[0];
        let size = elem_size(src.elem);
        let per_vector = VECTOR_BYTES / size;
        let src_unit = self.b.ins().icmp_imm_s(IntCC::Equal, src.strides[0], 1);
        let dst_unit = self.b.ins().icmp_imm_s(IntCC::Equal, dst.strides[0], 1);
        let unit = self.b.ins().band(src_unit, dst_unit);
        let vectors = self
            .b
            .ins()
            .ushr_imm_u(n, i64::from(per_vector.trailing_zeros()));
        let none = self.iconst(0);
        let vectors = self.b.ins().select(unit, vectors, none);
        let flags = MemFlagsData::new().with_notrap();
        self.address_loop(&[src.ptr, dst.ptr], VECTOR_BYTES, vectors, &mut |g, at| {
            let bits = g.b.ins().load(I8X16, flags, at[0], 0);
            g.b.ins().store(flags, bits, at[1], 0);
        });
        let done = self.b.ins().imul_imm_s(vectors, per_vector);
        self.for_range(done, n, &mut |g, i| {
            let from = g.elem_addr(src, &[i]);
            let v = g.load(src.elem, from);
            let to = g.elem_addr(dst, &[i]);
            g.store(v, to);
            Ok(())
        })
    }
}
