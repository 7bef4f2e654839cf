//! Host steps that only make or move data, run on the device: the `replicate`, `iota`, `copy`,
//! `rearrange` and `concat` statements of a kernel-IR host program make their results in device
//! memory, as remote arrays (`resident.rs`), so that arrays the host code makes or moves only
//! for kernels never cross PCIe. The host fetches such an array only if it reads its values.
//!
//! - `replicate`: a scalar by a memset; a row by the prelude's `og_replicate_*` kernel (one
//!   launch writing the result in order).
//! - `iota`: the prelude's `og_iota` kernel.
//! - `copy`: one device-to-device copy of the source's elements; `concat`: one per part.
//! - `rearrange`: the prelude's tiled `og_transpose_*` for a matrix's transpose; any other
//!   permutation by `og_permute_*`, element by element in the result's order (its writes
//!   coalesce; its reads do when the innermost axis stays innermost). Ranks above
//!   [`CUDA_PERMUTE_RANK`] are left to the evaluator.
//!
//! Invariants: a source's elements are read through their device copy
//! ([`resident::device_address`]: uploaded once, and kept, when the source is a host array);
//! every result is fresh device memory that nothing writes after the step; the data kernels
//! cannot fail, so the host does not wait for them (unless profiled), and a later copy to the
//! host or launch runs after them (one stream).

use super::resident::{self, DeviceMemory};
use super::{CudaLauncher, Res};
use crate::error::{R_INTERNAL, error};
use crate::ireval::eval::{Array, Store, Val};
use crate::kernel_io::prim_data;
use ogham_ir::abi::{CUDA_IOTA, CUDA_PERMUTE, CUDA_PERMUTE_RANK, CUDA_REPLICATE, CUDA_TRANSPOSE};
use ogham_ir::types::PrimType;

/// The side of the transpose kernel's square tiles (`og_transpose` in the prelude).
const TILE: usize = 32;

/// An array of `shape` (`len` elements of type `elem`) that `memory` holds, as a remote array.
fn made(elem: PrimType, shape: Vec<usize>, len: usize, memory: DeviceMemory) -> Array {
    Array::new(shape, Store::Prim(resident::remote(elem, len, memory)))
}

/// The index in [`CUDA_PERMUTE`], [`CUDA_TRANSPOSE`] and [`CUDA_REPLICATE`] of the kernels for elements of `size`
/// bytes.
fn by_width(size: usize) -> Option<usize> {
    [1, 2, 4, 8].iter().position(|&w| w == size)
}

impl CudaLauncher {
    /// `replicate(n, v)` made in the device's memory, as a remote array of `n` rows: a fill
    /// for a scalar, the prelude's `og_replicate_*` for a row.
    pub(super) fn replicate_on_device(&self, n: usize, v: &Val, elem: PrimType) -> Res<Array> {
        let size = elem.byte_size();
        let (shape, total) = match v {
            Val::Prim(_) => (vec![n], n),
            Val::Array(row) => {
                let shape: Vec<usize> = std::iter::once(n)
                    .chain(row.shape().iter().copied())
                    .collect();
                (shape, n * row.elem_count())
            }
            _ => {
                return Err(error(
                    R_INTERNAL,
                    Default::default(),
                    "replicate of a value that is neither scalar nor array",
                ));
            }
        };
        let memory = self.pool.alloc(total * size)?;
        match v {
            Val::Prim(s) if total > 0 => {
                let bits = s.slot_bits().to_le_bytes();
                self.pool.device().fill(memory.ptr, &bits[..size], total)?;
            }
            Val::Array(row) if total > 0 => {
                let width = by_width(size).ok_or_else(|| {
                    error(R_INTERNAL, Default::default(), "no replicate of this width")
                })?;
                let mut single_use = Vec::new();
                let src = resident::device_address(&self.pool, row, &mut single_use)?;
                let params = vec![memory.ptr, src, total as u64, row.elem_count() as u64];
                let grid = self.grid_for(total, 32);
                self.data_kernel(CUDA_REPLICATE[width], grid, 0, params)?;
            }
            _ => {}
        }
        Ok(made(elem, shape, total, memory))
    }

    /// `iota(n)` made on the device.
    pub(super) fn iota_on_device(&self, n: usize) -> Res<Array> {
        let memory = self.pool.alloc(8 * n)?;
        if n > 0 {
            let grid = self.grid_for(n, 32);
            self.data_kernel(CUDA_IOTA, grid, 0, vec![memory.ptr, n as u64])?;
        }
        Ok(made(PrimType::I64, vec![n], n, memory))
    }

    /// A fresh copy of `a`'s elements, made on the device; `None` for arrays of tuples.
    pub(super) fn copy_on_device(&self, a: &Array) -> Option<Res<Array>> {
        let data = prim_data(a).ok()?;
        let (elem, size, len) = (data.prim_type(), data.prim_type_size(), a.elem_count());
        Some((|| {
            let memory = self.pool.alloc(len * size)?;
            if len > 0 {
                let mut single_use = Vec::new();
                let src = resident::device_address(&self.pool, a, &mut single_use)?;
                self.pool.device().copy(memory.ptr, src, len * size)?;
            }
            Ok(made(elem, a.shape().to_vec(), len, memory))
        })())
    }

    /// The concatenation of `parts` (of the same row shape), of shape `shape`, made on the
    /// device: one device-to-device copy per part; `None` for arrays of tuples.
    pub(super) fn concat_on_device(&self, parts: &[Array], shape: &[usize]) -> Option<Res<Array>> {
        let data = prim_data(parts.first()?).ok()?;
        let elem = data.prim_type();
        for p in parts {
            if prim_data(p).ok()?.prim_type() != elem {
                return None;
            }
        }
        let size = data.prim_type_size();
        let len: usize = shape.iter().product();
        Some((|| {
            let memory = self.pool.alloc(len * size)?;
            let mut at = memory.ptr;
            for p in parts.iter().filter(|p| p.elem_count() > 0) {
                let mut single_use = Vec::new();
                let src = resident::device_address(&self.pool, p, &mut single_use)?;
                let bytes = p.elem_count() * size;
                self.pool.device().copy(at, src, bytes)?;
                at += bytes as u64;
            }
            Ok(made(elem, shape.to_vec(), len, memory))
        })())
    }

    /// `a` with its axes permuted by `perm` (result axis `k` is `a`'s axis `perm[k]`), made on
    /// the device; `None` for arrays of tuples and ranks above [`CUDA_PERMUTE_RANK`].
    pub(super) fn rearrange_on_device(&self, a: &Array, perm: &[usize]) -> Option<Res<Array>> {
        let data = prim_data(a).ok()?;
        let (elem, size, len) = (data.prim_type(), data.prim_type_size(), a.elem_count());
        let width = by_width(size)?;
        let shape = a.shape();
        if perm.len() != shape.len() || perm.len() > CUDA_PERMUTE_RANK {
            return None;
        }
        let new_shape: Vec<usize> = perm.iter().map(|&d| shape[d]).collect();
        Some((|| {
            let memory = self.pool.alloc(len * size)?;
            if len == 0 {
                return Ok(made(elem, new_shape, len, memory));
            }
            let mut single_use = Vec::new();
            let src = resident::device_address(&self.pool, a, &mut single_use)?;
            let rank = perm.len();
            if perm == [1, 0] {
                let (rows, cols) = (shape[0], shape[1]);
                let tiles = rows.div_ceil(TILE) * cols.div_ceil(TILE);
                let grid = tiles.clamp(1, (self.pool.device().multiprocessors() * 16) as usize);
                let shared = (TILE * (TILE + 1) * size) as u32;
                let params = vec![memory.ptr, src, rows as u64, cols as u64];
                self.data_kernel(CUDA_TRANSPOSE[width], grid, shared, params)?;
            } else {
                // The source's strides (in elements), taken in the result's order of axes.
                let mut strides = vec![1usize; rank];
                for d in (0..rank - 1).rev() {
                    strides[d] = strides[d + 1] * shape[d + 1];
                }
                let mut params = vec![memory.ptr, src, len as u64, rank as u64];
                let padded = |values: Vec<usize>| {
                    let mut v: Vec<u64> = values.into_iter().map(|x| x as u64).collect();
                    v.resize(CUDA_PERMUTE_RANK, 1);
                    v
                };
                params.extend(padded(new_shape.clone()));
                params.extend(padded(perm.iter().map(|&d| strides[d]).collect()));
                let grid = self.grid_for(len, 32);
                self.data_kernel(CUDA_PERMUTE[width], grid, 0, params)?;
            }
            Ok(made(elem, new_shape, len, memory))
        })())
    }

    /// Blocks for `n` elements, one per thread, at most `per_sm` blocks per multiprocessor
    /// (the kernels loop over the rest).
    fn grid_for(&self, n: usize, per_sm: i64) -> usize {
        let dev = self.pool.device();
        let block = dev.block_size() as usize;
        n.div_ceil(block)
            .clamp(1, (dev.multiprocessors() * per_sm) as usize)
    }

    /// Launches data kernel `name` (which cannot fail) in blocks of the thread-level size, and
    /// reports it to the profile as one kernel of level `data`.
    fn data_kernel(&self, name: &str, grid: usize, shared: u32, mut params: Vec<u64>) -> Res<()> {
        let start = std::time::Instant::now();
        let dev = self.pool.device();
        let function = dev.function(name)?;
        let block = dev.block_size() as u32;
        let launched = dev.launch(
            function,
            grid as u32,
            block,
            shared,
            &mut params,
            self.profile && !dev.modelled(),
        );
        self.report(name, "data", start);
        launched.map(drop)
    }
}
