//! What the CUDA executor needs of a device ([`Device`]): the GPU through the driver
//! (`driver.rs`), the host emulator (`emulator.rs`) and the performance model (`model/`)
//! implement it, and `profile.rs` times any of them.

use super::Res;
use crate::ireval::eval::Mark;
use ogham_ir::artifact::cuda::{Counting, CudaProgram};

/// What the executor needs of a device: memory, copies, modules and synchronous launches. The
/// GPU ([`driver::Driver`]) and the host emulator ([`emulator::Emulator`]) implement it.
/// Addresses and kernel handles are 64-bit values.
pub(super) trait Device: Send + Sync {
    /// `cuda` or `cuda-emu`, for profiles.
    fn name(&self) -> &'static str;
    /// Makes the device current on the calling thread.
    fn bind(&self) -> Res<()>;
    /// Threads per block of combine kernels, and the most of a thread-level kernel's.
    fn block_size(&self) -> i64;
    /// The blocks of thread-level kernel `function`: [`fullest_block`] of
    /// [`Device::block_size`] at the kernel's resources where the device knows them (a GPU, the
    /// model), else blocks of [`Device::block_size`], one per SM (the lowest occupancy).
    fn thread_block(&self, _function: u64) -> Res<ThreadBlock> {
        Ok(ThreadBlock {
            threads: self.block_size(),
            per_sm: 1,
        })
    }
    /// The most threads per block of a block-level kernel, a multiple of 32 (a block-level
    /// kernel's block takes whole warps: its reductions and scans shuffle within them).
    fn block_level_size(&self) -> i64 {
        self.block_size()
    }
    fn multiprocessors(&self) -> i64;
    /// Takes the kernels of `program` (an entry point's, with the data kernels), to be compiled
    /// and loaded by [`Device::function`].
    fn load(&mut self, program: &CudaProgram) -> Res<()>;
    /// The handle of kernel `name` of the loaded program (the GPU compiles and loads its unit
    /// when it is first asked for, `units.rs`).
    fn function(&self, name: &str) -> Res<u64>;
    fn alloc(&self, bytes: usize) -> Res<u64>;
    fn free(&self, ptr: u64);
    fn upload(&self, dst: u64, src: &[u8]) -> Res<()>;
    fn download(&self, dst: &mut [u8], src: u64) -> Res<()>;
    fn zero(&self, ptr: u64, bytes: usize) -> Res<()>;
    /// Writes `count` copies of `pattern` (1, 2, 4 or 8 bytes) from `ptr`, on the device.
    fn fill(&self, ptr: u64, pattern: &[u8], count: usize) -> Res<()>;
    /// Copies `bytes` bytes from `src` to `dst`, both on the device and not overlapping.
    fn copy(&self, dst: u64, src: u64, bytes: usize) -> Res<()>;
    fn free_memory(&self) -> Res<usize>;
    /// Launches `grid` blocks of `block` threads with `shared` bytes of dynamic shared memory,
    /// in order after every copy and launch before it; when `wait`, waits for it and returns the seconds it
    /// ran, as the device measures them (CUDA events on a GPU, the call on the emulator, the
    /// modelled time on the model). A launch not waited for may return 0: its errors show at
    /// the next copy to the host.
    fn launch(
        &self,
        function: u64,
        grid: u32,
        block: u32,
        shared: u32,
        params: &mut [u64],
        wait: bool,
    ) -> Res<f64>;
    /// Copies `src` to `dst` on the *side queue*, beside the launches and copies of the main
    /// one (an entry point run in parts of rows: the next part's input goes up while a part's
    /// kernels run), and returns when it is done; `dst` is memory no launch in flight uses.
    /// The mark says when it is done on the device's clock ([`Device::wait_for`]).
    fn side_upload(&self, dst: u64, src: &[u8]) -> Res<Mark> {
        self.upload(dst, src).map(|()| Mark::default())
    }
    /// Copies `dst.len()` bytes at `src` into `dst` on the side queue, starting once the main
    /// queue has reached `after` (a [`Device::finish_part`] whose launches wrote `src`), and
    /// returns when it is done.
    fn side_download(&self, dst: &mut [u8], src: u64, _after: Mark) -> Res<()> {
        self.download(dst, src)
    }
    /// Waits until every launch and copy of the main queue has finished; the mark of that
    /// point.
    fn finish_part(&self) -> Res<Mark> {
        Ok(Mark::default())
    }
    /// The main queue goes on only after `mark` (of a side copy whose result it reads; on a
    /// GPU the side copy has finished already when its call returned).
    fn wait_for(&self, _mark: Mark) {}
    /// Whether the device's times are modelled, not measured (the performance model): a
    /// profile then waits for no launch.
    fn modelled(&self) -> bool {
        false
    }
    /// Whether the kernels count their float operations (the performance model's do).
    fn counting(&self) -> Counting {
        Counting::Plain
    }
    /// Kernel `name` (`level`: thread or block) has finished its launches; true when the
    /// device reported it itself (the model prints modelled times for `OGHAM_PROFILE`), false
    /// when the executor should print the measured time.
    fn finish_kernel(&self, _name: &str, _level: &str) -> bool {
        false
    }
}

/// A thread-level kernel's blocks: their threads, and how many an SM holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadBlock {
    pub threads: i64,
    pub per_sm: i64,
}

/// Of `most` threads per block and the powers of two from a warp below it, the block size at
/// which an SM holds the most warps, given the blocks it holds at each size
/// (`resident_blocks`); the largest of equals. A kernel whose registers let an SM hold 11 warps
/// holds only 8 in blocks of 256 threads (one block), but 10 in blocks of 64 (five).
pub(super) fn fullest_block<E>(
    most: i64,
    resident_blocks: impl Fn(i64) -> Result<i64, E>,
) -> Result<ThreadBlock, E> {
    let mut sizes: Vec<i64> = (0..).map(|k| 32 << k).take_while(|&s| s < most).collect();
    sizes.push(most);
    let mut best = ThreadBlock {
        threads: most,
        per_sm: 0,
    };
    for &size in sizes.iter().rev() {
        let blocks = resident_blocks(size)?;
        let warps = |b: &ThreadBlock| b.per_sm * ((b.threads + 31) / 32);
        let candidate = ThreadBlock {
            threads: size,
            per_sm: blocks,
        };
        if warps(&candidate) > warps(&best) {
            best = candidate;
        }
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::{ThreadBlock, fullest_block};
    use std::convert::Infallible;

    #[test]
    fn blocks_are_tried_from_the_most_threads_down_to_a_warp_in_powers_of_two() {
        let tried = std::cell::RefCell::new(Vec::new());
        let one_block_each = |size| {
            tried.borrow_mut().push(size);
            Ok::<_, Infallible>(1)
        };
        let block = |threads, per_sm| Ok(ThreadBlock { threads, per_sm });
        // One block per SM whatever its size: the largest holds the most warps.
        assert_eq!(fullest_block(96, one_block_each), block(96, 1));
        assert_eq!(*tried.borrow(), [96, 64, 32]);
        // An SM holding 2,048 threads in blocks of up to 32: equal warps, the largest wins.
        let threads = |size: i64| Ok::<_, Infallible>((2048 / size).min(32));
        assert_eq!(fullest_block(256, threads), block(256, 8));
        // Blocks limited by 11 warps' registers: 11 blocks of one warp beat one of eight.
        let registers = |size: i64| Ok::<_, Infallible>(11 / (size / 32));
        assert_eq!(fullest_block(256, registers), block(32, 11));
        // A device that cannot tell stops the choice.
        assert_eq!(fullest_block(256, |_| Err("no device")), Err("no device"));
    }
}
