//! The CUDA executor (`--backend cuda`): the host program of a kernel-IR program runs in the IR
//! evaluator; the kernels the CUDA backend generated (`ogham_compiler::back::cuda`) for the entry
//! point being run are compiled with NVRTC for the device's architecture, as one translation
//! unit per entry point (CUBINs cached on disk, keyed by the source, the compiler options, the
//! architecture and the NVRTC version) and launched through the CUDA driver (cudarc). Kernels the backend could not generate are evaluated on the host.
//!
//! Memory: a launch uploads its operands, allocates its results on the device, and copies the
//! results back after it (histogram destinations are updated in place on the device and copied
//! back into the host array). Values do not stay resident on the device between kernels yet:
//! that is the first thing to change for speed (see `docs/cuda.md`).
//!
//! Launch plans (see `kernel.rs` of the backend for the conventions): thread-level kernels run
//! 256 threads per block over their work items; reductions and scans with few segments cut each
//! segment into chunks (a two-pass plan with a combine kernel); block-level kernels run one block
//! of 256 threads per point. Kernels that allocate get a per-thread arena (64 KiB per thread at
//! first; a kernel that runs out is launched again with 8× more per thread and fewer threads,
//! twice, before out-of-memory is reported — histograms, which update their destinations in
//! place, are not relaunched).
//!
//! Without a driver, a GPU or NVRTC, [`unavailable`] says why and [`run`] fails with `R0711`
//! before touching the driver (cudarc panics when its libraries are missing).

mod driver;
pub mod emulator;
pub mod model;
pub mod nvrtc;
mod profile;

use crate::error::{R_CUDA, R_CUDA_UNAVAILABLE, Res};
use crate::ireval::eval::{Evaluator, Launcher, Val};
use crate::ireval::{self, Thresholds};
use crate::kernel_io::{Io, KernelFailure, Operand, failure_diagnostic, kernel_index};
use crate::value::Value;
use cudarc::driver::{CudaContext, sys};
use ogham_compiler::back::cuda::{self as back, Counting, CudaKernel, GeneratedSeg};
use ogham_ir::VarId;
use ogham_ir::abi::{ArgSlots, ArgValue, Failure, MAX_DETAILS};
use ogham_ir::diag::Diagnostic;
use ogham_ir::kir::Program;
use ogham_ir::kir::{SegKind, SegLevel, SegOp};
use std::collections::HashMap;
use std::sync::Arc;

/// Arena bytes per thread at the first launch of a kernel that allocates.
const ARENA_PER_THREAD: i64 = 64 << 10;

/// What the executor needs of a device: memory, copies, modules and synchronous launches. The
/// GPU ([`driver::Driver`]) and the host emulator ([`emulator::Emulator`]) implement it.
/// Addresses and kernel handles are 64-bit values.
trait Device: Send + Sync {
    /// `cuda` or `cuda-emu`, for profiles.
    fn name(&self) -> &'static str;
    /// Makes the device current on the calling thread.
    fn bind(&self) -> Res<()>;
    /// Threads per block of every launch.
    fn block_size(&self) -> i64;
    fn multiprocessors(&self) -> i64;
    /// Compiles and loads a translation unit; the handles of the kernels `names`.
    fn load(&mut self, source: &str, names: &[String]) -> Res<HashMap<String, u64>>;
    fn alloc(&self, bytes: usize) -> Res<u64>;
    fn free(&self, ptr: u64);
    fn upload(&self, dst: u64, src: &[u8]) -> Res<()>;
    fn download(&self, dst: &mut [u8], src: u64) -> Res<()>;
    fn zero(&self, ptr: u64, bytes: usize) -> Res<()>;
    fn free_memory(&self) -> Res<usize>;
    /// Launches `grid` blocks with `shared` bytes of dynamic shared memory and waits; the
    /// seconds the launch ran, as the device measures them (CUDA events on a GPU, the call on
    /// the emulator, the modelled time on the model).
    fn launch(&self, function: u64, grid: u32, shared: u32, params: &mut [u64]) -> Res<f64>;
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

/// Why the CUDA backend cannot run on this machine, or `None` when it can.
pub fn unavailable() -> Option<String> {
    // SAFETY: only tries to open the library.
    if !unsafe { sys::is_culib_present() } {
        return Some(
            "no CUDA driver library (libcuda.so) was found: `--backend cuda` needs an NVIDIA GPU \
             and its driver (use `--backend cpu` on this machine)"
                .to_string(),
        );
    }
    if !nvrtc::available() {
        return Some(
            "the NVRTC library (libnvrtc.so.12) was not found: install the CUDA toolkit or \
             `pip install nvidia-cuda-nvrtc-cu12` and add its `lib` folder to LD_LIBRARY_PATH"
                .to_string(),
        );
    }
    match CudaContext::device_count() {
        Ok(n) if n > 0 => None,
        Ok(_) => Some("the CUDA driver reports no GPU".to_string()),
        Err(e) => Some(format!("the CUDA driver cannot be initialised: {e:?}")),
    }
}

/// An error of the machine rather than of the program (no source location).
fn machine_error(code: &'static str, message: String) -> Box<Diagnostic> {
    Box::new(Diagnostic::error(code, message))
}

fn driver_error(what: &str, e: impl std::fmt::Debug) -> Box<Diagnostic> {
    machine_error(R_CUDA, format!("CUDA: {what}: {e:?}"))
}

/// Runs entry point `entry` of kernel-IR `program` on the first GPU.
pub fn run(
    program: &Program,
    entry: &str,
    args: Vec<Value>,
    thresholds: &Thresholds,
) -> Res<Vec<Value>> {
    if let Some(why) = unavailable() {
        return Err(machine_error(R_CUDA_UNAVAILABLE, why));
    }
    run_on(program, entry, args, thresholds, || {
        driver::Driver::open().map(|d| Box::new(d) as Box<dyn Device>)
    })
}

/// Runs entry point `entry` of kernel-IR `program` in the CUDA emulator (`--backend cuda-emu`).
pub fn run_emulated(
    program: &Program,
    entry: &str,
    args: Vec<Value>,
    thresholds: &Thresholds,
) -> Res<Vec<Value>> {
    run_on(program, entry, args, thresholds, || {
        emulator::Emulator::new().map(|d| Box::new(d) as Box<dyn Device>)
    })
}

/// Runs entry point `entry` of kernel-IR `program` in the GPU performance model
/// (`--backend cuda-model`) on the GPU `OGHAM_GPU_MODEL` names, sampling as
/// `OGHAM_MODEL_WARPS` says; with `OGHAM_PROFILE`, prints the modelled total last.
pub fn run_modeled(
    program: &Program,
    entry: &str,
    args: Vec<Value>,
    thresholds: &Thresholds,
) -> Res<Vec<Value>> {
    let settings =
        model::gpus::from_env().and_then(|gpu| Ok((gpu, model::sampled_warps_from_env()?)));
    let (gpu, sampled) = settings.map_err(|e| machine_error(R_CUDA_UNAVAILABLE, e))?;
    let (outputs, report) = run_model(program, entry, args, thresholds, gpu, sampled)?;
    if std::env::var_os("OGHAM_PROFILE").is_some() {
        if let Some(why) = &report.assumed_registers {
            eprintln!("ogham-profile: {why}");
        }
        eprintln!("ogham-profile: {}", model::total_line(&report));
    }
    Ok(outputs)
}

/// Runs entry point `entry` in the performance model of `gpu`, sampling `sampled` warps per
/// launch (every warp: `None`); the outputs and the model's report.
pub fn run_model(
    program: &Program,
    entry: &str,
    args: Vec<Value>,
    thresholds: &Thresholds,
    gpu: &'static model::gpus::Gpu,
    sampled: Option<i64>,
) -> Res<(Vec<Value>, model::Report)> {
    let report = Arc::new(std::sync::Mutex::new(model::Report::default()));
    let shared = Arc::clone(&report);
    let outputs = run_on(program, entry, args, thresholds, move || {
        model::Model::new(gpu, sampled, shared).map(|d| Box::new(d) as Box<dyn Device>)
    })?;
    let report = report.lock().expect("no panics while locked").clone();
    Ok((outputs, report))
}

fn run_on(
    program: &Program,
    entry: &str,
    args: Vec<Value>,
    thresholds: &Thresholds,
    open: impl FnOnce() -> Res<Box<dyn Device>> + Send,
) -> Res<Vec<Value>> {
    let function = program.functions.iter().position(|f| f.name == entry);
    ireval::run_with(program, entry, args, thresholds, move || {
        let mut dev = profile::Timed::new(open()?);
        let times = dev.times();
        let generated = back::generate_with(program, dev.counting());
        // Only this entry point's kernels: NVRTC's time grows with the unit (docs/cuda.md).
        let source = match function {
            Some(f) => generated.source_of(f),
            None => generated.source(),
        };
        let segs: Vec<GeneratedSeg> = generated
            .segs
            .into_iter()
            .filter(|s| Some(s.function) == function)
            .collect();
        let names: Vec<String> = segs
            .iter()
            .filter_map(|s| s.kernel.as_ref().ok())
            .flat_map(|k| std::iter::once(k.name.clone()).chain(k.combine.clone()))
            .collect();
        let functions = dev.load(&source, &names)?;
        let by_seg = kernel_index(segs.iter().map(|s| s.stmt));
        Ok(Some(Box::new(CudaLauncher {
            dev: Arc::new(dev),
            times,
            profile: std::env::var_os("OGHAM_PROFILE").is_some(),
            segs,
            functions,
            by_seg,
        }) as Box<dyn Launcher>))
    })
}

struct CudaLauncher<'p> {
    dev: Arc<dyn Device>,
    /// Where the current kernel's time went (`OGHAM_PROFILE`).
    times: Arc<std::sync::Mutex<profile::Breakdown>>,
    profile: bool,
    segs: Vec<GeneratedSeg<'p>>,
    functions: HashMap<String, u64>,
    by_seg: HashMap<*const SegOp, usize>,
}

/// A device allocation, freed when dropped.
struct Buffer {
    ptr: u64,
    dev: Arc<dyn Device>,
}

impl Buffer {
    fn alloc(dev: &Arc<dyn Device>, bytes: usize) -> Res<Buffer> {
        Ok(Buffer {
            ptr: dev.alloc(bytes)?,
            dev: Arc::clone(dev),
        })
    }

    /// A device copy of `bytes` bytes at host address `ptr`.
    fn upload(dev: &Arc<dyn Device>, ptr: u64, bytes: usize) -> Res<Buffer> {
        let buf = Buffer::alloc(dev, bytes)?;
        if bytes > 0 {
            // SAFETY: `ptr` points to `bytes` readable bytes (a live host array).
            let host = unsafe { std::slice::from_raw_parts(ptr as *const u8, bytes) };
            dev.upload(buf.ptr, host)?;
        }
        Ok(buf)
    }

    /// Copies the buffer's first `bytes` bytes to host address `ptr`.
    fn download(&self, ptr: u64, bytes: usize) -> Res<()> {
        if bytes > 0 {
            // SAFETY: `ptr` points to `bytes` writable bytes that nothing else uses now.
            let host = unsafe { std::slice::from_raw_parts_mut(ptr as *mut u8, bytes) };
            self.dev.download(host, self.ptr)?;
        }
        Ok(())
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        self.dev.free(self.ptr);
    }
}

/// The failure record of generated code (`OgCtx`): the failed site plus one, the details, the
/// failing point and the record's lock (zeroed before each launch).
const CTX_BYTES: usize = 8 + 8 * MAX_DETAILS + 8 + 8;

impl Launcher for CudaLauncher<'_> {
    fn launch(&self, ev: &mut Evaluator, seg: &SegOp, pat: &[VarId]) -> Option<Res<Vec<Val>>> {
        let &i = self.by_seg.get(&(seg as *const SegOp))?;
        let kernel = self.segs[i].kernel.as_ref().ok()?;
        let start = std::time::Instant::now();
        *self.times.lock().expect("no panics while locked") = profile::Breakdown::default();
        let result = self
            .dev
            .bind()
            .and_then(|()| self.launch_kernel(ev, seg, pat, kernel));
        let level = match kernel.level {
            SegLevel::Thread => "thread",
            SegLevel::Block => "block",
        };
        if !self.dev.finish_kernel(&kernel.name, level) && self.profile {
            let times = self.times.lock().expect("no panics while locked");
            eprintln!(
                "ogham-profile: {}",
                times.line(&kernel.name, self.dev.name(), start.elapsed().as_secs_f64())
            );
        }
        Some(result)
    }
}

/// The values of one launch's parameters (see the backend's `kernel.rs`).
struct Launch {
    function: u64,
    grid: i64,
    shared: u32,
    params: Vec<u64>,
}

impl CudaLauncher<'_> {
    fn launch_kernel(
        &self,
        ev: &mut Evaluator,
        seg: &SegOp,
        pat: &[VarId],
        kernel: &CudaKernel,
    ) -> Res<Vec<Val>> {
        let mut io = Io::prepare(ev, seg, pat, &kernel.inputs)?;
        let mut inputs = Vec::new();
        let mut keep = Vec::new();
        let mut dests = Vec::new();
        for operand in &io.operands {
            match operand {
                Operand::Scalar(_) => inputs.push(operand.arg()),
                Operand::Array {
                    ptr,
                    bytes,
                    shape,
                    dest,
                } => {
                    // The array's device copy.
                    let buf = Buffer::upload(&self.dev, *ptr, *bytes)?;
                    inputs.push(ArgValue::Array {
                        ptr: buf.ptr,
                        extents: shape,
                    });
                    if *dest {
                        dests.push((keep.len(), *ptr, *bytes));
                    }
                    keep.push(buf);
                }
            }
        }
        let mut outputs = Vec::new();
        let mut output_slots = Vec::new();
        for (j, (_, data)) in io.outputs.iter().enumerate() {
            let bytes = data.len() * data.prim_type_size();
            let buf = Buffer::alloc(&self.dev, bytes)?;
            output_slots.push((buf.ptr, io.rows[j]));
            outputs.push((buf, bytes));
        }
        let slots = ArgSlots::fill(&inputs, &output_slots);
        let args = Buffer::upload(&self.dev, slots.as_ptr() as u64, 8 * slots.len())?;
        if io.runs() {
            self.execute(ev, seg, kernel, &args, io.segments, io.inner)?;
        }
        for ((buf, bytes), (_, data)) in outputs.iter().zip(io.outputs.iter_mut()) {
            buf.download(data.as_mut_ptr() as u64, *bytes)?;
        }
        for (k, ptr, bytes) in dests {
            keep[k].download(ptr, bytes)?;
        }
        Ok(io.finish())
    }

    fn execute(
        &self,
        ev: &mut Evaluator,
        seg: &SegOp,
        kernel: &CudaKernel,
        args: &Buffer,
        segments: i64,
        inner: i64,
    ) -> Res<()> {
        let (block, sms) = (self.dev.block_size(), self.dev.multiprocessors());
        let ctx_record = Buffer::alloc(&self.dev, CTX_BYTES)?;
        let function = self.functions[&kernel.name];
        // The parameters every kernel but a combine kernel starts with.
        let leading = |arena: u64, stride: i64, n_items: i64| {
            vec![
                ctx_record.ptr,
                args.ptr,
                arena,
                stride as u64,
                n_items as u64,
            ]
        };
        if kernel.level == SegLevel::Block {
            let n_items = segments * inner;
            let shared = (8 * block as usize * kernel.shared_slots) as u32;
            let blocks = n_items.clamp(1, sms * 16);
            return self.run_with_arena(
                ev,
                kernel,
                &ctx_record,
                true,
                blocks * (block + 1),
                &mut |arena, stride, threads| Launch {
                    function,
                    grid: (threads / (block + 1)).clamp(1, blocks),
                    shared,
                    params: leading(arena, stride, n_items),
                },
            );
        }
        let width = kernel.accumulators as i64;
        let chunks = match &seg.kind {
            SegKind::Map => inner.max(1),
            SegKind::Hist(_) => 1,
            SegKind::Red(_) | SegKind::Scan(_) => {
                let target = sms * 2048;
                if segments >= target / 4 {
                    1
                } else {
                    (target / segments.max(1)).clamp(1, inner.max(1))
                }
            }
        };
        let n_items = segments * chunks;
        // Histograms update their destinations in place: never launched twice.
        let relaunchable = !matches!(seg.kind, SegKind::Hist(_));
        let wanted = n_items.clamp(1, sms * 32 * block);
        let pass = |ev: &mut Evaluator, partial: u64, carry: u64| {
            self.run_with_arena(
                ev,
                kernel,
                &ctx_record,
                relaunchable,
                wanted,
                &mut |arena, stride, threads| Launch {
                    function,
                    grid: ((threads + block - 1) / block).max(1),
                    shared: 0,
                    params: [
                        leading(arena, stride, n_items),
                        vec![chunks as u64, partial, carry],
                    ]
                    .concat(),
                },
            )
        };
        if chunks == 1 || width == 0 {
            return pass(ev, 0, 0);
        }
        let partial = Buffer::alloc(&self.dev, 8 * (n_items * width) as usize)?;
        pass(ev, partial.ptr, 0)?;
        let combine = Launch {
            function: self.functions[kernel.combine.as_ref().expect("reductions combine")],
            grid: ((segments + block - 1) / block).max(1),
            shared: 0,
            params: vec![
                ctx_record.ptr,
                args.ptr,
                segments as u64,
                chunks as u64,
                partial.ptr,
            ],
        };
        self.run_launch(ev, kernel, &ctx_record, combine)?;
        if let SegKind::Scan(_) = seg.kind {
            // Second pass: every chunk from its carry-in.
            pass(ev, 0, partial.ptr)?;
        }
        Ok(())
    }

    /// Runs the launches `make(arena, stride, threads)` gives, with an arena of `stride` bytes
    /// for each of `threads` threads when the kernel allocates; after an out-of-memory failure
    /// a relaunchable kernel is launched again with 8 times more per thread (twice at most).
    fn run_with_arena(
        &self,
        ev: &mut Evaluator,
        kernel: &CudaKernel,
        ctx_record: &Buffer,
        relaunchable: bool,
        wanted: i64,
        make: &mut dyn FnMut(u64, i64, i64) -> Launch,
    ) -> Res<()> {
        if !kernel.allocates {
            return self.run_launch(ev, kernel, ctx_record, make(0, 0, wanted));
        }
        let budget = (self.dev.free_memory()? / 2) as i64;
        let mut stride = ARENA_PER_THREAD;
        for attempt in 0..3 {
            let threads = wanted.min(budget / stride).max(1);
            let arena = Buffer::alloc(&self.dev, (threads * stride) as usize)?;
            match self.try_launch(ctx_record, make(arena.ptr, stride, threads))? {
                None => return Ok(()),
                Some(f) => {
                    let oom = usize::try_from(f.site)
                        .ok()
                        .and_then(|s| kernel.sites.get(s))
                        .is_some_and(|s| s.failure == Failure::OutOfMemory);
                    if !(oom && relaunchable && attempt < 2) {
                        return Err(failure_diagnostic(
                            ev,
                            &kernel.name,
                            &kernel.sites,
                            f.site,
                            &f.details,
                        ));
                    }
                    stride *= 8;
                }
            }
        }
        unreachable!("the last attempt returns")
    }

    /// One launch; a failed check becomes the interpreter's error.
    fn run_launch(
        &self,
        ev: &mut Evaluator,
        kernel: &CudaKernel,
        ctx_record: &Buffer,
        launch: Launch,
    ) -> Res<()> {
        match self.try_launch(ctx_record, launch)? {
            None => Ok(()),
            Some(f) => Err(failure_diagnostic(
                ev,
                &kernel.name,
                &kernel.sites,
                f.site,
                &f.details,
            )),
        }
    }

    /// Launches, waits, and reads the failure record.
    fn try_launch(&self, ctx_record: &Buffer, launch: Launch) -> Res<Option<KernelFailure>> {
        let mut params = launch.params;
        self.dev.zero(ctx_record.ptr, CTX_BYTES)?;
        self.dev.launch(
            launch.function,
            launch.grid as u32,
            launch.shared,
            &mut params,
        )?;
        let mut record = [0u8; CTX_BYTES];
        self.dev.download(&mut record, ctx_record.ptr)?;
        let word =
            |k: usize| u64::from_le_bytes(record[8 * k..8 * k + 8].try_into().expect("8 bytes"));
        if word(0) == 0 {
            return Ok(None);
        }
        let mut details = [0i64; MAX_DETAILS];
        for (k, d) in details.iter_mut().enumerate() {
            *d = word(k + 1) as i64;
        }
        Ok(Some(KernelFailure {
            site: word(0) as i64 - 1,
            details,
        }))
    }
}
