//! The CUDA executor (`--backend cuda`): the host program of a kernel-IR program runs in the IR
//! evaluator; every kernel the CUDA backend generated (`ogham_compiler::back::cuda`) is compiled
//! once per program with NVRTC for the device's architecture (CUBINs cached on disk, keyed by
//! the source, the architecture and the NVRTC version) and launched through the CUDA driver
//! (cudarc). Kernels the backend could not generate are evaluated on the host.
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

pub mod nvrtc;

use crate::interp::{R_CUDA, R_CUDA_UNAVAILABLE, R_OUT_OF_MEMORY};
use crate::ireval::eval::{Evaluator, Launcher, Val};
use crate::ireval::{self, Thresholds};
use crate::kernel_io::{Io, KernelFailure, Operand, failure_diagnostic};
use crate::value::Value;
use cudarc::driver::{CudaContext, result, sys};
use ogham_compiler::back::cuda::{self as back, CudaKernel, Failure, GeneratedSeg, MAX_DETAILS};
use ogham_compiler::diag::Diagnostic;
use ogham_compiler::ir::{Program, VarId};
use ogham_compiler::kir::{SegKind, SegLevel, SegOp};
use std::collections::HashMap;
use std::ffi::{CString, c_void};
use std::sync::Arc;

type Res<T> = Result<T, Box<Diagnostic>>;

/// Threads per block of every launch.
const BLOCK: i64 = 256;
/// Arena bytes per thread at the first launch of a kernel that allocates.
const ARENA_PER_THREAD: i64 = 64 << 10;

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
    let function = program.functions.iter().position(|f| f.name == entry);
    ireval::run_with(program, entry, args, thresholds, move || {
        let ctx = CudaContext::new(0).map_err(|e| driver_error("opening device 0", e))?;
        let (major, minor) = ctx
            .compute_capability()
            .map_err(|e| driver_error("compute capability", e))?;
        let sms = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(|e| driver_error("multiprocessor count", e))? as i64;
        let generated = back::generate(program);
        let arch = format!("sm_{major}{minor}");
        let cubin = cached_cubin(&generated.source(), &arch)?;
        // SAFETY: the image is a CUBIN NVRTC made for this device; the context is current.
        let module = unsafe {
            ctx.bind_to_thread()
                .map_err(|e| driver_error("binding the context", e))?;
            result::module::load_data(cubin.as_ptr().cast())
        }
        .map_err(|e| driver_error("loading the module", e))?;
        let mut functions = HashMap::new();
        let segs: Vec<GeneratedSeg> = generated
            .segs
            .into_iter()
            .filter(|s| Some(s.function) == function)
            .collect();
        for kernel in segs.iter().filter_map(|s| s.kernel.as_ref().ok()) {
            for name in std::iter::once(&kernel.name).chain(&kernel.combine) {
                let c_name = CString::new(name.as_str()).expect("kernel names have no NUL");
                // SAFETY: the module is loaded and holds the generated kernels.
                let f = unsafe { result::module::get_function(module, c_name) }
                    .map_err(|e| driver_error(&format!("kernel {name}"), e))?;
                functions.insert(name.clone(), f);
            }
        }
        let by_seg = segs
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match &s.stmt.exp {
                ogham_compiler::ir::Exp::Seg(seg) => Some((&**seg as *const SegOp, i)),
                _ => None,
            })
            .collect();
        Ok(Some(Box::new(CudaLauncher {
            ctx,
            sms,
            profile: std::env::var_os("OGHAM_PROFILE").is_some(),
            segs,
            functions,
            by_seg,
        }) as Box<dyn Launcher>))
    })
}

/// The CUBIN of `source` for `arch`, from the on-disk cache or NVRTC.
fn cached_cubin(source: &str, arch: &str) -> Res<Vec<u8>> {
    let (major, minor) = nvrtc::version().map_err(|e| driver_error("NVRTC version", e))?;
    let key = format!(
        "{:016x}-{arch}-nvrtc{major}.{minor}",
        fnv1a(source.as_bytes())
    );
    let path = cache_dir().map(|d| d.join(format!("{key}.cubin")));
    if let Some(image) = path.as_ref().and_then(|p| std::fs::read(p).ok()) {
        return Ok(image);
    }
    let compiled = nvrtc::compile(source, arch, false)
        .map_err(|log| machine_error(R_CUDA, format!("CUDA: {log}")))?;
    if let Some(p) = &path {
        // The cache is an optimisation: a failure to write it is not an error.
        let _ = p
            .parent()
            .map(std::fs::create_dir_all)
            .and_then(|_| std::fs::write(p, &compiled.cubin).ok());
    }
    Ok(compiled.cubin)
}

/// `$OGHAM_CACHE_DIR`, else `$XDG_CACHE_HOME/ogham`, else `~/.cache/ogham`; then `cuda/`.
fn cache_dir() -> Option<std::path::PathBuf> {
    let base = std::env::var_os("OGHAM_CACHE_DIR")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME").map(|d| std::path::Path::new(&d).join("ogham"))
        })
        .or_else(|| {
            std::env::var_os("HOME").map(|d| std::path::Path::new(&d).join(".cache/ogham"))
        })?;
    Some(base.join("cuda"))
}

/// FNV-1a, 64 bits (a stable hash for cache keys).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100000001b3)
    })
}

struct CudaLauncher<'p> {
    ctx: Arc<CudaContext>,
    sms: i64,
    profile: bool,
    segs: Vec<GeneratedSeg<'p>>,
    functions: HashMap<String, sys::CUfunction>,
    by_seg: HashMap<*const SegOp, usize>,
}

/// A device allocation, freed when dropped.
struct Buffer(sys::CUdeviceptr);

impl Buffer {
    fn alloc(bytes: usize) -> Res<Buffer> {
        // SAFETY: a plain allocation in the current context.
        let ptr = unsafe { result::malloc_sync(bytes.max(1)) }.map_err(|e| {
            machine_error(
                R_OUT_OF_MEMORY,
                format!("out of GPU memory: cannot allocate {bytes} bytes ({e:?})"),
            )
        })?;
        Ok(Buffer(ptr))
    }

    /// A device copy of `bytes` bytes at host address `ptr`.
    fn upload(ptr: u64, bytes: usize) -> Res<Buffer> {
        let buf = Buffer::alloc(bytes)?;
        if bytes > 0 {
            // SAFETY: `ptr` points to `bytes` readable bytes (a live host array).
            let host = unsafe { std::slice::from_raw_parts(ptr as *const u8, bytes) };
            unsafe { result::memcpy_htod_sync(buf.0, host) }
                .map_err(|e| driver_error("copy to the device", e))?;
        }
        Ok(buf)
    }

    /// Copies the buffer's first `bytes` bytes to host address `ptr`.
    fn download(&self, ptr: u64, bytes: usize) -> Res<()> {
        if bytes > 0 {
            // SAFETY: `ptr` points to `bytes` writable bytes that nothing else uses now.
            let host = unsafe { std::slice::from_raw_parts_mut(ptr as *mut u8, bytes) };
            unsafe { result::memcpy_dtoh_sync(host, self.0) }
                .map_err(|e| driver_error("copy to the host", e))?;
        }
        Ok(())
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: allocated by `malloc_sync`, freed once.
        let _ = unsafe { result::free_sync(self.0) };
    }
}

/// The failure record of generated code (`OgCtx`): the failed site plus one, then details.
const CTX_BYTES: usize = 8 + 8 * MAX_DETAILS;

impl Launcher for CudaLauncher<'_> {
    fn launch(&self, ev: &mut Evaluator, seg: &SegOp, pat: &[VarId]) -> Option<Res<Vec<Val>>> {
        let &i = self.by_seg.get(&(seg as *const SegOp))?;
        let kernel = self.segs[i].kernel.as_ref().ok()?;
        let start = std::time::Instant::now();
        let result = self
            .ctx
            .bind_to_thread()
            .map_err(|e| driver_error("binding the context", e))
            .and_then(|()| self.launch_kernel(ev, seg, pat, kernel));
        if self.profile {
            eprintln!(
                "ogham-profile: kernel {} (cuda) {:.3} ms",
                kernel.name,
                start.elapsed().as_secs_f64() * 1e3
            );
        }
        Some(result)
    }
}

/// The values of one launch's parameters (see the backend's `kernel.rs`).
struct Launch {
    function: sys::CUfunction,
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
        let mut slots: Vec<u64> = Vec::new();
        let mut keep = Vec::new();
        let mut dests = Vec::new();
        for operand in &io.operands {
            match operand {
                Operand::Scalar(bits) => slots.push(*bits),
                Operand::Array {
                    ptr,
                    bytes,
                    shape,
                    dest,
                } => {
                    let buf = Buffer::upload(*ptr, *bytes)?;
                    slots.push(buf.0);
                    slots.extend(shape.iter().map(|d| *d as u64));
                    if *dest {
                        dests.push((keep.len(), *ptr, *bytes));
                    }
                    keep.push(buf);
                }
            }
        }
        let mut outputs = Vec::new();
        for (j, (_, data)) in io.outputs.iter().enumerate() {
            let bytes = data.len() * data.prim_type_size();
            let buf = Buffer::alloc(bytes)?;
            slots.extend([buf.0, io.rows[j]]);
            outputs.push((buf, bytes));
        }
        let args = Buffer::upload(slots.as_ptr() as u64, 8 * slots.len())?;
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
        let ctx_record = Buffer::alloc(CTX_BYTES)?;
        let function = self.functions[&kernel.name];
        if kernel.level == SegLevel::Block {
            let n_items = segments * inner;
            let shared = (8 * BLOCK as usize * kernel.shared_slots) as u32;
            let blocks = n_items.clamp(1, self.sms * 16);
            return self.run_with_arena(
                ev,
                kernel,
                &ctx_record,
                true,
                blocks * (BLOCK + 1),
                &mut |arena, stride, threads| Launch {
                    function,
                    grid: (threads / (BLOCK + 1)).clamp(1, blocks),
                    shared,
                    params: vec![ctx_record.0, args.0, arena, stride as u64, n_items as u64],
                },
            );
        }
        let width = kernel.accumulators as i64;
        let chunks = match &seg.kind {
            SegKind::Map => inner.max(1),
            SegKind::Hist(_) => 1,
            SegKind::Red(_) | SegKind::Scan(_) => {
                let target = self.sms * 2048;
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
        let wanted = n_items.clamp(1, self.sms * 32 * BLOCK);
        let pass = |ev: &mut Evaluator, partial: u64, carry: u64| {
            self.run_with_arena(
                ev,
                kernel,
                &ctx_record,
                relaunchable,
                wanted,
                &mut |arena, stride, threads| Launch {
                    function,
                    grid: ((threads + BLOCK - 1) / BLOCK).max(1),
                    shared: 0,
                    params: vec![
                        ctx_record.0,
                        args.0,
                        arena,
                        stride as u64,
                        n_items as u64,
                        chunks as u64,
                        partial,
                        carry,
                    ],
                },
            )
        };
        if chunks == 1 || width == 0 {
            return pass(ev, 0, 0);
        }
        let partial = Buffer::alloc(8 * (n_items * width) as usize)?;
        pass(ev, partial.0, 0)?;
        let combine = Launch {
            function: self.functions[kernel.combine.as_ref().expect("reductions combine")],
            grid: ((segments + BLOCK - 1) / BLOCK).max(1),
            shared: 0,
            params: vec![
                ctx_record.0,
                args.0,
                segments as u64,
                chunks as u64,
                partial.0,
            ],
        };
        self.run_launch(ev, kernel, &ctx_record, combine)?;
        if let SegKind::Scan(_) = seg.kind {
            // Second pass: every chunk from its carry-in.
            pass(ev, 0, partial.0)?;
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
        let (free, _) = result::mem_get_info().map_err(|e| driver_error("memory info", e))?;
        let budget = (free / 2) as i64;
        let mut stride = ARENA_PER_THREAD;
        for attempt in 0..3 {
            let threads = wanted.min(budget / stride).max(1);
            let arena = Buffer::alloc((threads * stride) as usize)?;
            match self.try_launch(ctx_record, make(arena.0, stride, threads))? {
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
        let mut pointers: Vec<*mut c_void> = params
            .iter_mut()
            .map(|p| (p as *mut u64).cast::<c_void>())
            .collect();
        // SAFETY: the parameters match the generated kernel's signature (64-bit values and
        // device pointers that stay alive until the synchronisation below).
        unsafe {
            result::memset_d8_sync(ctx_record.0, 0, CTX_BYTES)
                .map_err(|e| driver_error("clearing the failure record", e))?;
            result::launch_kernel(
                launch.function,
                (launch.grid as u32, 1, 1),
                (BLOCK as u32, 1, 1),
                launch.shared,
                std::ptr::null_mut(),
                &mut pointers,
            )
            .map_err(|e| driver_error("kernel launch", e))?;
            result::ctx::synchronize().map_err(|e| driver_error("kernel execution", e))?;
        }
        let mut record = [0u64; 1 + MAX_DETAILS];
        // SAFETY: the record is `CTX_BYTES` long.
        unsafe { result::memcpy_dtoh_sync(&mut record, ctx_record.0) }
            .map_err(|e| driver_error("reading the failure record", e))?;
        if record[0] == 0 {
            return Ok(None);
        }
        let mut details = [0i64; MAX_DETAILS];
        for (d, r) in details.iter_mut().zip(&record[1..]) {
            *d = *r as i64;
        }
        Ok(Some(KernelFailure {
            site: record[0] as i64 - 1,
            details,
        }))
    }
}
