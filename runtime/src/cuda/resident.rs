//! Device residency: device memory from a pool, and arrays that live on the device between
//! kernels.
//!
//! - [`Pool`] hands out device memory and takes it back when a [`DeviceMemory`] is dropped,
//!   keeping it for the next request that fits it (a free list, in place of an allocation and
//!   a free around every launch): the smallest kept piece of at least the request's size
//!   class and at most [`REUSE_UP_TO`] times it, so that the smaller requests of a last part
//!   of rows (`crate::ireval::parts`) take the pieces of the parts before it. Its memory goes
//!   back to the device when the pool is dropped, or when an allocation fails and the pool
//!   gives back what it keeps.
//! - [`Resident`] is a [`Mirror`] ([`crate::buffer`]): the device copy of an array's
//!   elements. A kernel's results stay on the device as remote buffers with a `Resident`
//!   mirror (the host reads them only when it needs their values); an input array is uploaded
//!   once, on the first launch that reads it, and the copy attached to its buffer, so every
//!   later launch reading the same elements finds them there.
//!
//! - Host steps that only make or move data (`replicate`, `iota`, `copy`, `rearrange`) make
//!   remote arrays too (`steps.rs`).
//!
//! Invariants: a `Resident`'s memory is never written after it is attached (kernels write only
//! their fresh results, and histogram destinations, which are uploaded to memory of their own);
//! its contents are exactly the host buffer's elements, from the first to the last (a view of
//! the buffer is the mirror's address plus the view's offset).

use super::{Device, Res};
use crate::buffer::Mirror;
use crate::ireval::eval::Array;
use crate::ireval::eval::{Mark, Side};
use crate::kernel_io::prim_data;
use crate::value::ArrayData;
use ogham_ir::types::PrimType;
use std::any::Any;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Sizes are rounded up to a multiple of this for reuse (and the alignment every kernel
/// argument needs).
const GRANULE: usize = 256;

/// A kept piece serves a request of up to this many times smaller (best fit): more would keep
/// large pieces busy with small arrays. The last part of rows may be a fraction of a round
/// (`crate::ireval::parts`), its arrays an eighth of the largest part's.
const REUSE_UP_TO: usize = 8;

/// The size class of a request of `bytes` bytes.
fn size_class(bytes: usize) -> usize {
    bytes.max(1).div_ceil(GRANULE) * GRANULE
}

/// Device memory kept for reuse, by size class.
pub(super) struct Pool {
    dev: Arc<dyn Device>,
    free: Mutex<BTreeMap<usize, Vec<u64>>>,
}

impl Pool {
    pub fn new(dev: Arc<dyn Device>) -> Arc<Pool> {
        Arc::new(Pool {
            dev,
            free: Mutex::new(BTreeMap::new()),
        })
    }

    pub fn device(&self) -> &Arc<dyn Device> {
        &self.dev
    }

    /// At least `bytes` bytes of device memory: the smallest kept piece that fits (of at most
    /// [`REUSE_UP_TO`] times the size), or a new allocation (after giving back every kept
    /// piece, when the device has no more memory).
    pub fn alloc(self: &Arc<Pool>, bytes: usize) -> Res<DeviceMemory> {
        let class = size_class(bytes);
        let kept = {
            let mut free = self.lock();
            let fitting = free
                .range(class..=class.saturating_mul(REUSE_UP_TO))
                .next()
                .map(|(&kept, _)| kept);
            fitting.and_then(|kept| {
                let ptrs = free.get_mut(&kept)?;
                let ptr = ptrs.pop()?;
                if ptrs.is_empty() {
                    free.remove(&kept);
                }
                Some((ptr, kept))
            })
        };
        match kept {
            Some((ptr, kept)) => Ok(self.piece(ptr, kept)),
            None => Ok(self.piece(self.allocate(class)?, class)),
        }
    }

    /// At least `bytes` bytes of device memory newly allocated, never a kept piece: memory for
    /// the side queue, which must not take a piece that a launch still queued on the main
    /// queue may read (pieces go back to the pool when the host drops them, not when the
    /// launches reading them have run).
    pub fn alloc_fresh(self: &Arc<Pool>, bytes: usize) -> Res<DeviceMemory> {
        let class = size_class(bytes);
        let ptr = self.allocate(class)?;
        Ok(self.piece(ptr, class))
    }

    /// A new allocation of `class` bytes, after giving back every kept piece when the device
    /// has no more memory.
    fn allocate(&self, class: usize) -> Res<u64> {
        match self.dev.alloc(class) {
            Ok(ptr) => Ok(ptr),
            Err(_) if self.release() => self.dev.alloc(class),
            Err(e) => Err(e),
        }
    }

    fn piece(self: &Arc<Pool>, ptr: u64, class: usize) -> DeviceMemory {
        DeviceMemory {
            ptr,
            class,
            pool: Arc::clone(self),
        }
    }

    /// A device copy of the `bytes` bytes at host address `ptr`.
    pub fn upload(self: &Arc<Pool>, ptr: u64, bytes: usize) -> Res<DeviceMemory> {
        let memory = self.alloc(bytes)?;
        if bytes > 0 {
            // SAFETY: `ptr` points to `bytes` readable bytes (a live host array).
            let host = unsafe { std::slice::from_raw_parts(ptr as *const u8, bytes) };
            self.dev.upload(memory.ptr, host)?;
        }
        Ok(memory)
    }

    /// The bytes of the pieces kept for reuse (free for the next allocations, though the
    /// device counts them as used).
    pub fn kept_bytes(&self) -> usize {
        self.lock()
            .iter()
            .map(|(class, ptrs)| class * ptrs.len())
            .sum()
    }

    /// Frees every kept piece; whether there was any.
    fn release(&self) -> bool {
        let kept: Vec<u64> = std::mem::take(&mut *self.lock())
            .into_values()
            .flatten()
            .collect();
        for &ptr in &kept {
            self.dev.free(ptr);
        }
        !kept.is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<usize, Vec<u64>>> {
        self.free.lock().expect("no panics while locked")
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.release();
    }
}

/// A piece of device memory from a [`Pool`], given back to it when dropped.
pub(super) struct DeviceMemory {
    pub ptr: u64,
    class: usize,
    pool: Arc<Pool>,
}

impl DeviceMemory {
    /// Copies the first `bytes` bytes to host address `ptr`.
    pub fn download(&self, ptr: u64, bytes: usize) -> Res<()> {
        if bytes > 0 {
            // SAFETY: `ptr` points to `bytes` writable bytes that nothing else uses now.
            let host = unsafe { std::slice::from_raw_parts_mut(ptr as *mut u8, bytes) };
            self.pool.dev.download(host, self.ptr)?;
        }
        Ok(())
    }
}

impl Drop for DeviceMemory {
    fn drop(&mut self) {
        self.pool
            .lock()
            .entry(self.class)
            .or_default()
            .push(self.ptr);
    }
}

/// The device copy of an array's elements (see the module header).
pub(super) struct Resident {
    memory: DeviceMemory,
}

impl Mirror for Resident {
    fn fetch(&self, dst: &mut [u8]) -> Result<(), String> {
        let dev = &self.memory.pool.dev;
        // The host may read on another thread than the one that launched.
        dev.bind()
            .and_then(|()| dev.download(dst, self.memory.ptr))
            .map_err(|e| e.message.clone())
    }
}

/// The device address of `data`'s first element on `pool`'s device: its resident copy, or a
/// copy uploaded now and attached to it (read by every later launch). `None`: the elements
/// could not be mirrored (they are mirrored on another device).
fn resident(pool: &Arc<Pool>, data: &ArrayData) -> Res<Option<u64>> {
    if let Some(mirror) = data.mirror() {
        let any: &dyn Any = &**mirror;
        return Ok(any
            .downcast_ref::<Resident>()
            .filter(|r| Arc::ptr_eq(&r.memory.pool, pool))
            .map(|r| r.memory.ptr));
    }
    let bytes = data.len() * data.prim_type_size();
    let memory = pool.upload(data.as_ptr() as u64, bytes)?;
    let ptr = memory.ptr;
    Ok(data.attach(Arc::new(Resident { memory })).then_some(ptr))
}

/// The side queue of an entry point run in parts of rows (`crate::ireval::parts`): uploads
/// into fresh memory ([`Pool::alloc_fresh`]) attached as the buffer's mirror, downloads of
/// remote buffers straight from their device memory, both on the device's side queue.
pub(super) struct SideCopies {
    pub pool: Arc<Pool>,
}

impl Side for SideCopies {
    fn bind(&self) -> Res<()> {
        self.pool.dev.bind()
    }

    fn upload(&self, data: &ArrayData) -> Res<Mark> {
        if data.mirror().is_some() {
            return Ok(Mark::default());
        }
        let bytes = data.len() * data.prim_type_size();
        let memory = self.pool.alloc_fresh(bytes)?;
        // SAFETY: the buffer's `bytes` initialised bytes, on the host (it has no mirror, so it
        // is not remote).
        let host = unsafe { std::slice::from_raw_parts(data.as_ptr(), bytes) };
        let mark = self.pool.dev.side_upload(memory.ptr, host)?;
        data.attach(Arc::new(Resident { memory }));
        Ok(mark)
    }

    fn download(&self, data: &ArrayData, dst: &mut [u8], after: Mark) -> Res<()> {
        let on_this_device = data.mirror().and_then(|mirror| {
            let any: &dyn Any = &**mirror;
            any.downcast_ref::<Resident>()
                .filter(|r| Arc::ptr_eq(&r.memory.pool, &self.pool))
                .map(|r| r.memory.ptr)
        });
        match on_this_device {
            Some(ptr) if data.is_remote() => self.pool.dev.side_download(dst, ptr, after),
            _ => data
                .read_into(dst)
                .map_err(|e| super::machine_error(crate::error::R_CUDA, e)),
        }
    }
}

/// The device address of the first element of `view` (an array of scalars): in its buffer's
/// resident copy ([`resident`]), or, when the buffer cannot be mirrored, in a copy of the view
/// alone pushed on `single_use` (which the caller keeps as long as the address is used).
pub(super) fn device_address(
    pool: &Arc<Pool>,
    view: &Array,
    single_use: &mut Vec<DeviceMemory>,
) -> Res<u64> {
    let data = prim_data(view)?;
    let size = data.prim_type_size();
    let offset = (view.range().start * size) as u64;
    if let Some(base) = resident(pool, data)? {
        return Ok(base + offset);
    }
    let copy = pool.upload(data.as_ptr() as u64 + offset, view.elem_count() * size)?;
    let ptr = copy.ptr;
    single_use.push(copy);
    Ok(ptr)
}

/// `len` elements of type `elem` that `memory` holds, as a remote array.
pub(super) fn remote(elem: PrimType, len: usize, memory: DeviceMemory) -> ArrayData {
    ArrayData::remote(elem, len, Arc::new(Resident { memory }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::emulator::Emulator;

    #[test]
    fn a_kept_piece_serves_requests_down_to_an_eighth_of_its_size() {
        let Ok(emulator) = Emulator::new() else {
            return; // no g++: the emulator, hence its memory, is unavailable
        };
        let pool = Pool::new(Arc::new(emulator));
        let (large, small) = (pool.alloc(9000).unwrap(), pool.alloc(1000).unwrap());
        let (large_ptr, small_ptr) = (large.ptr, small.ptr);
        drop((large, small));
        // The smallest piece that fits: 1000 bytes for 900, 9000 for 1200.
        let a = pool.alloc(900).unwrap();
        assert_eq!(a.ptr, small_ptr);
        let b = pool.alloc(1200).unwrap();
        assert_eq!(b.ptr, large_ptr);
        drop((a, b));
        // 9000 bytes are more than 8 times 900 (in classes of 256 bytes): a new piece.
        let c = pool.alloc(900).unwrap();
        assert_eq!(c.ptr, small_ptr);
        let d = pool.alloc(900).unwrap();
        assert!(d.ptr != large_ptr && d.ptr != small_ptr);
        assert_eq!(pool.kept_bytes(), size_class(9000));
    }
}
