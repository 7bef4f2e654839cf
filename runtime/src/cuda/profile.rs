//! Where a kernel's time goes, for `OGHAM_PROFILE`: [`Timed`] wraps the executor's device and
//! sorts the time of every call into the kernels' own time (as the device measures a launch:
//! CUDA events around it on a GPU, the call itself on the emulator), copies between host and
//! device (with their bytes) and allocations (with their frees), as the host waits for them.
//! The executor prints one line per kernel (a statement of the kernel IR, which may launch
//! several times) and starts the next from zero.
//!
//! Invariant: `Timed` changes nothing a device does; it only times and counts.

use super::device::ThreadBlock;
use super::{Device, Mark, Res};
use ogham_ir::artifact::cuda::{Counting, CudaProgram};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The time of one kernel so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Breakdown {
    pub launches: u32,
    /// Seconds the device ran the kernel's launches.
    pub kernel: f64,
    pub copies: u32,
    pub copied_bytes: u64,
    pub copying: f64,
    /// Allocations and frees, and the seconds the host waited for them.
    pub allocations: u32,
    pub allocating: f64,
}

impl Breakdown {
    /// `OGHAM_PROFILE`'s line for kernel `name`, `total` seconds in all.
    pub fn line(&self, name: &str, device: &str, total: f64) -> String {
        format!(
            "kernel {name} ({device}) {:.3} ms: kernel alone {:.3} ms ({} launch(es)), copies \
             {:.3} ms ({}, {:.1} MB), allocations {:.3} ms ({} with frees)",
            total * 1e3,
            self.kernel * 1e3,
            self.launches,
            self.copying * 1e3,
            self.copies,
            self.copied_bytes as f64 / 1e6,
            self.allocating * 1e3,
            self.allocations
        )
    }
}

/// A device whose calls are timed into a shared [`Breakdown`].
pub struct Timed {
    inner: Box<dyn Device>,
    times: Arc<Mutex<Breakdown>>,
}

impl Timed {
    pub fn new(inner: Box<dyn Device>) -> Timed {
        Timed {
            inner,
            times: Arc::new(Mutex::new(Breakdown::default())),
        }
    }

    /// The breakdown every call adds to (the executor takes and resets it per kernel).
    pub fn times(&self) -> Arc<Mutex<Breakdown>> {
        Arc::clone(&self.times)
    }

    fn add(&self, f: impl FnOnce(&mut Breakdown)) {
        f(&mut self.times.lock().expect("no panics while locked"));
    }

    fn on_device(&self, call: impl FnOnce() -> Res<()>) -> Res<()> {
        let start = Instant::now();
        let out = call();
        let seconds = start.elapsed().as_secs_f64();
        self.add(|b| b.kernel += seconds);
        out
    }

    fn copy<T>(&self, bytes: usize, call: impl FnOnce() -> Res<T>) -> Res<T> {
        let start = Instant::now();
        let out = call();
        let seconds = start.elapsed().as_secs_f64();
        self.add(|b| {
            b.copies += 1;
            b.copied_bytes += bytes as u64;
            b.copying += seconds;
        });
        out
    }
}

impl Device for Timed {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn bind(&self) -> Res<()> {
        self.inner.bind()
    }

    fn block_size(&self) -> i64 {
        self.inner.block_size()
    }

    fn block_level_size(&self) -> i64 {
        self.inner.block_level_size()
    }

    fn thread_block(&self, function: u64) -> Res<ThreadBlock> {
        self.inner.thread_block(function)
    }

    fn multiprocessors(&self) -> i64 {
        self.inner.multiprocessors()
    }

    fn load(&mut self, program: &CudaProgram) -> Res<()> {
        self.inner.load(program)
    }

    fn function(&self, name: &str) -> Res<u64> {
        self.inner.function(name)
    }

    fn alloc(&self, bytes: usize) -> Res<u64> {
        let start = Instant::now();
        let out = self.inner.alloc(bytes);
        let seconds = start.elapsed().as_secs_f64();
        self.add(|b| {
            b.allocations += 1;
            b.allocating += seconds;
        });
        out
    }

    fn free(&self, ptr: u64) {
        let start = Instant::now();
        self.inner.free(ptr);
        let seconds = start.elapsed().as_secs_f64();
        self.add(|b| b.allocating += seconds);
    }

    fn upload(&self, dst: u64, src: &[u8]) -> Res<()> {
        self.copy(src.len(), || self.inner.upload(dst, src))
    }

    fn download(&self, dst: &mut [u8], src: u64) -> Res<()> {
        let bytes = dst.len();
        self.copy(bytes, || self.inner.download(dst, src))
    }

    fn zero(&self, ptr: u64, bytes: usize) -> Res<()> {
        self.copy(bytes, || self.inner.zero(ptr, bytes))
    }

    /// Counted as the kernel's own time: work on the device.
    fn fill(&self, ptr: u64, pattern: &[u8], count: usize) -> Res<()> {
        self.on_device(|| self.inner.fill(ptr, pattern, count))
    }

    /// Counted as the kernel's own time: work on the device.
    fn copy(&self, dst: u64, src: u64, bytes: usize) -> Res<()> {
        self.on_device(|| self.inner.copy(dst, src, bytes))
    }

    fn free_memory(&self) -> Res<usize> {
        self.inner.free_memory()
    }

    fn launch(
        &self,
        function: u64,
        grid: u32,
        block: u32,
        shared: u32,
        params: &mut [u64],
        wait: bool,
    ) -> Res<f64> {
        let seconds = self
            .inner
            .launch(function, grid, block, shared, params, wait)?;
        self.add(|b| {
            b.launches += 1;
            b.kernel += seconds;
        });
        Ok(seconds)
    }

    fn side_upload(&self, dst: u64, src: &[u8]) -> Res<Mark> {
        self.inner.side_upload(dst, src)
    }

    fn side_download(&self, dst: &mut [u8], src: u64, after: Mark) -> Res<()> {
        self.inner.side_download(dst, src, after)
    }

    fn finish_part(&self) -> Res<Mark> {
        self.inner.finish_part()
    }

    fn wait_for(&self, mark: Mark) {
        self.inner.wait_for(mark)
    }

    fn counting(&self) -> Counting {
        self.inner.counting()
    }

    fn modelled(&self) -> bool {
        self.inner.modelled()
    }

    fn finish_kernel(&self, name: &str, level: &str) -> bool {
        self.inner.finish_kernel(name, level)
    }
}
