//! The CUDA executor (`--backend cuda`): the host program of a kernel-IR program runs in the IR
//! evaluator; the kernels a code generator ([`CudaCodegen`]: the compiler's CUDA backend, wired
//! in by the root crate) makes of the entry point being run, when it runs, are compiled with
//! NVRTC for the device's architecture, one translation unit per kernel (`units.rs`: in parallel
//! and each by its first launch at the latest, so that kernel versions a run never takes are
//! not waited for; CUBINs cached on disk, keyed by the unit's source, the compiler options, the
//! architecture and the NVRTC version) and launched through the CUDA driver (cudarc). Kernels the backend could not generate are
//! evaluated on the host. A kernel statement finds its generated kernel by its name
//! ([`ogham_ir::abi::kernels`]).
//!
//! Memory (`resident.rs`, docs/cuda.md "Residency"): arrays stay on the device between
//! kernels. A kernel's results are left there as remote arrays, copied to the host only when
//! host code reads them (or when the run returns them); an array from the host is uploaded on
//! the first launch that reads it and its device copy kept for later launches. Device memory
//! comes from a pool that keeps freed pieces for reuse. The host program's `replicate`, `iota`,
//! `copy`, `rearrange` and `concat` make their results on the device (`steps.rs`). Histogram
//! destinations, updated in place, are uploaded and copied back around their launch. The host
//! waits for the launches where it reads what they made, and reads their failure record there
//! (`failures.rs`), except for a launch that may have to run again with a larger arena.
//!
//! Launch plans (see `kernel.rs` of the backend for the conventions): thread-level kernels run
//! 256 threads per block over their work items; reductions and scans with few segments cut each
//! segment into chunks (a two-pass plan with a combine kernel); block-level kernels run one block
//! per point, of 256 threads, or of the widest loop the block shares out rounded up to whole
//! warps when the kernel says that its widths are known at launch and its results do not depend
//! on the block's size (`CudaKernel::block_widths`). Kernels that allocate get a per-thread
//! arena (64 KiB per thread at first; a kernel that runs out is launched again with 8× more per thread and fewer threads,
//! up to 4 MiB per thread, before out-of-memory is reported — histograms, which update their
//! destinations in place, are not relaunched; a kernel's later launches in the same run start
//! from the size its last launch needed).
//!
//! Without a driver, a GPU or NVRTC, [`unavailable`] says why and [`run`] fails with `R0711`
//! before touching the driver (cudarc panics when its libraries are missing).

mod device;
mod driver;
mod failures;
pub use driver::start_context;
pub mod emulator;
pub mod model;
pub mod nvrtc;
mod profile;
mod registers;
mod resident;
mod rows;
mod staging;
mod steps;
mod units;

use crate::error::{R_CUDA, R_CUDA_UNAVAILABLE, Res};
use crate::ireval::eval::{Array, Evaluator, Launcher, Mark, Side, Val};
use crate::ireval::parts::{PartRows, WholeRows};
use crate::ireval::{self, Thresholds};
use crate::kernel_io::{Elems, Io, KernelFailure, Operand, kernel_index, prim_data};
use crate::value::Value;
use cudarc::driver::{CudaContext, sys};
use device::Device;
use failures::Failures;
use ogham_ir::abi::{ArgSlots, ArgValue, BLOCK_ARENA_SHARES, KernelSite};
use ogham_ir::artifact::cuda::{Counting, CudaKernel, CudaProgram, GeneratedSeg, Width};
use ogham_ir::diag::Diagnostic;
use ogham_ir::kir::Program;
use ogham_ir::kir::{SegKind, SegLevel, SegOp};
use ogham_ir::types::PrimType;
use ogham_ir::{SubExp, VarId};
use resident::Pool;
use std::collections::HashMap;
use std::sync::Arc;

/// Arena bytes per thread (per element-size class of interleaved per-point arrays) at the
/// first launch of a kernel that allocates.
const ARENA_PER_THREAD: i64 = 64 << 10;

/// The most arena bytes per thread a relaunch asks for: two relaunches with 8× more.
const MAX_ARENA_PER_THREAD: i64 = ARENA_PER_THREAD << 6;

/// What the executor needs of the CUDA code generator: the artefact of one entry point, made
/// when that entry point runs (the runtime does not depend on the compiler; the root crate
/// implements this with its CUDA backend).
pub trait CudaCodegen: Send + Sync {
    /// The kernels of entry point `function` (its index in `program.functions`), in the order
    /// of [`ogham_ir::abi::kernels`] and with its names, and the prelude of their translation
    /// unit.
    fn entry(&self, program: &Program, function: usize, counting: Counting) -> CudaProgram;
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

/// Kernel `name` is not in the loaded program (a bug of the executor or the code generator).
fn no_kernel(name: &str) -> Box<Diagnostic> {
    machine_error(
        R_CUDA,
        format!("CUDA: no kernel `{name}` in the loaded program"),
    )
}

/// The handle of kernel `name` among a loaded library's `functions`.
fn loaded_kernel(functions: &HashMap<String, u64>, name: &str) -> Res<u64> {
    functions.get(name).copied().ok_or_else(|| no_kernel(name))
}

fn driver_error(what: &str, e: impl std::fmt::Debug) -> Box<Diagnostic> {
    machine_error(R_CUDA, format!("CUDA: {what}: {e:?}"))
}

/// Runs entry point `entry` of kernel-IR `program` on the first GPU.
pub fn run(
    codegen: &dyn CudaCodegen,
    program: &Program,
    entry: &str,
    args: Vec<Value>,
    thresholds: &Thresholds,
) -> Res<Vec<Value>> {
    if let Some(why) = unavailable() {
        return Err(machine_error(R_CUDA_UNAVAILABLE, why));
    }
    let part_rows = rows::part_rows_from_env()?;
    let run = run_on(codegen, program, entry, args, thresholds, part_rows, || {
        driver::Driver::open().map(|d| Box::new(d) as Box<dyn Device>)
    });
    run.map(|(outputs, _)| outputs)
}

/// Runs entry point `entry` of kernel-IR `program` in the CUDA emulator (`--backend cuda-emu`).
pub fn run_emulated(
    codegen: &dyn CudaCodegen,
    program: &Program,
    entry: &str,
    args: Vec<Value>,
    thresholds: &Thresholds,
) -> Res<Vec<Value>> {
    let part_rows = rows::part_rows_from_env()?;
    run_emulated_in_parts(codegen, program, entry, args, thresholds, part_rows)
        .map(|(outputs, _)| outputs)
}

/// [`run_emulated`] in parts of rows as `part_rows` says when the entry point is separable
/// along its rows (`ogham_ir::rows`); the outputs and the number of parts it ran in (1:
/// whole).
pub fn run_emulated_in_parts(
    codegen: &dyn CudaCodegen,
    program: &Program,
    entry: &str,
    args: Vec<Value>,
    thresholds: &Thresholds,
    part_rows: PartRows,
) -> Res<(Vec<Value>, usize)> {
    run_on(codegen, program, entry, args, thresholds, part_rows, || {
        emulator::Emulator::new().map(|d| Box::new(d) as Box<dyn Device>)
    })
}

/// Runs entry point `entry` of kernel-IR `program` in the GPU performance model
/// (`--backend cuda-model`) on the GPU `OGHAM_GPU_MODEL` names, sampling as
/// `OGHAM_MODEL_WARPS` says; with `OGHAM_PROFILE`, prints the modelled total last.
pub fn run_modeled(
    codegen: &dyn CudaCodegen,
    program: &Program,
    entry: &str,
    args: Vec<Value>,
    thresholds: &Thresholds,
) -> Res<Vec<Value>> {
    let (outputs, report) = run_model_from_env(codegen, program, entry, args, thresholds)?;
    if std::env::var_os("OGHAM_PROFILE").is_some() {
        if let Some(why) = &report.assumed_registers {
            eprintln!("ogham-profile: {why}");
        }
        eprintln!("ogham-profile: {}", model::total_line(&report));
    }
    Ok(outputs)
}

/// [`run_model`] on the GPU `OGHAM_GPU_MODEL` names, sampling as `OGHAM_MODEL_WARPS` says
/// (`ogham autotune --backend cuda-model` compares the reports' totals).
pub fn run_model_from_env(
    codegen: &dyn CudaCodegen,
    program: &Program,
    entry: &str,
    args: Vec<Value>,
    thresholds: &Thresholds,
) -> Res<(Vec<Value>, model::Report)> {
    let settings =
        model::gpus::from_env().and_then(|gpu| Ok((gpu, model::sampled_warps_from_env()?)));
    let (gpu, sampled) = settings.map_err(|e| machine_error(R_CUDA_UNAVAILABLE, e))?;
    let part_rows = rows::part_rows_from_env()?;
    run_model(
        codegen,
        program,
        entry,
        args,
        thresholds,
        (gpu, sampled),
        part_rows,
    )
}

/// Runs entry point `entry` in the performance model of `gpu`, sampling `sampled` warps per
/// launch (every warp: `None`), in parts of rows as `part_rows` says when the entry point is
/// separable along its rows; the outputs and the model's report.
pub fn run_model(
    codegen: &dyn CudaCodegen,
    program: &Program,
    entry: &str,
    args: Vec<Value>,
    thresholds: &Thresholds,
    (gpu, sampled): (&'static model::gpus::Gpu, Option<i64>),
    part_rows: PartRows,
) -> Res<(Vec<Value>, model::Report)> {
    let report = Arc::new(std::sync::Mutex::new(model::Report::default()));
    let shared = Arc::clone(&report);
    let (outputs, _) = run_on(
        codegen,
        program,
        entry,
        args,
        thresholds,
        part_rows,
        move || model::Model::new(gpu, sampled, shared).map(|d| Box::new(d) as Box<dyn Device>),
    )?;
    let report = report.lock().expect("no panics while locked").clone();
    Ok((outputs, report))
}

fn run_on(
    codegen: &dyn CudaCodegen,
    program: &Program,
    entry: &str,
    args: Vec<Value>,
    thresholds: &Thresholds,
    part_rows: PartRows,
    open: impl FnOnce() -> Res<Box<dyn Device>> + Send,
) -> Res<(Vec<Value>, usize)> {
    let function = program.functions.iter().position(|f| f.name == entry);
    let profile = std::env::var_os("OGHAM_PROFILE").is_some();
    let parts =
        function.and_then(|k| rows::parts(&program.functions[k], &args, part_rows, profile));
    let whole_rows = parts.as_ref().map(|(_, whole)| *whole);
    let run = ireval::run_with_parts(program, entry, args, thresholds, parts, move || {
        // (The evaluator reports an unknown entry point before it asks for a launcher.)
        let Some(function) = function else {
            return Ok(None);
        };
        let mut dev = profile::Timed::new(open()?);
        let times = dev.times();
        // Only this entry point's kernels (docs/cuda.md, "The runtime").
        let generated = codegen.entry(program, function, dev.counting());
        let mut sites: Vec<KernelSite> = ogham_ir::abi::kernels(program);
        sites.retain(|k| k.function == function);
        if generated.segs.len() != sites.len()
            || generated
                .segs
                .iter()
                .zip(&sites)
                .any(|(g, k)| g.name != k.name)
        {
            return Err(machine_error(
                R_CUDA,
                format!("CUDA: the generated kernels are not those of entry point `{entry}`"),
            ));
        }
        dev.load(&generated)?;
        let by_seg = kernel_index(sites.iter().map(|k| k.stmt));
        let segs = generated.segs;
        let pool = Pool::new(Arc::new(dev));
        Ok(Some(Box::new(CudaLauncher {
            failures: Failures::new(&pool, whole_rows.is_some())?,
            pool,
            times,
            profile,
            segs,
            by_seg,
            arena_strides: std::sync::Mutex::new(HashMap::new()),
            whole_rows,
        }) as Box<dyn Launcher>))
    });
    if let (true, Ok((_, count)), Some(whole)) = (profile, &run, whole_rows) {
        rows::report(*count, whole);
    }
    run
}

struct CudaLauncher {
    /// The device's memory (and the device).
    pool: Arc<Pool>,
    /// Where the current kernel's time went (`OGHAM_PROFILE`).
    times: Arc<std::sync::Mutex<profile::Breakdown>>,
    profile: bool,
    segs: Vec<GeneratedSeg>,
    by_seg: HashMap<*const SegOp, usize>,
    /// The failure record and the launches not yet settled.
    failures: Failures,
    /// The arena bytes per thread of each allocating kernel's last successful launch, where
    /// its next launch starts (a kernel in a loop runs out of the first size only once).
    arena_strides: std::sync::Mutex<HashMap<String, i64>>,
    /// When the entry point runs in parts of rows: the whole run's row count, with which
    /// segmented reductions over the rows are planned (`ireval::parts`).
    whole_rows: Option<WholeRows>,
}

/// The kernel parameter that holds the launch's number (after the failure record's address).
const LAUNCH_PARAM: usize = 1;

impl Launcher for CudaLauncher {
    fn launch(&self, ev: &mut Evaluator, seg: &SegOp, pat: &[VarId]) -> Option<Res<Vec<Val>>> {
        let &i = self.by_seg.get(&(seg as *const SegOp))?;
        let kernel = self.segs[i].kernel.as_ref().ok()?;
        let start = std::time::Instant::now();
        let result = self
            .dev()
            .bind()
            .and_then(|()| self.launch_kernel(ev, seg, pat, kernel));
        let level = match kernel.level {
            SegLevel::Thread => "thread",
            SegLevel::Block => "block",
        };
        self.report(&kernel.name, level, start);
        Some(result)
    }

    fn replicate(&self, n: usize, v: &Val, elem: PrimType) -> Option<Res<Array>> {
        if let Val::Array(row) = v
            && prim_data(row).is_err()
        {
            return None;
        }
        Some(
            self.dev()
                .bind()
                .and_then(|()| self.replicate_on_device(n, v, elem)),
        )
    }

    fn iota(&self, n: usize) -> Option<Res<Array>> {
        Some(self.dev().bind().and_then(|()| self.iota_on_device(n)))
    }

    fn copy(&self, a: &Array) -> Option<Res<Array>> {
        match self.dev().bind() {
            Ok(()) => self.copy_on_device(a),
            Err(e) => Some(Err(e)),
        }
    }

    fn rearrange(&self, a: &Array, perm: &[usize]) -> Option<Res<Array>> {
        match self.dev().bind() {
            Ok(()) => self.rearrange_on_device(a, perm),
            Err(e) => Some(Err(e)),
        }
    }

    fn concat(&self, parts: &[Array], shape: &[usize]) -> Option<Res<Array>> {
        match self.dev().bind() {
            Ok(()) => self.concat_on_device(parts, shape),
            Err(e) => Some(Err(e)),
        }
    }

    /// A block-level kernel's grid of 256-thread blocks: 16 blocks per multiprocessor, one row
    /// each per round (`execute`).
    fn row_granule(&self) -> usize {
        (self.dev().multiprocessors() * 16).max(1) as usize
    }

    /// At the kernel's [`Device::thread_block`] (compiling its unit now if no launch has); none
    /// for a statement left to the host or a kernel that does not compile (its launch says so).
    fn rows_per_wave(&self, seg: &SegOp) -> Option<usize> {
        let &i = self.by_seg.get(&(seg as *const SegOp))?;
        let kernel = self.segs[i].kernel.as_ref().ok()?;
        let function = self.dev().function(&kernel.name).ok()?;
        let block = self.dev().thread_block(function).ok()?;
        Some((self.dev().multiprocessors() * block.threads * block.per_sm).max(1) as usize)
    }

    fn side(&self) -> Option<Box<dyn Side + '_>> {
        Some(Box::new(resident::SideCopies {
            pool: Arc::clone(&self.pool),
        }))
    }

    fn finish_part(&self) -> Res<Mark> {
        self.dev().finish_part()
    }

    fn rerun(&self) -> bool {
        self.failures.rerun()
    }

    fn settle(&self, ev: &mut Evaluator) -> Res<()> {
        self.failures.settle(ev, &self.kernels())
    }

    fn wait_for(&self, mark: Mark) {
        self.dev().wait_for(mark)
    }
}

impl Drop for CudaLauncher {
    /// Copies after the last kernel (the outputs the run returns, read back from the device)
    /// are reported as one more entry, `host-reads`.
    fn drop(&mut self) {
        if !self.dev().finish_kernel("host-reads", "host") && self.profile {
            let times = self.times.lock().expect("no panics while locked");
            if times.copies > 0 {
                let total = times.copying + times.allocating;
                eprintln!(
                    "ogham-profile: {}",
                    times.line("host-reads", self.dev().name(), total)
                );
            }
        }
    }
}

/// Threads per block of a block-level kernel whose widest shared-out loop is `widest` (when
/// its kernel says the block may follow it, `CudaKernel::block_widths`): that width rounded up
/// to whole warps, at least one warp and at most `most`; else `most`.
fn block_level_threads(most: i64, widest: Option<i64>) -> i64 {
    widest
        .map_or(most, |w| (w.clamp(1, most) + 31) / 32 * 32)
        .min(most)
}

/// The values of one launch's parameters (see the backend's `kernel.rs`).
struct Launch {
    function: u64,
    grid: i64,
    block: i64,
    shared: u32,
    params: Vec<u64>,
}

impl CudaLauncher {
    fn dev(&self) -> &Arc<dyn Device> {
        self.pool.device()
    }

    /// Ends the profile's entry of kernel `name` (`level`: thread, block or data), launched
    /// since `start`. The entry holds what the host waited for since the last kernel: host
    /// reads between the two are the next kernel's (it is what made them needed).
    fn report(&self, name: &str, level: &str, start: std::time::Instant) {
        let reported = self.dev().finish_kernel(name, level);
        let mut times = self.times.lock().expect("no panics while locked");
        if !reported && self.profile {
            let total = start.elapsed().as_secs_f64();
            eprintln!(
                "ogham-profile: {}",
                times.line(name, self.dev().name(), total)
            );
        }
        *times = profile::Breakdown::default();
    }

    /// One kernel statement: its operands from their device copies (uploaded on first use), its
    /// results left on the device as remote arrays (`resident.rs`); only histogram
    /// destinations, updated in place, are copied back at once.
    fn launch_kernel(
        &self,
        ev: &mut Evaluator,
        seg: &SegOp,
        pat: &[VarId],
        kernel: &CudaKernel,
    ) -> Res<Vec<Val>> {
        let mut io = Io::prepare(ev, seg, pat, &kernel.inputs)?;
        let mut inputs = Vec::new();
        // Device memory this launch alone uses: single-use copies and destinations.
        let mut keep = Vec::new();
        let mut dests = Vec::new();
        for operand in &io.operands {
            let (elems, bytes, shape) = match operand {
                Operand::Scalar(_) => {
                    inputs.push(operand.arg());
                    continue;
                }
                Operand::Array {
                    elems,
                    bytes,
                    shape,
                } => (elems, *bytes, shape),
            };
            let ptr = match elems {
                Elems::View(view) => resident::device_address(&self.pool, view, &mut keep)?,
                Elems::Dest(host) => {
                    let copy = self.pool.upload(*host, bytes)?;
                    let ptr = copy.ptr;
                    dests.push((keep.len(), *host, bytes));
                    keep.push(copy);
                    ptr
                }
            };
            inputs.push(ArgValue::Array {
                ptr,
                extents: shape,
            });
        }
        let mut results = Vec::new();
        let mut output_slots = Vec::new();
        for (j, (_, data)) in io.outputs.iter().enumerate() {
            let memory = self.pool.alloc(data.len() * data.prim_type_size())?;
            output_slots.push((memory.ptr, io.rows[j]));
            results.push(memory);
        }
        let slots = ArgSlots::fill(&inputs, &output_slots);
        if !io.runs() {
            // Nothing written: the host's (empty or zeroed) results stand.
            return Ok(io.finish());
        }
        let widest = kernel.block_widths.as_ref().map(|widths| {
            widths
                .iter()
                .map(|w| match *w {
                    Width::Const(x) => x,
                    Width::Slot(k) => slots[k] as i64,
                })
                .max()
                .unwrap_or(0)
        });
        self.execute(ev, seg, kernel, &slots, (io.segments, io.inner), widest)?;
        // The host reads scalar results and histogram destinations at once.
        if !dests.is_empty() || io.outputs.iter().any(|(shape, _)| shape.is_empty()) {
            self.settle(ev)?;
        }
        for (memory, (_, data)) in results.into_iter().zip(io.outputs.iter_mut()) {
            let len = data.len();
            *data = resident::remote(data.prim_type(), len, memory);
        }
        for (k, host, bytes) in dests {
            keep[k].download(host, bytes)?;
        }
        Ok(io.finish())
    }

    fn execute(
        &self,
        ev: &mut Evaluator,
        seg: &SegOp,
        kernel: &CudaKernel,
        slots: &[u64],
        (segments, inner): (i64, i64),
        widest: Option<i64>,
    ) -> Res<()> {
        let (block, sms) = (self.dev().block_size(), self.dev().multiprocessors());
        let function = self.dev().function(&kernel.name)?;
        // The parameters every kernel but a combine kernel starts with; every kernel ends with
        // its argument slots.
        let leading = |arena: u64, stride: i64, n_items: i64| {
            vec![
                self.failures.record(),
                0, // the launch's number, set by `try_launch`
                arena,
                stride as u64,
                n_items as u64,
            ]
        };
        if kernel.level == SegLevel::Block {
            let most = self.dev().block_level_size();
            let block = block_level_threads(most, widest);
            let n_items = segments * inner;
            let shared = (8 * block as usize * kernel.shared_slots) as u32;
            // As many threads as 16 blocks of the most threads per multiprocessor (narrower
            // blocks: more of them), up to 32 blocks, the most one multiprocessor holds.
            let blocks = n_items.clamp(1, sms * (16 * most / block).min(32));
            let region = BLOCK_ARENA_SHARES + if kernel.threads_allocate { block } else { 0 };
            return self.run_with_arena(
                ev,
                kernel,
                true,
                (blocks * region, region),
                &mut |arena, stride, threads| Launch {
                    function,
                    grid: (threads / region).clamp(1, blocks),
                    block,
                    shared,
                    params: [&leading(arena, stride, n_items)[..], slots].concat(),
                },
            );
        }
        let width = kernel.accumulators as i64;
        let chunks = match &seg.kind {
            SegKind::Map => inner.max(1),
            SegKind::Hist(_) => 1,
            SegKind::Red(_) | SegKind::Scan(_) => {
                // The plan, hence the order of each segment's sum, is the whole run's.
                let planned = match self.whole_rows {
                    Some(whole) if seg.space[0].1 == SubExp::Var(whole.var) => {
                        let part = ev.int(seg.space[0].1)?;
                        segments / part.max(1) * whole.rows
                    }
                    _ => segments,
                };
                let target = sms * 2048;
                if planned >= target / 4 {
                    1
                } else {
                    (target / planned.max(1)).clamp(1, inner.max(1))
                }
            }
        };
        let n_items = segments * chunks;
        // Histograms update their destinations in place: never launched twice.
        let relaunchable = !matches!(seg.kind, SegKind::Hist(_));
        // The block size at which the most of the kernel's warps are resident on an SM.
        let thread_block = self.dev().thread_block(function)?.threads;
        // Whole blocks: the arena then holds a share for every thread of the grid, which the
        // interleaved layout (`og_lanes`, one slot per thread of the grid) relies on.
        let wanted =
            (n_items.clamp(1, sms * 32 * block) + thread_block - 1) / thread_block * thread_block;
        let pass = |ev: &mut Evaluator, partial: u64, carry: u64| {
            self.run_with_arena(
                ev,
                kernel,
                relaunchable,
                (wanted, thread_block),
                &mut |arena, stride, threads| Launch {
                    function,
                    grid: ((threads + thread_block - 1) / thread_block).max(1),
                    block: thread_block,
                    shared: 0,
                    params: [
                        &leading(arena, stride, n_items)[..],
                        &[chunks as u64, partial, carry],
                        slots,
                    ]
                    .concat(),
                },
            )
        };
        if chunks == 1 || width == 0 {
            return pass(ev, 0, 0);
        }
        let partial = self.pool.alloc(8 * (n_items * width) as usize)?;
        pass(ev, partial.ptr, 0)?;
        // A thread per segment, or a warp (in blocks of whole warps).
        let (combine_block, threads) = if kernel.combine_by_warps {
            (self.dev().block_level_size(), 32 * segments)
        } else {
            (block, segments)
        };
        let combine = Launch {
            function: self
                .dev()
                .function(kernel.combine.as_ref().expect("reductions combine"))?,
            grid: ((threads + combine_block - 1) / combine_block).max(1),
            block: combine_block,
            shared: 0,
            params: [
                &[
                    self.failures.record(),
                    0, // the launch's number, set by `try_launch`
                    segments as u64,
                    chunks as u64,
                    partial.ptr,
                ],
                slots,
            ]
            .concat(),
        };
        self.run_launch(ev, kernel, combine)?;
        if let SegKind::Scan(_) = seg.kind {
            // Second pass: every chunk from its carry-in.
            pass(ev, 0, partial.ptr)?;
        }
        Ok(())
    }

    /// Runs the launches `make(arena, stride, threads)` gives, with an arena of `stride` bytes
    /// (per element-size class, [`CudaKernel::lane_classes`], when its per-point arrays are
    /// interleaved) for each of `threads` threads when the kernel allocates (`wanted` or fewer, in whole
    /// `granule`s: a thread-level kernel's blocks, a block-level kernel's blocks of
    /// `BLOCK_ARENA_SHARES` shares and, when its threads make arrays, one more per thread, so
    /// that the grid's every thread has its share); after an
    /// out-of-memory failure a relaunchable kernel is launched again with 8 times more per
    /// thread (up to [`MAX_ARENA_PER_THREAD`]). The first launch takes what the kernel's last
    /// successful launch took (at first [`ARENA_PER_THREAD`]), so that a kernel a loop runs
    /// again does not fail again: on a GPU (and in the model) a launch that runs out costs about
    /// as much as one that does not, every thread that has room running to its end.
    fn run_with_arena(
        &self,
        ev: &mut Evaluator,
        kernel: &CudaKernel,
        relaunchable: bool,
        (wanted, granule): (i64, i64),
        make: &mut dyn FnMut(u64, i64, i64) -> Launch,
    ) -> Res<()> {
        if !kernel.allocates {
            return self.run_launch(ev, kernel, make(0, 0, wanted));
        }
        // What the pool keeps is free too (an allocation it cannot serve releases it).
        let budget = ((self.dev().free_memory()? + self.pool.kept_bytes()) / 2) as i64;
        let strides = || self.arena_strides.lock().expect("no panics while locked");
        let mut stride = strides()
            .get(&kernel.name)
            .copied()
            .unwrap_or(ARENA_PER_THREAD);
        // Interleaved sub-arenas have `stride` bytes per thread each.
        let shares = kernel.lane_classes.max(1);
        loop {
            let per_thread = stride * shares;
            let threads = (wanted.min(budget / per_thread) / granule).max(1) * granule;
            let arena = self.pool.alloc((threads * per_thread) as usize)?;
            let relaunch = (relaunchable && stride < MAX_ARENA_PER_THREAD).then_some(stride);
            match self.try_launch(ev, kernel, make(arena.ptr, stride, threads), relaunch)? {
                None => {
                    strides().insert(kernel.name.clone(), stride);
                    return Ok(());
                }
                Some(f) => {
                    if !(failures::ran_out(kernel, &f)
                        && relaunchable
                        && stride < MAX_ARENA_PER_THREAD)
                    {
                        return Err(failures::kernel_error(ev, kernel, &f));
                    }
                    stride *= 8;
                }
            }
        }
    }

    /// One launch; a failed check becomes the interpreter's error (where the host next reads,
    /// [`Launcher::settle`]).
    fn run_launch(&self, ev: &mut Evaluator, kernel: &CudaKernel, launch: Launch) -> Res<()> {
        match self.try_launch(ev, kernel, launch, None)? {
            None => Ok(()),
            Some(f) => Err(failures::kernel_error(ev, kernel, &f)),
        }
    }

    /// Launches, numbered in order. The host waits for a launch that can fail only when it must
    /// know at once whether it did: a launch that could be launched again with a larger arena
    /// (`relaunch`: its arena's bytes per thread) when [`Failures::must_wait`], and every
    /// launch when profiling on a GPU or the emulator. It then reads the failure record: this
    /// launch's failure is returned, an earlier launch's is the error. Any other launch that
    /// can fail is left unsettled (`failures.rs`).
    fn try_launch(
        &self,
        ev: &mut Evaluator,
        kernel: &CudaKernel,
        launch: Launch,
        relaunch: Option<i64>,
    ) -> Res<Option<KernelFailure>> {
        let can_fail = !kernel.sites.is_empty();
        let number = self.failures.number();
        let mut params = launch.params;
        params[LAUNCH_PARAM] = number;
        // A profile times each launch on a GPU or the emulator (the model times its own).
        let timed = self.profile && !self.dev().modelled();
        let wait = can_fail && (timed || self.failures.must_wait(relaunch));
        self.dev().launch(
            launch.function,
            launch.grid as u32,
            launch.block as u32,
            launch.shared,
            &mut params,
            wait || timed,
        )?;
        if !can_fail {
            Ok(None)
        } else if wait {
            self.failures.check(ev, number, &self.kernels())
        } else {
            self.failures.defer(number, &kernel.name, relaunch);
            Ok(None)
        }
    }

    /// What a failure's error needs of the launcher.
    fn kernels(&self) -> failures::Kernels<'_> {
        failures::Kernels {
            segs: &self.segs,
            arena_strides: &self.arena_strides,
        }
    }
}
