//! Fills of fresh arrays with one scalar (`replicate n v` inside a kernel): 16-byte vector
//! stores of the splatted value, eight per iteration (128 bytes), then scalar stores for the
//! last `n % (8·lanes)` elements. A per-point array that a kernel pads (BFAST's compacted series
//! are `replicate N nan` before the compaction writes their front) then costs a few
//! instructions per 128 bytes instead of a loop iteration per element; on a long series the
//! fills were a third of the per-pixel kernel's instructions. The address advances as a variable of
//! the loop (`Gen::address_loop`: 11 instructions per 128 bytes, eight stores, the address's
//! addition, the compare and branch).
//!
//! The stores are not assumed aligned (the arena aligns allocations to 8 bytes); every element
//! gets the same bits as an element-by-element loop would store.
//!
//! Why this is emission and not a pass on kernel IR: it is how one statement (`replicate`) is
//! turned into machine stores, with no choice between forms of the program to record; kernel IR
//! has no notion of a vector store.

use super::codegen::{Gen, Res, clif_type, elem_size};
use cranelift_codegen::ir::types::{
    F32, F32X4, F64, F64X2, I8, I8X16, I16, I16X8, I32, I32X4, I64X2,
};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Type, Value};
use ogham_ir::types::PrimType;

/// Bytes of one vector store.
const VECTOR_BYTES: i64 = 16;

/// Vector stores per iteration of the main loop.
const UNROLL: i64 = 8;

/// The 16-byte vector type of `elem`'s machine type.
fn vector_of(elem: PrimType) -> Type {
    match clif_type(elem) {
        I8 => I8X16,
        I16 => I16X8,
        I32 => I32X4,
        F32 => F32X4,
        F64 => F64X2,
        _ => I64X2,
    }
}

impl Gen<'_> {
    /// Stores the scalar `val` (of type `elem`) in each of the `n` (`>= 0`) consecutive
    /// elements from `ptr`.
    pub fn fill(&mut self, ptr: Value, n: Value, val: Value, elem: PrimType) -> Res<()> {
        let size = elem_size(elem);
        let per_iteration = UNROLL * VECTOR_BYTES / size;
        let splat = self.b.ins().splat(vector_of(elem), val);
        let chunks = self
            .b
            .ins()
            .ushr_imm_u(n, i64::from(per_iteration.trailing_zeros()));
        let flags = MemFlagsData::new().with_notrap();
        self.address_loop(&[ptr], UNROLL * VECTOR_BYTES, chunks, &mut |g, at| {
            for k in 0..UNROLL {
                g.b.ins()
                    .store(flags, splat, at[0], (k * VECTOR_BYTES) as i32);
            }
        });
        let done = self.b.ins().imul_imm_s(chunks, per_iteration);
        self.for_range(done, n, &mut |g, i| {
            let offset = g.b.ins().imul_imm_s(i, size);
            let addr = g.b.ins().iadd(ptr, offset);
            g.b.ins().store(MemFlagsData::trusted(), val, addr, 0);
            Ok(())
        })
    }
}
