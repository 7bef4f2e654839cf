//! The GPU: the CUDA driver through cudarc (context of device 0, raw allocations and copies,
//! a module per translation unit, compiled by NVRTC (in parallel, `units.rs`), cached on disk
//! (`<cache>/cuda/<key>.cubin`, verified by its checksum file before use, see
//! [`crate::cache_file`]) and loaded at its first kernel's first launch; launches on the null
//! stream, each one waited for timed by two events around it). Copies of a megabyte or more go through two
//! pinned staging slots, made once per process ([`staging`](super::staging)); every copy and
//! launch of the main queue is on the null stream, so they run in the order they are issued.
//!
//! The side queue (an entry point run in parts of rows) is a stream of its own, created
//! non-blocking so that it does not wait for the null stream's work nor the null stream for
//! its, with its own two staging slots; each side copy returns when it has finished. The
//! executor orders the two queues on the host: a part's outputs are read on the side after
//! [`Device::finish_part`] waited for the null stream, and a part's input, uploaded on the
//! side, is used only after its copy returned. A waited launch waits for its own stop event,
//! not for the whole context, so that it does not wait for the side queue too.

use super::device::{ThreadBlock, fullest_block};
use super::registers::{self, Policy, Sm};
use super::staging::{self, CHUNK, STAGED_FROM, Slots};
use super::units::Compiling;
use super::{Device, Mark, Res, driver_error, machine_error, no_kernel, nvrtc};
use crate::cache_file::{self, Store};
use crate::error::{R_CUDA, R_CUDA_UNAVAILABLE, R_OUT_OF_MEMORY};
use cudarc::driver::{CudaContext, result, sys};
use ogham_ir::artifact::cuda::{CudaProgram, Unit};
use ogham_ir::kir::SegLevel;
use std::collections::HashMap;
use std::ffi::{CString, c_void};
use std::sync::{Arc, Mutex, OnceLock};

pub struct Driver {
    ctx: Arc<CudaContext>,
    arch: String,
    sms: i64,
    /// What one SM holds, for the register caps (`registers.rs`).
    sm: Sm,
    /// The loaded program's units: their CUBINs, compiled (or read from the cache) in
    /// parallel, each at its first kernel's first launch at the latest (`units.rs`).
    units: Option<Compiling<Res<Cubin>>>,
    /// The kernels of the units loaded so far (each unit a module).
    functions: Mutex<HashMap<String, u64>>,
}

/// Device 0's context, created once per process: by [`start_context`] in the background, or by
/// the first [`Driver::open`] (which waits for a creation under way).
static CONTEXT: OnceLock<Result<Arc<CudaContext>, String>> = OnceLock::new();

fn context() -> Res<Arc<CudaContext>> {
    CONTEXT
        .get_or_init(|| CudaContext::new(0).map_err(|e| format!("{e:?}")))
        .clone()
        .map_err(|e| driver_error("opening device 0", e))
}

/// Creates device 0's context on a thread of its own (the driver's initialisation takes
/// hundreds of milliseconds), so that a process about to compile or load a program finds it
/// ready at its first kernel. Does nothing where the CUDA backend cannot run.
pub fn start_context() {
    if super::unavailable().is_none() {
        std::thread::spawn(|| {
            let _ = context();
        });
    }
}

impl Driver {
    /// Opens device 0 (callers check [`super::unavailable`] first). Devices older than compute
    /// capability 7.0 are refused: the failure record's lock (`og_fail` in the prelude) needs
    /// the threads of a warp to make progress independently.
    pub fn open() -> Res<Driver> {
        let ctx = context()?;
        let (major, minor) = ctx
            .compute_capability()
            .map_err(|e| driver_error("compute capability", e))?;
        if major < 7 {
            return Err(machine_error(
                R_CUDA_UNAVAILABLE,
                format!(
                    "CUDA: the GPU has compute capability {major}.{minor}; the CUDA backend needs \
                     7.0 or newer (Volta and later)"
                ),
            ));
        }
        let sms = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(|e| driver_error("multiprocessor count", e))? as i64;
        let attribute = |a, what: &str| {
            ctx.attribute(a)
                .map(i64::from)
                .map_err(|e| driver_error(what, e))
        };
        use sys::CUdevice_attribute as A;
        let sm = Sm {
            registers: attribute(
                A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
                "registers per multiprocessor",
            )?,
            threads: attribute(
                A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
                "threads per multiprocessor",
            )?,
            blocks: attribute(
                A::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
                "blocks per multiprocessor",
            )?,
        };
        Ok(Driver {
            ctx,
            arch: format!("sm_{major}{minor}"),
            sms,
            sm,
            units: None,
            functions: Mutex::new(HashMap::new()),
        })
    }
}

/// The CUBIN of `unit` for `arch` (with the register cap `registers.rs` chooses for `sm`), and
/// the cache and entry name it is kept under: from the on-disk cache when the entry there is
/// intact (see [`crate::cache_file`]), otherwise compiled by NVRTC (`fresh`: never from the
/// cache) and cached.
fn cached_cubin(unit: &Unit, arch: &str, sm: &Sm, fresh: bool) -> Res<Cubin> {
    let (major, minor) = nvrtc::version().map_err(|e| driver_error("NVRTC version", e))?;
    let policy = Policy::from_env().map_err(|e| machine_error(R_CUDA, format!("CUDA: {e}")))?;
    let options = format!("{} {}", nvrtc::OPTIONS.join(" "), policy.key(sm));
    let name = format!(
        "{:016x}-{:08x}-{arch}-nvrtc{major}.{minor}.cubin",
        crate::fnv1a(unit.source.as_bytes()),
        crate::fnv1a(options.as_bytes()) as u32
    );
    let cached = Store::open("cuda").map(|store| Cached { store, name });
    if !fresh && let Some(image) = cached.as_ref().and_then(|c| c.store.load_artefact(&c.name)) {
        return Ok((image, cached));
    }
    let thread_level = unit.level == Some(SegLevel::Thread);
    let compiled = registers::compile(&unit.source, arch, sm, thread_level, policy)
        .map_err(|log| machine_error(R_CUDA, format!("CUDA: {log}")))?;
    if let Some(c) = &cached
        && let Err(e) = c.store.store_artefact(&c.name, &compiled.cubin)
    {
        // The cache is an optimisation: a failure to write it is not an error.
        let path = c.store.path(&c.name);
        cache_file::report(
            &path,
            &format!("cannot write the cache entry {}: {e}", path.display()),
        );
    }
    Ok((compiled.cubin, cached))
}

/// Loads the CUBIN of `unit` as a module. A cached CUBIN that passes its checksum but does not
/// load is compiled once more; when that fails too, the error names the cache file.
fn load_module(
    unit: &Unit,
    (arch, sm): (&str, &Sm),
    cubin: &[u8],
    cached: &Option<Cached>,
) -> Res<sys::CUmodule> {
    // SAFETY: the image is a CUBIN NVRTC made for this device; the context is current.
    let e = match unsafe { result::module::load_data(cubin.as_ptr().cast()) } {
        Ok(module) => return Ok(module),
        Err(e) => e,
    };
    let Some(c) = cached else {
        return Err(driver_error("loading the module", e));
    };
    c.store
        .damaged(&c.name, &format!("it does not load: {e:?}"));
    let (cubin, _) = cached_cubin(unit, arch, sm, true)?;
    // SAFETY: as above.
    unsafe { result::module::load_data(cubin.as_ptr().cast()) }.map_err(|e| {
        let file = c.store.path(&c.name).display().to_string();
        driver_error(&format!("loading the module ({file})"), e)
    })
}

/// A unit's CUBIN and the cache entry it is kept under.
type Cubin = (Vec<u8>, Option<Cached>);

/// A cache entry: its store and name.
struct Cached {
    store: Store,
    name: String,
}

/// The two pinned staging slots and the event recorded after each slot's last transfer. Made at
/// the first staged copy and kept for the process (`None` inside: page-locked memory could not
/// be had, and copies stay direct).
static STAGING: Mutex<Option<Option<Pinned>>> = Mutex::new(None);

struct Pinned {
    slots: [*mut u8; 2],
    events: [sys::CUevent; 2],
    queued: [bool; 2],
    /// The stream its transfers are queued on (the null stream for the main queue's).
    stream: sys::CUstream,
}

// SAFETY: the slots, events and stream belong to the process's one context; `STAGING`'s (or
// `SIDE`'s) lock makes one thread at a time use them.
unsafe impl Send for Pinned {}

impl Pinned {
    /// Two slots of [`CHUNK`] bytes of page-locked memory for transfers on `stream` (the
    /// context is current).
    fn make(stream: sys::CUstream) -> Option<Pinned> {
        let event = || result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING).ok();
        // SAFETY: plain page-locked allocations in the current context.
        let slot = || unsafe { result::malloc_host(CHUNK, 0) }.ok();
        Some(Pinned {
            slots: [slot()?.cast(), slot()?.cast()],
            events: [event()?, event()?],
            queued: [false; 2],
            stream,
        })
    }
}

impl Slots for Pinned {
    fn slot(&mut self, k: usize) -> &mut [u8] {
        // SAFETY: a live allocation of CHUNK bytes, used only under `STAGING`'s lock.
        unsafe { std::slice::from_raw_parts_mut(self.slots[k], CHUNK) }
    }

    fn queue_to_device(&mut self, k: usize, dst: u64, len: usize) -> Res<()> {
        // SAFETY: `dst` is an allocation of at least `len` more bytes; the slot stays untouched
        // until its event (recorded next) has passed.
        unsafe {
            sys::cuMemcpyHtoDAsync_v2(dst, self.slots[k].cast(), len, self.stream)
                .result()
                .and_then(|()| result::event::record(self.events[k], self.stream))
        }
        .map_err(|e| driver_error("copy to the device", e))?;
        self.queued[k] = true;
        Ok(())
    }

    fn queue_to_host(&mut self, k: usize, src: u64, len: usize) -> Res<()> {
        // SAFETY: `src` is an allocation of at least `len` more bytes; the slot is read only
        // after its event (recorded next) has passed.
        unsafe {
            sys::cuMemcpyDtoHAsync_v2(self.slots[k].cast(), src, len, self.stream)
                .result()
                .and_then(|()| result::event::record(self.events[k], self.stream))
        }
        .map_err(|e| driver_error("copy to the host", e))?;
        self.queued[k] = true;
        Ok(())
    }

    fn wait(&mut self, k: usize) -> Res<()> {
        if std::mem::take(&mut self.queued[k]) {
            // SAFETY: an event of this context, recorded on the slots' stream.
            unsafe { result::event::synchronize(self.events[k]) }
                .map_err(|e| driver_error("waiting for a copy", e))?;
        }
        Ok(())
    }
}

/// Runs `copy` on the staging slots, made at the first call; `None` when the process has none.
fn with_staging(copy: impl FnOnce(&mut Pinned) -> Res<()>) -> Option<Res<()>> {
    let mut staging = STAGING.lock().unwrap_or_else(|e| e.into_inner());
    staging
        .get_or_insert_with(|| Pinned::make(std::ptr::null_mut()))
        .as_mut()
        .map(copy)
}

/// The side queue: its stream and staging slots, made at the first side copy and kept for the
/// process (`None` inside: they could not be had, and side copies are refused).
static SIDE: Mutex<Option<Option<Pinned>>> = Mutex::new(None);

/// Runs `copy` on the side queue's staging slots and waits for its stream.
fn on_side(copy: impl FnOnce(&mut Pinned) -> Res<()>) -> Res<()> {
    let mut side = SIDE.lock().unwrap_or_else(|e| e.into_inner());
    let made = side.get_or_insert_with(|| {
        let stream = result::stream::create(result::stream::StreamKind::NonBlocking).ok()?;
        Pinned::make(stream)
    });
    let pinned = made.as_mut().ok_or_else(|| {
        machine_error(
            R_CUDA,
            "CUDA: no stream or page-locked memory for side copies".into(),
        )
    })?;
    copy(pinned)?;
    // SAFETY: a stream of this context.
    unsafe { result::stream::synchronize(pinned.stream) }
        .map_err(|e| driver_error("waiting for a side copy", e))
}

impl Device for Driver {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn bind(&self) -> Res<()> {
        self.ctx
            .bind_to_thread()
            .map_err(|e| driver_error("binding the context", e))
    }

    fn block_size(&self) -> i64 {
        256
    }

    /// At the kernel's registers and shared memory, as the driver's occupancy calculator finds.
    fn thread_block(&self, function: u64) -> Res<ThreadBlock> {
        fullest_block(self.block_size(), |size| {
            // SAFETY: `function` is a kernel of a module loaded in the current context.
            unsafe {
                result::occupancy::max_active_block_per_multiprocessor(
                    function as sys::CUfunction,
                    size as i32,
                    0,
                )
            }
            .map(i64::from)
            .map_err(|e| driver_error("the occupancy calculator", e))
        })
    }

    fn multiprocessors(&self) -> i64 {
        self.sms
    }

    fn load(&mut self, program: &CudaProgram) -> Res<()> {
        let (arch, sm) = (self.arch.clone(), self.sm);
        self.units = Some(Compiling::start(program, move |unit: &Unit| {
            cached_cubin(unit, &arch, &sm, false)
        }));
        Ok(())
    }

    /// Loads the kernel's unit as a module at its first kernel's first launch (on the
    /// launching thread, where the context is current).
    fn function(&self, name: &str) -> Res<u64> {
        let mut functions = self.functions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&f) = functions.get(name) {
            return Ok(f);
        }
        let (unit, compiled) = self
            .units
            .as_ref()
            .and_then(|units| units.unit_of(name))
            .ok_or_else(|| no_kernel(name))?;
        let (cubin, cached) = compiled.as_ref().map_err(|e| e.clone())?;
        self.bind()?;
        let module = load_module(unit, (&self.arch, &self.sm), cubin, cached)?;
        for kernel in &unit.kernels {
            let c_name = CString::new(kernel.as_str()).expect("kernel names have no NUL");
            // SAFETY: the module is loaded and holds the unit's kernels.
            let f = unsafe { result::module::get_function(module, c_name) }
                .map_err(|e| driver_error(&format!("kernel {kernel}"), e))?;
            functions.insert(kernel.clone(), f as u64);
        }
        super::loaded_kernel(&functions, name)
    }

    fn alloc(&self, bytes: usize) -> Res<u64> {
        // SAFETY: a plain allocation in the current context.
        unsafe { result::malloc_sync(bytes.max(1)) }.map_err(|e| {
            machine_error(
                R_OUT_OF_MEMORY,
                format!("out of GPU memory: cannot allocate {bytes} bytes ({e:?})"),
            )
        })
    }

    fn free(&self, ptr: u64) {
        // SAFETY: allocated by `alloc`, freed once.
        let _ = unsafe { result::free_sync(ptr) };
    }

    fn upload(&self, dst: u64, src: &[u8]) -> Res<()> {
        if src.len() >= STAGED_FROM
            && let Some(done) = with_staging(|slots| staging::upload(slots, dst, src))
        {
            return done;
        }
        // SAFETY: `dst` is an allocation of at least `src.len()` bytes.
        unsafe { result::memcpy_htod_sync(dst, src) }
            .map_err(|e| driver_error("copy to the device", e))
    }

    fn download(&self, dst: &mut [u8], src: u64) -> Res<()> {
        if dst.len() >= STAGED_FROM
            && let Some(done) = with_staging(|slots| staging::download(slots, dst, src))
        {
            return done;
        }
        // SAFETY: `src` is an allocation of at least `dst.len()` bytes.
        unsafe { result::memcpy_dtoh_sync(dst, src) }
            .map_err(|e| driver_error("copy to the host", e))
    }

    fn side_upload(&self, dst: u64, src: &[u8]) -> Res<Mark> {
        on_side(|slots| staging::upload(slots, dst, src)).map(|()| Mark::default())
    }

    fn side_download(&self, dst: &mut [u8], src: u64, _after: Mark) -> Res<()> {
        on_side(|slots| staging::download(slots, dst, src))
    }

    fn finish_part(&self) -> Res<Mark> {
        // SAFETY: the null stream of the current context.
        unsafe { result::stream::synchronize(std::ptr::null_mut()) }
            .map_err(|e| driver_error("kernel execution", e))?;
        Ok(Mark::default())
    }

    fn zero(&self, ptr: u64, bytes: usize) -> Res<()> {
        // SAFETY: `ptr` is an allocation of at least `bytes` bytes.
        unsafe { result::memset_d8_sync(ptr, 0, bytes) }
            .map_err(|e| driver_error("clearing memory", e))
    }

    /// `cuMemsetD8/16/32`; an 8-byte pattern as two strided `cuMemsetD2D32`s (its low words,
    /// then its high words: rows of one 4-byte word every 8 bytes).
    fn fill(&self, ptr: u64, pattern: &[u8], count: usize) -> Res<()> {
        let word = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes"));
        // SAFETY: `ptr` is an allocation of at least `count` times the pattern's bytes; the 2D
        // sets write `count` rows of 8 bytes, one 4-byte word in each.
        let set = unsafe {
            match *pattern {
                [b] => sys::cuMemsetD8_v2(ptr, b, count),
                [a, b] => sys::cuMemsetD16_v2(ptr, u16::from_le_bytes([a, b]), count),
                [_, _, _, _] => sys::cuMemsetD32_v2(ptr, word(pattern), count),
                [_, _, _, _, _, _, _, _] => {
                    let low = sys::cuMemsetD2D32_v2(ptr, 8, word(&pattern[..4]), 1, count);
                    if low != sys::CUresult::CUDA_SUCCESS {
                        low
                    } else {
                        sys::cuMemsetD2D32_v2(ptr + 4, 8, word(&pattern[4..]), 1, count)
                    }
                }
                _ => {
                    return Err(machine_error(
                        R_CUDA,
                        format!("CUDA: no fill of {}-byte elements", pattern.len()),
                    ));
                }
            }
        };
        set.result().map_err(|e| driver_error("filling memory", e))
    }

    fn copy(&self, dst: u64, src: u64, bytes: usize) -> Res<()> {
        // SAFETY: both are allocations of at least `bytes` bytes on this device.
        unsafe { result::memcpy_dtod_sync(dst, src, bytes) }
            .map_err(|e| driver_error("copying within the device", e))
    }

    fn free_memory(&self) -> Res<usize> {
        result::mem_get_info()
            .map(|(free, _)| free)
            .map_err(|e| driver_error("memory info", e))
    }

    /// Launches on the null stream; when `wait`, between two events, waiting for it: the time
    /// between the events.
    fn launch(
        &self,
        function: u64,
        grid: u32,
        block: u32,
        shared: u32,
        params: &mut [u64],
        wait: bool,
    ) -> Res<f64> {
        let mut pointers: Vec<*mut c_void> = params
            .iter_mut()
            .map(|p| (p as *mut u64).cast::<c_void>())
            .collect();
        let enqueue = |pointers: &mut Vec<*mut c_void>| {
            // SAFETY: the parameters match the generated kernel's signature (64-bit values and
            // device pointers to memory the executor keeps until a later copy or launch on the
            // same (null) stream, which runs after this one).
            unsafe {
                result::launch_kernel(
                    function as sys::CUfunction,
                    (grid, 1, 1),
                    (block, 1, 1),
                    shared,
                    std::ptr::null_mut(),
                    pointers,
                )
            }
            .map_err(|e| driver_error("kernel launch", e))
        };
        if !wait {
            return enqueue(&mut pointers).map(|()| 0.0);
        }
        let event = || {
            result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT)
                .map_err(|e| driver_error("creating an event", e))
        };
        let (start, stop) = (event()?, event()?);
        // SAFETY: the parameters match the generated kernel's signature (64-bit values and
        // device pointers that stay alive until the synchronisation below); the events were
        // created above in the current context, recorded on the null stream around the launch,
        // and destroyed once, after the synchronisation.
        let timed = unsafe {
            result::event::record(start, std::ptr::null_mut())
                .map_err(|e| driver_error("recording an event", e))
                .and_then(|()| enqueue(&mut pointers))
                .and_then(|()| {
                    result::event::record(stop, std::ptr::null_mut())
                        .map_err(|e| driver_error("recording an event", e))
                })
                .and_then(|()| {
                    result::event::synchronize(stop)
                        .map_err(|e| driver_error("kernel execution", e))
                })
                .and_then(|()| {
                    result::event::elapsed(start, stop)
                        .map_err(|e| driver_error("timing the launch", e))
                })
        };
        // SAFETY: as above; nothing uses the events any more.
        unsafe {
            let _ = result::event::destroy(start);
            let _ = result::event::destroy(stop);
        }
        timed.map(|ms| f64::from(ms) / 1e3)
    }
}
